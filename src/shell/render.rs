//! The locality reports as the terminal shows them: `cache_stats`'
//! tables, `what_if`'s before and after, `sharing_stats`' lines. The
//! reports are the analysis stage's (`crate::filter::CacheReport`,
//! `WhatIf`, `SharedLine`); laying them out as text is the shell's, so the
//! handlers only orchestrate and the analysis stage knows nothing of
//! terminals. Each function returns the text; the handler prints it.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::handlers::THREADS_NOTE;
use super::text::{counted, text_table};
use crate::filter::{bin_range, per_line_of, CacheReport, Counts, Row, SharedLine, WhatIf};

/// `writeln!` into a `String`, which cannot fail.
macro_rules! wl {
    ($o:expr, $($t:tt)*) => {{
        let _ = writeln!($o, $($t)*);
    }};
}

/// `write!` into a `String`, which cannot fail.
macro_rules! w {
    ($o:expr, $($t:tt)*) => {{
        let _ = write!($o, $($t)*);
    }};
}

/// What `sharing_stats` prints per shared line: its kind and transfers,
/// then what each thread touched.
pub(super) fn shared_lines(lines: &[SharedLine]) -> String {
    let mut out = String::new();
    for l in lines {
        wl!(
            out,
            "line {:#x}: {} sharing, {} transfers ({} true, {} false): {}",
            l.addr,
            l.kind,
            l.transfers,
            l.true_transfers,
            l.false_transfers,
            l.variables.join(" ")
        );
        for t in &l.threads {
            wl!(
                out,
                "  thread {}: {} accesses to {}; bytes read [{}], written [{}]",
                t.tid,
                t.accesses,
                t.elements.join(" "),
                t.read,
                t.written
            );
        }
    }
    out
}

/// The cells of a count row: accesses, misses per level, compulsory,
/// miss ratio and bytes used per line.
fn count_cells(r: &CacheReport, row: &Row) -> Vec<String> {
    let mut v = vec![row.counts.accesses.to_string()];
    for i in 0..r.cache.model.levels.len() {
        v.push(row.counts.misses[i].to_string());
    }
    v.push(row.counts.compulsory.to_string());
    v.push(format!("{:.4}", row.miss_ratio()));
    v.push(format!("{:.1}", row.bytes_per_line()));
    v
}

/// The headers of [`count_cells`], after `first` and before `last`.
fn count_headers(r: &CacheReport, first: &[&str], last: Option<&str>) -> Vec<String> {
    let mut h: Vec<String> = first.iter().map(|x| x.to_string()).collect();
    h.push("accesses".into());
    for l in &r.cache.model.levels {
        h.push(format!("misses_{}", l.name()));
    }
    h.extend(["compulsory", "miss_ratio", "line_bytes_used"].map(String::from));
    h.extend(last.map(String::from));
    h
}

/// `N access` or `N accesses`.
fn accesses(n: u64) -> String {
    format!("{n} access{}", if n == 1 { "" } else { "es" })
}

/// `before -> after (+x%)`, `(new)` from zero.
fn change(b: u64, a: u64) -> String {
    if b == a {
        return format!("{b} -> {a}");
    }
    if b == 0 {
        return format!("{b} -> {a} (new)");
    }
    let pct = (a as f64 - b as f64) / b as f64 * 100.0;
    format!("{b} -> {a} ({pct:+.1}%)")
}

/// The cells of a before/after row: accesses, then misses per level.
/// One row per key of `before` or `after` (a variable or a source line),
/// in key order: the key, then its [`change_cells`] (a key missing on one
/// side counts zero there).
fn change_rows(
    r: &CacheReport,
    before: &BTreeMap<String, Counts>,
    after: &BTreeMap<String, Counts>,
) -> Vec<Vec<String>> {
    let zero = Counts::default();
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .map(|k| {
            let mut v = vec![k.clone()];
            v.extend(change_cells(
                r,
                before.get(k).unwrap_or(&zero),
                after.get(k).unwrap_or(&zero),
            ));
            v
        })
        .collect()
}

fn change_cells(r: &CacheReport, b: &Counts, a: &Counts) -> Vec<String> {
    let mut v = vec![change(b.accesses, a.accesses)];
    for i in 0..r.cache.model.levels.len() {
        v.push(change(b.misses[i], a.misses[i]));
    }
    v.push(change(b.compulsory, a.compulsory));
    v
}

/// The headers of a before/after table.
fn change_headers(r: &CacheReport, first: &str) -> Vec<String> {
    let mut h = vec![first.to_string(), "accesses".into()];
    for l in &r.cache.model.levels {
        h.push(format!("misses_{}", l.name()));
    }
    h.push("compulsory".into());
    h
}

/// What `what_if` prints: the layout's notes, then before and after per
/// variable and per line of NAME.
pub(super) fn what_if(w: &WhatIf, name: &str) -> String {
    let mut out = String::new();
    wl!(
        out,
        "what_if {name} ({} accesses simulated; caches start cold at GL_START):",
        w.after.cache.accesses
    );
    for n in &w.notes {
        wl!(out, "  {n}");
    }
    wl!(
        out,
        "  {} of {name} moved, {}",
        accesses(w.mapped),
        if w.unmapped == 0 {
            "every access mapped".to_string()
        } else {
            format!(
                "{} could not be mapped (straddling elements or outside them) and were kept as recorded",
                accesses(w.unmapped)
            )
        }
    );
    let before: BTreeMap<String, Counts> = w
        .before
        .per_variable()
        .into_iter()
        .map(|r| (r.key, r.counts))
        .collect();
    let after: BTreeMap<String, Counts> = w
        .after
        .per_variable()
        .into_iter()
        .map(|r| (r.key, r.counts))
        .collect();
    let rows = change_rows(&w.after, &before, &after);
    wl!(
        out,
        "
per variable (before -> after):"
    );
    w!(
        out,
        "{}",
        text_table(&change_headers(&w.after, "variable"), &rows)
    );
    let b = per_line_of(&w.before, &[w.var]);
    let a = per_line_of(&w.after, &w.after_vars);
    let rows = change_rows(&w.after, &b, &a);
    wl!(
        out,
        "
per line, accesses of {name} (before -> after):"
    );
    w!(
        out,
        "{}",
        text_table(&change_headers(&w.after, "source"), &rows)
    );
    out
}

