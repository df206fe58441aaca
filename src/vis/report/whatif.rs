//! The what-if page, `figures/what_if_NAME_LAYOUT.html` (`what_if NAME
//! LAYOUT ... save`): one variable's accesses before and after a layout
//! change, side by side on a shared time axis, and its misses per cache
//! level before and after.
//!
//! The page draws a prediction: the "after" accesses are the recorded ones
//! with the variable's addresses rewritten by the locality stage (the
//! caller hands them in as [`AccessBatches`] already moved), in the
//! recorded order. Both views plot the byte offset from the variable's base
//! in their layout, so a column walk that becomes sequential shows as the
//! same time axis with a new slope. Each view keeps within half the point
//! budget by the exact aggregation the other figures use.
use plotly::common::{Mode, Title};
use plotly::layout::{Axis, BarMode};
use plotly::{Bar, Layout, Plot, Scatter};

use crate::filter::AccessBatches;
use crate::filter::VarId;
use crate::vis::error::VisError;
use crate::vis::input::aggregate::{aggregate, bin_width, Binned, Binning, Group};
use crate::vis::input::tables::{for_items, Item};
use crate::vis::options::FigureOptions;
use crate::vis::page::html::{file_word, write_page, PageFigure, PageMeta};
use crate::vis::page::traces::{customdata_fields, trace_sizes, CdCol, CustomData, Ext};
use crate::vis::page::traces::{CdField, OneOrMany, PointMarker, Typed, PALETTE};
use crate::vis::page::written::FigureReport;

/// One side of the page: the accesses of one layout.
pub struct Panel<'a> {
    /// The variable's accesses in this layout, in time order.
    pub accesses: &'a dyn AccessBatches,
    /// The variable's base in this layout: offsets are counted from here.
    pub base: u64,
    /// The base of an address below `base` (an access the layout did not
    /// place, kept at its recorded address): the recorded base.
    pub fallback: u64,
    /// The variable rows drawn and their names (the variable, or the
    /// per-field arrays of a split); accesses of other rows are skipped.
    pub names: &'a [(VarId, String)],
}

/// What the page shows, all computed by the caller.
pub struct WhatIfFigure<'a> {
    /// The variable's name and row (for the file name).
    pub name: &'a str,
    /// The variable's row.
    pub var: VarId,
    /// The layout's words (`transpose`, `pad 64`): the first names the
    /// file.
    pub layout: &'a str,
    /// The recorded layout.
    pub before: Panel<'a>,
    /// The new layout.
    pub after: Panel<'a>,
    /// The cache levels' names, innermost first.
    pub levels: &'a [String],
    /// The variable's misses per level before and after.
    pub misses: (&'a [u64], &'a [u64]),
    /// What the layout did, in words.
    pub notes: &'a [String],
    /// Whether the recorded trace was cut short.
    pub partial: bool,
}

/// The page's file name: `what_if_NAME_LAYOUT.html`, NAME made safe for a
/// file name as the other figures make it, LAYOUT its words joined by `_`
/// (`pad 64` and `pad 128` get files of their own).
pub fn what_if_file(name: &str, layout: &str) -> String {
    let words: Vec<&str> = layout.split_whitespace().collect();
    let layout = if words.is_empty() {
        "layout".to_string()
    } else {
        words.join("_")
    };
    format!("what_if_{}_{}.html", file_word(name), file_word(&layout))
}

customdata_fields! {
    /// The hover fields of a what-if point.
    Field {
        /// Accesses in the point.
        Count,
        /// First and last access time.
        TimeFirst,
        TimeLast,
        /// Lowest and highest byte offset.
        OffsetLow,
        OffsetHigh,
    }
}

/// Draws the page into `o.figures_dir`.
///
/// Cost: per view, one pass over its accesses for the spans and one for
/// the aggregation (see [`aggregate`]), memory O(point budget) whatever
/// the number of accesses.
///
/// # Errors
/// Bad options, no access of the variable, accesses that cannot be read,
/// or a file that cannot be written.
pub fn what_if_figure(f: &WhatIfFigure, o: &FigureOptions) -> Result<FigureReport, VisError> {
    o.validate()?;
    if f.before.accesses.is_empty() {
        return Err(VisError::Empty(format!(
            "\"{}\" has no access in the selection, so there is no layout change to draw.",
            f.name
        )));
    }
    let budget = (o.point_budget / 2).max(1);
    let before = bin_panel(&f.before, budget)?;
    let after = bin_panel(&f.after, budget)?;
    if crate::vis::options::interrupted() {
        return Err(VisError::Interrupted);
    }
    let mut plot = Plot::new();
    add_panel(&mut plot, &f.before, &before, ("x", "y"), "before");
    add_panel(
        &mut plot,
        &f.after,
        &after,
        ("x2", "y2"),
        "after (predicted)",
    );
    plot.set_layout(scatter_layout(f.name));
    let span = before
        .binned
        .groups
        .iter()
        .fold((u64::MAX, 0), |(lo, hi), g| {
            (lo.min(g.t_min), hi.max(g.t_max))
        });
    crate::vis::page::traces::mark_gaps(&mut plot, &[("x", &o.gaps, span), ("x2", &o.gaps, span)]);
    let mut report = FigureReport {
        points: before.binned.groups.len().max(after.binned.groups.len()),
        ..Default::default()
    };
    let n = f.before.accesses.len();
    report.aggregated = aggregation(n, budget, &before, &after);
    let figures = page_figures(f, plot);
    let meta = PageMeta {
        command: format!("what_if {} {} save", f.name, f.layout),
        shape: format!("{n} accesses of {}, before and after", f.name),
        trace: o.provenance.clone(),
        analysis: o.analysis_id.clone(),
    };
    let title = format!(
        "What if {} had the layout \"{}\"? A prediction{}",
        f.name,
        f.layout,
        if f.partial { " (partial trace)" } else { "" }
    );
    let intro = intro(f, &report);
    report.html = write_page(
        &o.figures_dir,
        &what_if_file(f.name, f.layout),
        &title,
        &intro,
        &figures,
        &meta,
    )?;
    Ok(report)
}

