//! Over-aligned locals (`__attribute__((aligned(64)))`, `_Alignas(64)`):
//! the compiler realigns the frame (`and $-64,%rsp`) and locates its
//! locals from rsp or rbp rather than from the canonical frame address.
//! tests/c/al_frames.c is compiled with gcc (and clang, when installed) at
//! -O0 and -O2 and traced for real. Each array's load and store bytes are
//! worked out by hand below; no access inside an array may be counted in
//! its function's `<f frame>` row, and none may be left as unnamed stack.
mod common;

use std::collections::BTreeMap;
use std::process::Command;

use common::*;
use mapvis::filter::Analysis;
use mapvis::filter::{stats, MemKind};
use mapvis::trace::naming::ProgramNamer;
use mapvis::trace::record::run_trace;

const PROGRAM: &str = "tests/c/al_frames.c";

/// Whether `cc` can be run.
fn have(cc: &str) -> bool {
    Command::new(cc).arg("--version").output().is_ok()
}

/// Compiles the program with `cc -g opt`, traces it and analyses it.
fn analyse(cc: &str, opt: &str) -> Analysis {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = dir.path().join("al_frames");
    let out = Command::new(cc)
        .args(["-g", opt])
        .arg(format!("-I{}", root().join("pins").display()))
        .arg("-o")
        .arg(&exe)
        .arg(root().join(PROGRAM))
        .output()
        .expect("run the compiler");
    assert!(
        out.status.success(),
        "{cc} {opt} {PROGRAM} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let req = request(dir.path(), &exe, &[]);
    run_trace(&req).expect("run the tracer");
    let mut namer = ProgramNamer::new(Some(&exe), &[root().join("tests/c")]);
    mapvis::filter::analyse(&req.trace_file, &mut namer).expect("analysis")
}

/// Stack rows under `grouping`: name -> (load_bytes, store_bytes).
fn by_var(a: &Analysis, grouping: stats::Grouping) -> BTreeMap<String, (u64, u64)> {
    let df = stats::per_variable_by(a, MemKind::Stack, grouping).unwrap();
    let names = df.column("variable").unwrap().str().unwrap().clone();
    let col = |c: &str| df.column(c).unwrap().u64().unwrap().clone();
    let (lb, sb) = (col("load_bytes"), col("store_bytes"));
    (0..df.height())
        .map(|i| {
            let name = names.get(i).unwrap().to_string();
            (name, (lb.get(i).unwrap(), sb.get(i).unwrap()))
        })
        .collect()
}

/// The addresses at which the analysis counts accesses in `row` (all
/// its variables of that name) that start inside `[base, base + size)`.
fn row_addresses_inside(a: &Analysis, row: &str, base: u64, size: u64) -> Vec<u64> {
    use mapvis::filter::schema::location as lc;
    let ids: Vec<u32> = (0..a.vars.len() as u32)
        .filter(|&i| a.vars[i as usize].name == row)
        .collect();
    let locs = a.locations.frame().unwrap();
    let vars = locs.column(lc::VAR).unwrap().u32().unwrap().clone();
    let addrs = locs.column(lc::ADDR).unwrap().u64().unwrap().clone();
    vars.into_iter()
        .zip(&addrs)
        .filter_map(|(v, addr)| Some((v?, addr?)))
        .filter(|&(v, addr)| ids.contains(&v) && addr >= base && addr < base + size)
        .map(|(_, addr)| addr)
        .collect()
}

/// Asserts that `function`'s stack variables `want` (name, load bytes,
/// store bytes, size) carry these bytes, and that `<function frame>`
/// counts no access inside any of them: the frame row keeps only return
/// addresses, saved registers and spills. (The same addresses hold other
/// frames' data later, so a count over the whole trace by address would
/// be no oracle; the frame row exists only while its frame is live.)
fn check(what: &str, a: &Analysis, function: &str, want: &[(&str, u64, u64, u64)]) {
    let rows = by_var(a, stats::Grouping::Instances);
    let frame = format!("<{function} frame>");
    for &(name, l, s, size) in want {
        assert_eq!(
            rows.get(name),
            Some(&(l, s)),
            "{what}: {name} (load, store bytes); rows: {rows:?}; notes: {:?}",
            a.summary.notes
        );
        let v = a
            .vars
            .iter()
            .find(|v| v.name == name && v.function == function)
            .unwrap_or_else(|| panic!("{what}: no variable {name} of {function}"));
        assert_eq!(v.size, size, "{what}: {name}'s size");
        let inside = row_addresses_inside(a, &frame, v.base, v.size);
        assert!(
            inside.is_empty(),
            "{what}: {frame} counts accesses inside {name} at {inside:x?}"
        );
    }
}

/// The by-hand bytes of every function of al_frames.c, for a compiler that
/// locates all of their locals.
fn check_all(what: &str, a: &Analysis) {
    // tiles(3): tile (64 doubles, 512 bytes) is stored once (64 x 8 = 512)
    // and loaded once (512); plain (16 doubles, 128 bytes) likewise, 128
    // and 128. The volatile scalar s is stored by `s = 0` (8), then each
    // of the 64 + 16 = 80 additions loads and stores it (80 x 8 = 640
    // each), and `return s` loads it once more: 640 + 8 = 648 of each.
    check(
        what,
        a,
        "tiles",
        &[
            ("tile", 512, 512, 512),
            ("plain", 128, 128, 128),
            ("s", 648, 648, 8),
        ],
    );
    // rec(2, 0) runs d = 2, 1, 0: t#1, t#2, t#3 in order, 8 doubles (64
    // bytes) each. Every instance stores its 8 elements (64) and loads t[0]
    // to return it (8). The callees of d = 2 and d = 1 add into their
    // caller's t[0]: 8 more loaded and 8 more stored in t#1 and t#2.
    // t#1, t#2: (8 + 8, 64 + 8) = (16, 72); t#3: (8, 64).
    check(
        what,
        a,
        "rec",
        &[("t#1", 16, 72, 64), ("t#2", 16, 72, 64), ("t#3", 8, 64, 64)],
    );
    // The instances are one row t by default: loads 16 + 16 + 8 = 40,
    // stores 72 + 72 + 64 = 208.
    let grouped = by_var(a, stats::Grouping::BySite);
    assert_eq!(grouped.get("t"), Some(&(40, 208)), "{what}: {grouped:?}");
    let df = stats::per_variable_by(a, MemKind::Stack, stats::Grouping::BySite).unwrap();
    let notes = stats::row_notes(a, &df, stats::Grouping::BySite);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("t (3 instances, one per frame of rec)")),
        "{what}: {notes:?}"
    );
    // stacked(5): w (8 longs, 64 bytes) is stored once (64) and each
    // element loaded once to be passed to eight() (8 x 8 = 64).
    check(what, a, "stacked", &[("w", 64, 64, 64)]);
    // both(1, ..., 8): x (8 longs) is stored once (64); x[0], x[6] and x[7]
    // are loaded to be passed on (3 x 8 = 24).
    check(what, a, "both", &[("x", 24, 64, 64)]);
    // Every stack access is a variable's or in a function's frame row, the
    // prologues of frames that keep their CFA in memory included: none is
    // left as unnamed stack.
    let rows = by_var(a, stats::Grouping::Instances);
    assert!(!rows.contains_key("<stack>"), "{what}: {rows:?}");
}

