//! The locality stage's additions to the figures, on real programs traced
//! for real: colour classes by cache level and by reuse distance, counted
//! from the figures' JSON data against counts worked out by hand; pattern
//! labels in the hover data; and the sharing page's bytes by thread.
mod common;
mod vis_common;

use std::collections::BTreeMap;

use common::*;
use mapvis::filter::locality::cache::{CacheModel, Level};
use mapvis::filter::locality::colour::{pattern_table, with_classes, ColourMode};
use mapvis::filter::locality::report;
use mapvis::filter::Analysis;
use mapvis::filter::ClassNames;
use mapvis::filter::MemKind;
use mapvis::filter::VarId;
use mapvis::trace::naming::ProgramNamer;
use mapvis::vis::{self, FigureOptions};
use serde_json::Value;

fn analysed(rel: &str, cc: &[&str]) -> (tempfile::TempDir, Analysis) {
    let (dir, exe, _o, _evs, _end) = trace(rel, cc, &[]);
    let mut namer = ProgramNamer::new(Some(&exe), &[root().join("tests/c")]);
    let a = mapvis::filter::analyse(&dir.path().join("t.mvt"), &mut namer).expect("analysis");
    (dir, a)
}

/// One 4 KiB 8-way L1 of 64-byte lines, nothing else.
fn l1_4k() -> CacheModel {
    CacheModel {
        levels: vec![Level::new(1, 4096, 8, 64).unwrap()],
        origin: "test".into(),
    }
}

fn var_row(a: &Analysis, name: &str) -> VarId {
    VarId(a.vars.iter().position(|v| v.name == name).expect(name) as u32)
}

/// The accesses of `name` with their colour classes, and figure options
/// carrying the class names and the pattern labels, as the shell makes them.
fn annotated(
    a: &Analysis,
    name: &str,
    mode: ColourMode,
    dir: &std::path::Path,
) -> (polars::prelude::DataFrame, FigureOptions) {
    let rows = mapvis::filter::accesses_of(a, var_row(a, name)).unwrap();
    let (rows, classes) = with_classes(a, &rows, mode, &l1_4k()).unwrap();
    let mut o = vis_common::options(dir);
    o.annotations.classes = classes.map(|c| ClassNames {
        title: c.title,
        labels: c.labels,
        sparse: false,
    });
    o.annotations.patterns = Some(pattern_table(a).unwrap());
    (rows, o)
}

/// Points per trace name of one figure, and the trace objects by name.
fn points_by_name(fig: &Value) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for t in fig["data"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap_or("").to_string();
        *out.entry(name).or_default() += t["x"].as_array().unwrap().len();
    }
    out
}

/// Accesses per class of an aggregated figure, from each group's class
/// counts (its last customdata column, `L1 hit 7, miss to memory 1`):
/// groups mix classes.
fn counts_by_name(fig: &Value) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for t in fig["data"].as_array().unwrap() {
        for row in t["customdata"].as_array().unwrap() {
            let mix = row.as_array().unwrap().last().unwrap().as_str().unwrap();
            for part in mix.split(", ") {
                let (name, n) = part.rsplit_once(' ').unwrap();
                *out.entry(name.to_string()).or_default() += n.parse::<u64>().unwrap();
            }
        }
    }
    out
}

fn expect(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn hit_mode_colours_one_miss_and_seven_hits_per_line_of_a_sweep() {
    let (d, a) = analysed("tests/c/loc_small.c", &[]);
    let (rows, o) = annotated(&a, "sweep", ColourMode::Hit, d.path());
    let r = vis::complete_memory_access_pattern(&rows, &a.variables, &a.lines, &o).unwrap();
    let figs = vis_common::figures(&r.html);
    // 4096 doubles = 512 lines: the first access of each line misses, the
    // other 7 hit, in both views.
    let want: BTreeMap<String, usize> = [
        ("L1 hit".to_string(), 3584),
        ("miss to memory".to_string(), 512),
    ]
    .into();
    assert_eq!(points_by_name(&figs[0]), want);
    assert_eq!(points_by_name(&figs[1]), want);
    // Every miss is at the start of a line.
    for t in figs[1]["data"].as_array().unwrap() {
        if t["name"] == "miss to memory" {
            for y in vis_common::nums(&t["y"]) {
                assert_eq!(y as u64 % 64, 0, "a miss inside a line at {y}");
            }
        }
        // The hover names the class and the pattern label.
        assert!(t["hovertemplate"]
            .as_str()
            .unwrap()
            .contains(t["name"].as_str().unwrap()));
        assert_eq!(
            t["customdata"][0][8], "unit stride",
            "{}",
            t["customdata"][0]
        );
    }
    // The legend has one entry per class.
    let legend: Vec<&str> = figs[1]["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["showlegend"] != false)
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(legend, ["L1 hit", "miss to memory"]);
    // The data file names each access' class.
    let csv = std::fs::read_to_string(&r.data_csv[0]).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",class"));
    assert_eq!(
        csv.lines()
            .filter(|l| l.ends_with(",miss to memory"))
            .count(),
        512
    );

    // Above the point budget each group counts its accesses per class.
    let mut small = o.clone();
    small.point_budget = 50;
    let r = vis::complete_memory_access_pattern(&rows, &a.variables, &a.lines, &small).unwrap();
    assert!(r.aggregated.is_some());
    let figs = vis_common::figures(&r.html);
    let want = expect(&[("L1 hit", 3584), ("miss to memory", 512)]);
    assert_eq!(counts_by_name(&figs[0]), want);
    assert_eq!(counts_by_name(&figs[1]), want);
}

