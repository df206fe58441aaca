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
//!   pair per iteration, up to `MAX_PERIOD`) from the pair's first
//!   `LEARN` accesses: the smallest lag at which index differences stay
//!   the same from one access to the next. It then counts the differences
//!   between indices P accesses apart, so one step of the count is one
//!   iteration of the loop. A difference of 0 (the same element as an
//!   iteration before) is a repeat, counted apart from the moves; when
//!   repeats outnumber moves more than `REUSE_RUN` - 1 to 1 (the
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
//! | none, or `REUSE_RUN` - 1 repeats or more per move | `stride 0: the same element reused` |
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
//! Cost: a few compares per access (a pair's first `LEARN` accesses are
//! kept, then looked at once); memory: one record of about 200 bytes per
//! pair, and 2 KiB more per pair while its period is being learnt.
use std::fmt;

use super::cache::human_bytes;

use super::{AccessSink, LineId, NamedAccess, PairIndex, VarId, VarInfo};
use crate::filter::walks::{PairPattern, PatternStates, REUSE_RUN};

/// The pattern sink.
#[derive(Clone, Debug)]
pub struct PatternSink {
    vars: Vec<(u64, u64)>,
    pairs: PairIndex,
    states: Vec<PairPattern>,
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
            self.states
                .push(PairPattern::new(base, if e > 0 { e } else { size }));
        }
        self.states[id].take(r.addr, size, r.tid);
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
    fn states_saved_before_periods_were_learnt_keep_repeats_apart() {
        // What the sink saved of `m[i][j] += 1` walked column-wise before:
        // differences between successive accesses, 1024 of them 0.
        let v = var(&[32, 32], 8);
        let mut old = PairPattern::new(0, 8);
        old.accesses = 2048;
        old.steps = 2047;
        old.strides = [(0, 1024), (32, 992), (-991, 31), (0, 0)];
        old.elem_bytes = 0xff;
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
