use std::process::ExitCode;

fn main() -> ExitCode {
    mapvis::shell::cli::main()
}
