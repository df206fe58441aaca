//! The one CSV writer of the project: every CSV file mapvis writes (the
//! figures' data in `visinfo/`, statistics, order data) goes through this
//! module, so they share one dialect (comma-separated, a header row, a
//! field quoted only when it holds a comma, quote or line break, quotes
//! doubled) and one way to fail (whole or not at all: written under a
//! temporary name and renamed into place, a write error named with its
//! file, never lost on drop).
//!
//! Two doors, one for each shape of data:
//! - [`CsvOut`] row by row, for rows produced by a pass over the accesses:
//!   numbers written with hand-rolled decimal and hex conversion (no
//!   `format!` per row), so 25 M rows take a few seconds, bounded by the
//!   disk;
//! - [`write_csv`] and [`write_batches`] for polars tables, whole or in
//!   batches, through polars' own CSV encoder (the tables' floats and
//!   strings are formatted by it, as the rest of the stage formats them).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;

use polars::prelude::*;

use super::error::FilterError;
use super::io::{commit, create, workdir_failed, write_failed};
use crate::workdir::Pending;

/// A CSV file being written.
///
/// It is written under a temporary name and renamed into place by
/// [`CsvOut::finish`]: dropped before that (an error), it leaves the previous
/// file untouched.
pub(crate) struct CsvOut {
    path: PathBuf,
    pending: Pending,
    w: BufWriter<File>,
    buf: Vec<u8>,
    /// The first write error of [`CsvOut::row_done`], reported by
    /// [`CsvOut::finish`].
    failed: Option<FilterError>,
}

impl CsvOut {
    /// Creates `dir/name` and writes the header line.
    pub(crate) fn create(dir: &Path, name: &str, header: &[&str]) -> Result<Self, FilterError> {
        let path = dir.join(name);
        let pending = create(&path)?;
        let f = pending.handle().map_err(workdir_failed(&path))?;
        let mut out = CsvOut {
            path,
            pending,
            w: BufWriter::with_capacity(1 << 20, f),
            buf: Vec::with_capacity(256),
            failed: None,
        };
        for (k, h) in header.iter().enumerate() {
            if k > 0 {
                out.buf.push(b',');
            }
            out.buf.extend_from_slice(h.as_bytes());
        }
        out.end_row()?;
        Ok(out)
    }

    fn sep(&mut self) {
        if !self.buf.is_empty() {
            self.buf.push(b',');
        }
    }

    /// Appends an unsigned decimal field.
    pub(crate) fn num(&mut self, v: u64) {
        self.sep();
        push_dec(&mut self.buf, v);
    }

    /// Appends a `0x`-prefixed lowercase hex field.
    pub(crate) fn hex(&mut self, v: u64) {
        self.sep();
        self.buf.extend_from_slice(b"0x");
        push_hex(&mut self.buf, v);
    }

    /// Appends a text field, quoted when it holds a comma, quote or newline.
    pub(crate) fn text(&mut self, s: &str) {
        self.sep();
        if s.bytes().any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r')) {
            self.buf.push(b'"');
            for b in s.bytes() {
                if b == b'"' {
                    self.buf.push(b'"');
                }
                self.buf.push(b);
            }
            self.buf.push(b'"');
        } else {
            self.buf.extend_from_slice(s.as_bytes());
        }
    }

    /// Ends the current row.
    pub(crate) fn end_row(&mut self) -> Result<(), FilterError> {
        self.buf.push(b'\n');
        let r = self.w.write_all(&self.buf);
        self.buf.clear();
        r.map_err(|source| FilterError::Write {
            path: self.path.clone(),
            source,
        })
    }

    /// Ends the current row inside a pass over the accesses: true to go
    /// on, false (the error kept for [`CsvOut::finish`]) to stop the pass.
    pub(crate) fn row_done(&mut self) -> bool {
        match self.end_row() {
            Ok(()) => true,
            Err(e) => {
                self.failed = Some(e);
                false
            }
        }
    }

    /// Flushes and returns the file's path, or the first error a row met.
    pub(crate) fn finish(mut self) -> Result<PathBuf, FilterError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.w.flush().map_err(|source| FilterError::Write {
            path: self.path.clone(),
            source,
        })?;
        commit(self.pending)
    }
}

