//! Access-pattern labels per (variable, source line), in the array's index
//! space rather than in bytes.
//!
//! For each pair the sink follows the element index of successive accesses
//! by one thread (`(addr - base) / element size`) and counts the index
//! differences ("strides") in a small space-saving table of the most
//! frequent ones. At the end the dominant stride, read against the array's
//! dimensions, gives the label:
//!
//! | dominant stride (elements) | label |
//! |---|---|
//! | 0 | `stride 0: the same element reused` |
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
//! Cost: a few compares per access; memory: one small record per pair.
use super::cache::human_bytes;
use polars::prelude::*;

use super::{AccessSink, NamedAccess, PairIndex, VarId, VarInfo};

const SLOTS: usize = 4;

/// What the sink saw of one (variable, line) pair.
#[derive(Clone, Debug, Default)]
pub struct PairPattern {
    /// Accesses.
    pub accesses: u64,
    /// Strides counted (successive accesses by one thread).
    pub steps: u64,
    /// The most frequent strides, in elements, with their (space-saving,
    /// over-estimated) counts, most frequent first.
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
    last: i64,
    last_tid: u32,
}

impl PairPattern {
    #[inline]
    fn count(&mut self, d: i64) {
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
    pub pairs: Vec<(u32, u32)>,
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
        let id = self.pairs.id(r.var.0, r.line.0) as usize;
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
        let off = r.addr.wrapping_sub(st.base);
        let (idx, within) = match st.shift {
            Some(b) => ((off >> b) as i64, off & (st.elem - 1)),
            None => ((off / st.elem) as i64, off % st.elem),
        };
        if within < 64 {
            let n = size.min(64 - within);
            let m = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
            st.elem_bytes |= m << within;
        }
        if st.last_tid == r.tid {
            st.count(idx.wrapping_sub(st.last));
        }
        st.last = idx;
        st.last_tid = r.tid;
    }

    /// The pairs, as (variable, line), and what was seen of each, by id.
    pub fn finish(self) -> (Vec<(u32, u32)>, Vec<PairPattern>) {
        (self.pairs.pairs().to_vec(), self.states)
    }

