//! Naming on the idioms of real C code: several allocations in one
//! statement, arrays declared through (nested) function-like macros from a
//! header found through set_src_path, fallbacks to the user's own line,
//! callers' stack frames (two levels down, recursion, a thread's own stack),
//! arguments passed on the stack, and frame-slot rows. Every program is
//! compiled -g -O0 and traced for real; the expected bytes and addresses
//! are worked out by hand in the comments.
mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::*;
use mapvis::filter::analysis::Analysis;
use mapvis::filter::{analysis, stats, MemKind};
use mapvis::trace::program::ProgramNamer;

/// Traces `rel` (compiled with `cc`) and analyses it with `src_paths` as
/// set_src_path.
fn analyse(rel: &str, cc: &[&str], src_paths: &[PathBuf]) -> Analysis {
    let (dir, exe, _o, _evs, _end) = trace(rel, cc, &[]);
    let mut namer = ProgramNamer::new(Some(&exe), src_paths);
    analysis::analyse(&dir.path().join("t.mvt"), &mut namer).expect("analysis")
}

/// variable -> (load_bytes, store_bytes, distinct addresses).
fn by_var(a: &Analysis, kind: MemKind) -> BTreeMap<String, (u64, u64, u64)> {
    let df = stats::per_variable(a, kind).unwrap();
    let names = df.column("variable").unwrap().str().unwrap().clone();
    let col = |c: &str| df.column(c).unwrap().u64().unwrap().clone();
    let (lb, sb, ad) = (col("load_bytes"), col("store_bytes"), col("addresses"));
    (0..df.height())
        .map(|i| {
            (
                names.get(i).unwrap().to_string(),
                (lb.get(i).unwrap(), sb.get(i).unwrap(), ad.get(i).unwrap()),
            )
        })
        .collect()
}

fn expect(got: &BTreeMap<String, (u64, u64, u64)>, want: &[(&str, u64, u64, u64)]) {
    for (name, l, s, n) in want {
        assert_eq!(
            got.get(*name),
            Some(&(*l, *s, *n)),
            "{name}: (load_bytes, store_bytes, addresses); all: {got:?}"
        );
    }
}

fn tests_c() -> PathBuf {
    root().join("tests/c")
}

#[test]
fn several_allocations_in_one_statement_get_their_own_names() {
    let a = analyse("tests/c/nm_multi.c", &[], &[tests_c()]);
    let got = by_var(&a, MemKind::Heap);
    // X: 8 stores, then 8 loads (Y[i] = X[i]): 64 and 64 bytes, 8 addresses.
    // Y: 8 stores, then 8 loads (Z[i] += Y[i]). Z: 8 loads and 8 stores.
    // a: 4 stores, then 4 loads; b: 4 stores. p->x, p->y: one store each.
    expect(
        &got,
        &[
            ("X", 64, 64, 8),
            ("Y", 64, 64, 8),
            ("Z", 64, 64, 8),
            ("a", 32, 32, 4),
            ("b", 0, 32, 4),
            ("p->x", 0, 8, 1),
            ("p->y", 0, 8, 1),
        ],
    );
    assert_eq!(got.len(), 7, "{got:?}");
}

#[test]
fn macro_declared_arrays_are_named_with_their_shapes() {
    let a = analyse(
        "tests/c/nm_macro.c",
        &[
            &format!("-I{}", root().join("tests/c/nm_inc").display()),
            root().join("tests/c/nm_util.c").to_str().unwrap(),
        ],
        &[tests_c()],
    );
    let got = by_var(&a, MemKind::Heap);
    // A (6x5 doubles): 30 stores, then 30 loads while B is filled.
    // B (5x6 doubles, through the nested MAT_DECL): 30 stores.
    // C (2x3x4 floats): 24 stores of 4 bytes. v (6 ints): 6 stores.
    expect(
        &got,
        &[
            ("A", 240, 240, 30),
            ("B", 0, 240, 30),
            ("C", 0, 96, 24),
            ("v", 0, 24, 6),
        ],
    );
    assert_eq!(got.len(), 4, "{got:?}");
    let shape = |n: &str| {
        let v = a.vars.iter().find(|v| v.name == n).unwrap();
        (v.dims.clone(), v.elem_size)
    };
    assert_eq!(shape("A"), (vec![6, 5], 8));
    assert_eq!(shape("B"), (vec![5, 6], 8));
    assert_eq!(shape("C"), (vec![2, 3, 4], 4));
    assert_eq!(shape("v"), (vec![6], 4));
}

