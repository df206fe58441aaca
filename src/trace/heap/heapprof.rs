//! The native heap profiler: running a program with mapvis's `LD_PRELOAD`
//! library (`src/trace/heap/preload/mv_heap.c`) and reading the profile it
//! writes (format: `docs/heap-profile-format.md`).
//!
//! The library is built by `build.rs`, embedded in the mapvis binary like
//! the Valgrind tool, and installed once per build into the cache folder
//! ([`install_preload`]). [`run_profiled`] starts the program with it;
//! [`ProfileReader`] streams the file it writes: a first pass reads
//! everything but the allocator calls and indexes where each thread's
//! records lie, a second merges the threads' calls into time order.
//!
//! Cost of reading: two passes over the file; memory bounded by the
//! distinct stacks, the threads and the RSS samples, never by the number of
//! calls (each thread's calls arrive in order, threads' chunks interleaved,
//! so a merge of one cursor per thread restores global time order).
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::trace::record::Mapping;
use crate::trace::record::{cache_root, write_atomically, RunError, RunOutcome};

/// The preload library, embedded at build time.
static PRELOAD: &[u8] = include_bytes!(concat!(env!("MAPVIS_TOOL_DIR"), "/libmv_heap.so"));

/// The first eight bytes of every heap profile.
pub const MAGIC: &[u8; 8] = b"MVHEAPP\n";
/// The profile format version the preload library writes: mv_heap.c's
/// `#define FORMAT_VERSION`, handed over by build.rs. This reader reads
/// every version from 1 up to it.
pub const FORMAT_VERSION: u64 = parse_decimal(env!("MAPVIS_HEAP_FORMAT_VERSION"));

/// A decimal number, at compile time.
const fn parse_decimal(s: &str) -> u64 {
    let b = s.as_bytes();
    let mut v = 0u64;
    let mut i = 0;
    while i < b.len() {
        assert!(
            b[i].is_ascii_digit(),
            "FORMAT_VERSION is not a decimal number"
        );
        v = v * 10 + (b[i] - b'0') as u64;
        i += 1;
    }
    v
}

const R_END: u64 = 0;
const R_THREAD: u64 = 1;
const R_STACK: u64 = 2;
const R_ALLOC: u64 = 3;
const R_FREE: u64 = 4;
const R_REALLOC: u64 = 5;
const R_RSS: u64 = 6;
const R_REGION: u64 = 7;
const R_MAP: u64 = 8;
const R_FOOTER: u64 = 9;
const R_CHUNK: u64 = 10;
const R_REGION_AT: u64 = 11;
const R_ZCHUNK: u64 = 12;
const R_SUMMARY: u64 = 13;
const R_CLOCK: u64 = 14;

/// Errors while reading a heap profile.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file could not be read.
    #[error("cannot read the heap profile {path}: {source}. Check that the file exists and is readable.")]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
    /// The file is not a heap profile.
    #[error("{path} is not a mapvis heap profile (it does not start with MVHEAPP): record one with heap_profile.")]
    NotAProfile {
        /// The file.
        path: PathBuf,
    },
    /// A version this reader does not know.
    #[error("{path} is a heap profile of format version {version}, and this mapvis reads versions 1 to {FORMAT_VERSION}: record it again with this mapvis.")]
    Version {
        /// The file.
        path: PathBuf,
        /// Its version.
        version: u64,
    },
    /// The calls were asked of a profile recorded without them (format 7).
    #[error("the heap profile {path} holds no calls: it was recorded by `heap_profile` without `calls`, which keeps only the summary (counts, sites, sizes, leaks, the live heap over time and the lifetimes); run `heap_profile calls` to record them.")]
    NoCalls {
        /// The file.
        path: PathBuf,
    },
    /// A malformed record.
    #[error("the heap profile {path} is damaged at byte {offset}: {what}. Record it again.")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Byte offset of the bad record.
        offset: usize,
        /// What was wrong.
        what: String,
    },
}

/// What an allocator call did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HeapOp {
    /// A block was allocated: malloc, calloc, memalign family, new, new[].
    Alloc(crate::trace::record::AllocKind),
    /// A block was freed: free, delete, delete[].
    Free(crate::trace::record::FreeKind),
}

/// One allocator call of the profiled program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileEvent {
    /// Nanoseconds since the profile started.
    pub time_ns: u64,
    /// Profiler thread number (1 is the first thread that allocated,
    /// normally the main thread).
    pub tid: u32,
    /// What the call did.
    pub op: HeapOp,
    /// The block returned (allocations) or freed; 0 for a realloc that
    /// freed without returning a block.
    pub addr: u64,
    /// Requested bytes (0 for frees).
    pub size: u64,
    /// `malloc_usable_size` minus the requested size.
    pub slack: u64,
    /// For realloc: the block it replaced (0 for realloc(NULL, n)).
    pub old: Option<u64>,
    /// Interned call stack ([`Profile::stacks`]); 0 for frees.
    pub stack: u32,
    /// Nanoseconds spent in the real allocator; `None` when this call was
    /// not timed (from format 4 the profiler times a sample of the calls,
    /// see [`Profile::dur_sample`]).
    pub dur_ns: Option<u32>,
}

/// A region mark (GL_START / GL_STOP run natively).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionMark {
    /// Nanoseconds since the profile started.
    pub time_ns: u64,
    /// Thread that ran the pin.
    pub tid: u32,
    /// `true` for GL_START.
    pub start: bool,
}

