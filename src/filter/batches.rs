//! Streaming reads of a selection of the access list for the figures:
//! typed column batches in time order, with each access' occurrence (the
//! n-th access to its location, 64 bits) counted as the batches stream past
//! and, when the figure is coloured by class, each access' colour class.
//!
//! A figure visits the batches once per pass and keeps only what it draws
//! (bins, cells, groups), so no pass holds the selected accesses: memory is
//! one row group of the access list, one batch of the selection, and one
//! counter per unique location selected (the occurrence), plus the cache
//! model's state when coloured.
use std::cell::RefCell;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::access::NamedAccess;
use super::analysis::Analysis;
use super::columns::{extend, Columns};
use super::occurrence::Occurrences;
use super::schema::access as ac;
use super::{error::FilterError, selection::Selection};

/// One batch of accesses, in time order, as columns of equal length: the
/// columns the access list stores (read through `Deref`, `b.addr`), each
/// access' occurrence and, when coloured, its class.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AccessBatch {
    /// The stored columns: time, op, address, size, thread, variable, line.
    pub stored: Columns,
    /// Occurrence of the location (address, variable), from 1.
    pub occ: Vec<u64>,
    /// Colour class of each access, when the figure is coloured by class.
    pub colour: Option<Vec<u8>>,
}

impl std::ops::Deref for AccessBatch {
    type Target = Columns;
    fn deref(&self) -> &Columns {
        &self.stored
    }
}

impl std::ops::DerefMut for AccessBatch {
    fn deref_mut(&mut self) -> &mut Columns {
        &mut self.stored
    }
}

impl AccessBatch {
    /// Accesses in the batch.
    pub fn len(&self) -> usize {
        self.time.len()
    }

    /// Whether the batch holds no access.
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// The batch as a table with the columns of the access schema.
    fn into_frame(self) -> PolarsResult<DataFrame> {
        use super::model::owned;
        let mut stored = self.stored;
        let mut df = stored.take()?;
        df.with_column(owned::<UInt64Type>(ac::OCCURRENCE, self.occ))?;
        if let Some(c) = self.colour {
            df.with_column(owned::<UInt8Type>(ac::COLOUR, c))?;
        }
        Ok(df)
    }

    /// The batch's columns that the access list stores become those of
    /// `df`.
    fn read_stored(&mut self, df: &DataFrame) -> PolarsResult<()> {
        self.stored.read(df)
    }

    /// The batch becomes the rows of `df` (a table of [`AccessBatch::frame`]).
    fn read(&mut self, df: &DataFrame) -> PolarsResult<()> {
        self.read_stored(df)?;
        extend(&mut self.occ, df.column(ac::OCCURRENCE)?.u64()?);
        self.colour = match df.column(ac::COLOUR) {
            Ok(c) => {
                let mut v = self.colour.take().unwrap_or_default();
                extend(&mut v, c.u8()?);
                Some(v)
            }
            Err(_) => None,
        };
        Ok(())
    }

    /// Empties the batch, keeping its room.
    fn clear(&mut self) {
        self.stored.clear();
        self.occ.clear();
        if let Some(c) = &mut self.colour {
            c.clear();
        }
    }

    /// The batch becomes every row of `df` (a frame of the access list),
    /// each with its occurrence counted in `seen`.
    fn read_plain(&mut self, df: &DataFrame, seen: &mut Occurrences) -> PolarsResult<()> {
        self.read_stored(df)?;
        self.occ.clear();
        let rows = self.stored.addr.iter().zip(&self.stored.var);
        self.occ
            .extend(rows.map(|(&addr, &var)| seen.next(addr, var)));
        Ok(())
    }

    /// Appends the rows of `cols` whose variable `keep` holds, each with its
    /// colour class (the classifier sees every row) and its occurrence.
    fn read_coloured(
        &mut self,
        cols: &Columns,
        classifier: &mut dyn Classify,
        keep: &[bool],
        seen: &mut Occurrences,
    ) {
        for k in 0..cols.len() {
            let r = cols.access(k);
            let class = classifier.class(&r);
            if !keep.get(r.var.0 as usize).copied().unwrap_or(false) {
                continue;
            }
            if let Some(col) = &mut self.colour {
                col.push(class);
            }
            self.occ.push(seen.next(r.addr, r.var.0));
            self.stored.push_from(cols, k);
        }
    }

