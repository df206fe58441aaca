//! The access list again, by variable: every access of the analysis but
//! those of scalars (variables of at most [`SCALAR_BYTES`] bytes, see
//! [`sorted_by_var`]) in a second dataset whose row groups each hold the
//! accesses of one variable in time order, so that a figure of one array
//! reads that array's accesses alone instead of the whole list. A read
//! that keeps a scalar goes to the access list.
//!
//! ```text
//! accesses/region=1/t0=0/part-0.parquet   the access list by time (store.rs)
//! accesses_by_var/part-0.parquet          the same accesses by variable
//! accesses_by_var/part-1.parquet
//! ```
//!
//! The files have the columns `time, op, addr, size, tid, var, line` (the
//! access list's, with `time` written out), `time` and `addr` as
//! DELTA_BINARY_PACKED (a variable's accesses step through time and its
//! addresses by small, regular amounts), the rest PLAIN, all LZ4. DuckDB
//! and Spark read them as they are: `WHERE var = 3` skips every row group
//! of other variables by its statistics.
//!
//! A *run* is a stretch of rows of one file holding accesses of one
//! variable, in time order; a variable's runs, in the order of the index
//! ([`ByVar::runs`]), are all its accesses in time order. The analysis
//! gathers each variable's accesses in a buffer of its own ([`VarSorter`])
//! and writes a run when the buffer holds [`Limits::run`] accesses, so
//! a run of an array is a row group of its own. The buffers together hold
//! at most [`Limits::budget`] accesses; past it the largest is written. A
//! program with thousands of small variables would make tiny row groups
//! that way, so when every buffer is smaller than [`Limits::min_run`] they
//! are all written as one row group of several runs (sorted by variable):
//! reading one of those variables then decodes the whole row group, and
//! [`ByVar::cost`] counts it so.
//!
//! Cost: the sorter runs on a thread of its own, fed the access list's row
//! groups; memory is the buffers' budget (about 120 MB), room reserved for
//! the runs of the busiest variables (at most 16 runs, 120 MB; two on a
//! matrix multiply) and two row groups in flight, whatever the trace's
//! length; disk about a tenth of a byte
//! per access on a -O0 loop nest (docs/PERFORMANCE.md).
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

use polars::prelude::*;
use polars_parquet::write::Encoding;

use super::columns::{slice_of, Columns};
use super::dataset::{DatasetFile, Layout};
use super::error::FilterError;
use super::io::{link_or_copy, mkdir};
use super::schema::access as ac;

/// One run: rows `first..first + rows` of file `file` hold accesses of
/// variable `var`, in time order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Row of the variable table.
    pub var: u32,
    /// The file, `part-{file}.parquet`.
    pub file: u32,
    /// First row of the run in its file.
    pub first: u64,
    /// Rows of the run.
    pub rows: u64,
    /// Rows of the row group the run lies in: what reading it decodes.
    pub group_rows: u64,
}

/// The sizes the sorter works with, derived from the access list's
/// [`Layout`] so that tests with small layouts cross every boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// A variable's buffer is written as a run of its own at this size.
    pub run: usize,
    /// All buffers together hold at most this many accesses.
    pub budget: usize,
    /// Below this, buffers pushed out by the budget go into one row group.
    pub min_run: usize,
    /// Rows per file at most (a run is never split across files).
    pub file_rows: u64,
}

impl Limits {
    /// For the default layout: runs of 2^18 accesses (7.6 MB of columns),
    /// a budget of 2^22 (about 120 MB), mixed row groups below 2^12, files
    /// of 2^24 rows.
    pub fn of(layout: Layout) -> Limits {
        let g = layout.row_group.max(4);
        Limits {
            run: g / 4,
            budget: g * 4,
            min_run: (g / 256).max(1),
            file_rows: layout.window.max(g as u64),
        }
    }
}

/// The by-variable dataset of an analysis: its folder and the index of
/// its runs.
#[derive(Clone, Debug, Default)]
pub struct ByVar {
    root: PathBuf,
    /// Sorted by variable; each variable's runs in time order.
    runs: Vec<Run>,
    /// The variables whose accesses the dataset leaves out (scalars, see
    /// [`sorted_by_var`]), ascending: a read of any of them goes to the
    /// access list.
    left_out: Vec<u32>,
}

