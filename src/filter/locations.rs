//! The lookup table of unique locations as an analysis keeps it: a Parquet
//! file read a batch at a time, never whole, beside the totals of each
//! variable's locations gathered while the file was written.
//!
//! A program that touches gigabytes has hundreds of millions of unique
//! locations: at about 60 bytes a row in memory the table alone would
//! outgrow any memory limit. So the table lives in `locations.parquet`,
//! sorted by address then variable, and every reader makes a pass over it
//! in batches of [`BATCH_ROWS`] ([`Locations::for_each_batch`]) or reads
//! the rows of one address range ([`Locations::in_range`], which the
//! row groups' min/max statistics keep to the groups that hold it). What
//! the statistics need per variable (its locations, accesses, bytes,
//! lowest and highest address, busiest location) is summed once, when the
//! table is written ([`LocTotals`], saved in `location_totals.parquet`).
//!
//! An analysis built in memory (tests, and `Keep::MEMORY` of the driver)
//! keeps the table as a frame; readers do not see the difference.
use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::dataset::DatasetFile;
use super::error::FilterError;
use super::io::{link_or_copy, read_saved_parquet};
use super::schema::location as lc;

/// The lookup table's file in an analysis folder.
pub const FILE: &str = "locations.parquet";
/// The per-variable totals' file in an analysis folder.
pub const TOTALS_FILE: &str = "location_totals.parquet";
/// Rows per row group written, and per batch read back: about 60 MB of
/// columns with their member paths.
pub const BATCH_ROWS: usize = 1 << 20;

/// One location's counts: a row of the lookup table without its member
/// path. Counts are 64-bit: one location may be touched more than 2^32
/// times.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LocRow {
    pub(crate) addr: u64,
    pub(crate) var: u32,
    pub(crate) loads: u64,
    pub(crate) stores: u64,
    pub(crate) modifies: u64,
    pub(crate) load_bytes: u64,
    pub(crate) store_bytes: u64,
}

impl LocRow {
    /// Adds the counts of `o` (the same location, counted apart).
    pub(crate) fn merge(&mut self, o: &LocRow) {
        self.loads += o.loads;
        self.stores += o.stores;
        self.modifies += o.modifies;
        self.load_bytes += o.load_bytes;
        self.store_bytes += o.store_bytes;
    }

    /// Accesses of every kind.
    pub(crate) fn accesses(&self) -> u64 {
        self.loads + self.stores + self.modifies
    }
}

/// What one variable's locations add up to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LocTotals {
    /// Unique locations (addresses) of the variable.
    pub locations: u64,
    /// Accesses, and by operation.
    pub accesses: u64,
    /// Loads.
    pub loads: u64,
    /// Stores.
    pub stores: u64,
    /// Modifies.
    pub modifies: u64,
    /// Bytes read (loads and modifies).
    pub load_bytes: u64,
    /// Bytes written (stores and modifies).
    pub store_bytes: u64,
    /// Lowest and highest location address (meaningful when `locations`
    /// is not 0).
    pub lowest: u64,
    /// See `lowest`.
    pub highest: u64,
    /// Accesses to its busiest location: the highest occurrence.
    pub most: u64,
}

impl LocTotals {
    /// The counts a table's row sums, in the lookup table's column order:
    /// accesses, loads, stores, modifies, load bytes, store bytes.
    pub fn counts(&self) -> [u64; 6] {
        [
            self.accesses,
            self.loads,
            self.stores,
            self.modifies,
            self.load_bytes,
            self.store_bytes,
        ]
    }

    /// Counts one location in.
    fn add(&mut self, r: &LocRow) {
        if self.locations == 0 {
            self.lowest = r.addr;
        }
        self.locations += 1;
        self.lowest = self.lowest.min(r.addr);
        self.highest = self.highest.max(r.addr);
        self.accesses += r.accesses();
        self.loads += r.loads;
        self.stores += r.stores;
        self.modifies += r.modifies;
        self.load_bytes += r.load_bytes;
        self.store_bytes += r.store_bytes;
        self.most = self.most.max(r.accesses());
    }
}

/// Where the table's rows are.
#[derive(Clone)]
enum Place {
    /// In memory (an analysis built without files, or a hand-made one).
    Memory(DataFrame),
    /// In a Parquet file of the lookup table's columns.
    File(PathBuf),
}

