//! The cache model (`set_cache`) and its simulator.
//!
//! # The model
//!
//! Up to three levels, L1 to L3, each with a size, an associativity and a
//! line size. The default is this machine's own data caches, read from
//! `/sys/devices/system/cpu/cpu0/cache`; where that is unreadable, the
//! fixed [`CacheModel::fallback`] (32 KiB 8-way L1, 1 MiB 16-way L2, 8 MiB
//! 16-way L3, 64-byte lines).
//!
//! # The simulation
//!
//! - Every level is set-associative with LRU replacement and allocates on
//!   writes as on reads (write-allocate; a store or a modify is one access,
//!   as cachegrind counts a modify).
//! - An access is looked up in L1. Only when it misses there is the next
//!   level looked up, and so on, as cachegrind does. A level is filled only
//!   when it is looked up, and an eviction from an outer level does not
//!   remove the line from the levels above: the hierarchy is neither
//!   inclusive nor exclusive (cachegrind's "NINE" behaviour).
//! - An access that spans two lines touches both. It misses at a level when
//!   either line misses there, and counts as one miss, as in cachegrind.
//! - L1 is private to each thread; the outer levels are shared by all
//!   threads. (Cachegrind models one L1 for all threads.)
//! - Caches start cold at the first traced access (`GL_START`).
//! - Every miss at every level has a class (the 3C model), over the
//!   references that reach that level, at that level's line size:
//!   *compulsory* when its line was never looked up at that level before
//!   (in that thread's L1, for a private L1); *capacity* when a fully
//!   associative LRU cache of the same size, fed the same references,
//!   misses too (the line's reuse distance is at least the level's number
//!   of lines); *conflict* otherwise: the set-associative placement alone
//!   lost it. An access that spans lines takes the strongest class of the
//!   lines that missed (compulsory, then capacity, then conflict). The
//!   three classes sum to the level's misses.
//! - For each line fetched into L1 the simulator records which bytes were
//!   touched before the line was evicted (or the trace ended), and charges
//!   them to the (variable, source line) whose access fetched it.
//!
//! Cost per access: one tag compare at each level looked up, plus a move to
//! the front of the set on a hit below the most recent way; for the 3C
//! yardstick, a scan of its 8 most recent lines and, beyond them, one probe
//! of its slots (see [`LineSlots`]). An access within the
//! line the last one used costs only its byte mask: nothing else moves.
//! The yardstick keeps a node per line of its level, a slot table for a
//! level of up to 4 MiB (32 bytes a line) and pages of slots beyond it (4
//! bytes per line of memory touched), and a bitmap of the lines seen ([`LineSet`]: a bit
//! a line, 4 KiB for each 2 MiB of memory touched, so 2 MB for a program
//! that touches 1 GB). Memory: the tag
//! arrays are zero-initialised, so the operating system maps only the sets
//! the trace touches; the rest grows with the (variable, line) pairs and the
//! distinct lines that miss everywhere.
use std::path::Path;

use polars::prelude::PlHashMap;

use super::slots::LineSlots;
use serde::{Deserialize, Serialize};

use super::{to_front, AccessSink, LineId, NamedAccess, PairIndex, VarId};

/// Errors of the cache model: each message says what to type instead.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CacheError {
    /// Not L1, L2 or L3.
    #[error("the cache level must be L1, L2 or L3, not \"{0}\".")]
    Level(String),
    /// A size that does not parse.
    #[error(
        "\"{0}\" is not a cache size: give bytes, or a number with K or M, such as 32K or 8M."
    )]
    Size(String),
    /// A count that does not parse or is zero.
    #[error("the {what} must be a positive whole number, not \"{text}\".")]
    Number {
        /// What the number is.
        what: &'static str,
        /// What was given.
        text: String,
    },
    /// A line size that is not a power of two between 8 and 4096.
    #[error("the line size must be a power of two from 8 to 4096 bytes, not {0}.")]
    Line(u64),
    /// Size, ways and line that give no whole number of sets.
    #[error("a {size}-byte cache with {ways} ways of {line}-byte lines has no whole number of sets: the size must be a multiple of ways x line.")]
    Geometry {
        /// Size in bytes.
        size: u64,
        /// Associativity.
        ways: u64,
        /// Line size.
        line: u64,
    },
    /// A level the model does not have was asked for.
    #[error("the cache model has no {level} (it has {model}): add it with set_cache, or name a level it has.")]
    NoLevel {
        /// The level asked for (`L3`).
        level: String,
        /// The model's levels.
        model: String,
    },
    /// The model has no level left.
    #[error("the cache model has no level: add one with set_cache L1 32K 8 64.")]
    Empty,
}

/// One level of the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Level {
    /// 1, 2 or 3.
    pub level: u8,
    /// Capacity in bytes.
    pub size: u64,
    /// Associativity.
    pub ways: u32,
    /// Line size in bytes (a power of two).
    pub line: u32,
}

impl Level {
    /// A checked level.
    pub fn new(level: u8, size: u64, ways: u64, line: u64) -> Result<Level, CacheError> {
        if !(8..=4096).contains(&line) || !line.is_power_of_two() {
            return Err(CacheError::Line(line));
        }
        if ways == 0 || size == 0 || !size.is_multiple_of(ways * line) || ways > 1 << 16 {
            return Err(CacheError::Geometry { size, ways, line });
        }
        Ok(Level {
            level,
            size,
            ways: ways as u32,
            line: line as u32,
        })
    }

    /// Number of lines it holds.
    pub fn lines(&self) -> u64 {
        self.size / u64::from(self.line)
    }

    /// Number of sets.
    pub fn sets(&self) -> u64 {
        self.size / (self.ways as u64 * self.line as u64)
    }

    /// `L1`, `L2`, `L3`.
    pub fn name(&self) -> String {
        format!("L{}", self.level)
    }

    /// `L1 32 KiB, 8-way, 64-byte lines (64 sets)`.
    pub fn describe(&self) -> String {
        format!(
            "{} {}, {}-way, {}-byte lines ({} sets)",
            self.name(),
            human_bytes(self.size),
            self.ways,
            self.line,
            self.sets()
        )
    }
}

/// `32 KiB`, `1.5 MiB`, `100 B`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() && (n >> (10 * (u + 1))) > 0 {
        v /= 1024.0;
        u += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Parses `32K`, `32KiB`, `8M`, `1G` or plain bytes.
pub fn parse_size(s: &str) -> Result<u64, CacheError> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let (num, mult) = [
        ("kib", 1u64 << 10),
        ("mib", 1 << 20),
        ("gib", 1 << 30),
        ("kb", 1 << 10),
        ("mb", 1 << 20),
        ("gb", 1 << 30),
        ("k", 1 << 10),
        ("m", 1 << 20),
        ("g", 1 << 30),
        ("b", 1),
    ]
    .iter()
    .find_map(|(suf, m)| lower.strip_suffix(suf).map(|n| (n.to_string(), *m)))
    .unwrap_or((lower.clone(), 1));
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|n| *n > 0)
        .ok_or_else(|| CacheError::Size(s.to_string()))
}