/// A decoded heap profile.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// Process id of the profiled program.
    pub pid: u64,
    /// Start time, microseconds since the Unix epoch.
    pub start_us: u64,
    /// The executable (as /proc/self/exe named it).
    pub exe: String,
    /// The command line.
    pub command: Vec<String>,
    /// Return addresses kept per allocation.
    pub depth: u64,
    /// How the calls' durations were sampled: 1 when every call was timed
    /// (formats 1 to 3, or `MAPVIS_HEAP_TIME=all`), N when each thread
    /// timed a pseudo-random one in about N of its calls.
    pub dur_sample: u64,
    /// Allocator calls in time order.
    pub events: Vec<ProfileEvent>,
    /// Stacks by id (index 0 is the empty stack): return addresses,
    /// innermost first; `stacks[id][0]` is in the caller of the allocator.
    pub stacks: Vec<Vec<u64>>,
    /// Resident set size samples: (nanoseconds, bytes).
    pub rss: Vec<(u64, u64)>,
    /// Region marks in time order.
    pub regions: Vec<RegionMark>,
    /// File mappings at exit, for symbolization.
    pub maps: Vec<Mapping>,
    /// Profiler thread number to operating-system thread id.
    pub threads: Vec<(u32, u32)>,
    /// Duration of the run in nanoseconds (from the footer, else the last event).
    pub duration_ns: u64,
    /// Whether the footer was read (the program ended through exit()).
    pub complete: bool,
    /// Whether the profile holds the calls (ZCHUNK blocks, or the records
    /// of formats 1 and 2): always before format 7; from format 7 only when
    /// recorded with `heap_profile calls`. Without them the summary holds
    /// everything the profile measured.
    pub has_calls: bool,
    /// Whether the tick rate is known, so times are nanoseconds: from the
    /// footer's clock pair, or a CLOCK record's (format 7, about every
    /// second). Else ticks are taken as nanoseconds.
    pub ticks_known: bool,
    /// What the profiler summarised as it recorded. With calls (format 5
    /// on): only when the program ended through exit() and the summary was
    /// kept. Without calls (format 7): the last whole SUMMARY record, the
    /// one written at exit or else the last checkpoint
    /// ([`super::heapsum::HeapSummary::at_exit`]), footer or not.
    pub summary: Option<super::heapsum::HeapSummary>,
}

struct Dec<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Dec<'_> {
    fn u8(&mut self) -> Option<u8> {
        let v = *self.b.get(self.pos)?;
        self.pos += 1;
        Some(v)
    }
    fn uv(&mut self) -> Option<u64> {
        let (v, p) = crate::trace::record::get_uv(self.b, self.pos).ok()?;
        self.pos = p;
        Some(v)
    }
    fn sv(&mut self) -> Option<i64> {
        Some(crate::trace::record::unzigzag(self.uv()?))
    }
    fn str(&mut self) -> Option<String> {
        let n = self.uv()? as usize;
        let s = self.b.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(String::from_utf8_lossy(s).into_owned())
    }
}

/// Bytes one record takes at most (a MAP record's 4000-byte path, a STACK
/// record's frames): a [`Window`] holds at least this much past the start
/// of the record being decoded.
const REC_MAX: usize = 16 * 1024;
/// Bytes a [`Window`] reads at once.
const WINDOW: usize = 64 * 1024;

/// A window over the profile file, refilled with positioned reads so that
/// the bytes from a record's start on are in memory. Memory: [`WINDOW`]
/// bytes, whatever the file's size.
struct Window {
    file: fs::File,
    len: u64,
    buf: Vec<u8>,
    base: u64,
}

impl Window {
    fn open(path: &Path) -> std::io::Result<Window> {
        let file = fs::File::open(path)?;
        let len = file.metadata()?.len();
        Ok(Window {
            file,
            len,
            buf: Vec::new(),
            base: 0,
        })
    }

    /// The bytes from file offset `off` on: at least [`REC_MAX`] of them,
    /// or all up to the end of the file.
    fn at(&mut self, off: u64) -> std::io::Result<&[u8]> {
        let end = self.base + self.buf.len() as u64;
        if off < self.base || off > end || (end < self.len && off + REC_MAX as u64 > end) {
            use std::os::unix::fs::FileExt;
            let n = self.len.saturating_sub(off).min(WINDOW as u64) as usize;
            self.buf.resize(n, 0);
            self.file.read_exact_at(&mut self.buf, off)?;
            self.base = off;
        }
        Ok(&self.buf[(off - self.base) as usize..])
    }
}

/// Per-thread decoding state: the delta bases.
#[derive(Clone, Copy)]
struct ThreadState {
    tsc: u64,
    addr: u64,
}

/// One decoded record. Calls carry their timestamp in ticks, the
/// profiler's raw stack id and their duration in ticks.
enum Rec {
    Thread {
        tid: u32,
        os: u32,
    },
    Stack {
        id: u64,
        frames: Vec<u64>,
    },
    Call(u64, ProfileEvent),
    Rss(u64, u64),
    Region(u64, bool),
    Map(Mapping),
    Footer(u64, u64),
    /// Version 2: a block of one thread's calls, `len` bytes from the end
    /// of this record.
    Chunk {
        tid: u32,
        os: u32,
        len: u64,
    },
    /// Version 3: a block of `calls` calls of one thread, in columns,
    /// `len` bytes from the end of this record.
    ZChunk {
        tid: u32,
        os: u32,
        calls: u64,
        len: u64,
    },
    /// Version 5: the summary, `len` bytes from the end of this record.
    Summary {
        len: u64,
    },
    /// Version 7: a clock pair (time stamp, monotonic nanoseconds) taken
    /// while the program ran, for the tick rate of a profile without footer.
    Clock(u64, u64),
    /// Version 2: a region mark with its thread and absolute timestamp.
    RegionAt {
        tid: u32,
        tsc: u64,
        start: bool,
    },
}

/// Decodes a top-level record of a version 2 profile: CHUNK and REGION_AT,
/// or the records both versions share (STACK, RSS, MAP, FOOTER, END).
fn decode_top_v2(d: &mut Dec) -> Result<Rec, bool> {
    let at = d.pos;
    let key = d.uv().ok_or(true)?;
    let rec = match key {
        R_CHUNK => (|| {
            let tid = d.uv()? as u32;
            let os = d.uv()? as u32;
            let len = d.b.get(d.pos..d.pos + 4)?;
            let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as u64;
            d.pos += 4;
            Some(Rec::Chunk { tid, os, len })
        })(),
        R_ZCHUNK => (|| {
            let tid = d.uv()? as u32;
            let os = d.uv()? as u32;
            let calls = d.uv()?;
            let len = d.b.get(d.pos..d.pos + 4)?;
            let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as u64;
            d.pos += 4;
            Some(Rec::ZChunk {
                tid,
                os,
                calls,
                len,
            })
        })(),
        R_CLOCK => (|| Some(Rec::Clock(d.uv()?, d.uv()?)))(),
        R_SUMMARY => (|| {
            let len = d.b.get(d.pos..d.pos + 4)?;
            let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as u64;
            d.pos += 4;
            Some(Rec::Summary { len })
        })(),
        R_REGION_AT => (|| {
            Some(Rec::RegionAt {
                tid: d.uv()? as u32,
                tsc: d.uv()?,
                start: d.u8()? != 0,
            })
        })(),
        R_STACK | R_RSS | R_MAP | R_FOOTER | R_END => {
            d.pos = at;
            let mut none = ThreadState { tsc: 0, addr: 0 };
            return decode(d, &mut none, 0, true);
        }
        _ => return Err(false),
    };
    rec.ok_or(true)
}