    /// Appends rows `r` of `b`.
    fn append(&mut self, b: &AccessBatch, r: std::ops::Range<usize>) {
        self.stored.append(&b.stored, r.clone());
        self.occ.extend_from_slice(&b.occ[r.clone()]);
        if let (Some(c), Some(bc)) = (&mut self.colour, &b.colour) {
            c.extend_from_slice(&bc[r]);
        }
    }
}

/// What gives each access its colour class as a reader meets them: fed
/// every access of the trace in time order (whatever the selection
/// keeps). The locality stage's classifiers (cache level, reuse distance)
/// are the ones there are; the batch reader knows only this face of them.
pub trait Classify: Send {
    /// The class of the next access of the trace.
    fn class(&mut self, r: &NamedAccess) -> u8;
    /// A classifier in the state this one started in, for a new pass.
    fn fresh(&self) -> Box<dyn Classify>;
}

/// The names of the classes a [`Classify`] gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassNames {
    /// What the classes are, for the legend title.
    pub title: String,
    /// Name of each class, best first, indexed by the class.
    pub labels: Vec<String>,
    /// Whether most classes never occur: a figure then keeps only those
    /// its accesses have, renumbered densely in this order.
    pub sparse: bool,
}

/// The visitor a pass over [`AccessBatches`] calls per batch: returns
/// false to stop the pass.
pub type BatchFn<'a> = dyn FnMut(&AccessBatch) -> Result<bool, FilterError> + 'a;

/// Accesses read as batches in time order, as many times as a figure needs.
pub trait AccessBatches {
    /// Accesses a whole pass visits.
    fn len(&self) -> u64;
    /// Whether a pass visits nothing.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// One pass: calls `f` with each batch, in time order, until `f`
    /// returns false or the accesses end.
    fn visit(&self, f: &mut BatchFn) -> Result<(), FilterError>;
    /// The names of the colour classes of [`AccessBatch::colour`], when
    /// the batches carry them.
    fn classes(&self) -> Option<&ClassNames> {
        None
    }
    /// Per variable row, what a whole pass would find of that variable's
    /// accesses, when the tables tell it without one: a figure then skips
    /// the pass that measures its spans. `None` when only a pass can tell
    /// (batches coloured by the cache model; tables that do not know). A
    /// variable with no access in the batches is `None` inside.
    fn var_spans(&self) -> Option<Vec<Option<VarSpan>>> {
        None
    }
    /// Whether no two accesses share a time (true of every selection of an
    /// analysis, whose times are trace order): aggregation then knows a
    /// lower bound on its groups per time bin.
    fn unique_times(&self) -> bool {
        false
    }
}

/// What a pass over one variable's accesses would find, known from the
/// variable and lookup tables: its count, time span, address span and the
/// highest occurrence. Exact, not an estimate: the figures draw the same
/// groups from these as from a pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VarSpan {
    /// Accesses.
    pub accesses: u64,
    /// Time of the first and last access.
    pub time: (u64, u64),
    /// Lowest and highest address (first byte) of an access.
    pub addr: (u64, u64),
    /// Highest byte any access touched.
    pub last_byte: u64,
    /// Highest occurrence: the most accesses to one location (the lowest
    /// is 1, every location's first access).
    pub max_occ: u64,
}

