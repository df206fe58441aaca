//! Exports of a trace in the formats other tools read: Steve's memtrace
//! and ops files, and HPCMP's JSON.
//!
//! Each export streams the trace once, in time order, and writes as it
//! goes: memory holds the live blocks (and, for HPCMP, each thread's usage
//! since its last sync event), never the access list.
use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::trace::record::{stop_arg_stores, Seen, StartResult, Verdict, HOLD_BACK};
use crate::trace::record::{Access, Event, Op};
use crate::trace::record::{Batch, TraceReader};

use super::error::FilterError;

/// An export being written: under a temporary name beside its file (see
/// [`crate::workdir::Pending::named`]), which replaces the file only on
/// [`Out::finish`]. An export that fails (a trace that cannot be read, a
/// full disk) leaves the previous file as it was.
pub(crate) struct Out {
    w: BufWriter<File>,
    pending: crate::workdir::Pending,
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.w.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.w.write_all(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}

impl Out {
    /// Flushes the export and renames it into place.
    pub(crate) fn finish(mut self) -> Result<(), FilterError> {
        let path = self.pending.path().to_path_buf();
        self.w.flush().map_err(werr(&path))?;
        drop(self.w);
        self.pending
            .commit()
            .map(drop)
            .map_err(|e| werr(&path)(e.into_io()))
    }
}

/// Starts writing the export `path`, a file the user named.
pub(crate) fn create(path: &Path) -> Result<Out, FilterError> {
    let fail = |e: crate::workdir::WorkdirError| werr(path)(e.into_io());
    let pending = crate::workdir::Pending::named(path).map_err(fail)?;
    let f = pending.handle().map_err(fail)?;
    Ok(Out {
        w: BufWriter::with_capacity(1 << 20, f),
        pending,
    })
}

pub(crate) fn werr(path: &Path) -> impl Fn(std::io::Error) -> FilterError + '_ {
    move |source| FilterError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// One step of a trace as the exports see it.
pub(crate) enum Step<'a> {
    /// An access.
    Access(&'a Access),
    /// Any other event.
    Event(Event),
}

/// Calls `f` for every access and event of the trace in order; stops at
/// the first error `f` returns. A damaged or cut trace ends the walk with
/// a note (returned) rather than an error: what came before was exported.
pub(crate) fn walk(
    path: &Path,
    f: &mut dyn FnMut(Step) -> std::io::Result<()>,
) -> Result<Vec<String>, FilterError> {
    let mut reader = TraceReader::open(path)?;
    let mut notes = Vec::new();
    let mut failed: Option<std::io::Error> = None;
    // The pins' own accesses are left out (see
    // `crate::trace::record::stop_arg_stores`): the last accesses wait here
    // until the next event shows whether they were GL_STOP's argument
    // stores.
    let mut held: VecDeque<Access> = VecDeque::with_capacity(HOLD_BACK + 1);
    let wrap = |source| FilterError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut start_result: Option<StartResult> = None;
    loop {
        let batch = reader.for_each_access(u64::MAX, |a| {
            if let Some(watch) = start_result {
                match watch.check(a.tid, a.ip, a.op == Op::Store) {
                    Verdict::Watching => {}
                    Verdict::Own => {
                        start_result = None;
                        return;
                    }
                    Verdict::Program => start_result = None,
                }
            }
            held.push_back(*a);
            if held.len() > HOLD_BACK && failed.is_none() {
                let first = held.pop_front().expect("not empty");
                if let Err(e) = f(Step::Access(&first)) {
                    failed = Some(e);
                }
            }
        });
        if let Some(e) = failed.take() {
            return Err(wrap(e));
        }
        let ev = match batch {
            Ok(Batch::Event(ev)) => Some(ev),
            Ok(Batch::Limit) => continue,
            Ok(Batch::End) => None,
            Err(e) => {
                notes.push(format!("{e} The export stops there."));
                None
            }
        };
        if let Some(Event::RegionStart(r)) = &ev {
            start_result = StartResult::after(r);
        }
        if let Some(Event::RegionStop(r)) = &ev {
            let recent: Vec<Seen> = held
                .iter()
                .map(|a| Seen {
                    tid: a.tid,
                    store: a.op == Op::Store,
                    addr: a.addr,
                })
                .collect();
            for i in stop_arg_stores(&recent, r) {
                held.remove(i);
            }
        }
        for a in held.drain(..) {
            f(Step::Access(&a)).map_err(wrap)?;
        }
        match ev {
            Some(ev) => f(Step::Event(ev)).map_err(wrap)?,
            None => break,
        }
    }
    if let crate::trace::record::EndState::Truncated { .. } = reader.end_state() {
        notes.push(format!(
            "the trace {} ends without its footer; everything up to its end was exported.",
            path.display()
        ));
    }
    Ok(notes)
}

fn op_letter(op: Op) -> char {
    op.code() as char
}

/// Writes Steve's memtrace of `trace` to `out`: `>>> OP ADDRESS SIZE` per
/// operation in time order (N new, F free with size 0, L S M accesses),
/// addresses in hex with `0x`. A realloc that moved a block is `F old`
/// then `N new`. Returns a one-line summary.
pub fn export_memtrace(trace: &Path, out: &Path) -> Result<String, FilterError> {
    let mut w = create(out)?;
    let (mut n, mut f, mut a) = (0u64, 0u64, 0u64);
    let notes = walk(trace, &mut |step| match step {
        Step::Access(x) => {
            a += 1;
            writeln!(w, ">>> {} {:#x} {}", op_letter(x.op), x.addr, x.size)
        }
        Step::Event(Event::Alloc(al)) => {
            if let Some(old) = al.old_addr {
                f += 1;
                writeln!(w, ">>> F {old:#x} 0")?;
            }
            n += 1;
            writeln!(w, ">>> N {:#x} {}", al.addr, al.size)
        }
        Step::Event(Event::Free(fr)) => {
            f += 1;
            writeln!(w, ">>> F {:#x} 0", fr.addr)
        }
        Step::Event(_) => Ok(()),
    })?;
    w.finish()?;
    Ok(summary(
        out,
        format!("{n} N, {f} F and {a} L/S/M lines"),
        notes,
    ))
}

pub(crate) fn summary(out: &Path, what: String, notes: Vec<String>) -> String {
    let mut s = format!("wrote {what} to {}.", out.display());
    for n in notes {
        s.push_str("\nnote: ");
        s.push_str(&n);
    }
    s
}

/// A live block of the ops export.
struct OpsBlock {
    end: u64,
    handle: u64,
    /// Steve's life, in halves (own access +2, other op -1, floor 0).
    life2: u64,
    /// Index of the block's last own operation.
    last: u64,
}

impl OpsBlock {
    /// Applies the other blocks' operations since the block's last one:
    /// each takes half a unit of life. O(1) however many there were.
    fn decay(&mut self, index: u64) {
        let others = index.saturating_sub(self.last + 1);
        self.life2 = self.life2.saturating_sub(others);
        self.last = index;
    }
}

/// The block containing `addr`, if any.
fn block_at(blocks: &mut BTreeMap<u64, OpsBlock>, addr: u64) -> Option<&mut OpsBlock> {
    blocks
        .range_mut(..=addr)
        .next_back()
        .map(|(_, b)| b)
        .filter(|b| addr < b.end)
}

/// Writes Steve's ops file of `trace` to `out`: one line `HANDLE OP
/// ADDRESS SIZE LOCKED` per operation on a heap block (N, F, and the L, S,
/// M accesses that fall inside a live block), in time order. Handles are
/// 1, 2, … in allocation order, unique for the run. LOCKED is Steve's lock
/// estimate for the block at that operation. Returns a summary.
///
/// Steve's estimate walks every block's lifetime again for each block,
/// O(m·n); here each block keeps its life and the index of its last own
/// operation, and the other blocks' operations in between are applied at
/// once when it is next touched: O(n) plus O(log m) per access to find
/// the block.
pub fn export_ops(trace: &Path, out: &Path) -> Result<String, FilterError> {
    let mut w = create(out)?;
    let mut blocks: BTreeMap<u64, OpsBlock> = BTreeMap::new();
    let mut next_handle = 1u64;
    let mut index = 0u64;
    let mut outside = 0u64;
    let free_line = |w: &mut Out,
                     blocks: &mut BTreeMap<u64, OpsBlock>,
                     addr: u64,
                     index: &mut u64|
     -> std::io::Result<()> {
        if let Some(mut b) = blocks.remove(&addr) {
            b.decay(*index);
            writeln!(w, "{} F {addr:#x} 0 {}", b.handle, (b.life2 > 0) as u8)?;
            *index += 1;
        }
        Ok(())
    };
    let notes = walk(trace, &mut |step| match step {
        Step::Access(x) => match block_at(&mut blocks, x.addr) {
            Some(b) => {
                b.decay(index);
                b.life2 += 2;
                writeln!(
                    w,
                    "{} {} {:#x} {} 1",
                    b.handle,
                    op_letter(x.op),
                    x.addr,
                    x.size
                )?;
                index += 1;
                Ok(())
            }
            None => {
                outside += 1;
                Ok(())
            }
        },
        Step::Event(Event::Alloc(al)) => {
            if let Some(old) = al.old_addr {
                free_line(&mut w, &mut blocks, old, &mut index)?;
            }
            let handle = next_handle;
            next_handle += 1;
            blocks.insert(
                al.addr,
                OpsBlock {
                    end: al.addr + al.size.max(1),
                    handle,
                    life2: 0,
                    last: index,
                },
            );
            writeln!(w, "{handle} N {:#x} {} 0", al.addr, al.size)?;
            index += 1;
            Ok(())
        }
        Step::Event(Event::Free(fr)) => free_line(&mut w, &mut blocks, fr.addr, &mut index),
        Step::Event(_) => Ok(()),
    })?;
    w.finish()?;
    let mut notes = notes;
    if outside > 0 {
        notes.push(format!(
            "{outside} accesses fell outside every live heap block and are not in the ops file (as in Steve's translation)."
        ));
    }
    Ok(summary(
        out,
        format!("{index} operations on {} blocks", next_handle - 1),
        notes,
    ))
}
