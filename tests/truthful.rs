//! What mapvis says and names tells the truth: a note is about the
//! program and the region and says something the user can act on, and a
//! figure's file is named by the user's words, with no internal id. The
//! oracle is the C source: what its statements do is read off by hand.

mod common;

use common::{line_of, mapvis_script, root};

const PROG: &str = "tests/c/passed_block.c";

/// A block whose address is passed to a function, not stored, is named
/// by where the program keeps it, and its note says why the statement
/// could not name it. The pins header lies outside the source folder
/// (compile_exe puts mapvis's copy on the include path): it is not a
/// missing header, and the note does not send the user to look for it.
#[test]
fn a_note_on_a_block_names_no_header_that_is_not_missing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::copy(root().join(PROG), dir.path().join("src/p.c")).unwrap();
    let out = mapvis_script(
        dir.path(),
        "compile_exe src/p.c; run_gleipnir; memory_trace_analysis",
    );
    let line = line_of(PROG, "/* passed */");
    let note = out
        .lines()
        .find(|l| l.starts_with(&format!("note: heap blocks allocated at p.c:{line} ")))
        .unwrap_or_else(|| panic!("no note on the block of line {line}:\n{out}"));
    assert!(
        note.contains(&format!(
            "the result of malloc on line {line} is passed to use, not stored"
        )),
        "{note}"
    );
    assert!(!note.contains("were not found"), "{note}");
    assert!(!note.contains("gleipnir.h"), "{note}");
}

/// A figure's file is named by the words the user gave, made file-safe
/// and nothing more (mapvisual's names): `net->w1[i]#1`, the first row
/// block reached through `net`, gives `net.w1_i_1`, and `grid` gives
/// `grid`; no variable id (`_v11`) is added.
#[test]
fn figure_files_are_named_by_the_users_words() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("tests/c/figure_names.c"),
        dir.path().join("f.c"),
    )
    .unwrap();
    let out = mapvis_script(
        dir.path(),
        "compile_exe f.c; set_mem_alloc all; run_gleipnir; memory_trace_analysis; \
         2d_memory_access_pattern {net->w1[i]#1} 4 8; 2d_memory_access_pattern grid 4 8",
    );
    let mut pages: Vec<String> = std::fs::read_dir(dir.path().join("figures"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("2d_"))
        .collect();
    pages.sort();
    assert_eq!(
        pages,
        [
            "2d_memory_access_pattern_grid.html",
            "2d_memory_access_pattern_net.w1_i_1.html"
        ],
        "{out}"
    );
}