#[test]
fn without_the_header_blocks_are_named_after_the_users_line_with_a_reason() {
    // No set_src_path: the sources are found by their absolute DWARF
    // paths, the header in nm_inc/ is not.
    let a = analyse(
        "tests/c/nm_macro.c",
        &[
            &format!("-I{}", root().join("tests/c/nm_inc").display()),
            root().join("tests/c/nm_util.c").to_str().unwrap(),
        ],
        &[],
    );
    let got = by_var(&a, MemKind::Heap);
    let line = line_of("tests/c/nm_macro.c", "ARRAY_2D_DECL(A");
    let site = format!("nm_macro.c:{line}");
    assert_eq!(got.get(&site), Some(&(240, 240, 30)), "{got:?}");
    assert!(
        got.keys().all(|k| !k.starts_with("nm_util.c")),
        "never the library's line: {got:?}"
    );
    let notes: Vec<&String> = a
        .summary
        .notes
        .iter()
        .filter(|n| n.contains(&format!("allocated at {site} ")))
        .collect();
    assert_eq!(notes.len(), 1, "one note per site: {:?}", a.summary.notes);
    assert!(notes[0].contains("nm_arrays.h"), "{}", notes[0]);
}

#[test]
fn callers_frames_recursion_threads_and_stack_arguments_are_named() {
    let a = analyse("tests/c/nm_frames.c", &["-pthread"], &[tests_c()]);
    let got = by_var(&a, MemKind::Stack);
    // in (main's, reached through step -> init and step -> blur): init
    // stores 16 doubles; blur loads in[i-1], in[i], in[i+1] for i = 1..14:
    // 42 loads of 8 bytes = 336, over the 16 addresses.
    // out: blur stores out[1..14]: 14 x 8 = 112, 14 addresses.
    // top (main's): rec(2) adds into top[1]: one 4-byte load and store.
    // mine, one instance per depth (d = 2, 1, 0 in order): each stores
    // mine[0] and mine[1] (8) and loads mine[0] (4); the callee of d = 2
    // and d = 1 adds into mine[1] (4 loaded, 4 stored).
    // buf (the thread's own): init stores 8 doubles, total loads them.
    // g, h: the 7th and 8th arguments of seven, loaded once each from the
    // caller's outgoing area.
    // grid (main's 4 x 8 doubles): fill2 stores all 32 elements.
    expect(
        &got,
        &[
            ("in", 336, 128, 16),
            ("out", 0, 112, 14),
            ("top", 4, 4, 1),
            ("mine#1", 8, 12, 2),
            ("mine#2", 8, 12, 2),
            ("mine#3", 4, 8, 2),
            ("buf", 64, 64, 8),
            ("g", 8, 0, 1),
            ("h", 8, 0, 1),
            ("grid", 0, 256, 32),
        ],
    );
}

#[test]
fn frame_slots_are_one_labelled_row_per_function_and_the_pins_are_explained() {
    let a = analyse("tests/c/nm_frames.c", &["-pthread"], &[tests_c()]);
    let slots: Vec<&str> = a
        .vars
        .iter()
        .filter(|v| v.frame_slot)
        .map(|v| v.name.as_str())
        .collect();
    // One row per function, recursion included.
    assert!(slots.contains(&"<rec frame>"), "{slots:?}");
    let mut sorted = slots.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), slots.len(), "{slots:?}");
    assert!(
        a.summary
            .notes
            .iter()
            .any(|n| n.contains("recorded accesses were left out") && n.contains("GL_START")),
        "{:?}",
        a.summary.notes
    );
}

