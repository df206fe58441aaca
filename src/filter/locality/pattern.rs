//! Access-pattern labels per (variable, source line), in the array's index
//! space rather than in bytes.
//!
//! For each pair the sink follows the element index of successive accesses
//! by one thread (`(addr - base) / element size`). It describes the walk as
//! a person reading the loop would:
//!
//! - **The stride is measured between iterations.** A loop body may touch
//!   the pair's array several times an iteration: the load and the store
//!   of `a[i] += x`, the two loads of `a[i] * a[i]`, the six neighbours of
//!   a stencil on one line. The sink finds that period P (accesses of the
//!   pair per iteration, up to [`MAX_PERIOD`]) from the pair's first
//!   [`LEARN`] accesses: the smallest lag at which index differences stay
//!   the same from one access to the next. It then counts the differences
//!   between indices P accesses apart, so one step of the count is one
//!   iteration of the loop. A difference of 0 (the same element as an
//!   iteration before) is a repeat, counted apart from the moves; when
//!   repeats outnumber moves more than [`REUSE_RUN`] - 1 to 1 (the
//!   accumulator `c[i]` of an inner `k` loop), the pair reuses its element
//!   and the label says so.
//! - **A vector access is one step.** A contiguous sweep of 16- or 32-byte
//!   accesses over 8-byte elements moves 2 or 4 elements a step: a move of
//!   exactly the access' width is a unit-stride sweep, and the label names
//!   the width (`unit stride (16 B accesses)`).
//!
//! The moves are counted in a small space-saving table of the most frequent
//! ones. At the end the dominant move, read against the array's dimensions,
//! gives the label:
//!
//! | dominant move (elements) | label |
//! |---|---|
//! | none, or [`REUSE_RUN`] - 1 repeats or more per move | `stride 0: the same element reused` |
//! | 1 | `unit stride`; in 2D/3D `row-wise: unit stride` |
//! | COLS (2D) | `column-wise: stride COLS elements (B bytes)` |
//! | COLS ± 1 (2D) | `diagonal` / `anti-diagonal` |
//! | a whole plane or row (3D) | `first index innermost` / `middle index innermost` |
//! | 1 with a regular jump of COLS - B + 1 (2 <= B <= COLS/2) | `tiled: row-wise inside tiles B elements wide` |
//! | COLS with a jump of 1 - (B - 1) COLS | `tiled: column-wise inside tiles B rows tall` |
//! | any other k | `constant stride k elements` |
//! | no stride covers half the steps | `irregular` |
//! | (a variable of one element) | `scalar` |
//!
//! The sink also records which bytes of an element were touched, so a loop
//! over one field of an array of structures says `8 of 24 bytes of each
//! element used`.
//!
//! Cost: a few compares per access (a pair's first [`LEARN`] accesses are
//! kept, then looked at once); memory: one record of about 200 bytes per
//! pair, and 2 KiB more per pair while its period is being learnt.
use std::fmt;

use super::cache::human_bytes;
use polars::prelude::*;

use super::{AccessSink, LineId, NamedAccess, PairIndex, VarId, VarInfo};

const SLOTS: usize = 4;

/// Accesses per element visited above which a pair is labelled a reuse of
/// the same element rather than a walk, counted as `1 + repeats / (moves +
/// 1)`.
pub const REUSE_RUN: u64 = 4;

/// Accesses of a pair (by its first thread) kept to learn its period.
pub const LEARN: usize = 256;

/// The longest period looked for: a pair's accesses in one iteration.
pub const MAX_PERIOD: usize = 8;

/// What the sink saw of one (variable, line) pair.
#[derive(Clone, Debug, Default)]
pub struct PairPattern {
    /// Accesses.
    pub accesses: u64,
    /// Moves counted: accesses by one thread to another element than
    /// [`Self::period`] accesses before.
    pub steps: u64,
    /// Accesses by one thread to the same element as [`Self::period`]
    /// accesses before (a stride of 0), kept apart from the moves.
    pub repeats: u64,
    /// The pair's accesses per iteration (1 for `s += a[i]`, 2 for the load
    /// and store of `a[i] += x`); 0 while it is being learnt.
    pub period: u64,
    /// The widest access seen, in bytes (16 or 32 for vector accesses).
    pub width: u64,
    /// The most frequent moves, in elements, with their (space-saving,
    /// over-estimated) counts, most frequent first. Never 0.
    pub strides: [(i64, u64); SLOTS],
    /// Bits of the byte offsets inside an element that were touched (the
    /// first 64 bytes of the element).
    pub elem_bytes: u64,
    /// Element size used for the index (the variable's, else the access').
    pub elem: u64,
    /// log2 of `elem` when it is a power of two (a shift instead of a
    /// division on every access).
    shift: Option<u32>,
    /// The variable's base address, from which element indices count.
    base: u64,
    /// The last [`MAX_PERIOD`] indices by the current thread, a ring.
    ring: [i64; MAX_PERIOD],
    /// Where the next index goes in `ring`.
    pos: u8,
    /// How many of `ring`'s indices belong to the current thread.
    fill: u8,
    last_tid: u32,
    /// The first indices, by the pair's first thread, while the period is
    /// learnt; empty after.
    learn: Vec<i64>,
}

