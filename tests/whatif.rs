//! `what_if` against the change made by hand: each program is traced as
//! written and with its layout changed in the source (a transposed matrix,
//! an array of structures split into arrays, padded rows). `what_if` on the
//! first trace must give the misses per level that the second trace
//! measures for that variable, within 1%; the oracle is the hand-made
//! program's own `cache_stats`, not the code under test.
use std::collections::BTreeMap;
use std::path::Path;

mod common;
mod vis_common;
use common::{mapvis_script as mapvis, printed_counts as numbers};

/// Small caches, so conflicts are strong and deterministic: 64 sets of 2
/// ways in L1, 128 sets of 4 ways in L2.
const CACHES: &str =
    "set_mem_alloc G; set_cache L1 8K 2 64; set_cache L2 32K 4 64; set_cache L3 off; ";

/// Tcl printing `N KEY variable accesses misses_L1 misses_L2` per dict of
/// the list in Tcl variable `list`.
fn print_list(key: &str, list: &str) -> String {
    format!(
        "foreach d ${list} {{ puts \"N {key} [dict get $d variable] [dict get $d accesses] \
         [dict get $d misses_L1] [dict get $d misses_L2]\" }}; "
    )
}

/// Traces `prog` built with `flags` in a fresh folder and runs `tail`
/// (which may print with [`print_list`]); also prints `cache_stats` as key
/// `cs`.
fn session(prog: &str, flags: &str, tail: &str) -> (String, BTreeMap<(String, String), [u64; 3]>) {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(prog);
    std::fs::copy(&src, dir.path().join("t.c")).unwrap();
    let script = format!(
        "{CACHES} compile_exe t.c {flags}; run_gleipnir; memory_trace_analysis; \
         set cs [cache_stats quiet]; {} {tail}",
        print_list("cs", "cs")
    );
    let out = mapvis(dir.path(), &script);
    let n = numbers(&out);
    (out, n)
}

fn get(n: &BTreeMap<(String, String), [u64; 3]>, key: &str, var: &str, out: &str) -> [u64; 3] {
    *n.get(&(key.to_string(), var.to_string()))
        .unwrap_or_else(|| panic!("no {key} {var} in\n{out}"))
}

/// Predicted equals measured within 1% at each level, with the same
/// number of accesses; and the change moved the misses at all.
fn assert_close(what: &str, before: [u64; 3], predicted: [u64; 3], measured: [u64; 3]) {
    assert_eq!(predicted[0], measured[0], "{what}: accesses");
    for l in 1..3 {
        let (p, m) = (predicted[l] as f64, measured[l] as f64);
        assert!(
            (p - m).abs() <= 0.01 * m.max(1.0),
            "{what}: L{l} misses predicted {p}, measured {m} (before {before:?})"
        );
    }
    assert_ne!(
        before[1], measured[1],
        "{what}: the layout changes L1 misses"
    );
}

#[test]
fn whatif_transpose_matches_the_transposed_program() {
    let (out, n) = session(
        "wi_transpose.c",
        "",
        &format!("set w [what_if A transpose]; {}", print_list("w", "w")),
    );
    let (out2, m) = session("wi_transpose.c", "-DTRANSPOSED", "");
    let before = get(&n, "cs", "A", &out);
    let predicted = get(&n, "w", "A", &out);
    let measured = get(&m, "cs", "A", &out2);
    // 48 x 64 doubles read once each; column-wise the 48 rows of a column
    // share 8 of L1's 64 sets and every read misses.
    assert_eq!(before[0], 48 * 64);
    assert_eq!(before[1], 48 * 64, "{out}");
    assert_close("transpose", before, predicted, measured);
    assert!(out.contains("every access mapped"), "{out}");
    assert!(out.contains("per line, accesses of A"), "{out}");
}

#[test]
fn whatif_soa_matches_the_split_program() {
    let (out, n) = session(
        "wi_soa.c",
        "",
        &format!("set w [what_if p soa]; {}", print_list("w", "w")),
    );
    let (out2, m) = session("wi_soa.c", "-DSOA", "");
    let before = get(&n, "cs", "p", &out);
    let predicted = get(&n, "w", "p.x", &out);
    let measured = get(&m, "cs", "x", &out2);
    // 1024 reads of x: two per 64-byte line of structures, eight per line
    // of the array of x.
    assert_eq!(before[..2], [1024, 512], "{out}");
    assert_eq!(measured[..2], [1024, 128], "{out2}");
    assert_close("soa", before, predicted, measured);
    assert!(
        !numbers(&out).contains_key(&("w".to_string(), "p".to_string())),
        "every access of p moves to p.x: {out}"
    );
}

