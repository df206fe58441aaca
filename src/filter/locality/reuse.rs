//! Reuse distance: the exact LRU stack distance of every line reference, in
//! distinct cache lines, with a histogram per variable.
//!
//! The stack distance of a reference to line L is the number of distinct
//! other lines referenced since the previous reference to L (infinite, a
//! "cold" reference, when there was none). A fully associative LRU cache of
//! C lines hits exactly the references with distance < C, so the histogram
//! gives the miss-ratio curve of every such cache at once.
//!
//! # Algorithm
//!
//! Each line remembers the time of its last reference; a set of marks over
//! times (a bit per time, counted per block of 512 by a Fenwick tree; see
//! [`Marks`]) holds each line's last-reference time. The distance of a
//! reference is the number of marks after the line's last time: one prefix
//! count, then an unmark and a mark, O(log n) each on a tree 512 times
//! smaller than the times. When the time counter reaches the marks'
//! capacity the live times are renumbered 0..k in order (k distinct lines)
//! and the marks are rebuilt with capacity 4k (at least 2^20), so memory
//! stays proportional to the distinct lines and the renumbering costs O(1)
//! amortised per reference. The eight most recently used lines are kept
//! in a small array in front of the tree (see [`StackDistance`]), so short
//! reuses cost no tree update.
//!
//! # Sampling
//!
//! [`Sampling`] turns on SHARDS-style spatial sampling: only lines whose
//! hash falls under the rate are tracked, their distances are scaled by
//! 1/rate and each sampled reference stands for 1/rate references. The
//! results are then estimates, and say so.

use super::pages::LinePages;
use super::{to_front, AccessSink, NamedAccess, VarId};

/// Number of histogram bins: bin 0 holds distance 0, bin k (k >= 1)
/// distances in [2^(k-1), 2^k).
pub const BINS: usize = 48;

/// The bin of a finite distance.
#[inline]
pub fn bin_of(d: u64) -> usize {
    if d == 0 {
        0
    } else {
        (64 - d.leading_zeros() as usize).min(BINS - 1)
    }
}

/// Lower bound of bin `k`.
pub fn bin_low(k: usize) -> u64 {
    if k == 0 {
        0
    } else {
        1u64 << (k - 1)
    }
}

/// A reuse-distance histogram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    /// References per bin (see [`BINS`]).
    pub bins: [u64; BINS],
    /// References to lines never referenced before.
    pub cold: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            bins: [0; BINS],
            cold: 0,
        }
    }
}

impl Histogram {
    /// Adds one reference with distance `d` (None: cold), `w` times.
    #[inline]
    pub fn add(&mut self, d: Option<u64>, w: u64) {
        match d {
            Some(d) => self.bins[bin_of(d)] += w,
            None => self.cold += w,
        }
    }

    /// Adds every count of `o`.
    pub fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.bins.iter_mut().zip(o.bins.iter()) {
            *a += b;
        }
        self.cold += o.cold;
    }

    /// The bin holding the median reference, as its distance bounds, or
    /// `None` when more than half of the references are cold (or none).
    /// Cold references count below every bin, as in the report's table.
    pub fn median_bin(&self) -> Option<(u64, u64)> {
        let total = self.total();
        let mut acc = self.cold;
        let mut median = None;
        for (k, n) in self.bins.iter().enumerate() {
            if acc + n > total / 2 && acc <= total / 2 {
                median = Some(bin_range(k));
            }
            acc += n;
        }
        if self.cold > total / 2 {
            return None;
        }
        median
    }

    /// All references.
    pub fn total(&self) -> u64 {
        self.bins.iter().sum::<u64>() + self.cold
    }

    /// Misses of a fully associative LRU cache of `2^j` lines: the cold
    /// references and those with distance >= 2^j. Exact, because bin edges
    /// are powers of two.
    pub fn misses_at(&self, j: u32) -> u64 {
        let c = 1u64 << j;
        self.cold
            + self
                .bins
                .iter()
                .enumerate()
                .filter(|(k, _)| bin_low(*k) >= c)
                .map(|(_, n)| n)
                .sum::<u64>()
    }

    /// The index of the last non-empty finite bin, if any.
    pub fn last_bin(&self) -> Option<usize> {
        self.bins.iter().rposition(|&n| n > 0)
    }
}

