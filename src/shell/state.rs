//! What a session keeps besides its setup: the locality settings (the
//! cache model, reuse sampling, figure colours) and the analysed heap
//! profile. The command groups read and change them through the session.
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::error::{CmdResult, Context};
use crate::filter::{CacheModel, ColourMode, HeapReport, HeapRun};
use crate::trace::BacktraceSymbolizer;

/// The locality settings of a session.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// The cache hierarchy `cache_stats` simulates.
    pub cache: CacheModel,
    /// SHARDS sampling rate of the reuse distance, None for exact.
    pub sampling: Option<f64>,
    /// How the access figures colour their points (`set_figure_colour`).
    #[serde(default)]
    pub figure_colour: ColourMode,
}

impl Settings {
    fn file(state_dir: &Path) -> PathBuf {
        state_dir.join("locality.json")
    }

    /// The settings saved in `state_dir`, or the defaults (this machine's
    /// caches, exact reuse distance). A saved file that cannot be read or
    /// understood is reported, with its cause, and left as it is.
    pub fn load(state_dir: &Path) -> Settings {
        let file = Settings::file(state_dir);
        let text = match crate::workdir::read_regular(&file) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Settings::default(),
            Err(e) => {
                eprintln!(
                    "warning: the saved cache settings {} cannot be read ({e}); this session uses this machine's caches and exact reuse distance.",
                    file.display()
                );
                return Settings::default();
            }
        };
        serde_json::from_str(&text).unwrap_or_else(|e| {
            eprintln!(
                "warning: the saved cache settings {} are damaged ({e}); this session uses this machine's caches and exact reuse distance until set_cache saves new ones.",
                file.display()
            );
            Settings::default()
        })
    }

    /// Writes the settings to `.mapvis/locality.json` in `state_dir`.
    pub(super) fn save(&self, state_dir: &Path) -> CmdResult<()> {
        let path = Settings::file(state_dir);
        crate::workdir::write_file(&path, &serde_json::to_vec_pretty(self).unwrap_or_default())
            .context(|| {
                format!(
                    "cannot save the cache settings to {} (they apply to this session only)",
                    path.display()
                )
            })
            .map(drop)
    }
}

/// The analysed allocator calls of one file, with the file's identity so
/// a newer file replaces them.
pub struct HeapState {
    pub(super) path: PathBuf,
    pub(super) stamp: Option<SystemTime>,
    /// The calls.
    pub run: HeapRun,
    /// What was computed from them.
    pub report: HeapReport,
    pub(super) sym: BacktraceSymbolizer,
}