/// Variables of at most this many bytes (loop counters, pointers, single
/// numbers) are left out of the by-variable dataset.
pub const SCALAR_BYTES: u64 = 16;

/// Whether the accesses of a variable with this span go into the
/// by-variable dataset: every variable but a scalar, a span of
/// 1..=[`SCALAR_BYTES`] bytes. A figure draws arrays and blocks, and is
/// what reads one variable's accesses, while scalars take most of the
/// accesses of code built at -O0 (11 of the 15 of an ijk matmul's inner
/// step): sorting them cost more than half of the analysis
/// (docs/PERFORMANCE.md, 2026-11-27). A span not known yet (size 0: a
/// Gleipnir stack variable) is sorted.
pub(crate) fn sorted_by_var(span: &super::model::Span) -> bool {
    !(1..=SCALAR_BYTES).contains(&span.size)
}

/// The folder of the by-variable dataset beside the access list's
/// dataset `accesses`: `accesses_by_var`.
pub fn folder_for(accesses: &Path) -> PathBuf {
    let name = accesses
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "accesses".into());
    accesses.with_file_name(format!("{name}_by_var"))
}

impl ByVar {
    /// The dataset in `root` with these runs (in the order written).
    pub fn open(root: &Path, mut runs: Vec<Run>) -> ByVar {
        // Stable: each variable's runs keep their (time) order.
        runs.sort_by_key(|r| r.var);
        ByVar {
            root: root.to_path_buf(),
            runs,
            left_out: Vec::new(),
        }
    }

    /// The dataset without the accesses of the variables `left_out`.
    pub fn leaving_out(mut self, mut left_out: Vec<u32>) -> ByVar {
        left_out.sort_unstable();
        left_out.dedup();
        self.left_out = left_out;
        self
    }

    /// The variables whose accesses the dataset leaves out, ascending.
    pub fn left_out(&self) -> &[u32] {
        &self.left_out
    }

    /// The first variable `keep` holds that the dataset leaves out.
    fn first_left_out(&self, keep: &[bool]) -> Option<u32> {
        self.left_out
            .iter()
            .copied()
            .find(|&v| keep.get(v as usize).copied().unwrap_or(false))
    }

    /// Every run, by variable, each variable's in time order.
    pub fn runs(&self) -> &[Run] {
        &self.runs
    }

    /// The folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file of runs `file`.
    pub fn file(&self, file: u32) -> PathBuf {
        self.root.join(format!("part-{file}.parquet"))
    }

    /// The dataset moved to `root`.
    pub fn relocate(&mut self, root: &Path) {
        self.root = root.to_path_buf();
    }

    /// The runs of variable `var`, in time order.
    fn runs_of(&self, var: u32) -> &[Run] {
        let lo = self.runs.partition_point(|r| r.var < var);
        let hi = self.runs.partition_point(|r| r.var <= var);
        &self.runs[lo..hi]
    }

    /// Rows that reading the variables `keep` holds decodes; `u64::MAX`
    /// when one of them is left out (only the access list has it).
    pub fn cost(&self, keep: &[bool]) -> u64 {
        if self.first_left_out(keep).is_some() {
            return u64::MAX;
        }
        self.runs
            .iter()
            .filter(|r| keep.get(r.var as usize).copied().unwrap_or(false))
            .map(|r| r.group_rows)
            .sum()
    }

    /// The index file of the dataset in `root`: `root` with `.json`
    /// appended (outside the folder, so that a glob of its Parquet files
    /// finds only accesses).
    fn index_path(root: &Path) -> PathBuf {
        let mut p = root.as_os_str().to_owned();
        p.push(".json");
        PathBuf::from(p)
    }

    /// Writes the index beside the folder: `{"runs": [[var, file, first,
    /// rows, group_rows], ...], "left_out": [var, ...]}`, runs in write
    /// order by variable.
    pub fn write_index(&self) -> Result<(), FilterError> {
        let runs: Vec<[u64; 5]> = self
            .runs
            .iter()
            .map(|r| [r.var as u64, r.file as u64, r.first, r.rows, r.group_rows])
            .collect();
        let path = ByVar::index_path(&self.root);
        let text =
            serde_json::to_vec(&serde_json::json!({ "runs": runs, "left_out": self.left_out }))
                .unwrap_or_default();
        std::fs::write(&path, text).map_err(|source| FilterError::Write { path, source })
    }

