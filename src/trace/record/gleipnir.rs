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
//! few field splits and no allocation (about 10 M lines, 250 MB, per second
//! on one core). Lines it does not know are counted by kind and reported,
//! not fatal. Leading `*` and `$` (emphasis marks in printed examples) are
//! ignored.
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::format::{AllocKind, Op};
use crate::trace::naming::Scope;

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
///
/// Lines are found with `memchr` in a large buffer and parsed as bytes:
/// an access line costs one scan, a few integer conversions and, when it
/// names something, a hash lookup of the name (no allocation).
pub struct GleipnirReader<R: Read> {
    src: R,
    path: PathBuf,
    buf: Vec<u8>,
    /// Unparsed bytes are `buf[pos..end]`.
    pos: usize,
    end: usize,
    eof: bool,
    line_no: u64,
    strings: Vec<String>,
    ids: HashMap<Box<[u8]>, u32, foldhash::fast::RandomState>,
    /// Per interned id: the site it parses to, once asked for as a site.
    sites: Vec<Option<Option<GlSite>>>,
    unknown: BTreeMap<String, u64>,
    bad: u64,
    first_bad: Option<(u64, String)>,
    bytes: u64,
}

/// Buffer size of the reader; a longer line grows the buffer.
const CHUNK: usize = 1 << 22;

impl GleipnirReader<File> {
    /// Opens a Gleipnir trace.
    pub fn open(path: &Path) -> Result<Self, ImportError> {
        let f = crate::workdir::open_regular(path).map_err(|source| ImportError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(GleipnirReader::new(f, path))
    }
}

/// Whether a file starts like a Gleipnir text trace (cheap: reads 4 KiB).
pub fn looks_like_gleipnir(path: &Path) -> bool {
    let mut buf = [0u8; 4096];
    let n = crate::workdir::open_regular(path)
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

// The field splitter and number parsers below work on bytes by hand: the
// std equivalents (`split` + `filter`, `from_utf8` + `parse`) measured a
// third slower on the benchmark import, close to its 100 MB/s goal.

/// Whitespace-separated fields of a line.
struct Fields<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        let s = self.s;
        let mut i = self.i;
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == s.len() {
            self.i = i;
            return None;
        }
        let start = i;
        while i < s.len() && !s[i].is_ascii_whitespace() {
            i += 1;
        }
        self.i = i;
        Some(&s[start..i])
    }
}

/// A hexadecimal number, with or without `0x`.
fn hex(s: &[u8]) -> Option<u64> {
    let s = s.strip_prefix(b"0x").unwrap_or(s);
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &c in s {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | d as u64;
    }
    Some(v)
}

/// A decimal number that fits in a `u64`.
fn dec(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut v = 0u64;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(v)
}

fn dec32(s: &[u8]) -> Option<u32> {
    dec(s).and_then(|v| u32::try_from(v).ok())
}

fn lossy(s: &[u8]) -> String {
    String::from_utf8_lossy(s).into_owned()
}

