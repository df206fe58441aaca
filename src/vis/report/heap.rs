//! Figures of the allocation side: live heap over time per top site (as
//! massif and heaptrack_gui draw it), an icicle flame graph of allocated
//! bytes by call stack, a size-class histogram, and Steve's histogram of
//! macro lifetimes. Offline HTML pages like every other figure.
//!
//! The traces the `plotly` crate lacks (icicle) and the ones whose options
//! are simplest written directly are built as JSON values ([`JsonTrace`]).
use std::collections::HashMap;
use std::path::PathBuf;

use plotly::common::Title;
use plotly::layout::{Axis, BarMode};
use plotly::{Layout, Plot, Trace};
use serde::Serialize;
use serde_json::{json, Value};

use crate::filter::CsvOut;
use crate::filter::{
    lifetime_bins, live_series, size_class_label, HeapReport, HeapRun, LifetimeBins, LiveSeries,
};
use crate::vis::error::VisError;
use crate::vis::options::FigureOptions;
use crate::vis::page::html::{write_page, PageFigure, PageMeta};
use crate::vis::page::written::FigureReport;

/// A plotly.js trace written as a JSON object.
#[derive(Serialize, Clone)]
#[serde(transparent)]
pub(crate) struct JsonTrace(pub(crate) Value);

impl Trace for JsonTrace {
    fn to_json(&self) -> String {
        self.0.to_string()
    }
}

fn plot(traces: Vec<Value>, layout: Layout) -> Plot {
    let mut p = Plot::new();
    for t in traces {
        p.add_trace(Box::new(JsonTrace(t)));
    }
    p.set_layout(layout);
    p
}

fn axis(title: &str) -> Axis {
    Axis::new().title(Title::with_text(title))
}

/// The label of a site in figures: its innermost source frame.
pub type SiteLabel = (u32, String);

/// Writes `figures/heap_profile.html`: live heap over time (total and the
/// `top` sites, stacked), the icicle of bytes by stack and the size
/// histogram. `frames(stack)` names a stack's frames, innermost first.
/// With `save`, the live-heap series goes to `visinfo/heap_live.csv`.
pub fn heap_figures(
    run: &HeapRun,
    report: &HeapReport,
    top: &[SiteLabel],
    frames: &mut dyn FnMut(u32) -> Vec<String>,
    o: &FigureOptions,
) -> Result<FigureReport, VisError> {
    o.validate()?;
    if report.counts.allocs == 0 {
        return Err(VisError::Empty(format!(
            "The {} holds no allocation, so there is no heap to draw.",
            run.source
        )));
    }
    let mut report_out = FigureReport::default();
    let ids: Vec<u32> = top.iter().map(|t| t.0).collect();
    let live = live_series(run, &ids, 2000)?;
    let mut intro = vec![format!(
        "{} allocations, {} bytes, peak {} live bytes, from the {}.",
        report.counts.allocs, report.counts.bytes, report.counts.peak_live.0, run.source
    )];
    intro.extend(run.notes.iter().map(|w| format!("Note: {w}")));
    let figures = [
        live_figure(run, top, &live),
        flame_figure(run, report, frames),
        size_figure(report),
    ];
    report_out.html = write_page(
        &o.figures_dir,
        "heap_profile.html",
        "Heap profile",
        &intro,
        &figures,
        &PageMeta {
            command: "heap_figures".into(),
            shape: "live heap over time, allocations by site, sizes".into(),
            trace: o.provenance.clone(),
            analysis: o.analysis_id.clone(),
        },
    )?;
    report_out.points = live.0.len();
    if o.save {
        report_out.data_csv.push(save_live(top, &live, o)?);
    }
    Ok(report_out)
}

