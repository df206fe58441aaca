//! Running a program under the mapvis Valgrind tool.
//!
//! The tool and its malloc-replacement preload are built by `build.rs` and
//! embedded in the mapvis binary. [`install_tool`] writes them once into a
//! cache folder (keyed by their content hash) next to links to the system's
//! `vgpreload_core`, `default.supp` and `getoff`; Valgrind then finds our
//! tool through `VALGRIND_LIB`. Programs are always started with an argument
//! list, never through a shell, so paths with spaces work.
use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// The tool binary, embedded at build time.
static TOOL_BINARY: &[u8] = include_bytes!(concat!(env!("MAPVIS_TOOL_DIR"), "/mapvis-amd64-linux"));
/// The malloc-replacement preload, embedded at build time.
static TOOL_PRELOAD: &[u8] = include_bytes!(concat!(
    env!("MAPVIS_TOOL_DIR"),
    "/vgpreload_mapvis-amd64-linux.so"
));
/// The Valgrind version the tool was built against.
pub const VALGRIND_VERSION: &str = env!("MAPVIS_VALGRIND_VERSION");

/// Name of our tool for `valgrind --tool=`.
pub const TOOL_NAME: &str = "mapvis";

/// Errors while preparing or running a trace.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// No valgrind binary was found.
    #[error("Valgrind was not found{where_}: install it (Debian: apt-get install valgrind) or point set_valgrind_path at the valgrind binary.")]
    ValgrindMissing {
        /// Where we looked, for the message.
        where_: String,
    },
    /// The system Valgrind's support files were not found.
    #[error("Valgrind's support files (vgpreload_core-amd64-linux.so, default.supp) were not found in {searched}: reinstall Valgrind (Debian: apt-get install --reinstall valgrind).")]
    ValgrindLibMissing {
        /// Folders searched.
        searched: String,
    },
    /// The installed Valgrind differs from the one the tool was built for.
    #[error("{valgrind} is Valgrind {found}, but mapvis's tool was built against Valgrind {VALGRIND_VERSION}: rebuild mapvis (cargo build --release) on this machine.")]
    VersionMismatch {
        /// The binary.
        valgrind: PathBuf,
        /// Its version.
        found: String,
    },
    /// The executable is missing or unreadable.
    #[error("the executable {path} does not exist or cannot be read: {reason}. Check the path given to load_exe.")]
    ExecutableMissing {
        /// The path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The executable is not a 64-bit x86-64 ELF file.
    #[error("{path} is not a 64-bit x86-64 ELF executable ({reason}): load_exe needs a program compiled for this machine, e.g. with compile_exe.")]
    NotElf64 {
        /// The path.
        path: PathBuf,
        /// What it is instead.
        reason: String,
    },
    /// The binary given as Valgrind does not answer as Valgrind.
    #[error("{path} is not Valgrind: `{path} --version` answered \"{answer}\" instead of a Valgrind version such as valgrind-3.19.0. Give set_valgrind_path the path of `valgrind` (for example /usr/bin/valgrind).")]
    NotValgrind {
        /// The binary.
        path: PathBuf,
        /// What it printed.
        answer: String,
    },
    /// A folder of the working folder could not be made or reached
    /// without passing through a link.
    #[error(transparent)]
    Folder(#[from] crate::workdir::WorkdirError),
    /// A file operation failed.
    #[error("{what} {path}: {source}.")]
    Io {
        /// What we were doing.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The system's reason.
        source: io::Error,
    },
}

fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> RunError + 'a {
    move |source| RunError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// Finds `name` on `PATH`, like a shell would (without running one).
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Resolves the valgrind binary: `explicit` if given (set_valgrind_path),
/// else `valgrind` on PATH.
pub fn find_valgrind(explicit: Option<&Path>) -> Result<PathBuf, RunError> {
    match explicit {
        Some(p) if p.is_file() => Ok(p.to_path_buf()),
        Some(p) => Err(RunError::ValgrindMissing {
            where_: format!(" at {}", p.display()),
        }),
        None => find_on_path("valgrind").ok_or(RunError::ValgrindMissing {
            where_: " on PATH".into(),
        }),
    }
}

/// Asks a valgrind binary for its version (`valgrind --version`).
pub fn valgrind_version(valgrind: &Path) -> Result<String, RunError> {
    let out = Command::new(valgrind)
        .arg("--version")
        .output()
        .map_err(io_err("could not run", valgrind))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.trim().trim_start_matches("valgrind-").to_string())
}