impl<R: Read> GleipnirReader<R> {
    /// Wraps a reader; `path` is used in messages.
    pub fn new(src: R, path: &Path) -> Self {
        GleipnirReader {
            src,
            path: path.to_path_buf(),
            buf: vec![0; CHUNK],
            pos: 0,
            end: 0,
            eof: false,
            line_no: 0,
            strings: Vec::new(),
            ids: HashMap::default(),
            sites: Vec::new(),
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
        self.sites
            .get(id as usize)
            .and_then(|s| s.as_ref())
            .and_then(|s| s.as_ref())
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

    fn intern(&mut self, s: &[u8]) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(lossy(s));
        self.sites.push(None);
        self.ids.insert(s.into(), i);
        i
    }

    fn intern_site(&mut self, s: &[u8]) -> u32 {
        let id = self.intern(s);
        let slot = &mut self.sites[id as usize];
        if slot.is_none() {
            *slot = Some(GlSite::parse(&self.strings[id as usize]));
        }
        id
    }

    fn malformed_line(&mut self, text: &[u8]) {
        self.bad += 1;
        if self.first_bad.is_none() {
            let text = String::from_utf8_lossy(text).chars().take(120).collect();
            self.first_bad = Some((self.line_no, text));
        }
    }

    fn count_unknown(&mut self, key: String) {
        *self.unknown.entry(key).or_default() += 1;
    }

    /// The byte range of the next line (without its newline), refilling the
    /// buffer as needed; `None` at the end of the file.
    fn next_line(&mut self) -> Result<Option<(usize, usize)>, ImportError> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.pos..self.end]) {
                let line = (self.pos, self.pos + i);
                self.pos += i + 1;
                self.bytes += i as u64 + 1;
                return Ok(Some(line));
            }
            if self.eof {
                if self.pos < self.end {
                    let line = (self.pos, self.end);
                    self.bytes += (self.end - self.pos) as u64;
                    self.pos = self.end;
                    return Ok(Some(line));
                }
                return Ok(None);
            }
            // Keep the partial line, then read behind it.
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
            if self.end == self.buf.len() {
                self.buf.resize(self.buf.len() * 2, 0);
            }
            let n = loop {
                match self.src.read(&mut self.buf[self.end..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(source) => {
                        return Err(ImportError::Io {
                            path: self.path.clone(),
                            source,
                        })
                    }
                }
            };
            if n == 0 {
                self.eof = true;
            }
            self.end += n;
        }
    }

    /// The next event, or `None` at the end of the file.
    pub fn next_event(&mut self) -> Result<Option<GlEvent>, ImportError> {
        while let Some((a, b)) = self.next_line()? {
            self.line_no += 1;
            // The buffer is moved out while the line is parsed (a pointer
            // swap), so that parsing may intern names into `self`.
            let buf = std::mem::take(&mut self.buf);
            let mut line = buf[a..b].trim_ascii();
            while let [b'*' | b'$', rest @ ..] = line {
                line = rest;
            }
            let ev = self.parse(line.trim_ascii_start());
            self.buf = buf;
            if ev.is_some() {
                return Ok(ev);
            }
        }
        Ok(None)
    }

    fn parse(&mut self, text: &[u8]) -> Option<GlEvent> {
        let mut f = Fields { s: text, i: 0 };
        let first = f.next()?;
        match first {
            b"L" | b"S" | b"M" => self.parse_access(Op::from_code(first[0])?, f, text),
            b"X" => self.parse_event(f, text),
            other => {
                let key = if other.len() > 12 {
                    "(other)".to_string()
                } else {
                    lossy(other)
                };
                self.count_unknown(key);
                None
            }
        }
    }

    /// `L|S|M address size tid scope [name kind] [name]`, after the op.
    fn parse_access(&mut self, op: Op, mut f: Fields, text: &[u8]) -> Option<GlEvent> {
        let (Some(addr), Some(size), Some(tid), Some(scope)) = (
            f.next().and_then(hex),
            f.next().and_then(dec32),
            f.next().and_then(dec32),
            f.next(),
        ) else {
            self.malformed_line(text);
            return None;
        };
        let scope = match scope {
            b"H" => Scope::Heap,
            b"G" => Scope::Global,
            _ => Scope::Stack,
        };
        let name = self.parse_name(f.next(), f.next());
        Some(GlEvent::Access {
            op,
            addr,
            size,
            tid,
            scope,
            name,
        })
    }

    /// The name fields of an access: `LV i`, `GS a[3]`, `H-0 prog_c_27.16`.
    fn parse_name(&mut self, kind: Option<&[u8]>, text: Option<&[u8]>) -> GlName {
        match (kind, text) {
            (Some(b"LV" | b"GV"), Some(n)) => GlName::Var(self.intern(n)),
            (Some(b"LS" | b"GS"), Some(path)) => {
                let var_end = path
                    .iter()
                    .position(|&c| c == b'.' || c == b'[')
                    .unwrap_or(path.len());
                let var = self.intern(&path[..var_end]);
                GlName::Element {
                    var,
                    element: self.intern(path),
                }
            }
            (Some(h), Some(site_off)) if h.starts_with(b"H-") => {
                let instance = dec32(&h[2..]).unwrap_or(0);
                let (site, offset) = match site_off.iter().rposition(|&c| c == b'.') {
                    Some(dot) => (&site_off[..dot], dec(&site_off[dot + 1..]).unwrap_or(0)),
                    None => (site_off, 0),
                };
                GlName::Heap {
                    instance,
                    site: self.intern_site(site),
                    offset,
                }
            }
            _ => GlName::None,
        }
    }

    /// An `X ...` line: start, thread creation, mmap, or a heap event.
    fn parse_event(&mut self, mut f: Fields, text: &[u8]) -> Option<GlEvent> {
        match f.next().unwrap_or(b"") {
            b"START" => Some(GlEvent::Start),
            b"THREAD_CREATE" => {
                let child = f
                    .next()
                    .and_then(|s| s.rsplit(|&c| c == b':').next())
                    .and_then(dec32);
                child.map(|child| GlEvent::ThreadCreate { child })
            }
            b"MMAP" => match (f.next().and_then(hex), f.next().and_then(dec)) {
                (Some(addr), Some(len)) => Some(GlEvent::Mmap { addr, len }),
                _ => {
                    self.malformed_line(text);
                    None
                }
            },
            tid if !tid.is_empty() && tid.iter().all(u8::is_ascii_digit) => {
                self.parse_heap(dec32(tid).unwrap_or(0), f, text)
            }
            other => {
                self.count_unknown(format!("X {}", lossy(other)));
                None
            }
        }
    }

    /// `X tid MALLOC|CALLOC|REALLOC address size site instance` or
    /// `X tid FREE address ...`, after the thread id.
    fn parse_heap(&mut self, tid: u32, mut f: Fields, text: &[u8]) -> Option<GlEvent> {
        let kind = match f.next().unwrap_or(b"") {
            b"MALLOC" => Some(AllocKind::Malloc),
            b"CALLOC" => Some(AllocKind::Calloc),
            b"REALLOC" => Some(AllocKind::Realloc),
            b"FREE" => None,
            other => {
                self.count_unknown(format!("X {}", lossy(other)));
                return None;
            }
        };
        let Some(addr) = f.next().and_then(hex) else {
            self.malformed_line(text);
            return None;
        };
        let Some(kind) = kind else {
            return Some(GlEvent::Free { tid, addr });
        };
        let Some(size) = f.next().and_then(dec) else {
            self.malformed_line(text);
            return None;
        };
        let site = f.next().map(|s| self.intern_site(s));
        let instance = f.next().and_then(dec32).unwrap_or(0);
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

    /// A reader that hands out a few bytes per call, so that lines cross
    /// every buffer refill.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(out.len()).min(3);
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn events<R: Read>(r: &mut GleipnirReader<R>) -> Vec<GlEvent> {
        let mut evs = vec![];
        while let Some(e) = r.next_event().unwrap() {
            evs.push(e);
        }
        evs
    }

    #[test]
    fn lines_split_across_reads_crlf_and_a_missing_last_newline_parse() {
        let text = "X START 0:1 at 0\r\nX 1 MALLOC 0x4a38030 192 prog_c_27 0\r\n\
\r\n  L 004a38030 4 1 H H-0 prog_c_27.0\r\nS 1fff0005e8 8 2 S LV sum";
        let whole = events(&mut GleipnirReader::new(text.as_bytes(), Path::new("t")));
        let mut r = GleipnirReader::new(Trickle(text.as_bytes()), Path::new("t"));
        let trickled = events(&mut r);
        assert_eq!(whole, trickled);
        assert_eq!(whole.len(), 4);
        assert_eq!(r.bytes_read(), text.len() as u64);
        assert_eq!(r.malformed().0, 0);
        match &whole[3] {
            GlEvent::Access {
                op: Op::Store,
                addr: 0x1fff0005e8,
                size: 8,
                tid: 2,
                name: GlName::Var(v),
                ..
            } => assert_eq!(r.string(*v), "sum"),
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn a_line_longer_than_the_buffer_is_read_whole() {
        let long = "x".repeat(CHUNK + 10);
        let text = format!("L 10 4 1 S LV {long}\nS 20 4 1 S LV y\n");
        let mut r = GleipnirReader::new(text.as_bytes(), Path::new("t"));
        let evs = events(&mut r);
        assert_eq!(evs.len(), 2);
        match &evs[0] {
            GlEvent::Access {
                name: GlName::Var(v),
                ..
            } => assert_eq!(r.string(*v).len(), CHUNK + 10),
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn malformed_numbers_are_counted_not_fatal() {
        let text = "L zz 4 1 S\nL 10 99999999999 1 S\nX 1 MALLOC 10 -5 a_c_1 0\nS 10 4 1 S\n";
        let mut r = GleipnirReader::new(text.as_bytes(), Path::new("t"));
        let evs = events(&mut r);
        assert_eq!(evs.len(), 1);
        let (bad, first) = r.malformed();
        assert_eq!(bad, 3);
        assert_eq!(first.unwrap(), &(1, "L zz 4 1 S".to_string()));
    }

    proptest::proptest! {
        /// Any bytes, mixed with pieces of real lines, parse to events,
        /// unknown kinds or malformed lines: never a panic, and every byte
        /// is accounted for.
        #[test]
        fn arbitrary_text_never_panics(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::collection::vec(proptest::num::u8::ANY, 0..24),
                    proptest::sample::select(vec![
                        b"L ".to_vec(), b"X ".to_vec(), b"1 ".to_vec(), b"MALLOC ".to_vec(),
                        b"H-".to_vec(), b"LS a[".to_vec(), b".".to_vec(), b"\n".to_vec(),
                        b"0x".to_vec(), b"ff ".to_vec(), b"prog_c_".to_vec(), b"*$".to_vec(),
                    ]),
                ],
                0..64,
            )
        ) {
            let text: Vec<u8> = parts.concat();
            let mut r = GleipnirReader::new(Trickle(&text), Path::new("t"));
            while r.next_event().unwrap().is_some() {}
            proptest::prop_assert_eq!(r.bytes_read(), text.len() as u64);
        }
    }
}
