//! What a layout change would do to the caches, from the trace already
//! recorded: `what_if NAME LAYOUT`.
//!
//! The accesses of one variable are moved to where they would fall had the
//! data been laid out another way (a 2D array transposed, an array of
//! structures split into one array per field, rows or elements padded, the
//! base aligned), and the cache model of the `cache_stats` report runs
//! again over the whole access stream, so the variable still competes with
//! every other variable for the caches. A prediction counts misses, their
//! classes and the bytes used per line, what `what_if` and `advise` show;
//! not reuse distances or patterns, which neither shows. No
//! new trace is made: the order of the accesses is the recorded one, which
//! is right as long as the program would run the same loops over the new
//! layout.
//!
//! An access of the variable that straddles two elements (or rows, or
//! fields), or lies in bytes the layout does not place, is kept at its
//! recorded address and counted as not mapped.

use std::collections::BTreeMap;

use super::cache::{CacheModel, CacheSim, Counts};
use super::reorder::{Finder, Grid, Nest, Order, Reordered, Replay};
use super::report::{cache_stats, CacheReport, LocalityError, Options, ReportSinks};
use super::{drive, drive_split, AccessSink, LineId, NamedAccess, Names, VarId, VarInfo};
use crate::filter::analysis::Analysis;
use crate::filter::batches::{AccessBatch, AccessBatches, BatchFn};
use crate::filter::fields::struct_fields;
use crate::filter::model::MemKind;
use crate::filter::shape::{infer_shape, DrawShape, ShapeError};

/// A layout to predict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// The 2D array stored the other way; the shape (rows, columns, element
    /// bytes) as recorded, inferred when not given.
    Transpose(Option<(u64, u64, u64)>),
    /// The array of structures split into one array per accessed field.
    Soa,
    /// Each row (of a 2D array) or each element (of a 1D array or array of
    /// structures) followed by this many bytes.
    Pad(u64),
    /// The base moved up to the next multiple of this many bytes.
    Align(u64),
    /// Not a layout but a loop order: the two loops of the nest that walks
    /// the array column by column on the given source line (the line of
    /// its accesses with the most L1 misses when `None`) swapped.
    Interchange(Option<String>),
    /// As [`Layout::Interchange`], the nest's two loops cut into blocks of
    /// this many iterations instead.
    Tile(u64, Option<String>),
}

impl Layout {
    /// Parses `transpose ?ROWS COLS ELEMBYTES?`, `soa`, `pad BYTES`,
    /// `align BYTES`, `interchange ?FILE:LINE?` or `tile SIZE ?FILE:LINE?`.
    ///
    /// # Errors
    /// An unknown layout, or missing or malformed numbers, in words.
    pub fn parse(name: &str, args: &[String]) -> Result<Layout, WhatIfError> {
        let num = |s: &String| {
            s.parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| WhatIfError::Layout(format!("\"{s}\" is not a positive number")))
        };
        match (name, args) {
            ("transpose", []) => Ok(Layout::Transpose(None)),
            ("transpose", [r, c, e]) => Ok(Layout::Transpose(Some((num(r)?, num(c)?, num(e)?)))),
            ("soa", []) => Ok(Layout::Soa),
            ("pad", [b]) => Ok(Layout::Pad(num(b)?)),
            ("align", [b]) => Ok(Layout::Align(num(b)?)),
            ("interchange", []) => Ok(Layout::Interchange(None)),
            ("interchange", [l]) => Ok(Layout::Interchange(Some(l.clone()))),
            ("tile", [t]) => Ok(Layout::Tile(num(t)?, None)),
            ("tile", [t, l]) => Ok(Layout::Tile(num(t)?, Some(l.clone()))),
            _ => Err(WhatIfError::Layout(format!(
                "\"{name} {}\" is not a layout: give transpose ?ROWS COLS ELEMBYTES?, soa, pad BYTES, align BYTES, interchange ?FILE:LINE? or tile SIZE ?FILE:LINE?",
                args.join(" ")
            ))),
        }
    }
}

/// Why a prediction cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum WhatIfError {
    /// The layout does not fit the variable, or was not understood.
    #[error("{0}")]
    Layout(String),
    /// The variable's shape is unknown.
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// Simulating failed.
    #[error(transparent)]
    Locality(#[from] LocalityError),
}

impl From<crate::filter::error::FilterError> for WhatIfError {
    fn from(e: crate::filter::error::FilterError) -> Self {
        WhatIfError::Locality(LocalityError::Filter(e))
    }
}

/// The reports before and after the layout change.
#[derive(Clone, Debug)]
pub struct WhatIf {
    /// The recorded layout (what `cache_stats` prints).
    pub before: CacheReport,
    /// The new layout; its variable table may list extra variables (the
    /// per-field arrays `NAME.field` of a split).
    pub after: CacheReport,
    /// The variable's row (the same in both reports).
    pub var: VarId,
    /// The rows of `before` the change touches: the variable's, or for a
    /// loop order every variable its iterations access.
    pub before_vars: Vec<VarId>,
    /// The rows of `after` that hold the accesses the change touches.
    pub after_vars: Vec<VarId>,
    /// Accesses of the variable moved to the new layout.
    pub mapped: u64,
    /// Accesses of the variable kept at their recorded address.
    pub unmapped: u64,
    /// What the layout did, in words (shape used, new base, fields).
    pub notes: Vec<String>,
    /// Where the variable's bytes went: what [`Remapped`] applies to the
    /// accesses a figure reads (for a loop order, nowhere).
    pub map: LayoutMap,
    /// For a loop order: the nest found and its new order.
    pub reorder: Option<(Nest, Order)>,
}

