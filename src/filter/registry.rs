//! The variables of an analysis and the heap blocks that name them.
//!
//! [`Registry`] gives every named block a row of the variable table: heap
//! block instances, stack variables and globals (by name, scope and base),
//! and one catch-all row per scope for unnamed memory. It also tracks the
//! live heap blocks in an ordered map, so that names follow blocks through
//! free and realloc, never raw addresses: a freed address reused by a new
//! block belongs to the new block.
//!
//! Both inputs (binary traces and Gleipnir text traces) name through one
//! registry. Memory: one [`Variable`] per row and one [`Allocation`] per
//! heap block of the run, never per access.
use std::collections::BTreeMap;

use polars::prelude::PlHashMap as HashMap;

use super::access::VarId;
use super::model::{Allocation, NewBlock, Variable};
use crate::trace::naming::{HeapName, Scope, VarName};

/// What a variable row stands for.
#[derive(Clone, Copy, Hash, PartialEq, Eq)]
enum VarKey {
    Heap(u32),
    Named(u32),
    Other(Scope),
}

/// The variable rows and live heap blocks of one analysis.
#[derive(Default)]
pub(crate) struct Registry {
    /// The variables, by row.
    pub(crate) vars: Vec<Variable>,
    var_ids: HashMap<VarKey, u32>,
    /// (scope, base, name) of stack/global variables -> dense key.
    named: HashMap<(Scope, u64, String), u32>,
    /// Live heap blocks: start -> (end, block index).
    live: BTreeMap<u64, (u64, u32)>,
    /// Bumped whenever a block is allocated or freed, so cached heap
    /// answers are re-checked.
    pub(crate) heap_generation: u32,
    /// Every heap block of the run, in allocation order, and when it was
    /// freed.
    blocks: Vec<(NewBlock, Option<u64>)>,
    block_names: Vec<HeapName>,
    /// Variable row of each block, once first needed.
    block_var: Vec<Option<u32>>,
    /// The full path of each block shown under its owner's name
    /// ([`crate::filter::roots::owner_rows`]): `x.coefs` for the row `x`.
    block_paths: HashMap<u32, String>,
    last_block: Option<(u64, u64, u32)>,
    /// Per variable: whether its elements have member names (a struct, or
    /// an array of them), so new locations get their member path.
    structured: Vec<bool>,
}

impl Registry {
    /// Whether variable row `v` has member names.
    #[inline]
    pub(crate) fn is_structured(&self, v: u32) -> bool {
        self.structured.get(v as usize) == Some(&true)
    }

    /// The allocation sites (`file.c:LINE`) of the blocks accessed so far:
    /// those that have a variable row before [`Self::into_parts`].
    pub(crate) fn accessed_sites(&self) -> std::collections::HashSet<&str> {
        self.block_names
            .iter()
            .zip(&self.block_var)
            .filter(|(_, v)| v.is_some())
            .map(|(n, _)| n.site.as_str())
            .collect()
    }

    /// Gives every heap block a variable row, also blocks never accessed,
    /// so the allocation info lists every block with its name; returns the
    /// variables and blocks.
    pub(crate) fn into_parts(mut self) -> (Vec<Variable>, Vec<Allocation>) {
        let mut allocations = Vec::with_capacity(self.blocks.len());
        for i in 0..self.blocks.len() {
            let v = self.heap_var(i as u32);
            let (b, free_time) = &self.blocks[i];
            self.vars[v as usize].free_time = *free_time;
            allocations.push(Allocation {
                addr: b.addr,
                size: b.size,
                var: VarId(v),
                kind: b.kind,
                tid: b.tid,
                alloc_time: b.alloc_time,
                free_time: *free_time,
            });
        }
        (self.vars, allocations)
    }

    /// The row of `key`, made by `make` on first use.
    fn var_for(&mut self, key: VarKey, make: impl FnOnce() -> Variable) -> u32 {
        if let Some(&v) = self.var_ids.get(&key) {
            return v;
        }
        let id = self.vars.len() as u32;
        self.vars.push(make());
        self.var_ids.insert(key, id);
        id
    }

    /// The variable row of heap block `block`, made on first use from the
    /// block and its allocation-site name.
    pub(crate) fn heap_var(&mut self, block: u32) -> u32 {
        if let Some(v) = self.block_var[block as usize] {
            return v;
        }
        let (b, free_time) = &self.blocks[block as usize];
        let name = &self.block_names[block as usize];
        let var = Variable {
            base: b.addr,
            size: b.size,
            elem_size: name.elem_size,
            dims: name.dims_for(b.size),
            site: name.site.clone(),
            elem_type: name.elem_type.clone(),
            alloc_time: Some(b.alloc_time),
            free_time: *free_time,
            path: self.block_paths.get(&block).cloned().unwrap_or_default(),
            ..Variable::new(name.name.clone(), b.scope)
        };
        let structured = has_members(&var.elem_type);
        let id = self.var_for(VarKey::Heap(block), || var);
        self.block_var[block as usize] = Some(id);
        if structured {
            self.mark_structured(id);
        }
        id
    }

