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
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::error::CmdResult;
use super::handlers::{add, THREADS_NOTE};
use super::session::Session;
use super::text::counted;
use super::text::text_table;
use super::{Registry, Value};
use crate::filter::{
    self, before_after_table, bin_range, per_line_of, variable_misses, CacheModel, CacheReport,
    ColourMode, Counts, Layout, Remapped, Row, Sampling, SharedLine, WhatIf,
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
    println!("{}", st.locality().cache.describe());
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

/// `set_figure_colour default|hit|reuse`: how the access figures colour
/// their points; returns the mode.
fn set_figure_colour(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let mode = ColourMode::parse(&a[0]).ok_or_else(|| {
        format!(
            "set_figure_colour takes default, hit or reuse, not \"{}\".",
            a[0]
        )
    })?;
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
    }
    Ok(s(mode.code()))
}

/// `set_reuse_sampling RATE|off`: samples the reuse distance at RATE, or
/// computes it exactly; returns the rate or `off`.
fn set_reuse_sampling(st: &mut Session, a: &[String]) -> CmdResult<Value> {
    let rate = if a[0] == "off" {
        None
    } else {
        let r: f64 = a[0].trim_end_matches('%').parse().map_err(|_| {
            format!(
                "set_reuse_sampling takes a rate such as 0.01 (1% of lines), or off, not \"{}\".",
                a[0]
            )
        })?;
        let r = if a[0].ends_with('%') { r / 100.0 } else { r };
        Sampling::new(r).ok_or_else(|| {
            format!(
                "the sampling rate must be above 0 and at most 1, not {}.",
                a[0]
            )
        })?;
        Some(r)
    };
    let mut settings = st.locality().clone();
    settings.sampling = rate;
    st.set_locality(settings)?;
    match rate {
        Some(r) => println!(
            "reuse distance: sampled (SHARDS), {:.4}% of cache lines; counts are estimates",
            r * 100.0
        ),
        None => println!("reuse distance: exact"),
    }
    Ok(rate.map_or(s("off"), Value::Float))
}

fn count_cells(r: &CacheReport, row: &Row) -> Vec<String> {
    let mut v = vec![row.counts.accesses.to_string()];
    for i in 0..r.cache.model.levels.len() {
        v.push(row.counts.misses[i].to_string());
    }
    v.push(row.counts.compulsory.to_string());
    v.push(format!("{:.4}", row.miss_ratio()));
    v.push(format!("{:.1}", row.bytes_per_line()));
    v
}

fn count_headers(r: &CacheReport, first: &[&str], last: Option<&str>) -> Vec<String> {
    let mut h: Vec<String> = first.iter().map(|x| x.to_string()).collect();
    h.push("accesses".into());
    for l in &r.cache.model.levels {
        h.push(format!("misses_{}", l.name()));
    }
    h.extend(["compulsory", "miss_ratio", "line_bytes_used"].map(String::from));
    h.extend(last.map(String::from));
    h
}

/// `cache_stats ?save|quiet ...?`: simulates the cache model over the region
/// and prints misses, patterns and reuse distance (nothing with `quiet`);
/// returns a list of per-variable dicts.
fn cache_stats(st: &mut Session, args: &[String]) -> CmdResult<Value> {
    let save = args.iter().any(|x| x == "save");
    let quiet = args.iter().any(|x| x == "quiet");
    let kind = st.mem();
    let opts = super::handlers::cache_options(st);
    let dir = st.visinfo_dir();
    let figures = st.figures_dir();
    let src_paths = st.src_paths().to_vec();
    let a = st.analysis()?;
    let r = filter::cache_stats(a, kind, &opts)?;
    if !quiet {
        if let Some(w) = super::handlers::partial_warning(a) {
            println!("{w}");
        }
        print_cache_report(&r, kind.code());
    }
    if save {
        let mut written = r.save(&dir)?;
        written.extend(crate::vis::source::write_pages(&r, &src_paths, &figures)?);
        let page = summary_figure(&r, &figures, &a.summary.analysis_id)?;
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
/// `accesses`, `misses_L1` … per level, `compulsory`, `miss_ratio`,
/// `line_bytes_used`.
fn variable_dicts(r: &CacheReport) -> Value {
    let names: Vec<String> = r
        .cache
        .model
        .levels
        .iter()
        .map(|l| format!("misses_{}", l.name()))
        .collect();
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
                    Value::Int(row.counts.compulsory as i64),
                ));
                d.push(("miss_ratio".into(), Value::Float(row.miss_ratio())));
                d.push(("line_bytes_used".into(), Value::Float(row.bytes_per_line())));
                Value::Dict(d)
            })
            .collect(),
    )
}

