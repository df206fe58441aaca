//! Runs the locality sinks over an analysis and turns what they found into
//! tables (polars) and text, for `cache_stats`, `sharing_stats` and the
//! pattern section of `memory_stats`.
//!
//! Per variable and per (variable, line), only the variables shown for the
//! chosen memory kind are listed; per source line, every access on the line
//! counts (as cachegrind counts them), whatever the memory kind. The cache
//! itself always sees every access: an unlisted variable still evicts lines.
use super::recorded::Recorded;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::cache::{human_bytes, CacheError, CacheModel, CacheResult, CacheSim, Counts};
use super::pattern::Differ;
use super::pattern::{label, PatternSink, RowLabel};
use super::reuse::{bin_low, Histogram, ReuseResult, ReuseSink, Sampling, BINS};
use super::sharing::{ByteSet, LineUse, SharingCandidates, SharingSink};
use super::{drive, AccessSink, LineId, Names, VarId};
use crate::filter::analysis::Analysis;
use crate::filter::schema::location as lc;
use crate::filter::stats::Grouping;
use crate::filter::walks::{PairPattern, PatternStates};
use crate::filter::{error::FilterError, io, model::MemKind};
use crate::trace::naming::{element_path, natural_cmp};

/// Errors of the locality reports.
#[derive(Debug, thiserror::Error)]
pub enum LocalityError {
    /// The cache model is unusable.
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// Reading the analysis or writing a file failed.
    #[error(transparent)]
    Filter(#[from] FilterError),
}

impl From<PolarsError> for LocalityError {
    fn from(e: PolarsError) -> Self {
        LocalityError::Filter(FilterError::Table(e))
    }
}

/// What `cache_stats` computes.
#[derive(Clone, Debug)]
pub struct Options {
    /// The hierarchy to simulate.
    pub model: CacheModel,
    /// SHARDS sampling of the reuse distance, None for exact.
    pub sampling: Option<Sampling>,
    /// `set_reuse_sampling auto N`: with `sampling` None, exact reuse
    /// distances up to N accesses, sampled at [`AUTO_RATE`] above them
    /// (see [`Options::for_accesses`]); None: as `sampling` says, always.
    pub auto_above: Option<u64>,
    /// How heap blocks are grouped into rows (`set_heap_grouping`), as in
    /// `memory_stats`.
    pub grouping: Grouping,
}

/// The SHARDS rate `set_reuse_sampling auto` samples at above its
/// threshold: 1% of the lines.
pub const AUTO_RATE: f64 = 0.01;

/// The default threshold of `set_reuse_sampling auto`: 10^9 accesses,
/// above every test program, where exact distances would cost minutes.
pub const AUTO_ABOVE: u64 = 1_000_000_000;

impl Options {
    /// The options for a trace of `accesses` accesses: the automatic
    /// sampling decided (sampled at [`AUTO_RATE`] when they are more than
    /// the threshold), the rest unchanged.
    pub fn for_accesses(&self, accesses: u64) -> Options {
        let mut o = self.clone();
        if o.sampling.is_none() && o.auto_above.is_some_and(|n| accesses > n) {
            o.sampling = Sampling::new(AUTO_RATE);
        }
        o.auto_above = None;
        o
    }
}

/// Everything `cache_stats` found in one pass.
#[derive(Clone, Debug)]
pub struct CacheReport {
    /// Variable and line names.
    pub names: Names,
    /// Which variables are listed.
    pub shown: Vec<bool>,
    /// The simulation, per (variable, line) pair.
    pub cache: CacheResult,
    /// Reuse distance per variable.
    pub reuse: ReuseResult,
    /// Pattern per cache pair id (same ids as `cache.pairs`).
    pub patterns: Vec<PairPattern>,
    /// The counts are those the analysis recorded as it streamed (see
    /// [`super::recorded`]), not a simulation of this command's.
    pub recorded: bool,
}

/// Simulates the caches, measures reuse distance and labels the patterns,
/// in one pass over the accesses of `a`; or, when the analysis recorded
/// them for this model and sampling while it streamed (see
/// [`super::recorded`]), reads its counts and pattern states without a
/// pass.
pub fn cache_stats(
    a: &Analysis,
    kind: MemKind,
    opts: &Options,
) -> Result<CacheReport, LocalityError> {
    let shown = a
        .vars
        .iter()
        .map(|v| crate::filter::model::shows(kind, v))
        .collect();
    let names = Names::grouped(a, opts.grouping)?;
    let opts = &opts.for_accesses(a.summary.accesses);
    let rec = a.locality.as_ref();
    let line = opts.model.levels.first().map_or(0, |l| l.line);
    // What the analysis recorded for this model, and reuse distances at the
    // same line size and sampling, hold; only the rest is computed.
    let known = Known {
        cache: rec
            .filter(|r| r.answers(&opts.model))
            .map(|r| r.cache_result(&opts.model)),
        reuse: rec.and_then(|r| r.reuse_result(line, opts.sampling)),
        patterns: a.patterns.as_ref(),
    };
    if let (Some(_), Some(_)) = (&known.cache, &known.reuse) {
        let st = pattern_states(a, &names)?;
        let known = Known {
            patterns: Some(&st),
            ..known
        };
        return Ok(ReportSinks::none().finish_with(names, shown, known));
    }
    let mut sinks = ReportSinks::with_known(&names, opts, &known)?;
    drive(a, &mut sinks.as_sinks())?;
    Ok(sinks.finish_with(names, shown, known))
}

/// What a report need not compute again: the model's counts and reuse
/// distances the analysis recorded, and the pattern states it gathered.
struct Known<'a> {
    cache: Option<CacheResult>,
    reuse: Option<ReuseResult>,
    patterns: Option<&'a PatternStates>,
}

