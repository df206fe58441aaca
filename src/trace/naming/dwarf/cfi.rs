//! Call frame information: where the canonical frame address (CFA) is at
//! each instruction, and which frame slots hold the return address and the
//! registers the prologue saved.
//!
//! The rows of `.eh_frame` (or `.debug_frame`) are read once into a sorted
//! table; a lookup is a binary search. For `rbp`-based rows the prologue is
//! read from the code (`push %rbp; mov %rsp,%rbp; push ...; sub $n,%rsp`) so
//! that `rbp`, and from it the CFA, can be recovered from the stack pointer
//! alone, which is all a traced access carries.

use std::borrow::Cow;

use gimli::{
    BaseAddresses, CfaRule, CieOrFde, RegisterRule, RunTimeEndian, UnwindContext, UnwindSection,
};
use object::{Object, ObjectSection, SectionKind};

use super::die::R;

/// DWARF register number of the stack pointer (`rsp`) on x86-64.
const X86_64_RSP: u16 = 7;
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
        let row = &self.rows[self.row_index(ip)?];
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

    /// See [`super::DebugVars::cfa_rule`].
    pub(super) fn cfa_rule(&self, ip: u64) -> Option<(bool, i64)> {
        let row = &self.rows[self.row_index(ip)?];
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

    /// See [`super::DebugVars::classify_frame_slot`].
    pub(super) fn classify_frame_slot(&self, ip: u64, cfa: u64, addr: u64) -> Option<FrameSlot> {
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
        let row = &self.rows[i];
        let next = self
            .rows
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

/// Appends the rows of every FDE of `section`, numbering the FDEs on from
/// those already in `rows`.
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
    fn leaf_prologue_without_sub() {
        // push %rbp; mov %rsp,%rbp; mov %edi,-0x4(%rbp)
        let code: Vec<u8> = vec![0x55, 0x48, 0x89, 0xe5, 0x89, 0x7d, 0xfc];
        let text = vec![(0x400, Cow::Borrowed(&code[..]))];
        let setup = analyse_prologue(&text, 0x404).unwrap();
        assert_eq!(setup.fp_minus_sp(0x404), Some(0));
        assert_eq!(setup.fp_minus_sp(0x406), Some(0));
    }
}
