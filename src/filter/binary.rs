//! Naming the accesses of a binary trace.
//!
//! [`BinarySource`] streams a trace once, through the reader's access fast
//! path ([`TraceReader::for_each_access`]), and names each access:
//!
//! - Heap: through the [`Registry`]'s live blocks.
//! - Stack and globals: through the [`Namer`] (DWARF), with a shadow stack
//!   per thread so that a pointer to a caller's local is named.
//! - Every instruction site keeps its last answer (the variable's address
//!   range, and for the stack the frame it holds in). At -O0 one
//!   instruction keeps touching one variable, so most accesses cost a range
//!   check and no lookup at all; the source line is cached per site too.
use polars::prelude::PlHashMap as HashMap;
use std::path::{Path, PathBuf};

use crate::trace::naming::{ElementPath, HeapName, NameQuality, Namer, Scope, VarName};
use crate::trace::record::{stop_arg_stores, Seen, StartResult, Verdict, HOLD_BACK};
use crate::trace::record::{Access, Event, ExitStatus, Op, RegionStop, SiteId, WarningKind};
use crate::trace::record::{Batch, EndState, TraceReader};

use super::access::{LineId, NamedAccess, VarId};
use super::dynblocks::OtherBlocks;
use super::error::FilterError;
use super::input::{Fill, Named, Source};
use super::model::{layout_of, member_after, MAX_LAYOUT_BYTES};
use super::model::{LayoutField, NewBlock, Span, TraceSummary, Variable};
use super::registry::Registry;
use super::roots::{self, Holder, Roots};
use super::schema::OP_STORE;

/// The x86-64 System V red zone: a leaf function may use the 128 bytes
/// below its stack pointer without moving it.
const RED_ZONE: u64 = 128;

/// How far above the stack pointer an address still counts as the thread's
/// own stack: Linux's default 8 MiB stack limit (`ulimit -s`).
const STACK_SPAN: u64 = 8 << 20;

const ANY_GENERATION: u32 = u32::MAX;
/// Notes kept of blocks whose holder's path and allocating statement give
/// different names (one per pair of names); more are counted in one line.
const MAX_DIFFER_NOTES: usize = 8;

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
    /// Source line id, once asked.
    line: Option<u32>,
    covers: Covers,
    /// The heap generation the answer depends on: heap blocks, and
    /// addresses that were in no block, must be re-checked once blocks
    /// come or go. `u32::MAX` for answers no heap event can change.
    generation: u32,
    lo: u64,
    hi: u64,
    var: u32,
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

/// A thread's shadow stack: its live frames, outermost first, as two
/// parallel stacks. `regs` is the slice [`Namer::stack_name`] takes, lent
/// as it is: no copy per lookup, so a lookup costs the frames it visits
/// (usually one), not the depth of the stack.
#[derive(Clone, Debug, Default)]
struct Shadow {
    /// Each frame's canonical frame address (CFA), or the top of its frame
    /// record where the frame keeps its CFA in memory ([`Namer::cfa_rule`]);
    /// increasing from the innermost frame out, so decreasing along the
    /// vector.
    cfa: Vec<u64>,
    /// Each frame's (last instruction seen in it before it called deeper,
    /// sp, fp).
    regs: Vec<(u64, u64, u64)>,
}

impl Shadow {
    /// The innermost frame's CFA.
    fn top_cfa(&self) -> Option<u64> {
        self.cfa.last().copied()
    }

    fn pop(&mut self) {
        self.cfa.pop();
        self.regs.pop();
    }

    fn push(&mut self, cfa: u64, regs: (u64, u64, u64)) {
        self.cfa.push(cfa);
        self.regs.push(regs);
    }

    fn clear(&mut self) {
        self.cfa.clear();
        self.regs.clear();
    }
}

/// The live frames of thread `tid`, outermost first, as
/// [`Namer::stack_name`] takes them (empty for a thread not seen).
fn frames_of(shadow: &[Shadow], tid: u32) -> &[(u64, u64, u64)] {
    shadow.get(tid as usize).map_or(&[], |s| &s.regs)
}

impl Default for SiteCache {
    fn default() -> Self {
        SiteCache {
            line: None,
            covers: Covers::Nothing,
            generation: ANY_GENERATION,
            lo: 0,
            hi: 0,
            var: 0,
            cfa: CfaRule::NotAsked,
        }
    }
}

/// A binary trace being named.
pub(crate) struct BinarySource<'n> {
    reader: TraceReader<std::fs::File>,
    path: PathBuf,
    n: Naming<'n>,
}

