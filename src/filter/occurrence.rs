//! The one occurrence counter: the n-th access to a location (address,
//! variable row), from 1, as a pass over the access list counts it. The
//! figures' batches and the gathered rows of `rows` both number
//! accesses with it, so an access has the same occurrence everywhere.

use polars::prelude::{InitHashMaps, PlHashMap};

use super::model::Variable;

/// Bytes a location counted in the hash map is charged: its entry (24
/// bytes and a control byte) times the map's slack, up to twice its items
/// just after it has doubled.
const MAP_ENTRY_BYTES: u64 = 64;

/// One block's direct counters: slot `k` counts the location `base + k <<
/// shift`.
struct Dense {
    base: u64,
    shift: u32,
    counts: Vec<u16>,
}

/// The occurrence of each access as a pass counts it: the n-th access to
/// its location (address, variable), from 1, in 64 bits.
///
/// A block gets a 16-bit counter per grain of its own (the largest power
/// of two up to 16 that divides its element size; 8 bytes when that is
/// unknown), made on its first access, while its budget allows: one
/// indexed add per access, where a hash probe into a table of every
/// location would miss the cache and take 16 times the memory. Accesses
/// off the grain or outside their block, blocks beyond the budget, and the
/// locations touched more than 2^16 - 2 times (a loop counter) are counted
/// in a hash map, at [`MAP_ENTRY_BYTES`] a location.
///
/// Memory: at most `budget` bytes for the counters and the map together
/// (2 bytes a grain: 512 MB counts 2 GB of doubles). A location that would
/// take the map past it is not counted: its accesses' occurrence is 0, and
/// [`Occurrences::uncounted`] says how many there were, so the caller can
/// refuse rather than show a wrong number.
pub(crate) struct Occurrences<'a> {
    vars: &'a [Variable],
    /// Per variable row: `None` not yet met; `Some(None)` counted in the
    /// map; `Some(Some(counters))` directly.
    dense: Vec<Option<Option<Dense>>>,
    dense_bytes: u64,
    other: PlHashMap<(u64, u32), u64>,
    /// Bytes the counters and the map may take together.
    budget: u64,
    /// Accesses not counted, for want of memory.
    uncounted: u64,
}