/// The folder of the system Valgrind's own tools and support files.
fn system_valgrind_lib(valgrind: &Path) -> Result<PathBuf, RunError> {
    let mut candidates = Vec::new();
    if let Some(prefix) = valgrind
        .canonicalize()
        .ok()
        .and_then(|p| p.parent()?.parent().map(Path::to_path_buf))
    {
        candidates.push(prefix.join("libexec/valgrind"));
        candidates.push(prefix.join("lib/x86_64-linux-gnu/valgrind"));
        candidates.push(prefix.join("lib/valgrind"));
    }
    for d in [
        "/usr/libexec/valgrind",
        "/usr/lib/x86_64-linux-gnu/valgrind",
        "/usr/lib/valgrind",
        "/usr/local/libexec/valgrind",
        "/usr/local/lib/valgrind",
    ] {
        candidates.push(PathBuf::from(d));
    }
    candidates
        .iter()
        .find(|d| {
            d.join("vgpreload_core-amd64-linux.so").is_file() && d.join("default.supp").is_file()
        })
        .cloned()
        .ok_or_else(|| RunError::ValgrindLibMissing {
            searched: candidates
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The folder mapvis installs its embedded tools into.
pub(crate) fn cache_root() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("mapvis");
    }
    if let Some(h) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(h).join(".cache").join("mapvis");
    }
    std::env::temp_dir().join("mapvis")
}

/// Writes `bytes` to `path` through a temporary file and a rename, unless
/// the file already holds them.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> Result<(), RunError> {
    use std::os::unix::fs::PermissionsExt;
    if fs::read(path).map(|b| b == bytes).unwrap_or(false) {
        return Ok(());
    }
    // Unique per process and call: threads of one process may install at once.
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp{}.{n}", std::process::id()));
    fs::write(&tmp, bytes).map_err(io_err("could not write", &tmp))?;
    fs::set_permissions(&tmp, fs::Permissions::from_mode(mode))
        .map_err(io_err("could not set permissions of", &tmp))?;
    fs::rename(&tmp, path).map_err(io_err("could not install", path))
}

/// Installs the embedded tool into the cache folder (once per tool build)
/// and returns the folder to use as `VALGRIND_LIB`. Cheap when already
/// installed: it compares the files and returns.
pub fn install_tool(valgrind: &Path) -> Result<PathBuf, RunError> {
    let mut h = DefaultHasher::new();
    TOOL_BINARY.hash(&mut h);
    TOOL_PRELOAD.hash(&mut h);
    let dir = cache_root().join(format!("valgrind-tool-{:016x}", h.finish()));
    fs::create_dir_all(&dir).map_err(io_err("could not create the tool folder", &dir))?;
    write_atomically(
        &dir.join(format!("{TOOL_NAME}-amd64-linux")),
        TOOL_BINARY,
        0o755,
    )?;
    write_atomically(
        &dir.join(format!("vgpreload_{TOOL_NAME}-amd64-linux.so")),
        TOOL_PRELOAD,
        0o755,
    )?;
    let sys = system_valgrind_lib(valgrind)?;
    for name in [
        "vgpreload_core-amd64-linux.so",
        "default.supp",
        "getoff-amd64-linux",
    ] {
        let link = dir.join(name);
        let target = sys.join(name);
        if !target.exists() {
            continue;
        }
        if fs::read_link(&link).map(|t| t == target).unwrap_or(false) {
            continue;
        }
        let _ = fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).map_err(io_err("could not link", &link))?;
    }
    Ok(dir)
}

