//! One variable seen as a 2D or 3D array of fixed-size elements.
//!
//! Reconstruction: `element = (addr - base) / type_bytes`. For a 2D array of
//! `cols` columns, `i = element / cols`, `j = element % cols`. For a 3D array
//! of `cols x depth` per plane, `i = element / (cols*depth)`, `j = (element %
//! (cols*depth)) / depth`, `k = element % depth` (k is contiguous in memory).
//! An access of `size` bytes touches every element from its first to its
//! last byte, so a 16-byte vector load over 4-byte ints touches 4 cells; all
//! per-element views (scatter, heatmaps, CSV) count touches.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use plotly::common::TickMode;
use plotly::layout::{AxisRange, LayoutScene};
use plotly::Layout;
use polars::prelude::DataFrame;

use super::array_exact::exact_scatter;
use super::array_groups::group_scatter;
use super::array_maps::{Cells, MapCells, Shape};
use super::array_points::{Drawn, Picked};
use super::complete::integer_axis;
use crate::filter::AccessBatches;
use crate::filter::CsvOut;
use crate::filter::VarId;
use crate::vis::error::VisError;
use crate::vis::input::classes::{Annot, ClassesSeen};
use crate::vis::input::tables::{for_items, op_name, FrameBatches, Item};
use crate::vis::input::tables::{Lines, VarInfo, Variables};
use crate::vis::options::FigureOptions;
use crate::vis::page::html::{file_word, write_page_of, Page, PageFigure, PageMeta};
use crate::vis::page::traces::MIX_NOTE;
use crate::vis::page::written::FigureReport;

impl Shape {
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
        self.cells_of(lo, hi)
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
pub fn array_2d(a: Array2d, o: &FigureOptions) -> Result<FigureReport, VisError> {
    let layout = ArrayLayout::Grid2d {
        cols: a.cols,
        type_bytes: a.type_bytes,
    };
    let acc = FrameBatches::read(a.acc)?;
    array_pattern_of(&acc, (a.vars, a.lines), a.var, layout, o)
}

/// What [`array_2d`] draws: variable `var` as a `rows x cols` matrix of
/// `type_bytes`-byte elements.
#[derive(Clone, Copy, Debug)]
pub struct Array2d<'a> {
    /// The access table ([`crate::filter::schema::access`]); only the rows
    /// of `var` are drawn.
    pub acc: &'a DataFrame,
    /// The variable table ([`crate::filter::schema::variable`]).
    pub vars: &'a DataFrame,
    /// The source line table ([`crate::filter::schema::line`]).
    pub lines: &'a DataFrame,
    /// The variable drawn: its id in the `var` columns.
    pub var: VarId,
    /// Columns of the matrix, at least 1.
    pub cols: u64,
    /// Bytes of one element, at least 1.
    pub type_bytes: u64,
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
pub fn array_3d(a: Array3d, o: &FigureOptions) -> Result<FigureReport, VisError> {
    let layout = ArrayLayout::Grid3d {
        cols: a.cols,
        depth: a.depth,
        type_bytes: a.type_bytes,
    };
    let acc = FrameBatches::read(a.acc)?;
    array_pattern_of(&acc, (a.vars, a.lines), a.var, layout, o)
}

/// What [`array_3d`] draws: variable `var` as a `planes x cols x depth`
/// array of `type_bytes`-byte elements.
#[derive(Clone, Copy, Debug)]
pub struct Array3d<'a> {
    /// The access table ([`crate::filter::schema::access`]); only the rows
    /// of `var` are drawn.
    pub acc: &'a DataFrame,
    /// The variable table ([`crate::filter::schema::variable`]).
    pub vars: &'a DataFrame,
    /// The source line table ([`crate::filter::schema::line`]).
    pub lines: &'a DataFrame,
    /// The variable drawn: its id in the `var` columns.
    pub var: VarId,
    /// Columns of a plane, at least 1.
    pub cols: u64,
    /// Elements along the contiguous dimension k, at least 1.
    pub depth: u64,
    /// Bytes of one element, at least 1.
    pub type_bytes: u64,
}

