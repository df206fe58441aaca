//! The access list: every named access in time order, kept as a Parquet
//! dataset on disk and, within a memory budget, in memory too.
//!
//! The dataset is the interface to other tools: DuckDB and Apache Spark
//! read it as it is (`docs/scale.md`). It is partitioned the Hive way, so a
//! query reads only what it needs:
//!
//! ```text
//! accesses/region=1/t0=0/part-0.parquet
//! accesses/region=1/t0=16777216/part-0.parquet
//! accesses/region=2/t0=20123456/part-0.parquet
//! ```
//!
//! One file (a time window) holds at most [`WINDOW`] accesses of one
//! traced region, in row groups of [`ROW_GROUP`] rows. Rows hold `op, addr,
//! size, tid, var, line` (see [`super::schema`]); an access' time is the
//! window's `t0` plus its row number in the file, so it costs no bytes
//! (DuckDB: `t0 + file_row_number`). The occurrence of an access is
//! derived when the accesses are read back in time order
//! (`rows`). PLAIN pages compressed with LZ4 bring a -O0 loop
//! nest to under 1 byte per access (see `DatasetFile` for the choice).
//!
//! Writing runs on its own thread, so Parquet encoding overlaps naming and
//! counting: the analysis hands over a row group at a time, and at most two
//! wait.
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::JoinHandle;

use polars::prelude::*;
use serde::{Deserialize, Serialize};

use super::access::{NamedAccess, VarId};
use super::byvar::{ByVar, Limits, SorterThread, VarSorter};
use super::dataset::{stored_schema, DatasetFile};
pub use super::dataset::{Layout, ROW_GROUP, WINDOW};
use super::error::FilterError;
use super::io::{link_or_copy, mkdir};
use super::model::owned;
use super::schema::access as ac;

/// How much of the access list the analysis keeps in memory, besides the
/// dataset, by default: later reads of those windows skip the disk. The
/// analysis' peak memory does not grow with the trace past this.
pub const DEFAULT_MEMORY_BUDGET: u64 = 256 << 20;
/// Bytes one access takes in memory: op 1, addr 8, size 2, tid 2, var 4,
/// line 4.
const ROW_BYTES: u64 = 21;

/// One file of the dataset: the accesses of one region in one time window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowInfo {
    /// The traced region (1 for the first GL_START).
    pub region: u32,
    /// Time of the window's first access.
    pub t0: u64,
    /// Accesses in the window.
    pub len: u64,
}

impl WindowInfo {
    /// The window's file under the dataset folder `root`.
    pub fn file(&self, root: &Path) -> PathBuf {
        root.join(format!("region={}", self.region))
            .join(format!("t0={}", self.t0))
            .join("part-0.parquet")
    }
}

/// One window and, when it fits the budget, its row groups in memory.
#[derive(Clone)]
struct Window {
    info: WindowInfo,
    mem: Option<Vec<DataFrame>>,
}

/// The access list of an analysis. Cloning it is cheap (the frames in
/// memory are shared).
#[derive(Clone, Default)]
pub struct AccessList {
    /// The dataset folder; `None` when everything is in memory.
    root: Option<PathBuf>,
    /// Rows per row group (of the windows in memory, and per read).
    row_group: usize,
    windows: Vec<Window>,
    len: u64,
    /// The same accesses by variable, when the list is on disk (see
    /// [`super::byvar`]).
    by_var: Option<ByVar>,
}

impl AccessList {
    /// The access list saved in the dataset `root` with these windows.
    pub fn open(root: &Path, windows: &[WindowInfo]) -> AccessList {
        AccessList {
            root: Some(root.to_path_buf()),
            row_group: ROW_GROUP,
            windows: windows
                .iter()
                .map(|&info| Window { info, mem: None })
                .collect(),
            len: windows.iter().map(|w| w.len).sum(),
            by_var: None,
        }
    }

