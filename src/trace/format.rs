//! The events of a mapvis trace, as the reader hands them to the analysis.
//!
//! The byte-level format is documented in `docs/trace-format.md`; the writer
//! is `src/trace/tool/mv_main.c`. The constants here must stay in step with
//! that file: [`FORMAT_VERSION`] is incremented on every incompatible change.

/// The first eight bytes of every binary trace.
pub const MAGIC: &[u8; 8] = b"MVTRACE\n";
/// The format version the tool writes; the reader also reads version 1.
pub const FORMAT_VERSION: u64 = 2;

pub(crate) const REC_SITE: u64 = 1;
pub(crate) const REC_THREAD: u64 = 2;
pub(crate) const REC_SP: u64 = 3;
pub(crate) const REC_ALLOC: u64 = 4;
pub(crate) const REC_FREE: u64 = 5;
pub(crate) const REC_MAP: u64 = 6;
pub(crate) const REC_UNMAP: u64 = 7;
pub(crate) const REC_THREAD_CREATE: u64 = 8;
pub(crate) const REC_THREAD_EXIT: u64 = 9;
pub(crate) const REC_REGION_START: u64 = 10;
pub(crate) const REC_REGION_STOP: u64 = 11;
pub(crate) const REC_WARNING: u64 = 12;
pub(crate) const REC_FOOTER: u64 = 13;
pub(crate) const REC_FP: u64 = 14;
pub(crate) const REC_EXIT: u64 = 15;
pub(crate) const REC_END: u64 = 0;
/// The last bytes of a complete trace: the END record and its text.
pub const END_MARKER: &[u8; 7] = b"\0MVEND\n";
pub(crate) const REC_SYNC: u64 = 16;
pub(crate) const REC_ICOUNT: u64 = 17;
/// Keys below this are control records (0..31 since version 2).
pub(crate) const KEY_ACCESS_BASE: u64 = 32;
/// The first access key of a version 1 trace (control records 0..15),
/// which this reader still reads.
pub(crate) const KEY_ACCESS_BASE_V1: u64 = 16;
/// Set in an ALLOC record's kind byte: a block inherited at fork().
pub(crate) const ALLOC_INHERITED: u8 = 0x80;

/// What an access did to memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// The instruction read the location.
    Load,
    /// The instruction wrote the location.
    Store,
    /// One instruction read and wrote the same location with the same size
    /// (`i++`, `a[i] += x`), as Lackey and Gleipnir report it.
    Modify,
}

impl Op {
    /// The one-letter code used in traces, tables and files: `L`, `S` or `M`.
    pub fn code(self) -> u8 {
        match self {
            Op::Load => b'L',
            Op::Store => b'S',
            Op::Modify => b'M',
        }
    }

    /// Parses a one-letter code.
    pub fn from_code(c: u8) -> Option<Op> {
        match c {
            b'L' => Some(Op::Load),
            b'S' => Some(Op::Store),
            b'M' => Some(Op::Modify),
            _ => None,
        }
    }

    /// Bytes this access reads (a modify counts in both directions).
    pub fn load_bytes(self, size: u32) -> u64 {
        match self {
            Op::Store => 0,
            _ => size as u64,
        }
    }

    /// Bytes this access writes (a modify counts in both directions).
    pub fn store_bytes(self, size: u32) -> u64 {
        match self {
            Op::Load => 0,
            _ => size as u64,
        }
    }
}

/// One memory access made inside a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// Load, store or modify.
    pub op: Op,
    /// Bytes accessed; SIMD accesses keep their real width.
    pub size: u32,
    /// Runtime address of the first byte.
    pub addr: u64,
    /// Valgrind thread id (1 is the main thread).
    pub tid: u32,
    /// Runtime address of the instruction that made the access.
    pub ip: u64,
    /// Stack pointer of the thread before that instruction executed.
    pub sp: u64,
    /// Frame pointer (rbp) of the thread before that instruction executed.
    pub fp: u64,
    /// Number of the region (1-based) the access belongs to.
    pub region: u32,
    /// The trace's id of the instruction site (one per instruction, access
    /// kind and size): stable for the whole trace, so consumers can cache
    /// per site. Imported traces without sites use 0.
    pub site: u32,
}

