//! The model of an analysis: the variables (heap blocks, stack
//! variables, globals) accesses are named by, where they lie, the heap
//! allocations, and what the trace said about itself.
//!
//! This is the bottom layer of the analysis stage: the naming inputs, the
//! dataset, the derived tables and the locality analyses all speak these
//! types, and this module imports none of them.
use polars::prelude::*;

use crate::trace::naming::Scope;

use super::access::VarId;
use super::schema::variable as va;

/// One named block: a heap block instance, a stack variable in one frame,
/// or a global.
#[derive(Clone, Debug)]
pub struct Variable {
    /// Unique display name (`arr`, `rows[i]#2`, `u`).
    pub name: String,
    /// Name without instance suffix.
    pub base_name: String,
    /// Heap, stack or global.
    pub scope: Scope,
    /// Runtime start address.
    pub base: u64,
    /// Size in bytes.
    pub size: u64,
    /// Element size, 0 when unknown.
    pub elem_size: u32,
    /// Dimensions, outermost first, empty when unknown.
    pub dims: Vec<u64>,
    /// Allocation site for heap blocks (`file.c:LINE`).
    pub site: String,
    /// Element type of a heap block as the source writes it (`struct
    /// node`), empty when unknown.
    pub elem_type: String,
    /// Time (accesses before) of allocation, for heap blocks.
    pub alloc_time: Option<u64>,
    /// Time of free, for heap blocks that were freed.
    pub free_time: Option<u64>,
    /// Not user data (client-request block, unnamed frame slot).
    pub internal: bool,
    /// Frame slots of one function (`<main frame>`: return address, saved
    /// registers, spills), not a variable: left out of the default
    /// statistics, with a note.
    pub frame_slot: bool,
    /// Time of the first and last access, if it was accessed.
    pub accessed: Option<(u64, u64)>,
    /// Lowest and highest byte address its accesses touched, if it was
    /// accessed (`None` too in analyses saved before this was kept). With
    /// the lookup table it tells the figures the spans of a variable's
    /// accesses without a pass over them.
    pub bytes: Option<(u64, u64)>,
    /// Threads that accessed it, ascending.
    pub threads: Vec<u32>,
    /// The function a stack variable belongs to, empty otherwise (and in
    /// saved analyses, whose `base_name` already holds the qualification
    /// it led to).
    pub function: String,
    /// Every member of one element of a structure type (an array of
    /// structures, or a single structure), in offset order, as the
    /// program's debug information lays it out: touched or not, so that a
    /// figure can show the bytes a region never used. Bytes no member
    /// covers are padding. Empty when unknown: not a structure, no debug
    /// type, an element larger than 4096 bytes (`MAX_LAYOUT_BYTES` of the
    /// fields module), or an analysis read back from files.
    pub layout: Vec<LayoutField>,
    /// For a heap block shown under the name of the object that owns it
    /// (the row `x` for the buffer of `x.coefs`, when that is the only
    /// heap memory `x` reaches): the full path, which `set_heap_grouping
    /// instances` shows. Empty otherwise.
    pub path: String,
}

/// One member of a structure's layout ([`Variable::layout`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutField {
    /// Byte offset within one element.
    pub offset: u64,
    /// Bytes it spans.
    pub size: u64,
    /// Member path below the element (`x`, `pos.y`, `v[2]`).
    pub name: String,
}

impl Variable {
    /// For a heap block shown under the name of the object that owns it,
    /// its own full path with this block's instance suffix (`x.coefs`,
    /// `x.coefs#2` for the rows `x`, `x#2`): what `set_heap_grouping
    /// instances` and the figures' hover show. `None` for every other
    /// variable.
    pub fn full_path(&self) -> Option<String> {
        if self.path.is_empty() {
            return None;
        }
        let suffix = self
            .name
            .strip_prefix(self.base_name.as_str())
            .unwrap_or("");
        Some(format!("{}{suffix}", self.path))
    }

    /// The dimensions as the tables write them: `12x12`, empty when
    /// unknown.
    pub fn dims_text(&self) -> String {
        self.dims
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("x")
    }

