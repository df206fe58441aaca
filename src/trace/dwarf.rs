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
//!
//! Optimised code (`-O1`, `-O2`) is handled gracefully: variables that live
//! in registers or in location lists have no fixed address and are simply not
//! found, so queries return `None` rather than a wrong name.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use gimli::{
    AttributeValue, BaseAddresses, CfaRule, CieOrFde, EndianSlice, EntriesTreeNode, Operation,
    RegisterRule, RunTimeEndian, UnitRef, UnwindContext, UnwindSection,
};
use object::{Object, ObjectSection, SectionKind};

/// The DWARF reader used while loading: slices of the file read into memory.
type R<'d> = EndianSlice<'d, RunTimeEndian>;

/// DWARF register number of the stack pointer (`rsp`) on x86-64.
const X86_64_RSP: u16 = 7;
/// DWARF register number of the frame pointer (`rbp`) on x86-64.
const X86_64_RBP: u16 = 6;
/// Prefix of the locals declared by Valgrind's client-request macros.
const CLIENT_REQUEST_PREFIX: &str = "_zzq_";
/// Bound on type nesting followed by naming and size computation, so that a
/// malformed (cyclic) type graph cannot hang a query.
const MAX_TYPE_DEPTH: usize = 64;

/// Why the debug information of a program could not be loaded.
///
/// Every message names the file and says how to fix the problem, so the
/// shell can show it to the user as is.
#[derive(Debug, thiserror::Error)]
pub enum DwarfError {
    /// The file could not be read at all.
    #[error("Could not read {}: {source}. Check that the path names the compiled program and that it is readable.", .path.display())]
    Read {
        /// The file that was asked for.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The file is not an object file (ELF) that can be parsed.
    #[error("{} is not an object file that can be read ({source}): pass the compiled ELF program, not its source or a script.", .path.display())]
    NotObject {
        /// The file that was asked for.
        path: PathBuf,
        /// The parser's reason.
        source: object::Error,
    },
    /// The object has no `.debug_info`: it was compiled without `-g` or stripped.
    #[error("{} has no debug information: compile it with -g.", .path.display())]
    NoDebugInfo {
        /// The file that was asked for.
        path: PathBuf,
    },
    /// The DWARF data exists but could not be parsed.
    #[error("The debug information in {} could not be parsed ({source}): recompile the program with gcc -g (DWARF 4 or 5).", .path.display())]
    BadDwarf {
        /// The file that was asked for.
        path: PathBuf,
        /// gimli's reason.
        source: gimli::Error,
    },
}

/// Handle to a type described in the debug information of one [`DebugVars`].
///
/// Only meaningful for the `DebugVars` it came from; use
/// [`DebugVars::type_name`] and [`DebugVars::type_size`] to inspect it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(u32);

impl TypeId {
    fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where a variable lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarLocation {
    /// A global or static at this file address (add the load bias for the
    /// runtime address).
    Global(u64),
    /// A local or parameter at this byte offset from the CFA of its frame
    /// (usually negative: locals sit below the return address).
    FrameOffset(i64),
}

/// One variable with a fixed location: a global, a static, a local or a
/// parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    /// Source name of the variable.
    pub name: String,
    /// Fixed address or frame offset.
    pub location: VarLocation,
    /// Size in bytes of the whole variable; 0 when the type's size is unknown
    /// (incomplete arrays, variable-length arrays), in which case no address
    /// lookup will ever match it.
    pub size: u64,
    /// The variable's type, when the debug information names one.
    pub type_id: Option<TypeId>,
    /// The function that declares it: set for locals, parameters and
    /// function-scope statics, `None` for file-scope variables.
    pub function: Option<String>,
    /// Whether it is a formal parameter rather than a declared variable.
    pub is_parameter: bool,
    /// Code address ranges (file addresses, end exclusive) in which the
    /// variable is in scope: the ranges of its innermost lexical block or of
    /// its function. Empty for file-scope variables.
    pub scope: Vec<Range<u64>>,
    /// Lexical nesting depth: 0 at file scope, 1 in a function body, +1 per
    /// nested block. Used to let inner declarations shadow outer ones.
    depth: u32,
}

impl Variable {
    /// Whether this is one of the locals Valgrind's client-request macros
    /// declare (`_zzq_args`, `_zzq_result`, ...): accesses to them are the
    /// tracer talking to the program, not the program's own traffic.
    pub fn is_client_request(&self) -> bool {
        self.name.starts_with(CLIENT_REQUEST_PREFIX)
    }

    /// Whether the variable is in scope at code address `ip`.
    pub fn in_scope(&self, ip: u64) -> bool {
        self.scope.iter().any(|r| r.contains(&ip))
    }
}

/// A function with code in the object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// Source name (for out-of-line copies of inline functions, the name of
    /// the abstract origin).
    pub name: String,
    /// Lowest code address of the function (file address).
    pub low_pc: u64,
    /// One past the highest code address of the function.
    pub high_pc: u64,
    /// The code ranges; more than one when the compiler split the function
    /// (hot/cold parts at `-O2`).
    pub ranges: Vec<Range<u64>>,
    /// Indices of the function's locals in `DebugVars::locals`.
    locals: Range<usize>,
    /// Whether its compilation unit was built with optimisation, in which
    /// case the prologue may be interleaved with the body and cannot be read
    /// to recover `rbp` from `rsp`.
    optimized: bool,
}

/// What an address in the current frame holds when no local covers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameSlot {
    /// The return address pushed by the call (at CFA - 8 on x86-64).
    ReturnAddress,
    /// A callee-saved register saved by the prologue, e.g. `rbp` at CFA - 16.
    SavedRegister {
        /// DWARF register number.
        register: u16,
        /// Conventional name of the register, when known (`"rbp"`).
        name: Option<&'static str>,
    },
    /// Anything else below the saved registers: compiler temporaries, spills,
    /// padding, outgoing arguments.
    Spill,
}

/// The answer of [`DebugVars::stack_access`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackAccess<'a> {
    /// A local or parameter, and the byte offset inside it (give both to
    /// [`DebugVars::element_name`]).
    Local {
        /// The variable covering the address.
        var: &'a Variable,
        /// Byte offset of the address inside the variable.
        offset: u64,
    },
    /// Frame traffic no variable covers.
    Slot(FrameSlot),
}

/// A type parsed from the debug information. `T` is how other types are
/// referred to: section offsets while loading, [`TypeId`]s afterwards.
#[derive(Clone, Debug)]
struct TypeData<T> {
    name: Option<String>,
    byte_size: Option<u64>,
    kind: Kind<T>,
}

