//! The live heap over time, in total and per site ([`live_series`]): one
//! pass over the calls, or the summary's buckets when the profile was
//! recorded without its calls.

use crate::trace::heap::HeapOp;
use crate::trace::heap::HeapSummary;

use crate::filter::error::FilterError;

use super::run::{FastMap, HeapRun};

/// Live bytes over time: sample times, the total, each given site, and the
/// highest total from each sample to the next (so a spike between two
/// samples still shows when the series is drawn as steps).
pub type LiveSeries = (Vec<u64>, Vec<u64>, Vec<Vec<u64>>, Vec<u64>);

/// Live bytes over time: the total and the given sites, sampled at most
/// `points` times at evenly spaced times (each sample is the value after
/// the last call at or before it), plus the moment of the peak and the
/// state after the last call; with each sample, the highest total until
/// the next sample. One streamed pass; memory the live blocks and the
/// samples, whatever the number of calls.
///
/// A run without calls ([`HeapRun::has_calls`]) takes the series its
/// summary stored instead, in the same shape (one sample a stored bucket
/// of `2^w` time units, merged down to `points`); without a summary
/// that is an error.
pub fn live_series(run: &HeapRun, sites: &[u32], points: usize) -> Result<LiveSeries, FilterError> {
    if !run.has_calls() {
        return Ok(stored_live_series(
            run,
            run.stored_summary()?,
            sites,
            points,
        ));
    }
    let points = points.max(2);
    let slot: FastMap<u32, usize> = sites.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    let mut live: FastMap<u64, (u32, u64)> = FastMap::default();
    let mut total = 0u64;
    let mut per = vec![0u64; sites.len()];
    let mut out: LiveSeries = (vec![0], vec![0], vec![vec![0u64]; sites.len()], vec![]);
    // The highest total since the last sample.
    let mut high = 0u64;
    let step = (run.end_time / points as u64).max(1);
    let mut next = step;
    // The peak: (time, total, per site), drawn whatever the sampling.
    let mut peak = (0u64, 0u64, vec![0u64; sites.len()]);
    let mut last_time = None;
    run.for_each_call(|c| {
        // A sample at `next` holds the calls at `next` itself.
        while c.time > next {
            push_sample(&mut out, next, total, &per, &mut high);
            next += step;
        }
        last_time = Some(c.time);
        let freed = match c.op {
            HeapOp::Free(_) => Some(c.addr),
            HeapOp::Alloc(_) => c.old.filter(|&o| o != 0),
        };
        if let Some((s, size)) = freed.and_then(|a| live.remove(&a)) {
            total -= size;
            if let Some(&i) = slot.get(&s) {
                per[i] -= size;
            }
        }
        if matches!(c.op, HeapOp::Alloc(_)) && c.addr != 0 {
            if let Some((s, size)) = live.insert(c.addr, (c.stack, c.size)) {
                total -= size;
                if let Some(&i) = slot.get(&s) {
                    per[i] -= size;
                }
            }
            total += c.size;
            high = high.max(total);
            if let Some(&i) = slot.get(&c.stack) {
                per[i] += c.size;
            }
            if total > peak.1 {
                peak.0 = c.time;
                peak.1 = total;
                peak.2.copy_from_slice(&per);
            }
        }
    })?;
    // The state after the last call holds from that call on. Samples are
    // taken only on the way to a call, so without this one the last frees
    // would show only at the end of the run: drawn as steps, the blocks
    // they free would look live until exit.
    if let Some(t) = last_time {
        if out.0.last().is_some_and(|&s| s < t) {
            push_sample(&mut out, t, total, &per, &mut high);
        }
    }
    let end = Sample { total, per: &per };
    end_series(
        &mut out,
        run.end_time,
        &end,
        &mut high,
        (peak.0, peak.1, &peak.2),
    );
    Ok(out)
}

/// The state a sample shows: the total and the sites' live bytes.
struct Sample<'a> {
    pub(super) total: u64,
    pub(super) per: &'a [u64],
}

/// Ends a series: a last sample of `last` at the end of the run (or at
/// the last sample, when that is later), then the peak, `(time, total,
/// per site)`, inserted after the samples at or before its time (a sample
/// at the same time shows the state before the calls of that time), as
/// the highest of its interval.
fn end_series(
    out: &mut LiveSeries,
    run_end: u64,
    last: &Sample,
    high: &mut u64,
    peak: (u64, u64, &[u64]),
) {
    let end = run_end.max(*out.0.last().unwrap_or(&0));
    push_sample(out, end, last.total, last.per, high);
    out.3.push(last.total);
    if peak.1 > 0 {
        let at = out.0.partition_point(|&t| t <= peak.0);
        out.0.insert(at, peak.0);
        out.1.insert(at, peak.1);
        for (i, v) in peak.2.iter().enumerate() {
            out.2[i].insert(at, *v);
        }
        out.3.insert(at, peak.1);
    }
}

