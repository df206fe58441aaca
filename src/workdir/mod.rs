//! The working folder, shared by every stage that writes into it: where
//! each file lives (`layout.rs`: [`WorkFolder`], a saved [`Run`], the
//! label rule and `run.json`), the lock that keeps two mapvis sessions
//! from interleaving their writes (`lock.rs`), the manifest of the files
//! mapvis wrote, the only files `clear_analysis` may remove
//! (`manifest.rs`), files written under a temporary name and renamed into
//! place (`write.rs`), the identity of a trace file (`source.rs`) and the
//! errors of all of it (`error.rs`).
//!
//! This file is the facade: the stages name `crate::workdir::Name`.
//!
//! Invariants:
//! * Every file mapvis writes appears complete or not at all: it is written
//!   to a temporary file in the same folder ([`Pending`]) and renamed over
//!   the old one only when it is whole, so a full disk, a crash or a kill
//!   leaves the previous version in place. It is always a new regular
//!   file: a symbolic link, named pipe or device in its place is replaced,
//!   never followed or opened, so nothing outside the folder is written
//!   through the folder's files.
//! * Only one process at a time changes `.mapvis/`, `visinfo/`, `figures/`
//!   or `grindanalysis/` of one folder: each command holds the
//!   [`FolderLock`] while it runs (an advisory `flock` on `.mapvis/lock`).
//! * [`clear`] removes only files listed in the manifest, only when they are
//!   unchanged since mapvis wrote them, never through a symbolic link, and
//!   never a manifest entry that leads out of the folder.

mod error;
mod layout;
mod lock;
mod manifest;
mod safe;
mod source;
mod write;

pub use error::{describe_io, is_disk_full, WorkdirError};
pub use layout::{
    valid_label, Run, RunInfo, WorkFolder, ANALYSIS_DIR, LOCK_FILE, MANIFEST_FILE,
    RUN_INFO_VERSION, STATE_DIR,
};
pub use lock::{refuse_linked_folders, FolderLock};
pub use manifest::{
    check_files, checksum, clear, clear_under, files_size, install_run, remove_half_made,
    verify_saved_analysis, Cleared, FileCheck, Manifest, Verified,
};
pub use safe::{create_dir, remove_file, SafeDir};
pub use source::{new_analysis_id, Freshness, SourceId};
pub use write::{open_regular, read_regular, write_file, Pending};