    /// The list with its by-variable dataset.
    pub fn with_by_var(mut self, by_var: Option<ByVar>) -> AccessList {
        self.by_var = by_var;
        self
    }

    /// The by-variable dataset, when there is one.
    pub fn by_var(&self) -> Option<&ByVar> {
        self.by_var.as_ref()
    }

    /// Whether [`AccessList::for_each`] reads the accesses of the
    /// variables `keep` holds from the by-variable dataset: when the list
    /// is not all in memory and that decodes at most half the rows a pass
    /// over the list would.
    pub fn reads_by_var(&self, keep: &[bool]) -> bool {
        let Some(bv) = &self.by_var else {
            return false;
        };
        let in_memory = self.windows.iter().all(|w| w.mem.is_some());
        !in_memory && bv.cost(keep).saturating_mul(2) <= self.len
    }

    /// Number of accesses.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether there are no accesses.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The dataset's windows, in time order.
    pub fn windows(&self) -> Vec<WindowInfo> {
        self.windows.iter().map(|w| w.info).collect()
    }

    /// The dataset folder, if the list is on disk.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// The dataset moved to `root` (the analysis folder was renamed), and
    /// the by-variable dataset beside it.
    pub fn relocate(&mut self, root: &Path) {
        if self.root.is_some() {
            self.root = Some(root.to_path_buf());
        }
        if let Some(bv) = &mut self.by_var {
            bv.relocate(&super::byvar::folder_for(root));
        }
    }