/// Bits per block of [`Marks`]: one 64-byte cache line of words.
const BLOCK_BITS: usize = 512;
/// Words per block of [`Marks`].
const BLOCK_WORDS: usize = BLOCK_BITS / 64;

/// A set of marked positions over 0..cap, counted by prefix: a bit per
/// position, and a Fenwick (binary indexed) tree of the marks in each
/// block of [`BLOCK_BITS`] positions.
///
/// Why not a Fenwick tree over the positions themselves: with millions of
/// distinct lines that tree spans tens of megabytes, and each of its
/// O(log n) steps per query lands on another cache line, most of them
/// out of every cache. Here the block tree is 512 times smaller (35 KB for
/// 4.5 M positions, in the first-level cache) and the bits a query reads
/// inside its block are one cache line: a prefix costs the block tree's
/// steps plus at most eight popcounts, and a mark or unmark one bit and
/// the block tree's steps.
#[derive(Clone, Debug)]
struct Marks {
    cap: usize,
    /// Bit `p % 64` of word `p / 64` is position `p`'s mark; whole blocks.
    bits: Vec<u64>,
    /// Fenwick tree over blocks (1-based): the marks per block.
    blocks: Vec<i32>,
}

impl Marks {
    fn new(cap: usize) -> Marks {
        let nblocks = cap.div_ceil(BLOCK_BITS).max(1);
        Marks {
            cap,
            bits: vec![0; nblocks * BLOCK_WORDS],
            blocks: vec![0; nblocks + 1],
        }
    }

    /// Marks positions 0..k, in O(cap / 64).
    fn with_ones(cap: usize, k: usize) -> Marks {
        let mut m = Marks::new(cap);
        let full = k / 64;
        m.bits[..full].fill(u64::MAX);
        if !k.is_multiple_of(64) {
            m.bits[full] = (1u64 << (k % 64)) - 1;
        }
        let n = m.blocks.len() - 1;
        for b in 0..n {
            let words = &m.bits[b * BLOCK_WORDS..(b + 1) * BLOCK_WORDS];
            m.blocks[b + 1] = words.iter().map(|w| w.count_ones() as i32).sum();
        }
        for i in 1..=n {
            let j = i + (i & i.wrapping_neg());
            if j <= n {
                m.blocks[j] += m.blocks[i];
            }
        }
        m
    }

    fn cap(&self) -> usize {
        self.cap
    }

    /// Bytes it holds, as allocated.
    fn bytes(&self) -> usize {
        self.bits.capacity() * 8 + self.blocks.capacity() * 4
    }

    /// Adds `d` to the count of `pos`'s block.
    #[inline]
    fn add_block(&mut self, pos: usize, d: i32) {
        let mut i = pos / BLOCK_BITS + 1;
        while i < self.blocks.len() {
            self.blocks[i] += d;
            i += i & i.wrapping_neg();
        }
    }

    /// Marks `pos`, which is not marked.
    #[inline]
    fn mark(&mut self, pos: usize) {
        let bit = 1u64 << (pos % 64);
        debug_assert_eq!(self.bits[pos / 64] & bit, 0, "position {pos} marked twice");
        self.bits[pos / 64] |= bit;
        self.add_block(pos, 1);
    }

    /// Unmarks `pos`, which is marked.
    #[inline]
    fn unmark(&mut self, pos: usize) {
        let bit = 1u64 << (pos % 64);
        debug_assert_ne!(self.bits[pos / 64] & bit, 0, "position {pos} not marked");
        self.bits[pos / 64] &= !bit;
        self.add_block(pos, -1);
    }

