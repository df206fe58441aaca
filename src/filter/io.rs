//! Files of the analysis stage, written whole or not at all: tables as
//! CSV and Parquet, raw bytes, folders and hard links, and Parquet files
//! read back with errors that name them.
//!
//! Every write goes through the working folder's pending files (see
//! `crate::workdir`): a new file is written under a temporary name and
//! renamed into place, so a full disk or a Ctrl-C keeps the previous file,
//! and a link planted in the folder is replaced, never followed.
use std::fs::File;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::error::FilterError;
use crate::workdir::Pending;

/// A working-folder write error on `path` as the filter stage's error,
/// keeping the system's reason (a full disk, say).
pub(crate) fn workdir_failed(
    path: &Path,
) -> impl Fn(crate::workdir::WorkdirError) -> FilterError + '_ {
    move |e| FilterError::Write {
        path: path.to_path_buf(),
        source: e.into_io(),
    }
}

/// Starts writing `path` under a temporary name (see
/// [`crate::workdir::Pending`]): the old file stays until the new one is
/// complete.
pub(crate) fn create(path: &Path) -> Result<Pending, FilterError> {
    Pending::new(path).map_err(workdir_failed(path))
}

/// Writes `bytes` to `path` whole or not at all (see
/// [`crate::workdir::write_file`]): a full disk keeps the previous file.
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> Result<PathBuf, FilterError> {
    crate::workdir::write_file(path, bytes).map_err(workdir_failed(path))
}

/// Renames a complete file into place.
pub(crate) fn commit(p: Pending) -> Result<PathBuf, FilterError> {
    let path = p.path().to_path_buf();
    p.commit().map_err(workdir_failed(&path))
}

/// A Polars write error on `path`, keeping the system's reason (a full
/// disk, say) in the message.
pub(crate) fn write_failed(path: &Path) -> impl Fn(PolarsError) -> FilterError + '_ {
    move |e| FilterError::Write {
        path: path.to_path_buf(),
        source: match e {
            PolarsError::IO { error, .. } => std::io::Error::new(error.kind(), error.to_string()),
            other => std::io::Error::other(other.to_string()),
        },
    }
}

/// Writes a table as Parquet, whole or not at all.
pub fn write_parquet(df: &mut DataFrame, path: &Path) -> Result<PathBuf, FilterError> {
    let mut f = create(path)?;
    ParquetWriter::new(f.file())
        .finish(df)
        .map_err(write_failed(path))?;
    commit(f)
}

/// Reads a Parquet file of a saved analysis, whole or the `slice` (first
/// row, rows) of it; a missing or damaged file is a [`FilterError::Saved`]
/// naming it.
pub(crate) fn read_saved_parquet(
    path: &Path,
    slice: Option<(usize, usize)>,
) -> Result<DataFrame, FilterError> {
    let saved = |reason: String| FilterError::Saved {
        path: path.to_path_buf(),
        reason,
    };
    let f = File::open(path).map_err(|e| saved(e.to_string()))?;
    ParquetReader::new(f)
        .with_slice(slice)
        .finish()
        .map_err(|e| saved(e.to_string()))
}

/// Creates the folder `dir` and those above it, never through a link
/// (see [`crate::workdir::create_dir`]).
pub(crate) fn mkdir(dir: &Path) -> Result<(), FilterError> {
    crate::workdir::create_dir(dir)
        .map(drop)
        .map_err(workdir_failed(dir))
}

/// Hard-links `from` as `to`, or copies it where a link cannot be made
/// (across file systems): for a saved analysis' files, which are never
/// written again once complete.
pub(crate) fn link_or_copy(from: &Path, to: &Path) -> Result<(), FilterError> {
    if std::fs::hard_link(from, to).is_ok() {
        return Ok(());
    }
    std::fs::copy(from, to)
        .map(drop)
        .map_err(|source| FilterError::Write {
            path: to.to_path_buf(),
            source,
        })
}
