//! The interactive prompt (rustyline) and the non-interactive stdin loop.
//!
//! The prompt shows the working folder (`mapvis:~/proj> `), keeps a history
//! file, expands `!N` and `!!`, continues input while a brace, bracket or quote
//! is open, and completes command names, paths and spec-defined words on Tab.
//! Errors are printed as `error: ...` and the shell carries on.

use std::borrow::Cow;
use std::cell::RefCell;
use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;

use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{CompletionType, Config, Context, Editor, Helper};

use super::specs::ArgKind;
use super::{Interp, Registry, Shell};

/// The line printed when the interactive shell starts.
pub fn banner() -> String {
    format!(
        "mapvis {}: see how your C program touches memory. Type 'help' for commands, 'exit' to leave.",
        env!("CARGO_PKG_VERSION")
    )
}

/// The history file: `$MAPVIS_HISTORY` if set, else `$HOME/.mapvis_history`;
/// `None` when neither variable is set (history is then not saved).
pub fn history_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MAPVIS_HISTORY").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(".mapvis_history"))
}

/// The prompt: `mapvis:DIR> ` with the working folder, `$HOME` shown as `~`.
pub fn prompt() -> String {
    let dir = match std::env::current_dir() {
        Ok(d) => d,
        Err(_) => return "mapvis:?> ".to_string(),
    };
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let shown = match home.as_deref().and_then(|h| dir.strip_prefix(h).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Some(rest) => format!("~/{}", rest.display()),
        None => dir.display().to_string(),
    };
    format!("mapvis:{shown}> ")
}

/// Expands a leading `!!` (last entry) or `!N` (entry N, from 1) using
/// `history`; the rest of the line is kept (`!3 save`). Returns `Ok(None)`
/// when the line does not start with such a word.
pub fn expand_history(line: &str, history: &[String]) -> Result<Option<String>, String> {
    let trimmed = line.trim_start();
    let (first, rest) = match trimmed.find(char::is_whitespace) {
        Some(i) => trimmed.split_at(i),
        None => (trimmed, ""),
    };
    let Some(reference) = first.strip_prefix('!') else {
        return Ok(None);
    };
    let entry = if reference == "!" {
        history
            .last()
            .ok_or_else(|| "!! repeats the last command, but the history is empty".to_string())?
    } else if let Ok(n) = reference.parse::<usize>() {
        history.get(n.wrapping_sub(1)).ok_or_else(|| {
            format!(
                "!{n} refers to no command: the history has {} entries; type 'history' to list them",
                history.len()
            )
        })?
    } else {
        return Ok(None);
    };
    Ok(Some(format!("{entry}{rest}")))
}

/// Where the word under the cursor is, and the words of its command so far.
#[derive(Debug, PartialEq)]
struct CompletionContext {
    /// Byte offset where the partial word starts.
    start: usize,
    /// The partial word.
    partial: String,
    /// The complete words of the current command before the partial one.
    words: Vec<String>,
}

/// A small Tcl-ish lexer over the text before the cursor: a new command
/// starts after `;`, a newline, `[` or an opening brace that begins a word
/// (a script body); closing `]`/`}` return to the enclosing command.
fn completion_context(line: &str, pos: usize) -> CompletionContext {
    let text = &line[..pos];
    let mut stack: Vec<Vec<String>> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut start = 0;
    let mut in_word = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
            cur.push(c);
            continue;
        }
        match c {
            '\\' => {
                if !in_word {
                    in_word = true;
                    start = i;
                }
                escaped = true;
                cur.push(c);
            }
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            ';' | '\n' => {
                cur.clear();
                in_word = false;
                words.clear();
            }
            '[' => {
                stack.push(std::mem::take(&mut words));
                cur.clear();
                in_word = false;
            }
            '{' if !in_word => {
                stack.push(std::mem::take(&mut words));
            }
            ']' | '}' if !stack.is_empty() && (c == ']' || !in_word || cur.is_empty()) => {
                words = stack.pop().unwrap_or_default();
                cur = "{...}".to_string();
                in_word = true;
                start = i;
            }
            _ => {
                if !in_word {
                    in_word = true;
                    start = i;
                }
                cur.push(c);
            }
        }
    }
    if !in_word {
        start = pos;
        cur.clear();
    }
    CompletionContext {
        start,
        partial: cur,
        words,
    }
}

