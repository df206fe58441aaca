//! The second hostile round: a working folder prepared by someone else,
//! and a traced program that turns on the tool. Nothing outside the
//! working folder is ever written, and what mapvis says about the files it
//! keeps is true. Every case runs the real `mapvis` binary and the real
//! Valgrind tool.
mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::*;
use mapvis::trace::record::{EndState, Event, Op, TraceReader};

/// `mapvis -c script` in `dir`, with a HOME of its own beside it (so no
/// history or setting leaks in, and mapvis's cache is not in the folder).
fn session(dir: &Path, script: &str) -> Output {
    let home = dir.with_extension("home");
    std::fs::create_dir_all(&home).unwrap();
    Command::new(env!("CARGO_BIN_EXE_mapvis"))
        .current_dir(dir)
        .env("HOME", &home)
        .env_remove("MAPVIS_HISTORY")
        .stdin(Stdio::null())
        .args(["-c", script])
        .output()
        .expect("mapvis runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Everything under `dir`: relative path to (kind, content of files,
/// target of links).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            let t = e.file_type().unwrap();
            let what = if t.is_symlink() {
                format!("link {}", std::fs::read_link(&p).unwrap().display())
            } else if t.is_dir() {
                todo.push(p);
                "folder".to_string()
            } else {
                let m = std::fs::metadata(&p).unwrap();
                let mut h = std::collections::hash_map::DefaultHasher::new();
                std::hash::Hash::hash(&std::fs::read(&p).unwrap(), &mut h);
                format!(
                    "file of {} bytes, hash {:x}, mode {:o}",
                    m.len(),
                    std::hash::Hasher::finish(&h),
                    m.mode() & 0o7777
                )
            };
            out.insert(rel, what);
        }
    }
    out
}

/// A folder outside the working folder with a file and a folder the
/// links point at: (its snapshot, the file, the folder).
fn outside(base: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let out = base.join("outside");
    std::fs::create_dir_all(out.join("folder")).unwrap();
    std::fs::write(out.join("victim.txt"), b"the user's own file\n").unwrap();
    std::fs::write(out.join("folder/keep.txt"), b"kept\n").unwrap();
    (out.clone(), out.join("victim.txt"), out.join("folder"))
}

/// Stores to `[base, base + len)` in a trace, and whether it is complete.
fn stores_into(trace: &Path, base: u64, len: u64) -> (u64, bool) {
    let mut r = TraceReader::open(trace).expect("the trace has a header");
    let mut n = 0;
    while let Some(e) = r.next_event().expect("the trace is not corrupt") {
        if let Event::Access(a) = e {
            if a.op == Op::Store && a.addr >= base && a.addr < base + len {
                n += 1;
            }
        }
    }
    (n, matches!(r.end_state(), EndState::Complete))
}

/// The first heap block of a trace: (address, size).
fn first_block(trace: &Path) -> (u64, u64) {
    let mut r = TraceReader::open(trace).unwrap();
    while let Some(e) = r.next_event().unwrap() {
        if let Event::Alloc(a) = e {
            return (a.addr, a.size);
        }
    }
    panic!("no heap block in {}", trace.display())
}

/// The pid the system will give next (its last one plus one).
fn next_pid() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .unwrap()
        .trim()
        .parse::<u32>()
        .unwrap()
        + 1
}

