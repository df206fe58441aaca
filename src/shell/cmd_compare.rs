//! `compare_runs A B ?save?`: two saved runs side by side, per variable and
//! per (variable, line) pair. The alignment and the numbers live in the
//! locality stage ([`crate::filter::compare_reports`]) and the page in
//! the figure stage ([`crate::vis::compare`]); this handler loads the
//! runs, prints, and writes the tables and the page.
use std::path::{Path, PathBuf};

use polars::prelude::{Column, DataFrame};

use super::cmd_runs::{existing, info};
use super::error::{CmdResult, Context};
use super::handlers::{add, fmt_table, has_save, s};
use super::session::Session;
use super::text::{counted, terminal_safe};
use super::{Registry, Value};
use crate::filter::{
    bin_steps, cache_stats, change_text, compare_pairs, compare_reports, distance_change_text,
    distance_text, Analysis, CacheReport, PairComparison, PairSide, SelectionBatches, Side,
    VarComparison,
};

/// Registers `compare_runs` (holding the folder's lock).
pub fn register(r: &mut Registry<Session>) {
    add(r, "compare_runs", compare_runs);
}

/// One run loaded for the comparison.
struct Loaded {
    label: String,
    dir: PathBuf,
    analysis: Analysis,
    report: CacheReport,
}

/// Loads the run `label` from `dir` and runs `cache_stats` on it under the
/// session's model. Cost: one pass over the run's accesses.
fn load(st: &Session, label: &str, dir: PathBuf) -> CmdResult<Loaded> {
    let analysis = st
        .load_saved(&dir.join("analysis"))
        .context(|| format!("reading the run {label} failed"))?;
    if let Some(why) = analysis.summary.partial_reason() {
        println!("warning: run {label} is PARTIAL ({why}): its counts cover only part of the run.");
    }
    let opts = super::handlers::cache_options(st);
    let report = cache_stats(&analysis, st.mem(), &opts)?;
    Ok(Loaded {
        label: label.to_string(),
        dir,
        analysis,
        report,
    })
}

/// `compare_runs A B ?save?`: both runs' cache statistics by variable and
/// by (variable, line) pair, side by side with their changes; with `save`
/// also `visinfo/compare_A_B.csv`, `visinfo/compare_A_B_pairs.csv` and
/// `figures/compare_A_B.html`. Returns a list of dicts with keys
/// `variable`, `a` and `b`.
fn compare_runs(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let (da, db) = (existing(st, &a[0])?, existing(st, &a[1])?);
    let ra = load(st, &a[0], da)?;
    let rb = load(st, &a[1], db)?;
    let levels: Vec<String> = ra.report.level_names();
    let rows = compare_reports(&ra.report, &rb.report);
    let pairs = compare_pairs(&ra.report, &rb.report);
    let (la, lb) = (ra.label.as_str(), rb.label.as_str());
    print_comparison(la, lb, &levels, &rows, &ra.report);
    print_pairs(la, lb, &levels, &pairs);
    if has_save(a) {
        save(st, [&ra, &rb], &levels, &rows, &pairs)?;
    }
    Ok(Value::List(
        rows.iter()
            .map(|c| {
                Value::Dict(vec![
                    ("variable".into(), s(c.variable.clone())),
                    ("a".into(), side_dict(c.a.as_ref(), &levels)),
                    ("b".into(), side_dict(c.b.as_ref(), &levels)),
                ])
            })
            .collect(),
    ))
}

/// cache_stats' per-variable keys for one side (an empty dict when
/// absent), with the reuse distance bins and the pattern label.
fn side_dict(side: Option<&Side>, levels: &[String]) -> Value {
    let Some(x) = side else {
        return Value::Dict(vec![]);
    };
    let mut d = vec![("accesses".to_string(), Value::Int(x.counts.accesses as i64))];
    for (i, n) in levels.iter().enumerate() {
        d.push((format!("misses_{n}"), Value::Int(x.counts.misses[i] as i64)));
    }
    d.push(("compulsory".into(), Value::Int(x.counts.compulsory as i64)));
    d.push(("miss_ratio".into(), Value::Float(x.miss_ratio)));
    d.push(("line_bytes_used".into(), Value::Float(x.line_bytes_used)));
    d.push(("reuse_median".into(), s(distance_text(x.reuse_median))));
    d.push(("reuse_p90".into(), s(distance_text(x.reuse_p90))));
    d.push(("pattern".into(), s(x.pattern.clone())));
    Value::Dict(d)
}

