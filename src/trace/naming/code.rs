//! Regions by code from names: `set_region function NAME` and `set_region
//! lines FILE:FIRST-LAST` turned into the code ranges the tool watches,
//! from the executable's DWARF ([`super::dwarf::code_functions`],
//! [`super::dwarf::line_code`]).
//!
//! A name that matches no function, or several, is refused with the
//! candidates: tracing a neighbour of the function asked for would give a
//! plausible wrong answer.

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::dwarf::{self, CodeFunction, DwarfError};
use super::program::without_parameters;
use crate::trace::record::{Calls, CodeRange, CodeRegion, RangeKind};

/// Why a region by code could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CodeError {
    /// The executable's debug information could not be read.
    #[error(transparent)]
    Dwarf(#[from] DwarfError),
    /// No function with code has the name.
    #[error("{exe} has no function with code named \"{name}\"{}", near_list(.near))]
    NoFunction {
        /// The executable.
        exe: PathBuf,
        /// The name asked for.
        name: String,
        /// Functions whose names are close.
        near: Vec<String>,
    },
    /// Several functions have the name.
    #[error("\"{name}\" names {} functions of {exe}: {}; give the one you mean (with its parameter types for C++ overloads)", .candidates.len(), .candidates.join(", "))]
    Ambiguous {
        /// The executable.
        exe: PathBuf,
        /// The name asked for.
        name: String,
        /// Each match, with where it is declared.
        candidates: Vec<String>,
    },
    /// The lines have no code.
    #[error("lines {file}:{first}-{last} have no code in {exe} (comments, declarations, or a file it was not built from?); give lines of statements in one of its source files")]
    NoLines {
        /// The executable.
        exe: PathBuf,
        /// The file asked for.
        file: String,
        /// First line.
        first: u64,
        /// Last line.
        last: u64,
    },
    /// The file name matches several source files.
    #[error("\"{file}\" matches several source files of {exe}: {}; give more of its path", .files.join(", "))]
    AmbiguousFile {
        /// The executable.
        exe: PathBuf,
        /// The file asked for.
        file: String,
        /// The files it matches.
        files: Vec<String>,
    },
}

fn near_list(near: &[String]) -> String {
    if near.is_empty() {
        " (was it compiled with -g, and is it called?)".into()
    } else {
        format!("; functions with close names: {}", near.join(", "))
    }
}

/// A function's name without its return type: `Grid::at(int, int)` for
/// `double Grid::at(int, int)`; a C function's name as it is.
fn signature(full: &str) -> &str {
    let q = without_parameters(full);
    full.find(&q).map_or(full, |at| &full[at..])
}

/// The parts of a qualified name split at the `::` outside template
/// arguments and parameter lists: `ns::Grid<a::B>::at` gives `ns`,
/// `Grid<a::B>`, `at`.
fn components(q: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0i32, 0, Vec::new());
    let bytes = q.as_bytes();
    let mut k = 0;
    while k < bytes.len() {
        match bytes[k] {
            b'<' | b'(' => depth += 1,
            b'>' | b')' => depth -= 1,
            b':' if depth == 0 && bytes.get(k + 1) == Some(&b':') => {
                out.push(&q[start..k]);
                start = k + 2;
                k += 1;
            }
            _ => {}
        }
        k += 1;
    }
    out.push(&q[start..]);
    out
}

/// `part` without its template arguments: `Grid<double>` gives `Grid`.
fn without_template(part: &str) -> &str {
    part.find('<').map_or(part, |at| &part[..at])
}

/// Whether `name` names function `full`. Compared without spaces: the
/// name's parts (split at `::`) must be the last parts of the function's
/// qualified name, each equal, or equal once the function's template
/// arguments are dropped when the name gives none (`Tree::knnSearch` for
/// `nanoflann::KDTreeSingleIndexAdaptor<...>::knnSearch`); with a
/// parameter list (`Domain::CalcForce(int)`) the parameters must match
/// too. A C function's name is its one part.
fn names(full: &str, name: &str) -> bool {
    let squeeze = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let name = squeeze(name);
    let (name_q, name_params) = match name.find('(') {
        Some(at) => (&name[..at], Some(&name[at..])),
        None => (name.as_str(), None),
    };
    let sig = squeeze(signature(full));
    let q = squeeze(&without_parameters(full));
    if let Some(params) = name_params {
        if sig.get(q.len()..) != Some(params) {
            return false;
        }
    }
    let want = components(name_q);
    let have = components(&q);
    want.len() <= have.len()
        && want
            .iter()
            .zip(&have[have.len() - want.len()..])
            .all(|(w, h)| w == h || (!w.contains('<') && *w == without_template(h)))
}

