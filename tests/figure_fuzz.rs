//! Fuzzing, as the trace reader is fuzzed: any shape given to the figure
//! commands is drawn or refused with a message, quickly and without a
//! panic; any variable name in a Gleipnir trace is analysed, tabulated and
//! drawn without a panic.
#[path = "vis_common/mod.rs"]
mod vis_common;

use std::time::{Duration, Instant};

use mapvis::filter::{analysis, stats, MemKind};
use mapvis::trace::program::ProgramNamer;
use mapvis::vis::{array_2d, array_3d, complete_memory_access_pattern};
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// 2D and 3D figures of a 256-int array: every shape ends in a page or
    /// a refusal within a few seconds.
    #[test]
    fn any_array_shape_is_drawn_or_refused(cols in dim(), depth in dim(), tb in dim()) {
        let dir = tempfile::tempdir().unwrap();
        let o = options(dir.path());
        let order: Vec<u64> = (0..256).collect();
        let acc = acc_df(&fill(BASE, &order));
        let vars = vars_df(&[("arr", BASE, 1024)]);
        let started = Instant::now();
        match array_2d(&acc, &vars, &lines_df(), 0, cols, tb, &o) {
            Ok(r) => prop_assert!(r.html.is_file()),
            Err(e) => prop_assert!(e.to_string().ends_with('.'), "{}", e),
        }
        match array_3d(&acc, &vars, &lines_df(), 0, cols, depth, tb, &o) {
            Ok(r) => prop_assert!(r.html.is_file()),
            Err(e) => prop_assert!(e.to_string().ends_with('.'), "{}", e),
        }
        prop_assert!(started.elapsed() < Duration::from_secs(20));
    }

    /// Gleipnir names of any characters and lengths up to 70 000, at any
    /// address: analysed, tabulated and drawn without a panic.
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
        let a = analysis::analyse_gleipnir(&trace, &mut namer).unwrap();
        prop_assert!(a.summary.accesses <= 2);
        stats::per_variable(&a, MemKind::All).unwrap();
        let sel = mapvis::filter::select(&a, MemKind::All).unwrap();
        let rows = mapvis::filter::rows(&a, &sel).unwrap();
        let o = options(dir.path());
        if rows.height() > 0 {
            complete_memory_access_pattern(&rows, &a.variables, &a.lines, &o).unwrap();
        }
    }
}
