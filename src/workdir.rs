//! The working folder's own bookkeeping, shared by every stage that writes
//! into it: the lock that keeps two mapvis sessions from interleaving their
//! writes, the manifest of the files mapvis wrote (the only files
//! `clear_analysis` may remove), files written under a temporary name and
//! renamed into place, and the identity of a trace file.
//!
//! Invariants:
//! * Every file mapvis writes appears complete or not at all: it is written
//!   to a temporary file in the same folder ([`Pending`]) and renamed over
//!   the old one only when it is whole, so a full disk, a crash or a kill
//!   leaves the previous version in place.
//! * Only one process at a time changes `.mapvis/`, `visinfo/`, `figures/`
//!   or `grindanalysis/` of one folder: each command holds the
//!   [`FolderLock`] while it runs (an advisory `flock` on `.mapvis/lock`).
//! * [`clear`] removes only files listed in the manifest, only when they are
//!   unchanged since mapvis wrote them, and never through a symbolic link.
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Read, Seek, Write};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

/// Folder (in the working folder) where mapvis keeps its own files.
pub const STATE_DIR: &str = ".mapvis";
/// The lock file inside [`STATE_DIR`].
pub const LOCK_FILE: &str = "lock";
/// The manifest inside [`STATE_DIR`].
pub const MANIFEST_FILE: &str = "manifest.json";

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
    /// The manifest exists but cannot be understood.
    #[error("the list of files mapvis wrote, {0}, is damaged, so nothing was removed: delete it and remove the files by hand.")]
    BadManifest(PathBuf),
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

fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> WorkdirError + 'a {
    move |source| WorkdirError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

// ---------------------------------------------------------------------------
// Files written whole or not at all
// ---------------------------------------------------------------------------

/// A file being written under a temporary name in its final folder. It
/// replaces `target` only on [`Pending::commit`]; dropped without a commit
/// (an error, a panic) it is removed and `target` is untouched.
///
/// When `target` is a symbolic link to a regular file, the link is kept and
/// its target is replaced, as writing through the link would. When it is
/// (or links to) something other than a file or folder, such as a named
/// pipe or a device the user pointed it at, it is written directly: there
/// is no previous content to keep.
pub struct Pending {
    inner: Inner,
    shown: PathBuf,
}

enum Inner {
    Temp {
        tmp: tempfile::NamedTempFile,
        target: PathBuf,
    },
    Direct(File),
}

impl Pending {
    /// Creates the folder of `path` if needed and a temporary file beside
    /// the file that will be replaced.
    pub fn new(path: &Path) -> Result<Pending, WorkdirError> {
        if let Ok(m) = fs::metadata(path) {
            if !m.is_file() && !m.is_dir() {
                let f = fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(io_err("write", path))?;
                return Ok(Pending {
                    inner: Inner::Direct(f),
                    shown: path.to_path_buf(),
                });
            }
        }
        let target = match fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => match fs::canonicalize(path) {
                Ok(t) if t.is_file() => t,
                _ => path.to_path_buf(),
            },
            _ => path.to_path_buf(),
        };
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&dir).map_err(io_err("create the folder", &dir))?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".partial")
            .tempfile_in(&dir)
            .map_err(io_err("write", path))?;
        Ok(Pending {
            inner: Inner::Temp { tmp, target },
            shown: path.to_path_buf(),
        })
    }

    /// The open temporary file.
    pub fn file(&mut self) -> &mut File {
        match &mut self.inner {
            Inner::Temp { tmp, .. } => tmp.as_file_mut(),
            Inner::Direct(f) => f,
        }
    }

    /// A second handle on the temporary file (for a writer thread).
    pub fn handle(&self) -> Result<File, WorkdirError> {
        let f = match &self.inner {
            Inner::Temp { tmp, .. } => tmp.as_file(),
            Inner::Direct(f) => f,
        };
        f.try_clone().map_err(io_err("write", &self.shown))
    }

    /// The path the file will have.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// Renames the complete file into place and returns its path.
    pub fn commit(self) -> Result<PathBuf, WorkdirError> {
        let Pending { inner, shown } = self;
        if let Inner::Temp { tmp, target } = inner {
            use std::os::unix::fs::PermissionsExt;
            let _ = tmp
                .as_file()
                .set_permissions(fs::Permissions::from_mode(0o644));
            tmp.persist(&target)
                .map_err(|e| io_err("write", &shown)(e.error))?;
        }
        Ok(shown)
    }
}

