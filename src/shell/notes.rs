//! Printing an analysis' notes: every note is kept in the summary, but many
//! notes of one kind (the same sentence about different blocks, files or
//! counts) are printed as one line with a count, and the `notes` command
//! lists them all.
//!
//! A note's kind is its text with the parts that name things taken out:
//! numbers, `code`, "quoted" words, and words holding a path or a
//! `file:line`. Notes are a few hundred at most, so grouping is a pass over
//! them with one small map.

use std::collections::HashMap;

/// Notes of one kind printed before the rest are counted: beyond this many,
/// the first stands for all.
const SHOWN_OF_A_KIND: usize = 2;

/// The kind of a note: its words, with those that name a thing replaced by
/// `_` (see the module documentation).
fn kind(note: &str) -> String {
    let mut out = String::with_capacity(note.len());
    let mut quoted: Option<char> = None;
    for word in note.split(' ') {
        if let Some(q) = quoted {
            if word.ends_with(q)
                || word
                    .trim_end_matches(['.', ',', ':', ';', ')'])
                    .ends_with(q)
            {
                quoted = None;
            }
            continue;
        }
        let bare = word.trim_matches(|c: char| "()[],.;:".contains(c));
        let names_a_thing = bare.starts_with(['`', '"', '<'])
            || bare.contains(['/', '\\'])
            || bare.chars().any(|c| c.is_ascii_digit())
            || (bare.contains('.') && bare.contains(':'));
        if names_a_thing {
            if let Some(q) = bare.chars().next().filter(|c| matches!(c, '`' | '"')) {
                if bare.len() == 1 || !bare[1..].contains(q) {
                    quoted = Some(q);
                }
            }
            out.push_str("_ ");
        } else {
            out.push_str(word);
            out.push(' ');
        }
    }
    out
}

/// The lines to print for `notes`, in their order: each kind's first
/// notes, and for a kind with more, one line saying how many more there
/// are and that `notes` lists them.
pub(super) fn grouped(notes: &[String]) -> Vec<String> {
    let mut count: HashMap<String, usize> = HashMap::new();
    for n in notes {
        *count.entry(kind(n)).or_default() += 1;
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for n in notes {
        let k = kind(n);
        let total = count[&k];
        let i = seen.entry(k).or_default();
        *i += 1;
        if *i <= SHOWN_OF_A_KIND || total == SHOWN_OF_A_KIND + 1 {
            out.push(n.clone());
        } else if *i == SHOWN_OF_A_KIND + 1 {
            out.push(format!(
                "{} more notes like the one above ('notes' lists them all).",
                total - SHOWN_OF_A_KIND
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site_note(file: &str, line: u32, var: &str) -> String {
        format!(
            "heap blocks allocated at {file}:{line} are named {file}:{line}: the result of \
             malloc on line {line} is passed to `{var}`, not stored."
        )
    }

    #[test]
    fn notes_of_one_kind_are_counted_after_the_first_two() {
        let mut notes: Vec<String> = (0..85).map(|i| site_note("a.cpp", 10 + i, "s")).collect();
        notes.insert(1, "the source /x/b.c was not found.".into());
        let g = grouped(&notes);
        assert_eq!(
            g,
            [
                site_note("a.cpp", 10, "s"),
                "the source /x/b.c was not found.".to_string(),
                site_note("a.cpp", 11, "s"),
                "83 more notes like the one above ('notes' lists them all).".to_string(),
            ]
        );
    }

    #[test]
    fn three_of_a_kind_are_printed_as_they_are() {
        let notes: Vec<String> = (0..3).map(|i| site_note("a.c", i, "p")).collect();
        assert_eq!(grouped(&notes), notes);
    }

    #[test]
    fn notes_with_other_words_are_other_kinds() {
        let a = "the preprocessor conditions FOO in the sources of a.c could not be evaluated.";
        let b = "the source /x/b.c was not found.";
        let c = "3 heap blocks are named `x` by where the program keeps them.";
        let notes = vec![a.to_string(), b.to_string(), c.to_string()];
        assert_eq!(grouped(&notes), notes);
        assert_eq!(
            kind("`net->w1[i]` holds 4 blocks."),
            kind("`grid` holds 12 blocks.")
        );
        assert_ne!(kind(a), kind(b));
    }
}
