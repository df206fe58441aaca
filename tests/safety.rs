//! Nothing the user made is lost, under the hostile but realistic things
//! users do: a traced program killed with SIGKILL at any moment, two
//! sessions in one folder at once, a program that forks, a full disk.
//! Every case runs the real `mapvis` binary and the real Valgrind tool.
mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;
use mapvis::trace::record::{EndState, TraceReader};
use mapvis::trace::record::{Event, Op, WarningKind};

fn mapvis(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mapvis"));
    cmd.current_dir(dir)
        .env_remove("MAPVIS_HISTORY")
        .stdin(Stdio::null());
    cmd
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `script` in `dir` with `mapvis -c` and returns its output.
fn session(dir: &Path, script: &str) -> Output {
    mapvis(dir)
        .args(["-c", script])
        .output()
        .expect("mapvis runs")
}

/// Stores to `[base, base + len)` in a trace, reading up to its cut.
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
fn first_block(trace: &Path) -> Option<(u64, u64)> {
    let mut r = TraceReader::open(trace).ok()?;
    while let Ok(Some(e)) = r.next_event() {
        if let Event::Alloc(a) = e {
            return Some((a.addr, a.size));
        }
    }
    None
}

/// Files and folders under `dir` whose names mark a half-written file.
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let n = e.file_name().to_string_lossy().into_owned();
            if n.ends_with(".partial") || n.ends_with(".old") {
                out.push(p.clone());
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(p);
            }
        }
    }
    out
}

/// The process ids of the children of `pid` that run the mapvis tool
/// (not `valgrind --version`, which mapvis runs first).
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("--trace-file="))
        })
        .collect()
}

/// SIGKILL of the traced program at several moments, 20 times: the trace
/// in place is always either the previous one, untouched, or a readable
/// new one that holds everything the program did up to at most 64 KiB of
/// records before the kill (the bound in docs/trace-format.md).
#[test]
fn a_killed_program_keeps_the_previous_trace_or_a_usable_new_one() {
    let (bin, exe) = compile("tests/c/safety_spin.c", &[]);
    let work = bin.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let (_d, rowcol) = compile("scripts/rowcol.c", &[]);
    let first = session(
        &work,
        &format!("load_exe {}; run_gleipnir", rowcol.display()),
    );
    assert!(first.status.success(), "{}", text(&first));
    let trace = work.join(".mapvis/trace.mvt");
    let delays = [0u64, 150, 400, 800, 1300];
    let (mut kept, mut replaced) = (0, 0);
    for i in 0..20 {
        let previous = std::fs::read(&trace).unwrap();
        let mut child = mapvis(&work)
            .args(["-c", &format!("load_exe {}; run_gleipnir", exe.display())])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, rx) = mpsc::channel();
        let out = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let started = Instant::now();
        let delay = Duration::from_millis(delays[i % delays.len()]);
        // The two longest delays also wait for the program's first round,
        // so that a loaded machine, where Valgrind takes longer than the
        // delay to start, still kills some runs mid-way.
        let after_a_round = i % delays.len() >= 3;
        let round_of = |l: String| l.strip_prefix("round ")?.parse::<u64>().ok();
        let mut rounds = 0;
        // Kill Valgrind (the traced program) after the delay.
        let traced = loop {
            rounds = rx.try_iter().filter_map(round_of).fold(rounds, u64::max);
            let kids = children(child.id());
            if started.elapsed() >= delay && !kids.is_empty() && (rounds > 0 || !after_a_round) {
                break kids[0];
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "no Valgrind started, or no round done in 60 s"
            );
            std::thread::sleep(Duration::from_millis(5));
        };
        // Rounds reported before the kill were done before it.
        let rounds = rx.try_iter().filter_map(round_of).fold(rounds, u64::max);
        Command::new("kill")
            .args(["-KILL", &traced.to_string()])
            .status()
            .unwrap();
        let status = child.wait().unwrap();
        reader.join().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        let now = std::fs::read(&trace).unwrap();
        if now == previous {
            kept += 1;
            assert!(!status.success(), "run {i}: a kept trace is an error");
            assert!(err.contains("is kept"), "run {i}: {err}");
        } else {
            replaced += 1;
            assert!(status.success(), "run {i}: {err}");
            let (block, size) = first_block(&trace).expect("the new trace names its block");
            let (stores, complete) = stores_into(&trace, block, size);
            assert!(!complete, "run {i}: the killed run cannot have a footer");
            let done = rounds * 16_384;
            assert!(
                stores + 65_536 >= done,
                "run {i}: {stores} stores in the trace, but {rounds} rounds ({done} stores) were done before the kill"
            );
            let analysed = session(
                &work,
                "set_mem_alloc H; memory_trace_analysis; memory_stats",
            );
            assert!(analysed.status.success(), "run {i}: {}", text(&analysed));
        }
        assert!(leftovers(&work).is_empty(), "{:?}", leftovers(&work));
    }
    assert!(
        kept > 0 && replaced > 0,
        "kept {kept}, replaced {replaced}: both cases must occur"
    );
}