/// Live bytes over time, the top sites stacked, and all sites as a line.
fn live_figure(run: &HeapRun, top: &[SiteLabel], live: &LiveSeries) -> PageFigure {
    let (ts, total, per, high) = live;
    let mut traces = Vec::new();
    for ((_, label), ys) in top.iter().zip(per) {
        traces.push(json!({"type": "scatter", "mode": "lines", "x": ts, "y": ys,
            "name": label, "stackgroup": "sites", "line": {"shape": "hv"}}));
    }
    traces.push(
        json!({"type": "scatter", "mode": "lines", "x": ts, "y": total,
        "name": "all sites", "line": {"shape": "hv", "color": "black", "width": 1}}),
    );
    traces.push(
        json!({"type": "scatter", "mode": "lines", "x": ts, "y": high,
        "name": "all sites, highest between samples",
        "line": {"shape": "hv", "color": "grey", "width": 1, "dash": "dot"}}),
    );
    let unit = run.unit.name();
    PageFigure {
        heading: "Live heap over time, by allocation site".into(),
        note: format!(
            "Bytes live at each moment, drawn as steps: the {} sites with the highest peak, stacked, \
             and all sites, sampled at evenly spaced times and at the peak; the dotted line is the \
             highest total between two samples, so short spikes stay visible however many calls \
             the run made.",
            top.len()
        ),
        plot: plot(
            traces,
            Layout::new()
                .x_axis(axis(&format!("time ({unit})")))
                .y_axis(axis("live bytes")),
        ),
        height: 550,
    }
}

/// Allocated bytes by call stack, as an icicle (a flame graph).
fn flame_figure(
    run: &HeapRun,
    report: &HeapReport,
    frames: &mut dyn FnMut(u32) -> Vec<String>,
) -> PageFigure {
    let (ids, labels, parents, values) = icicle_nodes(run, report, frames);
    PageFigure {
        heading: "Allocated bytes by call stack (flame graph)".into(),
        note: "The program's outermost function at the top, callers above callees; a box's \
               width is the bytes allocated by the calls through it. Frames below main (the C \
               library's start-up) are left out. Click a box to zoom."
            .into(),
        plot: plot(
            vec![
                json!({"type": "icicle", "ids": ids, "labels": labels, "parents": parents,
                "values": values, "branchvalues": "total",
                "tiling": {"orientation": "v"},
                "hovertemplate": "%{label}<br>%{value} bytes<extra></extra>"}),
            ],
            Layout::new(),
        ),
        height: 700,
    }
}

/// Allocations and bytes per size class.
fn size_figure(report: &HeapReport) -> PageFigure {
    let used: Vec<usize> = (0..report.counts.classes.len())
        .filter(|&k| report.counts.classes[k].allocs > 0)
        .collect();
    let x: Vec<String> = used.iter().map(|&k| size_class_label(k)).collect();
    let counts: Vec<u64> = used
        .iter()
        .map(|&k| report.counts.classes[k].allocs)
        .collect();
    let bytes: Vec<u64> = used
        .iter()
        .map(|&k| report.counts.classes[k].bytes)
        .collect();
    let hist = plot(
        vec![
            // One offset group each: bars on two y axes are otherwise drawn
            // at the same place, the taller hiding the other.
            json!({"type": "bar", "x": x, "y": counts, "name": "allocations",
                "offsetgroup": "allocations"}),
            json!({"type": "bar", "x": x, "y": bytes, "name": "bytes", "yaxis": "y2",
                "offsetgroup": "bytes"}),
        ],
        Layout::new()
            .bar_mode(BarMode::Group)
            .x_axis(axis("requested size (bytes)"))
            .y_axis(axis("allocations"))
            .y_axis2(
                axis("bytes")
                    .overlaying("y")
                    .side(plotly::common::AxisSide::Right),
            ),
    );
    PageFigure {
        heading: "Allocation sizes".into(),
        note: "Allocations (left axis) and bytes (right axis) per size class, side by side.".into(),
        plot: hist,
        height: 450,
    }
}

