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
/// A file of the working folder ([`Pending::new`]) is only ever written as
/// a new regular file: the temporary file is created with `O_CREAT |
/// O_EXCL` (which never opens an existing file, nor follows a symbolic
/// link in its place) and renamed over the destination, and a rename
/// replaces whatever name is there (a symbolic link, a named pipe, a
/// device node) rather than what it points at. So a link such as
/// `figures/index.html -> ~/notes.html` is replaced by the figures' index,
/// and `~/notes.html` is untouched; a named pipe in place of a file cannot
/// make the command wait.
///
/// A file the user named on the command line ([`Pending::named`], the FILE
/// of `export_memtrace`) is written where the user said: through a link
/// to a regular file (the link is kept), and directly into a named pipe or
/// device such as `/dev/stdout`.
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
    /// Starts writing `path`, a file of the working folder, as a new
    /// regular file: creates its folder if needed and a temporary file
    /// beside it. A symbolic link, named pipe or device node at `path` is
    /// never opened; [`Pending::commit`] replaces it.
    pub fn new(path: &Path) -> Result<Pending, WorkdirError> {
        if fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
            return Err(io_err("write", path)(io::Error::new(
                io::ErrorKind::IsADirectory,
                "a folder has its name; move the folder away",
            )));
        }
        Pending::beside(path, path.to_path_buf())
    }

    /// Starts writing `path`, a file the user named: as [`Pending::new`],
    /// except that a link to a regular file is followed (its target is
    /// replaced and the link kept), and a named pipe or device (or a link
    /// to one), which holds no content to keep, is opened and written
    /// directly.
    pub fn named(path: &Path) -> Result<Pending, WorkdirError> {
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
        Pending::beside(path, target)
    }

    /// A temporary file in the folder of `target`, to be renamed to
    /// `target`; `shown` is the path messages name.
    fn beside(shown: &Path, target: PathBuf) -> Result<Pending, WorkdirError> {
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&dir).map_err(io_err("create the folder", &dir))?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // `tempfile` creates the file with O_CREAT | O_EXCL under a random
        // name: it never opens an existing file or follows a link.
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".partial")
            .tempfile_in(&dir)
            .map_err(io_err("write", shown))?;
        Ok(Pending {
            inner: Inner::Temp { tmp, target },
            shown: shown.to_path_buf(),
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

    /// Renames the complete file into place (replacing a link, not its
    /// target, for [`Pending::new`]) and returns its path.
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

/// Writes `bytes` to `path`, a file of the working folder, whole or not at
/// all, as a new regular file that replaces a link rather than following
/// it (see [`Pending::new`]).
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<PathBuf, WorkdirError> {
    let mut p = Pending::new(path)?;
    p.file().write_all(bytes).map_err(io_err("write", path))?;
    p.commit()
}

// ---------------------------------------------------------------------------
// Files read only when they are regular files
// ---------------------------------------------------------------------------

/// What kind of file `m` describes, for messages ("a named pipe").
fn kind_of(m: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_dir() {
        "a folder"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_fifo() {
        "a named pipe"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a regular file"
    }
}

/// An error for `m`, which is not a regular file.
fn not_regular(m: &fs::Metadata) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("it is {}, not a regular file", kind_of(m)),
    )
}

/// Opens `path` for reading only when it is a regular file (or a link to
/// one): a named pipe, device or folder is refused with an error saying
/// what it is, before it is opened, so that a named pipe cannot make the
/// command wait (and not even after: the open does not wait for a writer).
pub fn open_regular(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let m = fs::metadata(path)?;
    if !m.is_file() {
        return Err(not_regular(&m));
    }
    // Checked again on the open file: the name may have changed since.
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(not_regular(&m));
    }
    Ok(f)
}

/// The whole content of `path` when it is a regular file (see
/// [`open_regular`]): for mapvis's own small files in the folder, which a
/// named pipe in their place must not make wait.
pub fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
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
        refuse_linked(work_dir, Path::new(STATE_DIR))?;
        let state = work_dir.join(STATE_DIR);
        fs::create_dir_all(&state).map_err(io_err("create the folder", &state))?;
        let path = state.join(LOCK_FILE);
        let mut file = open_lock_file(&path).map_err(io_err("open the lock file", &path))?;
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

