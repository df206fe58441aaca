//! `advise`: the layout changes `what_if` can predict, tried on the
//! variables with the most misses and ranked by the misses they save.
//!
//! For each variable it tries, from the least to the most invasive change:
//! moving its base to a line boundary (when it does not start on one),
//! padding each row by the fewest lines that spread a column over every
//! cache set, and by one line (one and two lines when the rows are not
//! whole lines apart, or for elements of a 1D array), splitting an
//! array of structures into arrays (`soa`) and transposing a 2D array.
//! A change that does not fit the variable (`soa` of an array of doubles,
//! `transpose` of a 1D array) is left out. Each prediction is a `what_if`
//! over the recorded trace, so the numbers are those `what_if` prints and
//! its `command` reproduces them.
//!
//! Suggestions are ranked by the first level's misses saved for the
//! variables the change touches, then the next level's, then the least
//! invasive change first. A change that saves nothing is not suggested;
//! when none does, the notes say why, from the miss classes (the 3C model
//! of `cache_stats`): first uses of a line no layout can cut.
//!
//! Loop interchange and tiling are not predicted yet; the notes say so
//! rather than suggest them without numbers.
//!
//! Cost: two passes over the access list per candidate (each a `what_if`),
//! about five candidates per variable, three variables unless named.
use super::cache::Counts;
use super::report::{cache_stats, CacheReport, Options};
use super::whatif::{what_if, Layout, WhatIfError};
use super::VarId;
use crate::filter::analysis::Analysis;
use crate::filter::model::MemKind;

/// How many of the variables with the most misses are advised on when the
/// user names none.
pub const TOP_VARIABLES: usize = 3;

/// One predicted change.
#[derive(Clone, Debug)]
pub struct Suggestion {
    /// The change, as `what_if` takes it (`pad 64`).
    pub change: String,
    /// The variable it changes.
    pub variable: String,
    /// The source lines that access the variable, most misses first.
    pub lines: Vec<String>,
    /// The variable's misses per level, innermost first, as recorded.
    pub before: Vec<u64>,
    /// The same, predicted under the change (for `soa`, its arrays summed).
    pub after: Vec<u64>,
    /// Why the variable misses and what the change does about it.
    pub why: String,
    /// The `what_if` command that reproduces the prediction.
    pub command: String,
    /// Order of invasiveness, for ties: 0 align, 1 pad, 2 soa, 3 transpose.
    rank: u8,
}

impl Suggestion {
    /// Misses saved at the level of index `level` (0 for the first;
    /// negative when the change adds misses there).
    pub fn saved(&self, level: usize) -> i64 {
        let (b, a) = (self.before.get(level), self.after.get(level));
        b.copied().unwrap_or(0) as i64 - a.copied().unwrap_or(0) as i64
    }
}

/// What `advise` found: the suggestions, best first, and notes on what
/// was not suggested and why.
#[derive(Clone, Debug, Default)]
pub struct Advice {
    /// Ranked, best first.
    pub suggestions: Vec<Suggestion>,
    /// Per variable without a suggestion, or a change that did not fit.
    pub notes: Vec<String>,
    /// The level names of the model, innermost first.
    pub levels: Vec<String>,
}

/// Tries every layout change on `names` (or on the [`TOP_VARIABLES`] with
/// the most first-level misses when empty) and ranks those that save
/// misses.
///
/// # Errors
/// A named variable that is not an array, or simulating fails.
pub fn advise(
    a: &Analysis,
    kind: MemKind,
    opts: &Options,
    names: &[String],
) -> Result<Advice, WhatIfError> {
    let before = cache_stats(a, kind, opts)?;
    let mut advice = Advice {
        levels: before.level_names(),
        ..Advice::default()
    };
    for (var, name) in targets(a, &before, names, &mut advice.notes)? {
        let found = advise_one(a, kind, opts, &before, var, &name, &mut advice.notes)?;
        if found.is_empty() {
            advice.notes.push(nothing_to_suggest(&before, &name));
        }
        advice.suggestions.extend(found);
    }
    advice.suggestions.sort_by(|x, y| {
        (0..advice.levels.len())
            .map(|l| y.saved(l).cmp(&x.saved(l)))
            .fold(std::cmp::Ordering::Equal, |o, n| o.then(n))
            .then(x.rank.cmp(&y.rank))
    });
    advice.notes.push(
        "loop interchange and tiling are not predicted yet: advise suggests layouts only".into(),
    );
    Ok(advice)
}

