//! What a session keeps, and how it lasts from one session to the next:
//! the setup (program, arguments, folders, memory kinds, current trace and
//! run) saved in `.mapvis/session.json`, the locality settings (the cache
//! model, reuse sampling, figure colours) saved in `.mapvis/locality.json`,
//! and the analysed heap profile. The command groups read and change them
//! through the session.
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::error::{CmdResult, Context};
use crate::filter::{CacheModel, ColourMode, HeapReport, HeapRun, MemKind};
use crate::trace::{BacktraceSymbolizer, Calls, Window};
use crate::workdir::{self, Run, WorkFolder};

/// The locality settings of a session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// The cache hierarchy `cache_stats` simulates.
    pub cache: CacheModel,
    /// SHARDS sampling rate of the reuse distance, None for exact.
    pub sampling: Option<f64>,
    /// `set_reuse_sampling auto N`: with no rate, exact up to N accesses
    /// and sampled above (None: `off`, exact always). Files saved before
    /// it get the default.
    #[serde(default = "auto_above")]
    pub auto_above: Option<u64>,
    /// How the access figures colour their points (`set_figure_colour`).
    #[serde(default)]
    pub figure_colour: ColourMode,
}

/// The default of [`Settings::auto_above`]: sampled above 10^9 accesses.
fn auto_above() -> Option<u64> {
    Some(crate::filter::AUTO_ABOVE)
}

impl Default for Settings {
    /// This machine's caches, exact reuse distances up to 10^9 accesses,
    /// the default colours.
    fn default() -> Settings {
        Settings {
            cache: CacheModel::default(),
            sampling: None,
            auto_above: auto_above(),
            figure_colour: ColourMode::default(),
        }
    }
}

impl Settings {
    /// The settings saved in `folder`, or the defaults (this machine's
    /// caches, exact reuse distance). A saved file that cannot be read or
    /// understood is reported, with its cause, and left as it is.
    pub fn load(folder: &WorkFolder) -> Settings {
        let file = folder.locality_file();
        let text = match crate::workdir::read_regular(&file) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Settings::default(),
            Err(e) => {
                eprintln!(
                    "warning: the saved cache settings {} cannot be read ({e}); this session uses this machine's caches and exact reuse distance.",
                    file.display()
                );
                return Settings::default();
            }
        };
        serde_json::from_str(&text).unwrap_or_else(|e| {
            eprintln!(
                "warning: the saved cache settings {} are damaged ({e}); this session uses this machine's caches and exact reuse distance until set_cache saves new ones.",
                file.display()
            );
            Settings::default()
        })
    }

    /// Writes the settings to `.mapvis/locality.json` in `folder`.
    pub(super) fn save(&self, folder: &WorkFolder) -> CmdResult<()> {
        let path = folder.locality_file();
        crate::workdir::write_file(&path, &serde_json::to_vec_pretty(self).unwrap_or_default())
            .context(|| {
                format!(
                    "cannot save the cache settings to {} (they apply to this session only)",
                    path.display()
                )
            })
            .map(drop)
    }
}

/// The analysed allocator calls of one file, with the file's identity so
/// a newer file replaces them.
pub struct HeapState {
    pub(super) path: PathBuf,
    pub(super) stamp: Option<SystemTime>,
    /// The calls.
    pub run: HeapRun,
    /// What was computed from them.
    pub report: HeapReport,
    pub(super) sym: BacktraceSymbolizer,
}

