//! Reading single DIEs: names, types and code ranges, following
//! `DW_AT_abstract_origin` and `DW_AT_specification` to the DIE that carries
//! them, in the same unit or in another one. Everything else in this folder
//! reads attributes through these.
//!
//! A link-time optimised program (`-flto`) is the common case of a reference
//! to another unit: gcc writes the code, the locations and the functions'
//! ranges in a link-time unit (`<artificial>`), whose DIEs name nothing and
//! refer with `DW_FORM_ref_addr` to the compile-time units that carry the
//! names and types of the variables and functions.

use std::ops::{Deref, Range};

use gimli::{AttributeValue, DebugInfoOffset, EndianSlice, RunTimeEndian, Unit, UnitRef};

/// The DWARF reader used while loading: slices of the file read into memory.
pub(super) type R<'d> = EndianSlice<'d, RunTimeEndian>;

/// The unit being read, with every unit of the object beside it so that a
/// reference into another unit can be followed. Dereferences to the unit.
#[derive(Clone, Copy)]
pub(super) struct Cx<'a, 'd> {
    /// The unit whose DIEs are being read.
    u: UnitRef<'a, R<'d>>,
    /// Every unit of the object, in `.debug_info` order.
    units: &'a [Unit<R<'d>>],
}

impl<'a, 'd> Deref for Cx<'a, 'd> {
    type Target = UnitRef<'a, R<'d>>;

    fn deref(&self) -> &Self::Target {
        &self.u
    }
}

impl<'a, 'd> Cx<'a, 'd> {
    /// The context of `unit`, one of `units` (parsed from `dwarf`, sorted
    /// by offset as [`gimli::Dwarf::units`] yields them).
    pub(super) fn new(
        dwarf: &'a gimli::Dwarf<R<'d>>,
        unit: &'a Unit<R<'d>>,
        units: &'a [Unit<R<'d>>],
    ) -> Cx<'a, 'd> {
        Cx {
            u: UnitRef::new(dwarf, unit),
            units,
        }
    }

    /// The unit holding `.debug_info` offset `o` and `o` inside it; `None`
    /// for an offset in no unit. Costs a binary search over the units.
    fn unit_of(&self, o: DebugInfoOffset) -> Option<(Cx<'a, 'd>, gimli::UnitOffset)> {
        let start = |u: &Unit<R<'d>>| u.header.offset().as_debug_info_offset().map_or(0, |s| s.0);
        let after = self.units.partition_point(|u| start(u) <= o.0);
        let unit = self.units.get(after.checked_sub(1)?)?;
        let inside = o.to_unit_offset(&unit.header)?;
        Some((Cx::new(self.u.dwarf, unit, self.units), inside))
    }
}

/// `.debug_info` offset of the DIE an attribute of a DIE of `u` refers to.
pub(super) fn ref_offset(u: Cx<'_, '_>, value: AttributeValue<R<'_>>) -> Option<u64> {
    match value {
        AttributeValue::UnitRef(o) => o.to_debug_info_offset(&u.header).map(|o| o.0 as u64),
        AttributeValue::DebugInfoRef(o) => Some(o.0 as u64),
        _ => None,
    }
}

