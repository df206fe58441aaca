//! Two runs side by side: `compare_runs`.
//!
//! Variables are aligned by name, never by address: two builds of a
//! program place their arrays at different addresses, and the same binary
//! traced from another folder may too. mapvis's names are unique within a
//! run (instances are numbered, `arr#2`, and a name that means a heap
//! block and a stack pointer is told apart by scope, `arr@S`), so a name
//! picks one variable in each run, and a name found in one run only is
//! listed apart. Each side's numbers are that run's own `cache_stats`
//! numbers, computed with the same cache model.
//!
//! (Variable, line) pairs are aligned by variable and pattern label, never
//! by line number: two versions of a source number their lines apart.
//! Within a variable, pairs of one label are matched busiest with busiest
//! (by accesses); a pair left over on one side is listed apart rather than
//! matched with a pair of another label.
use std::collections::BTreeMap;

use polars::prelude::{Column, DataFrame, PolarsResult};

use super::cache::Counts;
use super::pattern::{RowLabel, Walk};
use super::report::{CacheReport, Row};
use super::reuse::{bin_range, Histogram};
use crate::trace::naming::natural_cmp;

/// What one run says of one variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    /// Accesses, misses per level, compulsory misses, lines fetched and
    /// bytes of them used, as `cache_stats` counts them.
    pub counts: Counts,
    /// L1 misses per access.
    pub miss_ratio: f64,
    /// Bytes used of each line fetched into L1, of the line size.
    pub line_bytes_used: f64,
    /// Median reuse distance in distinct cache lines, as the bounds of
    /// the power-of-two bin it falls in; `None` when no access was a reuse.
    pub reuse_median: Option<(u64, u64)>,
    /// The 90th percentile of the reuse distance, the same way.
    pub reuse_p90: Option<(u64, u64)>,
    /// The pattern label of the variable's busiest source line.
    pub pattern: String,
}

/// One variable of either run.
#[derive(Clone, Debug, PartialEq)]
pub struct VarComparison {
    /// Its name in both runs.
    pub variable: String,
    /// What run A says of it; `None` when A has no variable of that name.
    pub a: Option<Side>,
    /// What run B says of it.
    pub b: Option<Side>,
}

impl VarComparison {
    /// Change in misses at `level` from A to B (a variable missing from a
    /// run counts as 0 there).
    pub fn miss_change(&self, level: usize) -> i64 {
        let m = |s: &Option<Side>| s.as_ref().map_or(0, |s| s.counts.misses[level] as i64);
        m(&self.b) - m(&self.a)
    }

    /// Whether the variable is in both runs.
    pub fn in_both(&self) -> bool {
        self.a.is_some() && self.b.is_some()
    }
}

/// The variables of `a` and `b` (both `cache_stats` reports under the same
/// model), aligned by name: those in both runs first, by the largest change
/// in misses (L1, then the outer levels, then the name), then those found
/// in one run only. Cost: one pass over each report's pairs.
pub fn compare(a: &CacheReport, b: &CacheReport) -> Vec<VarComparison> {
    let sa = sides(a);
    let sb = sides(b);
    let mut names: Vec<&String> = sa.keys().chain(sb.keys()).collect();
    names.sort_by(|x, y| natural_cmp(x, y));
    names.dedup();
    let mut out: Vec<VarComparison> = names
        .into_iter()
        .map(|n| VarComparison {
            variable: n.clone(),
            a: sa.get(n).cloned(),
            b: sb.get(n).cloned(),
        })
        .collect();
    out.sort_by(|x, y| {
        let key = |c: &VarComparison| {
            (
                !c.in_both(),
                std::cmp::Reverse(c.miss_change(0).unsigned_abs()),
                std::cmp::Reverse(c.miss_change(1).unsigned_abs()),
                std::cmp::Reverse(c.miss_change(2).unsigned_abs()),
            )
        };
        key(x)
            .cmp(&key(y))
            .then_with(|| natural_cmp(&x.variable, &y.variable))
    });
    out
}

