//! The Valgrind tool, traced for real on small C programs compiled -g -O0.
mod common;

use std::time::{Duration, Instant};

use common::*;
use mapvis::trace::record::run_trace;
use mapvis::trace::record::{EndState, TraceReader};
use mapvis::trace::record::{Event, ExitStatus, Op, WarningKind};

#[test]
fn n_ints_written_once_give_n_stores_of_4_bytes_and_nothing_outside_the_pins() {
    let (_d, _exe, outcome, evs, end) = trace("tests/c/trace_fill.c", &[], &[]);
    assert_eq!(outcome.exit_code, Some(0));
    assert_eq!(end, EndState::Complete);
    let blocks = allocs(&evs);
    let (base, size) = blocks[0];
    assert_eq!(size, 400);
    let acc = accesses(&evs);
    let inside: Vec<_> = acc
        .iter()
        .filter(|a| a.addr >= base && a.addr < base + size)
        .collect();
    assert_eq!(inside.len(), 100, "exactly N accesses touch the block");
    assert!(inside.iter().all(|a| a.op == Op::Store && a.size == 4));
    let mut addrs: Vec<u64> = inside.iter().map(|a| a.addr).collect();
    addrs.sort();
    assert_eq!(addrs, (0..100).map(|i| base + 4 * i).collect::<Vec<_>>());
    // Nothing from outside the pins: every access is in region 1, and the
    // loops before and after (100 stores, then 100 modifies) left no trace.
    assert!(acc.iter().all(|a| a.region == 1));
    assert!(!acc
        .iter()
        .any(|a| a.op == Op::Modify && a.addr >= base && a.addr < base + size));
    let footer = evs.iter().find_map(|e| match e {
        Event::Footer(f) => Some(f.clone()),
        _ => None,
    });
    assert_eq!(footer.unwrap().accesses, acc.len() as u64);
    assert_eq!(evs.last(), Some(&Event::Exit(ExitStatus::Code(0))));
}

#[test]
fn regions_are_numbered_and_a_stop_without_start_is_reported() {
    let (_d, _exe, _o, evs, _end) = trace("tests/c/trace_regions.c", &[], &[]);
    let (base, _) = allocs(&evs)[0];
    let starts: Vec<u32> = evs
        .iter()
        .filter_map(|e| match e {
            Event::RegionStart(r) => Some(r.id),
            _ => None,
        })
        .collect();
    assert_eq!(starts, vec![1, 2]);
    assert!(evs.iter().any(|e| matches!(
        e,
        Event::Warning {
            kind: WarningKind::StopWithoutStart,
            ..
        }
    )));
    let acc = accesses(&evs);
    let in_block = |r: u32| -> Vec<Op> {
        acc.iter()
            .filter(|a| a.region == r && a.addr >= base && a.addr < base + 32)
            .map(|a| a.op)
            .collect()
    };
    assert_eq!(in_block(1), vec![Op::Store; 8]);
    // a[i] += 2 at -O0 loads and stores the element with separate
    // instructions: 8 loads and 8 stores, in that order per element.
    let r2 = in_block(2);
    assert_eq!(r2.len(), 16);
    assert_eq!(r2.iter().filter(|o| **o == Op::Load).count(), 8);
    // i++ at -O0 is one read-modify-write instruction: reported as M.
    assert!(acc.iter().any(|a| a.op == Op::Modify && a.size == 4));
}