    /// The dataset in `root` as its index describes it; `None` when it has
    /// no index (an analysis saved before the layout existed, or kept in
    /// memory).
    ///
    /// # Errors
    /// An index that cannot be read or parsed, named.
    pub fn load(root: &Path) -> Result<Option<ByVar>, FilterError> {
        let path = ByVar::index_path(root);
        let Ok(text) = std::fs::read(&path) else {
            return Ok(None);
        };
        let bad = |reason: String| FilterError::Saved {
            path: path.clone(),
            reason,
        };
        let j: serde_json::Value = serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))?;
        let runs: Vec<[u64; 5]> =
            serde_json::from_value(j["runs"].clone()).map_err(|e| bad(e.to_string()))?;
        let runs = runs
            .into_iter()
            .map(|[var, file, first, rows, group_rows]| Run {
                var: var as u32,
                file: file as u32,
                first,
                rows,
                group_rows,
            })
            .collect();
        // Indexes written before scalars were left out have no list.
        let left_out: Vec<u32> = match j.get("left_out") {
            Some(l) => serde_json::from_value(l.clone()).map_err(|e| bad(e.to_string()))?,
            None => Vec::new(),
        };
        Ok(Some(ByVar::open(root, runs).leaving_out(left_out)))
    }

    /// Hard-links (or copies, across file systems) the files into `root`.
    pub fn link_to(&self, root: &Path) -> Result<ByVar, FilterError> {
        mkdir(root)?;
        let files = self.runs.iter().map(|r| r.file).max().map_or(0, |m| m + 1);
        let out = ByVar {
            root: root.to_path_buf(),
            runs: self.runs.clone(),
            left_out: self.left_out.clone(),
        };
        for k in 0..files {
            link_or_copy(&self.file(k), &out.file(k))?;
        }
        Ok(out)
    }

    /// Visits the accesses of the variables `keep` holds in time order, as
    /// frames with the columns of the access list's `for_each`;
    /// `f` returns false to stop.
    ///
    /// Cost: one variable's runs are handed over as read (one row group
    /// each); several are merged by time, a stretch of consecutive
    /// accesses of one variable at a time (a heap over the variables,
    /// O(log k) a stretch). Memory: one run per variable.
    pub fn for_each(
        &self,
        keep: &[bool],
        f: &mut dyn FnMut(DataFrame) -> Result<bool, FilterError>,
    ) -> Result<(), FilterError> {
        if let Some(v) = self.first_left_out(keep) {
            return Err(FilterError::Saved {
                path: self.root.clone(),
                reason: format!(
                    "variable {v} is a scalar, left out of the by-variable dataset: read it from the access list"
                ),
            });
        }
        let vars: Vec<&[Run]> = (0..keep.len() as u32)
            .filter(|&v| keep[v as usize])
            .map(|v| self.runs_of(v))
            .filter(|r| !r.is_empty())
            .collect();
        if let [only] = vars[..] {
            for run in only {
                if !f(self.read(run)?)? {
                    break;
                }
            }
            return Ok(());
        }
        self.merge(vars, f)
    }

    /// Reads one run.
    fn read(&self, run: &Run) -> Result<DataFrame, FilterError> {
        let path = self.file(run.file);
        let df =
            super::io::read_saved_parquet(&path, Some((run.first as usize, run.rows as usize)))?;
        if df.height() as u64 != run.rows {
            return Err(FilterError::Saved {
                path,
                reason: format!(
                    "it holds {} rows from row {}, where the index says {}",
                    df.height(),
                    run.first,
                    run.rows
                ),
            });
        }
        Ok(df)
    }

    /// Merges the runs of several variables by time (see
    /// [`ByVar::for_each`]).
    fn merge(
        &self,
        vars: Vec<&[Run]>,
        f: &mut dyn FnMut(DataFrame) -> Result<bool, FilterError>,
    ) -> Result<(), FilterError> {
        let mut cursors = Vec::with_capacity(vars.len());
        let mut heap = BinaryHeap::new();
        for runs in vars {
            let mut c = Cursor {
                runs: runs.iter(),
                cols: Columns::default(),
                pos: 0,
            };
            if let Some(t) = c.head(self)? {
                heap.push(Reverse((t, cursors.len())));
                cursors.push(c);
            }
        }
        let mut out = Columns::default();
        out.reserve(MERGED);
        while let Some(Reverse((_, i))) = heap.pop() {
            // Everything of this variable before the next one's head: the
            // variables of a loop interleave access by access, so the
            // stretch is often one access, and it is scanned and copied
            // access by access rather than searched and copied by slices.
            let bound = heap.peek().map_or(u64::MAX, |Reverse((t, _))| *t);
            let c = &mut cursors[i];
            let n = c.cols.len();
            loop {
                out.push_from(&c.cols, c.pos);
                c.pos += 1;
                if c.pos == n || c.cols.time[c.pos] >= bound {
                    break;
                }
            }
            if let Some(t) = c.head(self)? {
                heap.push(Reverse((t, i)));
            }
            if out.len() >= MERGED {
                let df = out.take()?;
                out.reserve(MERGED);
                if !f(df)? {
                    return Ok(());
                }
            }
        }
        if !out.time.is_empty() {
            f(out.take()?)?;
        }
        Ok(())
    }
}