#[derive(Clone, Debug)]
enum Kind<T> {
    Base,
    Pointer(Option<T>),
    Array {
        element: Option<T>,
        /// Extent of each dimension, outermost first; `None` if unknown.
        dims: Vec<Option<u64>>,
    },
    Record {
        union: bool,
        members: Vec<Member<T>>,
    },
    Enum,
    Typedef(Option<T>),
    Qualified(&'static str, Option<T>),
    Other,
}

#[derive(Clone, Debug)]
struct Member<T> {
    name: Option<String>,
    offset: u64,
    ty: Option<T>,
}

impl<T: Copy> Kind<T> {
    fn map<U>(&self, f: &impl Fn(T) -> Option<U>) -> Kind<U> {
        let g = |t: &Option<T>| t.and_then(f);
        match self {
            Kind::Base => Kind::Base,
            Kind::Pointer(t) => Kind::Pointer(g(t)),
            Kind::Array { element, dims } => Kind::Array {
                element: g(element),
                dims: dims.clone(),
            },
            Kind::Record { union, members } => Kind::Record {
                union: *union,
                members: members
                    .iter()
                    .map(|m| Member {
                        name: m.name.clone(),
                        offset: m.offset,
                        ty: g(&m.ty),
                    })
                    .collect(),
            },
            Kind::Enum => Kind::Enum,
            Kind::Typedef(t) => Kind::Typedef(g(t)),
            Kind::Qualified(q, t) => Kind::Qualified(q, g(t)),
            Kind::Other => Kind::Other,
        }
    }
}

/// A resolved type: references are [`TypeId`]s and the size is computed.
#[derive(Clone, Debug)]
struct Type {
    name: Option<String>,
    size: u64,
    kind: Kind<TypeId>,
}

/// How the CFA is computed in one row of the call frame information.
#[derive(Clone, Copy, Debug)]
enum CfaLite {
    /// CFA = register + offset.
    Reg { reg: u16, offset: i64 },
    /// A DWARF expression, which this module does not evaluate.
    Unsupported,
}

/// One row of the unwind table: the rules valid for `start..end`.
#[derive(Clone, Debug)]
struct CfiRow {
    start: u64,
    end: u64,
    /// Index of the FDE the row comes from (rows of one FDE are adjacent).
    fde: u32,
    cfa: CfaLite,
    /// The return-address column of the CIE.
    ra: u16,
    /// Registers saved in memory: (register, offset from CFA).
    saved: Vec<(u16, i64)>,
}

/// What the prologue does to the stack pointer after `mov %rsp,%rbp`, so
/// that `rbp` can be recovered from `rsp` in the body of a function whose
/// CFA rule is `rbp`-based.
#[derive(Clone, Debug)]
struct FrameSetup {
    /// First address after `mov %rsp,%rbp`: here rbp == rsp.
    established: u64,
    /// (address after an instruction, bytes rsp is below rbp from there on).
    steps: Vec<(u64, u64)>,
}

impl FrameSetup {
    /// rbp - rsp at `ip`, assuming the body does not move rsp further.
    fn fp_minus_sp(&self, ip: u64) -> Option<u64> {
        if ip < self.established {
            return None;
        }
        Some(
            self.steps
                .iter()
                .take_while(|(addr, _)| *addr <= ip)
                .last()
                .map_or(0, |s| s.1),
        )
    }
}

/// All variables, types, functions and unwind rules of one ELF object.
///
/// Loading reads the whole file and parses every compilation unit and every
/// FDE once, in time and memory proportional to the debug information; load
/// once per object and reuse the value for all accesses. Queries are binary searches plus a scan of one
/// function's locals. The value owns all its data and is `Send + Sync`.
#[derive(Debug)]
pub struct DebugVars {
    path: PathBuf,
    types: Vec<Type>,
    /// Sorted by address.
    globals: Vec<Variable>,
    /// Grouped by function (see `Function::locals`).
    locals: Vec<Variable>,
    /// Sorted by `low_pc`.
    functions: Vec<Function>,
    /// (start, end, function index), sorted by start.
    fn_ranges: Vec<(u64, u64, usize)>,
    /// Sorted by start; rows do not overlap.
    cfi: Vec<CfiRow>,
    /// Prologue analysis per FDE, for rbp-based CFA rules.
    setups: Vec<Option<FrameSetup>>,
    x86_64: bool,
    /// Per compilation unit compiled with `-g3`: its name and its
    /// predefined and command-line macros (`NAME VALUE`).
    cu_macros: Vec<(PathBuf, Vec<String>)>,
    /// `DW_AT_producer` of each unit (`GNU C17 12.2.0 -g -O2`), by the
    /// unit's source file.
    cu_producers: Vec<(PathBuf, String)>,
}

impl DebugVars {
    /// Reads `path` and parses its DWARF and call frame information.
    ///
    /// The whole file is read into memory for the duration of the call and
    /// then dropped: the result keeps only its own tables. DWARF 4 and 5 are
    /// supported (`.debug_addr`, `.debug_rnglists`, `.debug_loclists`
    /// included); compressed debug sections are decompressed.
    ///
    /// # Errors
    /// [`DwarfError::Read`] if the file cannot be read,
    /// [`DwarfError::NotObject`] if it is not an object file,
    /// [`DwarfError::NoDebugInfo`] if it has no `.debug_info` (compiled
    /// without `-g`), [`DwarfError::BadDwarf`] if the DWARF is malformed.
    pub fn load(path: &Path) -> Result<DebugVars, DwarfError> {
        let data = std::fs::read(path).map_err(|source| DwarfError::Read {
            path: path.to_owned(),
            source,
        })?;
        let obj = object::File::parse(&*data).map_err(|source| DwarfError::NotObject {
            path: path.to_owned(),
            source,
        })?;
        let has_info = obj
            .section_by_name(".debug_info")
            .is_some_and(|s| s.size() > 0);
        if !has_info {
            return Err(DwarfError::NoDebugInfo {
                path: path.to_owned(),
            });
        }
        let endian = if obj.is_little_endian() {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        };
        let bad = |source| DwarfError::BadDwarf {
            path: path.to_owned(),
            source,
        };
        let sections = gimli::DwarfSections::load(|id| -> Result<Cow<[u8]>, DwarfError> {
            match obj.section_by_name(id.name()) {
                Some(s) => s
                    .uncompressed_data()
                    .map_err(|source| DwarfError::NotObject {
                        path: path.to_owned(),
                        source,
                    }),
                None => Ok(Cow::Borrowed(&[][..])),
            }
        })?;
        let dwarf = sections.borrow(|s| EndianSlice::new(s, endian));

        let mut builder = Builder::default();
        let mut cu_macros = Vec::new();
        let mut cu_producers = Vec::new();
        let mut units = dwarf.units();
        while let Some(header) = units.next().map_err(bad)? {
            let unit = dwarf.unit(header).map_err(bad)?;
            let unit_ref = unit.unit_ref(&dwarf);
            let mut tree = unit.entries_tree(None).map_err(bad)?;
            let root = tree.root().map_err(bad)?;
            let producer = match root.entry().attr_value(gimli::DW_AT_producer) {
                Ok(Some(v)) => unit_ref
                    .attr_string(v)
                    .map(|s| s.to_string_lossy().into_owned())
                    .ok(),
                _ => None,
            };
            let scope = Scope {
                optimized: producer.as_deref().is_some_and(is_optimized),
                function: None,
                frame_base: FrameBase::Unknown,
                ranges: Vec::new(),
                depth: 0,
            };
            let macros = command_line_macros(unit_ref, root.entry());
            if let (Some(macros), Some(name)) = (macros, unit.name.as_ref()) {
                cu_macros.push((PathBuf::from(name.to_string_lossy().into_owned()), macros));
            }
            if let (Some(p), Some(name)) = (producer.clone(), unit.name.as_ref()) {
                cu_producers.push((PathBuf::from(name.to_string_lossy().into_owned()), p));
            }
            builder.walk(unit_ref, root, &scope).map_err(bad)?;
        }

        let x86_64 = obj.architecture() == object::Architecture::X86_64;
        let (cfi, setups) = read_cfi(&obj, endian, x86_64);
        let mut vars = builder.finish(path.to_owned(), cfi, setups);
        vars.x86_64 = x86_64;
        vars.cu_macros = cu_macros;
        vars.cu_producers = cu_producers;
        Ok(vars)
    }

    /// The built-in and command-line (`-D`) macros of the compilation unit
    /// of source `file` (matched by its path, or by its file name), as
    /// `NAME VALUE` texts; `None` when the program was not compiled with
    /// `-g3` (no macro information).
    pub fn command_line_macros(&self, file: &Path) -> Option<&[String]> {
        of_unit(&self.cu_macros, file).map(Vec::as_slice)
    }

