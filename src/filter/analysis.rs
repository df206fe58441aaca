//! From a trace to named accesses, the lookup table and the access list.
//!
//! One driver ([`analyse_into`]) serves both inputs. A [`Source`] names the
//! accesses of its input in time order, a batch at a time:
//! [`super::binary`] for mapvis' binary traces (DWARF and the allocation
//! statements), [`super::import`] for Gleipnir text traces (names from the
//! trace). Both keep their variables and heap blocks in a
//! [`super::registry::Registry`]. The driver hands each batch of
//! [`NamedAccess`] records to the consumers, on a thread of their own
//! ([`super::consume`]):
//!
//! - the lookup table of unique locations ([`super::lookup`]), so the
//!   statistics never rescan the accesses;
//! - the access-pattern states per (variable, line)
//!   ([`super::locality::pattern`]), so `memory_stats` labels patterns
//!   without rescanning them either;
//! - the access list ([`super::store`]): a Parquet dataset written as the
//!   analysis streams (on a third thread), kept in memory within a budget.
//!
//! Memory is bounded by the program's footprint (variables, unique
//! locations, instruction sites), never by the trace's length: about 60
//! bytes per unique location, plus the access list's memory budget and a
//! few batches in flight.
use polars::prelude::PlHashMap as HashMap;
use std::path::Path;

use polars::prelude::*;

use crate::trace::naming::{NameQuality, Namer, Scope};

use super::access::{NamedAccess, VarId};
use super::consume::ConsumerThread;
use super::locality::pattern::{PatternSink, PatternStates};
use super::lookup::{LookupTable, VarUse};
use super::registry::Registry;
use super::schema::{line as ln, variable as va};
use super::store::{AccessList, AccessWriter};
use super::FilterError;

/// One named block: a heap block instance, a stack variable in one frame,
/// or a global.
#[derive(Clone, Debug)]
pub struct Variable {
    /// Unique display name (`arr`, `rows[i]#2`, `u`).
    pub name: String,
    /// Name without instance suffix.
    pub base_name: String,
    /// Heap, stack or global.
    pub scope: Scope,
    /// Runtime start address.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
    /// Element size, 0 when unknown.
    pub elem_size: u32,
    /// Dimensions, outermost first, empty when unknown.
    pub dims: Vec<u64>,
    /// Allocation site for heap blocks (`file.c:LINE`).
    pub site: String,
    /// Element type of a heap block as the source writes it (`struct
    /// node`), empty when unknown.
    pub elem_type: String,
    /// Time (accesses before) of allocation, for heap blocks.
    pub alloc_time: Option<u64>,
    /// Time of free, for heap blocks that were freed.
    pub free_time: Option<u64>,
    /// Not user data (client-request block, unnamed frame slot).
    pub internal: bool,
    /// Frame slots of one function (`<main frame>`: return address, saved
    /// registers, spills), not a variable: left out of the default
    /// statistics, with a note.
    pub frame_slot: bool,
    /// Time of the first and last access, if it was accessed.
    pub accessed: Option<(u64, u64)>,
    /// Lowest and highest byte address its accesses touched, if it was
    /// accessed (`None` too in analyses saved before this was kept). With
    /// the lookup table it tells the figures the spans of a variable's
    /// accesses without a pass over them.
    pub bytes: Option<(u64, u64)>,
    /// Threads that accessed it, ascending.
    pub threads: Vec<u32>,
    /// The function a stack variable belongs to, empty otherwise (and in
    /// saved analyses, whose `base_name` already holds the qualification
    /// it led to).
    pub function: String,
}

impl Variable {
    /// The dimensions as the tables write them: `12x12`, empty when
    /// unknown.
    pub fn dims_text(&self) -> String {
        self.dims
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("x")
    }

    /// A variable with only its name and scope known.
    pub(crate) fn new(name: String, scope: Scope) -> Variable {
        Variable {
            base_name: name.clone(),
            name,
            scope,
            base: 0,
            size: 0,
            elem_size: 0,
            dims: vec![],
            site: String::new(),
            elem_type: String::new(),
            alloc_time: None,
            free_time: None,
            internal: false,
            frame_slot: false,
            function: String::new(),
            accessed: None,
            bytes: None,
            threads: vec![],
        }
    }
}

