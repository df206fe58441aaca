//! Names heap blocks by where the program keeps their addresses: the path
//! from a variable (`net->w1[i]`, `src`, `s.buf`), as a person reads it in
//! a debugger, rather than from the statement that allocated them.
//!
//! The tool reports two kinds of evidence (trace format 6,
//! `docs/trace-format.md`):
//! - at a region's start, a snapshot of every word of the stacks, static
//!   data and heap blocks that points into a block allocated since the
//!   last snapshot ([`Event::Roots`](crate::trace::record::Event));
//! - inside a region, the stores of each new block's address until it is
//!   stored outside a stack (`PTR_STORE`, announced before the store's own
//!   access);
//! - at a region's start, the registers of each thread that point into
//!   such a block (`ROOT_REGS`). The opener's locals that live in
//!   registers are found from DWARF's location lists; a caller's
//!   callee-saved register is the snapshot word where a frame it called
//!   saved it, by the unwind rules ([`RegRoots`]).
//!
//! Each piece of evidence is a *holder*: a stack variable or global (its
//! path as DWARF spells it), or a member or element of another heap block.
//! A block's name is the path of its best holder, by the rule of
//! [`Rank`]; a holder inside another block extends that block's path, so
//! names are resolved at the end of the analysis, once every block's
//! holders are known. The statement reader's name stays where no holder
//! names the block, and the analysis notes where the two disagree.
//!
//! Memory: at most [`KEEP`] holders per heap block of the run, never per
//! access.
use polars::prelude::PlHashMap as HashMap;

use crate::trace::naming::{ElementPath, HeapName, NameQuality, RegHolder, RegSource, VarName};

/// Holders kept per block (the best ones by [`Rank`]).
const KEEP: usize = 4;

/// The first class of holders too weak to overrule the statement reader:
/// a helper's local, another thread's stack.
const WEAK_CLASS: u8 = 4;

/// How deep a path may go through blocks before it is given up (a path
/// longer than this is no name a person would use).
const MAX_DEPTH: usize = 12;

/// How many other blocks of different structures a path may pass through
/// and still overrule the statement that allocated the block: `net->w1[i]`
/// passes through two (net's block and w1's table), a 3D array built by
/// nested helpers three. A longer path (QuickJS's ArrayBuffer data reached
/// through five arena blocks typed by their allocation statements, whose
/// carved pieces are no members of those types) is kept for a note only.
pub(crate) const MAX_TRUSTED_HOPS: u32 = 3;

/// A stack variable's or global's path as a holder, as DWARF gives it
/// (`x`, `s.buf`, `rows[3]`), cut where a library's internals begin
/// (`m` for Boost's `m.table_.buckets_`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct VarPath {
    /// The path.
    pub(crate) path: String,
    /// Whether the holder went on into a library's internals after it.
    pub(crate) internal: bool,
}

impl From<&str> for VarPath {
    fn from(path: &str) -> VarPath {
        VarPath {
            path: path.to_string(),
            internal: false,
        }
    }
}

/// What holds a block's address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Holder {
    /// A stack variable or global.
    Var(VarPath),
    /// Byte `offset` of heap block `parent` (by its index in the run).
    Block {
        /// The holding block.
        parent: u32,
        /// Where in it.
        offset: u64,
    },
}

/// Where a holder stands in the choice of a block's name, lowest first:
/// a pointer to the block's start before one into it (`interior`), then
/// by `class`, then by `distance` within the class. The classes:
/// 0, a variable of the function that opened the region; 1, of one of its
/// callers (the nearest first); 2, a global; 3, a member or element of
/// another block; 4, a variable of a function the region called (a
/// helper's local, the outermost first); 5, anything else (another
/// thread's stack).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Rank {
    interior: bool,
    class: u8,
    distance: u64,
}

/// One piece of evidence for a block.
#[derive(Clone, Debug)]
struct Candidate {
    rank: Rank,
    holder: Holder,
}

/// The stack of the thread that opened the region: its frame and its
/// callers' are ranked before the frames of functions it called.
#[derive(Clone, Copy, Debug, Default)]
struct RegionFrame {
    tid: u32,
    /// The innermost frame's (ip, sp, fp) at the region's start, in which
    /// the snapshot's stack words are named.
    regs: (u64, u64, u64),
    /// The stack pointer at the region's start (the opener's frame is at
    /// and above it, less the red zone).
    sp: u64,
    /// The caller's stack pointer at its call (the opener's frame is
    /// below it); `u64::MAX` when the opener has no known caller.
    caller_sp: u64,
}

