//! Picking variables by name: which variables count as arrays, and the
//! variable filter of `complete_memory_access_pattern` (`arrays`, `NAME`,
//! `-NAME`), so that scalars such as loop counters and `<static data>` can
//! be left out of a figure.

use polars::prelude::*;

use super::analysis::{Analysis, Variable};
use super::Selection;
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
    /// be a variable's display or base name (`n` keeps every `n#k`).
    pub fn keep(&self, vars: &[Variable]) -> Result<Vec<bool>, UnknownVariable> {
        let named = |v: &Variable, n: &String| v.name == *n || v.base_name == *n;
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

/// The part of a selection whose variables `keep` also holds. Cost: one
/// pass over the variables and unique locations.
pub fn narrow(a: &Analysis, selection: &Selection, keep: &[bool]) -> PolarsResult<Selection> {
    selection.narrow(a, keep)
}
