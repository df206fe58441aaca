//! Loop orders predicted from the recorded trace: the iterations of a
//! two-level loop nest that walks a 2D array column by column, replayed in
//! another order (`what_if NAME interchange`, `what_if NAME tile SIZE`).
//!
//! A layout change moves addresses; a loop change moves accesses in time.
//! The nest is recovered from the trace, never guessed: its *anchor* is
//! the array's access on one source line, and every anchor access must be
//! one element, one per iteration, walking a column before the next
//! (elements (r0, c), (r0+1, c), …, then the next column), the same
//! rectangle again on each repetition of the nest (a third loop around it,
//! as in a matrix product). An *iteration* is the anchor access and the
//! accesses to heap and global data that follow it up to the next anchor;
//! every iteration must hold the same number of them, from one thread, and
//! the array no other access. Where the trace does not show that, nothing
//! is predicted and the reason is given ([`NestError`]).
//!
//! The prediction replays each repetition's iterations in the new order:
//! - **interchange**: the inner loop (down a column) becomes the outer one,
//!   so the walk runs along the rows;
//! - **tile T**: both loops cut into blocks of T, the blocks visited in
//!   the original order, and the iterations inside a block too.
//!
//! Accesses to the stack (loop counters, locals) keep their place in the
//! stream, as a loop's bookkeeping does in the changed program; the moved
//! accesses take the times of the places they fill, so the stream stays in
//! time order. Cost: one pass to find the nest (O(1) state), then the
//! simulation, which holds one repetition of the nest at a time (refused
//! past [`MAX_REPETITION`] accesses rather than grow without bound).
use std::collections::BTreeSet;

use super::{AccessSink, LineId, NamedAccess, VarId, BATCH};
use crate::filter::batches::{AccessBatch, AccessBatches, BatchFn, ClassNames};
use crate::filter::error::FilterError;

/// Accesses of one repetition of the nest that the prediction holds at
/// most (40 bytes each: 320 MB).
pub const MAX_REPETITION: u64 = 8 << 20;

/// Moved accesses one iteration may hold (a body larger than this is not
/// a loop body this recognises).
const MAX_ITERATION: usize = 1024;

/// A loop order to predict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Order {
    /// The two loops swapped.
    Interchange,
    /// Both loops cut into blocks of this many iterations.
    Tile(u64),
}

/// A two-level nest recovered from the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nest {
    /// The array walked column by column.
    pub anchor: VarId,
    /// The source line of the anchor accesses.
    pub line: LineId,
    /// Iterations of the inner loop (rows of a column walked).
    pub inner: u64,
    /// Iterations of the outer loop (columns walked).
    pub outer: u64,
    /// Times the whole nest runs, one after another.
    pub reps: u64,
    /// Moved accesses per iteration (the anchor's among them).
    pub chunk: usize,
    /// Time of the first moved access (of the first iteration).
    pub start: u64,
    /// Time of the last moved access.
    pub end: u64,
    /// The heap and global variables the iterations access (moved).
    pub touched: Vec<VarId>,
    /// The source lines of the moved accesses.
    pub lines: Vec<LineId>,
}

impl Nest {
    /// Iterations per repetition.
    pub fn iterations(&self) -> u64 {
        self.inner * self.outer
    }

    /// The original iteration index of each iteration in `order`, for one
    /// repetition: iteration `o * inner + i` is column `o`'s `i`-th.
    pub fn sequence(&self, order: &Order) -> Vec<u64> {
        sequence(self.inner, self.outer, order)
    }
}

/// The original iteration index of each iteration of an `inner` x `outer`
/// nest, visited in `order`. O(inner x outer).
pub fn sequence(inner: u64, outer: u64, order: &Order) -> Vec<u64> {
    let mut out = Vec::with_capacity((inner * outer) as usize);
    match order {
        Order::Interchange => {
            for i in 0..inner {
                out.extend((0..outer).map(|o| o * inner + i));
            }
        }
        Order::Tile(t) => {
            let t = (*t).max(1);
            for ot in (0..outer).step_by(t as usize) {
                for it in (0..inner).step_by(t as usize) {
                    for o in ot..(ot + t).min(outer) {
                        out.extend((it..(it + t).min(inner)).map(|i| o * inner + i));
                    }
                }
            }
        }
    }
    out
}

