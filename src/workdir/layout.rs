//! The layout of a working folder, spelled here and nowhere else:
//!
//! ```text
//! WORK/
//!   figures/  visinfo/  grindanalysis/
//!   .mapvis/
//!     trace.mvt  analysis/  session.json  locality.json  manifest.json  lock
//!     heap.mvh  hpcmp.mvt  bin/  include/
//!     runs/LABEL/{trace.mvt, analysis/, run.json}
//! ```
//!
//! [`WorkFolder`] names each place of one working folder and [`Run`] each
//! place of one saved run; [`valid_label`] is the rule for a run's label
//! and [`RunInfo`] what its `run.json` says. Every path is computed, none
//! is created or checked: callers create what they write through
//! [`super::write_file`] and [`super::Pending`]. Cost: a path join each.
use std::fs;
use std::path::{Path, PathBuf};

use super::error::WorkdirError;
use super::write::{read_regular, write_file};

/// Folder (in the working folder) where mapvis keeps its own files.
pub const STATE_DIR: &str = ".mapvis";
/// The lock file inside [`STATE_DIR`].
pub const LOCK_FILE: &str = "lock";
/// The manifest inside [`STATE_DIR`].
pub const MANIFEST_FILE: &str = "manifest.json";
/// The folder of a saved analysis, in [`STATE_DIR`] and in each run.
pub const ANALYSIS_DIR: &str = "analysis";
/// The trace file, in [`STATE_DIR`] and in each run.
const TRACE_FILE: &str = "trace.mvt";
/// The saved runs' folder inside [`STATE_DIR`].
const RUNS_DIR: &str = "runs";
/// What a run is, inside its folder.
const RUN_FILE: &str = "run.json";
/// The session's setup, inside [`STATE_DIR`].
const SESSION_FILE: &str = "session.json";
/// The cache model and reuse sampling, inside [`STATE_DIR`].
const LOCALITY_FILE: &str = "locality.json";
/// The heap profile, inside [`STATE_DIR`].
const HEAP_PROFILE: &str = "heap.mvh";
/// The trace with thread and sync events, inside [`STATE_DIR`].
const SYNC_TRACE: &str = "hpcmp.mvt";
/// Compiled programs, inside [`STATE_DIR`].
const BIN_DIR: &str = "bin";
/// The pins header's folder, inside [`STATE_DIR`].
const INCLUDE_DIR: &str = "include";
/// The figures' folder.
const FIGURES_DIR: &str = "figures";
/// The data files' folder.
const VISINFO_DIR: &str = "visinfo";
/// Valgrind tools' outputs.
const GRIND_DIR: &str = "grindanalysis";

/// One working folder: where each of mapvis's files lives in it.
/// Invariant: every path it gives lies inside `root`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkFolder {
    root: PathBuf,
}

impl WorkFolder {
    /// The working folder at `root` (not created nor checked).
    pub fn new(root: PathBuf) -> WorkFolder {
        WorkFolder { root }
    }

    /// The folder itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `.mapvis/`, mapvis's own files.
    pub fn state_dir(&self) -> PathBuf {
        self.root.join(STATE_DIR)
    }

    /// `.mapvis/trace.mvt`, where `run_gleipnir` writes the trace.
    pub fn trace_file(&self) -> PathBuf {
        self.state_dir().join(TRACE_FILE)
    }

    /// `.mapvis/analysis/`, the folder's own saved analysis.
    pub fn analysis_dir(&self) -> PathBuf {
        self.state_dir().join(ANALYSIS_DIR)
    }

    /// `.mapvis/session.json`, the setup a later session restores.
    pub fn session_file(&self) -> PathBuf {
        self.state_dir().join(SESSION_FILE)
    }

    /// `.mapvis/locality.json`, the cache model and reuse sampling.
    pub fn locality_file(&self) -> PathBuf {
        self.state_dir().join(LOCALITY_FILE)
    }

    /// `.mapvis/heap.mvh`, where `heap_profile` writes the profile.
    pub fn heap_profile(&self) -> PathBuf {
        self.state_dir().join(HEAP_PROFILE)
    }

    /// `.mapvis/hpcmp.mvt`, the trace with thread and sync events.
    pub fn sync_trace(&self) -> PathBuf {
        self.state_dir().join(SYNC_TRACE)
    }

    /// `.mapvis/bin/`, where `compile_exe` puts programs.
    pub fn bin_dir(&self) -> PathBuf {
        self.state_dir().join(BIN_DIR)
    }

    /// `.mapvis/include/`, where `compile_exe` puts the pins header.
    pub fn include_dir(&self) -> PathBuf {
        self.state_dir().join(INCLUDE_DIR)
    }

    /// `figures/`.
    pub fn figures_dir(&self) -> PathBuf {
        self.root.join(FIGURES_DIR)
    }

    /// `visinfo/`.
    pub fn visinfo_dir(&self) -> PathBuf {
        self.root.join(VISINFO_DIR)
    }

    /// `grindanalysis/`, Valgrind tools' outputs.
    pub fn grind_dir(&self) -> PathBuf {
        self.root.join(GRIND_DIR)
    }

