//! The one way mapvis creates a file or a folder in the working folder:
//! every folder from the working folder down is opened by its descriptor,
//! one name at a time, without following a symbolic link (`O_NOFOLLOW`),
//! and a file is created only as a new name (`O_CREAT | O_EXCL`) in the
//! folder so opened. A link that someone placed anywhere on the way
//! (`.mapvis/bin -> ~/bin`, `figures/run_x -> /tmp`) is therefore never
//! passed through: the write is refused, naming the link.
//!
//! The working folder is the process's working folder, the one a mapvis
//! session works in (it follows a Tcl `cd`). A folder outside it (a path
//! the user named, such as `export_memtrace`'s FILE) is taken as given,
//! links included: the user chose it. The working folder's own path may
//! hold links above it (`/home -> /data/home`); only the names below it
//! are checked.
//!
//! Cost: one `openat` (and, when creating, one `mkdirat`) per folder on
//! the way, a few microseconds; mapvis writes a few hundred files at most
//! per command.
//!
//! What this does not guard against: someone racing mapvis, who swaps a
//! folder for a link between two of its system calls with the folder
//! already open is harmless (mapvis holds the descriptor), but a program
//! run by the tool that rewrites `.mapvis/` while it runs is outside this
//! guarantee. The folder's lock keeps two mapvis sessions apart.
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags, CWD};

use super::error::{io_err, WorkdirError};

/// An open folder of (or outside) the working folder, reached without
/// following a link below the working folder. Files are created in it by
/// name relative to its descriptor, so a folder renamed or replaced by a
/// link after it was opened does not redirect them.
#[derive(Debug)]
pub struct SafeDir {
    fd: OwnedFd,
    path: PathBuf,
}

/// Flags of a folder opened on the way: never follow a link, keep the
/// descriptor from child processes.
fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

impl SafeDir {
    /// Opens the folder `dir`, creating it and the folders above it when
    /// `create` (mode 0755 less the umask). Below the working folder no
    /// name on the way may be a symbolic link nor `..`:
    /// [`WorkdirError::LinkedFolder`] names the link.
    pub fn open(dir: &Path, create: bool) -> Result<SafeDir, WorkdirError> {
        let abs = absolute(dir);
        match std::env::current_dir() {
            Ok(cwd) if abs.starts_with(&cwd) && abs != cwd => {
                let rel = abs.strip_prefix(&cwd).unwrap_or(Path::new(""));
                SafeDir::open_under(&cwd, rel, create)
            }
            _ => SafeDir::open_as_given(&abs, create),
        }
    }

    /// Opens `root/rel`, creating it when `create`: `root` as given, then
    /// each name of `rel` without following a link.
    pub fn open_under(root: &Path, rel: &Path, create: bool) -> Result<SafeDir, WorkdirError> {
        let mut here = SafeDir::open_as_given(root, create)?;
        for c in rel.components() {
            match c {
                Component::Normal(name) => here = here.subdir(name, create, root)?,
                Component::CurDir => {}
                _ => {
                    return Err(io_err("open the folder", &root.join(rel))(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "it leaves the working folder (a '..' or an absolute name)",
                    )))
                }
            }
        }
        Ok(here)
    }

    /// A folder outside the working folder, or the working folder itself,
    /// as given (links followed), created with its parents when `create`.
    fn open_as_given(dir: &Path, create: bool) -> Result<SafeDir, WorkdirError> {
        if create {
            std::fs::create_dir_all(dir).map_err(io_err("create the folder", dir))?;
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(CWD, dir, flags, Mode::empty())
            .map_err(|e| io_err("open the folder", dir)(e.into()))?;
        Ok(SafeDir {
            fd,
            path: dir.to_path_buf(),
        })
    }

    /// The folder `name` inside this one, created when `create` and
    /// missing; `root` is the working folder, for the message when `name`
    /// is a link.
    fn subdir(&self, name: &OsStr, create: bool, root: &Path) -> Result<SafeDir, WorkdirError> {
        let path = self.path.join(name);
        if create {
            match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o755)) {
                Ok(()) => {}
                Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(io_err("create the folder", &path)(e.into())),
            }
        }
        match rustix::fs::openat(&self.fd, name, dir_flags(), Mode::empty()) {
            Ok(fd) => Ok(SafeDir { fd, path }),
            Err(e) => Err(self.why_not_a_folder(name, e, root)),
        }
    }

    /// The error for `name`, which could not be opened as a folder:
    /// [`WorkdirError::LinkedFolder`] when it is a symbolic link.
    fn why_not_a_folder(&self, name: &OsStr, e: rustix::io::Errno, root: &Path) -> WorkdirError {
        let path = self.path.join(name);
        let kind = rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)
            .map(|s| rustix::fs::FileType::from_raw_mode(s.st_mode));
        if kind.is_ok_and(|k| !k.is_symlink() && !k.is_dir()) {
            // A file in the folder's place: what `mkdir` says of it.
            return io_err("create the folder", &path)(rustix::io::Errno::EXIST.into());
        }
        if kind.is_ok_and(|k| k.is_symlink()) {
            let target = rustix::fs::readlinkat(&self.fd, name, Vec::new())
                .map(|t| PathBuf::from(OsString::from_vec(t.into_bytes())))
                .unwrap_or_default();
            return WorkdirError::LinkedFolder {
                link: path,
                target,
                work_dir: root.to_path_buf(),
            };
        }
        io_err("open the folder", &path)(e.into())
    }

    /// The folder's path, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates `name` in this folder as a new regular file (mode 0644 less
    /// the umask), open for writing. Fails with `AlreadyExists` when any
    /// entry (a file, a link, a pipe) has that name: nothing existing is
    /// ever opened.
    pub fn create_new(&self, name: &OsStr) -> io::Result<File> {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o644))?;
        Ok(File::from(fd))
    }

    /// Creates a new file named `.{stem}.{unique}.partial` in this folder
    /// (see [`SafeDir::create_new`]); returns it and its name.
    pub fn create_temp(&self, stem: &OsStr) -> io::Result<(File, OsString)> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let mut name = OsString::from(".");
            name.push(stem);
            name.push(format!(".{}-{n}.partial", std::process::id()));
            match self.create_new(&name) {
                Ok(f) => return Ok((f, name)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Renames `from` to `to`, both in this folder. Whatever has the name
    /// `to` (a file, a link) is replaced, never followed.
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        rustix::fs::renameat(&self.fd, from, &self.fd, to)?;
        Ok(())
    }

    /// Removes the entry `name` of this folder when it is not a folder (a
    /// link is removed, not what it points at). A missing entry is no
    /// error.
    pub fn remove_file(&self, name: &OsStr) -> io::Result<()> {
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// The names in this folder (not `.` nor `..`).
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        let fd = rustix::fs::openat(&self.fd, ".", dir_flags(), Mode::empty())?;
        let mut out = Vec::new();
        for e in rustix::fs::Dir::read_from(fd)? {
            let e = e?;
            let name = OsStr::from_bytes(e.file_name().to_bytes()).to_os_string();
            if name != "." && name != ".." {
                out.push(name);
            }
        }
        Ok(out)
    }
}

