//! A partial analysis is marked wherever it is shown, and a figure says
//! which saved run it shows.
//!
//! `tests/c/trace_segv.c` stores 50 ints into `arr` inside the region and
//! then dies of SIGSEGV before `GL_STOP`: its analysis covers the region
//! only up to the crash. `memory_stats`, `cache_stats`, the figure's page,
//! its title and the folder's index must all say PARTIAL, with the reason.
//! A whole run (`tests/c/loc_small.c`) must never say it.
mod common;
use common::{compile, mapvis_script as mapvis};

fn page(dir: &std::path::Path, name: &str) -> String {
    std::fs::read_to_string(dir.join("figures").join(name))
        .unwrap_or_else(|e| panic!("figures/{name}: {e}"))
}

#[test]
fn a_crashed_runs_reports_and_figures_say_partial() {
    let (dir, exe) = compile("tests/c/trace_segv.c", &[]);
    let out = mapvis(
        dir.path(),
        &format!(
            "load_exe {}; set_mem_alloc H; catch run_gleipnir; memory_trace_analysis; \
             set ms [memory_stats]; cache_stats; complete_memory_access_pattern; \
             foreach d $ms {{ puts \"ROW [dict get $d variable] [dict get $d accesses]\" }}",
            exe.display()
        ),
    );
    // The 50 stores into arr before the crash are all there.
    assert!(out.lines().any(|l| l == "ROW arr 50"), "{out}");
    let warnings: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("warning: this analysis is PARTIAL"))
        .collect();
    assert_eq!(warnings.len(), 2, "memory_stats and cache_stats:\n{out}");
    assert!(
        warnings.iter().all(|w| w.contains("signal 11 (SIGSEGV)")),
        "{warnings:?}"
    );
    let html = page(dir.path(), "complete_memory_access_pattern.html");
    assert!(html.contains("(PARTIAL analysis)</h1>"), "title unmarked");
    assert!(
        html.contains("<p class=\"partial\" id=\"mapvis-drawn-from\">Drawn from PARTIAL analysis"),
        "page unmarked"
    );
    let index = page(dir.path(), "index.html");
    assert!(index.contains("PARTIAL analysis (the program was ended by signal 11"));
}

#[test]
fn a_whole_run_is_not_marked_and_figures_name_their_run() {
    let (dir, exe) = compile("tests/c/loc_small.c", &[]);
    let out = mapvis(
        dir.path(),
        &format!(
            "load_exe {}; run_gleipnir; memory_trace_analysis; memory_stats; cache_stats; \
             save_run first; use_run first; complete_memory_access_pattern",
            exe.display()
        ),
    );
    assert!(!out.contains("PARTIAL"), "{out}");
    let html = page(dir.path(), "complete_memory_access_pattern.html");
    assert!(!html.contains("PARTIAL"));
    assert!(
        html.contains("<p class=\"note\" id=\"mapvis-drawn-from\">Drawn from run first: "),
        "the page does not name its run"
    );
    let index = page(dir.path(), "index.html");
    assert!(
        index.contains("run first: "),
        "the index does not name the run"
    );
}
