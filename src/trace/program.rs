//! [`ProgramNamer`]: names addresses of a traced program from its load map,
//! its DWARF (gimli via [`super::dwarf`]), its line tables (addr2line via
//! [`super::symbolize`]) and its C sources (tree-sitter-c via
//! [`super::csource`]).
//!
//! Every object (executable, shared library) is opened at most once, when an
//! address first falls in it; every source file is parsed at most once. The
//! analysis caches answers per call stack and instruction on top of that.
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::csource::{AllocTarget, CSource};
use super::dwarf::{DebugVars, FrameSlot, VarLocation};
use super::format::Mapping;
use super::naming::{HeapName, NameQuality, Namer, Scope, VarName};
use super::symbolize::{SourceFinder, Symbolizer};

/// One mapped object and what we learned about it.
struct Object {
    path: PathBuf,
    /// Runtime start of the object's first mapping, and how runtime
    /// addresses translate: file address = runtime - bias.
    bias: Option<u64>,
    lo: u64,
    hi: u64,
    sym: Option<Symbolizer>,
    vars: Option<DebugVars>,
    loaded: bool,
    /// System objects (libc, ld.so, Valgrind's preloads) are skipped when
    /// looking for the allocation statement of a heap block.
    system: bool,
}

/// Names addresses of one traced program. See the module documentation.
pub struct ProgramNamer {
    objects: Vec<Object>,
    by_path: HashMap<String, usize>,
    finder: SourceFinder,
    sources: HashMap<PathBuf, Option<CSource>>,
    notes: BTreeSet<String>,
    exe: Option<PathBuf>,
}

fn is_system(path: &str) -> bool {
    path.starts_with("/usr/lib")
        || path.starts_with("/lib")
        || path.contains("/valgrind/")
        || path.contains("vgpreload_")
        || path.contains("valgrind-tool-")
}

impl ProgramNamer {
    /// A namer for the program `exe` (used when the trace's load map names a
    /// path that no longer exists), searching `src_paths` for sources.
    pub fn new(exe: Option<&Path>, src_paths: &[PathBuf]) -> ProgramNamer {
        ProgramNamer {
            objects: Vec::new(),
            by_path: HashMap::new(),
            finder: SourceFinder::new(src_paths.to_vec()),
            sources: HashMap::new(),
            notes: BTreeSet::new(),
            exe: exe.map(Path::to_path_buf),
        }
    }

    /// The object containing runtime address `a`, and `a` as a file address.
    fn object_at(&mut self, a: u64) -> Option<(usize, u64)> {
        let i = self.objects.iter().position(|o| a >= o.lo && a < o.hi)?;
        self.ensure_loaded(i);
        let o = &self.objects[i];
        Some((i, a.wrapping_sub(o.bias?)))
    }

    fn ensure_loaded(&mut self, i: usize) {
        if self.objects[i].loaded {
            return;
        }
        self.objects[i].loaded = true;
        let mut path = self.objects[i].path.clone();
        if !path.is_file() {
            if let Some(exe) = self
                .exe
                .clone()
                .filter(|e| e.file_name() == path.file_name())
            {
                path = exe;
            }
        }
        match Symbolizer::open(&path) {
            Ok(s) => self.objects[i].sym = Some(s),
            Err(e) => {
                if !self.objects[i].system {
                    self.notes.insert(e.to_string());
                }
            }
        }
        if !self.objects[i].system {
            match DebugVars::load(&path) {
                Ok(v) => self.objects[i].vars = Some(v),
                Err(e) => {
                    self.notes.insert(e.to_string());
                }
            }
        }
    }

