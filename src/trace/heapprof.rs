//! The native heap profiler: running a program with mapvis's `LD_PRELOAD`
//! library (`src/trace/preload/mv_heap.c`) and reading the profile it
//! writes (format: `docs/heap-profile-format.md`).
//!
//! The library is built by `build.rs`, embedded in the mapvis binary like
//! the Valgrind tool, and installed once per build into the cache folder
//! ([`install_preload`]). [`run_profiled`] starts the program with it;
//! [`read_profile`] decodes the file into [`Profile`], whose events are in
//! time order across threads.
//!
//! Cost of reading: one pass over the file; memory about 56 bytes per
//! allocator call (the events are kept to be sorted into global time order:
//! each thread's calls arrive in order, threads' chunks interleaved).
use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::format::Mapping;
use super::run::{cache_root, write_atomically, RunError, RunOutcome};

/// The preload library, embedded at build time.
static PRELOAD: &[u8] = include_bytes!(concat!(env!("MAPVIS_TOOL_DIR"), "/libmv_heap.so"));

/// The first eight bytes of every heap profile.
pub const MAGIC: &[u8; 8] = b"MVHEAPP\n";
/// The profile format version this reader understands.
pub const FORMAT_VERSION: u64 = 1;

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
    #[error("{path} is a heap profile of format version {version}, and this mapvis reads version {FORMAT_VERSION}: record it again with this mapvis.")]
    Version {
        /// The file.
        path: PathBuf,
        /// Its version.
        version: u64,
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
    Alloc(super::format::AllocKind),
    /// A block was freed: free, delete, delete[].
    Free(super::format::FreeKind),
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
    /// Nanoseconds spent in the real allocator.
    pub dur_ns: u32,
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
        let (v, p) = super::varint::get_uv(self.b, self.pos).ok()?;
        self.pos = p;
        Some(v)
    }
    fn sv(&mut self) -> Option<i64> {
        Some(super::varint::unzigzag(self.uv()?))
    }
    fn str(&mut self) -> Option<String> {
        let n = self.uv()? as usize;
        let s = self.b.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(String::from_utf8_lossy(s).into_owned())
    }
}

/// Per-thread decoding state: the delta bases.
#[derive(Clone, Copy, Default)]
struct ThreadState {
    tsc: u64,
    addr: u64,
}

struct Decoder {
    tsc0: u64,
    mono0: u64,
    tsc_end: u64,
    threads: HashMap<u32, ThreadState>,
    tid: u32,
    raw: Vec<(u64, ProfileEvent)>,
    regions: Vec<(u64, RegionMark)>,
    rss: Vec<(u64, u64)>,
    stack_ids: HashMap<u64, u32>,
    stack_index: HashMap<Vec<u64>, u32>,
}

/// Reads a heap profile written by the preload library.
///
/// A profile without its footer (the program was killed or called
/// `_exit`) is read up to its last whole record; [`Profile::complete`] is
/// then false.
pub fn read_profile(path: &Path) -> Result<Profile, ProfileError> {
    let mut bytes = Vec::new();
    fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|source| ProfileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.len() < 8 || &bytes[..8] != MAGIC {
        return Err(ProfileError::NotAProfile {
            path: path.to_path_buf(),
        });
    }
    let mut d = Dec { b: &bytes, pos: 8 };
    let corrupt = |offset: usize, what: &str| ProfileError::Corrupt {
        path: path.to_path_buf(),
        offset,
        what: what.to_string(),
    };
    let version = d
        .uv()
        .ok_or_else(|| corrupt(8, "the header is cut short"))?;
    if version != FORMAT_VERSION {
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
        p.exe = d.str()?;
        let argc = d.uv()?;
        for _ in 0..argc.min(1 << 16) {
            p.command.push(d.str()?);
        }
        Some((tsc0, mono0))
    })();
    let (tsc0, mono0) = header.ok_or_else(|| corrupt(8, "the header is cut short"))?;
    let mut dec = Decoder {
        tsc0,
        mono0,
        tsc_end: 0,
        threads: HashMap::new(),
        tid: 0,
        raw: Vec::new(),
        regions: Vec::new(),
        rss: Vec::new(),
        stack_ids: HashMap::new(),
        stack_index: HashMap::new(),
    };
    p.stacks.push(Vec::new());
    dec.stack_index.insert(Vec::new(), 0);
    let mut mono_end = 0;
    loop {
        let at = d.pos;
        match dec.record(&mut d, &mut p) {
            Ok(Some((t, m))) => {
                dec.tsc_end = t;
                mono_end = m;
                p.complete = true;
                break;
            }
            Ok(None) => {}
            Err(true) => break, // cut short: keep what was read
            Err(false) => return Err(corrupt(at, "unknown record")),
        }
    }
    finish(dec, p, mono_end)
}

