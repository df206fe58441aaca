//! Golden files, as addr2line keeps its `testoutput/`: the decoded dump of
//! two small traces kept in `tests/golden/`, and the data of the figures
//! drawn from a small synthetic analysis. A change in decoding or in the
//! figures then shows as a readable diff against the file.
//!
//! After a deliberate change, re-bless the files and review their diff:
//! `MAPVIS_BLESS=1 cargo test --release --test golden`.
//!
//! A golden file alone only says that the output did not change, not that
//! it is right. So each file is also checked against an independent oracle
//! before it is compared or blessed: the key numbers of the dumps are
//! worked out by hand from the C programs that made the traces
//! (tests/c/trace_fill.c and tests/c/trace_threads.c, built with
//! `cc -g -O0` and traced by mapvis's Valgrind tool), and those of the
//! figures from the 60 accesses of the synthetic analysis written out
//! below. Blessing refuses to write a file that fails its check, so a
//! broken dump or figure cannot be re-blessed into a passing test.
mod vis_common;

use std::path::{Path, PathBuf};

use mapvis::filter::schema::{OP_LOAD, OP_MODIFY, OP_STORE};
use mapvis::filter::VarId;
use mapvis::vis::{array_2d, array_3d, complete_memory_access_pattern, Array2d, Array3d};
use vis_common::*;

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// Checks `got` against its independent `oracle` (which panics on a wrong
/// number), then compares it with the golden file `name`, or writes it
/// when blessing: a file failing its oracle is never written.
fn check(name: &str, got: &str, oracle: fn(&str)) {
    oracle(got);
    let path = golden(name);
    if std::env::var_os("MAPVIS_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{} cannot be read ({e}); create it with MAPVIS_BLESS=1",
            path.display()
        )
    });
    if want != got {
        let diff = want
            .lines()
            .zip(got.lines())
            .enumerate()
            .find(|(_, (w, g))| w != g)
            .map(|(i, (w, g))| format!("line {}:\n  golden: {w}\n  now:    {g}", i + 1))
            .unwrap_or_else(|| {
                format!(
                    "{} lines golden, {} now",
                    want.lines().count(),
                    got.lines().count()
                )
            });
        panic!(
            "{} differs from what mapvis makes now; {diff}\nIf the change is meant, re-bless with MAPVIS_BLESS=1 and review the diff.",
            path.display()
        );
    }
}

