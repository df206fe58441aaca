//! Address symbolization: runtime address -> object file address -> source
//! file, line and function.
//!
//! The trace records runtime addresses (allocation call sites, instruction
//! addresses) together with the mappings of every loaded object. Turning one
//! of them into a source location takes three steps:
//!
//! 1. [`file_address`] translates the runtime address into the object's own
//!    virtual address space, using the object's `PT_LOAD` segments and the
//!    mapping the address fell into (this works for PIE and non-PIE objects
//!    and for shared libraries alike).
//! 2. [`Symbolizer::locate`] (or [`Symbolizer::locate_return_address`] for
//!    return addresses) looks that address up in the DWARF line tables and
//!    function entries.
//! 3. [`SourceFinder`] finds the source file named by DWARF on this machine,
//!    so that the C statement can be parsed (see [`super::csource`]).

use std::cell::OnceCell;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, SymbolKind};

/// The gimli reader used for all DWARF data: the sections are copied out of
/// the file once and shared, so a [`Symbolizer`] owns everything it needs.
type Reader = gimli::EndianArcSlice<gimli::RunTimeEndian>;

/// Everything that can go wrong while opening an object for symbolization.
///
/// The messages are full sentences meant for the user: they name the file and
/// say what to do about the problem.
#[derive(Debug, thiserror::Error)]
pub enum SymbolizeError {
    /// The object file could not be read from disk.
    #[error("Could not read {path}: {source}. Check that the file exists and is readable.")]
    Io {
        /// The file we tried to read.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The file is not an object file the `object` crate understands.
    #[error(
        "{path} is not an object file we can read ({message}): pass an ELF executable or shared library."
    )]
    NotAnObject {
        /// The file we tried to parse.
        path: PathBuf,
        /// What the parser reported.
        message: String,
    },
    /// The DWARF sections exist but could not be parsed.
    #[error(
        "The debug information in {path} is malformed ({source}): rebuild the program with -g using a current compiler."
    )]
    BadDwarf {
        /// The object whose DWARF is broken.
        path: PathBuf,
        /// What gimli reported.
        source: gimli::Error,
    },
    /// The object has no DWARF at all; returned by
    /// [`Symbolizer::require_debug_info`].
    #[error("{path} has no debug information: compile it with -g.")]
    NoDebugInfo {
        /// The object without DWARF.
        path: PathBuf,
    },
}

/// One `PT_LOAD` program header of an object: the part of the file that the
/// loader maps, and where it lands in the object's virtual address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadSegment {
    /// Virtual address of the segment in the object (`p_vaddr`).
    pub vaddr: u64,
    /// Size of the segment in memory (`p_memsz`), at least `file_size`.
    pub mem_size: u64,
    /// Offset of the segment's first byte in the file (`p_offset`).
    pub file_offset: u64,
    /// Number of bytes the segment occupies in the file (`p_filesz`).
    pub file_size: u64,
}

/// The `PT_LOAD` segments of a parsed object, in program header order.
///
/// Cheap: it only walks the program headers. For a [`Symbolizer`], use
/// [`Symbolizer::segments`], which keeps the result.
pub fn load_segments(elf: &object::File<'_>) -> Vec<LoadSegment> {
    elf.segments()
        .map(|segment| {
            let (file_offset, file_size) = segment.file_range();
            LoadSegment {
                vaddr: segment.address(),
                mem_size: segment.size().max(file_size),
                file_offset,
                file_size,
            }
        })
        .collect()
}

/// Translates a runtime address into the object's virtual (file) address.
///
/// `map_start` and `map_offset` describe the mapping `runtime` fell into, as
/// `/proc/<pid>/maps` or the trace's mapping records give it: the mapping's
/// first runtime address and the file offset mapped there. The runtime
/// address is first turned into a file offset, `map_offset + (runtime -
/// map_start)`, and that offset is then placed in the `PT_LOAD` segment that
/// contains it. Only file offsets matter, so this works for position
/// dependent executables, PIE and shared libraries without knowing the load
/// bias.
///
/// Returns `None` when `runtime` is below `map_start` or its file offset lies
/// in no segment (for instance an address in the anonymous part of `.bss`).
pub fn file_address(
    segments: &[LoadSegment],
    map_start: u64,
    map_offset: u64,
    runtime: u64,
) -> Option<u64> {
    let offset = map_offset.checked_add(runtime.checked_sub(map_start)?)?;
    let in_file = segments
        .iter()
        .find(|s| offset >= s.file_offset && offset - s.file_offset < s.file_size);
    // Zero-fill tail of a data segment that shares the mapping's last page.
    let segment = in_file.or_else(|| {
        segments
            .iter()
            .find(|s| offset >= s.file_offset && offset - s.file_offset < s.mem_size)
    })?;
    segment.vaddr.checked_add(offset - segment.file_offset)
}

