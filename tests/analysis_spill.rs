//! A bounded analysis (its access list forced to disk with a memory budget
//! of nothing, in small files and row groups) gives exactly what the
//! in-memory analysis gives, on the test programs, traced for real; and so
//! does the saved analysis read back. The pattern states gathered while
//! the analysis streams equal those of a pass over the access list.
//!
//! The oracle of every test here is mapvis itself: the in-memory
//! analysis of the same trace (or, for the spans, a pass over its access
//! list). That is sound only because the in-memory analysis of each
//! program is validated against independent numbers elsewhere, named in
//! each test's comment; a bug shared by both paths is caught there, not
//! here.
mod common;

use common::*;
use mapvis::filter::batches::{AccessBatches, SelectionBatches, VarSpan};
use mapvis::filter::locality::colour::ColourMode;
use mapvis::filter::locality::report;
use mapvis::filter::store::Layout;
use mapvis::filter::{self as f, MemKind};
use mapvis::filter::{Analysis, Keep};
use mapvis::trace::naming::ProgramNamer;
use polars::prelude::*;

/// Files and row groups small enough that a trace of `n` accesses has
/// about six files of about five row groups each.
fn small(n: u64) -> Layout {
    let window = (n / 6).max(8);
    Layout {
        window,
        row_group: (window as usize / 5).max(4),
    }
}

/// The trace of `rel` (in `dir/t.mvt`) and its program.
fn traced(rel: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, exe, _o, _evs, _end) = trace(rel, &[], &[]);
    (dir, exe)
}

fn analyse(dir: &std::path::Path, exe: &std::path::Path, keep: &Keep) -> Analysis {
    let mut namer = ProgramNamer::new(Some(exe), &[root().join("tests/c")]);
    mapvis::filter::analyse_into(&dir.join("t.mvt"), &mut namer, &mut |_| {}, keep)
        .expect("analysis")
}

/// Everything the later stages read of an analysis, as comparable values:
/// every access row, the lookup table, the variables, the pattern labels
/// and the dataset's windows.
type Digest = (
    polars::prelude::DataFrame,
    polars::prelude::DataFrame,
    String,
    String,
    Vec<String>,
);

fn digest(a: &Analysis) -> Digest {
    let all = f::select(a, MemKind::All).unwrap();
    let rows = f::rows(a, &all).unwrap();
    let vars: Vec<String> = a
        .vars
        .iter()
        .map(|v| {
            format!(
                "{} {:?} {:?} {:?} {:?}",
                v.name, v.accessed, v.bytes, v.threads, v.free_time
            )
        })
        .collect();
    let patterns =
        report::patterns(a, MemKind::All, mapvis::filter::stats::Grouping::BySite).unwrap();
    (
        rows,
        a.locations.frame().unwrap(),
        format!("{vars:?} {:?}", unspilled(&a.summary.notes)),
        format!("{patterns:?}"),
        a.accesses
            .windows()
            .iter()
            .map(|w| format!("{w:?}"))
            .collect(),
    )
}

/// What a pass over every access finds of each variable: the spans the
/// figures take from the tables instead ([`AccessBatches::var_spans`]).
fn spans_of_a_pass(a: &Analysis) -> Vec<Option<VarSpan>> {
    let all = f::select(a, MemKind::All).unwrap();
    let mut out: Vec<Option<VarSpan>> = vec![None; a.vars.len()];
    SelectionBatches::plain(a, all)
        .visit(&mut |b| {
            for k in 0..b.len() {
                let end = b.addr[k] + u64::from(b.size[k].max(1)) - 1;
                let s = out[b.var[k] as usize].get_or_insert(VarSpan {
                    accesses: 0,
                    time: (b.time[k], b.time[k]),
                    addr: (b.addr[k], b.addr[k]),
                    last_byte: end,
                    max_occ: 0,
                });
                s.accesses += 1;
                s.time = (s.time.0.min(b.time[k]), s.time.1.max(b.time[k]));
                s.addr = (s.addr.0.min(b.addr[k]), s.addr.1.max(b.addr[k]));
                s.last_byte = s.last_byte.max(end);
                s.max_occ = s.max_occ.max(b.occ[k]);
            }
            Ok(true)
        })
        .unwrap();
    out
}

