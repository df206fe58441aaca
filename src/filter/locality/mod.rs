//! Locality by name: cache simulation, reuse distance, access-pattern labels
//! and false sharing, per variable and per source line.
//!
//! Every analysis here is an [`AccessSink`]: it consumes [`NamedAccess`]
//! records in time order, one batch at a time, and keeps state bounded by
//! the number of distinct cache lines, variables and source lines it has
//! seen, never by the length of the trace. [`drive`] feeds the sinks from an
//! [`Analysis`]' access list in batches of [`BATCH`] rows; it is the only
//! part that knows where the accesses come from, so a streamed access list
//! replaces it without touching the sinks.
//!
//! - [`cache`]: the cache model (`set_cache`) and its simulator;
//! - [`reuse`]: exact (or sampled) LRU stack distance;
//! - [`pattern`]: stride labels in the array's index space;
//! - [`sharing`]: lines shared between threads, true and false sharing;
//! - [`report`]: runs the sinks and turns their results into tables;
//! - the annotated source page is drawn by the figures stage from a
//!   cache report;
//! - [`colour`]: per-access colour classes and pattern labels for figures;
//! - [`whatif`]: the report under another layout of one variable;
//! - [`advise`]: the layout changes `what_if` predicts, ranked;
//! - [`recorded`]: the cache model fed while the analysis streams, and the
//!   counts it saves.

pub(crate) mod advise;
pub mod cache;
pub mod colour;
pub(crate) mod compare;
mod pages;
pub(crate) mod pattern;
pub mod recorded;
pub(crate) mod reorder;
pub mod report;
pub(crate) mod reuse;
pub(crate) mod sharing;
mod slots;
pub(crate) mod sweep;
pub(crate) mod whatif;

use super::analysis::Analysis;
use super::error::FilterError;

pub use super::access::{AccessSink, LineId, NamedAccess, VarId};

/// What the sinks need to know about one variable.
#[derive(Clone, Debug)]
pub struct VarInfo {
    /// Display name.
    pub name: String,
    /// Runtime start address.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
    /// Element size in bytes, 0 when unknown.
    pub elem_size: u32,
    /// Dimensions, outermost first, empty when unknown.
    pub dims: Vec<u64>,
    /// `H`, `S` or `G`.
    pub scope: crate::trace::naming::Scope,
    /// Not user data (Valgrind's client-request block).
    pub internal: bool,
}

/// Names of variables and source lines: the small tables the sinks and the
/// reports refer to by row.
///
/// Reports name a variable by its *display row*, as `memory_stats` does
/// ([`crate::filter::stats::display_rows`]): under `set_heap_grouping
/// site` the 200 nodes of a list are one row `n` and the pointer that
/// shares their name is `n@S`. Sinks keep counting per variable; the
/// reports sum a row's variables, so every report agrees on names, grouping
/// and totals.
#[derive(Clone, Debug, Default)]
pub struct Names {
    /// Variables, by row of the variable table.
    pub vars: Vec<VarInfo>,
    /// `file.c:LINE` (or `?`), by row of the line table.
    pub sources: Vec<String>,
    /// Per variable: its display row. Variables past its end (the layout
    /// predictions add some) are rows of their own, named by `vars`.
    pub row_of: Vec<u32>,
    /// Per display row: its name.
    pub row_names: Vec<String>,
}

impl Names {
    /// The names of an analysis, each block its own row (`n#1`, `n#2`).
    /// Cost: one pass over its variable and line tables.
    pub fn of(a: &Analysis) -> Result<Names, FilterError> {
        Names::grouped(a, crate::filter::stats::Grouping::Instances)
    }

    /// The names of an analysis with heap blocks grouped as `grouping`
    /// says, as `memory_stats` shows them. Cost: one pass over its variable
    /// and line tables, and a hash probe per heap block.
    pub fn grouped(
        a: &Analysis,
        grouping: crate::filter::stats::Grouping,
    ) -> Result<Names, FilterError> {
        let vars = a
            .vars
            .iter()
            .map(|v| VarInfo {
                name: v.name.clone(),
                base: v.base,
                size: v.size,
                elem_size: v.elem_size,
                dims: v.dims.clone(),
                scope: v.scope,
                internal: v.internal,
            })
            .collect();
        let src = a
            .lines
            .column(super::schema::line::SOURCE)?
            .str()?
            .into_iter()
            .map(|s| s.unwrap_or("?").to_string())
            .collect();
        let rows = crate::filter::stats::display_rows(a, grouping);
        Ok(Names {
            vars,
            sources: src,
            row_of: rows.row_of,
            row_names: rows.names,
        })
    }

