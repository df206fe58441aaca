//! The reports as the terminal shows them: `memory_stats`' tables,
//! `cache_stats`' tables, `what_if`'s before and after, `sharing_stats`'
//! lines, `compare_runs`' two runs side by side. The reports are the
//! analysis stage's (`crate::filter::MemoryStats`, `CacheReport`,
//! `WhatIf`, `SharedLine`, `RunComparison`); laying them out as text is
//! the shell's, so the handlers only orchestrate and the analysis stage
//! knows nothing of terminals. Each function returns the text; the handler
//! prints it. Nothing here computes an analysis: the numbers come from the
//! reports and their methods, and this module only formats them.
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use polars::prelude::{AnyValue, DataFrame};

use super::handlers::THREADS_NOTE;
use super::text::{counted, table, terminal_safe, text_table};
use crate::filter::{
    Advice, CacheReport, Counts, HeapReport, HeapRun, MemoryStats, MissClasses, PairComparison,
    PairSide, Row, RunComparison, SharedLine, Side, StructField, TimeUnit, VarComparison, WhatIf,
};

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

/// What `sharing_stats` says above its lines: the cache line size and
/// memory kind it looked at, whether the analysis is partial, and how
/// many threads the trace had.
pub(super) struct SharingHead {
    /// The first cache level's line size in bytes.
    pub line: u32,
    /// `set_mem_alloc`'s code for the memory kinds looked at.
    pub mem: &'static str,
    /// The partial analysis warning, when there is one.
    pub partial: Option<String>,
    /// Threads in the trace (above one, how Valgrind serialises them is
    /// noted).
    pub threads: usize,
}

/// The whole report of `sharing_stats`: its heading and notes, then each shared
/// line ([`shared_lines`]), or a sentence saying none is shared.
pub(super) fn sharing_stats(h: &SharingHead, lines: &[SharedLine]) -> String {
    let mut out = String::new();
    wl!(
        out,
        "sharing_stats ({}-byte lines written by one thread and touched by another, set_mem_alloc {}; \
         Valgrind runs one thread at a time, so transfers are those of its interleaving):",
        h.line,
        h.mem
    );
    if let Some(w) = &h.partial {
        wl!(out, "{w}");
    }
    if h.threads > 1 {
        wl!(out, "note: {}", THREADS_NOTE);
    }
    if lines.is_empty() {
        wl!(out, "no line is shared between threads.");
    }
    out.push_str(&shared_lines(lines));
    out
}

/// What `sharing_stats` prints per shared line: its kind and transfers,
/// then what each thread touched.
fn shared_lines(lines: &[SharedLine]) -> String {
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
    v.push(row.counts.compulsory().to_string());
    v.push(format!("{:.4}", row.miss_ratio()));
    v.push(format!("{:.1}", row.bytes_per_line()));
    for c in &row.counts.classes[..r.cache.model.levels.len()] {
        v.push(classes_text(c));
    }
    v
}

/// A level's misses by class: `compulsory/capacity/conflict`.
fn classes_text(c: &MissClasses) -> String {
    format!("{}/{}/{}", c.compulsory, c.capacity, c.conflict)
}

/// The change of each class from `b` to `a`: `+0/-1024/+16`.
fn classes_change(b: &MissClasses, a: &MissClasses) -> String {
    let d = |x: u64, y: u64| format!("{:+}", y as i128 - x as i128);
    format!(
        "{}/{}/{}",
        d(b.compulsory, a.compulsory),
        d(b.capacity, a.capacity),
        d(b.conflict, a.conflict)
    )
}

/// The line that explains the `cmp/cap/cnf` columns.
pub(super) const CLASSES_LEGEND: &str = "cmp/cap/cnf: the misses of each level by class (3C): \
     compulsory (the line's first use at that level), capacity (a fully associative cache \
     of the same size would miss too), conflict (only the mapping of lines to sets lost it).";