/// How a heap block came to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AllocKind {
    /// `malloc`.
    Malloc,
    /// `calloc`.
    Calloc,
    /// `realloc`; [`AllocEvent::old_addr`] names the block it replaced.
    Realloc,
    /// `memalign`, `posix_memalign`, `aligned_alloc` or `valloc`.
    Memalign,
    /// C++ `new`.
    New,
    /// C++ `new[]`.
    NewArray,
}

impl AllocKind {
    pub(crate) fn from_byte(b: u8) -> Option<AllocKind> {
        Some(match b {
            1 => AllocKind::Malloc,
            2 => AllocKind::Calloc,
            3 => AllocKind::Realloc,
            4 => AllocKind::Memalign,
            5 => AllocKind::New,
            6 => AllocKind::NewArray,
            _ => return None,
        })
    }

    /// The C or C++ name of the allocator.
    pub fn name(self) -> &'static str {
        match self {
            AllocKind::Malloc => "malloc",
            AllocKind::Calloc => "calloc",
            AllocKind::Realloc => "realloc",
            AllocKind::Memalign => "memalign",
            AllocKind::New => "new",
            AllocKind::NewArray => "new[]",
        }
    }
}

/// A heap block was allocated (or moved by realloc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocEvent {
    /// Which allocator.
    pub kind: AllocKind,
    /// Thread that allocated.
    pub tid: u32,
    /// Runtime start address of the new block.
    pub addr: u64,
    /// Requested size in bytes.
    pub size: u64,
    /// For realloc of an existing block: its old address (now freed).
    pub old_addr: Option<u64>,
    /// Return addresses, innermost first: `stack[0]` is in the caller of
    /// the allocator. Subtract 1 before resolving a return address to a line.
    pub stack: Vec<u64>,
    /// Number of accesses recorded before this event (its place in time).
    pub time: u64,
    /// The block was live when this process was forked: the trace of a
    /// forked child restates the blocks it inherited before its own
    /// events. Such a record is state, not an allocation the process made.
    pub inherited: bool,
}

/// How a heap block was released.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FreeKind {
    /// `free`.
    Free,
    /// C++ `delete`.
    Delete,
    /// C++ `delete[]`.
    DeleteArray,
}

/// A heap block was freed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FreeEvent {
    /// Which deallocator.
    pub kind: FreeKind,
    /// Thread that freed.
    pub tid: u32,
    /// Start address of the freed block.
    pub addr: u64,
    /// Return addresses, innermost first.
    pub stack: Vec<u64>,
    /// Number of accesses recorded before this event.
    pub time: u64,
}

/// What a thread did to synchronise, or to a synchronisation object
/// (recorded with the tool's `--sync-events=yes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SyncKind {
    /// The thread created thread [`SyncEvent::obj`] (pthread_create).
    Fork,
    /// The thread joined thread [`SyncEvent::obj`] (pthread_join returned;
    /// 0 when the joined thread was not known).
    Join,
    /// The thread exited, or was still running when the program ended.
    Exit,
    /// The thread acquired the mutex at address [`SyncEvent::obj`].
    Acquire,
    /// The thread is about to release the mutex at [`SyncEvent::obj`].
    Release,
    /// A mutex was initialised (pthread_mutex_init) at [`SyncEvent::obj`].
    NewSync,
    /// A mutex was destroyed (pthread_mutex_destroy) at [`SyncEvent::obj`].
    DelSync,
}

impl SyncKind {
    pub(crate) fn from_byte(b: u8) -> Option<SyncKind> {
        Some(match b {
            1 => SyncKind::Fork,
            2 => SyncKind::Join,
            3 => SyncKind::Exit,
            4 => SyncKind::Acquire,
            5 => SyncKind::Release,
            6 => SyncKind::NewSync,
            7 => SyncKind::DelSync,
            _ => return None,
        })
    }
}

/// A thread or mutex operation, with the thread's instruction count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncEvent {
    /// What happened.
    pub kind: SyncKind,
    /// The thread that did it (Valgrind thread id, 1 is the main thread).
    pub tid: u32,
    /// Instructions the thread had executed when it happened.
    pub icount: u64,
    /// The other thread's id (fork, join), the mutex's address (acquire,
    /// release, new, delete), or 0 (exit).
    pub obj: u64,
    /// Number of accesses recorded before this event.
    pub time: u64,
}