/// Rows of a frame the merge hands over: 1.9 MB of columns.
const MERGED: usize = 1 << 16;

/// One variable's runs while they are merged.
struct Cursor<'a> {
    runs: std::slice::Iter<'a, Run>,
    cols: Columns,
    pos: usize,
}

impl Cursor<'_> {
    /// The time of the next access, reading the next run when this one is
    /// done; `None` when the variable has no more.
    fn head(&mut self, by: &ByVar) -> Result<Option<u64>, FilterError> {
        while self.pos >= self.cols.time.len() {
            let Some(run) = self.runs.next() else {
                return Ok(None);
            };
            self.cols.read(&by.read(run)?)?;
            self.pos = 0;
        }
        Ok(Some(self.cols.time[self.pos]))
    }
}

/// The stored columns of one row group of the access list, borrowed.
struct Stored<'a> {
    op: &'a [u8],
    addr: &'a [u64],
    size: &'a [u16],
    tid: &'a [u16],
    var: &'a [u32],
    line: &'a [u32],
}

impl<'a> Stored<'a> {
    /// Appends the accesses at rows `rows` (of a frame whose first access
    /// has time `t0`) to `out`, a column at a time: each column is one
    /// gather with its room reserved once.
    fn gather_into(&self, out: &mut Columns, t0: u64, rows: &[u32]) {
        let at = |k: &u32| *k as usize;
        out.time.extend(rows.iter().map(|&k| t0 + u64::from(k)));
        out.op.extend(rows.iter().map(|k| self.op[at(k)]));
        out.addr.extend(rows.iter().map(|k| self.addr[at(k)]));
        out.size.extend(rows.iter().map(|k| self.size[at(k)]));
        out.tid.extend(rows.iter().map(|k| self.tid[at(k)]));
        out.var.extend(rows.iter().map(|k| self.var[at(k)]));
        out.line.extend(rows.iter().map(|k| self.line[at(k)]));
    }

    fn of(df: &'a DataFrame) -> PolarsResult<Stored<'a>> {
        Ok(Stored {
            op: slice_of(df, ac::OP, |c| c.u8())?,
            addr: slice_of(df, ac::ADDR, |c| c.u64())?,
            size: slice_of(df, ac::SIZE, |c| c.u16())?,
            tid: slice_of(df, ac::TID, |c| c.u16())?,
            var: slice_of(df, ac::VAR, |c| c.u32())?,
            line: slice_of(df, ac::LINE, |c| c.u32())?,
        })
    }
}

/// Rows of a frame [`VarSorter::push`] sorts at a time: 8192 rows are
/// 200 KB of columns, which stay in the L2 cache while each variable
/// gathers its rows.
const CHUNK: usize = 1 << 13;

/// Rows of one [`CHUNK`] above which a variable whose buffer is empty gets
/// room for a whole run at once: at most 16 variables are that busy in a
/// chunk, so the room reserved beyond the budget stays below 16 runs.
const BUSY: usize = CHUNK / 16;

/// Sorts the access list's row groups into the by-variable dataset (see
/// the module's documentation).
pub(crate) struct VarSorter {
    root: PathBuf,
    limits: Limits,
    /// One buffer per variable row.
    bufs: Vec<Columns>,
    /// Per variable row, the rows of the frame being sorted that are its
    /// (kept between frames for their room), and the variables met in
    /// the frame, in order.
    rows_of: Vec<Vec<u32>>,
    met: Vec<u32>,
    /// Accesses in all buffers.
    buffered: usize,
    /// The file being written, its number and rows so far.
    out: Option<(DatasetFile, u32, u64)>,
    files: u32,
    runs: Vec<Run>,
    /// Per variable row, whether its accesses are left out (a scalar).
    left_out: Vec<bool>,
}

impl VarSorter {
    /// A sorter writing into `root` (created).
    pub(crate) fn new(root: &Path, limits: Limits) -> Result<VarSorter, FilterError> {
        mkdir(root)?;
        Ok(VarSorter {
            root: root.to_path_buf(),
            limits,
            bufs: Vec::new(),
            rows_of: Vec::new(),
            met: Vec::new(),
            buffered: 0,
            out: None,
            files: 0,
            runs: Vec::new(),
            left_out: Vec::new(),
        })
    }

