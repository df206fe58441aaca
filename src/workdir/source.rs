//! Where results came from: the identity of a trace file as it was
//! analysed, and the id of an analysis.
use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// The identity of a trace file as it was analysed: its path, size and
/// modification time. Results carry it, and a result whose trace has since
/// changed (a new run, a failed or killed run, another session) is stale.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourceId {
    /// The trace file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: u128,
}

impl SourceId {
    /// The identity of the file at `path` now (`None` when it is missing).
    pub fn of(path: &Path) -> Option<SourceId> {
        let m = fs::metadata(path).ok()?;
        Some(SourceId {
            path: path.to_path_buf(),
            size: m.len(),
            mtime_ns: mtime_ns(&m)?,
        })
    }

    /// A short description for messages: path, size and time.
    pub fn describe(&self) -> String {
        let secs = (self.mtime_ns / 1_000_000_000) as u64;
        format!(
            "{} ({} bytes, written {} s after the epoch)",
            self.path.display(),
            self.size,
            secs
        )
    }
}

/// A file's modification time in nanoseconds since the Unix epoch, the
/// way [`SourceId`] and the manifest record it (`None` where the system
/// gives no time, or one before the epoch).
pub(super) fn mtime_ns(m: &fs::Metadata) -> Option<u128> {
    Some(
        m.modified()
            .ok()?
            .duration_since(UNIX_EPOCH)
            .ok()?
            .as_nanos(),
    )
}

/// Whether results made from the trace `recorded` still belong to the
/// trace that is current now, at `current`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// The current trace is the one the results were made from.
    Same,
    /// The results do not say which trace they came from (saved by an
    /// older mapvis): it cannot be told.
    Unknown,
    /// Another trace is current now (`now`): the results are stale.
    Changed {
        /// The trace the results were made from.
        was: SourceId,
        /// The current trace.
        now: SourceId,
    },
    /// The current trace, at another path, does not exist: the results
    /// cannot be shown as its.
    Missing {
        /// The trace the results were made from.
        was: SourceId,
    },
    /// The results' own trace (the current path) has been removed since:
    /// they are shown as of the trace as it was.
    Removed {
        /// The trace the results were made from.
        was: SourceId,
    },
}

impl Freshness {
    /// Judges results of `recorded` against the trace at `current` now.
    /// Cost: one `stat`.
    pub fn judge(recorded: Option<&SourceId>, current: &Path) -> Freshness {
        let Some(was) = recorded.cloned() else {
            return Freshness::Unknown;
        };
        match SourceId::of(current) {
            Some(now) if now == was => Freshness::Same,
            Some(now) => Freshness::Changed { was, now },
            None if was.path != current => Freshness::Missing { was },
            None => Freshness::Removed { was },
        }
    }
}

/// A new id for an analysis of the trace `source`: XXH3-64 of the trace's
/// identity, the time now and the process id, as 16 hex digits. Two
/// analyses of one trace get different ids (they may differ: another
/// program, other sources, another mapvis).
pub fn new_analysis_id(source: Option<&SourceId>) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let text = format!(
        "{}\n{now}\n{}",
        source.map(SourceId::describe).unwrap_or_default(),
        std::process::id()
    );
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()))
}
