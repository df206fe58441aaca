//! What to say when a command name is mistyped: Tcl's bare `invalid
//! command name "cache_stat"` becomes that message followed by the nearest
//! commands the interpreter knows (`did you mean cache_stats?`), or by where
//! the commands are listed when none is near.
//!
//! Nearness is the optimal string alignment distance (`strsim`: edits,
//! with a swap of two neighbours as one), or a prefix: `memory` is near
//! `memory_stats`. Cost: one distance per known command (a few hundred),
//! only when a command was not found.

/// The words Tcl's error for an unknown command starts with.
const UNKNOWN: &str = "invalid command name \"";

/// Most commands suggested.
const MOST: usize = 3;

/// The name in Tcl's message for an unknown command (`invalid command
/// name "NAME"`), or `None` for any other message.
pub fn unknown_command(message: &str) -> Option<&str> {
    message.strip_prefix(UNKNOWN)?.strip_suffix('"')
}

/// The known commands nearest to `typed`, best first, at most three: those
/// within `max(1, length / 3)` edits, else those `typed` is a prefix of.
/// Ties are broken by name.
pub fn nearest<'a>(typed: &str, known: &[&'a str]) -> Vec<&'a str> {
    let limit = (typed.chars().count() / 3).max(1);
    let mut near: Vec<(usize, &str)> = known
        .iter()
        .filter(|k| **k != typed)
        .map(|k| (strsim::osa_distance(typed, k), *k))
        .filter(|(d, _)| *d <= limit)
        .collect();
    if near.is_empty() && typed.chars().count() >= 3 {
        near = known
            .iter()
            .filter(|k| k.starts_with(typed) && **k != typed)
            .map(|k| (k.len() - typed.len(), *k))
            .collect();
    }
    near.sort();
    near.dedup();
    near.into_iter().take(MOST).map(|(_, k)| k).collect()
}

/// `message` with a suggestion added when it is Tcl's error for an
/// unknown command: the nearest of `known` (see [`nearest`]), and where
/// the commands are listed. Any other message is returned unchanged.
pub fn with_suggestion(message: &str, known: &[&str]) -> String {
    let Some(typed) = unknown_command(message) else {
        return message.to_string();
    };
    let near = nearest(typed, known);
    let list = "'help' lists mapvis's commands by group";
    match near.as_slice() {
        [] => format!("{message}; {list}."),
        [one] => format!("{message}; did you mean {one}? ({list})"),
        [rest @ .., last] => format!(
            "{message}; did you mean {} or {last}? ({list})",
            rest.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &[
        "cache_stats",
        "memory_stats",
        "sharing_stats",
        "set_cache",
        "puts",
        "set",
        "save_run",
        "use_run",
    ];

    /// Worked by hand: `cache_stat` is one insertion from `cache_stats`;
    /// `memroy_stats` one swap from `memory_stats`; `sav_run` one
    /// insertion from `save_run`, while `use_run` needs three
    /// substitutions (s/u, a/s, v/e), over its limit of 7 / 3 = 2.
    #[test]
    fn a_mistyped_name_gets_its_nearest_commands() {
        assert_eq!(nearest("cache_stat", KNOWN), ["cache_stats"]);
        assert_eq!(nearest("memroy_stats", KNOWN), ["memory_stats"]);
        assert_eq!(nearest("sav_run", KNOWN), ["save_run"]);
        // A prefix when nothing is within the edits.
        assert_eq!(nearest("memory", KNOWN), ["memory_stats"]);
        // Nothing near.
        assert!(nearest("frobnicate", KNOWN).is_empty());
    }

    #[test]
    fn only_the_unknown_command_error_gets_a_suggestion() {
        assert_eq!(
            with_suggestion("invalid command name \"cache_stat\"", KNOWN),
            "invalid command name \"cache_stat\"; did you mean cache_stats? ('help' lists mapvis's commands by group)"
        );
        assert_eq!(
            with_suggestion("invalid command name \"zzzzzz\"", KNOWN),
            "invalid command name \"zzzzzz\"; 'help' lists mapvis's commands by group."
        );
        let other = "can't read \"x\": no such variable";
        assert_eq!(with_suggestion(other, KNOWN), other);
    }
}
