//! The locality commands: `set_cache`, `set_reuse_sampling`,
//! `set_figure_colour`, `cache_stats`, `sharing_stats` and `what_if`. They
//! only orchestrate: the simulation, reuse distance, labels and sharing
//! live in the analysis stage, reached through its facade
//! ([`crate::filter::cache_stats`], [`crate::filter::sharing_stats`],
//! [`crate::filter::what_if`]).
//!
//! The cache model and the sampling rate are kept in
//! `.mapvis/locality.json`, so a later session in the same folder uses
//! them, and `set_cache` followed by `cache_stats` re-runs on the saved
//! analysis without tracing again.
use std::path::{Path, PathBuf};

use super::error::CmdResult;
use super::handlers::add;
use super::session::Session;
use super::{Registry, Value};
use crate::filter::{
    self, CacheModel, CacheReport, ColourMode, Layout, Sampling, SharedLine, SharedLines, WhatIf,
};

fn s(v: impl Into<String>) -> Value {
    Value::Str(v.into())
}

/// Registers the locality commands (each holding the folder's lock, see
/// the handlers' `add`).
pub fn register(r: &mut Registry<Session>) {
    add(r, "set_cache", set_cache);
    add(r, "set_reuse_sampling", set_reuse_sampling);
    add(r, "set_figure_colour", set_figure_colour);
    add(r, "cache_stats", cache_stats);
    add(r, "sharing_stats", sharing_stats);
    add(r, "what_if", what_if);
    add(r, "advise", advise);
}

/// `advise ?NAME|save ...?`: the layout changes `what_if` predicts for
/// the named arrays (or the three with the most L1 misses), ranked by
/// misses saved; prints them and returns their dicts. With a last word
/// save, also writes `visinfo/advice.csv`.
fn advise(st: &mut Session, args: &[String]) -> CmdResult<Value> {
    let save = args.last().is_some_and(|x| x == "save");
    let names = &args[..args.len() - usize::from(save)];
    let kind = st.mem();
    let opts = super::handlers::cache_options(st);
    let src_paths = st.src_paths().to_vec();
    st.analysis()?;
    let fig = super::handlers::figure_options(st, true);
    let a = st.loaded_analysis().expect("analysis loaded above");
    let advice = filter::advise(a, kind, &opts, names).map_err(|e| e.to_string())?;
    print!("{}", super::render::advice(&advice));
    if let Some(why) = a.summary.partial_reason() {
        println!("warning: this analysis is PARTIAL ({why}): the predictions cover only the accesses recorded.");
    }
    if save {
        let written = save_advice(a, &advice, &fig, &src_paths, st.memory_limit().0)?;
        st.record_written(&written);
    }
    Ok(advice_dicts(&advice))
}