    /// `.mapvis/runs/`, where `save_run` keeps runs.
    pub fn runs_dir(&self) -> PathBuf {
        self.state_dir().join(RUNS_DIR)
    }

    /// The run `label` (saved or not), or `None` when `label` cannot name
    /// one ([`valid_label`]), so no run's path leaves `.mapvis/runs/`.
    pub fn run(&self, label: &str) -> Option<Run> {
        valid_label(label).then(|| Run {
            label: label.to_string(),
            dir: self.runs_dir().join(label),
        })
    }

    /// The saved runs (a valid label and a `run.json`), in the order they
    /// were saved: by [`RunInfo::sequence`], then (runs saved before runs
    /// were numbered) by the second they were saved, then by label. Cost:
    /// one listing of `.mapvis/runs/` and a read of each `run.json`.
    pub fn saved_runs(&self) -> Vec<Run> {
        self.saved_runs_keyed()
            .into_iter()
            .map(|(_, r)| r)
            .collect()
    }

    /// The number the next run saved gets: one more than the largest of
    /// the saved runs' (1 for the first). Cost: as [`Self::saved_runs`].
    pub fn next_run_sequence(&self) -> u64 {
        self.saved_runs_keyed()
            .iter()
            .map(|((sequence, _), _)| *sequence)
            .max()
            .map_or(1, |m| m + 1)
    }

    /// The saved runs, each with its (sequence, second saved) from its
    /// `run.json` ((0, 0) when that cannot be read), in the order of
    /// [`Self::saved_runs`]: each `run.json` is read once.
    fn saved_runs_keyed(&self) -> Vec<((u64, u64), Run)> {
        let Ok(entries) = fs::read_dir(self.runs_dir()) else {
            return Vec::new();
        };
        let mut runs: Vec<((u64, u64), Run)> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| self.run(&e.file_name().to_string_lossy()))
            .filter(Run::is_saved)
            .map(|r| (r.info().map_or((0, 0), |i| (i.sequence, i.saved)), r))
            .collect();
        runs.sort_by(|(a, x), (b, y)| a.cmp(b).then_with(|| x.label.cmp(&y.label)));
        runs
    }

    /// Where `save_run LABEL` builds the run before renaming it into place
    /// (`.mapvis/runs/.LABEL.partial`): a name no label can take, so a
    /// run killed while being kept is never mistaken for one. `None` when
    /// `label` is not [`valid_label`].
    pub fn staging_run(&self, label: &str) -> Option<Run> {
        valid_label(label).then(|| Run {
            label: label.to_string(),
            dir: self.runs_dir().join(format!(".{label}.partial")),
        })
    }

    /// Folders of `.mapvis/runs/` that are not whole runs: a run being
    /// built that was never renamed into place (`.LABEL.partial`, left by
    /// a kill or a full disk), and a run folder without `run.json` (left
    /// so by a mapvis before runs were built under a temporary name).
    /// Each is (path, the label it blocks, if any). Cost: one listing.
    pub fn half_made_runs(&self) -> Vec<(PathBuf, Option<String>)> {
        let Ok(entries) = fs::read_dir(self.runs_dir()) else {
            return Vec::new();
        };
        let mut out: Vec<(PathBuf, Option<String>)> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(r) = self.run(&name) {
                    return (!r.is_saved()).then(|| (e.path(), Some(name)));
                }
                let staged = name
                    .strip_prefix('.')
                    .and_then(|n| n.strip_suffix(".partial"))
                    .is_some_and(valid_label);
                staged.then(|| (e.path(), None))
            })
            .collect();
        out.sort();
        out
    }

    /// The folders mapvis writes into, relative to the root: each is
    /// created as a real folder when missing, and refused when it is a
    /// symbolic link (see [`super::refuse_linked_folders`]), as is each
    /// entry of `.mapvis/runs/`, listed by [`WorkFolder::run_entries`].
    pub(super) fn own_folders() -> [PathBuf; 6] {
        let state = Path::new(STATE_DIR);
        [
            state.to_path_buf(),
            PathBuf::from(FIGURES_DIR),
            PathBuf::from(VISINFO_DIR),
            PathBuf::from(GRIND_DIR),
            state.join(ANALYSIS_DIR),
            state.join(RUNS_DIR),
        ]
    }

    /// Every entry of `.mapvis/runs/`, relative to the root, whatever its
    /// name or kind (for the check of links).
    pub(super) fn run_entries(&self) -> Vec<PathBuf> {
        let rel = Path::new(STATE_DIR).join(RUNS_DIR);
        fs::read_dir(self.root.join(&rel))
            .map(|d| d.flatten().map(|e| rel.join(e.file_name())).collect())
            .unwrap_or_default()
    }
}

/// Whether `label` may name a run: 1 to 64 letters, digits, `_`, `-`
/// and `.`, not starting with `.` (so it is one plain folder name) nor
/// with `-` (which commands read as an option, `plot_runs M -vars X`).
pub fn valid_label(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 64
        && !label.starts_with('.')
        // A leading '-' would read as an option (`plot_runs M -vars X`).
        && !label.starts_with('-')
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// One run of a working folder, `.mapvis/runs/LABEL/`: a trace and its
/// analysis (hard links to the folder's at `save_run`) and `run.json`.
/// Invariant: the label is [`valid_label`], so the folder is one plain
/// name inside `.mapvis/runs/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    label: String,
    dir: PathBuf,
}

