//! The one driver from an input to named accesses, the lookup table and
//! the access list.
//!
//! A [`Source`] names the accesses of its input in time order, a batch at
//! a time. The driver stamps their times and hands each batch to the
//! consumers, on a thread of their own (the consume module): the lookup
//! table of unique locations, the access list (a Parquet dataset written
//! as the analysis streams, on a third thread, kept in memory within a
//! budget), and any further consumer the caller hands in as a
//! [`SpanSink`] (the pattern states, so `memory_stats` labels patterns
//! without rescanning the accesses), and after them a follower
//! [`AccessSink`] on a thread of its own (the cache model, so
//! `cache_stats` reads its counts). The driver knows no analysis of its
//! own: what the extra consumer and the follower are, is the caller's
//! business.
//!
//! Memory is bounded by the program's footprint (variables, unique
//! locations, instruction sites), never by the trace's length: about 60
//! bytes per unique location, plus the access list's memory budget and a
//! few batches in flight.
use polars::prelude::PlHashMap as HashMap;
use std::path::Path;

use polars::prelude::*;

use crate::trace::naming::Scope;

use super::access::{AccessSink, NamedAccess, SpanSink};
use super::analysis::Analysis;
use super::consume::ConsumerThread;
use super::error::FilterError;
use super::input::{Fill, Named, Source};
use super::lookup::{LookupTable, VarUse};
use super::model::{variable_table, Variable};
use super::schema::line as ln;
use super::store::{AccessList, AccessWriter, Layout};

/// Accesses per batch from the source to the consumers: large enough to
/// amortise the calls, small enough (320 KB) to stay in the L2 cache while
/// each consumer makes its pass over it.
const BATCH: usize = 1 << 13;

/// A full batch's last accesses wait for the next batch: GL_STOP's own
/// stores are recognised only when the region ends, after them.
const HOLD_BACK: usize = crate::trace::record::HOLD_BACK;

/// How often (in accesses) the progress callback is called and the cancel
/// flag looked at: about a second's work apart at worst, and a few per
/// second at best.
pub const PROGRESS_EVERY: u64 = 1 << 20;

/// Where and how the access list is kept.
#[derive(Clone, Debug)]
pub struct Keep<'p> {
    /// The dataset folder (see [`AccessList`]); `None` keeps the whole
    /// access list in memory (tests, small traces).
    pub dataset: Option<&'p Path>,
    /// Bytes of the access list kept in memory besides the dataset.
    pub memory_budget: u64,
    /// How the dataset is cut into files and row groups.
    pub layout: Layout,
    /// Rows of the lookup table of unique locations held in memory at
    /// most; beyond them the rows go to sorted runs on disk, beside the
    /// dataset, merged when the analysis ends. Only with a dataset.
    pub lookup_rows: usize,
}

impl Keep<'_> {
    /// Everything in memory, no files.
    pub const MEMORY: Keep<'static> = Keep {
        dataset: None,
        memory_budget: u64::MAX,
        layout: Layout::DEFAULT,
        lookup_rows: usize::MAX,
    };

    /// The access list streamed into the dataset folder `dataset`, with
    /// the default memory budget and layout: what the shell's analyses use.
    pub fn on_disk(dataset: &Path) -> Keep<'_> {
        Keep {
            dataset: Some(dataset),
            memory_budget: super::store::DEFAULT_MEMORY_BUDGET,
            layout: Layout::DEFAULT,
            lookup_rows: DEFAULT_LOOKUP_ROWS,
        }
    }

    /// The access list streamed into `dataset` within a memory limit of
    /// `limit` bytes for the analysis as a whole: the share of the access
    /// list kept in memory and the rows of the lookup table held before
    /// they spill to disk are cut from it (see [`Keep::budgets`]).
    pub fn within(dataset: &Path, limit: u64) -> Keep<'_> {
        let (memory_budget, lookup_rows) = Keep::budgets(limit);
        Keep {
            dataset: Some(dataset),
            memory_budget,
            layout: Layout::DEFAULT,
            lookup_rows,
        }
    }

    /// The memory the locality feed may take under a memory limit of
    /// `limit` bytes: a sixth of it (341 MB at the default 2 GB: the reuse
    /// distances of 16 M lines, a program touching 1 GB). Past it the feed
    /// stops, and `cache_stats` simulates from the saved accesses instead.
    pub fn locality_budget(limit: u64) -> u64 {
        limit / 6
    }

    /// The access list's bytes in memory and the lookup table's rows for
    /// a memory limit of `limit` bytes: a thirty-second for the access list (at
    /// most the default 256 MB; it only spares later reads the disk), and an
    /// eighth for the lookup table at [`LOOKUP_ROW_BYTES`] a row (rows past
    /// it cost at most about 7 bytes each on disk, written and read once). A sixth
    /// goes to the cache model fed as the analysis streams
    /// ([`Keep::locality_budget`]); the rest is for the naming state, the
    /// by-variable buffers (about 120 MB), the direct indexes (at most
    /// 256 MB) and the batches in flight.
    pub fn budgets(limit: u64) -> (u64, usize) {
        let list = (limit / 32).min(super::store::DEFAULT_MEMORY_BUDGET);
        let rows = (limit / 8 / LOOKUP_ROW_BYTES).max(1 << 16);
        (list, usize::try_from(rows).unwrap_or(usize::MAX))
    }

    /// Parts the running analysis' lookup table has written to disk so
    /// far, because it outgrew its share of the memory limit (0 when it
    /// fits): what the progress line says.
    pub fn spilled_runs() -> usize {
        super::lookup::spilled_runs()
    }

    /// The lookup table as this keeping says: spilling beside the
    /// dataset, or held whole in memory.
    fn lookup(&self) -> LookupTable {
        match self.dataset {
            Some(d) if self.lookup_rows < usize::MAX => {
                LookupTable::spilling(spill_folder(d), self.lookup_rows)
            }
            _ => LookupTable::new(),
        }
    }
}

