//! `set_region`: what `run_gleipnir` traces. `pins` (the default) the
//! accesses between GL_START and GL_STOP, `off` the whole run; the setting
//! is saved with the folder's; `-DGL_NOPINS` empties the pins; the kinds
//! not built yet are refused and change nothing; pages name the region.
//! Counts worked by hand
//! from `tests/c/rg_pinned.c`: 64 loads of `a` between the pins, 64
//! stores and 64 loads in the whole run.
mod common;

use std::path::Path;

use common::mapvis_script;

/// Copies the program into `dir` as `r.c`.
fn program(dir: &Path) {
    let src = common::root().join("tests/c/rg_pinned.c");
    std::fs::copy(src, dir.join("r.c")).unwrap();
}

/// Tcl printing `A accesses loads stores` of `a` from memory_stats' dicts.
const A_COUNTS: &str = "foreach d [memory_stats] { if {[dict get $d variable] eq \"a\"} { \
                        puts \"A [dict get $d accesses] [dict get $d loads] [dict get $d stores]\" } }";

/// The `A ...` lines printed, in order.
fn counts(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| l.starts_with("A "))
        .map(String::from)
        .collect()
}

#[test]
fn set_region_off_traces_the_whole_run_and_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    program(dir.path());
    let out = mapvis_script(
        dir.path(),
        &format!(
            "set_mem_alloc G; puts \"R [set_region]\"; compile_exe r.c; run_gleipnir; \
             memory_trace_analysis; {A_COUNTS}; puts \"R [set_region off]\"; run_gleipnir; \
             memory_trace_analysis; {A_COUNTS}"
        ),
    );
    assert_eq!(counts(&out), ["A 64 64 0", "A 128 64 64"], "{out}");
    // The pages say which region they were drawn from.
    let drawn = |script: &str| {
        mapvis_script(dir.path(), script);
        let page = dir
            .path()
            .join("figures/complete_memory_access_pattern.html");
        let html = std::fs::read_to_string(page).unwrap();
        let p = html
            .find("id=\"mapvis-drawn-from\">")
            .expect("a Drawn from line");
        html[p..].lines().next().unwrap().to_string()
    };
    let whole = drawn("complete_memory_access_pattern a");
    assert!(whole.contains(", region: the whole run"), "{whole}");
    let pinned = drawn(
        "set_region pins; run_gleipnir; memory_trace_analysis; complete_memory_access_pattern a",
    );
    assert!(
        pinned.contains(", region: pins (GL_START to GL_STOP)"),
        "{pinned}"
    );
    mapvis_script(
        dir.path(),
        "set_region off; run_gleipnir; memory_trace_analysis",
    );
    assert!(out.contains("R pins") && out.contains("R off"), "{out}");
    assert!(out.contains("region: off: the whole run"), "{out}");
    // A new session in the folder keeps it; export_hpcmp follows it.
    let out = mapvis_script(
        dir.path(),
        "puts \"R [set_region]\"; puts \"H [dict get [export_hpcmp h.json] scope]\"",
    );
    assert!(out.contains("R off") && out.contains("H whole"), "{out}");
}

#[test]
fn gl_nopins_empties_the_pins_and_the_unbuilt_kinds_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    program(dir.path());
    let out = mapvis_script(
        dir.path(),
        &format!(
            "set_mem_alloc G; compile_exe r.c -DGL_NOPINS; \
             puts \"E [catch {{run_gleipnir}} e] $e\"; \
             foreach k {{function lines window}} {{ puts \"K [catch {{set_region $k main}} e] $e\" }}; \
             puts \"R [set_region]\"; set_region off; run_gleipnir; memory_trace_analysis; {A_COUNTS}"
        ),
    );
    assert!(
        out.lines().any(|l| l.starts_with("E 1 ")
            && l.contains("no region was traced")
            && l.contains("set_region off")),
        "{out}"
    );
    let refused: Vec<&str> = out.lines().filter(|l| l.starts_with("K 1 ")).collect();
    assert_eq!(refused.len(), 3, "{out}");
    assert!(
        refused.iter().all(|l| l.contains("is not available yet")),
        "{out}"
    );
    assert!(out.contains("R pins"), "the refusals change nothing: {out}");
    assert_eq!(counts(&out), ["A 128 64 64"], "{out}");
}
