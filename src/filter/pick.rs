//! Picking variables by name: which variables count as arrays, and the
//! variable filter of `complete_memory_access_pattern` (`arrays`, `NAME`,
//! `-NAME`), so that scalars such as loop counters and `<static data>` can
//! be left out of a figure.

use super::model::Variable;
use crate::trace::naming::Scope;

/// Whether `v` can be drawn as an array: user data of known size, a heap
/// block or a stack or global variable of array type (not a frame label).
pub fn is_array(v: &Variable) -> bool {
    !v.internal
        && v.size > 0
        && !v.name.starts_with('<')
        && (v.scope == Scope::Heap || !v.dims.is_empty())
}

/// A variable filter: keep only arrays, only the named variables, and not
/// the variables named with a leading `-`. An empty filter keeps everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VarFilter {
    /// Keep only arrays ([`is_array`]).
    pub arrays: bool,
    /// Keep only these names (when not empty).
    pub only: Vec<String>,
    /// Leave these names out.
    pub skip: Vec<String>,
}

/// A filter named a variable the analysis does not have.
#[derive(Debug, thiserror::Error)]
#[error("there is no variable named {names} in this analysis; the variables are: {known}. Give names as memory_stats shows them, or -NAME to leave one out.")]
pub struct UnknownVariable {
    /// The unknown names, quoted and comma-separated.
    pub names: String,
    /// The names there are, comma-separated.
    pub known: String,
}

impl VarFilter {
    /// Reads filter words: `arrays`, `-NAME` (leave out) and `NAME` (keep
    /// only). Any other word the caller handles (such as `save`) must be
    /// taken out first.
    pub fn parse<'a>(words: impl IntoIterator<Item = &'a str>) -> VarFilter {
        let mut f = VarFilter::default();
        for w in words {
            match (w, w.strip_prefix('-')) {
                ("arrays", _) => f.arrays = true,
                (_, Some(name)) if !name.is_empty() => f.skip.push(name.to_string()),
                _ => f.only.push(w.to_string()),
            }
        }
        f
    }

    /// Whether the filter keeps everything.
    pub fn is_empty(&self) -> bool {
        *self == VarFilter::default()
    }

    /// Which variables (by row) the filter keeps; every name it gives must
    /// be a variable's display name or the family name of its instances
    /// (`n` keeps every `n#k`, `i@S` every `i#k@S`), or the name that
    /// several functions declare (`C` keeps `main::C` and
    /// `kernel_gemm::C`). A name that a later scope had to qualify (`X@S`,
    /// the stack pointer that holds the heap block `X`) is another
    /// variable, kept only by its own name.
    pub fn keep(&self, vars: &[Variable]) -> Result<Vec<bool>, UnknownVariable> {
        let named = |v: &Variable, n: &String| {
            let fam = family(v);
            v.name == *n || fam == *n || fam.rsplit("::").next() == Some(n.as_str())
        };
        let unknown: Vec<String> = self
            .only
            .iter()
            .chain(&self.skip)
            .filter(|n| !vars.iter().any(|v| named(v, n)))
            .map(|n| format!("\"{n}\""))
            .collect();
        if !unknown.is_empty() {
            let mut known: Vec<&str> = vars
                .iter()
                .filter(|v| !v.internal && v.accessed.is_some())
                .map(|v| v.name.as_str())
                .collect();
            known.sort();
            return Err(UnknownVariable {
                names: unknown.join(", "),
                known: known.join(", "),
            });
        }
        Ok(vars
            .iter()
            .map(|v| {
                (!self.arrays || is_array(v))
                    && (self.only.is_empty() || self.only.iter().any(|n| named(v, n)))
                    && !self.skip.iter().any(|n| named(v, n))
            })
            .collect())
    }
}

/// The name a variable shares with the other instances of its name: its
/// base name, qualified by scope when its display name is (`rows[i]#2` is
/// `rows[i]`, `i#2@S` is `i@S`, `X@S` stays `X@S`). The analysis' naming
/// numbers instances `BASE#K`, then qualifies the names another scope
/// took first with `@SCOPE`.
pub fn family(v: &Variable) -> String {
    let qualifier = format!("@{}", v.scope.code());
    if v.name.ends_with(&qualifier) {
        format!("{}{qualifier}", v.base_name)
    } else {
        v.base_name.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A variable as the analysis names it: `name` displayed, `base` the
    /// name in the source.
    fn var(name: &str, base: &str, scope: Scope) -> Variable {
        let mut v = Variable::new(name.into(), scope);
        v.base_name = base.into();
        v
    }

    #[test]
    fn family_drops_the_instance_number_only() {
        let family_of = |name, base, scope| family(&var(name, base, scope));
        assert_eq!(family_of("X", "X", Scope::Heap), "X");
        assert_eq!(family_of("X@S", "X", Scope::Stack), "X@S");
        assert_eq!(family_of("n#2", "n", Scope::Heap), "n");
        assert_eq!(family_of("rows[i]#12", "rows[i]", Scope::Heap), "rows[i]");
        assert_eq!(family_of("i#2@S", "i", Scope::Stack), "i@S");
        assert_eq!(family_of("a#b", "a#b", Scope::Global), "a#b");
        assert_eq!(
            family_of("<main frame>", "<main frame>", Scope::Stack),
            "<main frame>"
        );
    }

    #[test]
    fn a_name_keeps_its_instances_but_not_the_pointer_named_apart() {
        let vars = [
            var("X", "X", Scope::Heap),
            var("X@S", "X", Scope::Stack),
            var("n#1", "n", Scope::Heap),
            var("n#2", "n", Scope::Heap),
            var("i#1@S", "i", Scope::Stack),
            var("i#2@S", "i", Scope::Stack),
        ];
        let keep = |w: &[&str]| VarFilter::parse(w.iter().copied()).keep(&vars).unwrap();
        assert_eq!(keep(&["X"]), [true, false, false, false, false, false]);
        assert_eq!(keep(&["X@S"]), [false, true, false, false, false, false]);
        assert_eq!(keep(&["n"]), [false, false, true, true, false, false]);
        assert_eq!(keep(&["n#2"]), [false, false, false, true, false, false]);
        assert_eq!(keep(&["i@S"]), [false, false, false, false, true, true]);
        assert_eq!(keep(&["-X"]), [false, true, true, true, true, true]);
        assert!(VarFilter::parse(["Y"]).keep(&vars).is_err());
    }
}
