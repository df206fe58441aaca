//! The heatmaps of an array figure: per-element counts, first and last
//! access times and store share for 2D arrays, two replays of the
//! traversal, and per-plane heatmaps for 3D arrays.
//!
//! Every heatmap has square cells, integer ticks and hover values for whole
//! numbers, and hover text naming the element as C writes it (`X[3][4]`).
//! Above the point budget, cells merge `f x f` blocks of elements and hold
//! the block's sum (counts) or extreme (times); the colour bars and hover
//! say so.

use plotly::common::{ColorBar, ColorScale, ColorScalePalette, Title, Visible};
use plotly::layout::update_menu::{Button, ButtonMethod, UpdateMenu, UpdateMenuType};
use plotly::layout::{Axis, AxisConstrain, AxisRange, Frame, Slider, SliderMethod, SliderStep};
use plotly::{HeatMap, Layout, Plot, Trace, Traces};
use serde_json::{json, Value};

use crate::vis::input::tables::{op_index, Item};
use crate::vis::options::FigureOptions;
use crate::vis::page::html::PageFigure;
use crate::vis::page::traces::{Ext, Typed};
use crate::vis::page::written::FigureReport;

/// Most frames of the 2D traversal replays.
const REPLAY_FRAMES: u64 = 30;
/// Most slices (planes or slabs of planes) in the 3D per-slice heatmaps.
const MAX_SLICES: u64 = 64;
/// Height in pixels of a heatmap figure and of a replay (with its slider).
const HEAT_HEIGHT: u32 = 560;
const REPLAY_HEIGHT: u32 = 640;

/// The array geometry: block and element layout.
pub(super) struct Shape {
    /// Display name of the variable, for titles and file names.
    pub(super) name: String,
    /// For a block drawn under the name of the object that owns it, its
    /// full path (`x.coefs`), which the hover spells elements by; empty
    /// otherwise.
    pub(super) path: String,
    pub(super) base: u64,
    pub(super) size: u64,
    /// Element size in bytes.
    pub(super) tb: u64,
    /// `[rows, cols]` or `[planes, cols, depth]`.
    pub(super) dims: Vec<u64>,
    /// An array of structures drawn one column per field: the fields'
    /// byte offsets within an element, ascending, and their names. Empty
    /// for a plain array, whose columns are elements of `tb` bytes.
    pub(super) fields: Vec<(u64, String)>,
}

impl Shape {
    /// The name hovers spell elements by: the full path of a block drawn
    /// under its owner's name (`x.coefs[3][4]`), else the display name.
    pub(super) fn hover_name(&self) -> &str {
        if self.path.is_empty() {
            &self.name
        } else {
            &self.path
        }
    }

    /// `(i, j, k)` of an element; `k` is 0 for 2D arrays.
    pub(super) fn ijk(&self, e: u64) -> (u64, u64, u64) {
        if self.dims.len() == 2 {
            (e / self.dims[1], e % self.dims[1], 0)
        } else {
            let plane = self.dims[1] * self.dims[2];
            (e / plane, (e % plane) / self.dims[2], e % self.dims[2])
        }
    }

    /// The address of element (cell) `e`: for an array of structures, the
    /// start of field `j` of element `i`.
    pub(super) fn addr_of(&self, e: u64) -> u64 {
        match self.fields.len() as u64 {
            0 => self.base + e * self.tb,
            nf => self.base + (e / nf) * self.tb + self.fields[(e % nf) as usize].0,
        }
    }

    /// The cell holding byte `off` of the block: the field it falls in for
    /// an array of structures. Bytes before the first field go to the
    /// previous element's last field (`Err` when there is none), with
    /// `Ok` meaning a field at or before the byte.
    fn cell_of(&self, off: u64) -> Result<u64, u64> {
        let nf = self.fields.len() as u64;
        if nf == 0 {
            return Ok(off / self.tb);
        }
        let (row, within) = (off / self.tb, off % self.tb);
        match self.fields.partition_point(|f| f.0 <= within) as u64 {
            0 => Err(row * nf),
            k => Ok(row * nf + k - 1),
        }
    }

    /// First and last cell covering block bytes `lo..=hi`, `None` when they
    /// hold only padding before the first accessed field.
    pub(super) fn cells_of(&self, lo: u64, hi: u64) -> Option<(u64, u64)> {
        let first = self.cell_of(lo).unwrap_or_else(|e| e);
        let last = match self.cell_of(hi) {
            Ok(c) => c,
            Err(0) => return None,
            Err(c) => c - 1,
        };
        (first <= last).then_some((first, last))
    }

