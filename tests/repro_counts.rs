//! Reproducible counts: one binary traced by the `mapvis` shell from
//! folders whose paths differ in length, with environments that differ in
//! length, must give the same `cache_stats` per variable. The program
//! walks a stack array and a heap array in a loop under a 1 KiB 2-way L1,
//! so a stack that moved by 16 bytes changes the misses (it did, before
//! mapvis padded the program's start block: 284 against 290 misses for
//! the heap array from two folders). The program prints its own
//! addresses, which must match too.
mod common;

use std::path::Path;
use std::process::Command;

use common::*;

/// The commands each run gives the shell: trace the program given as the
/// first argument, analyse, and print each variable's counts under a small
/// L1 as `ROW name accesses misses compulsory`.
const SCRIPT: &str = r#"
load_exe [lindex $argv 0]
set_mem_alloc all
run_gleipnir
memory_trace_analysis
set_cache L1 1K 2 64
set_cache L2 off
set_cache L3 off
foreach row [cache_stats] {
    puts "ROW [dict get $row variable] [dict get $row accesses] [dict get $row misses_L1] [dict get $row compulsory]"
}
"#;

/// What one run printed that must not depend on the folder: the program's
/// own line of addresses and the sorted rows of counts.
#[derive(Debug, PartialEq, Eq)]
struct Counts {
    addresses: String,
    rows: Vec<String>,
}

/// Runs the shell on `script` in `cwd`, tracing `exe`, with `extra` set in
/// its environment.
fn run_in(cwd: &Path, script: &Path, exe: &Path, extra: (&str, &str)) -> Counts {
    let out = Command::new(env!("CARGO_BIN_EXE_mapvis"))
        .arg(script)
        .arg(exe)
        .current_dir(cwd)
        .env_remove("MAPVIS_HISTORY")
        .env(extra.0, extra.1)
        .output()
        .expect("mapvis starts");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "mapvis failed in {}:\n{stdout}\n{}",
        cwd.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let addresses = stdout
        .lines()
        .find(|l| l.starts_with("on_stack "))
        .unwrap_or_else(|| panic!("the program's addresses in:\n{stdout}"))
        .to_string();
    let mut rows: Vec<String> = stdout
        .lines()
        .filter(|l| l.starts_with("ROW "))
        .map(str::to_string)
        .collect();
    rows.sort();
    Counts { addresses, rows }
}

/// The counts of `name` in `c`: (accesses, misses, compulsory).
fn row(c: &Counts, name: &str) -> (u64, u64, u64) {
    let r = c
        .rows
        .iter()
        .find(|r| r.split(' ').nth(1) == Some(name))
        .unwrap_or_else(|| panic!("no row for {name} in {:?}", c.rows));
    let n: Vec<u64> = r.split(' ').skip(2).map(|x| x.parse().unwrap()).collect();
    (n[0], n[1], n[2])
}

#[test]
fn one_binary_gives_the_same_counts_from_any_folder() {
    let (_bin, exe) = compile("tests/c/repro_stack.c", &[]);
    let root = tempfile::tempdir().unwrap();
    let script = root.path().join("run.tcl");
    std::fs::write(&script, SCRIPT).unwrap();
    let short = root.path().join("a");
    let long = root.path().join("a".repeat(60)).join("b");
    std::fs::create_dir_all(&short).unwrap();
    std::fs::create_dir_all(&long).unwrap();
    // The same binary, also as a copy inside the long folder: the
    // program's path (argv[0]) is longer there too.
    let copy = long.join("prog");
    std::fs::copy(&exe, &copy).unwrap();
    let extra = "MAPVIS_TEST_EXTRA";
    let runs = [
        run_in(&short, &script, &exe, (extra, "x")),
        run_in(&long, &script, &exe, (extra, &"y".repeat(300))),
        run_in(&long, &script, &copy, (extra, &"z".repeat(1000))),
    ];
    // The loop reads every other element of each 200-double array, four
    // times: 400 accesses each.
    assert_eq!(row(&runs[0], "main::on_stack").0, 400, "{:?}", runs[0]);
    assert_eq!(row(&runs[0], "on_heap").0, 400, "{:?}", runs[0]);
    // 1600 bytes: 25 or 26 lines, each first touched once.
    let (_, _, cold) = row(&runs[0], "main::on_stack");
    assert!(cold == 25 || cold == 26, "{:?}", runs[0]);
    for (k, r) in runs.iter().enumerate().skip(1) {
        assert_eq!(
            r,
            &runs[0],
            "run {k} differs from the run in {}",
            short.display()
        );
    }
}