/// What the aggregation did, when the accesses exceed a view's `budget`.
fn aggregation(n: u64, budget: usize, before: &PanelBins, after: &PanelBins) -> Option<String> {
    let bins = |b: &PanelBins| {
        format!(
            "offset bins of {} bytes, time bins of {} accesses",
            bin_width(b.span, b.binned.res),
            b.binned.time_width
        )
    };
    (n > budget as u64).then(|| {
        format!(
            "{n} accesses exceed half the point budget ({budget} points a view): each point is the exact group of accesses to one offset bin during one time bin (before: {}; after: {}); marker size and hover give the count.",
            bins(before),
            bins(after)
        )
    })
}

/// The page's two figures: the views side by side, and the misses.
fn page_figures(f: &WhatIfFigure, views: Plot) -> [PageFigure; 2] {
    [
        PageFigure {
            heading: format!("{}: offset over time, before and after", f.name),
            note: "Left: the recorded layout. Right: the same accesses, in the same order, where the new layout would put them. Both share the time axis; zoom one and the other follows.".into(),
            plot: views,
            height: 560,
        },
        PageFigure {
            heading: format!("{}: misses per level, before and after", f.name),
            note: "Misses of the variable's accesses at each level of the cache model (set_cache), each level looked up only after a miss in the one above; after sums the arrays a split makes.".into(),
            plot: misses_plot(f.levels, f.misses),
            height: 420,
        },
    ]
}

/// The page's opening notes: what a prediction is, the layout's notes,
/// the aggregation and a partial trace.
fn intro(f: &WhatIfFigure, report: &FigureReport) -> Vec<String> {
    let mut out = vec![format!(
        "This is a prediction from the recorded trace, not a new trace: the accesses of {} were moved to where the new layout would put them, in the recorded order, and the cache model was run again over every access. It holds as long as the program would run the same loops over the new layout.",
        f.name
    )];
    if f.partial {
        out.push("PARTIAL: the recorded trace or its analysis was cut short, so both sides stand for only part of the run.".into());
    }
    out.extend(f.notes.iter().cloned());
    out.extend(report.aggregated.iter().cloned());
    out
}

/// One view's groups, with the span of offsets they were binned over.
struct PanelBins {
    binned: Binned,
    span: u64,
}

/// The offset of an access in a panel's layout.
fn offset(p: &Panel, addr: u64) -> u64 {
    if addr >= p.base {
        addr - p.base
    } else {
        addr.saturating_sub(p.fallback)
    }
}

/// The index in `p.names` of a variable row.
fn trace_of(names: &[(VarId, String)], var: VarId) -> Option<u64> {
    names.iter().position(|(v, _)| *v == var).map(|k| k as u64)
}

/// Bit of a group's space key where the trace index starts.
const TRACE_SHIFT: u32 = 48;

/// Aggregates one panel's accesses within `budget` groups: (trace,
/// offset bin, time bin). Two passes: spans, then groups.
fn bin_panel(p: &Panel, budget: usize) -> Result<PanelBins, VisError> {
    let (mut t, mut hi) = ((u64::MAX, 0u64), 0u64);
    for_items(p.accesses, &mut |it| {
        if trace_of(p.names, it.var).is_some() {
            t = (t.0.min(it.time), t.1.max(it.time));
            hi = hi.max(offset(p, it.addr));
        }
        true
    })?;
    if t.0 > t.1 {
        t = (0, 0);
    }
    let span = hi + 1;
    let names = p.names;
    let key = |it: &Item, coord: u64, res: u64| {
        let k = trace_of(names, it.var).unwrap_or(0);
        (k << TRACE_SHIFT) | (coord >> bin_width(span, res).trailing_zeros())
    };
    let time = |it: &Item| it.time;
    let source = |g: &mut dyn FnMut(&Item, u64) -> bool| {
        for_items(p.accesses, &mut |it| {
            trace_of(p.names, it.var).is_none() || g(it, offset(p, it.addr))
        })
    };
    let view = Binning {
        key: &key,
        dim: &time,
        span: t,
        budget,
        space: span,
        distinct: if p.accesses.unique_times() {
            p.accesses.len()
        } else {
            0
        },
        classes: None,
    };
    let binned = aggregate(&source, &[view])?
        .pop()
        .expect("aggregate gives one result per view");
    Ok(PanelBins { binned, span })
}

