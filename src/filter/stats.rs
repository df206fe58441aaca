//! Statistics of an analysis: per variable and per address.
//!
//! Both come from the lookup table of unique locations that the analysis
//! built while it streamed the trace, so they cost a pass over the
//! locations, never over the accesses (unlike the original's quadratic
//! lookup-table scan).
use polars::prelude::*;

use super::access::VarId;
use super::analysis::Analysis;
use super::schema::location as lc;
use super::{model::shows, model::MemKind};
use crate::trace::naming::{element_path, push_element_path, Scope};
use std::collections::{HashMap, HashSet};

/// How heap blocks, and the instances of a local, are shown in the
/// statistics and figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Grouping {
    /// The blocks of one name make one row, wherever they were allocated:
    /// the blocks reached from one root (`net->w1[i]`, a list's nodes held
    /// by its head), named by where the program keeps their addresses
    /// (docs/naming.md). The instances of one local variable make one row,
    /// as under [`Grouping::BySite`].
    #[default]
    Root,
    /// The blocks allocated at one site under one name (a list's nodes,
    /// `n` allocated 200 times at `list.c:11`) make one row. Blocks whose
    /// name is an element of something (`rows[i]`) are distinct arrays and
    /// keep a row each. Likewise the instances of one local variable, one
    /// per frame it lived in (a recursion's `x#1` ... `x#100000`), make
    /// one row `x`.
    BySite,
    /// One row per block and per instance: `n#1` ... `n#200`, `x#1` ...
    Instances,
}

impl Grouping {
    /// Parses `root`, `site` or `instances`.
    pub fn parse(s: &str) -> Option<Grouping> {
        match s {
            "root" => Some(Grouping::Root),
            "site" => Some(Grouping::BySite),
            "instances" => Some(Grouping::Instances),
            _ => None,
        }
    }
}

/// The rows variables are shown in under a [`Grouping`].
#[derive(Clone, Debug, Default)]
pub struct DisplayRows {
    /// Per variable: its row.
    pub row_of: Vec<u32>,
    /// Per row: its display name (`n`, `arr`, `u`, `v#2`).
    pub names: Vec<String>,
    /// Per row: its variables.
    pub members: Vec<Vec<VarId>>,
}

/// What variables of one row share under `grouping`: under
/// [`Grouping::BySite`] the scope, the base name and, for heap blocks, the
/// allocation site; under [`Grouping::Root`] heap blocks share the base
/// name alone, wherever they were allocated. `None` for a variable that
/// keeps a row of its own: under `site` a block named as an element of
/// something (`rows[i]`) or of unknown site; always frame slots, blocks on
/// the stack (`alloca`, variable-length arrays) and the pins' own block.
fn group_key(var: &super::model::Variable, grouping: Grouping) -> Option<(Scope, &str, &str)> {
    let named = !var.base_name.is_empty();
    let key = (var.scope, var.base_name.as_str(), var.site.as_str());
    match var.scope {
        Scope::Heap if grouping == Grouping::Root => (named
            && var.alloc_time.is_some()
            && !var.internal)
            .then_some((var.scope, var.base_name.as_str(), "")),
        Scope::Heap => {
            (named && !var.base_name.contains('[') && !var.site.is_empty() && var.site != "?")
                .then_some(key)
        }
        Scope::Stack => (named && !var.internal && !var.frame_slot && var.alloc_time.is_none())
            .then_some((var.scope, var.base_name.as_str(), "")),
        Scope::Global => None,
    }
}

/// Groups the variables of `a` into rows. Cost: one pass over the
/// variables and a hash probe per heap block and stack variable.
pub fn display_rows(a: &Analysis, grouping: Grouping) -> DisplayRows {
    let mut rows = DisplayRows::default();
    let mut by_key: HashMap<(Scope, &str, &str), u32> = Default::default();
    for (v, var) in a.vars.iter().enumerate() {
        let key = (grouping != Grouping::Instances)
            .then(|| group_key(var, grouping))
            .flatten();
        if let Some(&r) = key.as_ref().and_then(|k| by_key.get(k)) {
            rows.row_of.push(r);
            rows.members[r as usize].push(VarId(v as u32));
            continue;
        }
        let r = rows.names.len() as u32;
        if let Some(k) = key {
            by_key.insert(k, r);
        }
        rows.row_of.push(r);
        rows.names.push(if grouping == Grouping::Instances {
            var.full_path().unwrap_or_else(|| var.name.clone())
        } else {
            var.name.clone()
        });
        rows.members.push(vec![VarId(v as u32)]);
    }
    name_groups(a, &mut rows);
    rows
}

