//! The lookup table of unique locations, built from the named accesses as
//! they stream past.
//!
//! One row per location (an address in a variable) with its counts, as
//! mapvisual's lookup table has it, plus each variable's first and last
//! access and its threads, so that the statistics never rescan the
//! accesses. Memory: about 72 bytes per unique location held (the row and
//! its sort key; rows past the limit go to disk) plus the direct
//! indexes (see [`DENSE_MAX`]); nothing per access.

use std::io::{Read, Write};
use std::path::PathBuf;

use polars::prelude::PlHashMap as HashMap;

use super::access::{NamedAccess, VarId};
use super::error::FilterError;
use super::locations::{LocRow, LocationSink, Locations};
use super::model::Span;
use super::schema::{OP_LOAD, OP_MODIFY};

/// Most slots of one variable's direct location index (4 bytes each, one
/// per aligned grain of the variable; see [`grain`]).
const DENSE_MAX: u64 = 1 << 25;
/// Total memory the direct indexes may take (less for a spilling table
/// under a small memory limit).
const DENSE_BUDGET: usize = 256 << 20;
/// Memory a row of the table takes while it is counted: the row (56
/// bytes), its hash-map entry with the map's slack, and its sort key when
/// the rows are written in order (16 bytes).
pub(crate) const ROW_BYTES: usize = 112;
/// An empty slot of a direct index (rows are below 2^32 - 1: one per
/// unique location).
const NO_ROW: u32 = u32::MAX;

/// What the lookup table learnt about one variable.
#[derive(Clone, Debug, Default)]
pub(crate) struct VarUse {
    /// Time of the first and last access, if it was accessed.
    pub(crate) accessed: Option<(u64, u64)>,
    /// Lowest and highest byte address accessed (meaningful once
    /// `accessed` is set).
    pub(crate) bytes: (u64, u64),
    /// Threads that accessed it, ascending.
    pub(crate) threads: Vec<u32>,
}

/// A variable's direct location index: slot `k` holds the row of address
/// `base + k << shift`.
#[derive(Clone)]
struct Dense {
    base: u64,
    shift: u32,
    rows: Box<[u32]>,
}

/// The grain of a variable's direct index: the largest power of two (up to
/// 16 bytes) that divides its element size, so every element and every
/// naturally aligned member starts on a slot, and the index is 8 times
/// smaller for an array of doubles than one slot per byte. When the element
/// size is unknown (a type the namer could not resolve), the first access
/// stands in for it: its size, and the alignment of its offset. Addresses
/// off the grain still get their own rows, through the hash map.
fn grain(span: Span, first: &NamedAccess) -> u64 {
    let g = if span.elem > 0 {
        1 << span.elem.trailing_zeros()
    } else {
        let off = first.addr.wrapping_sub(span.base);
        let size = u64::from(first.size.max(1));
        (1u64 << size.trailing_zeros()).min(if off == 0 {
            16
        } else {
            1 << off.trailing_zeros()
        })
    };
    g.min(16)
}

/// The lookup table while it is built.
#[derive(Default)]
pub(crate) struct LookupTable {
    loc_of: HashMap<(u64, VarId), u32>,
    /// Per variable: a direct index from aligned offset to row, for
    /// variables small enough (see [`DENSE_MAX`]); the hash map serves the
    /// rest, and addresses off the grain. Arrays are walked in strides,
    /// where the direct index stays in cache and a hash probe would miss.
    dense: Vec<Option<Dense>>,
    dense_bytes: usize,
    /// Bytes the direct indexes may take together.
    dense_budget: usize,
    /// Per variable: whether [`Self::make_dense`] has seen it.
    seen: Vec<bool>,
    locs: Vec<LocRow>,
    /// The rows' order by address then variable, made when they are
    /// written (see [`sort_order`]); kept for the next run.
    order: Vec<(u64, u64)>,
    /// Where rows go when there are too many to hold; `None` holds them
    /// all.
    spill: Option<Spill>,
    /// The run being sorted and written on a thread of its own.
    writing: RunWriter,
    /// The sorted runs written to disk so far.
    runs: Vec<PathBuf>,
    /// The last location touched: (address, variable, row).
    last: Option<(u64, VarId, u32)>,
    uses: Vec<VarUse>,
    var_last_tid: Vec<u32>,
    threads: Vec<u32>,
    last_tid: u32,
}