/// The locals that registers held at the last region's start, by where
/// their values are: asked of the namer once per region, at its
/// snapshot's first word.
#[derive(Default)]
pub(crate) struct RegRoots {
    /// The opener's call stack (the callers' instructions one byte back
    /// into their calls), until the namer is asked.
    pub(crate) frames: Option<Vec<(u64, u64, u64)>>,
    /// By DWARF register: the locals it held.
    current: HashMap<u16, Vec<RegLocal>>,
    /// By the stack slot where a called frame saved the register.
    saved: HashMap<u64, Vec<RegLocal>>,
}

/// A local a register held at the region's start.
#[derive(Clone, Debug)]
pub(crate) struct RegLocal {
    /// The holding frame's stack pointer.
    pub(crate) sp: u64,
    /// The local's path.
    pub(crate) path: VarPath,
    /// The record type it points to, by DWARF ([`VarName::pointee`]).
    pub(crate) pointee: String,
}

impl RegRoots {
    /// Files the namer's answer by where each value is.
    pub(crate) fn fill(&mut self, holders: Vec<RegHolder>) {
        for h in holders {
            let Some(path) = var_path(&h.var) else {
                continue;
            };
            let list = match h.source {
                RegSource::Current(r) => self.current.entry(r).or_default(),
                RegSource::Saved(at) => self.saved.entry(at).or_default(),
            };
            list.push(RegLocal {
                sp: h.sp,
                path,
                pointee: h.var.pointee,
            });
        }
    }

    /// The locals register `reg` held, with their frames' sp.
    pub(crate) fn in_register(&self, reg: u16) -> &[RegLocal] {
        self.current.get(&reg).map_or(&[], Vec::as_slice)
    }

    /// The locals whose registers were saved in the slot at `at`.
    pub(crate) fn saved_at(&self, at: u64) -> &[RegLocal] {
        self.saved.get(&at).map_or(&[], Vec::as_slice)
    }
}

/// The evidence of one analysis.
#[derive(Default)]
pub(crate) struct Roots {
    region: Option<RegionFrame>,
    /// The locals registers held at the last region's start.
    pub(crate) regs: RegRoots,
    /// The block whose address the next access stores, and how far into
    /// the block the stored pointer points.
    pub(crate) pending: Option<(u64, u64)>,
    candidates: HashMap<u32, Vec<Candidate>>,
    /// By block: the record types the variables holding its start point
    /// to, by DWARF (at most [`KEEP`]), for a block whose allocation
    /// statement names no type the debug information knows.
    pointees: HashMap<u32, Vec<String>>,
    /// Snapshot words and stores seen, for the summary's note.
    pub(crate) evidence: u64,
}

impl Roots {
    /// Records that a variable whose pointer type points to the record
    /// type `pointee` holds a pointer `offset` bytes into block `b` (see
    /// [`Roots::pointees`]). Only a pointer to the block's start says what
    /// the block is; an empty `pointee` says nothing.
    pub(crate) fn note_pointee(&mut self, b: u32, offset: u64, pointee: &str) {
        if pointee.is_empty() || offset != 0 {
            return;
        }
        let seen = self.pointees.entry(b).or_default();
        if seen.len() < KEEP && !seen.iter().any(|p| p == pointee) {
            seen.push(pointee.to_string());
        }
    }

    /// The record types the variables holding block `b`'s start point to,
    /// by DWARF: what to read the block's members with when its
    /// allocation statement names no type the debug information knows.
    /// Several when some holders point to its first member (PCRE2's
    /// `pcre2_memctl *` into a `pcre2_match_data_8`).
    pub(crate) fn pointees(&self, b: u32) -> &[String] {
        self.pointees.get(&b).map_or(&[], Vec::as_slice)
    }

    /// A region opened by thread `tid` with this call stack (innermost
    /// first, each (ip, sp, fp)).
    pub(crate) fn region_start(&mut self, tid: u32, frames: &[(u64, u64, u64)]) {
        self.region = frames.first().map(|&(ip, sp, fp)| RegionFrame {
            tid,
            regs: (ip, sp, fp),
            sp,
            caller_sp: frames.get(1).map_or(u64::MAX, |f| f.1),
        });
        let calls = frames
            .iter()
            .enumerate()
            .map(|(k, &(ip, sp, fp))| (if k == 0 { ip } else { ip.wrapping_sub(1) }, sp, fp));
        self.regs = RegRoots {
            frames: Some(calls.collect()),
            ..RegRoots::default()
        };
    }

    /// The thread that opened the last region and its innermost frame
    /// (ip, sp, fp) then: where the snapshot's stack words are named.
    pub(crate) fn snapshot_at(&self) -> (u32, (u64, u64, u64)) {
        self.region.map_or((0, (0, 0, 0)), |r| (r.tid, r.regs))
    }

