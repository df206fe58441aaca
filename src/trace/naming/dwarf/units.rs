//! What is known per compilation unit: the compiler's `DW_AT_producer`
//! string (which says whether the unit was optimised) and, for units built
//! with `-g3`, the macros defined before its first line (gcc's built-ins and
//! the command line's `-D`s), both looked up by the unit's source file.

use std::path::{Path, PathBuf};

use super::die::R;

/// The producers and command-line macros of the units of one object.
#[derive(Debug, Default)]
pub(super) struct UnitTable {
    /// Per compilation unit compiled with `-g3`: its name and its
    /// predefined and command-line macros (`NAME VALUE`).
    macros: Vec<(PathBuf, Vec<String>)>,
    /// `DW_AT_producer` of each unit (`GNU C17 12.2.0 -g -O2`), by the
    /// unit's source file.
    producers: Vec<(PathBuf, String)>,
}

impl UnitTable {
    /// Records the producer and macros of `unit`, whose root DIE is
    /// `root`; returns whether the unit was compiled with optimisation.
    pub(super) fn read_unit<'d>(
        &mut self,
        unit: gimli::UnitRef<'_, R<'d>>,
        root: &gimli::DebuggingInformationEntry<'_, '_, R<'d>>,
    ) -> bool {
        let producer = match root.attr_value(gimli::DW_AT_producer) {
            Ok(Some(v)) => unit
                .attr_string(v)
                .map(|s| s.to_string_lossy().into_owned())
                .ok(),
            _ => None,
        };
        let optimized = producer.as_deref().is_some_and(is_optimized);
        let name = unit
            .name
            .as_ref()
            .map(|n| PathBuf::from(n.to_string_lossy().into_owned()));
        if let (Some(macros), Some(name)) = (command_line_macros(unit, root), name.clone()) {
            self.macros.push((name, macros));
        }
        if let (Some(p), Some(name)) = (producer, name) {
            self.producers.push((name, p));
        }
        optimized
    }

    /// The macros of the unit of source `file` (see
    /// [`super::DebugVars::command_line_macros`]).
    pub(super) fn macros(&self, file: &Path) -> Option<&[String]> {
        of_unit(&self.macros, file).map(Vec::as_slice)
    }

    /// The `DW_AT_producer` of the unit of source `file`.
    pub(super) fn producer(&self, file: &Path) -> Option<&str> {
        of_unit(&self.producers, file).map(String::as_str)
    }
}

/// The entry of a per-unit list for source `file`: the unit whose name
/// `file` ends with, else one whose file name is the same.
fn of_unit<'a, T>(units: &'a [(PathBuf, T)], file: &Path) -> Option<&'a T> {
    let exact = units.iter().find(|(p, _)| file.ends_with(p));
    let by_name = || {
        units
            .iter()
            .find(|(p, _)| p.file_name().is_some() && p.file_name() == file.file_name())
    };
    exact.or_else(by_name).map(|(_, t)| t)
}

/// Whether a `DW_AT_producer` string (gcc records the command-line options
/// there: `GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O2`) says the
/// unit was optimised: the last `-O` option is anything but `-O0`. Producers
/// that record no options (clang) count as unoptimised.
fn is_optimized(producer: &str) -> bool {
    producer
        .split_whitespace()
        .rfind(|t| t.starts_with("-O"))
        .is_some_and(|t| t != "-O0")
}

/// The macros a compilation unit starts with (gcc's built-ins and the
/// command line's `-D`s): the line-0 definitions of its `.debug_macro` list
/// before the first file starts, following imported macro units. `None`
/// without macro information (compiled without `-g3`) or when it cannot be
/// read.
fn command_line_macros<R: gimli::Reader>(
    unit: gimli::UnitRef<'_, R>,
    root: &gimli::DebuggingInformationEntry<R>,
) -> Option<Vec<String>> {
    let offset = match root.attr_value(gimli::DW_AT_macros).ok()?? {
        gimli::AttributeValue::DebugMacroRef(o) => o,
        _ => return None,
    };
    let mut out = Vec::new();
    let mut todo = vec![(offset, true)];
    while let Some((offset, top)) = todo.pop() {
        let mut entries = unit.macros(offset).ok()?;
        while let Ok(Some(entry)) = entries.next() {
            match entry {
                gimli::MacroEntry::Define { line: 0, text } => {
                    let text = text.string(unit).ok()?;
                    out.push(text.to_string_lossy().ok()?.into_owned());
                }
                gimli::MacroEntry::Import { offset } if out.len() < 100_000 => {
                    todo.push((offset, false))
                }
                gimli::MacroEntry::StartFile { .. } if top => break,
                _ => {}
            }
        }
    }
    Some(out)
}

/// Whether a source file is a system header (the C++ standard library's
/// templates, glibc's inlines, a package's headers): its lines never name
/// a user's block. A `usr/include` folder anywhere counts, so a package
/// unpacked into a root of its own (`dpkg-deb -x pkg.deb root`) is read as
/// installed.
pub fn is_library_source(file: &Path) -> bool {
    let parts: Vec<_> = file.components().map(|c| c.as_os_str()).collect();
    file.starts_with("/usr/lib")
        || parts.iter().any(|c| *c == "c++")
        || parts.windows(2).any(|w| w[0] == "usr" && w[1] == "include")
        || parts
            .windows(3)
            .any(|w| w[0] == "usr" && w[1] == "local" && w[2] == "include")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn producer_options_decide_optimisation() {
        assert!(!is_optimized(
            "GNU C17 12.2.0 -mtune=generic -march=x86-64 -g"
        ));
        assert!(!is_optimized("GNU C17 12.2.0 -g -O2 -O0"));
        assert!(is_optimized("GNU C17 12.2.0 -g -O2"));
        assert!(is_optimized("GNU C17 12.2.0 -g -Os"));
        assert!(!is_optimized("clang version 14.0.6"));
    }

    #[test]
    fn package_headers_are_library_sources_wherever_unpacked() {
        assert!(is_library_source(Path::new(
            "/usr/include/c++/12/bits/stl_vector.h"
        )));
        assert!(is_library_source(Path::new(
            "/tmp/c/root/usr/include/boost/unordered_map.hpp"
        )));
        assert!(is_library_source(Path::new(
            "/usr/local/include/Eigen/Core"
        )));
        assert!(!is_library_source(Path::new("/home/u/src/usr.c")));
        assert!(!is_library_source(Path::new("/home/u/include/matrix.h")));
    }
}