    /// A variable with only its name and scope known.
    pub(crate) fn new(name: String, scope: Scope) -> Variable {
        Variable {
            base_name: name.clone(),
            name,
            scope,
            base: 0,
            size: 0,
            elem_size: 0,
            dims: vec![],
            site: String::new(),
            elem_type: String::new(),
            alloc_time: None,
            free_time: None,
            internal: false,
            frame_slot: false,
            function: String::new(),
            accessed: None,
            bytes: None,
            threads: vec![],
            layout: vec![],
            path: String::new(),
        }
    }
}

/// Most region starts an analysis keeps (see
/// [`TraceSummary::region_starts`]): a function called a million times has
/// as many regions, and no figure could draw their marks.
pub const MAX_REGION_STARTS: usize = 1001;

/// What the trace said about itself.
#[derive(Clone, Debug, Default)]
pub struct TraceSummary {
    /// The traced command line.
    pub command: Vec<String>,
    /// Accesses read.
    pub accesses: u64,
    /// Regions seen.
    pub regions: u32,
    /// What the regions are, as the trace's header says: `pins` (GL_START
    /// to GL_STOP), `whole` (the whole run), or a region by code
    /// (`function kernel, calls all`, then how often it was entered:
    /// `function kernel, calls all (entered 5 times, 5 traced)`); empty
    /// when the trace or the saved analysis does not say.
    pub scope: String,
    /// The access-order time at which each region began, the first
    /// [`MAX_REGION_STARTS`] of them: the figures mark where the run went
    /// on untraced between regions.
    pub region_starts: Vec<u64>,
    /// Heap allocations seen (whole run).
    pub allocations: u64,
    /// Frees seen (whole run).
    pub frees: u64,
    /// Threads that made accesses.
    pub threads: Vec<u32>,
    /// Whether the footer was read.
    pub complete: bool,
    /// Why the analysis covers only part of the run, when it does: the
    /// trace ends before its footer, the program was ended by a signal, or
    /// the analysis was interrupted. Every report and figure of a partial
    /// analysis says so (see [`TraceSummary::partial_reason`]).
    pub partial: Option<String>,
    /// Tool warnings and reader notes.
    pub notes: Vec<String>,
    /// Notes on heap blocks of allocation sites none of whose blocks the
    /// region touched (a C++ program's string constants built before
    /// GL_START): true, but not about the region, so they are not printed
    /// with the analysis; `notes` lists them after the others.
    pub outside_notes: Vec<String>,
    /// Which analysis this is: set by the shell when the analysis is made
    /// (see [`crate::workdir::new_analysis_id`]), saved in `summary.json`
    /// and recorded in every figure drawn from it, so that figures of an
    /// earlier analysis are marked stale. Empty for an analysis saved
    /// before ids were kept.
    pub analysis_id: String,
}

impl TraceSummary {
    /// What a table's `trace` column says of this analysis: `complete`, or
    /// `PARTIAL: REASON`.
    pub fn trace_state(&self) -> String {
        match self.partial_reason() {
            None => "complete".to_string(),
            Some(why) => format!("PARTIAL: {why}"),
        }
    }

    /// Why the analysis is partial, or `None` when it covers the whole
    /// region. A trace read without its footer is partial even when no
    /// reason was recorded (an analysis saved before reasons were kept).
    pub fn partial_reason(&self) -> Option<String> {
        match (&self.partial, self.complete) {
            (Some(r), _) => Some(r.clone()),
            (None, false) => Some("the trace or its analysis was cut short".into()),
            (None, true) => None,
        }
    }

    /// The region in words, for a page's provenance: `the whole run`,
    /// `pins (GL_START to GL_STOP)`, `function kernel, call 3 (entered 12
    /// times, 1 traced)`; `None` when the trace did not say.
    pub fn region_text(&self) -> Option<String> {
        match self.scope.as_str() {
            "" => None,
            "whole" => Some("the whole run".into()),
            "pins" => Some("pins (GL_START to GL_STOP)".into()),
            other => Some(other.to_string()),
        }
    }

