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
//! The items stream past once per pass (from the access list when the
//! figure draws a selection of an analysis), and only the groups are kept.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::error::VisError;
use super::input::{op_index, Item};

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
    pub(crate) occ_min: u64,
    pub(crate) occ_max: u64,
    /// Counts of load, store, modify, other.
    pub(crate) ops: [u64; 4],
    /// The earliest access (for thread and source line).
    pub(crate) first: Item,
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

    fn new(space: u64, it: &Item, coord: u64) -> Group {
        let mut ops = [0; 4];
        ops[op_index(it.op)] = 1;
        Group {
            space,
            count: 1,
            t_min: it.time,
            t_max: it.time,
            t_sum: it.time as f64,
            occ_min: it.occ,
            occ_max: it.occ,
            ops,
            first: *it,
            coord_min: coord,
            coord_max: coord,
        }
    }

    #[inline]
    fn add(&mut self, it: &Item, coord: u64) {
        let t = it.time;
        self.count += 1;
        if t < self.t_min {
            self.t_min = t;
            self.first = *it;
        }
        self.t_max = self.t_max.max(t);
        self.t_sum += t as f64;
        self.occ_min = self.occ_min.min(it.occ);
        self.occ_max = self.occ_max.max(it.occ);
        self.ops[op_index(it.op)] += 1;
        self.coord_min = self.coord_min.min(coord);
        self.coord_max = self.coord_max.max(coord);
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

/// One pass over the items to aggregate: calls `f(item, coord)` for each,
/// in time order, until `f` returns false.
pub(crate) type Source<'a> =
    dyn Fn(&mut dyn FnMut(&Item, u64) -> bool) -> Result<(), VisError> + 'a;

/// Space key of an item at a resolution: `key(item, coord, res)`.
pub(crate) type KeyFn<'a> = dyn Fn(&Item, u64, u64) -> u64 + 'a;

/// The binned non-space dimension of an item (access time, occurrence, or a
/// constant to bin by space only).
pub(crate) type DimFn<'a> = dyn Fn(&Item) -> u64 + 'a;

/// What [`aggregate`] groups: the keys and the second binned dimension of
/// one view.
#[derive(Clone, Copy)]
pub(crate) struct Binning<'a> {
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

/// The finest resolution tried.
const FINEST: u64 = 1 << 26;

/// Resolutions one pass tries side by side for each view: the finest that
/// fits is taken, so most searches end in one or two passes that read
/// everything, at a memory of this many times the budget at most.
const LEVELS_PER_PASS: usize = 3;

/// The groups of one view at one resolution while a pass fills them.
struct Level {
    res: u64,
    time_width: u64,
    budget: usize,
    index: IntMap<(u64, u64), usize>,
    groups: Vec<Group>,
    /// More groups than the budget: this resolution is too fine.
    over: bool,
}

impl Level {
    fn new(b: &Binning, res: u64) -> Level {
        let (t_lo, t_hi) = b.span;
        let span = t_hi.saturating_sub(t_lo).saturating_add(1);
        Level {
            res,
            time_width: span.div_ceil(res).max(1),
            // The coarsest resolution always fits a sane key function (one
            // bin holds everything); it is never refused.
            budget: if res == 1 { usize::MAX } else { b.budget },
            index: IntMap::default(),
            groups: Vec::new(),
            over: false,
        }
    }

    #[inline]
    fn add(&mut self, b: &Binning, it: &Item, coord: u64) {
        let tb = ((b.dim)(it) - b.span.0) / self.time_width;
        let sk = (b.key)(it, coord, self.res);
        match self.index.get(&(sk, tb)) {
            Some(&g) => self.groups[g].add(it, coord),
            None => {
                if self.groups.len() >= self.budget {
                    // Free the groups now: this level is not used.
                    self.over = true;
                    self.index = IntMap::default();
                    self.groups = Vec::new();
                    return;
                }
                self.index.insert((sk, tb), self.groups.len());
                self.groups.push(Group::new(sk, it, coord));
            }
        }
    }
}

/// Aggregates the items of `source` into at most `budget` groups for each
/// view of `views`: for each, the finest resolution `res` (from 2^26 down
/// to 1, halving) whose (space key, `dim` bin) groups fit the budget, where
/// the `dim` bins are `span / res` wide (rounded up).
///
/// Every view's search runs in the same passes, [`LEVELS_PER_PASS`]
/// resolutions at a time; a resolution drops out as soon as it has more
/// groups than the budget, and a pass ends once all its resolutions have.
/// So too-fine passes read about `budget` items each and only the last one
/// or two read everything.
///
/// Cost: per item, one hash lookup per live resolution; memory
/// O(views x LEVELS_PER_PASS x budget), never O(items).
///
/// # Errors
/// The items cannot be read, or the pass was interrupted.
pub(crate) fn aggregate(source: &Source, views: &[Binning]) -> Result<Vec<Binned>, VisError> {
    let mut done: Vec<Option<Binned>> = views.iter().map(|_| None).collect();
    let mut next: Vec<u64> = vec![FINEST; views.len()];
    while done.iter().any(Option::is_none) {
        // (view, level) for the views not settled yet, finest first.
        let mut levels: Vec<(usize, Level)> = Vec::new();
        for (v, b) in views.iter().enumerate() {
            if done[v].is_some() {
                continue;
            }
            let mut res = next[v];
            for _ in 0..LEVELS_PER_PASS {
                levels.push((v, Level::new(b, res)));
                if res == 1 {
                    break;
                }
                res /= 2;
            }
        }
        source(&mut |it, coord| {
            let mut live = false;
            for (v, l) in levels.iter_mut() {
                if !l.over {
                    l.add(&views[*v], it, coord);
                    live |= !l.over;
                }
            }
            live
        })?;
        for (v, l) in levels {
            if done[v].is_some() {
                continue;
            }
            if l.over {
                next[v] = (l.res / 2).max(1);
            } else {
                done[v] = Some(Binned {
                    groups: l.groups,
                    res: l.res,
                    time_width: l.time_width,
                });
            }
        }
    }
    Ok(done.into_iter().flatten().collect())
}
