//! The page of two runs side by side, `figures/compare_A_B.html`
//! (`compare_runs A B save`): per variable, both runs' address over time
//! on shared axes, their misses per level as paired bars, and their
//! miss-ratio curves overlaid, with links to each run's annotated source
//! pages.
//!
//! Addresses are drawn as byte offsets from the variable's lowest base in
//! its run: two builds place an array at different addresses, and the
//! offset is what both runs share. Each run's accesses are read from its
//! own analysis through [`AccessBatches`] and grouped exactly into
//! (variable, offset bin, time bin) groups within half the point budget per
//! run, as the complete pattern groups them, so the page stays small
//! whatever the traces' lengths.
use std::path::{Path, PathBuf};

use plotly::common::{Mode, Title};
use plotly::layout::{Axis, BarMode};
use plotly::{Bar, Layout, Plot, Scatter};

use super::locality::{curves_of, Curve};
use crate::filter::AccessBatches;
use crate::filter::CacheReport;
use crate::filter::VarId;
use crate::vis::error::VisError;
use crate::vis::input::aggregate::{aggregate, bin_width, Binned, Binning};
use crate::vis::input::tables::{for_items, Item};
use crate::vis::page::html::{write_page_with_links, PageFigure, PageMeta};
use crate::vis::page::traces::{trace_sizes, Ext, OneOrMany, PointMarker, Typed, RAW_SIZE};

/// Most variables the page draws (three figures each): those first in the
/// order given, the comparison's largest changes.
pub const MAX_VARIABLES: usize = 12;

/// Bits of an aggregation key below the variable's index (the offset bin;
/// resolutions stop at 2^26 bins).
const RANK_SHIFT: u32 = 27;

/// Colours of run A and run B.
const COLOURS: [&str; 2] = ["#4e79a7", "#f28e2b"];

/// One run as the page draws it.
pub struct RunView<'a> {
    /// The run's label (`save_run LABEL`).
    pub label: String,
    /// The traced command line.
    pub program: String,
    /// The run's `cache_stats` report, under the model both runs share.
    pub report: &'a CacheReport,
    /// The run's accesses (the memory kinds shown), in time order.
    pub accesses: &'a dyn AccessBatches,
    /// Links to the run's annotated source pages: (source file, address
    /// relative to the page).
    pub source_pages: Vec<(String, String)>,
    /// Something the reader should know about the run's pages (source
    /// files edited since the trace, so not annotated).
    pub note: Option<String>,
    /// What the run's numbers were drawn from, for the folder's index (see
    /// `page::sources::analysis_source`).
    pub source: String,
    /// Access-order times at which the run's regions after the first
    /// begin: its panel marks each (see `FigureOptions::gaps`).
    pub gaps: Vec<u64>,
}

/// What the page drew, for the shell's message and tests.
#[derive(Clone, Debug, Default)]
pub struct ComparePage {
    /// The page.
    pub html: PathBuf,
    /// The variables drawn, in page order.
    pub variables: Vec<String>,
    /// Groups drawn per run (A, B) in the address-over-time views.
    pub points: [usize; 2],
}

/// The file name of the page comparing runs `a` and `b`.
pub fn file_name(a: &str, b: &str) -> String {
    format!("compare_{a}_{b}.html")
}

