//! "Beyond one machine" in Apache Spark: the PySpark script of
//! `docs/scale.md`, taken from the doc by its `spark:script` marker so the
//! doc cannot drift, runs in local mode, one Spark session, over a folder of
//! 20 saved runs of `c/scale_sweep.c` (N x N matrices for N = 2, 4, 8, 12,
//! 16, each with a list of 1, 5, 9 or 13 nodes), exactly as the doc says to
//! run it: a glob of analysis folders as its argument. What it prints is
//! checked:
//!
//! - its `memory_stats` table, per run and variable (accesses, loads,
//!   stores, modifies, load_bytes, store_bytes and the other columns),
//!   against each run's own `visinfo/memory_stats.csv` from `memory_stats
//!   save`, row for row in that file's order;
//! - its comparison, accesses per heap variable with one column per run,
//!   against the same files;
//! - in every run, the accesses, load_bytes and store_bytes of X, Y, Z and
//!   the list against counts worked out by hand from the program.
//!
//! Without PySpark or Java the test says SKIPPED loudly, unless
//! `MAPVIS_REQUIRE_SPARK` is set (`.ci/run` installs both and sets it) or
//! `CI=true`, where it fails.
mod common;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Instant;

/// The program of the sweep.
const PROGRAM: &str = "tests/c/scale_sweep.c";

