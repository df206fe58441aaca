//! C source naming: the allocation target, element type and size of every
//! marked allocation in `tests/c/sym_alloc.c`.

use std::path::PathBuf;
use std::process::Command;

use mapvis::trace::naming::{AllocTarget, CSource, SizeExpr};

fn source_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/c/sym_alloc.c")
}

fn load() -> (CSource, String) {
    let text = std::fs::read_to_string(source_path()).expect("read sym_alloc.c");
    (CSource::parse(text.clone()), text)
}

/// 1-based line of the marker comment `/* @key */`.
fn line_of(text: &str, key: &str) -> u32 {
    let marker = format!("/* @{key} */");
    let index = text
        .lines()
        .position(|l| l.contains(&marker))
        .unwrap_or_else(|| panic!("marker {marker} not in sym_alloc.c"));
    index as u32 + 1
}

fn named(name: &str, elem_type: Option<&str>, alloc_fn: &str, size: Option<&str>) -> AllocTarget {
    AllocTarget::Named {
        name: name.to_string(),
        elem_type: elem_type.map(str::to_string),
        alloc_fn: alloc_fn.to_string(),
        size_expr: size.map(str::to_string),
    }
}

fn size(factors: &[Option<i64>], elem_bytes: Option<i64>, elem_type: Option<&str>) -> SizeExpr {
    SizeExpr {
        factors: factors.to_vec(),
        elem_bytes,
        elem_type: elem_type.map(str::to_string),
    }
}

#[test]
fn the_test_program_is_real_c() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("sym_alloc");
    let status = Command::new("cc")
        .args(["-std=c11", "-g", "-O0", "-o"])
        .arg(&exe)
        .arg(source_path())
        .status()
        .expect("run cc");
    assert!(status.success());
    let run = Command::new(&exe).output().unwrap();
    assert_eq!(run.status.code(), Some(3), "{run:?}");
}

#[test]
fn declarations_and_assignments() {
    let (src, text) = load();
    let at = |key: &str| src.allocation_target(line_of(&text, key));
    assert_eq!(
        at("arr"),
        named("arr", Some("int"), "malloc", Some("n * sizeof(int)"))
    );
    assert_eq!(
        at("A"),
        named(
            "A",
            Some("int"),
            "malloc",
            Some("ROWS * COLS * sizeof(int)")
        )
    );
    assert_eq!(
        at("m"),
        named(
            "m",
            Some("double *"),
            "calloc",
            Some("ROWS, sizeof(double *)")
        )
    );
    assert_eq!(
        at("multi_decl"),
        named("B", Some("int"), "malloc", Some("CELLS * sizeof(*B)"))
    );
    assert_eq!(
        at("parens"),
        named("name", Some("char"), "malloc", Some("BLOCK"))
    );
    assert_eq!(
        at("in_condition"),
        named("sp", Some("short"), "malloc", Some("BLOCK * sizeof(short)"))
    );
    assert_eq!(
        at("struct_size"),
        named(
            "one",
            Some("struct point"),
            "malloc",
            Some("sizeof(struct point)")
        )
    );
    assert_eq!(
        at("array_pointer"),
        named(
            "mat",
            Some("int [16]"),
            "malloc",
            Some("ROWS * sizeof *mat")
        )
    );
    // `free(arr); arr = malloc(...)`: the statement with the allocator wins.
    assert_eq!(
        at("two_statements"),
        named("arr", Some("int"), "malloc", Some("sizeof arr[0] * 7"))
    );
}

#[test]
fn statement_spread_over_lines() {
    let (src, text) = load();
    let expected = named(
        "grid",
        Some("float"),
        "malloc",
        Some("ROWS * COLS * sizeof(float)"),
    );
    for key in ["multi_line_start", "multi_line_mid", "multi_line_end"] {
        assert_eq!(
            src.allocation_target(line_of(&text, key)),
            expected,
            "{key}"
        );
    }
}

