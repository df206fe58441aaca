//! Runs side by side: `save_run`, `runs`, `use_run`, `drop_run`,
//! `compare_runs` and `plot_runs`.
//!
//! A run is a trace and its analysis kept under a label in
//! `.mapvis/runs/LABEL/` (hard links, no copy), with `run.json` saying what
//! it is. Runs survive sessions and `clear_analysis` removes them with the
//! rest of mapvis's files. The alignment and the numbers of a comparison
//! live in the locality stage; these handlers choose the runs and print.
use std::path::{Path, PathBuf};

use super::error::{CmdResult, Context};
use super::handlers::{add, fmt_table, s};
use super::session::Session;
use super::text::counted;
use super::{Registry, Value};
use crate::filter::{
    cache_stats, metric_by_run, CacheReport, Metric, RunReport, RunValue, RunValues,
};
use crate::workdir::{Run, RunInfo};

/// Registers the run commands (each holding the folder's lock);
/// `compare_runs` registers in its own file, `cmd_compare.rs`.
pub fn register(r: &mut Registry<Session>) {
    add(r, "save_run", save_run);
    add(r, "runs", runs);
    add(r, "use_run", use_run);
    add(r, "drop_run", drop_run);
    add(r, "verify_analysis", verify_analysis);
    add(r, "plot_runs", plot_runs);
    r.set_run_source(|st| {
        st.folder_to_read()
            .saved_runs()
            .iter()
            .map(|r| r.label().to_string())
            .collect()
    });
}

/// The run `label` of the working folder, saved or not, or a message
/// saying what a label may be.
fn checked(st: &Session, label: &str) -> CmdResult<Run> {
    st.folder().run(label).ok_or_else(|| {
        format!(
            "\"{}\" cannot label a run: use 1 to 64 letters, digits, '_', '-' or '.', not starting with '.' or '-'.",
            super::text::terminal_safe(label).into_owned()
        )
        .into()
    })
}

/// The saved run `label`, or a message listing the runs there are.
pub(super) fn existing(st: &Session, label: &str) -> CmdResult<Run> {
    let run = checked(st, label)?;
    if run.is_saved() {
        return Ok(run);
    }
    let have = labels(st);
    Err(if have.is_empty() {
        format!("there is no run \"{label}\": keep one with save_run LABEL after memory_trace_analysis.")
    } else {
        format!(
            "there is no run \"{label}\"; the runs are: {}.",
            have.join(", ")
        )
    }
    .into())
}

/// The saved runs, in the order they were saved (a sweep's baseline
/// first; see [`crate::workdir::WorkFolder::saved_runs`]).
fn saved_runs(st: &Session) -> Vec<Run> {
    st.folder().saved_runs()
}

/// The labels of the saved runs, in the order they were saved.
fn labels(st: &Session) -> Vec<String> {
    saved_runs(st)
        .iter()
        .map(|r| r.label().to_string())
        .collect()
}

/// `save_run LABEL`: keeps the current trace and its analysis as LABEL.
/// The run is built under a temporary name (`.LABEL.partial`), listed in
/// the manifest, and renamed into place last: a kill or a full disk
/// leaves no run, or a whole one, never a folder that blocks the label.
fn save_run(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let run = checked(st, &a[0])?;
    let label = run.label().to_string();
    if run.is_saved() {
        return Err(format!(
            "there is already a run \"{label}\": drop_run {label} first, or choose another label."
        )
        .into());
    }
    if run.dir().exists() {
        return Err(format!(
            "{} is a half-made run (a save_run that did not finish left it, without its run.json): drop_run {label} removes it.",
            run.dir().display()
        )
        .into());
    }
    let trace = st.trace_path()?;
    let analysis = st.analysis()?;
    let summary = analysis.summary.clone();
    let from = st.analysis_dir();
    let staging = st
        .folder()
        .staging_run(&label)
        .ok_or_else(|| format!("\"{label}\" cannot label a run."))?;
    let mut gone = crate::workdir::Cleared::default();
    crate::workdir::remove_half_made(st.work_dir(), staging.dir(), &mut gone);
    let kept = keep_staged(st, &from, &trace, (&staging, &run), &summary);
    let written = match kept {
        Ok(w) => w,
        Err(e) => {
            crate::workdir::remove_half_made(st.work_dir(), staging.dir(), &mut gone);
            return Err(e);
        }
    };
    if let Err(e) = crate::workdir::install_run(st.work_dir(), &staging, &run, &written) {
        crate::workdir::remove_half_made(st.work_dir(), staging.dir(), &mut gone);
        return Err(e.into());
    }
    super::pipeline::refresh_index(st.folder());
    let partial = summary.partial_reason().is_some();
    println!(
        "kept run {label}: {} accesses of {}{}",
        summary.accesses,
        super::text::terminal_safe(&summary.command.join(" ")),
        if partial { " (partial)" } else { "" }
    );
    Ok(s(label))
}

