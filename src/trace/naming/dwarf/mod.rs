//! Naming stack and global accesses offline from DWARF.
//!
//! A traced access arrives as a data address, the instruction address (ip)
//! and the stack pointer before the instruction. This module answers, from
//! the program's debug information alone, which variable and which element
//! of it the address is: `u[3][4]`, `h.nbins`, `view.data[3].z`, `garr[10]`.
//!
//! Everything is parsed once, by [`DebugVars::load`], into owned tables; the
//! queries afterwards never touch the file and never allocate except to build
//! the returned names and lists. All addresses taken and returned are *file*
//! addresses (ELF virtual addresses); the caller subtracts the load bias from
//! runtime code addresses first. Stack data addresses are absolute and need
//! no conversion: they are compared with the CFA, which is computed from the
//! runtime stack pointer.
//!
//! Stack variables are located relative to the canonical frame address (CFA),
//! the value of the stack pointer just before the call that created the
//! frame. gcc at `-O0` describes locals as `DW_OP_fbreg(n)` with the frame
//! base `DW_OP_call_frame_cfa`, so a local lives at `CFA + n`. The CFA itself
//! comes from the call frame information (`.eh_frame`, or `.debug_frame`).
//! A frame realigned for an over-aligned local (`and $-64,%rsp`) is no
//! fixed distance from its CFA: gcc and clang locate its locals from rsp
//! or rbp instead, which every traced access carries too, so a lookup
//! takes a [`Frame`] (the instruction, sp, fp and CFA) and evaluates each
//! local's location from what it is counted from.
//!
//! Optimised code (`-O1`, `-O2`) is handled gracefully: variables that live
//! in registers or in location lists have no fixed address and are simply not
//! found, so queries return `None` rather than a wrong name.
//!
//! The folder is split along the seams of the debug information: `die`
//! reads single entries; `types` is the C type model, `vars` the variables
//! with a fixed location, `functions` the functions and their locals,
//! `units` what is known per compilation unit, `cfi` the unwind table;
//! `frames` combines functions, variables and unwind rows to name stack
//! accesses, and `load` walks the file once to fill all the tables. This
//! file is the public face: [`DebugVars`] and its queries.

mod cfi;
mod code;
mod die;
mod error;
mod frames;
mod functions;
mod load;
mod types;
mod units;
mod vars;

use std::path::{Path, PathBuf};

pub use cfi::FrameSlot;
pub use code::{code_functions, line_code, merge, CodeFunction};
pub use error::DwarfError;
pub use frames::{Frame, StackAccess};
pub use functions::Function;
pub use types::TypeId;
pub use units::is_library_source;
pub use vars::{NotLocated, VarLocation, Variable};

use functions::FunctionTable;
use types::TypeTable;
use units::UnitTable;

/// A C path inside a value (`x.coefs._M_impl._M_start`, `n.next`,
/// `ps[3].y`) and where in it a library's internals begin: the first
/// member that a type declared in a system header keeps private or
/// protected (`m.table_` in Boost's unordered map is at 1). A name made
/// from a holder's path stops there; an accessed byte's name does not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ElementPath {
    /// The path, starting with the value's name.
    pub path: String,
    /// The byte offset in `path` where the internals begin.
    pub internal_at: Option<usize>,
}

impl From<&str> for ElementPath {
    /// A path with no library internals in it.
    fn from(path: &str) -> ElementPath {
        ElementPath {
            path: path.to_string(),
            internal_at: None,
        }
    }
}

/// All variables, types, functions and unwind rules of one ELF object.
///
/// Loading ([`DebugVars::load`]) reads the whole file and parses every
/// compilation unit and every FDE once, in time and memory proportional to
/// the debug information; load once per object and reuse the value for all
/// accesses. Queries are binary searches plus a scan of one function's
/// locals. The value owns all its data and is `Send + Sync`.
#[derive(Debug)]
pub struct DebugVars {
    path: PathBuf,
    types: TypeTable,
    /// Sorted by address.
    globals: Vec<Variable>,
    functions: FunctionTable,
    unwind: cfi::Unwind,
    units: UnitTable,
}

impl DebugVars {
    /// The built-in and command-line (`-D`) macros of the compilation unit
    /// of source `file` (matched by its path, or by its file name), as
    /// `NAME VALUE` texts; `None` when the program was not compiled with
    /// `-g3` (no macro information).
    pub fn command_line_macros(&self, file: &Path) -> Option<&[String]> {
        self.units.macros(file)
    }

