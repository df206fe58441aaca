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
use mapvis::trace::record::{EndState, Op};

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

/// A folder where `c/hostile_walk.c` was compiled, traced and analysed,
/// then `more` run.
fn analysed_walk(more: &str) -> tempfile::TempDir {
    let (dir, exe) = compile("tests/c/hostile_walk.c", &[]);
    let o = session(
        dir.path(),
        &format!(
            "load_exe {}; run_gleipnir; memory_trace_analysis; {more}",
            exe.display()
        ),
    );
    assert!(o.status.success(), "{}", text(&o));
    dir
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
    let (events, end) = read_events(trace);
    let n = accesses(&events)
        .iter()
        .filter(|a| a.op == Op::Store && a.addr >= base && a.addr < base + len)
        .count();
    (n as u64, end == EndState::Complete)
}

/// The first heap block of a trace: (address, size).
fn first_block(trace: &Path) -> (u64, u64) {
    let (events, _) = read_events(trace);
    allocs(&events)[0]
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
    let dir = analysed_walk("");
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

/// A folder with two saved runs: `cut`, the SIGSEGV program's partial
/// run (50 stores into `arr`, then the crash), and `whole`, the same
/// variable name's complete run of a copy without the crash.
fn partial_and_whole() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path();
    let src = std::fs::read_to_string(root().join("tests/c/trace_segv.c")).unwrap();
    std::fs::write(w.join("cut.c"), &src).unwrap();
    std::fs::write(w.join("whole.c"), src.replace("*bad = 1;", "(void)bad;")).unwrap();
    let o = session(
        w,
        "set_mem_alloc H; compile_exe cut.c; catch run_gleipnir; memory_trace_analysis; save_run cut; \
         compile_exe whole.c; run_gleipnir; memory_trace_analysis; save_run whole",
    );
    assert!(o.status.success(), "{}", text(&o));
    dir
}

/// The rows of a CSV file as maps from its header's names.
fn csv_rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let head: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines
        .map(|l| {
            // The values tested here hold no comma but the reason, which
            // is quoted and last or next to last; split on the first
            // commas only.
            let mut cells = Vec::new();
            let mut rest = l;
            while !rest.is_empty() {
                if let Some(q) = rest.strip_prefix('"') {
                    let end = q.find('"').unwrap();
                    cells.push(q[..end].to_string());
                    rest = q[end + 1..].strip_prefix(',').unwrap_or("");
                } else {
                    let end = rest.find(',').unwrap_or(rest.len());
                    cells.push(rest[..end].to_string());
                    rest = rest.get(end + 1..).unwrap_or("");
                }
            }
            head.iter().cloned().zip(cells).collect()
        })
        .collect()
}

/// Item 5: `run.json` edited to call the partial run complete, with ten
/// times its accesses, changes nothing: `runs` and `plot_runs` (its
/// table, CSV and value) take both from the run's own summary.
#[test]
fn an_edited_run_json_does_not_make_a_partial_run_complete() {
    let dir = partial_and_whole();
    let w = dir.path();
    let info = w.join(".mapvis/runs/cut/run.json");
    let mut j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&info).unwrap()).unwrap();
    assert_eq!(j["version"], 2, "{j}");
    assert!(
        j.get("complete").is_none() && j.get("accesses").is_none(),
        "{j}"
    );
    j["complete"] = true.into();
    j["accesses"] = 10_000_000.into();
    std::fs::write(&info, j.to_string()).unwrap();
    let o = session(
        w,
        "set_mem_alloc H; foreach r [runs] { puts \"RUN [dict get $r label] [dict get $r accesses] [dict get $r complete]\" }; \
         foreach v [plot_runs accesses] { puts \"PLOT [dict get $v run] [dict get $v variable] [dict get $v value] [dict get $v complete]\" }",
    );
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    let run = |l: &str| {
        said.lines()
            .find(|x| x.starts_with(&format!("RUN {l} ")))
            .unwrap_or_else(|| panic!("{l}: {said}"))
            .to_string()
    };
    let cut = run("cut");
    assert!(cut.ends_with(" 0"), "{cut}");
    assert!(!cut.contains("10000000"), "{cut}");
    assert!(run("whole").ends_with(" 1"), "{said}");
    assert!(
        said.lines().any(|l| l == "PLOT cut arr 50 0"),
        "plot_runs' value: {said}"
    );
    let rows = csv_rows(&w.join("visinfo/runs_accesses.csv"));
    let cut_rows: Vec<_> = rows.iter().filter(|r| r["run"] == "cut").collect();
    assert!(!cut_rows.is_empty(), "{rows:?}");
    assert!(
        cut_rows.iter().all(|r| r["complete"] == "false"),
        "{rows:?}"
    );
}