/// Builds the run in `staging`: the analysis in `from` (hard links), the
/// trace and `run.json`. Returns the files written there.
fn keep_staged(
    st: &Session,
    from: &Path,
    trace: &Path,
    (staging, run): (&Run, &Run),
    summary: &crate::filter::TraceSummary,
) -> CmdResult<Vec<PathBuf>> {
    let label = staging.label();
    let mut written = crate::filter::SavedAnalysis::at(from)
        .keep_as_run(trace, staging, run)
        .context(|| format!("keeping the run \"{label}\" failed"))?;
    let saved = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let info = RunInfo {
        version: crate::workdir::RUN_INFO_VERSION,
        label: label.to_string(),
        program: summary.command.first().cloned().unwrap_or_default(),
        arguments: summary.command.iter().skip(1).cloned().collect(),
        saved,
        sequence: st.folder().next_run_sequence(),
    };
    let json = staging
        .write_info(&info)
        .context(|| format!("cannot write {}", staging.info_file().display()))?;
    written.push(json);
    Ok(written)
}

/// `runs`: lists the saved runs, then any half-made one; returns a list
/// of dicts. The accesses and whether a run is complete come from the
/// run's own analysis (see [`run_summary`]).
fn runs(st: &mut Session, _: &[String]) -> CmdResult<Value> {
    let all = saved_runs(st);
    let half = st.folder().half_made_runs();
    if all.is_empty() && half.is_empty() {
        println!("no saved runs: keep one with save_run LABEL after memory_trace_analysis.");
        return Ok(Value::List(vec![]));
    }
    let current = st.current_run().map(String::from);
    let mut rows = Vec::new();
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for run in &all {
        let l = run.label();
        let Some(i) = run.info() else {
            continue;
        };
        let mark = if current.as_deref() == Some(l) {
            " *"
        } else {
            ""
        };
        let summary = run_summary(st, run);
        let region = summary
            .as_ref()
            .ok()
            .and_then(|sm| sm.region_text())
            .unwrap_or_else(|| "?".into());
        let (accesses, trace, complete) = match &summary {
            Ok(sm) => (
                sm.accesses.to_string(),
                match sm.partial_reason() {
                    None => "complete".to_string(),
                    Some(_) => "partial".to_string(),
                },
                sm.partial_reason().is_none(),
            ),
            Err(_) => ("?".to_string(), "unreadable".to_string(), false),
        };
        if let Err(why) = &summary {
            problems.push(format!("run {l}: {why}"));
        }
        rows.push(vec![
            format!("{l}{mark}"),
            super::text::terminal_safe(&i.program).into_owned(),
            super::text::terminal_safe(&i.arguments.join(" ")).into_owned(),
            super::text::utc_date(i.saved),
            super::text::terminal_safe(&region).into_owned(),
            accesses,
            trace.clone(),
        ]);
        let mut dict = vec![
            ("label".into(), s(l.to_string())),
            ("program".into(), s(i.program.clone())),
            (
                "arguments".into(),
                Value::List(i.arguments.iter().map(|a| s(a.clone())).collect()),
            ),
            ("date".into(), s(super::text::utc_date(i.saved))),
        ];
        if let Ok(sm) = &summary {
            dict.push(("accesses".into(), Value::Int(sm.accesses as i64)));
        }
        dict.push(("region".into(), s(region)));
        dict.push(("complete".into(), Value::Int(complete as i64)));
        dict.push(("trace".into(), s(trace)));
        out.push(Value::Dict(dict));
    }
    for (dir, label) in &half {
        let shown = super::text::terminal_safe(&dir.display().to_string()).into_owned();
        problems.push(match label {
            Some(l) => format!("{shown} is a half-made run (a save_run that did not finish left it, without its run.json): drop_run {l} or clear_analysis removes it."),
            None => format!("{shown} is a run that was being kept when its save_run stopped: the next save_run or clear_analysis removes it."),
        });
        out.push(Value::Dict(vec![
            ("label".into(), s(label.clone().unwrap_or_default())),
            ("folder".into(), s(dir.display().to_string())),
            ("complete".into(), Value::Int(0)),
            ("trace".into(), s("half-made")),
        ]));
    }
    print!(
        "{}",
        fmt_table(
            &[
                "run",
                "program",
                "arguments",
                "saved (UTC)",
                "region",
                "accesses",
                "trace"
            ],
            &rows
        )
    );
    if current.is_some() {
        println!("* the current run (use_run); a new trace or analysis leaves it.");
    }
    for p in &problems {
        println!("note: {p}");
    }
    Ok(Value::List(out))
}

