//! Naming addresses: the interface between the trace stage's symbolizers
//! (DWARF, addr2line, tree-sitter-c) and the analysis.
//!
//! The analysis asks a [`Namer`] three kinds of questions: what is the name
//! of a heap block allocated from this call stack, what stack or global
//! variable covers this address at this instruction, and which source line
//! made an access. Implementations cache their answers: the analysis asks
//! once per distinct call stack, instruction and (instruction, frame,
//! address) triple, not once per access.

/// Where a name came from, so messages can say how good it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameQuality {
    /// From the source statement (heap) or DWARF (stack, globals).
    Exact,
    /// A fallback such as `file.c:LINE` or a function name; `hint` says how
    /// to get the exact name (for example "set_src_path DIR").
    Fallback {
        /// What would give the exact name.
        hint: String,
    },
}

/// The name of a heap block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeapName {
    /// Base name without instance number: `arr`, `s->buf`, `rows[i]`, `prog.c:27`.
    pub name: String,
    /// Allocation site `file.c:LINE`, or `?`.
    pub site: String,
    /// Element size in bytes inferred from the pointer's type, 0 if unknown.
    pub elem_size: u32,
    /// Dimensions inferred from the size expression, outermost first.
    pub dims: Vec<u64>,
    /// Inner dimensions from the pointer's type when the size is not a
    /// compile-time constant: `[NK]` for `double (*A)[NK]`. Each block's
    /// outer dimension follows from its size ([`HeapName::dims_for`]).
    pub inner_dims: Vec<u64>,
    /// The type the block's elements have, as the source writes it
    /// (`struct node`, `P`, `double`); empty when unknown.
    pub elem_type: String,
    /// How good the name is.
    pub quality: NameQuality,
}

impl HeapName {
    /// A name that is not the source variable's (`file.c:LINE`, a function
    /// name, `heap`), with the hint that would give the exact one.
    pub fn fallback(name: String, site: String, hint: &str) -> HeapName {
        HeapName {
            name,
            site,
            elem_size: 0,
            dims: vec![],
            inner_dims: vec![],
            elem_type: String::new(),
            quality: NameQuality::Fallback { hint: hint.into() },
        }
    }

    /// The dimensions of one block of `size` bytes with this name: the
    /// constant dimensions, else the outer dimension that `size` gives
    /// with [`HeapName::inner_dims`], else none.
    pub fn dims_for(&self, size: u64) -> Vec<u64> {
        if !self.dims.is_empty() || self.inner_dims.is_empty() || self.elem_size == 0 {
            return self.dims.clone();
        }
        let row: u64 = self.inner_dims.iter().product::<u64>() * self.elem_size as u64;
        if row == 0 || size == 0 || !size.is_multiple_of(row) {
            return vec![];
        }
        let mut d = vec![size / row];
        d.extend_from_slice(&self.inner_dims);
        d
    }

    /// The name of a block known only by its allocation line.
    pub fn at_site(site: String) -> HeapName {
        HeapName::fallback(site.clone(), site, "set_src_path DIR")
    }
}

/// What kind of memory a stack or global name refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Heap block.
    Heap,
    /// Stack variable or frame slot.
    Stack,
    /// Global or static variable.
    Global,
}

impl Scope {
    /// One-letter code: `H`, `S`, `G`.
    pub fn code(self) -> &'static str {
        match self {
            Scope::Heap => "H",
            Scope::Stack => "S",
            Scope::Global => "G",
        }
    }
}

/// A named variable that covers an address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarName {
    /// Variable name: `u`, `h`, `garr`, or a frame label like `<main frame>`.
    pub name: String,
    /// Element path of the accessed byte: `u[3][4]`, `h.nbins`.
    pub element: String,
    /// Runtime start address of the variable.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
    /// Element size of an array variable, 0 otherwise.
    pub elem_size: u32,
    /// Array dimensions, outermost first.
    pub dims: Vec<u64>,
    /// Stack or global.
    pub scope: Scope,
    /// Valgrind's own client-request block (`_zzq_args`): not user data.
    pub client_request: bool,
    /// A frame slot, not a variable: return address, saved registers and
    /// spills of one function (`<main frame>`), one row per function.
    pub frame_slot: bool,
    /// The function a stack variable belongs to (`kernel_gemm`), so that
    /// two functions' variables of one name can be told apart; empty for
    /// globals and when unknown.
    pub function: String,
    /// When the byte is in a pointer to a structure, union or class, that
    /// type's name as DWARF gives it (`pcre2_match_data_8`): the type of
    /// a heap block the pointer holds. Empty otherwise.
    pub pointee: String,
    /// Where in `element` a library's internals begin
    /// ([`super::ElementPath::internal_at`]).
    pub internal_at: Option<usize>,
}

/// The element of a variable an address falls in, as C writes it, from the
/// variable's layout alone: `X[3][4]` for an array of known shape, `X[12]`
/// for a known element size, `X+12` (byte offset) otherwise, and the plain
/// name at offset 0 or outside the variable. Struct members need the
/// program's types: the analysis stores those names per location.
pub fn element_path(
    name: &str,
    base: u64,
    size: u64,
    elem_size: u32,
    dims: &[u64],
    addr: u64,
) -> String {
    let mut s = String::new();
    push_element_path(&mut s, name, base, size, elem_size, dims, addr);
    s
}

