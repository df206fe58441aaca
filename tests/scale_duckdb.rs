//! Issue 14, "Beyond one machine": the saved analysis is a dataset that
//! DuckDB reads as it is. The queries of `docs/scale.md`, taken from the
//! doc by their markers so the doc cannot drift, run in DuckDB's Python
//! package over a small parameter sweep of a real traced program and give
//! exactly `memory_stats`'s per-variable numbers, and the counts worked out
//! by hand for the program.
//!
//! Without the `duckdb` Python package the test says SKIPPED loudly, unless
//! `MAPVIS_REQUIRE_DUCKDB` is set (`.ci/run` installs the package and sets
//! it), where it fails.
mod common;

use std::collections::BTreeMap;
use std::process::Command;

/// The program of the sweep.
const PROGRAM: &str = "tests/c/scale_sweep.c";

/// Runs the DuckDB queries: argv is the analyses glob, then the views, the
/// memory_stats view and the comparison, each one SQL text. Prints JSON:
/// the memory_stats rows (every value as text, NULL as "") and the
/// comparison's columns and rows.
const RUNNER: &str = r#"
import json, sys
import duckdb
analyses, views, stats, compare, by_var = sys.argv[1:6]
con = duckdb.connect()
con.execute("SET VARIABLE analyses = ?", [analyses])
con.execute(views)
con.execute(stats)
text = lambda row: ["" if v is None else str(v) for v in row]
rows = con.sql("SELECT * FROM memory_stats ORDER BY trace, first_access")
pivot = con.sql(compare)
view, one = by_var.split(";", 1)
con.execute(view)
cols = "trace, time, op, addr, size, tid, var, line"
differ = lambda a, b: con.execute(
    f"SELECT count(*) FROM (SELECT {cols} FROM {a} EXCEPT ALL SELECT {cols} FROM {b})"
).fetchall()[0][0]
print(json.dumps({
    "columns": rows.columns,
    "stats": [text(r) for r in rows.fetchall()],
    "compare_columns": pivot.columns,
    "compare": [text(r) for r in pivot.fetchall()],
    "by_var_missing": differ("accesses", "accesses_by_var"),
    "scalar_accesses": con.execute(
        "SELECT count(*) FROM accesses AS a JOIN variables AS s ON s.trace = a.trace AND s.var = a.var "
        "WHERE s.size BETWEEN 1 AND 16").fetchall()[0][0],
    "by_var_extra": differ("accesses_by_var", "accesses"),
    "by_var_x": [text(r) for r in con.execute(one).fetchall()],
}))
"#;

/// Whether python3 can import duckdb; without it the test is skipped,
/// loudly, or fails under CI (`CI=true`, or `MAPVIS_REQUIRE_DUCKDB` set).
fn duckdb_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import duckdb"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("MAPVIS_REQUIRE_DUCKDB").is_none(),
            "MAPVIS_REQUIRE_DUCKDB is set but python3 cannot import duckdb: run pip install duckdb"
        );
        common::missing_tool(
            "the docs/scale.md queries were not checked",
            "python3 cannot import duckdb (pip install duckdb)",
        );
    }
    ok
}

