//! Naming: which variable, heap block or source line an address of a
//! traced program is.
//!
//! The room holds the interface the analysis asks (`namer.rs`: the
//! [`Namer`] trait, [`Scope`], [`VarName`], [`HeapName`]), the one
//! implementation for a real program (`program.rs` + `program/`:
//! [`ProgramNamer`]), and what it reads: the program's DWARF (`dwarf/`),
//! its line tables (`symbolize.rs`), and its C sources through a small C
//! front-end (`csyntax.rs` parsing with tree-sitter, `cmacro.rs` the
//! preprocessor's macros, `predef.rs` the compiler's own macros,
//! `ctype.rs` types, `cconst.rs` constant expressions, `csites.rs` the
//! allocation statements, `csource.rs` + `csource/` the allocation's
//! target and size). `code.rs` turns a function's name or a range of
//! source lines into the code a region by code watches, from the same
//! DWARF. Naming works offline, on a trace already made: it
//! reads the program, never runs it.
//!
//! Files placed by their callers:
//! - `backtrace.rs` turns the return addresses of a heap profile's or a
//!   trace's allocation sites into source frames; it is symbolization
//!   (addr2line over `symbolize.rs`) for the heap commands, so it sits
//!   with the symbolizer rather than with the heap profiler.
//!
//! This facade is the room's face: the other stages and the other rooms
//! name `crate::trace::naming::Name`, never a file of the room.

mod backtrace;
mod cconst;
mod cmacro;
mod code;
mod csites;
mod csource;
mod csyntax;
mod ctype;
mod dwarf;
mod namer;
mod predef;
mod program;
mod symbolize;

pub use backtrace::{BacktraceSymbolizer, Frame};
pub use code::{function_region, lines_region, CodeError};
pub use csource::{AllocTarget, ArrayDecl, CSource, Container, SizeExpr};
pub use dwarf::{DebugVars, DwarfError, ElementPath, FrameSlot, StackAccess, VarLocation};
pub use namer::{
    element_path, natural_cmp, push_element_path, HeapName, NameQuality, Namer, NullNamer,
    RegHolder, RegSource, Scope, VarName, CALLEE_SAVED,
};
pub use program::ProgramNamer;
pub use symbolize::{
    file_address, find_source, LoadSegment, SourceFinder, SourceLocation, SymbolizeError,
    Symbolizer,
};

pub(crate) use program::is_system;
