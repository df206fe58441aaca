//! Naming heap blocks from the C statement that allocated them.
//!
//! [`CSource`] parses one C file with tree-sitter-c and answers, for the line
//! DWARF gives for an allocation call site, which variable or lvalue the
//! allocated pointer is stored in ([`CSource::allocation_target`]), what that
//! pointer points to, and what the size argument evaluates to
//! ([`CSource::eval_size`]), so that a caller can name the block (`arr`,
//! `s->buf`, `rows[i]`) and infer its element type and array dimensions.
//!
//! The file is parsed as written, without running the preprocessor. Its
//! directives are run for their macros ([`MacroTable::run`]: conditional
//! directives are evaluated), so object-like `#define`s with integer values
//! are understood, and a call written through a function-like macro is
//! expanded before it is read. tree-sitter still sees both branches of an
//! `#ifdef`. Type sizes assume the LP64 data model of x86-64 and AArch64
//! Linux.

use std::cell::Cell;
use std::collections::HashMap;

use tree_sitter::{Node, Parser, Point, Tree};

use super::cmacro::MacroTable;

/// What an allocation on a given line was stored into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllocTarget {
    /// The allocation's value is stored into an lvalue written in the source.
    Named {
        /// The lvalue as written, comments dropped and whitespace collapsed:
        /// `"arr"`, `"s->buf"`, `"h.counts"`, `"rows[i]"`, `"*out"`.
        name: String,
        /// The type the target points to, when the target's declaration is
        /// in this file: `"int"`, `"double *"`, `"struct point"`,
        /// `"int [16]"` (for `int (*m)[16]`). Qualifiers are dropped.
        elem_type: Option<String>,
        /// The called function: a standard allocator (`"malloc"`,
        /// `"calloc"`, `"realloc"`, `"aligned_alloc"`, `"posix_memalign"`,
        /// ...), `"new"` or `"new[]"` for C++ `new`, or the called
        /// function's name (`"xmalloc"`, `"std::make_unique<double[]>"`).
        alloc_fn: String,
        /// Source text of the size argument(s), comments dropped and
        /// whitespace collapsed. For two-factor allocators (`calloc`,
        /// `reallocarray`) the two arguments joined by `", "`;
        /// [`CSource::eval_size`] multiplies them. For other functions only
        /// when the name contains `alloc`: the last argument (both for a
        /// two-argument `...calloc`); `None` otherwise.
        size_expr: Option<String>,
    },
    /// The allocation's value is returned from the enclosing function
    /// (`return malloc(n);`, or `p = malloc(n); ... return p;`): the block
    /// must be named from the caller's frame.
    Returned,
    /// No target found; the text says why, for messages.
    Unknown(String),
}

/// The C++ container whose buffer an allocation is: see
/// [`CSource::container_target`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    /// The object as written, without `this->`: `grid`, `vals_`, `s.vals_`.
    pub name: String,
    /// The first template argument of its declaration: `double`.
    pub elem_type: Option<String>,
    /// The line of its declaration (1-based), when found in this file.
    pub declared_at: Option<u32>,
}

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

/// One step of a C declarator, read from the declared name outward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Deriv {
    Pointer,
    Array(Option<i64>),
    Function,
}

/// A C type as far as we need it: a base type plus derivations, where
/// `derivs[0]` is what `*x` or `x[i]` strips first.
#[derive(Debug, Clone)]
struct CType<'t> {
    /// `"int"`, `"unsigned long"`, `"struct point"`, a typedef name.
    base: String,
    /// The struct/union/enum specifier the base came from, for its body.
    base_node: Option<Node<'t>>,
    derivs: Vec<Deriv>,
}

impl CType<'_> {
    /// The type with its first derivation removed (`*x`, `x[i]`).
    fn deref(mut self) -> Option<Self> {
        match self.derivs.first() {
            Some(Deriv::Pointer | Deriv::Array(_)) => {
                self.derivs.remove(0);
                Some(self)
            }
            _ => None,
        }
    }

    /// Readable C spelling: `"int"`, `"double *"`, `"int [16]"`.
    fn render(&self) -> String {
        let mut out = self.base.clone();
        let pointers = self.derivs.iter().take_while(|d| **d == Deriv::Pointer);
        let n_pointers = pointers.count();
        if n_pointers > 0 {
            out.push(' ');
            out.push_str(&"*".repeat(n_pointers));
        }
        let rest = &self.derivs[n_pointers..];
        if !rest.is_empty() {
            out.push(' ');
            for d in rest {
                match d {
                    Deriv::Array(Some(n)) => out.push_str(&format!("[{n}]")),
                    Deriv::Array(None) => out.push_str("[]"),
                    Deriv::Pointer => out.push_str("(*)"),
                    Deriv::Function => out.push_str("()"),
                }
            }
        }
        out
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
    ("strdup", &[]),
    ("new", &[]),
    ("new[]", &[]),
    ("strndup", &[]),
];

fn allocator_size_args(name: &str) -> Option<&'static [usize]> {
    ALLOCATORS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, args)| *args)
}

/// Whether `n` allocates or may: a call, or C++ `new`.
fn is_call(n: Node<'_>) -> bool {
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

/// A C source file parsed once with tree-sitter-c.
///
/// Parsing is linear in the file size and done once in [`CSource::parse`],
/// together with evaluating the file's `#define`s. Each query walks the
/// syntax tree again (linear in the file size too), which is cheap next to
/// tracing; cache the answers per line if you ask the same line many times.
///
/// `Send` but not `Sync` (a recursion guard uses a `Cell`).
pub struct CSource {
    text: String,
    tree: Tree,
    defines: HashMap<String, i64>,
    /// Every `#define` of the file, plus those of its headers once the
    /// caller adds them ([`CSource::add_macros`]).
    macros: MacroTable,
    /// Parsed as C++.
    cpp: bool,
    line_count: usize,
    /// Nesting depth of the recursive type and constant lookups, bounded so
    /// that invalid C (a self-containing struct, enum constants defined in
    /// terms of each other) cannot recurse without end.
    depth: Cell<u32>,
}

impl std::fmt::Debug for CSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CSource")
            .field("lines", &self.line_count)
            .field("defines", &self.defines)
            .finish()
    }
}

/// Parses C text. tree-sitter always produces a tree (syntax errors become
/// error nodes), so this only fails if the grammar cannot be loaded, which is
/// a build problem, not an input problem.
fn parse_c(text: &str) -> Tree {
    parse_lang(text, false)
}