impl LookupTable {
    /// An empty table.
    pub(crate) fn new() -> LookupTable {
        LookupTable {
            last_tid: u32::MAX,
            dense_budget: DENSE_BUDGET,
            ..Default::default()
        }
    }

    /// An empty table that holds at most `max_rows` rows in memory and
    /// writes them to a sorted run in the folder `dir` when it has more
    /// (see [`Spill`]).
    /// Room for the rows is made at once, so that the table never
    /// doubles past its share of memory while it fills; the direct
    /// indexes take at most as much as the rows' share, beside it.
    ///
    /// A run is sorted and written on a thread of its own while the next
    /// one fills, and keeps its rows and sort keys (56 of the 112 bytes a
    /// row is counted at, [`ROW_BYTES`]) until it is
    /// written: so each of the two holds two thirds of `max_rows`, and
    /// together they stay within the share.
    pub(crate) fn spilling(dir: PathBuf, max_rows: usize) -> LookupTable {
        // The direct indexes may take as much as the rows' share (they
        // are counted beside it, at most DENSE_BUDGET): at a third of it
        // only the first of two arrays of 9 M doubles (a 3000 x 3000
        // transpose under the default limit) had one, and the other's
        // accesses took a hash probe each, a quarter of the thread's time.
        let dense_budget = DENSE_BUDGET.min(max_rows.saturating_mul(ROW_BYTES));
        let max_rows = (max_rows.saturating_mul(2) / 3).max(1);
        SPILLED.store(0, std::sync::atomic::Ordering::Relaxed);
        // A batch may add a row per access past the limit before it spills.
        let room = max_rows.saturating_add(1 << 13).min(1 << 26);
        LookupTable {
            spill: Some(Spill { dir, max_rows }),
            locs: Vec::with_capacity(room),
            order: Vec::with_capacity(room),
            dense_budget,
            ..LookupTable::new()
        }
    }

    /// Sorted runs written to disk so far (0 when the table fits).
    pub(crate) fn runs(&self) -> usize {
        self.runs.len() + usize::from(self.writing.busy())
    }

    /// Counts a batch of accesses. `span(var)` says where a variable lies,
    /// asked when the variable is first seen. When the table has outgrown
    /// its memory, its rows then go to disk as a sorted run.
    /// Cost: a direct-index or hash probe per access.
    ///
    /// # Errors
    /// A run could not be written (a full disk).
    pub(crate) fn add(
        &mut self,
        batch: &[NamedAccess],
        span: &dyn Fn(VarId) -> Span,
    ) -> Result<(), FilterError> {
        self.count(batch, span);
        match &self.spill {
            Some(s) if self.locs.len() >= s.max_rows => self.spill_run(),
            _ => Ok(()),
        }
    }

    /// Counts a batch of accesses into the rows in memory.
    fn count(&mut self, batch: &[NamedAccess], span: &dyn Fn(VarId) -> Span) {
        for a in batch {
            let row = match self.last {
                Some((addr, var, row)) if addr == a.addr && var == a.var => row,
                _ => {
                    let r = self.location(a, span);
                    self.last = Some((a.addr, a.var, r));
                    r
                }
            };
            let l = &mut self.locs[row as usize];
            match a.op {
                OP_LOAD => l.loads += 1,
                OP_MODIFY => l.modifies += 1,
                _ => l.stores += 1,
            }
            let size = u64::from(a.size);
            if a.op != super::schema::OP_STORE {
                l.load_bytes += size;
            }
            if a.op != OP_LOAD {
                l.store_bytes += size;
            }
            self.used(a);
        }
    }

    /// Records the variable's time span and threads, and the trace's
    /// threads.
    #[inline]
    fn used(&mut self, a: &NamedAccess) {
        let v = a.var.index();
        if v >= self.uses.len() {
            self.uses.resize(v + 1, VarUse::default());
            self.var_last_tid.resize(v + 1, u32::MAX);
        }
        let u = &mut self.uses[v];
        let end = a.addr.saturating_add(u64::from(a.size.max(1)) - 1);
        match &mut u.accessed {
            Some((_, last)) => {
                *last = a.time;
                u.bytes = (u.bytes.0.min(a.addr), u.bytes.1.max(end));
            }
            t => {
                *t = Some((a.time, a.time));
                u.bytes = (a.addr, end);
            }
        }
        if self.var_last_tid[v] != a.tid {
            self.var_last_tid[v] = a.tid;
            if let Err(k) = u.threads.binary_search(&a.tid) {
                u.threads.insert(k, a.tid);
            }
        }
        if a.tid != self.last_tid {
            self.last_tid = a.tid;
            if let Err(k) = self.threads.binary_search(&a.tid) {
                self.threads.insert(k, a.tid);
            }
        }
    }