    /// Visits the accesses of the variables `keep` holds (every access when
    /// `None`), in time order, as frames of at most one row group:
    /// `time` (UInt64) and the stored columns. `f` returns false to stop.
    ///
    /// Cost: one pass; windows not in memory are read from disk one row
    /// group at a time, so memory stays at a few row groups. A few
    /// variables' accesses are read from the by-variable dataset instead
    /// when that pays ([`AccessList::reads_by_var`]): the same frames'
    /// rows, cut differently.
    pub fn for_each(
        &self,
        keep: Option<&[bool]>,
        f: &mut dyn FnMut(DataFrame) -> Result<bool, FilterError>,
    ) -> Result<(), FilterError> {
        if let (Some(keep), Some(bv)) = (keep, &self.by_var) {
            if self.reads_by_var(keep) {
                return bv.for_each(keep, f);
            }
        }
        for w in &self.windows {
            let mut offset = 0u64;
            while offset < w.info.len {
                let rows = self.row_group(w, offset)?;
                let n = rows.height() as u64;
                if n == 0 {
                    return Err(self.damaged(w, "it holds fewer rows than recorded"));
                }
                let time = (w.info.t0 + offset..w.info.t0 + offset + n).collect::<Vec<u64>>();
                let mut df = rows;
                df.insert_column(0, owned::<UInt64Type>(ac::TIME, time))?;
                if let Some(keep) = keep {
                    df = filter_vars(&df, keep)?;
                }
                offset += n;
                if df.height() > 0 && !f(df)? {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// The rows of window `w` from `offset`: one row group.
    fn row_group(&self, w: &Window, offset: u64) -> Result<DataFrame, FilterError> {
        if let Some(groups) = &w.mem {
            let k = (offset / self.row_group.max(1) as u64) as usize;
            return groups
                .get(k)
                .cloned()
                .ok_or_else(|| self.damaged(w, "a row group is missing"));
        }
        let Some(root) = &self.root else {
            return Err(self.damaged(w, "the access list has no folder"));
        };
        let slice = (offset as usize, self.row_group.max(1));
        super::io::read_saved_parquet(&w.info.file(root), Some(slice))
    }

    fn damaged(&self, w: &Window, why: &str) -> FilterError {
        let path = match &self.root {
            Some(r) => w.info.file(r),
            None => PathBuf::from("(memory)"),
        };
        FilterError::Saved {
            path,
            reason: why.into(),
        }
    }

    /// Writes the by-variable dataset beside the dataset folder `root`
    /// (hard-linked when there is one, else sorted from a pass over the
    /// list) and takes it as the list's.
    pub fn write_by_var_to(&mut self, root: &Path) -> Result<(), FilterError> {
        let dest = super::byvar::folder_for(root);
        let bv = match &self.by_var {
            Some(bv) => bv.link_to(&dest)?,
            None => {
                let mut sorter = VarSorter::new(&dest, Limits::of(Layout::DEFAULT))?;
                self.for_each(None, &mut |mut df| {
                    let t0 = df.column(ac::TIME)?.u64()?.get(0).unwrap_or(0);
                    df.drop_in_place(ac::TIME)?;
                    sorter.push(t0, &df)?;
                    Ok(true)
                })?;
                sorter.finish()?
            }
        };
        self.by_var = Some(bv);
        Ok(())
    }

    /// Writes the windows into the dataset folder `root` (for a list kept
    /// only in memory, or one saved elsewhere: files already on disk are
    /// hard-linked, or copied across file systems).
    pub fn write_to(&self, root: &Path) -> Result<(), FilterError> {
        for w in &self.windows {
            let dest = w.info.file(root);
            mkdir_for(&dest)?;
            match (&w.mem, &self.root) {
                (_, Some(src)) if w.info.file(src).is_file() => {
                    link_or_copy(&w.info.file(src), &dest)?;
                }
                (Some(groups), _) => {
                    let mut disk = DiskWriter::start()?;
                    disk.open(dest)?;
                    for g in groups {
                        disk.rows(g.clone())?;
                    }
                    disk.finish()?;
                }
                (None, _) => return Err(self.damaged(w, "its file is missing")),
            }
        }
        Ok(())
    }
}

/// The rows of `df` whose variable `keep` holds.
fn filter_vars(df: &DataFrame, keep: &[bool]) -> PolarsResult<DataFrame> {
    let var = df.column(ac::VAR)?.u32()?;
    let mask: BooleanChunked = var
        .into_iter()
        .map(|v| v.is_some_and(|v| keep.get(v as usize).copied().unwrap_or(false)))
        .collect();
    df.filter(&mask)
}

/// Creates the folder a file goes into.
fn mkdir_for(path: &Path) -> Result<(), FilterError> {
    mkdir(path.parent().unwrap_or(Path::new(".")))
}

/// The columns of one row group while it fills.
#[derive(Default)]
struct Columns {
    op: Vec<u8>,
    addr: Vec<u64>,
    size: Vec<u16>,
    tid: Vec<u16>,
    var: Vec<u32>,
    line: Vec<u32>,
}

impl Columns {
    /// Appends `batch`, a column at a time (the copies vectorise; one
    /// capacity check per column, not per access).
    fn extend(&mut self, batch: &[NamedAccess]) {
        self.op.extend(batch.iter().map(|a| a.op));
        self.addr.extend(batch.iter().map(|a| a.addr));
        self.size
            .extend(batch.iter().map(|a| a.size.min(u16::MAX as u32) as u16));
        self.tid
            .extend(batch.iter().map(|a| a.tid.min(u16::MAX as u32) as u16));
        self.var.extend(batch.iter().map(|a| a.var.0));
        self.line.extend(batch.iter().map(|a| a.line.0));
    }

    fn len(&self) -> usize {
        self.op.len()
    }

    /// Empty columns with room for a row group of `rows`.
    fn with_room(rows: usize) -> Columns {
        Columns {
            op: Vec::with_capacity(rows),
            addr: Vec::with_capacity(rows),
            size: Vec::with_capacity(rows),
            tid: Vec::with_capacity(rows),
            var: Vec::with_capacity(rows),
            line: Vec::with_capacity(rows),
        }
    }

    /// The rows as a frame, leaving empty columns with room for the next
    /// row group (growing them access by access would copy them).
    fn take(&mut self) -> PolarsResult<DataFrame> {
        let rows = self.op.capacity();
        let c = std::mem::replace(self, Columns::with_room(rows));
        DataFrame::new(vec![
            owned::<UInt8Type>(ac::OP, c.op),
            owned::<UInt64Type>(ac::ADDR, c.addr),
            owned::<UInt16Type>(ac::SIZE, c.size),
            owned::<UInt16Type>(ac::TID, c.tid),
            owned::<UInt32Type>(ac::VAR, c.var),
            owned::<UInt32Type>(ac::LINE, c.line),
        ])
    }
}

/// Builds the access list as the named accesses stream past.
pub struct AccessWriter {
    root: Option<PathBuf>,
    layout: Layout,
    budget: u64,
    kept: u64,
    cols: Columns,
    windows: Vec<Window>,
    len: u64,
    disk: Option<DiskWriter>,
    /// Sorts the row groups into the by-variable dataset.
    by_var: Option<SorterThread>,
    /// Variables to leave out of the by-variable dataset, told the sorter
    /// with the next row group (as the by-variable index keeps them, bare
    /// `u32`).
    left_out: Vec<u32>,
}

impl AccessWriter {
    /// A writer into the dataset folder `root` (created), keeping up to
    /// `budget` bytes of the list in memory; with no `root`, everything
    /// stays in memory.
    pub fn new(
        root: Option<&Path>,
        budget: u64,
        layout: Layout,
    ) -> Result<AccessWriter, FilterError> {
        let (disk, by_var) = match root {
            Some(r) => {
                mkdir(r)?;
                let sorter = SorterThread::start(&super::byvar::folder_for(r), Limits::of(layout))?;
                (Some(DiskWriter::start()?), Some(sorter))
            }
            None => (None, None),
        };
        Ok(AccessWriter {
            root: root.map(Path::to_path_buf),
            layout,
            budget,
            kept: 0,
            cols: Columns::with_room(layout.row_group),
            windows: Vec::new(),
            len: 0,
            disk,
            by_var,
            left_out: Vec::new(),
        })
    }

    /// Leaves variable `var`'s accesses out of the by-variable dataset (a
    /// scalar, see [`super::byvar::sorted_by_var`]); called before any of
    /// its accesses is pushed.
    pub fn leave_out_of_by_var(&mut self, var: VarId) {
        if self.by_var.is_some() {
            self.left_out.push(var.0);
        }
    }

    /// Appends a batch of accesses of `region`, in time order.
    pub fn push(&mut self, mut batch: &[NamedAccess], region: u32) -> Result<(), FilterError> {
        while let Some(first) = batch.first() {
            let room = match self.windows.last() {
                Some(w) if w.info.region == region => {
                    self.layout.window - w.info.len - self.cols.len() as u64
                }
                _ => 0,
            };
            if room == 0 {
                self.new_window(region, first.time)?;
                continue;
            }
            // As many as fit the window and the row group, in one run.
            let group_room = self.layout.row_group - self.cols.len();
            let n = batch.len().min(group_room).min(room as usize);
            self.cols.extend(&batch[..n]);
            batch = &batch[n..];
            if self.cols.len() == self.layout.row_group {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Ends the current window and starts one at `t0`.
    fn new_window(&mut self, region: u32, t0: u64) -> Result<(), FilterError> {
        self.flush()?;
        let info = WindowInfo { region, t0, len: 0 };
        if let (Some(disk), Some(root)) = (&mut self.disk, &self.root) {
            let path = info.file(root);
            mkdir_for(&path)?;
            disk.open(path)?;
        }
        self.windows.push(Window {
            info,
            mem: Some(Vec::new()),
        });
        Ok(())
    }

    /// Hands the filled row group to the disk and keeps it in memory while
    /// the budget allows (always, with no disk).
    fn flush(&mut self) -> Result<(), FilterError> {
        let n = self.cols.len() as u64;
        if n == 0 {
            return Ok(());
        }
        let df = self.cols.take()?;
        if let Some(disk) = &mut self.disk {
            disk.rows(df.clone())?;
        }
        let on_disk = self.disk.is_some();
        let w = self.windows.last_mut().expect("a window is open");
        if let Some(s) = &mut self.by_var {
            s.rows(
                w.info.t0 + w.info.len,
                df.clone(),
                std::mem::take(&mut self.left_out),
            )?;
        }
        w.info.len += n;
        self.len += n;
        let bytes = n * ROW_BYTES;
        if let Some(groups) = &mut w.mem {
            if !on_disk || self.kept + bytes <= self.budget {
                groups.push(df);
                self.kept += bytes;
            } else {
                // A window is kept whole or not at all.
                let held: u64 = groups.iter().map(|g| g.height() as u64).sum();
                self.kept -= held * ROW_BYTES;
                w.mem = None;
            }
        }
        Ok(())
    }

    /// Writes what is left and returns the access list.
    pub fn finish(mut self) -> Result<AccessList, FilterError> {
        self.flush()?;
        if let Some(disk) = self.disk.take() {
            disk.finish()?;
        }
        let by_var = match &mut self.by_var {
            Some(s) => Some(s.finish()?),
            None => None,
        };
        Ok(AccessList {
            root: self.root,
            row_group: self.layout.row_group,
            windows: self.windows,
            len: self.len,
            by_var,
        })
    }
}

/// What the disk thread is told.
enum ToDisk {
    /// Close the current file, start this one.
    Open(PathBuf),
    /// One row group of the current file.
    Rows(DataFrame),
}

/// The thread that encodes and writes the dataset's files.
struct DiskWriter {
    to: Option<SyncSender<ToDisk>>,
    thread: Option<JoinHandle<Result<(), FilterError>>>,
}

impl DiskWriter {
    fn start() -> Result<DiskWriter, FilterError> {
        let (to, from) = sync_channel::<ToDisk>(2);
        let thread = std::thread::Builder::new()
            .name("mapvis-dataset".into())
            .spawn(move || write_files(from))
            .map_err(|source| {
                super::error::thread_not_started(
                    "dataset writer",
                    PathBuf::from("(dataset writer thread)"),
                    source,
                )
            })?;
        Ok(DiskWriter {
            to: Some(to),
            thread: Some(thread),
        })
    }

    fn open(&mut self, path: PathBuf) -> Result<(), FilterError> {
        self.send(ToDisk::Open(path))
    }

    fn rows(&mut self, df: DataFrame) -> Result<(), FilterError> {
        self.send(ToDisk::Rows(df))
    }

    /// Sends, or returns the thread's error when it has stopped.
    fn send(&mut self, m: ToDisk) -> Result<(), FilterError> {
        let sent = self.to.as_ref().map(|t| t.send(m).is_ok()).unwrap_or(false);
        if sent {
            Ok(())
        } else {
            self.join().and(Err(FilterError::Write {
                path: PathBuf::from("(dataset)"),
                source: std::io::Error::other("the dataset writer stopped"),
            }))
        }
    }

    fn join(&mut self) -> Result<(), FilterError> {
        self.to = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(end) => super::error::joined(end, "dataset writer", "(dataset)".as_ref()),
            None => Ok(()),
        }
    }

    fn finish(mut self) -> Result<(), FilterError> {
        self.join()
    }
}

impl Drop for DiskWriter {
    fn drop(&mut self) {
        let _ = self.join();
    }
}

/// The disk thread: one Parquet file after another.
fn write_files(from: std::sync::mpsc::Receiver<ToDisk>) -> Result<(), FilterError> {
    let mut current: Option<DatasetFile> = None;
    for m in from {
        match m {
            ToDisk::Open(path) => {
                if let Some(f) = current.take() {
                    f.finish()?;
                }
                current = Some(DatasetFile::create_bare(path, &stored_schema())?);
            }
            ToDisk::Rows(df) => {
                if let Some(f) = &mut current {
                    f.write(&df)?;
                }
            }
        }
    }
    current.map_or(Ok(()), DatasetFile::finish)
}