/// Decodes one call inside a version 2 CHUNK block: a tag byte (the
/// allocation kind 1-6, 3 for realloc, 17-19 for the free kinds), then the
/// fields of version 1's ALLOC, REALLOC or FREE after their kind.
fn decode_v2_call(d: &mut Dec, st: &mut ThreadState, tid: u32) -> Option<Rec> {
    let tag = d.u8()? as u64;
    match tag {
        3 => call(R_REALLOC, 0, d, st, tid),
        1..=6 => call(R_ALLOC, tag as u8, d, st, tid),
        17..=19 => call(R_FREE, (tag - 16) as u8, d, st, tid),
        _ => None,
    }
}

/// Decodes the record at the start of `d` for thread `tid`, whose delta
/// bases are `st`. Stack frames are kept only with `keep`. `Err(true)` at
/// the END record or where the bytes end inside a record, `Err(false)` on
/// an unknown record.
fn decode(d: &mut Dec, st: &mut ThreadState, tid: u32, keep: bool) -> Result<Rec, bool> {
    let key = d.uv().ok_or(true)?;
    let rec = match key {
        R_THREAD => (|| {
            Some(Rec::Thread {
                tid: d.uv()? as u32,
                os: d.uv()? as u32,
            })
        })(),
        R_STACK => (|| {
            let id = d.uv()?;
            let n = d.uv()?;
            let mut frames = Vec::with_capacity(if keep { n.min(64) as usize } else { 0 });
            for _ in 0..n.min(1 << 10) {
                let f = d.uv()?;
                if keep {
                    frames.push(f);
                }
            }
            Some(Rec::Stack { id, frames })
        })(),
        R_ALLOC | R_FREE | R_REALLOC => (|| {
            let kind = if key == R_REALLOC { 3 } else { d.u8()? };
            call(key, kind, d, st, tid)
        })(),
        R_RSS => (|| Some(Rec::Rss(d.uv()?, d.uv()?)))(),
        R_REGION => (|| {
            st.tsc = st.tsc.wrapping_add(d.sv()? as u64);
            Some(Rec::Region(st.tsc, d.u8()? != 0))
        })(),
        R_MAP => (|| {
            let start = d.uv()?;
            let len = d.uv()?;
            let offset = d.uv()?;
            let perms = d.u8()?;
            let path = d.str()?;
            Some(Rec::Map(Mapping {
                start,
                len,
                offset,
                perms: (perms & 4 != 0, perms & 2 != 0, perms & 1 != 0),
                path,
            }))
        })(),
        R_FOOTER => (|| {
            let f = (d.uv()?, d.uv()?, d.uv()?, d.uv()?);
            Some(Rec::Footer(f.0, f.1))
        })(),
        R_END => return Err(true),
        _ => return Err(false),
    };
    rec.ok_or(true)
}

/// Decodes an ALLOC, FREE or REALLOC record after its key and kind.
fn call(key: u64, kind: u8, d: &mut Dec, st: &mut ThreadState, tid: u32) -> Option<Rec> {
    use crate::trace::record::{AllocKind, FreeKind};
    st.tsc = st.tsc.wrapping_add(d.sv()? as u64);
    let dur = d.uv()?;
    let addr = st.addr.wrapping_add(d.sv()? as u64);
    let (op, size, slack, old, stack, addr) = match key {
        R_FREE => {
            st.addr = addr;
            let k = match kind {
                2 => FreeKind::Delete,
                3 => FreeKind::DeleteArray,
                _ => FreeKind::Free,
            };
            (HeapOp::Free(k), 0, 0, None, 0, addr)
        }
        R_REALLOC => {
            let returned = d.uv()? != 0;
            let od = d.sv()? as u64;
            let (new, old) = if returned {
                st.addr = addr;
                (addr, addr.wrapping_add(od))
            } else {
                (0, od)
            };
            let size = d.uv()?;
            let slack = d.uv()?;
            let stack = d.uv()?;
            (
                HeapOp::Alloc(AllocKind::Realloc),
                size,
                slack,
                Some(old),
                stack,
                new,
            )
        }
        _ => {
            st.addr = addr;
            let size = d.uv()?;
            let slack = d.uv()?;
            let stack = d.uv()?;
            let k = AllocKind::from_byte(kind).unwrap_or(AllocKind::Malloc);
            (HeapOp::Alloc(k), size, slack, None, stack, addr)
        }
    };
    Some(Rec::Call(
        st.tsc,
        ProfileEvent {
            time_ns: 0,
            tid,
            op,
            addr,
            size,
            slack,
            old,
            stack: stack.min(u32::MAX as u64) as u32,
            dur_ns: Some(dur.min(u32::MAX as u64) as u32),
        },
    ))
}

/// A stretch of the file holding records of one thread: from a THREAD
/// record up to the next one (or the footer, or the last whole record).
#[derive(Clone, Copy, Debug)]
struct Segment {
    tid: u32,
    start: u64,
    end: u64,
    /// Version 3: the block's number of calls.
    calls: u64,
}

/// A heap profile opened for streaming: everything but the allocator
/// calls, read in a first pass, and an index of where each thread's
/// records lie, so that [`ProfileReader::for_each`] can merge the threads
/// into time order in a second pass.
///
/// Memory: the distinct stacks, the RSS samples (one per 10 ms), the
/// mappings and region marks, and 24 bytes per stretch of one thread's
/// records in the file (a stretch holds up to a 256 KiB chunk of the
/// thread's calls, about 5000 calls): never the calls themselves.
#[derive(Clone, Debug)]
pub struct ProfileReader {
    path: PathBuf,
    head: Profile,
    segments: Vec<Segment>,
    stack_ids: Vec<u32>,
    tsc0: u64,
    /// Nanoseconds per tick, times 2^32.
    ns_per_tick_fp: u64,
    version: u64,
    /// Version 3: call times are in units of 2^tick_shift ticks,
    /// durations in units of 2^dur_shift ticks.
    tick_shift: u32,
    dur_shift: u32,
}