/// `verify_analysis ?RUN?`: hashes every file of the run (or of the
/// folder's saved analysis) against the manifest; prints a line per file
/// and returns a dict of the lists `ok`, `changed`, `missing`, `added`.
fn verify_analysis(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let dir = match a.first() {
        Some(label) => existing(st, label)?.dir().to_path_buf(),
        None => st.folder().analysis_dir(),
    };
    let c = crate::workdir::check_files(st.work_dir(), &dir, true)?;
    if c.ok.is_empty() && c.changed.is_empty() && c.missing.is_empty() {
        println!(
            "the manifest lists no file of {}: nothing to check (saved by an older mapvis, or the manifest was removed).",
            dir.display()
        );
    }
    let show = |p: &PathBuf| super::text::terminal_safe(&p.display().to_string()).into_owned();
    for p in &c.ok {
        println!("ok       {}", show(p));
    }
    for (p, why) in &c.changed {
        println!("changed  {} ({why})", show(p));
    }
    for p in &c.missing {
        println!("missing  {}", show(p));
    }
    for p in &c.added {
        println!("added    {} (not written by mapvis)", show(p));
    }
    let list = |v: Vec<String>| Value::List(v.into_iter().map(s).collect());
    let text = |p: &PathBuf| p.display().to_string();
    Ok(Value::Dict(vec![
        ("ok".into(), list(c.ok.iter().map(text).collect())),
        (
            "changed".into(),
            list(c.changed.iter().map(|(p, _)| text(p)).collect()),
        ),
        ("missing".into(), list(c.missing.iter().map(text).collect())),
        ("added".into(), list(c.added.iter().map(text).collect())),
    ]))
}

/// `use_run LABEL`: makes the run current.
fn use_run(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let run = existing(st, &a[0])?;
    super::saved::hash_run(st.folder(), &run)?;
    st.use_run(run);
    st.analysis()?;
    println!(
        "run {} is current: every command now reads its trace and analysis.",
        a[0]
    );
    Ok(s(a[0].clone()))
}

/// `drop_run LABEL`: removes the run's files (those mapvis wrote there),
/// or the whole of a half-made run (see
/// [`crate::workdir::WorkFolder::half_made_runs`]).
fn drop_run(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let maybe = checked(st, &a[0])?;
    if !maybe.is_saved() && maybe.dir().is_dir() {
        let mut out = crate::workdir::Cleared::default();
        let n = crate::workdir::remove_half_made(st.work_dir(), maybe.dir(), &mut out);
        for (path, why) in &out.kept {
            println!("kept {}: {why}", path.display());
        }
        println!(
            "removed the half-made run {} ({})",
            a[0],
            counted(n as u64, "file")
        );
        return Ok(Value::Int(n as i64));
    }
    let run = existing(st, &a[0])?;
    if st.current_run() == Some(a[0].as_str()) {
        st.leave_run(None);
        println!(
            "note: run {} was current; the folder's own trace is current again.",
            a[0]
        );
    }
    let cleared = crate::workdir::clear_under(st.work_dir(), run.dir())
        .context(|| format!("removing the run {} failed", a[0]))?;
    for (path, why) in &cleared.kept {
        println!("kept {}: {why}", path.display());
    }
    let removed = cleared.removed.len() as u64;
    super::pipeline::refresh_index(st.folder());
    println!("dropped run {} ({})", a[0], counted(removed, "file"));
    Ok(Value::Int(removed as i64))
}