#[test]
fn hit_mode_colours_every_access_of_a_column_walk_a_miss() {
    let (d, a) = analysed("tests/c/loc_small.c", &[]);
    let (rows, o) = annotated(&a, "grid", ColourMode::Hit, d.path());
    let r = vis::array_2d(
        vis::Array2d {
            acc: &rows,
            vars: &a.variables,
            lines: &a.lines,
            var: var_row(&a, "grid"),
            cols: 64,
            type_bytes: 8,
        },
        &o,
    )
    .unwrap();
    let figs = vis_common::figures(&r.html);
    // The 64 rows are 512 bytes apart: a column's 64 lines fall in one set
    // of 8 ways, so all 4096 accesses miss the 4 KiB L1.
    let want: BTreeMap<String, usize> = [("miss to memory".to_string(), 4096)].into();
    assert_eq!(points_by_name(&figs[0]), want);
    let t = &figs[0]["data"][0];
    let label = t["customdata"][0][6].as_str().unwrap();
    assert!(
        label.starts_with("column-wise: stride 64 elements"),
        "{label}"
    );
    // Grouped above the budget, still all misses.
    let mut small = o.clone();
    small.point_budget = 40;
    let r = vis::array_2d(
        vis::Array2d {
            acc: &rows,
            vars: &a.variables,
            lines: &a.lines,
            var: var_row(&a, "grid"),
            cols: 64,
            type_bytes: 8,
        },
        &small,
    )
    .unwrap();
    let figs = vis_common::figures(&r.html);
    assert_eq!(
        counts_by_name(&figs[0]),
        expect(&[("miss to memory", 4096)])
    );
    // The 3D figure of the same accesses (64 planes of 8 x 8) agrees.
    let r = vis::array_3d(
        vis::Array3d {
            acc: &rows,
            vars: &a.variables,
            lines: &a.lines,
            var: var_row(&a, "grid"),
            cols: 8,
            depth: 8,
            type_bytes: 8,
        },
        &o,
    )
    .unwrap();
    let figs = vis_common::figures(&r.html);
    assert_eq!(points_by_name(&figs[0]), want);
}

#[test]
fn reuse_mode_separates_first_touches_from_the_second_sweep() {
    let (d, a) = analysed("tests/c/loc_twice.c", &[]);
    let (rows, o) = annotated(&a, "twice", ColourMode::Reuse, d.path());
    let r = vis::array_2d(
        vis::Array2d {
            acc: &rows,
            vars: &a.variables,
            lines: &a.lines,
            var: var_row(&a, "twice"),
            cols: 32,
            type_bytes: 8,
        },
        &o,
    )
    .unwrap();
    let figs = vis_common::figures(&r.html);
    let got = points_by_name(&figs[0]);
    // 128 lines: the first sweep touches each for the first time once; the
    // second sweep's first access to a line comes after the other 127 lines
    // of the array and a few stack lines (i, sum): 128 to 255 lines.
    assert_eq!(got["first touch"], 128, "{got:?}");
    assert_eq!(got["reuse 128–255 lines"], 128, "{got:?}");
    // The other 7 accesses of each line, in each sweep, follow only the
    // loop's stack lines: fewer than 4 distinct lines.
    let near: usize = ["reuse 0 lines", "reuse 1 line", "reuse 2–3 lines"]
        .iter()
        .map(|k| got.get(*k).copied().unwrap_or(0))
        .sum();
    assert_eq!(near, 2 * 1024 - 256, "{got:?}");
    assert_eq!(got.values().sum::<usize>(), 2048, "{got:?}");
    // The second sweep's line starts sit at the first element of each line.
    let far = figs[0]["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "reuse 128–255 lines")
        .unwrap();
    for cd in far["customdata"].as_array().unwrap() {
        assert_eq!(cd[8].as_u64().unwrap() % 8, 0, "{cd}");
    }
}

#[test]
fn the_sharing_page_shows_each_threads_bytes_of_the_false_shared_line() {
    let (d, a) = analysed("tests/c/loc_share.c", &["-pthread"]);
    let lines: Vec<report::SharedLine> = report::sharing_stats(
        &a,
        MemKind::Global,
        64,
        mapvis::filter::stats::Grouping::BySite,
    )
    .unwrap()
    .into_iter()
    .filter(|l| l.variables.iter().any(|v| v == "hits"))
    .collect();
    assert_eq!(lines.len(), 1);
    let drawn: Vec<vis::SharedBytes> = lines
        .iter()
        .map(|l| vis::SharedBytes {
            addr: l.addr,
            line: 64,
            kind: l.kind,
            transfers: l.transfers,
            threads: l.masks.clone(),
            byte_names: l.byte_names.clone(),
            variables: l.variables.clone(),
        })
        .collect();
    let page = vis::sharing_figure(&d.path().join("figures"), &drawn, &[], "").unwrap();
    let figs = vis_common::figures(&page);
    assert_eq!(figs.len(), 1);
    // hits.a++ and hits.b++ are modifies: each thread read and wrote its
    // own 8 bytes, and nothing else of the line.
    let traces = figs[0]["data"].as_array().unwrap();
    assert_eq!(traces.len(), 1, "{traces:?}");
    assert_eq!(traces[0]["name"], "read and written");
    let mut per_thread: BTreeMap<u64, Vec<(u64, String)>> = BTreeMap::new();
    for cd in traces[0]["customdata"].as_array().unwrap() {
        per_thread
            .entry(cd[1].as_u64().unwrap())
            .or_default()
            .push((cd[0].as_u64().unwrap(), cd[2].as_str().unwrap().to_string()));
    }
    let mut got: Vec<Vec<(u64, String)>> = per_thread.into_values().collect();
    got.sort();
    let bytes = |lo: u64, name: &str| {
        (lo..lo + 8)
            .map(|b| (b, name.to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(got, vec![bytes(0, "hits.a"), bytes(8, "hits.b")]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("false sharing"), "the heading names the kind");
}
