//! Runs the Tcl test suite (`tests/tcl/*.tcl`) and the command-line modes
//! through the real `mapvis` binary.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn mapvis() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mapvis"));
    cmd.env_remove("MAPVIS_HISTORY");
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn run_with_stdin(args: &[&str], input: &str) -> Output {
    let mut child = mapvis()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mapvis starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn tcl_suite_passes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tcl");
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tcl"))
        .collect();
    scripts.sort();
    assert!(
        scripts.len() >= 3,
        "expected the Tcl suite in {}",
        dir.display()
    );
    for script in &scripts {
        let out = mapvis()
            .arg(script)
            .args(["alpha", "b c"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = text(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(", 0 failed"),
            "{} failed ({}):\n{stdout}\n{}",
            script.display(),
            out.status,
            text(&out.stderr)
        );
    }
}

#[test]
fn failing_script_reports_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("broken.tcl");
    std::fs::write(
        &script,
        "set a 1\nproc f {} {\n    error \"inner trouble\"\n}\n\nf\nputs unreachable\n",
    )
    .unwrap();
    let out = mapvis().arg(&script).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("error: inner trouble"), "{stderr}");
    assert!(
        stderr.contains(&format!("  at {}:6", script.display())),
        "{stderr}"
    );
    assert!(!text(&out.stdout).contains("unreachable"));

    // A wrong # args in the middle of a script reports its own line.
    std::fs::write(&script, "puts ok\nmemory_stats a b\n").unwrap();
    let out = mapvis().arg(&script).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("wrong # args: should be \"memory_stats ?save?\""),
        "{stderr}"
    );
    assert!(stderr.contains("broken.tcl:2"), "{stderr}");
}

#[test]
fn missing_script_is_an_error() {
    let out = mapvis().arg("/nonexistent/dir/x.tcl").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("cannot read script"));
}

#[test]
fn exit_sets_the_status() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("exit.tcl");
    std::fs::write(&script, "puts before\nexit 3\nputs after\n").unwrap();
    let out = mapvis().arg(&script).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(text(&out.stdout), "before\n");
}

#[test]
fn dash_c_runs_commands() {
    let out = mapvis()
        .args([
            "--echo",
            "-c",
            "set x 20; expr {$x + [llength $argv]}",
            "p",
            "q",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "22\n");
    let out = mapvis().args(["-c", "set_mem_alloc"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "error: wrong # args: should be \"set_mem_alloc H|S|G|all\"\n"
    );
    let out = mapvis().args(["-c", "quit 4"]).output().unwrap();
    assert_eq!(out.status.code(), Some(4));
}

#[test]
fn stdin_mode_evaluates_complete_commands() {
    let out = run_with_stdin(
        &[],
        "proc twice {x} {\n    return [expr {2 * $x}]\n}\ntwice 21\nputs -nonewline hi\nputs !\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "42\nhi!\n");

    let out = run_with_stdin(&[], "no_such_cmd\nexpr 1+1\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "2\n");
    assert!(text(&out.stderr).contains("error: invalid command name \"no_such_cmd\""));
}

#[test]
fn help_and_version_flags() {
    let out = mapvis().arg("--version").output().unwrap();
    assert_eq!(
        text(&out.stdout),
        format!("mapvis {}\n", env!("CARGO_PKG_VERSION"))
    );
    let out = mapvis().arg("--help").output().unwrap();
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("mapvis SCRIPT.tcl [ARG ...]"));
    let out = mapvis().arg("--bogus").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown option --bogus"));
}