    /// The x values of `n` heatmap columns of `f` merged elements each:
    /// the field names of an array of structures drawn one column per
    /// field, else the first column index of each.
    fn column_values(&self, n: usize, f: u64) -> Vec<Value> {
        if f == 1 && !self.fields.is_empty() {
            return self
                .fields
                .iter()
                .map(|c| Value::from(c.1.clone()))
                .collect();
        }
        (0..n as u64).map(|x| Value::from(x * f)).collect()
    }

    /// The x axis title of the heatmaps.
    fn column_title(&self) -> &'static str {
        if self.fields.is_empty() {
            "column j"
        } else {
            "field"
        }
    }

    /// The hovered element of a 2D heatmap cell of `f x f` elements.
    fn hover_cell(&self, f: u64) -> String {
        if f == 1 && !self.fields.is_empty() {
            format!(
                "{}[%{{y}}].%{{x}}",
                crate::vis::page::html::escape_html(&self.name)
            )
        } else {
            hover_element(self.hover_name(), None, f)
        }
    }

    /// The name of column `j`: the field's, or the index.
    pub(super) fn column_name(&self, j: u64) -> String {
        self.fields
            .get(j as usize)
            .map_or_else(|| j.to_string(), |f| f.1.clone())
    }
}

/// What the heatmaps are drawn from: the array and the time span of its
/// accesses; the element touches come to [`MapCells::add`].
pub(super) struct Cells<'a> {
    pub(super) shape: &'a Shape,
    pub(super) t_lo: u64,
    pub(super) t_hi: u64,
    pub(super) o: &'a FigureOptions,
}

/// Per-cell statistics of a (possibly block-merged) grid.
struct Grid {
    count: Vec<u64>,
    first: Vec<u64>,
    last: Vec<u64>,
    stores: Vec<u64>,
}

impl Grid {
    fn new(cells: usize) -> Self {
        Grid {
            count: vec![0; cells],
            first: vec![u64::MAX; cells],
            last: vec![0; cells],
            stores: vec![0; cells],
        }
    }
    fn add(&mut self, c: usize, t: u64, is_store: bool) {
        self.count[c] += 1;
        self.first[c] = self.first[c].min(t);
        self.last[c] = self.last[c].max(t);
        if is_store {
            self.stores[c] += 1;
        }
    }
    /// The value of cell `c` for a metric, `None` when never touched.
    fn value(&self, c: usize, m: Metric) -> Option<f64> {
        (self.count[c] > 0).then(|| match m {
            Metric::Count => self.count[c] as f64,
            Metric::First => self.first[c] as f64,
            Metric::Last => self.last[c] as f64,
            Metric::StoreShare => self.stores[c] as f64 / self.count[c] as f64,
        })
    }
}

/// What a heatmap shows per cell.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Metric {
    Count,
    First,
    Last,
    StoreShare,
}

