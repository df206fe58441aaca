//! mapvis: see how a C program touches memory.
//!
//! The crate is a pipeline with one module per stage, and data flows one way:
//!
//! * [`trace`]: runs the program under our Valgrind tool, reads the binary trace
//!   (or imports a Gleipnir text trace), and symbolizes addresses.
//! * [`filter`]: turns trace events into named accesses, the lookup table, the
//!   access list and statistics, as polars tables.
//! * [`vis`]: draws plotly figures from those tables into self-contained HTML.
//! * [`shell`]: the Tcl shell and its commands; it only orchestrates the stages.
//! * [`workdir`]: the working folder's layout and its saved runs, its lock,
//!   the manifest of the files mapvis wrote, and files written whole or not
//!   at all.
//! * [`oom`]: a sentence naming the step when mapvis runs out of memory, and
//!   the allocator's policy of keeping freed memory.
//! * [`cancel`]: the one flag that cancels the running command (Ctrl-C),
//!   which the shell sets and every stage's long loops poll.
//!
//! `unsafe` code is denied everywhere but in three modules, each of which
//! allows it and states its invariants in its header: `shell::tcl` (the
//! Tcl C library), `trace::record::ffi` (a child's system calls between
//! `fork` and `exec`) and `oom` (the global allocator and its SIGABRT
//! action).
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod cancel;
pub mod filter;
pub mod oom;
pub mod shell;
pub mod trace;
pub mod vis;
pub mod workdir;
