//! The pipeline commands: setup, tracing, analysis, statistics and figures.
//!
//! Each handler checks what must come before it and says exactly what is
//! missing; argument counts are checked by the registry from the spec
//! table. Handlers print their report and return a Tcl value scripts can use
//! (dicts, lists, the path of a written figure).
use std::path::PathBuf;

use super::error::{CmdResult, Context};
use super::handlers::{
    add, annotate, figure_options, has_save, path_value, report_figure, s, THREADS_NOTE,
};
pub use super::session::Session;
use super::text::counted;
use super::{Registry, Value};
use crate::filter;
use crate::trace;
use crate::vis;

impl Default for Session {
    fn default() -> Self {
        Session::new(std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")))
    }
}

/// Binds every pipeline command to its handler and sets the completion
/// source of array names.
pub fn register_pipeline(r: &mut Registry<Session>) {
    add(r, "load_exe", load_exe);
    add(r, "set_src_path", set_src_path);
    add(r, "set_valgrind_path", set_valgrind_path);
    add(r, "set_arguments", set_arguments);
    add(r, "set_mem_alloc", set_mem_alloc);
    add(r, "set_region", set_region);
    add(r, "set_heap_grouping", set_heap_grouping);
    add(r, "set_memory_limit", set_memory_limit);
    add(r, "set_open_browser", set_open_browser);
    add(r, "set_point_budget", set_point_budget);
    add(r, "set_matrix_orientation", set_matrix_orientation);
    add(r, "compile_exe", compile_exe);
    add(r, "run_gleipnir", run_gleipnir);
    add(r, "memory_trace_analysis", memory_trace_analysis);
    add(r, "filtering_process", filtering_process);
    add(r, "memory_stats", memory_stats);
    add(
        r,
        "complete_memory_access_pattern",
        complete_memory_access_pattern,
    );
    add(r, "2d_memory_access_pattern", array_2d_pattern);
    add(r, "3d_memory_access_pattern", array_3d_pattern);
    add(r, "load_trace", load_trace);
    add(r, "dump_trace", dump_trace);
    add(r, "clear_analysis", clear_analysis);
    add(r, "notes", notes);
    for tool in ["lackey", "helgrind", "cachegrind", "massif", "dhat"] {
        add(r, tool, move |st, _| grind(st, tool));
    }
    r.set_name_source(array_names);
}

/// The array names tab completion offers: those of the session's
/// analysis, or of the one saved in the working folder (its small
/// variable table only) before any command has loaded it; after a Tcl
/// `cd`, those saved in the new folder, which the command will read.
fn array_names(st: &Session) -> Vec<String> {
    let saved = |dir: &std::path::Path| {
        filter::SavedAnalysis::at(dir)
            .array_names()
            .unwrap_or_default()
    };
    if st.folder_moved() {
        // After a Tcl `cd` the command will read the new folder's.
        return saved(&st.folder_to_read().analysis_dir());
    }
    match st.loaded_analysis() {
        Some(a) => a.array_names().into_iter().map(String::from).collect(),
        None => saved(&st.analysis_dir()),
    }
}

/// `load_exe PATH`: loads the program to trace; returns its path.
fn load_exe(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let (p, warning) = st.load_exe(&a[0])?;
    println!("loaded {}", p.display());
    if let Some(w) = warning {
        println!("warning: {w}");
    }
    Ok(path_value(&p))
}

/// `set_src_path DIR ?DIR ...?`: sets the source folders; returns them.
fn set_src_path(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let dirs = st.set_src_path(a)?;
    Ok(Value::List(dirs.iter().map(|d| path_value(d)).collect()))
}

/// `set_valgrind_path PATH`: sets the valgrind binary; returns its path.
fn set_valgrind_path(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    Ok(path_value(&st.set_valgrind_path(&a[0])?))
}

/// `set_arguments ?ARG ...?`: sets the traced program's arguments;
/// returns them.
fn set_arguments(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    st.set_arguments(a);
    Ok(Value::List(a.iter().map(|x| s(x.clone())).collect()))
}

/// `set_region ?pins|off|function|lines|window? ?ARGS ...?`: what
/// `run_gleipnir` traces: `pins` (the default), `off` the whole run,
/// `function NAME ?CALLS?` or `lines FILE:FIRST-LAST`; alone, prints the
/// setting. A function or lines are looked up in the loaded program at
/// once, so a name that matches nothing or several functions is refused
/// here with the candidates and the setting is unchanged. `window SKIP
/// COUNT ?EVERY?` traces windows of the run's accesses. Returns the
/// setting's words.
fn set_region(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    use super::state::Region;
    let words = |r: &Region| Value::List(r.words().into_iter().map(s).collect());
    if a.is_empty() {
        println!("region: {}", st.region().describe());
        return Ok(words(st.region()));
    }
    let region = Region::parse(a)?;
    if let Some(exe) = st.exe() {
        super::pipeline::code_region(&region, exe).map_err(|e| {
            format!(
                "{}; the region setting is unchanged ({}).",
                e.to_string().trim_end_matches("; nothing was traced."),
                st.region().words().join(" ")
            )
        })?;
    }
    st.set_region(region.clone());
    println!("region: {}", region.describe());
    Ok(words(&region))
}

/// `set_mem_alloc H|S|G|all`: chooses the memory kinds kept; returns the
/// code.
fn set_mem_alloc(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let k = st.set_mem_alloc(&a[0])?;
    let what = match k {
        filter::MemKind::Heap => "heap blocks",
        filter::MemKind::Stack => "stack variables",
        filter::MemKind::Global => "globals and statics",
        filter::MemKind::All => "heap, stack and globals",
    };
    println!("memory kind: {} ({what})", k.code());
    Ok(s(k.code()))
}

/// `set_memory_limit ?SIZE?`: the memory the analysis may use (bytes, or
/// with K, M or G); alone, prints it. Returns the limit in bytes.
fn set_memory_limit(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    use super::state::{parse_size, MIN_MEMORY_LIMIT};
    if let Some(text) = a.first() {
        let bytes = parse_size(text)?;
        if bytes < MIN_MEMORY_LIMIT {
            return Err(format!(
                "{text} is below the smallest memory limit, 512M (the analysis needs about that much whatever the trace); the limit is unchanged ({})",
                mib(st.memory_limit().0)
            )
            .into());
        }
        st.set_memory_limit(bytes);
    }
    let (bytes, set) = st.memory_limit();
    println!(
        "memory limit: {}{}; memory_trace_analysis counts what does not fit on disk in .mapvis/",
        mib(bytes),
        if set {
            ""
        } else {
            " (the default: a quarter of this machine's memory, at most 2G)"
        }
    );
    Ok(Value::Int(bytes as i64))
}

/// `bytes` in MiB, as `set_memory_limit` shows it (`1024M`).
fn mib(bytes: u64) -> String {
    format!("{}M", bytes >> 20)
}

/// `set_heap_grouping root|site|instances`: how statistics and figures
/// show heap blocks and the instances of a local variable.
fn set_heap_grouping(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    st.set_grouping(filter::Grouping::parse(&a[0]).unwrap_or_default());
    let (row, local) = match a[0].as_str() {
        "root" => ("name (the blocks reached from one root)", "variable"),
        "site" => ("allocation site", "variable"),
        _ => ("block", "instance (frame)"),
    };
    println!(
        "heap blocks in memory_stats: one row per {row}; local variables: one row per {local}"
    );
    Ok(s(a[0].clone()))
}

/// `set_open_browser on|off`: whether figures open in a browser. The table
/// admits only `on` and `off`.
fn set_open_browser(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    st.set_open_browser(a[0] == "on");
    Ok(s(a[0].clone()))
}

/// `set_point_budget POINTS`: the points a figure draws before it
/// aggregates; refused (with the figure stage's reason) when unusable.
fn set_point_budget(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let n: usize = a[0].parse().map_err(|_| {
        format!(
            "set_point_budget takes a number of points, not \"{}\".",
            a[0]
        )
    })?;
    let mut opts = figure_options(st, false);
    opts.point_budget = n;
    opts.validate()?;
    st.set_point_budget(n);
    Ok(Value::Int(n as i64))
}

/// `set_matrix_orientation on|off`: whether array figures put row 0 at the
/// top.
fn set_matrix_orientation(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    st.set_matrix_orientation(a[0] == "on");
    Ok(s(a[0].clone()))
}

/// `compile_exe SOURCE.c ?FLAG ...?`: compiles and loads the program;
/// returns the executable's path.
fn compile_exe(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let exe = st.compile_exe(&a[0], &a[1..])?;
    println!("compiled and loaded {}", exe.display());
    Ok(path_value(&exe))
}

/// `complete_memory_access_pattern ?save|arrays|NAME|-NAME ...?`: draws
/// every selected access; returns the figure's path.
fn complete_memory_access_pattern(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let filter = filter::VarFilter::parse(a.iter().map(String::as_str).filter(|w| *w != "save"));
    complete_pattern(st, has_save(a), &filter)
}

/// `dump_trace ?FILE? ?LIMIT?`: prints the trace (by default the current
/// one) as text, at most LIMIT events (200 by default).
fn dump_trace(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let path = if a.is_empty() {
        st.trace_path()?
    } else {
        PathBuf::from(&a[0])
    };
    let limit =
        match a.get(1) {
            Some(l) => Some(l.parse::<u64>().map_err(|_| {
                format!("dump_trace LIMIT must be a number of events, not \"{l}\".")
            })?),
            None => Some(200),
        };
    let stdout = std::io::stdout();
    trace::dump(&path, limit, &mut stdout.lock())?;
    Ok(Value::Empty)
}

/// `run_gleipnir`: traces the loaded program; returns a dict of the trace,
/// its counts, the program's exit and the traces of forked children.
fn run_gleipnir(st: &mut Session, _: &[String]) -> CmdResult<Value> {
    println!(
        "tracing {} {} under the mapvis Valgrind tool (Ctrl-C stops it and keeps what was traced)...",
        st.exe().map(|p| p.display().to_string()).unwrap_or_default(),
        st.args().join(" ")
    );
    // The previous trace as it was, to tell whether it is still kept: the
    // traced program may have written to it by name.
    let before = st.trace_file().and_then(crate::workdir::SourceId::of);
    let run = super::pipeline::run_gleipnir(st);
    // A Ctrl-C during the run went to the traced program too, which ended
    // with a readable trace: the command did its job, so the interrupt is
    // consumed here rather than turned into an error.
    crate::cancel::clear();
    let run = run?;
    let outcome = &run.outcome;
    if let Some(note) = outcome.start.note() {
        println!("note: {note}");
    }
    if outcome.signal == Some(2) {
        println!("interrupted by Ctrl-C: what was traced so far is kept.");
    }
    for child in &run.children {
        println!(
            "note: the program forked; a child process wrote its own trace {} (load_trace {} analyses it instead of the parent's).",
            child.display(),
            child.display()
        );
    }
    if let Some(why) = &run.rejected {
        let now = st.trace_file().and_then(crate::workdir::SourceId::of);
        return Err(format!(
            "the program {}, and {why}. {} The new trace was left in {}.",
            outcome.describe(),
            match (&before, &now) {
                (Some(b), Some(n)) if b == n => format!(
                    "The previous trace {} is kept, with its analysis.",
                    b.path.display()
                ),
                (Some(b), _) => format!(
                    "The previous trace {} was changed or removed while the program ran (did the program write to it?), so it no longer holds what was analysed: run run_gleipnir again.",
                    b.path.display()
                ),
                (None, _) => "There was no previous trace.".to_string(),
            },
            run.new_file.display()
        )
        .into());
    }
    let c = run.check.clone().unwrap_or_default();
    println!(
        "the program {}; {} accesses in {} were recorded in {}{}.",
        outcome.describe(),
        c.accesses,
        counted(c.regions, "region"),
        outcome.trace_file.display(),
        match (&c.exec, c.complete) {
            (_, true) => String::new(),
            (Some(exec), false) => format!(" ({exec}; it is readable)"),
            (None, false) => " (the trace is cut short, but readable)".to_string(),
        }
    );
    let opt_int = |v: Option<i32>| v.map(|c| Value::Int(c as i64)).unwrap_or(Value::Empty);
    Ok(Value::Dict(vec![
        ("trace".into(), path_value(&outcome.trace_file)),
        ("accesses".into(), Value::Int(c.accesses as i64)),
        ("regions".into(), Value::Int(c.regions as i64)),
        ("exit_code".into(), opt_int(outcome.exit_code)),
        ("signal".into(), opt_int(outcome.signal)),
        (
            "children".into(),
            Value::List(run.children.iter().map(|p| path_value(p)).collect()),
        ),
    ]))
}

/// `memory_trace_analysis`: names every access of the trace and saves the
/// analysis; returns a dict of its counts.
fn memory_trace_analysis(st: &mut Session, _: &[String]) -> CmdResult<Value> {
    let path = st.trace_path()?;
    // A saved run is never changed: its trace is analysed into the
    // folder's own analysis.
    st.leave_run(Some(path.clone()));
    // Identified before it is read: results carry the trace they came from.
    let source = crate::workdir::SourceId::of(&path);
    let mut namer = trace::ProgramNamer::new(st.exe(), st.src_paths());
    println!(
        "analysing {} (Ctrl-C stops it and keeps what was analysed)...",
        path.display()
    );
    let mut shown = super::progress::Progress::after(std::time::Duration::from_secs(1));
    let mut progress = |n: u64| {
        shown.show(|| {
            let runs = filter::Keep::spilled_runs();
            let spill = match runs {
                0 => String::new(),
                r => format!(
                    "; the locations outgrew the memory limit and spill to .mapvis/ ({r} part{} on disk)",
                    if r == 1 { "" } else { "s" }
                ),
            };
            format!("  {:.1} M accesses analysed{spill}", n as f64 / 1e6)
        });
    };
    // The access list streams into a new saved analysis, which replaces
    // the previous one only when complete.
    let out = filter::AnalysisDir::begin(&st.folder().analysis_dir())?;
    let dataset = out.dataset();
    let limit = st.memory_limit().0;
    // The cache model set now is fed as the analysis streams, so that
    // cache_stats for it only prints.
    let opts = super::handlers::cache_options(st);
    let plan = filter::LocalityPlan {
        model: opts.model,
        sampling: opts.sampling,
        auto_above: opts.auto_above,
        budget: filter::Keep::locality_budget(limit),
    };
    let keep = filter::Keep::within(&dataset, limit);
    let a = filter::analyse_recording(&path, &mut namer, &mut progress, &keep, Some(&plan));
    shown.finish();
    crate::cancel::clear();
    let mut a = a?;
    for n in super::notes::grouped(&a.summary.notes) {
        println!("note: {}", super::text::terminal_safe(&n));
    }
    let user_vars = a.vars.iter().filter(|v| !v.internal).count();
    println!(
        "{} accesses by {} in {}; {} and heap blocks ({} in the run).",
        a.summary.accesses,
        counted(a.summary.threads.len() as u64, "thread"),
        counted(a.summary.regions, "region"),
        counted(user_vars as u64, "variable"),
        // Not the blocks a forked child inherited: those are not its own.
        counted(a.summary.allocations, "allocation")
    );
    if let Some(r) = a
        .summary
        .region_text()
        .filter(|_| a.summary.scope != "pins")
    {
        println!("region: {}", super::text::terminal_safe(&r));
    }
    if a.summary.threads.len() > 1 {
        println!("note: {THREADS_NOTE}");
    }
    st.forget_analysis();
    a.summary.analysis_id = crate::workdir::new_analysis_id(source.as_ref());
    let files = out.commit(&mut a, source.as_ref())?;
    st.record_written(&files);
    super::pipeline::mark_stale_outputs(st.folder());
    let v = Value::Dict(vec![
        ("accesses".into(), Value::Int(a.summary.accesses as i64)),
        ("variables".into(), Value::Int(user_vars as i64)),
        ("regions".into(), Value::Int(a.summary.regions as i64)),
        (
            "threads".into(),
            Value::List(
                a.summary
                    .threads
                    .iter()
                    .map(|t| Value::Int(*t as i64))
                    .collect(),
            ),
        ),
    ]);
    st.adopt_analysis(a, source);
    Ok(v)
}

/// Above this many selected accesses, `filtering_process` writes the order
/// data only when asked (`save`): 4 M rows are about 170 MB of CSV.
const ORDER_DATA_AUTO_ROWS: u64 = 4 << 20;

/// `filtering_process ?save?`: writes the allocation info and the order
/// data of the selected accesses to `visinfo/`; returns the files.
fn filtering_process(st: &mut Session, args: &[String]) -> CmdResult<Value> {
    let save = has_save(args);
    let kind = st.mem();
    let sel = st.selected()?;
    let dir = st.folder().visinfo_dir();
    let work_dir = st.work_dir().to_path_buf();
    let a = st.analysis()?;
    let mut files = a.write_allocation_info(&dir)?;
    super::session::record_written_in(&work_dir, &files);
    let order = save || sel.len() <= ORDER_DATA_AUTO_ROWS;
    if order {
        let more = a.write_order_data(&sel, &dir)?;
        super::session::record_written_in(&work_dir, &more);
        files.extend(more);
    }
    let vars = a
        .vars
        .iter()
        .filter(|v| v.accessed.is_some() && kind.shows(v))
        .count();
    println!(
        "{} of {} accesses are {} ({}), in {}; {} written to {}.",
        sel.len(),
        a.accesses.len(),
        match kind {
            filter::MemKind::Heap => "heap",
            filter::MemKind::Stack => "stack",
            filter::MemKind::Global => "global",
            filter::MemKind::All => "of any kind",
        },
        kind.code(),
        counted(vars as u64, "variable"),
        if order {
            "order data and allocation info"
        } else {
            "allocation info"
        },
        dir.display()
    );
    if !order {
        println!(
            "note: the order data of {} accesses (about {} MB as CSV) was not written; \
             filtering_process save writes it.",
            sel.len(),
            sel.len() * 40 / 1_000_000
        );
    }
    if sel.is_empty() && !a.accesses.is_empty() {
        println!(
            "note: nothing is selected with set_mem_alloc {}: try set_mem_alloc all (or H, S, G).",
            kind.code()
        );
    }
    Ok(Value::List(files.iter().map(|f| path_value(f)).collect()))
}

/// `memory_stats ?save?`: prints the per-variable and per-address
/// statistics; returns a list of per-variable dicts.
/// `notes`: every note of the saved analysis, numbered, as the analysis
/// made them (memory_trace_analysis prints many notes of one kind as one
/// line with a count), then those about heap blocks the region never
/// touched, which it does not print. Returns them all as a list.
fn notes(st: &mut Session, _: &[String]) -> CmdResult<Value> {
    let a = st.analysis()?;
    let (notes, outside) = (&a.summary.notes, &a.summary.outside_notes);
    if notes.is_empty() && outside.is_empty() {
        println!(
            "the analysis of {} made no note.",
            super::text::terminal_safe(&a.summary.command.join(" "))
        );
    }
    for (i, n) in notes.iter().enumerate() {
        println!("{:>3}. {}", i + 1, super::text::terminal_safe(n));
    }
    if !outside.is_empty() {
        println!(
            "about heap blocks the region never touched (not printed by memory_trace_analysis):"
        );
    }
    for (i, n) in outside.iter().enumerate() {
        println!(
            "{:>3}. {}",
            notes.len() + i + 1,
            super::text::terminal_safe(n)
        );
    }
    Ok(Value::List(
        notes
            .iter()
            .chain(outside)
            .map(|n| Value::Str(n.clone()))
            .collect(),
    ))
}

fn memory_stats(st: &mut Session, args: &[String]) -> CmdResult<Value> {
    let save = has_save(args);
    let sel = st.selected()?;
    let kind = st.mem();
    let dir = st.folder().visinfo_dir();
    let grouping = st.grouping();
    let a = st.analysis()?;
    let m = filter::memory_stats(a, kind, grouping)?;
    println!(
        "memory_stats ({} accesses, set_mem_alloc {}):",
        sel.len(),
        kind.code()
    );
    if let Some(w) = super::handlers::partial_warning(a) {
        println!("{w}");
    }
    print!("{}", super::render::memory_stats(&m));
    if save {
        let [p1, p2] = m.save(a, &dir)?;
        st.record_written(std::slice::from_ref(&p1));
        println!("wrote {} and {}", p1.display(), p2.display());
        st.record_written(std::slice::from_ref(&p2));
    }
    let cols = filter::MemoryStats::VARIABLE_COLUMNS;
    let result = super::render::variable_rows(&m)
        .iter()
        .map(|r| {
            Value::Dict(
                cols.iter()
                    .zip(r)
                    .map(|(c, v)| {
                        let val = match v.parse::<i64>() {
                            Ok(n) if *c != "variable" => Value::Int(n),
                            _ => s(v.clone()),
                        };
                        (c.to_string(), val)
                    })
                    .collect(),
            )
        })
        .collect();
    Ok(Value::List(result))
}

fn complete_pattern(st: &mut Session, save: bool, f: &filter::VarFilter) -> CmdResult<Value> {
    let mut sel = st.selected()?;
    let mut opts = figure_options(st, save);
    let grouping = st.grouping();
    st.analysis()?;
    let a = st.loaded_analysis().expect("analysis loaded above");
    if !f.is_empty() {
        let keep = f.keep(&a.vars)?;
        sel = sel.narrow(a, &keep)?;
    }
    if sel.is_empty() {
        return Err(format!(
            "there are no {} accesses to draw{}: change set_mem_alloc (H, S, G or all) and run filtering_process again{}.",
            st.mem().code(),
            if f.is_empty() { "" } else { " among the variables the filter keeps" },
            if f.is_empty() { "" } else { ", or widen the filter" },
        )
        .into());
    }
    println!(
        "drawing {} accesses into {}...",
        sel.len(),
        opts.figures_dir
            .join("complete_memory_access_pattern.html")
            .display()
    );
    // The figure streams the selected accesses from the access list, once
    // per pass, and keeps only what it draws.
    let src = annotate(st, a, sel, &mut opts)?;
    let shown = a.variables_for_display(grouping)?;
    let r = vis::complete_pattern_of(&src, &shown, &a.lines, &opts)?;
    Ok(report_figure(st, &r))
}

fn parse_dim(what: &str, v: &str) -> CmdResult<u64> {
    match v.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{what} must be a positive whole number, not \"{v}\".").into()),
    }
}