#[test]
fn two_threads_have_distinct_ids_and_both_are_recorded() {
    let (_d, _exe, _o, evs, _end) = trace("tests/c/trace_threads.c", &["-pthread"], &[]);
    let blocks = allocs(&evs);
    let acc = accesses(&evs);
    let tids_in = |(base, size): (u64, u64)| -> Vec<u32> {
        let mut t: Vec<u32> = acc
            .iter()
            .filter(|a| a.addr >= base && a.addr < base + size && a.op == Op::Store && a.size == 4)
            .map(|a| a.tid)
            .collect();
        t.dedup();
        t
    };
    let mine = blocks.iter().find(|b| b.1 == 256).copied().unwrap();
    let theirs = blocks
        .iter()
        .filter(|b| b.1 == 256)
        .nth(1)
        .copied()
        .unwrap();
    assert_eq!(tids_in(mine), vec![1]);
    let t = tids_in(theirs);
    assert_eq!(t.len(), 1);
    assert_ne!(t[0], 1);
    assert!(evs
        .iter()
        .any(|e| matches!(e, Event::ThreadCreate { parent: 1, child } if *child == t[0])));
    let n = |b: (u64, u64)| {
        acc.iter()
            .filter(|a| a.addr >= b.0 && a.addr < b.0 + b.1)
            .count()
    };
    assert_eq!(n(mine), 64);
    assert_eq!(n(theirs), 64);
}

#[test]
fn a_segfault_leaves_a_readable_trace_that_says_how_far_it_got() {
    let (_d, _exe, outcome, evs, end) = trace("tests/c/trace_segv.c", &[], &[]);
    assert_eq!(outcome.signal, Some(11), "{}", outcome.describe());
    let (base, _) = allocs(&evs)[0];
    let acc = accesses(&evs);
    let stores = acc
        .iter()
        .filter(|a| a.addr >= base && a.addr < base + 200)
        .count();
    assert_eq!(stores, 50);
    // Valgrind runs the tool's exit code on a fatal signal: the footer is
    // there and counts what was recorded.
    assert_eq!(end, EndState::Complete);
    assert!(evs.iter().any(|e| matches!(
        e,
        Event::Warning {
            kind: WarningKind::OpenAtExit,
            ..
        }
    )));
    // The trace says how the program ended.
    assert_eq!(evs.last(), Some(&Event::Exit(ExitStatus::Signal(11))));
}

#[test]
fn sigint_leaves_a_readable_trace() {
    let (dir, exe) = compile("tests/c/trace_sigint.c", &[]);
    let req = request(dir.path(), &exe, &[]);
    let valgrind = req.valgrind.clone();
    let lib = mapvis::trace::record::install_tool(&valgrind).unwrap();
    let mut child = std::process::Command::new(&valgrind)
        .env("VALGRIND_LIB", &lib)
        .args(["--tool=mapvis", "-q"])
        .arg(format!("--trace-file={}", req.trace_file.display()))
        .arg(&exe)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the program says it is inside the region.
    let mut out = child.stdout.take().unwrap();
    let mut buf = [0u8; 8];
    let started = Instant::now();
    let _ = std::io::Read::read(&mut out, &mut buf);
    assert!(started.elapsed() < Duration::from_secs(60));
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(2));
    let mut r = TraceReader::open(&req.trace_file).unwrap();
    let mut n = 0u64;
    while let Some(e) = r.next_event().unwrap() {
        if matches!(e, Event::Access(_)) {
            n += 1;
        }
    }
    // A lower bound: how far the program got before the SIGINT depends on
    // the machine's speed.
    assert!(
        n >= 100_000,
        "the accesses before the interrupt are there ({n})"
    );
    assert_eq!(r.end_state(), &EndState::Complete);
}

