//! Minimal fast CSV output for the `visinfo/` data files.
//!
//! Numbers are written with hand-rolled decimal and hex conversion (no
//! `format!` per row), so 25 M rows take a few seconds, bounded by the disk.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::error::VisError;
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
    failed: Option<VisError>,
}

impl CsvOut {
    /// Creates `dir/name` and writes the header line.
    pub(crate) fn create(dir: &Path, name: &str, header: &[&str]) -> Result<Self, VisError> {
        let path = dir.join(name);
        let pending = Pending::new(&path).map_err(|e| VisError::from_workdir(&path, e))?;
        let f = pending
            .handle()
            .map_err(|e| VisError::from_workdir(&path, e))?;
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
    pub(crate) fn end_row(&mut self) -> Result<(), VisError> {
        self.buf.push(b'\n');
        let r = self.w.write_all(&self.buf);
        self.buf.clear();
        r.map_err(|e| VisError::io(&self.path, e))
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
    pub(crate) fn finish(mut self) -> Result<PathBuf, VisError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        self.w.flush().map_err(|e| VisError::io(&self.path, e))?;
        let path = self.path;
        self.pending
            .commit()
            .map_err(|e| VisError::from_workdir(&path, e))
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
