//! The cache model fed while the analysis streams: `cache_stats` for the
//! model set at `memory_trace_analysis` prints the counts the analysis
//! recorded (and says so), a new geometry simulates again from the saved
//! accesses, and going back to the first model reads the record again.
//!
//! The program is `tests/c/loc_twice.c`: two unit-stride sweeps of a
//! 1024-double array, 128 lines of 64 bytes, one store then one load of
//! each element. Counts worked by hand:
//! - L1 1 KiB (16 lines) and L2 4 KiB (64 lines) are both smaller than the
//!   array, so every line misses at both levels in both sweeps: 256 misses
//!   each of 2048 accesses, 128 of them compulsory (first touches) and the
//!   other 128 capacity misses (a fully associative LRU cache of 16 or 64
//!   lines misses a cyclic walk of 128 lines too);
//! - L1 16 KiB (256 lines) holds the array: only the first sweep misses,
//!   128 at L1 and at L2 (looked up only on an L1 miss), all compulsory;
//! - 128 references to never-used lines: the reuse histogram's cold count.
//!
//! The simulation path's counts are checked against cachegrind on other
//! programs in `locality_cache.rs`; `analysis_spill.rs` checks that the
//! recorded counts equal a simulation's on the test programs.
use std::path::Path;

mod common;
use common::mapvis_script as mapvis;

/// Tcl printing `N TAG accesses misses_L1 misses_L2 compulsory_L1
/// capacity_L1 conflict_L1` for the array `twice` from the dicts of
/// `cache_stats quiet`, then the reuse cold count from the printed table.
fn counts(tag: &str) -> String {
    format!(
        "foreach d [cache_stats quiet] {{ if {{[dict get $d variable] eq \"twice\"}} {{ \
         puts \"N {tag} [dict get $d accesses] [dict get $d misses_L1] [dict get $d misses_L2] \
         [dict get $d compulsory_L1] [dict get $d capacity_L1] [dict get $d conflict_L1]\" }} }}; "
    )
}

/// The numbers printed after `N TAG`.
fn numbers(out: &str, tag: &str) -> Vec<u64> {
    let head = format!("N {tag} ");
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix(&head))
        .unwrap_or_else(|| panic!("no {tag} line in:\n{out}"));
    line.split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect()
}

/// The header line of a printed `cache_stats` report.
fn headers(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.starts_with("cache_stats ("))
        .collect()
}

#[test]
fn cache_stats_reads_what_the_analysis_recorded_and_simulates_other_models() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/loc_twice.c");
    std::fs::copy(&src, dir.path().join("t.c")).unwrap();
    let small = "set_cache L1 1K 2 64; set_cache L2 4K 4 64; set_cache L3 off; ";
    let script = format!(
        "set_mem_alloc G; {small} compile_exe t.c; run_gleipnir; memory_trace_analysis; \
         {} cache_stats; \
         set_cache L1 16K 4 64; {} cache_stats; \
         {small} {} cache_stats",
        counts("recorded"),
        counts("simulated"),
        counts("again")
    );
    let out = mapvis(dir.path(), &script);
    assert!(
        dir.path().join(".mapvis/analysis/locality.json").is_file(),
        "the analysis saved no recorded counts"
    );
    // accesses, misses L1, L2, then L1's compulsory, capacity, conflict.
    let both_miss = vec![2048, 256, 256, 128, 128, 0];
    assert_eq!(numbers(&out, "recorded"), both_miss, "{out}");
    assert_eq!(numbers(&out, "simulated"), vec![2048, 128, 128, 128, 0, 0]);
    assert_eq!(numbers(&out, "again"), both_miss);
    let h = headers(&out);
    assert_eq!(h.len(), 3, "{out}");
    let recorded = "simulated as the trace was analysed";
    assert!(h[0].contains(recorded), "{}", h[0]);
    assert!(!h[1].contains(recorded), "{}", h[1]);
    assert!(h[2].contains(recorded), "{}", h[2]);
    // The reuse distances: 128 cold references of the array in every
    // report (recorded once, at the same line size for the new model).
    let mut cold = Vec::new();
    let mut in_reuse = false;
    for l in out.lines() {
        if l.starts_with("reuse distance in distinct") {
            in_reuse = true;
        } else if l.trim().is_empty() {
            in_reuse = false;
        } else if in_reuse && l.split_whitespace().next() == Some("twice") {
            let w: Vec<&str> = l.split_whitespace().collect();
            cold.push((w[1].to_string(), w[2].to_string()));
        }
    }
    let want = ("2048".to_string(), "128".to_string());
    assert_eq!(cold, vec![want; 3], "{out}");
}

/// `set_reuse_sampling auto N`: past N accesses the analysis records the
/// model's counts but not exact reuse distances, and `cache_stats` samples
/// them, saying so; the misses are the same exact counts.
#[test]
fn past_the_auto_threshold_reuse_distances_are_sampled_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/loc_twice.c");
    std::fs::copy(&src, dir.path().join("t.c")).unwrap();
    let script = format!(
        "set_mem_alloc G; set_cache L1 1K 2 64; set_cache L2 4K 4 64; set_cache L3 off; \
         set_reuse_sampling auto 1000; compile_exe t.c; run_gleipnir; memory_trace_analysis; \
         {} cache_stats; set_reuse_sampling auto; cache_stats",
        counts("auto")
    );
    let out = mapvis(dir.path(), &script);
    assert_eq!(numbers(&out, "auto"), vec![2048, 256, 256, 128, 128, 0]);
    let h = headers(&out);
    assert_eq!(h.len(), 2, "{out}");
    assert!(
        h.iter().all(|l| l.contains("as the trace was analysed")),
        "{out}"
    );
    let reuse: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("reuse distance in distinct"))
        .collect();
    assert_eq!(reuse.len(), 2, "{out}");
    assert!(
        reuse[0].contains("SHARDS sampling of 1.0000%"),
        "{}",
        reuse[0]
    );
    assert!(reuse[1].contains("exact"), "{}", reuse[1]);
    let said = "so the reuse distances are sampled (set_reuse_sampling auto 1000)";
    assert_eq!(out.matches(said).count(), 1, "{out}");
}