/// The headers of [`count_cells`], after `first` and before `last`.
fn count_headers(r: &CacheReport, first: &[&str], last: Option<&str>) -> Vec<String> {
    let mut h: Vec<String> = first.iter().map(|x| x.to_string()).collect();
    h.push("accesses".into());
    for l in &r.cache.model.levels {
        h.push(format!("misses_{}", l.name()));
    }
    h.extend(["compulsory", "miss_ratio", "line_bytes_used"].map(String::from));
    for l in &r.cache.model.levels {
        h.push(format!("{}_cmp/cap/cnf", l.name()));
    }
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
    v.push(change(b.compulsory(), a.compulsory()));
    for i in 0..r.cache.model.levels.len() {
        v.push(classes_change(&b.classes[i], &a.classes[i]));
    }
    v
}

/// The headers of a before/after table.
fn change_headers(r: &CacheReport, first: &str) -> Vec<String> {
    let mut h = vec![first.to_string(), "accesses".into()];
    for l in &r.cache.model.levels {
        h.push(format!("misses_{}", l.name()));
    }
    h.push("compulsory".into());
    for l in &r.cache.model.levels {
        h.push(format!("{}_cmp/cap/cnf", l.name()));
    }
    h
}

/// What `advise` prints: the ranked suggestions as a table, then each
/// one's reason and command, then the notes.
pub(super) fn advice(a: &Advice) -> String {
    let mut out = String::new();
    if a.suggestions.is_empty() {
        wl!(out, "advise: nothing to suggest.");
    } else {
        wl!(
            out,
            "advise: {} ranked by L1 misses saved (predicted from the recorded trace, as what_if does):",
            counted(a.suggestions.len() as u64, "change")
        );
        let mut head: Vec<String> = ["rank", "variable", "change"].map(String::from).to_vec();
        head.extend(a.levels.iter().map(|l| format!("{l} misses")));
        head.push("touches".into());
        head.push("lines".into());
        let rows: Vec<Vec<String>> = a
            .suggestions
            .iter()
            .enumerate()
            .map(|(k, x)| {
                let mut v = vec![
                    (k + 1).to_string(),
                    terminal_safe(&x.variable).into_owned(),
                    x.change.clone(),
                ];
                for i in 0..a.levels.len() {
                    let (b, n) = (x.before[i], x.after[i]);
                    v.push(change(b, n));
                }
                v.push(terminal_safe(&x.touches.join(",")).into_owned());
                v.push(x.lines.join(" "));
                v
            })
            .collect();
        w!(out, "{}", text_table(&head, &rows));
        for (k, x) in a.suggestions.iter().enumerate() {
            wl!(out, "  {}. {}: {}", k + 1, x.command, x.why);
        }
    }
    for n in &a.notes {
        wl!(out, "note: {n}");
    }
    out
}

