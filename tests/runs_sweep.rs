//! Sweeps: scripts/transpose.c traced with three tile sizes, each kept with
//! `save_run`, then `plot_runs` draws a metric of each variable across the
//! runs. Its numbers must be each run's own `cache_stats` numbers (printed
//! by the same session as each run was traced), and the page and CSV must
//! hold them in run order (the oracle there is mapvis's own `cache_stats`,
//! validated against cachegrind in `tests/locality_cache.rs`).
//! `scripts/sweep.tcl`, the README's example, is run end to end on a
//! smaller matrix, its numbers checked against counts worked out by hand
//! and cachegrind's.
use std::collections::BTreeMap;
use std::path::Path;

mod common;
mod vis_common;
use common::{mapvis_script as mapvis, printed_counts as numbers};

const N: u64 = 64;
const SETUP: &str =
    "set_mem_alloc G; set_cache L1 4K 4 64; set_cache L2 32K 8 64; set_cache L3 off; ";

/// Tcl printing `N KEY variable accesses misses_L1 misses_L2` per dict of
/// the cache_stats list in Tcl variable `list`.
fn print_list(key: &str, list: &str) -> String {
    format!(
        "foreach d ${list} {{ puts \"N {key} [dict get $d variable] [dict get $d accesses] \
         [dict get $d misses_L1] [dict get $d misses_L2]\" }}; "
    )
}

/// The `P run variable value` lines a script printed from plot_runs'
/// dicts, by (run, variable).
fn plotted(out: &str) -> BTreeMap<(String, String), String> {
    out.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 4 && w[0] == "P").then(|| ((w[1].into(), w[2].into()), w[3].into()))
        })
        .collect()
}

#[test]
fn plot_runs_gives_each_runs_own_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/transpose.c");
    std::fs::copy(&src, dir.path().join("t.c")).unwrap();
    // Saved in this order, which is not the labels' natural order (b4, b8,
    // b16): a sweep's runs are listed in the order they were saved.
    let blocks = [8u64, 16, 4];
    let mut script = SETUP.to_string();
    for b in blocks {
        script += &format!(
            "compile_exe t.c -DN={N} -DBLOCK={b}; run_gleipnir; memory_trace_analysis; \
             set c [cache_stats quiet]; {} save_run b{b}; ",
            print_list(&format!("b{b}"), "c")
        );
    }
    let out = mapvis(dir.path(), &script);
    let stats = numbers(&out);
    // A later session; runs listed out of order are plotted in that order.
    let plot = "set p [plot_runs misses_L1 b16 b4 b8]; \
                foreach d $p { puts \"P [dict get $d run] [dict get $d variable] [dict get $d value]\" }; \
                set q [plot_runs miss_ratio -vars Y]; puts \"Q [llength $q] [dict get [lindex $q 0] run]\"";
    let out2 = mapvis(dir.path(), &format!("{SETUP} {plot}"));
    let got = plotted(&out2);
    let order = ["b16", "b4", "b8"];
    for run in order {
        for v in ["X", "Y"] {
            let want = stats[&(run.to_string(), v.to_string())];
            assert_eq!(want[0], N * N, "{run} {v}: N*N accesses");
            let key = (run.to_string(), v.to_string());
            assert_eq!(got[&key], want[1].to_string(), "{run} {v}:\n{out2}");
        }
    }
    assert_eq!(got.len(), 6, "{out2}");
    // -vars keeps Y; with no runs named, every run in the order they were
    // saved: b8 first.
    assert!(out2.contains("Q 3 b8"), "{out2}");
    // The page: a line per variable, y in run order, x the labels.
    let figs = vis_common::figures(&dir.path().join("figures/runs_misses_L1.html"));
    let data = figs[0]["data"].as_array().unwrap();
    assert_eq!(data.len(), 2, "X and Y");
    for t in data {
        let v = t["name"].as_str().unwrap();
        let x = x_labels(t);
        assert_eq!(x, order);
        let y: Vec<u64> = vis_common::nums(&t["y"])
            .iter()
            .map(|y| *y as u64)
            .collect();
        let want: Vec<u64> = order
            .iter()
            .map(|r| stats[&(r.to_string(), v.to_string())][1])
            .collect();
        assert_eq!(y, want, "{v}");
    }
    let csv = std::fs::read_to_string(dir.path().join("visinfo/runs_misses_L1.csv")).unwrap();
    assert!(csv.starts_with("run,complete,variable,value\n"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 6, "{csv}");
    assert!(dir.path().join("figures/runs_miss_ratio.html").is_file());
    // A partial run is marked in the table, the figure and the values: b8
    // kept again from its trace cut to three quarters (run.json has no say
    // in it: the run's own summary does).
    mapvis(
        dir.path(),
        &format!("{SETUP} drop_run b8; compile_exe t.c -DN={N} -DBLOCK=8; run_gleipnir"),
    );
    let trace = dir.path().join(".mapvis/trace.mvt");
    let len = std::fs::metadata(&trace).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&trace)
        .unwrap()
        .set_len(len * 3 / 4)
        .unwrap();
    mapvis(
        dir.path(),
        &format!(
            "{SETUP} load_trace {}; memory_trace_analysis; save_run b8",
            trace.display()
        ),
    );
    let out3 = mapvis(
        dir.path(),
        &format!(
            "{SETUP} foreach d [plot_runs accesses b4 b8 -vars X] {{ \
             puts \"C [dict get $d run] [dict get $d complete]\" }}"
        ),
    );
    assert!(out3.contains("b8 (partial)"), "{out3}");
    assert!(out3.contains("C b4 1") && out3.contains("C b8 0"), "{out3}");
    let figs = vis_common::figures(&dir.path().join("figures/runs_accesses.html"));
    assert_eq!(figs[0]["data"][0]["x"][1], "b8 (partial)");
    let html = std::fs::read_to_string(dir.path().join("figures/runs_accesses.html")).unwrap();
    assert!(
        html.contains("PARTIAL: the trace or analysis of b8"),
        "partial said"
    );
    // Names are checked and said.
    for (script, says) in [
        ("plot_runs misses_L9", "not a metric"),
        ("plot_runs accesses nothing", "there is no run \"nothing\""),
        ("plot_runs accesses -vars Z", "no run has a variable \"Z\""),
    ] {
        let all = common::mapvis_script_fails(dir.path(), &format!("{SETUP} {script}"));
        assert!(all.contains(says), "{script}: {all}");
    }
}

