//! The shell: an embedded Tcl 8.6 interpreter behind a rustyline REPL.

pub mod cli;
