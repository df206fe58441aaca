//! Importer for Gleipnir text traces (mapvisual's report §3.2 and §4.1.2).
//!
//! Gleipnir writes one line per event:
//!
//! ```text
//! X START 0:6560 at 0
//! X THREAD_CREATE 0:1
//! X MMAP 004835000 8192
//! X 1 MALLOC 004a38030 192 prog_c_27 0          tid address size site instance
//! X 1 FREE 004a38030 prog_c_14 0
//! L 1fff00061c 4 1 S LV i                        op address size tid scope [name]
//! L 1fff0005f8 8 1 S LS h.counts
//! L 004a38110 4 1 H H-0 prog_c_16.0             heap: H-<instance> <site>.<offset>
//! ```
//!
//! The reader streams lines and interns names, so an access line costs a
//! few field splits and no allocation. Lines it does not know are counted
//! by kind and reported, not fatal. Leading `*` and `$` (emphasis marks in
//! printed examples) are ignored.
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::format::{AllocKind, Op};
use super::naming::Scope;

/// An allocation site as Gleipnir writes it: `prog_c_27` is prog.c line 27.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GlSite {
    /// File name, e.g. `prog.c`.
    pub file: String,
    /// 1-based line.
    pub line: u32,
}

impl GlSite {
    /// Parses `<stem>_<ext>_<line>`; `my_file_cpp_8` is my_file.cpp:8.
    pub fn parse(s: &str) -> Option<GlSite> {
        let (rest, line) = s.rsplit_once('_')?;
        let line: u32 = line.parse().ok()?;
        let (stem, ext) = rest.rsplit_once('_')?;
        if stem.is_empty() || ext.is_empty() {
            return None;
        }
        Some(GlSite {
            file: format!("{stem}.{ext}"),
            line,
        })
    }
}

impl std::fmt::Display for GlSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// The name part of an access line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlName {
    /// No name was printed (frame traffic, unknown memory).
    None,
    /// A variable (`LV i`, `GV g`): interned name id.
    Var(u32),
    /// A structure or array element (`LS h.counts`, `GS a[3]`): interned
    /// ids of the variable (`h`) and of the full element path (`h.counts`).
    Element {
        /// Variable name id.
        var: u32,
        /// Element path id.
        element: u32,
    },
    /// A heap block: instance, site and byte offset.
    Heap {
        /// Instance number of the site (`H-0`).
        instance: u32,
        /// Allocation site, interned.
        site: u32,
        /// Byte offset in the block.
        offset: u64,
    },
}

/// One event of a Gleipnir trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlEvent {
    /// `X START pid:tid at n`.
    Start,
    /// `X THREAD_CREATE parent:child`.
    ThreadCreate {
        /// Child thread.
        child: u32,
    },
    /// `X MMAP address length`.
    Mmap {
        /// Start.
        addr: u64,
        /// Length.
        len: u64,
    },
    /// `X tid MALLOC|CALLOC|REALLOC address size site instance`.
    Alloc {
        /// Thread.
        tid: u32,
        /// Allocator.
        kind: AllocKind,
        /// Block start (the new address for REALLOC).
        addr: u64,
        /// Size.
        size: u64,
        /// Site id (interned), if parseable.
        site: Option<u32>,
        /// Instance number.
        instance: u32,
    },
    /// `X tid FREE address site instance`.
    Free {
        /// Thread.
        tid: u32,
        /// Block start.
        addr: u64,
    },
    /// An `L`, `S` or `M` line.
    Access {
        /// Operation.
        op: Op,
        /// Address.
        addr: u64,
        /// Size.
        size: u32,
        /// Thread.
        tid: u32,
        /// `H`, `S` or `G`.
        scope: Scope,
        /// The name.
        name: GlName,
    },
}

/// Errors of the Gleipnir importer.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be read.
    #[error("cannot read the Gleipnir trace {path}: {source}.")]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        source: io::Error,
    },
    /// The file does not look like a Gleipnir trace at all.
    #[error("{path} does not look like a Gleipnir trace: its first lines are neither `X ...` events nor `L/S/M` accesses. load_trace accepts Gleipnir text traces and mapvis binary traces.")]
    NotGleipnir {
        /// The file.
        path: PathBuf,
    },
}

/// Streaming Gleipnir reader.
pub struct GleipnirReader<R: BufRead> {
    src: R,
    path: PathBuf,
    line: Vec<u8>,
    line_no: u64,
    strings: Vec<String>,
    ids: HashMap<String, u32>,
    sites: HashMap<u32, Option<GlSite>>,
    unknown: BTreeMap<String, u64>,
    bad: u64,
    first_bad: Option<(u64, String)>,
    bytes: u64,
}

