//! The analysis on real programs compiled -g -O0: exact names and exact
//! per-variable load and store bytes.
mod common;

use std::collections::BTreeMap;

use common::*;
use mapvis::filter::{stats, MemKind};
use mapvis::trace::naming::ProgramNamer;

/// variable -> (load_bytes, store_bytes) for the chosen memory kind.
fn bytes_by_var(rel: &str, cc: &[&str], kind: MemKind) -> BTreeMap<String, (u64, u64)> {
    let (dir, exe, _o, _evs, _end) = trace(rel, cc, &[]);
    let src_dir = root().join("tests/c");
    let mut namer = ProgramNamer::new(Some(&exe), &[src_dir]);
    let a = mapvis::filter::analyse(&dir.path().join("t.mvt"), &mut namer).expect("analysis");
    let df = stats::per_variable(&a, kind).unwrap();
    let names = df.column("variable").unwrap().str().unwrap().clone();
    let lb = df.column("load_bytes").unwrap().u64().unwrap().clone();
    let sb = df.column("store_bytes").unwrap().u64().unwrap().clone();
    (0..df.height())
        .map(|i| {
            (
                names.get(i).unwrap().to_string(),
                (lb.get(i).unwrap(), sb.get(i).unwrap()),
            )
        })
        .collect()
}

fn expect(got: &BTreeMap<String, (u64, u64)>, want: &[(&str, u64, u64)]) {
    for (name, l, s) in want {
        assert_eq!(
            got.get(*name),
            Some(&(*l, *s)),
            "{name}: (load_bytes, store_bytes); all: {got:?}"
        );
    }
}

#[test]
fn five_heap_arrays_are_named_by_their_statements() {
    let got = bytes_by_var("tests/c/an_five.c", &[], MemKind::Heap);
    expect(
        &got,
        &[
            ("a", 80, 40),
            ("b", 160, 80),
            ("c", 40, 40),
            ("d", 0, 160),
            ("e", 40, 40),
        ],
    );
    assert_eq!(got.len(), 5, "{got:?}");
}

#[test]
fn struct_member_allocations_are_named_by_member() {
    let got = bytes_by_var("tests/c/an_struct.c", &[], MemKind::Heap);
    expect(&got, &[("h.counts", 0, 64), ("s->buf", 0, 32)]);
}

#[test]
fn a_wrapper_allocation_is_named_in_its_caller() {
    let got = bytes_by_var("tests/c/an_wrapper.c", &[], MemKind::Heap);
    expect(&got, &[("w", 0, 48)]);
}

#[test]
fn a_three_line_malloc_statement_is_named() {
    let got = bytes_by_var("tests/c/an_multiline.c", &[], MemKind::Heap);
    expect(&got, &[("grid", 0, 80)]);
}

#[test]
fn a_reused_address_belongs_to_the_new_block() {
    let got = bytes_by_var("tests/c/an_reuse.c", &[], MemKind::Heap);
    expect(&got, &[("first", 0, 64), ("second", 0, 32)]);
}

#[test]
fn realloc_gives_a_new_instance() {
    let got = bytes_by_var("tests/c/an_realloc.c", &[], MemKind::Heap);
    expect(&got, &[("v#1", 0, 16), ("v#2", 32, 32)]);
}

#[test]
fn stack_arrays_of_a_stencil_are_named_from_dwarf() {
    let got = bytes_by_var("tests/c/an_stencil.c", &[], MemKind::Stack);
    // 10 x 10 interior points, 4 loads of u and 1 store of v each.
    expect(&got, &[("u", 3200, 0), ("v", 0, 800)]);
}

#[test]
fn a_global_array_and_a_static_are_named_from_dwarf() {
    let got = bytes_by_var("tests/c/an_global.c", &[], MemKind::Global);
    expect(&got, &[("garr", 0, 256), ("scale", 512, 0)]);
}

/// Two 32 MB static arrays are named whole, their ends as well as their
/// starts: most of a large `.bss` lies past every page mapped from the
/// file (an anonymous mapping), and was named `<unrecorded memory>`
/// there. By the hand-worked counts of `tests/c/an_big_bss.c`.
#[test]
fn a_large_static_array_is_named_past_the_files_pages() {
    let got = bytes_by_var("tests/c/an_big_bss.c", &[], MemKind::Global);
    expect(&got, &[("big", 0, 16), ("big2", 0, 16), ("small", 4, 0)]);
    assert!(!got.contains_key("<unrecorded memory>"), "{got:?}");
}

#[test]
fn struct_members_are_named_per_location() {
    let (dir, exe, _o, _evs, _end) = trace("tests/c/an_members.c", &[], &[]);
    let mut namer = ProgramNamer::new(Some(&exe), &[root().join("tests/c")]);
    let a = mapvis::filter::analyse(&dir.path().join("t.mvt"), &mut namer).expect("analysis");
    let df = stats::per_address(&a, MemKind::All).unwrap();
    let element = df.column("element").unwrap().str().unwrap().clone();
    let stored = df.column("bytes_stored").unwrap().u64().unwrap().clone();
    let got: BTreeMap<String, u64> = (0..df.height())
        .map(|i| (element.get(i).unwrap().to_string(), stored.get(i).unwrap()))
        .collect();
    for (e, bytes) in [
        ("h.nbins", 4),
        ("h.counts[0]", 4),
        ("h.counts[3]", 4),
        ("pts[2].z", 8),
        ("gview.data[1].y", 8),
    ] {
        assert_eq!(got.get(e), Some(&bytes), "{e}: all {got:?}");
    }
    // The loop counter is a scalar: its element is its name.
    assert!(got.contains_key("i"), "{got:?}");
}
