//! The tracing stage: from a program to events and names, in three rooms,
//! one per job.
//!
//! - [`record`]: the Valgrind tool (C, built by `build.rs`), running it
//!   and Valgrind's own tools, the binary trace format and its reader, the
//!   text dump, and the Gleipnir importer.
//! - [`naming`]: what an address is (a variable, a heap block, a source
//!   line), from the program's DWARF, line tables and C sources.
//! - [`heap`]: the native heap profiler (an `LD_PRELOAD` library) and its
//!   profile's reader.
//!
//! `naming/` and `heap/` use `record/` (the load map, the format's kinds,
//! running a child); `record/` takes one type of `naming/` (`Scope`, for
//! the Gleipnir importer). Each room's `mod.rs` is its facade, and its
//! files are private to it.
//!
//! This file is the stage's facade for the shell, which names
//! `crate::trace::Name` and nothing deeper (`tests/layering.rs` checks
//! it). The analysis and the figures name a room's facade,
//! `crate::trace::room::Name`.

pub mod heap;
pub mod naming;
pub mod record;

pub use heap::{run_profiled_with, ProfileError, ProfileOptions};
pub use naming::{
    function_region, lines_region, natural_cmp, BacktraceSymbolizer, CodeError, ProgramNamer,
};
pub use record::{
    check_executable, check_trace, check_valgrind, compile_c, debug_warning, default_sync_scope,
    dump, find_valgrind, install_tool, looks_like_gleipnir, run_grind, run_trace, run_trace_into,
    sync_request, Calls, CodeRegion, CompileError, CompileRequest, DumpError, GrindRequest,
    RunError, SyncScope, TraceError, TraceReader, TraceRequest, TracedRun, Window,
};