#[test]
fn over_aligned_locals_are_named_with_gcc() {
    for opt in ["-O0", "-O2"] {
        let what = format!("gcc {opt}");
        let a = analyse("gcc", opt);
        check_all(&what, &a);
        // dynamic(4): fixed (8 doubles) beside a variable-length array:
        // gcc locates it from rbp. 8 stores (64), then fixed[1] is loaded
        // once (8).
        check(&what, &a, "dynamic", &[("fixed", 8, 64, 64)]);
        // both's g is located from its CFA, which gcc keeps in memory
        // there: a note says so (at -O2, h has a location list, which is
        // not read at all).
        assert!(
            a.summary
                .notes
                .iter()
                .any(|n| n.starts_with("in function both, g")
                    && n.contains("canonical frame address")
                    && n.contains("caller's frame row")),
            "{what}: {:?}",
            a.summary.notes
        );
    }
}

#[test]
fn over_aligned_locals_are_named_with_clang() {
    if !have("clang") {
        missing_tool(
            "the over-aligned locals compiled by clang are not checked",
            "clang is not installed (apt-get install clang)",
        );
        return;
    }
    for opt in ["-O0", "-O2"] {
        let what = format!("clang {opt}");
        let a = analyse("clang", opt);
        check_all(&what, &a);
        // dynamic(4): clang locates fixed from rbx (its base pointer
        // beside a variable-length array), which the trace does not
        // record: fixed's 8 + 64 bytes stay in dynamic's frame row, with a
        // note naming the function, never under another variable's name.
        let rows = by_var(&a, stats::Grouping::Instances);
        assert!(
            !rows.keys().any(|k| k.contains("fixed")),
            "clang {opt}: {rows:?}"
        );
        let frame = rows.get("<dynamic frame>").copied().unwrap_or((0, 0));
        assert!(
            frame.0 >= 8 && frame.1 >= 64,
            "clang {opt}: fixed's bytes in <dynamic frame>: {rows:?}"
        );
        assert!(
            a.summary
                .notes
                .iter()
                .any(|n| n.starts_with("in function dynamic, ")
                    && n.contains("fixed")
                    && n.contains("register rbx")
                    && n.contains("<dynamic frame>")),
            "clang {opt}: {:?}",
            a.summary.notes
        );
    }
}
