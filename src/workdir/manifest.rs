//! The manifest of the files mapvis wrote in a working folder (the only
//! files `clear_analysis` may remove), the check of a saved analysis
//! against it, and clearing.
use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use super::error::{io_err, WorkdirError};
use super::layout::{WorkFolder, ANALYSIS_DIR, MANIFEST_FILE, STATE_DIR};
use super::write::{open_regular, read_regular, write_file};

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
            mtime_ns: super::source::mtime_ns(&m)?,
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
        if c.as_os_str() == ANALYSIS_DIR {
            return Some(root);
        }
    }
    None
}

/// Whether `rel` (relative to the working folder) is a file of a saved
/// analysis: under `.mapvis/`, inside a folder named `analysis` (the
/// folder's own analysis or a saved run's). These get a checksum.
fn is_saved_analysis_file(rel: &Path) -> bool {
    rel.starts_with(STATE_DIR) && rel.components().any(|c| c.as_os_str() == ANALYSIS_DIR)
}

/// Whether the manifest keeps a checksum of `rel`: a saved analysis' file
/// or any file of a saved run (its trace and `run.json` too), so that
/// [`check_files`] can tell a run's files from copies with the same size
/// and time.
fn keeps_checksum(rel: &Path) -> bool {
    is_saved_analysis_file(rel) || rel.starts_with(Path::new(STATE_DIR).join("runs"))
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
        let pairs: Vec<(PathBuf, PathBuf)> = paths.iter().map(|p| (p.clone(), p.clone())).collect();
        Manifest::record_as(work_dir, &pairs)
    }

    /// [`Manifest::record`] of files about to be renamed: each `(now,
    /// then)` records the file at `now` as it is, under the path `then`
    /// it will have. A folder built under a temporary name is recorded
    /// before the rename that puts it in place, so a kill between the two
    /// leaves either no folder or one whose files are all listed.
    pub fn record_as(work_dir: &Path, pairs: &[(PathBuf, PathBuf)]) -> Result<(), WorkdirError> {
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
        let abs = |p: &PathBuf| {
            if p.is_absolute() {
                p.clone()
            } else {
                work_dir.join(p)
            }
        };
        let roots: std::collections::BTreeSet<PathBuf> = pairs
            .iter()
            .filter_map(|(_, p)| relative(work_dir, &abs(p)))
            .filter_map(|rel| analysis_root(&rel))
            .collect();
        m.files
            .retain(|k, _| !roots.iter().any(|r| Path::new(k).starts_with(r)));
        for (now, then) in pairs {
            let (now, then) = (abs(now), abs(then));
            if let (Some(rel), Some(mut w)) = (relative(work_dir, &then), Written::of(&now)) {
                // A run's trace of 256 MB or more keeps the check by size
                // and time (its run is not hashed whole either).
                if is_saved_analysis_file(&rel) || (keeps_checksum(&rel) && w.size < 256 << 20) {
                    w.xxh3 = checksum(&now).ok();
                }
                m.files.insert(rel.to_string_lossy().into_owned(), w);
            }
        }
        m.save(work_dir)
    }

    /// The entries under `prefix` (relative to the working folder), by
    /// path.
    fn entries_under(&self, prefix: &Path) -> BTreeMap<PathBuf, &Written> {
        self.files
            .iter()
            .map(|(k, w)| (PathBuf::from(k), w))
            .filter(|(k, _)| k.starts_with(prefix))
            .collect()
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
    let recorded = m.entries_under(&prefix);
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

/// The files of a folder checked against the manifest by
/// [`check_files`], each relative to the working folder.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FileCheck {
    /// As mapvis wrote them.
    pub ok: Vec<PathBuf>,
    /// Changed since, each with how.
    pub changed: Vec<(PathBuf, String)>,
    /// Listed in the manifest but not there.
    pub missing: Vec<PathBuf>,
    /// There but not written by mapvis (or not a regular file).
    pub added: Vec<PathBuf>,
}

/// The total size of the regular files under `dir` (not following links).
/// Cost: one `lstat` per file.
pub fn files_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => todo.push(e.path()),
                Ok(t) if t.is_file() => total += e.metadata().map_or(0, |m| m.len()),
                _ => {}
            }
        }
    }
    total
}

