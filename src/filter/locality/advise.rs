//! `advise`: the changes `what_if` can predict, tried on the variables
//! with the most misses and ranked by the misses they save.
//!
//! For each variable it tries, from the least to the most invasive change:
//! moving its base to a line boundary (when it does not start on one),
//! padding each row by the fewest lines that spread a column over every
//! cache set, and by one line (one and two lines when the rows are not
//! whole lines apart, or for elements of a 1D array), interchanging the
//! loops of the nest that walks it column by column, splitting an array of
//! structures into arrays (`soa`), tiling that nest (tile sizes from the
//! cache geometry: whole lines of elements, doubled while a tile of two
//! arrays fits the first level) and transposing a 2D array. A change that
//! does not fit the variable (`soa` of an array of doubles, `transpose` of
//! a 1D array) is left out; a nest the trace does not show is noted with
//! the reason, never guessed. Each prediction is a `what_if` over the
//! recorded trace, so the numbers are those `what_if` prints and its
//! `command` reproduces them.
//!
//! Suggestions are ranked by the first level's misses saved for the
//! variables the change touches (a loop change touches every array its
//! iterations access), then the next level's, then the least invasive
//! change first. A change that saves less than 1% of those misses at
//! every level, or adds first-level misses, is not suggested; when none
//! does, the notes say why, from the miss classes (the 3C model of
//! `cache_stats`): first uses of a line no layout can cut.
//!
//! Cost: the recorded report once; per variable, the surveys its
//! candidates need (the highest address and field widths for `soa` and
//! `pad`, one pass to find the nest for the loop changes), then one pass
//! that simulates every candidate together (`whatif::simulate`): a report's
//! sinks per candidate, about eight per variable, three variables unless
//! named.
use super::cache::Counts;
use super::report::{cache_stats, CacheReport, Options};
use super::whatif::{prepare, simulate, Layout, Prepass, WhatIfError};
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
    /// The variable it changes (for a loop change, the one walked column
    /// by column).
    pub variable: String,
    /// Every variable the change touches, `variable` first: a loop change
    /// moves the accesses of every array its iterations access.
    pub touches: Vec<String>,
    /// The source lines that access the variable, most misses first (for
    /// a loop change, the nest's lines).
    pub lines: Vec<String>,
    /// The touched variables' misses per level, innermost first, as
    /// recorded.
    pub before: Vec<u64>,
    /// The same, predicted under the change (for `soa`, its arrays summed).
    pub after: Vec<u64>,
    /// Why the variable misses and what the change does about it.
    pub why: String,
    /// The `what_if` command that reproduces the prediction.
    pub command: String,
    /// The prediction itself: both reports, for the what-if page.
    pub prediction: Box<super::whatif::WhatIf>,
    /// Order of invasiveness, for ties: 0 align, 1 pad, 2 interchange,
    /// 3 soa, 4 tile, 5 transpose.
    rank: u8,
}

