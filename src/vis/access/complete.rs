//! The complete memory access pattern: every drawn access of every variable.

use std::sync::Arc;

use plotly::common::{Anchor, ColorBar, ColorScale, ColorScaleElement, MarkerSymbol, Mode};
use plotly::common::{Orientation, Title};
use plotly::layout::{Axis, LayoutScene, Legend};
use plotly::{Layout, Plot, Scatter, Scatter3D};
use polars::prelude::DataFrame;

use crate::filter::CsvOut;
use crate::filter::VarId;
use crate::filter::{AccessBatches, VarSpan};
use crate::vis::error::VisError;
use crate::vis::input::aggregate::{aggregate_split, bin_width, Binned, Binning, ClassFn, Group};
use crate::vis::input::classes::{Annot, ClassesSeen};
use crate::vis::input::tables::{for_items, gather, op_index, op_name, FrameBatches, Item};
use crate::vis::input::tables::{Lines, Variables, OP_NAMES};
use crate::vis::options::FigureOptions;
use crate::vis::page::html::{write_page_of, Page, PageFigure, PageMeta};
use crate::vis::page::traces::mark_gaps;
use crate::vis::page::traces::{count_sizes, customdata_fields, time_marker, CdField, OneOrMany};
use crate::vis::page::traces::{draw_order, op_colour, symbol_3d, PointMarker, Typed, RAW_SIZE};
use crate::vis::page::traces::{group_fields, group_hover, CdCol, CustomData, Ext};
use crate::vis::page::traces::{hover_with_mix, mix_column, mix_marker, mix_value, MIX_NOTE};
use crate::vis::page::written::FigureReport;

/// File name of the page written by [`complete_memory_access_pattern`].
pub(crate) const FILE: &str = "complete_memory_access_pattern.html";

customdata_fields! {
    /// The customdata of one exact access, in row order.
    AccessField {
        /// Access order.
        Time,
        /// The variable's name.
        Variable,
        /// Load, store or modify.
        Operation,
        Thread,
        /// Occurrence of the address.
        Occurrence,
        /// Source line.
        Source,
        Address,
        /// The element touched (`X[3][4]`).
        Element,
        /// Pattern label of the (variable, line) pair.
        Pattern,
    }
}

/// Hover of one exact access.
fn hover_exact() -> String {
    use AccessField::*;
    format!(
        "order (time) {time}<br>address 0x{addr}<br>variable {var}<br>element {elem}<br>operation {op}<br>thread {tid}<br>occurrence {occ}<br>source {src}<br>pattern {pat}",
        time = Time.at(),
        addr = Address.hex(),
        var = Variable.at(),
        elem = Element.at(),
        op = Operation.at(),
        tid = Thread.at(),
        occ = Occurrence.at(),
        src = Source.at(),
        pat = Pattern.at(),
    )
}

customdata_fields! {
    /// The customdata of one aggregated group, in row order; thread,
    /// source and pattern are those of the group's earliest access.
    GroupField {
        /// Accesses in the group.
        Count,
        TimeMin,
        TimeMax,
        /// The variable's name.
        Variable,
        /// Bytes from the group's lowest address (the point's own address
        /// coordinate, which the hover reads from there) to its highest: a
        /// byte or two a point where the address itself takes eight.
        AddrSpan,
        OccMin,
        OccMax,
        Loads,
        Stores,
        Modifies,
        Thread,
        Source,
        Pattern,
    }
}

group_fields!(GroupField, "accesses");

/// Hover of one aggregated group whose lowest address the hover reads
/// from `a0` (a placeholder such as `%{z:x}`, the 3D point's own address
/// coordinate): the address is not repeated in the customdata, which
/// saves 12 bytes a point.
fn hover_group(a0: &str) -> String {
    group_hover::<GroupField>(&format!(
        "lowest address 0x{a0}, highest {a1} bytes above<br>variable {var}",
        a1 = GroupField::AddrSpan.at(),
        var = GroupField::Variable.at(),
    ))
}

/// Bits of an aggregation key below the variable rank (the address bin).
const RANK_SHIFT: u32 = 27;

/// The variable rank of an aggregation key.
fn key_rank(space: u64) -> u32 {
    (space >> RANK_SHIFT) as u32
}

/// A hover template ending the trace's text: `base`, then the class name
/// of the trace's points when the figure is coloured by class.
pub(crate) fn hover_with_class(base: &str, class: Option<&str>) -> String {
    match class {
        Some(c) => format!(
            "{base}<br><b>{}</b><extra></extra>",
            crate::vis::page::html::escape_html(c)
        ),
        None => format!("{base}<extra></extra>"),
    }
}

pub(crate) fn symbol(op: usize) -> MarkerSymbol {
    match op {
        0 => MarkerSymbol::Circle,
        1 => MarkerSymbol::X,
        2 => MarkerSymbol::Diamond,
        _ => MarkerSymbol::Square,
    }
}

/// Draws every access of `acc` to `figures/complete_memory_access_pattern.html`.
///
/// The table in memory is drawn as [`complete_pattern_of`] draws a stream;
/// see there.
///
/// # Errors
/// Bad options, tables not following the schema, an empty access table, or
/// a file that cannot be written.
pub fn complete_memory_access_pattern(
    acc: &DataFrame,
    vars: &DataFrame,
    lines: &DataFrame,
    o: &FigureOptions,
) -> Result<FigureReport, VisError> {
    complete_pattern_of(&FrameBatches::read(acc)?, vars, lines, o)
}

