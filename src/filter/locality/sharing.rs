//! Cache lines shared between threads: true and false sharing.
//!
//! The sink follows each cache line (64 bytes unless the model's L1 says
//! otherwise) through a simple write-invalidate protocol and counts the
//! cross-thread transfers a coherent cache would incur:
//!
//! - a thread reading a line last written by another thread (the modified
//!   copy moves to the reader);
//! - a thread writing a line that another thread holds (the other copies
//!   are invalidated; the writer takes ownership).
//!
//! Each transfer is *true* sharing when the bytes of the access overlap
//! bytes the other threads touched on that line (written by them, for a
//! read; read or written, for a write), and *false* sharing otherwise:
//! the threads use disjoint bytes that only happen to share a line.
//!
//! Valgrind runs one thread at a time and switches threads every so many
//! basic blocks, so the transfer counts are those of that interleaving: a
//! lower bound of what parallel threads would incur, but a line that is
//! shared shows up whatever the interleaving.
//!
//! Two passes keep the memory to what is shared: [`SharingCandidates`]
//! first finds the lines that more than one thread touched and some thread
//! wrote, in 4 bytes per line touched (a sixteenth of the memory the
//! program touched, in pages of lines); then [`SharingSink`] keeps a
//! history only for those lines, which are the result. A history for every
//! line a program touched would take about 150 bytes per 64-byte line:
//! more than twice the program's own memory.
//!
//! Cost: a page lookup per access and line in each pass, and a hash probe
//! per access to a shared line in the second.
use polars::prelude::PlHashMap;

use super::pages::LinePages;
use super::{AccessSink, NamedAccess, VarId};

/// Calls `f(line, bytes)` for each line of `line_bits` the access `r`
/// touches, `bytes` its bytes there (bit `b` for byte offset `b`).
#[inline]
fn each_line(line_bits: u32, r: &NamedAccess, mut f: impl FnMut(u64, u64)) {
    let lmask = (1u64 << line_bits) - 1;
    let end = r.addr + r.size as u64 - 1;
    for line in (r.addr >> line_bits)..=(end >> line_bits) {
        let lo = if line == r.addr >> line_bits {
            r.addr & lmask
        } else {
            0
        };
        let hi = if line == end >> line_bits {
            end & lmask
        } else {
            lmask
        };
        let n = hi - lo + 1;
        let m = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 } << lo;
        f(line, m);
    }
}

/// A line's state in the first pass: its first thread plus one in the low
/// bits (0: untouched), and two flags.
const FIRST_TID: u32 = (1 << 30) - 1;
/// A second thread touched the line.
const MANY: u32 = 1 << 30;
/// Some thread wrote it.
const WROTE: u32 = 1 << 31;

/// The first pass: the lines more than one thread touched and some thread
/// wrote, the only ones that can be shared (see [`LineUse::is_shared`]).
/// Memory: 4 bytes per line of every page of lines touched.
#[derive(Clone, Debug)]
pub struct SharingCandidates {
    line_bits: u32,
    lines: LinePages<u32>,
    /// Lines found so far.
    found: usize,
}

impl SharingCandidates {
    /// A first pass over lines of `line` bytes (as [`SharingSink::new`]).
    pub fn new(line: u32) -> SharingCandidates {
        SharingCandidates {
            line_bits: line.clamp(8, 64).trailing_zeros(),
            lines: LinePages::new(0),
            found: 0,
        }
    }

    /// Whether no line can be shared.
    pub fn is_empty(&self) -> bool {
        self.found == 0
    }

    /// Whether `line` (a line number) can be shared.
    fn holds(&self, line: u64) -> bool {
        self.lines.get(line) & (MANY | WROTE) == MANY | WROTE
    }
}

impl AccessSink for SharingCandidates {
    fn accesses(&mut self, batch: &[NamedAccess]) {
        for r in batch {
            // Thread numbers past 2^30 - 2 share one first-thread value:
            // they are never met (Valgrind numbers threads from 1).
            let me = r.tid.min(FIRST_TID - 1) + 1;
            let wrote = if r.writes() { WROTE } else { 0 };
            each_line(self.line_bits, r, |line, _| {
                let slot = self.lines.slot(line);
                let st = self.lines.get_mut(slot);
                let before = *st & (MANY | WROTE) == MANY | WROTE;
                if *st & FIRST_TID == 0 {
                    *st = me;
                } else if *st & FIRST_TID != me {
                    *st |= MANY;
                }
                *st |= wrote;
                if !before && *st & (MANY | WROTE) == MANY | WROTE {
                    self.found += 1;
                }
            });
        }
    }
}