/// `2d_memory_access_pattern NAME ?COLS? ?TYPEBYTES? ?save?`: draws the
/// array NAME as rows of COLS elements of TYPEBYTES bytes (given together,
/// or both left out to infer them); returns the figure's path.
fn array_2d_pattern(st: &mut Session, args: &[String]) -> CmdResult<Value> {
    array_pattern(st, args, 2)
}

/// `3d_memory_access_pattern NAME ?COLS? ?DEPTH? ?TYPEBYTES? ?save?`: draws
/// the array NAME as rows of COLS x DEPTH elements of TYPEBYTES bytes
/// (given together, or all left out to infer them); returns the figure's
/// path.
fn array_3d_pattern(st: &mut Session, args: &[String]) -> CmdResult<Value> {
    array_pattern(st, args, 3)
}

/// The 2D (`ndim` 2) and 3D array figures. The command table admits the
/// dimensions all or none (see [`super::specs::opt_with`]), so `args` is
/// NAME, then `ndim` dimensions or none, then maybe `save`.
fn array_pattern(st: &mut Session, args: &[String], ndim: usize) -> CmdResult<Value> {
    use filter::DrawShape;
    let save = args.len() > 1 && args[args.len() - 1] == "save";
    let nums = &args[1..args.len() - usize::from(save)];
    let name = args[0].clone();
    let mut opts = figure_options(st, save);
    // The page is named by the user's words (mapvisual's file names).
    opts.file_name = Some(name.clone());
    st.analysis()?;
    let a = st.loaded_analysis().expect("analysis loaded above");
    let var = match a.resolve_array(&name) {
        Ok(v) => v,
        Err(e) => match filter::BlockStack::of(a, &name) {
            Some(stack) if ndim == 2 => return stacked_pattern(st, &stack, nums, opts),
            _ => return Err(e.into()),
        },
    };
    let shape = if !nums.is_empty() {
        let cols = parse_dim("COLS", &nums[0])?;
        let depth = if ndim == 3 {
            parse_dim("DEPTH", &nums[1])?
        } else {
            1
        };
        let elem = parse_dim("TYPEBYTES", &nums[ndim - 1])?;
        DrawShape::Grid { cols, depth, elem }
    } else {
        let shape = a.infer_shape(var, ndim)?;
        if let DrawShape::Grid { cols, depth, elem } = shape {
            println!(
                "inferred for {}: {cols} columns{}, {elem} bytes per element",
                super::text::terminal_safe(&name),
                if ndim == 3 {
                    format!(", depth {depth}")
                } else {
                    String::new()
                },
            );
        }
        shape
    };
    let (cols, depth, tb) = match shape {
        DrawShape::Grid { cols, depth, elem } => (cols, depth, elem),
        DrawShape::Fields { elem, fields } => {
            return struct_pattern(st, var, &name, elem, fields, opts)
        }
    };
    let sel = filter::Selection::of(a, (0..a.vars.len()).map(|v| v == var.index()).collect())?;
    let src = annotate(st, a, sel, &mut opts)?;
    println!(
        "drawing {} accesses of {}...",
        filter::AccessBatches::len(&src),
        super::text::terminal_safe(&name)
    );
    let layout = if ndim == 2 {
        vis::ArrayLayout::Grid2d {
            cols,
            type_bytes: tb,
        }
    } else {
        vis::ArrayLayout::Grid3d {
            cols,
            depth,
            type_bytes: tb,
        }
    };
    let r = vis::array_pattern_of(&src, (&a.variables, &a.lines), var, layout, &opts)?;
    Ok(report_figure(st, &r))
}

