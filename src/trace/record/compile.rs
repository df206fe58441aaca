//! Compiling a C program for tracing: `cc -g3 -O0` with the pins header
//! (`gleipnir.h`, embedded in mapvis) on the include path, so that the
//! program's variables are named and its pins mark what to trace.
//!
//! The compiler is run directly (`std::process::Command` with one
//! argument each), never through a shell, so no file name or flag the
//! user gave is read as shell syntax.
use std::path::{Path, PathBuf};
use std::process::Command;

/// The pins header, embedded so a program can be compiled wherever
/// mapvis is installed.
pub const PINS_HEADER: &str = include_str!("../../../pins/gleipnir.h");

/// The pins header's file name in [`CompileRequest::include_dir`].
pub const PINS_FILE: &str = "gleipnir.h";

/// What to compile, and where.
#[derive(Clone, Debug)]
pub struct CompileRequest {
    /// The C source file (absolute, or relative to the current folder).
    pub source: PathBuf,
    /// Flags after the source (`-DN=256`, `-lm`), passed as they are.
    pub flags: Vec<String>,
    /// Where the pins header is installed (created if needed).
    pub include_dir: PathBuf,
    /// Where the program is written, named after the source's stem
    /// (created if needed).
    pub bin_dir: PathBuf,
}

/// Why a program could not be compiled. Messages are full sentences
/// naming the file; the system's reason is the source.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The source file is not there.
    #[error("the source file {} does not exist.", .0.display())]
    NoSource(PathBuf),
    /// A folder could not be created.
    #[error("cannot create {}", .path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
    /// The pins header could not be written.
    #[error(transparent)]
    Header(#[from] crate::workdir::WorkdirError),
    /// A symbolic link in place of the program could not be removed.
    #[error("cannot replace {}", .path.display())]
    Replace {
        /// The link.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
    /// The compiler could not be started.
    #[error(
        "cannot run the C compiler `{cc}` (install gcc, Debian: apt-get install gcc, or set CC)"
    )]
    NoCompiler {
        /// The compiler's name (`CC`, else `cc`).
        cc: String,
        /// The system's reason.
        source: std::io::Error,
    },
    /// The compiler said no; its messages went to the terminal.
    #[error("compiling {} failed (see the compiler's messages above).", .0.display())]
    Failed(PathBuf),
}

/// Compiles `req.source` into `req.bin_dir` with `$CC` (else `cc`) and
/// returns the program's path. Installs the pins header first when the
/// one there differs. The compiler's own messages go to the terminal.
/// Cost: one compiler run.
///
/// # Errors
/// A missing source, a folder or header that cannot be written, no
/// compiler, or a failed compile ([`CompileError`]).
pub fn compile_c(req: &CompileRequest) -> Result<PathBuf, CompileError> {
    if !req.source.is_file() {
        return Err(CompileError::NoSource(req.source.clone()));
    }
    install_pins_header(&req.include_dir)?;
    create_dir(&req.bin_dir)?;
    let stem = req
        .source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "a.out".into());
    let out = req.bin_dir.join(&stem);
    // The linker writes through a link in place of its output: a link
    // there (not made by mapvis) is removed, never followed.
    if std::fs::symlink_metadata(&out).is_ok_and(|m| m.file_type().is_symlink()) {
        std::fs::remove_file(&out).map_err(|source| CompileError::Replace {
            path: out.clone(),
            source,
        })?;
    }
    let cc = compiler_for(&req.source);
    let status = Command::new(&cc)
        .args(["-g3", "-O0"])
        .arg(format!("-I{}", req.include_dir.display()))
        .arg("-o")
        .arg(&out)
        .arg(&req.source)
        .args(&req.flags)
        .status()
        .map_err(|source| CompileError::NoCompiler {
            cc: cc.clone(),
            source,
        })?;
    if !status.success() {
        return Err(CompileError::Failed(req.source.clone()));
    }
    Ok(out)
}

/// The compiler for `source`: `$CXX` (else `c++`) for a C++ file (`.cpp`,
/// `.cc`, `.cxx`, `.C`), which needs the C++ library linked, else `$CC`
/// (else `cc`).
fn compiler_for(source: &Path) -> String {
    let cpp = source
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "cpp" | "cc" | "cxx" | "C" | "c++"));
    let (var, default) = if cpp { ("CXX", "c++") } else { ("CC", "cc") };
    std::env::var(var).unwrap_or_else(|_| default.into())
}

/// Writes [`PINS_HEADER`] into `include_dir` unless the file there holds
/// it already (so its time, and a build that depends on it, stay).
pub fn install_pins_header(include_dir: &Path) -> Result<(), CompileError> {
    create_dir(include_dir)?;
    let header = include_dir.join(PINS_FILE);
    if crate::workdir::read_regular(&header).ok().as_deref() != Some(PINS_HEADER.as_bytes()) {
        crate::workdir::write_file(&header, PINS_HEADER.as_bytes())?;
    }
    Ok(())
}

/// Creates `dir` and its parents, never through a link (see
/// [`crate::workdir::create_dir`]): `.mapvis/bin -> ~/bin` is refused.
fn create_dir(dir: &Path) -> Result<(), CompileError> {
    match crate::workdir::create_dir(dir) {
        Ok(_) => Ok(()),
        Err(crate::workdir::WorkdirError::Io { source, .. }) => Err(CompileError::Folder {
            path: dir.to_path_buf(),
            source,
        }),
        Err(e) => Err(CompileError::Header(e)),
    }
}