/// What a candidate is called in a message: its signature and where it is
/// declared.
fn shown(f: &CodeFunction) -> String {
    match &f.decl {
        Some((file, line)) => format!(
            "{} ({}:{line})",
            signature(&f.full),
            file.file_name().map_or(file.display().to_string(), |n| n
                .to_string_lossy()
                .into_owned())
        ),
        None => signature(&f.full).to_string(),
    }
}

/// The region of function `name` of `exe`: its own code and every copy
/// inlined elsewhere. The name may leave out the leading parts of a
/// qualified name (`CalcForce` for `Domain::CalcForce`) and template
/// arguments, as long as it then matches one function only.
///
/// # Errors
/// [`CodeError::NoFunction`], [`CodeError::Ambiguous`], or the DWARF's.
pub fn function_region(exe: &Path, name: &str, calls: Calls) -> Result<CodeRegion, CodeError> {
    let (all, by_symbol) = functions_of(exe)?;
    let found: Vec<&CodeFunction> = all.iter().filter(|f| names(&f.full, name)).collect();
    if found.is_empty() {
        // A function of a shared library the program links.
        for lib in needed_libraries(exe) {
            if let Ok(region) = function_region_in(&lib, name, calls) {
                return Ok(region);
            }
        }
    }
    region_of(exe, name, calls, &all, found, by_symbol)
}

/// [`function_region`] in one object (a shared library), not looking
/// further.
fn function_region_in(object: &Path, name: &str, calls: Calls) -> Result<CodeRegion, CodeError> {
    let (all, by_symbol) = functions_of(object)?;
    let found: Vec<&CodeFunction> = all.iter().filter(|f| names(&f.full, name)).collect();
    if found.is_empty() {
        return Err(CodeError::NoFunction {
            exe: object.to_owned(),
            name: name.to_owned(),
            near: Vec::new(),
        });
    }
    region_of(object, name, calls, &all, found, by_symbol)
}

/// The functions of `object` with code, from its DWARF or, without debug
/// information, its symbol table (then `true`: their own code only, the
/// label says that inlined copies are missed).
fn functions_of(object: &Path) -> Result<(Vec<CodeFunction>, bool), CodeError> {
    match dwarf::code_functions(object) {
        Ok(all) => Ok((all, false)),
        Err(DwarfError::NoDebugInfo { .. }) => Ok((symbol_functions(object)?, true)),
        Err(e) => Err(e.into()),
    }
}

/// The region of the one function of `found` (those of `all`, the
/// functions of `exe`, that `name` names), or the error for none or
/// several.
fn region_of(
    exe: &Path,
    name: &str,
    calls: Calls,
    all: &[CodeFunction],
    found: Vec<&CodeFunction>,
    by_symbol: bool,
) -> Result<CodeRegion, CodeError> {
    match found.as_slice() {
        [] => Err(CodeError::NoFunction {
            exe: exe.to_owned(),
            name: name.to_owned(),
            near: near_names(all, name),
        }),
        [f] => Ok(CodeRegion {
            object: exe.to_owned(),
            ranges: function_ranges(f),
            calls,
            label: format!(
                "function {}, {}{}",
                signature(&f.full),
                calls.describe(),
                if by_symbol {
                    " (by its symbol, the program having no debug information: copies the \
                     compiler inlined elsewhere are not traced)"
                } else {
                    ""
                }
            ),
        }),
        several => {
            let mut candidates: Vec<String> = several.iter().map(|f| shown(f)).collect();
            candidates.sort();
            Err(CodeError::Ambiguous {
                exe: exe.to_owned(),
                name: name.to_owned(),
                candidates,
            })
        }
    }
}