/// `what_if NAME LAYOUT ?ARGS ...?`: rewrites NAME's addresses as if laid
/// out as LAYOUT (`transpose ?ROWS COLS ELEMBYTES?`, `soa`, `pad BYTES`,
/// `align BYTES`), simulates again and prints before and after per
/// variable and per line of NAME; with a last argument `save`, also writes the before and
/// after table to `visinfo/` and NAME's figure under the new layout to
/// `figures/`. Returns the per-variable dicts of the new layout, as
/// `cache_stats` does.
fn what_if(st: &mut Session, args: &[String]) -> CmdResult<Value> {
    let save = args.len() > 2 && args.last().is_some_and(|x| x == "save");
    let args = &args[..args.len() - usize::from(save)];
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
    let var = filter::resolve_array(a, &name)?;
    let w = filter::what_if(a, kind, &opts, var, &layout).map_err(|e| e.to_string())?;
    print_what_if(&w, &name);
    if !a.summary.complete {
        println!("note: the trace is partial (cut short): the prediction covers only the accesses recorded.");
    }
    if save {
        let words = args[1..].join(" ");
        let written = save_what_if(a, &w, &name, &words, &fig)?;
        st.record_written(&written);
    }
    Ok(variable_dicts(&w.after))
}

/// What a last `save` of `what_if` writes: the before and after table as
/// `visinfo/what_if_NAME_LAYOUT.csv` and NAME's page; returns the files
/// written (the page's plotly.js and the folder's index too).
fn save_what_if(
    a: &filter::Analysis,
    w: &WhatIf,
    name: &str,
    words: &str,
    fig: &crate::vis::FigureOptions,
) -> CmdResult<Vec<PathBuf>> {
    use crate::filter::SelectionBatches;
    use crate::vis::whatif::{what_if_figure, what_if_file, Panel, WhatIfFigure};
    let page = what_if_file(name, w.var, words);
    let csv = fig.visinfo_dir.join(page.replace(".html", ".csv"));
    let mut df = before_after_table(w)?;
    let csv = filter::write_csv(&mut df, &csv)?;
    let keep = (0..a.vars.len()).map(|v| v == w.var as usize).collect();
    let before = SelectionBatches::plain(a, filter::Selection::of(a, keep)?);
    let after = Remapped::new(&before, &w.map);
    let names_before = [(w.var, name.to_string())];
    let names_after: Vec<(u32, String)> = (w.after_vars.iter())
        .map(|&v| (v, w.after.names.vars[v as usize].name.clone()))
        .collect();
    let levels: Vec<String> = w.after.level_names();
    let (mb, ma) = variable_misses(w);
    let panel = |accesses, base, names| Panel {
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
        after: panel(&after, w.map.after_base(), &names_after),
        levels: &levels,
        misses: (&mb, &ma),
        notes: &w.notes,
        partial: !a.summary.complete,
    };
    let r = what_if_figure(&f, fig)?;
    if let Some(agg) = &r.aggregated {
        println!("note: {agg}");
    }
    println!("wrote {}, {}", csv.display(), r.html.display());
    let mut out = vec![csv];
    out.extend(r.files());
    Ok(out)
}

