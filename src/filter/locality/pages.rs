//! A state per cache line, in pages of consecutive lines: for the passes
//! that follow millions of lines (the reuse distances, the first pass of
//! the sharing statistics).
//!
//! Why pages and not a hash map from line to state: the map's probe and
//! the state it leads to are two or three cache misses per reference once
//! millions of lines are tracked, where a page's slot is one, and
//! neighbouring lines (an array walked in order) share a page found once.
//! The page directory is small (one entry per [`PAGE_LINES`] lines) and
//! stays in cache.

use polars::prelude::PlHashMap;

/// Lines per page.
pub(crate) const PAGE_LINES: u64 = 512;

/// A state of type `T` per line, in pages of [`PAGE_LINES`] consecutive
/// lines made when one of their lines is first looked up, every state of a
/// new page `free`; a line's slot is its page's index times
/// [`PAGE_LINES`] plus its place in the page.
///
/// Memory: `size_of::<T>()` bytes per line of every page touched, so at
/// most `PAGE_LINES` states for a lone line and one state a line for an
/// array; [`LinePages::bytes`] says how much.
#[derive(Clone, Debug)]
pub(crate) struct LinePages<T> {
    /// The state of a line never looked up.
    free: T,
    /// Page number (line / [`PAGE_LINES`]) to index in `pages`.
    dir: PlHashMap<u64, u32>,
    pages: Vec<Box<[T]>>,
    /// Each page's number.
    numbers: Vec<u64>,
    /// The page last looked up: (its number, its index).
    last: Option<(u64, u32)>,
}

impl<T: Copy + PartialEq> LinePages<T> {
    /// No pages; a new page's states are `free`.
    pub(crate) fn new(free: T) -> LinePages<T> {
        LinePages {
            free,
            dir: PlHashMap::default(),
            pages: Vec::new(),
            numbers: Vec::new(),
            last: None,
        }
    }

    /// The slot of `line`, its page made if need be.
    ///
    /// # Panics
    /// Past 2^32 slots (2^41 bytes of lines touched).
    #[inline]
    pub(crate) fn slot(&mut self, line: u64) -> u32 {
        let number = line / PAGE_LINES;
        let index = match self.last {
            Some((n, i)) if n == number => i,
            _ => {
                let i = match self.dir.get(&number) {
                    Some(&i) => i,
                    None => self.new_page(number),
                };
                self.last = Some((number, i));
                i
            }
        };
        index * PAGE_LINES as u32 + (line % PAGE_LINES) as u32
    }

    #[cold]
    fn new_page(&mut self, number: u64) -> u32 {
        let i = u32::try_from(self.pages.len())
            .ok()
            .filter(|&i| (i as u64) < (u64::from(u32::MAX) / PAGE_LINES))
            .expect("more distinct lines than u32 slots");
        self.pages
            .push(vec![self.free; PAGE_LINES as usize].into_boxed_slice());
        self.numbers.push(number);
        self.dir.insert(number, i);
        i
    }

    /// The state at `slot` (from [`LinePages::slot`]).
    #[inline]
    pub(crate) fn get_mut(&mut self, slot: u32) -> &mut T {
        &mut self.pages[(slot / PAGE_LINES as u32) as usize][(slot % PAGE_LINES as u32) as usize]
    }

    /// The state of `line`, without making its page: `free` when none.
    pub(crate) fn get(&self, line: u64) -> T {
        match self.dir.get(&(line / PAGE_LINES)) {
            Some(&i) => self.pages[i as usize][(line % PAGE_LINES) as usize],
            None => self.free,
        }
    }

    /// Every line whose state is not `free`: (line, slot, state), by page.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u32, &T)> + '_ {
        let free = self.free;
        self.pages
            .iter()
            .zip(&self.numbers)
            .enumerate()
            .flat_map(move |(p, (page, n))| {
                (page.iter().enumerate())
                    .filter(move |(_, st)| **st != free)
                    .map(move |(k, st)| {
                        (
                            n * PAGE_LINES + k as u64,
                            p as u32 * PAGE_LINES as u32 + k as u32,
                            st,
                        )
                    })
            })
    }

    /// Bytes held, as allocated.
    pub(crate) fn bytes(&self) -> usize {
        let page = PAGE_LINES as usize * std::mem::size_of::<T>();
        // A directory entry and its control byte.
        let entry = std::mem::size_of::<(u64, u32)>() + 1;
        self.pages.len() * page
            + self.pages.capacity() * std::mem::size_of::<Box<[T]>>()
            + self.numbers.capacity() * 8
            + self.dir.capacity() * entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines across pages, near and far, keep their own states; lines
    /// never set read as free and are not listed.
    #[test]
    fn each_line_keeps_its_state() {
        let mut p = LinePages::new(0u32);
        let lines = [0u64, 1, 511, 512, 1 << 40, (1 << 40) + 7, 3];
        for (k, &l) in lines.iter().enumerate() {
            let s = p.slot(l);
            *p.get_mut(s) = k as u32 + 1;
        }
        for (k, &l) in lines.iter().enumerate() {
            assert_eq!(p.get(l), k as u32 + 1);
            let s = p.slot(l);
            assert_eq!(*p.get_mut(s), k as u32 + 1);
        }
        assert_eq!(p.get(2), 0);
        assert_eq!(p.get(77 << 30), 0);
        let mut listed: Vec<(u64, u32)> = p.iter().map(|(l, _, &st)| (l, st)).collect();
        listed.sort_unstable();
        let mut want: Vec<(u64, u32)> = (lines.iter())
            .enumerate()
            .map(|(k, &l)| (l, k as u32 + 1))
            .collect();
        want.sort_unstable();
        assert_eq!(listed, want);
    }
}