/// Draws every access of `src` to `figures/complete_memory_access_pattern.html`.
///
/// The page holds (a) the original tool's 3D scatter: x = occurrence of the
/// address, y = variable (ordered by base address), z = address, colour =
/// time; and (b) a 2D WebGL scatter of address over access order with one
/// colour per variable and one marker symbol per operation. Hover shows
/// order, hex address, variable, operation, thread, occurrence and source
/// line. `src` is drawn as given: the caller selects the memory kinds.
/// With `save`, `visinfo/complete_memory_access_pattern.csv` gets one row
/// per access (`index` is its row in `src`).
///
/// Above the 3D view's budget ([`FigureOptions::budget_3d`]) both
/// views show exact (variable, address bin, occurrence or time bin)
/// groups, within their budgets: in 3D their marker size grows with their
/// count; in 2D they are drawn as a raster ([`RasterTrace`]: a square
/// block a group, one size for each trace's groups, from the mean count of
/// those that span more than one address, see [`group_size_2d`]) gridded
/// anew when the user zooms, and the hover gives the group's fields.
///
/// Cost: within the budget, one pass that keeps the n accesses to draw
/// them. Above it, the aggregation's one pass (see [`aggregate`]), after
/// a pass for the spans (time, occurrence, each variable's addresses)
/// unless `src` knows them from its tables; memory O(budget), whatever
/// the number of accesses. With `save`, one more pass writes the CSV.
///
/// # Errors
/// Bad options, tables not following the schema, no access to draw, an
/// access list that cannot be read, or a file that cannot be written.
pub fn complete_pattern_of(
    src: &dyn AccessBatches,
    vars: &DataFrame,
    lines: &DataFrame,
    o: &FigureOptions,
) -> Result<FigureReport, VisError> {
    o.validate()?;
    let v = Variables::read(vars)?;
    let l = Lines::read(lines)?;
    let n = src.len();
    if n == 0 {
        return Err(VisError::Empty(
            "The access table is empty, so there is no memory access pattern to draw. Check the memory kinds selected and that the traced program accessed memory.".into(),
        ));
    }
    // Within the 3D view's budget (the smaller) every access is drawn: keep
    // them; above it, only the spans are needed before aggregating.
    let budgets = (o.budget_3d(), o.point_budget);
    let exact = if n <= budgets.0 as u64 {
        Some(gather(src)?)
    } else {
        None
    };
    let sum = match (&exact, src.var_spans()) {
        (Some(items), _) => Spans::of(items.iter()),
        (None, Some(spans)) => Spans::from_tables(&spans),
        (None, None) => Spans::scan(src)?,
    };
    let sparse = src.classes().is_some_and(|c| c.sparse);
    let ann = Annot::new(o, &sum.classes, sparse)?;
    let (present, rank_of, names) = rank_variables(&sum.seen, &v);
    let names: Arc<Vec<String>> = Arc::new(names);
    let sources: Arc<Vec<String>> = Arc::new(l.sources().to_vec());
    let mut labels = Labels::new(&present, &rank_of, &v, names, sources, ann);
    labels.max_occ = sum.occ.1;
    let (t_lo, t_hi) = sum.time;

    let mut report = FigureReport::default();
    let title;
    let (fig3d, mut fig2d) = match &exact {
        Some(items) => {
            report.points = items.len();
            title = format!("Complete memory access pattern ({n} accesses)");
            exact_figures(items, &v, &rank_of, &labels, t_lo, t_hi)
        }
        None => {
            let (b3, b2) = aggregate_both(src, &rank_of, &labels, &sum, budgets)?;
            report.points = b3.groups.len().max(b2.groups.len());
            title = format!(
                "Complete memory access pattern ({n} accesses, aggregated into {} + {} points)",
                b3.groups.len(),
                b2.groups.len()
            );
            report.aggregated = Some(format!(
                "{n} accesses exceed the point budget ({} points in 3D, {} in 2D): each point is the exact group of accesses to one address bin of a variable (3D: at most {} bins per variable, occurrence bins {} wide; 2D: at most {} bins per variable, time bins {} accesses wide); hover gives the count, and so does marker size in 3D (2D: drawn as a raster redrawn on zoom, one square block a group, of one size per variable and operation, growing with the mean count of its groups that span more than one address).",
                budgets.0, budgets.1, b3.res, b3.time_width, b2.res, b2.time_width
            ));
            group_figures(&b3, &b2, &labels, t_lo, t_hi)
        }
    };
    mark_gaps(&mut fig2d, &[("x", &o.gaps, (t_lo, t_hi))]);
    if crate::vis::options::interrupted() {
        return Err(VisError::Interrupted);
    }
    report.html = write_complete_page(&labels, [fig3d, fig2d], &title, n, &report, o)?;
    if o.save {
        report.data_csv.push(save_csv(src, &rank_of, &labels, o)?);
    }
    Ok(report)
}

/// What the complete pattern needs to know of its accesses before it bins
/// them: the variables present, each one's address range, the spans of
/// time and occurrence, and the colour classes met. O(variables) memory.
struct Spans {
    /// Per variable id, whether some access has it.
    seen: Vec<bool>,
    /// Per variable id, its lowest and highest address accessed.
    addr: Vec<(u64, u64)>,
    time: (u64, u64),
    occ: (u64, u64),
    classes: ClassesSeen,
}

impl Spans {
    fn new() -> Spans {
        Spans {
            seen: Vec::new(),
            addr: Vec::new(),
            time: (u64::MAX, 0),
            occ: (u64::MAX, 0),
            classes: ClassesSeen::default(),
        }
    }

    #[inline]
    fn add(&mut self, it: &Item) {
        let v = it.var.index();
        if v >= self.seen.len() {
            self.seen.resize(v + 1, false);
            self.addr.resize(v + 1, (u64::MAX, 0));
        }
        self.seen[v] = true;
        let a = &mut self.addr[v];
        *a = (a.0.min(it.addr), a.1.max(it.addr));
        self.time = (self.time.0.min(it.time), self.time.1.max(it.time));
        self.occ = (self.occ.0.min(it.occ), self.occ.1.max(it.occ));
        self.classes.add(it);
    }

    /// The spans of accesses in memory.
    fn of<'a>(items: impl Iterator<Item = &'a Item>) -> Spans {
        let mut s = Spans::new();
        items.for_each(|it| s.add(it));
        s
    }

    /// The spans the tables give (see [`AccessBatches::var_spans`]): those
    /// a pass would find, since every variable's first access to a
    /// location has occurrence 1 and uncoloured accesses are all class 0.
    fn from_tables(spans: &[Option<VarSpan>]) -> Spans {
        let mut s = Spans::new();
        s.seen = spans.iter().map(Option::is_some).collect();
        s.addr = spans
            .iter()
            .map(|x| x.map_or((u64::MAX, 0), |x| x.addr))
            .collect();
        for x in spans.iter().flatten() {
            s.time = (s.time.0.min(x.time.0), s.time.1.max(x.time.1));
            s.occ = (1, s.occ.1.max(x.max_occ));
            s.classes = ClassesSeen::uncoloured();
        }
        s
    }

    /// The spans from one pass over `src`.
    fn scan(src: &dyn AccessBatches) -> Result<Spans, VisError> {
        let mut s = Spans::new();
        for_items(src, &mut |it| {
            s.add(it);
            true
        })?;
        Ok(s)
    }
}