    /// The display row of variable `v`: its group's row, or for a variable
    /// past the grouped ones a row of its own numbered after them.
    pub fn row(&self, v: VarId) -> u32 {
        match self.row_of.get(v.index()) {
            Some(&r) => r,
            None => (self.row_names.len() + v.index() - self.row_of.len()) as u32,
        }
    }

    /// The name of display row `r` (see [`Self::row`]).
    pub fn row_name(&self, r: u32) -> &str {
        let r = r as usize;
        if let Some(n) = self.row_names.get(r) {
            return n;
        }
        let v = self.row_of.len() + r - self.row_names.len();
        self.vars.get(v).map_or("?", |v| v.name.as_str())
    }

    /// The display name of variable `v`: its row's name (`n` for any of a
    /// list's grouped nodes).
    pub fn var_name(&self, v: VarId) -> &str {
        self.row_name(self.row(v))
    }

    /// The `file.c:LINE` of line row `l`.
    pub fn source(&self, l: LineId) -> &str {
        self.sources.get(l.index()).map_or("?", |s| s.as_str())
    }
}

/// Rows per batch handed to the sinks: large enough to amortise the column
/// slicing, small enough (64 Ki rows, 2.5 MB of records) to stay in cache.
pub const BATCH: usize = 1 << 16;

/// Feeds every access of `a`, in time order, to each sink, a batch of at
/// most [`BATCH`] rows at a time. Returns the number of accesses fed.
///
/// The access list is read and turned into named accesses on a thread of
/// its own, so that on two cores decoding costs the sinks no time; the
/// sinks run on the caller's thread.
///
/// Cost: one pass over the access list, read back a row group at a time
/// (from disk for windows not in memory); memory is one row group and
/// [`IN_FLIGHT`] batches of records, whatever the trace's length.
pub fn drive(a: &Analysis, sinks: &mut [&mut dyn AccessSink]) -> Result<u64, FilterError> {
    use std::sync::mpsc::sync_channel;
    let (to, from) = sync_channel::<Vec<NamedAccess>>(IN_FLIGHT);
    let (give_back, back) = sync_channel::<Vec<NamedAccess>>(IN_FLIGHT + 2);
    std::thread::scope(|scope| {
        let reader = spawn_named(scope, "mapvis-read", "access list reader", move || {
            read_batches(a, &to, &back)
        })?;
        let mut fed = 0u64;
        for mut batch in from {
            for s in sinks.iter_mut() {
                s.accesses(&batch);
            }
            fed += batch.len() as u64;
            batch.clear();
            let _ = give_back.try_send(batch);
        }
        join_named(reader, "access list reader")?;
        Ok(fed)
    })
}

/// [`drive`] with the sinks in two groups: `mine` on the caller's thread,
/// `theirs` on a thread of their own (`mapvis-sims`), each fed every batch
/// in time order. For several independent models over one stream (the
/// layouts `what_if` predicts together), so that on two cores they take
/// about half the time. Returns the number of accesses fed.
///
/// Each batch is shared, not copied: it goes to the other thread behind an
/// `Arc` and back to the reader once both groups are done with it.
///
/// Cost: as [`drive`], plus at most [`IN_FLIGHT`] more batches held while
/// the other thread catches up.
///
/// # Errors
/// As [`drive`].
pub fn drive_split(
    a: &Analysis,
    mine: &mut [&mut dyn AccessSink],
    theirs: &mut [&mut (dyn AccessSink + Send)],
) -> Result<u64, FilterError> {
    use std::collections::VecDeque;
    use std::sync::mpsc::sync_channel;
    use std::sync::Arc;
    if theirs.is_empty() {
        return drive(a, mine);
    }
    let (to, from) = sync_channel::<Vec<NamedAccess>>(IN_FLIGHT);
    let (give_back, back) = sync_channel::<Vec<NamedAccess>>(2 * IN_FLIGHT + 2);
    let (to_sims, sims_in) = sync_channel::<Arc<Vec<NamedAccess>>>(IN_FLIGHT);
    let (done, sims_done) = sync_channel::<()>(2 * IN_FLIGHT + 2);
    std::thread::scope(|scope| {
        let reader = spawn_named(scope, "mapvis-read", "access list reader", move || {
            read_batches(a, &to, &back)
        })?;
        let sims = spawn_named(scope, "mapvis-sims", "second simulation", move || {
            for b in sims_in {
                for s in theirs.iter_mut() {
                    s.accesses(&b);
                }
                drop(b);
                if done.send(()).is_err() {
                    break;
                }
            }
            Ok(())
        })?;
        let mut fed = 0u64;
        let mut pending: VecDeque<Arc<Vec<NamedAccess>>> = VecDeque::new();
        // The oldest batch, once the other thread is done with it, back
        // to the reader.
        let recycle = |pending: &mut VecDeque<Arc<Vec<NamedAccess>>>| {
            let Some(b) = pending.pop_front() else {
                return;
            };
            if sims_done.recv().is_ok() {
                if let Some(mut b) = Arc::into_inner(b) {
                    b.clear();
                    let _ = give_back.try_send(b);
                }
            }
        };
        for batch in from {
            let batch = Arc::new(batch);
            if to_sims.send(Arc::clone(&batch)).is_err() {
                break;
            }
            for s in mine.iter_mut() {
                s.accesses(&batch);
            }
            fed += batch.len() as u64;
            pending.push_back(batch);
            if pending.len() > IN_FLIGHT {
                recycle(&mut pending);
            }
        }
        drop(to_sims);
        while !pending.is_empty() {
            recycle(&mut pending);
        }
        join_named(sims, "second simulation")?;
        join_named(reader, "access list reader")?;
        Ok(fed)
    })
}