/// A file mapped into the program's address space (executable, shared
/// objects, including those loaded with dlopen).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// Runtime start address.
    pub start: u64,
    /// Length in bytes.
    pub len: u64,
    /// Offset in the file of the first mapped byte.
    pub offset: u64,
    /// Readable, writable, executable.
    pub perms: (bool, bool, bool),
    /// Path of the mapped file.
    pub path: String,
}

/// A GL_START was executed: region `id` begins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionStart {
    /// 1-based region number.
    pub id: u32,
    /// Thread that executed GL_START.
    pub tid: u32,
    /// Address of the client-request argument block on the stack.
    pub arg_block: u64,
    /// Call stack at GL_START as (instruction, stack pointer, frame
    /// pointer), innermost first; lets stack accesses of callers be named.
    pub frames: Vec<(u64, u64, u64)>,
    /// Number of accesses recorded before this event.
    pub time: u64,
}

/// A GL_STOP was executed: region `id` ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionStop {
    /// 1-based region number.
    pub id: u32,
    /// Thread that executed GL_STOP.
    pub tid: u32,
    /// Address of the client-request argument block on the stack.
    pub arg_block: u64,
    /// Number of accesses recorded before this event.
    pub time: u64,
}

/// Something the tool noticed and reported in the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarningKind {
    /// GL_START while a region was open.
    NestedStart,
    /// GL_STOP with no open region.
    StopWithoutStart,
    /// The program ended inside a region.
    OpenAtExit,
    /// free() of something that is not a live block.
    BadFree,
    /// This process was forked: its trace restates what it inherited
    /// (mappings, sites, live blocks, the open region) and then holds only
    /// its own events.
    Forked,
    /// A code this reader does not know.
    Other(u64),
}

/// The trace's closing record, written when the program ends (normally or
/// by a signal that Valgrind could handle).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footer {
    /// Accesses the tool recorded.
    pub accesses: u64,
    /// Regions opened.
    pub regions: u64,
    /// Allocation events.
    pub allocs: u64,
    /// Free events.
    pub frees: u64,
    /// Distinct access sites.
    pub sites: u64,
    /// Exit code Valgrind reported to the tool.
    pub exit_code: i64,
}

/// How the traced program ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// It exited with this status.
    Code(i32),
    /// This signal ended it (11 is SIGSEGV, 2 is SIGINT).
    Signal(i32),
}

/// The trace header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format version of the file.
    pub version: u64,
    /// Process id of the traced program.
    pub pid: u64,
    /// Start time, microseconds since the Unix epoch.
    pub timestamp_us: u64,
    /// Version of the Valgrind the tool was built against.
    pub valgrind_version: String,
    /// `--stack-depth` used for heap events.
    pub stack_depth: u64,
    /// Whether only accesses inside heap blocks were kept.
    pub heap_only: bool,
    /// Whether thread and mutex operations and instruction counts were
    /// recorded (`--sync-events=yes`).
    pub sync_events: bool,
    /// The traced command line, program first.
    pub command: Vec<String>,
}

/// One decoded trace event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A memory access inside a region.
    Access(Access),
    /// A heap allocation (or realloc).
    Alloc(AllocEvent),
    /// A heap free.
    Free(FreeEvent),
    /// A file mapping.
    Map(Mapping),
    /// An unmapping.
    Unmap {
        /// Start address.
        start: u64,
        /// Length in bytes.
        len: u64,
    },
    /// Thread `child` was created by `parent`.
    ThreadCreate {
        /// Creating thread.
        parent: u32,
        /// New thread.
        child: u32,
    },
    /// Thread `tid` exited.
    ThreadExit {
        /// The thread.
        tid: u32,
    },
    /// A thread or mutex operation (traces recorded with sync events).
    Sync(SyncEvent),
    /// The instruction count of thread `tid` at the heap event that
    /// follows (traces recorded with sync events).
    InstrCount {
        /// The thread.
        tid: u32,
        /// Instructions it had executed.
        icount: u64,
    },
    /// A region began.
    RegionStart(RegionStart),
    /// A region ended.
    RegionStop(RegionStop),
    /// The tool reported a problem.
    Warning {
        /// What kind.
        kind: WarningKind,
        /// The tool's words.
        text: String,
    },
    /// The closing record.
    Footer(Footer),
    /// How the program ended, as the process that ran Valgrind saw it.
    Exit(ExitStatus),
}
