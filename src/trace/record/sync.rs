//! Recording the whole story of a multi-threaded run: thread and mutex
//! operations with per-thread instruction counts (the tool's
//! `--sync-events=yes`), for HPCMP's export.
//!
//! HPCMP traces the whole run; mapvis can also keep the reads and writes
//! to the pinned regions. [`Scope`] says which, and [`default_scope`]
//! picks the whole run for a program without pins.
use std::path::{Path, PathBuf};

use super::run::{RunError, TraceRequest};

/// Which reads and writes a sync-event trace holds. Thread, mutex and
/// heap events are recorded for the whole run in both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every access of the run, from the first instruction (as HPCMP).
    Whole,
    /// The accesses between GL_START and GL_STOP.
    Pins,
}

impl Scope {
    /// Parses `whole` or `pins`.
    pub fn parse(word: &str) -> Option<Scope> {
        match word {
            "whole" => Some(Scope::Whole),
            "pins" => Some(Scope::Pins),
            _ => None,
        }
    }

    /// How a report names the scope.
    pub fn describe(self) -> &'static str {
        match self {
            Scope::Whole => "the whole run",
            Scope::Pins => "the pinned regions (GL_START ... GL_STOP)",
        }
    }
}

/// Whether the executable uses the pins: every GL_START and GL_STOP
/// refers to the weak symbol `mapvis_heap_pin` (see `pins/gleipnir.h`),
/// so a program that uses them has it in its symbol table. Cost: one
/// read of the file.
pub fn has_pins(exe: &Path) -> Result<bool, RunError> {
    use object::{Object, ObjectSymbol};
    let data = std::fs::read(exe).map_err(|e| RunError::ExecutableMissing {
        path: exe.to_path_buf(),
        reason: e.to_string(),
    })?;
    let file = object::File::parse(&*data).map_err(|e| RunError::NotElf64 {
        path: exe.to_path_buf(),
        reason: format!("not an object file: {e}"),
    })?;
    let named = |s: object::Symbol<'_, '_>| s.name() == Ok("mapvis_heap_pin");
    Ok(file.symbols().any(named) || file.dynamic_symbols().any(named))
}

/// The scope to use when none is asked for: the pins when the program
/// has them, else the whole run.
pub fn default_scope(exe: &Path) -> Result<Scope, RunError> {
    Ok(if has_pins(exe)? {
        Scope::Pins
    } else {
        Scope::Whole
    })
}

/// A request to trace `exe` with sync events in `scope`, into `trace_file`.
pub fn request(
    valgrind: PathBuf,
    exe: PathBuf,
    args: Vec<String>,
    trace_file: PathBuf,
    scope: Scope,
) -> TraceRequest {
    TraceRequest {
        valgrind,
        exe,
        args,
        trace_file,
        stack_depth: 8,
        heap_only: false,
        from_start: scope == Scope::Whole,
        sync_events: true,
        region: None,
        window: None,
    }
}
