//! Cancelling the running command: one flag for the whole program.
//!
//! Long loops in every stage poll [`requested`] and stop early when it
//! says so: the analysis driver (the analysis then covers the accesses up
//! to that point, and says so), the figures' passes over the accesses
//! (the figure fails with `VisError::Interrupted` and writes nothing),
//! and macro expansion in the trace stage (the expansion is given up).
//! It lives at the crate's root, below every stage, so each stage asks the
//! same flag without knowing who sets it.
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
