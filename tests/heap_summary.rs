//! The summary the heap profiler's collector keeps while the program runs
//! (profile format 5's SUMMARY record), which `heap_profile` and
//! `alloc_sites` read instead of a pass over the calls: checked against
//! that pass on the same profile, and against counts worked out by hand
//! from tests/c/heap_summary.c (blocks freed by another thread, a realloc
//! chain inside the pins, leaks, temporaries), on scripts/alloc_bench.c at
//! four threads and on a C++ program; and with the chunks encoded by the
//! threads themselves (`MAPVIS_HEAP_ENCODER=threads`) or all by the
//! collector, which must read the same.
mod common;

use mapvis::filter::heap::{HeapReport, HeapRun, SiteStats};
use mapvis::trace::backtrace::BacktraceSymbolizer;
use mapvis::trace::heapprof::{install_preload, run_profiled};

const SRC: &str = "tests/c/heap_summary.c";
const ROUNDS: u64 = 20_000;
const GROWS: u64 = 300;
const LEAKS: u64 = 7;
const TEMPS: u64 = 500;

/// Profiles `exe` with `args`; returns its run (with its summary).
fn profile(dir: &tempfile::TempDir, exe: &std::path::Path, args: &[&str]) -> HeapRun {
    let run = profile_any(dir, exe, args);
    assert!(
        run.summary.is_some(),
        "the profile of {} has a summary",
        exe.display()
    );
    run
}

/// Profiles `exe` with `args`; returns its run, with or without a summary
/// (the collector gives it up when a thread holds it back for a second,
/// which a heavily loaded machine can make happen at 64 threads).
fn profile_any(dir: &tempfile::TempDir, exe: &std::path::Path, args: &[&str]) -> HeapRun {
    let out = dir.path().join("p.mvh");
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let outcome = run_profiled(exe, &args, &out).expect("run the profiler");
    assert_eq!(outcome.exit_code, Some(0));
    HeapRun::open_profile(&out).expect("read the profile")
}

/// Profiles `exe` with the chunks' encoder forced to `who` ("threads",
/// "collector" or "alternate"); returns the run and how many chunks the threads and the
/// collector encoded, as the library reports them on stderr.
fn profile_encoded_by(
    dir: &tempfile::TempDir,
    exe: &std::path::Path,
    args: &[&str],
    who: &str,
) -> (HeapRun, u64, u64) {
    let out = dir.path().join(format!("{who}.mvh"));
    let o = std::process::Command::new(exe)
        .args(args)
        .env("LD_PRELOAD", install_preload().unwrap())
        .env("MAPVIS_HEAP_OUT", &out)
        .env("MAPVIS_HEAP_ENCODER", who)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{err}");
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("mapvis heap profiler: "))
        .unwrap_or_else(|| panic!("the library reports its encoders: {err}"));
    let words: Vec<&str> = line.split(' ').collect();
    // "N chunks encoded by their threads, M by the collector"
    let (by_threads, by_collector) = (words[0].parse().unwrap(), words[6].parse().unwrap());
    let run = HeapRun::open_profile(&out).expect("read the profile");
    assert!(run.summary.is_some(), "{who}: the profile has a summary");
    (run, by_threads, by_collector)
}

/// The report from the summary and the report of the pass agree: every
/// count exactly; durations' counts and maxima exactly, their medians and
/// 99th percentiles to the pass's precision (1.6% above 1024 ns).
fn same(sum: &HeapReport, pass: &HeapReport) {
    let counts = |r: &HeapReport| {
        (
            r.allocs,
            r.frees,
            r.bytes,
            r.peak_live,
            r.leaked,
            r.temporary,
            r.unknown_frees,
            r.threads,
            r.region_allocs,
            r.timed_calls,
            r.dur_sample,
        )
    };
    assert_eq!(counts(sum), counts(pass));
    let used = |r: &HeapReport| -> Vec<SiteStats> {
        r.sites.iter().filter(|s| s.allocs > 0).cloned().collect()
    };
    assert_eq!(used(sum), used(pass));
    assert_eq!(sum.classes, pass.classes);
    assert_eq!(
        sum.times.len(),
        pass.times.len(),
        "{:?}\n{:?}",
        sum.times,
        pass.times
    );
    for (a, b) in sum.times.iter().zip(&pass.times) {
        assert_eq!(
            (&a.group, a.op, a.count, a.calls, a.max),
            (&b.group, b.op, b.count, b.calls, b.max)
        );
        for (x, y) in [(a.median, b.median), (a.p99, b.p99)] {
            let tol = (y as f64 * 0.02).max(1.0);
            assert!(
                (x as f64 - y as f64).abs() <= tol,
                "{} {}: {x} ns against {y} ns",
                a.group,
                a.op
            );
        }
    }
}