    /// The region as asked, without how often its code was entered or
    /// how many windows the run had: two analyses of the same region
    /// compare equal.
    pub fn region_asked(&self) -> &str {
        self.scope
            .split_once(" (")
            .map_or(self.scope.as_str(), |(asked, _)| asked)
    }

    /// Adds to a region by code's scope how often its code was entered,
    /// from the tool's `entered N, traced M`; the text is kept as a note
    /// when it does not read so.
    pub fn note_region_entries(&mut self, text: &str) {
        let count = |key: &str| {
            text.split(", ")
                .find_map(|part| part.strip_prefix(key)?.trim().parse::<u64>().ok())
        };
        if let (Some(n), Some(short), Some(run)) =
            (count("windows "), count("short "), count("run "))
        {
            let cut = match short {
                0 => String::new(),
                s => format!(", the last cut short by the run's end {s} accesses early"),
            };
            let windows = if n == 1 { "window" } else { "windows" };
            self.scope = format!(
                "{} ({n} {windows}{cut}; the run made {run} accesses)",
                self.scope
            );
            return;
        }
        match (count("entered "), count("traced ")) {
            (Some(n), Some(m)) => {
                let entered = match n {
                    1 => "entered once".to_string(),
                    n => format!("entered {n} times"),
                };
                self.scope = format!("{} ({entered}, {m} traced)", self.scope);
            }
            _ => self.notes.push(format!("the tool reported: {text}")),
        }
    }

    /// Records why the analysis is partial; the first reason stays.
    pub fn mark_partial(&mut self, reason: impl Into<String>) {
        if self.partial.is_none() {
            self.partial = Some(reason.into());
        }
    }
}

/// A heap block as the input reports it, before it has a variable row.
#[derive(Clone, Debug)]
pub(crate) struct NewBlock {
    /// Start address.
    pub(crate) addr: u64,
    /// Size in bytes.
    pub(crate) size: u64,
    /// Allocator name.
    pub(crate) kind: &'static str,
    /// Allocating thread.
    pub(crate) tid: u32,
    /// Time of allocation.
    pub(crate) alloc_time: u64,
    /// Heap for heap and mapped blocks; stack for variable-length arrays
    /// and `alloca` blocks.
    pub(crate) scope: Scope,
}

/// A heap allocation, for the allocation-info file.
#[derive(Clone, Debug)]
pub struct Allocation {
    /// Start address.
    pub addr: u64,
    /// Size in bytes.
    pub size: u64,
    /// Variable row of the block.
    pub var: VarId,
    /// Allocator name.
    pub kind: &'static str,
    /// Allocating thread.
    pub tid: u32,
    /// Time of allocation.
    pub alloc_time: u64,
    /// Time of free, if freed.
    pub free_time: Option<u64>,
}

/// Where a variable lies, as its input knows it when the variable is
/// first accessed: what the consumers that index by address need.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    /// Start address.
    pub(crate) base: u64,
    /// Size in bytes; 0 when not known yet (a Gleipnir stack variable's
    /// extent grows as the trace is read).
    pub(crate) size: u64,
    /// Element size in bytes; 0 when unknown.
    pub(crate) elem: u64,
}

/// A column that owns `v`'s buffer (`Column::new` would copy it).
pub(crate) fn owned<T: PolarsNumericType>(name: &str, v: Vec<T::Native>) -> Column {
    ChunkedArray::<T>::from_vec(name.into(), v)
        .into_series()
        .into()
}

/// The variable table of [`super::schema`] for these variables.
pub fn variable_table(vars: &[Variable]) -> PolarsResult<DataFrame> {
    DataFrame::new(vec![
        Column::new(va::VAR.into(), (0..vars.len() as u32).collect::<Vec<_>>()),
        Column::new(
            va::NAME.into(),
            vars.iter().map(|v| v.name.clone()).collect::<Vec<_>>(),
        ),
        Column::new(
            va::SCOPE.into(),
            vars.iter()
                .map(|v| v.scope.code().to_string())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            va::BASE.into(),
            vars.iter().map(|v| v.base).collect::<Vec<_>>(),
        ),
        Column::new(
            va::SIZE.into(),
            vars.iter().map(|v| v.size).collect::<Vec<_>>(),
        ),
        Column::new(
            va::ELEM_SIZE.into(),
            vars.iter().map(|v| v.elem_size).collect::<Vec<_>>(),
        ),
        Column::new(
            va::DIMS.into(),
            vars.iter().map(Variable::dims_text).collect::<Vec<_>>(),
        ),
        Column::new(
            va::PATH.into(),
            vars.iter()
                .map(|v| v.full_path().unwrap_or_default())
                .collect::<Vec<_>>(),
        ),
    ])
}