/// Two sessions in one folder, the second started at several delays after
/// the first, 20 times: both finish, and the folder is never corrupt. Each
/// file comes whole from one trace, and the saved analysis is shown only
/// for the trace it was made from.
#[test]
fn two_sessions_in_one_folder_never_corrupt_it() {
    // Two small traces with different variables and counts.
    let made = tempfile::tempdir().unwrap();
    let mut traces = Vec::new();
    for (name, src) in [("a", "scripts/rowcol.c"), ("b", "tests/c/an_five.c")] {
        let dir = made.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        let o = session(
            &dir,
            &format!(
                "compile_exe {}; run_gleipnir; set_mem_alloc all; memory_trace_analysis; filtering_process",
                root().join(src).display()
            ),
        );
        assert!(o.status.success(), "{}", text(&o));
        let trace = made.path().join(format!("{name}.mvt"));
        std::fs::copy(dir.join(".mapvis/trace.mvt"), &trace).unwrap();
        traces.push(trace);
    }
    let script = |t: &Path| {
        format!(
            "load_trace {}; memory_trace_analysis; set_mem_alloc all; filtering_process; memory_stats",
            t.display()
        )
    };
    // What each session gives alone.
    let traces: Vec<(PathBuf, String)> = traces
        .into_iter()
        .map(|t| {
            let alone = tempfile::tempdir().unwrap();
            let o = session(alone.path(), &script(&t));
            assert!(o.status.success(), "{}", text(&o));
            let order =
                std::fs::read_to_string(alone.path().join("visinfo/order_data.csv")).unwrap();
            (t, order)
        })
        .collect();
    assert_ne!(traces[0].1, traces[1].1);
    let delays = [0u64, 20, 80, 200, 400];
    for i in 0..20 {
        let work = tempfile::tempdir().unwrap();
        let w = work.path();
        let first = mapvis(w)
            .args(["-c", &script(&traces[0].0)])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delays[i % delays.len()]));
        let second = session(w, &script(&traces[1].0));
        let first = first.wait_with_output().unwrap();
        assert!(first.status.success(), "run {i}: {}", text(&first));
        assert!(second.status.success(), "run {i}: {}", text(&second));
        // The order data is one session's, whole.
        let order = std::fs::read_to_string(w.join("visinfo/order_data.csv")).unwrap();
        assert!(
            traces.iter().any(|(_, o)| *o == order),
            "run {i}: visinfo/order_data.csv is neither trace's order data"
        );
        assert!(leftovers(w).is_empty(), "run {i}: {:?}", leftovers(w));
        // The saved analysis is shown only as its own trace's.
        let stats = session(w, "set_mem_alloc all; memory_stats");
        let out = text(&stats);
        if stats.status.success() {
            let settings = std::fs::read_to_string(w.join(".mapvis/session.json")).unwrap();
            let current = traces
                .iter()
                .position(|(t, _)| settings.contains(&*t.to_string_lossy()))
                .expect("the settings name one of the traces");
            let rows = traces[current].1.lines().count() - 1;
            assert!(
                out.contains(&format!("memory_stats ({rows} accesses")),
                "run {i}: the statistics are not of the current trace: {out}"
            );
        } else {
            assert!(
                out.contains("the analysis was made from the trace"),
                "run {i}: {out}"
            );
        }
    }
}

/// A program that forks inside its region: each process has its own
/// trace, both readable to the end, with exactly their own stores. The
/// child's trace holds none of the parent's accesses from before the fork
/// (64 stores to a): it starts from the blocks it inherited (a and b,
/// marked inherited, not counted as its allocations) and the open region.
#[test]
fn a_forking_program_gives_one_trace_per_process() {
    let (dir, exe) = compile("tests/c/safety_fork.c", &[]);
    let o = session(
        dir.path(),
        &format!(
            "load_exe {}; dict get [run_gleipnir] children",
            exe.display()
        ),
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("a child process wrote its own trace"), "{out}");
    let parent = dir.path().join(".mapvis/trace.mvt");
    let kids: Vec<PathBuf> = std::fs::read_dir(dir.path().join(".mapvis"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("trace.") && n.ends_with(".mvt") && n != "trace.mvt"
        })
        .collect();
    assert_eq!(kids.len(), 1, "{kids:?}");
    let (evs, end) = read_events(&parent);
    assert_eq!(end, EndState::Complete);
    let blocks = allocs(&evs);
    let (a, b) = (blocks[0], blocks[1]);
    assert_eq!((a.1, b.1), (256, 128));
    assert_eq!(stores_into(&parent, a.0, a.1), (64 + 16, true));
    assert_eq!(stores_into(&parent, b.0, b.1), (0, true));
    assert!(evs
        .iter()
        .all(|e| !matches!(e, Event::Alloc(x) if x.inherited)));
    let child = &kids[0];
    assert_eq!(stores_into(child, a.0, a.1), (0, true));
    assert_eq!(stores_into(child, b.0, b.1), (32, true));
    let (cevs, _) = read_events(child);
    let touching = |lo: u64, len: u64| {
        accesses(&cevs)
            .iter()
            .filter(|x| x.addr >= lo && x.addr < lo + len)
            .count()
    };
    assert_eq!((touching(a.0, a.1), touching(b.0, b.1)), (0, 32));
    // The stack pointers start again from 0 in the child's stream: every
    // access carries the child's real one, on the same stack as the
    // parent's (within a MiB of it).
    let psp = accesses(&evs)[0].sp;
    for x in accesses(&cevs) {
        assert!(x.sp != 0 && x.sp.abs_diff(psp) < 1 << 20, "{x:?}");
    }
    let mut inherited: Vec<(u64, u64, bool)> = cevs
        .iter()
        .filter_map(|e| match e {
            Event::Alloc(x) => Some((x.addr, x.size, x.inherited)),
            _ => None,
        })
        .collect();
    inherited.sort();
    let mut want = vec![(a.0, 256, true), (b.0, 128, true)];
    want.sort();
    assert_eq!(inherited, want);
    let starts: Vec<u32> = cevs
        .iter()
        .filter_map(|e| match e {
            Event::RegionStart(r) => Some(r.id),
            _ => None,
        })
        .collect();
    assert_eq!(starts, vec![1], "the child restates the open region once");
    let forked = cevs.iter().find_map(|e| match e {
        Event::Warning {
            kind: WarningKind::Forked,
            text,
        } => Some(text.clone()),
        _ => None,
    });
    let ppid = TraceReader::open(&parent).unwrap().header().pid;
    assert!(
        forked
            .as_deref()
            .is_some_and(|t| t.contains(&format!("forked from process {ppid}"))),
        "{forked:?}"
    );
    // Analysed on its own, the child's trace names b from its inherited
    // block: 32 stores, and no allocation made by the child.
    let o = session(
        dir.path(),
        &format!(
            "load_exe {}; load_trace {}; set_mem_alloc H; memory_trace_analysis; puts [memory_stats]",
            exe.display(),
            child.display()
        ),
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("forked from process"), "{out}");
    assert!(out.contains("(0 allocations in the run)"), "{out}");
    assert!(
        out.contains("{variable b scope H accesses 32 loads 0 stores 32 modifies 0"),
        "{out}"
    );
    assert!(!out.contains("variable a "), "{out}");
    let pid = |p: &Path| TraceReader::open(p).unwrap().header().pid;
    assert_ne!(pid(&parent), pid(child));
    assert!(
        child
            .to_string_lossy()
            .ends_with(&format!("trace.{}.mvt", pid(child))),
        "{}",
        child.display()
    );
}