    /// The rank of a holder in thread `tid`'s stack at `addr`.
    pub(crate) fn stack_rank(&self, tid: u32, addr: u64, offset: u64) -> Rank {
        let (class, distance) = match self.region {
            Some(r) if r.tid == tid => {
                if addr >= r.sp && addr < r.caller_sp {
                    (0, 0)
                } else if addr >= r.caller_sp {
                    (1, addr - r.caller_sp)
                } else {
                    (4, r.sp - addr)
                }
            }
            // A whole-run trace has no opener: the outermost frame first.
            None => (4, u64::MAX - addr),
            Some(_) => (5, 0),
        };
        Rank {
            interior: offset != 0,
            class,
            distance,
        }
    }

    /// The rank of a global or of a member of another block.
    pub(crate) fn other_rank(global: bool, offset: u64) -> Rank {
        Rank {
            interior: offset != 0,
            class: if global { 2 } else { 3 },
            distance: 0,
        }
    }

    /// Adds a holder of block `block`, keeping the best [`KEEP`] (a holder
    /// already kept is not kept twice).
    pub(crate) fn add(&mut self, block: u32, rank: Rank, holder: Holder) {
        self.evidence += 1;
        let list = self.candidates.entry(block).or_default();
        if list.iter().any(|c| c.holder == holder) {
            return;
        }
        let at = list.partition_point(|c| c.rank <= rank);
        if at < KEEP {
            list.insert(at, Candidate { rank, holder });
            list.truncate(KEEP);
        }
    }

    /// The path of every block that has a holder with a path, by block
    /// index: `names[b]` is block `b`'s current name (the statement
    /// reader's), `sites[b]` its allocation site, `member(b, offset)` the
    /// member path of a byte of block `b` after its name (`.w1`,
    /// `[3].y`), when its type has members.
    ///
    /// A block held only by variables of functions the region called (a
    /// helper's local, which may have died when the helper returned the
    /// block) or of other threads keeps the statement reader's name (or
    /// its site): such a holder is not sure enough to name it.
    pub(crate) fn resolve(
        &self,
        names: &[HeapName],
        member: &mut dyn FnMut(u32, u64) -> Option<ElementPath>,
    ) -> Resolution {
        let mut walk = Walk::default();
        let mut blocks: Vec<u32> = self.candidates.keys().copied().collect();
        blocks.sort_unstable();
        for b in blocks {
            let mut visiting = Vec::new();
            self.path_of(b, names, member, &mut walk, &mut visiting);
        }
        let paths = walk
            .done
            .into_iter()
            .filter_map(|(b, p)| {
                let Reached { path, internal, .. } = p?;
                let container = internal || self.held_by_container(b, &path);
                Some((b, Resolved { path, container }))
            })
            .collect();
        let mut distrusted = walk.distrusted;
        distrusted.sort_unstable();
        Resolution { paths, distrusted }
    }

    /// Whether block `b`, named `path`, is held by a variable's member
    /// that is a library container (its holder's path went on into the
    /// container's internals: `x.coefs._M_impl._M_start`).
    fn held_by_container(&self, b: u32, path: &str) -> bool {
        self.candidates.get(&b).is_some_and(|c| {
            c.iter().any(|c| match &c.holder {
                Holder::Var(v) => {
                    general_path(&v.path) == path && (v.internal || through_internals(&v.path))
                }
                Holder::Block { .. } => false,
            })
        })
    }

    /// Whether block `b`'s name may come only from weak holders (see
    /// [`Roots::resolve`]): it has no holder of a class below 4.
    fn only_weak(&self, b: u32) -> bool {
        self.candidates
            .get(&b)
            .is_none_or(|c| c.iter().all(|c| c.rank.class >= WEAK_CLASS))
    }

