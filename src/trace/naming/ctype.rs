//! The C type model: declarations, typedefs, struct layouts and the static
//! type of simple expressions, as far as naming heap blocks needs them
//! (the pointee type of `double (*A)[16]`, `sizeof(struct point)`, the
//! type of `s->rows[i]`). Type sizes assume the LP64 data model of x86-64
//! and AArch64 Linux.
//!
//! [`TypeIndex`] lists a file's typedefs, tagged types, enum constants,
//! struct members and declarations by name, in one pass over the syntax
//! tree, so that each lookup is a hash probe instead of a walk of the
//! whole file. Declarations in a block are indexed per block, on first use.
//! [`Types`] answers the questions with that index, the file's integer
//! macros and the constant evaluator.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use tree_sitter::{Node, Point};

use super::cconst::{self, ConstEnv};
use super::csyntax::{ancestors, children, squash, strip, visit, Lines, NodeRef};

/// One step of a C declarator, read from the declared name outward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Deriv {
    Pointer,
    Array(Option<i64>),
    Function,
}

/// A C type as far as we need it: a base type plus derivations, where
/// `derivs[0]` is what `*x` or `x[i]` strips first.
#[derive(Debug, Clone)]
pub(crate) struct CType<'t> {
    /// `"int"`, `"unsigned long"`, `"struct point"`, a typedef name.
    pub(crate) base: String,
    /// The struct/union/enum specifier the base came from, for its body.
    pub(crate) base_node: Option<Node<'t>>,
    pub(crate) derivs: Vec<Deriv>,
}