/// The spans of the variables `keep` holds, from the analysis' tables (see
/// [`AccessBatches::var_spans`]); `None` when the tables cannot tell: an
/// analysis saved before the variables kept their byte spans, or tables
/// that disagree with each other (hand-made ones).
///
/// Cost: a step per variable (the lookup table's totals), none over the
/// locations or the accesses.
pub fn spans_from_tables(a: &Analysis, keep: &[bool]) -> Option<Vec<Option<VarSpan>>> {
    let mut out: Vec<Option<VarSpan>> = vec![None; a.vars.len()];
    for (v, slot) in out.iter_mut().enumerate() {
        let t = a.locations.totals(v);
        if !keep.get(v).copied().unwrap_or(false) || t.accesses == 0 {
            continue;
        }
        // None for a saved analysis that predates byte spans.
        let x = a.vars.get(v)?;
        let (time, bytes) = x.accessed.zip(x.bytes)?;
        *slot = Some(VarSpan {
            accesses: t.accesses,
            time,
            addr: (t.lowest, t.highest),
            last_byte: bytes.1,
            max_occ: t.most,
        });
    }
    Some(out)
}

/// The accesses of a [`Selection`] of an analysis, read from its access
/// list (memory or dataset) at each pass.
///
/// When the access list is on disk and the selection is a small part of
/// it (or coloured, which needs the cache model to see every access), the
/// first whole pass also writes the batches it hands out to a Parquet file
/// of their own beside the dataset, and later passes read that instead:
/// the figure of one array then reads the whole list once. The file is
/// removed when the batches are dropped.
pub struct SelectionBatches<'a> {
    a: &'a Analysis,
    sel: Selection,
    colour: Option<(Box<dyn Classify>, ClassNames)>,
    spill: RefCell<Option<Spill>>,
}

/// The selection's batches, written by the first whole pass.
struct Spill {
    /// Removed with the batches.
    _dir: tempfile::TempDir,
    /// The files, in time order.
    files: Vec<PathBuf>,
    /// Rows in all.
    rows: u64,
}

impl<'a> SelectionBatches<'a> {
    /// The accesses of `sel`, each with the class `colour`'s classifier
    /// gives it (the classifier sees every access of the trace, in time
    /// order, whatever the selection keeps); `None` gives no classes.
    pub fn new(
        a: &'a Analysis,
        sel: Selection,
        colour: Option<(Box<dyn Classify>, ClassNames)>,
    ) -> SelectionBatches<'a> {
        SelectionBatches {
            a,
            sel,
            colour,
            spill: RefCell::new(None),
        }
    }

    /// The accesses of `sel`, with no colour classes.
    pub fn plain(a: &'a Analysis, sel: Selection) -> SelectionBatches<'a> {
        SelectionBatches {
            a,
            sel,
            colour: None,
            spill: RefCell::new(None),
        }
    }

    /// Where a whole pass should write the selection for later passes:
    /// `None` when the list is in memory (passes are cheap) or the
    /// selection is a large part of it. If it cannot be written there (a
    /// read-only folder, a full disk), every pass reads the list.
    fn spill_folder(&self) -> Option<PathBuf> {
        let root = self.a.accesses.root()?;
        // Read from the by-variable dataset: each pass reads only the
        // selection already.
        if self.colour.is_none() && self.a.accesses.reads_by_var(&self.sel.keep) {
            return None;
        }
        let (n, all) = (self.sel.count, self.a.accesses.len());
        // Coloured passes simulate every access: writing half aside pays.
        let small =
            n.saturating_mul(4) <= all || (self.colour.is_some() && n.saturating_mul(2) <= all);
        small.then(|| root.parent().unwrap_or(root).to_path_buf())
    }

    /// One pass over the spilled selection, a file at a time.
    fn visit_spill(&self, s: &Spill, f: &mut BatchFn) -> Result<(), FilterError> {
        let mut b = AccessBatch::default();
        let mut read = 0u64;
        for file in &s.files {
            let df = super::io::read_saved_parquet(file, None)?;
            read += df.height() as u64;
            b.read(&df)?;
            if !f(&b)? {
                return Ok(());
            }
        }
        if read != s.rows {
            return Err(FilterError::Saved {
                path: s.files.first().cloned().unwrap_or_default(),
                reason: format!("the selection's files hold {read} rows, not {}", s.rows),
            });
        }
        Ok(())
    }

    /// One pass over the access list (see [`AccessBatches::visit`]),
    /// writing the batches to `out` as well when given. Returns whether
    /// the pass was whole and `out` holds all of it.
    fn visit_list(
        &self,
        f: &mut BatchFn,
        mut out: Option<&mut SpillWriter>,
    ) -> Result<bool, FilterError> {
        let mut spilled = out.is_some();
        let classifier = self.colour.as_ref().map(|c| c.0.fresh());
        let (a, sel) = (self.a, &self.sel);
        std::thread::scope(|scope| {
            let (to, from) = std::sync::mpsc::sync_channel::<AccessBatch>(2);
            // Batches seen go back to the reader to be filled again, so that
            // a pass does not map fresh pages for every batch.
            let (spare_to, spare) = std::sync::mpsc::sync_channel::<AccessBatch>(4);
            let channels = Channels { to, spare };
            let reader = std::thread::Builder::new()
                .name("mapvis-figure-reader".into())
                .spawn_scoped(scope, move || read_selection(a, sel, classifier, channels))
                .map_err(|source| {
                    super::error::thread_not_started(
                        "figure reader",
                        "(figure reader thread)".into(),
                        source,
                    )
                })?;
            let mut whole = true;
            let mut failed = None;
            for b in from.iter() {
                // A selection that cannot be written aside (a full disk)
                // is read from the list at every pass instead.
                if out.as_deref_mut().is_some_and(|w| w.write(&b).is_err()) {
                    out = None;
                    spilled = false;
                }
                match f(&b) {
                    Ok(true) => {}
                    Ok(false) => whole = false,
                    Err(e) => failed = Some(e),
                }
                let _ = spare_to.try_send(b);
                if !whole || failed.is_some() {
                    break;
                }
            }
            // The reader stops at its next batch once nobody receives.
            drop(from);
            let read = super::error::joined(
                reader.join(),
                "figure reader",
                "(figure reader thread)".as_ref(),
            );
            if let Some(e) = failed {
                return Err(e);
            }
            let complete = read?;
            Ok(whole && complete && spilled)
        })
    }
}

