//! Naming the accesses of a Gleipnir text trace (`load_trace FILE.txt`).
//!
//! Names come from the trace's own `LV`/`LS`/`GV`/`GS` fields; heap blocks
//! are named from their allocation site line via [`Namer::heap_name_at`]
//! and tracked through the same [`Registry`] as binary traces. Stack and
//! global variables have no base address in such traces: the lowest
//! address seen is used as the base, and the extent grows as the trace is
//! read.
use polars::prelude::PlHashMap as HashMap;
use std::path::Path;

use crate::trace::naming::{HeapName, Namer, Scope, VarName};
use crate::trace::record::Op;
use crate::trace::record::{GlEvent, GlName, GleipnirReader};

use super::access::{LineId, NamedAccess, VarId};
use super::error::FilterError;
use super::input::{Fill, Named, Source};
use super::model::{NewBlock, Span, TraceSummary};
use super::registry::Registry;

/// A Gleipnir text trace being named.
pub(crate) struct GleipnirSource<'n> {
    reader: GleipnirReader<std::fs::File>,
    namer: &'n mut dyn Namer,
    reg: Registry,
    /// (scope, interned name) -> variable row.
    named: HashMap<(Scope, u32), u32>,
    /// Per variable row: the lowest address seen and the last byte seen.
    extent: Vec<(u64, u64)>,
    site_names: HashMap<u32, HeapName>,
    elements: HashMap<(u64, u32), String>,
    /// Accesses named so far: the time of allocations and frees.
    count: u64,
    region: u32,
    saw_any: bool,
    summary: TraceSummary,
}

impl<'n> GleipnirSource<'n> {
    /// Opens the text trace at `path` for naming with `namer`.
    pub(crate) fn open(path: &Path, namer: &'n mut dyn Namer) -> Result<Self, FilterError> {
        let reader = GleipnirReader::open(path).map_err(|e| FilterError::Import(e.to_string()))?;
        Ok(GleipnirSource {
            reader,
            namer,
            reg: Registry::default(),
            named: HashMap::default(),
            extent: Vec::new(),
            site_names: HashMap::default(),
            elements: HashMap::default(),
            count: 0,
            region: 1,
            saw_any: false,
            summary: TraceSummary::default(),
        })
    }

    /// The variable row of a named access, growing its extent.
    fn named_var(&mut self, scope: Scope, name: u32, addr: u64, size: u32) -> u32 {
        let id = match self.named.get(&(scope, name)) {
            Some(&id) => id,
            None => {
                let n = self.reader.string(name).to_string();
                let client = crate::trace::record::is_client_request_local(&n);
                let id = self.reg.named_var(VarName {
                    name: n.clone(),
                    element: n,
                    base: 0,
                    size: 0,
                    elem_size: 0,
                    dims: vec![],
                    scope,
                    client_request: client,
                    frame_slot: false,
                    function: String::new(),
                    pointee: String::new(),
                    internal_at: None,
                });
                self.named.insert((scope, name), id);
                id
            }
        };
        if self.extent.len() <= id as usize {
            self.extent.resize(id as usize + 1, (u64::MAX, 0));
        }
        let e = &mut self.extent[id as usize];
        e.0 = e.0.min(addr);
        // The last byte, inclusive: an access that ends at the top of
        // memory (2^64 - 1) has no exclusive end.
        e.1 = e.1.max(addr.saturating_add((size as u64).max(1) - 1));
        id
    }

    /// Names one access (`None` for the pins' own client-request block).
    fn on_access(
        &mut self,
        (op, addr, size, tid): (Op, u64, u32, u32),
        scope: Scope,
        name: GlName,
    ) -> Option<NamedAccess> {
        let var = match (scope, &name) {
            (Scope::Heap, _) => match self.reg.find_block(addr) {
                Some((_, _, blk)) => self.reg.heap_var(blk),
                None => self.reg.other_var(Scope::Heap),
            },
            (_, GlName::Var(v)) | (_, GlName::Element { var: v, .. }) => {
                self.named_var(scope, *v, addr, size)
            }
            (s, _) => self.reg.other_var(s),
        };
        if self.reg.vars[var as usize].internal {
            return None;
        }
        if let GlName::Element { element, .. } = name {
            self.elements
                .entry((addr, var))
                .or_insert_with(|| self.reader.string(element).to_string());
        }
        self.count += 1;
        Some(NamedAccess {
            time: 0,
            op: op.code(),
            addr,
            size,
            tid,
            var: VarId(var),
            line: LineId(0),
        })
    }

