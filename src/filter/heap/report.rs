//! The heap report of a run: allocation sites, size classes, the
//! allocator's statistics and the durations of its calls ([`HeapReport`]),
//! built in one pass over the calls or read from the summary the profiler
//! kept, the order sites are ranked in, and the CSV files
//! `alloc_sites` and `heap_stats` write.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::trace::heap::HeapOp;
use crate::trace::heap::HeapSummary;
use crate::trace::heap::{ClassStats, HeapCounts, SiteStats};
use crate::trace::record::{AllocKind, FreeKind};

use crate::filter::csv::CsvOut;
use crate::filter::error::FilterError;

use super::run::{FastMap, HeapCall, HeapRun, LiveBlock};

/// The size classes of the histograms: `0..=16`, then powers of two up to
/// 1 MiB, then everything larger.
pub fn size_class(size: u64) -> usize {
    if size <= 16 {
        0
    } else {
        ((64 - (size - 1).leading_zeros()) as usize - 4).min(17)
    }
}

/// The label of a size class: `0-16`, `17-32`, …, `>1048576`.
pub fn size_class_label(c: usize) -> String {
    match c {
        0 => "0-16".into(),
        17 => format!(">{}", 1u64 << 20),
        c => format!("{}-{}", (1u64 << (c + 3)) + 1, 1u64 << (c + 4)),
    }
}

/// Median, 99th percentile and maximum of allocator call durations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeRow {
    /// What the row covers: a size class label or `thread N`.
    pub group: String,
    /// `alloc` or `free`.
    pub op: &'static str,
    /// Calls timed (all of them, or a sample: see [`HeapRun::dur_sample`]).
    pub count: u64,
    /// Calls of the group, timed or not.
    pub calls: u64,
    /// Median nanoseconds.
    pub median: u32,
    /// 99th percentile, nanoseconds.
    pub p99: u32,
    /// Maximum, nanoseconds.
    pub max: u32,
}

/// Everything computed from a [`HeapRun`]: the counts (the profiler's
/// summary, or this stage's pass over the calls; one type,
/// [`HeapCounts`]), and what only a native run measures.
#[derive(Clone, Debug, Default)]
pub struct HeapReport {
    /// Totals, sites (one per stack, indexed by stack id) and size classes.
    pub counts: HeapCounts,
    /// Largest RSS sample, native only.
    pub peak_rss: Option<u64>,
    /// Call durations per size class and per thread (native only): only
    /// groups with at least one timed call.
    pub times: Vec<TimeRow>,
    /// Calls timed and calls in all (native; with sampled durations the
    /// first is about 1/[`HeapRun::dur_sample`] of the second).
    pub timed_calls: (u64, u64),
    /// [`HeapRun::dur_sample`] of the run (0 for a trace).
    pub dur_sample: u64,
}

/// The duration group of frees of blocks that were not live (their size is
/// not known): one past the last size class of [`size_class`].
const UNKNOWN_CLASS: usize = 18;

/// Durations below this many nanoseconds are counted exactly.
const DUR_EXACT: usize = 1024;
/// Sub-buckets per power of two above [`DUR_EXACT`]: relative error under
/// 1/64 (1.6%).
const DUR_SUB: u32 = 64;

/// A histogram of call durations in nanoseconds: exact below 1024 ns,
/// then 64 buckets per power of two (a value is known to within 1.6%).
/// Memory 19 KiB whatever the number of calls; the maximum is exact.
#[derive(Clone)]
struct DurHist {
    pub(super) counts: Vec<u64>,
    pub(super) n: u64,
    pub(super) max: u32,
}

impl DurHist {
    pub(super) fn new() -> DurHist {
        DurHist {
            counts: vec![0; DUR_EXACT + (32 - 10) * DUR_SUB as usize],
            n: 0,
            max: 0,
        }
    }

    pub(super) fn bucket(d: u32) -> usize {
        if (d as usize) < DUR_EXACT {
            return d as usize;
        }
        let e = 31 - d.leading_zeros(); // 10..=31
        let sub = (d >> (e - 6)) & (DUR_SUB - 1);
        DUR_EXACT + ((e - 10) * DUR_SUB + sub) as usize
    }

    /// The smallest duration in bucket `b`.
    fn low(b: usize) -> u32 {
        if b < DUR_EXACT {
            return b as u32;
        }
        let i = (b - DUR_EXACT) as u32;
        let (e, sub) = (i / DUR_SUB + 10, i % DUR_SUB);
        (DUR_SUB + sub) << (e - 6)
    }