impl PairPattern {
    /// Takes the element index of the pair's next access, by thread `tid`.
    /// A change of thread starts the differences afresh.
    #[inline]
    fn index(&mut self, idx: i64, tid: u32) {
        if self.period == 0 {
            if self.last_tid == tid || self.learn.is_empty() {
                self.last_tid = tid;
                self.learn.push(idx);
                if self.learn.len() >= LEARN {
                    self.settle();
                }
                return;
            }
            // Another thread before the period was learnt: learn it from
            // what the first one did.
            self.settle();
        }
        if self.last_tid != tid {
            self.last_tid = tid;
            self.fill = 0;
        }
        self.step(idx);
    }

    /// Counts `idx` against the index one period before, and keeps it.
    #[inline]
    fn step(&mut self, idx: i64) {
        let p = self.period as usize;
        if usize::from(self.fill) >= p {
            let prev = self.ring[(usize::from(self.pos) + MAX_PERIOD - p) % MAX_PERIOD];
            self.count(idx.wrapping_sub(prev));
        }
        self.ring[usize::from(self.pos)] = idx;
        self.pos = ((usize::from(self.pos) + 1) % MAX_PERIOD) as u8;
        self.fill = (self.fill + 1).min(MAX_PERIOD as u8);
    }

    /// Chooses the period from the indices kept while learning, and counts
    /// them as if it had been known from the start.
    fn settle(&mut self) {
        if self.period > 0 {
            return;
        }
        let learnt = std::mem::take(&mut self.learn);
        self.period = period_of(&learnt);
        self.fill = 0;
        for &i in &learnt {
            self.step(i);
        }
    }

    /// Counts the difference `d` between indices one period apart.
    #[inline]
    fn count(&mut self, d: i64) {
        if d == 0 {
            self.repeats += 1;
            return;
        }
        self.steps += 1;
        let s = &mut self.strides;
        if s[0].1 > 0 && s[0].0 == d {
            s[0].1 += 1;
            return;
        }
        for i in 1..SLOTS {
            if s[i].1 > 0 && s[i].0 == d {
                s[i].1 += 1;
                if s[i].1 > s[i - 1].1 {
                    s.swap(i, i - 1);
                }
                return;
            }
        }
        if let Some(i) = s.iter().position(|x| x.1 == 0) {
            s[i] = (d, 1);
            return;
        }
        let i = (0..SLOTS).min_by_key(|&i| s[i].1).unwrap_or(SLOTS - 1);
        s[i] = (d, s[i].1 + 1);
    }

    /// Moves the stride-0 count of a state saved before repeats were kept
    /// apart into `repeats`, keeping the other moves most frequent first.
    fn split_old_repeats(&mut self) {
        if let Some(k) = self.strides.iter().position(|s| s.1 > 0 && s.0 == 0) {
            let n = self.strides[k].1;
            self.repeats += n;
            self.steps = self.steps.saturating_sub(n);
            self.strides[k] = (0, 0);
            self.strides.sort_by_key(|s| std::cmp::Reverse(s.1));
        }
    }

    /// Elements one access of the widest width covers: 2 for 16-byte
    /// accesses over doubles, 1 for scalar accesses (and when unknown).
    fn vector(&self) -> i64 {
        if self.elem > 0 && self.width > self.elem && self.width.is_multiple_of(self.elem) {
            (self.width / self.elem) as i64
        } else {
            1
        }
    }
}

/// Bits of the bytes of an element that an access of `size` bytes at byte
/// `within` of it touches, in the first 64 bytes of the element. An access
/// that runs past the element's end (a vector access over several
/// elements) touches the next elements' bytes from their start.
#[inline]
fn touched(within: u64, size: u64, elem: u64) -> u64 {
    let ones = |n: u64| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    let mut m = ones(size.min(64 - within)) << within;
    if elem < 64 {
        m &= ones(elem);
        if within + size > elem {
            m |= ones((within + size - elem).min(elem));
        }
    }
    m
}

/// The bits [`touched`] can set for an element of `elem` bytes: all of
/// them, once every byte of the element (of its first 64) was accessed.
#[inline]
fn all_bytes(elem: u64) -> u64 {
    if elem >= 64 {
        u64::MAX
    } else {
        (1u64 << elem) - 1
    }
}

/// The period of a walk whose first indices are `h`: the smallest lag, up
/// to [`MAX_PERIOD`], at which the differences between indices that far
/// apart stay the same from one access to the next at least half the time;
/// 1 when none does (an irregular walk). A plain walk, a tiled one and an
/// accumulator have period 1; a read-modify-write 2 (its lag-1 differences
/// alternate between 0 and the stride). Taking the smallest such lag, not
/// the steadiest, matters: in a tiled loop the lag of one tile row is
/// steadier than the lag of one iteration, but the iteration is the step.
/// A lag counts only with at least `lag + 1` differences to compare.
fn period_of(h: &[i64]) -> u64 {
    let constancy = |p: usize| -> f64 {
        if h.len() < 2 * p + 2 {
            return 0.0;
        }
        let d = |t: usize| h[t].wrapping_sub(h[t - p]);
        let same = (p + 1..h.len()).filter(|&t| d(t) == d(t - 1)).count();
        same as f64 / (h.len() - p - 1) as f64
    };
    (1..=MAX_PERIOD).find(|&p| constancy(p) >= 0.5).unwrap_or(1) as u64
}

