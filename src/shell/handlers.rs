//! What the command groups share: registering a handler under the
//! folder's lock, the options and report of a figure, tables as text, the
//! colours and pattern labels a figure is annotated with, and notes every
//! group may print.
use std::path::Path;

use super::error::{CmdResult, Context};
use super::session::Session;
use super::{Registry, Value};
use crate::filter::{self, ColourMode};
use crate::vis;

/// A Tcl string.
pub(super) fn s(v: impl Into<String>) -> Value {
    Value::Str(v.into())
}

/// A path as a Tcl string.
pub(super) fn path_value(p: &Path) -> Value {
    s(p.display().to_string())
}

/// Whether the arguments hold the word `save`.
pub(super) fn has_save(args: &[String]) -> bool {
    args.iter().any(|a| a == "save")
}

/// Registers `f` for `name`, first letting the session follow a `cd`.
/// The handler runs holding the working folder's lock, so another mapvis
/// session in the same folder waits for it instead of interleaving writes,
/// and only when none of the folders it may write into is a symbolic link
/// out of the folder (except the [`REMOVE_ONLY`] commands).
pub(super) fn add<F>(r: &mut Registry<Session>, name: &str, f: F)
where
    F: Fn(&mut Session, &[String]) -> CmdResult<Value> + 'static,
{
    let removes_only = REMOVE_ONLY.contains(&name);
    r.add(name, move |st: &mut Session, a: &[String]| {
        st.follow_cwd();
        if !removes_only {
            crate::workdir::refuse_linked_folders(st.work_dir())?;
        }
        st.lock_folder()?;
        let result = f(st, a);
        st.unlock_folder();
        result
    });
}

/// Commands that write nothing in figures/, visinfo/ or a saved analysis
/// and remove files there only never through a symbolic link: they run
/// even when one of those folders is a link (see
/// [`crate::workdir::refuse_linked_folders`]), so that a folder can be
/// cleaned up.
const REMOVE_ONLY: &[&str] = &["clear_analysis"];

/// Said wherever thread counts are shown: what the thread numbers mean.
pub(super) const THREADS_NOTE: &str = "threads are numbered 1 (main), 2, 3, ... in the order the program created them, and a thread that starts after another has ended has a number of its own. Valgrind runs one thread at a time (it serialises them), so the order of accesses of different threads is Valgrind's schedule, not a parallel run's.";

pub(super) fn fmt_table(headers: &[&str], rows: &[Vec<String>]) -> String {
    super::text::table(headers, rows)
}

pub(super) fn figure_options(st: &Session, save: bool) -> vis::FigureOptions {
    vis::FigureOptions {
        save,
        point_budget: st.point_budget(),
        matrix_orientation: st.matrix_orientation(),
        provenance: provenance(st),
        analysis_id: source_token(st),
        gaps: st
            .loaded_analysis()
            .map(|a| a.summary.region_starts.iter().skip(1).copied().collect())
            .unwrap_or_default(),
        ..vis::FigureOptions::writing_to(st.folder().figures_dir(), st.folder().visinfo_dir())
    }
}

/// What a figure drawn now is drawn from, for the folder's index (see
/// [`crate::vis::analysis_source`]): the loaded analysis and the folder
/// it is saved in (the folder's own, or the current run's), so that the
/// page is STALE exactly when that analysis no longer is there.
pub(super) fn source_token(st: &Session) -> String {
    let Some(a) = st.loaded_analysis() else {
        return String::new();
    };
    let dir = st.analysis_dir();
    let rel = dir.strip_prefix(st.work_dir()).unwrap_or(&dir);
    vis::analysis_source(&a.summary.analysis_id, rel)
}