/// What kind of ELF file an executable is, checked before tracing.
pub fn check_executable(path: &Path) -> Result<(), RunError> {
    use object::Object;
    let data = fs::read(path).map_err(|e| RunError::ExecutableMissing {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let file = object::File::parse(&*data).map_err(|e| RunError::NotElf64 {
        path: path.to_path_buf(),
        reason: format!("not an object file: {e}"),
    })?;
    if file.format() != object::BinaryFormat::Elf
        || !file.is_64()
        || file.architecture() != object::Architecture::X86_64
    {
        return Err(RunError::NotElf64 {
            path: path.to_path_buf(),
            reason: format!("{:?} {:?}", file.format(), file.architecture()),
        });
    }
    Ok(())
}

/// The one warning for a program that can be traced but whose accesses
/// cannot all be named: without debug information (compiled without
/// `-g`), or stripped of its symbol table too. `None` for a program with
/// debug information (or a file that cannot be read: [`check_executable`]
/// says why). Such programs are traced and analysed; this says once, when
/// the program is loaded, what their names fall back to.
pub fn debug_warning(path: &Path) -> Option<String> {
    use object::{Object, ObjectSection};
    let data = fs::read(path).ok()?;
    let file = object::File::parse(&*data).ok()?;
    let has = |name: &str| file.section_by_name(name).is_some_and(|s| s.size() > 0);
    if has(".debug_info") {
        return None;
    }
    Some(if has(".symtab") {
        format!(
            "{} has no debug information (it was compiled without -g): it can be traced, but stack variables, globals and source lines cannot be named, and heap blocks are named by the function that allocates them. Recompile it with -g (compile_exe does this) to have them named.",
            path.display()
        )
    } else {
        format!(
            "{} is stripped (it has no symbol table) and has no debug information: it can be traced, but its accesses can be named only by their kind of memory (heap, stack, global) and its functions only by address. Load the unstripped build, compiled with -g, to have them named.",
            path.display()
        )
    })
}

/// What to trace and how.
#[derive(Clone, Debug)]
pub struct TraceRequest {
    /// The valgrind binary.
    pub valgrind: PathBuf,
    /// The program.
    pub exe: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Where the binary trace goes.
    pub trace_file: PathBuf,
    /// Return addresses kept per heap event (`--stack-depth`).
    pub stack_depth: u32,
    /// Keep only accesses that fall inside heap blocks (`--heap-only`).
    pub heap_only: bool,
    /// Record the whole run, from program start to exit, as one region;
    /// the pins are then ignored.
    pub from_start: bool,
    /// Record thread and mutex operations and per-thread instruction
    /// counts for the whole run (`--sync-events`); costs one add per
    /// superblock exit of every superblock run.
    pub sync_events: bool,
    /// A region by code (a function, source lines) instead of the pins;
    /// the pins are then ignored. Not with `from_start`.
    pub region: Option<super::region::CodeRegion>,
    /// Windows of the run instead of the pins; not with `from_start` or
    /// `region`.
    pub window: Option<super::region::Window>,
}

impl TraceRequest {
    /// A request for the accesses of `exe` run with `args` into
    /// `trace_file`, as `run_gleipnir` traces: the pins (when the program
    /// has them) choose what is traced, 8 return addresses per heap event,
    /// every kind of memory, no thread events.
    pub fn accesses(
        valgrind: PathBuf,
        exe: PathBuf,
        args: Vec<String>,
        trace_file: PathBuf,
    ) -> TraceRequest {
        TraceRequest {
            valgrind,
            exe,
            args,
            trace_file,
            stack_depth: 8,
            heap_only: false,
            from_start: false,
            sync_events: false,
            region: None,
            window: None,
        }
    }
}

/// How the traced program ended.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// Exit code, when it exited normally.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    /// The trace file written.
    pub trace_file: PathBuf,
    /// The mapvis Valgrind tool itself crashed: Valgrind was ended by a
    /// signal other than SIGKILL and the tool never wrote its end marker.
    /// (A program that dies of a signal still ends its trace: Valgrind runs
    /// the tool's finish before it passes the signal on.)
    pub tool_crashed: bool,
    /// How the program's initial stack was laid out (see [`StartBlock`]);
    /// the default for a run not started by [`run_trace_with`].
    pub start: StartBlock,
}

impl RunOutcome {
    pub(crate) fn from_status(status: ExitStatus, trace_file: PathBuf) -> RunOutcome {
        use std::os::unix::process::ExitStatusExt;
        RunOutcome {
            exit_code: status.code(),
            signal: status.signal(),
            trace_file,
            tool_crashed: false,
            start: StartBlock::default(),
        }
    }

    /// A one-line description: "exited with status 0", "killed by signal 11 (SIGSEGV)".
    pub fn describe(&self) -> String {
        if let (true, Some(s)) = (self.tool_crashed, self.signal) {
            return format!(
                "was stopped when the mapvis Valgrind tool itself crashed with signal {s} ({}) before it finished the trace; this is a bug in mapvis, not in your program: please report it with the program and its arguments",
                signal_name(s)
            );
        }
        match (self.exit_code, self.signal) {
            (Some(c), _) => format!("exited with status {c}"),
            (None, Some(s)) => format!("was ended by signal {s} ({})", signal_name(s)),
            _ => "ended in an unknown way".into(),
        }
    }
}

/// The signal no process can catch: a kill from outside, after which no
/// finish code runs, in the tool or the program.
const SIGKILL: i32 = 9;

/// Conventional name of a Linux signal number.
pub fn signal_name(s: i32) -> &'static str {
    match s {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => "signal",
    }
}

/// Bytes that the traced program's path, arguments and environment are
/// padded to on its initial stack (or a multiple of it, when they take
/// more). 32 KiB holds the environments of shells, CI runners and test
/// harnesses seen here (4 to 12 KiB) and costs the program nothing but
/// that much of its 8 MiB stack.
pub const START_BLOCK_BYTES: usize = 32 * 1024;

/// The environment variable whose value pads the start block.
pub const PAD_VAR: &str = "MAPVIS_STACK_PAD";