fn dump_of(trace: &str) -> String {
    let mut out = Vec::new();
    mapvis::trace::record::dump(&golden(trace), None, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// 100 ints written between the pins (tests/c/trace_fill.c).
#[test]
fn dump_of_the_fill_trace() {
    check("fill.dump", &dump_of("fill.mvt"), fill_oracle);
}

/// Two threads filling their own heap arrays, heap accesses only
/// (tests/c/trace_threads.c, `--heap-only=yes`).
#[test]
fn dump_of_the_threads_trace() {
    check("threads.dump", &dump_of("threads.mvt"), threads_oracle);
}

/// The figure objects of a page, pretty-printed, one page per golden file.
fn figure_json(html: &Path) -> String {
    let figs = figures(html);
    serde_json::to_string_pretty(&figs).unwrap() + "\n"
}

/// A 4 x 5 int array `a` written row by row, then read column by column,
/// and a scalar `s` modified at each step of the column pass.
fn small_analysis() -> (polars::prelude::DataFrame, polars::prelude::DataFrame) {
    let base = 0x4a39040;
    let mut rows = Vec::new();
    let mut t = 0u64;
    for e in 0..20u64 {
        rows.push((t, OP_STORE, base + 4 * e, 4, 1, 0, 1, 1));
        t += 1;
    }
    for j in 0..5u64 {
        for i in 0..4u64 {
            rows.push((t, OP_LOAD, base + 4 * (i * 5 + j), 4, 1, 0, 2, 2));
            rows.push((t + 1, OP_MODIFY, 0x1fff000100, 8, 1, 1, 1 + (t as u32), 2));
            t += 2;
        }
    }
    let vars = vars_df_full(&[("a", "H", base, 80, 4), ("s", "S", 0x1fff000100, 8, 8)]);
    (acc_df(&rows), vars)
}

#[test]
fn figure_data_of_the_complete_pattern() {
    let dir = tempfile::tempdir().unwrap();
    let (acc, vars) = small_analysis();
    let r = complete_memory_access_pattern(&acc, &vars, &lines_df(), &options(dir.path())).unwrap();
    check("complete.json", &figure_json(&r.html), complete_oracle);
}

#[test]
fn figure_data_of_the_complete_pattern_aggregated() {
    let dir = tempfile::tempdir().unwrap();
    let (acc, vars) = small_analysis();
    let mut o = options(dir.path());
    o.point_budget = 10;
    let r = complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    check(
        "complete_aggregated.json",
        &figure_json(&r.html),
        aggregated_oracle,
    );
}

#[test]
fn figure_data_of_a_2d_array() {
    let dir = tempfile::tempdir().unwrap();
    let (acc, vars) = small_analysis();
    let r = array_2d(
        Array2d {
            acc: &acc,
            vars: &vars,
            lines: &lines_df(),
            var: VarId(0),
            cols: 5,
            type_bytes: 4,
        },
        &options(dir.path()),
    )
    .unwrap();
    check("array_2d.json", &figure_json(&r.html), array_2d_oracle);
}

#[test]
fn figure_data_of_a_3d_array() {
    let dir = tempfile::tempdir().unwrap();
    let (acc, vars) = small_analysis();
    let r = array_3d(
        Array3d {
            acc: &acc,
            vars: &vars,
            lines: &lines_df(),
            var: VarId(0),
            cols: 2,
            depth: 2,
            type_bytes: 4,
        },
        &options(dir.path()),
    )
    .unwrap();
    check("array_3d.json", &figure_json(&r.html), array_3d_oracle);
}

// ---- The independent oracles -------------------------------------------

/// One access line of a dump: `t=T OP SIZE ADDR tid TID ...`.
#[derive(Clone, Copy, Debug)]
struct DumpAccess {
    t: u64,
    op: char,
    size: u64,
    addr: u64,
    tid: u64,
}

fn hex(w: &str) -> u64 {
    u64::from_str_radix(w.trim_start_matches("0x"), 16)
        .unwrap_or_else(|_| panic!("not a hex number: {w}"))
}

/// The access lines of a dump.
fn dump_accesses(dump: &str) -> Vec<DumpAccess> {
    dump.lines()
        .filter(|l| l.starts_with("t="))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(w[4], "tid", "an access line: {l}");
            DumpAccess {
                t: w[0][2..].parse().unwrap(),
                op: w[1].chars().next().unwrap(),
                size: w[2].parse().unwrap(),
                addr: hex(w[3]),
                tid: w[5].parse().unwrap(),
            }
        })
        .collect()
}

/// The `ALLOC` lines of a dump: (function, address, size).
fn dump_allocs(dump: &str) -> Vec<(String, u64, u64)> {
    dump.lines()
        .filter(|l| l.starts_with("ALLOC "))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert_eq!((w[2], w[5]), ("tid", "size"), "an alloc line: {l}");
            (w[1].to_string(), hex(w[4]), w[6].parse().unwrap())
        })
        .collect()
}

/// The access count the footer, the end line and the access lines give
/// must agree, with `t=` counting 0, 1, 2, ... in order; returns it.
fn consistent_count(dump: &str, acc: &[DumpAccess]) -> u64 {
    let footer: u64 = dump
        .lines()
        .find_map(|l| l.strip_prefix("FOOTER accesses "))
        .and_then(|r| r.split_whitespace().next())
        .expect("a FOOTER line")
        .parse()
        .unwrap();
    let end = format!("end: complete, {footer} accesses");
    assert!(dump.lines().any(|l| l == end), "the dump ends with `{end}`");
    assert_eq!(acc.len() as u64, footer, "access lines = FOOTER accesses");
    for (i, a) in acc.iter().enumerate() {
        assert_eq!(a.t, i as u64, "access times count 0, 1, 2, ...");
    }
    footer
}

