//! The columns of one frame of the access list, copied out of polars once,
//! and turned back into a frame or into named accesses.
//!
//! The figures' batches and the locality stage's driver read frames so;
//! the by-variable dataset sorts and merges accesses in them.
use polars::prelude::*;

use super::access::{LineId, NamedAccess, VarId};
use super::model::owned;
use super::schema::access as ac;

/// The columns of one frame of the access list, copied out once (the
/// figures' batches and the locality stage's driver read frames so; the
/// by-variable dataset sorts and merges accesses in them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Columns {
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
}

impl Columns {
    /// The columns become those of `df` (a frame of the access list).
    pub(crate) fn read(&mut self, df: &DataFrame) -> PolarsResult<()> {
        extend(&mut self.time, df.column(ac::TIME)?.u64()?);
        extend(&mut self.op, df.column(ac::OP)?.u8()?);
        extend(&mut self.addr, df.column(ac::ADDR)?.u64()?);
        extend(&mut self.size, df.column(ac::SIZE)?.u16()?);
        extend(&mut self.tid, df.column(ac::TID)?.u16()?);
        extend(&mut self.var, df.column(ac::VAR)?.u32()?);
        extend(&mut self.line, df.column(ac::LINE)?.u32()?);
        Ok(())
    }

    /// Accesses held.
    pub(crate) fn len(&self) -> usize {
        self.time.len()
    }

    /// Room for `n` more accesses in every column.
    /// Empties the columns, keeping their room.
    pub(crate) fn clear(&mut self) {
        self.time.clear();
        self.op.clear();
        self.addr.clear();
        self.size.clear();
        self.tid.clear();
        self.var.clear();
        self.line.clear();
    }

    pub(crate) fn reserve(&mut self, n: usize) {
        self.time.reserve(n);
        self.op.reserve(n);
        self.addr.reserve(n);
        self.size.reserve(n);
        self.tid.reserve(n);
        self.var.reserve(n);
        self.line.reserve(n);
    }

    /// Appends rows `r` of `o`.
    pub(crate) fn append(&mut self, o: &Columns, r: std::ops::Range<usize>) {
        self.time.extend_from_slice(&o.time[r.clone()]);
        self.op.extend_from_slice(&o.op[r.clone()]);
        self.addr.extend_from_slice(&o.addr[r.clone()]);
        self.size.extend_from_slice(&o.size[r.clone()]);
        self.tid.extend_from_slice(&o.tid[r.clone()]);
        self.var.extend_from_slice(&o.var[r.clone()]);
        self.line.extend_from_slice(&o.line[r]);
    }

    /// Appends access `k` of `o`.
    #[inline]
    pub(crate) fn push_from(&mut self, o: &Columns, k: usize) {
        self.time.push(o.time[k]);
        self.op.push(o.op[k]);
        self.addr.push(o.addr[k]);
        self.size.push(o.size[k]);
        self.tid.push(o.tid[k]);
        self.var.push(o.var[k]);
        self.line.push(o.line[k]);
    }

    /// The rows as a frame of the access list's columns, leaving the
    /// columns empty.
    pub(crate) fn take(&mut self) -> PolarsResult<DataFrame> {
        let c = std::mem::take(self);
        DataFrame::new(vec![
            owned::<UInt64Type>(ac::TIME, c.time),
            owned::<UInt8Type>(ac::OP, c.op),
            owned::<UInt64Type>(ac::ADDR, c.addr),
            owned::<UInt16Type>(ac::SIZE, c.size),
            owned::<UInt16Type>(ac::TID, c.tid),
            owned::<UInt32Type>(ac::VAR, c.var),
            owned::<UInt32Type>(ac::LINE, c.line),
        ])
    }

    /// The columns as slices.
    pub(crate) fn slices(&self) -> Slices<'_> {
        Slices {
            time: &self.time,
            op: &self.op,
            addr: &self.addr,
            size: &self.size,
            tid: &self.tid,
            var: &self.var,
            line: &self.line,
        }
    }

    /// Row `k` as a named access (as the locality stage's driver reads it).
    #[inline]
    pub(crate) fn access(&self, k: usize) -> NamedAccess {
        NamedAccess {
            time: self.time[k],
            op: self.op[k],
            addr: self.addr[k],
            size: (self.size[k] as u32).max(1),
            tid: self.tid[k] as u32,
            var: VarId(self.var[k]),
            line: LineId(self.line[k]),
        }
    }
}

/// `out` becomes the values of `c` (the access list has no nulls).
pub(crate) fn extend<T: PolarsNumericType>(out: &mut Vec<T::Native>, c: &ChunkedArray<T>) {
    out.clear();
    for arr in c.downcast_iter() {
        out.extend_from_slice(arr.values().as_slice());
    }
}

/// One column of `df` as a slice, when it is one chunk (the access list's
/// row groups as the writer hands them over, and as they are read back,
/// are).
pub(crate) fn slice_of<'a, T: PolarsNumericType>(
    df: &'a DataFrame,
    name: &str,
    ca: impl Fn(&'a Column) -> PolarsResult<&'a ChunkedArray<T>>,
) -> PolarsResult<&'a [T::Native]> {
    ca(df.column(name)?)?
        .cont_slice()
        .map_err(|_| polars_err!(ComputeError: "column `{name}` is not one null-free chunk"))
}

/// The columns of one frame of the access list, borrowed: from a frame
/// whose columns are each one chunk, with no copy.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slices<'a> {
    time: &'a [u64],
    op: &'a [u8],
    addr: &'a [u64],
    size: &'a [u16],
    tid: &'a [u16],
    var: &'a [u32],
    line: &'a [u32],
}

impl<'a> Slices<'a> {
    /// The columns of `df` (a frame of the access list, with its times),
    /// when each is there and one chunk; None otherwise (read them into
    /// [`Columns`] then, which says what is wrong).
    pub(crate) fn of(df: &'a DataFrame) -> Option<Slices<'a>> {
        Some(Slices {
            time: slice_of(df, ac::TIME, |c| c.u64()).ok()?,
            op: slice_of(df, ac::OP, |c| c.u8()).ok()?,
            addr: slice_of(df, ac::ADDR, |c| c.u64()).ok()?,
            size: slice_of(df, ac::SIZE, |c| c.u16()).ok()?,
            tid: slice_of(df, ac::TID, |c| c.u16()).ok()?,
            var: slice_of(df, ac::VAR, |c| c.u32()).ok()?,
            line: slice_of(df, ac::LINE, |c| c.u32()).ok()?,
        })
    }

    /// Rows `r` as named accesses, appended to `out`, over the columns
    /// together (no bounds check per row).
    pub(crate) fn accesses_into(&self, r: std::ops::Range<usize>, out: &mut Vec<NamedAccess>) {
        let rows = self.time[r.clone()]
            .iter()
            .zip(&self.op[r.clone()])
            .zip(&self.addr[r.clone()])
            .zip(&self.size[r.clone()])
            .zip(&self.tid[r.clone()])
            .zip(&self.var[r.clone()])
            .zip(&self.line[r]);
        out.extend(
            rows.map(
                |((((((&time, &op), &addr), &size), &tid), &var), &line)| NamedAccess {
                    time,
                    op,
                    addr,
                    size: (size as u32).max(1),
                    tid: tid as u32,
                    var: VarId(var),
                    line: LineId(line),
                },
            ),
        );
    }
}
