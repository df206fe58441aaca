//! The README's numbers, checked against what mapvis prints when the
//! README's commands are run as a user runs them. The oracle is README.md
//! itself, read at test time: the sections "Using it", "Tracing a program
//! you cannot edit", "Did my change help?" (with "A sweep: which tile size?" and "What if the array were
//! laid out another way?") and "Reading the figures: a short tutorial".
//!
//! - A fenced block typed at the `mapvis>` prompt is run as those
//!   commands (with `mapvis -c`, in a fresh folder holding the programs
//!   its `compile_exe` names, copied from the repository); a `tcl` block
//!   is run as a script file. Every line of the output the README shows
//!   must be a line mapvis printed, in the same order, word for word and
//!   number for number (a README line may stop short of mapvis's line, as
//!   the README's tables leave the wide `pattern` column out; a line or a
//!   line's end written `...` stands for what the README leaves out).
//! - Every number the prose of these sections states about that output
//!   (bytes used per line, the percentage cut, `65536 / 8`, the L1 sets a
//!   tile column falls in, the address steps of the tutorial's figure,
//!   the point budgets, the hit classes per line) is read from the README
//!   text and compared with mapvis's output or its figure data.
//! - Every figure or data file these sections name is looked for where
//!   the README says it is written.
//!
//! Where the README names a variable of a program it does not give (`p`,
//! `ps`, `A`), the test writes the smallest program matching the README's
//! words ([`SHAPES_C`]). Not checked, with the reason: timings and build
//! times (machine dependent); addresses (they depend on the machine's
//! libc and Valgrind); the pattern labels and `set_cache` arguments
//! "Using it" quotes as examples (they describe programs the README does
//! not give; `tests/labels_everywhere.rs` checks labels on real programs);
//! the 32 KiB start block (a property of the stack, checked by
//! `tests/repro_counts.rs`); and colours (red, green), which are
//! presentation (`tests/vis_colours.rs`), while the classes behind them
//! are checked here.
//!
//! A mismatch is reported with the README's line or sentence and the value
//! mapvis printed; the test never edits README.md.
use std::path::Path;
use std::process::Command;

mod common;
mod vis_common;
use common::{mapvis_script, root};
use serde_json::Value;

const USING_IT: &str = "## Using it";
const CHANGE: &str = "## Did my change help?";
const CANNOT_EDIT: &str = "## Tracing a program you cannot edit";
const SWEEP: &str = "### A sweep: which tile size?";
const WHAT_IF: &str = "### What if the array were laid out another way?";
const TUTORIAL: &str = "## Reading the figures: a short tutorial";

/// The program the test writes for the variables the README names without
/// giving their program: `p`, an array of doubles (the tutorial's
/// "4-byte elements for an array of doubles"); `ps`, a `struct particle
/// ps[N]` with fields `x`, `y` and `id`, 24 bytes each (the README's
/// "24-byte element", "six 4-byte words"), every field touched; and `A`,
/// the 2D array of `what_if_A_pad_64.html`.
const SHAPES_C: &str = r#"#include <stdlib.h>
#include "gleipnir.h"

struct particle { double x, y; int id; };
#define N 8
struct particle ps[N];
static double A[64][64];

int main(void)
{
    int i, j;
    double *p = malloc(16 * 16 * sizeof *p);
    if (!p)
        return 1;
    GL_START;
    for (i = 0; i < 16 * 16; i++)
        p[i] = i;
    for (i = 0; i < N; i++) {
        ps[i].x = i;
        ps[i].y = 2 * i;
        ps[i].id = i;
    }
    for (j = 0; j < 64; j++)
        for (i = 0; i < 64; i++)
            A[i][j] += 1.0;
    GL_STOP;
    free(p);
    return 0;
}
"#;

// ---------------------------------------------------------------------
// Reading the README.

/// The lines of README.md under `heading` (a whole heading line), up to
/// the next heading of the same or a higher level outside a code fence.
fn section(heading: &str) -> String {
    let text = std::fs::read_to_string(root().join("README.md")).expect("read README.md");
    let level = heading.chars().take_while(|&c| c == '#').count();
    let (mut out, mut inside, mut fenced) = (String::new(), false, false);
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            if line == heading {
                inside = true;
                continue;
            }
            if inside && line.chars().take_while(|&c| c == '#').count() <= level {
                break;
            }
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(
        inside,
        "README.md has no heading `{heading}`: update this test"
    );
    out
}

/// A fenced code block: its language word and its lines.
struct Block {
    lang: String,
    lines: Vec<String>,
}

/// The fenced code blocks of a section, in order.
fn blocks(sec: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut cur: Option<Block> = None;
    for line in sec.lines() {
        if let Some(rest) = line.strip_prefix("```") {
            match cur.take() {
                Some(b) => out.push(b),
                None => {
                    cur = Some(Block {
                        lang: rest.trim().to_string(),
                        lines: Vec::new(),
                    })
                }
            }
        } else if let Some(b) = cur.as_mut() {
            b.lines.push(line.to_string());
        }
    }
    out
}

/// The blocks of `sec` typed at the `mapvis>` prompt.
fn prompt_blocks(sec: &str) -> Vec<Block> {
    blocks(sec)
        .into_iter()
        .filter(|b| b.lines.iter().any(|l| l.starts_with("mapvis> ")))
        .collect()
}

/// The commands of a block typed at the prompt, as one script (a `;#`
/// comment is a Tcl comment, kept), and the output shown after them.
fn prompt_session(b: &Block) -> (String, Vec<String>) {
    let (mut cmds, mut shown) = (Vec::new(), Vec::new());
    for l in &b.lines {
        match l.strip_prefix("mapvis> ") {
            Some(c) => {
                assert!(
                    shown.is_empty(),
                    "README.md: a command after shown output, `{l}`: this test reads the \
                     output as the last command's"
                );
                cmds.push(c.to_string());
            }
            None => shown.push(l.clone()),
        }
    }
    (cmds.join("\n"), shown)
}

/// The prose of a section: code blocks left out, whitespace joined into
/// single spaces (the README wraps its sentences anywhere).
fn prose(sec: &str) -> String {
    let mut text = String::new();
    let mut fenced = false;
    for line in sec.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            text.push_str(line);
            text.push(' ');
        }
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What the README's prose says between `before` and `after`.
fn said(prose: &str, before: &str, after: &str) -> String {
    let start = prose.find(before).unwrap_or_else(|| {
        panic!("README.md no longer says `{before}`: this test reads a number there; update it")
    }) + before.len();
    let len = prose[start..].find(after).unwrap_or_else(|| {
        panic!("README.md no longer says `{before}...{after}`: update this test")
    });
    prose[start..start + len].trim().to_string()
}

/// The number the README's prose states between `before` and `after`
/// (spaces between digit groups, as in `200 000`, dropped).
fn said_num(prose: &str, before: &str, after: &str) -> u64 {
    let s = said(prose, before, after);
    s.replace(' ', "").parse().unwrap_or_else(|_| {
        panic!("README.md: `{before}{s}{after}` does not hold a number: update this test")
    })
}

/// Two numbers the README writes `A x B` (or `A / B`) between `before`
/// and `after`.
fn said_pair(prose: &str, before: &str, after: &str, sep: &str) -> (u64, u64) {
    let s = said(prose, before, after);
    let (a, b) = s
        .split_once(sep)
        .unwrap_or_else(|| panic!("README.md: `{s}` is not `A{sep}B`: update this test"));
    (a.trim().parse().unwrap(), b.trim().parse().unwrap())
}