/// `p` made absolute against the process's working folder (not resolved:
/// no link is followed).
fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Creates the folder `dir` (and those above it) of the working folder
/// without passing through a link (see [`SafeDir::open`]); returns its
/// path. The replacement for `fs::create_dir_all` in every stage.
pub fn create_dir(dir: &Path) -> Result<PathBuf, WorkdirError> {
    SafeDir::open(dir, true).map(|d| d.path)
}

/// Removes `path`, a file (or a link) of the working folder, reached
/// without following links; a missing file is no error.
pub fn remove_file(path: &Path) -> Result<(), WorkdirError> {
    let (dir, name) = split(path)?;
    match SafeDir::open(&dir, false) {
        Ok(d) => d.remove_file(&name).map_err(io_err("remove", path)),
        Err(WorkdirError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// The folder and the name of the file `path`.
pub(super) fn split(path: &Path) -> Result<(PathBuf, OsString), WorkdirError> {
    let name = path.file_name().ok_or_else(|| {
        io_err("write", path)(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it does not name a file",
        ))
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name.to_os_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_link_on_the_way_is_refused_and_nothing_is_written_through_it() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let root = d.path().join("w");
        std::fs::create_dir_all(root.join(".mapvis")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join(".mapvis/bin")).unwrap();
        let e = SafeDir::open_under(&root, Path::new(".mapvis/bin/sub"), true).unwrap_err();
        assert!(
            matches!(&e, WorkdirError::LinkedFolder { link, target, .. }
                if link.ends_with(".mapvis/bin") && target == &outside),
            "{e}"
        );
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        let e = SafeDir::open_under(&root, Path::new("../outside"), true).unwrap_err();
        assert!(e.to_string().contains("leaves the working folder"), "{e}");
    }

    #[test]
    fn files_are_created_new_and_renamed_in_place() {
        let d = tempfile::tempdir().unwrap();
        let outside = d.path().join("outside.txt");
        std::fs::write(&outside, b"the user's").unwrap();
        let dir = SafeDir::open_under(d.path(), Path::new("w/figures"), true).unwrap();
        std::os::unix::fs::symlink(&outside, dir.path().join("a.html")).unwrap();
        let e = dir.create_new(OsStr::new("a.html")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        let (mut f, tmp) = dir.create_temp(OsStr::new("a.html")).unwrap();
        f.write_all(b"mapvis's").unwrap();
        dir.rename(&tmp, OsStr::new("a.html")).unwrap();
        assert_eq!(std::fs::read(&outside).unwrap(), b"the user's");
        assert_eq!(
            std::fs::read(dir.path().join("a.html")).unwrap(),
            b"mapvis's"
        );
        assert_eq!(dir.names().unwrap(), vec![OsString::from("a.html")]);
    }
}