    /// The variable row of a stack variable or global the namer found; one
    /// row per (scope, base, name), so a local gets one row per frame
    /// address it lives at.
    pub(crate) fn named_var(&mut self, v: VarName) -> u32 {
        let key = (v.scope, v.base, v.name.clone());
        let nid = match self.named.get(&key) {
            Some(&n) => n,
            None => {
                let n = self.named.len() as u32;
                self.named.insert(key, n);
                n
            }
        };
        let structured = v.element.contains('.') || v.element.contains("->");
        let id = self.var_for(VarKey::Named(nid), || Variable {
            base: v.base,
            size: v.size,
            elem_size: v.elem_size,
            dims: v.dims.clone(),
            internal: v.client_request,
            frame_slot: v.frame_slot,
            function: v.function.clone(),
            ..Variable::new(v.name.clone(), v.scope)
        });
        if structured {
            self.mark_structured(id);
        }
        id
    }

    /// Records that variable row `id` has member names.
    fn mark_structured(&mut self, id: u32) {
        if self.structured.len() <= id as usize {
            self.structured.resize(id as usize + 1, false);
        }
        self.structured[id as usize] = true;
    }

    /// The catch-all row of unnamed memory of `scope`.
    pub(crate) fn other_var(&mut self, scope: Scope) -> u32 {
        self.var_for(VarKey::Other(scope), || {
            let name = match scope {
                Scope::Stack => "<stack>",
                Scope::Global => "<static data>",
                Scope::Heap => "<other>",
            };
            Variable {
                base_name: String::new(),
                ..Variable::new(name.into(), scope)
            }
        })
    }

    /// The live block holding `addr`: (start, end, block). `end` is
    /// exclusive, saturated at 2^64 - 1 for a block that reaches the top
    /// of memory, which then holds that last byte too.
    pub(crate) fn find_block(&mut self, addr: u64) -> Option<(u64, u64, u32)> {
        let inside = |s: u64, e: u64| addr >= s && (addr < e || e == u64::MAX);
        if let Some((s, e, b)) = self.last_block {
            if inside(s, e) {
                return Some((s, e, b));
            }
        }
        let (&s, &(e, b)) = self.live.range(..=addr).next_back()?;
        if inside(s, e) || (s == addr && e == s) {
            self.last_block = Some((s, e, b));
            Some((s, e, b))
        } else {
            None
        }
    }

    /// A block is allocated: it names the addresses it spans from now on.
    pub(crate) fn add_block(&mut self, al: NewBlock, name: HeapName) {
        let idx = self.blocks.len() as u32;
        self.live
            .insert(al.addr, (al.addr.saturating_add(al.size), idx));
        self.blocks.push((al, None));
        self.block_names.push(name);
        self.block_var.push(None);
        self.last_block = None;
        self.heap_generation = self.heap_generation.wrapping_add(1);
    }

    /// The allocation-site names of every block of the run, by block index.
    pub(crate) fn block_names(&self) -> &[HeapName] {
        &self.block_names
    }

    /// Gives block `block` the base name `name` (a name from where the
    /// program keeps its address), and `path` when the name is its owner's
    /// and the full path differs: its own row too, if it has one already.
    pub(crate) fn rename_block(&mut self, block: u32, name: String, path: Option<String>) {
        if let Some(v) = self.block_var.get(block as usize).copied().flatten() {
            let var = &mut self.vars[v as usize];
            var.name = name.clone();
            var.base_name = name.clone();
            var.path = path.clone().unwrap_or_default();
        }
        if let Some(p) = path {
            self.block_paths.insert(block, p);
        }
        if let Some(n) = self.block_names.get_mut(block as usize) {
            n.name = name;
            n.quality = crate::trace::naming::NameQuality::Exact;
        }
    }

    /// The start, size and element type of block `block`, for member paths.
    pub(crate) fn block_layout(&self, block: u32) -> Option<(u64, u64, String)> {
        let (b, _) = self.blocks.get(block as usize)?;
        let n = self.block_names.get(block as usize)?;
        Some((b.addr, b.size, n.elem_type.clone()))
    }

    /// The block at `addr` is freed at `time` (unknown addresses are
    /// ignored: frees of blocks allocated before tracing).
    pub(crate) fn free_block(&mut self, addr: u64, time: u64) {
        if let Some((_, idx)) = self.live.remove(&addr) {
            self.blocks[idx as usize].1 = Some(time);
            self.last_block = None;
            self.heap_generation = self.heap_generation.wrapping_add(1);
        }
    }
}

/// Whether a heap block's element type (as the source writes it) may have
/// members: anything but a scalar, a pointer or an unknown type.
fn has_members(elem_type: &str) -> bool {
    const SCALARS: &[&str] = &[
        "char", "short", "int", "long", "float", "double", "signed", "unsigned", "void", "_Bool",
        "bool", "size_t", "const", "volatile",
    ];
    let t = elem_type.trim();
    !t.is_empty()
        && !t.contains(['*', '['])
        && !t
            .split_whitespace()
            .all(|w| SCALARS.contains(&w) || (w.ends_with("_t") && w.contains("int")))
}
