//! Figures of a selection far above the point budget, streamed from an
//! access list spilled to disk in small files (memory budget 0), draw the
//! same figure data as the figures of the gathered table, with exact
//! counts worked out by hand, and never hold the selected accesses: the
//! heap's peak while drawing stays a fraction of what gathering them takes.
mod common;
#[path = "vis_common/mod.rs"]
mod vis_common;

use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use mapvis::filter::batches::SelectionBatches;
use mapvis::filter::store::Layout;
use mapvis::filter::{self as f, Keep};
use mapvis::vis::{self, ArrayLayout};
use serde_json::Value;
use vis_common::*;

/// The system allocator, counting the bytes live and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counters only observe the sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: AllocLayout) -> *mut u8 {
        let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller's layout, as GlobalAlloc requires.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: AllocLayout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        // SAFETY: `p` came from `alloc` with this layout.
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The matrix's side and the program's rounds (tests/c/vis_stream.c).
const M: u64 = 64;
const R: u64 = 64;

/// Sum of customdata column `k` over the points of trace `t`.
fn cd_sum(t: &Value, k: usize) -> u64 {
    t["customdata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c[k].as_u64().unwrap())
        .sum()
}

fn strip(mut figs: Vec<Value>) -> Vec<Value> {
    figs.iter_mut().for_each(|f| f["config"] = Value::Null);
    figs
}

#[test]
fn figures_stream_a_spilled_selection_in_bounded_memory() {
    let (dir, exe, _o, _evs, _end) = trace("tests/c/vis_stream.c", &[], &[]);
    let ds = dir.path().join("ds");
    let small = Layout {
        window: 1 << 14,
        row_group: 1 << 12,
    };
    let keep = Keep {
        dataset: Some(&ds),
        memory_budget: 0,
        layout: small,
        lookup_rows: usize::MAX,
    };
    let disk = analyse_trace(dir.path(), &exe, &keep);
    let (var, sel) = only_var(&disk, "mat");
    let n = 2 * R * M * M;
    assert_eq!(sel.count, n, "R x 4096 stores and as many loads of mat");
    // A small part of the list: the first pass writes it aside for the others.
    assert!(disk.accesses.len() > 4 * n && disk.accesses.windows().len() > 4);

    // Streamed from the dataset, budget 100: 5243 accesses per point.
    // Each page in a folder of its own: a second page compares the folder's
    // plotly.min.js (3.6 MB) with its own, which is no cost of the accesses.
    let mut o = options(&dir.path().join("stream"));
    o.point_budget = 100;
    let mut oa = o.clone();
    o.figures_dir = dir.path().join("stream/c");
    oa.figures_dir = dir.path().join("stream/a");
    let src = SelectionBatches::plain(&disk, sel.clone());
    let grid2d = ArrayLayout::Grid2d {
        cols: M,
        type_bytes: 4,
    };
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let c = vis::complete_pattern_of(&src, &disk.variables, &disk.lines, &o).unwrap();
    let complete_peak = PEAK.load(Ordering::Relaxed) - base;
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let a2 = vis::array_pattern_of(&src, (&disk.variables, &disk.lines), var, grid2d, &oa).unwrap();
    let streamed_peak = complete_peak.max(PEAK.load(Ordering::Relaxed) - base);

    // Gathered from the analysis in memory, as the figures were drawn before.
    let mem = analyse_trace(dir.path(), &exe, &Keep::MEMORY);
    let (var_m, sel_m) = only_var(&mem, "mat");
    assert_eq!(var_m, var);
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let rows = f::rows(&mem, &sel_m).unwrap();
    let gathered = PEAK.load(Ordering::Relaxed) - base;
    let mut og = options(&dir.path().join("gathered"));
    og.point_budget = 100;
    let mut oga = og.clone();
    og.figures_dir = dir.path().join("gathered/c");
    oga.figures_dir = dir.path().join("gathered/a");
    let cg = vis::complete_memory_access_pattern(&rows, &mem.variables, &mem.lines, &og).unwrap();
    let a2g = vis::array_2d(
        vis::Array2d {
            acc: &rows,
            vars: &mem.variables,
            lines: &mem.lines,
            var,
            cols: M,
            type_bytes: 4,
        },
        &oga,
    )
    .unwrap();

    // The same figure data and the same CSV, row for row.
    assert_eq!(strip(figures(&c.html)), strip(figures(&cg.html)));
    assert_eq!(strip(figures(&a2.html)), strip(figures(&a2g.html)));
    assert_eq!(c.aggregated, cg.aggregated);
    for (s, g) in c
        .data_csv
        .iter()
        .chain(&a2.data_csv)
        .zip(cg.data_csv.iter().chain(&a2g.data_csv))
    {
        let (s, g) = (std::fs::read(s).unwrap(), std::fs::read(g).unwrap());
        assert!(s == g, "the CSV files differ");
    }

    // Exact counts by hand. The complete pattern's 3D view: one trace of
    // groups holding every access; loads and stores R x 4096 each; every
    // element accessed 2R times; addresses over the whole matrix.
    assert!(c.points <= 100 && c.aggregated.is_some());
    let figs = figures(&c.html);
    let t3 = &figs[0]["data"][0];
    assert_eq!(cd_sum(t3, 0), n);
    assert_eq!(cd_sum(t3, 7), R * M * M, "loads");
    assert_eq!(cd_sum(t3, 8), R * M * M, "stores");
    assert_eq!(cd_sum(t3, 9), 0, "modifies");
    assert_eq!(cd_max(t3, 6), 2 * R, "highest occurrence");
    // A group's highest address: its lowest (the z coordinate) plus the
    // span its customdata keeps.
    let mat = &disk.vars[var.index()];
    let highest = nums(&t3["z"])
        .iter()
        .zip(t3["customdata"].as_array().unwrap())
        .map(|(z, c)| *z as u64 + c[4].as_u64().unwrap())
        .max()
        .unwrap();
    assert_eq!(highest, mat.base + 4 * (M * M - 1), "last element");
    // The 2D view: every access in one group of its time bin.
    let sum2: u64 = figs[1]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| cd_sum(t, 0))
        .sum();
    assert_eq!(sum2, n);
    // The array: the scatter holds every touch; each heatmap block of
    // f x f elements counts 2R per element.
    let figs = figures(&a2.html);
    assert_eq!(cd_sum(&figs[0]["data"][0], 0), n);
    let z = grid(&figs[1]["data"][0]["z"]);
    let f = M.div_ceil(z.len() as u64);
    for (bi, row) in z.iter().enumerate() {
        for (bj, cell) in row.iter().enumerate() {
            let h = f.min(M - bi as u64 * f);
            let w = f.min(M - bj as u64 * f);
            assert_eq!(*cell, Some((h * w * 2 * R) as f64), "block ({bi}, {bj})");
        }
    }

    // Bounded: the gathered rows alone take 35 bytes per access; drawing
    // either figure from the stream peaks well below that: a row group of
    // the list, a counter per element, the groups and cells, the CSV's
    // buffer, and one file's worth of the selection being written aside.
    assert!(gathered as u64 >= 35 * n, "gathering took {gathered} bytes");
    assert!(
        streamed_peak * 4 < gathered,
        "streaming peaked at {streamed_peak} bytes, gathering {gathered}"
    );
}
