//! Naming stack accesses: the frame of the instruction (its CFA, from the
//! unwind table), the local or parameter covering the address in it, and
//! failing that which frame slot it is (return address, saved register,
//! spill).

use super::cfi::FrameSlot;
use super::vars::{VarLocation, Variable};
use super::DebugVars;

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
        self.unwind.cfa(ip, sp, || {
            self.function_at(ip).is_some_and(|f| !f.optimized)
        })
    }

    /// The CFA of the frame executing `ip` given both the stack pointer and
    /// the frame pointer (`rbp`) before the instruction. Exact whenever the
    /// unwind rule is register-based, which it is for all gcc output.
    pub fn cfa_with_fp(&self, ip: u64, sp: u64, fp: u64) -> Option<u64> {
        self.unwind.cfa_with_fp(ip, sp, fp)
    }

    /// The unwind rule of the CFA at `ip`: `(true, off)` for CFA = rbp +
    /// off, `(false, off)` for CFA = rsp + off; `None` when there is no row
    /// or the rule is not register-based.
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
        self.unwind.classify_frame_slot(ip, cfa, addr)
    }
}
