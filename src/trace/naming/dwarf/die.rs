//! Reading single DIEs: names, types and code ranges, following
//! `DW_AT_abstract_origin` and `DW_AT_specification` to the DIE that carries
//! them. Everything else in this folder reads attributes through these.

use std::ops::Range;

use gimli::{AttributeValue, EndianSlice, RunTimeEndian, UnitRef};

/// The DWARF reader used while loading: slices of the file read into memory.
pub(super) type R<'d> = EndianSlice<'d, RunTimeEndian>;

/// `.debug_info` offset of the DIE an attribute refers to.
pub(super) fn ref_offset<'d>(u: UnitRef<'_, R<'d>>, value: AttributeValue<R<'d>>) -> Option<u64> {
    match value {
        AttributeValue::UnitRef(o) => o.to_debug_info_offset(&u.header).map(|o| o.0 as u64),
        AttributeValue::DebugInfoRef(o) => Some(o.0 as u64),
        _ => None,
    }
}

/// An attribute of `entry`, or of the DIE it completes
/// (`DW_AT_abstract_origin`, `DW_AT_specification`) when absent.
pub(super) fn attr_follow<'d>(
    u: UnitRef<'_, R<'d>>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
    at: gimli::DwAt,
) -> gimli::Result<Option<AttributeValue<R<'d>>>> {
    if let Some(v) = entry.attr_value(at)? {
        return Ok(Some(v));
    }
    let mut current = entry.clone();
    for _ in 0..4 {
        let origin = match current.attr_value(gimli::DW_AT_abstract_origin)? {
            Some(v) => Some(v),
            None => current.attr_value(gimli::DW_AT_specification)?,
        };
        let Some(AttributeValue::UnitRef(o)) = origin else {
            return Ok(None);
        };
        let next = u.entry(o)?;
        if let Some(v) = next.attr_value(at)? {
            return Ok(Some(v));
        }
        current = next;
    }
    Ok(None)
}

/// The name of `entry` or of the DIE it completes.
pub(super) fn die_name<'d>(
    u: UnitRef<'_, R<'d>>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<Option<String>> {
    match attr_follow(u, entry, gimli::DW_AT_name)? {
        Some(v) => Ok(Some(u.attr_string(v)?.to_string_lossy().into_owned())),
        None => Ok(None),
    }
}

/// `.debug_info` offset of the type of `entry` or of the DIE it completes.
pub(super) fn die_type<'d>(
    u: UnitRef<'_, R<'d>>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<Option<u64>> {
    Ok(attr_follow(u, entry, gimli::DW_AT_type)?.and_then(|v| ref_offset(u, v)))
}

/// The non-empty code ranges of `entry` (`DW_AT_low_pc`/`high_pc` or
/// `DW_AT_ranges`), file addresses, end exclusive.
pub(super) fn die_ranges<'d>(
    u: UnitRef<'_, R<'d>>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<Vec<Range<u64>>> {
    let mut out = Vec::new();
    let mut iter = u.die_ranges(entry)?;
    while let Some(r) = iter.next()? {
        if r.begin < r.end {
            out.push(r.begin..r.end);
        }
    }
    Ok(out)
}