/// The pattern state of each cache pair (`cache`, by pair id), from states
/// numbered by `ppairs`: both number pairs in order of first appearance
/// over the same accesses, so the ids agree; they are matched by key all
/// the same. A pair with no state gets an empty one.
fn patterns_by_pair(
    cache: &[(VarId, LineId)],
    ppairs: &[(VarId, LineId)],
    pstates: &[PairPattern],
) -> Vec<PairPattern> {
    let by_key: BTreeMap<(VarId, LineId), usize> =
        ppairs.iter().enumerate().map(|(i, p)| (*p, i)).collect();
    cache
        .iter()
        .map(|p| {
            by_key
                .get(p)
                .map(|&i| pstates[i].clone())
                .unwrap_or_default()
        })
        .collect()
}

/// A pass over accesses in time order that hands each to every sink, and
/// returns how many it handed.
pub type Feed<'f> = dyn FnMut(&mut [&mut dyn AccessSink]) -> Result<u64, FilterError> + 'f;

/// What `cache_stats` computes, over the accesses `feed` hands the sinks:
/// the same sinks as [`cache_stats`], for callers that change the accesses
/// on the way (the layout predictions rewrite one variable's addresses, and
/// may name variables past the analysis' own rows, which `names` and
/// `shown` then list). Cost: one pass of `feed`; memory bounded by the
/// distinct lines, variables and source lines, as for [`cache_stats`].
pub fn cache_stats_over(
    names: Names,
    shown: Vec<bool>,
    opts: &Options,
    feed: &mut Feed<'_>,
) -> Result<CacheReport, LocalityError> {
    let mut sinks = ReportSinks::new(&names, opts, true)?;
    feed(&mut sinks.as_sinks())?;
    Ok(sinks.finish(names, shown))
}

/// The sinks of one cache report (the cache model, reuse distance and
/// patterns), each left out when already known; a prediction's report is
/// made from its model alone ([`ReportSinks::prediction`]). Memory: the model's state, one
/// entry per distinct line for the reuse distance, one pattern state per
/// (variable, line) pair.
pub(crate) struct ReportSinks {
    /// None when the model's counts are known.
    sim: Option<CacheSim>,
    /// None when they are known (and for a prediction, see
    /// [`ReportSinks::prediction`]).
    reuse: Option<ReuseSink>,
    /// None when the pattern states are known.
    pat: Option<PatternSink>,
    line: u32,
}

impl ReportSinks {
    /// Empty sinks for the variables of `names`; `reuse`: measure reuse
    /// distances too (a prediction's report leaves them out: no command
    /// shows them, and the exact measure costs as much as the cache
    /// model).
    ///
    /// # Errors
    /// The cache model is unusable.
    pub(crate) fn new(
        names: &Names,
        opts: &Options,
        reuse: bool,
    ) -> Result<ReportSinks, LocalityError> {
        let line = opts.model.levels[0].line;
        Ok(ReportSinks {
            sim: Some(CacheSim::new(&opts.model)?),
            reuse: reuse.then(|| ReuseSink::new(line, opts.sampling)),
            pat: Some(PatternSink::new(&names.vars)),
            line,
        })
    }

    /// The report of a prediction: what `sim` counted, with neither reuse
    /// distances nor patterns (no command shows them for a prediction:
    /// `what_if` and `advise` print misses, classes and bytes used).
    pub(crate) fn prediction(sim: CacheSim, names: Names, shown: Vec<bool>) -> CacheReport {
        let line = sim.model().levels.first().map_or(64, |l| l.line);
        ReportSinks {
            sim: Some(sim),
            reuse: None,
            pat: None,
            line,
        }
        .finish(names, shown)
    }

    /// No sink: everything is known.
    fn none() -> ReportSinks {
        ReportSinks {
            sim: None,
            reuse: None,
            pat: None,
            line: 0,
        }
    }

    /// Sinks for what `known` leaves to compute: always the model, reuse
    /// distances and patterns unless known.
    fn with_known(
        names: &Names,
        opts: &Options,
        known: &Known<'_>,
    ) -> Result<ReportSinks, LocalityError> {
        let mut s = ReportSinks::new(names, opts, known.reuse.is_none())?;
        if known.patterns.is_some() {
            s.pat = None;
        }
        // The model runs beside the reader's thread: its outer levels
        // take the core the reading leaves.
        s.sim = match known.cache {
            Some(_) => None,
            None => s.sim.map(CacheSim::piped),
        };
        Ok(s)
    }

    /// The sinks, to be fed the same accesses.
    pub(crate) fn as_sinks(&mut self) -> Vec<&mut dyn AccessSink> {
        let mut out: Vec<&mut dyn AccessSink> = Vec::new();
        if let Some(s) = self.sim.as_mut() {
            out.push(s);
        }
        if let Some(p) = self.pat.as_mut() {
            out.push(p);
        }
        if let Some(r) = self.reuse.as_mut() {
            out.push(r);
        }
        out
    }