    /// The `DW_AT_producer` of the unit compiled from `file` (matched as
    /// [`Self::command_line_macros`] matches).
    pub fn producer(&self, file: &Path) -> Option<&str> {
        of_unit(&self.cu_producers, file).map(String::as_str)
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
        &self.functions
    }

    /// All locals and parameters with a frame location declared in `function`
    /// (which must come from this `DebugVars`), whatever their scope.
    pub fn function_locals(&self, function: &Function) -> &[Variable] {
        self.locals.get(function.locals.clone()).unwrap_or(&[])
    }

    /// The global or static covering `file_addr`, and the byte offset of the
    /// address inside it. Zero-sized variables never match.
    pub fn global_at(&self, file_addr: u64) -> Option<(&Variable, u64)> {
        let end = self
            .globals
            .partition_point(|v| global_addr(v) <= file_addr);
        self.globals[..end]
            .iter()
            .rev()
            .take(8)
            .find(|v| v.size > 0 && file_addr - global_addr(v) < v.size)
            .map(|v| (v, file_addr - global_addr(v)))
    }

    /// The function whose code contains `ip` (a file address).
    pub fn function_at(&self, ip: u64) -> Option<&Function> {
        let end = self.fn_ranges.partition_point(|r| r.0 <= ip);
        // Ranges do not overlap (nested GCC functions have their own code),
        // so only the last few starting at or before `ip` can contain it.
        self.fn_ranges[..end]
            .iter()
            .rev()
            .take(4)
            .find(|r| ip < r.1)
            .map(|r| &self.functions[r.2])
    }

    /// Locals and parameters of the function executing `ip` that are in
    /// scope there, innermost block first (so the first match of a name is
    /// the one a C lookup would find). Allocates the returned vector.
    pub fn locals_at(&self, ip: u64) -> Vec<&Variable> {
        let Some(f) = self.function_at(ip) else {
            return Vec::new();
        };
        let mut v: Vec<&Variable> = self
            .function_locals(f)
            .iter()
            .filter(|v| v.in_scope(ip))
            .collect();
        v.sort_by_key(|v| std::cmp::Reverse(v.depth));
        v
    }

    /// The local or parameter of the frame executing `ip`, whose CFA is
    /// `cfa`, that covers the absolute stack address `addr`, with the byte
    /// offset of `addr` inside it. When blocks overlap, the innermost
    /// variable in scope wins. Does not allocate.
    pub fn local_at(&self, ip: u64, cfa: u64, addr: u64) -> Option<(&Variable, u64)> {
        let f = self.function_at(ip)?;
        let delta = i128::from(addr) - i128::from(cfa);
        let mut best: Option<(&Variable, u64)> = None;
        for v in self.function_locals(f) {
            let VarLocation::FrameOffset(off) = v.location else {
                continue;
            };
            let inside = delta - i128::from(off);
            if inside < 0 || inside >= i128::from(v.size) || !v.in_scope(ip) {
                continue;
            }
            if best.is_none_or(|(b, _)| v.depth > b.depth) {
                best = Some((v, inside as u64));
            }
        }
        best
    }

    /// Everything this module can say about a stack access: computes the CFA
    /// of the frame executing `ip` from `sp`, then looks for the local
    /// covering `addr`, and failing that classifies the frame slot. `None`
    /// when the CFA is unknown or `addr` is outside `sp..cfa` (red zone,
    /// callee frames, caller frames: the caller must name those with the
    /// `ip` and CFA of the frame that owns them).
    pub fn stack_access(&self, ip: u64, sp: u64, addr: u64) -> Option<StackAccess<'_>> {
        let cfa = self.cfa(ip, sp)?;
        if addr < sp || addr >= cfa {
            return None;
        }
        if let Some((var, offset)) = self.local_at(ip, cfa, addr) {
            return Some(StackAccess::Local { var, offset });
        }
        self.classify_frame_slot(ip, cfa, addr)
            .map(StackAccess::Slot)
    }

    /// The CFA of the frame executing `ip`, given the stack pointer `sp`
    /// before the instruction.
    ///
    /// Where the unwind rule is `rsp`-based (prologues, epilogues, and all
    /// of optimised code) the result is exact. Where it is `rbp`-based (the
    /// body of a function with a frame pointer, i.e. all of `-O0`), `rbp` is
    /// recovered from `sp` by reading the prologue (`push %rbp; mov %rsp,%rbp`
    /// then pushes and `sub $n,%rsp`): that assumes the body does not move
    /// `rsp` again, which gcc `-O0` respects except around calls that pass
    /// arguments on the stack and in functions using `alloca` or
    /// variable-length arrays. In optimised units (per `DW_AT_producer`) gcc
    /// interleaves the prologue with the body, so there the rbp-based rows
    /// give `None` rather than a guess. If the frame pointer is known,
    /// prefer [`DebugVars::cfa_with_fp`]. `None` when there is no unwind row
    /// for `ip` or the rule cannot be evaluated.
    pub fn cfa(&self, ip: u64, sp: u64) -> Option<u64> {
        let i = self.row_index(ip)?;
        let row = &self.cfi[i];
        match row.cfa {
            CfaLite::Reg { reg, offset } if self.x86_64 && reg == X86_64_RSP => {
                Some(sp.wrapping_add_signed(offset))
            }
            CfaLite::Reg { reg, offset } if self.x86_64 && reg == X86_64_RBP => {
                if self.function_at(ip).is_none_or(|f| f.optimized) {
                    return None;
                }
                let setup = self.setups.get(row.fde as usize)?.as_ref()?;
                let fp = sp.checked_add(setup.fp_minus_sp(ip)?)?;
                Some(fp.wrapping_add_signed(offset))
            }
            _ => None,
        }
    }

    /// The CFA of the frame executing `ip` given both the stack pointer and
    /// the frame pointer (`rbp`) before the instruction. Exact whenever the
    /// unwind rule is register-based, which it is for all gcc output.
    pub fn cfa_with_fp(&self, ip: u64, sp: u64, fp: u64) -> Option<u64> {
        let row = &self.cfi[self.row_index(ip)?];
        match row.cfa {
            CfaLite::Reg { reg, offset } if self.x86_64 && reg == X86_64_RSP => {
                Some(sp.wrapping_add_signed(offset))
            }
            CfaLite::Reg { reg, offset } if self.x86_64 && reg == X86_64_RBP => {
                Some(fp.wrapping_add_signed(offset))
            }
            _ => None,
        }
    }

    /// The unwind rule of the CFA at `ip`: `(true, off)` for CFA = rbp +
    /// off, `(false, off)` for CFA = rsp + off; `None` when there is no row
    /// or the rule is not register-based.
    pub fn cfa_rule(&self, ip: u64) -> Option<(bool, i64)> {
        let row = &self.cfi[self.row_index(ip)?];
        match row.cfa {
            CfaLite::Reg { reg, offset } if self.x86_64 && reg == X86_64_RSP => {
                Some((false, offset))
            }
            CfaLite::Reg { reg, offset } if self.x86_64 && reg == X86_64_RBP => {
                Some((true, offset))
            }
            _ => None,
        }
    }

