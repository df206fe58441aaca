//! Streaming reader of binary mapvis traces.
//!
//! The reader undoes exactly what the writer (`tool/mv_main.c`) did: it keeps
//! the same per-site prediction state, the current thread and each thread's
//! last stack pointer, so every [`Access`] comes out complete. It reads the
//! file through a fixed 1 MiB buffer, so memory use does not grow with the
//! trace; decoding an access costs a few varint reads.
//!
//! A trace whose writer died (crash, SIGKILL, full disk) ends without a
//! footer, possibly in the middle of a record. The reader returns every whole
//! record before the cut, then reports [`EndState::Truncated`] with how far
//! it got. Malformed bytes give a [`TraceError::Corrupt`] naming the file and
//! offset; it never panics on any input.
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::format::*;

/// Errors of the trace stage's reader.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened or read.
    #[error("cannot read the trace {path}: {source}.")]
    Io {
        /// The trace file.
        path: PathBuf,
        /// The system's reason.
        source: io::Error,
    },
    /// The file does not start with the mapvis magic.
    #[error("{path} is not a mapvis binary trace (it does not start with MVTRACE): trace a program with run_gleipnir, or use load_trace for Gleipnir text traces.")]
    NotATrace {
        /// The file.
        path: PathBuf,
    },
    /// The file has a format version this mapvis does not know.
    #[error("{path} uses trace format version {version}, and this mapvis reads versions 1 to {FORMAT_VERSION}: trace the program again with this mapvis.")]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// Its version.
        version: u64,
    },
    /// A block of records does not match its checksum (version 7): the
    /// trace was changed after the tool wrote it, or the disk corrupted it.
    /// Nothing of the block was decoded.
    #[error("{path} is corrupt: block {block} (bytes {start} to {end}) does not match its checksum, so the trace was changed after it was written. The {accesses} accesses before that block were read and are intact; trace the program again for a whole trace.")]
    BadBlock {
        /// The file.
        path: PathBuf,
        /// The block's number, from 1.
        block: u64,
        /// File offset of its BLOCK record.
        start: u64,
        /// File offset just past its records.
        end: u64,
        /// Accesses decoded before it.
        accesses: u64,
    },
    /// The bytes do not form a valid record.
    #[error("{path} is corrupt at byte {offset}: {what}. The {accesses} accesses before that point were read.")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Offset of the bad record.
        offset: u64,
        /// What was wrong.
        what: String,
        /// Accesses successfully decoded before it.
        accesses: u64,
    },
}

/// How the trace ended, once the reader has reached its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndState {
    /// Still reading.
    Reading,
    /// The footer was read: the trace is complete.
    Complete,
    /// The file ended without a footer: the program crashed, was killed or
    /// is still running. Everything before `offset` was read.
    Truncated {
        /// Bytes of whole records read.
        offset: u64,
        /// Bytes left over: a partial record (0 when the cut fell between records).
        partial_bytes: u64,
    },
}

#[derive(Clone, Copy, Debug)]
struct SiteState {
    ip: u64,
    op: Op,
    size: u32,
    last: u64,
    stride: i64,
}

const BUF_CAP: usize = 1 << 20;
/// Bytes that must remain in the buffer for the unchecked access loop: a
/// key and a correction are at most 10 bytes each.
const RUN_SLACK: usize = 24;

/// What [`TraceReader::for_each_access`] stopped at.
#[derive(Debug)]
pub enum Batch {
    /// A record that is not an access.
    Event(Event),
    /// The access limit was reached.
    Limit,
    /// The end of the trace.
    End,
}

/// Decodes a LEB128 varint at `pos`; `None` at the buffer's end or for an
/// overlong number (the careful decoder then reports it).
#[inline(always)]
fn varint(buf: &[u8], pos: usize) -> Option<(u64, usize)> {
    super::varint::get_uv(buf, pos).ok()
}
/// The largest thread id a trace may name: far above Valgrind's
/// `--max-threads` limit in practice, low enough that a corrupt id cannot
/// make the per-thread tables take gigabytes.
const MAX_TID: u32 = 1 << 20;

/// The longest string the tool writes: a whole command-line argument
/// (the kernel's MAX_ARG_STRLEN); names and notes are cut at 4000 bytes.
const MAX_STRING_BYTES: usize = 131_072;

/// The most arguments the tool records in the header (`MAX_HEADER_ARGS`
/// in `mv_main.c`): more than the kernel's 2 MiB argument space can hold.
const MAX_HEADER_ARGS: usize = 262_144;

/// A streaming decoder over any byte source.
pub struct TraceReader<R: Read> {
    src: R,
    path: PathBuf,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    eof: bool,
    /// File offset of `buf[0]`.
    base: u64,
    header: Header,
    sites: Vec<SiteState>,
    /// The site each access code names (version 5 renames codes with
    /// RECODE records; before, a code is its site's id).
    codes: Vec<u32>,
    tid: u32,
    last_sp: Vec<u64>,
    last_fp: Vec<u64>,
    region: u32,
    accesses: u64,
    end: EndState,
    footer: Option<Footer>,
    /// The first access key: 32, or 16 in a version 1 trace.
    access_base: u64,
    /// Version 7: every record lies in a block that is checked before it
    /// is decoded.
    blocked: bool,
    /// File offset just past the current block's records; a new BLOCK
    /// record must start exactly there.
    block_end: u64,
    /// Blocks checked so far.
    blocks: u64,
    /// The last block runs past the end of the file, so it could not be
    /// checked: its records are read as those of a cut trace, and a
    /// footer among them does not make the trace complete.
    unchecked_tail: bool,
}

impl TraceReader<File> {
    /// Opens a trace file and reads its header.
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let file = crate::workdir::open_regular(path).map_err(|source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        TraceReader::new(file, path)
    }
}

enum Need {
    /// Not enough bytes before the end of the file.
    Eof,
    /// Malformed.
    Bad(String),
}

type Dec<T> = Result<T, Need>;

impl<R: Read> TraceReader<R> {
    /// Wraps a byte source; `path` is used in messages. Reads the header.
    pub fn new(src: R, path: &Path) -> Result<Self, TraceError> {
        let mut r = TraceReader {
            src,
            path: path.to_path_buf(),
            buf: vec![0; BUF_CAP],
            pos: 0,
            len: 0,
            eof: false,
            base: 0,
            header: Header {
                version: 0,
                pid: 0,
                timestamp_us: 0,
                valgrind_version: String::new(),
                stack_depth: 0,
                heap_only: false,
                sync_events: false,
                command: Vec::new(),
                regions: String::new(),
            },
            sites: Vec::new(),
            codes: Vec::new(),
            tid: 0,
            last_sp: vec![0; 2],
            last_fp: vec![0; 2],
            region: 0,
            accesses: 0,
            end: EndState::Reading,
            footer: None,
            access_base: KEY_ACCESS_BASE,
            blocked: false,
            block_end: 0,
            blocks: 0,
            unchecked_tail: false,
        };
        r.fill(4096)?;
        if r.len < 8 || &r.buf[..8] != MAGIC {
            return Err(TraceError::NotATrace { path: r.path });
        }
        // The header holds the whole command line, which can be megabytes:
        // read more until it decodes.
        let start = 8;
        let mut want = 4096;
        loop {
            r.pos = start;
            match r.read_header() {
                Ok(h) => break r.header = h,
                Err(Need::Eof) if !r.eof => {
                    want *= 2;
                    // From the trace's start, so nothing is shifted out.
                    r.pos = 0;
                    r.fill(want)?;
                }
                Err(Need::Eof) => {
                    return Err(r.corrupt(start as u64, "the header is cut short".into()));
                }
                Err(Need::Bad(what)) => return Err(r.corrupt(start as u64, what)),
            }
        }
        if r.header.version == 0 || r.header.version > FORMAT_VERSION {
            return Err(TraceError::UnsupportedVersion {
                path: r.path,
                version: r.header.version,
            });
        }
        if r.header.version == 1 {
            r.access_base = KEY_ACCESS_BASE_V1;
        }
        r.blocked = r.header.version >= 7;
        r.block_end = if r.blocked { r.offset() } else { u64::MAX };
        Ok(r)
    }

