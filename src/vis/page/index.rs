//! `figures/index.html`: a page linking every figure of the folder, with the
//! command that draws it, what it shows and the trace it came from, so that
//! a user browsing `figures/*.html` finds their way.
//!
//! The index holds no state of its own: every mapvis page records its
//! command, shape and trace in `<meta name="mapvis-…">` tags (see
//! the page's `PageMeta`), and the index is rebuilt from the pages in
//! the folder each time a figure is written. Pages that mapvis did not
//! write are listed too, without details.
//!
//! Each page records what it was drawn from (see `sources.rs`): the
//! folder's analysis, a saved run's, several runs', a heap profile. The
//! index marks a page "STALE" exactly when one of those no longer exists
//! as it was (another analysis made, the run dropped or saved again, the
//! profile recorded again), saying which, so that no figure of an old run
//! passes for one of the new, and a figure of a run that is still there is
//! not marked. The command it offers draws the page again: a page drawn
//! under `use_run LABEL` is offered with that `use_run` first.
//!
//! Cost: one directory listing, a read of the first 4 KiB of each page,
//! and a small read or `stat` per recorded source.

use std::fs;
use std::io::Read;
use std::path::Path;
use std::time::SystemTime;

use super::escape::escape_html;
use super::sources::parse;
use crate::vis::error::VisError;

/// File name of the index page inside the figures folder.
pub const INDEX_FILE: &str = "index.html";

/// The head of a page, where its meta tags are.
const HEAD_BYTES: u64 = 4096;

/// One page of the folder.
struct Entry {
    file: String,
    modified: SystemTime,
    title: String,
    command: String,
    shape: String,
    trace: String,
    analysis: String,
}

/// The `content` of `<meta name="mapvis-KEY" content="…">` in `head`, as
/// plain text (its character references decoded).
fn meta(head: &str, key: &str) -> String {
    let tag = format!("<meta name=\"mapvis-{key}\" content=\"");
    head.find(&tag)
        .and_then(|i| {
            let rest = &head[i + tag.len()..];
            rest.find('"').map(|j| unescape_html(&rest[..j]))
        })
        .unwrap_or_default()
}

/// The `<title>` of a page, as plain text (its character references
/// decoded).
fn title(head: &str) -> String {
    match (head.find("<title>"), head.find("</title>")) {
        (Some(a), Some(b)) if b > a => unescape_html(&head[a + 7..b]),
        _ => String::new(),
    }
}