    /// Classifies a stack address of the frame executing `ip` (CFA `cfa`)
    /// that no local covers: the return address, a register saved by the
    /// prologue, or a spill. The saved-register rules are read from the CFI
    /// row at `ip` and the row after it, so the `push %rbp` that creates a
    /// save slot is classified as writing it. `None` when `addr >= cfa`: the
    /// address belongs to the caller's frame (or incoming stack arguments).
    /// The caller should check `addr >= sp` itself: below the stack pointer
    /// is the red zone or the next callee's frame.
    pub fn classify_frame_slot(&self, ip: u64, cfa: u64, addr: u64) -> Option<FrameSlot> {
        if addr >= cfa {
            return None;
        }
        let delta = i128::from(addr) - i128::from(cfa);
        let slot_width = 8i128;
        let Some(i) = self.row_index(ip) else {
            // No unwind information: fall back on the x86-64 convention.
            return Some(if self.x86_64 && delta >= -8 {
                FrameSlot::ReturnAddress
            } else {
                FrameSlot::Spill
            });
        };
        let row = &self.cfi[i];
        let next = self
            .cfi
            .get(i + 1)
            .filter(|n| n.fde == row.fde && n.start == row.end);
        let rules = row
            .saved
            .iter()
            .chain(next.into_iter().flat_map(|n| n.saved.iter()));
        for &(reg, off) in rules {
            let start = i128::from(off);
            if delta >= start && delta < start + slot_width {
                return Some(if reg == row.ra {
                    FrameSlot::ReturnAddress
                } else {
                    FrameSlot::SavedRegister {
                        register: reg,
                        name: self.register_name(reg),
                    }
                });
            }
        }
        Some(FrameSlot::Spill)
    }

    fn register_name(&self, reg: u16) -> Option<&'static str> {
        if self.x86_64 {
            gimli::X86_64::register_name(gimli::Register(reg))
        } else {
            None
        }
    }

    fn row_index(&self, ip: u64) -> Option<usize> {
        let i = self.cfi.partition_point(|r| r.start <= ip).checked_sub(1)?;
        (ip < self.cfi[i].end).then_some(i)
    }

    /// The C element path of byte `offset` inside `var`: `u[3][4]`,
    /// `h.nbins`, `view.data[3].z`, or just the name for scalars and
    /// pointers (any byte of a scalar names the scalar). Array indices are
    /// computed even past the declared bound, since an overrun is worth
    /// seeing; the path stops at a struct when the offset falls in padding,
    /// and a union names its first member covering the offset. Allocates the
    /// returned string.
    pub fn element_name(&self, var: &Variable, offset: u64) -> String {
        let mut out = var.name.clone();
        self.append_path(var.type_id, offset, &mut out);
        out
    }

    fn append_path(&self, mut ty: Option<TypeId>, mut offset: u64, out: &mut String) {
        use std::fmt::Write;
        for _ in 0..MAX_TYPE_DEPTH {
            let Some(id) = ty else { return };
            let t = &self.types[id.index()];
            match &t.kind {
                Kind::Typedef(target) | Kind::Qualified(_, target) => ty = *target,
                Kind::Array { element, dims } => {
                    let Some(strides) = self.strides(*element, dims) else {
                        return;
                    };
                    for stride in strides {
                        let _ = write!(out, "[{}]", offset / stride);
                        offset %= stride;
                    }
                    ty = *element;
                }
                Kind::Record { members, .. } => {
                    let covering = |m: &&Member<TypeId>| {
                        let size = m.ty.map_or(0, |t| self.type_size(t)).max(1);
                        offset >= m.offset && offset - m.offset < size
                    };
                    // Members overlap only in unions and bit fields: the
                    // first covering member is the one named.
                    let Some(m) = members.iter().find(covering) else {
                        return;
                    };
                    if let Some(name) = &m.name {
                        out.push('.');
                        out.push_str(name);
                    }
                    offset -= m.offset;
                    ty = m.ty;
                }
                _ => return,
            }
        }
    }

    /// A structure, union or class type the program calls `name` (`struct
    /// node`, `node`, `P`, or a typedef of one), with a known size: for
    /// naming the members of heap blocks. Scans the types: ask once per
    /// allocation site.
    pub fn type_named(&self, name: &str) -> Option<TypeId> {
        let bare = name
            .trim()
            .trim_start_matches("const ")
            .trim_start_matches("struct ")
            .trim_start_matches("union ")
            .trim_start_matches("class ")
            .trim();
        let bare = bare.rsplit("::").next().unwrap_or(bare);
        (0..self.types.len()).map(|i| TypeId(i as u32)).find(|&id| {
            let t = &self.types[id.index()];
            t.name.as_deref() == Some(bare)
                && t.size > 0
                && matches!(self.types[self.strip(id).index()].kind, Kind::Record { .. })
        })
    }

    /// The element path of byte `offset` of a heap block named `name`
    /// holding `block_size` bytes of `ty`: `ps[3].y` for an array of
    /// structures, `n.next` for a single one.
    pub fn heap_element(&self, name: &str, ty: TypeId, block_size: u64, offset: u64) -> String {
        use std::fmt::Write;
        let size = self.type_size(ty).max(1);
        let mut out = name.to_string();
        let mut off = offset;
        if block_size > size {
            let _ = write!(out, "[{}]", offset / size);
            off = offset % size;
        }
        self.append_path(Some(ty), off, &mut out);
        out
    }

    /// Byte stride of each dimension of an array, outermost first.
    fn strides(&self, element: Option<TypeId>, dims: &[Option<u64>]) -> Option<Vec<u64>> {
        let elem = self.type_size(element?);
        if elem == 0 || dims.is_empty() {
            return None;
        }
        let mut strides = vec![elem; dims.len()];
        for k in (0..dims.len() - 1).rev() {
            strides[k] = strides[k + 1].checked_mul(dims[k + 1]?)?;
            if strides[k] == 0 {
                return None;
            }
        }
        Some(strides)
    }

    /// When `var` is an array (through typedefs and qualifiers, and with
    /// arrays of arrays flattened), its dimensions outermost first and the
    /// byte size of one element: `double u[12][12]` gives `([12, 12], 8)`,
    /// `struct point p[8]` gives `([8], 24)`. An unknown extent is 0.
    pub fn array_shape(&self, var: &Variable) -> Option<(Vec<u64>, u64)> {
        let mut ty = self.strip(var.type_id?);
        let mut all = Vec::new();
        for _ in 0..MAX_TYPE_DEPTH {
            match &self.types[ty.index()].kind {
                Kind::Array { element, dims } => {
                    all.extend(dims.iter().map(|d| d.unwrap_or(0)));
                    match element {
                        Some(e) => ty = self.strip(*e),
                        None => return Some((all, 0)),
                    }
                }
                _ => break,
            }
        }
        if all.is_empty() {
            None
        } else {
            Some((all, self.type_size(ty)))
        }
    }

    /// Follows typedefs and qualifiers down to the underlying type.
    fn strip(&self, mut ty: TypeId) -> TypeId {
        for _ in 0..MAX_TYPE_DEPTH {
            match self.types[ty.index()].kind {
                Kind::Typedef(Some(t)) | Kind::Qualified(_, Some(t)) => ty = t,
                _ => break,
            }
        }
        ty
    }

    /// Size in bytes of a type; 0 when unknown (void, incomplete types).
    pub fn type_size(&self, ty: TypeId) -> u64 {
        self.types.get(ty.index()).map_or(0, |t| t.size)
    }

    /// The type written the C way, for display: `double[12][12]`,
    /// `struct hist`, `hist_t`, `const int`, `double *`.
    pub fn type_name(&self, ty: TypeId) -> String {
        self.type_name_depth(Some(ty), 0)
    }

    fn type_name_depth(&self, ty: Option<TypeId>, depth: usize) -> String {
        let Some(ty) = ty else {
            return "void".to_owned();
        };
        if depth > MAX_TYPE_DEPTH {
            return "...".to_owned();
        }
        let t = &self.types[ty.index()];
        let named = |prefix: &str| match &t.name {
            Some(n) => format!("{prefix}{n}"),
            None => format!("{prefix}<anonymous>"),
        };
        match &t.kind {
            Kind::Base | Kind::Typedef(_) | Kind::Other => {
                t.name.clone().unwrap_or_else(|| "<unknown>".to_owned())
            }
            Kind::Pointer(target) => format!("{} *", self.type_name_depth(*target, depth + 1)),
            Kind::Array { element, dims } => {
                let mut s = self.type_name_depth(*element, depth + 1);
                // An array of arrays prints its dimensions in source order.
                let inner_dims = s.find('[').map(|i| s.split_off(i)).unwrap_or_default();
                for d in dims {
                    match d {
                        Some(n) => s.push_str(&format!("[{n}]")),
                        None => s.push_str("[]"),
                    }
                }
                s + &inner_dims
            }
            Kind::Record { union: true, .. } => named("union "),
            Kind::Record { union: false, .. } => named("struct "),
            Kind::Enum => named("enum "),
            Kind::Qualified(q, target) => {
                format!("{q} {}", self.type_name_depth(*target, depth + 1))
            }
        }
    }
}