/// The x labels of a `plot_runs` trace: the runs, in the page's order.
fn x_labels(t: &serde_json::Value) -> Vec<&str> {
    t["x"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

/// Cachegrind's D1 write misses on the line of `rel` holding `marker`
/// (the `nth` such line, from 0), for `exe` with the sweep's caches: a
/// 32 KiB 8-way D1 and a 256 KiB 8-way LL, 64-byte lines. Read from
/// cachegrind's own output file (`events:` names the columns; `fl=` and
/// `fn=` lines open a file's and a function's lines).
fn cachegrind_write_misses(exe: &Path, dir: &Path, rel: &str, marker: &str, nth: usize) -> u64 {
    let src = std::fs::read_to_string(common::root().join(rel)).unwrap();
    let line = src
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(marker))
        .nth(nth)
        .expect("marker present")
        .0
        + 1;
    let (status, out) = common::cachegrind(exe, dir);
    assert!(status.success(), "cachegrind failed: {status:?}");
    let text = std::fs::read_to_string(&out).unwrap();
    let events: Vec<&str> = text
        .lines()
        .find_map(|l| l.strip_prefix("events:"))
        .expect("an events: line")
        .split_whitespace()
        .collect();
    let col = events.iter().position(|e| *e == "D1mw").expect("D1mw") + 1;
    let file = Path::new(rel).file_name().unwrap().to_string_lossy();
    let mut in_file = false;
    let mut sum = 0;
    for l in text.lines() {
        if let Some(f) = l.strip_prefix("fl=") {
            in_file = f.ends_with(&*file);
        } else if in_file {
            let w: Vec<&str> = l.split_whitespace().collect();
            if w.first().and_then(|n| n.parse::<usize>().ok()) == Some(line) {
                sum += w.get(col).map_or(0, |n| n.parse::<u64>().unwrap());
            }
        }
    }
    sum
}

/// `scripts/sweep.tcl` at N = 32, end to end: the four runs are kept and
/// `plot_runs misses_L1` draws X and Y across them, with the numbers an
/// independent oracle gives, not only the labels.
///
/// By hand: X and Y are 32 x 32 doubles (8 KiB each, 64-byte aligned in
/// .bss: 128 lines each); the script's L1 (32 KiB, 8 ways, 64 sets) holds
/// both at once, two lines of each per set with ways to spare for the
/// loop counters, so whatever the tiling every variable misses exactly
/// its 128 lines, once, in L1 and in L2 (256 KiB), with 32 x 32 = 1024
/// accesses. Cachegrind, run on the same source built the same way with
/// the same caches, must count those 128 misses for Y: its D1 write
/// misses on the copy line `Y[j][i] = X[i][j];` (X's reads do not miss in
/// cachegrind, which also saw the fill before the pins put X in the
/// cache, while mapvis's model starts cold at the pins: X's 128 are by
/// hand only).
#[test]
fn the_sweep_script_runs_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let script = common::root().join("scripts/sweep.tcl");
    let runs = ["naive", "b4", "b8", "b16"];
    let mut tcl = format!("set N 32; source {{{}}}; ", script.display());
    for metric in ["accesses", "misses_L1", "misses_L2"] {
        tcl += &format!(
            "foreach d [plot_runs {metric} naive b4 b8 b16] {{ \
             puts \"V {metric} [dict get $d run] [dict get $d variable] [dict get $d value]\" }}; "
        );
    }
    let out = mapvis(dir.path(), &tcl);
    for label in runs {
        assert!(out.contains(&format!("kept run {label}")), "{out}");
    }
    assert!(out.contains("plot_runs misses_L1"), "{out}");
    let values: BTreeMap<(String, String, String), u64> = out
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 5 && w[0] == "V").then(|| {
                (
                    (w[1].to_string(), w[2].to_string(), w[3].to_string()),
                    w[4].parse().unwrap(),
                )
            })
        })
        .collect();
    let mut want = BTreeMap::new();
    for run in runs {
        for var in ["X", "Y"] {
            for (metric, n) in [("accesses", 1024), ("misses_L1", 128), ("misses_L2", 128)] {
                want.insert((metric.to_string(), run.to_string(), var.to_string()), n);
            }
        }
    }
    assert_eq!(values, want, "per run and variable, by hand:\n{out}");
    // The page the script drew: a line per variable, the runs in order,
    // 128 misses each.
    let figs = vis_common::figures(&dir.path().join("figures/runs_misses_L1.html"));
    let data = figs[0]["data"].as_array().unwrap();
    let mut names = Vec::new();
    for t in data {
        names.push(t["name"].as_str().unwrap());
        let x = x_labels(t);
        assert_eq!(x, runs);
        assert_eq!(vis_common::nums(&t["y"]), vec![128.0; 4], "{}", t["name"]);
    }
    names.sort();
    assert_eq!(names, ["X", "Y"]);
    // Cachegrind on Y: the naive copy is the second `Y[j][i] = X[i][j];`
    // of scripts/transpose.c, the tiled ones the first.
    for (run, flags, nth) in [
        ("naive", vec![], 1),
        ("b4", vec!["-DBLOCK=4"], 0),
        ("b8", vec!["-DBLOCK=8"], 0),
        ("b16", vec!["-DBLOCK=16"], 0),
    ] {
        let mut cc = vec!["-DN=32"];
        cc.extend(flags);
        let (d, exe) = common::compile("scripts/transpose.c", &cc);
        let cg = cachegrind_write_misses(
            &exe,
            d.path(),
            "scripts/transpose.c",
            "Y[j][i] = X[i][j];",
            nth,
        );
        assert_eq!(
            cg,
            values[&("misses_L1".to_string(), run.to_string(), "Y".to_string())],
            "{run}: Y's L1 misses, cachegrind and mapvis"
        );
    }
}
