//! The C type model read from DWARF: base types, pointers, arrays,
//! structures and unions, typedefs and qualifiers, with their sizes; and
//! what it answers: element paths inside a value (`[3][4]`, `.data[3].z`),
//! array shapes, C spellings of types, structure types by name.
//!
//! Loading collects [`TypeData`] keyed by section offset in a
//! [`TypeBuilder`]; [`TypeBuilder::finish`] resolves the references into
//! [`TypeId`]s and computes every size once, giving the [`TypeTable`] the
//! queries use. Type graphs are followed at most [`MAX_TYPE_DEPTH`] deep, so
//! a malformed (cyclic) graph cannot hang a query.

use std::collections::HashMap;

use gimli::{AttributeValue, EntriesTreeNode, Operation};

use super::die::{decl_file, die_name, die_type, Cx, R};
use super::units::is_library_source;

/// Bound on type nesting followed by naming and size computation, so that a
/// malformed (cyclic) type graph cannot hang a query.
const MAX_TYPE_DEPTH: usize = 64;

/// Handle to a type described in the debug information of one
/// [`super::DebugVars`].
///
/// Only meaningful for the `DebugVars` it came from; use
/// [`super::DebugVars::type_name`] and [`super::DebugVars::type_size`] to inspect it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(u32);

impl TypeId {
    fn index(self) -> usize {
        self.0 as usize
    }
}

/// A type parsed from the debug information. `T` is how other types are
/// referred to: section offsets while loading, [`TypeId`]s afterwards.
#[derive(Clone, Debug)]
struct TypeData<T> {
    name: Option<String>,
    byte_size: Option<u64>,
    kind: Kind<T>,
}

