//! Valgrind's own tools (cachegrind, massif, dhat, helgrind, lackey, …) run
//! on the loaded program, for `valgrind_tool` and its shortcuts: where
//! their output goes and the few lines of it worth printing.
//!
//! Valgrind writes under temporary names (`.NAME.partial`); the previous
//! output is replaced only when the run is over, so a failed or
//! interrupted run never costs the last good one.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use super::run::RunError;

/// One run of a Valgrind tool.
#[derive(Clone, Debug)]
pub struct GrindRequest {
    /// The valgrind binary.
    pub valgrind: PathBuf,
    /// `--tool=` value: `cachegrind`, `massif`, `dhat`, `lackey`, …
    pub tool: String,
    /// The program and its arguments.
    pub exe: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Where the log and the tool's own output go (`grindanalysis/`).
    pub out_dir: PathBuf,
}

/// What a run left.
#[derive(Debug)]
pub struct GrindRun {
    /// Valgrind's exit status.
    pub status: ExitStatus,
    /// Valgrind's log: `TOOL_PROGRAM.log`.
    pub log: PathBuf,
    /// The tool's own output file, for tools that write one.
    pub out_file: Option<PathBuf>,
    /// The files written (renamed into place), for the manifest.
    pub written: Vec<PathBuf>,
    /// The lines of the output worth printing: miss rates, error counts,
    /// the heap peak, the top allocation points.
    pub summary: Vec<String>,
}

/// A path for Valgrind's `--log-file` and `--*-out-file`, which expand
/// `%p` and `%q{VAR}`: a `%` of the path itself is doubled.
fn valgrind_path_arg(p: &Path) -> String {
    p.display().to_string().replace('%', "%%")
}

/// The temporary name Valgrind writes `p` under.
fn partial(p: &Path) -> PathBuf {
    p.with_file_name(format!(
        ".{}.partial",
        p.file_name().unwrap_or_default().to_string_lossy()
    ))
}

/// Runs the program under the tool and summarises its output.
///
/// # Errors
/// The output folder cannot be made, or Valgrind cannot be started.
pub fn run_grind(req: &GrindRequest) -> Result<GrindRun, RunError> {
    let dir = &req.out_dir;
    crate::workdir::create_dir(dir)?;
    let tool = req.tool.as_str();
    let stem = req
        .exe
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let log = dir.join(format!("{tool}_{stem}.log"));
    let out_file = match tool {
        "cachegrind" => Some(dir.join(format!("cachegrind.out.{stem}"))),
        "massif" => Some(dir.join(format!("massif.out.{stem}"))),
        "dhat" => Some(dir.join(format!("dhat.out.{stem}.json"))),
        _ => None,
    };
    // Valgrind opens its output files by name and would write through a
    // link left in place of one: whatever is there is removed first (a
    // link itself, never its target).
    for f in std::iter::once(&log).chain(out_file.iter()) {
        let _ = std::fs::remove_file(partial(f));
    }
    let mut cmd = Command::new(&req.valgrind);
    cmd.arg(format!("--tool={tool}"))
        .arg(format!("--log-file={}", valgrind_path_arg(&partial(&log))));
    cmd.args(tool_args(tool, out_file.as_deref()));
    cmd.arg(&req.exe).args(&req.args);
    super::ffi::end_with_parent(&mut cmd);
    let status = cmd.status();
    let written: Vec<PathBuf> = std::iter::once(&log)
        .chain(out_file.iter())
        .filter(|f| std::fs::rename(partial(f), f).is_ok())
        .cloned()
        .collect();
    let status = status.map_err(|source| RunError::Io {
        what: "could not run",
        path: req.valgrind.clone(),
        source,
    })?;
    let summary = summarise(tool, &log, out_file.as_deref());
    Ok(GrindRun {
        status,
        log,
        out_file,
        written,
        summary,
    })
}

/// The tool's own options: where its output file goes, and what it does.
fn tool_args(tool: &str, out_file: Option<&Path>) -> Vec<String> {
    let out = out_file.map(|f| valgrind_path_arg(&partial(f)));
    match (tool, out) {
        ("cachegrind", Some(f)) => vec![
            "--cache-sim=yes".into(),
            format!("--cachegrind-out-file={f}"),
        ],
        ("massif", Some(f)) => vec![format!("--massif-out-file={f}")],
        ("dhat", Some(f)) => vec![format!("--dhat-out-file={f}")],
        ("lackey", _) => vec!["--trace-mem=yes".into()],
        _ => vec![],
    }
}

/// Log lines without Valgrind's `==PID==` prefix whose text matches.
fn log_lines(log: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    log.lines()
        .filter(|l| keep(l))
        .map(|l| l.split("== ").last().unwrap_or(l).trim().to_string())
        .collect()
}

/// The lines of a tool's output worth printing.
fn summarise(tool: &str, log: &Path, out_file: Option<&Path>) -> Vec<String> {
    let log_text = std::fs::read_to_string(log).unwrap_or_default();
    match tool {
        "cachegrind" => log_lines(&log_text, |l| l.contains("miss rate")),
        "helgrind" | "lackey" => log_lines(&log_text, |l| {
            l.contains("ERROR SUMMARY") || l.contains("guest instrs") || l.contains("total:")
        }),
        "massif" => out_file
            .and_then(|f| std::fs::read_to_string(f).ok())
            .map(|t| vec![format!("peak heap: {} bytes", massif_peak(&t))])
            .unwrap_or_default(),
        "dhat" => {
            let mut lines = log_lines(&log_text, |l| {
                l.contains("Total:") || l.contains("At t-gmax:")
            });
            lines.extend(out_file.map(dhat_top_blocks).unwrap_or_default());
            lines
        }
        _ => vec![],
    }
}

/// The largest heap size of a massif output (`mem_heap_B=` of its
/// snapshots).
fn massif_peak(text: &str) -> u64 {
    text.lines()
        .filter_map(|l| l.strip_prefix("mem_heap_B="))
        .filter_map(|v| v.parse::<u64>().ok())
        .max()
        .unwrap_or(0)
}

/// The three allocation points with the most bytes, from DHAT's JSON output
/// (`pps`: program points with total bytes `tb` and blocks `tbk`; `fs`:
/// frame indices into `ftbl`). The first frame outside the allocator names
/// the point.
fn dhat_top_blocks(path: &Path) -> Vec<String> {
    let Some(j) = std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
    else {
        return vec![];
    };
    let ftbl: Vec<&str> = j["ftbl"]
        .as_array()
        .map(|a| a.iter().map(|f| f.as_str().unwrap_or("?")).collect())
        .unwrap_or_default();
    let mut pps: Vec<(u64, u64, String)> = j["pps"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|pp| {
                    let frame = pp["fs"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|f| f.as_u64().and_then(|i| ftbl.get(i as usize)))
                        .find(|f| !f.contains("vgpreload_"))
                        .map(|f| {
                            f.split_once(": ")
                                .map(|(_, rest)| rest)
                                .unwrap_or(f)
                                .to_string()
                        })
                        .unwrap_or_else(|| "?".into());
                    (
                        pp["tb"].as_u64().unwrap_or(0),
                        pp["tbk"].as_u64().unwrap_or(0),
                        frame,
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    pps.sort_by_key(|p| std::cmp::Reverse(p.0));
    pps.into_iter()
        .take(3)
        .map(|(tb, tbk, at)| format!("top: {tb} bytes in {tbk} block(s) at {at}"))
        .collect()
}
