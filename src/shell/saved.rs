//! A saved analysis as the session takes it up: loaded once its files are
//! verified against the manifest, and what to say when it may no longer
//! belong to the current trace. Below the session, which calls it.
use std::path::Path;

use crate::filter::{self, Analysis};
use crate::workdir::{self, Freshness, WorkFolder};

use super::error::CmdResult;
use super::text::path_line as shown;

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

/// Runs totalling less than this are hashed whole by `use_run` and
/// `compare_runs` (see [`hash_run`]); larger ones keep the size-and-time
/// check, which reads nothing.
pub const HASH_RUNS_UNDER: u64 = 256 << 20;

/// Refuses the saved run `run` when any of its files (trace, analysis,
/// `run.json`) is not the one mapvis wrote: when they total under
/// [`HASH_RUNS_UNDER`], every file is hashed, so an edit that kept a
/// file's size and time is found too. Cost: reading the run once.
pub fn hash_run(folder: &WorkFolder, run: &workdir::Run) -> CmdResult<()> {
    if workdir::files_size(run.dir()) >= HASH_RUNS_UNDER {
        return Ok(());
    }
    let c = workdir::check_files(folder.root(), run.dir(), true)?;
    let first = c
        .changed
        .first()
        .map(|(p, why)| format!("{} has changed since mapvis saved it ({why})", p.display()))
        .or_else(|| {
            c.missing
                .first()
                .map(|p| format!("{} is missing", p.display()))
        })
        .or_else(|| {
            c.added
                .first()
                .map(|p| format!("{} was not saved by mapvis", p.display()))
        });
    match first {
        None => Ok(()),
        Some(why) => Err(format!(
            "the run {} is not the one mapvis saved: {why}. It is not used, so that counts from different files are never mixed: verify_analysis {} lists every file; save the run again from a new analysis.",
            run.label(),
            run.label()
        )
        .into()),
    }
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
