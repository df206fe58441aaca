//! From trace events to named accesses, the lookup table and the access list.
//!
//! [`analyse`] streams a trace once, through the reader's access fast path
//! ([`TraceReader::for_each_access`]). Each access is named by
//! [`Builder::name`]:
//!
//! - Heap: live blocks sit in an ordered map, so names follow blocks through
//!   free and realloc, never raw addresses: a freed address reused by a new
//!   block belongs to the new block.
//! - Stack and globals are named through the [`Namer`] (DWARF).
//! - Every instruction site keeps its last answer (the variable's address
//!   range, and for the stack the frame it holds in). At -O0 one instruction
//!   keeps touching one variable, so most accesses cost a range check and
//!   no lookup at all; the source line is cached per site too.
//!
//! Alongside the access list the analysis builds mapvisual's lookup table of
//! unique locations (one row per address and variable, with its counts), so
//! the statistics never rescan the accesses.
//!
//! Memory: the access list takes 25 bytes per access (operation 1, address
//! 8, size 2, thread 2, variable 4, line 4, occurrence 4); the lookup table
//! about 80 bytes per unique location while it is built.
use std::collections::BTreeMap;

// A fast non-cryptographic hash map (the one polars uses): these maps are
// probed on naming misses and once per access for the lookup table.
use polars::prelude::PlHashMap as HashMap;
use std::path::Path;

use polars::prelude::*;

use crate::trace::format::{Access, Event, Op};
use crate::trace::naming::{HeapName, NameQuality, Namer, Scope, VarName};
use crate::trace::reader::{Batch, EndState, TraceError, TraceReader};

use super::schema::{access as ac, line as ln, location as lc, variable as va};
use super::FilterError;

/// The x86-64 System V red zone: a leaf function may use the 128 bytes
/// below its stack pointer without moving it.
const RED_ZONE: u64 = 128;

/// How far above the stack pointer an address still counts as the thread's
/// own stack: Linux's default 8 MiB stack limit (`ulimit -s`).
const STACK_SPAN: u64 = 8 << 20;

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
    /// Threads that accessed it, ascending.
    pub threads: Vec<u32>,
}

impl Variable {
    fn new(name: String, scope: Scope) -> Variable {
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
            accessed: None,
            threads: vec![],
        }
    }
}

/// What the trace said about itself.
#[derive(Clone, Debug, Default)]
pub struct TraceSummary {
    /// The traced command line.
    pub command: Vec<String>,
    /// Accesses read.
    pub accesses: u64,
    /// Regions seen.
    pub regions: u32,
    /// Heap allocations seen (whole run).
    pub allocations: u64,
    /// Frees seen (whole run).
    pub frees: u64,
    /// Threads that made accesses.
    pub threads: Vec<u32>,
    /// Whether the footer was read.
    pub complete: bool,
    /// Tool warnings and reader notes.
    pub notes: Vec<String>,
}

/// A heap allocation, for the allocation-info file.
#[derive(Clone, Debug)]
pub struct Allocation {
    /// Start address.
    pub addr: u64,
    /// Size in bytes.
    pub size: u64,
    /// Variable row of the block.
    pub var: u32,
    /// Allocator name.
    pub kind: &'static str,
    /// Allocating thread.
    pub tid: u32,
    /// Time of allocation.
    pub alloc_time: u64,
    /// Time of free, if freed.
    pub free_time: Option<u64>,
}

/// The complete analysis of one trace. Cloning it is cheap for the tables
/// (polars shares their buffers) and copies only the small vectors.
#[derive(Clone)]
pub struct Analysis {
    /// The access list, one row per access in time order (the row number is
    /// the access' time); see [`super::schema`].
    pub accesses: DataFrame,
    /// The lookup table: one row per unique location (address and
    /// variable), with its counts; see [`super::schema`].
    pub locations: DataFrame,
    /// One row per variable; see [`super::schema`].
    pub variables: DataFrame,
    /// One row per source line; see [`super::schema`].
    pub lines: DataFrame,
    /// The variables, in row order.
    pub vars: Vec<Variable>,
    /// Every heap allocation of the run.
    pub allocations: Vec<Allocation>,
    /// What the trace said about itself.
    pub summary: TraceSummary,
}

#[derive(Clone, Copy, Hash, PartialEq, Eq)]
enum VarKey {
    Heap(u32),
    Named(u32),
    Other(Scope),
}

/// When a site's last answer holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Covers {
    /// Nothing cached.
    Nothing,
    /// For any access in the range: a global, or a heap block.
    Any,
    /// For accesses in the range from the frame with this stack and frame
    /// pointer: a stack variable.
    Frame { sp: u64, fp: u64 },
}

/// The last answer of one instruction site.
#[derive(Clone, Copy)]
struct SiteCache {
    /// Source line id, [`NO_LINE`] until asked.
    line: u32,
    covers: Covers,
    /// The heap generation the answer depends on: heap blocks, and
    /// addresses that were in no block, must be re-checked once blocks
    /// come or go. `u32::MAX` for answers no heap event can change.
    generation: u32,
    lo: u64,
    hi: u64,
    var: u32,
    /// The site's last location, so that a site that keeps touching one
    /// place (a loop counter) skips the lookup-table probe.
    loc: LocHint,
    /// How the site's frame's CFA follows from sp or fp ([`Namer::cfa_rule`]),
    /// asked once: for the shadow stack.
    cfa: CfaRule,
}

/// A site's CFA rule: not asked yet, unknown, or (from fp, offset).
#[derive(Clone, Copy, PartialEq, Eq)]
enum CfaRule {
    NotAsked,
    Unknown,
    Known(bool, i64),
}

/// One live frame of a thread's shadow stack.
#[derive(Clone, Copy, Debug)]
struct ShadowFrame {
    cfa: u64,
    /// The last instruction seen in the frame before it called deeper.
    ip: u64,
    sp: u64,
    fp: u64,
}

/// The last location a site (or the whole trace) touched: address,
/// variable and row of the lookup table.
#[derive(Clone, Copy)]
struct LocHint {
    addr: u64,
    var: u32,
    row: u32,
}

const NO_HINT: LocHint = LocHint {
    addr: 0,
    var: NO_VAR,
    row: 0,
};