/// The accesses inside `[base, base + size)`, in time order.
fn inside(acc: &[DumpAccess], base: u64, size: u64) -> Vec<DumpAccess> {
    acc.iter()
        .copied()
        .filter(|a| a.addr >= base && a.addr < base + size)
        .collect()
}

/// The block is written exactly once per int, in ascending order, by
/// thread `tid`, with 4-byte stores and nothing else.
fn filled_once_in_order(what: &str, got: &[DumpAccess], base: u64, n: u64, tid: u64) {
    let seen: Vec<(char, u64, u64, u64)> =
        got.iter().map(|a| (a.op, a.size, a.addr, a.tid)).collect();
    let want: Vec<(char, u64, u64, u64)> = (0..n).map(|i| ('S', 4, base + 4 * i, tid)).collect();
    assert_eq!(
        seen, want,
        "{what}: one 4-byte store per int, in order, by thread {tid}"
    );
}

/// tests/c/trace_fill.c, by hand: `arr = malloc(100 * sizeof(int))`, then
/// between the pins `for (i = 0; i < 100; i++) arr[i] = i;`. So one block
/// of 400 bytes, and inside the region exactly 100 4-byte stores to it,
/// one per int in ascending order (the `-1` fill before the pins and the
/// `+= 1` pass after them are not recorded: no load of the block at all).
/// At -O0 the loop counter lives in one stack slot: `i = 0` stores it
/// once, `i < N` loads it 101 times, `arr[i] = i` loads it twice per pass
/// (index and value) and `i++` is one read-modify-write per pass: 1 store,
/// 101 + 200 = 301 loads and 100 modifies.
fn fill_oracle(dump: &str) {
    let acc = dump_accesses(dump);
    consistent_count(dump, &acc);
    let allocs = dump_allocs(dump);
    assert_eq!(allocs.len(), 1, "one malloc: {allocs:?}");
    let (func, base, size) = allocs[0].clone();
    assert_eq!((func.as_str(), size), ("malloc", 400), "malloc(100 ints)");
    filled_once_in_order("arr", &inside(&acc, base, size), base, 100, 1);
    // The counter `i`: the one address modified.
    let modified: std::collections::BTreeSet<u64> =
        acc.iter().filter(|a| a.op == 'M').map(|a| a.addr).collect();
    assert_eq!(modified.len(), 1, "only `i++` modifies: {modified:?}");
    let i_addr = *modified.iter().next().unwrap();
    let count = |op: char| {
        acc.iter()
            .filter(|a| a.addr == i_addr && a.op == op && a.size == 4)
            .count()
    };
    assert_eq!(
        (count('S'), count('L'), count('M')),
        (1, 301, 100),
        "i: stores, loads, modifies"
    );
    let mut one_region = dump.lines().filter(|l| l.starts_with("REGION_START "));
    assert!(one_region.next().is_some() && one_region.next().is_none());
}

