//! What the analysis gathers of each (variable, source line) walk as it
//! streams: the moves between the elements it visits, counted one
//! iteration apart, and the bytes of an element it touches. The locality
//! stage's pattern sink feeds these states and labels them
//! (`locality/pattern.rs` says how); the analysis keeps them, and saves
//! them as `patterns.parquet`, so that `memory_stats` labels patterns
//! without reading the accesses again.
//!
//! Cost: a few compares per access; one record of about 200 bytes per
//! pair, and 2 KiB more per pair while its period is being learnt.
use polars::prelude::*;

use super::access::{LineId, VarId};

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
    /// A pair of a variable at `base` whose elements are `elem` bytes.
    pub(crate) fn new(base: u64, elem: u64) -> PairPattern {
        PairPattern {
            elem,
            shift: elem.is_power_of_two().then(|| elem.trailing_zeros()),
            base,
            last_tid: u32::MAX,
            ..Default::default()
        }
    }

    /// Takes the pair's next access, of `size` bytes (1..=65535) at
    /// `addr`, by thread `tid`. Cost: a few compares.
    #[inline(always)]
    pub(crate) fn take(&mut self, addr: u64, size: u64, tid: u32) {
        self.accesses += 1;
        self.width = self.width.max(size);
        let off = addr.wrapping_sub(self.base);
        let (idx, within) = match self.shift {
            Some(b) => ((off >> b) as i64, off & (self.elem - 1)),
            None => ((off / self.elem) as i64, off % self.elem),
        };
        // Once every byte is marked (the usual case after the first
        // accesses), marking more changes nothing.
        if within < 64 && self.elem_bytes != all_bytes(self.elem) {
            self.elem_bytes |= touched(within, size, self.elem);
        }
        self.index(idx, tid);
    }

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
    pub(crate) fn settle(&mut self) {
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
    pub(crate) fn vector(&self) -> i64 {
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

/// What a pattern sink saw (`locality::pattern`): the (variable, line) pairs in order of first
/// appearance, and what was seen of each. The analysis keeps these so that
/// `memory_stats` labels patterns without reading the accesses again.
#[derive(Clone, Debug, Default)]
pub struct PatternStates {
    /// (variable, line) of each pair.
    pub pairs: Vec<(VarId, LineId)>,
    /// What was seen of each pair, by the same index.
    pub states: Vec<PairPattern>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_access_over_two_structures_marks_both_their_bytes() {
        // 16 bytes at byte 16 of a 24-byte element: bytes 16..24 of it and
        // 0..8 of the next.
        assert_eq!(touched(16, 16, 24), 0xff00ff);
        assert_eq!(touched(0, 8, 24), 0xff);
        assert_eq!(touched(0, 16, 8), 0xff);
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
}