/// Writes `bytes` to `path` whole or not at all.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<PathBuf, WorkdirError> {
    let mut p = Pending::new(path)?;
    p.file().write_all(bytes).map_err(io_err("write", path))?;
    p.commit()
}

// ---------------------------------------------------------------------------
// The folder lock
// ---------------------------------------------------------------------------

/// An exclusive, advisory lock on a working folder's state, held until it
/// is dropped. Another process (or another handle in this one) that asks
/// for it waits. The holder's pid is written into the lock file so that a
/// waiting session can say who it waits for.
#[derive(Debug)]
pub struct FolderLock {
    file: File,
    dir: PathBuf,
}

impl FolderLock {
    /// Takes the lock of the working folder `work_dir`, creating
    /// `.mapvis/lock` if needed. While another session holds it, calls
    /// `waiting` once with that session's pid (when known), then polls
    /// every 50 ms; gives up with [`WorkdirError::GaveUp`] when `cancelled`
    /// says so (Ctrl-C).
    pub fn acquire(
        work_dir: &Path,
        waiting: &mut dyn FnMut(Option<u32>),
        cancelled: &dyn Fn() -> bool,
    ) -> Result<FolderLock, WorkdirError> {
        let state = work_dir.join(STATE_DIR);
        fs::create_dir_all(&state).map_err(io_err("create the folder", &state))?;
        let path = state.join(LOCK_FILE);
        let mut file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_err("open the lock file", &path))?;
        let mut told = false;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(fs::TryLockError::WouldBlock) => {
                    if !told {
                        waiting(holder_pid(&mut file));
                        told = true;
                    }
                    if cancelled() {
                        return Err(WorkdirError::GaveUp(work_dir.to_path_buf()));
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(fs::TryLockError::Error(e)) => {
                    return Err(io_err("lock", &path)(e));
                }
            }
        }
        // Who holds it, for the message of a session that waits.
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = write!(file, "{}", std::process::id());
        Ok(FolderLock {
            file,
            dir: work_dir.to_path_buf(),
        })
    }

    /// The working folder this lock covers.
    pub fn work_dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

fn holder_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

// ---------------------------------------------------------------------------
// The manifest of files mapvis wrote
// ---------------------------------------------------------------------------

/// What mapvis knows of a file it wrote: enough to tell whether the user
/// has replaced or changed it since.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Written {
    size: u64,
    mtime_ns: u128,
}

impl Written {
    fn of(path: &Path) -> Option<Written> {
        let m = fs::symlink_metadata(path).ok()?;
        if !m.file_type().is_file() {
            return None;
        }
        Some(Written {
            size: m.len(),
            mtime_ns: m
                .modified()
                .ok()?
                .duration_since(UNIX_EPOCH)
                .ok()?
                .as_nanos(),
        })
    }
}

/// The files mapvis wrote in one working folder, relative to it, kept in
/// `.mapvis/manifest.json`. Stages report the files they write and the
/// shell records them here as soon as they are complete.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    version: u32,
    files: BTreeMap<String, Written>,
}

fn manifest_path(work_dir: &Path) -> PathBuf {
    work_dir.join(STATE_DIR).join(MANIFEST_FILE)
}

