//! Statistics of an analysis: per variable and per address.
//!
//! Both are polars group-bys over the selected access table, so they cost one
//! hash aggregation over the accesses (linear), unlike the original's
//! quadratic lookup-table scan.
use polars::prelude::*;

use super::analysis::Analysis;
use super::schema::{access as ac, OP_LOAD, OP_MODIFY, OP_STORE};

/// Bytes read by an access: loads and modifies count, stores do not.
fn load_bytes() -> Expr {
    when(col(ac::OP).neq(lit(OP_STORE)))
        .then(col(ac::SIZE).cast(DataType::UInt64))
        .otherwise(lit(0u64))
        .sum()
}

/// Bytes written by an access: stores and modifies count, loads do not.
fn store_bytes() -> Expr {
    when(col(ac::OP).neq(lit(OP_LOAD)))
        .then(col(ac::SIZE).cast(DataType::UInt64))
        .otherwise(lit(0u64))
        .sum()
}

/// The display names of the `var` column of an aggregated table.
fn names_of(a: &Analysis, agg: &DataFrame) -> PolarsResult<Vec<String>> {
    Ok(agg
        .column(ac::VAR)?
        .u32()?
        .into_iter()
        .map(|v| {
            v.map(|v| a.vars[v as usize].name.clone())
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

/// Columns of [`per_address`], in order (the original's lookup table).
pub const ADDRESS_COLUMNS: [&str; 6] = [
    "index",
    "appearance_count",
    "address",
    "bytes_stored",
    "bytes_loaded",
    "variable",
];

/// Per-variable statistics, one row per variable with at least one access.
///
/// Columns: `variable, scope, accesses, loads, stores, modifies, load_bytes,
/// store_bytes, addresses, first_access, last_access, threads`, sorted by
/// first access. A modify counts in both `load_bytes` and `store_bytes`.
pub fn per_variable(a: &Analysis, selected: &DataFrame) -> PolarsResult<DataFrame> {
    let op = col(ac::OP);
    let agg = selected
        .clone()
        .lazy()
        .group_by([col(ac::VAR)])
        .agg([
            len().cast(DataType::UInt64).alias("accesses"),
            op.clone()
                .eq(lit(OP_LOAD))
                .sum()
                .cast(DataType::UInt64)
                .alias("loads"),
            op.clone()
                .eq(lit(OP_STORE))
                .sum()
                .cast(DataType::UInt64)
                .alias("stores"),
            op.clone()
                .eq(lit(OP_MODIFY))
                .sum()
                .cast(DataType::UInt64)
                .alias("modifies"),
            load_bytes().alias("load_bytes"),
            store_bytes().alias("store_bytes"),
            col(ac::ADDR)
                .n_unique()
                .cast(DataType::UInt64)
                .alias("addresses"),
            col(ac::TIME).min().alias("first_access"),
            col(ac::TIME).max().alias("last_access"),
            col(ac::TID)
                .n_unique()
                .cast(DataType::UInt64)
                .alias("threads"),
        ])
        .sort(["first_access"], Default::default())
        .collect()?;
    let names = names_of(a, &agg)?;
    let vars = agg.column(ac::VAR)?.u32()?;
    let scopes: Vec<String> = vars
        .into_iter()
        .map(|v| {
            v.map(|v| a.vars[v as usize].scope.code().to_string())
                .unwrap_or_default()
        })
        .collect();
    let mut out = agg.drop(ac::VAR)?;
    out.insert_column(0, Column::new("variable".into(), names))?;
    out.insert_column(1, Column::new("scope".into(), scopes))?;
    out.select(VARIABLE_COLUMNS)
}

/// The original's per-address table: `index, appearance_count, address,
/// bytes_stored, bytes_loaded, variable`, one row per (address, variable),
/// sorted by address.
pub fn per_address(a: &Analysis, selected: &DataFrame) -> PolarsResult<DataFrame> {
    let agg = selected
        .clone()
        .lazy()
        .group_by([col(ac::ADDR), col(ac::VAR)])
        .agg([
            len().cast(DataType::UInt64).alias("appearance_count"),
            store_bytes().alias("bytes_stored"),
            load_bytes().alias("bytes_loaded"),
        ])
        .sort([ac::ADDR], Default::default())
        .collect()?;
    let names = names_of(a, &agg)?;
    let n = agg.height() as u64;
    let mut out = agg.drop(ac::VAR)?;
    out.insert_column(0, Column::new("index".into(), (0..n).collect::<Vec<u64>>()))?;
    out.rename(ac::ADDR, "address".into())?;
    out.with_column(Column::new("variable".into(), names))?;
    out.select(ADDRESS_COLUMNS)
}