/// The spans the tables give for every variable, for each alone and for
/// all together, are those of a pass; a coloured selection has none.
fn spans_are_a_pass(a: &Analysis, rel: &str) {
    let want = spans_of_a_pass(a);
    let all = f::select(a, MemKind::All).unwrap();
    let got = SelectionBatches::plain(a, all.clone()).var_spans();
    assert_eq!(got.as_ref(), Some(&want), "{rel}: spans of every variable");
    for (v, w) in want.iter().enumerate().filter(|(_, w)| w.is_some()) {
        let keep = (0..a.vars.len()).map(|x| x == v).collect();
        let sel = f::Selection::of(a, keep).unwrap();
        let got = SelectionBatches::plain(a, sel).var_spans().unwrap();
        assert_eq!(got[v], *w, "{rel}: spans of {}", a.vars[v].name);
        assert_eq!(got.iter().flatten().count(), 1);
    }
    let model = mapvis::filter::locality::cache::CacheModel::default();
    let coloured =
        mapvis::filter::locality::colour::selection_batches(a, all, ColourMode::Hit, &model)
            .unwrap();
    assert_eq!(coloured.var_spans(), None, "{rel}: coloured");
}

/// `notes` without the one saying the lookup table was counted on disk.
fn unspilled(notes: &[String]) -> Vec<&String> {
    notes
        .iter()
        .filter(|n| !n.contains("parts on disk"))
        .collect()
}

/// The checks for one program: in memory, spilled, partly spilled, and
/// saved then loaded, all alike; and the spilled dataset is cut as asked.
fn same_when_spilled(rel: &str, regions: u32) {
    let (dir, exe) = traced(rel);
    let n = analyse(dir.path(), &exe, &Keep::MEMORY).accesses.len();
    let layout = small(n);
    let mem = analyse(
        dir.path(),
        &exe,
        &Keep {
            layout,
            ..Keep::MEMORY
        },
    );
    let (want_rows, want_locs, want_vars, want_pat, want_windows) = digest(&mem);
    assert!(mem.locality.is_none());
    let want_locality = locality_digest(&mem);
    let plan = f::LocalityPlan {
        model: small_model(),
        sampling: None,
        auto_above: None,
        budget: u64::MAX,
    };
    spans_are_a_pass(&mem, rel);
    assert!(want_rows.height() as u64 == n && n > 2 * layout.window);
    // The pattern states the analysis gathered as it streamed are what a
    // pass over its access list gathers.
    assert!(mem.patterns.is_some(), "{rel}: no pattern states");
    let mut fresh = mem.clone();
    fresh.patterns = None;
    let again = format!(
        "{:?}",
        report::patterns(
            &fresh,
            MemKind::All,
            mapvis::filter::stats::Grouping::BySite
        )
        .unwrap()
    );
    assert_eq!(
        again, want_pat,
        "{rel}: streamed and re-read patterns differ"
    );
    // Nothing kept in memory, and about half of it; with nothing in
    // memory, the lookup table is counted in runs of 7 rows merged on disk.
    for budget in [0, n * 21 / 2] {
        let ds = dir.path().join(format!("ds{budget}"));
        let lookup_rows = if budget == 0 { 7 } else { usize::MAX };
        let keep = Keep {
            dataset: Some(&ds),
            memory_budget: budget,
            layout,
            lookup_rows,
        };
        let mut namer = ProgramNamer::new(Some(&exe), &[root().join("tests/c")]);
        let spilled = mapvis::filter::analyse_recording(
            &dir.path().join("t.mvt"),
            &mut namer,
            &mut |_| {},
            &keep,
            Some(&plan),
        )
        .expect("analysis");
        // The cache model fed as the analysis streamed counts what a
        // simulation over the in-memory analysis' accesses counts.
        assert!(spilled.locality.is_some(), "{rel}: nothing recorded");
        assert_eq!(
            locality_digest(&spilled),
            want_locality,
            "{rel}, budget {budget}: recorded cache counts differ"
        );
        let runs = spilled
            .summary
            .notes
            .iter()
            .any(|n| n.contains("parts on disk"));
        assert_eq!(runs, budget == 0, "{rel}: {:?}", spilled.summary.notes);
        assert!(
            !ds.with_file_name("lookup-runs").exists(),
            "{rel}: runs left"
        );
        let (rows, locs, vars, pat, windows) = digest(&spilled);
        assert!(
            rows.equals(&want_rows),
            "{rel}, budget {budget}: access rows differ"
        );
        assert!(
            locs.equals(&want_locs),
            "{rel}, budget {budget}: lookup table differs"
        );
        assert_eq!(vars, want_vars, "{rel}, budget {budget}: variables differ");
        assert_eq!(pat, want_pat, "{rel}, budget {budget}: patterns differ");
        assert_eq!(windows, want_windows, "{rel}, budget {budget}");
        // Files: one per window, each where its region and t0 say.
        for w in spilled.accesses.windows() {
            assert!(w.len <= layout.window && w.region >= 1 && w.region <= regions);
            assert!(w.file(&ds).is_file(), "{rel}: {w:?} has no file");
        }
        let last = spilled.accesses.windows().iter().map(|w| w.region).max();
        assert_eq!(last, Some(regions), "{rel}: regions in the dataset");
        by_var_reads_the_same(&spilled, &want_rows, rel);
        spans_are_a_pass(&spilled, rel);
        // Saved and loaded back: the same again.
        let saved = dir.path().join(format!("saved{budget}"));
        f::files::save_analysis(&spilled, &saved).unwrap();
        let back = f::files::load_analysis(&saved).unwrap();
        by_var_reads_the_same(&back, &want_rows, rel);
        spans_are_a_pass(&back, rel);
        let (rows, locs, _, pat, _) = digest(&back);
        assert!(rows.equals(&want_rows), "{rel}: loaded access rows differ");
        assert!(
            locs.equals(&want_locs),
            "{rel}: loaded lookup table differs"
        );
        assert_eq!(pat, want_pat, "{rel}: loaded patterns differ");
        assert_eq!(back.locality, spilled.locality, "{rel}: loaded counts");
        assert_eq!(locality_digest(&back), want_locality, "{rel}: loaded");
    }
}