#[test]
fn whatif_pad_matches_the_padded_program() {
    let (out, n) = session(
        "wi_pad.c",
        "",
        &format!("set w [what_if A pad 64]; {}", print_list("w", "w")),
    );
    let (out2, m) = session("wi_pad.c", "-DCOLS=72", "");
    let before = get(&n, "cs", "A", &out);
    let predicted = get(&n, "w", "A", &out);
    let measured = get(&m, "cs", "A", &out2);
    // Rows of 512 bytes put a column's 64 lines in 8 sets of 2 ways: every
    // read misses. Rows of 576 bytes (9 lines) spread them over all 64.
    assert_eq!(before[..2], [4096, 4096], "{out}");
    assert!(measured[1] < 1024, "{out2}");
    assert_close("pad", before, predicted, measured);
    assert!(out.contains("past the highest address"), "{out}");
}

#[test]
fn whatif_rejects_what_does_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/wi_soa.c");
    std::fs::copy(&src, dir.path().join("t.c")).unwrap();
    mapvis(
        dir.path(),
        &format!("{CACHES} compile_exe t.c; run_gleipnir; memory_trace_analysis"),
    );
    for (script, says) in [
        ("what_if p skew", "skew"),
        ("what_if p pad", "is not a layout"),
        ("what_if p transpose", "2D array"),
    ] {
        let all = common::mapvis_script_fails(dir.path(), script);
        assert!(all.contains(says), "{script}: {all}");
    }
}

/// The offsets of one scatter trace of the what-if page by access time.
fn offsets_by_time(trace: &serde_json::Value) -> BTreeMap<u64, u64> {
    let (x, y) = (vis_common::nums(&trace["x"]), vis_common::nums(&trace["y"]));
    assert_eq!(x.len(), y.len());
    x.iter()
        .zip(&y)
        .map(|(t, o)| (*t as u64, *o as u64))
        .collect()
}

#[test]
fn whatif_save_draws_the_transposed_layout() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/wi_transpose.c");
    std::fs::copy(&src, dir.path().join("t.c")).unwrap();
    let script = format!(
        "{CACHES} compile_exe t.c; run_gleipnir; memory_trace_analysis; \
         set cs [cache_stats quiet]; {} set w [what_if A transpose save]; {}",
        print_list("cs", "cs"),
        print_list("w", "w")
    );
    let out = mapvis(dir.path(), &script);
    let n = numbers(&out);
    let page = dir.path().join("figures/what_if_A_transpose.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("prediction from the recorded trace, not a new trace"),
        "the page says what it is"
    );
    let figs = vis_common::figures(&page);
    let data = figs[0]["data"].as_array().unwrap();
    assert_eq!(data.len(), 2, "one view before, one after");
    assert_eq!(data[0]["name"], "before: A");
    assert_eq!(data[1]["xaxis"], "x2");
    // Every one of the 48 x 64 reads is its own point (within the budget):
    // element (i, j) at byte offset (i*64 + j)*8 moves to (j*48 + i)*8 at
    // the same time.
    let (before, after) = (offsets_by_time(&data[0]), offsets_by_time(&data[1]));
    assert_eq!(before.len(), 48 * 64);
    assert_eq!(after.len(), 48 * 64);
    for (t, o) in &before {
        let (i, j) = (o / 8 / 64, o / 8 % 64);
        assert_eq!(after[t], (j * 48 + i) * 8, "element ({i}, {j}) at time {t}");
    }
    // The second read of the column walk is A[1][0]: offset 512 before, 8
    // after.
    let second = *before.keys().nth(1).unwrap();
    assert_eq!((before[&second], after[&second]), (512, 8));
    // The bars are the misses what_if and cache_stats returned.
    let bars = figs[1]["data"].as_array().unwrap();
    let y = |k: usize| vis_common::nums(&bars[k]["y"]);
    let (cs, w) = (get(&n, "cs", "A", &out), get(&n, "w", "A", &out));
    assert_eq!(
        y(0),
        vec![cs[1] as f64, cs[2] as f64],
        "before: cache_stats"
    );
    assert_eq!(
        y(1),
        vec![w[1] as f64, w[2] as f64],
        "after: what_if's dict"
    );
    let csv = std::fs::read_to_string(dir.path().join("visinfo/what_if_A_transpose.csv")).unwrap();
    assert!(
        csv.starts_with("variable,layout,accesses,misses_L1,misses_L2,compulsory,"),
        "{csv}"
    );
    let row = |layout: &str| {
        csv.lines()
            .find(|l| l.starts_with(&format!("A,{layout},")))
            .unwrap_or_else(|| panic!("no A {layout} row in {csv}"))
            .to_string()
    };
    assert!(row("before").starts_with(&format!("A,before,{},{},{},", cs[0], cs[1], cs[2])));
    assert!(row("after").starts_with(&format!("A,after,{},{},{},", w[0], w[1], w[2])));
    // Above the point budget each view aggregates within half of it, and
    // its points still count every access.
    let out = mapvis(dir.path(), "set_point_budget 100; what_if A transpose save");
    assert!(out.contains("exceed half the point budget"), "{out}");
    let figs = vis_common::figures(&page);
    for t in figs[0]["data"].as_array().unwrap() {
        let rows = t["customdata"].as_array().unwrap();
        assert!(rows.len() <= 50, "{} points", rows.len());
        let counted: u64 = rows.iter().map(|r| r[0].as_u64().unwrap()).sum();
        assert_eq!(counted, 48 * 64, "{}", t["name"]);
    }
}