/// Item 1 and 2: the tool's own trace files. `.mapvis/hpcmp.mvt`, and the
/// names a forked child's trace gets (`hpcmp.mvt.PID`) for the next 3000
/// pids, are links to a file outside; `export_hpcmp` on a program that
/// forks writes both processes' traces inside, and the file outside keeps
/// its content.
#[test]
fn the_tool_never_writes_through_a_link_left_for_its_trace() {
    let (dir, exe) = compile("tests/c/safety_fork.c", &[]);
    let (out, victim, _) = outside(dir.path());
    let before = snapshot(&out);
    let w = dir.path().join("w");
    std::fs::create_dir_all(w.join(".mapvis")).unwrap();
    symlink(&victim, w.join(".mapvis/hpcmp.mvt")).unwrap();
    let first = next_pid();
    for pid in first..first + 3000 {
        symlink(&victim, w.join(format!(".mapvis/hpcmp.mvt.{pid}"))).unwrap();
    }
    let o = session(
        &w,
        &format!("load_exe {}; export_hpcmp o.json", exe.display()),
    );
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    assert_eq!(snapshot(&out), before, "{said}");
    let trace = w.join(".mapvis/hpcmp.mvt");
    assert!(std::fs::symlink_metadata(&trace).unwrap().is_file());
    let (a, len) = first_block(&trace);
    assert_eq!(len, 256);
    assert_eq!(stores_into(&trace, a, len), (64 + 16, true));
    let links_left = std::fs::read_dir(w.join(".mapvis"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_symlink())
        .count();
    assert_eq!(links_left, 0, "the links in the tool's way are removed");
}

/// Item 3: `.mapvis/bin` and `.mapvis/include` linked to folders outside.
/// `compile_exe` refuses, naming the link, and writes nothing there; with
/// the links gone it compiles.
#[test]
fn compile_exe_refuses_linked_program_and_header_folders() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _, folder) = outside(dir.path());
    let before = snapshot(&out);
    let w = dir.path().join("w");
    std::fs::create_dir_all(w.join(".mapvis")).unwrap();
    std::fs::copy(root().join("tests/c/hostile_walk.c"), w.join("t.c")).unwrap();
    for linked in [".mapvis/bin", ".mapvis/include"] {
        let _ = std::fs::remove_dir_all(w.join(linked));
        symlink(&folder, w.join(linked)).unwrap();
        let o = session(&w, "compile_exe t.c");
        let said = text(&o);
        assert!(!o.status.success(), "{said}");
        assert!(
            said.contains(&format!("{linked} is a symbolic link")),
            "{said}"
        );
        assert_eq!(snapshot(&out), before, "{said}");
        std::fs::remove_file(w.join(linked)).unwrap();
    }
    let o = session(&w, "compile_exe t.c");
    assert!(o.status.success(), "{}", text(&o));
    assert!(w.join(".mapvis/bin/t").is_file());
}

/// Item 13: a traced program that writes to every descriptor from 3 to
/// 4095 inside the region cannot reach the trace: it is complete and
/// holds the program's 100 stores into its array.
#[test]
fn the_traced_program_cannot_write_into_its_trace() {
    let (dir, exe) = compile("tests/c/fd_scribble.c", &[]);
    let o = session(
        dir.path(),
        &format!("load_exe {}; run_gleipnir", exe.display()),
    );
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    let trace = dir.path().join(".mapvis/trace.mvt");
    let (a, len) = first_block(&trace);
    assert_eq!(len, 400);
    assert_eq!(stores_into(&trace, a, len), (100, true), "{said}");
}

/// Item 13, second part: a program that truncates `.mapvis/trace.mvt` by
/// name, and traces no region, is not told that the previous trace is
/// kept.
#[test]
fn a_kept_trace_the_program_cut_is_not_called_kept() {
    let (dir, exe) = compile("tests/c/fd_scribble.c", &[]);
    let o = session(
        dir.path(),
        &format!(
            "load_exe {}; run_gleipnir; set_arguments cut; run_gleipnir",
            exe.display()
        ),
    );
    let said = text(&o);
    assert!(!o.status.success(), "{said}");
    assert!(!said.contains("is kept"), "{said}");
    assert!(
        said.contains("was changed or removed while the program ran"),
        "{said}"
    );
}

/// The commands of the walk, each run as its own `mapvis -c`, in order.
/// `save_run` is preceded by a `drop_run` so that it can run again.
const STEPS: &[&str] = &[
    "compile_exe w.c",
    "run_gleipnir",
    "memory_trace_analysis",
    "filtering_process save",
    "memory_stats save",
    "cache_stats save",
    "complete_memory_access_pattern save",
    "2d_memory_access_pattern A 32 8 save",
    "3d_memory_access_pattern A 32 4 8 save",
    "sharing_stats save",
    "catch {drop_run x}; save_run x",
    "catch {drop_run y}; save_run y",
    "compare_runs x y save",
    "plot_runs accesses",
    "what_if A pad 64 save",
    "heap_profile",
    "alloc_sites 10 save",
    "heap_stats save",
    "heap_figures 10 save",
    "lifetime_histogram save",
    "cachegrind",
    "export_hpcmp o.json",
];