/// Names the rows of [`display_rows`] that group several variables.
///
/// A group of heap blocks takes the plain name, qualified by its site when
/// another heap row or group has that name. It keeps the plain name
/// against a stack or global variable of that name, which is qualified by
/// its scope (`n@S`), as the analysis does for single blocks. A group of a
/// local's instances takes the local's name, qualified by its scope
/// (`x@S`) when a heap block or global has that name, again as the
/// analysis names single variables. Cost: a pass over the rows.
fn name_groups(a: &Analysis, rows: &mut DisplayRows) {
    let first = |m: &Vec<VarId>| &a.vars[m[0].index()];
    let heap_group = |m: &Vec<VarId>| m.len() > 1 && first(m).scope == Scope::Heap;
    let mut heap_groups_named: HashMap<&str, u32> = Default::default();
    let mut single_heap: HashSet<&str> = Default::default();
    for (m, n) in rows.members.iter().zip(&rows.names) {
        if heap_group(m) {
            *heap_groups_named
                .entry(first(m).base_name.as_str())
                .or_default() += 1;
        } else if m.len() == 1 && first(m).scope == Scope::Heap {
            single_heap.insert(n.as_str());
        }
    }
    let mut group_names: HashSet<String> = Default::default();
    let mut heap_names: Vec<(usize, String)> = Vec::new();
    for (r, m) in rows
        .members
        .iter()
        .enumerate()
        .filter(|(_, m)| heap_group(m))
    {
        let v = first(m);
        let name = if single_heap.contains(v.base_name.as_str())
            || heap_groups_named[v.base_name.as_str()] > 1
        {
            format!("{} ({})", v.base_name, v.site)
        } else {
            group_names.insert(v.base_name.clone());
            v.base_name.clone()
        };
        heap_names.push((r, name));
    }
    for (r, name) in heap_names {
        rows.names[r] = name;
    }
    // Names a local's group cannot take: every row's but its own group's.
    let taken: HashSet<String> = rows
        .members
        .iter()
        .zip(&rows.names)
        .filter(|(m, _)| !(m.len() > 1 && first(m).scope == Scope::Stack))
        .map(|(_, n)| n.clone())
        .collect();
    for r in 0..rows.members.len() {
        let m = &rows.members[r];
        let v = first(m);
        if m.len() > 1 && v.scope == Scope::Stack {
            rows.names[r] = if taken.contains(&v.base_name) {
                format!("{}@{}", v.base_name, v.scope.code())
            } else {
                v.base_name.clone()
            };
        } else if m.len() == 1 && v.scope != Scope::Heap && group_names.contains(&rows.names[r]) {
            rows.names[r] = format!("{}@{}", rows.names[r], v.scope.code());
        }
    }
}

/// Columns of [`per_variable`], in order.
pub const VARIABLE_COLUMNS: [&str; 14] = [
    "variable",
    "scope",
    "accesses",
    "loads",
    "stores",
    "modifies",
    "load_bytes",
    "store_bytes",
    "addresses",
    "first_access",
    "last_access",
    "threads",
    "blocks",
    "site",
];

/// Columns of [`per_address`], in order (the original's lookup table, plus
/// the element).
pub const ADDRESS_COLUMNS: [&str; 7] = [
    "index",
    "appearance_count",
    "address",
    "bytes_stored",
    "bytes_loaded",
    "variable",
    "element",
];

/// Per variable row: whether it is shown for `kind`.
pub(crate) fn shown_vars(a: &Analysis, kind: MemKind) -> Vec<bool> {
    a.vars.iter().map(|v| shows(kind, v)).collect()
}

