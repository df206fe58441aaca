//! Pattern labels and false sharing on real programs, traced for real.
mod common;

use std::collections::BTreeMap;

use common::*;
use mapvis::filter::analysis::{self, Analysis};
use mapvis::filter::locality::report;
use mapvis::filter::MemKind;
use mapvis::trace::program::ProgramNamer;

fn analysed(rel: &str, cc: &[&str]) -> (tempfile::TempDir, Analysis) {
    let (dir, exe, _o, _evs, _end) = trace(rel, cc, &[]);
    let mut namer = ProgramNamer::new(Some(&exe), &[root().join("tests/c")]);
    let a = analysis::analyse(&dir.path().join("t.mvt"), &mut namer).expect("analysis");
    (dir, a)
}

/// (variable, line marker) -> label.
fn labels(a: &Analysis, rel: &str) -> BTreeMap<(String, u32), String> {
    report::patterns(a, MemKind::All)
        .unwrap()
        .into_iter()
        .filter_map(|(v, src, _, label)| {
            let (f, n) = src.rsplit_once(':')?;
            let stem = rel.rsplit('/').next()?;
            if f.ends_with(stem) {
                Some(((v, n.parse().ok()?), label))
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
    report::sharing_stats(&a, MemKind::Global, 64)
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
    assert_eq!(l.kind, "false", "{l:?}");
    assert!(l.false_transfers >= 1 && l.true_transfers == 0, "{l:?}");
    // One thread wrote bytes 0-7 (hits.a), the other 8-15 (hits.b).
    let mut per: Vec<(Vec<String>, String)> = l
        .threads
        .iter()
        .map(|t| (t.1.clone(), t.3.clone()))
        .collect();
    per.sort();
    assert_eq!(
        per,
        vec![
            (vec!["hits.a".to_string()], "0-7".to_string()),
            (vec!["hits.b".to_string()], "8-15".to_string()),
        ]
    );
}

#[test]
fn padded_fields_share_no_line() {
    let lines = shared_hits(&["-pthread", "-DPAD"]);
    assert!(lines.is_empty(), "{lines:?}");
}
