//! Naming memory that is neither a heap block nor a fixed stack slot
//! (issue 26, item 6): variable-length arrays and `alloca` blocks, named by
//! the statement that made them from the tracer's STACK_ALLOC records;
//! arrays mapped with `mmap`, named by the statement that mapped them; and
//! a signal handler's locals on an alternate stack that malloc allocated,
//! named as the handler's locals rather than as the heap block. Each
//! program is compiled and traced for real; the bytes are worked out by
//! hand from the source.
mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::*;
use mapvis::filter::Analysis;
use mapvis::filter::{stats, MemKind};
use mapvis::trace::naming::ProgramNamer;

fn analyse(rel: &str, cc: &[&str]) -> Analysis {
    let (dir, exe, _o, _evs, _end) = trace(rel, cc, &[]);
    let mut namer = ProgramNamer::new(Some(&exe), &[root().join("tests/c")]);
    mapvis::filter::analyse(&dir.path().join("t.mvt"), &mut namer).expect("analysis")
}

/// variable -> (scope, load_bytes, store_bytes, site).
fn by_var(a: &Analysis) -> BTreeMap<String, (String, u64, u64, String)> {
    let df = stats::per_variable(a, MemKind::All).unwrap();
    let s = |c: &str| df.column(c).unwrap().str().unwrap().clone();
    let n = |c: &str| df.column(c).unwrap().u64().unwrap().clone();
    let (names, scope, site) = (s("variable"), s("scope"), s("site"));
    let (lb, sb) = (n("load_bytes"), n("store_bytes"));
    (0..df.height())
        .map(|i| {
            (
                names.get(i).unwrap().to_string(),
                (
                    scope.get(i).unwrap().to_string(),
                    lb.get(i).unwrap(),
                    sb.get(i).unwrap(),
                    site.get(i).unwrap_or("").to_string(),
                ),
            )
        })
        .collect()
}

fn site(marker: &str) -> String {
    let rel = if marker == "MAP" {
        "tests/c/nm_altstack_mmap.c"
    } else {
        "tests/c/nm_vla.c"
    };
    let file = PathBuf::from(rel);
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    format!("{name}:{}", line_of(rel, &format!("/* {marker} */")))
}

/// n = 64. `v`: 64 stores of 8 bytes, then 64 loads (p[i] = v[i] * 2 + …).
/// `grid`: 64 × 4 stores of 4 bytes, then 64 loads of grid[i][1]. `p`:
/// 64 stores, then `total` loads all 64 (a callee reading the caller's
/// block). At -O2 gcc vectorizes the loops, which changes the access
/// count, never the bytes.
fn check_vla(a: &Analysis, opt: &str) {
    let got = by_var(a);
    let want = [
        ("v", 512, 512, site("VLA")),
        ("grid", 256, 1024, site("VLA2")),
        ("p", 512, 512, site("ALLOCA")),
    ];
    for (name, l, s, at) in want {
        assert_eq!(
            got.get(name),
            Some(&("S".to_string(), l, s, at)),
            "-{opt} {name}: (scope, load_bytes, store_bytes, site); all: {got:?}"
        );
    }
}

#[test]
fn variable_length_arrays_and_alloca_blocks_are_named_by_their_statements() {
    check_vla(&analyse("tests/c/nm_vla.c", &[]), "O0");
    check_vla(&analyse("tests/c/nm_vla.c", &["-O2"]), "O2");
}

/// `grid`: 512 stores of 8 bytes, named by the mmap statement with scope H
/// (a block, as heap blocks are). The handler's `local`: 32 stores and 32
/// loads of 8 bytes; the malloc'ed block that holds the alternate stack
/// (`ss.ss_sp`) has no access of its own.
#[test]
fn mapped_arrays_and_handler_locals_on_an_alternate_stack_are_named() {
    for opt in ["-O0", "-O2"] {
        let a = analyse("tests/c/nm_altstack_mmap.c", &[opt]);
        let got = by_var(&a);
        assert_eq!(
            got.get("grid"),
            Some(&("H".to_string(), 0, 4096, site("MAP"))),
            "{opt} grid; all: {got:?}"
        );
        if opt == "-O0" {
            assert_eq!(
                got.get("local").map(|v| (v.0.as_str(), v.1, v.2)),
                Some(("S", 256, 256)),
                "{opt} local; all: {got:?}"
            );
        }
        let alt = got.get("ss.ss_sp").map(|v| (v.1, v.2)).unwrap_or((0, 0));
        assert_eq!(
            alt,
            (0, 0),
            "{opt}: nothing is named after the alternate stack's block: {got:?}"
        );
    }
}