    /// The row of `addr` in `var`, created on first use.
    #[inline]
    fn location(&mut self, a: &NamedAccess, span: &dyn Fn(VarId) -> Span) -> u32 {
        let (addr, var) = (a.addr, a.var);
        let v = var.index();
        if self.seen.get(v) != Some(&true) {
            self.make_dense(a, span(var));
        }
        let next = self.locs.len() as u32;
        let slot = self.dense[v].as_mut().and_then(|d| {
            let off = addr.wrapping_sub(d.base);
            let k = off >> d.shift;
            (k << d.shift == off && k < d.rows.len() as u64).then(|| &mut d.rows[k as usize])
        });
        let r = match slot {
            Some(slot) => {
                if *slot == NO_ROW {
                    *slot = next;
                }
                *slot
            }
            None => *self.loc_of.entry((addr, var)).or_insert(next),
        };
        if r == next {
            self.locs.push(LocRow {
                addr,
                var: var.0,
                loads: 0,
                stores: 0,
                modifies: 0,
                load_bytes: 0,
                store_bytes: 0,
            });
        }
        r
    }

    /// Gives a variable seen for the first time (in access `first`) a
    /// direct index when it is small enough and the budget allows.
    #[cold]
    fn make_dense(&mut self, first: &NamedAccess, span: Span) {
        let v = first.var.index();
        if v >= self.dense.len() {
            self.dense.resize(v + 1, None);
            self.seen.resize(v + 1, false);
        }
        self.seen[v] = true;
        let g = grain(span, first);
        let slots = span.size.div_ceil(g);
        if slots > 0
            && slots <= DENSE_MAX
            && self.dense_bytes + 4 * slots as usize <= self.dense_budget
        {
            self.dense[v] = Some(Dense {
                base: span.base,
                shift: g.trailing_zeros(),
                rows: vec![NO_ROW; slots as usize].into_boxed_slice(),
            });
            self.dense_bytes += 4 * slots as usize;
        }
    }

    /// The trace's threads, ascending.
    pub(crate) fn threads(&self) -> &[u32] {
        &self.threads
    }

    /// Writes the rows in memory to disk as a run sorted by address then
    /// variable, and forgets them: later accesses to the same locations
    /// start new rows, which [`LookupTable::finish`] merges.
    ///
    /// The sort and the write run on a thread of their own, so that the
    /// analysis' other threads need not wait for them: written inline,
    /// each run stopped the whole pipeline for about 150 ms a million
    /// rows. The rows go with the thread, and come back
    /// emptied, as the next run's room, when that run is spilled; a run
    /// joins [`LookupTable::runs`]' files only once it is written.
    ///
    /// # Errors
    /// The previous run could not be written, the spill folder made, or
    /// the writing thread started.
    #[cold]
    fn spill_run(&mut self) -> Result<(), FilterError> {
        let Some(s) = &self.spill else {
            return Ok(());
        };
        let (locs, order) = match self.writing.wait()? {
            Some((written, room)) => {
                self.runs.push(written);
                room
            }
            None => {
                super::io::mkdir(&s.dir)?;
                (
                    Vec::with_capacity(self.locs.capacity()),
                    Vec::with_capacity(self.order.capacity()),
                )
            }
        };
        let path = s.dir.join(format!("run-{}.bin", self.runs.len()));
        let locs = std::mem::replace(&mut self.locs, locs);
        let order = std::mem::replace(&mut self.order, order);
        self.writing.start(path, locs, order)?;
        SPILLED.store(self.runs(), std::sync::atomic::Ordering::Relaxed);
        self.loc_of.clear();
        for d in self.dense.iter_mut().flatten() {
            d.rows.fill(NO_ROW);
        }
        self.last = None;
        Ok(())
    }

