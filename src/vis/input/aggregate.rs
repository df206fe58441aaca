//! Exact aggregation of accesses into (space bin, time bin) groups when a
//! scatter would exceed the point budget.
//!
//! Every access (or element touch) lands in exactly one group and every group
//! keeps its count, so the counts of a figure always sum to what it draws.
//! The resolution `res` is the number of bins per dimension: time is cut into
//! about `res` equal bins over the drawn span, space into about `res` bins
//! per dimension (per variable for addresses, per array index for arrays),
//! each bin a power of two wide so that bins nest when `res` halves. One
//! pass starts fine and halves `res`, merging its groups, whenever they
//! outgrow the budget. The items stream past once (from the access list
//! when the figure draws a selection of an analysis), and only the groups
//! are kept.
//!
//! With colour classes, a group keeps the count of each class among its
//! accesses ([`Group::classes`]): groups mix classes, and a figure colours
//! each by its mix, rather than splitting the classes into groups that
//! would be drawn over each other at one place, the last class hiding the
//! others whatever their counts.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::tables::{batch_items, for_batches, op_index, Item};
use crate::filter::AccessBatches;
use crate::vis::error::VisError;

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
    /// Accesses of each colour class, best first, when the binning counts
    /// classes ([`Binning::classes`]); empty otherwise.
    pub(crate) classes: Vec<u64>,
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

    fn new(space: u64, it: &Item, coord: u64, class: Option<(usize, usize)>) -> Group {
        let mut ops = [0; 4];
        ops[op_index(it.op)] = 1;
        let classes = match class {
            Some((c, n)) => {
                let mut v = vec![0; n.max(c + 1)];
                v[c] = 1;
                v
            }
            None => Vec::new(),
        };
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
            classes,
        }
    }

    /// Takes the accesses of `o` (a group of the same coarser bin) in.
    fn merge(&mut self, o: &Group) {
        self.count += o.count;
        if o.t_min < self.t_min {
            self.t_min = o.t_min;
            self.first = o.first;
        }
        self.t_max = self.t_max.max(o.t_max);
        self.t_sum += o.t_sum;
        self.occ_min = self.occ_min.min(o.occ_min);
        self.occ_max = self.occ_max.max(o.occ_max);
        for (a, b) in self.ops.iter_mut().zip(o.ops) {
            *a += b;
        }
        self.coord_min = self.coord_min.min(o.coord_min);
        self.coord_max = self.coord_max.max(o.coord_max);
        for (a, b) in self.classes.iter_mut().zip(&o.classes) {
            *a += b;
        }
    }

    #[inline]
    fn add(&mut self, it: &Item, coord: u64, class: Option<usize>) {
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
        if let Some(c) = class {
            self.classes[c] += 1;
        }
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
pub(crate) type KeyFn<'a> = dyn Fn(&Item, u64, u64) -> u64 + Sync + 'a;

/// The binned non-space dimension of an item (access time, occurrence, or a
/// constant to bin by space only).
pub(crate) type DimFn<'a> = dyn Fn(&Item) -> u64 + Sync + 'a;

/// The colour class of an item as the figure draws it (dense, best first).
pub(crate) type ClassFn<'a> = dyn Fn(&Item) -> u8 + Sync + 'a;

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
    /// The most values one space dimension spans (a variable's addresses,
    /// an array's longest index). From the resolution of the widest span,
    /// this or `dim`'s, every bin is one value wide and no finer resolution
    /// makes other groups: the pass starts there rather than at 2^26,
    /// sparing the halvings that would merge nothing.
    pub(crate) space: u64,
    /// How many items have `dim` values of their own, when no two share
    /// one (access times are unique), else 0. Bins `w` wide then hold at
    /// least `distinct / w` groups, so the resolutions finer than the
    /// first where that fits the budget cannot fit, and the pass starts
    /// below them: a long trace no longer makes a group per access at
    /// first and merges them a halving at a time.
    pub(crate) distinct: u64,
    /// The class of each item and the number of classes, when groups count
    /// their accesses per colour class ([`Group::classes`]); costs one
    /// call and one add per item and view, and a counter per class and
    /// group.
    pub(crate) classes: Option<(&'a ClassFn<'a>, usize)>,
}