/// Why a nest cannot be recovered from the trace, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NestError(pub String);

/// What the anchor array looks like: its base and shape.
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    /// Base address.
    pub base: u64,
    /// Columns per row.
    pub cols: u64,
    /// Rows.
    pub rows: u64,
    /// Element bytes.
    pub elem: u64,
}

impl Grid {
    /// (row, column) of an access, when it lies within one element.
    fn cell(&self, addr: u64, size: u32) -> Option<(u64, u64)> {
        let off = addr.checked_sub(self.base)?;
        let idx = off / self.elem;
        (off % self.elem + u64::from(size) <= self.elem && idx < self.rows * self.cols)
            .then_some((idx / self.cols, idx % self.cols))
    }
}

/// A moved access as the finder keeps it: (time, variable, line).
type Seen = (u64, VarId, LineId);

/// The pass that recovers the nest: an [`AccessSink`] whose state is one
/// iteration's accesses and a few counters. Feed it every access, then
/// call [`Finder::finish`].
///
/// An iteration's moved accesses are its *signature*: (variable, line) in
/// order, the anchor among them. Between two anchors the stream must show
/// the signature turned round at the anchor (the accesses after the anchor,
/// then those before the next one); before the first anchor and after the
/// last, the parts of the first and last iterations that lie there are
/// found by matching the signature, so each iteration is replayed whole.
pub struct Finder<'a> {
    anchor: VarId,
    line: LineId,
    grid: Grid,
    /// Per variable: whether its accesses stay in place (stack).
    fixed: &'a [bool],
    failed: Option<String>,
    anchors: u64,
    first: (u64, u64),
    inner: Option<u64>,
    outer: Option<u64>,
    /// The moved accesses from one anchor to the next, the first time.
    sig: Vec<(VarId, LineId)>,
    /// The moved accesses since the last anchor, that anchor first (at
    /// most an iteration's worth).
    cur: Vec<Seen>,
    /// How many of `cur` match the signature from its start.
    cur_match: usize,
    /// Moved accesses since the last anchor, that anchor included.
    since: usize,
    /// The last moved accesses before the first anchor.
    before: std::collections::VecDeque<Seen>,
    tid: u32,
    /// Time of the first anchor.
    first_time: u64,
    /// Accesses since the current repetition's first anchor.
    rep_count: u64,
    largest_rep: u64,
}