/// A source position found for an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLocation {
    /// The source file as DWARF names it, joined with the compilation
    /// directory when DWARF gives a relative name. The file need not exist on
    /// this machine; use [`SourceFinder`] to find it.
    pub file: PathBuf,
    /// 1-based line number; 0 when DWARF gives no line (compiler-generated
    /// code).
    pub line: u32,
    /// 1-based column, 0 when DWARF gives none (gcc usually does give it).
    pub column: u32,
    /// The innermost function containing the address, inlined functions
    /// included; from DWARF, else from the symbol table.
    pub function: Option<String>,
}

/// A function symbol from the ELF symbol tables, used when DWARF is missing.
#[derive(Debug, Clone)]
struct FunctionSymbol {
    address: u64,
    size: u64,
    name: String,
}

/// Symbolizer for one ELF object (executable or shared library).
///
/// Opening reads the whole file into memory and copies out its DWARF
/// sections; building a `Symbolizer` therefore costs one file read, and the
/// DWARF line tables and function entries are parsed lazily by `addr2line`
/// on first use (and kept). Build one per object and reuse it for all
/// addresses in that object.
///
/// All addresses taken by its methods are *file addresses* (the object's own
/// virtual addresses); translate runtime addresses with [`file_address`]
/// first.
///
/// A stripped object (a distribution's libc) takes the function symbols of
/// its separate debug file, found by build ID under `/usr/lib/debug`
/// (Debian's `libc6-dbg`, Fedora's debuginfo), so that its local functions
/// (`__libc_start_call_main`) are named; that file's DWARF is not read.
/// `.gnu_debuglink` paths, debuginfod and split DWARF (`.dwo`) are not
/// followed: such objects look like objects without DWARF.
///
/// A `Symbolizer` is `Send` but not `Sync` (the lazy DWARF caches are not
/// thread-safe): move it to a worker thread, or wrap it in a `Mutex`.
pub struct Symbolizer {
    path: PathBuf,
    context: Option<addr2line::Context<Reader>>,
    symbols: Vec<FunctionSymbol>,
    segments: Vec<LoadSegment>,
    comp_dirs: Vec<PathBuf>,
}

impl std::fmt::Debug for Symbolizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Symbolizer")
            .field("path", &self.path)
            .field("has_debug_info", &self.has_debug_info())
            .field("symbols", &self.symbols.len())
            .field("segments", &self.segments)
            .field("comp_dirs", &self.comp_dirs)
            .finish()
    }
}

/// A DWARF line-table location as a [`SourceLocation`]; `None` when it
/// names no file. Missing lines and columns read as 0.
fn source_location(
    location: &addr2line::Location<'_>,
    function: Option<String>,
) -> Option<SourceLocation> {
    Some(SourceLocation {
        file: PathBuf::from(location.file?),
        line: location.line.unwrap_or(0),
        column: location.column.unwrap_or(0),
        function,
    })
}