/// Each listed display row of `r` (a variable, or blocks grouped under one
/// name as `memory_stats` groups them) by name.
fn sides(r: &CacheReport) -> std::collections::BTreeMap<String, Side> {
    let busiest = busiest_patterns(r);
    let hists: std::collections::BTreeMap<String, Histogram> = r
        .row_histograms()
        .into_iter()
        .map(|(row, h)| (r.names.row_name(row).to_string(), h))
        .collect();
    let mut out = std::collections::BTreeMap::new();
    for row in r.per_variable() {
        let side = side(&row, hists.get(&row.key), busiest.get(&row.key).cloned());
        out.insert(row.key.clone(), side);
    }
    out
}

fn side(row: &Row, hist: Option<&Histogram>, pattern: Option<String>) -> Side {
    Side {
        counts: row.counts,
        miss_ratio: row.miss_ratio(),
        line_bytes_used: row.bytes_per_line(),
        reuse_median: hist.and_then(|h| quantile(h, 0.5)),
        reuse_p90: hist.and_then(|h| quantile(h, 0.9)),
        pattern: pattern.unwrap_or_default(),
    }
}

/// The pattern label of each display row's busiest (row, line) pair.
fn busiest_patterns(r: &CacheReport) -> std::collections::BTreeMap<String, String> {
    let mut best: std::collections::BTreeMap<String, (u64, String)> = Default::default();
    for p in r.per_pair() {
        let n = p.counts.accesses;
        match best.get(&p.key) {
            Some((m, _)) if *m >= n => {}
            _ => {
                best.insert(p.key.clone(), (n, p.pattern));
            }
        }
    }
    best.into_iter().map(|(k, (_, p))| (k, p)).collect()
}

/// What one run says of one (variable, line) pair.
#[derive(Clone, Debug, PartialEq)]
pub struct PairSide {
    /// The display name of the variable.
    pub variable: String,
    /// The pair's own pattern label (without bytes per line).
    pub label: RowLabel,
    /// Whether the pair is run A's (else run B's).
    pub run_a: bool,
    /// `file.c:LINE` in that run's source.
    pub source: String,
    /// The pair's counts, as `cache_stats`' per-pair table has them.
    pub counts: Counts,
    /// L1 misses per access.
    pub miss_ratio: f64,
    /// The pattern text `cache_stats` prints (label and bytes used per
    /// line).
    pub pattern: String,
}

/// One (variable, pattern label) pair of either run, or of both.
#[derive(Clone, Debug, PartialEq)]
pub struct PairComparison {
    /// The display name of the variable in both runs.
    pub variable: String,
    /// What the sides were matched on: the label both share, or the walk
    /// direction (`row-wise`) when one run's loop is tiled and the
    /// other's not (each side keeps its own label); a lone side's label.
    pub label: MatchKey,
    /// Run A's pair; `None` when A has no pair of that variable and label
    /// left to match.
    pub a: Option<PairSide>,
    /// Run B's pair.
    pub b: Option<PairSide>,
}

impl PairComparison {
    /// Change in misses at `level` from A to B (0 on a missing side).
    pub fn miss_change(&self, level: usize) -> i64 {
        let m = |s: &Option<PairSide>| s.as_ref().map_or(0, |s| s.counts.misses[level] as i64);
        m(&self.b) - m(&self.a)
    }

    /// Whether both runs have the pair.
    pub fn in_both(&self) -> bool {
        self.a.is_some() && self.b.is_some()
    }

    fn misses(&self, level: usize) -> u64 {
        let m = |s: &Option<PairSide>| s.as_ref().map_or(0, |s| s.counts.misses[level]);
        m(&self.a).max(m(&self.b))
    }
}

/// The listed (variable, line) pairs of `a` and `b`, matched by variable
/// and pattern label: within one (variable, label), the i-th busiest pair
/// of A with the i-th busiest of B (ties by source line); then the pairs
/// left, by variable and walk direction ([`walk`]), the same way. Matched pairs
/// come first, by the largest change in misses (L1, then the outer
/// levels), then the unmatched ones, by their misses. Cost: one pass over
/// each report's pairs and a sort.
pub fn compare_pairs(a: &CacheReport, b: &CacheReport) -> Vec<PairComparison> {
    let mut out = align(pair_groups(a, true), pair_groups(b, false));
    sort_pairs(&mut out);
    out
}

