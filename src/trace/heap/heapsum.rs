//! The SUMMARY record of a heap profile (format 5): what the profiler's
//! collector summarised while the program ran, so that `heap_profile` and
//! `alloc_sites` need no pass over the calls.
//!
//! The collector takes the calls in the reader's order (time unit, then
//! thread number; see docs/heap-profile-format.md for why the order is
//! exact) and keeps what `filter::heap::HeapReport::build` keeps in its one
//! pass. A profile with calls but without the record (older formats, a
//! program killed or ended through `_exit`, a summary given up) is
//! summarised by that pass.
//!
//! From format 7 the record also holds the live heap over time (a series of
//! buckets of `2^w` time units) and a histogram of the freed blocks'
//! lifetimes, so that a profile recorded without its calls still draws its
//! figures; such a profile holds a checkpoint record every second or so and
//! one at exit ([`HeapSummary::at_exit`]).

use crate::trace::record::get_uv;

/// Counts of one allocation site (one distinct call stack).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SiteStats {
    /// The stack id: an index into the run's stacks (`Profile::stacks`).
    pub stack: u32,
    /// Allocations (realloc included).
    pub allocs: u64,
    /// Bytes requested in total.
    pub bytes: u64,
    /// Largest number of bytes live at once from this site.
    pub peak_live: u64,
    /// Bytes live now (during the pass), at the end: leaked.
    pub live: u64,
    /// Blocks never freed.
    pub leaked_blocks: u64,
    /// Temporary allocations: freed by the allocating thread with no other
    /// allocation by that thread in between (heaptrack's definition).
    pub temporary: u64,
    /// Allocations made while a pinned region was open.
    pub in_region: u64,
}

/// One size class of the histogram.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClassStats {
    /// Allocations in this class.
    pub allocs: u64,
    /// Bytes requested.
    pub bytes: u64,
    /// Usable bytes (`malloc_usable_size`), when measured.
    pub usable: u64,
    /// Frees of blocks of this class.
    pub frees: u64,
}

/// The calls of one group and a histogram of the durations of those timed,
/// in the profile's duration units ([`HeapSummary::dur_ns`] converts).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SummaryDurations {
    /// `false`: a size class (`index` 18 for frees of unknown blocks);
    /// `true`: a thread (`index` its number).
    pub thread: bool,
    /// The class or thread.
    pub index: u32,
    /// 0 allocations, 1 frees.
    pub op: usize,
    /// Calls of the group, timed or not.
    pub calls: u64,
    /// Calls timed.
    pub timed: u64,
    /// The longest, in units.
    pub max: u32,
    /// (bucket, count) for the buckets used, in bucket order; buckets are
    /// `filter::heap`'s duration buckets, over units.
    pub buckets: Vec<(u32, u64)>,
}

/// One bucket of the live-heap series (format 7) in which a call was
/// taken; a bucket without a call keeps the total of the one before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeriesBucket {
    /// The bucket's number: it ends at [`HeapSummary::bucket_end_ns`].
    pub bucket: u64,
    /// Live bytes after the bucket's last call.
    pub total: u64,
    /// The most bytes live at once in the bucket, counting the total it
    /// started with.
    pub high: u64,
}

/// One site's live bytes over the series' buckets (format 7).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SiteSeries {
    /// The stack id, as in [`SiteStats::stack`].
    pub stack: u32,
    /// The site's live bytes at the peak of the total
    /// ([`HeapCounts::peak_live`]).
    pub at_peak: u64,
    /// (bucket, live bytes after the bucket's last call) for each bucket in
    /// which a call allocated from the site or freed one of its blocks, in
    /// bucket order; between them the site's live bytes stay as they were
    /// (0 before the first).
    pub points: Vec<(u64, u64)>,
}

/// Lifetimes below this many time units have a bucket each.
const LIFE_EXACT: u32 = 512;
/// Lifetime buckets per power of two from [`LIFE_EXACT`] on.
const LIFE_SUB: u32 = 512;
/// The last lifetime bucket: lifetimes whose highest set bit is bit 63.
const LIFE_LAST: u32 = LIFE_EXACT + (63 - 9) * LIFE_SUB + LIFE_SUB - 1;

