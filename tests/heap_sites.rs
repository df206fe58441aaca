//! The allocation side: tests/c/heap_sites.c run natively under the heap
//! profiler and traced under the Valgrind tool, with every site's counts,
//! sizes and symbolized frames (one of them inlined) worked out by hand
//! from the program.
mod common;

use mapvis::filter::heap::{HeapReport, HeapRun, SiteStats, TimeUnit};
use mapvis::trace::heap::{read_profile, run_profiled, HeapOp};
use mapvis::trace::naming::BacktraceSymbolizer;
use mapvis::trace::record::run_trace;
use mapvis::trace::record::AllocKind;

const SRC: &str = "tests/c/heap_sites.c";

fn at(marker: &str) -> String {
    format!("heap_sites.c:{}", common::line_of(SRC, marker))
}

/// The site whose innermost frame is at `marker`, and its backtrace.
fn site<'a>(
    report: &'a HeapReport,
    run: &HeapRun,
    sym: &mut BacktraceSymbolizer,
    marker: &str,
) -> (&'a SiteStats, Vec<String>) {
    let want = at(marker);
    let found: Vec<(&SiteStats, Vec<String>)> = report
        .counts
        .sites
        .iter()
        .filter(|s| s.allocs > 0)
        .map(|s| {
            let bt = sym
                .backtrace(&run.stacks[s.stack as usize])
                .iter()
                .map(|f| f.display())
                .collect::<Vec<_>>();
            (s, bt)
        })
        .filter(|(_, bt)| {
            bt.first()
                .is_some_and(|f| f.ends_with(&format!("({want})")))
        })
        .collect();
    assert_eq!(found.len(), 1, "one site at {want}: {found:?}");
    found.into_iter().next().unwrap()
}

/// Checks what both runs must agree on.
fn check_sites(run: &HeapRun, report: &HeapReport, sym: &mut BacktraceSymbolizer) {
    let (keep, bt) = site(report, run, sym, "SITE_KEEP");
    assert_eq!(
        (
            keep.allocs,
            keep.bytes,
            keep.peak_live,
            keep.live,
            keep.temporary
        ),
        (3, 300, 300, 0, 0)
    );
    assert_eq!(bt[0], format!("main ({})", at("SITE_KEEP")));

    let (buf, bt) = site(report, run, sym, "SITE_INLINE_MALLOC");
    // Five malloc(40)/free pairs: at most one live, each freed before the
    // next allocation: all temporary.
    assert_eq!(
        (
            buf.allocs,
            buf.bytes,
            buf.peak_live,
            buf.live,
            buf.temporary
        ),
        (5, 200, 40, 0, 5)
    );
    assert_eq!(
        bt[0],
        format!("make_buf [inlined] ({})", at("SITE_INLINE_MALLOC"))
    );
    assert_eq!(bt[1], format!("main ({})", at("SITE_INLINE_CALL")));

    let (leak, bt) = site(report, run, sym, "SITE_CALLOC");
    assert_eq!(
        (
            leak.allocs,
            leak.bytes,
            leak.live,
            leak.leaked_blocks,
            leak.temporary
        ),
        (1, 256, 256, 1, 0)
    );
    assert_eq!(bt[0], format!("leaky ({})", at("SITE_CALLOC")));
    assert_eq!(bt[1], format!("main ({})", at("SITE_LEAKY_CALL")));

    // malloc(10) then realloc to 1000 inside the pins; the realloc frees
    // the small block right after it was allocated, and free(r) the big
    // one: both temporary.
    let (small, _) = site(report, run, sym, "SITE_SMALL");
    assert_eq!(
        (small.allocs, small.bytes, small.temporary, small.in_region),
        (1, 10, 1, 1)
    );
    let (big, _) = site(report, run, sym, "SITE_REALLOC");
    assert_eq!(
        (
            big.allocs,
            big.bytes,
            big.temporary,
            big.in_region,
            big.live
        ),
        (1, 1000, 1, 1, 0)
    );
    let kinds: Vec<AllocKind> = run
        .calls()
        .unwrap()
        .iter()
        .filter(|c| c.stack == leak.stack || c.stack == big.stack)
        .filter_map(|c| match c.op {
            HeapOp::Alloc(k) => Some(k),
            HeapOp::Free(_) => None,
        })
        .collect();
    assert_eq!(kinds, vec![AllocKind::Calloc, AllocKind::Realloc]);
    assert_eq!(run.regions.len(), 1);
}