/// The variables present (`seen` by id), ordered by base address, and the
/// row (rank) of each variable id on the plots' variable axis, with the
/// name of each row. Variables sharing a name (heap blocks grouped by
/// allocation site) share a row, placed at their lowest block. Ids not
/// present rank `u32::MAX`.
fn rank_variables(seen: &[bool], v: &Variables) -> (Vec<VarId>, Vec<u32>, Vec<String>) {
    let max_id = seen.len().saturating_sub(1);
    let mut present: Vec<VarId> = (0..seen.len() as u32)
        .map(VarId)
        .filter(|&i| seen[i.index()])
        .collect();
    present.sort_by_key(|&i| (v.get(i).map_or(u64::MAX, |x| x.base), i));
    let mut rank_of = vec![u32::MAX; max_id + 1];
    let mut names: Vec<String> = Vec::new();
    let mut rank_by_name: std::collections::HashMap<String, u32> = Default::default();
    for &id in &present {
        let name = v.name(id);
        let r = *rank_by_name.entry(name.clone()).or_insert_with(|| {
            names.push(name);
            names.len() as u32 - 1
        });
        rank_of[id.index()] = r;
    }
    (present, rank_of, names)
}

/// Exact groups of the accesses for both views, within the budgets
/// (3D, 2D): (variable, address bin, occurrence bin) for the 3D view, whose x
/// axis is the occurrence, and (variable, address bin, time bin) for the
/// 2D view. Address bins are per variable, over its own address range;
/// groups never mix variables, and count their accesses per colour class
/// when the figure has classes. Both searches share their passes over
/// `src`.
fn aggregate_both(
    src: &dyn AccessBatches,
    rank_of: &[u32],
    labels: &Labels,
    sum: &Spans,
    (budget_3d, budget_2d): (usize, usize),
) -> Result<(Binned, Binned), VisError> {
    // Per-rank address ranges, for per-variable address bins.
    let nv = labels.names.len();
    let mut lo = vec![u64::MAX; nv];
    let mut hi = vec![0u64; nv];
    for (id, &(a0, a1)) in sum.addr.iter().enumerate() {
        if sum.seen[id] {
            let r = rank_of[id] as usize;
            lo[r] = lo[r].min(a0);
            hi[r] = hi[r].max(a1);
        }
    }
    let key = |it: &Item, coord: u64, res: u64| {
        let r = rank_of[it.var.index()] as usize;
        let width = bin_width(hi[r] - lo[r] + 1, res);
        ((r as u64) << RANK_SHIFT) | ((coord - lo[r]) >> width.trailing_zeros())
    };
    let class_of = |it: &Item| labels.ann.class(it);
    let classes = (labels.ann.classes.as_ref()).map(|c| (&class_of as &ClassFn, c.labels.len()));
    let occ_of = |it: &Item| it.occ;
    let time_of = |it: &Item| it.time;
    // Every address bin is one byte wide from the widest variable's span.
    let widest = (0..nv)
        .map(|r| hi[r].saturating_sub(lo[r]) + 1)
        .max()
        .unwrap_or(1);
    let by_occ = Binning {
        key: &key,
        dim: &occ_of,
        span: sum.occ,
        budget: budget_3d,
        space: widest,
        distinct: 0,
        classes,
    };
    let by_time = Binning {
        dim: &time_of,
        span: sum.time,
        budget: budget_2d,
        distinct: if src.unique_times() { src.len() } else { 0 },
        ..by_occ
    };
    let mut b = aggregate_split(src, &[by_occ, by_time])?;
    let b2 = b.pop().expect("aggregate gives one result per view");
    let b3 = b.pop().expect("aggregate gives one result per view");
    Ok((b3, b2))
}

/// Writes the page: the intro (what the views show, the colour classes,
/// the aggregation) and the 3D and 2D figures.
fn write_complete_page(
    labels: &Labels,
    [fig3d, fig2d]: [Plot; 2],
    title: &str,
    n: u64,
    report: &FigureReport,
    o: &FigureOptions,
) -> Result<std::path::PathBuf, VisError> {
    // Aggregated, the 2D view is a raster of square blocks: stores differ
    // from loads by shade (or, with classes, by trace), not by symbol.
    let ops_2d = if report.aggregated.is_some() {
        "one block per group of accesses, stores in a darker shade"
    } else {
        "one symbol per operation (circle load, x store, diamond modify)"
    };
    let intro_text = match &labels.ann.classes {
        None => format!("Each point is a memory access. 3D: occurrence of the address (x), variable (y), address (z), coloured from sooner (dark) to later (yellow). 2D: address over access order, one colour per variable, {ops_2d}."),
        Some(c) => format!(
            "Each point is a memory access. 3D: occurrence of the address (x), variable (y), address (z). 2D: address over access order, {}. Colour: {}, from green (best) to red ({}). {}",
            if report.aggregated.is_some() {
                "one block per group of accesses"
            } else {
                ops_2d
            },
            c.title,
            c.labels.last().map_or("", |l| l.as_str()),
            if report.aggregated.is_some() {
                MIX_NOTE
            } else {
                "Each class is its own trace: click a legend entry to hide it."
            }
        ),
    };
    let mut intro = vec![intro_text];
    if let Some(d) = &report.aggregated {
        intro.push(d.clone());
    }
    let figures = [
        PageFigure {
            heading: "Accesses by occurrence, variable and address".into(),
            note: "Drag to rotate, scroll to zoom; hover a point for its details.".into(),
            plot: fig3d,
            height: 800,
        },
        PageFigure {
            heading: "Address over time".into(),
            note: "Click a legend entry to hide it, double-click to show it alone.".into(),
            plot: fig2d,
            height: labels.height_2d() as u32,
        },
    ];
    let meta = PageMeta {
        command: "complete_memory_access_pattern".into(),
        shape: match labels.names.len() {
            1 => format!("{n} accesses of 1 variable"),
            k => format!("{n} accesses of {k} variables"),
        },
        trace: o.provenance.clone(),
        analysis: o.analysis_id.clone(),
    };
    // The 3D view is the costly one to draw without a GPU (a scene takes
    // about 1.6 s to set up in software, plus 0.2 ms a point): it is drawn
    // on request there, so that the page opens at the 2D view's cost.
    let page = Page {
        title,
        intro: &intro,
        links: &[],
        figures: &figures,
        meta: &meta,
        on_demand: Some(0),
    };
    write_page_of(&o.figures_dir, FILE, &page)
}