/// The end of a thread [`spawn_named`] started: its result, or the error
/// naming it (`what`) when it panicked.
fn join_named(
    h: std::thread::ScopedJoinHandle<'_, Result<(), FilterError>>,
    what: &str,
) -> Result<(), FilterError> {
    crate::filter::error::joined(h.join(), what, format!("({what} thread)").as_ref())
}

/// Starts `f` on a scoped thread called `name`; `what` names it in the
/// error when it cannot start.
fn spawn_named<'scope, 'env, F>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    name: &str,
    what: &str,
    f: F,
) -> Result<std::thread::ScopedJoinHandle<'scope, Result<(), FilterError>>, FilterError>
where
    F: FnOnce() -> Result<(), FilterError> + Send + 'scope,
{
    std::thread::Builder::new()
        .name(name.into())
        .spawn_scoped(scope, f)
        .map_err(|source| {
            crate::filter::error::thread_not_started(
                what,
                format!("({what} thread)").into(),
                source,
            )
        })
}

/// Batches read ahead of the sinks at most: 16 batches of [`BATCH`]
/// accesses, 42 MB. The reader decodes a row group (16 batches) at a time
/// and then waits; with 3 the sinks' thread waited for it a quarter of the
/// time, and a new geometry's simulation of the matrix multiply took 6.7
/// to 7.5 s instead of 4.8 to 5.5 s.
const IN_FLIGHT: usize = 16;

/// [`drive`]'s reader: every access of `a` in batches of [`BATCH`] sent
/// to `to`, refilling the emptied batches `back` returns. Stops early,
/// without error, when the sinks' end has hung up.
fn read_batches(
    a: &Analysis,
    to: &std::sync::mpsc::SyncSender<Vec<NamedAccess>>,
    back: &std::sync::mpsc::Receiver<Vec<NamedAccess>>,
) -> Result<(), FilterError> {
    use crate::filter::columns::{Columns, Slices};
    let mut cols = Columns::default();
    a.accesses.for_each(None, &mut |df| {
        // A row group of the list is about a tenth of a second of work.
        if crate::cancel::requested() {
            return Err(FilterError::Interrupted);
        }
        let n = df.height();
        let slices = match Slices::of(&df) {
            Some(s) => s,
            None => {
                cols.read(&df)?;
                cols.slices()
            }
        };
        let mut start = 0usize;
        while start < n {
            let len = BATCH.min(n - start);
            let mut batch = back
                .try_recv()
                .unwrap_or_else(|_| Vec::with_capacity(BATCH));
            slices.accesses_into(start..start + len, &mut batch);
            if to.send(batch).is_err() {
                return Ok(false);
            }
            start += len;
        }
        Ok(true)
    })
}

