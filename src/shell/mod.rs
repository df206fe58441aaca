//! The shell: an embedded Tcl 8.6 interpreter behind a rustyline REPL.
//!
//! * [`tcl`]: the safe wrapper over libtcl8.6 (the shell's only `unsafe` code).
//! * [`specs`]: the table of every mapvis command (usage, help, arguments).
//! * [`Registry`]: binds command names to Rust handlers over a state `S`.
//! * [`Shell`]: an interpreter with the registry's commands and the built-ins
//!   `help`, `history` and `exit`/`quit` installed.
//! * [`repl`], [`cli`], [`interrupt`]: the prompt, the entry point, Ctrl-C.
//!
//! # Adding a command
//!
//! The pipeline author owns [`commands::Session`] and fills
//! [`commands::register_pipeline`]:
//!
//! ```ignore
//! /// `memory_stats ?save?`: prints the statistics.
//! fn memory_stats(session: &mut Session, args: &[String]) -> CmdResult<Value> {
//!     let save = args.first().is_some(); // already checked against the spec
//!     Ok(Value::Str(session.stats_text(save)?))
//! }
//! registry.add("memory_stats", memory_stats);
//! ```
//!
//! The name must appear in [`specs::SPECS`] (or be added with
//! [`Registry::add_spec`]): the shell checks the argument count (and
//! groups of arguments given together, [`specs::opt_with`]), `OneOf`
//! words and integers against the spec before calling the handler, so a
//! handler only sees well-formed arguments (without the command name) and
//! does not check them again.
//!
//! A handler is a named function whose doc comment starts with its Tcl
//! usage. It returns a [`CmdError`]: a stage's error converts with `?`
//! and keeps its causes; the shell's own messages are full sentences
//! (`Err(format!(...).into())`). The registry turns the error into Tcl's
//! error text in one place, with its causes ([`CmdError::user_text`]).
//!
//! # State
//!
//! The registry is generic over the state `S`; the shell keeps it in an
//! `Rc<RefCell<S>>` and lends `&mut S` to one handler at a time. Handlers do
//! not get the interpreter, so they cannot re-enter the shell while holding
//! the state.

pub mod cli;
pub mod cmd_compare;
pub mod cmd_heap;
pub mod cmd_hpcmp;
pub mod cmd_locality;
pub mod cmd_runs;
pub mod commands;
pub mod error;
pub mod fit;
mod handlers;
pub mod interrupt;
mod notes;
pub mod pipeline;
pub mod progress;
mod render;
pub mod repl;
pub mod saved;
pub mod session;
pub mod specs;
pub mod state;
mod suggest;
pub mod tcl;
pub mod text;

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

pub use error::{CmdError, CmdResult};
pub use specs::{Arg, ArgKind, CommandSpec, Group};
pub use tcl::{Interp, TclError, Value};

/// A command handler: gets the state and the (checked) arguments, without the
/// command name. `Err` is shown as `error: ...`, with its causes (see
/// [`CmdError::user_text`]).
pub type Handler<S> = Rc<dyn Fn(&mut S, &[String]) -> CmdResult<Value>>;

/// Supplies completion candidates for [`ArgKind::Name`] (or
/// [`ArgKind::Run`]) arguments.
type NameSource<S> = Rc<dyn Fn(&S) -> Vec<String>>;

/// The commands of a shell over state `S`: specs and their handlers.
///
/// Every spec is installed as a Tcl command even without a handler; calling
/// such a command reports that it is not available yet, while `help` and
/// completion already describe it.
pub struct Registry<S> {
    specs: Vec<&'static CommandSpec>,
    handlers: HashMap<&'static str, Handler<S>>,
    name_source: Option<NameSource<S>>,
    run_source: Option<NameSource<S>>,
}

impl<S: 'static> Default for Registry<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: 'static> Registry<S> {
    /// A registry holding the full mapvis spec table and no handlers.
    pub fn new() -> Self {
        Registry {
            specs: specs::SPECS.iter().collect(),
            handlers: HashMap::new(),
            name_source: None,
            run_source: None,
        }
    }

    /// Adds (or replaces, by name) a spec, for commands outside the table.
    pub fn add_spec(&mut self, spec: &'static CommandSpec) {
        self.specs.retain(|s| s.name != spec.name);
        self.specs.push(spec);
    }