/// Writes `visinfo/complete_memory_access_pattern.csv`: one row per access
/// (`index` is its row in `src`), with its class when the figure is
/// coloured by class. One pass over `src`.
fn save_csv(
    src: &dyn AccessBatches,
    rank_of: &[u32],
    labels: &Labels,
    o: &FigureOptions,
) -> Result<std::path::PathBuf, VisError> {
    let mut header = vec![
        "index",
        "address",
        "variable",
        "occurrence",
        "operation",
        "thread",
        "time",
    ];
    if labels.ann.classes.is_some() {
        header.push("class");
    }
    let mut w = CsvOut::create(
        &o.visinfo_dir,
        "complete_memory_access_pattern.csv",
        &header,
    )?;
    for_items(src, &mut |it| {
        w.num(it.row);
        w.hex(it.addr);
        w.text(&labels.names[rank_of[it.var.index()] as usize]);
        w.num(it.occ);
        w.text(op_name(it.op));
        w.num(it.tid as u64);
        w.num(it.time);
        if let Some(c) = &labels.ann.classes {
            w.text(&c.labels[labels.ann.class(it) as usize]);
        }
        w.row_done()
    })?;
    Ok(w.finish()?)
}

/// Longest variable name shown whole on the 3D view's variable axis; longer
/// names are cut with an ellipsis there (hover shows them whole), so that
/// they fit beside the scene instead of being clipped.
const SCENE_LABEL_CHARS: usize = 18;

/// Most tick steps on a whole-number axis of a 3D scene.
const INTEGER_STEPS: u64 = 8;

/// The tick step of a whole-number axis from 0 to `max`: the smallest of
/// 1, 2, 5, 10, 20, 50, ... that spans it in at most [`INTEGER_STEPS`]
/// steps.
pub(crate) fn integer_step(max: u64) -> u64 {
    let target = max.div_ceil(INTEGER_STEPS).max(1);
    let mut power = 1u64;
    loop {
        for m in [1, 2, 5] {
            if power.saturating_mul(m) >= target {
                return power.saturating_mul(m);
            }
        }
        power = power.saturating_mul(10);
    }
}

/// A 3D scene's axis of whole numbers from 0 to `max` (occurrences, row
/// and column indices): ticks at a whole step ([`integer_step`]) printed
/// as integers. Left to itself plotly picks a step of 0.5 on a short range,
/// which the integer format prints `0, 1, 1, 2, 2`. A scene's ticks do not
/// follow the camera's zoom, so a fixed step serves every view of it.
pub(crate) fn integer_axis(title: &str, max: u64) -> Axis {
    Axis::new()
        .title(Title::with_text(title))
        .tick_format("d")
        .dtick(integer_step(max) as f64)
}

/// The 3D view's axes: occurrence as whole numbers, one tick per
/// variable, and hex addresses.
fn scene(names: &[String], max_occ: u64) -> LayoutScene {
    let occ = integer_axis("occurrence", max_occ);
    let label = |n: &String| {
        if n.chars().count() > SCENE_LABEL_CHARS {
            let cut: String = n.chars().take(SCENE_LABEL_CHARS - 1).collect();
            format!("{cut}…")
        } else {
            n.clone()
        }
    };
    LayoutScene::new()
        .x_axis(occ)
        .y_axis(
            Axis::new()
                .title(Title::with_text("variable"))
                .tick_values((0..names.len()).map(|r| r as f64).collect())
                .tick_text(names.iter().map(label).collect()),
        )
        .z_axis(
            Axis::new()
                .title(Title::with_text("address"))
                .tick_format("x")
                .tick_prefix("0x"),
        )
}

/// Names, sources and memory-kind panels of the variables drawn, by rank
/// (the variables present, ordered by base address).
struct Labels {
    names: Arc<Vec<String>>,
    /// What a hover calls each rank: its name, with the full path of a
    /// block drawn under its owner's name (`x (x.coefs)`).
    hover_names: Arc<Vec<String>>,
    sources: Arc<Vec<String>>,
    /// Panel of each rank (not of each variable: blocks grouped under one
    /// name share a rank), an index into `kinds`.
    panel: Vec<usize>,
    /// Memory kinds present, bottom panel first: globals, heap, stack (the
    /// order of their addresses).
    kinds: Vec<&'static str>,
    /// The largest occurrence drawn, for the 3D view's ticks.
    max_occ: u64,
    /// Colour classes and pattern labels.
    ann: Annot,
}

/// Memory kinds in panel order, with their axis titles.
const KINDS: [(&str, &str); 4] = [
    ("G", "global address"),
    ("H", "heap address"),
    ("S", "stack address"),
    ("", "address"),
];

impl Labels {
    fn new(
        present: &[VarId],
        rank_of: &[u32],
        v: &Variables,
        names: Arc<Vec<String>>,
        sources: Arc<Vec<String>>,
        ann: Annot,
    ) -> Labels {
        let kind_of = |id: VarId| {
            let scope = v.get(id).map_or("", |x| x.scope.as_str());
            KINDS
                .iter()
                .position(|k| k.0 == scope)
                .unwrap_or(KINDS.len() - 1)
        };
        let mut used = [false; KINDS.len()];
        for &id in present {
            used[kind_of(id)] = true;
        }
        let order: Vec<usize> = (0..KINDS.len()).filter(|&k| used[k]).collect();
        // A rank's panel is that of its first (lowest) variable: the
        // variables of one rank share a name and so a memory kind.
        let mut panel = vec![usize::MAX; names.len()];
        let mut hover_names = names.to_vec();
        for &id in present {
            let slot = &mut panel[rank_of[id.index()] as usize];
            if *slot == usize::MAX {
                *slot = order.iter().position(|&k| k == kind_of(id)).unwrap_or(0);
                hover_names[rank_of[id.index()] as usize] = v.hover_name(id);
            }
        }
        Labels {
            names,
            hover_names: Arc::new(hover_names),
            sources,
            max_occ: 0,
            ann,
            panel,
            kinds: order.iter().map(|&k| KINDS[k].1).collect(),
        }
    }