/// The entry of a per-unit list for source `file`: the unit whose name
/// `file` ends with, else one whose file name is the same.
fn of_unit<'a, T>(units: &'a [(PathBuf, T)], file: &Path) -> Option<&'a T> {
    let exact = units.iter().find(|(p, _)| file.ends_with(p));
    let by_name = || {
        units
            .iter()
            .find(|(p, _)| p.file_name().is_some() && p.file_name() == file.file_name())
    };
    exact.or_else(by_name).map(|(_, t)| t)
}

/// Whether a `DW_AT_producer` string (gcc records the command-line options
/// there: `GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O2`) says the
/// unit was optimised: the last `-O` option is anything but `-O0`. Producers
/// that record no options (clang) count as unoptimised.
fn is_optimized(producer: &str) -> bool {
    producer
        .split_whitespace()
        .rfind(|t| t.starts_with("-O"))
        .is_some_and(|t| t != "-O0")
}

fn global_addr(v: &Variable) -> u64 {
    match v.location {
        VarLocation::Global(a) => a,
        VarLocation::FrameOffset(_) => 0,
    }
}

/// How a function's `DW_AT_frame_base` relates to the CFA.
#[derive(Clone, Copy, Debug)]
enum FrameBase {
    /// `DW_OP_call_frame_cfa` (gcc): frame base == CFA.
    Cfa,
    /// `DW_OP_reg6` / `DW_OP_breg6 0` (clang at -O0): frame base == rbp,
    /// which is CFA - 16 after the standard x86-64 prologue.
    Rbp,
    Unknown,
}

/// The lexical context of the DIEs being walked.
#[derive(Clone, Debug)]
struct Scope {
    /// (name, index in `Builder::functions`) of the enclosing function.
    function: Option<(String, Option<usize>)>,
    frame_base: FrameBase,
    ranges: Vec<Range<u64>>,
    depth: u32,
    /// The unit was compiled with optimisation (from `DW_AT_producer`).
    optimized: bool,
}

/// A variable while loading: its type is still a section offset.
struct RawVar {
    var: Variable,
    raw_type: Option<u64>,
    /// Index of the declaring function (locals only).
    function_index: Option<usize>,
}

/// Accumulates everything found while walking the units.
#[derive(Default)]
struct Builder {
    types: Vec<TypeData<u64>>,
    /// `.debug_info` offset of a type DIE -> index in `types`.
    type_index: HashMap<u64, usize>,
    vars: Vec<RawVar>,
    functions: Vec<Function>,
}

/// `.debug_info` offset of the DIE an attribute refers to.
fn ref_offset<'d>(u: UnitRef<'_, R<'d>>, value: AttributeValue<R<'d>>) -> Option<u64> {
    match value {
        AttributeValue::UnitRef(o) => o.to_debug_info_offset(&u.header).map(|o| o.0 as u64),
        AttributeValue::DebugInfoRef(o) => Some(o.0 as u64),
        _ => None,
    }
}

/// An attribute of `entry`, or of the DIE it completes
/// (`DW_AT_abstract_origin`, `DW_AT_specification`) when absent.
fn attr_follow<'d>(
    u: UnitRef<'_, R<'d>>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
    at: gimli::DwAt,
) -> gimli::Result<Option<AttributeValue<R<'d>>>> {
    if let Some(v) = entry.attr_value(at)? {
        return Ok(Some(v));
    }
    let mut current = entry.clone();
    for _ in 0..4 {
        let origin = match current.attr_value(gimli::DW_AT_abstract_origin)? {
            Some(v) => Some(v),
            None => current.attr_value(gimli::DW_AT_specification)?,
        };
        let Some(AttributeValue::UnitRef(o)) = origin else {
            return Ok(None);
        };
        let next = u.entry(o)?;
        if let Some(v) = next.attr_value(at)? {
            return Ok(Some(v));
        }
        current = next;
    }
    Ok(None)
}

fn die_name<'d>(
    u: UnitRef<'_, R<'d>>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<Option<String>> {
    match attr_follow(u, entry, gimli::DW_AT_name)? {
        Some(v) => Ok(Some(u.attr_string(v)?.to_string_lossy().into_owned())),
        None => Ok(None),
    }
}

fn die_type<'d>(
    u: UnitRef<'_, R<'d>>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<Option<u64>> {
    Ok(attr_follow(u, entry, gimli::DW_AT_type)?.and_then(|v| ref_offset(u, v)))
}

fn die_ranges<'d>(
    u: UnitRef<'_, R<'d>>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<Vec<Range<u64>>> {
    let mut out = Vec::new();
    let mut iter = u.die_ranges(entry)?;
    while let Some(r) = iter.next()? {
        if r.begin < r.end {
            out.push(r.begin..r.end);
        }
    }
    Ok(out)
}

