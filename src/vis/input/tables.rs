//! Reading the analysis tables (see [`crate::filter::schema`]) into plain slices.
//!
//! Columns are cast to their schema dtype (a no-op when they already have it)
//! and rechunked once. The accesses reach the figures as [`AccessBatches`]:
//! a selection of the analysis streamed from its access list, or a table a
//! caller holds ([`FrameBatches`]); the figures visit them access by access
//! ([`for_items`]) once per pass.

use polars::prelude::*;

use crate::filter::schema::{access, line, variable, OP_LOAD, OP_MODIFY, OP_STORE};
use crate::filter::{AccessBatch, AccessBatches, AccessColumns, BatchFn};
use crate::filter::{FilterError, LineId, VarId};

use crate::vis::error::VisError;

/// One numeric column, cast and rechunked so that it is a single null-free slice.
pub(crate) struct NumCol<T: PolarsNumericType> {
    ca: ChunkedArray<T>,
}

impl<T: PolarsNumericType> NumCol<T> {
    /// The values as one contiguous slice.
    pub(crate) fn slice(&self) -> &[T::Native] {
        // Cannot fail: `read_num` rechunked and rejected nulls.
        self.ca.cont_slice().unwrap_or(&[])
    }

    /// The values as a vector of their own.
    pub(crate) fn to_vec(&self) -> Vec<T::Native> {
        self.slice().to_vec()
    }
}

fn read_num<T: PolarsNumericType>(
    df: &DataFrame,
    table: &'static str,
    name: &str,
) -> Result<NumCol<T>, VisError> {
    let col = df.column(name).map_err(|_| VisError::Schema {
        table,
        detail: format!(
            "column `{name}` ({:?}) is missing; it has {:?}",
            T::get_static_dtype(),
            df.get_column_names()
        ),
    })?;
    let series = col
        .as_materialized_series()
        .cast(&T::get_static_dtype())
        .map_err(|e| VisError::Schema {
            table,
            detail: format!(
                "column `{name}` has dtype {} and cannot be cast to {:?} ({e})",
                col.dtype(),
                T::get_static_dtype()
            ),
        })?;
    if series.null_count() > 0 {
        return Err(VisError::Schema {
            table,
            detail: format!(
                "column `{name}` has {} null values where every row needs one",
                series.null_count()
            ),
        });
    }
    let ca: &ChunkedArray<T> = series.unpack().map_err(|e| VisError::Schema {
        table,
        detail: format!(
            "column `{name}` could not be read as {:?} ({e})",
            T::get_static_dtype()
        ),
    })?;
    let ca = ca.rechunk().into_owned();
    Ok(NumCol { ca })
}

fn read_str(df: &DataFrame, table: &'static str, name: &str) -> Result<Vec<String>, VisError> {
    let col = df.column(name).map_err(|_| VisError::Schema {
        table,
        detail: format!(
            "column `{name}` (String) is missing; it has {:?}",
            df.get_column_names()
        ),
    })?;
    let ca = col.str().map_err(|_| VisError::Schema {
        table,
        detail: format!(
            "column `{name}` has dtype {} instead of String",
            col.dtype()
        ),
    })?;
    Ok(ca.iter().map(|s| s.unwrap_or("").to_string()).collect())
}

/// One access as the figures meet it in a pass over the selection.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Item {
    /// Row of the access in the selection (0 for its first access).
    pub(crate) row: u64,
    pub(crate) time: u64,
    pub(crate) op: u8,
    pub(crate) addr: u64,
    pub(crate) size: u16,
    pub(crate) tid: u16,
    pub(crate) var: VarId,
    pub(crate) line: LineId,
    pub(crate) occ: u64,
    /// Colour class as the batches give it (0 without classes).
    pub(crate) class: u8,
    /// Whether the batches carry colour classes.
    pub(crate) coloured: bool,
}

/// The access table of a caller that holds it in memory (the figure
/// functions taking a [`DataFrame`]) as [`AccessBatches`]: one batch, its
/// rows in the order given.
pub(crate) struct FrameBatches {
    batch: AccessBatch,
    /// Whether the times strictly increase.
    increasing: bool,
}

