//! The folder lock, which keeps two mapvis sessions from interleaving
//! their writes in one working folder, and the refusal of folders that
//! are symbolic links out of it.
use std::fs::{self, File};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::{io_err, WorkdirError};
use super::layout::{WorkFolder, LOCK_FILE, STATE_DIR};
use super::write::{not_regular, write_file};

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
        super::safe::SafeDir::open_under(work_dir, Path::new(STATE_DIR), true)?;
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

/// Refuses a working folder where a folder mapvis writes into
/// ([`WorkFolder::own_folders`], or an entry of `.mapvis/runs/`) is a
/// symbolic link: files written there would land wherever the link
/// points, outside the working folder. Refusing (rather than replacing the
/// link) leaves the user's link and its target as they were. The shell
/// calls it before every command that writes (not `clear_analysis`, which
/// removes nothing through a link); [`FolderLock::acquire`] checks
/// `.mapvis/` itself, where the lock file is. Cost: a few `lstat` calls
/// and one listing of `.mapvis/runs/`.
pub fn refuse_linked_folders(work_dir: &Path) -> Result<(), WorkdirError> {
    for rel in WorkFolder::own_folders() {
        refuse_linked(work_dir, &rel)?;
    }
    for rel in WorkFolder::new(work_dir.to_path_buf()).run_entries() {
        refuse_linked(work_dir, &rel)?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
