//! The figure stage: plotly figures written as offline HTML into `figures/`.
//!
//! The analysis hands over the accesses to draw as a stream of batches in
//! time order ([`crate::filter::batches::AccessBatches`]: a selection read
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
//! This file is the stage's facade: it re-exports each page's entry point
//! and the types it takes, and the files that draw them are private to
//! the stage. The shell names `crate::vis::Name` only
//! (`tests/layering.rs` checks it).

mod aggregate;
mod array;
mod array_exact;
mod array_groups;
mod array_maps;
mod array_points;
mod classes;
mod compare;
mod complete;
mod error;
mod escape;
mod heap;
mod html;
mod index;
mod input;
mod locality;
mod runs;
mod sharing;
mod source;
mod traces;
mod typed;
mod whatif;

use std::path::PathBuf;

pub use array::{
    array_2d, array_3d, array_fields, array_pattern_of, Array2d, Array3d, ArrayFields, ArrayLayout,
};
pub use compare::{compare_page, ComparePage, RunView};
pub use complete::{complete_memory_access_pattern, complete_pattern_of};
pub use error::VisError;
pub use heap::{heap_figures, lifetime_histogram};
pub use html::{ensure_plotly_js, sanitize_name, PLOTLY_JS, PLOTLY_JS_NAME};
pub use index::{write_index, INDEX_FILE};
pub use locality::{cache_summary, curves_of, VarMisses};
pub use runs::{runs_figure, RunLabel, Series as RunSeries};
pub use sharing::{sharing_figure, SharedBytes};
pub use source::{write_pages as write_source_pages, write_run_pages as write_run_source_pages};
pub use whatif::{what_if_figure, what_if_file, Panel as WhatIfPanel, WhatIfFigure};

/// Largest accepted [`FigureOptions::point_budget`]: beyond this a page would
/// be several gigabytes and no browser could open it.
pub const MAX_POINT_BUDGET: usize = 50_000_000;

/// Where and how figures are written.
#[derive(Clone, Debug)]
pub struct FigureOptions {
    /// Directory of the HTML pages and the shared `plotly.min.js`.
    pub figures_dir: PathBuf,
    /// Directory of the CSV data written when `save` is set.
    pub visinfo_dir: PathBuf,
    /// Also write the drawn data as CSV into `visinfo_dir` (one row per access
    /// or element touch; costs about 50 bytes per row on disk).
    pub save: bool,
    /// Most points one view may hold before accesses are aggregated (3D
    /// views: at most [`MAX_POINTS_3D`], see [`Self::budget_3d`]). Must be
    /// in `1..=50_000_000`; the default 200 000 keeps pages responsive.
    pub point_budget: usize,
    /// `false` (default, like the original tool): row 0 at the bottom, as in a
    /// plot. `true`: row 0 at the top, as a matrix is written.
    pub matrix_orientation: bool,
    /// Where the drawn data came from (the saved run, the trace and
    /// program), shown on each page and recorded for the folder's index
    /// page (`figures/index.html`). It starts with
    /// [`html::PARTIAL_MARK`] when the analysis is partial, and the page's
    /// title then says so.
    pub provenance: String,
    /// The id of the analysis the figure is drawn from
    /// ([`crate::filter::model::TraceSummary::analysis_id`]), recorded in
    /// the page so that the folder's index marks it stale once another
    /// analysis is made; empty when unknown.
    pub analysis_id: String,
    /// Colour classes and pattern labels from the locality stage, for the
    /// complete pattern and the array figures.
    pub annotations: Annotations,
}

/// What the locality stage adds to the access figures (see
/// `set_figure_colour`): both are optional and computed before drawing.
#[derive(Clone, Debug, Default)]
pub struct Annotations {
    /// Colour the scatters by class: the access table then has a `colour`
    /// column (UInt8, see [`crate::filter::schema`]) indexing these names.
    /// `None` colours by time (3D views) and variable (2D view).
    pub classes: Option<ColourClasses>,
    /// The pattern table ([`crate::filter::schema::pattern`]): each
    /// (variable, line) pair's label, shown in the hover text.
    pub patterns: Option<polars::prelude::DataFrame>,
}