    /// Marks over positions 0..=pos.
    #[inline]
    fn prefix(&self, pos: usize) -> i64 {
        let block = pos / BLOCK_BITS;
        // The blocks before `pos`'s.
        let mut i = block;
        let mut s = 0i64;
        while i > 0 {
            s += i64::from(self.blocks[i]);
            i &= i - 1;
        }
        let w = pos / 64;
        let first = block * BLOCK_WORDS;
        for word in &self.bits[first..w] {
            s += i64::from(word.count_ones());
        }
        let upto = u64::MAX >> (63 - pos % 64);
        s + i64::from((self.bits[w] & upto).count_ones())
    }
}

/// Per line: its last reference time (or [`IN_TOP`], or [`UNSEEN`]), and
/// its most distant reuse: the distance (in lines, at most `u32::MAX`,
/// which is 256 GiB of 64-byte lines), the variable, and the low 16 bits
/// of the address (the offset in the line, lines being at most 4096
/// bytes). 16 bytes, so that the reuse distances of a program touching
/// 1 GB (16 M lines) fit in the feed's share of the memory limit.
#[derive(Clone, Copy, Debug, PartialEq)]
struct LineState {
    last: u32,
    max_var: VarId,
    max_dist: u32,
    max_low: u16,
}

const _: () = assert!(std::mem::size_of::<LineState>() == 16);

/// `last` of a line never referenced (a free slot of its page).
const UNSEEN: u32 = u32::MAX - 1;

/// The state of a line never referenced (a free slot of its page).
const FREE: LineState = LineState {
    last: UNSEEN,
    max_var: VarId(0),
    max_dist: 0,
    max_low: 0,
};

/// Records a reuse at distance `d` (at `addr` of `var`) in `st` if it is
/// the line's most distant yet.
#[inline]
fn note(st: &mut LineState, d: u64, addr: u64, var: VarId) {
    if d > u64::from(st.max_dist) {
        st.max_dist = u32::try_from(d).unwrap_or(u32::MAX);
        st.max_low = addr as u16;
        st.max_var = var;
    }
}

/// `last` of a line held in the most-recent array rather than the tree.
const IN_TOP: u32 = u32::MAX;

/// Lines kept in the most-recent array.
const TOP: usize = 8;

/// Tree times a [`StackDistance`] starts with: 2^20, 136 KB of marks, so
/// that a program of a few tens of thousands of lines (a matrix multiply
/// of 256 x 256 doubles) renumbers once per million references that leave
/// the most-recent array, not once per few thousand.
const FIRST_TIMES: usize = 1 << 20;

/// A renumbered tree's times, per line it holds: room for `ROOM - 1`
/// times as many new times as lines. Renumbering sorts the lines, O(k log
/// k) for k lines; with room for 3k new times that is a few nanoseconds
/// per reference that leaves the most-recent array (with room for k, the
/// analysis' cache feed took 16% longer on a 3000 x 3000 transpose and
/// 10% on a 256 x 256 matrix multiply). The marks cost a bit per time,
/// half a byte per line.
const ROOM: usize = 4;

/// Exact LRU stack distance over line numbers.
///
/// The [`TOP`] most recently used lines sit in a small array in recency
/// order, outside the tree: a reference to one of them has its position as
/// distance and costs a scan of 8 numbers, with no hash probe and no tree
/// update (loop counters and the current lines of each array). A line
/// leaving the array gets the next tree time, which is later than every
/// time in the tree, so the tree keeps the order of all other lines.
#[derive(Clone, Debug)]
pub struct StackDistance {
    /// Each line's state, by slot (see [`LinePages`]): 24 bytes per line
    /// of every page touched, counted against the feed's budget by
    /// [`StackDistance::bytes`].
    lines: LinePages<LineState>,
    /// Distinct lines seen.
    distinct: usize,
    top: [(u64, u32); TOP],
    top_len: usize,
    tree: Marks,
    in_tree: i64,
    now: u32,
    min_cap: usize,
}

impl Default for StackDistance {
    fn default() -> Self {
        StackDistance::with_capacity(FIRST_TIMES)
    }
}

impl StackDistance {
    /// A tracker whose tree starts with (and never shrinks below) `cap`
    /// positions; small values make it renumber often (for tests).
    pub fn with_capacity(cap: usize) -> StackDistance {
        let cap = cap.max(2);
        StackDistance {
            lines: LinePages::new(FREE),
            distinct: 0,
            top: [(0, 0); TOP],
            top_len: 0,
            tree: Marks::new(cap),
            in_tree: 0,
            now: 0,
            min_cap: cap,
        }
    }