/// Draws the heap blocks of one site that `stack`'s name stands for side
/// by side, one row per block in allocation order: by field when the
/// blocks hold structures, else as rows of `stride / element size`
/// elements, or as the user's `COLS TYPEBYTES` (`nums`).
fn stacked_pattern(
    st: &mut Session,
    stack: &filter::BlockStack,
    nums: &[String],
    mut opts: vis::FigureOptions,
) -> CmdResult<Value> {
    let a = st.loaded_analysis().expect("analysis loaded by the caller");
    let first = stack.first();
    let name = super::text::terminal_safe(&stack.name).into_owned();
    println!(
        "\"{name}\" names {} blocks allocated at {}: drawn side by side, one row of {} bytes per block in allocation order.",
        stack.members.len(),
        super::text::terminal_safe(&a.vars[first.index()].site),
        stack.stride
    );
    let fields = a.single_struct_fields(first)?;
    let layout_fields: Vec<(u64, String)>;
    let layout = if let [cols, elem] = nums {
        vis::ArrayLayout::Grid2d {
            cols: parse_dim("COLS", cols)?,
            type_bytes: parse_dim("TYPEBYTES", elem)?,
        }
    } else if !fields.is_empty() && stack.stride == stack.elem(a) {
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        println!(
            "each block is one {}-byte structure: one column per field ({}).",
            stack.stride,
            super::text::terminal_safe(&names.join(", "))
        );
        if let Some(t) = super::render::untouched_fields(&fields) {
            println!(
                "never touched by the region (blank columns): {}.",
                super::text::terminal_safe(&t)
            );
        }
        layout_fields = fields.into_iter().map(|f| (f.offset, f.name)).collect();
        vis::ArrayLayout::Fields {
            elem_bytes: stack.stride,
            fields: &layout_fields,
        }
    } else {
        let elem = stack.elem(a);
        vis::ArrayLayout::Grid2d {
            cols: stack.stride.div_ceil(elem).max(1),
            type_bytes: elem,
        }
    };
    let mut mask = vec![false; a.vars.len()];
    for &m in &stack.members {
        mask[m.index()] = true;
    }
    let sel = filter::Selection::of(a, mask)?;
    let src = annotate(st, a, sel, &mut opts)?;
    let stacked = stack.batches(a, &src);
    let vars = stack.variables(a)?;
    let r = vis::array_pattern_of(&stacked, (&vars, &a.lines), first, layout, &opts)?;
    Ok(report_figure(st, &r))
}