/// Calls `f` with the lookup table's rows of the variables `keep` holds, a
/// batch at a time (address order), until it says to stop (false).
/// Memory: one batch. Ctrl-C stops it (a polars error, which
/// `crate::cancel::requested` tells from others).
fn kept_locations(
    a: &Analysis,
    keep: &[bool],
    f: &mut dyn FnMut(&DataFrame) -> PolarsResult<bool>,
) -> PolarsResult<()> {
    a.locations
        .for_each_batch(&mut |df| {
            let mask: BooleanChunked = df
                .column(lc::VAR)?
                .u32()?
                .into_iter()
                .map(|v| v.map(|v| keep.get(v as usize).copied().unwrap_or(false)))
                .collect();
            Ok(f(&df.filter(&mask)?)?)
        })
        .map_err(|e| match e {
            super::error::FilterError::Table(e) => e,
            e => PolarsError::ComputeError(e.to_string().into()),
        })
}

/// Distinct addresses per display row, over the variables `keep` holds.
/// Rows of one variable, and groups whose members' address spans do not
/// overlap, sum their members' locations; a group whose blocks reused
/// each other's addresses (a block freed, another allocated there) is
/// counted in one pass over the lookup table, where one address' rows are
/// next to each other. Memory: a count per row.
fn addresses_per_row(a: &Analysis, rows: &DisplayRows, keep: &[bool]) -> PolarsResult<Vec<u64>> {
    let kept = |v: &VarId| keep.get(v.index()).copied().unwrap_or(false);
    let mut out = vec![0u64; rows.names.len()];
    let mut overlapping = vec![false; rows.names.len()];
    for (r, members) in rows.members.iter().enumerate() {
        let mut spans: Vec<(u64, u64)> = Vec::new();
        for v in members.iter().filter(|v| kept(v)) {
            let t = a.locations.totals(v.index());
            if t.locations > 0 {
                out[r] += t.locations;
                spans.push((t.lowest, t.highest));
            }
        }
        spans.sort_unstable();
        overlapping[r] = spans.windows(2).any(|w| w[1].0 <= w[0].1);
    }
    if !overlapping.iter().any(|&o| o) {
        return Ok(out);
    }
    let recount: Vec<bool> = (0..a.vars.len())
        .map(|v| keep.get(v).copied().unwrap_or(false) && overlapping[rows.row_of[v] as usize])
        .collect();
    for (r, o) in overlapping.iter().enumerate() {
        if *o {
            out[r] = 0;
        }
    }
    let (mut at, mut seen) = (None::<u64>, Vec::<u32>::new());
    kept_locations(a, &recount, &mut |df| {
        let addr = df.column(lc::ADDR)?.u64()?;
        let var = df.column(lc::VAR)?.u32()?;
        for (x, v) in addr.into_no_null_iter().zip(var.into_no_null_iter()) {
            if at != Some(x) {
                at = Some(x);
                seen.clear();
            }
            let r = rows.row_of[v as usize];
            if !seen.contains(&r) {
                seen.push(r);
                out[r as usize] += 1;
            }
        }
        Ok(true)
    })?;
    Ok(out)
}

/// Per-variable statistics, one row per variable shown for `kind` with at
/// least one access, heap blocks grouped by allocation site
/// ([`Grouping::BySite`]); see [`per_variable_by`].
pub fn per_variable(a: &Analysis, kind: MemKind) -> PolarsResult<DataFrame> {
    per_variable_by(a, kind, Grouping::BySite)
}

