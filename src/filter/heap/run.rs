//! A run's allocator calls, from either source: a native heap profile
//! (the preload library's, `trace/heap/`) or a mapvis Valgrind trace,
//! each streamed from its file on every pass ([`HeapRun`]), with the
//! notes that say how whole and how timed the run is.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::trace::heap::HeapSummary;
use crate::trace::heap::{HeapOp, Profile, ProfileReader};
use crate::trace::record::{AllocKind, Event, Mapping};
use crate::trace::record::{Batch, EndState, TraceReader};

use crate::filter::error::FilterError;

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
pub(super) enum Calls {
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
pub(super) struct TraceCalls {
    pub(super) path: PathBuf,
    pub(super) index: HashMap<Vec<u64>, u32>,
}

/// What a pass over a Valgrind trace gathers besides the calls.
struct TracePass {
    pub(super) maps: Vec<Mapping>,
    pub(super) regions: Vec<(u64, u64)>,
    pub(super) end_time: u64,
    /// A read error that ended the pass early.
    pub(super) error: Option<String>,
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
    pub(super) calls: Calls,
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
    /// Why the run's calls are not all there (a profile or trace without
    /// its end), or `None` when they are: a partial run is marked PARTIAL
    /// wherever it is shown, as a partial analysis is.
    pub partial: Option<String>,
    /// What the profiler summarised as it recorded (native, format 5):
    /// `HeapReport::build` takes it instead of a pass over the calls. For
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
        // Calls without the footer: the run is PARTIAL (see
        // `profile_partial`), which every command says first.
        _ if p.has_calls => {}
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

/// Why a profile's calls or counts are not all there: calls without the
/// footer that ends a profile, or a summary that is a checkpoint rather
/// than the one at exit. A summary at exit without a footer is whole.
fn profile_partial(p: &Profile, s: Option<&HeapSummary>) -> Option<String> {
    match s {
        _ if p.has_calls && !p.complete => Some(
            "the profile has no footer: the program did not end through exit() (killed, _exit or a crash), or the file was cut, so the calls of its end are missing"
                .to_string(),
        ),
        Some(s) if !s.at_exit => Some(format!(
            "its summary is the checkpoint at {}: the program ended before exit()",
            run_time_text(s.upto_ns)
        )),
        _ => None,
    }
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
    pub(super) regions: &'a [(u64, u64)],
    pub(super) next: usize,
}

impl RegionMarker<'_> {
    pub(super) fn call(&mut self, e: crate::trace::heap::ProfileEvent) -> HeapCall {
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
        let partial = profile_partial(&p, summary.as_deref());
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
            partial,
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
            partial: None,
            summary: None,
        };
        if let Some(e) = pass.error {
            run.notes
                .push(format!("{e} The allocations before it were used."));
            run.partial = Some(format!("the trace is damaged: {e}"));
        }
        if pass.truncated {
            run.notes.push(format!(
                "the trace {} ends without its footer: the allocations up to its end were used.",
                path.display()
            ));
            run.partial = Some("the trace ends without its footer".into());
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
    pub(super) fn stored_summary(&self) -> Result<&Arc<HeapSummary>, FilterError> {
        self.summary
            .as_ref()
            .ok_or_else(|| self.no_summary(NO_SUMMARY_WHY))
    }

    /// [`FilterError::NoHeapSummary`] for this run, saying `why`.
    pub(super) fn no_summary(&self, why: &str) -> FilterError {
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

/// A fast hash map for integer keys (addresses, thread numbers).
pub(super) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

pub(super) struct LiveBlock {
    pub(super) stack: u32,
    pub(super) size: u64,
}

/// The executable a run came from, for symbolization: the first mapping
/// whose file name matches the command's program.
pub fn run_exe(run: &HeapRun) -> Option<PathBuf> {
    let prog = run.command.first()?;
    Some(PathBuf::from(prog))
}