/// Matches pairs in two rounds: by (variable, label), then the pairs left
/// by (variable, walk direction) (see [`walk`]: a loop tiled in one run
/// and not in the other); within a key, index by index, busiest first.
/// What is left after both rounds stays with one side.
fn align(ga: PairGroups, gb: PairGroups) -> Vec<PairComparison> {
    let (mut out, ra, rb) = match_round(ga, gb);
    let (more, ra, rb) = match_round(by_walk(ra), by_walk(rb));
    out.extend(more);
    for sides in ra.into_values().chain(rb.into_values()) {
        for x in sides {
            out.push(PairComparison {
                variable: x.variable.clone(),
                label: MatchKey::Label(x.label),
                a: x.run_a.then(|| x.clone()),
                b: (!x.run_a).then_some(x),
            });
        }
    }
    out
}

/// Matches the lists of each key index by index; returns the matches and
/// the rest of each side, by key.
fn match_round(
    mut ga: PairGroups,
    mut gb: PairGroups,
) -> (Vec<PairComparison>, PairGroups, PairGroups) {
    let keys: Vec<(String, MatchKey)> =
        ga.keys().filter(|k| gb.contains_key(*k)).cloned().collect();
    let mut out = Vec::new();
    for k in keys {
        let mut xs = ga.remove(&k).unwrap_or_default();
        let mut ys = gb.remove(&k).unwrap_or_default();
        let n = xs.len().min(ys.len());
        let (rx, ry) = (xs.split_off(n), ys.split_off(n));
        for (x, y) in xs.into_iter().zip(ys) {
            out.push(PairComparison {
                variable: k.0.clone(),
                label: k.1,
                a: Some(x),
                b: Some(y),
            });
        }
        if !rx.is_empty() {
            ga.insert(k.clone(), rx);
        }
        if !ry.is_empty() {
            gb.insert(k, ry);
        }
    }
    (out, ga, gb)
}

/// The same pairs keyed by (variable, walk direction), busiest first.
fn by_walk(g: PairGroups) -> PairGroups {
    let mut out = PairGroups::new();
    for ((v, key), sides) in g {
        let key = match key {
            MatchKey::Label(l) => walk(&l),
            other => other,
        };
        out.entry((v, key)).or_default().extend(sides);
    }
    for v in out.values_mut() {
        busiest_first(v);
    }
    out
}

/// What two runs' pairs are matched on: first their whole label, then,
/// for the pairs left, the direction of their walk (a loop tiled in one
/// run and not in the other still walks `row-wise`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MatchKey {
    /// The label both pairs share.
    Label(RowLabel),
    /// Along the rows of a 2-D array, tiled or not.
    RowWise,
    /// Down the columns of a 2-D array, tiled or not.
    ColumnWise,
    /// A 3-D array with its last index innermost, whatever the width of
    /// its accesses.
    LastIndexInnermost,
}

impl std::fmt::Display for MatchKey {
    /// The label, or the direction as the labels begin with it (both made
    /// by the pattern module).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use super::pattern::Direction;
        match self {
            MatchKey::Label(l) => write!(f, "{l}"),
            MatchKey::RowWise => write!(f, "{}", Direction::RowWise),
            MatchKey::ColumnWise => write!(f, "{}", Direction::ColumnWise),
            MatchKey::LastIndexInnermost => write!(f, "{}", Direction::LastIndexInnermost),
        }
    }
}

/// The direction of a label's walk: the label without its tiling and
/// details (`tiled: row-wise inside tiles 8 elements wide` and `row-wise:
/// unit stride` both walk `row-wise`); other labels are their own walk.
pub fn walk(label: &RowLabel) -> MatchKey {
    match label.label.walk {
        Walk::RowWise(_) | Walk::TiledRows { .. } => MatchKey::RowWise,
        Walk::ColumnWise(_) | Walk::TiledColumns { .. } => MatchKey::ColumnWise,
        Walk::LastIndexInnermost(_) => MatchKey::LastIndexInnermost,
        _ => MatchKey::Label(*label),
    }
}