    /// The `DW_AT_producer` of the unit compiled from `file` (matched as
    /// [`Self::command_line_macros`] matches).
    pub fn producer(&self, file: &Path) -> Option<&str> {
        self.units.producer(file)
    }

    /// The file the information was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Globals and statics (file-scope and function-scope) with a fixed
    /// address, sorted by address.
    pub fn globals(&self) -> &[Variable] {
        &self.globals
    }

    /// All functions with code, sorted by `low_pc`.
    pub fn functions(&self) -> &[Function] {
        self.functions.all()
    }

    /// All locals and parameters with a frame location declared in `function`
    /// (which must come from this `DebugVars`), whatever their scope.
    pub fn function_locals(&self, function: &Function) -> &[Variable] {
        self.functions.locals_of(function)
    }

    /// The global or static covering `file_addr`, and the byte offset of the
    /// address inside it. Zero-sized variables never match.
    pub fn global_at(&self, file_addr: u64) -> Option<(&Variable, u64)> {
        vars::global_at(&self.globals, file_addr)
    }

    /// The function whose code contains `ip` (a file address).
    pub fn function_at(&self, ip: u64) -> Option<&Function> {
        self.functions.at(ip)
    }

    /// The C element path of byte `offset` inside `var`: `u[3][4]`,
    /// `h.nbins`, `view.data[3].z`, or just the name for scalars and
    /// pointers (any byte of a scalar names the scalar). Array indices are
    /// computed even past the declared bound, since an overrun is worth
    /// seeing; the path stops at a struct when the offset falls in padding,
    /// and a union names its first member covering the offset. Allocates the
    /// returned string.
    pub fn element_name(&self, var: &Variable, offset: u64) -> String {
        self.element_and_pointee(var, offset).0.path
    }

    /// [`Self::element_name`], and when byte `offset` is in a pointer to a
    /// structure, union or class, that type's name (`pcre2_match_data_8`):
    /// the type of the block the pointer holds, as DWARF gives it.
    /// Also says where in the path a library's internals begin.
    pub fn element_and_pointee(
        &self,
        var: &Variable,
        offset: u64,
    ) -> (ElementPath, Option<String>) {
        let mut path = var.name.clone();
        let end = self.types.append_path(var.type_id, offset, &mut path);
        let pointee = end.leaf.and_then(|t| self.types.pointee_record(t));
        (
            ElementPath {
                path,
                internal_at: end.internal_at,
            },
            pointee,
        )
    }

    /// A structure, union or class type the program calls `name` (`struct
    /// node`, `node`, `P`, or a typedef of one), with a known size: for
    /// naming the members of heap blocks. Scans the types: ask once per
    /// allocation site.
    pub fn type_named(&self, name: &str) -> Option<TypeId> {
        self.types.type_named(name)
    }

    /// The element path of byte `offset` of a heap block named `name`
    /// holding `block_size` bytes of `ty`: `ps[3].y` for an array of
    /// structures, `n.next` for a single one; and where in it a library's
    /// internals begin.
    pub fn heap_element(
        &self,
        name: &str,
        ty: TypeId,
        block_size: u64,
        offset: u64,
    ) -> ElementPath {
        self.types.heap_element(name, ty, block_size, offset)
    }

    /// When `var` is an array (through typedefs and qualifiers, and with
    /// arrays of arrays flattened), its dimensions outermost first and the
    /// byte size of one element: `double u[12][12]` gives `([12, 12], 8)`,
    /// `struct point p[8]` gives `([8], 24)`. An unknown extent is 0.
    pub fn array_shape(&self, var: &Variable) -> Option<(Vec<u64>, u64)> {
        self.types.array_shape(var.type_id?)
    }

    /// Size in bytes of a type; 0 when unknown (void, incomplete types).
    pub fn type_size(&self, ty: TypeId) -> u64 {
        self.types.type_size(ty)
    }

    /// The type written the C way, for display: `double[12][12]`,
    /// `struct hist`, `hist_t`, `const int`, `double *`.
    pub fn type_name(&self, ty: TypeId) -> String {
        self.types.type_name(ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_vars_can_be_shared_between_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<DebugVars>();
    }
}
