//! The allocation side of a run: allocation sites, allocator statistics,
//! live heap over time and block lifetimes.
//!
//! Two sources feed the same model, a [`HeapRun`] (allocator calls in time
//! order, with interned stacks):
//!
//! * a native heap profile ([`HeapRun::open_profile`]), timed in
//!   nanoseconds, with each call's own duration, usable sizes and RSS,
//!   whose calls stay in the file and are streamed on each pass;
//! * a mapvis Valgrind trace ([`HeapRun::from_trace`]), whose time axis is
//!   Steve's *operations* (every recorded access plus every allocator call),
//!   with the tool's 8-frame stacks; times of calls are not measured there.
//!   Its calls also stay in the file: each pass reads the trace again,
//!   counting the accesses without keeping them.
//!
//! [`HeapReport::build_by_pass`], [`live_series`] and [`lifetime_bins`]
//! each make one pass over the calls with a map from live block address to
//! block: cost O(calls), memory one entry per live block plus one row per
//! site, never one per call. A native profile of format 5 also carries the
//! summary the profiler kept while recording (the same counts, taken in
//! the same order: `trace/heap/heapsum.rs`), which [`HeapReport::build`] takes
//! instead of a pass: cost O(sites).
//!
//! From format 7 a native profile is by default recorded without its calls
//! ([`HeapRun::has_calls`]): the summary then holds everything, the live
//! heap over time and the lifetime histogram included, and
//! [`HeapReport::build`], [`live_series`] and [`lifetime_bins`] read it
//! (cost O(sites + buckets)); what needs each call
//! ([`HeapRun::for_each_call`], [`block_lives`]) is an error naming the
//! file, never an empty run.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::trace::heap::HeapSummary;
pub use crate::trace::heap::{ClassStats, SiteStats};
use crate::trace::heap::{HeapOp, Profile, ProfileReader};
use crate::trace::record::{AllocKind, Event, FreeKind, Mapping};
use crate::trace::record::{Batch, EndState, TraceReader};

use super::csv::CsvOut;
use super::error::FilterError;

/// One allocator call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeapCall {
    /// When: nanoseconds (native) or operations (traced) since the start.
    pub time: u64,
    /// Thread.
    pub tid: u32,
    /// What the call did.
    pub op: HeapOp,
    /// The block returned or freed (0: a realloc that only freed).
    pub addr: u64,
    /// Requested bytes (0 for frees).
    pub size: u64,
    /// For realloc: the block it replaced (0 for realloc(NULL, n)).
    pub old: Option<u64>,
    /// `malloc_usable_size` minus the size, when measured (native).
    pub slack: Option<u64>,
    /// Stack id in [`HeapRun::stacks`] (0: none).
    pub stack: u32,
    /// Time spent in the allocator, when measured (native).
    pub dur_ns: Option<u32>,
    /// Whether a pinned region (GL_START .. GL_STOP) was open.
    pub in_region: bool,
}

/// What the times of a [`HeapRun`] count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// Nanoseconds of wall-clock time (native profile).
    Nanoseconds,
    /// Steve's operations: accesses plus allocator calls (Valgrind trace).
    Operations,
}

impl TimeUnit {
    /// The unit's name in tables and axis titles.
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::Nanoseconds => "ns",
            TimeUnit::Operations => "operations",
        }
    }
}

/// Where the calls of a [`HeapRun`] are.
#[derive(Clone, Debug)]
enum Calls {
    /// Streamed from a native heap profile on each pass.
    Profile(Arc<ProfileReader>),
    /// Streamed from a Valgrind trace on each pass.
    Trace(Arc<TraceCalls>),
    /// Held in memory (a profile read whole, tests).
    Memory(Arc<Vec<HeapCall>>),
    /// None: the native heap profile at this path was recorded without its
    /// calls (format 7), only its summary.
    Absent(PathBuf),
}

/// A Valgrind trace's calls: the file and the stack ids its first pass
/// gave (memory: the distinct stacks).
#[derive(Debug)]
struct TraceCalls {
    path: PathBuf,
    index: HashMap<Vec<u64>, u32>,
}