impl CType<'_> {
    /// The type with its first derivation removed (`*x`, `x[i]`).
    pub(crate) fn deref(mut self) -> Option<Self> {
        match self.derivs.first() {
            Some(Deriv::Pointer | Deriv::Array(_)) => {
                self.derivs.remove(0);
                Some(self)
            }
            _ => None,
        }
    }

    /// Readable C spelling: `"int"`, `"double *"`, `"int [16]"`.
    pub(crate) fn render(&self) -> String {
        let mut out = self.base.clone();
        let n_pointers = self
            .derivs
            .iter()
            .take_while(|d| **d == Deriv::Pointer)
            .count();
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

/// Size and alignment of a basic C type name under LP64, `None` when the
/// name is not a basic type.
pub(crate) fn primitive_layout(name: &str) -> Option<(i64, i64)> {
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

fn round_up(value: i64, align: i64) -> i64 {
    if align <= 1 {
        value
    } else {
        (value + align - 1) / align * align
    }
}

/// The identifier a declarator declares.
pub(crate) fn declarator_name(mut declarator: Node<'_>) -> Option<Node<'_>> {
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

/// The declarators of `decl` (a declaration, field or parameter
/// declaration, typedef) with the text of the names they declare.
fn declared_names<'t>(decl: Node<'t>, text: &'t str) -> Vec<(&'t str, Node<'t>)> {
    let mut cursor = decl.walk();
    let declarators: Vec<Node<'t>> = decl
        .children_by_field_name("declarator", &mut cursor)
        .collect();
    declarators
        .into_iter()
        .filter_map(|d| {
            let id = declarator_name(d)?;
            Some((id.utf8_text(text.as_bytes()).ok()?, d))
        })
        .collect()
}

/// A declaration and the declarator in it that declares a name.
type DeclRef = (NodeRef, NodeRef);

/// The declarations among a block's children by name, each with the byte
/// it starts at, in order.
type BlockDecls = HashMap<String, Vec<(usize, DeclRef)>>;

/// A file's named declarations, found in one walk of its syntax tree.
/// Each map keeps what a walk in document order finds first; the per-block
/// declarations are indexed when a lookup first enters the block. Memory:
/// a few words per declaration.
#[derive(Debug, Default)]
pub(crate) struct TypeIndex {
    /// `typedef T NAME;`: the type node and the declarator.
    typedefs: HashMap<String, DeclRef>,
    /// `struct NAME { ... }` (and union, enum) with a body, by
    /// (specifier kind, name).
    tagged: HashMap<(&'static str, String), NodeRef>,
    /// The enumerator lists that define each enum constant.
    enums: HashMap<String, Vec<NodeRef>>,
    /// The first declaration or parameter of each name anywhere in the file.
    globals: HashMap<String, DeclRef>,
    /// The first struct or class member declaration of each name.
    fields: HashMap<String, NodeRef>,
    /// Per block (compound statement, file, `for`): the declarations among
    /// its children by name, each with the byte it starts at, in order.
    scopes: RefCell<HashMap<NodeRef, BlockDecls>>,
}

impl TypeIndex {
    /// Indexes the tree under `root` (whose text is `text`). Linear in the
    /// size of the tree.
    pub(crate) fn build(root: Node<'_>, text: &str) -> TypeIndex {
        let mut index = TypeIndex::default();
        visit(root, &mut |n| match n.kind() {
            "type_definition" => index.add_typedef(n, text),
            "struct_specifier" | "union_specifier" | "enum_specifier" => {
                let name = n.child_by_field_name("name");
                if let (Some(name), Some(_)) = (name, n.child_by_field_name("body")) {
                    let name = name.utf8_text(text.as_bytes()).unwrap_or("").to_string();
                    index
                        .tagged
                        .entry((n.kind(), name))
                        .or_insert(NodeRef::of(n));
                }
            }
            "enumerator_list" => {
                for e in children(n) {
                    let Some(name) = e.child_by_field_name("name") else {
                        continue;
                    };
                    let name = name.utf8_text(text.as_bytes()).unwrap_or("").to_string();
                    let lists = index.enums.entry(name).or_default();
                    if lists.last() != Some(&NodeRef::of(n)) {
                        lists.push(NodeRef::of(n));
                    }
                }
            }
            "declaration" | "parameter_declaration" if n.child_by_field_name("type").is_some() => {
                for (name, d) in declared_names(n, text) {
                    index
                        .globals
                        .entry(name.to_string())
                        .or_insert((NodeRef::of(n), NodeRef::of(d)));
                }
            }
            "field_declaration" => {
                for (name, _) in declared_names(n, text) {
                    index
                        .fields
                        .entry(name.to_string())
                        .or_insert(NodeRef::of(n));
                }
            }
            _ => {}
        });
        index
    }

    /// Adds the names of one `typedef`: the first typedef of a name counts,
    /// and within it the last declarator of that name.
    fn add_typedef(&mut self, n: Node<'_>, text: &str) {
        let Some(type_node) = n.child_by_field_name("type") else {
            return;
        };
        let mut local: HashMap<&str, DeclRef> = HashMap::new();
        for (name, d) in declared_names(n, text) {
            local.insert(name, (NodeRef::of(type_node), NodeRef::of(d)));
        }
        for (name, r) in local {
            self.typedefs.entry(name.to_string()).or_insert(r);
        }
    }

    /// The last declaration of `name` among the children of `scope` that
    /// start at or before byte `at`.
    fn in_scope(&self, scope: Node<'_>, text: &str, name: &str, at: usize) -> Option<DeclRef> {
        let mut scopes = self.scopes.borrow_mut();
        let decls = scopes.entry(NodeRef::of(scope)).or_insert_with(|| {
            let mut decls = BlockDecls::new();
            for child in children(scope) {
                if child.kind() != "declaration" || child.child_by_field_name("type").is_none() {
                    continue;
                }
                let mut seen: Vec<&str> = Vec::new();
                for (id, d) in declared_names(child, text) {
                    if seen.contains(&id) {
                        continue;
                    }
                    seen.push(id);
                    let entry = (child.start_byte(), (NodeRef::of(child), NodeRef::of(d)));
                    decls.entry(id.to_string()).or_default().push(entry);
                }
            }
            decls
        });
        let list = decls.get(name)?;
        let k = list.partition_point(|(start, _)| *start <= at);
        k.checked_sub(1).map(|k| list[k].1)
    }

    /// The first struct or class member declaration named `name`.
    pub(crate) fn field(&self, name: &str) -> Option<NodeRef> {
        self.fields.get(name).copied()
    }
}

/// Answers type questions about one parsed file: see the module
/// documentation. Cheap to make (a few references); make one per query.
/// Not `Sync` (a recursion guard uses a `Cell`).
pub(crate) struct Types<'a> {
    text: &'a str,
    root: Node<'a>,
    lines: &'a Lines,
    defines: &'a HashMap<String, i64>,
    index: &'a TypeIndex,
    /// Nesting depth of the recursive type and constant lookups, bounded so
    /// that invalid C (a self-containing struct, enum constants defined in
    /// terms of each other) cannot recurse without end.
    depth: Cell<u32>,
}

impl ConstEnv for Types<'_> {
    fn value_of(&self, name: &str) -> Option<i64> {
        self.defines
            .get(name)
            .copied()
            .or_else(|| self.enum_constant(name))
    }

    fn size_of(&self, src: &str, sizeof: Node<'_>, scope: Option<Node<'_>>) -> Option<i64> {
        let ctype = self.sizeof_operand(src, sizeof, scope)?;
        self.layout(ctype).map(|(s, _)| s)
    }
}

impl<'a> Types<'a> {
    /// The type model of the file `text` with syntax tree `root`, its
    /// lines, integer macros `defines` and index.
    pub(crate) fn new(
        text: &'a str,
        root: Node<'a>,
        lines: &'a Lines,
        defines: &'a HashMap<String, i64>,
        index: &'a TypeIndex,
    ) -> Types<'a> {
        Types {
            text,
            root,
            lines,
            defines,
            index,
            depth: Cell::new(0),
        }
    }

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

    fn node_text(&self, node: Node<'_>) -> &'a str {
        node.utf8_text(self.text.as_bytes()).unwrap_or("")
    }

    /// Evaluates an integer constant expression (in a tree whose text is
    /// `src`), using `#define`s and enum constants of this file.
    pub(crate) fn eval_const(
        &self,
        src: &str,
        node: Node<'_>,
        scope: Option<Node<'_>>,
    ) -> Option<i64> {
        cconst::eval(self, src, node, scope)
    }

    /// Evaluates a constant expression given as text.
    pub(crate) fn eval_text(&self, expr: &str) -> Option<i64> {
        cconst::with_expr(expr, |src, node| self.eval_const(src, node, None))
    }

    /// The type a declarator gives its name, with base type node `type_node`.
    pub(crate) fn declared_type(&self, type_node: Node<'a>, declarator: Node<'a>) -> CType<'a> {
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
                        .and_then(|s| self.eval_const(self.text, s, Some(s)));
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
    pub(crate) fn base_type(&self, type_node: Node<'a>) -> CType<'a> {
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
    pub(crate) fn descriptor_type(&self, src: &str, descriptor: Node<'_>) -> Option<CType<'a>> {
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
    fn find_tagged(&self, kind: &str, name: &str) -> Option<Node<'a>> {
        let kind = ["struct_specifier", "union_specifier", "enum_specifier"]
            .into_iter()
            .find(|k| *k == kind)?;
        self.index
            .tagged
            .get(&(kind, name.to_string()))?
            .get(self.root)
    }

    /// Replaces typedef names by what they stand for (a few levels deep),
    /// and finds the body of a struct named only by its tag.
    fn resolve(&self, mut ctype: CType<'a>) -> CType<'a> {
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
    pub(crate) fn find_typedef(&self, name: &str) -> Option<(Node<'a>, Node<'a>)> {
        let (t, d) = self.index.typedefs.get(name)?;
        Some((t.get(self.root)?, d.get(self.root)?))
    }

    /// `*x` of a value of type `ctype`, looking through typedefs only when
    /// needed: `real *x` gives `real`, a pointer typedef `nodep` gives
    /// `struct node`.
    pub(crate) fn deref(&self, ctype: CType<'a>) -> Option<CType<'a>> {
        ctype
            .clone()
            .deref()
            .or_else(|| self.resolve(ctype).deref())
    }

    /// The type of field `field` of the struct/union `ctype` (no
    /// derivations left).
    pub(crate) fn field_type(&self, ctype: CType<'a>, field: &str) -> Option<CType<'a>> {
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
                if declarator_name(declarator).is_some_and(|id| self.node_text(id) == field) {
                    return Some(self.declared_type(type_node, declarator));
                }
            }
        }
        None
    }

    /// The declared type of variable `name` visible at `at` (a node of the
    /// main tree), or anywhere in the file when `at` is `None`.
    pub(crate) fn lookup_var(&self, name: &str, at: Option<Node<'a>>) -> Option<CType<'a>> {
        let (decl, d) = self.lookup_decl(name, at)?;
        Some(self.declared_type(decl.child_by_field_name("type")?, d))
    }

    /// The declaration (and its declarator) of variable `name` as seen at
    /// `at`: see [`Self::lookup_var`]. A hash probe per enclosing block.
    pub(crate) fn lookup_decl(
        &self,
        name: &str,
        at: Option<Node<'a>>,
    ) -> Option<(Node<'a>, Node<'a>)> {
        let get = |(decl, d): DeclRef| Some((decl.get(self.root)?, d.get(self.root)?));
        let Some(at) = at else {
            return get(*self.index.globals.get(name)?);
        };
        // Resolve the scope: the innermost node of the main tree at `at`.
        let at = self
            .root
            .descendant_for_byte_range(at.start_byte(), at.start_byte())
            .unwrap_or(at);
        let mut chain = ancestors(self.root, at);
        if chain.last() == Some(&at) {
            chain.pop();
        }
        for s in chain.into_iter().rev() {
            match s.kind() {
                "compound_statement" | "translation_unit" | "for_statement" => {
                    if let Some(found) = self.index.in_scope(s, self.text, name, at.start_byte()) {
                        return get(found);
                    }
                }
                "function_definition" => {
                    if let Some(found) = self.parameter(s, name) {
                        return Some(found);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// The parameter `name` of the function definition `f`.
    fn parameter(&self, f: Node<'a>, name: &str) -> Option<(Node<'a>, Node<'a>)> {
        let mut params = None;
        visit(f.child_by_field_name("declarator")?, &mut |n| {
            if params.is_none() && n.kind() == "parameter_list" {
                params = Some(n);
            }
        });
        children(params?).into_iter().find_map(|param| {
            if param.kind() != "parameter_declaration" {
                return None;
            }
            param.child_by_field_name("type")?;
            declared_names(param, self.text)
                .into_iter()
                .find(|(id, _)| *id == name)
                .map(|(_, d)| (param, d))
        })
    }

    /// The static type of expression `expr` (in a tree whose text is
    /// `src`), with variables looked up at `scope`.
    pub(crate) fn expr_type(
        &self,
        src: &str,
        expr: Node<'_>,
        scope: Option<Node<'a>>,
    ) -> Option<CType<'a>> {
        self.guarded(|| self.expr_type_inner(src, expr, scope))
    }

    fn expr_type_inner(
        &self,
        src: &str,
        expr: Node<'_>,
        scope: Option<Node<'a>>,
    ) -> Option<CType<'a>> {
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
    pub(crate) fn layout(&self, ctype: CType<'a>) -> Option<(i64, i64)> {
        self.guarded(|| self.layout_inner(ctype))
    }

    fn layout_inner(&self, ctype: CType<'a>) -> Option<(i64, i64)> {
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
                self.record_layout(node, node.kind() == "union_specifier")
            }
            _ => None,
        }
    }

    /// Size and alignment of a struct or union with a body.
    fn record_layout(&self, node: Node<'a>, is_union: bool) -> Option<(i64, i64)> {
        let body = node.child_by_field_name("body")?;
        let (mut size, mut align) = (0i64, 1i64);
        let mut place = |(s, a): (i64, i64)| {
            size = if is_union {
                size.max(s)
            } else {
                round_up(size, a) + s
            };
            align = align.max(a);
        };
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
            let declarators: Vec<Node<'a>> = member
                .children_by_field_name("declarator", &mut cursor)
                .collect();
            if declarators.is_empty() {
                // An anonymous struct/union member.
                place(self.layout(self.base_type(type_node))?);
            }
            for declarator in declarators {
                place(self.layout(self.declared_type(type_node, declarator))?);
            }
        }
        Some((round_up(size, align), align))
    }

    /// The type whose size a `sizeof` expression takes.
    pub(crate) fn sizeof_operand(
        &self,
        src: &str,
        sizeof: Node<'_>,
        scope: Option<Node<'_>>,
    ) -> Option<CType<'a>> {
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
    fn main_node(&self, node: Node<'_>) -> Node<'a> {
        self.root
            .descendant_for_byte_range(node.start_byte(), node.start_byte())
            .unwrap_or(self.root)
    }

    /// The first node on `line` (1-based), used as a lookup scope.
    pub(crate) fn node_at_line(&self, line: u32) -> Option<Node<'a>> {
        let row = (line as usize).checked_sub(1)?;
        let text = self.lines.text(self.text, row)?;
        let column = text.len() - text.trim_start().len();
        let point = Point { row, column };
        self.root.descendant_for_point_range(point, point)
    }

    /// The value of enum constant `name`, counting implicit values.
    fn enum_constant(&self, name: &str) -> Option<i64> {
        self.guarded(|| {
            let lists = self.index.enums.get(name)?;
            lists
                .iter()
                .find_map(|l| self.enum_value_in(l.get(self.root)?, name))
        })
    }

    /// The value of `name` in the enumerator list `list`, `None` when an
    /// enumerator before it has a value that cannot be evaluated.
    fn enum_value_in(&self, list: Node<'a>, name: &str) -> Option<i64> {
        let mut next = 0i64;
        for e in children(list) {
            if e.kind() != "enumerator" {
                continue;
            }
            let value = match e.child_by_field_name("value") {
                Some(v) => self.eval_const(self.text, v, None)?,
                None => next,
            };
            if e.child_by_field_name("name")
                .is_some_and(|id| self.node_text(id) == name)
            {
                return Some(value);
            }
            next = value.wrapping_add(1);
        }
        None
    }
}