    /// Distinct lines seen.
    pub fn distinct(&self) -> usize {
        self.distinct
    }

    /// Bytes its state holds: the lines' states, their index and the tree,
    /// as allocated (what grows with the distinct lines).
    pub fn bytes(&self) -> u64 {
        (self.lines.bytes() + self.tree.bytes()) as u64
    }

    #[inline]
    fn note(&mut self, slot: u32, d: u64, addr: u64, var: VarId) {
        note(self.lines.get_mut(slot), d, addr, var);
    }

    /// References `line` (at `addr` of variable `var`, for the list of most
    /// distant reuses) and returns its stack distance, None when cold.
    #[inline]
    pub fn reference_at(&mut self, line: u64, addr: u64, var: VarId) -> Option<u64> {
        if let Some(p) = self.top[..self.top_len].iter().position(|t| t.0 == line) {
            let idx = self.top[p].1;
            if p > 0 {
                to_front(&mut self.top[..=p], p);
                self.note(idx, p as u64, addr, var);
            }
            return Some(p as u64);
        }
        let idx = self.lines.slot(line);
        let st = self.lines.get_mut(idx);
        let d = if st.last == UNSEEN {
            *st = LineState {
                last: IN_TOP,
                max_var: var,
                max_dist: 0,
                max_low: addr as u16,
            };
            self.distinct += 1;
            None
        } else {
            let last = st.last as usize;
            st.last = IN_TOP;
            let after = self.in_tree - self.tree.prefix(last);
            let d = self.top_len as u64 + after as u64;
            note(st, d, addr, var);
            self.tree.unmark(last);
            self.in_tree -= 1;
            Some(d)
        };
        if self.top_len == TOP {
            let (_, out) = self.top[TOP - 1];
            if self.now as usize == self.tree.cap() {
                self.renumber();
            }
            self.lines.get_mut(out).last = self.now;
            self.tree.mark(self.now as usize);
            self.in_tree += 1;
            self.now += 1;
            to_front(&mut self.top, TOP - 1);
        } else {
            to_front(&mut self.top[..=self.top_len], self.top_len);
            self.top_len += 1;
        }
        self.top[0] = (line, idx);
        d
    }

    /// Up to `n` lines, most recently referenced first. O(distinct lines
    /// log) when it reaches into the tree.
    pub fn recent(&self, n: usize) -> Vec<u64> {
        let mut out: Vec<u64> = self.top[..self.top_len].iter().map(|t| t.0).collect();
        if out.len() < n {
            let mut rest: Vec<(u32, u64)> = (self.lines.iter())
                .filter(|(_, _, st)| st.last != IN_TOP)
                .map(|(l, _, st)| (st.last, l))
                .collect();
            rest.sort_unstable_by_key(|e| std::cmp::Reverse(e.0));
            out.extend(rest.into_iter().map(|(_, l)| l));
        }
        out.truncate(n);
        out
    }

    /// Every line referenced so far.
    pub fn lines(&self) -> impl Iterator<Item = u64> + '_ {
        self.lines.iter().map(|(l, _, _)| l)
    }

    /// [`StackDistance::reference_at`] without the reuse bookkeeping.
    pub fn reference(&mut self, line: u64) -> Option<u64> {
        self.reference_at(line, 0, VarId(0))
    }

    /// Renumbers the tree times 0..k in order (k lines in the tree) and
    /// rebuilds the tree with room for as many new times again.
    fn renumber(&mut self) {
        let mut order: Vec<(u32, u32)> = (self.lines.iter())
            .filter(|(_, _, st)| st.last != IN_TOP)
            .map(|(_, slot, st)| (st.last, slot))
            .collect();
        order.sort_unstable();
        for (t, &(_, slot)) in order.iter().enumerate() {
            self.lines.get_mut(slot).last = t as u32;
        }
        let k = order.len();
        let cap = (ROOM * k).max(self.min_cap);
        assert!(cap < IN_TOP as usize, "more distinct lines than u32 times");
        self.tree = Marks::with_ones(cap, k);
        self.in_tree = k as i64;
        self.now = k as u32;
    }

    /// The `n` lines with the most distant reuses: (line, distance, the
    /// low 16 bits of the address and the variable of that access), most
    /// distant first.
    pub fn most_distant(&self, n: usize) -> Vec<(u64, u64, u16, VarId)> {
        let mut v: Vec<_> = self
            .lines
            .iter()
            .filter(|(_, _, s)| s.max_dist > 0)
            .map(|(l, _, s)| (l, u64::from(s.max_dist), s.max_low, s.max_var))
            .collect();
        v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(n);
        v
    }
}

