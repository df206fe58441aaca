//! Call frame information: where the canonical frame address (CFA) is at
//! each instruction, and which frame slots hold the return address and the
//! registers the prologue saved.
//!
//! The rows of `.eh_frame` (or `.debug_frame`) are read once into a sorted
//! table; a lookup is a binary search. For `rbp`-based rows the prologue is
//! read from the code (`push %rbp; mov %rsp,%rbp; push ...; sub $n,%rsp`) so
//! that `rbp`, and from it the CFA, can be recovered from the stack pointer
//! alone, where the frame pointer is not known.
//!
//! A frame realigned for an over-aligned local with a dynamic realign
//! argument pointer (gcc's DRAP, when the body moves rsp) keeps its CFA in
//! a slot of the frame (`DW_CFA_def_cfa_expression: DW_OP_breg6 -8;
//! DW_OP_deref`), which the trace, holding registers but no memory values,
//! cannot read. Such a row still bounds the frame when it saves rbp at
//! `[rbp]`: rbp then points at a frame record (the caller's rbp, and the
//! return address above it), so the frame's own part ends at `fp + 16`.

use std::borrow::Cow;

use gimli::{
    BaseAddresses, CfaRule, CieOrFde, Operation, RegisterRule, RunTimeEndian, UnwindContext,
    UnwindSection,
};
use object::{Object, ObjectSection, SectionKind};

use super::die::R;

/// DWARF register number of the stack pointer (`rsp`) on x86-64.
pub(super) const X86_64_RSP: u16 = 7;
/// DWARF register number of the frame pointer (`rbp`) on x86-64.
pub(super) const X86_64_RBP: u16 = 6;

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

/// How the CFA is computed in one row of the call frame information.
#[derive(Clone, Copy, Debug)]
enum CfaLite {
    /// CFA = register + offset (also from an expression that says just
    /// that).
    Reg { reg: u16, offset: i64 },
    /// An expression that reads the CFA from memory (`DW_OP_deref`): a
    /// frame realigned with a dynamic realign argument pointer keeps it in a
    /// slot. `frame_record`: the row saves rbp at `[rbp]`, so the frame's
    /// own part ends at `fp + 16` (see the module's comment).
    Stored { frame_record: bool },
    /// Anything else (a register the trace does not record, an expression
    /// of another form): not evaluated.
    Unsupported,
}

/// What a saved register's slot is located from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotBase {
    /// `DW_CFA_offset`: an offset from the CFA.
    Cfa,
    /// `DW_CFA_expression: DW_OP_breg6 n`: an offset from rbp, as rows of a
    /// frame that keeps its CFA in memory say.
    Fp,
}

/// A register the prologue saved in the frame.
#[derive(Clone, Copy, Debug)]
struct SavedSlot {
    /// DWARF register number.
    register: u16,
    /// What `offset` is counted from.
    base: SlotBase,
    offset: i64,
}

impl SavedSlot {
    /// The slot's address in a frame whose CFA is `cfa` (when known) and
    /// whose rbp is `fp` (when known).
    fn address(&self, cfa: Option<u64>, fp: Option<u64>) -> Option<u64> {
        let base = match self.base {
            SlotBase::Cfa => cfa?,
            SlotBase::Fp => fp?,
        };
        Some(base.wrapping_add_signed(self.offset))
    }
}

/// Where a frame lies: its CFA when the unwind rule gives it, and the top
/// of the frame (the CFA, or the end of the frame record when the CFA is
/// kept in memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Bounds {
    pub(super) cfa: Option<u64>,
    pub(super) top: u64,
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
    /// Registers saved in memory.
    saved: Vec<SavedSlot>,
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
    /// The address after an `and $-n,%rsp` that realigns the stack: from
    /// there on rsp is no fixed distance below rbp.
    realigned: Option<u64>,
}

