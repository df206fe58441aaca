//! HPCMP's JSON: per-thread, per-block read and write bytes between
//! synchronisation events, with the lives of the blocks and of the sync
//! objects (mutexes, rwlocks, condition variables, semaphores).
//!
//! The JSON holds the program's own sync objects: those inside a system
//! library's mapping (the loader's lock, taken inside `pthread_create`) are
//! left out and counted in a note. An object first used without an init
//! call (`PTHREAD_MUTEX_INITIALIZER`) gets its NewSync at that use. The
//! summary lists the program's objects named as accesses are named.
//!
//! The format is HPCMP's (a Valgrind tool for plan-based scheduling of HPC
//! programs): a JSON array of events, each `{"thid", "icnt", "id"}` plus
//! either `"sync"` (Fork, Join, Exit, Acquire, Release, each with the
//! thread's `usage` of every heap block since its previous sync event) or
//! `"life"` (Alloc, Free, NewSync, DelSync). HPCMP's README writes the
//! Release event with the key `acq`, like Acquire, which looks like a
//! typo: it is written here as `rel`, so the two can be told apart.
//!
//! The export streams the trace once (see [`super::export::walk`]). Memory
//! holds the live blocks and, per thread, the blocks it touched since its
//! last sync event: never the access list.
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::Path;

use crate::trace::naming::Namer;
use crate::trace::record::TraceReader;
use crate::trace::record::{Event, SyncKind, SyncPrim};

use super::error::FilterError;
use super::export::{create, summary, walk, werr, Step};

/// A live heap block.
struct Live {
    end: u64,
    size: u64,
    /// Where it was allocated (return addresses), to name a sync object
    /// that lives in it.
    stack: Vec<u64>,
    /// Allocation number, unique for the run: a thread's usage is kept per
    /// allocation, so a block freed and another allocated at the same
    /// address are never merged.
    handle: u64,
}

/// One thread's reads and writes of one block since its last sync event.
#[derive(Clone, Copy, Default)]
struct Usage {
    addr: u64,
    size: u64,
    r: u64,
    w: u64,
}

/// What the export keeps per thread.
#[derive(Default)]
struct Thread {
    /// Instruction count at the thread's previous event.
    last_icount: u64,
    /// Usage since the last sync event, by block handle (allocation order).
    usage: BTreeMap<u64, Usage>,
}

/// The export's state between steps of the trace.
struct Hpcmp<W: Write> {
    out: W,
    blocks: BTreeMap<u64, Live>,
    threads: HashMap<u32, Thread>,
    next_handle: u64,
    next_id: u64,
    /// The instruction count the tool wrote just before a heap event.
    icount: Option<(u32, u64)>,
    counts: Counts,
    /// Files mapped from the system's libraries: (start, end, file name).
    /// A sync object inside one is the library's own (the loader's lock,
    /// taken inside `pthread_create` and at thread exit).
    system: Vec<(u64, u64, String)>,
    /// The program's sync objects, by address.
    objects: BTreeMap<u64, SyncObj>,
    /// The libraries' own sync objects left out: address, library, events.
    internal: BTreeMap<u64, (String, u64)>,
}

/// One of the program's sync objects, for the summary.
struct SyncObj {
    prim: SyncPrim,
    /// An init call (or the NewSync written at its first use) was seen.
    live: bool,
    acquires: u64,
    releases: u64,
    /// Threads that acquired or released it.
    threads: std::collections::BTreeSet<u32>,
    /// The allocation stack of the heap block holding it, if any.
    heap_stack: Option<Vec<u64>>,
}

/// What was written, for the summary.
#[derive(Default)]
struct Counts {
    sync: u64,
    life: u64,
    final_exits: u64,
    outside: u64,
    /// Objects first used without an init call (a static initializer).
    static_init: u64,
}

fn usage_json(u: &Usage) -> String {
    format!(
        "{{\"addr\":{},\"size\":{},\"r\":{},\"w\":{}}}",
        u.addr, u.size, u.r, u.w
    )
}

impl<W: Write> Hpcmp<W> {
    /// Writes one event, `body` being its `"sync"` or `"life"` member.
    fn event(&mut self, tid: u32, icount: Option<u64>, body: &str) -> std::io::Result<()> {
        let th = self.threads.entry(tid).or_default();
        let icnt = match icount {
            Some(ic) => {
                let d = ic.saturating_sub(th.last_icount);
                th.last_icount = ic;
                d
            }
            None => 0,
        };
        let sep = if self.next_id == 0 { "" } else { ",\n" };
        write!(
            self.out,
            "{sep}{{\"thid\":{tid},\"icnt\":{icnt},\"id\":{},{body}}}",
            self.next_id
        )?;
        self.next_id += 1;
        Ok(())
    }