/// Stack ids above this are taken as damage, not as ids (the profiler
/// numbers its stacks 1, 2, …).
const MAX_STACK_ID: u64 = 1 << 26;

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> ProfileError + '_ {
    move |source| ProfileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What the first pass collects besides the head.
struct Scan {
    tsc0: u64,
    mono0: u64,
    threads: HashMap<u32, ThreadState>,
    tid: u32,
    seg_start: u64,
    segments: Vec<Segment>,
    stack_ids: Vec<u32>,
    stack_index: HashMap<Vec<u64>, u32>,
    regions: Vec<(u64, RegionMark)>,
    rss: Vec<(u64, u64)>,
    last_tsc: u64,
    footer: Option<(u64, u64)>,
    /// The last CLOCK record's pair (format 7).
    clock: Option<(u64, u64)>,
    /// Where each SUMMARY record's body lies, (offset, length), in file
    /// order: one in a profile with calls, one a second or so (16 bytes
    /// each) in one without.
    summaries: Vec<(u64, u64)>,
}

impl Scan {
    fn close_segment(&mut self, at: u64) {
        if at > self.seg_start {
            self.segments.push(Segment {
                tid: self.tid,
                start: self.seg_start,
                end: at,
                calls: 0,
            });
        }
        self.seg_start = at;
    }

    /// Notes a chunk of thread `thread` (its id and OS id) whose block is
    /// bytes `at..at + len` and holds `calls` calls (0 before version 3).
    fn chunk(&mut self, p: &mut Profile, thread: (u32, u32), at: u64, len: u64, calls: u64) {
        let (tid, _) = thread;
        if !p.threads.iter().any(|t| t.0 == tid) {
            p.threads.push(thread);
        }
        self.segments.push(Segment {
            tid,
            start: at,
            end: at + len,
            calls,
        });
    }

    /// Takes in one decoded record that started at file offset `at`.
    fn take(&mut self, rec: Rec, at: u64, p: &mut Profile) {
        match rec {
            Rec::Thread { tid, os } => {
                self.close_segment(at);
                self.tid = tid;
                if !p.threads.iter().any(|t| t.0 == tid) {
                    p.threads.push((tid, os));
                }
            }
            Rec::Stack { id, frames } => {
                let next = p.stacks.len() as u32;
                let index = *self.stack_index.entry(frames.clone()).or_insert(next);
                if index == next {
                    p.stacks.push(frames);
                }
                if id < MAX_STACK_ID {
                    let id = id as usize;
                    if self.stack_ids.len() <= id {
                        self.stack_ids.resize(id + 1, 0);
                    }
                    self.stack_ids[id] = index;
                }
            }
            Rec::Call(tsc, _) => self.last_tsc = self.last_tsc.max(tsc),
            Rec::Rss(t, b) => {
                self.last_tsc = self.last_tsc.max(t);
                self.rss.push((t, b))
            }
            // `at` is the block's first byte here (see the caller).
            Rec::Chunk { tid, os, len } => self.chunk(p, (tid, os), at, len, 0),
            Rec::ZChunk {
                tid,
                os,
                calls,
                len,
            } => self.chunk(p, (tid, os), at, len, calls),
            Rec::RegionAt { tid, tsc, start } => {
                self.last_tsc = self.last_tsc.max(tsc);
                self.regions.push((
                    tsc,
                    RegionMark {
                        time_ns: 0,
                        tid,
                        start,
                    },
                ));
            }
            Rec::Region(tsc, start) => {
                self.last_tsc = self.last_tsc.max(tsc);
                self.regions.push((
                    tsc,
                    RegionMark {
                        time_ns: 0,
                        tid: self.tid,
                        start,
                    },
                ))
            }
            // Profiles without calls write the mappings again at a
            // checkpoint when they changed: each mapping is kept once.
            Rec::Map(m) => {
                if !p.maps.contains(&m) {
                    p.maps.push(m)
                }
            }
            Rec::Footer(t, m) => self.footer = Some((t, m)),
            Rec::Clock(t, m) => self.clock = Some((t, m)),
            // `at` is the body's first byte here (see the caller).
            Rec::Summary { len } => self.summaries.push((at, len)),
        }
    }
}

