//! A map from cache-line numbers to small slot numbers, for the fully
//! associative caches the simulator keeps beside its set-associative ones
//! (the 3C yardstick), which look a line up on nearly every access that
//! leaves their most-recent array.
//!
//! Why not a general hash map: the yardstick removes and inserts a line on
//! every such access, and a general map's probe, tombstones and growth cost
//! about as much as the rest of the simulation together. This one knows
//! its largest size (the cache's lines) up front: open addressing, linear
//! probing, a multiplicative hash, and deletion by shifting the following
//! entries back (no tombstones), so a lookup is a hash and one or two
//! compares in a table that stays in the machine's own caches for an L1 or
//! L2 yardstick. A level too large for such a table (over [`TABLE_MOST`]
//! lines: a last level of 260 MiB is 4.3 M lines) looks its lines up in
//! pages instead, which take memory for the lines the program touched, not
//! for the whole cache (see [`LineSlots`]).

use super::pages::LinePages;

/// An empty entry's key: line numbers are stored plus one.
const EMPTY: u64 = 0;

/// Line number to slot, for at most a fixed number of lines at once.
///
/// Memory: 16 bytes an entry, for the power of two at or above 10/7 of
/// the lines held at most (so the table is at most 70% full), made at
/// once: at most 2 MB, for a level of [`TABLE_MOST`] lines.
#[derive(Clone, Debug)]
pub(crate) struct SlotTable {
    /// (line + 1, slot) by position; `EMPTY` key: free.
    entries: Vec<(u64, u32)>,
    /// `entries.len() - 1`.
    mask: usize,
    /// log2 of `entries.len()`.
    bits: u32,
}

impl SlotTable {
    /// A table for at most `most` lines at once.
    pub(crate) fn new(most: usize) -> SlotTable {
        let len = (most.max(1) * 10 / 7 + 1).next_power_of_two().max(16);
        SlotTable {
            entries: vec![(EMPTY, 0); len],
            mask: len - 1,
            bits: len.trailing_zeros(),
        }
    }