/// Writes `dir/compare_A_B.html` for `variables` (display names, most
/// interesting first; at most [`MAX_VARIABLES`] are drawn), with at most
/// `point_budget / 2` groups per run in the address views.
///
/// Cost: per run, one pass over its accesses for the spans and one to
/// group them; memory O(point budget +
/// variables), never O(accesses).
///
/// # Errors
/// A zero budget, accesses that cannot be read, an interrupt, or a page
/// that cannot be written.
pub fn compare_page(
    dir: &Path,
    a: &RunView,
    b: &RunView,
    variables: &[String],
    point_budget: usize,
) -> Result<ComparePage, VisError> {
    if point_budget < 2 {
        return Err(VisError::BadOption(
            "the point budget must be at least 2 to draw two runs".into(),
        ));
    }
    let shown: Vec<String> = variables.iter().take(MAX_VARIABLES).cloned().collect();
    let ga = RunGroups::of(a, &shown, point_budget / 2)?;
    let gb = RunGroups::of(b, &shown, point_budget / 2)?;
    let levels: Vec<String> = a.report.level_names();
    let (ca, cb) = (curves_of(a.report), curves_of(b.report));
    let mut figures = Vec::new();
    for (k, v) in shown.iter().enumerate() {
        figures.push(address_figure(v, k, [a, b], [&ga, &gb]));
        figures.push(misses_figure(v, &levels, [a, b]));
        figures.push(curve_figure(v, [a, b], [&ca[..], &cb[..]]));
    }
    let title = format!("{} vs {}: memory behaviour side by side", a.label, b.label);
    let intro = intro(a, b, variables.len(), &shown, [&ga, &gb]);
    let links = links(a, b);
    let meta = PageMeta {
        command: format!("compare_runs {} {} save", a.label, b.label),
        shape: format!(
            "{} variables of runs {} and {}",
            shown.len(),
            a.label,
            b.label
        ),
        trace: format!("runs {} and {}", a.label, b.label),
        analysis: format!("{} {}", a.source, b.source),
    };
    let file = file_name(&a.label, &b.label);
    let html = write_page_with_links(dir, &file, &title, &intro, &links, &figures, &meta)?;
    Ok(ComparePage {
        html,
        variables: shown,
        points: [ga.binned.groups.len(), gb.binned.groups.len()],
    })
}

fn intro(
    a: &RunView,
    b: &RunView,
    all: usize,
    shown: &[String],
    groups: [&RunGroups; 2],
) -> Vec<String> {
    let mut out = vec![
        format!("Run A: {} ({}).", a.label, a.program),
        format!("Run B: {} ({}).", b.label, b.program),
        format!(
            "Both simulated from cold caches at the start of each traced region under one model: {}. Variables are aligned by name; addresses are byte offsets from each variable's base in its own run.",
            a.report.cache.model.levels_text()
        ),
    ];
    if all > shown.len() {
        out.push(format!(
            "The {} variables with the largest change in misses of {all} are drawn; the table printed by compare_runs and visinfo/compare_{}_{}.csv hold them all.",
            shown.len(),
            a.label,
            b.label
        ));
    }
    for (r, g) in [a, b].iter().zip(groups) {
        if let Some(w) = g.aggregated() {
            out.push(format!("Run {}: {w}", r.label));
        }
        if let Some(n) = &r.note {
            out.push(format!("Run {}: {n}", r.label));
        }
    }
    out
}

/// The links line of each run: its annotated source pages.
fn links(a: &RunView, b: &RunView) -> Vec<(String, Vec<(String, String)>)> {
    [a, b]
        .iter()
        .map(|r| {
            (
                format!("Annotated source of run {}:", r.label),
                r.source_pages.clone(),
            )
        })
        .collect()
}

/// One run's accesses to the drawn variables, grouped.
struct RunGroups {
    binned: Binned,
    /// Per drawn variable, the lowest base of its blocks (offset 0).
    base: Vec<u64>,
    /// Accesses grouped.
    accesses: u64,
    budget: usize,
}