fn busiest_first(v: &mut [PairSide]) {
    v.sort_by(|x, y| {
        y.counts
            .accesses
            .cmp(&x.counts.accesses)
            .then_with(|| natural_cmp(&x.source, &y.source))
    });
}

/// Matched pairs first, by the largest change in misses; then the others
/// by their misses.
fn sort_pairs(out: &mut [PairComparison]) {
    out.sort_by(|x, y| {
        let key = |c: &PairComparison| {
            let both = c.in_both();
            let order = |l: usize| {
                if both {
                    c.miss_change(l).unsigned_abs()
                } else {
                    c.misses(l)
                }
            };
            (
                !both,
                std::cmp::Reverse(order(0)),
                std::cmp::Reverse(order(1)),
                std::cmp::Reverse(order(2)),
            )
        };
        key(x)
            .cmp(&key(y))
            .then_with(|| natural_cmp(&x.variable, &y.variable))
            // Labels as printed, in the order people read them.
            .then_with(|| x.label.to_string().cmp(&y.label.to_string()))
            .then_with(|| natural_cmp(&source_of(x), &source_of(y)))
    });
}

fn source_of(c: &PairComparison) -> String {
    c.a.as_ref()
        .or(c.b.as_ref())
        .map_or(String::new(), |s| s.source.clone())
}

/// Pairs by (display name, what they are matched on).
type PairGroups = BTreeMap<(String, MatchKey), Vec<PairSide>>;

/// Each listed pair of `r` by (display name, label), busiest first (ties
/// by source line, as people count).
fn pair_groups(r: &CacheReport, run_a: bool) -> PairGroups {
    let mut out = PairGroups::new();
    for p in r.per_pair() {
        // Every listed pair has a label; a pair whose variable has no name
        // has none to be matched on, and is left out.
        let Some(label) = p.label else { continue };
        out.entry((p.key.clone(), MatchKey::Label(label)))
            .or_default()
            .push(PairSide {
                miss_ratio: p.miss_ratio(),
                variable: p.key,
                label,
                run_a,
                source: p.source,
                counts: p.counts,
                pattern: p.pattern,
            });
    }
    for v in out.values_mut() {
        busiest_first(v);
    }
    out
}

/// The number of power-of-two bins from distance bin `a` to `b` (each bin
/// holds distances up to twice the last's); `None` unless both are known.
pub fn bin_steps(a: Option<(u64, u64)>, b: Option<(u64, u64)>) -> Option<i64> {
    let k = |(_, hi): (u64, u64)| i64::from(64 - hi.leading_zeros() as u8);
    Some(k(b?) - k(a?))
}

/// The bin (as its distance bounds) holding the `q` quantile of the
/// reuses (cold references left out); `None` when there is no reuse.
pub fn quantile(h: &Histogram, q: f64) -> Option<(u64, u64)> {
    let reuses: u64 = h.bins.iter().sum();
    if reuses == 0 {
        return None;
    }
    let rank = ((reuses as f64) * q).ceil().max(1.0) as u64;
    let mut seen = 0u64;
    for (k, n) in h.bins.iter().enumerate() {
        seen += n;
        if seen >= rank {
            return Some(bin_range(k));
        }
    }
    None
}

/// A reuse distance bin as text: `0`, `64-127`.
pub fn distance_text(d: Option<(u64, u64)>) -> String {
    match d {
        None => "-".into(),
        Some((lo, hi)) if lo == hi => lo.to_string(),
        Some((lo, hi)) => format!("{lo}-{hi}"),
    }
}

impl Side {
    /// The median and 90th percentile reuse distance bins as text
    /// (`64-127`, `-` when no access was a reuse; see [`distance_text`]).
    pub fn reuse_texts(&self) -> [String; 2] {
        [
            distance_text(self.reuse_median),
            distance_text(self.reuse_p90),
        ]
    }