#[derive(Clone, Debug)]
enum Kind<T> {
    Base,
    Pointer(Option<T>),
    Array {
        element: Option<T>,
        /// Extent of each dimension, outermost first; `None` if unknown.
        dims: Vec<Option<u64>>,
    },
    Record {
        union: bool,
        members: Vec<Member<T>>,
    },
    Enum,
    Typedef(Option<T>),
    Qualified(&'static str, Option<T>),
    Other,
}

#[derive(Clone, Debug)]
struct Member<T> {
    name: Option<String>,
    offset: u64,
    ty: Option<T>,
    /// A library's internals: a member that a type declared in a system
    /// header keeps private or protected (Boost's `table_`, nlohmann's
    /// `m_value`, Eigen's `m_outerIndex`). A path leaves it out, with all
    /// that follows it.
    internal: bool,
}

impl<T: Copy> Kind<T> {
    fn map<U>(&self, f: &impl Fn(T) -> Option<U>) -> Kind<U> {
        let g = |t: &Option<T>| t.and_then(f);
        match self {
            Kind::Base => Kind::Base,
            Kind::Pointer(t) => Kind::Pointer(g(t)),
            Kind::Array { element, dims } => Kind::Array {
                element: g(element),
                dims: dims.clone(),
            },
            Kind::Record { union, members } => Kind::Record {
                union: *union,
                members: members
                    .iter()
                    .map(|m| Member {
                        name: m.name.clone(),
                        offset: m.offset,
                        ty: g(&m.ty),
                        internal: m.internal,
                    })
                    .collect(),
            },
            Kind::Enum => Kind::Enum,
            Kind::Typedef(t) => Kind::Typedef(g(t)),
            Kind::Qualified(q, t) => Kind::Qualified(q, g(t)),
            Kind::Other => Kind::Other,
        }
    }
}

/// A resolved type: references are [`TypeId`]s and the size is computed.
#[derive(Clone, Debug)]
struct Type {
    name: Option<String>,
    size: u64,
    kind: Kind<TypeId>,
}

/// The types of one object while loading: still referring to each other by
/// `.debug_info` offset.
#[derive(Default)]
pub(super) struct TypeBuilder {
    types: Vec<TypeData<u64>>,
    /// `.debug_info` offset of a type DIE -> index in `types`.
    type_index: HashMap<u64, usize>,
}

impl TypeBuilder {
    /// Reads `entry` when it is a type without children that matter (base,
    /// pointer, typedef, qualifier, enum, function type); false when it is
    /// not a type of that kind.
    pub(super) fn simple<'d>(
        &mut self,
        u: Cx<'_, 'd>,
        entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
    ) -> gimli::Result<bool> {
        match simple_type(u, entry, entry.tag())? {
            Some(t) => {
                self.add_type(entry, u, t);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Records type `t` read from `entry`, under the entry's `.debug_info`
    /// offset.
    fn add_type<'d>(
        &mut self,
        entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
        u: Cx<'_, 'd>,
        t: TypeData<u64>,
    ) {
        if let Some(off) = entry.offset().to_debug_info_offset(&u.header) {
            self.type_index.insert(off.0 as u64, self.types.len());
            self.types.push(t);
        }
    }

    /// Reads a structure, union, class or array type and the types nested
    /// in it (members' anonymous structures, say).
    pub(super) fn record_or_array<'d>(
        &mut self,
        u: Cx<'_, 'd>,
        entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
        node: EntriesTreeNode<'_, '_, '_, R<'d>>,
    ) -> gimli::Result<()> {
        let tag = entry.tag();
        let name = die_name(u, entry)?;
        let byte_size = entry
            .attr_value(gimli::DW_AT_byte_size)?
            .and_then(|v| v.udata_value());
        let mut members = Vec::new();
        let mut dims = Vec::new();
        let library = decl_file(u, entry)?.is_some_and(|f| is_library_source(&f));
        // Members are private by default in a class, public in a
        // structure or union (DWARF 5, 5.7.6).
        let class = tag == gimli::DW_TAG_class_type;
        let mut children = node.children();
        while let Some(child) = children.next()? {
            let c = child.entry().clone();
            match c.tag() {
                // A base class is a member without a name, so that the
                // path goes on into its members (`x.coefs._M_impl._M_start`
                // through std::vector's bases). A virtual base's offset is
                // known only at run time: it is left out.
                gimli::DW_TAG_inheritance if c.attr_value(gimli::DW_AT_virtuality)?.is_none() => {
                    members.push(Member {
                        name: None,
                        offset: member_offset(u, &c)?,
                        ty: die_type(u, &c)?,
                        internal: false,
                    });
                }
                gimli::DW_TAG_member => {
                    let offset = member_offset(u, &c)?;
                    members.push(Member {
                        name: die_name(u, &c)?,
                        offset,
                        ty: die_type(u, &c)?,
                        internal: library && !is_public(&c, class)?,
                    });
                }
                gimli::DW_TAG_subrange_type => dims.push(subrange_count(&c)?),
                gimli::DW_TAG_structure_type
                | gimli::DW_TAG_union_type
                | gimli::DW_TAG_class_type
                | gimli::DW_TAG_array_type => self.record_or_array(u, &c, child)?,
                t => {
                    if let Some(td) = simple_type(u, &c, t)? {
                        self.add_type(&c, u, td);
                    }
                }
            }
        }
        let kind = if tag == gimli::DW_TAG_array_type {
            Kind::Array {
                element: die_type(u, entry)?,
                dims,
            }
        } else {
            Kind::Record {
                union: tag == gimli::DW_TAG_union_type,
                members,
            }
        };
        self.add_type(
            entry,
            u,
            TypeData {
                name,
                byte_size,
                kind,
            },
        );
        Ok(())
    }

    /// The id the type at `.debug_info` offset `off` will have in the
    /// finished table; `None` for offsets that are not a type read here.
    pub(super) fn id_of(&self, off: u64) -> Option<TypeId> {
        self.type_index.get(&off).map(|&i| TypeId(i as u32))
    }

    /// Resolves the references and computes every type's size.
    pub(super) fn finish(self) -> TypeTable {
        let resolve = |off: u64| self.id_of(off);
        let kinds: Vec<Kind<TypeId>> = self.types.iter().map(|t| t.kind.map(&resolve)).collect();
        let mut sizes: Vec<Option<u64>> = vec![None; kinds.len()];
        for i in 0..kinds.len() {
            compute_size(&self.types, &kinds, &mut sizes, i, 0);
        }
        let types = self
            .types
            .into_iter()
            .zip(kinds)
            .zip(&sizes)
            .map(|((t, kind), size)| Type {
                name: t.name,
                size: size.unwrap_or(0),
                kind,
            })
            .collect();
        TypeTable(types)
    }
}

/// Where [`TypeTable::append_path`] ended.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PathEnd {
    /// The scalar or pointer type the path ends at; `None` when it stops
    /// short of one.
    pub(super) leaf: Option<TypeId>,
    /// Where in the path a library's internals begin (the first member a
    /// system header's type keeps private or protected).
    pub(super) internal_at: Option<usize>,
}

