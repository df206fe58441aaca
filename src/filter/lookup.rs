//! The lookup table of unique locations, built from the named accesses as
//! they stream past.
//!
//! One row per location (an address in a variable) with its counts, as
//! mapvisual's lookup table has it, plus each variable's first and last
//! access and its threads, so that the statistics never rescan the
//! accesses. Memory: about 60 bytes per unique location plus the direct
//! indexes (see [`DENSE_MAX`]); nothing per access.

use polars::prelude::PlHashMap as HashMap;
use polars::prelude::*;

use super::access::{NamedAccess, VarId};
use super::model::Span;
use super::schema::{location as lc, OP_LOAD, OP_MODIFY};

/// Most slots of one variable's direct location index (4 bytes each, one
/// per aligned grain of the variable; see [`grain`]).
const DENSE_MAX: u64 = 1 << 22;
/// Total memory the direct indexes may take.
const DENSE_BUDGET: usize = 256 << 20;
/// An empty slot of a direct index (rows are below 2^32 - 1: one per
/// unique location).
const NO_ROW: u32 = u32::MAX;

/// One row of the lookup table while it is built. Counts are 64-bit: one
/// location may be touched more than 2^32 times.
#[derive(Clone, Copy)]
struct Loc {
    addr: u64,
    var: VarId,
    loads: u64,
    stores: u64,
    modifies: u64,
    load_bytes: u64,
    store_bytes: u64,
}

/// What the lookup table learnt about one variable.
#[derive(Clone, Debug, Default)]
pub(crate) struct VarUse {
    /// Time of the first and last access, if it was accessed.
    pub(crate) accessed: Option<(u64, u64)>,
    /// Lowest and highest byte address accessed (meaningful once
    /// `accessed` is set).
    pub(crate) bytes: (u64, u64),
    /// Threads that accessed it, ascending.
    pub(crate) threads: Vec<u32>,
}

/// A variable's direct location index: slot `k` holds the row of address
/// `base + k << shift`.
#[derive(Clone)]
struct Dense {
    base: u64,
    shift: u32,
    rows: Box<[u32]>,
}

/// The grain of a variable's direct index: the largest power of two (up to
/// 16 bytes) that divides its element size, so every element and every
/// naturally aligned member starts on a slot, and the index is 8 times
/// smaller for an array of doubles than one slot per byte. When the element
/// size is unknown (a type the namer could not resolve), the first access
/// stands in for it: its size, and the alignment of its offset. Addresses
/// off the grain still get their own rows, through the hash map.
fn grain(span: Span, first: &NamedAccess) -> u64 {
    let g = if span.elem > 0 {
        1 << span.elem.trailing_zeros()
    } else {
        let off = first.addr.wrapping_sub(span.base);
        let size = u64::from(first.size.max(1));
        (1u64 << size.trailing_zeros()).min(if off == 0 {
            16
        } else {
            1 << off.trailing_zeros()
        })
    };
    g.min(16)
}

/// The lookup table while it is built.
#[derive(Default)]
pub(crate) struct LookupTable {
    loc_of: HashMap<(u64, VarId), u32>,
    /// Per variable: a direct index from aligned offset to row, for
    /// variables small enough (see [`DENSE_MAX`]); the hash map serves the
    /// rest, and addresses off the grain. Arrays are walked in strides,
    /// where the direct index stays in cache and a hash probe would miss.
    dense: Vec<Option<Dense>>,
    dense_bytes: usize,
    /// Per variable: whether [`Self::make_dense`] has seen it.
    seen: Vec<bool>,
    locs: Vec<Loc>,
    /// The last location touched: (address, variable, row).
    last: Option<(u64, VarId, u32)>,
    uses: Vec<VarUse>,
    var_last_tid: Vec<u32>,
    threads: Vec<u32>,
    last_tid: u32,
}

impl LookupTable {
    /// An empty table.
    pub(crate) fn new() -> LookupTable {
        LookupTable {
            last_tid: u32::MAX,
            ..Default::default()
        }
    }

    /// Counts a batch of accesses. `span(var)` says where a variable lies,
    /// asked when the variable is first seen.
    /// Cost: a direct-index or hash probe per access.
    pub(crate) fn add(&mut self, batch: &[NamedAccess], span: &dyn Fn(VarId) -> Span) {
        for a in batch {
            let row = match self.last {
                Some((addr, var, row)) if addr == a.addr && var == a.var => row,
                _ => {
                    let r = self.location(a, span);
                    self.last = Some((a.addr, a.var, r));
                    r
                }
            };
            let l = &mut self.locs[row as usize];
            match a.op {
                OP_LOAD => l.loads += 1,
                OP_MODIFY => l.modifies += 1,
                _ => l.stores += 1,
            }
            let size = u64::from(a.size);
            if a.op != super::schema::OP_STORE {
                l.load_bytes += size;
            }
            if a.op != OP_LOAD {
                l.store_bytes += size;
            }
            self.used(a);
        }
    }

