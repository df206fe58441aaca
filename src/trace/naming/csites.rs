//! The index of a C file's allocation statements: every call (and C++
//! `new`) with the statement around it, by the lines that statement spans
//! and by the position where the call starts, built in one walk of the
//! syntax tree so that naming a block is a hash probe, not a walk of the
//! whole file.
//!
//! A call's statement is the node whose line span decides whether the call
//! is "on" a line that DWARF names: the smallest declaration, expression
//! statement, return statement or field declaration around it, or the
//! part of an `if`/`while`/`for` header (or of a block) that holds it.

use std::collections::HashMap;

use tree_sitter::Node;

use super::csyntax::{display_column, NodeRef};
use super::ctype::declarator_name;

/// Whether `n` allocates or may: a call, or C++ `new`.
pub(crate) fn is_call(n: Node<'_>) -> bool {
    n.kind() == "call_expression" || n.kind() == "new_expression"
}

/// Statement kinds that end the walk up from a call: the call's statement.
const STATEMENT_KINDS: &[&str] = &[
    "declaration",
    "expression_statement",
    "return_statement",
    "field_declaration",
];

/// Kinds whose child containing the call is the call's "statement": the
/// condition of an `if`, the header parts of a `for`, ...
const CONTAINER_KINDS: &[&str] = &[
    "if_statement",
    "while_statement",
    "for_statement",
    "do_statement",
    "switch_statement",
    "case_statement",
    "labeled_statement",
    "compound_statement",
    "function_definition",
    "translation_unit",
];

/// The statement of a call at `child` (whose parent is `parent`), given the
/// statement of a call at `parent`: the node whose line span decides
/// whether a call is "on" a line.
fn statement_below<'t>(child: Node<'t>, parent: Node<'t>, parent_stmt: Node<'t>) -> Node<'t> {
    if STATEMENT_KINDS.contains(&parent.kind()) {
        parent
    } else if CONTAINER_KINDS.contains(&parent.kind()) {
        child
    } else {
        parent_stmt
    }
}

/// The statement of the call that ends `chain` (its ancestors from the
/// root down): see [`statement_below`].
pub(crate) fn statement_of<'t>(chain: &[Node<'t>]) -> Option<Node<'t>> {
    let mut stmt = *chain.first()?;
    for pair in chain.windows(2) {
        stmt = statement_below(pair[1], pair[0], stmt);
    }
    Some(stmt)
}

/// One call (or `new`) of the file, for [`CallIndex`].
#[derive(Clone, Copy, Debug)]
struct Call {
    node: NodeRef,
    /// Bytes of its statement: inner statements are tried first.
    span: usize,
    /// Whether it calls a standard allocator.
    known: bool,
}

/// Every call of a file by the lines its statement spans and by the
/// position where it starts, built in one walk of the syntax tree; see
/// the C source model's `allocation_target_at`. Memory: a few words per call, plus
/// one entry per line of each statement holding a call.
#[derive(Debug, Default)]
pub(crate) struct CallIndex {
    calls: Vec<Call>,
    /// The calls of each statement.
    statements: Vec<Vec<u32>>,
    /// (0-based row, statement) for every row a statement spans, sorted.
    rows: Vec<(u32, u32)>,
    /// The calls starting at (0-based row, 1-based column), with the column
    /// counted both in bytes and with tabs expanded.
    starts: HashMap<(u32, u32), Vec<u32>>,
    /// Per row: the object of the first call through a member
    /// (`grid.push_back(x)` gives `grid`) starting there.
    member_calls: HashMap<u32, NodeRef>,
    /// Per row: the first declaration starting there whose first declarator
    /// names something, with that name.
    declarations: HashMap<u32, (NodeRef, NodeRef)>,
}