    /// The header read when the reader was created.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// How the trace ended; [`EndState::Reading`] until `next_event` has
    /// returned `Ok(None)`.
    pub fn end_state(&self) -> &EndState {
        &self.end
    }

    /// The footer, once read.
    pub fn footer(&self) -> Option<&Footer> {
        self.footer.as_ref()
    }

    /// Accesses decoded so far.
    pub fn accesses_read(&self) -> u64 {
        self.accesses
    }

    /// Blocks whose checksum was checked (version 7; 0 before).
    pub fn blocks_checked(&self) -> u64 {
        self.blocks
    }

    /// File offset of the next unread byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn corrupt(&self, offset: u64, what: String) -> TraceError {
        TraceError::Corrupt {
            path: self.path.clone(),
            offset,
            what,
            accesses: self.accesses,
        }
    }

    /// Makes at least `min` unread bytes available unless the file ends first.
    fn fill(&mut self, min: usize) -> Result<(), TraceError> {
        if self.len - self.pos >= min || self.eof {
            return Ok(());
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.len, 0);
            self.base += self.pos as u64;
            self.len -= self.pos;
            self.pos = 0;
        }
        if self.buf.len() < min {
            self.buf.resize(min.next_power_of_two(), 0);
        }
        while self.len < min && !self.eof {
            match self.src.read(&mut self.buf[self.len..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(TraceError::Io {
                        path: self.path.clone(),
                        source,
                    })
                }
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn uv(&mut self) -> Dec<u64> {
        // Most values (access keys, small deltas) fit in one byte.
        if self.pos < self.len {
            let b = self.buf[self.pos];
            if b < 0x80 {
                self.pos += 1;
                return Ok(b as u64);
            }
        }
        self.uv_slow()
    }

    #[inline(never)]
    fn uv_slow(&mut self) -> Dec<u64> {
        use super::varint::VarintError;
        match super::varint::get_uv(&self.buf[..self.len], self.pos) {
            Ok((v, p)) => {
                self.pos = p;
                Ok(v)
            }
            Err(VarintError::Short) => Err(Need::Eof),
            Err(VarintError::Overlong) => Err(Need::Bad(
                "a number is longer than 10 bytes or does not fit in 64 bits".into(),
            )),
        }
    }

    #[inline]
    fn sv(&mut self) -> Dec<i64> {
        Ok(super::varint::unzigzag(self.uv()?))
    }

    fn u8(&mut self) -> Dec<u8> {
        if self.pos >= self.len {
            return Err(Need::Eof);
        }
        self.pos += 1;
        Ok(self.buf[self.pos - 1])
    }

    fn u32v(&mut self, what: &str) -> Dec<u32> {
        let v = self.uv()?;
        u32::try_from(v).map_err(|_| Need::Bad(format!("{what} {v} is out of range")))
    }

    fn string(&mut self) -> Dec<String> {
        let n = self.uv()? as usize;
        if n > MAX_STRING_BYTES {
            return Err(Need::Bad(format!("a string claims {n} bytes")));
        }
        if self.len - self.pos < n {
            return Err(Need::Eof);
        }
        let s = String::from_utf8_lossy(&self.buf[self.pos..self.pos + n]).into_owned();
        self.pos += n;
        Ok(s)
    }

    fn stack(&mut self) -> Dec<Vec<u64>> {
        let n = self.uv()? as usize;
        if n > 256 {
            return Err(Need::Bad(format!("a call stack claims {n} frames")));
        }
        (0..n).map(|_| self.uv()).collect()
    }

    fn read_header(&mut self) -> Dec<Header> {
        let version = self.uv()?;
        if version == 0 || version > FORMAT_VERSION {
            return Ok(Header {
                version,
                pid: 0,
                timestamp_us: 0,
                valgrind_version: String::new(),
                stack_depth: 0,
                heap_only: false,
                sync_events: false,
                command: Vec::new(),
                regions: String::new(),
            });
        }
        let pid = self.uv()?;
        let timestamp_us = self.uv()?;
        let valgrind_version = self.string()?;
        let stack_depth = self.uv()?;
        let heap_only = self.u8()? != 0;
        // Version 1 has no sync events, nor their flag.
        let sync_events = version >= 2 && self.u8()? != 0;
        let argc = self.uv()? as usize;
        if argc > MAX_HEADER_ARGS {
            return Err(Need::Bad(format!("the header claims {argc} arguments")));
        }
        let command = (0..argc).map(|_| self.string()).collect::<Dec<Vec<_>>>()?;
        let regions = if version >= 7 {
            let regions = self.string()?;
            self.header_checksum()?;
            regions
        } else {
            "pins".to_string()
        };
        Ok(Header {
            version,
            pid,
            timestamp_us,
            valgrind_version,
            stack_depth,
            heap_only,
            sync_events,
            command,
            regions,
        })
    }

    /// Version 7: the header ends with the XXH64 (seed 0) of its bytes
    /// before it. The header is read from the buffer's start.
    fn header_checksum(&mut self) -> Dec<()> {
        if self.len - self.pos < 8 {
            return Err(Need::Eof);
        }
        let want = le_u64(&self.buf[self.pos..self.pos + 8]);
        if xxhash_rust::xxh64::xxh64(&self.buf[..self.pos], 0) != want {
            return Err(Need::Bad(
                "the header does not match its checksum: the trace was changed after it was written".into(),
            ));
        }
        self.pos += 8;
        Ok(())
    }

    /// Reads the BLOCK record at `self.pos` (a record boundary, exactly
    /// where the previous block ended) and checks the block's records
    /// against its checksum before any of them is decoded. Cost: one
    /// XXH64 pass over the block (64 KiB as the tool writes them), several
    /// GB/s. A block that runs past the end of the file (the tool was
    /// killed while writing it) cannot be checked: its whole records are
    /// read as a cut trace's, and the trace is not complete.
    ///
    /// Returns false when the file ends inside the BLOCK record itself.
    fn open_block(&mut self) -> Result<bool, TraceError> {
        let hdr = BLOCK_HEADER_BYTES as usize;
        self.fill(hdr)?;
        let start = self.offset();
        if self.len - self.pos < hdr {
            return Ok(false);
        }
        let p = self.pos;
        let n = u32::from_le_bytes(self.buf[p + 1..p + 5].try_into().expect("4 bytes")) as usize;
        let want = le_u64(&self.buf[p + 5..p + 13]);
        if n > MAX_BLOCK_BYTES as usize {
            return Err(self.corrupt(
                start,
                format!("a block claims {n} bytes, more than the tool ever writes at once"),
            ));
        }
        self.fill(hdr + n)?;
        let p = self.pos;
        self.pos += hdr;
        if self.len - p < hdr + n {
            self.unchecked_tail = true;
            self.block_end = u64::MAX;
            return Ok(true);
        }
        if xxhash_rust::xxh64::xxh64(&self.buf[p + hdr..p + hdr + n], start) != want {
            return Err(TraceError::BadBlock {
                path: self.path.clone(),
                block: self.blocks + 1,
                start,
                end: start + (hdr + n) as u64,
                accesses: self.accesses,
            });
        }
        self.blocks += 1;
        self.block_end = start + (hdr + n) as u64;
        Ok(true)
    }

    /// At a record boundary of a version 7 trace: opens the next block
    /// when the current one is used up. Errors when a record ran past its
    /// block's end, or when the bytes after a block are not a BLOCK record.
    /// Returns false when the file ends inside a BLOCK record.
    fn at_boundary(&mut self) -> Result<bool, TraceError> {
        let off = self.offset();
        if off < self.block_end || self.pos == self.len {
            return Ok(true);
        }
        if off > self.block_end {
            return Err(self.corrupt(
                self.block_end,
                "a record runs past the end of its checked block".into(),
            ));
        }
        if self.buf[self.pos] != REC_BLOCK as u8 {
            return Err(self.corrupt(
                off,
                "bytes outside any checked block (a version 7 trace holds its records in blocks)"
                    .into(),
            ));
        }
        self.open_block()
    }

    /// Decodes the next event. Returns `Ok(None)` at the end of the trace;
    /// then [`Self::end_state`] says whether it was complete or truncated.
    pub fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        loop {
            if !matches!(self.end, EndState::Reading) {
                return Ok(None);
            }
            // Records other than strings and stacks fit in 128 bytes.
            if self.len - self.pos < 128 && !self.eof {
                self.fill(128)?;
            }
            if self.blocked {
                if !self.at_boundary()? {
                    self.end = self.end_at_cut();
                    return Ok(None);
                }
                if self.len - self.pos < 128 && !self.eof {
                    self.fill(128)?;
                }
            }
            let start = self.pos;
            // Fast path: accesses are almost every record.
            if let Ok(key) = self.uv() {
                if key >= self.access_base {
                    if let Ok(a) = self.access(key) {
                        return Ok(Some(Event::Access(a)));
                    }
                }
            }
            self.pos = start;
            if start == self.len {
                self.end = self.end_at_cut();
                return Ok(None);
            }
            let res = self.record();
            match res {
                Ok(Some(ev)) => return Ok(Some(ev)),
                Ok(None) => continue,
                Err(Need::Eof) => {
                    // Perhaps a long record: read more and retry, unless the
                    // file really ends here.
                    let have = self.len - start;
                    self.pos = start;
                    if !self.eof {
                        self.fill(have + 70_000)?;
                        if self.len - self.pos > have {
                            continue;
                        }
                    }
                    self.end = self.end_at_cut();
                    return Ok(None);
                }
                Err(Need::Bad(what)) => {
                    let off = self.base + start as u64;
                    return Err(self.corrupt(off, what));
                }
            }
        }
    }

    /// How the trace ends when the file ends at `self.pos`, before the
    /// `len - pos` bytes of a cut record. A cut after the footer (in the
    /// end marker or the appended exit status) loses nothing that was
    /// traced; a footer is only taken from a checked block (see
    /// [`Self::footer_record`]).
    fn end_at_cut(&self) -> EndState {
        if self.footer.is_some() {
            EndState::Complete
        } else {
            EndState::Truncated {
                offset: self.offset(),
                partial_bytes: (self.len - self.pos) as u64,
            }
        }
    }

    /// Decodes accesses in a tight loop, handing each to `f`, until a
    /// record that is not an access, the end of the trace, or `limit`
    /// accesses. This is the fast path: no [`Event`] is built per access,
    /// and the decoder state stays in registers between accesses.
    ///
    /// Returns [`Batch::Event`] with the next non-access event (state-only
    /// records such as new sites are absorbed), [`Batch::Limit`] after
    /// `limit` accesses, or [`Batch::End`] at the end of the trace (then
    /// [`Self::end_state`] says how it ended). Errors are those of
    /// [`Self::next_event`]; the accesses before a corrupt record have
    /// already been handed to `f`.
    pub fn for_each_access<F: FnMut(&Access)>(
        &mut self,
        limit: u64,
        mut f: F,
    ) -> Result<Batch, TraceError> {
        let stop = self.accesses.saturating_add(limit);
        loop {
            if self.accesses >= stop {
                return Ok(Batch::Limit);
            }
            if self.len - self.pos < 128 && !self.eof {
                self.fill(128)?;
            }
            self.access_run(stop, &mut f);
            if self.accesses >= stop {
                return Ok(Batch::Limit);
            }
            match self.next_event()? {
                Some(Event::Access(a)) => f(&a),
                Some(ev) => return Ok(Batch::Event(ev)),
                None => return Ok(Batch::End),
            }
        }
    }

    /// The inner loop of [`Self::for_each_access`]: decodes accesses while
    /// at least [`RUN_SLACK`] bytes remain in the buffer, so that no varint
    /// can run past it. Stops at anything unusual (a control record, an
    /// undefined site, an overlong number) and leaves it to the careful
    /// path, which reports it.
    #[inline(always)]
    fn access_run<F: FnMut(&Access)>(&mut self, stop: u64, f: &mut F) {
        let slot = self.tid as usize;
        let (tid, sp, fp, region) = (
            self.tid,
            self.last_sp[slot],
            self.last_fp[slot],
            self.region,
        );
        let base = self.access_base;
        let buf = &self.buf[..self.len];
        let sites = &mut self.sites[..];
        let codes = &self.codes[..];
        let mut pos = self.pos;
        let mut n = self.accesses;
        // Stop at the block's end too, where the careful path opens the next.
        let block_end = self.block_end.saturating_sub(self.base);
        let safe = self
            .len
            .saturating_sub(RUN_SLACK)
            .min(usize::try_from(block_end).unwrap_or(usize::MAX));
        while pos < safe && n < stop {
            let Some((key, p)) = varint(buf, pos) else {
                break;
            };
            if key < base {
                break;
            }
            let Some(&id) = codes.get(((key - base) >> 1) as usize) else {
                break;
            };
            let Some(site) = sites.get_mut(id as usize) else {
                break;
            };
            let predicted = site.last.wrapping_add(site.stride as u64);
            let (addr, p) = if key & 1 == 1 {
                let Some((u, p)) = varint(buf, p) else {
                    break;
                };
                let d = ((u >> 1) as i64) ^ -((u & 1) as i64);
                let addr = predicted.wrapping_add(d as u64);
                site.stride = addr.wrapping_sub(site.last) as i64;
                (addr, p)
            } else {
                (predicted, p)
            };
            site.last = addr;
            pos = p;
            n += 1;
            f(&Access {
                op: site.op,
                size: site.size,
                addr,
                tid,
                ip: site.ip,
                sp,
                fp,
                region,
                site: SiteId(id),
            });
        }
        self.pos = pos;
        self.accesses = n;
    }

    /// Decodes the rest of an access record whose key was `key`.
    #[inline(always)]
    fn access(&mut self, key: u64) -> Dec<Access> {
        let code = ((key - self.access_base) >> 1) as usize;
        let correction = if key & 1 == 1 { Some(self.sv()?) } else { None };
        let Some(&id) = self.codes.get(code) else {
            return Err(Need::Bad(format!("access at undefined site {code}")));
        };
        let Some(site) = self.sites.get_mut(id as usize) else {
            return Err(Need::Bad(format!("access at undefined site {id}")));
        };
        let predicted = site.last.wrapping_add(site.stride as u64);
        let addr = match correction {
            Some(d) => {
                let addr = predicted.wrapping_add(d as u64);
                site.stride = addr.wrapping_sub(site.last) as i64;
                addr
            }
            None => predicted,
        };
        site.last = addr;
        let (op, size, ip) = (site.op, site.size, site.ip);
        self.accesses += 1;
        let slot = self.tid as usize;
        Ok(Access {
            op,
            size,
            addr,
            tid: self.tid,
            ip,
            sp: self.last_sp[slot],
            fp: self.last_fp[slot],
            region: self.region,
            site: SiteId(id),
        })
    }

    /// Decodes one record; `Ok(None)` for records that only update state.
    #[inline(always)]
    fn record(&mut self) -> Dec<Option<Event>> {
        let key = self.uv()?;
        if key >= self.access_base {
            return Ok(Some(Event::Access(self.access(key)?)));
        }
        let time = self.accesses;
        Ok(Some(match key {
            REC_SITE | REC_THREAD | REC_SP | REC_FP | REC_END | REC_RECODE => {
                self.state_record(key)?;
                return Ok(None);
            }
            REC_ALLOC => self.alloc_record(time)?,
            REC_FREE => self.free_record(time)?,
            REC_MAP => self.map_record()?,
            REC_UNMAP => Event::Unmap {
                start: self.uv()?,
                len: self.uv()?,
            },
            REC_THREAD_CREATE => Event::ThreadCreate {
                parent: self.u32v("thread id")?,
                child: self.u32v("thread id")?,
            },
            REC_THREAD_EXIT => Event::ThreadExit {
                tid: self.u32v("thread id")?,
            },
            REC_SYNC => self.sync_record(time)?,
            REC_ICOUNT => Event::InstrCount {
                tid: self.u32v("thread id")?,
                icount: self.uv()?,
            },
            REC_STACK_ALLOC => Event::StackAlloc(StackAlloc {
                tid: self.u32v("thread id")?,
                ip: self.uv()?,
                sp: self.uv()?,
                len: self.uv()?,
                fp: self.uv()?,
                time,
            }),
            REC_MMAP => Event::Mmap(MmapEvent {
                tid: self.u32v("thread id")?,
                addr: self.uv()?,
                len: self.uv()?,
                stack: self.stack()?,
                time,
            }),
            REC_ROOTS => self.roots_record()?,
            REC_ROOT_REGS => Event::RootReg {
                tid: self.u32v("thread id")?,
                reg: self.u8()?,
                value: self.uv()?,
            },
            REC_PTR_STORE => Event::PtrStore {
                block: self.uv()?,
                offset: self.uv()?,
            },
            REC_REGION_START => self.region_start_record(time)?,
            REC_REGION_STOP => Event::RegionStop(RegionStop {
                id: self.u32v("region id")?,
                tid: self.u32v("thread id")?,
                arg_block: self.uv()?,
                time,
            }),
            REC_BLOCK if self.blocked => {
                return Err(Need::Bad("a BLOCK record inside a block".into()))
            }
            REC_WARNING => self.warning_record()?,
            REC_EXIT => self.exit_record()?,
            REC_FOOTER => self.footer_record()?,
            other => return Err(Need::Bad(format!("unknown record type {other}"))),
        }))
    }

    /// A record that changes the decoder's state and yields no event: a
    /// site definition, the current thread, its stack or frame pointer,
    /// or the end marker.
    fn state_record(&mut self, key: u64) -> Dec<()> {
        match key {
            REC_SITE => {
                let id = self.uv()?;
                let ip = self.uv()?;
                let op = Op::from_code(self.u8()?)
                    .ok_or_else(|| Need::Bad("a site has an unknown operation".into()))?;
                let size = self.u32v("access size")?;
                if id != self.sites.len() as u64 {
                    return Err(Need::Bad(format!(
                        "site {id} defined out of order (expected {})",
                        self.sites.len()
                    )));
                }
                self.sites.push(SiteState {
                    ip,
                    op,
                    size,
                    last: 0,
                    stride: 0,
                });
                self.codes.push(id as u32);
                Ok(())
            }
            REC_RECODE => {
                let (a, b) = (self.uv()?, self.uv()?);
                let n = self.codes.len() as u64;
                if a >= n || b >= n {
                    return Err(Need::Bad(format!(
                        "a RECODE record swaps codes {a} and {b}, and only {n} sites are defined"
                    )));
                }
                self.codes.swap(a as usize, b as usize);
                Ok(())
            }
            REC_THREAD => {
                let tid = self.u32v("thread id")?;
                if tid > MAX_TID {
                    return Err(Need::Bad(format!(
                        "thread id {tid} is beyond the largest a trace may name ({MAX_TID})"
                    )));
                }
                let need = tid as usize + 1;
                if self.last_sp.len() < need {
                    self.last_sp.resize(need, 0);
                    self.last_fp.resize(need, 0);
                }
                self.tid = tid;
                Ok(())
            }
            REC_SP => {
                let d = self.sv()?;
                let slot = &mut self.last_sp[self.tid as usize];
                *slot = slot.wrapping_add(d as u64);
                Ok(())
            }
            REC_FP => {
                let d = self.sv()?;
                let slot = &mut self.last_fp[self.tid as usize];
                *slot = slot.wrapping_add(d as u64);
                Ok(())
            }
            REC_END => {
                if self.len - self.pos < 6 {
                    return Err(Need::Eof);
                }
                if &self.buf[self.pos..self.pos + 6] != b"MVEND\n" {
                    return Err(Need::Bad("a bad end marker".into()));
                }
                self.pos += 6;
                Ok(())
            }
            _ => unreachable!("state_record is called for state records only"),
        }
    }

    /// An ALLOC record: a heap block, or one a forked child inherited.
    fn alloc_record(&mut self, time: u64) -> Dec<Event> {
        let byte = self.u8()?;
        let kind = AllocKind::from_byte(byte & !ALLOC_INHERITED)
            .ok_or_else(|| Need::Bad("an allocation has an unknown kind".into()))?;
        let tid = self.u32v("thread id")?;
        let addr = self.uv()?;
        let size = self.uv()?;
        let old = self.uv()?;
        let stack = self.stack()?;
        Ok(Event::Alloc(AllocEvent {
            kind,
            tid,
            addr,
            size,
            old_addr: (old != 0).then_some(old),
            stack,
            time,
            inherited: byte & ALLOC_INHERITED != 0,
        }))
    }

    /// A FREE record.
    fn free_record(&mut self, time: u64) -> Dec<Event> {
        use super::format::wire::{FK_DELETE, FK_DEL_ARR, FK_FREE};
        let kind = match self.u8()? as u64 {
            FK_FREE => FreeKind::Free,
            FK_DELETE => FreeKind::Delete,
            FK_DEL_ARR => FreeKind::DeleteArray,
            k => return Err(Need::Bad(format!("a free has unknown kind {k}"))),
        };
        let tid = self.u32v("thread id")?;
        let addr = self.uv()?;
        let stack = self.stack()?;
        Ok(Event::Free(FreeEvent {
            kind,
            tid,
            addr,
            stack,
            time,
        }))
    }

    /// A MAP record: a file mapped into the program's address space.
    fn map_record(&mut self) -> Dec<Event> {
        let start = self.uv()?;
        let len = self.uv()?;
        let offset = self.uv()?;
        let p = self.u8()?;
        let path = self.string()?;
        Ok(Event::Map(Mapping {
            start,
            len,
            offset,
            perms: (p & 4 != 0, p & 2 != 0, p & 1 != 0),
            path,
        }))
    }

    /// A SYNC record: a lock, barrier or thread event at access time `time`.
    fn sync_record(&mut self, time: u64) -> Dec<Event> {
        let (kind, prim) = sync_kind_and_prim(self.u8()?)
            .ok_or_else(|| Need::Bad("a sync record has an unknown kind".into()))?;
        Ok(Event::Sync(SyncEvent {
            kind,
            prim,
            tid: self.u32v("thread id")?,
            icount: self.uv()?,
            obj: self.uv()?,
            time,
        }))
    }

    /// A ROOTS record: `n` words (at most 1024, as the tool writes them)
    /// that point into heap blocks, each's address a gap from the one
    /// before.
    fn roots_record(&mut self) -> Dec<Event> {
        let n = self.uv()? as usize;
        if n > 1024 {
            return Err(Need::Bad(format!("a ROOTS record claims {n} words")));
        }
        let mut words = Vec::with_capacity(n);
        let mut at = 0u64;
        for _ in 0..n {
            at = at.wrapping_add(self.uv()?);
            words.push((at, self.uv()?));
        }
        Ok(Event::Roots(words))
    }

    /// A REGION_START record with the stack frames at the start pin (at
    /// most 256); the accesses that follow belong to its region.
    fn region_start_record(&mut self, time: u64) -> Dec<Event> {
        let id = self.u32v("region id")?;
        let tid = self.u32v("thread id")?;
        let arg_block = self.uv()?;
        let n = self.uv()? as usize;
        if n > 256 {
            return Err(Need::Bad(format!("a region start claims {n} frames")));
        }
        let mut frames = Vec::with_capacity(n);
        for _ in 0..n {
            frames.push((self.uv()?, self.uv()?, self.uv()?));
        }
        self.region = id;
        Ok(Event::RegionStart(RegionStart {
            id,
            tid,
            arg_block,
            frames,
            time,
        }))
    }

    /// A WARNING record of the tool; unknown codes are kept as
    /// [`WarningKind::Other`].
    fn warning_record(&mut self) -> Dec<Event> {
        use super::format::wire::*;
        let code = self.uv()?;
        let text = self.string()?;
        let kind = match code {
            W_NESTED_START => WarningKind::NestedStart,
            W_STOP_NO_START => WarningKind::StopWithoutStart,
            W_OPEN_AT_EXIT => WarningKind::OpenAtExit,
            W_BAD_FREE => WarningKind::BadFree,
            W_FORKED => WarningKind::Forked,
            W_EXEC => WarningKind::Exec,
            W_EXEC_FAILED => WarningKind::ExecFailed,
            W_SNAPSHOT_PARTIAL => WarningKind::SnapshotPartial,
            W_REGION_CALLS => WarningKind::RegionCalls,
            c => WarningKind::Other(c),
        };
        Ok(Event::Warning { kind, text })
    }

    /// An EXIT record: the program's exit code or ending signal.
    fn exit_record(&mut self) -> Dec<Event> {
        let kind = self.u8()?;
        let code = self.sv()?;
        let code = i32::try_from(code)
            .map_err(|_| Need::Bad(format!("exit code {code} is out of range")))?;
        Ok(Event::Exit(match kind {
            0 => ExitStatus::Code(code),
            1 => ExitStatus::Signal(code),
            k => return Err(Need::Bad(format!("an exit record has unknown kind {k}"))),
        }))
    }

    /// The FOOTER record, kept for [`Self::footer`]. In a block that runs
    /// past the end of the file, and so could not be checked, the footer
    /// is where the trace is taken to be cut: it cannot vouch for a whole
    /// trace.
    fn footer_record(&mut self) -> Dec<Event> {
        if self.unchecked_tail {
            return Err(Need::Eof);
        }
        let footer = Footer {
            accesses: self.uv()?,
            regions: self.uv()?,
            allocs: self.uv()?,
            frees: self.uv()?,
            sites: self.uv()?,
            exit_code: self.sv()?,
        };
        self.footer = Some(footer.clone());
        Ok(Event::Footer(footer))
    }
}