/// The functions of `exe`'s symbol table (its own code only: no inlined
/// copies, no declarations), for a program without debug information.
/// C++ names are demangled.
///
/// # Errors
/// [`CodeError::Dwarf`] when the file cannot be read or is not an object.
fn symbol_functions(exe: &Path) -> Result<Vec<CodeFunction>, CodeError> {
    use object::{Object, ObjectSymbol, SymbolKind};
    let data = std::fs::read(exe).map_err(|source| DwarfError::Read {
        path: exe.to_owned(),
        source,
    })?;
    let obj = object::File::parse(&*data).map_err(|source| DwarfError::NotObject {
        path: exe.to_owned(),
        source,
    })?;
    let mut out: Vec<CodeFunction> = Vec::new();
    for sym in obj.symbols().chain(obj.dynamic_symbols()) {
        let (Ok(raw), true) = (sym.name(), sym.kind() == SymbolKind::Text && sym.size() > 0) else {
            continue;
        };
        let range = sym.address()..sym.address() + sym.size();
        if out.iter().any(|f| f.own.contains(&range)) {
            continue;
        }
        out.push(CodeFunction {
            full: addr2line::demangle(raw, gimli::DW_LANG_C_plus_plus)
                .unwrap_or_else(|| raw.to_string()),
            decl: None,
            own: vec![range],
            inlined: Vec::new(),
        });
    }
    Ok(out)
}

/// The shared libraries `exe` links (its `DT_NEEDED` entries), found as
/// the dynamic loader finds them: in its `DT_RPATH` and `DT_RUNPATH`
/// folders (`$ORIGIN` is its folder), then the system's library folders.
/// Each as its real path (Valgrind names a mapped object by it). Read from
/// the file: the program is not run.
fn needed_libraries(exe: &Path) -> Vec<std::path::PathBuf> {
    use object::read::elf::{Dyn, ElfFile64};
    let Ok(data) = std::fs::read(exe) else {
        return Vec::new();
    };
    let Ok(elf) = ElfFile64::<object::Endianness>::parse(&*data) else {
        return Vec::new();
    };
    let (endian, sections) = (elf.endian(), elf.elf_section_table());
    let Ok(Some((entries, link))) = sections.dynamic(endian, &*data) else {
        return Vec::new();
    };
    let Ok(strings) = sections.strings(endian, &*data, link) else {
        return Vec::new();
    };
    let origin = exe.parent().unwrap_or(Path::new("."));
    let (mut needed, mut dirs) = (Vec::new(), Vec::new());
    for d in entries {
        let Ok(text) = d.string(endian, strings) else {
            continue;
        };
        let text = String::from_utf8_lossy(text).into_owned();
        match d.tag32(endian) {
            Some(object::elf::DT_NEEDED) => needed.push(text),
            Some(object::elf::DT_RPATH | object::elf::DT_RUNPATH) => dirs.extend(
                text.split(':')
                    .map(|p| p.replace("$ORIGIN", &origin.to_string_lossy()))
                    .map(std::path::PathBuf::from),
            ),
            _ => {}
        }
    }
    dirs.extend(
        [
            "/lib/x86_64-linux-gnu",
            "/usr/lib/x86_64-linux-gnu",
            "/lib64",
            "/usr/lib64",
            "/lib",
            "/usr/lib",
            "/usr/local/lib",
        ]
        .map(std::path::PathBuf::from),
    );
    needed
        .iter()
        .filter_map(|n| dirs.iter().map(|d| d.join(n)).find(|p| p.is_file()))
        .filter_map(|p| p.canonicalize().ok())
        .collect()
}

/// Up to five function names closest to `name`.
fn near_names(all: &[CodeFunction], name: &str) -> Vec<String> {
    let mut scored: Vec<(f64, String)> = all
        .iter()
        .map(|f| without_parameters(&f.full))
        .map(|q| (strsim::jaro_winkler(&q, name), q))
        .filter(|(score, _)| *score > 0.8)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(5).map(|(_, q)| q).collect()
}

/// A function's ranges: its own code (entered by a call), and its inlined
/// copies' code outside it.
fn function_ranges(f: &CodeFunction) -> Vec<CodeRange> {
    let own = dwarf::merge(f.own.clone());
    let inlined = dwarf::merge(f.inlined.iter().flatten().cloned().collect());
    let mut out: Vec<CodeRange> = own
        .iter()
        .map(|r| CodeRange {
            start: r.start,
            end: r.end,
            kind: RangeKind::Own,
        })
        .collect();
    for r in inlined {
        for piece in subtract(r, &own) {
            out.push(CodeRange {
                start: piece.start,
                end: piece.end,
                kind: RangeKind::Inlined,
            });
        }
    }
    out.sort_by_key(|r| r.start);
    out
}