/// Each entry's identity, to tell which step wrote it.
fn stamps(dir: &Path) -> BTreeMap<PathBuf, (u64, i64, i64, u64, bool)> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                todo.push(p.clone());
            }
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            out.insert(
                rel,
                (m.ino(), m.mtime(), m.mtime_nsec(), m.len(), m.is_dir()),
            );
        }
    }
    out
}

/// Copies the folder `from` to `to`, keeping times and links.
fn copy_folder(from: &Path, to: &Path) {
    let ok = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

/// Item 4 and the walk: every path mapvis or its tool writes, each
/// replaced in turn by a link to a file (for a file) or a folder (for a
/// folder) outside the working folder, before the command that wrote it
/// runs again on a copy of the finished folder. Nothing outside is ever
/// written: the file and the folder the links point at keep their
/// contents, and no file appears beside them.
#[test]
fn no_path_mapvis_writes_leads_outside_the_folder() {
    let base = tempfile::tempdir().unwrap();
    let done = base.path().join("done");
    std::fs::create_dir_all(&done).unwrap();
    std::fs::copy(root().join("tests/c/hostile_walk.c"), done.join("w.c")).unwrap();
    // Which step writes which path.
    let mut writers: BTreeMap<PathBuf, (bool, Vec<usize>)> = BTreeMap::new();
    let mut seen = stamps(&done);
    for (i, step) in STEPS.iter().enumerate() {
        let o = session(&done, step);
        assert!(o.status.success(), "{step}: {}", text(&o));
        let now = stamps(&done);
        for (p, s) in &now {
            if seen.get(p) != Some(s) {
                let w = writers.entry(p.clone()).or_insert((s.4, Vec::new()));
                w.1.push(i);
            }
        }
        seen = now;
    }
    // The user's own: the program's source and the file export_hpcmp was
    // told to write (written where the user said, as documented).
    writers.remove(Path::new("w.c"));
    writers.remove(Path::new("o.json"));
    for must in [
        ".mapvis/bin",
        ".mapvis/include",
        ".mapvis/hpcmp.mvt",
        ".mapvis/trace.mvt",
        ".mapvis/heap.mvh",
        "figures/run_x",
        "figures/index.html",
        "grindanalysis",
    ] {
        assert!(writers.contains_key(Path::new(must)), "{must}: {writers:?}");
    }
    let (out, victim, folder) = outside(base.path());
    let before = snapshot(&out);
    let mut cases = 0;
    for (n, (path, (is_dir, steps))) in writers.iter().enumerate() {
        for &i in steps {
            let w = base.path().join(format!("w{n}-{i}"));
            copy_folder(&done, &w);
            let at = w.join(path);
            if *is_dir {
                std::fs::remove_dir_all(&at).unwrap();
                symlink(&folder, &at).unwrap();
            } else {
                std::fs::remove_file(&at).unwrap();
                symlink(&victim, &at).unwrap();
            }
            let o = session(&w, STEPS[i]);
            assert_eq!(
                snapshot(&out),
                before,
                "{} as a link outside, then `{}`, wrote outside the folder:\n{}",
                path.display(),
                STEPS[i],
                text(&o)
            );
            std::fs::remove_dir_all(&w).unwrap();
            cases += 1;
        }
    }
    assert!(cases >= 100, "{cases} cases");
}

/// Item 9: a layout whose numbers would wrap an address past 2^64 is
/// refused, saying why, instead of giving a confident prediction; a sane
/// one on the same array still works.
#[test]
fn a_layout_past_the_address_space_is_refused() {
    let (dir, exe) = compile("tests/c/hostile_walk.c", &[]);
    let o = session(
        dir.path(),
        &format!(
            "load_exe {}; run_gleipnir; memory_trace_analysis",
            exe.display()
        ),
    );
    assert!(o.status.success(), "{}", text(&o));
    for layout in [
        "pad 18446744073709551615",
        "pad 18446744073709543424",
        "align 18446744073709551615",
        "transpose 4294967296 4294967296 8",
    ] {
        let o = session(dir.path(), &format!("what_if A {layout}"));
        let said = text(&o);
        assert!(!o.status.success(), "{layout}: {said}");
        assert!(
            said.contains("past the end of the 64-bit address space"),
            "{layout}: {said}"
        );
    }
    let o = session(dir.path(), "what_if A pad 64");
    assert!(o.status.success(), "{}", text(&o));
}