/// A small cache model, so that the test programs miss at every level.
fn small_model() -> f::CacheModel {
    use mapvis::filter::locality::cache::Level;
    f::CacheModel {
        levels: vec![
            Level::new(1, 1024, 2, 64).unwrap(),
            Level::new(2, 4096, 4, 64).unwrap(),
        ],
        origin: "test".into(),
    }
}

/// What `cache_stats` reports of `a` under [`small_model`]: the counts per
/// (variable, line) pair, the reuse histograms and the pattern labels.
fn locality_digest(a: &Analysis) -> String {
    let opts = report::Options {
        model: small_model(),
        sampling: None,
        auto_above: None,
        grouping: f::Grouping::Instances,
    };
    let r = f::cache_stats(a, MemKind::All, &opts).unwrap();
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}\n{}",
        r.cache.pairs,
        r.cache.counts,
        r.reuse.per_var,
        r.reuse.most_distant,
        (0..r.patterns.len())
            .map(|i| r.pattern_text(i))
            .collect::<Vec<_>>()
            .join("; ")
    )
}

/// The columns the by-variable dataset and the access list share.
const COLS: [&str; 7] = ["time", "op", "addr", "size", "tid", "var", "line"];

/// The rows of `keep`'s variables, in time order, as the access list
/// would give them had it no by-variable dataset.
fn filtered(rows: &DataFrame, keep: &[bool]) -> DataFrame {
    let var = rows.column("var").unwrap().u32().unwrap();
    let mask: BooleanChunked = var.into_no_null_iter().map(|v| keep[v as usize]).collect();
    rows.select(COLS).unwrap().filter(&mask).unwrap()
}

/// What the by-variable dataset gives for `keep`, concatenated.
fn read_by_var(a: &Analysis, keep: &[bool]) -> DataFrame {
    let bv = a
        .accesses
        .by_var()
        .expect("a list on disk has a by-variable dataset");
    let mut out: Option<DataFrame> = None;
    bv.for_each(keep, &mut |df| {
        let df = df.select(COLS)?;
        match &mut out {
            Some(o) => {
                o.vstack_mut(&df)?;
            }
            None => out = Some(df),
        }
        Ok(true)
    })
    .unwrap();
    out.expect("the variables have accesses")
}