    /// Leaves the accesses of the variables `vars` out from now on (told
    /// before any of their accesses arrives; see [`sorted_by_var`]).
    pub(crate) fn leave_out(&mut self, vars: &[u32]) {
        for &v in vars {
            let v = v as usize;
            if v >= self.left_out.len() {
                self.left_out.resize(v + 1, false);
            }
            self.left_out[v] = true;
        }
    }

    /// Sorts one row group of the access list (its stored columns, `op,
    /// addr, size, tid, var, line`), whose first access has time `t0`.
    ///
    /// Cost: per access, its row noted under its variable, then a gather
    /// per column into the variable's buffer; writing runs when buffers
    /// fill. The frame is sorted [`CHUNK`] rows at a time, so the rows
    /// each variable gathers are still in the cache from noting them and
    /// from the variables before it (a whole row group is 21 MB, and an
    /// array read every 15th access touched every cache line of it once
    /// per column). Each variable's runs hold the same accesses as when
    /// the frame was sorted whole (its rows keep their order, and the
    /// budget is looked at once per frame); only the order in which runs
    /// of different variables are written within a frame may differ.
    pub(crate) fn push(&mut self, t0: u64, df: &DataFrame) -> Result<(), FilterError> {
        // A frame read back from disk may come in several chunks.
        let single;
        let s = match Stored::of(df) {
            Ok(s) => s,
            Err(_) => {
                let mut d = df.clone();
                d.as_single_chunk_par();
                single = d;
                Stored::of(&single)?
            }
        };
        let n = s.var.len();
        let mut taken = Ok(());
        for start in (0..n).step_by(CHUNK) {
            let end = n.min(start + CHUNK);
            self.note_rows(&s.var[start..end], start as u32);
            // Every variable's rows are cleared for the next chunk, even
            // after a write failed.
            let mut met = std::mem::take(&mut self.met);
            for &v in &met {
                let mut rows = std::mem::take(&mut self.rows_of[v as usize]);
                if taken.is_ok() {
                    taken = self.take_rows(&s, t0, v as usize, &rows);
                }
                rows.clear();
                self.rows_of[v as usize] = rows;
            }
            met.clear();
            self.met = met;
            if taken.is_err() {
                break;
            }
        }
        taken?;
        while self.buffered > self.limits.budget {
            self.relieve()?;
        }
        Ok(())
    }

    /// Notes each row of a chunk of a frame under its variable (`var` is
    /// the chunk's part of the frame's variable column, from row `first`),
    /// and the variables met, in order.
    fn note_rows(&mut self, var: &[u32], first: u32) {
        for (k, &v) in (first..).zip(var) {
            let v = v as usize;
            if self.left_out.get(v).copied().unwrap_or(false) {
                continue;
            }
            if v >= self.bufs.len() {
                self.bufs.resize_with(v + 1, Columns::default);
                self.rows_of.resize_with(v + 1, Vec::new);
            }
            if self.rows_of[v].is_empty() {
                self.met.push(v as u32);
            }
            self.rows_of[v].push(k);
        }
    }