/// Parses `L1`, `l2`, `3` as a level number.
pub fn parse_level(s: &str) -> Result<u8, CacheError> {
    let t = s.trim().trim_start_matches(['L', 'l']);
    match t {
        "1" => Ok(1),
        "2" => Ok(2),
        "3" => Ok(3),
        _ => Err(CacheError::Level(s.to_string())),
    }
}

fn parse_count(what: &'static str, s: &str) -> Result<u64, CacheError> {
    s.trim()
        .parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| CacheError::Number {
            what,
            text: s.to_string(),
        })
}

/// The cache hierarchy to simulate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheModel {
    /// The levels, innermost first.
    pub levels: Vec<Level>,
    /// Where the model came from (this machine, the fallback, set_cache).
    pub origin: String,
}

impl Default for CacheModel {
    fn default() -> Self {
        CacheModel::host()
    }
}

impl CacheModel {
    /// The fixed model used when the machine's caches cannot be read.
    pub fn fallback() -> CacheModel {
        CacheModel {
            levels: vec![
                Level::new(1, 32 << 10, 8, 64).expect("valid"),
                Level::new(2, 1 << 20, 16, 64).expect("valid"),
                Level::new(3, 8 << 20, 16, 64).expect("valid"),
            ],
            origin: "the fixed default (this machine's caches could not be read)".into(),
        }
    }

    /// This machine's data caches, from `/sys/devices/system/cpu/cpu0/cache`,
    /// or [`CacheModel::fallback`].
    pub fn host() -> CacheModel {
        CacheModel::from_sysfs(Path::new("/sys/devices/system/cpu/cpu0/cache"))
            .unwrap_or_else(CacheModel::fallback)
    }

    /// The data and unified caches described under `dir` (the layout of
    /// Linux's `cpu0/cache/index*`), or None when there is no usable L1.
    pub fn from_sysfs(dir: &Path) -> Option<CacheModel> {
        let read = |p: &Path, f: &str| -> Option<String> {
            std::fs::read_to_string(p.join(f))
                .ok()
                .map(|s| s.trim().to_string())
        };
        let mut levels: Vec<Level> = Vec::new();
        for e in std::fs::read_dir(dir).ok()?.flatten() {
            let p = e.path();
            if !e.file_name().to_string_lossy().starts_with("index") {
                continue;
            }
            let kind = read(&p, "type")?;
            if kind == "Instruction" {
                continue;
            }
            let lv: u8 = read(&p, "level")?.parse().ok()?;
            let size = parse_size(&read(&p, "size")?).ok()?;
            let ways: u64 = read(&p, "ways_of_associativity")?.parse().ok()?;
            let line: u64 = read(&p, "coherency_line_size")?.parse().ok()?;
            if let Ok(l) = Level::new(lv, size, ways, line) {
                if (1..=3).contains(&lv) && !levels.iter().any(|x| x.level == lv) {
                    levels.push(l);
                }
            }
        }
        levels.sort_by_key(|l| l.level);
        if levels.first().map(|l| l.level) != Some(1) {
            return None;
        }
        Some(CacheModel {
            levels,
            origin: format!("this machine ({})", dir.display()),
        })
    }

    /// `set_cache LEVEL SIZE WAYS LINE`: sets or replaces one level.
    pub fn set(
        &mut self,
        level: &str,
        size: &str,
        ways: &str,
        line: &str,
    ) -> Result<(), CacheError> {
        let lv = parse_level(level)?;
        let l = Level::new(
            lv,
            parse_size(size)?,
            parse_count("number of ways", ways)?,
            parse_count("line size", line)?,
        )?;
        self.levels.retain(|x| x.level != lv);
        self.levels.push(l);
        self.levels.sort_by_key(|l| l.level);
        self.origin = "set_cache".into();
        Ok(())
    }

    /// `set_cache LEVEL off`: removes one level. The last level cannot go.
    pub fn remove(&mut self, level: &str) -> Result<(), CacheError> {
        let lv = parse_level(level)?;
        if self.levels.len() == 1 && self.levels[0].level == lv {
            return Err(CacheError::Empty);
        }
        self.levels.retain(|x| x.level != lv);
        self.origin = "set_cache".into();
        Ok(())
    }

    /// The levels on one line, `; `-separated, as reports and pages name
    /// the model they simulated.
    pub fn levels_text(&self) -> String {
        self.levels
            .iter()
            .map(|l| l.describe())
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Each level's name and size in bytes, innermost first: where the
    /// miss-ratio curves mark the levels.
    pub fn level_sizes(&self) -> Vec<(String, u64)> {
        self.levels.iter().map(|l| (l.name(), l.size)).collect()
    }

    /// One line per level, and where the model came from.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        for l in &self.levels {
            s.push_str(&l.describe());
            s.push('\n');
        }
        s.push_str(&format!(
            "LRU, write-allocate, an outer level looked up only on a miss above \
             (neither inclusive nor exclusive); L1 private to each thread, outer \
             levels shared; from {}.",
            self.origin
        ));
        s
    }
}

/// Tag stored for an empty way: 0, so the tag arrays can be zero pages
/// until used; a line's tag is its block number plus one.
const EMPTY: u64 = 0;

/// One set-associative LRU array of tags: within a set, way 0 is the most
/// recently used.
#[derive(Clone, Debug)]
struct Tags {
    ways: usize,
    sets: u64,
    /// `sets - 1` when the set count is a power of two.
    mask: Option<u64>,
    line_bits: u32,
    tags: Vec<u64>,
}

impl Tags {
    fn new(l: &Level) -> Tags {
        let sets = l.sets();
        Tags {
            ways: l.ways as usize,
            sets,
            mask: sets.is_power_of_two().then(|| sets - 1),
            line_bits: l.line.trailing_zeros(),
            tags: vec![EMPTY; (sets as usize) * l.ways as usize],
        }
    }

    /// First slot of the set of `block`.
    #[inline]
    fn set_of(&self, block: u64) -> usize {
        let s = match self.mask {
            Some(m) => block & m,
            None => block % self.sets,
        };
        s as usize * self.ways
    }

    /// Looks `block` up and makes it the most recent of its set. Returns
    /// the set's first slot, and on a hit the way it was found in (before
    /// the move), on a miss None (the evicted line was the last way).
    #[inline]
    fn find(&self, block: u64) -> (usize, Option<usize>) {
        let base = self.set_of(block);
        let tag = block + 1;
        let set = &self.tags[base..base + self.ways];
        if set[0] == tag {
            return (base, Some(0));
        }
        (base, set.iter().position(|&t| t == tag))
    }