    /// A sync event: the thread's usage since its last one goes with it.
    fn sync(&mut self, tid: u32, icount: Option<u64>, what: &str) -> std::io::Result<()> {
        let usage = std::mem::take(&mut self.threads.entry(tid).or_default().usage);
        let mut list = String::new();
        for (i, u) in usage.values().enumerate() {
            if i > 0 {
                list.push(',');
            }
            list.push_str(&usage_json(u));
        }
        self.counts.sync += 1;
        self.event(
            tid,
            icount,
            &format!("\"sync\":{{\"usage\":[{list}],{what}}}"),
        )
    }

    /// The instruction count written for the heap event of thread `tid`.
    fn heap_icount(&mut self, tid: u32) -> Option<u64> {
        match self.icount.take() {
            Some((t, ic)) if t == tid => Some(ic),
            _ => None,
        }
    }

    fn access(&mut self, tid: u32, addr: u64, r: u64, w: u64) {
        let Some((&start, b)) = self.blocks.range(..=addr).next_back() else {
            self.counts.outside += 1;
            return;
        };
        if addr >= b.end {
            self.counts.outside += 1;
            return;
        }
        let u = self
            .threads
            .entry(tid)
            .or_default()
            .usage
            .entry(b.handle)
            .or_insert(Usage {
                addr: start,
                size: b.size,
                r: 0,
                w: 0,
            });
        u.r += r;
        u.w += w;
    }

    fn alloc(
        &mut self,
        tid: u32,
        icount: Option<u64>,
        addr: u64,
        size: u64,
        stack: &[u64],
    ) -> std::io::Result<()> {
        self.next_handle += 1;
        self.blocks.insert(
            addr,
            Live {
                end: addr + size.max(1),
                size,
                stack: stack.to_vec(),
                handle: self.next_handle,
            },
        );
        self.counts.life += 1;
        self.event(
            tid,
            icount,
            &format!("\"life\":{{\"alloc\":{{\"addr\":{addr},\"size\":{size}}}}}"),
        )
    }

    /// A free carries the freeing thread's usage of the block since its
    /// last sync event, which is then no longer pending: counted once.
    fn free(&mut self, tid: u32, icount: Option<u64>, addr: u64) -> std::io::Result<()> {
        let Some(b) = self.blocks.remove(&addr) else {
            return Ok(());
        };
        let u = self
            .threads
            .entry(tid)
            .or_default()
            .usage
            .remove(&b.handle)
            .unwrap_or(Usage {
                addr,
                size: b.size,
                r: 0,
                w: 0,
            });
        self.counts.life += 1;
        self.event(
            tid,
            icount,
            &format!("\"life\":{{\"free\":{}}}", usage_json(&u)),
        )
    }

    /// The system library whose mapping holds `addr`, if any.
    fn library_at(&self, addr: u64) -> Option<&str> {
        self.system
            .iter()
            .find(|(lo, hi, _)| (*lo..*hi).contains(&addr))
            .map(|(_, _, f)| f.as_str())
    }

    fn on_sync(
        &mut self,
        kind: SyncKind,
        prim: SyncPrim,
        tid: u32,
        icount: u64,
        obj: u64,
    ) -> std::io::Result<()> {
        let ic = Some(icount);
        match kind {
            SyncKind::Fork => self.sync(tid, ic, &format!("\"fork\":{obj}")),
            SyncKind::Join => self.sync(tid, ic, &format!("\"join\":{obj}")),
            SyncKind::Exit => {
                self.sync(tid, ic, "\"join\":null")?;
                // An exited thread has no more events (the trace's thread
                // numbers are never reused): its state goes.
                self.threads.remove(&tid);
                Ok(())
            }
            _ => {
                if let Some(lib) = self.library_at(obj).map(str::to_string) {
                    self.internal.entry(obj).or_insert((lib, 0)).1 += 1;
                    return Ok(());
                }
                self.object_op(kind, prim, tid, ic, obj)
            }
        }
    }