/// Smallest merge factor `f` with `prod(ceil(d / f)) <= budget`.
///
/// `cells()` is monotone in `f`, so a binary search finds it in at most 64
/// steps whatever the dimensions (a linear search took minutes for a
/// 2^48-column row).
pub(super) fn merge_factor(dims: &[u64], budget: u64) -> u64 {
    let cells = |f: u64| {
        dims.iter()
            .fold(1u64, |acc, &d| acc.saturating_mul(d.div_ceil(f)))
    };
    let budget = budget.max(1);
    if cells(1) <= budget {
        return 1;
    }
    // cells(hi) is 1 <= budget: every dimension fits in one block.
    let (mut lo, mut hi) = (1u64, dims.iter().copied().max().unwrap_or(1).max(1));
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if cells(mid) <= budget {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// How a heatmap's values read: the colour bar title, colour scale, and
/// the hover's element and number format.
struct HeatStyle<'a> {
    /// Colour bar title and hover label (`accesses`, `first access`).
    label: &'a str,
    scale: ColorScalePalette,
    /// The hovered element as C writes it, with plotly placeholders.
    element: String,
    /// Whole numbers (counts, times): integer ticks and hover text.
    integer: bool,
    /// The largest value, for integer ticks on small ranges.
    max: f64,
}

/// The hover element of a heatmap cell: `X[%{y}][%{x}]` for one element
/// per cell, with the block size when cells merge blocks of `f x f`
/// elements; `plane` puts the 3D plane index first.
fn hover_element(name: &str, plane: Option<&str>, f: u64) -> String {
    let name = crate::vis::page::html::escape_html(name);
    let plane = plane.map(|p| format!("[{p}]")).unwrap_or_default();
    if f > 1 {
        format!("{name}{plane}[%{{y}}..][%{{x}}..] (block of {f} x {f})")
    } else {
        format!("{name}{plane}[%{{y}}][%{{x}}]")
    }
}

/// A heatmap of columns `x` and rows `y` in style `st`; its cells are
/// given with [`with_cells`].
fn heat(x: Vec<Value>, y: Vec<u64>, st: &HeatStyle) -> Box<HeatMap<Value, u64, f64>> {
    // Counts use a light-to-dark scale so that blank (never) reads as white.
    let counts = matches!(st.scale, ColorScalePalette::YlOrRd);
    let mut bar = ColorBar::new().title(st.label);
    let value = if st.integer {
        bar = bar.tick_format("d");
        if st.max <= 10.0 {
            bar = bar.dtick(1.0);
        }
        "%{z:d}"
    } else {
        "%{z:.2f}"
    };
    Box::new(HeatMap::default())
        .x(x)
        .y(y)
        .color_scale(ColorScale::Palette(st.scale.clone()))
        .reverse_scale(counts)
        .color_bar(bar)
        .hover_template(format!(
            "{}<br>{} {value}<extra></extra>",
            st.element, st.label
        ))
}

/// Heatmap layout with square cells: the y axis is scaled to the x axis,
/// and the plot shrinks its domain rather than stretching cells. With
/// `flip` (matrix orientation) row 0 is at the top of `n` rows of `f`.
fn square_layout(xl: &str, yl: &str, flip: Option<(usize, u64)>) -> Layout {
    let mut y = Axis::new()
        .title(Title::with_text(yl))
        .scale_anchor("x")
        .constrain(AxisConstrain::Domain);
    if let Some((n, f)) = flip {
        y = y.range(AxisRange::new(
            (n as u64 * f) as f64 - f as f64 / 2.0,
            -(f as f64) / 2.0,
        ));
    }
    Layout::new()
        .x_axis(
            Axis::new()
                .title(Title::with_text(xl))
                .constrain(AxisConstrain::Domain),
        )
        .y_axis(y)
}

/// Heatmap `h` with the cells of an `nr x nc` grid as its `z`, row-major
/// (`f` of each cell, blank where it gives `None`), a typed array of
/// 8 bytes a cell.
fn with_cells(
    h: Box<HeatMap<Value, u64, f64>>,
    nr: usize,
    nc: usize,
    f: impl Fn(usize) -> Option<f64>,
) -> Box<dyn Trace> {
    Ext::new(*h)
        .cells(Typed::grid(nr, nc, (0..nr * nc).map(f)))
        .boxed()
}

/// The smallest and largest of some values, or `(0, 1)` for none; counts
/// (`from_zero`) start at 0 so that a cell touched once is not the darkest.
fn value_range(vals: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let lo = if from_zero { 0.0 } else { lo };
    (lo, hi.max(lo + 1.0))
}

/// The per-element maps of an array figure while one pass over its element
/// touches fills them: the heatmaps and replays of a 2D array, or the
/// per-plane slices of a 3D one. The pass is the figure's own (the
/// scatter's aggregation feeds it too), so the maps cost no pass of their
/// own. Memory: the cells, at most the point budget of them (and as many
/// per replay step).
pub(super) enum MapCells {
    Grid(GridCells),
    Slices(SliceCells),
}

impl MapCells {
    /// Empty maps for `c`'s array, with the notes on merged cells pushed to
    /// `report`.
    pub(super) fn new(c: &Cells, report: &mut FigureReport) -> MapCells {
        if c.shape.dims.len() == 3 {
            MapCells::Slices(SliceCells::new(c, report))
        } else {
            MapCells::Grid(GridCells::new(c, report))
        }
    }

    /// Counts one touch of element `e` by `it`.
    #[inline]
    pub(super) fn add(&mut self, c: &Cells, it: &Item, e: u64) {
        match self {
            MapCells::Grid(g) => g.add(c, it, e),
            MapCells::Slices(s) => s.add(c, it, e),
        }
    }

    /// The figures of the maps, in page order.
    pub(super) fn figures(self, c: &Cells, figures: &mut Vec<PageFigure>) {
        match self {
            MapCells::Grid(g) => g.figures(c, figures),
            MapCells::Slices(s) => s.figures(c, figures),
        }
    }
}

/// The four per-element heatmaps and the two replays of a 2D array.
pub(super) struct GridCells {
    /// Cells are blocks of `f x f` elements, `nr x nc` of them.
    f: u64,
    nr: usize,
    nc: usize,
    g: Grid,
    rg: ReplayLayout,
    /// Per replay step and cell, the accesses in that step.
    frames: Vec<u64>,
}

impl GridCells {
    fn new(c: &Cells, report: &mut FigureReport) -> GridCells {
        let (rows, cols) = (c.shape.dims[0], c.shape.dims[1]);
        let budget = c.o.point_budget as u64;
        let f = merge_factor(&[rows, cols], budget);
        let (nr, nc) = (rows.div_ceil(f) as usize, cols.div_ceil(f) as usize);
        if f > 1 {
            report.warnings.push(format!(
                "The {rows} x {cols} grid has more cells than the point budget {budget}; heatmap cells are blocks of {f} x {f} elements."
            ));
        }
        let rg = ReplayLayout::new(c, f);
        GridCells {
            f,
            nr,
            nc,
            g: Grid::new(nr * nc),
            frames: vec![0u64; rg.nf as usize * rg.cells],
            rg,
        }
    }

    #[inline]
    fn add(&mut self, c: &Cells, it: &Item, e: u64) {
        let (i, j, _) = c.shape.ijk(e);
        let oi = op_index(it.op);
        self.g.add(
            (i / self.f) as usize * self.nc + (j / self.f) as usize,
            it.time,
            oi == 1 || oi == 2,
        );
        let rg = &self.rg;
        let cell = (i / rg.fr) as usize * rg.rc + (j / rg.fr) as usize;
        let span = c.t_hi - c.t_lo + 1;
        let fi = ((it.time - c.t_lo) as u128 * rg.nf as u128 / span as u128) as usize;
        self.frames[fi * rg.cells + cell] += 1;
    }

    fn figures(self, c: &Cells, figures: &mut Vec<PageFigure>) {
        let GridCells {
            f,
            nr,
            nc,
            g,
            rg,
            frames,
        } = self;
        let xs = c.shape.column_values(nc, f);
        let ys: Vec<u64> = (0..nr as u64).map(|y| y * f).collect();
        let flip = c.o.matrix_orientation.then_some((nr, f));
        // Merged cells hold the sum over their block; say so on the colour bar.
        let count_label = if f > 1 {
            format!("accesses per {f} x {f} block")
        } else {
            "accesses".to_string()
        };
        let maps: [(&str, &str, Metric, ColorScalePalette, &str); 4] = [
        ("Access count per element", &count_label, Metric::Count, ColorScalePalette::YlOrRd,
         "How often each element was touched (a wide access touches every element it spans). White: never."),
        ("First access time per element", "first access", Metric::First, ColorScalePalette::Viridis,
         "When each element was touched first: along a row for row-major order, down a column for column-major. Blank: never."),
        ("Last access time per element", "last access", Metric::Last, ColorScalePalette::Viridis,
         "When each element was touched last."),
        ("Store share per element", "store share", Metric::StoreShare, ColorScalePalette::RdBu,
         "(stores + modifies) / accesses: 0 only loaded, 1 only written."),
    ];
        for (heading, label, metric, scale, note) in maps {
            let values = (0..g.count.len()).filter_map(|x| g.value(x, metric));
            let (lo, hi) = match metric {
                Metric::StoreShare => (0.0, 1.0),
                Metric::Count => value_range(values, true),
                _ => value_range(values, false),
            };
            let st = HeatStyle {
                label,
                scale,
                element: c.shape.hover_cell(f),
                integer: metric != Metric::StoreShare,
                max: hi,
            };
            let h = heat(xs.clone(), ys.clone(), &st)
                .zauto(false)
                .zmin(lo)
                .zmax(hi);
            let mut p = Plot::new();
            p.add_trace(with_cells(h, nr, nc, |x| g.value(x, metric)));
            p.set_layout(
                square_layout(c.shape.column_title(), "row i", flip).height(HEAT_HEIGHT as usize),
            );
            figures.push(PageFigure {
                heading: heading.into(),
                note: note.into(),
                plot: p,
                height: HEAT_HEIGHT,
            });
        }
        replay_figures(c, &rg, frames, figures);
    }
}

/// The cells and steps of the replays: `nf` time steps, cells of `fr x fr`
/// elements (at least the heatmaps' `f`), `rr x rc` of them.
struct ReplayLayout {
    nf: u64,
    fr: u64,
    rr: usize,
    rc: usize,
    cells: usize,
}

impl ReplayLayout {
    fn new(c: &Cells, f: u64) -> ReplayLayout {
        let (rows, cols) = (c.shape.dims[0], c.shape.dims[1]);
        let span = c.t_hi - c.t_lo + 1;
        let nf = REPLAY_FRAMES.min(span).max(1);
        let budget = c.o.point_budget as u64;
        let fr = merge_factor(&[rows, cols], (budget / nf).max(1)).max(f);
        let (rr, rc) = (rows.div_ceil(fr) as usize, cols.div_ceil(fr) as usize);
        ReplayLayout {
            nf,
            fr,
            rr,
            rc,
            cells: rr * rc,
        }
    }
}

/// Two replays of the traversal over up to 30 time steps: the accesses so
/// far (cumulative), and the accesses within each step alone ("recent",
/// `frames[step * cells + cell]`), whose own colour scale keeps mid-run
/// frames as vivid as the last.
fn replay_figures(c: &Cells, rg: &ReplayLayout, recent: Vec<u64>, figures: &mut Vec<PageFigure>) {
    let span = c.t_hi - c.t_lo + 1;
    let &ReplayLayout {
        nf,
        fr,
        rr,
        rc,
        cells,
    } = rg;
    let mut cumulative = recent.clone();
    for fi in 1..nf as usize {
        for x in 0..cells {
            cumulative[fi * cells + x] += cumulative[(fi - 1) * cells + x];
        }
    }
    let thresholds: Vec<u64> = (0..nf)
        .map(|fi| c.t_lo + ((fi as u128 + 1) * span as u128 / nf as u128) as u64 - 1)
        .collect();
    let blocks = if fr > 1 {
        format!(" Cells are blocks of {fr} x {fr} elements.")
    } else {
        String::new()
    };
    let grid = ReplayGrid {
        rr,
        rc,
        fr,
        thresholds: &thresholds,
    };
    figures.push(replay_plot(
        c,
        &grid,
        &cumulative,
        "accesses so far",
        "Replay of the traversal".into(),
        format!("Cumulative accesses per element up to each of {nf} time steps; drag the slider or press Play.{blocks}"),
    ));
    figures.push(replay_plot(
        c,
        &grid,
        &recent,
        "accesses in this step",
        "Replay of recent accesses".into(),
        format!("Accesses per element within each of {nf} time steps alone, so the part of the array being worked on stands out at every step.{blocks}"),
    ));
}

/// The cell layout and step ends of a replay.
struct ReplayGrid<'a> {
    rr: usize,
    rc: usize,
    fr: u64,
    /// Last time of each step.
    thresholds: &'a [u64],
}