/// What one thread did to one line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadUse {
    /// Thread id.
    pub tid: u32,
    /// Bits of the bytes it read.
    pub read: u64,
    /// Bits of the bytes it wrote.
    pub written: u64,
    /// Variable rows it touched on the line.
    pub vars: Vec<VarId>,
    /// Its accesses to the line.
    pub accesses: u64,
}

/// One cache line's history.
#[derive(Clone, Debug, Default)]
pub struct LineUse {
    /// Threads that touched the line, in order of first touch.
    pub threads: Vec<ThreadUse>,
    /// Thread holding the only, modified copy (0: none).
    owner: u32,
    /// Threads holding a valid copy (bit `tid % 64`).
    holders: u64,
    /// Cross-thread transfers with overlapping bytes.
    pub true_transfers: u64,
    /// Cross-thread transfers with disjoint bytes.
    pub false_transfers: u64,
}

impl LineUse {
    fn thread(&mut self, tid: u32) -> usize {
        match self.threads.iter().position(|t| t.tid == tid) {
            Some(i) => i,
            None => {
                self.threads.push(ThreadUse {
                    tid,
                    ..Default::default()
                });
                self.threads.len() - 1
            }
        }
    }

    /// Bytes the threads other than `tid` wrote, and read or wrote.
    fn others(&self, tid: u32) -> (u64, u64) {
        self.threads
            .iter()
            .filter(|t| t.tid != tid)
            .fold((0, 0), |(w, a), t| (w | t.written, a | t.written | t.read))
    }

    /// Whether a thread wrote the line and another thread touched it.
    pub fn is_shared(&self) -> bool {
        self.threads.len() >= 2 && self.threads.iter().any(|t| t.written != 0)
    }

    /// All cross-thread transfers.
    pub fn transfers(&self) -> u64 {
        self.true_transfers + self.false_transfers
    }
}

/// The sharing sink: each line's history through the protocol.
#[derive(Clone, Debug)]
pub struct SharingSink {
    line_bits: u32,
    lines: PlHashMap<u64, LineUse>,
    /// The lines to follow, when a first pass found them; every line
    /// otherwise.
    only: Option<SharingCandidates>,
}

impl SharingSink {
    /// A sink over lines of `line` bytes (at most 64, one bit per byte),
    /// following every line: the one-pass yardstick of the tests.
    #[cfg(test)]
    pub fn new(line: u32) -> SharingSink {
        SharingSink {
            line_bits: line.clamp(8, 64).trailing_zeros(),
            lines: PlHashMap::default(),
            only: None,
        }
    }

    /// A sink that follows only the lines `first` found (a first pass
    /// over the same accesses, with the same line size): the same result
    /// as [`SharingSink::new`], in memory for the shared lines alone.
    pub fn only(first: SharingCandidates) -> SharingSink {
        SharingSink {
            line_bits: first.line_bits,
            lines: PlHashMap::default(),
            only: Some(first),
        }
    }

    #[inline]
    fn touch(&mut self, line: u64, mask: u64, r: &NamedAccess) {
        let l = self.lines.entry(line).or_default();
        let bit = 1u64 << (r.tid % 64);
        let write = r.writes();
        if l.threads.len() > 1 || (!l.threads.is_empty() && l.threads[0].tid != r.tid) {
            let (w, any) = l.others(r.tid);
            let moved = if write {
                l.holders & !bit != 0 || (l.owner != 0 && l.owner != r.tid)
            } else {
                l.owner != 0 && l.owner != r.tid
            };
            if moved {
                let overlap = mask & if write { any } else { w };
                if overlap != 0 {
                    l.true_transfers += 1;
                } else {
                    l.false_transfers += 1;
                }
            }
        }
        if write {
            l.owner = r.tid;
            l.holders = bit;
        } else {
            if l.owner != r.tid {
                l.owner = 0;
            }
            l.holders |= bit;
        }
        let i = l.thread(r.tid);
        let t = &mut l.threads[i];
        t.accesses += 1;
        if r.op != super::super::schema::OP_STORE {
            t.read |= mask;
        }
        if write {
            t.written |= mask;
        }
        if !t.vars.contains(&r.var) {
            t.vars.push(r.var);
        }
    }

    /// The lines shared between threads (written by one, touched by
    /// another), by address.
    pub fn finish(self) -> Vec<(u64, LineUse)> {
        let bits = self.line_bits;
        let mut v: Vec<(u64, LineUse)> = self
            .lines
            .into_iter()
            .filter(|(_, l)| l.is_shared())
            .map(|(a, l)| (a << bits, l))
            .collect();
        v.sort_by_key(|(a, _)| *a);
        v
    }
}