/// All types of one object, indexed by [`TypeId`].
#[derive(Debug, Default)]
pub(super) struct TypeTable(Vec<Type>);

impl TypeTable {
    /// Appends to `out` the C element path of byte `offset` inside a value
    /// of type `ty`: `[3][4]`, `.nbins`, `.data[3].z`, nothing for scalars
    /// and pointers. Array indices are computed even past the declared
    /// bound, since an overrun is worth seeing; the path stops at a struct
    /// when the offset falls in padding, and a union names its first member
    /// covering the offset. Returns the scalar or pointer type the path
    /// ends at (`None` when it stops short of one: padding, an unknown
    /// type) and where in `out` a library's internals begin.
    pub(super) fn append_path(
        &self,
        mut ty: Option<TypeId>,
        mut offset: u64,
        out: &mut String,
    ) -> PathEnd {
        use std::fmt::Write;
        let mut end = PathEnd::default();
        for _ in 0..MAX_TYPE_DEPTH {
            let Some(id) = ty else {
                return end;
            };
            let t = &self.0[id.index()];
            match &t.kind {
                Kind::Typedef(target) | Kind::Qualified(_, target) => ty = *target,
                Kind::Array { element, dims } => {
                    let Some(strides) = self.strides(*element, dims) else {
                        return end;
                    };
                    for stride in strides {
                        let _ = write!(out, "[{}]", offset / stride);
                        offset %= stride;
                    }
                    ty = *element;
                }
                Kind::Record { members, .. } => {
                    // An empty class (an allocator base) has a size of 1
                    // but takes no bytes: it covers none.
                    let covering = |m: &&Member<TypeId>| {
                        let size = m.ty.map_or(0, |t| self.type_size(t)).max(1);
                        !m.ty.is_some_and(|t| self.empty_record(t))
                            && offset >= m.offset
                            && offset - m.offset < size
                    };
                    // Members overlap only in unions and bit fields: the
                    // first covering member is the one named.
                    let Some(m) = members.iter().find(covering) else {
                        return end;
                    };
                    if m.internal && end.internal_at.is_none() {
                        end.internal_at = Some(out.len());
                    }
                    if let Some(name) = &m.name {
                        out.push('.');
                        out.push_str(name);
                    }
                    offset -= m.offset;
                    ty = m.ty;
                }
                _ => {
                    end.leaf = Some(id);
                    return end;
                }
            }
        }
        end
    }

    /// When `ty` is a pointer (through typedefs and qualifiers) to a
    /// structure, union or class, that type as the program names it
    /// (`pcre2_match_data_8`, `struct node`). The type may be incomplete
    /// here (a library's opaque type, declared only in its public header):
    /// its name is looked up where it is complete.
    pub(super) fn pointee_record(&self, ty: TypeId) -> Option<String> {
        let Kind::Pointer(Some(target)) = self.0[self.strip(ty).index()].kind else {
            return None;
        };
        let t = &self.0[self.strip(target).index()];
        matches!(t.kind, Kind::Record { .. }).then(|| self.type_name(target))
    }