const NO_LINE: u32 = u32::MAX;
const NO_VAR: u32 = u32::MAX;
const ANY_GENERATION: u32 = u32::MAX;

impl Default for SiteCache {
    fn default() -> Self {
        SiteCache {
            line: NO_LINE,
            covers: Covers::Nothing,
            generation: ANY_GENERATION,
            lo: 0,
            hi: 0,
            var: NO_VAR,
            loc: NO_HINT,
            cfa: CfaRule::NotAsked,
        }
    }
}

/// One row of the lookup table while it is built.
#[derive(Clone, Copy)]
struct Loc {
    addr: u64,
    var: u32,
    loads: u32,
    stores: u32,
    modifies: u32,
    load_bytes: u64,
    store_bytes: u64,
}

/// Largest variable, in bytes, given a direct location index (4 bytes per
/// byte of the variable).
const DENSE_MAX: u64 = 1 << 22;
/// Total memory the direct indexes may take.
const DENSE_BUDGET: usize = 256 << 20;

/// One named access, as the access list stores it.
#[derive(Clone, Copy)]
struct Row {
    op: Op,
    addr: u64,
    size: u32,
    tid: u32,
    var: u32,
    line: u32,
}

/// The access list and the lookup table while they are built.
#[derive(Default)]
struct Table {
    op: Vec<u8>,
    addr: Vec<u64>,
    size: Vec<u16>,
    tid: Vec<u16>,
    var: Vec<u32>,
    line: Vec<u32>,
    occurrence: Vec<u32>,
    loc_of: HashMap<(u64, u32), u32>,
    /// Per variable: a direct index from byte offset to lookup-table row,
    /// for variables small enough (see [`DENSE_MAX`]); the hash map
    /// serves the rest. Arrays are walked in strides, where the direct
    /// index stays in cache and a hash probe would miss.
    dense: Vec<Option<(u64, Box<[u32]>)>>,
    dense_bytes: usize,
    locs: Vec<Loc>,
    /// Element names of locations inside structures (`h.nbins`), by row:
    /// arrays of scalars are named from their shape instead.
    elements: Vec<(u32, String)>,
    /// Per variable: first and last access time, last thread, threads.
    var_time: Vec<Option<(u64, u64)>>,
    var_last_tid: Vec<u32>,
    var_tids: Vec<Vec<u32>>,
    threads: Vec<u32>,
    last_tid: u32,
}

impl Table {
    /// Appends one access: the access list, its location's counts, and the
    /// variable's time span and threads.
    #[inline]
    fn push(&mut self, r: Row, span: (u64, u64), hint: &mut LocHint) {
        let Row {
            op,
            addr,
            size,
            tid,
            var,
            line,
        } = r;
        let time = self.op.len() as u64;
        let row = if hint.addr == addr && hint.var == var {
            hint.row
        } else {
            let r = self.location(addr, var, span);
            *hint = LocHint { addr, var, row: r };
            r
        };
        let l = &mut self.locs[row as usize];
        match op {
            Op::Load => l.loads += 1,
            Op::Store => l.stores += 1,
            Op::Modify => l.modifies += 1,
        }
        l.load_bytes += op.load_bytes(size);
        l.store_bytes += op.store_bytes(size);
        let occurrence = l.loads + l.stores + l.modifies;
        self.op.push(op.code());
        self.addr.push(addr);
        self.size.push(size.min(u16::MAX as u32) as u16);
        self.tid.push(tid.min(u16::MAX as u32) as u16);
        self.var.push(var);
        self.line.push(line);
        self.occurrence.push(occurrence);
        let v = var as usize;
        if v >= self.var_time.len() {
            self.var_time.resize(v + 1, None);
            self.var_last_tid.resize(v + 1, 0);
            self.var_tids.resize(v + 1, Vec::new());
        }
        match &mut self.var_time[v] {
            Some((_, last)) => *last = time,
            t => *t = Some((time, time)),
        }
        if self.var_last_tid[v] != tid {
            self.var_last_tid[v] = tid;
            if let Err(k) = self.var_tids[v].binary_search(&tid) {
                self.var_tids[v].insert(k, tid);
            }
        }
        if tid != self.last_tid {
            self.last_tid = tid;
            if let Err(k) = self.threads.binary_search(&tid) {
                self.threads.insert(k, tid);
            }
        }
    }

    fn len(&self) -> u64 {
        self.op.len() as u64
    }

