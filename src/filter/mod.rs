//! The analysis stage: trace events to named accesses, lookup table, access
//! list, statistics and order data, as polars tables.
//!
//! [`analysis::analyse`] turns a trace into an [`analysis::Analysis`];
//! [`select`] keeps the memory kinds the user chose with `set_mem_alloc`;
//! [`stats`] computes the per-variable and per-address statistics;
//! [`files`] writes them and the order data to `visinfo/`.

pub mod analysis;
pub mod export;
pub mod fields;
pub mod files;
pub mod heap;
pub mod locality;
pub mod pick;
pub mod schema;
pub mod shape;
pub mod stats;

use polars::prelude::*;

use crate::trace::naming::Scope;
use crate::trace::reader::TraceError;

/// Errors of the analysis stage.
#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
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
    /// An imported (Gleipnir text) trace could not be read.
    #[error("{0}")]
    Import(String),
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
pub fn shows(kind: MemKind, v: &analysis::Variable) -> bool {
    kind.includes(v.scope) && !v.internal
}

/// The selection of `kind`: the accesses whose variable is shown (see
/// [`shows`]), as one UInt32 `time` column holding their rows in the whole
/// access list, in time order.
///
/// Cost: 4 bytes per selected access and no copy of the access list, which
/// the selection refers to; [`rows`] gathers the columns of a selection, or
/// of a slice of one, when a consumer needs them.
pub fn select(a: &analysis::Analysis, kind: MemKind) -> PolarsResult<DataFrame> {
    let keep: Vec<bool> = a.vars.iter().map(|v| shows(kind, v)).collect();
    selection(a, &keep)
}

/// The accesses of one variable (an array to draw), with their `time`
/// column and every access column (a copy of that variable's rows).
pub fn accesses_of(a: &analysis::Analysis, var: u32) -> PolarsResult<DataFrame> {
    let keep: Vec<bool> = (0..a.vars.len()).map(|v| v == var as usize).collect();
    rows(a, &selection(a, &keep)?)
}

/// The rows whose variable `v` has `keep[v]`, as a `time` column.
fn selection(a: &analysis::Analysis, keep: &[bool]) -> PolarsResult<DataFrame> {
    use schema::access as ac;
    let n = a.accesses.height();
    let everything = a
        .vars
        .iter()
        .zip(keep)
        .all(|(v, k)| *k || v.accessed.is_none());
    let time: Vec<u32> = if everything {
        (0..n as u32).collect()
    } else {
        let var = a.accesses.column(ac::VAR)?.u32()?;
        var.into_no_null_iter()
            .enumerate()
            .filter(|(_, v)| keep.get(*v as usize).copied().unwrap_or(false))
            .map(|(i, _)| i as u32)
            .collect()
    };
    DataFrame::new(vec![analysis::owned::<UInt32Type>(ac::TIME, time)])
}

/// The access columns of a selection (or of a slice of one) from
/// [`select`]: its `time` column followed by the access list's columns at
/// those rows.
///
/// Cost: when the selection is the whole access list the columns are shared,
/// not copied; otherwise one gather, 25 bytes per row. Consumers that stream
/// (the order data) gather a slice at a time.
pub fn rows(a: &analysis::Analysis, selection: &DataFrame) -> PolarsResult<DataFrame> {
    use schema::access as ac;
    let time = selection.column(ac::TIME)?;
    // Rows are distinct and increasing, so as many rows as the list has
    // means every row in order.
    let mut df = if time.len() == a.accesses.height() {
        a.accesses.clone()
    } else {
        let idx = time.cast(&IDX_DTYPE)?;
        a.accesses.take(idx.idx()?)?
    };
    df.insert_column(0, time.clone())?;
    Ok(df)
}