impl Binning<'_> {
    /// The resolution the pass starts at: the coarser of the one where
    /// every bin is one value wide (see [`Binning::space`]) and the finest
    /// that [`Binning::distinct`] allows; and whether it is the former
    /// (every finer resolution gives the same groups).
    fn start(&self) -> (u64, bool) {
        let same = self
            .space
            .max(span_of(self))
            .checked_next_power_of_two()
            .unwrap_or(FINEST)
            .min(FINEST);
        let mut res = same;
        while res > 1 && self.distinct.div_ceil(bin_width(span_of(self), res)) > self.budget as u64
        {
            res /= 2;
        }
        (res, res == same)
    }
}

/// The finest resolution tried.
const FINEST: u64 = 1 << 26;

/// The width of one of `res` bins over a span of `span` values: the
/// smallest power of two at least `span / res` (rounded up). Powers of two
/// make the bins nest: halving `res` keeps the width or doubles it, so
/// each coarser bin is a union of finer ones, and groups can be merged
/// into the coarser resolution instead of counted again.
///
/// Cost: no division when `res` is a power of two (every resolution the
/// search tries is), since the keys call it per access.
#[inline]
pub(crate) fn bin_width(span: u64, res: u64) -> u64 {
    let cells = if res.is_power_of_two() {
        (span >> res.trailing_zeros()) + u64::from(span & (res - 1) != 0)
    } else {
        span.div_ceil(res.max(1))
    };
    cells.max(1).next_power_of_two()
}

/// The groups of one view at one resolution while a pass fills them.
struct Level {
    res: u64,
    time_width: u64,
    index: IntMap<(u64, u64), usize>,
    groups: Vec<Group>,
    /// The keys and slots of recently used groups, direct-mapped by key:
    /// consecutive accesses mostly fall in a few groups (one per variable
    /// a loop interleaves), and this spares their hash lookups.
    recent: [((u64, u64), usize); RECENT],
}

/// Slots of [`Level::recent`].
const RECENT: usize = 64;