/// Draws variable `var`, an array of structures of `elem_bytes`-byte
/// elements, as a table: one row per element, one column per field, the
/// columns named after the fields (`x`, `pos.y`) to
/// `figures/2d_memory_access_pattern_<NAME>.html`.
///
/// `fields` are the fields' byte offsets within an element, ascending, and
/// their names. Bytes before the first field belong to the previous
/// element's last field, and padding to the field before it. The page,
/// warnings, `save` (with a `field` column after `col`) and costs are as
/// for [`array_2d`].
///
/// # Errors
/// As [`array_2d`], and no field.
pub fn array_fields(a: ArrayFields, o: &FigureOptions) -> Result<FigureReport, VisError> {
    let ArrayFields {
        acc,
        vars,
        lines,
        var,
        elem_bytes,
        fields,
    } = a;
    let acc = FrameBatches::read(acc)?;
    let layout = ArrayLayout::Fields { elem_bytes, fields };
    array_pattern_of(&acc, (vars, lines), var, layout, o)
}

/// Refuses an array of structures with no field, or fields not in
/// ascending order of offset.
fn check_fields(fields: &[(u64, String)]) -> Result<(), VisError> {
    if fields.is_empty() || fields.windows(2).any(|w| w[0].0 >= w[1].0) {
        return Err(VisError::BadOption(
            "An array of structures needs at least one field, with offsets in ascending order."
                .into(),
        ));
    }
    Ok(())
}

/// What [`array_fields`] draws: variable `var`, an array of structures of
/// `elem_bytes`-byte elements, one column per field.
#[derive(Clone, Copy, Debug)]
pub struct ArrayFields<'a> {
    /// The access table ([`crate::filter::schema::access`]); only the rows
    /// of `var` are drawn.
    pub acc: &'a DataFrame,
    /// The variable table ([`crate::filter::schema::variable`]).
    pub vars: &'a DataFrame,
    /// The source line table ([`crate::filter::schema::line`]).
    pub lines: &'a DataFrame,
    /// The variable drawn: its id in the `var` columns.
    pub var: VarId,
    /// Bytes of one structure.
    pub elem_bytes: u64,
    /// Byte offset of each field within a structure, ascending, and its
    /// name (`x`, `pos.y`).
    pub fields: &'a [(u64, String)],
}

/// The hand-off from the figure commands to the drawing: the tables, the
/// variable and the inner dimensions (`[cols]` or `[cols, depth]`).
struct Request<'a> {
    acc: &'a dyn AccessBatches,
    vars: &'a DataFrame,
    lines: &'a DataFrame,
    var: VarId,
    inner: &'a [u64],
    type_bytes: u64,
    /// Field columns of an array of structures (offset, name); empty for
    /// a plain array.
    fields: &'a [(u64, String)],
}

impl<'a> Request<'a> {
    /// A plain array: the access, variable and line tables, the variable,
    /// its inner dimensions and element size.
    fn grid(
        (acc, vars, lines): (&'a dyn AccessBatches, &'a DataFrame, &'a DataFrame),
        var: VarId,
        inner: &'a [u64],
        type_bytes: u64,
    ) -> Self {
        Request {
            acc,
            vars,
            lines,
            var,
            inner,
            type_bytes,
            fields: &[],
        }
    }
}

/// How [`array_pattern_of`] cuts the variable into elements.
#[derive(Clone, Copy, Debug)]
pub enum ArrayLayout<'a> {
    /// Rows of `cols` elements of `type_bytes` bytes, as [`array_2d`].
    Grid2d {
        /// Columns, at least 1.
        cols: u64,
        /// Bytes of one element, at least 1.
        type_bytes: u64,
    },
    /// Planes of `cols x depth` elements, as [`array_3d`].
    Grid3d {
        /// Columns of a plane, at least 1.
        cols: u64,
        /// Elements along the contiguous dimension, at least 1.
        depth: u64,
        /// Bytes of one element, at least 1.
        type_bytes: u64,
    },
    /// An array of structures, one column per field, as [`array_fields`].
    Fields {
        /// Bytes of one structure.
        elem_bytes: u64,
        /// Byte offset and name of each field, ascending.
        fields: &'a [(u64, String)],
    },
}

