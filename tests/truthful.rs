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

/// `mapvis -c` shows what the commands print, as a script does: the last
/// command's value (memory_stats' dict, which repeats its table) is not
/// printed after the table. `--echo` prints it as well, and `help`,
/// whose value is its text, is shown without it.
#[test]
fn dash_c_prints_what_the_commands_print_and_echo_adds_the_value() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join(PROG), dir.path().join("p.c")).unwrap();
    mapvis_script(
        dir.path(),
        "compile_exe p.c; run_gleipnir; memory_trace_analysis",
    );
    let quiet = mapvis_script(dir.path(), "set n 1; memory_stats");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mapvis"))
            .current_dir(dir.path())
            .env("HOME", dir.path())
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let echoed = run(&["--echo", "-c", "set n 1; memory_stats"]);
    let value = echoed
        .strip_prefix(quiet.as_str())
        .unwrap_or_else(|| panic!("--echo changed the table:\n{quiet}\n---\n{echoed}"));
    assert!(
        value.trim().len() > 20,
        "--echo printed no value:\n{echoed}"
    );
    assert!(quiet.contains("accesses"), "no table:\n{quiet}");
    let first = value.lines().next().unwrap();
    assert!(
        !quiet.contains(first),
        "the value is printed without --echo:\n{quiet}"
    );
    assert_eq!(run(&["-c", "set x 5"]), "");
    assert_eq!(run(&["--echo", "-c", "set x 5"]), "5\n");
    assert!(run(&["-c", "help"]).contains("help GROUP"));
}

/// `alloc_sites` on a Valgrind trace shows the program's frames and ends
/// each stack at `main`: no C start-up frames (`_start`,
/// `__libc_start_main`) and no words read past the first frame (`0x37
/// (?)`). With the C library's debug file (libc6-dbg, installed by
/// `.ci/run`), its internal functions are named, not shown as addresses.
/// The oracle is scripts/rowcol.c: `malloc` on line 16 in main, and a
/// `printf` in main whose stdio buffer the C library allocates.
#[test]
fn alloc_sites_stacks_end_at_main_with_every_frame_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join("scripts/rowcol.c"), dir.path().join("rowcol.c")).unwrap();
    let out = mapvis_script(
        dir.path(),
        "compile_exe rowcol.c; set_mem_alloc all; run_gleipnir; alloc_sites",
    );
    let stacks: Vec<Vec<&str>> = out
        .split("\nsite #")
        .skip(1)
        .map(|s| {
            s.lines()
                .skip(1)
                .take_while(|l| l.starts_with("    "))
                .map(str::trim)
                .collect()
        })
        .collect();
    assert_eq!(stacks.len(), 2, "two sites (main's and stdio's):\n{out}");
    for stack in &stacks {
        assert!(
            stack
                .last()
                .is_some_and(|f| f.starts_with("main (rowcol.c:")),
            "the stack does not end at main: {stack:?}\n{out}"
        );
        for f in stack {
            assert!(!f.starts_with("0x"), "an unnamed frame {f}: {stack:?}");
            assert!(!f.contains("_start"), "a start-up frame {f}: {stack:?}");
        }
    }
    let line = line_of("scripts/rowcol.c", "malloc");
    assert!(
        stacks.contains(&vec![format!("main (rowcol.c:{line})").as_str()]),
        "{stacks:?}"
    );
    assert!(
        stacks
            .iter()
            .any(|s| s[0].starts_with("_IO_file_doallocate")
                && s.iter().any(|f| f.starts_with("printf"))),
        "{stacks:?}"
    );
}

/// A note is about the region: tests/c/outside_notes.c passes two blocks'
/// addresses to a function instead of storing them, one before GL_START
/// (never touched in the region) and one inside. The analysis prints the
/// note on the inside block's line only; `notes` lists both, the other
/// under its own heading, and the saved analysis keeps it.
#[test]
fn notes_on_blocks_the_region_never_touches_are_kept_but_not_printed() {
    const SRC: &str = "tests/c/outside_notes.c";
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root().join(SRC), dir.path().join("o.c")).unwrap();
    let out = mapvis_script(
        dir.path(),
        "compile_exe o.c; run_gleipnir; memory_trace_analysis",
    );
    let (before, inside) = (line_of(SRC, "/* before */"), line_of(SRC, "/* inside */"));
    let says = |text: &str, line: u32| {
        text.contains(&format!(
            "the result of malloc on line {line} is passed to use"
        ))
    };
    assert!(says(&out, inside), "no note on the region's block:\n{out}");
    assert!(
        !says(&out, before),
        "a note on a block outside the region:\n{out}"
    );
    let listed = mapvis_script(dir.path(), "notes");
    let heading = listed
        .find("about heap blocks the region never touched")
        .unwrap_or_else(|| panic!("{listed}"));
    let at = |line: u32| {
        listed
            .find(&format!(
                "the result of malloc on line {line} is passed to use"
            ))
            .unwrap_or_else(|| panic!("notes lacks line {line}:\n{listed}"))
    };
    assert!(at(inside) < heading && heading < at(before), "{listed}");
}
