//! The analysis of one trace: the named accesses (the access list), the
//! lookup table of unique locations, the variable and line tables, the
//! heap allocations and the pattern states gathered on the way.
//!
//! The driver module builds it; the dataset, the derived tables and the
//! locality analyses read it. It holds no logic beyond simple accessors.
use polars::prelude::*;

use super::locations::Locations;
use super::model::{Allocation, TraceSummary, Variable};
use super::recorded::RecordedLocality;
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
    /// variable), with its counts (columns: the schema module), kept in a
    /// file and read in batches, with each variable's totals.
    pub locations: Locations,
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
    /// The counts of the cache model and reuse distances fed while the
    /// analysis streamed, for the model set then; `None` when none was
    /// fed, or the feed outgrew its memory budget.
    pub locality: Option<RecordedLocality>,
}

impl Analysis {
    /// Accesses per variable row, from the lookup table's totals. Cost:
    /// one step per variable.
    pub fn accesses_per_var(&self) -> PolarsResult<Vec<u64>> {
        Ok((0..self.vars.len())
            .map(|v| self.locations.totals(v).accesses)
            .collect())
    }
}
