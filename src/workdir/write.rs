//! Files written whole or not at all, and files read only when they are
//! regular files: the one safe way mapvis writes and reads its own files
//! in the working folder.
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use super::error::{io_err, WorkdirError};
use super::safe::{split, SafeDir};

/// A file being written under a temporary name in its final folder. It
/// replaces `target` only on [`Pending::commit`]; dropped without a commit
/// (an error, a panic) it is removed and `target` is untouched.
///
/// A file of the working folder ([`Pending::new`]) is only ever written as
/// a new regular file in a folder reached without following links
/// ([`SafeDir`]): a symbolic link on the way (`figures/run_x -> /tmp`) is
/// refused, naming it. The temporary file is created with `O_CREAT |
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
        file: File,
        dir: SafeDir,
        tmp: OsString,
        name: OsString,
        done: bool,
    },
    Direct(File),
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Inner::Temp {
            dir,
            tmp,
            done: false,
            ..
        } = &self.inner
        {
            let _ = dir.remove_file(tmp);
        }
    }
}

impl Pending {
    /// Starts writing `path`, a file of the working folder, as a new
    /// regular file: creates its folder if needed (without following a
    /// link, see [`SafeDir::open`]) and a temporary file beside it. A
    /// symbolic link, named pipe or device node at `path` is never opened;
    /// [`Pending::commit`] replaces it.
    pub fn new(path: &Path) -> Result<Pending, WorkdirError> {
        if fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
            return Err(io_err("write", path)(io::Error::new(
                io::ErrorKind::IsADirectory,
                "a folder has its name; move the folder away",
            )));
        }
        let (dir, _) = split(path)?;
        let dir = SafeDir::open(&dir, true)?;
        Pending::beside(dir, path, path)
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
        let (dir, _) = split(&target)?;
        let dir = SafeDir::open(&dir, true)?;
        Pending::beside(dir, path, &target)
    }

    /// A temporary file in `dir`, the folder of `target`, to be renamed to
    /// `target`; `shown` is the path messages name.
    fn beside(dir: SafeDir, shown: &Path, target: &Path) -> Result<Pending, WorkdirError> {
        let (_, name) = split(target)?;
        let (file, tmp) = dir.create_temp(&name).map_err(io_err("write", shown))?;
        Ok(Pending {
            inner: Inner::Temp {
                file,
                dir,
                tmp,
                name,
                done: false,
            },
            shown: shown.to_path_buf(),
        })
    }

    /// The open temporary file.
    pub fn file(&mut self) -> &mut File {
        match &mut self.inner {
            Inner::Temp { file, .. } => file,
            Inner::Direct(f) => f,
        }
    }

    /// A second handle on the temporary file (for a writer thread).
    pub fn handle(&self) -> Result<File, WorkdirError> {
        let f = match &self.inner {
            Inner::Temp { file, .. } => file,
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
    pub fn commit(mut self) -> Result<PathBuf, WorkdirError> {
        if let Inner::Temp {
            dir,
            tmp,
            name,
            done,
            ..
        } = &mut self.inner
        {
            dir.rename(tmp, name)
                .map_err(|e| io_err("write", &self.shown)(e))?;
            *done = true;
        }
        Ok(self.shown.clone())
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
pub(super) fn not_regular(m: &fs::Metadata) -> io::Error {
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
}