impl Decoder {
    /// Decodes one record. `Ok(Some((tsc, mono)))` at the footer,
    /// `Err(true)` at the end of the bytes, `Err(false)` on a bad record.
    fn record(&mut self, d: &mut Dec, p: &mut Profile) -> Result<Option<(u64, u64)>, bool> {
        let key = d.uv().ok_or(true)?;
        let cut = |o: Option<()>| o.ok_or(true);
        match key {
            R_THREAD => cut((|| {
                self.tid = d.uv()? as u32;
                let os = d.uv()? as u32;
                if !p.threads.iter().any(|t| t.0 == self.tid) {
                    p.threads.push((self.tid, os));
                }
                let tsc0 = self.tsc0;
                self.threads
                    .entry(self.tid)
                    .or_insert(ThreadState { tsc: tsc0, addr: 0 });
                Some(())
            })())?,
            R_STACK => cut((|| {
                let id = d.uv()?;
                let n = d.uv()?;
                let mut frames = Vec::with_capacity(n.min(64) as usize);
                for _ in 0..n.min(1 << 10) {
                    frames.push(d.uv()?);
                }
                let next = p.stacks.len() as u32;
                let index = *self.stack_index.entry(frames.clone()).or_insert(next);
                if index == next {
                    p.stacks.push(frames);
                }
                self.stack_ids.insert(id, index);
                Some(())
            })())?,
            R_ALLOC | R_FREE | R_REALLOC => cut(self.call(key, d))?,
            R_RSS => cut((|| {
                let tsc = d.uv()?;
                let bytes = d.uv()?;
                self.rss.push((tsc, bytes));
                Some(())
            })())?,
            R_REGION => cut((|| {
                let st = self.threads.entry(self.tid).or_default();
                st.tsc = st.tsc.wrapping_add(d.sv()? as u64);
                let start = d.u8()? != 0;
                let tsc = st.tsc;
                self.regions.push((
                    tsc,
                    RegionMark {
                        time_ns: 0,
                        tid: self.tid,
                        start,
                    },
                ));
                Some(())
            })())?,
            R_MAP => cut((|| {
                let start = d.uv()?;
                let len = d.uv()?;
                let offset = d.uv()?;
                let perms = d.u8()?;
                let path = d.str()?;
                p.maps.push(Mapping {
                    start,
                    len,
                    offset,
                    perms: (perms & 4 != 0, perms & 2 != 0, perms & 1 != 0),
                    path,
                });
                Some(())
            })())?,
            R_FOOTER => {
                let f = (|| Some((d.uv()?, d.uv()?, d.uv()?, d.uv()?)))().ok_or(true)?;
                return Ok(Some((f.0, f.1)));
            }
            R_END => return Err(true),
            _ => return Err(false),
        }
        Ok(None)
    }

    /// Decodes an ALLOC, FREE or REALLOC record.
    fn call(&mut self, key: u64, d: &mut Dec) -> Option<()> {
        use super::format::{AllocKind, FreeKind};
        let kind = if key == R_REALLOC { 3 } else { d.u8()? };
        let st = self.threads.entry(self.tid).or_insert(ThreadState {
            tsc: self.tsc0,
            addr: 0,
        });
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
                let old = (old != 0).then_some(old);
                (
                    HeapOp::Alloc(AllocKind::Realloc),
                    size,
                    slack,
                    Some(old.unwrap_or(0)),
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
        let tsc = st.tsc;
        let stack = self.stack_ids.get(&stack).copied().unwrap_or(0);
        self.raw.push((
            tsc,
            ProfileEvent {
                time_ns: 0,
                tid: self.tid,
                op,
                addr,
                size,
                slack,
                old,
                stack,
                dur_ns: dur.min(u32::MAX as u64) as u32,
            },
        ));
        Some(())
    }
}

/// Converts ticks to nanoseconds and sorts everything into time order.
fn finish(mut dec: Decoder, mut p: Profile, mono_end: u64) -> Result<Profile, ProfileError> {
    let last_tsc = dec.raw.iter().map(|r| r.0).max().unwrap_or(dec.tsc0);
    // Ticks per nanosecond from the footer's clock pair; without a footer,
    // assume the common 1 tick/ns scale is wrong and fall back to the RSS
    // sampling's span (10 ms apart) when there is one.
    let ticks_per_ns = if dec.tsc_end > dec.tsc0 && mono_end > dec.mono0 {
        (dec.tsc_end - dec.tsc0) as f64 / (mono_end - dec.mono0) as f64
    } else {
        1.0
    };
    let to_ns = |t: u64| (t.saturating_sub(dec.tsc0) as f64 / ticks_per_ns) as u64;
    dec.raw.sort_by_key(|r| r.0);
    p.events = dec
        .raw
        .into_iter()
        .map(|(t, mut e)| {
            e.time_ns = to_ns(t);
            e.dur_ns = (e.dur_ns as f64 / ticks_per_ns).min(u32::MAX as f64) as u32;
            e
        })
        .collect();
    p.regions = dec
        .regions
        .into_iter()
        .map(|(t, mut r)| {
            r.time_ns = to_ns(t);
            r
        })
        .collect();
    p.regions.sort_by_key(|r| r.time_ns);
    p.rss = dec.rss.into_iter().map(|(t, b)| (to_ns(t), b)).collect();
    p.rss.sort_by_key(|r| r.0);
    p.duration_ns = to_ns(dec.tsc_end.max(last_tsc));
    p.threads.sort();
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

/// Runs `exe args` natively with the heap profiler preloaded, writing the
/// profile to `out`. The program's stdin, stdout and stderr pass through;
/// returns how it ended. The program is started with an argument list,
/// never through a shell.
pub fn run_profiled(exe: &Path, args: &[String], out: &Path) -> Result<RunOutcome, RunError> {
    super::run::check_executable(exe)?;
    let lib = install_preload()?;
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|source| RunError::Io {
            what: "could not create the folder",
            path: parent.to_path_buf(),
            source,
        })?;
    }
    let _ = fs::remove_file(out);
    let mut preload = lib.display().to_string();
    if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
        preload = format!("{preload}:{}", old.to_string_lossy());
    }
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env("LD_PRELOAD", preload)
        .env("MAPVIS_HEAP_OUT", out)
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());
    // The program never outlives mapvis.
    super::ffi::end_with_parent(&mut cmd);
    let status = cmd.status().map_err(|source| RunError::Io {
        what: "could not start",
        path: exe.to_path_buf(),
        source,
    })?;
    Ok(RunOutcome::from_status(status, out.to_path_buf()))
}
