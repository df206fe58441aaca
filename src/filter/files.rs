//! Data files: the order data, allocation info and statistics in `visinfo/`
//! (CSV and Parquet), and the saved analysis in the working folder that lets
//! a later session continue without tracing again.
//!
//! Column meanings are documented in `docs/data-files.md`.
use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::analysis::Analysis;
use super::csv::{write_batches, write_csv};
use super::error::FilterError;
use super::io::{
    commit, create, link_or_copy, mkdir, read_saved_parquet, write_failed, write_parquet,
    write_whole,
};
use super::model::{Allocation, TraceSummary, Variable};
use super::schema::access as ac;
use super::walks::PatternStates;
use crate::trace::naming::Scope;
use crate::workdir::{Pending, Run, ANALYSIS_DIR};

/// Addresses as hex text (`0x4a38110`), built in one buffer without an
/// allocation per row.
fn hex(addrs: &UInt64Chunked) -> StringChunked {
    use std::fmt::Write as _;
    let mut b = StringChunkedBuilder::new(addrs.name().clone(), addrs.len());
    let mut text = String::with_capacity(20);
    for a in addrs {
        match a {
            Some(a) => {
                text.clear();
                let _ = write!(text, "{a:#x}");
                b.append_value(&text);
            }
            None => b.append_null(),
        }
    }
    b.finish()
}

/// One batch of the order data: `order, address, operation, variable, size,
/// thread, source`, one row per selected access in time order (the
/// original's "Order of Access - Address - Operation - Variable Name",
/// extended). `rows` holds the access columns of (a slice of) a selection, from
/// [`super::selection::rows`];
/// with `hex_addresses` the address is text such as `0x4a38110`.
pub fn order_data(a: &Analysis, rows: &DataFrame, hex_addresses: bool) -> PolarsResult<DataFrame> {
    let var = rows.column(ac::VAR)?.u32()?;
    let names: Vec<&str> = var
        .into_iter()
        .map(|v| {
            v.and_then(|v| a.vars.get(v as usize))
                .map_or("", |v| v.name.as_str())
        })
        .collect();
    let lines = a.lines.column(super::schema::line::SOURCE)?.str()?;
    let line_text: Vec<&str> = lines.into_iter().map(|l| l.unwrap_or("?")).collect();
    let sources: Vec<&str> = rows
        .column(ac::LINE)?
        .u32()?
        .into_iter()
        .map(|l| {
            l.and_then(|l| line_text.get(l as usize).copied())
                .unwrap_or("?")
        })
        .collect();
    let ops: Vec<&str> = rows
        .column(ac::OP)?
        .u8()?
        .into_iter()
        .map(|o| match o.and_then(crate::trace::record::Op::from_code) {
            Some(crate::trace::record::Op::Load) => "L",
            Some(crate::trace::record::Op::Store) => "S",
            Some(crate::trace::record::Op::Modify) => "M",
            None => "?",
        })
        .collect();
    let address = if hex_addresses {
        Column::new("address".into(), hex(rows.column(ac::ADDR)?.u64()?))
    } else {
        rows.column(ac::ADDR)?.clone().with_name("address".into())
    };
    DataFrame::new(vec![
        rows.column(ac::TIME)?.clone().with_name("order".into()),
        address,
        Column::new("operation".into(), ops),
        Column::new("variable".into(), names),
        rows.column(ac::SIZE)?.clone().with_name("size".into()),
        rows.column(ac::TID)?.clone().with_name("thread".into()),
        Column::new("source".into(), sources),
    ])
}