/// The pattern sink.
#[derive(Clone, Debug)]
pub struct PatternSink {
    vars: Vec<(u64, u64)>,
    pairs: PairIndex,
    states: Vec<PairPattern>,
}

/// What a [`PatternSink`] saw: the (variable, line) pairs in order of first
/// appearance, and what was seen of each. The analysis keeps these so that
/// `memory_stats` labels patterns without reading the accesses again.
#[derive(Clone, Debug, Default)]
pub struct PatternStates {
    /// (variable, line) of each pair.
    pub pairs: Vec<(VarId, LineId)>,
    /// What was seen of each pair, by the same index.
    pub states: Vec<PairPattern>,
}

impl PatternSink {
    /// A sink for the variables `vars` (by row of the variable table).
    pub fn new(vars: &[VarInfo]) -> PatternSink {
        PatternSink {
            vars: vars.iter().map(|v| (v.base, v.elem_size as u64)).collect(),
            pairs: PairIndex::new(),
            states: Vec::new(),
        }
    }

    /// A sink that learns where each variable lies from the caller, when
    /// the variable first shows (the analysis, while it streams).
    pub(crate) fn streaming() -> PatternSink {
        PatternSink::new(&[])
    }

    /// Takes a batch, asking `span` for (base, element size) of a variable
    /// whose pair is new. Cost: a few compares per access.
    pub(crate) fn add(&mut self, batch: &[NamedAccess], span: &dyn Fn(VarId) -> (u64, u64)) {
        for r in batch {
            self.access(r, span);
        }
    }

    #[inline(always)]
    fn access(&mut self, r: &NamedAccess, span: &dyn Fn(VarId) -> (u64, u64)) {
        // The stored access list clamps sizes to 1..=65535; so does this,
        // so that a pass over it and the analysis' own pass agree.
        let size = u64::from(r.size.clamp(1, u32::from(u16::MAX)));
        let id = self.pairs.id(r.var, r.line) as usize;
        if id == self.states.len() {
            let (base, e) = span(r.var);
            let elem = if e > 0 { e } else { size };
            self.states.push(PairPattern {
                elem,
                shift: elem.is_power_of_two().then(|| elem.trailing_zeros()),
                base,
                last_tid: u32::MAX,
                ..Default::default()
            });
        }
        let st = &mut self.states[id];
        st.accesses += 1;
        st.width = st.width.max(size);
        let off = r.addr.wrapping_sub(st.base);
        let (idx, within) = match st.shift {
            Some(b) => ((off >> b) as i64, off & (st.elem - 1)),
            None => ((off / st.elem) as i64, off % st.elem),
        };
        // Once every byte is marked (the usual case after the first
        // accesses), marking more changes nothing.
        if within < 64 && st.elem_bytes != all_bytes(st.elem) {
            st.elem_bytes |= touched(within, size, st.elem);
        }
        st.index(idx, r.tid);
    }

    /// The pairs, as (variable, line), and what was seen of each, by id.
    /// Pairs whose period was still being learnt are counted now.
    pub fn finish(mut self) -> (Vec<(VarId, LineId)>, Vec<PairPattern>) {
        for st in &mut self.states {
            st.settle();
        }
        (self.pairs.pairs().to_vec(), self.states)
    }

    /// [`Self::finish`] as one value.
    pub(crate) fn into_states(self) -> PatternStates {
        let (pairs, states) = self.finish();
        PatternStates { pairs, states }
    }
}

impl crate::filter::access::SpanSink for PatternSink {
    fn add(&mut self, batch: &[NamedAccess], span: &dyn Fn(VarId) -> (u64, u64)) {
        PatternSink::add(self, batch, span)
    }
}

impl AccessSink for PatternSink {
    fn accesses(&mut self, batch: &[NamedAccess]) {
        let vars = std::mem::take(&mut self.vars);
        let span = |v: VarId| vars.get(v.index()).copied().unwrap_or((0, 0));
        for r in batch {
            self.access(r, &span);
        }
        self.vars = vars;
    }
}

/// Column names of [`PatternStates`] as a table (`patterns.parquet` of a
/// saved analysis).
const STATE_COLUMNS: [&str; 17] = [
    "var",
    "line",
    "accesses",
    "steps",
    "stride_1",
    "stride_2",
    "stride_3",
    "stride_4",
    "count_1",
    "count_2",
    "count_3",
    "count_4",
    "elem_bytes",
    "elem",
    "repeats",
    "width",
    "period",
];