    /// The table, sorted by address then variable, with the member path
    /// `element(address, variable)` of each location, written to `path`
    /// (or kept in memory when `path` is `None`), and what each variable's
    /// accesses were (by variable row, as far as the last variable
    /// accessed). Runs on disk are merged with the rows in memory and
    /// removed. Memory: the rows in memory and their sort keys (16 bytes
    /// a row), a read buffer per run and three batches of the table
    /// (gathering, waiting, written by the [`LocationSink`]'s thread).
    ///
    /// # Errors
    /// A run could not be read, or the table could not be written.
    pub(crate) fn finish(
        mut self,
        element: &mut dyn FnMut(u64, VarId) -> Option<String>,
        path: Option<PathBuf>,
    ) -> Result<(Locations, Vec<VarUse>), FilterError> {
        let uses = std::mem::take(&mut self.uses);
        // The rows in memory are sorted while the last run is still being
        // written: the two take both cores, where one waited for the other.
        sort_order(&self.locs, &mut self.order);
        if let Some((written, _)) = self.writing.wait()? {
            self.runs.push(written);
        }
        let mut locs = in_order(&self.locs, &self.order);
        let mut sink = LocationSink::new(path)?;
        let mut put = |r: LocRow| {
            let e = element(r.addr, VarId(r.var)).unwrap_or_default();
            sink.push(r, e)
        };
        if self.runs.is_empty() {
            locs.try_for_each(&mut put)?;
        } else {
            merge_runs(&self.runs, locs, &mut put)?;
            if let Some(s) = &self.spill {
                let _ = std::fs::remove_dir_all(&s.dir);
            }
        }
        Ok((sink.finish()?, uses))
    }
}

/// The rows and sort keys of a run, and what comes back of them once it
/// is written: the same vectors, emptied.
type RunRows = (Vec<LocRow>, Vec<(u64, u64)>);

/// A run written: its file, and its vectors emptied.
type Written = (PathBuf, RunRows);

/// What the spill thread's errors say it was doing, and where.
const SPILL_WHAT: &str = "lookup table spill";
const SPILL_PLACE: &str = "(lookup table spill thread)";

/// The thread that sorts and writes the lookup table's last run, if one
/// is running. Dropped, it waits for the thread, so that no run is written
/// after the table is gone (an interrupted analysis removes its folder).
#[derive(Default)]
struct RunWriter(Option<std::thread::JoinHandle<Result<Written, FilterError>>>);

impl RunWriter {
    /// Sorts `locs` by address then variable (with `order`, emptied, for
    /// the keys) and writes them to `path`, on a thread of its own.
    ///
    /// # Errors
    /// The thread could not start.
    fn start(
        &mut self,
        path: PathBuf,
        mut locs: Vec<LocRow>,
        mut order: Vec<(u64, u64)>,
    ) -> Result<(), FilterError> {
        debug_assert!(self.0.is_none(), "one run written at a time");
        let handle = std::thread::Builder::new()
            .name("mapvis-spill".into())
            .spawn(move || {
                sort_order(&locs, &mut order);
                write_run(&path, in_order(&locs, &order))?;
                locs.clear();
                order.clear();
                Ok((path, (locs, order)))
            })
            .map_err(|source| {
                super::error::thread_not_started(SPILL_WHAT, SPILL_PLACE.into(), source)
            })?;
        self.0 = Some(handle);
        Ok(())
    }

    /// Whether a run is being written.
    fn busy(&self) -> bool {
        self.0.is_some()
    }

    /// Waits for the run being written, and gives back its file and its
    /// emptied vectors; None when no run was being written.
    ///
    /// # Errors
    /// The run could not be written.
    fn wait(&mut self) -> Result<Option<Written>, FilterError> {
        match self.0.take() {
            Some(h) => {
                let place = std::path::Path::new(SPILL_PLACE);
                super::error::joined(h.join(), SPILL_WHAT, place).map(Some)
            }
            None => Ok(None),
        }
    }
}

impl Drop for RunWriter {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            let _ = h.join();
        }
    }
}

