//! Naming the blocks a program makes outside the heap: variable-length
//! arrays and `alloca` blocks on the stack (from the instruction that moved
//! the stack pointer), and memory it maps with `mmap` (from the call
//! stack, as heap blocks).
use super::{is_cpp_function, FromSource, ProgramNamer};
use crate::trace::naming::{HeapName, NameQuality, Namer};

impl ProgramNamer {
    /// See [`Namer::stack_block_name`]: the array the statement at `ip`
    /// declares, else the variable that stores the `alloca` it calls.
    /// Cost: one line lookup and, the first time a source is asked, its
    /// parse.
    pub(super) fn name_stack_block(&mut self, ip: u64) -> Option<HeapName> {
        let (i, fa) = self.object_at(ip)?;
        if self.objects[i].system {
            return None;
        }
        let sym = self.objects[i].sym.as_ref()?;
        // The innermost frame: with inlining, the function whose statement
        // the instruction belongs to.
        let (loc, _) = sym.frames(fa).into_iter().next()?;
        let comp = sym.comp_dirs().first().cloned();
        let cpp = loc.function.as_deref().is_some_and(is_cpp_function);
        let site = Self::display_site(&loc.file, loc.line);
        let src = self.source(&loc.file, comp.as_deref(), cpp)?;
        if let Some(a) = src.array_declared_at(loc.line) {
            let elem_size = a
                .elem_bytes
                .filter(|b| *b > 0 && *b <= i64::from(u32::MAX))
                .unwrap_or(0) as u32;
            return Some(HeapName {
                name: a.name,
                site,
                elem_size,
                dims: vec![],
                inner_dims: a.inner_dims,
                elem_type: a.elem_type,
                quality: NameQuality::Exact,
            });
        }
        self.first_alloc_fn = None;
        let named = self.name_from_source(&loc.file, comp, loc.line, loc.column, false, cpp);
        let alloca = self
            .first_alloc_fn
            .take()
            .is_some_and(|f| f.ends_with("alloca"));
        match named {
            FromSource::Named(n) if alloca => Some(n),
            _ => None,
        }
    }

    /// See [`Namer::mapped_name`]: the heap walk over the call stack of
    /// `mmap`, kept only when the first statement it reached calls `mmap`
    /// (directly, or through wrappers that return its result). The walk's
    /// notes are dropped with a name that is not kept.
    pub(super) fn name_mapping(&mut self, stack: &[u64]) -> Option<HeapName> {
        let notes = self.notes.clone();
        self.first_alloc_fn = None;
        let name = self.heap_name(stack);
        let mapped = self
            .first_alloc_fn
            .take()
            .is_some_and(|f| f == "mmap" || f == "mmap64");
        if mapped && name.quality == NameQuality::Exact {
            Some(name)
        } else {
            self.notes = notes;
            None
        }
    }
}
