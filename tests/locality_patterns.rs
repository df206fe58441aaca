//! Pattern labels and false sharing on real programs, traced for real.
mod common;

use std::collections::BTreeMap;

use common::*;
use mapvis::filter::locality::report;
use mapvis::filter::stats::Grouping;
use mapvis::filter::Analysis;
use mapvis::filter::MemKind;
use mapvis::trace::naming::ProgramNamer;

fn analysed(rel: &str, cc: &[&str]) -> (tempfile::TempDir, Analysis) {
    let (dir, exe, _o, _evs, _end) = trace(rel, cc, &[]);
    let mut namer = ProgramNamer::new(Some(&exe), &[root().join("tests/c")]);
    let a = mapvis::filter::analyse(&dir.path().join("t.mvt"), &mut namer).expect("analysis");
    (dir, a)
}

/// (variable, line marker) -> label.
fn labels(a: &Analysis, rel: &str) -> BTreeMap<(String, u32), String> {
    report::patterns(a, MemKind::All, Grouping::BySite)
        .unwrap()
        .into_iter()
        .filter_map(|r| {
            let (f, n) = r.source.rsplit_once(':')?;
            let stem = rel.rsplit('/').next()?;
            if f.ends_with(stem) {
                Some(((r.variable, n.parse().ok()?), r.label.to_string()))
            } else {
                None
            }
        })
        .collect()
}

#[test]
fn traversals_get_their_labels_in_index_space() {
    let rel = "tests/c/loc_patterns.c";
    let (_d, a) = analysed(rel, &[]);
    let got = labels(&a, rel);
    let at = |v: &str, marker: &str| -> String {
        let key = (v.to_string(), line_of(rel, marker));
        got.get(&key)
            .cloned()
            .unwrap_or_else(|| panic!("no label for {key:?}: {got:?}"))
    };
    assert_eq!(at("m", "row walk"), "row-wise: unit stride");
    assert_eq!(
        at("m", "column walk"),
        "column-wise: stride 32 elements (256 B)"
    );
    assert_eq!(
        at("m", "diagonal walk"),
        "diagonal: stride 33 elements (264 B)"
    );
    assert_eq!(
        at("m", "tiled walk"),
        "tiled: row-wise inside tiles 8 elements wide"
    );
    assert_eq!(
        at("cube", "cube walk"),
        "first index innermost: stride 64 elements (256 B)"
    );
    // An array of structures read one field at a time uses 8 bytes of
    // each 24; the structure of arrays uses all of every element.
    assert_eq!(
        at("aos", "aos walk"),
        "unit stride; 8 of 24 bytes of each element used"
    );
    assert_eq!(at("soa", "soa walk"), "unit stride");
}

/// The shared lines that hold the variable `hits`.
fn shared_hits(cc: &[&str]) -> Vec<report::SharedLine> {
    let (_d, a) = analysed("tests/c/loc_share.c", cc);
    report::sharing_stats(&a, MemKind::Global, 64, Grouping::BySite)
        .unwrap()
        .into_iter()
        .filter(|l| l.variables.iter().any(|v| v == "hits"))
        .collect()
}

#[test]
fn adjacent_fields_bumped_by_two_threads_are_false_sharing() {
    let lines = shared_hits(&["-pthread"]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let l = &lines[0];
    assert_eq!(l.kind, mapvis::filter::SharingKind::False, "{l:?}");
    assert!(l.false_transfers >= 1 && l.true_transfers == 0, "{l:?}");
    // One thread wrote bytes 0-7 (hits.a), the other 8-15 (hits.b).
    let mut per: Vec<(Vec<String>, u64, String)> = l
        .threads
        .iter()
        .map(|t| (t.elements.clone(), t.written.0, t.written.to_string()))
        .collect();
    per.sort();
    assert_eq!(
        per,
        vec![
            (vec!["hits.a".to_string()], 0xff, "0-7".to_string()),
            (vec!["hits.b".to_string()], 0xff00, "8-15".to_string()),
        ]
    );
}

#[test]
fn padded_fields_share_no_line() {
    let lines = shared_hits(&["-pthread", "-DPAD"]);
    assert!(lines.is_empty(), "{lines:?}");
}

/// `got` without the access width a vector sweep adds (` (16 B accesses)`).
fn without_width(got: &str) -> String {
    let mut s = got.to_string();
    let mut from = 0;
    while let Some(at) = s[from..].find(" (").map(|i| i + from) {
        let rest = &s[at + 2..];
        let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 && rest[digits..].starts_with(" B accesses)") {
            s.replace_range(at..at + 2 + digits + " B accesses)".len(), "");
        } else {
            from = at + 2;
        }
    }
    s
}

/// The labels of `tests/c/loc_walks.c` built with `opt`: each loop as a
/// person reading it would describe the walk. At -O0 the labels are exact;
/// at -O2 gcc may sweep 16 bytes at a time, and the label may add that
/// width, but the walk is the same.
fn walks_labelled_as_read(opt: &str) {
    let rel = "tests/c/loc_walks.c";
    let (_d, a) = analysed(rel, &[opt]);
    let got = labels(&a, rel);
    let at = |v: &str, marker: &str| -> String {
        let key = (v.to_string(), line_of(rel, &format!("/* {marker} */")));
        got.get(&key)
            .cloned()
            .unwrap_or_else(|| panic!("{opt}: no label for {key:?}: {got:?}"))
    };
    let check = |v: &str, marker: &str, want: &str| {
        let l = at(v, marker);
        match opt {
            "-O0" => assert_eq!(l, want, "{opt}: {v} at {marker}"),
            _ => assert_eq!(without_width(&l), want, "{opt}: {v} at {marker}: {l}"),
        }
    };
    check("g", "row update", "row-wise: unit stride");
    check(
        "g",
        "column update",
        "column-wise: stride 64 elements (512 B)",
    );
    check("a", "add in place", "unit stride");
    check(
        "ps",
        "field update",
        "unit stride; 8 of 24 bytes of each element used",
    );
    let rows3 = "row-wise (last index innermost): unit stride";
    check("grid", "grid update", rows3);
    check("v", "scale in place", "unit stride");
    check("src", "scaled copy", "unit stride");
    check("dst", "scaled copy", "unit stride");
    check("grid", "stencil", rows3);
    check("out", "stencil", rows3);
    check(
        "g",
        "tiled update",
        "tiled: row-wise inside tiles 8 elements wide",
    );
    check("g", "accumulate", "row-wise: unit stride");
    if opt == "-O0" {
        // acc[i] is loaded and stored for every j: the same element
        // reused. (-O2 keeps it in a register across the j loop.)
        check("acc", "accumulate", "stride 0: the same element reused");
    }
}

#[test]
fn loops_that_load_and_store_each_element_are_walks_at_o0() {
    walks_labelled_as_read("-O0");
}

#[test]
fn vectorized_loops_are_unit_stride_sweeps_at_o2() {
    walks_labelled_as_read("-O2");
}

#[test]
fn the_width_of_a_vector_sweep_is_taken_out_for_comparison() {
    assert_eq!(
        without_width("tiled: row-wise inside tiles 8 elements wide (16 B accesses)"),
        "tiled: row-wise inside tiles 8 elements wide"
    );
    assert_eq!(
        without_width("unit stride (32 B accesses); 8 of 24"),
        "unit stride; 8 of 24"
    );
    assert_eq!(
        without_width("constant stride 2 elements (16 B)"),
        "constant stride 2 elements (16 B)"
    );
    assert_eq!(
        without_width("row-wise (last index innermost): unit stride (16 B accesses)"),
        "row-wise (last index innermost): unit stride"
    );
}
