//! The summary the heap profiler's collector keeps while the program runs
//! (profile format 5's SUMMARY record), which `heap_profile` and
//! `alloc_sites` read instead of a pass over the calls: checked against
//! that pass on the same profile, and against counts worked out by hand
//! from tests/c/heap_summary.c (blocks freed by another thread, a realloc
//! chain inside the pins, leaks, temporaries), on scripts/alloc_bench.c at
//! four threads and on a C++ program; and with the chunks encoded by the
//! threads themselves (`MAPVIS_HEAP_ENCODER=threads`) or all by the
//! collector, which must read the same. Format 7's series of live bytes
//! and lifetime histogram are checked against the calls of the same
//! profile; a profile without calls against the source, and when the
//! program is killed (its last checkpoint) or a thread holds the summary
//! up for over a second (calls taken late).
mod common;

use std::collections::HashMap;

use mapvis::filter::heap::{HeapReport, HeapRun, SiteStats};
use mapvis::trace::heap::HeapOp;
use mapvis::trace::heap::{install_preload, run_profiled};
use mapvis::trace::heap::{HeapSummary, SeriesBucket};
use mapvis::trace::naming::BacktraceSymbolizer;

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
        .env("MAPVIS_HEAP_CALLS", "1")
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
            r.counts.allocs,
            r.counts.frees,
            r.counts.bytes,
            r.counts.peak_live,
            r.counts.leaked,
            r.counts.temporary,
            r.counts.unknown_frees,
            r.counts.threads,
            r.counts.region_allocs,
            r.timed_calls,
            r.dur_sample,
        )
    };
    assert_eq!(counts(sum), counts(pass));
    let used = |r: &HeapReport| -> Vec<SiteStats> {
        r.counts
            .sites
            .iter()
            .filter(|s| s.allocs > 0)
            .cloned()
            .collect()
    };
    assert_eq!(used(sum), used(pass));
    assert_eq!(sum.counts.classes, pass.counts.classes);
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
    if run.has_calls() {
        same(&r, &HeapReport::build_by_pass(run).unwrap());
    }
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
    assert_eq!(r.counts.unknown_frees, 0);
    assert!(r.counts.region_allocs >= GROWS);
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
        r.counts.frees >= calls && r.counts.allocs >= calls,
        "{} {}",
        r.counts.allocs,
        r.counts.frees
    );
    assert_eq!(r.counts.unknown_frees, 0);
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
        .env("MAPVIS_HEAP_CALLS", "1")
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
    assert!(r.counts.threads >= 65, "{}", r.counts.threads);
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
    assert!(r.counts.allocs > 0);
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
        r.counts.threads >= 4 && r.counts.allocs > 100_000,
        "{} threads, {} allocations",
        r.counts.threads,
        r.counts.allocs
    );
}

