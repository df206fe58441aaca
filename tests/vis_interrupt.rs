//! Ctrl-C stops a figure that is being drawn: the drawing loops check the
//! program's cancel flag (`mapvis::cancel`, which the shell's SIGINT
//! handler sets), the command ends with a message, and no page is
//! written. (A test binary of its own: the flag is process-wide.)
#[path = "vis_common/mod.rs"]
mod vis_common;

use mapvis::cancel;
use mapvis::filter::VarId;
use mapvis::vis::{array_2d, complete_memory_access_pattern, Array2d, VisError};
use vis_common::*;

#[test]
fn an_interrupt_stops_the_figure_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    let order: Vec<u64> = (0..10_000).collect();
    let acc = acc_df(&fill(0x10000, &order));
    let vars = vars_df(&[("big", 0x10000, 40_000)]);
    cancel::request();
    let e = draw_2d(&acc, &vars, VarId(0), 100, 4, &o).unwrap_err();
    assert!(matches!(e, VisError::Interrupted), "{e}");
    assert!(e.to_string().contains("Ctrl-C"));
    let e = complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap_err();
    assert!(matches!(e, VisError::Interrupted), "{e}");
    assert!(!o
        .figures_dir
        .join("2d_memory_access_pattern_big.html")
        .exists());
    cancel::clear();
    assert!(array_2d(
        Array2d {
            acc: &acc,
            vars: &vars,
            lines: &lines_df(),
            var: VarId(0),
            cols: 100,
            type_bytes: 4
        },
        &o
    )
    .is_ok());
}
