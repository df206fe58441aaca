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
//! Memory: one record per distinct line, plus one per thread that touched
//! it; cost: one hash probe per access.
use polars::prelude::PlHashMap;

use super::{AccessSink, NamedAccess, VarId};

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

/// The sharing sink.
#[derive(Clone, Debug)]
pub struct SharingSink {
    line_bits: u32,
    lines: PlHashMap<u64, LineUse>,
}

impl SharingSink {
    /// A sink over lines of `line` bytes (at most 64, one bit per byte).
    pub fn new(line: u32) -> SharingSink {
        SharingSink {
            line_bits: line.clamp(8, 64).trailing_zeros(),
            lines: PlHashMap::default(),
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
        let lmask = (1u64 << bits) - 1;
        for r in batch {
            let end = r.addr + r.size as u64 - 1;
            for line in (r.addr >> bits)..=(end >> bits) {
                let lo = if line == r.addr >> bits {
                    r.addr & lmask
                } else {
                    0
                };
                let hi = if line == end >> bits {
                    end & lmask
                } else {
                    lmask
                };
                let n = hi - lo + 1;
                let m = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 } << lo;
                self.touch(line, m, r);
            }
        }
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
}