/// What a pass over a Valgrind trace gathers besides the calls.
struct TracePass {
    maps: Vec<Mapping>,
    regions: Vec<(u64, u64)>,
    end_time: u64,
    /// A read error that ended the pass early.
    error: Option<String>,
    truncated: bool,
}

/// One pass over a Valgrind trace's allocator calls, in time order (a
/// call's time counts the accesses and calls before it), handing each to
/// `f`; `stack_id` gives an allocation's stack its id. Accesses are only
/// counted. Memory: the reader's buffers.
fn trace_pass(
    path: &Path,
    stack_id: &mut dyn FnMut(Vec<u64>) -> u32,
    f: &mut dyn FnMut(&HeapCall),
) -> Result<TracePass, FilterError> {
    let mut reader = TraceReader::open(path)?;
    let mut pass = TracePass {
        maps: Vec::new(),
        regions: Vec::new(),
        end_time: 0,
        error: None,
        truncated: false,
    };
    let mut heap_ops = 0u64;
    let mut open: Option<u64> = None;
    loop {
        let ev = match reader.for_each_access(u64::MAX, |_| {}) {
            Ok(Batch::Event(ev)) => ev,
            Ok(Batch::Limit) => continue,
            Ok(Batch::End) => break,
            Err(e) => {
                pass.error = Some(e.to_string());
                break;
            }
        };
        let (op, tid, addr, size, old, stack, time) = match ev {
            // A forked child's inherited blocks: not its allocator calls.
            Event::Alloc(a) if a.inherited => continue,
            Event::Alloc(a) => (
                HeapOp::Alloc(a.kind),
                a.tid,
                a.addr,
                a.size,
                (a.kind == AllocKind::Realloc).then_some(a.old_addr.unwrap_or(0)),
                a.stack,
                a.time,
            ),
            Event::Free(f) => (
                HeapOp::Free(f.kind),
                f.tid,
                f.addr,
                0,
                None,
                f.stack,
                f.time,
            ),
            Event::Map(m) => {
                pass.maps.push(m);
                continue;
            }
            Event::RegionStart(r) => {
                open = Some(r.time + heap_ops);
                continue;
            }
            Event::RegionStop(r) => {
                if let Some(s) = open.take() {
                    pass.regions.push((s, r.time + heap_ops));
                }
                continue;
            }
            _ => continue,
        };
        let stack = match op {
            HeapOp::Alloc(_) => stack_id(stack),
            HeapOp::Free(_) => 0,
        };
        f(&HeapCall {
            time: time + heap_ops,
            tid,
            op,
            addr,
            size,
            old,
            slack: None,
            stack,
            dur_ns: None,
            in_region: open.is_some(),
        });
        heap_ops += 1;
    }
    pass.end_time = reader.accesses_read() + heap_ops;
    if let Some(s) = open {
        pass.regions.push((s, pass.end_time));
    }
    pass.truncated = matches!(reader.end_state(), EndState::Truncated { .. });
    Ok(pass)
}

/// The allocator calls of one run. See the module documentation. Cheap to
/// clone: the calls are shared.
#[derive(Clone, Debug)]
pub struct HeapRun {
    /// Where the calls came from ("heap profile FILE", "trace FILE").
    pub source: String,
    /// Whether durations, usable sizes and RSS were measured (native).
    pub timed: bool,
    /// How call durations were sampled (native): 1 when every call was
    /// timed, N when each thread timed a pseudo-random one in about N of
    /// its calls; `None` for a Valgrind trace.
    pub dur_sample: Option<u64>,
    /// What [`HeapCall::time`] counts.
    pub unit: TimeUnit,
    /// The calls in time order (see [`HeapRun::for_each_call`]).
    calls: Calls,
    /// Stacks by id: return addresses, innermost first (index 0 is empty).
    pub stacks: Vec<Vec<u64>>,
    /// File mappings, for symbolization.
    pub maps: Vec<Mapping>,
    /// Resident set size samples (time, bytes); native only.
    pub rss: Vec<(u64, u64)>,
    /// Length of the run in [`Self::unit`].
    pub end_time: u64,
    /// Pinned regions as (start, stop) times.
    pub regions: Vec<(u64, u64)>,
    /// The command line.
    pub command: Vec<String>,
    /// Things the user should know about the data.
    pub notes: Vec<String>,
    /// What the profiler summarised as it recorded (native, format 5):
    /// [`HeapReport::build`] takes it instead of a pass over the calls. For
    /// a run without calls ([`HeapRun::has_calls`]) it is all there is: the
    /// one written at exit, or the last checkpoint (see [`HeapRun::notes`]).
    pub summary: Option<Arc<HeapSummary>>,
}

