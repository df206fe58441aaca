//! Loading: reads the object file, walks every compilation unit's DIE tree
//! once, and hands what it finds to the tables of the sibling modules
//! (types, variables, functions, units), then reads the unwind table.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use gimli::{AttributeValue, EndianSlice, EntriesTreeNode, RunTimeEndian};
use object::{Object, ObjectSection};

use super::cfi::Unwind;
use super::die::{die_name, die_ranges, Cx, R};
use super::error::DwarfError;
use super::functions::{Function, FunctionTable};
use super::types::{TypeBuilder, TypeId};
use super::units::UnitTable;
use super::vars::{
    frame_base_kind, global_addr, read_variable, FrameBase, RawVar, Scope, Variable,
};
use super::DebugVars;

impl DebugVars {
    /// Reads `path` and parses its DWARF and call frame information.
    ///
    /// The whole file is read into memory for the duration of the call and
    /// then dropped: the result keeps only its own tables. DWARF 4 and 5 are
    /// supported (`.debug_addr`, `.debug_rnglists`, `.debug_loclists`
    /// included); compressed debug sections are decompressed.
    ///
    /// # Errors
    /// [`DwarfError::Read`] if the file cannot be read,
    /// [`DwarfError::NotObject`] if it is not an object file,
    /// [`DwarfError::NoDebugInfo`] if it has no `.debug_info` (compiled
    /// without `-g`), [`DwarfError::BadDwarf`] if the DWARF is malformed.
    pub fn load(path: &Path) -> Result<DebugVars, DwarfError> {
        with_units(path, |dwarf, all, obj| {
            let bad = |source| DwarfError::BadDwarf {
                path: path.to_owned(),
                source,
            };
            let mut builder = Builder::default();
            let mut units = UnitTable::default();
            for unit in all {
                let cx = Cx::new(dwarf, unit, all);
                let mut tree = unit.entries_tree(None).map_err(bad)?;
                let root = tree.root().map_err(bad)?;
                let scope = Scope {
                    optimized: units.read_unit(*cx, root.entry()),
                    function: None,
                    frame_base: FrameBase::Unknown,
                    ranges: Vec::new(),
                    depth: 0,
                };
                builder.walk(cx, root, &scope).map_err(bad)?;
            }
            let endian = if obj.is_little_endian() {
                RunTimeEndian::Little
            } else {
                RunTimeEndian::Big
            };
            let unwind = Unwind::read(obj, endian);
            Ok(builder.finish(path.to_owned(), unwind, units))
        })
    }
}