/// `N access` or `N accesses`.
fn accesses(n: u64) -> String {
    format!("{n} access{}", if n == 1 { "" } else { "es" })
}

/// `before -> after (+x%)`, `(new)` from zero.
fn change(b: u64, a: u64) -> String {
    if b == a {
        return format!("{b} -> {a}");
    }
    if b == 0 {
        return format!("{b} -> {a} (new)");
    }
    let pct = (a as f64 - b as f64) / b as f64 * 100.0;
    format!("{b} -> {a} ({pct:+.1}%)")
}

/// The cells of a before/after row: accesses, then misses per level.
fn change_cells(r: &CacheReport, b: &Counts, a: &Counts) -> Vec<String> {
    let mut v = vec![change(b.accesses, a.accesses)];
    for i in 0..r.cache.model.levels.len() {
        v.push(change(b.misses[i], a.misses[i]));
    }
    v.push(change(b.compulsory, a.compulsory));
    v
}

fn change_headers(r: &CacheReport, first: &str) -> Vec<String> {
    let mut h = vec![first.to_string(), "accesses".into()];
    for l in &r.cache.model.levels {
        h.push(format!("misses_{}", l.name()));
    }
    h.push("compulsory".into());
    h
}

fn print_what_if(w: &WhatIf, name: &str) {
    println!(
        "what_if {name} ({} accesses simulated; caches start cold at GL_START):",
        w.after.cache.accesses
    );
    for n in &w.notes {
        println!("  {n}");
    }
    println!(
        "  {} of {name} moved, {}",
        accesses(w.mapped),
        if w.unmapped == 0 {
            "every access mapped".to_string()
        } else {
            format!(
                "{} could not be mapped (straddling elements or outside them) and were kept as recorded",
                accesses(w.unmapped)
            )
        }
    );
    let before: BTreeMap<String, Counts> = w
        .before
        .per_variable()
        .into_iter()
        .map(|r| (r.key, r.counts))
        .collect();
    let after: BTreeMap<String, Counts> = w
        .after
        .per_variable()
        .into_iter()
        .map(|r| (r.key, r.counts))
        .collect();
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    let zero = Counts::default();
    let rows: Vec<Vec<String>> = keys
        .into_iter()
        .map(|k| {
            let mut v = vec![k.clone()];
            v.extend(change_cells(
                &w.after,
                before.get(k).unwrap_or(&zero),
                after.get(k).unwrap_or(&zero),
            ));
            v
        })
        .collect();
    println!(
        "
per variable (before -> after):"
    );
    print!(
        "{}",
        text_table(&change_headers(&w.after, "variable"), &rows)
    );
    let b = per_line_of(&w.before, &[w.var]);
    let a = per_line_of(&w.after, &w.after_vars);
    let lines: BTreeSet<&String> = b.keys().chain(a.keys()).collect();
    let rows: Vec<Vec<String>> = lines
        .into_iter()
        .map(|l| {
            let mut v = vec![l.clone()];
            v.extend(change_cells(
                &w.after,
                b.get(l).unwrap_or(&zero),
                a.get(l).unwrap_or(&zero),
            ));
            v
        })
        .collect();
    println!(
        "
per line, accesses of {name} (before -> after):"
    );
    print!("{}", text_table(&change_headers(&w.after, "source"), &rows));
}