/// Where one variable's bytes go under a layout.
#[derive(Clone, Debug)]
enum Map {
    /// Element (i, j) of a rows x cols array to (j, i).
    Transpose { rows: u64, cols: u64, elem: u64 },
    /// Field `f` of element i to `fields[f].base + i * fields[f].size`.
    Split { elem: u64, fields: Vec<Field> },
    /// Unit k (a row or element of `unit` bytes) to `base + k*(unit+pad)`.
    Pad { unit: u64, pad: u64, base: u64 },
    /// Every byte moved to `base`.
    Shift { base: u64 },
}

/// One field of a split array of structures.
#[derive(Clone, Debug)]
struct Field {
    offset: u64,
    size: u64,
    base: u64,
    var: VarId,
}

/// One variable's placement and where its bytes go under a layout: the
/// address rewrite of `what_if`, for the report's sinks and for figures.
#[derive(Clone, Debug)]
pub struct LayoutMap {
    var: VarId,
    base: u64,
    size: u64,
    /// The variable's base in the new layout (its first field's for a
    /// split).
    after_base: u64,
    map: Map,
}

impl LayoutMap {
    /// The variable row whose accesses move.
    pub fn var(&self) -> VarId {
        self.var
    }

    /// The variable's recorded base address.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The variable's base address in the new layout: the same as the
    /// recorded one but for `pad` (placed past the trace) and `align`.
    pub fn after_base(&self) -> u64 {
        self.after_base
    }

    /// The new (address, variable row) of an access at `addr` of `size`
    /// bytes of the variable; `None` when it straddles units or lies
    /// outside them (it then stays where it was recorded). O(fields).
    pub fn map(&self, addr: u64, size: u32) -> Option<(u64, VarId)> {
        if addr < self.base || addr + size as u64 > self.base + self.size {
            return None;
        }
        let off = addr - self.base;
        let size = size as u64;
        match &self.map {
            Map::Transpose { rows, cols, elem } => {
                let (k, o) = (off / elem, off % elem);
                (o + size <= *elem && k < rows * cols).then(|| {
                    let (i, j) = (k / cols, k % cols);
                    (self.base + (j * rows + i) * elem + o, self.var)
                })
            }
            Map::Split { elem, fields } => {
                let (i, o) = (off / elem, off % elem);
                fields
                    .iter()
                    .find(|f| o >= f.offset && o + size <= f.offset + f.size)
                    .map(|f| (f.base + i * f.size + (o - f.offset), f.var))
            }
            Map::Pad { unit, pad, base } => {
                let (k, o) = (off / unit, off % unit);
                (o + size <= *unit).then(|| (base + k * (unit + pad) + o, self.var))
            }
            Map::Shift { base } => Some((base + off, self.var)),
        }
    }
}

/// The cache model of one layout, fed the stream with the variable's
/// accesses moved: each access is rewritten as it is simulated, so no
/// batch is copied.
struct Rewrite<'a> {
    mapper: &'a LayoutMap,
    sim: CacheSim,
    mapped: u64,
    unmapped: u64,
}

impl AccessSink for Rewrite<'_> {
    fn accesses(&mut self, batch: &[NamedAccess]) {
        let var = self.mapper.var;
        for r in batch {
            if r.var != var {
                self.sim.access(r);
                continue;
            }
            match self.mapper.map(r.addr, r.size) {
                Some((addr, var)) => {
                    self.mapped += 1;
                    self.sim.access(&NamedAccess { addr, var, ..*r });
                }
                None => {
                    self.unmapped += 1;
                    self.sim.access(r);
                }
            }
        }
    }
}

/// What one pass learns before a split is built: per byte offset within
/// the variable's element, the widest access starting there.
struct Survey {
    var: VarId,
    base: u64,
    elem: u64,
    widths: BTreeMap<u64, u64>,
}

impl AccessSink for Survey {
    fn accesses(&mut self, batch: &[NamedAccess]) {
        for r in batch {
            if r.var == self.var && r.addr >= self.base && self.elem > 0 {
                let w = self
                    .widths
                    .entry((r.addr - self.base) % self.elem)
                    .or_default();
                *w = (*w).max(r.size as u64);
            }
        }
    }
}

/// Predicts the cache report of `a` had variable row `var` been laid out
/// as `layout`: the recorded report, and the report over the accesses with
/// the variable's addresses rewritten. Cost: the recorded report (read,
/// or simulated when the model differs from the analysis'), then one pass
/// over the access list with the cache model (two for `soa`, which first
/// surveys the fields' widths); memory as for `cache_stats`.
///
/// # Errors
/// The layout does not fit the variable (its shape is unknown, a `soa`
/// of something not an array of structures), or simulating fails.
pub fn what_if(
    a: &Analysis,
    kind: MemKind,
    opts: &Options,
    var: VarId,
    layout: &Layout,
) -> Result<WhatIf, WhatIfError> {
    what_if_after(a, opts, cache_stats(a, kind, opts)?, var, layout)
}