impl GleipnirReader<BufReader<File>> {
    /// Opens a Gleipnir trace.
    pub fn open(path: &Path) -> Result<Self, ImportError> {
        let f = File::open(path).map_err(|source| ImportError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(GleipnirReader::new(
            BufReader::with_capacity(1 << 20, f),
            path,
        ))
    }
}

/// Whether a file starts like a Gleipnir text trace (cheap: reads 4 KiB).
pub fn looks_like_gleipnir(path: &Path) -> bool {
    use std::io::Read;
    let mut buf = [0u8; 4096];
    let n = File::open(path)
        .and_then(|mut f| f.read(&mut buf))
        .unwrap_or(0);
    let text = String::from_utf8_lossy(&buf[..n]);
    text.lines().take(8).any(|l| {
        let l = l.trim_start_matches(['*', '$']);
        l.starts_with("X ")
            || ((l.starts_with("L ") || l.starts_with("S ") || l.starts_with("M "))
                && l.split_whitespace().count() >= 5)
    })
}

fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).ok()
}

impl<R: BufRead> GleipnirReader<R> {
    /// Wraps a reader; `path` is used in messages.
    pub fn new(src: R, path: &Path) -> Self {
        GleipnirReader {
            src,
            path: path.to_path_buf(),
            line: Vec::with_capacity(256),
            line_no: 0,
            strings: Vec::new(),
            ids: HashMap::new(),
            sites: HashMap::new(),
            unknown: BTreeMap::new(),
            bad: 0,
            first_bad: None,
            bytes: 0,
        }
    }

    /// The string of an interned id.
    pub fn string(&self, id: u32) -> &str {
        &self.strings[id as usize]
    }

    /// The parsed site of an interned site id.
    pub fn site(&self, id: u32) -> Option<&GlSite> {
        self.sites.get(&id).and_then(|s| s.as_ref())
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }

    /// Lines of kinds the reader does not know, by kind (first word or two).
    pub fn unknown_kinds(&self) -> &BTreeMap<String, u64> {
        &self.unknown
    }