/// What the trace said about itself.
#[derive(Clone, Debug, Default)]
pub struct TraceSummary {
    /// The traced command line.
    pub command: Vec<String>,
    /// Accesses read.
    pub accesses: u64,
    /// Regions seen.
    pub regions: u32,
    /// Heap allocations seen (whole run).
    pub allocations: u64,
    /// Frees seen (whole run).
    pub frees: u64,
    /// Threads that made accesses.
    pub threads: Vec<u32>,
    /// Whether the footer was read.
    pub complete: bool,
    /// Tool warnings and reader notes.
    pub notes: Vec<String>,
}

/// A heap block as the input reports it, before it has a variable row.
#[derive(Clone, Debug)]
pub(crate) struct NewBlock {
    /// Start address.
    pub(crate) addr: u64,
    /// Size in bytes.
    pub(crate) size: u64,
    /// Allocator name.
    pub(crate) kind: &'static str,
    /// Allocating thread.
    pub(crate) tid: u32,
    /// Time of allocation.
    pub(crate) alloc_time: u64,
}

/// A heap allocation, for the allocation-info file.
#[derive(Clone, Debug)]
pub struct Allocation {
    /// Start address.
    pub addr: u64,
    /// Size in bytes.
    pub size: u64,
    /// Variable row of the block.
    pub var: VarId,
    /// Allocator name.
    pub kind: &'static str,
    /// Allocating thread.
    pub tid: u32,
    /// Time of allocation.
    pub alloc_time: u64,
    /// Time of free, if freed.
    pub free_time: Option<u64>,
}

/// The complete analysis of one trace. Cloning it is cheap for the tables
/// (polars shares their buffers) and copies only the small vectors.
#[derive(Clone)]
pub struct Analysis {
    /// The access list, in time order: in memory, or a Parquet dataset
    /// read back in batches; see [`super::store`].
    pub accesses: AccessList,
    /// The lookup table: one row per unique location (address and
    /// variable), with its counts; see [`super::schema`].
    pub locations: DataFrame,
    /// One row per variable; see [`super::schema`].
    pub variables: DataFrame,
    /// One row per source line; see [`super::schema`].
    pub lines: DataFrame,
    /// The variables, in row order.
    pub vars: Vec<Variable>,
    /// Every heap allocation of the run.
    pub allocations: Vec<Allocation>,
    /// What the trace said about itself.
    pub summary: TraceSummary,
    /// The access-pattern states per (variable, line), gathered while the
    /// analysis streamed; `None` when the input learns where its variables
    /// lie only at the end (Gleipnir text traces), and `memory_stats` makes
    /// its own pass over the access list.
    pub patterns: Option<PatternStates>,
}

/// How a source's [`Source::fill`] ended.
pub(crate) enum Fill {
    /// The batch is full; more follows.
    Full,
    /// A new traced region starts after the accesses in the batch.
    Region(u32),
    /// The input is over (or unreadable past this point, with a note).
    End,
}

/// What a source hands over at the end: everything but the accesses.
pub(crate) struct Named {
    /// The variables and heap blocks.
    pub(crate) registry: Registry,
    /// Source lines (`file.c:LINE`), by line row.
    pub(crate) lines: Vec<String>,
    /// What the input said about itself (accesses and threads are the
    /// driver's).
    pub(crate) summary: TraceSummary,
}

/// Where a variable lies, as its input knows it when the variable is
/// first accessed: what the consumers that index by address need.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    /// Start address.
    pub(crate) base: u64,
    /// Size in bytes; 0 when not known yet (a Gleipnir stack variable's
    /// extent grows as the trace is read).
    pub(crate) size: u64,
    /// Element size in bytes; 0 when unknown.
    pub(crate) elem: u64,
}

/// An input the driver names accesses from.
pub(crate) trait Source {
    /// Appends named accesses (their `time` unset) to `out` until it holds
    /// `room`, a region starts, or the input ends. Accesses already in
    /// `out` when it is called may be taken back (GL_STOP's own stores).
    fn fill(&mut self, out: &mut Vec<NamedAccess>, room: usize) -> Result<Fill, FilterError>;
    /// Where variable row `var` lies. Fixed once the row exists (and
    /// final when [`Self::spans_final`] says so).
    fn span(&self, var: VarId) -> Span;
    /// The member path of the location `addr` of variable row `var`
    /// (`h.counts`), when the variable is a structure or an array of them.
    /// Asked once per unique location when the tables are built, never
    /// per access.
    fn element(&mut self, addr: u64, var: VarId) -> Option<String>;
    /// Number of variable rows so far.
    fn vars(&self) -> usize;
    /// Whether [`Self::span`] is final when a variable is first accessed
    /// (the base and element size the variable table will have), so that
    /// consumers may index by it while the analysis streams.
    fn spans_final(&self) -> bool;
    /// Ends the input.
    fn finish(self: Box<Self>) -> Named;
}