/// What a last `save` of `advise` writes: `visinfo/advice.csv`, each
/// suggestion's what-if page, the annotated source pages of the lines
/// they touch, and `figures/advice.html` linking them; returns the files
/// written (plotly.js and the folder's index too).
fn save_advice(
    a: &filter::Analysis,
    advice: &filter::Advice,
    fig: &crate::vis::FigureOptions,
    src_paths: &[PathBuf],
    limit: u64,
) -> CmdResult<Vec<PathBuf>> {
    let mut df = advice.table_marked(&a.summary.trace_state())?;
    let csv = filter::write_csv(&mut df, &fig.visinfo_dir.join("advice.csv"))?;
    let mut written = vec![csv];
    let mut entries = Vec::new();
    let mut sources: Vec<(String, PathBuf)> = Vec::new();
    if let Some(first) = advice.suggestions.first() {
        let (pages, note) =
            crate::vis::write_source_pages(&first.prediction.before, src_paths, fig)?;
        if let Some(note) = note {
            println!("note: {note}");
        }
        written.extend(pages.iter().map(|(_, p)| p.clone()));
        sources = pages;
    }
    for x in &advice.suggestions {
        written.extend(save_what_if(
            a,
            &x.prediction,
            &x.variable,
            &x.change,
            fig,
            false,
            limit,
        )?);
        entries.push(crate::vis::AdviceEntry {
            variable: x.variable.clone(),
            change: x.change.clone(),
            touches: x.touches.clone(),
            before: x.before.clone(),
            after: x.after.clone(),
            why: x.why.clone(),
            command: x.command.clone(),
            page: crate::vis::what_if_file(&x.variable, &x.change),
            lines: x
                .lines
                .iter()
                .map(|l| (l.clone(), source_anchor(&sources, l)))
                .collect(),
        });
    }
    let html = crate::vis::advice_figure(&entries, &advice.levels, &advice.notes, fig)?;
    let report = crate::vis::FigureReport {
        html: html.clone(),
        ..Default::default()
    };
    written.push(html);
    written.extend(report.files());
    let mut seen = std::collections::HashSet::new();
    written.retain(|p| seen.insert(p.clone()));
    // The shared plotly.js and the folder's index are recorded, not listed.
    let shared = [crate::vis::PLOTLY_JS_NAME, crate::vis::INDEX_FILE];
    let listed: Vec<PathBuf> = (written.iter())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| shared.iter().any(|s| n == *s))
        })
        .cloned()
        .collect();
    println!("{}", super::text::wrote(&listed));
    Ok(written)
}

/// The annotated source page and line anchor of `file.c:LINE`, when its
/// page was written (`source_file.c.html#L12`).
fn source_anchor(pages: &[(String, PathBuf)], line: &str) -> Option<String> {
    let (file, n) = line.rsplit_once(':')?;
    let (_, page) = pages.iter().find(|(f, _)| f == file)?;
    Some(format!("{}#L{n}", page.file_name()?.to_string_lossy()))
}

/// The dicts `advise` returns: change, variable, touches, lines, misses
/// before and after per level, why, command.
fn advice_dicts(advice: &filter::Advice) -> Value {
    Value::List(
        advice
            .suggestions
            .iter()
            .map(|x| {
                let mut d = vec![
                    ("change".to_string(), s(x.change.clone())),
                    ("variable".to_string(), s(x.variable.clone())),
                    (
                        "touches".to_string(),
                        Value::List(x.touches.iter().map(|t| s(t.clone())).collect()),
                    ),
                    (
                        "lines".to_string(),
                        Value::List(x.lines.iter().map(|l| s(l.clone())).collect()),
                    ),
                ];
                for (i, l) in advice.levels.iter().enumerate() {
                    let at = |v: &[u64]| Value::Int(v.get(i).copied().unwrap_or(0) as i64);
                    d.push((format!("misses_before_{l}"), at(&x.before)));
                    d.push((format!("misses_after_{l}"), at(&x.after)));
                }
                d.push(("why".to_string(), s(x.why.clone())));
                d.push(("command".to_string(), s(x.command.clone())));
                Value::Dict(d)
            })
            .collect(),
    )
}

/// `set_cache ?LEVEL? ?SIZE? ?WAYS? ?LINE?`: `LEVEL SIZE WAYS LINE` sets
/// a level, `LEVEL off` removes it, `default` goes back to this machine's
/// caches, nothing prints the model; returns its levels as dicts.
fn set_cache(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let mut model = st.locality().cache.clone();
    match a.len() {
        0 => {}
        1 if a[0] == "default" => model = CacheModel::host(),
        2 if a[1] == "off" => model.remove(&a[0])?,
        4 => model.set(&a[0], &a[1], &a[2], &a[3])?,
        _ => {
            return Err(
                "set_cache takes LEVEL SIZE WAYS LINE (set_cache L1 32K 8 64), LEVEL off, \
                 default, or nothing to print the model."
                    .into(),
            )
        }
    }
    if !a.is_empty() {
        let mut settings = st.locality().clone();
        settings.cache = model;
        st.set_locality(settings)?;
    }
    // The whole model when asked for it or replaced by the default; after
    // a change to one level, only that change (a sweep's three calls print
    // three lines, not the model three times).
    let cache = &st.locality().cache;
    match a.len() {
        2 => println!(
            "cache: {} off; levels now {}",
            a[0],
            level_names(cache.levels.iter().map(|l| l.name()))
        ),
        4 => {
            if let Some(l) = cache
                .levels
                .iter()
                .find(|l| a[0].eq_ignore_ascii_case(&l.name()))
            {
                println!("cache: {}", l.describe());
            }
        }
        _ => println!("{}", cache.describe()),
    }
    Ok(Value::List(
        st.locality()
            .cache
            .levels
            .iter()
            .map(|l| {
                Value::Dict(vec![
                    ("level".into(), s(l.name())),
                    ("size".into(), Value::Int(l.size as i64)),
                    ("ways".into(), Value::Int(l.ways as i64)),
                    ("line".into(), Value::Int(l.line as i64)),
                ])
            })
            .collect(),
    ))
}