/// Per-variable statistics under a grouping.
///
/// Columns: `variable, scope, accesses, loads, stores, modifies, load_bytes,
/// store_bytes, addresses, first_access, last_access, threads, blocks,
/// site`, sorted by first access. A modify counts in both `load_bytes` and
/// `store_bytes`; `addresses` counts distinct addresses; `blocks` is the
/// number of heap blocks in the row (0 for stack and globals) and `site`
/// their allocation site.
pub fn per_variable_by(a: &Analysis, kind: MemKind, grouping: Grouping) -> PolarsResult<DataFrame> {
    let rows = display_rows(a, grouping);
    let keep = shown_vars(a, kind);
    let addresses = addresses_per_row(a, &rows, &keep)?;
    let mut sums: Vec<[u64; 6]> = vec![[0; 6]; rows.names.len()];
    for (v, &k) in keep.iter().enumerate() {
        let t = a.locations.totals(v);
        if !k || t.locations == 0 {
            continue;
        }
        let s = &mut sums[rows.row_of[v] as usize];
        for (x, y) in s.iter_mut().zip(t.counts()) {
            *x += y;
        }
    }
    let ids: Vec<u32> = (0..rows.names.len() as u32)
        .filter(|&r| addresses[r as usize] > 0)
        .collect();
    let sum = |k: usize| {
        ids.iter()
            .map(|&r| sums[r as usize][k])
            .collect::<Vec<u64>>()
    };
    let agg = DataFrame::new(vec![
        Column::new(lc::ACCESSES.into(), sum(0)),
        Column::new(lc::LOADS.into(), sum(1)),
        Column::new(lc::STORES.into(), sum(2)),
        Column::new(lc::MODIFIES.into(), sum(3)),
        Column::new(lc::LOAD_BYTES.into(), sum(4)),
        Column::new(lc::STORE_BYTES.into(), sum(5)),
        Column::new(
            "addresses".into(),
            ids.iter()
                .map(|&r| addresses[r as usize])
                .collect::<Vec<u64>>(),
        ),
    ])?;
    let members = |r: u32| rows.members[r as usize].iter().map(|&v| &a.vars[v.index()]);
    // First and last access of each row: the span over its members'.
    let (first, last): (Vec<u64>, Vec<u64>) = ids
        .iter()
        .map(|&r| {
            members(r)
                .filter_map(|v| v.accessed)
                .reduce(|(f, l), (f2, l2)| (f.min(f2), l.max(l2)))
                .unwrap_or((0, 0))
        })
        .unzip();
    let threads: Vec<u64> = ids
        .iter()
        .map(|&r| {
            let mut t: Vec<u32> = members(r).flat_map(|v| v.threads.iter().copied()).collect();
            t.sort_unstable();
            t.dedup();
            t.len() as u64
        })
        .collect();
    let heap = |v: &super::model::Variable| v.scope == Scope::Heap;
    let blocks: Vec<u64> = ids
        .iter()
        .map(|&r| members(r).filter(|v| heap(v)).count() as u64)
        .collect();
    let sites: Vec<String> = ids
        .iter()
        .map(|&r| {
            members(r)
                .next()
                .map(|v| v.site.clone())
                .unwrap_or_default()
        })
        .collect();
    let scopes: Vec<&str> = ids
        .iter()
        .map(|&r| members(r).next().map_or("?", |v| v.scope.code()))
        .collect();
    let names: Vec<String> = ids
        .iter()
        .map(|&r| rows.names[r as usize].clone())
        .collect();
    let mut out = agg;
    out.insert_column(0, Column::new("variable".into(), names))?;
    out.insert_column(1, Column::new("scope".into(), scopes))?;
    out.with_column(Column::new("first_access".into(), first))?;
    out.with_column(Column::new("last_access".into(), last))?;
    out.with_column(Column::new("threads".into(), threads))?;
    out.with_column(Column::new("blocks".into(), blocks))?;
    out.with_column(Column::new("site".into(), sites))?;
    out.select(VARIABLE_COLUMNS)?
        .sort(["first_access"], Default::default())
}

/// The fields of the heap rows that group several blocks (`n`, 200 blocks
/// from one site), summed over the blocks: the rows of [`per_element`]
/// whose variable has more than one block, in its columns.
pub fn grouped_fields(a: &Analysis, kind: MemKind, grouping: Grouping) -> PolarsResult<DataFrame> {
    let rows = display_rows(a, grouping);
    let heap = |m: &Vec<VarId>| {
        m.iter()
            .filter(|v| a.vars[v.index()].scope == Scope::Heap)
            .count()
            > 1
    };
    let grouped: Vec<bool> = rows.members.iter().map(heap).collect();
    let keep: Vec<bool> = shown_vars(a, kind)
        .into_iter()
        .enumerate()
        .map(|(v, k)| k && grouped[rows.row_of[v] as usize])
        .collect();
    elements_of(a, &rows, &keep)
}