impl RunGroups {
    /// Groups `r`'s accesses to `shown` within `budget` groups.
    fn of(r: &RunView, shown: &[String], budget: usize) -> Result<RunGroups, VisError> {
        let names = &r.report.names;
        // The drawn variable each variable id belongs to, if any.
        let index: Vec<Option<usize>> = (0..names.vars.len() as u32)
            .map(|v| shown.iter().position(|s| s == names.var_name(VarId(v))))
            .collect();
        let at = |it: &Item| index.get(it.var.index()).copied().flatten();
        let (lo, hi, time, count) = spans(r.accesses, shown.len(), &at)?;
        let mut base: Vec<u64> = lo.clone();
        for (v, k) in index.iter().enumerate() {
            if let Some(k) = k {
                base[*k] = base[*k].min(names.vars[v].base);
            }
        }
        let widest = (0..shown.len())
            .map(|k| hi[k].saturating_sub(base[k]) + 1)
            .max()
            .unwrap_or(1);
        let key = |it: &Item, coord: u64, res: u64| {
            let k = at(it).unwrap_or(0);
            let width = bin_width(hi[k].saturating_sub(base[k]) + 1, res);
            ((k as u64) << RANK_SHIFT) | (coord.saturating_sub(base[k]) >> width.trailing_zeros())
        };
        let time_of = |it: &Item| it.time;
        let view = Binning {
            key: &key,
            dim: &time_of,
            span: time,
            budget: budget.max(1),
            space: widest,
            distinct: if r.accesses.unique_times() { count } else { 0 },
            classes: None,
        };
        let source = |f: &mut dyn FnMut(&Item, u64) -> bool| {
            for_items(r.accesses, &mut |it| at(it).is_none() || f(it, it.addr))
        };
        let binned = aggregate(&source, &[view])?
            .pop()
            .expect("aggregate gives one result per view");
        Ok(RunGroups {
            binned,
            base,
            accesses: count,
            budget,
        })
    }

    /// How the groups were made, when they are not single accesses.
    fn aggregated(&self) -> Option<String> {
        if self.binned.groups.len() as u64 == self.accesses {
            return None;
        }
        Some(format!(
            "{} accesses grouped into {} points (at most {}; time bins {} accesses wide, at most {} offset bins per variable); marker size grows with the count.",
            self.accesses,
            self.binned.groups.len(),
            self.budget,
            self.binned.time_width,
            self.binned.res
        ))
    }
}

/// Per drawn variable, its lowest and highest address accessed; the span
/// of access times; and the accesses to drawn variables. One pass.
type Spans = (Vec<u64>, Vec<u64>, (u64, u64), u64);

fn spans(
    src: &dyn AccessBatches,
    n: usize,
    at: &dyn Fn(&Item) -> Option<usize>,
) -> Result<Spans, VisError> {
    let (mut lo, mut hi) = (vec![u64::MAX; n], vec![0u64; n]);
    let (mut time, mut count) = ((u64::MAX, 0u64), 0u64);
    for_items(src, &mut |it| {
        if let Some(k) = at(it) {
            lo[k] = lo[k].min(it.addr);
            hi[k] = hi[k].max(it.addr);
            time = (time.0.min(it.time), time.1.max(it.time));
            count += 1;
        }
        true
    })?;
    if count == 0 {
        time = (0, 0);
    }
    Ok((lo, hi, time, count))
}

/// Both runs' accesses to variable `k` (named `v`): offset over time.
fn address_figure(v: &str, k: usize, runs: [&RunView; 2], groups: [&RunGroups; 2]) -> PageFigure {
    let mut plot = Plot::new();
    let mut spans = [(0, 0); 2];
    for (i, (r, g)) in runs.iter().zip(groups).enumerate() {
        let gs: Vec<_> = g
            .binned
            .groups
            .iter()
            .filter(|x| (x.space >> RANK_SHIFT) as usize == k)
            .collect();
        let t: Vec<u64> = gs.iter().map(|x| x.t_min).collect();
        spans[i] = gs.iter().fold((u64::MAX, 0), |(lo, hi), x| {
            (lo.min(x.t_min), hi.max(x.t_max))
        });
        let off: Vec<u64> = gs
            .iter()
            .map(|x| x.coord_min.saturating_sub(g.base[k]))
            .collect();
        let counts: Vec<u64> = gs.iter().map(|x| x.count).collect();
        // Single accesses keep the raw points' size; groups grow with
        // their counts.
        let sizes = if counts.iter().all(|&c| c == 1) {
            vec![RAW_SIZE; counts.len()]
        } else {
            trace_sizes(&counts)
        };
        // Run A on the left panel, run B on the right: drawn on one axis,
        // the run drawn second hid the first wherever they overlap.
        let (xa, ya) = [("x", "y"), ("x2", "y2")][i];
        let trace = Box::new(Scatter::<f64, f64>::default())
            .web_gl_mode(true)
            .mode(Mode::Markers)
            .x_axis(xa)
            .y_axis(ya)
            .name(format!("{} ({} points)", r.label, gs.len()))
            .hover_template(format!(
                "run {}<br>access order %{{x}}<br>offset %{{y}} bytes<extra></extra>",
                crate::vis::page::html::escape_html(&r.label)
            ));
        plot.add_trace(
            Ext::new(*trace)
                .xy(Typed::uints(&t), Typed::uints(&off))
                .marker(PointMarker::solid(
                    COLOURS[i].to_string(),
                    OneOrMany::many(&sizes),
                ))
                .boxed(),
        );
    }
    plot.set_layout(side_by_side(runs[0].label.as_str(), runs[1].label.as_str()));
    crate::vis::page::traces::mark_gaps(
        &mut plot,
        &[
            ("x", &runs[0].gaps, spans[0]),
            ("x2", &runs[1].gaps, spans[1]),
        ],
    );
    PageFigure {
        heading: format!("{v}: address over time"),
        note: "Each run's accesses to the variable, as byte offsets from its base, against the order of the access in its own run: run A on the left, run B on the right, on shared axes (zooming one zooms both).".into(),
        plot,
        height: 420,
    }
}

