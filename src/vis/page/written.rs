//! What a figure command wrote ([`FigureReport`]): the page, its data
//! files and what the reader should know about them.

use std::path::PathBuf;

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

impl FigureReport {
    /// Every file the figure wrote: the page, the shared plotly.js copy
    /// beside it, and the CSV data (for the working folder's manifest).
    pub fn files(&self) -> Vec<PathBuf> {
        let mut out = vec![
            self.html.clone(),
            self.html.with_file_name(super::html::PLOTLY_JS_NAME),
            self.html.with_file_name(super::index::INDEX_FILE),
        ];
        out.extend(self.data_csv.iter().cloned());
        out
    }
}
