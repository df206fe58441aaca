//! Fuzzing, as the trace reader is fuzzed: any shape given to the figure
//! commands is drawn or refused, quickly and without a panic, and the
//! outcome is the one worked out by hand from the shape and the 256
//! stored ints (the oracle is arithmetic on the shape, not mapvis): the
//! refusal names the wrong value, and a drawn figure holds every element
//! touch; any variable name in a Gleipnir trace is analysed, tabulated and
//! drawn without a panic.
#[path = "vis_common/mod.rs"]
mod vis_common;

use std::time::{Duration, Instant};

use mapvis::filter::{stats, MemKind, VarId};
use mapvis::trace::naming::ProgramNamer;
use mapvis::vis::{array_2d, array_3d, complete_memory_access_pattern, Array2d, Array3d};
use proptest::prelude::*;
use vis_common::*;

const BASE: u64 = 0x4a3_8000;

/// Dimensions from every range that matters: small, around the block's
/// size, powers of two up to 2^63 and the extremes.
fn dim() -> impl Strategy<Value = u64> {
    prop_oneof![
        1u64..300,
        (0u32..64).prop_map(|k| 1u64 << k),
        (0u32..64).prop_map(|k| (1u64 << k).wrapping_sub(1).max(1)),
        Just(u64::MAX),
        any::<u64>(),
    ]
}

/// What drawing the 256 stored ints of [`BASE`] (a 1024-byte block) with
/// inner dimensions `inner` (columns, and depth in 3D) of `tb`-byte
/// elements must give, worked out from the shape alone: `Err(words)` when
/// it must be refused, the words the reason must contain (the value that
/// is wrong), or `Ok(touches)`, the element touches the figure must draw:
/// a 4-byte store at byte 4e touches elements 4e / tb to (4e + 3) / tb.
fn expected(inner: &[u64], tb: u64) -> Result<u64, String> {
    const SIZE: u64 = 1024;
    if tb == 0 {
        return Err("The element size of `arr` is 0 bytes".into());
    }
    if inner.contains(&0) {
        return Err("An array dimension of `arr` is 0".into());
    }
    let elements = SIZE.div_ceil(tb);
    let per_row = inner[0] as u128 * inner.get(1).copied().unwrap_or(1) as u128;
    let fits = per_row <= elements as u128 && per_row * tb as u128 <= u64::MAX as u128;
    if !fits {
        let shape = match inner {
            [c] => format!("{c} columns"),
            [c, d] => format!("{c} columns x depth {d}"),
            _ => unreachable!(),
        };
        return Err(format!(
            "`arr` cannot be drawn with {shape}: its block of {SIZE} bytes holds {elements} elements of {tb} bytes"
        ));
    }
    Ok((0..256u64).map(|e| (4 * e + 3) / tb - 4 * e / tb + 1).sum())
}

