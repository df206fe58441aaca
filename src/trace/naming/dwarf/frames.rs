//! Naming stack accesses: the frame of the instruction (its CFA, from the
//! unwind table), the local or parameter covering the address in it, and
//! failing that which frame slot it is (return address, saved register,
//! spill).
//!
//! A [`Frame`] carries the stack and frame pointers a trace records with
//! each access beside the CFA, so that locals located from rsp or rbp (in
//! frames realigned for an over-aligned local) are found as those located
//! from the CFA are.

use super::cfi::FrameSlot;
use super::vars::{NotLocated, VarLocation, Variable};
use super::DebugVars;

/// A live frame as a trace sees it: an instruction of its function, the
/// stack and frame pointers there, and where the frame lies. Made by
/// [`DebugVars::frame`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// An instruction of the frame's function (file address).
    pub ip: u64,
    /// The stack pointer (rsp) before that instruction.
    pub sp: u64,
    /// The frame pointer (rbp) before that instruction.
    pub fp: u64,
    /// The canonical frame address, when the unwind rule at `ip` computes
    /// it from sp or fp; `None` where the frame keeps it in memory (gcc's
    /// realigned frames whose body moves rsp).
    pub cfa: Option<u64>,
    /// One past the frame's highest byte: the CFA, or where the CFA is kept
    /// in memory the end of the frame record at rbp (`fp + 16`), which lies
    /// at or below the CFA. Frames nest by it as by their CFAs.
    pub top: u64,
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

impl DebugVars {
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

    /// The local or parameter located from the CFA of the frame executing
    /// `ip`, whose CFA is `cfa`, that covers the absolute stack address
    /// `addr`, with the byte offset of `addr` inside it. When blocks
    /// overlap, the innermost variable in scope wins. Locals located from
    /// rsp or rbp are not considered: see [`DebugVars::local_in`]. Does not
    /// allocate.
    pub fn local_at(&self, ip: u64, cfa: u64, addr: u64) -> Option<(&Variable, u64)> {
        self.covering(ip, addr, |v| match v.location {
            VarLocation::FrameOffset(off) => Some(i128::from(cfa) + i128::from(off)),
            _ => None,
        })
    }

    /// The frame executing `ip` with stack pointer `sp` and frame pointer
    /// `fp`; `None` when the unwind rule at `ip` cannot be evaluated from
    /// them (no row, a register the trace does not record).
    pub fn frame(&self, ip: u64, sp: u64, fp: u64) -> Option<Frame> {
        let b = self.unwind.bounds(ip, sp, fp)?;
        Some(Frame {
            ip,
            sp,
            fp,
            cfa: b.cfa,
            top: b.top,
        })
    }

    /// The address of local `var` of `frame`'s function in that frame:
    /// the CFA, rsp or rbp plus its offset; `None` for a local that cannot
    /// be located there (see [`NotLocated`]).
    pub fn local_base(&self, frame: &Frame, var: &Variable) -> Option<u64> {
        self.base_in(frame, var).and_then(|b| u64::try_from(b).ok())
    }

    /// [`DebugVars::local_base`], unbounded.
    fn base_in(&self, frame: &Frame, var: &Variable) -> Option<i128> {
        let (base, off) = match var.location {
            VarLocation::FrameOffset(off) => (frame.cfa?, off),
            VarLocation::Register { register, offset } => match register {
                super::cfi::X86_64_RSP => (frame.sp, offset),
                super::cfi::X86_64_RBP => (frame.fp, offset),
                _ => return None,
            },
            _ => return None,
        };
        Some(i128::from(base) + i128::from(off))
    }

    /// The local or parameter of `frame` covering the absolute stack
    /// address `addr`, with the byte offset of `addr` inside it, whatever
    /// it is located from (CFA, rsp, rbp). A slot the unwind rules say holds
    /// the return address or a saved register is never a local: in a
    /// realigned frame's prologue and epilogue rsp is not where the body
    /// keeps it, so a local located from rsp would land on the registers
    /// pushed and popped there. Does not allocate.
    pub fn local_in(&self, frame: &Frame, addr: u64) -> Option<(&Variable, u64)> {
        let saved =
            self.unwind
                .frame_slot(frame.ip, frame.cfa, Some(frame.fp), frame.top, addr, false);
        if saved.is_some() {
            return None;
        }
        self.covering(frame.ip, addr, |v| self.base_in(frame, v))
    }

