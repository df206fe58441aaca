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
//! `#ifdef`.
//!
//! This module follows an allocation's value to where it is stored. The
//! index of a file's allocation statements, the C type model
//! (declarations, typedefs, layouts) and constant evaluation live in
//! modules of their own, below this one, as does the syntax layer they
//! share; the macro expander is beside them. Allocation sizes (which
//! arguments of an allocator are the size, and a size expression's factors
//! evaluated) are in `csource/size.rs`, arrays declared on a line in
//! `csource/vla.rs`.
//!
//! Cost: parsing is linear in the file. The first allocation asked about
//! indexes the file's calls by line and column, and the first type question
//! its declarations by name, each in one walk of the syntax tree; after
//! that an allocation costs a hash probe and a walk from the root down to
//! its call (the depth times the statements passed on the way), not a walk
//! of the whole file. A file with thousands of allocation sites is named in
//! time linear in their number.

use std::cell::{OnceCell, RefCell};
use std::collections::{HashMap, HashSet};

use tree_sitter::{Node, Tree};

use super::cmacro::MacroTable;
use super::csites::{is_call, statement_of, CallIndex, Candidate};
use super::csyntax::{ancestors, children, ident_at, parse_lang, squash, strip, visit, Lines};
use super::ctype::{declarator_name, CType, TypeIndex, Types};

mod size;
mod vla;
pub use size::SizeExpr;
pub use vla::ArrayDecl;

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

/// A C source file parsed once with tree-sitter-c.
///
/// Parsing is linear in the file size and done once in [`CSource::parse`],
/// together with evaluating the file's `#define`s. The indexes behind the
/// queries are built on first use (see the module documentation), so
/// asking about every allocation of a file costs time linear in their
/// number.
///
/// `Send` but not `Sync` (the lazily built indexes use cells).
pub struct CSource {
    text: String,
    tree: Tree,
    lines: Lines,
    defines: HashMap<String, i64>,
    /// Every `#define` of the file, plus those of its headers once the
    /// caller adds them ([`CSource::add_macros`]).
    macros: MacroTable,
    /// Parsed as C++.
    cpp: bool,
    /// Declarations by name, for the type model; built on first use.
    types: OnceCell<TypeIndex>,
    /// Calls by line and column; built on first use.
    calls: OnceCell<CallIndex>,
    /// Per function definition (by its first byte): the identifiers it
    /// returns (`return p;`), found when first asked.
    returns: RefCell<HashMap<usize, HashSet<String>>>,
}