/// What the traced program's initial stack holds above `main`'s frames,
/// and how mapvis keeps its size the same from any folder.
///
/// Valgrind builds the client's initial stack below a fixed top: the
/// strings of argv, envp and auxv (the program's path twice, as argv\[0\]
/// and AT_EXECFN), then the auxv entries and the envp and argv pointers.
/// Every stack address of the program therefore moves with their total
/// size: with the length of the program's path, of `PWD` (the working
/// folder), `OLDPWD`, `_` and any other variable. The same binary traced
/// from three folders gave 16 377, 17 111 and 16 284 L1 misses for one
/// array. mapvis passes the environment in one order (sorted by name),
/// sets `PWD` to the working folder itself (Debian's `valgrind` is a shell
/// script, and a shell sets `PWD` when it is missing), and adds
/// [`PAD_VAR`], whose value makes the path, arguments, environment and
/// their pointers take exactly [`START_BLOCK_BYTES`] (or a multiple). The
/// stack pointer at `main` is then the same from any folder and for any
/// environment that fits the block, so stack addresses and the cache
/// counts that depend on them are reproducible. What still
/// differs between folders is the contents of those strings (`PWD`, the
/// program's path) and where they lie: a program that reads them, or its
/// working folder, can behave differently. Valgrind's own additions
/// (`LD_PRELOAD`, and the variables Debian's script sets) do not depend on
/// the folder. Heap addresses come from the tool's allocator and do not
/// depend on the stack.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StartBlock {
    /// Bytes the program's path, arguments and environment take with their
    /// pointers, before padding.
    pub bytes: usize,
    /// Bytes they take with the padding (0 when mapvis did not start the
    /// program).
    pub padded_to: usize,
}

impl StartBlock {
    /// The environment to give Valgrind for running `exe` with `args` from
    /// `cwd`: the process's own environment with `extra` set, `PWD` set to
    /// `cwd`, and [`PAD_VAR`] padding the start block, sorted by name.
    /// Cost: one copy of the environment.
    pub fn environment(
        exe: &Path,
        args: &[String],
        cwd: Option<&Path>,
        extra: &[(&str, &OsStr)],
    ) -> (BTreeMap<OsString, OsString>, StartBlock) {
        let mut env: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
        env.remove(OsStr::new(PAD_VAR));
        for (k, v) in extra {
            env.insert(k.into(), v.into());
        }
        if let Some(cwd) = cwd {
            env.insert("PWD".into(), cwd.into());
        }
        let bytes = start_bytes(exe, args, &env);
        // The pad variable's own name, '=', NUL and pointer.
        let fixed = PAD_VAR.len() + 2 + 8;
        let padded_to = (bytes + fixed).div_ceil(START_BLOCK_BYTES) * START_BLOCK_BYTES;
        env.insert(PAD_VAR.into(), "x".repeat(padded_to - bytes - fixed).into());
        (env, StartBlock { bytes, padded_to })
    }

    /// What the run's output must say about the layout, if anything: the
    /// start block outgrew [`START_BLOCK_BYTES`], so runs with a shorter
    /// environment have another stack.
    pub fn note(&self) -> Option<String> {
        if self.padded_to <= START_BLOCK_BYTES {
            return None;
        }
        Some(format!(
            "the program's path, arguments and environment take {} bytes, more than the {START_BLOCK_BYTES} bytes mapvis pads them to, so its stack addresses (and the cache counts that depend on them) match only runs whose take {} to {} bytes too; unset unneeded environment variables for counts that match runs from other shells.",
            self.bytes,
            self.padded_to - START_BLOCK_BYTES - PAD_VAR.len() - 9,
            self.padded_to - PAD_VAR.len() - 10,
        ))
    }
}

/// Bytes of the client's initial stack that depend on `exe`, `args` and
/// `env`, as Valgrind 3.19 lays it out (`setup_client_stack` of
/// `m_initimg-linux.c`): each string with its NUL, the path a second time
/// for AT_EXECFN, and a pointer for each argument and variable. Their sum
/// is a multiple of 8 when the padded block is, so Valgrind's rounding of
/// the strings to 8 bytes adds nothing.
fn start_bytes(exe: &Path, args: &[String], env: &BTreeMap<OsString, OsString>) -> usize {
    use std::os::unix::ffi::OsStrExt;
    let exe = exe.as_os_str().as_bytes().len() + 1;
    let args: usize = args.iter().map(|a| a.len() + 1 + 8).sum();
    let vars: usize = env
        .iter()
        .map(|(k, v)| k.as_bytes().len() + v.as_bytes().len() + 2 + 8)
        .sum();
    2 * exe + 8 + args + vars
}

/// Removes what has the names the tool is about to create: `trace` and
/// its forked children's `trace.<pid>`. The tool creates each as a new
/// file (`O_EXCL`), so a file left there (a stale trace, or a link
/// prepared to make it write outside the working folder) would otherwise
/// cost the trace; a link is removed, never followed. Cost: one listing
/// of the trace's folder.
fn remove_stale_outputs(trace: &Path) -> Result<(), RunError> {
    let (Some(dir), Some(name)) = (trace.parent(), trace.file_name()) else {
        return Ok(());
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let dir = crate::workdir::SafeDir::open(dir, true)?;
    let prefix = format!("{}.", name.to_string_lossy());
    let names = dir.names().map_err(io_err("could not list", dir.path()))?;
    for n in names {
        let s = n.to_string_lossy();
        let child = s
            .strip_prefix(&prefix)
            .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()));
        if n == name || child {
            dir.remove_file(&n)
                .map_err(io_err("could not remove", &dir.path().join(&n)))?;
        }
    }
    Ok(())
}