#[test]
fn realloc_and_free_pair_with_their_blocks_and_wrappers_keep_the_callers_frame() {
    let (_d, exe, _o, evs, _end) = trace("tests/c/trace_heap.c", &[], &[]);
    let allocs: Vec<_> = evs
        .iter()
        .filter_map(|e| match e {
            Event::Alloc(a) => Some(a.clone()),
            _ => None,
        })
        .collect();
    let frees: Vec<u64> = evs
        .iter()
        .filter_map(|e| match e {
            Event::Free(f) => Some(f.addr),
            _ => None,
        })
        .collect();
    let grow = allocs.iter().find(|a| a.size == 64).unwrap();
    let w = allocs.iter().find(|a| a.size == 80).unwrap();
    let moved = allocs.iter().find(|a| a.size == 16384).unwrap();
    assert_eq!(
        moved.old_addr,
        Some(grow.addr),
        "realloc names the block it replaced"
    );
    assert!(frees.contains(&w.addr) && frees.contains(&moved.addr));
    assert!(
        !frees.contains(&grow.addr),
        "the old block is freed by the realloc itself"
    );
    // The wrapper's allocation carries the wrapper frame and its caller's.
    assert!(w.stack.len() >= 2);
    let syms = std::process::Command::new("addr2line")
        .arg("-e")
        .arg(&exe)
        .args(
            w.stack[..2]
                .iter()
                .map(|a| format!("{:#x}", a - 1 - 0x108000)),
        )
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&syms.stdout);
    let inner = line_of("tests/c/trace_heap.c", "MARK:wrapper-inner");
    let call = line_of("tests/c/trace_heap.c", "MARK:wrapper-call");
    assert!(text.contains(&format!("trace_heap.c:{inner}")), "{text}");
    assert!(text.contains(&format!("trace_heap.c:{call}")), "{text}");
}

#[test]
fn truncated_and_corrupt_traces_give_errors_not_panics() {
    let (dir, _exe, _o, evs, _end) = trace("tests/c/trace_fill.c", &[], &[]);
    let full = std::fs::read(dir.path().join("t.mvt")).unwrap();
    let total = accesses(&evs).len() as u64;
    // Every possible cut reads cleanly up to the cut.
    let mut last = 0;
    for cut in (0..full.len()).step_by(37).chain([full.len() - 1]) {
        let p = dir.path().join("cut.mvt");
        std::fs::write(&p, &full[..cut]).unwrap();
        match TraceReader::open(&p) {
            Err(e) => assert!(cut < 200, "only a cut header fails to open: {e}"),
            Ok(mut r) => {
                let mut n = 0;
                loop {
                    match r.next_event() {
                        Ok(Some(Event::Access(_))) => n += 1,
                        Ok(Some(_)) => {}
                        Ok(None) => break,
                        Err(e) => panic!("cut at {cut}: {e}"),
                    }
                }
                // Cut after the footer (in the end marker), nothing is
                // missing: the trace is complete.
                if r.footer().is_some() {
                    assert_eq!(r.end_state(), &EndState::Complete);
                    assert_eq!(n, total);
                } else {
                    assert!(matches!(r.end_state(), EndState::Truncated { .. }));
                }
                assert!(n >= last && n <= total);
                last = n;
            }
        }
    }
    // Flipped bytes: errors or a clean end, never a panic.
    for i in (8..full.len()).step_by(11) {
        let mut bad = full.clone();
        bad[i] ^= 0xA5;
        let p = dir.path().join("bad.mvt");
        std::fs::write(&p, &bad).unwrap();
        if let Ok(mut r) = TraceReader::open(&p) {
            while let Ok(Some(_)) = r.next_event() {}
        }
    }
    let p = dir.path().join("text.mvt");
    std::fs::write(&p, "X START 0:1 at 0\n").unwrap();
    let e = TraceReader::open(&p).err().unwrap().to_string();
    assert!(e.contains("not a mapvis binary trace"), "{e}");
    // run_trace refuses a missing executable with a clear message.
    let mut req = request(dir.path(), &dir.path().join("nope"), &[]);
    req.trace_file = dir.path().join("x.mvt");
    let e = run_trace(&req).unwrap_err().to_string();
    assert!(e.contains("does not exist"), "{e}");
}

