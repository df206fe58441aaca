//! The analysis stage: trace events to named accesses, lookup table, access
//! list, statistics, locality reports and order data, as polars tables.
//!
//! # The facade
//!
//! The shell calls this stage only through the items re-exported here, at
//! the stage's root (`crate::filter::Name`), never through an inner
//! module, and of those only thirteen free functions: each builds a
//! report or writes a file, and the smaller things are methods of the
//! types they return (`tests/layering.rs` checks both, with the list of
//! functions in `SHELL_CALLS`). They come in five groups:
//!
//! - **analysing and choosing**: [`analyse_into`] builds an [`Analysis`]
//!   into an [`AnalysisDir`] ([`analyse`] and [`analyse_gleipnir`] are for
//!   the tests and tools); a [`SavedAnalysis`] is loaded, checked and
//!   kept as a run; [`select`] picks a [`MemKind`]'s accesses as a
//!   [`Selection`] and [`selection_batches`] streams them to a figure,
//!   coloured; the analysis' own methods name arrays, shapes and fields;
//! - **reports**: [`memory_stats`] ([`MemoryStats`]), [`cache_stats`]
//!   ([`CacheReport`]), [`sharing_stats`] ([`SharedLine`]s, saved as
//!   [`SharedLines`]), [`what_if`] ([`WhatIf`]), [`compare_runs`]
//!   ([`RunComparison`]) and [`metric_by_run`] ([`RunValues`]); each
//!   report's methods give its tables and save its files;
//! - **heap profiles**: [`HeapRun`] and [`HeapReport`], built and saved
//!   by their methods;
//! - **exports**: [`export_memtrace`], [`export_ops`], [`export_hpcmp`];
//! - **files**: [`write_csv`], the one writer of a table as CSV.
//!
//! The rest are the types those functions take and return. Laying the
//! reports out for the terminal is the shell's (`src/shell/render.rs`).
//! The inner modules are the stage's own business: they stay visible to
//! the crate (the figures stage reads `batches`, `schema` and the reports'
//! rows) and some to the integration tests, which check them one by one.

// Layers, lowest first; a module imports only modules of its own layer
// or below (docs/architecture.md; tests/layering.rs checks it). Modules
// marked `pub` are so for the integration tests and examples only.
//
// 1. The model: columns' names, named accesses, variables, occurrences.
pub(crate) mod access;
pub(crate) mod model;
pub(crate) mod occurrence;
pub mod schema;
// 2. Naming: the inputs, the registry of variables, the lookup table of
//    unique locations.
pub(crate) mod binary;
pub(crate) mod dynblocks;
pub(crate) mod import;
pub(crate) mod input;
pub(crate) mod lookup;
pub(crate) mod registry;
pub(crate) mod roots;
// 3. The dataset: files, the access list, its by-variable copy.
pub(crate) mod byvar;
pub(crate) mod columns;
pub(crate) mod csv;
pub(crate) mod dataset;
pub(crate) mod io;
pub mod store;
// 4. The analysis and the driver that builds it, reading the batches back.
pub mod analysis;
pub mod batches;
pub(crate) mod consume;
pub(crate) mod driver;
// 5. Derived tables: statistics, selection, shapes, fields, saved analyses,
//    heap reports and exports.
pub mod export;
pub(crate) mod fields;
pub mod files;
pub mod heap;
pub mod hpcmp;
pub(crate) mod pick;
pub mod shape;
pub mod stats;
// 6. Locality: cache model, reuse distance, patterns, sharing.
pub mod locality;
// The entry points that wire the pattern states into the driver, and the
// reports built from both the statistics and the locality stage.
mod analyse;
mod memstats;