    /// Looks up every line of [addr, addr + size) and fills the misses;
    /// the class of the miss (see [`MissClass`]), None when every line hit.
    #[inline]
    fn access(&mut self, addr: u64, size: u32, y: &mut Yardstick) -> Option<MissClass> {
        let first = addr >> self.line_bits;
        let last = (addr + size as u64 - 1) >> self.line_bits;
        let mut miss = None;
        for b in first..=last {
            let (base, way) = self.find(b);
            let i = way.unwrap_or(self.ways - 1);
            if i > 0 {
                to_front(&mut self.tags[base..=base + i], i);
            }
            if way.is_none() {
                self.tags[base] = b + 1;
            }
            miss = miss.max(y.judge(b, way.is_some()));
        }
        miss
    }
}

/// Why a miss happened (the 3C model), weakest first: an access that
/// spans lines takes the largest class of its lines that missed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MissClass {
    /// A fully associative cache of the same size would have hit.
    Conflict,
    /// A fully associative LRU cache of the same size misses too.
    Capacity,
    /// The line was never looked up at this level before.
    Compulsory,
}

/// The misses of one level by class. They sum to the level's misses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MissClasses {
    /// First references to a line at this level.
    pub compulsory: u64,
    /// Misses a fully associative LRU of the same size has too.
    pub capacity: u64,
    /// Misses of the set-associative placement alone.
    pub conflict: u64,
}

impl MissClasses {
    fn count(&mut self, c: MissClass) {
        match c {
            MissClass::Compulsory => self.compulsory += 1,
            MissClass::Capacity => self.capacity += 1,
            MissClass::Conflict => self.conflict += 1,
        }
    }

    fn add(&mut self, o: &MissClasses) {
        self.compulsory += o.compulsory;
        self.capacity += o.capacity;
        self.conflict += o.conflict;
    }

    /// Their sum: the level's misses.
    pub fn total(&self) -> u64 {
        self.compulsory + self.capacity + self.conflict
    }
}

/// Slot number of "no slot" in [`FullLru`]'s list.
const NIL: u32 = u32::MAX;

/// Lines [`FullLru`] keeps in recency order outside its hashed list: loop
/// counters and the current line of each array, looked up with no probe.
const FA_TOP: usize = 8;

/// A line of a [`FullLru`]'s list and its neighbours ([`NIL`]: none).
#[derive(Clone, Copy, Debug)]
struct Node {
    line: u64,
    prev: u32,
    next: u32,
}

/// A fully associative LRU cache of a level's number of lines: the
/// yardstick that tells a capacity miss from a conflict miss. The
/// [`FA_TOP`] most recent lines sit in a small array; the others in a
/// doubly linked recency list over fixed nodes. Every line held, in the
/// array or the list, keeps its node for as long as it is held, found
/// through its [`LineSlots`]: a reference to a line in the list is one probe
/// and a move to the array, and only a line that enters or leaves the
/// cache changes the table (a line that left it for the array and came
/// back once cost a removal with its shifts and an insertion).
/// O(1) per reference; one node per line of the level.
#[derive(Clone, Debug)]
struct FullLru {
    /// The most recent lines and their nodes, most recent first.
    top: [(u64, u32); FA_TOP],
    top_len: usize,
    top_cap: usize,
    /// Lines the cache holds at most.
    cap: usize,
    /// Line to node, for every line held.
    slot: LineSlots,
    /// The list's nodes: one cache line holds four, so a node's line and
    /// links cost one miss where three arrays cost three (a large last
    /// level's list does not stay in the machine's caches).
    nodes: Vec<Node>,
    /// Most recent node of the list, and least recent.
    head: u32,
    tail: u32,
}

impl FullLru {
    fn new(lines: u64) -> FullLru {
        let cap = lines as usize;
        FullLru {
            top: [(0, NIL); FA_TOP],
            top_len: 0,
            top_cap: cap.min(FA_TOP),
            cap,
            slot: LineSlots::new(cap),
            nodes: Vec::new(),
            head: NIL,
            tail: NIL,
        }
    }

    /// References line `b`, making it the most recent; true when it was
    /// in the cache.
    #[inline]
    fn touch(&mut self, b: u64) -> bool {
        if let Some(p) = self.top[..self.top_len].iter().position(|t| t.0 == b) {
            to_front(&mut self.top[..=p], p);
            return true;
        }
        let (node, hit) = match self.slot.get(b) {
            Some(n) => {
                self.unlink(n);
                (n, true)
            }
            None => (self.take_node(b), false),
        };
        if self.top_len < self.top_cap {
            self.top_len += 1;
        } else if self.nodes.len() > self.top_cap || hit {
            // The least recent of the top moves to the head of the list
            // (unless it was the line evicted to make room).
            let (_, old) = self.top[self.top_cap - 1];
            self.link_head(old);
        }
        let n = self.top_len - 1;
        to_front(&mut self.top[..=n], n);
        self.top[0] = (b, node);
        hit
    }

    /// A node for `b`, which is not held: a new one while the cache has
    /// room, else the least recent line's (the list's tail, or the top's
    /// last when there is no list), which leaves the cache.
    fn take_node(&mut self, b: u64) -> u32 {
        let n = if self.nodes.len() < self.cap {
            self.nodes.push(Node {
                line: b,
                prev: NIL,
                next: NIL,
            });
            (self.nodes.len() - 1) as u32
        } else if self.tail != NIL {
            let t = self.tail;
            self.unlink(t);
            self.slot.remove(self.nodes[t as usize].line);
            t
        } else {
            // No list (a cache of at most FA_TOP lines): the top's least
            // recent leaves; its place is taken below.
            let (old, t) = self.top[self.top_cap - 1];
            self.slot.remove(old);
            self.top_len -= 1;
            t
        };
        self.nodes[n as usize].line = b;
        self.slot.insert(b, n);
        n
    }

    /// Puts node `s` at the head of the list.
    fn link_head(&mut self, s: u32) {
        let head = self.head;
        let node = &mut self.nodes[s as usize];
        node.prev = NIL;
        node.next = head;
        if head != NIL {
            self.nodes[head as usize].prev = s;
        }
        self.head = s;
        if self.tail == NIL {
            self.tail = s;
        }
    }

    fn unlink(&mut self, s: u32) {
        let Node {
            prev: p, next: n, ..
        } = self.nodes[s as usize];
        if p != NIL {
            self.nodes[p as usize].next = n;
        } else {
            self.head = n;
        }
        if n != NIL {
            self.nodes[n as usize].prev = p;
        } else {
            self.tail = p;
        }
    }
}

/// Lines per page of a [`LineSet`]: 32768, a bit each (4 KiB), 2 MiB of
/// memory with 64-byte lines.
const SET_PAGE_BITS: u32 = 15;