/// `path` relative to `work_dir` when it lies inside it (lexically, with
/// no `..`); `None` otherwise.
fn relative(work_dir: &Path, path: &Path) -> Option<PathBuf> {
    let rel = path.strip_prefix(work_dir).ok()?;
    let clean = rel.components().all(|c| matches!(c, Component::Normal(_)));
    (clean && !rel.as_os_str().is_empty()).then(|| rel.to_path_buf())
}

impl Manifest {
    /// Loads the manifest of `work_dir` (empty when there is none).
    pub fn load(work_dir: &Path) -> Result<Manifest, WorkdirError> {
        let path = manifest_path(work_dir);
        match fs::read(&path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes).map_err(|_| WorkdirError::BadManifest(path))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Manifest {
                version: 1,
                files: BTreeMap::new(),
            }),
            Err(e) => Err(io_err("read", &path)(e)),
        }
    }

    /// Records the files in `paths` as written by mapvis, as they are now,
    /// and saves the manifest. Files outside `work_dir` are not recorded
    /// (mapvis never removes them).
    pub fn record(work_dir: &Path, paths: &[PathBuf]) -> Result<(), WorkdirError> {
        // A background save records its files while a command may record
        // others: one read-modify-write at a time in this process (other
        // processes are kept out by the folder lock).
        static RECORDING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = RECORDING.lock().unwrap_or_else(|p| p.into_inner());
        let mut m = Manifest::load(work_dir).unwrap_or_default();
        m.version = 1;
        for p in paths {
            let abs = if p.is_absolute() {
                p.clone()
            } else {
                work_dir.join(p)
            };
            if let (Some(rel), Some(w)) = (relative(work_dir, &abs), Written::of(&abs)) {
                m.files.insert(rel.to_string_lossy().into_owned(), w);
            }
        }
        m.save(work_dir)
    }

    fn save(&self, work_dir: &Path) -> Result<(), WorkdirError> {
        let bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        write_file(&manifest_path(work_dir), &bytes).map(drop)
    }
}

/// What [`clear`] did.
#[derive(Debug, Default)]
pub struct Cleared {
    /// Files removed.
    pub removed: Vec<PathBuf>,
    /// Files kept, each with the reason (changed since written, reached
    /// through a symbolic link).
    pub kept: Vec<(PathBuf, String)>,
}

/// Whether a folder on the way from `work_dir` to `rel` is a symbolic link
/// (then the file may lie outside the working folder and is not touched).
fn through_link(work_dir: &Path, rel: &Path) -> bool {
    let mut at = work_dir.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    for c in &parts[..parts.len().saturating_sub(1)] {
        at.push(c);
        match fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_dir() => {}
            _ => return true,
        }
    }
    false
}

/// Removes the files mapvis wrote in `work_dir` (those in its manifest),
/// leaving every other file alone: a file the user changed or replaced
/// since mapvis wrote it is kept, and no symbolic link is followed. Empty
/// folders inside `.mapvis/` that held removed files are removed too.
pub fn clear(work_dir: &Path) -> Result<Cleared, WorkdirError> {
    let mut m = Manifest::load(work_dir)?;
    let mut out = Cleared::default();
    let mut dirs = Vec::new();
    for (rel, written) in std::mem::take(&mut m.files) {
        let rel = PathBuf::from(rel);
        let abs = work_dir.join(&rel);
        if through_link(work_dir, &rel) {
            out.kept
                .push((abs, "a folder on its way is a symbolic link".into()));
            continue;
        }
        match Written::of(&abs) {
            Some(now) if now == written => match fs::remove_file(&abs) {
                Ok(()) => {
                    if rel.starts_with(STATE_DIR) {
                        // Every folder between the file and `.mapvis/`
                        // (the access list's dataset nests them).
                        let state = work_dir.join(STATE_DIR);
                        dirs.extend(
                            abs.ancestors()
                                .skip(1)
                                .take_while(|d| *d != state)
                                .map(Path::to_path_buf),
                        );
                    }
                    out.removed.push(abs);
                }
                Err(e) => out.kept.push((abs, e.to_string())),
            },
            Some(_) => out
                .kept
                .push((abs, "it changed after mapvis wrote it".into())),
            None => {
                if fs::symlink_metadata(&abs).is_ok() {
                    out.kept
                        .push((abs, "it is no longer the file mapvis wrote".into()));
                }
            }
        }
    }
    dirs.sort();
    dirs.dedup();
    // Deepest first: a folder is empty only once its subfolders are gone.
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for d in dirs.iter() {
        if d != &work_dir.join(STATE_DIR) {
            let _ = fs::remove_dir(d);
        }
    }
    m.save(work_dir)?;
    Ok(out)
}