/// The lookup table of an analysis (columns: the schema module's
/// `location`), sorted by address then variable. Cloning it is cheap.
#[derive(Clone)]
pub struct Locations {
    rows: u64,
    place: Place,
    totals: Vec<LocTotals>,
}

impl Locations {
    /// The table held by the frame `df` (sorted by address then variable),
    /// its totals summed in one pass. For analyses built in memory.
    ///
    /// # Errors
    /// `df` lacks a column of the lookup table.
    pub fn from_frame(df: DataFrame) -> PolarsResult<Locations> {
        let mut totals = Vec::new();
        for_rows(&df, &mut |r| {
            let v = r.var as usize;
            if v >= totals.len() {
                totals.resize(v + 1, LocTotals::default());
            }
            totals[v].add(r);
        })?;
        Ok(Locations {
            rows: df.height() as u64,
            place: Place::Memory(df),
            totals,
        })
    }

    /// The table saved in the analysis folder `dir`, with its totals; its
    /// rows stay in the file. Cost: the file's footer and the totals.
    ///
    /// # Errors
    /// A file is missing, unreadable or lacks a column
    /// ([`FilterError::Saved`], naming it).
    pub fn open(dir: &Path) -> Result<Locations, FilterError> {
        let path = dir.join(FILE);
        let head = read_saved_parquet(&path, Some((0, 0)))?;
        check_columns(
            &path,
            &head,
            &[lc::ADDR, lc::VAR, lc::ACCESSES, lc::ELEMENT],
        )?;
        let rows = parquet_rows(&path)?;
        let totals = read_totals(&dir.join(TOTALS_FILE))?;
        Ok(Locations {
            rows,
            place: Place::File(path),
            totals,
        })
    }

    /// Unique locations in the table.
    pub fn len(&self) -> u64 {
        self.rows
    }

    /// Whether the table has no row.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The totals of variable row `v` (zeros for a variable never
    /// accessed).
    pub fn totals(&self, v: usize) -> LocTotals {
        self.totals.get(v).copied().unwrap_or_default()
    }

    /// Calls `f` with each batch of rows (at most [`BATCH_ROWS`], every
    /// column), in address order, until it says to stop (false). Memory:
    /// one batch. Stops at the first error, and with
    /// [`FilterError::Interrupted`] when Ctrl-C was pressed.
    ///
    /// # Errors
    /// The file cannot be read, or `f` failed.
    pub fn for_each_batch(
        &self,
        f: &mut dyn FnMut(&DataFrame) -> Result<bool, FilterError>,
    ) -> Result<(), FilterError> {
        let mut first = 0u64;
        while first < self.rows {
            if crate::cancel::requested() {
                return Err(FilterError::Interrupted);
            }
            let n = BATCH_ROWS.min((self.rows - first) as usize);
            let batch = match &self.place {
                Place::Memory(df) => df.slice(first as i64, n),
                Place::File(p) => read_saved_parquet(p, Some((first as usize, n)))?,
            };
            if !f(&batch)? {
                break;
            }
            first += n as u64;
        }
        Ok(())
    }

    /// The rows whose address is in `lo..hi`, in address order. Cost: the
    /// row groups whose address range meets it.
    ///
    /// # Errors
    /// The file cannot be read.
    pub fn in_range(&self, lo: u64, hi: u64) -> Result<DataFrame, FilterError> {
        let inside = col(lc::ADDR).gt_eq(lit(lo)).and(col(lc::ADDR).lt(lit(hi)));
        let lf = match &self.place {
            Place::Memory(df) => df.clone().lazy(),
            Place::File(p) => {
                let saved = |e: PolarsError| FilterError::Saved {
                    path: p.clone(),
                    reason: e.to_string(),
                };
                let path = PlPath::new(&p.to_string_lossy());
                LazyFrame::scan_parquet(path, ScanArgsParquet::default()).map_err(saved)?
            }
        };
        Ok(lf.filter(inside).collect()?)
    }

    /// The whole table as one frame. Memory: every row (about 100 bytes
    /// each): for tests and small tables only; the commands read it with
    /// [`Locations::for_each_batch`].
    ///
    /// # Errors
    /// The file cannot be read.
    pub fn frame(&self) -> Result<DataFrame, FilterError> {
        match &self.place {
            Place::Memory(df) => Ok(df.clone()),
            Place::File(p) => read_saved_parquet(p, None),
        }
    }