/// Checks every file under `dir` (inside `work_dir`) against the
/// manifest, listing all that differ rather than stopping at the first.
/// With `hash`, every file whose checksum the manifest keeps is read and
/// hashed, whatever its time, so a file edited with its size kept and its
/// time restored (or a folder copied with `cp -a` from an edited one) is
/// found; without, as [`verify_saved_analysis`]: a file whose size and
/// time are those recorded is taken as unchanged. Cost with `hash`:
/// reading every file once (XXH3 runs faster than the disk).
pub fn check_files(work_dir: &Path, dir: &Path, hash: bool) -> Result<FileCheck, WorkdirError> {
    let mut out = FileCheck::default();
    let Some(prefix) = relative(work_dir, dir) else {
        return Ok(out);
    };
    let m = Manifest::load(work_dir)?;
    let recorded = m.entries_under(&prefix);
    let mut on_disk = Vec::new();
    if fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        list_files(work_dir, &prefix, &mut on_disk).map_err(io_err("read", dir))?;
    }
    for (rel, is_file) in &on_disk {
        if !is_file || !recorded.contains_key(rel) {
            out.added.push(rel.clone());
        }
    }
    for (rel, w) in &recorded {
        let abs = work_dir.join(rel);
        let Some(now) = Written::of(&abs) else {
            if fs::symlink_metadata(&abs).is_err() {
                out.missing.push(rel.clone());
            }
            continue;
        };
        if now.size != w.size {
            out.changed.push((
                rel.clone(),
                format!("{} bytes, mapvis wrote {}", now.size, w.size),
            ));
            continue;
        }
        let same_time = now.mtime_ns == w.mtime_ns;
        match &w.xxh3 {
            Some(sum) if hash || !same_time => {
                let got = checksum(&abs).map_err(io_err("read", &abs))?;
                if &got == sum {
                    out.ok.push(rel.clone());
                } else {
                    out.changed.push((
                        rel.clone(),
                        format!("its checksum is {got}, mapvis wrote {sum}"),
                    ));
                }
            }
            None if !same_time => out
                .changed
                .push((rel.clone(), "its modification time differs".into())),
            _ => out.ok.push(rel.clone()),
        }
    }
    out.added.sort();
    Ok(out)
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
    for (dir, _) in WorkFolder::new(work_dir.to_path_buf()).half_made_runs() {
        remove_half_made(work_dir, &dir, &mut out);
    }
    Ok(out)
}

/// Removes `dir`, a half-made run of `.mapvis/runs/` (see
/// [`WorkFolder::half_made_runs`]), whole: its files were never all in
/// the manifest (a save that did not finish), and the folder is mapvis's
/// own, built by `save_run`. Nothing is followed: a link inside is removed
/// as a link, and a folder on the way that is a link is left alone.
/// Returns the number of files removed.
pub fn remove_half_made(work_dir: &Path, dir: &Path, out: &mut Cleared) -> usize {
    let Some(rel) = relative(work_dir, dir) else {
        return 0;
    };
    if through_link(work_dir, &rel.join("x"))
        || fs::symlink_metadata(dir).map_or(true, |m| !m.is_dir())
    {
        out.kept.push((
            dir.to_path_buf(),
            "a folder on its way is a symbolic link".into(),
        ));
        return 0;
    }
    let mut files = Vec::new();
    count_files(dir, &mut files);
    // `remove_dir_all` removes links as links, never what they point at.
    match fs::remove_dir_all(dir) {
        Ok(()) => {
            let n = files.len();
            out.removed.extend(files);
            n
        }
        Err(e) => {
            out.kept.push((dir.to_path_buf(), e.to_string()));
            0
        }
    }
}

/// Puts the run built in `staging` (its files `written`) in place as
/// `run`: records the files in the manifest under their final paths, then
/// renames the folder. A kill between the two leaves no run folder (the
/// entries name files that are not there, and a later save replaces
/// them); after the rename every file of the run is listed.
pub fn install_run(
    work_dir: &Path,
    staging: &super::Run,
    run: &super::Run,
    written: &[PathBuf],
) -> Result<(), WorkdirError> {
    let pairs: Vec<(PathBuf, PathBuf)> = written
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(staging.dir()).unwrap_or(p);
            (p.clone(), run.dir().join(rel))
        })
        .collect();
    Manifest::record_as(work_dir, &pairs)?;
    fs::rename(staging.dir(), run.dir()).map_err(io_err("put in place", run.dir()))
}

/// Every entry under `dir` that is not a folder (links included, not
/// followed).
fn count_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            count_files(&e.path(), out);
        } else {
            out.push(e.path());
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
}