/// Writes `visinfo/heap_live.csv`: time, all sites, then one column per
/// top site (`site<ID>`).
fn save_live(top: &[SiteLabel], live: &LiveSeries, o: &FigureOptions) -> Result<PathBuf, VisError> {
    let (ts, total, per, high) = live;
    let names: Vec<String> = top.iter().map(|(id, _)| format!("site{id}")).collect();
    let mut header = vec!["time", "all", "all_highest_until_next"];
    header.extend(names.iter().map(String::as_str));
    let mut out = CsvOut::create(&o.visinfo_dir, "heap_live.csv", &header)?;
    for i in 0..ts.len() {
        for v in [ts[i], total[i], high[i]] {
            out.num(v);
        }
        for p in per {
            out.num(p[i]);
        }
        out.end_row()?;
    }
    Ok(out.finish()?)
}

type Nodes = (Vec<String>, Vec<String>, Vec<String>, Vec<u64>);

/// The icicle's nodes: a root, then each stack's frames outermost first;
/// a node's value is the bytes allocated by every stack through it.
fn icicle_nodes(
    run: &HeapRun,
    report: &HeapReport,
    frames: &mut dyn FnMut(u32) -> Vec<String>,
) -> Nodes {
    let mut ids = vec!["n0".to_string()];
    let mut labels = vec!["all allocations".to_string()];
    let mut parents = vec![String::new()];
    let mut values = vec![report.counts.bytes];
    let mut index: HashMap<(usize, String), usize> = HashMap::new();
    let _ = run;
    for s in report.counts.sites.iter().filter(|s| s.bytes > 0) {
        let mut node = 0usize;
        let mut names = frames(s.stack);
        if names.is_empty() {
            names.push("(no stack)".into());
        }
        for name in names.into_iter().rev() {
            let next = ids.len();
            let id = *index.entry((node, name.clone())).or_insert(next);
            if id == next {
                ids.push(format!("n{id}"));
                labels.push(name);
                parents.push(format!("n{node}"));
                values.push(0);
            }
            values[id] += s.bytes;
            node = id;
        }
    }
    (ids, labels, parents, values)
}