    /// An operation on one of the program's sync objects: its NewSync is
    /// written at its first use when no init call made one (a mutex set up
    /// with `PTHREAD_MUTEX_INITIALIZER`).
    fn object_op(
        &mut self,
        kind: SyncKind,
        prim: SyncPrim,
        tid: u32,
        ic: Option<u64>,
        obj: u64,
    ) -> std::io::Result<()> {
        let heap_stack = self
            .blocks
            .range(..=obj)
            .next_back()
            .filter(|(_, b)| obj < b.end)
            .map(|(_, b)| b.stack.clone());
        let o = self.objects.entry(obj).or_insert_with(|| SyncObj {
            prim,
            live: false,
            acquires: 0,
            releases: 0,
            threads: Default::default(),
            heap_stack,
        });
        o.prim = prim;
        let first_use = !o.live && matches!(kind, SyncKind::Acquire | SyncKind::Release);
        o.live = kind != SyncKind::DelSync;
        match kind {
            SyncKind::Acquire => o.acquires += 1,
            SyncKind::Release => o.releases += 1,
            _ => {}
        }
        if matches!(kind, SyncKind::Acquire | SyncKind::Release) {
            o.threads.insert(tid);
        }
        if first_use {
            self.counts.static_init += 1;
            self.life_sync("newsync", prim, tid, ic, obj)?;
        }
        match kind {
            SyncKind::Acquire => self.sync(tid, ic, &format!("\"acq\":{obj}")),
            SyncKind::Release => self.sync(tid, ic, &format!("\"rel\":{obj}")),
            SyncKind::NewSync => self.life_sync("newsync", prim, tid, ic, obj),
            _ => self.life_sync("delsync", prim, tid, ic, obj),
        }
    }

    /// A NewSync or DelSync event.
    fn life_sync(
        &mut self,
        key: &str,
        prim: SyncPrim,
        tid: u32,
        ic: Option<u64>,
        obj: u64,
    ) -> std::io::Result<()> {
        self.counts.life += 1;
        let p = prim.name();
        self.event(
            tid,
            ic,
            &format!("\"life\":{{\"{key}\":{{\"prim\":\"{p}\",\"addr\":{obj}}}}}"),
        )
    }

    fn step(&mut self, step: Step) -> std::io::Result<()> {
        match step {
            Step::Access(a) => {
                let size = a.size;
                self.access(a.tid, a.addr, a.op.load_bytes(size), a.op.store_bytes(size));
                Ok(())
            }
            Step::Event(Event::InstrCount { tid, icount }) => {
                self.icount = Some((tid, icount));
                Ok(())
            }
            Step::Event(Event::Alloc(al)) => {
                let ic = self.heap_icount(al.tid);
                if let Some(old) = al.old_addr {
                    self.free(al.tid, ic, old)?;
                }
                self.alloc(al.tid, ic, al.addr, al.size, &al.stack)
            }
            Step::Event(Event::Free(fr)) => {
                let ic = self.heap_icount(fr.tid);
                self.free(fr.tid, ic, fr.addr)
            }
            Step::Event(Event::Sync(s)) => self.on_sync(s.kind, s.prim, s.tid, s.icount, s.obj),
            Step::Event(Event::Map(m)) => {
                if crate::trace::naming::is_system(&m.path) {
                    let file = m.path.rsplit('/').next().unwrap_or(&m.path).to_string();
                    self.system.push((m.start, m.start + m.len, file));
                }
                Ok(())
            }
            Step::Event(_) => Ok(()),
        }
    }

    /// Usage still pending at the end (a trace cut before the tool wrote
    /// the threads' exits) goes out in a final Exit event per thread.
    fn finish(&mut self) -> std::io::Result<()> {
        let mut pending: Vec<u32> = self
            .threads
            .iter()
            .filter(|(_, t)| !t.usage.is_empty())
            .map(|(&tid, _)| tid)
            .collect();
        pending.sort_unstable();
        for tid in pending {
            self.counts.final_exits += 1;
            self.sync(tid, None, "\"join\":null")?;
        }
        writeln!(self.out, "{}]", if self.next_id == 0 { "" } else { "\n" })
    }
}