/// `what_if A interchange save` draws the nest replayed: at the times the
/// recorded column walk read A, the interchanged walk reads A row by row,
/// so sorted by time its offsets are 0, 8, 16, … over the same times; the
/// page's bars are the misses what_if returned, the whole-line walk's.
#[test]
fn whatif_save_draws_the_interchanged_nest() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/wi_transpose.c");
    std::fs::copy(&src, dir.path().join("t.c")).unwrap();
    let script = format!(
        "{CACHES} compile_exe t.c; run_gleipnir; memory_trace_analysis; \
         set w [what_if A interchange save]; {}",
        print_list("w", "w")
    );
    let out = mapvis(dir.path(), &script);
    let w = get(&numbers(&out), "w", "A", &out);
    // 48 x 64 doubles read once each, a line of 8 at a time.
    assert_eq!(w[..2], [48 * 64, 48 * 64 / 8], "{out}");
    assert!(
        out.contains("walks 48 rows of A down each of 64 columns"),
        "{out}"
    );
    let figs = vis_common::figures(&dir.path().join("figures/what_if_A_interchange.html"));
    let data = figs[0]["data"].as_array().unwrap();
    let (before, after) = (offsets_by_time(&data[0]), offsets_by_time(&data[1]));
    assert_eq!(before.len(), 48 * 64);
    assert!(before.keys().eq(after.keys()), "the same times");
    let column: Vec<u64> = (0..64)
        .flat_map(|j| (0..48).map(move |i| (i * 64 + j) * 8))
        .collect();
    assert!(
        before.values().copied().eq(column),
        "recorded: column by column"
    );
    assert!(
        after.values().copied().eq((0..48 * 64).map(|k| k * 8)),
        "interchanged: row by row"
    );
    let bars = figs[1]["data"].as_array().unwrap();
    assert_eq!(
        vis_common::nums(&bars[1]["y"]),
        vec![w[1] as f64, w[2] as f64]
    );
}

/// `what_if A -layouts {...}` predicts several changes over one pass: each
/// layout's dicts are those of `what_if` run alone with that layout, in
/// the order given, and a layout that does not fit is named by its place.
#[test]
fn whatif_layouts_together_give_each_alone() {
    let layouts = ["pad 64", "transpose", "interchange", "align 4096", "tile 8"];
    let mut tail = format!(
        "set m [what_if A -layouts {{{}}}]; set k 0; foreach l $m {{ incr k; {} }}; ",
        layouts.map(|l| format!("{{{l}}}")).join(" "),
        print_list("m$k", "l")
    );
    for (k, l) in layouts.iter().enumerate() {
        tail.push_str(&format!(
            "set w [what_if A {l}]; {}",
            print_list(&format!("w{}", k + 1), "w")
        ));
    }
    tail.push_str("catch {what_if A -layouts {{pad 64} {soa}}} e; puts \"ERR $e\"");
    let (out, n) = session("wi_pad.c", "", &tail);
    let mut rows = 0;
    for k in 1..=layouts.len() {
        for ((key, var), counts) in n.iter().filter(|((key, _), _)| key == &format!("m{k}")) {
            assert_eq!(
                Some(counts),
                n.get(&(format!("w{k}"), var.clone())),
                "{key} {var}: {}\n{out}",
                layouts[k - 1]
            );
            rows += 1;
        }
    }
    assert!(rows >= layouts.len(), "{out}");
    assert_ne!(get(&n, "m1", "A", &out), get(&n, "m4", "A", &out), "{out}");
    assert!(out.contains("ERR layout 2 of 2: "), "{out}");
}

