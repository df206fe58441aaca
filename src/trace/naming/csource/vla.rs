//! Arrays declared on a line, for naming the stack allocations the tracer
//! records: a variable-length array's storage is made at run time by the
//! instruction on its declaration's line.
use tree_sitter::Node;

use super::CSource;

/// An array declared on a line (`double v[n];`, `float grid[n][16];`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayDecl {
    /// The array's name.
    pub name: String,
    /// The element type as the declaration writes it (`double`,
    /// `struct point`), qualifiers included.
    pub elem_type: String,
    /// Bytes per element, when the type's size is known.
    pub elem_bytes: Option<i64>,
    /// The dimensions after the first, when each is a compile-time
    /// constant (`[16]` of `grid[n][16]`); empty otherwise.
    pub inner_dims: Vec<u64>,
}

impl CSource {
    /// The array that the first declaration starting on `line` (1-based)
    /// declares with its first declarator, or `None` when that declarator
    /// is not an array (a pointer, a scalar, a function). Whether its
    /// length is a constant is not asked: the caller knows the storage was
    /// made at run time.
    pub fn array_declared_at(&self, line: u32) -> Option<ArrayDecl> {
        let row = line.checked_sub(1)?;
        let root = self.tree.root_node();
        let (decl, name) = self.call_index().declaration(root, row)?;
        let sizes = array_sizes(decl, name)?;
        let text = |n: Node<'_>| n.utf8_text(self.text.as_bytes()).unwrap_or("").to_string();
        let elem_type = decl.child_by_field_name("type").map(text)?;
        let inner: Option<Vec<u64>> = sizes[1..]
            .iter()
            .map(|s| {
                let t = text((*s)?);
                let v = self.eval_size_at(&t, line)?.total()?;
                u64::try_from(v).ok().filter(|v| *v > 0)
            })
            .collect();
        Some(ArrayDecl {
            name: text(name),
            elem_bytes: self
                .eval_size_at(&format!("sizeof({elem_type})"), line)
                .and_then(|s| s.elem_bytes),
            elem_type,
            inner_dims: inner.unwrap_or_default(),
        })
    }
}

/// The size expressions of the array declarators between `name` and its
/// declaration, outermost dimension first (`n`, then `16`, for
/// `grid[n][16]`); `None` when the name is declared as anything but an
/// array (a pointer to an array is a pointer).
fn array_sizes<'t>(decl: Node<'t>, name: Node<'t>) -> Option<Vec<Option<Node<'t>>>> {
    let mut sizes = Vec::new();
    let mut node = name.parent()?;
    while node.id() != decl.id() {
        match node.kind() {
            "array_declarator" => sizes.push(node.child_by_field_name("size")),
            "init_declarator" | "parenthesized_declarator" => {}
            _ => return None,
        }
        node = node.parent()?;
    }
    (!sizes.is_empty()).then_some(sizes)
}