fn print_comparison(
    la: &str,
    lb: &str,
    levels: &[String],
    rows: &[VarComparison],
    r: &CacheReport,
) {
    println!(
        "compare_runs {la} {lb}: {} under {}, by the largest change in {} misses:",
        counted(rows.len() as u64, "variable"),
        r.cache.model.levels_text(),
        levels.first().map_or("", String::as_str)
    );
    let mut head: Vec<String> = ["variable", "run", "accesses", "bytes"]
        .map(String::from)
        .to_vec();
    head.extend(levels.iter().map(|l| format!("{l} misses")));
    head.extend(
        [
            "miss ratio",
            "bytes used/line",
            "reuse p50",
            "reuse p90",
            "pattern",
        ]
        .map(String::from),
    );
    let mut table = Vec::new();
    for c in rows.iter().filter(|c| c.in_both()) {
        let (x, y) = (c.a.as_ref().expect("both"), c.b.as_ref().expect("both"));
        table.push(side_cells(&c.variable, la, x, levels.len()));
        table.push(side_cells("", lb, y, levels.len()));
        table.push(change_cells(x, y, levels.len()));
    }
    let head_refs: Vec<&str> = head.iter().map(String::as_str).collect();
    print!("{}", fmt_table(&head_refs, &table));
    for (label, only) in [(la, true), (lb, false)] {
        let names: Vec<&str> = rows
            .iter()
            .filter(|c| !c.in_both() && c.a.is_some() == only)
            .map(|c| c.variable.as_str())
            .collect();
        if !names.is_empty() {
            println!("only in {label}: {}", terminal_safe(&names.join(", ")));
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
    v.push(distance_text(x.reuse_median));
    v.push(distance_text(x.reuse_p90));
    v.push(x.pattern.clone());
    v
}

/// The change row under a variable's two rows.
fn change_cells(x: &Side, y: &Side, levels: usize) -> Vec<String> {
    let f = |n: u64| n as f64;
    let mut d = vec![String::new(), "change".to_string()];
    d.push(change_text(f(x.counts.accesses), f(y.counts.accesses)));
    d.push(change_text(f(x.counts.bytes), f(y.counts.bytes)));
    for i in 0..levels {
        d.push(change_text(f(x.counts.misses[i]), f(y.counts.misses[i])));
    }
    d.push(change_text(x.miss_ratio, y.miss_ratio));
    d.push(change_text(x.line_bytes_used, y.line_bytes_used));
    d.push(distance_change_text(x.reuse_median, y.reuse_median));
    d.push(distance_change_text(x.reuse_p90, y.reuse_p90));
    d.push(String::new());
    d
}

/// The pairs matched by variable and pattern, then those of one run only.
fn print_pairs(la: &str, lb: &str, levels: &[String], pairs: &[PairComparison]) {
    let both = pairs.iter().filter(|p| p.in_both()).count();
    println!(
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
    let mut table = Vec::new();
    for p in pairs.iter().filter(|p| p.in_both()) {
        let (x, y) = (p.a.as_ref().expect("both"), p.b.as_ref().expect("both"));
        table.push(pair_cells(&p.variable, la, x, levels.len()));
        table.push(pair_cells("", lb, y, levels.len()));
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
        table.push(d);
    }
    print!("{}", fmt_table(&head_refs, &table));
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
        println!(
            "pairs found in one run only (no pair of that variable and pattern left in the other; not compared):"
        );
        print!("{}", fmt_table(&head_refs, &apart));
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

/// Writes the two tables and the page; records every file written.
fn save(
    st: &Session,
    runs: [&Loaded; 2],
    levels: &[String],
    rows: &[VarComparison],
    pairs: &[PairComparison],
) -> CmdResult<()> {
    let (la, lb) = (runs[0].label.as_str(), runs[1].label.as_str());
    let dir = st.visinfo_dir();
    let mut written = Vec::new();
    let mut df = comparison_table(la, lb, levels, rows)?;
    written.push(crate::filter::write_csv(
        &mut df,
        &dir.join(format!("compare_{la}_{lb}.csv")),
    )?);
    let mut df = pairs_table(levels, pairs)?;
    written.push(crate::filter::write_csv(
        &mut df,
        &dir.join(format!("compare_{la}_{lb}_pairs.csv")),
    )?);
    let (page, sources) = page(st, runs, rows)?;
    let mut recorded = written.clone();
    recorded.extend(sources.iter().cloned());
    recorded.extend(
        crate::vis::FigureReport {
            html: page.html.clone(),
            ..Default::default()
        }
        .files(),
    );
    st.record_written(&recorded);
    written.push(page.html);
    written.extend(sources);
    println!("{}", super::text::wrote(&written));
    Ok(())
}

/// The page, and each run's annotated source pages (in
/// `figures/run_LABEL/`) it links to.
fn page(
    st: &Session,
    runs: [&Loaded; 2],
    rows: &[VarComparison],
) -> CmdResult<(crate::vis::compare::ComparePage, Vec<PathBuf>)> {
    let figures = st.figures_dir();
    let mut sources = Vec::new();
    let mut views = Vec::new();
    let sels = [
        crate::filter::select(&runs[0].analysis, st.mem())?,
        crate::filter::select(&runs[1].analysis, st.mem())?,
    ];
    let batches: Vec<_> = runs
        .iter()
        .zip(sels)
        .map(|(r, sel)| SelectionBatches::plain(&r.analysis, sel))
        .collect();
    for (r, acc) in runs.iter().zip(&batches) {
        let (links, note, files) = source_pages(st, r, &figures)?;
        sources.extend(files);
        let program = info(&r.dir)
            .map(|i| {
                std::iter::once(i.program)
                    .chain(i.arguments)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        views.push(crate::vis::compare::RunView {
            label: r.label.clone(),
            program,
            report: &r.report,
            accesses: acc,
            source_pages: links,
            note,
        });
    }
    let names: Vec<String> = rows.iter().map(|c| c.variable.clone()).collect();
    let p = crate::vis::compare::compare_page(
        &figures,
        &views[0],
        &views[1],
        &names,
        st.point_budget(),
    )?;
    Ok((p, sources))
}

/// Links, note and files of run `r`'s annotated source pages, written
/// into `figures/run_LABEL/` from the source files not edited since its
/// trace.
type SourcePages = (Vec<(String, String)>, Option<String>, Vec<PathBuf>);

fn source_pages(st: &Session, r: &Loaded, figures: &Path) -> CmdResult<SourcePages> {
    let sub = format!("run_{}", r.label);
    let traced = std::fs::metadata(r.dir.join("trace.mvt"))
        .and_then(|m| m.modified())
        .context(|| format!("cannot read the time of run {}'s trace", r.label))?;
    let (pages, edited) = crate::vis::source::write_run_pages(
        &r.report,
        st.src_paths(),
        &figures.join(&sub),
        traced,
    )?;
    let note = (!edited.is_empty()).then(|| {
        format!(
            "not annotated, as edited since the run was traced: {}",
            edited.join(", ")
        )
    });
    let links = pages
        .iter()
        .filter_map(|(file, p)| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            Some((file.clone(), format!("{sub}/{name}")))
        })
        .collect();
    Ok((links, note, pages.into_iter().map(|(_, p)| p).collect()))
}

/// The comparison as a table: one row per variable and run, and on run
/// B's row of a variable in both runs, its changes from run A (absolute,
/// and in percent of A; reuse distance bins as power-of-two steps).
fn comparison_table(
    la: &str,
    lb: &str,
    levels: &[String],
    rows: &[VarComparison],
) -> CmdResult<DataFrame> {
    let mut t = VarTable::new(levels.len());
    for c in rows {
        for (label, side) in [(la, &c.a), (lb, &c.b)] {
            let Some(x) = side else { continue };
            let before = match (label == lb, &c.a) {
                (true, Some(a)) if c.in_both() => Some(a),
                _ => None,
            };
            t.push(&c.variable, label, x, before);
        }
    }
    t.frame(levels)
        .context(|| "building the comparison table failed".to_string())
}

/// The columns of [`comparison_table`], filled a row at a time.
#[derive(Default)]
struct VarTable {
    text: [Vec<String>; 5],
    counts: Vec<Vec<u64>>,
    ratios: [Vec<f64>; 2],
    change: Vec<Vec<Option<f64>>>,
    steps: [Vec<Option<i64>>; 2],
}

/// The numbers of a side whose changes the table gives: accesses, bytes,
/// misses per level, miss ratio, bytes used per line.
fn measures(x: &Side, levels: usize) -> Vec<f64> {
    let mut v = vec![x.counts.accesses as f64, x.counts.bytes as f64];
    v.extend((0..levels).map(|i| x.counts.misses[i] as f64));
    v.extend([x.miss_ratio, x.line_bytes_used]);
    v
}

fn measure_names(levels: &[String]) -> Vec<String> {
    let mut v = vec!["accesses".to_string(), "bytes".to_string()];
    v.extend(levels.iter().map(|l| format!("misses_{l}")));
    v.extend(["miss_ratio", "line_bytes_used"].map(String::from));
    v
}

impl VarTable {
    fn new(levels: usize) -> VarTable {
        VarTable {
            counts: vec![Vec::new(); 2 + levels],
            change: vec![Vec::new(); 2 * (4 + levels)],
            ..Default::default()
        }
    }

    fn push(&mut self, var: &str, run: &str, x: &Side, before: Option<&Side>) {
        let texts = [
            var.to_string(),
            run.to_string(),
            distance_text(x.reuse_median),
            distance_text(x.reuse_p90),
            x.pattern.clone(),
        ];
        for (col, v) in self.text.iter_mut().zip(texts) {
            col.push(v);
        }
        let levels = self.counts.len() - 2;
        let mut counts = vec![x.counts.accesses, x.counts.bytes];
        counts.extend((0..levels).map(|i| x.counts.misses[i]));
        for (col, v) in self.counts.iter_mut().zip(counts) {
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
        let step = |f: fn(&Side) -> Option<(u64, u64)>| before.and_then(|b| bin_steps(f(b), f(x)));
        self.steps[0].push(step(|s| s.reuse_median));
        self.steps[1].push(step(|s| s.reuse_p90));
    }

    fn frame(self, levels: &[String]) -> polars::prelude::PolarsResult<DataFrame> {
        let [var, run, p50, p90, pat] = self.text;
        let mut cols = vec![
            Column::new("variable".into(), var),
            Column::new("run".into(), run),
        ];
        let mut counts = self.counts.into_iter();
        let accesses = counts.next().unwrap_or_default();
        let bytes = counts.next().unwrap_or_default();
        cols.push(Column::new("accesses".into(), accesses));
        for (l, m) in levels.iter().zip(counts) {
            cols.push(Column::new(format!("misses_{l}").into(), m));
        }
        cols.push(Column::new("bytes".into(), bytes));
        let [ratio, used] = self.ratios;
        cols.push(Column::new("miss_ratio".into(), ratio));
        cols.push(Column::new("line_bytes_used".into(), used));
        cols.push(Column::new("reuse_p50".into(), p50));
        cols.push(Column::new("reuse_p90".into(), p90));
        cols.push(Column::new("pattern".into(), pat));
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

/// One side of a pair comparison.
type SideOf = fn(&PairComparison) -> &Option<PairSide>;

/// The pairs as a table: one row per pair comparison, each side's source,
/// accesses and misses (empty where the side is absent).
fn pairs_table(levels: &[String], pairs: &[PairComparison]) -> CmdResult<DataFrame> {
    let get = |f: &dyn Fn(&PairSide) -> u64, side: SideOf| {
        pairs
            .iter()
            .map(|p| side(p).as_ref().map(f))
            .collect::<Vec<Option<u64>>>()
    };
    let text = |f: &dyn Fn(&PairComparison) -> String| pairs.iter().map(f).collect::<Vec<String>>();
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
        for (i, l) in levels.iter().enumerate() {
            cols.push(Column::new(
                format!("misses_{l}_{tag}").into(),
                get(&|x| x.counts.misses[i], side),
            ));
        }
    }
    DataFrame::new(cols).context(|| "building the pair comparison table failed".to_string())
}