#[test]
fn member_element_and_dereferenced_targets() {
    let (src, text) = load();
    let at = |key: &str| src.allocation_target(line_of(&text, key));
    assert_eq!(
        at("member_dot"),
        named(
            "h.counts",
            Some("unsigned long"),
            "calloc",
            Some("NBUCKETS, sizeof(unsigned long)")
        )
    );
    assert_eq!(
        at("member_arrow"),
        named(
            "s->buf",
            Some("int"),
            "malloc",
            Some("cap * sizeof *s->buf")
        )
    );
    assert_eq!(
        at("realloc"),
        named(
            "s->buf",
            Some("int"),
            "realloc",
            Some("s->cap * sizeof(int)")
        )
    );
    assert_eq!(
        at("element"),
        named("rows[i]", Some("int"), "malloc", Some("COLS * sizeof(int)"))
    );
    assert_eq!(
        at("cast_only"),
        named(
            "o->data",
            Some("float"),
            "malloc",
            Some("2 * sizeof(float)")
        )
    );
    assert_eq!(
        at("deref_target"),
        named("*out", Some("int"), "malloc", Some("n * sizeof **out"))
    );
}

#[test]
fn aligned_allocators() {
    let (src, text) = load();
    let at = |key: &str| src.allocation_target(line_of(&text, key));
    assert_eq!(
        at("aligned_alloc"),
        named("aligned", Some("uint8_t"), "aligned_alloc", Some("4096"))
    );
    assert_eq!(
        at("posix_memalign"),
        named(
            "p",
            Some("int32_t"),
            "posix_memalign",
            Some("n * sizeof(int32_t)")
        )
    );
}

#[test]
fn wrappers_and_returned_blocks() {
    let (src, text) = load();
    let at = |key: &str| src.allocation_target(line_of(&text, key));
    assert_eq!(at("wrapper_inner"), AllocTarget::Returned);
    assert_eq!(at("return_direct"), AllocTarget::Returned);
    assert_eq!(at("returned_later"), AllocTarget::Returned);
    assert_eq!(
        at("wrapper_call"),
        named("v", Some("long"), "xmalloc", Some("n * sizeof(long)"))
    );
}

#[test]
fn lines_without_a_stored_allocation() {
    let (src, text) = load();
    match src.allocation_target(line_of(&text, "not_stored")) {
        AllocTarget::Unknown(why) => assert!(why.contains("strdup"), "{why}"),
        other => panic!("expected Unknown, got {other:?}"),
    }
    assert!(matches!(
        src.allocation_target(line_of(&text, "no_alloc")),
        AllocTarget::Unknown(_)
    ));
    // The `#define` block at the top has no calls at all.
    let define_line = text
        .lines()
        .position(|l| l.starts_with("#define ROWS"))
        .unwrap() as u32
        + 1;
    match src.allocation_target(define_line) {
        AllocTarget::Unknown(why) => assert!(why.contains("no function call"), "{why}"),
        other => panic!("expected Unknown, got {other:?}"),
    }
    assert!(matches!(src.allocation_target(0), AllocTarget::Unknown(_)));
    assert!(matches!(
        src.allocation_target(100_000),
        AllocTarget::Unknown(_)
    ));
}

#[test]
fn integer_defines() {
    let (src, _) = load();
    let defines = src.defines();
    assert_eq!(defines.get("ROWS"), Some(&8));
    assert_eq!(defines.get("COLS"), Some(&16));
    assert_eq!(defines.get("CELLS"), Some(&128));
    assert_eq!(defines.get("BLOCK"), Some(&64));
    assert_eq!(defines.get("ALIGN"), Some(&64));
    assert_eq!(defines.get("_POSIX_C_SOURCE"), Some(&200809));
    assert_eq!(defines.get("NAME"), None);
}

