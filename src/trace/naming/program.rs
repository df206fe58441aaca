//! [`ProgramNamer`]: names addresses of a traced program from its load map,
//! its DWARF (gimli via [`super::dwarf`]), its line tables (addr2line via
//! [`super::symbolize`]) and its C sources (tree-sitter-c via
//! [`super::csource`]).
//!
//! Every object (executable, shared library) is opened at most once, when an
//! address first falls in it; every source file is parsed at most once. The
//! analysis caches answers per call stack and instruction on top of that.
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::cmacro::{CondReport, MacroTable};
use super::csource::{AllocTarget, CSource};
use super::dwarf::{DebugVars, ElementPath, Frame, FrameSlot, NotLocated, TypeId, Variable};
use super::namer::{
    HeapName, NameQuality, Namer, RegHolder, RegSource, Scope, VarName, CALLEE_SAVED,
};
use super::symbolize::{SourceFinder, Symbolizer};
use crate::trace::record::{Mapping, PINS_FILE, PINS_HEADER};

mod stackblocks;

/// One mapped object and what we learned about it.
struct Object {
    path: PathBuf,
    /// Runtime start of the object's first mapping, and how runtime
    /// addresses translate: file address = runtime - bias.
    bias: Option<u64>,
    /// The mapping of the object's file offset 0 (runtime start), from
    /// which [`ProgramNamer::ensure_loaded`] computes the bias with the
    /// object's own segments: a PIE's first segment is at address 0, a
    /// non-PIE executable's at its link address (0x400000), so the start
    /// alone is the bias of the first only.
    first_map: Option<u64>,
    /// One past the object's highest loaded address (file address: its
    /// segments' end, `.bss` included); addresses past it are not its
    /// static data (a static executable's heap follows it).
    image_end: Option<u64>,
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
    /// Parsed sources by path and language (a header is parsed as C++
    /// when a C++ function's frame led to it).
    sources: HashMap<(PathBuf, bool), Option<CSource>>,
    notes: BTreeSet<String>,
    exe: Option<PathBuf>,
    /// Per parsed source: the quoted headers it includes that were not
    /// found, for the note on a block that could not be named.
    missing_headers: HashMap<PathBuf, Vec<String>>,
    /// Structure types of heap blocks by the name the source gives them:
    /// (object, type), found once per name.
    heap_types: HashMap<String, Option<(usize, TypeId)>>,
    /// The function the first statement of a walk that stores a block
    /// called (`malloc`, `mmap`, `xmalloc`), set while unset:
    /// [`Namer::mapped_name`] clears it and accepts only names whose walk
    /// started at a call of `mmap`.
    first_alloc_fn: Option<String>,
}

