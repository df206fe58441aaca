//! Runs side by side: a naive and a cache-blocked transpose are traced,
//! kept with `save_run` and compared with `compare_runs`. The comparison's
//! numbers must be each run's own `cache_stats` numbers, aligned by name;
//! the access counts are worked by hand (N*N loads of X and N*N stores to Y
//! in both versions), and the blocked version must miss less in L1 on Y.
use std::path::Path;

use polars::prelude::*;

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
         set a [cache_stats save quiet]; {} save_run naive",
        print_list("a", "a", None)
    );
    let out_a = mapvis(dir.path(), &naive);
    let pairs_a = table(&dir.path().join("visinfo/cache_stats_pairs.csv"));
    let blocked = format!(
        "{setup} compile_exe t.c -DN={N} -DBLOCK=8; run_gleipnir; memory_trace_analysis; \
         set b [cache_stats save quiet]; {} save_run blocked",
        print_list("b", "b", None)
    );
    let out_b = mapvis(dir.path(), &blocked);
    let pairs_b = table(&dir.path().join("visinfo/cache_stats_pairs.csv"));
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
        csv.starts_with("variable,run,accesses,misses_L1,misses_L2,bytes,"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 1 + 4, "{csv}");
    check_variable_table(dir.path(), &get);
    check_pairs(dir.path(), &pairs_a, &pairs_b);
    check_page(dir.path(), &get);

    // Runs are mapvis's files: drop_run and clear_analysis remove them.
    let out = mapvis(dir.path(), "drop_run blocked; runs");
    assert!(out.contains("dropped run blocked"), "{out}");
    assert!(!dir.path().join(".mapvis/runs/blocked").exists());
    mapvis(dir.path(), "clear_analysis");
    assert!(!dir.path().join(".mapvis/runs/naive").exists());
}