/// Asserts the README's prose still holds `words` (a sentence whose
/// numbers the caller checks).
fn says(prose: &str, words: &str) {
    assert!(
        prose.contains(words),
        "README.md no longer says `{words}`: update this test"
    );
}

/// The file and folder names of figures and data a section writes in
/// backquotes: names ending in `.html` or `.csv`, and folders under
/// `figures/`.
fn named_files(sec: &str) -> Vec<String> {
    let p = prose(sec);
    p.split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| {
            !w.contains(' ')
                && (w.ends_with(".html")
                    || w.ends_with(".csv")
                    || (w.starts_with("figures/")
                        && w.len() > "figures/".len()
                        && w.ends_with('/')))
        })
        .map(str::to_string)
        .collect()
}

// ---------------------------------------------------------------------
// Running mapvis.

/// Copies each program a script compiles (`compile_exe PATH`, PATH
/// relative to the repository root as the README writes it) to the same
/// path under `dir`, as a user's clone has it.
fn copy_programs(dir: &Path, script: &str) {
    let words: Vec<&str> = script.split_whitespace().collect();
    for w in words.windows(2).filter(|w| w[0] == "compile_exe") {
        let src = root().join(w[1]);
        assert!(
            src.is_file(),
            "README.md compiles `{}`, which is not a file of the repository",
            w[1]
        );
        let dst = dir.join(w[1]);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(&src, &dst).unwrap();
    }
}

/// Runs the script file `file` with `mapvis FILE.tcl` in `dir` (also its
/// HOME), asserting it succeeds; returns its standard output.
fn mapvis_file(dir: &Path, file: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mapvis"))
        .current_dir(dir)
        .env("HOME", dir)
        .env_remove("MAPVIS_HISTORY")
        .arg(file)
        .output()
        .expect("mapvis runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "mapvis {}\nstdout:\n{stdout}\nstderr:\n{}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The words of each line.
fn words(out: &str) -> Vec<Vec<&str>> {
    out.lines()
        .map(|l| l.split_whitespace().collect())
        .collect()
}

fn has_digit(w: &str) -> bool {
    w.chars().any(|c| c.is_ascii_digit())
}

/// The README's shown lines that mapvis did not print, each with the line
/// mapvis printed in its place and the words that differ. Shown lines
/// are matched in order, each after the line the one before matched; a
/// line matches when its words begin mapvis's line. The line in its place
/// is the next one with the same words (all but those holding digits) in
/// the same columns.
fn differences(shown: &[String], real: &str) -> Vec<String> {
    let real = words(real);
    let (mut from, mut out) = (0, Vec::new());
    for line in shown {
        let mut want: Vec<&str> = line.split_whitespace().collect();
        if want.is_empty() || want == ["..."] {
            continue;
        }
        if matches!(want.last(), Some(&"...") | Some(&"…")) {
            want.pop();
        }
        if let Some(i) = (from..real.len()).find(|&i| real[i].starts_with(&want)) {
            from = i + 1;
            continue;
        }
        let place = (from..real.len()).find(|&i| {
            want.iter()
                .enumerate()
                .filter(|(_, w)| !has_digit(w))
                .all(|(k, w)| real[i].get(k) == Some(w))
        });
        match place {
            Some(i) => {
                let diff: Vec<String> = want
                    .iter()
                    .enumerate()
                    .filter(|(k, w)| real[i].get(*k) != Some(*w))
                    .map(|(k, w)| {
                        format!(
                            "column {}: README `{w}`, mapvis `{}`",
                            k + 1,
                            real[i].get(k).unwrap_or(&"(nothing)")
                        )
                    })
                    .collect();
                out.push(format!(
                    "  README: {}\n  mapvis: {}\n  -> {}",
                    want.join(" "),
                    real[i].join(" "),
                    diff.join("; ")
                ));
                from = i + 1;
            }
            None => out.push(format!(
                "  README: {}\n  -> mapvis printed no such line (after the lines matched \
                 before it)",
                want.join(" ")
            )),
        }
    }
    out
}

/// Collected mismatches between the README and mapvis, reported at once.
#[derive(Default)]
struct Mismatches(Vec<String>);

impl Mismatches {
    /// Records a mismatch unless `ok`.
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.0.push(what());
        }
    }

    /// Records a mismatch of a number the README states.
    fn number<T: PartialEq + std::fmt::Display>(&mut self, what: &str, readme: T, mapvis: T) {
        self.check(readme == mapvis, || {
            format!("{what}: README says {readme}, mapvis gives {mapvis}")
        });
    }

    /// Records each line of the output the README shows (`shown`) that
    /// mapvis did not print (`real`).
    fn shown(&mut self, place: &str, shown: &[String], real: &str) {
        assert!(
            shown.iter().any(|l| has_digit(l)),
            "README.md, {place}: no shown output with numbers found: update this test"
        );
        for d in differences(shown, real) {
            self.0
                .push(format!("{place}, a line of the output shown:\n{d}"));
        }
    }

    /// Fails with every mismatch recorded.
    fn assert_none(self, place: &str, out: &str) {
        assert!(
            self.0.is_empty(),
            "README.md, {place}: {} statement(s) do not hold (README.md is left as it \
             is):\n  - {}\n\nmapvis printed:\n{out}",
            self.0.len(),
            self.0.join("\n  - ")
        );
    }
}

/// The index of the first line at or after `from` whose words begin with
/// `first`.
fn line_starting(lines: &[Vec<&str>], from: usize, first: &[&str], out: &str) -> usize {
    (from..lines.len())
        .find(|&i| lines[i].starts_with(first))
        .unwrap_or_else(|| {
            panic!(
                "mapvis printed no line starting `{}`:\n{out}",
                first.join(" ")
            )
        })
}

/// L1's line bytes, ways and sets, from the line `set_cache` or
/// `cache_stats` prints (`L1 32 KiB, 8-way, 64-byte lines (64 sets)`).
fn l1_geometry(out: &str) -> (u64, u64, u64) {
    let line = out
        .lines()
        .find(|l| l.contains("L1 ") && l.contains("-way,") && l.contains(" sets)"))
        .unwrap_or_else(|| panic!("no L1 geometry printed:\n{out}"));
    let w: Vec<&str> = line.split_whitespace().collect();
    let num = |suffix: &str| -> u64 {
        w.iter()
            .find_map(|t| t.strip_suffix(suffix))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no `{suffix}` in `{line}`"))
    };
    let sets = w
        .iter()
        .position(|t| *t == "sets)")
        .map(|i| w[i - 1].trim_start_matches('(').parse().unwrap())
        .unwrap();
    (num("-byte"), num("-way,"), sets)
}