impl FrameSetup {
    /// rbp - rsp at `ip`, assuming the body does not move rsp further;
    /// `None` before the frame pointer is set and after a realignment.
    fn fp_minus_sp(&self, ip: u64) -> Option<u64> {
        if ip < self.established || self.realigned.is_some_and(|r| ip >= r) {
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

/// The unwind table of one object: its rows sorted by address, not
/// overlapping, and the prologue analysis of each `rbp`-based FDE.
#[derive(Debug, Default)]
pub(super) struct Unwind {
    /// Sorted by start; rows do not overlap.
    rows: Vec<CfiRow>,
    /// Prologue analysis per FDE, for rbp-based CFA rules.
    setups: Vec<Option<FrameSetup>>,
    /// Whether the object is x86-64 code, the only architecture whose
    /// register rules are evaluated.
    x86_64: bool,
}

impl Unwind {
    /// Reads the unwind table of `obj` (see [`read_cfi`]).
    pub(super) fn read(obj: &object::File<'_>, endian: RunTimeEndian) -> Unwind {
        let x86_64 = obj.architecture() == object::Architecture::X86_64;
        let (rows, setups) = read_cfi(obj, endian, x86_64);
        Unwind {
            rows,
            setups,
            x86_64,
        }
    }

    /// The CFA at `ip` from the stack pointer `sp` (see
    /// [`super::DebugVars::cfa`]); `rbp`-based rows are evaluated only when
    /// `prologue_trusted()` says the function's prologue may be read.
    pub(super) fn cfa(
        &self,
        ip: u64,
        sp: u64,
        prologue_trusted: impl FnOnce() -> bool,
    ) -> Option<u64> {
        let i = self.row_index(ip)?;
        let row = &self.rows[i];
        match row.cfa {
            CfaLite::Reg { reg, offset } if self.x86_64 && reg == X86_64_RSP => {
                Some(sp.wrapping_add_signed(offset))
            }
            CfaLite::Reg { reg, offset } if self.x86_64 && reg == X86_64_RBP => {
                if !prologue_trusted() {
                    return None;
                }
                let setup = self.setups.get(row.fde as usize)?.as_ref()?;
                let fp = sp.checked_add(setup.fp_minus_sp(ip)?)?;
                Some(fp.wrapping_add_signed(offset))
            }
            _ => None,
        }
    }

    /// See [`super::DebugVars::cfa_with_fp`].
    pub(super) fn cfa_with_fp(&self, ip: u64, sp: u64, fp: u64) -> Option<u64> {
        self.bounds(ip, sp, fp)?.cfa
    }

    /// The CFA and top of the frame executing `ip` with stack pointer `sp`
    /// and frame pointer `fp`; `None` when the row cannot be evaluated.
    pub(super) fn bounds(&self, ip: u64, sp: u64, fp: u64) -> Option<Bounds> {
        let (from_fp, offset, exact) = self.rule(ip)?;
        let at = if from_fp { fp } else { sp }.wrapping_add_signed(offset);
        Some(Bounds {
            cfa: exact.then_some(at),
            top: at,
        })
    }

    /// See [`super::DebugVars::cfa_rule`].
    pub(super) fn cfa_rule(&self, ip: u64) -> Option<(bool, i64)> {
        self.rule(ip).map(|(from_fp, offset, _)| (from_fp, offset))
    }

    /// The rule of the frame's top at `ip`: (from fp rather than sp,
    /// offset, whether the top is the CFA itself).
    fn rule(&self, ip: u64) -> Option<(bool, i64, bool)> {
        let row = &self.rows[self.row_index(ip)?];
        match row.cfa {
            CfaLite::Reg { reg, offset } if self.x86_64 && reg == X86_64_RSP => {
                Some((false, offset, true))
            }
            CfaLite::Reg { reg, offset } if self.x86_64 && reg == X86_64_RBP => {
                Some((true, offset, true))
            }
            CfaLite::Stored { frame_record: true } if self.x86_64 => Some((true, 16, false)),
            _ => None,
        }
    }

    /// See [`super::DebugVars::classify_frame_slot`]: classifies `addr`
    /// in the frame executing `ip` whose CFA is `cfa` (when known), rbp `fp`
    /// (when known) and top `top`. With `spill` false, only the slots the
    /// unwind rules name (return address, saved registers) are answered.
    pub(super) fn frame_slot(
        &self,
        ip: u64,
        cfa: Option<u64>,
        fp: Option<u64>,
        top: u64,
        addr: u64,
        spill: bool,
    ) -> Option<FrameSlot> {
        if addr >= top {
            return None;
        }
        let Some(i) = self.row_index(ip) else {
            // No unwind information: fall back on the x86-64 convention.
            let ra = cfa.is_some_and(|c| self.x86_64 && addr >= c.wrapping_sub(8));
            return match (ra, spill) {
                (true, _) => Some(FrameSlot::ReturnAddress),
                (false, true) => Some(FrameSlot::Spill),
                (false, false) => None,
            };
        };
        let row = &self.rows[i];
        let next = self
            .rows
            .get(i + 1)
            .filter(|n| n.fde == row.fde && n.start == row.end);
        let rules = row
            .saved
            .iter()
            .chain(next.into_iter().flat_map(|n| n.saved.iter()));
        for slot in rules {
            let Some(start) = slot.address(cfa, fp) else {
                continue;
            };
            if addr >= start && addr - start < 8 {
                return Some(if slot.register == row.ra {
                    FrameSlot::ReturnAddress
                } else {
                    FrameSlot::SavedRegister {
                        register: slot.register,
                        name: self.register_name(slot.register),
                    }
                });
            }
        }
        spill.then_some(FrameSlot::Spill)
    }

    /// The registers the row at `ip` says are saved in the frame, with
    /// each slot's address in a frame whose CFA is `cfa` and rbp `fp` (when
    /// known); the return address is left out.
    pub(super) fn saved_registers(
        &self,
        ip: u64,
        cfa: Option<u64>,
        fp: Option<u64>,
    ) -> Vec<(u16, u64)> {
        let Some(i) = self.row_index(ip) else {
            return Vec::new();
        };
        let row = &self.rows[i];
        row.saved
            .iter()
            .filter(|slot| slot.register != row.ra)
            .filter_map(|slot| Some((slot.register, slot.address(cfa, fp)?)))
            .collect()
    }

    /// The conventional name of DWARF register `reg`, when known.
    fn register_name(&self, reg: u16) -> Option<&'static str> {
        if self.x86_64 {
            gimli::X86_64::register_name(gimli::Register(reg))
        } else {
            None
        }
    }

    /// The row covering `ip`.
    fn row_index(&self, ip: u64) -> Option<usize> {
        let i = self
            .rows
            .partition_point(|r| r.start <= ip)
            .checked_sub(1)?;
        (ip < self.rows[i].end).then_some(i)
    }
}

/// Reads the unwind rows of `.eh_frame` (or `.debug_frame` when there is no
/// `.eh_frame`), and analyses the prologue of each FDE whose CFA is
/// rbp-based. Malformed entries are skipped: missing CFI only makes
/// [`super::DebugVars::cfa`] return `None`.
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
        collect_rows(&section, &bases, &mut rows, address_size);
    }
    if rows.is_empty() {
        if let Some(data) = data_of(".debug_frame").filter(|d| !d.is_empty()) {
            let mut section = gimli::DebugFrame::new(&data, endian);
            section.set_address_size(address_size);
            collect_rows(&section, &BaseAddresses::default(), &mut rows, address_size);
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

/// Appends the rows of every FDE of `section`, numbering the FDEs on from
/// those already in `rows`.
fn collect_rows<'d, S: UnwindSection<R<'d>>>(
    section: &S,
    bases: &BaseAddresses,
    rows: &mut Vec<CfiRow>,
    address_size: u8,
) {
    // Only DW_OP_addr reads the encoding, which no rule read here uses.
    let encoding = gimli::Encoding {
        format: gimli::Format::Dwarf32,
        version: 4,
        address_size,
    };
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
            let saved: Vec<SavedSlot> = row
                .registers()
                .filter_map(|(reg, rule)| {
                    let (base, offset) = match rule {
                        RegisterRule::Offset(off) => (SlotBase::Cfa, *off),
                        RegisterRule::Expression(e) => {
                            let expr = e.get(section).ok()?;
                            match register_offset(expr, encoding)? {
                                (X86_64_RBP, off) => (SlotBase::Fp, off),
                                _ => return None,
                            }
                        }
                        _ => return None,
                    };
                    Some(SavedSlot {
                        register: reg.0,
                        base,
                        offset,
                    })
                })
                .collect();
            let cfa = match row.cfa() {
                CfaRule::RegisterAndOffset { register, offset } => CfaLite::Reg {
                    reg: register.0,
                    offset: *offset,
                },
                CfaRule::Expression(e) => match e.get(section) {
                    Ok(expr) => cfa_expression(expr, encoding, &saved),
                    Err(_) => CfaLite::Unsupported,
                },
            };
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

/// The `(register, offset)` of an expression that is just `DW_OP_bregN
/// offset`.
fn register_offset(
    expr: gimli::Expression<R<'_>>,
    encoding: gimli::Encoding,
) -> Option<(u16, i64)> {
    let mut ops = expr.operations(encoding);
    let first = ops.next().ok()??;
    if !matches!(ops.next(), Ok(None)) {
        return None;
    }
    match first {
        Operation::RegisterOffset {
            register,
            offset,
            base_type,
        } if base_type.0 == 0 => Some((register.0, offset)),
        _ => None,
    }
}

/// The CFA rule an expression gives: `DW_OP_bregN offset` is a register
/// rule; an expression that reads memory (`DW_OP_deref`: gcc's realigned
/// frames keep the CFA in a slot) is stored, bounded by the frame record
/// when `saved` puts rbp at `[rbp]`; anything else is not evaluated.
fn cfa_expression(
    expr: gimli::Expression<R<'_>>,
    encoding: gimli::Encoding,
    saved: &[SavedSlot],
) -> CfaLite {
    if let Some((reg, offset)) = register_offset(expr, encoding) {
        return CfaLite::Reg { reg, offset };
    }
    let mut ops = expr.operations(encoding);
    let mut reads_memory = false;
    loop {
        match ops.next() {
            Ok(Some(Operation::Deref { .. })) => reads_memory = true,
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(_) => return CfaLite::Unsupported,
        }
    }
    if !reads_memory {
        return CfaLite::Unsupported;
    }
    let frame_record = saved
        .iter()
        .any(|s| s.register == X86_64_RBP && s.base == SlotBase::Fp && s.offset == 0);
    CfaLite::Stored { frame_record }
}

/// Reads the x86-64 instructions that follow `mov %rsp,%rbp` (which must end
/// just before `established`) and records how far each moves `rsp` below
/// `rbp`: `push reg`, `sub $imm8,%rsp`, `sub $imm32,%rsp`. Stops at the first
/// other instruction, or after an `and $imm,%rsp` that realigns the stack
/// for an over-aligned local (rsp is then no fixed distance below rbp).
/// `None` if the bytes before `established` are not `mov %rsp,%rbp` or the
/// code is not in a text section.
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
    let mut realigned = None;
    for _ in 0..16 {
        let b = |i: usize| bytes.get(pos + i).copied();
        let and_len = match (b(0), b(1), b(2)) {
            (Some(0x48), Some(0x83), Some(0xe4)) => Some(4),
            (Some(0x48), Some(0x81), Some(0xe4)) => Some(7),
            _ => None,
        };
        if let Some(len) = and_len {
            realigned = Some(base + (pos + len) as u64);
            break;
        }
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
    Some(FrameSetup {
        established,
        steps,
        realigned,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_realigned_stack_is_no_fixed_distance_below_rbp() {
        // push %rbp; mov %rsp,%rbp; and $-64,%rsp; sub $0x300,%rsp
        let code: Vec<u8> = vec![
            0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xe4, 0xc0, 0x48, 0x81, 0xec, 0, 3, 0, 0, 0x90,
        ];
        let text = vec![(0x1000, Cow::Borrowed(&code[..]))];
        let setup = analyse_prologue(&text, 0x1004).unwrap();
        assert_eq!(setup.fp_minus_sp(0x1004), Some(0), "before the and");
        assert_eq!(setup.fp_minus_sp(0x1008), None, "after it");
        assert_eq!(setup.fp_minus_sp(0x100f), None, "in the body");
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
