//! Exact aggregation of accesses into (space bin, time bin) groups when a
//! scatter would exceed the point budget.
//!
//! Every access (or element touch) lands in exactly one group and every group
//! keeps its count, so the counts of a figure always sum to what it draws.
//! The resolution `res` is the number of bins per dimension: time is cut into
//! `res` equal bins over the drawn span, space into `res` bins per dimension
//! (per variable for addresses, per array index for arrays). The search
//! starts fine and halves `res` until the groups fit the budget; a pass gives
//! up as soon as it has more than `budget` groups, so too-fine passes cost
//! about `budget` lookups each and only the last one or two read everything.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::input::{op_index, Accesses};

/// A small multiply-rotate hasher for integer keys (SipHash is 3-4x slower
/// here and the keys are not attacker-controlled).
#[derive(Default)]
pub(crate) struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

/// Hash map with [`IntHasher`].
pub(crate) type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

/// One aggregated point: the accesses of one space bin during one time bin.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    /// Space bin key (meaning depends on the caller's key function).
    pub(crate) space: u64,
    /// Number of accesses (or element touches) in the group.
    pub(crate) count: u64,
    pub(crate) t_min: u64,
    pub(crate) t_max: u64,
    t_sum: f64,
    pub(crate) occ_min: u32,
    pub(crate) occ_max: u32,
    /// Counts of load, store, modify, other.
    pub(crate) ops: [u64; 4],
    /// Access row of the earliest access (for thread and source line).
    pub(crate) first_row: usize,
    /// Smallest and largest coordinate (address or element) in the group.
    pub(crate) coord_min: u64,
    pub(crate) coord_max: u64,
}

impl Group {
    /// Mean access time of the group.
    pub(crate) fn t_mean(&self) -> f64 {
        self.t_sum / self.count as f64
    }
    /// Dense index of the most frequent operation (ties: load, store, modify).
    pub(crate) fn main_op(&self) -> usize {
        let mut best = 0;
        for k in 1..4 {
            if self.ops[k] > self.ops[best] {
                best = k;
            }
        }
        best
    }
}

/// Result of [`aggregate`].
pub(crate) struct Binned {
    pub(crate) groups: Vec<Group>,
    /// Bins per dimension that was used.
    pub(crate) res: u64,
    /// Width of a time bin in access-order units.
    pub(crate) time_width: u64,
}

/// Visits the items to aggregate: calls `f(row, coord)` for each and stops
/// when `f` returns false.
pub(crate) type Source<'a> = dyn Fn(&mut dyn FnMut(usize, u64) -> bool) + 'a;

/// Space key of an item at a resolution: `key(row, coord, res)`.
pub(crate) type KeyFn<'a> = dyn Fn(usize, u64, u64) -> u64 + 'a;

/// The binned non-space dimension of an item (access time, occurrence, or a
/// constant to bin by space only), from its access row.
pub(crate) type DimFn<'a> = dyn Fn(usize) -> u64 + 'a;

/// What [`aggregate`] groups: the items, their keys and the second binned
/// dimension.
#[derive(Clone, Copy)]
pub(crate) struct Binning<'a> {
    /// The access table: time, operation and occurrence of an item's row.
    pub(crate) acc: &'a Accesses,
    /// Visits the items.
    pub(crate) source: &'a Source<'a>,
    /// Space key of an item at a resolution.
    pub(crate) key: &'a KeyFn<'a>,
    /// The second binned dimension: time for address-over-time views,
    /// occurrence when the view's axis is the occurrence, so that groups
    /// never hide each other.
    pub(crate) dim: &'a DimFn<'a>,
    /// The span `lo..=hi` of `dim` over the items.
    pub(crate) span: (u64, u64),
    /// Most groups the result may hold.
    pub(crate) budget: usize,
}

/// Aggregates the items of `b.source` into at most `b.budget` groups.
///
/// Cost: O(items) hash lookups for each of the last one or two passes,
/// plus about `budget` per abandoned finer pass; memory O(budget).
pub(crate) fn aggregate(b: &Binning) -> Binned {
    let (t_lo, t_hi) = b.span;
    let span = t_hi.saturating_sub(t_lo).saturating_add(1);
    // Start fine in every dimension: a short span (few occurrences) must not
    // cap the space resolution.
    let mut res: u64 = 1 << 26;
    loop {
        let time_width = span.div_ceil(res).max(1);
        if let Some(groups) = pass(b, time_width, res, b.budget) {
            return Binned {
                groups,
                res,
                time_width,
            };
        }
        if res == 1 {
            // Unreachable for a sane key function (one bin holds everything);
            // fall back to the coarsest pass without the budget check.
            let groups = pass(b, span, 1, usize::MAX).unwrap_or_default();
            return Binned {
                groups,
                res,
                time_width: span,
            };
        }
        res /= 2;
    }
}

/// One pass at resolution `res` with time bins `time_width` wide: the
/// groups, or `None` as soon as there are more than `budget`.
fn pass(b: &Binning, time_width: u64, res: u64, budget: usize) -> Option<Vec<Group>> {
    let (acc, source, key, dim, t_lo) = (b.acc, b.source, b.key, b.dim, b.span.0);
    let time = acc.time();
    let op = acc.op();
    let occ = acc.occ();
    let mut index: IntMap<(u64, u64), usize> = IntMap::default();
    let mut groups: Vec<Group> = Vec::new();
    let mut over = false;
    source(&mut |row, coord| {
        let t = time[row] as u64;
        let tb = (dim(row) - t_lo) / time_width;
        let sk = key(row, coord, res);
        let o = occ[row];
        let oi = op_index(op[row]);
        match index.get(&(sk, tb)) {
            Some(&g) => {
                let g = &mut groups[g];
                g.count += 1;
                if t < g.t_min {
                    g.t_min = t;
                    g.first_row = row;
                }
                g.t_max = g.t_max.max(t);
                g.t_sum += t as f64;
                g.occ_min = g.occ_min.min(o);
                g.occ_max = g.occ_max.max(o);
                g.ops[oi] += 1;
                g.coord_min = g.coord_min.min(coord);
                g.coord_max = g.coord_max.max(coord);
            }
            None => {
                if groups.len() >= budget {
                    over = true;
                    return false;
                }
                let mut ops = [0; 4];
                ops[oi] = 1;
                index.insert((sk, tb), groups.len());
                groups.push(Group {
                    space: sk,
                    count: 1,
                    t_min: t,
                    t_max: t,
                    t_sum: t as f64,
                    occ_min: o,
                    occ_max: o,
                    ops,
                    first_row: row,
                    coord_min: coord,
                    coord_max: coord,
                });
            }
        }
        true
    });
    if over {
        None
    } else {
        Some(groups)
    }
}
