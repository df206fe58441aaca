//! How figures are drawn and where they go ([`FigureOptions`]), the
//! locality stage's additions to them ([`Annotations`]), the point
//! budgets, and the cancel check every long drawing loop polls. Shared by
//! every room of the figure stage.

use std::path::PathBuf;

use super::error::VisError;
use crate::filter::ClassNames;

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
    /// ([`crate::filter::TraceSummary::analysis_id`]), recorded in
    /// the page so that the folder's index marks it stale once another
    /// analysis is made; empty when unknown.
    pub analysis_id: String,
    /// Colour classes and pattern labels from the locality stage, for the
    /// complete pattern and the array figures.
    pub annotations: Annotations,
    /// The words the user named the drawn variable by (`C`, `net->w1[3]`):
    /// an array figure's file name is made of them, as mapvisual made it
    /// (`2d_memory_access_pattern_C.html`, see
    /// `file_word` in `page/html.rs`). `None`: of the variable's name.
    pub file_name: Option<String>,
    /// Access-order times at which a traced region begins after a stretch
    /// of the run that was not traced (every region after the first: the
    /// next window, call or pinned region); the views over access order
    /// mark each, so that two regions are never drawn as one continuous
    /// run.
    pub gaps: Vec<u64>,
}

/// What the locality stage adds to the access figures (see
/// `set_figure_colour`): both are optional and computed before drawing.
#[derive(Clone, Debug, Default)]
pub struct Annotations {
    /// Colour the scatters by class: the access table then has a `colour`
    /// column (UInt8, see [`crate::filter::schema`]) indexing these names.
    /// `None` colours by time (3D views) and variable (2D view).
    pub classes: Option<ClassNames>,
    /// The pattern table ([`crate::filter::schema::pattern`]): each
    /// (variable, line) pair's label, shown in the hover text.
    pub patterns: Option<polars::prelude::DataFrame>,
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

impl FigureOptions {
    /// Options writing pages into `figures_dir` and data into
    /// `visinfo_dir` (where they are is the working folder's to say, see
    /// `workdir::WorkFolder`), with the default point budget, row 0 at the
    /// bottom, no `save`, no provenance and no annotations.
    pub fn writing_to(figures_dir: PathBuf, visinfo_dir: PathBuf) -> FigureOptions {
        FigureOptions {
            figures_dir,
            visinfo_dir,
            save: false,
            point_budget: DEFAULT_POINT_BUDGET,
            matrix_orientation: false,
            provenance: String::new(),
            analysis_id: String::new(),
            annotations: Annotations::default(),
            file_name: None,
            gaps: Vec::new(),
        }
    }

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

/// Whether the drawing should stop: cancelling was requested (Ctrl-C,
/// see [`crate::cancel`]). One atomic load.
pub(crate) fn interrupted() -> bool {
    crate::cancel::requested()
}
