//! Benchmarks of the Rust stages, driven by `scripts/bench.sh`.
//!
//! ```text
//! bench count TRACE                 number of accesses in a trace
//! bench all TRACE EXE RUNS          reader, analysis, memory, Gleipnir
//!                                   import and figures (medians of RUNS)
//! bench gleipnir TRACE RUNS         Gleipnir text import only
//! bench stages TRACE EXE            each shell stage timed once
//! bench locality TRACE EXE RUNS     cache_stats (cache model, reuse
//!                                   distance, labels) and sharing_stats
//! ```
use std::path::Path;
use std::time::Instant;

use mapvis::filter::VarId;
use mapvis::trace::record::Event;
use mapvis::trace::record::{Batch, TraceReader};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn count(path: &Path) -> u64 {
    let mut r = TraceReader::open(path).expect("open trace");
    let mut n = 0u64;
    let mut check = 0u64;
    // The streaming fast path: accesses go to a closure, other events are
    // returned one at a time. Every field is read, so nothing is skipped.
    while !matches!(
        r.for_each_access(u64::MAX, |a| {
            n += 1;
            check = check
                .wrapping_add(a.addr ^ a.ip ^ a.sp ^ a.fp)
                .wrapping_add((a.size + a.tid + a.region + a.site.0 + a.op.code() as u32) as u64);
        })
        .expect("valid trace"),
        Batch::End
    ) {}
    std::hint::black_box(check);
    n
}

/// Peak resident memory of this process so far, in bytes (VmHWM).
fn peak_rss() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<u64>().ok())
        .map(|k| k * 1024)
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("count") => println!("{}", count(Path::new(&args[2]))),
        Some("all") => {
            let trace = Path::new(&args[2]);
            let exe = Path::new(&args[3]);
            let runs: usize = args.get(4).and_then(|r| r.parse().ok()).unwrap_or(5);
            let n = count(trace) as f64;
            let read: Vec<f64> = (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    count(trace);
                    n / t.elapsed().as_secs_f64()
                })
                .collect();
            println!(
                "reader: {:.1} M accesses/s on one core (goal >= 50)",
                median(read) / 1e6
            );
            let before = peak_rss();
            let mut analyse_rates = Vec::new();
            for _ in 0..runs {
                let t = Instant::now();
                let mut namer = mapvis::trace::naming::ProgramNamer::new(Some(exe), &[]);
                let a = mapvis::filter::analyse(trace, &mut namer).expect("analyse");
                let _ = mapvis::filter::select(&a, mapvis::filter::MemKind::All).expect("select");
                let _ = mapvis::filter::stats::per_variable(&a, mapvis::filter::MemKind::All)
                    .expect("stats");
                analyse_rates.push(n / t.elapsed().as_secs_f64());
            }
            let peak = peak_rss().saturating_sub(before);
            println!(
                "analysis (memory_trace_analysis + filtering_process + stats): {:.1} M accesses/s (goal >= 10)",
                median(analyse_rates) / 1e6
            );
            println!(
                "analysis peak memory: {:.1} bytes/access (goal <= 32)",
                peak as f64 / n
            );
        }
        Some("gleipnir") => gleipnir_import(
            Path::new(&args[2]),
            args.get(3).and_then(|r| r.parse().ok()).unwrap_or(5),
        ),
        Some("stages") => stages(Path::new(&args[2]), Path::new(&args[3])),
        Some("analyse") => {
            let (trace, exe) = (Path::new(&args[2]), Path::new(&args[3]));
            let runs: usize = args.get(4).and_then(|r| r.parse().ok()).unwrap_or(5);
            let rates: Vec<f64> = (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    let mut namer = mapvis::trace::naming::ProgramNamer::new(Some(exe), &[]);
                    let a = mapvis::filter::analyse(trace, &mut namer).expect("analyse");
                    a.summary.accesses as f64 / t.elapsed().as_secs_f64()
                })
                .collect();
            println!(
                "analyse: {:.1} M accesses/s (median of {runs})",
                median(rates) / 1e6
            );
        }
        Some("locality") => locality(
            Path::new(&args[2]),
            Path::new(&args[3]),
            args.get(4).and_then(|r| r.parse().ok()).unwrap_or(3),
        ),
        _ => eprintln!(
            "usage: bench count TRACE | bench all TRACE EXE RUNS | bench gleipnir TRACE RUNS | bench stages TRACE EXE | bench locality TRACE EXE RUNS"
        ),
    }
    if args.get(1).map(String::as_str) == Some("all") {
        let runs: usize = args.get(4).and_then(|r| r.parse().ok()).unwrap_or(5);
        gleipnir_import(Path::new(&args[2]), runs);
        figures(runs);
    }
}

