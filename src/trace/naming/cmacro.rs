//! C preprocessor macros, as far as naming heap blocks needs them.
//!
//! Benchmark suites declare arrays through function-like macros
//! (`ARRAY_2D_DECL(A, double, NI, NK);`) whose definitions live in headers.
//! gcc's line table puts the allocation call at the macro invocation, so
//! the C source model (`CSource`) expands the invocation with a
//! [`MacroTable`] and reads the declaration it stands for.
//!
//! The expander follows the C rules that matter for declarations:
//! arguments are fully expanded before substitution (except next to `#` and
//! `##`), `#param` makes a string, `##` pastes tokens, `__VA_ARGS__` takes
//! the variadic arguments, and the result is rescanned with the macro being
//! expanded hidden (no self-recursion). The table is built by running a
//! file's directives in order ([`MacroTable::run`]): `#if`, `#ifdef`,
//! `#ifndef`, `#elif` and `#else` are evaluated, so the definition the
//! compiler saw is the one kept. Cost: linear in the size of the expansion,
//! bounded by [`MAX_DEPTH`] nested expansions.
//!
//! An expansion is cut short, with an [`ExpandError`], when it would copy
//! more than [`MAX_WORK`] tokens (`#define E1(x) E0(x) E0(x)` and so on
//! doubles with every level: forty levels make 2^40 tokens, which gcc never
//! expands when the macro is unused or in a branch it did not take), when
//! macro arguments nest more than [`MAX_NESTING`] deep, or when the check
//! program's cancel flag ([`crate::cancel`]) says Ctrl-C was pressed. So an
//! expansion costs at most a few milliseconds and a few megabytes.
use std::collections::{BTreeSet, HashMap};

/// Deepest nesting of macro expansions followed.
pub const MAX_DEPTH: usize = 32;

/// Most tokens one expansion may produce and copy (rescans included)
/// before it is given up: far above what a declaration macro needs (a few
/// hundred), and a few milliseconds of work.
pub const MAX_WORK: usize = 1 << 18;

/// Deepest nesting of invocations inside macro arguments
/// (`F(F(F(...)))`) followed; each level costs two stack frames.
pub const MAX_NESTING: usize = 200;

/// Why an expansion was given up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpandError {
    /// It would copy more than [`MAX_WORK`] tokens.
    TooLarge,
    /// Macro invocations in its arguments nest deeper than [`MAX_NESTING`].
    TooDeep,
    /// Cancelling was requested (Ctrl-C; see [`crate::cancel`]).
    Interrupted,
}

impl std::fmt::Display for ExpandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExpandError::TooLarge => write!(
                f,
                "its expansion passes {MAX_WORK} tokens (a macro that repeats its argument, \
                 nested), so it was given up"
            ),
            ExpandError::TooDeep => write!(
                f,
                "its arguments nest macro calls more than {MAX_NESTING} deep, so it was given up"
            ),
            ExpandError::Interrupted => write!(f, "the expansion was interrupted by Ctrl-C"),
        }
    }
}

/// What one expansion has spent so far, and what says to stop it; see
/// [`ExpandError`].
#[derive(Debug)]
struct Budget {
    work: usize,
    nesting: usize,
    /// Whether to give up now ([`crate::cancel::requested`] but in tests).
    stop: fn() -> bool,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            work: 0,
            nesting: 0,
            stop: crate::cancel::requested,
        }
    }
}

impl Budget {
    /// Counts `n` tokens copied; fails past [`MAX_WORK`] or on an
    /// interrupt (one atomic load per call).
    fn spend(&mut self, n: usize) -> Result<(), ExpandError> {
        self.work += n;
        if self.work > MAX_WORK {
            return Err(ExpandError::TooLarge);
        }
        if (self.stop)() {
            return Err(ExpandError::Interrupted);
        }
        Ok(())
    }
}

