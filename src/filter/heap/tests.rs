//! The heap wing's unit tests, and runs the figures' tests share.
use std::sync::Arc;

use super::report::*;
use super::run::*;
use super::series::*;
use crate::trace::heap::{HeapOp, SiteStats};
use crate::trace::record::{AllocKind, FreeKind};
/// alloc_sites.csv through the one CSV writer: numbers as written, a
/// backtrace quoted only when it holds a comma (a C++ template).
#[test]
fn sites_csv_rows_are_written_whole_and_quoted_when_needed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("alloc_sites.csv");
    let site = |stack, allocs| SiteStats {
        stack,
        allocs,
        bytes: 4096,
        peak_live: 2048,
        live: 16,
        leaked_blocks: 1,
        temporary: 3,
        in_region: 2,
    };
    let rows = [
        (site(0, 7), "make <- main".to_string()),
        (site(5, 1), "std::map<int, int>::insert <- main".to_string()),
    ];
    write_sites_csv(&path, &rows).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "site,allocations,bytes,peak_live_bytes,leaked_bytes,leaked_blocks,temporary,in_region,backtrace\n\
         0,7,4096,2048,16,1,3,2,make <- main\n\
         5,1,4096,2048,16,1,3,2,\"std::map<int, int>::insert <- main\"\n"
    );
}

fn call(time: u64, op: HeapOp, addr: u64, size: u64) -> HeapCall {
    HeapCall {
        time,
        tid: 1,
        op,
        addr,
        size,
        old: None,
        slack: None,
        stack: 1,
        dur_ns: None,
        in_region: false,
    }
}

/// One block of 64 bytes from stack 1, allocated at operation 10 and
/// freed at 980 of a run of 100 000 operations.
pub(crate) fn late_free_run() -> HeapRun {
    HeapRun {
        source: "test".into(),
        timed: false,
        dur_sample: None,
        unit: TimeUnit::Operations,
        calls: Calls::Memory(Arc::new(vec![
            call(10, HeapOp::Alloc(AllocKind::Malloc), 0x1000, 64),
            call(980, HeapOp::Free(FreeKind::Free), 0x1000, 0),
        ])),
        stacks: vec![vec![], vec![0x401000]],
        maps: Vec::new(),
        rss: Vec::new(),
        end_time: 100_000,
        regions: Vec::new(),
        command: Vec::new(),
        notes: Vec::new(),
        partial: None,
        summary: None,
    }
}

/// A block freed after the last sample time is drawn freed from the
/// free on, not live until the end of the run.
#[test]
fn a_block_freed_late_is_not_live_until_exit() {
    let (ts, total, per, high) = live_series(&late_free_run(), &[1], 20).unwrap();
    assert_eq!(high.len(), ts.len());
    assert_eq!(ts.len(), total.len());
    assert!(ts.windows(2).all(|w| w[0] <= w[1]), "{ts:?}");
    // Drawn as steps, each sample holds until the next one.
    let at = |t: u64| total[ts.iter().rposition(|&s| s <= t).unwrap()];
    assert_eq!(at(500), 64, "{ts:?} {total:?}");
    assert_eq!(at(980), 0, "{ts:?} {total:?}");
    assert_eq!(at(50_000), 0, "{ts:?} {total:?}");
    assert_eq!(per[0], total);
    assert_eq!(*ts.last().unwrap(), 100_000);
}
