#![deny(unsafe_code)]
use std::process::ExitCode;

/// The system allocator, noting a failed request so that an abort for want
/// of memory names the step (see `mapvis::oom`).
#[global_allocator]
static ALLOCATOR: mapvis::oom::Reporting = mapvis::oom::Reporting;

fn main() -> ExitCode {
    mapvis::oom::install();
    mapvis::oom::keep_freed_memory();
    mapvis::shell::cli::main()
}
