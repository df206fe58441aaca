//! `compare_runs A B ?save?`: two saved runs side by side, per variable and
//! per (variable, line) pair. The alignment and the numbers live in the
//! locality stage ([`crate::filter::compare_runs`]), its text in the
//! shell's render module and the page in the figure stage
//! ([`crate::vis::compare_page`]); this handler loads the runs, prints, and
//! writes the tables and the page.
use std::path::{Path, PathBuf};

use super::cmd_runs::existing;
use super::error::{CmdResult, Context};
use super::handlers::{add, has_save, s};
use super::session::Session;
use super::{Registry, Value};
use crate::filter::{
    cache_stats, compare_runs as compare, Analysis, CacheReport, RunComparison, SelectionBatches,
    Side,
};
use crate::workdir::Run;

/// Registers `compare_runs` (holding the folder's lock).
pub fn register(r: &mut Registry<Session>) {
    add(r, "compare_runs", compare_runs);
}

/// One run loaded for the comparison.
struct Loaded {
    label: String,
    run: Run,
    analysis: Analysis,
    report: CacheReport,
}

/// Loads the saved run `run` and runs `cache_stats` on it under the
/// session's model. Cost: one pass over the run's accesses.
fn load(st: &Session, run: Run) -> CmdResult<Loaded> {
    let label = run.label();
    super::saved::hash_run(st.folder(), &run)?;
    let analysis = super::saved::load_saved(st.folder(), &run.analysis_dir())
        .context(|| format!("reading the run {label} failed"))?;
    if let Some(why) = analysis.summary.partial_reason() {
        println!("warning: run {label} is PARTIAL ({why}): its counts cover only part of the run.");
    }
    let opts = super::handlers::cache_options(st);
    let report = cache_stats(&analysis, st.mem(), &opts)?;
    Ok(Loaded {
        label: label.to_string(),
        run,
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
    let ra = load(st, da)?;
    let rb = load(st, db)?;
    let c = compare(&ra.report, &rb.report);
    let (la, lb) = (ra.label.as_str(), rb.label.as_str());
    print!("{}", super::render::comparison(la, lb, &c, &ra.report));
    let regions = [&ra, &rb].map(|r| r.analysis.summary.region_text());
    if ra.analysis.summary.region_asked() != rb.analysis.summary.region_asked() {
        let shown = |r: &Option<String>| r.clone().unwrap_or_else(|| "not recorded".into());
        println!(
            "note: the runs hold different regions ({la}: {}; {lb}: {}), so their counts are of \
             different code.",
            shown(&regions[0]),
            shown(&regions[1])
        );
    }
    if has_save(a) {
        save(st, [&ra, &rb], &c)?;
    }
    let levels = &c.levels;
    Ok(Value::List(
        c.vars
            .iter()
            .map(|v| {
                Value::Dict(vec![
                    ("variable".into(), s(v.variable.clone())),
                    ("a".into(), side_dict(v.a.as_ref(), levels)),
                    ("b".into(), side_dict(v.b.as_ref(), levels)),
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
    d.push((
        "compulsory".into(),
        Value::Int(x.counts.compulsory() as i64),
    ));
    d.push(("miss_ratio".into(), Value::Float(x.miss_ratio)));
    d.push(("line_bytes_used".into(), Value::Float(x.line_bytes_used)));
    for (k, v) in x.counts.class_columns(levels) {
        d.push((k, Value::Int(v as i64)));
    }
    let [p50, p90] = x.reuse_texts();
    d.push(("reuse_median".into(), s(p50)));
    d.push(("reuse_p90".into(), s(p90)));
    d.push(("pattern".into(), s(x.pattern.clone())));
    Value::Dict(d)
}

/// Writes the two tables and the page; records every file written.
fn save(st: &Session, runs: [&Loaded; 2], c: &RunComparison) -> CmdResult<()> {
    let (la, lb) = (runs[0].label.as_str(), runs[1].label.as_str());
    let dir = st.folder().visinfo_dir();
    let mut written = Vec::new();
    let states = [
        runs[0].analysis.summary.trace_state(),
        runs[1].analysis.summary.trace_state(),
    ];
    let states = [states[0].as_str(), states[1].as_str()];
    let mut df = c
        .var_table_marked(la, lb, states)
        .context(|| "building the comparison table failed".to_string())?;
    written.push(crate::filter::write_csv(
        &mut df,
        &dir.join(format!("compare_{la}_{lb}.csv")),
    )?);
    let mut df = c
        .pair_table_marked(states)
        .context(|| "building the pair comparison table failed".to_string())?;
    written.push(crate::filter::write_csv(
        &mut df,
        &dir.join(format!("compare_{la}_{lb}_pairs.csv")),
    )?);
    let (page, sources) = page(st, runs, c)?;
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
    c: &RunComparison,
) -> CmdResult<(crate::vis::ComparePage, Vec<PathBuf>)> {
    let figures = st.folder().figures_dir();
    let mut sources = Vec::new();
    let mut views = Vec::new();
    let sels = [
        crate::filter::select(&runs[0].analysis, st.mem())?,
        crate::filter::select(&runs[1].analysis, st.mem())?,
    ];
    let batches: Vec<_> = runs
        .iter()
        .zip(sels)
        .map(|(r, sel)| SelectionBatches::plain(&r.analysis, sel.within(st.memory_limit().0)))
        .collect();
    for (r, acc) in runs.iter().zip(&batches) {
        let (links, note, files) = source_pages(st, r, &figures)?;
        sources.extend(files);
        let program = r
            .run
            .info()
            .map(|i| {
                std::iter::once(i.program)
                    .chain(i.arguments)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        // The page names each run's region, as every page does.
        let program = match r.analysis.summary.region_text() {
            Some(region) => format!("{program}; region: {region}"),
            None => program,
        };
        views.push(crate::vis::RunView {
            label: r.label.clone(),
            program,
            report: &r.report,
            accesses: acc,
            source_pages: links,
            note,
            source: super::cmd_runs::run_source(st, &r.run),
            gaps: r
                .analysis
                .summary
                .region_starts
                .iter()
                .skip(1)
                .copied()
                .collect(),
        });
    }
    let names: Vec<String> = c.vars.iter().map(|v| v.variable.clone()).collect();
    let p = crate::vis::compare_page(&figures, &views[0], &views[1], &names, st.point_budget())?;
    Ok((p, sources))
}

/// Links, note and files of run `r`'s annotated source pages, written
/// into `figures/run_LABEL/` from the source files not edited since its
/// trace.
type SourcePages = (Vec<(String, String)>, Option<String>, Vec<PathBuf>);

fn source_pages(st: &Session, r: &Loaded, figures: &Path) -> CmdResult<SourcePages> {
    let sub = format!("run_{}", r.label);
    let traced = std::fs::metadata(r.run.trace_file())
        .and_then(|m| m.modified())
        .context(|| format!("cannot read the time of run {}'s trace", r.label))?;
    let (pages, edited, walk_note) =
        crate::vis::write_run_source_pages(&r.report, st.src_paths(), &figures.join(&sub), traced)?;
    if let Some(note) = walk_note {
        println!("note: {note}");
    }
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
