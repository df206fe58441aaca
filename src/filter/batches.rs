//! Streaming reads of a selection of the access list for the figures:
//! typed column batches in time order, with each access' occurrence (the
//! n-th access to its location, 64 bits) counted as the batches stream past
//! and, when the figure is coloured by class, each access' colour class.
//!
//! A figure visits the batches once per pass and keeps only what it draws
//! (bins, cells, groups), so no pass holds the selected accesses: memory is
//! one row group of the access list, one batch of the selection, and one
//! counter per unique location selected (the occurrence), plus the cache
//! model's state when coloured.
use polars::prelude::*;

use super::access::NamedAccess;
use super::analysis::Analysis;
use super::locality::cache::CacheModel;
use super::locality::colour::{ClassNames, Classifier, ColourMode};
use super::locality::report::LocalityError;
use super::schema::access as ac;
use super::{FilterError, Selection};

/// One batch of accesses, in time order, as columns of equal length.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AccessBatch {
    /// Order of the access in the trace.
    pub time: Vec<u64>,
    /// `b'L'`, `b'S'` or `b'M'`.
    pub op: Vec<u8>,
    /// Address of the first byte.
    pub addr: Vec<u64>,
    /// Bytes accessed.
    pub size: Vec<u16>,
    /// Thread.
    pub tid: Vec<u16>,
    /// Row of the variable table.
    pub var: Vec<u32>,
    /// Row of the line table.
    pub line: Vec<u32>,
    /// Occurrence of the location (address, variable), from 1.
    pub occ: Vec<u64>,
    /// Colour class of each access, when the figure is coloured by class.
    pub colour: Option<Vec<u8>>,
}

impl AccessBatch {
    /// Accesses in the batch.
    pub fn len(&self) -> usize {
        self.time.len()
    }

    /// Whether the batch holds no access.
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// Empties the columns, keeping their room.
    fn clear(&mut self) {
        self.time.clear();
        self.op.clear();
        self.addr.clear();
        self.size.clear();
        self.tid.clear();
        self.var.clear();
        self.line.clear();
        self.occ.clear();
        if let Some(c) = &mut self.colour {
            c.clear();
        }
    }
}

/// The visitor a pass over [`AccessBatches`] calls per batch: returns
/// false to stop the pass.
pub type BatchFn<'a> = dyn FnMut(&AccessBatch) -> Result<bool, FilterError> + 'a;

/// Accesses read as batches in time order, as many times as a figure needs.
pub trait AccessBatches {
    /// Accesses a whole pass visits.
    fn len(&self) -> u64;
    /// Whether a pass visits nothing.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// One pass: calls `f` with each batch, in time order, until `f`
    /// returns false or the accesses end.
    fn visit(&self, f: &mut BatchFn) -> Result<(), FilterError>;
    /// The names of the colour classes of [`AccessBatch::colour`], when
    /// the batches carry them.
    fn classes(&self) -> Option<&ClassNames> {
        None
    }
}

/// The accesses of a [`Selection`] of an analysis, read from its access
/// list (memory or dataset) at each pass.
pub struct SelectionBatches<'a> {
    a: &'a Analysis,
    sel: Selection,
    colour: Option<(Classifier, ClassNames)>,
}

impl<'a> SelectionBatches<'a> {
    /// The accesses of `sel`, coloured by `mode` under the cache `model`
    /// (no colour for [`ColourMode::Default`]).
    ///
    /// # Errors
    /// A cache model with no level.
    pub fn new(
        a: &'a Analysis,
        sel: Selection,
        mode: ColourMode,
        model: &CacheModel,
    ) -> Result<SelectionBatches<'a>, LocalityError> {
        Ok(SelectionBatches {
            a,
            sel,
            colour: Classifier::new(mode, model)?,
        })
    }

    /// The accesses of `sel`, with no colour classes.
    pub fn plain(a: &'a Analysis, sel: Selection) -> SelectionBatches<'a> {
        SelectionBatches {
            a,
            sel,
            colour: None,
        }
    }
}

