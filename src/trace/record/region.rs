//! Regions by code: what the tool is told when the region is a function
//! or some source lines instead of the pins (`--region-*` options, read by
//! `tool/mv_region.c`), and which of the region's executions to trace.

use std::path::PathBuf;

/// Which entries of a region by code are traced. Entries are numbered
/// from 1 across all threads in the order they begin; a recursive call
/// is inside its outermost one and not counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Calls {
    /// Every entry.
    All,
    /// Entries `first` to `last`, inclusive (`One(n)` is `Span(n, n)`).
    Span(u64, u64),
}

impl Calls {
    /// Reads `all`, `N` or `A-B` (1-based, A <= B).
    ///
    /// # Errors
    /// A sentence saying what was wrong with `text`.
    pub fn parse(text: &str) -> Result<Calls, String> {
        let bad = || {
            format!(
                "the calls to trace are all, a call's number (3: the third) or a range (2-5), \
                 counted from 1, not \"{}\"",
                text.chars().take(40).collect::<String>()
            )
        };
        if text == "all" {
            return Ok(Calls::All);
        }
        let (a, b) = text.split_once('-').unwrap_or((text, text));
        let a: u64 = a.trim().parse().map_err(|_| bad())?;
        let b: u64 = b.trim().parse().map_err(|_| bad())?;
        if a == 0 || b < a {
            return Err(bad());
        }
        Ok(Calls::Span(a, b))
    }

    /// The word `parse` reads back: `all`, `3` or `2-5`.
    pub fn word(self) -> String {
        match self {
            Calls::All => "all".into(),
            Calls::Span(a, b) if a == b => a.to_string(),
            Calls::Span(a, b) => format!("{a}-{b}"),
        }
    }

    /// The tool's `--region-calls` value: `FIRST-LAST`, LAST 0 for all.
    pub fn tool_arg(self) -> String {
        match self {
            Calls::All => "1-0".into(),
            Calls::Span(a, b) => format!("{a}-{b}"),
        }
    }

    /// In words, for a label: `calls all`, `call 3`, `calls 2-5`.
    pub fn describe(self) -> String {
        match self {
            Calls::All => "calls all".into(),
            Calls::Span(a, b) if a == b => format!("call {a}"),
            Calls::Span(a, b) => format!("calls {a}-{b}"),
        }
    }
}

/// What a range of a region's code is, which says when a thread leaves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeKind {
    /// A function's own (out-of-line) code, entered by a call: the thread
    /// leaves when its stack pointer rises above the one it entered with
    /// (a return; a tail call keeps it, and stays inside).
    Own,
    /// A copy of the function inlined into another, run in its caller's
    /// frame: the thread leaves when it runs code outside at or above the
    /// stack pointer it entered with (a callee's frame lies below).
    Inlined,
    /// Source lines: left as inlined code, except that coming back into
    /// them in the same frame, before any other entry, goes on with the
    /// same region (an instruction of another line inside a loop nest at
    /// -O2 does not split it).
    Lines,
}

/// One range of a region's code, file addresses of [`CodeRegion::object`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeRange {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// What the code is.
    pub kind: RangeKind,
}

/// A region by code, ready for the tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeRegion {
    /// The object (the executable, or a library) the ranges are in.
    pub object: PathBuf,
    /// Disjoint ranges, sorted.
    pub ranges: Vec<CodeRange>,
    /// Which entries to trace.
    pub calls: Calls,
    /// What the trace's header says its regions are:
    /// `function kernel, calls all`.
    pub label: String,
}

impl CodeRegion {
    /// The tool's options for this region.
    pub fn tool_args(&self) -> Vec<String> {
        let mut args = vec![
            format!("--region-object={}", self.object.display()),
            format!("--region-calls={}", self.calls.tool_arg()),
            format!("--region-label={}", self.label),
        ];
        args.extend(self.ranges.iter().map(|r| {
            format!(
                "--region-range={}:{:x}-{:x}",
                match r.kind {
                    RangeKind::Own => 'f',
                    RangeKind::Inlined => 'i',
                    RangeKind::Lines => 'l',
                },
                r.start,
                r.end
            )
        }));
        args
    }
}

/// Windows of a run (`set_region window SKIP COUNT ?EVERY?`): COUNT
/// accesses after the first SKIP of the run, and again every EVERY
/// accesses (from one window's start to the next) when EVERY is not 0.
/// The tool counts the run's accesses per superblock between windows (a
/// guarded access counts whether or not it happens, so a window may open a
/// few accesses after its nominal start) and exactly inside them: each
/// window holds exactly COUNT accesses unless the run ends first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Accesses of the run before the first window.
    pub skip: u64,
    /// Accesses in each window, at least 1.
    pub count: u64,
    /// From one window's start to the next; 0 for one window, else at
    /// least `count`.
    pub every: u64,
}

impl Window {
    /// A window, checked.
    ///
    /// # Errors
    /// A sentence saying what is wrong.
    pub fn new(skip: u64, count: u64, every: u64) -> Result<Window, String> {
        if count == 0 {
            return Err("a window holds at least one access (COUNT >= 1)".into());
        }
        if every != 0 && every < count {
            return Err(format!(
                "windows of {count} accesses cannot start every {every}: EVERY is at least COUNT (or 0 for one window)"
            ));
        }
        Ok(Window { skip, count, every })
    }

    /// What the trace's header says: `window SKIP COUNT EVERY`.
    pub fn label(self) -> String {
        format!("window {} {} {}", self.skip, self.count, self.every)
    }

    /// The tool's options.
    pub fn tool_args(self) -> Vec<String> {
        vec![
            format!(
                "--region-window={},{},{}",
                self.skip, self.count, self.every
            ),
            format!("--region-label={}", self.label()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_read_back_what_they_print() {
        for (text, calls, tool) in [
            ("all", Calls::All, "1-0"),
            ("3", Calls::Span(3, 3), "3-3"),
            ("2-5", Calls::Span(2, 5), "2-5"),
        ] {
            assert_eq!(Calls::parse(text), Ok(calls));
            assert_eq!(calls.word(), text);
            assert_eq!(calls.tool_arg(), tool);
        }
        for bad in ["0", "5-2", "x", "", "1-", "-3"] {
            assert!(Calls::parse(bad).is_err(), "{bad}");
        }
    }
}