/// Per element of the rows shown for `kind`: the fields of grouped heap
/// blocks summed over the blocks (`n.val`, `n.next`), array elements
/// (`X[3]`) and members (`h.nbins`). Columns: `variable, element, accesses,
/// load_bytes, store_bytes, addresses`, sorted by variable then element.
/// Memory: a row per element, which for an array is a row per address:
/// for small analyses and tests.
pub fn per_element(a: &Analysis, kind: MemKind, grouping: Grouping) -> PolarsResult<DataFrame> {
    let rows = display_rows(a, grouping);
    elements_of(a, &rows, &shown_vars(a, kind))
}

/// [`per_element`] over the variables `keep` holds. Cost: one pass over
/// the lookup table, a batch at a time; memory: a row per element met.
fn elements_of(a: &Analysis, rows: &DisplayRows, keep: &[bool]) -> PolarsResult<DataFrame> {
    // (row, element) -> accesses, load bytes, store bytes, addresses.
    let mut sums: std::collections::BTreeMap<(u32, String), [u64; 4]> = Default::default();
    let (mut at, mut seen) = (None::<u64>, Vec::<(u32, String)>::new());
    if keep.iter().any(|&k| k) {
        kept_locations(a, keep, &mut |loc| {
            let addrs = loc.column(lc::ADDR)?.u64()?;
            let vars = loc.column(lc::VAR)?.u32()?;
            let stored = loc.column(lc::ELEMENT)?.str()?;
            let acc = loc.column(lc::ACCESSES)?.u64()?;
            let lb = loc.column(lc::LOAD_BYTES)?.u64()?;
            let sb = loc.column(lc::STORE_BYTES)?.u64()?;
            for i in 0..loc.height() {
                let (Some(v), Some(addr)) = (vars.get(i), addrs.get(i)) else {
                    continue;
                };
                let row = rows.row_of[v as usize];
                let e = element_of(a, rows, v, addr, stored.get(i));
                if at != Some(addr) {
                    at = Some(addr);
                    seen.clear();
                }
                let key = (row, e);
                let s = sums.entry(key.clone()).or_insert([0; 4]);
                s[0] += acc.get(i).unwrap_or(0);
                s[1] += lb.get(i).unwrap_or(0);
                s[2] += sb.get(i).unwrap_or(0);
                if !seen.contains(&key) {
                    s[3] += 1;
                    seen.push(key);
                }
            }
            Ok(true)
        })?;
    }
    let mut out: Vec<(&str, &str, [u64; 4])> = sums
        .iter()
        .map(|((r, e), s)| (rows.names[*r as usize].as_str(), e.as_str(), *s))
        .collect();
    out.sort();
    let col = |k: usize| out.iter().map(|o| o.2[k]).collect::<Vec<u64>>();
    DataFrame::new(vec![
        Column::new(
            "variable".into(),
            out.iter().map(|o| o.0).collect::<Vec<&str>>(),
        ),
        Column::new(
            "element".into(),
            out.iter().map(|o| o.1).collect::<Vec<&str>>(),
        ),
        Column::new(lc::ACCESSES.into(), col(0)),
        Column::new(lc::LOAD_BYTES.into(), col(1)),
        Column::new(lc::STORE_BYTES.into(), col(2)),
        Column::new("addresses".into(), col(3)),
    ])
}

/// The element of location `addr` in variable `v` as [`per_element`]
/// names it: the stored member path, else the element the variable's shape
/// gives, under the base name when the row groups several variables. Not
/// [`element_at`] (the per-address table's, one row per location): here
/// the instances a row groups must name their elements alike, so that they
/// add up under one key, and the key is owned.
fn element_of(a: &Analysis, rows: &DisplayRows, v: u32, addr: u64, stored: Option<&str>) -> String {
    match stored {
        Some(e) if !e.is_empty() => e.to_string(),
        _ => {
            let var = &a.vars[v as usize];
            let grouped = rows.members[rows.row_of[v as usize] as usize].len() > 1;
            let name = if grouped { &var.base_name } else { &var.name };
            element_path(name, var.base, var.size, var.elem_size, &var.dims, addr)
        }
    }
}