/// What the profiler counts of a run's allocator calls: totals, sites and
/// size classes. One type for the three places the counts come from: the
/// collector's SUMMARY record ([`HeapSummary::counts`]), the analysis's
/// pass over the calls, and the report the commands show, which holds one
/// of the other two (`filter::heap::HeapReport::counts`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeapCounts {
    /// Allocations (realloc included).
    pub allocs: u64,
    /// Frees of live blocks (a realloc that moved or freed one counts).
    pub frees: u64,
    /// Bytes requested.
    pub bytes: u64,
    /// Peak of live bytes and when (nanoseconds since the start).
    pub peak_live: (u64, u64),
    /// Bytes and blocks never freed.
    pub leaked: (u64, u64),
    /// Temporary allocations.
    pub temporary: u64,
    /// Frees of addresses that were not live blocks.
    pub unknown_frees: u64,
    /// The highest thread number that made a call.
    pub threads: u32,
    /// Allocations made inside a pinned region.
    pub region_allocs: u64,
    /// The sites' counts. In a summary record only the sites that
    /// allocated, in the record's order; in a report one per stack of the
    /// run, indexed by stack id.
    pub sites: Vec<SiteStats>,
    /// The size classes, indexed by `filter::heap::size_class`.
    pub classes: Vec<ClassStats>,
}

/// The whole summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeapSummary {
    /// The counts.
    pub counts: HeapCounts,
    /// Call counts and durations by size class and by thread.
    pub durations: Vec<SummaryDurations>,
    /// Whether this is the summary written at exit; `false` for a
    /// checkpoint written while the program ran (format 7, a profile
    /// without calls): it then holds the calls up to [`Self::upto_ns`]
    /// only, and its leaks and sites' `live` are what was live then.
    /// Always `true` before format 7.
    pub at_exit: bool,
    /// Every call before this time (nanoseconds since the start) is in the
    /// summary, and none after it (format 7; 0 before: the summary then
    /// holds every call).
    pub upto_ns: u64,
    /// Calls the collector took out of time order (format 7): a thread
    /// stayed inside the allocator for over a second. Counts, sizes, sites
    /// and leaks do not depend on the order; the peak, the series and the
    /// lifetimes may be off by these calls.
    pub late: u64,
    /// The series' buckets are `2^series_w` time units wide (format 7).
    pub series_w: u32,
    /// The live-heap series: the buckets in which a call was taken, in
    /// order (format 7; empty before).
    pub series: Vec<SeriesBucket>,
    /// Each site's live bytes over the same buckets (format 7).
    pub site_series: Vec<SiteSeries>,
    /// The freed blocks' lifetimes: (lifetime bucket, blocks) for the
    /// buckets used, in order ([`Self::lifetime_units`] gives a bucket's
    /// lifetimes; format 7, empty before).
    pub lifetimes: Vec<(u32, u64)>,
    dur_shift: u32,
    ns_per_tick_fp: u64,
    tsc0: u64,
    tick_shift: u32,
}

impl HeapSummary {
    /// A duration in units as nanoseconds: the conversion the reader
    /// applies to each call's duration.
    pub fn dur_ns(&self, units: u32) -> u32 {
        let ticks = (units as u128) << self.dur_shift;
        ((ticks * self.ns_per_tick_fp as u128) >> 32).min(u32::MAX as u128) as u32
    }

    /// The end of series bucket `i` (the first time unit after it, `base +
    /// (i + 1) · 2^w` with `base = tsc0 >> tick_shift`), in nanoseconds
    /// since the start: converted as the reader converts a call's time
    /// stamp. The bucket's calls all come before it.
    pub fn bucket_end_ns(&self, i: u64) -> u64 {
        let unit = u128::from(self.tsc0 >> self.tick_shift)
            + ((u128::from(i) + 1) << self.series_w.min(64));
        let tsc = unit << self.tick_shift;
        ticks_ns(
            tsc.saturating_sub(u128::from(self.tsc0)),
            self.ns_per_tick_fp,
        )
    }

    /// The lifetimes lifetime bucket `b` holds, in time units: `[lo, hi)`.
    /// One lifetime a bucket below 512 units (exact); above, 512 buckets a
    /// power of two, each under 0.2% wide.
    pub fn lifetime_units(b: u32) -> (u64, u64) {
        if b < LIFE_EXACT {
            return (u64::from(b), u64::from(b) + 1);
        }
        let b = b.min(LIFE_LAST) - LIFE_EXACT;
        let (o, sub) = (9 + b / LIFE_SUB, u64::from(b % LIFE_SUB));
        let lo = (512 + sub) << (o - 9);
        let hi = (u128::from(513 + sub) << (o - 9)).min(u128::from(u64::MAX));
        (lo, hi as u64)
    }