    /// The change of the median and the 90th percentile reuse distance
    /// from this side to `later`, in power-of-two bins (see
    /// [`bin_steps`]).
    pub fn reuse_steps_to(&self, later: &Side) -> [Option<i64>; 2] {
        [
            bin_steps(self.reuse_median, later.reuse_median),
            bin_steps(self.reuse_p90, later.reuse_p90),
        ]
    }
}

/// Two runs' `cache_stats` reports side by side: their variables aligned
/// by name ([`compare`]) and their (variable, line) pairs by variable and
/// pattern ([`compare_pairs`]), with the cache levels both were simulated
/// with. Tables for the saved files come from its methods; laying it out
/// for the terminal is the shell's.
#[derive(Clone, Debug, PartialEq)]
pub struct RunComparison {
    /// The cache levels' names, innermost first (`L1`, `LL`).
    pub levels: Vec<String>,
    /// The variables, those in both runs first.
    pub vars: Vec<VarComparison>,
    /// The pairs, matched ones first.
    pub pairs: Vec<PairComparison>,
}

/// Runs A's and B's reports (simulated under the same cache model) side
/// by side. Cost: O(variables + pairs) of both reports.
pub fn compare_runs(a: &CacheReport, b: &CacheReport) -> RunComparison {
    RunComparison {
        levels: a.level_names(),
        vars: compare(a, b),
        pairs: compare_pairs(a, b),
    }
}

impl RunComparison {
    /// [`RunComparison::var_table`] with a last column `trace`: on each
    /// row, the state of that row's run (`states`, for `la` and `lb`:
    /// `complete` or `PARTIAL: REASON`), so a partial run is marked in the
    /// file itself.
    ///
    /// # Errors
    /// Only if polars refuses the columns.
    pub fn var_table_marked(
        &self,
        la: &str,
        lb: &str,
        states: [&str; 2],
    ) -> Result<DataFrame, crate::filter::error::FilterError> {
        let mut df = self.var_table(la, lb)?;
        crate::filter::csv::add_trace_column(
            &mut df,
            "run",
            &[(la, states[0].to_string()), (lb, states[1].to_string())],
        )?;
        Ok(df)
    }

    /// [`RunComparison::pair_table`] with each side's trace state
    /// ([`crate::filter::model::TraceSummary::trace_state`]) in the columns
    /// `trace_a` and `trace_b`.
    ///
    /// # Errors
    /// Only if polars refuses the columns.
    pub fn pair_table_marked(
        &self,
        states: [&str; 2],
    ) -> Result<DataFrame, crate::filter::error::FilterError> {
        let mut df = self.pair_table()?;
        crate::filter::csv::add_text_column(&mut df, "trace_a", states[0])?;
        crate::filter::csv::add_text_column(&mut df, "trace_b", states[1])?;
        Ok(df)
    }

    /// The comparison as a table: one row per variable and run (labelled
    /// `la` and `lb`), and on run B's row of a variable in both runs, its
    /// changes from run A (absolute, and in percent of A; reuse distance
    /// bins as power-of-two steps).
    ///
    /// # Errors
    /// Only if polars refuses the columns (they have equal lengths).
    pub fn var_table(&self, la: &str, lb: &str) -> PolarsResult<DataFrame> {
        let mut t = VarTable::new(self.levels.len());
        for c in &self.vars {
            for (label, side) in [(la, &c.a), (lb, &c.b)] {
                let Some(x) = side else { continue };
                let before = match (label == lb, &c.a) {
                    (true, Some(a)) if c.in_both() => Some(a),
                    _ => None,
                };
                t.push(&c.variable, label, x, before);
            }
        }
        t.frame(&self.levels)
    }