/// The original's per-address table: `index, appearance_count, address,
/// bytes_stored, bytes_loaded, variable`, plus `element` (`u[3][4]`,
/// `h.nbins`), one row per location (address and
/// variable) shown for `kind`, sorted by address. Memory: the whole table:
/// for small analyses and tests ([`for_each_address_row`] streams it).
pub fn per_address(a: &Analysis, kind: MemKind) -> PolarsResult<DataFrame> {
    per_address_by(a, kind, Grouping::Instances)
}

/// [`per_address`] with each location's variable named by its display row
/// under `grouping`. Memory: the whole table (see [`per_address`]).
pub fn per_address_by(a: &Analysis, kind: MemKind, grouping: Grouping) -> PolarsResult<DataFrame> {
    per_address_head(a, kind, grouping, usize::MAX)
}

/// The first `n` rows of [`per_address_by`]'s table: the pass stops once it
/// has them. Memory: those rows.
pub fn per_address_head(
    a: &Analysis,
    kind: MemKind,
    grouping: Grouping,
    n: usize,
) -> PolarsResult<DataFrame> {
    let mut cols = AddressColumns::default();
    if n > 0 {
        for_each_address_row(a, kind, grouping, &mut |r| {
            cols.push(r);
            cols.index.len() < n
        })?;
    }
    cols.frame()
}

/// One row of the per-address table ([`per_address_by`]), borrowed from
/// the lookup table's batch and the analysis' names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressRow<'a> {
    /// Place of the row in the whole table, from 0.
    pub index: u64,
    /// Accesses to the location (`appearance_count`).
    pub accesses: u64,
    /// The location's address.
    pub address: u64,
    /// Bytes stored to it.
    pub stored: u64,
    /// Bytes loaded from it.
    pub loaded: u64,
    /// The variable's display row name.
    pub variable: &'a str,
    /// The element (`u[3][4]`, `h.nbins`; a scalar: its row's name).
    pub element: &'a str,
}

/// [`per_address`]' rows with each location's variable named by its
/// display row under `grouping`, as [`per_variable_by`] names it, handed
/// to `f` one at a time in address order, with no table made (the whole
/// table of a large program is millions of rows, and a table per batch
/// cost a string column for the names and a `String` per element): under
/// [`Grouping::BySite`] a list's nodes are `n` and the pointer sharing
/// that name is `n@S`, in both tables. A scalar's element is its row's
/// name. `f` says whether to go on. Cost: one pass over the lookup table;
/// memory: one batch of it. Ctrl-C stops it between batches.
pub fn for_each_address_row(
    a: &Analysis,
    kind: MemKind,
    grouping: Grouping,
    f: &mut dyn FnMut(&AddressRow<'_>) -> bool,
) -> PolarsResult<()> {
    let rows = display_rows(a, grouping);
    let keep = shown_vars(a, kind);
    let mut index = 0u64;
    let mut element = String::new();
    a.locations
        .for_each_batch(&mut |df| {
            let cols = BatchColumns::of(df)?;
            for i in 0..cols.len() {
                let v = cols.var[i] as usize;
                if !keep.get(v).copied().unwrap_or(false) {
                    continue;
                }
                let row = AddressRow {
                    index,
                    accesses: cols.accesses[i],
                    address: cols.addr[i],
                    stored: cols.stored[i],
                    loaded: cols.loaded[i],
                    variable: (rows.row_of.get(v)).map_or("", |&r| rows.names[r as usize].as_str()),
                    element: "",
                };
                let stored = cols.element.get(i).unwrap_or("");
                let row = AddressRow {
                    element: element_at(a, v, &row, stored, &mut element),
                    ..row
                };
                index += 1;
                if !f(&row) {
                    return Ok(false);
                }
            }
            Ok(true)
        })
        .map_err(|e| match e {
            super::error::FilterError::Table(e) => e,
            e => PolarsError::ComputeError(e.to_string().into()),
        })
}

/// The element of `row` (of variable `v`) as the per-address table names
/// it: the member path the analysis stored, else the element the
/// variable's shape gives (made in `buf`); the variable's own name (a
/// scalar, or an address outside its elements) reads as its row's name.
fn element_at<'a>(
    a: &Analysis,
    v: usize,
    row: &AddressRow<'a>,
    stored: &'a str,
    buf: &'a mut String,
) -> &'a str {
    match a.vars.get(v) {
        Some(var) if !stored.is_empty() => {
            if stored == var.name {
                row.variable
            } else {
                stored
            }
        }
        None => stored,
        Some(var) => {
            buf.clear();
            push_element_path(
                buf,
                &var.name,
                var.base,
                var.size,
                var.elem_size,
                &var.dims,
                row.address,
            );
            if *buf == var.name {
                row.variable
            } else {
                buf.as_str()
            }
        }
    }
}