/// The footer of the complete trace at `path`, read from the file's
/// last bytes without decoding the trace; `None` when the trace has no
/// footer (the program crashed or was killed) or cannot be read.
///
/// A complete trace ends `FOOTER END`, or `FOOTER END EXIT END`. The
/// footer's key (13) is a one-byte varint followed by exactly six
/// varints up to the end marker; varints end at bytes below 0x80, so
/// only the true footer start has exactly six after it. Cost: one read
/// of at most 160 bytes.
pub fn footer_at_end(path: &Path) -> Option<Footer> {
    use std::io::{Seek, SeekFrom};
    const TAIL: u64 = 160;
    let mut f = crate::workdir::open_regular(path).ok()?;
    let len = f.metadata().ok()?.len();
    let start = len.saturating_sub(TAIL);
    f.seek(SeekFrom::Start(start)).ok()?;
    let mut tail = Vec::with_capacity(TAIL as usize);
    f.take(TAIL).read_to_end(&mut tail).ok()?;
    let mut body = tail.strip_suffix(END_MARKER.as_slice())?;
    // `FOOTER END EXIT END`: the exit record mapvis appends.
    if let Some(k) = find_last(body, END_MARKER) {
        body = &body[..k];
    }
    let key = REC_FOOTER as u8;
    (0..body.len())
        .rev()
        .filter(|&k| body[k] == key)
        .find_map(|k| footer_from(&body[k + 1..]))
}