    /// Records the variable's time span and threads, and the trace's
    /// threads.
    #[inline]
    fn used(&mut self, a: &NamedAccess) {
        let v = a.var.index();
        if v >= self.uses.len() {
            self.uses.resize(v + 1, VarUse::default());
            self.var_last_tid.resize(v + 1, u32::MAX);
        }
        let u = &mut self.uses[v];
        let end = a.addr.saturating_add(u64::from(a.size.max(1)) - 1);
        match &mut u.accessed {
            Some((_, last)) => {
                *last = a.time;
                u.bytes = (u.bytes.0.min(a.addr), u.bytes.1.max(end));
            }
            t => {
                *t = Some((a.time, a.time));
                u.bytes = (a.addr, end);
            }
        }
        if self.var_last_tid[v] != a.tid {
            self.var_last_tid[v] = a.tid;
            if let Err(k) = u.threads.binary_search(&a.tid) {
                u.threads.insert(k, a.tid);
            }
        }
        if a.tid != self.last_tid {
            self.last_tid = a.tid;
            if let Err(k) = self.threads.binary_search(&a.tid) {
                self.threads.insert(k, a.tid);
            }
        }
    }

    /// The row of `addr` in `var`, created on first use.
    #[inline]
    fn location(&mut self, a: &NamedAccess, span: &dyn Fn(VarId) -> Span) -> u32 {
        let (addr, var) = (a.addr, a.var);
        let v = var.index();
        if self.seen.get(v) != Some(&true) {
            self.make_dense(a, span(var));
        }
        let next = self.locs.len() as u32;
        let slot = self.dense[v].as_mut().and_then(|d| {
            let off = addr.wrapping_sub(d.base);
            let k = off >> d.shift;
            (k << d.shift == off && k < d.rows.len() as u64).then(|| &mut d.rows[k as usize])
        });
        let r = match slot {
            Some(slot) => {
                if *slot == NO_ROW {
                    *slot = next;
                }
                *slot
            }
            None => *self.loc_of.entry((addr, var)).or_insert(next),
        };
        if r == next {
            self.locs.push(Loc {
                addr,
                var,
                loads: 0,
                stores: 0,
                modifies: 0,
                load_bytes: 0,
                store_bytes: 0,
            });
        }
        r
    }

    /// Gives a variable seen for the first time (in access `first`) a
    /// direct index when it is small enough and the budget allows.
    #[cold]
    fn make_dense(&mut self, first: &NamedAccess, span: Span) {
        let v = first.var.index();
        if v >= self.dense.len() {
            self.dense.resize(v + 1, None);
            self.seen.resize(v + 1, false);
        }
        self.seen[v] = true;
        let g = grain(span, first);
        let slots = span.size.div_ceil(g);
        if slots > 0 && slots <= DENSE_MAX && self.dense_bytes + 4 * slots as usize <= DENSE_BUDGET
        {
            self.dense[v] = Some(Dense {
                base: span.base,
                shift: g.trailing_zeros(),
                rows: vec![NO_ROW; slots as usize].into_boxed_slice(),
            });
            self.dense_bytes += 4 * slots as usize;
        }
    }

    /// The trace's threads, ascending.
    pub(crate) fn threads(&self) -> &[u32] {
        &self.threads
    }

    /// The table, sorted by address then variable, with the member path
    /// `element(address, variable)` of each location, and what each
    /// variable's accesses were (by variable row, as far as the last
    /// variable accessed).
    pub(crate) fn finish(
        self,
        element: &mut dyn FnMut(u64, VarId) -> Option<String>,
    ) -> PolarsResult<(DataFrame, Vec<VarUse>)> {
        let uses = self.uses;
        let mut locs = self.locs;
        locs.sort_unstable_by_key(|l| (l.addr, l.var));
        let col = |f: fn(&Loc) -> u64| locs.iter().map(f).collect::<Vec<u64>>();
        let df = DataFrame::new(vec![
            Column::new(lc::ADDR.into(), col(|l| l.addr)),
            Column::new(
                lc::VAR.into(),
                locs.iter().map(|l| l.var.0).collect::<Vec<u32>>(),
            ),
            Column::new(
                lc::ACCESSES.into(),
                col(|l| l.loads + l.stores + l.modifies),
            ),
            Column::new(lc::LOADS.into(), col(|l| l.loads)),
            Column::new(lc::STORES.into(), col(|l| l.stores)),
            Column::new(lc::MODIFIES.into(), col(|l| l.modifies)),
            Column::new(lc::LOAD_BYTES.into(), col(|l| l.load_bytes)),
            Column::new(lc::STORE_BYTES.into(), col(|l| l.store_bytes)),
            Column::new(
                lc::ELEMENT.into(),
                locs.iter()
                    .map(|l| element(l.addr, l.var).unwrap_or_default())
                    .collect::<Vec<String>>(),
            ),
        ])?;
        Ok((df, uses))
    }
}