// The facade (see the module's documentation). The free functions here
// are the ones the shell calls (`tests/layering.rs` lists them, and fails
// when the shell calls another), and `analyse`, `analyse_gleipnir`,
// `select`, `rows` and `accesses_of` for the tests and tools; the rest are
// the types they take and return, whose methods do the smaller things.
// Analysing and keeping.
pub use access::{LineId, VarId};
pub use analyse::{analyse, analyse_gleipnir, analyse_into};
pub use analysis::Analysis;
pub use csv::write_csv;
pub use driver::Keep;
pub use files::{AnalysisDir, SavedAnalysis};
pub use model::Variable;
// Choosing what to show and draw.
pub use batches::{AccessBatches, SelectionBatches};
pub use fields::StructField;
pub use locality::colour::{selection_batches, ColourMode};
pub use pick::{UnknownVariable, VarFilter};
pub use shape::{BlockStack, DrawShape, ShapeError};
// Statistics.
pub use memstats::{memory_stats, MemoryStats};
pub use stats::Grouping;
// Locality.
pub use locality::cache::{CacheError, CacheModel, Counts};
pub use locality::compare::{
    compare_runs, PairComparison, PairSide, RunComparison, Side, VarComparison,
};
pub use locality::report::{
    cache_stats, sharing_stats, CacheReport, LocalityError, Options as CacheOptions, PatternRow,
    Row, SharedLine, SharedLines, SharingKind, ThreadBytes,
};
pub use locality::reuse::{Histogram, Sampling};
pub use locality::sweep::{metric_by_run, Metric, RunReport, RunValue, RunValues};
pub use locality::whatif::{what_if, Layout, Remapped, WhatIf};
// Heap profiles.
pub use heap::{ClassStats, HeapReport, HeapRun, Ranking};
// Exports.
pub use export::{export_memtrace, export_ops};
pub use hpcmp::export_hpcmp;

use polars::prelude::*;

use crate::trace::naming::Scope;
use crate::trace::record::TraceError;

/// Errors of the analysis stage.
#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The heap profile could not be read.
    #[error(transparent)]
    Profile(#[from] crate::trace::heap::ProfileError),
    /// A table operation failed (a bug, or out of memory).
    #[error("a table operation failed: {0}.")]
    Table(#[from] PolarsError),
    /// A data file could not be written.
    #[error("{}", crate::workdir::describe_io("write", .path, .source))]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
    /// An export needs thread and mutex events the trace does not hold.
    #[error("the trace {path} was recorded without sync events (thread and mutex operations, instruction counts): export_hpcmp records its own trace of the loaded program; to use this file, trace again with --sync-events=yes.")]
    NoSyncEvents {
        /// The trace.
        path: std::path::PathBuf,
    },
    /// An imported (Gleipnir text) trace could not be read.
    #[error("{0}")]
    Import(String),
    /// Gathering the accesses a figure needs would take more memory than
    /// the machine has free.
    #[error(
        "drawing {accesses} accesses would take about {need_mb} MB of memory to gather them, \
         and this machine has {free_mb} MB free: draw fewer of them (one array with \
         2d_memory_access_pattern NAME, a filter such as `arrays` or NAME on \
         complete_memory_access_pattern, or set_mem_alloc with fewer kinds), or trace a \
         smaller run."
    )]
    TooManyToGather {
        /// Accesses the figure would gather.
        accesses: u64,
        /// Memory they would take, in MB.
        need_mb: u64,
        /// Memory available, in MB.
        free_mb: u64,
    },
    /// The calls were asked of a heap profile recorded without them
    /// (format 7's default): only its summary can be shown.
    #[error("the heap profile {path} holds no calls: it was recorded by `heap_profile` without `calls`, which keeps only the summary (counts, sites, sizes, leaks, the live heap over time and the lifetimes); run `heap_profile calls` to record them.")]
    NoHeapCalls {
        /// The profile.
        path: std::path::PathBuf,
    },
    /// A heap profile recorded without its calls has no summary to report
    /// from either.
    #[error("the heap profile {path} holds neither calls nor a whole summary: {why} Record it again; for a program that dies early, with `heap_profile calls`, which writes every call as it is made.")]
    NoHeapSummary {
        /// The profile.
        path: std::path::PathBuf,
        /// Why it has none, as far as the reader can tell.
        why: String,
    },
    /// A saved analysis could not be read back.
    #[error(
        "cannot read the saved analysis in {path}: {reason}. Run memory_trace_analysis again."
    )]
    Saved {
        /// The folder or file.
        path: std::path::PathBuf,
        /// What went wrong.
        reason: String,
    },
}