#[test]
fn size_expressions() {
    let (src, text) = load();
    assert_eq!(
        src.eval_size("ROWS * COLS * sizeof(int)"),
        Some(size(&[Some(8), Some(16)], Some(4), Some("int")))
    );
    assert_eq!(
        src.eval_size("ROWS * COLS * sizeof(int)").unwrap().total(),
        Some(512)
    );
    // calloc's two arguments multiply.
    assert_eq!(
        src.eval_size("ROWS, sizeof(double *)"),
        Some(size(&[Some(8)], Some(8), Some("double *")))
    );
    assert_eq!(
        src.eval_size("NBUCKETS, sizeof(unsigned long)"),
        Some(size(&[Some(32)], Some(8), Some("unsigned long")))
    );
    // Enum constants count up from the last explicit value.
    assert_eq!(
        src.eval_size("NEXTRA * sizeof(short)"),
        Some(size(&[Some(33)], Some(2), Some("short")))
    );
    assert_eq!(src.eval_size("BLOCK"), Some(size(&[Some(64)], None, None)));
    assert_eq!(src.eval_size("BLOCK").unwrap().total(), Some(64));
    // A run-time count: the element size is still known.
    let runtime = src.eval_size("n * sizeof(int32_t)").unwrap();
    assert_eq!(runtime, size(&[None], Some(4), Some("int32_t")));
    assert_eq!(runtime.total(), None);
    for (ty, bytes) in [
        ("char", 1),
        ("unsigned char", 1),
        ("short", 2),
        ("unsigned int", 4),
        ("long", 8),
        ("long long", 8),
        ("unsigned long long", 8),
        ("float", 4),
        ("double", 8),
        ("size_t", 8),
        ("uint8_t", 1),
        ("int64_t", 8),
        ("void *", 8),
        ("char **", 8),
        ("struct point", 16),
        ("struct stack", 16),
        ("hist_t", 16),
        ("int [4][2]", 32),
    ] {
        let expr = format!("sizeof({ty})");
        assert_eq!(
            src.eval_size(&expr).and_then(|s| s.elem_bytes),
            Some(bytes),
            "{expr}"
        );
    }
    // Incomplete struct: unknown size, but the type is reported.
    assert_eq!(
        src.eval_size("3 * sizeof(struct nowhere)"),
        Some(size(&[Some(3)], None, Some("struct nowhere")))
    );
    assert_eq!(src.eval_size("(("), None);

    // sizeof of variables, in the scope of the allocation's line.
    let eval_at = |key: &str, expr: &str| src.eval_size_at(expr, line_of(&text, key)).unwrap();
    assert_eq!(
        eval_at("multi_decl", "CELLS * sizeof(*B)"),
        size(&[Some(128)], Some(4), Some("int"))
    );
    assert_eq!(
        eval_at("array_pointer", "ROWS * sizeof *mat"),
        size(&[Some(8)], Some(64), Some("int [16]"))
    );
    assert_eq!(
        eval_at("two_statements", "sizeof arr[0] * 7"),
        size(&[Some(7)], Some(4), Some("int"))
    );
    assert_eq!(
        eval_at("member_arrow", "cap * sizeof *s->buf"),
        size(&[None], Some(4), Some("int"))
    );
    assert_eq!(
        eval_at("deref_target", "n * sizeof **out"),
        size(&[None], Some(4), Some("int"))
    );
    assert_eq!(
        eval_at("struct_size", "sizeof(struct point)"),
        size(&[], Some(16), Some("struct point"))
    );
}

#[test]
fn defines_refer_to_earlier_defines_and_sizeof() {
    let src = CSource::parse(
        "#define W 4\n#define H (W * 2)\n#define BYTES (H * sizeof(double))\n\
         #define MASK (0x10 | 1)\n#define BIG 1UL << 20\n#define F 1.5\n"
            .to_string(),
    );
    let d = src.defines();
    assert_eq!(d.get("W"), Some(&4));
    assert_eq!(d.get("H"), Some(&8));
    assert_eq!(d.get("BYTES"), Some(&64));
    assert_eq!(d.get("MASK"), Some(&17));
    assert_eq!(d.get("BIG"), Some(&(1 << 20)));
    assert_eq!(d.get("F"), None);
}

#[test]
fn invalid_recursive_definitions_do_not_hang() {
    let src = CSource::parse(
        "enum { A = B, B = A };\nstruct loop { struct loop inner; };\n\
         void f(void) { struct loop *l = malloc(A * sizeof(struct loop)); }\n"
            .to_string(),
    );
    let size = src.eval_size("A * sizeof(struct loop)").unwrap();
    assert_eq!(size.factors, vec![None]);
    assert_eq!(size.elem_bytes, None);
    assert_eq!(size.elem_type.as_deref(), Some("struct loop"));
    assert!(matches!(
        src.allocation_target(3),
        AllocTarget::Named { ref name, .. } if name == "l"
    ));
}

