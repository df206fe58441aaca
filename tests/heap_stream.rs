//! The streamed heap profile reader against profiles written by hand, in
//! format versions 1, 2, 3, 4, 6 and 7: two threads whose records are interleaved out
//! of time order in the file, so the summaries are right only if the
//! reader merges the threads into time order. Every expected number is
//! worked out by hand below, from the calls listed in [`CALLS`].
mod common;

use mapvis::filter::heap::{size_class, HeapReport, HeapRun};
use mapvis::trace::heap::{HeapOp, ProfileReader};
use mapvis::trace::record::{put_sv, put_uv};

/// One allocator call: (thread, tsc, op, address, size, old address).
/// op: 'm' malloc, 'f' free, 'r' realloc. Stack 1 is site A, 2 site B.
type Call = (u32, u64, char, u64, u64, u64, u64);

const TSC0: u64 = 1000;

/// The calls, in the order the file holds them: thread 1's first two,
/// thread 2's three, thread 1's last two, thread 2's last (time order is
/// by the second field). Fields: tid, tsc, op, addr, size, old, stack.
const CALLS: [Call; 8] = [
    (1, 1100, 'm', 0x1000, 100, 0, 1),
    (1, 1300, 'm', 0x2000, 50, 0, 2),
    (2, 1200, 'm', 0x3000, 200, 0, 1),
    (2, 1400, 'm', 0x4000, 30, 0, 2),
    (2, 1600, 'r', 0x5000, 400, 0x3000, 1),
    (1, 1500, 'f', 0x2000, 0, 0, 0),
    (1, 1900, 'f', 0x1000, 0, 0, 0),
    (2, 1800, 'f', 0x5000, 0, 0, 0),
];

/// Groups of CALLS that form one thread's stretch in the file.
const STRETCHES: [std::ops::Range<usize>; 4] = [0..2, 2..5, 5..7, 7..8];

fn header(version: u64) -> Vec<u8> {
    header_with(version, true)
}

/// A header of `version`; from version 7 it says whether the calls are
/// written.
fn header_with(version: u64, calls: bool) -> Vec<u8> {
    let mut b = b"MVHEAPP\n".to_vec();
    for v in [version, 42, 1_700_000_000_000_000, TSC0, 5000, 16] {
        put_uv(&mut b, v);
    }
    if version >= 3 {
        // Times in units of 4 ticks, durations in units of 2 ticks.
        put_uv(&mut b, V3_TICK_SHIFT);
        put_uv(&mut b, V3_DUR_SHIFT);
    }
    if version >= 4 {
        // Durations sampled about 1 in 64 (the calls say which were timed).
        put_uv(&mut b, 64);
    }
    if version >= 7 {
        put_uv(&mut b, calls as u64);
    }
    put_uv(&mut b, 4);
    b.extend_from_slice(b"prog");
    put_uv(&mut b, 1);
    put_uv(&mut b, 4);
    b.extend_from_slice(b"prog");
    b
}

fn stacks(b: &mut Vec<u8>) {
    for (id, ip) in [(1u64, 0x401000u64), (2, 0x402000)] {
        put_uv(b, 2); // STACK
        put_uv(b, id);
        put_uv(b, 1);
        put_uv(b, ip);
    }
}

/// The fields of a call after its key and kind (both versions), updating
/// the thread's delta bases.
fn fields(b: &mut Vec<u8>, c: &Call, base: &mut (u64, u64)) {
    let (_, tsc, op, addr, size, old, stack) = *c;
    put_sv(b, (tsc - base.0) as i64);
    base.0 = tsc;
    put_uv(b, 10); // duration in ticks
    put_sv(b, addr.wrapping_sub(base.1) as i64);
    base.1 = addr;
    match op {
        'f' => {}
        'r' => {
            put_uv(b, 1);
            put_sv(b, old.wrapping_sub(addr) as i64);
            put_uv(b, size);
            put_uv(b, 0);
            put_uv(b, stack);
        }
        _ => {
            put_uv(b, size);
            put_uv(b, 0);
            put_uv(b, stack);
        }
    }
}

fn footer(b: &mut Vec<u8>) {
    put_uv(b, 9);
    for v in [TSC0 + 1000, 6000, 2, 2] {
        put_uv(b, v);
    }
    put_uv(b, 0);
    b.extend_from_slice(b"MVEND\n");
}

/// Version 1: THREAD records switch threads; ALLOC 3, FREE 4, REALLOC 5.
fn profile_v1() -> Vec<u8> {
    let mut b = header(1);
    let mut bases = [(TSC0, 0u64); 3];
    for (k, r) in STRETCHES.iter().enumerate() {
        let tid = CALLS[r.start].0;
        put_uv(&mut b, 1);
        put_uv(&mut b, tid as u64);
        put_uv(&mut b, 100 + tid as u64);
        if k == 0 {
            stacks(&mut b);
        }
        for c in &CALLS[r.clone()] {
            match c.2 {
                'f' => {
                    put_uv(&mut b, 4);
                    b.push(1);
                }
                'r' => put_uv(&mut b, 5),
                _ => {
                    put_uv(&mut b, 3);
                    b.push(1);
                }
            }
            fields(&mut b, c, &mut bases[tid as usize]);
        }
    }
    footer(&mut b);
    b
}

/// Version 2: stacks outside, each stretch a CHUNK block (key 10, tid,
/// os tid, 4-byte length) of tagged calls (1 malloc, 3 realloc, 17 free).
fn profile_v2() -> Vec<u8> {
    let mut b = header(2);
    stacks(&mut b);
    let mut bases = [(TSC0, 0u64); 3];
    for r in STRETCHES.iter() {
        let tid = CALLS[r.start].0;
        let mut body = Vec::new();
        for c in &CALLS[r.clone()] {
            body.push(match c.2 {
                'f' => 17,
                'r' => 3,
                _ => 1,
            });
            fields(&mut body, c, &mut bases[tid as usize]);
        }
        put_uv(&mut b, 10);
        put_uv(&mut b, tid as u64);
        put_uv(&mut b, 100 + tid as u64);
        b.extend_from_slice(&(body.len() as u32).to_le_bytes());
        b.extend_from_slice(&body);
    }
    footer(&mut b);
    b
}

const V3_TICK_SHIFT: u64 = 2;
const V3_DUR_SHIFT: u64 = 1;