/// Parses C (`cpp` false) or C++ text; see [`parse_c`].
fn parse_lang(text: &str, cpp: bool) -> Tree {
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

/// Calls `f` on every node of the subtree in document order.
fn visit<'t>(root: Node<'t>, f: &mut impl FnMut(Node<'t>)) {
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
fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect()
}

/// Removes parentheses and casts around an expression.
fn strip(mut node: Node<'_>) -> Node<'_> {
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

/// The identifier starting at byte `k` of `line`, if one starts there.
fn ident_at(line: &str, k: usize) -> Option<&str> {
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
fn display_column(text: &str, at: usize) -> usize {
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
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Parses a C integer literal (decimal, hex, octal, binary; any `u`/`l`
/// suffix). Floating literals give `None`.
fn parse_int(literal: &str) -> Option<i64> {
    let s = literal
        .trim()
        .trim_end_matches(['u', 'U', 'l', 'L'])
        .replace('\'', "");
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or(s.strip_prefix("0X")) {
        (h.to_string(), 16)
    } else if let Some(b) = s.strip_prefix("0b").or(s.strip_prefix("0B")) {
        (b.to_string(), 2)
    } else if s.len() > 1 && s.starts_with('0') {
        (s[1..].to_string(), 8)
    } else {
        (s.clone(), 10)
    };
    u64::from_str_radix(&digits, radix)
        .ok()
        .and_then(|v| i64::try_from(v).ok())
}

/// Size and alignment of a basic C type name under LP64, `None` when the
/// name is not a basic type.
fn primitive_layout(name: &str) -> Option<(i64, i64)> {
    let words: Vec<&str> = name.split_whitespace().collect();
    let has = |w: &str| words.contains(&w);
    let longs = words.iter().filter(|w| **w == "long").count();
    let size = match name {
        "size_t" | "ssize_t" | "ptrdiff_t" | "intptr_t" | "uintptr_t" | "off_t" | "intmax_t"
        | "uintmax_t" => 8,
        "wchar_t" => 4,
        "_Bool" | "bool" => 1,
        "void" => 1,
        _ if has("char") => 1,
        _ if has("short") => 2,
        _ if has("double") && longs > 0 => 16,
        _ if has("double") => 8,
        _ if has("float") => 4,
        _ if longs > 0 => 8,
        _ if has("int") || has("unsigned") || has("signed") => 4,
        _ => {
            // intN_t, uintN_t, int_leastN_t
            let rest = name
                .strip_prefix("uint")
                .or_else(|| name.strip_prefix("int"))?;
            let rest = rest.strip_prefix("_least").unwrap_or(rest);
            let bits: i64 = rest.strip_suffix("_t")?.parse().ok()?;
            if ![8, 16, 32, 64].contains(&bits) {
                return None;
            }
            bits / 8
        }
    };
    Some((size, size))
}

impl CSource {
    /// Parses `text` as C and evaluates its integer `#define`s.
    pub fn parse(text: String) -> CSource {
        CSource::parse_as(text, false)
    }

    /// Parses `text` as C++ (tree-sitter-cpp): `new T[n]`, `new T`,
    /// `std::make_unique<T[]>(n)` and members (`this->data_`) are
    /// understood on top of what C allows.
    pub fn parse_cpp(text: String) -> CSource {
        CSource::parse_as(text, true)
    }

    /// Parses the file at `path` (named only to choose the language: C++
    /// for `.cpp .cc .cxx .c++ .hpp .hh .hxx`, C otherwise) with text `text`.
    pub fn parse_for(path: &std::path::Path, text: String) -> CSource {
        let cpp = path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
            matches!(e, "cpp" | "cc" | "cxx" | "c++" | "C" | "hpp" | "hh" | "hxx")
        });
        CSource::parse_as(text, cpp)
    }

    fn parse_as(text: String, cpp: bool) -> CSource {
        let tree = parse_lang(&text, cpp);
        let line_count = text.lines().count();
        let macros = MacroTable::from_text(&text);
        let mut source = CSource {
            text,
            tree,
            defines: HashMap::new(),
            macros,
            cpp,
            line_count,
            depth: Cell::new(0),
        };
        source.compute_defines();
        source
    }

    /// Whether the file was parsed as C++.
    pub fn is_cpp(&self) -> bool {
        self.cpp
    }

    /// The source text this was parsed from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The headers this file includes: (name as written, whether quoted).
    pub fn includes(&self) -> Vec<(String, bool)> {
        super::cmacro::includes(&self.text)
    }

    /// Makes the macros of included headers known, for allocations written
    /// through function-like macros. The file's own definitions win.
    pub fn add_macros(&mut self, other: &MacroTable) {
        self.macros.extend_missing(other);
        self.compute_defines();
    }

    /// Replaces the macros with `table`: those that running the file's
    /// directives with its headers and the compiler's predefined macros
    /// left active ([`MacroTable::run`]).
    pub fn set_macros(&mut self, table: MacroTable) {
        self.macros = table;
        self.compute_defines();
    }

    /// Evaluates the object-like macros whose value (fully expanded) is an
    /// integer constant expression, into [`Self::defines`].
    fn compute_defines(&mut self) {
        let mut defines = HashMap::new();
        for (name, m) in self.macros.object_like() {
            if let Some(v) = self.eval_text(&self.macros.expand(&m.body)) {
                defines.insert(name.to_string(), v);
            }
        }
        self.defines = defines;
    }

    /// The allocation at `line` and `column` (1-based, as gcc's line table
    /// gives them; column 0 when unknown) with its size evaluated in the
    /// scope of the statement: see [`Self::allocation_target_at`].
    pub fn resolve_allocation(&self, line: u32, column: u32) -> (AllocTarget, Option<SizeExpr>) {
        if let Some((start, end)) = self.macro_invocation(line, column) {
            return self.resolve_in_expansion(line, start, end);
        }
        let target = self.allocation_target_at(line, column);
        let target = match target {
            AllocTarget::Unknown(why) => match self.macro_invocation(line, 0) {
                Some((start, end)) => return self.resolve_in_expansion(line, start, end),
                None => AllocTarget::Unknown(why),
            },
            t => t,
        };
        let size = match &target {
            AllocTarget::Named {
                size_expr: Some(e), ..
            } => self.eval_size_at(e, line),
            _ => None,
        };
        (target, size)
    }

    /// The C++ object whose buffer a standard container allocated on
    /// `line`: for a call through a member (`grid.push_back(x)`,
    /// `this->v.resize(n)`) the object, else the variable the line declares
    /// (`std::vector<double> grid(n * n);`). Used when the allocation stack
    /// passed through the standard library. The element type is the first
    /// template argument of the object's declaration, and the declaration's
    /// line is where every buffer of the container is said to come from, so
    /// that the buffers a growing container reallocates share one site.
    pub fn container_target(&self, line: u32) -> Option<Container> {
        let row = (line as usize).checked_sub(1)?;
        let mut found: Option<Node<'_>> = None;
        let mut declared: Option<(Node<'_>, Node<'_>)> = None;
        visit(self.tree.root_node(), &mut |n| {
            if n.start_position().row != row {
                return;
            }
            if found.is_none() && n.kind() == "call_expression" {
                found = n
                    .child_by_field_name("function")
                    .filter(|f| f.kind() == "field_expression")
                    .and_then(|f| f.child_by_field_name("argument"));
            }
            if declared.is_none() && n.kind() == "declaration" {
                let decl = n.child_by_field_name("declarator");
                if let Some(name) = decl.and_then(|d| self.declarator_name(d)) {
                    declared = Some((n, name));
                }
            }
        });
        let (name, decl) = match (found, declared) {
            (Some(o), _) => {
                let t = self.clean_text(o);
                let name = t.strip_prefix("this->").map(str::to_string).unwrap_or(t);
                (name, self.container_declaration(o))
            }
            (None, Some((decl, name))) => (self.clean_text(name), Some(decl)),
            (None, None) => return None,
        };
        let elem = decl
            .and_then(|d| d.child_by_field_name("type"))
            .and_then(|t| {
                let text = self.clean_text(t);
                let inner = text.split_once('<')?.1;
                let end = inner.find([',', '>'])?;
                Some(inner[..end].trim().to_string())
            });
        Some(Container {
            name,
            elem_type: elem,
            declared_at: decl.map(|d| d.start_position().row as u32 + 1),
        })
    }

    /// The declaration of the container object `object` (an expression:
    /// `grid`, `this->vals_`, `s.vals_`): a local or parameter in scope,
    /// else a class member of that name, else a global.
    fn container_declaration<'t>(&'t self, object: Node<'t>) -> Option<Node<'t>> {
        let name = match object.kind() {
            "field_expression" => self.node_text(object.child_by_field_name("field")?),
            _ => self.node_text(object),
        };
        if object.kind() == "identifier" {
            if let Some((decl, _)) = self.lookup_decl(name, Some(object)) {
                return Some(decl);
            }
        }
        let mut member = None;
        visit(self.tree.root_node(), &mut |n| {
            if member.is_none() && n.kind() == "field_declaration" {
                let mut cursor = n.walk();
                let hit = n
                    .children_by_field_name("declarator", &mut cursor)
                    .filter_map(|d| self.declarator_name(d))
                    .any(|id| self.node_text(id) == name);
                if hit {
                    member = Some(n);
                }
            }
        });
        member.or_else(|| self.lookup_decl(name, None).map(|(d, _)| d))
    }

    /// The byte range of the function-like macro invocation at `line` and
    /// `column` (the macro's name, its arguments and the closing `)`), or
    /// with `column` 0 the first one on the line.
    fn macro_invocation(&self, line: u32, column: u32) -> Option<(usize, usize)> {
        if self.macros.is_empty() {
            return None;
        }
        let row = (line as usize).checked_sub(1)?;
        let line_start: usize = self
            .text
            .split_inclusive('\n')
            .take(row)
            .map(str::len)
            .sum();
        let line_text = self.text[line_start..].lines().next()?;
        let bytes = line_text.as_bytes();
        let candidates: Vec<usize> = if column > 0 {
            vec![column as usize - 1]
        } else {
            (0..bytes.len()).collect()
        };
        for k in candidates.into_iter().filter(|k| *k < bytes.len()) {
            let Some(name) = ident_at(line_text, k) else {
                continue;
            };
            if !self.macros.is_function_like(name) {
                continue;
            }
            let start = line_start + k;
            let after = start + name.len();
            let open = after + self.text[after..].find(|c: char| !c.is_whitespace())?;
            if self.text.as_bytes()[open] != b'(' {
                continue;
            }
            let mut depth = 0usize;
            for (off, c) in self.text[open..].char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some((start, open + off + 1));
                        }
                    }
                    _ => {}
                }
            }
            return None;
        }
        None
    }

    /// Expands the macro invocation at bytes `start..end` (which begins on
    /// `line`) in place, on that one line, and resolves the allocation the
    /// expansion holds. Costs one parse of the file per call.
    fn resolve_in_expansion(
        &self,
        line: u32,
        start: usize,
        end: usize,
    ) -> (AllocTarget, Option<SizeExpr>) {
        let original = &self.text[start..end];
        let expanded = self.macros.expand(original);
        let mut text = String::with_capacity(self.text.len() + expanded.len());
        text.push_str(&self.text[..start]);
        text.push_str(&expanded);
        // Keep every later line where it was.
        text.push_str(&"\n".repeat(original.matches('\n').count()));
        text.push_str(&self.text[end..]);
        let mut sub = CSource::parse_as(text, self.cpp);
        sub.macros = MacroTable::default();
        let calls = sub.calls_in(start, start + expanded.len());
        if calls.is_empty() {
            return (
                AllocTarget::Unknown(format!(
                    "the macro on line {line} expands to `{expanded}`, which calls no function"
                )),
                None,
            );
        }
        let target = sub.first_target(calls);
        let size = match &target {
            AllocTarget::Named {
                size_expr: Some(e), ..
            } => sub.eval_size_at(e, line),
            _ => None,
        };
        let target = match target {
            AllocTarget::Unknown(why) => AllocTarget::Unknown(format!(
                "the macro on line {line} expands to `{expanded}`: {why}"
            )),
            t => t,
        };
        (target, size)
    }

    /// The calls starting within bytes `lo..hi`, outermost statement first.
    fn calls_in(&self, lo: usize, hi: usize) -> Vec<(Node<'_>, usize, bool)> {
        let mut calls = Vec::new();
        visit(self.tree.root_node(), &mut |n| {
            if is_call(n) && n.start_byte() >= lo && n.start_byte() < hi {
                let stmt = self.statement_of(n);
                let known = allocator_size_args(&self.callee_name(n)).is_some();
                calls.push((n, stmt.end_byte() - stmt.start_byte(), known));
            }
        });
        calls
    }

    /// Object-like `#define NAME VALUE` whose value is an integer constant
    /// expression (`16`, `(16*4)`, `ROWS * COLS` with earlier defines,
    /// `sizeof(double)`), evaluated. Later definitions of a name replace
    /// earlier ones; non-integer defines are left out.
    pub fn defines(&self) -> HashMap<String, i64> {
        self.defines.clone()
    }

    /// Splits the allocation size expression `expr` (as in the
    /// `size_expr` of [`AllocTarget::Named`]) into its factors: top-level `*`
    /// and `,` operands (the comma is how `calloc`'s two arguments are
    /// passed), through parentheses. `sizeof` factors make up
    /// [`SizeExpr::elem_bytes`]; the others are evaluated as constants.
    ///
    /// Variables in `sizeof *p` / `sizeof(p[0])` are looked up anywhere in the
    /// file; use [`Self::eval_size_at`] to respect the scope at a line.
    /// Returns `None` when `expr` does not parse as a C expression.
    pub fn eval_size(&self, expr: &str) -> Option<SizeExpr> {
        self.eval_size_scoped(expr, None)
    }

    /// [`Self::eval_size`] with variables looked up in the scope at `line`
    /// (1-based), as for the size argument of the allocation on that line.
    pub fn eval_size_at(&self, expr: &str, line: u32) -> Option<SizeExpr> {
        let scope = self.node_at_line(line);
        self.eval_size_scoped(expr, scope)
    }

    /// Finds what the allocation on `line` (1-based; any line of a statement
    /// spread over several lines) is stored into.
    ///
    /// Candidate calls are those whose statement (the smallest declaration,
    /// expression statement, return statement or `if`/`while`/`for` header
    /// around the call) spans the line. Standard allocators are tried first,
    /// innermost statement first; when none of them is stored anywhere, any
    /// other call whose result is stored counts (`int *v = xmalloc(n)` gives
    /// `v` with `alloc_fn` `"xmalloc"`). The value is followed up through
    /// casts, parentheses and `?:` to an assignment `=`, an initializer or a
    /// `return`, or through an initializer list to the declared variable
    /// (`struct m v = { .rows = malloc(n) }` names `v.rows`, the first
    /// element of `int *a[2] = { malloc(n) }` is `a[0]`). A local variable
    /// that the function later returns gives
    /// [`AllocTarget::Returned`], as does `return malloc(n)`.
    /// `posix_memalign(&p, ...)` names `p`.
    pub fn allocation_target(&self, line: u32) -> AllocTarget {
        self.allocation_target_at(line, 0)
    }

    /// [`Self::allocation_target`] for the call at `column` (1-based, as
    /// gcc's line tables give it: the column of the called function's name).
    /// Several allocations on one line (`double *x = malloc(n), *y =
    /// malloc(n);`, `a = malloc(n); b = malloc(n);`) are told apart this
    /// way. With column 0, or when no call starts at the column, every call
    /// on the line is a candidate.
    pub fn allocation_target_at(&self, line: u32, column: u32) -> AllocTarget {
        if line == 0 || line as usize > self.line_count {
            return AllocTarget::Unknown(format!(
                "line {line} is outside the file, which has {} lines",
                self.line_count
            ));
        }
        let row = line as usize - 1;
        let mut calls: Vec<(Node<'_>, usize, bool)> = Vec::new();
        visit(self.tree.root_node(), &mut |n| {
            if is_call(n) {
                let stmt = self.statement_of(n);
                if stmt.start_position().row <= row && row <= stmt.end_position().row {
                    let known = allocator_size_args(&self.callee_name(n)).is_some();
                    calls.push((n, stmt.end_byte() - stmt.start_byte(), known));
                }
            }
        });
        if calls.is_empty() {
            return AllocTarget::Unknown(format!("line {line} has no function call"));
        }
        if column > 0 {
            let exact: Vec<_> = calls
                .iter()
                .copied()
                .filter(|(n, _, _)| {
                    n.start_position().row == row
                        && (n.start_position().column + 1 == column as usize
                            || display_column(&self.text, n.start_byte()) == column as usize)
                })
                .collect();
            if !exact.is_empty() {
                return self.first_target(exact);
            }
        }
        self.first_target(calls)
    }

    /// The first of `calls` whose value is stored (see
    /// [`Self::allocation_target`] for the order), or why none is.
    fn first_target(&self, mut calls: Vec<(Node<'_>, usize, bool)>) -> AllocTarget {
        // Known allocators first, then the innermost statement, then source
        // order (an outer call before the calls in its arguments).
        calls.sort_by_key(|(n, span, known)| (!*known, *span, n.start_byte()));
        let mut reason = None;
        for (call, _, _) in calls {
            match self.resolve_call(call) {
                AllocTarget::Unknown(why) => {
                    reason.get_or_insert(why);
                }
                found => return found,
            }
        }
        AllocTarget::Unknown(reason.unwrap_or_default())
    }

    // ----- allocation targets -------------------------------------------

    /// Runs a recursive lookup step, giving up (`None`) beyond 64 nested
    /// steps.
    fn guarded<T>(&self, f: impl FnOnce() -> Option<T>) -> Option<T> {
        let depth = self.depth.get();
        if depth >= 64 {
            return None;
        }
        self.depth.set(depth + 1);
        let result = f();
        self.depth.set(depth);
        result
    }

    fn node_text(&self, node: Node<'_>) -> &str {
        node.utf8_text(self.text.as_bytes()).unwrap_or("")
    }

    /// The node's text without comments, whitespace collapsed: how size
    /// expressions and target names are reported.
    fn clean_text(&self, node: Node<'_>) -> String {
        let mut out = String::new();
        let mut pos = node.start_byte();
        visit(node, &mut |n| {
            if n.kind() == "comment" && n.start_byte() >= pos {
                out.push_str(self.text.get(pos..n.start_byte()).unwrap_or(""));
                out.push(' ');
                pos = n.end_byte();
            }
        });
        out.push_str(self.text.get(pos..node.end_byte()).unwrap_or(""));
        squash(&out)
    }

    /// The called function's name: the identifier, or the callee
    /// expression's text (`ops->alloc`).
    fn callee_name(&self, call: Node<'_>) -> String {
        if call.kind() == "new_expression" {
            return if call.child_by_field_name("declarator").is_some() {
                "new[]".into()
            } else {
                "new".into()
            };
        }
        call.child_by_field_name("function")
            .map(|f| self.clean_text(strip(f)))
            .unwrap_or_default()
    }

    /// The node whose line span decides whether a call is "on" a line.
    fn statement_of<'t>(&self, call: Node<'t>) -> Node<'t> {
        let mut prev = call;
        while let Some(parent) = prev.parent() {
            if STATEMENT_KINDS.contains(&parent.kind()) {
                return parent;
            }
            if CONTAINER_KINDS.contains(&parent.kind()) {
                return prev;
            }
            prev = parent;
        }
        prev
    }

    /// Follows the value of one call to where it is stored.
    fn resolve_call(&self, call: Node<'_>) -> AllocTarget {
        let (ty, size_expr) = if call.kind() == "new_expression" {
            // `new T[n]`: the size is n elements of T, and T is the element
            // type whatever the target is declared as (`auto`).
            let ty = call
                .child_by_field_name("type")
                .map(|t| self.clean_text(t))
                .unwrap_or_default();
            let length = call
                .child_by_field_name("declarator")
                .and_then(|d| d.child_by_field_name("length"))
                .map(|l| self.clean_text(l));
            (ty, length)
        } else if let Some((ty, length)) = self.make_unique_of(call) {
            (ty, length)
        } else {
            return self.resolve_value(call);
        };
        let size_expr = Some(match size_expr {
            Some(n) => format!("{n}, sizeof({ty})"),
            None => format!("sizeof({ty})"),
        });
        match self.resolve_value(call) {
            AllocTarget::Named { name, alloc_fn, .. } => AllocTarget::Named {
                name,
                elem_type: Some(ty).filter(|t| !t.is_empty()),
                alloc_fn,
                size_expr,
            },
            other => other,
        }
    }

    /// For `std::make_unique<T[]>(n)` (and `make_unique_for_overwrite`):
    /// the element type `T` and the count `n`; for `std::make_unique<T>(...)`
    /// the type and no count. `None` for any other call.
    fn make_unique_of(&self, call: Node<'_>) -> Option<(String, Option<String>)> {
        let callee = self.callee_name(call);
        let bare = callee.strip_prefix("std::").unwrap_or(&callee);
        let args = bare
            .strip_prefix("make_unique<")
            .or_else(|| bare.strip_prefix("make_unique_for_overwrite<"))?
            .strip_suffix('>')?
            .trim();
        match args.strip_suffix("[]") {
            Some(elem) => {
                let count = call
                    .child_by_field_name("arguments")
                    .map(children)
                    .and_then(|a| a.first().map(|n| self.clean_text(*n)))?;
                Some((elem.trim().to_string(), Some(count)))
            }
            None => Some((args.to_string(), None)),
        }
    }

    /// Follows the value of one call (or `new`) to where it is stored.
    fn resolve_value(&self, call: Node<'_>) -> AllocTarget {
        let alloc_fn = self.callee_name(call);
        let line = call.start_position().row + 1;
        let args = call
            .child_by_field_name("arguments")
            .map(children)
            .unwrap_or_default();
        let size_expr = self.size_text(&alloc_fn, &args);

        if alloc_fn == "posix_memalign" {
            return self.memalign_target(&args, line, alloc_fn, size_expr);
        }

        let mut node = call;
        // The outermost cast of the value, whose type stands in for the
        // target's when the target is declared outside this file.
        let mut cast: Option<Node<'_>> = None;
        // Designators crossed inside an initializer, outermost first:
        // `.rows`, `[0]`.
        let mut path: Vec<String> = Vec::new();
        loop {
            let Some(parent) = node.parent() else {
                return AllocTarget::Unknown(format!(
                    "the result of {alloc_fn} on line {line} is not stored"
                ));
            };
            match parent.kind() {
                "argument_list" | "initializer_list"
                    if parent
                        .parent()
                        .is_some_and(|p| p.kind() == "field_initializer") =>
                {
                    return self.member_initializer(parent, alloc_fn, size_expr);
                }
                "parenthesized_expression" => node = parent,
                "cast_expression" => {
                    cast = Some(parent);
                    node = parent
                }
                "conditional_expression"
                    if parent.child_by_field_name("condition") != Some(node) =>
                {
                    node = parent
                }
                "comma_expression" if parent.child_by_field_name("right") == Some(node) => {
                    node = parent
                }
                "assignment_expression" => {
                    return self.assigned_target(parent, node, cast, line, alloc_fn, size_expr)
                }
                "initializer_pair" if parent.child_by_field_name("value") == Some(node) => {
                    let mut cursor = parent.walk();
                    let designators: Vec<String> = parent
                        .children_by_field_name("designator", &mut cursor)
                        .map(|d| self.clean_text(d))
                        .collect();
                    path.splice(0..0, designators);
                    node = parent
                }
                "initializer_list" => {
                    if node.kind() != "initializer_pair" {
                        let index = children(parent).iter().position(|c| *c == node);
                        path.insert(0, format!("[{}]", index.unwrap_or(0)));
                    }
                    node = parent
                }
                "init_declarator" if !path.is_empty() => {
                    return self.designated_target(parent, &path, line, alloc_fn, size_expr)
                }
                "init_declarator" => {
                    return self.declared_target(parent, line, alloc_fn, size_expr)
                }
                "return_statement" => return AllocTarget::Returned,
                "argument_list" => {
                    let outer = parent
                        .parent()
                        .map(|c| self.callee_name(c))
                        .unwrap_or_default();
                    return AllocTarget::Unknown(format!(
                        "the result of {alloc_fn} on line {line} is passed to {outer}, not stored"
                    ));
                }
                _ => {
                    return AllocTarget::Unknown(format!(
                        "the result of {alloc_fn} on line {line} is not stored in a variable"
                    ))
                }
            }
        }
    }

    /// The variable whose address `posix_memalign` gets as its first
    /// argument (`&A`).
    fn memalign_target(
        &self,
        args: &[Node<'_>],
        line: usize,
        alloc_fn: String,
        size_expr: Option<String>,
    ) -> AllocTarget {
        let Some(first) = args.first() else {
            return AllocTarget::Unknown(format!("posix_memalign on line {line} has no arguments"));
        };
        let target = strip(*first);
        let lvalue = if target.kind() == "pointer_expression"
            && target
                .child_by_field_name("operator")
                .is_some_and(|o| o.kind() == "&")
        {
            target.child_by_field_name("argument").map(strip)
        } else {
            None
        };
        let Some(lvalue) = lvalue else {
            return AllocTarget::Unknown(format!(
                "the first argument of posix_memalign on line {line} is not the address of a variable"
            ));
        };
        self.named(lvalue, None, alloc_fn, size_expr)
    }

    /// The left side of `X = value`: the value (`node`) must be the plain
    /// assignment's right side. A cast of the value gives the element type
    /// when the left side's declaration is elsewhere.
    fn assigned_target(
        &self,
        assign: Node<'_>,
        node: Node<'_>,
        cast: Option<Node<'_>>,
        line: usize,
        alloc_fn: String,
        size_expr: Option<String>,
    ) -> AllocTarget {
        let is_plain = assign
            .child_by_field_name("operator")
            .is_some_and(|o| o.kind() == "=");
        let left = assign.child_by_field_name("left");
        let Some(left) =
            left.filter(|_| is_plain && assign.child_by_field_name("right") == Some(node))
        else {
            return AllocTarget::Unknown(format!(
                "the result of {alloc_fn} on line {line} is not assigned with a plain `=`"
            ));
        };
        match self.named(strip(left), None, alloc_fn, size_expr) {
            AllocTarget::Named {
                name,
                elem_type: None,
                alloc_fn,
                size_expr,
            } => AllocTarget::Named {
                name,
                elem_type: cast
                    .and_then(|c| c.child_by_field_name("type"))
                    .and_then(|t| self.descriptor_type(&self.text, t))
                    .and_then(|t| t.deref())
                    .map(|t| t.render()),
                alloc_fn,
                size_expr,
            },
            other => other,
        }
    }

    /// A member or element of a declared variable initialised through
    /// designators: `struct grid g = { .rows = malloc(n) }` names `g.rows`.
    fn designated_target(
        &self,
        init: Node<'_>,
        path: &[String],
        line: usize,
        alloc_fn: String,
        size_expr: Option<String>,
    ) -> AllocTarget {
        let declarator = init.child_by_field_name("declarator");
        let type_node = init.parent().and_then(|d| d.child_by_field_name("type"));
        let Some(name) = declarator.and_then(|d| self.declarator_name(d)) else {
            return AllocTarget::Unknown(format!(
                "the declarator initialised by {alloc_fn} on line {line} has no name"
            ));
        };
        let mut ctype = type_node
            .zip(declarator)
            .map(|(t, d)| self.declared_type(t, d));
        for step in path {
            ctype = ctype.and_then(|t| match step.strip_prefix('.') {
                Some(field) => self.field_type(t, field.trim()),
                None => self.deref(t),
            });
        }
        AllocTarget::Named {
            name: format!("{}{}", self.clean_text(name), path.concat()),
            elem_type: ctype.and_then(|t| self.deref(t)).map(|t| t.render()),
            alloc_fn,
            size_expr,
        }
    }

    /// The variable a declaration initialises with the value: `double *X =
    /// malloc(n)` names `X`, with the declared type.
    fn declared_target(
        &self,
        init: Node<'_>,
        line: usize,
        alloc_fn: String,
        size_expr: Option<String>,
    ) -> AllocTarget {
        let (Some(declarator), Some(decl)) =
            (init.child_by_field_name("declarator"), init.parent())
        else {
            return AllocTarget::Unknown(format!(
                "the initializer with {alloc_fn} on line {line} is not in a declaration"
            ));
        };
        let ctype = decl
            .child_by_field_name("type")
            .map(|t| self.declared_type(t, declarator));
        match self.declarator_name(declarator) {
            Some(name) => self.named(name, Some(ctype), alloc_fn, size_expr),
            None => AllocTarget::Unknown(format!(
                "the declarator initialised by {alloc_fn} on line {line} has no name"
            )),
        }
    }

    /// The member that a constructor's member initializer stores the value
    /// into: `data_` for `Grid(int n) : data_(new float[n])` or
    /// `data_{new float[n]}`, where `args` is the initializer's argument or
    /// initializer list.
    fn member_initializer(
        &self,
        args: Node<'_>,
        alloc_fn: String,
        size_expr: Option<String>,
    ) -> AllocTarget {
        let member = args.parent().and_then(|init| {
            children(init)
                .into_iter()
                .find(|c| c.kind() != "argument_list" && c.kind() != "initializer_list")
        });
        match member {
            Some(m) => self.named(m, None, alloc_fn, size_expr),
            None => AllocTarget::Unknown(format!(
                "the member initialised by {alloc_fn} on line {} has no name",
                args.start_position().row + 1
            )),
        }
    }

    /// Builds the `Named` answer for the lvalue `target` (an identifier
    /// node of a declarator, or an expression), or `Returned` when the
    /// target is a variable the enclosing function returns.
    fn named<'t>(
        &'t self,
        target: Node<'t>,
        declared: Option<Option<CType<'t>>>,
        alloc_fn: String,
        size_expr: Option<String>,
    ) -> AllocTarget {
        let name = self.clean_text(target);
        // A member set in a method: `this->data_` is the member `data_`.
        let name = name
            .strip_prefix("this->")
            .map(str::to_string)
            .unwrap_or(name);
        if target.kind() == "identifier" && self.function_returns(target, &name) {
            return AllocTarget::Returned;
        }
        let ctype = match declared {
            Some(declared) => declared,
            None => self.expr_type(self.text.as_str(), target, Some(target)),
        };
        let elem_type = ctype.and_then(|t| self.deref(t)).map(|t| t.render());
        AllocTarget::Named {
            name,
            elem_type,
            alloc_fn,
            size_expr,
        }
    }

    /// Whether the function around `at` has a `return NAME;` (through casts
    /// and parentheses).
    fn function_returns(&self, at: Node<'_>, name: &str) -> bool {
        let mut func = at.parent();
        while let Some(f) = func {
            if f.kind() == "function_definition" {
                break;
            }
            func = f.parent();
        }
        let Some(body) = func.and_then(|f| f.child_by_field_name("body")) else {
            return false;
        };
        let mut found = false;
        visit(body, &mut |n| {
            if n.kind() == "return_statement" {
                if let Some(value) = children(n).first() {
                    let value = strip(*value);
                    found |= value.kind() == "identifier" && self.node_text(value) == name;
                }
            }
        });
        found
    }

    /// Source text of the size argument(s) of a call to `alloc_fn`.
    fn size_text(&self, alloc_fn: &str, args: &[Node<'_>]) -> Option<String> {
        let indices: Vec<usize> = match allocator_size_args(alloc_fn) {
            Some(indices) => indices.to_vec(),
            // Any other function is only assumed to take a size when its
            // name says it allocates (`xmalloc`, `pool_alloc`): both
            // arguments of a two-argument `...calloc`, else the last one.
            None if !alloc_fn.to_ascii_lowercase().contains("alloc") || args.is_empty() => {
                return None
            }
            None if args.len() == 2 && alloc_fn.ends_with("calloc") => vec![0, 1],
            // `alloc_data(n, sizeof(T))`: a count and an element size.
            None if args.len() == 2
                && !alloc_fn.contains("realloc")
                && self.node_text(args[1]).trim_start().starts_with("sizeof") =>
            {
                vec![0, 1]
            }
            None => vec![args.len() - 1],
        };
        let parts: Option<Vec<String>> = indices
            .iter()
            .map(|i| args.get(*i).map(|a| self.clean_text(*a)))
            .collect();
        parts.filter(|p| !p.is_empty()).map(|p| p.join(", "))
    }

    // ----- declarations and types ---------------------------------------

    /// The identifier a declarator declares.
    fn declarator_name<'t>(&self, mut declarator: Node<'t>) -> Option<Node<'t>> {
        loop {
            match declarator.kind() {
                "identifier" | "field_identifier" | "type_identifier" => return Some(declarator),
                "parenthesized_declarator" | "attributed_declarator" | "reference_declarator" => {
                    declarator = *children(declarator).first()?
                }
                _ => declarator = declarator.child_by_field_name("declarator")?,
            }
        }
    }

    /// The type a declarator gives its name, with base type node `type_node`.
    fn declared_type<'t>(&self, type_node: Node<'t>, declarator: Node<'t>) -> CType<'t> {
        let mut outer_to_inner = Vec::new();
        let mut d = Some(declarator);
        while let Some(node) = d {
            d = match node.kind() {
                "pointer_declarator" | "abstract_pointer_declarator" => {
                    outer_to_inner.push(Deriv::Pointer);
                    node.child_by_field_name("declarator")
                }
                "array_declarator" | "abstract_array_declarator" => {
                    let size = node
                        .child_by_field_name("size")
                        .and_then(|s| self.eval_const(self.text.as_str(), s, Some(s)));
                    outer_to_inner.push(Deriv::Array(size));
                    node.child_by_field_name("declarator")
                }
                "function_declarator" | "abstract_function_declarator" => {
                    outer_to_inner.push(Deriv::Function);
                    node.child_by_field_name("declarator")
                }
                "parenthesized_declarator"
                | "abstract_parenthesized_declarator"
                | "attributed_declarator" => children(node).first().copied(),
                "init_declarator" => node.child_by_field_name("declarator"),
                _ => None,
            };
        }
        outer_to_inner.reverse();
        let mut ctype = self.base_type(type_node);
        ctype.derivs = outer_to_inner;
        ctype
    }

    /// The base type named by a type specifier node.
    fn base_type<'t>(&self, type_node: Node<'t>) -> CType<'t> {
        let (base, base_node) = match type_node.kind() {
            "struct_specifier" | "union_specifier" | "enum_specifier" => {
                let keyword = type_node.kind().trim_end_matches("_specifier");
                let base = match type_node.child_by_field_name("name") {
                    Some(name) => format!("{keyword} {}", self.node_text(name)),
                    None => keyword.to_string(),
                };
                (base, Some(type_node))
            }
            _ => (squash(self.node_text(type_node)), None),
        };
        CType {
            base,
            base_node,
            derivs: Vec::new(),
        }
    }

    /// The type given by a `type_descriptor` (the operand of a cast or of
    /// `sizeof(type)`), in a tree whose text is `src`.
    fn descriptor_type<'t>(&'t self, src: &str, descriptor: Node<'_>) -> Option<CType<'t>> {
        // Descriptors may come from a snippet tree; re-parse the type name
        // in the main file's context by building it from text.
        let type_node = descriptor.child_by_field_name("type")?;
        let type_text = squash(type_node.utf8_text(src.as_bytes()).ok()?);
        let mut derivs_outer = Vec::new();
        let mut d = descriptor.child_by_field_name("declarator");
        while let Some(node) = d {
            d = match node.kind() {
                "abstract_pointer_declarator" => {
                    derivs_outer.push(Deriv::Pointer);
                    node.child_by_field_name("declarator")
                }
                "abstract_array_declarator" => {
                    let size = node
                        .child_by_field_name("size")
                        .and_then(|s| self.eval_const(src, s, None));
                    derivs_outer.push(Deriv::Array(size));
                    node.child_by_field_name("declarator")
                }
                "abstract_function_declarator" => {
                    derivs_outer.push(Deriv::Function);
                    node.child_by_field_name("declarator")
                }
                "abstract_parenthesized_declarator" => children(node).first().copied(),
                _ => None,
            };
        }
        derivs_outer.reverse();
        let (base, base_node) = match type_node.kind() {
            "struct_specifier" | "union_specifier" | "enum_specifier" => {
                let keyword = type_node.kind().trim_end_matches("_specifier");
                let name = type_node
                    .child_by_field_name("name")
                    .and_then(|n| n.utf8_text(src.as_bytes()).ok());
                match name {
                    Some(name) => (
                        format!("{keyword} {name}"),
                        self.find_tagged(type_node.kind(), name),
                    ),
                    None => (keyword.to_string(), None),
                }
            }
            _ => (type_text, None),
        };
        Some(CType {
            base,
            base_node,
            derivs: derivs_outer,
        })
    }

    /// The definition (with a body) of `struct NAME` (or union/enum).
    fn find_tagged(&self, kind: &str, name: &str) -> Option<Node<'_>> {
        let mut found = None;
        visit(self.tree.root_node(), &mut |n| {
            if found.is_none()
                && n.kind() == kind
                && n.child_by_field_name("body").is_some()
                && n.child_by_field_name("name")
                    .is_some_and(|m| self.node_text(m) == name)
            {
                found = Some(n);
            }
        });
        found
    }

    /// Replaces typedef names by what they stand for (a few levels deep),
    /// and finds the body of a struct named only by its tag.
    fn resolve<'t>(&'t self, mut ctype: CType<'t>) -> CType<'t> {
        for _ in 0..8 {
            if let Some(node) = ctype.base_node {
                if node.child_by_field_name("body").is_none() {
                    if let Some(name) = node.child_by_field_name("name") {
                        ctype.base_node = self.find_tagged(node.kind(), self.node_text(name));
                    }
                }
                return ctype;
            }
            if let Some(kind) = ["struct ", "union ", "enum "]
                .iter()
                .find(|k| ctype.base.starts_with(**k))
            {
                let specifier = format!("{}_specifier", kind.trim_end());
                ctype.base_node = self.find_tagged(&specifier, &ctype.base[kind.len()..]);
                return ctype;
            }
            let Some((type_node, declarator)) = self.find_typedef(&ctype.base) else {
                return ctype;
            };
            let target = self.declared_type(type_node, declarator);
            let mut derivs = ctype.derivs;
            derivs.extend(target.derivs);
            ctype = CType {
                base: target.base,
                base_node: target.base_node,
                derivs,
            };
        }
        ctype
    }

    /// The `typedef` that defines `name`: its type node and declarator.
    fn find_typedef(&self, name: &str) -> Option<(Node<'_>, Node<'_>)> {
        let mut found = None;
        visit(self.tree.root_node(), &mut |n| {
            if found.is_some() || n.kind() != "type_definition" {
                return;
            }
            let Some(type_node) = n.child_by_field_name("type") else {
                return;
            };
            let mut cursor = n.walk();
            for declarator in n.children_by_field_name("declarator", &mut cursor) {
                if self
                    .declarator_name(declarator)
                    .is_some_and(|id| self.node_text(id) == name)
                {
                    found = Some((type_node, declarator));
                }
            }
        });
        found
    }

    /// `*x` of a value of type `ctype`, looking through typedefs only when
    /// needed: `real *x` gives `real`, a pointer typedef `nodep` gives
    /// `struct node`.
    fn deref<'t>(&'t self, ctype: CType<'t>) -> Option<CType<'t>> {
        ctype
            .clone()
            .deref()
            .or_else(|| self.resolve(ctype).deref())
    }

    /// The type of field `field` of the struct/union `ctype` (no
    /// derivations left).
    fn field_type<'t>(&'t self, ctype: CType<'t>, field: &str) -> Option<CType<'t>> {
        let ctype = self.resolve(ctype);
        if !ctype.derivs.is_empty() {
            return None;
        }
        let body = ctype.base_node?.child_by_field_name("body")?;
        for member in children(body) {
            if member.kind() != "field_declaration" {
                continue;
            }
            let type_node = member.child_by_field_name("type")?;
            let mut cursor = member.walk();
            for declarator in member.children_by_field_name("declarator", &mut cursor) {
                if self
                    .declarator_name(declarator)
                    .is_some_and(|id| self.node_text(id) == field)
                {
                    return Some(self.declared_type(type_node, declarator));
                }
            }
        }
        None
    }

    /// The declared type of variable `name` visible at `at` (a node of the
    /// main tree), or anywhere in the file when `at` is `None`.
    fn lookup_var<'t>(&'t self, name: &str, at: Option<Node<'t>>) -> Option<CType<'t>> {
        let (decl, d) = self.lookup_decl(name, at)?;
        Some(self.declared_type(decl.child_by_field_name("type")?, d))
    }

    /// The declaration (and its declarator) of variable `name` as seen at
    /// `at`: see [`Self::lookup_var`].
    fn lookup_decl<'t>(&'t self, name: &str, at: Option<Node<'t>>) -> Option<(Node<'t>, Node<'t>)> {
        let matches = |decl: Node<'t>| -> Option<(Node<'t>, Node<'t>)> {
            decl.child_by_field_name("type")?;
            let mut cursor = decl.walk();
            let declarators: Vec<Node<'t>> = decl
                .children_by_field_name("declarator", &mut cursor)
                .collect();
            declarators.into_iter().find_map(move |d| {
                let id = self.declarator_name(d)?;
                (self.node_text(id) == name).then_some((decl, d))
            })
        };
        let Some(at) = at else {
            let mut found = None;
            visit(self.tree.root_node(), &mut |n| {
                if found.is_none() && matches!(n.kind(), "declaration" | "parameter_declaration") {
                    found = matches(n);
                }
            });
            return found;
        };
        // Resolve the scope: the innermost node of the main tree at `at`.
        let at = self
            .tree
            .root_node()
            .descendant_for_byte_range(at.start_byte(), at.start_byte())
            .unwrap_or(at);
        let mut scope = at.parent();
        while let Some(s) = scope {
            match s.kind() {
                "compound_statement" | "translation_unit" | "for_statement" => {
                    let mut found = None;
                    for child in children(s) {
                        if child.start_byte() > at.start_byte() {
                            break;
                        }
                        if child.kind() == "declaration" {
                            if let Some(t) = matches(child) {
                                found = Some(t);
                            }
                        }
                    }
                    if found.is_some() {
                        return found;
                    }
                }
                "function_definition" => {
                    let mut params = None;
                    if let Some(declarator) = s.child_by_field_name("declarator") {
                        visit(declarator, &mut |n| {
                            if params.is_none() && n.kind() == "parameter_list" {
                                params = Some(n);
                            }
                        });
                    }
                    if let Some(params) = params {
                        for param in children(params) {
                            if param.kind() == "parameter_declaration" {
                                if let Some(t) = matches(param) {
                                    return Some(t);
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
            scope = s.parent();
        }
        None
    }

    /// The static type of expression `expr` (in a tree whose text is
    /// `src`), with variables looked up at `scope`.
    fn expr_type<'t>(
        &'t self,
        src: &str,
        expr: Node<'_>,
        scope: Option<Node<'t>>,
    ) -> Option<CType<'t>> {
        let text = |n: Node<'_>| n.utf8_text(src.as_bytes()).ok();
        match expr.kind() {
            "identifier" => self.lookup_var(text(expr)?, scope),
            "parenthesized_expression" => self.expr_type(src, *children(expr).first()?, scope),
            "cast_expression" => self.descriptor_type(src, expr.child_by_field_name("type")?),
            "subscript_expression" => {
                self.deref(self.expr_type(src, expr.child_by_field_name("argument")?, scope)?)
            }
            "pointer_expression" => {
                let inner = self.expr_type(src, expr.child_by_field_name("argument")?, scope)?;
                match expr.child_by_field_name("operator")?.kind() {
                    "*" => self.deref(inner),
                    _ => {
                        let mut t = inner;
                        t.derivs.insert(0, Deriv::Pointer);
                        Some(t)
                    }
                }
            }
            "field_expression" => {
                let mut object =
                    self.expr_type(src, expr.child_by_field_name("argument")?, scope)?;
                if expr.child_by_field_name("operator")?.kind() == "->" {
                    object = self.resolve(object).deref()?;
                }
                self.field_type(object, text(expr.child_by_field_name("field")?)?)
            }
            _ => None,
        }
    }

    /// Size and alignment of a type, `None` if unknown.
    fn layout(&self, ctype: CType<'_>) -> Option<(i64, i64)> {
        self.guarded(|| self.layout_inner(ctype))
    }

    fn layout_inner(&self, ctype: CType<'_>) -> Option<(i64, i64)> {
        let ctype = self.resolve(ctype);
        match ctype.derivs.first() {
            Some(Deriv::Pointer) => return Some((8, 8)),
            Some(Deriv::Array(n)) => {
                let n = (*n)?;
                let elem = ctype.deref()?;
                let (size, align) = self.layout(elem)?;
                return Some((size.checked_mul(n)?, align));
            }
            Some(Deriv::Function) => return None,
            None => {}
        }
        if let Some(l) = primitive_layout(&ctype.base) {
            return Some(l);
        }
        let node = ctype.base_node?;
        match node.kind() {
            "enum_specifier" => Some((4, 4)),
            "struct_specifier" | "union_specifier" => {
                let is_union = node.kind() == "union_specifier";
                let body = node.child_by_field_name("body")?;
                let (mut size, mut align) = (0i64, 1i64);
                for member in children(body) {
                    if member.kind() != "field_declaration" {
                        continue;
                    }
                    if children(member)
                        .iter()
                        .any(|c| c.kind() == "bitfield_clause")
                    {
                        return None;
                    }
                    let type_node = member.child_by_field_name("type")?;
                    let mut cursor = member.walk();
                    let declarators: Vec<Node<'_>> = member
                        .children_by_field_name("declarator", &mut cursor)
                        .collect();
                    if declarators.is_empty() {
                        // An anonymous struct/union member.
                        let (s, a) = self.layout(self.base_type(type_node))?;
                        size = if is_union {
                            size.max(s)
                        } else {
                            round_up(size, a) + s
                        };
                        align = align.max(a);
                    }
                    for declarator in declarators {
                        let (s, a) = self.layout(self.declared_type(type_node, declarator))?;
                        size = if is_union {
                            size.max(s)
                        } else {
                            round_up(size, a) + s
                        };
                        align = align.max(a);
                    }
                }
                Some((round_up(size, align), align))
            }
            _ => None,
        }
    }

    // ----- constant evaluation ------------------------------------------

    /// Parses `expr` alone as a C expression and calls `f` with its text and
    /// root expression node.
    fn with_expr<T>(&self, expr: &str, f: impl FnOnce(&str, Node<'_>) -> Option<T>) -> Option<T> {
        let snippet = format!("int mapvis_value__ = ({expr}\n);\n");
        let tree = parse_c(&snippet);
        let root = tree.root_node();
        if root.has_error() {
            return None;
        }
        let declaration = children(root).into_iter().next()?;
        let init = declaration.child_by_field_name("declarator")?;
        let value = init.child_by_field_name("value")?;
        let inner = *children(value).first()?;
        f(&snippet, inner)
    }

    /// Evaluates a constant expression given as text.
    fn eval_text(&self, expr: &str) -> Option<i64> {
        self.with_expr(expr, |src, node| self.eval_const(src, node, None))
    }

    fn eval_size_scoped(&self, expr: &str, scope: Option<Node<'_>>) -> Option<SizeExpr> {
        self.with_expr(expr, |src, node| {
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
                    let ctype = self.sizeof_operand(src, factor, scope);
                    if !any_sizeof {
                        size.elem_type = ctype.as_ref().map(|t| t.render());
                    }
                    any_sizeof = true;
                    let n = ctype.and_then(|t| self.layout(t)).map(|(s, _)| s);
                    bytes = bytes.zip(n).and_then(|(a, b)| a.checked_mul(b));
                } else {
                    size.factors.push(self.eval_const(src, factor, scope));
                }
            }
            if any_sizeof {
                size.elem_bytes = bytes;
            }
            Some(size)
        })
    }

    /// The type whose size a `sizeof` expression takes.
    fn sizeof_operand<'t>(
        &'t self,
        src: &str,
        sizeof: Node<'_>,
        scope: Option<Node<'_>>,
    ) -> Option<CType<'t>> {
        let scope_main = scope.map(|s| self.main_node(s));
        if let Some(descriptor) = sizeof.child_by_field_name("type") {
            let ctype = self.descriptor_type(src, descriptor)?;
            // `sizeof(x)` with a variable `x` can parse as a type name.
            let bare_name = descriptor.child_by_field_name("declarator").is_none()
                && descriptor
                    .child_by_field_name("type")
                    .is_some_and(|t| t.kind() == "type_identifier");
            if bare_name && self.find_typedef(&ctype.base).is_none() {
                if let Some(var) = self.lookup_var(&ctype.base, scope_main) {
                    return Some(var);
                }
            }
            return Some(ctype);
        }
        let value = sizeof.child_by_field_name("value")?;
        // `sizeof(name)` where name is a typedef parses as an expression.
        let inner = strip(value);
        if inner.kind() == "identifier" {
            let name = inner.utf8_text(src.as_bytes()).ok()?;
            if let Some(var) = self.lookup_var(name, scope_main) {
                return Some(var);
            }
            if self.find_typedef(name).is_some() || primitive_layout(name).is_some() {
                return Some(CType {
                    base: name.to_string(),
                    base_node: None,
                    derivs: Vec::new(),
                });
            }
            return None;
        }
        self.expr_type(src, value, scope_main)
    }

    /// The main-tree node at the same position as `node` (which is already
    /// a main-tree node whenever a scope is given).
    fn main_node<'t>(&'t self, node: Node<'_>) -> Node<'t> {
        self.tree
            .root_node()
            .descendant_for_byte_range(node.start_byte(), node.start_byte())
            .unwrap_or_else(|| self.tree.root_node())
    }

    /// The first node on `line` (1-based), used as a lookup scope.
    fn node_at_line(&self, line: u32) -> Option<Node<'_>> {
        let row = (line as usize).checked_sub(1)?;
        let text = self.text.lines().nth(row)?;
        let column = text.len() - text.trim_start().len();
        let point = Point { row, column };
        self.tree
            .root_node()
            .descendant_for_point_range(point, point)
    }

    /// Evaluates an integer constant expression (in a tree whose text is
    /// `src`), using `#define`s and enum constants of this file.
    fn eval_const(&self, src: &str, node: Node<'_>, scope: Option<Node<'_>>) -> Option<i64> {
        let text = |n: Node<'_>| n.utf8_text(src.as_bytes()).ok();
        let sub = |field: &str| -> Option<i64> {
            self.eval_const(src, node.child_by_field_name(field)?, scope)
        };
        match node.kind() {
            "number_literal" => parse_int(text(node)?),
            "char_literal" => {
                let t = text(node)?;
                let inner = t.strip_prefix('\'')?.strip_suffix('\'')?;
                let mut chars = inner.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Some(c as i64),
                    _ => None,
                }
            }
            "identifier" => {
                let name = text(node)?;
                self.defines
                    .get(name)
                    .copied()
                    .or_else(|| self.enum_constant(name))
            }
            "parenthesized_expression" => self.eval_const(src, *children(node).first()?, scope),
            "cast_expression" => sub("value"),
            "unary_expression" => {
                let v = sub("argument")?;
                match node.child_by_field_name("operator")?.kind() {
                    "-" => v.checked_neg(),
                    "+" => Some(v),
                    "~" => Some(!v),
                    "!" => Some(i64::from(v == 0)),
                    _ => None,
                }
            }
            "binary_expression" => {
                let (l, r) = (sub("left")?, sub("right")?);
                match node.child_by_field_name("operator")?.kind() {
                    "+" => l.checked_add(r),
                    "-" => l.checked_sub(r),
                    "*" => l.checked_mul(r),
                    "/" => l.checked_div(r),
                    "%" => l.checked_rem(r),
                    "<<" => l.checked_shl(u32::try_from(r).ok()?),
                    ">>" => l.checked_shr(u32::try_from(r).ok()?),
                    "&" => Some(l & r),
                    "|" => Some(l | r),
                    "^" => Some(l ^ r),
                    "==" => Some(i64::from(l == r)),
                    "!=" => Some(i64::from(l != r)),
                    "<" => Some(i64::from(l < r)),
                    "<=" => Some(i64::from(l <= r)),
                    ">" => Some(i64::from(l > r)),
                    ">=" => Some(i64::from(l >= r)),
                    "&&" => Some(i64::from(l != 0 && r != 0)),
                    "||" => Some(i64::from(l != 0 || r != 0)),
                    _ => None,
                }
            }
            "conditional_expression" => {
                if sub("condition")? != 0 {
                    sub("consequence")
                } else {
                    sub("alternative")
                }
            }
            "sizeof_expression" => {
                let ctype = self.sizeof_operand(src, node, scope)?;
                self.layout(ctype).map(|(s, _)| s)
            }
            _ => None,
        }
    }

    /// The value of enum constant `name`, counting implicit values.
    fn enum_constant(&self, name: &str) -> Option<i64> {
        self.guarded(|| self.enum_constant_inner(name))
    }

    fn enum_constant_inner(&self, name: &str) -> Option<i64> {
        let mut found = None;
        visit(self.tree.root_node(), &mut |n| {
            if found.is_some() || n.kind() != "enumerator_list" {
                return;
            }
            let mut next = 0i64;
            for e in children(n) {
                if e.kind() != "enumerator" {
                    continue;
                }
                let value = match e.child_by_field_name("value") {
                    Some(v) => match self.eval_const(self.text.as_str(), v, None) {
                        Some(v) => v,
                        None => return,
                    },
                    None => next,
                };
                if e.child_by_field_name("name")
                    .is_some_and(|id| self.node_text(id) == name)
                {
                    found = Some(value);
                    return;
                }
                next = value.wrapping_add(1);
            }
        });
        found
    }
}

/// The value of an integer constant expression made of literals and
/// operators only (a `#if` condition once its names are replaced), `None`
/// when it is not one.
pub(crate) fn eval_integer_expression(expr: &str) -> Option<i64> {
    CSource::parse(String::new()).eval_text(expr)
}

/// Collects the operands of top-level `*` and `,` (through parentheses).
fn flatten_product<'t>(node: Node<'t>, out: &mut Vec<Node<'t>>) {
    match node.kind() {
        "parenthesized_expression" => match children(node).as_slice() {
            [inner] => flatten_product(*inner, out),
            _ => out.push(node),
        },
        "comma_expression" => {
            for field in ["left", "right"] {
                if let Some(part) = node.child_by_field_name(field) {
                    flatten_product(part, out);
                }
            }
        }
        "binary_expression"
            if node
                .child_by_field_name("operator")
                .is_some_and(|o| o.kind() == "*") =>
        {
            for field in ["left", "right"] {
                if let Some(part) = node.child_by_field_name(field) {
                    flatten_product(part, out);
                }
            }
        }
        _ => out.push(node),
    }
}

fn round_up(value: i64, align: i64) -> i64 {
    if align <= 1 {
        value
    } else {
        (value + align - 1) / align * align
    }
}