/// tests/c/trace_threads.c, by hand, traced heap-only: `mine` and
/// `theirs` are two `malloc(64 * sizeof(int))` blocks made before the
/// pins; in the region, a new thread fills `theirs` and the main thread
/// `mine`, each `a[i] = i` for i < 64. So: two 256-byte blocks, each
/// written exactly once per int in ascending order, `theirs` by the
/// thread created (tid 2, `THREAD_CREATE 1 -> 2`) and `mine` by tid 1;
/// 128 stores in all. Heap-only: every other access lies in a block the
/// thread library allocated in the region (its thread descriptor).
fn threads_oracle(dump: &str) {
    let acc = dump_accesses(dump);
    let total = consistent_count(dump, &acc);
    assert!(dump.lines().any(|l| l == "THREAD_CREATE 1 -> 2"));
    let allocs = dump_allocs(dump);
    assert!(allocs.len() >= 2, "{allocs:?}");
    let (mine, theirs) = (&allocs[0], &allocs[1]);
    assert_eq!((mine.0.as_str(), mine.2), ("malloc", 256), "mine");
    assert_eq!((theirs.0.as_str(), theirs.2), ("malloc", 256), "theirs");
    filled_once_in_order("mine", &inside(&acc, mine.1, 256), mine.1, 64, 1);
    filled_once_in_order("theirs", &inside(&acc, theirs.1, 256), theirs.1, 64, 2);
    let in_some_block = |a: &DumpAccess| {
        allocs
            .iter()
            .any(|&(_, b, s)| a.addr >= b && a.addr + a.size <= b + s)
    };
    let outside: Vec<&DumpAccess> = acc.iter().filter(|a| !in_some_block(a)).collect();
    assert!(outside.is_empty(), "heap only, yet: {outside:?}");
    let library = allocs[2..]
        .iter()
        .map(|&(_, b, s)| inside(&acc, b, s).len() as u64)
        .sum::<u64>();
    assert_eq!(total, 128 + library, "128 stores of the program's loops");
    assert!(library < 16, "the thread library's own accesses: {library}");
}

/// The base of `a` in [`small_analysis`].
const A: u64 = 0x4a39040;
/// The address of `s` in [`small_analysis`].
const S: u64 = 0x1fff000100;

/// The 60 accesses of [`small_analysis`], worked out from its description
/// (not from its code): `a` (4 x 5 ints at `A`) stored element e at time
/// e, then loaded column by column, element (i, j) at time 20 + 2(4j + i),
/// each load followed by a modify of `s` (at `S`): (time, variable,
/// operation, address).
fn hand_accesses() -> Vec<(u64, &'static str, &'static str, u64)> {
    let mut v: Vec<_> = (0..20).map(|e| (e, "a", "store", A + 4 * e)).collect();
    for j in 0..5 {
        for i in 0..4 {
            let t = 20 + 2 * (4 * j + i);
            v.push((t, "a", "load", A + 4 * (5 * i + j)));
            v.push((t + 1, "s", "modify", S));
        }
    }
    v.sort();
    v
}

fn json_of(text: &str) -> Vec<serde_json::Value> {
    serde_json::from_str(text).expect("figure JSON")
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_f64().map(|f| f as u64))
        .unwrap_or_else(|| panic!("not a number: {v}"))
}

fn s(v: &serde_json::Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}"))
}

fn rows(v: &serde_json::Value) -> &Vec<serde_json::Value> {
    v.as_array().unwrap_or_else(|| panic!("not an array: {v}"))
}

/// The complete pattern draws every one of the 60 accesses once, at its
/// time and address, with its variable, operation and element (`a[e]`,
/// e the int's index); its 2D view splits them into `a load`, `a store`
/// and `s modify`, 20 each.
fn complete_oracle(text: &str) {
    let figs = json_of(text);
    let t = &figs[0]["data"][0];
    let mut got: Vec<_> = rows(&t["customdata"])
        .iter()
        .map(|c| (u(&c[0]), s(&c[1]), s(&c[2]), u(&c[6])))
        .collect();
    got.sort();
    let want = hand_accesses();
    assert_eq!(got, want, "the complete pattern's points");
    assert_eq!(nums(&t["z"]).len(), 60, "60 points");
    for c in rows(&t["customdata"]).iter().filter(|c| s(&c[1]) == "a") {
        assert_eq!(s(&c[7]), format!("a[{}]", (u(&c[6]) - A) / 4), "{c}");
    }
    let mut per_trace = std::collections::BTreeMap::new();
    for tr in rows(&figs[1]["data"]) {
        let name = s(&tr["name"]).to_string();
        let pts: Vec<_> = rows(&tr["customdata"])
            .iter()
            .map(|c| (u(&c[0]), s(&c[1]), s(&c[2]), u(&c[6])))
            .collect();
        for p in &pts {
            assert_eq!(format!("{} {}", p.1, p.2), name, "{p:?} in trace {name}");
        }
        per_trace.insert(name, pts.len());
    }
    let want: std::collections::BTreeMap<String, usize> =
        [("a load", 20), ("a store", 20), ("s modify", 20)]
            .into_iter()
            .map(|(k, n)| (k.to_string(), n))
            .collect();
    assert_eq!(per_trace, want, "points per variable and operation");
}