impl PatternStates {
    /// The states as a table: one row per pair, in pair order.
    pub fn to_frame(&self) -> PolarsResult<DataFrame> {
        let st = &self.states;
        let u = |f: &dyn Fn(&PairPattern) -> u64| st.iter().map(f).collect::<Vec<u64>>();
        let mut cols = vec![
            Column::new(
                STATE_COLUMNS[0].into(),
                self.pairs.iter().map(|p| p.0 .0).collect::<Vec<u32>>(),
            ),
            Column::new(
                STATE_COLUMNS[1].into(),
                self.pairs.iter().map(|p| p.1 .0).collect::<Vec<u32>>(),
            ),
            Column::new(STATE_COLUMNS[2].into(), u(&|p| p.accesses)),
            Column::new(STATE_COLUMNS[3].into(), u(&|p| p.steps)),
        ];
        for k in 0..SLOTS {
            let d: Vec<i64> = st.iter().map(|p| p.strides[k].0).collect();
            cols.push(Column::new(STATE_COLUMNS[4 + k].into(), d));
        }
        for k in 0..SLOTS {
            cols.push(Column::new(
                STATE_COLUMNS[8 + k].into(),
                u(&|p| p.strides[k].1),
            ));
        }
        cols.push(Column::new(STATE_COLUMNS[12].into(), u(&|p| p.elem_bytes)));
        cols.push(Column::new(STATE_COLUMNS[13].into(), u(&|p| p.elem)));
        cols.push(Column::new(STATE_COLUMNS[14].into(), u(&|p| p.repeats)));
        cols.push(Column::new(STATE_COLUMNS[15].into(), u(&|p| p.width)));
        cols.push(Column::new(STATE_COLUMNS[16].into(), u(&|p| p.period)));
        DataFrame::new(cols)
    }

    /// The states a table of [`Self::to_frame`] holds. A table saved before
    /// periods were learnt (no `repeats` column) counted successive
    /// accesses (a period of 1) and repeats as a stride of 0 among the
    /// moves: that count is moved to `repeats`, and the access width, not
    /// recorded then, is taken as unknown (0).
    pub fn from_frame(df: &DataFrame) -> PolarsResult<PatternStates> {
        let u64s = |k: usize| -> PolarsResult<Vec<u64>> {
            Ok(df
                .column(STATE_COLUMNS[k])?
                .u64()?
                .into_no_null_iter()
                .collect())
        };
        let u32s = |k: usize| -> PolarsResult<Vec<u32>> {
            Ok(df
                .column(STATE_COLUMNS[k])?
                .u32()?
                .into_no_null_iter()
                .collect())
        };
        let (var, line, acc, steps) = (u32s(0)?, u32s(1)?, u64s(2)?, u64s(3)?);
        let mut strides = Vec::with_capacity(SLOTS);
        for k in 0..SLOTS {
            let d: Vec<i64> = df
                .column(STATE_COLUMNS[4 + k])?
                .i64()?
                .into_no_null_iter()
                .collect();
            strides.push((d, u64s(8 + k)?));
        }
        let (bytes, elem) = (u64s(12)?, u64s(13)?);
        let newer = df.column(STATE_COLUMNS[14]).is_ok();
        let (repeats, width, period) = match newer {
            true => (u64s(14)?, u64s(15)?, u64s(16)?),
            false => {
                let zeros = vec![0; df.height()];
                (zeros.clone(), zeros, vec![1; df.height()])
            }
        };
        let states = (0..df.height())
            .map(|i| {
                let mut p = PairPattern {
                    accesses: acc[i],
                    steps: steps[i],
                    repeats: repeats[i],
                    width: width[i],
                    period: period[i],
                    strides: std::array::from_fn(|k| (strides[k].0[i], strides[k].1[i])),
                    elem_bytes: bytes[i],
                    elem: elem[i],
                    ..Default::default()
                };
                if !newer {
                    p.split_old_repeats();
                }
                p
            })
            .collect();
        Ok(PatternStates {
            pairs: var
                .into_iter()
                .zip(line)
                .map(|(v, l)| (VarId(v), LineId(l)))
                .collect(),
            states,
        })
    }
}

/// A constant stride: `elements` apart (negative: descending), of
/// elements `elem` bytes wide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stride {
    /// Elements between successive accesses; negative when descending.
    pub elements: i64,
    /// Bytes per element.
    pub elem: u64,
}

impl fmt::Display for Stride {
    /// `stride 128 elements (1 KiB)`, `, descending` when negative.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let k = self.elements.unsigned_abs();
        let dir = if self.elements < 0 {
            ", descending"
        } else {
            ""
        };
        write!(
            f,
            "stride {k} elements ({}){dir}",
            human_bytes(k * self.elem)
        )
    }
}

/// A unit-stride sweep: descending or not, and the width of its accesses
/// when they are vectors (several elements per access).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Unit {
    /// Whether the sweep goes down the addresses.
    pub descending: bool,
    /// Bytes per access of a vector sweep; `None` for one element each.
    pub vector: Option<u64>,
}

/// ` (16 B accesses)` of a vector sweep, nothing otherwise.
struct VectorNote(Option<u64>);

impl fmt::Display for VectorNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(w) => write!(f, " ({} accesses)", human_bytes(w)),
            None => Ok(()),
        }
    }
}

impl fmt::Display for Unit {
    /// `unit stride`, `, descending`, then the vector width.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let desc = if self.descending { ", descending" } else { "" };
        write!(f, "unit stride{desc}{}", VectorNote(self.vector))
    }
}