/// Writes the binary trace as a Gleipnir text trace (the shape the real
/// tool prints) and measures how fast it is read and analysed.
fn gleipnir_import(trace: &Path, runs: usize) {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("mapvis-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = dir.join("gleipnir.txt");
    {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&text).unwrap());
        writeln!(out, "X START 0:1 at 0").unwrap();
        let mut r = TraceReader::open(trace).unwrap();
        while let Some(e) = r.next_event().unwrap() {
            match e {
                Event::Access(a) => {
                    let scope = if a.addr >= 0x1000000000 {
                        "S LV v"
                    } else {
                        "H H-0 matmul_c_30.0"
                    };
                    writeln!(
                        out,
                        "{} {:09x} {} {} {} ",
                        a.op.code() as char,
                        a.addr,
                        a.size,
                        a.tid,
                        scope
                    )
                    .unwrap();
                }
                Event::Alloc(al) => writeln!(
                    out,
                    "X {} MALLOC {:09x} {} matmul_c_30 0",
                    al.tid, al.addr, al.size
                )
                .unwrap(),
                _ => {}
            }
        }
    }
    let bytes = std::fs::metadata(&text).unwrap().len() as f64;
    let parse: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let mut r = mapvis::trace::record::GleipnirReader::open(&text).unwrap();
            while r.next_event().unwrap().is_some() {}
            bytes / t.elapsed().as_secs_f64()
        })
        .collect();
    let full: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let mut namer = mapvis::trace::naming::NullNamer;
            let _ = mapvis::filter::analyse_gleipnir(&text, &mut namer).unwrap();
            bytes / t.elapsed().as_secs_f64()
        })
        .collect();
    println!(
        "gleipnir import: {:.0} MB/s parsing, {:.0} MB/s parsing + analysis ({:.0} MB text) (goal >= 100)",
        median(parse) / 1e6,
        median(full) / 1e6,
        bytes / 1e6
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Figure writing time and HTML size for synthetic row-major traversals of
/// 1 M and 25 M accesses.
fn figures(runs: usize) {
    use polars::prelude::{Column, DataFrame};
    for n in [1_000_000u64, 25_000_000] {
        let cols = 1000u64;
        let base = 0x4a00000u64;
        let addr: Vec<u64> = (0..n).map(|i| base + 4 * (i % (cols * cols))).collect();
        let occ: Vec<u32> = (0..n).map(|i| (i / (cols * cols)) as u32 + 1).collect();
        let acc = DataFrame::new(vec![
            Column::new("time".into(), (0..n).collect::<Vec<u64>>()),
            Column::new("op".into(), vec![b'S'; n as usize]),
            Column::new("addr".into(), addr),
            Column::new("size".into(), vec![4u32; n as usize]),
            Column::new("tid".into(), vec![1u32; n as usize]),
            Column::new("var".into(), vec![0u32; n as usize]),
            Column::new("occurrence".into(), occ),
            Column::new("line".into(), vec![0u32; n as usize]),
        ])
        .unwrap();
        let vars = DataFrame::new(vec![
            Column::new("var".into(), vec![0u32]),
            Column::new("name".into(), vec!["a"]),
            Column::new("scope".into(), vec!["H"]),
            Column::new("base".into(), vec![base]),
            Column::new("size".into(), vec![4 * cols * cols]),
            Column::new("elem_size".into(), vec![4u32]),
            Column::new("dims".into(), vec![""]),
        ])
        .unwrap();
        let lines = DataFrame::new(vec![
            Column::new("line".into(), vec![0u32]),
            Column::new("source".into(), vec!["bench.c:1"]),
        ])
        .unwrap();
        let dir = std::env::temp_dir().join(format!("mapvis-bench-fig-{}", std::process::id()));
        let opts = mapvis::vis::FigureOptions::writing_to(dir.join("figures"), dir.join("visinfo"));
        let reps = if n > 1_000_000 { runs.min(3) } else { runs };
        let mut t_complete = Vec::new();
        let mut t_2d = Vec::new();
        let (mut size_c, mut size_2d) = (0, 0);
        for _ in 0..reps {
            let t = Instant::now();
            let r =
                mapvis::vis::complete_memory_access_pattern(&acc, &vars, &lines, &opts).unwrap();
            t_complete.push(t.elapsed().as_secs_f64());
            size_c = std::fs::metadata(&r.html).unwrap().len();
            let t = Instant::now();
            let r = mapvis::vis::array_2d(
                mapvis::vis::Array2d {
                    acc: &acc,
                    vars: &vars,
                    lines: &lines,
                    var: VarId(0),
                    cols,
                    type_bytes: 4,
                },
                &opts,
            )
            .unwrap();
            t_2d.push(t.elapsed().as_secs_f64());
            size_2d = std::fs::metadata(&r.html).unwrap().len();
        }
        println!(
            "figures, {} M accesses: complete pattern {:.2} s ({:.1} MB HTML), 2D array {:.2} s ({:.1} MB HTML)",
            n / 1_000_000,
            median(t_complete),
            size_c as f64 / 1e6,
            median(t_2d),
            size_2d as f64 / 1e6
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The time of each stage of `memory_trace_analysis` and `filtering_process`
/// on one trace, once: to see where the time goes.
fn stages(trace: &Path, exe: &Path) {
    let dir = std::env::temp_dir().join(format!("mapvis-bench-stages-{}", std::process::id()));
    let t = Instant::now();
    let mut namer = mapvis::trace::naming::ProgramNamer::new(Some(exe), &[]);
    let a = mapvis::filter::analyse(trace, &mut namer).expect("analyse");
    let n = a.summary.accesses as f64;
    let t_an = t.elapsed().as_secs_f64();
    let t = Instant::now();
    mapvis::filter::files::save_analysis(&a, &dir.join("saved")).expect("save");
    let t_save = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let sel = mapvis::filter::select(&a, mapvis::filter::MemKind::All).expect("select");
    let t_sel = t.elapsed().as_secs_f64();
    let t = Instant::now();
    mapvis::filter::files::write_order_and_allocations(&a, &sel, &dir.join("visinfo"))
        .expect("order data");
    let t_order = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let _ = mapvis::filter::stats::per_variable(&a, mapvis::filter::MemKind::All).expect("stats");
    let _ = mapvis::filter::stats::per_address(&a, mapvis::filter::MemKind::All).expect("stats");
    let t_stats = t.elapsed().as_secs_f64();
    println!(
        "stages for {:.1} M accesses: analyse {t_an:.2} s ({:.1} M/s), save {t_save:.2} s, select {t_sel:.2} s, order data {t_order:.2} s, statistics {t_stats:.3} s; peak memory {:.1} bytes/access",
        n / 1e6,
        n / t_an / 1e6,
        peak_rss() as f64 / n
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `cache_stats` as the shell runs it (this machine's cache model, exact
/// reuse distance, pattern labels, every access) and `sharing_stats`, on an
/// analysis made once: accesses per second (median of `runs`) and the
/// memory the sinks add on top of the analysis.
fn locality(trace: &Path, exe: &Path, runs: usize) {
    use mapvis::filter::locality::{cache::CacheModel, report};
    use mapvis::filter::MemKind;
    let mut namer = mapvis::trace::naming::ProgramNamer::new(Some(exe), &[]);
    let a = mapvis::filter::analyse(trace, &mut namer).expect("analyse");
    let n = a.accesses.len() as f64;
    let before = peak_rss();
    let opts = report::Options {
        model: CacheModel::host(),
        sampling: None,
        auto_above: None,
        grouping: mapvis::filter::stats::Grouping::BySite,
    };
    let mut lines = 0;
    let mut cpu_rates = Vec::new();
    let rates: Vec<f64> = (0..runs)
        .map(|_| {
            let (t, c) = (Instant::now(), cpu_seconds());
            let r = report::cache_stats(&a, MemKind::All, &opts).expect("cache_stats");
            lines = r.reuse.distinct_lines;
            cpu_rates.push(n / (cpu_seconds() - c).max(1e-3));
            n / t.elapsed().as_secs_f64()
        })
        .collect();
    let grown = peak_rss().saturating_sub(before);
    let shared: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            report::sharing_stats(
                &a,
                MemKind::All,
                64,
                mapvis::filter::stats::Grouping::BySite,
            )
            .expect("sharing_stats");
            n / t.elapsed().as_secs_f64()
        })
        .collect();
    println!(
        "cache_stats ({} levels, exact reuse distance, labels): {:.1} M accesses/s wall, {:.1} M per CPU second \
         (medians of {runs}, goal >= 20); peak memory grew {:.1} MB for {} distinct lines and {:.1} M accesses",
        opts.model.levels.len(),
        median(rates) / 1e6,
        median(cpu_rates) / 1e6,
        grown as f64 / 1e6,
        lines,
        n / 1e6
    );
    println!(
        "sharing_stats: {:.1} M accesses/s (median of {runs})",
        median(shared) / 1e6
    );
}

/// CPU time of this thread so far, in seconds (user + system, from
/// /proc/thread-self/stat, in clock ticks of 1/100 s): on a shared machine
/// the wall clock also counts other processes' turns.
fn cpu_seconds() -> f64 {
    let s = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    // Fields after the command name in parentheses; utime and stime are
    // fields 14 and 15 of the whole line.
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|x| x.parse().ok())
        .collect();
    f.iter().sum::<u64>() as f64 / 100.0
}