/// The names of the colour classes of the access table's `colour` column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColourClasses {
    /// What the classes are (legend title and page note).
    pub title: String,
    /// Name of each class, best first (`L1 hit`, ..., `miss to memory`).
    pub labels: Vec<String>,
}

/// Points a figure draws per view before it groups accesses exactly
/// (`set_point_budget`): a 2D view of this many points opens in a second or
/// two in a browser on a laptop.
pub const DEFAULT_POINT_BUDGET: usize = 200_000;

/// Most points of a 3D view, whatever the point budget: a WebGL 3D
/// scatter costs about ten times as much per point as a 2D one to draw
/// (plotly.js builds a glyph per point), and without a GPU 20 000 points
/// take about 2 s where 200 000 took 30 s (docs/PERFORMANCE.md). A 3D
/// view of 256 x 256 elements keeps its pattern at 2 x 2 elements a point.
pub const MAX_POINTS_3D: usize = 20_000;

impl Default for FigureOptions {
    fn default() -> Self {
        FigureOptions {
            figures_dir: PathBuf::from("figures"),
            visinfo_dir: PathBuf::from("visinfo"),
            save: false,
            point_budget: DEFAULT_POINT_BUDGET,
            matrix_orientation: false,
            provenance: String::new(),
            analysis_id: String::new(),
            annotations: Annotations::default(),
        }
    }
}

impl FigureOptions {
    /// The point budget of a 3D view: the budget, at most
    /// [`MAX_POINTS_3D`].
    pub fn budget_3d(&self) -> usize {
        self.point_budget.min(MAX_POINTS_3D)
    }

    /// Checks the options; called by every figure function before any work.
    pub fn validate(&self) -> Result<(), VisError> {
        if self.point_budget == 0 {
            return Err(VisError::BadOption(
                format!("The point budget is 0, so no point could be drawn. Give a budget of at least 1 (the default is {DEFAULT_POINT_BUDGET})."),
            ));
        }
        if self.point_budget > MAX_POINT_BUDGET {
            return Err(VisError::BadOption(format!(
                "The point budget {} is larger than {MAX_POINT_BUDGET}; a page that large cannot be opened by a browser. Give a smaller budget (the default is {DEFAULT_POINT_BUDGET}).",
                self.point_budget
            )));
        }
        Ok(())
    }
}

/// What a figure function wrote.
#[derive(Clone, Debug, Default)]
pub struct FigureReport {
    /// The HTML page.
    pub html: PathBuf,
    /// CSV files written to `visinfo_dir` (empty unless `save`).
    pub data_csv: Vec<PathBuf>,
    /// Points in the largest scatter of the page (after aggregation).
    pub points: usize,
    /// `Some(description)` when accesses were binned to fit the point budget.
    pub aggregated: Option<String>,
    /// Things the user should know: accesses outside the block, shapes that
    /// do not divide the block, merged heatmap cells.
    pub warnings: Vec<String>,
}

/// Whether the drawing should stop: cancelling was requested (Ctrl-C,
/// see [`crate::cancel`]). One atomic load.
pub(crate) fn interrupted() -> bool {
    crate::cancel::requested()
}

impl FigureReport {
    /// Every file the figure wrote: the page, the shared plotly.js copy
    /// beside it, and the CSV data (for the working folder's manifest).
    pub fn files(&self) -> Vec<PathBuf> {
        let mut out = vec![
            self.html.clone(),
            self.html.with_file_name(html::PLOTLY_JS_NAME),
            self.html.with_file_name(index::INDEX_FILE),
        ];
        out.extend(self.data_csv.iter().cloned());
        out
    }
}
