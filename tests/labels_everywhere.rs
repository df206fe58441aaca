//! A loop's pattern label is the same wherever mapvis shows it: the
//! `memory_stats` pattern table, `cache_stats`' per-pair table (as saved), the hover
//! of the complete pattern's points and `compare_runs`' result, on
//! `tests/c/loc_walks.c` built at -O0 and at -O2, with the expectations
//! worked out from the source (as in `tests/locality_patterns.rs`): the
//! column update of `g[i][j] += 1.0` over a 64 x 64 matrix of doubles walks
//! 64 elements (512 bytes) between iterations, and the scaled copy
//! `dst[i] = 2.0 * src[i]` writes `dst` with unit stride (at -O2 in 16-byte
//! vector stores, which the label may name).
mod common;
mod vis_common;

use common::{compile, line_of, mapvis_script as mapvis};

const REL: &str = "tests/c/loc_walks.c";

/// The label without ` (N B accesses)`, as -O2's vector widths add it.
fn without_width(l: &str) -> String {
    match (l.find(" ("), l.find(" B accesses)")) {
        (Some(a), Some(b)) if a < b => format!("{}{}", &l[..a], &l[b + " B accesses)".len()..]),
        _ => l.to_string(),
    }
}

/// The label printed on the row of `var` at `source` of the table whose
/// header's words are `header`, the label following `skip` columns.
fn printed(out: &str, header: &[&str], skip: usize, var: &str, source: &str) -> String {
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.split_whitespace().eq(header.iter().copied()))
        .unwrap_or_else(|| panic!("no table {header:?}:\n{out}"));
    lines[at + 1..]
        .iter()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|w| w.len() > skip && w[0] == var && w[1] == source)
        .map(|w| w[skip..].join(" "))
        .unwrap_or_else(|| panic!("no row {var} {source} after {header:?}:\n{out}"))
}

/// The pattern in the hover of `var`'s points at `source` in the complete
/// pattern's 2D view: an exact point's customdata has the variable at 1,
/// the source at 5 and the pattern at 8; a group's (above the 3D view's
/// budget every view is grouped) at 3, 12 and 13.
fn hovered(page: &std::path::Path, var: &str, source: &str) -> Vec<String> {
    let figs = vis_common::figures(page);
    let mut out: Vec<String> = Vec::new();
    for t in figs[1]["data"].as_array().unwrap() {
        for row in t["customdata"].as_array().into_iter().flatten() {
            let (v, src, pat) = match row.as_array().map_or(0, Vec::len) {
                // An aggregated group's row (GroupField of vis::complete).
                13 => (3, 11, 12),
                _ => (1, 5, 8),
            };
            if row[v] == var && row[src] == source {
                let p = row[pat].as_str().unwrap().to_string();
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out
}

fn labels_agree(opt: &str) {
    let (dir, exe) = compile(REL, &[opt]);
    let out = mapvis(
        dir.path(),
        &format!(
            "load_exe {}; set_mem_alloc all; run_gleipnir; memory_trace_analysis; memory_stats; \
             cache_stats save; complete_memory_access_pattern; save_run one; \
             foreach d [compare_runs one one] {{ puts \"CMP [dict get $d variable]: [dict get [dict get $d a] pattern]\" }}",
            exe.display()
        ),
    );
    let src = |marker: &str| format!("loc_walks.c:{}", line_of(REL, &format!("/* {marker} */")));
    let page = dir
        .path()
        .join("figures/complete_memory_access_pattern.html");
    let cases = [
        (
            "g",
            "column update",
            "column-wise: stride 64 elements (512 B)",
        ),
        ("dst", "scaled copy", "unit stride"),
    ];
    for (var, marker, want) in cases {
        let source = src(marker);
        let ms = printed(
            &out,
            &["variable", "source", "accesses", "pattern"],
            3,
            var,
            &source,
        );
        assert_eq!(without_width(&ms), want, "{opt} memory_stats {var}");
        // cache_stats prints the 20 pairs that miss most; its saved pair
        // table has them all, the label first in its last column.
        let pairs = std::fs::read_to_string(dir.path().join("visinfo/cache_stats_pairs.csv"))
            .expect("cache_stats save writes the pairs");
        let row = pairs
            .lines()
            .find(|l| l.starts_with(&format!("{var},{source},")))
            .unwrap_or_else(|| panic!("{opt}: no pair {var} {source} in:\n{pairs}"));
        let cs = row
            .rsplit_once(",\"")
            .map(|(_, l)| l.trim_end_matches('"'))
            .or_else(|| row.rsplit_once(',').map(|(_, l)| l))
            .unwrap_or_default();
        let cs_label = cs.split(", ").next().unwrap_or_default();
        assert_eq!(
            without_width(cs_label),
            want,
            "{opt} cache_stats {var}: {row}"
        );
        assert_eq!(
            cs_label, ms,
            "{opt}: cache_stats and memory_stats label {var} alike"
        );
        let hover = hovered(&page, var, &source);
        assert_eq!(hover, vec![ms.clone()], "{opt} hover of {var} at {source}");
    }
    // dst is written on one line only, so its busiest pair is that line.
    let cmp = out
        .lines()
        .find_map(|l| l.strip_prefix("CMP dst: "))
        .unwrap_or_else(|| panic!("no comparison of dst:\n{out}"));
    // As cache_stats shows it: the label, then the bytes used per line.
    let cmp = cmp.split(", ").next().unwrap_or_default();
    assert_eq!(without_width(cmp), "unit stride", "{opt} compare_runs dst");
}

#[test]
fn labels_agree_across_reports_at_o0() {
    labels_agree("-O0");
}

#[test]
fn labels_agree_across_reports_at_o2() {
    labels_agree("-O2");
}