/// Where the lookup table goes when it outgrows its memory: sorted runs in
/// a folder of the analysis being built.
///
/// Why runs by hand and not polars: a group-by of the named accesses by
/// location in polars' streaming engine would hold every group in memory
/// (its out-of-core group-by and sort are not built yet), which is the
/// very table that does not fit.
struct Spill {
    dir: PathBuf,
    /// Rows held in memory at most (about 112 bytes each with their index
    /// and sort key: [`ROW_BYTES`]).
    max_rows: usize,
}

/// Runs the lookup table of the running analysis has written so far: what
/// the progress line shows (see [`spilled_runs`]). One counter for the
/// process, as there is one running command: analyses run side by side
/// (tests) share it, and it is only ever shown, never used.
static SPILLED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Runs the running analysis' lookup table has written to disk so far (0
/// when it fits in memory): for the progress line, which says that the
/// analysis spills.
pub fn spilled_runs() -> usize {
    SPILLED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Most bytes of a row in a run: seven ULEB128 numbers of at most ten
/// bytes each.
const RUN_ROW_MAX: usize = 7 * 10;

/// Bytes read from a run at a time.
const RUN_READ: usize = 1 << 20;

/// A run's rows, each encoded after the one before it: the address as
/// its distance from the previous row's (the rows are sorted, so it is a
/// small number: 8 for the next double of an array), then the variable
/// shifted left by one, its low bit set when the five counts are the
/// previous row's, and otherwise the five counts; all in ULEB128 (the
/// Parquet writer's own, from polars-parquet). A location's counts are
/// mostly below 128, so a row takes at most about 7 bytes where the fixed
/// layout took 52: the 18 M locations of a 3000 x 3000 transpose write
/// 0.13 GB instead of 0.93 GB, and read it back, which made most of the
/// analysis' system time. Neighbouring locations of an array are mostly
/// counted alike (each element of a transpose's source read once), and
/// then a row takes 2 or 3 bytes, and its counts cost no decoding.
fn encode_row(prev: &LocRow, r: &LocRow, out: &mut Vec<u8>) {
    use polars_parquet::parquet::encoding::uleb128;
    let mut b = [0u8; RUN_ROW_MAX];
    let counts = |r: &LocRow| [r.loads, r.stores, r.modifies, r.load_bytes, r.store_bytes];
    let same = counts(prev) == counts(r);
    let mut n = uleb128::encode(r.addr - prev.addr, &mut b);
    n += uleb128::encode(u64::from(r.var) << 1 | u64::from(same), &mut b[n..]);
    if !same {
        for f in counts(r) {
            n += uleb128::encode(f, &mut b[n..]);
        }
    }
    out.extend_from_slice(&b[..n]);
}

/// The order of `rows` by address then variable, into `order`: each
/// row's (address, variable << 32 | index), sorted.
///
/// Why keys and not the rows themselves: sorting 16-byte keys and then
/// reading each row once in their order takes about half the time of
/// sorting the 56-byte rows in place (0.15 s against 0.29 s for the 2.6 M
/// rows of a run of the 3000 x 3000 transpose, whose two arrays' rows come
/// interleaved), for 16 bytes a row ([`ROW_BYTES`]
/// counts them).
fn sort_order(rows: &[LocRow], order: &mut Vec<(u64, u64)>) {
    order.clear();
    order.extend(
        (rows.iter().enumerate()).map(|(i, r)| (r.addr, u64::from(r.var) << 32 | i as u64)),
    );
    order.sort_unstable();
}

/// Rows [`in_order`] gathers at a time.
const GATHER: usize = 1 << 10;

/// The rows of `rows` in `order` (from [`sort_order`]).
fn in_order<'a>(rows: &'a [LocRow], order: &'a [(u64, u64)]) -> InOrder<'a> {
    InOrder {
        rows,
        keys: order.chunks(GATHER),
        chunk: Vec::with_capacity(GATHER.min(order.len())),
        next: 0,
    }
}

/// The rows of a table in a sorted order, gathered [`GATHER`] at a time.
///
/// Why in chunks: each row is read from wherever it was counted, mostly
/// out of every cache. Gathered one at a time between a merge's or an
/// encoder's steps, each read waits for memory alone; a loop that only
/// gathers has its reads in flight together. Measured apart, 1.6 M rows
/// in random order, each encoded as a run row is: 240 to 290 ms one at a
/// time, 70 to 110 ms in chunks. Memory: one chunk (56 KB).
struct InOrder<'a> {
    rows: &'a [LocRow],
    keys: std::slice::Chunks<'a, (u64, u64)>,
    chunk: Vec<LocRow>,
    /// The next row of `chunk` to give.
    next: usize,
}