    /// Binds `name` (or one of its aliases) to `handler`; aliases run the same
    /// handler. Replaces an earlier handler.
    ///
    /// # Panics
    /// If no spec answers to `name`: that is a programming error, and the
    /// test suite registers every command, so it shows up at once.
    pub fn add<F>(&mut self, name: &str, handler: F)
    where
        F: Fn(&mut S, &[String]) -> CmdResult<Value> + 'static,
    {
        let spec = self.spec(name).unwrap_or_else(|| {
            panic!(
                "no spec for command {name}: add it to src/shell/specs.rs or call add_spec first"
            )
        });
        self.handlers.insert(spec.name, Rc::new(handler));
    }

    /// Sets the source of array and variable names offered by tab completion
    /// for [`ArgKind::Name`] arguments (e.g. the arrays of the analysed
    /// program). Called on every completion, so it should be cheap.
    pub fn set_name_source<F>(&mut self, f: F)
    where
        F: Fn(&S) -> Vec<String> + 'static,
    {
        self.name_source = Some(Rc::new(f));
    }

    /// Sets the source of run labels offered by tab completion for
    /// [`ArgKind::Run`] arguments (the saved runs of the folder the command
    /// will read). Called on every completion, so it should be cheap.
    pub fn set_run_source<F>(&mut self, f: F)
    where
        F: Fn(&S) -> Vec<String> + 'static,
    {
        self.run_source = Some(Rc::new(f));
    }

    /// The spec answering to `word` (name or alias).
    pub fn spec(&self, word: &str) -> Option<&'static CommandSpec> {
        self.specs.iter().copied().find(|s| s.answers_to(word))
    }

    /// The specs of `group`, in table order.
    pub fn specs_in(&self, group: Group) -> impl Iterator<Item = &'static CommandSpec> + '_ {
        self.specs.iter().copied().filter(move |s| s.group == group)
    }

    /// All specs, in table order.
    pub fn specs(&self) -> &[&'static CommandSpec] {
        &self.specs
    }

    /// Whether the command `name` has a handler (built-ins count as
    /// implemented).
    pub fn is_implemented(&self, name: &str) -> bool {
        match self.spec(name) {
            Some(spec) => BUILTINS.contains(&spec.name) || self.handlers.contains_key(spec.name),
            None => false,
        }
    }

    /// The names the state offers for [`ArgKind::Name`] completion.
    pub fn names(&self, state: &S) -> Vec<String> {
        self.name_source
            .as_ref()
            .map_or_else(Vec::new, |f| f(state))
    }

    /// The run labels the state offers for [`ArgKind::Run`] completion.
    pub fn runs(&self, state: &S) -> Vec<String> {
        self.run_source.as_ref().map_or_else(Vec::new, |f| f(state))
    }
}

/// Commands implemented by the shell itself rather than by a handler.
const BUILTINS: [&str; 3] = ["help", "history", "exit"];

