//! From trace events to named accesses.
//!
//! [`analyse`] streams a trace once. It keeps the live heap blocks in an
//! ordered map (with a one-entry cache, since consecutive accesses mostly
//! hit the same block), so names follow blocks through free and realloc,
//! never raw addresses: a freed address reused by a new block belongs to the
//! new block. Stack and global addresses are named through the [`Namer`],
//! cached per (instruction, stack pointer, address). The result is columnar:
//! about 37 bytes per access while building, then polars tables.
use std::collections::BTreeMap;

// A fast non-cryptographic hash map (the one polars uses): these maps are
// probed once or more per access.
use polars::prelude::PlHashMap as HashMap;
use std::path::Path;

use polars::prelude::*;

use crate::trace::format::{Event, Op};
use crate::trace::naming::{NameQuality, Namer, Scope, VarName};
use crate::trace::reader::{EndState, TraceError, TraceReader};

use super::schema::{access as ac, line as ln, variable as va};
use super::FilterError;

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
    /// Time (accesses before) of allocation, for heap blocks.
    pub alloc_time: Option<u64>,
    /// Time of free, for heap blocks that were freed.
    pub free_time: Option<u64>,
    /// Not user data (client-request block, unnamed frame slot).
    pub internal: bool,
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

/// The complete analysis of one trace.
pub struct Analysis {
    /// One row per access; see [`super::schema`].
    pub accesses: DataFrame,
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

struct Builder<'n> {
    namer: &'n mut dyn Namer,
    vars: Vec<Variable>,
    var_ids: HashMap<VarKey, u32>,
    /// (scope, base, name) of stack/global variables -> index in named_keys
    named: HashMap<(Scope, u64, String), u32>,
    heap_names: HashMap<Vec<u64>, crate::trace::naming::HeapName>,
    /// live heap blocks: start -> (end, block index)
    live: BTreeMap<u64, (u64, u32)>,
    blocks: Vec<Allocation>,
    block_names: Vec<crate::trace::naming::HeapName>,
    last_block: Option<(u64, u64, u32)>,
    stack_cache: HashMap<(u64, u64, u64, u64), Option<u32>>,
    global_cache: HashMap<u64, Option<u32>>,
    line_ids: HashMap<u64, u32>,
    lines: Vec<String>,
    line_idx: HashMap<String, u32>,
    frames: HashMap<u32, Vec<(u64, u64, u64)>>,
    region_arg_blocks: Vec<u64>,
}

impl<'n> Builder<'n> {
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
        let b = self.blocks[block as usize].clone();
        let name = self.block_names[block as usize].clone();
        self.var_for(VarKey::Heap(block), || Variable {
            name: name.name.clone(),
            base_name: name.name.clone(),
            scope: Scope::Heap,
            base: b.addr,
            size: b.size,
            elem_size: name.elem_size,
            dims: name.dims.clone(),
            site: name.site.clone(),
            alloc_time: Some(b.alloc_time),
            free_time: b.free_time,
            internal: false,
        })
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
        self.var_for(VarKey::Named(nid), || Variable {
            name: v.name.clone(),
            base_name: v.name.clone(),
            scope: v.scope,
            base: v.base,
            size: v.size,
            elem_size: v.elem_size,
            dims: v.dims.clone(),
            site: String::new(),
            alloc_time: None,
            free_time: None,
            internal: v.client_request,
        })
    }

    fn other_var(&mut self, scope: Scope) -> u32 {
        self.var_for(VarKey::Other(scope), || Variable {
            name: match scope {
                Scope::Stack => "<stack>".into(),
                Scope::Global => "<static data>".into(),
                Scope::Heap => "<other>".into(),
            },
            base_name: String::new(),
            scope,
            base: 0,
            size: 0,
            elem_size: 0,
            dims: vec![],
            site: String::new(),
            alloc_time: None,
            free_time: None,
            internal: false,
        })
    }

    fn find_block(&mut self, addr: u64) -> Option<u32> {
        if let Some((s, e, b)) = self.last_block {
            if addr >= s && addr < e {
                return Some(b);
            }
        }
        let (&s, &(e, b)) = self.live.range(..=addr).next_back()?;
        if addr < e || (s == addr && e == s) {
            self.last_block = Some((s, e, b));
            Some(b)
        } else {
            None
        }
    }

    fn name_access(&mut self, addr: u64, ip: u64, sp: u64, fp: u64, tid: u32) -> u32 {
        if let Some(b) = self.find_block(addr) {
            return self.heap_var(b);
        }
        // The stack: from the red zone below sp to 8 MiB above it.
        if addr.wrapping_add(128) >= sp && addr < sp.saturating_add(8 << 20) {
            let key = (ip, sp, fp, addr);
            let cached = match self.stack_cache.get(&key) {
                Some(c) => *c,
                None => {
                    let frames = self.frames.get(&tid).cloned().unwrap_or_default();
                    let r = self
                        .namer
                        .stack_name(ip, sp, fp, addr, &frames)
                        .map(|v| self.named_var(v));
                    self.stack_cache.insert(key, r);
                    r
                }
            };
            return cached.unwrap_or_else(|| self.other_var(Scope::Stack));
        }
        let cached = match self.global_cache.get(&addr) {
            Some(c) => *c,
            None => {
                let r = self.namer.global_name(addr).map(|v| self.named_var(v));
                self.global_cache.insert(addr, r);
                r
            }
        };
        cached.unwrap_or_else(|| self.other_var(Scope::Global))
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
}