// ---------------------------------------------------------------------------
// Where results came from
// ---------------------------------------------------------------------------

/// The identity of a trace file as it was analysed: its path, size and
/// modification time. Results carry it, and a result whose trace has since
/// changed (a new run, a failed or killed run, another session) is stale.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourceId {
    /// The trace file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: u128,
}

impl SourceId {
    /// The identity of the file at `path` now (`None` when it is missing).
    pub fn of(path: &Path) -> Option<SourceId> {
        let m = fs::metadata(path).ok()?;
        Some(SourceId {
            path: path.to_path_buf(),
            size: m.len(),
            mtime_ns: m
                .modified()
                .ok()?
                .duration_since(UNIX_EPOCH)
                .ok()?
                .as_nanos(),
        })
    }

    /// A short description for messages: path, size and time.
    pub fn describe(&self) -> String {
        let secs = (self.mtime_ns / 1_000_000_000) as u64;
        format!(
            "{} ({} bytes, written {} s after the epoch)",
            self.path.display(),
            self.size,
            secs
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_keeps_the_old_file_until_commit() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/data.csv");
        write_file(&p, b"old").unwrap();
        let mut w = Pending::new(&p).unwrap();
        w.file().write_all(b"new, half written").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"old");
        drop(w);
        assert_eq!(fs::read(&p).unwrap(), b"old");
        let names: Vec<_> = fs::read_dir(d.path().join("sub")).unwrap().collect();
        assert_eq!(names.len(), 1, "the temporary file is removed");
        let mut w = Pending::new(&p).unwrap();
        w.file().write_all(b"new").unwrap();
        w.commit().unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
    }

    #[test]
    fn a_second_lock_waits_and_can_give_up() {
        let d = tempfile::tempdir().unwrap();
        let first = FolderLock::acquire(d.path(), &mut |_| {}, &|| false).unwrap();
        let mut seen = None;
        let second = FolderLock::acquire(d.path(), &mut |pid| seen = pid, &|| true);
        assert!(matches!(second, Err(WorkdirError::GaveUp(_))));
        assert_eq!(seen, Some(std::process::id()));
        drop(first);
        FolderLock::acquire(d.path(), &mut |_| panic!("no wait"), &|| true).unwrap();
    }

    #[test]
    fn clear_removes_only_unchanged_recorded_files() {
        let d = tempfile::tempdir().unwrap();
        let w = d.path();
        let ours = write_file(&w.join("figures/a.html"), b"x").unwrap();
        let changed = write_file(&w.join("visinfo/b.csv"), b"x").unwrap();
        let user = w.join("figures/mine.html");
        fs::write(&user, b"user").unwrap();
        Manifest::record(w, &[ours.clone(), changed.clone()]).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        fs::write(&changed, b"edited by the user").unwrap();
        let c = clear(w).unwrap();
        assert_eq!(c.removed, vec![ours]);
        assert_eq!(c.kept.len(), 1);
        assert!(changed.exists() && user.exists());
    }

    #[test]
    fn full_disk_is_named() {
        let e = io::Error::from_raw_os_error(28);
        let m = describe_io("write", Path::new("/w/visinfo/order_data.csv"), &e);
        assert!(m.contains("the disk holding /w/visinfo is full"), "{m}");
    }
}