impl std::fmt::Debug for CSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CSource")
            .field("lines", &self.lines.count())
            .field("defines", &self.defines)
            .finish()
    }
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
        let macros = MacroTable::from_text(&text);
        let mut source = CSource::with_macros(text, cpp, macros, HashMap::new());
        source.compute_defines();
        source
    }

    /// The parsed `text` with `macros` and `defines` as given.
    fn with_macros(
        text: String,
        cpp: bool,
        macros: MacroTable,
        defines: HashMap<String, i64>,
    ) -> CSource {
        CSource {
            tree: parse_lang(&text, cpp),
            lines: Lines::new(&text),
            text,
            defines,
            macros,
            cpp,
            types: OnceCell::new(),
            calls: OnceCell::new(),
            returns: RefCell::new(HashMap::new()),
        }
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

    /// The type model of this file.
    fn types(&self) -> Types<'_> {
        let root = self.tree.root_node();
        let index = self
            .types
            .get_or_init(|| TypeIndex::build(root, &self.text));
        Types::new(&self.text, root, &self.lines, &self.defines, index)
    }

    fn call_index(&self) -> &CallIndex {
        self.calls.get_or_init(|| {
            let known =
                |call: Node<'_>| size::allocator_size_args(&self.callee_name(call)).is_some();
            CallIndex::build(self.tree.root_node(), &self.text, &known)
        })
    }

    /// Evaluates the object-like macros whose value (fully expanded) is an
    /// integer constant expression, into [`Self::defines`]. A macro whose
    /// expansion is cut short (see [`MacroTable::expand`]) is left out.
    fn compute_defines(&mut self) {
        let mut defines = HashMap::new();
        {
            let types = self.types();
            for (name, m) in self.macros.object_like() {
                let Ok(body) = self.macros.expand(&m.body) else {
                    continue;
                };
                if let Some(v) = types.eval_text(&body) {
                    defines.insert(name.to_string(), v);
                }
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
            } => self.eval_size_expanded(e, line),
            _ => None,
        };
        (target, size)
    }

    /// The allocation size `expr` at `line` evaluated as the compiler saw
    /// it: when its element size is not known as written, again with the
    /// file's macros expanded, so that `sizeof(TYPE)` with `#define TYPE
    /// double` (or `-DTYPE=double`, read from `-g3` debug information)
    /// gives 8. An expansion that fails (a runaway macro) keeps the
    /// expression as written.
    fn eval_size_expanded(&self, expr: &str, line: u32) -> Option<SizeExpr> {
        let plain = self.eval_size_at(expr, line);
        if plain.as_ref().is_some_and(|s| s.elem_bytes.is_some()) {
            return plain;
        }
        match self.macros.expand(expr) {
            Ok(e) if e != expr => self.eval_size_at(&e, line).or(plain),
            _ => plain,
        }
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
        let row = (line as usize).checked_sub(1)? as u32;
        let root = self.tree.root_node();
        let index = self.call_index();
        let found = index.member_call(root, row);
        let declared = index.declaration(root, row);
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
        let types = self.types();
        if object.kind() == "identifier" {
            if let Some((decl, _)) = types.lookup_decl(name, Some(object)) {
                return Some(decl);
            }
        }
        let root = self.tree.root_node();
        let member = self
            .types
            .get()
            .and_then(|index| index.field(name))
            .and_then(|m| m.get(root));
        member.or_else(|| types.lookup_decl(name, None).map(|(d, _)| d))
    }

    /// The byte range of the function-like macro invocation at `line` and
    /// `column` (the macro's name, its arguments and the closing `)`), or
    /// with `column` 0 the first one on the line.
    fn macro_invocation(&self, line: u32, column: u32) -> Option<(usize, usize)> {
        if self.macros.is_empty() {
            return None;
        }
        let row = (line as usize).checked_sub(1)?;
        let line_start = self.lines.start(row)?;
        let line_text = self.lines.text(&self.text, row)?;
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
            return self.closing_paren(open).map(|close| (start, close));
        }
        None
    }

    /// The byte after the `)` that closes the `(` at byte `open`.
    fn closing_paren(&self, open: usize) -> Option<usize> {
        let mut depth = 0usize;
        for (off, c) in self.text[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(open + off + 1);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// Expands the macro invocation at bytes `start..end` (which begins on
    /// `line`) in place, on that one line, and resolves the allocation the
    /// expansion holds. Costs one parse of the file per call; an expansion
    /// cut short (a macro that multiplies its argument, Ctrl-C) gives
    /// [`AllocTarget::Unknown`] saying so.
    fn resolve_in_expansion(
        &self,
        line: u32,
        start: usize,
        end: usize,
    ) -> (AllocTarget, Option<SizeExpr>) {
        let original = &self.text[start..end];
        let expanded = match self.macros.expand(original) {
            Ok(e) => e,
            Err(e) => {
                return (
                    AllocTarget::Unknown(format!("the macro on line {line} was not expanded: {e}")),
                    None,
                )
            }
        };
        let mut text = String::with_capacity(self.text.len() + expanded.len());
        text.push_str(&self.text[..start]);
        text.push_str(&expanded);
        // Keep every later line where it was.
        text.push_str(&"\n".repeat(original.matches('\n').count()));
        text.push_str(&self.text[end..]);
        let sub = CSource::with_macros(text, self.cpp, MacroTable::default(), self.defines.clone());
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

    /// The calls starting within bytes `lo..hi`, each with the bytes of its
    /// statement and whether it is a standard allocator.
    fn calls_in(&self, lo: usize, hi: usize) -> Vec<Candidate<'_>> {
        let root = self.tree.root_node();
        let mut calls = Vec::new();
        visit(root, &mut |n| {
            if is_call(n) && n.start_byte() >= lo && n.start_byte() < hi {
                let Some(stmt) = statement_of(&self.chain_to(n)) else {
                    return;
                };
                let known = size::allocator_size_args(&self.callee_name(n)).is_some();
                calls.push((n, stmt.end_byte() - stmt.start_byte(), known));
            }
        });
        calls
    }

    /// The nodes from the root down to `node`.
    fn chain_to<'t>(&'t self, node: Node<'t>) -> Vec<Node<'t>> {
        let chain = ancestors(self.tree.root_node(), node);
        if chain.last() == Some(&node) {
            return chain;
        }
        // The descent lost its way (zero-width nodes of a broken parse):
        // climb instead.
        let mut chain = vec![node];
        while let Some(p) = chain[chain.len() - 1].parent() {
            chain.push(p);
        }
        chain.reverse();
        chain
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
        let scope = self.types().node_at_line(line);
        self.eval_size_scoped(expr, scope)
    }

    fn eval_size_scoped(&self, expr: &str, scope: Option<Node<'_>>) -> Option<SizeExpr> {
        size::eval(&self.types(), expr, scope)
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
        if line == 0 || line as usize > self.lines.count() {
            return AllocTarget::Unknown(format!(
                "line {line} is outside the file, which has {} lines",
                self.lines.count()
            ));
        }
        let row = line - 1;
        let index = self.call_index();
        let root = self.tree.root_node();
        if column > 0 {
            let exact = index.starting_at(root, row, column);
            if !exact.is_empty() {
                return self.first_target(exact);
            }
        }
        let calls = index.on_row(root, row);
        if calls.is_empty() {
            return AllocTarget::Unknown(format!("line {line} has no function call"));
        }
        self.first_target(calls)
    }

    /// The first of `calls` whose value is stored (see
    /// [`Self::allocation_target`] for the order), or why none is.
    fn first_target(&self, mut calls: Vec<Candidate<'_>>) -> AllocTarget {
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

    /// Follows the value of one call (or `new`) to where it is stored,
    /// climbing its ancestors (found once, from the root).
    fn resolve_value<'t>(&'t self, call: Node<'t>) -> AllocTarget {
        let chain = self.chain_to(call);
        let site = Site {
            alloc_fn: self.callee_name(call),
            line: call.start_position().row + 1,
            func: chain
                .iter()
                .rev()
                .find(|n| n.kind() == "function_definition")
                .copied(),
        };
        let args = call
            .child_by_field_name("arguments")
            .map(children)
            .unwrap_or_default();
        let size_expr = self.size_text(&site.alloc_fn, &args);

        if site.alloc_fn == "posix_memalign" {
            return self.memalign_target(&args, site, size_expr);
        }

        // The outermost cast of the value, whose type stands in for the
        // target's when the target is declared outside this file.
        let mut cast: Option<Node<'_>> = None;
        // Designators crossed inside an initializer, outermost first:
        // `.rows`, `[0]`.
        let mut path: Vec<String> = Vec::new();
        let above = |k: usize, up: usize| k.checked_sub(up).map(|j| chain[j]);
        for k in (0..chain.len()).rev() {
            let node = chain[k];
            let Some(parent) = above(k, 1) else {
                break;
            };
            match parent.kind() {
                "argument_list" | "initializer_list"
                    if above(k, 2).is_some_and(|p| p.kind() == "field_initializer") =>
                {
                    return self.member_initializer(above(k, 2), site, size_expr);
                }
                "parenthesized_expression" => {}
                "cast_expression" => cast = Some(parent),
                "conditional_expression"
                    if parent.child_by_field_name("condition") != Some(node) => {}
                "comma_expression" if parent.child_by_field_name("right") == Some(node) => {}
                "assignment_expression" => {
                    return self.assigned_target(parent, node, cast, site, size_expr)
                }
                "initializer_pair" if parent.child_by_field_name("value") == Some(node) => {
                    let mut cursor = parent.walk();
                    let designators: Vec<String> = parent
                        .children_by_field_name("designator", &mut cursor)
                        .map(|d| self.clean_text(d))
                        .collect();
                    path.splice(0..0, designators);
                }
                "initializer_list" => {
                    if node.kind() != "initializer_pair" {
                        let index = children(parent).iter().position(|c| *c == node);
                        path.insert(0, format!("[{}]", index.unwrap_or(0)));
                    }
                }
                "init_declarator" if !path.is_empty() => {
                    return self.designated_target(parent, above(k, 2), &path, site, size_expr)
                }
                "init_declarator" => {
                    return self.declared_target(parent, above(k, 2), site, size_expr)
                }
                "return_statement" => return AllocTarget::Returned,
                "argument_list" => {
                    let outer = above(k, 2).map(|c| self.callee_name(c)).unwrap_or_default();
                    return AllocTarget::Unknown(format!(
                        "the result of {} on line {} is passed to {outer}, not stored",
                        site.alloc_fn, site.line
                    ));
                }
                _ => {
                    return AllocTarget::Unknown(format!(
                        "the result of {} on line {} is not stored in a variable",
                        site.alloc_fn, site.line
                    ))
                }
            }
        }
        AllocTarget::Unknown(format!(
            "the result of {} on line {} is not stored",
            site.alloc_fn, site.line
        ))
    }

    /// The variable whose address `posix_memalign` gets as its first
    /// argument (`&A`).
    fn memalign_target<'t>(
        &'t self,
        args: &[Node<'t>],
        site: Site<'t>,
        size_expr: Option<String>,
    ) -> AllocTarget {
        let line = site.line;
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
        self.named(lvalue, None, site, size_expr)
    }

    /// The left side of `X = value`: the value (`node`) must be the plain
    /// assignment's right side. A cast of the value gives the element type
    /// when the left side's declaration is elsewhere.
    fn assigned_target<'t>(
        &'t self,
        assign: Node<'t>,
        node: Node<'t>,
        cast: Option<Node<'t>>,
        site: Site<'t>,
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
                "the result of {} on line {} is not assigned with a plain `=`",
                site.alloc_fn, site.line
            ));
        };
        match self.named(strip(left), None, site, size_expr) {
            AllocTarget::Named {
                name,
                elem_type: None,
                alloc_fn,
                size_expr,
            } => {
                let types = self.types();
                AllocTarget::Named {
                    name,
                    elem_type: cast
                        .and_then(|c| c.child_by_field_name("type"))
                        .and_then(|t| types.descriptor_type(&self.text, t))
                        .and_then(|t| t.deref())
                        .map(|t| t.render()),
                    alloc_fn,
                    size_expr,
                }
            }
            other => other,
        }
    }

    /// A member or element of a declared variable initialised through
    /// designators: `struct grid g = { .rows = malloc(n) }` names `g.rows`.
    /// `decl` is the declaration around the init declarator `init`.
    fn designated_target<'t>(
        &'t self,
        init: Node<'t>,
        decl: Option<Node<'t>>,
        path: &[String],
        site: Site<'t>,
        size_expr: Option<String>,
    ) -> AllocTarget {
        let declarator = init.child_by_field_name("declarator");
        let type_node = decl.and_then(|d| d.child_by_field_name("type"));
        let Some(name) = declarator.and_then(declarator_name) else {
            return AllocTarget::Unknown(format!(
                "the declarator initialised by {} on line {} has no name",
                site.alloc_fn, site.line
            ));
        };
        let types = self.types();
        let mut ctype = type_node
            .zip(declarator)
            .map(|(t, d)| types.declared_type(t, d));
        for step in path {
            ctype = ctype.and_then(|t| match step.strip_prefix('.') {
                Some(field) => types.field_type(t, field.trim()),
                None => types.deref(t),
            });
        }
        AllocTarget::Named {
            name: format!("{}{}", self.clean_text(name), path.concat()),
            elem_type: ctype.and_then(|t| types.deref(t)).map(|t| t.render()),
            alloc_fn: site.alloc_fn,
            size_expr,
        }
    }

    /// The variable a declaration initialises with the value: `double *X =
    /// malloc(n)` names `X`, with the declared type. `decl` is the
    /// declaration around the init declarator `init`.
    fn declared_target<'t>(
        &'t self,
        init: Node<'t>,
        decl: Option<Node<'t>>,
        site: Site<'t>,
        size_expr: Option<String>,
    ) -> AllocTarget {
        let (Some(declarator), Some(decl)) = (init.child_by_field_name("declarator"), decl) else {
            return AllocTarget::Unknown(format!(
                "the initializer with {} on line {} is not in a declaration",
                site.alloc_fn, site.line
            ));
        };
        let types = self.types();
        let ctype = decl
            .child_by_field_name("type")
            .map(|t| types.declared_type(t, declarator));
        match declarator_name(declarator) {
            Some(name) => self.named(name, Some(ctype), site, size_expr),
            None => AllocTarget::Unknown(format!(
                "the declarator initialised by {} on line {} has no name",
                site.alloc_fn, site.line
            )),
        }
    }

    /// The member that a constructor's member initializer `init` stores
    /// the value into: `data_` for `Grid(int n) : data_(new float[n])` or
    /// `data_{new float[n]}`.
    fn member_initializer<'t>(
        &'t self,
        init: Option<Node<'t>>,
        site: Site<'t>,
        size_expr: Option<String>,
    ) -> AllocTarget {
        let member = init.and_then(|init| {
            children(init)
                .into_iter()
                .find(|c| c.kind() != "argument_list" && c.kind() != "initializer_list")
        });
        match member {
            Some(m) => self.named(m, None, site, size_expr),
            None => AllocTarget::Unknown(format!(
                "the member initialised by {} on line {} has no name",
                site.alloc_fn, site.line
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
        site: Site<'t>,
        size_expr: Option<String>,
    ) -> AllocTarget {
        let name = self.clean_text(target);
        // A member set in a method: `this->data_` is the member `data_`.
        let name = name
            .strip_prefix("this->")
            .map(str::to_string)
            .unwrap_or(name);
        if target.kind() == "identifier" && self.function_returns(site.func, &name) {
            return AllocTarget::Returned;
        }
        let types = self.types();
        let ctype = match declared {
            Some(declared) => declared,
            None => types.expr_type(&self.text, target, Some(target)),
        };
        let elem_type = ctype.and_then(|t| types.deref(t)).map(|t| t.render());
        AllocTarget::Named {
            name,
            elem_type,
            alloc_fn: site.alloc_fn,
            size_expr,
        }
    }

    /// Whether the function definition `func` has a `return NAME;` (through
    /// casts and parentheses). The first question about a function walks
    /// its body once; later ones are a hash probe.
    fn function_returns(&self, func: Option<Node<'_>>, name: &str) -> bool {
        let Some(func) = func else {
            return false;
        };
        let mut returns = self.returns.borrow_mut();
        let names = returns.entry(func.start_byte()).or_insert_with(|| {
            let mut names = HashSet::new();
            if let Some(body) = func.child_by_field_name("body") {
                visit(body, &mut |n| {
                    if n.kind() == "return_statement" {
                        if let Some(value) = children(n).first() {
                            let value = strip(*value);
                            if value.kind() == "identifier" {
                                names.insert(self.node_text(value).to_string());
                            }
                        }
                    }
                });
            }
            names
        });
        names.contains(name)
    }

    /// Source text of the size argument(s) of a call to `alloc_fn`.
    fn size_text(&self, alloc_fn: &str, args: &[Node<'_>]) -> Option<String> {
        let sizeof = |n: Node<'_>| self.node_text(n).trim_start().starts_with("sizeof");
        let indices = size::size_args(alloc_fn, args, sizeof)?;
        let parts: Option<Vec<String>> = indices
            .iter()
            .map(|i| args.get(*i).map(|a| self.clean_text(*a)))
            .collect();
        parts.filter(|p| !p.is_empty()).map(|p| p.join(", "))
    }
}

/// The call being resolved, for the answer and for messages.
struct Site<'t> {
    /// The called function, as in [`AllocTarget::Named`]'s `alloc_fn`.
    alloc_fn: String,
    /// The call's line, 1-based.
    line: usize,
    /// The function definition around the call.
    func: Option<Node<'t>>,
}