/// The setup a session saves in `.mapvis/session.json` at each change, so
/// that a later session in the same folder continues with it.
#[derive(Clone, Debug, Default)]
pub struct Setup {
    /// Program to trace (`load_exe`).
    pub exe: Option<PathBuf>,
    /// Program arguments (`set_arguments`).
    pub args: Vec<String>,
    /// Folders searched for sources (`set_src_path`).
    pub src_paths: Vec<PathBuf>,
    /// Valgrind binary (`set_valgrind_path`); PATH when unset. Saved but
    /// never restored (see [`Setup::restore`]).
    pub valgrind: Option<PathBuf>,
    /// Memory kinds shown (`set_mem_alloc`).
    pub mem: MemKind,
    /// Trace file to analyse (set by run_gleipnir or load_trace).
    pub trace_file: Option<PathBuf>,
    /// The saved run made current by `use_run`; `None` for the folder's
    /// own trace and analysis.
    pub run: Option<Run>,
    /// What `run_gleipnir` traces (`set_region`).
    pub region: Region,
    /// The memory the analysis may use, in bytes (`set_memory_limit`);
    /// `None` for the default, [`default_memory_limit`].
    pub memory_limit: Option<u64>,
}

/// The memory limit when none is set: a quarter of the machine's memory
/// (`MemTotal` of `/proc/meminfo`), at most 2 GiB; 2 GiB when the
/// machine does not say.
pub fn default_memory_limit() -> u64 {
    const MAX: u64 = 2 << 30;
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    });
    total.map_or(MAX, |t| (t / 4).min(MAX))
}

/// The smallest memory limit `set_memory_limit` takes: below it the
/// analysis' fixed parts (the by-variable buffers, about 120 MB, and the
/// batches in flight) would not fit.
pub const MIN_MEMORY_LIMIT: u64 = 512 << 20;

/// Parses a memory size: a whole number of bytes, or with the suffix `K`,
/// `M` or `G` (powers of 1024; `KB`, `MiB` and lower case are taken too).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => u32::MAX,
    };
    let n: Option<u64> = num.parse().ok();
    match n.zip((shift != u32::MAX).then_some(shift)) {
        Some((n, sh)) => n
            .checked_mul(1u64 << sh)
            .ok_or_else(|| format!("{text} is too large a size")),
        None => Err(format!(
            "\"{text}\" is not a size: give bytes, or a number with K, M or G (512M, 2G)"
        )),
    }
}

/// What a traced run records (`set_region`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Region {
    /// Between the program's GL_START and GL_STOP (the default).
    #[default]
    Pins,
    /// The whole run, from the first instruction; the pins are ignored.
    Whole,
    /// Each call of a function (entry to return, callees included), or
    /// the calls `calls` names; the pins are ignored.
    Function {
        /// The function's name as the user gave it.
        name: String,
        /// Which calls.
        calls: Calls,
    },
    /// Windows of the run: counts of accesses; the pins are ignored.
    Window(Window),
    /// Each execution of some source lines, callees included; the pins
    /// are ignored.
    Lines {
        /// The source file as the user gave it (a path or its end).
        file: String,
        /// First line.
        first: u64,
        /// Last line.
        last: u64,
    },
}

impl Region {
    /// Reads `set_region`'s arguments: `pins`, `off`, `function NAME
    /// ?CALLS?`, `lines FILE:FIRST-LAST`.
    ///
    /// # Errors
    /// A sentence saying what was wrong and what `set_region` takes.
    pub fn parse(a: &[String]) -> Result<Region, String> {
        let shown = || {
            a.join(" ")
                .replace('"', "'")
                .chars()
                .take(80)
                .collect::<String>()
        };
        match (a.first().map(String::as_str), a.len()) {
            (Some("pins"), 1) => Ok(Region::Pins),
            (Some("off"), 1) => Ok(Region::Whole),
            (Some("function"), 2 | 3) => Ok(Region::Function {
                name: a[1].clone(),
                calls: match a.get(2) {
                    Some(c) => Calls::parse(c)?,
                    None => Calls::All,
                },
            }),
            (Some("function"), _) => Err(
                "set_region function takes the function's name and, optionally, which calls:                  set_region function NAME ?all|N|A-B?"
                    .into(),
            ),
            (Some("lines"), 2) => parse_lines(&a[1]),
            (Some("window"), 3 | 4) => {
                let n = |k: usize| -> Result<u64, String> {
                    a.get(k).map_or(Ok(0), |w| {
                        w.parse().map_err(|_| {
                            format!("set_region window takes numbers of accesses, not \"{w}\"")
                        })
                    })
                };
                Ok(Region::Window(Window::new(n(1)?, n(2)?, n(3)?)?))
            }
            (Some("window"), _) => Err(
                "set_region window takes SKIP COUNT ?EVERY?: COUNT accesses after the first SKIP, \
                 again every EVERY accesses"
                    .into(),
            ),
            (Some("lines"), _) => {
                Err("set_region lines takes one FILE:FIRST-LAST, as set_region lines mm.c:10-14".into())
            }
            _ => Err(format!(
                "set_region takes pins (between GL_START and GL_STOP), off (the whole run), \
                 function NAME ?CALLS? or lines FILE:FIRST-LAST, not \"{}\".",
                shown()
            )),
        }
    }