    /// The report of what the sinks were fed.
    pub(crate) fn finish(self, names: Names, shown: Vec<bool>) -> CacheReport {
        self.finish_with(
            names,
            shown,
            Known {
                cache: None,
                reuse: None,
                patterns: None,
            },
        )
    }

    /// The report of what the sinks were fed, with what `known` held.
    fn finish_with(self, names: Names, shown: Vec<bool>, known: Known<'_>) -> CacheReport {
        let recorded = self.sim.is_none();
        let cache = match (self.sim, known.cache) {
            (Some(s), _) => s.finish(),
            (None, Some(c)) => c,
            (None, None) => unreachable!("a report's sinks simulate the model unless it is known"),
        };
        let patterns = match (self.pat, known.patterns) {
            (Some(p), _) => {
                let (ppairs, pstates) = p.finish();
                patterns_by_pair(&cache.pairs, &ppairs, &pstates)
            }
            (None, Some(st)) => patterns_by_pair(&cache.pairs, &st.pairs, &st.states),
            (None, None) => vec![PairPattern::default(); cache.pairs.len()],
        };
        let reuse = match (self.reuse, known.reuse) {
            (Some(r), _) => r.finish(),
            (None, Some(r)) => r,
            (None, None) => ReuseSink::new(self.line, None).finish(),
        };
        CacheReport {
            shown,
            names,
            cache,
            reuse,
            patterns,
            recorded,
        }
    }
}

/// One row of a summary: a name and its counts.
#[derive(Clone, Debug)]
pub struct Row {
    /// Variable name, `file.c:LINE`, or both.
    pub key: String,
    /// Second key (the source line of a (variable, line) row).
    pub source: String,
    /// The counts.
    pub counts: Counts,
    /// Pattern label, for (variable, line) rows, with the bytes used per
    /// fetched line.
    pub pattern: String,
    /// The pattern label alone (no bytes per line), for (variable, line)
    /// rows: what two runs' pairs are matched on.
    pub label: Option<RowLabel>,
    /// Variables touched, for line rows.
    pub variables: String,
}

impl Row {
    /// L1 misses per access.
    pub fn miss_ratio(&self) -> f64 {
        self.counts.misses[0] as f64 / self.counts.accesses.max(1) as f64
    }

    /// Average bytes touched per line fetched into L1.
    pub fn bytes_per_line(&self) -> f64 {
        self.counts.used_bytes as f64 / self.counts.fetched.max(1) as f64
    }
}

impl CacheReport {
    fn levels(&self) -> usize {
        self.cache.model.levels.len()
    }

    /// The line size of the first level.
    pub fn line(&self) -> u32 {
        self.cache.model.levels[0].line
    }

    /// The names of the model's levels (`L1`, `L2`, ...), as the
    /// `misses_L1` keys and column names use them.
    pub fn level_names(&self) -> Vec<String> {
        self.cache.model.levels.iter().map(|l| l.name()).collect()
    }

    /// Whether variable `v` is listed.
    fn listed(&self, v: VarId) -> bool {
        self.shown.get(v.index()).copied().unwrap_or(false)
    }

    /// Per listed display row (a variable, or the blocks grouped under one
    /// name), by descending misses at the first level.
    pub fn per_variable(&self) -> Vec<Row> {
        let mut acc: BTreeMap<u32, Counts> = BTreeMap::new();
        for (i, &(v, _)) in self.cache.pairs.iter().enumerate() {
            if self.listed(v) {
                acc.entry(self.names.row(v))
                    .or_default()
                    .add(&self.cache.counts[i]);
            }
        }
        let mut rows: Vec<Row> = acc
            .into_iter()
            .map(|(r, c)| Row {
                key: self.names.row_name(r).to_string(),
                source: String::new(),
                counts: c,
                pattern: String::new(),
                label: None,
                variables: String::new(),
            })
            .collect();
        rows.sort_by(|a, b| {
            b.counts.misses[0]
                .cmp(&a.counts.misses[0])
                .then(natural_cmp(&a.key, &b.key))
        });
        rows
    }

    /// Per source line (every access), by descending misses at the last
    /// level, then at the first.
    pub fn per_line(&self) -> Vec<Row> {
        let mut acc: BTreeMap<LineId, (Counts, Vec<u32>)> = BTreeMap::new();
        for (i, &(v, l)) in self.cache.pairs.iter().enumerate() {
            let e = acc.entry(l).or_default();
            e.0.add(&self.cache.counts[i]);
            let r = self.names.row(v);
            if self.listed(v) && !e.1.contains(&r) {
                e.1.push(r);
            }
        }
        let last = self.levels() - 1;
        let mut rows: Vec<Row> = acc
            .into_iter()
            .map(|(l, (c, vars))| Row {
                key: self.names.source(l).to_string(),
                source: String::new(),
                counts: c,
                pattern: String::new(),
                label: None,
                variables: vars
                    .iter()
                    .map(|&r| self.names.row_name(r))
                    .collect::<Vec<_>>()
                    .join(" "),
            })
            .collect();
        rows.sort_by(|a, b| {
            (b.counts.misses[last], b.counts.misses[0])
                .cmp(&(a.counts.misses[last], a.counts.misses[0]))
                .then(natural_cmp(&a.key, &b.key))
        });
        rows
    }

