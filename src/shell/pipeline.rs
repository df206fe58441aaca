//! The pipeline's steps that do more than change the session's state:
//! tracing the loaded program with a progress line, loading a saved
//! analysis once its files are verified, saying whether an analysis still
//! belongs to the current trace, and marking an earlier analysis's outputs
//! stale. [`Session`] keeps the state these read and change; the work is
//! the stages' (`trace::run_trace_into`, `filter::SavedAnalysis`,
//! `workdir`, `vis::write_index`).
use std::path::Path;
use std::time::Duration;

use crate::filter::{self, Analysis};
use crate::trace;
use crate::workdir::{self, Freshness, WorkFolder};

use super::error::{with_causes, CmdResult};
use super::progress::Progress;
use super::session::Session;
use super::text::path_line as shown;

/// `run_gleipnir`: traces the loaded program. The trace is kept even when
/// the program crashes or is interrupted. It is written under a new name
/// and replaces the previous trace only when it is usable (see
/// [`trace::run_trace_into`]); otherwise the previous trace, and the
/// analysis made from it, stay current ([`Session::adopt_trace`]).
pub fn run_gleipnir(st: &mut Session) -> CmdResult<trace::TracedRun> {
    let exe = st.program_to_run(
        "run_gleipnir needs an executable: use load_exe PATH (or compile_exe SOURCE.c) first.",
    )?;
    let valgrind = trace::find_valgrind(st.valgrind())?;
    let req =
        trace::TraceRequest::accesses(valgrind, exe, st.args().to_vec(), st.folder().trace_file());
    let run = trace_showing_progress(&req)?;
    st.adopt_trace(&run);
    Ok(run)
}

/// Runs `req`, showing after two seconds that the run is moving (time and
/// megabytes of trace). Cancelling is `run_trace_into`'s own: a Ctrl-C
/// that ended the program does not stop reading its trace.
fn trace_showing_progress(req: &trace::TraceRequest) -> CmdResult<trace::TracedRun> {
    let mut shown = Progress::after(Duration::from_secs(2));
    let mut progress = |bytes: u64| {
        let secs = shown.elapsed();
        shown.show(|| {
            format!(
                "[mapvis: {secs:.0} s, {:.1} MB of trace]",
                bytes as f64 / 1e6
            )
        });
    };
    let run = trace::run_trace_into(req, &mut progress);
    shown.finish();
    Ok(run?)
}

/// Loads the analysis saved in `dir` of `folder` after checking that its
/// files are the ones mapvis saved ([`workdir::verify_saved_analysis`]):
/// a swapped, edited or added file refuses it, naming the file. An
/// analysis the manifest does not list is loaded with a warning.
pub fn load_saved(folder: &WorkFolder, dir: &Path) -> CmdResult<Analysis> {
    if workdir::verify_saved_analysis(folder.root(), dir)? == workdir::Verified::NotRecorded {
        println!(
            "warning: the list of files mapvis saved (.mapvis/manifest.json) does not list the saved analysis in {}, so its files could not be checked; run memory_trace_analysis again to be sure of it.",
            shown(dir)
        );
    }
    Ok(filter::SavedAnalysis::at(dir).load()?)
}

/// What to say of an analysis judged `verdict` against the trace at
/// `current`: `Ok(None)` when it is current, `Ok(Some(warning))` when it
/// is shown with a warning, `Err` (saying what to run) when it must not be
/// shown, so that another run's results are never taken for this one's.
pub fn freshness_message(verdict: &Freshness, current: &Path) -> CmdResult<Option<String>> {
    match verdict {
        Freshness::Same => Ok(None),
        Freshness::Unknown => Ok(Some(format!(
            "the saved analysis does not say which trace it was made from (it was saved by an older mapvis); run memory_trace_analysis again to be sure it is of {}.",
            current.display()
        ))),
        Freshness::Changed { was, now } => Err(format!(
            "the analysis was made from the trace {}, but the current trace is {}: it is not shown, so that another run's results are never taken for this one's. Run memory_trace_analysis to analyse the current trace.",
            was.describe(),
            now.describe()
        )
        .into()),
        Freshness::Missing { was } => Err(format!(
            "the analysis was made from the trace {}, but the current trace {} does not exist: run run_gleipnir or load_trace FILE, then memory_trace_analysis.",
            was.describe(),
            current.display()
        )
        .into()),
        Freshness::Removed { was } => Ok(Some(format!(
            "the trace {} that this analysis was made from no longer exists; the results shown are of it as it was.",
            was.path.display()
        ))),
    }
}

/// After a new analysis (id `id`) replaced the previous one: marks the
/// figures drawn from an earlier analysis stale in `figures/index.html`,
/// and removes the data files of `visinfo/` that mapvis wrote from it
/// (those the manifest lists, unchanged since; see
/// [`workdir::clear_under`]), saying how many. Failures are warnings: the
/// analysis itself is saved.
pub fn mark_stale_outputs(folder: &WorkFolder, id: &str) {
    let figures = folder.figures_dir();
    if figures.join(crate::vis::INDEX_FILE).is_file() {
        if let Err(e) = crate::vis::write_index(&figures, id) {
            println!("warning: {}", with_causes(&e));
        }
    }
    match workdir::clear_under(folder.root(), &folder.visinfo_dir()) {
        Ok(c) if !c.removed.is_empty() => println!(
            "note: removed {} data file(s) of visinfo/ made from the previous analysis; figures drawn from it are marked STALE in figures/index.html.",
            c.removed.len()
        ),
        Ok(_) => {}
        Err(e) => println!("warning: {}", with_causes(&e)),
    }
}