/// The cache report of the saved run `run` under the session's model,
/// and whether its trace is complete (from the run's own summary, never
/// from `run.json`).
fn run_report(st: &Session, run: &Run) -> CmdResult<(CacheReport, bool)> {
    let label = run.label();
    let a = super::saved::load_saved(st.folder(), &run.analysis_dir())
        .context(|| format!("reading the run {label} failed"))?;
    let partial = a.summary.partial_reason();
    if let Some(why) = &partial {
        println!("warning: run {label} is PARTIAL ({why}): its counts cover only part of the run.");
    }
    let opts = super::handlers::cache_options(st);
    Ok((cache_stats(&a, st.mem(), &opts)?, partial.is_none()))
}

/// What a page drawn from the saved run `run` records it was drawn from
/// (see [`crate::vis::analysis_source`]): its analysis' id and folder.
pub(super) fn run_source(st: &Session, run: &Run) -> String {
    let dir = run.analysis_dir();
    let id = crate::filter::SavedAnalysis::at(&dir)
        .id()
        .unwrap_or_default();
    let rel = dir.strip_prefix(st.work_dir()).unwrap_or(&dir);
    crate::vis::analysis_source(&id, rel)
}

/// What a saved run's own analysis says of its trace (accesses, whether
/// it is complete and why not): `analysis/summary.json`, after the run's
/// files are checked against the manifest, so an edited `run.json` or
/// summary cannot pass a partial run as complete. `Err` says why it
/// cannot be told.
fn run_summary(st: &Session, run: &Run) -> Result<crate::filter::TraceSummary, String> {
    let dir = run.analysis_dir();
    crate::workdir::verify_saved_analysis(st.work_dir(), &dir).map_err(|e| e.to_string())?;
    crate::filter::SavedAnalysis::at(&dir)
        .summary()
        .map_err(|e| e.to_string())
}

/// `plot_runs METRIC ?RUN ...?`, the runs optionally followed by `-vars
/// VARIABLE ...` to keep only those variables: METRIC (a key of
/// cache_stats' per-variable dicts: accesses, misses_L1 …, compulsory,
/// miss_ratio, line_bytes_used) of each variable in each saved run, under
/// the current model; prints it, writes `figures/runs_METRIC.html` and
/// `visinfo/runs_METRIC.csv`, and returns a list of dicts with keys run,
/// variable, value and complete. Cost: one cache simulation per run.
fn plot_runs(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let levels: Vec<String> = st
        .locality()
        .cache
        .levels
        .iter()
        .map(|l| l.name())
        .collect();
    let metric = Metric::parse(&a[0], &levels)?;
    let (run_args, vars) = match a[1..].iter().position(|x| x == "-vars") {
        Some(k) => (&a[1..1 + k], &a[2 + k..]),
        None => (&a[1..], &a[a.len()..]),
    };
    let labels = if run_args.is_empty() {
        labels(st)
    } else {
        run_args.to_vec()
    };
    if labels.is_empty() {
        return Err("there are no saved runs to plot: keep some with save_run LABEL after memory_trace_analysis.".into());
    }
    let runs = run_reports(st, &labels)?;
    let values = metric_by_run(&runs, metric, vars);
    if let Some(missing) = vars
        .iter()
        .find(|v| !values.iter().any(|x| &x.variable == *v))
    {
        return Err(format!(
            "no run has a variable \"{}\": the variables are those cache_stats lists.",
            super::text::terminal_safe(missing)
        )
        .into());
    }
    print_sweep(&a[0], &runs, &values, metric);
    let written = save_sweep(st, &a[0], &runs, &values)?;
    st.record_written(&written);
    Ok(sweep_dicts(&values, metric))
}

/// Each run's cache report under the session's model, with whether its
/// run.json says it is complete. Cost: one cache simulation per run.
fn run_reports(st: &Session, labels: &[String]) -> CmdResult<Vec<RunReport>> {
    let mut runs = Vec::new();
    for l in labels {
        let run = existing(st, l)?;
        let (report, complete) = run_report(st, &run)?;
        runs.push(RunReport {
            label: l.clone(),
            complete,
            report,
        });
    }
    Ok(runs)
}

