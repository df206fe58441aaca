//! The cache summary page, `figures/cache_stats.html`: misses per level for
//! each variable, and each variable's miss-ratio curve (misses of a fully
//! associative LRU cache against its size, from the reuse distance).
use std::path::{Path, PathBuf};

use plotly::common::{Mode, Title};
use plotly::layout::{Axis, AxisType, BarMode};
use plotly::{Bar, Layout, Plot, Scatter};

use crate::filter::CacheReport;
use crate::vis::error::VisError;
use crate::vis::page::html::{write_page, PageFigure, PageMeta};

/// File name of the page.
pub const FILE: &str = "cache_stats.html";

/// Misses of one variable at each modelled level.
#[derive(Clone, Debug)]
pub struct VarMisses {
    /// Variable name.
    pub name: String,
    /// Misses per level, innermost first.
    pub misses: Vec<u64>,
}

/// One variable's miss-ratio curve.
#[derive(Clone, Debug)]
pub struct Curve {
    /// Variable name.
    pub name: String,
    /// Cache sizes in bytes, increasing.
    pub bytes: Vec<u64>,
    /// Miss ratio at each size.
    pub ratio: Vec<f64>,
}

/// The miss-ratio curve of each listed display row of `r`, from its reuse
/// histogram: the miss ratio of a fully associative LRU cache of 2^j lines
/// for j up to one past the largest distance (at most 2^40 lines). Cost:
/// O(rows x 40).
pub fn curves_of(r: &CacheReport) -> Vec<Curve> {
    let line = r.reuse.line as u64;
    r.row_histograms()
        .into_iter()
        .map(|(row, h)| {
            let top = h.last_bin().unwrap_or(0) as u32 + 1;
            let js: Vec<u32> = (0..=top.min(40)).collect();
            Curve {
                name: r.names.row_name(row).to_string(),
                bytes: js.iter().map(|j| line << j).collect(),
                ratio: js
                    .iter()
                    .map(|&j| h.misses_at(j) as f64 / h.total() as f64)
                    .collect(),
            }
        })
        .collect()
}

/// Writes the summary page into `dir`; `levels` names the levels (`L1`,
/// ...), `intro` says what was simulated, `analysis_id` which analysis
/// (see [`crate::vis::options::FigureOptions::analysis_id`]). Cost: a few points per
/// variable.
pub fn cache_summary(
    dir: &Path,
    levels: &[(String, u64)],
    vars: &[VarMisses],
    curves: &[Curve],
    intro: &[String],
    analysis_id: &str,
) -> Result<PathBuf, VisError> {
    let mut bars = Plot::new();
    for (i, (l, _)) in levels.iter().enumerate() {
        let x: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
        let y: Vec<u64> = vars
            .iter()
            .map(|v| v.misses.get(i).copied().unwrap_or(0))
            .collect();
        bars.add_trace(Bar::new(x, y).name(format!("{l} misses")));
    }
    bars.set_layout(
        Layout::new()
            .bar_mode(BarMode::Group)
            .x_axis(Axis::new().title(Title::with_text("variable")))
            .y_axis(Axis::new().title(Title::with_text("misses"))),
    );
    let mut mrc = Plot::new();
    for c in curves {
        mrc.add_trace(
            Scatter::new(c.bytes.clone(), c.ratio.clone())
                .mode(Mode::LinesMarkers)
                .name(c.name.clone()),
        );
    }
    add_level_marks(&mut mrc, levels);
    mrc.set_layout(miss_ratio_layout());
    let figures = [
        PageFigure {
            heading: "Misses per variable and level".into(),
            note: "Each level is looked up only after a miss in the level above, as in cachegrind.".into(),
            plot: bars,
            height: 480,
        },
        PageFigure {
            heading: "Miss-ratio curves".into(),
            note: format!("From the exact reuse distance (or its sampled estimate): the share of a variable's line references that a fully associative LRU cache of each size would miss. A curve that drops at some size says how much cache the variable's reuse needs. {LEVEL_NOTE}"),
            plot: mrc,
            height: 480,
        },
    ];
    let meta = PageMeta {
        command: "cache_stats save".into(),
        shape: "misses per variable and level, miss-ratio curves".into(),
        trace: String::new(),
        analysis: analysis_id.to_string(),
    };
    write_page(
        dir,
        FILE,
        "Cache behaviour by variable",
        intro,
        &figures,
        &meta,
    )
}

/// What the level marks of a miss-ratio curve mean, and why cache_stats'
/// count can be higher than the curve at a level's size.
pub(crate) const LEVEL_NOTE: &str = "The dashed lines mark the sizes of the levels of the cache model (set_cache). At a level's size, cache_stats can count more misses than the curve: those are conflict misses, of lines that map to the same few sets of a set-associative cache, which a fully associative one does not have.";

/// Adds a dashed vertical line at each level's size (`(name, bytes)`,
/// innermost first) across a miss-ratio curve's height, as traces so that
/// they sit at data coordinates on the log axis and show in the legend.
pub(crate) fn add_level_marks(plot: &mut Plot, levels: &[(String, u64)]) {
    use plotly::common::{DashType, Line};
    for (name, bytes) in levels {
        plot.add_trace(
            Scatter::new(vec![*bytes, *bytes], vec![0.0, 1.05])
                .mode(Mode::Lines)
                .name(format!("{name} size ({})", size_text(*bytes)))
                .line(Line::new().dash(DashType::Dash).color("#777777")),
        );
    }
}

/// `32 KiB`, `8 MiB`, or bytes.
fn size_text(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} bytes")
    }
}

/// The axes of a miss-ratio curve: fully associative LRU cache size in
/// bytes (log scale) against the share of references that miss.
pub(crate) fn miss_ratio_layout() -> Layout {
    Layout::new()
        .x_axis(
            Axis::new()
                .type_(AxisType::Log)
                .title(Title::with_text("fully associative LRU cache size (bytes)")),
        )
        .y_axis(
            Axis::new()
                .title(Title::with_text("miss ratio"))
                .range(vec![0.0, 1.05]),
        )
}
