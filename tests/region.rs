//! `set_region`: what `run_gleipnir` traces. `pins` (the default) the
//! accesses between GL_START and GL_STOP, `off` the whole run, `function
//! NAME ?CALLS?` and `lines FILE:FIRST-LAST` a program built without pins
//! (`-DGL_NOPINS` empties them); the setting is saved with the folder's;
//! windows, not built yet, are refused and change nothing; pages name the
//! region. Counts worked by hand from the programs' comments
//! (`tests/c/rg_*.c`), and regions by code checked against the same
//! program's pins, at -O0 and -O2.
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
fn gl_nopins_empties_the_pins_and_bad_regions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    program(dir.path());
    let out = mapvis_script(
        dir.path(),
        &format!(
            "set_mem_alloc G; compile_exe r.c -DGL_NOPINS; \
             puts \"E [catch {{run_gleipnir}} e] $e\"; \
             foreach r {{{{window 0 10 5}} {{window 0 0}} {{window x 10}} {{lines r.c}} {{function}}}} {{ \
             puts \"K [catch {{set_region {{*}}$r}} e] $e\" }}; \
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
    assert_eq!(refused.len(), 5, "{out}");
    assert!(refused[0].contains("EVERY is at least COUNT"), "{out}");
    assert!(refused[1].contains("at least one access"), "{out}");
    assert!(refused[2].contains("numbers of accesses"), "{out}");
    assert!(refused[3].contains("FILE:FIRST-LAST"), "{out}");
    assert!(out.contains("R pins"), "the refusals change nothing: {out}");
    assert_eq!(counts(&out), ["A 128 64 64"], "{out}");
}

/// Tcl printing `V TAG variable load_bytes store_bytes` for every named
/// array and structure of memory_stats: heap blocks, globals, and stack
/// variables touched at more than one address (not frame rows and spill
/// slots, not scalars such as a loop's counter or the pointers a call
/// passes, which the caller reads outside a function's region).
const NAMED: &str = "proc named {tag} { foreach d [memory_stats] { set v [dict get $d variable]; \
                     if {![string match <* $v] && ([dict get $d scope] ne \"S\" || [dict get $d addresses] > 1)} { \
                     puts \"V $tag $v [dict get $d load_bytes] [dict get $d store_bytes]\" } } }";

/// The `V TAG ...` lines printed, as `variable load store` sorted, per tag.
fn named(out: &str, tag: &str) -> Vec<String> {
    let mut v: Vec<String> = out
        .lines()
        .filter_map(|l| l.strip_prefix(&format!("V {tag} ")))
        .map(String::from)
        .collect();
    v.sort();
    v
}

/// Traces `src` between its pins and, built with -DGL_NOPINS, with each
/// of `regions` (set_region's arguments), at -O0 and -O2; asserts that
/// every named array and structure has the same load and store bytes in
/// every run, and returns the pinned runs' rows per level.
fn agree_with_pins(src: &str, regions: &[&str]) -> Vec<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let from = common::root().join("tests/c").join(src);
    std::fs::copy(from, dir.path().join(src)).unwrap();
    let mut script = format!("set_mem_alloc all; {NAMED}; ");
    for opt in ["-O0", "-O2"] {
        script += &format!(
            "set_region pins; compile_exe {src} {opt}; run_gleipnir; memory_trace_analysis; \
             named P{opt}; compile_exe {src} {opt} -DGL_NOPINS; "
        );
        for (k, r) in regions.iter().enumerate() {
            script +=
                &format!("set_region {r}; run_gleipnir; memory_trace_analysis; named R{k}{opt}; ");
        }
    }
    let out = mapvis_script(dir.path(), &script);
    let mut pinned = Vec::new();
    for opt in ["-O0", "-O2"] {
        let p = named(&out, &format!("P{opt}"));
        assert!(!p.is_empty(), "{src} {opt}: no named rows\n{out}");
        for (k, r) in regions.iter().enumerate() {
            assert_eq!(
                named(&out, &format!("R{k}{opt}")),
                p,
                "{src} {opt}: set_region {r} against the pins\n{out}"
            );
        }
        pinned.push(p);
    }
    pinned
}