/// How a (variable, line) pair walks its variable: the shape part of a
/// pattern label. Dimensions are named only when the variable's element
/// size is the one the pair accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Walk {
    /// The variable is no larger than one access: a scalar.
    Scalar,
    /// One access only.
    SingleAccess,
    /// The same element touched again and again.
    Reused,
    /// No stride covers half the moves.
    Irregular,
    /// A 2-D array along its rows.
    RowWise(Unit),
    /// A 2-D array in tiles `width` elements wide, row-wise inside them.
    TiledRows {
        /// Tile width in elements.
        width: i64,
        /// Bytes per access of a vector sweep.
        vector: Option<u64>,
    },
    /// A 2-D array down its columns.
    ColumnWise(Stride),
    /// A 2-D array in tiles `height` rows tall, column-wise inside them.
    TiledColumns {
        /// Tile height in rows.
        height: i64,
    },
    /// A 2-D array along its diagonal.
    Diagonal(Stride),
    /// A 2-D array along its anti-diagonal.
    AntiDiagonal(Stride),
    /// A 3-D array with its last index innermost.
    LastIndexInnermost(Unit),
    /// A 3-D array with its middle index innermost.
    MiddleIndexInnermost(Stride),
    /// A 3-D array with its first index innermost.
    FirstIndexInnermost(Stride),
    /// A unit-stride sweep of an array of unknown or other shape.
    Sweep(Unit),
    /// Any other constant stride.
    Constant(Stride),
}

/// The direction of a walk over a 2-D or 3-D array, as the labels begin
/// with it (`row-wise`): also what two runs' pairs are matched on when
/// their whole labels differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Along the rows.
    RowWise,
    /// Down the columns.
    ColumnWise,
    /// A 3-D array with its last index innermost.
    LastIndexInnermost,
}

impl fmt::Display for Direction {
    /// The direction's words in the labels.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::RowWise => "row-wise",
            Direction::ColumnWise => "column-wise",
            Direction::LastIndexInnermost => "row-wise (last index innermost)",
        })
    }
}

impl fmt::Display for Walk {
    /// The text the tables print (`column-wise: stride 32 elements (256
    /// B)`): the one place it is made.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Direction::{ColumnWise, LastIndexInnermost, RowWise};
        match self {
            Walk::Scalar => f.write_str("scalar"),
            Walk::SingleAccess => f.write_str("single access"),
            Walk::Reused => f.write_str("stride 0: the same element reused"),
            Walk::Irregular => f.write_str("irregular"),
            Walk::RowWise(u) => write!(f, "{RowWise}: {u}"),
            Walk::TiledRows { width, vector } => write!(
                f,
                "tiled: {RowWise} inside tiles {width} elements wide{}",
                VectorNote(*vector)
            ),
            Walk::ColumnWise(s) => write!(f, "{ColumnWise}: {s}"),
            Walk::TiledColumns { height } => {
                write!(f, "tiled: {ColumnWise} inside tiles {height} rows tall")
            }
            Walk::Diagonal(s) => write!(f, "diagonal: {s}"),
            Walk::AntiDiagonal(s) => write!(f, "anti-diagonal: {s}"),
            Walk::LastIndexInnermost(u) => write!(f, "{LastIndexInnermost}: {u}"),
            Walk::MiddleIndexInnermost(s) => write!(f, "middle index innermost: {s}"),
            Walk::FirstIndexInnermost(s) => write!(f, "first index innermost: {s}"),
            Walk::Sweep(u) => write!(f, "{u}"),
            Walk::Constant(s) => write!(f, "constant {s}"),
        }
    }
}

/// The pattern label of one (variable, line) pair: its walk, and how many
/// bytes of each element it uses when not all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PatternLabel {
    /// How the pair walks the variable.
    pub walk: Walk,
    /// (bytes used, element bytes) when the pair uses only part of each
    /// element of a known element type.
    pub bytes_used: Option<(u64, u64)>,
}

impl PatternLabel {
    /// Whether the pair touches a scalar (the pattern tables leave these out).
    pub fn is_scalar(&self) -> bool {
        self.walk == Walk::Scalar
    }
}

impl fmt::Display for PatternLabel {
    /// `row-wise: unit stride; 4 of 8 bytes of each element used`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.walk)?;
        if let Some((used, of)) = self.bytes_used {
            write!(f, "; {used} of {of} bytes of each element used")?;
        }
        Ok(())
    }
}

/// A row that groups several heap blocks (`set_heap_grouping site`) shows
/// its busiest block's label; when other blocks' labels differ, the row
/// says so, so no label speaks for blocks it does not describe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Differ {
    /// Blocks grouped into the row.
    pub blocks: usize,
    /// Blocks whose label differs from the busiest's.
    pub others: usize,
}

/// The label of a display row's pairs on one line: the busiest pair's
/// [`PatternLabel`], and whether the row's other blocks differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowLabel {
    /// The busiest pair's label.
    pub label: PatternLabel,
    /// Set when blocks grouped into the row have other labels.
    pub differ: Option<Differ>,
}

