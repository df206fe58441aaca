//! Recording: making a trace of a program and reading it back.
//!
//! The room holds the Valgrind tool (`tool/`: `mv_main.c` writes the
//! trace, `mv_pthread.c` wraps the thread calls, `mv_format.h` numbers the
//! format for the tool and the reader alike; built by `build.rs`), running
//! it and Valgrind's own tools (`run.rs`, `grind.rs`, `sync.rs`, and
//! `ffi.rs` for the child process), the trace format and its numbers
//! (`format.rs`, `varint.rs`), the streaming reader (`reader.rs`), the
//! text dump (`dump.rs`), the pins' own accesses (`pins.rs`), what the
//! tool is told of a region by code (`region.rs`, `tool/mv_region.c`), the
//! Gleipnir importer (`gleipnir.rs`) and compiling a C program with the
//! pins header (`compile.rs`): everything that makes or reads events, and
//! nothing that names them.
//!
//! Files placed by their callers:
//! - `pins.rs` says which traced accesses the pins make themselves; it
//!   reads only the format's events, and every reader of a trace (the
//!   analysis, the exports, DWARF naming's client-request locals) asks it,
//!   so it sits with the format.
//! - `varint.rs` is the number encoding of both the trace and the heap
//!   profile; the trace's reader is its first user, and the heap profiler
//!   reads it through this facade.
//! - `ffi.rs` is the one `unsafe` system call of a child process (ended
//!   with its parent); the runs here and the heap profiler's run use it.
//! - `gleipnir.rs` reads another tool's traces into the same events; it
//!   borrows naming's `Scope` for the scope the text trace carries.
//!
//! This facade is the room's face: the other stages and the other rooms
//! name `crate::trace::record::Name`, never a file of the room. Items
//! only the heap profiler needs are `pub(crate)`.

mod compile;
mod dump;
mod ffi;
mod format;
mod gleipnir;
mod grind;
mod pins;
mod reader;
mod region;
mod run;
mod sync;
mod varint;

pub use compile::{
    compile_c, install_pins_header, CompileError, CompileRequest, PINS_FILE, PINS_HEADER,
};
pub use dump::{dump, DumpError};
pub use format::{
    Access, AllocEvent, AllocKind, Event, ExitStatus, Footer, FreeEvent, FreeKind, Header, Mapping,
    MmapEvent, Op, RegionStart, RegionStop, SiteId, StackAlloc, SyncEvent, SyncKind, SyncPrim,
    WarningKind,
};
pub use gleipnir::{looks_like_gleipnir, GlEvent, GlName, GlSite, GleipnirReader, ImportError};
pub use grind::{run_grind, GrindRequest, GrindRun};
pub use pins::{is_client_request_local, stop_arg_stores, Seen, StartResult, Verdict, HOLD_BACK};
pub use reader::{Batch, EndState, TraceError, TraceReader};
pub use region::{Calls, CodeRange, CodeRegion, RangeKind, Window};
pub use run::{
    check_executable, check_trace, check_valgrind, debug_warning, find_valgrind, install_tool,
    run_trace, run_trace_into, signal_name, RunError, RunOutcome, TraceCheck, TraceRequest,
    TracedRun, TOOL_NAME,
};
pub use sync::{
    default_scope as default_sync_scope, has_pins, request as sync_request, Scope as SyncScope,
};
pub use varint::{put_sv, put_uv};

pub(crate) use ffi::end_with_parent;
pub(crate) use run::{cache_root, write_atomically};
pub(crate) use varint::{get_uv, unzigzag};