/// Rows of the lookup table held in memory by default: 4 M, about 470 MB
/// with their index and sort keys.
pub const DEFAULT_LOOKUP_ROWS: usize = 4 << 20;

/// Memory a row of the lookup table takes while it is counted (see
/// [`super::lookup::ROW_BYTES`]).
pub const LOOKUP_ROW_BYTES: u64 = super::lookup::ROW_BYTES as u64;

/// The folder of the lookup table's sorted runs, beside the dataset
/// `dataset` (in the analysis folder being built, which is removed whole
/// when the analysis fails).
fn spill_folder(dataset: &Path) -> std::path::PathBuf {
    dataset.with_file_name("lookup-runs")
}

/// Where the lookup table is written for the dataset `dataset`: the
/// analysis folder's `locations.parquet`; `None` keeps it in memory.
fn locations_file(dataset: Option<&Path>) -> Option<std::path::PathBuf> {
    dataset.map(|d| d.with_file_name(super::locations::FILE))
}

/// What the driver built from the named accesses.
pub(crate) struct Driven<S, F> {
    lookup: LookupTable,
    /// Where the lookup table is written (see [`locations_file`]).
    locations: Option<std::path::PathBuf>,
    extra: Option<S>,
    list: AccessList,
    stopped: bool,
    /// The follower's sink, when one was handed in.
    follow: Option<F>,
}

/// The one driver: pulls batches of named accesses from `src`, stamps
/// their times and hands them to the consumers on their own thread (see
/// [`ConsumerThread`]), so naming and counting run on both cores. `extra`
/// sees every access too, when the source knows where its variables lie
/// while it streams (else it is dropped). `follow`, when given, is fed
/// every batch after the consumers, on a thread of its own (the cache
/// model: its work runs beside naming and counting instead of after
/// them). `progress` is called every
/// [`PROGRESS_EVERY`] accesses with the number named so far; when
/// cancelling was requested then ([`crate::cancel`], Ctrl-C) the driver
/// stops there, and the analysis covers the accesses up to that point.
pub(crate) fn drive<S: SpanSink, F: AccessSink + Send + 'static>(
    src: &mut dyn Source,
    extra: Option<S>,
    follow: Option<F>,
    progress: &mut dyn FnMut(u64),
    keep: &Keep,
) -> Result<Driven<S, F>, FilterError> {
    let writer = AccessWriter::new(keep.dataset, keep.memory_budget, keep.layout)?;
    let extra = extra.filter(|_| src.spans_final());
    let mut to = ConsumerThread::start(keep.lookup(), extra, writer, follow)?;
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
        if time / PROGRESS_EVERY != before / PROGRESS_EVERY {
            progress(time);
            if crate::cancel::requested() {
                stopped = true;
                break;
            }
        }
    }
    // Stopped early: what is held back is analysed too.
    let n = batch.len();
    hand_over(&mut to, src, batch, n, &mut time, region)?;
    let c = to.finish()?;
    Ok(Driven {
        lookup: c.lookup,
        locations: locations_file(keep.dataset),
        extra: c.extra,
        list: c.list,
        stopped,
        follow: c.follow,
    })
}