impl<'a> Finder<'a> {
    /// A finder of the nest whose anchor is `anchor`'s access on `line`,
    /// the array laid out as `grid`; `fixed[v]` says variable `v`'s
    /// accesses stay in place.
    pub fn new(anchor: VarId, line: LineId, grid: Grid, fixed: &'a [bool]) -> Finder<'a> {
        Finder {
            anchor,
            line,
            grid,
            fixed,
            failed: None,
            anchors: 0,
            first: (0, 0),
            inner: None,
            outer: None,
            sig: Vec::new(),
            cur: Vec::new(),
            cur_match: 0,
            since: 0,
            before: Default::default(),
            tid: 0,
            first_time: 0,
            rep_count: 0,
            largest_rep: 0,
        }
    }

    fn fail(&mut self, why: String) {
        self.failed.get_or_insert(why);
    }

    fn access(&mut self, r: &NamedAccess) {
        if self.fixed.get(r.var.index()).copied().unwrap_or(true) {
            self.rep_count += 1;
            return;
        }
        let seen = (r.time, r.var, r.line);
        if r.var == self.anchor && r.line == self.line {
            return self.anchor_access(r);
        }
        if self.anchors == 0 {
            if self.before.len() == MAX_ITERATION {
                self.before.pop_front();
            }
            self.before.push_back(seen);
            return;
        }
        if r.tid != self.tid {
            return self.fail(
                "another thread touches heap or global data while the nest runs, so the nest's \
                 accesses are not one thread's to reorder"
                    .into(),
            );
        }
        self.rep_count += 1;
        self.since += 1;
        let limit = if self.sig.is_empty() {
            MAX_ITERATION
        } else {
            self.sig.len()
        };
        if self.cur.len() < limit {
            if self.cur_match == self.cur.len()
                && self.sig.get(self.cur.len()) == Some(&(r.var, r.line))
            {
                self.cur_match += 1;
            }
            self.cur.push(seen);
        } else if self.sig.is_empty() {
            self.fail(format!(
                "an iteration of the nest holds more than {MAX_ITERATION} accesses"
            ));
        }
    }

    fn anchor_access(&mut self, r: &NamedAccess) {
        if self.anchors == 0 {
            self.tid = r.tid;
            self.first_time = r.time;
        } else if r.tid != self.tid {
            return self.fail("the nest's iterations are run by more than one thread".into());
        }
        if self.anchors == 1 {
            self.sig = self.cur.iter().map(|&(_, v, l)| (v, l)).collect();
            if self.sig[1..].iter().any(|&(v, _)| v == self.anchor) {
                return self.fail(
                    "the array is also accessed by another line inside each iteration, so an \
                     iteration is not one element"
                        .into(),
                );
            }
        } else if self.anchors > 1 && (self.since != self.sig.len() || self.cur_match != self.since)
        {
            return self.fail(format!(
                "its iterations differ: {} accesses to heap and global data in one, {} in \
                 another (access {})",
                self.sig.len(),
                self.since,
                r.time
            ));
        }
        self.cur.clear();
        self.cur.push((r.time, r.var, r.line));
        self.cur_match = 1;
        self.since = 1;
        self.rep_count += 1;
        let Some(cell) = self.grid.cell(r.addr, r.size) else {
            return self.fail(format!(
                "the access at {:#x} ({} bytes) is not one element of the array",
                r.addr, r.size
            ));
        };
        self.check_walk(cell);
        self.anchors += 1;
    }

    /// Checks that anchor access number `self.anchors` is the next element
    /// of a column-by-column walk, learning the walk's extent.
    fn check_walk(&mut self, (r, c): (u64, u64)) {
        let m = self.anchors;
        if m == 0 {
            self.first = (r, c);
            return;
        }
        let (r0, c0) = self.first;
        let Some(ni) = self.inner else {
            if (r, c) == (r0 + m, c0) {
                return;
            }
            if (r, c) == (r0, c0 + 1) && m >= 2 {
                self.inner = Some(m);
                return;
            }
            return self.fail(format!(
                "the array is not walked column by column, one element an iteration: element \
                 ({r}, {c}) follows ({}, {c0})",
                r0 + m - 1
            ));
        };
        let q = match self.outer {
            None if m.is_multiple_of(ni) && (r, c) == (r0, c0) => {
                self.outer = Some(m / ni);
                0
            }
            None => m,
            Some(nj) => m % (ni * nj),
        };
        if q == 0 {
            self.largest_rep = self.largest_rep.max(self.rep_count - 1);
            self.rep_count = 1;
        }
        if (r, c) != (r0 + q % ni, c0 + q / ni) {
            self.fail(format!(
                "the walk leaves the rectangle of its first columns: element ({r}, {c}) where \
                 ({}, {}) was expected",
                r0 + q % ni,
                c0 + q / ni
            ));
        }
    }

    /// How many of the last moved accesses before the first anchor match
    /// the end of the signature (the first iteration's part before its
    /// anchor), at most `most`.
    fn lead(&self, most: usize) -> usize {
        let k = self.sig.len();
        (0..most.min(self.before.len()))
            .take_while(|&d| {
                let (_, v, l) = self.before[self.before.len() - 1 - d];
                self.sig[k - 1 - d] == (v, l)
            })
            .count()
    }

    /// The nest, or why the trace does not show one.
    ///
    /// # Errors
    /// A [`NestError`] saying what in the trace does not fit a two-level
    /// nest walking the array column by column.
    pub fn finish(mut self) -> Result<Nest, NestError> {
        if let Some(why) = self.failed.take() {
            return Err(NestError(why));
        }
        if self.anchors < 4 {
            return Err(NestError(format!(
                "the line accesses the array {} times: too few to show a loop nest",
                self.anchors
            )));
        }
        let Some(ni) = self.inner else {
            return Err(NestError(
                "the walk stays in one column: there is no outer loop to change".into(),
            ));
        };
        let nj = self.outer.unwrap_or(self.anchors / ni);
        let n = ni * nj;
        if !self.anchors.is_multiple_of(n) {
            return Err(NestError(format!(
                "the walk ends part-way through a column ({} elements, columns of {ni})",
                self.anchors
            )));
        }
        // The last iteration: the accesses after its anchor that match the
        // signature; the first: those before its anchor that match the rest.
        let k = self.sig.len();
        let trail = self.cur_match - 1;
        let lead = k - 1 - trail;
        if self.lead(lead) < lead {
            return Err(NestError(
                "the nest's first and last iterations do not hold the accesses the others do"
                    .into(),
            ));
        }
        let start = self.before.get(self.before.len() - lead).map(|x| x.0);
        let end = self.cur[trail].0;
        let largest_rep = self.largest_rep.max(self.rep_count);
        if largest_rep > MAX_REPETITION {
            return Err(NestError(format!(
                "one run of the nest holds {largest_rep} accesses, more than the {MAX_REPETITION} \
                 the prediction holds in memory at once"
            )));
        }
        let touched: BTreeSet<VarId> = self.sig.iter().map(|x| x.0).collect();
        let lines: BTreeSet<LineId> = self.sig.iter().map(|x| x.1).collect();
        Ok(Nest {
            anchor: self.anchor,
            line: self.line,
            inner: ni,
            outer: nj,
            reps: self.anchors / n,
            chunk: k,
            start: start.unwrap_or(self.first_time),
            end,
            touched: touched.into_iter().collect(),
            lines: lines.into_iter().collect(),
        })
    }
}

impl AccessSink for Finder<'_> {
    fn accesses(&mut self, batch: &[NamedAccess]) {
        if self.failed.is_some() {
            return;
        }
        for r in batch {
            self.access(r);
        }
    }
}