/// The folders of a working folder that mapvis writes into, relative to
/// it. Each is created as a real folder when missing; one that exists as
/// a symbolic link is refused by [`refuse_linked_folders`].
const OWN_FOLDERS: [&str; 6] = [
    STATE_DIR,
    "figures",
    "visinfo",
    "grindanalysis",
    ".mapvis/analysis",
    ".mapvis/runs",
];

/// Refuses a working folder where a folder mapvis writes into
/// ([`OWN_FOLDERS`], or a saved run's folder in `.mapvis/runs/`) is a
/// symbolic link: files written there would land wherever the link
/// points, outside the working folder. Refusing (rather than replacing the
/// link) leaves the user's link and its target as they were. The shell
/// calls it before every command that writes (not `clear_analysis`, which
/// removes nothing through a link); [`FolderLock::acquire`] checks
/// `.mapvis/` itself, where the lock file is. Cost: a few `lstat` calls
/// and one listing of `.mapvis/runs/`.
pub fn refuse_linked_folders(work_dir: &Path) -> Result<(), WorkdirError> {
    for rel in OWN_FOLDERS {
        refuse_linked(work_dir, Path::new(rel))?;
    }
    let runs = work_dir.join(STATE_DIR).join("runs");
    if let Ok(entries) = fs::read_dir(&runs) {
        for e in entries.flatten() {
            refuse_linked(
                work_dir,
                &Path::new(STATE_DIR).join("runs").join(e.file_name()),
            )?;
        }
    }
    Ok(())
}

/// [`WorkdirError::LinkedFolder`] when `work_dir/rel` is a symbolic link.
fn refuse_linked(work_dir: &Path, rel: &Path) -> Result<(), WorkdirError> {
    let link = work_dir.join(rel);
    match fs::symlink_metadata(&link) {
        Ok(m) if m.file_type().is_symlink() => Err(WorkdirError::LinkedFolder {
            target: fs::read_link(&link).unwrap_or_default(),
            link,
            work_dir: work_dir.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

/// Opens the lock file `path`, creating it, without following a link:
/// anything but a regular file in its place (a symbolic link, a named
/// pipe, a device) is first replaced by an empty regular file, so that
/// writing the pid never reaches a file outside the folder.
fn open_lock_file(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    if fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file()) {
        write_file(path, b"").map_err(WorkdirError::into_io)?;
    }
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    // Checked on the open file: the name may have changed since.
    let m = file.metadata()?;
    if !m.is_file() {
        return Err(not_regular(&m));
    }
    Ok(file)
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
/// has replaced or changed it since. Files of a saved analysis also carry
/// a checksum of their content ([`checksum`]), which
/// [`verify_saved_analysis`] compares before the analysis is used.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Written {
    size: u64,
    mtime_ns: u128,
    /// XXH3-64 of the content, as 16 hex digits (files of a saved analysis
    /// only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    xxh3: Option<String>,
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
            xxh3: None,
        })
    }

    /// Whether `self` and `other` describe the same file by size and time
    /// (the checksum is not compared: it is recorded for some files only).
    fn same_stamp(&self, other: &Written) -> bool {
        self.size == other.size && self.mtime_ns == other.mtime_ns
    }
}

/// The checksum of the file at `path`: XXH3-64 of its content as 16 hex
/// digits.
///
/// Why XXH3: the checksum is kept in the manifest, inside the same folder,
/// so it tells files that were swapped, edited or mixed from another run
/// apart from the ones mapvis saved, not a deliberate forgery (whoever can
/// replace the files can rewrite the manifest too). A cryptographic hash
/// would add nothing against that and costs several times more; XXH3 runs
/// at memory speed (more than 10 GB/s), so the cost is reading the file.
/// The crate (`xxhash-rust`) is already built for polars.
pub fn checksum(path: &Path) -> io::Result<String> {
    let mut f = open_regular(path)?;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(format!("{:016x}", h.digest()))
}