/// `L1, L2` (or `none`): the names of a model's levels, for a line.
fn level_names(names: impl Iterator<Item = String>) -> String {
    let names: Vec<String> = names.collect();
    if names.is_empty() {
        return "none".into();
    }
    names.join(", ")
}

/// `set_figure_colour default|hit|reuse|miss ?LEVEL?`: how the access
/// figures colour their points; returns the mode.
fn set_figure_colour(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let mode = ColourMode::parse(&a[0], a.get(1).map(String::as_str)).ok_or_else(|| {
        format!(
            "set_figure_colour takes default, hit, reuse, or miss with a level (miss L2), not \"{}\".",
            a.join(" ")
        )
    })?;
    if let ColourMode::Miss(l) = mode {
        let cache = &st.locality().cache;
        if !cache.levels.iter().any(|x| x.level == l) {
            return Err(format!(
                "the cache model has no L{l} (it has {}): add it with set_cache, or colour by a level it has.",
                cache.levels_text()
            )
            .into());
        }
    }
    let mut settings = st.locality().clone();
    settings.figure_colour = mode;
    st.set_locality(settings)?;
    match mode {
        ColourMode::Default => {
            println!("figures: coloured by time (3D views) and by variable (2D view)")
        }
        ColourMode::Hit => println!(
            "figures: coloured by the cache level that served each access, under this model:\n{}",
            st.locality().cache.describe()
        ),
        ColourMode::Reuse => println!(
            "figures: coloured by reuse distance in distinct {}-byte lines (exact), first touch apart",
            st.locality().cache.levels.first().map_or(64, |l| l.line)
        ),
        ColourMode::Miss(l) => println!(
            "figures: coloured by why each access missed L{l} (conflict, capacity, compulsory), under this model:\n{}",
            st.locality().cache.describe()
        ),
    }
    Ok(s(mode.code()))
}

/// `set_reuse_sampling RATE|off|auto ?N?`: samples the reuse distance at
/// RATE, computes it exactly, or exactly up to N accesses and sampled above
/// (the default, N = 10^9); returns the rate, `off` or `auto N`.
fn set_reuse_sampling(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let (rate, auto_above) = match a[0].as_str() {
        "off" => (None, None),
        "auto" => (None, Some(auto_threshold(a.get(1))?)),
        word => (Some(sampling_rate(word)?), None),
    };
    let mut settings = st.locality().clone();
    settings.sampling = rate;
    settings.auto_above = auto_above;
    st.set_locality(settings)?;
    match (rate, auto_above) {
        (Some(r), _) => println!(
            "reuse distance: sampled (SHARDS), {:.4}% of cache lines; counts are estimates",
            r * 100.0
        ),
        (None, Some(n)) => println!(
            "reuse distance: exact up to {n} accesses; above, sampled (SHARDS) at {:.0}% of cache lines, and the reports say so",
            filter::AUTO_RATE * 100.0
        ),
        (None, None) => println!("reuse distance: exact"),
    }
    Ok(match (rate, auto_above) {
        (Some(r), _) => Value::Float(r),
        (None, Some(n)) => Value::List(vec![s("auto"), Value::Int(n as i64)]),
        (None, None) => s("off"),
    })
}