    /// Writes the table and its totals into the analysis folder `dir`
    /// (hard-linking a file the analysis wrote elsewhere), unless they are
    /// there already.
    ///
    /// # Errors
    /// A file cannot be written.
    pub(crate) fn write_into(&self, dir: &Path) -> Result<(), FilterError> {
        let path = dir.join(FILE);
        match &self.place {
            Place::File(p) if *p == path => {}
            Place::File(p) => link_or_copy(p, &path)?,
            Place::Memory(df) => {
                let mut f = DatasetFile::create_with(path, df.schema(), &ENCODINGS, &STATISTICS)?;
                for k in (0..df.height()).step_by(BATCH_ROWS) {
                    f.write(&df.slice(k as i64, BATCH_ROWS))?;
                }
                f.finish()?;
            }
        }
        write_totals(&self.totals, &dir.join(TOTALS_FILE))
    }

    /// Says that the table's file is now in the analysis folder `dir` (it
    /// was moved there with its folder).
    pub(crate) fn relocate(&mut self, dir: &Path) {
        if let Place::File(p) = &mut self.place {
            *p = dir.join(FILE);
        }
    }
}

/// The lookup table's columns in order, for writing.
fn table_schema() -> Schema {
    let u64s = [
        lc::ACCESSES,
        lc::LOADS,
        lc::STORES,
        lc::MODIFIES,
        lc::LOAD_BYTES,
        lc::STORE_BYTES,
    ];
    let mut s = Schema::from_iter([
        Field::new(lc::ADDR.into(), DataType::UInt64),
        Field::new(lc::VAR.into(), DataType::UInt32),
    ]);
    for c in u64s {
        s.with_column(c.into(), DataType::UInt64);
    }
    s.with_column(lc::ELEMENT.into(), DataType::String);
    s
}

/// Calls `f` with each row of `df` (the lookup table's columns).
fn for_rows(df: &DataFrame, f: &mut dyn FnMut(&LocRow)) -> PolarsResult<()> {
    let u = |c: &str| -> PolarsResult<Vec<u64>> {
        Ok(df.column(c)?.u64()?.into_no_null_iter().collect())
    };
    let (addr, loads, stores, modifies) = (
        u(lc::ADDR)?,
        u(lc::LOADS)?,
        u(lc::STORES)?,
        u(lc::MODIFIES)?,
    );
    let (lb, sb) = (u(lc::LOAD_BYTES)?, u(lc::STORE_BYTES)?);
    let var = df.column(lc::VAR)?.u32()?;
    for (i, v) in var.into_no_null_iter().enumerate() {
        f(&LocRow {
            addr: addr[i],
            var: v,
            loads: loads[i],
            stores: stores[i],
            modifies: modifies[i],
            load_bytes: lb[i],
            store_bytes: sb[i],
        });
    }
    Ok(())
}

/// Refuses a saved table that lacks one of `columns`, naming the file.
fn check_columns(path: &Path, df: &DataFrame, columns: &[&str]) -> Result<(), FilterError> {
    match columns.iter().find(|c| df.column(c).is_err()) {
        None => Ok(()),
        Some(missing) => Err(FilterError::Saved {
            path: path.to_path_buf(),
            reason: format!(
                "it has no column \"{missing}\", so it is not the table mapvis saved there: it was replaced, or written by another program or version"
            ),
        }),
    }
}

/// The rows of the Parquet file at `path`, from its footer.
fn parquet_rows(path: &Path) -> Result<u64, FilterError> {
    let saved = |reason: String| FilterError::Saved {
        path: path.to_path_buf(),
        reason,
    };
    let f = std::fs::File::open(path).map_err(|e| saved(e.to_string()))?;
    let mut r = ParquetReader::new(f);
    r.num_rows()
        .map(|n| n as u64)
        .map_err(|e| saved(e.to_string()))
}

/// The totals' columns, in [`LocTotals`]' field order after `var`.
const TOTAL_COLUMNS: [&str; 10] = [
    "locations",
    lc::ACCESSES,
    lc::LOADS,
    lc::STORES,
    lc::MODIFIES,
    lc::LOAD_BYTES,
    lc::STORE_BYTES,
    "lowest",
    "highest",
    "most",
];

