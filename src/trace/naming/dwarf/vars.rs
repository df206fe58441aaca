//! Variables with a fixed location: globals and statics at an address,
//! locals and parameters at an offset from their frame's CFA or from the
//! stack or frame pointer, each with its lexical scope (code ranges and
//! nesting depth) so that inner declarations shadow outer ones as in C.
//!
//! A local's location expression is evaluated symbolically, as an offset
//! from the CFA, rsp or rbp: the registers a trace records with every
//! access. A frame realigned for an over-aligned local
//! (`__attribute__((aligned(64)))`, `_Alignas(64)`) is no fixed distance
//! from its CFA, so gcc and clang locate its locals from rsp
//! (`DW_OP_breg7`), or from rbp when the body moves rsp (gcc's
//! `DW_OP_breg6`), rather than with `DW_OP_fbreg` from the CFA. A location
//! that depends on another register (clang's rbx base pointer beside a
//! variable-length array) or on memory (`DW_OP_deref`) is kept with the
//! reason it cannot be evaluated, so that the frame row it falls in can
//! say why.
//!
//! A local that lives in a register (`DW_OP_regN`, alone or in the entries
//! of a location list, as optimised code describes most locals) has no
//! address, but a root snapshot records the registers' values: such a
//! local is kept with the code ranges in which each register holds it
//! ([`Variable::registers`]), to name the heap blocks it points to.

use std::ops::Range;

use gimli::{AttributeValue, Operation};

use super::cfi::{X86_64_RBP, X86_64_RSP};
use super::die::{die_name, die_type, Cx, R};
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
    /// A local or parameter at this byte offset from a register's value in
    /// its frame: the stack pointer (`rsp`, DWARF register 7) or the frame
    /// pointer (`rbp`, 6), the two a trace records. Locals of a frame
    /// realigned for an over-aligned local are located so.
    Register {
        /// DWARF register number: 7 (rsp) or 6 (rbp).
        register: u16,
        /// Byte offset from the register's value.
        offset: i64,
    },
    /// A local in memory whose address cannot be computed from the
    /// registers a trace records, and why. No address lookup matches it.
    NotLocated(NotLocated),
    /// A local that lives in registers, not in memory: where and when is
    /// [`Variable::registers`]. No address lookup matches it.
    InRegisters,
}

/// Why a local in memory cannot be located from a trace, which records the
/// stack and frame pointers of every access but no other register and no
/// memory value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotLocated {
    /// The address is an offset from this DWARF register (clang's rbx base
    /// pointer in a realigned frame with a variable-length array).
    Register(u16),
    /// The address is read from memory (`DW_OP_deref`): a pointer the frame
    /// holds, as for a variable-length array.
    Memory,
    /// The address is an offset from the CFA, which the frame keeps in
    /// memory (gcc's realigned frames whose body moves rsp): the stack
    /// arguments of such a function. A property of the frame at run time,
    /// not of the variable: see [`super::DebugVars::unlocated_in`].
    StoredCfa,
}

impl NotLocated {
    /// How the local is located, in words, for a note: "located from
    /// register rbx (DW_OP_breg3), which the trace does not record".
    pub fn reason(&self) -> String {
        match *self {
            NotLocated::Register(r) => {
                let name = gimli::X86_64::register_name(gimli::Register(r)).unwrap_or("?");
                format!(
                    "located from register {name} (DW_OP_breg{r}), which the trace does not record"
                )
            }
            NotLocated::Memory => "located through a pointer in memory (DW_OP_deref), whose \
                                   value the trace does not record"
                .into(),
            NotLocated::StoredCfa => "located from the canonical frame address, which this \
                                      realigned frame keeps in memory"
                .into(),
        }
    }
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
    /// For [`VarLocation::InRegisters`]: the code ranges (file addresses,
    /// end exclusive) in which a DWARF register holds the whole variable.
    /// Empty for every other location.
    pub registers: Vec<(Range<u64>, u16)>,
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

    /// The DWARF register that holds the whole variable at code address
    /// `ip`, for a local that lives in registers.
    pub fn register_at(&self, ip: u64) -> Option<u16> {
        self.registers
            .iter()
            .find(|(r, _)| r.contains(&ip))
            .map(|&(_, reg)| reg)
    }
}

/// The address of a global (0 for a local, which has none).
pub(super) fn global_addr(v: &Variable) -> u64 {
    match v.location {
        VarLocation::Global(a) => a,
        _ => 0,
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

/// What a location is counted from: the frame's CFA or a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Base {
    /// The canonical frame address.
    Cfa,
    /// A DWARF register's value: rsp or rbp.
    Reg(u16),
}

/// A value of a location expression, evaluated symbolically.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Value {
    /// A constant.
    Const(i64),
    /// An offset from the CFA or a traced register.
    At(Base, i64),
    /// Something that depends on what the trace does not record.
    Opaque(NotLocated),
}