    pub(super) fn add(&mut self, d: u32) {
        self.counts[Self::bucket(d)] += 1;
        self.n += 1;
        self.max = self.max.max(d);
    }

    /// Nearest rank: the smallest value with at least `p` of the calls at
    /// or below it (its bucket's lower end above 1024 ns).
    fn percentile(&self, p: f64) -> u32 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((p * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::low(b).min(self.max);
            }
        }
        self.max
    }
}

/// Duration histograms by group: size classes (and `?` for frees of
/// unknown blocks) and threads, each for alloc and free, with the number
/// of calls of each group, timed or not (durations may be a sample).
/// Indexed, not hashed: two counts per call, two histogram updates per
/// timed call.
struct Durations {
    /// `[class][op]`, class [`UNKNOWN_CLASS`] is `?`; op 0 alloc, 1 free.
    pub(super) classes: Vec<[Option<DurHist>; 2]>,
    /// `[tid][op]`.
    pub(super) threads: Vec<[Option<DurHist>; 2]>,
    /// Calls of each group, indexed alike.
    class_calls: Vec<[u64; 2]>,
    thread_calls: Vec<[u64; 2]>,
    /// The histograms count the profile's duration units, converted to
    /// nanoseconds when shown (from a summary); `None`: nanoseconds.
    pub(super) units: Option<Arc<HeapSummary>>,
}

impl Durations {
    pub(super) fn new() -> Durations {
        Durations {
            classes: vec![[None, None]; 19],
            threads: Vec::new(),
            class_calls: vec![[0, 0]; 19],
            thread_calls: Vec::new(),
            units: None,
        }
    }

    /// The groups of a profiler summary, their histograms in its units;
    /// `None` when a group or bucket is out of range.
    fn from_summary(s: &Arc<HeapSummary>) -> Option<Durations> {
        let mut d = Durations::new();
        d.units = Some(s.clone());
        for g in &s.durations {
            let t = g.index as usize;
            if g.thread && d.threads.len() <= t {
                d.threads.resize(t + 1, [None, None]);
                d.thread_calls.resize(t + 1, [0, 0]);
            }
            let (hists, calls) = if g.thread {
                (&mut d.threads, &mut d.thread_calls)
            } else {
                (&mut d.classes, &mut d.class_calls)
            };
            *calls.get_mut(t)?.get_mut(g.op)? = g.calls;
            if g.timed == 0 {
                continue;
            }
            let mut h = DurHist::new();
            for &(b, c) in &g.buckets {
                *h.counts.get_mut(b as usize)? = c;
            }
            h.n = g.timed;
            h.max = g.max;
            *hists.get_mut(t)?.get_mut(g.op)? = Some(h);
        }
        Some(d)
    }

    /// A histogram's value as nanoseconds.
    pub(super) fn ns(&self, v: u32) -> u32 {
        self.units.as_ref().map_or(v, |s| s.dur_ns(v))
    }

    /// Counts one call of size class `class`, thread `tid`, `op` (0 alloc,
    /// 1 free), taking its duration `d` when it was timed.
    pub(super) fn add(&mut self, class: usize, tid: u32, op: usize, d: Option<u32>) {
        let t = tid as usize;
        if self.threads.len() <= t {
            self.threads.resize(t + 1, [None, None]);
            self.thread_calls.resize(t + 1, [0, 0]);
        }
        self.class_calls[class][op] += 1;
        self.thread_calls[t][op] += 1;
        let Some(d) = d else { return };
        self.classes[class][op]
            .get_or_insert_with(DurHist::new)
            .add(d);
        self.threads[t][op].get_or_insert_with(DurHist::new).add(d);
    }

    /// Calls timed and calls in all (the size-class groups cover every
    /// call once).
    fn totals(&self) -> (u64, u64) {
        let timed = self.classes.iter().flatten().flatten().map(|h| h.n).sum();
        let calls = self.class_calls.iter().flatten().sum();
        (timed, calls)
    }