/// Draws variable `var` of the accesses `src` (read as a stream, once per
/// pass) as [`array_2d`], [`array_3d`] or [`array_fields`] draw a table.
///
/// Cost: one pass for the spans and the warnings; the scatter's passes
/// (one that keeps the touches within the point budget, else the
/// aggregation's, see [`aggregate`]); one pass for the heatmaps and the
/// replays; one more with `save`. Memory: the point budget's worth of
/// points, groups and cells, never the accesses.
///
/// # Errors
/// As [`array_2d`], and an access list that cannot be read.
pub fn array_pattern_of(
    src: &dyn AccessBatches,
    (vars, lines): (&DataFrame, &DataFrame),
    var: VarId,
    layout: ArrayLayout,
    o: &FigureOptions,
) -> Result<FigureReport, VisError> {
    // The one check of the options and fields on any array figure's
    // trip, before any work.
    o.validate()?;
    if let ArrayLayout::Fields { fields, .. } = layout {
        check_fields(fields)?;
    }
    let tables = (src, vars, lines);
    match layout {
        ArrayLayout::Grid2d { cols, type_bytes } => {
            draw_array(Request::grid(tables, var, &[cols], type_bytes), o)
        }
        ArrayLayout::Grid3d {
            cols,
            depth,
            type_bytes,
        } => draw_array(Request::grid(tables, var, &[cols, depth], type_bytes), o),
        ArrayLayout::Fields { elem_bytes, fields } => {
            let inner = [fields.len() as u64];
            let r = Request {
                acc: src,
                vars,
                lines,
                var,
                inner: &inner,
                type_bytes: elem_bytes,
                fields,
            };
            draw_array(r, o)
        }
    }
}

/// Draws request `r` (options and fields already checked).
fn draw_array(r: Request, o: &FigureOptions) -> Result<FigureReport, VisError> {
    let is3 = r.inner.len() == 2;
    let kind = if is3 { "3d" } else { "2d" };
    let v = Variables::read(r.vars)?;
    let info = v.get(r.var).cloned().ok_or(VisError::UnknownVariable {
        var: r.var,
        rows: v.rows(),
    })?;
    let l = Lines::read(r.lines)?;
    let mut report = FigureReport::default();
    let shape = if r.fields.is_empty() {
        array_shape(&info, r.inner, r.type_bytes, &mut report)?
    } else {
        struct_shape(&info, r.type_bytes, r.fields, &mut report)?
    };
    let picked = pick_rows(r.acc, &shape, r.var, o.point_budget, &mut report)?;
    let sparse = r.acc.classes().is_some_and(|c| c.sparse);
    let ann = Annot::new(o, &picked.classes, sparse)?;
    let cells = Cells {
        shape: &shape,
        t_lo: picked.t_lo,
        t_hi: picked.t_hi,
        o,
    };
    // The maps until the first whole pass over the touches has filled
    // them: the scatter's pass (its aggregation, at scale) draws both.
    let maps = RefCell::new(Some(MapCells::new(&cells, &mut report)));
    let filled = Cell::new(false);
    let (src, var, sh) = (r.acc, r.var, &shape);
    // Which fields of an array of structures the region touched: every
    // field gets a column, and the page names the ones left blank.
    let touched: Vec<Cell<bool>> = shape.fields.iter().map(|_| Cell::new(false)).collect();
    let each = |f: &mut dyn FnMut(&Item, u64) -> bool| {
        let mut guard = maps.borrow_mut();
        let mut fill = guard.as_mut().filter(|_| !filled.get());
        let mut whole = true;
        for_items(src, &mut |it| {
            if it.var != var {
                return true;
            }
            if let Some((e0, e1)) = sh.span(it.addr, it.size as u32) {
                for e in e0..=e1 {
                    // Only an array of structures has fields to mark; a
                    // plain array's touches pay no division for it.
                    if !touched.is_empty() {
                        if let Some(t) = touched.get(sh.ijk(e).1 as usize) {
                            t.set(true);
                        }
                    }
                    if let Some(m) = &mut fill {
                        m.add(&cells, it, e);
                    }
                    if !f(it, e) {
                        whole = false;
                        return false;
                    }
                }
            }
            true
        })?;
        match fill {
            Some(m) if !whole => *m = MapCells::new(&cells, &mut FigureReport::default()),
            Some(_) => filled.set(true),
            None => {}
        }
        Ok(())
    };
    let d = Drawn {
        shape: &shape,
        picked: &picked,
        each: &each,
        sources: Arc::new(l.sources().to_vec()),
        ann: &ann,
        o,
    };
    let mut figures = vec![scatter_figure(&d, &mut report)?];
    if !filled.get() {
        each(&mut |_, _| true)?;
    }
    let filled_maps = maps.borrow_mut().take();
    if let Some(m) = filled_maps {
        m.figures(&cells, &mut figures);
    }

    // mapvisual's file name: the variable's alone, in the user's words,
    // whatever the shape.
    let stem = format!(
        "{kind}_memory_access_pattern_{}",
        file_word(o.file_name.as_deref().unwrap_or(&info.name))
    );
    let title = format!(
        "{} memory access pattern of {} ({})",
        kind.to_uppercase(),
        info.name,
        shape_text(&shape)
    );
    let mut intro = report.warnings.clone();
    if let Some(c) = &ann.classes {
        intro.push(format!(
            "Colour of the scatter: {}, from green (best) to red ({}). {}",
            c.title,
            c.labels.last().map_or("", |l| l.as_str()),
            if report.aggregated.is_some() {
                MIX_NOTE
            } else {
                "Each class is its own trace: click a legend entry to hide it."
            }
        ));
    }
    intro.extend(report.aggregated.clone());
    intro.extend(untouched_fields_note(&shape.fields, &touched));
    if crate::vis::options::interrupted() {
        return Err(VisError::Interrupted);
    }
    let meta = page_meta(&r, &info.name, &shape, o);
    if let Some(note) = replaced_note(&o.figures_dir, &stem, &meta) {
        report.warnings.push(note.clone());
        intro.push(note);
    }
    // The 2D page's scatter is a 3D scene, the costly view to draw without
    // a GPU: drawn on request there, as the complete pattern's, so the page
    // opens at its heatmaps' cost. The 3D page is its scatter: drawn at load.
    let page = Page {
        title: &title,
        intro: &intro,
        links: &[],
        figures: &figures,
        meta: &meta,
        on_demand: (kind == "2d").then_some(0),
    };
    report.html = write_page_of(&o.figures_dir, &format!("{stem}.html"), &page)?;
    if o.save {
        report.data_csv.push(save_csv(&d, &format!("{stem}.csv"))?);
    }
    Ok(report)
}