/// Runs the program under the mapvis tool. Its stdin, stdout and stderr
/// pass through. Blocks until it ends; a Ctrl-C at the terminal reaches the
/// program (same process group), which then ends with a readable trace.
pub fn run_trace(req: &TraceRequest) -> Result<RunOutcome, RunError> {
    run_trace_with(req, &mut |_| {})
}

/// [`run_trace`], calling `progress` about twice a second with the number
/// of trace bytes written so far, so a shell can show that a long run is
/// moving.
pub fn run_trace_with(
    req: &TraceRequest,
    progress: &mut dyn FnMut(u64),
) -> Result<RunOutcome, RunError> {
    check_executable(&req.exe)?;
    let found = valgrind_version(&req.valgrind)?;
    if !found.starts_with(VALGRIND_VERSION.trim_end_matches(".0")) && found != VALGRIND_VERSION {
        return Err(RunError::VersionMismatch {
            valgrind: req.valgrind.clone(),
            found,
        });
    }
    let lib = install_tool(&req.valgrind)?;
    if let Some(parent) = req
        .trace_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
    {
        crate::workdir::create_dir(parent)?;
    }
    remove_stale_outputs(&req.trace_file)?;
    let cwd = std::env::current_dir().ok();
    let (env, start) = StartBlock::environment(
        &req.exe,
        &req.args,
        cwd.as_deref(),
        &[("VALGRIND_LIB", lib.as_os_str())],
    );
    let mut cmd = Command::new(&req.valgrind);
    cmd.env_clear()
        .envs(env)
        .arg(format!("--tool={TOOL_NAME}"))
        .arg("-q")
        .arg(format!("--trace-file={}", req.trace_file.display()))
        .arg(format!("--stack-depth={}", req.stack_depth))
        .arg(format!(
            "--heap-only={}",
            if req.heap_only { "yes" } else { "no" }
        ))
        .arg(format!(
            "--trace-from-start={}",
            if req.from_start { "yes" } else { "no" }
        ))
        .arg(format!(
            "--sync-events={}",
            if req.sync_events { "yes" } else { "no" }
        ))
        .args(req.region.iter().flat_map(|r| r.tool_args()))
        .args(req.window.iter().flat_map(|w| w.tool_args()))
        .arg(&req.exe)
        .args(&req.args)
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());
    // Valgrind never outlives mapvis (killed, or its terminal closed).
    super::ffi::end_with_parent(&mut cmd);
    let child = cmd
        .spawn()
        .map_err(io_err("could not start", &req.valgrind))?;
    let status = wait_with_progress(child, &req.trace_file, progress)
        .map_err(io_err("could not wait for", &req.valgrind))?;
    let mut outcome = finish_outcome(status, &req.trace_file);
    outcome.start = start;
    Ok(outcome)
}

/// Waits for `child` to end, calling `progress` with the size of `trace`
/// every half second meanwhile. A thread of its own waits for the child,
/// so its end is seen at once: polling it every half second, as this did
/// before, added a quarter of a second on average to every run (a tenth of
/// a short run's time).
fn wait_with_progress(
    mut child: std::process::Child,
    trace: &Path,
    progress: &mut dyn FnMut(u64),
) -> io::Result<ExitStatus> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    let (tx, rx) = channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        // The receiver is alive until this thread is joined.
        let _ = tx.send(());
        status
    });
    loop {
        match rx.recv_timeout(std::time::Duration::from_millis(500)) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {
                if let Ok(m) = fs::metadata(trace) {
                    progress(m.len());
                }
            }
        }
    }
    waiter
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the thread waiting for valgrind panicked")))
}

/// How a traced run ended, from Valgrind's exit status and the trace's
/// tail: the program's status or signal is appended to a trace the tool
/// ended, and a trace the tool did not end under a signal other than
/// SIGKILL means the tool itself crashed.
fn finish_outcome(status: ExitStatus, trace: &Path) -> RunOutcome {
    let mut outcome = RunOutcome::from_status(status, trace.to_path_buf());
    let ended = append_exit_status(trace, &outcome);
    outcome.tool_crashed = !ended && outcome.signal.is_some_and(|s| s != SIGKILL);
    outcome
}