/// A rate as `set_reuse_sampling` takes it: 0.01 or 1%, in (0, 1].
fn sampling_rate(word: &str) -> CmdResult<f64> {
    let r: f64 = word.trim_end_matches('%').parse().map_err(|_| {
        format!(
            "set_reuse_sampling takes a rate such as 0.01 (1% of lines), off or auto ?N?, not \"{word}\"."
        )
    })?;
    let r = if word.ends_with('%') { r / 100.0 } else { r };
    Sampling::new(r).map(|_| r).ok_or_else(|| {
        format!("the sampling rate must be above 0 and at most 1, not {word}.").into()
    })
}

/// `auto`'s threshold in accesses: the word given, else 10^9.
fn auto_threshold(word: Option<&String>) -> CmdResult<u64> {
    let Some(w) = word else {
        return Ok(filter::AUTO_ABOVE);
    };
    w.replace('_', "").parse().map_err(|_| {
        format!("set_reuse_sampling auto takes a number of accesses (1000000000), not \"{w}\".")
            .into()
    })
}

/// `cache_stats ?save|quiet ...?`: simulates the cache model over the region
/// and prints misses, patterns and reuse distance (nothing with `quiet`);
/// returns a list of per-variable dicts.
fn cache_stats(st: &mut Session, args: &[String]) -> CmdResult<Value> {
    let save = args.iter().any(|x| x == "save");
    let quiet = args.iter().any(|x| x == "quiet");
    let kind = st.mem();
    let opts = super::handlers::cache_options(st);
    let dir = st.folder().visinfo_dir();
    let figures = st.folder().figures_dir();
    let src_paths = st.src_paths().to_vec();
    // Loaded first, so that the source pages record the analysis drawn.
    st.analysis()?;
    let pages = super::handlers::figure_options(st, true);
    let a = st.analysis()?;
    let r = filter::cache_stats(a, kind, &opts)?;
    if !quiet {
        if let Some(w) = super::handlers::partial_warning(a) {
            println!("{w}");
        }
        if let (None, Some(n), Some(_)) = (opts.sampling, opts.auto_above, r.reuse.sampling) {
            println!(
                "note: the trace has more than {n} accesses, so the reuse distances are sampled (set_reuse_sampling auto {n}); set_reuse_sampling off computes them exactly."
            );
        }
        print!("{}", super::render::cache_report(&r, kind.code()));
    }
    if save {
        let mut written = r.save(&dir)?;
        let (sources, note) = crate::vis::write_source_pages(&r, &src_paths, &pages)?;
        let sources = sources.into_iter().map(|(_, p)| p);
        if let Some(note) = note {
            println!("note: {note}");
        }
        written.extend(sources);
        let page = summary_figure(&r, &figures, &pages.analysis_id)?;
        written.push(page.clone());
        // The page's shared plotly.js and the folder's index are mapvis's too.
        let mut recorded = written.clone();
        recorded.extend(
            crate::vis::FigureReport {
                html: page,
                ..Default::default()
            }
            .files(),
        );
        st.record_written(&recorded);
        if !quiet {
            println!("{}", super::text::wrote(&written));
        }
    }
    Ok(variable_dicts(&r))
}