/// One order a [`Replay`] serves: its sequence and the sinks it feeds.
struct Target<'a, 'b> {
    /// Original iteration index per new position, for one repetition.
    seq: Vec<u64>,
    sinks: &'a mut [&'b mut dyn AccessSink],
}

/// The sink that replays the nest's iterations in other orders and hands
/// every access on, in time order, to each order's sinks. The orders of
/// one nest share one held repetition: memory is that repetition (40
/// bytes an access, bounded by [`MAX_REPETITION`]) and a batch per order,
/// however many orders.
pub struct Replay<'a, 'b> {
    nest: &'a Nest,
    fixed: &'a [bool],
    targets: Vec<Target<'a, 'b>>,
    /// The current repetition's accesses, in recorded order.
    held: Vec<NamedAccess>,
    /// Positions in `held` of the moved accesses.
    moved_at: Vec<u32>,
    /// Accesses outside the nest, queued for every order.
    out: Vec<NamedAccess>,
    /// One order's next batch.
    scratch: Vec<NamedAccess>,
    /// Accesses moved, per order.
    pub moved: u64,
    /// Repetitions whose iterations did not come out as the finder saw
    /// them (left as recorded; 0 when the trace is the one surveyed).
    pub mismatched: u64,
}

impl<'a, 'b> Replay<'a, 'b> {
    /// A replay of `nest` in each of `orders`, each feeding its sinks;
    /// `fixed` as for [`Finder::new`].
    pub fn new(
        nest: &'a Nest,
        fixed: &'a [bool],
        orders: Vec<(&Order, &'a mut [&'b mut dyn AccessSink])>,
    ) -> Replay<'a, 'b> {
        Replay {
            nest,
            fixed,
            targets: (orders.into_iter())
                .map(|(o, sinks)| Target {
                    seq: nest.sequence(o),
                    sinks,
                })
                .collect(),
            held: Vec::new(),
            moved_at: Vec::new(),
            out: Vec::new(),
            scratch: Vec::new(),
            moved: 0,
            mismatched: 0,
        }
    }

    /// Serves one more order, feeding `sinks`.
    pub fn add(&mut self, order: &Order, sinks: &'a mut [&'b mut dyn AccessSink]) {
        self.targets.push(Target {
            seq: self.nest.sequence(order),
            sinks,
        });
    }

    /// Hands on what came before the held repetition, then the repetition
    /// in each order (as recorded when it did not hold the iterations the
    /// finder saw); keeps the buffers' room for the next one.
    fn flush(&mut self) {
        self.send();
        let k = self.nest.chunk;
        let whole = self.moved_at.len() == self.nest.iterations() as usize * k;
        if whole {
            self.moved += self.moved_at.len() as u64;
        } else if !self.held.is_empty() {
            self.mismatched += 1;
        }
        for t in self.targets.iter_mut() {
            let mut m = 0;
            for (p, r) in self.held.iter().enumerate() {
                let moved = whole && self.moved_at.get(m) == Some(&(p as u32));
                let x = if moved {
                    let src = self.moved_at[t.seq[m / k] as usize * k + m % k];
                    m += 1;
                    NamedAccess {
                        time: r.time,
                        ..self.held[src as usize]
                    }
                } else {
                    *r
                };
                self.scratch.push(x);
                if self.scratch.len() == BATCH {
                    t.sinks.iter_mut().for_each(|s| s.accesses(&self.scratch));
                    self.scratch.clear();
                }
            }
            if !self.scratch.is_empty() {
                t.sinks.iter_mut().for_each(|s| s.accesses(&self.scratch));
                self.scratch.clear();
            }
        }
        self.held.clear();
        self.moved_at.clear();
    }

    fn send(&mut self) {
        for part in self.out.chunks(BATCH) {
            for t in self.targets.iter_mut() {
                t.sinks.iter_mut().for_each(|s| s.accesses(part));
            }
        }
        self.out.clear();
    }
}