    /// The locals of the function executing `ip`, in scope there, that a
    /// register holds whole at `ip` and that can hold an address (see
    /// `holds_address`), each with its DWARF register; innermost
    /// declaration first. Allocates the returned vector.
    pub fn register_locals_at(&self, ip: u64) -> Vec<(&Variable, u16)> {
        self.locals_at(ip)
            .into_iter()
            .filter(|v| v.type_id.is_some_and(|t| self.types.holds_address(t)))
            .filter_map(|v| Some((v, v.register_at(ip)?)))
            .collect()
    }

    /// The registers `frame` saved in its stack at its instruction, each
    /// with its slot's address: where the caller's value of each is. The
    /// return address is left out.
    pub fn saved_registers(&self, frame: &Frame) -> Vec<(u16, u64)> {
        self.unwind
            .saved_registers(frame.ip, frame.cfa, Some(frame.fp))
    }

    /// The frame slot of `frame` holding `addr` when no local covers it
    /// ([`DebugVars::classify_frame_slot`] for a [`Frame`]): `None` at or
    /// above the frame's top.
    pub fn frame_slot_in(&self, frame: &Frame, addr: u64) -> Option<FrameSlot> {
        self.unwind
            .frame_slot(frame.ip, frame.cfa, Some(frame.fp), frame.top, addr, true)
    }

    /// The locals of `frame`'s function (whatever their scope), of a known
    /// size, that sit in the frame but cannot be located in it from the
    /// trace: those located from a register it does not record, and,
    /// where the frame keeps its CFA in memory, those located from the CFA
    /// (its stack arguments). Their accesses fall in frame rows; this says
    /// why. Locals read through a pointer (`DW_OP_deref`: variable-length
    /// arrays, structures passed by invisible reference) are left out: their
    /// memory is a block of its own or the caller's.
    pub fn unlocated_in(&self, frame: &Frame) -> Vec<(&Variable, NotLocated)> {
        let Some(f) = self.function_at(frame.ip) else {
            return Vec::new();
        };
        self.function_locals(f)
            .iter()
            .filter(|v| v.size > 0)
            .filter_map(|v| match v.location {
                VarLocation::NotLocated(why @ NotLocated::Register(_)) => Some((v, why)),
                VarLocation::FrameOffset(_) if frame.cfa.is_none() => {
                    Some((v, NotLocated::StoredCfa))
                }
                _ => None,
            })
            .collect()
    }

    /// The innermost local of the function executing `ip`, in scope there,
    /// whose bytes from `base(v)` cover `addr`.
    fn covering(
        &self,
        ip: u64,
        addr: u64,
        base: impl Fn(&Variable) -> Option<i128>,
    ) -> Option<(&Variable, u64)> {
        let f = self.function_at(ip)?;
        let mut best: Option<(&Variable, u64)> = None;
        for v in self.function_locals(f) {
            let Some(start) = base(v) else {
                continue;
            };
            let inside = i128::from(addr) - start;
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
        self.unwind.cfa(ip, sp, || {
            self.function_at(ip).is_some_and(|f| !f.optimized)
        })
    }

    /// The CFA of the frame executing `ip` given both the stack pointer and
    /// the frame pointer (`rbp`) before the instruction. Exact whenever the
    /// unwind rule is register-based, which it is for all gcc output but
    /// the realigned frames that keep their CFA in memory (`None` there).
    pub fn cfa_with_fp(&self, ip: u64, sp: u64, fp: u64) -> Option<u64> {
        self.unwind.cfa_with_fp(ip, sp, fp)
    }

    /// The unwind rule of the frame's top at `ip` ([`Frame::top`]):
    /// `(true, off)` for rbp + off, `(false, off)` for rsp + off. That is the
    /// CFA's rule where it is register-based; where the frame keeps its CFA
    /// in memory, `(true, 16)`, the end of the frame record, which orders
    /// frames as their CFAs do. `None` when there is no row or the rule
    /// cannot be evaluated.
    pub fn cfa_rule(&self, ip: u64) -> Option<(bool, i64)> {
        self.unwind.cfa_rule(ip)
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
        self.unwind.frame_slot(ip, Some(cfa), None, cfa, addr, true)
    }
}