/// Aggregated to a budget of 10 points, the groups of each figure still
/// count every access once: per variable, `a` 20 loads and 20 stores
/// between times 0 and 58 at addresses inside its 80 bytes, `s` 20
/// modifies between times 21 and 59 at its one address; at most 10 groups.
fn aggregated_oracle(text: &str) {
    let figs = json_of(text);
    for (f, fig) in figs.iter().enumerate() {
        // variable -> [accesses, loads, stores, modifies, first, last]
        let mut got: std::collections::BTreeMap<String, [u64; 6]> = Default::default();
        let mut groups = 0;
        for tr in rows(&fig["data"]) {
            for c in rows(&tr["customdata"]) {
                groups += 1;
                let e = got
                    .entry(s(&c[3]).to_string())
                    .or_insert([0, 0, 0, 0, u64::MAX, 0]);
                e[0] += u(&c[0]);
                e[1] += u(&c[7]);
                e[2] += u(&c[8]);
                e[3] += u(&c[9]);
                e[4] = e[4].min(u(&c[1]));
                e[5] = e[5].max(u(&c[2]));
                assert_eq!(u(&c[0]), u(&c[7]) + u(&c[8]) + u(&c[9]), "{c}");
                let extent = u(&c[4]);
                if s(&c[3]) == "a" {
                    assert!(extent < 80, "a group spans at most a's 80 bytes: {c}");
                } else {
                    assert_eq!(extent, 0, "s is one address: {c}");
                }
            }
        }
        assert!(
            groups <= 10,
            "figure {f}: {groups} groups for a budget of 10"
        );
        let want: std::collections::BTreeMap<String, [u64; 6]> = [
            ("a".to_string(), [40, 20, 20, 0, 0, 58]),
            ("s".to_string(), [20, 0, 0, 20, 21, 59]),
        ]
        .into_iter()
        .collect();
        assert_eq!(got, want, "figure {f}: accesses per variable");
    }
}

/// The heatmap `z` of a figure whose hover text names `what`.
fn heatmap<'a>(figs: &'a [serde_json::Value], what: &str) -> &'a serde_json::Value {
    figs.iter()
        .flat_map(|f| rows(&f["data"]).iter())
        .find(|t| {
            t["type"] == "heatmap"
                && t["hovertemplate"]
                    .as_str()
                    .is_some_and(|h| h.contains(what))
        })
        .unwrap_or_else(|| panic!("a heatmap of `{what}`"))
}

/// Whether the first trace of figure `f` has a hover text holding `what`.
fn hover_has(f: &serde_json::Value, what: &str) -> bool {
    f["data"][0]["hovertemplate"]
        .as_str()
        .is_some_and(|h| h.contains(what))
}

