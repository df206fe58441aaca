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

/// Entries a walk of the source folders reads at most, all folders
/// together: a source folder of thousands of links to itself, or `/`,
/// ends the walk here (with a note) instead of running for minutes.
const WALK_ENTRIES: usize = 10_000;
/// Folders below a source folder a walk descends at most.
const WALK_DEPTH: usize = 32;

/// The source files below the source folders, by file name: the first
/// found, shallowest first, in name order within a folder. Built once per
/// set of pages by a walk that never enters a folder twice (a link to a
/// folder already seen, such as a link to itself, is skipped), descends
/// at most [`WALK_DEPTH`] folders, reads at most [`WALK_ENTRIES`] entries,
/// and stops on Ctrl-C. Cost: one listing per folder, within those bounds.
struct SourceIndex {
    by_name: std::collections::HashMap<std::ffi::OsString, PathBuf>,
    /// The folder where the walk stopped at a bound, for the note.
    cut_at: Option<PathBuf>,
}

impl SourceIndex {
    /// Walks `dirs` (see [`SourceIndex`]).
    fn build(dirs: &[PathBuf]) -> Result<SourceIndex, VisError> {
        use std::os::unix::fs::MetadataExt;
        let mut index = SourceIndex {
            by_name: Default::default(),
            cut_at: None,
        };
        let mut seen = std::collections::HashSet::new();
        let mut entries = 0usize;
        let mut queue: std::collections::VecDeque<(PathBuf, usize)> =
            dirs.iter().map(|d| (d.clone(), 0)).collect();
        while let Some((dir, depth)) = queue.pop_front() {
            if crate::cancel::requested() {
                return Err(VisError::Interrupted);
            }
            let Ok(m) = std::fs::metadata(&dir) else {
                continue;
            };
            if !m.is_dir() || !seen.insert((m.dev(), m.ino())) {
                continue;
            }
            let Ok(list) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut names: Vec<(std::ffi::OsString, PathBuf)> = Vec::new();
            for e in list.flatten() {
                entries += 1;
                if entries > WALK_ENTRIES {
                    index.cut_at = Some(dir.clone());
                    return Ok(index);
                }
                names.push((e.file_name(), e.path()));
            }
            names.sort();
            for (name, path) in names {
                if path.is_file() {
                    index.by_name.entry(name).or_insert(path);
                } else if depth < WALK_DEPTH
                    && !name.to_string_lossy().starts_with('.')
                    && path.is_dir()
                {
                    queue.push_back((path, depth + 1));
                }
            }
            if depth >= WALK_DEPTH && index.cut_at.is_none() {
                index.cut_at = Some(dir.clone());
            }
        }
        Ok(index)
    }

    /// `file` (as the line table names it): the path itself when it is
    /// absolute and there, else a file of that name below the folders.
    fn find(&self, file: &str) -> Option<PathBuf> {
        let p = Path::new(file);
        if p.is_absolute() && p.is_file() {
            return Some(p.to_path_buf());
        }
        self.by_name.get(p.file_name()?).cloned()
    }

    /// The note saying the walk stopped at a bound, if it did.
    fn note(&self) -> Option<String> {
        self.cut_at.as_ref().map(|d| {
            format!(
                "the search for source files stopped at {} (after {WALK_ENTRIES} entries or {WALK_DEPTH} folders deep): sources below it were not annotated; point set_src_path at the program's own source folder",
                d.display()
            )
        })
    }
}

/// Writes one page per traced source file found in `src_paths` into
/// `o.figures_dir`; returns the pages written, as (source file as the line
/// table names it, page), and a note when the search
/// for source files stopped at a bound (see [`SourceIndex`]). Files that
/// cannot be found are skipped (the CSV tables still hold their lines).
/// Each page records,
/// as every figure does, the command that writes it (`cache_stats save`),
/// what it shows, and the trace and analysis of `o`, for the folder's
/// index.
pub fn write_pages(
    r: &CacheReport,
    src_paths: &[PathBuf],
    o: &FigureOptions,
) -> Result<PagesAndNote, VisError> {
    let meta = PageMeta {
        command: "cache_stats save".into(),
        shape: String::new(),
        trace: o.provenance.clone(),
        analysis: o.analysis_id.clone(),
    };
    let figures = &o.figures_dir;
    write_pages_if(r, src_paths, figures, Some(&meta), &mut |_| true)
}

/// The pages written, as (source file, page), and the note of a search for
/// sources cut short.
pub type PagesAndNote = (Vec<(String, PathBuf)>, Option<String>);

/// What [`write_run_pages`] did: the pages written, as (source file as
/// the line table names it, page), the source files left out because
/// they were modified after the run's trace, and the note of a search for
/// sources cut short (see [`write_pages`]).
pub type RunPages = (Vec<(String, PathBuf)>, Vec<String>, Option<String>);

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
    let (pages, note) = write_pages_if(r, src_paths, dir, None, &mut |p: &Path| {
        let newer = std::fs::metadata(p)
            .and_then(|m| m.modified())
            .map_or(true, |t| t > traced);
        if newer {
            edited.push(p.display().to_string());
        }
        !newer
    })?;
    Ok((pages, edited, note))
}

/// Writes the pages of the source files found whose path `keep` accepts,
/// each with `meta`'s tags (its shape: the file's lines), if given.
fn write_pages_if(
    r: &CacheReport,
    src_paths: &[PathBuf],
    figures: &Path,
    meta: Option<&PageMeta>,
    keep: &mut dyn FnMut(&Path) -> bool,
) -> Result<PagesAndNote, VisError> {
    let mut out = Vec::new();
    // Walked on the first file not found by its own path.
    let mut index: Option<SourceIndex> = None;
    for (file, lines) in annotations(r) {
        let direct = Path::new(&file);
        let found = if direct.is_absolute() && direct.is_file() {
            Some(direct.to_path_buf())
        } else {
            if index.is_none() {
                index = Some(SourceIndex::build(src_paths)?);
            }
            index.as_ref().and_then(|i| i.find(&file))
        };
        let Some(path) = found else {
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
    Ok((out, index.and_then(|i| i.note())))
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
         <h2>{f}</h2>\n<p>Accesses and misses per source line in the traced region (caches cold at the start of the traced region). \
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
            "<tr id=\"L{n}\"{class}><td class=\"n\">{n}</td>{cells}<td><pre>{}</pre></td><td class=\"v\">{vars}</td></tr>",
            escape_html(code)
        );
    }
    h.push_str("</table>\n</body></html>\n");
    h
}
