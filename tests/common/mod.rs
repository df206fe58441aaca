//! Helpers shared by the integration tests: compile a C program from
//! `tests/c/` (or `scripts/`) with `cc -g -O0` and the pins header, trace it
//! under the real Valgrind tool, and read the trace back.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::Command;

use mapvis::filter::heap::{HeapReport, HeapRun, SiteStats};
use mapvis::trace::naming::BacktraceSymbolizer;
use mapvis::trace::record::Event;
use mapvis::trace::record::{find_valgrind, run_trace, RunOutcome, TraceRequest};
use mapvis::trace::record::{EndState, TraceReader};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Compiles `rel` (relative to the repository root) into a fresh temporary
/// folder; returns the folder (keep it alive) and the executable.
pub fn compile(rel: &str, extra: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = root().join(rel);
    let exe = dir.path().join(src.file_stem().unwrap());
    let out = Command::new("cc")
        .args(["-g", "-O0"])
        .arg(format!("-I{}", root().join("pins").display()))
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .args(extra)
        .output()
        .expect("run cc");
    assert!(
        out.status.success(),
        "compiling {rel} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (dir, exe)
}

/// A trace request with the test defaults, writing into `dir`.
pub fn request(dir: &Path, exe: &Path, args: &[&str]) -> TraceRequest {
    TraceRequest {
        valgrind: find_valgrind(None).expect("valgrind on PATH"),
        exe: exe.to_path_buf(),
        args: args.iter().map(|s| s.to_string()).collect(),
        trace_file: dir.join("t.mvt"),
        stack_depth: 8,
        heap_only: false,
        from_start: false,
        sync_events: false,
        region: None,
        window: None,
    }
}

/// Reads every event of a trace; panics on corrupt data.
pub fn read_events(path: &Path) -> (Vec<Event>, EndState) {
    let mut r = TraceReader::open(path).expect("open trace");
    let mut evs = Vec::new();
    while let Some(e) = r.next_event().expect("valid trace") {
        evs.push(e);
    }
    (evs, r.end_state().clone())
}

/// Compiles, traces and reads a program in one go.
pub fn trace(
    rel: &str,
    extra_cc: &[&str],
    args: &[&str],
) -> (tempfile::TempDir, PathBuf, RunOutcome, Vec<Event>, EndState) {
    let (dir, exe) = compile(rel, extra_cc);
    let req = request(dir.path(), &exe, args);
    let outcome = run_trace(&req).expect("run the tracer");
    let (evs, end) = read_events(&req.trace_file);
    (dir, exe, outcome, evs, end)
}

/// The heap blocks allocated, in order: (address, size).
pub fn allocs(evs: &[Event]) -> Vec<(u64, u64)> {
    evs.iter()
        .filter_map(|e| match e {
            Event::Alloc(a) => Some((a.addr, a.size)),
            _ => None,
        })
        .collect()
}

/// The accesses.
pub fn accesses(evs: &[Event]) -> Vec<mapvis::trace::record::Access> {
    evs.iter()
        .filter_map(|e| match e {
            Event::Access(a) => Some(*a),
            _ => None,
        })
        .collect()
}

/// The first line of `rel` containing `marker`, 1-based.
pub fn line_of(rel: &str, marker: &str) -> u32 {
    let text = std::fs::read_to_string(root().join(rel)).unwrap();
    text.lines()
        .position(|l| l.contains(marker))
        .expect("marker present") as u32
        + 1
}

/// Runs `script` with `mapvis -c` in the folder `dir` (also its HOME, so
/// no history or setting leaks in), asserting it succeeds; returns its
/// standard output.
pub fn mapvis_script(dir: &Path, script: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mapvis"))
        .current_dir(dir)
        .env("HOME", dir)
        .env_remove("MAPVIS_HISTORY")
        .args(["-c", script])
        .output()
        .expect("mapvis runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{script}\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The `N KEY variable accesses misses_L1 misses_L2` lines a script
/// printed, by (key, variable).
pub fn printed_counts(out: &str) -> std::collections::BTreeMap<(String, String), [u64; 3]> {
    out.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            if w.len() != 6 || w[0] != "N" {
                return None;
            }
            let n = |i: usize| w[i].parse::<u64>().unwrap();
            Some(((w[1].to_string(), w[2].to_string()), [n(3), n(4), n(5)]))
        })
        .collect()
}

/// Runs `script` with `mapvis -c` in `dir`, asserting it fails; returns
/// what it printed on both streams.
pub fn mapvis_script_fails(dir: &Path, script: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mapvis"))
        .current_dir(dir)
        .env("HOME", dir)
        .env_remove("MAPVIS_HISTORY")
        .args(["-c", script])
        .output()
        .expect("mapvis runs");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{script} should fail: {all}");
    all
}

/// Whether the tests run under CI (`CI=true`), where a tool a test needs
/// must be present: a missing one fails the test instead of skipping it.
pub fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// A test cannot check `what` because a tool is missing (`why`, with how
/// to install it): under CI a failure, elsewhere a loud SKIPPED message
/// (the caller then returns).
pub fn missing_tool(what: &str, why: &str) {
    assert!(
        !under_ci(),
        "{why}, so {what} (CI=true: a missing tool is a failure)"
    );
    eprintln!("\n\n!!!!!!!! SKIPPED: {why}; {what} !!!!!!!!\n");
}

/// The headless Chromium to render pages with, or `None` (after
/// [`missing_tool`], which fails under CI) when none is installed.
/// `MAPVIS_CHROMIUM` names the browser to use instead of the usual paths;
/// set to a file that does not exist, it makes Chromium count as missing
/// (how to check that CI does not skip).
pub fn chromium_or_skip(what: &str) -> Option<PathBuf> {
    let found = match std::env::var_os("MAPVIS_CHROMIUM") {
        Some(p) => Some(PathBuf::from(p)).filter(|p| p.exists()),
        None => [
            "/usr/bin/chromium",
            "/usr/bin/chromium-browser",
            "/usr/bin/google-chrome",
        ]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists()),
    };
    if found.is_none() {
        missing_tool(what, "chromium is not installed (apt-get install chromium)");
    }
    found
}