/// The variables to advise on, with their names: those named, or the
/// arrays among the variables with the most first-level misses.
fn targets(
    a: &Analysis,
    before: &CacheReport,
    names: &[String],
    notes: &mut Vec<String>,
) -> Result<Vec<(VarId, String)>, WhatIfError> {
    if !names.is_empty() {
        return names
            .iter()
            .map(|n| Ok((a.resolve_array(n)?, n.clone())))
            .collect();
    }
    let mut rows = before.per_variable();
    rows.sort_by(|x, y| y.counts.misses[0].cmp(&x.counts.misses[0]));
    let mut out = Vec::new();
    for row in rows.iter().filter(|r| r.counts.misses[0] > 0) {
        if out.len() == TOP_VARIABLES {
            break;
        }
        match a.resolve_array(&row.key) {
            Ok(v) => out.push((v, row.key.clone())),
            Err(_) => notes.push(format!(
                "{} ({} L1 misses) is not an array whose layout can change: no suggestion",
                row.key, row.counts.misses[0]
            )),
        }
    }
    Ok(out)
}

/// The candidate changes for variable `var`, least invasive first, with
/// their rank.
///
/// The row padding is chosen from the conflict pattern when the variable
/// is a 2D array whose rows are whole lines apart: the fewest lines that
/// spread a column over every set of the first level ([`spreading_pad`]),
/// and one line. Otherwise one and two lines are tried.
fn candidates(a: &Analysis, var: VarId, opts: &Options) -> Vec<(Layout, u8)> {
    let v = &a.vars[var.index()];
    let (line, sets) = opts
        .model
        .levels
        .first()
        .map_or((64, 64), |l| (u64::from(l.line), l.sets()));
    let mut out = Vec::new();
    if !v.base.is_multiple_of(line) {
        out.push((Layout::Align(line), 0));
    }
    let row = v.dims.iter().skip(1).product::<u64>() * u64::from(v.elem_size);
    let pads = match (v.dims.len() >= 2 && row > 0 && row.is_multiple_of(line))
        .then(|| spreading_pad(row / line, sets))
        .flatten()
    {
        Some(1) | None => vec![1, 2],
        Some(p) => vec![p, 1],
    };
    out.extend(pads.into_iter().map(|p| (Layout::Pad(p * line), 1)));
    out.push((Layout::Soa, 2));
    out.push((Layout::Transpose(None), 3));
    out
}

/// The fewest lines `p` (1 to `sets`) by which to pad rows that are
/// `row_lines` lines apart so that a column's lines fall into every one of
/// `sets` sets: rows `r` lines apart use `sets / gcd(sets, r)` of them, so
/// the smallest `p` with `gcd(sets, row_lines + p) = 1`. None when no
/// padding up to `sets` lines does it.
pub(crate) fn spreading_pad(row_lines: u64, sets: u64) -> Option<u64> {
    (1..=sets).find(|p| gcd(sets, row_lines + p) == 1)
}

fn gcd(mut x: u64, mut y: u64) -> u64 {
    while y != 0 {
        (x, y) = (y, x % y);
    }
    x
}