/// Writes the order data of a selection to `dir` as `order_data.parquet`
/// (addresses as integers) and `order_data.csv` (addresses in hex), in
/// batches (the access list's row groups) so memory does not grow with the
/// trace.
///
/// The batches are built on the calling thread and encoded by two writer
/// threads, one per file, so building, Parquet encoding and the CSV's
/// (much larger) text overlap. A writer takes the next batch only when it
/// is done with the previous one, so at most three batches are alive.
pub fn write_order_data(
    a: &Analysis,
    selected: &super::selection::Selection,
    dir: &Path,
) -> Result<Vec<PathBuf>, FilterError> {
    use std::sync::mpsc::sync_channel;
    let pq_path = dir.join("order_data.parquet");
    let csv_path = dir.join("order_data.csv");
    let empty = super::selection::empty_rows()?;
    // Both files are written under temporary names and renamed into place
    // only when both are complete: a failure keeps the previous ones.
    let pq_pending = create(&pq_path)?;
    let csv_pending = create(&csv_path)?;
    let handle = |p: &Pending| {
        p.handle().map_err(|e| FilterError::Write {
            path: p.path().to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        })
    };
    let mut pq = ParquetWriter::new(handle(&pq_pending)?)
        .with_compression(ParquetCompression::Snappy)
        .batched(order_data(a, &empty, false)?.schema())?;
    let csv_schema = order_data(a, &empty, true)?.schema().clone();
    let csv_file = handle(&csv_pending)?;
    // A writer's failure names its file (a full disk, say).
    let failed = |path: &Path| {
        let path = path.to_path_buf();
        move |e: PolarsError| write_failed(&path)(e)
    };
    std::thread::scope(|s| {
        let (to_pq, pq_batches) = sync_channel::<DataFrame>(0);
        let (to_csv, csv_batches) = sync_channel::<DataFrame>(0);
        let pq_failed = failed(&pq_path);
        let pq_writer = s.spawn(move || {
            for batch in pq_batches {
                pq.write_batch(&batch).map_err(&pq_failed)?;
            }
            pq.finish().map(drop).map_err(&pq_failed)
        });
        let csv_path_w = csv_path.clone();
        let csv_writer = s.spawn(move || {
            write_batches(csv_file, &csv_path_w, &csv_schema, csv_batches, |batch| {
                Ok(hex_column(batch, "address")?)
            })
        });
        // A closed channel means that writer failed: its error is reported
        // below.
        let built = a.accesses.for_each(selected.var_filter(a), &mut |rows| {
            let batch = order_data(a, &rows, false)?;
            Ok(to_pq.send(batch.clone()).is_ok() && to_csv.send(batch).is_ok())
        });
        drop((to_pq, to_csv));
        let pq_done = super::error::joined(pq_writer.join(), "Parquet writer", &pq_path);
        let csv_done = super::error::joined(csv_writer.join(), "CSV writer", &csv_path);
        built.and(pq_done).and(csv_done)
    })?;
    Ok(vec![commit(pq_pending)?, commit(csv_pending)?])
}

/// The allocation info: `address, size, variable, allocator, thread,
/// alloc_time, free_time` for every heap block of the run.
pub fn allocation_info(a: &Analysis) -> PolarsResult<DataFrame> {
    let al = &a.allocations;
    DataFrame::new(vec![
        Column::new(
            "address".into(),
            al.iter().map(|b| b.addr).collect::<Vec<_>>(),
        ),
        Column::new("size".into(), al.iter().map(|b| b.size).collect::<Vec<_>>()),
        Column::new(
            "variable".into(),
            al.iter()
                .map(|b| a.vars[b.var.index()].name.clone())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "allocator".into(),
            al.iter().map(|b| b.kind).collect::<Vec<_>>(),
        ),
        Column::new(
            "thread".into(),
            al.iter().map(|b| b.tid).collect::<Vec<_>>(),
        ),
        Column::new(
            "alloc_time".into(),
            al.iter().map(|b| b.alloc_time).collect::<Vec<_>>(),
        ),
        Column::new(
            "free_time".into(),
            al.iter().map(|b| b.free_time).collect::<Vec<_>>(),
        ),
    ])
}

/// Replaces a UInt64 column named `name` by its hex text, for CSV files.
pub fn hex_column(df: &mut DataFrame, name: &str) -> PolarsResult<()> {
    let text = hex(df.column(name)?.u64()?);
    df.with_column(text.into_column())?;
    Ok(())
}

/// Writes the allocation info to `dir` as `allocation_info.parquet`
/// (addresses as integers) and `allocation_info.csv` (addresses in hex).
pub fn write_allocation_info(a: &Analysis, dir: &Path) -> Result<Vec<PathBuf>, FilterError> {
    let mut alloc = allocation_info(a)?;
    let pq = write_parquet(&mut alloc, &dir.join("allocation_info.parquet"))?;
    hex_column(&mut alloc, "address")?;
    let csv = write_csv(&mut alloc, &dir.join("allocation_info.csv"))?;
    Ok(vec![pq, csv])
}

/// Writes the order data and allocation info to `dir` as CSV (addresses in
/// hex) and Parquet (addresses as integers). Returns the files written.
pub fn write_order_and_allocations(
    a: &Analysis,
    selected: &super::selection::Selection,
    dir: &Path,
) -> Result<Vec<PathBuf>, FilterError> {
    let mut written = write_order_data(a, selected, dir)?;
    written.extend(write_allocation_info(a, dir)?);
    Ok(written)
}

// ---------------------------------------------------------------------------
// The saved analysis
// ---------------------------------------------------------------------------

const SAVED_VERSION: &str = "5";

/// The access list's dataset folder inside a saved analysis.
pub const DATASET: &str = "accesses";