    /// The plotly y axis of rank `r`'s panel: `y`, `y2`, `y3`.
    fn axis(&self, r: usize) -> String {
        match self.panel[r] {
            0 => "y".to_string(),
            p => format!("y{}", p + 1),
        }
    }

    /// Height in pixels of the 2D view: 650, or 360 per panel.
    fn height_2d(&self) -> usize {
        match self.kinds.len() {
            0 | 1 => 650,
            n => 360 * n,
        }
    }

    /// The 2D layout: access order along a shared x axis, and one address
    /// panel per memory kind, so that heap, stack and globals, which lie far
    /// apart, each fill a panel instead of a thin band of one axis.
    fn layout_2d(&self) -> Layout {
        let n = self.kinds.len().max(1);
        let gap = if n > 1 { 0.06 } else { 0.0 };
        let h = (1.0 - gap * (n - 1) as f64) / n as f64;
        let axis = |p: usize| {
            let lo = p as f64 * (h + gap);
            Axis::new()
                .title(Title::with_text(
                    self.kinds.get(p).copied().unwrap_or("address"),
                ))
                .tick_format("x")
                .tick_prefix("0x")
                .domain(&[lo, (lo + h).min(1.0)])
                .anchor("x")
        };
        let mut l = Layout::new()
            .x_axis(Axis::new().title(Title::with_text("access order (time)")))
            .y_axis(axis(0))
            .hover_mode(plotly::layout::HoverMode::Closest)
            .height(self.height_2d());
        if n > 1 {
            l = l.y_axis2(axis(1));
        }
        if n > 2 {
            l = l.y_axis3(axis(2));
        }
        if n > 3 {
            l = l.y_axis4(axis(3));
        }
        l
    }
}

/// The 2D view's marker of the raw points of variable rank `r`, class `c`
/// and operation `oi`: [`RAW_SIZE`] pixels in the class colour with
/// classes, else in the variable's shade.
fn marker_2d(lab: &Labels, r: usize, c: usize, oi: usize) -> PointMarker {
    let colour = match &lab.ann.classes {
        Some(ci) => ci.colours[c].clone(),
        None => op_colour(r, oi),
    };
    PointMarker::plain(colour, OneOrMany::One(RAW_SIZE)).symbol(symbol(oi))
}

/// A trace of the aggregated 2D view, drawn by the page as a raster: the
/// page's script (see [`crate::vis::page::html`]) turns its points (x: the midpoint
/// of the group's first and last time, `y`: lowest address, `z`: colour
/// value with classes) into a plotly
/// `heatmap` over the axes' visible range with one cell a pixel, a block
/// of `meta.raster.size` pixels coloured around each point and the other
/// cells transparent, rebuilt whenever the user zooms or pans. Hovering a
/// block gives its point's customdata row followed by the point's `x` and
/// `y`. plotly draws a heatmap on a 2D canvas; 200 000 WebGL markers took
/// seconds to draw without a graphics processor (docs/PERFORMANCE.md,
/// 2026-11-27).
#[derive(serde::Serialize, Clone)]
struct RasterTrace {
    /// Always `heatmap`: what plotly draws once the page has built the grid.
    #[serde(rename = "type")]
    kind: &'static str,
    name: String,
    #[serde(rename = "legendgroup")]
    legend_group: String,
    #[serde(rename = "showlegend")]
    show_legend: bool,
    #[serde(rename = "yaxis")]
    y_axis: String,
    #[serde(rename = "hovertemplate")]
    hover_template: String,
    /// Gaps (cells without a point) are not hovered.
    #[serde(rename = "hoverongaps")]
    hover_on_gaps: bool,
    #[serde(rename = "colorscale")]
    colour_scale: ColorScale,
    zmin: f64,
    zmax: f64,
    #[serde(rename = "showscale")]
    show_scale: bool,
    #[serde(rename = "colorbar", skip_serializing_if = "Option::is_none")]
    colour_bar: Option<ColorBar>,
    meta: RasterMeta,
}

/// What marks a trace as drawn by the page as a raster.
#[derive(serde::Serialize, Clone)]
struct RasterMeta {
    raster: RasterSize,
}

/// How the page draws a raster trace's points.
#[derive(serde::Serialize, Clone)]
struct RasterSize {
    /// The side in pixels of the block drawn around each point.
    size: f64,
    /// The customdata columns (a group's first and last time) whose
    /// midpoint is a point's x: the trace carries no x of its own, which
    /// saves 4 to 8 bytes a point.
    x: [usize; 2],
}

/// The raster trace ([`RasterTrace`]) of the groups `gs` of variable rank
/// `r` and main operation `oi`: blocks of one size for all of them
/// ([`group_size_2d`]), coloured by their mix of classes with classes (the
/// colour bar shown when `scale`), else in the variable's shade for the
/// operation.
fn raster_trace_2d(
    lab: &Labels,
    gs: &[&Group],
    r: usize,
    oi: usize,
    scale: bool,
) -> Ext<RasterTrace> {
    let counts: Vec<u64> = gs.iter().copied().map(footprint_2d).collect();
    let custom = group_custom(gs, lab);
    let cols = custom.cols.len();
    let (colour_scale, values, colour_bar) = match &lab.ann.classes {
        Some(ci) => {
            let values: Vec<f64> = gs.iter().map(|g| mix_value(&g.classes)).collect();
            let m = mix_marker(&values, &ci.labels, OneOrMany::One(RAW_SIZE), scale);
            let s = m.color_scale.expect("a mix marker has a colour scale");
            (s, Some(Typed::floats(&values)), m.color_bar)
        }
        None => {
            let c = op_colour(r, oi);
            let s = ColorScale::Vector(vec![
                ColorScaleElement(0.0, c.clone()),
                ColorScaleElement(1.0, c),
            ]);
            (s, None, None)
        }
    };
    // The page appends the point's x and y to its customdata row: the
    // lowest address is the row's last field.
    let address = format!("%{{customdata[{}]:x}}", cols + 1);
    let t = RasterTrace {
        kind: "heatmap",
        name: format!("{} mostly {}", lab.names[r], OP_NAMES[oi]),
        legend_group: lab.names[r].clone(),
        show_legend: true,
        y_axis: lab.axis(r),
        hover_template: hover_of_groups(lab, &address),
        hover_on_gaps: false,
        colour_scale,
        zmin: 0.0,
        zmax: 1.0,
        show_scale: scale && colour_bar.is_some(),
        colour_bar,
        meta: RasterMeta {
            raster: RasterSize {
                size: group_size_2d(&counts),
                x: [GroupField::TimeMin.index(), GroupField::TimeMax.index()],
            },
        },
    };
    let mut e = Ext::new(t).custom(custom);
    e.y = Some(Typed::uints(
        &gs.iter().map(|g| g.coord_min).collect::<Vec<_>>(),
    ));
    e.z = values;
    e
}

