//! Blocks outside the heap that a statement names: variable-length arrays
//! and `alloca` blocks on a thread's stack, and memory mapped with `mmap`.
//!
//! Both live in the [`Registry`] beside the heap blocks, so an access is
//! named by the same block lookup and site caches are re-checked when they
//! come and go. This module decides when they begin and end:
//!
//! - A stack block `[sp, sp + len)` is made when the trace's STACK_ALLOC
//!   record says an instruction moved the stack pointer down by a computed
//!   amount, and the statement there declares an array or stores an
//!   `alloca` ([`Namer::stack_block_name`]). It ends as soon as the
//!   thread's stack pointer is seen above its start: while the block
//!   lives, the stack pointer stays at or below it (calls and signal
//!   handlers only go deeper), so this is exact, not a guess.
//! - A mapped block is made by an MMAP record whose call stack reaches a
//!   statement calling `mmap` ([`Namer::mapped_name`]) and ends at the
//!   first UNMAP record that meets it.
//!
//! Memory: one entry per live block; each name is asked once per
//! instruction or call stack.
use polars::prelude::PlHashMap as HashMap;

use super::model::NewBlock;
use super::registry::Registry;
use crate::trace::naming::{HeapName, Namer, Scope};
use crate::trace::record::{MmapEvent, StackAlloc};

/// The live stack and mapped blocks, and their names by origin.
#[derive(Default)]
pub(crate) struct OtherBlocks {
    /// Per thread (by id): start addresses of its live stack blocks, in
    /// the order they were made (each lower than the one before).
    stack: Vec<Vec<u64>>,
    /// Live mapped blocks: (start, length).
    mapped: Vec<(u64, u64)>,
    stack_names: HashMap<u64, Option<HeapName>>,
    mapped_names: HashMap<Vec<u64>, Option<HeapName>>,
}

impl OtherBlocks {
    /// A STACK_ALLOC record: blocks the stack pointer has since risen
    /// above end, and the new block is registered when its statement
    /// names it.
    pub(crate) fn on_stack_alloc(
        &mut self,
        s: &StackAlloc,
        reg: &mut Registry,
        namer: &mut dyn Namer,
    ) {
        self.sp_seen(s.tid, s.sp.saturating_add(s.len), s.time, reg);
        let name = self
            .stack_names
            .entry(s.ip)
            .or_insert_with(|| namer.stack_block_name(s.ip))
            .clone();
        let Some(name) = name else { return };
        reg.add_block(
            NewBlock {
                addr: s.sp,
                size: s.len,
                kind: "stack",
                tid: s.tid,
                alloc_time: s.time,
                scope: Scope::Stack,
            },
            name,
        );
        let t = s.tid as usize;
        if self.stack.len() <= t {
            self.stack.resize(t + 1, Vec::new());
        }
        self.stack[t].push(s.sp);
    }

    /// Thread `tid`'s stack pointer is `sp` at `time`: its stack blocks
    /// that start below it have ended. Cost: one comparison when none has.
    #[inline]
    pub(crate) fn sp_seen(&mut self, tid: u32, sp: u64, time: u64, reg: &mut Registry) {
        let Some(blocks) = self.stack.get_mut(tid as usize) else {
            return;
        };
        while let Some(&lo) = blocks.last() {
            if lo >= sp {
                break;
            }
            blocks.pop();
            reg.free_block(lo, time);
        }
    }

    /// Thread `tid` exited: its stack blocks end.
    pub(crate) fn thread_exit(&mut self, tid: u32, time: u64, reg: &mut Registry) {
        self.sp_seen(tid, u64::MAX, time, reg);
    }

    /// An MMAP record: registered when a statement of the program mapped
    /// it.
    pub(crate) fn on_mmap(&mut self, m: &MmapEvent, reg: &mut Registry, namer: &mut dyn Namer) {
        let name = match self.mapped_names.get(&m.stack) {
            Some(n) => n.clone(),
            None => {
                let n = namer.mapped_name(&m.stack);
                self.mapped_names.insert(m.stack.clone(), n.clone());
                n
            }
        };
        let Some(name) = name else { return };
        self.on_unmap(m.addr, m.len, m.time, reg);
        reg.add_block(
            NewBlock {
                addr: m.addr,
                size: m.len,
                kind: "mmap",
                tid: m.tid,
                alloc_time: m.time,
                scope: Scope::Heap,
            },
            name,
        );
        self.mapped.push((m.addr, m.len));
    }

    /// An UNMAP record (or a new mapping over old ones): the mapped blocks
    /// it meets end.
    pub(crate) fn on_unmap(&mut self, start: u64, len: u64, time: u64, reg: &mut Registry) {
        let end = start.saturating_add(len);
        self.mapped.retain(|&(a, l)| {
            let meets = a < end && start < a.saturating_add(l);
            if meets {
                reg.free_block(a, time);
            }
            !meets
        });
    }
}