/// A version 3 thread's writer state: its time unit, last literal
/// address, its allocations' and frees' addresses by number, and its
/// (size, slack, stack) dictionary.
#[derive(Default)]
struct V3Thread {
    unit: u64,
    addr: u64,
    allocated: Vec<u64>,
    freed: Vec<u64>,
    dict: Vec<(u64, u64, u64)>,
    /// Version 4: only the thread's calls of even number are timed (tag
    /// bit 0x80 and a duration); version 3 times every call.
    v4: bool,
    calls: u64,
    /// Version 6: time deltas as two-bit codes (3: an escape), packed
    /// into the block's time column by [`zchunk`].
    packed: bool,
    codes: Vec<u8>,
    escapes: Vec<u8>,
}

/// The five columns of a version 3 block: tags, time deltas, durations,
/// addresses, dictionary.
type Columns = [Vec<u8>; 5];

impl V3Thread {
    fn literal(&mut self, cols: &mut Columns, a: u64) {
        put_sv(&mut cols[3], a.wrapping_sub(self.addr) as i64);
        self.addr = a;
    }

    /// A returned address: by the number of frees since it was freed
    /// (tag bit 0x20), else literal.
    fn new_addr(&mut self, cols: &mut Columns, tag: &mut u8, a: u64) {
        match self.freed.iter().rev().position(|&f| f == a) {
            Some(back) => {
                *tag |= 0x20;
                put_uv(&mut cols[3], back as u64);
            }
            None => self.literal(cols, a),
        }
        self.allocated.push(a);
    }

    /// A freed address: by the number of allocations since the one that
    /// returned it (tag bit 0x20), else literal.
    fn freed_addr(&mut self, cols: &mut Columns, tag: &mut u8, a: u64) {
        match self.allocated.iter().rev().position(|&x| x == a) {
            Some(age) => {
                *tag |= 0x20;
                put_uv(&mut cols[3], age as u64);
            }
            None => self.literal(cols, a),
        }
        self.freed.push(a);
    }

    /// (size, 0, stack) by its dictionary number, or defined (tag 0x40).
    fn info(&mut self, cols: &mut Columns, tag: &mut u8, size: u64, stack: u64) {
        match self.dict.iter().position(|&d| d == (size, 0, stack)) {
            Some(k) => put_uv(&mut cols[4], k as u64),
            None => {
                *tag |= 0x40;
                for v in [size, 0, stack] {
                    put_uv(&mut cols[4], v);
                }
                self.dict.push((size, 0, stack));
            }
        }
    }

    /// Encodes one call (duration 10 ticks) into the columns.
    fn call(&mut self, cols: &mut Columns, c: &Call) {
        let (_, tsc, op, addr, size, old, stack) = *c;
        let mut tag: u8 = match op {
            'f' => 17,
            'r' => 3,
            _ => 1,
        };
        let unit = tsc >> V3_TICK_SHIFT;
        let dt = unit.wrapping_sub(self.unit) as i64;
        if !self.packed {
            put_sv(&mut cols[1], dt);
        } else if (0..3).contains(&dt) {
            self.codes.push(dt as u8);
        } else {
            self.codes.push(3);
            put_sv(&mut self.escapes, dt);
        }
        self.unit = unit;
        if !self.v4 || self.calls.is_multiple_of(2) {
            if self.v4 {
                tag |= 0x80;
            }
            put_uv(&mut cols[2], 10 >> V3_DUR_SHIFT);
        }
        self.calls += 1;
        match op {
            'f' => self.freed_addr(cols, &mut tag, addr),
            'r' => {
                put_uv(&mut cols[3], 1);
                self.new_addr(cols, &mut tag, addr);
                put_sv(&mut cols[3], old.wrapping_sub(addr) as i64);
                self.info(cols, &mut tag, size, stack);
            }
            _ => {
                self.new_addr(cols, &mut tag, addr);
                self.info(cols, &mut tag, size, stack);
            }
        }
        cols[0].push(tag);
    }
}

/// Appends a ZCHUNK block (key 12: tid, os tid, calls, 4-byte length,
/// then per column: raw length, codec, length, bytes) of `calls`;
/// `zstd` compresses the columns, else they are stored.
fn zchunk(b: &mut Vec<u8>, st: &mut V3Thread, tid: u32, calls: &[Call], zstd: bool) {
    let mut cols: Columns = Default::default();
    for c in calls {
        st.call(&mut cols, c);
    }
    if st.packed {
        // Four codes a byte, the first call's in the low bits.
        for (i, code) in st.codes.drain(..).enumerate() {
            if i % 4 == 0 {
                cols[1].push(0);
            }
            *cols[1].last_mut().unwrap() |= code << (2 * (i % 4));
        }
        cols[1].append(&mut st.escapes);
    }
    let mut body = Vec::new();
    for col in &cols {
        put_uv(&mut body, col.len() as u64);
        let data = if zstd {
            body.push(1);
            zstd::bulk::compress(col, 3).unwrap()
        } else {
            body.push(0);
            col.clone()
        };
        put_uv(&mut body, data.len() as u64);
        body.extend_from_slice(&data);
    }
    put_uv(b, 12);
    put_uv(b, tid as u64);
    put_uv(b, 100 + tid as u64);
    put_uv(b, calls.len() as u64);
    b.extend_from_slice(&(body.len() as u32).to_le_bytes());
    b.extend_from_slice(&body);
}

/// Version 3: the stretches as ZCHUNK blocks, the first two compressed,
/// the others stored; thread 2's realloc and both threads' frees refer to
/// their blocks by number.
fn profile_v3() -> Vec<u8> {
    profile_v3_or_4(3)
}

/// Version 4: as version 3, but each thread timed only its calls of even
/// number (thread 1's first and third, thread 2's first and third).
fn profile_v4() -> Vec<u8> {
    profile_v3_or_4(4)
}

fn profile_v3_or_4(version: u64) -> Vec<u8> {
    let mut b = header(version);
    stacks(&mut b);
    let mut threads: [V3Thread; 3] = Default::default();
    for t in &mut threads {
        t.unit = TSC0 >> V3_TICK_SHIFT;
        t.v4 = version >= 4;
        t.packed = version >= 6;
    }
    for (k, r) in STRETCHES.iter().enumerate() {
        let tid = CALLS[r.start].0;
        zchunk(
            &mut b,
            &mut threads[tid as usize],
            tid,
            &CALLS[r.clone()],
            k < 2,
        );
    }
    footer(&mut b);
    b
}

