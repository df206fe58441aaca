//! Allocation sizes: which arguments of an allocator make up the size, and
//! a size expression split into its factors (`ROWS * COLS * sizeof(int)`)
//! with the constants and `sizeof`s evaluated, for inferring array shapes.

use tree_sitter::Node;

use super::super::cconst::{flatten_product, with_expr};
use super::super::ctype::Types;

/// An allocation size split into its factors, for inferring array shapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeExpr {
    /// The factors that are not `sizeof`, in source order, each evaluated
    /// to an integer if it is a compile-time constant (literals, `#define`s,
    /// enum constants), `None` when it depends on run-time values. For
    /// `ROWS * COLS * sizeof(int)` this is `[Some(8), Some(16)]`.
    pub factors: Vec<Option<i64>>,
    /// Product of the `sizeof` factors, `None` when there is no `sizeof` or
    /// one could not be evaluated (for example an incomplete struct).
    pub elem_bytes: Option<i64>,
    /// The operand type of the first `sizeof` factor, when known: `"int"`,
    /// `"struct point"`.
    pub elem_type: Option<String>,
}

impl SizeExpr {
    /// The number of elements: the product of `factors` (1 when there are
    /// none), or `None` if a factor is unknown.
    pub fn count(&self) -> Option<i64> {
        self.factors
            .iter()
            .try_fold(1i64, |acc, f| f.and_then(|f| acc.checked_mul(f)))
    }

    /// Total bytes, `count() * elem_bytes` (just `count()` when there is no
    /// `sizeof`), or `None` if anything is unknown.
    pub fn total(&self) -> Option<i64> {
        let count = self.count()?;
        if self.has_sizeof() {
            count.checked_mul(self.elem_bytes?)
        } else {
            Some(count)
        }
    }

    fn has_sizeof(&self) -> bool {
        self.elem_bytes.is_some() || self.elem_type.is_some()
    }
}

/// Standard allocators and which arguments (0-based) make up the size; two
/// indices mean the size is their product.
const ALLOCATORS: &[(&str, &[usize])] = &[
    ("malloc", &[0]),
    ("calloc", &[0, 1]),
    ("realloc", &[1]),
    ("reallocf", &[1]),
    ("reallocarray", &[1, 2]),
    ("aligned_alloc", &[1]),
    ("posix_memalign", &[2]),
    ("memalign", &[1]),
    ("valloc", &[0]),
    ("pvalloc", &[0]),
    ("alloca", &[0]),
    ("__builtin_alloca", &[0]),
    ("mmap", &[1]),
    ("mmap64", &[1]),
    ("strdup", &[]),
    ("new", &[]),
    ("new[]", &[]),
    ("strndup", &[]),
];

/// The size arguments (0-based) of standard allocator `name`; `None` for
/// a function that is not one.
pub(super) fn allocator_size_args(name: &str) -> Option<&'static [usize]> {
    ALLOCATORS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, args)| *args)
}

/// Which arguments (0-based) of a call to `alloc_fn` with `args` make up
/// the size: a standard allocator's own; for another function, only when
/// its name says it allocates (`xmalloc`, `pool_alloc`): both arguments of
/// a two-argument `...calloc` or of `alloc_data(n, sizeof(T))` (a count and
/// an element size), else the last one. `is_sizeof` says whether an
/// argument is a `sizeof` expression.
pub(super) fn size_args<'t>(
    alloc_fn: &str,
    args: &[Node<'t>],
    is_sizeof: impl Fn(Node<'t>) -> bool,
) -> Option<Vec<usize>> {
    match allocator_size_args(alloc_fn) {
        Some(indices) => Some(indices.to_vec()),
        None if !alloc_fn.to_ascii_lowercase().contains("alloc") || args.is_empty() => None,
        None if args.len() == 2 && alloc_fn.ends_with("calloc") => Some(vec![0, 1]),
        None if args.len() == 2 && !alloc_fn.contains("realloc") && is_sizeof(args[1]) => {
            Some(vec![0, 1])
        }
        None => Some(vec![args.len() - 1]),
    }
}

/// Splits and evaluates the size expression `expr` (see
/// [`super::CSource::eval_size`]), with `sizeof` operands and constants
/// looked up in `types` at `scope` (anywhere in the file when `None`).
pub(super) fn eval(types: &Types<'_>, expr: &str, scope: Option<Node<'_>>) -> Option<SizeExpr> {
    with_expr(expr, |src, node| {
        let mut factors = Vec::new();
        flatten_product(node, &mut factors);
        let mut size = SizeExpr {
            factors: Vec::new(),
            elem_bytes: None,
            elem_type: None,
        };
        let mut bytes: Option<i64> = Some(1);
        let mut any_sizeof = false;
        for factor in factors {
            if factor.kind() == "sizeof_expression" {
                let ctype = types.sizeof_operand(src, factor, scope);
                if !any_sizeof {
                    size.elem_type = ctype.as_ref().map(|t| t.render());
                }
                any_sizeof = true;
                let n = ctype.and_then(|t| types.layout(t)).map(|(s, _)| s);
                bytes = bytes.zip(n).and_then(|(a, b)| a.checked_mul(b));
            } else {
                size.factors.push(types.eval_const(src, factor, scope));
            }
        }
        if any_sizeof {
            size.elem_bytes = bytes;
        }
        Some(size)
    })
}