    /// Appends variable `v`'s `rows` of the frame `s` to its buffer,
    /// writing the buffer as a run each time it fills.
    fn take_rows(
        &mut self,
        s: &Stored,
        t0: u64,
        v: usize,
        rows: &[u32],
    ) -> Result<(), FilterError> {
        let full_at = self.limits.run;
        let mut from = 0;
        while from < rows.len() {
            let held = self.bufs[v].len();
            if held == 0 && rows.len() >= BUSY {
                // A busy variable fills a run soon: room for it at once,
                // not by doubling (each doubling copies the buffer).
                self.bufs[v].reserve(full_at);
            }
            let part = &rows[from..rows.len().min(from + full_at - held)];
            s.gather_into(&mut self.bufs[v], t0, part);
            from += part.len();
            if held + part.len() >= full_at {
                // The buffer's earlier accesses were counted; these not.
                self.buffered -= held;
                self.write_var(v)?;
            } else {
                self.buffered += part.len();
            }
        }
        Ok(())
    }

    /// Writes the largest buffer as a run of its own, or, when every
    /// buffer is smaller than [`Limits::min_run`], all of them as one row
    /// group.
    fn relieve(&mut self) -> Result<(), FilterError> {
        let (v, n) = self
            .bufs
            .iter()
            .enumerate()
            .map(|(v, b)| (v, b.len()))
            .max_by_key(|&(_, n)| n)
            .unwrap_or((0, 0));
        if n >= self.limits.min_run {
            self.buffered -= n;
            return self.write_var(v);
        }
        self.write_mixed()
    }

    /// Writes variable `v`'s buffer as a run and row group of its own.
    fn write_var(&mut self, v: usize) -> Result<(), FilterError> {
        let mut b = std::mem::take(&mut self.bufs[v]);
        let rows = b.len() as u64;
        self.write_group(b.take()?, &[(v as u32, rows)])
    }

    /// Writes every non-empty buffer, by variable, as one row group.
    fn write_mixed(&mut self) -> Result<(), FilterError> {
        let mut all = Columns::default();
        let mut runs = Vec::new();
        for (v, b) in self.bufs.iter_mut().enumerate() {
            if b.len() > 0 {
                runs.push((v as u32, b.len() as u64));
                all.append(b, 0..b.len());
                *b = Columns::default();
            }
        }
        self.buffered = 0;
        if runs.is_empty() {
            return Ok(());
        }
        self.write_group(all.take()?, &runs)
    }

    /// Writes `df` as one row group holding `runs` (variable, rows) in
    /// order, into the current file or a new one.
    fn write_group(&mut self, df: DataFrame, runs: &[(u32, u64)]) -> Result<(), FilterError> {
        let rows = df.height() as u64;
        if self
            .out
            .as_ref()
            .is_some_and(|o| o.2 > 0 && o.2 + rows > self.limits.file_rows)
        {
            self.close()?;
        }
        if self.out.is_none() {
            let path = self.root.join(format!("part-{}.parquet", self.files));
            let file =
                DatasetFile::create_with(path, &schema(), &ENCODINGS, &[true; ENCODINGS.len()])?;
            self.out = Some((file, self.files, 0));
            self.files += 1;
        }
        let (file, no, at) = self.out.as_mut().expect("a file is open");
        file.write(&df)?;
        let mut first = *at;
        for &(var, n) in runs {
            self.runs.push(Run {
                var,
                file: *no,
                first,
                rows: n,
                group_rows: rows,
            });
            first += n;
        }
        *at += rows;
        Ok(())
    }

    fn close(&mut self) -> Result<(), FilterError> {
        match self.out.take() {
            Some((f, _, _)) => f.finish(),
            None => Ok(()),
        }
    }

