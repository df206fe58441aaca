//! Block lifetimes: each freed block's life ([`block_lives`]) and their
//! histogram ([`lifetime_bins`]), from the calls or from the summary.

use crate::trace::heap::HeapOp;
use crate::trace::heap::HeapSummary;

use crate::filter::error::FilterError;

use super::run::{FastMap, HeapRun};

/// A block's lifetime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockLife {
    /// Allocation site (stack id).
    pub stack: u32,
    /// Requested size.
    pub size: u64,
    /// Time of allocation.
    pub alloc: u64,
    /// Time of free; `None` when never freed.
    pub free: Option<u64>,
}

impl BlockLife {
    /// Lifetime in the run's time unit (operations for a trace); `None`
    /// when never freed (Steve computes none then either).
    pub fn lifetime(&self) -> Option<u64> {
        Some(self.free? - self.alloc)
    }
}

/// Streams every block's life: `f` is called for each freed block at its
/// free, then for each block never freed (`free` is `None`), in
/// allocation order. Memory: the live blocks.
pub fn block_lives(run: &HeapRun, mut f: impl FnMut(&BlockLife)) -> Result<(), FilterError> {
    let mut live: FastMap<u64, (u64, BlockLife)> = FastMap::default();
    let mut seq = 0u64;
    run.for_each_call(|c| {
        let freed = match c.op {
            HeapOp::Free(_) => Some(c.addr),
            HeapOp::Alloc(_) => c.old.filter(|&o| o != 0),
        };
        if let Some((_, mut b)) = freed.and_then(|a| live.remove(&a)) {
            b.free = Some(c.time);
            f(&b);
        }
        if matches!(c.op, HeapOp::Alloc(_)) && c.addr != 0 {
            let b = BlockLife {
                stack: c.stack,
                size: c.size,
                alloc: c.time,
                free: None,
            };
            seq += 1;
            live.insert(c.addr, (seq, b));
        }
    })?;
    let mut left: Vec<(u64, BlockLife)> = live.into_values().collect();
    left.sort_by_key(|l| l.0);
    left.iter().for_each(|l| f(&l.1));
    Ok(())
}

/// Steve's macro lifetimes of the freed blocks, binned: a block's macro
/// lifetime is its lifetime as a share (percent) of the whole run (all
/// operations, for a trace).
#[derive(Clone, Debug, PartialEq)]
pub struct LifetimeBins {
    /// Freed blocks (with a lifetime), binned or not.
    pub freed: u64,
    /// 100 bins of 1% over 0-100%.
    pub all: Vec<u64>,
    /// 100 bins of 0.02% over 0-2%.
    pub short: Vec<u64>,
    /// Blocks that may belong in the bin next to theirs: a run without
    /// calls keeps lifetimes in buckets (exact below 512 time units, then
    /// under 0.2% wide), and the blocks of a bucket whose lifetimes straddle
    /// a bin edge of either histogram are binned by the bucket's middle.
    /// Always 0 for a run with calls (each block's lifetime is exact).
    pub uncertain: u64,
}

/// The bin of macro lifetime `s` (percent) among `n` bins over `0..=hi`
/// (`hi` itself in the last); `None` outside.
fn lifetime_bin(s: f64, hi: f64, n: usize) -> Option<usize> {
    (0.0..=hi)
        .contains(&s)
        .then(|| ((s / (hi / n as f64)) as usize).min(n - 1))
}

impl LifetimeBins {
    pub(super) fn empty() -> LifetimeBins {
        LifetimeBins {
            freed: 0,
            all: vec![0; 100],
            short: vec![0; 100],
            uncertain: 0,
        }
    }

    /// Counts `n` blocks of macro lifetime `s` in both histograms.
    pub(super) fn add(&mut self, s: f64, n: u64) {
        for (bins, hi) in [(&mut self.all, 100.0), (&mut self.short, 2.0)] {
            if let Some(i) = lifetime_bin(s, hi, bins.len()) {
                bins[i] += n;
            }
        }
    }
}

/// Bins the macro lifetimes of the freed blocks (see [`LifetimeBins`]),
/// calling `each(block, percent)` for every freed block on the way. One
/// streamed pass ([`block_lives`]). A run without calls
/// ([`HeapRun::has_calls`]) bins its summary's lifetime histogram instead
/// (see [`LifetimeBins::uncertain`]) and never calls `each`; without a summary
/// that is an error.
pub fn lifetime_bins(
    run: &HeapRun,
    mut each: impl FnMut(&BlockLife, f64),
) -> Result<LifetimeBins, FilterError> {
    if !run.has_calls() {
        return Ok(stored_lifetime_bins(run, run.stored_summary()?));
    }
    let total = run.end_time.max(1) as f64;
    let mut b = LifetimeBins::empty();
    block_lives(run, |l| {
        if let Some(t) = l.lifetime() {
            let s = 100.0 * t as f64 / total;
            b.freed += 1;
            b.add(s, 1);
            each(l, s);
        }
    })?;
    Ok(b)
}

/// [`lifetime_bins`] from a summary's lifetime histogram (format 7): each
/// bucket's blocks go to the bins of the middle of the lifetimes it holds
/// (its one lifetime below 512 time units), as a share of the run; a
/// bucket whose shortest and longest lifetimes fall in different bins of
/// either histogram counts its blocks in [`LifetimeBins::uncertain`].
/// Cost O(buckets).
fn stored_lifetime_bins(run: &HeapRun, s: &HeapSummary) -> LifetimeBins {
    let total = run.end_time.max(1) as f64;
    let share = |units: u64| 100.0 * s.units_ns(units) as f64 / total;
    let mut b = LifetimeBins::empty();
    for &(bucket, n) in &s.lifetimes {
        let (lo, hi) = HeapSummary::lifetime_units(bucket);
        let (first, last) = (share(lo), share(hi - 1));
        b.freed += n;
        b.add((first + last) / 2.0, n);
        let straddles = [(100.0, 100), (2.0, 100)]
            .iter()
            .any(|&(top, bins)| lifetime_bin(first, top, bins) != lifetime_bin(last, top, bins));
        if straddles {
            b.uncertain += n;
        }
    }
    b
}