    /// The arguments `parse` reads back.
    pub fn words(&self) -> Vec<String> {
        match self {
            Region::Pins => vec!["pins".into()],
            Region::Whole => vec!["off".into()],
            Region::Function { name, calls } => {
                vec!["function".into(), name.clone(), calls.word()]
            }
            Region::Lines { file, first, last } => {
                vec!["lines".into(), format!("{file}:{first}-{last}")]
            }
            Region::Window(w) => {
                let mut words = vec!["window".into(), w.skip.to_string(), w.count.to_string()];
                if w.every != 0 {
                    words.push(w.every.to_string());
                }
                words
            }
        }
    }

    /// What it traces, in words.
    pub fn describe(&self) -> String {
        match self {
            Region::Pins => "pins: the accesses between GL_START and GL_STOP".into(),
            Region::Whole => {
                "off: the whole run, from the first instruction (the pins are ignored)".into()
            }
            Region::Function { name, calls } => format!(
                "function {name}, {}: from entry to return, callees included, in the thread \
                 that calls it (the pins are ignored)",
                calls.describe()
            ),
            Region::Window(w) if w.every == 0 => format!(
                "window: {} accesses after the first {} of the run, from all threads (the pins \
                 are ignored)",
                w.count, w.skip
            ),
            Region::Window(w) => format!(
                "window: {} accesses after the first {} of the run, and again every {} (the pins \
                 are ignored)",
                w.count, w.skip, w.every
            ),
            Region::Lines { file, first, last } => format!(
                "lines {file}:{first}-{last}: each time they run, callees included (the pins \
                 are ignored)"
            ),
        }
    }
}

/// `FILE:FIRST-LAST`, FIRST <= LAST, both from 1.
fn parse_lines(spec: &str) -> Result<Region, String> {
    let bad = || {
        format!(
            "set_region lines takes FILE:FIRST-LAST (as mm.c:10-14), not \"{}\"",
            spec.chars().take(80).collect::<String>()
        )
    };
    let (file, span) = spec.rsplit_once(':').ok_or_else(bad)?;
    let (first, last) = span.split_once('-').unwrap_or((span, span));
    let first: u64 = first.trim().parse().map_err(|_| bad())?;
    let last: u64 = last.trim().parse().map_err(|_| bad())?;
    if file.is_empty() || first == 0 || last < first {
        return Err(bad());
    }
    Ok(Region::Lines {
        file: file.to_string(),
        first,
        last,
    })
}

impl Setup {
    /// Saves the setup in `folder`'s `session.json`, a trace inside the
    /// folder relative to it. A failure is a warning: the setup applies to
    /// this session all the same.
    pub fn save(&self, folder: &WorkFolder) {
        let j = serde_json::json!({
            "exe": self.exe,
            "args": self.args,
            "src_paths": self.src_paths,
            "valgrind": self.valgrind,
            "mem": self.mem.code(),
            "trace_file": self.trace_file.as_deref().map(|p| in_folder(folder.root(), p)),
            "run": self.run.as_ref().map(Run::label),
            "region": self.region.words(),
            "memory_limit": self.memory_limit,
        });
        if let Err(e) = workdir::write_file(
            &folder.session_file(),
            &serde_json::to_vec_pretty(&j).unwrap_or_default(),
        ) {
            eprintln!(
                "warning: the settings were not saved: {}",
                super::error::with_causes(&e)
            );
        }
    }