impl Iterator for InOrder<'_> {
    type Item = LocRow;

    #[inline]
    fn next(&mut self) -> Option<LocRow> {
        if self.next == self.chunk.len() {
            let keys = self.keys.next()?;
            let rows = self.rows;
            self.chunk.clear();
            self.chunk.extend(
                keys.iter()
                    .map(|&(_, k)| rows[(k & u64::from(u32::MAX)) as usize]),
            );
            self.next = 0;
        }
        self.next += 1;
        Some(self.chunk[self.next - 1])
    }
}

/// Writes `rows` (sorted by address then variable) to a new run file at
/// `path` (see [`encode_row`]).
fn write_run(
    path: &std::path::Path,
    rows: impl IntoIterator<Item = LocRow>,
) -> Result<(), FilterError> {
    let failed = |source| FilterError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut f = std::fs::File::create(path).map_err(failed)?;
    let mut buf = Vec::with_capacity(RUN_READ + RUN_ROW_MAX);
    let mut prev = LocRow::default();
    for r in rows {
        encode_row(&prev, &r, &mut buf);
        prev = r;
        if buf.len() >= RUN_READ {
            f.write_all(&buf).map_err(failed)?;
            buf.clear();
        }
    }
    f.write_all(&buf).map_err(failed)?;
    f.flush().map_err(failed)
}

/// Reads a run's rows back in order.
struct RunReader {
    path: PathBuf,
    f: std::fs::File,
    /// Bytes read and not yet decoded: `buf[pos..]`.
    buf: Vec<u8>,
    pos: usize,
    /// Whether the file has no more bytes past `buf`.
    eof: bool,
    /// The row read last (all zero before the first).
    prev: LocRow,
}