/// One replay figure: a heatmap per step of `frames` on one colour scale,
/// a slider over the steps and a Play button.
fn replay_plot(
    c: &Cells,
    g: &ReplayGrid,
    frames: &[u64],
    label: &str,
    heading: String,
    note: String,
) -> PageFigure {
    let cells = g.rr * g.rc;
    let nf = g.thresholds.len();
    let zmax = frames.iter().copied().max().unwrap_or(1).max(1) as f64;
    let st = HeatStyle {
        label,
        scale: ColorScalePalette::YlOrRd,
        element: c.shape.hover_cell(g.fr),
        integer: true,
        max: zmax,
    };
    let rxs = c.shape.column_values(g.rc, g.fr);
    let rys: Vec<u64> = (0..g.rr as u64).map(|y| y * g.fr).collect();
    let frame_heat = |fi: usize| {
        let h = heat(rxs.clone(), rys.clone(), &st)
            .zauto(false)
            .zmin(0.0)
            .zmax(zmax);
        with_cells(h, g.rr, g.rc, |x| count_cell(frames[fi * cells + x]))
    };
    let last = nf - 1;
    let mut p = Plot::new();
    p.add_trace(frame_heat(last));
    let mut steps = Vec::new();
    for (fi, &th) in g.thresholds.iter().enumerate() {
        let name = format!("t{fi}");
        let mut tr = Traces::new();
        tr.push(frame_heat(fi));
        p.add_frame(Frame::new().name(name.clone()).data(tr).traces(vec![0]));
        steps.push(
            SliderStep::new()
                .label(format!("{th}"))
                .method(SliderMethod::Animate)
                .args(json!([[name], {"mode": "immediate", "frame": {"duration": 0, "redraw": true}, "transition": {"duration": 0}}])),
        );
    }
    let play = Button::new()
        .label("Play")
        .method(ButtonMethod::Animate)
        .args(json!([null, {"frame": {"duration": 250, "redraw": true}, "fromcurrent": false, "transition": {"duration": 0}}]));
    let flip = c.o.matrix_orientation.then_some((g.rr, g.fr));
    p.set_layout(
        square_layout(c.shape.column_title(), "row i", flip)
            .height(REPLAY_HEIGHT as usize)
            .sliders(vec![Slider::new()
                .y(-0.2)
                .active(last as i32)
                .steps(steps)
                .current_value(
                    plotly::layout::SliderCurrentValue::new().prefix("accesses up to time "),
                )])
            .update_menus(vec![UpdateMenu::new()
                .ty(UpdateMenuType::Buttons)
                .buttons(vec![play])
                .x(0.0)
                .y(1.12)]),
    );
    PageFigure {
        heading,
        note,
        plot: p,
        height: REPLAY_HEIGHT,
    }
}

