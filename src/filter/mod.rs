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
//!   [`SharedLines`]), [`what_if`] and [`what_if_many`] ([`WhatIf`]), [`compare_runs`]
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
// 1. The model: columns' names, named accesses, variables and memory
//    kinds, occurrences, the stage's error.
pub(crate) mod access;
pub(crate) mod error;
pub(crate) mod model;
pub(crate) mod occurrence;
pub mod schema;
// 2. Naming: the inputs, the registry of variables.
pub(crate) mod binary;
pub(crate) mod dynblocks;
pub(crate) mod import;
pub(crate) mod input;
pub(crate) mod registry;
pub(crate) mod roots;
// 3. The dataset: files, the access list, its by-variable copy, the lookup
//    table of unique locations (counted in memory, merged on disk).
pub(crate) mod byvar;
pub(crate) mod columns;
pub(crate) mod csv;
pub(crate) mod dataset;
pub(crate) mod io;
pub mod locations;
pub(crate) mod lookup;
pub mod store;
// 4. The analysis, what it gathers of each walk, the driver that builds
//    it, selections of it and the batches that read it back.
pub mod analysis;
pub mod batches;
pub(crate) mod consume;
pub(crate) mod driver;
pub(crate) mod recorded;
pub(crate) mod selection;
pub(crate) mod walks;
// 5. Derived tables: statistics, picking variables, shapes, fields, saved analyses,
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
// 7. On top: the entry points that wire the pattern sink into the driver,
//    and the report built from both the statistics and the locality stage.
mod analyse;
mod memstats;

// The facade (see the module's documentation). The free functions here
// are the ones the shell calls (`tests/layering.rs` lists them, and fails
// when the shell calls another), and `analyse`, `analyse_gleipnir`,
// `select`, `rows` and `accesses_of` for the tests and tools; the rest are
// the types they take and return, whose methods do the smaller things.
// Analysing and keeping.
pub use access::{LineId, VarId};
pub use analyse::{analyse, analyse_gleipnir, analyse_into, analyse_recording};
pub use analysis::Analysis;
pub use csv::write_csv;
pub use driver::Keep;
pub use error::FilterError;
pub use files::{saved_analysis_id, AnalysisDir, SavedAnalysis};
pub use model::{MemKind, Variable};
pub use selection::{accesses_of, rows, select, Selection};
// Choosing what to show and draw; what the figures read.
pub use batches::{AccessBatch, AccessBatches, BatchFn, ClassNames, SelectionBatches, VarSpan};
pub use columns::Columns as AccessColumns;
pub(crate) use csv::CsvOut;
pub use fields::StructField;
pub use locality::colour::{selection_batches, ColourMode};
pub use model::TraceSummary;
pub use pick::{UnknownVariable, VarFilter};
pub use shape::{BlockStack, DrawShape, ShapeError};
// Statistics.
pub use memstats::{memory_stats, MemoryStats};
pub use stats::Grouping;
// Locality.
pub use locality::advise::{advise, Advice, Suggestion};
pub use locality::cache::{CacheError, CacheModel, Counts, MissClasses};
pub use locality::compare::{
    compare_runs, PairComparison, PairSide, RunComparison, Side, VarComparison,
};
pub use locality::recorded::LocalityPlan;
pub use locality::report::{
    cache_stats, sharing_stats, CacheReport, LocalityError, Options as CacheOptions, PatternRow,
    Row, SharedLine, SharedLines, SharingKind, ThreadBytes,
};
pub use locality::report::{AUTO_ABOVE, AUTO_RATE};
pub use locality::reuse::{Histogram, Sampling};
pub use locality::sweep::{metric_by_run, Metric, RunReport, RunValue, RunValues};
pub use locality::whatif::{what_if, what_if_many, Layout, Remapped, WhatIf};
// Heap profiles.
pub use heap::{
    lifetime_bins, live_series, size_class_label, ClassStats, HeapReport, HeapRun, LifetimeBins,
    LiveSeries, Ranking, TimeUnit,
};
// Exports.
pub use export::{export_memtrace, export_ops};
pub use hpcmp::export_hpcmp;