/// The per-variable dicts `cache_stats` and `what_if` return: `variable`,
/// `accesses`, `misses_L1` … per level, `compulsory` (L1's), `miss_ratio`,
/// `line_bytes_used`, then `compulsory_L1`, `capacity_L1`, `conflict_L1`
/// … per level (the 3C model).
fn variable_dicts(r: &CacheReport) -> Value {
    let levels: Vec<String> = r.cache.model.levels.iter().map(|l| l.name()).collect();
    let names: Vec<String> = levels.iter().map(|l| format!("misses_{l}")).collect();
    Value::List(
        r.per_variable()
            .iter()
            .map(|row| {
                let mut d = vec![
                    ("variable".to_string(), s(row.key.clone())),
                    (
                        "accesses".to_string(),
                        Value::Int(row.counts.accesses as i64),
                    ),
                ];
                for (i, n) in names.iter().enumerate() {
                    d.push((n.clone(), Value::Int(row.counts.misses[i] as i64)));
                }
                d.push((
                    "compulsory".into(),
                    Value::Int(row.counts.compulsory() as i64),
                ));
                d.push(("miss_ratio".into(), Value::Float(row.miss_ratio())));
                d.push(("line_bytes_used".into(), Value::Float(row.bytes_per_line())));
                for (k, v) in row.counts.class_columns(&levels) {
                    d.push((k, Value::Int(v as i64)));
                }
                Value::Dict(d)
            })
            .collect(),
    )
}

/// `what_if NAME LAYOUT ?ARGS ...?`: rewrites NAME's addresses as if laid
/// out as LAYOUT (`transpose ?ROWS COLS ELEMBYTES?`, `soa`, `pad BYTES`,
/// `align BYTES`), or replays the nest that walks it column by column in
/// another order (`interchange ?FILE:LINE?`, `tile SIZE ?FILE:LINE?`),
/// simulates again and prints before and after per
/// variable and per line of NAME; with a last argument `save`, also writes the before and
/// after table to `visinfo/` and NAME's figure under the new layout to
/// `figures/`. Returns the per-variable dicts of the new layout, as
/// `cache_stats` does.
fn what_if(st: &mut Session, args: &[String]) -> CmdResult<Value> {
    let save = args.len() > 2 && args.last().is_some_and(|x| x == "save");
    let args = &args[..args.len() - usize::from(save)];
    if let [name, flag, rest @ ..] = args {
        if flag == "-layouts" {
            return what_if_layouts(st, name, rest, save);
        }
    }
    let (name, layout) = match args {
        [n, l, rest @ ..] => (
            n.clone(),
            Layout::parse(l, rest).map_err(|e| e.to_string())?,
        ),
        _ => return Err("usage: what_if NAME LAYOUT ?ARGS...? ?save?".into()),
    };
    let kind = st.mem();
    let opts = super::handlers::cache_options(st);
    let fig = super::handlers::figure_options(st, true);
    st.analysis()?;
    let a = st.loaded_analysis().expect("analysis loaded above");
    let var = a.resolve_array(&name)?;
    let w = filter::what_if(a, kind, &opts, var, &layout).map_err(|e| e.to_string())?;
    print!("{}", super::render::what_if(&w, &name));
    if let Some(why) = a.summary.partial_reason() {
        println!("warning: this analysis is PARTIAL ({why}): the prediction covers only the accesses recorded.");
    }
    if save {
        let words = args[1..].join(" ");
        let written = save_what_if(a, &w, &name, &words, &fig, true, st.memory_limit().0)?;
        st.record_written(&written);
    }
    Ok(variable_dicts(&w.after))
}