/// Columns of the access table while they are being built.
#[derive(Default)]
struct Columns {
    time: Vec<u64>,
    op: Vec<u8>,
    addr: Vec<u64>,
    size: Vec<u32>,
    tid: Vec<u32>,
    var: Vec<u32>,
    line: Vec<u32>,
}

/// Reads the trace at `path` and names every access with `namer`.
///
/// A truncated trace is analysed up to its cut, with a note saying so; a
/// corrupt one is an error that says where. Cost: one pass over the trace,
/// memory about 37 bytes per access plus the tables.
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
    let mut b = new_builder(namer);
    let mut summary = TraceSummary {
        command: reader.header().command.clone(),
        ..Default::default()
    };
    let mut cols = Columns::default();
    let mut threads = std::collections::BTreeSet::new();
    let mut corrupt: Option<TraceError> = None;
    loop {
        let ev = match reader.next_event() {
            Ok(Some(ev)) => ev,
            Ok(None) => break,
            Err(e) => {
                corrupt = Some(e);
                break;
            }
        };
        match ev {
            Event::Access(a) => {
                let var = b.name_access(a.addr, a.ip, a.sp, a.fp, a.tid);
                let line = b.line_of(a.ip);
                cols.time.push(summary.accesses);
                cols.op.push(a.op.code());
                cols.addr.push(a.addr);
                cols.size.push(a.size);
                cols.tid.push(a.tid);
                cols.var.push(var);
                cols.line.push(line);
                summary.accesses += 1;
                threads.insert(a.tid);
                if summary.accesses.is_multiple_of(PROGRESS_EVERY) && !progress(summary.accesses) {
                    summary.notes.push(stopped_note(summary.accesses));
                    break;
                }
            }
            Event::Alloc(al) => {
                if let Some(old) = al.old_addr {
                    free_block(&mut b, old, al.time);
                }
                let name = match b.heap_names.get(&al.stack) {
                    Some(n) => n.clone(),
                    None => {
                        let n = b.namer.heap_name(&al.stack);
                        b.heap_names.insert(al.stack.clone(), n.clone());
                        n
                    }
                };
                let idx = b.blocks.len() as u32;
                b.blocks.push(Allocation {
                    addr: al.addr,
                    size: al.size,
                    var: u32::MAX,
                    kind: al.kind.name(),
                    tid: al.tid,
                    alloc_time: al.time,
                    free_time: None,
                });
                b.block_names.push(name);
                b.live.insert(al.addr, (al.addr + al.size, idx));
                b.last_block = None;
                summary.allocations += 1;
            }
            Event::Free(f) => {
                free_block(&mut b, f.addr, f.time);
                summary.frees += 1;
            }
            Event::RegionStart(r) => {
                summary.regions = summary.regions.max(r.id);
                b.frames.insert(r.tid, r.frames.clone());
                b.region_arg_blocks.push(r.arg_block);
            }
            Event::RegionStop(r) => {
                b.region_arg_blocks.push(r.arg_block);
                drop_client_request_tail(&mut cols, &mut summary, r.arg_block, r.tid);
            }
            Event::Warning { text, .. } => summary.notes.push(format!("the tool reported: {text}")),
            Event::Footer(_) => summary.complete = true,
            Event::Exit(crate::trace::format::ExitStatus::Signal(s)) => summary.notes.push(format!(
                "the program was ended by signal {s} ({}) after {} accesses; they were all analysed.",
                crate::trace::run::signal_name(s),
                summary.accesses
            )),
            Event::Exit(_) => {}
            Event::Map(m) => b.namer.on_map(&m),
            Event::Unmap { .. } | Event::ThreadCreate { .. } | Event::ThreadExit { .. } => {}
        }
    }
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
    summary.threads = threads.into_iter().collect();
    summary.notes.extend(b.namer.take_notes());

    finish(b, cols, summary)
}

fn new_builder(namer: &mut dyn Namer) -> Builder<'_> {
    Builder {
        namer,
        vars: Vec::new(),
        var_ids: HashMap::new(),
        named: HashMap::new(),
        heap_names: HashMap::new(),
        live: BTreeMap::new(),
        blocks: Vec::new(),
        block_names: Vec::new(),
        last_block: None,
        stack_cache: HashMap::new(),
        global_cache: HashMap::new(),
        line_ids: HashMap::new(),
        lines: Vec::new(),
        line_idx: HashMap::new(),
        frames: HashMap::new(),
        region_arg_blocks: Vec::new(),
    }
}