    /// The table rows: size classes in size order, then threads.
    pub(super) fn rows(&self) -> Vec<TimeRow> {
        let mut rows = Vec::new();
        let mut push = |group: String, op: usize, h: &Option<DurHist>, calls: u64| {
            if let Some(h) = h {
                rows.push(TimeRow {
                    group,
                    op: if op == 0 { "alloc" } else { "free" },
                    count: h.n,
                    calls,
                    median: self.ns(h.percentile(0.5)),
                    p99: self.ns(h.percentile(0.99)),
                    max: self.ns(h.max),
                });
            }
        };
        for (k, ops) in self.classes.iter().enumerate() {
            let label = if k == UNKNOWN_CLASS {
                "?".to_string()
            } else {
                size_class_label(k)
            };
            for (op, h) in ops.iter().enumerate() {
                push(label.clone(), op, h, self.class_calls[k][op]);
            }
        }
        for (t, ops) in self.threads.iter().enumerate() {
            for (op, h) in ops.iter().enumerate() {
                push(format!("thread {t}"), op, h, self.thread_calls[t][op]);
            }
        }
        rows
    }
}

/// The state of one pass over the calls: live blocks by address, the last
/// block each thread allocated (for temporaries), the running total.
struct Pass {
    pub(super) live: FastMap<u64, LiveBlock>,
    last_alloc: LastAlloc,
    total_live: u64,
}

/// Thread numbers below this are kept in [`LastAlloc::dense`].
const DENSE_TIDS: u32 = 1 << 16;

/// The last block each thread allocated and has not freed since (0:
/// none), read and written on every call. Thread numbers are small and
/// dense (the profiler numbers threads 1, 2, … in order; Valgrind does
/// alike), so they index a vector: no hashing on the per-call path. A
/// larger number (not seen in practice) goes to a map.
#[derive(Default)]
struct LastAlloc {
    dense: Vec<u64>,
    sparse: FastMap<u32, u64>,
}

impl LastAlloc {
    /// The slot of thread `tid`.
    #[inline]
    pub(super) fn slot(&mut self, tid: u32) -> &mut u64 {
        if tid >= DENSE_TIDS {
            return self.sparse.entry(tid).or_insert(0);
        }
        let t = tid as usize;
        if self.dense.len() <= t {
            self.dense.resize(t + 1, 0);
        }
        &mut self.dense[t]
    }
}

impl Pass {
    /// Counts one call into `n`, in the collector's order (see
    /// `trace/heap/heapsum.rs`): a free, an allocation, or a realloc as
    /// the free of its old block then the allocation of its new one.
    fn take(&mut self, n: &mut HeapCounts, c: &HeapCall, durs: &mut Durations) {
        n.threads = n.threads.max(c.tid);
        let freed = match c.op {
            HeapOp::Free(_) => Some(c.addr),
            HeapOp::Alloc(AllocKind::Realloc) => c.old.filter(|&o| o != 0),
            HeapOp::Alloc(_) => None,
        };
        let freed_class = freed.map_or(UNKNOWN_CLASS, |a| self.free(n, a, c.tid));
        if matches!(c.op, HeapOp::Free(_)) || c.addr == 0 {
            // A free, or a realloc that only freed: timed as a free.
            durs.add(freed_class, c.tid, 1, c.dur_ns);
            return;
        }
        let k = self.alloc(n, c);
        durs.add(k, c.tid, 0, c.dur_ns);
    }

    /// Frees block `a` for thread `tid`; returns its size class
    /// ([`UNKNOWN_CLASS`] when `a` was not a live block).
    fn free(&mut self, n: &mut HeapCounts, a: u64, tid: u32) -> usize {
        let Some(b) = self.live.remove(&a) else {
            n.unknown_frees += 1;
            return UNKNOWN_CLASS;
        };
        n.frees += 1;
        self.total_live -= b.size;
        let s = &mut n.sites[b.stack as usize];
        s.live -= b.size;
        let last = self.last_alloc.slot(tid);
        if *last == a {
            s.temporary += 1;
            n.temporary += 1;
            *last = 0;
        }
        let k = size_class(b.size);
        n.classes[k].frees += 1;
        k
    }