/// The sites of `report` that allocated and whose innermost frame is line
/// `marker` of `rel` (the first line holding it), as the symbolizer names
/// it (`(file.c:LINE)`).
pub fn sites_at<'a>(
    report: &'a HeapReport,
    run: &HeapRun,
    sym: &mut BacktraceSymbolizer,
    rel: &str,
    marker: &str,
) -> Vec<&'a SiteStats> {
    let file = Path::new(rel).file_name().unwrap().to_string_lossy();
    let want = format!("({file}:{})", line_of(rel, marker));
    report
        .counts
        .sites
        .iter()
        .filter(|s| s.allocs > 0)
        .filter(|s| {
            sym.backtrace(&run.stacks[s.stack as usize])
                .first()
                .is_some_and(|f| f.display().ends_with(&want))
        })
        .collect()
}

/// variable -> (load_bytes, store_bytes, distinct addresses) of the
/// memory of `kind` in `a`, one entry per row of `grouping`.
pub fn by_var_in(
    a: &mapvis::filter::Analysis,
    kind: mapvis::filter::MemKind,
    grouping: mapvis::filter::stats::Grouping,
) -> std::collections::BTreeMap<String, (u64, u64, u64)> {
    let df = mapvis::filter::stats::per_variable_by(a, kind, grouping).unwrap();
    let names = df.column("variable").unwrap().str().unwrap().clone();
    let col = |c: &str| df.column(c).unwrap().u64().unwrap().clone();
    let (lb, sb, ad) = (col("load_bytes"), col("store_bytes"), col("addresses"));
    (0..df.height())
        .map(|i| {
            (
                names.get(i).unwrap().to_string(),
                (lb.get(i).unwrap(), sb.get(i).unwrap(), ad.get(i).unwrap()),
            )
        })
        .collect()
}

/// Runs cachegrind on `exe` with the caches the locality tests model: a
/// 32 KiB 8-way I1 and D1 and a 256 KiB 8-way LL, 64-byte lines, writing
/// its output file into `dir`. Returns the run's exit status (each caller
/// says what it accepts) and the output file's path.
#[allow(dead_code)]
pub fn cachegrind(exe: &Path, dir: &Path) -> (std::process::ExitStatus, PathBuf) {
    let out = dir.join("cg.out");
    let st = std::process::Command::new("valgrind")
        .args([
            "--tool=cachegrind",
            "--cache-sim=yes",
            "--I1=32768,8,64",
            "--D1=32768,8,64",
            "--LL=262144,8,64",
        ])
        .arg(format!("--cachegrind-out-file={}", out.display()))
        .arg(exe)
        .output()
        .expect("run cachegrind");
    (st.status, out)
}

/// The fenced block (```` ```lang ````) that follows `<!-- marker -->` in
/// the Markdown file `rel`: the doc's own text, so a test that runs it
/// cannot drift from what the doc shows.
pub fn doc_block(rel: &str, marker: &str, lang: &str) -> String {
    let doc = std::fs::read_to_string(root().join(rel)).unwrap();
    let at = doc
        .find(&format!("<!-- {marker} -->"))
        .unwrap_or_else(|| panic!("{rel} has no {marker} marker"));
    let fence = format!("```{lang}\n");
    let start = at + doc[at..].find(&fence).expect("a fenced block") + fence.len();
    let end = start + doc[start..].find("```").expect("the block's end");
    doc[start..end].to_string()
}

/// One run of the sweeps of `scale_duckdb.rs` and `scale_spark.rs`: traces
/// `exe N NODES` (`c/scale_sweep.c`, compiled) in the working folder `work`
/// with `set_mem_alloc all`, analyses it (the dataset in
/// `.mapvis/analysis/`) and writes `visinfo/memory_stats.csv`.
pub fn scale_sweep_run(work: &Path, exe: &Path, n: u64, nodes: u64) {
    std::fs::create_dir_all(work).unwrap();
    mapvis_script(
        work,
        &format!(
            "load_exe {{{}}}; set_arguments {n} {nodes}; set_mem_alloc all; \
             run_gleipnir; memory_trace_analysis; memory_stats save",
            exe.display()
        ),
    );
}

/// The rows of `visinfo/memory_stats.csv` in the working folder `work`, in
/// its order, without the header (no field holds a comma here).
pub fn memory_stats_csv(work: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(work.join("visinfo/memory_stats.csv")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .map(|f| f.trim_matches('"').to_string())
                .collect()
        })
        .collect()
}