/// The fields of `t`, in [`TOTAL_COLUMNS`]' order.
fn total_fields(t: &LocTotals) -> [u64; 10] {
    let c = t.counts();
    [
        t.locations,
        c[0],
        c[1],
        c[2],
        c[3],
        c[4],
        c[5],
        t.lowest,
        t.highest,
        t.most,
    ]
}

/// Writes the totals (one row per variable row, `var` first).
fn write_totals(totals: &[LocTotals], path: &Path) -> Result<(), FilterError> {
    let mut columns = vec![Column::new(
        "var".into(),
        (0..totals.len() as u32).collect::<Vec<u32>>(),
    )];
    for (k, name) in TOTAL_COLUMNS.iter().enumerate() {
        let values: Vec<u64> = totals.iter().map(|t| total_fields(t)[k]).collect();
        columns.push(Column::new((*name).into(), values));
    }
    let df = DataFrame::new(columns)?;
    super::dataset::write_plain(&df, path)
}

/// Reads the totals [`write_totals`] wrote.
fn read_totals(path: &Path) -> Result<Vec<LocTotals>, FilterError> {
    let df = read_saved_parquet(path, None)?;
    check_columns(path, &df, &TOTAL_COLUMNS)?;
    let mut cols = Vec::with_capacity(TOTAL_COLUMNS.len());
    for c in TOTAL_COLUMNS {
        cols.push(
            df.column(c)?
                .u64()?
                .into_no_null_iter()
                .collect::<Vec<u64>>(),
        );
    }
    Ok((0..df.height())
        .map(|i| LocTotals {
            locations: cols[0][i],
            accesses: cols[1][i],
            loads: cols[2][i],
            stores: cols[3][i],
            modifies: cols[4][i],
            load_bytes: cols[5][i],
            store_bytes: cols[6][i],
            lowest: cols[7][i],
            highest: cols[8][i],
            most: cols[9][i],
        })
        .collect())
}

/// The lookup table while it is written, a row at a time in address
/// order: rows gather in columns and leave as a row group (or a frame) of
/// [`BATCH_ROWS`], and each variable's totals are summed on the way.
/// A file's row groups are encoded and written on a thread of their own
/// (`mapvis-locations`), so that the caller's merge and member paths run
/// beside the encoding instead of before it. Memory: three batches of
/// rows at most (one gathering, one waiting, one being written).
pub(crate) struct LocationSink {
    out: Out,
    batch: Batch,
    totals: Vec<LocTotals>,
    written: u64,
}

/// Where a [`LocationSink`]'s batches go.
enum Out {
    /// Kept as frames.
    Memory(Vec<DataFrame>),
    /// Written to `path` by `thread`, fed through `to`.
    File {
        path: PathBuf,
        to: Option<std::sync::mpsc::SyncSender<Batch>>,
        thread: Option<std::thread::JoinHandle<Result<(), FilterError>>>,
    },
}

/// The table's columns' encodings, in its order: the address, which steps
/// by an element's size from row to row, DELTA_BINARY_PACKED (a few bits a
/// row, where LZ4 barely shrank its PLAIN bytes: the 8 M locations of a
/// 2000 x 2000 transpose took 34 MB, now 1.8 MB); the counts and member
/// paths PLAIN, which LZ4 shrinks well.
const ENCODINGS: [polars_parquet::write::Encoding; 9] = {
    use polars_parquet::write::Encoding::{DeltaBinaryPacked as Delta, Plain};
    [
        Delta, Plain, Plain, Plain, Plain, Plain, Plain, Plain, Plain,
    ]
};

/// Which of the table's columns get min/max statistics: the address, by
/// which [`Locations::in_range`] skips row groups.
const STATISTICS: [bool; 9] = [true, false, false, false, false, false, false, false, false];

/// One batch of rows, gathered column by column as the table's columns
/// are, with their member paths.
///
/// Why columns and not rows: the columns become the frame's without a
/// copy (the vectors move into it), where gathering each column out of
/// a million 56-byte rows read the rows from memory once per column, a
/// third of the writer thread's time. Each column is made with room for
/// the whole batch, so that it never grows by copies.
struct Batch {
    addr: Vec<u64>,
    var: Vec<u32>,
    accesses: Vec<u64>,
    loads: Vec<u64>,
    stores: Vec<u64>,
    modifies: Vec<u64>,
    load_bytes: Vec<u64>,
    store_bytes: Vec<u64>,
    /// The member paths, begun at the first that is not empty (rows
    /// before it have none): a batch of plain arrays' locations, the
    /// most common, makes its column at once instead of a string a row.
    elements: Vec<String>,
}