impl AccessSink for SharingSink {
    fn accesses(&mut self, batch: &[NamedAccess]) {
        let bits = self.line_bits;
        let only = self.only.take();
        for r in batch {
            each_line(bits, r, |line, m| {
                if only.as_ref().is_none_or(|c| c.holds(line)) {
                    self.touch(line, m, r);
                }
            });
        }
        self.only = only;
    }
}

/// The bytes of a line, bit `b` for byte offset `b`: shown as offset
/// ranges (`0-7, 16`, see [`ranges`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ByteSet(pub u64);

impl std::fmt::Display for ByteSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&ranges(self.0))
    }
}

/// Byte ranges of a mask: `0-7, 16-19`.
pub fn ranges(mask: u64) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < 64 {
        if mask >> i & 1 == 1 {
            let s = i;
            while i < 64 && mask >> i & 1 == 1 {
                i += 1;
            }
            out.push(if i - 1 == s {
                format!("{s}")
            } else {
                format!("{s}-{}", i - 1)
            });
        } else {
            i += 1;
        }
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(tid: u32, op: u8, addr: u64, size: u32) -> NamedAccess {
        NamedAccess {
            tid,
            op,
            addr,
            size,
            ..Default::default()
        }
    }

    #[test]
    fn adjacent_fields_written_by_two_threads_are_false_sharing() {
        let mut s = SharingSink::new(64);
        let mut recs = vec![];
        for _ in 0..3 {
            recs.push(rec(1, b'M', 0x1000, 8));
            recs.push(rec(2, b'M', 0x1008, 8));
        }
        s.accesses(&recs);
        let lines = s.finish();
        assert_eq!(lines.len(), 1);
        let l = &lines[0].1;
        assert_eq!(l.true_transfers, 0);
        assert_eq!(l.false_transfers, 5);
        assert_eq!(ranges(l.threads[0].written), "0-7");
        assert_eq!(ranges(l.threads[1].written), "8-15");
    }

    #[test]
    fn a_counter_incremented_by_two_threads_is_true_sharing() {
        let mut s = SharingSink::new(64);
        let recs = [rec(1, b'M', 0x1000, 4), rec(2, b'M', 0x1000, 4)];
        s.accesses(&recs);
        let l = &s.finish()[0].1;
        assert_eq!((l.true_transfers, l.false_transfers), (1, 0));
    }

    #[test]
    fn separate_lines_and_read_only_sharing_are_not_reported() {
        let mut s = SharingSink::new(64);
        let recs = [
            rec(1, b'S', 0x1000, 8),
            rec(2, b'S', 0x1040, 8),
            rec(1, b'L', 0x2000, 8),
            rec(2, b'L', 0x2000, 8),
        ];
        s.accesses(&recs);
        assert!(s.finish().is_empty());
    }

    /// The two passes find what one pass over every line finds, and the
    /// second keeps histories for the shared lines alone.
    #[test]
    fn two_passes_give_one_pass_answer() {
        let mut x = 0x9E37_79B9u64;
        let mut recs = Vec::new();
        for k in 0..50_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let tid = 1 + (x % 3) as u32;
            // Thread 1 alone walks a large array; all three meet on a few
            // lines, some only reading, and accesses cross lines.
            let (addr, size) = match x % 5 {
                0 | 1 => (0x10_0000 + 8 * k, 8),
                2 => (0x1000 + (x >> 8) % 256, 1 + (x >> 20) as u32 % 16),
                _ => (0x8000 + (x >> 8) % 512, 4),
            };
            let tid = if x % 5 < 2 { 1 } else { tid };
            let op = if x % 5 == 4 {
                b'L'
            } else {
                [b'L', b'S', b'M'][(x >> 30) as usize % 3]
            };
            recs.push(rec(tid, op, addr, size));
        }
        let mut one = SharingSink::new(64);
        let mut first = SharingCandidates::new(64);
        for b in recs.chunks(1000) {
            one.accesses(b);
            first.accesses(b);
        }
        assert!(!first.is_empty());
        let mut two = SharingSink::only(first);
        for b in recs.chunks(1000) {
            two.accesses(b);
        }
        let followed = two.lines.len();
        let (want, got) = (one.finish(), two.finish());
        assert!(!want.is_empty());
        assert_eq!(followed, got.len(), "histories for shared lines only");
        assert_eq!(want.len(), got.len());
        for ((a1, l1), (a2, l2)) in want.iter().zip(&got) {
            assert_eq!(a1, a2);
            assert_eq!(
                (l1.true_transfers, l1.false_transfers, &l1.threads),
                (l2.true_transfers, l2.false_transfers, &l2.threads)
            );
        }
    }
}
