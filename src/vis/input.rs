//! Reading the analysis tables (see [`crate::filter::schema`]) into plain slices.
//!
//! Columns are cast to their schema dtype (a no-op when they already have it)
//! and rechunked once, so the figure code works on contiguous `&[T]` without
//! copying 25 M rows into new vectors.

use polars::prelude::*;

use crate::filter::schema::{access, line, variable, OP_LOAD, OP_MODIFY, OP_STORE};

use super::error::VisError;

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

/// The access table as slices, in the order the analysis gave them.
pub(crate) struct Accesses {
    time: NumCol<UInt32Type>,
    op: NumCol<UInt8Type>,
    addr: NumCol<UInt64Type>,
    size: NumCol<UInt16Type>,
    tid: NumCol<UInt16Type>,
    var: NumCol<UInt32Type>,
    occ: NumCol<UInt32Type>,
    line: NumCol<UInt32Type>,
    /// Colour classes, when the locality stage added them.
    colour: Option<NumCol<UInt8Type>>,
}

impl Accesses {
    /// Reads and checks the access table; costs one cast/rechunk per column
    /// only when the table is not already in schema form.
    pub(crate) fn read(df: &DataFrame) -> Result<Self, VisError> {
        const T: &str = "access";
        Ok(Accesses {
            time: read_num(df, T, access::TIME)?,
            op: read_num(df, T, access::OP)?,
            addr: read_num(df, T, access::ADDR)?,
            size: read_num(df, T, access::SIZE)?,
            tid: read_num(df, T, access::TID)?,
            var: read_num(df, T, access::VAR)?,
            occ: read_num(df, T, access::OCCURRENCE)?,
            line: read_num(df, T, access::LINE)?,
            colour: match df.column(access::COLOUR) {
                Ok(_) => Some(read_num(df, T, access::COLOUR)?),
                Err(_) => None,
            },
        })
    }
    pub(crate) fn len(&self) -> usize {
        self.time.slice().len()
    }
    pub(crate) fn time(&self) -> &[u32] {
        self.time.slice()
    }
    pub(crate) fn op(&self) -> &[u8] {
        self.op.slice()
    }
    pub(crate) fn addr(&self) -> &[u64] {
        self.addr.slice()
    }
    pub(crate) fn size(&self) -> &[u16] {
        self.size.slice()
    }
    pub(crate) fn tid(&self) -> &[u16] {
        self.tid.slice()
    }
    pub(crate) fn var(&self) -> &[u32] {
        self.var.slice()
    }
    pub(crate) fn occ(&self) -> &[u32] {
        self.occ.slice()
    }
    pub(crate) fn line(&self) -> &[u32] {
        self.line.slice()
    }
    /// The colour classes, when the table has them.
    pub(crate) fn colour(&self) -> Option<&[u8]> {
        self.colour.as_ref().map(|c| c.slice())
    }
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
            });
        }
        Ok(Variables { by_id })
    }
    pub(crate) fn rows(&self) -> usize {
        self.by_id.iter().filter(|v| v.is_some()).count()
    }
    pub(crate) fn get(&self, id: u32) -> Option<&VarInfo> {
        self.by_id.get(id as usize).and_then(|v| v.as_ref())
    }
    /// The element an address falls in, as C writes it: `X[3][4]` for an
    /// array of known shape, `X[12]` for a known element size, `X+12` (byte
    /// offset) otherwise, and the plain name at offset 0 or outside.
    pub(crate) fn element(&self, id: u32, addr: u64) -> String {
        match self.get(id) {
            Some(v) => crate::trace::naming::element_path(
                &v.name,
                v.base,
                v.size,
                v.elem_size,
                &v.dims,
                addr,
            ),
            None => format!("<var {id}>"),
        }
    }

    /// Display name; a placeholder for ids the table does not know.
    pub(crate) fn name(&self, id: u32) -> String {
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