/// A count as a heatmap value: blank (`None`) when zero.
fn count_cell(c: u64) -> Option<f64> {
    (c > 0).then_some(c as f64)
}

/// The slices of a 3D array: `ns` slices of `thick` planes each, cut into
/// cells of `f x f` elements, `nj x nk` cells per slice.
struct Slices {
    planes: u64,
    thick: u64,
    ns: usize,
    f: u64,
    nj: usize,
    nk: usize,
}

impl Slices {
    fn new(shape: &Shape, budget: u64) -> Slices {
        let (planes, cols, depth) = (shape.dims[0], shape.dims[1], shape.dims[2]);
        let thick = planes.div_ceil(MAX_SLICES).max(1);
        let ns = planes.div_ceil(thick);
        let f = merge_factor(&[cols, depth], (budget / ns).max(1));
        Slices {
            planes,
            thick,
            ns: ns as usize,
            f,
            nj: cols.div_ceil(f) as usize,
            nk: depth.div_ceil(f) as usize,
        }
    }
    fn cells(&self) -> usize {
        self.nj * self.nk
    }
    /// `plane 3` or `planes 4-7`.
    fn label(&self, s: usize) -> String {
        let lo = s as u64 * self.thick;
        let hi = ((s as u64 + 1) * self.thick).min(self.planes) - 1;
        if lo == hi {
            format!("plane {lo}")
        } else {
            format!("planes {lo}-{hi}")
        }
    }
    /// The plane index for hover text: `3` or `4-7`.
    fn index(&self, s: usize) -> String {
        self.label(s).rsplit(' ').next().unwrap_or("").to_string()
    }
}

