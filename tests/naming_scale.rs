//! Naming at scale and on hostile sources: a file with hundreds of
//! allocation statements (every block named by its own variable), a macro
//! bomb that gcc never expands but a naive reader would, and an allocation
//! nested 60 000 parentheses deep. Every program is compiled -g -O0 and
//! traced for real; the expected bytes are worked out by hand in the
//! comments. How fast many sites are named is measured by
//! `scripts/bench.sh sites`, not here.
mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use mapvis::filter::analysis::Analysis;
use mapvis::filter::{stats, MemKind};
use mapvis::trace::naming::ProgramNamer;
use mapvis::trace::record::run_trace;

/// Traces the compiled program `exe` (its trace goes to `dir`) and
/// analyses it.
fn analyse_exe(dir: &Path, exe: &Path, src_paths: &[PathBuf]) -> Analysis {
    let req = request(dir, exe, &[]);
    run_trace(&req).expect("run the tracer");
    let mut namer = ProgramNamer::new(Some(exe), src_paths);
    mapvis::filter::analyse(&req.trace_file, &mut namer).expect("analysis")
}

/// Compiles `src` (a file in `dir`) with `cc -g -O0` and a stack as large
/// as the system allows (gcc's own parser recurses once per parenthesis).
fn compile_deep(dir: &Path, src: &Path) -> PathBuf {
    let exe = dir.join("deep");
    let out = Command::new("bash")
        .args([
            "-c",
            "ulimit -s unlimited; exec cc \"$@\"",
            "cc",
            "-g",
            "-O0",
        ])
        .arg(format!("-I{}", root().join("pins").display()))
        .arg("-o")
        .arg(&exe)
        .arg(src)
        .output()
        .expect("run cc");
    assert!(
        out.status.success(),
        "compiling {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// Heap variable -> (load_bytes, store_bytes, distinct addresses), from
/// the per-variable statistics.
fn by_var(a: &Analysis) -> BTreeMap<String, (u64, u64, u64)> {
    let df = stats::per_variable(a, MemKind::Heap).unwrap();
    let counts = |c: &str| -> Vec<u64> {
        let col = df.column(c).unwrap().u64().unwrap();
        col.into_no_null_iter().collect()
    };
    let names = df.column("variable").unwrap().str().unwrap();
    let rows = counts("load_bytes")
        .into_iter()
        .zip(counts("store_bytes"))
        .zip(counts("addresses"));
    names
        .into_no_null_iter()
        .zip(rows)
        .map(|(name, ((l, s), n))| (name.to_string(), (l, s, n)))
        .collect()
}

#[test]
fn every_block_of_many_allocation_statements_gets_its_own_name() {
    // p0 .. p599, each one statement; odd ones sized with `sizeof *pK`, so
    // the declaration is looked up in main's scope of 600 declarations.
    let n = 600;
    let dir = tempfile::tempdir().unwrap();
    let mut c = String::from("#include <stdlib.h>\n#include \"gleipnir.h\"\nint main(void)\n{\n");
    for k in 0..n {
        let size = if k % 2 == 1 {
            format!("sizeof *p{k}")
        } else {
            "sizeof(double)".to_string()
        };
        c.push_str(&format!(
            "    double *p{k} = malloc({} * {size});\n",
            k % 7 + 1
        ));
    }
    c.push_str("    GL_START;\n");
    for k in 0..n {
        c.push_str(&format!("    p{k}[{}] = {k};\n", k % 7));
    }
    c.push_str("    GL_STOP;\n    return 0;\n}\n");
    let src = dir.path().join("sites.c");
    std::fs::write(&src, c).unwrap();
    let exe = compile_deep(dir.path(), &src);
    let a = analyse_exe(dir.path(), &exe, &[]);
    let got = by_var(&a);
    // Each block: one 8-byte store, at its last element.
    for k in 0..n {
        assert_eq!(got.get(&format!("p{k}")), Some(&(0, 8, 1)), "p{k}");
    }
    assert_eq!(got.len(), n, "one row per block");
    // The element type and count came from the statement: K % 7 + 1 doubles.
    let p13 = a.vars.iter().find(|v| v.name == "p13").expect("p13");
    assert_eq!(
        (p13.elem_size, p13.size, p13.dims.clone()),
        (8, 7 * 8, vec![7]),
        "{p13:?}"
    );
}

#[test]
fn a_macro_bomb_is_not_expanded_and_the_block_is_named_by_its_holder() {
    let rel = "tests/c/nm_bomb.c";
    let (dir, exe) = compile(rel, &[]);
    let a = analyse_exe(dir.path(), &exe, &[root().join("tests/c")]);
    let got = by_var(&a);
    let site = format!("nm_bomb.c:{}", line_of(rel, "@a"));
    // a: 8 stores, then 4 loads; b: 4 stores. 8 bytes each. The statement
    // reader gives up on the macro; main's local `a` holds the block.
    assert_eq!(got.get("a"), Some(&(32, 64, 8)), "{got:?}");
    assert!(!got.contains_key(&site), "{got:?}");
    assert_eq!(got.get("b"), Some(&(0, 32, 4)), "{got:?}");
    let note = a
        .summary
        .notes
        .iter()
        .find(|n| n.contains(&site))
        .unwrap_or_else(|| panic!("a note on {site}: {:?}", a.summary.notes));
    assert!(note.contains("was not expanded"), "{note}");
    assert!(note.contains("tokens"), "{note}");
    // The `#if E40(1)` could not be evaluated either, and says so.
    let line = line_of(rel, "#if E40(1)");
    assert!(
        a.summary
            .notes
            .iter()
            .any(|n| n.contains(&format!("nm_bomb.c:{line}: #if E40(1)"))),
        "{:?}",
        a.summary.notes
    );
}

#[test]
fn an_allocation_nested_60000_parentheses_deep_is_named() {
    let depth = 60_000;
    let (open, close) = ("(".repeat(depth), ")".repeat(depth));
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("deep.c");
    std::fs::write(
        &src,
        format!(
            "#include <stdlib.h>\n#include \"gleipnir.h\"\nint main(void)\n{{\n\
             \x20   double *p = malloc({open}2{close} * sizeof(double));\n\
             \x20   double *q = {open}malloc(16){close};\n\
             \x20   GL_START;\n    p[1] = 1;\n    q[0] = 2;\n    q[1] = 3;\n    GL_STOP;\n\
             \x20   return 0;\n}}\n"
        ),
    )
    .unwrap();
    let exe = compile_deep(dir.path(), &src);
    let a = analyse_exe(dir.path(), &exe, &[]);
    let got = by_var(&a);
    // p: one 8-byte store; q: two.
    assert_eq!(got.get("p"), Some(&(0, 8, 1)), "{got:?}");
    assert_eq!(got.get("q"), Some(&(0, 16, 2)), "{got:?}");
    assert_eq!(got.len(), 2, "{got:?}");
}