impl ProfileReader {
    /// Opens a heap profile written by the preload library and reads
    /// everything but its calls (one pass over the file, see the type's
    /// documentation for the memory).
    ///
    /// A profile without its footer (the program was killed or called
    /// `_exit`) is read up to its last whole record; [`Profile::complete`]
    /// is then false.
    pub fn open(path: &Path) -> Result<ProfileReader, ProfileError> {
        let mut win = Window::open(path).map_err(io_error(path))?;
        let corrupt = |offset: u64, what: &str| ProfileError::Corrupt {
            path: path.to_path_buf(),
            offset: offset as usize,
            what: what.to_string(),
        };
        let bytes = win.at(0).map_err(io_error(path))?;
        if bytes.len() < 8 || &bytes[..8] != MAGIC {
            return Err(ProfileError::NotAProfile {
                path: path.to_path_buf(),
            });
        }
        let mut d = Dec { b: bytes, pos: 8 };
        let version = d
            .uv()
            .ok_or_else(|| corrupt(8, "the header is cut short"))?;
        if !(1..=FORMAT_VERSION).contains(&version) {
            return Err(ProfileError::Version {
                path: path.to_path_buf(),
                version,
            });
        }
        let mut p = Profile::default();
        let header = (|| {
            p.pid = d.uv()?;
            p.start_us = d.uv()?;
            let tsc0 = d.uv()?;
            let mono0 = d.uv()?;
            p.depth = d.uv()?;
            let shifts = if version >= 3 {
                (d.uv()?, d.uv()?)
            } else {
                (0, 0)
            };
            if shifts.0 > 32 || shifts.1 > 32 {
                return None;
            }
            p.dur_sample = if version >= 4 { d.uv()? } else { 1 };
            if !(1..=1 << 20).contains(&p.dur_sample) {
                return None;
            }
            p.has_calls = match version {
                ..=6 => true,
                _ => match d.uv()? {
                    0 => false,
                    1 => true,
                    _ => return None,
                },
            };
            p.exe = d.str()?;
            let argc = d.uv()?;
            for _ in 0..argc.min(1 << 16) {
                p.command.push(d.str()?);
            }
            Some((tsc0, mono0, shifts))
        })();
        let (tsc0, mono0, shifts) =
            header.ok_or_else(|| corrupt(8, "the header is cut short or damaged"))?;
        let mut pos = d.pos as u64;
        let mut scan = Scan {
            tsc0,
            mono0,
            threads: HashMap::new(),
            tid: 0,
            seg_start: pos,
            segments: Vec::new(),
            stack_ids: Vec::new(),
            stack_index: HashMap::new(),
            regions: Vec::new(),
            rss: Vec::new(),
            last_tsc: tsc0,
            footer: None,
            clock: None,
            summaries: Vec::new(),
        };
        p.stacks.push(Vec::new());
        scan.stack_index.insert(Vec::new(), 0);
        if version >= 2 {
            Self::scan_v2(&mut win, pos, &mut scan, &mut p).map_err(|e| match e {
                Ok(at) => corrupt(at, "unknown record"),
                Err(io) => io_error(path)(io),
            })?;
            let summaries = std::mem::take(&mut scan.summaries);
            let mut r = Self::finish(path, scan, p, version, shifts);
            r.head.summary = r.pick_summary(&win.file, &summaries);
            return Ok(r);
        }
        loop {
            let at = pos;
            let mut d = Dec {
                b: win.at(pos).map_err(io_error(path))?,
                pos: 0,
            };
            let st = scan
                .threads
                .entry(scan.tid)
                .or_insert(ThreadState { tsc: tsc0, addr: 0 });
            match decode(&mut d, st, scan.tid, true) {
                Ok(rec) => {
                    pos += d.pos as u64;
                    let footer = matches!(rec, Rec::Footer(..));
                    scan.take(rec, at, &mut p);
                    if footer {
                        scan.close_segment(at);
                        break;
                    }
                }
                Err(true) => {
                    // The END record, or cut short: keep what was read.
                    scan.close_segment(at);
                    break;
                }
                Err(false) => return Err(corrupt(at, "unknown record")),
            }
        }
        Ok(Self::finish(path, scan, p, version, shifts))
    }

    /// The first pass over a version 2 profile from `pos`: every top-level
    /// record but the CHUNK blocks, which are only indexed (skipped by
    /// their length). `Err(Ok(offset))` at an unknown record.
    fn scan_v2(
        win: &mut Window,
        mut pos: u64,
        scan: &mut Scan,
        p: &mut Profile,
    ) -> Result<(), Result<u64, std::io::Error>> {
        let file_len = win.len;
        loop {
            let at = pos;
            let mut d = Dec {
                b: win.at(pos).map_err(Err)?,
                pos: 0,
            };
            match decode_top_v2(&mut d) {
                Ok(rec) => {
                    pos += d.pos as u64;
                    match rec {
                        Rec::Chunk { len, .. } | Rec::ZChunk { len, .. } | Rec::Summary { len }
                            if pos + len > file_len =>
                        {
                            break; // cut short
                        }
                        Rec::Chunk { len, .. } | Rec::ZChunk { len, .. } | Rec::Summary { len } => {
                            scan.take(rec, pos, p);
                            pos += len;
                        }
                        Rec::Footer(..) => {
                            scan.take(rec, at, p);
                            break;
                        }
                        rec => scan.take(rec, at, p),
                    }
                }
                Err(true) => break,
                Err(false) => return Err(Ok(at)),
            }
        }
        Ok(())
    }

    /// The clock conversion, the head's times and the thread list.
    fn finish(
        path: &Path,
        scan: Scan,
        mut p: Profile,
        version: u64,
        shifts: (u64, u64),
    ) -> ProfileReader {
        // Ticks per nanosecond from the footer's clock pair, else from the
        // last CLOCK record's (format 7, about every second); without
        // either, ticks are taken as nanoseconds.
        let (tsc_end, mono_end) = scan.footer.or(scan.clock).unwrap_or((0, 0));
        let ticks_per_ns = if tsc_end > scan.tsc0 && mono_end > scan.mono0 {
            (tsc_end - scan.tsc0) as f64 / (mono_end - scan.mono0) as f64
        } else {
            1.0
        };
        let ns_per_tick_fp = ((1u64 << 32) as f64 / ticks_per_ns) as u64;
        // The same fixed-point conversion as the calls' (see `to_ns`).
        let to_ns =
            |t: u64| ((t.saturating_sub(scan.tsc0) as u128 * ns_per_tick_fp as u128) >> 32) as u64;
        p.complete = scan.footer.is_some();
        p.ticks_known = tsc_end > scan.tsc0 && mono_end > scan.mono0;
        p.regions = scan
            .regions
            .into_iter()
            .map(|(t, mut r)| {
                r.time_ns = to_ns(t);
                r
            })
            .collect();
        p.regions.sort_by_key(|r| r.time_ns);
        p.rss = scan.rss.into_iter().map(|(t, b)| (to_ns(t), b)).collect();
        p.rss.sort_by_key(|r| r.0);
        p.duration_ns = to_ns(tsc_end.max(scan.last_tsc));
        p.threads.sort();
        ProfileReader {
            path: path.to_path_buf(),
            head: p,
            segments: scan.segments,
            stack_ids: scan.stack_ids,
            tsc0: scan.tsc0,
            ns_per_tick_fp,
            version,
            tick_shift: shifts.0 as u32,
            dur_shift: shifts.1 as u32,
        }
    }

