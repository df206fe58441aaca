//! One variable seen as a 2D or 3D array of fixed-size elements.
//!
//! Reconstruction: `element = (addr - base) / type_bytes`. For a 2D array of
//! `cols` columns, `i = element / cols`, `j = element % cols`. For a 3D array
//! of `cols x depth` per plane, `i = element / (cols*depth)`, `j = (element %
//! (cols*depth)) / depth`, `k = element % depth` (k is contiguous in memory).
//! An access of `size` bytes touches every element from its first to its
//! last byte, so a 16-byte vector load over 4-byte ints touches 4 cells; all
//! per-element views (scatter, heatmaps, CSV) count touches.

use std::sync::Arc;

use plotly::common::{ColorBar, ColorScale, ColorScalePalette, Mode, Title, Visible};
use plotly::layout::update_menu::{Button, ButtonMethod, UpdateMenu, UpdateMenuType};
use plotly::layout::{Axis, AxisRange, Frame, LayoutScene, Slider, SliderMethod, SliderStep};
use plotly::{HeatMap, Layout, Plot, Scatter3D, Trace, Traces};
use polars::prelude::DataFrame;
use serde_json::json;

use super::aggregate::{aggregate, Group, Source};
use super::csv::CsvOut;
use super::error::VisError;
use super::html::{sanitize_name, write_page, PageFigure};
use super::input::{op_index, op_name, Accesses, Lines, Variables, OP_NAMES};
use super::traces::{count_sizes, time_marker, CdCol, CustomData, Ext, OneOrMany};
use super::{FigureOptions, FigureReport};

/// Most frames of the 2D traversal replay.
const REPLAY_FRAMES: u64 = 30;
/// Most slices (planes or slabs of planes) in the 3D per-slice heatmaps.
const MAX_SLICES: u64 = 64;

/// The array geometry: block and element layout.
struct Shape {
    base: u64,
    size: u64,
    tb: u64,
    /// `[rows, cols]` or `[planes, cols, depth]`.
    dims: Vec<u64>,
}

impl Shape {
    /// `(i, j, k)` of an element; `k` is 0 for 2D arrays.
    fn ijk(&self, e: u64) -> (u64, u64, u64) {
        if self.dims.len() == 2 {
            (e / self.dims[1], e % self.dims[1], 0)
        } else {
            let plane = self.dims[1] * self.dims[2];
            (e / plane, (e % plane) / self.dims[2], e % self.dims[2])
        }
    }
    /// First and last element touched by an access, clipped to the block;
    /// `None` when no byte falls inside it.
    fn span(&self, addr: u64, size: u32) -> Option<(u64, u64)> {
        let end = addr.saturating_add(size.max(1) as u64 - 1);
        let block_end = self.base + self.size - 1;
        if end < self.base || addr > block_end {
            return None;
        }
        let lo = addr.max(self.base) - self.base;
        let hi = end.min(block_end) - self.base;
        Some((lo / self.tb, hi / self.tb))
    }
    fn partial(&self, addr: u64, size: u32) -> bool {
        let end = addr.saturating_add(size.max(1) as u64 - 1);
        addr < self.base || end > self.base + self.size - 1
    }
}

/// Draws variable `var` as a `rows x cols` matrix of `type_bytes`-byte
/// elements to `figures/2d_memory_access_pattern_<NAME>.html`.
///
/// Rows = ceil(block size / (cols * type_bytes)). The page holds the original
/// tool's 3D scatter (x = column j, y = occurrence, z = row i, colour =
/// time), heatmaps of access count, first-access time, last-access time and
/// store share ((stores + modifies) / accesses) per element, and a replay of
/// the traversal: a slider over 30 time steps showing the cumulative access
/// count per element. Row 0 is at the bottom unless `matrix_orientation`.
///
/// Only rows of `acc` whose `var` equals `var` are drawn. Accesses entirely
/// outside `[base, base+size)` are counted in `warnings` and not drawn;
/// accesses straddling the block edge are drawn clipped and counted too.
/// With `save`, `visinfo/2d_memory_access_pattern_<NAME>.csv` gets one row
/// per element touch (`index` is the row of `acc`, `address` the element's).
///
/// Cost: O(n) for n accesses plus O(touches) per aggregation pass; heatmaps
/// use O(min(rows*cols, budget)) memory.
///
/// # Errors
/// Bad options, `cols` or `type_bytes` of 0, an unknown `var`, a block of
/// size 0, no access to draw, tables not following the schema, or a file that
/// cannot be written.
#[allow(clippy::too_many_arguments)]
pub fn array_2d(
    acc: &DataFrame,
    vars: &DataFrame,
    lines: &DataFrame,
    var: u32,
    cols: u64,
    type_bytes: u64,
    o: &FigureOptions,
) -> Result<FigureReport, VisError> {
    draw_array(acc, vars, lines, var, &[cols], type_bytes, o)
}