/// The index page's facts of an array figure: the command that draws it
/// again, its shape and its trace.
fn page_meta(r: &Request, name: &str, shape: &Shape, o: &FigureOptions) -> PageMeta {
    let kind = if r.inner.len() == 2 { "3d" } else { "2d" };
    let mut command = format!("{kind}_memory_access_pattern {name}");
    if r.fields.is_empty() {
        for d in r.inner.iter().chain(std::iter::once(&r.type_bytes)) {
            command.push_str(&format!(" {d}"));
        }
    }
    let shape = if r.fields.is_empty() {
        format!(
            "{} array of {}-byte elements",
            dims_text(&shape.dims),
            r.type_bytes
        )
    } else {
        format!(
            "{} structures of {} bytes, one column per field",
            shape.dims[0], r.type_bytes
        )
    };
    PageMeta {
        command,
        shape,
        trace: o.provenance.clone(),
        analysis: o.analysis_id.clone(),
    }
}

/// `a 12 x 12 array of 8-byte elements`, or `16 structures of 24 bytes,
/// one column per field (x, y, id, m)`.
fn layout_text(shape: &Shape) -> String {
    if shape.fields.is_empty() {
        return format!(
            "a {} array of {}-byte elements",
            dims_text(&shape.dims),
            shape.tb
        );
    }
    let names: Vec<&str> = shape.fields.iter().map(|f| f.1.as_str()).collect();
    format!(
        "{} structures of {} bytes, one column per field ({})",
        shape.dims[0],
        shape.tb,
        names.join(", ")
    )
}

/// `12 x 12`, or `16 x fields x, y, id` for an array of structures.
fn shape_text(shape: &Shape) -> String {
    if shape.fields.is_empty() {
        return dims_text(&shape.dims);
    }
    let names: Vec<&str> = shape.fields.iter().map(|f| f.1.as_str()).collect();
    format!("{} x fields {}", shape.dims[0], names.join(", "))
}

