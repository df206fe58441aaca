//! C preprocessor macros, as far as naming heap blocks needs them.
//!
//! Benchmark suites declare arrays through function-like macros
//! (`ARRAY_2D_DECL(A, double, NI, NK);`) whose definitions live in headers.
//! gcc's line table puts the allocation call at the macro invocation, so
//! [`super::csource::CSource`] expands the invocation with a [`MacroTable`]
//! and reads the declaration it stands for.
//!
//! The expander follows the C rules that matter for declarations:
//! arguments are fully expanded before substitution (except next to `#` and
//! `##`), `#param` makes a string, `##` pastes tokens, `__VA_ARGS__` takes
//! the variadic arguments, and the result is rescanned with the macro being
//! expanded hidden (no self-recursion). Conditional compilation is not
//! evaluated: the last definition of a name wins. Cost: linear in the size
//! of the expansion, bounded by [`MAX_DEPTH`] nested expansions.
use std::collections::HashMap;

/// Deepest nesting of macro expansions followed.
pub const MAX_DEPTH: usize = 32;

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
        } else if text[i..].starts_with("##") || text[i..].starts_with("->") {
            toks.push(Tok::Punct(text[i..i + 2].to_string()));
            i += 2;
        } else if text[i..].starts_with("...") {
            toks.push(Tok::Punct("...".into()));
            i += 3;
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
    /// The `#define`s of `text` (a source file or header), continuation
    /// lines joined and comments removed.
    pub fn from_text(text: &str) -> MacroTable {
        let clean = strip_comments(text)
            .replace("\\\r\n", " ")
            .replace("\\\n", " ");
        let mut map = HashMap::new();
        for line in clean.lines() {
            let Some(rest) = line.trim_start().strip_prefix('#') else {
                continue;
            };
            let Some(rest) = rest.trim_start().strip_prefix("define") else {
                continue;
            };
            if !rest.starts_with([' ', '\t']) {
                continue;
            }
            let rest = rest.trim_start();
            let name_len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            if name_len == 0 {
                continue;
            }
            let (name, after) = rest.split_at(name_len);
            let m = match after.strip_prefix('(') {
                Some(p) => {
                    let Some(close) = p.find(')') else { continue };
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
            map.insert(name.to_string(), m);
        }
        MacroTable { map }
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

    /// Number of macros known.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no macro is known.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// `text` with every macro expanded, as one line of C.
    pub fn expand(&self, text: &str) -> String {
        let mut hidden = Vec::new();
        join(&self.expand_tokens(&tokenize(text), &mut hidden))
    }

    fn expand_tokens(&self, toks: &[Tok], hidden: &mut Vec<String>) -> Vec<Tok> {
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
                    (self.substitute(m, params, &args, hidden), next)
                }
            };
            hidden.push(name);
            out.extend(self.expand_tokens(&replaced, hidden));
            hidden.pop();
            i = next;
        }
        out
    }

    /// The body of `m` with its parameters replaced by `args`.
    fn substitute(
        &self,
        m: &Macro,
        params: &[String],
        args: &[Vec<Tok>],
        hidden: &mut Vec<String>,
    ) -> Vec<Tok> {
        let body = tokenize(&m.body);
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
                Some(a) if pasted => out.extend(a),
                Some(a) => out.extend(self.expand_tokens(&a, hidden)),
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
        pasted
    }
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
            t.expand("MAT(A, N, 5)"),
            "double ( * A ) [ 5 ] = ( double ( * ) [ 5 ] ) alloc ( ( 6 ) * ( 5 ) , sizeof ( double ) )"
        );
    }

    #[test]
    fn a_macro_is_not_expanded_inside_itself() {
        let t = MacroTable::from_text("#define f(x) f(x + 1)\n#define g g\n");
        assert_eq!(t.expand("f(2) g"), "f ( 2 + 1 ) g");
    }

    #[test]
    fn stringify_paste_and_variadic_arguments() {
        let t = MacroTable::from_text(
            "#define S(x) #x\n#define P(a, b) a ## b\n#define V(f, ...) f(__VA_ARGS__)\n",
        );
        assert_eq!(t.expand("S(a b)"), "\"a b\"");
        assert_eq!(t.expand("P(ro, ws)"), "rows");
        assert_eq!(t.expand("V(g, 1, 2)"), "g ( 1 , 2 )");
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