/// Draws variable `var` as a `planes x cols x depth` array of
/// `type_bytes`-byte elements to `figures/3d_memory_access_pattern_<NAME>.html`.
///
/// Planes = ceil(block size / (cols * depth * type_bytes)). The page holds a
/// 3D scatter (x = j, y = k, z = plane i, colour = time) and per-plane
/// heatmaps (one slice per plane i, j up the side and k along the bottom) of
/// first-access time and access count, each with a slider to pick the plane.
/// With more than 64 planes, or more cells than the point budget, adjacent
/// planes (and cells) are merged and a warning says so. Warnings, `save`
/// (columns index, address, variable, occurrence, row, col, depth,
/// operation, thread, time) and costs as for [`array_2d`].
///
/// # Errors
/// As [`array_2d`], and `depth` of 0.
#[allow(clippy::too_many_arguments)]
pub fn array_3d(
    acc: &DataFrame,
    vars: &DataFrame,
    lines: &DataFrame,
    var: u32,
    cols: u64,
    depth: u64,
    type_bytes: u64,
    o: &FigureOptions,
) -> Result<FigureReport, VisError> {
    draw_array(acc, vars, lines, var, &[cols, depth], type_bytes, o)
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
}

/// Smallest merge factor `f` with `prod(ceil(d / f)) <= budget`.
///
/// `cells()` is monotone in `f`, so a binary search finds it in at most 64
/// steps whatever the dimensions (a linear search took minutes for a
/// 2^48-column row).
fn merge_factor(dims: &[u64], budget: u64) -> u64 {
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

/// Refuses a shape whose grid cannot be drawn: one row (2D) or plane (3D)
/// holding more elements than the whole block, or sizes whose product
/// overflows. Such a grid would be mostly empty cells of a single row, and
/// numbers that large cannot be laid out or iterated over.
fn check_grid(name: &str, size: u64, inner: &[u64], type_bytes: u64) -> Result<(), VisError> {
    let elements = size.div_ceil(type_bytes);
    let per_row = inner.iter().try_fold(1u64, |p, &d| p.checked_mul(d));
    let row_bytes = per_row.and_then(|n| n.checked_mul(type_bytes));
    match (per_row, row_bytes) {
        (Some(n), Some(_)) if n <= elements => Ok(()),
        _ => {
            let (what, shape) = if inner.len() == 2 {
                (
                    "plane",
                    format!("{} columns x depth {}", inner[0], inner[1]),
                )
            } else {
                ("row", format!("{} columns", inner[0]))
            };
            Err(VisError::BadOption(format!(
                "`{name}` cannot be drawn with {shape}: its block of {size} bytes holds {elements} elements of {type_bytes} bytes, fewer than one {what} of that shape. Give a shape whose {what} holds at most {elements} elements."
            )))
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn draw_array(
    acc: &DataFrame,
    vars: &DataFrame,
    lines: &DataFrame,
    var: u32,
    inner: &[u64],
    type_bytes: u64,
    o: &FigureOptions,
) -> Result<FigureReport, VisError> {
    o.validate()?;
    let is3 = inner.len() == 2;
    let kind = if is3 { "3d" } else { "2d" };
    let v = Variables::read(vars)?;
    let info = v.get(var).cloned().ok_or(VisError::UnknownVariable {
        var,
        rows: v.rows(),
    })?;
    let name = info.name.clone();
    if type_bytes == 0 {
        return Err(VisError::BadOption(format!(
            "The element size of `{name}` is 0 bytes; give the size of one element (e.g. 4 for int)."
        )));
    }
    if inner.contains(&0) {
        return Err(VisError::BadOption(format!(
            "An array dimension of `{name}` is 0; give the number of columns{} (at least 1).",
            if is3 { " and the depth" } else { "" }
        )));
    }
    if info.size == 0 {
        return Err(VisError::Empty(format!(
            "The block of `{name}` has size 0 bytes, so it has no elements to draw. Pick a variable with a known size."
        )));
    }
    check_grid(&name, info.size, inner, type_bytes)?;
    let a = Accesses::read(acc)?;
    let l = Lines::read(lines)?;
    let row_bytes = inner.iter().fold(type_bytes, |p, &d| p.saturating_mul(d));
    let outer = info.size.div_ceil(row_bytes);
    let mut dims = vec![outer];
    dims.extend_from_slice(inner);
    let shape = Shape {
        base: info.base,
        size: info.size,
        tb: type_bytes,
        dims: dims.clone(),
    };
    let mut report = FigureReport::default();
    let dim_text = dims
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(" x ");
    if info.size % row_bytes != 0 {
        report.warnings.push(format!(
            "The block of `{name}` is {} bytes, not a multiple of {} ({} x {type_bytes}-byte elements per {}); drawn as {dim_text} with the last {} incomplete.",
            info.size,
            row_bytes,
            inner.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(" x "),
            if is3 { "plane" } else { "row" },
            if is3 { "plane" } else { "row" },
        ));
    }

    // Rows of this variable, and out-of-block accounting.
    let (avar, aaddr, asize, atime, aop, aocc, atid, aline) = (
        a.var(),
        a.addr(),
        a.size(),
        a.time(),
        a.op(),
        a.occ(),
        a.tid(),
        a.line(),
    );
    let mut rows: Vec<usize> = Vec::new();
    let (mut outside, mut partial, mut touches) = (0u64, 0u64, 0u64);
    let (mut t_lo, mut t_hi) = (u64::MAX, 0u64);
    for k in 0..a.len() {
        if avar[k] != var {
            continue;
        }
        match shape.span(aaddr[k], asize[k] as u32) {
            None => outside += 1,
            Some((e0, e1)) => {
                if shape.partial(aaddr[k], asize[k] as u32) {
                    partial += 1;
                }
                touches += e1 - e0 + 1;
                t_lo = t_lo.min(atime[k] as u64);
                t_hi = t_hi.max(atime[k] as u64);
                rows.push(k);
            }
        }
    }
    if outside > 0 {
        report.warnings.push(format!(
            "{outside} accesses of `{name}` fall outside its block [0x{:x}, 0x{:x}) and are not drawn; check the variable's base and size.",
            info.base,
            info.base + info.size
        ));
    }
    if partial > 0 {
        report.warnings.push(format!(
            "{partial} accesses of `{name}` straddle the edge of its block; only the elements inside it are drawn."
        ));
    }
    if rows.is_empty() {
        return Err(VisError::Empty(format!(
            "No access of `{name}` (variable {var}) falls inside its block, so there is nothing to draw. Check the memory kinds selected and the variable's base and size."
        )));
    }

    let sources: Arc<Vec<String>> = Arc::new(l.sources().to_vec());
    let each = |f: &mut dyn FnMut(usize, u64) -> bool| {
        for (n, &k) in rows.iter().enumerate() {
            // Ctrl-C: stop; the page is then not written (checked below).
            if n % 4096 == 0 && super::interrupted() {
                return;
            }
            if let Some((e0, e1)) = shape.span(aaddr[k], asize[k] as u32) {
                for e in e0..=e1 {
                    if !f(k, e) {
                        return;
                    }
                }
            }
        }
    };

    // ---- scatter ----
    let budget = o.point_budget as u64;
    let (xl, yl, zl) = if is3 {
        ("column j", "depth k", "plane i")
    } else {
        ("column j", "occurrence", "row i")
    };
    let mut scatter = Plot::new();
    let scatter_title;
    if touches <= budget {
        report.points = touches as usize;
        scatter_title = format!("{touches} element accesses of {name}");
        let (mut x, mut y, mut z, mut color) = (vec![], vec![], vec![], vec![]);
        let (mut c_time, mut c_op, mut c_tid, mut c_occ, mut c_line, mut c_addr) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        let (mut c_i, mut c_j, mut c_k) = (vec![], vec![], vec![]);
        each(&mut |k, e| {
            let (i, j, kk) = shape.ijk(e);
            x.push(j);
            y.push(if is3 { kk } else { aocc[k] as u64 });
            z.push(i);
            color.push(atime[k] as f64);
            c_time.push(atime[k] as u64);
            c_op.push(op_index(aop[k]) as u8);
            c_tid.push(atid[k] as u64);
            c_occ.push(aocc[k] as u64);
            c_line.push(aline[k]);
            c_addr.push(shape.base + e * shape.tb);
            c_i.push(i);
            c_j.push(j);
            c_k.push(kk);
            true
        });
        let hover = format!(
            "order (time) %{{customdata[0]}}<br>address 0x%{{customdata[5]:x}}<br>{}<br>variable {}<br>operation %{{customdata[1]}}<br>thread %{{customdata[2]}}<br>occurrence %{{customdata[3]}}<br>source %{{customdata[4]}}<extra></extra>",
            if is3 {
                "[%{customdata[6]}][%{customdata[7]}][%{customdata[8]}]"
            } else {
                "[%{customdata[6]}][%{customdata[7]}]"
            },
            super::html::escape_html(&name)
        );
        let mut cols_cd = vec![
            CdCol::U64(c_time),
            CdCol::Static(c_op, &OP_NAMES),
            CdCol::U64(c_tid),
            CdCol::U64(c_occ),
            CdCol::Str(c_line, sources.clone()),
            CdCol::U64(c_addr),
            CdCol::U64(c_i),
            CdCol::U64(c_j),
        ];
        if is3 {
            cols_cd.push(CdCol::U64(c_k));
        }
        let t = Scatter3D::new(x, y, z)
            .mode(Mode::Markers)
            .name(name.as_str())
            .hover_template(hover);
        scatter.add_trace(
            Ext::new(*t)
                .custom(CustomData { cols: cols_cd })
                .marker(time_marker(color, t_lo, t_hi, OneOrMany::One(4.0)))
                .boxed(),
        );
    } else {
        // Exact groups of (block of elements, time bin).
        let bdims = dims.clone();
        let key = |_row: usize, e: u64, res: u64| block_key(&shape, &bdims, e, res);
        // 2D: bins of occurrence (the scatter's y axis); 3D: space only, so
        // that groups at one position never hide each other.
        let (o_lo, o_hi) = if is3 {
            (0, 0)
        } else {
            rows.iter().fold((u64::MAX, 0), |(lo, hi), &k| {
                (lo.min(aocc[k] as u64), hi.max(aocc[k] as u64))
            })
        };
        let dim = |row: usize| if is3 { 0 } else { aocc[row] as u64 };
        let binned = aggregate(&a, &each, &key, &dim, o_lo, o_hi, o.point_budget);
        let gs: Vec<&Group> = binned.groups.iter().collect();
        let blocks: Vec<u64> = dims.iter().map(|d| d.div_ceil(binned.res).max(1)).collect();
        let desc = format!(
            "{touches} element accesses of `{name}` exceed the point budget of {}: each point is the exact group of accesses to one block of {} elements{}; colour is their mean time, marker size and hover give the count.",
            o.point_budget,
            blocks.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(" x "),
            if is3 { String::new() } else { format!(" with occurrences in one bin {} wide", binned.time_width) }
        );
        report.points = gs.len();
        scatter_title = format!(
            "{touches} element accesses of {name}, aggregated into {} points",
            gs.len()
        );
        report.aggregated = Some(desc);
        let centre = |g: &Group| -> (f64, f64, f64) {
            let (i, j, k) = shape.ijk(g.coord_min);
            let c = |v: u64, b: u64| (v / b * b) as f64 + (b as f64 - 1.0) / 2.0;
            (
                c(i, blocks[0]),
                c(j, blocks[1]),
                if is3 { c(k, blocks[2]) } else { 0.0 },
            )
        };
        let pos: Vec<(f64, f64, f64)> = gs.iter().map(|g| centre(g)).collect();
        let counts: Vec<u64> = gs.iter().map(|g| g.count).collect();
        let t = Scatter3D::new(
            pos.iter().map(|p| p.1).collect::<Vec<_>>(),
            if is3 {
                pos.iter().map(|p| p.2).collect::<Vec<_>>()
            } else {
                gs.iter().map(|g| g.occ_min as f64).collect::<Vec<_>>()
            },
            pos.iter().map(|p| p.0).collect::<Vec<_>>(),
        )
        .mode(Mode::Markers)
        .name(name.as_str())
        .hover_template("<b>%{customdata[0]} element accesses</b><br>order (time) %{customdata[1]} to %{customdata[2]}<br>elements %{customdata[3]} to %{customdata[4]}<br>loads %{customdata[5]}, stores %{customdata[6]}, modifies %{customdata[7]}<br>occurrence %{customdata[8]} to %{customdata[9]}<br>first: thread %{customdata[10]}, source %{customdata[11]}<extra></extra>");
        let cd = CustomData {
            cols: vec![
                CdCol::U64(counts.clone()),
                CdCol::U64(gs.iter().map(|g| g.t_min).collect()),
                CdCol::U64(gs.iter().map(|g| g.t_max).collect()),
                CdCol::U64(gs.iter().map(|g| g.coord_min).collect()),
                CdCol::U64(gs.iter().map(|g| g.coord_max).collect()),
                CdCol::U64(gs.iter().map(|g| g.ops[0]).collect()),
                CdCol::U64(gs.iter().map(|g| g.ops[1]).collect()),
                CdCol::U64(gs.iter().map(|g| g.ops[2]).collect()),
                CdCol::U64(gs.iter().map(|g| g.occ_min as u64).collect()),
                CdCol::U64(gs.iter().map(|g| g.occ_max as u64).collect()),
                CdCol::U64(gs.iter().map(|g| atid[g.first_row] as u64).collect()),
                CdCol::Str(
                    gs.iter().map(|g| aline[g.first_row]).collect(),
                    sources.clone(),
                ),
            ],
        };
        scatter.add_trace(
            Ext::new(*t)
                .custom(cd)
                .marker(time_marker(
                    gs.iter().map(|g| g.t_mean()).collect(),
                    t_lo,
                    t_hi,
                    OneOrMany::Many(count_sizes(&counts)),
                ))
                .boxed(),
        );
    }
    let flip = |a: Axis, n: u64| {
        if o.matrix_orientation {
            a.range(AxisRange::new(n as f64 - 0.5, -0.5))
        } else {
            a
        }
    };
    scatter.set_layout(
        Layout::new().height(800).scene(
            LayoutScene::new()
                .x_axis(Axis::new().title(Title::with_text(xl)))
                .y_axis(Axis::new().title(Title::with_text(yl)))
                .z_axis(flip(Axis::new().title(Title::with_text(zl)), dims[0])),
        ),
    );

    // ---- heatmaps ----
    let mut figures = vec![PageFigure {
        heading: scatter_title,
        note: format!(
            "{name} as a {dim_text} array of {type_bytes}-byte elements. Each point is one element access: {xl} (x), {yl} (y), {zl} (z), coloured from sooner (dark) to later (yellow)."
        ),
        plot: scatter,
        height: 800,
    }];
    if is3 {
        slice_figures(
            &shape,
            &each,
            atime,
            aop,
            budget,
            o,
            &mut figures,
            &mut report,
        );
    } else {
        grid_figures(
            &shape,
            &each,
            atime,
            aop,
            t_lo,
            t_hi,
            budget,
            o,
            &mut figures,
            &mut report,
        );
    }

    let fname = sanitize_name(&name, var);
    let title = format!(
        "{} memory access pattern of {name} ({dim_text})",
        kind.to_uppercase()
    );
    let mut intro = report.warnings.clone();
    if let Some(d) = &report.aggregated {
        intro.push(d.clone());
    }
    if super::interrupted() {
        return Err(VisError::Interrupted);
    }
    report.html = write_page(
        &o.figures_dir,
        &format!("{kind}_memory_access_pattern_{fname}.html"),
        &title,
        &intro,
        &figures,
    )?;

    if o.save {
        let mut header = vec!["index", "address", "variable", "occurrence", "row", "col"];
        if is3 {
            header.push("depth");
        }
        header.extend_from_slice(&["operation", "thread", "time"]);
        let mut w = CsvOut::create(
            &o.visinfo_dir,
            &format!("{kind}_memory_access_pattern_{fname}.csv"),
            &header,
        )?;
        let mut err = None;
        each(&mut |k, e| {
            let (i, j, kk) = shape.ijk(e);
            w.num(k as u64);
            w.hex(shape.base + e * shape.tb);
            w.text(&name);
            w.num(aocc[k] as u64);
            w.num(i);
            w.num(j);
            if is3 {
                w.num(kk);
            }
            w.text(op_name(aop[k]));
            w.num(atid[k] as u64);
            w.num(atime[k] as u64);
            match w.end_row() {
                Ok(()) => true,
                Err(e) => {
                    err = Some(e);
                    false
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        report.data_csv.push(w.finish()?);
    }
    Ok(report)
}

/// Key of the block of elements holding `e` when each dimension is cut into
/// `res` blocks.
fn block_key(shape: &Shape, dims: &[u64], e: u64, res: u64) -> u64 {
    let (i, j, k) = shape.ijk(e);
    let b: Vec<u64> = dims.iter().map(|d| d.div_ceil(res).max(1)).collect();
    let n: Vec<u64> = dims.iter().zip(&b).map(|(d, b)| d.div_ceil(*b)).collect();
    let mut key = (i / b[0]) * n[1] + j / b[1];
    if dims.len() == 3 {
        key = key * n[2] + k / b[2];
    }
    key
}

fn heat(
    x: Vec<u64>,
    y: Vec<u64>,
    z: Vec<Vec<Option<f64>>>,
    title: &str,
    scale: ColorScalePalette,
    axes: (&str, &str),
) -> Box<HeatMap<u64, u64, Vec<Option<f64>>>> {
    // Counts use a light-to-dark scale so that blank (never) reads as white.
    let counts = matches!(scale, ColorScalePalette::YlOrRd);
    HeatMap::new(x, y, z)
        .color_scale(ColorScale::Palette(scale))
        .reverse_scale(counts)
        .color_bar(ColorBar::new().title(title))
        .hover_template(format!(
            "{} %{{y}}, {} %{{x}}<br>{title} %{{z}}<extra></extra>",
            axes.0, axes.1
        ))
}

/// A count as a heatmap value: blank (`None`) when zero.
fn count_cell(c: u64) -> Option<f64> {
    (c > 0).then_some(c as f64)
}

/// Heatmap `z`: rows of optional cell values.
type ZRows = Vec<Vec<Option<f64>>>;

/// Rows of `z` values of a grid, row-major, `None` where `f` gives none.
fn rows_of(nr: usize, nc: usize, f: impl Fn(usize) -> Option<f64>) -> Vec<Vec<Option<f64>>> {
    (0..nr)
        .map(|r| (0..nc).map(|c| f(r * nc + c)).collect())
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn grid_figures(
    shape: &Shape,
    each: &Source<'_>,
    atime: &[u32],
    aop: &[u8],
    t_lo: u64,
    t_hi: u64,
    budget: u64,
    o: &FigureOptions,
    figures: &mut Vec<PageFigure>,
    report: &mut FigureReport,
) {
    let (rows, cols) = (shape.dims[0], shape.dims[1]);
    let f = merge_factor(&[rows, cols], budget);
    let (nr, nc) = (rows.div_ceil(f) as usize, cols.div_ceil(f) as usize);
    if f > 1 {
        report.warnings.push(format!(
            "The {rows} x {cols} grid has more cells than the point budget {budget}; heatmap cells are blocks of {f} x {f} elements."
        ));
    }
    let mut g = Grid::new(nr * nc);
    each(&mut |k, e| {
        let (i, j, _) = shape.ijk(e);
        let c = (i / f) as usize * nc + (j / f) as usize;
        let oi = op_index(aop[k]);
        g.add(c, atime[k] as u64, oi == 1 || oi == 2);
        true
    });
    let xs: Vec<u64> = (0..nc as u64).map(|c| c * f).collect();
    let ys: Vec<u64> = (0..nr as u64).map(|r| r * f).collect();
    let yaxis = || {
        let a = Axis::new().title(Title::with_text("row i"));
        if o.matrix_orientation {
            a.range(AxisRange::new(
                (nr as u64 * f) as f64 - f as f64 / 2.0,
                -(f as f64) / 2.0,
            ))
        } else {
            a
        }
    };
    let layout = || {
        Layout::new()
            .height(560)
            .x_axis(Axis::new().title(Title::with_text("column j")))
            .y_axis(yaxis())
    };
    // Merged cells hold the sum over their block; say so on the colour bar.
    let count_label = if f > 1 {
        format!("accesses per {f} x {f} block")
    } else {
        "accesses".to_string()
    };
    let maps: [(&str, &str, ZRows, ColorScalePalette); 4] = [
        (
            "Access count per element",
            &count_label,
            rows_of(nr, nc, |c| count_cell(g.count[c])),
            ColorScalePalette::YlOrRd,
        ),
        (
            "First access time per element",
            "first access",
            rows_of(nr, nc, |c| (g.count[c] > 0).then_some(g.first[c] as f64)),
            ColorScalePalette::Viridis,
        ),
        (
            "Last access time per element",
            "last access",
            rows_of(nr, nc, |c| (g.count[c] > 0).then_some(g.last[c] as f64)),
            ColorScalePalette::Viridis,
        ),
        (
            "Store share per element",
            "store share",
            rows_of(nr, nc, |c| {
                (g.count[c] > 0).then_some(g.stores[c] as f64 / g.count[c] as f64)
            }),
            ColorScalePalette::RdBu,
        ),
    ];
    let notes = [
        "How often each element was touched (a wide access touches every element it spans). White: never.",
        "When each element was touched first: along a row for row-major order, down a column for column-major. Blank: never.",
        "When each element was touched last.",
        "(stores + modifies) / accesses: 0 only loaded, 1 only written.",
    ];
    let max_count = g.count.iter().copied().max().unwrap_or(1).max(1) as f64;
    // Fixed colour ranges: counts from 0, shares from 0 to 1; times automatic.
    let ranges = [Some((0.0, max_count)), None, None, Some((0.0, 1.0))];
    for (((heading, label, z, scale), note), range) in maps.into_iter().zip(notes).zip(ranges) {
        let mut p = Plot::new();
        let h = heat(xs.clone(), ys.clone(), z, label, scale, ("row", "col"));
        p.add_trace(match range {
            Some((lo, hi)) => h.zauto(false).zmin(lo).zmax(hi),
            None => h,
        });
        p.set_layout(layout());
        figures.push(PageFigure {
            heading: heading.into(),
            note: note.into(),
            plot: p,
            height: 560,
        });
    }

    // Replay: cumulative count per cell after each of F time steps.
    let span = t_hi - t_lo + 1;
    let nf = REPLAY_FRAMES.min(span).max(1);
    let fr = merge_factor(&[rows, cols], (budget / nf).max(1)).max(f);
    let (rr, rc) = (rows.div_ceil(fr) as usize, cols.div_ceil(fr) as usize);
    let cells = rr * rc;
    let mut frames = vec![0u64; nf as usize * cells];
    each(&mut |k, e| {
        let (i, j, _) = shape.ijk(e);
        let c = (i / fr) as usize * rc + (j / fr) as usize;
        let fi = ((atime[k] as u64 - t_lo) as u128 * nf as u128 / span as u128) as usize;
        frames[fi * cells + c] += 1;
        true
    });
    for fi in 1..nf as usize {
        for c in 0..cells {
            frames[fi * cells + c] += frames[(fi - 1) * cells + c];
        }
    }
    let zmax = frames[(nf as usize - 1) * cells..]
        .iter()
        .copied()
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let rxs: Vec<u64> = (0..rc as u64).map(|c| c * fr).collect();
    let rys: Vec<u64> = (0..rr as u64).map(|r| r * fr).collect();
    let frame_heat = |fi: usize| {
        let z = rows_of(rr, rc, |c| count_cell(frames[fi * cells + c]));
        heat(
            rxs.clone(),
            rys.clone(),
            z,
            "accesses so far",
            ColorScalePalette::YlOrRd,
            ("row", "col"),
        )
        .zauto(false)
        .zmin(0.0)
        .zmax(zmax)
    };
    let thresholds: Vec<u64> = (0..nf)
        .map(|fi| t_lo + ((fi as u128 + 1) * span as u128 / nf as u128) as u64 - 1)
        .collect();
    let last = nf as usize - 1;
    let mut p = Plot::new();
    p.add_trace(frame_heat(last));
    let mut steps = Vec::new();
    for (fi, &th) in thresholds.iter().enumerate() {
        let name = format!("t{fi}");
        let mut tr = Traces::new();
        tr.push(frame_heat(fi) as Box<dyn Trace>);
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
    p.set_layout(
        layout()
            .height(640)
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
    figures.push(PageFigure {
        heading: "Replay of the traversal".into(),
        note: format!(
            "Cumulative accesses per element up to each of {nf} time steps; drag the slider or press Play.{}",
            if fr > 1 {
                format!(" Cells are blocks of {fr} x {fr} elements.")
            } else {
                String::new()
            }
        ),
        plot: p,
        height: 640,
    });
}

#[allow(clippy::too_many_arguments)]
fn slice_figures(
    shape: &Shape,
    each: &Source<'_>,
    atime: &[u32],
    _aop: &[u8],
    budget: u64,
    o: &FigureOptions,
    figures: &mut Vec<PageFigure>,
    report: &mut FigureReport,
) {
    let (planes, cols, depth) = (shape.dims[0], shape.dims[1], shape.dims[2]);
    let thick = planes.div_ceil(MAX_SLICES).max(1);
    let ns = planes.div_ceil(thick);
    let f = merge_factor(&[cols, depth], (budget / ns).max(1));
    let (nj, nk) = (cols.div_ceil(f) as usize, depth.div_ceil(f) as usize);
    if thick > 1 {
        report.warnings.push(format!(
            "{planes} planes are more than {MAX_SLICES} slices; each slice merges {thick} adjacent planes."
        ));
    }
    if f > 1 {
        report.warnings.push(format!(
            "The {cols} x {depth} planes times {ns} slices exceed the point budget {budget}; heatmap cells are blocks of {f} x {f} elements."
        ));
    }
    let cells = nj * nk;
    let mut g = Grid::new(ns as usize * cells);
    each(&mut |k, e| {
        let (i, j, kk) = shape.ijk(e);
        let c = (i / thick) as usize * cells + (j / f) as usize * nk + (kk / f) as usize;
        g.add(c, atime[k] as u64, false);
        true
    });
    let xs: Vec<u64> = (0..nk as u64).map(|c| c * f).collect();
    let ys: Vec<u64> = (0..nj as u64).map(|r| r * f).collect();
    let metrics: [(&str, &str, bool, ColorScalePalette); 2] = [
        (
            "First access time per element, one plane at a time",
            "first access",
            true,
            ColorScalePalette::Viridis,
        ),
        (
            "Access count per element, one plane at a time",
            "accesses",
            false,
            ColorScalePalette::YlOrRd,
        ),
    ];
    for (heading, label, is_time, scale) in metrics {
        let value = |c: usize| -> Option<f64> {
            if is_time {
                (g.count[c] > 0).then_some(g.first[c] as f64)
            } else {
                count_cell(g.count[c])
            }
        };
        let vals: Vec<f64> = (0..g.count.len()).filter_map(value).collect();
        let zmin = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let zmax = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (zmin, zmax) = if zmin.is_finite() {
            // Counts start at 0 so that a cell touched once is not the darkest.
            let zmin = if is_time { zmin } else { 0.0 };
            (zmin, zmax.max(zmin + 1.0))
        } else {
            (0.0, 1.0)
        };
        let mut p = Plot::new();
        let mut steps = Vec::new();
        for s in 0..ns as usize {
            let z = rows_of(nj, nk, |c| value(s * cells + c));
            let lo = s as u64 * thick;
            let hi = ((s as u64 + 1) * thick).min(planes) - 1;
            let plane = if lo == hi {
                format!("plane {lo}")
            } else {
                format!("planes {lo}-{hi}")
            };
            let t = heat(xs.clone(), ys.clone(), z, label, scale.clone(), ("j", "k"))
                .zauto(false)
                .zmin(zmin)
                .zmax(zmax)
                .name(plane.as_str())
                .visible(if s == 0 {
                    Visible::True
                } else {
                    Visible::False
                });
            p.add_trace(t);
            let vis: Vec<bool> = (0..ns as usize).map(|x| x == s).collect();
            steps.push(
                SliderStep::new()
                    .label(plane)
                    .method(SliderMethod::Restyle)
                    .args(json!([{"visible": vis}])),
            );
        }
        let yaxis = Axis::new().title(Title::with_text("j (column)"));
        let yaxis = if o.matrix_orientation {
            yaxis.range(AxisRange::new(
                (nj as u64 * f) as f64 - f as f64 / 2.0,
                -(f as f64) / 2.0,
            ))
        } else {
            yaxis
        };
        p.set_layout(
            Layout::new()
                .height(640)
                .x_axis(Axis::new().title(Title::with_text("k (depth)")))
                .y_axis(yaxis)
                .sliders(vec![Slider::new()
                    .y(-0.2)
                    .active(0)
                    .steps(steps)
                    .current_value(
                        plotly::layout::SliderCurrentValue::new().prefix("showing "),
                    )]),
        );
        figures.push(PageFigure {
            heading: heading.into(),
            note: "Each slice is one plane i (outermost index): j up the side, k along the bottom. Drag the slider to move through the planes.".into(),
            plot: p,
            height: 640,
        });
    }
}
