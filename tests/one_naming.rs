//! One naming everywhere: on a 200-node linked list, `memory_stats`,
//! `cache_stats` (per variable, per line, per pair, reuse) and the
//! `compare_runs` sides name, group and order the variables the same way,
//! under `set_heap_grouping site` and `instances` alike.
//!
//! The counts are worked by hand from `tests/c/nm_list.c` at -O0: each of
//! the 200 nodes gets one 4-byte store (`n->val`) and one 8-byte store
//! (`n->next`), so the nodes `n` take 400 accesses and 2 400 bytes; the
//! pointer `n` (a stack variable, shown as `n@S` beside the nodes' row) is
//! stored once by line 18 and loaded by lines 19, 20 and 21 in each of the
//! 200 iterations: 800 accesses.
use std::collections::BTreeMap;

mod common;
mod vis_common;
use common::{compile, mapvis_script as mapvis};

/// Tcl printing `KEY variable accesses` for each dict of list `$list`, and
/// `MISS KEY variable misses_L1` when the dicts carry misses.
fn print_rows(key: &str, list: &str) -> String {
    format!(
        "foreach d ${list} {{ puts \"ROW {key} [dict get $d variable] [dict get $d accesses]\"; \
         if {{[dict exists $d misses_L1]}} {{ puts \"MISS {key} [dict get $d variable] [dict get $d misses_L1]\" }} }}; "
    )
}

/// (key, variable) -> number, from the `ROW`/`MISS` lines, in print order.
fn rows(out: &str, tag: &str) -> Vec<(String, String, u64)> {
    out.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 4 && w[0] == tag)
                .then(|| (w[1].to_string(), w[2].to_string(), w[3].parse().unwrap()))
        })
        .collect()
}

fn by_name(rows: &[(String, String, u64)], key: &str) -> BTreeMap<String, u64> {
    rows.iter()
        .filter(|r| r.0 == key)
        .map(|r| (r.1.clone(), r.2))
        .collect()
}

#[test]
fn every_report_names_groups_and_orders_alike() {
    let (dir, exe) = compile("tests/c/nm_list.c", &[]);
    let script = format!(
        "load_exe {}; run_gleipnir; memory_trace_analysis; set_mem_alloc all; \
         set ms [memory_stats]; {} set cs [cache_stats quiet]; {} save_run one; \
         set c [compare_runs one one]; foreach d $c {{ puts \"ROW cmp [dict get $d variable] [dict get [dict get $d a] accesses]\" }}; \
         set_heap_grouping instances; set mi [memory_stats]; {} set ci [cache_stats save]; {}",
        exe.display(),
        print_rows("ms", "ms"),
        print_rows("cs", "cs"),
        print_rows("mi", "mi"),
        print_rows("ci", "ci"),
    );
    let out = mapvis(dir.path(), &script);
    let all = rows(&out, "ROW");
    let misses = rows(&out, "MISS");
    // Grouped by site: the nodes are one row `n`, the pointer `n@S`, in
    // every report, with the hand-worked counts.
    for key in ["ms", "cs", "cmp"] {
        let got = by_name(&all, key);
        assert_eq!(got.get("n"), Some(&400), "{key}: {got:?}\n{out}");
        assert_eq!(got.get("n@S"), Some(&800), "{key}: {got:?}\n{out}");
        assert!(!got.keys().any(|k| k.starts_with("n#")), "{key}: {got:?}");
    }
    assert_eq!(by_name(&all, "ms"), by_name(&all, "cs"), "{out}");
    assert_eq!(by_name(&all, "cs"), by_name(&all, "cmp"), "{out}");
    // One row per block: 200 nodes of 2 accesses each, the same names in
    // memory_stats and cache_stats, and their misses sum to the group's.
    let mi = by_name(&all, "mi");
    let ci = by_name(&all, "ci");
    assert_eq!(mi, ci, "{out}");
    let nodes: Vec<u64> = (1..=200)
        .map(|k| *mi.get(&format!("n#{k}")).unwrap_or(&0))
        .collect();
    assert!(nodes.iter().all(|&n| n == 2), "{nodes:?}\n{out}");
    let grouped_misses = by_name(&misses, "cs")["n"];
    let summed: u64 = by_name(&misses, "ci")
        .iter()
        .filter(|(k, _)| k.starts_with("n#"))
        .map(|(_, m)| m)
        .sum();
    assert_eq!(grouped_misses, summed, "{out}");
    assert!(grouped_misses > 0, "{out}");
    // Natural order among equal miss counts: n#2 before n#10.
    let order: Vec<&str> = all
        .iter()
        .filter(|r| r.0 == "ci" && r.1.starts_with("n#"))
        .map(|r| r.1.as_str())
        .collect();
    let pos = |n: &str| order.iter().position(|x| *x == n).unwrap();
    let m = by_name(&misses, "ci");
    if m["n#2"] == m["n#10"] {
        assert!(pos("n#2") < pos("n#10"), "{order:?}");
    }
    // The saved tables use the same names.
    let csv = std::fs::read_to_string(dir.path().join("visinfo/cache_stats.csv")).unwrap();
    assert!(csv.lines().any(|l| l.starts_with("n#200,")), "{csv}");
}

