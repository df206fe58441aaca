//! Variables with a fixed location: globals and statics at an address,
//! locals and parameters at an offset from their frame's CFA, each with
//! its lexical scope (code ranges and nesting depth) so that inner
//! declarations shadow outer ones as in C.

use std::ops::Range;

use gimli::{AttributeValue, Operation, UnitRef};

use super::cfi::X86_64_RBP;
use super::die::{die_name, die_type, R};
use super::types::TypeId;

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
    pub(super) depth: u32,
}

impl Variable {
    /// Whether this is one of the locals Valgrind's client-request macros
    /// declare (`_zzq_args`, `_zzq_result`, ...): accesses to them are the
    /// tracer talking to the program, not the program's own traffic.
    pub fn is_client_request(&self) -> bool {
        crate::trace::record::is_client_request_local(&self.name)
    }

    /// Whether the variable is in scope at code address `ip`.
    pub fn in_scope(&self, ip: u64) -> bool {
        self.scope.iter().any(|r| r.contains(&ip))
    }
}

/// The address of a global (0 for a local, which has none).
pub(super) fn global_addr(v: &Variable) -> u64 {
    match v.location {
        VarLocation::Global(a) => a,
        VarLocation::FrameOffset(_) => 0,
    }
}

/// The global or static covering `file_addr`, and the byte offset of the
/// address inside it. Zero-sized variables never match.
pub(super) fn global_at(globals: &[Variable], file_addr: u64) -> Option<(&Variable, u64)> {
    let end = globals.partition_point(|v| global_addr(v) <= file_addr);
    globals[..end]
        .iter()
        .rev()
        .take(8)
        .find(|v| v.size > 0 && file_addr - global_addr(v) < v.size)
        .map(|v| (v, file_addr - global_addr(v)))
}

/// How a function's `DW_AT_frame_base` relates to the CFA.
#[derive(Clone, Copy, Debug)]
pub(super) enum FrameBase {
    /// `DW_OP_call_frame_cfa` (gcc): frame base == CFA.
    Cfa,
    /// `DW_OP_reg6` / `DW_OP_breg6 0` (clang at -O0): frame base == rbp,
    /// which is CFA - 16 after the standard x86-64 prologue.
    Rbp,
    /// Anything else: the function's locals get no frame offset.
    Unknown,
}

/// The lexical context of the DIEs being walked.
#[derive(Clone, Debug)]
pub(super) struct Scope {
    /// (name, index among the functions read so far) of the enclosing
    /// function.
    pub(super) function: Option<(String, Option<usize>)>,
    /// How the enclosing function's frame base relates to the CFA.
    pub(super) frame_base: FrameBase,
    /// Code ranges of the innermost enclosing block or function.
    pub(super) ranges: Vec<Range<u64>>,
    /// Lexical nesting depth (see [`Variable`]).
    pub(super) depth: u32,
    /// The unit was compiled with optimisation (from `DW_AT_producer`).
    pub(super) optimized: bool,
}

/// A variable while loading: its type is still a section offset.
pub(super) struct RawVar {
    /// The variable, without its type and size yet.
    pub(super) var: Variable,
    /// `.debug_info` offset of its type.
    pub(super) raw_type: Option<u64>,
    /// Index of the declaring function (locals only).
    pub(super) function_index: Option<usize>,
}

/// Reads a variable or parameter DIE with a fixed location: a single
/// `DW_OP_addr` (global, static) or `DW_OP_fbreg` (local, parameter, made
/// CFA-relative from the function's frame base). Register, location-list and
/// composite locations give `None`: they have no address to name.
pub(super) fn read_variable<'d>(
    u: UnitRef<'_, R<'d>>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
    scope: &Scope,
) -> gimli::Result<Option<RawVar>> {
    let Some(AttributeValue::Exprloc(expr)) = entry.attr_value(gimli::DW_AT_location)? else {
        return Ok(None);
    };
    let mut ops = expr.operations(u.encoding());
    let first = ops.next()?;
    if ops.next()?.is_some() {
        return Ok(None); // composite locations: pieces, TLS, computed
    }
    let location = match first {
        Some(Operation::Address { address }) => VarLocation::Global(address),
        Some(Operation::AddressIndex { index }) => VarLocation::Global(u.address(index)?),
        Some(Operation::FrameOffset { offset }) => match scope.frame_base {
            FrameBase::Cfa => VarLocation::FrameOffset(offset),
            FrameBase::Rbp => VarLocation::FrameOffset(offset - 16),
            FrameBase::Unknown => return Ok(None),
        },
        _ => return Ok(None),
    };
    let Some(name) = die_name(u, entry)? else {
        return Ok(None);
    };
    let is_local = matches!(location, VarLocation::FrameOffset(_));
    let function_index = scope.function.as_ref().and_then(|f| f.1);
    if is_local && function_index.is_none() {
        return Ok(None);
    }
    Ok(Some(RawVar {
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
    }))
}

/// How the frame base expression `expr` relates to the CFA.
pub(super) fn frame_base_kind<'d>(
    u: UnitRef<'_, R<'d>>,
    expr: gimli::Expression<R<'d>>,
) -> FrameBase {
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