/// SHARDS-style spatial sampling: track a line when a hash of its number,
/// modulo 2^24, is below `rate * 2^24`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampling {
    /// Fraction of lines tracked, in (0, 1].
    pub rate: f64,
    threshold: u64,
}

impl Sampling {
    /// Sampling at `rate` (0 < rate <= 1).
    pub fn new(rate: f64) -> Option<Sampling> {
        (rate > 0.0 && rate <= 1.0).then(|| Sampling {
            rate,
            threshold: (rate * (1u64 << 24) as f64).round().max(1.0) as u64,
        })
    }

    #[inline]
    fn keeps(&self, line: u64) -> bool {
        // A 64-bit mix (splitmix64's finaliser), so strided lines spread.
        let mut z = line.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z & ((1 << 24) - 1)) < self.threshold
    }
}

/// The reuse-distance sink: one stack over all lines, a histogram per
/// variable.
#[derive(Clone, Debug)]
pub struct ReuseSink {
    line_bits: u32,
    stack: StackDistance,
    per_var: Vec<Histogram>,
    sampling: Option<Sampling>,
    scale: f64,
}

/// What a [`ReuseSink`] found.
#[derive(Clone, Debug)]
pub struct ReuseResult {
    /// Line size in bytes.
    pub line: u32,
    /// Histogram per variable row (estimated counts when sampled).
    pub per_var: Vec<Histogram>,
    /// Most distant reuses: (line address, distance, address, variable).
    pub most_distant: Vec<(u64, u64, u64, VarId)>,
    /// Distinct lines tracked.
    pub distinct_lines: usize,
    /// The sampling used, if any.
    pub sampling: Option<Sampling>,
}

impl ReuseSink {
    /// A sink over lines of `line` bytes, sampled when `sampling` is set.
    pub fn new(line: u32, sampling: Option<Sampling>) -> ReuseSink {
        ReuseSink {
            line_bits: line.trailing_zeros(),
            stack: StackDistance::default(),
            per_var: Vec::new(),
            scale: sampling.map_or(1.0, |s| 1.0 / s.rate),
            sampling,
        }
    }

    /// Bytes of state held so far, which grow with the distinct lines
    /// tracked (see [`StackDistance::bytes`]).
    pub fn state_bytes(&self) -> u64 {
        self.stack.bytes() + (self.per_var.capacity() * std::mem::size_of::<Histogram>()) as u64
    }

    /// Up to `n` lines, most recently referenced first (see
    /// [`StackDistance::recent`]).
    pub fn recent(&self, n: usize) -> Vec<u64> {
        self.stack.recent(n)
    }

