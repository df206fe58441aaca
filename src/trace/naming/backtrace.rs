//! Symbolized backtraces of allocation sites: return addresses from a heap
//! profile or a trace, with the load map they ran under, to source frames
//! with inlined functions expanded (addr2line via [`super::symbolize`]).
//!
//! Each object is opened at most once, on the first address that falls in
//! it; each address is resolved at most once.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::symbolize::Symbolizer;
use crate::trace::record::Mapping;

/// One source frame of a backtrace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The runtime return address the frame came from.
    pub addr: u64,
    /// Function name (demangled), if known.
    pub function: Option<String>,
    /// Source file name (without its folder), if known.
    pub file: Option<String>,
    /// 1-based line, 0 when unknown.
    pub line: u32,
    /// True for a function inlined into the next frame.
    pub inlined: bool,
    /// The object (executable or library) file name.
    pub object: String,
}

impl Frame {
    /// `function (file:line)`, `function [inlined] (file:line)`, or the
    /// address and object when nothing better is known.
    pub fn display(&self) -> String {
        let f = self.function.as_deref().unwrap_or("??");
        let inl = if self.inlined { " [inlined]" } else { "" };
        match &self.file {
            Some(file) if self.line > 0 => format!("{f}{inl} ({file}:{})", self.line),
            _ if self.function.is_some() => format!("{f}{inl} ({})", self.object),
            _ => format!("{:#x} ({})", self.addr, self.object),
        }
    }
}

/// Resolves return addresses of one run. See the module documentation.
pub struct BacktraceSymbolizer {
    maps: Vec<Mapping>,
    exe: Option<PathBuf>,
    objects: HashMap<String, Option<Symbolizer>>,
    cache: HashMap<u64, Vec<Frame>>,
}

impl BacktraceSymbolizer {
    /// A symbolizer for a run with these file mappings; `exe` replaces the
    /// mapped executable when that path no longer exists (same file name).
    pub fn new(mut maps: Vec<Mapping>, exe: Option<&Path>) -> BacktraceSymbolizer {
        maps.sort_by_key(|m| m.start);
        BacktraceSymbolizer {
            maps,
            exe: exe.map(Path::to_path_buf),
            objects: HashMap::new(),
            cache: HashMap::new(),
        }
    }

    fn symbolizer(&mut self, path: &str) -> Option<&Symbolizer> {
        if !self.objects.contains_key(path) {
            let mut p = PathBuf::from(path);
            if !p.is_file() {
                if let Some(exe) = self.exe.as_ref().filter(|e| e.file_name() == p.file_name()) {
                    p = exe.clone();
                }
            }
            self.objects
                .insert(path.to_string(), Symbolizer::open(&p).ok());
        }
        self.objects.get(path).and_then(|s| s.as_ref())
    }

    /// The frames of one return address, innermost (inlined) first.
    pub fn frames(&mut self, ret: u64) -> Vec<Frame> {
        if let Some(f) = self.cache.get(&ret) {
            return f.clone();
        }
        let out = self.resolve(ret);
        self.cache.insert(ret, out.clone());
        out
    }

    fn resolve(&mut self, ret: u64) -> Vec<Frame> {
        let i = self.maps.partition_point(|m| m.start <= ret);
        let Some(m) = i
            .checked_sub(1)
            .map(|i| self.maps[i].clone())
            .filter(|m| ret < m.start + m.len)
        else {
            return vec![unknown(ret, UNMAPPED)];
        };
        let object = Path::new(&m.path)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(sym) = self.symbolizer(&m.path) else {
            return vec![unknown(ret, &object)];
        };
        // A return address points after the call: look up the call itself.
        let Some(fa) = sym.file_address(m.start, m.offset, ret.saturating_sub(1)) else {
            return vec![unknown(ret, &object)];
        };
        let frames = sym.frames(fa);
        if frames.is_empty() {
            let mut f = unknown(ret, &object);
            f.function = sym.function_name(fa);
            return vec![f];
        }
        frames
            .into_iter()
            .map(|(loc, inlined)| Frame {
                addr: ret,
                function: loc.function,
                file: loc
                    .file
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned()),
                line: loc.line,
                inlined,
                object: object.clone(),
            })
            .collect()
    }

    /// All frames of a stack of return addresses, innermost first, ending
    /// at the program's own root: `main`, or `start_thread` for a thread.
    ///
    /// What lies below the root is the C runtime's start-up
    /// (`__libc_start_call_main`, `_start`, often unsymbolized in a libc
    /// without its symbol table) and, after `_start`, words the unwinder
    /// read past the first frame (`0x37 (?)`): not frames of the program.
    /// Valgrind hides them the same way (`--show-below-main=no`). Trailing
    /// frames in no mapped object are dropped for the same reason when no
    /// root is found.
    pub fn backtrace(&mut self, stack: &[u64]) -> Vec<Frame> {
        let mut out = Vec::new();
        for &a in stack {
            let frames = self.frames(a);
            let root = frames.iter().position(is_root);
            match root {
                Some(i) => {
                    out.extend_from_slice(&frames[..=i]);
                    return out;
                }
                None => out.extend(frames),
            }
        }
        while out.last().is_some_and(|f| f.object == UNMAPPED) {
            out.pop();
        }
        out
    }
}

/// The object name of an address in no mapping.
const UNMAPPED: &str = "?";

/// Whether `f` is the outermost frame of the program's own code: `main`,
/// or the C library's thread entry, whose caller is `clone`.
fn is_root(f: &Frame) -> bool {
    matches!(f.function.as_deref(), Some("main" | "start_thread")) && !f.inlined
}

fn unknown(addr: u64, object: &str) -> Frame {
    Frame {
        addr,
        function: None,
        file: None,
        line: 0,
        inlined: false,
        object: object.to_string(),
    }
}