#[test]
fn more_allocation_shapes() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/c/sym_alloc_more.c");
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("more");
    let status = Command::new("cc")
        .args(["-std=c11", "-g", "-O0", "-o"])
        .arg(&exe)
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(Command::new(&exe).status().unwrap().code(), Some(0));

    let text = std::fs::read_to_string(&path).unwrap();
    let src = CSource::parse(text.clone());
    let at = |key: &str| {
        let marker = format!("/* @{key} */");
        let line = text.lines().position(|l| l.contains(&marker)).unwrap() as u32 + 1;
        src.allocation_target(line)
    };
    assert_eq!(at("assign_then_return"), AllocTarget::Returned);
    assert_eq!(at("pool_inner"), AllocTarget::Returned);
    assert_eq!(
        at("conditional"),
        named("p", Some("int"), "malloc", Some("n * sizeof *p"))
    );
    assert_eq!(
        at("in_macro_call"),
        named("q", Some("int"), "malloc", Some("C * sizeof(int)"))
    );
    assert_eq!(
        at("typedef_pointer"),
        named("head", Some("struct node"), "malloc", Some("sizeof *head"))
    );
    // A user function that is not named like an allocator: no size.
    assert_eq!(
        at("user_function"),
        named("head->next", Some("struct node"), "new_node", None)
    );
    assert_eq!(
        at("grid"),
        named("grid", Some("int *"), "malloc", Some("R * sizeof(int *)"))
    );
    assert_eq!(
        at("grid_row"),
        named("grid[i]", Some("int"), "malloc", Some("C * sizeof(int)"))
    );
    assert_eq!(
        at("matrix_rows"),
        named(
            "mat.rows",
            Some("double *"),
            "calloc",
            Some("R, sizeof(double *)")
        )
    );
    assert_eq!(
        at("matrix_row"),
        named(
            "mat.rows[i]",
            Some("double"),
            "calloc",
            Some("C, sizeof(double)")
        )
    );
    assert_eq!(
        at("for_init"),
        named("scratch", Some("char"), "malloc", Some("16"))
    );
    assert_eq!(
        at("designated"),
        named(
            "m2.rows",
            Some("double *"),
            "calloc",
            Some("R, sizeof(double *)")
        )
    );
    assert_eq!(
        at("positional"),
        named("pair[0]", Some("int"), "malloc", Some("sizeof(int)"))
    );
    assert_eq!(at("strdup"), named("copy", Some("char"), "strdup", None));
    assert_eq!(
        at("two_arg_wrapper"),
        named(
            "pooled",
            Some("long"),
            "pool_alloc",
            Some("8 * sizeof(long)")
        )
    );

    let line = |key: &str| {
        let marker = format!("/* @{key} */");
        text.lines().position(|l| l.contains(&marker)).unwrap() as u32 + 1
    };
    // struct node { int; struct node *; } is 16 bytes with padding.
    assert_eq!(
        src.eval_size_at("sizeof *head", line("typedef_pointer")),
        Some(size(&[], Some(16), Some("struct node")))
    );
    assert_eq!(
        src.eval_size_at("C, sizeof(double)", line("matrix_row")),
        Some(size(&[Some(6)], Some(8), Some("double")))
    );
}

/// The element size of an allocation whose type is a macro, as in the
/// matrix multiply's `TYPE *Y = (TYPE *) malloc(N * N * sizeof(TYPE))`:
/// the size is evaluated as the compiler saw it, with the file's macros
/// expanded, so the `#ifndef` default gives 4 bytes for `int`, and a
/// definition before it (as `-DTYPE=double` read from `-g3` debug
/// information puts in the table) gives 8. Without the expansion the
/// element size was unknown, and `what_if` refused the variable.
#[test]
fn a_type_macro_in_the_size_is_expanded() {
    let body = "#ifndef TYPE\n#define TYPE int\n#endif\nint main(void)\n{\n    int n = 4;\n    \
                TYPE *Y = (TYPE *) malloc(n * n * sizeof(TYPE));\n    return Y == 0;\n}\n";
    for (before, bytes) in [("", 4), ("#define TYPE double\n", 8)] {
        let text = format!("#include <stdlib.h>\n{before}{body}");
        let line = text.lines().position(|l| l.contains("malloc")).unwrap() as u32 + 1;
        let (target, size) = CSource::parse(text.clone()).resolve_allocation(line, 0);
        assert!(
            matches!(target, AllocTarget::Named { ref name, .. } if name == "Y"),
            "{target:?}"
        );
        let size = size.unwrap();
        assert_eq!(size.elem_bytes, Some(bytes), "{before:?}");
        assert_eq!(size.factors, vec![None, None], "{before:?}");
    }
}