    /// A lifetime of `units` time units in nanoseconds (`units <<
    /// tick_shift` ticks, converted with the reader's clock).
    pub fn units_ns(&self, units: u64) -> u64 {
        ticks_ns(u128::from(units) << self.tick_shift, self.ns_per_tick_fp)
    }

    /// The lifetimes lifetime bucket `b` holds, in nanoseconds: `[lo, hi)`
    /// (see [`Self::lifetime_units`]).
    pub fn lifetime_range_ns(&self, b: u32) -> (u64, u64) {
        let (lo, hi) = Self::lifetime_units(b);
        (self.units_ns(lo), self.units_ns(hi))
    }
}

/// `ticks` in nanoseconds: a 32.32 fixed-point multiply, as the reader
/// converts call times (ticks beyond 64 bits saturate).
fn ticks_ns(ticks: u128, ns_per_tick_fp: u64) -> u64 {
    let t = ticks.min(u128::from(u64::MAX));
    ((t * u128::from(ns_per_tick_fp)) >> 32).min(u128::from(u64::MAX)) as u64
}

/// How the reader's clock and stacks map the record's raw values.
pub(crate) struct Conversion<'a> {
    /// The profile's stack index of each raw stack id.
    pub stack_ids: &'a [u32],
    /// Time stamp counter at the start.
    pub tsc0: u64,
    /// Nanoseconds per tick, times 2^32.
    pub ns_per_tick_fp: u64,
    /// Durations are in units of 2^dur_shift ticks.
    pub dur_shift: u32,
    /// Call times are in units of 2^tick_shift ticks.
    pub tick_shift: u32,
}

impl Conversion<'_> {
    /// A time stamp (ticks) as nanoseconds since the start.
    fn ns(&self, tsc: u64) -> u64 {
        ticks_ns(
            u128::from(tsc.saturating_sub(self.tsc0)),
            self.ns_per_tick_fp,
        )
    }

    /// The profile's stack index of raw stack id `raw`; `None` for an id
    /// the profile never defined.
    fn stack(&self, raw: u64) -> Option<u32> {
        if raw == 0 {
            return Some(0);
        }
        self.stack_ids.get(usize::try_from(raw).ok()?).copied()
    }
}

struct Bytes<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Bytes<'_> {
    fn uv(&mut self) -> Option<u64> {
        let (v, p) = get_uv(self.b, self.pos).ok()?;
        self.pos = p;
        Some(v)
    }
    fn u32(&mut self) -> Option<u32> {
        u32::try_from(self.uv()?).ok()
    }
}

/// Parses a SUMMARY record's body of a profile of format `version`;
/// `None` when it is damaged, i.e. when it does not end exactly where its
/// fields do (the reader then takes an earlier checkpoint, or summarises by
/// its pass over the calls). Cost: O(body length).
pub(crate) fn parse(body: &[u8], cv: &Conversion, version: u64) -> Option<HeapSummary> {
    let mut d = Bytes { b: body, pos: 0 };
    let mut s = counts(&mut d, cv)?;
    if version >= 7 {
        series(&mut d, cv, &mut s)?;
        site_series(&mut d, cv, &mut s)?;
        lifetimes(&mut d, &mut s)?;
    }
    (d.pos == body.len()).then_some(s)
}

/// The fields every format holds: totals, sites, size classes and
/// duration groups.
fn counts(d: &mut Bytes, cv: &Conversion) -> Option<HeapSummary> {
    let mut t = [0u64; 11];
    for x in &mut t {
        *x = d.uv()?;
    }
    let mut s = HeapSummary {
        counts: HeapCounts {
            allocs: t[0],
            frees: t[1],
            bytes: t[2],
            peak_live: (t[3], if t[3] > 0 { cv.ns(t[4]) } else { 0 }),
            leaked: (t[5], t[6]),
            temporary: t[7],
            unknown_frees: t[8],
            threads: u32::try_from(t[9]).ok()?,
            region_allocs: t[10],
            ..Default::default()
        },
        at_exit: true,
        dur_shift: cv.dur_shift,
        ns_per_tick_fp: cv.ns_per_tick_fp,
        tsc0: cv.tsc0,
        tick_shift: cv.tick_shift,
        ..Default::default()
    };
    let nsites = d.uv()?;
    for _ in 0..nsites {
        let stack = cv.stack(d.uv()?)?;
        let mut f = [0u64; 7];
        for x in &mut f {
            *x = d.uv()?;
        }
        s.counts.sites.push(SiteStats {
            stack,
            allocs: f[0],
            bytes: f[1],
            peak_live: f[2],
            live: f[3],
            leaked_blocks: f[4],
            temporary: f[5],
            in_region: f[6],
        });
    }
    let nclasses = d.uv()?;
    for _ in 0..nclasses.min(64) {
        s.counts.classes.push(ClassStats {
            allocs: d.uv()?,
            bytes: d.uv()?,
            usable: d.uv()?,
            frees: d.uv()?,
        });
    }
    let ngroups = d.uv()?;
    for _ in 0..ngroups {
        s.durations.push(durations(d)?);
    }
    Some(s)
}