/// Index of (variable, source line) pairs, assigned in order of first
/// appearance. A small direct-mapped cache of recent pairs answers most
/// lookups with one compare (a loop nest cycles through a few pairs);
/// misses scan the few variables one line touches. A line that touches
/// many variables (a local of a recursive function, one instance per
/// frame: 100 000 at depth 100 000) moves to a hash map once it has
/// [`SCAN_MAX`] pairs, so a miss never costs more than that scan and a
/// hash probe.
#[derive(Clone, Debug)]
pub struct PairIndex {
    /// Per line: its pairs (variable, id) while fewer than [`SCAN_MAX`];
    /// once full, the line's pairs are in `many`.
    by_line: Vec<Vec<(VarId, u32)>>,
    /// (variable, line) to id, for lines with [`SCAN_MAX`] pairs or more.
    many: std::collections::HashMap<(VarId, LineId), u32>,
    pairs: Vec<(VarId, LineId)>,
    /// (var, line, id) by [`recent_slot`]; `u32::MAX` var: empty.
    recent: Box<[(VarId, LineId, u32); RECENT]>,
}

/// Slots of [`PairIndex`]'s cache of recent pairs.
const RECENT: usize = 256;

/// Pairs of one line that [`PairIndex`] scans before it hashes them.
const SCAN_MAX: usize = 32;

/// The cache slot of (`var`, `line`): a multiplicative hash of both.
#[inline]
fn recent_slot(var: VarId, line: LineId) -> usize {
    let k = (u64::from(var.0) << 32 | u64::from(line.0)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (k >> (64 - RECENT.trailing_zeros())) as usize
}

impl Default for PairIndex {
    fn default() -> Self {
        PairIndex::new()
    }
}

impl PairIndex {
    /// An empty index.
    pub fn new() -> PairIndex {
        PairIndex {
            by_line: Vec::new(),
            many: Default::default(),
            pairs: Vec::new(),
            recent: Box::new([(VarId(u32::MAX), LineId(u32::MAX), 0); RECENT]),
        }
    }

    /// The id of (`var`, `line`), created on first use.
    #[inline]
    pub fn id(&mut self, var: VarId, line: LineId) -> u32 {
        let slot = recent_slot(var, line);
        let (v, l, id) = self.recent[slot];
        if v == var && l == line {
            return id;
        }
        let id = self.find(var, line);
        self.recent[slot] = (var, line, id);
        id
    }

    /// [`Self::id`] past the cache.
    #[inline(never)]
    fn find(&mut self, var: VarId, line: LineId) -> u32 {
        let l = line.index();
        if l >= self.by_line.len() {
            self.by_line.resize(l + 1, Vec::new());
        }
        let slot = &mut self.by_line[l];
        if slot.len() < SCAN_MAX {
            if let Some(&(_, id)) = slot.iter().find(|(v, _)| *v == var) {
                return id;
            }
        } else if let Some(&id) = self.many.get(&(var, line)) {
            return id;
        }
        let id = self.pairs.len() as u32;
        self.pairs.push((var, line));
        if slot.len() < SCAN_MAX {
            slot.push((var, id));
            if slot.len() == SCAN_MAX {
                // The line is full: its pairs move to the hash map, and
                // the full slot stays as the mark that they did.
                self.many.extend(slot.iter().map(|&(v, i)| ((v, line), i)));
            }
        } else {
            self.many.insert((var, line), id);
        }
        id
    }

    /// (variable, line) of each id, in id order.
    pub fn pairs(&self) -> &[(VarId, LineId)] {
        &self.pairs
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether no pair was seen.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

/// Moves `s[i]` to the front, shifting `s[..i]` back by one: the LRU
/// "make most recent" step. For the few ways of a cache set a loop is
/// faster than `rotate_right`, which calls `memmove`; the loop carries
/// each element forward in a register, as a plain backward copy is
/// turned into that same `memmove` call by the compiler.
#[inline]
pub(crate) fn to_front<T: Copy>(s: &mut [T], i: usize) {
    let mut carry = s[0];
    for x in &mut s[1..=i] {
        std::mem::swap(x, &mut carry);
    }
    s[0] = carry;
}

#[cfg(test)]
mod tests {
    use super::to_front;

    /// `to_front` is the rotation of the prefix it names, and leaves the
    /// rest alone.
    #[test]
    fn to_front_rotates_the_prefix() {
        for n in 1..10usize {
            for i in 0..n {
                let mut got: Vec<usize> = (0..n + 2).collect();
                let mut want = got.clone();
                to_front(&mut got, i);
                want[..=i].rotate_right(1);
                assert_eq!(got, want, "n {n} i {i}");
            }
        }
    }
}