impl AccessSink for Replay<'_, '_> {
    fn accesses(&mut self, batch: &[NamedAccess]) {
        let (start, end) = (self.nest.start, self.nest.end);
        let per_rep = self.nest.iterations() as usize * self.nest.chunk;
        for r in batch {
            let fixed = self.fixed.get(r.var.index()).copied().unwrap_or(true);
            if r.time < start || r.time > end || (fixed && self.held.is_empty()) {
                if !self.held.is_empty() {
                    self.flush();
                }
                self.out.push(*r);
                continue;
            }
            if !fixed {
                self.moved_at.push(self.held.len() as u32);
            }
            self.held.push(*r);
            if self.moved_at.len() == per_rep {
                self.flush();
            }
        }
        self.send();
    }
}

/// The accesses a figure reads, with the nest's anchor accesses in the new
/// order: the figure of `what_if NAME interchange|tile ... save`. Each
/// anchor access takes the time of the place it fills, so the batches stay
/// in time order; other accesses pass as recorded. Holds one repetition's
/// anchor accesses (one a cell of the walk) at a time.
pub struct Reordered<'a> {
    inner: &'a dyn AccessBatches,
    nest: &'a Nest,
    seq: Vec<u64>,
}

impl<'a> Reordered<'a> {
    /// The accesses of `inner`, `nest`'s anchor accesses replayed in
    /// `order`.
    pub fn new(inner: &'a dyn AccessBatches, nest: &'a Nest, order: &Order) -> Reordered<'a> {
        Reordered {
            inner,
            nest,
            seq: nest.sequence(order),
        }
    }

    /// Whether row `k` of `b` is an anchor access inside the nest.
    fn is_anchor(&self, b: &AccessBatch, k: usize) -> bool {
        (self.nest.start..=self.nest.end).contains(&b.time[k])
            && b.var[k] == self.nest.anchor.0
            && b.line[k] == self.nest.line.0
    }
}

/// Appends row `k` of `from` to `to`, with time `time`.
fn push_row(to: &mut AccessBatch, from: &AccessBatch, k: usize, time: u64) {
    to.stored.time.push(time);
    to.stored.op.push(from.op[k]);
    to.stored.addr.push(from.addr[k]);
    to.stored.size.push(from.size[k]);
    to.stored.tid.push(from.tid[k]);
    to.stored.var.push(from.var[k]);
    to.stored.line.push(from.line[k]);
    to.occ.push(from.occ[k]);
    if let (Some(t), Some(f)) = (to.colour.as_mut(), from.colour.as_ref()) {
        t.push(f[k]);
    }
}