/// Item 7: the comparison's CSVs and `what_if`'s report and CSV mark the
/// partial run on every row, with its reason; the complete run's rows say
/// complete.
#[test]
fn comparison_and_what_if_tables_mark_a_partial_run() {
    let dir = partial_and_whole();
    let w = dir.path();
    let o = session(
        w,
        "set_mem_alloc H; compare_runs cut whole save; use_run cut; what_if arr pad 64 save",
    );
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    let rows = csv_rows(&w.join("visinfo/compare_cut_whole.csv"));
    assert!(rows.len() >= 2, "{rows:?}");
    for r in &rows {
        let want = if r["run"] == "cut" {
            "PARTIAL: the program was ended by signal 11"
        } else {
            "complete"
        };
        assert!(r["trace"].starts_with(want), "{r:?}");
    }
    let pairs = csv_rows(&w.join("visinfo/compare_cut_whole_pairs.csv"));
    assert!(!pairs.is_empty());
    for r in &pairs {
        assert!(r["trace_a"].starts_with("PARTIAL: "), "{r:?}");
        assert_eq!(r["trace_b"], "complete", "{r:?}");
    }
    assert!(
        said.lines()
            .any(|l| l.starts_with("warning: this analysis is PARTIAL")
                && l.contains("the prediction covers only the accesses recorded")),
        "{said}"
    );
    let rows = csv_rows(&w.join("visinfo/what_if_arr_pad_64.csv"));
    assert!(!rows.is_empty());
    assert!(
        rows.iter().all(|r| r["trace"].starts_with("PARTIAL: ")),
        "{rows:?}"
    );
}

/// Item 11: a run folder without `run.json` (what a kill during
/// `save_run` left before runs were built under a temporary name) is
/// listed as half-made, `save_run` names it, and `drop_run` removes it
/// whole; a run being built (`.LABEL.partial`) is removed by
/// `clear_analysis`. Then `save_run` of the label works.
#[test]
fn a_half_made_run_is_listed_and_removed() {
    let dir = analysed_walk("");
    let w = dir.path();
    let half = w.join(".mapvis/runs/x");
    std::fs::create_dir_all(half.join("analysis/accesses")).unwrap();
    for f in [
        "trace.mvt",
        "analysis/summary.json",
        "analysis/accesses/p.parquet",
    ] {
        std::fs::write(half.join(f), b"half").unwrap();
    }
    let o = session(w, "runs");
    assert!(
        text(&o).contains("is a half-made run") && text(&o).contains("drop_run x"),
        "{}",
        text(&o)
    );
    let o = session(w, "save_run x");
    assert!(!o.status.success());
    assert!(text(&o).contains("drop_run x removes it"), "{}", text(&o));
    let o = session(w, "drop_run x");
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("removed the half-made run x (3 files)"),
        "{}",
        text(&o)
    );
    assert!(!half.exists());
    let o = session(w, "save_run x; runs");
    assert!(o.status.success(), "{}", text(&o));
    assert!(w.join(".mapvis/runs/x/run.json").is_file());
    // A run being built when its save stopped.
    let staged = w.join(".mapvis/runs/.y.partial");
    std::fs::create_dir_all(&staged).unwrap();
    std::fs::write(staged.join("trace.mvt"), b"half").unwrap();
    let o = session(w, "clear_analysis");
    assert!(o.status.success(), "{}", text(&o));
    assert!(!staged.exists());
    assert!(!w.join(".mapvis/runs/x").exists());
}