    /// Block `b`'s path and how many blocks of other structures it passes
    /// through (memoised in `walk`); `visiting` holds the blocks on the way
    /// here, so a cycle of blocks (a doubly linked list) falls to the next
    /// holder. A path through more than [`MAX_TRUSTED_HOPS`] blocks gives
    /// way to the statement reader's exact name, or to none (the block
    /// keeps its site), and is put in `walk.distrusted`; so is every path
    /// that goes on from such a block.
    fn path_of(
        &self,
        b: u32,
        names: &[HeapName],
        member: &mut dyn FnMut(u32, u64) -> Option<ElementPath>,
        walk: &mut Walk,
        visiting: &mut Vec<u32>,
    ) -> Option<Reached> {
        if let Some(p) = walk.done.get(&b) {
            return p.clone();
        }
        if visiting.contains(&b) || visiting.len() > MAX_DEPTH {
            return None;
        }
        let statement = || exact_name(names, b).map(Reached::named);
        if self.only_weak(b) {
            let kept = statement();
            walk.done.insert(b, kept.clone());
            return kept;
        }
        visiting.push(b);
        let mut found = None;
        for c in self.candidates.get(&b).map_or(&[][..], |v| &v[..]) {
            found = match &c.holder {
                Holder::Var(v) => Some(Reached {
                    path: general_path(&v.path),
                    hops: 0,
                    internal: v.internal,
                }),
                Holder::Block { parent, offset } => self
                    .path_of(*parent, names, member, walk, visiting)
                    .or_else(|| exact_name(names, *parent).map(Reached::named))
                    .and_then(|p| {
                        if p.internal || same_structure(names, *parent, b) {
                            return Some(p);
                        }
                        // A word no member covers is an element only of
                        // an array of pointers: in a structure whose type
                        // the debug information does not know (PCRE2's
                        // match data at -O2) it is no path at all.
                        let m = member(*parent, *offset);
                        (m.is_some() || may_hold_pointers(names, *parent))
                            .then(|| p.child(m, *offset))
                    }),
            };
            if found.is_some() {
                break;
            }
        }
        visiting.pop();
        if let Some(reached) = found.take() {
            // A block set aside keeps its hop count, so that what it holds
            // is set aside too, not named through the statement's name.
            found = if reached.hops > MAX_TRUSTED_HOPS {
                walk.distrusted.push((b, reached.path));
                statement().map(|n| Reached {
                    hops: reached.hops,
                    ..n
                })
            } else {
                Some(reached)
            };
        }
        walk.done.insert(b, found.clone());
        found
    }
}

/// The statement reader's name of block `b`, when it is exact.
fn exact_name(names: &[HeapName], b: u32) -> Option<String> {
    names
        .get(b as usize)
        .filter(|n| n.quality == NameQuality::Exact)
        .map(|n| n.name.clone())
}

/// The state of one [`Roots::resolve`]: each block's path and hop count
/// once known (`None`: no path), and the paths set aside as too long.
#[derive(Default)]
struct Walk {
    done: HashMap<u32, Option<Reached>>,
    distrusted: Vec<(u32, String)>,
}

/// A block's path as the walk found it.
#[derive(Clone, Debug)]
struct Reached {
    /// The path, made general ([`general_path`]).
    path: String,
    /// How many blocks of other structures the path passes through.
    hops: u32,
    /// Whether the block is a library's internal storage: its holder's
    /// path went on into a library's internals, or its holder is such a
    /// block. What it holds is that storage too, under the same name (a
    /// hash map's nodes under the map).
    internal: bool,
}

impl Reached {
    /// The statement reader's name `n`, as a path of no hops.
    fn named(n: String) -> Reached {
        Reached {
            path: n,
            hops: 0,
            internal: false,
        }
    }

    /// The path of the block held at byte `offset` of this one, whose
    /// member path there is `member`: one hop further, and a library's
    /// internals where the member is one.
    fn child(&self, member: Option<ElementPath>, offset: u64) -> Reached {
        let (member, internal) = match member {
            Some(m) => match m.internal_at.and_then(|at| m.path.get(..at)) {
                Some(outer) => (Some(outer.to_string()), true),
                None => (Some(m.path), false),
            },
            None => (None, false),
        };
        let path = match member {
            Some(m) if m.is_empty() => self.path.clone(),
            m => general_path(&child_path(&self.path, m, offset)),
        };
        Reached {
            path,
            hops: self.hops + 1,
            internal,
        }
    }
}

/// What [`Roots::resolve`] finds.
#[derive(Debug, Default)]
pub(crate) struct Resolution {
    /// The name of each block named by its holders.
    pub(crate) paths: HashMap<u32, Resolved>,
    /// Blocks whose only paths pass through more than
    /// [`MAX_TRUSTED_HOPS`] other blocks, with that path, by block: they
    /// keep the statement reader's name (or their site), and a note says
    /// so.
    pub(crate) distrusted: Vec<(u32, String)>,
}

/// Whether blocks `a` and `b` are nodes of one structure (a list, a tree):
/// allocated by one statement, or of one structure type. A node held by
/// another node takes its name, so a structure is one row.
fn same_structure(names: &[HeapName], a: u32, b: u32) -> bool {
    match (names.get(a as usize), names.get(b as usize)) {
        (Some(x), Some(y)) => {
            (x.site == y.site && x.site != "?")
                || (!x.elem_type.is_empty()
                    && x.elem_type == y.elem_type
                    && !x.elem_type.contains('*'))
        }
        _ => false,
    }
}