impl Builder {
    fn walk<'d>(
        &mut self,
        u: UnitRef<'_, R<'d>>,
        node: EntriesTreeNode<'_, '_, '_, R<'d>>,
        scope: &Scope,
    ) -> gimli::Result<()> {
        let mut children = node.children();
        while let Some(child) = children.next()? {
            let entry = child.entry().clone();
            match entry.tag() {
                gimli::DW_TAG_subprogram => {
                    if entry.attr_value(gimli::DW_AT_declaration)?.is_some() {
                        continue;
                    }
                    let name = die_name(u, &entry)?.unwrap_or_else(|| "<anonymous>".to_owned());
                    let ranges = die_ranges(u, &entry)?;
                    let index = if ranges.is_empty() {
                        None
                    } else {
                        let low_pc = ranges.iter().map(|r| r.start).min().unwrap_or(0);
                        let high_pc = ranges.iter().map(|r| r.end).max().unwrap_or(0);
                        self.functions.push(Function {
                            name: name.clone(),
                            low_pc,
                            high_pc,
                            ranges: ranges.clone(),
                            locals: 0..0,
                            optimized: scope.optimized,
                        });
                        Some(self.functions.len() - 1)
                    };
                    let frame_base = match entry.attr_value(gimli::DW_AT_frame_base)? {
                        Some(AttributeValue::Exprloc(e)) => frame_base_kind(u, e),
                        _ => FrameBase::Unknown,
                    };
                    let inner = Scope {
                        function: Some((name, index)),
                        frame_base,
                        ranges,
                        depth: 1,
                        optimized: scope.optimized,
                    };
                    self.walk(u, child, &inner)?;
                }
                gimli::DW_TAG_lexical_block => {
                    let ranges = die_ranges(u, &entry)?;
                    let inner = Scope {
                        ranges: if ranges.is_empty() {
                            scope.ranges.clone()
                        } else {
                            ranges
                        },
                        depth: scope.depth + 1,
                        ..scope.clone()
                    };
                    self.walk(u, child, &inner)?;
                }
                gimli::DW_TAG_variable | gimli::DW_TAG_formal_parameter => {
                    self.variable(u, &entry, scope)?;
                }
                // Inlined copies keep their variables in registers or
                // location lists; nothing there has a fixed frame slot.
                gimli::DW_TAG_inlined_subroutine => {}
                gimli::DW_TAG_structure_type
                | gimli::DW_TAG_union_type
                | gimli::DW_TAG_class_type
                | gimli::DW_TAG_array_type => {
                    self.record_or_array(u, &entry, child)?;
                }
                tag => {
                    if let Some(t) = simple_type(u, &entry, tag)? {
                        self.add_type(&entry, u, t);
                    }
                    if matches!(tag, gimli::DW_TAG_namespace | gimli::DW_TAG_module) {
                        self.walk(u, child, scope)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn add_type<'d>(
        &mut self,
        entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
        u: UnitRef<'_, R<'d>>,
        t: TypeData<u64>,
    ) {
        if let Some(off) = entry.offset().to_debug_info_offset(&u.header) {
            self.type_index.insert(off.0 as u64, self.types.len());
            self.types.push(t);
        }
    }

    fn record_or_array<'d>(
        &mut self,
        u: UnitRef<'_, R<'d>>,
        entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
        node: EntriesTreeNode<'_, '_, '_, R<'d>>,
    ) -> gimli::Result<()> {
        let tag = entry.tag();
        let name = die_name(u, entry)?;
        let byte_size = entry
            .attr_value(gimli::DW_AT_byte_size)?
            .and_then(|v| v.udata_value());
        let mut members = Vec::new();
        let mut dims = Vec::new();
        let mut children = node.children();
        while let Some(child) = children.next()? {
            let c = child.entry().clone();
            match c.tag() {
                gimli::DW_TAG_member => {
                    let offset = member_offset(u, &c)?;
                    members.push(Member {
                        name: die_name(u, &c)?,
                        offset,
                        ty: die_type(u, &c)?,
                    });
                }
                gimli::DW_TAG_subrange_type => dims.push(subrange_count(&c)?),
                gimli::DW_TAG_structure_type
                | gimli::DW_TAG_union_type
                | gimli::DW_TAG_class_type
                | gimli::DW_TAG_array_type => self.record_or_array(u, &c, child)?,
                t => {
                    if let Some(td) = simple_type(u, &c, t)? {
                        self.add_type(&c, u, td);
                    }
                }
            }
        }
        let kind = if tag == gimli::DW_TAG_array_type {
            Kind::Array {
                element: die_type(u, entry)?,
                dims,
            }
        } else {
            Kind::Record {
                union: tag == gimli::DW_TAG_union_type,
                members,
            }
        };
        self.add_type(
            entry,
            u,
            TypeData {
                name,
                byte_size,
                kind,
            },
        );
        Ok(())
    }

    fn variable<'d>(
        &mut self,
        u: UnitRef<'_, R<'d>>,
        entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
        scope: &Scope,
    ) -> gimli::Result<()> {
        let Some(AttributeValue::Exprloc(expr)) = entry.attr_value(gimli::DW_AT_location)? else {
            return Ok(());
        };
        let mut ops = expr.operations(u.encoding());
        let first = ops.next()?;
        if ops.next()?.is_some() {
            return Ok(()); // composite locations: pieces, TLS, computed
        }
        let location = match first {
            Some(Operation::Address { address }) => VarLocation::Global(address),
            Some(Operation::AddressIndex { index }) => VarLocation::Global(u.address(index)?),
            Some(Operation::FrameOffset { offset }) => match scope.frame_base {
                FrameBase::Cfa => VarLocation::FrameOffset(offset),
                FrameBase::Rbp => VarLocation::FrameOffset(offset - 16),
                FrameBase::Unknown => return Ok(()),
            },
            _ => return Ok(()),
        };
        let Some(name) = die_name(u, entry)? else {
            return Ok(());
        };
        let is_local = matches!(location, VarLocation::FrameOffset(_));
        let function_index = scope.function.as_ref().and_then(|f| f.1);
        if is_local && function_index.is_none() {
            return Ok(());
        }
        self.vars.push(RawVar {
            var: Variable {
                name,
                location,
                size: 0,
                type_id: None,
                function: scope.function.as_ref().map(|f| f.0.clone()),
                is_parameter: entry.tag() == gimli::DW_TAG_formal_parameter,
                scope: scope.ranges.clone(),
                depth: scope.depth,
            },
            raw_type: die_type(u, entry)?,
            function_index: if is_local { function_index } else { None },
        });
        Ok(())
    }

    fn finish(self, path: PathBuf, cfi: Vec<CfiRow>, setups: Vec<Option<FrameSetup>>) -> DebugVars {
        let index = &self.type_index;
        let resolve = |off: u64| index.get(&off).map(|&i| TypeId(i as u32));
        let kinds: Vec<Kind<TypeId>> = self.types.iter().map(|t| t.kind.map(&resolve)).collect();
        let mut sizes: Vec<Option<u64>> = vec![None; kinds.len()];
        for i in 0..kinds.len() {
            compute_size(&self.types, &kinds, &mut sizes, i, 0);
        }
        let types: Vec<Type> = self
            .types
            .into_iter()
            .zip(kinds)
            .zip(&sizes)
            .map(|((t, kind), size)| Type {
                name: t.name,
                size: size.unwrap_or(0),
                kind,
            })
            .collect();

        let mut globals = Vec::new();
        let mut locals: Vec<(usize, Variable)> = Vec::new();
        for raw in self.vars {
            let mut var = raw.var;
            var.type_id = raw.raw_type.and_then(resolve);
            var.size = var.type_id.map_or(0, |t| types[t.index()].size);
            match raw.function_index {
                Some(f) => locals.push((f, var)),
                None => globals.push(var),
            }
        }
        globals.sort_by_key(global_addr);

        // Sort functions by address, and the locals by their function.
        let mut functions = self.functions;
        let mut order: Vec<usize> = (0..functions.len()).collect();
        order.sort_by_key(|&i| functions[i].low_pc);
        let mut new_index = vec![0; functions.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let mut slots: Vec<Option<Function>> = functions.drain(..).map(Some).collect();
        let mut functions: Vec<Function> = order.iter().filter_map(|&i| slots[i].take()).collect();
        locals.sort_by_key(|(f, _)| new_index[*f]);
        let mut start = 0;
        for (i, f) in functions.iter_mut().enumerate() {
            let end = start + locals[start..].partition_point(|(g, _)| new_index[*g] == i);
            f.locals = start..end;
            start = end;
        }
        let locals: Vec<Variable> = locals.into_iter().map(|(_, v)| v).collect();

        let mut fn_ranges: Vec<(u64, u64, usize)> = functions
            .iter()
            .enumerate()
            .flat_map(|(i, f)| f.ranges.iter().map(move |r| (r.start, r.end, i)))
            .collect();
        fn_ranges.sort_unstable();

        DebugVars {
            path,
            types,
            globals,
            locals,
            functions,
            fn_ranges,
            cfi,
            setups,
            x86_64: false,
            cu_macros: Vec::new(),
            cu_producers: Vec::new(),
        }
    }
}

/// Size of type `i`, memoised in `sizes`; arrays multiply their extents,
/// typedefs and qualifiers take their target's size.
fn compute_size(
    data: &[TypeData<u64>],
    kinds: &[Kind<TypeId>],
    sizes: &mut [Option<u64>],
    i: usize,
    depth: usize,
) -> u64 {
    if let Some(s) = sizes[i] {
        return s;
    }
    if let Some(s) = data[i].byte_size {
        sizes[i] = Some(s);
        return s;
    }
    if depth > MAX_TYPE_DEPTH {
        return 0;
    }
    let mut sub = |t: &Option<TypeId>| {
        t.map_or(0, |t| {
            compute_size(data, kinds, sizes, t.index(), depth + 1)
        })
    };
    let s = match &kinds[i] {
        Kind::Typedef(t) | Kind::Qualified(_, t) => sub(t),
        Kind::Array { element, dims } => {
            let elem = sub(element);
            dims.iter()
                .try_fold(elem, |acc, d| acc.checked_mul((*d)?))
                .unwrap_or(0)
        }
        _ => 0,
    };
    sizes[i] = Some(s);
    s
}

/// Types without children that matter: base, pointer, typedef, qualifier,
/// enum, and anything else that can be named (function types, void).
fn simple_type<'d>(
    u: UnitRef<'_, R<'d>>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
    tag: gimli::DwTag,
) -> gimli::Result<Option<TypeData<u64>>> {
    let target = || die_type(u, entry);
    let kind = match tag {
        gimli::DW_TAG_base_type => Kind::Base,
        gimli::DW_TAG_pointer_type
        | gimli::DW_TAG_reference_type
        | gimli::DW_TAG_rvalue_reference_type => Kind::Pointer(target()?),
        gimli::DW_TAG_typedef => Kind::Typedef(target()?),
        gimli::DW_TAG_const_type => Kind::Qualified("const", target()?),
        gimli::DW_TAG_volatile_type => Kind::Qualified("volatile", target()?),
        gimli::DW_TAG_restrict_type => Kind::Qualified("restrict", target()?),
        gimli::DW_TAG_atomic_type => Kind::Qualified("_Atomic", target()?),
        gimli::DW_TAG_enumeration_type => Kind::Enum,
        gimli::DW_TAG_subroutine_type | gimli::DW_TAG_unspecified_type => Kind::Other,
        _ => return Ok(None),
    };
    let mut byte_size = entry
        .attr_value(gimli::DW_AT_byte_size)?
        .and_then(|v| v.udata_value());
    if byte_size.is_none() && matches!(kind, Kind::Pointer(_)) {
        byte_size = Some(u64::from(u.encoding().address_size));
    }
    Ok(Some(TypeData {
        name: die_name(u, entry)?,
        byte_size,
        kind,
    }))
}

/// Byte offset of a struct member: a constant (DWARF 3+), a
/// `DW_OP_plus_uconst` expression (DWARF 2), or from the bit offset of a
/// bit field. 0 for union members, which carry no location.
fn member_offset<'d>(
    u: UnitRef<'_, R<'d>>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<u64> {
    match entry.attr_value(gimli::DW_AT_data_member_location)? {
        Some(AttributeValue::Exprloc(e)) => {
            let mut ops = e.operations(u.encoding());
            if let Some(Operation::PlusConstant { value }) = ops.next()? {
                return Ok(value);
            }
            Ok(0)
        }
        Some(v) => Ok(v.udata_value().unwrap_or(0)),
        None => Ok(entry
            .attr_value(gimli::DW_AT_data_bit_offset)?
            .and_then(|v| v.udata_value())
            .map_or(0, |bits| bits / 8)),
    }
}

/// Number of elements of one array dimension; `None` when not a constant
/// (variable-length arrays) or absent (`int a[]`).
fn subrange_count<'d>(
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<Option<u64>> {
    if let Some(v) = entry.attr_value(gimli::DW_AT_count)? {
        return Ok(v.udata_value());
    }
    let Some(upper) = entry.attr_value(gimli::DW_AT_upper_bound)? else {
        return Ok(None);
    };
    let upper: i128 = match upper {
        AttributeValue::Sdata(s) => i128::from(s),
        v => match v.udata_value() {
            Some(u64::MAX) => -1,
            Some(x) => i128::from(x),
            None => return Ok(None),
        },
    };
    let lower = entry
        .attr_value(gimli::DW_AT_lower_bound)?
        .and_then(|v| v.sdata_value())
        .unwrap_or(0);
    Ok(u64::try_from((upper - i128::from(lower) + 1).max(0)).ok())
}

fn frame_base_kind<'d>(u: UnitRef<'_, R<'d>>, expr: gimli::Expression<R<'d>>) -> FrameBase {
    let mut ops = expr.operations(u.encoding());
    let first = ops.next().ok().flatten();
    if !matches!(ops.next(), Ok(None)) {
        return FrameBase::Unknown;
    }
    match first {
        Some(Operation::CallFrameCFA) => FrameBase::Cfa,
        Some(Operation::Register { register }) if register.0 == X86_64_RBP => FrameBase::Rbp,
        Some(Operation::RegisterOffset {
            register,
            offset: 0,
            ..
        }) if register.0 == X86_64_RBP => FrameBase::Rbp,
        _ => FrameBase::Unknown,
    }
}