    /// Every line referenced so far.
    pub fn lines(&self) -> impl Iterator<Item = u64> + '_ {
        self.stack.lines()
    }

    /// As [`AccessSink::accesses`], also appending to `out` each line
    /// reference's distance in order (`cold` for a first reference): what
    /// a cache model of this line size can class its first level's misses
    /// by. Unsampled sinks only.
    pub fn accesses_telling(&mut self, batch: &[NamedAccess], out: &mut Vec<u64>, cold: u64) {
        debug_assert!(self.sampling.is_none(), "distances of every line");
        let bits = self.line_bits;
        for r in batch {
            let a = r.addr >> bits;
            let b = (r.addr + r.size as u64 - 1) >> bits;
            for l in a..=b {
                let d = self.stack.reference_at(l, r.addr, r.var);
                self.count(r.var, d);
                out.push(d.unwrap_or(cold));
            }
        }
    }

    /// Counts one reference of `var` at distance `d` (None: cold) in its
    /// histogram.
    #[inline]
    fn count(&mut self, var: VarId, d: Option<u64>) {
        let v = var.index();
        if v >= self.per_var.len() {
            self.per_var.resize(v + 1, Histogram::default());
        }
        self.per_var[v].add(d, 1);
    }

    #[inline]
    fn line_ref(&mut self, line: u64, r: &NamedAccess) {
        if let Some(s) = &self.sampling {
            if !s.keeps(line) {
                return;
            }
        }
        let d = self.stack.reference_at(line, r.addr, r.var);
        let d = match self.sampling {
            Some(_) => d.map(|d| (d as f64 * self.scale) as u64),
            None => d,
        };
        self.count(r.var, d);
    }

    /// The histograms (scaled to estimates when sampled) and the most
    /// distant reuses.
    pub fn finish(self) -> ReuseResult {
        let mut per_var = self.per_var;
        if self.sampling.is_some() {
            for h in &mut per_var {
                for b in h.bins.iter_mut() {
                    *b = (*b as f64 * self.scale).round() as u64;
                }
                h.cold = (h.cold as f64 * self.scale).round() as u64;
            }
        }
        let bits = self.line_bits;
        ReuseResult {
            line: 1 << bits,
            per_var,
            most_distant: self
                .stack
                .most_distant(20)
                .into_iter()
                .map(|(l, d, low, v)| {
                    // The line's address and the access's offset in it.
                    let a = (l << bits) | (u64::from(low) & ((1 << bits) - 1));
                    (l << bits, (d as f64 * self.scale) as u64, a, v)
                })
                .collect(),
            distinct_lines: self.stack.distinct(),
            sampling: self.sampling,
        }
    }
}

impl AccessSink for ReuseSink {
    fn accesses(&mut self, batch: &[NamedAccess]) {
        let bits = self.line_bits;
        for r in batch {
            let a = r.addr >> bits;
            let b = (r.addr + r.size as u64 - 1) >> bits;
            self.line_ref(a, r);
            if b != a {
                for l in a + 1..=b {
                    self.line_ref(l, r);
                }
            }
        }
    }
}