    /// The pattern label of pair `i`, with the bytes used per fetched line.
    pub fn pattern_text(&self, i: usize) -> String {
        let (v, _) = self.cache.pairs[i];
        let Some(var) = self.names.vars.get(v.index()) else {
            return String::new();
        };
        let mut t = label(&self.patterns[i], var).to_string();
        let c = &self.cache.counts[i];
        if c.fetched > 0 {
            t.push_str(&format!(
                ", {:.0} of {} bytes per line used",
                c.used_bytes as f64 / c.fetched as f64,
                self.line()
            ));
        }
        t
    }

    /// The pattern label of a display row's pairs on one line, `members`
    /// (pair ids, busiest first), with the bytes used per fetched line of
    /// `counts`, their sum. A row of one variable has its pair's label; a
    /// row of grouped blocks has its busiest block's label, marked when
    /// the other blocks' labels differ, so no label speaks for blocks it
    /// does not describe.
    fn group_pattern_text(&self, members: &[usize], counts: &Counts) -> String {
        let mut t = self
            .group_label(members)
            .map_or_else(String::new, |l| l.to_string());
        if counts.fetched > 0 {
            t.push_str(&format!(
                ", {:.0} of {} bytes per line used",
                counts.used_bytes as f64 / counts.fetched as f64,
                self.line()
            ));
        }
        t
    }

    /// The pattern label of a display row's pairs on one line, `members`
    /// (busiest first), without the bytes per line: see
    /// [`Self::group_pattern_text`].
    fn group_label(&self, members: &[usize]) -> Option<RowLabel> {
        let label_of = |i: usize| {
            let v = self.cache.pairs[i].0;
            self.names
                .vars
                .get(v.index())
                .map(|var| label(&self.patterns[i], var))
        };
        let first = label_of(members[0])?;
        let others = members[1..]
            .iter()
            .filter(|&&i| label_of(i) != Some(first))
            .count();
        Some(RowLabel {
            label: first,
            differ: (others > 0).then_some(Differ {
                blocks: members.len(),
                others,
            }),
        })
    }

    /// Per display row and line: the pair ids of the listed variables,
    /// busiest first, in order of the row's first pair.
    pub fn row_pairs(&self) -> Vec<((u32, LineId), Vec<usize>)> {
        let mut at: std::collections::HashMap<(u32, LineId), usize> = Default::default();
        let mut out: Vec<((u32, LineId), Vec<usize>)> = Vec::new();
        for (i, &(v, l)) in self.cache.pairs.iter().enumerate() {
            if !self.listed(v) {
                continue;
            }
            let key = (self.names.row(v), l);
            let k = *at.entry(key).or_insert_with(|| {
                out.push((key, Vec::new()));
                out.len() - 1
            });
            out[k].1.push(i);
        }
        for (_, m) in &mut out {
            m.sort_by_key(|&i| std::cmp::Reverse(self.cache.counts[i].accesses));
        }
        out
    }