/// Per-plane heatmaps of a 3D array (first-access time and access count),
/// each with a slider over the planes and a choice between one colour
/// scale for the whole run and one per plane.
pub(super) struct SliceCells {
    sl: Slices,
    g: Grid,
}

impl SliceCells {
    fn new(c: &Cells, report: &mut FigureReport) -> SliceCells {
        let budget = c.o.point_budget as u64;
        let sl = Slices::new(c.shape, budget);
        let (cols, depth) = (c.shape.dims[1], c.shape.dims[2]);
        if sl.thick > 1 {
            report.warnings.push(format!(
                "{} planes are more than {MAX_SLICES} slices; each slice merges {} adjacent planes.",
                sl.planes, sl.thick
            ));
        }
        if sl.f > 1 {
            report.warnings.push(format!(
                "The {cols} x {depth} planes times {} slices exceed the point budget {budget}; heatmap cells are blocks of {} x {} elements.",
                sl.ns, sl.f, sl.f
            ));
        }
        SliceCells {
            g: Grid::new(sl.ns * sl.cells()),
            sl,
        }
    }

    #[inline]
    fn add(&mut self, c: &Cells, it: &Item, e: u64) {
        let (i, j, kk) = c.shape.ijk(e);
        let sl = &self.sl;
        let x = (i / sl.thick) as usize * sl.cells()
            + (j / sl.f) as usize * sl.nk
            + (kk / sl.f) as usize;
        self.g.add(x, it.time, false);
    }