/// Why a native profile without calls may have no summary either.
const NO_SUMMARY_WHY: &str = "the program ended (killed, a crash or _exit) before the profiler's \
     first checkpoint, about a second into the run, or the profiler gave its summary up before \
     that checkpoint (it ran out of memory, or fell too far behind the program's threads), or \
     every summary in the file is damaged.";

/// The pinned regions of a profile as (start, stop) times; a region left
/// open ends with the run.
fn profile_regions(p: &Profile) -> Vec<(u64, u64)> {
    let mut regions = Vec::new();
    let mut open: Option<u64> = None;
    for r in &p.regions {
        match (r.start, open) {
            (true, None) => open = Some(r.time_ns),
            (false, Some(s)) => {
                regions.push((s, r.time_ns));
                open = None;
            }
            _ => {}
        }
    }
    if let Some(s) = open {
        regions.push((s, p.duration_ns));
    }
    regions
}

/// The length of a profile's run in nanoseconds. Without calls and
/// without footer it is where the summary ends: a checkpoint's
/// [`HeapSummary::upto_ns`] (the RSS samples and region marks after it,
/// which the reader would take, are past what the summary holds), or, for
/// the summary at exit, at least its `upto_ns`.
fn profile_end(p: &Profile, s: Option<&HeapSummary>) -> u64 {
    match s {
        Some(s) if !p.has_calls && !p.complete && !s.at_exit => s.upto_ns,
        Some(s) if !p.has_calls && !p.complete => p.duration_ns.max(s.upto_ns),
        _ => p.duration_ns,
    }
}

/// What the user should know about a profile's data: a missing footer,
/// a summary that is a checkpoint rather than the one at exit, calls the
/// summary took out of time order.
fn profile_notes(p: &Profile, s: Option<&HeapSummary>, path: &Path) -> Vec<String> {
    let file = path.display();
    let mut notes = Vec::new();
    match s {
        _ if p.has_calls => notes.extend((!p.complete).then(|| {
            format!(
                "the heap profile {file} has no footer: the program did not end through exit() \
                 (killed, _exit or a crash), so calls of its last milliseconds may be missing."
            )
        })),
        // No calls and no summary: every report is an error saying why.
        None => {}
        Some(s) if !s.at_exit => notes.push(checkpoint_note(p, s, path)),
        Some(_) if !p.complete => notes.push(format!(
            "the heap profile {file} has no footer: the program stopped (killed, _exit or a \
             crash) after the profiler wrote its summary at exit, so the counts are whole{}.",
            ticks_note(p)
        )),
        Some(_) => {}
    }
    if let Some(s) = s.filter(|s| s.late > 0) {
        notes.push(format!(
            "{} calls of the heap profile {file} were taken out of time order, because a \
             thread stayed inside the allocator for over a second: the peak, the live heap over \
             time and the lifetimes may be off by those calls (counts, sites, sizes and leaks \
             are exact).",
            s.late
        ));
    }
    notes
}