/// Whether a mapped file is the system's (a library under `/lib` or
/// `/usr/lib`, or Valgrind's own), not the program's.
pub(crate) fn is_system(path: &str) -> bool {
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
            missing_headers: HashMap::new(),
            heap_types: HashMap::new(),
            first_alloc_fn: None,
        }
    }

    /// The object containing runtime address `a`, and `a` as a file address:
    /// the one whose file mappings span `a` (the one starting nearest below
    /// `a` when spans overlap), else the one whose image reaches past its
    /// file mappings to `a` ([`Self::past_file_maps`]).
    fn object_at(&mut self, a: u64) -> Option<(usize, u64)> {
        let inside = (self.objects.iter().enumerate())
            .filter(|(_, o)| a >= o.lo && a < o.hi)
            .max_by_key(|(_, o)| o.lo)
            .map(|(i, _)| i);
        let i = match inside {
            Some(i) => i,
            None => return self.past_file_maps(a),
        };
        self.ensure_loaded(i);
        let o = &self.objects[i];
        Some((i, a.wrapping_sub(o.bias?)))
    }

    /// The object whose image holds `a` past every mapping of its file: the
    /// tail of a large `.bss`, which the loader maps as anonymous memory
    /// after the file's last page (a 32 MB `static double Y[2000][2000]`).
    /// Only the object mapped nearest below `a` can, and only when its
    /// segments' end reaches `a`; the heap that follows an executable's
    /// image stays outside it.
    fn past_file_maps(&mut self, a: u64) -> Option<(usize, u64)> {
        let i = (self.objects.iter().enumerate())
            .filter(|(_, o)| o.hi <= a)
            .max_by_key(|(_, o)| o.hi)
            .map(|(i, _)| i)?;
        self.ensure_loaded(i);
        let o = &self.objects[i];
        let fa = a.wrapping_sub(o.bias?);
        (fa < o.image_end?).then_some((i, fa))
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
            Ok(s) => {
                let o = &mut self.objects[i];
                if let Some(start) = o.first_map {
                    let fa = super::symbolize::file_address(s.segments(), start, 0, start);
                    if let Some(fa) = fa.filter(|fa| *fa <= start) {
                        o.bias = Some(start - fa);
                    }
                }
                o.image_end = s.segments().iter().map(|g| g.vaddr + g.mem_size).max();
                o.sym = Some(s);
            }
            Err(e) => {
                if !self.objects[i].system {
                    self.notes.insert(e.to_string());
                }
            }
        }
        if self.is_executable(i) && is_static_executable(&path) {
            self.notes.insert(format!(
                "{} is statically linked: Valgrind cannot replace the malloc linked into it, so its \
                 heap blocks were not recorded and accesses to them are named <unrecorded memory>. \
                 Link it dynamically (without -static) to have them named.",
                path.display()
            ));
        }
        if !self.objects[i].system {
            match DebugVars::load(&path) {
                Ok(v) => self.objects[i].vars = Some(v),
                // The program itself without -g: load_exe said so, once
                // (see `crate::trace::record::debug_warning`); a library is named here.
                Err(super::dwarf::DwarfError::NoDebugInfo { .. }) if self.is_executable(i) => {}
                Err(e) => {
                    self.notes.insert(e.to_string());
                }
            }
        }
    }

    /// The parsed source `path`. A file whose extension says C or C++ is
    /// parsed as that; another (a header `.h`, Eigen's extensionless
    /// `Eigen/Core`) as C++ when `cpp` says a C++ function's frame led to
    /// it, else as C.
    fn source(&mut self, path: &Path, comp_dir: Option<&Path>, cpp: bool) -> Option<&CSource> {
        let found = self.finder.find(path, comp_dir);
        if let Some(note) = self.finder.walk_note() {
            self.notes.insert(note);
        }
        let key = found.clone().unwrap_or_else(|| path.to_path_buf());
        let cpp = cpp && !has_source_extension(&key);
        let skey = (key.clone(), cpp);
        if !self.sources.contains_key(&skey) {
            let read = found.as_deref().map(read_source);
            if let Some(Err(why)) = &read {
                self.notes.insert(format!(
                    "the source {} {why}, so heap blocks allocated there are named file.c:LINE: \
                     set_src_path DIR (the folder holding the C or C++ source it was compiled \
                     from) gives them their variable names.",
                    found.as_deref().unwrap_or(path).display()
                ));
            }
            let parsed = found
                .as_ref()
                .zip(read.and_then(Result::ok))
                .map(|(f, text)| {
                    if cpp {
                        CSource::parse_cpp(text)
                    } else {
                        CSource::parse_for(f, text)
                    }
                });
            let parsed = match (parsed, found.as_deref()) {
                (Some(mut src), Some(at)) => {
                    let (macros, missing) = self.file_macros(at, &src);
                    src.set_macros(macros);
                    self.missing_headers.insert(key.clone(), missing);
                    Some(src)
                }
                (p, _) => p,
            };
            if parsed.is_none() && found.is_none() {
                self.notes.insert(format!(
                    "the source {} was not found, so heap blocks allocated there are named file.c:LINE: \
                     set_src_path DIR (the folder holding it) gives them their variable names.",
                    path.display()
                ));
            }
            self.sources.insert(skey.clone(), parsed);
        }
        self.sources.get(&skey).and_then(|s| s.as_ref())
    }

    /// The macros visible at the end of `src` (found at `at`): its
    /// directives run in order ([`MacroTable::run`]) from the compiler's
    /// predefined and command-line macros, following the headers it
    /// includes: quoted includes are looked for beside the including file
    /// first, then (like angle includes) under the set_src_path folders;
    /// headers outside them (the system's) are not read. Conditions that
    /// could not be decided are noted once per file. Also returns the quoted
    /// headers that were not found.
    fn file_macros(&mut self, at: &Path, src: &CSource) -> (MacroTable, Vec<String>) {
        let (mut table, known) = self.predefined_macros(at, src.is_cpp());
        let mut missing = Vec::new();
        let mut report = CondReport::default();
        let finder = &self.finder;
        let mut read = 0usize;
        let mut include = |name: &str, quoted: bool, from: &Path| {
            let beside = from.parent().map(|d| d.join(name)).filter(|p| p.is_file());
            let found = beside.or_else(|| finder.find(Path::new(name), None));
            if found.is_none() && Path::new(name).file_name() == Some(PINS_FILE.as_ref()) {
                // The pins header where the program's folders do not hold
                // it (compile_exe puts it on the include path): mapvis's
                // own copy, so it is not reported missing.
                return Some((PathBuf::from(PINS_FILE), PINS_HEADER.to_string()));
            }
            let Some(found) = found else {
                if quoted && !missing.iter().any(|m| m == name) {
                    missing.push(name.to_string());
                }
                return None;
            };
            // Bounds the work on headers that include each other without
            // guards.
            read += 1;
            if read > 4096 {
                return None;
            }
            let text = read_source(&found).ok()?;
            Some((found, text))
        };
        table.run(at, src.text(), &mut include, &mut report);
        let file = Self::display_site(at, 0);
        let file = file.trim_end_matches(":0");
        if !report.undecided.is_empty() {
            self.notes.insert(format!(
                "the preprocessor conditions {} in the sources of {file} could not be evaluated: the \
                 branch after each was taken, so the macros it defines are the ones used to name \
                 heap blocks.",
                report.undecided.join(", ")
            ));
        }
        // Names reserved for the implementation (`__OPTIMIZE__`, `_WIN32`)
        // are the compiler's to define, not the command line's: once the
        // compiler said what it defines, the rest are truly not defined.
        // The pins header's own switch (`-DGL_NOPINS` empties the pins)
        // names nothing, so whether it was defined cannot change a name.
        let names: Vec<&str> = report
            .tested
            .iter()
            .map(String::as_str)
            .filter(|n| known == Predefined::Guessed || !is_reserved(n))
            .filter(|n| *n != "GL_NOPINS")
            .collect();
        if !names.is_empty() && known != Predefined::FromDwarf {
            self.notes.insert(format!(
                "the preprocessor conditions of {file} test {}, which no file read defines: they \
                 were taken as not defined. If the program was compiled with -D for them, compile \
                 it with -g3 as well, so that mapvis reads the command-line macros from its debug \
                 information.",
                names.join(", ")
            ));
        }
        (table, missing)
    }

    /// The macros defined before the first line of the source `at`: the
    /// compiler's built-in and command-line (`-D`) macros, read from the
    /// DWARF macro information of its compilation unit when the program
    /// was compiled with `-g3` (gcc leaves `-D` out of `DW_AT_producer`),
    /// and whether they were. Otherwise the built-in ones, asked of the
    /// compiler with the unit's standard and optimisation level
    /// ([`super::predef`]); without a compiler, a few that gcc defines on
    /// x86-64 Linux (`__STDC__`, `__linux__`, `__x86_64__`, `__LP64__`,
    /// and `__cplusplus` for C++).
    fn predefined_macros(&self, at: &Path, cpp: bool) -> (MacroTable, Predefined) {
        let mut table = MacroTable::default();
        let mut producer = None;
        // The objects loaded so far: the one whose frame led here is.
        for o in &self.objects {
            let Some(vars) = o.vars.as_ref() else {
                continue;
            };
            if let Some(defines) = vars.command_line_macros(at) {
                for d in defines {
                    table.define_text(d);
                }
                return (table, Predefined::FromDwarf);
            }
            producer = producer.or_else(|| vars.producer(at));
        }
        let opts = producer.map(|p| super::predef::options(p, cpp));
        if let Some(defines) = super::predef::compiler_macros(cpp, &opts.unwrap_or_default()) {
            for d in &defines {
                table.define_text(d);
            }
            return (table, Predefined::FromCompiler);
        }
        for (name, value) in [
            ("__STDC__", "1"),
            ("__linux__", "1"),
            ("__x86_64__", "1"),
            ("__LP64__", "1"),
        ] {
            table.define(name, value);
        }
        if cpp {
            table.define("__cplusplus", "201703L");
        }
        (table, Predefined::Guessed)
    }

    fn display_site(file: &Path, line: u32) -> String {
        let name = file
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("{name}:{line}")
    }

    /// Names the block allocated by the call at `file:line:column` from the
    /// statement there.
    fn name_from_source(
        &mut self,
        file: &Path,
        comp_dir: Option<PathBuf>,
        line: u32,
        column: u32,
        through_library: bool,
        cpp: bool,
    ) -> FromSource {
        let site = Self::display_site(file, line);
        let key = self.finder.find(file, comp_dir.as_deref());
        let Some(src) = self.source(file, comp_dir.as_deref(), cpp) else {
            return FromSource::Missing;
        };
        let (target, size) = src.resolve_allocation(line, column);
        let alloc_fn = match &target {
            AllocTarget::Named { alloc_fn, .. } => Some(alloc_fn.clone()),
            _ => None,
        };
        // A local that the function returns passes the question to the
        // caller even where the parser did not see the function (a
        // template whose declaration starts with a library's own macro,
        // `EIGEN_DEVICE_FUNC inline T* f(...)`).
        let target = match target {
            AllocTarget::Named { ref name, .. } if text_returns(src.text(), line, name) => {
                AllocTarget::Returned
            }
            t => t,
        };
        // A standard container's buffer: named after the container object
        // and said to come from the container's declaration, so that the
        // buffers it reallocates as it grows make one row.
        // On a line that declares several objects (`std::vector<double>
        // a(n), b(n);`) the container cannot be told from the line alone:
        // the block is named by its site rather than by a neighbour.
        let several = declares_several(src.text(), line);
        let container = match &target {
            AllocTarget::Unknown(_) if through_library && several => None,
            AllocTarget::Unknown(_) if through_library => src.container_target(line),
            // `std::vector<double> v = std::vector<double>(n, x);`: the
            // statement names `v`; its declaration gives the element type.
            AllocTarget::Named {
                name,
                elem_type: None,
                ..
            } if through_library => src.container_target(line).filter(|c| &c.name == name),
            _ => None,
        };
        let mut site = site;
        let (target, size) = match container {
            Some(c) => {
                if let Some(at) = c.declared_at {
                    site = Self::display_site(file, at);
                }
                let size = c
                    .elem_type
                    .as_ref()
                    .and_then(|t| src.eval_size(&format!("sizeof({t})")));
                let target = AllocTarget::Named {
                    name: c.name,
                    elem_type: c.elem_type,
                    alloc_fn: "new".into(),
                    size_expr: None,
                };
                (target, size)
            }
            None => (target, size),
        };
        if let Some(f) = alloc_fn {
            self.first_alloc_fn.get_or_insert(f);
        }
        match target {
            AllocTarget::Named {
                name, elem_type, ..
            } => {
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
                FromSource::Named(HeapName {
                    name,
                    site,
                    elem_size: elem,
                    dims,
                    inner_dims: elem_type.as_deref().map(array_dims).unwrap_or_default(),
                    elem_type: elem_type.unwrap_or_default(),
                    quality: NameQuality::Exact,
                })
            }
            AllocTarget::Returned => FromSource::Returned,
            AllocTarget::Unknown(why) => {
                let missing = key
                    .and_then(|k| self.missing_headers.get(&k))
                    .filter(|m| !m.is_empty());
                FromSource::Unknown(match missing {
                    Some(m) => format!(
                        "{why} (the headers {} it includes were not found: set_src_path the folder \
                         holding them if the allocation is written through one of their macros)",
                        m.join(", ")
                    ),
                    None => why,
                })
            }
        }
    }

    /// Whether object `i` is the traced executable (not a shared library).
    fn is_executable(&self, i: usize) -> bool {
        let o = &self.objects[i];
        match &self.exe {
            Some(exe) => o.path.file_name() == exe.file_name(),
            None => !o.system && self.objects.iter().position(|o| !o.system) == Some(i),
        }
    }
}