/// Tcl printing `ADV rank variable change misses_after_L1 misses_after_L2`
/// per suggestion of `advise` (in Tcl variable `adv`).
const PRINT_ADVICE: &str =
    "set k 0; foreach d $adv { incr k; puts \"ADV $k [dict get $d variable] \
     [string map {{ } _} [dict get $d change]] [dict get $d misses_after_L1] \
     [dict get $d misses_after_L2]\" }; ";

/// The suggestions `advise` printed: (variable, change with `_` for
/// spaces, predicted L1 and L2 misses), best first.
fn advice(out: &str) -> Vec<(String, String, [u64; 2])> {
    out.lines()
        .filter_map(|l| l.strip_prefix("ADV "))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (
                w[1].to_string(),
                w[2].to_string(),
                [w[3].parse().unwrap(), w[4].parse().unwrap()],
            )
        })
        .collect()
}

/// `advise` against the change made by hand: on the conflict-bound column
/// walk its top suggestion is padding the rows by one line, the change
/// `wi_pad.c` makes with `-DCOLS=72`, and its predicted misses are that
/// program's within 1%; on the array of structures read one field at a
/// time it is `soa`, as `wi_soa.c -DSOA` does. A sweep that streams once
/// (the split program) gets nothing to suggest, with the reason.
#[test]
fn advise_puts_the_hand_made_change_first() {
    for (prog, flags, top_var, top_change, measured_var) in [
        ("wi_pad.c", "-DCOLS=72", "A", "pad_64", "A"),
        ("wi_soa.c", "-DSOA", "p", "soa", "x"),
    ] {
        let (out, _) = session(
            prog,
            "",
            &format!(
                "set adv [advise save]; {PRINT_ADVICE} set f [open visinfo/advice.csv]; \
                 puts \"CSV [gets $f]\"; puts \"CSV [gets $f]\"; close $f"
            ),
        );
        let csv: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("CSV ")).collect();
        assert_eq!(
            csv[0],
            "rank,variable,change,touches,lines,misses_before_L1,misses_after_L1,misses_before_L2,\
             misses_after_L2,why,command,trace",
            "{out}"
        );
        let first = format!("1,{top_var},{},", top_change.replace('_', " "));
        assert!(csv[1].starts_with(&first), "{out}");
        let (out2, m) = session(prog, flags, "");
        let adv = advice(&out);
        let (var, change, predicted) = adv.first().unwrap_or_else(|| panic!("{out}"));
        assert_eq!(
            (var.as_str(), change.as_str()),
            (top_var, top_change),
            "{out}"
        );
        let measured = get(&m, "cs", measured_var, &out2);
        for l in 0..2 {
            let (p, q) = (predicted[l] as f64, measured[l + 1] as f64);
            assert!(
                (p - q).abs() <= 0.01 * q.max(1.0),
                "{prog}: L{} predicted {p}, measured {q}\n{out}",
                l + 1
            );
        }
        assert!(out.contains("are conflicts") || prog != "wi_pad.c", "{out}");
        assert!(out.contains(&format!(
            "what_if {top_var} {}",
            top_change.replace('_', " ")
        )));
    }
    let (out, _) = session(
        "wi_soa.c",
        "-DSOA",
        &format!("set adv [advise x]; {PRINT_ADVICE}"),
    );
    assert!(advice(&out).is_empty(), "{out}");
    assert!(
        out.contains("x: nothing to suggest: all its 128 L1 misses are first uses of a line"),
        "{out}"
    );
}