    /// The summary to count by, of the SUMMARY records whose bodies lie at
    /// `at` (offset, length), in file order. With calls: the last one, and
    /// only when the footer was read (a profile with calls holds one, at
    /// exit; else the calls are summarised by a pass). Without calls: the
    /// last whole one, footer or not: a program killed while the record was
    /// written leaves it damaged (or cut short, then not even listed), and
    /// the checkpoint before it counts. Cost: reading the bodies tried,
    /// usually one.
    fn pick_summary(
        &self,
        file: &fs::File,
        at: &[(u64, u64)],
    ) -> Option<super::heapsum::HeapSummary> {
        if self.head.has_calls {
            let &(at, len) = at.last().filter(|_| self.head.complete)?;
            return self.read_summary(file, at, len);
        }
        at.iter()
            .rev()
            .find_map(|&(at, len)| self.read_summary(file, at, len))
    }

    /// The SUMMARY record's body at `at`, parsed; `None` when it cannot be
    /// read or is damaged.
    fn read_summary(
        &self,
        file: &fs::File,
        at: u64,
        len: u64,
    ) -> Option<super::heapsum::HeapSummary> {
        use std::os::unix::fs::FileExt;
        let mut body = vec![0; usize::try_from(len).ok()?];
        file.read_exact_at(&mut body, at).ok()?;
        let cv = super::heapsum::Conversion {
            stack_ids: &self.stack_ids,
            tsc0: self.tsc0,
            ns_per_tick_fp: self.ns_per_tick_fp,
            dur_shift: self.dur_shift,
            tick_shift: self.tick_shift,
        };
        super::heapsum::parse(&body, &cv, self.version)
    }

    /// Everything the profile holds but its calls: [`Profile::events`] is
    /// empty here ([`ProfileReader::for_each`] streams them).
    pub fn head(&self) -> &Profile {
        &self.head
    }

    /// The file read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Calls `f` with every allocator call in time order across threads
    /// (calls with the same timestamp: by thread number). One pass over
    /// the file with one cursor per thread, merged through a heap of one
    /// pending call per thread; the decoding and merging run on a thread
    /// of their own, handing `f` batches of calls through a channel of at
    /// most [`QUEUED`] batches. Memory: a 64 KiB window and a batch per
    /// thread of the profile, and the queued batches (about 1 MiB),
    /// whatever the number of calls; time O(calls · log threads).
    ///
    /// Emptied batches go back to the merging thread through a second
    /// channel and are filled again: a batch (2048 calls, about 150 KiB)
    /// is above glibc's mmap threshold, so a fresh one per batch cost an
    /// mmap, its page faults and a munmap (about 5% of the reading time).
    ///
    /// A profile recorded without its calls ([`Profile::has_calls`]) is an
    /// error ([`ProfileError::NoCalls`]), never an empty run.
    pub fn for_each(&self, mut f: impl FnMut(ProfileEvent)) -> Result<(), ProfileError> {
        if !self.head.has_calls {
            return Err(ProfileError::NoCalls {
                path: self.path.clone(),
            });
        }
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<ProfileEvent>>(QUEUED);
        let (back_tx, back_rx) = std::sync::mpsc::sync_channel::<Vec<ProfileEvent>>(QUEUED + 2);
        std::thread::scope(|scope| {
            let merger = scope.spawn(move || {
                let fresh = || {
                    back_rx
                        .try_recv()
                        .unwrap_or_else(|_| Vec::with_capacity(BATCH))
                };
                let mut batch = fresh();
                let r = self.merge(|e| {
                    batch.push(e);
                    if batch.len() == BATCH {
                        // A closed channel: the consumer stopped, stop too.
                        let full = std::mem::replace(&mut batch, fresh());
                        let _ = tx.send(full);
                    }
                });
                if !batch.is_empty() {
                    let _ = tx.send(batch);
                }
                r
            });
            for mut batch in rx {
                batch.drain(..).for_each(&mut f);
                // A full return channel: this batch is simply dropped.
                let _ = back_tx.try_send(batch);
            }
            merger.join().unwrap_or_else(|_| {
                Err(ProfileError::Corrupt {
                    path: self.path.clone(),
                    offset: 0,
                    what: "the reader thread failed".into(),
                })
            })
        })
    }

    /// The merge of [`ProfileReader::for_each`], on the calling thread.
    fn merge(&self, mut f: impl FnMut(ProfileEvent)) -> Result<(), ProfileError> {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut cursors = self.cursors()?;
        let mut pending: Vec<Option<ProfileEvent>> = vec![None; cursors.len()];
        let mut heap = BinaryHeap::with_capacity(cursors.len());
        for (i, c) in cursors.iter_mut().enumerate() {
            if let Some((t, e)) = c.next(self)? {
                heap.push(Reverse((t, i)));
                pending[i] = Some(e);
            }
        }
        while let Some(Reverse((t, i))) = heap.pop() {
            let mut e = pending[i].take().expect("a pending call per queued cursor");
            e.time_ns = self.to_ns(t);
            f(e);
            // The calls of this thread before the next thread's: without
            // going through the heap (threads often run for a time slice).
            let limit = heap.peek().map(|r| r.0);
            if let Some((t, e)) = cursors[i].run_until(self, i, limit, &mut f)? {
                heap.push(Reverse((t, i)));
                pending[i] = Some(e);
            }
        }
        Ok(())
    }

    /// Ticks since the start as nanoseconds: a 32.32 fixed-point multiply
    /// (no division per call).
    #[inline]
    fn to_ns(&self, tsc: u64) -> u64 {
        self.ticks_as_ns(tsc.saturating_sub(self.tsc0))
    }

    #[inline]
    fn ticks_as_ns(&self, ticks: u64) -> u64 {
        ((ticks as u128 * self.ns_per_tick_fp as u128) >> 32).min(u64::MAX as u128) as u64
    }

    /// One cursor per thread over its segments, in thread order.
    fn cursors(&self) -> Result<Vec<Cursor>, ProfileError> {
        let mut by_tid: Vec<(u32, Vec<Segment>)> = Vec::new();
        let mut slot: HashMap<u32, usize> = HashMap::new();
        for s in &self.segments {
            let i = *slot.entry(s.tid).or_insert_with(|| {
                by_tid.push((s.tid, Vec::new()));
                by_tid.len() - 1
            });
            by_tid[i].1.push(*s);
        }
        by_tid.sort_by_key(|t| t.0);
        by_tid
            .into_iter()
            .map(|(tid, segs)| {
                Ok(Cursor {
                    tid,
                    pos: segs.first().map_or(0, |s| s.start),
                    segs,
                    seg: 0,
                    buf: Vec::with_capacity(BATCH),
                    head: 0,
                    st: ThreadState {
                        tsc: self.tsc0,
                        addr: 0,
                    },
                    win: Window::open(&self.path).map_err(io_error(&self.path))?,
                    v3: (self.version >= 3).then(|| {
                        Box::new(V3Cursor {
                            dec: super::callblocks::ThreadDecoder::new(
                                self.tsc0 >> self.tick_shift,
                            ),
                            packed: Vec::new(),
                            block: super::callblocks::Block::for_version(self.version),
                        })
                    }),
                })
            })
            .collect()
    }
}