fn open(bytes: &[u8]) -> (tempfile::TempDir, HeapRun) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.mvh");
    std::fs::write(&path, bytes).unwrap();
    let run = HeapRun::open_profile(&path).expect("the profile reads");
    (dir, run)
}

/// Worked by hand, in time order (1 tick = 1 ns, times from TSC0):
///   100 t1 malloc 100 A   live 100
///   200 t2 malloc 200 A   live 300
///   300 t1 malloc  50 B   live 350
///   400 t2 malloc  30 B   live 380
///   500 t1 free  0x2000   live 330  (t1's last allocation: temporary, B)
///   600 t2 realloc 0x3000 -> 0x5000, 400 A: frees 200 (not t2's last
///       allocation, 0x4000), live 130, then 530: the peak, at 600
///   800 t2 free  0x5000   live 130  (t2's last allocation: temporary, A)
///   900 t1 free  0x1000   live  30  (t1's last was already taken)
/// Leaked: 30 bytes in 1 block, site B. Every call was timed.
fn check(run: &HeapRun) {
    let calls = run.calls().unwrap();
    assert!(calls.iter().all(|c| c.dur_ns == Some(10)));
    assert_eq!(run.dur_sample, Some(1));
    let r = check_counts(run);
    // Each call took 10 ticks = 10 ns: every duration row says so.
    assert!(r
        .times
        .iter()
        .all(|t| (t.median, t.p99, t.max) == (10, 10, 10)));
    let thread_allocs: Vec<u64> = r
        .times
        .iter()
        .filter(|t| t.group.starts_with("thread") && t.op == "alloc")
        .map(|t| t.count)
        .collect();
    assert_eq!(thread_allocs, [2, 3]);
    assert_eq!(r.timed_calls, (8, 8));
}

/// What every version agrees on (see [`check`]), durations aside.
fn check_counts(run: &HeapRun) -> HeapReport {
    let calls = run.calls().unwrap();
    let times: Vec<u64> = calls.iter().map(|c| c.time).collect();
    assert_eq!(times, [100, 200, 300, 400, 500, 600, 800, 900]);
    assert_eq!(
        calls[5].op,
        HeapOp::Alloc(mapvis::trace::record::AllocKind::Realloc)
    );
    assert_eq!((calls[5].addr, calls[5].old), (0x5000, Some(0x3000)));
    assert_eq!(run.end_time, 1000);
    assert_eq!(run.stacks, vec![vec![], vec![0x401000], vec![0x402000]]);

    let r = HeapReport::build(run).unwrap();
    assert_eq!(
        (r.counts.allocs, r.counts.frees, r.counts.bytes),
        (5, 4, 780)
    );
    assert_eq!(r.counts.peak_live, (530, 600));
    assert_eq!(r.counts.leaked, (30, 1));
    assert_eq!(
        (r.counts.temporary, r.counts.unknown_frees, r.counts.threads),
        (2, 0, 2)
    );
    let a = &r.counts.sites[1];
    assert_eq!(
        (
            a.allocs,
            a.bytes,
            a.peak_live,
            a.live,
            a.leaked_blocks,
            a.temporary
        ),
        (3, 700, 500, 0, 0, 1)
    );
    let b = &r.counts.sites[2];
    assert_eq!(
        (
            b.allocs,
            b.bytes,
            b.peak_live,
            b.live,
            b.leaked_blocks,
            b.temporary
        ),
        (2, 80, 80, 30, 1, 1)
    );
    // Sizes: 100 in 65-128, 200 in 129-256, 50 in 33-64, 30 in 17-32, 400
    // in 257-512; the frees of 50, 200, 400, 100.
    for (size, frees) in [(100, 1), (200, 1), (50, 1), (30, 0), (400, 1)] {
        let c = &r.counts.classes[size_class(size)];
        assert_eq!(
            (c.allocs, c.bytes, c.frees),
            (1, size, frees),
            "size {size}"
        );
    }
    r
}

#[test]
fn version_1_profile_is_merged_into_time_order() {
    let (_d, run) = open(&profile_v1());
    assert!(run.notes.is_empty(), "{:?}", run.notes);
    check(&run);
}

#[test]
fn version_2_profile_is_merged_into_time_order() {
    let (_d, run) = open(&profile_v2());
    assert!(run.notes.is_empty(), "{:?}", run.notes);
    check(&run);
}

#[test]
fn version_3_profile_is_merged_into_time_order() {
    let (_d, run) = open(&profile_v3());
    assert!(run.notes.is_empty(), "{:?}", run.notes);
    check(&run);
}

#[test]
fn version_6_profile_is_merged_into_time_order() {
    let (_d, run) = open(&profile_v3_or_4(6));
    assert!(run.notes.is_empty(), "{:?}", run.notes);
    check_counts(&run);
    let times: Vec<u64> = run.calls().unwrap().iter().map(|c| c.time).collect();
    assert_eq!(times, [100, 200, 300, 400, 500, 600, 800, 900]);
}

/// A version 6 profile's header and stacks, and one thread's writer
/// state (calls of even number timed, time deltas packed).
fn v6_start() -> (Vec<u8>, V3Thread) {
    let mut b = header(6);
    stacks(&mut b);
    let t = V3Thread {
        unit: TSC0 >> V3_TICK_SHIFT,
        v4: true,
        packed: true,
        ..Default::default()
    };
    (b, t)
}

/// Version 6's packed time deltas, worked by hand (units of 4 ticks from
/// TSC0 = 1000): one thread's calls at 1000, 1004, 1012, 1024, 1024, 1100,
/// 1104, 1112 and 1112 take deltas 0, 1, 2, 3, 0, 19, 1, 2, 0 units:
/// codes 0 1 2 3 | 0 3 1 2 | 0 with the escapes 3 and 19, in a first
/// block of 5 calls (zstd) and a second of 4 (stored), so a block's codes
/// end inside a byte and the escapes of each block are its own.
#[test]
fn version_6_time_codes_and_escapes_resolve() {
    let times = [1000, 1004, 1012, 1024, 1024, 1100, 1104, 1112, 1112];
    let calls: Vec<Call> = times
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            let a = 0x1000 * (i as u64 / 2 + 1);
            if i % 2 == 0 {
                (1, t, 'm', a, 16, 0, 1)
            } else {
                (1, t, 'f', a, 0, 0, 0)
            }
        })
        .collect();
    let (mut b, mut t) = v6_start();
    zchunk(&mut b, &mut t, 1, &calls[..5], true);
    zchunk(&mut b, &mut t, 1, &calls[5..], false);
    footer(&mut b);
    let (_d, run) = open(&b);
    assert!(run.notes.is_empty(), "{:?}", run.notes);
    let got: Vec<(u64, u64)> = run
        .calls()
        .unwrap()
        .iter()
        .map(|c| (c.time, c.addr))
        .collect();
    let want: Vec<(u64, u64)> = calls.iter().map(|c| (c.1 - TSC0, c.3)).collect();
    assert_eq!(got, want);
    let r = HeapReport::build(&run).unwrap();
    assert_eq!(
        (r.counts.allocs, r.counts.frees, r.counts.bytes),
        (5, 4, 80)
    );
    assert_eq!(r.counts.leaked, (16, 1));
}