/// Checks `args` (without the command name) against `spec`: the count
/// (including groups of arguments given together, see
/// [`specs::opt_with`]), then `OneOf` words and integers, a last `save`
/// as the `save` argument whatever the count
/// ([`CommandSpec::ends_with_choice`]). The error names
/// what is wrong and shows the usage line, e.g.
/// `wrong # args: should be "memory_stats ?save?"`.
pub fn check_args(spec: &CommandSpec, args: &[String]) -> Result<(), String> {
    let min = spec.args.iter().filter(|a| !a.optional).count();
    let unbounded = spec.args.last().is_some_and(|a| a.repeat);
    if args.len() < min || (!unbounded && args.len() > spec.args.len()) || !spec.groups_whole(args)
    {
        return Err(format!("wrong # args: should be \"{}\"", spec.usage()));
    }
    let choice_at_end = spec.ends_with_choice(args);
    for (i, value) in args.iter().enumerate() {
        let arg = if choice_at_end && i + 1 == args.len() {
            spec.args.last()
        } else {
            spec.arg_at(i)
        };
        let Some(arg) = arg else { continue };
        match arg.kind {
            ArgKind::OneOf(choices) if !choices.contains(&value.as_str()) => {
                return Err(format!(
                    "bad value \"{value}\" for {}: use one of {} (usage: \"{}\")",
                    arg.name,
                    choices.join(", "),
                    spec.usage()
                ));
            }
            ArgKind::Int if value.parse::<u64>().is_err() => {
                return Err(format!(
                    "expected a non-negative integer for {} but got \"{value}\" (usage: \"{}\")",
                    arg.name,
                    spec.usage()
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// A Tcl interpreter with a registry's commands installed over state `S`.
///
/// Owns the interpreter (shared with the REPL's completer via `Rc`), the
/// state, the list of entered commands for `history` and `!N`, and the exit
/// request made by `exit`.
pub struct Shell<S: 'static> {
    interp: Rc<Interp>,
    state: Rc<RefCell<S>>,
    registry: Rc<Registry<S>>,
    history: Rc<RefCell<Vec<String>>>,
    exit_code: Rc<Cell<Option<u8>>>,
}

impl<S: 'static> Shell<S> {
    /// Creates the interpreter and installs every spec of `registry` as a Tcl
    /// command (with its aliases), plus `help`, `history` and `exit`/`quit`.
    /// Tcl's `stdout` is switched to line buffering so that `puts` output
    /// and the shell's own printing stay in order.
    pub fn new(registry: Registry<S>, state: S) -> Result<Shell<S>, TclError> {
        let interp = Rc::new(Interp::new()?);
        let _ = interp.eval("fconfigure stdout -buffering line");
        let shell = Shell {
            interp,
            state: Rc::new(RefCell::new(state)),
            registry: Rc::new(registry),
            history: Rc::new(RefCell::new(Vec::new())),
            exit_code: Rc::new(Cell::new(None)),
        };
        for &spec in shell.registry.specs() {
            for &name in std::iter::once(&spec.name).chain(spec.aliases) {
                shell.install(name, spec)?;
            }
        }
        Ok(shell)
    }

    /// Installs the Tcl command `name` for `spec`.
    fn install(&self, name: &str, spec: &'static CommandSpec) -> Result<(), TclError> {
        match spec.name {
            "help" => {
                let registry = self.registry.clone();
                self.interp.register(name, move |interp, args| {
                    check_args(spec, args)?;
                    help_text(&registry, interp, args.first().map(String::as_str)).map(Value::Str)
                })
            }
            "history" => {
                let history = self.history.clone();
                self.interp.register(name, move |_, args| {
                    check_args(spec, args)?;
                    Ok(Value::Str(history_text(&history.borrow())))
                })
            }
            "exit" => {
                let exit_code = self.exit_code.clone();
                self.interp.register(name, move |_, args| {
                    check_args(spec, args)?;
                    let code = match args.first() {
                        Some(text) => text.parse::<u8>().map_err(|_| {
                            format!("exit codes range from 0 to 255, so {text} cannot be used")
                        })?,
                        None => 0,
                    };
                    exit_code.set(Some(code));
                    Err("exit was called; mapvis is leaving".to_string())
                })
            }
            _ => {
                let handler = self.registry.handlers.get(spec.name).cloned();
                let state = self.state.clone();
                self.interp.register(name, move |_, args| {
                    check_args(spec, args)?;
                    let Some(handler) = &handler else {
                        return Err(format!(
                            "{} is not available in this build of mapvis yet; \
                             type 'help' to see the commands",
                            spec.name
                        ));
                    };
                    if crate::cancel::requested() {
                        return Err(format!(
                            "{} was not started because Ctrl-C was pressed",
                            spec.name
                        ));
                    }
                    let mut state = state.try_borrow_mut().map_err(|_| {
                        format!(
                            "{} cannot run while another mapvis command is running",
                            spec.name
                        )
                    })?;
                    // Named if mapvis runs out of memory meanwhile.
                    crate::oom::set_step(&spec.name);
                    // The one place a command's error becomes text.
                    let result = handler(&mut state, args).map_err(|e| e.user_text());
                    crate::oom::clear_step();
                    result
                })
            }
        }
    }

    /// Lets Ctrl-C abort a running script: installs the SIGINT handler (see
    /// [`interrupt`]) and makes a SIGINT abort the Tcl evaluation with
    /// `interrupted by Ctrl-C` at its next safe point.
    pub fn enable_interrupts(&self) -> Result<(), String> {
        interrupt::install()?;
        let handle = self.interp.install_interrupt(|| {
            crate::cancel::requested().then(|| "interrupted by Ctrl-C".to_string())
        });
        interrupt::set_notifier(move || handle.trigger());
        Ok(())
    }

    /// [`Shell::enable_interrupts`], with a warning when the handler
    /// cannot be installed (Ctrl-C then ends mapvis).
    pub fn enable_interrupts_or_warn(&self) {
        if let Err(e) = self.enable_interrupts() {
            eprintln!("warning: {e}; Ctrl-C will end mapvis instead of the running command");
        }
    }

    /// Whether `script` is a single mapvis pipeline command, which prints
    /// its own human-readable result: the REPL, `mapvis -c` and piped input
    /// then leave its Tcl value unprinted, so every result is shown once.
    /// The value is still the command's result for scripts and
    /// `set x [memory_stats]`. `help` and `history` return their text to be
    /// printed, and a line of several commands prints the last one's value,
    /// as tclsh does.
    pub fn speaks_for_itself(&self, script: &str) -> bool {
        let script = script.trim();
        if script.contains([';', '\n', '[']) {
            return false;
        }
        let Some(word) = script.split_whitespace().next() else {
            return false;
        };
        self.registry
            .spec(word)
            .is_some_and(|spec| self.registry.handlers.contains_key(spec.name))
    }

    /// True when `script` is one call of a command whose value is the text
    /// it shows (`help`, `history`): `mapvis -c help` prints that value,
    /// while a mapvis command's dict, which repeats the table it printed,
    /// stays unprinted outside the prompt.
    pub fn value_is_its_text(&self, script: &str) -> bool {
        let script = script.trim();
        !script.contains([';', '\n', '['])
            && matches!(script.split_whitespace().next(), Some("help" | "history"))
    }

    /// Evaluates `script` at global level, after forgetting any earlier
    /// Ctrl-C.
    pub fn eval(&self, script: &str) -> Result<String, TclError> {
        crate::cancel::clear();
        self.interp.eval(script).map_err(|e| self.suggested(e))
    }

    /// Evaluates a script file; errors carry the file and line.
    pub fn eval_file(&self, path: &Path) -> Result<String, TclError> {
        crate::cancel::clear();
        self.interp.eval_file(path).map_err(|e| self.suggested(e))
    }

    /// `e` with the nearest known commands added when it says a command
    /// does not exist (see [`suggest`]). A script's own `catch` sees Tcl's
    /// message unchanged: only the error shown to the user gets this.
    fn suggested(&self, mut e: TclError) -> TclError {
        if suggest::unknown_command(&e.message).is_some() {
            let names = self.interp.eval("info commands").unwrap_or_default();
            let known: Vec<&str> = names.split_whitespace().collect();
            e.message = suggest::with_suggestion(&e.message, &known);
        }
        e
    }

    /// Sets `argv0`, `argv` (a list) and `argc` as tclsh does.
    pub fn set_args(&self, argv0: &str, args: &[String]) -> Result<(), TclError> {
        self.interp
            .set_var("argv0", &Value::Str(argv0.to_string()))?;
        let list = args.iter().map(|a| Value::Str(a.clone())).collect();
        self.interp.set_var("argv", &Value::List(list))?;
        self.interp.set_var("argc", &Value::Int(args.len() as i64))
    }

    /// Flushes Tcl's `stdout` and `stderr` channels (before leaving).
    pub fn flush(&self) {
        let _ = self.interp.eval("flush stdout; flush stderr");
    }

    /// The exit status requested by `exit`, if it was called. Checked after
    /// every evaluation; `exit` also fails the evaluation so the rest of the
    /// script does not run (unless the script catches it).
    pub fn exit_requested(&self) -> Option<u8> {
        self.exit_code.get()
    }

    /// The interpreter.
    pub fn interp(&self) -> &Rc<Interp> {
        &self.interp
    }

    /// The shared state.
    pub fn state(&self) -> &Rc<RefCell<S>> {
        &self.state
    }

    /// The registry.
    pub fn registry(&self) -> &Rc<Registry<S>> {
        &self.registry
    }

    /// The entered commands, oldest first (what `history` lists; `!N` refers
    /// to entry N counting from 1).
    pub fn history(&self) -> &Rc<RefCell<Vec<String>>> {
        &self.history
    }
}

/// The whole mapvis shell: the spec table, the built-ins and the pipeline
/// commands from [`commands::register_pipeline`], over a fresh
/// [`commands::Session`].
pub fn build_shell() -> Result<Shell<commands::Session>, TclError> {
    let mut registry = Registry::new();
    commands::register_pipeline(&mut registry);
    cmd_heap::register(&mut registry);
    cmd_locality::register(&mut registry);
    cmd_hpcmp::register(&mut registry);
    cmd_runs::register(&mut registry);
    cmd_compare::register(&mut registry);
    Shell::new(registry, commands::Session::default())
}

/// Wraps `text` at `width` columns, indenting every line by `indent`.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent.len() + line.len() + 1 + word.len() > width {
            out.push_str(indent);
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(indent);
        out.push_str(&line);
    }
    out
}

/// The text of `help` (no topic) or `help TOPIC`.
fn help_text<S: 'static>(
    registry: &Registry<S>,
    interp: &Interp,
    topic: Option<&str>,
) -> Result<String, String> {
    let Some(topic) = topic else {
        return Ok(help_overview(registry));
    };
    if topic == "all" {
        return Ok(help_groups(registry, &Group::ALL));
    }
    if let Some(group) = Group::named(topic) {
        return Ok(help_groups(registry, &[group]));
    }
    if let Some(spec) = registry.spec(topic) {
        let mut out = format!("usage: {}\n\n{}", spec.usage(), wrap(spec.help, 76, ""));
        if !spec.aliases.is_empty() {
            out.push_str(&format!("\n\nAliases: {}.", spec.aliases.join(", ")));
        }
        return Ok(out);
    }
    let is_tcl = interp
        .eval(&format!("llength [info commands {{{topic}}}]"))
        .is_ok_and(|n| n == "1");
    if is_tcl && !topic.contains(['{', '}', '*', '?', '[', ']', '\\']) {
        return Ok(format!(
            "{topic} is a Tcl command, not a mapvis one; see \
             https://www.tcl-lang.org/man/tcl8.6/TclCmd/contents.htm"
        ));
    }
    Err(format!(
        "unknown command \"{topic}\": type 'help' to list the mapvis commands"
    ))
}

/// `help` with no argument: every command's name by group, on one screen
/// (a line or two a group at 80 columns), and how to see more.
fn help_overview<S: 'static>(registry: &Registry<S>) -> String {
    let mut out = String::from(
        "Commands by group; 'help GROUP' (the word before each group) lists a group's\n\
         usage and summaries, 'help all' every group's, 'help COMMAND' one command's.\n\
         Every Tcl 8.6 command works too.\n\n",
    );
    const WORD: usize = 13;
    let indent = " ".repeat(WORD + 1);
    for group in Group::ALL {
        let names: Vec<&str> = registry.specs_in(group).map(|s| s.name).collect();
        if names.is_empty() {
            continue;
        }
        let body = wrap(&names.join(", "), 80, &indent);
        out.push_str(&format!("{:WORD$} {}\n", group.word(), body.trim_start()));
    }
    out.trim_end().to_string()
}

