//! Issue 2's acceptance: the demo script, run by the real binary in a fresh
//! working folder, names the array, writes the figure with a local plotly.js,
//! and draws exactly the array's accesses.
mod common;

use std::process::Command;

#[test]
fn the_demo_script_traces_names_and_draws_the_array() {
    let work = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mapvis"))
        .arg(common::root().join("scripts/demo.tcl"))
        .current_dir(work.path())
        .env("HOME", work.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "demo failed:\n{stdout}\n{stderr}");
    // memory_stats names the heap array by its source variable: 256 stores
    // row by row, then 256 loads and 256 stores (or modifies) column by column.
    let row = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some("arr"))
        .unwrap_or_else(|| panic!("no arr row in:\n{stdout}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[1], "H");
    assert_eq!(cells[2], "768", "{row}");
    let html = std::fs::read_to_string(
        work.path()
            .join("figures/complete_memory_access_pattern.html"),
    )
    .unwrap();
    assert!(
        html.contains("src=\"plotly.min.js\""),
        "plotly.js is referenced relatively"
    );
    assert!(!html.contains("cdn."), "no CDN");
    assert!(work.path().join("figures/plotly.min.js").is_file());
    // Hover text names elements by the shape inferred from
    // `malloc(ROWS * COLS * sizeof(int))`.
    assert!(
        html.contains("arr[15][15]") && html.contains("arr[0][0]"),
        "element names in the hover"
    );
    // The saved figure data has one row per drawn point.
    let csv = std::fs::read_to_string(
        work.path()
            .join("visinfo/complete_memory_access_pattern.csv"),
    )
    .unwrap();
    assert_eq!(csv.lines().count() - 1, 768);
    assert!(
        csv.lines().skip(1).all(|l| l.contains(",arr,")),
        "only arr is drawn in heap mode"
    );
    // The reconstruction of arr as the 16 x 16 array its statement
    // allocates: 768 element accesses, the row-major pass then the
    // column-major one, as (row, col) per access.
    let rc = std::fs::read_to_string(work.path().join("visinfo/2d_memory_access_pattern_arr.csv"))
        .unwrap();
    let cells: Vec<(u32, u32)> = rc
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[4].parse().unwrap(), f[5].parse().unwrap())
        })
        .collect();
    assert_eq!(cells.len(), 768);
    assert_eq!(
        cells[..256],
        (0..256).map(|e| (e / 16, e % 16)).collect::<Vec<_>>()[..]
    );
    // Column pass: each element is loaded and stored (or modified) in turn.
    let column: Vec<(u32, u32)> = cells[256..].to_vec();
    let mut want = Vec::new();
    for j in 0..16 {
        for i in 0..16 {
            let n = column.iter().filter(|c| **c == (i, j)).count();
            assert_eq!(n, 2, "element [{i}][{j}] in the column pass");
        }
        want.push(j);
    }
    let cols_in_order: Vec<u32> = column.chunks(32).map(|c| c[0].1).collect();
    assert_eq!(cols_in_order, want, "columns in order");
    assert!(work
        .path()
        .join("figures/2d_memory_access_pattern_arr.html")
        .is_file());
}