/// A demangled function name as the source writes it, without return
/// type and parameter list: `Grid::at(int, int)` gives `Grid::at`,
/// `double& std::vector<double>::emplace_back<double>(double&&)` gives
/// `std::vector<double>::emplace_back<double>`, `main` stays `main`.
pub(super) fn without_parameters(name: &str) -> String {
    let mut depth = 0i32;
    let mut start = 0;
    let mut end = name.len();
    for (k, c) in name.char_indices() {
        match c {
            '<' if !name[..k].ends_with("operator") => depth += 1,
            '>' if !name[..k].ends_with("operator") && !name[..k].ends_with('-') => depth -= 1,
            ' ' if depth == 0 && !name[..k].ends_with("operator") => start = k + 1,
            '(' if depth == 0 && k > 0 && !name[..k].ends_with("operator") => {
                end = k;
                break;
            }
            _ => {}
        }
    }
    let s = name[start.min(end)..end].trim();
    if s.is_empty() {
        name.to_string()
    } else {
        s.to_string()
    }
}

/// What [`Namer::heap_name`]'s walk learned so far.
#[derive(Default)]
struct Walk {
    /// The first frame's site in the user's sources, and in the executable.
    first_site: Option<String>,
    exe_site: Option<String>,
    /// A frame of the standard library's templates was passed.
    through_library: bool,
    /// The first system library on the stack, for blocks that a library
    /// allocated for itself (libstdc++'s exception pool).
    system_lib: Option<String>,
    /// The first user frame's function, for a program without lines.
    first_fn: Option<String>,
}