impl Symbolizer {
    /// Opens the object at `path`: reads it, collects its `PT_LOAD` segments,
    /// function symbols (`.symtab` and `.dynsym`) and DWARF sections, and the
    /// compilation directories of all units.
    ///
    /// An object without DWARF opens fine (see [`Self::has_debug_info`]);
    /// only function names from the symbol table are available then.
    pub fn open(path: &Path) -> Result<Self, SymbolizeError> {
        let data = std::fs::read(path).map_err(|source| SymbolizeError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let file = object::File::parse(&*data).map_err(|e| SymbolizeError::NotAnObject {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let segments = load_segments(&file);
        let mut symbols = function_symbols(&file);
        if file.symbol_table().is_none() {
            add_debug_file_symbols(&file, &mut symbols);
        }
        let bad_dwarf = |source| SymbolizeError::BadDwarf {
            path: path.to_path_buf(),
            source,
        };

        let has_dwarf = file
            .section_by_name(".debug_info")
            .is_some_and(|s| s.size() > 0);
        let (context, comp_dirs) = if has_dwarf {
            let endian = if file.is_little_endian() {
                gimli::RunTimeEndian::Little
            } else {
                gimli::RunTimeEndian::Big
            };
            let load = |id: gimli::SectionId| -> Result<Reader, gimli::Error> {
                let bytes: Arc<[u8]> = match file.section_by_name(id.name()) {
                    Some(section) => match section.uncompressed_data() {
                        Ok(bytes) => Arc::from(&*bytes),
                        Err(_) => return Err(gimli::Error::Io),
                    },
                    None => Arc::from(&[][..]),
                };
                Ok(gimli::EndianArcSlice::new(bytes, endian))
            };
            let dwarf = gimli::Dwarf::load(load).map_err(bad_dwarf)?;
            let comp_dirs = collect_comp_dirs(&dwarf).map_err(bad_dwarf)?;
            let context = addr2line::Context::from_dwarf(dwarf).map_err(bad_dwarf)?;
            (Some(context), comp_dirs)
        } else {
            (None, Vec::new())
        };
        Ok(Symbolizer {
            path: path.to_path_buf(),
            context,
            symbols,
            segments,
            comp_dirs,
        })
    }

    /// The path this symbolizer was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the object carries DWARF (`.debug_info`). Without it,
    /// [`Self::locate`] always returns `None` and [`Self::function_name`]
    /// falls back to the symbol table.
    pub fn has_debug_info(&self) -> bool {
        self.context.is_some()
    }

    /// `Ok(())` when the object has DWARF, else
    /// [`SymbolizeError::NoDebugInfo`], whose message tells the user to
    /// compile with `-g`.
    pub fn require_debug_info(&self) -> Result<(), SymbolizeError> {
        if self.has_debug_info() {
            Ok(())
        } else {
            Err(SymbolizeError::NoDebugInfo {
                path: self.path.clone(),
            })
        }
    }

    /// The object's `PT_LOAD` segments, for [`file_address`].
    pub fn segments(&self) -> &[LoadSegment] {
        &self.segments
    }

    /// [`file_address`] with this object's segments.
    pub fn file_address(&self, map_start: u64, map_offset: u64, runtime: u64) -> Option<u64> {
        file_address(&self.segments, map_start, map_offset, runtime)
    }

    /// The distinct `DW_AT_comp_dir` values of the object's compilation
    /// units, in unit order: the directories the compiler ran in, which is
    /// where relative source names are resolved.
    pub fn comp_dirs(&self) -> &[PathBuf] {
        &self.comp_dirs
    }

    /// The source location of the instruction at `file_addr`.
    ///
    /// When the address is inside inlined code, the location and function are
    /// those of the innermost inlined frame. Returns `None` without DWARF or
    /// when no line table covers the address.
    ///
    /// Do not pass a return address as it is: it points after the call
    /// instruction, possibly at the next statement's line. Use
    /// [`Self::locate_return_address`] for those.
    pub fn locate(&self, file_addr: u64) -> Option<SourceLocation> {
        let context = self.context.as_ref()?;
        let mut found: Option<SourceLocation> = None;
        if let Ok(mut frames) = context.find_frames(file_addr).skip_all_loads() {
            while let Ok(Some(frame)) = frames.next() {
                let function = frame
                    .function
                    .as_ref()
                    .and_then(|f| f.demangle().ok())
                    .map(|name| name.into_owned());
                if let Some(l) = frame
                    .location
                    .as_ref()
                    .and_then(|l| source_location(l, function))
                {
                    found = Some(l);
                    break;
                }
            }
        }
        if found.is_none() {
            if let Ok(Some(location)) = context.find_location(file_addr) {
                found = source_location(&location, None);
            }
        }
        let mut location = found?;
        if location.function.is_none() {
            location.function = self.symbol_name(file_addr).map(str::to_owned);
        }
        Some(location)
    }

    /// Every frame at `file_addr`, innermost first: the inlined functions
    /// (each with the line inside it) and then the function that contains
    /// them all. `inlined` is true for all but the last. Falls back to
    /// [`Self::locate`]'s single answer when DWARF has no frame information.
    pub fn frames(&self, file_addr: u64) -> Vec<(SourceLocation, bool)> {
        let mut out = Vec::new();
        if let Some(context) = self.context.as_ref() {
            if let Ok(mut frames) = context.find_frames(file_addr).skip_all_loads() {
                while let Ok(Some(frame)) = frames.next() {
                    let function = frame
                        .function
                        .as_ref()
                        .and_then(|f| f.demangle().ok())
                        .map(|name| name.into_owned());
                    let (file, line, column) = frame
                        .location
                        .as_ref()
                        .map(|l| {
                            (
                                l.file.map(PathBuf::from).unwrap_or_default(),
                                l.line.unwrap_or(0),
                                l.column.unwrap_or(0),
                            )
                        })
                        .unwrap_or_default();
                    out.push(SourceLocation {
                        file,
                        line,
                        column,
                        function,
                    });
                }
            }
        }
        if out.is_empty() {
            out.extend(self.locate(file_addr));
        }
        let n = out.len();
        out.into_iter()
            .enumerate()
            .map(|(i, l)| (l, i + 1 < n))
            .collect()
    }

    /// The source location of the call that pushed `return_addr`.
    ///
    /// A return address points at the instruction after the call, which may
    /// belong to the next line (or even the next function, for a call to a
    /// `noreturn` function at the end of a function). Looking up
    /// `return_addr - 1` lands inside the call instruction itself, so the
    /// line is the call's line. Returns `None` for address 0.
    pub fn locate_return_address(&self, return_addr: u64) -> Option<SourceLocation> {
        self.locate(return_addr.checked_sub(1)?)
    }

    /// The name of the function containing `file_addr`: the innermost
    /// (possibly inlined) function according to DWARF, else the ELF symbol
    /// table (`.symtab`, then `.dynsym`), so this also works for programs
    /// built without `-g` as long as they are not stripped.
    pub fn function_name(&self, file_addr: u64) -> Option<String> {
        if let Some(context) = self.context.as_ref() {
            if let Ok(mut frames) = context.find_frames(file_addr).skip_all_loads() {
                while let Ok(Some(frame)) = frames.next() {
                    if let Some(name) = frame.function.as_ref().and_then(|f| f.demangle().ok()) {
                        return Some(name.into_owned());
                    }
                }
            }
        }
        self.symbol_name(file_addr).map(str::to_owned)
    }

    /// Symbol-table lookup: the function symbol whose `[address, address +
    /// size)` contains `file_addr` (a size-0 symbol covers one address).
    /// Scans back over a few preceding symbols, so that a local label or
    /// alias starting inside a function does not hide the function.
    fn symbol_name(&self, file_addr: u64) -> Option<&str> {
        let index = self.symbols.partition_point(|s| s.address <= file_addr);
        self.symbols[..index]
            .iter()
            .rev()
            .take(16)
            .find(|s| file_addr - s.address < s.size.max(1))
            .map(|s| s.name.as_str())
    }
}

/// All defined function symbols, sorted by address, `.symtab` names
/// preferred over `.dynsym` duplicates.
fn function_symbols(file: &object::File<'_>) -> Vec<FunctionSymbol> {
    let mut symbols: Vec<FunctionSymbol> = file
        .symbols()
        .chain(file.dynamic_symbols())
        .filter(|s| s.kind() == SymbolKind::Text && s.is_definition() && s.address() != 0)
        .filter_map(|s| {
            let name = s.name().ok()?;
            if name.is_empty() {
                return None;
            }
            Some(FunctionSymbol {
                address: s.address(),
                size: s.size(),
                name: name.to_owned(),
            })
        })
        .collect();
    sort_symbols(&mut symbols);
    symbols
}

/// Orders symbols by address, the largest first at one address, without
/// repeats (`.symtab` and `.dynsym` name most functions twice).
fn sort_symbols(symbols: &mut Vec<FunctionSymbol>) {
    symbols.sort_by(|a, b| a.address.cmp(&b.address).then(b.size.cmp(&a.size)));
    symbols
        .dedup_by(|later, earlier| later.address == earlier.address && later.name == earlier.name);
}

/// The folder where distributions install debug files named by build ID.
const DEBUG_BUILD_ID_DIR: &str = "/usr/lib/debug/.build-id";

/// Adds the function symbols of `file`'s separate debug file, when one is
/// installed: `/usr/lib/debug/.build-id/ab/cdef....debug` for build ID
/// `abcdef...`. Its symbols carry the same file addresses as the stripped
/// object. Costs one read of the debug file (4 MB for glibc 2.36) per
/// object, once per symbolizer; a missing or unreadable file adds nothing.
fn add_debug_file_symbols(file: &object::File<'_>, symbols: &mut Vec<FunctionSymbol>) {
    let Ok(Some(id)) = file.build_id() else {
        return;
    };
    let Some((first, rest)) = id.split_first() else {
        return;
    };
    let hex: String = rest.iter().map(|b| format!("{b:02x}")).collect();
    let path = Path::new(DEBUG_BUILD_ID_DIR).join(format!("{first:02x}/{hex}.debug"));
    let Ok(data) = std::fs::read(&path) else {
        return;
    };
    let Ok(debug) = object::File::parse(&*data) else {
        return;
    };
    if debug.build_id().ok().flatten() != Some(id) {
        return;
    }
    // The object's own (exported) names stay: `printf`, not its alias
    // `_IO_printf`. The debug file adds the functions they do not name,
    // without symbol versions (`_IO_file_overflow@@GLIBC_2.2.5`).
    let named: std::collections::HashSet<u64> = symbols.iter().map(|s| s.address).collect();
    symbols.extend(
        function_symbols(&debug)
            .into_iter()
            .filter(|s| !named.contains(&s.address))
            .map(|mut s| {
                if let Some(at) = s.name.find('@') {
                    s.name.truncate(at);
                }
                s
            }),
    );
    sort_symbols(symbols);
}

/// The distinct compilation directories of all units, in unit order.
fn collect_comp_dirs(dwarf: &gimli::Dwarf<Reader>) -> Result<Vec<PathBuf>, gimli::Error> {
    use gimli::Reader as _;
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut headers = dwarf.units();
    while let Some(header) = headers.next()? {
        let unit = dwarf.unit(header)?;
        if let Some(dir) = unit.comp_dir.as_ref() {
            let dir = PathBuf::from(dir.to_string_lossy()?.into_owned());
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    Ok(dirs)
}

/// Finds the source file DWARF names, on this machine.
///
/// See [`SourceFinder::find`] for the search order. The first search that
/// needs the user's search directories walks them all once (recursively,
/// skipping hidden directories and not following symbolic links to
/// directories) and indexes every file by name; later searches only look the
/// name up. Walking a large tree is the expensive part, so keep one finder
/// per session.
#[derive(Debug)]
pub struct SourceFinder {
    search_dirs: Vec<PathBuf>,
    by_name: OnceCell<SourceWalk>,
}

/// The files below the search folders by name, and the folder where the
/// walk stopped at a bound, if it did.
type SourceWalk = (HashMap<OsString, Vec<PathBuf>>, Option<PathBuf>);

/// Entries the walk of the search folders reads at most, all together.
const WALK_ENTRIES: usize = 10_000;
/// Folders below a search folder the walk descends at most.
const WALK_DEPTH: usize = 32;

impl SourceFinder {
    /// A finder that searches `search_dirs` (recursively) when the DWARF path
    /// does not exist as is. Nothing is read until the first search.
    pub fn new(search_dirs: Vec<PathBuf>) -> Self {
        SourceFinder {
            search_dirs,
            by_name: OnceCell::new(),
        }
    }

    /// Finds the source file for `dwarf_path`:
    ///
    /// 1. an absolute `dwarf_path` that exists;
    /// 2. a relative `dwarf_path` joined with `comp_dir`, if that exists;
    /// 3. otherwise any file under the search directories with the same file
    ///    name, preferring the candidate sharing the longest path suffix
    ///    with `dwarf_path` (so `src/a/util.c` beats `test/util.c` for
    ///    `/build/src/a/util.c`); ties go to the first search directory,
    ///    then the shorter path.
    pub fn find(&self, dwarf_path: &Path, comp_dir: Option<&Path>) -> Option<PathBuf> {
        if dwarf_path.is_absolute() {
            if dwarf_path.is_file() {
                return Some(dwarf_path.to_path_buf());
            }
        } else if let Some(dir) = comp_dir {
            let joined = dir.join(dwarf_path);
            if joined.is_file() {
                return Some(joined);
            }
        }
        let name = dwarf_path.file_name()?;
        let (index, _) = self.by_name.get_or_init(|| self.walk());
        let candidates = index.get(name)?;
        // Candidates are in search-directory order and only a strictly
        // better one replaces the best so far, so ties keep the earliest.
        let mut best: Option<(&PathBuf, usize)> = None;
        for candidate in candidates {
            let score = common_suffix_len(candidate, dwarf_path);
            let better = match best {
                None => true,
                Some((path, best_score)) => {
                    score > best_score
                        || (score == best_score
                            && candidate.components().count() < path.components().count())
                }
            };
            if better {
                best = Some((candidate, score));
            }
        }
        best.map(|(path, _)| path.clone())
    }

    /// The note saying the walk of the search folders stopped at a bound
    /// (see [`SourceFinder::walk`]), once a search has walked them.
    pub fn walk_note(&self) -> Option<String> {
        let (_, cut) = self.by_name.get()?;
        cut.as_ref().map(|d| {
            format!(
                "the search for source files stopped at {} (after {WALK_ENTRIES} entries or {WALK_DEPTH} folders deep), so sources below it were not read: point set_src_path at the program's own source folder.",
                d.display()
            )
        })
    }

    /// Indexes every regular file below the search directories by name,
    /// and where the walk stopped at a bound. Links to folders are not
    /// entered (so a link to itself cannot loop), at most [`WALK_DEPTH`]
    /// folders deep and [`WALK_ENTRIES`] entries in all, and a Ctrl-C ends
    /// the walk (the analysis then stops at its next check).
    fn walk(&self) -> SourceWalk {
        let mut index: HashMap<OsString, Vec<PathBuf>> = HashMap::new();
        let mut read = 0usize;
        for root in &self.search_dirs {
            let mut stack = vec![(root.clone(), 0usize)];
            while let Some((dir, depth)) = stack.pop() {
                if crate::cancel::requested() {
                    return (index, None);
                }
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    continue;
                };
                let mut subdirs = Vec::new();
                for entry in entries.flatten() {
                    read += 1;
                    if read > WALK_ENTRIES || depth > WALK_DEPTH {
                        return (index, Some(dir));
                    }
                    let Ok(kind) = entry.file_type() else {
                        continue;
                    };
                    let name = entry.file_name();
                    if kind.is_dir() {
                        if !name.to_string_lossy().starts_with('.') {
                            subdirs.push(entry.path());
                        }
                    } else if kind.is_file() || (kind.is_symlink() && entry.path().is_file()) {
                        index.entry(name).or_default().push(entry.path());
                    }
                }
                subdirs.sort();
                stack.extend(subdirs.into_iter().rev().map(|d| (d, depth + 1)));
            }
        }
        (index, None)
    }
}

/// How many trailing normal path components `a` and `b` share.
fn common_suffix_len(a: &Path, b: &Path) -> usize {
    let parts = |p: &Path| -> Vec<OsString> {
        p.components()
            .filter_map(|c| match c {
                Component::Normal(s) => Some(s.to_os_string()),
                _ => None,
            })
            .collect()
    };
    let (a, b) = (parts(a), parts(b));
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// One-shot [`SourceFinder::find`]: builds a finder for `search_dirs`, so it
/// walks the directories again on every call that gets that far. Use a
/// [`SourceFinder`] when looking up more than one file.
pub fn find_source(
    dwarf_path: &Path,
    comp_dir: Option<&Path>,
    search_dirs: &[PathBuf],
) -> Option<PathBuf> {
    SourceFinder::new(search_dirs.to_vec()).find(dwarf_path, comp_dir)
}