/// The end of one of the analysis' threads, `what` writing `path`: its
/// result, or its panic carried on into the joining thread, so that a
/// thread that ran out of memory (it could not even map its signal stack
/// under `ulimit -v`) reports as its command running out of memory
/// (shell::tcl catches the panic), and a bug as a bug. When the joining
/// thread is already unwinding, or from a `Drop`, a second panic would
/// abort: the panic becomes an error instead.
pub(crate) fn joined<T>(
    end: std::thread::Result<Result<T, FilterError>>,
    what: &str,
    path: &std::path::Path,
) -> Result<T, FilterError> {
    match end {
        Ok(r) => r,
        Err(panic) if !std::thread::panicking() => std::panic::resume_unwind(panic),
        Err(_) => Err(FilterError::Write {
            path: path.to_path_buf(),
            source: std::io::Error::other(format!("the {what} thread panicked")),
        }),
    }
}

/// Which memory kinds an analysis shows (`set_mem_alloc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MemKind {
    /// Heap blocks only (`H`).
    Heap,
    /// Stack only (`S`), the original's default.
    #[default]
    Stack,
    /// Globals and statics only (`G`).
    Global,
    /// Everything (`all`).
    All,
}

impl MemKind {
    /// Parses `H`, `S`, `G` or `all` (case-insensitive).
    pub fn parse(s: &str) -> Option<MemKind> {
        match s.to_ascii_lowercase().as_str() {
            "h" | "heap" => Some(MemKind::Heap),
            "s" | "stack" => Some(MemKind::Stack),
            "g" | "global" | "globals" => Some(MemKind::Global),
            "all" | "a" => Some(MemKind::All),
            _ => None,
        }
    }

    /// The code the user types.
    pub fn code(self) -> &'static str {
        match self {
            MemKind::Heap => "H",
            MemKind::Stack => "S",
            MemKind::Global => "G",
            MemKind::All => "all",
        }
    }

    /// Whether variables of this scope are shown.
    pub fn includes(self, scope: Scope) -> bool {
        match self {
            MemKind::All => true,
            MemKind::Heap => scope == Scope::Heap,
            MemKind::Stack => scope == Scope::Stack,
            MemKind::Global => scope == Scope::Global,
        }
    }
}

/// Whether variable `v` is shown for this kind: of a chosen scope and user
/// data (Valgrind's client-request block is left out).
pub fn shows(kind: MemKind, v: &Variable) -> bool {
    kind.includes(v.scope) && !v.internal
}

impl MemKind {
    /// Whether variable `v` is shown for this kind (see [`shows`]).
    pub fn shows(self, v: &Variable) -> bool {
        shows(self, v)
    }
}

/// A selection of the access list: the variables whose accesses it keeps,
/// and how many accesses those are. It refers to the access list rather
/// than listing accesses, so it costs nothing per access.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Per variable row: whether its accesses are selected.
    pub keep: Vec<bool>,
    /// Accesses selected.
    pub count: u64,
}

impl Selection {
    /// The selection of the variables `keep` holds.
    pub fn of(a: &analysis::Analysis, keep: Vec<bool>) -> PolarsResult<Selection> {
        let per_var = a.accesses_per_var()?;
        let count = per_var
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(n, _)| n)
            .sum();
        Ok(Selection { keep, count })
    }

    /// Accesses selected.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Whether nothing is selected.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The per-variable filter a reader of the access list needs for this
    /// selection: `None` when every variable that was accessed is kept, so
    /// the reader passes rows through without looking at them.
    pub fn var_filter(&self, a: &analysis::Analysis) -> Option<&[bool]> {
        let everything = a
            .vars
            .iter()
            .enumerate()
            .all(|(v, var)| var.accessed.is_none() || self.keep.get(v) == Some(&true));
        (!everything).then_some(self.keep.as_slice())
    }

    /// The part of this selection whose variables `keep` also holds.
    pub fn narrow(&self, a: &analysis::Analysis, keep: &[bool]) -> PolarsResult<Selection> {
        let both = self
            .keep
            .iter()
            .enumerate()
            .map(|(v, k)| *k && keep.get(v).copied().unwrap_or(false))
            .collect();
        Selection::of(a, both)
    }
}

/// The selection of `kind`: the accesses whose variable is shown (see
/// [`shows`]). Cost: one pass over the variables and unique locations.
pub fn select(a: &analysis::Analysis, kind: MemKind) -> PolarsResult<Selection> {
    Selection::of(a, a.vars.iter().map(|v| shows(kind, v)).collect())
}

/// The accesses of one variable (an array to draw), with their `time` and
/// `occurrence` columns and every access column.
pub fn accesses_of(a: &analysis::Analysis, var: VarId) -> Result<DataFrame, FilterError> {
    let keep: Vec<bool> = (0..a.vars.len()).map(|v| v == var.index()).collect();
    rows(a, &Selection::of(a, keep)?)
}

