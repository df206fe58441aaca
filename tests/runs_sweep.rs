//! Sweeps: scripts/transpose.c traced with three tile sizes, each kept with
//! `save_run`, then `plot_runs` draws a metric of each variable across the
//! runs. Its numbers must be each run's own `cache_stats` numbers (printed
//! by the same session as each run was traced), and the page and CSV must
//! hold them in run order. `scripts/sweep.tcl`, the README's example, is
//! run end to end on a smaller matrix.
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
    let blocks = [4u64, 8, 16];
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
    // -vars keeps Y; with no runs named, every run in the order of runs.
    assert!(out2.contains("Q 3 b4"), "{out2}");
    // The page: a line per variable, y in run order, x the labels.
    let figs = vis_common::figures(&dir.path().join("figures/runs_misses_L1.html"));
    let data = figs[0]["data"].as_array().unwrap();
    assert_eq!(data.len(), 2, "X and Y");
    for t in data {
        let v = t["name"].as_str().unwrap();
        let x: Vec<&str> = t["x"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
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
    // A partial run is marked in the table, the figure and the values.
    let info = dir.path().join(".mapvis/runs/b8/run.json");
    let json = std::fs::read_to_string(&info).unwrap();
    assert!(json.contains("\"complete\": true"), "{json}");
    std::fs::write(
        &info,
        json.replace("\"complete\": true", "\"complete\": false"),
    )
    .unwrap();
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

#[test]
fn the_sweep_script_runs_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let script = common::root().join("scripts/sweep.tcl");
    let out = mapvis(
        dir.path(),
        &format!("set N 32; source {{{}}}", script.display()),
    );
    for label in ["naive", "b4", "b8", "b16"] {
        assert!(out.contains(&format!("kept run {label}")), "{out}");
    }
    assert!(out.contains("plot_runs misses_L1"), "{out}");
    let figs = vis_common::figures(&dir.path().join("figures/runs_misses_L1.html"));
    let names: Vec<&str> = figs[0]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"X") && names.contains(&"Y"), "{names:?}");
}