    /// A block is allocated: named from its allocation site's line.
    fn on_alloc(&mut self, tid: u32, kind: &'static str, addr: u64, size: u64, site: Option<u32>) {
        let name = match site {
            Some(s) => match self.site_names.get(&s) {
                Some(n) => n.clone(),
                None => {
                    let n = match self.reader.site(s) {
                        Some(gs) => self.namer.heap_name_at(&gs.file, gs.line),
                        None => self.namer.heap_name(&[]),
                    };
                    self.site_names.insert(s, n.clone());
                    n
                }
            },
            None => self.namer.heap_name(&[]),
        };
        self.reg.add_block(
            NewBlock {
                scope: crate::trace::naming::Scope::Heap,
                addr,
                size,
                kind,
                tid,
                alloc_time: self.count,
            },
            name,
        );
        self.summary.allocations += 1;
    }
}

impl Source for GleipnirSource<'_> {
    fn fill(&mut self, out: &mut Vec<NamedAccess>, room: usize) -> Result<Fill, FilterError> {
        while out.len() < room {
            let ev = self
                .reader
                .next_event()
                .map_err(|e| FilterError::Import(e.to_string()))?;
            let Some(ev) = ev else {
                return Ok(Fill::End);
            };
            self.saw_any = true;
            match ev {
                GlEvent::Access {
                    op,
                    addr,
                    size,
                    tid,
                    scope,
                    name,
                } => out.extend(self.on_access((op, addr, size, tid), scope, name)),
                GlEvent::Alloc {
                    tid,
                    kind,
                    addr,
                    size,
                    site,
                    ..
                } => self.on_alloc(tid, kind.name(), addr, size, site),
                GlEvent::Free { addr, .. } => {
                    self.reg.free_block(addr, self.count);
                    self.summary.frees += 1;
                }
                GlEvent::Start => {
                    self.summary.regions += 1;
                    if self.summary.regions > 1 {
                        self.region = self.summary.regions;
                        return Ok(Fill::Region(self.region));
                    }
                }
                GlEvent::ThreadCreate { .. } | GlEvent::Mmap { .. } => {}
            }
        }
        Ok(Fill::Full)
    }

    fn element(&mut self, addr: u64, var: VarId) -> Option<String> {
        self.elements.get(&(addr, var.0)).cloned()
    }

    fn span(&self, var: VarId) -> Span {
        // Stack and global extents grow as the trace is read: only heap
        // blocks have a known span.
        match self.reg.vars.get(var.index()) {
            Some(v) if v.scope == Scope::Heap => Span {
                base: v.base,
                size: v.size,
                elem: u64::from(v.elem_size),
            },
            _ => Span::default(),
        }
    }

    fn vars(&self) -> usize {
        self.reg.vars.len()
    }

    // Stack and global extents are known only at the end (see `span`).
    fn spans_final(&self) -> bool {
        false
    }

    fn finish(self: Box<Self>) -> Named {
        let mut s = *self;
        s.summary.regions = s.summary.regions.max(1);
        s.summary.complete = true;
        for (kind, n) in s.reader.unknown_kinds() {
            s.summary.notes.push(format!(
                "{n} line(s) of kind `{kind}` were not understood and were skipped."
            ));
        }
        let (bad, first) = s.reader.malformed();
        if let Some((line, text)) = first {
            s.summary.notes.push(format!(
                "{bad} malformed line(s) were skipped; the first is line {line}: `{text}`."
            ));
        }
        for (id, &(lo, hi)) in s.extent.iter().enumerate() {
            if lo > hi {
                continue;
            }
            let v = &mut s.reg.vars[id];
            v.base = lo;
            // `hi` is the last byte; a span of all 2^64 bytes saturates.
            v.size = (hi - lo).saturating_add(1);
        }
        s.summary.notes.extend(s.namer.take_notes());
        Named {
            registry: s.reg,
            lines: Vec::new(),
            summary: s.summary,
        }
    }
}

impl GleipnirSource<'_> {
    /// The error for a file with no Gleipnir events at all.
    pub(crate) fn check_nonempty(&self, path: &Path) -> Result<(), FilterError> {
        if self.saw_any {
            Ok(())
        } else {
            Err(FilterError::Import(format!(
                "{} holds no Gleipnir events: check that it is a Gleipnir trace.",
                path.display()
            )))
        }
    }
}