/// What one frame of the walk decided.
enum Step {
    /// Ask the caller.
    Next,
    /// The block's name.
    Named(HeapName),
    /// The statement at this site stores nothing: why.
    Stop(String, String),
}

/// Whether the function whose statement is on `line` (1-based) of `text`
/// returns the plain identifier `name` (`return name;`, `return
/// (T *)name;`), read from the text: from that line to the function's
/// end, the first `}` in column 0 (or 400 lines at most). Costs one pass
/// over those lines, once per allocation site.
fn text_returns(text: &str, line: u32, name: &str) -> bool {
    if !is_identifier(name) {
        return false;
    }
    // The name and the locals derived from it (`T *ptr = base + off;`,
    // as aligned-allocation helpers return an offset into the block).
    let mut names = vec![name.to_string()];
    for l in text.lines().skip(line as usize).take(400) {
        if l.starts_with('}') {
            return false;
        }
        if let Some(alias) = derived_local(l, &names) {
            names.push(alias);
        }
        if let Some(v) = returned_value(l) {
            if names
                .iter()
                .any(|n| &v == n || v.starts_with(&format!("{n} +")))
            {
                return true;
            }
        }
    }
    false
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// The value of a `return` statement on line `l`, without casts and
/// outer parentheses: `p` for `return (T *)p;`, `base + off` for
/// `return base + off;`.
fn returned_value(l: &str) -> Option<String> {
    let t = l.trim_start();
    let rest = t.strip_prefix("return")?;
    if !rest.starts_with(|c: char| c.is_whitespace() || c == '(') {
        return None;
    }
    let v = rest.split(';').next()?.trim();
    Some(strip_casts(v).to_string())
}

/// `(T *)x` and `(x)` as `x`; C++'s `static_cast<T *>(x)` as `x`.
fn strip_casts(mut v: &str) -> &str {
    loop {
        v = v.trim();
        if let Some(open) = v.find("_cast<").filter(|_| v.ends_with(')')) {
            if let Some(p) = v[open..].find(">(") {
                v = &v[open + p + 2..v.len() - 1];
                continue;
            }
        }
        if let Some(inner) = v.strip_prefix('(') {
            match inner.find(')') {
                // `(T *)x`: a cast.
                Some(close) if inner[..close].contains('*') || inner[..close].contains(' ') => {
                    v = &inner[close + 1..];
                    continue;
                }
                // `(x)`: parentheses around the whole value.
                Some(close) if close + 1 == inner.len() => {
                    v = &inner[..close];
                    continue;
                }
                _ => {}
            }
        }
        return v;
    }
}

/// The local that line `l` declares or assigns from one of `names` plus
/// or minus an offset: `ptr` for `xxh_u8* ptr = base + offset;`.
fn derived_local(l: &str, names: &[String]) -> Option<String> {
    let (lhs, rhs) = l.split_once('=')?;
    if rhs.starts_with('=') || lhs.ends_with(['!', '<', '>', '=']) {
        return None;
    }
    let rhs = strip_casts(rhs.trim().trim_end_matches(';'));
    let base = rhs.split(['+', '-']).next()?.trim();
    let base = strip_casts(base);
    if !names.iter().any(|n| n == base) {
        return None;
    }
    let target = lhs.trim().rsplit([' ', '*', '&']).next()?.trim();
    is_identifier(target).then(|| target.to_string())
}

/// Whether line `line` (1-based) of `text` lists several declarators or
/// expressions: a comma outside parentheses, brackets, braces and
/// template arguments.
fn declares_several(text: &str, line: u32) -> bool {
    let Some(l) = text.lines().nth((line as usize).saturating_sub(1)) else {
        return false;
    };
    let l = l.split("//").next().unwrap_or(l);
    let mut depth = 0i32;
    for c in l.chars() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth -= 1,
            ',' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// Whether a demangled function name is C++'s (`ns::f(int)`), so that a
/// header it is written in (`.h`) is read as C++. C functions demangle to
/// their plain names.
fn is_cpp_function(name: &str) -> bool {
    name.contains("::") || name.contains('(')
}

/// Whether the file's extension says which language it is: a C or C++
/// source, or a C++ header (`.h` and extensionless headers do not).
fn has_source_extension(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        matches!(
            e,
            "c" | "cpp" | "cc" | "cxx" | "c++" | "C" | "hpp" | "hh" | "hxx"
        )
    })
}