impl<'a> Occurrences<'a> {
    /// A counter for accesses to the variable rows `vars` (an analysis's
    /// `vars`: the `var` of an access indexes them), all at 0, in at most
    /// `budget` bytes.
    pub(crate) fn new(vars: &'a [Variable], budget: u64) -> Occurrences<'a> {
        Occurrences {
            vars,
            dense: (0..vars.len()).map(|_| None).collect(),
            dense_bytes: 0,
            other: PlHashMap::new(),
            budget,
            uncounted: 0,
        }
    }

    /// Accesses given occurrence 0 because their location would have
    /// taken the counters past their budget.
    pub(crate) fn uncounted(&self) -> u64 {
        self.uncounted
    }

    /// The map's count of (`addr`, `var`) after one more access, starting
    /// from `from` for a new entry; 0 when a new entry would not fit the
    /// budget.
    #[inline]
    fn count_in_map(&mut self, addr: u64, var: u32, from: u64) -> u64 {
        if self.fits(MAP_ENTRY_BYTES) {
            let n = (self.other.entry((addr, var)))
                .and_modify(|n| *n += 1)
                .or_insert(from + 1);
            return *n;
        }
        match self.other.get_mut(&(addr, var)) {
            Some(n) => {
                *n += 1;
                *n
            }
            None => {
                self.uncounted += 1;
                0
            }
        }
    }

    /// Whether `more` bytes fit the budget beside the direct counters and
    /// the map's entries.
    #[inline]
    fn fits(&self, more: u64) -> bool {
        self.dense_bytes + self.other.len() as u64 * MAP_ENTRY_BYTES + more <= self.budget
    }

    /// Counts one access and returns its occurrence.
    #[inline]
    pub(crate) fn next(&mut self, addr: u64, var: u32) -> u64 {
        let v = var as usize;
        if v < self.dense.len() {
            if self.dense[v].is_none() {
                self.dense[v] = Some(self.make_dense(v));
            }
            if let Some(Some(d)) = &mut self.dense[v] {
                let off = addr.wrapping_sub(d.base);
                let k = off >> d.shift;
                if k << d.shift == off {
                    if let Some(n) = d.counts.get_mut(k as usize) {
                        if *n < u16::MAX - 1 {
                            *n += 1;
                            return u64::from(*n);
                        }
                        // Past 2^16 - 2: the map goes on from here.
                        *n = u16::MAX;
                        return self.count_in_map(addr, var, u64::from(u16::MAX) - 1);
                    }
                }
            }
        }
        self.count_in_map(addr, var, 0)
    }

    /// Direct counters for variable row `v`, when the budget allows.
    #[cold]
    fn make_dense(&mut self, v: usize) -> Option<Dense> {
        let var = &self.vars[v];
        let grain: u64 = match var.elem_size {
            0 => 8,
            e => (1u64 << e.trailing_zeros()).min(16),
        };
        let slots = var.size.div_ceil(grain);
        let bytes = slots * 2;
        if slots == 0 || !self.fits(bytes) {
            return None;
        }
        self.dense_bytes += bytes;
        Some(Dense {
            base: var.base,
            shift: grain.trailing_zeros(),
            counts: vec![0; slots as usize],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One heap block of 16 bytes at 0x1000.
    fn one_block() -> Vec<Variable> {
        let mut v = Variable::new("a".into(), crate::trace::naming::Scope::Heap);
        v.base = 0x1000;
        v.size = 16;
        vec![v]
    }

    /// Dense (per byte of a block) and hashed (outside any block, or a
    /// block too large) counts number the same way: per (address, row).
    #[test]
    fn each_location_counts_from_one() {
        let vars = one_block();
        let mut o = Occurrences::new(&vars, u64::MAX);
        assert_eq!(o.next(0x1000, 0), 1);
        assert_eq!(o.next(0x1008, 0), 1);
        assert_eq!(o.next(0x1000, 0), 2);
        // Outside the block's bytes, and a row with no entry: the map.
        assert_eq!(o.next(0x2000, 0), 1);
        assert_eq!(o.next(0x2000, 0), 2);
        assert_eq!(o.next(0x2000, 7), 1);
        assert_eq!(o.next(0x1000, 0), 3);
    }

    /// A location touched more than a 16-bit counter holds goes on
    /// counting in the map, without a gap or a repeat.
    #[test]
    fn counts_go_on_past_the_direct_counter() {
        let vars = one_block();
        let mut o = Occurrences::new(&vars, u64::MAX);
        for k in 1..=70_000u64 {
            assert_eq!(o.next(0x1000, 0), k);
        }
        assert_eq!(o.next(0x1008, 0), 1);
    }

    /// Within a budget of the block's counters and two map entries: the
    /// block and two locations outside it are counted, a third location
    /// is not (occurrence 0, every time, and said), and the counted ones
    /// go on counting.
    #[test]
    fn a_location_past_the_budget_is_not_counted() {
        let vars = one_block();
        // 16 bytes of doubles: 2 grains, 2 bytes each.
        let mut o = Occurrences::new(&vars, 4 + 2 * MAP_ENTRY_BYTES);
        assert_eq!(o.next(0x1000, 0), 1);
        assert_eq!(o.next(0x2000, 0), 1);
        assert_eq!(o.next(0x3000, 0), 1);
        assert_eq!(o.uncounted(), 0);
        assert_eq!(o.next(0x4000, 0), 0);
        assert_eq!(o.next(0x4000, 0), 0);
        assert_eq!(o.uncounted(), 2);
        assert_eq!(o.next(0x2000, 0), 2);
        assert_eq!(o.next(0x1000, 0), 2);
        assert_eq!(o.uncounted(), 2);
    }
}