/// A CSV file mapvis wrote, as a table.
fn table(path: &Path) -> DataFrame {
    CsvReadOptions::default()
        .with_has_header(true)
        .try_into_reader_with_file_path(Some(path.to_path_buf()))
        .unwrap()
        .finish()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn u64_at(df: &DataFrame, col: &str, row: usize) -> Option<u64> {
    let c = df.column(col).unwrap().cast(&DataType::UInt64).unwrap();
    c.u64().unwrap().get(row)
}

fn str_at(df: &DataFrame, col: &str, row: usize) -> Option<String> {
    let c = df.column(col).unwrap().cast(&DataType::String).unwrap();
    c.str().unwrap().get(row).map(String::from)
}

/// The CSV of variables: bytes are 8 per access (doubles), worked by hand;
/// run B's row carries the changes from run A, which equal the difference
/// of each run's own cache_stats numbers; the reuse columns are there.
fn check_variable_table(dir: &Path, get: &dyn Fn(&str, &str) -> [u64; 3]) {
    let df = table(&dir.join("visinfo/compare_naive_blocked.csv"));
    for col in [
        "reuse_p50",
        "reuse_p90",
        "change_accesses",
        "change_bytes_pct",
        "change_misses_L1",
        "change_misses_L1_pct",
        "change_reuse_p50_bins",
        "change_reuse_p90_bins",
    ] {
        assert!(df.column(col).is_ok(), "no column {col}: {df}");
    }
    for row in 0..df.height() {
        let var = str_at(&df, "variable", row).unwrap();
        let run = str_at(&df, "run", row).unwrap();
        assert_eq!(u64_at(&df, "bytes", row), Some(8 * N * N), "{var} {run}");
        let change = df
            .column("change_misses_L1")
            .unwrap()
            .cast(&DataType::Int64)
            .unwrap()
            .i64()
            .unwrap()
            .get(row);
        if run == "naive" {
            assert_eq!(change, None, "{var}: no change on run A's row");
        } else {
            let want = get("b", &var)[1] as i64 - get("a", &var)[1] as i64;
            assert_eq!(change, Some(want), "{var}: change of L1 misses");
        }
    }
}

/// The pairs: aligned by variable and pattern label, never by line; each
/// side's numbers are that run's own cache_stats pair (source, accesses,
/// misses); a pair left alone in one run is listed apart.
fn check_pairs(dir: &Path, pairs_a: &DataFrame, pairs_b: &DataFrame) {
    let df = table(&dir.join("visinfo/compare_naive_blocked_pairs.csv"));
    let find = |own: &DataFrame, var: &str, source: &str| {
        (0..own.height())
            .find(|&r| {
                str_at(own, "variable", r).as_deref() == Some(var)
                    && str_at(own, "source", r).as_deref() == Some(source)
            })
            .unwrap_or_else(|| panic!("{var} {source} not in cache_stats' pairs: {own}"))
    };
    let mut seen = 0;
    for row in 0..df.height() {
        let var = str_at(&df, "variable", row).unwrap();
        let on = str_at(&df, "matched_on", row).unwrap();
        for (tag, own) in [("a", pairs_a), ("b", pairs_b)] {
            let Some(source) = str_at(&df, &format!("source_{tag}"), row) else {
                continue;
            };
            seen += 1;
            let r = find(own, &var, &source);
            let pattern = str_at(own, "pattern", r).unwrap();
            let label = str_at(&df, &format!("pattern_{tag}"), row).unwrap();
            assert!(
                label.contains(on.as_str()),
                "{var}: {label} matched on {on}"
            );
            assert!(
                pattern.starts_with(&label),
                "{var} {source}: {label} vs {pattern}"
            );
            for (mine, theirs) in [
                ("accesses", "accesses"),
                ("misses_L1", "misses_L1"),
                ("misses_L2", "misses_L2"),
            ] {
                assert_eq!(
                    u64_at(&df, &format!("{mine}_{tag}"), row),
                    u64_at(own, theirs, r),
                    "{var} {source} {mine} of run {tag}"
                );
            }
        }
        let matched = str_at(&df, "matched", row).unwrap() == "true";
        let both = str_at(&df, "source_a", row).is_some() && str_at(&df, "source_b", row).is_some();
        assert_eq!(matched, both, "{var} {on}");
    }
    // Every pair of both runs is listed once, matched or apart.
    assert_eq!(seen, pairs_a.height() + pairs_b.height(), "{df}");
    // X is read row by row and Y written column by column in both
    // versions (in tiles in the blocked one), one line each: their pairs
    // match by walk direction, with N*N accesses on each side.
    for (v, walk) in [("X", "row-wise"), ("Y", "column-wise")] {
        let r = (0..df.height())
            .find(|&r| str_at(&df, "variable", r).as_deref() == Some(v))
            .unwrap_or_else(|| panic!("a pair of {v}: {df}"));
        assert_eq!(
            str_at(&df, "matched", r).as_deref(),
            Some("true"),
            "{v}: {df}"
        );
        let on = str_at(&df, "matched_on", r).unwrap();
        assert!(on.starts_with(walk), "{v} matched on {on}: {df}");
        assert_eq!(u64_at(&df, "accesses_a", r), Some(N * N));
        assert_eq!(u64_at(&df, "accesses_b", r), Some(N * N));
    }
}

/// The page: it names both runs, draws X and Y, and its paired bars are
/// each run's own cache_stats misses per level.
fn check_page(dir: &Path, get: &dyn Fn(&str, &str) -> [u64; 3]) {
    let html = std::fs::read_to_string(dir.join("figures/compare_naive_blocked.html")).unwrap();
    assert!(html.contains("Run A: naive") && html.contains("Run B: blocked"));
    assert!(html.contains("Run A: naive (") && html.contains("Run B: blocked ("));
    for v in ["X", "Y"] {
        let fig = figure_after(&html, &format!("{v}: misses per level"));
        let data = fig["data"].as_array().unwrap();
        assert_eq!(data.len(), 2, "{v}: a bar per run");
        for (k, (name, key)) in [("naive", "a"), ("blocked", "b")].into_iter().enumerate() {
            assert_eq!(data[k]["name"], name);
            let y: Vec<u64> = data[k]["y"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_u64().unwrap())
                .collect();
            assert_eq!(y, get(key, v)[1..].to_vec(), "{v}: run {name}'s misses");
        }
        let fig = figure_after(&html, &format!("{v}: address over time"));
        let data = fig["data"].as_array().unwrap();
        assert_eq!(data.len(), 2, "{v}: both runs");
        // Side by side, one panel a run, on shared axes.
        assert_eq!(
            (&data[0]["xaxis"], &data[0]["yaxis"]),
            (&"x".into(), &"y".into())
        );
        assert_eq!(
            (&data[1]["xaxis"], &data[1]["yaxis"]),
            (&"x2".into(), &"y2".into())
        );
        let layout = &fig["layout"];
        assert_eq!(layout["xaxis2"]["matches"], "x", "{v}: one time scale");
        assert_eq!(layout["yaxis2"]["matches"], "y", "{v}: one offset scale");
        let (l, r) = (&layout["xaxis"]["domain"], &layout["xaxis2"]["domain"]);
        assert!(
            l[1].as_f64().unwrap() < r[0].as_f64().unwrap(),
            "{v}: panels apart"
        );
        let fig = figure_after(&html, &format!("{v}: miss-ratio curves"));
        let data = fig["data"].as_array().unwrap();
        let names: Vec<&str> = data.iter().map(|t| t["name"].as_str().unwrap()).collect();
        // Both runs' curves, then a dashed mark at each level's size.
        assert_eq!(names[..2], ["naive", "blocked"], "{v}: both curves");
        assert_eq!(
            names[2..],
            ["L1 size (4 KiB)", "L2 size (32 KiB)"],
            "{v}: level marks"
        );
        assert_eq!(data[2]["x"], serde_json::json!([4096, 4096]));
        assert_eq!(data[3]["x"], serde_json::json!([32768, 32768]));
    }
    assert!(
        html.contains("href=\"run_naive/source_t.c.html\""),
        "link to run A's source page"
    );
    assert!(dir.join("figures/run_naive/source_t.c.html").is_file());
    assert!(dir.join("figures/run_blocked/source_t.c.html").is_file());
}

/// The figure JSON under the heading `heading`.
fn figure_after(html: &str, heading: &str) -> serde_json::Value {
    let at = html
        .find(&format!("<h2>{heading}</h2>"))
        .unwrap_or_else(|| panic!("no figure {heading}"));
    let rest = &html[at..];
    let open = rest.find("type=\"application/json\"").unwrap();
    let body = &rest[open..];
    let start = body.find('>').unwrap() + 1;
    let end = body.find("</script>").unwrap();
    serde_json::from_str(&body[start..end]).unwrap()
}

#[test]
fn run_labels_and_names_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    for (script, says) in [
        ("save_run ../x", "cannot label a run"),
        // plot_runs reads -vars as its keyword: no run may be labelled so.
        ("save_run -vars", "not starting with '.' or '-'"),
        ("use_run nothing", "there is no run \"nothing\""),
        ("compare_runs a b", "there is no run \"a\""),
    ] {
        let all = common::mapvis_script_fails(dir.path(), script);
        assert!(all.contains(says), "{script}: {all}");
    }
    assert!(!dir.path().join("x").exists() && !dir.path().join(".mapvis/x").exists());
}