/// The note on a profile without calls whose summary is a checkpoint.
fn checkpoint_note(p: &Profile, s: &HeapSummary, path: &Path) -> String {
    let at = run_time_text(s.upto_ns);
    if p.complete {
        return format!(
            "the heap profile {} holds the profiler's last checkpoint, {at} into the run, \
             not its summary at exit: the profiler gave its summary up after that checkpoint (it \
             ran out of memory, or fell too far behind the program's threads), so the calls \
             after it are missing.",
            path.display()
        );
    }
    format!(
        "the heap profile {} has no footer: the program did not end through exit() (killed, \
         _exit or a crash), so its summary is the profiler's last checkpoint, {at} into the \
         run, and the calls after it are missing{}.",
        path.display(),
        ticks_note(p)
    )
}

/// What a profile without footer says of its times: nothing when a CLOCK
/// record gave the tick rate.
fn ticks_note(p: &Profile) -> &'static str {
    match p.ticks_known {
        true => "",
        false => "; its times are clock ticks taken as nanoseconds (the tick rate is unknown)",
    }
}

/// A time into the run for a note: seconds, or milliseconds below one.
fn run_time_text(ns: u64) -> String {
    match ns {
        1_000_000_000.. => format!("{:.3} s", ns as f64 / 1e9),
        _ => format!("{:.3} ms", ns as f64 / 1e6),
    }
}

/// Turns a profile's calls into [`HeapCall`]s, marking those inside a
/// pinned region (`regions` sorted, as [`profile_regions`] gives them).
struct RegionMarker<'a> {
    regions: &'a [(u64, u64)],
    next: usize,
}

impl RegionMarker<'_> {
    fn call(&mut self, e: crate::trace::heap::ProfileEvent) -> HeapCall {
        while self.next < self.regions.len() && self.regions[self.next].1 < e.time_ns {
            self.next += 1;
        }
        let in_region = self
            .regions
            .get(self.next)
            .is_some_and(|r| r.0 <= e.time_ns);
        HeapCall {
            time: e.time_ns,
            tid: e.tid,
            op: e.op,
            addr: e.addr,
            size: e.size,
            old: e.old,
            slack: matches!(e.op, HeapOp::Alloc(_)).then_some(e.slack),
            stack: e.stack,
            dur_ns: e.dur_ns,
            in_region,
        }
    }
}

impl HeapRun {
    /// A native heap profile, opened for streaming: its head is read now
    /// (see [`ProfileReader::open`]), its calls on each pass.
    pub fn open_profile(path: &Path) -> Result<HeapRun, FilterError> {
        let reader = ProfileReader::open(path)?;
        let p = reader.head().clone();
        Ok(Self::profile_run(p, path, Calls::Profile(Arc::new(reader))))
    }

    /// The calls of a native heap profile read whole into memory
    /// ([`crate::trace::heap::read_profile`]).
    pub fn from_profile(mut p: Profile, path: &Path) -> HeapRun {
        let events = std::mem::take(&mut p.events);
        let regions = profile_regions(&p);
        let mut m = RegionMarker {
            regions: &regions,
            next: 0,
        };
        let calls = events.into_iter().map(|e| m.call(e)).collect();
        Self::profile_run(p, path, Calls::Memory(Arc::new(calls)))
    }

    fn profile_run(mut p: Profile, path: &Path, calls: Calls) -> HeapRun {
        let summary = p.summary.take().map(Arc::new);
        let calls = match p.has_calls {
            true => calls,
            false => Calls::Absent(path.to_path_buf()),
        };
        p.duration_ns = profile_end(&p, summary.as_deref());
        let regions = profile_regions(&p);
        let notes = profile_notes(&p, summary.as_deref(), path);
        HeapRun {
            source: format!("heap profile {}", path.display()),
            timed: true,
            dur_sample: Some(p.dur_sample.max(1)),
            unit: TimeUnit::Nanoseconds,
            calls,
            stacks: p.stacks,
            maps: p.maps,
            rss: p.rss,
            end_time: p.duration_ns,
            regions,
            command: p.command,
            notes,
            summary,
        }
    }