/// Reads the unwind rows of `.eh_frame` (or `.debug_frame` when there is no
/// `.eh_frame`), and analyses the prologue of each FDE whose CFA is
/// rbp-based. Malformed entries are skipped: missing CFI only makes
/// [`DebugVars::cfa`] return `None`.
fn read_cfi(
    obj: &object::File<'_>,
    endian: RunTimeEndian,
    x86_64: bool,
) -> (Vec<CfiRow>, Vec<Option<FrameSetup>>) {
    let addr_of = |name: &str| obj.section_by_name(name).map(|s| s.address());
    let data_of = |name: &str| {
        obj.section_by_name(name)
            .and_then(|s| s.uncompressed_data().ok())
    };
    let address_size = if obj.is_64() { 8 } else { 4 };
    let mut rows = Vec::new();
    if let Some(data) = data_of(".eh_frame").filter(|d| !d.is_empty()) {
        let mut section = gimli::EhFrame::new(&data, endian);
        section.set_address_size(address_size);
        let mut bases = BaseAddresses::default();
        if let Some(a) = addr_of(".eh_frame") {
            bases = bases.set_eh_frame(a);
        }
        if let Some(a) = addr_of(".text") {
            bases = bases.set_text(a);
        }
        if let Some(a) = addr_of(".got") {
            bases = bases.set_got(a);
        }
        collect_rows(&section, &bases, &mut rows);
    }
    if rows.is_empty() {
        if let Some(data) = data_of(".debug_frame").filter(|d| !d.is_empty()) {
            let mut section = gimli::DebugFrame::new(&data, endian);
            section.set_address_size(address_size);
            collect_rows(&section, &BaseAddresses::default(), &mut rows);
        }
    }
    rows.sort_by_key(|r| r.start);
    // Drop rows overlapping an earlier one, so lookups stay unambiguous.
    let mut kept: Vec<CfiRow> = Vec::with_capacity(rows.len());
    for r in rows {
        if kept.last().is_none_or(|k| r.start >= k.end) {
            kept.push(r);
        }
    }

    let fde_count = kept.iter().map(|r| r.fde as usize + 1).max().unwrap_or(0);
    let mut setups = vec![None; fde_count];
    if x86_64 {
        let text: Vec<(u64, Cow<[u8]>)> = obj
            .sections()
            .filter(|s| s.kind() == SectionKind::Text)
            .filter_map(|s| Some((s.address(), s.uncompressed_data().ok()?)))
            .collect();
        for r in &kept {
            let fde = r.fde as usize;
            let rbp_based = matches!(r.cfa, CfaLite::Reg { reg, .. } if reg == X86_64_RBP);
            if rbp_based && setups[fde].is_none() {
                setups[fde] = analyse_prologue(&text, r.start);
            }
        }
    }
    (kept, setups)
}

