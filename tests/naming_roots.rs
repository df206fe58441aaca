//! Heap blocks named by where the program keeps their addresses (trace
//! format 6's root snapshot and pointer stores): the idioms the statement
//! reader cannot name. Every program is compiled -g -O0 (some also -O2,
//! one -O2 -flto) and traced for real; the expected bytes are worked out
//! by hand in the comments.
mod common;

use std::collections::BTreeMap;

use common::*;
use mapvis::filter::Analysis;
use mapvis::filter::{stats, MemKind};
use mapvis::trace::naming::ProgramNamer;

/// Traces `rel` and analyses it, with tests/c as set_src_path.
fn analyse(rel: &str) -> Analysis {
    let (dir, exe, _o, _evs, _end) = trace(rel, &[], &[]);
    let mut namer = ProgramNamer::new(Some(&exe), &[root().join("tests/c")]);
    mapvis::filter::analyse(&dir.path().join("t.mvt"), &mut namer).expect("analysis")
}

/// Heap variable -> (load_bytes, store_bytes, distinct addresses) under
/// `grouping`.
fn by_var(a: &Analysis, grouping: stats::Grouping) -> BTreeMap<String, (u64, u64, u64)> {
    by_var_in(a, MemKind::Heap, grouping)
}

#[test]
fn rows_built_by_a_helper_are_named_by_the_table_that_holds_them() {
    let a = analyse("tests/c/rt_rows.c");
    let got = by_var(&a, stats::Grouping::Instances);
    // net (struct net: int n, pad, float **w1, float **w2; 24 bytes):
    // stores n (4), w1 (8), w2 (8) = 20 bytes at 3 addresses; loads w1 in
    // each of the 12 iterations of both loops and w2 in the 12 of the
    // second: 36 loads of 8 = 288 bytes.
    assert_eq!(got.get("net"), Some(&(288, 20, 3)), "{got:?}");
    // w1's table (4 pointers): 4 stores new[i] = ...; loaded in the 24
    // iterations: 192 bytes. w2's: 4 stores; 12 loads.
    assert_eq!(got.get("net->w1"), Some(&(192, 32, 4)), "{got:?}");
    assert_eq!(got.get("net->w2"), Some(&(96, 32, 4)), "{got:?}");
    // Each of w1's 4 rows (3 floats): 3 stores of 1.0f, then 3 loads; each
    // of w2's: 3 stores.
    for k in 1..=4 {
        assert_eq!(
            got.get(&format!("net->w1[i]#{k}")),
            Some(&(12, 12, 3)),
            "{got:?}"
        );
        assert_eq!(
            got.get(&format!("net->w2[i]#{k}")),
            Some(&(0, 12, 3)),
            "{got:?}"
        );
    }
    assert_eq!(got.len(), 11, "no other heap rows: {got:?}");
}

#[test]
fn a_helper_returning_through_a_conditional_names_each_buffer() {
    let a = analyse("tests/c/rt_xbuf.c");
    let got = by_var(&a, stats::Grouping::BySite);
    // src: 256 stores of one byte, then read once each; dst the same;
    // back: 256 stores.
    assert_eq!(got.get("src"), Some(&(256, 256, 256)), "{got:?}");
    assert_eq!(got.get("dst"), Some(&(256, 256, 256)), "{got:?}");
    assert_eq!(got.get("back"), Some(&(0, 256, 256)), "{got:?}");
    assert!(
        !got.contains_key("p"),
        "the helper's local names nothing: {got:?}"
    );
    // The statement reader names them `p`: the analysis says it disagrees.
    assert!(
        a.summary
            .notes
            .iter()
            .any(|n| n.contains("`src`") && n.contains("`p`")),
        "{:?}",
        a.summary.notes
    );
}

#[test]
fn registers_name_the_buffers_a_caller_keeps_in_callee_saved_registers() {
    // Built -O2, main keeps `samples` in r12 and `other` in rbp; `partial`,
    // which opens the region, saves both in its frame (push %r12; push
    // %rbp) and holds only `from`, a pointer 80 bytes into `samples`, in
    // rbx. No word of any stack points at either buffer's start: the
    // names come from the snapshot's registers and saved slots, read with
    // DWARF's location lists and the unwind rules. At -O0 every local is in
    // the stack, and the names must be the same.
    for opt in ["-O2", "-O0"] {
        let (dir, exe, _o, _evs, _end) = trace("tests/c/rt_regs.c", &[opt], &[]);
        let mut namer = ProgramNamer::new(Some(&exe), &[root().join("tests/c")]);
        let a = mapvis::filter::analyse(&dir.path().join("t.mvt"), &mut namer).expect("analysis");
        let got = by_var(&a, stats::Grouping::BySite);
        // Region 1: partial(samples + 10, 100) loads from[0..100], 100
        // doubles of samples: 800 bytes at 100 addresses. Region 2:
        // partial(other, 50) loads 50 doubles of other: 400 bytes.
        assert_eq!(got.get("samples"), Some(&(800, 0, 100)), "{opt}: {got:?}");
        assert_eq!(got.get("other"), Some(&(400, 0, 50)), "{opt}: {got:?}");
        assert_eq!(got.len(), 2, "{opt}: no other heap rows: {got:?}");
    }
}