/// The one site whose innermost frame is at `marker` of `SRC`.
fn site<'a>(
    r: &'a HeapReport,
    run: &HeapRun,
    sym: &mut BacktraceSymbolizer,
    marker: &str,
) -> &'a SiteStats {
    let found = common::sites_at(r, run, sym, SRC, marker);
    assert_eq!(found.len(), 1, "one site at {marker}");
    found[0]
}

#[test]
fn summary_matches_the_pass_and_the_source() {
    let (dir, exe) = common::compile(SRC, &["-pthread"]);
    matches_the_source(&profile(&dir, &exe, &[]), &exe);
}

/// The same program with every chunk encoded by its own thread, then by
/// the collector alone: each profile reads as the source says.
#[test]
fn chunks_encoded_by_their_threads_read_the_same() {
    let (dir, exe) = common::compile(SRC, &["-pthread"]);
    let (run, by_threads, by_collector) = profile_encoded_by(&dir, &exe, &[], "threads");
    // The threads' last chunks are encoded at exit, by the collector.
    assert!(by_threads > by_collector, "{by_threads} {by_collector}");
    matches_the_source(&run, &exe);
    let (run, by_threads, by_collector) = profile_encoded_by(&dir, &exe, &[], "collector");
    assert_eq!(by_threads, 0);
    assert!(by_collector > 0);
    matches_the_source(&run, &exe);
}

/// The report of tests/c/heap_summary.c's profile: the summary agrees with
/// the pass, and both with the counts worked out from the source.
fn matches_the_source(run: &HeapRun, exe: &std::path::Path) {
    let r = HeapReport::build(run).unwrap();
    same(&r, &HeapReport::build_by_pass(run).unwrap());
    let mut sym = BacktraceSymbolizer::new(run.maps.clone(), Some(exe));
    let made = site(&r, run, &mut sym, "SITE_MADE");
    // Freed by the consumer thread, which allocates nothing of its own.
    assert_eq!(
        (made.allocs, made.bytes, made.leaked_blocks, made.temporary),
        (ROUNDS, 64 * ROUNDS, 0, 0)
    );
    assert!(
        made.peak_live >= 64 && made.peak_live <= 64 * 66,
        "{made:?}"
    );
    let grow = site(&r, run, &mut sym, "SITE_GROW");
    // Every realloc frees the block the thread allocated last, and so does
    // the free after the loop.
    assert_eq!(
        (
            grow.allocs,
            grow.bytes,
            grow.peak_live,
            grow.live,
            grow.temporary,
            grow.in_region
        ),
        (
            GROWS,
            16 * GROWS * (GROWS + 1) / 2,
            16 * GROWS,
            0,
            GROWS,
            GROWS
        )
    );
    let leak = site(&r, run, &mut sym, "SITE_LEAK");
    assert_eq!(
        (
            leak.allocs,
            leak.bytes,
            leak.live,
            leak.leaked_blocks,
            leak.in_region
        ),
        (LEAKS, 100 * LEAKS, 100 * LEAKS, LEAKS, 0)
    );
    let temp = site(&r, run, &mut sym, "SITE_TEMP");
    assert_eq!(
        (
            temp.allocs,
            temp.bytes,
            temp.peak_live,
            temp.temporary,
            temp.leaked_blocks
        ),
        (TEMPS, 48 * TEMPS, 48, TEMPS, 0)
    );
    assert_eq!(r.unknown_frees, 0);
    assert!(r.region_allocs >= GROWS);
}

/// scripts/alloc_bench.c built as its benchmark builds it
/// (common::compile's -O0 is overridden by the -O2 after it).
fn alloc_bench() -> (tempfile::TempDir, std::path::PathBuf) {
    common::compile("scripts/alloc_bench.c", &["-O2", "-pthread"])
}

/// alloc_bench's report at `threads` x `pairs`: the summary, when the
/// profile has one, agrees with the pass, every pair is counted (each
/// thread frees its last 64 blocks at its end; the main thread's stdout
/// buffer is left) and no free is unknown.
fn bench_agrees(run: &HeapRun, threads: u64, pairs: u64) -> HeapReport {
    let r = HeapReport::build_by_pass(run).unwrap();
    if run.summary.is_some() {
        same(&HeapReport::build(run).unwrap(), &r);
    }
    let calls = threads * pairs;
    assert!(
        r.frees >= calls && r.allocs >= calls,
        "{} {}",
        r.allocs,
        r.frees
    );
    assert_eq!(r.unknown_frees, 0);
    r
}

