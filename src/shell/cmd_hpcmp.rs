//! `export_hpcmp FILE ?SCOPE?` (SCOPE `whole` or `pins`): traces the
//! loaded program with thread and mutex events and writes HPCMP's JSON.
//!
//! The trace goes to `.mapvis/hpcmp.mvt`, beside the current trace, which
//! stays current with its analysis. The work is in
//! [`crate::trace::sync_request`] (with [`crate::trace::SyncScope`]) and
//! [`crate::filter::export_hpcmp`] (the export).
use std::path::{Path, PathBuf};

use super::error::CmdResult;
use super::session::Session;
use super::state::Region;
use super::{Registry, Value};
use crate::trace::{
    check_trace, default_sync_scope, find_valgrind, run_trace, sync_request, SyncScope,
};

/// Binds `export_hpcmp` (holding the folder's lock, see
/// the handlers' `add`).
pub fn register(r: &mut Registry<Session>) {
    super::handlers::add(r, "export_hpcmp", export_hpcmp);
}

/// `export_hpcmp FILE ?SCOPE?`: traces the loaded program with its thread
/// and mutex events and writes HPCMP's JSON, SCOPE `whole` or `pins`
/// (without SCOPE, set_region's: a function or lines are traced as such);
/// returns a dict with the `file` written and the `scope` used.
fn export_hpcmp(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let (file, scope) = (&a[0], a.get(1).map(String::as_str));
    st.follow_cwd();
    let exe = st.program_to_run(
        "export_hpcmp traces the loaded program: load_exe PATH (or compile_exe SOURCE.c) first.",
    )?;
    let (scope, why, follow) = match scope {
        Some(w) => (
            SyncScope::parse(w)
                .ok_or_else(|| format!("export_hpcmp's scope is whole or pins, not \"{w}\"."))?,
            "as asked",
            false,
        ),
        None => match st.region() {
            Region::Whole => (SyncScope::Whole, "set_region is off", true),
            Region::Pins => match default_sync_scope(&exe)? {
                SyncScope::Pins => (SyncScope::Pins, "the program has pins", false),
                SyncScope::Whole => (SyncScope::Whole, "the program has no pins", false),
            },
            _ => (SyncScope::Pins, "set_region names code or windows", true),
        },
    };
    let out = if Path::new(file).is_absolute() {
        PathBuf::from(file)
    } else {
        st.work_dir().join(file)
    };
    let valgrind = find_valgrind(st.valgrind())?;
    let trace = st.folder().sync_trace();
    let mut req = sync_request(
        valgrind,
        exe.clone(),
        st.args().to_vec(),
        trace.clone(),
        scope,
    );
    // Without a scope, a region by code or windows set by set_region are
    // traced as such.
    let label = if follow {
        super::pipeline::apply_region(st.region(), &mut req)?
    } else {
        None
    };
    let described = label
        .clone()
        .unwrap_or_else(|| scope.describe().to_string());
    println!(
        "tracing {} with thread and sync-object events; reads and writes of {described} ({why})...",
        exe.display()
    );
    let outcome = run_trace(&req);
    // A Ctrl-C went to the program too, which ended with a readable trace.
    crate::cancel::clear();
    let outcome = outcome?;
    st.record_written(std::slice::from_ref(&trace));
    if outcome.exit_code != Some(0) {
        println!("note: the program {}.", outcome.describe());
    }
    let mut namer = crate::trace::ProgramNamer::new(Some(&exe), st.src_paths());
    let summary = crate::filter::export_hpcmp(&trace, &out, &mut namer)?;
    println!("{summary}");
    println!("scope: {described}; the trace is {}.", trace.display());
    if label.is_some() && trace_has_region(&trace) == Some(false) {
        println!(
            "note: the region ({described}) was not reached, so no read or write was counted."
        );
    } else if scope == SyncScope::Pins && trace_has_region(&trace) == Some(false) {
        println!(
            "note: no pinned region was reached, so no read or write was counted; \
             export_hpcmp {file} whole counts those of the whole run."
        );
    }
    let word = match (&label, scope) {
        (Some(_), _) => st.region().words()[0].clone(),
        (None, SyncScope::Whole) => "whole".into(),
        (None, SyncScope::Pins) => "pins".into(),
    };
    Ok(Value::Dict(vec![
        ("file".into(), Value::Str(out.display().to_string())),
        ("scope".into(), Value::Str(word)),
    ]))
}

/// Whether the trace holds a region (a GL_START was reached); `None` when
/// the trace cannot be checked (the export has said what it read).
fn trace_has_region(trace: &Path) -> Option<bool> {
    check_trace(trace).ok().map(|c| c.regions > 0)
}