/// [`element_path`] appended to `out`: for callers that name millions of
/// locations in a row (the per-address table) and reuse one buffer, where
/// a `String` per location cost an allocation and a `format!` each.
pub fn push_element_path(
    out: &mut String,
    name: &str,
    base: u64,
    size: u64,
    elem_size: u32,
    dims: &[u64],
    addr: u64,
) {
    use std::fmt::Write;
    out.push_str(name);
    if addr < base || addr >= base.saturating_add(size.max(1)) {
        return;
    }
    let off = addr - base;
    if elem_size == 0 {
        if off != 0 {
            let _ = write!(out, "+{off}");
        }
        return;
    }
    let idx = off / elem_size as u64;
    if dims.len() < 2 {
        let _ = write!(out, "[{idx}]");
        return;
    }
    // The index in each dimension, outermost first: the elements one step
    // of dimension k spans are the product of the extents inside it (a
    // product past 2^64 is more than any index, as is its saturated value),
    // and every dimension but the outermost wraps at its extent.
    for k in 0..dims.len() {
        let span = dims[k + 1..]
            .iter()
            .fold(1u64, |p, d| p.saturating_mul((*d).max(1)));
        let i = idx / span;
        let i = if k == 0 { i } else { i % dims[k].max(1) };
        let _ = write!(out, "[{i}]");
    }
}

/// Where one frame's value of a register is at a region's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegSource {
    /// In the register itself: the snapshot's registers (DWARF number).
    Current(u16),
    /// In the stack slot at this address, where a frame it called saved
    /// it: one of the snapshot's stack words.
    Saved(u64),
}

/// A local that a register holds at a region's start: the innermost frame
/// holds its registers, and a caller's callee-saved registers are where
/// the unwind rules of the frames it called saved them (see
/// [`Namer::register_holders`]).
#[derive(Clone, Debug)]
pub struct RegHolder {
    /// The frame's stack pointer: ranks the holder as a stack word of that
    /// frame would be.
    pub sp: u64,
    /// The local, named as an access of its whole would be.
    pub var: VarName,
    /// Where the register's value is.
    pub source: RegSource,
}

/// The callee-saved general registers of the x86-64 System V ABI, by DWARF
/// number (rbx, rbp, r12 to r15): the only registers whose values a
/// caller keeps across a call.
pub const CALLEE_SAVED: [u16; 6] = [3, 6, 12, 13, 14, 15];

/// Names addresses for the analysis. See the module documentation.
pub trait Namer {
    /// Told of every file mapping in the trace, in order, before the
    /// accesses that need it (the trace records the load map first).
    fn on_map(&mut self, _map: &crate::trace::record::Mapping) {}
    /// Names the heap block allocated with this call stack (return
    /// addresses, innermost first).
    fn heap_name(&mut self, stack: &[u64]) -> HeapName;
    /// Names the block a stack allocation at `ip` made (a variable-length
    /// array's declaration, or a statement storing `alloca`'s result), or
    /// `None` when the statement at `ip` is neither: then the bytes stay in
    /// their function's frame row.
    fn stack_block_name(&mut self, _ip: u64) -> Option<HeapName> {
        None
    }
    /// Names the memory a call of `mmap` with this call stack (innermost
    /// first) mapped, by the statement that stores the result as heap
    /// blocks are named; `None` when no statement of the program's calls
    /// `mmap` there (the loader's and libraries' own mappings).
    fn mapped_name(&mut self, _stack: &[u64]) -> Option<HeapName> {
        None
    }
    /// Names the heap block allocated at source line `file:line` (Gleipnir
    /// text traces give only this). The default names it `file:line`.
    fn heap_name_at(&mut self, file: &str, line: u32) -> HeapName {
        HeapName::at_site(format!("{file}:{line}"))
    }
    /// How the CFA (canonical frame address) of the frame executing `ip`
    /// follows from the registers: `(from_fp, offset)` means CFA = (fp if
    /// `from_fp`, else sp) + offset. For a realigned frame that keeps its
    /// CFA in memory, the top of its frame record (fp + 16), which nests
    /// frames as the CFA does. `None` when unknown. The analysis asks once
    /// per instruction site, to keep a shadow stack of live frames.
    fn cfa_rule(&mut self, _ip: u64) -> Option<(bool, i64)> {
        None
    }
    /// Names a stack address accessed by the instruction at `ip` with stack
    /// pointer `sp` and frame pointer `fp`. `frames` are the thread's other
    /// live frames, outermost first (the innermost is last), each as (an
    /// instruction inside the frame's function, its stack pointer, its
    /// frame pointer): the frames of the call stack at GL_START and those
    /// entered since, so addresses in any caller's frame are named, however
    /// deep. Outermost first is the order the analysis's shadow stack keeps
    /// them in, so it lends its own vector; a search from the innermost
    /// frame out visits only the frames below the address.
    fn stack_name(
        &mut self,
        ip: u64,
        sp: u64,
        fp: u64,
        addr: u64,
        frames: &[(u64, u64, u64)],
    ) -> Option<VarName>;
    /// The member path of byte `offset` of a heap block named `name`, of
    /// `size` bytes, whose elements have type `elem_type` (as
    /// [`HeapName::elem_type`]): `n.next`, `ps[3].y`. `None` when the type
    /// has no members. Asked once per location of such a block.
    fn heap_element(
        &mut self,
        _elem_type: &str,
        _name: &str,
        _size: u64,
        _offset: u64,
    ) -> Option<super::ElementPath> {
        None
    }
    /// The size in bytes of the structure, union or class type the
    /// program calls `type_name` (as [`VarName::pointee`] gives it), when
    /// the debug information knows one.
    fn record_size(&mut self, _type_name: &str) -> Option<u64> {
        None
    }
    /// The locals that registers hold at a region's start, in a thread
    /// whose call stack is `frames`, innermost first, each as (instruction,
    /// stack pointer, frame pointer), the callers' instructions one byte
    /// back into their calls. The innermost frame's registers are the
    /// snapshot's; a caller's callee-saved register is in the slot where
    /// the nearest frame it called saved it, or still in the register when
    /// none did. The walk stops at the first frame whose unwind rule is
    /// unknown: past it, no register can be placed. Empty by default.
    fn register_holders(&mut self, _frames: &[(u64, u64, u64)]) -> Vec<RegHolder> {
        Vec::new()
    }
    /// Names a global or static address.
    fn global_name(&mut self, addr: u64) -> Option<VarName>;
    /// `file.c:LINE` of the instruction at `ip`, if known.
    fn source_line(&mut self, ip: u64) -> Option<String>;
    /// Messages about what could not be named well (missing sources, no
    /// debug info), each said once.
    fn take_notes(&mut self) -> Vec<String>;
}

