//! Decoding the calls of a version 3 to 6 heap profile
//! (`docs/heap-profile-format.md`): one thread's ZCHUNK
//! blocks, each five compressed columns, decoded in order with the
//! per-thread tables the writer (`mv_heap.c`'s collector) keeps alike.
//! Version 6 packs the time deltas two bits a call (see [`Block::dt`]).
//!
//! Cost: per call a few varints and array lookups, no hashing; memory per
//! thread: the tables below (about 64 KiB) and one decompressed block.
use crate::trace::record::{get_uv, unzigzag};

/// Recent frees an allocation may name by number (a power of two).
const FREED_RING: usize = 4096;
/// Recent allocations a free may name by number (a power of two).
const AGE_RING: usize = 4096;
/// Entries of the (size, slack, stack) dictionary.
const INFO_IDS: usize = 4096;
/// Tag bit: the address is a reference (an allocation's or a free's number).
const F_REF: u8 = 0x20;
/// Tag bit: a dictionary entry is defined here.
const F_DEF: u8 = 0x40;
/// Tag bit (version 4): the call was timed, its duration is in the
/// durations column. Version 3 times every call and never sets it.
const F_TIMED: u8 = 0x80;
/// The columns of a block, in their order in the file.
const STREAMS: usize = 5;
const S_TAG: usize = 0;
const S_TIME: usize = 1;
const S_DUR: usize = 2;
const S_ADDR: usize = 3;
const S_INFO: usize = 4;

/// Largest decompressed column accepted (the writer's are at most
/// 256 KiB): a bigger claim is damage, not a reason to allocate.
const MAX_RAW: u64 = 8 << 20;

/// One decompressed block: its columns and a read position in each, and
/// the zstd context, kept from block to block.
#[derive(Default)]
pub(crate) struct Block {
    zstd: Option<zstd::bulk::Decompressor<'static>>,
    cols: [Vec<u8>; STREAMS],
    pos: [usize; STREAMS],
    /// Calls in the block, and calls not yet decoded.
    pub(crate) calls: u64,
    pub(crate) left: u64,
    /// Version 6: the time column is two bits a call, then the escapes.
    packed_times: bool,
}

/// Decodes the varint at `*pos`, advancing it.
#[inline]
fn uv(b: &[u8], pos: &mut usize) -> Option<u64> {
    // The common one-byte case without the general loop.
    let first = *b.get(*pos)?;
    if first < 0x80 {
        *pos += 1;
        return Some(first as u64);
    }
    let (v, p) = get_uv(b, *pos).ok()?;
    *pos = p;
    Some(v)
}

impl Block {
    /// An empty block of a profile of format `version`.
    pub(crate) fn for_version(version: u64) -> Block {
        Block {
            packed_times: version >= 6,
            ..Block::default()
        }
    }

    /// Reads a ZCHUNK block's body `data` (five columns, each: raw length
    /// uv, codec u8 (0 stored, 1 zstd), length uv, bytes) of `calls` calls.
    pub(crate) fn unpack(&mut self, data: &[u8], calls: u64) -> Result<(), String> {
        let mut at = 0;
        for s in 0..STREAMS {
            let short = || "the block is cut short".to_string();
            let raw = uv(data, &mut at).ok_or_else(short)?;
            let codec = *data.get(at).ok_or_else(short)?;
            at += 1;
            let len = uv(data, &mut at).ok_or_else(short)? as usize;
            let bytes = data.get(at..at.saturating_add(len)).ok_or_else(short)?;
            at += len;
            if self.zstd.is_none() {
                self.zstd = Some(
                    zstd::bulk::Decompressor::new()
                        .map_err(|e| format!("zstd cannot start ({e})"))?,
                );
            }
            let z = self.zstd.as_mut().expect("made above");
            unpack(z, codec, raw, bytes, &mut self.cols[s])?;
            self.pos[s] = 0;
        }
        if self.cols[S_TAG].len() as u64 != calls {
            return Err(format!(
                "the block has {} tags for {calls} calls",
                self.cols[S_TAG].len()
            ));
        }
        if self.packed_times {
            // The escapes start after the packed codes.
            let codes = calls.div_ceil(4) as usize;
            if self.cols[S_TIME].len() < codes {
                return Err(format!(
                    "the block's time column has {} bytes for {calls} calls",
                    self.cols[S_TIME].len()
                ));
            }
            self.pos[S_TIME] = codes;
        }
        self.calls = calls;
        self.left = calls;
        Ok(())
    }