/// The whole command line goes into the trace's header, however long: seven
/// 3000-byte arguments once crashed the tool (its header buffer was 16 KiB),
/// and 40 arguments of 40 000 bytes (1.6 MB, near the kernel's 2 MiB
/// argument space) must be kept whole too. The program still writes its 100
/// ints.
#[test]
fn long_command_lines_are_recorded_whole() {
    for (n, len) in [(7usize, 3000usize), (40, 40_000)] {
        let args: Vec<String> = (0..n)
            .map(|i| char::from(b'a' + (i % 26) as u8).to_string().repeat(len))
            .collect();
        let refs: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        let (_d, _exe, outcome, evs, end) = trace("tests/c/trace_fill.c", &[], &refs);
        assert_eq!(outcome.exit_code, Some(0), "{n} x {len}: {outcome:?}");
        assert!(!outcome.tool_crashed);
        assert_eq!(end, EndState::Complete);
        let (base, size) = allocs(&evs)[0];
        let inside = accesses(&evs)
            .iter()
            .filter(|a| a.addr >= base && a.addr < base + size)
            .count();
        assert_eq!(inside, 100);
        let r = TraceReader::open(&outcome.trace_file).unwrap();
        assert_eq!(r.header().command[1..], args[..], "{n} x {len}");
    }
}

/// Thread ids of 1024 and above (Valgrind allows them with --max-threads)
/// keep their own stack pointer: each thread's accesses to its local
/// `mine` fall within its own 64 KiB stack, just above its own stack
/// pointer. The tool once skipped their stack records and the reader
/// aliased them to `tid % 1024`, giving them another thread's stack.
#[test]
fn thread_ids_above_1024_keep_their_own_stacks() {
    use mapvis::trace::record::{find_valgrind, install_tool, TOOL_NAME};
    let (dir, exe) = compile("tests/c/trace_many_threads.c", &["-pthread", "-no-pie"]);
    let valgrind = find_valgrind(None).unwrap();
    let lib = install_tool(&valgrind).unwrap();
    let trace = dir.path().join("t.mvt");
    let status = std::process::Command::new(&valgrind)
        .env("VALGRIND_LIB", &lib)
        .arg(format!("--tool={TOOL_NAME}"))
        .args(["-q", "--max-threads=1100"])
        .arg(format!("--trace-file={}", trace.display()))
        .arg(&exe)
        .status()
        .unwrap();
    assert!(status.success(), "{status:?}");
    let (evs, end) = read_events(&trace);
    assert_eq!(end, EndState::Complete);
    let line = line_of("tests/c/trace_many_threads.c", "/* MINE */");
    // The store to `mine` on the MINE line: one per thread, each within
    // 64 KiB above its thread's stack pointer. Without PIE, an ip is its
    // address in the file.
    let sym = mapvis::trace::naming::Symbolizer::open(&exe).unwrap();
    let mut stores: Vec<(u32, u64, u64)> = accesses(&evs)
        .iter()
        .filter(|a| a.op == Op::Store && sym.locate(a.ip).is_some_and(|l| l.line == line))
        .map(|a| (a.tid, a.addr, a.sp))
        .collect();
    stores.sort();
    assert_eq!(stores.len(), 1040, "one store per thread");
    // All 1041 threads are alive at once (the barrier), and Valgrind gives
    // each new thread the lowest free id: main is 1, the workers 2..=1041,
    // so 1024..=1041 are 18 of them.
    let high = stores.iter().filter(|s| s.0 >= 1024).count();
    assert_eq!(high, 18, "threads with ids of 1024 and above");
    for (tid, addr, sp) in &stores {
        assert!(
            *addr >= *sp && *addr - *sp < 65536,
            "thread {tid}: `mine` at {addr:#x} is not on its stack (sp {sp:#x})"
        );
    }
    let tids: std::collections::BTreeSet<u32> = stores.iter().map(|s| s.0).collect();
    assert_eq!(tids.len(), 1040, "each store from its own thread");
}