impl Value {
    /// `self + k`.
    fn add(self, k: i64) -> Value {
        match self {
            Value::Const(c) => Value::Const(c.wrapping_add(k)),
            Value::At(b, o) => Value::At(b, o.wrapping_add(k)),
            v => v,
        }
    }
}

/// How a function's `DW_AT_frame_base` is located, for `DW_OP_fbreg`.
#[derive(Clone, Copy, Debug)]
pub(super) enum FrameBase {
    /// An offset from the CFA or a register: `DW_OP_call_frame_cfa` (gcc) is
    /// the CFA; `DW_OP_reg6` / `DW_OP_breg6 0` (clang) is rbp, which is
    /// CFA - 16 after the x86-64 prologue every such function starts with,
    /// so counted from the CFA, which is right in the prologue too.
    At(Base, i64),
    /// From something the trace does not record.
    Not(NotLocated),
    /// Absent or not understood: `DW_OP_fbreg` locals get no location.
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
/// `DW_OP_addr` (global, static), or an expression that evaluates to an
/// offset from the CFA (`DW_OP_fbreg` through the function's frame base,
/// `DW_OP_call_frame_cfa`) or from rsp or rbp (`DW_OP_breg7`,
/// `DW_OP_breg6`, as in realigned frames), possibly with constants added.
/// A local in memory whose address depends on another register or on
/// memory is kept as [`VarLocation::NotLocated`]. A local a register
/// holds whole (`DW_OP_regN` alone, or in entries of a location list) is
/// [`VarLocation::InRegisters`]. Value and composite locations, and lists
/// with no register entry, give `None`: nothing to name by them.
pub(super) fn read_variable<'d>(
    u: Cx<'_, 'd>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
    scope: &Scope,
) -> gimli::Result<Option<RawVar>> {
    let mut registers = Vec::new();
    let location = match entry.attr_value(gimli::DW_AT_location)? {
        Some(AttributeValue::Exprloc(expr)) => {
            match fixed_location(u, expr, scope, &mut registers)? {
                Some(l) => l,
                None => return Ok(None),
            }
        }
        // A list this reader cannot parse leaves the variable out, never
        // the unit: its other variables are still named.
        Some(attr) => match u.attr_locations_offset(attr).ok().flatten() {
            Some(list) if scope.function.is_some() => {
                registers = register_entries(u, list);
                if registers.is_empty() {
                    return Ok(None);
                }
                VarLocation::InRegisters
            }
            _ => return Ok(None),
        },
        None => return Ok(None),
    };
    let Some(name) = die_name(u, entry)? else {
        return Ok(None);
    };
    let is_local = !matches!(location, VarLocation::Global(_));
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
            registers,
        },
        raw_type: die_type(u, entry)?,
        function_index: if is_local { function_index } else { None },
    }))
}

/// The location of a single expression: an address ([`VarLocation::Global`],
/// an offset from the CFA or a register), or a register alone
/// (`DW_OP_regN`: [`VarLocation::InRegisters`] for the whole scope, the
/// ranges put in `registers`); `None` for anything else.
fn fixed_location<'d>(
    u: Cx<'_, 'd>,
    expr: gimli::Expression<R<'d>>,
    scope: &Scope,
    registers: &mut Vec<(Range<u64>, u16)>,
) -> gimli::Result<Option<VarLocation>> {
    let mut ops = expr.operations(u.encoding());
    let first = ops.next()?;
    let single = ops.next()?.is_none();
    Ok(Some(match first {
        Some(Operation::Address { address }) if single => VarLocation::Global(address),
        Some(Operation::AddressIndex { index }) if single => VarLocation::Global(u.address(index)?),
        Some(Operation::Register { register }) if single && scope.function.is_some() => {
            registers.extend(scope.ranges.iter().map(|r| (r.clone(), register.0)));
            VarLocation::InRegisters
        }
        _ => match evaluate(u, expr, Some(scope.frame_base)) {
            Some(Value::At(Base::Cfa, off)) => VarLocation::FrameOffset(off),
            Some(Value::At(Base::Reg(register), offset)) => {
                VarLocation::Register { register, offset }
            }
            Some(Value::Opaque(why)) => VarLocation::NotLocated(why),
            _ => return Ok(None),
        },
    }))
}

