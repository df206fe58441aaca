//! The allocation-side commands: `heap_profile`, `alloc_sites`,
//! `heap_stats`, `heap_figures`, `lifetime_histogram` and the exports
//! `export_memtrace` and `export_ops`.
//!
//! The analyses live in the analysis stage ([`crate::filter::HeapReport`],
//! [`crate::filter::export_memtrace`]); these handlers choose the data, call them and
//! print. The allocation commands work on the most recent of the native
//! heap profile (`heap_profile`) and the Valgrind trace (`run_gleipnir`,
//! `load_trace`), whichever file is newer, and say which they used.
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::error::CmdResult;
use super::handlers::{add, figure_options, fmt_table, report_figure};
use super::session::Session;
use super::state::HeapState;
use super::text::counted;
use super::{Registry, Value};
use crate::filter::{HeapReport, HeapRun, Ranking};
use crate::trace::BacktraceSymbolizer;
use crate::trace::{run_profiled_with, ProfileOptions};

fn s(v: impl Into<String>) -> Value {
    Value::Str(v.into())
}

fn stamp(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Where heap_profile writes the profile.
pub fn profile_path(st: &Session) -> PathBuf {
    st.folder().heap_profile()
}

/// Refuses `trace` when it is a Gleipnir text trace (loaded with
/// `load_trace`), which `what` cannot read, saying what they need
/// instead: the binary trace's reader would only say "not a mapvis binary
/// trace" and advise the load_trace the user already ran.
fn refuse_text_trace(trace: &Path, what: &str) -> CmdResult<()> {
    if crate::trace::looks_like_gleipnir(trace) {
        return Err(format!(
            "{} is a Gleipnir text trace (loaded with load_trace), which does not record the allocator's calls with their call stacks that {what} works on: a mapvis binary trace (run_gleipnir) or a native heap profile (heap_profile) does. Make one of them and run the command again.",
            trace.display()
        )
        .into());
    }
    Ok(())
}

/// The allocator calls of the newest run (native profile or trace).
fn heap_state(st: &mut Session) -> CmdResult<&mut HeapState> {
    let prof = profile_path(st);
    let trace = st.trace_path().ok();
    let pick = match (prof.is_file().then_some(&prof), trace.as_ref()) {
        (Some(p), Some(t)) => {
            if stamp(p) >= stamp(t) {
                p.clone()
            } else {
                t.clone()
            }
        }
        (Some(p), None) => p.clone(),
        (None, Some(t)) => t.clone(),
        (None, None) => {
            return Err(
                "there is no run to analyse: run heap_profile (native) or run_gleipnir \
                        (Valgrind) first."
                    .into(),
            )
        }
    };
    let fresh = st
        .heap()
        .is_some_and(|h| h.path == pick && h.stamp == stamp(&pick));
    if fresh {
        return Ok(st.heap_mut().expect("checked above"));
    }
    let run = if pick == prof {
        HeapRun::open_profile(&pick)?
    } else {
        refuse_text_trace(
            &pick,
            "heap_stats, alloc_sites, heap_figures and lifetime_histogram",
        )?;
        HeapRun::from_trace(&pick)?
    };
    let report = HeapReport::build(&run)?;
    let sym = BacktraceSymbolizer::new(run.maps.clone(), st.exe());
    Ok(st.keep_heap(HeapState {
        stamp: stamp(&pick),
        path: pick,
        run,
        report,
        sym,
    }))
}

/// What a heap page was drawn from: `heap profile FILE of ./prog 2 100,
/// recorded 2026-11-29 11:40 UTC`. A heap page shows the allocator's
/// calls, not the analysed accesses, so the trace, the memory kind and
/// the analysis of the access figures' line do not apply to it.
fn heap_provenance(h: &HeapState) -> String {
    let command = h.run.command.join(" ");
    let mut out = match &h.run.partial {
        Some(why) => format!("PARTIAL heap profile ({why}): {}", h.run.source),
        None => h.run.source.clone(),
    };
    if !command.is_empty() {
        out.push_str(&format!(" of {command}"));
    }
    let recorded = h
        .stamp
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    if let Some(t) = recorded {
        out.push_str(&format!(
            ", recorded {} UTC",
            super::text::utc_date(t.as_secs())
        ));
    }
    out
}

/// Says what the user should know of the run: first that it is PARTIAL,
/// with why, then its notes.
fn say_notes(h: &HeapState) {
    if let Some(why) = &h.run.partial {
        println!(
            "warning: this {} is PARTIAL ({why}): its counts cover only part of the run.",
            h.run.source
        );
    }
    for n in super::notes::grouped(&h.run.notes) {
        println!("note: {n}");
    }
    if let Some(n) = h.run.timing_note() {
        println!("note: {n}");
    }
}

/// Frames of a stack, as text, without the allocator's own frames.
fn backtrace(h: &mut HeapState, stack: u32) -> Vec<String> {
    let ips = h
        .run
        .stacks
        .get(stack as usize)
        .cloned()
        .unwrap_or_default();
    h.sym.backtrace(&ips).iter().map(|f| f.display()).collect()
}

/// Binds the allocation-side commands (each holding the folder's lock,
/// see the handlers' `add`).
pub fn register(r: &mut Registry<Session>) {
    add(r, "heap_profile", heap_profile);
    add(r, "alloc_sites", alloc_sites);
    add(r, "heap_stats", heap_stats);
    add(r, "heap_figures", heap_figures);
    add(r, "lifetime_histogram", lifetime_histogram);
    add(r, "export_memtrace", export_memtrace);
    add(r, "export_ops", export_ops);
}

/// `lifetime_histogram ?save?`: draws the histogram of block macro
/// lifetimes; returns the figure's path.
fn lifetime_histogram(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    st.follow_cwd();
    let save = a.iter().any(|x| x == "save");
    let mut opts = figure_options(st, save);
    let root = st.work_dir().to_path_buf();
    let h = heap_state(st)?;
    opts.provenance = heap_provenance(h);
    opts.analysis_id = crate::vis::file_source(&root, &h.path);
    say_notes(h);
    let rep = crate::vis::lifetime_histogram(&h.run, &opts)?;
    Ok(report_figure(st, &rep))
}

/// `export_memtrace FILE`: writes the trace as Steve's memtrace; returns
/// the file's path.
fn export_memtrace(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    export(st, &a[0], Export::Memtrace)
}

/// `export_ops FILE`: writes Steve's ops file of heap-block operations;
/// returns the file's path.
fn export_ops(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    export(st, &a[0], Export::Ops)
}

/// `heap_profile ?time_all|calls ...?`: runs the loaded program natively
/// under the heap profiler (timing a sample of the calls, or every call
/// with `time_all`; writing only the summary the profiler keeps, or every
/// call too with `calls`) and prints a summary; returns a dict of its
/// totals.
fn heap_profile(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    st.follow_cwd();
    let options = ProfileOptions {
        time_every_call: a.iter().any(|x| x == "time_all"),
        calls: a.iter().any(|x| x == "calls"),
    };
    let exe =
        st.program_to_run("no program is loaded: load_exe PATH (or compile_exe SOURCE.c) first.")?;
    let out = profile_path(st);
    let outcome = run_profiled_with(&exe, st.args(), &out, options)?;
    if !out.is_file() {
        return Err(format!(
            "{} {} and wrote no heap profile: it may be statically linked (LD_PRELOAD cannot \
             reach its malloc) or setuid. Link it dynamically (the default of cc).",
            exe.display(),
            outcome.describe()
        )
        .into());
    }
    st.record_written(std::slice::from_ref(&out));
    let h = heap_state(st)?;
    let r = &h.report;
    println!(
        "heap_profile: {} {}; {} ({} bytes), {}, peak {} live bytes, {} bytes in {} \
         never freed, {}, {:.3} s; profile {}.",
        exe.display(),
        outcome.describe(),
        counted(r.counts.allocs, "allocation"),
        r.counts.bytes,
        counted(r.counts.frees, "free"),
        r.counts.peak_live.0,
        r.counts.leaked.0,
        counted(r.counts.leaked.1, "block"),
        counted(r.counts.threads, "thread"),
        h.run.end_time as f64 / 1e9,
        h.path.display()
    );
    if !h.run.regions.is_empty() {
        println!(
            "{} marked; {} made inside them.",
            counted(h.run.regions.len() as u64, "pinned region"),
            match r.counts.region_allocs {
                1 => "1 allocation was".to_string(),
                n => format!("{n} allocations were"),
            }
        );
    }
    say_notes(h);
    let out = Value::Dict(vec![
        ("allocations".into(), Value::Int(r.counts.allocs as i64)),
        ("frees".into(), Value::Int(r.counts.frees as i64)),
        ("bytes".into(), Value::Int(r.counts.bytes as i64)),
        ("peak".into(), Value::Int(r.counts.peak_live.0 as i64)),
        ("leaked".into(), Value::Int(r.counts.leaked.0 as i64)),
        ("file".into(), s(h.path.display().to_string())),
    ]);
    // Heap pages of the previous profile are no longer current.
    super::pipeline::refresh_index(st.folder());
    Ok(out)
}

/// `alloc_sites ?N? ?save?`: lists the top N allocation sites by bytes,
/// count, peak, leaks and temporaries, with their backtraces; returns a
/// list of per-site dicts.
fn alloc_sites(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    st.follow_cwd();
    let save = a.iter().any(|x| x == "save");
    let n = match a.iter().find(|x| *x != "save") {
        Some(x) => x
            .parse::<usize>()
            .map_err(|_| format!("alloc_sites takes a number of sites, not \"{x}\"."))?,
        None => 10,
    };
    let visinfo = st.folder().visinfo_dir();
    let work_dir = st.work_dir().to_path_buf();
    let h = heap_state(st)?;
    println!("allocation sites of the {}:", h.run.source);
    let shown = print_rankings(h, n);
    let mut out = Vec::new();
    for &site in &shown {
        out.push(print_site(h, site));
    }
    say_notes(h);
    if save {
        let path = visinfo.join("alloc_sites.csv");
        let sites: Vec<u32> = h
            .report
            .top_sites(usize::MAX, |x| x.allocs)
            .iter()
            .map(|x| x.stack)
            .collect();
        let mut rows = Vec::new();
        for site in sites {
            let bt = backtrace(h, site).join(" <- ");
            rows.push((site, bt));
        }
        h.report.write_sites_csv(&path, &rows)?;
        super::session::record_written_in(&work_dir, std::slice::from_ref(&path));
        println!("wrote {}", path.display());
    }
    Ok(Value::List(out))
}

/// Prints the top `n` sites of each ranking; returns the sites shown, each
/// once, in the order first shown.
fn print_rankings(h: &mut HeapState, n: usize) -> Vec<u32> {
    let mut shown: Vec<u32> = Vec::new();
    for rank in Ranking::ALL {
        let top: Vec<(u32, u64)> = h
            .report
            .top_sites(n, |x| rank.value(x))
            .iter()
            .map(|x| (x.stack, rank.value(x)))
            .collect();
        let what = rank.describe();
        if top.is_empty() {
            println!("by {what}: none");
            continue;
        }
        let rows: Vec<Vec<String>> = top
            .iter()
            .map(|&(site, v)| {
                let first = backtrace(h, site).into_iter().next().unwrap_or_default();
                vec![format!("#{site}"), v.to_string(), first]
            })
            .collect();
        println!("by {what}:");
        print!("{}", fmt_table(&["site", what, "allocated at"], &rows));
        shown.extend(
            top.iter()
                .map(|t| t.0)
                .filter(|t| !shown.contains(t))
                .collect::<Vec<_>>(),
        );
    }
    shown
}

/// Prints one site's totals and backtrace; returns them as a dict.
fn print_site(h: &mut HeapState, site: u32) -> Value {
    let x = h.report.counts.sites[site as usize].clone();
    let bt = backtrace(h, site);
    println!(
        "site #{site}: {}, {} bytes, peak {} live, {} leaked, {} temporary{}",
        counted(x.allocs, "allocation"),
        x.bytes,
        x.peak_live,
        x.live,
        x.temporary,
        if x.in_region > 0 {
            format!(", {} inside the pins", x.in_region)
        } else {
            String::new()
        }
    );
    for f in &bt {
        println!("    {f}");
    }
    Value::Dict(vec![
        ("site".into(), Value::Int(site as i64)),
        ("allocations".into(), Value::Int(x.allocs as i64)),
        ("bytes".into(), Value::Int(x.bytes as i64)),
        ("peak".into(), Value::Int(x.peak_live as i64)),
        ("leaked".into(), Value::Int(x.live as i64)),
        ("temporary".into(), Value::Int(x.temporary as i64)),
        (
            "backtrace".into(),
            Value::List(bt.into_iter().map(s).collect()),
        ),
    ])
}

/// `heap_stats ?save?`: prints allocator statistics by size class, the
/// blowup, fragmentation and call times; returns a dict of the totals.
fn heap_stats(st: &mut Session, args: &[String]) -> CmdResult<Value> {
    st.follow_cwd();
    let save = args.iter().any(|x| x == "save");
    let visinfo = st.folder().visinfo_dir();
    let work_dir = st.work_dir().to_path_buf();
    let h = heap_state(st)?;
    let r = &h.report;
    print!("{}", super::render::heap_stats(&h.run, r));
    say_notes(h);
    if save {
        let files = r.write_stats_csv(&visinfo)?;
        super::session::record_written_in(&work_dir, &files);
        for f in files {
            println!("wrote {}", f.display());
        }
    }
    Ok(heap_stats_value(&h.run, r))
}

/// The result of `heap_stats`: a dict of the totals (allocations, frees, bytes,
/// peak; peak RSS, usable bytes and how many calls were timed when the
/// profile has them).
fn heap_stats_value(run: &HeapRun, r: &HeapReport) -> Value {
    let mut dict = vec![
        ("allocations".into(), Value::Int(r.counts.allocs as i64)),
        ("frees".into(), Value::Int(r.counts.frees as i64)),
        ("bytes".into(), Value::Int(r.counts.bytes as i64)),
        ("peak".into(), Value::Int(r.counts.peak_live.0 as i64)),
    ];
    if let Some(rss) = r.peak_rss {
        dict.push(("peak_rss".into(), Value::Int(rss as i64)));
    }
    if run.timed {
        let (_, usable) = r.fragmentation();
        dict.push(("usable".into(), Value::Int(usable as i64)));
        dict.push(("timed_calls".into(), Value::Int(r.timed_calls.0 as i64)));
        dict.push(("calls".into(), Value::Int(r.timed_calls.1 as i64)));
        dict.push(("sampled_1_in".into(), Value::Int(r.dur_sample as i64)));
    }
    Value::Dict(dict)
}

/// `heap_figures ?N? ?save?`: draws the live heap of the top N sites, the
/// flame graph and the size classes; returns the figure's path.
fn heap_figures(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    st.follow_cwd();
    let save = a.iter().any(|x| x == "save");
    let n = match a.iter().find(|x| *x != "save") {
        Some(x) => x
            .parse::<usize>()
            .map_err(|_| format!("heap_figures takes a number of sites, not \"{x}\"."))?,
        None => 5,
    };
    let mut opts = figure_options(st, save);
    let root = st.work_dir().to_path_buf();
    let h = heap_state(st)?;
    opts.provenance = heap_provenance(h);
    opts.analysis_id = crate::vis::file_source(&root, &h.path);
    say_notes(h);
    let top: Vec<u32> = h
        .report
        .top_sites(n, |x| x.peak_live)
        .iter()
        .map(|x| x.stack)
        .collect();
    let labels: Vec<(u32, String)> = top
        .iter()
        .map(|&site| {
            let f = backtrace(h, site).into_iter().next().unwrap_or_default();
            (site, format!("#{site} {f}"))
        })
        .collect();
    let run = h.run.clone();
    let report = h.report.clone();
    let mut frames = |stack: u32| backtrace(h, stack);
    let rep = crate::vis::heap_figures(&run, &report, &labels, &mut frames, &opts)?;
    Ok(report_figure(st, &rep))
}

enum Export {
    Memtrace,
    Ops,
}

fn export(st: &mut Session, file: &str, what: Export) -> CmdResult<Value> {
    st.follow_cwd();
    let trace = st.trace_path()?;
    let out = if Path::new(file).is_absolute() {
        PathBuf::from(file)
    } else {
        st.work_dir().join(file)
    };
    refuse_text_trace(
        &trace,
        match what {
            Export::Memtrace => "export_memtrace",
            Export::Ops => "export_ops",
        },
    )?;
    let summary = match what {
        Export::Memtrace => crate::filter::export_memtrace(&trace, &out),
        Export::Ops => crate::filter::export_ops(&trace, &out),
    }?;
    println!("{summary}");
    Ok(s(out.display().to_string()))
}