/// plot_runs' value: a dict per run and variable (`run`, `variable`,
/// `value`, an integer for counts, and `complete`).
fn sweep_dicts(values: &[RunValue], metric: Metric) -> Value {
    Value::List(
        values
            .iter()
            .map(|v| {
                let value = if metric.is_count() {
                    Value::Int(v.value as i64)
                } else {
                    Value::Float(v.value)
                };
                Value::Dict(vec![
                    ("run".into(), s(v.run.clone())),
                    ("variable".into(), s(v.variable.clone())),
                    ("value".into(), value),
                    ("complete".into(), Value::Int(v.complete as i64)),
                ])
            })
            .collect(),
    )
}

/// The metric as a table of variables by runs, partial runs marked.
fn print_sweep(name: &str, runs: &[RunReport], values: &[RunValue], metric: Metric) {
    let mut head = vec!["variable".to_string()];
    head.extend(runs.iter().map(|r| {
        if r.complete {
            r.label.clone()
        } else {
            format!("{} (partial)", r.label)
        }
    }));
    let mut vars: Vec<&str> = Vec::new();
    for v in values {
        if !vars.contains(&v.variable.as_str()) {
            vars.push(&v.variable);
        }
    }
    let rows: Vec<Vec<String>> = vars
        .iter()
        .map(|var| {
            let mut row = vec![super::text::terminal_safe(var).into_owned()];
            row.extend(runs.iter().map(|r| {
                values
                    .iter()
                    .find(|v| v.run == r.label && v.variable == *var)
                    .map_or("-".to_string(), |v| value_text(v.value, metric))
            }));
            row
        })
        .collect();
    println!(
        "plot_runs {name}: each variable in each run, under the current model and memory kinds:"
    );
    let head_refs: Vec<&str> = head.iter().map(String::as_str).collect();
    print!("{}", fmt_table(&head_refs, &rows));
}

fn value_text(v: f64, metric: Metric) -> String {
    if metric.is_count() {
        format!("{}", v as u64)
    } else {
        format!("{v:.4}")
    }
}

/// `visinfo/runs_METRIC.csv` and `figures/runs_METRIC.html`; returns the
/// files written (the page's plotly.js and the folder's index too).
fn save_sweep(
    st: &Session,
    name: &str,
    runs: &[RunReport],
    values: &RunValues,
) -> CmdResult<Vec<PathBuf>> {
    use crate::vis::{runs_figure, RunLabel};
    let mut df = values
        .table()
        .context(|| "building the table of runs failed".to_string())?;
    let csv = crate::filter::write_csv(
        &mut df,
        &st.folder().visinfo_dir().join(format!("runs_{name}.csv")),
    )?;
    let labels: Vec<RunLabel> = runs
        .iter()
        .map(|r| RunLabel {
            label: r.label.clone(),
            complete: r.complete,
            source: st
                .folder()
                .run(&r.label)
                .map(|run| run_source(st, &run))
                .unwrap_or_default(),
        })
        .collect();
    let series = series_of(runs, values);
    let model = st.locality().cache.levels_text();
    let intro = vec![format!(
        "{name} of each variable in each saved run, from each run's own cache_stats under one model ({model}), set_mem_alloc {}.",
        st.mem().code()
    )];
    let page = runs_figure(&st.folder().figures_dir(), name, &labels, &series, &intro)?;
    println!("wrote {}, {}", csv.display(), page.display());
    let mut out = vec![csv];
    out.extend(
        crate::vis::FigureReport {
            html: page,
            ..Default::default()
        }
        .files(),
    );
    Ok(out)
}

/// The values as one series per variable, in order of first appearance,
/// with a value per run (`None` where the variable is absent).
fn series_of(runs: &[RunReport], values: &[RunValue]) -> Vec<crate::vis::RunSeries> {
    let mut series: Vec<crate::vis::RunSeries> = Vec::new();
    for v in values {
        let k = match series.iter().position(|s| s.variable == v.variable) {
            Some(k) => k,
            None => {
                series.push(crate::vis::RunSeries {
                    variable: v.variable.clone(),
                    values: vec![None; runs.len()],
                });
                series.len() - 1
            }
        };
        if let Some(i) = runs.iter().position(|r| r.label == v.run) {
            series[k].values[i] = Some(v.value);
        }
    }
    series
}