    /// Takes in the block call `c` allocated; returns its size class.
    fn alloc(&mut self, n: &mut HeapCounts, c: &HeapCall) -> usize {
        n.allocs += 1;
        n.bytes += c.size;
        n.region_allocs += c.in_region as u64;
        self.total_live += c.size;
        if self.total_live > n.peak_live.0 {
            n.peak_live = (self.total_live, c.time);
        }
        let s = &mut n.sites[c.stack as usize];
        s.allocs += 1;
        s.bytes += c.size;
        s.live += c.size;
        s.peak_live = s.peak_live.max(s.live);
        s.in_region += c.in_region as u64;
        let k = size_class(c.size);
        n.classes[k].allocs += 1;
        n.classes[k].bytes += c.size;
        n.classes[k].usable += c.size + c.slack.unwrap_or(0);
        *self.last_alloc.slot(c.tid) = c.addr;
        let block = LiveBlock {
            stack: c.stack,
            size: c.size,
        };
        if let Some(old) = self.live.insert(c.addr, block) {
            // The allocator returned a live address: a free was missed.
            self.total_live -= old.size;
            n.sites[old.stack as usize].live -= old.size;
        }
        k
    }

    /// What is left live once every call is in: the leaks.
    fn finish(&self, n: &mut HeapCounts) {
        for s in &mut n.sites {
            s.leaked_blocks = 0;
        }
        for b in self.live.values() {
            n.sites[b.stack as usize].leaked_blocks += 1;
        }
        n.leaked = (self.total_live, self.live.len() as u64);
    }
}

impl HeapReport {
    /// A report with a row per stack and per size class, and nothing
    /// counted yet.
    pub(super) fn empty(run: &HeapRun) -> HeapReport {
        HeapReport {
            counts: HeapCounts {
                sites: (0..run.stacks.len() as u32)
                    .map(|stack| SiteStats {
                        stack,
                        ..Default::default()
                    })
                    .collect(),
                classes: vec![ClassStats::default(); 18],
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// The report of a run: from the summary the profiler kept while it
    /// recorded when there is one (no pass over the calls: the cost is the
    /// number of sites), else by [`HeapReport::build_by_pass`]. Both give
    /// the same counts; durations from the summary are exact below 1024
    /// units of the profile (about 5 µs) and within 1.6% above, those of
    /// the pass exact below 1024 ns and within 1.6% above. A run without
    /// calls has only its summary: without one, or with one that does not
    /// fit its stacks, the report is an error saying so.
    pub fn build(run: &HeapRun) -> Result<HeapReport, FilterError> {
        if !run.has_calls() {
            let s = run.stored_summary()?;
            return Self::from_summary(run, s).ok_or_else(|| {
                run.no_summary(
                    "its summary names a site, size class or duration bucket the profile does \
                     not hold: it is damaged.",
                )
            });
        }
        if let Some(r) = run
            .summary
            .as_ref()
            .and_then(|s| Self::from_summary(run, s))
        {
            return Ok(r);
        }
        Self::build_by_pass(run)
    }

    /// The report from the profiler's summary; `None` when it does not fit
    /// the run (a site or bucket out of range), so the caller takes a pass.
    fn from_summary(run: &HeapRun, s: &Arc<HeapSummary>) -> Option<HeapReport> {
        let mut r = Self::empty(run);
        let (sites, classes) = (r.counts.sites, r.counts.classes);
        r.counts = HeapCounts {
            sites,
            classes,
            ..s.counts.clone()
        };
        // The record lists the sites that allocated: spread by stack id.
        for x in &s.counts.sites {
            let site = r.counts.sites.get_mut(x.stack as usize)?;
            if site.allocs != 0 {
                return None; // two entries for one site: peaks would not add up
            }
            *site = x.clone();
        }
        for (k, c) in s.counts.classes.iter().enumerate() {
            *r.counts.classes.get_mut(k)? = c.clone();
        }
        let durs = Durations::from_summary(s)?;
        r.peak_rss = run.rss.iter().map(|x| x.1).max();
        r.times = durs.rows();
        r.timed_calls = if run.timed { durs.totals() } else { (0, 0) };
        r.dur_sample = run.dur_sample.unwrap_or(0);
        Some(r)
    }

    /// One pass over the calls, streamed. See the module documentation.
    /// Call durations are summarised by [`DurHist`] (exact below 1024 ns,
    /// within 1.6% above).
    pub fn build_by_pass(run: &HeapRun) -> Result<HeapReport, FilterError> {
        let mut r = Self::empty(run);
        let mut pass = Pass {
            live: FastMap::default(),
            last_alloc: LastAlloc::default(),
            total_live: 0,
        };
        let mut durs = Durations::new();
        run.for_each_call(|c| pass.take(&mut r.counts, c, &mut durs))?;
        pass.finish(&mut r.counts);
        r.peak_rss = run.rss.iter().map(|s| s.1).max();
        r.times = durs.rows();
        r.timed_calls = if run.timed { durs.totals() } else { (0, 0) };
        r.dur_sample = run.dur_sample.unwrap_or(0);
        Ok(r)
    }

    /// Sites that allocated, ranked by `key` (largest first, ties by stack
    /// id), at most `n`.
    pub fn top_sites<F: Fn(&SiteStats) -> u64>(&self, n: usize, key: F) -> Vec<&SiteStats> {
        let mut v: Vec<&SiteStats> = self.counts.sites.iter().filter(|s| key(s) > 0).collect();
        v.sort_by(|a, b| key(b).cmp(&key(a)).then(a.stack.cmp(&b.stack)));
        v.truncate(n);
        v
    }

    /// Requested and usable bytes over all allocations (usable only when
    /// measured).
    pub fn fragmentation(&self) -> (u64, u64) {
        let req = self.counts.classes.iter().map(|c| c.bytes).sum();
        let usable = self.counts.classes.iter().map(|c| c.usable).sum();
        (req, usable)
    }
}

/// A ranking of `alloc_sites`: what the sites are ordered by. Its name
/// (the command's argument) and its description (the column heading) are
/// given here only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ranking {
    /// Bytes allocated.
    Bytes,
    /// Number of allocations.
    Count,
    /// Highest live bytes.
    Peak,
    /// Bytes still live at the end.
    Leaked,
    /// Temporary allocations (freed before the thread's next allocation).
    Temporary,
}

impl Ranking {
    /// Every ranking, in the order `alloc_sites` prints them.
    pub const ALL: [Ranking; 5] = [
        Ranking::Bytes,
        Ranking::Count,
        Ranking::Peak,
        Ranking::Leaked,
        Ranking::Temporary,
    ];

    /// The name a command takes.
    pub fn name(self) -> &'static str {
        match self {
            Ranking::Bytes => "bytes",
            Ranking::Count => "count",
            Ranking::Peak => "peak",
            Ranking::Leaked => "leaked",
            Ranking::Temporary => "temporary",
        }
    }

    /// What the value is, for headings.
    pub fn describe(self) -> &'static str {
        match self {
            Ranking::Bytes => "bytes allocated",
            Ranking::Count => "allocations",
            Ranking::Peak => "peak live bytes",
            Ranking::Leaked => "leaked bytes",
            Ranking::Temporary => "temporary allocations",
        }
    }