/// Writes HPCMP's JSON for `trace` to `out` and returns a summary.
///
/// The trace must have been recorded with sync events (the tool's
/// `--sync-events=yes`); its reads and writes are those the trace holds:
/// the pinned regions, or the whole run for a trace recorded from the
/// start. Accesses outside every live heap block are left out, as HPCMP
/// leaves them. Cost: one pass over the trace; memory is the live blocks
/// plus each thread's blocks touched since its last sync event.
pub fn export_hpcmp(
    trace: &Path,
    out: &Path,
    namer: &mut dyn Namer,
) -> Result<String, FilterError> {
    if !TraceReader::open(trace)?.header().sync_events {
        return Err(FilterError::NoSyncEvents {
            path: trace.to_path_buf(),
        });
    }
    let mut w = create(out)?;
    w.write_all(b"[\n").map_err(werr(out))?;
    let mut h = Hpcmp {
        out: w,
        blocks: BTreeMap::new(),
        threads: HashMap::new(),
        next_handle: 0,
        next_id: 0,
        icount: None,
        counts: Counts::default(),
        system: Vec::new(),
        objects: BTreeMap::new(),
        internal: BTreeMap::new(),
    };
    let mut maps = Vec::new();
    let mut notes = walk(trace, &mut |step| {
        if let Step::Event(Event::Map(m)) = &step {
            maps.push(m.clone());
        }
        h.step(step)
    })?;
    h.finish().map_err(werr(out))?;
    let Hpcmp {
        out: w,
        counts: c,
        next_id,
        objects,
        internal,
        ..
    } = h;
    w.finish()?;
    if c.final_exits > 0 {
        notes.push(format!(
            "the trace ends before {} thread(s) exited; their last reads and writes are in a final Exit event each (icnt 0).",
            c.final_exits
        ));
    }
    if c.outside > 0 {
        notes.push(format!(
            "{} accesses fell outside every live heap block and are not counted (as in HPCMP).",
            c.outside
        ));
    }
    notes.extend(internal_note(&internal));
    if c.static_init > 0 {
        notes.push(format!(
            "{} sync object(s) were first used without an init call (a static initializer such as \
             PTHREAD_MUTEX_INITIALIZER): their NewSync is written at their first use.",
            c.static_init
        ));
    }
    for m in &maps {
        namer.on_map(m);
    }
    let what = format!("{next_id} events ({} sync, {} life)", c.sync, c.life);
    let mut text = summary(out, what, notes);
    text.push_str(&objects_table(&objects, namer));
    Ok(text)
}

/// The note on the libraries' own sync objects, left out of the JSON.
fn internal_note(internal: &BTreeMap<u64, (String, u64)>) -> Option<String> {
    if internal.is_empty() {
        return None;
    }
    let events: u64 = internal.values().map(|(_, n)| n).sum();
    let mut libs: Vec<&str> = internal.values().map(|(l, _)| l.as_str()).collect();
    libs.sort_unstable();
    libs.dedup();
    Some(format!(
        "{events} operations on {} sync object(s) of the system's libraries ({}: the loader's and \
         glibc's own locks, taken inside pthread_create, dlopen and at thread exit) are left out; \
         the JSON has the program's own.",
        internal.len(),
        libs.join(", ")
    ))
}

/// The program's sync objects, one line each, named as accesses are: a
/// global by its variable (and element), an object inside a heap block by
/// the block's name, anything else by its address.
fn objects_table(objects: &BTreeMap<u64, SyncObj>, namer: &mut dyn Namer) -> String {
    if objects.is_empty() {
        return "\nno sync object of the program's own was used.".into();
    }
    let mut t = format!("\nthe program's sync objects ({}):", objects.len());
    for (&addr, o) in objects {
        let name = object_name(addr, o, namer);
        let threads = o.threads.len();
        let n = |k: u64, what: &str| format!("{k} {what}{}", if k == 1 { "" } else { "s" });
        t.push_str(&format!(
            "\n  {name} ({}, 0x{addr:x}): {}, {}, by {}",
            o.prim.name(),
            n(o.acquires, "acquire"),
            n(o.releases, "release"),
            n(threads as u64, "thread"),
        ));
    }
    t
}

/// How the summary names the sync object at `addr`.
fn object_name(addr: u64, o: &SyncObj, namer: &mut dyn Namer) -> String {
    if let Some(stack) = &o.heap_stack {
        let h = namer.heap_name(stack);
        return format!("in heap block {} ({})", h.name, h.site);
    }
    match namer.global_name(addr) {
        // The element path runs into the C library's own members
        // (`lock.__data.__lock`, `done.__size[0]`): it is cut where they
        // start, leaving the program's object (`lock`, `locks[3]`, `s.lock`).
        Some(v) if !v.name.starts_with('<') => match v.element.find(".__") {
            Some(cut) => v.element[..cut].to_string(),
            None => v.element,
        },
        _ => "unnamed (a local variable, or memory mapped by the program)".into(),
    }
}
