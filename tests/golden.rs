//! Golden files, as addr2line keeps its `testoutput/`: the decoded dump of
//! two small traces kept in `tests/golden/`, and the data of the figures
//! drawn from a small synthetic analysis. A change in decoding or in the
//! figures then shows as a readable diff against the file.
//!
//! After a deliberate change, re-bless the files and review their diff:
//! `MAPVIS_BLESS=1 cargo test --release --test golden`.
mod vis_common;

use std::path::{Path, PathBuf};

use mapvis::filter::schema::{OP_LOAD, OP_MODIFY, OP_STORE};
use mapvis::filter::VarId;
use mapvis::vis::{array_2d, array_3d, complete_memory_access_pattern, Array2d, Array3d};
use vis_common::*;

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// Compares `got` with the golden file `name`, or writes it when blessing.
fn check(name: &str, got: &str) {
    let path = golden(name);
    if std::env::var_os("MAPVIS_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{} cannot be read ({e}); create it with MAPVIS_BLESS=1",
            path.display()
        )
    });
    if want != got {
        let diff = want
            .lines()
            .zip(got.lines())
            .enumerate()
            .find(|(_, (w, g))| w != g)
            .map(|(i, (w, g))| format!("line {}:\n  golden: {w}\n  now:    {g}", i + 1))
            .unwrap_or_else(|| {
                format!(
                    "{} lines golden, {} now",
                    want.lines().count(),
                    got.lines().count()
                )
            });
        panic!(
            "{} differs from what mapvis makes now; {diff}\nIf the change is meant, re-bless with MAPVIS_BLESS=1 and review the diff.",
            path.display()
        );
    }
}

fn dump_of(trace: &str) -> String {
    let mut out = Vec::new();
    mapvis::trace::record::dump(&golden(trace), None, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// 100 ints written between the pins (tests/c/trace_fill.c).
#[test]
fn dump_of_the_fill_trace() {
    check("fill.dump", &dump_of("fill.mvt"));
}

/// Two threads filling their own heap arrays, heap accesses only
/// (tests/c/trace_threads.c, `--heap-only=yes`).
#[test]
fn dump_of_the_threads_trace() {
    check("threads.dump", &dump_of("threads.mvt"));
}

/// The figure objects of a page, pretty-printed, one page per golden file.
fn figure_json(html: &Path) -> String {
    let figs = figures(html);
    serde_json::to_string_pretty(&figs).unwrap() + "\n"
}

/// A 4 x 5 int array `a` written row by row, then read column by column,
/// and a scalar `s` modified at each step of the column pass.
fn small_analysis() -> (polars::prelude::DataFrame, polars::prelude::DataFrame) {
    let base = 0x4a39040;
    let mut rows = Vec::new();
    let mut t = 0u64;
    for e in 0..20u64 {
        rows.push((t, OP_STORE, base + 4 * e, 4, 1, 0, 1, 1));
        t += 1;
    }
    for j in 0..5u64 {
        for i in 0..4u64 {
            rows.push((t, OP_LOAD, base + 4 * (i * 5 + j), 4, 1, 0, 2, 2));
            rows.push((t + 1, OP_MODIFY, 0x1fff000100, 8, 1, 1, 1 + (t as u32), 2));
            t += 2;
        }
    }
    let vars = vars_df_full(&[("a", "H", base, 80, 4), ("s", "S", 0x1fff000100, 8, 8)]);
    (acc_df(&rows), vars)
}

#[test]
fn figure_data_of_the_complete_pattern() {
    let dir = tempfile::tempdir().unwrap();
    let (acc, vars) = small_analysis();
    let r = complete_memory_access_pattern(&acc, &vars, &lines_df(), &options(dir.path())).unwrap();
    check("complete.json", &figure_json(&r.html));
}

#[test]
fn figure_data_of_the_complete_pattern_aggregated() {
    let dir = tempfile::tempdir().unwrap();
    let (acc, vars) = small_analysis();
    let mut o = options(dir.path());
    o.point_budget = 10;
    let r = complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    check("complete_aggregated.json", &figure_json(&r.html));
}

#[test]
fn figure_data_of_a_2d_array() {
    let dir = tempfile::tempdir().unwrap();
    let (acc, vars) = small_analysis();
    let r = array_2d(
        Array2d {
            acc: &acc,
            vars: &vars,
            lines: &lines_df(),
            var: VarId(0),
            cols: 5,
            type_bytes: 4,
        },
        &options(dir.path()),
    )
    .unwrap();
    check("array_2d.json", &figure_json(&r.html));
}

#[test]
fn figure_data_of_a_3d_array() {
    let dir = tempfile::tempdir().unwrap();
    let (acc, vars) = small_analysis();
    let r = array_3d(
        Array3d {
            acc: &acc,
            vars: &vars,
            lines: &lines_df(),
            var: VarId(0),
            cols: 2,
            depth: 2,
            type_bytes: 4,
        },
        &options(dir.path()),
    )
    .unwrap();
    check("array_3d.json", &figure_json(&r.html));
}