/// Checks a figure's outcome against [`expected`]: the same refusal, or a
/// page whose scatter holds `touches` points (never 0: every int was
/// stored) and whose access-count heatmaps (one per plane in 3D) add up
/// to `touches`.
fn outcome_is(
    got: Result<mapvis::vis::FigureReport, mapvis::vis::VisError>,
    want: Result<u64, String>,
    what: &str,
    cols: u64,
    depth: u64,
    tb: u64,
) -> Result<(), TestCaseError> {
    let case = format!("{what} cols {cols} depth {depth} type_bytes {tb}");
    match (got, want) {
        (Err(e), Err(words)) => {
            let e = e.to_string();
            prop_assert!(
                e.contains(&words),
                "{case}: refused with `{e}`, not `{words}`"
            );
        }
        (Ok(r), Ok(touches)) => {
            prop_assert!(touches >= 256);
            prop_assert_eq!(r.points as u64, touches, "{}: points drawn", case);
            let figs = figures(&r.html);
            let counts: f64 = figs
                .iter()
                .flat_map(|f| f["data"].as_array().unwrap().iter())
                .filter(|t| {
                    t["type"] == "heatmap"
                        && t["hovertemplate"]
                            .as_str()
                            .is_some_and(|h| h.contains("<br>accesses %{z"))
                })
                .flat_map(|t| grid(&t["z"]).into_iter().flatten())
                .map(|c| c.unwrap_or(0.0))
                .sum();
            prop_assert_eq!(counts, touches as f64, "{}: accesses in the heatmaps", case);
        }
        (Err(e), Ok(touches)) => {
            prop_assert!(
                false,
                "{case}: refused (`{e}`) but {touches} touches must be drawn"
            )
        }
        (Ok(r), Err(words)) => prop_assert!(
            false,
            "{case}: drew {} points but must be refused: `{words}`",
            r.points
        ),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// 2D and 3D figures of a 256-int array (1024 bytes, each int stored
    /// once): every shape ends, within a few seconds, in exactly the
    /// outcome [`expected`] works out from the shape alone: a refusal
    /// naming the wrong value, or a page whose scatter draws every element
    /// touch and whose access-count heatmaps add up to the same number.
    #[test]
    fn any_array_shape_is_drawn_or_refused(cols in dim(), depth in dim(), tb in dim()) {
        let dir = tempfile::tempdir().unwrap();
        let o = options(dir.path());
        let order: Vec<u64> = (0..256).collect();
        let acc = acc_df(&fill(BASE, &order));
        let vars = vars_df(&[("arr", BASE, 1024)]);
        let started = Instant::now();
        let got = array_2d(Array2d { acc: &acc, vars: &vars, lines: &lines_df(), var: VarId(0), cols, type_bytes: tb }, &o);
        outcome_is(got, expected(&[cols], tb), "2D", cols, depth, tb)?;
        let got = array_3d(Array3d { acc: &acc, vars: &vars, lines: &lines_df(), var: VarId(0), cols, depth, type_bytes: tb }, &o);
        outcome_is(got, expected(&[cols, depth], tb), "3D", cols, depth, tb)?;
        prop_assert!(started.elapsed() < Duration::from_secs(20));
    }

    /// Gleipnir names of any characters and lengths up to 70 000, at any
    /// address: analysed, tabulated and drawn without a panic, and the two
    /// accesses of the trace (an 8-byte store and an 8-byte load, by
    /// hand) are counted, tabulated and drawn: 2 accesses, 8 bytes each
    /// way, 2 points.
    #[test]
    fn any_gleipnir_name_is_analysed(
        name in prop_oneof!["[^ \n\r]{1,40}", (1usize..70_000).prop_map(|n| "v".repeat(n))],
        addr in prop_oneof![any::<u64>(), Just(u64::MAX), Just(u64::MAX - 7)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("g.txt");
        std::fs::write(
            &trace,
            format!("X START 0:1 at 0\nS {addr:x} 8 1 S LV {name} \nL {addr:x} 8 1 S LV {name} \n"),
        )
        .unwrap();
        let mut namer = ProgramNamer::new(None, &[]);
        let a = mapvis::filter::analyse_gleipnir(&trace, &mut namer).unwrap();
        // By hand: one 8-byte store and one 8-byte load, both kept and
        // drawn (0 accesses is a failure: the trace holds two).
        prop_assert_eq!(a.summary.accesses, 2);
        let df = stats::per_variable(&a, MemKind::All).unwrap();
        let total = |c: &str| -> u64 { df.column(c).unwrap().u64().unwrap().into_no_null_iter().sum() };
        prop_assert_eq!((total("load_bytes"), total("store_bytes")), (8, 8));
        let sel = mapvis::filter::select(&a, MemKind::All).unwrap();
        let rows = mapvis::filter::rows(&a, &sel).unwrap();
        prop_assert_eq!(rows.height(), 2);
        let o = options(dir.path());
        let r = complete_memory_access_pattern(&rows, &a.variables, &a.lines, &o).unwrap();
        prop_assert_eq!(r.points, 2);
    }
}

/// The three-line Gleipnir trace at the top of memory: `big` is
/// the 16 bytes from 2^64 - 16 to 2^64 - 1, and the complete, 2D and 3D
/// figures draw all of them, with no warning, well within a minute (the
/// work runs on its own thread, so a hang fails the test instead of
/// stalling it). Before, the variable's end was kept exclusive and
/// saturated at 2^64 - 1: `big` lost its last byte (15 bytes), and every
/// figure warned of a partial row and an access straddling its edge.
#[test]
fn a_gleipnir_trace_at_the_top_of_memory_is_drawn_whole() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("top.txt");
        std::fs::write(
            &trace,
            "X START 0:1 at 0\nL fffffffffffffff0 8 1 S LV big \nS fffffffffffffff8 8 1 S LV big \n",
        )
        .unwrap();
        let mut namer = ProgramNamer::new(None, &[]);
        let a = mapvis::filter::analyse_gleipnir(&trace, &mut namer).unwrap();
        let var = VarId(a.vars.iter().position(|v| v.name == "big").unwrap() as u32);
        let v = &a.vars[var.index()];
        let span = (v.base, v.size);
        let o = options(dir.path());
        let sel = mapvis::filter::select(&a, MemKind::All).unwrap();
        let rows = mapvis::filter::rows(&a, &sel).unwrap();
        let all = complete_memory_access_pattern(&rows, &a.variables, &a.lines, &o).unwrap();
        let acc = mapvis::filter::accesses_of(&a, var).unwrap();
        // 2 x 8-byte elements; 16 one-byte elements in one column; 4 planes
        // of 2 x 2 bytes.
        let figs = [
            array_2d(
                Array2d {
                    acc: &acc,
                    vars: &a.variables,
                    lines: &a.lines,
                    var,
                    cols: 2,
                    type_bytes: 8,
                },
                &o,
            )
            .unwrap(),
            array_2d(
                Array2d {
                    acc: &acc,
                    vars: &a.variables,
                    lines: &a.lines,
                    var,
                    cols: 1,
                    type_bytes: 1,
                },
                &o,
            )
            .unwrap(),
            array_3d(
                Array3d {
                    acc: &acc,
                    vars: &a.variables,
                    lines: &a.lines,
                    var,
                    cols: 2,
                    depth: 2,
                    type_bytes: 1,
                },
                &o,
            )
            .unwrap(),
        ];
        let drawn: Vec<(usize, Vec<String>)> = figs
            .iter()
            .map(|r| (r.points, r.warnings.clone()))
            .collect();
        tx.send((span, all.points, drawn)).unwrap();
    });
    let (span, all, drawn) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the figures of a trace at the top of memory finish");
    assert_eq!(span, (u64::MAX - 15, 16));
    assert_eq!(all, 2);
    // The second 2D figure replaces the first in mapvisual's file, and
    // says so.
    let replaced = "2d_memory_access_pattern_big.html showed `1 x 2 array of 8-byte elements` \
                    (2d_memory_access_pattern big 2 8); it now shows this shape. Figures are \
                    named by variable alone, as in mapvisual: rename the earlier file to keep \
                    both.";
    assert_eq!(
        drawn,
        vec![(2, vec![]), (16, vec![replaced.to_string()]), (16, vec![])],
        "points and warnings of the 2D and 3D figures"
    );
}

