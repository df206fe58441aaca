//! Text from traces on its way to the terminal.
//!
//! Names and notes come from the traced program (its variable names, file
//! names, a Gleipnir trace's text) and may hold anything, including
//! terminal escape sequences or names tens of kilobytes long. Everything
//! the shell prints that came from a trace goes through [`terminal_safe`],
//! and tables are laid out with [`table`], which never uses `format!`
//! widths (they panic above 65 535).
use std::borrow::Cow;
use std::fmt::Write as _;

/// A path as one line of terminal-safe text, for messages about paths
/// read from a file (the saved settings).
pub fn path_line(p: &std::path::Path) -> String {
    terminal_safe(&p.display().to_string()).replace(['\n', '\t'], " ")
}

/// Longest cell a table shows; longer ones end with `…` (the returned Tcl
/// values keep the whole text).
pub const MAX_CELL: usize = 64;

/// `text` with every control character other than newline and tab (C0,
/// DEL, C1: what starts a terminal escape sequence) shown as `\xNN`, so it
/// cannot move the cursor, change colours or retitle the window.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(bad) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if bad(c) {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A cell made terminal-safe and put on one line.
fn one_line(cell: &str) -> String {
    terminal_safe(cell).replace(['\n', '\t'], " ")
}

/// One table cell as shown: made terminal-safe, on one line, and cut at
/// [`MAX_CELL`] characters.
fn shown(cell: &str) -> String {
    let safe = one_line(cell);
    if safe.chars().count() <= MAX_CELL {
        safe
    } else {
        let mut cut: String = safe.chars().take(MAX_CELL - 1).collect();
        cut.push('…');
        cut
    }
}

/// A text table: the first column left-aligned, the others right-aligned,
/// two spaces apart, one line per row; at the prompt, fitted to the
/// terminal instead (see [`super::fit`]). Cost: O(total text).
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    if let Some(width) = super::fit::width() {
        let head: Vec<String> = headers.iter().map(|h| one_line(h)).collect();
        let body: Vec<Vec<String>> = rows
            .iter()
            .map(|r| r.iter().map(|c| one_line(c)).collect())
            .collect();
        return super::fit::fitted(&head, &body, width);
    }
    let head: Vec<String> = headers.iter().map(|h| shown(h)).collect();
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| shown(c)).collect())
        .collect();
    let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in &body {
        for (i, c) in r.iter().enumerate() {
            if let Some(w) = width.get_mut(i) {
                *w = (*w).max(c.chars().count());
            }
        }
    }
    let mut out = String::new();
    for cells in std::iter::once(&head).chain(&body) {
        for (i, c) in cells.iter().enumerate() {
            let pad = " ".repeat(width.get(i).copied().unwrap_or(0) - c.chars().count());
            if i > 0 {
                out.push_str("  ");
                out.push_str(&pad);
                out.push_str(c);
            } else {
                out.push_str(c);
                out.push_str(&pad);
            }
        }
        out.push('\n');
    }
    out
}