#[test]
fn summary_matches_the_pass_at_four_threads() {
    let (dir, exe) = alloc_bench();
    bench_agrees(&profile(&dir, &exe, &["4", "200000"]), 4, 200_000);
}

/// Four threads, every chunk encoded by its thread but the few the
/// collector took before a thread could.
#[test]
fn chunks_encoded_by_their_threads_at_four_threads() {
    let (dir, exe) = alloc_bench();
    let (run, by_threads, by_collector) =
        profile_encoded_by(&dir, &exe, &["4", "200000"], "threads");
    assert!(
        by_threads >= 9 * by_collector,
        "{by_threads} {by_collector}"
    );
    bench_agrees(&run, 4, 200_000);
}

/// A collector that starts late (300 ms here; a machine with more busy
/// threads than CPUs did it by chance) finds the threads' chunks waiting
/// at its first look and cannot take any yet (the main thread's current
/// chunk is read only once it has stopped growing). It keeps the summary:
/// its time without progress counts from its start. It counted from 0,
/// and about 1 run in 5 of `alloc_bench 4` lost its summary so.
#[test]
fn a_collector_that_starts_late_keeps_the_summary() {
    let (dir, exe) = alloc_bench();
    let out = dir.path().join("late.mvh");
    let o = std::process::Command::new(&exe)
        .args(["4", "200000"])
        .env("LD_PRELOAD", install_preload().unwrap())
        .env("MAPVIS_HEAP_OUT", &out)
        .env("MAPVIS_HEAP_COLLECTOR_DELAY_MS", "300")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = HeapRun::open_profile(&out).expect("read the profile");
    assert!(run.summary.is_some(), "the late collector kept the summary");
    bench_agrees(&run, 4, 200_000);
}

/// Sixty-four threads, far more than the CPUs of the machines the tests
/// run on: the profile reads whole, and its summary, when the collector
/// kept it, agrees with the pass.
#[test]
fn summary_matches_the_pass_at_sixty_four_threads() {
    let (dir, exe) = alloc_bench();
    let r = bench_agrees(&profile_any(&dir, &exe, &["64", "20000"]), 64, 20_000);
    assert!(r.threads >= 65, "{}", r.threads);
}

/// The encoding state changing hands every 20 ms, between each thread and
/// the collector: both encode, and the profile reads the same.
#[test]
fn chunks_encoded_by_turns_read_the_same() {
    let (dir, exe) = alloc_bench();
    let (run, by_threads, by_collector) =
        profile_encoded_by(&dir, &exe, &["4", "1000000"], "alternate");
    assert!(
        by_threads > 0 && by_collector > 0,
        "{by_threads} {by_collector}"
    );
    bench_agrees(&run, 4, 1_000_000);
}

#[test]
fn summary_matches_the_pass_in_cpp() {
    let (dir, exe) = common::compile("tests/c/heap_cpp.cpp", &["-lstdc++"]);
    let run = profile(&dir, &exe, &[]);
    let r = HeapReport::build(&run).unwrap();
    same(&r, &HeapReport::build_by_pass(&run).unwrap());
    assert!(r.allocs > 0);
}

/// Real code as its distribution builds it: CPython (-O2, PIE, its own
/// small-object allocator over malloc) running three threads that build
/// lists and dicts.
#[test]
fn summary_matches_the_pass_on_python_threads() {
    let dir = tempfile::tempdir().unwrap();
    let python = std::path::Path::new("/usr/bin/python3");
    assert!(
        python.is_file(),
        "python3 is installed (.ci/run installs it)"
    );
    let script = "import threading\n\
        def w():\n    \
            for i in range(3000):\n        \
                x = [str(j) * 40 for j in range(200)]\n        \
                d = {k: [k] * 30 for k in x}\n\
        ts = [threading.Thread(target=w) for _ in range(3)]\n\
        [t.start() for t in ts]\n\
        [t.join() for t in ts]\n";
    let run = profile(&dir, python, &["-c", script]);
    let r = HeapReport::build(&run).unwrap();
    same(&r, &HeapReport::build_by_pass(&run).unwrap());
    assert!(
        r.threads >= 4 && r.allocs > 100_000,
        "{} threads, {} allocations",
        r.threads,
        r.allocs
    );
}
