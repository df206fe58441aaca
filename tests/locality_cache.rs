//! The cache model on real programs, traced for real: exact small cases
//! worked out by hand, and three kernels compared line by line with
//! Valgrind's cachegrind run on the same binary with the same geometry.
mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::*;
use mapvis::filter::locality::cache::{CacheModel, Counts, Level};
use mapvis::filter::locality::report::{self, CacheReport, Options};
use mapvis::filter::Analysis;
use mapvis::filter::MemKind;
use mapvis::trace::naming::ProgramNamer;

/// Compiles, traces and analyses a program; keeps the folder alive.
fn analysed(rel: &str) -> (tempfile::TempDir, std::path::PathBuf, Analysis) {
    let (dir, exe, _o, _evs, _end) = trace(rel, &[], &[]);
    let mut namer = ProgramNamer::new(Some(&exe), &[root().join("tests/c")]);
    let a = mapvis::filter::analyse(&dir.path().join("t.mvt"), &mut namer).expect("analysis");
    (dir, exe, a)
}

fn model(levels: &[(u8, u64, u64)]) -> CacheModel {
    CacheModel {
        levels: levels
            .iter()
            .map(|&(l, size, ways)| Level::new(l, size, ways, 64).unwrap())
            .collect(),
        origin: "test".into(),
    }
}

fn run(a: &Analysis, m: CacheModel) -> CacheReport {
    let opts = Options {
        model: m,
        sampling: None,
        auto_above: None,
        grouping: mapvis::filter::stats::Grouping::BySite,
    };
    report::cache_stats(a, MemKind::All, &opts).expect("cache_stats")
}

fn by_var(r: &CacheReport) -> BTreeMap<String, Counts> {
    r.per_variable()
        .into_iter()
        .map(|row| (row.key, row.counts))
        .collect()
}

#[test]
fn a_unit_stride_sweep_misses_once_per_line_and_a_column_walk_every_access() {
    let (_d, _exe, a) = analysed("tests/c/loc_small.c");
    // 4 KiB, 8-way L1: the 64 rows of `grid` are 512 bytes apart, so a
    // column's 64 lines fall in one set of 8 ways and every access misses.
    let r = run(&a, model(&[(1, 4096, 8)]));
    let v = by_var(&r);
    let sweep = v["sweep"];
    assert_eq!(sweep.accesses, 4096);
    assert_eq!(sweep.misses[0], 4096 * 8 / 64, "one miss per line");
    assert_eq!(sweep.compulsory(), 512);
    assert_eq!(sweep.used_bytes, 512 * 64, "every byte of each line used");
    let grid = v["grid"];
    assert_eq!(grid.accesses, 64 * 64);
    assert_eq!(grid.misses[0], 64 * 64, "every access misses");
    // Each line holds 8 columns: 64 rows x 8 lines per row = 512 lines
    // are touched for the first time.
    assert_eq!(grid.compulsory(), 512);
    // 8 of 64 bytes of each fetched line used before eviction.
    assert_eq!(grid.used_bytes, 64 * 64 * 8);
    // Per line, the source names: the sweep line and the column line.
    let lines: BTreeMap<String, Counts> = r
        .per_line()
        .into_iter()
        .map(|row| (row.key, row.counts))
        .collect();
    let sweep_line = format!(
        "loc_small.c:{}",
        line_of("tests/c/loc_small.c", "sweep line")
    );
    let col_line = format!(
        "loc_small.c:{}",
        line_of("tests/c/loc_small.c", "column line")
    );
    assert_eq!(lines[&sweep_line].misses[0], 512, "{lines:?}");
    // The column line's grid loads all miss; its loads and stores of `i`,
    // `j` and `sum` hit: their stack line is touched every iteration, so
    // LRU never evicts it, and it was fetched by the sweep loop.
    assert_eq!(lines[&col_line].misses[0], 4096, "{lines:?}");
    // A 64 KiB L1 holds the whole matrix (32 KiB) and the loop's stack
    // lines: only the matrix's 512 lines miss.
    let r = run(&a, model(&[(1, 65536, 8)]));
    assert_eq!(by_var(&r)["grid"].misses[0], 512);
}