/// Decodes the character references [`escape_html`] writes (`&amp;`,
/// `&lt;`, `&gt;`, `&quot;`, `&#39;`), so that text mapvis recorded reads
/// as it was. Anything else stays as it is. The result is plain text: it
/// is escaped again when it is written into the index, so a page that
/// mapvis did not write cannot put markup or script into the index.
fn unescape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let decoded = [
            ("&amp;", '&'),
            ("&lt;", '<'),
            ("&gt;", '>'),
            ("&quot;", '"'),
            ("&#39;", '\''),
        ]
        .into_iter()
        .find(|(entity, _)| rest.starts_with(entity));
        match decoded {
            Some((entity, c)) => {
                out.push(c);
                rest = &rest[entity.len()..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Reads what the index shows of one page (a regular file: a named pipe
/// or device in the folder is left out, never opened for long).
fn entry(path: &Path) -> Option<Entry> {
    let file = path.file_name()?.to_str()?.to_string();
    let mut head = Vec::new();
    crate::workdir::open_regular(path)
        .ok()?
        .take(HEAD_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    let head = String::from_utf8_lossy(&head);
    Some(Entry {
        modified: fs::metadata(path).and_then(|m| m.modified()).ok()?,
        title: title(&head),
        command: meta(&head, "command"),
        shape: meta(&head, "shape"),
        trace: meta(&head, "trace"),
        analysis: meta(&head, "analysis"),
        file,
    })
}

/// The pages of `dir` other than the index, newest first.
fn entries(dir: &Path) -> Result<Vec<Entry>, VisError> {
    let mut out: Vec<Entry> = fs::read_dir(dir)
        .map_err(|e| VisError::io(dir, e))?
        .filter_map(|d| d.ok())
        .map(|d| d.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "html")
                && p.file_name().is_some_and(|n| n != INDEX_FILE)
                && !p.is_symlink()
        })
        .filter_map(|p| entry(&p))
        .collect();
    out.sort_by(|a, b| b.modified.cmp(&a.modified).then(a.file.cmp(&b.file)));
    Ok(out)
}

/// The mark of a page one of whose sources no longer exists as it was
/// (see [`super::sources::Source::stale_why`]), or `None` when all are; `root` is the
/// working folder.
fn stale_mark(e: &Entry, root: &Path) -> Option<String> {
    let why: Vec<String> = parse(&e.analysis)
        .iter()
        .filter_map(|s| s.stale_why(root))
        .collect();
    (!why.is_empty()).then(|| format!("STALE: {}; draw it again with its command", why.join("; ")))
}

/// The command that draws the page again: the recorded one, after
/// `use_run LABEL; ` when the page was drawn from one saved run's analysis
/// alone (under `use_run`), since the recorded command reads the current
/// run.
fn redraw_command(e: &Entry) -> String {
    let sources = parse(&e.analysis);
    match sources.as_slice() {
        [one] => match one.run_label() {
            Some(run) => format!("use_run {run}; {}", e.command),
            None => e.command.clone(),
        },
        _ => e.command.clone(),
    }
}

/// One table row. Everything taken from the page, its file name and what
/// it records alike, is escaped: the index holds no markup it did not
/// write itself.
fn row(e: &Entry, root: &Path) -> String {
    let stale = stale_mark(e, root)
        .map(|m| format!("<br><span class=\"stale\">{}</span>", escape_html(&m)))
        .unwrap_or_default();
    let file = escape_html(&e.file);
    let href = escape_html(&percent_encode_href(&e.file));
    let command = if e.command.is_empty() {
        "(not written by mapvis)".to_string()
    } else {
        format!("<code>{}</code>", escape_html(&redraw_command(e)))
    };
    format!(
        "<tr><td><a href=\"{href}\">{}</a></td><td>{command}</td><td>{}</td><td>{}{stale}</td></tr>\n",
        if e.title.is_empty() {
            file
        } else {
            escape_html(&e.title)
        },
        escape_html(&e.shape),
        escape_html(&e.trace)
    )
}

/// A file name as a relative link: `%`, `#`, `?` and `:` (which a browser
/// would read as an escape, a fragment, a query or a scheme such as
/// `javascript:`) and characters outside printable ASCII are
/// percent-encoded, so the link always names the file in this folder.
fn percent_encode_href(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_graphic() && !matches!(b, b'%' | b'#' | b'?' | b':') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Rewrites `dir/index.html` (the figures folder of the working folder,
/// its parent) from the pages in `dir`, marking stale each page one of
/// whose recorded sources no longer exists as it was (see
/// [`super::sources::Source::stale_why`]).
///
/// # Errors
/// The folder cannot be listed or the index cannot be written.
pub fn write_index(dir: &Path) -> Result<(), VisError> {
    let root = dir.parent().unwrap_or(Path::new("."));
    let list = entries(dir)?;
    let stale = list
        .iter()
        .filter(|e| stale_mark(e, root).is_some())
        .count();
    let rows: String = list.iter().map(|e| row(e, root)).collect();
    let note = match stale {
        0 => String::new(),
        n => format!(
            "<p class=\"stale\">{n} figure{} below {} made from an analysis, run or profile that no longer exists as it was: {} no longer what is there.</p>\n",
            if n == 1 { "" } else { "s" },
            if n == 1 { "was" } else { "were" },
            if n == 1 { "it shows" } else { "they show" },
        ),
    };
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>mapvis figures</title>\n\
         <style>\nbody {{ font-family: sans-serif; margin: 1em 1.5em; }}\n\
         td, th {{ text-align: left; padding: 0.2em 1em 0.2em 0; vertical-align: top; }}\n\
         .stale {{ color: #b00; font-weight: bold; }}\n</style>\n</head>\n<body>\n\
         <h1>mapvis figures</h1>\n<p>Every figure of this folder, newest first. Each page opens offline; \
         the command draws it again in the mapvis shell.</p>\n{note}\
         <table>\n<tr><th>figure</th><th>command</th><th>shows</th><th>trace</th></tr>\n{rows}</table>\n</body>\n</html>\n"
    );
    let path = dir.join(INDEX_FILE);
    crate::workdir::write_file(&path, html.as_bytes())
        .map(drop)
        .map_err(|e| VisError::from_workdir(&path, e))
}
/// What the page at `path` recorded it shows (`16 x 16 array of 4-byte
/// elements`), HTML-escaped as recorded; `None` for a page mapvis did not
/// write, or none.
pub(crate) fn recorded_shape(path: &Path) -> Option<String> {
    entry(path).map(|e| e.shape).filter(|s| !s.is_empty())
}

/// The command the page at `path` recorded, HTML-escaped as recorded.
pub(crate) fn recorded_command(path: &Path) -> Option<String> {
    entry(path).map(|e| e.command).filter(|s| !s.is_empty())
}

/// Recorded text with the five escapes of [`escape_html`]
/// undone, for the terminal.
pub(crate) fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}