impl AccessBatches for SelectionBatches<'_> {
    fn len(&self) -> u64 {
        self.sel.count
    }

    fn classes(&self) -> Option<&ClassNames> {
        self.colour.as_ref().map(|c| &c.1)
    }

    /// Cost: one pass over the access list (every access when coloured,
    /// since the cache model sees them all; else only those of the
    /// selected variables are copied into batches); one hash lookup per
    /// selected access for its occurrence.
    fn visit(&self, f: &mut BatchFn) -> Result<(), FilterError> {
        let mut classifier = self.colour.as_ref().map(|c| c.0.clone());
        // With colours, the model must see the accesses the figure leaves out.
        let filter = match classifier {
            Some(_) => None,
            None => self.sel.var_filter(self.a),
        };
        let keep = &self.sel.keep;
        let mut seen: PlHashMap<(u64, u32), u64> = PlHashMap::new();
        let mut b = AccessBatch {
            colour: classifier.as_ref().map(|_| Vec::new()),
            ..AccessBatch::default()
        };
        let mut cols = Columns::default();
        self.a.accesses.for_each(filter, &mut |df| {
            cols.read(&df)?;
            b.clear();
            for k in 0..cols.time.len() {
                let r = cols.access(k);
                if let Some(c) = &mut classifier {
                    let class = c.class(&r);
                    if !keep.get(r.var.0 as usize).copied().unwrap_or(false) {
                        continue;
                    }
                    if let Some(col) = &mut b.colour {
                        col.push(class);
                    }
                }
                let n = seen.entry((r.addr, r.var.0)).or_insert(0);
                *n += 1;
                b.occ.push(*n);
                b.time.push(r.time);
                b.op.push(r.op);
                b.addr.push(r.addr);
                b.size.push(cols.size[k]);
                b.tid.push(cols.tid[k]);
                b.var.push(r.var.0);
                b.line.push(r.line.0);
            }
            if b.is_empty() {
                return Ok(true);
            }
            f(&b)
        })
    }
}

/// The columns of one frame of the access list, copied out once.
#[derive(Default)]
struct Columns {
    time: Vec<u64>,
    op: Vec<u8>,
    addr: Vec<u64>,
    size: Vec<u16>,
    tid: Vec<u16>,
    var: Vec<u32>,
    line: Vec<u32>,
}

impl Columns {
    fn read(&mut self, df: &DataFrame) -> PolarsResult<()> {
        extend(&mut self.time, df.column(ac::TIME)?.u64()?);
        extend(&mut self.op, df.column(ac::OP)?.u8()?);
        extend(&mut self.addr, df.column(ac::ADDR)?.u64()?);
        extend(&mut self.size, df.column(ac::SIZE)?.u16()?);
        extend(&mut self.tid, df.column(ac::TID)?.u16()?);
        extend(&mut self.var, df.column(ac::VAR)?.u32()?);
        extend(&mut self.line, df.column(ac::LINE)?.u32()?);
        Ok(())
    }

    /// Row `k` as a named access (as the locality stage's driver reads it).
    #[inline]
    fn access(&self, k: usize) -> NamedAccess {
        NamedAccess {
            time: self.time[k],
            op: self.op[k],
            addr: self.addr[k],
            size: (self.size[k] as u32).max(1),
            tid: self.tid[k] as u32,
            var: super::access::VarId(self.var[k]),
            line: super::access::LineId(self.line[k]),
        }
    }
}

/// `out` becomes the values of `c` (the access list has no nulls).
fn extend<T: PolarsNumericType>(out: &mut Vec<T::Native>, c: &ChunkedArray<T>) {
    out.clear();
    for arr in c.downcast_iter() {
        out.extend_from_slice(arr.values().as_slice());
    }
}