    /// The allocator calls of a mapvis Valgrind trace, streamed: a first
    /// pass over the trace (accesses only counted) gathers the stacks,
    /// mappings and regions; every later pass over the calls reads the
    /// trace again. Memory: the distinct stacks, never the calls.
    pub fn from_trace(path: &Path) -> Result<HeapRun, FilterError> {
        let header = TraceReader::open(path)?.header().command.clone();
        let mut index: HashMap<Vec<u64>, u32> = HashMap::new();
        let mut stacks = vec![Vec::new()];
        let mut intern = |stack: Vec<u64>| -> u32 {
            let next = stacks.len() as u32;
            let id = *index.entry(stack.clone()).or_insert(next);
            if id == next {
                stacks.push(stack);
            }
            id
        };
        let pass = trace_pass(path, &mut intern, &mut |_| {})?;
        let mut run = HeapRun {
            source: format!("trace {}", path.display()),
            timed: false,
            dur_sample: None,
            unit: TimeUnit::Operations,
            calls: Calls::Trace(Arc::new(TraceCalls {
                path: path.to_path_buf(),
                index,
            })),
            stacks,
            maps: pass.maps,
            rss: Vec::new(),
            end_time: pass.end_time,
            regions: pass.regions,
            command: header,
            notes: Vec::new(),
            summary: None,
        };
        if let Some(e) = pass.error {
            run.notes
                .push(format!("{e} The allocations before it were used."));
        }
        if pass.truncated {
            run.notes.push(format!(
                "the trace {} ends without its footer: the allocations up to its end were used.",
                path.display()
            ));
        }
        Ok(run)
    }

    /// Whether the run holds its calls: `false` for a native profile
    /// recorded without them (format 7's default), whose summary holds
    /// everything measured; [`HeapRun::for_each_call`] is then an error.
    pub fn has_calls(&self) -> bool {
        !matches!(self.calls, Calls::Absent(_))
    }

    /// The summary of a run without calls; an error naming the file and
    /// saying why when it has none.
    fn stored_summary(&self) -> Result<&Arc<HeapSummary>, FilterError> {
        self.summary
            .as_ref()
            .ok_or_else(|| self.no_summary(NO_SUMMARY_WHY))
    }

    /// [`FilterError::NoHeapSummary`] for this run, saying `why`.
    fn no_summary(&self, why: &str) -> FilterError {
        let path = match &self.calls {
            Calls::Absent(p) => p.clone(),
            _ => PathBuf::from(&self.source),
        };
        FilterError::NoHeapSummary {
            path,
            why: why.to_string(),
        }
    }

    /// Calls `f` with every call in time order: streamed from the profile
    /// (memory bounded by the threads, see [`ProfileReader::for_each`]) or
    /// read from memory. A run without calls ([`HeapRun::has_calls`]) is
    /// an error, [`FilterError::NoHeapCalls`], never an empty pass.
    pub fn for_each_call(&self, mut f: impl FnMut(&HeapCall)) -> Result<(), FilterError> {
        match &self.calls {
            Calls::Absent(path) => Err(FilterError::NoHeapCalls { path: path.clone() }),
            Calls::Memory(v) => {
                v.iter().for_each(f);
                Ok(())
            }
            Calls::Trace(t) => {
                let index = &t.index;
                let mut id = |stack: Vec<u64>| index.get(&stack).copied().unwrap_or(0);
                trace_pass(&t.path, &mut id, &mut f)?;
                Ok(())
            }
            Calls::Profile(r) => {
                let mut m = RegionMarker {
                    regions: &self.regions,
                    next: 0,
                };
                r.for_each(|e| f(&m.call(e)))?;
                Ok(())
            }
        }
    }

    /// Every call, collected into memory (O(calls)): for small runs and
    /// tests; analyses use [`HeapRun::for_each_call`].
    pub fn calls(&self) -> Result<Vec<HeapCall>, FilterError> {
        let mut v = Vec::new();
        self.for_each_call(|c| v.push(c.clone()))?;
        Ok(v)
    }
}

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