/// D1 and LL misses per line of `file` from cachegrind with a 32 KiB
/// 8-way D1 and a 256 KiB 8-way LL: line -> (D1 misses, LL misses).
fn cachegrind(exe: &Path, file: &Path, dir: &Path) -> BTreeMap<u32, (u64, u64)> {
    let (status, out) = common::cachegrind(exe, dir);
    assert!(status.code().is_some(), "cachegrind died");
    let ann = Command::new("cg_annotate")
        .args(["--show=D1mr,DLmr,D1mw,DLmw", "--show-percs=no", "--auto=no"])
        .arg(&out)
        .arg(file)
        .output()
        .expect("run cg_annotate");
    let text = String::from_utf8_lossy(&ann.stdout);
    let src = std::fs::read_to_string(file).unwrap();
    let src_lines: Vec<&str> = src.lines().collect();
    // Annotated lines are four counts (or dots) then the source line, in
    // file order: match them to the file's lines.
    let mut next = 0usize;
    let mut got = BTreeMap::new();
    let body = text
        .split("-- User-annotated source")
        .nth(1)
        .expect("cg_annotate annotated the file");
    for l in body.lines() {
        let toks: Vec<&str> = l.split_whitespace().collect();
        if toks.len() < 4 || next >= src_lines.len() {
            continue;
        }
        let counts: Option<Vec<u64>> = toks[..4]
            .iter()
            .map(|t| {
                if *t == "." {
                    Some(0)
                } else {
                    t.replace(',', "").parse().ok()
                }
            })
            .collect();
        let Some(c) = counts else { continue };
        let rest = l.split_whitespace().skip(4).collect::<Vec<_>>().join(" ");
        let want = src_lines[next]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if rest == want {
            got.insert(next as u32 + 1, (c[0] + c[2], c[1] + c[3]));
            next += 1;
        }
    }
    assert_eq!(next, src_lines.len(), "every line annotated:\n{text}");
    got
}

/// Compares mapvis's 2-level model (32 KiB 8-way L1, 256 KiB 8-way L2)
/// with cachegrind's D1 and LL on every line of `rel`.
///
/// Remaining differences, bounded in the assertion (on these kernels the
/// loop lines agree exactly, except matmul's LL misses: 3 632 here against
/// cachegrind's 3 635, 0.08%):
/// - the GL_STOP line and the lines after it (`return`, `}`) run after the
///   region ends (GL_STOP's own code runs after its client request), so
///   they are not traced here and not compared;
/// - the GL_START line misses once here: mapvis starts cold at GL_START,
///   while cachegrind's caches already hold main's stack line;
/// - cachegrind's LL also holds instruction lines (a few hundred bytes of
///   code here), so its LL evicts slightly differently.
///
/// So each line agrees within 1% or within one miss.
fn compare_with_cachegrind(rel: &str) {
    let (dir, exe, a) = analysed(rel);
    let r = run(&a, model(&[(1, 32768, 8), (2, 262144, 8)]));
    let cg = cachegrind(&exe, &root().join(rel), dir.path());
    let stem = Path::new(rel)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let ours: BTreeMap<u32, Counts> = r
        .per_line()
        .into_iter()
        .filter_map(|row| {
            let (f, n) = row.key.rsplit_once(':')?;
            if f.ends_with(&stem) {
                Some((n.parse().ok()?, row.counts))
            } else {
                None
            }
        })
        .collect();
    let stop = std::fs::read_to_string(root().join(rel))
        .unwrap()
        .lines()
        .position(|l| l.contains("GL_STOP"))
        .expect("the kernel has GL_STOP") as u32
        + 1;
    let mut compared = 0;
    let mut big = 0;
    for (line, &(d1, ll)) in cg.iter().filter(|(line, _)| **line < stop) {
        let c = ours.get(line).copied().unwrap_or_default();
        for (what, theirs, mine) in [("D1", d1, c.misses[0]), ("LL", ll, c.misses[1])] {
            let diff = theirs.abs_diff(mine);
            if theirs + mine > 0 {
                println!("{rel}:{line} {what} misses: cachegrind {theirs}, mapvis {mine}");
            }
            assert!(
                diff as f64 <= 0.01 * theirs as f64 || diff <= 1,
                "{rel}:{line} {what} misses: cachegrind {theirs}, mapvis {mine}\nours: {ours:?}\ncachegrind: {cg:?}"
            );
            compared += 1;
            if theirs >= 1000 {
                big += 1;
            }
        }
    }
    assert!(
        compared > 10 && big >= 1,
        "{rel}: too little to compare: {cg:?}"
    );
}