/// Writes `figures/lifetime_histogram.html`: how many blocks lived for
/// each share of the run (Steve's macro lifetime, 1% bins), over all
/// freed blocks and, below, the short-lived ones (under 2%) in 0.02% bins.
/// With `save`, the lifetimes go to `visinfo/lifetimes.csv`.
pub fn lifetime_histogram(run: &HeapRun, o: &FigureOptions) -> Result<FigureReport, VisError> {
    o.validate()?;
    // The per-block table, when it is to be saved, is streamed to its file
    // as the blocks are freed (memory: a write buffer, whatever the count).
    let lifetime = format!("lifetime_{}", run.unit.name());
    let header = ["site", "size", "alloc", "free", &lifetime, "macro_percent"];
    let mut rows = match o.save && run.has_calls() {
        true => Some(crate::filter::CsvOut::create(
            &o.visinfo_dir,
            "lifetimes.csv",
            &header,
        )?),
        false => None,
    };
    let bins = lifetime_bins(run, |l, share| {
        if let (Some(w), Some(t)) = (rows.as_mut(), l.lifetime()) {
            w.num(l.stack as u64);
            w.num(l.size);
            w.num(l.alloc);
            w.num(l.free.unwrap_or(0));
            w.num(t);
            w.text(&format!("{share:.6}"));
            // A failed write is kept and reported by `finish`.
            w.row_done();
        }
    })?;
    if bins.freed == 0 {
        return Err(VisError::Empty(format!(
            "No block of the {} was freed, so no block has a lifetime (Steve counts only freed blocks).",
            run.source
        )));
    }
    let centres =
        |hi: f64| -> Vec<f64> { (0..100).map(|i| hi / 100.0 * (i as f64 + 0.5)).collect() };
    let (x1, y1) = (centres(100.0), &bins.all);
    let (x2, y2) = (centres(2.0), &bins.short);
    let all = plot(
        vec![json!({"type": "bar", "x": x1, "y": y1, "name": "blocks"})],
        Layout::new()
            .x_axis(axis("macro lifetime (% of the run)"))
            .y_axis(axis("blocks")),
    );
    let short = plot(
        vec![json!({"type": "bar", "x": x2, "y": y2, "name": "blocks"})],
        Layout::new()
            .x_axis(axis("macro lifetime (% of the run), 0-2%"))
            .y_axis(axis("blocks")),
    );
    let mut intro = vec![format!(
        "{} freed blocks of the {}; a block's macro lifetime is the share of the run's {} between its allocation and its free.",
        bins.freed,
        run.source,
        run.unit.name()
    )];
    let mut warnings = Vec::new();
    if bins.uncertain > 0 {
        warnings.push(format!(
            "{} of the {} blocks are in lifetime buckets that straddle a bin's edge (the profile keeps lifetimes in buckets under 0.2% wide, not one by one): each such bucket is counted in the bin of its middle, so these blocks may belong in the neighbouring bin; heap_profile calls records each block's lifetime.",
            bins.uncertain, bins.freed
        ));
    }
    if o.save && !run.has_calls() {
        warnings.push(format!(
            "the {} holds no calls, so there is no per-block table (visinfo/lifetimes.csv): record with heap_profile calls for it; the bins went to visinfo/lifetime_bins.csv.",
            run.source
        ));
    }
    intro.extend(
        warnings
            .iter()
            .chain(&run.notes)
            .map(|w| format!("Note: {w}")),
    );
    let figures = [
        PageFigure {
            heading: "Macro lifetimes, 0-100%".into(),
            note: "Short-lived blocks crowd the left; blocks near 100% live as long as the run (globals).".into(),
            plot: all,
            height: 450,
        },
        PageFigure {
            heading: "Short-lived blocks, 0-2%".into(),
            note: "The left edge of the figure above, enlarged.".into(),
            plot: short,
            height: 450,
        },
    ];
    let mut out = FigureReport {
        html: write_page(
            &o.figures_dir,
            "lifetime_histogram.html",
            "Block lifetimes",
            &intro,
            &figures,
            &PageMeta {
                command: "lifetime_histogram".into(),
                shape: "macro lifetimes of the heap blocks".into(),
                trace: o.provenance.clone(),
                analysis: o.analysis_id.clone(),
            },
        )?,
        points: bins.freed as usize,
        warnings,
        ..Default::default()
    };
    if let Some(w) = rows {
        out.data_csv.push(w.finish()?);
    }
    if o.save {
        out.data_csv.push(save_bins(&bins, o)?);
    }
    Ok(out)
}

/// Writes `visinfo/lifetime_bins.csv`: both histograms' bins (panel,
/// from and to in percent of the run, blocks).
fn save_bins(bins: &LifetimeBins, o: &FigureOptions) -> Result<PathBuf, VisError> {
    let header = ["panel", "from_percent", "to_percent", "blocks"];
    let mut w = CsvOut::create(&o.visinfo_dir, "lifetime_bins.csv", &header)?;
    for (panel, hi, counts) in [("all", 100.0, &bins.all), ("short", 2.0, &bins.short)] {
        let width = hi / counts.len() as f64;
        for (i, n) in counts.iter().enumerate() {
            w.text(panel);
            w.text(&format!("{:.2}", width * i as f64));
            w.text(&format!("{:.2}", width * (i + 1) as f64));
            w.num(*n);
            w.row_done();
        }
    }
    Ok(w.finish()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The live heap is drawn as steps (a value holds until the next
    /// sample), so a freed block drops where it is freed instead of
    /// sloping down to the next sample.
    #[test]
    fn the_live_heap_is_drawn_as_steps() {
        let run = crate::filter::heap::tests::late_free_run();
        let top = [(1, "site 1".to_string())];
        let live = live_series(&run, &[1], 20).unwrap();
        let fig = live_figure(&run, &top, &live);
        let v = serde_json::to_value(&fig.plot).unwrap();
        let traces = v["data"].as_array().unwrap();
        assert_eq!(traces.len(), 3);
        for t in traces {
            assert_eq!(t["line"]["shape"], "hv", "{t}");
            assert_eq!(t["x"].as_array().unwrap().len(), live.0.len());
        }
    }
}