    /// Per listed (display row, line) pair, by descending first-level
    /// misses.
    pub fn per_pair(&self) -> Vec<Row> {
        let mut rows: Vec<Row> = self
            .row_pairs()
            .into_iter()
            .map(|((r, l), members)| {
                let mut counts = Counts::default();
                for &i in &members {
                    counts.add(&self.cache.counts[i]);
                }
                Row {
                    key: self.names.row_name(r).to_string(),
                    source: self.names.source(l).to_string(),
                    pattern: self.group_pattern_text(&members, &counts),
                    label: self.group_label(&members),
                    counts,
                    variables: String::new(),
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            b.counts.misses[0]
                .cmp(&a.counts.misses[0])
                .then(natural_cmp(&a.key, &b.key))
                .then(natural_cmp(&a.source, &b.source))
        });
        rows
    }

    /// A table of rows: `first` (the key column), optionally `source`,
    /// then accesses, one misses column per level, compulsory, miss_ratio,
    /// line_bytes_used, and `extra` (pattern or variables).
    pub fn table(
        &self,
        rows: &[Row],
        first: &str,
        with_source: bool,
        extra: Option<&str>,
    ) -> PolarsResult<DataFrame> {
        let mut cols = vec![Column::new(
            first.into(),
            rows.iter().map(|r| r.key.clone()).collect::<Vec<_>>(),
        )];
        if with_source {
            cols.push(Column::new(
                "source".into(),
                rows.iter().map(|r| r.source.clone()).collect::<Vec<_>>(),
            ));
        }
        cols.push(Column::new(
            "accesses".into(),
            rows.iter().map(|r| r.counts.accesses).collect::<Vec<_>>(),
        ));
        for (i, l) in self.cache.model.levels.iter().enumerate() {
            cols.push(Column::new(
                format!("misses_{}", l.name()).into(),
                rows.iter().map(|r| r.counts.misses[i]).collect::<Vec<_>>(),
            ));
        }
        cols.push(Column::new(
            "compulsory".into(),
            rows.iter()
                .map(|r| r.counts.compulsory())
                .collect::<Vec<_>>(),
        ));
        cols.push(Column::new(
            "miss_ratio".into(),
            rows.iter()
                .map(|r| round4(r.miss_ratio()))
                .collect::<Vec<_>>(),
        ));
        cols.push(Column::new(
            "line_bytes_used".into(),
            rows.iter()
                .map(|r| round4(r.bytes_per_line()))
                .collect::<Vec<_>>(),
        ));
        let levels: Vec<String> = self.cache.model.levels.iter().map(|l| l.name()).collect();
        let names = Counts::default().class_columns(&levels);
        for (k, (name, _)) in names.into_iter().enumerate() {
            let values = rows.iter().map(|r| r.counts.class_columns(&levels)[k].1);
            cols.push(Column::new(name.into(), values.collect::<Vec<_>>()));
        }
        match extra {
            Some("pattern") => cols.push(Column::new(
                "pattern".into(),
                rows.iter().map(|r| r.pattern.clone()).collect::<Vec<_>>(),
            )),
            Some(name) => cols.push(Column::new(
                name.into(),
                rows.iter().map(|r| r.variables.clone()).collect::<Vec<_>>(),
            )),
            None => {}
        }
        DataFrame::new(cols)
    }

    /// The reuse histogram of each listed display row with references,
    /// the histograms of its variables merged (bins add exactly).
    pub fn row_histograms(&self) -> BTreeMap<u32, Histogram> {
        let mut out: BTreeMap<u32, Histogram> = BTreeMap::new();
        for (v, h) in self.reuse.per_var.iter().enumerate() {
            let v = VarId(v as u32);
            if self.listed(v) && h.total() > 0 {
                out.entry(self.names.row(v)).or_default().merge(h);
            }
        }
        out
    }

    /// Reuse distance per listed display row: `variable, bin_low,
    /// bin_high, references` (bin_high exclusive; cold references have
    /// bin_low -1).
    pub fn reuse_table(&self) -> PolarsResult<DataFrame> {
        let (mut name, mut lo, mut hi, mut n) = (vec![], vec![], vec![], vec![]);
        for (r, h) in self.row_histograms() {
            let var = self.names.row_name(r).to_string();
            name.push(var.clone());
            lo.push(-1i64);
            hi.push(-1i64);
            n.push(h.cold);
            for k in 0..=h.last_bin().unwrap_or(0) {
                name.push(var.clone());
                lo.push(bin_low(k) as i64);
                hi.push(if k == 0 { 1 } else { 1i64 << k });
                n.push(h.bins[k]);
            }
        }
        DataFrame::new(vec![
            Column::new("variable".into(), name),
            Column::new("bin_low".into(), lo),
            Column::new("bin_high".into(), hi),
            Column::new("references".into(), n),
        ])
    }

    /// Miss-ratio curves per listed variable: misses of a fully associative
    /// LRU cache of 2^j lines, for j up to past the largest distance:
    /// `variable, cache_lines, cache_bytes, misses, miss_ratio`.
    pub fn mrc_table(&self) -> PolarsResult<DataFrame> {
        let (mut name, mut lines, mut bytes, mut miss, mut ratio) =
            (vec![], vec![], vec![], vec![], vec![]);
        for (r, h) in self.row_histograms() {
            let top = (h.last_bin().unwrap_or(0) as u32).min(BINS as u32 - 2);
            for j in 0..=top {
                name.push(self.names.row_name(r).to_string());
                lines.push(1u64 << j);
                bytes.push((1u64 << j) * self.reuse.line as u64);
                let m = h.misses_at(j);
                miss.push(m);
                ratio.push(round4(m as f64 / h.total() as f64));
            }
        }
        DataFrame::new(vec![
            Column::new("variable".into(), name),
            Column::new("cache_lines".into(), lines),
            Column::new("cache_bytes".into(), bytes),
            Column::new("misses".into(), miss),
            Column::new("miss_ratio".into(), ratio),
        ])
    }

    /// The most distant reuses: `line, element, variable, distance`.
    pub fn distant_rows(&self) -> Vec<(String, String, String, u64)> {
        self.reuse
            .most_distant
            .iter()
            .filter(|(_, _, _, v)| self.shown.get(v.index()).copied().unwrap_or(false))
            .map(|&(line, d, addr, v)| {
                let var = &self.names.vars[v.index()];
                let el = element_path(
                    &var.name,
                    var.base,
                    var.size,
                    var.elem_size,
                    &var.dims,
                    addr,
                );
                (
                    format!("{line:#x}"),
                    el,
                    self.names.var_name(v).to_string(),
                    d,
                )
            })
            .collect()
    }

    /// Writes `cache_stats.csv`, `cache_stats_lines.csv`,
    /// `cache_stats_pairs.csv`, `reuse_distance.csv` and
    /// `miss_ratio_curves.csv` to `dir`, each also as Parquet.
    pub fn save(&self, dir: &Path) -> Result<Vec<PathBuf>, LocalityError> {
        let mut out = Vec::new();
        let tables = [
            (
                "cache_stats",
                self.table(&self.per_variable(), "variable", false, None)?,
            ),
            (
                "cache_stats_lines",
                self.table(&self.per_line(), "source", false, Some("variables"))?,
            ),
            (
                "cache_stats_pairs",
                self.table(&self.per_pair(), "variable", true, Some("pattern"))?,
            ),
            ("reuse_distance", self.reuse_table()?),
            ("miss_ratio_curves", self.mrc_table()?),
        ];
        for (name, mut df) in tables {
            out.push(crate::filter::csv::write_csv(
                &mut df,
                &dir.join(format!("{name}.csv")),
            )?);
            out.push(io::write_parquet(
                &mut df,
                &dir.join(format!("{name}.parquet")),
            )?);
        }
        Ok(out)
    }
}

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// The access-pattern states of `a`: those the analysis gathered as it
/// streamed, or else (a Gleipnir import) one pass over its accesses.
pub(crate) fn pattern_states<'a>(
    a: &'a Analysis,
    names: &Names,
) -> Result<std::borrow::Cow<'a, PatternStates>, LocalityError> {
    if let Some(p) = &a.patterns {
        return Ok(std::borrow::Cow::Borrowed(p));
    }
    let mut pat = PatternSink::new(&names.vars);
    drive(a, &mut [&mut pat])?;
    let (pairs, states) = pat.finish();
    Ok(std::borrow::Cow::Owned(PatternStates { pairs, states }))
}

