//! The fields of an array of structures, as columns for the 2D figure.
//!
//! An array of structures (`struct P ps[16]`, `struct P *hp = malloc(8 *
//! sizeof *hp)`) reads best as a table: one row per element, one column per
//! field, named as the source names it. When the analysis knows the
//! structure's layout from the program's debug information
//! ([`Variable::layout`]), every member is a column, touched or not, and
//! so is every run of padding: the bytes a region never used are what a
//! structure-layout study looks for. Otherwise (an analysis read back from
//! files, no debug type) the fields are read back from the location table:
//! every distinct byte offset within the element that an access started
//! at, with the member path the analysis named there; fields no access
//! touched then have no column.

use polars::prelude::*;

use super::access::VarId;
use super::analysis::Analysis;
use super::model::{LayoutField, Variable};
use super::schema::location as lc;

/// The name of a column of padding bytes.
pub const PADDING: &str = "(padding)";

/// One column of an array of structures: where it starts in the element,
/// its member path (`x`, `pos.y`), its bytes and whether an access touched
/// it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructField {
    /// Byte offset within one element.
    pub offset: u64,
    /// Member path below the element, without the array part; [`PADDING`]
    /// for bytes between (or after) members.
    pub name: String,
    /// Bytes it spans; 0 when unknown (fields read from the accesses).
    pub size: u64,
    /// Whether an access of the region started in it.
    pub touched: bool,
}

/// The columns of a structure of `elem` bytes with layout `layout`: its
/// members and runs of padding, in offset order, each touched when one of
/// the `touched` offsets (within an element) falls in it.
fn with_padding(layout: &[LayoutField], elem: u64, touched: &[u64]) -> Vec<StructField> {
    let hit = |o: u64, n: u64| touched.iter().any(|&t| t >= o && t < o + n);
    let mut out = Vec::new();
    let mut at = 0u64;
    let pad = |from: u64, to: u64, out: &mut Vec<StructField>| {
        if to > from {
            out.push(StructField {
                offset: from,
                name: PADDING.to_string(),
                size: to - from,
                touched: hit(from, to - from),
            });
        }
    };
    for f in layout.iter().filter(|f| f.offset + f.size <= elem) {
        pad(at, f.offset, &mut out);
        out.push(StructField {
            offset: f.offset,
            name: f.name.clone(),
            size: f.size,
            touched: hit(f.offset, f.size),
        });
        at = f.offset + f.size;
    }
    pad(at, elem, &mut out);
    out
}

/// The columns of variable `v` (of `elem`-byte elements): its layout's
/// when known, else the fields touched (`found`, by offset).
fn columns(v: &Variable, elem: u64, found: Vec<(u64, String)>) -> Vec<StructField> {
    let offsets: Vec<u64> = found.iter().map(|f| f.0).collect();
    if !v.layout.is_empty() && !found.is_empty() {
        return with_padding(&v.layout, elem, &offsets);
    }
    found
        .into_iter()
        .map(|(offset, name)| StructField {
            offset,
            name,
            size: 0,
            touched: true,
        })
        .collect()
}

/// The fields of variable `var`, ordered by offset, when it is a
/// one-dimensional array of structures (a known element size, and member
/// paths such as `ps[3].x` on its locations); empty otherwise. With the
/// structure's layout known, every member and run of padding, each marked
/// touched or not; else the fields accesses touched.
///
/// Cost: one pass over the location table (one row per distinct address),
/// O(distinct locations of all variables).
///
/// # Errors
/// Only when the location table does not follow its schema (a bug).
pub fn struct_fields(a: &Analysis, var: VarId) -> PolarsResult<Vec<StructField>> {
    let Some(v) = a.vars.get(var.index()) else {
        return Ok(vec![]);
    };
    if v.elem_size == 0 || v.dims.len() > 1 {
        return Ok(vec![]);
    }
    let elem = v.elem_size as u64;
    let found = fields_by(a, var, v, &|offset, e| {
        member_path(e).map(|name| (offset % elem, name.to_string()))
    })?;
    Ok(columns(v, elem, found))
}

/// Turns a location's byte offset in its block and element path into a
/// field's offset and name, or passes it over.
type PickField<'f> = dyn Fn(u64, &str) -> Option<(u64, String)> + 'f;

/// Locations of one variable read to find its fields at most: a block
/// with more is read from its start only, far enough to meet every field
/// of a regular walk (4 M locations of a 16-byte structure are 64 MB of
/// it).
const FIELD_LOCATIONS: u64 = 4 << 20;