    /// The pairs as a table: one row per pair comparison, each side's
    /// source, pattern, accesses and misses (empty where the side is
    /// absent).
    ///
    /// # Errors
    /// Only if polars refuses the columns (they have equal lengths).
    pub fn pair_table(&self) -> PolarsResult<DataFrame> {
        let pairs = &self.pairs;
        let get = |f: &dyn Fn(&PairSide) -> u64, side: SideOf| {
            pairs
                .iter()
                .map(|p| side(p).as_ref().map(f))
                .collect::<Vec<Option<u64>>>()
        };
        let text =
            |f: &dyn Fn(&PairComparison) -> String| pairs.iter().map(f).collect::<Vec<String>>();
        let sides: [(&str, SideOf); 2] = [("a", |p| &p.a), ("b", |p| &p.b)];
        let mut cols = vec![
            Column::new("variable".into(), text(&|p| p.variable.clone())),
            Column::new("matched_on".into(), text(&|p| p.label.to_string())),
            Column::new(
                "matched".into(),
                pairs.iter().map(|p| p.in_both()).collect::<Vec<bool>>(),
            ),
        ];
        let texts = |side: SideOf, f: fn(&PairSide) -> String| {
            pairs
                .iter()
                .map(|p| side(p).as_ref().map(f))
                .collect::<Vec<Option<String>>>()
        };
        for (tag, side) in sides {
            cols.push(Column::new(
                format!("source_{tag}").into(),
                texts(side, |x| x.source.clone()),
            ));
            cols.push(Column::new(
                format!("pattern_{tag}").into(),
                texts(side, |x| x.label.to_string()),
            ));
            cols.push(Column::new(
                format!("accesses_{tag}").into(),
                get(&|x| x.counts.accesses, side),
            ));
            for (i, l) in self.levels.iter().enumerate() {
                cols.push(Column::new(
                    format!("misses_{l}_{tag}").into(),
                    get(&|x| x.counts.misses[i], side),
                ));
            }
        }
        DataFrame::new(cols)
    }
}

/// One side of a pair comparison.
type SideOf = fn(&PairComparison) -> &Option<PairSide>;

/// The columns of [`RunComparison::var_table`], filled a row at a time.
#[derive(Default)]
struct VarTable {
    text: [Vec<String>; 5],
    counts: Vec<Vec<u64>>,
    ratios: [Vec<f64>; 2],
    change: Vec<Vec<Option<f64>>>,
    steps: [Vec<Option<i64>>; 2],
}

/// The counts of a side, as the table's count columns: accesses, bytes,
/// misses per level, then each level's misses by class (compulsory,
/// capacity, conflict).
fn count_values(x: &Side, levels: usize) -> Vec<u64> {
    let mut v = vec![x.counts.accesses, x.counts.bytes];
    v.extend((0..levels).map(|i| x.counts.misses[i]));
    for c in &x.counts.classes[..levels] {
        v.extend([c.compulsory, c.capacity, c.conflict]);
    }
    v
}

/// The names of [`count_values`] after accesses and bytes.
fn level_count_names(levels: &[String]) -> Vec<String> {
    let mut v: Vec<String> = levels.iter().map(|l| format!("misses_{l}")).collect();
    for l in levels {
        v.extend(["compulsory", "capacity", "conflict"].map(|c| format!("{c}_{l}")));
    }
    v
}

/// The numbers of a side whose changes the table gives: its counts, miss
/// ratio and bytes used per line.
fn measures(x: &Side, levels: usize) -> Vec<f64> {
    let mut v: Vec<f64> = count_values(x, levels)
        .into_iter()
        .map(|n| n as f64)
        .collect();
    v.extend([x.miss_ratio, x.line_bytes_used]);
    v
}

fn measure_names(levels: &[String]) -> Vec<String> {
    let mut v = vec!["accesses".to_string(), "bytes".to_string()];
    v.extend(level_count_names(levels));
    v.extend(["miss_ratio", "line_bytes_used"].map(String::from));
    v
}

impl VarTable {
    fn new(levels: usize) -> VarTable {
        VarTable {
            counts: vec![Vec::new(); 2 + 4 * levels],
            change: vec![Vec::new(); 2 * (4 + 4 * levels)],
            ..Default::default()
        }
    }