#[test]
fn duckdb_reproduces_memory_stats_over_a_sweep() {
    if !duckdb_available() {
        return;
    }
    let doc = |marker: &str, lang: &str| common::doc_block("docs/scale.md", marker, lang);
    let views = doc("duckdb:views", "sql");
    let stats = doc("sql:memory_stats", "sql");
    let compare = doc("duckdb:compare", "sql");
    let by_var = doc("duckdb:by_var", "sql");
    // The Spark script runs the same memory_stats text.
    assert!(
        doc("spark:script", "python").contains(stats.trim()),
        "the Spark script of docs/scale.md must hold the memory_stats query as written above it"
    );

    // `_dir` holds the executable: kept to the end.
    let (_dir, exe) = common::compile(PROGRAM, &[]);
    let runs = tempfile::tempdir().unwrap();
    // The sweep: (trace folder, N, list nodes).
    let sweep = [("n4", 4u64, 3u64), ("n6", 6, 5)];
    for (name, n, nodes) in sweep {
        common::scale_sweep_run(&runs.path().join(name), &exe, n, nodes);
    }

    let glob = format!("{}/*/.mapvis/analysis", runs.path().display());
    let out = Command::new("python3")
        .args(["-c", RUNNER, &glob, &views, &stats, &compare, &by_var])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the DuckDB queries failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect()
    };
    let rows = |v: &serde_json::Value| -> Vec<Vec<String>> {
        v.as_array().unwrap().iter().map(strings).collect()
    };
    let columns = strings(&j["columns"]);
    let header: Vec<&str> = std::iter::once("trace")
        .chain(mapvis::filter::stats::VARIABLE_COLUMNS)
        .collect();
    assert_eq!(
        columns, header,
        "the columns of memory_stats.csv, after trace"
    );
    let mut by_trace: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    for r in rows(&j["stats"]) {
        by_trace
            .entry(r[0].clone())
            .or_default()
            .push(r[1..].to_vec());
    }
    assert_eq!(by_trace.keys().collect::<Vec<_>>(), ["n4", "n6"]);

    for (name, n, nodes) in sweep {
        let duck = &by_trace[name];
        // Exactly memory_stats, row for row, in its order.
        assert_eq!(
            *duck,
            common::memory_stats_csv(&runs.path().join(name)),
            "DuckDB against memory_stats in {name}"
        );
        let row = |var: &str| -> BTreeMap<&str, String> {
            let r = duck
                .iter()
                .find(|r| r[0] == var)
                .unwrap_or_else(|| panic!("no row {var} in {name}: {duck:?}"));
            mapvis::filter::stats::VARIABLE_COLUMNS
                .iter()
                .copied()
                .zip(r.iter().cloned())
                .collect()
        };
        let num = |r: &BTreeMap<&str, String>, c: &str| -> u64 { r[c].parse().unwrap() };
        // By hand: in the ijk loop nest each of X and Y is loaded N^3 times,
        // 8 bytes each, over all N^2 elements; each element of Z is stored
        // once.
        for var in ["X", "Y"] {
            let r = row(var);
            assert_eq!(r["scope"], "H");
            assert_eq!(num(&r, "accesses"), n * n * n, "{name} {var}");
            assert_eq!(num(&r, "loads"), n * n * n, "{name} {var}");
            assert_eq!(num(&r, "stores") + num(&r, "modifies"), 0);
            assert_eq!(num(&r, "load_bytes"), 8 * n * n * n);
            assert_eq!(num(&r, "store_bytes"), 0);
            assert_eq!(num(&r, "addresses"), n * n);
            assert_eq!(num(&r, "blocks"), 1);
        }
        let z = row("Z");
        assert_eq!(num(&z, "accesses"), n * n, "{name} Z");
        assert_eq!(num(&z, "stores"), n * n);
        assert_eq!(num(&z, "store_bytes"), 8 * n * n);
        assert_eq!(num(&z, "addresses"), n * n);
        // The list walk (region 2): every node is one block of the group
        // `head`, allocated on one line and named by where the program
        // keeps the first node's address (main's `head`; each node holds
        // the next); each is loaded twice, its val and its next, 8 bytes
        // each.
        let site = format!(
            "scale_sweep.c:{}",
            common::line_of(PROGRAM, "struct node *n = (struct node *) malloc")
        );
        let list = row("head");
        assert_eq!(list["site"], site);
        assert_eq!(num(&list, "blocks"), nodes, "{name} head");
        assert_eq!(num(&list, "accesses"), 2 * nodes);
        assert_eq!(num(&list, "loads"), 2 * nodes);
        assert_eq!(num(&list, "load_bytes"), 16 * nodes);
        assert_eq!(num(&list, "addresses"), 2 * nodes);
        // Times run on across the regions: the list is walked after the
        // multiply.
        let last_z = num(&z, "last_access").max(num(&row("X"), "last_access"));
        assert!(num(&list, "first_access") > last_z);
    }

    // The by-variable files hold exactly the access list's rows but the
    // scalars' (variables of 1 to 16 bytes: the loop counters and the
    // pointers to the rows), and one array read from them has N^3
    // accesses over memory_stats' span.
    assert!(j["scalar_accesses"].as_u64().unwrap() > 0, "{j}");
    assert_eq!(
        j["by_var_missing"], j["scalar_accesses"],
        "accesses missing from accesses_by_var other than the scalars'"
    );
    assert_eq!(j["by_var_extra"], 0, "accesses_by_var rows not in the list");
    for (k, (name, n, _)) in sweep.iter().enumerate() {
        let x = &rows(&j["by_var_x"])[k];
        let stats = &by_trace[*name];
        let xs = stats.iter().find(|r| r[0] == "X").unwrap();
        let col = |c: &str| {
            let i = mapvis::filter::stats::VARIABLE_COLUMNS
                .iter()
                .position(|&h| h == c)
                .unwrap();
            xs[i].clone()
        };
        assert_eq!(
            x,
            &[
                name.to_string(),
                (n * n * n).to_string(),
                col("first_access"),
                col("last_access")
            ],
            "X by variable in {name}"
        );
    }

    // The comparison: one column per trace, accesses per heap variable.
    assert_eq!(
        strings(&j["compare_columns"]),
        ["variable", "n4", "n6"],
        "one column per trace"
    );
    assert_eq!(
        rows(&j["compare"]),
        [
            ["X", "64", "216"],
            ["Y", "64", "216"],
            ["Z", "16", "36"],
            ["head", "6", "10"]
        ]
        .map(|r| r.map(String::from).to_vec())
        .to_vec()
    );
}