/// The text of the source file `path`, or why it cannot be used, as the
/// end of a sentence ("is not a text file: ..."). Only a regular file is
/// opened (a named pipe would make the analysis wait). A file holding NUL
/// bytes is not a C or C++ source (an object file, an executable, a
/// compressed file in its place); other bytes that are not UTF-8 (a
/// Latin-1 comment) are read as U+FFFD, which leaves the code's tokens as
/// they are. Cost: one read of the file.
fn read_source(path: &Path) -> Result<String, String> {
    let mut bytes = Vec::new();
    crate::workdir::open_regular(path)
        .and_then(|mut f| std::io::Read::read_to_end(&mut f, &mut bytes))
        .map_err(|e| format!("cannot be read ({e})"))?;
    if bytes.contains(&0) {
        return Err(
            "is not a text file (it holds NUL bytes, as an object file or executable does), not the C or C++ source the program was compiled from"
                .into(),
        );
    }
    Ok(match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// What the statement at an allocation's call site says about the block.
enum FromSource {
    /// Named by the statement.
    Named(HeapName),
    /// The enclosing function returns the block: its caller names it.
    Returned,
    /// The statement does not say; why, for the note.
    Unknown(String),
    /// The source file was not found.
    Missing,
}

/// Where the macros defined before a source's first line came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Predefined {
    /// The unit's DWARF macro information (`-g3`): built-in and `-D`.
    FromDwarf,
    /// The compiler, asked: the built-in ones only.
    FromCompiler,
    /// A few that gcc defines, with no compiler to ask.
    Guessed,
}

/// Whether a macro name is reserved for the implementation (C11 7.1.3): it
/// begins with two underscores, or an underscore and a capital letter.
fn is_reserved(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 2 && b[0] == b'_' && (b[1] == b'_' || b[1].is_ascii_uppercase())
}

/// The array dimensions of a rendered pointee type: `[5]` for `"double
/// [5]"`, `[3, 4]` for `"float [3][4]"`; empty for anything else.
fn array_dims(elem_type: &str) -> Vec<u64> {
    let Some(open) = elem_type.find('[') else {
        return vec![];
    };
    if elem_type[..open].contains('(') {
        return vec![];
    }
    elem_type[open..]
        .split(']')
        .filter(|p| !p.trim().is_empty())
        .map(|p| p.trim().trim_start_matches('[').trim().parse::<u64>().ok())
        .collect::<Option<Vec<u64>>>()
        .filter(|d| d.iter().all(|x| *x > 0))
        .unwrap_or_default()
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
                    first_map: None,
                    image_end: None,
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
        // What lies past the last file mapping (a large `.bss`) is the
        // object's as far as its image goes: see `past_file_maps`.
        o.hi = o.hi.max(m.start + m.len);
        if m.offset == 0 && o.bias.is_none() {
            o.bias = Some(m.start);
            o.first_map = Some(m.start);
        }
        if o.bias.is_none() {
            // Fixed-address executables start their first segment at their
            // link address.
            o.bias = Some(0);
        }
    }

    /// Walks the allocation's call stack from the allocator outward, and at
    /// each return address through the functions inlined there, innermost
    /// first (at -O2 `std::allocator` is inlined into `vector`'s
    /// constructor, inlined into the user's function; with -flto a helper
    /// of another file is inlined into its caller): frames in system objects
    /// are skipped, frames whose function returns the block and frames
    /// whose source is missing (a library's) pass the question to their
    /// caller, and the first statement that stores the block names it.
    /// Otherwise the block is named after the first frame in the user's own
    /// sources (`kernel.c:121`, not a library's line), and a note says why,
    /// once per site.
    fn heap_name(&mut self, stack: &[u64]) -> HeapName {
        let mut walk = Walk::default();
        let mut stopped: Option<(String, String)> = None;
        'stack: for &ra in stack {
            let Some((i, fa)) = self.object_at(ra) else {
                continue;
            };
            if self.objects[i].system {
                if walk.system_lib.is_none()
                    && !self.objects[i].path.to_string_lossy().contains("vgpreload")
                {
                    walk.system_lib = self.objects[i]
                        .path
                        .file_name()
                        .map(|f| f.to_string_lossy().into_owned());
                }
                continue;
            }
            let Some(sym) = self.objects[i].sym.as_ref() else {
                continue;
            };
            // The call instruction, inside the call's own line.
            let call = fa.wrapping_sub(1);
            let frames = sym.frames(call);
            if walk.first_fn.is_none() {
                walk.first_fn = frames
                    .last()
                    .and_then(|(l, _)| l.function.clone())
                    .or_else(|| sym.function_name(call));
            }
            let comp = sym.comp_dirs().first().cloned();
            let exe = self.is_executable(i);
            for (loc, _) in frames {
                if loc.line == 0 || loc.file.as_os_str().is_empty() {
                    continue;
                }
                match self.heap_step(&mut walk, &loc, comp.clone(), exe) {
                    Step::Next => {}
                    Step::Named(n) => return n,
                    Step::Stop(site, why) => {
                        stopped = Some((site, why));
                        break 'stack;
                    }
                }
            }
        }
        self.heap_fallback(walk, stopped)
    }

    fn stack_block_name(&mut self, ip: u64) -> Option<HeapName> {
        self.name_stack_block(ip)
    }

    fn mapped_name(&mut self, stack: &[u64]) -> Option<HeapName> {
        self.name_mapping(stack)
    }

    fn heap_name_at(&mut self, file: &str, line: u32) -> HeapName {
        match self.name_from_source(Path::new(file), None, line, 0, false, false) {
            FromSource::Named(n) => n,
            _ => HeapName::at_site(format!("{file}:{line}")),
        }
    }

    fn cfa_rule(&mut self, ip: u64) -> Option<(bool, i64)> {
        let (i, fip) = self.object_at(ip)?;
        self.objects[i].vars.as_ref()?.cfa_rule(fip)
    }

    /// The frame executing `ip` is searched first, over its whole extent:
    /// its locals, its parameters (including those the caller passed on
    /// the stack, above the CFA) and its frame slots. Addresses above it
    /// belong to the innermost live frame of `frames` whose extent holds
    /// them (or to that frame's stack-passed parameters).
    fn stack_name(
        &mut self,
        ip: u64,
        sp: u64,
        fp: u64,
        addr: u64,
        frames: &[(u64, u64, u64)],
    ) -> Option<VarName> {
        let found = self.stack_name_raw(ip, sp, fp, addr, frames)?;
        let (obj, frame, mut v) = found;
        let fip = frame.ip;
        if v.frame_slot {
            // Frames read in source form: `Grid::at`, not `at` or `_ZN4Grid2atEii`.
            let demangled = self.objects[obj]
                .sym
                .as_ref()
                .and_then(|s| s.function_name(fip))
                .filter(|f| !f.starts_with("_Z"));
            // A name the demangler could not read: DWARF's own name.
            let dwarf = || {
                let vars = self.objects[obj].vars.as_ref()?;
                vars.function_at(fip).map(|f| f.name.clone())
            };
            if let Some(f) = demangled.or_else(dwarf) {
                let f = without_parameters(&f);
                let what = v
                    .element
                    .rsplit_once("> ")
                    .map(|p| p.1.to_string())
                    .unwrap_or_default();
                v.name = format!("<{f} frame>");
                v.element = format!("<{f} frame> {what}");
                self.note_unlocated(obj, &frame, &v.name, &f);
            }
        }
        Some(v)
    }

    fn heap_element(
        &mut self,
        elem_type: &str,
        name: &str,
        size: u64,
        offset: u64,
    ) -> Option<ElementPath> {
        let (i, ty) = self.record_named(elem_type)?;
        let vars = self.objects[i].vars.as_ref()?;
        Some(vars.heap_element(name, ty, size, offset))
    }

    fn record_size(&mut self, type_name: &str) -> Option<u64> {
        let (i, ty) = self.record_named(type_name)?;
        Some(self.objects[i].vars.as_ref()?.type_size(ty))
    }

    fn register_holders(&mut self, frames: &[(u64, u64, u64)]) -> Vec<RegHolder> {
        let mut out = Vec::new();
        // Where the current frame's value of each register is.
        let mut source: BTreeMap<u16, RegSource> =
            (0..16).map(|r| (r, RegSource::Current(r))).collect();
        for (k, &(ip, sp, fp)) in frames.iter().enumerate() {
            if k > 0 {
                // A caller keeps only its callee-saved registers across a
                // call.
                source.retain(|r, _| CALLEE_SAVED.contains(r));
            }
            let Some((i, fip)) = self.object_at(ip) else {
                break;
            };
            let Some(vars) = self.objects[i].vars.as_ref() else {
                break;
            };
            let Some(frame) = vars.frame(fip, sp, fp) else {
                break;
            };
            let function = vars.function_at(fip).map(|f| f.name.clone());
            for (v, reg) in vars.register_locals_at(fip) {
                if let Some(&src) = source.get(&reg) {
                    out.push(RegHolder {
                        sp,
                        var: register_var(vars, v, function.clone().unwrap_or_default()),
                        source: src,
                    });
                }
            }
            for (reg, slot) in vars.saved_registers(&frame) {
                source.insert(reg, RegSource::Saved(slot));
            }
        }
        out
    }

    fn global_name(&mut self, addr: u64) -> Option<VarName> {
        self.global_name_raw(addr)
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

impl ProgramNamer {
    /// The object and DWARF type of the structure, union or class the
    /// program calls `name`, from the first object whose debug information
    /// has one of known size; memoised per name (a scan of the types).
    fn record_named(&mut self, name: &str) -> Option<(usize, TypeId)> {
        if let Some(f) = self.heap_types.get(name) {
            return *f;
        }
        let f = self.objects.iter().enumerate().find_map(|(i, o)| {
            let id = o.vars.as_ref()?.type_named(name)?;
            Some((i, id))
        });
        self.heap_types.insert(name.to_string(), f);
        f
    }

    /// One frame of [`Namer::heap_name`]'s walk: the call at `loc` (a real
    /// frame's or an inlined one's), in the executable when `exe`.
    fn heap_step(
        &mut self,
        walk: &mut Walk,
        loc: &super::symbolize::SourceLocation,
        comp: Option<PathBuf>,
        exe: bool,
    ) -> Step {
        if super::dwarf::is_library_source(&loc.file) {
            // The standard library's templates, compiled into the
            // program: the user's frame further out names the block.
            walk.through_library = true;
            return Step::Next;
        }
        let site = Self::display_site(&loc.file, loc.line);
        walk.first_site.get_or_insert_with(|| site.clone());
        if exe {
            walk.exe_site.get_or_insert_with(|| site.clone());
        }
        let cpp = loc.function.as_deref().is_some_and(is_cpp_function);
        match self.name_from_source(
            &loc.file,
            comp,
            loc.line,
            loc.column,
            walk.through_library,
            cpp,
        ) {
            FromSource::Named(n) => Step::Named(n),
            FromSource::Returned | FromSource::Missing => Step::Next,
            FromSource::Unknown(why) => {
                // libc allocated the block inside a call it was given
                // (printf's stdout buffer, fopen's FILE): the line stores
                // nothing, and no header is to blame.
                if let Some(lib) = walk
                    .system_lib
                    .as_ref()
                    .filter(|l| l.starts_with("libc.so"))
                {
                    self.notes.insert(format!(
                        "heap blocks that {lib} allocated for itself inside the call at {site} \
                         (a stdio buffer, a FILE) are named <{lib} block>: the program never \
                         stores them."
                    ));
                    return Step::Named(HeapName::fallback(
                        format!("<{lib} block>"),
                        site,
                        "nothing: the library allocated it for itself",
                    ));
                }
                Step::Stop(site, why)
            }
        }
    }

    /// The name of a block that no statement named: its allocation site
    /// with a note saying why, else the library that allocated it for
    /// itself, else its function (a program without debug information).
    fn heap_fallback(&mut self, walk: Walk, stopped: Option<(String, String)>) -> HeapName {
        let site = match stopped {
            Some((site, why)) => {
                self.notes.insert(format!(
                    "heap blocks allocated at {site} are named {site}: {why}."
                ));
                Some(site)
            }
            None => {
                let site = walk.exe_site.or(walk.first_site);
                if let Some(site) = &site {
                    self.notes.insert(format!(
                        "heap blocks allocated at {site} are named {site}: the source of no frame of \
                         their allocation stack was found (set_src_path DIR names the folder holding it)."
                    ));
                }
                site
            }
        };
        if let Some(site) = site {
            return HeapName::at_site(site);
        }
        if walk.first_fn.is_none() {
            if let Some(lib) = walk.system_lib {
                return HeapName::fallback(
                    format!("<{lib} block>"),
                    "?".into(),
                    "nothing: the library allocated it for itself",
                );
            }
        }
        HeapName::fallback(
            walk.first_fn.unwrap_or_else(|| "heap".into()),
            "?".into(),
            "compile the program with -g",
        )
    }

    /// [`Namer::stack_name`] with the object and the frame that holds the
    /// answer.
    fn stack_name_raw(
        &mut self,
        ip: u64,
        sp: u64,
        fp: u64,
        addr: u64,
        frames: &[(u64, u64, u64)],
    ) -> Option<(usize, Frame, VarName)> {
        let (i, fip) = self.object_at(ip)?;
        let here = self.objects[i]
            .vars
            .as_ref()
            .and_then(|vars| Some((vars, vars.frame(fip, sp, fp)?)));
        // Code without our debug information (libc's memset, libstdc++'s
        // copies) writes into its callers' variables: search the live frames
        // above its stack pointer, naming only their variables. Its own
        // frame, below its caller's stack pointer, stays unnamed (unless it
        // has our debug information, below).
        let (top, own_frame) = match here {
            Some((vars, frame)) => {
                if addr < frame.top || vars.local_in(&frame, addr).is_some() {
                    return name_in_frame(vars, &frame, addr).map(|v| (i, frame, v));
                }
                (frame.top, true)
            }
            None => (sp, false),
        };
        // A function with our debug information whose unwind rule cannot be
        // evaluated here (the prologue of a realigned frame computes its CFA
        // in r10, which the trace does not record): its own frame, below its
        // caller's stack pointer, is its frame row.
        let unknown_rule = here.is_none()
            && self.objects[i]
                .vars
                .as_ref()
                .is_some_and(|v| v.function_at(fip).is_some());
        for &(rip, rsp, rfp) in frames.iter().rev() {
            let Some((j, fa)) = self.object_at(rip) else {
                continue;
            };
            let Some(v) = self.objects[j].vars.as_ref() else {
                continue;
            };
            let Some(frame) = v.frame(fa, rsp, rfp) else {
                continue;
            };
            let c = frame.top;
            if c <= top {
                continue;
            }
            let local = v.local_in(&frame, addr).is_some();
            if local || (addr < c && (own_frame || addr >= rsp)) {
                return name_in_frame(v, &frame, addr).map(|n| (j, frame, n));
            }
            if addr < c {
                if unknown_rule {
                    let vars = self.objects[i].vars.as_ref()?;
                    let own = Frame {
                        ip: fip,
                        sp,
                        fp,
                        cfa: None,
                        top: rsp,
                    };
                    return frame_row(vars, &own, addr).map(|n| (i, own, n));
                }
                return None;
            }
        }
        None
    }

    /// Says, once per function, which of `frame`'s locals cannot be
    /// located from the trace and why, when its frame row `row` (`<f
    /// frame>`) gets bytes: those locals' accesses count there, or in a
    /// caller's row for stack arguments, never under another name. Only
    /// where the unwind rules place the frame (not in a prologue whose rule
    /// is unknown, where the CFA is not known to be kept in memory).
    fn note_unlocated(&mut self, obj: usize, frame: &Frame, row: &str, function: &str) {
        let Some(vars) = self.objects[obj].vars.as_ref() else {
            return;
        };
        let Some(frame) = vars.frame(frame.ip, frame.sp, frame.fp) else {
            return;
        };
        let mut by_reason: BTreeMap<String, (Vec<String>, bool)> = BTreeMap::new();
        for (v, why) in vars.unlocated_in(&frame) {
            let entry = by_reason.entry(why.reason()).or_default();
            if !entry.0.contains(&v.name) {
                entry.0.push(v.name.clone());
            }
            entry.1 |= why == NotLocated::StoredCfa;
        }
        for (reason, (names, stack_args)) in by_reason {
            let (is, its) = if names.len() == 1 {
                ("is", "its")
            } else {
                ("are", "their")
            };
            let counted = if stack_args {
                "the caller's frame row"
            } else {
                row
            };
            let list = match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
                _ => names.join(""),
            };
            self.notes.insert(format!(
                "in function {function}, {list} {is} {reason}: {its} accesses count in {counted}."
            ));
        }
    }

    fn global_name_raw(&mut self, addr: u64) -> Option<VarName> {
        let Some((i, fa)) = self.object_at(addr) else {
            return Some(self.unrecorded());
        };
        if self.objects[i].image_end.is_some_and(|end| fa >= end) {
            return Some(self.unrecorded());
        }
        let vars = self.objects[i].vars.as_ref()?;
        let (v, off) = vars.global_at(fa)?;
        let shape = vars.array_shape(v);
        let (element, pointee) = vars.element_and_pointee(v, off);
        Some(VarName {
            name: v.name.clone(),
            element: element.path,
            internal_at: element.internal_at,
            base: addr - off,
            size: v.size,
            elem_size: shape.as_ref().map(|s| s.1 as u32).unwrap_or(0),
            dims: shape.map(|s| s.0).unwrap_or_default(),
            scope: Scope::Global,
            client_request: false,
            frame_slot: false,
            function: String::new(),
            pointee: pointee.unwrap_or_default(),
        })
    }
}

