//! The counts a cache model fed while the analysis streamed found, as the
//! analysis keeps and saves them (`locality.json`): plain numbers, so that
//! the analysis and its files hold them without knowing the locality
//! stage, which makes them (its `recorded` module) and reads them back
//! into its reports.
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::FilterError;

/// The file of a saved analysis that holds the recorded counts.
pub(crate) const FILE: &str = "locality.json";

/// One (variable, line) pair's counts: accesses, the misses of three
/// levels, their nine classes (compulsory, capacity, conflict per level),
/// lines fetched, bytes used of them, bytes accessed.
pub type PairCounts = [u64; 16];

/// What the cache model and reuse distances fed during the analysis found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedLocality {
    /// The model's levels, innermost first: (level, size, ways, line).
    pub levels: Vec<(u8, u64, u32, u32)>,
    /// Accesses simulated.
    pub accesses: u64,
    /// Threads that had their own first level.
    pub threads: usize,
    /// (variable row, line row) of each pair, by pair id.
    pub pairs: Vec<(u32, u32)>,
    /// Counts by pair id.
    pub counts: Vec<PairCounts>,
    /// The reuse distances; None when the feed left them out (past
    /// `set_reuse_sampling auto`'s threshold, where they are sampled by
    /// `cache_stats` instead).
    pub reuse: Option<RecordedReuse>,
}

/// The reuse distances fed during the analysis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedReuse {
    /// Their line size.
    pub line: u32,
    /// The sampling rate; None: exact.
    pub sampling: Option<f64>,
    /// Per variable row: its histogram's bins (trailing empty bins left
    /// out) and its cold references.
    pub per_var: Vec<(Vec<u64>, u64)>,
    /// Most distant reuses: (line address, distance, address, variable).
    pub most_distant: Vec<(u64, u64, u64, u32)>,
    /// Distinct lines tracked.
    pub distinct_lines: usize,
}

impl RecordedLocality {
    /// Writes the counts into the analysis folder `dir` (being filled).
    pub(crate) fn write_into(&self, dir: &Path) -> Result<(), FilterError> {
        let path = dir.join(FILE);
        let text = serde_json::to_vec(self).map_err(|e| FilterError::Saved {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        std::fs::write(&path, text).map_err(|source| FilterError::Write { path, source })
    }

    /// The counts saved in the analysis folder `dir`; None when there are
    /// none, or they cannot be read (`cache_stats` then simulates).
    pub(crate) fn read(dir: &Path) -> Option<RecordedLocality> {
        let bytes = std::fs::read(dir.join(FILE)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}
