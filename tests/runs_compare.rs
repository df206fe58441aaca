//! Runs side by side: a naive and a cache-blocked transpose are traced,
//! kept with `save_run` and compared with `compare_runs`. The comparison's
//! numbers must be each run's own `cache_stats` numbers, aligned by name;
//! the access counts are worked by hand (N*N loads of X and N*N stores to Y
//! in both versions), and the blocked version must miss less in L1 on Y.
use std::path::Path;

mod common;
use common::{mapvis_script as mapvis, printed_counts as numbers};

const N: u64 = 64;

/// Tcl that prints one `N KEY var accesses misses_L1 misses_L2` line per
/// per-variable dict of the list in variable `list` (the `a` or `b` side
/// of compare_runs' dicts when `side` is given).
fn print_list(key: &str, list: &str, side: Option<&str>) -> String {
    let d = match side {
        Some(s) => format!("[dict get $d {s}]"),
        None => "$d".into(),
    };
    format!(
        "foreach d ${list} {{ set x {d}; if {{[dict size $x] > 0}} {{ \
         puts \"N {key} [dict get $d variable] [dict get $x accesses] \
         [dict get $x misses_L1] [dict get $x misses_L2]\" }} }}; "
    )
}

#[test]
fn compare_runs_aligns_by_name_and_gives_each_runs_own_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/transpose.c");
    std::fs::copy(&src, dir.path().join("t.c")).unwrap();
    let setup = "set_mem_alloc G; set_cache L1 4K 4 64; set_cache L2 32K 8 64; set_cache L3 off; ";
    let naive = format!(
        "{setup} compile_exe t.c -DN={N}; run_gleipnir; memory_trace_analysis; \
         set a [cache_stats quiet]; {} save_run naive",
        print_list("a", "a", None)
    );
    let out_a = mapvis(dir.path(), &naive);
    let blocked = format!(
        "{setup} compile_exe t.c -DN={N} -DBLOCK=8; run_gleipnir; memory_trace_analysis; \
         set b [cache_stats quiet]; {} save_run blocked",
        print_list("b", "b", None)
    );
    let out_b = mapvis(dir.path(), &blocked);
    // A later session: the runs are still there.
    let cmp = format!(
        "{setup} set c [compare_runs naive blocked save]; {} {} \
         use_run naive; set u [cache_stats quiet]; {} runs",
        print_list("ca", "c", Some("a")),
        print_list("cb", "c", Some("b")),
        print_list("u", "u", None)
    );
    let out_c = mapvis(dir.path(), &cmp);
    let mut got = numbers(&out_a);
    got.extend(numbers(&out_b));
    got.extend(numbers(&out_c));
    let get = |k: &str, v: &str| {
        *got.get(&(k.to_string(), v.to_string()))
            .unwrap_or_else(|| panic!("no {k} {v} in\n{out_a}\n{out_b}\n{out_c}"))
    };
    for v in ["X", "Y"] {
        assert_eq!(get("a", v)[0], N * N, "{v}: N*N accesses in the naive run");
        assert_eq!(
            get("b", v)[0],
            N * N,
            "{v}: N*N accesses in the blocked run"
        );
        assert_eq!(
            get("ca", v),
            get("a", v),
            "{v}: compare's A side is run A's cache_stats"
        );
        assert_eq!(
            get("cb", v),
            get("b", v),
            "{v}: compare's B side is run B's cache_stats"
        );
        assert_eq!(get("u", v), get("a", v), "{v}: use_run naive reads run A");
    }
    // The column walk over Y misses on every store with 4 KB of L1 (N*N
    // misses); tiles of 8 x 8 doubles could reuse each line of Y 8 times
    // (N*N/8 misses), and conflicts with X leave about 2x that.
    assert!(
        get("b", "Y")[1] * 3 < get("a", "Y")[1],
        "blocking must cut Y's L1 misses: {:?} vs {:?}",
        get("a", "Y"),
        get("b", "Y")
    );
    assert!(out_c.contains("naive") && out_c.contains("blocked") && out_c.contains("complete"));
    let csv =
        std::fs::read_to_string(dir.path().join("visinfo/compare_naive_blocked.csv")).unwrap();
    assert!(
        csv.starts_with("variable,run,accesses,misses_L1,misses_L2,"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 1 + 4, "{csv}");

    // Runs are mapvis's files: drop_run and clear_analysis remove them.
    let out = mapvis(dir.path(), "drop_run blocked; runs");
    assert!(out.contains("dropped run blocked"), "{out}");
    assert!(!dir.path().join(".mapvis/runs/blocked").exists());
    mapvis(dir.path(), "clear_analysis");
    assert!(!dir.path().join(".mapvis/runs/naive").exists());
}

#[test]
fn run_labels_and_names_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    for (script, says) in [
        ("save_run ../x", "cannot label a run"),
        ("use_run nothing", "there is no run \"nothing\""),
        ("compare_runs a b", "there is no run \"a\""),
    ] {
        let all = common::mapvis_script_fails(dir.path(), script);
        assert!(all.contains(says), "{script}: {all}");
    }
    assert!(!dir.path().join("x").exists() && !dir.path().join(".mapvis/x").exists());
}