/// A little-endian u64 from the first 8 bytes of `b`.
fn le_u64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
}

/// The last position of `needle` in `hay`.
fn find_last(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// A footer's six fields when `b` holds exactly them.
fn footer_from(b: &[u8]) -> Option<Footer> {
    let mut pos = 0;
    let mut next = || {
        let (v, p) = super::varint::get_uv(b, pos).ok()?;
        pos = p;
        Some(v)
    };
    let f = Footer {
        accesses: next()?,
        regions: next()?,
        allocs: next()?,
        frees: next()?,
        sites: next()?,
        exit_code: super::varint::unzigzag(next()?),
    };
    (pos == b.len()).then_some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::trace::record::{put_sv as sv, put_uv as uv};

    /// A version 6 header: these tests write records unblocked; the
    /// version 7 tests below wrap them in checked blocks.
    fn header() -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        uv(&mut b, 6);
        uv(&mut b, 42); // pid
        uv(&mut b, 7); // time
        uv(&mut b, 6);
        b.extend_from_slice(b"3.19.0");
        uv(&mut b, 8);
        b.push(0);
        b.push(0);
        uv(&mut b, 1);
        uv(&mut b, 4);
        b.extend_from_slice(b"prog");
        b
    }

    /// Defines site 0 (an 8-byte load at 0x401000) and site 1 (an 8-byte
    /// store at 0x401010), and makes thread 1 current.
    fn two_sites_on_thread_1(b: &mut Vec<u8>) {
        for (id, ip, op) in [(0u64, 0x401000u64, b'L'), (1, 0x401010, b'S')] {
            uv(b, REC_SITE);
            uv(b, id);
            uv(b, ip);
            b.push(op);
            uv(b, 8);
        }
        uv(b, REC_THREAD);
        uv(b, 1);
    }

    /// Code 0 (site 0) accesses 0x1000 and code 1 (site 1) 0x9000, then
    /// a RECODE swaps codes 0 and 1.
    fn first_accesses_then_recode(b: &mut Vec<u8>) {
        uv(b, KEY_ACCESS_BASE + 1);
        sv(b, 0x1000);
        uv(b, KEY_ACCESS_BASE + 2 + 1);
        sv(b, 0x9000);
        uv(b, REC_RECODE);
        uv(b, 0);
        uv(b, 1);
    }

    /// A version 7 header, with its regions and its checksum.
    fn v7_header() -> Vec<u8> {
        let mut b = header();
        b[8] = 7;
        uv(&mut b, 4);
        b.extend_from_slice(b"pins");
        let sum = xxhash_rust::xxh64::xxh64(&b, 0);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    }

    /// A version 7 trace: `records` cut into checked blocks at `cuts`
    /// (offsets into `records`), as the tool writes them.
    fn v7_trace(records: &[u8], cuts: &[usize]) -> Vec<u8> {
        let mut b = v7_header();
        let mut from = 0;
        for &to in cuts.iter().chain([&records.len()]) {
            let at = b.len() as u64;
            b.extend_from_slice(&super::super::format::block(&records[from..to], at));
            from = to;
        }
        b
    }

    /// Records of a small whole trace: two sites, a RECODE, accesses, the
    /// footer and the end marker; with the offsets at which blocks may be
    /// cut (after the sites, after the RECODE).
    fn v7_records() -> (Vec<u8>, [usize; 2]) {
        let mut b = Vec::new();
        two_sites_on_thread_1(&mut b);
        let sites = b.len();
        first_accesses_then_recode(&mut b);
        let recode = b.len();
        for _ in 0..40 {
            uv(&mut b, KEY_ACCESS_BASE);
            uv(&mut b, KEY_ACCESS_BASE + 2);
        }
        for v in [REC_FOOTER, 82, 0, 0, 0, 2, 0] {
            uv(&mut b, v);
        }
        b.extend_from_slice(END_MARKER);
        (b, [sites, recode])
    }

    fn accesses(evs: &[Event]) -> Vec<(u64, u32)> {
        evs.iter()
            .filter_map(|e| match e {
                Event::Access(a) => Some((a.addr, a.site.0)),
                _ => None,
            })
            .collect()
    }

    /// A version 7 trace reads as the same records unblocked would, every
    /// block checked, and a cut anywhere reads a prefix of its accesses.
    #[test]
    fn checked_blocks_read_as_their_records() {
        let (recs, cuts) = v7_records();
        let b = v7_trace(&recs, &cuts);
        let mut r = TraceReader::new(&b[..], Path::new("t.mvt")).unwrap();
        assert_eq!(r.header().regions, "pins");
        let mut n = 0;
        while let Some(ev) = r.next_event().unwrap() {
            n += matches!(ev, Event::Access(_)) as u64;
        }
        assert_eq!((n, r.end_state()), (82, &EndState::Complete));
        assert_eq!(r.blocks_checked(), 3);
        let whole = accesses(&read_all(&b).0);
        let mut fast = vec![];
        let mut r = TraceReader::new(&b[..], Path::new("t.mvt")).unwrap();
        while !matches!(
            r.for_each_access(u64::MAX, |a| fast.push((a.addr, a.site.0)))
                .unwrap(),
            Batch::End
        ) {}
        assert_eq!(fast, whole, "the fast path reads the same accesses");
        for cut in 0..b.len() {
            let (evs, end) = read_all(&b[..cut]);
            let got = accesses(&evs);
            assert_eq!(got[..], whole[..got.len()], "cut at {cut}");
            if cut > 60 {
                assert!(
                    matches!(end, Ok(EndState::Truncated { .. })),
                    "cut at {cut}: {end:?}"
                );
            }
        }
    }

    /// The case format 5 read as complete: one code of a RECODE record
    /// changed. Now the block holding it fails its check before any of its
    /// records is decoded, and the message names the block; the accesses
    /// of the blocks before it are read.
    #[test]
    fn a_changed_recode_is_named_by_its_block() {
        let (recs, cuts) = v7_records();
        let b = v7_trace(&recs, &cuts);
        let whole = accesses(&read_all(&b).0);
        let hdr = v7_header().len();
        // The RECODE's first code: the byte after its key, in block 2.
        let first_block = hdr + BLOCK_HEADER_BYTES as usize + cuts[0];
        let at = first_block + BLOCK_HEADER_BYTES as usize + (cuts[1] - cuts[0]) - 2;
        assert_eq!(b[at - 1] as u64, REC_RECODE);
        let mut bad = b.clone();
        bad[at] = 1; // swap codes 1 and 1: a valid record, a different trace
        let (evs, end) = read_all(&bad);
        let e = end.unwrap_err();
        assert!(
            e.contains(&format!("block 2 (bytes {first_block} to")) && e.contains("checksum"),
            "{e}"
        );
        assert!(accesses(&evs).is_empty(), "block 1 holds no access");
        // Without blocks (version 6), the same change reads as a whole
        // trace of other accesses: what this check is for.
        let mut v6 = [header(), recs.clone()].concat();
        let k = header().len() + cuts[1] - 2;
        assert_eq!(v6[k - 1] as u64, REC_RECODE);
        v6[k] = 1;
        let (evs, end) = read_all(&v6);
        assert_eq!(end, Ok(EndState::Complete));
        assert_eq!(accesses(&evs).len(), whole.len());
        assert_ne!(accesses(&evs), whole);
    }

    /// No change of one byte, nor a block dropped or repeated, reads as a
    /// complete trace: each is an error or, when a block length grew past
    /// the file, a cut trace.
    #[test]
    fn no_changed_byte_reads_as_complete() {
        let (recs, cuts) = v7_records();
        let b = v7_trace(&recs, &cuts);
        for i in 0..b.len() {
            for bit in [0x01u8, 0x80] {
                let mut bad = b.clone();
                bad[i] ^= bit;
                let (_, end) = read_all(&bad);
                assert_ne!(end, Ok(EndState::Complete), "byte {i} ^ {bit:#x}");
            }
        }
        let hdr = v7_header().len();
        let second = hdr + BLOCK_HEADER_BYTES as usize + cuts[0];
        let third = second + BLOCK_HEADER_BYTES as usize + (cuts[1] - cuts[0]);
        let dropped = [&b[..second], &b[third..]].concat();
        assert!(read_all(&dropped).1.unwrap_err().contains("block 2"));
        let repeated = [&b[..third], &b[second..]].concat();
        assert!(read_all(&repeated).1.unwrap_err().contains("block 3"));
        let mut outside = b.clone();
        outside.insert(second, KEY_ACCESS_BASE as u8);
        assert!(read_all(&outside)
            .1
            .unwrap_err()
            .contains("outside any checked block"));
    }

    /// The exit status mapvis appends is a block of its own, and a cut
    /// inside it loses nothing; a footer in a block cut short does not
    /// make the trace complete.
    #[test]
    fn the_appended_exit_block_and_cut_footers() {
        let (recs, cuts) = v7_records();
        let mut b = v7_trace(&recs, &cuts);
        let tool_end = b.len();
        let mut exit = vec![REC_EXIT as u8, 0];
        sv(&mut exit, 3);
        exit.extend_from_slice(END_MARKER);
        let at = b.len() as u64;
        b.extend_from_slice(&super::super::format::block(&exit, at));
        let (evs, end) = read_all(&b);
        assert_eq!(end, Ok(EndState::Complete));
        assert!(evs.contains(&Event::Exit(ExitStatus::Code(3))));
        for cut in tool_end..b.len() {
            assert_eq!(
                read_all(&b[..cut]).1,
                Ok(EndState::Complete),
                "cut at {cut}"
            );
        }
        for cut in tool_end - END_MARKER.len()..tool_end {
            assert!(
                matches!(read_all(&b[..cut]).1, Ok(EndState::Truncated { .. })),
                "cut at {cut}"
            );
        }
    }

    fn read_all(bytes: &[u8]) -> (Vec<Event>, Result<EndState, String>) {
        let mut r = match TraceReader::new(bytes, Path::new("t.mvt")) {
            Ok(r) => r,
            Err(e) => return (vec![], Err(e.to_string())),
        };
        let mut evs = vec![];
        loop {
            match r.next_event() {
                Ok(Some(e)) => evs.push(e),
                Ok(None) => return (evs, Ok(r.end_state().clone())),
                Err(e) => return (evs, Err(e.to_string())),
            }
        }
    }

    /// A RECODE record swaps two codes' sites: accesses after it with
    /// either code are by the other site, each site keeping its own
    /// prediction state, on the careful path and the fast one alike; a
    /// code beyond the sites defined is damage.
    #[test]
    fn recode_swaps_the_sites_of_two_codes() {
        let mut b = header();
        two_sites_on_thread_1(&mut b);
        first_accesses_then_recode(&mut b);
        // code 0 is now site 1: predicted 0x9000 + 0x9000 (its stride)
        uv(&mut b, KEY_ACCESS_BASE);
        // code 1 is site 0: predicted 0x2000
        uv(&mut b, KEY_ACCESS_BASE + 2);
        let want = [
            (0x401000, 0x1000, 0),
            (0x401010, 0x9000, 1),
            (0x401010, 0x12000, 1),
            (0x401000, 0x2000, 0),
        ];
        let (evs, end) = read_all(&b);
        assert!(end.is_ok(), "{end:?}");
        let got: Vec<(u64, u64, u32)> = evs
            .iter()
            .filter_map(|e| match e {
                Event::Access(a) => Some((a.ip, a.addr, a.site.0)),
                _ => None,
            })
            .collect();
        assert_eq!(got, want);
        let mut r = TraceReader::new(&b[..], Path::new("t.mvt")).unwrap();
        let mut fast = Vec::new();
        loop {
            match r
                .for_each_access(100, |a| fast.push((a.ip, a.addr, a.site.0)))
                .unwrap()
            {
                Batch::End => break,
                Batch::Limit | Batch::Event(_) => {}
            }
        }
        assert_eq!(fast, want);
        let mut bad = header();
        uv(&mut bad, REC_RECODE);
        uv(&mut bad, 0);
        uv(&mut bad, 1);
        let (_, end) = read_all(&bad);
        assert!(end.unwrap_err().contains("RECODE"));
    }

    #[test]
    fn strided_accesses_round_trip() {
        let mut b = header();
        uv(&mut b, REC_SITE);
        uv(&mut b, 0);
        uv(&mut b, 0x401000);
        b.push(b'S');
        uv(&mut b, 4);
        uv(&mut b, REC_THREAD);
        uv(&mut b, 1);
        // first access: miss, predicted 0, correction 0x1000
        uv(&mut b, KEY_ACCESS_BASE + 1);
        sv(&mut b, 0x1000);
        // second: miss, predicted 0x2000 (stride 0x1000 learnt), real 0x1004
        uv(&mut b, KEY_ACCESS_BASE + 1);
        sv(&mut b, 0x1004 - 0x2000);
        // third: hit (0x1008)
        uv(&mut b, KEY_ACCESS_BASE);
        let (evs, end) = read_all(&b);
        let addrs: Vec<u64> = evs
            .iter()
            .filter_map(|e| match e {
                Event::Access(a) => Some(a.addr),
                _ => None,
            })
            .collect();
        assert_eq!(addrs, vec![0x1000, 0x1004, 0x1008]);
        assert!(matches!(end, Ok(EndState::Truncated { .. })));
    }

    #[test]
    fn sync_and_icount_records_decode() {
        let mut b = header();
        uv(&mut b, REC_SYNC);
        b.push(4); // acquire
        uv(&mut b, 2);
        uv(&mut b, 1234);
        uv(&mut b, 0x10c080);
        uv(&mut b, REC_ICOUNT);
        uv(&mut b, 2);
        uv(&mut b, 1300);
        // Version 4: a semaphore's post (release 5, primitive 3 << 4).
        uv(&mut b, REC_SYNC);
        b.push(5 | (3 << 4));
        uv(&mut b, 3);
        uv(&mut b, 99);
        uv(&mut b, 0x4040);
        let (evs, _) = read_all(&b);
        assert_eq!(
            evs,
            vec![
                Event::Sync(SyncEvent {
                    kind: SyncKind::Acquire,
                    prim: SyncPrim::Mutex,
                    tid: 2,
                    icount: 1234,
                    obj: 0x10c080,
                    time: 0
                }),
                Event::InstrCount {
                    tid: 2,
                    icount: 1300
                },
                Event::Sync(SyncEvent {
                    kind: SyncKind::Release,
                    prim: SyncPrim::Sem,
                    tid: 3,
                    icount: 99,
                    obj: 0x4040,
                    time: 0
                }),
            ]
        );
    }

    #[test]
    fn stack_alloc_and_mmap_records_decode() {
        let mut b = header();
        uv(&mut b, REC_STACK_ALLOC);
        uv(&mut b, 1);
        uv(&mut b, 0x1093fd);
        uv(&mut b, 0x1ffeff8740);
        uv(&mut b, 0x210);
        uv(&mut b, 0x1ffeff8c10);
        uv(&mut b, REC_MMAP);
        uv(&mut b, 1);
        uv(&mut b, 0x4835000);
        uv(&mut b, 0x2000);
        uv(&mut b, 2);
        uv(&mut b, 0x4a1b2c3);
        uv(&mut b, 0x109234);
        let (evs, _) = read_all(&b);
        assert_eq!(
            evs,
            vec![
                Event::StackAlloc(StackAlloc {
                    tid: 1,
                    ip: 0x1093fd,
                    sp: 0x1ffeff8740,
                    len: 0x210,
                    fp: 0x1ffeff8c10,
                    time: 0
                }),
                Event::Mmap(MmapEvent {
                    tid: 1,
                    addr: 0x4835000,
                    len: 0x2000,
                    stack: vec![0x4a1b2c3, 0x109234],
                    time: 0
                })
            ]
        );
    }

    /// A version 1 trace (no sync flag, accesses from key 16) still reads.
    #[test]
    fn version_1_traces_still_read() {
        let mut b = MAGIC.to_vec();
        uv(&mut b, 1);
        uv(&mut b, 42);
        uv(&mut b, 7);
        uv(&mut b, 6);
        b.extend_from_slice(b"3.19.0");
        uv(&mut b, 8);
        b.push(0);
        uv(&mut b, 1);
        uv(&mut b, 4);
        b.extend_from_slice(b"prog");
        uv(&mut b, REC_SITE);
        uv(&mut b, 0);
        uv(&mut b, 0x401000);
        b.push(b'L');
        uv(&mut b, 8);
        uv(&mut b, KEY_ACCESS_BASE_V1 + 1);
        sv(&mut b, 0x2000);
        uv(&mut b, KEY_ACCESS_BASE_V1);
        let (evs, end) = read_all(&b);
        let addrs: Vec<u64> = evs
            .iter()
            .filter_map(|e| match e {
                Event::Access(a) => Some(a.addr),
                _ => None,
            })
            .collect();
        assert_eq!(addrs, vec![0x2000, 0x4000]);
        assert!(matches!(end, Ok(EndState::Truncated { .. })));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let (_, r) = read_all(b"not a trace at all");
        assert!(r.unwrap_err().contains("not a mapvis binary trace"));
        let mut b = header();
        b.extend_from_slice(&[KEY_ACCESS_BASE as u8, 0xff, 0xff]);
        let (_, r) = read_all(&b);
        assert!(r.unwrap_err().contains("access at undefined site 0"));
    }

    /// A trace cut anywhere after its footer (inside the end marker or the
    /// exit record mapvis appends) is complete; cut before it, truncated.
    #[test]
    fn a_cut_after_the_footer_is_complete() {
        let mut b = header();
        uv(&mut b, REC_SITE);
        uv(&mut b, 0);
        uv(&mut b, 0x401000);
        b.push(b'L');
        uv(&mut b, 8);
        uv(&mut b, KEY_ACCESS_BASE + 1);
        sv(&mut b, 0x1000);
        let before_footer = b.len();
        for v in [REC_FOOTER, 1, 0, 0, 0, 1, 0] {
            uv(&mut b, v);
        }
        let footer_end = b.len();
        b.extend_from_slice(END_MARKER);
        uv(&mut b, REC_EXIT);
        b.push(1);
        sv(&mut b, 9);
        b.extend_from_slice(END_MARKER);
        for cut in footer_end..=b.len() {
            let (evs, end) = read_all(&b[..cut]);
            assert_eq!(end, Ok(EndState::Complete), "cut at {cut}");
            assert_eq!(
                evs.iter().filter(|e| matches!(e, Event::Access(_))).count(),
                1
            );
        }
        for cut in before_footer..footer_end {
            let (_, end) = read_all(&b[..cut]);
            assert!(
                matches!(end, Ok(EndState::Truncated { .. })),
                "cut at {cut}"
            );
        }
    }

    proptest::proptest! {
        /// Any bytes after a valid header decode to events or an error,
        /// never a panic, and the reader always stops.
        #[test]
        fn arbitrary_bytes_never_panic(tail in proptest::collection::vec(proptest::num::u8::ANY, 0..2048)) {
            let mut b = header();
            b.extend_from_slice(&tail);
            let _ = read_all(&b);
        }

        /// Every prefix of a valid stream reads as a prefix of its events.
        #[test]
        fn any_cut_reads_a_prefix(cut in 0usize..200) {
            let mut b = header();
            uv(&mut b, REC_SITE);
            uv(&mut b, 0);
            uv(&mut b, 0x401000);
            b.push(b'L');
            uv(&mut b, 8);
            for i in 0..40u64 {
                uv(&mut b, KEY_ACCESS_BASE + 1);
                sv(&mut b, (i * i) as i64);
            }
            let (full, _) = read_all(&b);
            let cut = cut.min(b.len());
            let (part, end) = read_all(&b[..cut]);
            if cut >= header().len() {
                let truncated = matches!(end, Ok(EndState::Truncated { .. }));
                proptest::prop_assert!(truncated);
                proptest::prop_assert_eq!(&full[..part.len()], &part[..]);
            }
        }
    }

    /// The `#define NAME NUMBER` lines of `mv_format.h` with a prefix.
    fn defines(prefix: &str) -> Vec<(String, u64)> {
        let h = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/trace/record/tool/mv_format.h"
        );
        std::fs::read_to_string(h)
            .unwrap()
            .lines()
            .filter_map(|l| {
                let mut w = l.trim().strip_prefix("#define ")?.split_whitespace();
                let (name, value) = (w.next()?, w.next()?);
                let n = match value.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16).ok()?,
                    None => value.parse().ok()?,
                };
                Some((name.strip_prefix(prefix)?.to_string(), n))
            })
            .collect()
    }

    /// Every record kind of the one definition (`mv_format.h`) has its row
    /// in docs/trace-format.md, and the reader decodes it: a record of each
    /// kind followed by zero bytes reads as that record or a complaint
    /// about its fields, never as an unknown record type. The SYNC kinds
    /// have their rows too, and the allocation and free kinds their words.
    #[test]
    fn every_record_kind_is_documented_and_decoded() {
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/trace-format.md"))
                .unwrap();
        let recs = defines("REC_");
        assert!(recs.len() >= 18, "{recs:?}");
        for (name, n) in &recs {
            assert!(
                doc.contains(&format!("| {n} | {name} |")),
                "REC_{name} ({n}) is not documented"
            );
            let mut rec = Vec::new();
            uv(&mut rec, *n);
            rec.extend_from_slice(&[0u8; 64]);
            // BLOCK frames the others: after a block, it is read as one.
            let b = if *n == REC_BLOCK {
                let mut b = v7_header();
                b.extend_from_slice(&rec);
                b
            } else {
                [header(), rec].concat()
            };
            let (_, end) = read_all(&b);
            if let Err(e) = end {
                assert!(!e.contains("unknown record type"), "REC_{name}: {e}");
            }
        }
        for (name, n) in defines("SK_") {
            assert!(
                doc.contains(&format!("| {n} | {name} |")),
                "SK_{name} is not documented"
            );
            assert!(
                SyncKind::from_byte(n as u8).is_some(),
                "SK_{name} is not decoded"
            );
        }
        for (name, n) in defines("SP_") {
            assert!(
                doc.contains(&format!("| {n} | {name} |")),
                "SP_{name} is not documented"
            );
            let b = ((n as u8) << wire::SYNC_PRIM_SHIFT) | wire::SK_ACQUIRE as u8;
            assert!(sync_kind_and_prim(b).is_some(), "SP_{name} is not decoded");
        }
        for (name, n) in defines("AK_").into_iter().filter(|(m, _)| m != "INHERITED") {
            let kind = AllocKind::from_byte(n as u8).unwrap_or_else(|| panic!("AK_{name}"));
            assert!(
                doc.contains(&format!("{n} {}", kind.name())),
                "AK_{name} is not documented"
            );
        }
        for (name, n) in defines("FK_") {
            let word = match name.as_str() {
                "FREE" => "free",
                "DELETE" => "delete",
                "DEL_ARR" => "delete[]",
                other => panic!("FK_{other} has no word in this test"),
            };
            assert!(
                doc.contains(&format!("{n} {word}")),
                "FK_{name} is not documented"
            );
            let mut b = header();
            uv(&mut b, REC_FREE);
            b.extend_from_slice(&[n as u8, 1, 0x10, 0]);
            let (evs, _) = read_all(&b);
            assert!(
                matches!(evs.first(), Some(Event::Free(_))),
                "FK_{name} is not decoded"
            );
        }
    }
}