/// A namer that knows nothing: every heap block is `heap`, nothing else is
/// named. Used for traces whose program is not available.
#[derive(Default)]
pub struct NullNamer;

impl Namer for NullNamer {
    fn heap_name(&mut self, _stack: &[u64]) -> HeapName {
        HeapName::fallback("heap".into(), "?".into(), "load_exe the traced program")
    }
    fn stack_name(
        &mut self,
        _: u64,
        _: u64,
        _: u64,
        _: u64,
        _: &[(u64, u64, u64)],
    ) -> Option<VarName> {
        None
    }
    fn global_name(&mut self, _addr: u64) -> Option<VarName> {
        None
    }
    fn source_line(&mut self, _ip: u64) -> Option<String> {
        None
    }
    fn take_notes(&mut self) -> Vec<String> {
        vec![]
    }
}

/// Orders names as people count: runs of digits by their value, so
/// `n#2` comes before `n#10` and `f.c:9` before `f.c:10`; the rest by
/// character.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return Ordering::Equal,
            (None, _) => return Ordering::Less,
            (_, None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let run = |s: &[u8]| s.iter().take_while(|c| c.is_ascii_digit()).count();
                let (m, n) = (run(x), run(y));
                // Without leading zeros, a longer run is a larger number.
                let trim = |s: &[u8]| {
                    let z = s.iter().take_while(|c| **c == b'0').count();
                    s[z.min(s.len() - 1)..].to_vec()
                };
                let (p, q) = (trim(&x[..m]), trim(&y[..n]));
                let o = p.len().cmp(&q.len()).then_with(|| p.cmp(&q));
                if o != Ordering::Equal {
                    return o;
                }
                x = &x[m..];
                y = &y[n..];
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(d);
                }
                x = &x[1..];
                y = &y[1..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::element_path;

    /// Elements worked by hand: `X` is double X[3][4] at 0x1000 (96 bytes),
    /// `c` a 3-D char c[2][3][4] at 0x2000, `b` a block of unknown shape.
    #[test]
    fn elements_are_named_as_c_writes_them() {
        let x = |addr| element_path("X", 0x1000, 96, 8, &[3, 4], addr);
        assert_eq!(x(0x1000), "X[0][0]");
        // (2 * 4 + 3) * 8 = 88 bytes in; a byte inside the element too.
        assert_eq!(x(0x1000 + 88), "X[2][3]");
        assert_eq!(x(0x1000 + 95), "X[2][3]");
        assert_eq!(x(0x1000 + 96), "X");
        assert_eq!(x(0xfff), "X");
        // 23 = (1 * 3 + 2) * 4 + 3.
        assert_eq!(
            element_path("c", 0x2000, 24, 1, &[2, 3, 4], 0x2000 + 23),
            "c[1][2][3]"
        );
        assert_eq!(element_path("v", 0x3000, 40, 4, &[10], 0x3000 + 28), "v[7]");
        assert_eq!(element_path("b", 0x4000, 64, 0, &[], 0x4000 + 12), "b+12");
        assert_eq!(element_path("b", 0x4000, 64, 0, &[], 0x4000), "b");
    }
}