/// Largest structure whose layout the analysis reads byte by byte from the
/// debug information (one name lookup per byte, once per variable or heap
/// element type); larger ones are drawn by the fields touched.
pub const MAX_LAYOUT_BYTES: u64 = 4096;

/// Most members a layout may have (inner arrays count an element each);
/// beyond this a table of one column per member is unreadable, and the
/// figure falls back to the fields touched.
pub const MAX_LAYOUT_FIELDS: usize = 256;

/// The layout of one element from the member path at each of its bytes
/// (`None` where no member covers the byte): one field per run of bytes
/// with the same path. `None` when no byte has a member, or there are
/// more than [`MAX_LAYOUT_FIELDS`] members.
pub(crate) fn layout_of(paths: &[Option<String>]) -> Option<Vec<LayoutField>> {
    let mut out: Vec<LayoutField> = Vec::new();
    for (off, p) in paths.iter().enumerate() {
        let Some(name) = p else { continue };
        match out.last_mut() {
            Some(f) if f.name == *name && f.offset + f.size == off as u64 => f.size += 1,
            _ => out.push(LayoutField {
                offset: off as u64,
                size: 1,
                name: name.clone(),
            }),
        }
    }
    (!out.is_empty() && out.len() <= MAX_LAYOUT_FIELDS).then_some(out)
}

/// The member path of an element path of variable `name`: `x` of
/// `ps[3].x`, `pos.y` of `hp[0].pos.y`, `nbins` of `h.nbins`; `None` for
/// the element itself (`ps[3]`, a byte of padding) or another variable.
pub(crate) fn member_after<'e>(element: &'e str, name: &str) -> Option<&'e str> {
    let mut rest = element.strip_prefix(name)?;
    while rest.starts_with('[') {
        rest = &rest[rest.find(']')? + 1..];
    }
    rest.strip_prefix('.').filter(|m| !m.is_empty())
}

/// Which memory kinds an analysis shows (`set_mem_alloc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MemKind {
    /// Heap blocks only (`H`).
    Heap,
    /// Stack only (`S`), the original's default.
    #[default]
    Stack,
    /// Globals and statics only (`G`).
    Global,
    /// Everything (`all`).
    All,
}

impl MemKind {
    /// Parses `H`, `S`, `G` or `all` (case-insensitive).
    pub fn parse(s: &str) -> Option<MemKind> {
        match s.to_ascii_lowercase().as_str() {
            "h" | "heap" => Some(MemKind::Heap),
            "s" | "stack" => Some(MemKind::Stack),
            "g" | "global" | "globals" => Some(MemKind::Global),
            "all" | "a" => Some(MemKind::All),
            _ => None,
        }
    }

    /// The code the user types.
    pub fn code(self) -> &'static str {
        match self {
            MemKind::Heap => "H",
            MemKind::Stack => "S",
            MemKind::Global => "G",
            MemKind::All => "all",
        }
    }

    /// Whether variables of this scope are shown.
    pub fn includes(self, scope: Scope) -> bool {
        match self {
            MemKind::All => true,
            MemKind::Heap => scope == Scope::Heap,
            MemKind::Stack => scope == Scope::Stack,
            MemKind::Global => scope == Scope::Global,
        }
    }
}

/// Whether variable `v` is shown for this kind: of a chosen scope and user
/// data (Valgrind's client-request block is left out).
pub fn shows(kind: MemKind, v: &Variable) -> bool {
    kind.includes(v.scope) && !v.internal
}

impl MemKind {
    /// Whether variable `v` is shown for this kind (see [`shows`]).
    pub fn shows(self, v: &Variable) -> bool {
        shows(self, v)
    }
}