/// How many raw points a 2D group stands for, as far as the area they
/// would cover goes: its count, except for a group of one address (a loop
/// counter's accesses in one time bin), whose raw points lie on one
/// horizontal line that the neighbouring time bins' points continue, so a
/// raw access's size covers it. Loop counters' groups at 10 to 14 px were
/// most of the complete page's drawing time under software WebGL
/// (docs/PERFORMANCE.md, 2026-11-27), when groups were WebGL markers.
fn footprint_2d(g: &Group) -> u64 {
    if g.coord_min == g.coord_max {
        1
    } else {
        g.count
    }
}

/// The one block (marker) size, in pixels, of a 2D trace of aggregated groups
/// with these `counts` (each a [`footprint_2d`]): a raw access's ([`RAW_SIZE`]) when the groups hold
/// one access each, growing with the square root of their mean count (so
/// that the trace covers about the area its raw points would) up to 15.
/// One size for the whole trace, where a size per point (growing with its
/// count) made plotly.js take about three times as long to draw the view
/// without a GPU (docs/PERFORMANCE.md, 2026-11-26); the hover gives each
/// point's count.
fn group_size_2d(counts: &[u64]) -> f64 {
    let total: u64 = counts.iter().sum();
    let mean = total as f64 / counts.len().max(1) as f64;
    (RAW_SIZE * mean.max(1.0).sqrt()).min(15.0).round()
}

/// A 3D scatter of markers, its data to be set by [`Ext`].
pub(crate) fn scatter_3d() -> Box<Scatter3D<f64, f64, f64>> {
    Box::new(Scatter3D::default()).mode(Mode::Markers)
}

/// A 2D WebGL scatter of markers, its data to be set by [`Ext`].
fn scatter_2d() -> Box<Scatter<f64, f64>> {
    Box::new(Scatter::default())
        .web_gl_mode(true)
        .mode(Mode::Markers)
}

/// A 2D trace's name, legend group and whether it shows in the legend:
/// with classes, one legend entry per class (its first trace); else one
/// per (variable, operation), grouped by variable.
fn legend_2d(
    lab: &Labels,
    r: usize,
    c: usize,
    what: &str,
    shown: &mut [bool],
) -> (String, String, bool) {
    match &lab.ann.classes {
        Some(ci) => {
            let first = !shown[c];
            shown[c] = true;
            (ci.labels[c].clone(), ci.labels[c].clone(), first)
        }
        None => (
            format!("{} {what}", lab.names[r]),
            lab.names[r].clone(),
            true,
        ),
    }
}

/// The class name of class `c` for hover text, when there are classes.
fn class_name(lab: &Labels, c: usize) -> Option<&str> {
    lab.ann.classes.as_ref().map(|ci| ci.labels[c].as_str())
}

/// Rows split by class (one bucket without classes).
fn by_class(lab: &Labels, a: &[Item], rows: impl Iterator<Item = usize>) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); lab.ann.n_classes()];
    for k in rows {
        out[lab.ann.class(&a[k]) as usize].push(k);
    }
    out
}

/// The exact views: every access a point, with its customdata.
fn exact_figures(
    a: &[Item],
    v: &Variables,
    rank_of: &[u32],
    lab: &Labels,
    t_lo: u64,
    t_hi: u64,
) -> (Plot, Plot) {
    let d = ExactData::new(a, v, rank_of, lab);
    let p3 = exact_figure_3d(&d, t_lo, t_hi);
    let p2 = exact_figure_2d(&d);
    (p3, p2)
}

/// What the exact views draw beside the access table: each access's
/// variable rank and element name.
struct ExactData<'a> {
    a: &'a [Item],
    lab: &'a Labels,
    /// Variable rank of each access.
    ranks: Vec<u32>,
    /// Element name of each access, an index into `elem_names`.
    elem: Vec<u32>,
    /// Element names (`X[3][4]`), each once.
    elem_names: Arc<Vec<String>>,
}

impl<'a> ExactData<'a> {
    fn new(a: &'a [Item], v: &Variables, rank_of: &[u32], lab: &'a Labels) -> Self {
        let ranks: Vec<u32> = a.iter().map(|it| rank_of[it.var.index()]).collect();
        let mut elem_ids: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
        let mut elem_names: Vec<String> = Vec::new();
        let elem: Vec<u32> = a
            .iter()
            .map(|it| {
                let e = v.element(it.var, it.addr);
                *elem_ids.entry(e).or_insert_with_key(|e| {
                    elem_names.push(e.clone());
                    elem_names.len() as u32 - 1
                })
            })
            .collect();
        ExactData {
            a,
            lab,
            ranks,
            elem,
            elem_names: Arc::new(elem_names),
        }
    }

    /// The customdata of access rows `rows`.
    fn custom(&self, rows: &[usize]) -> CustomData {
        let a = self.a;
        let pat = &self.lab.ann.patterns;
        let u64s = |f: &dyn Fn(&Item) -> u64| CdCol::U64(rows.iter().map(|&k| f(&a[k])).collect());
        CustomData::of(|f| match f {
            AccessField::Time => u64s(&|it| it.time),
            AccessField::Variable => CdCol::Str(
                rows.iter().map(|&k| self.ranks[k]).collect(),
                self.lab.hover_names.clone(),
            ),
            AccessField::Operation => CdCol::Static(
                rows.iter().map(|&k| op_index(a[k].op) as u8).collect(),
                &OP_NAMES,
            ),
            AccessField::Thread => u64s(&|it| it.tid as u64),
            AccessField::Occurrence => u64s(&|it| it.occ),
            AccessField::Source => CdCol::Str(
                rows.iter().map(|&k| a[k].line.0).collect(),
                self.lab.sources.clone(),
            ),
            AccessField::Address => u64s(&|it| it.addr),
            AccessField::Element => CdCol::Str(
                rows.iter().map(|&k| self.elem[k]).collect(),
                self.elem_names.clone(),
            ),
            AccessField::Pattern => CdCol::Str(
                rows.iter().map(|&k| pat.id(a[k].var, a[k].line)).collect(),
                pat.names.clone(),
            ),
        })
    }
}