/// The names of the files in `dir/figures`.
fn figure_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir.join("figures"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A JSON value as plotly writes it into a hover: a string bare.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The first line of a heatmap's hover at cell (`x`, `y`), as plotly
/// renders its `hovertemplate`.
fn hover_at(trace: &Value, x: &Value, y: &Value) -> String {
    let t = trace["hovertemplate"].as_str().expect("a hovertemplate");
    let t = t.replace("%{x}", &plain(x)).replace("%{y}", &plain(y));
    t.split("<br>").next().unwrap().to_string()
}

/// The heatmaps of a page, each with its layout.
fn heatmaps(page: &Path) -> Vec<(Value, Value)> {
    vis_common::figures(page)
        .into_iter()
        .flat_map(|f| {
            let layout = f["layout"].clone();
            f["data"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(|d| d["type"] == "heatmap")
                .map(move |d| (d, layout.clone()))
        })
        .collect()
}

/// The text of each `<hN>` of a page, in order.
fn headings(page: &Path, n: u32) -> Vec<String> {
    let html = std::fs::read_to_string(page).unwrap();
    let open = format!("<h{n}>");
    html.split(&open)
        .skip(1)
        .map(|s| s.split('<').next().unwrap().to_string())
        .collect()
}

/// The rows of a figure's saved CSV: (address, variable, operation,
/// class), in time order (`class` empty when the figure is not coloured
/// by class).
fn figure_rows(csv: &Path) -> Vec<(u64, String, String, String)> {
    let text = std::fs::read_to_string(csv).unwrap_or_else(|e| panic!("{}: {e}", csv.display()));
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name);
    let (a, v, o, t) = (
        col("address").unwrap(),
        col("variable").unwrap(),
        col("operation").unwrap(),
        col("time").unwrap(),
    );
    let c = col("class");
    let mut rows: Vec<(u64, (u64, String, String, String))> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let addr = u64::from_str_radix(f[a].trim_start_matches("0x"), 16).unwrap();
            let class = c.map_or(String::new(), |c| f[c].to_string());
            (
                f[t].parse().unwrap(),
                (addr, f[v].to_string(), f[o].to_string(), class),
            )
        })
        .collect();
    rows.sort_by_key(|r| r.0);
    rows.into_iter().map(|r| r.1).collect()
}

// ---------------------------------------------------------------------
// "Using it" and "Reading the figures".

/// "Using it"'s session, typed as the README types it (with
/// `scripts/rowcol.c`), and the tutorial's numbers about the figures it
/// draws, each read from README.md: the 16 x 16 array of ints; the
/// address over time as the second view of
/// `complete_memory_access_pattern.html`, a row-major sweep rising 4
/// bytes per access, each column's 16 elements climbing 64 bytes and the
/// next column starting 4 bytes higher; `2d_memory_access_pattern_arr.html`
/// with the hover `arr[3][4]` and the first access lighting the rows in
/// order from the bottom row up; `figures/index.html` linking each figure
/// with its command; `figures/sharing.html` from `sharing_stats save`; the
/// pattern label `row-wise: unit stride`; and the figures and data in
/// `figures/`, `visinfo/` and `.mapvis/analysis/`.
#[test]
fn the_using_it_session_draws_the_tutorials_numbers() {
    let using = section(USING_IT);
    let tutorial = section(TUTORIAL);
    let (up, tp) = (prose(&using), prose(&tutorial));
    let block = prompt_blocks(&using);
    assert_eq!(block.len(), 1, "README.md, Using it: one session expected");
    let (script, shown) = prompt_session(&block[0]);
    says(&tp, "The demo traces `scripts/rowcol.c`");
    assert!(
        script.contains("compile_exe scripts/rowcol.c"),
        "the session traces the tutorial's program: {script}"
    );
    let dir = tempfile::tempdir().unwrap();
    copy_programs(dir.path(), &script);
    let out = mapvis_script(dir.path(), &script);
    let out2 = mapvis_script(dir.path(), "sharing_stats save");
    let mut bad = Mismatches::default();
    // The README shows no output for this session; if it does some day,
    // it is checked.
    if shown.iter().any(|l| !l.trim().is_empty()) {
        bad.shown("Using it", &shown, &out);
    }

    // The array: 16 x 16 ints.
    let (rows, cols) = said_pair(&tp, "which writes a ", " array of ints", " x ");
    let step = said_num(&tp, "one step of ", " bytes per access");
    let column = said_num(&tp, "each column's ", " elements climb");
    let climb = said_num(&tp, "elements climb ", " bytes (one row)");
    let next = said_num(&tp, "starts again one element (", " bytes) higher");
    let lines = words(&out);
    let head = line_starting(&lines, 0, &["variable", "scope", "accesses"], &out);
    let arr_row = &lines[line_starting(&lines, head, &["arr"], &out)];
    let k = lines[head].iter().position(|w| *w == "addresses").unwrap();
    bad.number(
        "arr's distinct addresses in memory_stats (rows x columns)",
        (rows * cols).to_string(),
        arr_row[k].to_string(),
    );
    let page2d = dir.path().join("figures/2d_memory_access_pattern_arr.html");
    let h1 = headings(&page2d, 1);
    bad.check(
        h1.first()
            .is_some_and(|h| h.ends_with(&format!("of arr ({rows} x {cols})"))),
        || format!("the 2D figure's shape: README {rows} x {cols}, page title {h1:?}"),
    );

    // Address over time: the second view; the row-major diagonal, then the
    // column-major lattice.
    says(
        &tp,
        "**Address over time** (the second view of `complete_memory_access_pattern.html`)",
    );
    let complete = dir
        .path()
        .join("figures/complete_memory_access_pattern.html");
    let views = headings(&complete, 2);
    bad.check(
        views.get(1).map(String::as_str) == Some("Address over time"),
        || format!("the second view of complete_memory_access_pattern.html is {views:?}"),
    );
    let acc = figure_rows(
        &dir.path()
            .join("visinfo/complete_memory_access_pattern.csv"),
    );
    let n = (rows * cols) as usize;
    assert!(acc.len() > n, "{} accesses drawn:\n{out}", acc.len());
    let base = acc[0].0;
    let row_steps: Vec<u64> = acc[..n].windows(2).map(|w| w[1].0 - w[0].0).collect();
    let mut seen = row_steps.clone();
    seen.sort();
    seen.dedup();
    bad.check(seen == [step], || {
        format!("the row-major sweep's steps: README {step} bytes per access, mapvis {seen:?}")
    });
    let mut lattice: Vec<u64> = acc[n..].iter().map(|a| a.0).collect();
    lattice.dedup();
    bad.number("elements of the column-major sweep", n, lattice.len());
    let (mut odd_climb, mut odd_start) = (Vec::new(), Vec::new());
    for (c, col) in lattice.chunks(column as usize).enumerate() {
        let climbs: Vec<u64> = col.windows(2).map(|w| w[1] - w[0]).collect();
        if climbs.iter().any(|&s| s != climb) {
            odd_climb.push((c, climbs));
        }
        if col[0] != base + c as u64 * next {
            odd_start.push((c, col[0] - base));
        }
    }
    bad.check(odd_climb.is_empty(), || {
        format!("columns not climbing {climb} bytes at a time: (column, climbs) {odd_climb:?}")
    });
    bad.check(odd_start.is_empty(), || {
        format!(
            "columns not starting {next} bytes higher each: (column, offset from arr) {odd_start:?}"
        )
    });

    // First access per element and the hover.
    let maps = heatmaps(&page2d);
    let (first, layout) = maps
        .iter()
        .find(|(d, _)| {
            d["hovertemplate"]
                .as_str()
                .is_some_and(|t| t.contains("first access"))
        })
        .expect("a first-access heatmap");
    let z = vis_common::grid(&first["z"]);
    bad.number("rows of the first-access heatmap", rows as usize, z.len());
    let lo = |r: &Vec<Option<f64>>| r.iter().flatten().cloned().fold(f64::MAX, f64::min);
    let hi = |r: &Vec<Option<f64>>| r.iter().flatten().cloned().fold(f64::MIN, f64::max);
    bad.check(z.windows(2).all(|w| hi(&w[0]) < lo(&w[1])), || {
        "the first access does not colour the grid row by row".to_string()
    });
    bad.check(layout["yaxis"]["autorange"] != "reversed", || {
        "row 0 is not the bottom row".to_string()
    });
    let cell = said(&tp, "hover a cell for its element (`", "`) and value");
    let (ci, cj) = cell
        .trim_start_matches("arr[")
        .trim_end_matches(']')
        .split_once("][")
        .map(|(i, j)| (i.parse::<usize>().unwrap(), j.parse::<usize>().unwrap()))
        .expect("arr[I][J]");
    let hover = hover_at(first, &first["x"][cj], &first["y"][ci]);
    bad.check(hover == cell, || {
        format!("hover of row {ci}, column {cj}: README `{cell}`, mapvis `{hover}`")
    });
    bad.check(z[ci][cj].is_some(), || format!("{cell} has no value"));

    // Pattern labels, the index, sharing and the folders.
    let label = said(
        &tp,
        "Hover text also gives each access' pattern label (`",
        "`)",
    );
    bad.check(
        out.lines()
            .any(|l| l.starts_with("arr ") && l.ends_with(&label)),
        || format!("no arr line with the label `{label}`"),
    );
    let index = std::fs::read_to_string(dir.path().join("figures/index.html")).unwrap();
    for f in figure_files(dir.path()) {
        if f.ends_with(".html") && f != "index.html" {
            bad.check(index.contains(&format!("href=\"{f}\"")), || {
                format!("figures/index.html does not link {f}")
            });
        }
    }
    let cmd = script
        .lines()
        .find(|l| l.starts_with("2d_memory_access_pattern"))
        .unwrap();
    let cmd = cmd.trim_end_matches(" save").trim();
    bad.check(index.contains(&format!("<code>{cmd}</code>")), || {
        format!("figures/index.html does not give the command `{cmd}`")
    });
    says(
        &up,
        "Figures go to `figures/`, and the data behind them goes to `visinfo/` when you add `save`",
    );
    says(
        &up,
        "The saved analysis (`.mapvis/analysis/`) is a Parquet dataset",
    );
    let parquet = std::fs::read_dir(dir.path().join(".mapvis/analysis"))
        .map(|d| d.count())
        .unwrap_or(0);
    bad.check(parquet > 0, || ".mapvis/analysis/ is empty".to_string());
    for f in named_files(&tutorial) {
        if f == "2d_memory_access_pattern_p.html" {
            continue; // a_figure_in_another_shape_replaces_the_file_and_says_so
        }
        let path = if f.contains('/') {
            dir.path().join(&f)
        } else {
            dir.path().join("figures").join(&f)
        };
        bad.check(path.is_file(), || {
            format!(
                "README names `{f}`; mapvis wrote {:?}",
                figure_files(dir.path())
            )
        });
    }
    for (f, data) in [
        (
            "complete_memory_access_pattern.html",
            "complete_memory_access_pattern.csv",
        ),
        (
            "2d_memory_access_pattern_arr.html",
            "2d_memory_access_pattern_arr.csv",
        ),
    ] {
        bad.check(dir.path().join("visinfo").join(data).is_file(), || {
            format!("`save` wrote {f} but no visinfo/{data}")
        });
    }
    bad.assert_none("Using it and the tutorial", &format!("{out}{out2}"));
}