/// [`what_if`] given the recorded report `before` (which `advise`
/// computes once for all its candidates).
///
/// # Errors
/// As [`what_if`].
fn what_if_after(
    a: &Analysis,
    opts: &Options,
    before: CacheReport,
    var: VarId,
    layout: &Layout,
) -> Result<WhatIf, WhatIfError> {
    let p = prepare(a, opts, &before, var, layout, &mut Prepass::default())?;
    let mut out = simulate(a, opts, &before, var, vec![p])?;
    Ok(out.remove(0))
}

/// Predicts several layouts (and loop orders) of one variable together:
/// each is prepared (its surveys), then all are simulated over one pass
/// of the access list, a cache model per layout, each fed the stream
/// through its own address map or replay. The reports are those
/// [`what_if`] gives for each alone. Cost: one decode of the access list
/// for all (and one survey per variable for `soa`), the model's
/// work once per layout, on two threads.
///
/// # Errors
/// The first layout that does not fit, named by its position, or
/// simulating fails.
pub fn what_if_many(
    a: &Analysis,
    kind: MemKind,
    opts: &Options,
    var: VarId,
    layouts: &[Layout],
) -> Result<Vec<WhatIf>, WhatIfError> {
    let before = cache_stats(a, kind, opts)?;
    let mut pre = Prepass::default();
    let mut prepared = Vec::new();
    for (k, l) in layouts.iter().enumerate() {
        match prepare(a, opts, &before, var, l, &mut pre) {
            Ok(p) => prepared.push(p),
            Err(WhatIfError::Layout(e)) => {
                return Err(WhatIfError::Layout(format!(
                    "layout {} of {}: {e}",
                    k + 1,
                    layouts.len()
                )))
            }
            Err(e) => return Err(e),
        }
    }
    simulate(a, opts, &before, var, prepared)
}

/// What the passes before a simulation found, kept for the next
/// candidates: the nests by source line (a nest does not depend on the
/// order it is replayed in, so the candidates of one line share one pass)
/// and the surveys by variable and element size.
#[derive(Default)]
pub(crate) struct Prepass {
    nests: BTreeMap<LineId, Result<Nest, String>>,
    surveys: BTreeMap<(VarId, u64, u64), Survey>,
}

/// A change ready to simulate: the names of the new layout and how the
/// stream is changed.
pub(crate) struct Prepared {
    names: Names,
    shown: Vec<bool>,
    notes: Vec<String>,
    map: LayoutMap,
    after_vars: Vec<VarId>,
    before_vars: Vec<VarId>,
    order: Option<(Nest, Order, Vec<bool>)>,
}

impl Layout {
    /// The loop order and its source line, for the changes that reorder
    /// accesses rather than move them.
    fn order(&self) -> Option<(Order, Option<&str>)> {
        match self {
            Layout::Interchange(l) => Some((Order::Interchange, l.as_deref())),
            Layout::Tile(t, l) => Some((Order::Tile(*t), l.as_deref())),
            _ => None,
        }
    }
}

/// Prepares `layout` of `var`: the survey a split needs (field widths) or
/// the nest a loop order replays (each found once, kept in `pre`).
///
/// # Errors
/// The layout does not fit, or the trace shows no nest to reorder.
pub(crate) fn prepare(
    a: &Analysis,
    opts: &Options,
    before: &CacheReport,
    var: VarId,
    layout: &Layout,
    pre: &mut Prepass,
) -> Result<Prepared, WhatIfError> {
    if let Some((order, line)) = layout.order() {
        return prepare_order(a, opts, before, var, order, line, pre);
    }
    let mut names = Names::grouped(a, opts.grouping)?;
    let mut shown = before.shown.clone();
    let mut notes = Vec::new();
    let map = build(a, &opts.model, var, layout, &mut names, &mut notes, pre)?;
    let after_vars: Vec<VarId> = std::iter::once(var)
        .chain((a.vars.len() as u32..names.vars.len() as u32).map(VarId))
        .collect();
    shown.resize(names.vars.len(), true);
    Ok(Prepared {
        names,
        shown,
        notes,
        map,
        after_vars,
        before_vars: vec![var],
        order: None,
    })
}

/// [`prepare`] for a loop order: finds the nest on the variable's line
/// (one pass, see [`super::reorder`]).
fn prepare_order(
    a: &Analysis,
    opts: &Options,
    before: &CacheReport,
    var: VarId,
    order: Order,
    line: Option<&str>,
    pre: &mut Prepass,
) -> Result<Prepared, WhatIfError> {
    let names = Names::grouped(a, opts.grouping)?;
    let v = names.vars[var.index()].clone();
    let line = nest_line(before, var, &v.name, line)?;
    let fixed: Vec<bool> = (names.vars.iter())
        .map(|x| x.internal || x.scope == crate::trace::naming::Scope::Stack)
        .collect();
    let source = names.source(line).to_string();
    let found = match pre.nests.get(&line) {
        Some(n) => n.clone(),
        None => {
            let (rows, cols, elem) = shape(a, var, &v)?;
            let grid = Grid {
                base: v.base,
                cols,
                rows,
                elem,
            };
            let mut finder = Finder::new(var, line, grid, &fixed);
            drive(a, &mut [&mut finder])?;
            let n = finder.finish().map_err(|e| e.0);
            pre.nests.insert(line, n.clone());
            n
        }
    };
    let nest = found.map_err(|e| {
        WhatIfError::Layout(format!(
            "the trace shows no loop nest to reorder over \"{}\" on {source}: {e}",
            v.name
        ))
    })?;
    Ok(Prepared {
        notes: vec![nest_note(&nest, &order, &v.name, &source)],
        shown: before.shown.clone(),
        map: LayoutMap {
            var,
            base: v.base,
            size: v.size,
            after_base: v.base,
            map: Map::Shift { base: v.base },
        },
        after_vars: nest.touched.clone(),
        before_vars: nest.touched.clone(),
        order: Some((nest, order, fixed)),
        names,
    })
}