    /// The time delta, in units, of the block's call `i`: from version 6
    /// its two-bit code (0, 1 or 2 units; 3: the next escape, an sv);
    /// before, the column's next sv.
    #[inline]
    fn dt(&mut self, i: usize) -> Option<i64> {
        if !self.packed_times {
            return self.sv(S_TIME);
        }
        let code = (self.cols[S_TIME].get(i / 4)? >> (2 * (i % 4))) & 3;
        if code < 3 {
            return Some(code as i64);
        }
        self.sv(S_TIME)
    }

    #[inline]
    fn uv(&mut self, s: usize) -> Option<u64> {
        uv(&self.cols[s], &mut self.pos[s])
    }

    #[inline]
    fn sv(&mut self, s: usize) -> Option<i64> {
        Some(unzigzag(self.uv(s)?))
    }
}

/// Decompresses one column (codec 0: stored, 1: zstd) of `raw` bytes.
fn unpack(
    z: &mut zstd::bulk::Decompressor<'static>,
    codec: u8,
    raw: u64,
    data: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), String> {
    out.clear();
    if raw > MAX_RAW {
        return Err(format!("a column claims {raw} bytes decompressed"));
    }
    match codec {
        0 => out.extend_from_slice(data),
        1 => {
            out.reserve(raw as usize);
            z.decompress_to_buffer(data, out)
                .map_err(|e| format!("a zstd column does not decompress ({e})"))?;
        }
        c => return Err(format!("unknown column codec {c}")),
    }
    if out.len() as u64 != raw {
        return Err(format!(
            "a column decompressed to {} bytes, not the {raw} it claims",
            out.len()
        ));
    }
    Ok(())
}

/// One thread's decoding state: its time unit, last literal address, the
/// numbers of its allocations and frees, and the tables the writer mirrors.
pub(crate) struct ThreadDecoder {
    /// The thread's time, in units of 2^tick_shift ticks.
    unit: u64,
    addr: u64,
    allocs: u64,
    frees: u64,
    allocated: Vec<u64>,
    freed: Vec<u64>,
    info: Vec<(u64, u64, u32)>,
    /// Dictionary entries defined so far.
    defined: u64,
}

/// A decoded call, as the file has it: the reader (`heapprof`) turns it
/// into a `ProfileEvent`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Call {
    /// Timestamp in ticks.
    pub(crate) tsc: u64,
    /// The tag's kind: 1-6 allocations (3 realloc), 17-19 frees.
    pub(crate) kind: u8,
    /// The block returned or freed (0: a realloc that only freed).
    pub(crate) addr: u64,
    pub(crate) size: u64,
    pub(crate) slack: u64,
    /// Realloc only: the block replaced.
    pub(crate) old: Option<u64>,
    /// The profiler's stack id.
    pub(crate) stack: u32,
    /// Ticks spent in the real allocator; `None` when the call was not
    /// timed (version 4 times a sample of the calls).
    pub(crate) dur: Option<u64>,
}

impl ThreadDecoder {
    /// A thread's state before its first call; `unit0` is the header's
    /// start time in units.
    pub(crate) fn new(unit0: u64) -> ThreadDecoder {
        ThreadDecoder {
            unit: unit0,
            addr: 0,
            allocs: 0,
            frees: 0,
            allocated: vec![0; AGE_RING],
            freed: vec![0; FREED_RING],
            info: vec![(0, 0, 0); INFO_IDS],
            defined: 0,
        }
    }

    /// A literal address: a delta from the last literal one.
    #[inline]
    fn literal(&mut self, b: &mut Block) -> Option<u64> {
        let a = self.addr.wrapping_add(b.sv(S_ADDR)? as u64);
        if a != 0 {
            self.addr = a;
        }
        Some(a)
    }