/// Every variable alone, every pair of the first eight and all of them
/// together, read from the by-variable dataset (merged by time where
/// several), are the rows of the access list that belong to them; and
/// the access list reads a small selection through it.
///
/// Scalars (1 to 16 bytes) are left out of it: reading one goes to the
/// access list, and the dataset refuses it.
fn by_var_reads_the_same(a: &Analysis, want: &DataFrame, rel: &str) {
    let per_var = a.accesses_per_var().unwrap();
    let bv = a
        .accesses
        .by_var()
        .expect("a list on disk has a by-variable dataset");
    let scalar = |v: usize| (1..=16).contains(&a.vars[v].size);
    let accessed: Vec<usize> = (0..per_var.len()).filter(|&v| per_var[v] > 0).collect();
    for &v in &accessed {
        assert_eq!(
            bv.left_out().contains(&(v as u32)),
            scalar(v),
            "{rel}: variable {} ({} bytes)",
            a.vars[v].name,
            a.vars[v].size
        );
    }
    let Some(&s) = accessed.iter().find(|&&v| scalar(v)) else {
        panic!("{rel}: the program has scalars");
    };
    let mut keep = vec![false; per_var.len()];
    keep[s] = true;
    assert!(
        !a.accesses.reads_by_var(&keep),
        "{rel}: a scalar is read from the list"
    );
    assert!(bv.for_each(&keep, &mut |_| Ok(true)).is_err());
    let used: Vec<usize> = accessed.into_iter().filter(|&v| !scalar(v)).collect();
    let mut sets: Vec<Vec<usize>> = used.iter().map(|&v| vec![v]).collect();
    for (i, &x) in used.iter().take(8).enumerate() {
        for &y in used.iter().take(8).skip(i + 1) {
            sets.push(vec![x, y]);
        }
    }
    sets.push(used.clone());
    for set in sets {
        let mut keep = vec![false; per_var.len()];
        set.iter().for_each(|&v| keep[v] = true);
        let got = read_by_var(a, &keep);
        let expect = filtered(want, &keep);
        assert_eq!(
            got.height() as u64,
            set.iter().map(|&v| per_var[v]).sum::<u64>()
        );
        assert!(
            got.equals(&expect),
            "{rel}: variables {set:?} by variable differ"
        );
    }
    let smallest = *used.iter().min_by_key(|&&v| per_var[v]).unwrap();
    let mut keep = vec![false; per_var.len()];
    keep[smallest] = true;
    assert!(
        a.accesses.reads_by_var(&keep),
        "{rel}: a small variable is read by variable"
    );
}

/// tests/c/loc_matmul.c spilled, partly spilled and saved then loaded
/// gives what the in-memory analysis gives. Oracle: mapvis's in-memory
/// analysis, whose accesses of this program give cachegrind's D1 and LL
/// misses line by line in
/// `tests/locality_cache.rs::ijk_matmul_misses_per_line_agree_with_cachegrind`.
#[test]
fn a_matrix_multiply_spilled_is_the_same() {
    same_when_spilled("tests/c/loc_matmul.c", 1);
}

/// tests/c/an_reuse.c (two regions, a heap address reused) spilled gives
/// what the in-memory analysis gives. Oracle: mapvis's in-memory
/// analysis, whose per-variable bytes of this program are checked against
/// numbers worked out by hand in
/// `tests/analysis_names.rs::a_reused_address_belongs_to_the_new_block`.
#[test]
fn two_regions_spilled_are_the_same() {
    same_when_spilled("tests/c/an_reuse.c", 2);
}

/// tests/c/an_struct.c and tests/c/an_realloc.c spilled give what the
/// in-memory analysis gives. Oracle: mapvis's in-memory analysis, whose
/// per-variable bytes of these programs are checked against numbers
/// worked out by hand in
/// `tests/analysis_names.rs::struct_member_allocations_are_named_by_member`
/// and `tests/analysis_names.rs::realloc_gives_a_new_instance`.
#[test]
fn structures_and_realloc_spilled_are_the_same() {
    same_when_spilled("tests/c/an_struct.c", 1);
    same_when_spilled("tests/c/an_realloc.c", 2);
}

/// The variable spans the tables keep for two threads, a C++ program and
/// an array of structures equal those of a pass over the access list.
/// Oracle: mapvis's own access list, whose content for these programs is
/// checked against hand-worked numbers in
/// `tests/trace_tool.rs::two_threads_have_distinct_ids_and_both_are_recorded`
/// (and the golden dump of the same program, `tests/golden.rs`),
/// `tests/naming_idioms.rs::cpp_allocations_members_containers_and_frames_are_named`
/// and
/// `tests/one_naming.rs::an_array_of_structures_shows_the_fields_never_touched`.
#[test]
fn threads_and_cpp_spans_are_a_pass() {
    for (rel, cc) in [
        ("tests/c/trace_threads.c", "-pthread"),
        ("tests/c/nm_cpp.cpp", "-lstdc++"),
        ("tests/c/vis_aos.c", "-O0"),
    ] {
        let (dir, exe, _o, _evs, _end) = trace(rel, &[cc], &[]);
        spans_are_a_pass(&analyse(dir.path(), &exe, &Keep::MEMORY), rel);
    }
}
