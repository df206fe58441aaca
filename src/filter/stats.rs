//! Statistics of an analysis: per variable and per address.
//!
//! Both come from the lookup table of unique locations that the analysis
//! built while it streamed the trace, so they cost a pass over the
//! locations, never over the accesses (unlike the original's quadratic
//! lookup-table scan).
use polars::prelude::*;

use super::analysis::Analysis;
use super::schema::location as lc;
use super::{shows, MemKind};
use crate::trace::naming::element_path;

/// The display names of the `var` column of a table.
fn names_of(a: &Analysis, df: &DataFrame) -> PolarsResult<Vec<String>> {
    Ok(df
        .column(lc::VAR)?
        .u32()?
        .into_iter()
        .map(|v| {
            v.and_then(|v| a.vars.get(v as usize))
                .map(|v| v.name.clone())
                .unwrap_or_default()
        })
        .collect())
}

/// Columns of [`per_variable`], in order.
pub const VARIABLE_COLUMNS: [&str; 12] = [
    "variable",
    "scope",
    "accesses",
    "loads",
    "stores",
    "modifies",
    "load_bytes",
    "store_bytes",
    "addresses",
    "first_access",
    "last_access",
    "threads",
];

/// Columns of [`per_address`], in order (the original's lookup table, plus
/// the element).
pub const ADDRESS_COLUMNS: [&str; 7] = [
    "index",
    "appearance_count",
    "address",
    "bytes_stored",
    "bytes_loaded",
    "variable",
    "element",
];

/// The lookup-table rows of the variables shown for `kind`.
fn shown_locations(a: &Analysis, kind: MemKind) -> PolarsResult<DataFrame> {
    let keep: Vec<bool> = a.vars.iter().map(|v| shows(kind, v)).collect();
    let mask: BooleanChunked = a
        .locations
        .column(lc::VAR)?
        .u32()?
        .into_iter()
        .map(|v| v.map(|v| keep.get(v as usize).copied().unwrap_or(false)))
        .collect();
    a.locations.filter(&mask)
}

/// Per-variable statistics, one row per variable shown for `kind` with at
/// least one access.
///
/// Columns: `variable, scope, accesses, loads, stores, modifies, load_bytes,
/// store_bytes, addresses, first_access, last_access, threads`, sorted by
/// first access. A modify counts in both `load_bytes` and `store_bytes`.
pub fn per_variable(a: &Analysis, kind: MemKind) -> PolarsResult<DataFrame> {
    let sum = |c: &str| col(c).sum().alias(c);
    let agg = shown_locations(a, kind)?
        .lazy()
        .group_by([col(lc::VAR)])
        .agg([
            sum(lc::ACCESSES),
            sum(lc::LOADS),
            sum(lc::STORES),
            sum(lc::MODIFIES),
            sum(lc::LOAD_BYTES),
            sum(lc::STORE_BYTES),
            len().cast(DataType::UInt64).alias("addresses"),
        ])
        .collect()?;
    let vars: Vec<u32> = agg.column(lc::VAR)?.u32()?.into_no_null_iter().collect();
    let info = |f: &dyn Fn(&super::analysis::Variable) -> u64| -> Vec<u64> {
        vars.iter().map(|&v| f(&a.vars[v as usize])).collect()
    };
    let first = info(&|v| v.accessed.map_or(0, |t| t.0));
    let last = info(&|v| v.accessed.map_or(0, |t| t.1));
    let threads = info(&|v| v.threads.len() as u64);
    let scopes: Vec<&str> = vars
        .iter()
        .map(|&v| a.vars[v as usize].scope.code())
        .collect();
    let names = names_of(a, &agg)?;
    let mut out = agg.drop(lc::VAR)?;
    out.insert_column(0, Column::new("variable".into(), names))?;
    out.insert_column(1, Column::new("scope".into(), scopes))?;
    out.with_column(Column::new("first_access".into(), first))?;
    out.with_column(Column::new("last_access".into(), last))?;
    out.with_column(Column::new("threads".into(), threads))?;
    out.select(VARIABLE_COLUMNS)?
        .sort(["first_access"], Default::default())
}

/// The original's per-address table: `index, appearance_count, address,
/// bytes_stored, bytes_loaded, variable`, plus `element` (`u[3][4]`,
/// `h.nbins`), one row per location (address and
/// variable) shown for `kind`, sorted by address.
pub fn per_address(a: &Analysis, kind: MemKind) -> PolarsResult<DataFrame> {
    let loc = shown_locations(a, kind)?;
    let names = names_of(a, &loc)?;
    let n = loc.height() as u64;
    let mut out = DataFrame::new(vec![
        Column::new("index".into(), (0..n).collect::<Vec<u64>>()),
        loc.column(lc::ACCESSES)?
            .clone()
            .with_name("appearance_count".into()),
        loc.column(lc::ADDR)?.clone().with_name("address".into()),
        loc.column(lc::STORE_BYTES)?
            .clone()
            .with_name("bytes_stored".into()),
        loc.column(lc::LOAD_BYTES)?
            .clone()
            .with_name("bytes_loaded".into()),
    ])?;
    out.with_column(Column::new("variable".into(), names))?;
    // Member paths come from the analysis; array elements from the shape.
    let stored = loc.column(lc::ELEMENT)?.str()?;
    let addrs = loc.column(lc::ADDR)?.u64()?;
    let vars = loc.column(lc::VAR)?.u32()?;
    let elements: Vec<String> = (0..loc.height())
        .map(|i| match stored.get(i) {
            Some(e) if !e.is_empty() => e.to_string(),
            _ => match (
                vars.get(i).and_then(|v| a.vars.get(v as usize)),
                addrs.get(i),
            ) {
                (Some(v), Some(addr)) => {
                    element_path(&v.name, v.base, v.size, v.elem_size, &v.dims, addr)
                }
                _ => String::new(),
            },
        })
        .collect();
    out.with_column(Column::new("element".into(), elements))?;
    out.select(ADDRESS_COLUMNS)
}
