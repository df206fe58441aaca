//! Command-line entry point.
//!
//! * `mapvis`: the interactive prompt when stdin is a terminal; otherwise the
//!   commands are read from stdin without a prompt (exit status 1 if any
//!   failed).
//! * `mapvis SCRIPT.tcl [ARG ...]`: runs the script with `argv0`, `argv` and
//!   `argc` set; on error prints `error: MESSAGE` and `  at FILE:LINE`.
//! * `mapvis -c 'CMD; CMD' [ARG ...]`: runs the commands. As in a script,
//!   only what the commands print is shown, not the last command's value
//!   (a mapvis command's dict repeats the table it printed); `help` and
//!   `history`, whose value is their text, are shown.
//! * `--echo` before `-c` or a script also prints the last command's value.
//! * `mapvis --help`, `mapvis --version`.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use super::{build_shell, repl, Shell, TclError};

/// The text of `mapvis --help`.
fn usage() -> String {
    format!(
        "mapvis {}: see how your C program touches memory.

Usage:
  mapvis                      interactive shell (reads commands from stdin
                              when it is not a terminal)
  mapvis SCRIPT.tcl [ARG ...] run a Tcl script; ARGs are in $argv
  mapvis -c 'CMD; CMD' [ARG ...]
                              run the commands; only what they print is
                              shown, as in a script
  mapvis --echo -c '...'      (or --echo SCRIPT.tcl) print the last
                              command's value as well
  mapvis --dump-trace FILE [LIMIT]
                              print a binary trace as text (all events, or
                              the first LIMIT)
  mapvis --install-tool       install the Valgrind tool and print the folder
                              to use as VALGRIND_LIB (for running
                              valgrind --tool=mapvis by hand)
  mapvis --help               show this help
  mapvis --version            show the version

Inside the shell, type 'help' for the list of commands.",
        env!("CARGO_PKG_VERSION")
    )
}

/// Runs the `mapvis` binary.
pub fn main() -> ExitCode {
    let args: Vec<String> = match std::env::args_os()
        .skip(1)
        .map(|a| a.into_string())
        .collect::<Result<_, _>>()
    {
        Ok(a) => a,
        Err(bad) => {
            eprintln!(
                "error: the argument {} is not valid UTF-8; rename the file or pass another value",
                bad.to_string_lossy()
            );
            return ExitCode::from(2);
        }
    };
    let (echo, args) = match args.split_first() {
        Some((first, rest)) if first == "--echo" => (true, rest.to_vec()),
        _ => (false, args),
    };
    match args.first().map(String::as_str) {
        Some("--help" | "-h") => {
            repl::say(&usage());
            ExitCode::SUCCESS
        }
        Some("--version" | "-V") => {
            repl::say(&format!("mapvis {}", env!("CARGO_PKG_VERSION")));
            ExitCode::SUCCESS
        }
        Some("--dump-trace") => {
            let Some(file) = args.get(1) else {
                eprintln!("error: --dump-trace needs a trace file, e.g. mapvis --dump-trace .mapvis/trace.mvt");
                return ExitCode::from(2);
            };
            let limit = match args.get(2).map(|l| l.parse::<u64>()) {
                None => None,
                Some(Ok(l)) => Some(l),
                Some(Err(_)) => {
                    eprintln!("error: the LIMIT of --dump-trace must be a number of events");
                    return ExitCode::from(2);
                }
            };
            let stdout = std::io::stdout();
            match crate::trace::dump(std::path::Path::new(file), limit, &mut stdout.lock()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Some("--install-tool") => {
            let installed =
                crate::trace::find_valgrind(None).and_then(|v| crate::trace::install_tool(&v));
            match installed {
                Ok(dir) => {
                    println!("{}", dir.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Some("-c") => match args.get(1) {
            Some(script) => with_shell("mapvis", &args[2..], |shell| {
                shell.enable_interrupts_or_warn();
                run_command(shell, script, echo)
            }),
            None => {
                eprintln!("error: -c needs the commands to run, e.g. mapvis -c 'help'");
                ExitCode::from(2)
            }
        },
        Some(opt) if opt.starts_with('-') && opt != "-" => {
            eprintln!("error: unknown option {opt}; run 'mapvis --help' for the usage");
            ExitCode::from(2)
        }
        Some(script) => with_shell(script, &args[1..], |shell| {
            shell.enable_interrupts_or_warn();
            run_script(shell, script, echo)
        }),
        None => with_shell("mapvis", &[], |shell| {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                // Sets up Ctrl-C itself, after the line editor.
                repl::run_interactive(shell)
            } else {
                shell.enable_interrupts_or_warn();
                repl::run_stream(shell, stdin.lock())
            }
        }),
    }
}

/// Builds the shell and sets the arguments, then runs `f`.
fn with_shell<F>(argv0: &str, args: &[String], f: F) -> ExitCode
where
    F: FnOnce(&Shell<super::commands::Session>) -> ExitCode,
{
    let shell = match build_shell() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot start the Tcl interpreter: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = shell.set_args(argv0, args) {
        eprintln!("error: cannot set argv: {e}");
        return ExitCode::FAILURE;
    }
    let code = f(&shell);
    shell.flush();
    code
}

/// The exit status after an interrupted or failed evaluation.
fn failure_code() -> ExitCode {
    if crate::cancel::requested() {
        ExitCode::from(130)
    } else {
        ExitCode::FAILURE
    }
}

/// `mapvis -c`: evaluates `script`; prints its non-empty value only when
/// `echo` is set or the value is the text of `help`/`history`.
fn run_command<S>(shell: &Shell<S>, script: &str, echo: bool) -> ExitCode {
    let result = shell.eval(script);
    if let Some(code) = shell.exit_requested() {
        return ExitCode::from(code);
    }
    match result {
        Ok(text) => {
            if echo || shell.value_is_its_text(script) {
                echo_value(&text);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}", super::text::terminal_safe(&e.message));
            failure_code()
        }
    }
}

/// Prints a command's value unless it is empty, with control characters
/// escaped (it may hold names from a trace).
fn echo_value(text: &str) {
    if !text.is_empty() {
        repl::say(&super::text::terminal_safe(text));
    }
}

/// `mapvis SCRIPT.tcl`: runs the file; reports `FILE:LINE` on error. With
/// `echo`, prints the value of the script's last command.
fn run_script<S>(shell: &Shell<S>, script: &str, echo: bool) -> ExitCode {
    let result = shell.eval_file(Path::new(script));
    if let Some(code) = shell.exit_requested() {
        return ExitCode::from(code);
    }
    match result {
        Ok(text) => {
            if echo {
                echo_value(&text);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            report_script_error(&e);
            failure_code()
        }
    }
}

/// Prints a script error and where it happened.
fn report_script_error(e: &TclError) {
    eprintln!("error: {}", super::text::terminal_safe(&e.message));
    if let Some((file, line)) = &e.location {
        eprintln!("  at {}:{line}", file.display());
    }
}