/// Calls a [`Cursor`] decodes at once, and calls per batch handed from the
/// merging thread to the consumer.
const BATCH: usize = 2048;
/// Batches queued between the merging thread and the consumer.
const QUEUED: usize = 8;

/// One thread's records, read segment after segment, decoded in batches.
struct Cursor {
    tid: u32,
    segs: Vec<Segment>,
    seg: usize,
    pos: u64,
    st: ThreadState,
    win: Window,
    /// Decoded calls not yet taken, from `head` on.
    buf: Vec<(u64, ProfileEvent)>,
    head: usize,
    /// Version 3: the decoder and the current block.
    v3: Option<Box<V3Cursor>>,
}

/// A version 3 call as an event of thread `tid` (stack id and duration
/// still raw); `None` for an unknown kind.
#[inline]
fn v3_event(c: super::callblocks::Call, tid: u32) -> Option<(u64, ProfileEvent)> {
    use crate::trace::record::{AllocKind, FreeKind};
    let op = match c.kind {
        17 => HeapOp::Free(FreeKind::Free),
        18 => HeapOp::Free(FreeKind::Delete),
        19 => HeapOp::Free(FreeKind::DeleteArray),
        k => HeapOp::Alloc(AllocKind::from_byte(k)?),
    };
    Some((
        c.tsc,
        ProfileEvent {
            time_ns: 0,
            tid,
            op,
            addr: c.addr,
            size: c.size,
            slack: c.slack,
            old: c.old,
            stack: c.stack,
            dur_ns: c.dur.map(|d| d.min(u32::MAX as u64) as u32),
        },
    ))
}

/// A version 3 cursor's state: the thread's decoder, the compressed and
/// decompressed current block, and the position in it.
struct V3Cursor {
    dec: super::callblocks::ThreadDecoder,
    packed: Vec<u8>,
    block: super::callblocks::Block,
}

impl Cursor {
    /// The thread's next call (timestamp in ticks, stack mapped to the
    /// profile's index, duration in nanoseconds), or `None` after its last.
    #[inline]
    fn next(&mut self, r: &ProfileReader) -> Result<Option<(u64, ProfileEvent)>, ProfileError> {
        if self.head == self.buf.len() && !self.refill(r)? {
            return Ok(None);
        }
        self.head += 1;
        Ok(Some(self.buf[self.head - 1].clone()))
    }

    /// Decodes the thread's next calls into the buffer once it is used up;
    /// returns false when the thread has no more.
    fn refill(&mut self, r: &ProfileReader) -> Result<bool, ProfileError> {
        if self.v3.is_some() {
            self.fill_v3(r)?;
        } else {
            self.fill(r)?;
        }
        Ok(!self.buf.is_empty())
    }

    /// Hands `f` this cursor's calls, in order, while they come before
    /// `limit` (the next other cursor's (timestamp, index); `None`: no
    /// other cursor), this cursor being number `i`; returns the first call
    /// not handed, or `None` when the cursor is exhausted. Works over the
    /// decoded buffer directly: the merge's common case, one thread's run
    /// of calls between two of another's, costs a compare and a copy per
    /// call.
    fn run_until(
        &mut self,
        r: &ProfileReader,
        i: usize,
        limit: Option<(u64, usize)>,
        f: &mut impl FnMut(ProfileEvent),
    ) -> Result<Option<(u64, ProfileEvent)>, ProfileError> {
        loop {
            if self.head == self.buf.len() && !self.refill(r)? {
                return Ok(None);
            }
            for k in self.head..self.buf.len() {
                let (t, e) = &self.buf[k];
                if limit.is_some_and(|l| (*t, i) > l) {
                    self.head = k + 1;
                    return Ok(Some((*t, e.clone())));
                }
                let mut e = e.clone();
                e.time_ns = r.to_ns(*t);
                f(e);
            }
            self.head = self.buf.len();
        }
    }

    #[inline]
    fn push(&mut self, r: &ProfileReader, tsc: u64, mut e: ProfileEvent) {
        e.stack = r.stack_ids.get(e.stack as usize).copied().unwrap_or(0);
        e.dur_ns = e
            .dur_ns
            .map(|d| r.ticks_as_ns(d as u64).min(u32::MAX as u64) as u32);
        self.buf.push((tsc, e));
    }

    fn damaged(r: &ProfileReader, offset: u64, what: String) -> ProfileError {
        ProfileError::Corrupt {
            path: r.path.clone(),
            offset: offset as usize,
            what,
        }
    }

    /// Version 3: decodes up to [`BATCH`] calls into `buf`, reading and
    /// decompressing the thread's next block when the current one is done.
    fn fill_v3(&mut self, r: &ProfileReader) -> Result<(), ProfileError> {
        self.buf.clear();
        self.head = 0;
        let mut v = self.v3.take().expect("a version 3 cursor");
        let res = self.fill_v3_with(r, &mut v);
        self.v3 = Some(v);
        res
    }

    fn fill_v3_with(&mut self, r: &ProfileReader, v: &mut V3Cursor) -> Result<(), ProfileError> {
        while self.buf.len() < BATCH {
            if v.block.left == 0 {
                let Some(&s) = self.segs.get(self.seg) else {
                    break;
                };
                self.seg += 1;
                v.packed.resize((s.end - s.start) as usize, 0);
                use std::os::unix::fs::FileExt;
                self.win
                    .file
                    .read_exact_at(&mut v.packed, s.start)
                    .map_err(io_error(&r.path))?;
                v.block
                    .unpack(&v.packed, s.calls)
                    .map_err(|w| Self::damaged(r, s.start, w))?;
                self.pos = s.start;
                continue;
            }
            let all_timed = r.version < 4;
            let call = v
                .dec
                .call(&mut v.block, r.tick_shift, r.dur_shift, all_timed);
            match call.and_then(|c| v3_event(c, self.tid)) {
                Some((tsc, e)) => self.push(r, tsc, e),
                None => {
                    return Err(Self::damaged(
                        r,
                        self.pos,
                        format!(
                            "call {} of this block is damaged",
                            v.block.calls - v.block.left
                        ),
                    ))
                }
            }
        }
        Ok(())
    }

