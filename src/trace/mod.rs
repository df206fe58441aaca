//! The tracing stage: the Valgrind tool (C, built by `build.rs`), running it,
//! the binary trace format and its reader, importers and symbolization.

pub mod dwarf;