/// A set of line numbers as a bitmap in pages, made as lines are met: a
/// bit per line where a hash set takes about 16 bytes, and a walk stays in
/// one page, found again without a probe.
#[derive(Clone, Debug)]
struct LineSet {
    /// Page number to its index in `pages`.
    index: PlHashMap<u64, u32>,
    pages: Vec<Box<[u64]>>,
    /// The page of the last line added, and its index (`u64::MAX`: none;
    /// no line's page is that high).
    last: (u64, u32),
}

impl Default for LineSet {
    fn default() -> LineSet {
        LineSet {
            index: PlHashMap::default(),
            pages: Vec::new(),
            last: (u64::MAX, 0),
        }
    }
}

impl LineSet {
    /// Bytes of its pages.
    fn bytes(&self) -> u64 {
        (self.pages.len() << (SET_PAGE_BITS - 3)) as u64
    }

    /// Adds line `b`; whether it was not there before.
    #[inline]
    fn insert(&mut self, b: u64) -> bool {
        let page = b >> SET_PAGE_BITS;
        if self.last.0 != page {
            let next = self.pages.len() as u32;
            let i = *self.index.entry(page).or_insert(next);
            if i == next {
                let words = 1usize << (SET_PAGE_BITS - 6);
                self.pages.push(vec![0u64; words].into_boxed_slice());
            }
            self.last = (page, i);
        }
        let p = &mut self.pages[self.last.1 as usize];
        let k = (b & ((1 << SET_PAGE_BITS) - 1)) as usize;
        let (w, bit) = (k >> 6, 1u64 << (k & 63));
        let new = p[w] & bit == 0;
        p[w] |= bit;
        new
    }
}

/// What classifies one cache's misses: the lines it has looked up, and the
/// fully associative cache of its size.
#[derive(Clone, Debug)]
struct Yardstick {
    seen: LineSet,
    full: FullLru,
}

impl Yardstick {
    /// Bytes that grow with the memory the program touched: the lines
    /// seen, and a large level's pages of slots.
    fn bytes(&self) -> u64 {
        self.seen.bytes() + self.full.slot.growing_bytes()
    }

    fn new(l: &Level) -> Yardstick {
        Yardstick {
            seen: LineSet::default(),
            full: FullLru::new(l.lines()),
        }
    }

    /// The yardstick of a level of `l`'s size whose recency is `recent`
    /// (lines, most recent first; only the level's many count) and which
    /// has seen `seen`: what it would hold had it been fed the stream
    /// that ordered them. O(lines seen).
    fn rebuilt(l: &Level, recent: &[u64], seen: impl Iterator<Item = u64>) -> Yardstick {
        let mut y = Yardstick::new(l);
        let cap = l.lines() as usize;
        for &b in recent[..recent.len().min(cap)].iter().rev() {
            y.full.touch(b);
        }
        for b in seen {
            y.seen.insert(b);
        }
        y
    }

    /// Line `b` was looked up, and `hit` says whether the set-associative
    /// cache had it: the class of its miss, None on a hit.
    #[inline]
    fn judge(&mut self, b: u64, hit: bool) -> Option<MissClass> {
        let full_hit = self.full.touch(b);
        if hit {
            return None;
        }
        Some(if self.seen.insert(b) {
            MissClass::Compulsory
        } else if full_hit {
            MissClass::Conflict
        } else {
            MissClass::Capacity
        })
    }
}

/// The first level, with the bytes used of each resident line and the
/// (variable, line) pair that fetched it.
#[derive(Clone, Debug)]
struct First {
    tags: Tags,
    used: Vec<u64>,
    owner: Vec<u32>,
    /// log2 of the bytes per bit of `used` (lines up to 64 bytes: 0).
    gran_bits: u32,
    yard: Yardstick,
    /// The line the last access ended on and its slot: the most recent way
    /// of its set and the yardstick's most recent line, so that another
    /// access within it changes no recency and only marks its bytes.
    /// `u64::MAX`: none yet.
    last: (u64, usize),
}

impl First {
    fn new(l: &Level) -> First {
        let tags = Tags::new(l);
        let n = tags.tags.len();
        First {
            tags,
            used: vec![0; n],
            owner: vec![0; n],
            gran_bits: (l.line.max(64) / 64).trailing_zeros(),
            yard: Yardstick::new(l),
            last: (u64::MAX, 0),
        }
    }

    /// The bits of bytes [lo, hi] (offsets in the line).
    #[inline]
    fn mask(&self, lo: u64, hi: u64) -> u64 {
        let (lo, hi) = (lo >> self.gran_bits, hi >> self.gran_bits);
        let n = hi - lo + 1;
        let m = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        m << lo
    }

    /// Looks up every line of the access; the class of its miss, None when
    /// every line hit. Evicted lines' used bytes are charged to their
    /// owners in `counts`.
    ///
    /// `judge` classes each line's miss: the level's own yardstick
    /// ([`Own`]), or the reuse distances, one per line of the access in
    /// order ([`Told`]).
    #[inline]
    fn access(
        &mut self,
        addr: u64,
        size: u32,
        pair: u32,
        counts: &mut [Counts],
        judge: &mut impl Judge,
    ) -> Option<MissClass> {
        let bits = self.tags.line_bits;
        let end = addr + size as u64 - 1;
        let (first, last) = (addr >> bits, end >> bits);
        let line_mask = (1u64 << bits) - 1;
        if first == last && first == self.last.0 {
            // Again in the line just used: a hit that moves nothing.
            let m = self.mask(addr & line_mask, end & line_mask);
            self.used[self.last.1] |= m;
            judge.skip();
            return None;
        }
        let mut miss = None;
        for b in first..=last {
            let lo = if b == first { addr & line_mask } else { 0 };
            let hi = if b == last {
                end & line_mask
            } else {
                line_mask
            };
            let m = self.mask(lo, hi);
            let (base, way) = self.tags.find(b);
            miss = miss.max(judge.judge(&mut self.yard, b, way.is_some()));
            match way {
                Some(0) => self.used[base] |= m,
                Some(i) => {
                    self.rotate(base, i);
                    self.used[base] |= m;
                }
                None => {
                    let last_way = base + self.tags.ways - 1;
                    if self.tags.tags[last_way] != EMPTY {
                        let c = &mut counts[self.owner[last_way] as usize];
                        c.used_bytes += (self.used[last_way].count_ones() as u64) << self.gran_bits;
                    }
                    self.rotate(base, self.tags.ways - 1);
                    self.tags.tags[base] = b + 1;
                    self.used[base] = m;
                    self.owner[base] = pair;
                    counts[pair as usize].fetched += 1;
                }
            }
            self.last = (b, base);
        }
        miss
    }