/// A function called once between the pins, traced by its name and by
/// the line of its call, at -O0 and at -O2, where it is inlined into main
/// and has no code of its own: x and glob 64 loads of 8 bytes, y 64
/// stores (and at -O0 64 loads, `y[i]` read back), s's two members read
/// and written 64 times.
#[test]
fn a_function_and_the_line_of_its_call_trace_what_the_pins_do() {
    let pinned = agree_with_pins(
        "rg_kernel.c",
        &["function kernel", "lines rg_kernel.c:36-36"],
    );
    for (level, y) in [(0, "y 512 512"), (1, "y 0 512")] {
        for row in ["glob 512 0", "s 1024 1024", "x 512 0", y] {
            assert!(pinned[level].contains(&row.to_string()), "{pinned:?}");
        }
    }
    // At -O2 the kernel has no out-of-line copy: its region is its inlined
    // code.
    let (_dir, exe) = common::compile("tests/c/rg_kernel.c", &["-O2", "-DGL_NOPINS"]);
    let nm = std::process::Command::new("nm").arg(&exe).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&nm.stdout).contains(" kernel\n"),
        "kernel should be inlined at -O2"
    );
}

/// Loop nests traced by their lines, at -O0 and -O2 (where instructions
/// of other lines sit inside the nest's code): the transpose's column walk
/// reads A's 64 x 48 doubles, the stencil reads u's 4 neighbours and
/// writes v's 10 x 10 inner cells.
#[test]
fn loop_nests_traced_by_their_lines_agree_with_the_pins() {
    let t = agree_with_pins("wi_transpose.c", &["lines wi_transpose.c:28-30"]);
    assert!(t[1].contains(&"A 24576 0".to_string()), "{t:?}");
    let s = agree_with_pins("an_stencil.c", &["lines an_stencil.c:14-16"]);
    assert!(s[0].contains(&"v 0 800".to_string()), "{s:?}");
}