impl RowLabel {
    /// The row label of the pairs `members`, busiest first, each labelled
    /// by `label_of`.
    pub fn of_group(members: &[usize], label_of: impl Fn(usize) -> PatternLabel) -> RowLabel {
        let label = label_of(members[0]);
        let others = members[1..]
            .iter()
            .filter(|&&i| label_of(i) != label)
            .count();
        RowLabel {
            label,
            differ: (others > 0).then_some(Differ {
                blocks: members.len(),
                others,
            }),
        }
    }
}

impl fmt::Display for RowLabel {
    /// The label, then ` (the busiest of 3 blocks; 1 others differ)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.label)?;
        if let Some(d) = self.differ {
            write!(
                f,
                " (the busiest of {} blocks; {} others differ)",
                d.blocks, d.others
            )?;
        }
        Ok(())
    }
}

/// The label of one pair of variable `v`, e.g. `column-wise: stride 128
/// elements (1 KiB)`.
pub fn label(p: &PairPattern, v: &VarInfo) -> PatternLabel {
    let walk = shape_label(p, v);
    let elem = p.elem.min(64);
    let used = p.elem_bytes.count_ones() as u64;
    let partial = v.elem_size > 0
        && p.elem > 1
        && used < elem
        && !matches!(walk, Walk::SingleAccess | Walk::Scalar);
    PatternLabel {
        walk,
        bytes_used: partial.then_some((used, p.elem)),
    }
}