/// Appends the program's exit status or fatal signal to a complete trace
/// (one that ends with the tool's end marker), followed by a new end marker.
/// Valgrind does not tell tools which signal ended a program, but the
/// process that waited for Valgrind knows. Costs one seek: the trace is
/// not read. Returns whether the tool had ended the trace.
fn append_exit_status(trace: &Path, outcome: &RunOutcome) -> bool {
    use super::format::END_MARKER;
    use std::io::{Read, Seek, SeekFrom, Write};
    let Ok(mut f) = fs::OpenOptions::new().read(true).append(true).open(trace) else {
        return false;
    };
    let mut tail = [0u8; 7];
    if f.seek(SeekFrom::End(-7)).is_err() || f.read_exact(&mut tail).is_err() || &tail != END_MARKER
    {
        return false;
    }
    let (kind, code) = match (outcome.exit_code, outcome.signal) {
        (Some(c), _) => (0u8, c as i64),
        (None, Some(s)) => (1u8, s as i64),
        _ => return true,
    };
    let mut rec = vec![super::format::REC_EXIT as u8, kind];
    super::varint::put_sv(&mut rec, code);
    rec.extend_from_slice(END_MARKER);
    let rec = match (f.metadata(), trace_version(&mut f)) {
        (Ok(m), Some(v)) if v >= 7 => super::format::block(&rec, m.len()),
        _ => rec,
    };
    let _ = f.write_all(&rec);
    true
}

/// The format version in the header of the trace open as `f` (its ninth
/// byte: every version so far is a one-byte varint).
fn trace_version(f: &mut fs::File) -> Option<u64> {
    use std::io::{Read, Seek, SeekFrom};
    let mut head = [0u8; 9];
    f.seek(SeekFrom::Start(0)).ok()?;
    f.read_exact(&mut head).ok()?;
    (&head[..8] == super::format::MAGIC && head[8] < 0x80).then_some(u64::from(head[8]))
}

/// Checks that `valgrind` answers `--version` as Valgrind does
/// (`valgrind-3.19.0`), so that a wrong path is refused when it is given
/// rather than when a program is traced. Returns the version.
pub fn check_valgrind(valgrind: &Path) -> Result<String, RunError> {
    let out = Command::new(valgrind)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(io_err("could not run", valgrind))?;
    let text = String::from_utf8_lossy(&out.stdout);
    match text.trim().strip_prefix("valgrind-") {
        Some(v) if out.status.success() && !v.is_empty() => Ok(v.to_string()),
        _ => Err(RunError::NotValgrind {
            path: valgrind.to_path_buf(),
            answer: text.trim().chars().take(80).collect(),
        }),
    }
}

/// What a finished trace holds, read quickly.
#[derive(Clone, Debug, Default)]
pub struct TraceCheck {
    /// Accesses read.
    pub accesses: u64,
    /// Regions (GL_START) seen.
    pub regions: u64,
    /// Whether the footer was read (the tool finished writing it).
    pub complete: bool,
    /// What the tool said about an exec that ended the trace (the program
    /// called exec, and the new program replaced the traced one), when
    /// the trace ends after one.
    pub exec: Option<String>,
}

/// What the trace at `path` holds: its accesses and regions. A complete
/// trace says so in its footer, read from the file's end; a trace cut
/// short is read to its end through the access fast path (Ctrl-C does not
/// stop it: a caller that asks whether a region was reached needs the
/// whole answer). Cost: one small read, or one pass at the reader's access
/// speed.
pub fn check_trace(path: &Path) -> Result<TraceCheck, super::reader::TraceError> {
    read_check(path, OnCancel::ReadOn)
}

/// What [`read_check`] does about [`crate::cancel::requested`] while it
/// reads a trace cut short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OnCancel {
    /// Reads to the end whatever is requested.
    ReadOn,
    /// Forgets a request pending when the reading starts (the Ctrl-C that
    /// ended the traced program), then stops, with what was counted, at
    /// one made while reading.
    StopAfterStart,
}

/// [`check_trace`], polling the cancel flag between batches of 2^24
/// accesses as `on_cancel` says.
fn read_check(path: &Path, on_cancel: OnCancel) -> Result<TraceCheck, super::reader::TraceError> {
    let mut r = super::reader::TraceReader::open(path)?;
    // A complete trace says what it holds in its footer: no need to read
    // it all (on a billion accesses that would take longer than tracing).
    if let Some(f) = super::reader::footer_at_end(path) {
        return Ok(TraceCheck {
            accesses: f.accesses,
            regions: f.regions,
            complete: true,
            exec: None,
        });
    }
    let mut regions = 0;
    let mut exec = None;
    let stop = match on_cancel {
        OnCancel::ReadOn => false,
        OnCancel::StopAfterStart => {
            crate::cancel::clear();
            true
        }
    };
    // A corrupt record ends the count: what came before it is usable.
    while !(stop && crate::cancel::requested()) {
        use super::format::{Event, WarningKind};
        match r.for_each_access(1 << 24, |_| {}) {
            Ok(super::reader::Batch::Event(Event::RegionStart(_))) => regions += 1,
            Ok(super::reader::Batch::Event(Event::Warning { kind, text })) => match kind {
                WarningKind::Exec => exec = Some(text),
                WarningKind::ExecFailed => exec = None,
                _ => {}
            },
            Ok(super::reader::Batch::Event(_)) | Ok(super::reader::Batch::Limit) => {}
            Ok(super::reader::Batch::End) | Err(_) => break,
        }
    }
    Ok(TraceCheck {
        accesses: r.accesses_read(),
        regions,
        complete: r.footer().is_some(),
        exec,
    })
}

