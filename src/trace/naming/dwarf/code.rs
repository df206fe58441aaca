//! Where the code is: every function that has code, with its own ranges
//! and those of each copy the compiler inlined elsewhere, and the code of
//! source lines, from the line tables. Regions by code (`set_region
//! function` and `lines`) are made of these ranges.
//!
//! A walk of its own over the units, separate from [`super::DebugVars`]:
//! it keeps the inlined copies, which naming has no use for, and runs only
//! when a region by code is set. All addresses are file addresses.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use gimli::{AttributeValue, DebuggingInformationEntry};

use super::die::{attr_follow, decl_file, die_name, file_attr, origin_offset, Cx, R};
use super::error::DwarfError;
use super::load::with_units;

/// A function with code somewhere in the object: out of line, inlined, or
/// both.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodeFunction {
    /// Its name: demangled with its parameter types for C++
    /// (`Domain::CalcForce(int)`, `double kernel<double>(double*)`), the
    /// plain name for C.
    pub full: String,
    /// Where it is declared (file, line), when DWARF says.
    pub decl: Option<(PathBuf, u64)>,
    /// The code of its out-of-line copy (several ranges when the compiler
    /// split it into hot and cold parts).
    pub own: Vec<Range<u64>>,
    /// Each copy inlined into another function: its ranges.
    pub inlined: Vec<Vec<Range<u64>>>,
}

/// The code of some source lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineCode {
    /// The ranges, sorted and merged.
    pub ranges: Vec<Range<u64>>,
    /// The source files (as the line tables spell them) whose lines gave
    /// code, so that a name matching two files can be refused.
    pub files: Vec<PathBuf>,
}

/// Every function of `path` with code, out of line or inlined, in no
/// particular order. Functions are told apart by the DIE they all refer
/// to (the declaration or abstract instance), so two `static` functions
/// of one name in two files are two functions. Costs one walk of every
/// DIE.
///
/// # Errors
/// As [`super::DebugVars::load`].
pub fn code_functions(path: &Path) -> Result<Vec<CodeFunction>, DwarfError> {
    with_units(path, |dwarf, all, _| {
        let bad = |source| DwarfError::BadDwarf {
            path: path.to_owned(),
            source,
        };
        let mut by_origin: HashMap<u64, CodeFunction> = HashMap::new();
        for unit in all {
            let cx = Cx::new(dwarf, unit, all);
            let mut entries = unit.entries();
            while let Some((_, entry)) = entries.next_dfs().map_err(bad)? {
                let tag = entry.tag();
                if tag != gimli::DW_TAG_subprogram && tag != gimli::DW_TAG_inlined_subroutine {
                    continue;
                }
                let ranges = super::die::die_ranges(cx, entry).map_err(bad)?;
                if ranges.is_empty() {
                    continue;
                }
                let key = origin_offset(cx, entry).map_err(bad)?;
                let f = by_origin.entry(key).or_default();
                if f.full.is_empty() {
                    f.full = full_name(cx, entry).map_err(bad)?.unwrap_or_default();
                    f.decl = declared_at(cx, entry).map_err(bad)?;
                }
                if tag == gimli::DW_TAG_subprogram {
                    f.own.extend(ranges);
                } else {
                    f.inlined.push(ranges);
                }
            }
        }
        Ok(by_origin
            .into_values()
            .filter(|f| !f.full.is_empty())
            .collect())
    })
}

/// The name of a function's DIE: its linkage name demangled when it has
/// a C++ one, else its name.
fn full_name<'d>(
    u: Cx<'_, 'd>,
    entry: &DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<Option<String>> {
    for at in [gimli::DW_AT_linkage_name, gimli::DW_AT_MIPS_linkage_name] {
        if let Some((cx, v)) = attr_follow(u, entry, at)? {
            let raw = cx.attr_string(v)?.to_string_lossy().into_owned();
            if let Some(d) = addr2line::demangle(&raw, gimli::DW_LANG_C_plus_plus) {
                return Ok(Some(d));
            }
        }
    }
    die_name(u, entry)
}

/// The declaration's file and line.
fn declared_at<'d>(
    u: Cx<'_, 'd>,
    entry: &DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<Option<(PathBuf, u64)>> {
    let file = decl_file(u, entry)?;
    let line = attr_follow(u, entry, gimli::DW_AT_decl_line)?.and_then(|(_, v)| match v {
        AttributeValue::Udata(n) => Some(n),
        v => v.udata_value(),
    });
    Ok(file.map(|f| (f, line.unwrap_or(0))))
}

