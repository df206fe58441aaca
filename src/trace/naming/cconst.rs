//! Constant evaluation: the value of a C integer constant expression, for
//! allocation sizes (`ROWS * COLS * sizeof(int)`), array bounds, enum
//! values and `#if` conditions.
//!
//! The evaluator knows literals and operators; what names and `sizeof`
//! mean comes from a [`ConstEnv`] (the C type model gives both; `#if`
//! conditions, whose names the preprocessor has already replaced, need
//! neither). Recursion follows the expression's nesting and stops at
//! [`MAX_NESTING`] levels, so `((((...))))` nested tens of thousands deep
//! evaluates to "unknown" instead of overflowing the stack.

use tree_sitter::Node;

use super::csyntax::{children, parse_lang};

/// Deepest expression nesting evaluated (parentheses, operators, casts).
/// Real constant expressions stay far below it; each level costs one stack
/// frame of a few hundred bytes.
pub const MAX_NESTING: usize = 256;

/// What the names and `sizeof`s of a constant expression stand for.
pub(crate) trait ConstEnv {
    /// The value of identifier `name` (a macro, an enum constant).
    fn value_of(&self, name: &str) -> Option<i64>;
    /// The size in bytes of what the `sizeof_expression` node `sizeof`
    /// (in a tree whose text is `src`) measures, with variables looked up
    /// at `scope`.
    fn size_of(&self, src: &str, sizeof: Node<'_>, scope: Option<Node<'_>>) -> Option<i64>;
}

/// An environment without names: only literals and operators evaluate.
pub(crate) struct Literals;

impl ConstEnv for Literals {
    fn value_of(&self, _: &str) -> Option<i64> {
        None
    }
    fn size_of(&self, _: &str, _: Node<'_>, _: Option<Node<'_>>) -> Option<i64> {
        None
    }
}

/// Parses a C integer literal (decimal, hex, octal, binary; any `u`/`l`
/// suffix). Floating literals give `None`.
pub(crate) fn parse_int(literal: &str) -> Option<i64> {
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

/// Parses `expr` alone as a C expression and calls `f` with its text and
/// root expression node; `None` when it does not parse. Costs one parse of
/// the expression.
pub(crate) fn with_expr<T>(expr: &str, f: impl FnOnce(&str, Node<'_>) -> Option<T>) -> Option<T> {
    let snippet = format!("int mapvis_value__ = ({expr}\n);\n");
    let tree = parse_lang(&snippet, false);
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

/// The value of an integer constant expression made of literals and
/// operators only (a `#if` condition once its names are replaced), `None`
/// when it is not one.
pub(crate) fn eval_integer_expression(expr: &str) -> Option<i64> {
    with_expr(expr, |src, node| eval(&Literals, src, node, None))
}

/// Evaluates the integer constant expression `node` (in a tree whose text
/// is `src`), names and `sizeof` resolved by `env` with variables looked
/// up at `scope`. `None` when any part is not constant or the expression
/// nests deeper than [`MAX_NESTING`].
pub(crate) fn eval(
    env: &dyn ConstEnv,
    src: &str,
    node: Node<'_>,
    scope: Option<Node<'_>>,
) -> Option<i64> {
    eval_at(env, src, node, scope, 0)
}

fn eval_at(
    env: &dyn ConstEnv,
    src: &str,
    node: Node<'_>,
    scope: Option<Node<'_>>,
    depth: usize,
) -> Option<i64> {
    if depth >= MAX_NESTING {
        return None;
    }
    let text = |n: Node<'_>| n.utf8_text(src.as_bytes()).ok();
    let sub = |field: &str| -> Option<i64> {
        eval_at(env, src, node.child_by_field_name(field)?, scope, depth + 1)
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
        "identifier" => env.value_of(text(node)?),
        "parenthesized_expression" => eval_at(env, src, *children(node).first()?, scope, depth + 1),
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
            binary(node.child_by_field_name("operator")?.kind(), l, r)
        }
        "conditional_expression" => {
            if sub("condition")? != 0 {
                sub("consequence")
            } else {
                sub("alternative")
            }
        }
        "sizeof_expression" => env.size_of(src, node, scope),
        _ => None,
    }
}

/// `l OP r` for a C binary operator, `None` on overflow, division by zero
/// or an operator that is not integer arithmetic.
fn binary(op: &str, l: i64, r: i64) -> Option<i64> {
    match op {
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

/// Collects the operands of top-level `*` and `,` (through parentheses),
/// the factors of an allocation size. Past [`MAX_NESTING`] levels the
/// remaining subexpression is one factor (which then evaluates to unknown).
pub(crate) fn flatten_product<'t>(node: Node<'t>, out: &mut Vec<Node<'t>>) {
    flatten_at(node, out, 0);
}

fn flatten_at<'t>(node: Node<'t>, out: &mut Vec<Node<'t>>, depth: usize) {
    if depth >= MAX_NESTING {
        out.push(node);
        return;
    }
    match node.kind() {
        "parenthesized_expression" => match children(node).as_slice() {
            [inner] => flatten_at(*inner, out, depth + 1),
            _ => out.push(node),
        },
        "comma_expression" => {
            for field in ["left", "right"] {
                if let Some(part) = node.child_by_field_name(field) {
                    flatten_at(part, out, depth + 1);
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
                    flatten_at(part, out, depth + 1);
                }
            }
        }
        _ => out.push(node),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_operators_evaluate() {
        assert_eq!(
            eval_integer_expression("(1 << 4) == 16 && (0x10 | 1) == 17"),
            Some(1)
        );
        assert_eq!(eval_integer_expression("'a' + 010 - 0b1"), Some(97 + 8 - 1));
        assert_eq!(eval_integer_expression("1 / 0"), None);
        assert_eq!(eval_integer_expression("x + 1"), None);
    }

    #[test]
    fn deep_nesting_is_unknown_not_a_crash() {
        let n = 60_000;
        let deep = format!("{}8{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(eval_integer_expression(&deep), None);
        let shallow = format!("{}8{}", "(".repeat(100), ")".repeat(100));
        assert_eq!(eval_integer_expression(&shallow), Some(8));
    }
}