#[test]
fn native_profile_sites_counts_and_frames() {
    let (dir, exe) = common::compile(SRC, &[]);
    let out = dir.path().join("p.mvh");
    let outcome = run_profiled(&exe, &[], &out).expect("run the profiler");
    assert_eq!(outcome.exit_code, Some(0));
    // Streamed: the calls stay in the file.
    let run = HeapRun::open_profile(&out).expect("read the profile");
    assert!(run.notes.is_empty(), "{:?}", run.notes);
    assert_eq!(run.unit, TimeUnit::Nanoseconds);
    let report = HeapReport::build(&run).unwrap();
    let mut sym = BacktraceSymbolizer::new(run.maps.clone(), Some(&exe));
    check_sites(&run, &report, &mut sym);
    // glibc rounds malloc(100) up to 104 usable bytes, malloc(40) to 40,
    // calloc(1, 256) to 264.
    let (keep, _) = site(&report, &run, &mut sym, "SITE_KEEP");
    let (buf, _) = site(&report, &run, &mut sym, "SITE_INLINE_MALLOC");
    let (leak, _) = site(&report, &run, &mut sym, "SITE_CALLOC");
    let calls = run.calls().unwrap();
    let slack = |stack: u32| -> Vec<u64> {
        calls
            .iter()
            .filter(|c| c.stack == stack)
            .map(|c| c.slack.unwrap())
            .collect()
    };
    assert_eq!(slack(keep.stack), vec![4, 4, 4]);
    assert_eq!(slack(buf.stack), vec![0; 5]);
    assert_eq!(slack(leak.stack), vec![8]);
    // Every call was timed, times are in order and inside the run.
    assert!(calls.windows(2).all(|w| w[0].time <= w[1].time));
    assert!(calls.iter().all(|c| c.time <= run.end_time));
    assert!(!run.rss.is_empty() && report.peak_rss.unwrap() > 0);
}

#[test]
fn traced_run_sites_counts_and_frames() {
    let (dir, exe) = common::compile(SRC, &[]);
    let req = common::request(dir.path(), &exe, &[]);
    run_trace(&req).expect("trace");
    let run = HeapRun::from_trace(&req.trace_file).expect("read the trace");
    assert_eq!(run.unit, TimeUnit::Operations);
    assert!(!run.timed);
    let report = HeapReport::build(&run).unwrap();
    let mut sym = BacktraceSymbolizer::new(run.maps.clone(), Some(&exe));
    check_sites(&run, &report, &mut sym);

    // Lifetimes in operations: the small block lives from its malloc to the
    // realloc; in between come the accesses the trace recorded (r[0] = 2
    // and whatever the allocator wrappers touched), counted here from the
    // raw events.
    let (evs, _) = common::read_events(&req.trace_file);
    let (small, _) = site(&report, &run, &mut sym, "SITE_SMALL");
    let small_addr = run
        .calls()
        .unwrap()
        .iter()
        .find(|c| c.stack == small.stack)
        .unwrap()
        .addr;
    let start = evs
        .iter()
        .position(|e| matches!(e, mapvis::trace::record::Event::Alloc(a) if a.addr == small_addr && a.size == 10))
        .unwrap();
    let end = start
        + 1
        + evs[start + 1..]
            .iter()
            .position(|e| matches!(e, mapvis::trace::record::Event::Alloc(a) if a.old_addr == Some(small_addr)))
            .unwrap();
    let between = evs[start + 1..end]
        .iter()
        .filter(|e| matches!(e, mapvis::trace::record::Event::Access(_)))
        .count() as u64;
    let mut lives = Vec::new();
    let bins =
        mapvis::filter::heap::lifetime_bins(&run, |l, share| lives.push((*l, share))).unwrap();
    let life = lives.iter().find(|l| l.0.stack == small.stack).unwrap();
    assert!(between >= 1);
    assert_eq!(life.0.lifetime(), Some(between + 1));
    assert!(lives.iter().all(|l| (0.0..=100.0).contains(&l.1)));
    assert_eq!(bins.freed, lives.len() as u64);
    assert_eq!(bins.all.iter().sum::<u64>(), bins.freed);
}

/// C++ `new`, `new[]`, `delete` and `delete[]` under the native profiler,
/// by kind and size, from tests/c/heap_cpp.cpp: one `new int[10]` (40
/// bytes), three `new Node` (16 bytes each), three `delete` and one
/// `delete[]`, each new's innermost frame on its own line.
#[test]
fn cpp_new_and_delete_are_profiled_by_kind() {
    use mapvis::trace::record::FreeKind;
    let src = "tests/c/heap_cpp.cpp";
    let (dir, exe) = common::compile(src, &["-lstdc++"]);
    let out = dir.path().join("p.mvh");
    let outcome = run_profiled(&exe, &[], &out).expect("run the profiler");
    assert_eq!(outcome.exit_code, Some(0));
    let profile = read_profile(&out).expect("read the profile");
    assert!(profile.complete);
    let ops = |op: HeapOp| profile.events.iter().filter(move |e| e.op == op);
    let arrays: Vec<u64> = ops(HeapOp::Alloc(AllocKind::NewArray))
        .map(|e| e.size)
        .collect();
    let nodes: Vec<u64> = ops(HeapOp::Alloc(AllocKind::New)).map(|e| e.size).collect();
    assert_eq!(arrays, [40]);
    assert_eq!(nodes, [16, 16, 16]);
    assert_eq!(ops(HeapOp::Free(FreeKind::Delete)).count(), 3);
    assert_eq!(ops(HeapOp::Free(FreeKind::DeleteArray)).count(), 1);
    let run = HeapRun::from_profile(profile, &out);
    let report = HeapReport::build(&run).unwrap();
    let mut sym = BacktraceSymbolizer::new(run.maps.clone(), Some(&exe));
    // (allocations, bytes) of the site whose innermost frame is the line.
    let mut at_line = |marker: &str| {
        common::sites_at(&report, &run, &mut sym, src, marker)
            .iter()
            .map(|s| (s.allocs, s.bytes))
            .collect::<Vec<_>>()
    };
    assert_eq!(at_line("NEW_ARRAY"), [(1, 40)]);
    assert_eq!(at_line("NEW_NODE"), [(3, 48)]);
}
