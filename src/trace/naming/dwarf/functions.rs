//! Functions with code: their address ranges, and the locals and
//! parameters each declares, grouped so that naming a stack access scans
//! one function's variables only.

use std::ops::Range;

use super::vars::Variable;

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
    /// Indices of the function's locals in [`FunctionTable`]'s locals.
    locals: Range<usize>,
    /// Whether its compilation unit was built with optimisation, in which
    /// case the prologue may be interleaved with the body and cannot be read
    /// to recover `rbp` from `rsp`.
    pub(super) optimized: bool,
}

impl Function {
    /// A function named `name` whose code is `ranges` (file addresses,
    /// non-empty), without locals yet; `None` when it has no code (a
    /// declaration, or an inline function never emitted out of line).
    pub(super) fn with_code(
        name: String,
        ranges: Vec<Range<u64>>,
        optimized: bool,
    ) -> Option<Self> {
        let low_pc = ranges.iter().map(|r| r.start).min()?;
        let high_pc = ranges.iter().map(|r| r.end).max()?;
        Some(Function {
            name,
            low_pc,
            high_pc,
            ranges,
            locals: 0..0,
            optimized,
        })
    }
}

/// The functions of one object sorted by address, their locals grouped
/// by function, and an index of code ranges for lookups by address.
#[derive(Debug, Default)]
pub(super) struct FunctionTable {
    /// Sorted by `low_pc`.
    functions: Vec<Function>,
    /// Grouped by function (see `Function::locals`).
    locals: Vec<Variable>,
    /// (start, end, function index), sorted by start.
    fn_ranges: Vec<(u64, u64, usize)>,
}

impl FunctionTable {
    /// Sorts `functions` by address and gives each its locals: `locals`
    /// pairs a variable with the index in `functions` of its declaring
    /// function. Time O(n log n) in functions plus locals.
    pub(super) fn build(functions: Vec<Function>, mut locals: Vec<(usize, Variable)>) -> Self {
        let mut order: Vec<usize> = (0..functions.len()).collect();
        order.sort_by_key(|&i| functions[i].low_pc);
        let mut new_index = vec![0; functions.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let mut slots: Vec<Option<Function>> = functions.into_iter().map(Some).collect();
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
        FunctionTable {
            functions,
            locals,
            fn_ranges,
        }
    }

    /// All functions, sorted by `low_pc`.
    pub(super) fn all(&self) -> &[Function] {
        &self.functions
    }

    /// The locals and parameters `function` (from this table) declares.
    pub(super) fn locals_of(&self, function: &Function) -> &[Variable] {
        self.locals.get(function.locals.clone()).unwrap_or(&[])
    }

    /// The function whose code contains `ip` (a file address).
    pub(super) fn at(&self, ip: u64) -> Option<&Function> {
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
}