    /// Whether `ty` is a structure or class without members (an empty
    /// base such as `std::allocator`).
    fn empty_record(&self, ty: TypeId) -> bool {
        matches!(&self.0[self.strip(ty).index()].kind, Kind::Record { members, .. } if members.is_empty())
    }

    /// A structure, union or class type the program calls `name` (`struct
    /// node`, `node`, `P`, or a typedef of one), with a known size: for
    /// naming the members of heap blocks. Scans the types: ask once per
    /// allocation site.
    pub(super) fn type_named(&self, name: &str) -> Option<TypeId> {
        let bare = name
            .trim()
            .trim_start_matches("const ")
            .trim_start_matches("struct ")
            .trim_start_matches("union ")
            .trim_start_matches("class ")
            .trim();
        let bare = bare.rsplit("::").next().unwrap_or(bare);
        (0..self.0.len()).map(|i| TypeId(i as u32)).find(|&id| {
            let t = &self.0[id.index()];
            t.name.as_deref() == Some(bare)
                && t.size > 0
                && matches!(self.0[self.strip(id).index()].kind, Kind::Record { .. })
        })
    }

    /// The element path of byte `offset` of a heap block named `name`
    /// holding `block_size` bytes of `ty`: `ps[3].y` for an array of
    /// structures, `n.next` for a single one, and for a single one with
    /// trailing data (a block that is no whole number of `ty`).
    pub(super) fn heap_element(
        &self,
        name: &str,
        ty: TypeId,
        block_size: u64,
        offset: u64,
    ) -> super::ElementPath {
        use std::fmt::Write;
        let size = self.type_size(ty).max(1);
        let mut out = name.to_string();
        let mut off = offset;
        // A block of several elements is a whole number of them; one that
        // is not is a single structure with trailing data (a flexible
        // array member allocated past its declared bound).
        if block_size > size && block_size.is_multiple_of(size) {
            let _ = write!(out, "[{}]", offset / size);
            off = offset % size;
        }
        let end = self.append_path(Some(ty), off, &mut out);
        super::ElementPath {
            path: out,
            internal_at: end.internal_at,
        }
    }

    /// Byte stride of each dimension of an array, outermost first.
    fn strides(&self, element: Option<TypeId>, dims: &[Option<u64>]) -> Option<Vec<u64>> {
        let elem = self.type_size(element?);
        if elem == 0 || dims.is_empty() {
            return None;
        }
        let mut strides = vec![elem; dims.len()];
        for k in (0..dims.len() - 1).rev() {
            strides[k] = strides[k + 1].checked_mul(dims[k + 1]?)?;
            if strides[k] == 0 {
                return None;
            }
        }
        Some(strides)
    }

    /// When `ty` is an array (through typedefs and qualifiers, and with
    /// arrays of arrays flattened), its dimensions outermost first and the
    /// byte size of one element: `double[12][12]` gives `([12, 12], 8)`,
    /// `struct point[8]` gives `([8], 24)`. An unknown extent is 0.
    pub(super) fn array_shape(&self, ty: TypeId) -> Option<(Vec<u64>, u64)> {
        let mut ty = self.strip(ty);
        let mut all = Vec::new();
        for _ in 0..MAX_TYPE_DEPTH {
            match &self.0[ty.index()].kind {
                Kind::Array { element, dims } => {
                    all.extend(dims.iter().map(|d| d.unwrap_or(0)));
                    match element {
                        Some(e) => ty = self.strip(*e),
                        None => return Some((all, 0)),
                    }
                }
                _ => break,
            }
        }
        if all.is_empty() {
            None
        } else {
            Some((all, self.type_size(ty)))
        }
    }