/// What `what_if` prints: the layout's notes, then before and after per
/// variable and per line of NAME.
pub(super) fn what_if(w: &WhatIf, name: &str) -> String {
    let mut out = String::new();
    wl!(
        out,
        "what_if {name} ({} accesses simulated; caches start cold at the start of the region):",
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
    let (b, a) = w.per_line();
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
    let when = if r.recorded {
        " as the trace was analysed"
    } else {
        ""
    };
    wl!(
        out,
        "cache_stats ({} accesses simulated{when}, set_mem_alloc {kind}; caches start cold at the start of the region):",
        r.cache.accesses
    );
    for l in &r.cache.model.levels {
        wl!(out, "  {}", l.describe());
    }
    wl!(out, "  LRU, write-allocate, outer levels looked up only on a miss (neither inclusive nor exclusive); L1 private to each of {}; model from {}.", counted(r.cache.threads as u64, "thread"), r.cache.model.origin);
    if r.cache.threads > 1 {
        wl!(out, "note: {}", THREADS_NOTE);
    }
    wl!(out, "  {CLASSES_LEGEND}");
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
        "\nper variable and line ({}{}):",
        counted(pairs.len() as u64, "pair"),
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
            let median = hist
                .median_bin()
                .map_or_else(|| "cold".to_string(), |(lo, hi)| format!("{lo}..{hi}"));
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

/// A cell of a polars table as text: strings as they are, nulls empty,
/// numbers as polars writes them.
fn cell(df: &DataFrame, col: &str, i: usize) -> String {
    df.column(col)
        .ok()
        .and_then(|c| c.get(i).ok())
        .map(|v| match v {
            AnyValue::String(s) => s.to_string(),
            AnyValue::StringOwned(s) => s.to_string(),
            AnyValue::Null => String::new(),
            other => other.to_string(),
        })
        .unwrap_or_default()
}

/// The cells of `cols` of every row of `df`.
fn cells(df: &DataFrame, cols: &[&str]) -> Vec<Vec<String>> {
    (0..df.height())
        .map(|i| cols.iter().map(|c| cell(df, c, i)).collect())
        .collect()
}

/// The per-variable rows of `memory_stats` as text, one cell per column
/// of [`MemoryStats::VARIABLE_COLUMNS`]: what the table shows and what
/// the command returns to Tcl.
pub(super) fn variable_rows(m: &MemoryStats) -> Vec<Vec<String>> {
    cells(&m.per_variable, &MemoryStats::VARIABLE_COLUMNS)
}

/// Access pattern pairs `memory_stats` prints.
const PATTERNS_SHOWN: usize = 20;

/// What `memory_stats` prints after its first line: the per-variable
/// table and its notes, the fields of grouped heap blocks, the first
/// addresses and the busiest access patterns.
pub(super) fn memory_stats(m: &MemoryStats) -> String {
    let mut out = String::new();
    let cols = MemoryStats::VARIABLE_COLUMNS;
    w!(out, "{}", table(&cols, &variable_rows(m)));
    for line in super::notes::grouped(&m.notes) {
        wl!(out, "note: {line}");
    }
    if m.threads > 1 {
        wl!(out, "note: {THREADS_NOTE}");
    }
    grouped_fields(&mut out, &m.grouped_fields);
    let per_addr = &m.first_addresses;
    let addr_cols = MemoryStats::ADDRESS_COLUMNS;
    let shown = per_addr.height();
    let rows: Vec<Vec<String>> = (0..shown)
        .map(|i| {
            addr_cols
                .iter()
                .map(|c| {
                    if *c == "address" {
                        per_addr
                            .column("address")
                            .ok()
                            .and_then(|c| c.u64().ok()?.get(i))
                            .map(|a| format!("{a:#x}"))
                            .unwrap_or_default()
                    } else {
                        cell(per_addr, c, i)
                    }
                })
                .collect()
        })
        .collect();
    wl!(
        out,
        "\nper address ({} addresses{}):",
        m.addresses,
        if (shown as u64) < m.addresses {
            ", the first 20 shown; memory_stats save writes them all"
        } else {
            ""
        }
    );
    w!(out, "{}", table(&addr_cols, &rows));
    patterns(&mut out, m);
    out
}

/// The fields of rows grouping several heap blocks, summed over the
/// blocks (`n.val`, `n.next` of a list's 200 nodes); nothing when no row
/// groups blocks.
fn grouped_fields(out: &mut String, fields: &DataFrame) {
    if fields.height() == 0 {
        return;
    }
    let cols = [
        "variable",
        "element",
        "accesses",
        "load_bytes",
        "store_bytes",
        "addresses",
    ];
    wl!(out, "\nfields of grouped heap blocks, summed over the blocks (set_heap_grouping instances shows each block):");
    w!(out, "{}", table(&cols, &cells(fields, &cols)));
}

/// The access patterns per (variable, line) of `memory_stats`: the 20
/// busiest pairs.
fn patterns(out: &mut String, m: &MemoryStats) {
    let rows = &m.patterns;
    if rows.is_empty() {
        return;
    }
    let shown: Vec<Vec<String>> = rows
        .iter()
        .take(PATTERNS_SHOWN)
        .map(|r| {
            vec![
                r.variable.clone(),
                r.source.clone(),
                r.accesses.to_string(),
                r.label.to_string(),
            ]
        })
        .collect();
    let h: Vec<String> = ["variable", "source", "accesses", "pattern"]
        .map(String::from)
        .to_vec();
    w!(
        out,
        "\naccess patterns per variable and line ({}{}; cache_stats adds misses and bytes used per line):\n{}",
        counted(rows.len() as u64, "pair"),
        if rows.len() > PATTERNS_SHOWN { ", the 20 busiest shown" } else { "" },
        text_table(&h, &shown)
    );
}

/// The fields no access touched, with their bytes, for the figure
/// commands to say (`m (4 bytes at offset 20), (padding) (4 bytes at
/// offset 28)`); `None` when every field was touched.
pub(super) fn untouched_fields(fields: &[StructField]) -> Option<String> {
    let list: Vec<String> = fields
        .iter()
        .filter(|f| !f.touched)
        .map(|f| format!("{} ({} bytes at offset {})", f.name, f.size, f.offset))
        .collect();
    (!list.is_empty()).then(|| list.join(", "))
}

/// `b - a` with its change in percent of `a` (`+12 (+3.4%)`); `new` when
/// `a` is 0 and `b` is not.
fn change_text(a: f64, b: f64) -> String {
    let d = b - a;
    let abs = if d.fract() == 0.0 {
        format!("{d:+.0}")
    } else {
        format!("{d:+.3}")
    };
    if a == 0.0 {
        return if d == 0.0 {
            abs
        } else {
            format!("{abs} (new)")
        };
    }
    format!("{abs} ({:+.1}%)", 100.0 * d / a)
}

/// A change of reuse distance bin (in power-of-two steps) as text: `=`,
/// `+3 bins (x8)`, `-1 bin (/2)`, or `-` when a side has no reuse.
fn steps_text(steps: Option<i64>) -> String {
    match steps {
        None => "-".into(),
        Some(0) => "=".into(),
        Some(d) => {
            let unit = if d.abs() == 1 { "bin" } else { "bins" };
            let factor = 1u128 << d.unsigned_abs().min(64);
            let op = if d > 0 { 'x' } else { '/' };
            format!("{d:+} {unit} ({op}{factor})")
        }
    }
}

/// What `compare_runs` prints: both runs per variable, then per
/// (variable, line) pair, runs labelled `la` and `lb`; `r` is run A's
/// report, for the cache model's description.
pub(super) fn comparison(la: &str, lb: &str, c: &RunComparison, r: &CacheReport) -> String {
    let mut out = String::new();
    var_comparison(&mut out, la, lb, &c.levels, &c.vars, r);
    pair_comparison(&mut out, la, lb, &c.levels, &c.pairs);
    out
}

fn var_comparison(
    out: &mut String,
    la: &str,
    lb: &str,
    levels: &[String],
    rows: &[VarComparison],
    r: &CacheReport,
) {
    wl!(
        out,
        "compare_runs {la} {lb}: {} under {}, by the largest change in {} misses:",
        counted(rows.len() as u64, "variable"),
        r.cache.model.levels_text(),
        levels.first().map_or("", String::as_str)
    );
    let mut head: Vec<String> = ["variable", "run", "accesses", "bytes"]
        .map(String::from)
        .to_vec();
    head.extend(levels.iter().map(|l| format!("{l} misses")));
    head.extend(["miss ratio", "bytes used/line", "reuse p50", "reuse p90"].map(String::from));
    head.extend(levels.iter().map(|l| format!("{l} cmp/cap/cnf")));
    head.push("pattern".into());
    let mut rows_out = Vec::new();
    for c in rows.iter().filter(|c| c.in_both()) {
        let (x, y) = (c.a.as_ref().expect("both"), c.b.as_ref().expect("both"));
        rows_out.push(side_cells(&c.variable, la, x, levels.len()));
        rows_out.push(side_cells("", lb, y, levels.len()));
        rows_out.push(side_change_cells(x, y, levels.len()));
    }
    let head_refs: Vec<&str> = head.iter().map(String::as_str).collect();
    w!(out, "{}", table(&head_refs, &rows_out));
    for (label, only) in [(la, true), (lb, false)] {
        let names: Vec<&str> = rows
            .iter()
            .filter(|c| !c.in_both() && c.a.is_some() == only)
            .map(|c| c.variable.as_str())
            .collect();
        if !names.is_empty() {
            wl!(out, "only in {label}: {}", terminal_safe(&names.join(", ")));
        }
    }
}

fn side_cells(name: &str, run: &str, x: &Side, levels: usize) -> Vec<String> {
    let mut v = vec![
        terminal_safe(name).into_owned(),
        run.to_string(),
        x.counts.accesses.to_string(),
        x.counts.bytes.to_string(),
    ];
    v.extend((0..levels).map(|i| x.counts.misses[i].to_string()));
    v.push(format!("{:.4}", x.miss_ratio));
    v.push(format!("{:.1}", x.line_bytes_used));
    v.extend(x.reuse_texts());
    v.extend(x.counts.classes[..levels].iter().map(classes_text));
    v.push(x.pattern.clone());
    v
}

/// The change row under a variable's two rows.
fn side_change_cells(x: &Side, y: &Side, levels: usize) -> Vec<String> {
    let f = |n: u64| n as f64;
    let mut d = vec![String::new(), "change".to_string()];
    d.push(change_text(f(x.counts.accesses), f(y.counts.accesses)));
    d.push(change_text(f(x.counts.bytes), f(y.counts.bytes)));
    for i in 0..levels {
        d.push(change_text(f(x.counts.misses[i]), f(y.counts.misses[i])));
    }
    d.push(change_text(x.miss_ratio, y.miss_ratio));
    d.push(change_text(x.line_bytes_used, y.line_bytes_used));
    d.extend(x.reuse_steps_to(y).map(steps_text));
    for i in 0..levels {
        d.push(classes_change(&x.counts.classes[i], &y.counts.classes[i]));
    }
    d.push(String::new());
    d
}

/// The pairs matched by variable and pattern, then those of one run only.
fn pair_comparison(
    out: &mut String,
    la: &str,
    lb: &str,
    levels: &[String],
    pairs: &[PairComparison],
) {
    let both = pairs.iter().filter(|p| p.in_both()).count();
    wl!(
        out,
        "\nper variable and line: {} matched by variable and pattern label, not by line number \
         (then by walk direction where one run's loop is tiled; pairs sharing a key matched \
         busiest with busiest), by the largest change in misses:",
        counted(both as u64, "pair")
    );
    let mut head: Vec<String> = ["variable", "run", "source", "accesses"]
        .map(String::from)
        .to_vec();
    head.extend(levels.iter().map(|l| format!("{l} misses")));
    head.extend(["miss ratio", "pattern"].map(String::from));
    let head_refs: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut rows = Vec::new();
    for p in pairs.iter().filter(|p| p.in_both()) {
        let (x, y) = (p.a.as_ref().expect("both"), p.b.as_ref().expect("both"));
        rows.push(pair_cells(&p.variable, la, x, levels.len()));
        rows.push(pair_cells("", lb, y, levels.len()));
        let f = |n: u64| n as f64;
        let mut d = vec![String::new(), "change".into(), String::new()];
        d.push(change_text(f(x.counts.accesses), f(y.counts.accesses)));
        for i in 0..levels.len() {
            d.push(change_text(f(x.counts.misses[i]), f(y.counts.misses[i])));
        }
        d.push(change_text(x.miss_ratio, y.miss_ratio));
        d.push(
            if x.label == y.label {
                "same"
            } else {
                "changed"
            }
            .into(),
        );
        rows.push(d);
    }
    w!(out, "{}", table(&head_refs, &rows));
    let apart: Vec<Vec<String>> = pairs
        .iter()
        .filter(|p| !p.in_both())
        .filter_map(|p| {
            let x = p.a.as_ref().or(p.b.as_ref())?;
            let run = if x.run_a { la } else { lb };
            Some(pair_cells(&p.variable, run, x, levels.len()))
        })
        .collect();
    if !apart.is_empty() {
        wl!(
            out,
            "pairs found in one run only (no pair of that variable and pattern left in the other; not compared):"
        );
        w!(out, "{}", table(&head_refs, &apart));
    }
}

fn pair_cells(name: &str, run: &str, x: &PairSide, levels: usize) -> Vec<String> {
    let mut v = vec![
        terminal_safe(name).into_owned(),
        run.to_string(),
        terminal_safe(&x.source).into_owned(),
        x.counts.accesses.to_string(),
    ];
    v.extend((0..levels).map(|i| x.counts.misses[i].to_string()));
    v.push(format!("{:.4}", x.miss_ratio));
    v.push(x.label.to_string());
    v
}

/// What `heap_stats` prints (before the profile's notes): the size
/// classes, the totals, the blowup against peak RSS, and, for a native
/// profile, internal fragmentation and the time per call (said to be
/// estimates when only a sample of the calls was timed).
pub(super) fn heap_stats(run: &HeapRun, r: &HeapReport) -> String {
    let mut out = String::new();
    wl!(out, "heap_stats of the {}:", run.source);
    let rows: Vec<Vec<String>> = r
        .used_classes()
        .map(|(label, c)| {
            let mut row = vec![
                label,
                c.allocs.to_string(),
                c.bytes.to_string(),
                c.frees.to_string(),
            ];
            if run.timed {
                row.push(c.usable.to_string());
            }
            row
        })
        .collect();
    let mut cols = vec!["size class", "allocations", "bytes", "frees"];
    if run.timed {
        cols.push("usable bytes");
    }
    out.push_str(&table(&cols, &rows));
    wl!(
        out,
        "{}, {}, {} bytes requested; peak {} live bytes at {}; {} temporary.",
        counted(r.counts.allocs, "allocation"),
        counted(r.counts.frees, "free"),
        r.counts.bytes,
        r.counts.peak_live.0,
        heap_time(run, r.counts.peak_live.1),
        r.counts.temporary
    );
    if let Some(rss) = r.peak_rss {
        wl!(
            out,
            "peak RSS {} bytes: {:.2}x the peak of live heap bytes (blowup; RSS also holds code, stacks and libraries).",
            rss,
            rss as f64 / r.counts.peak_live.0.max(1) as f64
        );
    }
    if run.timed {
        heap_times(&mut out, run, r);
    }
    out
}

/// A time of a heap run: a duration that reads (`22.7 ms`) for a native
/// profile, operations for a Valgrind trace.
fn heap_time(run: &HeapRun, t: u64) -> String {
    match run.unit {
        TimeUnit::Nanoseconds => super::text::duration(t),
        TimeUnit::Operations => counted(t, "operation"),
    }
}

/// The lines of `heap_stats` on a native profile: internal fragmentation, then
/// the time per call by group and operation, with how many calls were
/// timed.
fn heap_times(out: &mut String, run: &HeapRun, r: &HeapReport) {
    let (req, usable) = r.fragmentation();
    wl!(
        out,
        "internal fragmentation: {} bytes requested, {} usable (malloc_usable_size): {} bytes ({:.1}%) lost to rounding.",
        req,
        usable,
        usable.saturating_sub(req),
        100.0 * usable.saturating_sub(req) as f64 / usable.max(1) as f64
    );
    let rows: Vec<Vec<String>> = r
        .times
        .iter()
        .map(|t| {
            vec![
                t.group.clone(),
                t.op.to_string(),
                t.calls.to_string(),
                t.count.to_string(),
                t.median.to_string(),
                t.p99.to_string(),
                t.max.to_string(),
            ]
        })
        .collect();
    if run.dur_sample.is_some_and(|n| n > 1) {
        wl!(
            out,
            "time per call (ns), ESTIMATED from a sample (sampled 1 in {}; \"timed\" of \"calls\" were timed; groups with no timed call left out; median and p99 within 1.6% above 1024 ns, max is the largest timed):",
            r.dur_sample
        );
    } else {
        wl!(
            out,
            "time per call (ns), every call timed (exact below 1024 ns, median and p99 above it within 1.6%, max exact):"
        );
    }
    out.push_str(&table(
        &["group", "op", "calls", "timed", "median", "p99", "max"],
        &rows,
    ));
    if let Some(n) = run.duration_note(r) {
        wl!(out, "note: {n}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bin_changes_read_as_steps() {
        assert_eq!(steps_text(Some(3)), "+3 bins (x8)");
        assert_eq!(steps_text(Some(-1)), "-1 bin (/2)");
        assert_eq!(steps_text(Some(0)), "=");
        assert_eq!(steps_text(None), "-");
    }

    #[test]
    fn changes_read_as_people_say_them() {
        assert_eq!(change_text(200.0, 100.0), "-100 (-50.0%)");
        assert_eq!(change_text(0.0, 3.0), "+3 (new)");
        assert_eq!(change_text(0.0, 0.0), "+0");
        assert_eq!(change_text(0.5, 0.25), "-0.250 (-50.0%)");
    }
}