/// `set_region function NAME CALLS`: the third call of five alone (and
/// export_hpcmp following it), calls 2-3, a C++ overload given with its
/// parameters; a name for two
/// overloads, an unknown name and lines without code refused with the
/// candidates and the setting kept; a call that never comes traces
/// nothing and keeps the previous trace; the page names the region.
#[test]
fn calls_overloads_and_bad_names() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["rg_calls.c", "rg_method.cpp"] {
        std::fs::copy(common::root().join("tests/c").join(f), dir.path().join(f)).unwrap();
    }
    let out = mapvis_script(
        dir.path(),
        &format!(
            "set_mem_alloc all; {NAMED}; compile_exe rg_calls.c; \
             set_region function step 3; run_gleipnir; memory_trace_analysis; named C3; \
             puts \"H [dict get [export_hpcmp h.json] scope]\"; save_run c3; \
             set_region function step 2-3; run_gleipnir; memory_trace_analysis; named C23; \
             complete_memory_access_pattern a; save_run c23; \
             foreach r [runs] {{ puts \"W [dict get $r label]: [dict get $r region]\" }}; \
             compare_runs c3 c23 save; \
             set_region function step all; run_gleipnir; memory_trace_analysis; named Call; \
             puts \"U [catch {{set_region function stpe}} e] $e\"; \
             puts \"N [catch {{set_region lines rg_calls.c:1-3}} e] $e\"; \
             set_region function step 9; puts \"F [catch {{run_gleipnir}} e] $e\"; named kept; \
             set_region pins; compile_exe rg_method.cpp; run_gleipnir; memory_trace_analysis; \
             named Pm; compile_exe rg_method.cpp -DGL_NOPINS; \
             puts \"A [catch {{set_region function Grid::smooth}} e] $e\"; \
             set_region function {{Grid::smooth(int)}}; run_gleipnir; memory_trace_analysis; \
             named Fm; puts \"R [set_region]\""
        ),
    );
    let a = |tag: &str| {
        named(&out, tag)
            .into_iter()
            .filter(|r| r.starts_with("a "))
            .collect::<Vec<_>>()
    };
    assert_eq!(a("C3"), ["a 120 120"], "{out}");
    // Saved runs name their region, and runs of different regions
    // compared say so.
    assert!(
        out.contains("W c3: function step, call 3 (entered 3 times, 1 traced)")
            && out.contains("W c23: function step, calls 2-3 (entered 3 times, 2 traced)"),
        "{out}"
    );
    assert!(
        out.contains("note: the runs hold different regions (c3: function step, call 3"),
        "{out}"
    );
    let page = std::fs::read_to_string(dir.path().join("figures/compare_c3_c23.html")).unwrap();
    assert!(
        page.contains("region: function step, call 3 (entered 3 times, 1 traced)")
            && page.contains("region: function step, calls 2-3 (entered 3 times, 2 traced)"),
        "the comparison page names both runs' regions"
    );
    // Run c23's panel (the right, x2) marks the gap between its two calls;
    // c3, one call, has none.
    assert!(
        page.contains("\"type\":\"line\",\"xref\":\"x2\"")
            && !page.contains("\"type\":\"line\",\"xref\":\"x\","),
        "the gap is marked on c23's panel alone"
    );
    // export_hpcmp follows the region.
    assert!(
        out.contains("H function") && out.contains("scope: function step, call 3;"),
        "{out}"
    );
    assert_eq!(a("C23"), ["a 200 200"], "{out}");
    assert_eq!(a("Call"), ["a 600 600"], "{out}");
    assert_eq!(a("kept"), ["a 600 600"], "{out}");
    let line = |tag: &str| {
        out.lines()
            .find(|l| l.starts_with(tag))
            .unwrap_or_else(|| panic!("no {tag} line: {out}"))
            .to_string()
    };
    let unknown = line("U 1 ");
    assert!(
        unknown.contains("no function with code named \"stpe\"")
            && unknown.contains("step")
            && unknown.contains("unchanged (function step all)"),
        "{unknown}"
    );
    assert!(line("N 1 ").contains("have no code"), "{out}");
    let failed = line("F 1 ");
    assert!(
        failed.contains("function step, call 9") && failed.contains("is kept"),
        "{failed}"
    );
    let ambiguous = line("A 1 ");
    assert!(
        ambiguous.contains("Grid::smooth(double) (rg_method.cpp:19)")
            && ambiguous.contains("Grid::smooth(int) (rg_method.cpp:14)"),
        "{ambiguous}"
    );
    assert_eq!(named(&out, "Pm"), named(&out, "Fm"), "{out}");
    assert!(
        named(&out, "Fm").contains(&"g 320 320".to_string()),
        "{out}"
    );
    assert!(
        line("R ").contains("function Grid::smooth(int) all"),
        "{out}"
    );
    let html = std::fs::read_to_string(
        dir.path()
            .join("figures/complete_memory_access_pattern.html"),
    )
    .unwrap();
    assert!(
        html.contains("region: function step, calls 2-3 (entered 3 times, 2 traced)"),
        "the page names the region"
    );
}

