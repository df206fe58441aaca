//! The compiler's predefined macros (`__GNUC__`, `__STDC_VERSION__`,
//! `__OPTIMIZE__`, `__cplusplus`, ...), asked of the compiler itself.
//!
//! A program compiled with plain `-g` carries no macro information, yet its
//! sources test the compiler's own macros (`#if __STDC_VERSION__ >=
//! 199901L`). Guessing them gives wrong branches and notes that blame the
//! user; so the C compiler on this machine is asked, as `cc -dM -E`, with
//! the options of the unit's `DW_AT_producer` that change them (the
//! language standard, the optimisation level). Only options of those forms
//! are passed on, each as its own argument (never through a shell), so a
//! hostile producer string cannot add others.
//!
//! Cost: one compiler run (about 10 ms) per distinct (language, options),
//! cached for the process.
use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// The options of a `DW_AT_producer` string that change the predefined
/// macros, for `cc -dM -E`: the language standard (explicit `-std=`, else
/// the one gcc names, `GNU C17` as `-std=gnu17`) and the last `-O` level.
pub fn options(producer: &str, cpp: bool) -> Vec<String> {
    let words: Vec<&str> = producer.split_whitespace().collect();
    let mut out = Vec::new();
    let std_ok = |s: &str| {
        !s.is_empty() && s.len() <= 16 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '+')
    };
    let explicit = words
        .iter()
        .rev()
        .find_map(|w| w.strip_prefix("-std="))
        .filter(|s| std_ok(s));
    let named = || {
        // `GNU C17 12.2.0`, `GNU C++17 12.2.0`: the word after `GNU`.
        let lang = words.iter().skip_while(|w| **w != "GNU").nth(1)?;
        let version = lang.strip_prefix(if cpp { "C++" } else { "C" })?;
        (!version.is_empty() && version.chars().all(|c| c.is_ascii_digit()))
            .then(|| format!("gnu{}{version}", if cpp { "++" } else { "" }))
    };
    if let Some(s) = explicit.map(str::to_string).or_else(named) {
        out.push(format!("-std={s}"));
    }
    let level = words.iter().rev().find(|w| {
        w.strip_prefix("-O")
            .is_some_and(|l| matches!(l, "" | "0" | "1" | "2" | "3" | "s" | "g" | "z" | "fast"))
    });
    if let Some(l) = level {
        out.push(l.to_string());
    }
    out
}

/// The compiler's answers so far, by (C++, options).
type Answers = HashMap<(bool, Vec<String>), Option<Vec<String>>>;

/// The macros `cc -dM -E` (`c++` for C++; `$CC` / `$CXX` when set)
/// predefines with `opts`, as `NAME VALUE` texts (the form of DWARF's macro
/// records), or `None` when no compiler could be run.
pub fn compiler_macros(cpp: bool, opts: &[String]) -> Option<Vec<String>> {
    static CACHE: OnceLock<Mutex<Answers>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (cpp, opts.to_vec());
    if let Some(found) = cache.lock().ok()?.get(&key) {
        return found.clone();
    }
    let found = ask(cpp, opts);
    if let Ok(mut c) = cache.lock() {
        c.insert(key, found.clone());
    }
    found
}

fn ask(cpp: bool, opts: &[String]) -> Option<Vec<String>> {
    let (var, default) = if cpp { ("CXX", "c++") } else { ("CC", "cc") };
    let cc = std::env::var(var).unwrap_or_else(|_| default.into());
    let out = Command::new(cc)
        .args(["-dM", "-E", "-x", if cpp { "c++" } else { "c" }])
        .args(opts)
        .arg("-")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let defs: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .map(str::to_string)
        .collect();
    (!defs.is_empty()).then_some(defs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_producers_standard_and_level_are_kept_and_nothing_else() {
        assert_eq!(
            options("GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O2", false),
            ["-std=gnu17", "-O2"]
        );
        assert_eq!(
            options("GNU C++17 12.2.0 -g -O0 -std=c++11", true),
            ["-std=c++11", "-O0"]
        );
        assert_eq!(options("GNU C99 12.2.0 -std=c99 -g", false), ["-std=c99"]);
        // Nothing that could name a file or another program passes.
        assert_eq!(
            options("GNU C17 -o/tmp/x -std=c11;rm -O9 -specs=/x -B/tmp", false),
            ["-std=gnu17"]
        );
        assert!(options("clang version 16", false).is_empty());
    }

    #[test]
    fn the_compiler_says_what_it_predefines() {
        let c =
            compiler_macros(false, &options("GNU C17 12.2.0 -g -O2", false)).expect("cc on PATH");
        let has = |m: &str| c.iter().any(|d| d.split_whitespace().next() == Some(m));
        assert!(has("__GNUC__") && has("__STDC_VERSION__") && has("__OPTIMIZE__"));
        assert!(c.iter().any(|d| d == "__STDC_VERSION__ 201710L"), "{c:?}");
        let cpp = compiler_macros(true, &[]).expect("c++ on PATH");
        assert!(cpp.iter().any(|d| d.starts_with("__cplusplus ")));
    }
}