    #[inline]
    fn rotate(&mut self, base: usize, i: usize) {
        to_front(&mut self.tags.tags[base..=base + i], i);
        to_front(&mut self.used[base..=base + i], i);
        to_front(&mut self.owner[base..=base + i], i);
    }

    /// Charges the lines still resident at the end of the trace.
    fn flush(&self, counts: &mut [Counts]) {
        for (i, &t) in self.tags.tags.iter().enumerate() {
            if t != EMPTY {
                counts[self.owner[i] as usize].used_bytes +=
                    (self.used[i].count_ones() as u64) << self.gran_bits;
            }
        }
    }
}

/// The reuse distances of a batch's line references, in order (one per
/// line of each access, [`TOLD_COLD`] for a first reference), standing in
/// for the first level's yardstick: a fully associative LRU cache of C
/// lines holds a line exactly when fewer than C other lines were used
/// since its last use, so its hits are the distances below C, and the
/// level's compulsory misses are the first references. Exact, and saves
/// the yardstick's own LRU when the reuse distances are measured anyway
/// (the analysis' feed: one stream, the first level's line size, exact).
pub struct Told<'a> {
    dists: &'a [u64],
    pos: usize,
    lines: u64,
}

/// A first reference in [`Told`]'s distances.
pub const TOLD_COLD: u64 = u64::MAX;

/// What classes the first level's misses: its own yardstick ([`Own`]) or
/// the reuse distances ([`Told`]); a type each, so that the simulation's
/// loop is made once for each with no test per line.
trait Judge {
    /// The class of line `b`'s miss (None on a hit), `hit` saying whether
    /// the set-associative level had it.
    fn judge(&mut self, yard: &mut Yardstick, b: u64, hit: bool) -> Option<MissClass>;
    /// An access within the line just used: a hit that moves nothing.
    fn skip(&mut self);
}

/// The level's own yardstick judges.
struct Own;

impl Judge for Own {
    #[inline]
    fn judge(&mut self, yard: &mut Yardstick, b: u64, hit: bool) -> Option<MissClass> {
        yard.judge(b, hit)
    }

    #[inline]
    fn skip(&mut self) {}
}

impl Judge for Told<'_> {
    #[inline]
    fn skip(&mut self) {
        self.pos += 1;
    }

    #[inline]
    fn judge(&mut self, _: &mut Yardstick, _: u64, hit: bool) -> Option<MissClass> {
        let d = self.dists[self.pos];
        self.pos += 1;
        if hit {
            return None;
        }
        Some(if d == TOLD_COLD {
            MissClass::Compulsory
        } else if d < self.lines {
            MissClass::Conflict
        } else {
            MissClass::Capacity
        })
    }
}

/// Counts of one (variable, source line) pair, or of their sums.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Accesses.
    pub accesses: u64,
    /// Misses at each modelled level, innermost first (level i is looked up
    /// only after a miss at level i - 1).
    pub misses: [u64; 3],
    /// The misses of each level by class (the 3C model), innermost first.
    pub classes: [MissClasses; 3],
    /// Lines fetched into the first level by these accesses.
    pub fetched: u64,
    /// Bytes of those lines touched before their eviction.
    pub used_bytes: u64,
    /// Bytes the accesses read or wrote: the sum of their sizes.
    pub bytes: u64,
}

impl Counts {
    /// The first level's compulsory misses: first references to a line
    /// (the `compulsory` of scripts and `plot_runs`).
    pub fn compulsory(&self) -> u64 {
        self.classes[0].compulsory
    }

    /// The classes of each level as named columns, in the order scripts
    /// and CSVs get them: `compulsory_L1`, `capacity_L1`, `conflict_L1`,
    /// then the same for each next level of `levels` (the model's level
    /// names, innermost first).
    pub fn class_columns(&self, levels: &[String]) -> Vec<(String, u64)> {
        levels
            .iter()
            .zip(&self.classes)
            .flat_map(|(l, c)| {
                [
                    (format!("compulsory_{l}"), c.compulsory),
                    (format!("capacity_{l}"), c.capacity),
                    (format!("conflict_{l}"), c.conflict),
                ]
            })
            .collect()
    }

    /// Adds `o` into `self`.
    pub fn add(&mut self, o: &Counts) {
        self.accesses += o.accesses;
        for i in 0..3 {
            self.misses[i] += o.misses[i];
        }
        for i in 0..3 {
            self.classes[i].add(&o.classes[i]);
        }
        self.fetched += o.fetched;
        self.used_bytes += o.used_bytes;
        self.bytes += o.bytes;
    }
}

/// The levels past the first: their tags and 3C yardsticks. Each is
/// looked up only when the one before it missed.
#[derive(Clone, Debug, Default)]
struct Outer {
    tags: Vec<Tags>,
    yards: Vec<Yardstick>,
}

impl Outer {
    fn new(model: &CacheModel) -> Outer {
        let levels = model.levels.get(1..).unwrap_or_default();
        Outer {
            tags: levels.iter().map(Tags::new).collect(),
            yards: levels.iter().map(Yardstick::new).collect(),
        }
    }

    /// Looks a first-level miss of the pair counted in `c` up in each
    /// level in turn until one has it, counting each level's miss and its
    /// class (also into `last`, by level index); the index of the level
    /// that served it (the number of levels for memory).
    #[inline]
    fn access(
        &mut self,
        addr: u64,
        size: u32,
        c: &mut Counts,
        last: &mut [Option<MissClass>; 3],
    ) -> u8 {
        for (i, (t, y)) in self.tags.iter_mut().zip(&mut self.yards).enumerate() {
            let Some(class) = t.access(addr, size, y) else {
                return i as u8 + 1;
            };
            last[i + 1] = Some(class);
            c.misses[i + 1] += 1;
            c.classes[i + 1].count(class);
        }
        self.tags.len() as u8 + 1
    }

    /// Bytes of the yardsticks' state that grows with the trace.
    fn bytes(&self) -> u64 {
        self.yards.iter().map(Yardstick::bytes).sum()
    }
}

/// A first-level miss handed to the outer levels' thread.
#[derive(Clone, Copy, Debug)]
struct Miss {
    addr: u64,
    size: u32,
    pair: u32,
}

/// Misses handed over at a time: 16384, 256 KB.
const PIPE_BLOCK: usize = 1 << 14;

/// Blocks of misses in flight at most before the first level waits for
/// the outer levels.
const PIPE_DEPTH: usize = 4;

/// The outer levels on a thread of their own (`mapvis-outer`), fed blocks
/// of first-level misses in order through a bounded channel; emptied
/// blocks come back to be filled again. The thread's counts (only their
/// outer levels' misses and classes) are added to the first level's at
/// [`Pipe::finish`].
#[derive(Debug)]
struct Pipe {
    pending: Vec<Miss>,
    to: std::sync::mpsc::SyncSender<Vec<Miss>>,
    spare: std::sync::mpsc::Receiver<Vec<Miss>>,
    helper: std::thread::JoinHandle<Vec<Counts>>,
}