/// Draws an array of structures one column per field.
fn struct_pattern(
    st: &mut Session,
    var: filter::VarId,
    name: &str,
    elem: u64,
    fields: Vec<filter::StructField>,
    mut opts: vis::FigureOptions,
) -> CmdResult<Value> {
    st.analysis()?;
    let a = st.loaded_analysis().expect("analysis loaded above");
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    println!(
        "{} is an array of {elem}-byte structures: one column per field ({}).",
        super::text::terminal_safe(name),
        super::text::terminal_safe(&names.join(", "))
    );
    if let Some(t) = super::render::untouched_fields(&fields) {
        println!(
            "never touched by the region (blank columns): {}.",
            super::text::terminal_safe(&t)
        );
    }
    let cols: Vec<(u64, String)> = fields.into_iter().map(|f| (f.offset, f.name)).collect();
    let sel = filter::Selection::of(a, (0..a.vars.len()).map(|v| v == var.index()).collect())?;
    let src = annotate(st, a, sel, &mut opts)?;
    let layout = vis::ArrayLayout::Fields {
        elem_bytes: elem,
        fields: &cols,
    };
    let r = vis::array_pattern_of(&src, (&a.variables, &a.lines), var, layout, &opts)?;
    Ok(report_figure(st, &r))
}

/// `load_trace FILE`: makes FILE (a mapvis binary or Gleipnir text trace)
/// the trace to analyse; returns its path.
fn load_trace(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let file = &a[0];
    let p = std::fs::canonicalize(st.work_dir().join(file))
        .context(|| format!("the trace {file} cannot be read"))?;
    // A named pipe or device is refused before it is opened for good: an
    // open of a pipe waits for a writer, and Ctrl-C cannot end that wait.
    if let Err(e) = crate::workdir::open_regular(&p) {
        let todo = if e.kind() == std::io::ErrorKind::InvalidInput {
            format!(" mapvis reads a trace from a regular file: copy it into one (for example cat {file} > trace.txt) and load that.")
        } else {
            " Check that it exists and is readable.".into()
        };
        return Err(format!("the trace {} cannot be loaded: {e}.{todo}", p.display()).into());
    }
    let is_text = trace::looks_like_gleipnir(&p);
    if !is_text {
        // Fail now, with the reader's message, rather than at analysis.
        trace::TraceReader::open(&p)?;
    }
    st.set_trace(Some(p.clone()));
    println!(
        "loaded the {} trace {}; run memory_trace_analysis next.",
        if is_text {
            "Gleipnir text"
        } else {
            "mapvis binary"
        },
        p.display()
    );
    Ok(path_value(&p))
}