/// Whether block `b` may be an array of pointers, so that a word of it
/// with no member path is an element (`rows[i]`): its allocation
/// statement gives it a pointer type, or none.
fn may_hold_pointers(names: &[HeapName], b: u32) -> bool {
    names
        .get(b as usize)
        .is_none_or(|n| n.elem_type.is_empty() || n.elem_type.contains('*'))
}

/// The path of a byte of a block whose path is `parent`: `parent->w1` for
/// a member (`member` = `.w1` or `[3].w1`), `parent[i]` for an element of
/// a pointer array.
fn child_path(parent: &str, member: Option<String>, offset: u64) -> String {
    match member {
        Some(m) if m.starts_with('.') => format!("{parent}->{}", &m[1..]),
        Some(m) if m.starts_with('[') => format!("({parent}){m}"),
        Some(m) => format!("{parent}->{m}"),
        None if offset.is_multiple_of(8) => format!("{parent}[{}]", offset / 8),
        None => format!("{parent}+{offset}"),
    }
}

/// A path as a row's name: each index made a letter (`rows[3]` is
/// `rows[i]`, `a[2][5]` is `a[i][j]`), so that the blocks held by the
/// elements of one array share a name, and the standard library's
/// internals left out (`x.coefs._M_impl._M_start` is `x.coefs`).
pub(crate) fn general_path(path: &str) -> String {
    const LETTERS: [&str; 6] = ["i", "j", "k", "l", "m", "n"];
    let mut out = String::with_capacity(path.len());
    let mut depth = 0;
    let mut rest = path;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|c| open + c) else {
            break;
        };
        out.push_str(&rest[..open]);
        let inner = &rest[open + 1..close];
        // A letter is an index of a holder's path made general already
        // (`grid[i]` holding rows at `[3]` is `grid[i][j]`).
        let numeric = !inner.is_empty() && inner.bytes().all(|c| c.is_ascii_digit());
        if numeric || LETTERS.contains(&inner) {
            out.push('[');
            out.push_str(LETTERS[depth.min(LETTERS.len() - 1)]);
            out.push(']');
            depth += 1;
        } else {
            out.push_str(&rest[open..=close]);
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    strip_internals(&out)
}

/// Whether member `m` is a library's internals: libstdc++'s `_M_*`,
/// libc++'s `__*`, Eigen's `m_storage` and `m_data`.
fn internal(m: &str) -> bool {
    let m = m
        .split(['[', '-'])
        .next()
        .unwrap_or(m)
        .trim_start_matches('>');
    m.starts_with("_M_") || m.starts_with("__") || m == "m_storage" || m == "m_data"
}

/// Whether a path goes on into a library's internals after its first part.
fn through_internals(path: &str) -> bool {
    path.split('.').skip(1).any(internal)
}

/// Leaves out members that are a library's internals ([`internal`]).
fn strip_internals(path: &str) -> String {
    let mut out = String::new();
    for (k, part) in path.split('.').enumerate() {
        if k > 0 && internal(part) {
            break;
        }
        if k > 0 {
            out.push('.');
        }
        out.push_str(part);
    }
    out
}

/// The variable a path starts from and the rest of it: `("x", ".coefs")`
/// for `x.coefs`, `("net", "->w1[i]")` for `(net->w1)[i]`; `None` when
/// the path does not start with a name.
fn split_root(path: &str) -> Option<(&str, &str)> {
    let p = path.trim_start_matches('(');
    let end = p
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(p.len());
    (end > 0).then(|| (&p[..end], &p[end..]))
}

/// A block's name from its holders ([`Roots::resolve`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// The path (`x.coefs`, `net->w1[i]`).
    pub(crate) path: String,
    /// Whether the path's last member is a library container (a
    /// `std::vector`, a `std::unique_ptr`) whose internals hold the block.
    pub(crate) container: bool,
}

