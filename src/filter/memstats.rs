//! `memory_stats`' report: the per-variable and per-address tables, the
//! notes on rows that sum several blocks or instances, the fields of
//! grouped heap blocks and the access patterns per (variable, line) pair,
//! built by one call so the shell names one function, and saved by one
//! method. Laying it out for the terminal is the shell's
//! (`src/shell/render.rs`).
//!
//! It sits on top of the statistics and the locality stage (it reads the
//! pattern labels), beside `analyse.rs`.
use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::analysis::Analysis;
use super::csv::{write_csv, CsvOut};
use super::locality::report::{patterns, LocalityError, PatternRow};
use super::stats::{
    for_each_address_row, grouped_fields, per_address_head, per_variable_by, row_notes, shown_vars,
    AddressRow, Grouping, ADDRESS_COLUMNS, VARIABLE_COLUMNS,
};
use super::{error::FilterError, model::MemKind};

/// What `memory_stats` shows of the variables of one kind.
#[derive(Clone, Debug)]
pub struct MemoryStats {
    /// One row per variable (or group of blocks), columns
    /// [`MemoryStats::VARIABLE_COLUMNS`], busiest first.
    pub per_variable: DataFrame,
    /// The first [`MemoryStats::ADDRESSES_SHOWN`] rows of the
    /// per-address table (one row per address, columns
    /// [`MemoryStats::ADDRESS_COLUMNS`], `address` as UInt64): the rest
    /// is never held, and [`MemoryStats::save`] writes it all.
    pub first_addresses: DataFrame,
    /// Rows of the whole per-address table.
    pub addresses: u64,
    /// What the table was made of, for [`MemoryStats::save`].
    kind: MemKind,
    grouping: Grouping,
    /// What the rows that sum several blocks or instances stand for.
    pub notes: Vec<String>,
    /// The fields of rows grouping several heap blocks, summed over the
    /// blocks (`variable`, `element`, `accesses`, `load_bytes`,
    /// `store_bytes`, `addresses`); no rows when nothing is grouped.
    pub grouped_fields: DataFrame,
    /// The access patterns per (variable, line) pair, busiest first.
    pub patterns: Vec<PatternRow>,
    /// Threads (by number) the trace saw.
    pub threads: usize,
}

impl MemoryStats {
    /// The columns of [`MemoryStats::per_variable`], in order.
    pub const VARIABLE_COLUMNS: [&'static str; 14] = VARIABLE_COLUMNS;
    /// The columns of the per-address table, in order.
    pub const ADDRESS_COLUMNS: [&'static str; 7] = ADDRESS_COLUMNS;
    /// Rows of the per-address table kept in [`MemoryStats::first_addresses`].
    pub const ADDRESSES_SHOWN: usize = 20;

    /// Writes `memory_stats.csv` (per variable) and
    /// `memory_stats_addresses.csv` (per address, addresses in hex) into
    /// `dir`; returns both files. The per-address table is made again from
    /// `a` (the analysis these statistics are of) and written as it is
    /// made. Cost: one pass over the lookup table; memory: one batch.
    /// Ctrl-C stops it within a batch, leaving the files as they were.
    pub fn save(&self, a: &Analysis, dir: &Path) -> Result<[PathBuf; 2], FilterError> {
        let mut out = CsvOut::create(dir, "memory_stats_addresses.csv", &ADDRESS_COLUMNS)?;
        for_each_address_row(a, self.kind, self.grouping, &mut |r| {
            write_address_row(&mut out, r)
        })
        .map_err(table_error)?;
        let p2 = out.finish()?;
        let mut per_var = self.per_variable.clone();
        let p1 = write_csv(&mut per_var, &dir.join("memory_stats.csv"))?;
        Ok([p1, p2])
    }
}

/// A polars error from a pass over the lookup table as the stage's error:
/// an interruption passed through polars stays an interruption.
fn table_error(e: PolarsError) -> FilterError {
    if crate::cancel::requested() {
        FilterError::Interrupted
    } else {
        FilterError::Table(e)
    }
}

/// Writes one row of the per-address table, its address in hex; whether
/// to go on (false once a write failed: [`CsvOut::finish`] says why).
fn write_address_row(out: &mut CsvOut, r: &AddressRow<'_>) -> bool {
    out.num(r.index);
    out.num(r.accesses);
    out.hex(r.address);
    out.num(r.stored);
    out.num(r.loaded);
    out.text(r.variable);
    out.text(r.element);
    out.row_done()
}

/// The statistics of the variables of `kind` in `a`, heap blocks grouped
/// as `grouping` says. Cost: the per-variable table (the lookup table's
/// totals, and a pass over it only for groups of blocks that reused each
/// other's addresses), the fields of grouped blocks (a pass over their
/// locations), the first rows of the per-address table (its first batch)
/// and one pass over the pattern states. Memory: a row per variable, per
/// grouped field and per pattern, and one batch of the lookup table; never
/// a row per address.
///
/// # Errors
/// A table operation failed, or the pattern states could not be read.
pub fn memory_stats(
    a: &Analysis,
    kind: MemKind,
    grouping: Grouping,
) -> Result<MemoryStats, LocalityError> {
    let per_variable = per_variable_by(a, kind, grouping).map_err(table_error)?;
    let first_addresses =
        per_address_head(a, kind, grouping, MemoryStats::ADDRESSES_SHOWN).map_err(table_error)?;
    let shown = shown_vars(a, kind);
    let addresses = (0..a.vars.len())
        .filter(|&v| shown[v])
        .map(|v| a.locations.totals(v).locations)
        .sum();
    let notes = row_notes(a, &per_variable, grouping);
    Ok(MemoryStats {
        notes,
        grouped_fields: grouped_fields(a, kind, grouping).map_err(table_error)?,
        patterns: patterns(a, kind, grouping)?,
        per_variable,
        first_addresses,
        addresses,
        kind,
        grouping,
        threads: a.summary.threads.len(),
    })
}