/// What `cache_stats` prints: the model, then per variable, the top
/// missing lines, per (variable, line) pair and the reuse distances.
pub(super) fn cache_report(r: &CacheReport, kind: &str) -> String {
    let mut out = String::new();
    wl!(
        out,
        "cache_stats ({} accesses simulated, set_mem_alloc {kind}; caches start cold at GL_START):",
        r.cache.accesses
    );
    for l in &r.cache.model.levels {
        wl!(out, "  {}", l.describe());
    }
    wl!(out, "  LRU, write-allocate, outer levels looked up only on a miss (neither inclusive nor exclusive); L1 private to each of {}; model from {}.", counted(r.cache.threads as u64, "thread"), r.cache.model.origin);
    if r.cache.threads > 1 {
        wl!(out, "note: {}", THREADS_NOTE);
    }
    let vars = r.per_variable();
    let rows: Vec<Vec<String>> = vars
        .iter()
        .map(|row| {
            let mut v = vec![row.key.clone()];
            v.extend(count_cells(r, row));
            v
        })
        .collect();
    wl!(out, "\nper variable:");
    w!(
        out,
        "{}",
        text_table(&count_headers(r, &["variable"], None), &rows)
    );
    let lines = r.per_line();
    let rows: Vec<Vec<String>> = lines
        .iter()
        .take(10)
        .map(|row| {
            let mut v = vec![row.key.clone()];
            v.extend(count_cells(r, row));
            v.push(row.variables.clone());
            v
        })
        .collect();
    wl!(
        out,
        "\ntop missing lines (every access on the line counts, as in cachegrind):"
    );
    w!(
        out,
        "{}",
        text_table(&count_headers(r, &["source"], Some("variables")), &rows)
    );
    let pairs = r.per_pair();
    let rows: Vec<Vec<String>> = pairs
        .iter()
        .take(20)
        .map(|row| {
            vec![
                row.key.clone(),
                row.source.clone(),
                row.counts.accesses.to_string(),
                row.counts.misses[0].to_string(),
                row.pattern.clone(),
            ]
        })
        .collect();
    wl!(
        out,
        "\nper variable and line ({} pairs{}):",
        pairs.len(),
        if pairs.len() > 20 {
            ", the 20 missing most shown; cache_stats save writes them all"
        } else {
            ""
        }
    );
    let h: Vec<String> = ["variable", "source", "accesses", "misses_L1", "pattern"]
        .map(String::from)
        .to_vec();
    w!(out, "{}", text_table(&h, &rows));
    reuse(&mut out, r);
    out
}

/// The reuse-distance part of [`cache_report`].
fn reuse(out: &mut String, r: &CacheReport) {
    let line = r.reuse.line as u64;
    match r.reuse.sampling {
        Some(s) => wl!(out,
            "\nreuse distance in distinct {line}-byte lines (SHARDS sampling of {:.4}% of lines: estimates):",
            s.rate * 100.0
        ),
        None => wl!(out, "\nreuse distance in distinct {line}-byte lines (exact LRU stack distance):"),
    }
    let sizes: Vec<(String, u32)> = r
        .cache
        .model
        .levels
        .iter()
        .map(|l| (l.name(), (l.size / line).max(1).ilog2()))
        .collect();
    let mut h: Vec<String> = vec![
        "variable".into(),
        "references".into(),
        "cold".into(),
        "median".into(),
    ];
    h.extend(sizes.iter().map(|(n, _)| format!("miss@{n}")));
    let rows: Vec<Vec<String>> = r
        .row_histograms()
        .into_iter()
        .map(|(rid, hist)| {
            let total = hist.total();
            let mut acc = hist.cold;
            let mut median = "cold".to_string();
            for (k, n) in hist.bins.iter().enumerate() {
                if acc + n > total / 2 && acc <= total / 2 {
                    median = format!("{}..{}", bin_range(k).0, bin_range(k).1);
                }
                acc += n;
            }
            if hist.cold > total / 2 {
                median = "cold".into();
            }
            let mut row = vec![
                r.names.row_name(rid).to_string(),
                total.to_string(),
                hist.cold.to_string(),
                median,
            ];
            for (_, j) in &sizes {
                row.push(format!("{:.4}", hist.misses_at(*j) as f64 / total as f64));
            }
            row
        })
        .collect();
    w!(out, "{}", text_table(&h, &rows));
    wl!(out, "  (miss@L: miss ratio of a fully associative LRU cache of that level's size, from the histogram; visinfo/miss_ratio_curves.csv with save)");
    let far = r.distant_rows();
    if !far.is_empty() {
        wl!(out, "\nmost distant reuses:");
        let h: Vec<String> = ["line", "element", "distance"].map(String::from).to_vec();
        let rows: Vec<Vec<String>> = far
            .iter()
            .take(10)
            .map(|(l, e, _, d)| vec![l.clone(), e.clone(), d.to_string()])
            .collect();
        w!(out, "{}", text_table(&h, &rows));
    }
}