/// The naming state of a binary trace (apart from the reader, so that the
/// reader's access closure can borrow it).
struct Naming<'n> {
    namer: &'n mut dyn Namer,
    reg: Registry,
    heap_names: HashMap<Vec<u64>, HeapName>,
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
    shadow: Vec<Shadow>,
    /// Thread, sp and fp of the previous access, and its instruction and
    /// site.
    last_regs: (u32, u64, u64),
    last_ip: u64,
    last_site: usize,
    /// Member paths of the locations of structured stack variables and
    /// globals, by (address, variable): bounded by their sizes.
    elements: HashMap<(u64, u32), String>,
    /// Variable-length arrays, `alloca` and mapped blocks: when they
    /// begin and end.
    other: OtherBlocks,
    /// Structured variables whose layout was asked for (once each).
    layout_asked: std::collections::HashSet<u32>,
    /// Layouts of heap element types, by (type, element bytes, whether a
    /// block holds several): asked once per type, not once per block.
    heap_layouts: HashMap<(String, u64, bool), Vec<LayoutField>>,
    /// Accesses named so far (those handed on, less the pins' own).
    named: u64,
    /// Accesses left out because they were the pins' own (the client
    /// request's argument block), for the note that explains the count.
    pins_dropped: u64,
    /// The highest thread number the trace created (numbers are never
    /// reused, and the dataset keeps them as 16 bits).
    max_thread: u32,
    /// GL_START's result store, while it is still to come.
    start_result: Option<StartResult>,
    /// What the tool said of an exec the program called, and the accesses
    /// named before it, until an exec that failed cancels it: a trace that
    /// ends after one is partial for that reason.
    exec: Option<(String, u64, bool)>,
    /// Whether a region is open (between REGION_START and REGION_STOP).
    in_region: bool,
    /// Sites the statement reader could not name: the names their blocks'
    /// holders gave every one of them, or `None` when some block kept the
    /// site's name.
    rooted_sites: std::collections::BTreeMap<String, Option<std::collections::BTreeSet<String>>>,
    /// Where the program keeps heap blocks' addresses (format 6).
    roots: Roots,
    summary: TraceSummary,
}

impl<'n> BinarySource<'n> {
    /// Opens the trace at `path` for naming with `namer`.
    pub(crate) fn open(path: &Path, namer: &'n mut dyn Namer) -> Result<Self, FilterError> {
        let reader = TraceReader::open(path)?;
        let summary = TraceSummary {
            command: reader.header().command.clone(),
            scope: reader.header().regions.clone(),
            ..Default::default()
        };
        Ok(BinarySource {
            reader,
            path: path.to_path_buf(),
            n: Naming {
                namer,
                reg: Registry::default(),
                heap_names: HashMap::default(),
                stack_cache: HashMap::default(),
                global_cache: HashMap::default(),
                sites: Vec::new(),
                line_ids: HashMap::default(),
                lines: Vec::new(),
                line_idx: HashMap::default(),
                shadow: Vec::new(),
                last_regs: (u32::MAX, 0, 0),
                last_ip: 0,
                last_site: usize::MAX,
                elements: HashMap::default(),
                other: OtherBlocks::default(),
                layout_asked: Default::default(),
                heap_layouts: HashMap::default(),
                named: 0,
                pins_dropped: 0,
                max_thread: 0,
                start_result: None,
                exec: None,
                in_region: false,
                roots: Roots::default(),
                rooted_sites: Default::default(),
                summary,
            },
        })
    }
}

