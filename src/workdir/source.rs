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
            mtime_ns: m
                .modified()
                .ok()?
                .duration_since(UNIX_EPOCH)
                .ok()?
                .as_nanos(),
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