/// One (variable, line) pair's access pattern, as `memory_stats` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternRow {
    /// The display row's name (`arr`, or `n` for a list's grouped nodes).
    pub variable: String,
    /// `file.c:LINE`, or `?`.
    pub source: String,
    /// Accesses of the pair (of all the row's blocks on that line).
    pub accesses: u64,
    /// The label ([`label`]); for grouped blocks, the busiest block's,
    /// with a note when the others' differ. Scalars are left out of the
    /// table ([`super::pattern::PatternLabel::is_scalar`]).
    pub label: RowLabel,
}

/// Pattern labels per listed (display row, line) pair of arrays and blocks
/// (scalars are left out), from the states the analysis gathered, or else
/// one pass over the accesses; busiest first. Rows are grouped as
/// `grouping` says, as in `memory_stats` and `cache_stats`.
pub fn patterns(
    a: &Analysis,
    kind: MemKind,
    grouping: Grouping,
) -> Result<Vec<PatternRow>, LocalityError> {
    let names = Names::grouped(a, grouping)?;
    let st = pattern_states(a, &names)?;
    let mut groups: BTreeMap<(u32, LineId), Vec<usize>> = BTreeMap::new();
    for (i, &(v, l)) in st.pairs.iter().enumerate() {
        if a.vars
            .get(v.index())
            .is_some_and(|x| crate::filter::model::shows(kind, x))
        {
            groups.entry((names.row(v), l)).or_default().push(i);
        }
    }
    let label_of = |i: usize| label(&st.states[i], &names.vars[st.pairs[i].0.index()]);
    let mut rows: Vec<PatternRow> = groups
        .into_iter()
        .map(|((r, l), mut members)| {
            members.sort_by_key(|&i| std::cmp::Reverse(st.states[i].accesses));
            PatternRow {
                variable: names.row_name(r).to_string(),
                source: names.source(l).to_string(),
                accesses: members.iter().map(|&i| st.states[i].accesses).sum(),
                label: RowLabel::of_group(&members, label_of),
            }
        })
        .filter(|r| !r.label.label.is_scalar())
        .collect();
    rows.sort_by(|a, b| {
        b.accesses
            .cmp(&a.accesses)
            .then(natural_cmp(&a.variable, &b.variable))
            .then(natural_cmp(&a.source, &b.source))
    });
    Ok(rows)
}

/// What one thread did on a shared line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadBytes {
    /// The thread.
    pub tid: u32,
    /// Elements it touched (`hits.b`, `arr[3]`), in order of first touch.
    pub elements: Vec<String>,
    /// Bytes of the line it read.
    pub read: ByteSet,
    /// Bytes of the line it wrote.
    pub written: ByteSet,
    /// Its accesses to the line.
    pub accesses: u64,
}

/// Whether threads shared a line's bytes or only the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SharingKind {
    /// Transfers on overlapping bytes only.
    True,
    /// Transfers on disjoint bytes only.
    False,
    /// Both.
    TrueAndFalse,
    /// Written by one thread and touched by another, but never while the
    /// other held the line (no transfer).
    None,
}

impl std::fmt::Display for SharingKind {
    /// `true`, `false`, `true+false` or `none`, as the tables print it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SharingKind::True => "true",
            SharingKind::False => "false",
            SharingKind::TrueAndFalse => "true+false",
            SharingKind::None => "none",
        })
    }
}

/// One shared line, named.
#[derive(Clone, Debug)]
pub struct SharedLine {
    /// Address of the line.
    pub addr: u64,
    /// True or false sharing, or both.
    pub kind: SharingKind,
    /// Cross-thread transfers (true + false).
    pub transfers: u64,
    /// Transfers on overlapping bytes.
    pub true_transfers: u64,
    /// Transfers on disjoint bytes.
    pub false_transfers: u64,
    /// Variables on the line.
    pub variables: Vec<String>,
    /// Per thread: see [`ThreadBytes`].
    pub threads: Vec<ThreadBytes>,
    /// Per thread, as on `threads`: (tid, bits of the bytes read, bits of
    /// the bytes written), bit `b` for byte offset `b` of the line.
    pub masks: Vec<(u32, u64, u64)>,
    /// The name of each byte of the line (`hits.b`, `arr[3]`, `s+20`),
    /// empty where no variable of the line lies.
    pub byte_names: Vec<String>,
}

