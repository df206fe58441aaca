//! What a page was drawn from, so that the folder's index can tell when it
//! no longer shows what is there: each page records its sources in its
//! `mapvis-analysis` tag as tokens separated by spaces, each naming
//! something that can be checked again later.
//!
//! * `A:ID:DIR`: the saved analysis with id ID in the folder DIR (relative
//!   to the working folder): `.mapvis/analysis` for the folder's own,
//!   `.mapvis/runs/LABEL/analysis` for a saved run's. It is live while
//!   DIR's `summary.json` holds that id: a new analysis, a run dropped or
//!   saved again under the label, ends it.
//! * `F:SIZE:MTIME:PATH`: a file (a heap profile, a trace the heap
//!   commands read) as it was: live while it has that size and time.
//!
//! Paths are percent-encoded for spaces and `%`. A page written before
//! sources were recorded holds a bare analysis id, read as the folder's
//! own analysis. Cost: parsing is a split; checking reads one small
//! `summary.json` or one `stat` per token.
use std::path::{Path, PathBuf};

/// The folder's own saved analysis, relative to the working folder.
const FOLDER_ANALYSIS: &str = ".mapvis/analysis";

/// The token of the saved analysis `id` in `dir` (relative to the working
/// folder, or absolute).
pub fn analysis_source(id: &str, dir: &Path) -> String {
    if id.is_empty() {
        return String::new();
    }
    format!("A:{id}:{}", encode(&dir.to_string_lossy()))
}

/// The token of the file `path` as it is now (empty when it is missing);
/// `root` is the working folder, against which the path is recorded.
pub fn file_source(root: &Path, path: &Path) -> String {
    let Some(id) = crate::workdir::SourceId::of(path) else {
        return String::new();
    };
    let shown = path.strip_prefix(root).unwrap_or(path);
    format!(
        "F:{}:{}:{}",
        id.size,
        id.mtime_ns,
        encode(&shown.to_string_lossy())
    )
}

/// One source a page recorded.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// A saved analysis: its id and folder.
    Analysis { id: String, dir: PathBuf },
    /// A file: its size, time and path.
    File {
        size: u64,
        mtime_ns: u128,
        path: PathBuf,
    },
}

/// The sources in a page's `mapvis-analysis` tag; unreadable tokens are
/// left out.
pub(crate) fn parse(tag: &str) -> Vec<Source> {
    tag.split_whitespace()
        .filter_map(|t| {
            let mut f = t.splitn(2, ':');
            match (f.next()?, f.next()) {
                (id, None) => Some(Source::Analysis {
                    id: id.to_string(),
                    dir: PathBuf::from(FOLDER_ANALYSIS),
                }),
                ("A", Some(rest)) => {
                    let (id, dir) = rest.split_once(':')?;
                    Some(Source::Analysis {
                        id: id.to_string(),
                        dir: PathBuf::from(decode(dir)),
                    })
                }
                ("F", Some(rest)) => {
                    let mut g = rest.splitn(3, ':');
                    Some(Source::File {
                        size: g.next()?.parse().ok()?,
                        mtime_ns: g.next()?.parse().ok()?,
                        path: PathBuf::from(decode(g.next()?)),
                    })
                }
                _ => None,
            }
        })
        .collect()
}

impl Source {
    /// Why the source no longer exists as the page saw it, or `None` when
    /// it does; `root` is the working folder.
    pub(crate) fn stale_why(&self, root: &Path) -> Option<String> {
        match self {
            Source::Analysis { id, dir } => {
                let now = crate::filter::saved_analysis_id(&root.join(dir));
                if now.as_deref() == Some(id.as_str()) {
                    return None;
                }
                Some(match (self.run_label(), now) {
                    (Some(run), _) => format!(
                        "made from run {run} as it was saved then ({id}), which has since been dropped or saved again"
                    ),
                    (None, Some(now)) => format!(
                        "made from an earlier analysis ({id}), not the current one ({now})"
                    ),
                    (None, None) => format!(
                        "made from an analysis ({id}) that has since been removed"
                    ),
                })
            }
            Source::File {
                size,
                mtime_ns,
                path,
            } => {
                let now = crate::workdir::SourceId::of(&root.join(path));
                match now {
                    Some(n) if n.size == *size && n.mtime_ns == *mtime_ns => None,
                    Some(_) => Some(format!(
                        "made from {} as it was then; it has changed since",
                        path.display()
                    )),
                    None => Some(format!(
                        "made from {}, which no longer exists",
                        path.display()
                    )),
                }
            }
        }
    }

    /// The saved run whose analysis this is (`.mapvis/runs/LABEL/analysis`).
    pub(crate) fn run_label(&self) -> Option<String> {
        let Source::Analysis { dir, .. } = self else {
            return None;
        };
        let parts: Vec<String> = dir
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        match parts.as_slice() {
            [state, runs, label, analysis]
                if state == ".mapvis" && runs == "runs" && analysis == "analysis" =>
            {
                Some(label.clone())
            }
            _ => None,
        }
    }
}

/// `s` with `%`, spaces and control characters percent-encoded.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '%' || c.is_whitespace() || c.is_control() {
            let mut b = [0u8; 4];
            for byte in c.encode_utf8(&mut b).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The inverse of [`encode`].
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_read_back() {
        let a = analysis_source("ab12", Path::new(".mapvis/runs/my run/analysis"));
        let old = "ff00";
        let parsed = parse(&format!("{a} {old}"));
        assert_eq!(
            parsed,
            vec![
                Source::Analysis {
                    id: "ab12".into(),
                    dir: PathBuf::from(".mapvis/runs/my run/analysis")
                },
                Source::Analysis {
                    id: "ff00".into(),
                    dir: PathBuf::from(FOLDER_ANALYSIS)
                }
            ]
        );
        assert_eq!(parsed[0].run_label().as_deref(), Some("my run"));
        assert_eq!(parsed[1].run_label(), None);
    }
}