/// Where [`simulate`] keeps one change's model: a layout's rewrite, or a
/// loop order's model and the replay of its nest.
#[derive(Clone, Copy)]
enum Slot {
    Layout(usize),
    Order { sim: usize, replay: usize },
}

/// Simulates the prepared changes over one pass of the access list; the
/// reports, in the order given. Each change has a cache model of its own
/// (no reuse distances or patterns: a prediction shows neither). The
/// layouts' models run on two threads (see [`drive_split`]); the loop
/// orders replay on the caller's, the orders of one nest sharing one
/// replay (one held repetition).
///
/// # Errors
/// Simulating fails, or a nest did not replay as found.
pub(crate) fn simulate(
    a: &Analysis,
    opts: &Options,
    before: &CacheReport,
    var: VarId,
    prepared: Vec<Prepared>,
) -> Result<Vec<WhatIf>, WhatIfError> {
    // One model alone leaves a core to spare (two or more take both): its
    // outer levels run on a thread of their own.
    let one = prepared.len() == 1;
    let sim = || {
        let s = CacheSim::new(&opts.model).map_err(LocalityError::from)?;
        Ok::<_, LocalityError>(if one { s.piped() } else { s })
    };
    let mut rewrites: Vec<Rewrite> = Vec::new();
    let mut order_sims: Vec<CacheSim> = Vec::new();
    let mut which: Vec<Slot> = Vec::with_capacity(prepared.len());
    // The nests' lines, a replay each.
    let mut nest_lines: Vec<LineId> = Vec::new();
    for p in &prepared {
        match &p.order {
            None => {
                which.push(Slot::Layout(rewrites.len()));
                rewrites.push(Rewrite {
                    mapper: &p.map,
                    sim: sim()?,
                    mapped: 0,
                    unmapped: 0,
                });
            }
            Some((nest, _, _)) => {
                let replay = match nest_lines.iter().position(|&l| l == nest.line) {
                    Some(r) => r,
                    None => {
                        nest_lines.push(nest.line);
                        nest_lines.len() - 1
                    }
                };
                which.push(Slot::Order {
                    sim: order_sims.len(),
                    replay,
                });
                order_sims.push(sim()?);
            }
        }
    }
    let mut order_refs: Vec<[&mut dyn AccessSink; 1]> = order_sims
        .iter_mut()
        .map(|s| [s as &mut dyn AccessSink])
        .collect();
    let mut replays: Vec<Replay> = Vec::new();
    let mut refs = order_refs.iter_mut();
    for (p, w) in prepared.iter().zip(&which) {
        if let (Some((nest, order, fixed)), Slot::Order { replay: r, .. }) = (&p.order, w) {
            let sinks = refs.next().expect("one sink array per order");
            match replays.get_mut(*r) {
                Some(replay) => replay.add(order, sinks),
                None => replays.push(Replay::new(nest, fixed, vec![(order, sinks)])),
            }
        }
    }
    // The caller's thread takes the replays and the first half of the
    // layouts; the other thread the rest.
    let half = rewrites.len() / 2;
    let (first, second) = rewrites.split_at_mut(half);
    let mut mine: Vec<&mut dyn AccessSink> = (replays.iter_mut())
        .map(|r| r as &mut dyn AccessSink)
        .chain(first.iter_mut().map(|r| r as &mut dyn AccessSink))
        .collect();
    let mut theirs: Vec<&mut (dyn AccessSink + Send)> = (second.iter_mut())
        .map(|r| r as &mut (dyn AccessSink + Send))
        .collect();
    drive_split(a, &mut mine, &mut theirs)?;
    drop((mine, theirs));
    let replayed: Vec<(u64, u64)> = replays.iter().map(|r| (r.moved, r.mismatched)).collect();
    drop(replays);
    drop(order_refs);
    let mut rewrites: Vec<Option<(CacheSim, u64, u64)>> = (rewrites.into_iter())
        .map(|r| Some((r.sim, r.mapped, r.unmapped)))
        .collect();
    let mut order_sims: Vec<Option<CacheSim>> = order_sims.into_iter().map(Some).collect();
    let mut out = Vec::new();
    for (p, w) in prepared.into_iter().zip(which) {
        let (sim, moved, other) = match w {
            Slot::Layout(k) => rewrites[k].take().expect("each rewrite taken once"),
            Slot::Order { sim, replay } => {
                let s = order_sims[sim]
                    .take()
                    .expect("each order's model taken once");
                (s, replayed[replay].0, replayed[replay].1)
            }
        };
        if p.order.is_some() && other > 0 {
            return Err(WhatIfError::Layout(format!(
                "{other} runs of a nest did not replay as found: the analysis changed between the passes; run the command again"
            )));
        }
        let reorder = p.order.map(|(n, o, _)| (n, o));
        out.push(WhatIf {
            before: before.clone(),
            after: ReportSinks::prediction(sim, p.names, p.shown),
            var,
            before_vars: p.before_vars,
            after_vars: p.after_vars,
            mapped: moved,
            unmapped: if reorder.is_some() { 0 } else { other },
            notes: p.notes,
            map: p.map,
            reorder,
        });
    }
    Ok(out)
}