    /// The ranking named `name`, or a message listing the names.
    pub fn parse(name: &str) -> Result<Ranking, String> {
        Ranking::ALL
            .into_iter()
            .find(|r| r.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Ranking::ALL.iter().map(|r| r.name()).collect();
                format!(
                    "\"{name}\" is not a ranking; the rankings are {}.",
                    names.join(", ")
                )
            })
    }

    /// The value a site is ranked by.
    pub fn value(self, s: &SiteStats) -> u64 {
        match self {
            Ranking::Bytes => s.bytes,
            Ranking::Count => s.allocs,
            Ranking::Peak => s.peak_live,
            Ranking::Leaked => s.live,
            Ranking::Temporary => s.temporary,
        }
    }
}

/// How a run's stacks read when the tool gives fewer frames than exist:
/// a note for traced runs.
pub fn timing_note(run: &HeapRun) -> Option<String> {
    (!run.timed).then(|| {
        format!(
            "these allocations come from the Valgrind {}: times are operations (accesses and \
             allocator calls), not seconds, and call durations, usable sizes and RSS are not \
             meaningful under Valgrind, so they are not shown. heap_profile measures them natively.",
            run.source
        )
    })
}

/// What the durations of a native run's calls are: every call's, or
/// estimates from a sample, with how many calls were timed. `None` for a
/// Valgrind trace (no durations).
pub fn duration_note(run: &HeapRun, r: &HeapReport) -> Option<String> {
    let every = run.dur_sample?;
    let (timed, calls) = r.timed_calls;
    Some(if every <= 1 {
        format!("call durations are measured: every call was timed ({timed} of {calls}).")
    } else {
        format!(
            "call durations are estimates from a sample: {timed} of {calls} calls timed \
             (sampled 1 in {every}: each thread timed a pseudo-random one in about {every} \
             of its calls); counts of calls are exact. heap_profile time_all times every \
             call."
        )
    })
}

