//! The figure stage: plotly figures written as offline HTML into `figures/`.
//!
//! The analysis hands over the accesses to draw as a stream of batches in
//! time order ([`crate::filter::AccessBatches`]: a selection read
//! from the access list at each pass, occurrence and colour class computed
//! as it streams), with two polars tables (see [`crate::filter::schema`]):
//! variables and source lines. The figures never hold the accesses: each
//! pass keeps only its bins, groups and cells, bounded by the point budget
//! and the array's size, and counts are 64-bit throughout. The functions
//! taking an access table in memory draw it the same way. Each public
//! function here draws one kind of figure page:
//!
//! * [`complete_memory_access_pattern`]: every drawn access of every variable,
//!   as the original tool's 3D scatter (occurrence, variable, address, coloured
//!   by time) plus a 2D WebGL address-over-time scatter.
//! * [`array_2d`]: one variable seen as a `rows x cols` matrix: 3D scatter
//!   (column, occurrence, row), heatmaps of access count, first and last access
//!   time and store share, and a replay of the traversal with a time slider.
//! * [`array_fields`]: an array of structures as a table of elements by
//!   fields, the columns named after the fields, with the views of
//!   [`array_2d`].
//! * [`array_3d`]: one variable seen as a `planes x cols x depth` array: 3D
//!   scatter (column, depth, plane) and per-plane heatmaps with a slider.
//! * [`what_if_figure`]: one variable before and after a layout
//!   change predicted by `what_if` (`what_if NAME LAYOUT save`).
//! * [`runs_figure`]: a metric of each variable across saved runs
//!   (`plot_runs`).
//! * [`compare_page`]: two saved runs side by side, per
//!   variable (`compare_runs A B save`).
//! * [`sharing_figure`]: each cache line shared between threads,
//!   byte by byte, by thread (`sharing_stats save`).
//!
//! With [`FigureOptions::annotations`] the locality stage colours the access
//! scatters by class (cache level or reuse distance; one trace per class,
//! aggregated within its class) and adds each (variable, line) pair's
//! pattern label to the hover text.
//!
//! Pages load plotly.js from `plotly.min.js` in the same directory (written
//! once by [`ensure_plotly_js`]), so they open with no network access. With
//! [`FigureOptions::save`] the drawn data is also written as CSV to `visinfo/`.
//!
//! Scale: a scatter never holds more than [`FigureOptions::point_budget`]
//! points. Above that, accesses are binned exactly by (space bin, time bin);
//! every bin keeps its count (hover, and marker size; in the complete
//! pattern's 2D view one size per trace, from its mean count), the page title says so
//! and [`FigureReport::aggregated`] describes it. Heatmaps are aggregated by
//! element already; grids with more cells than the budget are merged into
//! square blocks of cells. Hover text uses `customdata` and `hovertemplate`,
//! never per-point formatted strings.
//!
//! # Rooms
//!
//! The stage does four jobs, one folder (a room) each; a room's `mod.rs`
//! is its facade, re-exporting the entry points and types other stages
//! use. A room's files are visible to the other rooms of this stage
//! (`pub(in crate::vis)`), never outside it.
//!
//! - [`input`]: what a figure is drawn from: the analysis' tables read
//!   into slices, the access stream aggregated into exact bins, and the
//!   locality stage's colour classes.
//! - [`page`]: what every page is made of: the offline HTML page and its
//!   shared `plotly.min.js`, `figures/index.html`, escaping, the traces'
//!   typed arrays and customdata, and what a figure command wrote.
//! - [`access`]: the access figures: the complete memory access pattern
//!   and the array figures (2D, 3D, fields).
//! - [`report`]: the report pages: the cache summary, two runs compared,
//!   a metric across runs, sharing, what-if, the annotated source and the
//!   heap profile.
//!
//! Beside them sit [`options`] (how figures are drawn, the point
//! budgets, the cancel check) and [`error`], which every room uses.
//!
//! This file is the stage's facade and defines nothing: the shell names
//! `crate::vis::Name` only (`tests/layering.rs` checks it).

pub mod access;
pub mod error;
pub mod input;
pub mod options;
pub mod page;
pub mod report;

pub use access::{
    array_2d, array_3d, array_fields, array_pattern_of, complete_memory_access_pattern,
    complete_pattern_of, Array2d, Array3d, ArrayFields, ArrayLayout,
};
pub use error::VisError;
pub use options::{
    Annotations, FigureOptions, DEFAULT_POINT_BUDGET, MAX_POINTS_3D, MAX_POINT_BUDGET,
};
pub use page::{
    analysis_source, ensure_plotly_js, file_source, file_word, write_index, FigureReport,
    INDEX_FILE, PLOTLY_JS, PLOTLY_JS_NAME,
};
pub use report::{
    advice_figure, cache_summary, compare_page, curves_of, heap_figures, lifetime_histogram,
    runs_figure, sharing_figure, what_if_figure, what_if_file, write_run_source_pages,
    write_source_pages, AdviceEntry, ComparePage, RunLabel, RunSeries, RunView, SharedBytes,
    VarMisses, WhatIfFigure, WhatIfPanel, ADVICE_FILE,
};