/// Item 11 under kills: `save_run` killed with SIGKILL at moments spread
/// over its run leaves either the whole run or none, never a folder that
/// blocks the label; the label can always be saved afterwards.
#[test]
fn save_run_killed_at_any_moment_leaves_a_whole_run_or_none() {
    let dir = analysed_walk("");
    let w = dir.path();
    let home = w.with_extension("home");
    for i in 0..30u64 {
        let label = format!("k{i}");
        let mut child = Command::new(env!("CARGO_BIN_EXE_mapvis"))
            .current_dir(w)
            .env("HOME", &home)
            .env_remove("MAPVIS_HISTORY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .args(["-c", &format!("save_run {label}")])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_micros(2_000 + i * 1_500));
        let _ = child.kill();
        let _ = child.wait();
        let run = w.join(".mapvis/runs").join(&label);
        assert!(
            !run.exists() || run.join("run.json").is_file(),
            "kill {i} left {} without run.json",
            run.display()
        );
        if !run.exists() {
            let o = session(w, &format!("save_run {label}"));
            assert!(o.status.success(), "after kill {i}: {}", text(&o));
        }
    }
}

/// Item 14: a saved analysis another user owns, unreadable to this one,
/// is named with the permission problem, not called missing. Root ignores
/// file modes, so under root mapvis runs as `nobody` (`setpriv`), from a
/// copy of the binary that user can read.
#[test]
fn an_unreadable_analysis_is_named_as_such() {
    use std::os::unix::fs::PermissionsExt;
    let dir = analysed_walk("");
    let w = dir.path();
    let open = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    let root_user = effective_uid() == 0;
    let bin = w.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_mapvis"), bin.join("mapvis")).unwrap();
    let home = w.join("home");
    std::fs::create_dir_all(&home).unwrap();
    if root_user {
        // The folder is nobody's, but for the analysis, which stays
        // root's and closed.
        let ok = Command::new("chown")
            .args(["-R", "nobody"])
            .arg(w)
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let ok = Command::new("chown")
            .args(["-R", "root"])
            .arg(w.join(".mapvis/analysis"))
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }
    open(w, 0o755);
    open(&w.join(".mapvis/analysis"), 0o700);
    let mut cmd = if root_user {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
            .arg(bin.join("mapvis"));
        c
    } else {
        Command::new(bin.join("mapvis"))
    };
    let o = cmd
        .current_dir(w)
        .env("HOME", &home)
        .env_remove("MAPVIS_HISTORY")
        .stdin(Stdio::null())
        .args(["-c", "memory_stats"])
        .output()
        .unwrap();
    open(&w.join(".mapvis/analysis"), 0o755);
    let said = text(&o);
    assert!(!o.status.success(), "{said}");
    assert!(!said.contains("there is no analysis yet"), "{said}");
    assert!(
        said.contains(".mapvis/analysis cannot be read (Permission denied"),
        "{said}"
    );
}

/// The effective user id, from `/proc/self/status` (no `unsafe` call).
fn effective_uid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|u| u.parse().ok())
        .unwrap()
}

/// Item 12: a source folder holding 300 links to itself (named again by
/// the restored session) costs `cache_stats save` and `compare_runs save`
/// no walk into the loop: each finishes in seconds and annotates the
/// source. A folder too big to walk stops the search with a note naming
/// it.
#[test]
fn a_source_folder_of_links_to_itself_is_walked_once() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path();
    let src = w.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(root().join("tests/c/hostile_walk.c"), src.join("w.c")).unwrap();
    for i in 0..300 {
        symlink(".", src.join(format!("l{i}"))).unwrap();
    }
    let o = session(
        w,
        "set_src_path src; compile_exe src/w.c; run_gleipnir; memory_trace_analysis; save_run x; save_run y",
    );
    assert!(o.status.success(), "{}", text(&o));
    for (script, page) in [
        ("cache_stats save", "figures/source_w.c.html"),
        ("compare_runs x y save", "figures/run_y/source_w.c.html"),
    ] {
        let t0 = std::time::Instant::now();
        let o = session(w, script);
        let took = t0.elapsed();
        assert!(o.status.success(), "{script}: {}", text(&o));
        assert!(
            took < std::time::Duration::from_secs(20),
            "{script} took {took:?}"
        );
        assert!(w.join(page).is_file(), "{script}: {}", text(&o));
    }
    // 10 001 files before the source: the walk stops and says where.
    let big = w.join("big");
    std::fs::create_dir_all(big.join("zz")).unwrap();
    for i in 0..10_001 {
        std::fs::File::create(big.join(format!("f{i:05}"))).unwrap();
    }
    std::fs::copy(root().join("tests/c/hostile_walk.c"), big.join("zz/w.c")).unwrap();
    std::fs::remove_dir_all(&src).unwrap();
    let o = session(w, "set_src_path big; cache_stats save");
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "the search for source files stopped at {}",
            big.display()
        )),
        "{said}"
    );
}

