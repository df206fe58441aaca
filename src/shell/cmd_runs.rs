//! Runs side by side: `save_run`, `runs`, `use_run`, `drop_run`,
//! `compare_runs` and `plot_runs`.
//!
//! A run is a trace and its analysis kept under a label in
//! `.mapvis/runs/LABEL/` (hard links, no copy), with `run.json` saying what
//! it is. Runs survive sessions and `clear_analysis` removes them with the
//! rest of mapvis's files. The alignment and the numbers of a comparison
//! live in the locality stage; these handlers choose the runs and print.
use std::path::PathBuf;

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
fn save_run(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let run = checked(st, &a[0])?;
    let label = run.label().to_string();
    if run.dir().exists() {
        return Err(format!(
            "there is already a run \"{label}\": drop_run {label} first, or choose another label."
        )
        .into());
    }
    let trace = st.trace_path()?;
    let analysis = st.analysis()?;
    let summary = analysis.summary.clone();
    let from = st.analysis_dir();
    let mut written = crate::filter::SavedAnalysis::at(&from)
        .keep_as_run(&trace, &run)
        .context(|| format!("keeping the run \"{label}\" failed"))?;
    let saved = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let info = RunInfo {
        label: label.clone(),
        program: summary.command.first().cloned().unwrap_or_default(),
        arguments: summary.command.iter().skip(1).cloned().collect(),
        saved,
        sequence: st.folder().next_run_sequence(),
        accesses: summary.accesses,
        complete: summary.partial_reason().is_none(),
    };
    let json = run
        .write_info(&info)
        .context(|| format!("cannot write {}", run.info_file().display()))?;
    written.push(json);
    st.record_written(&written);
    println!(
        "kept run {label}: {} accesses of {}{}",
        info.accesses,
        super::text::terminal_safe(&summary.command.join(" ")),
        if info.complete { "" } else { " (partial)" }
    );
    Ok(s(label))
}

/// `runs`: lists the saved runs; returns a list of dicts.
fn runs(st: &mut Session, _: &[String]) -> CmdResult<Value> {
    let all = saved_runs(st);
    if all.is_empty() {
        println!("no saved runs: keep one with save_run LABEL after memory_trace_analysis.");
        return Ok(Value::List(vec![]));
    }
    let current = st.current_run().map(String::from);
    let mut rows = Vec::new();
    let mut out = Vec::new();
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
        rows.push(vec![
            format!("{l}{mark}"),
            super::text::terminal_safe(&i.program).into_owned(),
            super::text::terminal_safe(&i.arguments.join(" ")).into_owned(),
            super::text::utc_date(i.saved),
            i.accesses.to_string(),
            if i.complete { "complete" } else { "partial" }.to_string(),
        ]);
        out.push(Value::Dict(vec![
            ("label".into(), s(l.to_string())),
            ("program".into(), s(i.program.clone())),
            (
                "arguments".into(),
                Value::List(i.arguments.iter().map(|a| s(a.clone())).collect()),
            ),
            ("date".into(), s(super::text::utc_date(i.saved))),
            ("accesses".into(), Value::Int(i.accesses as i64)),
            ("complete".into(), Value::Int(i.complete as i64)),
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
                "accesses",
                "trace"
            ],
            &rows
        )
    );
    if current.is_some() {
        println!("* the current run (use_run); a new trace or analysis leaves it.");
    }
    Ok(Value::List(out))
}

/// `use_run LABEL`: makes the run current.
fn use_run(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let run = existing(st, &a[0])?;
    st.use_run(run);
    st.analysis()?;
    println!(
        "run {} is current: every command now reads its trace and analysis.",
        a[0]
    );
    Ok(s(a[0].clone()))
}

/// `drop_run LABEL`: removes the run's files (those mapvis wrote there).
fn drop_run(st: &mut Session, a: &[String]) -> CmdResult<Value> {
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
    println!("dropped run {} ({})", a[0], counted(removed, "file"));
    Ok(Value::Int(removed as i64))
}

/// The cache report of the saved run `run` under the session's model.
fn run_report(st: &Session, run: &Run) -> CmdResult<CacheReport> {
    let label = run.label();
    let a = super::saved::load_saved(st.folder(), &run.analysis_dir())
        .context(|| format!("reading the run {label} failed"))?;
    if let Some(why) = a.summary.partial_reason() {
        println!("warning: run {label} is PARTIAL ({why}): its counts cover only part of the run.");
    }
    let opts = super::handlers::cache_options(st);
    Ok(cache_stats(&a, st.mem(), &opts)?)
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
        let report = run_report(st, &run)?;
        runs.push(RunReport {
            label: l.clone(),
            complete: run.info().is_none_or(|i| i.complete),
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