/// Saves the analysis in `dir` (Parquet tables plus a small JSON summary) so
/// that a later session can run filtering and figures without tracing again.
/// See [`save_analysis_from`].
pub fn save_analysis(a: &Analysis, dir: &Path) -> Result<Vec<PathBuf>, FilterError> {
    save_analysis_from(a, None, dir)
}

/// The file beside the saved tables that names the trace they came from.
const SOURCE_FILE: &str = "source.json";

/// [`save_analysis`], recording `source`, the identity of the trace the
/// analysis was made from, so that a later session can tell whether the
/// saved analysis still belongs to the current trace. Returns the files
/// written.
pub fn save_analysis_from(
    a: &Analysis,
    source: Option<&crate::workdir::SourceId>,
    dir: &Path,
) -> Result<Vec<PathBuf>, FilterError> {
    let mut a = a.clone();
    AnalysisDir::begin(dir)?.commit(&mut a, source)
}

/// A saved analysis being made. Its files, the access list's dataset
/// first (streamed into [`AnalysisDir::dataset`] by the analysis), go into
/// a hidden sibling folder that replaces the saved analysis only when
/// complete ([`AnalysisDir::commit`]): an interrupted or failed analysis or
/// save (a full disk) leaves the previous analysis, never a mix, and a
/// dropped `AnalysisDir` removes its partial folder.
pub struct AnalysisDir {
    dir: PathBuf,
    partial: tempfile::TempDir,
}

impl AnalysisDir {
    /// Starts a saved analysis that will replace `dir`, removing the
    /// leftovers of one that was killed (the caller holds the folder lock,
    /// so no other save is running).
    pub fn begin(dir: &Path) -> Result<AnalysisDir, FilterError> {
        let failed = |path: &Path| {
            let path = path.to_path_buf();
            move |source| FilterError::Write { path, source }
        };
        let parent = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        super::io::mkdir(parent)?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| ANALYSIS_DIR.into());
        if let Ok(entries) = std::fs::read_dir(parent) {
            for e in entries.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if n.starts_with(&format!(".{name}.")) && n.ends_with(".partial") {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let partial = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".partial")
            .tempdir_in(parent)
            .map_err(failed(dir))?;
        Ok(AnalysisDir {
            dir: dir.to_path_buf(),
            partial,
        })
    }

    /// Where the analysis streams its access list.
    pub fn dataset(&self) -> PathBuf {
        self.partial.path().join(DATASET)
    }

    /// Writes the rest of the analysis `a` (and its access list, unless it
    /// was streamed here) and puts the folder in place of the saved
    /// analysis; `a`'s access list then refers to its new place. Returns
    /// the files written.
    pub fn commit(
        self,
        a: &mut Analysis,
        source: Option<&crate::workdir::SourceId>,
    ) -> Result<Vec<PathBuf>, FilterError> {
        let failed = |path: &Path| {
            let path = path.to_path_buf();
            move |source| FilterError::Write { path, source }
        };
        let (dir, partial) = (self.dir, self.partial);
        let dataset = partial.path().join(DATASET);
        if a.accesses.root() != Some(dataset.as_path()) {
            a.accesses.write_to(&dataset)?;
            a.accesses.write_by_var_to(&dataset)?;
        }
        write_analysis(a, partial.path())?;
        if let Some(src) = source {
            let path = partial.path().join(SOURCE_FILE);
            std::fs::write(&path, serde_json::to_vec_pretty(src).unwrap_or_default())
                .map_err(failed(&dir.join(SOURCE_FILE)))?;
        }
        swap_into_place(partial, &dir)?;
        a.accesses.relocate(&dir.join(DATASET));
        a.locations.relocate(&dir);
        let mut written = Vec::new();
        files_under(&dir, &mut written).map_err(failed(&dir))?;
        written.sort();
        Ok(written)
    }
}

/// Every file under `dir`, at any depth.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if e.file_type()?.is_dir() {
            files_under(&e.path(), out)?;
        } else {
            out.push(e.path());
        }
    }
    Ok(())
}

/// Puts the complete folder `partial` in place of `dir`: the old folder is
/// moved aside first and removed last, and put back if the swap fails.
fn swap_into_place(partial: tempfile::TempDir, dir: &Path) -> Result<(), FilterError> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let old = parent.join(format!(".{name}.{}.old", std::process::id()));
    let had_old = std::fs::rename(dir, &old).is_ok();
    let kept = partial.keep();
    if let Err(source) = std::fs::rename(&kept, dir) {
        let _ = std::fs::remove_dir_all(&kept);
        if had_old {
            let _ = std::fs::rename(&old, dir);
        }
        return Err(FilterError::Write {
            path: dir.to_path_buf(),
            source,
        });
    }
    if had_old {
        let _ = std::fs::remove_dir_all(&old);
    }
    Ok(())
}