/// The line of the nest: the one named (`file.c:LINE`, or `LINE` when one
/// file has it), or the variable's line with the most first-level misses.
fn nest_line(
    before: &CacheReport,
    var: VarId,
    name: &str,
    line: Option<&str>,
) -> Result<LineId, WhatIfError> {
    let lines = (before.cache.pairs.iter().enumerate()).filter(|(_, (v, _))| *v == var);
    match line {
        None => lines
            .max_by_key(|(i, _)| before.cache.counts[*i].misses.first().copied())
            .map(|(_, &(_, l))| l)
            .ok_or_else(|| WhatIfError::Layout(format!("\"{name}\" is not accessed in the trace"))),
        Some(want) => {
            let found: Vec<LineId> = lines
                .map(|(_, &(_, l))| l)
                .filter(|&l| {
                    let s = before.names.source(l);
                    s == want || s.rsplit_once(':').is_some_and(|(_, n)| n == want)
                })
                .collect();
            match found[..] {
                [l] => Ok(l),
                [] => Err(WhatIfError::Layout(format!(
                    "no access of \"{name}\" is on line {want}: give one of the lines cache_stats lists for it"
                ))),
                _ => Err(WhatIfError::Layout(format!(
                    "\"{want}\" names several lines that access \"{name}\": give FILE:LINE"
                ))),
            }
        }
    }
}

/// The nest and its new order, in words.
fn nest_note(n: &Nest, order: &Order, name: &str, source: &str) -> String {
    let how = match order {
        Order::Interchange => "interchanged: the walk runs along the rows".to_string(),
        Order::Tile(t) => format!("tiled in blocks of {t} x {t} iterations"),
    };
    format!(
        "the nest on {source} walks {} rows of {name} down each of {} columns{}, {} to heap and global data an iteration; {how} (accesses to the stack keep their place)",
        n.inner,
        n.outer,
        if n.reps > 1 {
            format!(", {} times over", n.reps)
        } else {
            String::new()
        },
        if n.chunk == 1 {
            "1 access".to_string()
        } else {
            format!("{} accesses", n.chunk)
        }
    )
}

/// The map of the variable under `layout`; updates its entry in `names`
/// (and appends the per-field arrays of a split) so the patterns are
/// labelled in the new layout.
fn build(
    a: &Analysis,
    model: &CacheModel,
    var: VarId,
    layout: &Layout,
    names: &mut Names,
    notes: &mut Vec<String>,
    pre: &mut Prepass,
) -> Result<LayoutMap, WhatIfError> {
    let v = names.vars[var.index()].clone();
    let map = match layout {
        Layout::Interchange(_) | Layout::Tile(..) => {
            return Err(WhatIfError::Layout(
                "a loop order moves no address: prepare hands it to prepare_order".into(),
            ))
        }
        Layout::Transpose(shape) => transpose(a, var, &v, *shape, names, notes)?,
        Layout::Soa => split(a, var, &v, names, notes, pre)?,
        Layout::Pad(pad) => padded(model, var, &v, *pad, names, notes, past_every_access(a))?,
        Layout::Align(to) => {
            let base = v
                .base
                .div_ceil(*to)
                .checked_mul(*to)
                .filter(|b| b.checked_add(v.size).is_some())
                .ok_or_else(|| past_the_address_space(&v.name, &format!("align {to}")))?;
            notes.push(format!(
                "{} moved from {:#x} to {:#x} (aligned to {to} bytes)",
                v.name, v.base, base
            ));
            names.vars[var.index()].base = base;
            Map::Shift { base }
        }
    };
    Ok(LayoutMap {
        var,
        base: v.base,
        size: v.size,
        after_base: names.vars[var.index()].base,
        map,
    })
}

/// The transpose map: the shape given, or the one the 2D figure infers.
fn transpose(
    a: &Analysis,
    var: VarId,
    v: &VarInfo,
    shape: Option<(u64, u64, u64)>,
    names: &mut Names,
    notes: &mut Vec<String>,
) -> Result<Map, WhatIfError> {
    let (rows, cols, elem) = match shape {
        Some(s) => s,
        None => self::shape(a, var, v)?,
    };
    let bytes = rows
        .checked_mul(cols)
        .and_then(|n| n.checked_mul(elem))
        .ok_or_else(|| {
            past_the_address_space(&v.name, &format!("transpose {rows} {cols} {elem}"))
        })?;
    if bytes > v.size || rows * cols == 0 {
        return Err(WhatIfError::Layout(format!(
            "{rows} x {cols} elements of {elem} bytes do not fit in \"{}\" ({} bytes)",
            v.name, v.size
        )));
    }
    notes.push(format!(
        "{} read as {rows} x {cols} elements of {elem} bytes, stored as {cols} x {rows}",
        v.name
    ));
    names.vars[var.index()].dims = vec![cols, rows];
    Ok(Map::Transpose { rows, cols, elem })
}