/// The columns of a lookup-table batch the per-address table reads, as
/// slices: borrowed from a batch as read back (one chunk of required
/// columns); copied from any other shape, a null (which the table's
/// required columns never hold) read as 0.
struct BatchColumns<'a> {
    var: std::borrow::Cow<'a, [u32]>,
    accesses: std::borrow::Cow<'a, [u64]>,
    addr: std::borrow::Cow<'a, [u64]>,
    stored: std::borrow::Cow<'a, [u64]>,
    loaded: std::borrow::Cow<'a, [u64]>,
    element: &'a StringChunked,
}

impl<'a> BatchColumns<'a> {
    fn of(df: &'a DataFrame) -> PolarsResult<BatchColumns<'a>> {
        fn slice<'a, T>(ca: &'a ChunkedArray<T>) -> std::borrow::Cow<'a, [T::Native]>
        where
            T: PolarsNumericType,
        {
            match ca.cont_slice() {
                Ok(s) => std::borrow::Cow::Borrowed(s),
                Err(_) => {
                    std::borrow::Cow::Owned(ca.into_iter().map(|v| v.unwrap_or_default()).collect())
                }
            }
        }
        let u64s = |c: &str| -> PolarsResult<std::borrow::Cow<'a, [u64]>> {
            Ok(slice(df.column(c)?.u64()?))
        };
        Ok(BatchColumns {
            var: slice(df.column(lc::VAR)?.u32()?),
            accesses: u64s(lc::ACCESSES)?,
            addr: u64s(lc::ADDR)?,
            stored: u64s(lc::STORE_BYTES)?,
            loaded: u64s(lc::LOAD_BYTES)?,
            element: df.column(lc::ELEMENT)?.str()?,
        })
    }

    fn len(&self) -> usize {
        self.var.len()
    }
}

/// The per-address table's columns of one batch, gathered row by row; the
/// names in polars' string columns, which keep short strings inline (a
/// `String` per row took 40 bytes more for each of a batch's million
/// rows).
struct AddressColumns {
    index: Vec<u64>,
    accesses: Vec<u64>,
    address: Vec<u64>,
    stored: Vec<u64>,
    loaded: Vec<u64>,
    variable: StringChunkedBuilder,
    element: StringChunkedBuilder,
}

impl Default for AddressColumns {
    fn default() -> AddressColumns {
        AddressColumns {
            index: Vec::new(),
            accesses: Vec::new(),
            address: Vec::new(),
            stored: Vec::new(),
            loaded: Vec::new(),
            variable: StringChunkedBuilder::new("variable".into(), 0),
            element: StringChunkedBuilder::new("element".into(), 0),
        }
    }
}

impl AddressColumns {
    fn push(&mut self, r: &AddressRow<'_>) {
        self.index.push(r.index);
        self.accesses.push(r.accesses);
        self.address.push(r.address);
        self.stored.push(r.stored);
        self.loaded.push(r.loaded);
        self.variable.append_value(r.variable);
        self.element.append_value(r.element);
    }

    /// The batch as a table of [`ADDRESS_COLUMNS`].
    fn frame(&mut self) -> PolarsResult<DataFrame> {
        let c = std::mem::take(self);
        DataFrame::new(vec![
            Column::new("index".into(), c.index),
            Column::new("appearance_count".into(), c.accesses),
            Column::new("address".into(), c.address),
            Column::new("bytes_stored".into(), c.stored),
            Column::new("bytes_loaded".into(), c.loaded),
            c.variable.finish().into_column(),
            c.element.finish().into_column(),
        ])
    }
}