impl FrameBatches {
    /// Reads and checks the access table; costs one cast and one copy of
    /// each column.
    pub(crate) fn read(df: &DataFrame) -> Result<Self, VisError> {
        const T: &str = "access";
        let time = read_num::<UInt64Type>(df, T, access::TIME)?.to_vec();
        Ok(FrameBatches {
            increasing: time.windows(2).all(|w| w[0] < w[1]),
            batch: AccessBatch {
                stored: AccessColumns {
                    time,
                    op: read_num::<UInt8Type>(df, T, access::OP)?.to_vec(),
                    addr: read_num::<UInt64Type>(df, T, access::ADDR)?.to_vec(),
                    size: read_num::<UInt16Type>(df, T, access::SIZE)?.to_vec(),
                    tid: read_num::<UInt16Type>(df, T, access::TID)?.to_vec(),
                    var: read_num::<UInt32Type>(df, T, access::VAR)?.to_vec(),
                    line: read_num::<UInt32Type>(df, T, access::LINE)?.to_vec(),
                },
                occ: read_num::<UInt64Type>(df, T, access::OCCURRENCE)?.to_vec(),
                colour: match df.column(access::COLOUR) {
                    Ok(_) => Some(read_num::<UInt8Type>(df, T, access::COLOUR)?.to_vec()),
                    Err(_) => None,
                },
            },
        })
    }
}

impl AccessBatches for FrameBatches {
    fn len(&self) -> u64 {
        self.batch.len() as u64
    }
    fn unique_times(&self) -> bool {
        self.increasing
    }
    fn visit(&self, f: &mut BatchFn) -> Result<(), FilterError> {
        if !self.batch.is_empty() {
            f(&self.batch)?;
        }
        Ok(())
    }
}

/// One pass over `src`: calls `f` with each access in time order until it
/// returns false. Checks for Ctrl-C every 4096 accesses (a batch can hold
/// a million), besides [`for_batches`]' check between batches.
///
/// # Errors
/// The accesses cannot be read, or the pass was interrupted.
pub(crate) fn for_items(
    src: &dyn AccessBatches,
    f: &mut dyn FnMut(&Item) -> bool,
) -> Result<(), VisError> {
    let mut stopped_by_interrupt = false;
    for_batches(src, &mut |b, row0| {
        for it in batch_items(b, row0) {
            if it.row.is_multiple_of(4096) && crate::vis::options::interrupted() {
                stopped_by_interrupt = true;
                return false;
            }
            if !f(&it) {
                return false;
            }
        }
        true
    })?;
    if stopped_by_interrupt {
        return Err(VisError::Interrupted);
    }
    Ok(())
}

/// One pass over `src` a batch at a time: calls `f` with each batch and
/// the selection row of its first access, in time order, until it returns
/// false. For passes that share a batch between threads
/// ([`batch_items`] makes its items). Checks for Ctrl-C between batches.
///
/// # Errors
/// The accesses cannot be read, or the pass was interrupted.
pub(crate) fn for_batches(
    src: &dyn AccessBatches,
    f: &mut dyn FnMut(&AccessBatch, u64) -> bool,
) -> Result<(), VisError> {
    let mut row = 0u64;
    let mut stopped_by_interrupt = false;
    src.visit(&mut |b| {
        if crate::vis::options::interrupted() {
            stopped_by_interrupt = true;
            return Ok(false);
        }
        let go_on = f(b, row);
        row += b.len() as u64;
        Ok(go_on)
    })?;
    if stopped_by_interrupt {
        return Err(VisError::Interrupted);
    }
    Ok(())
}

/// The accesses of batch `b` as items, the first at selection row `row0`.
pub(crate) fn batch_items(b: &AccessBatch, row0: u64) -> impl Iterator<Item = Item> + '_ {
    (0..b.len()).map(move |k| Item {
        row: row0 + k as u64,
        time: b.time[k],
        op: b.op[k],
        addr: b.addr[k],
        size: b.size[k],
        tid: b.tid[k],
        var: VarId(b.var[k]),
        line: LineId(b.line[k]),
        occ: b.occ[k],
        class: b.colour.as_ref().map_or(0, |c| c[k]),
        coloured: b.colour.is_some(),
    })
}

/// Every access of `src`, for a figure that draws each one: memory is
/// about 56 bytes per access, so callers gather only selections within the
/// point budget.
pub(crate) fn gather(src: &dyn AccessBatches) -> Result<Vec<Item>, VisError> {
    let mut out = Vec::with_capacity(src.len().min(1 << 24) as usize);
    for_items(src, &mut |it| {
        out.push(*it);
        true
    })?;
    Ok(out)
}

/// One row of the variable table.
#[derive(Clone, Debug)]
pub(crate) struct VarInfo {
    pub(crate) name: String,
    pub(crate) base: u64,
    pub(crate) size: u64,
    /// Element size when known from types, else 0.
    pub(crate) elem_size: u32,
    /// Array dimensions, outermost first, when known.
    pub(crate) dims: Vec<u64>,
    /// Memory kind: `H` heap, `S` stack, `G` global.
    pub(crate) scope: String,
    /// For a heap block drawn under the name of the object that owns it,
    /// its full path (`x.coefs`); empty otherwise.
    pub(crate) path: String,
}