/// The access columns of a selection, gathered in time order: `time`
/// (UInt64), the stored columns, and `occurrence` (UInt64, 1-based: the
/// n-th access to its location), which is counted here as the rows stream
/// past.
///
/// Cost: one pass over the access list (from disk for windows not in
/// memory); 30 bytes per selected access in the result, plus one counter
/// per unique location selected. For small uses that need the rows
/// together (tests, exports); the figures stream a selection with
/// [`batches::SelectionBatches`], other consumers with
/// [`store::AccessList::for_each`].
pub fn rows(a: &analysis::Analysis, sel: &Selection) -> Result<DataFrame, FilterError> {
    check_fits(sel.count)?;
    use schema::access as ac;
    let mut parts: Vec<DataFrame> = Vec::new();
    let mut seen = occurrence::Occurrences::new(&a.vars);
    a.accesses.for_each(sel.var_filter(a), &mut |mut df| {
        let addr = df.column(ac::ADDR)?.u64()?.clone();
        let var = df.column(ac::VAR)?.u32()?.clone();
        let occ: Vec<u64> = addr
            .into_no_null_iter()
            .zip(var.into_no_null_iter())
            .map(|(addr, var)| seen.next(addr, var))
            .collect();
        df.with_column(model::owned::<UInt64Type>(ac::OCCURRENCE, occ))?;
        parts.push(df);
        Ok(true)
    })?;
    let mut out = match parts.len() {
        0 => empty_rows()?,
        _ => {
            let mut it = parts.into_iter();
            let mut first = it.next().expect("one part");
            for p in it {
                first.vstack_mut_owned(p)?;
            }
            first
        }
    };
    out.rechunk_mut();
    Ok(out)
}

/// Bytes [`rows`] takes per access gathered: the columns (35 bytes), and
/// the parts that are joined at the end, which double them for a moment.
const GATHERED_BYTES: u64 = 70;

/// Refuses to gather `n` accesses when they would not fit in the memory
/// the machine has available (`MemAvailable` of `/proc/meminfo`; no limit
/// where that cannot be read), so a figure of a huge trace fails with a
/// message instead of being killed.
fn check_fits(n: u64) -> Result<(), FilterError> {
    let Some(free) = available_memory() else {
        return Ok(());
    };
    let need = n.saturating_mul(GATHERED_BYTES);
    if need <= free {
        return Ok(());
    }
    Err(FilterError::TooManyToGather {
        accesses: n,
        need_mb: need >> 20,
        free_mb: free >> 20,
    })
}

/// `MemAvailable` of `/proc/meminfo`, in bytes.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The columns of [`rows`] with no rows.
pub(crate) fn empty_rows() -> PolarsResult<DataFrame> {
    use schema::access as ac;
    DataFrame::new(vec![
        Column::new_empty(ac::TIME.into(), &DataType::UInt64),
        Column::new_empty(ac::OP.into(), &DataType::UInt8),
        Column::new_empty(ac::ADDR.into(), &DataType::UInt64),
        Column::new_empty(ac::SIZE.into(), &DataType::UInt16),
        Column::new_empty(ac::TID.into(), &DataType::UInt16),
        Column::new_empty(ac::VAR.into(), &DataType::UInt32),
        Column::new_empty(ac::LINE.into(), &DataType::UInt32),
        Column::new_empty(ac::OCCURRENCE.into(), &DataType::UInt64),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread's panic reaches the joining thread with its message (so
    /// that the shell can tell running out of memory from a bug); its
    /// result passes through.
    #[test]
    fn a_thread_panic_is_carried_to_the_joining_thread() {
        let path = std::path::Path::new("(test)");
        let ok = std::thread::spawn(|| Ok::<u32, FilterError>(7)).join();
        assert_eq!(joined(ok, "test", path).unwrap(), 7);
        let failed = std::thread::spawn(|| -> Result<u32, FilterError> {
            panic!("failed to allocate an alternative stack: Cannot allocate memory (os error 12)")
        })
        .join();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            joined(failed, "test", path)
        }))
        .unwrap_err();
        let text = crate::oom::panic_text(caught.as_ref()).unwrap();
        assert!(crate::oom::is_out_of_memory(text), "{text}");
    }
}