/// A full disk (a 2 MiB tmpfs in a private mount namespace): the command
/// fails with a message that names the full disk, the previous files stay
/// whole, and no half-written file or folder is left.
#[test]
fn a_full_disk_keeps_the_previous_files() {
    let work = tempfile::tempdir().unwrap();
    let disk = work.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let (_d, rowcol) = compile("scripts/rowcol.c", &[]);
    let script = work.path().join("full.tcl");
    std::fs::write(
        &script,
        r#"
proc slurp {p} { set f [open $p]; set t [read $f]; close $f; return $t }
set order [slurp visinfo/order_data.csv]
# Fill the disk.
set f [open filler w]
fconfigure $f -translation binary -buffering none
foreach n {65536 4096 1} {
    set chunk [string repeat x $n]
    while {![catch {puts -nonewline $f $chunk}]} {}
}
catch {close $f}
if {![catch {filtering_process} m]} { puts "FAIL: filtering_process succeeded on a full disk"; exit 1 }
puts "MESSAGE: $m"
if {[slurp visinfo/order_data.csv] ne $order} { puts "FAIL: order_data.csv changed"; exit 1 }
set l [glob -nocomplain -types {f d hidden} visinfo/.* visinfo/*]
foreach p $l { if {[string match *.partial $p]} { puts "FAIL: left $p"; exit 1 } }
memory_trace_analysis
"#,
    )
    .unwrap();
    // A first session traces and analyses; its analysis is saved when it ends.
    let prep = work.path().join("prep.tcl");
    std::fs::write(
        &prep,
        format!(
            "load_exe {}; set_mem_alloc H; run_gleipnir; memory_trace_analysis; filtering_process\n",
            rowcol.display()
        ),
    )
    .unwrap();
    // Run after the second session has ended (its analysis failed).
    let check = work.path().join("check.tcl");
    std::fs::write(
        &check,
        r#"
foreach p [glob -nocomplain -types {f d hidden} .mapvis/.* visinfo/.*] {
    if {[string match *.partial $p] || [string match *.old $p]} { puts "FAIL: left $p" }
}
if {![file isdirectory .mapvis/analysis/accesses]} { puts "FAIL: the previous analysis is gone" }
puts CHECKED
"#,
    )
    .unwrap();
    let shell = format!(
        "mount -t tmpfs -o size=2m tmpfs '{d}' && cd '{d}' && '{m}' '{p}' && {{ '{m}' '{s}'; '{m}' '{c}'; }}",
        d = disk.display(),
        m = env!("CARGO_BIN_EXE_mapvis"),
        s = script.display(),
        c = check.display(),
        p = prep.display()
    );
    let run = |args: &[&str]| {
        Command::new("unshare")
            .args(args)
            .args(["sh", "-c", &shell])
            .output()
    };
    // As root a private mount namespace is enough; otherwise a user one.
    let refused = |o: &std::io::Result<Output>| match o {
        Ok(o) => {
            let e = String::from_utf8_lossy(&o.stderr);
            e.contains("unshare:") || e.contains("mount:")
        }
        Err(_) => true,
    };
    let mut out = run(&["-m"]);
    if refused(&out) {
        out = run(&["-rm"]);
    }
    if refused(&out) {
        // Under CI (CI=true, as root) a tmpfs can always be mounted: a
        // refusal there is a failure, never a silent skip.
        missing_tool(
            "a_full_disk_keeps_the_previous_files did not run",
            &format!(
                "a tmpfs cannot be mounted here ({out:?}): it needs unshare and mount \
                 (util-linux) and root or user namespaces"
            ),
        );
        return;
    }
    let all = text(&out.unwrap());
    assert!(all.contains("CHECKED"), "{all}");
    assert!(!all.contains("FAIL:"), "{all}");
    let msg = all
        .lines()
        .find(|l| l.starts_with("MESSAGE:"))
        .unwrap_or_default();
    assert!(
        msg.contains("visinfo/allocation_info.parquet") || msg.contains("visinfo/order_data"),
        "{all}"
    );
    assert!(
        msg.contains("is full") && msg.contains("previous files were kept"),
        "{all}"
    );
    // The analysis could not write its access list either: said, naming
    // the file and the full disk (the previous analysis is checked above).
    assert!(
        all.lines().any(|l| l.starts_with("error: cannot write")
            && l.contains("/accesses/")
            && l.contains("is full")),
        "{all}"
    );
    assert!(!all.contains("no region was traced"), "{all}");
}

// ---------------------------------------------------------------------------
// A working folder nobody can turn against its user: links, named pipes and
// manifest entries in a folder from elsewhere (a tarball, a shared disk)
// never make mapvis write, remove or run anything outside it, nor hang.
// ---------------------------------------------------------------------------

/// Runs `script` in `dir` with `mapvis -c`, failing the test if it takes
/// longer than `secs` seconds (it is killed then: a command that hangs on
/// a named pipe fails the test rather than hanging it).
fn session_within(dir: &Path, script: &str, secs: u64) -> Output {
    let out = tempfile::tempdir().unwrap();
    let (o, e) = (out.path().join("out"), out.path().join("err"));
    let mut child = mapvis(dir)
        .args(["-c", script])
        .stdout(std::fs::File::create(&o).unwrap())
        .stderr(std::fs::File::create(&e).unwrap())
        .spawn()
        .expect("mapvis runs");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "`{script}` did not finish within {secs} s: {}{}",
                std::fs::read_to_string(&o).unwrap_or_default(),
                std::fs::read_to_string(&e).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: std::fs::read(&o).unwrap(),
        stderr: std::fs::read(&e).unwrap(),
    }
}

/// A working folder and, beside it, a folder of the user's own files
/// outside it: `(top, work, outside)`.
fn folder_and_outside() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let top = tempfile::tempdir().unwrap();
    let work = top.path().join("work");
    let outside = top.path().join("outside");
    std::fs::create_dir(&work).unwrap();
    std::fs::create_dir(&outside).unwrap();
    (top, work, outside)
}

/// Makes a named pipe at `path`.
fn mkfifo(path: &Path) {
    let o = Command::new("mkfifo")
        .arg(path)
        .output()
        .expect("mkfifo runs");
    assert!(o.status.success(), "mkfifo {}: {o:?}", path.display());
}

/// Asserts that `path` is now a regular file (a link or pipe was replaced,
/// not followed).
fn assert_regular(path: &Path) {
    let m = std::fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{} is missing: {e}", path.display()));
    assert!(
        m.file_type().is_file(),
        "{} is not a regular file: {:?}",
        path.display(),
        m.file_type()
    );
}

/// A small Gleipnir text trace of one stack array, loadable without
/// Valgrind.
fn small_text_trace(dir: &Path) -> PathBuf {
    let mut t = String::from("X START 0:1 at 0\n");
    for i in 0..16u64 {
        t.push_str(&format!("S {:x} 4 1 S LV arr \n", 0x1fff000600 + 4 * i));
        t.push_str(&format!("L {:x} 4 1 S LV arr \n", 0x1fff000600 + 4 * i));
    }
    let p = dir.join("t.txt");
    std::fs::write(&p, t).unwrap();
    p
}

/// `.mapvis/lock` as a link to a file of the user's: any command, even one
/// that only changes a setting, leaves that file byte for byte as it was
/// and replaces the link by mapvis's own lock file. A named pipe there
/// does not make the command wait.
#[test]
fn the_lock_file_is_never_followed() {
    let (_top, work, outside) = folder_and_outside();
    let precious = outside.join("precious.txt");
    std::fs::write(&precious, "the user's own words\n").unwrap();
    std::fs::create_dir(work.join(".mapvis")).unwrap();
    let lock = work.join(".mapvis/lock");
    std::os::unix::fs::symlink(&precious, &lock).unwrap();
    let o = session_within(&work, "set_mem_alloc all", 60);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(&precious).unwrap(), b"the user's own words\n");
    assert_regular(&lock);
    std::fs::remove_file(&lock).unwrap();
    mkfifo(&lock);
    let o = session_within(&work, "set_mem_alloc H", 60);
    assert!(o.status.success(), "{}", text(&o));
    assert_regular(&lock);
}

/// Links in `figures/` and `visinfo/` to the user's files, and a named
/// pipe in place of an output: every output is written as a regular file
/// in the folder, replacing the link or pipe; the user's files are byte
/// for byte unchanged, and no command waits on the pipe.
#[test]
fn outputs_replace_links_and_pipes_instead_of_writing_through_them() {
    let (_top, work, outside) = folder_and_outside();
    let trace = small_text_trace(&work);
    std::fs::create_dir(work.join("figures")).unwrap();
    std::fs::create_dir(work.join("visinfo")).unwrap();
    let links = [
        ("figures/index.html", "notes.html"),
        ("figures/plotly.min.js", "script.js"),
        ("figures/complete_memory_access_pattern.html", "page.html"),
        ("visinfo/memory_stats.csv", "stats.csv"),
        ("visinfo/order_data.parquet", "data.parquet"),
    ];
    for (inside, mine) in links {
        let target = outside.join(mine);
        std::fs::write(&target, format!("the user's {mine}\n")).unwrap();
        std::os::unix::fs::symlink(&target, work.join(inside)).unwrap();
    }
    for pipe in [
        "visinfo/order_data.csv",
        "visinfo/memory_stats_addresses.csv",
    ] {
        mkfifo(&work.join(pipe));
    }
    let o = session_within(
        &work,
        &format!(
            "load_trace {}; memory_trace_analysis; set_mem_alloc all; memory_stats save; filtering_process; complete_memory_access_pattern",
            trace.display()
        ),
        120,
    );
    assert!(o.status.success(), "{}", text(&o));
    for (inside, mine) in links {
        assert_eq!(
            std::fs::read_to_string(outside.join(mine)).unwrap(),
            format!("the user's {mine}\n"),
            "{mine} was written through {inside}"
        );
        assert_regular(&work.join(inside));
    }
    for pipe in [
        "visinfo/order_data.csv",
        "visinfo/memory_stats_addresses.csv",
    ] {
        assert_regular(&work.join(pipe));
    }
    let index = std::fs::read_to_string(work.join("figures/index.html")).unwrap();
    assert!(
        index.contains("complete_memory_access_pattern.html"),
        "{index}"
    );
    assert!(leftovers(&work).is_empty(), "{:?}", leftovers(&work));
}

/// Manifest entries that lead out of the folder (`../x`, an absolute path,
/// a folder that is a link out) are refused with a message, even when the
/// file outside has exactly the recorded size and time (as a file
/// unpacked from a tarball has); entries inside are still removed.
#[test]
fn clear_analysis_removes_nothing_outside_the_folder() {
    use std::os::unix::fs::MetadataExt;
    let (_top, work, outside) = folder_and_outside();
    let victims = ["dotdot.txt", "absolute.txt", "linked.txt"];
    for v in victims {
        std::fs::write(outside.join(v), format!("the user's {v}")).unwrap();
    }
    std::fs::create_dir(work.join("figures")).unwrap();
    let ours = work.join("figures/ours.html");
    std::fs::write(&ours, "mapvis's page").unwrap();
    std::os::unix::fs::symlink(&outside, work.join("visinfo")).unwrap();
    let written = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        let ns = m.mtime() as u128 * 1_000_000_000 + m.mtime_nsec() as u128;
        format!("{{\"size\": {}, \"mtime_ns\": {ns}}}", m.len())
    };
    let manifest = format!(
        "{{\"version\": 1, \"files\": {{\"../outside/dotdot.txt\": {}, \"{}\": {}, \"visinfo/linked.txt\": {}, \"figures/ours.html\": {}}}}}",
        written(&outside.join("dotdot.txt")),
        outside.join("absolute.txt").display(),
        written(&outside.join("absolute.txt")),
        written(&outside.join("linked.txt")),
        written(&ours),
    );
    std::fs::create_dir(work.join(".mapvis")).unwrap();
    std::fs::write(work.join(".mapvis/manifest.json"), manifest).unwrap();
    let o = session_within(&work, "clear_analysis", 60);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    for v in victims {
        assert_eq!(
            std::fs::read_to_string(outside.join(v)).unwrap(),
            format!("the user's {v}"),
            "{out}"
        );
    }
    assert!(!ours.exists(), "{out}");
    assert!(
        out.contains("kept ../outside/dotdot.txt: the manifest")
            && out.contains("outside the working folder"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "kept {}: the manifest",
            outside.join("absolute.txt").display()
        )),
        "{out}"
    );
    assert!(
        out.contains("a folder on its way is a symbolic link"),
        "{out}"
    );
}

/// An export that cannot be made (a Gleipnir text trace has no binary
/// trace to export) leaves the file it would have replaced as it was.
#[test]
fn a_failed_export_keeps_its_destination() {
    let (_top, work, _outside) = folder_and_outside();
    let trace = small_text_trace(&work);
    for cmd in ["export_memtrace", "export_ops"] {
        let keep = work.join("keep.txt");
        std::fs::write(&keep, "the user's previous export\n").unwrap();
        let o = session_within(
            &work,
            &format!("load_trace {}; {cmd} keep.txt", trace.display()),
            60,
        );
        assert!(!o.status.success(), "{cmd}: {}", text(&o));
        assert_eq!(
            std::fs::read_to_string(&keep).unwrap(),
            "the user's previous export\n",
            "{cmd}: {}",
            text(&o)
        );
        assert!(leftovers(&work).is_empty(), "{:?}", leftovers(&work));
    }
}

/// A `session.json` written by someone else names a script as the Valgrind
/// binary: run_gleipnir does not run it, and the session says so when it
/// starts; the restored program to trace is named before it runs.
#[test]
fn a_restored_session_does_not_choose_the_valgrind_binary() {
    let (_top, work, outside) = folder_and_outside();
    let ran = outside.join("ran");
    let evil = outside.join("evil.sh");
    std::fs::write(
        &evil,
        format!("#!/bin/sh\necho \"$@\" >> '{}'\nexit 1\n", ran.display()),
    )
    .unwrap();
    std::fs::set_permissions(&evil, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (_d, exe) = compile("tests/c/an_five.c", &[]);
    std::fs::create_dir(work.join(".mapvis")).unwrap();
    std::fs::write(
        work.join(".mapvis/session.json"),
        serde_json::json!({ "exe": exe, "valgrind": evil, "args": [] }).to_string(),
    )
    .unwrap();
    let o = session_within(&work, "run_gleipnir", 120);
    let out = text(&o);
    assert!(!ran.exists(), "the saved valgrind path was run: {out}");
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains(&format!("name {} as the Valgrind binary", evil.display()))
            && out.contains("set_valgrind_path"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "running {}, the program to trace restored from",
            exe.display()
        )),
        "{out}"
    );
}

/// load_trace of a named pipe is refused at once, naming the pipe, rather
/// than waiting in open() for a writer that never comes.
#[test]
fn load_trace_refuses_a_named_pipe() {
    let (_top, work, _outside) = folder_and_outside();
    mkfifo(&work.join("t.fifo"));
    let o = session_within(&work, "load_trace t.fifo", 30);
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("t.fifo cannot be loaded: it is a named pipe, not a regular file"),
        "{out}"
    );
}

/// Whether process `pid` still runs (a zombie waiting for its parent to
/// reap it has ended).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
    })
}

/// mapvis killed during run_gleipnir (SIGTERM, SIGHUP as when its terminal
/// closes, SIGKILL): the Valgrind it started ends too, within seconds,
/// rather than tracing on with nobody to read the trace.
#[test]
fn valgrind_does_not_outlive_a_killed_mapvis() {
    let (_bin, exe) = compile("tests/c/safety_forever.c", &[]);
    // Run under nohup (SIGHUP ignored, which children inherit), mapvis
    // rightly survives a hangup: that case then says nothing.
    let hup = if hangup_ignored() { None } else { Some("HUP") };
    for sig in ["TERM"].into_iter().chain(hup).chain(["KILL"]) {
        let work = tempfile::tempdir().unwrap();
        let mut child = mapvis(work.path())
            .args(["-c", &format!("load_exe {}; run_gleipnir", exe.display())])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let valgrind = loop {
            if let Some(&p) = children(child.id()).first() {
                break p;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "SIG{sig}: no Valgrind started"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        Command::new("kill")
            .args([&format!("-{sig}"), &child.id().to_string()])
            .status()
            .unwrap();
        child.wait().unwrap();
        let killed = Instant::now();
        while running(valgrind) {
            if killed.elapsed() > Duration::from_secs(10) {
                let _ = Command::new("kill")
                    .args(["-KILL", &valgrind.to_string()])
                    .status();
                panic!(
                    "SIG{sig}: Valgrind (pid {valgrind}) still runs 10 s after mapvis was killed"
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Whether this process ignores SIGHUP (it runs under nohup), from the
/// ignored-signal mask of /proc/self/status.
fn hangup_ignored() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .is_some_and(|mask| mask & 1 != 0)
}

/// A copied working folder analyses its own trace: `session.json` names a
/// trace inside the folder relative to it, so once the original folder is
/// gone the copy still analyses (and counts as before), from its own copy.
#[test]
fn a_copied_folder_analyses_its_own_trace() {
    let (_top, work, outside) = folder_and_outside();
    let (_d, exe) = compile("tests/c/an_five.c", &[]);
    let script = "memory_trace_analysis; foreach d [memory_stats] { puts \"ROW [dict get $d variable] [dict get $d accesses]\" }";
    let first = session(
        &work,
        &format!(
            "load_exe {}; set_mem_alloc H; run_gleipnir; {script}",
            exe.display()
        ),
    );
    assert!(first.status.success(), "{}", text(&first));
    let saved = std::fs::read_to_string(work.join(".mapvis/session.json")).unwrap();
    let j: serde_json::Value = serde_json::from_str(&saved).unwrap();
    let trace = j["trace_file"].as_str().unwrap_or_default();
    assert!(
        !trace.is_empty() && !Path::new(trace).is_absolute(),
        "the trace inside the folder is saved relative to it: {saved}"
    );
    let copy = outside.join("copy");
    let cp = Command::new("cp")
        .arg("-a")
        .arg(&work)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(cp.success());
    std::fs::remove_dir_all(&work).unwrap();
    let again = session(&copy, script);
    let out = text(&again);
    assert!(again.status.success(), "{out}");
    let rows = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("ROW "))
            .map(String::from)
            .collect()
    };
    let before = rows(&text(&first));
    assert!(before.iter().any(|l| l == "ROW a 30"), "{before:?}");
    assert_eq!(rows(&out), before, "{out}");
}

// ---------------------------------------------------------------------------
// Results never silently partial, stale or mixed; messages that say what
// is wrong (issue 29, items 7-9, 12, 15, 17, 18).
// ---------------------------------------------------------------------------

/// A Gleipnir text trace of `n` stores and `n` loads to the stack array
/// `var`, written to `dir/file`.
fn text_trace(dir: &Path, file: &str, var: &str, n: u64) -> PathBuf {
    let mut t = String::from("X START 0:1 at 0\n");
    for i in 0..n {
        t.push_str(&format!("S {:x} 4 1 S LV {var} \n", 0x1fff000600 + 4 * i));
        t.push_str(&format!("L {:x} 4 1 S LV {var} \n", 0x1fff000600 + 4 * i));
    }
    let p = dir.join(file);
    std::fs::write(&p, t).unwrap();
    p
}

/// The `ROW variable accesses` lines of a script that printed them with
/// [`ROWS`].
fn rows(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with("ROW "))
        .map(String::from)
        .collect()
}

/// Prints one `ROW variable accesses` line per row of memory_stats.
const ROWS: &str =
    "foreach d [memory_stats] { puts \"ROW [dict get $d variable] [dict get $d accesses]\" }";

/// Every file under `dir`, relative to it.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(e.path());
            } else {
                out.push(e.path().strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out
}

/// `figures/`, `visinfo/`, `.mapvis/` (and a saved analysis' folder)
/// that are symbolic links to a folder outside: every command is refused,
/// naming the link, and nothing is written through it.
#[test]
fn linked_output_folders_are_refused() {
    for link in ["figures", "visinfo", ".mapvis", ".mapvis/analysis"] {
        let (_top, work, outside) = folder_and_outside();
        let trace = small_text_trace(&work);
        if link == ".mapvis/analysis" {
            std::fs::create_dir(work.join(".mapvis")).unwrap();
        }
        std::os::unix::fs::symlink(&outside, work.join(link)).unwrap();
        let o = session_within(
            &work,
            &format!(
                "load_trace {}; memory_trace_analysis; memory_stats save; complete_memory_access_pattern",
                trace.display()
            ),
            120,
        );
        let out = text(&o);
        assert!(!o.status.success(), "{link}: {out}");
        assert!(
            out.contains(&format!(
                "{} is a symbolic link (to {})",
                work.join(link).display(),
                outside.display()
            )) && out.contains("Remove the link"),
            "{link}: {out}"
        );
        assert_eq!(files_in(&outside), Vec::<PathBuf>::new(), "{link}: {out}");
    }
}

/// A program compiled from a copy of `tests/c/an_five.c` in a fresh
/// folder, with `flags`: (folder, source, executable).
fn compile_copy(flags: &[&str]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("five.c");
    std::fs::copy(root().join("tests/c/an_five.c"), &src).unwrap();
    let exe = dir.path().join("five");
    let o = Command::new("cc")
        .args(flags)
        .arg(format!("-I{}", root().join("pins").display()))
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    (dir, src, exe)
}

/// A source file replaced by a binary file is reported as not being a
/// text source, not as missing.
#[test]
fn a_binary_source_is_not_reported_missing() {
    let (dir, src, exe) = compile_copy(&["-g", "-O0"]);
    std::fs::copy(&exe, &src).unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let o = session(
        &work,
        &format!(
            "load_exe {}; set_mem_alloc H; run_gleipnir; memory_trace_analysis",
            exe.display()
        ),
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains(&format!("the source {} is not a text file", src.display())),
        "{out}"
    );
    assert!(!out.contains("was not found"), "{out}");
}

/// The allocation commands and exports on a Gleipnir text trace say what
/// they need, rather than advising the load_trace the user ran.
#[test]
fn a_text_trace_is_not_answered_with_use_load_trace() {
    let (_top, work, _outside) = folder_and_outside();
    let trace = small_text_trace(&work);
    for cmd in ["heap_stats", "alloc_sites", "export_memtrace m.txt"] {
        let o = session_within(&work, &format!("load_trace {}; {cmd}", trace.display()), 60);
        let out = text(&o);
        assert!(!o.status.success(), "{cmd}: {out}");
        assert!(
            out.contains(&format!("{} is a Gleipnir text trace", trace.display()))
                && out.contains("run_gleipnir")
                && out.contains("heap_profile"),
            "{cmd}: {out}"
        );
        assert!(!out.contains("use load_trace"), "{cmd}: {out}");
    }
}

/// A saved table replaced by one with another schema is refused naming
/// the file, the missing column and the fix (here with the manifest gone,
/// so that its checksums cannot catch it first).
#[test]
fn a_table_with_the_wrong_schema_names_file_and_column() {
    let (_top, work, _outside) = folder_and_outside();
    let trace = small_text_trace(&work);
    let o = session(
        &work,
        &format!("load_trace {}; memory_trace_analysis", trace.display()),
    );
    assert!(o.status.success(), "{}", text(&o));
    let a = work.join(".mapvis/analysis");
    std::fs::copy(a.join("allocations.parquet"), a.join("lines.parquet")).unwrap();
    std::fs::remove_file(work.join(".mapvis/manifest.json")).unwrap();
    let o = session(&work, "memory_stats");
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains(&format!(
            "cannot read the saved analysis in {}: it has no column \"line\"",
            a.join("lines.parquet").display()
        )) && out.contains("Run memory_trace_analysis again"),
        "{out}"
    );
}

/// A file of a saved analysis and how a test changes it (given the
/// analysis' folder).
type Tamper<'a> = (&'a str, &'a dyn Fn(&Path));

/// Files of a saved analysis swapped from another analysis, edited or
/// added are refused, naming the file; files only touched (their times
/// changed, as a copy without times makes them) are still used.
#[test]
fn a_tampered_saved_analysis_is_refused() {
    let made = tempfile::tempdir().unwrap();
    let analysed = |name: &str, var: &str, n: u64| {
        let w = made.path().join(name);
        std::fs::create_dir(&w).unwrap();
        let t = text_trace(&w, "t.txt", var, n);
        let o = session(
            &w,
            &format!("load_trace {}; memory_trace_analysis; {ROWS}", t.display()),
        );
        assert!(o.status.success(), "{}", text(&o));
        (w, rows(&text(&o)))
    };
    let (b, _) = analysed("b", "other", 7);
    let cases: [Tamper; 4] = [
        ("variables.parquet", &|a: &Path| {
            std::fs::copy(
                b.join(".mapvis/analysis/variables.parquet"),
                a.join("variables.parquet"),
            )
            .map(drop)
            .unwrap()
        }),
        ("summary.json", &|a: &Path| {
            let p = a.join("summary.json");
            let s = std::fs::read_to_string(&p).unwrap();
            let s = s.replace("\"accesses\": 64", "\"accesses\": 65");
            std::fs::write(&p, s).unwrap()
        }),
        ("locations.parquet", &|a: &Path| {
            std::fs::copy(
                b.join(".mapvis/analysis/locations.parquet"),
                a.join("locations.parquet"),
            )
            .map(drop)
            .unwrap()
        }),
        ("extra.parquet", &|a: &Path| {
            let part = files_in(&a.join("accesses"))
                .into_iter()
                .find(|p| p.extension().is_some_and(|x| x == "parquet"))
                .expect("a part file");
            let to = a
                .join("accesses")
                .join(part.parent().unwrap())
                .join("extra.parquet");
            std::fs::copy(a.join("accesses").join(&part), to)
                .map(drop)
                .unwrap()
        }),
    ];
    for (i, (file, tamper)) in cases.iter().enumerate() {
        let (w, before) = analysed(&format!("a{i}"), "arr", 32);
        assert_eq!(before, ["ROW arr 64"], "{file}");
        tamper(&w.join(".mapvis/analysis"));
        let o = session(&w, ROWS);
        let out = text(&o);
        assert!(!o.status.success(), "{file}: {out}");
        assert!(
            out.contains("is not the one mapvis saved")
                && out.contains(file)
                && out.contains("run memory_trace_analysis again"),
            "{file}: {out}"
        );
    }
    // Files whose times changed but not their content (as a copy that
    // does not keep times makes them): each is read and its checksum
    // compared, and the analysis is used.
    let (w, before) = analysed("whole", "arr", 32);
    let later = std::time::SystemTime::now() + Duration::from_secs(60);
    for f in files_in(&w.join(".mapvis/analysis")) {
        let f = std::fs::File::options()
            .write(true)
            .open(w.join(".mapvis/analysis").join(f))
            .unwrap();
        f.set_modified(later).unwrap();
    }
    let o = session(&w, ROWS);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rows(&text(&o)), before);
}

/// After the trace is made again and analysed again, the figures drawn
/// from the earlier analysis are marked stale in figures/index.html and
/// its visinfo data files are removed; a figure drawn again is current.
#[test]
fn figures_of_an_earlier_analysis_are_marked_stale() {
    let (_top, work, _outside) = folder_and_outside();
    let t = text_trace(&work, "t.txt", "arr", 16);
    let o = session(
        &work,
        &format!(
            "load_trace {}; memory_trace_analysis; memory_stats save; complete_memory_access_pattern; cache_stats save; set_mem_alloc all; filtering_process",
            t.display()
        ),
    );
    assert!(o.status.success(), "{}", text(&o));
    let id = |dir: &Path| -> String {
        let s = std::fs::read_to_string(dir.join(".mapvis/analysis/summary.json")).unwrap();
        let j: serde_json::Value = serde_json::from_str(&s).unwrap();
        j["analysis_id"].as_str().unwrap_or_default().to_string()
    };
    let first = id(&work);
    assert_eq!(first.len(), 16, "summary.json records the analysis id");
    let page = work.join("figures/complete_memory_access_pattern.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(&format!(
            "<meta name=\"mapvis-analysis\" content=\"A:{first}:.mapvis/analysis\">"
        )),
        "the page records its analysis"
    );
    let index = || std::fs::read_to_string(work.join("figures/index.html")).unwrap();
    assert!(!index().contains("STALE"));
    assert!(work.join("visinfo/memory_stats.csv").exists());
    // The program changed: a new trace, analysed again.
    text_trace(&work, "t.txt", "arr", 20);
    let o = session(&work, "memory_trace_analysis");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let second = id(&work);
    assert_ne!(first, second);
    assert!(
        index().contains(&format!(
            "STALE: made from an earlier analysis ({first}), not the current one ({second})"
        )),
        "{}",
        index()
    );
    let visinfo: Vec<PathBuf> = files_in(&work.join("visinfo"));
    assert!(visinfo.is_empty(), "{visinfo:?}: {out}");
    assert!(out.contains("made from the previous analysis"), "{out}");
    assert!(
        index().contains(&format!(
            "cache_stats save</code></td><td>misses per variable and level, miss-ratio curves</td><td><br><span class=\"stale\">STALE: made from an earlier analysis ({first})"
        )),
        "{}",
        index()
    );
    let o = session(&work, "complete_memory_access_pattern; cache_stats save");
    assert!(o.status.success(), "{}", text(&o));
    assert!(!index().contains("STALE"), "{}", index());
}

/// Ctrl-C (a real SIGINT to mapvis) during memory_trace_analysis of a
/// trace of tens of millions of accesses: the next session's memory_stats
/// shows the analysis marked PARTIAL, saying it was interrupted, with
/// fewer accesses than the whole analysis counts.
#[test]
fn ctrl_c_during_the_analysis_leaves_it_marked_partial() {
    let (bin, exe) = compile("tests/c/safety_big.c", &[]);
    let work = bin.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let o = session(&work, &format!("load_exe {}; run_gleipnir", exe.display()));
    assert!(o.status.success(), "{}", text(&o));
    let mut child = mapvis(&work)
        .args(["-c", "set_mem_alloc H; memory_trace_analysis"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("memory_trace_analysis starts within 60 s");
        let started = line.starts_with("analysing ");
        seen.push(line);
        if started {
            break;
        }
    }
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("mapvis did not stop within 60 s of Ctrl-C: {seen:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    reader.join().unwrap();
    seen.extend(rx.try_iter());
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    let _ = status;
    let next = session(&work, &format!("set_mem_alloc H; {ROWS}"));
    let out = text(&next);
    assert!(next.status.success(), "{out}");
    assert!(
        out.contains("warning: this analysis is PARTIAL (the analysis was interrupted after"),
        "{seen:?}\n{err}\n{out}"
    );
    let counted: u64 = rows(&out)
        .iter()
        .filter_map(|r| r.rsplit(' ').next()?.parse::<u64>().ok())
        .sum();
    // a[i] += r: one load and one store of each of 2^20 ints, 4 times.
    assert!(counted < 8 << 20, "{counted} accesses: {out}");
}

/// Programs compiled without -g, and stripped ones, are loaded with one
/// warning that says what their names fall back to, and then traced and
/// analysed without another word about it.
#[test]
fn programs_without_debug_information_are_traced_with_one_warning() {
    let (_d, _src, plain) = compile_copy(&["-O0"]);
    let stripped = plain.with_file_name("five-stripped");
    let o = Command::new("strip")
        .arg("-o")
        .arg(&stripped)
        .arg(&plain)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    for (exe, says) in [
        (
            &plain,
            "has no debug information (it was compiled without -g)",
        ),
        (&stripped, "is stripped (it has no symbol table)"),
    ] {
        let (_top, work, _outside) = folder_and_outside();
        let o = session(
            &work,
            &format!(
                "load_exe {}; set_mem_alloc H; run_gleipnir; memory_trace_analysis; {ROWS}",
                exe.display()
            ),
        );
        let out = text(&o);
        assert!(o.status.success(), "{}: {out}", exe.display());
        assert_eq!(out.matches(says).count(), 1, "{out}");
        assert_eq!(
            out.matches("debug information").count(),
            1,
            "said once: {out}"
        );
        // The five blocks' 120 accesses (worked in tests/c/an_five.c) are
        // all counted.
        let total: u64 = rows(&out)
            .iter()
            .filter_map(|r| r.rsplit(' ').next()?.parse::<u64>().ok())
            .sum();
        assert_eq!(total, 120, "{out}");
    }
}

/// A program that calls exec inside the region: the trace keeps its 100
/// stores before the exec, run_gleipnir says the program called exec
/// (not that the disk may be full), and the analysis is PARTIAL for that
/// reason. An exec that fails leaves a whole trace, not marked; an exec
/// after GL_STOP leaves the region whole, not marked either.
#[test]
fn exec_inside_the_region_keeps_the_trace_up_to_it() {
    let (bin, exe) = compile("tests/c/safety_exec.c", &[]);
    for (args, partial) in [("", true), ("fail", false), ("after", false)] {
        let work = bin.path().join(format!("work{args}"));
        std::fs::create_dir(&work).unwrap();
        let o = session(
            &work,
            &format!(
                "load_exe {}; set_arguments {args}; set_mem_alloc H; run_gleipnir; memory_trace_analysis; {ROWS}",
                exe.display()
            ),
        );
        let out = text(&o);
        assert!(o.status.success(), "{args}: {out}");
        assert!(!out.contains("disk"), "{args}: {out}");
        assert_eq!(rows(&out), ["ROW a 100"], "{args}: {out}");
        let said = out.contains(
            "(the program called exec inside the region: the new program replaced the traced one, so the trace ends at the exec; it is readable)",
        );
        assert_eq!(said, partial, "{args}: {out}");
        assert_eq!(
            out.contains("the exec failed and the program went on"),
            args == "fail",
            "{args}: {out}"
        );
        assert_eq!(
            out.contains("(the program called exec after its regions: the new program replaced the traced one, so the trace ends at the exec (its regions are whole); it is readable)"),
            args == "after",
            "{args}: {out}"
        );
        assert!(!out.contains("PARTIAL") || partial, "{args}: {out}");
        assert_eq!(
            out.contains(
                "warning: this analysis is PARTIAL (the program called exec inside the region"
            ),
            partial,
            "{args}: {out}"
        );
    }
}

/// Runs `script` with `mapvis -c` in `dir` with its address space limited
/// to `mb` MiB (as `ulimit -v` does), set by prlimit on the mapvis process
/// itself: no shell is involved.
fn session_limited(dir: &Path, mb: u64, script: &str) -> Output {
    Command::new("prlimit")
        .arg(format!("--as={}", mb << 20))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_mapvis"))
        .args(["-c", script])
        .current_dir(dir)
        .env_remove("MAPVIS_HISTORY")
        .stdin(Stdio::null())
        .output()
        .expect("prlimit runs (util-linux)")
}

/// Out of memory under a 150 MiB address-space limit, during the analysis
/// of 37 M accesses and while drawing 8 M: mapvis still aborts, but says
/// in one sentence which command ran out and what to try, and the saved
/// analysis made before is untouched and still used.
#[test]
fn running_out_of_memory_names_the_step_and_keeps_the_results() {
    let (bin, exe) = compile("tests/c/safety_big.c", &[]);
    let work = bin.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let script = format!("set_mem_alloc H; {ROWS}");
    let o = session(
        &work,
        &format!(
            "load_exe {}; set_mem_alloc H; run_gleipnir; memory_trace_analysis; {script}",
            exe.display()
        ),
    );
    assert!(o.status.success(), "{}", text(&o));
    let before = rows(&text(&o));
    assert_eq!(before, ["ROW a 8388608"]);
    let summary = work.join(".mapvis/analysis/summary.json");
    let saved = std::fs::read(&summary).unwrap();
    for step in ["memory_trace_analysis", "complete_memory_access_pattern"] {
        let o = session_limited(&work, 150, &format!("set_mem_alloc H; {step}"));
        let out = text(&o);
        assert!(!o.status.success(), "{step}: {out}");
        assert!(
            out.contains(&format!("mapvis ran out of memory in {step}: it needed "))
                && out.contains("Files already in the working folder are kept")
                && out.contains("raise the limit"),
            "{step}: {out}"
        );
        assert_eq!(std::fs::read(&summary).unwrap(), saved, "{step}");
    }
    let o = session(&work, &script);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rows(&text(&o)), before);
}
