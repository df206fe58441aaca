//! The SUMMARY record of a heap profile (format 5): what the profiler's
//! collector summarised while the program ran, so that `heap_profile` and
//! `alloc_sites` need no pass over the calls.
//!
//! The collector takes the calls in the reader's order (time unit, then
//! thread number; see docs/heap-profile-format.md for why the order is
//! exact) and keeps what `filter::heap::HeapReport::build` keeps in its one
//! pass. A profile without the record (older formats, a program killed or
//! ended through `_exit`, a summary given up) is summarised by that pass.

use super::varint;

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

/// The whole summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeapSummary {
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
    /// Sites that allocated.
    pub sites: Vec<SiteStats>,
    /// The size classes.
    pub classes: Vec<ClassStats>,
    /// Call counts and durations by size class and by thread.
    pub durations: Vec<SummaryDurations>,
    dur_shift: u32,
    ns_per_tick_fp: u64,
}

impl HeapSummary {
    /// A duration in units as nanoseconds: the conversion the reader
    /// applies to each call's duration.
    pub fn dur_ns(&self, units: u32) -> u32 {
        let ticks = (units as u128) << self.dur_shift;
        ((ticks * self.ns_per_tick_fp as u128) >> 32).min(u32::MAX as u128) as u32
    }
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
}

struct Bytes<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Bytes<'_> {
    fn uv(&mut self) -> Option<u64> {
        let (v, p) = varint::get_uv(self.b, self.pos).ok()?;
        self.pos = p;
        Some(v)
    }
    fn u32(&mut self) -> Option<u32> {
        u32::try_from(self.uv()?).ok()
    }
}

/// Parses a SUMMARY record's body; `None` when it is damaged (the reader
/// then summarises by its pass over the calls).
pub(crate) fn parse(body: &[u8], cv: &Conversion) -> Option<HeapSummary> {
    let mut d = Bytes { b: body, pos: 0 };
    let mut t = [0u64; 11];
    for x in &mut t {
        *x = d.uv()?;
    }
    let to_ns =
        |tsc: u64| ((tsc.saturating_sub(cv.tsc0) as u128 * cv.ns_per_tick_fp as u128) >> 32) as u64;
    let mut s = HeapSummary {
        allocs: t[0],
        frees: t[1],
        bytes: t[2],
        peak_live: (t[3], if t[3] > 0 { to_ns(t[4]) } else { 0 }),
        leaked: (t[5], t[6]),
        temporary: t[7],
        unknown_frees: t[8],
        threads: u32::try_from(t[9]).ok()?,
        region_allocs: t[10],
        dur_shift: cv.dur_shift,
        ns_per_tick_fp: cv.ns_per_tick_fp,
        ..Default::default()
    };
    let nsites = d.uv()?;
    for _ in 0..nsites {
        let raw = d.uv()? as usize;
        let stack = if raw == 0 { 0 } else { *cv.stack_ids.get(raw)? };
        let mut f = [0u64; 7];
        for x in &mut f {
            *x = d.uv()?;
        }
        s.sites.push(SiteStats {
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
        s.classes.push(ClassStats {
            allocs: d.uv()?,
            bytes: d.uv()?,
            usable: d.uv()?,
            frees: d.uv()?,
        });
    }
    let ngroups = d.uv()?;
    for _ in 0..ngroups {
        s.durations.push(durations(&mut d)?);
    }
    (d.pos == body.len()).then_some(s)
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

    /// A body with one site (raw stack id 5), one class and one duration
    /// group, written as the collector writes it.
    fn body() -> Vec<u8> {
        let mut b = Vec::new();
        let mut uv = |v: u64| varint::put_uv(&mut b, v);
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
        }
    }

    #[test]
    fn a_summary_is_read_with_the_readers_clock_and_stacks() {
        let ids = [0, 0, 0, 0, 0, 2];
        let s = parse(&body(), &cv(&ids)).expect("a whole summary");
        assert_eq!((s.allocs, s.frees, s.bytes), (3, 2, 300));
        assert_eq!(s.peak_live, (200, 320)); // 640 ticks after tsc0
        assert_eq!((s.leaked, s.threads, s.region_allocs), ((100, 1), 2, 3));
        assert_eq!(s.sites.len(), 1);
        assert_eq!((s.sites[0].stack, s.sites[0].peak_live), (2, 200));
        assert_eq!(s.classes[0].usable, 384);
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
            assert_eq!(parse(&b[..cut], &cv(&ids)), None, "cut at {cut}");
        }
        // A stack id the profile never defined.
        assert_eq!(parse(&b, &cv(&[0, 0])), None);
        let mut long = b.clone();
        long.push(0);
        assert_eq!(parse(&long, &cv(&ids)), None);
    }
}