/// The reader's ends of its channels: batches go out on `to`, and come
/// back on `spare` once seen, to be filled again.
struct Channels {
    to: std::sync::mpsc::SyncSender<AccessBatch>,
    spare: std::sync::mpsc::Receiver<AccessBatch>,
}

impl Channels {
    /// An empty batch to fill: one handed back, or a new one.
    fn batch(&self, coloured: bool) -> AccessBatch {
        let mut b = self.spare.try_recv().unwrap_or_default();
        b.clear();
        b.colour = coloured.then(|| b.colour.take().unwrap_or_default());
        b
    }
}

/// The reader of [`SelectionBatches::visit_list`], on a thread of its own
/// so that decoding, merging by time and counting occurrences run beside
/// the figure's own work on the batches: sends the batches of the
/// selection `sel`, with their occurrences and, given a classifier,
/// colour classes (which see every access). Returns whether it read
/// everything (false when the receiver went away first).
///
/// Cost: without colours every row the access list hands over is the
/// selection's (it applies the variable filter), so its columns are
/// copied whole and only the occurrences are counted access by access.
fn read_selection(
    a: &Analysis,
    sel: &Selection,
    mut classifier: Option<Box<dyn Classify>>,
    ch: Channels,
) -> Result<bool, FilterError> {
    // With colours, the model must see the accesses the figure leaves out.
    let filter = match classifier {
        Some(_) => None,
        None => sel.var_filter(a),
    };
    let mut seen = Occurrences::new(&a.vars, sel.occurrence_budget);
    let mut cols = Columns::default();
    let mut complete = true;
    a.accesses.for_each(filter, &mut |df| {
        let mut b = ch.batch(classifier.is_some());
        match &mut classifier {
            None => b.read_plain(&df, &mut seen)?,
            Some(c) => {
                cols.read(&df)?;
                b.read_coloured(&cols, c.as_mut(), &sel.keep, &mut seen);
            }
        }
        if seen.uncounted() > 0 {
            return Err(sel.too_many_locations());
        }
        if b.is_empty() {
            return Ok(true);
        }
        complete = ch.to.send(b).is_ok();
        Ok(complete)
    })?;
    Ok(complete)
}