/// The code of lines `lines` of the source files whose path ends with
/// `file` (whole components: `mm.c` matches `src/mm.c`, not `xmm.c`): the
/// rows of every unit's line table on those lines (a row's code runs to
/// the next row's address), and the code of every call inlined on them
/// (`DW_AT_call_file`, `DW_AT_call_line`), whose rows name the inlined
/// function's own lines.
///
/// # Errors
/// As [`super::DebugVars::load`].
pub fn line_code(
    path: &Path,
    file: &Path,
    lines: std::ops::RangeInclusive<u64>,
) -> Result<LineCode, DwarfError> {
    with_units(path, |dwarf, all, _| {
        let bad = |source| DwarfError::BadDwarf {
            path: path.to_owned(),
            source,
        };
        let mut out = LineCode::default();
        for unit in all {
            rows_on_lines(dwarf, unit, file, &lines, &mut out).map_err(bad)?;
            let cx = Cx::new(dwarf, unit, all);
            inlined_on_lines(cx, file, &lines, &mut out).map_err(bad)?;
        }
        out.ranges = merge(out.ranges);
        Ok(out)
    })
}

/// Adds to `out` the code of the line-table rows of `unit` on `lines` of
/// `file`.
fn rows_on_lines<'d>(
    dwarf: &gimli::Dwarf<R<'d>>,
    unit: &gimli::Unit<R<'d>>,
    file: &Path,
    lines: &std::ops::RangeInclusive<u64>,
    out: &mut LineCode,
) -> gimli::Result<()> {
    let Some(program) = unit.line_program.clone() else {
        return Ok(());
    };
    let mut rows = program.rows();
    let mut open: Option<(u64, PathBuf)> = None;
    while let Some((header, row)) = rows.next_row()? {
        if let Some((start, f)) = open.take() {
            if row.address() > start {
                out.ranges.push(start..row.address());
                out.add_file(f);
            }
        }
        if row.end_sequence() || !lines.contains(&row.line().map_or(0, |l| l.get())) {
            continue;
        }
        let Some(fe) = row.file(header) else {
            continue;
        };
        let mut p = PathBuf::new();
        if let Some(dir) = fe.directory(header) {
            p.push(&*dwarf.attr_string(unit, dir)?.to_string_lossy());
        }
        p.push(&*dwarf.attr_string(unit, fe.path_name())?.to_string_lossy());
        if p.ends_with(file) {
            open = Some((row.address(), p));
        }
    }
    Ok(())
}

/// Adds to `out` the code of the calls inlined on `lines` of `file` in
/// the unit of `u`.
fn inlined_on_lines(
    u: Cx<'_, '_>,
    file: &Path,
    lines: &std::ops::RangeInclusive<u64>,
    out: &mut LineCode,
) -> gimli::Result<()> {
    let mut entries = u.entries();
    while let Some((_, entry)) = entries.next_dfs()? {
        if entry.tag() != gimli::DW_TAG_inlined_subroutine {
            continue;
        }
        let line = entry
            .attr_value(gimli::DW_AT_call_line)?
            .and_then(|v| v.udata_value())
            .unwrap_or(0);
        if !lines.contains(&line) {
            continue;
        }
        let Some(f) = file_attr(u, entry, gimli::DW_AT_call_file)? else {
            continue;
        };
        if f.ends_with(file) {
            out.ranges.extend(super::die::die_ranges(u, entry)?);
            out.add_file(f);
        }
    }
    Ok(())
}

impl LineCode {
    fn add_file(&mut self, f: PathBuf) {
        if !self.files.contains(&f) {
            self.files.push(f);
        }
    }
}

/// `ranges` sorted, with overlapping and touching ones merged.
pub fn merge(mut ranges: Vec<Range<u64>>) -> Vec<Range<u64>> {
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::with_capacity(ranges.len());
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::merge;

    #[test]
    fn merging_joins_overlapping_and_touching_ranges() {
        assert_eq!(
            merge(vec![5..8, 1..3, 3..4, 7..10, 12..13]),
            vec![1..4, 5..10, 12..13]
        );
    }
}