impl Run {
    /// The run's label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The run's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The run's saved analysis.
    pub fn analysis_dir(&self) -> PathBuf {
        self.dir.join(ANALYSIS_DIR)
    }

    /// The run's trace.
    pub fn trace_file(&self) -> PathBuf {
        self.dir.join(TRACE_FILE)
    }

    /// The run's `run.json`.
    pub fn info_file(&self) -> PathBuf {
        self.dir.join(RUN_FILE)
    }

    /// Whether the run is saved: its `run.json` is a file (written last
    /// by `save_run`, so a run half kept is not one).
    pub fn is_saved(&self) -> bool {
        self.info_file().is_file()
    }

    /// What `run.json` says, or `None` when it cannot be read or
    /// understood.
    pub fn info(&self) -> Option<RunInfo> {
        let bytes = read_regular(&self.info_file()).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Writes `info` as the run's `run.json`, whole or not at all; returns
    /// its path.
    pub fn write_info(&self, info: &RunInfo) -> Result<PathBuf, WorkdirError> {
        write_file(
            &self.info_file(),
            &serde_json::to_vec_pretty(info).unwrap_or_default(),
        )
    }
}

/// The version of `run.json` this mapvis writes: 2 since the accesses and
/// completeness moved out (they are read from the run's own
/// `analysis/summary.json`, which the manifest covers, so an edited
/// `run.json` cannot pass a partial run as complete).
pub const RUN_INFO_VERSION: u32 = 2;

/// What `run.json` says of a run: only what nothing else records (see
/// docs/data-files.md). The fields' order is the file's. A `run.json` of
/// version 1 (no `version` field) also held `accesses` and `complete`;
/// they are ignored.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RunInfo {
    /// The file's version ([`RUN_INFO_VERSION`]; 1 when absent).
    #[serde(default = "version_one")]
    pub version: u32,
    /// The run's label.
    pub label: String,
    /// The traced program.
    pub program: String,
    /// Its arguments.
    pub arguments: Vec<String>,
    /// When it was saved, seconds since the Unix epoch (UTC).
    pub saved: u64,
    /// Its place in the order runs were saved in this folder, from 1 (a
    /// sweep saves several runs a second, so the time cannot order them);
    /// 0 in a `run.json` written before runs were numbered.
    #[serde(default)]
    pub sequence: u64,
}

/// The version of a `run.json` without one.
fn version_one() -> u32 {
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run `label` saved at second `saved` with number `sequence` (None:
    /// a `run.json` from before runs were numbered).
    fn keep(w: &WorkFolder, label: &str, saved: u64, sequence: Option<u64>) {
        let r = w.run(label).unwrap();
        fs::create_dir_all(r.dir()).unwrap();
        let mut info = serde_json::json!({"label": label, "program": "p", "arguments": [],
            "saved": saved, "accesses": 1, "complete": true});
        if let Some(n) = sequence {
            info["sequence"] = n.into();
        }
        fs::write(r.info_file(), info.to_string()).unwrap();
    }

    /// Runs come in the order they were saved: unnumbered (older) runs
    /// first by their second, then by number, whatever their labels'
    /// order; the next run gets one more than the largest number.
    #[test]
    fn runs_are_listed_in_the_order_they_were_saved() {
        let dir = tempfile::tempdir().unwrap();
        let w = WorkFolder::new(dir.path().to_path_buf());
        assert_eq!(w.next_run_sequence(), 1);
        keep(&w, "b16", 100, Some(1));
        keep(&w, "a", 100, Some(3));
        keep(&w, "b4", 100, Some(2));
        keep(&w, "old2", 50, None);
        keep(&w, "old1", 40, None);
        let labels: Vec<String> = w
            .saved_runs()
            .iter()
            .map(|r| r.label().to_string())
            .collect();
        assert_eq!(labels, ["old1", "old2", "b16", "b4", "a"]);
        assert_eq!(w.next_run_sequence(), 4);
    }

    #[test]
    fn a_run_stays_inside_the_runs_folder() {
        let w = WorkFolder::new(PathBuf::from("/w"));
        for bad in ["", "..", ".hidden", "-vars", "a/b", "x".repeat(65).as_str()] {
            assert!(w.run(bad).is_none(), "{bad}");
        }
        let r = w.run("N-256.o2").unwrap();
        assert_eq!(r.dir(), Path::new("/w/.mapvis/runs/N-256.o2"));
        assert_eq!(
            r.analysis_dir(),
            Path::new("/w/.mapvis/runs/N-256.o2/analysis")
        );
        assert_eq!(
            r.trace_file(),
            Path::new("/w/.mapvis/runs/N-256.o2/trace.mvt")
        );
        assert_eq!(
            r.info_file(),
            Path::new("/w/.mapvis/runs/N-256.o2/run.json")
        );
    }
}
