//! The state behind the pipeline commands: what is loaded, traced and
//! analysed. It only orchestrates: every step calls a stage
//! (`trace`, `filter`, `vis`) through its public API.
//!
//! Where each file lives is the working folder's ([`WorkFolder`]), and
//! the setup is saved in it ([`super::state::Setup`]), so a new session
//! started in the same folder continues where the last one stopped.
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use crate::filter::Analysis;
use crate::filter::{self, MemKind};
use crate::trace;
use crate::workdir::{FolderLock, Freshness, Manifest, Run, SourceId, WorkFolder};

use super::error::Context;
pub use super::error::{CmdError, CmdResult};
use super::state::Setup;
use super::text::path_line as shown;

/// Records `files` in the manifest of `work_dir` (see
/// [`Session::record_written`]).
pub fn record_written_in(work_dir: &Path, files: &[PathBuf]) {
    if let Err(e) = Manifest::record(work_dir, files) {
        eprintln!("warning: {}", super::error::with_causes(&e));
    }
}

/// The pipeline's state, private behind methods: the setup (program,
/// arguments, paths, settings), the trace, the analysis made from it and
/// the selection made from that.
///
/// Invariant: whenever the analysis in memory may no longer belong to the
/// current trace (a new trace, a cleared folder, another trace's results),
/// it is dropped with its source and the selection made from it by
/// [`Session::forget_analysis`], and only there. (`set_mem_alloc` drops
/// just the selection of the previous memory kinds.)
pub struct Session {
    /// The working folder (figures/, visinfo/, .mapvis/ live here).
    folder: WorkFolder,
    /// The program, its arguments, the folders, the memory kinds, the
    /// trace and the run: saved in `session.json` at each change.
    setup: Setup,
    /// Whether `setup.exe` was restored from `session.json` and has not
    /// been named to the user yet (see [`Session::program_to_run`]).
    exe_restored: bool,
    /// How heap blocks are grouped in memory_stats (`set_heap_grouping`).
    grouping: filter::Grouping,
    /// Open figures in a browser after writing them.
    open_browser: bool,
    /// Maximum points drawn before figures aggregate.
    point_budget: usize,
    /// Row 0 at the top of array figures.
    matrix_orientation: bool,
    /// The current analysis (`memory_trace_analysis` or loaded from disk).
    analysis: Option<Analysis>,
    /// The accesses of the selected memory kinds (`filtering_process`).
    selected: Option<(MemKind, filter::Selection)>,
    /// The cache model and reuse sampling (`set_cache`, `set_reuse_sampling`).
    locality: super::state::Settings,
    /// The allocator calls last analysed by the heap commands.
    heap: Option<super::state::HeapState>,
    /// The trace the current analysis was made from (see
    /// [`Session::analysis`]: an analysis whose trace has changed since is
    /// never shown as current).
    analysis_source: Option<SourceId>,
    /// The working folder's lock while a command of this session (or its
    /// background save) holds it.
    lock: Weak<FolderLock>,
    /// The lock held by the running command.
    held: Option<Arc<FolderLock>>,
}

impl Session {
    /// A session in `work_dir`, restoring saved settings when present.
    pub fn new(work_dir: PathBuf) -> Session {
        let folder = WorkFolder::new(work_dir);
        let setup = Setup::restore(&folder);
        let locality = super::state::Settings::load(&folder);
        Session {
            exe_restored: setup.exe.is_some(),
            folder,
            setup,
            grouping: Default::default(),
            open_browser: false,
            point_budget: crate::vis::DEFAULT_POINT_BUDGET,
            matrix_orientation: false,
            analysis: None,
            selected: None,
            analysis_source: None,
            locality,
            heap: None,
            lock: Weak::new(),
            held: None,
        }
    }

    /// Follows the process's working folder: after a Tcl `cd`, the session
    /// continues with the new folder's saved settings and analysis, as a new
    /// session started there would.
    pub fn follow_cwd(&mut self) {
        let Ok(cwd) = std::env::current_dir() else {
            return;
        };
        if cwd != self.folder.root() {
            *self = Session::new(cwd);
        }
    }