/// The rustyline helper: completion and multi-line validation.
pub struct ShellHelper<S: 'static> {
    registry: Rc<Registry<S>>,
    state: Rc<RefCell<S>>,
    interp: Rc<Interp>,
    files: FilenameCompleter,
}

impl<S: 'static> ShellHelper<S> {
    /// A helper completing from `shell`'s registry, state and interpreter.
    pub fn new(shell: &Shell<S>) -> Self {
        ShellHelper {
            registry: shell.registry().clone(),
            state: shell.state().clone(),
            interp: shell.interp().clone(),
            files: FilenameCompleter::new(),
        }
    }

    /// Command names (specs, aliases, and every Tcl command and proc).
    fn command_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for spec in self.registry.specs() {
            names.push(spec.name.to_string());
            names.extend(spec.aliases.iter().map(|a| a.to_string()));
        }
        if let Ok(list) = self.interp.eval("join [info commands] \\n") {
            names.extend(list.lines().map(str::to_string));
        }
        names
    }

    /// Candidates for `partial` among `words`, sorted and deduplicated.
    fn matching(partial: &str, words: Vec<String>) -> Vec<Pair> {
        let mut hits: Vec<String> = words
            .into_iter()
            .filter(|w| w.starts_with(partial))
            .collect();
        hits.sort();
        hits.dedup();
        hits.into_iter()
            .map(|w| Pair {
                display: w.clone(),
                replacement: w,
            })
            .collect()
    }

    /// The completion for `line` at `pos` (see [`Completer::complete`]).
    pub fn candidates(&self, line: &str, pos: usize) -> (usize, Vec<Pair>) {
        let ctx = completion_context(line, pos);
        let Some(command) = ctx.words.first() else {
            return (
                ctx.start,
                Self::matching(&ctx.partial, self.command_names()),
            );
        };
        let kind = match self.registry.spec(command) {
            Some(spec) => match spec.arg_at(ctx.words.len() - 1) {
                Some(arg) => arg.kind,
                None => return (pos, Vec::new()),
            },
            // Tcl commands such as `source` or `cd` mostly take paths.
            None => ArgKind::Path,
        };
        let words: Vec<String> = match kind {
            ArgKind::Command => self.command_names(),
            ArgKind::OneOf(choices) => choices.iter().map(|c| c.to_string()).collect(),
            ArgKind::Name => match self.state.try_borrow() {
                Ok(state) => self.registry.names(&state),
                Err(_) => Vec::new(),
            },
            ArgKind::Run => match self.state.try_borrow() {
                Ok(state) => self.registry.runs(&state),
                Err(_) => Vec::new(),
            },
            ArgKind::Path => {
                return self
                    .files
                    .complete_path(line, pos)
                    .unwrap_or((pos, Vec::new()));
            }
            ArgKind::Int | ArgKind::Text => Vec::new(),
        };
        (ctx.start, Self::matching(&ctx.partial, words))
    }
}

impl<S: 'static> Completer for ShellHelper<S> {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        Ok(self.candidates(line, pos))
    }
}

impl<S: 'static> Validator for ShellHelper<S> {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        if Interp::is_complete(ctx.input()) {
            Ok(ValidationResult::Valid(None))
        } else {
            Ok(ValidationResult::Incomplete)
        }
    }
}

impl<S: 'static> Hinter for ShellHelper<S> {
    type Hint = String;
}

impl<S: 'static> Highlighter for ShellHelper<S> {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(
        &'s self,
        prompt: &'p str,
        _default: bool,
    ) -> Cow<'b, str> {
        Cow::Borrowed(prompt)
    }
}

impl<S: 'static> Helper for ShellHelper<S> {}