/// Two panels side by side, run A's on the left and run B's on the right;
/// the right one's axes follow the left one's, so the runs are read on one
/// scale.
fn side_by_side(a: &str, b: &str) -> Layout {
    let offset = "byte offset in the variable";
    Layout::new()
        .x_axis(
            Axis::new()
                .domain(&[0.0, 0.47])
                .title(Title::with_text(format!("run {a}: access order").as_str())),
        )
        .y_axis(Axis::new().title(Title::with_text(offset)))
        .x_axis2(
            Axis::new()
                .domain(&[0.53, 1.0])
                .anchor("y2")
                .matches("x")
                .title(Title::with_text(format!("run {b}: access order").as_str())),
        )
        .y_axis2(
            Axis::new()
                .anchor("x2")
                .matches("y")
                .title(Title::with_text(offset)),
        )
}

/// Misses of variable `v` per level, run A beside run B.
fn misses_figure(v: &str, levels: &[String], runs: [&RunView; 2]) -> PageFigure {
    let mut plot = Plot::new();
    for (i, r) in runs.iter().enumerate() {
        let misses = r
            .report
            .per_variable()
            .into_iter()
            .find(|row| row.key == v)
            .map(|row| row.counts.misses[..levels.len()].to_vec())
            .unwrap_or_else(|| vec![0; levels.len()]);
        plot.add_trace(
            Bar::new(levels.to_vec(), misses)
                .name(r.label.clone())
                .marker(plotly::common::Marker::new().color(COLOURS[i])),
        );
    }
    plot.set_layout(
        Layout::new()
            .bar_mode(BarMode::Group)
            .x_axis(Axis::new().title(Title::with_text("cache level")))
            .y_axis(Axis::new().title(Title::with_text("misses"))),
    );
    PageFigure {
        heading: format!("{v}: misses per level"),
        note: "Each level is looked up only after a miss in the level above, as in cachegrind."
            .into(),
        plot,
        height: 360,
    }
}

/// Variable `v`'s miss-ratio curves, run A over run B.
fn curve_figure(v: &str, runs: [&RunView; 2], curves: [&[Curve]; 2]) -> PageFigure {
    let mut plot = Plot::new();
    for (i, (r, cs)) in runs.iter().zip(curves).enumerate() {
        if let Some(c) = cs.iter().find(|c| c.name == v) {
            plot.add_trace(
                Scatter::new(c.bytes.clone(), c.ratio.clone())
                    .mode(Mode::LinesMarkers)
                    .name(r.label.clone())
                    .marker(plotly::common::Marker::new().color(COLOURS[i])),
            );
        }
    }
    let levels = runs[0].report.cache.model.level_sizes();
    super::locality::add_level_marks(&mut plot, &levels);
    plot.set_layout(super::locality::miss_ratio_layout());
    PageFigure {
        heading: format!("{v}: miss-ratio curves"),
        note: format!("From each run's reuse distance: the share of the variable's line references a fully associative LRU cache of each size would miss. {}", super::locality::LEVEL_NOTE),
        plot,
        height: 360,
    }
}