impl Batch {
    /// An empty batch with room for `rows` rows.
    fn with_capacity(rows: usize) -> Batch {
        Batch {
            addr: Vec::with_capacity(rows),
            var: Vec::with_capacity(rows),
            accesses: Vec::with_capacity(rows),
            loads: Vec::with_capacity(rows),
            stores: Vec::with_capacity(rows),
            modifies: Vec::with_capacity(rows),
            load_bytes: Vec::with_capacity(rows),
            store_bytes: Vec::with_capacity(rows),
            elements: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.addr.len()
    }

    #[inline]
    fn push(&mut self, r: &LocRow, element: String) {
        self.addr.push(r.addr);
        self.var.push(r.var);
        self.accesses.push(r.accesses());
        self.loads.push(r.loads);
        self.stores.push(r.stores);
        self.modifies.push(r.modifies);
        self.load_bytes.push(r.load_bytes);
        self.store_bytes.push(r.store_bytes);
        if !self.elements.is_empty() || !element.is_empty() {
            if self.elements.is_empty() {
                self.elements.reserve(self.addr.capacity());
                self.elements.resize(self.addr.len() - 1, String::new());
            }
            self.elements.push(element);
        }
    }

    /// The batch as a frame of the table's columns.
    fn into_frame(self) -> PolarsResult<DataFrame> {
        let n = self.addr.len();
        let elements = match self.elements.is_empty() {
            true => StringChunked::full(lc::ELEMENT.into(), "", n).into_column(),
            false => Column::new(lc::ELEMENT.into(), self.elements),
        };
        DataFrame::new(vec![
            Column::new(lc::ADDR.into(), self.addr),
            Column::new(lc::VAR.into(), self.var),
            Column::new(lc::ACCESSES.into(), self.accesses),
            Column::new(lc::LOADS.into(), self.loads),
            Column::new(lc::STORES.into(), self.stores),
            Column::new(lc::MODIFIES.into(), self.modifies),
            Column::new(lc::LOAD_BYTES.into(), self.load_bytes),
            Column::new(lc::STORE_BYTES.into(), self.store_bytes),
            elements,
        ])
    }
}

impl LocationSink {
    /// A sink writing `path` (the analysis folder's [`FILE`]), or keeping
    /// the table in memory when `path` is `None`.
    ///
    /// # Errors
    /// The file cannot be created, or its thread not started.
    pub(crate) fn new(path: Option<PathBuf>) -> Result<LocationSink, FilterError> {
        let out = match path {
            Some(p) => {
                let file =
                    DatasetFile::create_with(p.clone(), &table_schema(), &ENCODINGS, &STATISTICS)?;
                let (to, from) = std::sync::mpsc::sync_channel::<Batch>(1);
                let thread = std::thread::Builder::new()
                    .name("mapvis-locations".into())
                    .spawn(move || write_batches(file, from))
                    .map_err(|source| FilterError::Write {
                        path: p.clone(),
                        source,
                    })?;
                Out::File {
                    path: p,
                    to: Some(to),
                    thread: Some(thread),
                }
            }
            None => Out::Memory(Vec::new()),
        };
        Ok(LocationSink {
            out,
            batch: Batch::with_capacity(BATCH_ROWS.min(1 << 16)),
            totals: Vec::new(),
            written: 0,
        })
    }

    /// Adds the next row (addresses ascending, then variables) with its
    /// member path (empty for none).
    ///
    /// # Errors
    /// A full row group could not be written.
    pub(crate) fn push(&mut self, r: LocRow, element: String) -> Result<(), FilterError> {
        let v = r.var as usize;
        if v >= self.totals.len() {
            self.totals.resize(v + 1, LocTotals::default());
        }
        self.totals[v].add(&r);
        self.batch.push(&r, element);
        if self.batch.len() >= BATCH_ROWS {
            self.flush(BATCH_ROWS)?;
        }
        Ok(())
    }