/// Item 8: a `heap_profile calls` profile cut anywhere from 3/20 to 19/20
/// of its length is PARTIAL in every command's output and on its page, as
/// a trace without its footer is; the whole profile is not.
#[test]
fn a_cut_heap_profile_is_partial_everywhere() {
    let (dir, exe) = compile("tests/c/many_small.c", &[]);
    let w = dir.path();
    let o = session(
        w,
        &format!(
            "load_exe {}; heap_profile calls; heap_stats; heap_figures 5 save",
            exe.display()
        ),
    );
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    assert!(!said.contains("PARTIAL"), "{said}");
    let page = w.join("figures/heap_profile.html");
    assert!(!std::fs::read_to_string(&page).unwrap().contains("PARTIAL"));
    let whole = std::fs::read(w.join(".mapvis/heap.mvh")).unwrap();
    for twentieths in [3usize, 10, 19] {
        let cut = whole.len() * twentieths / 20;
        std::fs::write(w.join(".mapvis/heap.mvh"), &whole[..cut]).unwrap();
        let o = session(w, "heap_stats; alloc_sites 3; heap_figures 5 save");
        let said = text(&o);
        assert!(o.status.success(), "{twentieths}/20: {said}");
        let warnings = said
            .lines()
            .filter(|l| l.starts_with("warning: this heap profile") && l.contains("is PARTIAL"))
            .count();
        assert_eq!(warnings, 3, "{twentieths}/20: {said}");
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(
            html.contains("(PARTIAL heap profile)</h1>"),
            "{twentieths}/20"
        );
        assert!(
            html.contains(
                "<p class=\"partial\" id=\"mapvis-drawn-from\">Drawn from PARTIAL heap profile"
            ),
            "{twentieths}/20"
        );
    }
}

/// Item 10: an edit of a run's file that keeps its size and restores its
/// time (as `cp -a` of an edited folder does) is found: `use_run` and
/// `compare_runs` refuse the run, naming the file, and `verify_analysis`
/// lists it as changed and every other file as ok.
#[test]
fn an_edit_with_size_and_time_kept_is_found_by_hashing() {
    let dir = analysed_walk("save_run x; save_run y");
    let w = dir.path();
    let o = session(w, "set v [verify_analysis x]; puts \"OK [llength [dict get $v ok]] CHANGED [llength [dict get $v changed]]\"");
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    let files = files_in(&w.join(".mapvis/runs/x"));
    assert!(
        said.contains(&format!("OK {} CHANGED 0", files)),
        "{files}: {said}"
    );
    let info = w.join(".mapvis/runs/x/run.json");
    let when = std::fs::metadata(&info).unwrap().modified().unwrap();
    let json = std::fs::read_to_string(&info).unwrap();
    let edited = json.replacen("\"label\": \"x\"", "\"label\": \"z\"", 1);
    assert_ne!(json, edited);
    assert_eq!(json.len(), edited.len());
    std::fs::write(&info, edited).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&info)
        .unwrap()
        .set_modified(when)
        .unwrap();
    for script in ["use_run x", "compare_runs x y"] {
        let o = session(w, script);
        let said = text(&o);
        assert!(!o.status.success(), "{script}: {said}");
        assert!(
            said.contains("the run x is not the one mapvis saved")
                && said.contains(".mapvis/runs/x/run.json has changed"),
            "{script}: {said}"
        );
    }
    let o = session(
        w,
        "set v [verify_analysis x]; puts \"CHANGED [dict get $v changed]\"",
    );
    let said = text(&o);
    assert!(said.contains("CHANGED .mapvis/runs/x/run.json"), "{said}");
    assert!(
        said.lines()
            .any(|l| l.starts_with("changed  .mapvis/runs/x/run.json")),
        "{said}"
    );
    let o = session(w, "use_run y");
    assert!(o.status.success(), "{}", text(&o));
}

/// How many regular files are under `dir`.
fn files_in(dir: &Path) -> usize {
    let mut n = 0;
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                todo.push(e.path());
            } else {
                n += 1;
            }
        }
    }
    n
}

/// The row of `figures/index.html` that links `file`.
fn index_row(w: &Path, file: &str) -> String {
    let index = std::fs::read_to_string(w.join("figures/index.html")).unwrap();
    let at = index
        .find(&format!("<a href=\"{file}\">"))
        .unwrap_or_else(|| panic!("{file} not in the index:\n{index}"));
    let end = index[at..].find("</tr>").unwrap() + at;
    index[at..end].to_string()
}