/// Reads `path` and calls `f` with its DWARF, every unit of it (parsed
/// before any is walked, so that a DIE can be completed from another
/// unit: -flto's link-time unit refers to the compile-time units for
/// names and types) and the object. The file is held in memory for the
/// call only.
///
/// # Errors
/// As [`DebugVars::load`], and whatever `f` returns.
pub(super) fn with_units<T>(
    path: &Path,
    f: impl FnOnce(
        &gimli::Dwarf<R<'_>>,
        &[gimli::Unit<R<'_>>],
        &object::File<'_>,
    ) -> Result<T, DwarfError>,
) -> Result<T, DwarfError> {
    let data = std::fs::read(path).map_err(|source| DwarfError::Read {
        path: path.to_owned(),
        source,
    })?;
    let obj = object::File::parse(&*data).map_err(|source| DwarfError::NotObject {
        path: path.to_owned(),
        source,
    })?;
    let has_info = obj
        .section_by_name(".debug_info")
        .is_some_and(|s| s.size() > 0);
    if !has_info {
        return Err(DwarfError::NoDebugInfo {
            path: path.to_owned(),
        });
    }
    let endian = if obj.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let bad = |source| DwarfError::BadDwarf {
        path: path.to_owned(),
        source,
    };
    let sections = gimli::DwarfSections::load(|id| -> Result<Cow<[u8]>, DwarfError> {
        match obj.section_by_name(id.name()) {
            Some(s) => s
                .uncompressed_data()
                .map_err(|source| DwarfError::NotObject {
                    path: path.to_owned(),
                    source,
                }),
            None => Ok(Cow::Borrowed(&[][..])),
        }
    })?;
    let dwarf = sections.borrow(|s| EndianSlice::new(s, endian));
    let mut all = Vec::new();
    let mut headers = dwarf.units();
    while let Some(header) = headers.next().map_err(bad)? {
        all.push(dwarf.unit(header).map_err(bad)?);
    }
    f(&dwarf, &all, &obj)
}

/// Accumulates everything found while walking the units.
#[derive(Default)]
struct Builder {
    types: TypeBuilder,
    vars: Vec<RawVar>,
    functions: Vec<Function>,
}

impl Builder {
    /// Reads the children of `node`, in lexical context `scope`: functions
    /// and blocks (recursively), variables, and types.
    fn walk<'d>(
        &mut self,
        u: Cx<'_, 'd>,
        node: EntriesTreeNode<'_, '_, '_, R<'d>>,
        scope: &Scope,
    ) -> gimli::Result<()> {
        let mut children = node.children();
        while let Some(child) = children.next()? {
            let entry = child.entry().clone();
            match entry.tag() {
                gimli::DW_TAG_subprogram => {
                    if entry.attr_value(gimli::DW_AT_declaration)?.is_some() {
                        continue;
                    }
                    let name = die_name(u, &entry)?.unwrap_or_else(|| "<anonymous>".to_owned());
                    let ranges = die_ranges(u, &entry)?;
                    let code = Function::with_code(name.clone(), ranges.clone(), scope.optimized);
                    let index = code.map(|f| {
                        self.functions.push(f);
                        self.functions.len() - 1
                    });
                    let frame_base = match entry.attr_value(gimli::DW_AT_frame_base)? {
                        Some(AttributeValue::Exprloc(e)) => frame_base_kind(u, e),
                        _ => FrameBase::Unknown,
                    };
                    let inner = Scope {
                        function: Some((name, index)),
                        frame_base,
                        ranges,
                        depth: 1,
                        optimized: scope.optimized,
                    };
                    self.walk(u, child, &inner)?;
                }
                gimli::DW_TAG_lexical_block => {
                    let ranges = die_ranges(u, &entry)?;
                    let inner = Scope {
                        ranges: if ranges.is_empty() {
                            scope.ranges.clone()
                        } else {
                            ranges
                        },
                        depth: scope.depth + 1,
                        ..scope.clone()
                    };
                    self.walk(u, child, &inner)?;
                }
                gimli::DW_TAG_variable | gimli::DW_TAG_formal_parameter => {
                    self.vars.extend(read_variable(u, &entry, scope)?);
                }
                // Inlined copies keep their variables in registers or
                // location lists; nothing there has a fixed frame slot.
                gimli::DW_TAG_inlined_subroutine => {}
                gimli::DW_TAG_structure_type
                | gimli::DW_TAG_union_type
                | gimli::DW_TAG_class_type
                | gimli::DW_TAG_array_type => {
                    self.types.record_or_array(u, &entry, child)?;
                }
                tag => {
                    self.types.simple(u, &entry)?;
                    if matches!(tag, gimli::DW_TAG_namespace | gimli::DW_TAG_module) {
                        self.walk(u, child, scope)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Resolves types, sizes the variables and sorts everything into the
    /// lookup tables.
    fn finish(self, path: PathBuf, unwind: Unwind, units: UnitTable) -> DebugVars {
        let ids: Vec<Option<TypeId>> = self
            .vars
            .iter()
            .map(|r| r.raw_type.and_then(|off| self.types.id_of(off)))
            .collect();
        let types = self.types.finish();
        let mut globals = Vec::new();
        let mut locals: Vec<(usize, Variable)> = Vec::new();
        for (raw, id) in self.vars.into_iter().zip(ids) {
            let mut var = raw.var;
            var.type_id = id;
            var.size = id.map_or(0, |t| types.type_size(t));
            match raw.function_index {
                Some(f) => locals.push((f, var)),
                None => globals.push(var),
            }
        }
        globals.sort_by_key(global_addr);
        DebugVars {
            path,
            types,
            globals,
            functions: FunctionTable::build(self.functions, locals),
            unwind,
            units,
        }
    }
}