/// Turns the collected columns and variables into the tables.
fn finish(mut b: Builder, cols: Columns, summary: TraceSummary) -> Result<Analysis, FilterError> {
    // Heap blocks that were never accessed still get a variable row, so the
    // allocation info lists every block with its name.
    for i in 0..b.blocks.len() {
        let v = b.heap_var(i as u32);
        b.blocks[i].var = v;
        b.vars[v as usize].free_time = b.blocks[i].free_time;
    }
    number_instances(&mut b.vars);
    let allocations = b.blocks.clone();
    if b.lines.is_empty() {
        b.lines.push("?".into());
    }
    let accesses = build_access_table(cols)?;
    let variables = variable_table(&b.vars)?;
    let lines = DataFrame::new(vec![
        Column::new(
            ln::LINE.into(),
            (0..b.lines.len() as u32).collect::<Vec<_>>(),
        ),
        Column::new(ln::SOURCE.into(), b.lines.clone()),
    ])?;
    Ok(Analysis {
        accesses,
        variables,
        lines,
        vars: b.vars,
        allocations,
        summary,
    })
}

fn free_block(b: &mut Builder, addr: u64, time: u64) {
    if let Some((_, idx)) = b.live.remove(&addr) {
        b.blocks[idx as usize].free_time = Some(time);
        b.last_block = None;
    }
}

/// GL_STOP's macro stores its six arguments on the stack just before the
/// client request: those stores are the pin's, not the program's.
fn drop_client_request_tail(
    cols: &mut Columns,
    summary: &mut TraceSummary,
    arg_block: u64,
    tid: u32,
) {
    if arg_block == 0 {
        return;
    }
    let end = arg_block + 48;
    let mut n = 0;
    while let (Some(&a), Some(&t), Some(&op)) = (cols.addr.last(), cols.tid.last(), cols.op.last())
    {
        if t == tid && a >= arg_block && a < end && op == Op::Store.code() && n < 6 {
            cols.time.pop();
            cols.op.pop();
            cols.addr.pop();
            cols.size.pop();
            cols.tid.pop();
            cols.var.pop();
            cols.line.pop();
            summary.accesses -= 1;
            n += 1;
        } else {
            break;
        }
    }
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

fn build_access_table(cols: Columns) -> PolarsResult<DataFrame> {
    // The occurrence index: the n-th access to the same address.
    let mut seen: HashMap<u64, u32> = HashMap::with_capacity_and_hasher(1024, Default::default());
    let occurrence: Vec<u32> = cols
        .addr
        .iter()
        .map(|a| {
            let c = seen.entry(*a).or_insert(0);
            *c += 1;
            *c
        })
        .collect();
    DataFrame::new(vec![
        Column::new(ac::TIME.into(), cols.time),
        Column::new(ac::OP.into(), cols.op),
        Column::new(ac::ADDR.into(), cols.addr),
        Column::new(ac::SIZE.into(), cols.size),
        Column::new(ac::TID.into(), cols.tid),
        Column::new(ac::VAR.into(), cols.var),
        Column::new(ac::OCCURRENCE.into(), occurrence),
        Column::new(ac::LINE.into(), cols.line),
    ])
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
    let mut b = new_builder(namer);
    let mut summary = TraceSummary::default();
    let mut cols = Columns::default();
    let mut threads = std::collections::BTreeSet::new();
    // (scope, name) -> var id, and the address range seen
    let mut named: HashMap<(Scope, u32), u32> = HashMap::new();
    let mut extent: HashMap<u32, (u64, u64)> = HashMap::new();
    let mut site_names: HashMap<u32, crate::trace::naming::HeapName> = HashMap::new();
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
                        Some(blk) => b.heap_var(blk),
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
                                });
                                named.insert(key, id);
                                id
                            }
                        };
                        let e = extent.entry(id).or_insert((u64::MAX, 0));
                        e.0 = e.0.min(addr);
                        e.1 = e.1.max(addr + size as u64);
                        id
                    }
                    (s, _) => b.other_var(s),
                };
                cols.time.push(summary.accesses);
                cols.op.push(op.code());
                cols.addr.push(addr);
                cols.size.push(size);
                cols.tid.push(tid);
                cols.var.push(var);
                cols.line.push(0);
                summary.accesses += 1;
                threads.insert(tid);
                if summary.accesses.is_multiple_of(PROGRESS_EVERY) && !progress(summary.accesses) {
                    summary.notes.push(stopped_note(summary.accesses));
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
                let idx = b.blocks.len() as u32;
                b.blocks.push(Allocation {
                    addr,
                    size,
                    var: u32::MAX,
                    kind: kind.name(),
                    tid,
                    alloc_time: summary.accesses,
                    free_time: None,
                });
                b.block_names.push(name);
                b.live.insert(addr, (addr + size, idx));
                b.last_block = None;
                summary.allocations += 1;
            }
            GlEvent::Free { addr, .. } => {
                free_block(&mut b, addr, summary.accesses);
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
    for (id, (lo, hi)) in extent {
        let v = &mut b.vars[id as usize];
        v.base = lo;
        v.size = hi.saturating_sub(lo);
    }
    summary.threads = threads.into_iter().collect();
    summary.notes.extend(b.namer.take_notes());
    finish(b, cols, summary)
}