/// The parts of `r` outside the sorted, disjoint `cut`.
fn subtract(r: Range<u64>, cut: &[Range<u64>]) -> Vec<Range<u64>> {
    let mut out = Vec::new();
    let mut at = r.start;
    for c in cut.iter().filter(|c| c.end > r.start && c.start < r.end) {
        if c.start > at {
            out.push(at..c.start);
        }
        at = at.max(c.end);
    }
    if at < r.end {
        out.push(at..r.end);
    }
    out
}

/// The region of lines `first` to `last` of source `file` (a path or its
/// end: `mm.c`, `src/mm.c`).
///
/// # Errors
/// [`CodeError::NoLines`], [`CodeError::AmbiguousFile`], or the DWARF's.
pub fn lines_region(
    exe: &Path,
    file: &str,
    first: u64,
    last: u64,
) -> Result<CodeRegion, CodeError> {
    let code = dwarf::line_code(exe, Path::new(file), first..=last)?;
    let mut files: Vec<String> = code.files.iter().map(|f| f.display().to_string()).collect();
    files.sort();
    files.dedup();
    // One file spelled two ways (the line table's directory and name, a
    // call's file index) is one file.
    let same = |a: &str, b: &str| Path::new(a).ends_with(b) || Path::new(b).ends_with(a);
    let mut distinct: Vec<String> = Vec::new();
    for f in files {
        if !distinct.iter().any(|d| same(d, &f)) {
            distinct.push(f);
        }
    }
    let files = distinct;
    if files.len() > 1 {
        return Err(CodeError::AmbiguousFile {
            exe: exe.to_owned(),
            file: file.to_owned(),
            files,
        });
    }
    if code.ranges.is_empty() {
        return Err(CodeError::NoLines {
            exe: exe.to_owned(),
            file: file.to_owned(),
            first,
            last,
        });
    }
    Ok(CodeRegion {
        object: exe.to_owned(),
        ranges: code
            .ranges
            .into_iter()
            .map(|r| CodeRange {
                start: r.start,
                end: r.end,
                kind: RangeKind::Lines,
            })
            .collect(),
        calls: Calls::All,
        label: format!("lines {file}:{first}-{last}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_matches_its_qualified_name_or_its_signature() {
        let full = "double Domain::CalcForce(int, double*)";
        assert!(names(full, "Domain::CalcForce"));
        assert!(names(full, "Domain::CalcForce(int, double*)"));
        assert!(names(full, "Domain::CalcForce(int,double *)"));
        assert!(!names(full, "Domain::CalcForce(int)"));
        assert!(names(full, "CalcForce"));
        assert!(!names(full, "Force"));
        assert!(!names(full, "Other::CalcForce"));
        let knn = "unsigned long nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, Cloud>, Cloud, 2>::knnSearch(double const*, unsigned long, unsigned int*, double*) const";
        assert!(names(knn, "KDTreeSingleIndexAdaptor::knnSearch"));
        assert!(names(knn, "nanoflann::KDTreeSingleIndexAdaptor::knnSearch"));
        assert!(!names(knn, "KDTreeSingleIndexAdaptor<int>::knnSearch"));
        assert_eq!(components("ns::Grid<a::B>::at"), ["ns", "Grid<a::B>", "at"]);
        assert!(names("void kernel<double>(double*, int)", "kernel<double>"));
        assert!(names("kernel_gemm", "kernel_gemm"));
        assert_eq!(signature("double Grid::at(int, int)"), "Grid::at(int, int)");
    }

    #[test]
    fn inlined_code_inside_the_own_copy_is_left_to_it() {
        assert_eq!(subtract(0..10, &[2..4, 6..7]), vec![0..2, 4..6, 7..10]);
        let all = [Range { start: 0, end: 10 }];
        assert_eq!(subtract(3..5, &all), Vec::<Range<u64>>::new());
        assert_eq!(subtract(3..5, &[]), vec![3..5]);
    }
}