impl Pipe {
    /// Starts the outer levels of `model` on their own thread; None when
    /// no thread can be started.
    fn start(model: &CacheModel) -> Option<Pipe> {
        let (to, from) = std::sync::mpsc::sync_channel::<Vec<Miss>>(PIPE_DEPTH);
        let (back, spare) = std::sync::mpsc::channel::<Vec<Miss>>();
        let model = model.clone();
        let helper = std::thread::Builder::new()
            .name("mapvis-outer".into())
            .spawn(move || {
                let mut outer = Outer::new(&model);
                let mut counts: Vec<Counts> = Vec::new();
                let mut last = [None; 3];
                for mut block in from {
                    for m in &block {
                        let k = m.pair as usize;
                        if k >= counts.len() {
                            counts.resize(k + 1, Counts::default());
                        }
                        outer.access(m.addr, m.size, &mut counts[k], &mut last);
                    }
                    block.clear();
                    // The first level may be gone; the block is then freed.
                    let _ = back.send(block);
                }
                counts
            })
            .ok()?;
        Some(Pipe {
            pending: Vec::with_capacity(PIPE_BLOCK),
            to,
            spare,
            helper,
        })
    }

    #[inline]
    fn push(&mut self, m: Miss) {
        self.pending.push(m);
        if self.pending.len() == PIPE_BLOCK {
            self.send();
        }
    }

    /// Hands the pending misses over.
    fn send(&mut self) {
        let next = (self.spare.try_recv()).unwrap_or_else(|_| Vec::with_capacity(PIPE_BLOCK));
        let block = std::mem::replace(&mut self.pending, next);
        // A thread that is gone panicked: finish says so.
        let _ = self.to.send(block);
    }

    /// The outer levels' counts by pair id, once every miss is through.
    fn finish(mut self) -> Vec<Counts> {
        self.send();
        let Pipe { to, helper, .. } = self;
        // The helper's loop ends when the sender is gone.
        drop(to);
        match helper.join() {
            Ok(counts) => counts,
            Err(p) => std::panic::resume_unwind(p),
        }
    }
}

/// What a simulation found, per (variable, source line) pair.
#[derive(Clone, Debug)]
pub struct CacheResult {
    /// The model simulated.
    pub model: CacheModel,
    /// (variable row, line row) of each pair, by pair id.
    pub pairs: Vec<(VarId, LineId)>,
    /// Counts by pair id.
    pub counts: Vec<Counts>,
    /// Accesses simulated.
    pub accesses: u64,
    /// Threads that had their own L1.
    pub threads: usize,
}

/// The cache simulator, as an [`AccessSink`].
#[derive(Debug)]
pub struct CacheSim {
    model: CacheModel,
    /// The first level: one per thread when it is L1, else one shared.
    first: Vec<Option<First>>,
    private_first: bool,
    /// The levels past the first, when they run on the caller's thread.
    outer: Outer,
    /// The levels past the first on a thread of their own, fed the first
    /// level's misses ([`CacheSim::piped`]).
    pipe: Option<Pipe>,
    pairs: PairIndex,
    counts: Vec<Counts>,
    accesses: u64,
    /// Per access, the level that served it (0 = L1, levels = memory),
    /// when asked for with [`CacheSim::record_levels`].
    levels: Option<Vec<u8>>,
    /// The class of the last access's miss at each level (None: no miss
    /// there, or it was served above).
    last: [Option<MissClass>; 3],
}

/// A copy of the simulation so far. A piped simulation
/// ([`CacheSim::piped`]) is not copied: its outer levels' state is on
/// another thread, and a copy without it would count wrong.
impl Clone for CacheSim {
    fn clone(&self) -> CacheSim {
        assert!(
            self.pipe.is_none(),
            "a piped cache simulation cannot be copied"
        );
        CacheSim {
            model: self.model.clone(),
            first: self.first.clone(),
            private_first: self.private_first,
            outer: self.outer.clone(),
            pipe: None,
            pairs: self.pairs.clone(),
            counts: self.counts.clone(),
            accesses: self.accesses,
            levels: self.levels.clone(),
            last: self.last,
        }
    }
}

impl CacheSim {
    /// A cold simulator of `model`.
    pub fn new(model: &CacheModel) -> Result<CacheSim, CacheError> {
        let first = model.levels.first().ok_or(CacheError::Empty)?;
        Ok(CacheSim {
            private_first: first.level == 1,
            first: Vec::new(),
            outer: Outer::new(model),
            pipe: None,
            model: model.clone(),
            pairs: PairIndex::new(),
            counts: Vec::new(),
            accesses: 0,
            levels: None,
            last: [None; 3],
        })
    }

    /// The model simulated.
    pub fn model(&self) -> &CacheModel {
        &self.model
    }

    /// Also keeps, per access, the level that served it (one byte per
    /// access: for figures of one variable, not for whole long traces).
    pub fn record_levels(mut self) -> CacheSim {
        self.levels = Some(Vec::new());
        self
    }

    /// Simulates one access; returns the level that served it (0 for the
    /// first level, the number of levels for memory).
    #[inline]
    pub fn access(&mut self, r: &NamedAccess) -> u8 {
        self.access_judged(r, &mut Own)
    }

    /// [`CacheSim::access`], the first level's misses classed by `judge`.
    #[inline]
    fn access_judged(&mut self, r: &NamedAccess, judge: &mut impl Judge) -> u8 {
        let pair = self.pairs.id(r.var, r.line);
        if pair as usize >= self.counts.len() {
            self.counts.push(Counts::default());
        }
        self.accesses += 1;
        self.counts[pair as usize].accesses += 1;
        self.counts[pair as usize].bytes += r.size as u64;
        let slot = if self.private_first {
            r.tid as usize
        } else {
            0
        };
        if slot >= self.first.len() {
            self.first.resize(slot + 1, None);
        }
        let first = self.first[slot].get_or_insert_with(|| First::new(&self.model.levels[0]));
        self.last = [None; 3];
        let Some(class) = first.access(r.addr, r.size, pair, &mut self.counts, judge) else {
            return 0;
        };
        self.last[0] = Some(class);
        let c = &mut self.counts[pair as usize];
        c.misses[0] += 1;
        c.classes[0].count(class);
        match &mut self.pipe {
            Some(p) => {
                p.push(Miss {
                    addr: r.addr,
                    size: r.size,
                    pair,
                });
                1
            }
            None => self.outer.access(r.addr, r.size, c, &mut self.last),
        }
    }