/// Item 6: a page is STALE exactly when what it was drawn from no longer
/// exists as it was. Pages of runs x and y go stale when x is dropped and
/// saved again from another analysis, and not before; a figure drawn under
/// `use_run k` leaves the other runs' pages current, and the index offers
/// it with its `use_run`; a heap page goes stale when the profile is
/// recorded again.
#[test]
fn pages_are_stale_exactly_when_their_sources_changed() {
    let (dir, exe) = compile("tests/c/hostile_walk.c", &[]);
    let w = dir.path();
    let run = |script: &str| {
        let o = session(w, script);
        assert!(o.status.success(), "{script}: {}", text(&o));
    };
    run(&format!("load_exe {}", exe.display()));
    for label in ["x", "y", "k"] {
        // Each run from an analysis of its own.
        run(&format!(
            "run_gleipnir; memory_trace_analysis; save_run {label}"
        ));
    }
    run("compare_runs x y save; plot_runs accesses x y; heap_profile; heap_figures 3 save");
    run("use_run y; 2d_memory_access_pattern A 32 8 save");
    for f in [
        "compare_x_y.html",
        "runs_accesses.html",
        "heap_profile.html",
        "2d_memory_access_pattern_A.html",
    ] {
        assert!(
            !index_row(w, f).contains("STALE"),
            "{f}: {}",
            index_row(w, f)
        );
    }
    // A figure drawn under use_run k: the others stay current, and it is
    // offered with its use_run.
    run("use_run k; what_if A pad 64 save");
    for f in [
        "compare_x_y.html",
        "runs_accesses.html",
        "2d_memory_access_pattern_A.html",
    ] {
        assert!(
            !index_row(w, f).contains("STALE"),
            "{f}: {}",
            index_row(w, f)
        );
    }
    let what_if = index_row(w, "what_if_A_pad_64.html");
    assert!(
        what_if.contains("<code>use_run k; what_if A pad 64"),
        "{what_if}"
    );
    assert!(
        index_row(w, "2d_memory_access_pattern_A.html")
            .contains("<code>use_run y; 2d_memory_access_pattern A"),
        "{}",
        index_row(w, "2d_memory_access_pattern_A.html")
    );
    // x dropped and kept again from k's analysis.
    run("drop_run x; use_run k; save_run x");
    for f in ["compare_x_y.html", "runs_accesses.html"] {
        let r = index_row(w, f);
        assert!(
            r.contains("STALE: made from run x as it was saved then"),
            "{f}: {r}"
        );
    }
    for f in [
        "2d_memory_access_pattern_A.html",
        "what_if_A_pad_64.html",
        "heap_profile.html",
    ] {
        assert!(
            !index_row(w, f).contains("STALE"),
            "{f}: {}",
            index_row(w, f)
        );
    }
    // The heap profile recorded again.
    run("heap_profile");
    run("use_run y; 2d_memory_access_pattern A 32 8 save");
    let r = index_row(w, "heap_profile.html");
    assert!(
        r.contains("STALE: made from .mapvis/heap.mvh as it was then"),
        "{r}"
    );
}

/// Item 15: one byte changed in the middle of a real trace (an ijk
/// multiply of 64 x 64 ints, about 60 blocks). The analysis stops at the
/// block that holds it, names the block and its bytes, and keeps exactly
/// the accesses of the blocks before it, marked PARTIAL. Format 6 had no
/// checksum, and such a change was analysed as a whole trace.
#[test]
fn a_changed_byte_is_named_by_its_block() {
    use mapvis::trace::record::TraceReader;
    let (dir, exe) = compile("scripts/matmul.c", &[]);
    let o = session(
        dir.path(),
        &format!(
            "load_exe {}; set_arguments ijk 64; run_gleipnir",
            exe.display()
        ),
    );
    assert!(o.status.success(), "{}", text(&o));
    let trace = dir.path().join(".mapvis/trace.mvt");
    let mut bytes = std::fs::read(&trace).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x04;
    std::fs::write(dir.path().join("bad.mvt"), &bytes).unwrap();
    let o = session(
        dir.path(),
        "load_trace bad.mvt; memory_trace_analysis; memory_stats",
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let (block, start, end) = block_named(&out).unwrap_or_else(|| panic!("{out}"));
    assert!(block > 10, "{out}");
    assert!(
        start <= at as u64 && (at as u64) < end,
        "{at} in {start}..{end}"
    );
    // The untouched trace: complete, every block checked, and how many
    // accesses its blocks before `start` hold.
    let mut r = TraceReader::open(&trace).unwrap();
    let mut before = 0;
    while r.next_event().unwrap().is_some() {
        if r.offset() <= start {
            before = r.accesses_read();
        }
    }
    assert_eq!(r.end_state(), &EndState::Complete);
    assert!(r.blocks_checked() > block, "{}", r.blocks_checked());
    assert!(before > 100_000, "{before}");
    assert!(
        out.contains(&format!(
            "The {before} accesses before that block were read and are intact"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "PARTIAL (the trace is corrupt after its first {before} accesses)"
        )),
        "{out}"
    );
}

/// "block K (bytes S to E)" in a message: (K, S, E).
fn block_named(out: &str) -> Option<(u64, u64, u64)> {
    let rest = &out[out.find("block ")? + 6..];
    let mut w = rest
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty());
    Some((
        w.next()?.parse().ok()?,
        w.next()?.parse().ok()?,
        w.next()?.parse().ok()?,
    ))
}