/// `clear_analysis`: removes the files mapvis wrote in the working folder,
/// those its stages reported and the manifest lists, unchanged since,
/// never through a symbolic link (see [`crate::workdir::clear`]); returns
/// the files removed.
fn clear_analysis(st: &mut Session, _: &[String]) -> CmdResult<Value> {
    let cleared = crate::workdir::clear(st.work_dir())?;
    st.set_trace(None);
    if cleared.removed.is_empty() {
        println!("nothing to remove: mapvis has written no trace, analysis or figure here.");
    } else {
        println!("removed {} file(s):", cleared.removed.len());
        for p in &cleared.removed {
            println!("  {}", p.display());
        }
    }
    for (p, why) in &cleared.kept {
        println!("kept {}: {why}.", p.display());
    }
    Ok(Value::List(
        cleared.removed.iter().map(|p| path_value(p)).collect(),
    ))
}

/// `lackey`, `helgrind`, `cachegrind`, `massif`, `dhat` (the `tool`):
/// runs the loaded program under one of Valgrind's own tools, output in
/// `grindanalysis/`, and prints a short summary where the tool allows it;
/// returns the log's path.
fn grind(st: &mut Session, tool: &str) -> CmdResult<Value> {
    let exe = st.program_to_run(&format!(
        "{tool} needs an executable: use load_exe PATH first."
    ))?;
    let req = trace::GrindRequest {
        valgrind: trace::find_valgrind(st.valgrind())?,
        tool: tool.to_string(),
        exe: exe.clone(),
        args: st.args().to_vec(),
        out_dir: st.folder().grind_dir(),
    };
    println!("running {} under valgrind --tool={tool}...", exe.display());
    let run = trace::run_grind(&req)?;
    st.record_written(&run.written);
    for l in &run.summary {
        println!("  {l}");
    }
    println!(
        "{tool} finished ({}); its output is in {}{}",
        if run.status.success() {
            "ok".to_string()
        } else {
            format!("status {}", run.status)
        },
        run.log.display(),
        run.out_file
            .as_ref()
            .map(|f| format!(" and {}", f.display()))
            .unwrap_or_default()
    );
    Ok(path_value(&run.log))
}