    /// The working folder the next command will read: the process's
    /// working folder (a command first follows a Tcl `cd`, see
    /// [`Session::follow_cwd`]), else this session's. For completion,
    /// which must offer what the command will find.
    pub fn folder_to_read(&self) -> WorkFolder {
        match std::env::current_dir() {
            Ok(cwd) if cwd != self.folder.root() => WorkFolder::new(cwd),
            _ => self.folder.clone(),
        }
    }

    /// Whether the next command will read another folder than this
    /// session's (after a Tcl `cd`).
    pub fn folder_moved(&self) -> bool {
        self.folder_to_read().root() != self.folder.root()
    }

    /// Takes the working folder's lock for the command about to run, so
    /// that no other mapvis session changes the folder meanwhile. While
    /// another session holds it, says so once and waits; Ctrl-C gives up.
    /// The lock is shared with this session's own background save.
    pub fn lock_folder(&mut self) -> CmdResult<()> {
        if let Some(held) = self.lock.upgrade() {
            self.held = Some(held);
            return Ok(());
        }
        let dir = self.folder.root().to_path_buf();
        let lock = FolderLock::acquire(
            &dir,
            &mut |pid| {
                eprintln!(
                    "waiting for another mapvis session{} working in {} to finish its command (Ctrl-C gives up)...",
                    pid.map(|p| format!(" (pid {p})")).unwrap_or_default(),
                    dir.display()
                )
            },
            &crate::cancel::requested,
        )?;
        let lock = Arc::new(lock);
        self.lock = Arc::downgrade(&lock);
        self.held = Some(lock);
        Ok(())
    }

    /// Releases the lock taken by [`Session::lock_folder`] (a background
    /// save keeps it until it is done).
    pub fn unlock_folder(&mut self) {
        self.held = None;
    }

    /// Records files this session wrote in the working folder's manifest,
    /// the list `clear_analysis` removes. A failure is a warning: the files
    /// themselves are written.
    pub fn record_written(&self, files: &[PathBuf]) {
        record_written_in(self.folder.root(), files);
    }

    /// The working folder's places (see [`WorkFolder`]).
    pub fn folder(&self) -> &WorkFolder {
        &self.folder
    }

    /// Where the analysis is saved: the current run's (see
    /// [`Session::use_run`]), else the folder's own.
    pub fn analysis_dir(&self) -> PathBuf {
        match &self.setup.run {
            Some(run) => run.analysis_dir(),
            None => self.folder.analysis_dir(),
        }
    }

    /// The saved run the commands work on, if one was chosen.
    pub fn current_run(&self) -> Option<&str> {
        self.setup.run.as_ref().map(Run::label)
    }

    /// Makes the saved run `run` current: its trace and analysis are then
    /// the ones every command reads, until a new trace, a new analysis or
    /// `use_run` again.
    pub fn use_run(&mut self, run: Run) {
        self.forget_analysis();
        self.setup.trace_file = Some(run.trace_file());
        self.setup.run = Some(run);
        self.save_settings();
    }

    /// Goes back from a saved run to the folder's own trace and analysis
    /// (`.mapvis/trace.mvt` unless `trace` names another): before anything
    /// writes a new trace or analysis, so a saved run is never changed.
    pub fn leave_run(&mut self, trace: Option<PathBuf>) {
        if self.setup.run.take().is_some() {
            self.forget_analysis();
            self.setup.trace_file = trace;
            self.save_settings();
        }
    }