    /// The lookup-table row of `addr` in `var` (which spans `span`: base
    /// and size), created on first use.
    #[inline]
    fn location(&mut self, addr: u64, var: u32, span: (u64, u64)) -> u32 {
        let v = var as usize;
        if v >= self.dense.len() {
            self.dense.resize(v + 1, None);
        }
        let (start, size) = span;
        if self.dense[v].is_none()
            && size > 0
            && size <= DENSE_MAX
            && self.dense_bytes + 4 * size as usize <= DENSE_BUDGET
        {
            self.dense[v] = Some((start, vec![u32::MAX; size as usize].into_boxed_slice()));
            self.dense_bytes += 4 * size as usize;
        }
        let next = self.locs.len() as u32;
        let r = match &mut self.dense[v] {
            Some((base, rows)) if addr >= *base && addr - *base < rows.len() as u64 => {
                let slot = &mut rows[(addr - *base) as usize];
                if *slot == u32::MAX {
                    *slot = next;
                }
                *slot
            }
            _ => *self.loc_of.entry((addr, var)).or_insert(next),
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

    /// The row of a location already seen.
    fn find_location(&self, addr: u64, var: u32) -> Option<u32> {
        if let Some(Some((base, rows))) = self.dense.get(var as usize) {
            if addr >= *base && addr - *base < rows.len() as u64 {
                let r = rows[(addr - *base) as usize];
                return (r != u32::MAX).then_some(r);
            }
        }
        self.loc_of.get(&(addr, var)).copied()
    }

    /// Removes the last access, undoing its location counts.
    fn pop(&mut self) {
        let (Some(op), Some(addr), Some(size), Some(var)) = (
            self.op.pop(),
            self.addr.pop(),
            self.size.pop(),
            self.var.pop(),
        ) else {
            return;
        };
        self.tid.pop();
        self.line.pop();
        self.occurrence.pop();
        if let Some(r) = self.find_location(addr, var) {
            let l = &mut self.locs[r as usize];
            let op = Op::from_code(op).unwrap_or(Op::Load);
            match op {
                Op::Load => l.loads = l.loads.saturating_sub(1),
                Op::Store => l.stores = l.stores.saturating_sub(1),
                Op::Modify => l.modifies = l.modifies.saturating_sub(1),
            }
            l.load_bytes = l.load_bytes.saturating_sub(op.load_bytes(size as u32));
            l.store_bytes = l.store_bytes.saturating_sub(op.store_bytes(size as u32));
        }
        let n = self.op.len() as u64;
        if let Some(t) = self.var_time.get_mut(var as usize) {
            match *t {
                Some((first, _)) if first >= n => *t = None,
                Some((first, last)) if last >= n => *t = Some((first, n.saturating_sub(1))),
                _ => {}
            }
        }
    }
}

struct Builder<'n> {
    namer: &'n mut dyn Namer,
    vars: Vec<Variable>,
    var_ids: HashMap<VarKey, u32>,
    /// (scope, base, name) of stack/global variables -> index in named_keys
    named: HashMap<(Scope, u64, String), u32>,
    heap_names: HashMap<Vec<u64>, HeapName>,
    /// live heap blocks: start -> (end, block index)
    live: BTreeMap<u64, (u64, u32)>,
    /// Bumped whenever a block is allocated or freed, so cached heap
    /// answers are re-checked.
    heap_generation: u32,
    blocks: Vec<Allocation>,
    block_names: Vec<HeapName>,
    /// Variable row of each block, [`NO_VAR`] until first needed.
    block_var: Vec<u32>,
    last_block: Option<(u64, u64, u32)>,
    stack_cache: HashMap<(u64, u64, u64, u64), Option<u32>>,
    global_cache: HashMap<u64, Option<u32>>,
    sites: Vec<SiteCache>,
    line_ids: HashMap<u64, u32>,
    lines: Vec<String>,
    line_idx: HashMap<String, u32>,
    /// Per thread (by id): the live frames, outermost first, from the call
    /// stack at GL_START and every frame the thread's accesses entered
    /// since. Updated only when an access's thread, sp or fp differs from
    /// the previous access's, which at -O0 happens at calls and returns.
    shadow: Vec<Vec<ShadowFrame>>,
    /// Thread, sp and fp of the previous access, and its instruction.
    last_regs: (u32, u64, u64),
    last_ip: u64,
    /// CFA of the previous access's frame, 0 when unknown.
    last_cfa: u64,
    /// Accesses left out because they were the pins' own (the client
    /// request's argument block), for the note that explains the count.
    pins_dropped: u64,
    /// Per variable: whether its elements have member names (a struct, or
    /// an array of them), so new locations ask the namer for theirs.
    structured: Vec<bool>,
    table: Table,
}

impl<'n> Builder<'n> {
    fn new(namer: &'n mut dyn Namer) -> Builder<'n> {
        Builder {
            namer,
            vars: Vec::new(),
            var_ids: HashMap::new(),
            named: HashMap::new(),
            heap_names: HashMap::new(),
            live: BTreeMap::new(),
            heap_generation: 0,
            blocks: Vec::new(),
            block_names: Vec::new(),
            block_var: Vec::new(),
            last_block: None,
            stack_cache: HashMap::new(),
            global_cache: HashMap::new(),
            sites: Vec::new(),
            line_ids: HashMap::new(),
            lines: Vec::new(),
            line_idx: HashMap::new(),
            shadow: Vec::new(),
            last_regs: (u32::MAX, 0, 0),
            last_ip: 0,
            last_cfa: 0,
            pins_dropped: 0,
            structured: Vec::new(),
            table: Table::default(),
        }
    }

    fn var_for(&mut self, key: VarKey, make: impl FnOnce() -> Variable) -> u32 {
        if let Some(&v) = self.var_ids.get(&key) {
            return v;
        }
        let id = self.vars.len() as u32;
        self.vars.push(make());
        self.var_ids.insert(key, id);
        id
    }

    fn heap_var(&mut self, block: u32) -> u32 {
        let v = self.block_var[block as usize];
        if v != NO_VAR {
            return v;
        }
        let b = &self.blocks[block as usize];
        let name = &self.block_names[block as usize];
        let var = Variable {
            base: b.addr,
            size: b.size,
            elem_size: name.elem_size,
            dims: name.dims_for(b.size),
            site: name.site.clone(),
            elem_type: name.elem_type.clone(),
            alloc_time: Some(b.alloc_time),
            free_time: b.free_time,
            ..Variable::new(name.name.clone(), Scope::Heap)
        };
        let structured = has_members(&var.elem_type);
        let id = self.var_for(VarKey::Heap(block), || var);
        self.block_var[block as usize] = id;
        if structured {
            self.mark_structured(id);
        }
        id
    }

    fn named_var(&mut self, v: VarName) -> u32 {
        let key = (v.scope, v.base, v.name.clone());
        let nid = match self.named.get(&key) {
            Some(&n) => n,
            None => {
                let n = self.named.len() as u32;
                self.named.insert(key, n);
                n
            }
        };
        let structured = v.element.contains('.') || v.element.contains("->");
        let id = self.var_for(VarKey::Named(nid), || Variable {
            base: v.base,
            size: v.size,
            elem_size: v.elem_size,
            dims: v.dims.clone(),
            internal: v.client_request,
            frame_slot: v.frame_slot,
            ..Variable::new(v.name.clone(), v.scope)
        });
        if structured {
            self.mark_structured(id);
        }
        id
    }

    fn mark_structured(&mut self, id: u32) {
        if self.structured.len() <= id as usize {
            self.structured.resize(id as usize + 1, false);
        }
        self.structured[id as usize] = true;
    }

    /// The member path of a new location of a structured variable
    /// (`h.counts`), from the namer. Costs one DWARF query per location.
    fn element_at(&mut self, a: &Access, var: u32) -> Option<String> {
        let v = &self.vars[var as usize];
        let (scope, name) = (v.scope, v.base_name.clone());
        if scope == Scope::Heap {
            let (ty, size, base) = (v.elem_type.clone(), v.size, v.base);
            return self
                .namer
                .heap_element(&ty, &name, size, a.addr.wrapping_sub(base));
        }
        let found = match scope {
            Scope::Stack => {
                let frames = self.live_frames(a.tid);
                self.namer.stack_name(a.ip, a.sp, a.fp, a.addr, &frames)
            }
            Scope::Global => self.namer.global_name(a.addr),
            Scope::Heap => None,
        }?;
        (found.name == name).then_some(found.element)
    }

    fn other_var(&mut self, scope: Scope) -> u32 {
        self.var_for(VarKey::Other(scope), || {
            let name = match scope {
                Scope::Stack => "<stack>",
                Scope::Global => "<static data>",
                Scope::Heap => "<other>",
            };
            Variable {
                base_name: String::new(),
                ..Variable::new(name.into(), scope)
            }
        })
    }

    /// The live block holding `addr`: (start, end, block). `end` is
    /// exclusive, saturated at 2^64 - 1 for a block that reaches the top
    /// of memory, which then holds that last byte too.
    fn find_block(&mut self, addr: u64) -> Option<(u64, u64, u32)> {
        let inside = |s: u64, e: u64| addr >= s && (addr < e || e == u64::MAX);
        if let Some((s, e, b)) = self.last_block {
            if inside(s, e) {
                return Some((s, e, b));
            }
        }
        let (&s, &(e, b)) = self.live.range(..=addr).next_back()?;
        if inside(s, e) || (s == addr && e == s) {
            self.last_block = Some((s, e, b));
            Some((s, e, b))
        } else {
            None
        }
    }

    fn add_block(&mut self, al: Allocation, name: HeapName) {
        let idx = self.blocks.len() as u32;
        self.live
            .insert(al.addr, (al.addr.saturating_add(al.size), idx));
        self.blocks.push(al);
        self.block_names.push(name);
        self.block_var.push(NO_VAR);
        self.last_block = None;
        self.heap_generation = self.heap_generation.wrapping_add(1);
    }

    fn free_block(&mut self, addr: u64, time: u64) {
        if let Some((_, idx)) = self.live.remove(&addr) {
            self.blocks[idx as usize].free_time = Some(time);
            self.last_block = None;
            self.heap_generation = self.heap_generation.wrapping_add(1);
        }
    }

    /// Names an access of a binary trace, trying the site's last answer
    /// first. Cost: a range check on a hit; a block-map lookup and at worst
    /// a DWARF query on a miss.
    #[inline]
    fn name(&mut self, a: &Access) -> u32 {
        let site = a.site as usize;
        if let Some(c) = self.sites.get(site) {
            if a.addr >= c.lo
                && a.addr < c.hi
                && (c.generation == ANY_GENERATION || c.generation == self.heap_generation)
            {
                let valid = match c.covers {
                    Covers::Any => true,
                    Covers::Frame { sp, fp } => sp == a.sp && fp == a.fp,
                    Covers::Nothing => false,
                };
                if valid {
                    return c.var;
                }
            }
        } else {
            self.sites.resize(site + 1, SiteCache::default());
        }
        let (var, covers, named, lo, hi) = self.name_slow(a.addr, a.ip, a.sp, a.fp, a.tid);
        let generation = if named {
            ANY_GENERATION
        } else {
            self.heap_generation
        };
        let c = &mut self.sites[site];
        c.covers = covers;
        c.generation = generation;
        c.lo = lo;
        c.hi = hi;
        c.var = var;
        var
    }

    /// Names an access without the site cache. Also says what range of
    /// addresses the answer covers, under which condition, and whether it
    /// stays true when heap blocks come and go (`named`: a stack variable
    /// or global from DWARF; heap answers and unnamed memory do not).
    fn name_slow(
        &mut self,
        addr: u64,
        ip: u64,
        sp: u64,
        fp: u64,
        tid: u32,
    ) -> (u32, Covers, bool, u64, u64) {
        if let Some((s, e, b)) = self.find_block(addr) {
            return (
                self.heap_var(b),
                Covers::Any,
                false,
                s,
                e.max(s.saturating_add(1)),
            );
        }
        // The stack: from the red zone below sp to the stack's size above
        // it, or another thread's live frames (a pointer to its local).
        let own = addr.wrapping_add(RED_ZONE) >= sp && addr < sp.saturating_add(STACK_SPAN);
        let other = if own {
            None
        } else {
            self.thread_owning(addr, tid)
        };
        if own || other.is_some() {
            let key = (ip, sp, fp, addr);
            let (var, lo, hi) = match self.stack_cache.get(&key) {
                Some(&c) => (c, addr, addr + 1),
                None => {
                    let mut frames = self.live_frames(other.unwrap_or(tid));
                    let (ip, sp, fp) = match other {
                        Some(_) if !frames.is_empty() => frames.remove(0),
                        _ => (ip, sp, fp),
                    };
                    match self.namer.stack_name(ip, sp, fp, addr, &frames) {
                        Some(v) => {
                            let (lo, hi) = covered(&v, addr);
                            let id = self.named_var(v);
                            self.stack_cache.insert(key, Some(id));
                            (Some(id), lo, hi)
                        }
                        None => {
                            self.stack_cache.insert(key, None);
                            (None, addr, addr + 1)
                        }
                    }
                }
            };
            let covers = Covers::Frame { sp, fp };
            return match var {
                Some(v) => (v, covers, true, lo, hi),
                None => (self.other_var(Scope::Stack), covers, false, lo, hi),
            };
        }
        let (var, lo, hi) = match self.global_cache.get(&addr) {
            Some(&c) => (c, addr, addr + 1),
            None => match self.namer.global_name(addr) {
                Some(v) => {
                    let (lo, hi) = covered(&v, addr);
                    let id = self.named_var(v);
                    self.global_cache.insert(addr, Some(id));
                    (Some(id), lo, hi)
                }
                None => {
                    self.global_cache.insert(addr, None);
                    (None, addr, addr + 1)
                }
            },
        };
        match var {
            Some(v) => (v, Covers::Any, true, lo, hi),
            None => (self.other_var(Scope::Global), Covers::Any, false, lo, hi),
        }
    }

    /// The thread's live frames, innermost first, as
    /// [`Namer::stack_name`] takes them. Allocates: called on misses only.
    fn live_frames(&self, tid: u32) -> Vec<(u64, u64, u64)> {
        self.shadow
            .get(tid as usize)
            .map(|st| st.iter().rev().map(|f| (f.ip, f.sp, f.fp)).collect())
            .unwrap_or_default()
    }

    /// Another thread whose live frames span `addr`, for accesses through
    /// pointers to a thread's locals. Scans the threads: misses only.
    fn thread_owning(&self, addr: u64, tid: u32) -> Option<u32> {
        self.shadow.iter().enumerate().find_map(|(u, st)| {
            let (outer, inner) = (st.first()?, st.last()?);
            let inside = addr.wrapping_add(128) >= inner.sp && addr < outer.cfa.saturating_add(256);
            (u as u32 != tid && inside).then_some(u as u32)
        })
    }

    fn shadow_of(&mut self, tid: u32) -> &mut Vec<ShadowFrame> {
        let t = tid as usize;
        if t >= self.shadow.len() {
            self.shadow.resize(t + 1, Vec::new());
        }
        &mut self.shadow[t]
    }

    /// Records that thread `tid` runs `ip` in the frame whose CFA is `cfa`:
    /// frames below it have returned, the frame itself is updated, and a
    /// new frame is pushed. Cost: a few comparisons per call or return.
    fn enter_frame(&mut self, tid: u32, cfa: u64, ip: u64, sp: u64, fp: u64) {
        let st = self.shadow_of(tid);
        while st.last().is_some_and(|top| top.cfa < cfa) {
            st.pop();
        }
        match st.last_mut() {
            Some(top) if top.cfa == cfa => {
                top.ip = ip;
                top.sp = sp;
                top.fp = fp;
            }
            _ => st.push(ShadowFrame { cfa, ip, sp, fp }),
        }
    }

    /// Called when an access's thread, sp or fp differ from the previous
    /// access's: the frame the previous access ran in keeps its last
    /// instruction (the call site, if it called deeper), and the access's
    /// own frame is entered.
    #[cold]
    fn regs_changed(&mut self, a: &Access) {
        let (prev_tid, _, _) = self.last_regs;
        if prev_tid == a.tid {
            let (ip, cfa) = (self.last_ip, self.last_cfa);
            if let Some(top) = self
                .shadow
                .get_mut(a.tid as usize)
                .and_then(|s| s.last_mut())
            {
                if top.cfa == cfa {
                    top.ip = ip;
                }
            }
        }
        self.last_cfa = 0;
        self.last_regs = (a.tid, a.sp, a.fp);
        let site = a.site as usize;
        if site >= self.sites.len() {
            self.sites.resize(site + 1, SiteCache::default());
        }
        let rule = match self.sites[site].cfa {
            CfaRule::NotAsked => {
                let r = match self.namer.cfa_rule(a.ip) {
                    Some((from_fp, off)) => CfaRule::Known(from_fp, off),
                    None => CfaRule::Unknown,
                };
                self.sites[site].cfa = r;
                r
            }
            r => r,
        };
        if let CfaRule::Known(from_fp, off) = rule {
            let cfa = if from_fp { a.fp } else { a.sp }.wrapping_add_signed(off);
            self.last_cfa = cfa;
            self.enter_frame(a.tid, cfa, a.ip, a.sp, a.fp);
        }
    }

    /// A region starts: the thread's shadow stack becomes its call stack at
    /// GL_START (the current instruction, then return addresses, which are
    /// taken one byte back so that they fall inside the call).
    fn start_frames(&mut self, tid: u32, frames: &[(u64, u64, u64)]) {
        self.shadow_of(tid).clear();
        for (k, &(ip, sp, fp)) in frames.iter().enumerate().rev() {
            let ip = if k == 0 { ip } else { ip.wrapping_sub(1) };
            if let Some((from_fp, off)) = self.namer.cfa_rule(ip) {
                let cfa = if from_fp { fp } else { sp }.wrapping_add_signed(off);
                self.enter_frame(tid, cfa, ip, sp, fp);
            }
        }
        self.last_regs = (u32::MAX, 0, 0);
    }

    /// The line id of a site's instruction, asked once per site.
    #[inline]
    fn site_line(&mut self, site: u32, ip: u64) -> u32 {
        let l = self.sites[site as usize].line;
        if l != NO_LINE {
            return l;
        }
        let l = self.line_of(ip);
        self.sites[site as usize].line = l;
        l
    }

    fn line_of(&mut self, ip: u64) -> u32 {
        if let Some(&l) = self.line_ids.get(&ip) {
            return l;
        }
        let text = self.namer.source_line(ip).unwrap_or_else(|| "?".into());
        let id = match self.line_idx.get(&text) {
            Some(&i) => i,
            None => {
                let i = self.lines.len() as u32;
                self.lines.push(text.clone());
                self.line_idx.insert(text, i);
                i
            }
        };
        self.line_ids.insert(ip, id);
        id
    }

    /// GL_STOP's macro stores its six arguments on the stack just before
    /// the client request: those stores are the pin's, not the program's.
    fn drop_client_request_tail(&mut self, arg_block: u64, tid: u32) {
        if arg_block == 0 {
            return;
        }
        let end = arg_block + 48;
        let t = &mut self.table;
        for _ in 0..6 {
            match (t.addr.last(), t.tid.last(), t.op.last()) {
                (Some(&a), Some(&th), Some(&op))
                    if th as u32 == tid.min(u16::MAX as u32)
                        && a >= arg_block
                        && a < end
                        && op == Op::Store.code() =>
                {
                    t.pop();
                    self.pins_dropped += 1;
                }
                _ => break,
            }
        }
    }
}

/// Whether a heap block's element type (as the source writes it) may have
/// members: anything but a scalar, a pointer or an unknown type.
fn has_members(elem_type: &str) -> bool {
    const SCALARS: &[&str] = &[
        "char", "short", "int", "long", "float", "double", "signed", "unsigned", "void", "_Bool",
        "bool", "size_t", "const", "volatile",
    ];
    let t = elem_type.trim();
    !t.is_empty()
        && !t.contains(['*', '['])
        && !t
            .split_whitespace()
            .all(|w| SCALARS.contains(&w) || (w.ends_with("_t") && w.contains("int")))
}

/// The addresses a variable answer covers: the whole variable when its size
/// is known, else just the address asked about (frame slots).
fn covered(v: &VarName, addr: u64) -> (u64, u64) {
    if v.size > 0 && addr >= v.base && addr < v.base.saturating_add(v.size) {
        (v.base, v.base.saturating_add(v.size))
    } else {
        (addr, addr.saturating_add(1))
    }
}

/// Reads the trace at `path` and names every access with `namer`.
///
/// A truncated trace is analysed up to its cut, with a note saying so; a
/// corrupt one is analysed up to the bad record, with a note that says
/// where. Cost: one pass over the trace; memory 25 bytes per access plus
/// about 80 per unique location.
pub fn analyse(path: &Path, namer: &mut dyn Namer) -> Result<Analysis, FilterError> {
    analyse_with(path, namer, &mut |_| true)
}

/// How often (in accesses) the progress callback is called: about a
/// second's work apart at worst, and a few per second at best.
pub const PROGRESS_EVERY: u64 = 1 << 20;

/// [`analyse`] with a progress callback, called every [`PROGRESS_EVERY`]
/// accesses with the number analysed so far. When it returns false the
/// analysis stops there and covers the accesses read up to that point (a
/// note says so): nothing already computed is lost.
pub fn analyse_with(
    path: &Path,
    namer: &mut dyn Namer,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<Analysis, FilterError> {
    let mut reader = TraceReader::open(path)?;
    let mut b = Builder::new(namer);
    let mut summary = TraceSummary {
        command: reader.header().command.clone(),
        ..Default::default()
    };
    let mut corrupt: Option<TraceError> = None;
    loop {
        let until_progress = PROGRESS_EVERY - b.table.len() % PROGRESS_EVERY;
        let batch = reader.for_each_access(until_progress, |a| {
            if (a.tid, a.sp, a.fp) != b.last_regs {
                b.regs_changed(a);
            }
            b.last_ip = a.ip;
            let var = b.name(a);
            if b.vars[var as usize].internal {
                // The pins' own client-request block: not the program's.
                b.pins_dropped += 1;
                return;
            }
            let line = b.site_line(a.site, a.ip);
            let mut hint = b.sites[a.site as usize].loc;
            let v = &b.vars[var as usize];
            let span = (v.base, v.size);
            let rows = b.table.locs.len();
            let row = Row {
                op: a.op,
                addr: a.addr,
                size: a.size,
                tid: a.tid,
                var,
                line,
            };
            b.table.push(row, span, &mut hint);
            b.sites[a.site as usize].loc = hint;
            if b.table.locs.len() > rows && b.structured.get(var as usize) == Some(&true) {
                if let Some(e) = b.element_at(a, var) {
                    b.table.elements.push((rows as u32, e));
                }
            }
        });
        let ev = match batch {
            Ok(Batch::Event(ev)) => ev,
            Ok(Batch::Limit) => {
                if !progress(b.table.len()) {
                    summary.notes.push(stopped_note(b.table.len()));
                    break;
                }
                continue;
            }
            Ok(Batch::End) => break,
            Err(e) => {
                corrupt = Some(e);
                break;
            }
        };
        match ev {
            Event::Access(_) => unreachable!("accesses go to the closure"),
            Event::Alloc(al) => {
                if let Some(old) = al.old_addr {
                    b.free_block(old, al.time);
                }
                let name = match b.heap_names.get(&al.stack) {
                    Some(n) => n.clone(),
                    None => {
                        let n = b.namer.heap_name(&al.stack);
                        b.heap_names.insert(al.stack.clone(), n.clone());
                        n
                    }
                };
                b.add_block(
                    Allocation {
                        addr: al.addr,
                        size: al.size,
                        var: NO_VAR,
                        kind: al.kind.name(),
                        tid: al.tid,
                        alloc_time: al.time,
                        free_time: None,
                    },
                    name,
                );
                // A block inherited at fork() names accesses but was not
                // allocated by this process.
                summary.allocations += u64::from(!al.inherited);
            }
            Event::Free(f) => {
                b.free_block(f.addr, f.time);
                summary.frees += 1;
            }
            Event::RegionStart(r) => {
                summary.regions = summary.regions.max(r.id);
                b.start_frames(r.tid, &r.frames);
            }
            Event::RegionStop(r) => b.drop_client_request_tail(r.arg_block, r.tid),
            Event::Warning { text, .. } => summary.notes.push(format!("the tool reported: {text}")),
            Event::Footer(_) => summary.complete = true,
            Event::Exit(crate::trace::format::ExitStatus::Signal(s)) => summary.notes.push(format!(
                "the program was ended by signal {s} ({}) after {} accesses; they were all analysed.",
                crate::trace::run::signal_name(s),
                b.table.len()
            )),
            Event::Exit(_) => {}
            Event::Map(m) => b.namer.on_map(&m),
            Event::ThreadExit { tid } => b.shadow_of(tid).clear(),
            Event::Unmap { .. }
            | Event::ThreadCreate { .. }
            | Event::Sync(_)
            | Event::InstrCount { .. } => {}
        }
    }
    summary.accesses = b.table.len();
    if let EndState::Truncated {
        offset,
        partial_bytes,
    } = reader.end_state()
    {
        summary.notes.push(format!(
            "the trace {} ends without its footer after {} accesses ({offset} bytes{}): the program crashed or was \
             interrupted; everything up to that point was analysed.",
            path.display(),
            summary.accesses,
            if *partial_bytes > 0 {
                format!(", plus {partial_bytes} bytes of a cut record")
            } else {
                String::new()
            }
        ));
    }
    if let Some(e) = corrupt {
        summary
            .notes
            .push(format!("{e} Analysis continued with what was read."));
    }
    if b.pins_dropped > 0 {
        summary.notes.push(format!(
            "{} of the {} recorded accesses were left out: they are GL_START's and GL_STOP's own \
             stores and loads of their client-request arguments on the stack, not the program's.",
            b.pins_dropped,
            b.table.len() + b.pins_dropped
        ));
    }
    summary.notes.extend(b.namer.take_notes());
    finish(b, summary)
}

/// Turns the collected columns and variables into the tables.
fn finish(mut b: Builder, mut summary: TraceSummary) -> Result<Analysis, FilterError> {
    // Heap blocks that were never accessed still get a variable row, so the
    // allocation info lists every block with its name.
    for i in 0..b.blocks.len() {
        let v = b.heap_var(i as u32);
        b.blocks[i].var = v;
        b.vars[v as usize].free_time = b.blocks[i].free_time;
    }
    let t = std::mem::take(&mut b.table);
    for (v, var) in b.vars.iter_mut().enumerate() {
        var.accessed = t.var_time.get(v).copied().flatten();
        var.threads = t.var_tids.get(v).cloned().unwrap_or_default();
    }
    summary.threads = t.threads.clone();
    summary.accesses = t.op.len() as u64;
    number_instances(&mut b.vars);
    let allocations = b.blocks.clone();
    if b.lines.is_empty() {
        b.lines.push("?".into());
    }
    let locations = location_table(&t.locs, t.elements)?;
    // The columns take over the vectors' buffers: no copy of the access
    // list is made (a copy would double the peak memory here).
    let accesses = DataFrame::new(vec![
        owned::<UInt8Type>(ac::OP, t.op),
        owned::<UInt64Type>(ac::ADDR, t.addr),
        owned::<UInt16Type>(ac::SIZE, t.size),
        owned::<UInt16Type>(ac::TID, t.tid),
        owned::<UInt32Type>(ac::VAR, t.var),
        owned::<UInt32Type>(ac::OCCURRENCE, t.occurrence),
        owned::<UInt32Type>(ac::LINE, t.line),
    ])?;
    let variables = variable_table(&b.vars)?;
    let lines = DataFrame::new(vec![
        Column::new(
            ln::LINE.into(),
            (0..b.lines.len() as u32).collect::<Vec<_>>(),
        ),
        Column::new(ln::SOURCE.into(), std::mem::take(&mut b.lines)),
    ])?;
    Ok(Analysis {
        accesses,
        locations,
        variables,
        lines,
        vars: b.vars,
        allocations,
        summary,
    })
}

/// A column that owns `v`'s buffer (`Column::new` would copy it).
pub(crate) fn owned<T: PolarsNumericType>(name: &str, v: Vec<T::Native>) -> Column {
    ChunkedArray::<T>::from_vec(name.into(), v)
        .into_series()
        .into()
}

/// The lookup table, sorted by address then variable; locations whose only
/// accesses were dropped (GL_STOP's own stores) are left out.
fn location_table(locs: &[Loc], elements: Vec<(u32, String)>) -> PolarsResult<DataFrame> {
    let mut element: Vec<Option<String>> = vec![None; locs.len()];
    for (row, e) in elements {
        if let Some(slot) = element.get_mut(row as usize) {
            *slot = Some(e);
        }
    }
    let mut rows: Vec<usize> = (0..locs.len())
        .filter(|&r| locs[r].loads + locs[r].stores + locs[r].modifies > 0)
        .collect();
    rows.sort_unstable_by_key(|&r| (locs[r].addr, locs[r].var));
    let col32 = |f: fn(&Loc) -> u32| rows.iter().map(|&r| f(&locs[r])).collect::<Vec<u32>>();
    let col64 = |f: fn(&Loc) -> u64| rows.iter().map(|&r| f(&locs[r])).collect::<Vec<u64>>();
    DataFrame::new(vec![
        Column::new(lc::ADDR.into(), col64(|l| l.addr)),
        Column::new(lc::VAR.into(), col32(|l| l.var)),
        Column::new(
            lc::ACCESSES.into(),
            col64(|l| (l.loads + l.stores + l.modifies) as u64),
        ),
        Column::new(lc::LOADS.into(), col64(|l| l.loads as u64)),
        Column::new(lc::STORES.into(), col64(|l| l.stores as u64)),
        Column::new(lc::MODIFIES.into(), col64(|l| l.modifies as u64)),
        Column::new(lc::LOAD_BYTES.into(), col64(|l| l.load_bytes)),
        Column::new(lc::STORE_BYTES.into(), col64(|l| l.store_bytes)),
        Column::new(
            lc::ELEMENT.into(),
            rows.iter()
                .map(|&r| element[r].clone().unwrap_or_default())
                .collect::<Vec<String>>(),
        ),
    ])
}

/// Gives blocks that share a name instance numbers: `rows[i]#1`, `#2`, ...
/// in order of first appearance. A name used once stays plain.
fn number_instances(vars: &mut [Variable]) {
    let mut count: HashMap<(Scope, String), u32> = HashMap::new();
    for v in vars.iter() {
        if !v.base_name.is_empty() {
            *count.entry((v.scope, v.base_name.clone())).or_default() += 1;
        }
    }
    let mut seen: HashMap<(Scope, String), u32> = HashMap::new();
    for v in vars.iter_mut() {
        if v.base_name.is_empty() {
            continue;
        }
        let key = (v.scope, v.base_name.clone());
        if count[&key] > 1 {
            let k = seen.entry(key).or_default();
            *k += 1;
            v.name = format!("{}#{}", v.base_name, k);
        }
    }
    // Heap and stack names may still collide (the heap block `arr` and the
    // stack pointer variable `arr` that holds its address): the heap block
    // keeps the plain name, as it is the array users mean; then globals;
    // later claimants are qualified by scope (`arr@S`).
    let mut taken: HashMap<String, ()> = HashMap::new();
    for scope in [Scope::Heap, Scope::Global, Scope::Stack] {
        for v in vars.iter_mut().filter(|v| v.scope == scope) {
            if taken.contains_key(&v.name) {
                v.name = format!("{}@{}", v.name, v.scope.code());
            }
            taken.insert(v.name.clone(), ());
        }
    }
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
            vars.iter()
                .map(|v| {
                    v.dims
                        .iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join("x")
                })
                .collect::<Vec<_>>(),
        ),
    ])
}