/// Accesses per batch from the source to the consumers: large enough to
/// amortise the calls, small enough (320 KB) to stay in the L2 cache while
/// each consumer makes its pass over it.
const BATCH: usize = 1 << 13;

/// A full batch's last accesses wait for the next batch: GL_STOP's own
/// stores (six) are recognised only when the region ends, after them.
const HOLD_BACK: usize = 6;

/// How often (in accesses) the progress callback is called: about a
/// second's work apart at worst, and a few per second at best.
pub const PROGRESS_EVERY: u64 = 1 << 20;

/// Where and how the access list is kept.
#[derive(Clone, Debug)]
pub struct Keep<'p> {
    /// The dataset folder (see [`super::store`]); `None` keeps the whole
    /// access list in memory (tests, small traces).
    pub dataset: Option<&'p Path>,
    /// Bytes of the access list kept in memory besides the dataset.
    pub memory_budget: u64,
    /// How the dataset is cut into files and row groups.
    pub layout: super::store::Layout,
}

impl Keep<'_> {
    /// Everything in memory, no files.
    pub const MEMORY: Keep<'static> = Keep {
        dataset: None,
        memory_budget: u64::MAX,
        layout: super::store::Layout::DEFAULT,
    };
}

/// Reads the trace at `path` (a mapvis binary trace, or a Gleipnir text
/// trace) and names every access with `namer`, keeping the whole access
/// list in memory.
///
/// A truncated trace is analysed up to its cut, with a note saying so; a
/// corrupt one is analysed up to the bad record, with a note that says
/// where. Cost: one pass over the trace.
pub fn analyse(path: &Path, namer: &mut dyn Namer) -> Result<Analysis, FilterError> {
    analyse_into(path, namer, &mut |_| true, &Keep::MEMORY)
}

/// [`analyse`] with a progress callback, called every [`PROGRESS_EVERY`]
/// accesses with the number analysed so far, and the access list kept as
/// `keep` says. When the callback returns false the analysis stops there and
/// covers the accesses read up to that point (a note says so): nothing
/// already computed is lost.
pub fn analyse_into(
    path: &Path,
    namer: &mut dyn Namer,
    progress: &mut dyn FnMut(u64) -> bool,
    keep: &Keep,
) -> Result<Analysis, FilterError> {
    if crate::trace::gleipnir::looks_like_gleipnir(path) {
        analyse_text(path, namer, progress, keep)
    } else {
        let mut src = Box::new(super::binary::BinarySource::open(path, namer)?);
        let driven = drive(src.as_mut(), progress, keep)?;
        finish(src, driven)
    }
}

/// Analyses a Gleipnir text trace, whatever its first lines look like,
/// keeping the access list in memory (see [`super::import`]).
pub fn analyse_gleipnir(path: &Path, namer: &mut dyn Namer) -> Result<Analysis, FilterError> {
    analyse_text(path, namer, &mut |_| true, &Keep::MEMORY)
}

/// [`analyse_into`] for a Gleipnir text trace.
fn analyse_text(
    path: &Path,
    namer: &mut dyn Namer,
    progress: &mut dyn FnMut(u64) -> bool,
    keep: &Keep,
) -> Result<Analysis, FilterError> {
    let mut src = Box::new(super::import::GleipnirSource::open(path, namer)?);
    let driven = drive(src.as_mut(), progress, keep)?;
    src.check_nonempty(path)?;
    finish(src, driven)
}

/// What the driver built from the named accesses.
struct Driven {
    lookup: LookupTable,
    patterns: Option<PatternSink>,
    list: AccessList,
    stopped: bool,
}