/// The entries of location list `list` in which the variable is a register
/// alone (`DW_OP_regN`), as (code range, DWARF register). Entries in
/// memory, pieces and values are left out: a register snapshot can only
/// speak for a variable a register holds whole.
fn register_entries<'d>(u: Cx<'_, 'd>, list: gimli::LocationListsOffset) -> Vec<(Range<u64>, u16)> {
    let mut out = Vec::new();
    let Ok(mut iter) = u.locations(list) else {
        return out;
    };
    // An entry that cannot be read ends the list: the entries before it
    // stand.
    while let Ok(Some(entry)) = iter.next() {
        let mut ops = entry.data.operations(u.encoding());
        if let (Ok(Some(Operation::Register { register })), Ok(None)) = (ops.next(), ops.next()) {
            if entry.range.begin < entry.range.end {
                out.push((entry.range.begin..entry.range.end, register.0));
            }
        }
    }
    out
}

/// How the frame base expression `expr` is located (see [`FrameBase`]).
pub(super) fn frame_base_kind<'d>(u: Cx<'_, 'd>, expr: gimli::Expression<R<'d>>) -> FrameBase {
    let mut ops = expr.operations(u.encoding());
    // DW_OP_regN as a frame base: the base is the register's value.
    if let (Ok(Some(Operation::Register { register })), Ok(None)) = (ops.next(), ops.next()) {
        return frame_base_at(Value::At(Base::Reg(register.0), 0));
    }
    match evaluate(u, expr, None) {
        Some(v) => frame_base_at(v),
        None => FrameBase::Unknown,
    }
}

/// The frame base a value gives, rbp counted from the CFA (see
/// [`FrameBase::At`]).
fn frame_base_at(v: Value) -> FrameBase {
    match v {
        Value::At(Base::Reg(X86_64_RBP), off) => FrameBase::At(Base::Cfa, off - 16),
        Value::At(Base::Reg(r), off) if r == X86_64_RSP => FrameBase::At(Base::Reg(r), off),
        Value::At(Base::Reg(r), _) => FrameBase::Not(NotLocated::Register(r)),
        Value::At(Base::Cfa, off) => FrameBase::At(Base::Cfa, off),
        Value::Opaque(why) => FrameBase::Not(why),
        Value::Const(_) => FrameBase::Unknown,
    }
}

/// Evaluates a location expression symbolically: the value it leaves, as
/// an offset from the CFA or from rsp or rbp, a constant, or opaque (it
/// depends on another register or on memory). `frame_base` is that of the
/// enclosing function for `DW_OP_fbreg` (`None` while evaluating the frame
/// base itself). `None` for a location that is no address in memory (a
/// register, a value, pieces, thread-local storage) or that uses an
/// operation not evaluated here.
fn evaluate<'d>(
    u: Cx<'_, 'd>,
    expr: gimli::Expression<R<'d>>,
    frame_base: Option<FrameBase>,
) -> Option<Value> {
    let mut ops = expr.operations(u.encoding());
    let mut stack: Vec<Value> = Vec::new();
    while let Some(op) = ops.next().ok()? {
        match op {
            Operation::CallFrameCFA => stack.push(Value::At(Base::Cfa, 0)),
            Operation::FrameOffset { offset } => stack.push(match frame_base? {
                FrameBase::At(base, off) => Value::At(base, off.wrapping_add(offset)),
                FrameBase::Not(why) => Value::Opaque(why),
                FrameBase::Unknown => return None,
            }),
            Operation::RegisterOffset {
                register,
                offset,
                base_type,
            } if base_type.0 == 0 => stack.push(match register.0 {
                X86_64_RSP | X86_64_RBP => Value::At(Base::Reg(register.0), offset),
                r => Value::Opaque(NotLocated::Register(r)),
            }),
            Operation::UnsignedConstant { value } => stack.push(Value::Const(value as i64)),
            Operation::SignedConstant { value } => stack.push(Value::Const(value)),
            Operation::PlusConstant { value } => {
                let top = stack.pop()?;
                stack.push(top.add(value as i64));
            }
            Operation::Plus | Operation::Minus => {
                let (b, a) = (stack.pop()?, stack.pop()?);
                let minus = matches!(op, Operation::Minus);
                stack.push(match (a, b) {
                    (Value::Opaque(why), _) | (_, Value::Opaque(why)) => Value::Opaque(why),
                    (a, Value::Const(k)) => a.add(if minus { k.wrapping_neg() } else { k }),
                    (Value::Const(k), b) if !minus => b.add(k),
                    _ => return None,
                });
            }
            Operation::Deref { .. } => match stack.pop()? {
                Value::Const(_) => return None,
                _ => stack.push(Value::Opaque(NotLocated::Memory)),
            },
            Operation::Nop => {}
            _ => return None,
        }
    }
    stack.pop()
}