/// Every record lies whole inside one checked block, wherever the 64 KiB
/// flush point falls. `tests/c/trace_churn.c` allocates, writes and frees
/// 200 000 blocks inside the pins, then maps and unmaps its own file
/// 20 000 times, so the trace is mostly FREE records with call stacks and
/// MAP records with a name, and crosses the flush point hundreds of times.
/// The tool once wrote such a record's first fields, then flushed before
/// its call stack or name, which the reader refuses as a record running
/// past its block (under load, the timed flush did it in any program).
/// Counted by construction: one allocation and one free per turn of the
/// first loop, one map of the file per turn of the second.
#[test]
fn records_never_straddle_a_block() {
    let (_d, exe, outcome, evs, end) = trace("tests/c/trace_churn.c", &[], &[]);
    assert_eq!(outcome.exit_code, Some(0));
    assert_eq!(end, EndState::Complete);
    assert_eq!(allocs(&evs).len(), 200_000);
    let frees = evs.iter().filter(|e| matches!(e, Event::Free(_))).count();
    assert_eq!(frees, 200_000);
    let name = exe.file_name().unwrap().to_str().unwrap();
    let start = evs
        .iter()
        .position(|e| matches!(e, Event::RegionStart(_)))
        .unwrap();
    let maps = evs[start..]
        .iter()
        .filter(|e| matches!(e, Event::Map(m) if m.path.ends_with(name) && m.len == 4096))
        .count();
    assert_eq!(maps, 20_000);
}

/// The loop's stores in `tests/c/trace_codes.c`.
const CODES_N: u64 = 100_000;

/// The trace's size on a loop whose sites are defined late: a region that
/// first runs 128 distinct memory operations once each, then stores to an
/// array N times (`tests/c/trace_codes.c`). Access keys name sites by
/// codes, and the hottest sites get the 48 one-byte codes (trace format 5,
/// docs/trace-format.md), so the loop costs about one byte per access even
/// though its sites come after the 128 others. Checked against what the
/// program does by construction: each warm-up store once, at `warm + 8k`
/// in order, and the loop's N stores at `a + 8i`.
#[test]
fn a_late_loop_takes_one_byte_per_access() {
    let (dir, _exe, outcome, evs, end) = trace("tests/c/trace_codes.c", &[], &[]);
    assert_eq!(outcome.exit_code, Some(0));
    assert!(matches!(end, EndState::Complete), "{end:?}");
    let acc = accesses(&evs);
    // Stores of 8 bytes to the program's static arrays (not its stack).
    let global = |a: &&mapvis::trace::record::Access| {
        a.op == Op::Store && a.size == 8 && a.addr.abs_diff(a.sp) > 1 << 20
    };
    // The 128 warm-up stores: one per site, consecutive.
    let warm: Vec<_> = acc.iter().filter(global).take(128).collect();
    assert_eq!(warm.len(), 128);
    for (k, w) in warm.iter().enumerate() {
        assert_eq!(w.addr, warm[0].addr + 8 * k as u64, "warm[{k}]");
    }
    let mut sites: Vec<u32> = warm.iter().map(|w| w.site.0).collect();
    sites.dedup();
    assert_eq!(sites.len(), 128, "one site per warm-up store");
    // The loop's stores: the 8-byte stores after the warm-up, N of them,
    // 8 bytes apart, from one site defined after the 128.
    let loop_stores: Vec<_> = acc.iter().filter(global).skip(128).collect();
    assert_eq!(loop_stores.len() as u64, CODES_N);
    for (i, s) in loop_stores.iter().enumerate() {
        assert_eq!(s.addr, loop_stores[0].addr + 8 * i as u64, "a[{i}]");
    }
    let loop_site = loop_stores[0].site.0;
    assert!(loop_stores.iter().all(|s| s.site.0 == loop_site));
    assert!(
        loop_site >= 128,
        "the loop's site is defined late: {loop_site}"
    );
    // About one byte per access: the loop's few sites hold one-byte codes
    // once it has run a little (two bytes each before format 5).
    let bytes = std::fs::metadata(dir.path().join("t.mvt")).unwrap().len();
    let per = bytes as f64 / acc.len() as f64;
    assert!(
        per < 1.2,
        "{bytes} bytes for {} accesses: {per:.2} bytes per access",
        acc.len()
    );
}