    /// The setup saved in `folder`, or the defaults when there is none or
    /// it cannot be read (said in a warning; a damaged file is kept aside
    /// as `session.json.bad`, not overwritten by the next save).
    pub fn restore(folder: &WorkFolder) -> Setup {
        read_saved(&folder.session_file())
            .map(|j| Setup::from_json(folder, &j))
            .unwrap_or_default()
    }

    /// The setup `j` describes. The file may come from someone else (a
    /// folder unpacked from a tarball), so the Valgrind binary it names is
    /// never restored (the one on PATH is used until set_valgrind_path is
    /// given again); the program to trace is, and the session names it
    /// before it first runs.
    fn from_json(folder: &WorkFolder, j: &serde_json::Value) -> Setup {
        let file = folder.session_file();
        let path = |v: &serde_json::Value| v.as_str().map(PathBuf::from);
        if let Some(v) = path(&j["valgrind"]) {
            eprintln!(
                "warning: the saved settings {} name {} as the Valgrind binary. A program named by a file in the working folder is not run unless you name it yourself, so this session uses valgrind from PATH; to use that binary, give its path to set_valgrind_path.",
                file.display(),
                super::text::path_line(&v)
            );
        }
        let strings = |v: &serde_json::Value| -> Vec<String> {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        Setup {
            exe: path(&j["exe"]),
            // A trace inside the folder is saved relative to it, so a
            // copied folder analyses its own copy, not the original's.
            trace_file: path(&j["trace_file"]).map(|p| folder.root().join(p)),
            run: j["run"]
                .as_str()
                .and_then(|r| folder.run(r))
                .filter(|r| r.dir().is_dir()),
            args: strings(&j["args"]),
            src_paths: j["src_paths"]
                .as_array()
                .map(|a| a.iter().filter_map(path).collect())
                .unwrap_or_default(),
            mem: j["mem"]
                .as_str()
                .and_then(MemKind::parse)
                .unwrap_or_default(),
            valgrind: None,
            // A string before code regions, a list of set_region's words
            // since; anything unreadable is the default.
            region: match j["region"].as_str() {
                Some(word) => Region::parse(&[word.to_string()]).unwrap_or_default(),
                None => Region::parse(&strings(&j["region"])).unwrap_or_default(),
            },
            memory_limit: j["memory_limit"]
                .as_u64()
                .filter(|&b| b >= MIN_MEMORY_LIMIT),
        }
    }
}

/// The JSON object saved in `file`, or `None` (with a warning when the
/// file exists but cannot be read or is not an object; a damaged file is
/// renamed to `*.json.bad`).
fn read_saved(file: &Path) -> Option<serde_json::Value> {
    let text = match workdir::read_regular(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            eprintln!(
                "warning: the saved settings {} cannot be read ({e}); this session starts with the default settings.",
                file.display()
            );
            return None;
        }
    };
    match serde_json::from_slice::<serde_json::Value>(&text) {
        Ok(j) if j.is_object() => Some(j),
        other => {
            // Kept aside, not overwritten by the next save.
            let aside = file.with_extension("json.bad");
            let moved = std::fs::rename(file, &aside).is_ok();
            eprintln!(
                "warning: the saved settings {} are damaged ({}); this session starts with the default settings{}.",
                file.display(),
                match other {
                    Err(e) => e.to_string(),
                    Ok(_) => "they are not a JSON object".into(),
                },
                if moved {
                    format!(", and the damaged file was kept as {}", aside.display())
                } else {
                    String::new()
                }
            );
            None
        }
    }
}

/// `p` relative to the working folder `root` when it lies inside it (as
/// `session.json` stores it), else `p` itself.
fn in_folder(root: &Path, p: &Path) -> PathBuf {
    let real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    p.strip_prefix(&real)
        .or_else(|_| p.strip_prefix(root))
        .map_or_else(|_| p.to_path_buf(), Path::to_path_buf)
}
