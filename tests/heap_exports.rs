//! The memtrace and ops exports of tests/c/export_two.c, checked line by
//! line against the program: two blocks, four stores in a known order.
mod common;

use mapvis::filter::export::{export_memtrace, export_ops};
use mapvis::trace::record::run_trace;
use mapvis::trace::record::Event;

/// Traces export_two.c; returns the folder, the trace and the two blocks'
/// addresses (from the trace's own allocation events).
fn traced() -> (tempfile::TempDir, std::path::PathBuf, u64, u64) {
    let (dir, exe) = common::compile("tests/c/export_two.c", &[]);
    let req = common::request(dir.path(), &exe, &[]);
    run_trace(&req).expect("trace");
    let (evs, _) = common::read_events(&req.trace_file);
    let blocks: Vec<(u64, u64)> = evs
        .iter()
        .filter_map(|e| match e {
            Event::Alloc(a) if a.size == 16 || a.size == 8 => Some((a.addr, a.size)),
            _ => None,
        })
        .collect();
    assert_eq!(blocks.len(), 2, "{blocks:?}");
    let trace = req.trace_file.clone();
    (dir, trace, blocks[0].0, blocks[1].0)
}

fn lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn memtrace_lines_in_time_order() {
    let (dir, trace, a, b) = traced();
    let out = dir.path().join("prog.memtrace");
    export_memtrace(&trace, &out).unwrap();
    let all = lines(&out);
    assert!(all.iter().all(|l| l.starts_with(">>> ")), "{all:?}");
    let first = all
        .iter()
        .position(|l| *l == format!(">>> N {a:#x} 16"))
        .expect("N of a");
    let ours = &all[first..];
    let heap: Vec<&String> = ours
        .iter()
        .filter(|l| {
            let addr =
                u64::from_str_radix(l.split(' ').nth(2).unwrap().trim_start_matches("0x"), 16)
                    .unwrap();
            (a..a + 16).contains(&addr) || (b..b + 8).contains(&addr)
        })
        .collect();
    let want = [
        format!(">>> N {a:#x} 16"),
        format!(">>> N {b:#x} 8"),
        format!(">>> S {a:#x} 4"),
        format!(">>> S {b:#x} 4"),
        format!(">>> S {:#x} 4", b + 4),
        format!(">>> S {b:#x} 4"),
        format!(">>> F {a:#x} 0"),
        format!(">>> F {b:#x} 0"),
    ];
    assert_eq!(heap, want.iter().collect::<Vec<_>>());
    // The other lines are the loads of the pointers a and b from the
    // stack (-O0), one before each store: 4 loads of 8 bytes, the first
    // of a, the three others of b. GL_STOP's own argument stores are gone.
    let others: Vec<&String> = ours.iter().filter(|l| !heap.contains(l)).collect();
    assert_eq!(others.len(), 4, "{others:?}");
    assert!(others
        .iter()
        .all(|l| l.starts_with(">>> L ") && l.ends_with(" 8")));
    assert_eq!(others[1], others[2]);
    assert_eq!(others[2], others[3]);
    assert_ne!(others[0], others[1]);
    // In time order: each load comes right before its store.
    let pos = |l: &String| ours.iter().position(|x| x == l).unwrap();
    assert_eq!(pos(&want[2]), pos(others[0]) + 1);
}

#[test]
fn ops_lines_with_lock_estimate() {
    let (dir, trace, a, b) = traced();
    let out = dir.path().join("prog.ops");
    export_ops(&trace, &out).unwrap();
    let all = lines(&out);
    let first = all
        .iter()
        .position(|l| l.ends_with(&format!(" N {a:#x} 16 0")))
        .expect("N of a");
    let ha: u64 = all[first].split(' ').next().unwrap().parse().unwrap();
    let hb = ha + 1;
    // Worked out by hand with Steve's rule, life in halves: own access +2,
    // any other block's operation -1, floor 0, locked while above 0.
    //   idx0 N a; idx1 N b; idx2 S a (a: 1 other op -> 0, +2 = 2);
    //   idx3 S b (b: 1 other -> 0, +2 = 2); idx4 S b (4); idx5 S b (6);
    //   idx6 F a (a: 3 others since idx2 -> 2-3 = 0: unlocked);
    //   idx7 F b (b: 1 other since idx5 -> 5: locked).
    let want = vec![
        format!("{ha} N {a:#x} 16 0"),
        format!("{hb} N {b:#x} 8 0"),
        format!("{ha} S {a:#x} 4 1"),
        format!("{hb} S {b:#x} 4 1"),
        format!("{hb} S {:#x} 4 1", b + 4),
        format!("{hb} S {b:#x} 4 1"),
        format!("{ha} F {a:#x} 0 0"),
        format!("{hb} F {b:#x} 0 1"),
    ];
    assert_eq!(all[first..].to_vec(), want);
    // Handles are unique per block: every earlier line (libc's own
    // blocks, if any) uses smaller handles.
    assert!(all[..first]
        .iter()
        .all(|l| l.split(' ').next().unwrap().parse::<u64>().unwrap() < ha));
}