/// The tutorial's "Shapes": `2d_memory_access_pattern p 16 4` on an array
/// of doubles (4-byte elements disagreeing with the type) is drawn with a
/// warning into mapvisual's file name, the file the README names
/// (`2d_memory_access_pattern_p.html`, whatever the shape); drawing `p`
/// again in its own shape replaces that file and says which shape it
/// showed before, so one file of `p` remains.
#[test]
fn a_figure_in_another_shape_replaces_the_file_and_says_so() {
    let tp = prose(&section(TUTORIAL));
    says(&tp, "(4-byte elements for an array of doubles)");
    let file = said(&tp, "as in mapvisual (`", "` whatever the");
    let var = file
        .trim_start_matches("2d_memory_access_pattern_")
        .trim_end_matches(".html");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shapes.c"), SHAPES_C).unwrap();
    let out = mapvis_script(
        dir.path(),
        &format!(
            "compile_exe shapes.c; set_mem_alloc all; run_gleipnir; memory_trace_analysis; \
             2d_memory_access_pattern {var} 16 4"
        ),
    );
    let after_wrong = figure_files(dir.path());
    let out2 = mapvis_script(dir.path(), &format!("2d_memory_access_pattern {var}"));
    let after_right = figure_files(dir.path());
    let mut bad = Mismatches::default();
    bad.check(
        out.lines()
            .any(|l| l.starts_with("warning:") && l.contains(&format!("`{var}`"))),
        || format!("no warning for `2d_memory_access_pattern {var} 16 4`"),
    );
    bad.check(after_wrong.contains(&file), || {
        format!("README says figures/{file}; mapvis wrote {after_wrong:?}")
    });
    bad.check(
        out2.contains(&format!("{file} showed `"))
            && out2.contains("rename the earlier file to keep both"),
        || format!("drawing {var} again did not say which shape {file} showed"),
    );
    let of_var: Vec<&String> = after_right
        .iter()
        .filter(|f| {
            f.starts_with(&format!("2d_memory_access_pattern_{var}")) && f.ends_with(".html")
        })
        .collect();
    bad.check(of_var == [&file], || {
        format!("figures/ should hold one file of {var}, {file}: {after_right:?}")
    });
    bad.assert_none("Reading the figures, Shapes", &format!("{out}{out2}"));
}