fn print_cache_report(r: &CacheReport, kind: &str) {
    println!(
        "cache_stats ({} accesses simulated, set_mem_alloc {kind}; caches start cold at GL_START):",
        r.cache.accesses
    );
    for l in &r.cache.model.levels {
        println!("  {}", l.describe());
    }
    println!("  LRU, write-allocate, outer levels looked up only on a miss (neither inclusive nor exclusive); L1 private to each of {}; model from {}.", counted(r.cache.threads as u64, "thread"), r.cache.model.origin);
    if r.cache.threads > 1 {
        println!("note: {}", THREADS_NOTE);
    }
    let vars = r.per_variable();
    let rows: Vec<Vec<String>> = vars
        .iter()
        .map(|row| {
            let mut v = vec![row.key.clone()];
            v.extend(count_cells(r, row));
            v
        })
        .collect();
    println!("\nper variable:");
    print!(
        "{}",
        text_table(&count_headers(r, &["variable"], None), &rows)
    );
    let lines = r.per_line();
    let rows: Vec<Vec<String>> = lines
        .iter()
        .take(10)
        .map(|row| {
            let mut v = vec![row.key.clone()];
            v.extend(count_cells(r, row));
            v.push(row.variables.clone());
            v
        })
        .collect();
    println!("\ntop missing lines (every access on the line counts, as in cachegrind):");
    print!(
        "{}",
        text_table(&count_headers(r, &["source"], Some("variables")), &rows)
    );
    let pairs = r.per_pair();
    let rows: Vec<Vec<String>> = pairs
        .iter()
        .take(20)
        .map(|row| {
            vec![
                row.key.clone(),
                row.source.clone(),
                row.counts.accesses.to_string(),
                row.counts.misses[0].to_string(),
                row.pattern.clone(),
            ]
        })
        .collect();
    println!(
        "\nper variable and line ({} pairs{}):",
        pairs.len(),
        if pairs.len() > 20 {
            ", the 20 missing most shown; cache_stats save writes them all"
        } else {
            ""
        }
    );
    let h: Vec<String> = ["variable", "source", "accesses", "misses_L1", "pattern"]
        .map(String::from)
        .to_vec();
    print!("{}", text_table(&h, &rows));
    print_reuse(r);
}

fn print_reuse(r: &CacheReport) {
    let line = r.reuse.line as u64;
    match r.reuse.sampling {
        Some(s) => println!(
            "\nreuse distance in distinct {line}-byte lines (SHARDS sampling of {:.4}% of lines: estimates):",
            s.rate * 100.0
        ),
        None => println!("\nreuse distance in distinct {line}-byte lines (exact LRU stack distance):"),
    }
    let sizes: Vec<(String, u32)> = r
        .cache
        .model
        .levels
        .iter()
        .map(|l| (l.name(), (l.size / line).max(1).ilog2()))
        .collect();
    let mut h: Vec<String> = vec![
        "variable".into(),
        "references".into(),
        "cold".into(),
        "median".into(),
    ];
    h.extend(sizes.iter().map(|(n, _)| format!("miss@{n}")));
    let rows: Vec<Vec<String>> = r
        .row_histograms()
        .into_iter()
        .map(|(rid, hist)| {
            let total = hist.total();
            let mut acc = hist.cold;
            let mut median = "cold".to_string();
            for (k, n) in hist.bins.iter().enumerate() {
                if acc + n > total / 2 && acc <= total / 2 {
                    median = format!("{}..{}", bin_range(k).0, bin_range(k).1);
                }
                acc += n;
            }
            if hist.cold > total / 2 {
                median = "cold".into();
            }
            let mut row = vec![
                r.names.row_name(rid).to_string(),
                total.to_string(),
                hist.cold.to_string(),
                median,
            ];
            for (_, j) in &sizes {
                row.push(format!("{:.4}", hist.misses_at(*j) as f64 / total as f64));
            }
            row
        })
        .collect();
    print!("{}", text_table(&h, &rows));
    println!("  (miss@L: miss ratio of a fully associative LRU cache of that level's size, from the histogram; visinfo/miss_ratio_curves.csv with save)");
    let far = r.distant_rows();
    if !far.is_empty() {
        println!("\nmost distant reuses:");
        let h: Vec<String> = ["line", "element", "distance"].map(String::from).to_vec();
        let rows: Vec<Vec<String>> = far
            .iter()
            .take(10)
            .map(|(l, e, _, d)| vec![l.clone(), e.clone(), d.to_string()])
            .collect();
        print!("{}", text_table(&h, &rows));
    }
}