/// Rows per file of a spilled selection, read back as one batch: 1.2 MB
/// of columns.
const ROWS: usize = 1 << 15;

/// Writes a selection's batches to Parquet files (LZ4, as the dataset) of
/// [`ROWS`] rows each, so that neither writing nor reading holds more.
struct SpillWriter {
    dir: tempfile::TempDir,
    /// Rows waiting for the next file.
    pending: AccessBatch,
    files: Vec<PathBuf>,
    rows: u64,
}

impl SpillWriter {
    fn start(folder: &Path, coloured: bool) -> Result<SpillWriter, FilterError> {
        let dir = tempfile::Builder::new()
            .prefix(".figure-selection-")
            .tempdir_in(folder)
            .map_err(|source| FilterError::Write {
                path: folder.to_path_buf(),
                source,
            })?;
        Ok(SpillWriter {
            dir,
            pending: AccessBatch {
                colour: coloured.then(Vec::new),
                ..AccessBatch::default()
            },
            files: Vec::new(),
            rows: 0,
        })
    }

    fn write(&mut self, b: &AccessBatch) -> Result<(), FilterError> {
        let mut k = 0;
        while k < b.len() {
            let n = (ROWS - self.pending.len()).min(b.len() - k);
            self.pending.append(b, k..k + n);
            k += n;
            if self.pending.len() == ROWS {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Writes the pending rows as the next file.
    fn flush(&mut self) -> Result<(), FilterError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let file = self
            .dir
            .path()
            .join(format!("part-{}.parquet", self.files.len()));
        let coloured = self.pending.colour.is_some();
        let rows = self.pending.len() as u64;
        let empty = AccessBatch {
            colour: coloured.then(Vec::new),
            ..AccessBatch::default()
        };
        let df = std::mem::replace(&mut self.pending, empty).into_frame()?;
        super::dataset::write_plain(&df, &file)?;
        self.rows += rows;
        self.files.push(file);
        Ok(())
    }

    fn finish(mut self) -> Result<Spill, FilterError> {
        self.flush()?;
        Ok(Spill {
            _dir: self.dir,
            files: self.files,
            rows: self.rows,
        })
    }
}

impl AccessBatches for SelectionBatches<'_> {
    fn len(&self) -> u64 {
        self.sel.count
    }

    fn classes(&self) -> Option<&ClassNames> {
        self.colour.as_ref().map(|c| &c.1)
    }

    fn unique_times(&self) -> bool {
        true
    }

    /// From the tables when uncoloured (the colour classes come only from
    /// the cache model's pass); see [`spans_from_tables`].
    fn var_spans(&self) -> Option<Vec<Option<VarSpan>>> {
        if self.colour.is_some() {
            return None;
        }
        let spans = spans_from_tables(self.a, &self.sel.keep)?;
        let total: u64 = spans.iter().flatten().map(|s| s.accesses).sum();
        (total == self.sel.count).then_some(spans)
    }

    /// Cost: the first whole pass reads the access list (every access when
    /// coloured, since the cache model sees them all; else only those of
    /// the selected variables are copied into batches), with one hash
    /// lookup per selected access for its occurrence, and may write the
    /// selection to disk (see [`SelectionBatches`]); later passes then read
    /// only the selection.
    fn visit(&self, f: &mut BatchFn) -> Result<(), FilterError> {
        if let Some(s) = self.spill.borrow().as_ref() {
            return self.visit_spill(s, f);
        }
        let mut out = self
            .spill_folder()
            .and_then(|folder| SpillWriter::start(&folder, self.colour.is_some()).ok());
        let spilled = self.visit_list(f, out.as_mut())?;
        if let (true, Some(w)) = (spilled, out) {
            *self.spill.borrow_mut() = w.finish().ok();
        }
        Ok(())
    }
}