/// `help GROUP` and `help all`: each command of `groups` with its usage
/// and summary, the summary wrapped at 80 columns.
fn help_groups<S: 'static>(registry: &Registry<S>, groups: &[Group]) -> String {
    let mut out = String::new();
    // Usage column, then the summary; a usage longer than the column puts
    // its summary on the next line.
    const COLUMN: usize = 24;
    let indent = " ".repeat(2 + COLUMN + 2);
    for &group in groups {
        let specs: Vec<_> = registry.specs_in(group).collect();
        if specs.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{} ('help {}')\n", group.title(), group.word()));
        for spec in specs {
            let mut summary = spec.summary().to_string();
            if !spec.aliases.is_empty() {
                summary.push_str(&format!(" Also: {}.", spec.aliases.join(", ")));
            }
            let usage = spec.usage();
            let body = wrap(&summary, 80, &indent);
            if usage.len() <= COLUMN {
                out.push_str(&format!("  {usage:COLUMN$}  {}\n", body.trim_start()));
            } else {
                out.push_str(&format!("  {usage}\n{body}\n"));
            }
        }
    }
    out.trim().to_string()
}

/// The text of `history`: numbered entries, continuation lines indented.
fn history_text(history: &[String]) -> String {
    let width = history.len().to_string().len();
    history
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let entry = entry.replace('\n', &format!("\n  {:width$}  ", ""));
            format!("  {:>width$}  {entry}", i + 1)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command of the spec table has a handler in the whole shell
    /// (the converse holds by construction: `Registry::add` refuses a
    /// handler whose command has no spec, and building the shell here would
    /// panic).
    #[test]
    fn every_spec_has_a_handler() {
        let sh = build_shell().unwrap();
        let missing: Vec<&str> = specs::SPECS
            .iter()
            .map(|s| s.name)
            .filter(|n| !sh.registry().is_implemented(n))
            .collect();
        assert!(
            missing.is_empty(),
            "commands without a handler: {missing:?}"
        );
    }

    /// A handler's doc comment that starts with a command's usage
    /// (`` `memory_stats ?save?`: ... ``) gives it exactly as `help` does,
    /// so the two cannot drift apart.
    #[test]
    fn handler_docs_give_the_spec_usage() {
        let files = [
            ("commands.rs", include_str!("commands.rs")),
            ("cmd_compare.rs", include_str!("cmd_compare.rs")),
            ("cmd_heap.rs", include_str!("cmd_heap.rs")),
            ("cmd_hpcmp.rs", include_str!("cmd_hpcmp.rs")),
            ("cmd_locality.rs", include_str!("cmd_locality.rs")),
            ("cmd_runs.rs", include_str!("cmd_runs.rs")),
        ];
        let mut checked = 0;
        let mut wrong = Vec::new();
        for (file, text) in files {
            let mut doc: Vec<&str> = Vec::new();
            for line in text.lines() {
                let t = line.trim_start();
                if let Some(d) = t.strip_prefix("///") {
                    doc.push(d.trim());
                    continue;
                }
                if t.starts_with("fn ") && !doc.is_empty() {
                    let joined = doc.join(" ");
                    let usage = joined
                        .strip_prefix('`')
                        .and_then(|r| r.split('`').next())
                        .unwrap_or("");
                    let word = usage.split(' ').next().unwrap_or("");
                    if let Some(spec) = specs::SPECS.iter().find(|s| s.name == word) {
                        checked += 1;
                        if usage != spec.usage() {
                            wrong.push(format!("{file}: `{usage}`, help says `{}`", spec.usage()));
                        }
                    }
                }
                if !t.starts_with("#[") {
                    doc.clear();
                }
            }
        }
        assert!(checked > 30, "too few handler docs read: {checked}");
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[derive(Default)]
    struct Counter {
        calls: Vec<Vec<String>>,
    }

    fn shell() -> Shell<Counter> {
        let mut registry = Registry::new();
        registry.add(
            "2d_memory_access_pattern",
            |st: &mut Counter, args: &[String]| {
                st.calls.push(args.to_vec());
                Ok(Value::Int(st.calls.len() as i64))
            },
        );
        registry.add("run_gleipnir", |_: &mut Counter, _: &[String]| {
            panic!("boom")
        });
        registry.set_name_source(|st: &Counter| vec![format!("a{}", st.calls.len())]);
        Shell::new(registry, Counter::default()).unwrap()
    }

    #[test]
    fn handlers_aliases_and_checks() {
        let sh = shell();
        assert_eq!(sh.eval("2d_memory_access_pattern m 4 8").unwrap(), "1");
        assert_eq!(
            sh.eval("2darray_memory_access_pattern m 4 8 save").unwrap(),
            "2"
        );
        assert_eq!(sh.state().borrow().calls[1], ["m", "4", "8", "save"]);
        let err = sh.eval("2d_memory_access_pattern").unwrap_err();
        assert_eq!(
            err.message,
            "wrong # args: should be \"2d_memory_access_pattern NAME ?COLS? ?TYPEBYTES? ?save?\""
        );
        // COLS and TYPEBYTES go together; a last `save` is not one of them.
        let usage =
            "wrong # args: should be \"2d_memory_access_pattern NAME ?COLS? ?TYPEBYTES? ?save?\"";
        for half in ["m 4", "m 4 save"] {
            let err = sh
                .eval(&format!("2d_memory_access_pattern {half}"))
                .unwrap_err();
            assert_eq!(err.message, usage, "{half}");
        }
        let err = sh.eval("3d_memory_access_pattern m 4 4 save").unwrap_err();
        assert!(err.message.starts_with("wrong # args"), "{}", err.message);
        assert_eq!(sh.eval("2d_memory_access_pattern m save").unwrap(), "3");
        assert_eq!(sh.state().borrow().calls[2], ["m", "save"]);
        let err = sh.eval("dump_trace t.mvt x").unwrap_err();
        assert!(
            err.message.contains("non-negative integer for LIMIT"),
            "{}",
            err.message
        );
        let err = sh.eval("2d_memory_access_pattern m 4 8 keep").unwrap_err();
        assert!(err.message.contains("use one of save"), "{}", err.message);
        // A last `save` is the `save` argument whatever the count, so
        // `alloc_sites save` leaves N out rather than being a bad N.
        let err = sh.eval("alloc_sites save").unwrap_err();
        assert!(err.message.contains("not available"), "{}", err.message);
        let err = sh.eval("alloc_sites many").unwrap_err();
        assert!(err.message.contains("integer for N"), "{}", err.message);
        let err = sh.eval("memory_stats").unwrap_err();
        assert!(err.message.contains("not available"), "{}", err.message);
        let err = sh.eval("run_gleipnir").unwrap_err();
        assert!(err.message.contains("panicked (boom)"), "{}", err.message);
        assert_eq!(sh.registry().names(&sh.state().borrow()), ["a3"]);
        assert!(sh
            .registry()
            .is_implemented("2darray_memory_access_pattern"));
        assert!(!sh.registry().is_implemented("memory_stats"));
    }

    #[test]
    fn help_history_exit() {
        let sh = shell();
        // One screen: at most 40 lines of at most 80 columns, naming every
        // command under its group's word.
        let overview = sh.eval("help").unwrap();
        assert!(overview.lines().count() <= 40, "{overview}");
        assert!(
            overview.lines().all(|l| l.chars().count() <= 80),
            "{overview}"
        );
        let registry = Registry::<()>::new();
        for spec in registry.specs() {
            assert!(
                overview.contains(spec.name),
                "{} missing in {overview}",
                spec.name
            );
        }
        for g in Group::ALL {
            assert!(
                overview.contains(&format!("\n{:13} ", g.word())),
                "{overview}"
            );
            assert!(
                registry.spec(&g.word()).is_none(),
                "{} is a command",
                g.word()
            );
            let one = sh.eval(&format!("help {}", g.word())).unwrap();
            assert!(one.starts_with(g.title()), "{one}");
        }
        assert!(sh.eval("help caches").unwrap().contains("set_cache"));
        assert!(!sh.eval("help caches").unwrap().contains("heap_profile"));
        let all = sh.eval("help all").unwrap();
        for title in [
            "Setup",
            "Pipeline",
            "Figures",
            "Housekeeping",
            "Valgrind tools",
            "Caches and locality",
            "Comparing runs",
            "Heap",
            "Exports",
        ] {
            assert!(
                all.contains(&format!("\n{title} ('help ")) || all.starts_with(title),
                "{title} missing in {all}"
            );
        }
        assert!(all.contains("dump_trace ?FILE? ?LIMIT?"));
        let one = sh.eval("help quit").unwrap();
        assert!(one.starts_with("usage: exit ?CODE?\n"), "{one}");
        assert!(sh
            .eval("help nosuchcmd")
            .unwrap_err()
            .message
            .contains("unknown command"));
        assert!(sh.eval("help puts").unwrap().contains("Tcl command"));
        sh.history()
            .borrow_mut()
            .extend(["a".to_string(), "b\nc".to_string()]);
        assert_eq!(sh.eval("history").unwrap(), "  1  a\n  2  b\n     c");
        assert_eq!(sh.exit_requested(), None);
        assert!(sh.eval("exit 3").is_err());
        assert_eq!(sh.exit_requested(), Some(3));
    }

    #[test]
    fn build_shell_installs_everything() {
        let sh = build_shell().unwrap();
        for spec in specs::SPECS {
            let n = sh
                .eval(&format!("llength [info commands {}]", spec.name))
                .unwrap();
            assert_eq!(n, "1", "{} not installed", spec.name);
            // Every command of the spec table runs something: a handler of
            // its own or a Tcl builtin.
            assert!(
                sh.registry().is_implemented(spec.name),
                "{} has no handler",
                spec.name
            );
        }
    }
}
