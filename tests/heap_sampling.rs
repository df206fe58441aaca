//! Sampled call durations (heap profile format 4) against a program whose
//! calls are counted from its source (tests/c/heap_sampling.c: 40000
//! malloc/free pairs in the main thread, 20000 in a second one): every
//! call is still counted exactly; by default about 1 in 64 calls of each
//! thread, of mallocs and frees alike, is timed, and heap_stats says its
//! times are estimates from that sample; `time_all` times every call.
mod common;

use mapvis::filter::heap::{HeapReport, HeapRun};
use mapvis::trace::heap::{run_profiled_with, ProfileOptions};

const SRC: &str = "tests/c/heap_sampling.c";
/// Pairs in the main thread (thread 1) and in the second (thread 2).
const MAIN_PAIRS: u64 = 40_000;
const WORKER_PAIRS: u64 = 20_000;

/// Profiles the program; returns its run and report.
fn profile(time_all: bool) -> (tempfile::TempDir, HeapRun, HeapReport) {
    let (dir, exe) = common::compile(SRC, &["-pthread"]);
    let out = dir.path().join("p.mvh");
    let options = ProfileOptions {
        time_every_call: time_all,
        calls: true,
    };
    let outcome = run_profiled_with(&exe, &[], &out, options).expect("run the profiler");
    assert_eq!(outcome.exit_code, Some(0));
    let run = HeapRun::open_profile(&out).expect("read the profile");
    let report = HeapReport::build(&run).unwrap();
    (dir, run, report)
}

/// (timed, calls) of the duration row of `group` and `op`.
fn row(r: &HeapReport, group: &str, op: &str) -> (u64, u64) {
    let t = r
        .times
        .iter()
        .find(|t| t.group == group && t.op == op)
        .unwrap_or_else(|| panic!("no {group} {op} row in {:?}", r.times));
    (t.count, t.calls)
}

/// Counts that do not depend on the sampling: every pair, exactly, and
/// glibc's own allocations for the second thread (its thread-local
/// storage: at most a few blocks, kept until the process ends).
fn check_counts(r: &HeapReport) {
    assert_eq!(r.counts.frees, MAIN_PAIRS + WORKER_PAIRS);
    assert!(
        (MAIN_PAIRS + WORKER_PAIRS..=MAIN_PAIRS + WORKER_PAIRS + 4).contains(&r.counts.allocs),
        "{} allocations",
        r.counts.allocs
    );
    assert_eq!(r.timed_calls.1, r.counts.allocs + r.counts.frees);
    assert_eq!(
        r.counts.leaked.1,
        r.counts.allocs - MAIN_PAIRS - WORKER_PAIRS
    );
    assert_eq!(r.counts.unknown_frees, 0);
}

#[test]
fn durations_are_sampled_about_one_in_64_calls() {
    let (_d, run, r) = profile(false);
    assert_eq!(run.dur_sample, Some(64));
    check_counts(&r);
    // Each thread's mallocs and frees are each timed about 1 in 64: the
    // expected counts are 625 and 312.5, with standard deviations of
    // about 25 and 18, so ±30% is over 7 of them (no flaky failures),
    // and tight enough that a sample aliasing with the alternation of
    // malloc and free (all mallocs timed, no free, or the reverse) fails.
    for (group, pairs) in [("thread 1", MAIN_PAIRS), ("thread 2", WORKER_PAIRS)] {
        for op in ["alloc", "free"] {
            let (timed, calls) = row(&r, group, op);
            assert!(calls >= pairs, "{group} {op}: {calls} calls");
            let want = pairs as f64 / 64.0;
            assert!(
                (timed as f64 - want).abs() < 0.3 * want,
                "{group} {op}: {timed} of {calls} timed, want about {want}"
            );
        }
    }
    let (timed, calls) = r.timed_calls;
    let want = calls as f64 / 64.0;
    assert!(
        (timed as f64 - want).abs() < 0.2 * want,
        "{timed} of {calls}"
    );
    let note = run.duration_note(&r).unwrap();
    assert!(
        note.contains(&format!(
            "estimates from a sample: {timed} of {calls} calls timed (sampled 1 in 64"
        )),
        "{note}"
    );
}

#[test]
fn time_all_times_every_call() {
    let (_d, run, r) = profile(true);
    assert_eq!(run.dur_sample, Some(1));
    check_counts(&r);
    assert_eq!(r.timed_calls.0, r.timed_calls.1);
    for group in ["thread 1", "thread 2"] {
        for op in ["alloc", "free"] {
            let (timed, calls) = row(&r, group, op);
            assert_eq!(timed, calls, "{group} {op}");
        }
    }
    assert_eq!(row(&r, "thread 2", "free"), (WORKER_PAIRS, WORKER_PAIRS));
    let note = run.duration_note(&r).unwrap();
    assert!(note.contains("every call was timed"), "{note}");
}

/// What a user sees: heap_stats says the times are estimated from a
/// sample and how many calls were timed, or that every call was.
#[test]
fn heap_stats_says_whether_times_are_sampled() {
    let (dir, exe) = common::compile(SRC, &["-pthread"]);
    let load = format!("load_exe {}", exe.display());
    let out = common::mapvis_script(
        dir.path(),
        &format!("{load}; heap_profile; heap_stats save"),
    );
    assert!(
        out.contains("time per call (ns), ESTIMATED from a sample (sampled 1 in 64"),
        "{out}"
    );
    assert!(
        out.contains("note: call durations are estimates from a sample"),
        "{out}"
    );
    let csv = std::fs::read_to_string(dir.path().join("visinfo/heap_op_times.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "group,op,calls,timed_calls,sampled_1_in,median_ns,p99_ns,max_ns"
    );
    let t2_free: Vec<&str> = lines
        .find(|l| l.starts_with("thread 2,free,"))
        .unwrap()
        .split(',')
        .collect();
    assert_eq!(t2_free[2], WORKER_PAIRS.to_string());
    assert_eq!(t2_free[4], "64");

    let out = common::mapvis_script(
        dir.path(),
        &format!("{load}; heap_profile time_all; heap_stats"),
    );
    assert!(
        out.contains("time per call (ns), every call timed"),
        "{out}"
    );
    assert!(!out.contains("ESTIMATED"), "{out}");
}
