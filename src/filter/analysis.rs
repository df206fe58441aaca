//! The analysis of one trace: the named accesses (the access list), the
//! lookup table of unique locations, the variable and line tables, the
//! heap allocations and the pattern states gathered on the way.
//!
//! The driver module builds it; the dataset, the derived tables and the
//! locality analyses read it. It holds no logic beyond simple accessors.
use polars::prelude::*;

use super::model::{Allocation, TraceSummary, Variable};
use super::store::AccessList;
use super::walks::PatternStates;

/// The complete analysis of one trace. Cloning it is cheap for the tables
/// (polars shares their buffers) and copies only the small vectors.
#[derive(Clone)]
pub struct Analysis {
    /// The access list, in time order: in memory, or a Parquet dataset
    /// read back in batches.
    pub accesses: AccessList,
    /// The lookup table: one row per unique location (address and
    /// variable), with its counts (columns: the schema module).
    pub locations: DataFrame,
    /// One row per variable.
    pub variables: DataFrame,
    /// One row per source line.
    pub lines: DataFrame,
    /// The variables, in row order.
    pub vars: Vec<Variable>,
    /// Every heap allocation of the run.
    pub allocations: Vec<Allocation>,
    /// What the trace said about itself.
    pub summary: TraceSummary,
    /// The access-pattern states per (variable, line), gathered while the
    /// analysis streamed; `None` when the input learns where its variables
    /// lie only at the end (Gleipnir text traces), and `memory_stats` makes
    /// its own pass over the access list.
    pub patterns: Option<PatternStates>,
}

impl Analysis {
    /// Accesses per variable row, from the lookup table. Cost: one pass
    /// over the unique locations.
    pub fn accesses_per_var(&self) -> PolarsResult<Vec<u64>> {
        use super::schema::location as lc;
        let mut n = vec![0u64; self.vars.len()];
        let var = self.locations.column(lc::VAR)?.u32()?;
        let acc = self.locations.column(lc::ACCESSES)?.u64()?;
        for (v, k) in var.into_no_null_iter().zip(acc.into_no_null_iter()) {
            if let Some(slot) = n.get_mut(v as usize) {
                *slot += k;
            }
        }
        Ok(n)
    }
}