    /// Writes what the buffers hold (runs of their own for buffers of at
    /// least [`Limits::min_run`], one row group for the rest) and returns
    /// the index.
    pub(crate) fn finish(mut self) -> Result<ByVar, FilterError> {
        for v in 0..self.bufs.len() {
            let n = self.bufs[v].len();
            if n >= self.limits.min_run {
                self.buffered -= n;
                self.write_var(v)?;
            }
        }
        self.write_mixed()?;
        self.close()?;
        let left_out = (0..self.left_out.len() as u32)
            .filter(|&v| self.left_out[v as usize])
            .collect();
        Ok(ByVar::open(&self.root, self.runs).leaving_out(left_out))
    }
}

/// The columns of the by-variable files: `time`, then the access list's.
fn schema() -> Schema {
    let mut s = Schema::from_iter([Field::new(ac::TIME.into(), DataType::UInt64)]);
    s.merge(super::dataset::stored_schema());
    s
}

/// The encodings of [`schema`]'s columns.
const ENCODINGS: [Encoding; 7] = [
    Encoding::DeltaBinaryPacked,
    Encoding::Plain,
    Encoding::DeltaBinaryPacked,
    Encoding::Plain,
    Encoding::Plain,
    Encoding::Plain,
    Encoding::Plain,
];

/// The sorter on a thread of its own, fed row groups as the access list
/// is written (at most two wait).
pub(crate) struct SorterThread {
    /// Row groups (time of the first access, rows) with the variables to
    /// leave out from them on.
    to: Option<SyncSender<(u64, DataFrame, Vec<u32>)>>,
    thread: Option<JoinHandle<Result<ByVar, FilterError>>>,
}

impl SorterThread {
    /// Starts a sorter writing into `root`.
    pub(crate) fn start(root: &Path, limits: Limits) -> Result<SorterThread, FilterError> {
        let mut sorter = VarSorter::new(root, limits)?;
        let (to, from) = sync_channel::<(u64, DataFrame, Vec<u32>)>(2);
        let thread = std::thread::Builder::new()
            .name("mapvis-by-var".into())
            .spawn(move || {
                for (t0, df, left_out) in from {
                    sorter.leave_out(&left_out);
                    sorter.push(t0, &df)?;
                }
                sorter.finish()
            })
            .map_err(|source| {
                super::error::thread_not_started("by-variable sorter", root.to_path_buf(), source)
            })?;
        Ok(SorterThread {
            to: Some(to),
            thread: Some(thread),
        })
    }

    /// Hands one row group over (`t0`: the time of its first access), and
    /// the variables to leave out from it on ([`sorted_by_var`]).
    pub(crate) fn rows(
        &mut self,
        t0: u64,
        df: DataFrame,
        left_out: Vec<u32>,
    ) -> Result<(), FilterError> {
        let sent = self
            .to
            .as_ref()
            .is_some_and(|t| t.send((t0, df, left_out)).is_ok());
        if sent {
            return Ok(());
        }
        // The thread stopped: its error says why.
        self.finish()?;
        Err(FilterError::Write {
            path: PathBuf::from("(by-variable dataset)"),
            source: std::io::Error::other("the by-variable writer stopped"),
        })
    }

    /// Waits for the sorter to write everything and returns the index.
    pub(crate) fn finish(&mut self) -> Result<ByVar, FilterError> {
        self.to = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(end) => {
                super::error::joined(end, "by-variable writer", "(by-variable dataset)".as_ref())
            }
            None => Err(FilterError::Write {
                path: PathBuf::from("(by-variable dataset)"),
                source: std::io::Error::other("the by-variable writer was already finished"),
            }),
        }
    }
}