    /// The address of a block being freed: by the number of allocations
    /// since the one that returned it, or literal.
    #[inline]
    fn freed_addr(&mut self, tag: u8, b: &mut Block) -> Option<u64> {
        let a = if tag & F_REF != 0 {
            let age = b.uv(S_ADDR)?;
            if age >= AGE_RING as u64 || age >= self.allocs {
                return None;
            }
            self.allocated[((self.allocs - 1 - age) as usize) % AGE_RING]
        } else {
            self.literal(b)?
        };
        self.frees += 1;
        self.freed[(self.frees as usize) % FREED_RING] = a;
        Some(a)
    }

    /// The address of a block returned by an allocation: by the number of
    /// frees since the one that freed that address, or literal.
    #[inline]
    fn new_addr(&mut self, tag: u8, b: &mut Block) -> Option<u64> {
        let a = if tag & F_REF != 0 {
            let back = b.uv(S_ADDR)?;
            if back >= FREED_RING as u64 || back >= self.frees {
                return None;
            }
            self.freed[((self.frees - back) as usize) % FREED_RING]
        } else {
            self.literal(b)?
        };
        self.allocated[(self.allocs as usize) % AGE_RING] = a;
        self.allocs += 1;
        Some(a)
    }

    /// (size, slack, stack): defined here as the dictionary's next entry
    /// when the tag says so, else its number in the dictionary.
    #[inline]
    fn info(&mut self, tag: u8, b: &mut Block) -> Option<(u64, u64, u32)> {
        if tag & F_DEF != 0 {
            let size = b.uv(S_INFO)?;
            let slack = b.uv(S_INFO)?;
            let stack = b.uv(S_INFO)?.min(u32::MAX as u64) as u32;
            let k = (self.defined % INFO_IDS as u64) as usize;
            self.defined += 1;
            self.info[k] = (size, slack, stack);
            return Some(self.info[k]);
        }
        let k = b.uv(S_INFO)?;
        if k >= INFO_IDS as u64 || k >= self.defined {
            return None;
        }
        Some(self.info[k as usize])
    }

    /// Decodes the block's next call of thread `tid`; `all_timed` (version
    /// 3) says every call has a duration, else (version 4) the calls whose
    /// tag has [`F_TIMED`] do. `None` where the
    /// bytes are damaged or a column ends early. Inlined into the
    /// reader's loop: returned through memory, the call's fields were
    /// written piecewise and read back whole, a store-forwarding stall
    /// that took half of the loop's time.
    #[inline]
    pub(crate) fn call(
        &mut self,
        b: &mut Block,
        tick_shift: u32,
        dur_shift: u32,
        all_timed: bool,
    ) -> Option<Call> {
        let i = b.pos[S_TAG];
        let tag = *b.cols[S_TAG].get(i)?;
        b.pos[S_TAG] += 1;
        b.left = b.left.checked_sub(1)?;
        self.unit = self.unit.wrapping_add(b.dt(i)? as u64);
        let dur = if all_timed || tag & F_TIMED != 0 {
            Some(b.uv(S_DUR)? << dur_shift)
        } else {
            None
        };
        let mut c = Call {
            kind: tag & 0x1f,
            dur,
            ..Call::default()
        };
        match c.kind {
            17..=19 => c.addr = self.freed_addr(tag, b)?,
            3 => {
                let old = if b.uv(S_ADDR)? != 0 {
                    c.addr = self.new_addr(tag, b)?;
                    c.addr.wrapping_add(b.sv(S_ADDR)? as u64)
                } else {
                    b.uv(S_ADDR)?
                };
                c.old = Some(old);
                (c.size, c.slack, c.stack) = self.info(tag, b)?;
            }
            1 | 2 | 4..=6 => {
                c.addr = self.new_addr(tag, b)?;
                (c.size, c.slack, c.stack) = self.info(tag, b)?;
            }
            _ => return None,
        }
        c.tsc = self.unit << tick_shift;
        Some(c)
    }
}