/// [`live_series`] of a run without calls, from its summary's stored
/// series (format 7), in the same shape: the (0, 0) sample, then one at
/// the end of each bucket in which a call was taken (the state after the
/// bucket's calls; between them nothing changed), its `high` the bucket's
/// stored one; a site's live bytes carried from its last stored bucket (0
/// before its first); with more buckets than `points`, consecutive
/// buckets merged into groups of equal width (bucket numbers `k · width`
/// to `(k + 1) · width`, see [`merged_width`]; the last bucket's state,
/// the highest `high`), at most `points` samples; then the
/// end of the run and the peak with each site's live bytes at it, as
/// [`end_series`] adds them. A sample time past the end of the run (the
/// last bucket reaches beyond it) is the end of the run: every call taken
/// comes before it. Cost O(buckets + sites' points); exact to a bucket
/// (`2^w` time units, about a thousandth of the run or finer).
fn stored_live_series(run: &HeapRun, s: &HeapSummary, sites: &[u32], points: usize) -> LiveSeries {
    let slot: FastMap<u32, usize> = sites.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    let mut cursors: Vec<SiteCursor> = s
        .site_series
        .iter()
        .filter_map(|x| {
            Some(SiteCursor {
                slot: *slot.get(&x.stack)?,
                points: &x.points,
                live: 0,
            })
        })
        .collect();
    let mut out: LiveSeries = (vec![0], vec![0], vec![vec![0u64]; sites.len()], vec![]);
    let (mut total, mut high) = (0u64, 0u64);
    let mut per = vec![0u64; sites.len()];
    let width = merged_width(s, points.max(2) as u64);
    for group in s
        .series
        .chunk_by(|a, b| a.bucket / width == b.bucket / width)
    {
        let last = group[group.len() - 1];
        high = group.iter().map(|b| b.high).fold(high, u64::max);
        total = last.total;
        per.fill(0);
        for c in &mut cursors {
            per[c.slot] += c.live_after(last.bucket);
        }
        let before = *out.0.last().unwrap_or(&0);
        let t = s.bucket_end_ns(last.bucket).min(run.end_time).max(before);
        push_sample(&mut out, t, total, &per, &mut high);
    }
    let mut at_peak = vec![0u64; sites.len()];
    for x in &s.site_series {
        if let Some(&i) = slot.get(&x.stack) {
            at_peak[i] += x.at_peak;
        }
    }
    let end = Sample { total, per: &per };
    let peak = (
        s.counts.peak_live.1,
        s.counts.peak_live.0,
        at_peak.as_slice(),
    );
    end_series(&mut out, run.end_time, &end, &mut high, peak);
    out
}

/// One asked-for site's stored series, read along the buckets (a site
/// may have two: stacks the profiler kept apart that the reader found
/// equal; their values add up).
struct SiteCursor<'a> {
    /// The site's place among those asked for.
    pub(super) slot: usize,
    /// Its points not yet passed: (bucket, live bytes).
    points: &'a [(u64, u64)],
    /// Its live bytes after the points passed (0 before the first).
    pub(super) live: u64,
}

impl SiteCursor<'_> {
    /// The site's live bytes after the calls of bucket `b` and those before.
    fn live_after(&mut self, b: u64) -> u64 {
        let k = self.points.partition_point(|p| p.0 <= b);
        if k > 0 {
            self.live = self.points[k - 1].1;
        }
        self.points = &self.points[k..];
        self.live
    }
}

/// The width, in bucket numbers, of the groups [`stored_live_series`]
/// merges into one sample: 1 when at most `points` buckets are stored,
/// else the narrowest that makes at most `points` groups over the span of
/// bucket numbers.
fn merged_width(s: &HeapSummary, points: u64) -> u64 {
    if s.series.len() as u64 <= points {
        return 1;
    }
    let span = s.series.last().map_or(1, |b| b.bucket + 1);
    span.div_ceil(points).max(1)
}

/// Appends a sample; closes the interval of the one before it with the
/// highest total seen in it.
fn push_sample(out: &mut LiveSeries, t: u64, total: u64, per: &[u64], high: &mut u64) {
    out.3.push(*high);
    *high = total;
    out.0.push(t);
    out.1.push(total);
    for (i, v) in per.iter().enumerate() {
        out.2[i].push(*v);
    }
}