/// `n` and the noun, in the plural unless `n` is 1: `1 variable`, `2
/// variables`, `0 regions`.
pub fn counted(n: impl Into<u64>, noun: &str) -> String {
    match n.into() {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// A duration of `ns` nanoseconds in the unit that reads, to three
/// significant digits: `850 ns`, `12.3 µs`, `22.7 ms`, `3.41 s`.
pub fn duration(ns: u64) -> String {
    let (value, unit) = match ns {
        // Bounds where the value would round up to 1000 of the unit.
        0..=999 => return format!("{ns} ns"),
        1_000..=999_499 => (ns as f64 / 1e3, "µs"),
        999_500..=999_499_999 => (ns as f64 / 1e6, "ms"),
        _ => (ns as f64 / 1e9, "s"),
    };
    let digits = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.digits$} {unit}")
}

/// `2026-11-25 04:05` from seconds since the epoch (UTC), by the civil
/// calendar's arithmetic (days to year, month and day).
pub fn utc_date(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let (h, m) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{m:02}")
}

/// `wrote a, b, c`: the line that lists the files a command wrote.
pub fn wrote(paths: &[std::path::PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    format!("wrote {}", names.join(", "))
}

/// Columns of text tables: left-aligned first column, right-aligned rest,
/// a last column holding words left as it is. The locality reports' tables
/// (`cache_stats`, `what_if`) use it; the cells are mapvis's own numbers
/// and names already shown elsewhere.
pub fn text_table(headers: &[String], rows: &[Vec<String>]) -> String {
    if let Some(width) = super::fit::width() {
        return super::fit::fitted(headers, rows, width);
    }
    let mut w: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if i < w.len() {
                w[i] = w[i].max(c.len());
            }
        }
    }
    let fmt = |cells: &[String]| -> String {
        let last = cells.len().saturating_sub(1);
        let mut s = cells
            .iter()
            .enumerate()
            .map(|(i, c)| match i {
                0 => format!("{c:<width$}", width = w[0]),
                _ if i == last && c.chars().any(|ch| ch.is_alphabetic()) => c.clone(),
                _ => format!("{c:>width$}", width = w[i]),
            })
            .collect::<Vec<_>>()
            .join("  ");
        s.truncate(s.trim_end().len());
        s.push('\n');
        s
    };
    let mut out = fmt(headers);
    for r in rows {
        out.push_str(&fmt(r));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_take_the_plural_unless_one() {
        assert_eq!(super::counted(1u64, "variable"), "1 variable");
        assert_eq!(super::counted(0u64, "region"), "0 regions");
        assert_eq!(super::counted(200u32, "block"), "200 blocks");
    }

    #[test]
    fn dates_are_the_civil_calendars() {
        assert_eq!(super::utc_date(0), "1970-01-01 00:00");
        // 2026-11-25 04:05 UTC.
        assert_eq!(super::utc_date(1_795_579_500), "2026-11-25 04:05");
        assert_eq!(super::utc_date(951_782_400), "2000-02-29 00:00");
    }

    /// Worked by hand: 22 727 416 ns is 22.727 ms, three digits 22.7.
    #[test]
    fn durations_read_in_their_unit() {
        assert_eq!(super::duration(850), "850 ns");
        assert_eq!(super::duration(12_345), "12.3 µs");
        assert_eq!(super::duration(22_727_416), "22.7 ms");
        assert_eq!(super::duration(999_600), "1.00 ms");
        assert_eq!(super::duration(3_410_000_000), "3.41 s");
        assert_eq!(super::duration(123_456_000_000), "123 s");
    }

    use super::*;

    #[test]
    fn escapes_are_shown_not_sent() {
        assert_eq!(terminal_safe("arr"), "arr");
        assert_eq!(
            terminal_safe("a\x1b]0;owned\x07b\u{9b}2J"),
            "a\\x1b]0;owned\\x07b\\x9b2J"
        );
        assert_eq!(terminal_safe("two\nlines\tok"), "two\nlines\tok");
    }

    #[test]
    fn tables_take_any_name() {
        let long = "x".repeat(65_536);
        let t = table(
            &["variable", "n"],
            &[vec![long, "7".into()], vec!["a".into(), "12".into()]],
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].ends_with("…   7"), "{}", lines[1]);
        assert_eq!(lines[2].chars().count(), lines[1].chars().count());
        assert!(lines[2].starts_with("a ") && lines[2].ends_with("  12"));
    }

    proptest::proptest! {
        /// Any names, however long or strange, give a table with one line
        /// per row and no control character but the newlines.
        #[test]
        fn any_cells_make_a_table(cells in proptest::collection::vec(".{0,300}", 1..6)) {
            let rows: Vec<Vec<String>> = cells.iter().map(|c| vec![c.clone(), c.clone()]).collect();
            let t = table(&["a", "b"], &rows);
            proptest::prop_assert_eq!(t.lines().count(), rows.len() + 1);
            proptest::prop_assert!(!t.chars().any(|c| c.is_control() && c != '\n'));
        }
    }
}