/// Lines written by one thread and touched by another, where a variable
/// shown for `kind` lies, with their variables, fields and byte offsets
/// per thread. `line` is the coherence unit (the model's L1 line size).
pub fn sharing_stats(
    a: &Analysis,
    kind: MemKind,
    line: u32,
    grouping: Grouping,
) -> Result<Vec<SharedLine>, LocalityError> {
    // One thread shares no line: no pass (and none of its memory, a
    // history per line touched).
    if a.summary.threads.len() < 2 {
        return Ok(Vec::new());
    }
    // Two passes: the lines that can be shared, then their histories (see
    // the sharing module: a history for every line would take twice the
    // program's memory).
    let mut first = SharingCandidates::new(line);
    drive(a, &mut [&mut first])?;
    if first.is_empty() {
        return Ok(Vec::new());
    }
    let mut sink = SharingSink::only(first);
    drive(a, &mut [&mut sink])?;
    let names = Names::grouped(a, grouping)?;
    let lines = sink.finish();
    let starts: Vec<u64> = lines.iter().map(|(addr, _)| *addr).collect();
    let locs = LocationNames::of(a, &starts, line)?;
    let mut out = Vec::new();
    for (addr, l) in lines {
        let shown = l.threads.iter().flat_map(|t| &t.vars).any(|&v| {
            a.vars
                .get(v.index())
                .is_some_and(|x| crate::filter::model::shows(kind, x))
        });
        if shown {
            out.push(shared_line(addr, &l, &names, &locs, line));
        }
    }
    out.sort_by(|a, b| b.transfers.cmp(&a.transfers).then(a.addr.cmp(&b.addr)));
    Ok(out)
}

fn shared_line(
    addr: u64,
    l: &LineUse,
    names: &Names,
    locs: &LocationNames,
    line: u32,
) -> SharedLine {
    let kind = match (l.true_transfers > 0, l.false_transfers > 0) {
        (true, true) => SharingKind::TrueAndFalse,
        (true, false) => SharingKind::True,
        (false, true) => SharingKind::False,
        (false, false) => SharingKind::None,
    };
    let mut variables: Vec<String> = Vec::new();
    let threads = l
        .threads
        .iter()
        .map(|t| {
            let mut els = Vec::new();
            for &v in &t.vars {
                let name = names.var_name(v).to_string();
                if !variables.contains(&name) {
                    variables.push(name);
                }
                for e in locs.elements(addr, line, v, t.read | t.written, names) {
                    if !els.contains(&e) {
                        els.push(e);
                    }
                }
            }
            ThreadBytes {
                tid: t.tid,
                elements: els,
                read: ByteSet(t.read),
                written: ByteSet(t.written),
                accesses: t.accesses,
            }
        })
        .collect();
    let vars: Vec<VarId> = l
        .threads
        .iter()
        .flat_map(|t| t.vars.iter().copied())
        .collect();
    let touched = l.threads.iter().fold(0, |m, t| m | t.read | t.written);
    SharedLine {
        masks: l
            .threads
            .iter()
            .map(|t| (t.tid, t.read, t.written))
            .collect(),
        byte_names: (0..line.min(64) as u64)
            .map(|b| locs.byte_name(addr + b, &vars, touched >> b & 1 == 1, names))
            .collect(),
        addr,
        kind,
        transfers: l.transfers(),
        true_transfers: l.true_transfers,
        false_transfers: l.false_transfers,
        variables,
        threads,
    }
}

/// The lookup table's addresses, variables and member names near the
/// shared lines, for naming the bytes of a line (sorted by address, as the
/// analysis keeps it).
struct LocationNames {
    addr: Vec<u64>,
    var: Vec<u32>,
    element: Vec<String>,
}

impl LocationNames {
    /// The locations from 64 bytes before each line of `starts` (an
    /// access that began there reaches into it) to its end. Cost: one pass
    /// over the lookup table, a batch at a time; memory: the rows kept.
    fn of(a: &Analysis, starts: &[u64], line: u32) -> Result<LocationNames, LocalityError> {
        let mut starts = starts.to_vec();
        starts.sort_unstable();
        let near = |x: u64| {
            let k = starts.partition_point(|&s| s <= x.saturating_add(64));
            k > 0 && x < starts[k - 1].saturating_add(u64::from(line))
        };
        let mut out = LocationNames {
            addr: Vec::new(),
            var: Vec::new(),
            element: Vec::new(),
        };
        if starts.is_empty() {
            return Ok(out);
        }
        a.locations.for_each_batch(&mut |df| {
            let addr = df.column(lc::ADDR)?.u64()?;
            let var = df.column(lc::VAR)?.u32()?;
            let el = df.column(lc::ELEMENT)?.str()?;
            for ((x, v), e) in addr
                .into_no_null_iter()
                .zip(var.into_no_null_iter())
                .zip(el)
            {
                if near(x) {
                    out.addr.push(x);
                    out.var.push(v);
                    out.element.push(e.unwrap_or("").to_string());
                }
            }
            Ok(true)
        })?;
        Ok(out)
    }

    /// The name of the byte at `x`, of one of `vars`: for a touched byte,
    /// the member of the nearest accessed location at or below it (the
    /// access that touched it starts there); otherwise, or when that
    /// location has no member name, the element the variable's shape gives.
    fn byte_name(&self, x: u64, vars: &[VarId], touched: bool, names: &Names) -> String {
        let Some(&v) = vars.iter().find(|&&v| {
            names
                .vars
                .get(v.index())
                .is_some_and(|var| var.base <= x && x < var.base + var.size.max(1))
        }) else {
            // A row with no extent (`<unrecorded memory>`, `<stack>`):
            // a touched byte is named by the location the access started at.
            return match touched {
                true => self.touched_name(x, vars),
                false => String::new(),
            };
        };
        let var = &names.vars[v.index()];
        if touched {
            let mut i = self.addr.partition_point(|&a| a <= x);
            while i > 0 && self.addr[i - 1] + 64 > x {
                i -= 1;
                if self.var[i] == v.0 {
                    if !self.element[i].is_empty() {
                        return self.element[i].clone();
                    }
                    break;
                }
            }
        }
        element_path(&var.name, var.base, var.size, var.elem_size, &var.dims, x)
    }