/// The exact 3D view: one trace coloured by time, or one trace per colour
/// class.
fn exact_figure_3d(d: &ExactData, t_lo: u64, t_hi: u64) -> Plot {
    let (a, lab) = (d.a, d.lab);
    let hover = hover_exact();
    let mut p3 = Plot::new();
    for (c, rows) in by_class(lab, a, 0..a.len()).iter().enumerate() {
        if rows.is_empty() {
            continue;
        }
        let t3 = scatter_3d().hover_template(hover_with_class(&hover, class_name(lab, c)));
        let (name, marker) = match &lab.ann.classes {
            Some(ci) => (
                ci.labels[c].as_str(),
                PointMarker::opaque(ci.colours[c].clone(), OneOrMany::One(3.0)).symbol(symbol_3d()),
            ),
            None => {
                let times: Vec<f64> = rows.iter().map(|&k| a[k].time as f64).collect();
                let m = time_marker(&times, t_lo, t_hi, OneOrMany::One(3.0));
                ("accesses", m)
            }
        };
        let u64s = |f: &dyn Fn(usize) -> u64| {
            Typed::uints(&rows.iter().map(|&k| f(k)).collect::<Vec<_>>())
        };
        p3.add_trace(
            Ext::new(*t3.name(name))
                .xyz(
                    u64s(&|k| a[k].occ),
                    u64s(&|k| d.ranks[k] as u64),
                    u64s(&|k| a[k].addr),
                )
                .custom(d.custom(rows))
                .marker(marker)
                .boxed(),
        );
    }
    p3.set_layout(
        Layout::new()
            .scene(scene(&lab.names, lab.max_occ))
            .height(800),
    );
    p3
}

/// The exact 2D view: one trace per (class, variable, operation), stores
/// and modifies drawn over loads.
fn exact_figure_2d(d: &ExactData) -> Plot {
    let (a, lab) = (d.a, d.lab);
    let hover = hover_exact();
    let nv = lab.names.len();
    let mut buckets: Vec<Vec<usize>> = vec![Vec::new(); lab.ann.n_classes() * nv * 4];
    for (k, it) in a.iter().enumerate() {
        let c = lab.ann.class(it) as usize;
        buckets[(c * nv + d.ranks[k] as usize) * 4 + op_index(it.op)].push(k);
    }
    let mut p2 = Plot::new();
    let mut shown = vec![false; lab.ann.n_classes()];
    for c in 0..lab.ann.n_classes() {
        for b in draw_order(nv) {
            let rows = &buckets[c * nv * 4 + b];
            if rows.is_empty() {
                continue;
            }
            let (r, oi) = (b / 4, b % 4);
            let (name, group, legend) = legend_2d(lab, r, c, OP_NAMES[oi], &mut shown);
            let t2 = scatter_2d()
                .y_axis(lab.axis(r))
                .name(name)
                .legend_group(group)
                .show_legend(legend)
                .hover_template(hover_with_class(&hover, class_name(lab, c)));
            let u64s = |f: &dyn Fn(&Item) -> u64| {
                Typed::uints(&rows.iter().map(|&k| f(&a[k])).collect::<Vec<_>>())
            };
            p2.add_trace(
                Ext::new(*t2)
                    .xy(u64s(&|it| it.time), u64s(&|it| it.addr))
                    .custom(d.custom(rows))
                    .marker(marker_2d(lab, r, c, oi))
                    .boxed(),
            );
        }
    }
    p2.set_layout(lab.layout_2d());
    p2
}

/// The customdata of aggregated groups `gs`: the fields of [`GroupField`],
/// then with classes each group's class counts (see [`hover_of_groups`]).
fn group_custom(gs: &[&Group], lab: &Labels) -> CustomData {
    let pat = &lab.ann.patterns;
    let u64s = |f: &dyn Fn(&Group) -> u64| CdCol::U64(gs.iter().map(|&g| f(g)).collect());
    let mut cd = CustomData::of(|f| match f {
        GroupField::Count => u64s(&|g| g.count),
        GroupField::TimeMin => u64s(&|g| g.t_min),
        GroupField::TimeMax => CdCol::Plus(
            GroupField::TimeMin.index(),
            gs.iter().map(|g| g.t_max - g.t_min).collect(),
        ),
        GroupField::Variable => CdCol::Str(
            gs.iter().map(|g| key_rank(g.space)).collect(),
            lab.hover_names.clone(),
        ),
        GroupField::AddrSpan => u64s(&|g| g.coord_max - g.coord_min),
        GroupField::OccMin => u64s(&|g| g.occ_min),
        GroupField::OccMax => CdCol::Plus(
            GroupField::OccMin.index(),
            gs.iter().map(|g| g.occ_max - g.occ_min).collect(),
        ),
        GroupField::Loads => u64s(&|g| g.ops[0]),
        GroupField::Stores => u64s(&|g| g.ops[1]),
        GroupField::Modifies => u64s(&|g| g.ops[2]),
        GroupField::Thread => u64s(&|g| g.first.tid as u64),
        GroupField::Source => CdCol::Str(
            gs.iter().map(|g| g.first.line.0).collect(),
            lab.sources.clone(),
        ),
        GroupField::Pattern => CdCol::Str(
            gs.iter()
                .map(|g| pat.id(g.first.var, g.first.line))
                .collect(),
            pat.names.clone(),
        ),
    });
    if let Some(ci) = &lab.ann.classes {
        cd.cols
            .push(mix_column(gs.iter().map(|g| &g.classes[..]), &ci.labels));
    }
    cd
}