impl AccessBatches for Reordered<'_> {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn visit(&self, f: &mut BatchFn) -> Result<(), FilterError> {
        let mut held = AccessBatch::default();
        let mut out = AccessBatch::default();
        let mut go = true;
        self.inner.visit(&mut |b| {
            out = AccessBatch {
                colour: b.colour.as_ref().map(|_| Vec::new()),
                ..AccessBatch::default()
            };
            if held.is_empty() {
                held.colour = b.colour.as_ref().map(|_| Vec::new());
            }
            for k in 0..b.len() {
                if !self.is_anchor(b, k) {
                    push_row(&mut out, b, k, b.time[k]);
                    continue;
                }
                push_row(&mut held, b, k, b.time[k]);
                if held.len() == self.seq.len() {
                    for (q, &src) in self.seq.iter().enumerate() {
                        push_row(&mut out, &held, src as usize, held.time[q]);
                    }
                    held = AccessBatch {
                        colour: b.colour.as_ref().map(|_| Vec::new()),
                        ..AccessBatch::default()
                    };
                }
            }
            go = f(&out)?;
            Ok(go)
        })?;
        if go && !held.is_empty() {
            // A repetition cut short (a selection that ends inside it):
            // its accesses as recorded.
            f(&held)?;
        }
        Ok(())
    }

    fn classes(&self) -> Option<&ClassNames> {
        self.inner.classes()
    }

    fn unique_times(&self) -> bool {
        self.inner.unique_times()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3 x 2 nest (3 rows walked per column, 2 columns): interchange
    /// visits row 0 of both columns, then row 1, …; tiles of 2 visit the
    /// 2 x 2 block of rows 0-1, then the rest of the rows.
    #[test]
    fn the_new_orders_visit_every_iteration_once() {
        assert_eq!(sequence(3, 2, &Order::Interchange), [0, 3, 1, 4, 2, 5]);
        assert_eq!(sequence(3, 2, &Order::Tile(2)), [0, 1, 3, 4, 2, 5]);
        let mut t = sequence(7, 5, &Order::Tile(3));
        t.sort_unstable();
        assert_eq!(t, (0..35).collect::<Vec<u64>>());
    }

    fn access(time: u64, var: u32, line: u32, addr: u64) -> NamedAccess {
        NamedAccess {
            time,
            op: b'L',
            addr,
            size: 8,
            tid: 1,
            var: VarId(var),
            line: LineId(line),
        }
    }

    /// A column walk over a 4 x 3 grid of doubles at 0x1000 (variable 0,
    /// line 7), each iteration a read of the grid, a stack read (variable
    /// 1, stays) and a global write (variable 2); twice over.
    fn walk() -> Vec<NamedAccess> {
        let mut out = Vec::new();
        let mut t = 0;
        for _ in 0..2 {
            for c in 0..3u64 {
                for r in 0..4u64 {
                    out.push(access(t, 0, 7, 0x1000 + (r * 3 + c) * 8));
                    out.push(access(t + 1, 1, 8, 0x9000));
                    out.push(access(t + 2, 2, 7, 0x5000));
                    t += 3;
                }
            }
        }
        out.push(access(t, 0, 9, 0x1000));
        out
    }

    const FIXED: [bool; 3] = [false, true, false];
    const GRID: Grid = Grid {
        base: 0x1000,
        cols: 3,
        rows: 4,
        elem: 8,
    };

    fn find(accesses: &[NamedAccess]) -> Result<Nest, NestError> {
        let mut f = Finder::new(VarId(0), LineId(7), GRID, &FIXED);
        f.accesses(accesses);
        f.finish()
    }

    #[test]
    fn a_column_walk_is_found_with_its_extent() {
        let n = find(&walk()).unwrap();
        assert_eq!((n.inner, n.outer, n.reps, n.chunk), (4, 3, 2, 2));
        assert_eq!((n.start, n.end), (0, 71));
        assert_eq!(n.touched, [VarId(0), VarId(2)]);
        assert_eq!(n.lines, [LineId(7)]);
    }

    #[test]
    fn what_is_not_a_column_walk_is_refused_with_the_reason() {
        let mut w = walk();
        w.swap(0, 3);
        assert!(find(&w)
            .unwrap_err()
            .0
            .contains("not walked column by column"));
        let mut w = walk();
        w.remove(5);
        assert!(find(&w).unwrap_err().0.contains("iterations differ"));
        let mut w = walk();
        w[1].var = VarId(0);
        assert!(find(&w).unwrap_err().0.contains("another line"));
        let row_walk: Vec<NamedAccess> = (0..12).map(|k| access(k, 0, 7, 0x1000 + k * 8)).collect();
        assert!(find(&row_walk).is_err());
        // Another thread's write of the global inside the nest: no replay
        // of one thread's order could place it.
        let mut w = walk();
        w[8].tid = 2;
        assert!(find(&w).unwrap_err().0.contains("another thread"));
        let mut w = walk();
        w[9].tid = 2;
        assert!(find(&w).unwrap_err().0.contains("more than one thread"));
    }

    /// When the global is read before the grid in each iteration, the
    /// first iteration's read lies before the first anchor: the nest starts
    /// there, and ends at the last anchor.
    #[test]
    fn an_iteration_that_starts_before_its_anchor_is_kept_whole() {
        let mut w: Vec<NamedAccess> = vec![access(0, 2, 9, 0x5000)];
        let mut t = 1;
        for c in 0..3u64 {
            for r in 0..4u64 {
                w.push(access(t, 2, 7, 0x5000));
                w.push(access(t + 1, 0, 7, 0x1000 + (r * 3 + c) * 8));
                w.push(access(t + 2, 1, 8, 0x9000));
                t += 3;
            }
        }
        w.push(access(t, 2, 9, 0x5000));
        let n = find(&w).unwrap();
        assert_eq!((n.chunk, n.start, n.end, n.reps), (2, 1, 35, 1));
    }

    /// Collects what the replay hands on.
    struct Keep(Vec<NamedAccess>);
    impl AccessSink for Keep {
        fn accesses(&mut self, batch: &[NamedAccess]) {
            self.0.extend_from_slice(batch);
        }
    }

    /// Interchanged, the grid's reads run along its rows in each
    /// repetition; the stack reads stay where they were and every access
    /// keeps its time slot, fed in odd-sized batches.
    #[test]
    fn the_replay_walks_the_rows_and_keeps_the_stack_in_place() {
        let w = walk();
        let n = find(&w).unwrap();
        let (mut keep, mut tiled) = (Keep(Vec::new()), Keep(Vec::new()));
        let mut sinks: [&mut dyn AccessSink; 1] = [&mut keep];
        let mut tile_sinks: [&mut dyn AccessSink; 1] = [&mut tiled];
        let mut r = Replay::new(&n, &FIXED, vec![(&Order::Interchange, &mut sinks[..])]);
        r.add(&Order::Tile(2), &mut tile_sinks[..]);
        for part in w.chunks(5) {
            r.accesses(part);
        }
        assert_eq!((r.moved, r.mismatched), (48, 0));
        // The same held repetitions, tiled 2 x 2: columns 0-1 of rows 0-1,
        // then of rows 2-3, then column 2.
        let order: Vec<u64> = (tiled.0.iter())
            .filter(|a| a.var == VarId(0) && a.line == LineId(7))
            .map(|a| (a.addr - 0x1000) / 8)
            .collect();
        let once = [0, 3, 1, 4, 6, 9, 7, 10, 2, 5, 8, 11];
        assert_eq!(order, [once, once].concat());
        let got = keep.0;
        assert_eq!(got.len(), w.len());
        assert!(got.iter().zip(&w).all(|(g, o)| g.time == o.time));
        let grid: Vec<u64> = got
            .iter()
            .filter(|a| a.var == VarId(0) && a.line == LineId(7))
            .map(|a| (a.addr - 0x1000) / 8)
            .collect();
        let rows: Vec<u64> = (0..12).chain(0..12).collect();
        assert_eq!(grid, rows);
        assert!(got
            .iter()
            .zip(&w)
            .filter(|(_, o)| o.var == VarId(1))
            .all(|(g, o)| g == o));
    }
}