/// The sum over `vars` of the printed counts of key `key`.
fn summed(
    n: &BTreeMap<(String, String), [u64; 3]>,
    key: &str,
    vars: &[&str],
    out: &str,
) -> [u64; 3] {
    let mut t = [0; 3];
    for v in vars {
        let c = get(n, key, v, out);
        (0..3).for_each(|i| t[i] += c[i]);
    }
    t
}

/// Predicted within 5% of measured at L1 and L2 (the loop changes'
/// bound: the hand-written loops keep their counters differently).
fn assert_within_5(what: &str, predicted: [u64; 2], measured: [u64; 3], out: &str) {
    for l in 0..2 {
        let (p, q) = (predicted[l] as f64, measured[l + 1] as f64);
        assert!(
            (p - q).abs() <= 0.05 * q.max(1.0),
            "{what}: L{} predicted {p}, measured {q}\n{out}",
            l + 1
        );
    }
}

/// `advise NAMES` on `prog` as written: what it printed, and its top
/// suggestion's variable, change (`_` for spaces) and predicted L1 and L2
/// misses.
fn top_advice(prog: &str, names: &str) -> (String, String, String, [u64; 2]) {
    let (out, _) = session(
        prog,
        "",
        &format!("set adv [advise {names}]; {PRINT_ADVICE}"),
    );
    let (var, change, predicted) = advice(&out)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("{out}"));
    (out, var, change, predicted)
}

/// `advise` against loops changed by hand. The column walk over a 256 x
/// 256 array (a column is more lines than L1 holds, so no padding helps
/// L1) gets loop interchange first, and its prediction is the
/// interchanged program's misses; so does the ijk matrix product, whose
/// interchanged nest (run once per i) is the ikj product; the transpose whose result is then
/// summed by rows gets tiling first, and the program tiled by hand with
/// the tile size advise picked has the predicted misses of A and B (the
/// arrays the nest touches). A walk reading two elements an iteration
/// gets no loop change, and says why.
#[test]
fn advise_predicts_interchange_and_tiling() {
    let (out, var, change, predicted) = top_advice("wi_nest.c", "");
    assert_eq!(var, "A", "{out}");
    assert!(change.starts_with("interchange_t.c:"), "{out}");
    let (out2, m) = session("wi_nest.c", "-DINTERCHANGED", "");
    let measured = get(&m, "cs", "A", &out2);
    // 65536 reads, one miss per line of eight doubles once rows are walked.
    assert_eq!(measured[..2], [65536, 8192], "{out2}");
    assert_within_5("interchange", predicted, measured, &out);
    assert!(out.contains("what_if A interchange t.c:"), "{out}");

    // The (j, k) nest of an ijk product, run once per i: interchanged, it
    // is the ikj product, whose A, B and C misses the prediction sums.
    let (out, var, change, predicted) = top_advice("wi_matmul.c", "B");
    assert!(var == "B" && change.starts_with("interchange_"), "{out}");
    let (out2, m) = session("wi_matmul.c", "-DIKJ", "");
    let measured = summed(&m, "cs", &["A", "B", "C"], &out2);
    assert_within_5("interchange in a product", predicted, measured, &out);

    let (out, var, change, predicted) = top_advice("wi_tile.c", "B");
    assert_eq!(var, "B", "{out}");
    let tile: u64 = change
        .strip_prefix("tile_")
        .and_then(|c| c.split('_').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("the top change is not a tiling: {out}"));
    let (out2, m) = session("wi_tile.c", &format!("-DTILE={tile}"), "");
    let measured = summed(&m, "cs", &["A", "B"], &out2);
    let before = summed(&numbers(&out), "cs", &["A", "B"], &out);
    assert!(
        measured[1] * 2 < before[1],
        "tiling halves L1 misses: {out2}"
    );
    assert_within_5("tile", predicted, measured, &out);

    let (out, _) = session(
        "wi_nest.c",
        "-DPAIRS",
        &format!("set adv [advise A]; {PRINT_ADVICE}"),
    );
    assert!(
        advice(&out)
            .iter()
            .all(|(_, c, _)| !c.starts_with("interchange") && !c.starts_with("tile")),
        "{out}"
    );
    assert!(
        out.contains("A: no loop interchange or tiling: the trace shows no loop nest")
            && out.contains("not walked column by column, one element an iteration"),
        "{out}"
    );
}