/// (rows, columns, element bytes) of a 2D array, as the 2D figure infers
/// them.
fn shape(a: &Analysis, var: VarId, v: &VarInfo) -> Result<(u64, u64, u64), WhatIfError> {
    match infer_shape(a, var, 2)? {
        DrawShape::Grid { cols, elem, .. } if cols * elem > 0 => {
            Ok((v.size / (cols * elem), cols, elem))
        }
        _ => Err(WhatIfError::Layout(format!(
            "\"{}\" is not a 2D array of known shape: give transpose ROWS COLS ELEMBYTES",
            v.name
        ))),
    }
}

/// The split of an array of structures: one array per accessed field, at
/// the variable's base one after another, each as wide as the widest
/// access at its offset (at most the gap to the next field).
fn split(
    a: &Analysis,
    var: VarId,
    v: &VarInfo,
    names: &mut Names,
    notes: &mut Vec<String>,
    pre: &mut Prepass,
) -> Result<Map, WhatIfError> {
    let fields = struct_fields(a, var).map_err(crate::filter::error::FilterError::from)?;
    let elem = v.elem_size as u64;
    if fields.is_empty() || elem == 0 {
        return Err(WhatIfError::Layout(format!(
            "\"{}\" is not an array of structures whose fields the region accessed",
            v.name
        )));
    }
    let survey = survey(a, pre, var, v.base, elem)?;
    let n = v.size / elem;
    let mut base = v.base;
    let mut out = Vec::new();
    for (k, f) in fields.iter().enumerate() {
        let gap = fields.get(k + 1).map_or(elem, |g| g.offset) - f.offset;
        let size = survey
            .widths
            .get(&f.offset)
            .copied()
            .unwrap_or(gap)
            .min(gap);
        base = base.div_ceil(size) * size;
        let row = names.vars.len() as u32;
        names.vars.push(VarInfo {
            name: format!("{}.{}", v.name, f.name),
            base,
            size: n * size,
            elem_size: size as u32,
            dims: vec![n],
            scope: v.scope,
            internal: false,
        });
        notes.push(format!(
            "{}.{}: {n} elements of {size} bytes at {base:#x}",
            v.name, f.name
        ));
        out.push(Field {
            offset: f.offset,
            size,
            base,
            var: VarId(row),
        });
        base += n * size;
    }
    Ok(Map::Split { elem, fields: out })
}

/// The padded array: rows of a 2D array (elements otherwise) followed by
/// `pad` bytes, placed past the highest address the trace touches so it
/// overlaps no other variable, at the same offset within the largest cache
/// way (at least a page) as the recorded base, so its first line falls in
/// the same set of every level.
fn padded(
    model: &CacheModel,
    var: VarId,
    v: &VarInfo,
    pad: u64,
    names: &mut Names,
    notes: &mut Vec<String>,
    end: u64,
) -> Result<Map, WhatIfError> {
    let elem = v.elem_size as u64;
    let unit = match v.dims.len() {
        0 | 1 => elem,
        _ => v.dims[v.dims.len() - 1] * elem,
    };
    if unit == 0 {
        return Err(WhatIfError::Layout(format!(
            "the element size of \"{}\" is unknown",
            v.name
        )));
    }
    let way = model
        .levels
        .iter()
        .map(|l| l.size / u64::from(l.ways))
        .max()
        .unwrap_or(0)
        .max(4096)
        .next_power_of_two();
    // Every byte of the new layout must have an address: a pad so large
    // that the rows' stride or the array's end passes 2^64 is refused
    // rather than wrapped round to a confident, wrong prediction.
    let size = unit
        .checked_add(pad)
        .and_then(|stride| (v.size / unit).checked_mul(stride));
    let base = end
        .div_ceil(way)
        .checked_mul(way)
        .and_then(|b| b.checked_add(v.base % way));
    let (Some(size), Some(base)) = (size, base) else {
        return Err(past_the_address_space(&v.name, &format!("pad {pad}")));
    };
    if base.checked_add(size).is_none() {
        return Err(past_the_address_space(&v.name, &format!("pad {pad}")));
    }
    let what = if v.dims.len() >= 2 { "row" } else { "element" };
    notes.push(format!(
        "each {what} of {unit} bytes padded by {pad}: {} placed at {base:#x}, past the highest address the trace touches, at the same offset within {way} bytes as its recorded base {:#x}",
        v.name, v.base
    ));
    let vi = &mut names.vars[var.index()];
    vi.base = base;
    vi.size = size;
    Ok(Map::Pad { unit, pad, base })
}

/// The refusal of a layout that would place bytes of `name` past the end
/// of the 64-bit address space.
fn past_the_address_space(name: &str, layout: &str) -> WhatIfError {
    WhatIfError::Layout(format!(
        "\"{layout}\" would place bytes of \"{name}\" past the end of the 64-bit address space, where no program can have them, so there is nothing to predict: give a smaller number"
    ))
}

/// An address past every byte the trace touches: the highest location
/// any variable's accesses start at (the lookup table's totals, read with
/// no pass) plus the widest access the access list can hold (its sizes
/// are 16-bit). A padded array placed from here at its base's offset
/// within the largest cache way falls in the same sets as anywhere else
/// past the trace, so the prediction does not depend on how far past it
/// is.
fn past_every_access(a: &Analysis) -> u64 {
    let highest = (0..a.vars.len())
        .map(|v| a.locations.totals(v))
        .filter(|t| t.locations > 0)
        .map(|t| t.highest)
        .max();
    highest.map_or(0, |h| h.saturating_add(u64::from(u16::MAX) + 1))
}

