//! The fields of an array of structures, as columns for the 2D figure.
//!
//! An array of structures (`struct P ps[16]`, `struct P *hp = malloc(8 *
//! sizeof *hp)`) reads best as a table: one row per element, one column per
//! field, named as the source names it. The analysis already names each
//! location by its member path (`ps[3].x`, `hp[0].pos.y`), so the fields
//! are read back from the location table: every distinct byte offset within
//! the element that an access started at, with the member path there.
//! Fields that no access touched have no location and so no column; they
//! would be empty columns anyway.

use polars::prelude::*;

use super::analysis::Analysis;
use super::schema::location as lc;

/// One column of an array of structures: where it starts in the element,
/// and its member path (`x`, `pos.y`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructField {
    /// Byte offset within one element.
    pub offset: u64,
    /// Member path below the element, without the array part.
    pub name: String,
}

/// The accessed fields of variable `var`, ordered by offset, when it is a
/// one-dimensional array of structures (a known element size, and member
/// paths such as `ps[3].x` on its locations); empty otherwise.
///
/// Cost: one pass over the location table (one row per distinct address),
/// O(distinct locations of all variables).
///
/// # Errors
/// Only when the location table does not follow its schema (a bug).
pub fn struct_fields(a: &Analysis, var: u32) -> PolarsResult<Vec<StructField>> {
    let Some(v) = a.vars.get(var as usize) else {
        return Ok(vec![]);
    };
    if v.elem_size == 0 || v.dims.len() > 1 {
        return Ok(vec![]);
    }
    let elem = v.elem_size as u64;
    fields_by(a, var, v, &|offset, e| {
        member_path(e).map(|name| (offset % elem, name.to_string()))
    })
}

/// Turns a location's byte offset in its block and element path into a
/// field's offset and name, or passes it over.
type PickField<'f> = dyn Fn(u64, &str) -> Option<(u64, String)> + 'f;

/// The fields of `var` (`v`) from its locations: `pick` turns a location's
/// byte offset in the block and element path into a field's offset and
/// name, or passes it over; the first name met at an offset stays.
fn fields_by(
    a: &Analysis,
    var: u32,
    v: &crate::filter::model::Variable,
    pick: &PickField<'_>,
) -> PolarsResult<Vec<StructField>> {
    let loc = &a.locations;
    let vars = loc.column(lc::VAR)?.u32()?;
    let addrs = loc.column(lc::ADDR)?.u64()?;
    let elements = loc.column(lc::ELEMENT)?.str()?;
    let mut by_offset = std::collections::BTreeMap::new();
    for ((vv, addr), e) in vars.into_iter().zip(addrs).zip(elements) {
        let (Some(vv), Some(addr), Some(e)) = (vv, addr, e) else {
            continue;
        };
        if vv != var || addr < v.base || addr >= v.base.saturating_add(v.size) {
            continue;
        }
        if let Some((offset, name)) = pick(addr - v.base, e) {
            by_offset.entry(offset).or_insert(name);
        }
    }
    Ok(by_offset
        .into_iter()
        .map(|(offset, name)| StructField { offset, name })
        .collect())
}

/// The accessed fields of heap block `var` when it holds one structure
/// (its size is its element size and its locations are members such as
/// `n.val`), ordered by offset; empty otherwise. The blocks of a list,
/// drawn side by side, are drawn by these fields. Cost: as
/// [`struct_fields`].
///
/// # Errors
/// Only when the location table does not follow its schema (a bug).
pub fn single_struct_fields(a: &Analysis, var: u32) -> PolarsResult<Vec<StructField>> {
    let Some(v) = a.vars.get(var as usize) else {
        return Ok(vec![]);
    };
    if v.elem_size == 0 || u64::from(v.elem_size) != v.size {
        return Ok(vec![]);
    }
    fields_by(a, var, v, &|offset, e| {
        e.split_once('.')
            .filter(|(_, m)| !m.is_empty())
            .map(|(_, m)| (offset, m.to_string()))
    })
}

/// The member path after the first array index: `x` of `ps[3].x`,
/// `pos.y` of `hp[0].pos.y`; `None` for `ps[3]` or a plain member `h.n`.
fn member_path(element: &str) -> Option<&str> {
    let close = element.find("].")?;
    let rest = &element[close + 2..];
    (!rest.is_empty()).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::member_path;

    #[test]
    fn member_paths_follow_the_first_index() {
        assert_eq!(member_path("ps[3].x"), Some("x"));
        assert_eq!(member_path("hp[0].pos.y"), Some("pos.y"));
        assert_eq!(member_path("m[1][2].v"), Some("v"));
        assert_eq!(member_path("ps[3]"), None);
        assert_eq!(member_path("h.nbins"), None);
    }
}