/// One `#define`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Macro {
    /// Parameter names of a function-like macro (`None` for object-like).
    pub params: Option<Vec<String>>,
    /// Whether the parameter list ends in `...`.
    pub variadic: bool,
    /// The replacement list, comments removed.
    pub body: String,
}

/// The macros visible to one source file: its own `#define`s and those of
/// the headers it includes.
#[derive(Clone, Debug, Default)]
pub struct MacroTable {
    map: HashMap<String, Macro>,
}

/// A preprocessing token: identifiers and numbers are words, string and
/// character literals are kept whole, everything else is punctuation.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Word(String),
    Lit(String),
    Punct(String),
}

impl Tok {
    fn text(&self) -> &str {
        match self {
            Tok::Word(s) | Tok::Lit(s) | Tok::Punct(s) => s,
        }
    }
    fn is_ident(&self) -> bool {
        matches!(self, Tok::Word(w) if w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
    }
}

/// Removes `/* */` and `//` comments, keeping newlines so that lines stay
/// where they were.
pub fn strip_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut start = 0;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => {
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                out.push_str(&text[start..i]);
                let end = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
                let newlines = text[i..end].matches('\n').count();
                out.push(' ');
                out.push_str(&"\n".repeat(newlines));
                i = end;
                start = i;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                out.push_str(&text[start..i]);
                i = text[i..].find('\n').map_or(b.len(), |e| i + e);
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(text.get(start..).unwrap_or(""));
    out
}

/// The punctuators of more than one character, longest first: they stay
/// one token, so that expanded text reads as the C it stands for (`1 << 20`,
/// not `1 < < 20`).
const PUNCTUATORS: &[&str] = &[
    "<<=", ">>=", "...", "##", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "::",
];

fn tokenize(text: &str) -> Vec<Tok> {
    let b = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            toks.push(Tok::Word(text[s..i].to_string()));
        } else if c == b'"' || c == b'\'' {
            let s = i;
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            toks.push(Tok::Lit(text[s..i].to_string()));
        } else if let Some(p) = PUNCTUATORS.iter().find(|p| text[i..].starts_with(**p)) {
            toks.push(Tok::Punct(p.to_string()));
            i += p.len();
        } else {
            let ch = text[i..].chars().next().unwrap_or(' ');
            toks.push(Tok::Punct(ch.to_string()));
            i += ch.len_utf8();
        }
    }
    toks
}

/// Joins tokens back into C text, a space between words that would
/// otherwise merge.
fn join(toks: &[Tok]) -> String {
    let mut out = String::new();
    for t in toks {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(t.text());
    }
    out
}