/// Profiles `exe` as `heap_profile` does by default: the summary only,
/// no calls (`MAPVIS_HEAP_CALLS=0`), with `env` set too; returns the run
/// and the profile's size in bytes.
fn profile_without_calls(
    dir: &tempfile::TempDir,
    exe: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (HeapRun, u64) {
    let out = dir.path().join("lean.mvh");
    let _ = std::fs::remove_file(&out);
    let o = std::process::Command::new(exe)
        .args(args)
        .env("LD_PRELOAD", install_preload().unwrap())
        .env("MAPVIS_HEAP_OUT", &out)
        .env("MAPVIS_HEAP_CALLS", "0")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        o.status.success() || o.status.code().is_none(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let run = HeapRun::open_profile(&out).expect("read the profile");
    assert!(!run.has_calls());
    (run, std::fs::metadata(&out).unwrap().len())
}

/// The default profile, without calls, reads as the source says, in a
/// few kilobytes; asking it for its calls is an error, not an empty run.
#[test]
fn a_profile_without_calls_matches_the_source() {
    let (dir, exe) = common::compile(SRC, &["-pthread"]);
    let (run, bytes) = profile_without_calls(&dir, &exe, &[], &[]);
    matches_the_source(&run, &exe);
    assert!(bytes < 64 * 1024, "{bytes} bytes");
    let e = run.for_each_call(|_| {}).unwrap_err().to_string();
    assert!(e.contains("heap_profile calls"), "{e}");
    assert!(run.notes.is_empty(), "{:?}", run.notes);
}

/// Which series bucket a call at `time` (ns) falls in: the first whose
/// end is after it (the reader's clock is monotonic in the time unit, so
/// this is the collector's bucket, `(unit - base) >> w`).
fn bucket_of(s: &HeapSummary, time: u64) -> u64 {
    let (mut lo, mut hi) = (0u64, 4096u64);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if time < s.bucket_end_ns(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The series of live bytes the collector kept (format 7) is the one the
/// profile's own calls give, bucket by bucket: the total after each
/// bucket, the highest total in it, each site's live bytes after each
/// bucket in which it changed, and its bytes at the peak; and its
/// lifetime histogram holds every freed block, each in the bucket of its
/// lifetime (to the nanosecond the reader's clock rounds to).
fn stored_series_match_the_calls(run: &HeapRun) {
    let s = run.summary.as_ref().expect("a summary");
    assert!(s.at_exit && s.late == 0, "{} {}", s.at_exit, s.late);
    let calls = run.calls().unwrap();
    let mut live: HashMap<u64, (u32, u64, u64)> = HashMap::new();
    let mut per: HashMap<u32, u64> = HashMap::new();
    let mut total = 0u64;
    let mut buckets: Vec<SeriesBucket> = Vec::new();
    let mut points: HashMap<u32, Vec<(u64, u64)>> = HashMap::new();
    let mut at_peak: HashMap<u32, u64> = HashMap::new();
    let mut peak = 0u64;
    let mut lives = Vec::new();
    for c in &calls {
        let b = bucket_of(s, c.time);
        if buckets.last().is_none_or(|l| l.bucket != b) {
            buckets.push(SeriesBucket {
                bucket: b,
                total,
                high: total,
            });
        }
        let mut changed = Vec::new();
        let freed = match c.op {
            HeapOp::Free(_) => Some(c.addr),
            HeapOp::Alloc(_) => c.old.filter(|&o| o != 0),
        };
        if let Some((site, size, born)) = freed.and_then(|a| live.remove(&a)) {
            total -= size;
            *per.get_mut(&site).unwrap() -= size;
            changed.push(site);
            lives.push(c.time - born);
        }
        if matches!(c.op, HeapOp::Alloc(_)) && c.addr != 0 {
            if let Some((site, size, _)) = live.insert(c.addr, (c.stack, c.size, c.time)) {
                total -= size;
                *per.get_mut(&site).unwrap() -= size;
                changed.push(site);
            }
            total += c.size;
            *per.entry(c.stack).or_default() += c.size;
            changed.push(c.stack);
            if total > peak {
                peak = total;
                at_peak = per.clone();
            }
        }
        let last = buckets.last_mut().unwrap();
        last.total = total;
        last.high = last.high.max(total);
        for site in changed {
            let v = points.entry(site).or_default();
            match v.last_mut() {
                Some(p) if p.0 == b => p.1 = per[&site],
                _ => v.push((b, per[&site])),
            }
        }
    }
    assert_eq!(s.series, buckets);
    assert_eq!(s.site_series.len(), points.len());
    for site in &s.site_series {
        assert_eq!(site.points, points[&site.stack], "site {}", site.stack);
        let want = at_peak.get(&site.stack).copied().unwrap_or(0);
        assert_eq!(site.at_peak, want, "site {} at the peak", site.stack);
    }
    // Lifetimes: a block of lifetime l units is in bucket b when lo <= l <
    // hi. The reader's clock rounds each call's time down to the
    // nanosecond, so a lifetime in nanoseconds is the bucket's range in
    // nanoseconds or 1 ns above its top: the blocks in the buckets below
    // bucket k, S(k), lie between the blocks that lived under lo_ns(k) and
    // those that lived under lo_ns(k) + 2.
    lives.sort_unstable();
    let stored: u64 = s.lifetimes.iter().map(|l| l.1).sum();
    assert_eq!(stored, lives.len() as u64);
    let mut below = 0u64;
    for &(b, n) in &s.lifetimes {
        let (lo, _) = s.lifetime_range_ns(b);
        let under = |ns: u64| lives.partition_point(|&l| l < ns) as u64;
        assert!(
            under(lo) <= below && below <= under(lo + 2),
            "bucket {b} from {lo} ns: {} <= {below} <= {}",
            under(lo),
            under(lo + 2)
        );
        below += n;
    }
}

#[test]
fn stored_series_match_the_calls_of_threads_and_reallocs() {
    let (dir, exe) = common::compile(SRC, &["-pthread"]);
    stored_series_match_the_calls(&profile(&dir, &exe, &[]));
    let (dir, exe) = alloc_bench();
    stored_series_match_the_calls(&profile(&dir, &exe, &["2", "200000"]));
    let (dir, exe) = common::compile("tests/c/heap_cpp.cpp", &["-lstdc++"]);
    stored_series_match_the_calls(&profile(&dir, &exe, &[]));
}

/// tests/c/heap_killed.c dies by SIGKILL 2.5 s in, after 5 allocations
/// the profile never sees summarised: its last checkpoint holds the 100
/// allocations and 30 frees before its sleep, says so, and reads its
/// times in nanoseconds (from a CLOCK record: there is no footer).
#[test]
fn a_killed_program_keeps_its_last_checkpoint() {
    const KILLED: &str = "tests/c/heap_killed.c";
    let (dir, exe) = common::compile(KILLED, &[]);
    let (run, _) = profile_without_calls(&dir, &exe, &[], &[]);
    let s = run.summary.as_ref().expect("a checkpoint");
    assert!(!s.at_exit);
    let r = HeapReport::build(&run).unwrap();
    assert_eq!(
        (
            r.counts.allocs,
            r.counts.frees,
            r.counts.bytes,
            r.counts.peak_live.0,
            r.counts.leaked
        ),
        (100, 30, 10_000, 10_000, (7_000, 70))
    );
    let mut sym = BacktraceSymbolizer::new(run.maps.clone(), Some(&exe));
    let kept = common::sites_at(&r, &run, &mut sym, KILLED, "SITE_KEPT");
    assert_eq!(kept.len(), 1, "the checkpoint's mappings name the site");
    assert!(common::sites_at(&r, &run, &mut sym, KILLED, "SITE_LATE").is_empty());
    let note = run.notes.join(" ");
    assert!(note.contains("last checkpoint"), "{note}");
    assert!(!note.contains("clock ticks"), "{note}");
    // Checkpoints come about every second: the last one before the kill
    // is 1 to 2.6 s in, in nanoseconds.
    assert!(
        (1_000_000_000..2_600_000_000).contains(&s.upto_ns),
        "{}",
        s.upto_ns
    );
    assert_eq!(run.end_time, s.upto_ns);
}

/// A thread that stays inside a call for 1.5 s (`MAPVIS_HEAP_SLOW_CALL`)
/// holds the summary up while the other fills its chunks: without calls
/// the collector goes on without that thread's bound after a second, and
/// takes its call late. Every count is still exact (alloc_bench frees all
/// it allocates), and the run says which numbers the late call may move.
#[test]
fn a_stalled_summary_takes_the_stalled_call_late() {
    let (dir, exe) = alloc_bench();
    let pairs = 300_000u64;
    let (run, _) = profile_without_calls(
        &dir,
        &exe,
        &["2", &pairs.to_string()],
        &[("MAPVIS_HEAP_SLOW_CALL", "1000")],
    );
    let s = run.summary.as_ref().expect("a summary");
    assert!(s.at_exit);
    assert!(s.late >= 1, "late {}", s.late);
    let r = HeapReport::build(&run).unwrap();
    let site = r
        .top_sites(1, |x| x.allocs)
        .first()
        .map(|x| (x.allocs, x.leaked_blocks))
        .unwrap();
    assert_eq!(site, (2 * pairs, 0));
    assert_eq!(r.counts.unknown_frees, 0);
    let note = run.notes.join(" ");
    assert!(note.contains("out of time order"), "{note}");
}

/// Sixty-four threads without calls: there is no pass to fall back on, so
/// the summary is always written, and every pair is counted at the one
/// allocating site (each thread frees all it allocates).
#[test]
fn sixty_four_threads_without_calls_count_every_pair() {
    let (dir, exe) = alloc_bench();
    let pairs = 20_000u64;
    let (run, _) = profile_without_calls(&dir, &exe, &["64", &pairs.to_string()], &[]);
    let r = HeapReport::build(&run).unwrap();
    let top = r.top_sites(1, |x| x.allocs);
    assert_eq!((top[0].allocs, top[0].leaked_blocks), (64 * pairs, 0));
    assert_eq!(r.counts.unknown_frees, 0);
    assert!(r.counts.threads >= 65, "{}", r.counts.threads);
}