/// The rows of C++ objects that own one container: a path that is a
/// variable's member alone and a library container (`x.coefs` for the
/// vector member of `Vec x`), where nothing else on the heap is reached
/// from that variable, is shown as the variable (`x`), as a person calls
/// the object whose buffer it is. The full path stays for
/// `set_heap_grouping instances`. An object that owns several pieces
/// (`m.w`, `m.b`) keeps its members in the names; so does a plain
/// pointer member (C's `h.counts`), a pointer's target (`net->w1`) and an
/// element (`rows[i]`).
///
/// `paths` are the names given by holders with whether each ends at a
/// container, `others` every other heap block's name (the statement
/// reader's). Returns full path → row name. Cost: a pass over the names
/// and a hash probe each.
pub(crate) fn owner_rows<'a>(
    paths: impl Iterator<Item = (&'a str, bool)>,
    others: impl Iterator<Item = &'a str>,
) -> HashMap<String, String> {
    let paths: Vec<(&str, bool)> = paths.collect();
    // Per root variable: the one path reaching from it, or `None` once a
    // second one is seen.
    let mut by_root: HashMap<&str, Option<&str>> = HashMap::default();
    for path in paths.iter().map(|p| p.0).chain(others) {
        if let Some((root, _)) = split_root(path) {
            by_root
                .entry(root)
                .and_modify(|p| {
                    if *p != Some(path) {
                        *p = None
                    }
                })
                .or_insert(Some(path));
        }
    }
    let members_only = |rest: &str| {
        rest.starts_with('.')
            && rest[1..]
                .split('.')
                .all(|m| !m.is_empty() && m.chars().all(|c| c.is_alphanumeric() || c == '_'))
    };
    paths
        .into_iter()
        .filter(|&(_, container)| container)
        .filter_map(|(p, _)| {
            let (root, rest) = split_root(p)?;
            (!p.starts_with('(') && members_only(rest) && by_root.get(root) == Some(&Some(p)))
                .then(|| (p.to_string(), root.to_string()))
        })
        .collect()
}