/// An attribute of `entry`, or of the DIE it completes
/// (`DW_AT_abstract_origin`, `DW_AT_specification`, in this unit or
/// another) when absent, with the unit of the DIE that carries it: a
/// reference or a string index in the value is that unit's. Follows at
/// most four links.
pub(super) fn attr_follow<'a, 'd>(
    u: Cx<'a, 'd>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
    at: gimli::DwAt,
) -> gimli::Result<Option<(Cx<'a, 'd>, AttributeValue<R<'d>>)>> {
    if let Some(v) = entry.attr_value(at)? {
        return Ok(Some((u, v)));
    }
    let mut origin = origin_of(entry)?;
    let mut here = u;
    for _ in 0..4 {
        let (next_unit, offset) = match origin {
            Some(AttributeValue::UnitRef(o)) => (here, o),
            Some(AttributeValue::DebugInfoRef(o)) => match here.unit_of(o) {
                Some(found) => found,
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        here = next_unit;
        let next = here.entry(offset)?;
        if let Some(v) = next.attr_value(at)? {
            return Ok(Some((here, v)));
        }
        origin = origin_of(&next)?;
    }
    Ok(None)
}

/// `.debug_info` offset of the DIE that `entry` completes, following
/// `DW_AT_abstract_origin` and `DW_AT_specification` to the last (at most
/// four links): the one DIE every copy of a function refers to. `entry`'s
/// own offset when it completes none.
pub(super) fn origin_offset<'d>(
    u: Cx<'_, 'd>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<u64> {
    let own = entry
        .offset()
        .to_debug_info_offset(&u.header)
        .map_or(0, |o| o.0 as u64);
    let mut here = u;
    let mut at = own;
    let mut origin = origin_of(entry)?;
    for _ in 0..4 {
        let (next_unit, offset) = match origin {
            Some(AttributeValue::UnitRef(o)) => (here, o),
            Some(AttributeValue::DebugInfoRef(o)) => match here.unit_of(o) {
                Some(found) => found,
                None => break,
            },
            _ => break,
        };
        here = next_unit;
        at = offset
            .to_debug_info_offset(&here.header)
            .map_or(at, |o| o.0 as u64);
        origin = origin_of(&here.entry(offset)?)?;
    }
    Ok(at)
}

/// The `DW_AT_abstract_origin` or `DW_AT_specification` of `entry`.
fn origin_of<'d>(
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<Option<AttributeValue<R<'d>>>> {
    match entry.attr_value(gimli::DW_AT_abstract_origin)? {
        Some(v) => Ok(Some(v)),
        None => entry.attr_value(gimli::DW_AT_specification),
    }
}

/// The name of `entry` or of the DIE it completes.
pub(super) fn die_name<'d>(
    u: Cx<'_, 'd>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<Option<String>> {
    match attr_follow(u, entry, gimli::DW_AT_name)? {
        Some((at, v)) => Ok(Some(at.attr_string(v)?.to_string_lossy().into_owned())),
        None => Ok(None),
    }
}

/// `.debug_info` offset of the type of `entry` or of the DIE it completes.
pub(super) fn die_type<'d>(
    u: Cx<'_, 'd>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<Option<u64>> {
    Ok(attr_follow(u, entry, gimli::DW_AT_type)?.and_then(|(at, v)| ref_offset(at, v)))
}

/// The non-empty code ranges of `entry` (`DW_AT_low_pc`/`high_pc` or
/// `DW_AT_ranges`), file addresses, end exclusive.
pub(super) fn die_ranges<'d>(
    u: Cx<'_, 'd>,
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

/// The source file that declares `entry` (`DW_AT_decl_file`, read in the
/// line table of the unit that carries it), as the unit spells it: the
/// directory joined to the name. `None` when the DIE has no such
/// attribute or the unit no line table.
pub(super) fn decl_file<'d>(
    u: Cx<'_, 'd>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<Option<std::path::PathBuf>> {
    file_attr(u, entry, gimli::DW_AT_decl_file)
}

/// The source file a file attribute of `entry` (`DW_AT_decl_file`,
/// `DW_AT_call_file`) names, as [`decl_file`] reads it.
pub(super) fn file_attr<'d>(
    u: Cx<'_, 'd>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
    attr: gimli::DwAt,
) -> gimli::Result<Option<std::path::PathBuf>> {
    let Some((at, value)) = attr_follow(u, entry, attr)? else {
        return Ok(None);
    };
    let index = match value {
        AttributeValue::FileIndex(i) => i,
        v => match v.udata_value() {
            Some(i) => i,
            None => return Ok(None),
        },
    };
    let Some(header) = at.line_program.as_ref().map(|p| p.header()) else {
        return Ok(None);
    };
    let Some(file) = header.file(index) else {
        return Ok(None);
    };
    let mut path = std::path::PathBuf::new();
    if let Some(dir) = file.directory(header) {
        path.push(&*at.attr_string(dir)?.to_string_lossy());
    }
    path.push(&*at.attr_string(file.path_name())?.to_string_lossy());
    Ok(Some(path))
}
