//! A map from cache-line numbers to small slot numbers, for the fully
//! associative caches the simulator keeps beside its set-associative ones
//! (the 3C yardstick), which look a line up on nearly every access that
//! leaves their most-recent array.
//!
//! Why not a general hash map: the yardstick removes and inserts a line on
//! every such access, and a general map's probe, tombstones and growth cost
//! about as much as the rest of the simulation together. This one knows
//! its largest size (the cache's lines) up front: open addressing at most
//! half full, linear probing, a multiplicative hash, and deletion by
//! shifting the following entries back (no tombstones), so a lookup is a
//! hash and one or two compares in a table that stays in the machine's own
//! caches for an L1 or L2 yardstick.

/// An empty entry's key: line numbers are stored plus one.
const EMPTY: u64 = 0;

/// Line number to slot, for at most a fixed number of lines at once.
///
/// Memory: 16 bytes for each of twice the lines held at most (rounded up
/// to a power of two), allocated once.
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
        let len = (most.max(1) * 2).next_power_of_two().max(16);
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
}