    /// The home position of `key`.
    #[inline]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize
    }

    /// The position of `line`'s entry, or of the free entry where it would
    /// go.
    #[inline]
    fn find(&self, line: u64) -> (usize, bool) {
        let key = line + 1;
        let mut i = self.home(key);
        loop {
            let k = self.entries[i].0;
            if k == key {
                return (i, true);
            }
            if k == EMPTY {
                return (i, false);
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The slot of `line`, if it is held.
    #[inline]
    pub(crate) fn get(&self, line: u64) -> Option<u32> {
        match self.find(line) {
            (i, true) => Some(self.entries[i].1),
            _ => None,
        }
    }

    /// Holds `line` at `slot`. The caller keeps the count of lines held
    /// within the table's size, and `line` not held already.
    #[inline]
    pub(crate) fn insert(&mut self, line: u64, slot: u32) {
        let (i, held) = self.find(line);
        debug_assert!(!held, "line {line} inserted twice");
        self.entries[i] = (line + 1, slot);
    }

    /// Takes `line` out; its slot, None when it was not held.
    #[inline]
    pub(crate) fn remove(&mut self, line: u64) -> Option<u32> {
        let (mut i, held) = self.find(line);
        if !held {
            return None;
        }
        let slot = self.entries[i].1;
        // Shift back every following entry of the run whose home is not
        // between the hole and itself, so no lookup meets a hole early.
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let k = self.entries[j].0;
            if k == EMPTY {
                break;
            }
            let h = self.home(k);
            let between = if i <= j {
                i < h && h <= j
            } else {
                i < h || h <= j
            };
            if !between {
                self.entries[i] = self.entries[j];
                i = j;
            }
        }
        self.entries[i] = (EMPTY, 0);
        Some(slot)
    }
}

/// A [`SlotTable`] serves a level of at most this many lines (4 MiB of
/// 64-byte lines: a table of 1 MB, which stays in the machine's caches);
/// a larger level looks its lines up in pages.
const TABLE_MOST: usize = 1 << 16;

/// The slot of a line not held, in pages.
const NO_SLOT: u32 = u32::MAX;

/// Line number to slot for a fully associative cache of a level's lines:
/// a [`SlotTable`] for a level of up to [`TABLE_MOST`] lines, and for a
/// larger one (a last level of 260 MiB is 4.3 M lines) pages of slots by
/// line ([`LinePages`]).
///
/// Why two: a small level's table stays in cache and costs nothing that
/// grows with the program. A large level's table would miss the cache on
/// every probe anyway, take 32 bytes per line of the level (134 MB for
/// 260 MiB) and shift entries back on every removal; its pages take 4
/// bytes per line of the memory the program touched, found through a
/// directory that stays in cache, and a removal is one store.
#[derive(Clone, Debug)]
pub(crate) enum LineSlots {
    Table(SlotTable),
    Pages(LinePages<u32>),
}

impl LineSlots {
    /// Slots for at most `most` lines at once.
    pub(crate) fn new(most: usize) -> LineSlots {
        if most <= TABLE_MOST {
            LineSlots::Table(SlotTable::new(most))
        } else {
            LineSlots::Pages(LinePages::new(NO_SLOT))
        }
    }

    /// The slot of `line`, if it is held.
    #[inline]
    pub(crate) fn get(&mut self, line: u64) -> Option<u32> {
        match self {
            LineSlots::Table(t) => t.get(line),
            LineSlots::Pages(p) => {
                let k = p.slot(line);
                Some(*p.get_mut(k)).filter(|&s| s != NO_SLOT)
            }
        }
    }

    /// Holds `line` at `slot` (below `u32::MAX`); `line` is not held.
    #[inline]
    pub(crate) fn insert(&mut self, line: u64, slot: u32) {
        match self {
            LineSlots::Table(t) => t.insert(line, slot),
            LineSlots::Pages(p) => {
                let k = p.slot(line);
                *p.get_mut(k) = slot;
            }
        }
    }

    /// Takes `line` out; its slot, None when it was not held.
    #[inline]
    pub(crate) fn remove(&mut self, line: u64) -> Option<u32> {
        match self {
            LineSlots::Table(t) => t.remove(line),
            LineSlots::Pages(p) => {
                let k = p.slot(line);
                Some(std::mem::replace(p.get_mut(k), NO_SLOT)).filter(|&s| s != NO_SLOT)
            }
        }
    }

    /// Bytes that grow with the memory the program touched: the pages'
    /// (a table's size is the level's, fixed).
    pub(crate) fn growing_bytes(&self) -> u64 {
        match self {
            LineSlots::Table(_) => 0,
            LineSlots::Pages(p) => p.bytes() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random inserts and removes give what a hash map gives, with the
    /// table full to its limit and keys that collide at home.
    #[test]
    fn slot_table_is_a_map() {
        let most = 64;
        let mut t = SlotTable::new(most);
        let mut plain = std::collections::HashMap::new();
        let mut x = 0x1234_5678u64;
        for step in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Few distinct keys, many of them a table's length apart.
            let line = (x % 97) * 128 + (x >> 40) % 3;
            if plain.contains_key(&line) {
                assert_eq!(t.remove(line), plain.remove(&line), "step {step}");
            } else if plain.len() < most {
                t.insert(line, step);
                plain.insert(line, step);
            } else {
                assert_eq!(t.remove(line), None);
            }
            if step % 1000 == 0 {
                for (&k, &v) in &plain {
                    assert_eq!(t.get(k), Some(v));
                }
            }
        }
    }

    /// Both kinds of slots answer alike: a level small enough for a table,
    /// and one looked up in pages.
    #[test]
    fn pages_answer_as_the_table_does() {
        let mut small = LineSlots::new(1000);
        let mut large = LineSlots::new(TABLE_MOST + 1);
        assert!(matches!(small, LineSlots::Table(_)));
        assert!(matches!(large, LineSlots::Pages(_)));
        let mut plain = std::collections::HashMap::new();
        let mut x = 0x5EED_u64;
        for step in 0..100_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let line = (x % 1500) * 3 + (x >> 50);
            if let Some(want) = plain.remove(&line) {
                assert_eq!(small.remove(line), Some(want));
                assert_eq!(large.remove(line), Some(want));
            } else if plain.len() < 1000 {
                assert_eq!((small.get(line), large.get(line)), (None, None));
                small.insert(line, step);
                large.insert(line, step);
                plain.insert(line, step);
            } else {
                assert_eq!(large.remove(line), None);
            }
        }
        for (&l, &v) in &plain {
            assert_eq!((small.get(l), large.get(l)), (Some(v), Some(v)));
        }
        assert_eq!(small.growing_bytes(), 0);
        assert!(large.growing_bytes() > 0);
    }
}