/// A version 6 block whose time column is shorter than its calls' codes
/// is reported as damaged, with the file and offset, not read as times.
#[test]
fn version_6_short_time_column_is_damage() {
    let calls: [Call; 2] = [
        (1, 1004, 'm', 0x1000, 16, 0, 1),
        (1, 1008, 'f', 0x1000, 0, 0, 0),
    ];
    let (mut b, mut t) = v6_start();
    let mut cols: Columns = Default::default();
    for c in &calls {
        t.call(&mut cols, c);
    }
    // The codes are dropped: the time column is empty for 2 calls, which
    // need a byte of codes.
    t.codes.clear();
    let mut body = Vec::new();
    for col in &cols {
        put_uv(&mut body, col.len() as u64);
        body.push(0);
        put_uv(&mut body, col.len() as u64);
        body.extend_from_slice(col);
    }
    put_uv(&mut b, 12);
    put_uv(&mut b, 1);
    put_uv(&mut b, 101);
    put_uv(&mut b, 2);
    b.extend_from_slice(&(body.len() as u32).to_le_bytes());
    b.extend_from_slice(&body);
    footer(&mut b);
    let (_d, run) = open(&b);
    let e = run.calls().unwrap_err().to_string();
    assert!(e.contains("time column has 0 bytes for 2 calls"), "{e}");
    assert!(e.contains("p.mvh"), "{e}");
}

/// Version 4 times a sample: here each thread's calls of even number.
/// In time order (see [`check`]) thread 1's calls are its malloc at 100
/// (timed), malloc at 300, free at 500 (timed), free at 900; thread 2's
/// malloc at 200 (timed), malloc at 400, realloc at 600 (timed), free at
/// 800. Every count is exact; the durations are those of the four timed
/// calls, and the report says 4 of 8 were timed, sampled 1 in 64 (the
/// header's period).
#[test]
fn version_4_profile_times_a_sample() {
    let (_d, run) = open(&profile_v4());
    assert!(run.notes.is_empty(), "{:?}", run.notes);
    assert_eq!(run.dur_sample, Some(64));
    let calls = run.calls().unwrap();
    let timed: Vec<u64> = calls
        .iter()
        .filter(|c| c.dur_ns.is_some())
        .map(|c| c.time)
        .collect();
    assert_eq!(timed, [100, 200, 500, 600]);
    assert!(calls.iter().all(|c| c.dur_ns.is_none_or(|d| d == 10)));
    let r = check_counts(&run);
    assert_eq!(r.timed_calls, (4, 8));
    assert_eq!(r.dur_sample, 64);
    // Per thread: thread 1 timed 1 of 2 allocations and 1 of 2 frees;
    // thread 2 2 of 3 allocations (the realloc counts as one) and none of
    // its 1 free (the realloc's free of 0x3000 is part of the realloc).
    let rows: Vec<(&str, &str, u64, u64)> = r
        .times
        .iter()
        .filter(|t| t.group.starts_with("thread"))
        .map(|t| (t.group.as_str(), t.op, t.count, t.calls))
        .collect();
    assert_eq!(
        rows,
        [
            ("thread 1", "alloc", 1, 2),
            ("thread 1", "free", 1, 2),
            ("thread 2", "alloc", 2, 3)
        ]
    );
    let note = run.duration_note(&r).unwrap();
    assert!(
        note.contains("estimates from a sample: 4 of 8 calls timed (sampled 1 in 64"),
        "{note}"
    );
}

/// Version 3's references, worked by hand: one thread mallocs 16 bytes at
/// 0x1000 and frees it, mallocs 16 again (the allocator gives 0x1000
/// back: named by the free before), mallocs 32 at 0x2000, frees 0x1000
/// (two allocations back), mallocs 16 at 0x1000 (the dictionary's first
/// entry, by number) and frees 0x2000 and 0x1000.
#[test]
fn version_3_references_resolve() {
    let calls: [Call; 8] = [
        (1, 1004, 'm', 0x1000, 16, 0, 1),
        (1, 1008, 'f', 0x1000, 0, 0, 0),
        (1, 1012, 'm', 0x1000, 16, 0, 1),
        (1, 1016, 'm', 0x2000, 32, 0, 2),
        (1, 1020, 'f', 0x1000, 0, 0, 0),
        (1, 1024, 'm', 0x1000, 16, 0, 1),
        (1, 1028, 'f', 0x2000, 0, 0, 0),
        (1, 1032, 'f', 0x1000, 0, 0, 0),
    ];
    let mut b = header(3);
    stacks(&mut b);
    let mut t = V3Thread {
        unit: TSC0 >> V3_TICK_SHIFT,
        ..Default::default()
    };
    zchunk(&mut b, &mut t, 1, &calls[..5], true);
    zchunk(&mut b, &mut t, 1, &calls[5..], false);
    footer(&mut b);
    // Only the first call's address and the 32-byte block's are literal;
    // two sizes are defined, and 16 is taken by number twice (the second
    // time in the next block).
    let (_d, run) = open(&b);
    let got: Vec<(u64, u64, u64, u32)> = run
        .calls()
        .unwrap()
        .iter()
        .map(|c| (c.time, c.addr, c.size, c.stack))
        .collect();
    let want: Vec<(u64, u64, u64, u32)> = calls
        .iter()
        .map(|c| (c.1 - TSC0, c.3, c.4, c.6 as u32))
        .collect();
    assert_eq!(got, want);
    let r = HeapReport::build(&run).unwrap();
    // 16 + 16 + 32 + 16 bytes, all freed; live 16, 0, 16, 48 (the peak,
    // at 16 ns), 32, 48, 16, 0. Temporary (freed while the thread's last
    // allocation): the first block (at 8 ns) and the last (at 32 ns).
    assert_eq!(
        (r.counts.allocs, r.counts.frees, r.counts.bytes),
        (4, 4, 80)
    );
    assert_eq!(r.counts.peak_live, (48, 16));
    assert_eq!(r.counts.leaked, (0, 0));
    assert_eq!(r.counts.temporary, 2);
}