/// `figures/sharing.html`: each shared line's bytes by thread.
fn sharing_figure(
    lines: &[SharedLine],
    line: u32,
    figures: &Path,
    analysis_id: &str,
) -> CmdResult<PathBuf> {
    use crate::vis::sharing::{self, SharedBytes};
    let drawn: Vec<SharedBytes> = lines
        .iter()
        .map(|l| SharedBytes {
            addr: l.addr,
            line,
            kind: l.kind,
            transfers: l.transfers,
            threads: l.masks.clone(),
            byte_names: l.byte_names.clone(),
        })
        .collect();
    let intro = vec![format!(
        "Cache lines of {line} bytes written by one thread and touched by another, most transfers first; Valgrind runs one thread at a time, so the transfers are those of its interleaving."
    )];
    Ok(sharing::sharing_figure(
        figures,
        &drawn,
        &intro,
        analysis_id,
    )?)
}

/// `sharing_stats ?save?`: finds the cache lines shared between threads,
/// true or false sharing; returns a list of per-line dicts.
fn sharing_stats(st: &mut Session, args: &[String]) -> CmdResult<Value> {
    let save = args.iter().any(|x| x == "save");
    let kind = st.mem();
    let line = st.locality().cache.levels.first().map_or(64, |l| l.line);
    let dir = st.visinfo_dir();
    let grouping = st.grouping();
    let a = st.analysis()?;
    let analysis_id = a.summary.analysis_id.clone();
    let lines = filter::sharing_stats(a, kind, line, grouping)?;
    println!(
        "sharing_stats ({}-byte lines written by one thread and touched by another, set_mem_alloc {}; \
         Valgrind runs one thread at a time, so transfers are those of its interleaving):",
        line,
        kind.code()
    );
    if let Some(w) = super::handlers::partial_warning(a) {
        println!("{w}");
    }
    if a.summary.threads.len() > 1 {
        println!("note: {}", THREADS_NOTE);
    }
    if lines.is_empty() {
        println!("no line is shared between threads.");
    }
    for l in &lines {
        println!(
            "line {:#x}: {} sharing, {} transfers ({} true, {} false): {}",
            l.addr,
            l.kind,
            l.transfers,
            l.true_transfers,
            l.false_transfers,
            l.variables.join(" ")
        );
        for t in &l.threads {
            println!(
                "  thread {}: {} accesses to {}; bytes read [{}], written [{}]",
                t.tid,
                t.accesses,
                t.elements.join(" "),
                t.read,
                t.written
            );
        }
    }
    if save {
        let mut df = filter::sharing_table(&lines)?;
        let p1 = filter::write_csv(&mut df, &dir.join("sharing_stats.csv"))?;
        let p2 = filter::write_parquet(&mut df, &dir.join("sharing_stats.parquet"))?;
        let p3 = sharing_figure(&lines, line, &st.figures_dir(), &analysis_id)?;
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
    Ok(Value::List(
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
    ))
}

/// `figures/cache_stats.html`: misses per variable and level, and the
/// miss-ratio curves.
fn summary_figure(r: &CacheReport, figures: &Path, analysis_id: &str) -> CmdResult<PathBuf> {
    use crate::vis::locality::{cache_summary, VarMisses};
    let levels: Vec<String> = r.level_names();
    let vars: Vec<VarMisses> = r
        .per_variable()
        .iter()
        .map(|row| VarMisses {
            name: row.key.clone(),
            misses: row.counts.misses[..levels.len()].to_vec(),
        })
        .collect();
    let curves = crate::vis::locality::curves_of(r);
    let intro = vec![format!(
        "{} accesses of the traced region simulated from cold caches at GL_START; model: {}.",
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