    fn source(&mut self, path: &Path, comp_dir: Option<&Path>) -> Option<&CSource> {
        let found = self.finder.find(path, comp_dir);
        let key = found.clone().unwrap_or_else(|| path.to_path_buf());
        if !self.sources.contains_key(&key) {
            let parsed = found
                .as_ref()
                .and_then(|f| std::fs::read_to_string(f).ok())
                .map(CSource::parse);
            if parsed.is_none() {
                self.notes.insert(format!(
                    "the source {} was not found, so heap blocks allocated there are named file.c:LINE: \
                     set_src_path DIR (the folder holding it) gives them their variable names.",
                    path.display()
                ));
            }
            self.sources.insert(key.clone(), parsed);
        }
        self.sources.get(&key).and_then(|s| s.as_ref())
    }

    fn display_site(file: &Path, line: u32) -> String {
        let name = file
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("{name}:{line}")
    }

    fn name_from_source(
        &mut self,
        file: &Path,
        comp_dir: Option<PathBuf>,
        line: u32,
    ) -> Option<Result<HeapName, ()>> {
        let site = Self::display_site(file, line);
        let src = self.source(file, comp_dir.as_deref())?;
        match src.allocation_target(line) {
            AllocTarget::Named {
                name, size_expr, ..
            } => {
                let size = size_expr.as_deref().and_then(|e| src.eval_size_at(e, line));
                let elem = size
                    .as_ref()
                    .and_then(|s| s.elem_bytes)
                    .filter(|b| *b > 0 && *b <= u32::MAX as i64)
                    .unwrap_or(0) as u32;
                // Dimensions only when every factor is a compile-time constant.
                let dims = size
                    .map(|s| {
                        s.factors
                            .iter()
                            .map(|f| f.filter(|v| *v > 0).map(|v| v as u64))
                            .collect::<Option<Vec<u64>>>()
                            .unwrap_or_default()
                    })
                    .unwrap_or_default();
                Some(Ok(HeapName {
                    name,
                    site,
                    elem_size: elem,
                    dims,
                    quality: NameQuality::Exact,
                }))
            }
            AllocTarget::Returned => Some(Err(())),
            AllocTarget::Unknown(_) => None,
        }
    }
}

impl Namer for ProgramNamer {
    fn on_map(&mut self, m: &Mapping) {
        let idx = match self.by_path.get(&m.path) {
            Some(&i) => i,
            None => {
                let i = self.objects.len();
                self.objects.push(Object {
                    path: PathBuf::from(&m.path),
                    bias: None,
                    lo: m.start,
                    hi: m.start + m.len,
                    sym: None,
                    vars: None,
                    loaded: false,
                    system: is_system(&m.path),
                });
                self.by_path.insert(m.path.clone(), i);
                i
            }
        };
        let o = &mut self.objects[idx];
        o.lo = o.lo.min(m.start);
        // The object's memory image extends past its last file mapping
        // (.bss): allow 16 MiB past the end of what is mapped from the file.
        o.hi = o.hi.max(m.start + m.len + (16 << 20));
        if m.offset == 0 && o.bias.is_none() {
            o.bias = Some(m.start);
        }
        if o.bias.is_none() {
            // Fixed-address executables start their first segment at their
            // link address.
            o.bias = Some(0);
        }
    }

    fn heap_name(&mut self, stack: &[u64]) -> HeapName {
        let mut first_site: Option<String> = None;
        let mut first_fn: Option<String> = None;
        for &ra in stack {
            let Some((i, fa)) = self.object_at(ra) else {
                continue;
            };
            if self.objects[i].system {
                continue;
            }
            let Some(sym) = self.objects[i].sym.as_ref() else {
                continue;
            };
            if first_fn.is_none() {
                first_fn = sym.function_name(fa.wrapping_sub(1));
            }
            let Some(loc) = sym.locate_return_address(fa) else {
                continue;
            };
            let comp = sym.comp_dirs().first().cloned();
            let site = Self::display_site(&loc.file, loc.line);
            if first_site.is_none() {
                first_site = Some(site.clone());
            }
            match self.name_from_source(&loc.file, comp, loc.line) {
                Some(Ok(n)) => return n,
                Some(Err(())) => continue, // returned: the caller names it
                None => break,
            }
        }
        if let Some(site) = first_site {
            return HeapName::at_site(site);
        }
        HeapName::fallback(
            first_fn.unwrap_or_else(|| "heap".into()),
            "?".into(),
            "compile the program with -g",
        )
    }

