//! The annotated source page, `figures/source_FILE.html`: every line of a
//! traced source file with its accesses and misses at each level in the
//! traced region, and the variables it touches with their pattern labels.
//! cachegrind's cg_annotate does this for whole programs by line; this page
//! is for the region between the pins, by variable.
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::filter::CacheReport;
use crate::filter::Counts;
use crate::vis::error::VisError;
use crate::vis::options::FigureOptions;
use crate::vis::page::escape::escape_html;
use crate::vis::page::html::PageMeta;

/// Per line number of one file: counts and [(variable, pattern)].
type LineNotes = BTreeMap<u32, (Counts, Vec<(String, String)>)>;
/// Per source file.
type Annotations = BTreeMap<String, LineNotes>;

fn annotations(r: &CacheReport) -> Annotations {
    let mut out: Annotations = BTreeMap::new();
    for (i, &(v, l)) in r.cache.pairs.iter().enumerate() {
        let src = r.names.source(l);
        let Some((file, n)) = src.rsplit_once(':') else {
            continue;
        };
        let Ok(n) = n.parse::<u32>() else { continue };
        let e = out
            .entry(file.to_string())
            .or_default()
            .entry(n)
            .or_default();
        e.0.add(&r.cache.counts[i]);
        if r.shown.get(v.index()).copied().unwrap_or(false) {
            e.1.push((r.names.var_name(v).to_string(), r.pattern_text(i)));
        }
    }
    out
}

/// Finds `file` (as the line table names it) in the source folders: the
/// path itself, then each folder and its subfolders (three levels down).
fn find_source(file: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    let p = Path::new(file);
    if p.is_absolute() && p.is_file() {
        return Some(p.to_path_buf());
    }
    let name = p.file_name()?;
    fn walk(dir: &Path, name: &std::ffi::OsStr, depth: u32) -> Option<PathBuf> {
        let direct = dir.join(name);
        if direct.is_file() {
            return Some(direct);
        }
        if depth == 0 {
            return None;
        }
        let mut subs: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.is_dir()
                    && !p
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        subs.sort();
        subs.iter().find_map(|d| walk(d, name, depth - 1))
    }
    dirs.iter().find_map(|d| walk(d, name, 3))
}

/// Writes one page per traced source file found in `src_paths` into
/// `o.figures_dir`; returns the pages written. Files that cannot be found
/// are skipped (the CSV tables still hold their lines). Each page records,
/// as every figure does, the command that writes it (`cache_stats save`),
/// what it shows, and the trace and analysis of `o`, for the folder's
/// index.
pub fn write_pages(
    r: &CacheReport,
    src_paths: &[PathBuf],
    o: &FigureOptions,
) -> Result<Vec<PathBuf>, VisError> {
    let meta = PageMeta {
        command: "cache_stats save".into(),
        shape: String::new(),
        trace: o.provenance.clone(),
        analysis: o.analysis_id.clone(),
    };
    let figures = &o.figures_dir;
    Ok(
        write_pages_if(r, src_paths, figures, Some(&meta), &mut |_| true)?
            .into_iter()
            .map(|(_, p)| p)
            .collect(),
    )
}

/// What [`write_run_pages`] did: the pages written, as (source file as
/// the line table names it, page), and the source files left out because
/// they were modified after the run's trace.
pub type RunPages = (Vec<(String, PathBuf)>, Vec<String>);

/// Writes a saved run's annotated source pages into `dir`, as
/// [`write_pages`] does, for the source files found in `src_paths` that
/// were not modified after `traced` (the run's trace file's time): a file
/// edited since the trace would pin the run's counts on other lines, so it
/// is left out and listed instead. Cost: as [`write_pages`], plus one
/// metadata read per file.
pub fn write_run_pages(
    r: &CacheReport,
    src_paths: &[PathBuf],
    dir: &Path,
    traced: std::time::SystemTime,
) -> Result<RunPages, VisError> {
    let mut edited = Vec::new();
    let pages = write_pages_if(r, src_paths, dir, None, &mut |p: &Path| {
        let newer = std::fs::metadata(p)
            .and_then(|m| m.modified())
            .map_or(true, |t| t > traced);
        if newer {
            edited.push(p.display().to_string());
        }
        !newer
    })?;
    Ok((pages, edited))
}