    /// Follows typedefs and qualifiers down to the underlying type.
    fn strip(&self, mut ty: TypeId) -> TypeId {
        for _ in 0..MAX_TYPE_DEPTH {
            match self.0[ty.index()].kind {
                Kind::Typedef(Some(t)) | Kind::Qualified(_, Some(t)) => ty = t,
                _ => break,
            }
        }
        ty
    }

    /// Whether a value of type `ty` can be an address a register holds: a
    /// pointer or reference, or a record of a pointer's size (a smart
    /// pointer such as `std::unique_ptr`). Integers are not: a counter
    /// that happens to equal an address is no holder.
    pub(super) fn holds_address(&self, ty: TypeId) -> bool {
        let t = &self.0[self.strip(ty).index()];
        match t.kind {
            Kind::Pointer(_) => true,
            Kind::Record { union: false, .. } => t.size == 8,
            _ => false,
        }
    }

    /// Size in bytes of a type; 0 when unknown (void, incomplete types).
    pub(super) fn type_size(&self, ty: TypeId) -> u64 {
        self.0.get(ty.index()).map_or(0, |t| t.size)
    }

    /// The type written the C way, for display: `double[12][12]`,
    /// `struct hist`, `hist_t`, `const int`, `double *`.
    pub(super) fn type_name(&self, ty: TypeId) -> String {
        self.type_name_depth(Some(ty), 0)
    }

    fn type_name_depth(&self, ty: Option<TypeId>, depth: usize) -> String {
        let Some(ty) = ty else {
            return "void".to_owned();
        };
        if depth > MAX_TYPE_DEPTH {
            return "...".to_owned();
        }
        let t = &self.0[ty.index()];
        let named = |prefix: &str| match &t.name {
            Some(n) => format!("{prefix}{n}"),
            None => format!("{prefix}<anonymous>"),
        };
        match &t.kind {
            Kind::Base | Kind::Typedef(_) | Kind::Other => {
                t.name.clone().unwrap_or_else(|| "<unknown>".to_owned())
            }
            Kind::Pointer(target) => format!("{} *", self.type_name_depth(*target, depth + 1)),
            Kind::Array { element, dims } => {
                let mut s = self.type_name_depth(*element, depth + 1);
                // An array of arrays prints its dimensions in source order.
                let inner_dims = s.find('[').map(|i| s.split_off(i)).unwrap_or_default();
                for d in dims {
                    match d {
                        Some(n) => s.push_str(&format!("[{n}]")),
                        None => s.push_str("[]"),
                    }
                }
                s + &inner_dims
            }
            Kind::Record { union: true, .. } => named("union "),
            Kind::Record { union: false, .. } => named("struct "),
            Kind::Enum => named("enum "),
            Kind::Qualified(q, target) => {
                format!("{q} {}", self.type_name_depth(*target, depth + 1))
            }
        }
    }
}

/// Size of type `i`, memoised in `sizes`; arrays multiply their extents,
/// typedefs and qualifiers take their target's size.
fn compute_size(
    data: &[TypeData<u64>],
    kinds: &[Kind<TypeId>],
    sizes: &mut [Option<u64>],
    i: usize,
    depth: usize,
) -> u64 {
    if let Some(s) = sizes[i] {
        return s;
    }
    if let Some(s) = data[i].byte_size {
        sizes[i] = Some(s);
        return s;
    }
    if depth > MAX_TYPE_DEPTH {
        return 0;
    }
    let mut sub = |t: &Option<TypeId>| {
        t.map_or(0, |t| {
            compute_size(data, kinds, sizes, t.index(), depth + 1)
        })
    };
    let s = match &kinds[i] {
        Kind::Typedef(t) | Kind::Qualified(_, t) => sub(t),
        Kind::Array { element, dims } => {
            let elem = sub(element);
            dims.iter()
                .try_fold(elem, |acc, d| acc.checked_mul((*d)?))
                .unwrap_or(0)
        }
        _ => 0,
    };
    sizes[i] = Some(s);
    s
}

