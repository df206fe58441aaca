//! The error of a shell command: the typed error of the stage that failed,
//! or the shell's own full sentence, kept with its cause until the one
//! place where it becomes Tcl's error text ([`CmdError::user_text`]).
//!
//! Every stage error converts with `?` (one `#[from]` variant each), so a
//! handler never flattens a stage error into a string and the causes
//! (the system's reason, the parser's) stay reachable through
//! [`std::error::Error::source`]. The stage variants are transparent: the
//! user reads the stage's own sentence, which names the file or address.
use std::error::Error;

use polars::prelude::PolarsError;

use crate::filter::{CacheError, FilterError, LocalityError, ShapeError, UnknownVariable};
use crate::trace::CompileError;
use crate::trace::DumpError;
use crate::trace::ProfileError;
use crate::trace::RunError;
use crate::trace::TraceError;
use crate::vis::VisError;
use crate::workdir::WorkdirError;

/// The result of a command handler and of the session's steps.
pub type CmdResult<T> = Result<T, CmdError>;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum CmdError {
    /// The shell's own message: a full sentence saying what is wrong and
    /// what to do (a missing step, an unusable argument).
    #[error("{0}")]
    Message(String),
    /// The shell's sentence about the step that failed (naming its file),
    /// with the error that made it fail; [`CmdError::user_text`] adds the
    /// cause after the sentence.
    #[error("{message}")]
    Context {
        /// What the shell was doing, e.g. `cannot create the folder X`.
        message: String,
        /// Why it failed.
        #[source]
        source: Box<dyn Error + Send + Sync>,
    },
    /// Running Valgrind, the traced program or a Valgrind tool failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A C program could not be compiled.
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// Dumping the trace failed.
    #[error(transparent)]
    Dump(#[from] DumpError),
    /// The heap profile could not be read.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// The analysis, a selection or a data file failed.
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// A name or shape the array figures cannot use.
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// A variable filter named a variable the analysis does not have.
    #[error(transparent)]
    UnknownVariable(#[from] UnknownVariable),
    /// An unusable cache model.
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// The cache simulation or its report failed.
    #[error(transparent)]
    Locality(#[from] LocalityError),
    /// A figure could not be drawn or written.
    #[error(transparent)]
    Vis(#[from] VisError),
    /// The working folder's lock, manifest or files failed.
    #[error(transparent)]
    Workdir(#[from] WorkdirError),
    /// A table operation failed.
    #[error("a table operation failed ({0}); this is a bug in mapvis, or the machine ran out of memory.")]
    Table(#[from] PolarsError),
}

impl From<String> for CmdError {
    fn from(message: String) -> Self {
        CmdError::Message(message)
    }
}

impl From<&str> for CmdError {
    fn from(message: &str) -> Self {
        CmdError::Message(message.to_string())
    }
}

impl CmdError {
    /// The shell's sentence `message` about a step that failed because of
    /// `source`.
    pub fn context(
        message: impl Into<String>,
        source: impl Into<Box<dyn Error + Send + Sync>>,
    ) -> Self {
        CmdError::Context {
            message: message.into(),
            source: source.into(),
        }
    }

    /// The text the user reads: this error's sentence followed by each
    /// cause in its source chain that the text does not already hold
    /// (most stage errors name their cause in their own sentence, so it is
    /// not repeated).
    pub fn user_text(&self) -> String {
        with_causes(self)
    }
}

/// `err`'s message followed by every cause in its source chain that the
/// message so far does not already contain: `cannot create X: Permission
/// denied (os error 13).`, or after a full sentence `... Cause: ...`.
pub fn with_causes(err: &(dyn Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut next = err.source();
    while let Some(cause) = next {
        let said = cause.to_string();
        let said = said.trim().trim_end_matches('.');
        if !said.is_empty() && !text.contains(said) {
            if text.ends_with(['.', '!', '?']) {
                text.push_str(" Cause: ");
            } else {
                text.push_str(": ");
            }
            text.push_str(said);
            text.push('.');
        }
        next = cause.source();
    }
    text
}

/// Adds the shell's sentence to a failed step's error: the
/// [`CmdError::Context`] of `?`.
pub trait Context<T> {
    /// On error, `message()` (naming the file or step) with the error as
    /// its cause.
    fn context(self, message: impl FnOnce() -> String) -> CmdResult<T>;
}

impl<T, E> Context<T> for Result<T, E>
where
    E: Error + Send + Sync + 'static,
{
    fn context(self, message: impl FnOnce() -> String) -> CmdResult<T> {
        self.map_err(|e| CmdError::context(message(), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;
    use std::path::PathBuf;

    #[test]
    fn a_context_keeps_its_cause() {
        let e: CmdResult<()> = Err(io::Error::new(io::ErrorKind::PermissionDenied, "no entry"))
            .context(|| "cannot create the folder /x/bin".to_string());
        assert_eq!(
            e.unwrap_err().user_text(),
            "cannot create the folder /x/bin: no entry."
        );
        let e = CmdError::context(
            "the trace t.mvt cannot be read: check the path.",
            io::Error::new(io::ErrorKind::NotFound, "gone"),
        );
        assert_eq!(
            e.user_text(),
            "the trace t.mvt cannot be read: check the path. Cause: gone."
        );
    }

    #[test]
    fn a_cause_already_said_is_not_repeated() {
        // TraceError::Io says its io::Error itself; FilterError and
        // CmdError are transparent over it, so the chain holds the
        // io::Error once more.
        let io = io::Error::new(io::ErrorKind::NotFound, "No such file or directory");
        let e = CmdError::from(FilterError::from(TraceError::Io {
            path: PathBuf::from("/w/t.mvt"),
            source: io,
        }));
        assert!(e.source().is_some(), "the cause is kept");
        assert_eq!(
            e.user_text(),
            "cannot read the trace /w/t.mvt: No such file or directory."
        );
        // A context over it adds the stage's sentence, once.
        let c = CmdError::context("analysing the trace failed.", e);
        assert_eq!(
            c.user_text(),
            "analysing the trace failed. Cause: cannot read the trace /w/t.mvt: No such file or directory."
        );
    }

    #[test]
    fn messages_are_kept_as_written() {
        let e: CmdError = format!(
            "there is no trace to analyse: run {} first.",
            "run_gleipnir"
        )
        .into();
        assert_eq!(
            e.user_text(),
            "there is no trace to analyse: run run_gleipnir first."
        );
        assert_eq!(CmdError::from("plain").user_text(), "plain");
    }
}