/// The suggestions for one variable: each candidate that fits and saves
/// first-level misses. A candidate that does not fit is skipped silently
/// (most do not fit most variables); an error of the simulation is not.
fn advise_one(
    a: &Analysis,
    kind: MemKind,
    opts: &Options,
    before: &CacheReport,
    var: VarId,
    name: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<Suggestion>, WhatIfError> {
    let lines = lines_of(before, name);
    let mut out = Vec::new();
    for (layout, rank) in candidates(a, var, opts) {
        let w = match what_if(a, kind, opts, var, &layout) {
            Ok(w) => w,
            Err(WhatIfError::Locality(e)) => return Err(WhatIfError::Locality(e)),
            Err(_) => continue,
        };
        if w.unmapped > 0 && w.mapped == 0 {
            notes.push(format!("{name}: {} moved no access", words(&layout)));
            continue;
        }
        let (b, after) = w.variable_misses();
        let s = Suggestion {
            change: words(&layout),
            variable: name.to_string(),
            lines: lines.clone(),
            why: why(before, name, &layout),
            command: format!("what_if {name} {}", words(&layout)),
            before: b,
            after,
            rank,
        };
        if s.saved(0) > 0 {
            out.push(Suggestion {
                why: format!("{}{}", s.why, sets_note(a, var, opts, &layout)),
                ..s
            });
        }
    }
    Ok(out)
}

/// For a row padding of a 2D array: how many of the first level's sets a
/// column's lines fall into now (rows a multiple of a line apart share
/// `sets / gcd(sets, rows apart in lines)` sets), as a clause.
fn sets_note(a: &Analysis, var: VarId, opts: &Options, layout: &Layout) -> String {
    let v = &a.vars[var.index()];
    let Some(l1) = opts.model.levels.first() else {
        return String::new();
    };
    let (line, sets) = (u64::from(l1.line), l1.sets());
    let row = v.dims.iter().skip(1).product::<u64>() * u64::from(v.elem_size);
    if !matches!(layout, Layout::Pad(_))
        || v.dims.len() < 2
        || row == 0
        || !row.is_multiple_of(line)
    {
        return String::new();
    }
    format!(
        " (its rows are {row} bytes apart, so a column's lines fall into {} of L1's {sets} sets)",
        sets / gcd(sets, row / line)
    )
}

/// A layout as `what_if` takes it.
fn words(l: &Layout) -> String {
    match l {
        Layout::Transpose(None) => "transpose".into(),
        Layout::Transpose(Some((r, c, e))) => format!("transpose {r} {c} {e}"),
        Layout::Soa => "soa".into(),
        Layout::Pad(b) => format!("pad {b}"),
        Layout::Align(b) => format!("align {b}"),
    }
}

/// The source lines that access `name`, most first-level misses first.
fn lines_of(r: &CacheReport, name: &str) -> Vec<String> {
    let mut pairs: Vec<_> = r.per_pair().into_iter().filter(|p| p.key == name).collect();
    pairs.sort_by(|x, y| y.counts.misses[0].cmp(&x.counts.misses[0]));
    pairs.into_iter().map(|p| p.source).collect()
}

/// The variable's counts in the recorded report.
fn counts_of(r: &CacheReport, name: &str) -> Counts {
    r.per_variable()
        .into_iter()
        .find(|row| row.key == name)
        .map(|row| row.counts)
        .unwrap_or_default()
}

/// The pattern of the variable's line with the most misses.
fn pattern_of(r: &CacheReport, name: &str) -> String {
    r.per_pair()
        .into_iter()
        .filter(|p| p.key == name)
        .max_by_key(|p| p.counts.misses[0])
        .map(|p| p.pattern)
        .unwrap_or_default()
}

/// Why the variable misses at the first level, in one sentence from its
/// miss classes and its access pattern, and what the change acts on.
fn why(r: &CacheReport, name: &str, layout: &Layout) -> String {
    let c = counts_of(r, name);
    let m = c.classes[0];
    let total = m.total().max(1) as f64;
    let pct = |n: u64| (100.0 * n as f64 / total).round();
    let pattern = pattern_of(r, name);
    let cause = if m.conflict >= m.capacity && m.conflict >= m.compulsory {
        format!("{}% of {name}'s L1 misses are conflicts", pct(m.conflict))
    } else if m.capacity >= m.compulsory {
        format!(
            "{}% of {name}'s L1 misses are capacity misses",
            pct(m.capacity)
        )
    } else {
        format!(
            "{}% of {name}'s L1 misses are first uses of a line",
            pct(m.compulsory)
        )
    };
    let acts = match layout {
        Layout::Align(_) => "aligning its base keeps each element within one line",
        Layout::Pad(_) => "padding each row spreads its lines over more cache sets",
        Layout::Soa => "splitting it brings the field that is read together into whole lines",
        Layout::Transpose(_) => "transposing it makes the walk run along its lines",
    };
    if pattern.is_empty() {
        format!("{cause}; {acts}")
    } else {
        format!("{cause} (pattern: {pattern}); {acts}")
    }
}

/// The note for a variable no change helps, from its miss classes.
fn nothing_to_suggest(r: &CacheReport, name: &str) -> String {
    let m = counts_of(r, name).classes[0];
    if m.total() > 0 && m.compulsory == m.total() {
        format!(
            "{name}: nothing to suggest: all its {} L1 misses are first uses of a line, which no \
             layout cuts (only touching fewer lines would)",
            m.total()
        )
    } else {
        format!(
            "{name}: nothing to suggest: no layout advise tries saves L1 misses (compulsory {}, \
             capacity {}, conflict {})",
            m.compulsory, m.capacity, m.conflict
        )
    }
}

impl Advice {
    /// The suggestions as a table, best first: `rank, variable, change,
    /// lines` (space-separated), `misses_before_L1, misses_after_L1` … per
    /// level, `why, command`, and a `trace` column saying whether the
    /// analysis was whole (`state`, as [`crate::filter::csv`] writes it).
    ///
    /// # Errors
    /// Only if polars refuses the columns (they have equal lengths).
    pub fn table_marked(
        &self,
        state: &str,
    ) -> Result<polars::prelude::DataFrame, crate::filter::error::FilterError> {
        use polars::prelude::{Column, DataFrame};
        let s = &self.suggestions;
        let text = |f: &dyn Fn(&Suggestion) -> String| s.iter().map(f).collect::<Vec<String>>();
        let mut cols = vec![
            Column::new("rank".into(), (1..=s.len() as u64).collect::<Vec<u64>>()),
            Column::new("variable".into(), text(&|x| x.variable.clone())),
            Column::new("change".into(), text(&|x| x.change.clone())),
            Column::new("lines".into(), text(&|x| x.lines.join(" "))),
        ];
        for (i, l) in self.levels.iter().enumerate() {
            let at = |v: &[u64]| v.get(i).copied().unwrap_or(0);
            cols.push(Column::new(
                format!("misses_before_{l}").into(),
                s.iter().map(|x| at(&x.before)).collect::<Vec<u64>>(),
            ));
            cols.push(Column::new(
                format!("misses_after_{l}").into(),
                s.iter().map(|x| at(&x.after)).collect::<Vec<u64>>(),
            ));
        }
        cols.push(Column::new("why".into(), text(&|x| x.why.clone())));
        cols.push(Column::new("command".into(), text(&|x| x.command.clone())));
        let mut df = DataFrame::new(cols)?;
        crate::filter::csv::add_text_column(&mut df, "trace", state)?;
        Ok(df)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows 8 lines apart over 64 sets use 8 of them: one more line makes
    /// the distance odd and uses all 64. Rows 9 lines apart already use
    /// every set (no pad needed but the smallest that keeps it: 2 lines).
    /// With 48 sets (not a power of two), rows 8 lines apart need 3 more
    /// (11 is prime to 48).
    #[test]
    fn the_pad_spreads_a_column_over_every_set() {
        assert_eq!(spreading_pad(8, 64), Some(1));
        assert_eq!(spreading_pad(32, 64), Some(1));
        assert_eq!(spreading_pad(9, 64), Some(2));
        assert_eq!(spreading_pad(8, 48), Some(3));
        assert_eq!(spreading_pad(0, 1), Some(1));
    }
}