fn shape_label(p: &PairPattern, v: &VarInfo) -> Walk {
    if v.size > 0 && v.size <= p.elem {
        return Walk::Scalar;
    }
    if p.steps == 0 {
        return match p.repeats {
            0 => Walk::SingleAccess,
            _ => Walk::Reused,
        };
    }
    // Accesses per element visited, 1 + repeats / (moves + 1), above
    // REUSE_RUN.
    if p.repeats > (REUSE_RUN - 1) * (p.steps + 1) {
        return Walk::Reused;
    }
    let (mut d1, c1) = p.strides[0];
    if (c1 as f64) < 0.5 * p.steps as f64 {
        return Walk::Irregular;
    }
    // A move of one access' width is a unit step of a vector sweep.
    let w = p.vector();
    let vector = (w != 1).then_some(p.width);
    if w > 1 && d1.abs() == w {
        d1 = d1.signum();
    }
    let second = p.strides[1..]
        .iter()
        .filter(|s| s.1 > 0)
        .max_by_key(|s| s.1)
        .map(|s| s.0);
    // Dimensions, only when they describe this element size.
    let dims: &[u64] = if v.elem_size as u64 == p.elem && v.dims.len() >= 2 {
        &v.dims
    } else {
        &[]
    };
    let unit = Unit {
        descending: d1 < 0,
        vector,
    };
    let stride = Stride {
        elements: d1,
        elem: p.elem,
    };
    match dims.len() {
        2 => {
            let (rows, cols) = (dims[0] as i64, dims[1] as i64);
            if d1.abs() == 1 {
                // Inside a tile the walk moves by w; at a tile row's end it
                // jumps back by the tile's width less one step.
                if let Some(b) = second.map(|s| cols - s + w) {
                    if b >= 2 && b <= cols / 2 {
                        return Walk::TiledRows { width: b, vector };
                    }
                }
                return Walk::RowWise(unit);
            }
            if d1.abs() == cols {
                if let Some(s) = second {
                    if (1 - s) % cols == 0 {
                        let b = (1 - s) / cols + 1;
                        if b >= 2 && b <= rows / 2 {
                            return Walk::TiledColumns { height: b };
                        }
                    }
                }
                return Walk::ColumnWise(stride);
            }
            if d1.abs() == cols + 1 {
                return Walk::Diagonal(stride);
            }
            if cols > 2 && d1.abs() == cols - 1 {
                return Walk::AntiDiagonal(stride);
            }
        }
        3 => {
            let (mid, last) = (dims[1] as i64, dims[2] as i64);
            if d1.abs() == 1 {
                return Walk::LastIndexInnermost(unit);
            }
            if d1.abs() == last {
                return Walk::MiddleIndexInnermost(stride);
            }
            if d1.abs() == mid * last {
                return Walk::FirstIndexInnermost(stride);
            }
        }
        _ => {}
    }
    if d1.abs() == 1 {
        return Walk::Sweep(unit);
    }
    Walk::Constant(stride)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::naming::Scope;

    fn var(dims: &[u64], elem: u32) -> VarInfo {
        VarInfo {
            name: "a".into(),
            base: 0x1000,
            size: dims.iter().product::<u64>() * elem as u64,
            elem_size: elem,
            dims: dims.to_vec(),
            scope: Scope::Heap,
            internal: false,
        }
    }

    fn run(v: &VarInfo, idx: impl Iterator<Item = u64>, size: u32) -> PatternLabel {
        let mut s = PatternSink::new(std::slice::from_ref(v));
        let recs: Vec<NamedAccess> = idx
            .map(|i| NamedAccess {
                addr: v.base + i * v.elem_size as u64,
                size,
                tid: 1,
                ..Default::default()
            })
            .collect();
        s.accesses(&recs);
        let (_, st) = s.finish();
        label(&st[0], v)
    }

    #[test]
    fn two_d_traversals_get_their_labels() {
        let v = var(&[32, 32], 8);
        let n = 32u64;
        let row = run(&v, (0..n).flat_map(|i| (0..n).map(move |j| i * n + j)), 8);
        let unit = Unit {
            descending: false,
            vector: None,
        };
        let plain = |walk| PatternLabel {
            walk,
            bytes_used: None,
        };
        assert_eq!(row, plain(Walk::RowWise(unit)));
        assert_eq!(row.to_string(), "row-wise: unit stride");
        let col = run(&v, (0..n).flat_map(|j| (0..n).map(move |i| i * n + j)), 8);
        let s32 = Stride {
            elements: 32,
            elem: 8,
        };
        assert_eq!(col, plain(Walk::ColumnWise(s32)));
        assert_eq!(col.to_string(), "column-wise: stride 32 elements (256 B)");
        let diag = run(&v, (0..n).map(|i| i * n + i), 8);
        let s33 = Stride {
            elements: 33,
            elem: 8,
        };
        assert_eq!(diag, plain(Walk::Diagonal(s33)));
        assert_eq!(diag.to_string(), "diagonal: stride 33 elements (264 B)");
        let b = 8u64;
        let tiled = (0..n / b).flat_map(move |bi| {
            (0..n / b).flat_map(move |bj| {
                (0..b).flat_map(move |i| (0..b).map(move |j| (bi * b + i) * n + bj * b + j))
            })
        });
        assert_eq!(
            run(&v, tiled, 8).to_string(),
            "tiled: row-wise inside tiles 8 elements wide"
        );
        let reuse = run(&v, std::iter::repeat_n(5, 10), 8);
        assert_eq!(reuse, plain(Walk::Reused));
        assert_eq!(reuse.to_string(), "stride 0: the same element reused");
    }

    /// Each index twice in a row: the load and the store of `a[i] += x`.
    fn twice(idx: impl Iterator<Item = u64>) -> impl Iterator<Item = u64> {
        idx.flat_map(|i| [i, i])
    }

    #[test]
    fn a_load_and_a_store_of_one_element_are_one_step_of_the_walk() {
        let v = var(&[32, 32], 8);
        let n = 32u64;
        let row = twice((0..n).flat_map(|i| (0..n).map(move |j| i * n + j)));
        assert_eq!(run(&v, row, 8).to_string(), "row-wise: unit stride");
        let col = twice((0..n).flat_map(|j| (0..n).map(move |i| i * n + j)));
        assert_eq!(
            run(&v, col, 8).to_string(),
            "column-wise: stride 32 elements (256 B)"
        );
        // a[i] = a[i] * a[i] + a[i] at -O0: four touches per element.
        let four = (0..n * n).flat_map(|i| [i, i, i, i]);
        assert_eq!(run(&v, four, 8).to_string(), "row-wise: unit stride");
        let line = var(&[1000], 4);
        assert_eq!(run(&line, twice(0..1000), 4).to_string(), "unit stride");
        let back = twice((0..1000).rev());
        assert_eq!(run(&line, back, 4).to_string(), "unit stride, descending");
    }

    #[test]
    fn an_accumulator_of_an_inner_loop_is_reused() {
        // c[i] += a[i][k] * b[k]: c[i] loaded and stored 32 times, then
        // the next i.
        let v = var(&[32], 8);
        let acc = (0..32u64).flat_map(|i| std::iter::repeat_n(i, 64));
        assert_eq!(
            run(&v, acc, 8).to_string(),
            "stride 0: the same element reused"
        );
    }

    #[test]
    fn a_contiguous_sweep_of_vector_accesses_is_unit_stride() {
        // -O2 copies doubles 16 bytes at a time: the index moves by 2.
        let v = var(&[1024], 8);
        let copy = (0..512u64).map(|i| i * 2);
        assert_eq!(run(&v, copy, 16).to_string(), "unit stride (16 B accesses)");
        let inplace = twice((0..256u64).map(|i| i * 4));
        assert_eq!(
            run(&v, inplace, 32).to_string(),
            "unit stride (32 B accesses)"
        );
        // A row-wise walk of a matrix, two doubles at a time.
        let m = var(&[32, 32], 8);
        let rows = (0..512u64).map(|i| i * 2);
        assert_eq!(
            run(&m, rows, 16).to_string(),
            "row-wise: unit stride (16 B accesses)"
        );
        // A real stride of two elements with scalar accesses stays one.
        assert_eq!(
            run(&v, (0..512u64).map(|i| i * 2), 8).to_string(),
            "constant stride 2 elements (16 B)"
        );
    }

    #[test]
    fn a_vector_access_over_two_structures_marks_both_their_bytes() {
        // 16 bytes at byte 16 of a 24-byte element: bytes 16..24 of it and
        // 0..8 of the next.
        assert_eq!(touched(16, 16, 24), 0xff00ff);
        assert_eq!(touched(0, 8, 24), 0xff);
        assert_eq!(touched(0, 16, 8), 0xff);
    }

    #[test]
    fn states_saved_before_periods_were_learnt_keep_repeats_apart() {
        // What the sink saved of `m[i][j] += 1` walked column-wise before:
        // differences between successive accesses, 1024 of them 0.
        let v = var(&[32, 32], 8);
        let old = PairPattern {
            accesses: 2048,
            steps: 2047,
            strides: [(0, 1024), (32, 992), (-991, 31), (0, 0)],
            elem_bytes: 0xff,
            elem: 8,
            ..Default::default()
        };
        let states = PatternStates {
            pairs: vec![(VarId(0), LineId(1))],
            states: vec![old],
        };
        let df = states.to_frame().unwrap();
        let df = df.drop_many(["repeats", "width", "period"]);
        let back = PatternStates::from_frame(&df).unwrap();
        let p = &back.states[0];
        assert_eq!((p.repeats, p.steps, p.period), (1024, 1023, 1));
        assert_eq!(
            label(p, &v).to_string(),
            "column-wise: stride 32 elements (256 B)"
        );
    }

    #[test]
    fn the_period_is_the_accesses_per_iteration() {
        assert_eq!(period_of(&(0..100).collect::<Vec<_>>()), 1);
        let rmw: Vec<i64> = (0..100).flat_map(|i| [i, i]).collect();
        assert_eq!(period_of(&rmw), 2);
        // A six-point stencil on a 16 x 16 x 16 grid, k innermost.
        let (p, r) = (256i64, 16i64);
        let sten: Vec<i64> = (1..15)
            .flat_map(|k| {
                let c = 5 * p + 5 * r + k;
                [c - p, c + p, c - r, c + r, c - 1, c + 1]
            })
            .collect();
        assert_eq!(period_of(&sten), 6);
        // Tiles 8 wide: mostly steps of 1.
        let tiled: Vec<i64> = (0..4)
            .flat_map(|t| (0..8).flat_map(move |i| (0..8).map(move |j| i * 32 + t * 8 + j)))
            .collect();
        assert_eq!(period_of(&tiled), 1);
        let acc: Vec<i64> = (0..4).flat_map(|i| std::iter::repeat_n(i, 64)).collect();
        assert_eq!(period_of(&acc), 1);
        // A tiled read-modify-write, 16 bytes at a time (gcc -O2): each
        // tile row is four loads and stores; the tile row's lag (8) is
        // steadier than the iteration's (2), but the iteration is the step.
        let tiled_rmw: Vec<i64> = (0..4)
            .flat_map(|i| (0..4).flat_map(move |v| [i * 64 + v * 2, i * 64 + v * 2]))
            .collect();
        assert_eq!(period_of(&tiled_rmw), 2);
        assert_eq!(period_of(&[3]), 1);
    }

    #[test]
    fn a_stencils_neighbours_walk_row_wise() {
        let v = var(&[16, 16, 16], 8);
        let (p, r) = (256u64, 16u64);
        let sten = (1..15u64).flat_map(move |i| {
            (1..15u64).flat_map(move |j| {
                (1..15u64).flat_map(move |k| {
                    let c = i * p + j * r + k;
                    [c - p, c + p, c - r, c + r, c - 1, c + 1]
                })
            })
        });
        assert_eq!(
            run(&v, sten, 8).to_string(),
            "row-wise (last index innermost): unit stride"
        );
    }

    #[test]
    fn threads_interleaving_keep_their_own_walks() {
        // Two threads each sweep their own half, their accesses
        // interleaved in batches of 8.
        let v = var(&[1024], 4);
        let mut s = PatternSink::new(std::slice::from_ref(&v));
        let mut recs = Vec::new();
        for b in 0..64u64 {
            for t in 0..2u64 {
                for i in 0..8u64 {
                    let e = t * 512 + b * 8 + i;
                    recs.push(NamedAccess {
                        addr: v.base + e * 4,
                        size: 4,
                        tid: t as u32 + 1,
                        ..Default::default()
                    });
                }
            }
        }
        s.accesses(&recs);
        let (_, st) = s.finish();
        assert_eq!(label(&st[0], &v).to_string(), "unit stride");
    }

    #[test]
    fn a_k_outermost_3d_walk_has_the_first_index_innermost() {
        let v = var(&[8, 8, 8], 4);
        let walk = (0..8u64)
            .flat_map(|k| (0..8u64).flat_map(move |j| (0..8u64).map(move |i| i * 64 + j * 8 + k)));
        assert_eq!(
            run(&v, walk, 4).to_string(),
            "first index innermost: stride 64 elements (256 B)"
        );
    }

    #[test]
    fn one_field_of_an_array_of_structs_uses_part_of_each_element() {
        let v = var(&[100], 24);
        assert_eq!(
            run(&v, 0..100, 8).to_string(),
            "unit stride; 8 of 24 bytes of each element used"
        );
    }

    #[test]
    fn random_indices_are_irregular() {
        let v = var(&[1000], 4);
        let mut x = 12345u64;
        let idx = (0..500).map(move |_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % 1000
        });
        assert_eq!(run(&v, idx, 4).to_string(), "irregular");
    }
}
