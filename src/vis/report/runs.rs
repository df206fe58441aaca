//! The sweep page, `figures/runs_METRIC.html` (`plot_runs`): one metric of
//! each variable against the saved runs, a line per variable, so that a
//! block-size sweep shows where the misses bottom out.
use std::path::{Path, PathBuf};

use plotly::common::{Mode, Title};
use plotly::layout::{Axis, AxisType};
use plotly::{Layout, Plot, Scatter};

use crate::vis::error::VisError;
use crate::vis::page::html::{write_page, PageFigure, PageMeta};

/// One saved run on the page's x axis.
#[derive(Clone, Debug)]
pub struct RunLabel {
    /// The run's label.
    pub label: String,
    /// Whether its trace and analysis were complete; a partial run is
    /// marked on the axis and in the page's notes.
    pub complete: bool,
    /// What its numbers were drawn from, for the folder's index (see
    /// `page::sources::analysis_source`).
    pub source: String,
}

impl RunLabel {
    /// The axis label: the run's, with `(partial)` for a partial run.
    pub fn shown(&self) -> String {
        if self.complete {
            self.label.clone()
        } else {
            format!("{} (partial)", self.label)
        }
    }
}

/// One variable's metric in each run, in the order of the runs; `None`
/// where the variable is absent from that run.
#[derive(Clone, Debug)]
pub struct Series {
    /// Variable name.
    pub variable: String,
    /// The metric per run.
    pub values: Vec<Option<f64>>,
}

/// The page's file name for `metric` (a cache_stats key such as
/// `misses_L1`, made of letters, digits and `_`).
pub fn runs_file(metric: &str) -> String {
    format!("runs_{}.html", crate::vis::page::html::file_word(metric))
}

/// Writes the page into `dir`: `metric` of each series against `runs`,
/// `intro` saying what was computed. Cost: one point per run and
/// variable.
///
/// # Errors
/// The page cannot be written.
pub fn runs_figure(
    dir: &Path,
    metric: &str,
    runs: &[RunLabel],
    series: &[Series],
    intro: &[String],
) -> Result<PathBuf, VisError> {
    let x: Vec<String> = runs.iter().map(RunLabel::shown).collect();
    let mut plot = Plot::new();
    for s in series {
        plot.add_trace(
            Scatter::new(x.clone(), s.values.clone())
                .mode(Mode::LinesMarkers)
                .name(s.variable.clone()),
        );
    }
    plot.set_layout(
        Layout::new()
            .x_axis(
                Axis::new()
                    .type_(AxisType::Category)
                    .title(Title::with_text("run")),
            )
            .y_axis(Axis::new().title(Title::with_text(metric))),
    );
    let partial: Vec<&str> = runs
        .iter()
        .filter(|r| !r.complete)
        .map(|r| r.label.as_str())
        .collect();
    let mut notes = intro.to_vec();
    if !partial.is_empty() {
        notes.push(format!(
            "PARTIAL: the trace or analysis of {} was cut short, so its numbers stand for only part of that run.",
            partial.join(", ")
        ));
    }
    let figures = [PageFigure {
        heading: format!("{metric} of each variable, by run"),
        note: "One line per variable, the runs in the order given (or the order of runs). Click a legend entry to hide a variable.".into(),
        plot,
        height: 520,
    }];
    let meta = PageMeta {
        command: format!(
            "plot_runs {metric} {}",
            runs.iter()
                .map(|r| r.label.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ),
        shape: format!("{} runs, {} variables", runs.len(), series.len()),
        trace: format!("runs {}", x.join(", ")),
        analysis: runs
            .iter()
            .map(|r| r.source.as_str())
            .collect::<Vec<_>>()
            .join(" "),
    };
    let title = format!(
        "{metric} across runs{}",
        if partial.is_empty() {
            ""
        } else {
            " (partial runs marked)"
        }
    );
    write_page(dir, &runs_file(metric), &title, &notes, &figures, &meta)
}