#[test]
fn an_object_owning_one_buffer_is_named_by_the_object() {
    // Vec x, r, p each own 100 doubles through the member `coefs`, set in
    // the member initializer list (value-initialised before the region).
    // r: 100 stores of 8, then 100 loads of 8 (p's loop). p: 100 stores,
    // then 100 loads (x's loop). x: 100 loads and 100 stores (+=). The
    // Model m owns two vectors, so its rows keep the members: m.w 10
    // stores of 8, m.b 10 loads of 8. At -O2 the loops are vectorised
    // (16-byte moves): the same bytes at half the addresses.
    for opt in ["-O0", "-O2"] {
        let (dir, exe, _o, _evs, _end) = trace("tests/c/rt_owner.cpp", &[opt, "-lstdc++"], &[]);
        let mut namer = ProgramNamer::new(Some(&exe), &[root().join("tests/c")]);
        let a = mapvis::filter::analyse(&dir.path().join("t.mvt"), &mut namer).expect("analysis");
        // The (load, store) bytes of each named row under `grouping`.
        let check = |grouping, want: &[(&str, (u64, u64))]| {
            let got = by_var(&a, grouping);
            for (name, bytes) in want {
                let row = got.get(*name).map(|v| (v.0, v.1));
                assert_eq!(row, Some(*bytes), "{opt} {name}: {got:?}");
            }
            got.len()
        };
        let rows = check(
            stats::Grouping::Root,
            &[
                ("x", (800, 800)),
                ("r", (800, 800)),
                ("p", (800, 800)),
                ("m.w", (0, 80)),
                ("m.b", (80, 0)),
            ],
        );
        assert_eq!(rows, 5, "{opt}: no other heap rows");
        // Under instances each block shows its whole path.
        check(
            stats::Grouping::Instances,
            &[
                ("x.coefs", (800, 800)),
                ("r.coefs", (800, 800)),
                ("p.coefs", (800, 800)),
                ("m.w", (0, 80)),
            ],
        );
        assert!(
            a.summary
                .notes
                .iter()
                .any(|n| n.contains("`x`") && n.contains("`x.coefs`")),
            "{opt}: {:?}",
            a.summary.notes
        );
    }
}

#[test]
fn link_time_optimised_programs_are_named_from_their_compile_time_units() {
    // With -flto, gcc describes the code, the frames and the locations in
    // a link-time unit whose DIEs refer (DW_FORM_ref_addr) to the
    // compile-time units of lt_main.c and lt_work.c for every name and
    // type. In the region, fill (a separate unit, not inlined) reads
    // a->base once into its local b (8 load bytes of ar), stores 32
    // doubles through b and loads them back (256 + 256 bytes, 32
    // addresses, of the block ar.base holds), stores a->used once (8
    // store bytes of ar) and loads table[0..32] once each (256 bytes).
    let pins = format!("-I{}", root().join("tests/c").display());
    let work = root().join("tests/c/lt_work.c");
    let work = work.to_str().unwrap();
    let (dir, exe, _o, _evs, _end) =
        trace("tests/c/lt_main.c", &["-O2", "-flto", &pins, work], &[]);
    let mut namer = ProgramNamer::new(Some(&exe), &[root().join("tests/c")]);
    let a = mapvis::filter::analyse(&dir.path().join("t.mvt"), &mut namer).expect("analysis");
    let bytes = |kind| -> BTreeMap<String, (u64, u64)> {
        by_var_in(&a, kind, stats::Grouping::Root)
            .into_iter()
            .map(|(k, v)| (k, (v.0, v.1)))
            .collect()
    };
    let stack = bytes(MemKind::Stack);
    assert_eq!(
        stack.get("ar"),
        Some(&(8, 8)),
        "main's struct local: {stack:?}"
    );
    // The frame rows carry their functions' names, read through the
    // link-time unit's DW_AT_abstract_origin too.
    assert!(stack.contains_key("<fill frame>"), "{stack:?}");
    assert!(!stack.keys().any(|k| k.contains("anonymous")), "{stack:?}");
    let globals = bytes(MemKind::Global);
    assert_eq!(globals.get("table"), Some(&(256, 0)), "{globals:?}");
    assert_eq!(globals.len(), 1, "no other global rows: {globals:?}");
    let heap = by_var(&a, stats::Grouping::Root);
    assert_eq!(heap.get("ar.base"), Some(&(256, 256, 32)), "{heap:?}");
    assert_eq!(heap.len(), 1, "no other heap rows: {heap:?}");
}

