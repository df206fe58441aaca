//! Progress of long commands (a trace run, an analysis) on stderr.
//!
//! On a terminal the line is rewritten in place (`\r`) at most ten times a
//! second. Elsewhere (a log file, a pipe, CI) `\r` would pile hundreds of
//! fragments onto one line, so a whole line is written every ten seconds.
//! Nothing is shown for runs shorter than the delay given.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Rewrites on a terminal at most this often.
const TERMINAL_EVERY: Duration = Duration::from_millis(100);
/// Writes a line off a terminal at most this often.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// Rate-limited progress for one command.
pub struct Progress {
    started: Instant,
    delay: Duration,
    tty: bool,
    last: Option<Instant>,
}

impl Progress {
    /// Progress that appears once the command has run for `delay`.
    pub fn after(delay: Duration) -> Self {
        Progress {
            started: Instant::now(),
            delay,
            tty: std::io::stderr().is_terminal(),
            last: None,
        }
    }

    /// Seconds since the command started.
    pub fn elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Shows `text()` if it is time to; `text` is only called then.
    pub fn show(&mut self, text: impl FnOnce() -> String) {
        let now = Instant::now();
        if now.duration_since(self.started) < self.delay {
            return;
        }
        let every = if self.tty { TERMINAL_EVERY } else { LOG_EVERY };
        if self.last.is_some_and(|t| now.duration_since(t) < every) {
            return;
        }
        self.last = Some(now);
        if self.tty {
            eprint!("\r{}", text());
        } else {
            eprintln!("{}", text());
        }
    }

    /// Ends the progress line, if one was shown on a terminal.
    pub fn finish(self) {
        if self.tty && self.last.is_some() {
            eprintln!();
        }
    }
}