/// Plain-words notes on the rows of a [`per_variable_by`] table that are not
/// single variables: frame-slot rows, heap blocks grouped by site and the
/// instances of a local grouped under `grouping`. Cost: a pass over the
/// variables and one over the rows.
pub fn row_notes(a: &Analysis, per_var: &DataFrame, grouping: Grouping) -> Vec<String> {
    let mut notes = Vec::new();
    let Ok(names) = per_var
        .column("variable")
        .and_then(|c| Ok(c.str()?.clone()))
    else {
        return notes;
    };
    // One pass over the variables, then a probe per row.
    let slot_names: HashSet<&str> = a
        .vars
        .iter()
        .filter(|v| v.frame_slot)
        .map(|v| v.name.as_str())
        .collect();
    let frames: Vec<&str> = (&names)
        .into_iter()
        .flatten()
        .filter(|n| slot_names.contains(n))
        .collect();
    if !frames.is_empty() {
        notes.push(format!(
            "{} are not variables: each row sums one function's return addresses, saved registers \
             and spilled temporaries.",
            frames.join(", ")
        ));
    }
    let blocks = per_var.column("blocks").and_then(|c| Ok(c.u64()?.clone()));
    let sites = per_var.column("site").and_then(|c| Ok(c.str()?.clone()));
    if let (Ok(blocks), Ok(sites)) = (blocks, sites) {
        let grouped: Vec<String> = (0..per_var.height())
            .filter(|&i| blocks.get(i).unwrap_or(0) > 1)
            .map(|i| {
                format!(
                    "{} ({} blocks from {})",
                    names.get(i).unwrap_or(""),
                    blocks.get(i).unwrap_or(0),
                    sites.get(i).unwrap_or("?")
                )
            })
            .collect();
        if !grouped.is_empty() {
            notes.push(format!(
                "heap blocks allocated at one site are one row: {}; set_heap_grouping instances \
                 shows each block.",
                grouped.join(", ")
            ));
        }
    }
    if let Some(note) = instances_note(a, &names, grouping) {
        notes.push(note);
    }
    notes
}

/// The note on rows that group the instances of a local (a recursion's
/// `x`, one instance per frame): `x (100000 instances in down)`, for the
/// rows of `names` that do. Cost: [`display_rows`] and a pass over the
/// rows.
fn instances_note(a: &Analysis, names: &StringChunked, grouping: Grouping) -> Option<String> {
    let rows = display_rows(a, grouping);
    let shown: HashSet<&str> = names.into_iter().flatten().collect();
    let grouped: Vec<String> = rows
        .members
        .iter()
        .zip(&rows.names)
        .filter(|(m, n)| {
            m.len() > 1 && a.vars[m[0].index()].scope == Scope::Stack && shown.contains(n.as_str())
        })
        .map(|(m, n)| {
            let f = &a.vars[m[0].index()].function;
            let within = if f.is_empty() {
                String::new()
            } else {
                format!(" of {f}")
            };
            format!("{n} ({} instances, one per frame{within})", m.len())
        })
        .collect();
    (!grouped.is_empty()).then(|| {
        format!(
            "each instance of a local variable (one per frame it lived in: a recursion, or calls \
             from different depths) is summed into one row: {}; set_heap_grouping instances shows \
             each instance.",
            grouped.join(", ")
        )
    })
}

/// The variable table of the analysis with the display names of
/// `grouping`: blocks grouped by site carry their group's name, so that
/// figures draw them as one variable.
pub fn variables_for_display(a: &Analysis, grouping: Grouping) -> PolarsResult<DataFrame> {
    if grouping == Grouping::Instances && a.vars.iter().all(|v| v.path.is_empty()) {
        return Ok(a.variables.clone());
    }
    let rows = display_rows(a, grouping);
    let mut vars = a.vars.clone();
    for (v, var) in vars.iter_mut().enumerate() {
        // Grouped blocks take their group's name, and a variable sharing
        // that name its qualified one (`n@S`), as memory_stats shows them.
        var.name = rows.names[rows.row_of[v] as usize].clone();
    }
    super::model::variable_table(&vars)
}

impl Analysis {
    /// See [`variables_for_display`].
    pub fn variables_for_display(&self, grouping: Grouping) -> PolarsResult<DataFrame> {
        variables_for_display(self, grouping)
    }
}
