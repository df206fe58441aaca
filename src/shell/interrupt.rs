//! Ctrl-C (SIGINT) while a command runs.
//!
//! [`install`] puts a process-wide handler in place that only sets the
//! program's cancel flag ([`crate::cancel`]), so Ctrl-C no longer kills
//! mapvis. Long-running steps of every stage poll
//! [`crate::cancel::requested`] and stop early; the shell calls
//! [`crate::cancel::clear`] before each command. A watcher
//! thread also runs the notifier set with [`set_notifier`], which the shell
//! uses to abort a running Tcl script (e.g. `while 1 {}`) at its next safe
//! point.
//!
//! A second Ctrl-C while the first one is still pending terminates mapvis the
//! usual way, so a command that ignores the flag can always be killed.
//! Child processes (Valgrind, the compiler) are in the same process group and
//! receive the terminal's SIGINT themselves.
//!
//! At the rustyline prompt the terminal is in raw mode and Ctrl-C arrives as a
//! key, not a signal, so the handler does not interfere with line editing.
//! rustyline sets its own SIGINT action when it opens the terminal, so
//! [`install`] must run after the editor is created (signal-hook then chains
//! to rustyline's action instead of being replaced by it).

use std::sync::{Mutex, OnceLock};

use signal_hook::consts::SIGINT;

/// Something to run (on the watcher thread) when SIGINT arrives.
type Notifier = Box<dyn Fn() + Send>;

fn notifier() -> &'static Mutex<Option<Notifier>> {
    static NOTIFIER: Mutex<Option<Notifier>> = Mutex::new(None);
    &NOTIFIER
}

/// Installs the SIGINT handler and its watcher thread. Idempotent; cheap
/// after the first call. Fails only if the operating system refuses the
/// handler.
pub fn install() -> Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let describe = |e: std::io::Error| format!("cannot install the Ctrl-C handler: {e}");
            // Order matters: the conditional default must see the flag before
            // this signal sets it, so only a second Ctrl-C terminates.
            signal_hook::flag::register_conditional_default(SIGINT, crate::cancel::flag().clone())
                .map_err(describe)?;
            signal_hook::flag::register(SIGINT, crate::cancel::flag().clone()).map_err(describe)?;
            let mut signals = signal_hook::iterator::Signals::new([SIGINT]).map_err(describe)?;
            std::thread::Builder::new()
                .name("mapvis-sigint".into())
                .spawn(move || {
                    for _ in signals.forever() {
                        let guard = match notifier().lock() {
                            Ok(g) => g,
                            Err(poisoned) => poisoned.into_inner(),
                        };
                        if let Some(notify) = guard.as_ref() {
                            notify();
                        }
                    }
                })
                .map_err(describe)?;
            Ok(())
        })
        .clone()
}

/// Sets the function the watcher thread runs after each SIGINT (replacing the
/// previous one). It runs on another thread, so it must only do thread-safe
/// things such as [`super::tcl::InterruptHandle::trigger`].
pub fn set_notifier<F: Fn() + Send + 'static>(f: F) {
    let mut guard = match notifier().lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    *guard = Some(Box::new(f));
}