/// The identity of the trace the analysis saved in `dir` was made from,
/// when it was recorded.
pub fn saved_source(dir: &Path) -> Option<crate::workdir::SourceId> {
    let bytes = std::fs::read(dir.join(SOURCE_FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Writes the analysis' tables into `dir` (a folder being filled before it
/// is renamed into place; the access list's dataset is there already): the
/// locations (Snappy Parquet), the line, variable and allocation tables,
/// and `summary.json`.
fn write_analysis(a: &Analysis, dir: &Path) -> Result<(), FilterError> {
    // Written as the analysis ended, unless it was built in memory.
    a.locations.write_into(dir)?;
    let mut lines = a.lines.clone();
    write_parquet(&mut lines, &dir.join("lines.parquet"))?;
    // The name memory_stats shows each variable under by default, so a
    // query of the saved analysis groups its rows with no mapvis code.
    let rows = super::stats::display_rows(a, super::stats::Grouping::default());
    let shown_as = rows.row_of.iter().map(|&r| rows.names[r as usize].clone());
    write_parquet(
        &mut saved_variables(&a.vars, shown_as.collect())?,
        &dir.join("variables.parquet"),
    )?;
    write_parquet(
        &mut saved_allocations(&a.allocations)?,
        &dir.join("allocations.parquet"),
    )?;
    if let Some(p) = &a.patterns {
        write_parquet(&mut p.to_frame()?, &dir.join(PATTERNS))?;
    }
    if let Some(r) = &a.locality {
        r.write_into(dir)?;
    }
    write_summary(&a.summary, &a.accesses.windows(), dir)?;
    if let Some(bv) = a.accesses.by_var() {
        bv.write_index()?;
    }
    Ok(())
}

/// The access-pattern states of a saved analysis, when the analysis
/// gathered them (see [`Analysis::patterns`]).
const PATTERNS: &str = "patterns.parquet";

/// The saved variable table: `var` (the row index, which the access list
/// and the lookup table refer to), every field of [`Variable`], dimensions
/// as `12x12` and threads as `1 2`, and `shown_as`, the row of
/// `memory_stats` the variable is counted in under the default
/// `set_heap_grouping site` (heap blocks allocated at one site share their
/// group's name). `var` and `shown_as` let other tools (DuckDB, Spark; see
/// `docs/scale.md`) join names back; [`read_variables`] does not need them.
fn saved_variables(v: &[Variable], shown_as: Vec<String>) -> PolarsResult<DataFrame> {
    DataFrame::new(vec![
        Column::new("var".into(), (0..v.len() as u32).collect::<Vec<u32>>()),
        Column::new(
            "name".into(),
            v.iter().map(|x| x.name.clone()).collect::<Vec<_>>(),
        ),
        Column::new(
            "base_name".into(),
            v.iter().map(|x| x.base_name.clone()).collect::<Vec<_>>(),
        ),
        Column::new(
            "scope".into(),
            v.iter().map(|x| x.scope.code()).collect::<Vec<_>>(),
        ),
        Column::new("base".into(), v.iter().map(|x| x.base).collect::<Vec<_>>()),
        Column::new("size".into(), v.iter().map(|x| x.size).collect::<Vec<_>>()),
        Column::new(
            "elem_size".into(),
            v.iter().map(|x| x.elem_size).collect::<Vec<_>>(),
        ),
        Column::new(
            "dims".into(),
            v.iter().map(Variable::dims_text).collect::<Vec<_>>(),
        ),
        Column::new(
            "site".into(),
            v.iter().map(|x| x.site.clone()).collect::<Vec<_>>(),
        ),
        Column::new(
            "alloc_time".into(),
            v.iter().map(|x| x.alloc_time).collect::<Vec<_>>(),
        ),
        Column::new(
            "free_time".into(),
            v.iter().map(|x| x.free_time).collect::<Vec<_>>(),
        ),
        Column::new(
            "internal".into(),
            v.iter().map(|x| x.internal).collect::<Vec<_>>(),
        ),
        Column::new(
            "first_access".into(),
            v.iter()
                .map(|x| x.accessed.map(|t| t.0))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "last_access".into(),
            v.iter()
                .map(|x| x.accessed.map(|t| t.1))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "first_byte".into(),
            v.iter().map(|x| x.bytes.map(|b| b.0)).collect::<Vec<_>>(),
        ),
        Column::new(
            "last_byte".into(),
            v.iter().map(|x| x.bytes.map(|b| b.1)).collect::<Vec<_>>(),
        ),
        Column::new(
            "threads".into(),
            v.iter()
                .map(|x| {
                    x.threads
                        .iter()
                        .map(|t| t.to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect::<Vec<_>>(),
        ),
        Column::new("shown_as".into(), shown_as),
        Column::new(
            "path".into(),
            v.iter().map(|x| x.path.clone()).collect::<Vec<_>>(),
        ),
    ])
}

/// The saved allocation table, one row per heap block.
fn saved_allocations(al: &[Allocation]) -> PolarsResult<DataFrame> {
    DataFrame::new(vec![
        Column::new(
            "address".into(),
            al.iter().map(|b| b.addr).collect::<Vec<_>>(),
        ),
        Column::new("size".into(), al.iter().map(|b| b.size).collect::<Vec<_>>()),
        Column::new("var".into(), al.iter().map(|b| b.var.0).collect::<Vec<_>>()),
        Column::new("kind".into(), al.iter().map(|b| b.kind).collect::<Vec<_>>()),
        Column::new("tid".into(), al.iter().map(|b| b.tid).collect::<Vec<_>>()),
        Column::new(
            "alloc_time".into(),
            al.iter().map(|b| b.alloc_time).collect::<Vec<_>>(),
        ),
        Column::new(
            "free_time".into(),
            al.iter().map(|b| b.free_time).collect::<Vec<_>>(),
        ),
    ])
}

/// `summary.json`: the trace summary and the saved format's version.
fn write_summary(
    s: &TraceSummary,
    windows: &[super::store::WindowInfo],
    dir: &Path,
) -> Result<(), FilterError> {
    let summary = serde_json::json!({
        "windows": windows,
        "version": SAVED_VERSION,
        "command": s.command,
        "accesses": s.accesses,
        "regions": s.regions,
        "allocations": s.allocations,
        "frees": s.frees,
        "threads": s.threads,
        "complete": s.complete,
        "partial": s.partial,
        "notes": s.notes,
        "outside_notes": s.outside_notes,
        "analysis_id": s.analysis_id,
        "scope": s.scope,
        "region_starts": s.region_starts,
    });
    let path = dir.join("summary.json");
    std::fs::write(
        &path,
        serde_json::to_vec_pretty(&summary).unwrap_or_default(),
    )
    .map_err(|source| FilterError::Write { path, source })?;
    Ok(())
}

fn read_parquet(path: &Path) -> Result<DataFrame, FilterError> {
    read_saved_parquet(path, None)
}

/// The saved table at `path`, refused with a message naming the file and
/// the missing column when it lacks one of `columns`: a Parquet file put
/// in its place by another program (or another mapvis) would otherwise
/// fail later with polars' bare `"line" not found`.
fn read_table(path: &Path, columns: &[&str]) -> Result<DataFrame, FilterError> {
    let df = read_parquet(path)?;
    if let Some(missing) = columns.iter().find(|c| df.column(c).is_err()) {
        let has: Vec<String> = df
            .get_column_names()
            .iter()
            .map(|c| c.to_string())
            .collect();
        return Err(FilterError::Saved {
            path: path.to_path_buf(),
            reason: format!(
                "it has no column \"{missing}\" (its columns are {}), so it is not the table mapvis saved there: it was replaced, or written by another program or version",
                if has.is_empty() { "none".to_string() } else { has.join(", ") }
            ),
        });
    }
    Ok(df)
}

/// Why the saved analysis in `dir` cannot be read although something is
/// there (a folder or a file mapvis cannot open: another user's folder),
/// naming the file: `None` when it can be read or is simply not there.
/// Cost: a few `stat`s and opens.
pub fn unreadable_saved_analysis(dir: &Path) -> Option<String> {
    let denied = |p: &Path, e: std::io::Error| {
        (e.kind() == std::io::ErrorKind::PermissionDenied).then(|| {
            format!(
                "{} cannot be read ({e}): it belongs to another user, or its permissions were changed. Ask its owner for read access, or work in a folder of your own",
                p.display()
            )
        })
    };
    if let Err(e) = std::fs::read_dir(dir) {
        return denied(dir, e);
    }
    for p in [dir.join("summary.json"), dir.join(DATASET)] {
        let opened = if p.is_dir() {
            std::fs::read_dir(&p).map(drop)
        } else {
            std::fs::File::open(&p).map(drop)
        };
        if let Err(e) = opened {
            if let Some(why) = denied(&p, e) {
                return Some(why);
            }
        }
    }
    None
}

/// Whether `dir` holds a saved analysis.
pub fn has_saved_analysis(dir: &Path) -> bool {
    dir.join("summary.json").is_file() && dir.join(DATASET).is_dir()
}

/// The `summary.json` of the analysis saved in `dir`, parsed, after its
/// version is checked. Cost: one small file read.
fn read_summary_json(dir: &Path) -> Result<serde_json::Value, FilterError> {
    let bad = |reason: String| FilterError::Saved {
        path: dir.to_path_buf(),
        reason,
    };
    let bytes =
        crate::workdir::read_regular(&dir.join("summary.json")).map_err(|e| bad(e.to_string()))?;
    let j: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    if j["version"] != SAVED_VERSION {
        return Err(bad("it was saved by another version of mapvis".into()));
    }
    Ok(j)
}

/// The id of the analysis saved in `dir` (its `summary.json`'s
/// `analysis_id`), or `None` when there is none or it cannot be read: what
/// the figures' index compares a page's recorded analysis with. Cost: one
/// small file read.
pub fn saved_analysis_id(dir: &Path) -> Option<String> {
    let bytes = crate::workdir::read_regular(&dir.join("summary.json")).ok()?;
    let j: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    j["analysis_id"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(String::from)
}

/// The trace summary of the analysis saved in `dir` (its accesses, whether
/// the trace was complete and why not), without loading the rest: what
/// `runs` and `plot_runs` show of a run. Cost: one small file read.
pub fn load_summary(dir: &Path) -> Result<TraceSummary, FilterError> {
    Ok(summary_from(&read_summary_json(dir)?))
}

/// [`TraceSummary`] from a parsed `summary.json`.
fn summary_from(j: &serde_json::Value) -> TraceSummary {
    let strs = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    TraceSummary {
        command: strs(&j["command"]),
        accesses: j["accesses"].as_u64().unwrap_or(0),
        regions: j["regions"].as_u64().unwrap_or(0) as u32,
        scope: j["scope"].as_str().unwrap_or("").to_string(),
        region_starts: j["region_starts"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_u64()).collect())
            .unwrap_or_default(),
        allocations: j["allocations"].as_u64().unwrap_or(0),
        frees: j["frees"].as_u64().unwrap_or(0),
        threads: j["threads"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_u64().map(|t| t as u32))
                    .collect()
            })
            .unwrap_or_default(),
        complete: j["complete"].as_bool().unwrap_or(false),
        partial: j["partial"].as_str().map(String::from),
        notes: strs(&j["notes"]),
        outside_notes: strs(&j["outside_notes"]),
        analysis_id: j["analysis_id"].as_str().unwrap_or("").to_string(),
    }
}

/// Loads an analysis saved by [`save_analysis`].
pub fn load_analysis(dir: &Path) -> Result<Analysis, FilterError> {
    let bad = |reason: String| FilterError::Saved {
        path: dir.to_path_buf(),
        reason,
    };
    let j = read_summary_json(dir)?;
    let summary = summary_from(&j);
    let windows: Vec<super::store::WindowInfo> =
        serde_json::from_value(j["windows"].clone()).map_err(|e| bad(e.to_string()))?;
    let by_var = super::byvar::ByVar::load(&super::byvar::folder_for(&dir.join(DATASET)))?;
    let accesses = super::store::AccessList::open(&dir.join(DATASET), &windows).with_by_var(by_var);
    use super::schema::line as ln;
    let locations = super::locations::Locations::open(dir)?;
    let lines = read_table(&dir.join("lines.parquet"), &[ln::LINE, ln::SOURCE])?;
    let vars = read_variables(dir)?;
    let adf = read_table(
        &dir.join("allocations.parquet"),
        &[
            "address",
            "size",
            "var",
            "kind",
            "tid",
            "alloc_time",
            "free_time",
        ],
    )?;
    let kinds: Vec<&'static str> = adf
        .column("kind")?
        .str()?
        .into_iter()
        .map(|k| match k.unwrap_or("") {
            "calloc" => "calloc",
            "realloc" => "realloc",
            "memalign" => "memalign",
            "new" => "new",
            "new[]" => "new[]",
            _ => "malloc",
        })
        .collect();
    let (aa, asz, av, at2, aft, atid) = (
        adf.column("address")?.u64()?.clone(),
        adf.column("size")?.u64()?.clone(),
        adf.column("var")?.u32()?.clone(),
        adf.column("alloc_time")?.u64()?.clone(),
        adf.column("free_time")?.u64()?.clone(),
        adf.column("tid")?.u32()?.clone(),
    );
    let allocations = (0..adf.height())
        .map(|i| Allocation {
            addr: aa.get(i).unwrap_or(0),
            size: asz.get(i).unwrap_or(0),
            var: super::access::VarId(av.get(i).unwrap_or(0)),
            kind: kinds[i],
            tid: atid.get(i).unwrap_or(0),
            alloc_time: at2.get(i).unwrap_or(0),
            free_time: aft.get(i),
        })
        .collect();
    let variables = super::model::variable_table(&vars)?;
    let patterns = match dir.join(PATTERNS).is_file() {
        true => Some(PatternStates::from_frame(&read_parquet(
            &dir.join(PATTERNS),
        )?)?),
        false => None,
    };
    Ok(Analysis {
        accesses,
        locations,
        variables,
        lines,
        vars,
        allocations,
        summary,
        patterns,
        locality: super::recorded::RecordedLocality::read(dir),
    })
}

/// The variable table of the analysis saved in `dir`, without reading its
/// access list: what name completion needs, in milliseconds whatever the
/// trace's length.
pub fn load_saved_variables(dir: &Path) -> Result<Vec<Variable>, FilterError> {
    if !has_saved_analysis(dir) {
        return Err(FilterError::Saved {
            path: dir.to_path_buf(),
            reason: "there is no saved analysis there".into(),
        });
    }
    read_variables(dir)
}

fn read_variables(dir: &Path) -> Result<Vec<Variable>, FilterError> {
    let vdf = read_table(
        &dir.join("variables.parquet"),
        &[
            "name",
            "base_name",
            "scope",
            "site",
            "dims",
            "base",
            "size",
            "elem_size",
        ],
    )?;
    let get_str = |name: &str| -> Result<Vec<String>, FilterError> {
        Ok(vdf
            .column(name)?
            .str()?
            .into_iter()
            .map(|s| s.unwrap_or("").to_string())
            .collect())
    };
    let names = get_str("name")?;
    let base_names = get_str("base_name")?;
    let scopes = get_str("scope")?;
    let sites = get_str("site")?;
    let dims = get_str("dims")?;
    let base = vdf.column("base")?.u64()?.clone();
    let size = vdf.column("size")?.u64()?.clone();
    let elem = vdf.column("elem_size")?.u32()?.clone();
    let at = vdf.column("alloc_time")?.u64()?.clone();
    let ft = vdf.column("free_time")?.u64()?.clone();
    let internal = vdf.column("internal")?.bool()?.clone();
    let first = vdf.column("first_access")?.u64()?.clone();
    let last = vdf.column("last_access")?.u64()?.clone();
    let threads = get_str("threads")?;
    // Analyses saved before owners' rows were kept have no paths.
    let paths = if vdf.column("path").is_ok() {
        get_str("path")?
    } else {
        vec![]
    };
    // Analyses saved before the byte spans were kept have no such columns.
    let byte_col = |name: &str| -> Result<Option<UInt64Chunked>, FilterError> {
        match vdf.column(name) {
            Ok(c) => Ok(Some(c.u64()?.clone())),
            Err(_) => Ok(None),
        }
    };
    let (b0, b1) = (byte_col("first_byte")?, byte_col("last_byte")?);
    let bytes = |i: usize| b0.as_ref()?.get(i).zip(b1.as_ref()?.get(i));
    Ok((0..vdf.height())
        .map(|i| Variable {
            name: names[i].clone(),
            base_name: base_names[i].clone(),
            scope: match scopes[i].as_str() {
                "H" => Scope::Heap,
                "G" => Scope::Global,
                _ => Scope::Stack,
            },
            base: base.get(i).unwrap_or(0),
            size: size.get(i).unwrap_or(0),
            elem_size: elem.get(i).unwrap_or(0),
            dims: dims[i].split('x').filter_map(|d| d.parse().ok()).collect(),
            site: sites[i].clone(),
            elem_type: String::new(),
            alloc_time: at.get(i),
            free_time: ft.get(i),
            internal: internal.get(i).unwrap_or(false),
            frame_slot: names[i].starts_with('<') && names[i].ends_with(" frame>"),
            function: String::new(),
            accessed: first.get(i).zip(last.get(i)),
            bytes: bytes(i),
            threads: threads[i]
                .split(' ')
                .filter_map(|t| t.parse().ok())
                .collect(),
            // Not saved: read back, an array of structures is drawn by the
            // fields its accesses touched.
            layout: vec![],
            path: paths.get(i).cloned().unwrap_or_default(),
        })
        .collect())
}

/// Keeps the saved analysis in `dir` and the trace `trace` it was made
/// from as the run `run` (a new folder, laid out by [`Run`]; `save_run`
/// builds it under a temporary name and renames it): every file is
/// hard-linked, so a run costs no copy of its data, and the folder's next
/// trace and analysis replace their own files without touching the run's.
/// The run's analysis records the run's own trace, `final_trace` (where it
/// will be once renamed), as its source. Returns the files written.
///
/// # Errors
/// No saved analysis in `dir`, the run's folder already there, or a file
/// that cannot be linked (or copied, where the file system has no hard
/// links).
pub fn keep_run(
    dir: &Path,
    trace: &Path,
    run: &Run,
    final_trace: &Path,
) -> Result<Vec<PathBuf>, FilterError> {
    let run_dir = run.dir();
    if !has_saved_analysis(dir) {
        return Err(FilterError::Saved {
            path: dir.to_path_buf(),
            reason: "there is no saved analysis to keep".into(),
        });
    }
    let failed = |p: &Path| {
        let p = p.to_path_buf();
        move |source| FilterError::Write { path: p, source }
    };
    mkdir(run_dir.parent().unwrap_or(Path::new(".")))?;
    std::fs::create_dir(run_dir).map_err(failed(run_dir))?;
    let mut files = Vec::new();
    files_under(dir, &mut files).map_err(failed(dir))?;
    let mut written = Vec::new();
    for f in files {
        let rel = f.strip_prefix(dir).unwrap_or(&f);
        if rel == Path::new(SOURCE_FILE) {
            continue;
        }
        let to = run.analysis_dir().join(rel);
        mkdir(to.parent().unwrap_or(run_dir))?;
        link_or_copy(&f, &to)?;
        written.push(to);
    }
    let run_trace = run.trace_file();
    link_or_copy(trace, &run_trace)?;
    written.push(run_trace.clone());
    if let Some(mut src) = crate::workdir::SourceId::of(&run_trace) {
        // The trace's identity where it will be read from: a rename keeps
        // its size and time.
        src.path = final_trace.to_path_buf();
        let path = run.analysis_dir().join(SOURCE_FILE);
        write_whole(&path, &serde_json::to_vec_pretty(&src).unwrap_or_default())?;
        written.push(path);
    }
    Ok(written)
}

/// The files an analysis writes about itself into `visinfo/`.
impl Analysis {
    /// See [`write_allocation_info`].
    pub fn write_allocation_info(&self, dir: &Path) -> Result<Vec<PathBuf>, FilterError> {
        write_allocation_info(self, dir)
    }

    /// See [`write_order_data`].
    pub fn write_order_data(
        &self,
        selected: &super::selection::Selection,
        dir: &Path,
    ) -> Result<Vec<PathBuf>, FilterError> {
        write_order_data(self, selected, dir)
    }
}

/// An analysis saved in a folder (`.mapvis/analysis/`, or a run's
/// `analysis/`), named by that folder: whether it is there, what it was
/// made from, loading it whole or only its variables, and keeping it as a
/// run. Holding one reads nothing; each method reads what it says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedAnalysis {
    dir: PathBuf,
}

impl SavedAnalysis {
    /// The analysis saved (or to be saved) in `dir`.
    pub fn at(dir: &Path) -> SavedAnalysis {
        SavedAnalysis {
            dir: dir.to_path_buf(),
        }
    }

    /// Whether the folder holds a saved analysis (two file checks).
    pub fn exists(&self) -> bool {
        has_saved_analysis(&self.dir)
    }

    /// Why it cannot be read, when it is there but not readable (see
    /// [`unreadable_saved_analysis`]).
    pub fn unreadable(&self) -> Option<String> {
        unreadable_saved_analysis(&self.dir)
    }

    /// The identity of the trace it was made from, when recorded.
    pub fn source(&self) -> Option<crate::workdir::SourceId> {
        saved_source(&self.dir)
    }

    /// Its id (see [`saved_analysis_id`]).
    pub fn id(&self) -> Option<String> {
        saved_analysis_id(&self.dir)
    }

    /// Its trace summary alone (see [`load_summary`]).
    pub fn summary(&self) -> Result<TraceSummary, FilterError> {
        load_summary(&self.dir)
    }

    /// Loads it (see [`load_analysis`]).
    pub fn load(&self) -> Result<Analysis, FilterError> {
        load_analysis(&self.dir)
    }

    /// The names a figure of one array accepts, from the variable table
    /// only (see [`load_saved_variables`]): milliseconds whatever the
    /// trace's length, for name completion.
    pub fn array_names(&self) -> Result<Vec<String>, FilterError> {
        let vars = load_saved_variables(&self.dir)?;
        Ok(super::shape::array_names(&vars)
            .into_iter()
            .map(String::from)
            .collect())
    }

    /// Keeps it and `trace` as the run `run`, built in `staging` (see
    /// [`keep_run`]).
    pub fn keep_as_run(
        &self,
        trace: &Path,
        staging: &Run,
        run: &Run,
    ) -> Result<Vec<PathBuf>, FilterError> {
        keep_run(&self.dir, trace, staging, &run.trace_file())
    }
}