/// The fields of `var` (`v`) from its locations, by offset: `pick` turns
/// a location's byte offset in the block and element path into a field's
/// offset and name, or passes it over; the first name met at an offset
/// stays. Cost: the lookup table's row groups that hold the block (at most
/// [`FIELD_LOCATIONS`] of its locations).
fn fields_by(
    a: &Analysis,
    var: VarId,
    v: &Variable,
    pick: &PickField<'_>,
) -> PolarsResult<Vec<(u64, String)>> {
    let t = a.locations.totals(var.index());
    let mut span = v.size;
    if t.locations > FIELD_LOCATIONS {
        span = (u128::from(v.size) * u128::from(FIELD_LOCATIONS) / u128::from(t.locations)) as u64;
    }
    let loc = a
        .locations
        .in_range(v.base, v.base.saturating_add(span.max(1)))
        .map_err(|e| PolarsError::ComputeError(e.to_string().into()))?;
    let vars = loc.column(lc::VAR)?.u32()?;
    let addrs = loc.column(lc::ADDR)?.u64()?;
    let elements = loc.column(lc::ELEMENT)?.str()?;
    let mut by_offset = std::collections::BTreeMap::new();
    for ((vv, addr), e) in vars.into_iter().zip(addrs).zip(elements) {
        let (Some(vv), Some(addr), Some(e)) = (vv, addr, e) else {
            continue;
        };
        if vv != var.0 || addr < v.base || addr >= v.base.saturating_add(v.size) {
            continue;
        }
        if let Some((offset, name)) = pick(addr - v.base, e) {
            by_offset.entry(offset).or_insert(name);
        }
    }
    Ok(by_offset.into_iter().collect())
}

/// The fields of heap block `var` (as [`struct_fields`]) when it holds one structure
/// (its size is its element size and its locations are members such as
/// `n.val`), ordered by offset; empty otherwise. The blocks of a list,
/// drawn side by side, are drawn by these fields. Cost: as
/// [`struct_fields`].
///
/// # Errors
/// Only when the location table does not follow its schema (a bug).
pub fn single_struct_fields(a: &Analysis, var: VarId) -> PolarsResult<Vec<StructField>> {
    let Some(v) = a.vars.get(var.index()) else {
        return Ok(vec![]);
    };
    if v.elem_size == 0 || u64::from(v.elem_size) != v.size {
        return Ok(vec![]);
    }
    let found = fields_by(a, var, v, &|offset, e| {
        e.split_once('.')
            .filter(|(_, m)| !m.is_empty())
            .map(|(_, m)| (offset, m.to_string()))
    })?;
    Ok(columns(v, v.size, found))
}

/// The member path after the first array index: `x` of `ps[3].x`,
/// `pos.y` of `hp[0].pos.y`; `None` for `ps[3]` or a plain member `h.n`.
fn member_path(element: &str) -> Option<&str> {
    let close = element.find("].")?;
    let rest = &element[close + 2..];
    (!rest.is_empty()).then_some(rest)
}

impl Analysis {
    /// See [`single_struct_fields`].
    pub fn single_struct_fields(&self, var: VarId) -> PolarsResult<Vec<StructField>> {
        single_struct_fields(self, var)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::model::{layout_of, member_after};

    #[test]
    fn member_paths_follow_the_variable_and_its_indices() {
        assert_eq!(member_after("ps[3].x", "ps"), Some("x"));
        assert_eq!(member_after("hp[0].pos.y", "hp"), Some("pos.y"));
        assert_eq!(member_after("m[1][2].v[3]", "m"), Some("v[3]"));
        assert_eq!(member_after("h.nbins", "h"), Some("nbins"));
        assert_eq!(member_after("ps[3]", "ps"), None);
        assert_eq!(member_after("ps", "ps"), None);
        assert_eq!(member_after("q[0].x", "ps"), None);
    }

    /// `struct { double x; int id; float m; char c; }`: 24 bytes, padding
    /// after `c`; only `x` and `id` touched.
    #[test]
    fn a_layout_lists_every_member_and_its_padding() {
        let mut paths = vec![None; 24];
        for (name, from, n) in [("x", 0, 8), ("id", 8, 4), ("m", 12, 4), ("c", 16, 1)] {
            for p in &mut paths[from..from + n] {
                *p = Some(name.to_string());
            }
        }
        let layout = layout_of(&paths).unwrap();
        let cols = with_padding(&layout, 24, &[0, 8]);
        let got: Vec<(u64, &str, u64, bool)> = cols
            .iter()
            .map(|f| (f.offset, f.name.as_str(), f.size, f.touched))
            .collect();
        assert_eq!(
            got,
            [
                (0, "x", 8, true),
                (8, "id", 4, true),
                (12, "m", 4, false),
                (16, "c", 1, false),
                (17, PADDING, 7, false)
            ]
        );
        assert_eq!(layout_of(&[None, None]), None);
    }

    #[test]
    fn member_paths_follow_the_first_index() {
        assert_eq!(member_path("ps[3].x"), Some("x"));
        assert_eq!(member_path("hp[0].pos.y"), Some("pos.y"));
        assert_eq!(member_path("m[1][2].v"), Some("v"));
        assert_eq!(member_path("ps[3]"), None);
        assert_eq!(member_path("h.nbins"), None);
    }
}
