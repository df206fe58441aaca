//! The syntax layer under the C source model: parsing with tree-sitter,
//! walking and re-finding nodes, and the file's line starts.
//!
//! Everything here is iterative (explicit cursors, no recursion on the
//! tree), so a source nested tens of thousands of levels deep cannot
//! overflow the stack. The modules above it (the C type model, constant
//! evaluation, allocation targets) bound their own recursion.
//!
//! tree-sitter 0.25 finds a node's parent by walking down from the root,
//! which costs the depth times the children passed on the way (all the
//! statements of a long function body). Code that climbs from a node takes
//! its [`ancestors`] once instead.

use tree_sitter::{Node, Parser, Tree};

/// Parses C (`cpp` false) or C++ text. tree-sitter always produces a tree
/// (syntax errors become error nodes), so this only fails if the grammar
/// cannot be loaded, which is a build problem, not an input problem.
pub(crate) fn parse_lang(text: &str, cpp: bool) -> Tree {
    let mut parser = Parser::new();
    let language = if cpp {
        tree_sitter_cpp::LANGUAGE.into()
    } else {
        tree_sitter_c::LANGUAGE.into()
    };
    parser
        .set_language(&language)
        .expect("the tree-sitter grammar versions are compatible with the tree-sitter runtime");
    parser
        .parse(text, None)
        .expect("tree-sitter parses without a timeout or cancellation flag")
}

/// Calls `f` on every node of the subtree in document order (parents
/// before their children). Iterative: any depth is fine.
pub(crate) fn visit<'t>(root: Node<'t>, f: &mut impl FnMut(Node<'t>)) {
    let mut cursor = root.walk();
    loop {
        f(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == root {
                return;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// Named children except comments.
pub(crate) fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect()
}

/// Removes parentheses and casts around an expression.
pub(crate) fn strip(mut node: Node<'_>) -> Node<'_> {
    loop {
        match node.kind() {
            "parenthesized_expression" => match children(node).as_slice() {
                [inner] => node = *inner,
                _ => return node,
            },
            "cast_expression" => match node.child_by_field_name("value") {
                Some(inner) => node = inner,
                None => return node,
            },
            _ => return node,
        }
    }
}

/// The nodes from `root` down to `target` (both included), found by one
/// descent from the root: O(depth x children passed). When `target` is not
/// under `root` the chain stops where the descent lost it, so callers
/// check its last element.
pub(crate) fn ancestors<'t>(root: Node<'t>, target: Node<'t>) -> Vec<Node<'t>> {
    let (start, end) = (target.start_byte(), target.end_byte());
    let mut chain = vec![root];
    let mut cursor = root.walk();
    while cursor.node() != target {
        if cursor.goto_first_child_for_byte(start).is_none() {
            break;
        }
        loop {
            let n = cursor.node();
            if n.start_byte() <= start && n.end_byte() >= end {
                break;
            }
            if n.start_byte() > start || !cursor.goto_next_sibling() {
                return chain;
            }
        }
        chain.push(cursor.node());
    }
    chain
}

/// A node remembered by position and kind, so that indexes built once per
/// file can name nodes without borrowing the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct NodeRef {
    start: usize,
    end: usize,
    kind: u16,
}

impl NodeRef {
    pub(crate) fn of(node: Node<'_>) -> NodeRef {
        NodeRef {
            start: node.start_byte(),
            end: node.end_byte(),
            kind: node.kind_id(),
        }
    }

    /// The node in the tree under `root`: the smallest node spanning the
    /// range, or the nearest ancestor of it with the same range and kind.
    pub(crate) fn get<'t>(&self, root: Node<'t>) -> Option<Node<'t>> {
        let mut node = root.descendant_for_byte_range(self.start, self.end)?;
        while node.kind_id() != self.kind {
            let parent = node.parent()?;
            if parent.start_byte() != self.start || parent.end_byte() != self.end {
                return None;
            }
            node = parent;
        }
        Some(node)
    }
}

/// The byte offset at which each line of a text starts, for O(1) line
/// lookups (built in one pass over the text).
#[derive(Clone, Debug)]
pub(crate) struct Lines {
    starts: Vec<usize>,
    len: usize,
}

impl Lines {
    pub(crate) fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(k, _)| k + 1),
        );
        if starts.last() == Some(&text.len()) && !text.is_empty() {
            starts.pop();
        }
        if text.is_empty() {
            starts.clear();
        }
        Lines {
            starts,
            len: text.len(),
        }
    }

    /// Number of lines, as `str::lines` counts them.
    pub(crate) fn count(&self) -> usize {
        self.starts.len()
    }

    /// The byte where line `row` (0-based) starts.
    pub(crate) fn start(&self, row: usize) -> Option<usize> {
        self.starts.get(row).copied()
    }

    /// The text of line `row` (0-based) without its line end.
    pub(crate) fn text<'a>(&self, text: &'a str, row: usize) -> Option<&'a str> {
        let start = self.start(row)?;
        let end = self.starts.get(row + 1).copied().unwrap_or(self.len);
        let line = text.get(start..end)?;
        let line = line.strip_suffix('\n').unwrap_or(line);
        Some(line.strip_suffix('\r').unwrap_or(line))
    }
}

/// The identifier starting at byte `k` of `line`, if one starts there.
pub(crate) fn ident_at(line: &str, k: usize) -> Option<&str> {
    let bytes = line.as_bytes();
    if !line.is_char_boundary(k)
        || (k > 0 && (bytes[k - 1].is_ascii_alphanumeric() || bytes[k - 1] == b'_'))
    {
        return None;
    }
    let len = line[k..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(line.len() - k);
    (len > 0 && !bytes[k].is_ascii_digit()).then(|| &line[k..k + len])
}

/// The 1-based column of byte `at` with tabs expanded to 8 columns, as some
/// compilers count.
pub(crate) fn display_column(text: &str, at: usize) -> usize {
    let line_start = text[..at].rfind('\n').map_or(0, |k| k + 1);
    let mut col = 0;
    for c in text[line_start..at].chars() {
        col = if c == '\t' {
            (col / 8 + 1) * 8
        } else {
            col + 1
        };
    }
    col + 1
}

/// Collapses runs of whitespace into one space.
pub(crate) fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_count_and_text_as_str_lines_does() {
        for text in ["", "a", "a\n", "a\nb", "a\r\nb\n\n", "\n\n"] {
            let lines = Lines::new(text);
            let want: Vec<&str> = text.lines().collect();
            assert_eq!(lines.count(), want.len(), "{text:?}");
            for (k, w) in want.iter().enumerate() {
                assert_eq!(lines.text(text, k), Some(*w), "{text:?} line {k}");
            }
        }
    }

    #[test]
    fn ancestors_and_node_refs_find_deep_nodes() {
        let depth = 20_000;
        let text = format!("int x = {}1{};\n", "(".repeat(depth), ")".repeat(depth));
        let tree = parse_lang(&text, false);
        let root = tree.root_node();
        let one = root
            .descendant_for_byte_range(depth + 8, depth + 9)
            .unwrap();
        assert_eq!(one.kind(), "number_literal");
        let chain = ancestors(root, one);
        assert_eq!(chain.last(), Some(&one));
        assert!(chain.len() > depth, "{}", chain.len());
        let paren = chain[chain.len() - 2];
        assert_eq!(NodeRef::of(paren).get(root), Some(paren));
    }
}