    /// Sends the rows gathered on as one row group (or keeps them as a
    /// frame), and makes room for `next` more.
    fn flush(&mut self, next: usize) -> Result<(), FilterError> {
        if self.batch.len() == 0 {
            return Ok(());
        }
        self.written += self.batch.len() as u64;
        let batch = std::mem::replace(&mut self.batch, Batch::with_capacity(next));
        match &mut self.out {
            Out::Memory(frames) => frames.push(batch.into_frame()?),
            Out::File { to, .. } => {
                let sent = to.as_ref().is_some_and(|t| t.send(batch).is_ok());
                if !sent {
                    // The writer stopped: its error says why.
                    self.stop_writer()?;
                }
            }
        }
        Ok(())
    }

    /// Waits for the writer thread (if any) to write what it was sent
    /// and close the file; its error if it failed.
    fn stop_writer(&mut self) -> Result<(), FilterError> {
        let Out::File { path, to, thread } = &mut self.out else {
            return Ok(());
        };
        *to = None;
        match thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(FilterError::Write {
                path: path.clone(),
                source: std::io::Error::other("the thread writing the locations stopped"),
            }),
            None => Err(FilterError::Write {
                path: path.clone(),
                source: std::io::Error::other("the locations' file was already closed"),
            }),
        }
    }

    /// The table written: its file closed, or its frame.
    ///
    /// # Errors
    /// The last row group or the footer could not be written.
    pub(crate) fn finish(mut self) -> Result<Locations, FilterError> {
        self.flush(0)?;
        self.stop_writer()?;
        let place = match std::mem::replace(&mut self.out, Out::Memory(Vec::new())) {
            Out::File { path, .. } => Place::File(path),
            Out::Memory(frames) => {
                let mut frames = frames.into_iter();
                let mut df = match frames.next() {
                    Some(df) => df,
                    None => DataFrame::empty_with_schema(&table_schema()),
                };
                for f in frames {
                    df.vstack_mut_owned(f)?;
                }
                Place::Memory(df)
            }
        };
        Ok(Locations {
            rows: self.written,
            place,
            totals: std::mem::take(&mut self.totals),
        })
    }
}

impl Drop for LocationSink {
    /// A sink dropped on an error still stops its writer (which closes the
    /// file) before the analysis folder is removed.
    fn drop(&mut self) {
        let _ = self.stop_writer();
    }
}

/// The writer thread: encodes and writes each batch as a row group, then
/// closes the file.
fn write_batches(
    mut file: DatasetFile,
    from: std::sync::mpsc::Receiver<Batch>,
) -> Result<(), FilterError> {
    for batch in from {
        file.write(&batch.into_frame()?)?;
    }
    file.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(addr: u64, var: u32) -> LocRow {
        LocRow {
            addr,
            var,
            loads: addr % 5,
            stores: 1,
            modifies: 0,
            load_bytes: 8 * (addr % 5),
            store_bytes: 8,
        }
    }

    /// The member paths read back as pushed, in memory and in a file: a
    /// batch whose first rows have none, one with none at all, and more
    /// rows than a batch holds.
    #[test]
    fn member_paths_read_back_as_pushed() {
        let dir = tempfile::tempdir().unwrap();
        let n = BATCH_ROWS + 10;
        let element = |k: usize| match k {
            3 | 7 => format!("[{k}].x"),
            k if k == BATCH_ROWS + 4 => "[0].y".to_string(),
            _ => String::new(),
        };
        for path in [None, Some(dir.path().join(FILE))] {
            let mut sink = LocationSink::new(path.clone()).unwrap();
            for k in 0..n {
                sink.push(row(0x1000 + 8 * k as u64, 2), element(k))
                    .unwrap();
            }
            let t = sink.finish().unwrap();
            assert_eq!(t.rows, n as u64);
            let df = t.frame().unwrap();
            let got = df.column(lc::ELEMENT).unwrap().str().unwrap();
            let addr = df.column(lc::ADDR).unwrap().u64().unwrap();
            let acc = df.column(lc::ACCESSES).unwrap().u64().unwrap();
            for k in [
                0,
                3,
                4,
                7,
                8,
                BATCH_ROWS - 1,
                BATCH_ROWS,
                BATCH_ROWS + 4,
                n - 1,
            ] {
                assert_eq!(got.get(k), Some(element(k).as_str()), "row {k} of {path:?}");
                assert_eq!(addr.get(k), Some(0x1000 + 8 * k as u64));
                assert_eq!(acc.get(k), Some(row(0x1000 + 8 * k as u64, 2).accesses()));
            }
            assert_eq!(t.totals[2].locations, n as u64);
        }
    }
}
