//! The working folder's error: what failed, naming the file, with the
//! system's reason; a full disk is named as such.
use std::io;
use std::path::{Path, PathBuf};

/// Errors of the working folder's bookkeeping. Messages are full sentences
/// naming the file.
#[derive(Debug, thiserror::Error)]
pub enum WorkdirError {
    /// A file could not be read, written, renamed or locked.
    #[error("{}", describe_io(.what, .path, .source))]
    Io {
        /// What mapvis was doing ("write", "lock", ...).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The system's reason.
        source: io::Error,
    },
    /// Waiting for another session was given up (Ctrl-C).
    #[error("gave up waiting for the other mapvis session working in {0}: run the command again when it has finished, or work in another folder.")]
    GaveUp(PathBuf),
    /// A folder mapvis writes into (`figures/`, `visinfo/`, `.mapvis/`, ...)
    /// is a symbolic link: writing through it would write outside the
    /// working folder.
    #[error("{} is a symbolic link (to {}), and mapvis writes only inside the working folder {}: nothing was written. Remove the link (mapvis makes a real folder in its place) or work in another folder.", .link.display(), .target.display(), .work_dir.display())]
    LinkedFolder {
        /// The link.
        link: PathBuf,
        /// Where it points.
        target: PathBuf,
        /// The working folder.
        work_dir: PathBuf,
    },
    /// A file of a saved analysis is not the one mapvis saved.
    #[error("the saved analysis in {} is not the one mapvis saved: {} {why}. It is not used, so that counts and names from different files are never mixed: run memory_trace_analysis again to analyse the trace anew (and save_run again for a saved run).", .dir.display(), .file.display())]
    Tampered {
        /// The saved analysis' folder.
        dir: PathBuf,
        /// The file that does not match.
        file: PathBuf,
        /// How it differs.
        why: String,
    },
    /// The manifest exists but cannot be understood.
    #[error("the list of files mapvis wrote, {0}, is damaged, so nothing was removed: delete it and remove the files by hand.")]
    BadManifest(PathBuf),
}

impl WorkdirError {
    /// The system's reason for an I/O error (a full disk, say), for a
    /// stage that reports I/O errors with its own wording; other errors as
    /// their sentence.
    pub fn into_io(self) -> io::Error {
        match self {
            WorkdirError::Io { source, .. } => source,
            other => io::Error::other(other.to_string()),
        }
    }
}

/// Whether an I/O error means the disk (or the file system's quota) is full.
pub fn is_disk_full(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::StorageFull
        || e.kind() == io::ErrorKind::QuotaExceeded
        || e.raw_os_error() == Some(28)
        || e.to_string().contains("No space left on device")
}

/// A full sentence for an I/O error on `path`; a full disk is named as such.
pub fn describe_io(what: &str, path: &Path, e: &io::Error) -> String {
    if is_disk_full(e) {
        let dir = path.parent().unwrap_or(path);
        format!(
            "cannot {what} {}: the disk holding {} is full ({e}). Free some space and run the command again; the previous files were kept.",
            path.display(),
            dir.display()
        )
    } else {
        format!(
            "cannot {what} {}: {e}. Check that the folder exists and is writable.",
            path.display()
        )
    }
}

/// A closure making [`WorkdirError::Io`] of doing `what` to `path`.
pub(super) fn io_err<'a>(
    what: &'static str,
    path: &'a Path,
) -> impl FnOnce(io::Error) -> WorkdirError + 'a {
    move |source| WorkdirError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_disk_is_named() {
        let e = io::Error::from_raw_os_error(28);
        let m = describe_io("write", Path::new("/w/visinfo/order_data.csv"), &e);
        assert!(m.contains("the disk holding /w/visinfo is full"), "{m}");
    }
}
