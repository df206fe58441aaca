//! Benchmarks of the Rust stages, driven by `scripts/bench.sh`.
//!
//! ```text
//! bench count TRACE                 number of accesses in a trace
//! bench all TRACE EXE RUNS          reader, analysis, memory (medians of RUNS)
//! ```
use std::path::Path;
use std::time::Instant;

use mapvis::trace::format::Event;
use mapvis::trace::reader::TraceReader;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn count(path: &Path) -> u64 {
    let mut r = TraceReader::open(path).expect("open trace");
    let mut n = 0;
    while let Some(e) = r.next_event().expect("valid trace") {
        if matches!(e, Event::Access(_)) {
            n += 1;
        }
    }
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
                let mut namer = mapvis::trace::program::ProgramNamer::new(Some(exe), &[]);
                let a = mapvis::filter::analysis::analyse(trace, &mut namer).expect("analyse");
                let sel = mapvis::filter::select(&a, mapvis::filter::MemKind::All).expect("select");
                let _ = mapvis::filter::stats::per_variable(&a, &sel).expect("stats");
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
        _ => eprintln!("usage: bench count TRACE | bench all TRACE EXE RUNS"),
    }
}