    fn heap_name_at(&mut self, file: &str, line: u32) -> HeapName {
        match self.name_from_source(Path::new(file), None, line) {
            Some(Ok(n)) => n,
            _ => HeapName::at_site(format!("{file}:{line}")),
        }
    }

    fn stack_name(
        &mut self,
        ip: u64,
        sp: u64,
        fp: u64,
        addr: u64,
        frames: &[(u64, u64, u64)],
    ) -> Option<VarName> {
        let (i, fip) = self.object_at(ip)?;
        let vars = self.objects[i].vars.as_ref()?;
        let cfa = vars.cfa_with_fp(fip, sp, fp)?;
        if addr < cfa {
            return name_in_frame(vars, fip, cfa, addr, sp);
        }
        // A caller's frame: walk the call stack recorded at GL_START.
        for &(rip, rsp, rfp) in frames.iter().skip(1) {
            let Some((j, fa)) = self.object_at(rip) else {
                continue;
            };
            let Some(v) = self.objects[j].vars.as_ref() else {
                continue;
            };
            let fa = fa.wrapping_sub(1);
            let Some(c) = v.cfa_with_fp(fa, rsp, rfp) else {
                continue;
            };
            if addr >= rsp && addr < c {
                return name_in_frame(v, fa, c, addr, rsp);
            }
        }
        None
    }

    fn global_name(&mut self, addr: u64) -> Option<VarName> {
        let (i, fa) = self.object_at(addr)?;
        let vars = self.objects[i].vars.as_ref()?;
        let (v, off) = vars.global_at(fa)?;
        let shape = vars.array_shape(v);
        Some(VarName {
            name: v.name.clone(),
            element: vars.element_name(v, off),
            base: addr - off,
            size: v.size,
            elem_size: shape.as_ref().map(|s| s.1 as u32).unwrap_or(0),
            dims: shape.map(|s| s.0).unwrap_or_default(),
            scope: Scope::Global,
            client_request: false,
        })
    }

    fn source_line(&mut self, ip: u64) -> Option<String> {
        let (i, fa) = self.object_at(ip)?;
        let loc = self.objects[i].sym.as_ref()?.locate(fa)?;
        Some(Self::display_site(&loc.file, loc.line))
    }

    fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes).into_iter().collect()
    }
}

fn name_in_frame(vars: &DebugVars, ip: u64, cfa: u64, addr: u64, sp: u64) -> Option<VarName> {
    if let Some((v, off)) = vars.local_at(ip, cfa, addr) {
        let shape = vars.array_shape(v);
        let base = match v.location {
            VarLocation::FrameOffset(o) => cfa.wrapping_add(o as u64),
            _ => addr - off,
        };
        return Some(VarName {
            name: v.name.clone(),
            element: vars.element_name(v, off),
            base,
            size: v.size,
            elem_size: shape.as_ref().map(|s| s.1 as u32).unwrap_or(0),
            dims: shape.map(|s| s.0).unwrap_or_default(),
            scope: Scope::Stack,
            client_request: v.is_client_request(),
        });
    }
    // Frame traffic: return address, saved registers, spills.
    let func = vars
        .function_at(ip)
        .map(|f| f.name.clone())
        .unwrap_or_else(|| "?".into());
    let what = match vars.classify_frame_slot(ip, cfa, addr) {
        Some(FrameSlot::ReturnAddress) => "return address",
        Some(FrameSlot::SavedRegister { .. }) => "saved register",
        _ => "spill",
    };
    let _ = sp;
    Some(VarName {
        name: format!("<{func} frame>"),
        element: format!("<{func} frame> {what}"),
        base: cfa,
        size: 0,
        elem_size: 0,
        dims: vec![],
        scope: Scope::Stack,
        client_request: false,
    })
}