/// Stamps the times of the first `ready` accesses of `batch` and sends
/// them to the consumers; returns the batch to fill next, holding the rest.
fn hand_over<S: SpanSink, F: AccessSink + Send + 'static>(
    to: &mut ConsumerThread<S, F>,
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

/// Turns what the source and the driver built into the tables: the
/// analysis (its pattern states and recorded counts not set: they are the
/// caller's, with whatever else its own consumer and follower gathered,
/// returned beside it).
pub(crate) fn finish<S, F>(
    mut src: Box<dyn Source + '_>,
    d: Driven<S, F>,
) -> Result<(Analysis, Option<S>, Option<F>), FilterError> {
    let threads = d.lookup.threads().to_vec();
    let runs = d.lookup.runs();
    let (locations, mut uses) = d
        .lookup
        .finish(&mut |addr, var| src.element(addr, var), d.locations)?;
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
    if runs > 0 {
        summary.notes.push(spilled_note(locations.len(), runs));
    }
    if d.stopped {
        summary.mark_partial(format!(
            "the analysis was interrupted after {} accesses",
            d.list.len()
        ));
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
    let a = Analysis {
        accesses: d.list,
        locations,
        variables,
        lines,
        vars,
        allocations,
        summary,
        patterns: None,
        locality: None,
    };
    Ok((a, d.extra, d.follow))
}

/// The note of an analysis whose lookup table outgrew its memory.
fn spilled_note(locations: u64, runs: usize) -> String {
    format!(
        "the {locations} unique locations did not fit in the analysis' memory limit: they were counted in {} parts on disk and merged (set_memory_limit sets the limit).",
        runs + 1
    )
}

/// Gives blocks that share a name instance numbers: `rows[i]#1`, `#2`, ...
/// in order of first appearance. A name used once stays plain. Stack
/// variables of one name in several functions are first told apart by
/// function (`main::C`, `kernel_gemm::C`): that is their base name, so
/// instances number within a function (`rec::mine#2` in a recursion).
fn number_instances(vars: &mut [Variable]) {
    qualify_by_function(vars);
    // A block on the stack (a variable-length array, an `alloca` block) and
    // a stack variable of the same name (the pointer `p` that holds
    // `alloca`'s result) are not instances of one variable.
    let is_block = |v: &Variable| v.alloc_time.is_some();
    let mut count: HashMap<(Scope, String, bool), u32> = HashMap::new();
    for v in vars.iter() {
        if !v.base_name.is_empty() {
            *count
                .entry((v.scope, v.base_name.clone(), is_block(v)))
                .or_default() += 1;
        }
    }
    let mut seen: HashMap<(Scope, String, bool), u32> = HashMap::new();
    for v in vars.iter_mut() {
        if v.base_name.is_empty() {
            continue;
        }
        let key = (v.scope, v.base_name.clone(), is_block(v));
        if count[&key] > 1 {
            let k = seen.entry(key).or_default();
            *k += 1;
            v.name = format!("{}#{}", v.base_name, k);
        }
    }
    // Heap and stack names may still collide (the heap block `arr` and the
    // stack pointer variable `arr` that holds its address): the heap block
    // keeps the plain name, as it is the array users mean; then globals;
    // later claimants are qualified by scope (`arr@S`). Blocks on the stack
    // come before stack variables: the `alloca` block is `p`, the pointer
    // that holds it `p@S`.
    let mut taken: HashMap<String, ()> = HashMap::new();
    let order = [
        (Scope::Heap, None),
        (Scope::Global, None),
        (Scope::Stack, Some(true)),
        (Scope::Stack, Some(false)),
    ];
    for (scope, blocks) in order {
        let claims =
            |v: &&mut Variable| v.scope == scope && blocks.is_none_or(|b| is_block(v) == b);
        for v in vars.iter_mut().filter(claims) {
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
fn stopped_note(n: u64) -> String {
    format!(
        "the analysis was interrupted after {n} accesses: it covers the accesses up to that point. \
         Run memory_trace_analysis again for all of them."
    )
}
