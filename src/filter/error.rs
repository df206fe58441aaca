//! The analysis stage's error type, and the join of its worker threads
//! that carries a thread's panic or error to the joining one.

use polars::prelude::PolarsError;

use crate::trace::record::TraceError;

/// Errors of the analysis stage.
#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The heap profile could not be read.
    #[error(transparent)]
    Profile(#[from] crate::trace::heap::ProfileError),
    /// Ctrl-C was pressed while a command read the analysis.
    #[error("interrupted by Ctrl-C: nothing was written, and earlier results are as they were.")]
    Interrupted,
    /// A table operation failed (a bug, or out of memory).
    #[error("a table operation failed: {0}.")]
    Table(#[from] PolarsError),
    /// A data file could not be written.
    #[error("{}", crate::workdir::describe_io("write", .path, .source))]
    Write {
        /// The file.
        path: std::path::PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
    /// An export needs thread and mutex events the trace does not hold.
    #[error("the trace {path} was recorded without sync events (thread and mutex operations, instruction counts): export_hpcmp records its own trace of the loaded program; to use this file, trace again with --sync-events=yes.")]
    NoSyncEvents {
        /// The trace.
        path: std::path::PathBuf,
    },
    /// An imported (Gleipnir text) trace could not be read.
    #[error("{0}")]
    Import(String),
    /// Numbering the accesses of a selection by location (their
    /// occurrence) would take more than the selection's share of the
    /// memory limit.
    #[error(
        "the accesses drawn touch more distinct locations than their occurrences can be \
         counted in {budget_mb} MB (a quarter of set_memory_limit): draw fewer of them (one \
         array with 2d_memory_access_pattern NAME, a filter such as NAME on \
         complete_memory_access_pattern, or set_mem_alloc with fewer kinds), or raise \
         set_memory_limit."
    )]
    TooManyLocations {
        /// The counters' share of the memory limit, in MB.
        budget_mb: u64,
    },
    /// Gathering the accesses a figure needs would take more memory than
    /// the machine has free.
    #[error(
        "drawing {accesses} accesses would take about {need_mb} MB of memory to gather them, \
         and this machine has {free_mb} MB free: draw fewer of them (one array with \
         2d_memory_access_pattern NAME, a filter such as `arrays` or NAME on \
         complete_memory_access_pattern, or set_mem_alloc with fewer kinds), or trace a \
         smaller run."
    )]
    TooManyToGather {
        /// Accesses the figure would gather.
        accesses: u64,
        /// Memory they would take, in MB.
        need_mb: u64,
        /// Memory available, in MB.
        free_mb: u64,
    },
    /// The calls were asked of a heap profile recorded without them
    /// (format 7's default): only its summary can be shown.
    #[error("the heap profile {path} holds no calls: it was recorded by `heap_profile` without `calls`, which keeps only the summary (counts, sites, sizes, leaks, the live heap over time and the lifetimes); run `heap_profile calls` to record them.")]
    NoHeapCalls {
        /// The profile.
        path: std::path::PathBuf,
    },
    /// A heap profile recorded without its calls has no summary to report
    /// from either.
    #[error("the heap profile {path} holds neither calls nor a whole summary: {why} Record it again; for a program that dies early, with `heap_profile calls`, which writes every call as it is made.")]
    NoHeapSummary {
        /// The profile.
        path: std::path::PathBuf,
        /// Why it has none, as far as the reader can tell.
        why: String,
    },
    /// A saved analysis could not be read back.
    #[error(
        "cannot read the saved analysis in {path}: {reason}. Run memory_trace_analysis again."
    )]
    Saved {
        /// The folder or file.
        path: std::path::PathBuf,
        /// What went wrong.
        reason: String,
    },
}

/// The error of a thread of the analysis that could not be started, `what`
/// (`the dataset writer`) writing `path`. The system refuses a new thread
/// (EAGAIN, ENOMEM) when it cannot map the thread's stack, which under a
/// memory limit (`ulimit -v`, a container's) means the command ran out of
/// memory: that is raised as the panic a thread that ran out of memory
/// carries (see [`joined`]), so the shell says which command ran out and
/// what to try, not that a folder is not writable. Any other failure is a
/// [`FilterError::Write`].
pub(crate) fn thread_not_started(
    what: &str,
    path: std::path::PathBuf,
    source: std::io::Error,
) -> FilterError {
    use std::io::ErrorKind;
    if matches!(
        source.kind(),
        ErrorKind::WouldBlock | ErrorKind::OutOfMemory
    ) && !std::thread::panicking()
    {
        panic!(
            "could not start the {what} thread ({source}): Cannot allocate memory for its \
             stack, or the process may start no more threads"
        );
    }
    FilterError::Write { path, source }
}

/// The end of one of the analysis' threads, `what` writing `path`: its
/// result, or its panic carried on into the joining thread, so that a
/// thread that ran out of memory (it could not even map its signal stack
/// under `ulimit -v`) reports as its command running out of memory
/// (shell::tcl catches the panic), and a bug as a bug. When the joining
/// thread is already unwinding, or from a `Drop`, a second panic would
/// abort: the panic becomes an error instead.
pub(crate) fn joined<T>(
    end: std::thread::Result<Result<T, FilterError>>,
    what: &str,
    path: &std::path::Path,
) -> Result<T, FilterError> {
    match end {
        Ok(r) => r,
        Err(panic) if !std::thread::panicking() => std::panic::resume_unwind(panic),
        Err(_) => Err(FilterError::Write {
            path: path.to_path_buf(),
            source: std::io::Error::other(format!("the {what} thread panicked")),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread's panic reaches the joining thread with its message (so
    /// that the shell can tell running out of memory from a bug); its
    /// result passes through.
    #[test]
    fn a_thread_panic_is_carried_to_the_joining_thread() {
        let path = std::path::Path::new("(test)");
        let ok = std::thread::spawn(|| Ok::<u32, FilterError>(7)).join();
        assert_eq!(joined(ok, "test", path).unwrap(), 7);
        let failed = std::thread::spawn(|| -> Result<u32, FilterError> {
            panic!("failed to allocate an alternative stack: Cannot allocate memory (os error 12)")
        })
        .join();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            joined(failed, "test", path)
        }))
        .unwrap_err();
        let text = crate::oom::panic_text(caught.as_ref()).unwrap();
        assert!(crate::oom::is_out_of_memory(text), "{text}");
    }
}
