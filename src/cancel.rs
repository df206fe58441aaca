//! Cancelling the running command: one flag for the whole program.
//!
//! Long loops in every stage poll [`requested`] and stop early when it
//! says so: the analysis driver (the analysis then covers the accesses up
//! to that point, and says so), the figures' passes over the accesses
//! (the figure fails with `VisError::Interrupted` and writes nothing),
//! macro expansion in the trace stage (the expansion is given up), and the
//! reading of a new trace cut short after a run
//! (`trace::record::run_trace_into`, which keeps what it counted). There is
//! no other mechanism: no stage takes a cancel callback. It lives at the
//! crate's root, below every stage, so each stage asks the same flag
//! without knowing who sets it. (Also below the stages,
//! `workdir::FolderLock::acquire` takes its poll as an argument and the
//! shell passes [`requested`]: its tests give up waiting without setting
//! this process-wide flag under the tests that run beside them.)
//!
//! One rule is a stage's own: a Ctrl-C while a traced program runs goes to
//! the program as well and ends it with a readable trace, so
//! `run_trace_into` forgets a request still pending when it starts reading
//! that trace, and only a Ctrl-C pressed during the reading stops it.
//!
//! The shell sets it: its SIGINT handler (`src/shell/interrupt.rs`)
//! registers [`flag`] with the signal, so Ctrl-C sets it, and the shell
//! calls [`clear`] before each command. Where no handler is installed
//! (the library used on its own, the tests), nothing sets it and nothing
//! is cancelled.
//!
//! Cost: [`requested`] is one atomic load, cheap enough for inner loops
//! (they still poll it only every few thousand items).
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The flag itself, shared with the signal handler that sets it
/// (`signal_hook::flag::register` takes an `Arc<AtomicBool>`).
pub fn flag() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// Whether cancelling was requested (Ctrl-C pressed) since the last
/// [`clear`]. One atomic load.
pub fn requested() -> bool {
    flag().load(Ordering::SeqCst)
}

/// Requests cancelling, as the signal handler does (for code that wants
/// to stop the running command, and tests).
pub fn request() {
    flag().store(true, Ordering::SeqCst);
}

/// Forgets a pending request (the shell calls this before each command,
/// and after a step that consumed the Ctrl-C itself).
pub fn clear() {
    flag().store(false, Ordering::SeqCst);
}