    fn push(&mut self, var: &str, run: &str, x: &Side, before: Option<&Side>) {
        let [p50, p90] = x.reuse_texts();
        let texts = [
            var.to_string(),
            run.to_string(),
            p50,
            p90,
            x.pattern.clone(),
        ];
        for (col, v) in self.text.iter_mut().zip(texts) {
            col.push(v);
        }
        let levels = (self.counts.len() - 2) / 4;
        for (col, v) in self.counts.iter_mut().zip(count_values(x, levels)) {
            col.push(v);
        }
        self.ratios[0].push(x.miss_ratio);
        self.ratios[1].push(x.line_bytes_used);
        let now = measures(x, levels);
        let was = before.map(|b| measures(b, levels));
        for (k, n) in now.iter().enumerate() {
            let w = was.as_ref().map(|w| w[k]);
            self.change[2 * k].push(w.map(|w| n - w));
            self.change[2 * k + 1].push(w.filter(|&w| w != 0.0).map(|w| 100.0 * (n - w) / w));
        }
        let [s50, s90] = before.map_or([None, None], |b| b.reuse_steps_to(x));
        self.steps[0].push(s50);
        self.steps[1].push(s90);
    }

    fn frame(self, levels: &[String]) -> PolarsResult<DataFrame> {
        let [var, run, p50, p90, pat] = self.text;
        let mut cols = vec![
            Column::new("variable".into(), var),
            Column::new("run".into(), run),
        ];
        let mut counts = self.counts.into_iter();
        let accesses = counts.next().unwrap_or_default();
        let bytes = counts.next().unwrap_or_default();
        cols.push(Column::new("accesses".into(), accesses));
        let names = level_count_names(levels);
        let (misses, classes) = names.split_at(levels.len());
        for (name, m) in misses.iter().zip(counts.by_ref()) {
            cols.push(Column::new(name.into(), m));
        }
        cols.push(Column::new("bytes".into(), bytes));
        let [ratio, used] = self.ratios;
        cols.push(Column::new("miss_ratio".into(), ratio));
        cols.push(Column::new("line_bytes_used".into(), used));
        cols.push(Column::new("reuse_p50".into(), p50));
        cols.push(Column::new("reuse_p90".into(), p90));
        cols.push(Column::new("pattern".into(), pat));
        for (name, c) in classes.iter().zip(counts) {
            cols.push(Column::new(name.into(), c));
        }
        let mut change = self.change.into_iter();
        for name in measure_names(levels) {
            cols.push(Column::new(
                format!("change_{name}").into(),
                change.next().unwrap_or_default(),
            ));
            cols.push(Column::new(
                format!("change_{name}_pct").into(),
                change.next().unwrap_or_default(),
            ));
        }
        let [s50, s90] = self.steps;
        cols.push(Column::new("change_reuse_p50_bins".into(), s50));
        cols.push(Column::new("change_reuse_p90_bins".into(), s90));
        DataFrame::new(cols)
    }
}

#[cfg(test)]
mod tests {
    use super::super::pattern::{PatternLabel, Stride, Unit};
    use super::*;

    #[test]
    fn quantiles_fall_in_the_bin_that_holds_them() {
        let mut h = Histogram::default();
        h.add(Some(0), 5);
        h.add(Some(100), 4);
        h.add(Some(1000), 1);
        h.add(None, 50);
        assert_eq!(quantile(&h, 0.5), Some((0, 0)));
        assert_eq!(quantile(&h, 0.9), Some((64, 127)));
        assert_eq!(quantile(&h, 1.0), Some((512, 1023)));
        assert_eq!(quantile(&Histogram::default(), 0.5), None);
    }

    fn lab(walk: Walk) -> RowLabel {
        RowLabel {
            label: PatternLabel {
                walk,
                bytes_used: None,
            },
            differ: None,
        }
    }

    fn pair(key: &(String, MatchKey), source: &str, accesses: u64, l1: u64) -> PairSide {
        let MatchKey::Label(label) = key.1 else {
            panic!("pairs are keyed by their label")
        };
        PairSide {
            variable: key.0.clone(),
            label,
            run_a: source.starts_with('a'),
            source: source.into(),
            counts: Counts {
                accesses,
                misses: [l1, 0, 0],
                ..Default::default()
            },
            miss_ratio: l1 as f64 / accesses as f64,
            pattern: String::new(),
        }
    }