impl CallIndex {
    /// Indexes the calls of the tree under `root`, whose text is `text`;
    /// `known` says whether a call is to a standard allocator. Linear in the
    /// size of the tree; iterative, so any depth is fine.
    pub(crate) fn build(root: Node<'_>, text: &str, known: &dyn Fn(Node<'_>) -> bool) -> CallIndex {
        let mut index = CallIndex::default();
        let mut statement_ids: HashMap<NodeRef, u32> = HashMap::new();
        let mut cursor = root.walk();
        // (node, its statement) from the root down to the cursor.
        let mut stack = vec![(root, root)];
        loop {
            let (node, stmt) = stack[stack.len() - 1];
            index.add_node(text, known, node, stmt, &mut statement_ids);
            if cursor.goto_first_child() {
                let child = cursor.node();
                stack.push((child, statement_below(child, node, stmt)));
                continue;
            }
            loop {
                if stack.len() <= 1 {
                    index.rows.sort_unstable();
                    return index;
                }
                stack.pop();
                let (parent, parent_stmt) = stack[stack.len() - 1];
                if cursor.goto_next_sibling() {
                    let child = cursor.node();
                    stack.push((child, statement_below(child, parent, parent_stmt)));
                    break;
                }
                cursor.goto_parent();
            }
        }
    }

    /// Records `node` if it is a call, a call through a member or a
    /// declaration.
    fn add_node(
        &mut self,
        text: &str,
        known: &dyn Fn(Node<'_>) -> bool,
        node: Node<'_>,
        stmt: Node<'_>,
        statement_ids: &mut HashMap<NodeRef, u32>,
    ) {
        let row = node.start_position().row as u32;
        if node.kind() == "call_expression" && !self.member_calls.contains_key(&row) {
            let object = node
                .child_by_field_name("function")
                .filter(|f| f.kind() == "field_expression")
                .and_then(|f| f.child_by_field_name("argument"));
            if let Some(object) = object {
                self.member_calls.insert(row, NodeRef::of(object));
            }
        }
        if node.kind() == "declaration" && !self.declarations.contains_key(&row) {
            let name = node
                .child_by_field_name("declarator")
                .and_then(declarator_name);
            if let Some(name) = name {
                self.declarations
                    .insert(row, (NodeRef::of(node), NodeRef::of(name)));
            }
        }
        if !is_call(node) {
            return;
        }
        let k = self.calls.len() as u32;
        self.calls.push(Call {
            node: NodeRef::of(node),
            span: stmt.end_byte() - stmt.start_byte(),
            known: known(node),
        });
        let id = *statement_ids.entry(NodeRef::of(stmt)).or_insert_with(|| {
            let id = self.statements.len() as u32;
            self.statements.push(Vec::new());
            let (first, last) = (stmt.start_position().row, stmt.end_position().row);
            self.rows.extend((first..=last).map(|r| (r as u32, id)));
            id
        });
        self.statements[id as usize].push(k);
        let column = node.start_position().column as u32 + 1;
        let shown = display_column(text, node.start_byte()) as u32;
        for col in [column, shown] {
            let at = self.starts.entry((row, col)).or_default();
            if at.last() != Some(&k) {
                at.push(k);
            }
        }
    }

    /// The calls whose statement spans `row` (0-based), in the tree under
    /// `root`.
    pub(crate) fn on_row<'t>(&self, root: Node<'t>, row: u32) -> Vec<Candidate<'t>> {
        let from = self.rows.partition_point(|(r, _)| *r < row);
        let calls = self.rows[from..]
            .iter()
            .take_while(move |(r, _)| *r == row)
            .flat_map(|(_, s)| self.statements[*s as usize].iter().copied());
        self.candidates(root, calls)
    }

    /// The calls starting at `row` (0-based) and `column` (1-based, in
    /// bytes or with tabs expanded).
    pub(crate) fn starting_at<'t>(
        &self,
        root: Node<'t>,
        row: u32,
        column: u32,
    ) -> Vec<Candidate<'t>> {
        let calls = self
            .starts
            .get(&(row, column))
            .into_iter()
            .flatten()
            .copied();
        self.candidates(root, calls)
    }

    fn candidates<'t>(
        &self,
        root: Node<'t>,
        calls: impl Iterator<Item = u32>,
    ) -> Vec<Candidate<'t>> {
        calls
            .filter_map(|k| {
                let c = self.calls[k as usize];
                Some((c.node.get(root)?, c.span, c.known))
            })
            .collect()
    }

    /// The object of the first call through a member starting on `row`
    /// (0-based): `grid` for `grid.push_back(x)`.
    pub(crate) fn member_call<'t>(&self, root: Node<'t>, row: u32) -> Option<Node<'t>> {
        self.member_calls.get(&row)?.get(root)
    }

    /// The first declaration starting on `row` (0-based) whose first
    /// declarator names something, and that name.
    pub(crate) fn declaration<'t>(&self, root: Node<'t>, row: u32) -> Option<(Node<'t>, Node<'t>)> {
        let (d, n) = self.declarations.get(&row)?;
        Some((d.get(root)?, n.get(root)?))
    }
}

/// A candidate call for an allocation: the node, the bytes of its
/// statement, and whether it calls a standard allocator.
pub(crate) type Candidate<'t> = (Node<'t>, usize, bool);