    /// The name of the nearest location at or below `x`, within a line's
    /// reach, that belongs to one of `vars`: where the access that touched
    /// byte `x` started. Empty when there is none.
    fn touched_name(&self, x: u64, vars: &[VarId]) -> String {
        let mut i = self.addr.partition_point(|&a| a <= x);
        while i > 0 && self.addr[i - 1] + 64 > x {
            i -= 1;
            if vars.iter().any(|v| v.0 == self.var[i]) {
                return self.element[i].clone();
            }
        }
        String::new()
    }

    /// Names of the locations of variable `v` on the line at `line_addr`
    /// whose first byte is in `mask`.
    fn elements(
        &self,
        line_addr: u64,
        line: u32,
        v: VarId,
        mask: u64,
        names: &Names,
    ) -> Vec<String> {
        let start = self.addr.partition_point(|&x| x < line_addr);
        let mut out = Vec::new();
        for i in start..self.addr.len() {
            let x = self.addr[i];
            if x >= line_addr + line as u64 {
                break;
            }
            if self.var[i] != v.0 || (mask >> ((x - line_addr) % 64)) & 1 == 0 {
                continue;
            }
            let name = if self.element[i].is_empty() {
                let var = &names.vars[v.index()];
                element_path(&var.name, var.base, var.size, var.elem_size, &var.dims, x)
            } else {
                self.element[i].clone()
            };
            if !out.contains(&name) {
                out.push(name);
            }
        }
        out
    }
}

/// The shared lines as a table: `line, kind, transfers, true_transfers,
/// false_transfers, variables, tid, elements, bytes_read, bytes_written,
/// accesses`, one row per (line, thread).
pub fn sharing_table(lines: &[SharedLine]) -> PolarsResult<DataFrame> {
    let rows: Vec<(&SharedLine, &ThreadBytes)> = lines
        .iter()
        .flat_map(|l| l.threads.iter().map(move |t| (l, t)))
        .collect();
    let text = |f: &dyn Fn(&SharedLine, &ThreadBytes) -> String| {
        rows.iter().map(|(l, t)| f(l, t)).collect::<Vec<String>>()
    };
    let num = |f: &dyn Fn(&SharedLine) -> u64| rows.iter().map(|(l, _)| f(l)).collect::<Vec<u64>>();
    DataFrame::new(vec![
        Column::new("line".into(), text(&|l, _| format!("{:#x}", l.addr))),
        Column::new("kind".into(), text(&|l, _| l.kind.to_string())),
        Column::new("transfers".into(), num(&|l| l.transfers)),
        Column::new("true_transfers".into(), num(&|l| l.true_transfers)),
        Column::new("false_transfers".into(), num(&|l| l.false_transfers)),
        Column::new("variables".into(), text(&|l, _| l.variables.join(" "))),
        Column::new(
            "tid".into(),
            rows.iter().map(|(_, t)| t.tid).collect::<Vec<u32>>(),
        ),
        Column::new("elements".into(), text(&|_, t| t.elements.join(" "))),
        Column::new("bytes_read".into(), text(&|_, t| t.read.to_string())),
        Column::new("bytes_written".into(), text(&|_, t| t.written.to_string())),
        Column::new(
            "accesses".into(),
            rows.iter().map(|(_, t)| t.accesses).collect::<Vec<u64>>(),
        ),
    ])
}

/// `1.5 KiB` for a byte count (re-exported for the shell's text).
pub fn bytes_text(n: u64) -> String {
    human_bytes(n)
}

/// The lines [`sharing_stats`] finds, most transfers first; a slice of
/// [`SharedLine`]s that also saves its table.
#[derive(Clone, Debug, Default)]
pub struct SharedLines(pub Vec<SharedLine>);

impl std::ops::Deref for SharedLines {
    type Target = [SharedLine];
    fn deref(&self) -> &[SharedLine] {
        &self.0
    }
}

impl SharedLines {
    /// Writes [`sharing_table`] as `sharing_stats.csv` and
    /// `sharing_stats.parquet` into `dir`; returns both files.
    pub fn save(&self, dir: &Path) -> Result<[PathBuf; 2], FilterError> {
        let mut df = sharing_table(self)?;
        let csv = crate::filter::csv::write_csv(&mut df, &dir.join("sharing_stats.csv"))?;
        let pq = io::write_parquet(&mut df, &dir.join("sharing_stats.parquet"))?;
        Ok([csv, pq])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_as_people_count() {
        let mut v = vec!["n#10", "n#2", "n#1", "n#100", "m", "f.c:10", "f.c:9", "n#0"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            ["f.c:9", "f.c:10", "m", "n#0", "n#1", "n#2", "n#10", "n#100"]
        );
        assert_eq!(natural_cmp("a007", "a7"), std::cmp::Ordering::Equal);
        assert_eq!(natural_cmp("a", "a1"), std::cmp::Ordering::Less);
    }
}
