//! Prints a binary trace as text, one event per line: the `dump_trace`
//! shell command and `mapvis --dump-trace`.
use std::io::{self, Write};
use std::path::Path;

use super::format::{AllocEvent, Event, Header, RegionStart, SyncKind};
use super::reader::{EndState, TraceError, TraceReader};

/// Errors while dumping.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The output could not be written.
    #[error("cannot write the dump: {0}.")]
    Output(#[from] io::Error),
}

fn stack(s: &[u64]) -> String {
    let parts: Vec<String> = s.iter().map(|a| format!("{a:#x}")).collect();
    format!("[{}]", parts.join(", "))
}

/// Writes the events of the trace at `path` to `out`, at most `limit`
/// events when given, then a line saying how the trace ended. Streams:
/// memory use does not depend on the trace size.
pub fn dump(path: &Path, limit: Option<u64>, out: &mut dyn Write) -> Result<(), DumpError> {
    let mut r = TraceReader::open(path)?;
    write_header(out, r.header())?;
    let mut n = 0u64;
    // Access order of the next access (the `t=` of access lines).
    let mut time = 0u64;
    while let Some(ev) = r.next_event()? {
        if limit.is_some_and(|l| n >= l) {
            writeln!(out, "... (stopped after {n} events)")?;
            return Ok(());
        }
        n += 1;
        write_event(out, &ev, time)?;
        if matches!(ev, Event::Access(_)) {
            time += 1;
        }
    }
    match r.end_state() {
        EndState::Complete => writeln!(out, "end: complete, {} accesses", r.accesses_read())?,
        EndState::Truncated { offset, partial_bytes } => writeln!(
            out,
            "end: TRUNCATED after {} accesses at byte {offset} ({partial_bytes} bytes of a cut record): the program did not finish",
            r.accesses_read()
        )?,
        EndState::Reading => {}
    }
    if r.header().version >= 7 {
        writeln!(
            out,
            "checked: {} blocks, each matched its checksum",
            r.blocks_checked()
        )?;
    }
    Ok(())
}

/// The first line: the header's fields and the traced command.
fn write_header(out: &mut dyn Write, h: &Header) -> io::Result<()> {
    writeln!(
        out,
        "header: version {}, pid {}, valgrind {}, stack depth {}, heap only {}{}{}, command: {}",
        h.version,
        h.pid,
        h.valgrind_version,
        h.stack_depth,
        h.heap_only,
        if h.sync_events { ", sync events" } else { "" },
        // Only version 7 records it; older traces are pins by default.
        if h.version >= 7 {
            format!(", regions {}", h.regions)
        } else {
            String::new()
        },
        h.command.join(" ")
    )
}

/// One line for event `ev`; `time` is the access order of an access.
fn write_event(out: &mut dyn Write, ev: &Event, time: u64) -> io::Result<()> {
    match ev {
        Event::Access(a) => writeln!(
            out,
            "t={time} {} {} {:#x} tid {} ip {:#x} sp {:#x} fp {:#x} region {}",
            a.op.code() as char,
            a.size,
            a.addr,
            a.tid,
            a.ip,
            a.sp,
            a.fp,
            a.region
        ),
        Event::Alloc(a) => write_alloc(out, a),
        Event::Free(f) => writeln!(
            out,
            "FREE {:?} tid {} {:#x} stack {} at t={}",
            f.kind,
            f.tid,
            f.addr,
            stack(&f.stack),
            f.time
        ),
        Event::Map(m) => writeln!(
            out,
            "MAP {:#x} +{:#x} off {:#x} {}{}{} {}",
            m.start,
            m.len,
            m.offset,
            if m.perms.0 { 'r' } else { '-' },
            if m.perms.1 { 'w' } else { '-' },
            if m.perms.2 { 'x' } else { '-' },
            m.path
        ),
        Event::Unmap { start, len } => writeln!(out, "UNMAP {start:#x} +{len:#x}"),
        Event::ThreadCreate { parent, child } => {
            writeln!(out, "THREAD_CREATE {parent} -> {child}")
        }
        Event::ThreadExit { tid } => writeln!(out, "THREAD_EXIT {tid}"),
        Event::Sync(s) => {
            let prim = match s.kind {
                SyncKind::Fork | SyncKind::Join | SyncKind::Exit => String::new(),
                _ => format!(" {}", s.prim.name()),
            };
            writeln!(
                out,
                "SYNC {:?}{prim} tid {} icount {} object {:#x} at t={}",
                s.kind, s.tid, s.icount, s.obj, s.time
            )
        }
        Event::InstrCount { tid, icount } => writeln!(out, "ICOUNT tid {tid} {icount}"),
        Event::StackAlloc(a) => writeln!(
            out,
            "STACK_ALLOC tid {} ip {:#x} sp {:#x} +{:#x} fp {:#x} at t={}",
            a.tid, a.ip, a.sp, a.len, a.fp, a.time
        ),
        Event::Mmap(m) => writeln!(
            out,
            "MMAP tid {} {:#x} +{:#x} stack {:#x?} at t={}",
            m.tid, m.addr, m.len, m.stack, m.time
        ),
        Event::Roots(words) => {
            writeln!(out, "ROOTS {} words", words.len())?;
            for (at, value) in words {
                writeln!(out, "  {at:#x} -> {value:#x}")?;
            }
            Ok(())
        }
        Event::RootReg { tid, reg, value } => {
            writeln!(out, "ROOT_REG tid {tid} dwarf reg {reg} -> {value:#x}")
        }
        Event::PtrStore { block, offset } => {
            writeln!(out, "PTR_STORE block {block:#x} + {offset}")
        }
        Event::RegionStart(s) => write_region_start(out, s),
        Event::RegionStop(s) => writeln!(
            out,
            "REGION_STOP {} tid {} arg block {:#x} at t={}",
            s.id, s.tid, s.arg_block, s.time
        ),
        Event::Warning { kind, text } => writeln!(out, "WARNING {kind:?}: {text}"),
        Event::Exit(s) => writeln!(out, "EXIT {s:?}"),
        Event::Footer(f) => writeln!(
            out,
            "FOOTER accesses {} regions {} allocs {} frees {} sites {} exit {}",
            f.accesses, f.regions, f.allocs, f.frees, f.sites, f.exit_code
        ),
    }
}

/// An allocation: its kind, whether a forked child inherited it, where a
/// realloc moved it from, and the allocating stack.
fn write_alloc(out: &mut dyn Write, a: &AllocEvent) -> io::Result<()> {
    writeln!(
        out,
        "ALLOC {}{} tid {} {:#x} size {}{} stack {} at t={}",
        a.kind.name(),
        if a.inherited {
            " (inherited at fork)"
        } else {
            ""
        },
        a.tid,
        a.addr,
        a.size,
        a.old_addr
            .map(|o| format!(" (moved from {o:#x})"))
            .unwrap_or_default(),
        stack(&a.stack),
        a.time
    )
}

/// A region start with the frames (ip@sp/fp) at the start pin.
fn write_region_start(out: &mut dyn Write, s: &RegionStart) -> io::Result<()> {
    writeln!(
        out,
        "REGION_START {} tid {} arg block {:#x} at t={} frames {}",
        s.id,
        s.tid,
        s.arg_block,
        s.time,
        s.frames
            .iter()
            .map(|(ip, sp, fp)| format!("{ip:#x}@{sp:#x}/{fp:#x}"))
            .collect::<Vec<_>>()
            .join(" ")
    )
}