impl Drop for SorterThread {
    fn drop(&mut self) {
        self.to = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::model::owned;

    /// A row group of the access list: accesses `t0..t0 + vars.len()` of
    /// the variables `vars`, with addresses and lines derived from time.
    fn frame(t0: u64, vars: &[u32]) -> DataFrame {
        let n = vars.len() as u64;
        let t = |k: u64| t0 + k;
        DataFrame::new(vec![
            owned::<UInt8Type>(
                ac::OP,
                (0..n).map(|k| b"LSM"[(t(k) % 3) as usize]).collect(),
            ),
            owned::<UInt64Type>(ac::ADDR, (0..n).map(|k| 0x1000 + 8 * t(k)).collect()),
            owned::<UInt16Type>(ac::SIZE, (0..n).map(|k| 1 + (t(k) % 8) as u16).collect()),
            owned::<UInt16Type>(ac::TID, vec![1; n as usize]),
            owned::<UInt32Type>(ac::VAR, vars.to_vec()),
            owned::<UInt32Type>(ac::LINE, (0..n).map(|k| (t(k) % 5) as u32).collect()),
        ])
        .unwrap()
    }

    /// The variables of accesses 0..n: variable 0 every other access (a
    /// big array), the rest spread over 1..=spread (small variables).
    fn vars_of(n: u64, spread: u32) -> Vec<u32> {
        (0..n)
            .map(|t| {
                if t % 2 == 0 {
                    0
                } else {
                    1 + (t / 2 % spread as u64) as u32
                }
            })
            .collect()
    }

    /// (time, var, addr) of what `for_each` gives for `keep`.
    fn read(bv: &ByVar, keep: &[bool]) -> Vec<(u64, u32, u64)> {
        let mut out = Vec::new();
        bv.for_each(keep, &mut |df| {
            let mut f = Columns::default();
            f.read(&df)?;
            out.extend((0..f.len()).map(|k| (f.time[k], f.var[k], f.addr[k])));
            Ok(true)
        })
        .unwrap();
        out
    }

    #[test]
    fn every_selection_reads_back_in_time_order() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            run: 64,
            budget: 256,
            min_run: 16,
            file_rows: 1000,
        };
        let (n, spread) = (6000u64, 300u32);
        let vars = vars_of(n, spread);
        let mut s = VarSorter::new(&dir.path().join("by"), limits).unwrap();
        for (k, chunk) in vars.chunks(500).enumerate() {
            s.push(k as u64 * 500, &frame(k as u64 * 500, chunk))
                .unwrap();
        }
        let bv = s.finish().unwrap();
        // The array's runs are row groups of their own; the 300 small
        // variables never reach min_run before the budget pushes them out
        // together, so they share row groups; files hold 1000 rows at most
        // (a run is never split, so a file may hold fewer).
        let (big, small): (Vec<&Run>, Vec<&Run>) = bv.runs().iter().partition(|r| r.var == 0);
        // A run of its own is full, or pushed out by the budget at
        // min_run or more; a mixed row group takes the array's partial
        // buffer when it is smaller.
        let alone: Vec<&&Run> = big.iter().filter(|r| r.group_rows == r.rows).collect();
        assert!(alone.iter().all(|r| (16..=64).contains(&r.rows)));
        let full = alone.iter().filter(|r| r.rows == 64).count() as u64;
        assert!(full * 64 >= n / 2 / 2, "{full} full runs");
        assert_eq!(big.iter().map(|r| r.rows).sum::<u64>(), n / 2);
        assert!(small.iter().all(|r| r.group_rows > r.rows));
        assert_eq!(small.iter().map(|r| r.rows).sum::<u64>(), n / 2);
        let files = bv.runs().iter().map(|r| r.file).max().unwrap() + 1;
        for f in 0..files {
            let rows: u64 = bv
                .runs()
                .iter()
                .filter(|r| r.file == f)
                .map(|r| r.rows)
                .sum();
            assert!(rows <= 1000, "file {f} holds {rows} rows");
        }
        assert!(files >= 6);
        // One variable, a few, and all, each as the list would give them.
        let want = |keep: &[bool]| -> Vec<(u64, u32, u64)> {
            (0..n)
                .filter(|&t| keep[vars[t as usize] as usize])
                .map(|t| (t, vars[t as usize], 0x1000 + 8 * t))
                .collect()
        };
        let nv = spread as usize + 1;
        for set in [
            vec![0],
            vec![7],
            vec![0, 7],
            vec![3, 150, 299],
            (0..nv).collect(),
        ] {
            let mut keep = vec![false; nv];
            set.iter().for_each(|&v| keep[v] = true);
            assert_eq!(read(&bv, &keep), want(&keep), "variables {set:?}");
        }
        // Saved and loaded through its index: the same runs.
        bv.write_index().unwrap();
        let back = ByVar::load(bv.root()).unwrap().unwrap();
        assert_eq!(back.runs(), bv.runs());
        // The cost of a small variable counts the row groups it shares.
        let mut keep = vec![false; nv];
        keep[7] = true;
        assert!(bv.cost(&keep) > 20);
    }

    #[test]
    fn a_damaged_index_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("by");
        std::fs::write(ByVar::index_path(&root), b"{\"runs\": 3}").unwrap();
        let e = ByVar::load(&root).unwrap_err().to_string();
        assert!(e.contains("by.json"), "{e}");
        assert!(ByVar::load(&dir.path().join("none")).unwrap().is_none());
    }
}