#[test]
fn cpp_allocations_members_containers_and_frames_are_named() {
    let a = analyse("tests/c/nm_cpp.cpp", &["-lstdc++"], &[tests_c()]);
    let got = by_var(&a, MemKind::Heap);
    // a: 4 stores, then 4 loads. ps: one store to ps[3].y; one: one store
    // to one->x. u: 4 stores. data_ (Grid's member, set in the
    // constructor): 9 floats stored through Grid::at. vals_ (set through
    // this->): 5 ints.
    expect(
        &got,
        &[
            ("a", 32, 32, 4),
            ("ps", 0, 8, 1),
            ("one", 0, 8, 1),
            ("u", 0, 32, 4),
            ("data_", 0, 36, 9),
            ("vals_", 0, 20, 5),
        ],
    );
    // The vector's buffer, before and after push_back grows it: the first
    // takes 16 stores of 8 bytes and is then copied (128 bytes loaded) into
    // the second, which also gets the pushed 7.0 (128 + 8 bytes stored).
    let grids: Vec<&str> = a
        .vars
        .iter()
        .filter(|v| v.scope == mapvis::trace::naming::Scope::Heap && v.base_name == "grid")
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(grids, vec!["grid#1", "grid#2"], "{got:?}");
    assert_eq!(got["grid#1"].0, 128, "{got:?}");
    assert_eq!(got["grid#1"].1, 128, "{got:?}");
    assert_eq!(got["grid#2"].1, 136, "{got:?}");
    // Elements of arrays of structures and members of single ones.
    let df = stats::per_address(&a, MemKind::Heap).unwrap();
    let elements: Vec<String> = df
        .column("element")
        .unwrap()
        .str()
        .unwrap()
        .into_iter()
        .map(|e| e.unwrap_or("").to_string())
        .collect();
    assert!(elements.contains(&"ps[3].y".to_string()), "{elements:?}");
    assert!(elements.contains(&"one.x".to_string()), "{elements:?}");
    // Frames in source form, never mangled.
    let names: Vec<&str> = a.vars.iter().map(|v| v.name.as_str()).collect();
    assert!(names.contains(&"<Grid::at frame>"), "{names:?}");
    assert!(names.contains(&"<main frame>"), "{names:?}");
    assert!(names.iter().all(|n| !n.contains("_Z")), "{names:?}");
    // Every heap block allocated by the program has its source name; the
    // block the C++ runtime allocates for itself at start-up is named after
    // the library that did.
    let heap: Vec<(String, String)> = a
        .vars
        .iter()
        .filter(|v| v.scope == mapvis::trace::naming::Scope::Heap)
        .map(|v| (v.name.clone(), v.site.clone()))
        .collect();
    let want = ["a", "ps", "one", "grid#1", "grid#2", "u", "data_", "vals_"];
    assert!(
        heap.iter().all(|(n, _)| want.contains(&n.as_str())
            || (n.starts_with('<') && n.ends_with(".so.6 block>"))
            || (n.starts_with('<') && n.ends_with(".so.2 block>"))),
        "{heap:?}"
    );
}

#[test]
fn blocks_from_one_site_are_one_row_with_their_fields_summed() {
    let a = analyse("tests/c/nm_list.c", &[], &[tests_c()]);
    let got = by_var(&a, MemKind::Heap);
    // 200 nodes, each stored once in val (4 bytes) and once in next (8):
    // 2400 bytes over 400 addresses. rows[i]: 4 doubles stored per row.
    expect(
        &got,
        &[
            ("n", 0, 2400, 400),
            ("rows[i]#1", 0, 32, 4),
            ("rows[i]#2", 0, 32, 4),
            ("rows[i]#3", 0, 32, 4),
        ],
    );
    assert_eq!(got.len(), 4, "{got:?}");
    let df = stats::per_variable(&a, MemKind::Heap).unwrap();
    let row = (0..df.height())
        .find(|&i| df.column("variable").unwrap().str().unwrap().get(i) == Some("n"))
        .unwrap();
    let line = line_of("tests/c/nm_list.c", "malloc(sizeof *n)");
    assert_eq!(
        df.column("blocks").unwrap().u64().unwrap().get(row),
        Some(200)
    );
    assert_eq!(
        df.column("site").unwrap().str().unwrap().get(row),
        Some(format!("nm_list.c:{line}").as_str())
    );
    // The fields, summed over the 200 blocks.
    let el = stats::per_element(&a, MemKind::Heap, stats::Grouping::BySite).unwrap();
    let fields: BTreeMap<String, (u64, u64)> = (0..el.height())
        .map(|i| {
            (
                el.column("element")
                    .unwrap()
                    .str()
                    .unwrap()
                    .get(i)
                    .unwrap()
                    .to_string(),
                (
                    el.column("store_bytes")
                        .unwrap()
                        .u64()
                        .unwrap()
                        .get(i)
                        .unwrap(),
                    el.column("addresses")
                        .unwrap()
                        .u64()
                        .unwrap()
                        .get(i)
                        .unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(fields.get("n.val"), Some(&(800, 200)), "{fields:?}");
    assert_eq!(fields.get("n.next"), Some(&(1600, 200)), "{fields:?}");
    // Per instance on request: n#1 ... n#200, 12 bytes each.
    let inst = stats::per_variable_by(&a, MemKind::Heap, stats::Grouping::Instances).unwrap();
    assert_eq!(inst.height(), 203);
    let names = inst.column("variable").unwrap().str().unwrap().clone();
    let sb = inst.column("store_bytes").unwrap().u64().unwrap().clone();
    for i in 0..inst.height() {
        let name = names.get(i).unwrap();
        if name.starts_with("n#") {
            assert_eq!(sb.get(i), Some(12), "{name}");
        }
    }
}