    /// The same simulation with the levels past the first on a thread of
    /// their own, fed the first level's misses in order a block at a time:
    /// for a caller that keeps only the counts and has a core to spare (a
    /// single prediction, a new geometry), where the outer levels' lookups
    /// (a large last level's tags do not stay in the machine's caches) take
    /// half of the simulation. Every count is the same.
    ///
    /// Thereafter [`CacheSim::access`] returns 1 for an access the first
    /// level missed (the level that served it is known only to the other
    /// thread), [`CacheSim::last_class`] knows the first level alone, and
    /// [`CacheSim::state_bytes`] leaves out the outer levels. Unchanged when
    /// the model has one level, levels are recorded, or no thread can be
    /// started. The inline outer levels [`CacheSim::new`] made are dropped
    /// untouched: their tables are zeroed allocations, which the system
    /// maps only when written, so making them cost nothing.
    #[must_use]
    pub fn piped(mut self) -> CacheSim {
        if self.model.levels.len() > 1 && self.levels.is_none() && self.accesses == 0 {
            if let Some(p) = Pipe::start(&self.model) {
                self.pipe = Some(p);
                self.outer = Outer::default();
            }
        }
        self
    }

    /// Whether the first level's misses may be classed from the reuse
    /// distances of the whole stream, over lines of the first level's size
    /// (see [`Told`]): the level sees that whole stream, which holds while
    /// it is shared or there has been one thread; for a batch with `tid`s
    /// only.
    pub fn may_be_told(&self, batch: &[NamedAccess]) -> bool {
        if !self.private_first {
            return true;
        }
        let seen = self.first.len();
        match batch.first() {
            None => true,
            Some(r0) => {
                (seen == 0
                    || (seen == r0.tid as usize + 1
                        && self.first[..seen - 1].iter().all(Option::is_none)))
                    && batch.iter().all(|r| r.tid == r0.tid)
            }
        }
    }

    /// Feeds `batch`, the first level's misses classed from `dists` (one
    /// reuse distance per line of each access, in order, [`TOLD_COLD`]
    /// for a first reference); [`CacheSim::may_be_told`] must hold, and
    /// the first level's yardstick is left as it was.
    pub fn accesses_told(&mut self, batch: &[NamedAccess], dists: &[u64]) {
        let mut told = Told {
            dists,
            pos: 0,
            lines: self.model.levels[0].lines(),
        };
        for r in batch {
            let l = self.access_judged(r, &mut told);
            if let Some(v) = &mut self.levels {
                v.push(l);
            }
        }
        debug_assert_eq!(told.pos, dists.len(), "one distance per line reference");
    }

    /// The first level's yardstick made again from the reuse distances'
    /// state (`recent`: lines most recent first; `seen`: every line), for
    /// a simulation that was told and from now on is not.
    pub fn untell(&mut self, recent: &[u64], seen: impl Iterator<Item = u64>) {
        if let Some(f) = self.first.iter_mut().flatten().next() {
            f.yard = Yardstick::rebuilt(&self.model.levels[0], recent, seen);
        }
    }

    /// Bytes of the state that grows with the trace: each yardstick's
    /// lines seen and the counts per (variable, line) pair. The tag arrays
    /// and the fully associative yardsticks are the model's fixed size.
    pub fn state_bytes(&self) -> u64 {
        let seen: u64 =
            (self.first.iter().flatten().map(|f| f.yard.bytes())).sum::<u64>() + self.outer.bytes();
        seen + (self.counts.capacity() * std::mem::size_of::<Counts>()) as u64
    }

    /// The class of the last access's miss at the level of index `i` in
    /// the model; None when it did not miss there.
    pub fn last_class(&self, i: usize) -> Option<MissClass> {
        self.last.get(i).copied().flatten()
    }

    /// The counts so far, charging the lines still resident.
    pub fn finish(mut self) -> CacheResult {
        let mut counts = std::mem::take(&mut self.counts);
        if let Some(p) = self.pipe.take() {
            // Every pair the outer levels counted was made here first.
            for (c, o) in counts.iter_mut().zip(p.finish()) {
                c.add(&o);
            }
        }
        for f in self.first.iter().flatten() {
            f.flush(&mut counts);
        }
        CacheResult {
            threads: self.first.iter().flatten().count(),
            model: self.model,
            pairs: self.pairs.pairs().to_vec(),
            counts,
            accesses: self.accesses,
        }
    }

    /// The per-access levels recorded (see [`CacheSim::record_levels`]).
    pub fn take_levels(&mut self) -> Vec<u8> {
        self.levels.take().unwrap_or_default()
    }
}