    /// Decodes up to [`BATCH`] calls into `buf` (versions 1 and 2).
    fn fill(&mut self, r: &ProfileReader) -> Result<(), ProfileError> {
        self.buf.clear();
        self.head = 0;
        while self.buf.len() < BATCH {
            let Some(&Segment { start, end, .. }) = self.segs.get(self.seg) else {
                break;
            };
            if self.pos < start {
                self.pos = start;
            }
            if self.pos >= end {
                self.seg += 1;
                continue;
            }
            let at = self.pos;
            let file_len = self.win.len;
            let bytes = self.win.at(at).map_err(io_error(&r.path))?;
            let avail = (end - at).min(bytes.len() as u64) as usize;
            // A record starting before `safe` lies whole in `bytes` (the
            // window holds at least REC_MAX bytes from `at`, or up to the
            // end of the file).
            let safe = if at + bytes.len() as u64 == file_len {
                bytes.len()
            } else {
                bytes.len().saturating_sub(REC_MAX / 2).max(1)
            };
            let mut d = Dec { b: bytes, pos: 0 };
            let mut calls = Vec::new();
            while d.pos < avail && d.pos < safe && self.buf.len() + calls.len() < BATCH {
                let rec_at = d.pos;
                let rec = if r.version >= 2 {
                    decode_v2_call(&mut d, &mut self.st, self.tid).ok_or(false)
                } else {
                    decode(&mut d, &mut self.st, self.tid, false)
                };
                match rec {
                    Ok(Rec::Call(tsc, e)) => calls.push((tsc, e)),
                    Ok(_) => {}
                    Err(_) => {
                        return Err(Self::damaged(
                            r,
                            at + rec_at as u64,
                            "a call record is damaged, or the file changed while it was read"
                                .into(),
                        ))
                    }
                }
            }
            self.pos = at + d.pos as u64;
            for (tsc, e) in calls {
                self.push(r, tsc, e);
            }
        }
        Ok(())
    }
}

/// Reads a whole heap profile, calls included, into memory (about 56
/// bytes per call): for small profiles and tests. Large profiles are
/// streamed with [`ProfileReader`]. A profile without calls is an error
/// (see [`ProfileReader::for_each`]).
pub fn read_profile(path: &Path) -> Result<Profile, ProfileError> {
    let r = ProfileReader::open(path)?;
    let mut p = r.head().clone();
    r.for_each(|e| p.events.push(e))?;
    Ok(p)
}

/// Installs the embedded preload library into the cache folder (once per
/// build) and returns its path. Cheap when already installed.
pub fn install_preload() -> Result<PathBuf, RunError> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    PRELOAD.hash(&mut h);
    let dir = cache_root().join(format!("heap-profiler-{:016x}", h.finish()));
    fs::create_dir_all(&dir).map_err(|source| RunError::Io {
        what: "could not create the folder",
        path: dir.clone(),
        source,
    })?;
    let lib = dir.join("libmv_heap.so");
    write_atomically(&lib, PRELOAD, 0o755)?;
    Ok(lib)
}

/// How [`run_profiled_with`] records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProfileOptions {
    /// Time every call (exact durations; each call then takes a second
    /// `rdtsc`, about 20 ns on a virtual machine) rather than a
    /// pseudo-random one in about 64 per thread (`MAPVIS_HEAP_TIME`).
    pub time_every_call: bool,
    /// Write every call (ZCHUNK blocks, about 1.6 bytes a call) besides
    /// the summary (`MAPVIS_HEAP_CALLS=1`): what the per-block lifetimes
    /// need, and a check of the summary by a pass over them. Without, the
    /// profile holds only the summary (kilobytes, whatever the number of
    /// calls).
    pub calls: bool,
}

/// Runs `exe args` natively with the heap profiler preloaded, writing the
/// profile to `out`. The program's stdin, stdout and stderr pass through;
/// returns how it ended. The program is started with an argument list,
/// never through a shell. Call durations are sampled (about one call in
/// 64 per thread is timed), and the calls are written besides the summary
/// (so that a reader can compare the two, or read the calls: see
/// [`run_profiled_with`] for the other choices).
pub fn run_profiled(exe: &Path, args: &[String], out: &Path) -> Result<RunOutcome, RunError> {
    let options = ProfileOptions {
        time_every_call: false,
        calls: true,
    };
    run_profiled_with(exe, args, out, options)
}

/// [`run_profiled`] with `options` (see [`ProfileOptions`]).
pub fn run_profiled_with(
    exe: &Path,
    args: &[String],
    out: &Path,
    options: ProfileOptions,
) -> Result<RunOutcome, RunError> {
    crate::trace::record::check_executable(exe)?;
    let lib = install_preload()?;
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        crate::workdir::create_dir(parent)?;
    }
    // The preload library creates the profile as a new file (O_EXCL): a
    // stale profile, or a link in its place, is removed first, never
    // followed.
    crate::workdir::remove_file(out)?;
    let mut preload = lib.display().to_string();
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        preload = format!("{preload}:{}", old.to_string_lossy());
    }
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env("LD_PRELOAD", preload)
        .env("MAPVIS_HEAP_OUT", out)
        .env(
            "MAPVIS_HEAP_TIME",
            if options.time_every_call {
                "all"
            } else {
                "sample"
            },
        )
        .env("MAPVIS_HEAP_CALLS", if options.calls { "1" } else { "0" })
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());
    // The program never outlives mapvis.
    crate::trace::record::end_with_parent(&mut cmd);
    let status = cmd.status().map_err(|source| RunError::Io {
        what: "could not start",
        path: exe.to_path_buf(),
        source,
    })?;
    Ok(RunOutcome::from_status(status, out.to_path_buf()))
}