/// The one driver: pulls batches of named accesses from `src`, stamps
/// their times and hands them to the consumers on their own thread (see
/// [`super::consume`]), so naming and counting run on both cores.
fn drive(
    src: &mut dyn Source,
    progress: &mut dyn FnMut(u64) -> bool,
    keep: &Keep,
) -> Result<Driven, FilterError> {
    let writer = AccessWriter::new(keep.dataset, keep.memory_budget, keep.layout)?;
    let mut to = ConsumerThread::start(src.spans_final(), writer)?;
    let mut batch: Vec<NamedAccess> = Vec::with_capacity(BATCH);
    let (mut time, mut region, mut stopped) = (0u64, 1u32, false);
    loop {
        let fill = src.fill(&mut batch, BATCH)?;
        // A full batch keeps its tail for the next one, where a region's
        // end may still take it back.
        let ready = match fill {
            Fill::Full => batch.len().saturating_sub(HOLD_BACK),
            _ => batch.len(),
        };
        let before = time;
        batch = hand_over(&mut to, src, batch, ready, &mut time, region)?;
        match fill {
            Fill::End => break,
            Fill::Region(r) => region = r,
            Fill::Full => {}
        }
        if time / PROGRESS_EVERY != before / PROGRESS_EVERY && !progress(time) {
            stopped = true;
            break;
        }
    }
    // Stopped early: what is held back is analysed too.
    let n = batch.len();
    hand_over(&mut to, src, batch, n, &mut time, region)?;
    let c = to.finish()?;
    Ok(Driven {
        lookup: c.lookup,
        patterns: c.patterns,
        list: c.list,
        stopped,
    })
}

/// Stamps the times of the first `ready` accesses of `batch` and sends
/// them to the consumers; returns the batch to fill next, holding the rest.
fn hand_over(
    to: &mut ConsumerThread,
    src: &dyn Source,
    mut batch: Vec<NamedAccess>,
    ready: usize,
    time: &mut u64,
    region: u32,
) -> Result<Vec<NamedAccess>, FilterError> {
    if ready == 0 {
        return Ok(batch);
    }
    for (k, a) in batch[..ready].iter_mut().enumerate() {
        a.time = *time + k as u64;
    }
    *time += ready as u64;
    let tail = batch.split_off(ready);
    let mut next = to.send(batch, region, src.vars(), &|v| src.span(v))?;
    next.extend(tail);
    Ok(next)
}

/// Turns what the source and the driver built into the tables.
fn finish(mut src: Box<dyn Source + '_>, d: Driven) -> Result<Analysis, FilterError> {
    let threads = d.lookup.threads().to_vec();
    let (locations, mut uses) = d.lookup.finish(&mut |addr, var| src.element(addr, var))?;
    let Named {
        registry,
        mut lines,
        mut summary,
    } = src.finish();
    let (mut vars, allocations) = registry.into_parts();
    summary.threads = threads;
    uses.resize(vars.len().max(uses.len()), VarUse::default());
    for (var, u) in vars.iter_mut().zip(uses) {
        let VarUse {
            accessed,
            bytes,
            threads,
        } = u;
        var.bytes = accessed.map(|_| bytes);
        var.accessed = accessed;
        var.threads = threads;
    }
    summary.accesses = d.list.len();
    if d.stopped {
        summary.notes.push(stopped_note(d.list.len()));
    }
    number_instances(&mut vars);
    if lines.is_empty() {
        lines.push("?".into());
    }
    let variables = variable_table(&vars)?;
    let lines = DataFrame::new(vec![
        Column::new(ln::LINE.into(), (0..lines.len() as u32).collect::<Vec<_>>()),
        Column::new(ln::SOURCE.into(), lines),
    ])?;
    Ok(Analysis {
        accesses: d.list,
        locations,
        variables,
        lines,
        vars,
        allocations,
        summary,
        patterns: d.patterns.map(PatternSink::into_states),
    })
}

impl Analysis {
    /// Accesses per variable row, from the lookup table. Cost: one pass
    /// over the unique locations.
    pub fn accesses_per_var(&self) -> PolarsResult<Vec<u64>> {
        use super::schema::location as lc;
        let mut n = vec![0u64; self.vars.len()];
        let var = self.locations.column(lc::VAR)?.u32()?;
        let acc = self.locations.column(lc::ACCESSES)?.u64()?;
        for (v, k) in var.into_no_null_iter().zip(acc.into_no_null_iter()) {
            if let Some(slot) = n.get_mut(v as usize) {
                *slot += k;
            }
        }
        Ok(n)
    }
}