    /// [`Self::finish`] as one value.
    pub(crate) fn into_states(self) -> PatternStates {
        let (pairs, states) = self.finish();
        PatternStates { pairs, states }
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
const STATE_COLUMNS: [&str; 14] = [
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
];

impl PatternStates {
    /// The states as a table: one row per pair, in pair order.
    pub fn to_frame(&self) -> PolarsResult<DataFrame> {
        let st = &self.states;
        let u = |f: &dyn Fn(&PairPattern) -> u64| st.iter().map(f).collect::<Vec<u64>>();
        let mut cols = vec![
            Column::new(
                STATE_COLUMNS[0].into(),
                self.pairs.iter().map(|p| p.0).collect::<Vec<u32>>(),
            ),
            Column::new(
                STATE_COLUMNS[1].into(),
                self.pairs.iter().map(|p| p.1).collect::<Vec<u32>>(),
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
        DataFrame::new(cols)
    }

    /// The states a table of [`Self::to_frame`] holds.
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
        let states = (0..df.height())
            .map(|i| PairPattern {
                accesses: acc[i],
                steps: steps[i],
                strides: std::array::from_fn(|k| (strides[k].0[i], strides[k].1[i])),
                elem_bytes: bytes[i],
                elem: elem[i],
                ..Default::default()
            })
            .collect();
        Ok(PatternStates {
            pairs: var.into_iter().zip(line).collect(),
            states,
        })
    }
}

/// `stride 128 elements (1 KiB)`.
fn stride_text(k: i64, elem: u64) -> String {
    let bytes = k.unsigned_abs() * elem;
    let dir = if k < 0 { ", descending" } else { "" };
    format!(
        "stride {} elements ({}){dir}",
        k.unsigned_abs(),
        human_bytes(bytes)
    )
}

/// The label of one pair of variable `v`, e.g. `column-wise: stride 128
/// elements (1 KiB)`.
pub fn label(p: &PairPattern, v: &VarInfo) -> String {
    let mut text = shape_label(p, v);
    let elem = p.elem.min(64);
    let used = p.elem_bytes.count_ones() as u64;
    if v.elem_size > 0
        && p.elem > 1
        && used < elem
        && !text.starts_with("single")
        && text != "scalar"
    {
        text.push_str(&format!(
            "; {used} of {} bytes of each element used",
            p.elem
        ));
    }
    text
}

fn shape_label(p: &PairPattern, v: &VarInfo) -> String {
    if v.size > 0 && v.size <= p.elem {
        return "scalar".into();
    }
    if p.steps == 0 {
        return "single access".into();
    }
    let (d1, c1) = p.strides[0];
    if (c1 as f64) < 0.5 * p.steps as f64 {
        return "irregular".into();
    }
    if d1 == 0 {
        return "stride 0: the same element reused".into();
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
    let desc = if d1 < 0 { ", descending" } else { "" };
    match dims.len() {
        2 => {
            let (rows, cols) = (dims[0] as i64, dims[1] as i64);
            if d1.abs() == 1 {
                if let Some(b) = second.map(|s| cols - (s - 1)) {
                    if b >= 2 && b <= cols / 2 {
                        return format!("tiled: row-wise inside tiles {b} elements wide");
                    }
                }
                return format!("row-wise: unit stride{desc}");
            }
            if d1.abs() == cols {
                if let Some(s) = second {
                    if (1 - s) % cols == 0 {
                        let b = (1 - s) / cols + 1;
                        if b >= 2 && b <= rows / 2 {
                            return format!("tiled: column-wise inside tiles {b} rows tall");
                        }
                    }
                }
                return format!("column-wise: {}", stride_text(d1, p.elem));
            }
            if d1.abs() == cols + 1 {
                return format!("diagonal: {}", stride_text(d1, p.elem));
            }
            if cols > 2 && d1.abs() == cols - 1 {
                return format!("anti-diagonal: {}", stride_text(d1, p.elem));
            }
        }
        3 => {
            let (mid, last) = (dims[1] as i64, dims[2] as i64);
            if d1.abs() == 1 {
                return format!("row-wise (last index innermost): unit stride{desc}");
            }
            if d1.abs() == last {
                return format!("middle index innermost: {}", stride_text(d1, p.elem));
            }
            if d1.abs() == mid * last {
                return format!("first index innermost: {}", stride_text(d1, p.elem));
            }
        }
        _ => {}
    }
    if d1.abs() == 1 {
        return format!("unit stride{desc}");
    }
    format!("constant {}", stride_text(d1, p.elem))
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

    fn run(v: &VarInfo, idx: impl Iterator<Item = u64>, size: u32) -> String {
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
        assert_eq!(row, "row-wise: unit stride");
        let col = run(&v, (0..n).flat_map(|j| (0..n).map(move |i| i * n + j)), 8);
        assert_eq!(col, "column-wise: stride 32 elements (256 B)");
        let diag = run(&v, (0..n).map(|i| i * n + i), 8);
        assert_eq!(diag, "diagonal: stride 33 elements (264 B)");
        let b = 8u64;
        let tiled = (0..n / b).flat_map(move |bi| {
            (0..n / b).flat_map(move |bj| {
                (0..b).flat_map(move |i| (0..b).map(move |j| (bi * b + i) * n + bj * b + j))
            })
        });
        assert_eq!(
            run(&v, tiled, 8),
            "tiled: row-wise inside tiles 8 elements wide"
        );
        let reuse = run(&v, std::iter::repeat_n(5, 10), 8);
        assert_eq!(reuse, "stride 0: the same element reused");
    }

    #[test]
    fn a_k_outermost_3d_walk_has_the_first_index_innermost() {
        let v = var(&[8, 8, 8], 4);
        let walk = (0..8u64)
            .flat_map(|k| (0..8u64).flat_map(move |j| (0..8u64).map(move |i| i * 64 + j * 8 + k)));
        assert_eq!(
            run(&v, walk, 4),
            "first index innermost: stride 64 elements (256 B)"
        );
    }

    #[test]
    fn one_field_of_an_array_of_structs_uses_part_of_each_element() {
        let v = var(&[100], 24);
        assert_eq!(
            run(&v, 0..100, 8),
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
        assert_eq!(run(&v, idx, 4), "irregular");
    }
}