/// The folder of the saved analysis `rel` belongs to (`.mapvis/analysis`,
/// `.mapvis/runs/NAME/analysis`), when it is a file of one.
fn analysis_root(rel: &Path) -> Option<PathBuf> {
    if !is_saved_analysis_file(rel) {
        return None;
    }
    let mut root = PathBuf::new();
    for c in rel.components() {
        root.push(c);
        if c.as_os_str() == "analysis" {
            return Some(root);
        }
    }
    None
}

/// Whether `rel` (relative to the working folder) is a file of a saved
/// analysis: under `.mapvis/`, inside a folder named `analysis` (the
/// folder's own analysis or a saved run's). These get a checksum.
fn is_saved_analysis_file(rel: &Path) -> bool {
    rel.starts_with(STATE_DIR) && rel.components().any(|c| c.as_os_str() == "analysis")
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
    inside(rel).then(|| rel.to_path_buf())
}

impl Manifest {
    /// Loads the manifest of `work_dir` (empty when there is none).
    pub fn load(work_dir: &Path) -> Result<Manifest, WorkdirError> {
        let path = manifest_path(work_dir);
        match read_regular(&path) {
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
        // A saved analysis is recorded whole, each time it is written: the
        // entries of the one it replaced (which may have had more files)
        // go, or they would be missed when it is checked.
        let roots: std::collections::BTreeSet<PathBuf> = paths
            .iter()
            .filter_map(|p| relative(work_dir, &work_dir.join(p)))
            .filter_map(|rel| analysis_root(&rel))
            .collect();
        m.files
            .retain(|k, _| !roots.iter().any(|r| Path::new(k).starts_with(r)));
        for p in paths {
            let abs = if p.is_absolute() {
                p.clone()
            } else {
                work_dir.join(p)
            };
            if let (Some(rel), Some(mut w)) = (relative(work_dir, &abs), Written::of(&abs)) {
                if is_saved_analysis_file(&rel) {
                    w.xxh3 = checksum(&abs).ok();
                }
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

/// What [`verify_saved_analysis`] could tell.
#[derive(Debug, PartialEq, Eq)]
pub enum Verified {
    /// Every file is the one mapvis saved, and no other file was added.
    Checked,
    /// The manifest lists no file of this analysis (saved by an older
    /// mapvis, or the manifest was removed): nothing could be checked.
    NotRecorded,
}

/// Checks that the saved analysis in `dir` (inside `work_dir`) holds
/// exactly the files mapvis saved there, as it saved them, before any of
/// them is read: a file swapped from another run, an edited
/// `summary.json` or a part file added to the access list would otherwise
/// mix two runs' counts and names.
///
/// Cost, decided for multi-GB analyses: every file is `lstat`ed (one
/// listing of the folder); a file whose size and modification time are
/// those recorded is taken as unchanged without being read, and only a
/// file whose time differs (copied, replaced, edited) is read and its
/// checksum compared. So a session that loads its own analysis reads no
/// more than before, while a folder copied without keeping times (`cp -r`)
/// is read once. A different size, a missing file, an added file, a link
/// or a checksum that differs refuses the analysis.
pub fn verify_saved_analysis(work_dir: &Path, dir: &Path) -> Result<Verified, WorkdirError> {
    let Some(prefix) = relative(work_dir, dir) else {
        return Ok(Verified::NotRecorded);
    };
    let m = Manifest::load(work_dir)?;
    let recorded: BTreeMap<PathBuf, &Written> = m
        .files
        .iter()
        .map(|(k, w)| (PathBuf::from(k), w))
        .filter(|(k, _)| k.starts_with(&prefix))
        .collect();
    if recorded.is_empty() {
        return Ok(Verified::NotRecorded);
    }
    let bad = |rel: &Path, why: String| WorkdirError::Tampered {
        dir: dir.to_path_buf(),
        file: work_dir.join(rel),
        why,
    };
    let mut on_disk = Vec::new();
    list_files(work_dir, &prefix, &mut on_disk).map_err(io_err("read", dir))?;
    for (rel, is_file) in &on_disk {
        if !is_file {
            return Err(bad(
                rel,
                "is not a regular file (a symbolic link, pipe or device was put in its place)"
                    .into(),
            ));
        }
        if !recorded.contains_key(rel) {
            return Err(bad(
                rel,
                "was not saved by mapvis (it was added after the analysis was saved)".into(),
            ));
        }
    }
    for (rel, w) in &recorded {
        let abs = work_dir.join(rel);
        let Some(now) = Written::of(&abs) else {
            return Err(bad(rel, "is missing".into()));
        };
        if now.size != w.size {
            return Err(bad(
                rel,
                format!("has {} bytes, but mapvis saved {} bytes", now.size, w.size),
            ));
        }
        if now.mtime_ns == w.mtime_ns {
            continue;
        }
        match &w.xxh3 {
            Some(sum) => {
                let got = checksum(&abs).map_err(io_err("read", &abs))?;
                if &got != sum {
                    return Err(bad(
                        rel,
                        format!("has changed since mapvis saved it (its checksum is {got}, mapvis saved {sum})"),
                    ));
                }
            }
            None => {
                return Err(bad(
                    rel,
                    "has changed since mapvis saved it (its modification time differs)".into(),
                ))
            }
        }
    }
    Ok(Verified::Checked)
}

/// Every entry under `work_dir/rel`, at any depth, relative to `work_dir`,
/// with whether it is a regular file (folders are descended, not listed;
/// links are listed, not followed).
fn list_files(work_dir: &Path, rel: &Path, out: &mut Vec<(PathBuf, bool)>) -> io::Result<()> {
    for e in fs::read_dir(work_dir.join(rel))? {
        let e = e?;
        let t = e.file_type()?;
        let r = rel.join(e.file_name());
        if t.is_dir() {
            list_files(work_dir, &r, out)?;
        } else {
            out.push((r, t.is_file()));
        }
    }
    Ok(())
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

/// Whether `rel`, a path from the manifest, names a file inside the
/// working folder by its path alone: relative, made only of names (no
/// `..`, no `.`, no root), and not empty. (Whether a folder on its way is
/// a link out of the folder is [`through_link`]'s question.)
fn inside(rel: &Path) -> bool {
    !rel.as_os_str().is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)))
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
    let mut out = clear_matching(work_dir, &|_| true)?;
    sweep_unfinished(work_dir, &mut out);
    Ok(out)
}

/// Removes the traces a run was writing under its temporary name
/// (`.mapvis/*.new.mvt`, and its forked children's `*.new.mvt.PID`) that
/// never reached the manifest: a full disk can stop the manifest's update
/// while the trace stays. Only regular files directly in `.mapvis/`, which
/// is mapvis's own folder, with the tool's temporary names, are removed;
/// a link there is left alone. Cost: one listing of `.mapvis/`.
fn sweep_unfinished(work_dir: &Path, out: &mut Cleared) {
    let state = work_dir.join(STATE_DIR);
    if fs::symlink_metadata(&state).map_or(true, |m| !m.is_dir()) {
        return;
    }
    let Ok(entries) = fs::read_dir(&state) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !is_unfinished_trace(&name) || !e.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let p = e.path();
        if out.removed.contains(&p) {
            continue;
        }
        match fs::remove_file(&p) {
            Ok(()) => out.removed.push(p),
            Err(err) => out.kept.push((p, err.to_string())),
        }
    }
}

/// `trace.new.mvt` or `trace.new.mvt.1234`: a trace still under the name
/// the tool writes it to.
fn is_unfinished_trace(name: &str) -> bool {
    match name.split_once(".new.mvt") {
        Some((stem, rest)) => {
            !stem.is_empty()
                && (rest.is_empty()
                    || rest.strip_prefix('.').is_some_and(|pid| {
                        !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
                    }))
        }
        None => false,
    }
}

/// [`clear`] of the files mapvis wrote under `dir` (a folder inside the
/// working folder, such as a saved run's) only; the manifest keeps the
/// others.
pub fn clear_under(work_dir: &Path, dir: &Path) -> Result<Cleared, WorkdirError> {
    let prefix = dir.strip_prefix(work_dir).unwrap_or(dir).to_path_buf();
    clear_matching(work_dir, &|rel| rel.starts_with(&prefix))
}

/// [`clear`] of the manifest's entries `chosen` picks (by their path
/// relative to the working folder).
fn clear_matching(
    work_dir: &Path,
    chosen: &dyn Fn(&Path) -> bool,
) -> Result<Cleared, WorkdirError> {
    let mut m = Manifest::load(work_dir)?;
    let mut out = Cleared::default();
    let mut dirs = Vec::new();
    for (entry, written) in std::mem::take(&mut m.files) {
        let rel = PathBuf::from(&entry);
        if !chosen(&rel) {
            m.files.insert(entry, written);
            continue;
        }
        if !inside(&rel) {
            out.kept.push((
                rel,
                format!(
                    "the manifest {} names it outside the working folder {} (an absolute path, or one with ..), and mapvis removes only files inside the folder; the entry was dropped",
                    manifest_path(work_dir).display(),
                    work_dir.display()
                ),
            ));
            continue;
        }
        let abs = work_dir.join(&rel);
        if through_link(work_dir, &rel) {
            out.kept
                .push((abs, "a folder on its way is a symbolic link".into()));
            continue;
        }
        match Written::of(&abs) {
            Some(now) if now.same_stamp(&written) => match fs::remove_file(&abs) {
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

/// A new id for an analysis of the trace `source`: XXH3-64 of the trace's
/// identity, the time now and the process id, as 16 hex digits. Two
/// analyses of one trace get different ids (they may differ: another
/// program, other sources, another mapvis).
pub fn new_analysis_id(source: Option<&SourceId>) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let text = format!(
        "{}\n{now}\n{}",
        source.map(SourceId::describe).unwrap_or_default(),
        std::process::id()
    );
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()))
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

    /// A trace left under the tool's temporary name, never recorded (the
    /// disk filled before the manifest could be written), is removed by
    /// `clear`; a link with such a name and other files are left alone.
    #[test]
    fn clear_removes_unrecorded_unfinished_traces_only() {
        let d = tempfile::tempdir().unwrap();
        let state = d.path().join(STATE_DIR);
        fs::create_dir(&state).unwrap();
        let outside = d.path().join("outside.txt");
        fs::write(&outside, b"keep").unwrap();
        for name in ["trace.new.mvt", "trace.new.mvt.4242"] {
            fs::write(state.join(name), b"cut").unwrap();
        }
        for name in ["notes.new.mvt.txt", "x.mvt", ".new.mvt"] {
            fs::write(state.join(name), b"mine").unwrap();
        }
        std::os::unix::fs::symlink(&outside, state.join("link.new.mvt")).unwrap();
        let c = clear(d.path()).unwrap();
        let mut removed: Vec<String> = c
            .removed
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        removed.sort();
        assert_eq!(removed, ["trace.new.mvt", "trace.new.mvt.4242"]);
        for name in ["notes.new.mvt.txt", "x.mvt", ".new.mvt", "link.new.mvt"] {
            assert!(fs::symlink_metadata(state.join(name)).is_ok(), "{name}");
        }
        assert_eq!(fs::read(&outside).unwrap(), b"keep");
    }

    /// A new analysis with fewer files than the one it replaced is
    /// checked against its own files only; a file changed since is
    /// refused, naming it.
    #[test]
    fn a_saved_analysis_is_recorded_whole_and_checked() {
        let d = tempfile::tempdir().unwrap();
        let w = d.path();
        let dir = w.join(".mapvis/analysis");
        let (a, b) = (dir.join("a.parquet"), dir.join("accesses/b.parquet"));
        write_file(&a, b"old a").unwrap();
        write_file(&b, b"old b").unwrap();
        Manifest::record(w, &[a.clone(), b.clone()]).unwrap();
        assert_eq!(verify_saved_analysis(w, &dir).unwrap(), Verified::Checked);
        fs::remove_file(&b).unwrap();
        write_file(&a, b"new a").unwrap();
        Manifest::record(w, std::slice::from_ref(&a)).unwrap();
        assert_eq!(verify_saved_analysis(w, &dir).unwrap(), Verified::Checked);
        fs::write(&a, b"NEW A").unwrap();
        let e = verify_saved_analysis(w, &dir).unwrap_err().to_string();
        assert!(
            e.contains("a.parquet has changed since mapvis saved it"),
            "{e}"
        );
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
    fn a_link_or_pipe_in_the_folder_is_replaced_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside.txt");
        fs::write(&outside, b"the user's").unwrap();
        let link = d.path().join("w/figures/index.html");
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        write_file(&link, b"mapvis's").unwrap();
        assert_eq!(fs::read(&outside).unwrap(), b"the user's");
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_file());
        assert_eq!(fs::read(&link).unwrap(), b"mapvis's");
        // A named pipe is replaced without being opened (which would wait
        // for a reader).
        let pipe = d.path().join("w/visinfo/memory_stats.csv");
        fs::create_dir_all(pipe.parent().unwrap()).unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(&pipe)
            .status()
            .unwrap()
            .success());
        write_file(&pipe, b"csv").unwrap();
        assert_eq!(fs::read(&pipe).unwrap(), b"csv");
        // A folder in the file's place is refused, naming it.
        let e = write_file(d.path().join("w/figures").as_path(), b"x").unwrap_err();
        assert!(e.to_string().contains("w/figures"), "{e}");
    }

    #[test]
    fn a_named_export_follows_its_link() {
        let d = tempfile::tempdir().unwrap();
        let mine = d.path().join("mine.txt");
        fs::write(&mine, b"old").unwrap();
        let link = d.path().join("export.txt");
        std::os::unix::fs::symlink(&mine, &link).unwrap();
        let mut p = Pending::named(&link).unwrap();
        p.file().write_all(b"new").unwrap();
        p.commit().unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&mine).unwrap(), b"new");
    }

    #[test]
    fn the_lock_replaces_a_link() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside.txt");
        fs::write(&outside, b"the user's").unwrap();
        let w = d.path().join("w");
        fs::create_dir_all(w.join(STATE_DIR)).unwrap();
        std::os::unix::fs::symlink(&outside, w.join(STATE_DIR).join(LOCK_FILE)).unwrap();
        let lock = FolderLock::acquire(&w, &mut |_| {}, &|| true).unwrap();
        assert_eq!(fs::read(&outside).unwrap(), b"the user's");
        let m = fs::symlink_metadata(w.join(STATE_DIR).join(LOCK_FILE)).unwrap();
        assert!(m.file_type().is_file());
        drop(lock);
    }

    #[test]
    fn clear_refuses_entries_outside_the_folder() {
        let d = tempfile::tempdir().unwrap();
        let w = d.path().join("w");
        let victim = d.path().join("victim.txt");
        fs::write(&victim, b"the user's").unwrap();
        let written = Written::of(&victim).unwrap();
        let mut m = Manifest::load(&w).unwrap();
        for entry in [
            "../victim.txt",
            &victim.to_string_lossy(),
            "./../victim.txt",
        ] {
            m.files.insert(entry.to_string(), written.clone());
        }
        fs::create_dir_all(w.join(STATE_DIR)).unwrap();
        m.save(&w).unwrap();
        let c = clear(&w).unwrap();
        assert!(c.removed.is_empty());
        assert_eq!(c.kept.len(), 3, "{:?}", c.kept);
        assert!(c
            .kept
            .iter()
            .all(|(_, why)| why.contains("outside the working folder")));
        assert_eq!(fs::read(&victim).unwrap(), b"the user's");
    }

    #[test]
    fn a_pipe_is_not_read() {
        let d = tempfile::tempdir().unwrap();
        let pipe = d.path().join("trace.txt");
        assert!(std::process::Command::new("mkfifo")
            .arg(&pipe)
            .status()
            .unwrap()
            .success());
        let e = open_regular(&pipe).unwrap_err();
        assert_eq!(e.to_string(), "it is a named pipe, not a regular file");
    }

    #[test]
    fn full_disk_is_named() {
        let e = io::Error::from_raw_os_error(28);
        let m = describe_io("write", Path::new("/w/visinfo/order_data.csv"), &e);
        assert!(m.contains("the disk holding /w/visinfo is full"), "{m}");
    }
}