/// Whether python3 can import pyspark and a Java runtime runs; without
/// them the test is skipped, loudly, or fails under CI (`CI=true`, or
/// `MAPVIS_REQUIRE_SPARK` set).
fn spark_available() -> bool {
    let runs = |cmd: &str, args: &[&str]| {
        Command::new(cmd)
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let why = if !runs("python3", &["-c", "import pyspark"]) {
        "python3 cannot import pyspark (pip install pyspark)"
    } else if !runs("java", &["-version"]) {
        "java does not run (apt-get install openjdk-17-jre-headless)"
    } else {
        return true;
    };
    assert!(
        std::env::var_os("MAPVIS_REQUIRE_SPARK").is_none(),
        "MAPVIS_REQUIRE_SPARK is set but {why}"
    );
    common::missing_tool("the Spark script of docs/scale.md was not checked", why);
    false
}

/// The tables a script printed with Spark's `show()`, each as its rows of
/// trimmed cells, the header first. Anything else on standard output, such
/// as show()'s "only showing top 20 rows" when it leaves rows out, fails.
fn shown_tables(out: &str) -> Vec<Vec<Vec<String>>> {
    let mut tables = Vec::new();
    let mut table = Vec::new();
    // A table is framed by three `+---+` lines: above and below the
    // header, and below the rows.
    let mut borders = 0;
    for line in out.lines() {
        if line.starts_with('+') {
            borders += 1;
            if borders == 3 {
                tables.push(std::mem::take(&mut table));
                borders = 0;
            }
        } else if let Some(cells) = line.strip_prefix('|').and_then(|l| l.strip_suffix('|')) {
            table.push(cells.split('|').map(|c| c.trim().to_string()).collect());
        } else {
            assert!(line.is_empty(), "not a line of a table: {line:?}");
        }
    }
    assert_eq!(borders, 0, "a table without its end:\n{out}");
    tables
}

#[test]
fn spark_reproduces_memory_stats_over_a_sweep_of_20_runs() {
    if !spark_available() {
        return;
    }
    let script = common::doc_block("docs/scale.md", "spark:script", "python");

    // `dir` holds the executable and is Spark's working folder.
    let (dir, exe) = common::compile(PROGRAM, &[]);
    let runs = tempfile::tempdir().unwrap();
    // The sweep: (trace folder, N, list nodes). At most 13 nodes: up to
    // there the whole list is one row, `head`, which the counts by hand
    // below assume.
    let sweep: Vec<(String, u64, u64)> = [2u64, 4, 8, 12, 16]
        .into_iter()
        .flat_map(|n| [1u64, 5, 9, 13].map(|nodes| (format!("n{n}_l{nodes}"), n, nodes)))
        .collect();
    assert_eq!(sweep.len(), 20);
    // Two at a time, one per core.
    std::thread::scope(|s| {
        for half in sweep.chunks(sweep.len() / 2) {
            let (runs, exe) = (runs.path(), &exe);
            s.spawn(move || {
                for (name, n, nodes) in half {
                    common::scale_sweep_run(&runs.join(name), exe, *n, *nodes);
                }
            });
        }
    });

    let glob = format!("{}/*/.mapvis/analysis", runs.path().display());
    let started = Instant::now();
    let out = Command::new("python3")
        .args(["-c", &script, &glob])
        .current_dir(dir.path())
        .output()
        .unwrap();
    // Spark's log and progress bars go to standard error; on failure the
    // log's last lines, without the progress bars, say why.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let log: Vec<&str> = stderr.lines().filter(|l| !l.contains("[Stage ")).collect();
    assert!(
        out.status.success(),
        "the Spark script of docs/scale.md failed:\n{}",
        log[log.len().saturating_sub(60)..].join("\n")
    );
    eprintln!(
        "the Spark script ran over {} runs in {:.1} s",
        sweep.len(),
        started.elapsed().as_secs_f64()
    );
    let tables = shown_tables(&String::from_utf8(out.stdout).unwrap());
    let [stats, compare] =
        <[_; 2]>::try_from(tables).expect("two tables: memory_stats and the comparison");

    // memory_stats: the columns of memory_stats.csv after `trace`, and
    // per run exactly that run's file.
    let header: Vec<&str> = std::iter::once("trace")
        .chain(mapvis::filter::stats::VARIABLE_COLUMNS)
        .collect();
    assert_eq!(stats[0], header, "the columns of Spark's memory_stats");
    let mut by_trace: BTreeMap<&str, Vec<Vec<String>>> = BTreeMap::new();
    for r in &stats[1..] {
        by_trace
            .entry(r[0].as_str())
            .or_default()
            .push(r[1..].to_vec());
    }
    let mut names: Vec<&str> = sweep.iter().map(|(name, ..)| name.as_str()).collect();
    names.sort();
    assert_eq!(
        by_trace.keys().copied().collect::<Vec<_>>(),
        names,
        "one trace per run"
    );
    let column = |c: &str| {
        mapvis::filter::stats::VARIABLE_COLUMNS
            .iter()
            .position(|&h| h == c)
            .unwrap()
    };
    for (name, n, nodes) in &sweep {
        let spark = &by_trace[name.as_str()];
        assert_eq!(
            *spark,
            common::memory_stats_csv(&runs.path().join(name)),
            "Spark against memory_stats.csv in {name}"
        );
        let value = |var: &str, c: &str| -> u64 {
            let row = spark
                .iter()
                .find(|r| r[0] == var)
                .unwrap_or_else(|| panic!("no row {var} in {name}: {spark:?}"));
            row[column(c)].parse().unwrap()
        };
        // By hand: the ijk nest loads X[i * N + k] and Y[k * N + j] once
        // for each (i, j, k), N^3 loads of 8 bytes each, and stores each
        // Z[i * N + j] once, 8 bytes; the list walk loads each node's val
        // and next, 8 bytes each, and the nodes are the blocks of `head`.
        let (n, nodes) = (*n, *nodes);
        for (var, want) in [
            ("X", [n * n * n, 8 * n * n * n, 0]),
            ("Y", [n * n * n, 8 * n * n * n, 0]),
            ("Z", [n * n, 0, 8 * n * n]),
            ("head", [2 * nodes, 16 * nodes, 0]),
        ] {
            let got = ["accesses", "load_bytes", "store_bytes"].map(|c| value(var, c));
            assert_eq!(got, want, "{name} {var}: accesses, load_bytes, store_bytes");
        }
        assert_eq!(value("head", "blocks"), nodes, "{name}: the list's nodes");
    }

    // The comparison: accesses of each heap variable, one column per
    // run, each the accesses of that run's memory_stats.csv (its rows
    // are `by_trace`'s, checked above).
    let cols: Vec<&str> = compare[0].iter().map(String::as_str).collect();
    assert_eq!(cols[0], "variable");
    assert_eq!(cols[1..], names, "one column per run, in name order");
    let vars: Vec<&str> = compare[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(vars, ["X", "Y", "Z", "head"], "the heap variables");
    for row in &compare[1..] {
        for (name, cell) in names.iter().zip(&row[1..]) {
            let stats_row = by_trace[name].iter().find(|r| r[0] == row[0]).unwrap();
            assert_eq!(*cell, stats_row[column("accesses")], "{} in {name}", row[0]);
        }
    }
}