/// With every memory kind drawn, each variable of the complete pattern is
/// drawn in its own kind's panel: the list's nodes and `rows`' blocks on
/// the heap axis, the stack variables (`i`, `j`, `head`, the pointer
/// `n@S`, the array of pointers `rows`) on the stack axis, even though the
/// 200 nodes share one row (which once shifted every later row's panel).
#[test]
fn every_variable_is_drawn_in_its_own_kinds_panel() {
    let (dir, exe) = compile("tests/c/nm_list.c", &[]);
    mapvis(
        dir.path(),
        &format!(
            "load_exe {}; set_mem_alloc all; run_gleipnir; memory_trace_analysis; \
             complete_memory_access_pattern",
            exe.display()
        ),
    );
    let html = std::fs::read_to_string(
        dir.path()
            .join("figures/complete_memory_access_pattern.html"),
    )
    .unwrap();
    // The 2D view is the page's second figure.
    let json = html
        .split("<script type=\"application/json\" id=\"fig1-json\">")
        .nth(1)
        .and_then(|t| t.split("</script>").next())
        .expect("the 2D view");
    let fig: serde_json::Value = serde_json::from_str(json).unwrap();
    let title = |axis: &str| {
        let key = axis.replacen('y', "yaxis", 1);
        fig["layout"][key]["title"]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let mut panel: BTreeMap<String, String> = BTreeMap::new();
    for t in fig["data"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        let var = name.rsplit_once(' ').map_or(name, |(v, _)| v).to_string();
        let axis = t["yaxis"].as_str().unwrap_or("y");
        let kind = title(axis);
        if let Some(before) = panel.insert(var.clone(), kind.clone()) {
            assert_eq!(before, kind, "{var} is drawn in two panels");
        }
    }
    // The rows one array holds are one row under the default grouping
    // (set_heap_grouping root).
    for v in ["n", "rows[i]"] {
        assert_eq!(
            panel.get(v).map(String::as_str),
            Some("heap address"),
            "{v}: {panel:?}"
        );
    }
    for v in ["i", "j", "head", "n@S", "rows"] {
        assert_eq!(
            panel.get(v).map(String::as_str),
            Some("stack address"),
            "{v}: {panel:?}"
        );
    }
}

/// `2d_memory_access_pattern n` on the list draws its 200 nodes side by
/// side, one row per node in allocation order and one column per field
/// of `struct node` (`val`, the 4 bytes of padding before the pointer,
/// `next`): each node's two stores are the row's val and next cells,
/// worked by hand from the loop that builds the list.
#[test]
fn a_lists_nodes_are_drawn_side_by_side_by_field() {
    let (dir, exe) = compile("tests/c/nm_list.c", &[]);
    let out = mapvis(
        dir.path(),
        &format!(
            "load_exe {}; set_mem_alloc H; run_gleipnir; memory_trace_analysis; \
             2d_memory_access_pattern n",
            exe.display()
        ),
    );
    assert!(
        out.contains("\"n\" names 200 blocks allocated at nm_list.c:18")
            && out.contains("one column per field (val, (padding), next)")
            && out.contains(
                "never touched by the region (blank columns): (padding) (4 bytes at offset 4)"
            ),
        "{out}"
    );
    let page = dir.path().join("figures/2d_memory_access_pattern_n.html");
    let figs = vis_common::figures(&page);
    let t = &figs[0]["data"][0];
    let (x, z) = (vis_common::nums(&t["x"]), vis_common::nums(&t["z"]));
    assert_eq!(x.len(), 400, "one point per store");
    let mut cells: Vec<(u64, u64)> = x
        .iter()
        .zip(&z)
        .map(|(&c, &r)| (r as u64, c as u64))
        .collect();
    cells.sort();
    let want: Vec<(u64, u64)> = (0..200).flat_map(|r| [(r, 0), (r, 2)]).collect();
    assert_eq!(cells, want, "each node's val and next, once each");
}

/// The access counts of a field figure's first heatmap, by column: the
/// sum over rows, and whether every cell of the column is blank or 0.
fn column_counts(page: &std::path::Path) -> Vec<(f64, bool)> {
    let figs = vis_common::figures(page);
    let z = vis_common::grid(&figs[1]["data"][0]["z"]);
    let cols = z[0].len();
    (0..cols)
        .map(|j| {
            let cells: Vec<f64> = z.iter().map(|r| r[j].unwrap_or(0.0)).collect();
            (cells.iter().sum(), cells.iter().all(|&c| c == 0.0))
        })
        .collect()
}

/// The array-of-structures figure shows every field of the structure's
/// type, also those the region never touched, with no access: in
/// tests/c/vis_aos.c, `struct particle { double x, y; int id; float m; }`
/// (24 bytes, no padding), the 16 global `ps` get x stored and loaded, y
/// stored, id stored, and id loaded again for i < 8, but never m; the 8
/// heap `hp` get m and id stored, but never x or y (worked by hand from
/// the loops).
#[test]
fn an_array_of_structures_shows_the_fields_never_touched() {
    let (dir, exe) = compile("tests/c/vis_aos.c", &[]);
    let out = mapvis(
        dir.path(),
        &format!(
            "load_exe {}; set_mem_alloc all; run_gleipnir; memory_trace_analysis; \
             2d_memory_access_pattern ps; 2d_memory_access_pattern hp",
            exe.display()
        ),
    );
    assert!(
        out.contains("ps is an array of 24-byte structures: one column per field (x, y, id, m)")
            && out.contains("never touched by the region (blank columns): m (4 bytes at offset 20)")
            && out.contains("hp is an array of 24-byte structures: one column per field (x, y, id, m)")
            && out.contains(
                "never touched by the region (blank columns): x (8 bytes at offset 0), y (8 bytes at offset 8)"
            ),
        "{out}"
    );
    let figs = dir.path().join("figures");
    // The page says so too, as the README does (every field a column, the
    // untouched ones blank and named).
    let page = |f: &str| std::fs::read_to_string(figs.join(f)).unwrap();
    assert!(page("2d_memory_access_pattern_ps.html")
        .contains("Field m is never touched in the region: its column is blank"));
    assert!(page("2d_memory_access_pattern_hp.html")
        .contains("Fields x, y are never touched in the region: their columns are blank"));
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    assert!(
        readme.contains("Every field gets a\ncolumn") && !readme.contains("Only fields that the"),
        "the README's arrays-of-structures paragraph disagrees with the figure"
    );
    let ps = column_counts(&figs.join("2d_memory_access_pattern_ps.html"));
    assert_eq!(
        ps,
        [(32.0, false), (16.0, false), (24.0, false), (0.0, true)],
        "ps: x, y, id, m"
    );
    let hp = column_counts(&figs.join("2d_memory_access_pattern_hp.html"));
    assert_eq!(
        hp,
        [(0.0, true), (0.0, true), (8.0, false), (8.0, false)],
        "hp: x, y, id, m"
    );
}

/// A recursion 2 000 frames deep (`scripts/recursion.c`): each frame's
/// locals `x` and `y` are instances of one variable, shown as one row each
/// in `memory_stats` and `cache_stats` by default, and listed one per frame
/// (`x#1` outermost ... `x#2000` innermost) under `set_heap_grouping
/// instances`.
///
/// Worked by hand from the source at -O0, per frame: `long x = depth`
/// stores x; `y = x * 2` loads x and stores y; `return x + y` loads both.
/// Every frame but the innermost adds its callee's result into y (8 bytes
/// loaded and 8 stored: one modify at -O0, or a load and a store). So for
/// N = 2 000: x has 3N = 6 000 accesses, 16N = 32 000 bytes loaded and
/// 8N = 16 000 stored over N addresses; y has 8 (N + N - 1) = 31 992 bytes
/// loaded and as many stored over N addresses. One instance of x: 3
/// accesses, 16 bytes loaded, 8 stored; of y: 16 and 16, 8 and 8 in the
/// innermost frame.
#[test]
fn a_recursions_locals_are_one_row_each_and_listed_on_request() {
    const N: u64 = 2000;
    let (dir, exe) = compile("scripts/recursion.c", &[]);
    let each = "foreach d $ROWS { puts \"VAR TAG [dict get $d variable] [dict get $d accesses] \
                [dict get $d load_bytes] [dict get $d store_bytes] [dict get $d addresses]\" }; ";
    let print = |rows: &str, tag: &str| each.replace("ROWS", rows).replace("TAG", tag);
    let script = format!(
        "load_exe {}; set_arguments {N}; set_mem_alloc S; run_gleipnir; memory_trace_analysis; \
         set ms [memory_stats]; {} set cs [cache_stats quiet]; {} \
         set_heap_grouping instances; set mi [memory_stats]; {}",
        exe.display(),
        print("ms", "ms"),
        print("cs", "cs").replace(
            "[dict get $d load_bytes] [dict get $d store_bytes] [dict get $d addresses]",
            "0 0 0"
        ),
        print("mi", "mi"),
    );
    let out = mapvis(dir.path(), &script);
    // tag -> variable -> [accesses, load_bytes, store_bytes, addresses]
    let mut got: BTreeMap<String, BTreeMap<String, [u64; 4]>> = BTreeMap::new();
    for l in out.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() == 7 && w[0] == "VAR" {
            let n: Vec<u64> = w[3..].iter().map(|x| x.parse().unwrap()).collect();
            got.entry(w[1].to_string())
                .or_default()
                .insert(w[2].to_string(), [n[0], n[1], n[2], n[3]]);
        }
    }
    let ms = &got["ms"];
    assert_eq!(ms.get("x"), Some(&[3 * N, 16 * N, 8 * N, N]), "{out}");
    let y = ms.get("y").expect("a row y");
    assert_eq!(y[1..], [8 * (2 * N - 1), 8 * (2 * N - 1), N], "{out}");
    assert!(!ms.keys().any(|k| k.contains('#')), "{ms:?}");
    assert!(
        out.contains("x (2000 instances, one per frame of down)")
            && out.contains("set_heap_grouping instances shows each instance"),
        "{out}"
    );
    // cache_stats names and counts the rows alike.
    let cs = &got["cs"];
    assert_eq!(cs.get("x").map(|r| r[0]), Some(3 * N), "{cs:?}");
    assert_eq!(cs.get("y").map(|r| r[0]), Some(y[0]), "{cs:?}");
    // One row per frame on request.
    let mi = &got["mi"];
    for k in 1..=N {
        assert_eq!(mi.get(&format!("x#{k}")), Some(&[3, 16, 8, 1]), "x#{k}");
        let want = if k == N { [8, 8, 1] } else { [16, 16, 1] };
        let y = mi.get(&format!("y#{k}")).unwrap_or_else(|| panic!("y#{k}"));
        assert_eq!(y[1..], want, "y#{k}");
    }
    assert!(!mi.contains_key("x") && !mi.contains_key("y"), "{mi:?}");
}