/// A Gleipnir heap block of 64 bytes ending at 2^64 - 1: its three
/// accesses (8 bytes at its start, 8 bytes at its end, its very last byte)
/// are named after it, not `<other>`, and a 2D figure of one-byte elements
/// draws 8 + 8 + 1 = 17 touches. Before, the block's end overflowed to 0
/// and no access was found inside it.
#[test]
fn a_gleipnir_heap_block_at_the_top_of_memory_names_its_accesses() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("heap.txt");
        std::fs::write(
            &trace,
            "X START 0:1 at 0\nX 1 MALLOC ffffffffffffffc0 64 prog_c_3 0\n\
             S ffffffffffffffc0 8 1 H H-0 prog_c_3.0 \nS fffffffffffffff8 8 1 H H-0 prog_c_3.56 \n\
             L ffffffffffffffff 1 1 H H-0 prog_c_3.63 \n",
        )
        .unwrap();
        let mut namer = ProgramNamer::new(None, &[]);
        let a = mapvis::filter::analyse_gleipnir(&trace, &mut namer).unwrap();
        let df = stats::per_variable(&a, MemKind::All).unwrap();
        let names: Vec<String> = df
            .column("variable")
            .unwrap()
            .str()
            .unwrap()
            .into_no_null_iter()
            .map(String::from)
            .collect();
        let var = VarId(a.vars.iter().position(|v| v.name == "prog.c:3").unwrap() as u32);
        let acc = mapvis::filter::accesses_of(&a, var).unwrap();
        let o = options(dir.path());
        let r = array_2d(
            Array2d {
                acc: &acc,
                vars: &a.variables,
                lines: &a.lines,
                var,
                cols: 8,
                type_bytes: 1,
            },
            &o,
        )
        .unwrap();
        tx.send((names, acc.height(), r.points, r.warnings))
            .unwrap();
    });
    let got = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the analysis and figure of a block at the top of memory finish");
    assert_eq!(got, (vec!["prog.c:3".to_string()], 3, 17, vec![]));
}