/// Writes the pages of the source files found whose path `keep` accepts,
/// each with `meta`'s tags (its shape: the file's lines), if given.
fn write_pages_if(
    r: &CacheReport,
    src_paths: &[PathBuf],
    figures: &Path,
    meta: Option<&PageMeta>,
    keep: &mut dyn FnMut(&Path) -> bool,
) -> Result<Vec<(String, PathBuf)>, VisError> {
    let mut out = Vec::new();
    for (file, lines) in annotations(r) {
        let Some(path) = find_source(&file, src_paths) else {
            continue;
        };
        if !keep(&path) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let stem = Path::new(&file)
            .file_name()
            .map(|n| {
                n.to_string_lossy().replace(
                    |c: char| !c.is_ascii_alphanumeric() && c != '.' && c != '_',
                    "_",
                )
            })
            .unwrap_or_else(|| "source".into());
        let page = figures.join(format!("source_{stem}.html"));
        let tags = meta.map(|m| {
            PageMeta {
                shape: format!("accesses and misses by line of {file}"),
                command: m.command.clone(),
                trace: m.trace.clone(),
                analysis: m.analysis.clone(),
            }
            .tags()
        });
        let html = page_html(r, &file, &text, &lines, tags.as_deref().unwrap_or(""));
        crate::workdir::write_file(&page, html.as_bytes())
            .map_err(|e| VisError::from_workdir(&page, e))?;
        out.push((file, page));
    }
    Ok(out)
}

fn page_html(r: &CacheReport, file: &str, text: &str, lines: &LineNotes, tags: &str) -> String {
    let levels = &r.cache.model.levels;
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n{tags}<title>{f}: accesses and misses</title>\n\
         <style>body{{font-family:sans-serif}} table{{border-collapse:collapse;font-size:13px}} \
         td,th{{padding:1px 6px;vertical-align:top}} td.n{{text-align:right;color:#333}} \
         pre{{margin:0}} tr.hot{{background:#fde2e2}} tr.warm{{background:#fff4d6}} \
         td.v{{font-size:12px;color:#225}}</style></head><body>\n\
         <h2>{f}</h2>\n<p>Accesses and misses per source line in the traced region (caches cold at GL_START). \
         Model: {m}. Rows with at least 10% of the file's first-level misses are red, 1% yellow.</p>\n\
         <table>\n<tr><th>line</th><th>accesses</th>",
        f = escape_html(file),
        m = escape_html(&r.cache.model.levels_text()),
    );
    for l in levels {
        let _ = write!(h, "<th>{} misses</th>", l.name());
    }
    h.push_str("<th>source</th><th>variables: pattern</th></tr>\n");
    let total: u64 = lines.values().map(|(c, _)| c.misses[0]).sum::<u64>().max(1);
    for (i, code) in text.lines().enumerate() {
        let n = i as u32 + 1;
        let (cells, vars, class) = match lines.get(&n) {
            Some((c, vars)) => {
                let share = c.misses[0] as f64 / total as f64;
                let class = if share >= 0.1 {
                    " class=\"hot\""
                } else if share >= 0.01 {
                    " class=\"warm\""
                } else {
                    ""
                };
                let mut cells = format!("<td class=\"n\">{}</td>", c.accesses);
                for k in 0..levels.len() {
                    let _ = write!(cells, "<td class=\"n\">{}</td>", c.misses[k]);
                }
                let v = vars
                    .iter()
                    .map(|(name, p)| format!("<b>{}</b>: {}", escape_html(name), escape_html(p)))
                    .collect::<Vec<_>>()
                    .join("<br>");
                (cells, v, class)
            }
            None => ("<td></td>".repeat(levels.len() + 1), String::new(), ""),
        };
        let _ = writeln!(
            h,
            "<tr{class}><td class=\"n\">{n}</td>{cells}<td><pre>{}</pre></td><td class=\"v\">{vars}</td></tr>",
            escape_html(code)
        );
    }
    h.push_str("</table>\n</body></html>\n");
    h
}
