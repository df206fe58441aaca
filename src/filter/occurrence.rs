//! The one occurrence counter: the n-th access to a location (address,
//! variable row), from 1, as a pass over the access list counts it. The
//! figures' batches and the gathered rows of `rows` both number
//! accesses with it, so an access has the same occurrence everywhere.

use polars::prelude::{InitHashMaps, PlHashMap};

use super::model::Variable;

/// Blocks up to this size count their accesses' occurrences in a table of
/// their own, one counter per byte: 32 MB of counters at most per block.
const DENSE_BYTES: u64 = 1 << 22;

/// The occurrence of each access as a pass counts it: the n-th access to
/// its location (address, variable), from 1, in 64 bits.
///
/// A block of up to [`DENSE_BYTES`] gets a counter per byte of its own
/// (made on its first access): one indexed add per access, where a hash
/// probe into a table of every location selected would miss the cache.
/// Larger blocks, and accesses outside their block, are counted in a hash
/// map.
pub(crate) struct Occurrences<'a> {
    vars: &'a [Variable],
    /// Per variable row: `None` not yet met; `Some(None)` counted in the
    /// map; `Some(Some(counters))` from its base.
    dense: Vec<Option<Option<Vec<u64>>>>,
    other: PlHashMap<(u64, u32), u64>,
}

impl<'a> Occurrences<'a> {
    /// A counter for accesses to the variable rows `vars` (an analysis's
    /// `vars`: the `var` of an access indexes them), all at 0.
    pub(crate) fn new(vars: &'a [Variable]) -> Occurrences<'a> {
        Occurrences {
            vars,
            dense: vec![None; vars.len()],
            other: PlHashMap::new(),
        }
    }

    /// Counts one access and returns its occurrence.
    #[inline]
    pub(crate) fn next(&mut self, addr: u64, var: u32) -> u64 {
        let v = var as usize;
        if let Some(slot) = self.dense.get_mut(v) {
            let table = slot.get_or_insert_with(|| {
                let size = self.vars[v].size;
                (size > 0 && size <= DENSE_BYTES).then(|| vec![0; size as usize])
            });
            if let Some(t) = table {
                let off = addr.wrapping_sub(self.vars[v].base);
                if let Some(n) = t.get_mut(off as usize) {
                    *n += 1;
                    return *n;
                }
            }
        }
        let n = self.other.entry((addr, var)).or_insert(0);
        *n += 1;
        *n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dense (per byte of a block) and hashed (outside any block, or a
    /// block too large) counts number the same way: per (address, row).
    #[test]
    fn each_location_counts_from_one() {
        let mut v = Variable::new("a".into(), crate::trace::naming::Scope::Heap);
        v.base = 0x1000;
        v.size = 16;
        let vars = vec![v];
        let mut o = Occurrences::new(&vars);
        assert_eq!(o.next(0x1000, 0), 1);
        assert_eq!(o.next(0x1008, 0), 1);
        assert_eq!(o.next(0x1000, 0), 2);
        // Outside the block's bytes, and a row with no entry: the map.
        assert_eq!(o.next(0x2000, 0), 1);
        assert_eq!(o.next(0x2000, 0), 2);
        assert_eq!(o.next(0x2000, 7), 1);
        assert_eq!(o.next(0x1000, 0), 3);
    }
}