/// The variable table indexed by `var` id.
pub(crate) struct Variables {
    by_id: Vec<Option<VarInfo>>,
}

impl Variables {
    pub(crate) fn read(df: &DataFrame) -> Result<Self, VisError> {
        const T: &str = "variable";
        let ids = read_num::<UInt32Type>(df, T, variable::VAR)?;
        let names = read_str(df, T, variable::NAME)?;
        let base = read_num::<UInt64Type>(df, T, variable::BASE)?;
        let size = read_num::<UInt64Type>(df, T, variable::SIZE)?;
        let elem = read_num::<UInt32Type>(df, T, variable::ELEM_SIZE)?;
        let dims = read_str(df, T, variable::DIMS)?;
        let scope = read_str(df, T, variable::SCOPE)?;
        // Optional: tables written before the column existed have no paths.
        let paths = match df.column(variable::PATH) {
            Ok(_) => read_str(df, T, variable::PATH)?,
            Err(_) => vec![String::new(); names.len()],
        };
        let max = ids
            .slice()
            .iter()
            .copied()
            .max()
            .map_or(0, |m| m as usize + 1);
        let mut by_id = vec![None; max];
        for (k, &id) in ids.slice().iter().enumerate() {
            by_id[id as usize] = Some(VarInfo {
                name: names[k].clone(),
                base: base.slice()[k],
                size: size.slice()[k],
                elem_size: elem.slice()[k],
                dims: dims[k].split('x').filter_map(|d| d.parse().ok()).collect(),
                scope: scope[k].clone(),
                path: paths[k].clone(),
            });
        }
        Ok(Variables { by_id })
    }
    pub(crate) fn rows(&self) -> usize {
        self.by_id.iter().filter(|v| v.is_some()).count()
    }
    pub(crate) fn get(&self, id: VarId) -> Option<&VarInfo> {
        self.by_id.get(id.index()).and_then(|v| v.as_ref())
    }
    /// The element an address falls in, as C writes it: `X[3][4]` for an
    /// array of known shape, `X[12]` for a known element size, `X+12` (byte
    /// offset) otherwise, and the plain name at offset 0 or outside. A
    /// block drawn under its owner's name is spelled by its full path
    /// (`x.coefs[12]` in the row `x`).
    pub(crate) fn element(&self, id: VarId, addr: u64) -> String {
        match self.get(id) {
            Some(v) => crate::trace::naming::element_path(
                if v.path.is_empty() { &v.name } else { &v.path },
                v.base,
                v.size,
                v.elem_size,
                &v.dims,
                addr,
            ),
            None => format!("<var {id}>"),
        }
    }

    /// The name a hover shows: the display name, followed by the full path
    /// of a block drawn under its owner's name (`x (x.coefs)`).
    pub(crate) fn hover_name(&self, id: VarId) -> String {
        match self.get(id) {
            Some(v) if !v.path.is_empty() && v.path != v.name => {
                format!("{} ({})", v.name, v.path)
            }
            _ => self.name(id),
        }
    }

    /// Display name; a placeholder for ids the table does not know.
    pub(crate) fn name(&self, id: VarId) -> String {
        match self.get(id) {
            Some(v) => v.name.clone(),
            None => format!("<var {id}>"),
        }
    }
}

/// The line table indexed by `line` id.
pub(crate) struct Lines {
    by_id: Vec<String>,
}

impl Lines {
    pub(crate) fn read(df: &DataFrame) -> Result<Self, VisError> {
        const T: &str = "line";
        let ids = read_num::<UInt32Type>(df, T, line::LINE)?;
        let src = read_str(df, T, line::SOURCE)?;
        let max = ids
            .slice()
            .iter()
            .copied()
            .max()
            .map_or(0, |m| m as usize + 1);
        let mut by_id = vec!["?".to_string(); max];
        for (k, &id) in ids.slice().iter().enumerate() {
            by_id[id as usize] = src[k].clone();
        }
        Ok(Lines { by_id })
    }
    /// All sources, indexed by line id (unknown ids read `?`).
    pub(crate) fn sources(&self) -> &[String] {
        &self.by_id
    }
}

/// Human name of an operation code.
pub(crate) fn op_name(op: u8) -> &'static str {
    match op {
        OP_LOAD => "load",
        OP_STORE => "store",
        OP_MODIFY => "modify",
        _ => "other",
    }
}

/// Dense index 0 load, 1 store, 2 modify, 3 anything else.
pub(crate) fn op_index(op: u8) -> usize {
    match op {
        OP_LOAD => 0,
        OP_STORE => 1,
        OP_MODIFY => 2,
        _ => 3,
    }
}

/// Names of the dense operation indices.
pub(crate) const OP_NAMES: [&str; 4] = ["load", "store", "modify", "other"];