impl Source for BinarySource<'_> {
    fn fill(&mut self, out: &mut Vec<NamedAccess>, room: usize) -> Result<Fill, FilterError> {
        let n = &mut self.n;
        while out.len() < room {
            let limit = (room - out.len()) as u64;
            let batch = self.reader.for_each_access(limit, |a| n.on_access(a, out));
            match batch {
                Ok(Batch::Limit) => {}
                Ok(Batch::End) => return Ok(Fill::End),
                Ok(Batch::Event(ev)) => {
                    if let Some(fill) = n.on_event(ev, out) {
                        return Ok(fill);
                    }
                }
                Err(e) => {
                    n.summary.mark_partial(format!(
                        "the trace is corrupt after its first {} accesses",
                        self.reader.accesses_read()
                    ));
                    n.summary
                        .notes
                        .push(format!("{e} Analysis continued with what was read."));
                    return Ok(Fill::End);
                }
            }
        }
        Ok(Fill::Full)
    }

    fn span(&self, var: VarId) -> Span {
        self.n
            .reg
            .vars
            .get(var.index())
            .map_or(Span::default(), |v| Span {
                base: v.base,
                size: v.size,
                elem: u64::from(v.elem_size),
            })
    }

    fn element(&mut self, addr: u64, var: VarId) -> Option<String> {
        let n = &mut self.n;
        if !n.reg.is_structured(var.0) {
            return None;
        }
        match n.reg.vars.get(var.index())?.scope {
            Scope::Heap => n.heap_element(addr, var.0),
            _ => n.elements.get(&(addr, var.0)).cloned(),
        }
    }

    fn vars(&self) -> usize {
        self.n.reg.vars.len()
    }

    fn spans_final(&self) -> bool {
        true
    }

    fn finish(self: Box<Self>) -> Named {
        let BinarySource { reader, path, n } = *self;
        let mut n = n;
        n.name_from_roots();
        n.heap_layouts();
        let end = reader.end_state();
        if let (
            EndState::Truncated {
                partial_bytes: 0, ..
            },
            Some((_, _, false)),
        ) = (end, &n.exec)
        {
            // An exec after the regions: each was closed, so the analysis
            // is whole even though the tool could not write its footer
            // (the tool's warning, among the notes, says so).
            n.summary.complete = true;
        } else if let EndState::Truncated {
            offset,
            partial_bytes,
        } = end
        {
            let exec = n.exec.take();
            if let Some((text, at, _)) = &exec {
                n.summary
                    .mark_partial(format!("{text}, after {at} accesses"));
            }
            n.summary.mark_partial(format!(
                "the trace ends without its footer after {} accesses: the program crashed, was killed, \
                 left a region open at exit, or the disk filled",
                n.named
            ));
            n.summary.notes.push(format!(
                "the trace {} ends without its footer after {} accesses ({offset} bytes{}): {}; everything up to that point was analysed.",
                path.display(),
                n.named,
                if *partial_bytes > 0 {
                    format!(", plus {partial_bytes} bytes of a cut record")
                } else {
                    String::new()
                },
                match exec {
                    Some(_) => "the program called exec there",
                    None => "the program crashed or was interrupted",
                }
            ));
        }
        if n.max_thread > u16::MAX as u32 {
            n.summary.notes.push(format!(
                "the program created {} threads over its run; the dataset keeps thread numbers up to {} and \
                 stores every later thread as {}, so per-thread counts lump those threads together.",
                n.max_thread,
                u16::MAX,
                u16::MAX
            ));
        }
        if n.pins_dropped > 0 {
            n.summary.notes.push(format!(
                "{} of the {} recorded accesses were left out: they are GL_START's and GL_STOP's own \
                 stores and loads of their client-request arguments on the stack, not the program's.",
                n.pins_dropped,
                n.named + n.pins_dropped
            ));
        }
        let notes = n.namer.take_notes();
        let notes = notes
            .into_iter()
            .map(|note| n.reword_site_note(note))
            .collect::<Vec<_>>();
        let accessed = n.reg.accessed_sites();
        let (inside, outside): (Vec<String>, Vec<String>) = notes
            .into_iter()
            .partition(|note| noted_site(note).is_none_or(|site| accessed.contains(site)));
        n.summary.notes.extend(inside);
        n.summary.outside_notes = outside;
        Named {
            registry: n.reg,
            lines: n.lines,
            summary: n.summary,
        }
    }
}