#[test]
fn ijk_matmul_misses_per_line_agree_with_cachegrind() {
    compare_with_cachegrind("tests/c/loc_matmul.c");
}

#[test]
fn transposed_copy_misses_per_line_agree_with_cachegrind() {
    compare_with_cachegrind("tests/c/loc_transpose.c");
}

#[test]
fn stencil_misses_per_line_agree_with_cachegrind() {
    compare_with_cachegrind("tests/c/loc_stencil.c");
}

/// The 3C model, worked by hand on `loc_3c.c` with a 32 KiB 8-way L1 of
/// 64-byte lines (64 sets, 512 lines), for the named arrays only.
/// - `grid`'s column walk: every one of its 131 072 loads misses (a
///   column's 128 lines share one set of 8 ways). 128 x 128 = 16 384 lines
///   are touched for the first time; every other miss is a conflict: a
///   line comes back after the 127 other lines of its column group (and a
///   few stack lines), far fewer than 512, so a fully associative cache
///   of the same size would hit.
/// - `big`'s two sweeps of 1024 lines: the first misses once per line
///   (compulsory), the second again (capacity: 1024 distinct lines since
///   the last use, more than 512).
/// - An L2 of 256 KiB, 8-way (512 sets), sees the L1's misses: `grid`'s
///   column group spreads over 4 of its sets, 32 lines to a set of 8
///   ways, so it misses every time too, by conflict again (128 lines, far
///   fewer than its 4096); `big`'s second sweep hits there.
/// - Fully associative (512 ways, one set), `grid` has no conflict misses
///   left: only its 16 384 compulsory ones.
#[test]
fn misses_by_class_compulsory_capacity_conflict() {
    let (_d, _exe, a) = analysed("tests/c/loc_3c.c");
    let r = run(&a, model(&[(1, 32 << 10, 8), (2, 256 << 10, 8)]));
    let v = by_var(&r);
    let grid = v["grid"];
    assert_eq!(grid.accesses, 128 * 1024);
    assert_eq!(grid.misses[0], 128 * 1024);
    let want = (16_384, 0, 114_688);
    let l1 = grid.classes[0];
    assert_eq!((l1.compulsory, l1.capacity, l1.conflict), want);
    assert_eq!(grid.compulsory(), 16_384);
    assert_eq!(grid.misses[1], 128 * 1024);
    let l2 = grid.classes[1];
    assert_eq!((l2.compulsory, l2.capacity, l2.conflict), want);
    let big = v["big"];
    assert_eq!(big.accesses, 2 * 8192);
    let l1 = big.classes[0];
    assert_eq!((l1.compulsory, l1.capacity, l1.conflict), (1024, 1024, 0));
    let l2 = big.classes[1];
    assert_eq!(
        (big.misses[1], l2.compulsory, l2.capacity, l2.conflict),
        (1024, 1024, 0, 0)
    );
    // Every variable's classes sum to its misses, at each level.
    for (name, c) in &v {
        for l in 0..2 {
            assert_eq!(c.classes[l].total(), c.misses[l], "{name} L{}", l + 1);
        }
    }
    let full = by_var(&run(&a, model(&[(1, 32 << 10, 512)])));
    let l1 = full["grid"].classes[0];
    assert_eq!((l1.compulsory, l1.capacity, l1.conflict), (16_384, 0, 0));
    assert_eq!(full["grid"].misses[0], 16_384);
    let l1 = full["big"].classes[0];
    assert_eq!((l1.compulsory, l1.capacity, l1.conflict), (1024, 1024, 0));
    for (name, c) in &full {
        assert_eq!(c.classes[0].conflict, 0, "{name}: fully associative");
    }
}