/// Four threads each call work() once: each is traced while it is inside,
/// thread k (numbered k + 2) storing (k + 1) * 10 doubles into data, and
/// none of their stores into scratch outside the call is recorded. The
/// threads are inside at the same time (each waits there for the others
/// at a barrier), so their calls share one region.
#[test]
fn a_function_run_by_four_threads_is_traced_in_each_while_inside() {
    use mapvis::trace::record::{Calls, Event, Op};
    let (dir, exe) = common::compile("tests/c/rg_threads.c", &["-pthread"]);
    let mut req = common::request(dir.path(), &exe, &[]);
    req.region = Some(mapvis::trace::function_region(&exe, "work", Calls::All).unwrap());
    let outcome = mapvis::trace::run_trace(&req).unwrap();
    assert_eq!(outcome.exit_code, Some(0), "{}", outcome.describe());
    let (evs, _) = common::read_events(&req.trace_file);
    let blocks = common::allocs(&evs);
    let data = blocks.iter().find(|b| b.1 == 4 * 64 * 8).unwrap().0;
    let scratch = blocks.iter().find(|b| b.1 == 777).unwrap().0;
    let mut stores = std::collections::BTreeMap::new();
    for a in common::accesses(&evs) {
        assert!(
            !(scratch..scratch + 777).contains(&a.addr),
            "a store into scratch, outside work(), was traced: {a:?}"
        );
        if (data..data + 4 * 64 * 8).contains(&a.addr) {
            assert_eq!((a.op, a.size), (Op::Store, 8), "{a:?}");
            *stores.entry(a.tid).or_insert(0) += 1;
        }
    }
    let expected: std::collections::BTreeMap<u32, u32> =
        (0..4).map(|k| (k + 2, (k + 1) * 10)).collect();
    assert_eq!(stores, expected);
    let calls = evs.iter().find_map(|e| match e {
        Event::Warning { text, .. } if text.starts_with("entered") => Some(text.clone()),
        _ => None,
    });
    assert_eq!(calls.as_deref(), Some("entered 4, traced 4"));
    let regions = evs
        .iter()
        .filter(|e| matches!(e, Event::RegionStart(_)))
        .count();
    assert_eq!(
        regions, 1,
        "the threads were inside together, so their calls share one region"
    );
}

/// `set_region window 0 1000000 10000000` on a run of just under 10^8
/// accesses holds exactly 10 windows of 10^6 accesses, by the trace's own
/// count (its regions' start and stop times) and the tool's count of the
/// run's accesses; the analysis and the page say which windows; a window
/// beyond the run traces nothing and keeps the previous trace.
#[test]
fn windows_hold_exactly_their_count_and_say_so() {
    use mapvis::trace::record::{Event, Footer};
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        common::root().join("tests/c/rg_window.c"),
        dir.path().join("w.c"),
    )
    .unwrap();
    let out = mapvis_script(
        dir.path(),
        "set_mem_alloc H; compile_exe w.c -O2; set_region window 0 1000000 10000000; \
         run_gleipnir; memory_trace_analysis; complete_memory_access_pattern v; \
         set_region window 200000000 10; puts \"F [catch {run_gleipnir} e] $e\"; \
         puts \"S [set_region]\"",
    );
    let (evs, _) = common::read_events(&dir.path().join(".mapvis/trace.mvt"));
    let (mut starts, mut stops) = (vec![], vec![]);
    for e in &evs {
        match e {
            Event::RegionStart(r) => starts.push(r.time),
            Event::RegionStop(r) => stops.push(r.time),
            _ => {}
        }
    }
    assert_eq!(starts.len(), 10, "{out}");
    let lengths: Vec<u64> = starts.iter().zip(&stops).map(|(a, b)| b - a).collect();
    assert_eq!(lengths, vec![1_000_000; 10]);
    let footer = evs.iter().find_map(|e| match e {
        Event::Footer(Footer { accesses, .. }) => Some(*accesses),
        _ => None,
    });
    assert_eq!(footer, Some(10_000_000));
    // The tool counted the run: 2 accesses per step and the start-up's.
    let run: u64 = out
        .split("; the run made ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of the run: {out}"));
    assert!(
        (99_900_000 + 1024..100_000_000).contains(&run),
        "the run made {run} accesses"
    );
    assert!(
        out.contains("region: window 0 1000000 10000000 (10 windows; the run made"),
        "{out}"
    );
    let html = std::fs::read_to_string(
        dir.path()
            .join("figures/complete_memory_access_pattern.html"),
    )
    .unwrap();
    assert!(html.contains("region: window 0 1000000 10000000 (10 windows;"));
    // The access-order view marks the 9 gaps, one at each window's start.
    let lines: Vec<u64> = html
        .split("\"type\":\"line\",\"xref\":\"x\",\"x0\":")
        .skip(1)
        .map(|t| t.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(lines, (1..10).map(|k| k * 1_000_000).collect::<Vec<u64>>());
    assert!(html.contains("dashed lines: 9 gaps"));
    let failed = out
        .lines()
        .find(|l| l.starts_with("F 1 "))
        .unwrap_or_default();
    assert!(
        failed.contains("the run ended before the window's start (200000000 accesses)")
            && failed.contains("is kept"),
        "{out}"
    );
    assert!(out.contains("S window 200000000 10"), "{out}");
}