/// One pass over the accesses: the field widths; kept in `pre`, so the
/// candidates of one variable and element size share the pass.
fn survey<'p>(
    a: &Analysis,
    pre: &'p mut Prepass,
    var: VarId,
    base: u64,
    elem: u64,
) -> Result<&'p Survey, WhatIfError> {
    use std::collections::btree_map::Entry;
    match pre.surveys.entry((var, base, elem)) {
        Entry::Occupied(e) => Ok(e.into_mut()),
        Entry::Vacant(e) => {
            let mut s = Survey {
                var,
                base,
                elem,
                widths: BTreeMap::new(),
            };
            drive(a, &mut [&mut s])?;
            Ok(e.insert(s))
        }
    }
}

/// Accesses read for a figure with one variable's addresses rewritten by
/// a [`LayoutMap`]: the accesses `what_if` simulated for the new layout.
/// Each batch of `inner` is copied once and its variable's rows moved;
/// accesses the map does not place keep their recorded address. Time,
/// operation and occurrence stay as recorded (the map moves each location
/// to a location of its own, so the n-th access to one is the n-th to the
/// other). Cost: one copy of each batch per pass, O(fields) per access of
/// the variable.
pub struct Remapped<'a> {
    inner: &'a dyn AccessBatches,
    map: &'a LayoutMap,
}

impl<'a> Remapped<'a> {
    /// The accesses of `inner`, those of `map`'s variable moved.
    pub fn new(inner: &'a dyn AccessBatches, map: &'a LayoutMap) -> Remapped<'a> {
        Remapped { inner, map }
    }
}

impl AccessBatches for Remapped<'_> {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn visit(&self, f: &mut BatchFn) -> Result<(), crate::filter::error::FilterError> {
        let mut moved = AccessBatch::default();
        self.inner.visit(&mut |b| {
            moved.clone_from(b);
            for k in 0..moved.len() {
                if moved.var[k] != self.map.var.0 {
                    continue;
                }
                if let Some((addr, var)) = self.map.map(moved.addr[k], u32::from(moved.size[k])) {
                    moved.addr[k] = addr;
                    moved.var[k] = var.0;
                }
            }
            f(&moved)
        })
    }

    fn unique_times(&self) -> bool {
        self.inner.unique_times()
    }
}

/// One row of the before/after table: a variable's counts in one layout.
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutRow {
    /// Variable name (`NAME.field` for the arrays of a split).
    pub variable: String,
    /// `before` (the recorded layout) or `after` (the new one).
    pub layout: &'static str,
    /// The variable's counts.
    pub counts: Counts,
    /// L1 misses per access.
    pub miss_ratio: f64,
    /// Bytes used per line fetched into L1.
    pub line_bytes_used: f64,
}

/// Every variable of both reports, before then after, in each report's
/// order: what `what_if NAME LAYOUT save` writes as CSV.
pub fn before_after_rows(w: &WhatIf) -> Vec<LayoutRow> {
    let side = |r: &CacheReport, layout: &'static str| {
        r.per_variable()
            .into_iter()
            .map(move |row| LayoutRow {
                miss_ratio: row.miss_ratio(),
                line_bytes_used: row.bytes_per_line(),
                variable: row.key,
                layout,
                counts: row.counts,
            })
            .collect::<Vec<_>>()
    };
    let mut out = side(&w.before, "before");
    out.extend(side(&w.after, "after"));
    out
}

/// The before/after rows as a table: `variable`, `layout`, `accesses`,
/// `misses_L1` … per level, `compulsory`, `miss_ratio`,
/// `line_bytes_used`.
///
/// # Errors
/// Only if polars refuses the columns (they have equal lengths).
pub fn before_after_table(w: &WhatIf) -> polars::prelude::PolarsResult<polars::prelude::DataFrame> {
    use polars::prelude::{Column, DataFrame};
    let rows = before_after_rows(w);
    let levels: Vec<String> = w.after.level_names();
    let col = |name: &str, f: &dyn Fn(&LayoutRow) -> u64| {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<u64>>())
    };
    let mut cols = vec![
        Column::new(
            "variable".into(),
            rows.iter().map(|r| r.variable.clone()).collect::<Vec<_>>(),
        ),
        Column::new(
            "layout".into(),
            rows.iter().map(|r| r.layout).collect::<Vec<_>>(),
        ),
        col("accesses", &|r| r.counts.accesses),
    ];
    for (i, l) in levels.iter().enumerate() {
        cols.push(col(&format!("misses_{l}"), &|r| r.counts.misses[i]));
    }
    cols.push(col("compulsory", &|r| r.counts.compulsory()));
    cols.push(Column::new(
        "miss_ratio".into(),
        rows.iter().map(|r| r.miss_ratio).collect::<Vec<_>>(),
    ));
    cols.push(Column::new(
        "line_bytes_used".into(),
        rows.iter().map(|r| r.line_bytes_used).collect::<Vec<_>>(),
    ));
    let names = Counts::default().class_columns(&levels);
    for (k, (name, _)) in names.into_iter().enumerate() {
        let values = rows.iter().map(|r| r.counts.class_columns(&levels)[k].1);
        cols.push(Column::new(name.into(), values.collect::<Vec<u64>>()));
    }
    DataFrame::new(cols)
}

