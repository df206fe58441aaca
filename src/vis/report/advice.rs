//! The advice page, `figures/advice.html` (`advise ... save`): the
//! changes `advise` predicts, ranked, each with its misses per level
//! before and after, why, the `what_if` command that reproduces it, and
//! links to that command's page and to the annotated source of the lines
//! it touches.
//!
//! The numbers are the caller's (the locality stage's `Advice`); this page
//! only draws them: one grouped bar chart (a group per suggestion, a bar
//! per level before and after) and a line of links per suggestion.
use std::path::PathBuf;

use plotly::common::Title;
use plotly::layout::{Axis, AxisType, BarMode};
use plotly::{Bar, Layout, Plot};

use crate::vis::error::VisError;
use crate::vis::options::FigureOptions;
use crate::vis::page::html::{write_page_with_links, PageFigure, PageMeta};

/// One suggestion on the page.
#[derive(Clone, Debug)]
pub struct AdviceEntry {
    /// The variable the change is for.
    pub variable: String,
    /// The change, as `what_if` takes it.
    pub change: String,
    /// Every variable it touches (their misses are the numbers).
    pub touches: Vec<String>,
    /// Misses per level before, innermost first.
    pub before: Vec<u64>,
    /// Misses per level predicted after.
    pub after: Vec<u64>,
    /// Why, in one sentence.
    pub why: String,
    /// The `what_if` command that reproduces it.
    pub command: String,
    /// Its `what_if ... save` page (a file name in the figures folder).
    pub page: String,
    /// The source lines it touches, each with its annotated source page
    /// and line anchor (`source_t.c.html#L12`) when that page exists.
    pub lines: Vec<(String, Option<String>)>,
}

/// The page's file name.
pub const ADVICE_FILE: &str = "advice.html";

/// Writes `figures/advice.html`: `entries` best first, `levels` the
/// model's level names, `notes` what was not suggested and why. Cost: a
/// bar per suggestion and level, a line of links per suggestion.
///
/// # Errors
/// The page cannot be written.
pub fn advice_figure(
    entries: &[AdviceEntry],
    levels: &[String],
    notes: &[String],
    o: &FigureOptions,
) -> Result<PathBuf, VisError> {
    o.validate()?;
    let labels: Vec<String> = (entries.iter().enumerate())
        .map(|(k, e)| format!("{}. {} {}", k + 1, e.variable, short(&e.change)))
        .collect();
    let mut plot = Plot::new();
    for (l, level) in levels.iter().enumerate() {
        let at = |v: &[u64]| v.get(l).copied().unwrap_or(0);
        for (side, values) in [
            (
                "before",
                entries.iter().map(|e| at(&e.before)).collect::<Vec<u64>>(),
            ),
            ("after", entries.iter().map(|e| at(&e.after)).collect()),
        ] {
            plot.add_trace(
                Bar::new(labels.clone(), values)
                    .name(format!("{level} misses {side}"))
                    .legend_group(level.clone()),
            );
        }
    }
    plot.set_layout(
        Layout::new()
            .bar_mode(BarMode::Group)
            .x_axis(
                Axis::new()
                    .type_(AxisType::Category)
                    .title(Title::with_text("suggestion, best first")),
            )
            .y_axis(Axis::new().title(Title::with_text("misses of the variables it touches"))),
    );
    let links: Vec<(String, Vec<(String, String)>)> = (entries.iter().enumerate())
        .map(|(k, e)| (caption(k, e, levels), targets(e)))
        .collect();
    let mut intro = vec![
        "Each change is a prediction from the recorded trace (what_if), not a new trace: make \
         the change, trace again and compare_runs to prove it helped. Ranked by the first \
         level's misses saved for the variables each change touches (a loop change touches \
         every array its iterations access), then the next level's, then the smaller change."
            .to_string(),
    ];
    if entries.is_empty() {
        intro.push("Nothing to suggest: see the notes below.".into());
    }
    intro.extend(notes.iter().map(|n| format!("Note: {n}")));
    let figures = [PageFigure {
        heading: "Misses per level before and after each suggestion".into(),
        note: "A group per suggestion (its rank, variable and change), a bar per level before \
               and after. Click a legend entry to hide a level."
            .into(),
        plot,
        height: 480,
    }];
    let meta = PageMeta {
        command: "advise save".into(),
        shape: format!("{} suggestions", entries.len()),
        trace: o.provenance.clone(),
        analysis: o.analysis_id.clone(),
    };
    write_page_with_links(
        &o.figures_dir,
        ADVICE_FILE,
        "What to change: advice ranked by predicted misses saved",
        &intro,
        &links,
        &figures,
        &meta,
    )
}

/// The change without its source line (`tile 8 t.c:32` is `tile 8`), for
/// the axis.
fn short(change: &str) -> String {
    change
        .split_whitespace()
        .filter(|w| !w.contains(':'))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The line of text before a suggestion's links: rank, command, misses
/// per level before and after, what it touches, why.
fn caption(k: usize, e: &AdviceEntry, levels: &[String]) -> String {
    let misses: Vec<String> = (levels.iter().enumerate())
        .map(|(l, name)| {
            let at = |v: &[u64]| v.get(l).copied().unwrap_or(0);
            format!("{name} {} -> {}", at(&e.before), at(&e.after))
        })
        .collect();
    let touches = if e.touches.len() > 1 {
        format!(" (misses of {})", e.touches.join(" and "))
    } else {
        String::new()
    };
    format!(
        "{}. {}: {}{touches}. {}. See:",
        k + 1,
        e.command,
        misses.join(", "),
        e.why
    )
}

/// A suggestion's links: its what-if page, then its source lines.
fn targets(e: &AdviceEntry) -> Vec<(String, String)> {
    let mut out = vec![("what-if figure".to_string(), e.page.clone())];
    out.extend(
        (e.lines.iter())
            .filter_map(|(line, href)| href.as_ref().map(|h| (line.clone(), h.clone()))),
    );
    out
}
