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

use polars::prelude::DataFrame;

use super::analysis::Analysis;
use super::csv::write_csv;
use super::files::hex_column;
use super::locality::report::{patterns, LocalityError, PatternRow};
use super::stats::{
    grouped_fields, per_address_by, per_variable_by, row_notes, Grouping, ADDRESS_COLUMNS,
    VARIABLE_COLUMNS,
};
use super::{error::FilterError, model::MemKind};

/// What `memory_stats` shows of the variables of one kind.
#[derive(Clone, Debug)]
pub struct MemoryStats {
    /// One row per variable (or group of blocks), columns
    /// [`MemoryStats::VARIABLE_COLUMNS`], busiest first.
    pub per_variable: DataFrame,
    /// One row per address, columns [`MemoryStats::ADDRESS_COLUMNS`]
    /// (`address` as UInt64).
    pub per_address: DataFrame,
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
    /// The columns of [`MemoryStats::per_address`], in order.
    pub const ADDRESS_COLUMNS: [&'static str; 7] = ADDRESS_COLUMNS;

    /// Writes `memory_stats.csv` (per variable) and
    /// `memory_stats_addresses.csv` (per address, addresses in hex) into
    /// `dir`; returns both files. The frames are copied (their columns
    /// are shared, so that costs one hex column).
    pub fn save(&self, dir: &Path) -> Result<[PathBuf; 2], FilterError> {
        let mut per_var = self.per_variable.clone();
        let p1 = write_csv(&mut per_var, &dir.join("memory_stats.csv"))?;
        let mut per_addr = self.per_address.clone();
        hex_column(&mut per_addr, "address")?;
        let p2 = write_csv(&mut per_addr, &dir.join("memory_stats_addresses.csv"))?;
        Ok([p1, p2])
    }
}

/// The statistics of the variables of `kind` in `a`, heap blocks grouped
/// as `grouping` says. Cost: the per-variable and per-address tables (one
/// pass over the unique locations), and one pass over the pattern states.
///
/// # Errors
/// A table operation failed, or the pattern states could not be read.
pub fn memory_stats(
    a: &Analysis,
    kind: MemKind,
    grouping: Grouping,
) -> Result<MemoryStats, LocalityError> {
    let per_variable = per_variable_by(a, kind, grouping)?;
    let per_address = per_address_by(a, kind, grouping)?;
    let notes = row_notes(a, &per_variable, grouping);
    Ok(MemoryStats {
        notes,
        grouped_fields: grouped_fields(a, kind, grouping)?,
        patterns: patterns(a, kind, grouping)?,
        per_variable,
        per_address,
        threads: a.summary.threads.len(),
    })
}