/// The name of a free kind, for tables.
pub fn free_kind_name(k: FreeKind) -> &'static str {
    match k {
        FreeKind::Free => "free",
        FreeKind::Delete => "delete",
        FreeKind::DeleteArray => "delete[]",
    }
}

/// Writes `alloc_sites.csv`: one row per site with every ranking's value
/// and its backtrace (frames joined with ` <- `), through the stage's one
/// CSV writer.
pub fn write_sites_csv(path: &Path, rows: &[(SiteStats, String)]) -> Result<(), FilterError> {
    let (dir, name) = split_path(path);
    let mut out = CsvOut::create(
        dir,
        &name,
        &[
            "site",
            "allocations",
            "bytes",
            "peak_live_bytes",
            "leaked_bytes",
            "leaked_blocks",
            "temporary",
            "in_region",
            "backtrace",
        ],
    )?;
    for (x, bt) in rows {
        for v in [
            u64::from(x.stack),
            x.allocs,
            x.bytes,
            x.peak_live,
            x.live,
            x.leaked_blocks,
            x.temporary,
            x.in_region,
        ] {
            out.num(v);
        }
        out.text(bt);
        out.end_row()?;
    }
    out.finish().map(drop)
}

/// The folder and file name of `path`.
fn split_path(path: &Path) -> (&Path, String) {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    (dir, name.into_owned())
}

/// Writes `heap_size_classes.csv` and, for a native run (whose calls are
/// timed, all or a sample), `heap_op_times.csv` into `dir`; returns the
/// files written.
pub fn write_stats_csv(dir: &Path, r: &HeapReport) -> Result<Vec<PathBuf>, FilterError> {
    let header = [
        "size_class",
        "allocations",
        "bytes",
        "usable_bytes",
        "frees",
    ];
    let mut out = CsvOut::create(dir, "heap_size_classes.csv", &header)?;
    for (k, c) in r
        .counts
        .classes
        .iter()
        .enumerate()
        .filter(|(_, c)| c.allocs > 0)
    {
        out.text(&size_class_label(k));
        for v in [c.allocs, c.bytes, c.usable, c.frees] {
            out.num(v);
        }
        out.end_row()?;
    }
    let mut files = vec![out.finish()?];
    // Written for every native run, even when no call fell in the sample
    // (a short run): the header and its sampling column say what is there.
    if r.dur_sample > 0 {
        let header = [
            "group",
            "op",
            "calls",
            "timed_calls",
            "sampled_1_in",
            "median_ns",
            "p99_ns",
            "max_ns",
        ];
        let mut out = CsvOut::create(dir, "heap_op_times.csv", &header)?;
        for t in &r.times {
            out.text(&t.group);
            out.text(t.op);
            let every = r.dur_sample;
            for v in [
                t.calls,
                t.count,
                every,
                t.median.into(),
                t.p99.into(),
                t.max.into(),
            ] {
                out.num(v);
            }
            out.end_row()?;
        }
        files.push(out.finish()?);
    }
    Ok(files)
}

impl HeapRun {
    /// See [`timing_note`].
    pub fn timing_note(&self) -> Option<String> {
        timing_note(self)
    }

    /// See [`duration_note`].
    pub fn duration_note(&self, r: &HeapReport) -> Option<String> {
        duration_note(self, r)
    }
}

impl HeapReport {
    /// The size classes that saw an allocation, in size order, each with
    /// its label (`0-16`, `17-32`, … `>1048576`, see [`size_class_label`]).
    pub fn used_classes(&self) -> impl Iterator<Item = (String, &ClassStats)> {
        self.counts
            .classes
            .iter()
            .enumerate()
            .filter(|(_, c)| c.allocs > 0)
            .map(|(k, c)| (size_class_label(k), c))
    }

    /// Writes `alloc_sites.csv` of `sites` (site index, its backtrace as
    /// text), in that order (see [`write_sites_csv`]).
    pub fn write_sites_csv(&self, path: &Path, sites: &[(u32, String)]) -> Result<(), FilterError> {
        let rows: Vec<(SiteStats, String)> = sites
            .iter()
            .map(|(k, bt)| (self.counts.sites[*k as usize].clone(), bt.clone()))
            .collect();
        write_sites_csv(path, &rows)
    }

    /// See [`write_stats_csv`].
    pub fn write_stats_csv(&self, dir: &Path) -> Result<Vec<PathBuf>, FilterError> {
        write_stats_csv(dir, self)
    }
}