#[test]
fn the_figures_hover_gives_an_owner_rows_full_path() {
    // The row `x` is the buffer of x.coefs (100 doubles): the complete
    // pattern's hover calls the variable `x (x.coefs)` and spells each
    // element by the path (by byte offset, `x.coefs+56` for coefs[7]: the
    // block's element type is not known), and the array figure of `x` as
    // 10 x 10 doubles spells its cells `x.coefs[row][col]`. The figure
    // files keep the row's name.
    let (dir, exe) = compile("tests/c/rt_owner.cpp", &["-lstdc++"]);
    mapvis_script(
        dir.path(),
        &format!(
            "load_exe {}; run_gleipnir; memory_trace_analysis; set_mem_alloc H; \
             complete_memory_access_pattern; 2d_memory_access_pattern x 10 8",
            exe.display()
        ),
    );
    let page = |name: &str| {
        std::fs::read_to_string(dir.path().join("figures").join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let complete = page("complete_memory_access_pattern.html");
    assert!(complete.contains("\"x (x.coefs)\""), "variable hover");
    assert!(complete.contains("\"x.coefs+56\""), "element hover");
    assert!(
        !complete.contains("\"x+56\""),
        "no element by the row's name"
    );
    let array = page("2d_memory_access_pattern_x.html");
    assert!(array.contains("x.coefs[%{y}][%{x}]"), "array hover");
}

#[test]
fn a_block_typed_through_a_macro_is_read_with_its_holders_type() {
    // rt_macro.c: `box *b` where `box` is a macro for the typedef box_8.
    // At -O0 the loop loads b->n 65 times (64 iterations and the exit
    // test) and b->buf 64 times: 129 loads of 8 bytes at 2 addresses of
    // b's block. It stores 64 doubles through b->buf: 512 bytes at 64
    // addresses of the block b->buf holds, named by that member, not as
    // an element of b (`(b)[i].buf`), though b's block is longer than
    // one box_8.
    let a = analyse("tests/c/rt_macro.c");
    let got = by_var(&a, stats::Grouping::Root);
    assert_eq!(got.get("b"), Some(&(1032, 0, 2)), "{got:?}");
    assert_eq!(got.get("b->buf"), Some(&(0, 512, 64)), "{got:?}");
    assert_eq!(got.len(), 2, "no other heap rows: {got:?}");
}

#[test]
fn a_librarys_private_members_are_left_out_of_a_path() {
    // rtlib.hpp is installed under a usr/include folder: a library's
    // header. t (rtlib::Table) keeps its 100 doubles in the private
    // member cells_: 100 stores of 8 (the first loop) and 100 loads of 8
    // (the third), named `t`. s (rtlib::Span) keeps 50 doubles in the
    // public member data: 50 stores of 8, named `s.data`. At -O2 the
    // loops may move 16 bytes at a time: the same bytes.
    let sys = format!("-I{}", root().join("tests/c/rt_sys/usr/include").display());
    for opt in ["-O0", "-O2"] {
        let (dir, exe, _o, _evs, _end) =
            trace("tests/c/rt_libmember.cpp", &[opt, &sys, "-lstdc++"], &[]);
        let mut namer = ProgramNamer::new(Some(&exe), &[root().join("tests/c")]);
        let a = mapvis::filter::analyse(&dir.path().join("t.mvt"), &mut namer).expect("analysis");
        let got: BTreeMap<String, (u64, u64)> = by_var(&a, stats::Grouping::Root)
            .into_iter()
            .map(|(k, v)| (k, (v.0, v.1)))
            .collect();
        assert_eq!(got.get("t"), Some(&(800, 800)), "{opt}: {got:?}");
        assert_eq!(got.get("s.data"), Some(&(0, 400)), "{opt}: {got:?}");
        assert_eq!(got.len(), 2, "{opt}: no other heap rows: {got:?}");
    }
}
