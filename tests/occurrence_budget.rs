//! A figure numbers its accesses by location (their occurrence) within a
//! quarter of the memory limit, and refuses the accesses of more locations
//! than that counts: the bound, and the refusal's message, checked against
//! the program's own array size.
mod common;
#[path = "vis_common/mod.rs"]
mod vis_common;

use common::*;
use mapvis::filter::batches::SelectionBatches;
use mapvis::filter::{self as f, Keep};
use mapvis::vis;
use vis_common::*;

/// The matrix's side and the program's rounds (tests/c/vis_stream.c).
const M: u64 = 64;
const R: u64 = 64;

/// A figure numbers its accesses by location (their occurrence) within a
/// quarter of the memory limit, and refuses, naming the cause, the
/// accesses of more locations than that counts: never an occurrence it
/// could not count. `mat` is 64 x 64 ints, so its direct counters take
/// 4096 x 2 bytes: a limit of four times that draws it, with every element
/// accessed 2R times as the program does; one byte less sends it to the
/// hash map, which holds 127 of its 4096 locations, and the figure and the
/// gathered rows are refused.
#[test]
fn a_figure_past_its_occurrence_budget_is_refused() {
    let (dir, exe, _o, _evs, _end) = trace("tests/c/vis_stream.c", &[], &[]);
    let mem = analyse_trace(dir.path(), &exe, &Keep::MEMORY);
    let (_, sel) = only_var(&mem, "mat");
    let counters = 2 * M * M;

    let fits = sel.clone().within(4 * counters);
    let o = options(&dir.path().join("fits"));
    let src = SelectionBatches::plain(&mem, fits.clone());
    let c = vis::complete_pattern_of(&src, &mem.variables, &mem.lines, &o).unwrap();
    assert_eq!(
        cd_max(&figures(&c.html)[0]["data"][0], 6),
        2 * R,
        "highest occurrence"
    );
    assert_eq!(f::rows(&mem, &fits).unwrap().height() as u64, sel.count);

    let short = sel.within(4 * (counters - 1));
    let o = options(&dir.path().join("short"));
    let src = SelectionBatches::plain(&mem, short.clone());
    let e = vis::complete_pattern_of(&src, &mem.variables, &mem.lines, &o)
        .expect_err("refused")
        .to_string();
    assert!(e.contains("more distinct locations"), "{e}");
    assert!(e.contains("set_memory_limit"), "{e}");
    let e = f::rows(&mem, &short).expect_err("refused").to_string();
    assert!(e.contains("more distinct locations"), "{e}");
    let pages = std::fs::read_dir(dir.path().join("short/figures"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension() == Some("html".as_ref()))
                .count()
        })
        .unwrap_or(0);
    assert_eq!(pages, 0, "no page for a refused figure");
}