/// Everything computed from a [`HeapRun`].
#[derive(Clone, Debug, Default)]
pub struct HeapReport {
    /// Per site, indexed by stack id.
    pub sites: Vec<SiteStats>,
    /// Allocations (realloc included).
    pub allocs: u64,
    /// Frees (a realloc that moved or freed a block counts one).
    pub frees: u64,
    /// Bytes requested.
    pub bytes: u64,
    /// Peak of live bytes, and when.
    pub peak_live: (u64, u64),
    /// Bytes and blocks never freed.
    pub leaked: (u64, u64),
    /// Temporary allocations.
    pub temporary: u64,
    /// Frees of addresses that were not live blocks.
    pub unknown_frees: u64,
    /// The size-class histogram.
    pub classes: Vec<ClassStats>,
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
    /// The highest thread number that made a call.
    pub threads: u32,
    /// Allocations made while a pinned region was open.
    pub region_allocs: u64,
}

/// A fast hash map for integer keys (addresses, thread numbers).
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

struct LiveBlock {
    stack: u32,
    size: u64,
}

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
    counts: Vec<u64>,
    n: u64,
    max: u32,
}

impl DurHist {
    fn new() -> DurHist {
        DurHist {
            counts: vec![0; DUR_EXACT + (32 - 10) * DUR_SUB as usize],
            n: 0,
            max: 0,
        }
    }

