//! The shell prints each result once: a mapvis command prints its human
//! readable result itself, and its Tcl value is kept for scripts, not
//! printed again.

use std::io::Write;
use std::process::{Command, Stdio};

fn mapvis(home: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mapvis"));
    cmd.current_dir(home)
        .env("HOME", home)
        .env("MAPVIS_HISTORY", home.join("history"));
    cmd
}

fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().expect("mapvis runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_command_given_with_dash_c_prints_its_result_once() {
    let home = tempfile::tempdir().unwrap();
    let out = stdout_of(mapvis(home.path()).args(["-c", "set_mem_alloc H"]));
    assert_eq!(out, "memory kind: H (heap blocks)\n");
}

#[test]
fn piped_commands_print_their_results_once() {
    let home = tempfile::tempdir().unwrap();
    let mut child = mapvis(home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"set_mem_alloc G\nset_mem_alloc all\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("memory kind: G"), "{text}");
    assert!(lines[1].starts_with("memory kind: all"), "{text}");
}

#[test]
fn values_still_reach_scripts_and_echo_prints_tcl_results() {
    let home = tempfile::tempdir().unwrap();
    let script = "set x [set_mem_alloc S]; set y \"value=$x\"";
    let out = stdout_of(mapvis(home.path()).args(["--echo", "-c", script]));
    assert_eq!(out, "memory kind: S (stack variables)\nvalue=S\n");
    // As in a script, -c prints only what the commands print; --echo adds
    // the last value.
    let out = stdout_of(mapvis(home.path()).args(["-c", "expr {6 * 7}"]));
    assert_eq!(out, "");
    let out = stdout_of(mapvis(home.path()).args(["--echo", "-c", "expr {6 * 7}"]));
    assert_eq!(out, "42\n");
    let out = stdout_of(mapvis(home.path()).args(["-c", "help set_mem_alloc"]));
    assert!(out.contains("set_mem_alloc H|S|G|all"), "{out}");
}