/// `a` as 4 rows of 5 ints, by hand: element (i, j) is stored at time
/// 5i + j and loaded at time 20 + 2(4j + i). So the scatter has 40 points,
/// two per cell at those times; each cell has 2 accesses, first access
/// 5i + j, last 20 + 2(4j + i), half of them stores; the replay ends with
/// 2 per cell and its steps add up to 40.
fn array_2d_oracle(text: &str) {
    let figs = json_of(text);
    let t = &figs[0]["data"][0];
    let mut got: Vec<_> = rows(&t["customdata"])
        .iter()
        .map(|c| (u(&c[0]), s(&c[1]).to_string(), u(&c[5]), u(&c[7]), u(&c[8])))
        .collect();
    got.sort();
    let mut want = Vec::new();
    for i in 0..4 {
        for j in 0..5 {
            let addr = A + 4 * (5 * i + j);
            want.push((5 * i + j, "store".to_string(), addr, i, j));
            want.push((20 + 2 * (4 * j + i), "load".to_string(), addr, i, j));
        }
    }
    want.sort();
    assert_eq!(
        got, want,
        "the 2D scatter's points: (time, op, address, row, col)"
    );
    let cells = |f: &dyn Fn(u64, u64) -> f64| -> Vec<Vec<Option<f64>>> {
        (0..4)
            .map(|i| (0..5).map(|j| Some(f(i, j))).collect())
            .collect()
    };
    let z = |what: &str| grid(&heatmap(&figs, what)["z"]);
    assert_eq!(z("accesses %{z"), cells(&|_, _| 2.0), "accesses per cell");
    assert_eq!(
        z("first access"),
        cells(&|i, j| (5 * i + j) as f64),
        "first access per cell"
    );
    assert_eq!(
        z("last access"),
        cells(&|i, j| (20 + 2 * (4 * j + i)) as f64),
        "last access per cell"
    );
    assert_eq!(z("store share"), cells(&|_, _| 0.5), "store share");
    let replay = figs
        .iter()
        .find(|f| hover_has(f, "accesses in this step"))
        .expect("the replay by step");
    let steps: f64 = rows(&replay["frames"])
        .iter()
        .flat_map(|fr| grid(&fr["data"][0]["z"]).into_iter().flatten())
        .map(|c| c.unwrap_or(0.0))
        .sum();
    assert_eq!(steps, 40.0, "the replay's steps add up to the 40 accesses");
    let so_far = figs
        .iter()
        .find(|f| hover_has(f, "accesses so far"))
        .expect("the cumulative replay");
    let last = rows(&so_far["frames"]).last().unwrap();
    assert_eq!(
        grid(&last["data"][0]["z"]),
        cells(&|_, _| 2.0),
        "replay end"
    );
}

/// `a` as planes of 2 columns x depth 2 (80 bytes: 5 planes), by hand:
/// element e = 4p + 2j + k is stored at time e and loaded at time
/// 20 + 2(4c + r) where (r, c) = (e / 5, e % 5) is its place in the 4 x 5
/// view. So the scatter has 40 points, two per cell; each plane's first
/// access is 4p + 2j + k and every cell has 2 accesses.
fn array_3d_oracle(text: &str) {
    let figs = json_of(text);
    let t = &figs[0]["data"][0];
    let mut got: Vec<_> = rows(&t["customdata"])
        .iter()
        .map(|c| (u(&c[0]), u(&c[5]), u(&c[7]), u(&c[8]), u(&c[9])))
        .collect();
    got.sort();
    let mut want = Vec::new();
    for e in 0..20 {
        let place = (e / 4, (e % 4) / 2, e % 2);
        want.push((e, A + 4 * e, place.0, place.1, place.2));
        let t = 20 + 2 * (4 * (e % 5) + e / 5);
        want.push((t, A + 4 * e, place.0, place.1, place.2));
    }
    want.sort();
    assert_eq!(
        got, want,
        "the 3D scatter's points: (time, address, plane, col, depth)"
    );
    let planes = |what: &str| -> Vec<Vec<Vec<Option<f64>>>> {
        figs.iter()
            .flat_map(|f| rows(&f["data"]).iter())
            .filter(|t| {
                t["type"] == "heatmap"
                    && t["hovertemplate"]
                        .as_str()
                        .is_some_and(|h| h.contains(what))
            })
            .map(|t| grid(&t["z"]))
            .collect()
    };
    let want_first: Vec<Vec<Vec<Option<f64>>>> = (0..5)
        .map(|p| {
            (0..2)
                .map(|j| (0..2).map(|k| Some((4 * p + 2 * j + k) as f64)).collect())
                .collect()
        })
        .collect();
    assert_eq!(planes("first access"), want_first, "first access per plane");
    let twos = vec![vec![vec![Some(2.0); 2]; 2]; 5];
    assert_eq!(planes("accesses %{z"), twos, "accesses per cell");
}