/// The distances bin `k` holds, inclusive: (low, high).
pub fn bin_range(k: usize) -> (u64, u64) {
    if k == 0 {
        (0, 0)
    } else {
        (bin_low(k), (1u64 << k) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The definition, in O(n^2): distinct lines strictly between the
    /// previous reference to the same line and this one.
    fn naive(trace: &[u64]) -> Vec<Option<u64>> {
        (0..trace.len())
            .map(|t| {
                let prev = trace[..t].iter().rposition(|&l| l == trace[t])?;
                let mut seen: Vec<u64> = trace[prev + 1..t].to_vec();
                seen.sort_unstable();
                seen.dedup();
                Some(seen.len() as u64)
            })
            .collect()
    }

    fn fast(trace: &[u64], cap: usize) -> Vec<Option<u64>> {
        let mut s = StackDistance::with_capacity(cap);
        trace.iter().map(|&l| s.reference(l)).collect()
    }

    fn hist(d: &[Option<u64>]) -> Histogram {
        let mut h = Histogram::default();
        for x in d {
            h.add(*x, 1);
        }
        h
    }

    proptest! {
        #[test]
        fn random_traces_match_the_definition(
            trace in proptest::collection::vec(0u64..40, 0..400),
            cap in 2usize..64,
        ) {
            let want = naive(&trace);
            let got = fast(&trace, cap);
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(hist(&got), hist(&want));
        }

        #[test]
        fn structured_traces_match_the_definition(
            n in 1u64..48,
            stride in 1u64..9,
            reps in 1usize..5,
            block in 1u64..8,
            cap in 2usize..32,
        ) {
            // Strided sweeps repeated, then a blocked (tiled) walk, then
            // a reversed sweep: the shapes loops produce.
            let mut trace = Vec::new();
            for _ in 0..reps {
                trace.extend((0..n).map(|i| i * stride));
            }
            for b in (0..n).step_by(block as usize) {
                for _ in 0..2 {
                    trace.extend((b..(b + block).min(n)).map(|i| i * stride));
                }
            }
            trace.extend((0..n).rev().map(|i| i * stride));
            let want = naive(&trace);
            prop_assert_eq!(hist(&fast(&trace, cap)), hist(&want));
            prop_assert_eq!(fast(&trace, cap), want);
        }
    }

    proptest! {
        /// The marks count as a plain list of flags does, across blocks:
        /// a random walk of marks and unmarks over up to eight blocks, from
        /// `with_ones`, with a prefix asked at a random position each step.
        #[test]
        fn marks_count_as_flags_do(
            cap in 1usize..4096,
            ones in 0usize..4096,
            steps in proptest::collection::vec((0usize..4096, 0usize..4096), 0..300),
        ) {
            let ones = ones.min(cap);
            let mut m = Marks::with_ones(cap, ones);
            let mut flags: Vec<bool> = (0..cap).map(|p| p < ones).collect();
            for (at, ask) in steps {
                let (at, ask) = (at % cap, ask % cap);
                if flags[at] {
                    m.unmark(at);
                } else {
                    m.mark(at);
                }
                flags[at] = !flags[at];
                let want = flags[..=ask].iter().filter(|f| **f).count() as i64;
                prop_assert_eq!(m.prefix(ask), want);
            }
            let want = flags.iter().filter(|f| **f).count() as i64;
            prop_assert_eq!(m.prefix(cap - 1), want);
        }
    }

    /// The distances of a cyclic sweep of `n` lines made three times,
    /// checked: the first sweep cold, every later reference at `n - 1`.
    fn cyclic_sweep(n: u64) -> Vec<Option<u64>> {
        let trace: Vec<u64> = (0..3).flat_map(|_| 0..n).collect();
        let d = fast(&trace, 8);
        assert!(d[..n as usize].iter().all(|x| x.is_none()));
        assert!(d[n as usize..].iter().all(|x| *x == Some(n - 1)));
        d
    }

    /// Distances that span many blocks of marks, through renumbering.
    #[test]
    fn a_long_cyclic_sweep_has_distance_n_minus_one() {
        cyclic_sweep(5000);
    }

    #[test]
    fn a_cyclic_sweep_has_distance_n_minus_one() {
        let h = hist(&cyclic_sweep(100));
        // A 64-line fully associative LRU cache misses every reference of
        // a 100-line cyclic sweep; a 128-line one only the cold ones.
        assert_eq!(h.misses_at(6), 300);
        assert_eq!(h.misses_at(7), 100);
    }

    #[test]
    fn memory_follows_distinct_lines_not_references() {
        let mut s = StackDistance::with_capacity(16);
        for i in 0..1_000_000u64 {
            s.reference(i % 50);
        }
        assert_eq!(s.distinct(), 50);
        assert!(s.tree.cap() <= ROOM * 50, "tree capacity {}", s.tree.cap());
    }

    #[test]
    fn sampling_estimates_a_sweep() {
        let mut sink = ReuseSink::new(64, Sampling::new(0.1));
        let recs: Vec<NamedAccess> = (0..4)
            .flat_map(|_| 0..20_000u64)
            .map(|i| NamedAccess {
                addr: i * 64,
                size: 8,
                ..Default::default()
            })
            .collect();
        sink.accesses(&recs);
        let r = sink.finish();
        let h = &r.per_var[0];
        // 20 000 cold references, 60 000 reuses at distance 19 999 (bin 15).
        let cold = h.cold as f64;
        assert!((cold - 20_000.0).abs() / 20_000.0 < 0.15, "{cold}");
        let reused: u64 = h.bins.iter().sum();
        assert!(
            (reused as f64 - 60_000.0).abs() / 60_000.0 < 0.15,
            "{reused}"
        );
        assert!(h.bins[15] + h.bins[14] == reused, "{:?}", h.bins);
    }
}