impl AccessSink for CacheSim {
    fn accesses(&mut self, batch: &[NamedAccess]) {
        if self.levels.is_some() {
            for r in batch {
                let l = self.access(r);
                if let Some(v) = &mut self.levels {
                    v.push(l);
                }
            }
        } else {
            for r in batch {
                self.access(r);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bitmap set answers as a hash set does, across pages and back.
    #[test]
    fn line_set_is_a_set() {
        let mut set = LineSet::default();
        let mut plain = std::collections::HashSet::new();
        let lines = [
            0u64,
            1,
            63,
            64,
            32767,
            32768,
            5,
            1 << 40,
            0,
            32768,
            (1 << 40) + 1,
            1 << 40,
        ];
        for b in lines {
            assert_eq!(set.insert(b), plain.insert(b), "line {b}");
        }
    }

    fn rec(addr: u64, size: u32) -> NamedAccess {
        NamedAccess {
            addr,
            size,
            tid: 1,
            op: b'L',
            ..Default::default()
        }
    }

    fn model(levels: &[(u8, u64, u64, u64)]) -> CacheModel {
        CacheModel {
            levels: levels
                .iter()
                .map(|&(l, s, w, ln)| Level::new(l, s, w, ln).unwrap())
                .collect(),
            origin: "test".into(),
        }
    }

    #[test]
    fn sizes_and_levels_parse() {
        assert_eq!(parse_size("32K"), Ok(32768));
        assert_eq!(parse_size("8MiB"), Ok(8 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").is_err());
        assert_eq!(parse_level("L2"), Ok(2));
        assert!(parse_level("L4").is_err());
        assert!(Level::new(1, 32768, 8, 48).is_err());
        assert!(Level::new(1, 1000, 8, 64).is_err());
        // Non-power-of-two set counts are allowed (modulo indexing).
        assert_eq!(Level::new(3, 3 << 20, 16, 64).unwrap().sets(), 3072);
    }

    #[test]
    fn this_machine_or_the_fallback_has_an_l1() {
        let m = CacheModel::host();
        assert_eq!(m.levels[0].level, 1);
    }

    #[test]
    fn unit_stride_misses_once_per_line() {
        let mut sim = CacheSim::new(&model(&[(1, 4096, 4, 64)])).unwrap();
        for i in 0..1024u64 {
            sim.access(&rec(0x1000 + 8 * i, 8));
        }
        let r = sim.finish();
        assert_eq!(r.counts[0].misses[0], 128);
        assert_eq!(r.counts[0].compulsory(), 128);
        assert_eq!(r.counts[0].used_bytes, 128 * 64);
    }

    proptest::proptest! {
        /// The fully associative yardstick hits exactly where a plain
        /// list of the `cap` most recent lines holds the line.
        #[test]
        fn the_yardstick_is_an_exact_lru(
            cap in 1u64..24,
            trace in proptest::collection::vec(0u64..48, 0..600),
        ) {
            let mut lru = FullLru::new(cap);
            let mut naive: Vec<u64> = Vec::new();
            for &b in &trace {
                let want = naive.contains(&b);
                naive.retain(|&x| x != b);
                naive.insert(0, b);
                naive.truncate(cap as usize);
                proptest::prop_assert_eq!(lru.touch(b), want);
            }
        }
    }

    /// A 2-way, 1-set cache against the yardstick of its 2 lines: A B A C
    /// B. The C evicts B in both; the last B is a capacity miss. With one
    /// way (direct-mapped 2 sets of 1), A and C share a set: A C A is a
    /// conflict miss for the second A.
    #[test]
    fn misses_are_classed_by_hand() {
        let line = |b: u64| rec(b * 64, 8);
        let mut sim = CacheSim::new(&model(&[(1, 128, 2, 64)])).unwrap();
        for b in [0, 1, 0, 2, 1] {
            sim.access(&line(b));
        }
        let c = sim.finish().counts[0].classes[0];
        assert_eq!((c.compulsory, c.capacity, c.conflict), (3, 1, 0));
        let mut sim = CacheSim::new(&model(&[(1, 128, 1, 64)])).unwrap();
        for b in [0, 2, 0] {
            sim.access(&line(b));
        }
        let c = sim.finish().counts[0].classes[0];
        assert_eq!((c.compulsory, c.capacity, c.conflict), (2, 0, 1));
    }

    #[test]
    fn lru_keeps_the_recent_lines_of_a_set() {
        // One set of 2 ways: A B A C A -> A stays (LRU evicts B).
        let mut sim = CacheSim::new(&model(&[(1, 128, 2, 64)])).unwrap();
        let lines = [0u64, 1, 0, 2, 0, 1];
        let mut levels = vec![];
        for l in lines {
            levels.push(sim.access(&rec(l * 64, 4)));
        }
        assert_eq!(levels, [1, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn a_straddling_access_touches_both_lines_and_misses_once() {
        let mut sim = CacheSim::new(&model(&[(1, 4096, 4, 64), (2, 65536, 8, 64)])).unwrap();
        assert_eq!(sim.access(&rec(60, 8)), 2);
        assert_eq!(sim.access(&rec(64, 4)), 0);
        assert_eq!(sim.access(&rec(0, 4)), 0);
        let r = sim.finish();
        assert_eq!(r.counts[0].misses, [1, 1, 0]);
        assert_eq!(r.counts[0].fetched, 2);
    }

    /// The outer levels on their own thread count every miss and class
    /// as on the caller's: two threads, three variables, accesses that
    /// straddle lines, over many blocks of misses (and a last one cut
    /// short), through three levels. The inline simulation it is compared
    /// with is checked against cachegrind's misses per source line in
    /// `tests/locality_cache.rs`.
    #[test]
    fn piped_outer_levels_count_as_inline_ones() {
        let m = model(&[(1, 1024, 2, 64), (2, 8192, 4, 64), (3, 65536, 8, 64)]);
        let (mut inline, mut piped) = (
            CacheSim::new(&m).unwrap(),
            CacheSim::new(&m).unwrap().piped(),
        );
        assert!(piped.pipe.is_some(), "a thread starts");
        let mut x = 0x9E37_79B9_u64;
        let mut batch = Vec::new();
        for i in 0..300_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            batch.push(NamedAccess {
                time: i,
                addr: 0x10_000 + (x % 200_000),
                size: [1, 4, 8, 16][(x >> 40) as usize % 4],
                tid: 1 + (x >> 50) as u32 % 2,
                var: VarId((x >> 30) as u32 % 3),
                op: b'L',
                ..Default::default()
            });
            if batch.len() == 4096 || i == 299_999 {
                inline.accesses(&batch);
                piped.accesses(&batch);
                batch.clear();
            }
        }
        let (a, b) = (inline.finish(), piped.finish());
        assert!(a.counts.iter().map(|c| c.misses[2]).sum::<u64>() > 3 * PIPE_BLOCK as u64);
        assert_eq!(a.pairs, b.pairs);
        assert_eq!(a.counts, b.counts);
        assert_eq!((a.accesses, a.threads), (b.accesses, b.threads));
    }

    #[test]
    fn threads_have_their_own_l1_and_share_l2() {
        let mut sim = CacheSim::new(&model(&[(1, 4096, 4, 64), (2, 65536, 8, 64)])).unwrap();
        assert_eq!(sim.access(&rec(0, 4)), 2);
        let mut other = rec(0, 4);
        other.tid = 2;
        assert_eq!(sim.access(&other), 1);
        assert_eq!(sim.access(&other), 0);
        assert_eq!(sim.finish().threads, 2);
    }

    #[test]
    fn the_model_is_set_removed_and_described() {
        let mut m = model(&[(1, 4096, 4, 64)]);
        m.set("L2", "256K", "8", "64").unwrap();
        assert_eq!(m.levels.len(), 2);
        assert!(m
            .describe()
            .contains("L2 256 KiB, 8-way, 64-byte lines (512 sets)"));
        m.remove("L2").unwrap();
        assert_eq!(m.remove("L1"), Err(CacheError::Empty));
        assert!(matches!(
            m.set("L2", "1000", "8", "64"),
            Err(CacheError::Geometry { .. })
        ));
    }

    /// A yardstick made again from the reuse distances' state judges the
    /// rest of the stream as one fed all along does.
    #[test]
    fn a_rebuilt_yardstick_carries_on_as_the_fed_one() {
        use super::super::reuse::StackDistance;
        let level = Level::new(1, 2048, 1, 64).unwrap();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x.is_multiple_of(3) {
                x % 500
            } else {
                x % 40
            }
        };
        let (mut fed, mut stack) = (Yardstick::new(&level), StackDistance::default());
        for _ in 0..5000 {
            let b = next();
            fed.judge(b, false);
            stack.reference(b);
        }
        let mut rebuilt = Yardstick::rebuilt(&level, &stack.recent(32), stack.lines());
        let mut differ = 0;
        let mut classes = std::collections::BTreeSet::new();
        for k in 0..5000 {
            let b = next();
            let (f, r) = (fed.judge(b, false), rebuilt.judge(b, false));
            differ += usize::from(f != r);
            if k < 200 {
                classes.insert(format!("{f:?}"));
            }
        }
        assert_eq!(differ, 0);
        assert!(classes.len() >= 2, "{classes:?}");
    }
}