/// The page's note on the fields of an array of structures that the
/// region never touched, whose columns stay blank: a field that a loop
/// brings into the cache with its neighbours but never uses.
fn untouched_fields_note(fields: &[(u64, String)], touched: &[Cell<bool>]) -> Option<String> {
    let blank: Vec<&str> = fields
        .iter()
        .zip(touched)
        .filter(|(_, t)| !t.get())
        .map(|(f, _)| f.1.as_str())
        .collect();
    match blank.len() {
        0 => None,
        1 => Some(format!(
            "Field {} is never touched in the region: its column is blank, though its bytes share the cache lines of the fields that are.",
            blank[0]
        )),
        _ => Some(format!(
            "Fields {} are never touched in the region: their columns are blank, though their bytes share the cache lines of the fields that are.",
            blank.join(", ")
        )),
    }
}

/// `12 x 12` for dimensions `[12, 12]`.
fn dims_text(dims: &[u64]) -> String {
    dims.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(" x ")
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

/// The array's shape: the outer dimension follows from the block size.
/// Rejects element sizes and dimensions of 0, empty blocks, and grids too
/// large to index; warns when the block is not a whole number of rows or
/// planes, or when the shape disagrees with the variable's type.
fn array_shape(
    info: &VarInfo,
    inner: &[u64],
    type_bytes: u64,
    report: &mut FigureReport,
) -> Result<Shape, VisError> {
    let name = &info.name;
    let is3 = inner.len() == 2;
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
    check_grid(name, info.size, inner, type_bytes)?;
    report
        .warnings
        .extend(shape_mismatch(info, inner, type_bytes));
    let row_bytes = inner.iter().fold(type_bytes, |p, &d| p.saturating_mul(d));
    let mut dims = vec![info.size.div_ceil(row_bytes)];
    dims.extend_from_slice(inner);
    if !info.size.is_multiple_of(row_bytes) {
        let unit = if is3 { "plane" } else { "row" };
        report.warnings.push(format!(
            "The block of `{name}` is {} bytes, not a multiple of {row_bytes} ({} x {type_bytes}-byte elements per {unit}); drawn as {} with the last {unit} incomplete.",
            info.size,
            dims_text(inner),
            dims_text(&dims),
        ));
    }
    Ok(Shape {
        name: name.clone(),
        path: info.path.clone(),
        base: info.base,
        size: info.size,
        tb: type_bytes,
        dims,
        fields: vec![],
    })
}

/// The shape of an array of structures of `elem`-byte elements drawn one
/// column per field: as many rows as the block holds elements.
fn struct_shape(
    info: &VarInfo,
    elem: u64,
    fields: &[(u64, String)],
    report: &mut FigureReport,
) -> Result<Shape, VisError> {
    let name = &info.name;
    if elem == 0 || fields.iter().any(|f| f.0 >= elem) {
        return Err(VisError::BadOption(format!(
            "The fields of `{name}` do not fit its {elem}-byte elements; give the shape as in 2d_memory_access_pattern NAME COLS TYPEBYTES."
        )));
    }
    if info.size == 0 {
        return Err(VisError::Empty(format!(
            "The block of `{name}` has size 0 bytes, so it has no elements to draw. Pick a variable with a known size."
        )));
    }
    report.warnings.extend(shape_mismatch(info, &[], elem));
    if !info.size.is_multiple_of(elem) {
        report.warnings.push(format!(
            "The block of `{name}` is {} bytes, not a multiple of its {elem}-byte elements; the last row is incomplete.",
            info.size
        ));
    }
    Ok(Shape {
        name: name.clone(),
        path: info.path.clone(),
        base: info.base,
        size: info.size,
        tb: elem,
        dims: vec![info.size.div_ceil(elem), fields.len() as u64],
        fields: fields.to_vec(),
    })
}

/// What the figure needs before it draws: the touches of `var` that fall
/// in its block, their time and the colour classes met; accesses outside
/// the block, or straddling its edge, are counted in warnings.
///
/// Cost: nothing per access when the tables tell (see
/// [`AccessBatches::var_spans`]) that all of `var`'s accesses lie inside
/// its block and are more than the `budget` (so the scatter aggregates, and
/// counts the touches as it does); else one pass.
fn pick_rows(
    src: &dyn AccessBatches,
    shape: &Shape,
    var: VarId,
    budget: usize,
    report: &mut FigureReport,
) -> Result<Picked, VisError> {
    let known = src
        .var_spans()
        .and_then(|v| v.get(var.index()).copied().flatten());
    if let Some(s) = known {
        let inside = s.addr.0 >= shape.base && s.last_byte < shape.base + shape.size;
        if inside && s.accesses > budget as u64 {
            return Ok(Picked {
                accesses: s.accesses,
                touches: None,
                t_lo: s.time.0,
                t_hi: s.time.1,
                occ: (1, s.max_occ),
                classes: ClassesSeen::uncoloured(),
            });
        }
    }
    let mut p = Picked {
        accesses: 0,
        touches: Some(0),
        t_lo: u64::MAX,
        t_hi: 0,
        occ: (u64::MAX, 0),
        classes: ClassesSeen::default(),
    };
    let (mut outside, mut partial) = (0u64, 0u64);
    for_items(src, &mut |it| {
        p.classes.add(it);
        if it.var != var {
            return true;
        }
        let Some((e0, e1)) = shape.span(it.addr, it.size as u32) else {
            outside += 1;
            return true;
        };
        partial += shape.partial(it.addr, it.size as u32) as u64;
        p.touches = p.touches.map(|t| t + e1 - e0 + 1);
        p.t_lo = p.t_lo.min(it.time);
        p.t_hi = p.t_hi.max(it.time);
        p.occ = (p.occ.0.min(it.occ), p.occ.1.max(it.occ));
        p.accesses += 1;
        true
    })?;
    let name = &shape.name;
    if outside > 0 {
        report.warnings.push(format!(
            "{outside} accesses of `{name}` fall outside its block [0x{:x}, 0x{:x}) and are not drawn; check the variable's base and size.",
            shape.base,
            shape.base + shape.size
        ));
    }
    if partial > 0 {
        report.warnings.push(format!(
            "{partial} accesses of `{name}` straddle the edge of its block; only the elements inside it are drawn."
        ));
    }
    if p.accesses == 0 {
        return Err(VisError::Empty(format!(
            "No access of `{name}` (variable {var}) falls inside its block, so there is nothing to draw. Check the memory kinds selected and the variable's base and size."
        )));
    }
    Ok(p)
}

/// The 3D scatter of element accesses, exact or aggregated above the point
/// budget, as the page's first figure.
fn scatter_figure(d: &Drawn, report: &mut FigureReport) -> Result<PageFigure, VisError> {
    let name = &d.shape.name;
    let exact = d.picked.touches.filter(|&t| t <= d.o.budget_3d() as u64);
    let (mut scatter, heading) = if let Some(touches) = exact {
        report.points = touches as usize;
        (
            exact_scatter(d)?,
            format!("{touches} element accesses of {name}"),
        )
    } else {
        let (plot, groups, touches, desc) = group_scatter(d)?;
        report.points = groups;
        report.aggregated = Some(desc);
        (
            plot,
            format!("{touches} element accesses of {name}, aggregated into {groups} points"),
        )
    };
    let (xl, yl, zl) = d.axes();
    // Whole-number axes up to the last index (x column, z row; y depth in
    // 3D, else the occurrence).
    let dims = &d.shape.dims;
    let last = |n: u64| n.saturating_sub(1);
    let y_max = if d.is3() {
        last(dims[2])
    } else {
        d.picked.occ.1
    };
    let mut z = integer_axis(zl, last(dims[0]));
    if d.o.matrix_orientation {
        z = z.range(AxisRange::new(d.shape.dims[0] as f64 - 0.5, -0.5));
    }
    let mut x = integer_axis(xl, last(dims[1]));
    if !d.shape.fields.is_empty() {
        let names = d.shape.fields.iter().map(|f| f.1.clone()).collect();
        let at = (0..d.shape.fields.len()).map(|j| j as f64).collect();
        x = x
            .tick_mode(TickMode::Array)
            .tick_values(at)
            .tick_text(names);
    }
    scatter.set_layout(
        Layout::new().height(800).scene(
            LayoutScene::new()
                .x_axis(x)
                .y_axis(integer_axis(yl, y_max))
                .z_axis(z),
        ),
    );
    Ok(PageFigure {
        heading,
        note: format!(
            "{name} as {}. Each point is one element access: {xl} (x), {yl} (y), {zl} (z), {}.",
            layout_text(d.shape),
            match &d.ann.classes {
                None => "coloured from sooner (dark) to later (yellow)".to_string(),
                Some(c) if exact.is_none() => format!("coloured by the mix of {}", c.title),
                Some(c) => format!("coloured by {}, one trace per class", c.title),
            }
        ),
        plot: scatter,
        height: 800,
    })
}

/// Writes one row per element touch to `visinfo/<file>`: the access row,
/// the element's address, the variable, occurrence, row, column (depth),
/// operation, thread and time.
fn save_csv(d: &Drawn, file: &str) -> Result<std::path::PathBuf, VisError> {
    let shape = d.shape;
    let mut header = vec!["index", "address", "variable", "occurrence", "row", "col"];
    if d.is3() {
        header.push("depth");
    }
    let fields = !shape.fields.is_empty();
    if fields {
        header.push("field");
    }
    header.extend_from_slice(&["operation", "thread", "time"]);
    if d.ann.classes.is_some() {
        header.push("class");
    }
    let mut w = CsvOut::create(&d.o.visinfo_dir, file, &header)?;
    (d.each)(&mut |it, e| {
        let (i, j, kk) = shape.ijk(e);
        w.num(it.row);
        w.hex(shape.addr_of(e));
        w.text(&shape.name);
        w.num(it.occ);
        w.num(i);
        w.num(j);
        if d.is3() {
            w.num(kk);
        }
        if fields {
            w.text(&shape.column_name(j));
        }
        w.text(op_name(it.op));
        w.num(it.tid as u64);
        w.num(it.time);
        if let Some(c) = &d.ann.classes {
            w.text(&c.labels[d.ann.class(it) as usize]);
        }
        w.row_done()
    })?;
    Ok(w.finish()?)
}

/// What is wrong with drawing `info` with these inner dimensions and
/// element size, when its type says otherwise: an element size that is not
/// the type's splits or merges elements, and inner dimensions that are not
/// the declared ones.
fn shape_mismatch(info: &VarInfo, inner: &[u64], type_bytes: u64) -> Vec<String> {
    let mut out = Vec::new();
    let name = &info.name;
    let known = info.elem_size as u64;
    if known > 0 && known != type_bytes {
        out.push(format!(
            "`{name}` holds {known}-byte elements, but it is drawn with {type_bytes}-byte cells, so {}; give {known} as the element size to draw one cell per element.",
            if type_bytes < known {
                format!("each element spans {} cells", known.div_ceil(type_bytes))
            } else {
                format!("each cell covers {} elements", type_bytes.div_ceil(known))
            }
        ));
    }
    // Only a declaration's dimensions (DWARF's for stack arrays and
    // globals) can contradict the user's: a heap block's come from its
    // size expression (`ROWS * COLS`), which declares no shape.
    if info.scope != "H" && info.dims.len() == inner.len() + 1 && info.dims[1..] != *inner {
        let want: Vec<String> = info.dims[1..].iter().map(|d| d.to_string()).collect();
        out.push(format!(
            "`{name}` is declared as {}, so its inner dimensions are {}; it is drawn with {} instead.",
            info.dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(" x "),
            want.join(" x "),
            inner.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(" x "),
        ));
    }
    out
}

/// A sentence saying that the figure file `stem.html` held a figure of
/// another shape, which this one replaces: the file name is the variable's
/// alone, as mapvisual's, so `2d_memory_access_pattern ps 1 64` replaces the
/// per-field figure of `ps`; the user should know.
fn replaced_note(dir: &std::path::Path, stem: &str, meta: &PageMeta) -> Option<String> {
    let file = dir.join(format!("{stem}.html"));
    let old = crate::vis::page::index::recorded_shape(&file)?;
    (old != crate::vis::page::html::escape_html(&meta.shape)).then(|| {
        format!(
            "{stem}.html showed `{}` ({}); it now shows this shape. Figures are named by variable \
             alone, as in mapvisual: rename the earlier file to keep both.",
            crate::vis::page::index::unescape(&old),
            crate::vis::page::index::unescape(
                &crate::vis::page::index::recorded_command(&file).unwrap_or_default()
            ),
        )
    })
}
