//! Command-line entry point.
use std::process::ExitCode;

/// Runs the `mapvis` binary.
pub fn main() -> ExitCode {
    ExitCode::SUCCESS
}