/// The path a stack variable or global gives a block it holds, or `None`
/// for a frame slot or the pins' own block.
pub(crate) fn var_path(v: &VarName) -> Option<VarPath> {
    if v.frame_slot || v.client_request || v.name.starts_with('<') {
        return None;
    }
    if v.element.is_empty() {
        return Some(v.name.as_str().into());
    }
    let cut = v
        .internal_at
        .filter(|&at| at > 0 && v.element.is_char_boundary(at));
    Some(match cut {
        Some(at) => VarPath {
            path: v.element[..at].to_string(),
            internal: true,
        },
        None => v.element.as_str().into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str, site: &str, ty: &str) -> HeapName {
        HeapName {
            name: n.into(),
            site: site.into(),
            elem_size: 0,
            dims: vec![],
            inner_dims: vec![],
            elem_type: ty.into(),
            quality: NameQuality::Exact,
        }
    }

    #[test]
    fn indices_become_letters_and_internals_go() {
        assert_eq!(general_path("rows[3]"), "rows[i]");
        assert_eq!(general_path("a[2][5]"), "a[i][j]");
        assert_eq!(general_path("grid[i][3]"), "grid[i][j]");
        assert_eq!(general_path("t[i][j][0]"), "t[i][j][k]");
        assert_eq!(general_path("x.coefs._M_impl._M_start"), "x.coefs");
        assert_eq!(general_path("A.m_storage.m_data"), "A");
        assert_eq!(general_path("net->w1[7]"), "net->w1[i]");
        assert!(through_internals("x.coefs._M_impl._M_start"));
        assert!(!through_internals("h.counts"));
    }

    #[test]
    fn an_object_owning_one_buffer_is_its_row() {
        let paths = [
            "x.coefs",
            "r.coefs",
            "m.w",
            "m.b",
            "net->w1",
            "(net->w1)[i]",
            "s.a.data",
            "rows[i]",
            "g.v",
        ];
        let others = ["g", "q"];
        let got = owner_rows(
            paths
                .iter()
                .map(|&p| (p, p != "s.a.data"))
                .chain([("h.counts", false)]),
            others.iter().copied(),
        );
        assert_eq!(got.get("x.coefs").map(String::as_str), Some("x"));
        assert_eq!(got.get("r.coefs").map(String::as_str), Some("r"));
        // Two members, a pointer's target, an element, a root that another
        // block is named by, and plain pointer members do not fold.
        for kept in [
            "m.w",
            "m.b",
            "net->w1",
            "(net->w1)[i]",
            "rows[i]",
            "g.v",
            "s.a.data",
            "h.counts",
        ] {
            assert!(!got.contains_key(kept), "{kept} folded: {got:?}");
        }
        // The blocks of one member (a vector's buffers as it grows) fold.
        let got = owner_rows(
            [("v.d", true), ("v.d", true)].into_iter(),
            std::iter::empty(),
        );
        assert_eq!(got.get("v.d").map(String::as_str), Some("v"));
    }

    #[test]
    fn rows_of_a_helper_take_the_path_through_their_table() {
        // Block 0: the struct `net` (held by the local `net`); block 1:
        // w1's pointer table (held by the helper's local `new`, then by
        // net->w1); blocks 2 and 3: rows (held by new[0], new[1]).
        let names = vec![
            name("net", "m.c:30", "struct net"),
            name("new", "m.c:10", "float *"),
            name("p", "m.c:5", "float"),
            name("p", "m.c:5", "float"),
        ];
        let mut r = opened();
        held_by_var(&mut r, 0, VarPath::from("net"));
        r.add(
            1,
            r.stack_rank(1, 800, 0),
            Holder::Var(VarPath::from("new")),
        );
        held_in(&mut r, 1, 0, 8);
        for (b, off) in [(2u32, 0u64), (3, 8)] {
            r.add(b, r.stack_rank(1, 700, 0), Holder::Var(VarPath::from("p")));
            held_in(&mut r, b, 1, off);
        }
        let mut member = |b: u32, off: u64| (b == 0 && off == 8).then(|| ".w1".into());
        let got = r.resolve(&names, &mut member).paths;
        assert_eq!(got[&0].path, "net");
        assert_eq!(got[&1].path, "net->w1");
        assert_eq!(got[&2].path, "net->w1[i]");
        assert_eq!(got[&3].path, "net->w1[i]");
    }

    /// A region opened by thread 1 at sp 1000, whose caller's frame is at
    /// 2000.
    fn opened() -> Roots {
        let mut r = Roots::default();
        r.region_start(1, &[(0, 1000, 0), (0, 2000, 0)]);
        r
    }

    /// Block `b` is held by the opener's variable `v` (at sp 1500).
    fn held_by_var(r: &mut Roots, b: u32, v: VarPath) {
        let rank = r.stack_rank(1, 1500, 0);
        r.add(b, rank, Holder::Var(v));
    }

    /// Block `b` is held at byte `offset` of block `parent`.
    fn held_in(r: &mut Roots, b: u32, parent: u32, offset: u64) {
        r.add(
            b,
            Roots::other_rank(false, 0),
            Holder::Block { parent, offset },
        );
    }

    #[test]
    fn a_librarys_internal_storage_is_one_row_under_its_variable() {
        // Block 0: a hash map's bucket array, held by the local `m`
        // through its private member (cut at `m`); blocks 1 and 2: nodes
        // the buckets hold; block 3: a block a node holds. Block 4 is held
        // by a public member of a library's structure (`s.data`).
        let names = vec![
            name("b", "h.hpp:3", ""),
            name("n", "h.hpp:9", "node"),
            name("n", "h.hpp:9", "node"),
            name("k", "h.hpp:12", "char"),
            name("p", "u.c:4", "double"),
        ];
        let mut r = opened();
        let m = VarPath {
            path: "m".into(),
            internal: true,
        };
        held_by_var(&mut r, 0, m);
        for (b, parent, offset) in [(1u32, 0u32, 0u64), (2, 0, 8), (3, 1, 16)] {
            held_in(&mut r, b, parent, offset);
        }
        held_by_var(&mut r, 4, VarPath::from("s.data"));
        let mut member =
            |_b: u32, off: u64| Some(ElementPath::from(&*format!("[{}].next_", off / 8)));
        let got = r.resolve(&names, &mut member).paths;
        for b in 0..4 {
            assert_eq!(got[&b].path, "m", "block {b}: {got:?}");
            assert!(got[&b].container, "block {b} is the library's storage");
        }
        assert_eq!(got[&4].path, "s.data");
        assert!(!got[&4].container);
        // A member that is a library's internals ends the path at the
        // holding block's: a block held by `h->impl_.slot` is `h`.
        let mut r = opened();
        held_by_var(&mut r, 0, VarPath::from("h"));
        held_in(&mut r, 1, 0, 8);
        let mut member = |_b: u32, _off: u64| {
            Some(ElementPath {
                path: ".impl_.slot".into(),
                internal_at: Some(0),
            })
        };
        let got = r.resolve(&names[3..5], &mut member).paths;
        assert_eq!(got[&1].path, "h");
        assert!(got[&1].container);
    }

    #[test]
    fn a_word_of_a_structure_of_unknown_type_is_no_path() {
        // Block 0: a structure whose type the debug information does not
        // know (PCRE2's match data, spelled through a macro), held by
        // `mdata`; block 1, named `emails` by its statement, is held by a
        // word of it that no member covers. Under a pointer table the same
        // word is an element.
        for (ty, want) in [("pcre2_match_data", None), ("char *", Some("mdata[i]"))] {
            let names = vec![name("mdata", "p.c:9", ty), name("emails", "p.c:4", "")];
            let mut r = opened();
            held_by_var(&mut r, 0, VarPath::from("mdata"));
            held_in(&mut r, 1, 0, 24);
            let got = r.resolve(&names, &mut |_, _| None).paths;
            assert_eq!(got.get(&1).map(|r| r.path.as_str()), want, "{ty}");
        }
    }

    #[test]
    fn the_openers_variable_beats_a_helpers_local() {
        let names = vec![name("p", "x.c:3", "unsigned char")];
        let mut r = Roots::default();
        r.region_start(1, &[(0, 1000, 0), (0, 2000, 0)]);
        r.add(0, r.stack_rank(1, 900, 0), Holder::Var(VarPath::from("p")));
        r.add(
            0,
            r.stack_rank(1, 1200, 0),
            Holder::Var(VarPath::from("src")),
        );
        let got = r.resolve(&names, &mut |_, _| None).paths;
        assert_eq!(got[&0].path, "src");
    }

    #[test]
    fn a_helper_s_local_does_not_overrule_the_statement() {
        // An aligning helper keeps the raw block in its local `base` and
        // returns `base + off`, which the caller stores as `state`: only
        // the helper's local holds the start.
        let names = vec![name("state", "x.c:40", "struct st")];
        let mut r = Roots::default();
        r.region_start(1, &[(0, 1000, 0), (0, 2000, 0)]);
        r.add(
            0,
            r.stack_rank(1, 900, 0),
            Holder::Var(VarPath::from("base")),
        );
        let got = r.resolve(&names, &mut |_, _| None).paths;
        assert_eq!(got[&0].path, "state");
    }

    #[test]
    fn a_path_through_many_other_blocks_gives_way_to_the_statement() {
        // rt holds block 0, which holds 1, which holds 2, ... up to 5:
        // blocks of six different sites. Block 3 is three blocks from rt,
        // still trusted; 4 and 5 are four and five, and keep their
        // statement names (`s4`, `samples`).
        let mut names: Vec<HeapName> = (0..6)
            .map(|k| {
                name(
                    &format!("s{k}"),
                    &format!("q.c:{k}"),
                    &format!("struct a{k}"),
                )
            })
            .collect();
        names[5] = name("samples", "h.c:59", "float");
        let mut r = Roots::default();
        r.region_start(1, &[(0, 1000, 0)]);
        r.add(
            0,
            r.stack_rank(1, 1100, 0),
            Holder::Var(VarPath::from("rt")),
        );
        for b in 1..6u32 {
            let parent = b - 1;
            r.add(
                b,
                Roots::other_rank(false, 0),
                Holder::Block { parent, offset: 8 },
            );
        }
        // Block 0 is a struct whose member `l` holds block 1; each other
        // block holds the next in the member `n` of its second element.
        let mut member = |b: u32, _| Some(if b == 0 { ".l" } else { "[1].n" }.into());
        let got = r.resolve(&names, &mut member);
        assert_eq!(got.paths[&0].path, "rt");
        assert_eq!(got.paths[&1].path, "rt->l");
        assert_eq!(got.paths[&3].path, "((rt->l)[i].n)[j].n");
        assert_eq!(got.paths[&4].path, "s4");
        assert_eq!(got.paths[&5].path, "samples", "not `s4[i].n`");
        let set_aside: Vec<u32> = got.distrusted.iter().map(|d| d.0).collect();
        assert_eq!(set_aside, vec![4, 5]);
        // Without a statement name, block 4 keeps its site, and so no
        // path reaches block 5, which keeps its statement's name.
        names[4].quality = NameQuality::Fallback {
            hint: String::new(),
        };
        let got = r.resolve(&names, &mut member);
        assert!(!got.paths.contains_key(&4), "{:?}", got.paths);
        assert!(!got.paths.contains_key(&5), "{:?}", got.paths);
        assert_eq!(got.distrusted.len(), 1);
    }

    #[test]
    fn nodes_of_one_list_share_the_head_s_name_and_cycles_end() {
        // A doubly linked list: each node holds the next and the previous.
        let names = vec![name("n", "l.c:9", "struct node"); 3];
        let mut r = Roots::default();
        r.region_start(1, &[(0, 1000, 0)]);
        r.add(
            0,
            r.stack_rank(1, 1100, 0),
            Holder::Var(VarPath::from("head")),
        );
        r.add(
            1,
            Roots::other_rank(false, 0),
            Holder::Block {
                parent: 0,
                offset: 8,
            },
        );
        r.add(
            0,
            Roots::other_rank(false, 0),
            Holder::Block {
                parent: 1,
                offset: 16,
            },
        );
        r.add(
            2,
            Roots::other_rank(false, 0),
            Holder::Block {
                parent: 1,
                offset: 8,
            },
        );
        r.add(
            1,
            Roots::other_rank(false, 0),
            Holder::Block {
                parent: 2,
                offset: 16,
            },
        );
        let got = r.resolve(&names, &mut |_, _| Some(".next".into())).paths;
        assert_eq!(got[&0].path, "head");
        assert_eq!(got[&1].path, "head");
        assert_eq!(got[&2].path, "head");
    }
}