/// Long runs of two threads, merged: thread 1 makes 3000 malloc/free
/// pairs of 16 bytes (site A, three addresses in turn), thread 2 3000 of
/// 100 bytes (site B, two addresses), in alternating runs of 7 pairs (t1)
/// and 5 pairs (t2), one call every 4 ticks. Each thread's calls are in
/// blocks of 1000, thread 2's blocks all before thread 1's in the file.
/// More calls than the reader decodes or hands over at once (2048), and
/// a change of thread every 10 or 14 calls, in the middle of the decoded
/// buffers: the merge's run of one thread between two of the other's and
/// the reuse of handed-over batches.
///
/// Worked by hand: every free is of the block its thread allocated just
/// before (a temporary) and comes before the other thread's next call,
/// so at most one block is live: 6000 allocations and frees, 3000 · 16 +
/// 3000 · 100 = 348 000 bytes, 6000 temporaries, nothing leaked, peak 100
/// bytes at thread 2's first malloc, the 15th call (time 15 · 4 = 60 ns).
#[test]
fn long_interleaved_runs_merge_exactly() {
    let (pairs, runs) = (3000usize, [7usize, 5]);
    let mut per: [Vec<Call>; 2] = Default::default();
    let mut order = Vec::new();
    let (mut done, mut t) = ([0usize; 2], TSC0);
    while done != [pairs, pairs] {
        for th in 0..2 {
            for _ in 0..runs[th].min(pairs - done[th]) {
                let k = done[th] as u64;
                let (addr, size) = match th {
                    0 => (0x10000 + 0x100 * (k % 3), 16),
                    _ => (0x20000 + 0x100 * (k % 2), 100),
                };
                let tid = th as u32 + 1;
                t += 4;
                per[th].push((tid, t, 'm', addr, size, 0, tid as u64));
                t += 4;
                per[th].push((tid, t, 'f', addr, 0, 0, 0));
                order.push((t - 4 - TSC0, tid, addr));
                order.push((t - TSC0, tid, addr));
                done[th] += 1;
            }
        }
    }
    let mut b = header(3);
    stacks(&mut b);
    for th in [1, 0] {
        let mut st = V3Thread {
            unit: TSC0 >> V3_TICK_SHIFT,
            ..Default::default()
        };
        for (k, block) in per[th].chunks(1000).enumerate() {
            zchunk(&mut b, &mut st, th as u32 + 1, block, k % 2 == 0);
        }
    }
    footer(&mut b);
    let (_d, run) = open(&b);
    let got: Vec<(u64, u32, u64)> = run
        .calls()
        .unwrap()
        .iter()
        .map(|c| (c.time, c.tid, c.addr))
        .collect();
    assert_eq!(got.len(), 12_000);
    assert_eq!(got, order);
    let r = HeapReport::build(&run).unwrap();
    assert_eq!(
        (r.counts.allocs, r.counts.frees, r.counts.bytes),
        (6000, 6000, 348_000)
    );
    assert_eq!(
        (r.counts.temporary, r.counts.unknown_frees, r.counts.threads),
        (6000, 0, 2)
    );
    assert_eq!(r.counts.leaked, (0, 0));
    assert_eq!(r.counts.peak_live, (100, 60));
    let site = |s: usize| {
        let x = &r.counts.sites[s];
        (x.allocs, x.bytes, x.peak_live, x.live, x.temporary)
    };
    assert_eq!(site(1), (3000, 48_000, 16, 0, 3000));
    assert_eq!(site(2), (3000, 300_000, 100, 0, 3000));
}

/// A version 2 profile cut inside its last block keeps the whole blocks
/// before it and says that it is incomplete.
#[test]
fn cut_profile_keeps_whole_blocks() {
    let full = profile_v2();
    // The last block holds one call (thread 2's free, 4 bytes) and is
    // followed by the footer (1 + 2 + 2 + 1 + 1 bytes) and END (7 bytes).
    let cut = &full[..full.len() - 14 - 2];
    let (_d, run) = open(cut);
    let partial = run.partial.as_deref().unwrap_or_default();
    assert!(partial.contains("the profile has no footer"), "{partial}");
    let r = HeapReport::build(&run).unwrap();
    assert_eq!((r.counts.allocs, r.counts.frees), (5, 3));
    assert_eq!(r.counts.leaked, (430, 2));
}

/// A profile of an unknown version is refused with a message naming the
/// versions read.
#[test]
fn unknown_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.mvh");
    std::fs::write(&path, header(99)).unwrap();
    let e = ProfileReader::open(&path).unwrap_err().to_string();
    assert!(
        e.contains("version 99") && e.contains("versions 1 to"),
        "{e}"
    );
}

/// The live heap series, streamed, is drawn as steps through the hand
/// counted totals and holds the peak.
#[test]
fn live_series_follows_the_calls() {
    let (_d, run) = open(&profile_v2());
    let (ts, total, per, high) = mapvis::filter::heap::live_series(&run, &[1, 2], 10).unwrap();
    assert_eq!(high.len(), ts.len());
    // From the sample at 500 (330 live) to the next one the realloc at 600
    // reached 530; from 300 (350) the malloc at 400 reached 380.
    let hi = |t: u64| high[ts.iter().position(|&s| s == t).unwrap()];
    assert_eq!((hi(300), hi(500), hi(800)), (380, 530, 130));
    let at = |t: u64| total[ts.iter().rposition(|&s| s <= t).unwrap()];
    assert_eq!(at(150), 100);
    assert_eq!(at(450), 380);
    assert_eq!(at(600), 530);
    assert_eq!(at(850), 130);
    assert_eq!(at(1000), 30);
    assert!(total.contains(&530));
    let i = ts.iter().rposition(|&s| s <= 1000).unwrap();
    assert_eq!((per[0][i], per[1][i]), (0, 30));
}