/// The arguments of an invocation whose `(` is at `toks[open]`, split at
/// top-level commas, and the index after the closing `)`.
fn arguments(toks: &[Tok], open: usize) -> Option<(Vec<Vec<Tok>>, usize)> {
    let mut args = vec![Vec::new()];
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open + 1) {
        match t.text() {
            "(" | "[" | "{" => depth += 1,
            ")" if depth == 0 => {
                if args.len() == 1 && args[0].is_empty() {
                    args.clear();
                }
                return Some((args, k + 1));
            }
            ")" | "]" | "}" => depth = depth.saturating_sub(1),
            "," if depth == 0 => {
                args.push(Vec::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = args.last_mut() {
            last.push(t.clone());
        }
    }
    None
}

impl MacroTable {
    /// The `#define`s of `text` (a source file or header) that its
    /// conditional directives leave active, continuation lines joined and
    /// comments removed; `#include`s are not followed. See
    /// [`MacroTable::run`].
    pub fn from_text(text: &str) -> MacroTable {
        let mut table = MacroTable::default();
        let mut report = CondReport::default();
        table.run(
            std::path::Path::new(""),
            text,
            &mut |_, _, _| None,
            &mut report,
        );
        table
    }

    /// Runs the directives of `text` (the file `file`) on this table, in
    /// order, as the preprocessor does: `#define` and `#undef` in the
    /// branches that `#if`, `#ifdef`, `#ifndef`, `#elif` and `#else` select,
    /// and `#include`s there, whose text `include(name, quoted, from)`
    /// gives (`None` when the header is not to be read, such as the
    /// system's). A condition is evaluated with the macros defined so far:
    /// `defined X`, integer arithmetic and comparisons, and names that are
    /// not macros read as 0, as in C. A condition that cannot be evaluated
    /// (`__has_include(...)`, a call of an unknown function-like macro,
    /// floating point) takes its branch, and `report` says so. Cost: linear
    /// in the text read, includes nested at most [`MAX_INCLUDE_DEPTH`] deep.
    pub fn run(
        &mut self,
        file: &std::path::Path,
        text: &str,
        include: &mut ReadInclude<'_>,
        report: &mut CondReport,
    ) {
        self.run_at(file, text, include, report, 0);
    }

    fn run_at(
        &mut self,
        file: &std::path::Path,
        text: &str,
        include: &mut ReadInclude<'_>,
        report: &mut CondReport,
        depth: usize,
    ) {
        let mut stack: Vec<Branch> = Vec::new();
        for (line, directive) in directives(text) {
            let active = stack.last().is_none_or(|b| b.active);
            let (word, rest) = split_word(&directive);
            match word {
                "ifdef" | "ifndef" => {
                    let name = split_word(rest).0;
                    let defined = self.map.contains_key(name);
                    if active && !defined {
                        report.tested.insert(name.to_string());
                    }
                    let cond = active && (defined == (word == "ifdef"));
                    stack.push(Branch::new(active, cond));
                }
                "if" => {
                    let cond = active && self.decide(file, line, "#if", rest, report);
                    stack.push(Branch::new(active, cond));
                }
                "elif" => {
                    if let Some(b) = stack.last().copied() {
                        let cond = b.parent_active
                            && !b.taken
                            && self.decide(file, line, "#elif", rest, report);
                        if let Some(top) = stack.last_mut() {
                            top.active = cond;
                            top.taken |= cond;
                        }
                    }
                }
                "else" => {
                    if let Some(top) = stack.last_mut() {
                        top.active = top.parent_active && !top.taken;
                        top.taken = true;
                    }
                }
                "endif" => {
                    stack.pop();
                }
                "define" if active => {
                    if let Some((name, m)) = parse_define(rest) {
                        self.map.insert(name, m);
                    }
                }
                "undef" if active => {
                    self.map.remove(split_word(rest).0);
                }
                "include" if active && depth < MAX_INCLUDE_DEPTH => {
                    if let Some((name, quoted)) = include_name(rest) {
                        if let Some((path, text)) = include(&name, quoted, file) {
                            self.run_at(&path, &text, include, report, depth + 1);
                        }
                    }
                }
                _ => {}
            }
        }
        // Names tested while undefined and defined later (include guards)
        // were not the program's choices.
        report.tested.retain(|n| !self.map.contains_key(n));
    }

    /// Whether the condition `expr` of the `#if` or `#elif` on `line` of
    /// `file` holds; one that cannot be evaluated holds, with a note.
    fn decide(
        &self,
        file: &std::path::Path,
        line: usize,
        what: &str,
        expr: &str,
        report: &mut CondReport,
    ) -> bool {
        match self.condition(expr, &mut report.tested) {
            Some(v) => v != 0,
            None => {
                report.undecided.push(format!(
                    "{}:{line}: {what} {}",
                    file.file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    expr.trim()
                ));
                true
            }
        }
    }

    /// The value of a `#if` condition, `None` when it cannot be evaluated.
    /// Names tested while undefined are added to `tested`.
    fn condition(&self, expr: &str, tested: &mut BTreeSet<String>) -> Option<i64> {
        let toks = tokenize(expr);
        // `defined X` and `defined(X)` first, before macros expand.
        let mut out = Vec::with_capacity(toks.len());
        let mut k = 0;
        while k < toks.len() {
            if toks[k].text() != "defined" {
                out.push(toks[k].clone());
                k += 1;
                continue;
            }
            let paren = toks.get(k + 1).map(Tok::text) == Some("(");
            let at = if paren { k + 2 } else { k + 1 };
            let name = toks.get(at).filter(|t| t.is_ident())?.text().to_string();
            if paren && toks.get(at + 1).map(Tok::text) != Some(")") {
                return None;
            }
            let defined = self.map.contains_key(&name);
            if !defined {
                tested.insert(name);
            }
            out.push(Tok::Word(if defined { "1" } else { "0" }.into()));
            k = if paren { at + 2 } else { at + 1 };
        }
        let expanded = self
            .expand_tokens(&out, &mut Vec::new(), &mut Budget::default())
            .ok()?;
        let mut plain = Vec::with_capacity(expanded.len());
        for (k, t) in expanded.iter().enumerate() {
            if !t.is_ident() {
                plain.push(t.clone());
                continue;
            }
            if expanded.get(k + 1).map(Tok::text) == Some("(") {
                // `__has_include(...)`, an unknown function-like macro.
                return None;
            }
            let value = match t.text() {
                "true" => "1",
                "false" => "0",
                name => {
                    tested.insert(name.to_string());
                    "0"
                }
            };
            plain.push(Tok::Word(value.into()));
        }
        super::cconst::eval_integer_expression(&join(&plain))
    }

    /// Adds the macros of `other` that this table does not define (the
    /// including file's own definitions win).
    pub fn extend_missing(&mut self, other: &MacroTable) {
        for (k, v) in &other.map {
            self.map.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }

    /// The definition of `name`.
    pub fn get(&self, name: &str) -> Option<&Macro> {
        self.map.get(name)
    }

    /// Whether `name` is a function-like macro.
    pub fn is_function_like(&self, name: &str) -> bool {
        self.map.get(name).is_some_and(|m| m.params.is_some())
    }

    /// The object-like macros: (name, definition).
    pub fn object_like(&self) -> impl Iterator<Item = (&str, &Macro)> {
        self.map
            .iter()
            .filter(|(_, m)| m.params.is_none())
            .map(|(k, m)| (k.as_str(), m))
    }

    /// Defines `name` as the object-like macro `value` (a predefined or
    /// command-line macro).
    pub fn define(&mut self, name: &str, value: &str) {
        self.map.insert(
            name.to_string(),
            Macro {
                params: None,
                variadic: false,
                body: value.to_string(),
            },
        );
    }

    /// Defines a macro from its text as DWARF's macro information gives it:
    /// the name, its parameters in parentheses if any, and the body
    /// (`N 5`, `MAX(a,b) ((a)>(b)?(a):(b))`).
    pub fn define_text(&mut self, text: &str) {
        if let Some((name, m)) = parse_define(text) {
            self.map.insert(name, m);
        }
    }

    /// Number of macros known.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no macro is known.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// `text` with every macro expanded, as one line of C; an error when
    /// the expansion is cut short (see [`ExpandError`]).
    pub fn expand(&self, text: &str) -> Result<String, ExpandError> {
        self.expand_until(text, crate::cancel::requested)
    }

    /// [`MacroTable::expand`], given up with [`ExpandError::Interrupted`]
    /// as soon as `stop` says so (checked as tokens are copied).
    fn expand_until(&self, text: &str, stop: fn() -> bool) -> Result<String, ExpandError> {
        let mut hidden = Vec::new();
        let mut budget = Budget {
            stop,
            ..Budget::default()
        };
        let toks = self.expand_tokens(&tokenize(text), &mut hidden, &mut budget)?;
        Ok(join(&toks))
    }

    /// Expands `toks` with the macros in `hidden` not expanded, spending
    /// `budget`.
    fn expand_tokens(
        &self,
        toks: &[Tok],
        hidden: &mut Vec<String>,
        budget: &mut Budget,
    ) -> Result<Vec<Tok>, ExpandError> {
        if budget.nesting >= MAX_NESTING {
            return Err(ExpandError::TooDeep);
        }
        budget.nesting += 1;
        let out = self.expand_tokens_in(toks, hidden, budget);
        budget.nesting -= 1;
        out
    }

    fn expand_tokens_in(
        &self,
        toks: &[Tok],
        hidden: &mut Vec<String>,
        budget: &mut Budget,
    ) -> Result<Vec<Tok>, ExpandError> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            let m = match t {
                Tok::Word(w) if t.is_ident() && !hidden.contains(w) && hidden.len() < MAX_DEPTH => {
                    self.map.get(w)
                }
                _ => None,
            };
            budget.spend(1)?;
            let Some(m) = m else {
                out.push(t.clone());
                i += 1;
                continue;
            };
            let name = t.text().to_string();
            let (replaced, next) = match &m.params {
                None => (tokenize(&m.body), i + 1),
                Some(params) => {
                    if toks.get(i + 1).map(Tok::text) != Some("(") {
                        out.push(t.clone());
                        i += 1;
                        continue;
                    }
                    let Some((args, next)) = arguments(toks, i + 1) else {
                        out.push(t.clone());
                        i += 1;
                        continue;
                    };
                    (self.substitute(m, params, &args, hidden, budget)?, next)
                }
            };
            hidden.push(name);
            let expanded = self.expand_tokens(&replaced, hidden, budget);
            hidden.pop();
            let expanded = expanded?;
            budget.spend(expanded.len())?;
            out.extend(expanded);
            i = next;
        }
        Ok(out)
    }

    /// The body of `m` with its parameters replaced by `args`.
    fn substitute(
        &self,
        m: &Macro,
        params: &[String],
        args: &[Vec<Tok>],
        hidden: &mut Vec<String>,
        budget: &mut Budget,
    ) -> Result<Vec<Tok>, ExpandError> {
        let body = tokenize(&m.body);
        budget.spend(body.len())?;
        let arg_of = |name: &str| -> Option<Vec<Tok>> {
            if m.variadic && name == "__VA_ARGS__" {
                let rest: Vec<Vec<Tok>> = args.iter().skip(params.len()).cloned().collect();
                let mut joined = Vec::new();
                for (k, a) in rest.into_iter().enumerate() {
                    if k > 0 {
                        joined.push(Tok::Punct(",".into()));
                    }
                    joined.extend(a);
                }
                return Some(joined);
            }
            let k = params.iter().position(|p| p == name)?;
            Some(args.get(k).cloned().unwrap_or_default())
        };
        let mut out: Vec<Tok> = Vec::new();
        let mut k = 0;
        while k < body.len() {
            let t = &body[k];
            let pasted = body.get(k + 1).map(Tok::text) == Some("##")
                || (k > 0 && body[k - 1].text() == "##");
            if t.text() == "#" {
                if let Some(a) = body.get(k + 1).and_then(|n| arg_of(n.text())) {
                    let s = join(&a).replace('\\', "\\\\").replace('"', "\\\"");
                    out.push(Tok::Lit(format!("\"{s}\"")));
                    k += 2;
                    continue;
                }
            }
            match arg_of(t.text()) {
                Some(a) if pasted => {
                    budget.spend(a.len())?;
                    out.extend(a)
                }
                Some(a) => {
                    let a = self.expand_tokens(&a, hidden, budget)?;
                    budget.spend(a.len())?;
                    out.extend(a)
                }
                None => out.push(t.clone()),
            }
            k += 1;
        }
        // Token pasting: `a ## b` becomes one token.
        let mut pasted: Vec<Tok> = Vec::new();
        let mut k = 0;
        while k < out.len() {
            if out[k].text() == "##" && !pasted.is_empty() && k + 1 < out.len() {
                let left = pasted
                    .pop()
                    .map(|t| t.text().to_string())
                    .unwrap_or_default();
                let joined = format!("{left}{}", out[k + 1].text());
                pasted.extend(tokenize(&joined));
                k += 2;
            } else {
                pasted.push(out[k].clone());
                k += 1;
            }
        }
        Ok(pasted)
    }
}

/// Gives the text of an included header for [`MacroTable::run`]: called
/// with the name as written, whether it was quoted, and the including
/// file; returns the header's path and text, or `None` to skip it.
pub type ReadInclude<'a> =
    dyn FnMut(&str, bool, &std::path::Path) -> Option<(std::path::PathBuf, String)> + 'a;

/// Deepest nesting of `#include`s followed by [`MacroTable::run`].
pub const MAX_INCLUDE_DEPTH: usize = 16;

/// What [`MacroTable::run`] could not decide for sure, for notes.
#[derive(Clone, Debug, Default)]
pub struct CondReport {
    /// Conditions that could not be evaluated (their branch was taken):
    /// `file.c:LINE: #if EXPR`.
    pub undecided: Vec<String>,
    /// Names a condition tested while they were not defined, and that no
    /// file read defined afterwards: the branch taken assumes they are not
    /// defined on the compiler's command line either.
    pub tested: BTreeSet<String>,
}

/// One open `#if` group.
#[derive(Clone, Copy, Debug)]
struct Branch {
    /// Whether the enclosing group is being read.
    parent_active: bool,
    /// Whether a branch of this group has been taken.
    taken: bool,
    /// Whether the current branch is being read.
    active: bool,
}

impl Branch {
    fn new(parent_active: bool, cond: bool) -> Branch {
        Branch {
            parent_active,
            taken: cond,
            active: cond,
        }
    }
}

/// The directives of `text`: (1-based line, the directive without its `#`),
/// comments removed and continuation lines joined.
fn directives(text: &str) -> Vec<(usize, String)> {
    let clean = strip_comments(text);
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (k, raw) in clean.lines().enumerate() {
        let (continued, body) = match raw.trim_end().strip_suffix('\\') {
            Some(b) => (true, b),
            None => (false, raw),
        };
        let current = match pending.take() {
            Some((at, mut acc)) => {
                acc.push(' ');
                acc.push_str(body);
                Some((at, acc))
            }
            None => body
                .trim_start()
                .strip_prefix('#')
                .map(|d| (k + 1, d.trim_start().to_string())),
        };
        match current {
            Some(c) if continued => pending = Some(c),
            Some(c) => out.push(c),
            None => {}
        }
    }
    out.extend(pending);
    out
}

/// The first word of `s` (an identifier) and the rest, trimmed.
fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

/// Parses the part of a `#define` after the word `define`.
fn parse_define(rest: &str) -> Option<(String, Macro)> {
    let rest = rest.trim_start();
    let name_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    if name_len == 0 {
        return None;
    }
    let (name, after) = rest.split_at(name_len);
    let m = match after.strip_prefix('(') {
        Some(p) => {
            let close = p.find(')')?;
            let mut params: Vec<String> = p[..close]
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            let variadic = params.last().is_some_and(|l| l == "...");
            if variadic {
                params.pop();
            }
            Macro {
                params: Some(params),
                variadic,
                body: p[close + 1..].trim().to_string(),
            }
        }
        None => Macro {
            params: None,
            variadic: false,
            body: after.trim().to_string(),
        },
    };
    Some((name.to_string(), m))
}

/// The header an `#include` names (the part after the word `include`):
/// (name, whether quoted).
fn include_name(rest: &str) -> Option<(String, bool)> {
    let rest = rest.trim();
    let (close, quoted) = if rest.starts_with('"') {
        ('"', true)
    } else if rest.starts_with('<') {
        ('>', false)
    } else {
        return None;
    };
    let inner = &rest[1..];
    let end = inner.find(close)?;
    Some((inner[..end].to_string(), quoted))
}

/// The quoted and angle-bracket `#include`s of `text`, in order:
/// (header name, whether it was quoted).
pub fn includes(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("include") else {
            continue;
        };
        let rest = rest.trim();
        let (open, close, quoted) = if rest.starts_with('"') {
            ('"', '"', true)
        } else if rest.starts_with('<') {
            ('<', '>', false)
        } else {
            continue;
        };
        let inner = &rest[open.len_utf8()..];
        if let Some(end) = inner.find(close) {
            out.push((inner[..end].to_string(), quoted));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_function_like_macros_expand_with_their_arguments() {
        let t = MacroTable::from_text(
            "#define N 6 /* rows */\n#define T double\n\
             #define D2(v, ty, n, m) \\\n  ty (*v)[m] = (ty (*)[m]) alloc((n) * (m), sizeof(ty))\n\
             #define MAT(v, n, m) D2(v, T, n, m)\n",
        );
        assert_eq!(
            t.expand("MAT(A, N, 5)").unwrap(),
            "double ( * A ) [ 5 ] = ( double ( * ) [ 5 ] ) alloc ( ( 6 ) * ( 5 ) , sizeof ( double ) )"
        );
    }

    #[test]
    fn a_macro_is_not_expanded_inside_itself() {
        let t = MacroTable::from_text("#define f(x) f(x + 1)\n#define g g\n");
        assert_eq!(t.expand("f(2) g").unwrap(), "f ( 2 + 1 ) g");
    }

    #[test]
    fn stringify_paste_and_variadic_arguments() {
        let t = MacroTable::from_text(
            "#define S(x) #x\n#define P(a, b) a ## b\n#define V(f, ...) f(__VA_ARGS__)\n",
        );
        assert_eq!(t.expand("S(a b)").unwrap(), "\"a b\"");
        assert_eq!(t.expand("P(ro, ws)").unwrap(), "rows");
        assert_eq!(t.expand("V(g, 1, 2)").unwrap(), "g ( 1 , 2 )");
    }

    fn body(t: &MacroTable, name: &str) -> Option<String> {
        t.get(name).map(|m| m.body.clone())
    }

    #[test]
    fn conditional_directives_keep_the_branch_taken() {
        let t = MacroTable::from_text(
            "#define A 2\n\
             #if A > 1 && !defined B\n#define X first\n#elif 1\n#define X second\n\
             #else\n#define X third\n#endif\n\
             #ifdef B\n#define Y b\n#if 1\n#define Z inner\n#endif\n#else\n#define Y nob\n#endif\n\
             #if 0\n#define W zero\n#elif A == \\\n 2\n#define W two\n#endif\n\
             #ifndef A\n#define V undef\n#endif\n#undef A\n#ifdef A\n#define U a\n#endif\n\
             #if (1 << 4) == 16 && (0x10 | 1) == 17\n#define S shifts\n#endif\n",
        );
        assert_eq!(body(&t, "X").as_deref(), Some("first"));
        assert_eq!(body(&t, "Y").as_deref(), Some("nob"));
        assert_eq!(body(&t, "Z"), None, "inside a branch not taken");
        assert_eq!(body(&t, "W").as_deref(), Some("two"));
        assert_eq!(body(&t, "V"), None);
        assert_eq!(body(&t, "A"), None, "#undef");
        assert_eq!(body(&t, "U"), None);
        assert_eq!(body(&t, "S").as_deref(), Some("shifts"));
    }

    #[test]
    fn undecidable_conditions_take_their_branch_and_are_reported() {
        let mut t = MacroTable::default();
        let mut report = CondReport::default();
        t.run(
            std::path::Path::new("/src/k.c"),
            "#if __has_include(<x.h>)\n#define H 1\n#else\n#define H 2\n#endif\n\
             #ifdef GUARD\n#endif\n#define GUARD\n#if DEBUG\n#define D 1\n#endif\n",
            &mut |_, _, _| None,
            &mut report,
        );
        assert_eq!(body(&t, "H").as_deref(), Some("1"));
        assert_eq!(report.undecided, vec!["k.c:1: #if __has_include(<x.h>)"]);
        // GUARD was defined afterwards; DEBUG never was.
        assert_eq!(report.tested.iter().collect::<Vec<_>>(), vec!["DEBUG"]);
        assert_eq!(body(&t, "D"), None);
    }

    #[test]
    fn included_headers_are_read_in_order() {
        let mut t = MacroTable::default();
        t.define("PRE", "1");
        let mut report = CondReport::default();
        let mut seen = Vec::new();
        t.run(
            std::path::Path::new("/src/m.c"),
            "#define SIDE 2\n#include \"h.h\"\n#include <sys.h>\n#if FROM_H == 2\n#define OK yes\n#endif\n",
            &mut |name, quoted, from| {
                seen.push((name.to_string(), quoted, from.to_path_buf()));
                (name == "h.h").then(|| {
                    (
                        std::path::PathBuf::from("/src/h.h"),
                        "#if PRE && SIDE == 2\n#define FROM_H SIDE\n#endif\n".to_string(),
                    )
                })
            },
            &mut report,
        );
        assert_eq!(body(&t, "OK").as_deref(), Some("yes"));
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[1], ("sys.h".to_string(), false, "/src/m.c".into()));
    }

    /// `E0(x)` is `x`; each `Ek(x)` is two `Ek-1(x)`: `Ek` repeats its
    /// argument 2^k times.
    fn bomb(levels: usize) -> String {
        let mut text = "#define E0(x) x\n".to_string();
        for k in 1..=levels {
            text.push_str(&format!("#define E{k}(x) E{0}(x) E{0}(x)\n", k - 1));
        }
        text
    }

    #[test]
    fn a_macro_bomb_is_cut_short_in_expansions_and_conditions() {
        let text = format!("{}#if E40(1)\n#define TAKEN 1\n#endif\n", bomb(40));
        let mut t = MacroTable::default();
        let mut report = CondReport::default();
        t.run(
            std::path::Path::new("/src/b.c"),
            &text,
            &mut |_, _, _| None,
            &mut report,
        );
        assert_eq!(t.expand("E40(p)"), Err(ExpandError::TooLarge));
        assert_eq!(t.expand("E3(p)").unwrap(), "p p p p p p p p");
        // 2^12 copies fit the budget; the expansion is exact.
        assert_eq!(t.expand("E12(p)").unwrap().matches('p').count(), 1 << 12);
        // The condition could not be evaluated: its branch is taken, noted.
        assert_eq!(report.undecided, vec!["b.c:42: #if E40(1)"]);
        assert_eq!(body(&t, "TAKEN").as_deref(), Some("1"));
    }

    #[test]
    fn arguments_nested_too_deep_are_cut_short() {
        let t = MacroTable::from_text("#define F(x) x\n");
        let nested = |n: usize| format!("{}1{}", "F(".repeat(n), ")".repeat(n));
        assert_eq!(t.expand(&nested(100)).unwrap(), "1");
        assert_eq!(t.expand(&nested(60_000)), Err(ExpandError::TooDeep));
    }

    #[test]
    fn an_interrupt_stops_an_expansion() {
        let t = MacroTable::from_text(&bomb(3));
        assert_eq!(
            t.expand_until("E3(1)", || true),
            Err(ExpandError::Interrupted)
        );
        assert_eq!(t.expand("E1(1)").unwrap(), "1 1");
    }

    #[test]
    fn includes_are_listed_with_their_kind() {
        let inc = includes("#include <stdio.h>\n  # include \"a/b.h\"\nint x;\n");
        assert_eq!(
            inc,
            vec![("stdio.h".to_string(), false), ("a/b.h".to_string(), true)]
        );
    }
}