/// A run whose trace was written under a new name and installed only when
/// usable (see [`run_trace_into`]).
#[derive(Clone, Debug)]
pub struct TracedRun {
    /// How the program ended.
    pub outcome: RunOutcome,
    /// What the new trace holds (`None` when it cannot be read at all).
    pub check: Option<TraceCheck>,
    /// `Some(reason)` when the new trace was not usable and the previous
    /// trace was kept; the new file is then left at `new_file`.
    pub rejected: Option<String>,
    /// The file the new trace was written to.
    pub new_file: PathBuf,
    /// Traces of child processes the program forked (their own files).
    pub children: Vec<PathBuf>,
}

/// The `.new` name a trace is written under before it replaces `dest`.
fn new_name(dest: &Path) -> PathBuf {
    let stem = dest
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trace".into());
    dest.with_file_name(format!("{stem}.new.mvt"))
}

/// The traces a run's forked children wrote: the tool names them
/// `<trace file>.<pid>`.
fn child_traces(trace: &Path) -> Vec<(u32, PathBuf)> {
    let (Some(dir), Some(name)) = (trace.parent(), trace.file_name()) else {
        return Vec::new();
    };
    let prefix = format!("{}.", name.to_string_lossy());
    let mut out: Vec<(u32, PathBuf)> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            let pid = n.strip_prefix(&prefix)?.parse().ok()?;
            Some((pid, e.path()))
        })
        .collect();
    out.sort();
    out
}

/// Where the trace of child `pid` of the trace `dest` is kept:
/// `trace.mvt` gives `trace.<pid>.mvt`.
pub fn child_trace_path(dest: &Path, pid: u32) -> PathBuf {
    let stem = dest
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trace".into());
    dest.with_file_name(format!("{stem}.{pid}.mvt"))
}

/// Runs the program as [`run_trace_with`], writing the trace under a new
/// name beside `req.trace_file` and replacing `req.trace_file` only when
/// the new trace is usable (it can be read and has at least one region).
/// Otherwise the previous trace stays, and [`TracedRun::rejected`] says
/// why. A SIGKILL of the program, a full disk or a tool that cannot write
/// thus never costs the previous trace.
///
/// Traces of forked children (`<new>.<pid>`) are moved to
/// [`child_trace_path`]; those of an earlier run are removed when a new
/// trace is installed.
///
/// Cancelling ([`crate::cancel`]): a Ctrl-C while the program runs goes to
/// the program too, and ends it with a readable trace; that one does not
/// stop reading the new trace, so a request still pending when a trace
/// cut short starts being read is forgotten. A Ctrl-C pressed during that
/// reading stops it, and the check holds what was counted. A complete
/// trace is checked from its footer alone, and a pending request is then
/// left for the caller (the shell forgets it after the command).
pub fn run_trace_into(
    req: &TraceRequest,
    progress: &mut dyn FnMut(u64),
) -> Result<TracedRun, RunError> {
    let dest = req.trace_file.clone();
    let new = new_name(&dest);
    let _ = fs::remove_file(&new);
    for (_, p) in child_traces(&new) {
        let _ = fs::remove_file(p);
    }
    let mut into_new = req.clone();
    into_new.trace_file = new.clone();
    let mut outcome = run_trace_with(&into_new, progress)?;
    let check = read_check(&new, OnCancel::StopAfterStart);
    let rejected = match &check {
        Err(e) => Some(format!("the new trace cannot be read ({e})")),
        Ok(c) if c.regions == 0 && outcome.tool_crashed => Some(format!(
            "the mapvis tool crashed before any region was traced (signal {})",
            outcome.signal.unwrap_or(0)
        )),
        Ok(TraceCheck {
            regions: 0,
            exec: Some(exec),
            ..
        }) => Some(format!("{exec} before any region was traced")),
        Ok(c) if c.regions == 0 && !c.complete && outcome.exit_code.is_some() => Some(
            "the tool could not finish writing the new trace, and it holds no region (see Valgrind's message above: is the disk full?)"
                .into(),
        ),
        Ok(c) if c.regions == 0 && outcome.signal.is_some() => Some(format!(
            "the program was ended by signal {} before any region was traced",
            outcome.signal.unwrap_or(0)
        )),
        Ok(c) if c.regions == 0 => Some(match (&req.region, req.window) {
            (_, Some(w)) => format!(
                "no region was traced: the run ended before the window's start ({} accesses)",
                w.skip
            ),
            (Some(r), _) => format!(
                "no region was traced: the code of the region ({}) did not run, or not as often as asked, in this run",
                r.label
            ),
            (None, None) => "no region was traced: are GL_START/GL_STOP in the code that ran? (include pins/gleipnir.h and put GL_START; and GL_STOP; around the code to see, or trace the whole run with set_region off)".into(),
        }),
        Ok(_) => None,
    };
    let mut children = Vec::new();
    if rejected.is_none() {
        let old_children = dest.parent().map(|d| {
            fs::read_dir(d)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| is_child_trace_of(&dest, p))
                .collect::<Vec<_>>()
        });
        for p in old_children.unwrap_or_default() {
            let _ = fs::remove_file(p);
        }
        fs::rename(&new, &dest).map_err(io_err("could not install the new trace as", &dest))?;
        outcome.trace_file = dest.clone();
    }
    for (pid, p) in child_traces(&new) {
        let to = child_trace_path(&dest, pid);
        children.push(if fs::rename(&p, &to).is_ok() { to } else { p });
    }
    Ok(TracedRun {
        outcome,
        check: check.ok(),
        rejected,
        new_file: new,
        children,
    })
}