    #[test]
    fn pairs_match_by_label_then_walk_busiest_first_and_leftovers_stay_apart() {
        let key = |v: &str, l: RowLabel| (v.to_string(), MatchKey::Label(l));
        let row = lab(Walk::RowWise(Unit {
            descending: false,
            vector: None,
        }));
        let col = lab(Walk::ColumnWise(Stride {
            elements: 64,
            elem: 8,
        }));
        let tiled_col = lab(Walk::TiledColumns { height: 8 });
        let (irregular, three) = (
            lab(Walk::Irregular),
            lab(Walk::Constant(Stride {
                elements: 3,
                elem: 4,
            })),
        );
        let mut ga = PairGroups::new();
        let k = key("X", row);
        ga.insert(
            k.clone(),
            vec![pair(&k, "a.c:10", 100, 50), pair(&k, "a.c:20", 10, 5)],
        );
        let k = key("X", col);
        ga.insert(k.clone(), vec![pair(&k, "a.c:30", 40, 40)]);
        let k = key("Y", col);
        ga.insert(k.clone(), vec![pair(&k, "a.c:31", 64, 64)]);
        let k = key("Z", irregular);
        ga.insert(k.clone(), vec![pair(&k, "a.c:50", 9, 9)]);
        let mut gb = PairGroups::new();
        let k = key("X", row);
        gb.insert(k.clone(), vec![pair(&k, "b.c:12", 100, 10)]);
        let k = key("Y", tiled_col);
        gb.insert(k.clone(), vec![pair(&k, "b.c:44", 64, 16)]);
        let k = key("Z", three);
        gb.insert(k.clone(), vec![pair(&k, "b.c:40", 8, 8)]);
        let mut got = align(ga, gb);
        sort_pairs(&mut got);
        let view: Vec<(&str, MatchKey, Option<&str>, Option<&str>)> = got
            .iter()
            .map(|c| {
                (
                    c.variable.as_str(),
                    c.label,
                    c.a.as_ref().map(|s| s.source.as_str()),
                    c.b.as_ref().map(|s| s.source.as_str()),
                )
            })
            .collect();
        let l = MatchKey::Label;
        assert_eq!(
            view,
            [
                ("Y", MatchKey::ColumnWise, Some("a.c:31"), Some("b.c:44")),
                ("X", l(row), Some("a.c:10"), Some("b.c:12")),
                ("X", l(col), Some("a.c:30"), None),
                ("Z", l(irregular), Some("a.c:50"), None),
                ("Z", l(three), None, Some("b.c:40")),
                ("X", l(row), Some("a.c:20"), None),
            ]
        );
        assert_eq!(got[0].miss_change(0), -48);
        assert_eq!(got[0].b.as_ref().unwrap().label, tiled_col);
        assert_eq!(got[0].label.to_string(), "column-wise");
    }

    #[test]
    fn walks_drop_tiling_and_details_only() {
        let unit = Unit {
            descending: false,
            vector: Some(16),
        };
        let tiled = lab(Walk::TiledRows {
            width: 8,
            vector: None,
        });
        assert_eq!(walk(&tiled), MatchKey::RowWise);
        assert_eq!(walk(&lab(Walk::RowWise(unit))), MatchKey::RowWise);
        let col = lab(Walk::ColumnWise(Stride {
            elements: 64,
            elem: 8,
        }));
        assert_eq!(walk(&col), MatchKey::ColumnWise);
        let three = lab(Walk::LastIndexInnermost(unit));
        assert_eq!(walk(&three), MatchKey::LastIndexInnermost);
        assert_eq!(walk(&three).to_string(), "row-wise (last index innermost)");
        let other = lab(Walk::Constant(Stride {
            elements: 3,
            elem: 4,
        }));
        assert_eq!(walk(&other), MatchKey::Label(other));
        assert_eq!(
            walk(&other).to_string(),
            "constant stride 3 elements (12 B)"
        );
    }

    #[test]
    fn distance_changes_count_bins() {
        assert_eq!(bin_steps(Some((0, 0)), Some((1, 1))), Some(1));
        assert_eq!(bin_steps(Some((64, 127)), Some((2, 3))), Some(-5));
    }
}