impl ProgramNamer {
    /// The one row of memory that is neither the stack, a recorded heap
    /// block nor an object's static data: anonymous mappings (`mmap`), a
    /// static executable's heap, the loader's thread-local blocks. Never
    /// `<static data>`, which it is not; a note says what it is. Its scope
    /// stays G, as the analysis's catch-all for addresses off the stack.
    fn unrecorded(&mut self) -> VarName {
        self.notes.insert(
            "accesses to memory that is neither the stack, a recorded heap block nor an object's \
             static data (memory mapped with mmap, the heap of a statically linked program) are \
             named <unrecorded memory>."
                .into(),
        );
        VarName {
            name: "<unrecorded memory>".into(),
            element: "<unrecorded memory>".into(),
            base: 0,
            size: 0,
            elem_size: 0,
            dims: vec![],
            scope: Scope::Global,
            client_request: false,
            frame_slot: false,
            function: String::new(),
            pointee: String::new(),
            internal_at: None,
        }
    }
}

/// Whether the ELF file at `path` is an executable with no program
/// interpreter (linked with `-static`). Reads the file once.
fn is_static_executable(path: &Path) -> bool {
    use object::Object;
    let Ok(data) = std::fs::read(path) else {
        return false;
    };
    let Ok(elf) = object::File::parse(&*data) else {
        return false;
    };
    elf.kind() == object::ObjectKind::Executable && elf.section_by_name(".interp").is_none()
}