/// Bucket numbers written as deltas: the first from 0, each later one from
/// the one before and above it (a bucket twice is damage).
#[derive(Default)]
struct Deltas(Option<u64>);

impl Deltas {
    fn next(&mut self, delta: u64) -> Option<u64> {
        let b = match self.0 {
            None => delta,
            Some(_) if delta == 0 => return None,
            Some(last) => last.checked_add(delta)?,
        };
        self.0 = Some(b);
        Some(b)
    }
}

/// A series bucket number, checked: its end, `(b + 1) · 2^w` units after
/// the start, fits in 64 bits (so [`HeapSummary::bucket_end_ns`] is exact).
fn series_bucket(deltas: &mut Deltas, delta: u64, w: u32) -> Option<u64> {
    let b = deltas.next(delta)?;
    b.checked_add(1)?.checked_mul(1u64.checked_shl(w)?)?;
    Some(b)
}

/// Format 7: final, upto_tsc, late, w and the live-heap series.
fn series(d: &mut Bytes, cv: &Conversion, s: &mut HeapSummary) -> Option<()> {
    s.at_exit = match d.uv()? {
        0 => false,
        1 => true,
        _ => return None,
    };
    s.upto_ns = cv.ns(d.uv()?);
    s.late = d.uv()?;
    s.series_w = d.u32().filter(|&w| w < 64)?;
    let n = d.uv()?;
    let mut deltas = Deltas::default();
    for _ in 0..n {
        let bucket = series_bucket(&mut deltas, d.uv()?, s.series_w)?;
        let (total, high) = (d.uv()?, d.uv()?);
        s.series.push(SeriesBucket {
            bucket,
            total,
            high,
        });
    }
    Some(())
}

/// Format 7: each site's live bytes over the series' buckets.
fn site_series(d: &mut Bytes, cv: &Conversion, s: &mut HeapSummary) -> Option<()> {
    let n = d.uv()?;
    for _ in 0..n {
        let mut x = SiteSeries {
            stack: cv.stack(d.uv()?)?,
            at_peak: d.uv()?,
            points: Vec::new(),
        };
        let points = d.uv()?;
        let mut deltas = Deltas::default();
        for _ in 0..points {
            let bucket = series_bucket(&mut deltas, d.uv()?, s.series_w)?;
            x.points.push((bucket, d.uv()?));
        }
        s.site_series.push(x);
    }
    Some(())
}

/// Format 7: the lifetime histogram.
fn lifetimes(d: &mut Bytes, s: &mut HeapSummary) -> Option<()> {
    let n = d.uv()?;
    let mut deltas = Deltas::default();
    for _ in 0..n {
        let b = deltas.next(d.uv()?)?;
        let b = u32::try_from(b).ok().filter(|&b| b <= LIFE_LAST)?;
        s.lifetimes.push((b, d.uv()?));
    }
    Some(())
}