/// Writes one line to stdout, ignoring a closed pipe (as in
/// `mapvis -c help | head`) instead of panicking like `println!`.
pub fn say(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// Prints the outcome of one evaluation, the value only when it is not
/// `quiet` (see [`Shell::speaks_for_itself`]); returns false if it failed.
/// Results and messages may hold names from a trace, so control
/// characters are shown escaped (see [`super::text::terminal_safe`]).
fn report(result: Result<String, super::TclError>, quiet: bool) -> bool {
    match result {
        Ok(text) => {
            if !text.is_empty() && !quiet {
                say(&super::text::terminal_safe(&text));
            }
            true
        }
        Err(e) => {
            eprintln!("error: {}", super::text::terminal_safe(&e.message));
            false
        }
    }
}

/// Runs the interactive prompt until `exit`, `quit` or Ctrl-D.
pub fn run_interactive<S: 'static>(shell: &Shell<S>) -> ExitCode {
    let config = Config::builder()
        .max_history_size(10_000)
        .and_then(|b| b.history_ignore_dups(false))
        .map(|b| {
            b.history_ignore_space(false)
                .auto_add_history(false)
                .completion_type(CompletionType::List)
                .build()
        });
    let editor = config.and_then(Editor::<ShellHelper<S>, FileHistory>::with_config);
    let mut editor = match editor {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot set up line editing on this terminal: {e}");
            return ExitCode::FAILURE;
        }
    };
    editor.set_helper(Some(ShellHelper::new(shell)));
    // After the editor: rustyline replaces the SIGINT action when it opens the
    // terminal, and the handler installed now chains to it.
    shell.enable_interrupts_or_warn();
    let path = history_path();
    if let Some(p) = path.as_deref().filter(|p| p.exists()) {
        if let Err(e) = editor.load_history(p) {
            eprintln!(
                "warning: cannot read the history file {}: {e}; starting with an empty history",
                p.display()
            );
        }
    }
    shell
        .history()
        .replace(editor.history().iter().cloned().collect());
    say(&banner());
    let mut warned = false;
    loop {
        match editor.readline(&prompt()) {
            Ok(line) => {
                if line.trim().is_empty() {
                    continue;
                }
                let line = match expand_history(&line, &shell.history().borrow()) {
                    Ok(Some(expanded)) => {
                        say(&expanded);
                        expanded
                    }
                    Ok(None) => line,
                    Err(msg) => {
                        eprintln!("error: {msg}");
                        continue;
                    }
                };
                let _ = editor.add_history_entry(line.as_str());
                shell.history().borrow_mut().push(line.clone());
                if let Some(p) = &path {
                    if let Err(e) = editor.append_history(p) {
                        if !warned {
                            eprintln!(
                                "warning: cannot save the history to {}: {e}; set MAPVIS_HISTORY to a writable file",
                                p.display()
                            );
                            warned = true;
                        }
                    }
                }
                // Tables fit the terminal as it is now (it may have been
                // resized since the last command).
                super::fit::set_width(editor.dimensions().map(|(cols, _)| cols as usize));
                let result = shell.eval(&line);
                super::fit::set_width(None);
                if let Some(code) = shell.exit_requested() {
                    shell.flush();
                    return ExitCode::from(code);
                }
                report(result, shell.speaks_for_itself(&line));
                shell.flush();
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => {
                shell.flush();
                return ExitCode::SUCCESS;
            }
            Err(e) => {
                eprintln!("error: cannot read from the terminal: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
}

/// Reads commands from a non-terminal `input` (a pipe or file) without a
/// prompt, evaluating each complete command and printing non-empty results.
/// Returns failure if any command failed (130 after Ctrl-C).
pub fn run_stream<S: 'static>(shell: &Shell<S>, input: impl BufRead) -> ExitCode {
    let mut failed = false;
    let mut buf = String::new();
    for line in input.lines() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("error: cannot read the commands from standard input: {e}");
                return ExitCode::FAILURE;
            }
        };
        buf.push_str(&line);
        buf.push('\n');
        if !Interp::is_complete(&buf) {
            continue;
        }
        let script = std::mem::take(&mut buf);
        if script.trim().is_empty() {
            continue;
        }
        let result = shell.eval(&script);
        if let Some(code) = shell.exit_requested() {
            shell.flush();
            return ExitCode::from(code);
        }
        failed |= !report(result, shell.speaks_for_itself(&script));
        shell.flush();
        if crate::cancel::requested() {
            return ExitCode::from(130);
        }
    }
    if !buf.trim().is_empty() {
        eprintln!(
            "error: the input ended inside an unfinished command (a brace, bracket or quote is not closed)"
        );
        failed = true;
    }
    shell.flush();
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_expansion() {
        let h = vec!["help".to_string(), "memory_stats".to_string()];
        assert_eq!(
            expand_history("!!", &h).unwrap().as_deref(),
            Some("memory_stats")
        );
        assert_eq!(expand_history("!1", &h).unwrap().as_deref(), Some("help"));
        assert_eq!(
            expand_history("!2 save", &h).unwrap().as_deref(),
            Some("memory_stats save")
        );
        assert_eq!(expand_history("expr {!1}", &h).unwrap(), None);
        assert_eq!(expand_history("!x", &h).unwrap(), None);
        assert!(expand_history("!3", &h)
            .unwrap_err()
            .contains("has 2 entries"));
        assert!(expand_history("!0", &h).is_err());
        assert!(expand_history("!!", &[]).is_err());
    }

    #[test]
    fn context_of_the_cursor() {
        let c = completion_context("memory_st", 9);
        assert_eq!(
            (c.start, c.partial.as_str(), c.words.len()),
            (0, "memory_st", 0)
        );
        let line = "set x 1; 2d_memory_access_pattern a 3 4 s";
        let c = completion_context(line, line.len());
        assert_eq!(c.words, ["2d_memory_access_pattern", "a", "3", "4"]);
        assert_eq!((c.start, c.partial.as_str()), (line.len() - 1, "s"));
        let line = "puts [help ";
        let c = completion_context(line, line.len());
        assert_eq!(c.words, ["help"]);
        assert_eq!(c.partial, "");
        let line = "proc f {} {\n  memory";
        let c = completion_context(line, line.len());
        assert!(c.words.is_empty());
        let line = "foreach x {a b} { set_mem_alloc ";
        let c = completion_context(line, line.len());
        assert_eq!(c.words, ["set_mem_alloc"]);
    }

    #[test]
    fn candidates_follow_the_specs() {
        let mut registry = Registry::<Vec<String>>::new();
        registry.set_name_source(|names: &Vec<String>| names.clone());
        let shell = Shell::new(registry, vec!["matrix".to_string(), "cube".to_string()]).unwrap();
        let helper = ShellHelper::new(&shell);
        let names = |line: &str| -> Vec<String> {
            helper
                .candidates(line, line.len())
                .1
                .into_iter()
                .map(|p| p.replacement)
                .collect()
        };
        assert_eq!(names("memory_st"), ["memory_stats"]);
        assert_eq!(names("set_mem_alloc "), ["G", "H", "S", "all"]);
        assert_eq!(names("set_open_browser o"), ["off", "on"]);
        assert_eq!(names("memory_stats s"), ["save"]);
        assert_eq!(names("2d_memory_access_pattern m"), ["matrix"]);
        assert_eq!(names("3darray_memory_access_pattern "), ["cube", "matrix"]);
        assert!(names("2d_memory_access_pattern m 3 ").is_empty());
        assert_eq!(names("help dump_t"), ["dump_trace"]);
        assert!(names("lindex").contains(&"lindex".to_string()));
        let (start, _) = helper.candidates("set x [memory_st", 16);
        assert_eq!(start, 7);
    }

    #[test]
    fn stream_mode_reports_failures() {
        let shell = Shell::new(Registry::<()>::new(), ()).unwrap();
        let ok = run_stream(&shell, "set x {\n1}\nset y $x\n".as_bytes());
        assert_eq!(ok, ExitCode::SUCCESS);
        assert_eq!(shell.interp().get_var("y").as_deref(), Some("\n1"));
        let bad = run_stream(&shell, "nosuchcmd\nset z 2\n".as_bytes());
        assert_eq!(bad, ExitCode::FAILURE);
        assert_eq!(shell.interp().get_var("z").as_deref(), Some("2"));
        let open = run_stream(&shell, "set w {\n".as_bytes());
        assert_eq!(open, ExitCode::FAILURE);
    }
}
