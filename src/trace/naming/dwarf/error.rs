//! The one error type of DWARF loading, whose messages name the file.

use std::path::PathBuf;

/// Why the debug information of a program could not be loaded.
///
/// Every message names the file and says how to fix the problem, so the
/// shell can show it to the user as is.
#[derive(Debug, thiserror::Error)]
pub enum DwarfError {
    /// The file could not be read at all.
    #[error("Could not read {}: {source}. Check that the path names the compiled program and that it is readable.", .path.display())]
    Read {
        /// The file that was asked for.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The file is not an object file (ELF) that can be parsed.
    #[error("{} is not an object file that can be read ({source}): pass the compiled ELF program, not its source or a script.", .path.display())]
    NotObject {
        /// The file that was asked for.
        path: PathBuf,
        /// The parser's reason.
        source: object::Error,
    },
    /// The object has no `.debug_info`: it was compiled without `-g` or stripped.
    #[error("{} has no debug information: compile it with -g.", .path.display())]
    NoDebugInfo {
        /// The file that was asked for.
        path: PathBuf,
    },
    /// The DWARF data exists but could not be parsed.
    #[error("The debug information in {} could not be parsed ({source}): recompile the program with gcc -g (DWARF 4 or 5).", .path.display())]
    BadDwarf {
        /// The file that was asked for.
        path: PathBuf,
        /// gimli's reason.
        source: gimli::Error,
    },
}