impl Naming<'_> {
    /// Names one access and appends it to `out` (the pins' own
    /// client-request block is counted and left out).
    #[inline]
    fn on_access(&mut self, a: &Access, out: &mut Vec<NamedAccess>) {
        if (a.tid, a.sp, a.fp) != self.last_regs {
            self.regs_changed(a);
        }
        self.last_ip = a.ip;
        self.last_site = a.site.index();
        if let Some((block, offset)) = self.roots.pending.take() {
            self.note_store(a, block, offset);
        }
        if let Some(watch) = self.start_result {
            match watch.check(a.tid, a.ip, a.op == Op::Store) {
                Verdict::Watching => {}
                Verdict::Own => {
                    self.start_result = None;
                    self.pins_dropped += 1;
                    return;
                }
                Verdict::Program => self.start_result = None,
            }
        }
        let var = self.name(a);
        if self.reg.vars[var as usize].internal {
            self.pins_dropped += 1;
            return;
        }
        // A heap block's member paths follow from its type and base alone,
        // so they are asked at the end, once per location; a stack
        // variable's or global's need the frame at hand.
        if self.reg.is_structured(var)
            && self.reg.vars[var as usize].scope != Scope::Heap
            && !self.elements.contains_key(&(a.addr, var))
        {
            let e = self.element_at(a, var).unwrap_or_default();
            self.elements.insert((a.addr, var), e);
            if self.layout_asked.insert(var) {
                self.stack_or_global_layout(a, var);
            }
        }
        let line = self.site_line(a.site, a.ip);
        self.named += 1;
        out.push(NamedAccess {
            time: 0,
            op: a.op.code(),
            addr: a.addr,
            size: a.size,
            tid: a.tid,
            var: VarId(var),
            line: LineId(line),
        });
    }

    /// Handles an event between accesses; returns how `fill` ends when the
    /// event ends a batch (a new region).
    fn on_event(&mut self, ev: Event, out: &mut Vec<NamedAccess>) -> Option<Fill> {
        match ev {
            Event::Access(_) => unreachable!("accesses go to the closure"),
            Event::Alloc(al) => self.on_alloc(al),
            Event::Free(f) => {
                self.reg.free_block(f.addr, f.time);
                self.summary.frees += 1;
            }
            Event::RegionStart(r) => {
                self.in_region = true;
                // The figures' access order counts the accesses kept.
                if self.summary.region_starts.len() < super::model::MAX_REGION_STARTS {
                    self.summary.region_starts.push(self.named);
                }
                self.summary.regions = self.summary.regions.max(r.id);
                self.start_frames(r.tid, &r.frames);
                self.roots.region_start(r.tid, &r.frames);
                self.start_result = StartResult::after(&r);
                return Some(Fill::Region(r.id));
            }
            Event::RegionStop(r) => {
                self.in_region = false;
                self.drop_client_request_tail(out, &r)
            }
            Event::Warning {
                kind: WarningKind::RegionCalls,
                text,
            } => self.summary.note_region_entries(&text),
            Event::Warning { kind, text } => {
                match kind {
                    WarningKind::Exec => {
                        self.exec = Some((text.clone(), self.named, self.in_region))
                    }
                    WarningKind::ExecFailed => self.exec = None,
                    _ => {}
                }
                self.summary
                    .notes
                    .push(format!("the tool reported: {text}"))
            }
            Event::Footer(_) => self.summary.complete = true,
            Event::Exit(ExitStatus::Signal(s)) => {
                let name = crate::trace::record::signal_name(s);
                self.summary.mark_partial(format!(
                    "the program was ended by signal {s} ({name}) after {} accesses",
                    self.named
                ));
                self.summary.notes.push(format!(
                    "the program was ended by signal {s} ({name}) after {} accesses; they were all analysed.",
                    self.named
                ))
            }
            Event::Exit(_) => {}
            Event::Map(m) => self.namer.on_map(&m),
            Event::ThreadExit { tid } => {
                self.shadow_of(tid).clear();
                let time = self.now();
                self.other.thread_exit(tid, time, &mut self.reg);
            }
            Event::StackAlloc(s) => self.other.on_stack_alloc(&s, &mut self.reg, self.namer),
            Event::Mmap(m) => self.other.on_mmap(&m, &mut self.reg, self.namer),
            Event::Unmap { start, len } => {
                let time = self.now();
                self.other.on_unmap(start, len, time, &mut self.reg)
            }
            Event::ThreadCreate { child, .. } => self.max_thread = self.max_thread.max(child),
            Event::Roots(words) => {
                self.ask_registers();
                for (at, value) in words {
                    self.note_root(at, value);
                }
            }
            Event::PtrStore { block, offset } => self.roots.pending = Some((block, offset)),
            Event::RootReg { tid, reg, value } => self.note_register(tid, reg, value),
            Event::Sync(_) | Event::InstrCount { .. } => {}
        }
        None
    }

    /// Records where the store `a` put the address of the block at
    /// `block` (`offset` bytes into it): a member or element of another
    /// block, a stack variable or a global.
    fn note_store(&mut self, a: &Access, block: u64, offset: u64) {
        let Some((_, _, b)) = self.reg.find_block(block) else {
            return;
        };
        self.note_holder(b, offset, a.addr, a.tid, (a.ip, a.sp, a.fp));
    }

    /// Records a snapshot word at `at` that holds `value`: the word as a
    /// variable, and the locals of the callers whose registers a frame
    /// saved there.
    fn note_root(&mut self, at: u64, value: u64) {
        let Some((start, _, b)) = self.reg.find_block(value) else {
            return;
        };
        let (tid, regs) = self.roots.snapshot_at();
        self.note_holder(b, value - start, at, tid, regs);
        for local in self.roots.regs.saved_at(at).to_vec() {
            self.add_register_holder(b, tid, local, value - start);
        }
    }

    /// Asks the namer, once per region with a snapshot, which locals the
    /// opener's registers held at its start.
    fn ask_registers(&mut self) {
        if let Some(frames) = self.roots.regs.frames.take() {
            let holders = self.namer.register_holders(&frames);
            self.roots.regs.fill(holders);
        }
    }

    /// Records that thread `tid`'s register `reg` held `value` at the
    /// region's start: a holder for each local of the opener's stack that
    /// register held (other threads' frames are not known).
    fn note_register(&mut self, tid: u32, reg: u8, value: u64) {
        if self.roots.snapshot_at().0 != tid {
            return;
        }
        let Some((start, _, b)) = self.reg.find_block(value) else {
            return;
        };
        self.ask_registers();
        for local in self.roots.regs.in_register(u16::from(reg)).to_vec() {
            self.add_register_holder(b, tid, local, value - start);
        }
    }

    /// Adds a local a register held, pointing `offset` bytes into block
    /// `b`, as a holder of `b`.
    fn add_register_holder(&mut self, b: u32, tid: u32, local: roots::RegLocal, offset: u64) {
        let rank = self.roots.stack_rank(tid, local.sp, offset);
        self.roots.note_pointee(b, offset, &local.pointee);
        self.roots.add(b, rank, Holder::Var(local.path));
    }

    /// Records that the word at `at` holds a pointer `offset` bytes into
    /// block `b`, naming `at` as an access of thread `tid` with registers
    /// `regs` (ip, sp, fp) and that thread's live frames would be. A word
    /// inside a block needs no frames: most snapshot words are.
    fn note_holder(&mut self, b: u32, offset: u64, at: u64, tid: u32, regs: (u64, u64, u64)) {
        if let Some((start, _, parent)) = self.reg.find_block(at) {
            if parent != b {
                let holder = Holder::Block {
                    parent,
                    offset: at - start,
                };
                self.roots.add(b, Roots::other_rank(false, offset), holder);
            }
            return;
        }
        let (ip, sp, fp) = regs;
        let on_stack = at.wrapping_add(RED_ZONE) >= sp && at < sp.saturating_add(STACK_SPAN);
        let (found, rank) = if on_stack {
            (
                self.namer
                    .stack_name(ip, sp, fp, at, frames_of(&self.shadow, tid)),
                self.roots.stack_rank(tid, at, offset),
            )
        } else {
            (self.namer.global_name(at), Roots::other_rank(true, offset))
        };
        let Some(found) = found else { return };
        if let Some(path) = roots::var_path(&found) {
            self.roots.note_pointee(b, offset, &found.pointee);
            self.roots.add(b, rank, Holder::Var(path));
        }
    }

    /// Names heap blocks by the paths of their holders, where they have
    /// any; the statement reader's name stays otherwise, and a note says
    /// where the two disagree.
    fn name_from_roots(&mut self) {
        if self.roots.evidence == 0 {
            return;
        }
        let names = self.reg.block_names().to_vec();
        let reg = &self.reg;
        let namer = &mut *self.namer;
        let roots = &self.roots;
        // A block's members are read with the type its allocation
        // statement gives, else with the largest record type its holders
        // point to (a type the source spells through a macro,
        // `pcre2_match_data` for DWARF's `pcre2_match_data_8`, names none
        // DWARF knows; a pointer to its first member points to a smaller
        // one). A byte no member covers has no member path.
        let mut member = |parent: u32, offset: u64| {
            let (_, size, ty) = reg.block_layout(parent)?;
            let name = &names[parent as usize].name;
            let e = Some(ty.as_str())
                .filter(|t| !t.is_empty())
                .and_then(|t| namer.heap_element(t, name, size, offset))
                .or_else(|| {
                    let widest = roots
                        .pointees(parent)
                        .iter()
                        .max_by_key(|t| namer.record_size(t).unwrap_or(0))?;
                    namer.heap_element(widest, name, size, offset)
                })?;
            let member = e
                .path
                .strip_prefix(name.as_str())
                .filter(|m| !m.is_empty())?;
            Some(ElementPath {
                path: member.to_string(),
                internal_at: e.internal_at.map(|at| at.saturating_sub(name.len())),
            })
        };
        let roots::Resolution { paths, distrusted } = roots.resolve(&names, &mut member);
        // Sites the statement reader could not name, and whether every
        // block of each was named by its holders (and with which names).
        for (b, n) in names.iter().enumerate() {
            if n.quality != NameQuality::Exact {
                let entry = self
                    .rooted_sites
                    .entry(n.site.clone())
                    .or_insert_with(|| Some(Default::default()));
                match (paths.get(&(b as u32)), entry.as_mut()) {
                    (Some(p), Some(set)) => {
                        set.insert(p.path.clone());
                    }
                    _ => *entry = None,
                }
            }
        }
        let unrooted = names
            .iter()
            .enumerate()
            .filter(|(b, _)| !paths.contains_key(&(*b as u32)))
            .map(|(_, n)| n.name.as_str());
        let owners = roots::owner_rows(
            paths.values().map(|r| (r.path.as_str(), r.container)),
            unrooted,
        );
        let mut differ: std::collections::BTreeMap<(String, String), u64> = Default::default();
        let mut folded: std::collections::BTreeMap<String, String> = Default::default();
        let mut blocks: Vec<(u32, String)> = paths.into_iter().map(|(b, r)| (b, r.path)).collect();
        blocks.sort_unstable();
        for (b, path) in blocks {
            let old = &names[b as usize];
            if old.name != path && old.quality == NameQuality::Exact {
                *differ.entry((path.clone(), old.name.clone())).or_default() += 1;
            }
            match owners.get(&path) {
                Some(owner) => {
                    folded.insert(owner.clone(), path.clone());
                    self.reg.rename_block(b, owner.clone(), Some(path));
                }
                None => self.reg.rename_block(b, path, None),
            }
        }
        self.note_owners(&folded);
        self.note_distrusted(&distrusted, &names);
        for ((path, old), n) in differ.iter().take(MAX_DIFFER_NOTES) {
            self.summary.notes.push(format!(
                "{n} heap block{} named `{path}` by where the program keeps {}; the statement that \
                 allocated {} names {} `{old}`.",
                if *n == 1 { " is" } else { "s are" },
                if *n == 1 { "its address" } else { "their addresses" },
                if *n == 1 { "it" } else { "them" },
                if *n == 1 { "it" } else { "them" },
            ));
        }
        if differ.len() > MAX_DIFFER_NOTES {
            self.summary.notes.push(format!(
                "{} more names differ between where the program keeps blocks' addresses and the \
                 statements that allocated them.",
                differ.len() - MAX_DIFFER_NOTES
            ));
        }
    }

    /// Notes the blocks whose holders reach them only through a long
    /// chain of other blocks (see [`roots::Resolution::distrusted`]) and
    /// what they are named instead, eight at most, then a count.
    fn note_distrusted(&mut self, distrusted: &[(u32, String)], names: &[HeapName]) {
        let mut by: std::collections::BTreeMap<(String, String), u64> = Default::default();
        for (b, path) in distrusted {
            let Some(n) = names.get(*b as usize) else {
                continue;
            };
            let kept = if n.quality == NameQuality::Exact {
                format!("named `{}`, the allocating statement's name", n.name)
            } else {
                format!("named by the allocation site, {}", n.site)
            };
            *by.entry((path.clone(), kept)).or_default() += 1;
        }
        for ((path, kept), n) in by.iter().take(MAX_DIFFER_NOTES) {
            self.summary.notes.push(format!(
                "{n} heap block{} reached only through a chain of more than {} other blocks \
                 (`{path}`), a path too long to trust as a name: {kept}.",
                if *n == 1 { " is" } else { "s are" },
                roots::MAX_TRUSTED_HOPS,
            ));
        }
        if by.len() > MAX_DIFFER_NOTES {
            self.summary.notes.push(format!(
                "{} more groups of heap blocks reached only through long chains of blocks keep \
                 the statement's name or their site.",
                by.len() - MAX_DIFFER_NOTES
            ));
        }
    }

    /// Notes the rows named by the object that owns their blocks (`x` for
    /// `x.coefs`), eight at most, then a count.
    fn note_owners(&mut self, folded: &std::collections::BTreeMap<String, String>) {
        for (owner, path) in folded.iter().take(MAX_DIFFER_NOTES) {
            self.summary.notes.push(format!(
                "the heap row `{owner}` is the memory of `{path}`, the only heap memory `{owner}` \
                 reaches; set_heap_grouping instances shows the full path."
            ));
        }
        if folded.len() > MAX_DIFFER_NOTES {
            self.summary.notes.push(format!(
                "{} more heap rows are named by the object that owns their memory; \
                 set_heap_grouping instances shows the full paths.",
                folded.len() - MAX_DIFFER_NOTES
            ));
        }
    }

    /// The statement reader's note that the blocks of a site are named by
    /// the site, reworded when their holders named every one of them.
    fn reword_site_note(&self, note: String) -> String {
        for (site, names) in &self.rooted_sites {
            let Some(names) = names else { continue };
            let head = format!("heap blocks allocated at {site} are named {site}: ");
            if let Some(why) = note.strip_prefix(&head) {
                let list: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                return format!(
                    "heap blocks allocated at {site} are named by where the program keeps their \
                     addresses ({}); the statement that allocated them was not read: {why}",
                    list.join(", ")
                );
            }
        }
        note
    }

    /// The trace's time: accesses read so far (named, or the pins' own).
    fn now(&self) -> u64 {
        self.named + self.pins_dropped
    }

    /// A block is allocated (by realloc: the old one is freed first).
    fn on_alloc(&mut self, al: crate::trace::record::AllocEvent) {
        if let Some(old) = al.old_addr {
            self.reg.free_block(old, al.time);
        }
        let name = match self.heap_names.get(&al.stack) {
            Some(n) => n.clone(),
            None => {
                let n = self.namer.heap_name(&al.stack);
                self.heap_names.insert(al.stack.clone(), n.clone());
                n
            }
        };
        self.reg.add_block(
            NewBlock {
                addr: al.addr,
                size: al.size,
                kind: al.kind.name(),
                tid: al.tid,
                alloc_time: al.time,
                scope: Scope::Heap,
            },
            name,
        );
        // A block inherited at fork() names accesses but was not
        // allocated by this process.
        self.summary.allocations += u64::from(!al.inherited);
    }

    /// Leaves out GL_STOP's own argument stores among the last accesses of
    /// `out` (see [`stop_arg_stores`]; the driver holds back
    /// [`HOLD_BACK`] of them for this).
    fn drop_client_request_tail(&mut self, out: &mut Vec<NamedAccess>, stop: &RegionStop) {
        let from = out.len().saturating_sub(HOLD_BACK);
        let recent: Vec<Seen> = out[from..]
            .iter()
            .map(|a| Seen {
                tid: a.tid,
                store: a.op == OP_STORE,
                addr: a.addr,
            })
            .collect();
        for i in stop_arg_stores(&recent, stop) {
            out.remove(from + i);
            self.named -= 1;
            self.pins_dropped += 1;
        }
    }

    /// The member path of a location of a heap block of a structure type
    /// (`h[2].counts`), from the namer. Costs one DWARF query.
    fn heap_element(&mut self, addr: u64, var: u32) -> Option<String> {
        let v = &self.reg.vars[var as usize];
        let (ty, name, size, base) = (&v.elem_type, &v.base_name, v.size, v.base);
        self.namer
            .heap_element(ty, name, size, addr.wrapping_sub(base))
            .map(|e| e.path)
    }

    /// Sets the layout ([`Variable::layout`]) of structured stack variable
    /// or global `var` from the member path of each byte of its first
    /// element, named in the frame of access `a`. Costs one DWARF query
    /// per byte of the element (at most [`MAX_LAYOUT_BYTES`]), once per
    /// variable row.
    fn stack_or_global_layout(&mut self, a: &Access, var: u32) {
        let v = &self.reg.vars[var as usize];
        let (scope, base, name) = (v.scope, v.base, v.base_name.clone());
        let elem = element_bytes(v);
        if elem == 0 || elem > MAX_LAYOUT_BYTES {
            return;
        }
        let frames = match scope {
            Scope::Stack => frames_of(&self.shadow, a.tid),
            _ => &[],
        };
        let paths: Vec<Option<String>> = (0..elem)
            .map(|off| {
                let found = match scope {
                    Scope::Stack => self.namer.stack_name(a.ip, a.sp, a.fp, base + off, frames),
                    Scope::Global => self.namer.global_name(base + off),
                    Scope::Heap => None,
                }?;
                (found.name == name && found.base == base)
                    .then(|| member_after(&found.element, &found.name).map(str::to_string))
                    .flatten()
            })
            .collect();
        if let Some(layout) = layout_of(&paths) {
            self.reg.vars[var as usize].layout = layout;
        }
    }

    /// Sets the layout of every structured heap block from the member
    /// path of each byte of one element of its type. Costs one DWARF query
    /// per byte of each distinct (type, element size) pair.
    fn heap_layouts(&mut self) {
        for var in 0..self.reg.vars.len() as u32 {
            let v = &self.reg.vars[var as usize];
            if v.scope != Scope::Heap || !self.reg.is_structured(var) {
                continue;
            }
            let elem = element_bytes(v);
            if elem == 0 || elem > MAX_LAYOUT_BYTES {
                continue;
            }
            let (ty, name, size) = (v.elem_type.clone(), v.base_name.clone(), v.size);
            let key = (ty.clone(), elem, size > elem);
            if !self.heap_layouts.contains_key(&key) {
                let paths: Vec<Option<String>> = (0..elem)
                    .map(|off| {
                        let e = self.namer.heap_element(&ty, &name, size, off)?;
                        member_after(&e.path, &name).map(str::to_string)
                    })
                    .collect();
                let layout = layout_of(&paths).unwrap_or_default();
                self.heap_layouts.insert(key.clone(), layout);
            }
            self.reg.vars[var as usize].layout = self.heap_layouts[&key].clone();
        }
    }

    /// The member path of a new location of a structured stack variable or
    /// global (`h.counts`), from the namer, for the frame of access `a`.
    /// Costs one DWARF query per location.
    fn element_at(&mut self, a: &Access, var: u32) -> Option<String> {
        let v = &self.reg.vars[var as usize];
        let (scope, name) = (v.scope, v.base_name.clone());
        let found = match scope {
            Scope::Stack => {
                let frames = frames_of(&self.shadow, a.tid);
                self.namer.stack_name(a.ip, a.sp, a.fp, a.addr, frames)
            }
            Scope::Global => self.namer.global_name(a.addr),
            Scope::Heap => None,
        }?;
        (found.name == name).then_some(found.element)
    }

    /// Names an access of a binary trace, trying the site's last answer
    /// first. Cost: a range check on a hit; a block-map lookup and at worst
    /// a DWARF query on a miss.
    #[inline]
    fn name(&mut self, a: &Access) -> u32 {
        let site = a.site.index();
        if let Some(c) = self.sites.get(site) {
            if a.addr >= c.lo
                && a.addr < c.hi
                && (c.generation == ANY_GENERATION || c.generation == self.reg.heap_generation)
            {
                let valid = match c.covers {
                    // Not when the thread runs on a stack inside the block
                    // (a signal handler on a sigaltstack): see name_slow.
                    Covers::Any => a.sp <= c.lo || a.sp >= c.hi,
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
            self.reg.heap_generation
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
        let block = self.reg.find_block(addr);
        // A thread running on a stack inside a block (a signal handler on a
        // sigaltstack, a coroutine's stack): addresses from its stack
        // pointer's red zone up are its frames, not the block's data. (A
        // variable-length array starts at the stack pointer, not above it.)
        let on_stack_inside =
            |&(s, e, _): &(u64, u64, u32)| sp > s && sp < e && addr.wrapping_add(RED_ZONE) >= sp;
        if let Some((s, e, b)) = block.filter(|blk| !on_stack_inside(blk)) {
            return (
                self.reg.heap_var(b),
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
                    let mut frames = frames_of(&self.shadow, other.unwrap_or(tid));
                    // Another thread's innermost frame stands for its
                    // registers.
                    let (ip, sp, fp) = match (other, frames.split_last()) {
                        (Some(_), Some((&inner, outer))) => {
                            frames = outer;
                            inner
                        }
                        _ => (ip, sp, fp),
                    };
                    match self.namer.stack_name(ip, sp, fp, addr, frames) {
                        Some(v) => {
                            let (lo, hi) = covered(&v, addr);
                            let id = self.reg.named_var(v);
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
                None => (self.reg.other_var(Scope::Stack), covers, false, lo, hi),
            };
        }
        let (var, lo, hi) = match self.global_cache.get(&addr) {
            Some(&c) => (c, addr, addr + 1),
            None => match self.namer.global_name(addr) {
                Some(v) => {
                    let (lo, hi) = covered(&v, addr);
                    let id = self.reg.named_var(v);
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
            None => (
                self.reg.other_var(Scope::Global),
                Covers::Any,
                false,
                lo,
                hi,
            ),
        }
    }

    /// Another thread whose live frames span `addr`, for accesses through
    /// pointers to a thread's locals. Scans the threads: misses only.
    fn thread_owning(&self, addr: u64, tid: u32) -> Option<u32> {
        self.shadow.iter().enumerate().find_map(|(u, st)| {
            let (outer_cfa, inner) = (st.cfa.first()?, st.regs.last()?);
            let inside = addr.wrapping_add(128) >= inner.1 && addr < outer_cfa.saturating_add(256);
            (u as u32 != tid && inside).then_some(u as u32)
        })
    }

    fn shadow_of(&mut self, tid: u32) -> &mut Shadow {
        let t = tid as usize;
        if t >= self.shadow.len() {
            self.shadow.resize(t + 1, Shadow::default());
        }
        &mut self.shadow[t]
    }

    /// Records that thread `tid` runs `ip` in the frame whose CFA is `cfa`:
    /// frames below it have returned, the frame itself is updated, and a
    /// new frame is pushed. Cost: a few comparisons per call or return.
    fn enter_frame(&mut self, tid: u32, cfa: u64, ip: u64, sp: u64, fp: u64) {
        let st = self.shadow_of(tid);
        while st.top_cfa().is_some_and(|top| top < cfa) {
            st.pop();
        }
        match (st.top_cfa(), st.regs.last_mut()) {
            (Some(top), Some(regs)) if top == cfa => *regs = (ip, sp, fp),
            _ => st.push(cfa, (ip, sp, fp)),
        }
    }

    /// Called when an access's thread, sp or fp differ from the previous
    /// access's: the frame the previous access ran in keeps its last
    /// instruction (the call site, if it called deeper), and the access's
    /// own frame is entered. The previous instruction is kept only when its
    /// own rule places it in that frame: one whose rule is unknown (the
    /// epilogue of a realigned frame, which computes its CFA in r10) would
    /// leave the frame with an instruction its naming cannot use.
    #[cold]
    fn regs_changed(&mut self, a: &Access) {
        let (prev_tid, prev_sp, prev_fp) = self.last_regs;
        if prev_tid == a.tid && self.last_site != usize::MAX {
            let ip = self.last_ip;
            if let CfaRule::Known(from_fp, off) = self.site_rule(self.last_site, ip) {
                let cfa = if from_fp { prev_fp } else { prev_sp }.wrapping_add_signed(off);
                if let Some(st) = self.shadow.get_mut(a.tid as usize) {
                    if let (Some(top), Some(regs)) = (st.top_cfa(), st.regs.last_mut()) {
                        if top == cfa {
                            regs.0 = ip;
                        }
                    }
                }
            }
        }
        self.last_regs = (a.tid, a.sp, a.fp);
        let time = self.now();
        self.other.sp_seen(a.tid, a.sp, time, &mut self.reg);
        let rule = self.site_rule(a.site.index(), a.ip);
        if let CfaRule::Known(from_fp, off) = rule {
            let cfa = if from_fp { a.fp } else { a.sp }.wrapping_add_signed(off);
            self.enter_frame(a.tid, cfa, a.ip, a.sp, a.fp);
            // `ret` loads the return address just below the CFA: the frame
            // is gone. Popping it now keeps library code that runs next in
            // the same stack (a thread's exit, a callee of a caller without
            // debug information) from being named after its dead locals.
            if a.op == Op::Load && a.size == 8 && a.addr == cfa.wrapping_sub(8) {
                let st = self.shadow_of(a.tid);
                while st.top_cfa().is_some_and(|top| top <= cfa) {
                    st.pop();
                }
            }
        }
    }

    /// The CFA rule of instruction site `site` (at `ip`), asked of the
    /// namer once per site.
    fn site_rule(&mut self, site: usize, ip: u64) -> CfaRule {
        if site >= self.sites.len() {
            self.sites.resize(site + 1, SiteCache::default());
        }
        match self.sites[site].cfa {
            CfaRule::NotAsked => {
                let r = match self.namer.cfa_rule(ip) {
                    Some((from_fp, off)) => CfaRule::Known(from_fp, off),
                    None => CfaRule::Unknown,
                };
                self.sites[site].cfa = r;
                r
            }
            r => r,
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
    fn site_line(&mut self, site: SiteId, ip: u64) -> u32 {
        if let Some(l) = self.sites[site.index()].line {
            return l;
        }
        let l = self.line_of(ip);
        self.sites[site.index()].line = Some(l);
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

/// Bytes of one element of variable `v`: its element size, or its size
/// when it is one structure.
fn element_bytes(v: &Variable) -> u64 {
    match v.elem_size {
        0 => v.size,
        e => u64::from(e),
    }
}

/// The allocation site a namer's note is about: `file.c:LINE` in "heap
/// blocks allocated at file.c:LINE are named ...", the namer's sentence
/// for the blocks of one site. `None` for any other note.
fn noted_site(note: &str) -> Option<&str> {
    note.strip_prefix("heap blocks allocated at ")?
        .split_once(" are named ")
        .map(|(site, _)| site)
}