/// A recursive function's region is its outermost call: sum(10) then
/// sum(20) are two entries, and the second alone holds its 20 levels' 20
/// stores and 20 loads of a.
#[test]
fn a_recursive_function_is_one_call_per_outermost_call() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        common::root().join("tests/c/rg_recurse.c"),
        dir.path().join("rec.c"),
    )
    .unwrap();
    let out = mapvis_script(
        dir.path(),
        &format!(
            "set_mem_alloc G; {NAMED}; compile_exe rec.c; set_region function sum 2; \
             run_gleipnir; memory_trace_analysis; named second; set_region function sum; \
             run_gleipnir; memory_trace_analysis; named all"
        ),
    );
    assert_eq!(named(&out, "second"), ["a 160 160"], "{out}");
    assert_eq!(named(&out, "all"), ["a 240 240"], "{out}");
    assert!(
        out.contains("region: function sum, call 2 (entered 2 times, 1 traced)")
            && out.contains("region: function sum, calls all (entered 2 times, 2 traced)"),
        "{out}"
    );
}

/// A program built without -g: a function is found by its symbol (its
/// own code: the label says inlined copies are not traced), the third
/// call of step() still gives its 30 loads and 30 stores of 4 bytes, and
/// lines are refused, since only debug information has them.
#[test]
fn without_debug_information_a_function_is_found_by_its_symbol() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("nodbg");
    let built = std::process::Command::new("cc")
        .args(["-O0", "-o"])
        .arg(&exe)
        .arg(common::root().join("tests/c/rg_calls.c"))
        .status()
        .unwrap();
    assert!(built.success());
    let out = mapvis_script(
        dir.path(),
        "set_mem_alloc G; load_exe nodbg; set_region function step 3; run_gleipnir; \
         memory_trace_analysis; foreach d [memory_stats] { puts \"V [dict get $d variable] \
         [dict get $d load_bytes] [dict get $d store_bytes]\" }; \
         puts \"L [catch {set_region lines rg_calls.c:10-12} e] $e\"",
    );
    assert!(out.contains("V <static data> 120 120"), "{out}");
    assert!(
        out.contains("region: function step, call 3 (by its symbol, the program having no debug information: copies the compiler inlined elsewhere are not traced)"),
        "{out}"
    );
    assert!(
        out.contains("L 1 ")
            && out.contains(
                "has no debug information: compile it with -g; the region setting is unchanged"
            ),
        "{out}"
    );
}

/// A function of a shared library the program links (found through the
/// executable's DT_NEEDED and DT_RUNPATH, the library built with -g):
/// the second of three calls of lib_fill stores 20 doubles into a.
#[test]
fn a_function_of_a_shared_library_is_traced() {
    let dir = tempfile::tempdir().unwrap();
    let cc = |args: &[&str]| {
        let ok = std::process::Command::new("cc")
            .current_dir(dir.path())
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "cc {args:?}");
    };
    let src = |f: &str| common::root().join("tests/c").join(f).display().to_string();
    cc(&[
        "-g",
        "-O0",
        "-shared",
        "-fPIC",
        "-o",
        "librglib.so",
        &src("rg_lib.c"),
    ]);
    cc(&[
        "-g",
        "-O0",
        "-o",
        "uselib",
        &src("rg_uselib.c"),
        "-L.",
        "-lrglib",
        "-Wl,-rpath,$ORIGIN",
    ]);
    let out = mapvis_script(
        dir.path(),
        &format!(
            "set_mem_alloc H; {NAMED}; load_exe uselib; set_region function lib_fill 2; \
             run_gleipnir; memory_trace_analysis; named lib"
        ),
    );
    assert_eq!(named(&out, "lib"), ["a 0 160"], "{out}");
    assert!(
        out.contains("region: function lib_fill, call 2 (entered 2 times, 1 traced)"),
        "{out}"
    );
}