    fn abs(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.folder.root().join(p)
        };
        p.canonicalize().unwrap_or(p)
    }

    /// Saves the setup (see [`Setup::save`]) so a later session in this
    /// folder continues with it.
    pub fn save_settings(&self) {
        self.setup.save(&self.folder);
    }

    // -----------------------------------------------------------------
    // Setup
    // -----------------------------------------------------------------

    /// `load_exe PATH`: checks the program and remembers it. Returns its
    /// absolute path. A program without debug info, or stripped, is
    /// accepted with a warning ([`trace::debug_warning`]), said here
    /// only: run_gleipnir and heap_profile trace it without another word.
    pub fn load_exe(&mut self, path: &str) -> CmdResult<(PathBuf, Option<String>)> {
        let p = self.abs(path);
        trace::check_executable(&p)?;
        let warning = trace::debug_warning(&p);
        self.setup.exe = Some(p.clone());
        self.exe_restored = false;
        self.save_settings();
        Ok((p, warning))
    }

    /// `set_src_path DIR ...`: folders searched (recursively) for sources.
    pub fn set_src_path(&mut self, dirs: &[String]) -> CmdResult<Vec<PathBuf>> {
        let mut out = Vec::new();
        for d in dirs {
            let p = self.abs(d);
            if !p.is_dir() {
                return Err(CmdError::from(format!(
                    "the source folder {} does not exist: give set_src_path the folder that holds your .c files.",
                    p.display()
                )));
            }
            out.push(p);
        }
        self.setup.src_paths = out.clone();
        self.save_settings();
        Ok(out)
    }

    /// `set_valgrind_path PATH`.
    pub fn set_valgrind_path(&mut self, path: &str) -> CmdResult<PathBuf> {
        let p = self.abs(path);
        let p = if p.is_dir() { p.join("valgrind") } else { p };
        if !p.is_file() {
            return Err(format!(
                "{} is not a valgrind binary: give set_valgrind_path the path of `valgrind` (for example /usr/bin/valgrind).",
                p.display()
            )
            .into());
        }
        // Only a binary that answers as Valgrind is kept.
        trace::check_valgrind(&p)?;
        self.setup.valgrind = Some(p.clone());
        self.save_settings();
        Ok(p)
    }

    /// `set_arguments ARG ...`.
    pub fn set_arguments(&mut self, args: &[String]) {
        self.setup.args = args.to_vec();
        self.save_settings();
    }

    /// Forgets the analysis in memory and the selection made from it: the
    /// one reset for "the analysis is stale" (a new trace, a cleared
    /// folder, another trace's results). The saved analysis on disk is
    /// left alone; [`Session::analysis`] reloads and re-checks it.
    pub fn forget_analysis(&mut self) {
        self.analysis = None;
        self.analysis_source = None;
        self.selected = None;
    }

    /// Makes `a`, just made from the trace `source` and saved (see
    /// [`filter::AnalysisDir`]), the current analysis, after
    /// [`Session::forget_analysis`] of the previous one.
    pub fn adopt_analysis(&mut self, a: Analysis, source: Option<SourceId>) {
        self.forget_analysis();
        self.analysis_source = source;
        self.analysis = Some(a);
    }

    /// The analysis in memory, without loading the saved one or checking
    /// that it is of the current trace: for what only describes it
    /// (completion, figure titles) and for handlers that called
    /// [`Session::analysis`] just before.
    pub fn loaded_analysis(&self) -> Option<&Analysis> {
        self.analysis.as_ref()
    }

    /// Makes `trace` (or none) the trace to analyse and saves the settings;
    /// the analysis of the previous one is forgotten.
    pub fn set_trace(&mut self, trace: Option<PathBuf>) {
        self.setup.run = None;
        self.setup.trace_file = trace;
        self.forget_analysis();
        self.save_settings();
    }

    /// The trace set by `run_gleipnir` or `load_trace`, if any (it may no
    /// longer exist; see [`Session::trace_path`]).
    pub fn trace_file(&self) -> Option<&Path> {
        self.setup.trace_file.as_deref()
    }

    /// The working folder (`figures/`, `visinfo/`, `.mapvis/` live here).
    pub fn work_dir(&self) -> &Path {
        self.folder.root()
    }

    /// The program to trace (`load_exe`, `compile_exe`).
    pub fn exe(&self) -> Option<&Path> {
        self.setup.exe.as_deref()
    }

    /// The program to trace, for a command about to run it; `missing` is
    /// the message when there is none. A program restored from
    /// `session.json` (which may come from someone else's folder) is named
    /// before it first runs in this session, so that the file cannot
    /// choose silently what runs.
    pub fn program_to_run(&mut self, missing: &str) -> CmdResult<PathBuf> {
        let exe = self.setup.exe.clone().ok_or_else(|| missing.to_string())?;
        if std::mem::take(&mut self.exe_restored) {
            println!(
                "running {}, the program to trace restored from {} (load_exe PATH traces another).",
                shown(&exe),
                self.folder.session_file().display()
            );
        }
        Ok(exe)
    }

    /// The folders searched for sources (`set_src_path`).
    pub fn src_paths(&self) -> &[PathBuf] {
        &self.setup.src_paths
    }

    /// The valgrind binary set by `set_valgrind_path`; `None` means the one
    /// on PATH.
    pub fn valgrind(&self) -> Option<&Path> {
        self.setup.valgrind.as_deref()
    }

    /// The traced program's arguments (`set_arguments`).
    pub fn args(&self) -> &[String] {
        &self.setup.args
    }

    /// The memory kinds shown (`set_mem_alloc`).
    pub fn mem(&self) -> MemKind {
        self.setup.mem
    }

    /// How heap blocks are grouped in statistics and figures.
    pub fn grouping(&self) -> filter::Grouping {
        self.grouping
    }

    /// `set_heap_grouping root|site|instances`: kept for this session only.
    pub fn set_grouping(&mut self, grouping: filter::Grouping) {
        self.grouping = grouping;
    }

    /// Whether figure commands open their page in a browser.
    pub fn open_browser(&self) -> bool {
        self.open_browser
    }

    /// `set_open_browser on|off`: kept for this session only.
    pub fn set_open_browser(&mut self, on: bool) {
        self.open_browser = on;
    }

    /// The points a figure draws before it aggregates.
    pub fn point_budget(&self) -> usize {
        self.point_budget
    }

    /// `set_point_budget POINTS`, already checked by
    /// [`crate::vis::FigureOptions::validate`].
    pub fn set_point_budget(&mut self, points: usize) {
        self.point_budget = points;
    }

    /// Whether array figures put row 0 at the top.
    pub fn matrix_orientation(&self) -> bool {
        self.matrix_orientation
    }

    /// `set_matrix_orientation on|off`: kept for this session only.
    pub fn set_matrix_orientation(&mut self, on: bool) {
        self.matrix_orientation = on;
    }

    /// The cache model, reuse sampling and figure colouring.
    pub fn locality(&self) -> &super::state::Settings {
        &self.locality
    }

    /// Replaces the locality settings, then saves them in `.mapvis/` for
    /// later sessions. They apply to this session even when the save
    /// fails, which the error says.
    pub fn set_locality(&mut self, settings: super::state::Settings) -> CmdResult<()> {
        self.locality = settings;
        self.locality.save(&self.folder)
    }

    /// The allocator calls last analysed by the heap commands, if any.
    pub fn heap(&self) -> Option<&super::state::HeapState> {
        self.heap.as_ref()
    }

    /// Keeps `h` as the heap commands' analysed calls (replacing older
    /// ones) and returns it.
    pub fn keep_heap(&mut self, h: super::state::HeapState) -> &mut super::state::HeapState {
        self.heap.insert(h)
    }

    /// The heap commands' analysed calls, to symbolize their stacks.
    pub fn heap_mut(&mut self) -> Option<&mut super::state::HeapState> {
        self.heap.as_mut()
    }

    /// What `run_gleipnir` traces (`set_region`).
    pub fn region(&self) -> &super::state::Region {
        &self.setup.region
    }

    /// `set_region`: saved with the session's settings.
    pub fn set_region(&mut self, region: super::state::Region) {
        self.setup.region = region;
        self.save_settings();
    }

    /// The memory the analysis may use, in bytes, and whether it was set
    /// (`set_memory_limit`) rather than the default.
    pub fn memory_limit(&self) -> (u64, bool) {
        match self.setup.memory_limit {
            Some(b) => (b, true),
            None => (super::state::default_memory_limit(), false),
        }
    }

    /// `set_memory_limit SIZE`, already checked; saved with the settings.
    pub fn set_memory_limit(&mut self, bytes: u64) {
        self.setup.memory_limit = Some(bytes);
        self.save_settings();
    }

    /// `set_mem_alloc H|S|G|all`.
    pub fn set_mem_alloc(&mut self, kind: &str) -> CmdResult<MemKind> {
        let k = MemKind::parse(kind).ok_or_else(|| {
            format!("set_mem_alloc takes H (heap), S (stack), G (globals) or all, not \"{kind}\".")
        })?;
        if k != self.setup.mem {
            self.selected = None;
        }
        self.setup.mem = k;
        self.save_settings();
        Ok(k)
    }

    /// `compile_exe SOURCE.c ?FLAG ...?`: compiles with `cc -g3 -O0`, the
    /// pins header on the include path, into `.mapvis/bin/` (see
    /// [`trace::compile_c`]), then loads it; the source's folder becomes
    /// the source path when none is set.
    pub fn compile_exe(&mut self, source: &str, flags: &[String]) -> CmdResult<PathBuf> {
        let src = self.abs(source);
        let out = trace::compile_c(&trace::CompileRequest {
            source: src.clone(),
            flags: flags.to_vec(),
            include_dir: self.folder.include_dir(),
            bin_dir: self.folder.bin_dir(),
        })?;
        self.load_exe(&out.to_string_lossy())?;
        if self.setup.src_paths.is_empty() {
            if let Some(dir) = src.parent() {
                self.setup.src_paths = vec![dir.to_path_buf()];
                self.save_settings();
            }
        }
        Ok(out)
    }

    // -----------------------------------------------------------------
    // Pipeline
    // -----------------------------------------------------------------

    /// Takes in a finished trace run: a usable trace becomes the current
    /// one (the analysis of the previous one is dropped); either way the
    /// files the run wrote are recorded in the manifest.
    pub fn adopt_trace(&mut self, run: &trace::TracedRun) {
        let mut written = run.children.clone();
        if run.rejected.is_none() {
            written.push(run.outcome.trace_file.clone());
            self.setup.trace_file = Some(run.outcome.trace_file.clone());
            self.forget_analysis();
            self.save_settings();
        } else {
            written.push(run.new_file.clone());
        }
        self.record_written(&written);
    }

    /// The trace to analyse, or a message saying how to get one.
    pub fn trace_path(&self) -> CmdResult<PathBuf> {
        let t = self
            .setup
            .trace_file
            .clone()
            .unwrap_or_else(|| self.folder.trace_file());
        if t.is_file() {
            Ok(t)
        } else {
            Err("there is no trace to analyse: run run_gleipnir (or load_trace FILE) first.".into())
        }
    }

    /// The current analysis, loading the saved one from `.mapvis/` when this
    /// session has none yet.
    ///
    /// An analysis is shown only while it belongs to the current trace: if
    /// the trace has changed since it was analysed (a new run, a failed or
    /// killed one, `load_trace`, another session), this refuses and says to
    /// analyse again. When its trace no longer exists, or the saved analysis
    /// does not say which trace it came from, a warning says so.
    pub fn analysis(&mut self) -> CmdResult<&Analysis> {
        if self.analysis.is_none() {
            let dir = self.analysis_dir();
            let saved = filter::SavedAnalysis::at(&dir);
            if saved.exists() {
                let a = super::saved::load_saved(&self.folder, &dir)?;
                self.analysis_source = saved.source();
                self.check_fresh()?;
                self.analysis = Some(a);
                self.selected = None;
            } else if let Some(why) = saved.unreadable() {
                return Err(format!("the saved analysis cannot be read: {why}.").into());
            } else {
                return Err("there is no analysis yet: run memory_trace_analysis first.".into());
            }
        } else {
            self.check_fresh()?;
        }
        Ok(self.analysis.as_ref().expect("set above"))
    }

    /// The trace results should come from now: the loaded one, else the
    /// folder's last run.
    fn current_trace(&self) -> PathBuf {
        self.setup
            .trace_file
            .clone()
            .unwrap_or_else(|| self.folder.trace_file())
    }

    /// Refuses an analysis whose trace has changed since; warns when that
    /// cannot be told (see [`Freshness`]).
    fn check_fresh(&mut self) -> CmdResult<()> {
        let current = self.current_trace();
        let verdict = Freshness::judge(self.analysis_source.as_ref(), &current);
        if verdict == Freshness::Unknown {
            // Said once: from now on it is taken as the current trace's.
            self.analysis_source = SourceId::of(&current);
        }
        match super::saved::freshness_message(&verdict, &current) {
            Ok(warning) => {
                if let Some(w) = warning {
                    println!("warning: {w}");
                }
                Ok(())
            }
            Err(e) => {
                self.forget_analysis();
                Err(e)
            }
        }
    }

    /// The accesses of the selected memory kinds, computing them if needed.
    pub fn selected(&mut self) -> CmdResult<filter::Selection> {
        let kind = self.setup.mem;
        // Never a selection of a stale analysis.
        self.analysis()?;
        if let Some((k, df)) = &self.selected {
            if *k == kind {
                return Ok(df.clone());
            }
        }
        let a = self.analysis()?;
        let df = filter::select(a, kind)
            .context(|| format!("selecting the {} accesses failed", kind.code()))?;
        self.selected = Some((kind, df.clone()));
        Ok(df)
    }
}