/// The hover of aggregated groups whose lowest address the hover reads
/// from `a0` (see [`hover_group`]): with classes, followed by the class
/// counts [`group_custom`] adds after the fields.
fn hover_of_groups(lab: &Labels, a0: &str) -> String {
    let base = hover_group(a0);
    match lab.ann.classes {
        Some(_) => hover_with_mix(&base, GroupField::ALL.len()),
        None => hover_with_class(&base, None),
    }
}

/// The 3D view of aggregated groups: one trace, coloured by mean time, or
/// by the mix of the colour classes of each group's accesses.
fn group_figure_3d(binned: &Binned, lab: &Labels, t_lo: u64, t_hi: u64) -> Plot {
    let gs: Vec<&Group> = binned.groups.iter().collect();
    let sizes = count_sizes(&gs.iter().map(|g| g.count).collect::<Vec<_>>());
    let t3 = scatter_3d().hover_template(hover_of_groups(lab, "%{z:x}"));
    let marker = match &lab.ann.classes {
        Some(ci) => {
            let px: Vec<f64> = sizes.iter().map(|s| s.round()).collect();
            let values: Vec<f64> = gs.iter().map(|g| mix_value(&g.classes)).collect();
            mix_marker(&values, &ci.labels, OneOrMany::many(&px), true).symbol(symbol_3d())
        }
        None => {
            let times: Vec<f64> = gs.iter().map(|g| g.t_mean()).collect();
            time_marker(&times, t_lo, t_hi, OneOrMany::many(&sizes))
        }
    };
    let u64s =
        |f: &dyn Fn(&Group) -> u64| Typed::uints(&gs.iter().map(|&g| f(g)).collect::<Vec<_>>());
    let mut p3 = Plot::new();
    if !gs.is_empty() {
        p3.add_trace(
            Ext::new(*t3.name("access groups"))
                .xyz(
                    u64s(&|g| g.occ_min),
                    u64s(&|g| key_rank(g.space) as u64),
                    u64s(&|g| g.coord_min),
                )
                .custom(group_custom(&gs, lab))
                .marker(marker)
                .boxed(),
        );
    }
    p3.set_layout(
        Layout::new()
            .scene(scene(&lab.names, lab.max_occ))
            .height(800),
    );
    p3
}

fn group_figures(
    binned: &Binned,
    binned2: &Binned,
    lab: &Labels,
    t_lo: u64,
    t_hi: u64,
) -> (Plot, Plot) {
    let p3 = group_figure_3d(binned, lab, t_lo, t_hi);
    let gs: Vec<&Group> = binned2.groups.iter().collect();
    let nv = lab.names.len();
    // Groups mix classes: one trace per (variable, main operation), each
    // point coloured by its mix when there are classes.
    let mut buckets: Vec<Vec<usize>> = vec![Vec::new(); nv * 4];
    for (k, g) in gs.iter().enumerate() {
        buckets[key_rank(g.space) as usize * 4 + g.main_op()].push(k);
    }
    let mut p2 = Plot::new();
    let mut scale = true;
    for b in draw_order(nv) {
        let idx = &buckets[b];
        if idx.is_empty() {
            continue;
        }
        let (r, oi) = (b / 4, b % 4);
        let sub: Vec<&Group> = idx.iter().map(|&k| gs[k]).collect();
        p2.add_trace(raster_trace_2d(lab, &sub, r, oi, scale).boxed());
        // One colour bar for all traces: they share the scale.
        scale = false;
    }
    let mut layout = lab.layout_2d();
    if lab.ann.classes.is_some() {
        // The colour bar takes the right edge: the legend goes on top.
        layout = layout.legend(
            Legend::new()
                .orientation(Orientation::Horizontal)
                .x(0.0)
                .y(1.0)
                .y_anchor(Anchor::Bottom),
        );
    }
    p2.set_layout(layout);
    (p3, p2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vis::page::traces::referenced;

    /// Each hover shows every field of its points' customdata row, and no
    /// position beyond it.
    #[test]
    fn hovers_show_exactly_their_rows() {
        let row = |n: usize| (0..n).collect();
        assert_eq!(referenced(&hover_exact()), row(AccessField::ALL.len()));
        let h = hover_group("%{z:x}");
        assert_eq!(referenced(&h), row(GroupField::ALL.len()));
        assert!(h.contains("lowest address 0x%{z:x},"));
    }

    /// The group hover, written out by hand from the field order, as the
    /// pages have always had it (the template is shared with the array
    /// figures' groups).
    #[test]
    fn the_group_hover_reads_as_it_did() {
        let c = |i: usize| format!("%{{customdata[{i}]}}");
        let want = format!(
            "<b>{} accesses</b><br>order (time) {} to {}<br>lowest address 0x%{{z:x}}, highest {} bytes above<br>variable {}<br>loads {}, stores {}, modifies {}<br>occurrence {} to {}<br>first: thread {}, source {}<br>pattern {}",
            c(0), c(1), c(2), c(4), c(3), c(7), c(8), c(9), c(5), c(6), c(10), c(11), c(12)
        );
        assert_eq!(hover_group("%{z:x}"), want);
    }

    /// A 2D trace's one marker size: a raw access's for groups of one,
    /// growing with the square root of the mean count, at most 15 px.
    #[test]
    fn group_sizes_follow_the_mean_count() {
        assert_eq!(group_size_2d(&[1, 1, 1]), RAW_SIZE);
        assert_eq!(group_size_2d(&[4, 4]), 10.0);
        assert_eq!(group_size_2d(&[1, 7]), 10.0);
        assert_eq!(group_size_2d(&[1000]), 15.0);
        assert_eq!(group_size_2d(&[]), RAW_SIZE);
    }

    /// Whole-number axes tick at a whole step, at most 8 steps from 0.
    #[test]
    fn integer_axes_tick_at_whole_steps() {
        let steps: Vec<u64> = [0, 1, 2, 8, 9, 16, 17, 100, 255, 65_536]
            .iter()
            .map(|&m| integer_step(m))
            .collect();
        assert_eq!(steps, [1, 1, 1, 1, 2, 2, 5, 20, 50, 10_000]);
        for max in 0..5000u64 {
            let step = integer_step(max);
            assert!(step >= 1 && max / step <= INTEGER_STEPS, "{max}: {step}");
        }
        assert_eq!(integer_step(u64::MAX), 5_000_000_000_000_000_000);
    }
}