/// Types without children that matter: base, pointer, typedef, qualifier,
/// enum, and anything else that can be named (function types, void).
fn simple_type<'d>(
    u: Cx<'_, 'd>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
    tag: gimli::DwTag,
) -> gimli::Result<Option<TypeData<u64>>> {
    let target = || die_type(u, entry);
    let kind = match tag {
        gimli::DW_TAG_base_type => Kind::Base,
        gimli::DW_TAG_pointer_type
        | gimli::DW_TAG_reference_type
        | gimli::DW_TAG_rvalue_reference_type => Kind::Pointer(target()?),
        gimli::DW_TAG_typedef => Kind::Typedef(target()?),
        gimli::DW_TAG_const_type => Kind::Qualified("const", target()?),
        gimli::DW_TAG_volatile_type => Kind::Qualified("volatile", target()?),
        gimli::DW_TAG_restrict_type => Kind::Qualified("restrict", target()?),
        gimli::DW_TAG_atomic_type => Kind::Qualified("_Atomic", target()?),
        gimli::DW_TAG_enumeration_type => Kind::Enum,
        gimli::DW_TAG_subroutine_type | gimli::DW_TAG_unspecified_type => Kind::Other,
        _ => return Ok(None),
    };
    let mut byte_size = entry
        .attr_value(gimli::DW_AT_byte_size)?
        .and_then(|v| v.udata_value());
    if byte_size.is_none() && matches!(kind, Kind::Pointer(_)) {
        byte_size = Some(u64::from(u.encoding().address_size));
    }
    Ok(Some(TypeData {
        name: die_name(u, entry)?,
        byte_size,
        kind,
    }))
}

/// Whether member DIE `m` is public: by its `DW_AT_accessibility`, else
/// by the default of its type (private in a `class`).
fn is_public(
    m: &gimli::DebuggingInformationEntry<'_, '_, R<'_>>,
    in_class: bool,
) -> gimli::Result<bool> {
    Ok(match m.attr_value(gimli::DW_AT_accessibility)? {
        Some(AttributeValue::Accessibility(a)) => a == gimli::DW_ACCESS_public,
        _ => !in_class,
    })
}

/// Byte offset of a struct member: a constant (DWARF 3+), a
/// `DW_OP_plus_uconst` expression (DWARF 2), or from the bit offset of a
/// bit field. 0 for union members, which carry no location.
fn member_offset<'d>(
    u: Cx<'_, 'd>,
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<u64> {
    match entry.attr_value(gimli::DW_AT_data_member_location)? {
        Some(AttributeValue::Exprloc(e)) => {
            let mut ops = e.operations(u.encoding());
            if let Some(Operation::PlusConstant { value }) = ops.next()? {
                return Ok(value);
            }
            Ok(0)
        }
        Some(v) => Ok(v.udata_value().unwrap_or(0)),
        None => Ok(entry
            .attr_value(gimli::DW_AT_data_bit_offset)?
            .and_then(|v| v.udata_value())
            .map_or(0, |bits| bits / 8)),
    }
}

/// Number of elements of one array dimension; `None` when not a constant
/// (variable-length arrays) or absent (`int a[]`).
fn subrange_count<'d>(
    entry: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
) -> gimli::Result<Option<u64>> {
    if let Some(v) = entry.attr_value(gimli::DW_AT_count)? {
        return Ok(v.udata_value());
    }
    let Some(upper) = entry.attr_value(gimli::DW_AT_upper_bound)? else {
        return Ok(None);
    };
    let upper: i128 = match upper {
        AttributeValue::Sdata(s) => i128::from(s),
        v => match v.udata_value() {
            Some(u64::MAX) => -1,
            Some(x) => i128::from(x),
            None => return Ok(None),
        },
    };
    let lower = entry
        .attr_value(gimli::DW_AT_lower_bound)?
        .and_then(|v| v.sdata_value())
        .unwrap_or(0);
    Ok(u64::try_from((upper - i128::from(lower) + 1).max(0)).ok())
}