fn durations(d: &mut Bytes) -> Option<SummaryDurations> {
    let kind = d.uv()?;
    let mut g = SummaryDurations {
        thread: kind == 1,
        index: d.u32()?,
        op: d.uv()? as usize,
        calls: d.uv()?,
        timed: d.uv()?,
        max: d.u32()?,
        buckets: Vec::new(),
    };
    if kind > 1 || g.op > 1 {
        return None;
    }
    let n = d.uv()?;
    let mut b = 0u32;
    for _ in 0..n {
        b = b.checked_add(d.u32()?)?;
        g.buckets.push((b, d.uv()?));
    }
    Some(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::record::put_uv;

    /// A body with one site (raw stack id 5), one class and one duration
    /// group, written as the collector writes it.
    fn body() -> Vec<u8> {
        let mut b = Vec::new();
        let mut uv = |v: u64| put_uv(&mut b, v);
        // allocs frees bytes peak peak_tsc leaked_bytes leaked_blocks
        // temporary unknown_frees threads region_allocs
        for v in [3, 2, 300, 200, 1000 + 640, 100, 1, 1, 0, 2, 3] {
            uv(v);
        }
        uv(1); // one site
        for v in [5, 3, 300, 200, 100, 1, 1, 3] {
            uv(v);
        }
        uv(1); // one class
        for v in [3, 300, 384, 2] {
            uv(v);
        }
        uv(1); // one group: class 3, allocations, 3 calls, 2 timed
        for v in [0, 3, 0, 3, 2, 40, 2, 10, 1, 30, 1] {
            uv(v);
        }
        b
    }

    fn cv(ids: &[u32]) -> Conversion<'_> {
        Conversion {
            stack_ids: ids,
            tsc0: 1000,
            ns_per_tick_fp: 1 << 31, // two ticks a nanosecond
            dur_shift: 4,
            tick_shift: 6, // units of 64 ticks, 32 ns
        }
    }

    /// [`body`] with the fields format 7 appends: a checkpoint up to unit
    /// 65 (tsc 4160) with 2 late calls; series buckets of 2^3 units, two of
    /// them (0 and 5) and site 5's series over both; three lifetime
    /// buckets: 7 (below 512), 512 and 1541 (the octave of 2^11).
    fn body_v7() -> Vec<u8> {
        let mut b = body();
        let mut uv = |v: u64| put_uv(&mut b, v);
        // final upto_tsc late w
        for v in [0, 65 << 6, 2, 3] {
            uv(v);
        }
        // two buckets: (delta, total, high)
        for v in [2, 0, 200, 200, 5, 100, 200] {
            uv(v);
        }
        // one site series: stack 5, at_peak 200, two (delta, live)
        for v in [1, 5, 200, 2, 0, 200, 5, 100] {
            uv(v);
        }
        // three lifetime buckets: (delta, count)
        for v in [3, 7, 3, 505, 1, 1029, 2] {
            uv(v);
        }
        b
    }

    /// Worked by hand with tsc0 1000, 2 ticks a nanosecond, units of 64
    /// ticks (base unit 1000 >> 6 = 15):
    /// * upto: tsc 4160, 3160 ticks after tsc0: 1580 ns;
    /// * series bucket 0 ends at unit 15 + 1 · 8 = 23, tsc 1472: 472 ticks,
    ///   236 ns; bucket 5 at unit 15 + 6 · 8 = 63, tsc 4032: 1516 ns;
    /// * lifetime bucket 7 holds 7 units exactly: [7, 8) units, [448, 512)
    ///   ticks, [224, 256) ns; bucket 512 (octave 9, sub 0) holds
    ///   [512 << 0, 513 << 0) = [512, 513) units, [16384, 16416) ns; bucket
    ///   1541 = 512 + 2 · 512 + 5 (octave 11, sub 5) holds [517 << 2,
    ///   518 << 2) = [2068, 2072) units, 132352 to 132608 ticks, [66176,
    ///   66304) ns.
    #[test]
    fn a_version_7_summary_holds_the_series_and_lifetimes() {
        let ids = [0, 0, 0, 0, 0, 2];
        let s = parse(&body_v7(), &cv(&ids), 7).expect("a whole summary");
        assert_eq!(
            (s.counts.allocs, s.counts.frees, s.counts.bytes),
            (3, 2, 300)
        );
        assert_eq!(s.counts.peak_live, (200, 320));
        assert_eq!(s.durations.len(), 1);
        assert_eq!(
            (s.at_exit, s.upto_ns, s.late, s.series_w),
            (false, 1580, 2, 3)
        );
        let b = |bucket, total, high| SeriesBucket {
            bucket,
            total,
            high,
        };
        assert_eq!(s.series, vec![b(0, 200, 200), b(5, 100, 200)]);
        assert_eq!((s.bucket_end_ns(0), s.bucket_end_ns(5)), (236, 1516));
        assert_eq!(
            s.site_series,
            vec![SiteSeries {
                stack: 2,
                at_peak: 200,
                points: vec![(0, 200), (5, 100)],
            }]
        );
        assert_eq!(s.lifetimes, vec![(7, 3), (512, 1), (1541, 2)]);
        assert_eq!(HeapSummary::lifetime_units(7), (7, 8));
        assert_eq!(HeapSummary::lifetime_units(512), (512, 513));
        assert_eq!(HeapSummary::lifetime_units(1541), (2068, 2072));
        assert_eq!(s.lifetime_range_ns(7), (224, 256));
        assert_eq!(s.lifetime_range_ns(512), (16384, 16416));
        assert_eq!(s.lifetime_range_ns(1541), (66176, 66304));
        // The last bucket of each octave meets the next octave's first.
        assert_eq!(HeapSummary::lifetime_units(511), (511, 512));
        assert_eq!(HeapSummary::lifetime_units(1023), (1023, 1024));
        assert_eq!(HeapSummary::lifetime_units(1024), (1024, 1026));
        assert_eq!(HeapSummary::lifetime_units(1535).1, 2048);
        assert_eq!(HeapSummary::lifetime_units(1536).0, 2048);
        // The last bucket: bit 63.
        assert_eq!(HeapSummary::lifetime_units(28671).0, 1023 << 54);
    }

    #[test]
    fn a_version_6_summary_is_whole_and_at_exit() {
        let ids = [0, 0, 0, 0, 0, 2];
        let s = parse(&body(), &cv(&ids), 6).expect("a whole summary");
        assert!(s.at_exit);
        assert_eq!((s.upto_ns, s.late), (0, 0));
        assert!(s.series.is_empty() && s.site_series.is_empty() && s.lifetimes.is_empty());
    }

    #[test]
    fn a_damaged_version_7_summary_is_not_taken() {
        let ids = [0, 0, 0, 0, 0, 2];
        let b = body_v7();
        let v6 = body().len();
        // Cut in the series, the site series and the lifetimes, and right
        // where format 6's fields end.
        for cut in [
            v6,
            v6 + 2,
            v6 + 7,
            v6 + 12,
            v6 + 18,
            b.len() - 3,
            b.len() - 1,
        ] {
            assert_eq!(parse(&b[..cut], &cv(&ids), 7), None, "cut at {cut}");
        }
        // Format 7's fields read as format 6, format 6's as format 7.
        assert_eq!(parse(&b, &cv(&ids), 6), None);
        assert_eq!(parse(&body(), &cv(&ids), 7), None);
        let with = |at: usize, v: u8| {
            let mut x = b.clone();
            x[at] = v;
            parse(&x, &cv(&ids), 7)
        };
        assert_eq!(with(v6, 2), None, "final is 0 or 1");
        assert_eq!(with(v6 + 4, 64), None, "w below 64");
        assert_eq!(with(v6 + 11, 0), None, "a series bucket twice");
        assert_eq!(with(v6 + 4, 4).map(|s| s.series_w), Some(4));
    }

    #[test]
    fn a_summary_is_read_with_the_readers_clock_and_stacks() {
        let ids = [0, 0, 0, 0, 0, 2];
        let s = parse(&body(), &cv(&ids), 6).expect("a whole summary");
        assert_eq!(
            (s.counts.allocs, s.counts.frees, s.counts.bytes),
            (3, 2, 300)
        );
        assert_eq!(s.counts.peak_live, (200, 320)); // 640 ticks after tsc0
        assert_eq!(
            (s.counts.leaked, s.counts.threads, s.counts.region_allocs),
            ((100, 1), 2, 3)
        );
        assert_eq!(s.counts.sites.len(), 1);
        assert_eq!(
            (s.counts.sites[0].stack, s.counts.sites[0].peak_live),
            (2, 200)
        );
        assert_eq!(s.counts.classes[0].usable, 384);
        let g = &s.durations[0];
        assert_eq!(
            (g.thread, g.index, g.op, g.calls, g.timed, g.max),
            (false, 3, 0, 3, 2, 40)
        );
        assert_eq!(g.buckets, vec![(10, 1), (40, 1)]);
        assert_eq!(s.dur_ns(40), 320); // 640 ticks
    }

    #[test]
    fn a_damaged_summary_is_not_taken() {
        let ids = [0, 0, 0, 0, 0, 2];
        let b = body();
        for cut in [1, 12, b.len() / 2, b.len() - 1] {
            assert_eq!(parse(&b[..cut], &cv(&ids), 6), None, "cut at {cut}");
        }
        // A stack id the profile never defined.
        assert_eq!(parse(&b, &cv(&[0, 0]), 6), None);
        let mut long = b.clone();
        long.push(0);
        assert_eq!(parse(&long, &cv(&ids), 6), None);
    }
}