impl Suggestion {
    /// Whether the change is worth suggesting: it saves at least 1% of the
    /// touched misses (and at least one) at some level, and adds none at
    /// the first.
    fn worth_it(&self) -> bool {
        self.saved(0) >= 0
            && (0..self.before.len()).any(|l| self.saved(l) >= (self.before[l] as i64 / 100).max(1))
    }

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
        let found = advise_one(a, opts, &before, var, &name, &mut advice.notes)?;
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

/// What the recorded report says of one variable, computed once.
struct Facts {
    /// Its counts.
    counts: Counts,
    /// The pattern of its line with the most first-level misses.
    pattern: String,
    /// Its source lines, most first-level misses first.
    lines: Vec<String>,
}

impl Facts {
    fn of(r: &CacheReport, name: &str) -> Facts {
        let counts = (r.per_variable().into_iter())
            .find(|row| row.key == name)
            .map(|row| row.counts)
            .unwrap_or_default();
        let mut pairs: Vec<_> = r.per_pair().into_iter().filter(|p| p.key == name).collect();
        pairs.sort_by(|x, y| y.counts.misses[0].cmp(&x.counts.misses[0]));
        Facts {
            counts,
            pattern: pairs.first().map(|p| p.pattern.clone()).unwrap_or_default(),
            lines: pairs.into_iter().map(|p| p.source).collect(),
        }
    }
}

/// Bytes between the starts of two rows of a 2D array (0 otherwise).
fn row_bytes(a: &Analysis, var: VarId) -> u64 {
    let v = &a.vars[var.index()];
    if v.dims.len() < 2 {
        return 0;
    }
    v.dims.iter().skip(1).product::<u64>() * u64::from(v.elem_size)
}

/// The first level's (line bytes, sets, size).
fn first_level(opts: &Options) -> (u64, u64, u64) {
    opts.model
        .levels
        .first()
        .map_or((64, 64, 32768), |l| (u64::from(l.line), l.sets(), l.size))
}

/// The candidate changes for variable `var`, least invasive first, with
/// their rank. `line` is the source line with the most misses, where a
/// loop change looks for the nest.
///
/// The row padding is chosen from the conflict pattern when the variable
/// is a 2D array whose rows are whole lines apart: the fewest lines that
/// spread a column over every set of the first level ([`spreading_pad`]),
/// and one line. Otherwise one and two lines are tried.
fn candidates(a: &Analysis, var: VarId, opts: &Options, line: Option<&str>) -> Vec<(Layout, u8)> {
    let v = &a.vars[var.index()];
    let (line_bytes, sets, _) = first_level(opts);
    let mut out = Vec::new();
    if !v.base.is_multiple_of(line_bytes) {
        out.push((Layout::Align(line_bytes), 0));
    }
    let row = row_bytes(a, var);
    let pads = match (row > 0 && row.is_multiple_of(line_bytes))
        .then(|| spreading_pad(row / line_bytes, sets))
        .flatten()
    {
        Some(1) | None => vec![1, 2],
        Some(p) => vec![p, 1],
    };
    out.extend(pads.into_iter().map(|p| (Layout::Pad(p * line_bytes), 1)));
    let nest = line.filter(|_| v.dims.len() >= 2).map(String::from);
    if nest.is_some() {
        out.push((Layout::Interchange(nest.clone()), 2));
    }
    out.push((Layout::Soa, 3));
    if nest.is_some() {
        let sizes = tile_sizes(u64::from(v.elem_size), opts);
        out.extend(
            sizes
                .into_iter()
                .map(|t| (Layout::Tile(t, nest.clone()), 4)),
        );
    }
    out.push((Layout::Transpose(None), 5));
    out
}

/// Tile sizes to try for elements of `elem` bytes: a line's worth of
/// elements, doubled while a square tile of two such arrays fits the
/// first level (the source and destination of a transpose, or the two
/// operands of a product).
fn tile_sizes(elem: u64, opts: &Options) -> Vec<u64> {
    let (line, _, size) = first_level(opts);
    let elem = elem.max(1);
    let mut t = (line / elem).max(2);
    let mut out = Vec::new();
    while 2 * t * t * elem <= size && out.len() < 4 {
        out.push(t);
        t *= 2;
    }
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
/// (most do not fit most variables), but for a loop change, whose reason
/// is noted once; an error of the simulation is not skipped.
fn advise_one(
    a: &Analysis,
    opts: &Options,
    before: &CacheReport,
    var: VarId,
    name: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<Suggestion>, WhatIfError> {
    let facts = Facts::of(before, name);
    // The loop changes are for a walk down the columns: an array already
    // walked along its rows is not offered them (nor noted).
    let nest = (facts.lines.first())
        .filter(|_| !facts.pattern.starts_with("row-wise"))
        .map(String::as_str);
    let mut out = Vec::new();
    let mut pre = Prepass::default();
    let (mut prepared, mut tried) = (Vec::new(), Vec::new());
    let mut noted = false;
    for (layout, rank) in candidates(a, var, opts, nest) {
        let reorders = matches!(layout, Layout::Interchange(_) | Layout::Tile(..));
        match prepare(a, opts, before, var, &layout, &mut pre) {
            Ok(p) => {
                prepared.push(p);
                tried.push((layout, rank));
            }
            Err(WhatIfError::Locality(e)) => return Err(WhatIfError::Locality(e)),
            Err(e) if reorders && !noted => {
                notes.push(format!("{name}: no loop interchange or tiling: {e}"));
                noted = true;
            }
            Err(_) => {}
        }
    }
    let predicted = simulate(a, opts, before, var, prepared)?;
    for ((layout, rank), w) in tried.into_iter().zip(predicted) {
        if w.unmapped > 0 && w.mapped == 0 {
            notes.push(format!("{name}: {} moved no access", words(&layout)));
            continue;
        }
        let (b, after) = w.variable_misses();
        let names = |vars: &[VarId]| -> Vec<String> {
            let mut n: Vec<String> = vars
                .iter()
                .map(|&v| w.before.names.var_name(v).to_string())
                .collect();
            n.sort_by_key(|x| x != name);
            n.dedup();
            n
        };
        let lines = match &w.reorder {
            Some((nest, _)) => (nest.lines.iter())
                .map(|&l| w.before.names.source(l).to_string())
                .collect(),
            None => facts.lines.clone(),
        };
        let s = Suggestion {
            change: words(&layout),
            variable: name.to_string(),
            touches: names(&w.before_vars),
            lines,
            why: why(&facts, name, &layout),
            command: format!("what_if {name} {}", words(&layout)),
            before: b,
            after,
            rank,
            prediction: Box::new(w),
        };
        if s.worth_it() {
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
    let (line, sets, _) = first_level(opts);
    let row = row_bytes(a, var);
    if !matches!(layout, Layout::Pad(_)) || row == 0 || !row.is_multiple_of(line) {
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
        Layout::Interchange(None) => "interchange".into(),
        Layout::Interchange(Some(l)) => format!("interchange {l}"),
        Layout::Tile(t, None) => format!("tile {t}"),
        Layout::Tile(t, Some(l)) => format!("tile {t} {l}"),
    }
}

/// Why the variable misses at the first level, in one sentence from its
/// miss classes and its access pattern, and what the change acts on.
fn why(f: &Facts, name: &str, layout: &Layout) -> String {
    let m = f.counts.classes[0];
    let total = m.total().max(1) as f64;
    let pct = |n: u64| (100.0 * n as f64 / total).round();
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
        Layout::Align(_) => "aligning its base keeps each element within one line".to_string(),
        Layout::Pad(_) => "padding each row spreads its lines over more cache sets".to_string(),
        Layout::Soa => {
            "splitting it brings the field that is read together into whole lines".to_string()
        }
        Layout::Transpose(_) => "transposing it makes the walk run along its lines".to_string(),
        Layout::Interchange(_) => {
            "interchanging the nest's loops makes the walk run along its rows, using each line whole"
                .to_string()
        }
        Layout::Tile(t, _) => format!(
            "tiling the nest in blocks of {t} x {t} iterations uses each line the block brings in before it is evicted"
        ),
    };
    if f.pattern.is_empty() {
        format!("{cause}; {acts}")
    } else {
        format!("{cause} (pattern: {}); {acts}", f.pattern)
    }
}

/// The note for a variable no change helps, from its miss classes.
fn nothing_to_suggest(r: &CacheReport, name: &str) -> String {
    let m = Facts::of(r, name).counts.classes[0];
    if m.total() > 0 && m.compulsory == m.total() {
        format!(
            "{name}: nothing to suggest: all its {} L1 misses are first uses of a line, which no \
             layout or loop order cuts (only touching fewer lines would)",
            m.total()
        )
    } else {
        format!(
            "{name}: nothing to suggest: no change advise tries saves L1 misses (compulsory {}, \
             capacity {}, conflict {})",
            m.compulsory, m.capacity, m.conflict
        )
    }
}

impl Advice {
    /// The suggestions as a table, best first: `rank, variable, change,
    /// touches, lines` (space-separated), `misses_before_L1, misses_after_L1` … per
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
            Column::new("touches".into(), text(&|x| x.touches.join(" "))),
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