/// The tutorial's "Arrays of structures", on a `struct particle ps[N]`
/// of the README's fields: `2d_memory_access_pattern ps` has one column
/// per field named `x`, `y`, `id` (listed in the title), one row per
/// element, and the hover `ps[5].id`; `2d_memory_access_pattern ps 1 24`
/// draws one 24-byte element per row, `2d_memory_access_pattern ps 6 4`
/// six 4-byte words. The numbers (5, 1, 24, 6, 4) are read from README.md.
#[test]
fn an_array_of_structures_is_drawn_by_field() {
    let tp = prose(&section(TUTORIAL));
    let fields: Vec<String> = said(&tp, "named as the source names them (", ")")
        .split(", ")
        .map(|f| f.trim_matches('`').to_string())
        .collect();
    let hover = said(&tp, "hover reads `", "`");
    let (elem, field) = hover
        .trim_start_matches("ps[")
        .split_once("].")
        .map(|(e, f)| (e.parse::<u64>().unwrap(), f.to_string()))
        .expect("ps[I].FIELD");
    let by_element = said(
        &tp,
        "give a shape: `2d_memory_access_pattern ps ",
        "` draws one",
    );
    let by_words = said(&tp, "per row, `2d_memory_access_pattern ps ", "` its six");
    says(&tp, &format!("{by_words}` its six 4-byte words"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shapes.c"), SHAPES_C).unwrap();
    let out = mapvis_script(
        dir.path(),
        "compile_exe shapes.c; set_mem_alloc all; run_gleipnir; memory_trace_analysis; \
         2d_memory_access_pattern ps",
    );
    let page = dir.path().join("figures/2d_memory_access_pattern_ps.html");
    let mut bad = Mismatches::default();
    let maps = heatmaps(&page);
    let (d, _) = maps.first().expect("a heatmap of ps");
    let x: Vec<String> = d["x"].as_array().unwrap().iter().map(plain).collect();
    bad.check(x.starts_with(&fields), || {
        format!("columns: README {fields:?}, mapvis {x:?}")
    });
    let rows = d["y"].as_array().unwrap().len() as u64;
    bad.number("rows of ps (its 8 elements)", 8, rows);
    let title = headings(&page, 1).join("");
    bad.check(title.contains(&fields.join(", ")), || {
        format!("the title lists {fields:?}: `{title}`")
    });
    let xi = x.iter().position(|f| *f == field);
    match xi {
        Some(xi) => {
            let got = hover_at(d, &d["x"][xi], &d["y"][elem as usize]);
            bad.check(got == hover, || {
                format!("hover: README `{hover}`, mapvis `{got}`")
            });
        }
        None => bad.check(false, || format!("no column `{field}`: {x:?}")),
    }
    let mut all = out;
    for (shape, what) in [
        (&by_element, "one element per row"),
        (&by_words, "its words"),
    ] {
        let (cols, bytes) = shape.split_once(' ').unwrap();
        let o = mapvis_script(
            dir.path(),
            &format!("2d_memory_access_pattern ps {cols} {bytes}"),
        );
        let maps = heatmaps(&page);
        let (d, _) = maps.first().expect("a heatmap of ps");
        let (c, r) = (
            d["x"].as_array().unwrap().len(),
            d["y"].as_array().unwrap().len(),
        );
        bad.check(c.to_string() == cols && r == 8, || {
            format!("`ps {cols} {bytes}` ({what}): {r} rows of {c} columns, README {cols} columns")
        });
        let h = headings(&page, 1).join("");
        bad.check(h.ends_with(&format!("(8 x {cols})")), || {
            format!("`ps {cols} {bytes}` title: `{h}`")
        });
        all += &o;
    }
    // 24 bytes: the element size of `ps 1 24` is the structure's.
    bad.check(
        all.contains(&format!(
            "ps is an array of {}-byte structures",
            by_element.split_once(' ').unwrap().1
        )),
        || format!("ps's structures are not {by_element} bytes"),
    );
    bad.assert_none("Reading the figures, Arrays of structures", &all);
}

/// The tutorial's "Hits, misses and reuse" and "Many accesses", on the
/// README's naive transpose (`scripts/transpose.c -DN=256`, its caches):
/// with `set_figure_colour hit`, every 64-byte line of the unit-stride
/// sweep over `X` (doubles) is one miss then seven L1 hits, the column
/// walk over `Y` misses to memory throughout, and every class is one the
/// README names; with `set_figure_colour reuse` the classes are
/// `first touch` and power-of-two bins written as the README's
/// `reuse 64–127 lines`; the point budgets printed are the README's
/// 200 000 per view and 20 000 in 3D.
#[test]
fn hit_classes_reuse_bins_and_point_budgets() {
    let tp = prose(&section(TUTORIAL));
    let (dir, naive) = readme_naive_transpose();
    let out = mapvis_script(
        dir.path(),
        &format!(
            "{naive}\nfiltering_process; set_figure_colour hit; \
             complete_memory_access_pattern X Y save"
        ),
    );
    let csv = dir
        .path()
        .join("visinfo/complete_memory_access_pattern.csv");
    let hit = figure_rows(&csv);
    let mut bad = Mismatches::default();
    says(
        &tp,
        "A unit-stride sweep of doubles is one red point (the miss) then seven green ones \
         per 64-byte line; a column walk that overflows the cache is red throughout.",
    );
    let (line, _, _) = l1_geometry(&out);
    bad.number("the line size", 64, line);
    let mut per_line: std::collections::BTreeMap<u64, Vec<&str>> = Default::default();
    for (a, v, _, c) in &hit {
        if v == "X" {
            per_line.entry(a / line).or_default().push(c);
        }
    }
    let odd: Vec<_> = per_line
        .iter()
        .filter(|(_, c)| {
            c.len() != 8 || c[0] != "miss to memory" || c[1..].iter().any(|c| *c != "L1 hit")
        })
        .take(3)
        .collect();
    bad.check(!per_line.is_empty() && odd.is_empty(), || {
        format!("X's lines are not one miss then seven L1 hits: {odd:?}")
    });
    let y_not_missing = hit
        .iter()
        .filter(|r| r.1 == "Y" && r.3 != "miss to memory")
        .count();
    bad.number("Y's accesses not missing to memory", 0, y_not_missing);
    let classes = said(&tp, "served each access: ", ". The caches");
    for (_, _, _, c) in &hit {
        if !classes.contains(&format!("`{c}`")) {
            bad.check(false, || format!("class `{c}` is not one of {classes}"));
            break;
        }
    }
    // The point budgets, as the note of this figure states them.
    let per_view = said_num(&tp, "`set_point_budget` points (", " by default)");
    let in_3d = said_num(&tp, "and a 3D view at most ", " (a browser");
    let note = format!("exceed the point budget ({in_3d} points in 3D, {per_view} in 2D)");
    bad.check(out.contains(&note), || {
        format!("no note `{note}` (README: {per_view} per view, {in_3d} in 3D)")
    });
    // Reuse bins.
    let out2 = mapvis_script(
        dir.path(),
        "set_figure_colour reuse; complete_memory_access_pattern X Y save",
    );
    let example = said(&tp, "in power-of-two bins (`", "`)");
    let bin = |c: &str| -> bool {
        let Some(r) = c.strip_prefix("reuse ") else {
            return false;
        };
        if r == "0 lines" || r == "1 line" {
            return true;
        }
        r.strip_suffix(" lines")
            .and_then(|r| r.split_once('–'))
            .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)))
            .is_some_and(|(a, b)| a.is_power_of_two() && b == 2 * a - 1)
    };
    bad.check(bin(&example), || {
        format!("README's example `{example}` is not a power-of-two bin")
    });
    let reuse = figure_rows(&csv);
    let mut kinds: Vec<&str> = reuse.iter().map(|r| r.3.as_str()).collect();
    kinds.sort();
    kinds.dedup();
    says(&tp, "with `first touch` apart");
    bad.check(kinds.contains(&"first touch"), || {
        format!("no `first touch` class: {kinds:?}")
    });
    for k in &kinds {
        bad.check(*k == "first touch" || bin(k), || {
            format!("class `{k}` is not written as `{example}`")
        });
    }
    bad.assert_none(
        "Reading the figures, hits and budgets",
        &format!("{out}{out2}"),
    );
}

// ---------------------------------------------------------------------
// "Did my change help?"