/// The `-layouts` form of `what_if` (`what_if NAME -layouts {{LAYOUT ...}
/// ...} ?save?`): several layouts (or loop orders) of NAME predicted
/// together over one pass; prints each and returns one list of
/// per-variable dicts per layout, in the order given.
fn what_if_layouts(st: &mut Session, name: &str, rest: &[String], save: bool) -> CmdResult<Value> {
    let usage = "usage: what_if NAME -layouts {{transpose} {pad 64} ...} ?save?";
    let items = match rest {
        [one] => super::tcl::Interp::split_list(one)
            .ok_or_else(|| format!("-layouts takes a Tcl list of layouts; {usage}"))?,
        _ => return Err(usage.into()),
    };
    if items.is_empty() {
        return Err(format!("-layouts names no layout; {usage}").into());
    }
    let mut layouts = Vec::new();
    for item in &items {
        let words = super::tcl::Interp::split_list(item).unwrap_or_default();
        let [first, more @ ..] = &words[..] else {
            return Err(format!("an empty layout in -layouts; {usage}").into());
        };
        layouts.push(Layout::parse(first, more).map_err(|e| e.to_string())?);
    }
    let kind = st.mem();
    let opts = super::handlers::cache_options(st);
    let fig = super::handlers::figure_options(st, true);
    st.analysis()?;
    let a = st.loaded_analysis().expect("analysis loaded above");
    let var = a.resolve_array(name)?;
    let ws = filter::what_if_many(a, kind, &opts, var, &layouts).map_err(|e| e.to_string())?;
    let mut written = Vec::new();
    for (w, item) in ws.iter().zip(&items) {
        println!("layout {item}:");
        print!("{}", super::render::what_if(w, name));
        if save {
            let words = item.split_whitespace().collect::<Vec<_>>().join(" ");
            written.extend(save_what_if(
                a,
                w,
                name,
                &words,
                &fig,
                true,
                st.memory_limit().0,
            )?);
        }
    }
    if let Some(why) = a.summary.partial_reason() {
        println!("warning: this analysis is PARTIAL ({why}): the predictions cover only the accesses recorded.");
    }
    st.record_written(&written);
    Ok(Value::List(
        ws.iter().map(|w| variable_dicts(&w.after)).collect(),
    ))
}

/// What a last `save` of `what_if` writes: the before and after table as
/// `visinfo/what_if_NAME_LAYOUT.csv` and NAME's page; returns the files
/// written (the page's CSV first, then its HTML, plotly.js and the
/// folder's index). `say`: print what was written (`advise save` prints
/// its own list).
fn save_what_if(
    a: &filter::Analysis,
    w: &WhatIf,
    name: &str,
    words: &str,
    fig: &crate::vis::FigureOptions,
    say: bool,
    limit: u64,
) -> CmdResult<Vec<PathBuf>> {
    use crate::filter::SelectionBatches;
    use crate::vis::{what_if_figure, what_if_file, WhatIfFigure, WhatIfPanel};
    let page = what_if_file(name, words);
    let csv = fig.visinfo_dir.join(page.replace(".html", ".csv"));
    let mut df = w.table_marked(&a.summary.trace_state())?;
    let csv = filter::write_csv(&mut df, &csv)?;
    let keep = (0..a.vars.len()).map(|v| v == w.var.index()).collect();
    let sel = filter::Selection::of(a, keep)?.within(limit);
    let before = SelectionBatches::plain(a, sel);
    let after = w.after_accesses(&before);
    let names_before = [(w.var, name.to_string())];
    let names_after: Vec<(filter::VarId, String)> = (w.after_vars.iter())
        .map(|&v| (v, w.after.names.vars[v.index()].name.clone()))
        .collect();
    let levels: Vec<String> = w.after.level_names();
    let (mb, ma) = w.variable_misses();
    let panel = |accesses, base, names| WhatIfPanel {
        accesses,
        base,
        fallback: w.map.base(),
        names,
    };
    let f = WhatIfFigure {
        name,
        var: w.var,
        layout: words,
        before: panel(&before, w.map.base(), &names_before),
        after: panel(after.as_ref(), w.map.after_base(), &names_after),
        levels: &levels,
        misses: (&mb, &ma),
        notes: &w.notes,
        partial: a.summary.partial_reason().is_some(),
    };
    let r = what_if_figure(&f, fig)?;
    if let (Some(agg), true) = (&r.aggregated, say) {
        println!("note: {agg}");
    }
    if say {
        println!("wrote {}, {}", csv.display(), r.html.display());
    }
    let mut out = vec![csv];
    out.extend(r.files());
    Ok(out)
}