/// One WebGL scatter per drawn variable row of a panel, on axes `axes`;
/// the before side (axes `x`) takes the first colour, the after side the
/// colours from the second on, so the two views tell apart.
fn add_panel(plot: &mut Plot, p: &Panel, b: &PanelBins, axes: (&str, &str), side: &str) {
    let first_colour = usize::from(axes.0 != "x");
    for (k, (_, name)) in p.names.iter().enumerate() {
        let gs: Vec<&Group> = (b.binned.groups.iter())
            .filter(|g| g.space >> TRACE_SHIFT == k as u64)
            .collect();
        if gs.is_empty() {
            continue;
        }
        let counts: Vec<u64> = gs.iter().map(|g| g.count).collect();
        let px: Vec<f64> = trace_sizes(&counts).iter().map(|s| s.round()).collect();
        let custom =
            CustomData::of(|c: Field| CdCol::U64(gs.iter().map(|g| field(g, c)).collect()));
        let trace = Box::new(Scatter::<f64, f64>::default())
            .web_gl_mode(true)
            .mode(Mode::Markers)
            .x_axis(axes.0)
            .y_axis(axes.1)
            .name(format!("{side}: {name}"))
            .hover_template(hover());
        let x: Vec<f64> = gs.iter().map(|g| g.t_mean()).collect();
        let colour = PALETTE[(first_colour + k) % PALETTE.len()].to_string();
        plot.add_trace(
            Ext::new(*trace)
                .xy(Typed::floats(&x), Typed::uints(&offsets(&gs)))
                .custom(custom)
                .marker(PointMarker::solid(colour, OneOrMany::many(&px)))
                .boxed(),
        );
    }
}

/// Each group's lowest offset.
fn offsets(gs: &[&Group]) -> Vec<u64> {
    gs.iter().map(|g| g.coord_min).collect()
}

/// A hover field's value for a group.
fn field(g: &Group, c: Field) -> u64 {
    match c {
        Field::Count => g.count,
        Field::TimeFirst => g.t_min,
        Field::TimeLast => g.t_max,
        Field::OffsetLow => g.coord_min,
        Field::OffsetHigh => g.coord_max,
    }
}

fn hover() -> String {
    format!(
        "%{{fullData.name}}<br>{} accesses, times {}..{}<br>byte offsets {}..{}<extra></extra>",
        Field::Count.at(),
        Field::TimeFirst.at(),
        Field::TimeLast.at(),
        Field::OffsetLow.at(),
        Field::OffsetHigh.at()
    )
}

/// Two views side by side: the right one's axes follow the left one's.
fn scatter_layout(name: &str) -> Layout {
    let offset = format!("byte offset in {name}");
    Layout::new()
        .x_axis(
            Axis::new()
                .domain(&[0.0, 0.47])
                .title(Title::with_text("before: access order")),
        )
        .y_axis(Axis::new().title(Title::with_text(offset.as_str())))
        .x_axis2(
            Axis::new()
                .domain(&[0.53, 1.0])
                .anchor("y2")
                .matches("x")
                .title(Title::with_text("after (predicted): access order")),
        )
        .y_axis2(
            Axis::new()
                .anchor("x2")
                .title(Title::with_text(offset.as_str())),
        )
}

/// Paired bars: misses per level before and after.
fn misses_plot(levels: &[String], (before, after): (&[u64], &[u64])) -> Plot {
    let mut plot = Plot::new();
    for (side, m) in [("before (recorded)", before), ("after (predicted)", after)] {
        let y: Vec<u64> = (0..levels.len())
            .map(|i| m.get(i).copied().unwrap_or(0))
            .collect();
        plot.add_trace(Bar::new(levels.to_vec(), y).name(side));
    }
    plot.set_layout(
        Layout::new()
            .bar_mode(BarMode::Group)
            .x_axis(Axis::new().title(Title::with_text("cache level")))
            .y_axis(Axis::new().title(Title::with_text("misses"))),
    );
    plot
}

#[cfg(test)]
mod tests {
    use super::what_if_file;

    /// Every word of the layout is in the file name, so two paddings do
    /// not overwrite each other's page.
    #[test]
    fn layouts_with_arguments_get_files_of_their_own() {
        assert_eq!(what_if_file("A", "transpose"), "what_if_A_transpose.html");
        assert_eq!(what_if_file("A", "pad 64"), "what_if_A_pad_64.html");
        assert_ne!(what_if_file("A", "pad 64"), what_if_file("A", "pad 128"));
    }
}