fn collect_rows<'d, S: UnwindSection<R<'d>>>(
    section: &S,
    bases: &BaseAddresses,
    rows: &mut Vec<CfiRow>,
) {
    let mut ctx = UnwindContext::new();
    let mut entries = section.entries(bases);
    let mut fde_id = rows.iter().map(|r| r.fde + 1).max().unwrap_or(0);
    loop {
        let fde = match entries.next() {
            Ok(Some(CieOrFde::Fde(partial))) => {
                match partial.parse(|s, b, o| s.cie_from_offset(b, o)) {
                    Ok(fde) => fde,
                    Err(_) => continue,
                }
            }
            Ok(Some(CieOrFde::Cie(_))) => continue,
            Ok(None) | Err(_) => break,
        };
        let ra = fde.cie().return_address_register().0;
        let Ok(mut table) = fde.rows(section, bases, &mut ctx) else {
            continue;
        };
        while let Ok(Some(row)) = table.next_row() {
            let cfa = match row.cfa() {
                CfaRule::RegisterAndOffset { register, offset } => CfaLite::Reg {
                    reg: register.0,
                    offset: *offset,
                },
                CfaRule::Expression(_) => CfaLite::Unsupported,
            };
            let saved = row
                .registers()
                .filter_map(|(reg, rule)| match rule {
                    RegisterRule::Offset(off) => Some((reg.0, *off)),
                    _ => None,
                })
                .collect();
            rows.push(CfiRow {
                start: row.start_address(),
                end: row.end_address(),
                fde: fde_id,
                cfa,
                ra,
                saved,
            });
        }
        fde_id += 1;
    }
}

/// Reads the x86-64 instructions that follow `mov %rsp,%rbp` (which must end
/// just before `established`) and records how far each moves `rsp` below
/// `rbp`: `push reg`, `sub $imm8,%rsp`, `sub $imm32,%rsp`. Stops at the first
/// other instruction. `None` if the bytes before `established` are not
/// `mov %rsp,%rbp` or the code is not in a text section.
fn analyse_prologue(text: &[(u64, Cow<[u8]>)], established: u64) -> Option<FrameSetup> {
    let (base, bytes) = text
        .iter()
        .find(|(a, d)| established >= *a && established - *a <= d.len() as u64)?;
    let at = usize::try_from(established - base).ok()?;
    let mov = bytes.get(at.checked_sub(3)?..at)?;
    if mov != [0x48, 0x89, 0xe5] && mov != [0x48, 0x8b, 0xec] {
        return None;
    }
    let mut steps = Vec::new();
    let mut pos = at;
    let mut below: u64 = 0;
    for _ in 0..16 {
        let b = |i: usize| bytes.get(pos + i).copied();
        let (len, adds) = match (b(0), b(1), b(2)) {
            (Some(0x50..=0x57), _, _) => (1, 8),
            (Some(0x41), Some(0x50..=0x57), _) => (2, 8),
            (Some(0x48), Some(0x83), Some(0xec)) => {
                let imm = b(3)? as i8;
                (4, u64::try_from(imm).ok()?)
            }
            (Some(0x48), Some(0x81), Some(0xec)) => {
                let imm = i32::from_le_bytes(bytes.get(pos + 3..pos + 7)?.try_into().ok()?);
                (7, u64::try_from(imm).ok()?)
            }
            (Some(0xf3), Some(0x0f), Some(0x1e)) if b(3) == Some(0xfa) => (4, 0),
            _ => break,
        };
        pos += len;
        below += adds;
        steps.push((base + pos as u64, below));
    }
    Some(FrameSetup { established, steps })
}

/// The macros a compilation unit starts with (gcc's built-ins and the
/// command line's `-D`s): the line-0 definitions of its `.debug_macro` list
/// before the first file starts, following imported macro units. `None`
/// without macro information (compiled without `-g3`) or when it cannot be
/// read.
fn command_line_macros<R: gimli::Reader>(
    unit: gimli::UnitRef<'_, R>,
    root: &gimli::DebuggingInformationEntry<R>,
) -> Option<Vec<String>> {
    let offset = match root.attr_value(gimli::DW_AT_macros).ok()?? {
        gimli::AttributeValue::DebugMacroRef(o) => o,
        _ => return None,
    };
    let mut out = Vec::new();
    let mut todo = vec![(offset, true)];
    while let Some((offset, top)) = todo.pop() {
        let mut entries = unit.macros(offset).ok()?;
        while let Ok(Some(entry)) = entries.next() {
            match entry {
                gimli::MacroEntry::Define { line: 0, text } => {
                    let text = text.string(unit).ok()?;
                    out.push(text.to_string_lossy().ok()?.into_owned());
                }
                gimli::MacroEntry::Import { offset } if out.len() < 100_000 => {
                    todo.push((offset, false))
                }
                gimli::MacroEntry::StartFile { .. } if top => break,
                _ => {}
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_vars_can_be_shared_between_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<DebugVars>();
    }

    #[test]
    fn producer_options_decide_optimisation() {
        assert!(!is_optimized(
            "GNU C17 12.2.0 -mtune=generic -march=x86-64 -g"
        ));
        assert!(!is_optimized("GNU C17 12.2.0 -g -O2 -O0"));
        assert!(is_optimized("GNU C17 12.2.0 -g -O2"));
        assert!(is_optimized("GNU C17 12.2.0 -g -Os"));
        assert!(!is_optimized("clang version 14.0.6"));
    }

    #[test]
    fn prologue_pushes_and_sub_are_summed() {
        // push %rbp; mov %rsp,%rbp; push %rbx; push %r12; sub $0x710,%rsp; nop
        let code: Vec<u8> = vec![
            0x55, 0x48, 0x89, 0xe5, 0x53, 0x41, 0x54, 0x48, 0x81, 0xec, 0x10, 0x07, 0, 0, 0x90,
        ];
        let text = vec![(0x1000, Cow::Borrowed(&code[..]))];
        let setup = analyse_prologue(&text, 0x1004).expect("mov %rsp,%rbp precedes");
        assert_eq!(setup.fp_minus_sp(0x1003), None);
        assert_eq!(setup.fp_minus_sp(0x1004), Some(0));
        assert_eq!(setup.fp_minus_sp(0x1005), Some(8));
        assert_eq!(setup.fp_minus_sp(0x1007), Some(16));
        assert_eq!(setup.fp_minus_sp(0x100e), Some(16 + 0x710));
        assert_eq!(setup.fp_minus_sp(0x2000), Some(16 + 0x710));
        // Without the mov there is nothing to anchor rbp to.
        assert!(analyse_prologue(&text, 0x1005).is_none());
    }

    #[test]
    fn leaf_prologue_without_sub() {
        // push %rbp; mov %rsp,%rbp; mov %edi,-0x4(%rbp)
        let code: Vec<u8> = vec![0x55, 0x48, 0x89, 0xe5, 0x89, 0x7d, 0xfc];
        let text = vec![(0x400, Cow::Borrowed(&code[..]))];
        let setup = analyse_prologue(&text, 0x404).unwrap();
        assert_eq!(setup.fp_minus_sp(0x404), Some(0));
        assert_eq!(setup.fp_minus_sp(0x406), Some(0));
    }
}
