//! The pipeline's steps that do more than change the session's state:
//! tracing the loaded program with a progress line, and marking an earlier
//! analysis's outputs stale. [`Session`] keeps the state these read and
//! change (loading a saved analysis and judging it is `saved.rs`'s, which
//! the session calls); the work is the stages' (`trace::run_trace_into`,
//! `workdir`, `vis::write_index`).
use std::time::Duration;

use crate::trace;
use crate::workdir::{self, WorkFolder};

use super::error::{with_causes, CmdResult};
use super::progress::Progress;
use super::session::Session;

/// `run_gleipnir`: traces the loaded program, between its pins or, after
/// `set_region off`, the whole run. The trace is kept even when
/// the program crashes or is interrupted. It is written under a new name
/// and replaces the previous trace only when it is usable (see
/// [`trace::run_trace_into`]); otherwise the previous trace, and the
/// analysis made from it, stay current ([`Session::adopt_trace`]).
pub fn run_gleipnir(st: &mut Session) -> CmdResult<trace::TracedRun> {
    let exe = st.program_to_run(
        "run_gleipnir needs an executable: use load_exe PATH (or compile_exe SOURCE.c) first.",
    )?;
    let valgrind = trace::find_valgrind(st.valgrind())?;
    let mut req =
        trace::TraceRequest::accesses(valgrind, exe, st.args().to_vec(), st.folder().trace_file());
    apply_region(st.region(), &mut req)?;
    let run = trace_showing_progress(&req)?;
    st.adopt_trace(&run);
    Ok(run)
}

/// Asks `req` to trace `region` instead of the pins: the whole run, a
/// function's or lines' code (found in `req.exe`), or windows. Returns
/// the region's label for a region by code or windows, `None` for the
/// pins and the whole run.
pub fn apply_region(
    region: &super::state::Region,
    req: &mut trace::TraceRequest,
) -> CmdResult<Option<String>> {
    use super::state::Region;
    match region {
        Region::Pins => Ok(None),
        Region::Whole => {
            req.from_start = true;
            Ok(None)
        }
        Region::Window(w) => {
            req.window = Some(*w);
            Ok(Some(w.label()))
        }
        Region::Function { .. } | Region::Lines { .. } => {
            let code = code_region(region, &req.exe)?;
            let label = code.as_ref().map(|c| c.label.clone());
            req.region = code;
            Ok(label)
        }
    }
}

/// The code a function or lines region watches in `exe`, found in its
/// DWARF; `None` for the pins, the whole run and windows.
pub fn code_region(
    region: &super::state::Region,
    exe: &std::path::Path,
) -> CmdResult<Option<trace::CodeRegion>> {
    use super::state::Region;
    let found = match region {
        Region::Pins | Region::Whole | Region::Window(_) => return Ok(None),
        Region::Function { name, calls } => trace::function_region(exe, name, *calls),
        Region::Lines { file, first, last } => trace::lines_region(exe, file, *first, *last),
    };
    found.map(Some).map_err(|e| {
        format!(
            "{}; nothing was traced.",
            e.to_string().trim_end_matches('.')
        )
        .into()
    })
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

/// Rewrites `figures/index.html`, when there is one, after something its
/// pages were drawn from changed (a run saved or dropped, a heap profile
/// recorded again): each page is marked STALE exactly when one of its
/// sources no longer exists as it was. A failure is a warning.
pub fn refresh_index(folder: &WorkFolder) {
    let figures = folder.figures_dir();
    if figures.join(crate::vis::INDEX_FILE).is_file() {
        if let Err(e) = crate::vis::write_index(&figures) {
            println!("warning: {}", with_causes(&e));
        }
    }
}

/// After a new analysis replaced the previous one: marks the
/// figures drawn from an earlier analysis stale in `figures/index.html`,
/// and removes the data files of `visinfo/` that mapvis wrote from it
/// (those the manifest lists, unchanged since; see
/// [`workdir::clear_under`]), saying how many. Failures are warnings: the
/// analysis itself is saved.
pub fn mark_stale_outputs(folder: &WorkFolder) {
    let figures = folder.figures_dir();
    if figures.join(crate::vis::INDEX_FILE).is_file() {
        if let Err(e) = crate::vis::write_index(&figures) {
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