/// Whether `p` is a child trace of `dest` (`trace.<pid>.mvt`).
fn is_child_trace_of(dest: &Path, p: &Path) -> bool {
    let stem = dest
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .and_then(|n| {
            n.strip_prefix(&format!("{stem}."))?
                .strip_suffix(".mvt")?
                .parse::<u32>()
                .ok()
        })
        .is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    /// The pad makes the path, arguments and environment take the block
    /// exactly, whatever the folder's and the variables' lengths; an
    /// environment larger than the block takes two, and says so.
    #[test]
    fn the_start_block_has_one_size_from_any_folder() {
        let args = vec!["10".to_string()];
        let folders = ["/a", "/a/much/longer/folder/name/than/the/first"];
        let sizes: Vec<StartBlock> = folders
            .iter()
            .map(|cwd| {
                let exe = Path::new(cwd).join("prog");
                let (env, start) = StartBlock::environment(&exe, &args, Some(Path::new(cwd)), &[]);
                assert_eq!(start_bytes(&exe, &args, &env), start.padded_to);
                assert_eq!(env.get(OsStr::new("PWD")).unwrap(), *cwd);
                start
            })
            .collect();
        assert_eq!(sizes[0].padded_to, START_BLOCK_BYTES);
        assert_eq!(sizes[1].padded_to, START_BLOCK_BYTES);
        // The longer folder's extra bytes, in the path (twice) and in PWD.
        let longer = folders[1].len() - folders[0].len();
        assert_eq!(sizes[1].bytes, sizes[0].bytes + 3 * longer);
        assert_eq!(sizes[0].note(), None);
        let big = "y".repeat(START_BLOCK_BYTES);
        let exe = Path::new("/p");
        let extra = [("MAPVIS_TEST_BIG", OsStr::new(&big))];
        let (env, start) = StartBlock::environment(exe, &[], None, &extra);
        assert_eq!(start_bytes(exe, &[], &env), 2 * START_BLOCK_BYTES);
        let note = start.note().expect("a note on the large environment");
        assert!(
            note.contains(&format!("take {} bytes", start.bytes)),
            "{note}"
        );
    }

    /// A trace cut before the tool's end marker under SIGSEGV is the
    /// tool's crash; the same under SIGKILL is a kill from outside, and a
    /// program that died of SIGSEGV has a trace the tool ended.
    #[test]
    fn a_trace_the_tool_never_ended_under_a_signal_is_the_tools_crash() {
        let dir = tempfile::tempdir().unwrap();
        let cut = dir.path().join("cut.mvt");
        let segv = ExitStatus::from_raw(11);
        let kill = ExitStatus::from_raw(9);
        std::fs::write(&cut, b"MVTRACE\0\x01").unwrap();
        let o = finish_outcome(segv, &cut);
        assert!(o.tool_crashed);
        assert!(o.describe().contains("bug in mapvis"), "{}", o.describe());
        assert!(!finish_outcome(kill, &cut).tool_crashed);
        let ended = dir.path().join("ended.mvt");
        std::fs::write(
            &ended,
            [&b"MVTRACE\0\x01"[..], super::super::format::END_MARKER].concat(),
        )
        .unwrap();
        let o = finish_outcome(segv, &ended);
        assert!(!o.tool_crashed);
        assert_eq!(o.describe(), "was ended by signal 11 (SIGSEGV)");
    }
}