impl RunReader {
    fn open(path: &std::path::Path) -> Result<RunReader, FilterError> {
        let f = std::fs::File::open(path).map_err(|source| FilterError::Write {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(RunReader {
            path: path.to_path_buf(),
            f,
            buf: Vec::new(),
            pos: 0,
            eof: false,
            prev: LocRow::default(),
        })
    }

    /// Keeps at least a whole row's bytes in the buffer, or every byte
    /// left in the file.
    fn fill(&mut self) -> Result<(), FilterError> {
        if self.eof || self.buf.len() - self.pos >= RUN_ROW_MAX {
            return Ok(());
        }
        self.buf.drain(..self.pos);
        self.pos = 0;
        let have = self.buf.len();
        self.buf.resize(have + RUN_READ, 0);
        let mut got = have;
        while got < self.buf.len() {
            match self.f.read(&mut self.buf[got..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(FilterError::Write {
                        path: self.path.clone(),
                        source,
                    })
                }
            }
        }
        self.buf.truncate(got);
        Ok(())
    }

    /// The next row, `None` at the end.
    fn next_row(&mut self) -> Result<Option<LocRow>, FilterError> {
        self.fill()?;
        if self.pos == self.buf.len() {
            return Ok(None);
        }
        let addr = self.prev.addr.wrapping_add(self.number()?);
        let var = self.number()?;
        let mut r = LocRow {
            addr,
            var: (var >> 1) as u32,
            ..self.prev
        };
        if var & 1 == 0 {
            r.loads = self.number()?;
            r.stores = self.number()?;
            r.modifies = self.number()?;
            r.load_bytes = self.number()?;
            r.store_bytes = self.number()?;
        }
        self.prev = r;
        Ok(Some(r))
    }

    /// The next number of the row being read.
    #[inline]
    fn number(&mut self) -> Result<u64, FilterError> {
        use polars_parquet::parquet::encoding::uleb128;
        let rest = &self.buf[self.pos..];
        // A number cut short by the file's end reads as far as it goes
        // and is caught here.
        let (x, n) = uleb128::decode(rest);
        if n == 0 || rest[n - 1] & 0x80 != 0 {
            return Err(FilterError::Write {
                path: self.path.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "a sorted run of the lookup table ends inside a row",
                ),
            });
        }
        self.pos += n;
        Ok(x)
    }
}

/// Merges the sorted runs at `runs` and the sorted rows `last` into one
/// sequence by address then variable, rows of one location summed, and
/// hands each to `put`. Memory: a read buffer per run.
fn merge_runs(
    runs: &[PathBuf],
    last: impl Iterator<Item = LocRow>,
    put: &mut dyn FnMut(LocRow) -> Result<(), FilterError>,
) -> Result<(), FilterError> {
    use std::cmp::Reverse;
    let mut readers = runs
        .iter()
        .map(|p| RunReader::open(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut tail = last;
    let mut heads: Vec<Option<LocRow>> = Vec::with_capacity(readers.len() + 1);
    for r in &mut readers {
        heads.push(r.next_row()?);
    }
    heads.push(tail.next());
    let mut heap = std::collections::BinaryHeap::new();
    for (k, h) in heads.iter().enumerate() {
        if let Some(r) = h {
            heap.push(Reverse((r.addr, r.var, k)));
        }
    }
    let mut pending: Option<LocRow> = None;
    // The least head is replaced in place by its sequence's next row (one
    // sift down), or leaves the heap when that sequence is done.
    while let Some(mut top) = heap.peek_mut() {
        let Reverse((_, _, k)) = *top;
        // A sequence is in the heap exactly while it has a head.
        let row = heads[k].take().expect("a sequence in the heap has a head");
        heads[k] = match readers.get_mut(k) {
            Some(r) => r.next_row()?,
            None => tail.next(),
        };
        match &heads[k] {
            Some(n) => *top = Reverse((n.addr, n.var, k)),
            None => {
                std::collections::binary_heap::PeekMut::pop(top);
            }
        }
        match &mut pending {
            Some(p) if (p.addr, p.var) == (row.addr, row.var) => p.merge(&row),
            _ => {
                if let Some(p) = pending.replace(row) {
                    put(p)?;
                }
            }
        }
    }
    pending.map_or(Ok(()), put)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(addr: u64, var: u32, n: u64) -> LocRow {
        LocRow {
            addr,
            var,
            loads: n,
            stores: n / 3,
            modifies: u64::MAX - n,
            load_bytes: n << 3,
            store_bytes: 0,
        }
    }

    /// A run reads back as written: numbers of every width, equal and
    /// distant addresses, rows counted alike and not, more rows than one
    /// read of the file holds.
    #[test]
    fn a_run_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run-0.bin");
        let mut rows = vec![
            row(0, 0, 0),
            row(0, 1, 1),
            row(u64::MAX, u32::MAX, u64::MAX),
        ];
        rows.extend((0..400_000u64).map(|k| row(0x4000_0000 + 8 * k, 3, k * k)));
        // Runs of rows counted alike, in one variable and across two.
        rows.extend((0..1000u64).map(|k| row(0x5000_0000 + 8 * k, 3, k / 100)));
        rows.extend((0..1000u64).map(|k| row(0x6000_0000 + 4 * k, 4 + (k % 2) as u32, 7)));
        rows.sort_unstable_by_key(|l| (l.addr, l.var));
        write_run(&path, rows.iter().copied()).unwrap();
        let mut r = RunReader::open(&path).unwrap();
        for want in &rows {
            let got = r.next_row().unwrap().unwrap();
            assert_eq!((got.addr, got.var), (want.addr, want.var));
            assert_eq!(
                [
                    got.loads,
                    got.stores,
                    got.modifies,
                    got.load_bytes,
                    got.store_bytes
                ],
                [
                    want.loads,
                    want.stores,
                    want.modifies,
                    want.load_bytes,
                    want.store_bytes
                ]
            );
        }
        assert!(r.next_row().unwrap().is_none());
    }

    /// A run cut inside a row is an error naming the file, not a short
    /// table.
    #[test]
    fn a_cut_run_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run-0.bin");
        write_run(&path, [row(0x1000, 2, 300), row(0x1008, 2, 1 << 40)]).unwrap();
        let len = std::fs::metadata(&path).unwrap().len();
        let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(len - 2).unwrap();
        let mut r = RunReader::open(&path).unwrap();
        assert!(r.next_row().unwrap().is_some());
        let e = r.next_row().unwrap_err().to_string();
        assert!(e.contains("run-0.bin"), "{e}");
    }
}