/// A column that owns `v`'s buffer (`Column::new` would copy it).
pub(crate) fn owned<T: PolarsNumericType>(name: &str, v: Vec<T::Native>) -> Column {
    ChunkedArray::<T>::from_vec(name.into(), v)
        .into_series()
        .into()
}

/// Gives blocks that share a name instance numbers: `rows[i]#1`, `#2`, ...
/// in order of first appearance. A name used once stays plain. Stack
/// variables of one name in several functions are first told apart by
/// function (`main::C`, `kernel_gemm::C`): that is their base name, so
/// instances number within a function (`rec::mine#2` in a recursion).
fn number_instances(vars: &mut [Variable]) {
    qualify_by_function(vars);
    let mut count: HashMap<(Scope, String), u32> = HashMap::new();
    for v in vars.iter() {
        if !v.base_name.is_empty() {
            *count.entry((v.scope, v.base_name.clone())).or_default() += 1;
        }
    }
    let mut seen: HashMap<(Scope, String), u32> = HashMap::new();
    for v in vars.iter_mut() {
        if v.base_name.is_empty() {
            continue;
        }
        let key = (v.scope, v.base_name.clone());
        if count[&key] > 1 {
            let k = seen.entry(key).or_default();
            *k += 1;
            v.name = format!("{}#{}", v.base_name, k);
        }
    }
    // Heap and stack names may still collide (the heap block `arr` and the
    // stack pointer variable `arr` that holds its address): the heap block
    // keeps the plain name, as it is the array users mean; then globals;
    // later claimants are qualified by scope (`arr@S`).
    let mut taken: HashMap<String, ()> = HashMap::new();
    for scope in [Scope::Heap, Scope::Global, Scope::Stack] {
        for v in vars.iter_mut().filter(|v| v.scope == scope) {
            if taken.contains_key(&v.name) {
                v.name = format!("{}@{}", v.name, v.scope.code());
            }
            taken.insert(v.name.clone(), ());
        }
    }
}

/// Qualifies the base names of stack variables whose name is declared in
/// more than one function with that function (`kernel_gemm::C`).
fn qualify_by_function(vars: &mut [Variable]) {
    let mut functions: HashMap<&str, Vec<&str>> = HashMap::new();
    for v in vars.iter() {
        if v.scope == Scope::Stack && !v.function.is_empty() && !v.frame_slot {
            let f = functions.entry(v.base_name.as_str()).or_default();
            if !f.contains(&v.function.as_str()) {
                f.push(v.function.as_str());
            }
        }
    }
    let shared: Vec<String> = functions
        .into_iter()
        .filter(|(_, f)| f.len() > 1)
        .map(|(n, _)| n.to_string())
        .collect();
    for v in vars.iter_mut() {
        if v.scope == Scope::Stack && !v.function.is_empty() && shared.contains(&v.base_name) {
            v.base_name = format!("{}::{}", v.function, v.base_name);
            v.name = v.base_name.clone();
        }
    }
}

/// The variable table of [`super::schema`] for these variables.
pub fn variable_table(vars: &[Variable]) -> PolarsResult<DataFrame> {
    DataFrame::new(vec![
        Column::new(va::VAR.into(), (0..vars.len() as u32).collect::<Vec<_>>()),
        Column::new(
            va::NAME.into(),
            vars.iter().map(|v| v.name.clone()).collect::<Vec<_>>(),
        ),
        Column::new(
            va::SCOPE.into(),
            vars.iter()
                .map(|v| v.scope.code().to_string())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            va::BASE.into(),
            vars.iter().map(|v| v.base).collect::<Vec<_>>(),
        ),
        Column::new(
            va::SIZE.into(),
            vars.iter().map(|v| v.size).collect::<Vec<_>>(),
        ),
        Column::new(
            va::ELEM_SIZE.into(),
            vars.iter().map(|v| v.elem_size).collect::<Vec<_>>(),
        ),
        Column::new(
            va::DIMS.into(),
            vars.iter().map(Variable::dims_text).collect::<Vec<_>>(),
        ),
    ])
}

/// Whether a name came from a fallback, for messages.
pub fn is_fallback(q: &NameQuality) -> bool {
    matches!(q, NameQuality::Fallback { .. })
}

fn stopped_note(n: u64) -> String {
    format!(
        "the analysis was interrupted after {n} accesses: it covers the accesses up to that point. \
         Run memory_trace_analysis again for all of them."
    )
}