/// The slot of `k` in [`Level::recent`].
#[inline]
fn recent_slot(k: (u64, u64)) -> usize {
    let h = (k.0 ^ k.1.rotate_left(29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> (64 - RECENT.trailing_zeros())) as usize
}

impl Level {
    /// An empty level with room for `groups` groups.
    fn new(b: &Binning, res: u64, groups: usize) -> Level {
        let mut index = IntMap::default();
        index.reserve(groups);
        Level {
            res,
            time_width: bin_width(span_of(b), res),
            index,
            groups: Vec::with_capacity(groups),
            // No group has slot usize::MAX.
            recent: [((0, 0), usize::MAX); RECENT],
        }
    }

    /// The (space key, `dim` bin) of an item at this level.
    #[inline]
    fn key(&self, b: &Binning, it: &Item, coord: u64) -> (u64, u64) {
        // time_width is a power of two.
        let tb = ((b.dim)(it) - b.span.0) >> self.time_width.trailing_zeros();
        ((b.key)(it, coord, self.res), tb)
    }

    #[inline]
    fn add(&mut self, b: &Binning, it: &Item, coord: u64) {
        let k = self.key(b, it, coord);
        let class = b.classes.map(|(of, n)| (of(it) as usize, n));
        let c = class.map(|c| c.0);
        let slot = recent_slot(k);
        let (rk, g) = self.recent[slot];
        if rk == k && g != usize::MAX {
            self.groups[g].add(it, coord, c);
            return;
        }
        let g = match self.index.get(&k) {
            Some(&g) => {
                self.groups[g].add(it, coord, c);
                g
            }
            None => {
                self.index.insert(k, self.groups.len());
                self.groups.push(Group::new(k.0, it, coord, class));
                self.groups.len() - 1
            }
        };
        self.recent[slot] = (k, g);
    }

    /// Whether the level holds more groups than `b` allows. The coarsest
    /// resolution always fits a sane key function (one bin holds
    /// everything); it is never refused.
    fn over(&self, b: &Binning) -> bool {
        self.res > 1 && self.groups.len() > b.budget
    }

    /// The level at half the resolution, its groups merged from these:
    /// each group's key there is that of any of its accesses (its first,
    /// at its lowest coordinate), since the bins nest.
    fn coarser(self, b: &Binning) -> Level {
        let mut next = Level::new(b, (self.res / 2).max(1), self.groups.len());
        for g in self.groups {
            let k = next.key(b, &g.first, g.coord_min);
            match next.index.get(&k) {
                Some(&i) => next.groups[i].merge(&g),
                None => {
                    next.index.insert(k, next.groups.len());
                    next.groups.push(Group { space: k.0, ..g });
                }
            }
        }
        next
    }
}

/// The span of `dim` values of a view: values `lo..=hi` count `hi - lo + 1`.
fn span_of(b: &Binning) -> u64 {
    let (lo, hi) = b.span;
    hi.saturating_sub(lo).saturating_add(1)
}

/// Aggregates the items of `source` into at most `budget` groups for each
/// view of `views`: for each, the finest resolution `res` (from 2^26 down
/// to 1, halving) whose (space key, `dim` bin) groups fit the budget, where
/// the `dim` bins are [`bin_width`]`(span, res)` wide. The views' key
/// functions must nest the same way (space bins of [`bin_width`]).
///
/// One pass: each view starts at the finest resolution and, whenever its
/// groups outgrow the budget, halves it, merging its groups into the
/// coarser bins. Since groups only grow as items come, a resolution given
/// up never fits, and the one kept is the finest that does: what a search
/// with a pass per resolution would find.
///
/// Cost: per item and view one comparison with the last group's key, and
/// a hash lookup when it differs; per halving O(budget). Memory
/// O(views x budget), never O(items).
///
/// # Errors
/// The items cannot be read, or the pass was interrupted.
pub(crate) fn aggregate(source: &Source, views: &[Binning]) -> Result<Vec<Binned>, VisError> {
    let mut levels: Vec<Option<Level>> = views
        .iter()
        .map(|b| Some(Level::new(b, b.start().0, 0)))
        .collect();
    source(&mut |it, coord| {
        for (b, slot) in views.iter().zip(levels.iter_mut()) {
            add_to(slot, b, it, coord);
        }
        true
    })?;
    Ok(binned(levels, views))
}

/// [`aggregate`] of the accesses of `src` at their addresses, the first
/// view on a thread of its own and the others on the caller's, both
/// reading each batch in place: a figure's two views (the 3D one by
/// occurrence, the 2D one by time) take two cores where they took one,
/// while the batches are read on a third thread. Each view sees every
/// access in order, as in one pass, and the result is [`aggregate`]'s.
/// Where no thread can be started, the caller adds the batch to every
/// view. Cost: a thread per batch (of about a million accesses).
///
/// # Errors
/// The accesses cannot be read, or the pass was interrupted.
pub(crate) fn aggregate_split(
    src: &dyn AccessBatches,
    views: &[Binning],
) -> Result<Vec<Binned>, VisError> {
    let mut levels: Vec<Option<Level>> = views
        .iter()
        .map(|b| Some(Level::new(b, b.start().0, 0)))
        .collect();
    let (first, rest) = levels.split_at_mut(1.min(views.len()));
    for_batches(src, &mut |batch, row0| {
        let add = |slot: &mut Option<Level>, b: &Binning| {
            for it in batch_items(batch, row0) {
                add_to(slot, b, &it, it.addr);
            }
        };
        let helped = std::thread::scope(|s| {
            let helper = (first.first_mut().zip(views.first())).map(|(slot, b)| {
                std::thread::Builder::new()
                    .name("mapvis-binning".into())
                    .spawn_scoped(s, move || add(slot, b))
            });
            for (slot, b) in rest.iter_mut().zip(views.iter().skip(1)) {
                add(slot, b);
            }
            match helper {
                Some(Ok(h)) => {
                    if let Err(p) = h.join() {
                        std::panic::resume_unwind(p);
                    }
                    true
                }
                Some(Err(_)) => false,
                None => true,
            }
        });
        if !helped {
            add(&mut first[0], &views[0]);
        }
        true
    })?;
    Ok(binned(levels, views))
}

/// Adds one item to the level in `slot`, making the level coarser until it
/// fits the view's budget again.
#[inline]
fn add_to(slot: &mut Option<Level>, b: &Binning, it: &Item, coord: u64) {
    let l = slot.as_mut().expect("a level is always in place");
    l.add(b, it, coord);
    if l.over(b) {
        let mut l = slot.take().expect("a level is always in place");
        while l.over(b) {
            l = l.coarser(b);
        }
        *slot = Some(l);
    }
}

/// The result of each view from its last level.
fn binned(levels: Vec<Option<Level>>, views: &[Binning]) -> Vec<Binned> {
    // A level never halved from where bins are one value wide fits at every resolution from
    // there up, the finest of which is 2^26.
    levels
        .into_iter()
        .flatten()
        .zip(views)
        .map(|(l, b)| Binned {
            res: if b.start() == (l.res, true) {
                FINEST
            } else {
                l.res
            },
            groups: l.groups,
            time_width: l.time_width,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items with scattered times and addresses (a fixed pseudo-random
    /// sequence), in time order.
    fn items(n: u64) -> Vec<Item> {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut t = 0;
        (0..n)
            .map(|row| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                t += 1 + x % 3;
                Item {
                    row,
                    time: t,
                    op: b"LSM"[(x % 3) as usize],
                    addr: 0x1000 + (x >> 8) % 5000,
                    occ: 1 + (x >> 20) % 40,
                    ..Item::default()
                }
            })
            .collect()
    }

    /// (space, time bin, count, t_min, t_max, coord_min, coord_max,
    /// class counts) of each group, sorted.
    type Summary = Vec<(u64, u64, u64, u64, u64, u64, u64, Vec<u64>)>;

    fn summary(groups: &[Group], b: &Binning, res: u64) -> Summary {
        let w = bin_width(span_of(b), res);
        let mut s: Summary = groups
            .iter()
            .map(|g| {
                let tb = ((b.dim)(&g.first) - b.span.0) / w;
                (
                    g.space,
                    tb,
                    g.count,
                    g.t_min,
                    g.t_max,
                    g.coord_min,
                    g.coord_max,
                    g.classes.clone(),
                )
            })
            .collect();
        s.sort();
        s
    }

    /// The groups of every resolution counted from scratch, the finest
    /// that fits taken: what the one pass must give.
    fn reference(its: &[Item], b: &Binning) -> (u64, Summary) {
        let mut res = FINEST;
        loop {
            let w = bin_width(span_of(b), res);
            let mut m: HashMap<(u64, u64), Group> = HashMap::new();
            for it in its {
                let k = ((b.key)(it, it.addr, res), ((b.dim)(it) - b.span.0) / w);
                let c = b.classes.map(|(of, n)| (of(it) as usize, n));
                m.entry(k)
                    .and_modify(|g| g.add(it, it.addr, c.map(|c| c.0)))
                    .or_insert_with(|| Group::new(k.0, it, it.addr, c));
            }
            if m.len() <= b.budget || res == 1 {
                let groups: Vec<Group> = m.into_values().collect();
                return (res, summary(&groups, b, res));
            }
            res /= 2;
        }
    }

    #[test]
    fn one_pass_finds_the_finest_resolution_that_fits() {
        let its = items(20_000);
        let (lo, hi) = (0x1000u64, 0x1000 + 4999);
        let key = |_: &Item, coord: u64, res: u64| (coord - lo) / bin_width(hi - lo + 1, res);
        let time = |it: &Item| it.time;
        let occ = |it: &Item| it.occ;
        // Three classes, by operation: groups count them as they merge.
        let class = |it: &Item| op_index(it.op) as u8;
        let t_span = (its[0].time, its.last().unwrap().time);
        for budget in [1, 7, 100, 2_000, 19_999, 50_000] {
            let by_time = Binning {
                key: &key,
                dim: &time,
                span: t_span,
                budget,
                space: 5000,
                distinct: its.len() as u64,
                classes: None,
            };
            let by_class = Binning {
                classes: Some((&class, 3)),
                ..by_time
            };
            let by_occ = Binning {
                dim: &occ,
                span: (1, 40),
                distinct: 0,
                ..by_time
            };
            let source = |f: &mut dyn FnMut(&Item, u64) -> bool| {
                for it in &its {
                    if !f(it, it.addr) {
                        break;
                    }
                }
                Ok(())
            };
            let got = aggregate(&source, &[by_time, by_occ, by_class]).unwrap();
            // The views split over two threads, the items in batches of
            // uneven sizes, find the same groups as the one pass (which
            // the loop below checks against `reference`, counted from
            // scratch).
            let split = aggregate_split(
                &Batches::of(&its, &[7_000, 1, 12_999]),
                &[by_time, by_occ, by_class],
            )
            .unwrap();
            for ((b, g), h) in [by_time, by_occ, by_class].iter().zip(&got).zip(&split) {
                assert_eq!(
                    (h.res, h.time_width),
                    (g.res, g.time_width),
                    "budget {budget}"
                );
                assert_eq!(summary(&h.groups, b, h.res), summary(&g.groups, b, g.res));
            }
            for (b, g) in [by_time, by_occ, by_class].iter().zip(&got) {
                let (res, want) = reference(&its, b);
                assert_eq!(g.res, res, "budget {budget}");
                assert_eq!(summary(&g.groups, b, g.res), want, "budget {budget}");
                assert!(g.groups.len() <= budget || g.res == 1);
                assert_eq!(g.groups.iter().map(|g| g.count).sum::<u64>(), 20_000);
            }
            // Counted per class, each group's classes add up to its count
            // and to its operations (the classes here).
            for g in &got[2].groups {
                assert_eq!(g.classes.iter().sum::<u64>(), g.count);
                assert_eq!(g.classes[..], g.ops[..3]);
            }
        }
    }

    /// Items as access batches of the given sizes.
    struct Batches(Vec<crate::filter::AccessBatch>);

    impl Batches {
        fn of(its: &[Item], sizes: &[usize]) -> Batches {
            let mut rest = its;
            let batches = sizes.iter().map(|&n| {
                let (now, later) = rest.split_at(n);
                rest = later;
                let mut b = crate::filter::AccessBatch::default();
                for it in now {
                    b.time.push(it.time);
                    b.op.push(it.op);
                    b.addr.push(it.addr);
                    b.size.push(it.size as _);
                    b.tid.push(it.tid as _);
                    b.var.push(it.var.0);
                    b.line.push(it.line.0);
                    b.occ.push(it.occ);
                }
                b
            });
            let out = Batches(batches.collect());
            assert!(rest.is_empty(), "the sizes cover the items");
            out
        }
    }

    impl AccessBatches for Batches {
        fn len(&self) -> u64 {
            self.0.iter().map(|b| b.len() as u64).sum()
        }
        fn visit(&self, f: &mut crate::filter::BatchFn) -> Result<(), crate::filter::FilterError> {
            for b in &self.0 {
                if !f(b)? {
                    break;
                }
            }
            Ok(())
        }
    }

    #[test]
    fn bins_nest_when_the_resolution_halves() {
        for span in [1u64, 2, 3, 7, 100, 4097, 1 << 40] {
            let mut res = FINEST;
            while res > 1 {
                let (fine, coarse) = (bin_width(span, res), bin_width(span, res / 2));
                assert!(coarse == fine || coarse == 2 * fine, "{span} {res}");
                assert!(fine * res >= span && coarse * (res / 2) >= span);
                res /= 2;
            }
            assert!(bin_width(span, 1) >= span);
        }
    }
}