    fn bucket(d: u32) -> usize {
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

    fn add(&mut self, d: u32) {
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
    /// `[class][op]`, class 18 is `?`; op 0 alloc, 1 free.
    classes: Vec<[Option<DurHist>; 2]>,
    /// `[tid][op]`.
    threads: Vec<[Option<DurHist>; 2]>,
    /// Calls of each group, indexed alike.
    class_calls: Vec<[u64; 2]>,
    thread_calls: Vec<[u64; 2]>,
    /// The histograms count the profile's duration units, converted to
    /// nanoseconds when shown (from a summary); `None`: nanoseconds.
    units: Option<Arc<HeapSummary>>,
}

impl Durations {
    fn new() -> Durations {
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
    fn ns(&self, v: u32) -> u32 {
        self.units.as_ref().map_or(v, |s| s.dur_ns(v))
    }

    /// Counts one call of size class `class`, thread `tid`, `op` (0 alloc,
    /// 1 free), taking its duration `d` when it was timed.
    fn add(&mut self, class: usize, tid: u32, op: usize, d: Option<u32>) {
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
    fn rows(&self) -> Vec<TimeRow> {
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
            let label = if k == 18 {
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
    live: FastMap<u64, LiveBlock>,
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
    fn slot(&mut self, tid: u32) -> &mut u64 {
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

impl HeapReport {
    /// A report with a row per stack and per size class, and nothing
    /// counted yet.
    fn empty(run: &HeapRun) -> HeapReport {
        HeapReport {
            sites: (0..run.stacks.len() as u32)
                .map(|stack| SiteStats {
                    stack,
                    ..Default::default()
                })
                .collect(),
            classes: vec![ClassStats::default(); 18],
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
        let mut r = HeapReport {
            allocs: s.allocs,
            frees: s.frees,
            bytes: s.bytes,
            peak_live: s.peak_live,
            leaked: s.leaked,
            temporary: s.temporary,
            unknown_frees: s.unknown_frees,
            threads: s.threads,
            region_allocs: s.region_allocs,
            ..Self::empty(run)
        };
        for x in &s.sites {
            let site = r.sites.get_mut(x.stack as usize)?;
            if site.allocs != 0 {
                return None; // two entries for one site: peaks would not add up
            }
            *site = x.clone();
        }
        for (k, c) in s.classes.iter().enumerate() {
            *r.classes.get_mut(k)? = c.clone();
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
        run.for_each_call(|c| r.take(c, &mut pass, &mut durs))?;
        for s in &mut r.sites {
            s.leaked_blocks = 0;
        }
        for b in pass.live.values() {
            r.sites[b.stack as usize].leaked_blocks += 1;
        }
        r.leaked = (pass.total_live, pass.live.len() as u64);
        r.peak_rss = run.rss.iter().map(|s| s.1).max();
        r.times = durs.rows();
        r.timed_calls = if run.timed { durs.totals() } else { (0, 0) };
        r.dur_sample = run.dur_sample.unwrap_or(0);
        Ok(r)
    }

    /// Takes in one call.
    fn take(&mut self, c: &HeapCall, pass: &mut Pass, durs: &mut Durations) {
        self.threads = self.threads.max(c.tid);
        let freed = match c.op {
            HeapOp::Free(_) => Some(c.addr),
            HeapOp::Alloc(AllocKind::Realloc) => c.old.filter(|&o| o != 0),
            HeapOp::Alloc(_) => None,
        };
        let mut freed_class = 18;
        if let Some(a) = freed {
            match pass.live.remove(&a) {
                Some(b) => {
                    self.frees += 1;
                    pass.total_live -= b.size;
                    let s = &mut self.sites[b.stack as usize];
                    s.live -= b.size;
                    let last = pass.last_alloc.slot(c.tid);
                    if *last == a {
                        s.temporary += 1;
                        self.temporary += 1;
                        *last = 0;
                    }
                    let k = size_class(b.size);
                    self.classes[k].frees += 1;
                    freed_class = k;
                }
                None => self.unknown_frees += 1,
            }
        }
        if matches!(c.op, HeapOp::Free(_)) {
            durs.add(freed_class, c.tid, 1, c.dur_ns);
        }
        if matches!(c.op, HeapOp::Free(_)) {
            return;
        }
        if c.addr == 0 {
            // A realloc that only freed: timed as a free.
            durs.add(freed_class, c.tid, 1, c.dur_ns);
            return;
        }
        self.allocs += 1;
        self.bytes += c.size;
        self.region_allocs += c.in_region as u64;
        pass.total_live += c.size;
        if pass.total_live > self.peak_live.0 {
            self.peak_live = (pass.total_live, c.time);
        }
        let s = &mut self.sites[c.stack as usize];
        s.allocs += 1;
        s.bytes += c.size;
        s.live += c.size;
        s.peak_live = s.peak_live.max(s.live);
        s.in_region += c.in_region as u64;
        let k = size_class(c.size);
        self.classes[k].allocs += 1;
        self.classes[k].bytes += c.size;
        self.classes[k].usable += c.size + c.slack.unwrap_or(0);
        durs.add(k, c.tid, 0, c.dur_ns);
        *pass.last_alloc.slot(c.tid) = c.addr;
        let block = LiveBlock {
            stack: c.stack,
            size: c.size,
        };
        if let Some(old) = pass.live.insert(c.addr, block) {
            // The allocator returned a live address: a free was missed.
            pass.total_live -= old.size;
            self.sites[old.stack as usize].live -= old.size;
        }
    }

    /// Sites that allocated, ranked by `key` (largest first, ties by stack
    /// id), at most `n`.
    pub fn top_sites<F: Fn(&SiteStats) -> u64>(&self, n: usize, key: F) -> Vec<&SiteStats> {
        let mut v: Vec<&SiteStats> = self.sites.iter().filter(|s| key(s) > 0).collect();
        v.sort_by(|a, b| key(b).cmp(&key(a)).then(a.stack.cmp(&b.stack)));
        v.truncate(n);
        v
    }

    /// Requested and usable bytes over all allocations (usable only when
    /// measured).
    pub fn fragmentation(&self) -> (u64, u64) {
        let req = self.classes.iter().map(|c| c.bytes).sum();
        let usable = self.classes.iter().map(|c| c.usable).sum();
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
    total: u64,
    per: &'a [u64],
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
    let peak = (s.peak_live.1, s.peak_live.0, at_peak.as_slice());
    end_series(&mut out, run.end_time, &end, &mut high, peak);
    out
}

/// One asked-for site's stored series, read along the buckets (a site
/// may have two: stacks the profiler kept apart that the reader found
/// equal; their values add up).
struct SiteCursor<'a> {
    /// The site's place among those asked for.
    slot: usize,
    /// Its points not yet passed: (bucket, live bytes).
    points: &'a [(u64, u64)],
    /// Its live bytes after the points passed (0 before the first).
    live: u64,
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
    fn empty() -> LifetimeBins {
        LifetimeBins {
            freed: 0,
            all: vec![0; 100],
            short: vec![0; 100],
            uncertain: 0,
        }
    }

    /// Counts `n` blocks of macro lifetime `s` in both histograms.
    fn add(&mut self, s: f64, n: u64) {
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

/// The executable a run came from, for symbolization: the first mapping
/// whose file name matches the command's program.
pub fn run_exe(run: &HeapRun) -> Option<PathBuf> {
    let prog = run.command.first()?;
    Some(PathBuf::from(prog))
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
    for (k, c) in r.classes.iter().enumerate().filter(|(_, c)| c.allocs > 0) {
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
        self.classes
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
            .map(|(k, bt)| (self.sites[*k as usize].clone(), bt.clone()))
            .collect();
        write_sites_csv(path, &rows)
    }

    /// See [`write_stats_csv`].
    pub fn write_stats_csv(&self, dir: &Path) -> Result<Vec<PathBuf>, FilterError> {
        write_stats_csv(dir, self)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// alloc_sites.csv through the one CSV writer: numbers as written, a
    /// backtrace quoted only when it holds a comma (a C++ template).
    #[test]
    fn sites_csv_rows_are_written_whole_and_quoted_when_needed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("alloc_sites.csv");
        let site = |stack, allocs| SiteStats {
            stack,
            allocs,
            bytes: 4096,
            peak_live: 2048,
            live: 16,
            leaked_blocks: 1,
            temporary: 3,
            in_region: 2,
        };
        let rows = [
            (site(0, 7), "make <- main".to_string()),
            (site(5, 1), "std::map<int, int>::insert <- main".to_string()),
        ];
        write_sites_csv(&path, &rows).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "site,allocations,bytes,peak_live_bytes,leaked_bytes,leaked_blocks,temporary,in_region,backtrace\n\
             0,7,4096,2048,16,1,3,2,make <- main\n\
             5,1,4096,2048,16,1,3,2,\"std::map<int, int>::insert <- main\"\n"
        );
    }

    fn call(time: u64, op: HeapOp, addr: u64, size: u64) -> HeapCall {
        HeapCall {
            time,
            tid: 1,
            op,
            addr,
            size,
            old: None,
            slack: None,
            stack: 1,
            dur_ns: None,
            in_region: false,
        }
    }

    /// One block of 64 bytes from stack 1, allocated at operation 10 and
    /// freed at 980 of a run of 100 000 operations.
    pub(crate) fn late_free_run() -> HeapRun {
        HeapRun {
            source: "test".into(),
            timed: false,
            dur_sample: None,
            unit: TimeUnit::Operations,
            calls: Calls::Memory(Arc::new(vec![
                call(10, HeapOp::Alloc(AllocKind::Malloc), 0x1000, 64),
                call(980, HeapOp::Free(FreeKind::Free), 0x1000, 0),
            ])),
            stacks: vec![vec![], vec![0x401000]],
            maps: Vec::new(),
            rss: Vec::new(),
            end_time: 100_000,
            regions: Vec::new(),
            command: Vec::new(),
            notes: Vec::new(),
            summary: None,
        }
    }

    /// A block freed after the last sample time is drawn freed from the
    /// free on, not live until the end of the run.
    #[test]
    fn a_block_freed_late_is_not_live_until_exit() {
        let (ts, total, per, high) = live_series(&late_free_run(), &[1], 20).unwrap();
        assert_eq!(high.len(), ts.len());
        assert_eq!(ts.len(), total.len());
        assert!(ts.windows(2).all(|w| w[0] <= w[1]), "{ts:?}");
        // Drawn as steps, each sample holds until the next one.
        let at = |t: u64| total[ts.iter().rposition(|&s| s <= t).unwrap()];
        assert_eq!(at(500), 64, "{ts:?} {total:?}");
        assert_eq!(at(980), 0, "{ts:?} {total:?}");
        assert_eq!(at(50_000), 0, "{ts:?} {total:?}");
        assert_eq!(per[0], total);
        assert_eq!(*ts.last().unwrap(), 100_000);
    }
}