/// `run naive: t.mvt of ./prog 10, set_mem_alloc H`: what a figure was
/// drawn from, with the saved run it shows and, first, the word
/// `PARTIAL` and its reason when the analysis covers only part of the run
/// (pages and the index show it; see `write_page` in `src/vis/page/html.rs`).
fn provenance(st: &Session) -> String {
    let trace = st
        .trace_file()
        .map_or("?".to_string(), |p| p.display().to_string());
    let a = st.loaded_analysis();
    let command = a.map(|a| a.summary.command.join(" ")).unwrap_or_default();
    let partial = a
        .and_then(|a| a.summary.partial_reason())
        .map(|r| format!("PARTIAL analysis ({r}): "))
        .unwrap_or_default();
    let run = st
        .current_run()
        .map(|r| format!("run {r}: "))
        .unwrap_or_default();
    let region = a
        .and_then(|a| a.summary.region_text())
        .map(|r| format!(", region: {r}"))
        .unwrap_or_default();
    format!(
        "{partial}{run}{trace} of {command}, set_mem_alloc {}{region}",
        st.mem().code()
    )
}

/// The line every report of a partial analysis starts with, naming why it
/// is partial, or `None` for a whole one.
pub(super) fn partial_warning(a: &filter::Analysis) -> Option<String> {
    a.summary.partial_reason().map(|r| {
        format!(
            "warning: this analysis is PARTIAL ({r}): its counts cover only the accesses up to \
             that point. Trace and analyse again for the whole run."
        )
    })
}

pub(super) fn report_figure(st: &Session, r: &vis::FigureReport) -> Value {
    st.record_written(&r.files());
    for w in &r.warnings {
        println!("warning: {}", super::text::terminal_safe(w));
    }
    if let Some(agg) = &r.aggregated {
        println!("note: {agg}");
    }
    println!("wrote {} ({} points)", r.html.display(), r.points);
    for f in &r.data_csv {
        println!("wrote {}", f.display());
    }
    if st.open_browser() {
        if let Err(e) = std::process::Command::new("xdg-open").arg(&r.html).spawn() {
            println!(
                "warning: could not open a browser with xdg-open ({e}); open {} by hand.",
                r.html.display()
            );
        }
    }
    path_value(&r.html)
}

/// The accesses of `sel` for a figure, read from the access list at each
/// of the figure's passes, with the locality stage's colour classes
/// (`set_figure_colour`) computed as they stream past; the class names and
/// the pattern labels of every (variable, line) pair go into `opts`.
pub(super) fn annotate<'a>(
    st: &Session,
    a: &'a filter::Analysis,
    sel: filter::Selection,
    opts: &mut crate::vis::FigureOptions,
) -> CmdResult<filter::SelectionBatches<'a>> {
    use crate::filter::AccessBatches;
    let sel = sel.within(st.memory_limit().0);
    let mode = st.locality().figure_colour;
    let src = filter::selection_batches(a, sel, mode, &st.locality().cache)
        .context(|| "computing the figure's colours failed".to_string())?;
    if mode != ColourMode::Default {
        println!(
            "colour: {} (set_figure_colour {})",
            mode_words(mode),
            mode.code()
        );
    }
    opts.annotations.classes = src.classes().cloned();
    opts.annotations.patterns = Some(
        a.pattern_table()
            .context(|| "labelling the access patterns failed".to_string())?,
    );
    Ok(src)
}

fn mode_words(mode: ColourMode) -> &'static str {
    match mode {
        ColourMode::Default => "time and variable",
        ColourMode::Hit => {
            "cache level that served each access (set_cache model, cold at the start of the region)"
        }
        ColourMode::Reuse => "reuse distance in distinct cache lines",
        ColourMode::Miss(_) => {
            "why each access missed that level (3C: conflict, capacity, compulsory)"
        }
    }
}

/// What `cache_stats`, `compare_runs` and `what_if` simulate: the session's
/// cache model, reuse sampling and heap grouping.
pub(super) fn cache_options(st: &Session) -> filter::CacheOptions {
    filter::CacheOptions {
        model: st.locality().cache.clone(),
        sampling: st.locality().sampling.and_then(filter::Sampling::new),
        auto_above: st.locality().auto_above,
        grouping: st.grouping(),
    }
}