/// The whole commands on tests/c/heap_sites.c, whose calls are counted by
/// hand: 3 malloc(100) kept until the end, 5 malloc(40)/free pairs, a
/// calloc(1, 256) never freed, malloc(10) realloc'ed to 1000 and freed:
/// 11 allocations (the realloc is one) of 1766 bytes, 10 frees (the
/// realloc frees the small block), peak 300 + 256 + 1000 = 1556 live
/// bytes, 256 bytes in 1 block leaked, 7 temporaries (the 5 pairs, the
/// small block freed by the realloc, the big one freed next), 10 freed
/// blocks with a lifetime. `heap_profile` keeps only the summary, from
/// which every count, the live heap (ending at the 256 leaked bytes) and
/// the 10 lifetimes come; `heap_profile calls` writes the calls too, which
/// the per-block table of lifetimes needs.
#[test]
fn heap_commands_stream_the_profile() {
    let (dir, exe) = common::compile("tests/c/heap_sites.c", &[]);
    let out = common::mapvis_script(
        dir.path(),
        &format!(
            "load_exe {}; puts [heap_profile]; heap_stats; heap_figures 3",
            exe.display()
        ),
    );
    let run = HeapRun::open_profile(&dir.path().join(".mapvis/heap.mvh")).unwrap();
    assert!(!run.has_calls());
    assert!(run.notes.is_empty(), "{:?}", run.notes);
    assert!(run.summary.as_ref().is_some_and(|s| s.at_exit));
    let (_, total, _, high) = mapvis::filter::heap::live_series(&run, &[], 2000).unwrap();
    assert_eq!((total.last(), high.iter().max()), (Some(&256), Some(&1556)));
    let bins = mapvis::filter::heap::lifetime_bins(&run, |_, _| {}).unwrap();
    assert_eq!(bins.freed, 10);
    assert_eq!(bins.all.iter().sum::<u64>(), 10);
    let with_calls = common::mapvis_script(
        dir.path(),
        &format!(
            "load_exe {}; puts [heap_profile calls]; lifetime_histogram save",
            exe.display()
        ),
    );
    assert!(
        with_calls.contains("allocations 11 frees 10 bytes 1766 peak 1556 leaked 256 "),
        "{with_calls}"
    );
    assert!(
        out.contains("allocations 11 frees 10 bytes 1766 peak 1556 leaked 256 "),
        "{out}"
    );
    assert!(
        out.contains("256 bytes in 1 block never freed, 1 thread,"),
        "{out}"
    );
    assert!(
        out.contains("11 allocations, 10 frees, 1766 bytes requested; peak 1556 live bytes at"),
        "{out}"
    );
    assert!(out.contains("; 7 temporary."), "{out}");
    // The peak's time reads in its unit (`22.7 ms`), not in raw ns.
    let at = out
        .split("peak 1556 live bytes at ")
        .nth(1)
        .and_then(|s| s.split(';').next())
        .unwrap();
    let (value, unit) = at.split_once(' ').unwrap();
    assert!(["ns", "µs", "ms", "s"].contains(&unit), "{at:?}");
    let v: f64 = value.parse().unwrap();
    assert!((1.0..1000.0).contains(&v) || unit == "ns", "{at:?}");
    let csv = std::fs::read_to_string(dir.path().join("visinfo/lifetimes.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 10, "{csv}");
    assert!(dir.path().join("figures/heap_profile.html").is_file());
}

/// The rankings of `alloc_sites` parse from their names, and a wrong
/// name is refused with the list of names.
#[test]
fn rankings_parse_from_their_names() {
    use mapvis::filter::heap::Ranking;
    for r in Ranking::ALL {
        assert_eq!(Ranking::parse(r.name()), Ok(r));
    }
    let e = Ranking::parse("size").unwrap_err();
    assert!(
        e.contains("\"size\"") && e.contains("bytes, count, peak, leaked, temporary"),
        "{e}"
    );
    // The hand-counted run above: site A leaked nothing, B 30 bytes.
    let (_d, run) = open(&profile_v3());
    let r = HeapReport::build(&run).unwrap();
    let top = r.top_sites(1, |s| Ranking::Leaked.value(s));
    assert_eq!((top[0].stack, Ranking::Leaked.value(top[0])), (2, 30));
}

#[test]
fn version_7_profile_with_calls_reads_its_calls() {
    let (_d, run) = open(&profile_v3_or_4(7));
    assert!(run.has_calls());
    assert!(run.notes.is_empty(), "{:?}", run.notes);
    check_counts(&run);
}

/// The SUMMARY body of a version 7 profile without calls (units of 4
/// ticks from TSC0 = 1000, base unit 250; series buckets of 2^2 units,
/// 16 ticks: bucket i ends 16 (i + 1) ticks after TSC0). One thread's
/// calls, worked by hand (time in ticks after TSC0, unit, bucket):
///
///   4    251   0  malloc a 100 A   live 100
///   8    252   0  malloc b  50 B   live 150
///   12   253   0  free b           live 100  (lifetime 1 unit; temporary)
///   40   260   2  malloc c 200 A   live 300  (the peak)
///   44   261   2  free a           live 200  (lifetime 10 units)
///   100  275   6  malloc d  30 B   live 230
///   1196 549  74  free d           live 200  (lifetime 274 units; temporary)
///   1280 570  80  free c           live   0  (lifetime 310 units)
///   2000 750 125  malloc e  16 A   live  16
///
/// and the checkpoint is up to tsc TSC0 + 9996 (unit 2749). The series:
/// bucket (total, high) 0 (100, 150), 2 (200, 300), 6 (230, 230), 74
/// (200, 230), 80 (0, 200), 125 (16, 16); site A's live bytes 0: 100, 2:
/// 200, 80: 0, 125: 16, 300 at the peak; B's 0: 0, 6: 30, 74: 0. The
/// lifetimes' buckets: 1, 10, 274 and 310 (each exact: below 512 units).
fn v7_summary(at_exit: bool, late: u64) -> Vec<u8> {
    v7_summary_with(at_exit, late, &[(1, 1), (10, 1), (274, 1), (310, 1)])
}

/// [`v7_summary`] with the lifetime histogram `lifetimes`, (bucket,
/// blocks) in bucket order.
fn v7_summary_with(at_exit: bool, late: u64, lifetimes: &[(u64, u64)]) -> Vec<u8> {
    let mut b = Vec::new();
    let mut uv = |v: u64| put_uv(&mut b, v);
    // allocs frees bytes peak peak_tsc leaked_bytes leaked_blocks
    // temporary unknown_frees threads region_allocs
    for v in [5, 4, 396, 300, TSC0 + 40, 16, 1, 2, 0, 1, 0] {
        uv(v);
    }
    // Two sites: stack allocs bytes peak live leaked_blocks temporary
    // in_region. No size classes, no duration groups.
    for v in [
        2, 1, 3, 316, 300, 16, 1, 0, 0, 2, 2, 80, 50, 0, 0, 2, 0, 0, 0,
    ] {
        uv(v);
    }
    // final upto_tsc late w
    for v in [at_exit as u64, TSC0 + 9996, late, 2] {
        uv(v);
    }
    // Six buckets: (delta, total, high).
    for v in [
        6, 0, 100, 150, 2, 200, 300, 4, 230, 230, 68, 200, 230, 6, 0, 200, 45, 16, 16,
    ] {
        uv(v);
    }
    // Two site series: stack at_peak n, then (delta, live) × n.
    for v in [2, 1, 300, 4, 0, 100, 2, 200, 78, 0, 45, 16] {
        uv(v);
    }
    for v in [2, 0, 3, 0, 0, 6, 30, 68, 0] {
        uv(v);
    }
    uv(lifetimes.len() as u64);
    let mut last = 0;
    for &(bucket, n) in lifetimes {
        uv(bucket - last);
        uv(n);
        last = bucket;
    }
    b
}

/// Appends a SUMMARY record (key 13, 4-byte length) of `body`, holding
/// only its first `keep` bytes (a record cut short by a kill).
fn summary_record(b: &mut Vec<u8>, body: &[u8], keep: usize) {
    put_uv(b, 13);
    b.extend_from_slice(&(body.len() as u32).to_le_bytes());
    b.extend_from_slice(&body[..keep]);
}

fn rss(b: &mut Vec<u8>, tsc: u64, bytes: u64) {
    put_uv(b, 6);
    put_uv(b, tsc);
    put_uv(b, bytes);
}

/// A version 7 profile without calls, killed while it wrote its second
/// checkpoint: the first (see [`v7_summary`], 3 calls taken late), an RSS
/// sample past it, and the second cut in half. No footer: a tick is taken
/// as a nanosecond.
fn v7_killed() -> Vec<u8> {
    let mut b = header_with(7, false);
    stacks(&mut b);
    rss(&mut b, TSC0 + 5000, 4096);
    summary_record(&mut b, &v7_summary(false, 3), v7_summary(false, 3).len());
    rss(&mut b, TSC0 + 15_000, 8192);
    let second = v7_summary(true, 0);
    summary_record(&mut b, &second, second.len() / 2);
    b
}

/// The reader takes the last whole checkpoint and says so; the report,
/// the live heap and the lifetimes come from it; the calls are an error.
#[test]
fn version_7_profile_without_calls_takes_its_last_whole_checkpoint() {
    let (_d, run) = open(&v7_killed());
    assert!(!run.has_calls());
    let s = run.summary.as_ref().expect("the first checkpoint");
    assert!(!s.at_exit);
    assert_eq!((s.upto_ns, s.late), (9996, 3));
    // The checkpoint's end, not the RSS sample at 15 000 after it.
    assert_eq!(run.end_time, 9996);
    assert_eq!(run.notes.len(), 2, "{:?}", run.notes);
    let n = &run.notes[0];
    assert!(
        n.contains("p.mvh")
            && n.contains("did not end through exit()")
            && n.contains("last checkpoint, 0.010 ms into the run")
            && n.contains("the calls after it are missing"),
        "{n}"
    );
    let n = &run.notes[1];
    assert!(
        n.contains("3 calls of the heap profile")
            && n.contains("out of time order")
            && n.contains("(counts, sites, sizes and leaks are exact)"),
        "{n}"
    );
    let r = HeapReport::build(&run).unwrap();
    assert_eq!(
        (r.counts.allocs, r.counts.frees, r.counts.bytes),
        (5, 4, 396)
    );
    assert_eq!(
        (r.counts.peak_live, r.counts.leaked, r.counts.temporary),
        ((300, 40), (16, 1), 2)
    );
    let a = &r.counts.sites[1];
    assert_eq!((a.allocs, a.bytes, a.peak_live, a.live), (3, 316, 300, 16));
    assert_eq!(
        (r.counts.sites[2].allocs, r.counts.sites[2].temporary),
        (2, 2)
    );
}

#[test]
fn version_7_profile_without_calls_refuses_to_give_calls() {
    let (d, run) = open(&v7_killed());
    for e in [
        run.calls().unwrap_err().to_string(),
        run.for_each_call(|_| {}).unwrap_err().to_string(),
        mapvis::filter::heap::block_lives(&run, |_| {})
            .unwrap_err()
            .to_string(),
        mapvis::trace::heap::read_profile(&d.path().join("p.mvh"))
            .unwrap_err()
            .to_string(),
    ] {
        assert!(
            e.contains("p.mvh")
                && e.contains("holds no calls")
                && e.contains("recorded by `heap_profile` without `calls`")
                && e.contains("run `heap_profile calls` to record them"),
            "{e}"
        );
    }
}

/// The live heap from the stored series (see [`v7_summary`]): bucket i
/// ends at 16 (i + 1) ns, so the samples are at 16, 48, 112, 1200, 1296
/// and 2016 ns, then the end of the checkpoint (9996) and the peak (300
/// at 40, A 300 and B 0) after the samples at or before 40. `high` is the
/// highest total of the interval a sample starts: from 0 bucket 0's 150;
/// from 16 and from the peak, bucket 2's 300; from 48, bucket 6's 230;
/// from 112, bucket 74's 230 (the total it started with); from 1200,
/// bucket 80's 200; then 16 (bucket 125's, and the total to the end).
#[test]
fn version_7_live_series_comes_from_the_stored_buckets() {
    let (_d, run) = open(&v7_killed());
    let (ts, total, per, high) = mapvis::filter::heap::live_series(&run, &[1, 2], 10).unwrap();
    assert_eq!(ts, [0, 16, 40, 48, 112, 1200, 1296, 2016, 9996]);
    assert_eq!(total, [0, 100, 300, 200, 230, 200, 0, 16, 16]);
    assert_eq!(per[0], [0, 100, 300, 200, 200, 200, 0, 16, 16]);
    assert_eq!(per[1], [0, 0, 0, 0, 30, 0, 0, 0, 0]);
    assert_eq!(high, [150, 300, 300, 230, 230, 200, 16, 16, 16]);
}

/// At most 3 samples of 6 buckets spanning 126: groups of 42 buckets,
/// {0, 2, 6}, {74, 80} and {125}, each with its last bucket's state and
/// the highest `high`; the sites asked for in the other order, and stack
/// 0, which has no series, all 0.
#[test]
fn version_7_live_series_merges_buckets_into_fewer_samples() {
    let (_d, run) = open(&v7_killed());
    let (ts, total, per, high) = mapvis::filter::heap::live_series(&run, &[2, 1, 0], 3).unwrap();
    assert_eq!(ts, [0, 40, 112, 1296, 2016, 9996]);
    assert_eq!(total, [0, 300, 230, 0, 16, 16]);
    assert_eq!(per[0], [0, 0, 30, 0, 0, 0]);
    assert_eq!(per[1], [0, 300, 200, 0, 16, 16]);
    assert_eq!(per[2], [0; 6]);
    assert_eq!(high, [300, 300, 230, 16, 16, 16]);
}

/// The lifetimes from the stored histogram, as shares of the run (9996
/// ns; a unit is 4 ns): bucket 1, 4 ns, 0.040016% (1% bin 0, 0.02% bin
/// 2); bucket 10, 40 ns, 0.40016% (bins 0 and 20); bucket 274, 1096 ns,
/// 10.9644% (bin 10); bucket 310, 1240 ns, 12.405% (bin 12). Each bucket
/// holds one lifetime, so none is uncertain.
#[test]
fn version_7_lifetime_bins_come_from_the_stored_histogram() {
    let (_d, run) = open(&v7_killed());
    let b =
        mapvis::filter::heap::lifetime_bins(&run, |_, _| panic!("no block without calls")).unwrap();
    assert_eq!((b.freed, b.uncertain), (4, 0));
    let used = |v: &[u64]| -> Vec<(usize, u64)> {
        v.iter()
            .enumerate()
            .filter(|x| *x.1 > 0)
            .map(|(i, &n)| (i, n))
            .collect()
    };
    assert_eq!(used(&b.all), [(0, 2), (10, 1), (12, 1)]);
    assert_eq!(used(&b.short), [(2, 1), (20, 1)]);
}

/// Buckets wider than a unit, in a run of 9996 ns (units of 4 ns): bucket
/// 1074 (octave 10, sub 50) holds 1124 and 1125 units, 4496 and 4500 ns,
/// 44.978% and 45.018% of the run: it straddles the 45% edge, so its 2
/// blocks are uncertain, binned by the middle (44.998%) in bin 44; bucket
/// 1100 (sub 76) holds 1176 and 1177 units, 47.059% and 47.099%: bin 47.
#[test]
fn version_7_lifetime_buckets_across_a_bin_edge_are_uncertain() {
    let mut b = header_with(7, false);
    stacks(&mut b);
    let body = v7_summary_with(false, 0, &[(1074, 2), (1100, 1)]);
    summary_record(&mut b, &body, body.len());
    let (_d, run) = open(&b);
    assert_eq!(run.end_time, 9996);
    let bins = mapvis::filter::heap::lifetime_bins(&run, |_, _| {}).unwrap();
    assert_eq!((bins.freed, bins.uncertain), (3, 2));
    assert_eq!(bins.all[44], 2);
    assert_eq!(bins.all[47], 1);
    assert_eq!(bins.all.iter().sum::<u64>(), 3);
    assert_eq!(bins.short.iter().sum::<u64>(), 0);
}

/// A second checkpoint written whole but damaged (its body one byte
/// short of its fields) is passed over for the first.
#[test]
fn version_7_damaged_last_checkpoint_falls_back_to_the_one_before() {
    let mut b = header_with(7, false);
    stacks(&mut b);
    summary_record(&mut b, &v7_summary(false, 0), v7_summary(false, 0).len());
    let mut second = v7_summary(true, 0);
    second.pop();
    summary_record(&mut b, &second, second.len());
    rss(&mut b, TSC0 + 9000, 4096);
    let (_d, run) = open(&b);
    let s = run.summary.as_ref().expect("the first checkpoint");
    assert!(!s.at_exit);
    assert_eq!(run.notes.len(), 1, "{:?}", run.notes);
    assert!(run.notes[0].contains("last checkpoint"), "{:?}", run.notes);
}

/// The summary at exit and the footer (1 tick a nanosecond): nothing to
/// note, and the run lasts to the footer.
#[test]
fn version_7_profile_without_calls_ended_by_exit_is_whole() {
    let mut b = header_with(7, false);
    stacks(&mut b);
    summary_record(&mut b, &v7_summary(true, 0), v7_summary(true, 0).len());
    put_uv(&mut b, 9);
    for v in [TSC0 + 20_000, 5000 + 20_000, 1, 2] {
        put_uv(&mut b, v);
    }
    put_uv(&mut b, 0);
    b.extend_from_slice(b"MVEND\n");
    let (_d, run) = open(&b);
    assert!(run.notes.is_empty(), "{:?}", run.notes);
    assert_eq!(run.end_time, 20_000);
    assert!(run.summary.as_ref().unwrap().at_exit);
    let r = HeapReport::build(&run).unwrap();
    assert_eq!((r.counts.allocs, r.counts.leaked), (5, (16, 1)));
}

/// Without calls and without a whole summary (killed before the first
/// checkpoint: the only one is cut short), every report is an error that
/// says why and what to do.
#[test]
fn version_7_profile_without_calls_or_summary_is_an_error() {
    let mut b = header_with(7, false);
    stacks(&mut b);
    rss(&mut b, TSC0 + 500, 4096);
    let first = v7_summary(false, 0);
    summary_record(&mut b, &first, 10);
    let (_d, run) = open(&b);
    assert!(run.summary.is_none());
    for e in [
        HeapReport::build(&run).unwrap_err().to_string(),
        mapvis::filter::heap::live_series(&run, &[1], 10)
            .unwrap_err()
            .to_string(),
        mapvis::filter::heap::lifetime_bins(&run, |_, _| {})
            .unwrap_err()
            .to_string(),
    ] {
        assert!(
            e.contains("p.mvh")
                && e.contains("holds neither calls nor a whole summary")
                && e.contains("before the profiler's first checkpoint")
                && e.contains("ran out of memory")
                && e.contains("with `heap_profile calls`"),
            "{e}"
        );
    }
}