    fn figures(self, c: &Cells, figures: &mut Vec<PageFigure>) {
        let SliceCells { sl, g } = self;
        let metrics = [
            (
                "First access time per element, one plane at a time",
                "first access",
                Metric::First,
                ColorScalePalette::Viridis,
            ),
            (
                "Access count per element, one plane at a time",
                "accesses",
                Metric::Count,
                ColorScalePalette::YlOrRd,
            ),
        ];
        for (heading, label, metric, scale) in metrics {
            figures.push(slice_plot(c, &sl, &g, heading, label, metric, scale));
        }
    }
}

/// One per-plane heatmap figure of `metric`.
fn slice_plot(
    c: &Cells,
    sl: &Slices,
    g: &Grid,
    heading: &str,
    label: &str,
    metric: Metric,
    scale: ColorScalePalette,
) -> PageFigure {
    let cells = sl.cells();
    let from_zero = metric == Metric::Count;
    let (zmin, zmax) = value_range(
        (0..g.count.len()).filter_map(|x| g.value(x, metric)),
        from_zero,
    );
    let own: Vec<(f64, f64)> = (0..sl.ns)
        .map(|s| {
            value_range(
                (0..cells).filter_map(|x| g.value(s * cells + x, metric)),
                from_zero,
            )
        })
        .collect();
    let xs: Vec<Value> = (0..sl.nk as u64).map(|x| Value::from(x * sl.f)).collect();
    let ys: Vec<u64> = (0..sl.nj as u64).map(|y| y * sl.f).collect();
    let mut p = Plot::new();
    let mut steps = Vec::new();
    for s in 0..sl.ns {
        let st = HeatStyle {
            label,
            scale: scale.clone(),
            element: hover_element(c.shape.hover_name(), Some(&sl.index(s)), sl.f),
            integer: true,
            max: zmax,
        };
        let t = heat(xs.clone(), ys.clone(), &st)
            .zauto(false)
            .zmin(zmin)
            .zmax(zmax)
            .name(sl.label(s).as_str())
            .visible(if s == 0 {
                Visible::True
            } else {
                Visible::False
            });
        p.add_trace(with_cells(t, sl.nj, sl.nk, |x| {
            g.value(s * cells + x, metric)
        }));
        let vis: Vec<bool> = (0..sl.ns).map(|x| x == s).collect();
        steps.push(
            SliderStep::new()
                .label(sl.label(s))
                .method(SliderMethod::Restyle)
                .args(json!([{"visible": vis}])),
        );
    }
    let scales = [
        (
            "one scale for the run",
            vec![zmin; sl.ns],
            vec![zmax; sl.ns],
        ),
        (
            "a scale per plane",
            own.iter().map(|r| r.0).collect(),
            own.iter().map(|r| r.1).collect(),
        ),
    ];
    let buttons = scales
        .into_iter()
        .map(|(name, lo, hi)| {
            Button::new()
                .label(name)
                .method(ButtonMethod::Restyle)
                .args(json!([{"zmin": lo, "zmax": hi}]))
        })
        .collect();
    let flip = c.o.matrix_orientation.then_some((sl.nj, sl.f));
    p.set_layout(
        square_layout("k (depth)", "j (column)", flip)
            .height(REPLAY_HEIGHT as usize)
            .sliders(vec![Slider::new()
                .y(-0.2)
                .active(0)
                .steps(steps)
                .current_value(
                    plotly::layout::SliderCurrentValue::new().prefix("showing "),
                )])
            .update_menus(vec![UpdateMenu::new()
                .ty(UpdateMenuType::Buttons)
                .buttons(buttons)
                .x(0.0)
                .y(1.12)]),
    );
    PageFigure {
        heading: heading.into(),
        note: "Each slice is one plane i (outermost index): j up the side, k along the bottom. Drag the slider to move through the planes; the buttons switch between one colour scale for the whole run and one per plane, which shows the order within a plane.".into(),
        plot: p,
        height: REPLAY_HEIGHT,
    }
}