/// The variable or frame slot at `addr` in `frame`. Frame slots (return
/// address, saved registers, spills) are one row per function, `<NAME
/// frame>`, marked as frame slots.
fn name_in_frame(vars: &DebugVars, frame: &Frame, addr: u64) -> Option<VarName> {
    let ip = frame.ip;
    if let Some((v, off)) = vars.local_in(frame, addr) {
        let shape = vars.array_shape(v);
        let base = vars.local_base(frame, v).unwrap_or(addr - off);
        let (element, pointee) = vars.element_and_pointee(v, off);
        return Some(VarName {
            name: v.name.clone(),
            element: element.path,
            internal_at: element.internal_at,
            base,
            size: v.size,
            elem_size: shape.as_ref().map(|s| s.1 as u32).unwrap_or(0),
            dims: shape.map(|s| s.0).unwrap_or_default(),
            scope: Scope::Stack,
            client_request: v.is_client_request(),
            frame_slot: false,
            function: vars
                .function_at(ip)
                .map(|f| f.name.clone())
                .unwrap_or_default(),
            pointee: pointee.unwrap_or_default(),
        });
    }
    frame_row(vars, frame, addr)
}

/// A local that lives in a register, named as an access of its whole
/// would be (it has no address: `base` is 0).
fn register_var(vars: &DebugVars, v: &Variable, function: String) -> VarName {
    VarName {
        pointee: vars.element_and_pointee(v, 0).1.unwrap_or_default(),
        name: v.name.clone(),
        element: String::new(),
        base: 0,
        size: v.size,
        elem_size: 0,
        dims: Vec::new(),
        scope: Scope::Stack,
        client_request: v.is_client_request(),
        frame_slot: false,
        function,
        internal_at: None,
    }
}

/// The frame slot at `addr` in `frame` (return address, saved register or
/// spill), as its function's one row `<NAME frame>`; `None` at or above the
/// frame's top.
fn frame_row(vars: &DebugVars, frame: &Frame, addr: u64) -> Option<VarName> {
    let ip = frame.ip;
    let func = vars
        .function_at(ip)
        .map(|f| f.name.clone())
        .unwrap_or_else(|| "?".into());
    let what = match vars.frame_slot_in(frame, addr) {
        Some(FrameSlot::ReturnAddress) => "return address",
        Some(FrameSlot::SavedRegister { .. }) => "saved register",
        _ => "spill",
    };
    if addr >= frame.top {
        return None;
    }
    Some(VarName {
        name: format!("<{func} frame>"),
        element: format!("<{func} frame> {what}"),
        base: 0,
        size: 0,
        elem_size: 0,
        dims: vec![],
        scope: Scope::Stack,
        client_request: false,
        frame_slot: true,
        function: func,
        pointee: String::new(),
        internal_at: None,
    })
}