fn push_dec(buf: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

fn push_hex(buf: &mut Vec<u8>, mut v: u64) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut tmp = [0u8; 16];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = DIGITS[(v & 15) as usize];
        v >>= 4;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// Writes a table as CSV with a header row, whole or not at all.
pub fn write_csv(df: &mut DataFrame, path: &Path) -> Result<PathBuf, FilterError> {
    write_csv_inner(df, path)
}

/// Adds the column `trace` to `df`: for each row, the state (`complete`
/// or `PARTIAL: REASON`) of the run its column `by` names, from `states`
/// (run, state); rows of a run not listed get the first state. So a
/// table of a partial run says so on every row, in the file itself.
///
/// # Errors
/// `by` is not a text column of `df`.
pub(crate) fn add_trace_column(
    df: &mut DataFrame,
    by: &str,
    states: &[(&str, String)],
) -> Result<(), FilterError> {
    let fallback = states.first().map(|s| s.1.clone()).unwrap_or_default();
    let col = df.column(by).and_then(|c| c.str().cloned());
    let values: Vec<String> = match col {
        Ok(c) => c
            .into_iter()
            .map(|run| {
                states
                    .iter()
                    .find(|(r, _)| Some(*r) == run)
                    .map_or(fallback.clone(), |s| s.1.clone())
            })
            .collect(),
        Err(_) => vec![fallback; df.height()],
    };
    df.with_column(Column::new("trace".into(), values))?;
    Ok(())
}

/// Adds the column `name` holding `value` on every row of `df` (a run's
/// trace state in a table of two runs' pairs, say).
///
/// # Errors
/// Only if polars refuses the column (it has the table's height).
pub(crate) fn add_text_column(
    df: &mut DataFrame,
    name: &str,
    value: &str,
) -> Result<(), FilterError> {
    df.with_column(Column::new(
        name.into(),
        vec![value.to_string(); df.height()],
    ))?;
    Ok(())
}

fn write_csv_inner(df: &mut DataFrame, path: &Path) -> Result<PathBuf, FilterError> {
    let mut f = create(path)?;
    let mut out = std::io::BufWriter::new(f.file());
    CsvWriter::new(&mut out)
        .include_header(true)
        .finish(df)
        .map_err(write_failed(path))?;
    out.flush().map_err(|source| FilterError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    drop(out);
    commit(f)
}

/// Writes the tables received on `batches` to `file` (the pending file of
/// `path`) as one CSV with the header of `schema`, passing each batch
/// through `prepare` first (to format a column, say). The buffer is
/// flushed here, not on drop, where a write error (a full disk) would be
/// lost. Memory: one batch and a 1 MiB buffer.
pub(crate) fn write_batches(
    file: File,
    path: &Path,
    schema: &Schema,
    batches: Receiver<DataFrame>,
    mut prepare: impl FnMut(&mut DataFrame) -> Result<(), FilterError>,
) -> Result<(), FilterError> {
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut csv = CsvWriter::new(&mut out)
        .include_header(true)
        .batched(schema)
        .map_err(write_failed(path))?;
    for mut batch in batches {
        prepare(&mut batch)?;
        csv.write_batch(&batch).map_err(write_failed(path))?;
    }
    csv.finish().map_err(write_failed(path))?;
    drop(csv);
    out.flush().map_err(|source| FilterError::Write {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_match_std_formatting() {
        for v in [0u64, 1, 9, 10, 255, 4096, 0x7fff_ffff_1234, u64::MAX] {
            let mut b = Vec::new();
            push_dec(&mut b, v);
            assert_eq!(String::from_utf8(b).unwrap(), v.to_string());
            let mut h = Vec::new();
            push_hex(&mut h, v);
            assert_eq!(String::from_utf8(h).unwrap(), format!("{v:x}"));
        }
    }
}