/// Whether a name came from a fallback, for messages.
pub fn is_fallback(q: &NameQuality) -> bool {
    matches!(q, NameQuality::Fallback { .. })
}

/// Analyses a Gleipnir text trace (`load_trace FILE.txt`): the same tables
/// as [`analyse`], with names taken from the trace's own `LV`/`LS`/`GV`/`GS`
/// fields and heap blocks named from their allocation site line via
/// [`Namer::heap_name_at`]. Stack and global variables have no base address
/// in such traces: the lowest address seen is used as the base.
pub fn analyse_gleipnir(path: &Path, namer: &mut dyn Namer) -> Result<Analysis, FilterError> {
    analyse_gleipnir_with(path, namer, &mut |_| true)
}

fn stopped_note(n: u64) -> String {
    format!(
        "the analysis was interrupted after {n} accesses: it covers the accesses up to that point. \
         Run memory_trace_analysis again for all of them."
    )
}

/// [`analyse_gleipnir`] with a progress callback, as for [`analyse_with`].
pub fn analyse_gleipnir_with(
    path: &Path,
    namer: &mut dyn Namer,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<Analysis, FilterError> {
    use crate::trace::gleipnir::{GlEvent, GlName, GleipnirReader};
    let mut reader = GleipnirReader::open(path).map_err(|e| FilterError::Import(e.to_string()))?;
    let mut b = Builder::new(namer);
    let mut summary = TraceSummary::default();
    // (scope, name) -> var id; interned names are small dense ids.
    let mut named: HashMap<(Scope, u32), u32> = HashMap::new();
    // Per variable id: the lowest and one past the highest address seen.
    let mut extent: Vec<(u64, u64)> = Vec::new();
    let mut site_names: HashMap<u32, HeapName> = HashMap::new();
    let mut hint = NO_HINT;
    let mut saw_any = false;
    while let Some(ev) = reader
        .next_event()
        .map_err(|e| FilterError::Import(e.to_string()))?
    {
        saw_any = true;
        match ev {
            GlEvent::Access {
                op,
                addr,
                size,
                tid,
                scope,
                name,
            } => {
                let var = match (scope, &name) {
                    (Scope::Heap, _) => match b.find_block(addr) {
                        Some((_, _, blk)) => b.heap_var(blk),
                        None => b.other_var(Scope::Heap),
                    },
                    (_, GlName::Var(v)) | (_, GlName::Element { var: v, .. }) => {
                        let key = (scope, *v);
                        let id = match named.get(&key) {
                            Some(&id) => id,
                            None => {
                                let n = reader.string(*v).to_string();
                                let client = n.starts_with("_zzq_");
                                let id = b.named_var(VarName {
                                    name: n.clone(),
                                    element: n,
                                    base: 0,
                                    size: 0,
                                    elem_size: 0,
                                    dims: vec![],
                                    scope,
                                    client_request: client,
                                    frame_slot: false,
                                });
                                named.insert(key, id);
                                id
                            }
                        };
                        if extent.len() <= id as usize {
                            extent.resize(id as usize + 1, (u64::MAX, 0));
                        }
                        let e = &mut extent[id as usize];
                        e.0 = e.0.min(addr);
                        // The last byte, inclusive: an access that ends at
                        // the top of memory (2^64 - 1) has no exclusive end.
                        e.1 = e.1.max(addr.saturating_add((size as u64).max(1) - 1));
                        id
                    }
                    (s, _) => b.other_var(s),
                };
                if !b.vars[var as usize].internal {
                    // Stack and global extents grow as the trace is read:
                    // only heap blocks have a known span.
                    let v = &b.vars[var as usize];
                    let span = if v.scope == Scope::Heap {
                        (v.base, v.size)
                    } else {
                        (0, 0)
                    };
                    let rows = b.table.locs.len();
                    let row = Row {
                        op,
                        addr,
                        size,
                        tid,
                        var,
                        line: 0,
                    };
                    b.table.push(row, span, &mut hint);
                    if let GlName::Element { element, .. } = name {
                        if b.table.locs.len() > rows {
                            let e = reader.string(element).to_string();
                            b.table.elements.push((rows as u32, e));
                        }
                    }
                }
                let n = b.table.len();
                if n.is_multiple_of(PROGRESS_EVERY) && !progress(n) {
                    summary.notes.push(stopped_note(n));
                    break;
                }
            }
            GlEvent::Alloc {
                tid,
                kind,
                addr,
                size,
                site,
                ..
            } => {
                let name = match site {
                    Some(s) => match site_names.get(&s) {
                        Some(n) => n.clone(),
                        None => {
                            let n = match reader.site(s) {
                                Some(gs) => b.namer.heap_name_at(&gs.file, gs.line),
                                None => b.namer.heap_name(&[]),
                            };
                            site_names.insert(s, n.clone());
                            n
                        }
                    },
                    None => b.namer.heap_name(&[]),
                };
                b.add_block(
                    Allocation {
                        addr,
                        size,
                        var: NO_VAR,
                        kind: kind.name(),
                        tid,
                        alloc_time: b.table.len(),
                        free_time: None,
                    },
                    name,
                );
                summary.allocations += 1;
            }
            GlEvent::Free { addr, .. } => {
                let t = b.table.len();
                b.free_block(addr, t);
                summary.frees += 1;
            }
            GlEvent::Start => summary.regions += 1,
            GlEvent::ThreadCreate { .. } | GlEvent::Mmap { .. } => {}
        }
    }
    if !saw_any {
        return Err(FilterError::Import(format!(
            "{} holds no Gleipnir events: check that it is a Gleipnir trace.",
            path.display()
        )));
    }
    summary.regions = summary.regions.max(1);
    summary.complete = true;
    for (kind, n) in reader.unknown_kinds() {
        summary.notes.push(format!(
            "{n} line(s) of kind `{kind}` were not understood and were skipped."
        ));
    }
    let (bad, first) = reader.malformed();
    if let Some((line, text)) = first {
        summary.notes.push(format!(
            "{bad} malformed line(s) were skipped; the first is line {line}: `{text}`."
        ));
    }
    for (id, (lo, hi)) in extent.into_iter().enumerate() {
        if lo > hi {
            continue;
        }
        let v = &mut b.vars[id];
        v.base = lo;
        // `hi` is the last byte; a span of all 2^64 bytes saturates.
        v.size = (hi - lo).saturating_add(1);
    }
    summary.notes.extend(b.namer.take_notes());
    finish(b, summary)
}