/// The one prompt session of `sec` that runs `command`.
fn session_with(sec: &str, command: &str) -> Block {
    let mut found: Vec<Block> = prompt_blocks(sec)
        .into_iter()
        .filter(|b| {
            b.lines
                .iter()
                .any(|l| l.starts_with(&format!("mapvis> {command}")))
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "README.md: one session running {command} expected"
    );
    found.remove(0)
}

/// The README's `compare_runs` session, typed at the prompt as it shows
/// it: returns the output and the folder.
fn compare_session() -> (tempfile::TempDir, String, Vec<String>) {
    let sec = section(CHANGE);
    let (script, shown) = prompt_session(&session_with(&sec, "compare_runs"));
    let dir = tempfile::tempdir().unwrap();
    copy_programs(dir.path(), &script);
    let out = mapvis_script(dir.path(), &script);
    (dir, out, shown)
}

/// "Did my change help?": the README's `compare_runs naive blocked save`
/// session prints every line and number of the table the README shows
/// (accesses, bytes, L1 and L2 misses, miss ratios, bytes used per line,
/// reuse bins, the changes, the per-line pairs); the prose's numbers hold
/// (256 x 256 doubles; `Y`'s column walk uses 8 bytes of each 64-byte
/// line, the tiles 45, cutting L1 misses by 82%; `X` read row-wise in
/// both); and the files it names are written (`visinfo/compare_A_B.csv`,
/// `visinfo/compare_A_B_pairs.csv`, `figures/compare_A_B.html`,
/// `figures/run_LABEL/`, with A, B and LABEL the runs).
#[test]
fn compare_runs_prints_the_readmes_table() {
    let (dir, out, shown) = compare_session();
    let mut bad = Mismatches::default();
    bad.shown("Did my change help?", &shown, &out);
    let sec = section(CHANGE);
    let p = prose(&sec);
    let lines = words(&out);
    let head = line_starting(&lines, 0, &["variable", "run", "accesses", "bytes"], &out);
    let y = line_starting(&lines, head, &["Y", "naive"], &out);
    let yb = line_starting(&lines, y, &["blocked"], &out);
    let yc = line_starting(&lines, yb, &["change"], &out);
    let x = line_starting(&lines, head, &["X", "naive"], &out);
    let xb = line_starting(&lines, x, &["blocked"], &out);
    let header = lines[head].join(" ");
    assert!(
        header.starts_with(
            "variable run accesses bytes L1 misses L2 misses miss ratio bytes used/line"
        ),
        "the columns this test reads by position: {header}"
    );
    let (n, m) = said_pair(&p, "cache-blocked transpose of ", " doubles", " x ");
    bad.number(
        "Y's accesses (N x N)",
        (n * m).to_string(),
        lines[y][2].into(),
    );
    bad.number(
        "Y's bytes (N x N doubles)",
        (n * m * 8).to_string(),
        lines[y][3].into(),
    );
    let used = said_num(&p, "The column walk over `Y` uses ", " bytes of each");
    let line = said_num(&p, " bytes of each ", "-byte line it fetches");
    let tiles = said_num(&p, "the tiles use ", " of them");
    let cut = said_num(&p, "cut `Y`'s L1 misses by ", "%");
    bad.number("the line size", line, l1_geometry(&out).0);
    let f = |s: &str| s.parse::<f64>().unwrap_or(f64::NAN);
    bad.number(
        "bytes of each line the naive Y uses",
        used as f64,
        f(lines[y][7]).round(),
    );
    bad.number(
        "bytes of each line the tiles of Y use",
        tiles as f64,
        f(lines[yb][6]).round(),
    );
    let pct = lines[yc][6];
    bad.check(pct.starts_with("(-"), || {
        format!("Y's L1 change {pct} is no cut")
    });
    bad.number(
        "the cut in Y's L1 misses, %",
        cut as f64,
        f(pct.trim_matches(|c| "()%-+".contains(c))).round(),
    );
    says(&p, "while `X` is read row-wise in both");
    for i in [x, xb] {
        bad.check(lines[i].iter().any(|w| w.starts_with("row-wise")), || {
            format!("X is not read row-wise: {}", lines[i].join(" "))
        });
    }
    // The files the section names for compare_runs.
    let files = named_files(&sec);
    let mine: Vec<&String> = files
        .iter()
        .filter(|f| f.contains("compare_A_B") || f.contains("run_LABEL"))
        .collect();
    assert_eq!(
        mine.len(),
        4,
        "README.md names these for compare_runs: {files:?}"
    );
    for f in mine {
        let f = f.replace("A_B", "naive_blocked");
        for label in ["naive", "blocked"] {
            let f = f.replace("LABEL", label);
            let path = dir.path().join(&f);
            let there = if f.ends_with('/') {
                std::fs::read_dir(&path).is_ok_and(|mut d| d.next().is_some())
            } else {
                path.is_file()
            };
            bad.check(there, || {
                format!(
                    "README names `{f}`; figures/ holds {:?}",
                    figure_files(dir.path())
                )
            });
        }
    }
    says(&p, "runs live in `.mapvis/runs/`");
    for label in ["naive", "blocked"] {
        bad.check(dir.path().join(".mapvis/runs").join(label).is_dir(), || {
            format!("no .mapvis/runs/{label}")
        });
    }
    bad.assert_none("Did my change help?", &out);
}

/// "`scripts/compare.tcl` does it": the script prints the same lines and
/// numbers as the README's session shows.
#[test]
fn scripts_compare_tcl_prints_the_readmes_table() {
    let sec = section(CHANGE);
    says(&prose(&sec), "`scripts/compare.tcl` does it");
    let (_, shown) = prompt_session(&session_with(&sec, "compare_runs"));
    let dir = tempfile::tempdir().unwrap();
    let out = mapvis_file(dir.path(), &root().join("scripts/compare.tcl"));
    let mut bad = Mismatches::default();
    bad.shown("scripts/compare.tcl", &shown, &out);
    bad.assert_none("Did my change help? (scripts/compare.tcl)", &out);
}

/// The sweep's two blocks: the `tcl` script and the output shown after it.
fn sweep_blocks() -> (String, Vec<String>) {
    let b = blocks(&section(SWEEP));
    let script = b
        .iter()
        .find(|b| b.lang == "tcl")
        .expect("README.md, sweep: a tcl block");
    let shown = b
        .iter()
        .find(|b| b.lang.is_empty())
        .expect("README.md, sweep: the output block");
    (script.lines.join("\n") + "\n", shown.lines.clone())
}

/// "A sweep: which tile size?": the README's script, run as a script file
/// as the README writes it, prints the table the README shows (L1 misses
/// of `Y` and `X` for naive, b4, b8 and b16), and the prose's numbers
/// hold: with tiles of 8 x 8 doubles one miss per 64-byte line of `Y`,
/// `65536 / 8` (65536 being Y's accesses); rows of `Y` 2 KiB apart (the
/// stride cache_stats prints); a tile column's lines in 2 of L1's 64 sets
/// (worked from that stride and the printed L1 geometry), whose 16 ways
/// hold 8 rows and are filled by 16; and `plot_runs` writes
/// `figures/runs_misses_L1.html` and `visinfo/runs_misses_L1.csv`.
#[test]
fn the_sweep_prints_the_readmes_table() {
    let (script, shown) = sweep_blocks();
    let dir = tempfile::tempdir().unwrap();
    copy_programs(dir.path(), &script);
    std::fs::write(dir.path().join("sweep.tcl"), &script).unwrap();
    let out = mapvis_file(dir.path(), Path::new("sweep.tcl"));
    let mut bad = Mismatches::default();
    bad.shown("A sweep: which tile size?", &shown, &out);
    let out2 = mapvis_script(
        dir.path(),
        "plot_runs accesses naive b4 b8 b16; use_run naive; cache_stats",
    );
    let sec = section(SWEEP);
    let p = prose(&sec);
    // plot_runs' tables, by run, for Y.
    let table = |text: &str, metric: &str| -> std::collections::BTreeMap<String, u64> {
        let lines = words(text);
        let t = line_starting(&lines, 0, &["plot_runs", &format!("{metric}:")], text);
        let head = line_starting(&lines, t, &["variable"], text);
        let y = line_starting(&lines, head, &["Y"], text);
        lines[head][1..]
            .iter()
            .zip(&lines[y][1..])
            .map(|(r, v)| (r.to_string(), v.parse().unwrap()))
            .collect()
    };
    let misses = table(&out, "misses_L1");
    let accesses = table(&out2, "accesses");
    let (b, b2) = said_pair(&p, "Tiles of ", " doubles fill each", " x ");
    assert_eq!(b, b2, "square tiles");
    let line = said_num(&p, " doubles fill each ", "-byte line of `Y`");
    let (total, per) = said_pair(&p, "(one miss per line, ", ")", " / ");
    let (l1_line, ways, sets) = l1_geometry(&out);
    bad.number("the line size", line, l1_line);
    bad.number("doubles per line", per, line / 8);
    let run = format!("b{b}");
    bad.number("Y's accesses", total, accesses[&run]);
    bad.number("Y's L1 misses with 8 x 8 tiles", total / per, misses[&run]);
    let apart = said(&p, "The rows of `Y` are ", " apart");
    let label = out2
        .lines()
        .find(|l| l.starts_with("Y ") && l.contains("column-wise: stride"))
        .unwrap_or_else(|| panic!("no column-wise label of Y:\n{out2}"));
    // The row stride cache_stats prints: `stride 256 elements (2 KiB)`.
    let real_apart = label
        .split("stride ")
        .nth(1)
        .and_then(|r| r.split_once('(')?.1.split_once(')'))
        .map(|(a, _)| a.to_string())
        .unwrap_or_else(|| panic!("no `stride N elements (SIZE)` in `{label}`"));
    bad.check(real_apart == apart, || {
        format!("rows of Y: README {apart} apart, mapvis `{label}`")
    });
    let stride = real_apart
        .strip_suffix(" KiB")
        .and_then(|k| k.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("`{real_apart}` is not N KiB"))
        * 1024;
    let in_sets = said_num(&p, "fall in only ", " of L1's");
    let l1_sets = said_num(&p, "of L1's ", " sets");
    let fit = said_num(&p, "sets: ", " rows fit");
    let their_ways = said_num(&p, "rows fit in their ", " ways");
    let fill = said_num(&p, "while ", " rows fill them");
    bad.number("L1's sets", l1_sets, sets);
    let mut touched: Vec<u64> = (0..fill).map(|k| (k * stride / line) % sets).collect();
    touched.sort();
    touched.dedup();
    bad.number(
        "sets a tile column's lines fall in",
        in_sets,
        touched.len() as u64,
    );
    bad.number(
        "ways of those sets",
        their_ways,
        touched.len() as u64 * ways,
    );
    bad.check(fit <= their_ways, || format!("{fit} rows do not fit"));
    bad.number("rows that fill those ways", fill, their_ways);
    bad.check(misses[&format!("b{fill}")] > misses[&run], || {
        format!("b{fill} does not miss more than {run} in L1 on Y")
    });
    for f in named_files(&sec) {
        let there = dir.path().join(&f).is_file();
        bad.check(there, || {
            format!(
                "README names `{f}`; figures/ holds {:?}",
                figure_files(dir.path())
            )
        });
    }
    bad.check(named_files(&sec).len() == 2, || {
        format!("README.md names {:?} here", named_files(&sec))
    });
    bad.assert_none("A sweep: which tile size?", &format!("{out}{out2}"));
}

/// "`scripts/sweep.tcl` sweeps the transpose's tile size": the script
/// itself prints the table the README shows.
#[test]
fn scripts_sweep_tcl_prints_the_readmes_table() {
    let sec = section(SWEEP);
    says(
        &prose(&sec),
        "`scripts/sweep.tcl` sweeps the transpose's tile size",
    );
    let (_, shown) = sweep_blocks();
    let dir = tempfile::tempdir().unwrap();
    let out = mapvis_file(dir.path(), &root().join("scripts/sweep.tcl"));
    let mut bad = Mismatches::default();
    bad.shown("scripts/sweep.tcl", &shown, &out);
    bad.assert_none("A sweep: which tile size? (scripts/sweep.tcl)", &out);
}

/// "What if the array were laid out another way?": `what_if NAME LAYOUT
/// save` writes `visinfo/what_if_NAME_LAYOUT.csv` (every variable before
/// and after) and `figures/what_if_NAME_LAYOUT.html`, named by the
/// layout's words joined by `_` as the README's `what_if_A_pad_64.html`
/// (NAME and the words read from that name), and the page says it is a
/// prediction.
#[test]
fn what_if_writes_the_files_the_readme_names() {
    let sec = section(WHAT_IF);
    let files = named_files(&sec);
    let example = files
        .iter()
        .find(|f| !f.contains("NAME"))
        .expect("an example file name");
    let (name, layout) = example
        .trim_start_matches("what_if_")
        .trim_end_matches(".html")
        .split_once('_')
        .unwrap();
    let words = layout.replace('_', " ");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shapes.c"), SHAPES_C).unwrap();
    let out = mapvis_script(
        dir.path(),
        &format!(
            "compile_exe shapes.c; set_mem_alloc G; run_gleipnir; memory_trace_analysis; \
             what_if {name} {words} save; what_if {name} transpose save"
        ),
    );
    let mut bad = Mismatches::default();
    bad.check(dir.path().join("figures").join(example).is_file(), || {
        format!(
            "`what_if {name} {words} save`: README names figures/{example}; figures/ holds {:?}",
            figure_files(dir.path())
        )
    });
    let generic: Vec<&String> = files.iter().filter(|f| f.contains("NAME")).collect();
    assert_eq!(generic.len(), 2, "README.md names {files:?}");
    for g in generic {
        for l in [layout, "transpose"] {
            let f = g.replace("NAME", name).replace("LAYOUT", l);
            bad.check(dir.path().join(&f).is_file(), || {
                format!("README names `{f}`; it was not written")
            });
            if f.ends_with(".csv") {
                let csv = std::fs::read_to_string(dir.path().join(&f)).unwrap_or_default();
                let rows: Vec<Vec<&str>> = csv
                    .lines()
                    .skip(1)
                    .map(|l| l.split(',').collect())
                    .collect();
                let before = rows.iter().filter(|r| r.get(1) == Some(&"before")).count();
                let after = rows.iter().filter(|r| r.get(1) == Some(&"after")).count();
                bad.check(before > 1 && before == after, || {
                    format!("{f}: {before} variables before, {after} after")
                });
            }
            if f.ends_with(".html") {
                let h = headings(&dir.path().join(&f), 1).join("");
                bad.check(h.contains("prediction"), || {
                    format!("{f} does not say it is a prediction: `{h}`")
                });
            }
        }
    }
    bad.assert_none("What if the array were laid out another way?", &out);
}

/// The first three lines of "Did my change help?"'s session (the caches,
/// then compiling and tracing the naive transpose), and a folder holding
/// the programs they name.
fn readme_naive_transpose() -> (tempfile::TempDir, String) {
    let (setup, _) = prompt_session(&prompt_blocks(&section(CHANGE))[0]);
    let naive: Vec<&str> = setup.lines().take(3).collect();
    assert!(
        naive[1].starts_with("compile_exe") && !naive[1].contains("BLOCK"),
        "the README's naive transpose: {naive:?}"
    );
    let naive = naive.join("\n");
    let dir = tempfile::tempdir().unwrap();
    copy_programs(dir.path(), &naive);
    (dir, naive)
}

/// "Did my change help?" starts from `advise`, on the README's naive
/// transpose: the session prints the table the README shows; the prose's
/// first suggestion, its L1 misses before and after, the share of
/// conflicts, the rows' distance and the sets a column falls into, the
/// tiling's misses of both arrays (8 x 8 and 16 x 16), `X`'s "nothing to
/// suggest", and the files `save` writes all hold.
#[test]
fn advise_gives_the_readmes_advice() {
    let sec = section(CHANGE);
    let p = prose(&sec);
    let (script, shown) = prompt_session(&session_with(&sec, "advise"));
    let (dir, naive) = readme_naive_transpose();
    assert!(
        script.starts_with(&naive),
        "the advise session is the naive transpose's"
    );
    let out = mapvis_script(dir.path(), &script);
    let mut bad = Mismatches::default();
    bad.shown("Did my change help? (advise)", &shown, &out);
    let t = said_num(&p, "Tiling the loop nest in blocks of ", " x ");
    let (b, a) = (
        said_num(
            &p,
            "both arrays of the nest, and their ",
            " L1 misses fall to",
        ),
        said_num(&p, " L1 misses fall to ", ","),
    );
    let y = said_num(&p, &format!("fall to {a}, "), " of them `Y`'s");
    let t2 = said_num(&p, "Tiles of ", " leave");
    let a2 = said_num(&p, &format!("Tiles of {t2} leave "), ".");
    for (tile, after) in [(t, a), (t2, a2)] {
        let row = out
            .lines()
            .find(|l| l.contains(&format!(" tile {tile} transpose.c:")))
            .unwrap_or_default();
        bad.check(
            row.contains(&format!("{b} -> {after} ")) && row.contains("Y,X"),
            || format!("README: tile {tile} takes X and Y from {b} to {after}: `{row}`"),
        );
    }
    bad.check(
        out.contains(&format!("what_if Y tile {t} transpose.c:")),
        || format!("README: the command of tile {t}"),
    );
    // Y's share of the tiled misses: what_if of that tile prints Y's row.
    let w = mapvis_script(dir.path(), &format!("what_if Y tile {t}"));
    bad.check(
        w.lines().any(|l| {
            let x: Vec<&str> = l.split_whitespace().collect();
            x.len() > 6 && x[0] == "Y" && x[6] == y.to_string()
        }),
        || format!("README: {y} of the tiled misses are Y's"),
    );
    bad.check(dir.path().join("figures/advice.html").is_file(), || {
        "README names figures/advice.html; advise save did not write it".into()
    });
    let first = said(&p, "`advise` puts `", "` first for `Y`");
    bad.check(out.contains(&format!("1. what_if Y {first}: ")), || {
        format!("README: `{first}` first for Y")
    });
    let (b, a) = (
        said_num(&p, "first for `Y` (", " L1 misses down to"),
        said_num(&p, "L1 misses down to ", ","),
    );
    let row = out
        .lines()
        .find(|l| l.starts_with("1 ") || l.trim_start().starts_with("1 "))
        .unwrap_or_default();
    bad.check(row.contains(&format!("{b} -> {a} ")), || {
        format!("README: Y's L1 misses {b} -> {a}; advise's first row: `{row}`")
    });
    let pct = said_num(&p, "and says why: ", "% of `Y`'s misses are conflicts");
    bad.check(
        out.contains(&format!("{pct}% of Y's L1 misses are conflicts")),
        || format!("README: {pct}% conflicts"),
    );
    let rows = said_num(&p, "since its rows are ", " bytes apart");
    let sets = said_pair(&p, "a column's lines fall into ", " sets", " of L1's ");
    bad.check(
        out.contains(&format!(
            "its rows are {rows} bytes apart, so a column's lines fall into {} of L1's {} sets",
            sets.0, sets.1
        )),
        || format!("README: rows {rows} bytes apart, {sets:?} sets"),
    );
    says(
        &p,
        "`X` gets \"nothing to suggest\": its misses are all first uses of a line",
    );
    bad.check(
        out.contains("X: nothing to suggest: all its") && out.contains("are first uses of a line"),
        || "README: X gets nothing to suggest".into(),
    );
    bad.check(dir.path().join("visinfo/advice.csv").is_file(), || {
        "README names visinfo/advice.csv; advise save did not write it".into()
    });
    bad.assert_none("Did my change help? (advise)", &out);
}

/// Every figure or data file these sections name is one a test here
/// looks for: a new name in the README fails this test until a test
/// checks it.
#[test]
fn every_file_these_sections_name_is_checked() {
    let checked = [
        "figures/index.html",
        "complete_memory_access_pattern.html",
        "2d_memory_access_pattern_arr.html",
        "2d_memory_access_pattern_p.html",
        "figures/sharing.html",
        "visinfo/compare_A_B.csv",
        "visinfo/compare_A_B_pairs.csv",
        "figures/compare_A_B.html",
        "figures/run_LABEL/",
        "figures/runs_misses_L1.html",
        "visinfo/runs_misses_L1.csv",
        "visinfo/what_if_NAME_LAYOUT.csv",
        "figures/what_if_NAME_LAYOUT.html",
        "what_if_A_pad_64.html",
        "visinfo/advice.csv",
        "figures/advice.html",
    ];
    let mut named = Vec::new();
    for h in [USING_IT, CHANGE, TUTORIAL] {
        named.extend(named_files(&section(h)));
    }
    let new: Vec<&String> = named
        .iter()
        .filter(|f| !checked.contains(&f.as_str()))
        .collect();
    assert!(
        new.is_empty(),
        "README.md names files no test here checks: {new:?}"
    );
    assert!(named.len() >= checked.len(), "{named:?}");
}

/// "Tracing a program you cannot edit": both sessions (a function's third
/// call, a line range) print what the README shows, and the prose's count
/// of inner points is `v`'s stores.
#[test]
fn tracing_by_function_and_lines_prints_the_readmes_tables() {
    let sec = section(CANNOT_EDIT);
    let p = prose(&sec);
    let mut bad = Mismatches::default();
    let mut outs = String::new();
    for command in ["set_region function", "set_region lines"] {
        let (script, shown) = prompt_session(&session_with(&sec, command));
        let dir = tempfile::tempdir().unwrap();
        copy_programs(dir.path(), &script);
        let out = mapvis_script(dir.path(), &script);
        bad.shown(
            &format!("Tracing a program you cannot edit ({command})"),
            &shown,
            &out,
        );
        outs += &out;
        if command == "set_region function" {
            let inner = said_num(&p, "for each of the ", " inner points");
            let v = out
                .lines()
                .find(|l| l.starts_with("v "))
                .unwrap_or_default()
                .split_whitespace()
                .nth(4)
                .and_then(|n| n.parse::<u64>().ok());
            bad.check(v == Some(inner), || {
                format!("README: {inner} inner points, v's stores {v:?}")
            });
        }
    }
    bad.assert_none("Tracing a program you cannot edit", &outs);
}