    /// Malformed lines of known kinds: count and the first one.
    pub fn malformed(&self) -> (u64, Option<&(u64, String)>) {
        (self.bad, self.first_bad.as_ref())
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_string());
        self.ids.insert(s.to_string(), i);
        i
    }

    fn intern_site(&mut self, s: &str) -> u32 {
        let id = self.intern(s);
        self.sites.entry(id).or_insert_with(|| GlSite::parse(s));
        id
    }

    fn malformed_line(&mut self, text: &str) {
        self.bad += 1;
        if self.first_bad.is_none() {
            self.first_bad = Some((self.line_no, text.chars().take(120).collect()));
        }
    }

    /// The next event, or `None` at the end of the file.
    pub fn next_event(&mut self) -> Result<Option<GlEvent>, ImportError> {
        loop {
            self.line.clear();
            let n = self
                .src
                .read_until(b'\n', &mut self.line)
                .map_err(|source| ImportError::Io {
                    path: self.path.clone(),
                    source,
                })?;
            if n == 0 {
                return Ok(None);
            }
            self.bytes += n as u64;
            self.line_no += 1;
            let line = std::mem::take(&mut self.line);
            let text = String::from_utf8_lossy(&line);
            let ev = self.parse(text.trim().trim_start_matches(['*', '$']).trim_start());
            drop(text);
            self.line = line;
            if let Some(ev) = ev {
                return Ok(Some(ev));
            }
        }
    }

    fn parse(&mut self, text: &str) -> Option<GlEvent> {
        if text.is_empty() {
            return None;
        }
        let mut f = text.split_ascii_whitespace();
        let first = f.next()?;
        match first {
            "L" | "S" | "M" => {
                let op = Op::from_code(first.as_bytes()[0])?;
                let (Some(addr), Some(size), Some(tid), Some(scope)) = (
                    f.next().and_then(hex),
                    f.next().and_then(|s| s.parse::<u32>().ok()),
                    f.next().and_then(|s| s.parse::<u32>().ok()),
                    f.next(),
                ) else {
                    self.malformed_line(text);
                    return None;
                };
                let scope = match scope {
                    "H" => Scope::Heap,
                    "G" => Scope::Global,
                    _ => Scope::Stack,
                };
                let name = match (f.next(), f.next()) {
                    (Some("LV") | Some("GV"), Some(n)) => GlName::Var(self.intern(n)),
                    (Some("LS") | Some("GS"), Some(path)) => {
                        let var_end = path.find(['.', '[']).unwrap_or(path.len());
                        let var = self.intern(&path[..var_end]);
                        GlName::Element {
                            var,
                            element: self.intern(path),
                        }
                    }
                    (Some(h), Some(site_off)) if h.starts_with("H-") => {
                        let instance = h[2..].parse().unwrap_or(0);
                        let (site, offset) = match site_off.rsplit_once('.') {
                            Some((s, o)) => (s, o.parse().unwrap_or(0)),
                            None => (site_off, 0),
                        };
                        GlName::Heap {
                            instance,
                            site: self.intern_site(site),
                            offset,
                        }
                    }
                    _ => GlName::None,
                };
                Some(GlEvent::Access {
                    op,
                    addr,
                    size,
                    tid,
                    scope,
                    name,
                })
            }
            "X" => {
                let second = f.next().unwrap_or("");
                match second {
                    "START" => Some(GlEvent::Start),
                    "THREAD_CREATE" => {
                        let child = f
                            .next()
                            .and_then(|s| s.rsplit(':').next())
                            .and_then(|c| c.parse().ok());
                        child.map(|child| GlEvent::ThreadCreate { child })
                    }
                    "MMAP" => match (
                        f.next().and_then(hex),
                        f.next().and_then(|s| s.parse().ok()),
                    ) {
                        (Some(addr), Some(len)) => Some(GlEvent::Mmap { addr, len }),
                        _ => {
                            self.malformed_line(text);
                            None
                        }
                    },
                    tid if tid.bytes().all(|b| b.is_ascii_digit()) && !tid.is_empty() => {
                        let tid: u32 = tid.parse().unwrap_or(0);
                        let what = f.next().unwrap_or("");
                        let kind = match what {
                            "MALLOC" => Some(AllocKind::Malloc),
                            "CALLOC" => Some(AllocKind::Calloc),
                            "REALLOC" => Some(AllocKind::Realloc),
                            "FREE" => None,
                            other => {
                                *self.unknown.entry(format!("X {other}")).or_default() += 1;
                                return None;
                            }
                        };
                        let Some(addr) = f.next().and_then(hex) else {
                            self.malformed_line(text);
                            return None;
                        };
                        match kind {
                            None => Some(GlEvent::Free { tid, addr }),
                            Some(kind) => {
                                let Some(size) = f.next().and_then(|s| s.parse().ok()) else {
                                    self.malformed_line(text);
                                    return None;
                                };
                                let site = f.next().map(|s| self.intern_site(s));
                                let instance = f.next().and_then(|s| s.parse().ok()).unwrap_or(0);
                                Some(GlEvent::Alloc {
                                    tid,
                                    kind,
                                    addr,
                                    size,
                                    site,
                                    instance,
                                })
                            }
                        }
                    }
                    other => {
                        *self.unknown.entry(format!("X {other}")).or_default() += 1;
                        None
                    }
                }
            }
            other => {
                let key = if other.len() > 12 { "(other)" } else { other };
                *self.unknown.entry(key.to_string()).or_default() += 1;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_parse_like_gleipnir_writes_them() {
        assert_eq!(
            GlSite::parse("prog_c_27"),
            Some(GlSite {
                file: "prog.c".into(),
                line: 27
            })
        );
        assert_eq!(GlSite::parse("my_file_cpp_8").unwrap().file, "my_file.cpp");
        assert_eq!(GlSite::parse("nonsense"), None);
    }

    #[test]
    fn every_line_kind_of_the_report_parses() {
        let text = "X START 0:6560 at 0\nX THREAD_CREATE 0:1\nX MMAP 004835000 8192\n\
X FN_ENTRY 0048eb930 NONE::malloc\nX 1 MALLOC 004a38030 192 prog_c_27 0\n\
X 1 REALLOC 004a380c0 4096 prog_c_26 0\nX 1 FREE 004a38030 prog_c_14 0\n\
S 1fff0005e8 8 1 S \nL 1fff00061c 4 1 S LV i \nL 1fff0005f8 8 1 S LS h.counts \n\
M 1fff00061c 4 1 S LV i \n$S 004a38110 4 1 H H-0 prog_c_16.8 \nS 1fff000580 8 1 S LS _zzq_args[5] \n";
        let mut r = GleipnirReader::new(text.as_bytes(), Path::new("t.txt"));
        let mut evs = vec![];
        while let Some(e) = r.next_event().unwrap() {
            evs.push(e);
        }
        assert_eq!(evs.len(), 12);
        assert_eq!(r.unknown_kinds().get("X FN_ENTRY"), Some(&1));
        match &evs[7] {
            GlEvent::Access {
                name: GlName::Var(v),
                op: Op::Load,
                size: 4,
                ..
            } => assert_eq!(r.string(*v), "i"),
            e => panic!("{e:?}"),
        }
        match &evs[8] {
            GlEvent::Access {
                name: GlName::Element { var, element },
                ..
            } => {
                assert_eq!(r.string(*var), "h");
                assert_eq!(r.string(*element), "h.counts");
            }
            e => panic!("{e:?}"),
        }
        match &evs[10] {
            GlEvent::Access {
                name:
                    GlName::Heap {
                        instance: 0,
                        site,
                        offset: 8,
                    },
                scope: Scope::Heap,
                addr,
                ..
            } => {
                assert_eq!(*addr, 0x4a38110);
                assert_eq!(r.site(*site).unwrap().to_string(), "prog.c:16");
            }
            e => panic!("{e:?}"),
        }
    }
}
