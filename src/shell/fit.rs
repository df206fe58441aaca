//! Tables fitted to the terminal at the prompt.
//!
//! At the interactive prompt the shell knows the terminal's width (the
//! line editor asks the terminal before each command) and sets it here;
//! the tables of the `text` module then fit it instead of running past the
//! edge or cutting long labels. Scripts, `-c` and pipes set no width, and
//! their tables stay as they always were, since scripts and tests read
//! them.
//!
//! Fitting never cuts a cell. A table too wide for the terminal first
//! moves its widest columns of words (a pattern, an allocation site) out
//! of the grid, each onto its own indented line below its row; if the
//! numbers alone are still too wide, the columns are laid out in blocks,
//! each repeating the first column. Cost: O(cells) per table.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The terminal's width in columns at the prompt; 0 outside it.
static WIDTH: AtomicUsize = AtomicUsize::new(0);

/// Columns of words narrower than this stay in the grid.
const MOVABLE_WIDTH: usize = 12;

/// Sets the width tables fit (`None`: lay them out as scripts get them).
pub fn set_width(width: Option<usize>) {
    WIDTH.store(width.unwrap_or(0), Ordering::Relaxed);
}

/// The width tables fit now, if any.
pub(super) fn width() -> Option<usize> {
    Some(WIDTH.load(Ordering::Relaxed)).filter(|&w| w > 0)
}

/// Characters of a cell as printed.
fn chars(s: &str) -> usize {
    s.chars().count()
}

/// The widest cell of each column in `cols`, the header included.
fn widths(head: &[String], body: &[Vec<String>], cols: &[usize]) -> Vec<usize> {
    cols.iter()
        .map(|&c| {
            std::iter::once(head.get(c))
                .chain(body.iter().map(|r| r.get(c)))
                .flatten()
                .map(|s| chars(s))
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// The printed width of a grid of these column widths, two spaces apart.
fn total(w: &[usize]) -> usize {
    w.iter().sum::<usize>() + 2 * w.len().saturating_sub(1)
}

/// The widest column of words among `cols` (not the first), if one is
/// wide enough to be worth a line of its own.
fn widest_words(head: &[String], body: &[Vec<String>], cols: &[usize]) -> Option<usize> {
    let w = widths(head, body, cols);
    cols.iter()
        .zip(&w)
        .skip(1)
        .filter(|(&c, &w)| {
            w >= MOVABLE_WIDTH
                && body
                    .iter()
                    .any(|r| r.get(c).is_some_and(|s| s.chars().any(char::is_alphabetic)))
        })
        .max_by_key(|(_, &w)| w)
        .map(|(&c, _)| c)
}

/// `cells[c]` for each of `cols`, padded: the first left-aligned, the rest
/// right-aligned.
fn line(cells: &[String], cols: &[usize], w: &[usize]) -> String {
    let mut out = String::new();
    for (i, (&c, &width)) in cols.iter().zip(w).enumerate() {
        let cell = cells.get(c).map_or("", String::as_str);
        let pad = " ".repeat(width - chars(cell));
        if i == 0 {
            out.push_str(cell);
            out.push_str(&pad);
        } else {
            out.push_str("  ");
            out.push_str(&pad);
            out.push_str(cell);
        }
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// Groups `cols[1..]` into blocks that each fit `width` beside `cols[0]`
/// (a column wider than that gets a block of its own).
fn blocks(head: &[String], body: &[Vec<String>], cols: &[usize], width: usize) -> Vec<Vec<usize>> {
    let w = widths(head, body, cols);
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut used = 0;
    for (&c, &cw) in cols.iter().zip(&w).skip(1) {
        match out.last_mut() {
            Some(b) if used + 2 + cw <= width => {
                b.push(c);
                used += 2 + cw;
            }
            _ => {
                out.push(vec![cols[0], c]);
                used = w[0] + 2 + cw;
            }
        }
    }
    if out.is_empty() {
        out.push(cols.to_vec());
    }
    out
}

/// The table `head` over `body` laid out within `width` columns (see the
/// module documentation); every cell is shown whole.
pub(super) fn fitted(head: &[String], body: &[Vec<String>], width: usize) -> String {
    let mut cols: Vec<usize> = (0..head.len()).collect();
    let mut moved = Vec::new();
    while total(&widths(head, body, &cols)) > width {
        let Some(c) = widest_words(head, body, &cols) else {
            break;
        };
        cols.retain(|&k| k != c);
        moved.push(c);
    }
    let mut out = String::new();
    for (k, block) in blocks(head, body, &cols, width).iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        let w = widths(head, body, block);
        out.push_str(&line(head, block, &w));
        for row in body {
            out.push_str(&line(row, block, &w));
            for &c in moved.iter().filter(|_| k == 0) {
                if let Some(s) = row.get(c).filter(|s| !s.is_empty()) {
                    wrap(&mut out, &format!("    {}: {s}", head[c]), width);
                }
            }
        }
    }
    out
}

/// Appends `text` as lines of at most `width` characters, broken between
/// words, the later lines indented by 6 spaces; a word longer than a line
/// gets a line of its own, whole.
fn wrap(out: &mut String, text: &str, width: usize) {
    const INDENT: &str = "      ";
    let body = text.trim_start();
    let mut line = text[..text.len() - body.len()].to_string();
    for word in body.split(' ').filter(|w| !w.is_empty()) {
        let empty = line.trim().is_empty();
        if empty || chars(&line) + 1 + chars(word) <= width {
            if !empty {
                line.push(' ');
            }
            line.push_str(word);
        } else {
            out.push_str(line.trim_end());
            out.push('\n');
            line = format!("{INDENT}{word}");
        }
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_table_that_fits_is_laid_out_as_it_is() {
        let head = s(&["variable", "n"]);
        let body = vec![s(&["a", "7"]), s(&["bb", "12"])];
        assert_eq!(
            fitted(&head, &body, 80),
            "variable   n\na          7\nbb        12\n"
        );
    }

    #[test]
    fn a_long_label_moves_to_its_own_line_whole() {
        let label = "8 of 64 bytes per line used, stride 64 bytes (column order)";
        let head = s(&["variable", "accesses", "pattern"]);
        let body = vec![s(&["X", "4096", label])];
        let t = fitted(&head, &body, 40);
        assert_eq!(
            t,
            "variable  accesses\nX             4096\n    pattern: 8 of 64 bytes per line\n      \
             used, stride 64 bytes (column\n      order)\n"
        );
        assert_eq!(t.replace("\n      ", " ").matches(label).count(), 1);
    }

    #[test]
    fn a_label_longer_than_the_line_wraps_between_words() {
        let mut out = String::new();
        wrap(
            &mut out,
            "    pattern: column-wise: stride 256 elements (2 KiB), 8 of 64",
            30,
        );
        assert_eq!(
            out,
            "    pattern: column-wise:\n      stride 256 elements (2\n      KiB), 8 of 64\n"
        );
    }

    #[test]
    fn many_numbers_are_laid_out_in_blocks_that_fit() {
        let head: Vec<String> = (0..12).map(|i| format!("column{i:02}")).collect();
        let mut row = vec!["x".to_string()];
        row.extend((1..12).map(|i| format!("{}", i * 1000)));
        let t = fitted(&head, &[row], 40);
        assert!(t.lines().all(|l| l.chars().count() <= 40), "{t}");
        for i in 1..12 {
            assert!(t.contains(&format!("column{i:02}")), "{t}");
            assert!(t.contains(&format!("{}", i * 1000)), "{t}");
        }
        assert_eq!(t.matches("column00").count(), 4, "{t}");
    }
}