/// `figures/sharing.html`: each shared line's bytes by thread.
fn sharing_figure(
    lines: &[SharedLine],
    line: u32,
    figures: &Path,
    analysis_id: &str,
) -> CmdResult<PathBuf> {
    use crate::vis::{sharing_figure, SharedBytes};
    let drawn: Vec<SharedBytes> = lines
        .iter()
        .map(|l| SharedBytes {
            addr: l.addr,
            line,
            kind: l.kind,
            transfers: l.transfers,
            threads: l.masks.clone(),
            byte_names: l.byte_names.clone(),
            variables: l.variables.clone(),
        })
        .collect();
    let intro = vec![format!(
        "Cache lines of {line} bytes written by one thread and touched by another, most transfers first; Valgrind runs one thread at a time, so the transfers are those of its interleaving."
    )];
    Ok(sharing_figure(figures, &drawn, &intro, analysis_id)?)
}

/// `sharing_stats ?save?`: finds the cache lines shared between threads,
/// true or false sharing; returns a list of per-line dicts.
fn sharing_stats(st: &mut Session, args: &[String]) -> CmdResult<Value> {
    let save = args.iter().any(|x| x == "save");
    let kind = st.mem();
    let line = st.locality().cache.levels.first().map_or(64, |l| l.line);
    let dir = st.folder().visinfo_dir();
    let grouping = st.grouping();
    st.analysis()?;
    let analysis_id = super::handlers::source_token(st);
    let a = st.analysis()?;
    let lines = SharedLines(filter::sharing_stats(a, kind, line, grouping)?);
    let head = super::render::SharingHead {
        line,
        mem: kind.code(),
        partial: super::handlers::partial_warning(a),
        threads: a.summary.threads.len(),
    };
    print!("{}", super::render::sharing_stats(&head, &lines));
    if save {
        let [p1, p2] = lines.save(&dir)?;
        let p3 = sharing_figure(&lines, line, &st.folder().figures_dir(), &analysis_id)?;
        println!(
            "wrote {}, {} and {}",
            p1.display(),
            p2.display(),
            p3.display()
        );
        // The page's shared plotly.js and the folder's index too.
        let mut recorded = vec![p1, p2];
        recorded.extend(
            crate::vis::FigureReport {
                html: p3,
                ..Default::default()
            }
            .files(),
        );
        st.record_written(&recorded);
    }
    Ok(shared_lines_value(&lines))
}

/// The result of `sharing_stats`: a list with a dict per shared line (its
/// address, kind, transfers, variables and the elements its threads
/// touched).
fn shared_lines_value(lines: &[SharedLine]) -> Value {
    Value::List(
        lines
            .iter()
            .map(|l| {
                Value::Dict(vec![
                    ("line".into(), s(format!("{:#x}", l.addr))),
                    ("kind".into(), s(l.kind.to_string())),
                    ("transfers".into(), Value::Int(l.transfers as i64)),
                    (
                        "variables".into(),
                        Value::List(l.variables.iter().map(|v| s(v.clone())).collect()),
                    ),
                    (
                        "elements".into(),
                        Value::List(
                            l.threads
                                .iter()
                                .flat_map(|t| t.elements.iter().map(|e| s(e.clone())))
                                .collect(),
                        ),
                    ),
                ])
            })
            .collect(),
    )
}

/// `figures/cache_stats.html`: misses per variable and level, and the
/// miss-ratio curves.
fn summary_figure(r: &CacheReport, figures: &Path, analysis_id: &str) -> CmdResult<PathBuf> {
    use crate::vis::{cache_summary, VarMisses};
    let levels = r.cache.model.level_sizes();
    let vars: Vec<VarMisses> = r
        .per_variable()
        .iter()
        .map(|row| VarMisses {
            name: row.key.clone(),
            misses: row.counts.misses[..levels.len()].to_vec(),
        })
        .collect();
    let curves = crate::vis::curves_of(r);
    let intro = vec![format!(
        "{} accesses of the traced region simulated from cold caches at the start of the region; model: {}.",
        r.cache.accesses,
        r.cache.model.levels_text()
    )];
    Ok(cache_summary(
        figures,
        &levels,
        &vars,
        &curves,
        &intro,
        analysis_id,
    )?)
}
