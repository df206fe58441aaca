//! The tracing stage: the Valgrind tool (C, built by `build.rs`), running it,
//! the binary trace format and its reader, importers and symbolization.

pub mod backtrace;
pub(crate) mod cconst;
pub mod cmacro;
pub(crate) mod csites;
pub mod csource;
pub(crate) mod csyntax;
pub(crate) mod ctype;
pub mod dump;
pub mod dwarf;
pub mod ffi;
pub mod format;
pub mod gleipnir;
pub mod grind;
pub mod heapprof;
mod heapprof3;
pub mod heapsum;
pub mod naming;
pub mod pins;
pub mod predef;
pub mod program;
pub mod reader;
pub mod run;
pub mod symbolize;
pub mod sync;
pub mod varint;