/// Misses per level of what the change touches, before and after: the
/// recorded variable's row before, and after the sum over the rows that
/// hold its accesses (the per-field arrays of a split); for a loop order,
/// every variable its iterations access, on both sides. Per level,
/// innermost first.
pub fn variable_misses(w: &WhatIf) -> (Vec<u64>, Vec<u64>) {
    let sum = |r: &CacheReport, vars: &[VarId]| {
        let mut c = Counts::default();
        for (i, &(v, _)) in r.cache.pairs.iter().enumerate() {
            if vars.contains(&v) {
                c.add(&r.cache.counts[i]);
            }
        }
        let n = r.cache.model.levels.len();
        (0..n)
            .map(|l| c.misses.get(l).copied().unwrap_or(0))
            .collect::<Vec<u64>>()
    };
    (sum(&w.before, &w.before_vars), sum(&w.after, &w.after_vars))
}

/// Counts per source line of the accesses of variable rows `vars` in a
/// report, keyed by `file.c:LINE`.
pub fn per_line_of(r: &CacheReport, vars: &[VarId]) -> BTreeMap<String, super::cache::Counts> {
    let mut out: BTreeMap<String, super::cache::Counts> = BTreeMap::new();
    for (i, &(v, l)) in r.cache.pairs.iter().enumerate() {
        if vars.contains(&v) {
            out.entry(r.names.source(l).to_string())
                .or_default()
                .add(&r.cache.counts[i]);
        }
    }
    out
}

impl WhatIf {
    /// The accesses a figure reads under the change, from `before` (the
    /// recorded ones): the variable's addresses moved by the layout, or
    /// for a loop order the nest's accesses replayed in the new order.
    pub fn after_accesses<'a>(
        &'a self,
        before: &'a dyn AccessBatches,
    ) -> Box<dyn AccessBatches + 'a> {
        match &self.reorder {
            Some((nest, order)) => Box::new(Reordered::new(before, nest, order)),
            None => Box::new(Remapped::new(before, &self.map)),
        }
    }

    /// See [`before_after_table`].
    pub fn table(&self) -> polars::prelude::PolarsResult<polars::prelude::DataFrame> {
        before_after_table(self)
    }

    /// [`WhatIf::table`] with a last column `trace` holding `state` (the
    /// analysis' [`crate::filter::model::TraceSummary::trace_state`]) on every
    /// row, so a partial analysis is marked in the file itself.
    ///
    /// # Errors
    /// Only if polars refuses the columns.
    pub fn table_marked(
        &self,
        state: &str,
    ) -> Result<polars::prelude::DataFrame, crate::filter::error::FilterError> {
        let mut df = self.table()?;
        crate::filter::csv::add_text_column(&mut df, "trace", state)?;
        Ok(df)
    }

    /// See [`variable_misses`].
    pub fn variable_misses(&self) -> (Vec<u64>, Vec<u64>) {
        variable_misses(self)
    }

    /// Counts per source line of the variable's accesses, before and
    /// after (see [`per_line_of`]): the recorded row before, the rows
    /// holding its accesses after.
    pub fn per_line(&self) -> (BTreeMap<String, Counts>, BTreeMap<String, Counts>) {
        (
            per_line_of(&self.before, &[self.var]),
            per_line_of(&self.after, &self.after_vars),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapper(map: Map) -> LayoutMap {
        LayoutMap {
            var: VarId(3),
            base: 0x1000,
            size: 6 * 8,
            after_base: 0x1000,
            map,
        }
    }

    #[test]
    fn whatif_transpose_swaps_indices() {
        // 2 x 3 doubles: (1, 2) at index 5 goes to (2, 1) at index 2*2+1.
        let m = mapper(Map::Transpose {
            rows: 2,
            cols: 3,
            elem: 8,
        });
        assert_eq!(m.map(0x1000 + 5 * 8, 8), Some((0x1000 + 5 * 8, VarId(3))));
        assert_eq!(m.map(0x1000 + 8, 8), Some((0x1000 + 2 * 8, VarId(3))));
        assert_eq!(m.map(0x1000 + 4, 8), None);
        assert_eq!(m.map(0x1000 + 6 * 8, 8), None);
    }

    #[test]
    fn whatif_split_and_pad_place_fields_and_units() {
        let m = mapper(Map::Split {
            elem: 16,
            fields: vec![Field {
                offset: 8,
                size: 8,
                base: 0x2000,
                var: VarId(9),
            }],
        });
        assert_eq!(m.map(0x1000 + 16 + 8, 8), Some((0x2008, VarId(9))));
        assert_eq!(m.map(0x1000 + 16, 8), None);
        let p = mapper(Map::Pad {
            unit: 24,
            pad: 8,
            base: 0x4000,
        });
        assert_eq!(
            p.map(0x1000 + 24 + 16, 8),
            Some((0x4000 + 32 + 16, VarId(3)))
        );
        assert_eq!(p.map(0x1000 + 20, 8), None);
    }

    #[test]
    fn whatif_layouts_parse() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(Layout::parse("pad", &s(&["64"])).unwrap(), Layout::Pad(64));
        assert_eq!(
            Layout::parse("transpose", &s(&["2", "3", "8"])).unwrap(),
            Layout::Transpose(Some((2, 3, 8)))
        );
        assert!(Layout::parse("pad", &[]).is_err());
        assert!(Layout::parse("skew", &[]).is_err());
    }
}
