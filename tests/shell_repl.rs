//! Drives the interactive shell in a pseudo-terminal.

use std::path::Path;
use std::process::Command;

use rexpect::process::wait::WaitStatus;
use rexpect::session::{spawn_command, PtySession};

const TIMEOUT_MS: u64 = 15_000;
const PROMPT: &str = "mapvis:~> ";

/// Sends one line, waits for `expected` in the output and then for the next
/// prompt. Waiting matters: rustyline drops keys typed ahead of a prompt.
fn run(p: &mut PtySession, line: &str, expected: &str) -> String {
    p.send_line(line).unwrap();
    let before = p
        .exp_string(expected)
        .unwrap_or_else(|e| panic!("after {line:?}, expected {expected:?}: {e}"));
    p.exp_string(PROMPT).unwrap();
    before
}

/// Starts `mapvis` in a pty with HOME, the working folder and the history
/// file inside `home`, and waits for the banner and the prompt.
fn start(home: &Path) -> PtySession {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mapvis"));
    cmd.current_dir(home)
        .env("HOME", home)
        .env("MAPVIS_HISTORY", home.join("history"))
        .env("TERM", "xterm");
    let mut p = spawn_command(cmd, Some(TIMEOUT_MS)).expect("mapvis starts in a pty");
    p.exp_string(&format!(
        "mapvis {}: see how your C program touches memory. Type 'help' for commands, 'exit' to leave.",
        env!("CARGO_PKG_VERSION")
    ))
    .expect("banner");
    p.exp_string(PROMPT).expect("prompt with the folder");
    p
}

/// Ends the session with Ctrl-D and checks the exit status is 0.
fn finish(mut p: PtySession) {
    p.send_control('d').unwrap();
    p.exp_eof().expect("mapvis leaves on Ctrl-D");
    match p.process().wait().unwrap() {
        WaitStatus::Exited(_, code) => assert_eq!(code, 0),
        other => panic!("unexpected end of mapvis: {other:?}"),
    }
}

#[test]
fn completes_commands_and_paths() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("unique_script_xyz.tcl"),
        "string repeat zq 3\n",
    )
    .unwrap();
    let mut p = start(home.path());

    // memory_st<TAB> becomes memory_stats, which then runs.
    p.send("memory_st\t").unwrap();
    p.flush().unwrap();
    p.exp_string("memory_stats").unwrap();
    run(&mut p, "", "there is no analysis yet");

    // A path argument completes from the working folder.
    p.send("source unique_scr\t").unwrap();
    p.flush().unwrap();
    p.exp_string("unique_script_xyz.tcl").unwrap();
    run(&mut p, "", "zqzqzq");

    // Spec-driven choices.
    p.send("set_mem_alloc al\t").unwrap();
    p.flush().unwrap();
    run(&mut p, "", "memory kind: all");
    finish(p);
}

#[test]
fn multi_line_input() {
    let home = tempfile::tempdir().unwrap();
    let mut p = start(home.path());
    p.send_line("proc f {} {").unwrap();
    p.send_line("return [string repeat ab 3]").unwrap();
    p.send_line("}").unwrap();
    // The continuation lines are redrawn after the prompt; an empty prompt
    // (followed by a cursor move) means the definition was accepted.
    p.exp_string(&format!("{PROMPT}\r")).unwrap();
    run(&mut p, "f", "ababab");
    finish(p);
}

#[test]
fn history_persists_across_sessions() {
    let home = tempfile::tempdir().unwrap();
    let mut p = start(home.path());
    run(&mut p, "set marker [string repeat hh 2]", "hhhh");
    run(&mut p, "string toupper kkk", "KKK");
    finish(p);
    let saved = std::fs::read_to_string(home.path().join("history")).unwrap();
    assert!(saved.contains("string toupper kkk"), "{saved}");

    let mut p = start(home.path());
    let listed = run(&mut p, "history", "2  string toupper kkk");
    assert!(
        listed.contains("1  set marker [string repeat hh 2]"),
        "{listed}"
    );
    run(&mut p, "!1", "hhhh");
    run(&mut p, "!!", "hhhh");
    run(&mut p, "!99", "error: !99 refers to no command");
    // Up arrow recalls the last entry (the expanded !!).
    p.send("\x1b[A").unwrap();
    p.flush().unwrap();
    run(&mut p, "", "hhhh");
    finish(p);
}

#[test]
fn ctrl_c_keeps_the_shell_alive() {
    let home = tempfile::tempdir().unwrap();
    let mut p = start(home.path());
    // At the prompt: the line is dropped.
    p.send("no_such_thing").unwrap();
    p.send_control('c').unwrap();
    p.exp_string(PROMPT).unwrap();
    let before = run(&mut p, "expr {3 * 5}", "15");
    assert!(!before.contains("invalid command name"), "{before}");
    // While a command runs: the command stops, the shell stays.
    p.send_line("puts [string toupper started]; while 1 {incr spin}")
        .unwrap();
    p.exp_string("STARTED").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    p.send_control('c').unwrap();
    p.exp_string("error: interrupted by Ctrl-C").unwrap();
    p.exp_string(PROMPT).unwrap();
    run(
        &mut p,
        "expr {$spin > 1000 ? \"s[string repeat p 2]un\" : 0}",
        "sppun",
    );
    // Errors are printed and the shell carries on.
    run(
        &mut p,
        "set_mem_alloc",
        "error: wrong # args: should be \"set_mem_alloc H|S|G|all\"",
    );
    p.send_line("exit 0").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn ctrl_c_during_a_trace_keeps_the_shell_and_the_trace() {
    let home = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/trace_sigint.c");
    let mut p = start(home.path());
    run(
        &mut p,
        &format!("compile_exe {}", src.display()),
        "compiled and loaded",
    );
    // The program prints "running" once it is looping inside the region.
    p.send_line("run_gleipnir").unwrap();
    p.exp_string("running").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    p.send_control('c').unwrap();
    p.exp_string("what was traced so far is kept").unwrap();
    p.exp_string("signal 2 (SIGINT)").unwrap();
    p.exp_string(PROMPT).unwrap();
    // The shell is alive and the partial trace analyses.
    run(&mut p, "set_mem_alloc H", "memory kind: H");
    run(
        &mut p,
        "memory_trace_analysis",
        "accesses by 1 thread in 1 region;",
    );
    run(&mut p, "expr {6 * 7}", "42");
    p.send_line("exit 0").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn array_names_complete_after_an_analysis() {
    let home = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/rowcol.c");
    let mut p = start(home.path());
    run(
        &mut p,
        &format!("compile_exe {}", src.display()),
        "compiled and loaded",
    );
    run(&mut p, "set_mem_alloc H", "memory kind: H");
    run(&mut p, "run_gleipnir", "in 1 region were recorded");
    run(&mut p, "memory_trace_analysis", "accesses by 1 thread in");
    // `ar<TAB>` completes to the heap array's name, which then draws.
    p.send("2d_memory_access_pattern ar\t").unwrap();
    p.flush().unwrap();
    p.exp_string("2d_memory_access_pattern arr").unwrap();
    run(&mut p, " 16 4", "2d_memory_access_pattern_arr.html");
    // Run labels complete after use_run, drop_run, compare_runs and
    // plot_runs.
    run(&mut p, "save_run base16", "kept run base16");
    for cmd in [
        "use_run",
        "drop_run",
        "compare_runs base16",
        "plot_runs misses_L1",
    ] {
        p.send(&format!("{cmd} bas\t")).unwrap();
        p.flush().unwrap();
        p.exp_string(&format!("{cmd} base16"))
            .unwrap_or_else(|e| panic!("{cmd}: no run label completed: {e}"));
        // Leave the line without running it.
        p.send_control('c').unwrap();
        p.exp_string(PROMPT).unwrap();
    }
    // After a Tcl `cd` into a folder without an analysis or runs, nothing
    // of the previous folder is offered: the command will read the new one.
    const SUB_PROMPT: &str = "mapvis:~/sub> ";
    p.send_line("file mkdir sub; cd sub").unwrap();
    p.exp_string(SUB_PROMPT).unwrap();
    p.send("2d_memory_access_pattern ar\t").unwrap();
    p.flush().unwrap();
    p.send_line(" 16 4").unwrap();
    // A Tab with nothing to offer rings the bell (BEL) in the echo.
    let echoed = p
        .exp_string("there is no analysis yet")
        .unwrap()
        .replace('\x07', "");
    assert!(echoed.contains("pattern ar 16 4"), "{echoed:?}");
    assert!(
        !echoed.contains("arr"),
        "the old folder's array: {echoed:?}"
    );
    p.exp_string(SUB_PROMPT).unwrap();
    p.send("use_run bas\t").unwrap();
    p.flush().unwrap();
    p.send_line("").unwrap();
    let echoed = p.exp_string("there is no run").unwrap();
    assert!(
        !echoed.contains("base16"),
        "the old folder's run: {echoed:?}"
    );
    p.exp_string(SUB_PROMPT).unwrap();
    p.send_line("cd ..").unwrap();
    p.exp_string(PROMPT).unwrap();
    p.send_line("exit 0").unwrap();
    p.exp_eof().unwrap();

    // A later session in the same folder completes the saved analysis's
    // array names before any command has loaded it.
    let mut p = start(home.path());
    p.send("3d_memory_access_pattern ar\t").unwrap();
    p.flush().unwrap();
    p.exp_string("3d_memory_access_pattern arr").unwrap();
    run(&mut p, " 4 4 4", "3d_memory_access_pattern_arr.html");
    p.send_line("exit 0").unwrap();
    p.exp_eof().unwrap();
}

/// Lines typed ahead while a command runs, or pasted at once, all run, in
/// order.
#[test]
fn lines_typed_ahead_are_kept() {
    let home = tempfile::tempdir().unwrap();
    let mut p = start(home.path());
    // The first line keeps the shell busy while the others are typed.
    p.send_line("after 700; set a 20").unwrap();
    p.send_line("set b 22").unwrap();
    p.send_line("set c [expr {$a + $b}]").unwrap();
    p.send_line("puts \"sum=[string repeat $c 2]\"").unwrap();
    p.exp_string("sum=4242").unwrap();
    p.exp_string(PROMPT).unwrap();
    // Pasted in one write, while the prompt is idle.
    p.send("set d 1\nincr d\nputs \"d=[expr {$d * 21}]\"\n")
        .unwrap();
    p.flush().unwrap();
    p.exp_string("d=42").unwrap();
    finish(p);
}

/// One Ctrl-C, as a terminal sends it (0x03 on the pty: SIGINT to the
/// foreground process group), while a long analysis runs: the analysis
/// stops at once and says so, keeps what it analysed, and the shell runs
/// the next command. The traced program makes about 112 M accesses, some
/// four seconds of analysis on a quiet machine; the Ctrl-C goes as soon as
/// the first progress line (after one second) shows the analysis running.
#[test]
fn the_first_ctrl_c_stops_a_long_analysis() {
    let home = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/matmul.c");
    let mut p = start(home.path());
    run(
        &mut p,
        &format!("compile_exe {}", src.display()),
        "compiled and loaded",
    );
    run(&mut p, "set_arguments ijk 200", "200");
    p.send_line("run_gleipnir").unwrap();
    p.exp_string("accesses").unwrap();
    p.exp_string(PROMPT).unwrap();
    p.send_line("memory_trace_analysis").unwrap();
    p.exp_string("Ctrl-C stops it").unwrap();
    p.exp_string("M accesses analysed").unwrap();
    p.send_control('c').unwrap();
    // Without the stop, the analysis would run to its end and print no
    // such note.
    p.exp_string("the analysis was interrupted after").unwrap();
    p.exp_string(PROMPT).unwrap();
    // The shell carries on: the next command runs, with the partial result.
    run(&mut p, "expr {6 * 7}", "42");
    run(&mut p, "set_mem_alloc H", "memory kind: H");
    p.send_line("exit 0").unwrap();
    p.exp_eof().unwrap();
}

/// A mistyped command is answered with the nearest commands the shell
/// knows, not only Tcl's bare `invalid command name` (worked by hand:
/// `cache_stat` is one letter short of `cache_stats`; `frobnicate` is
/// near nothing, so the answer says where the commands are listed). A
/// script's own `catch` still gets Tcl's message unchanged.
#[test]
fn a_mistyped_command_gets_the_nearest_names() {
    let home = tempfile::tempdir().unwrap();
    let mut p = start(home.path());
    run(
        &mut p,
        "cache_stat",
        "error: invalid command name \"cache_stat\"; did you mean cache_stats? ('help' lists mapvis's commands by group)",
    );
    run(
        &mut p,
        "frobnicate",
        "error: invalid command name \"frobnicate\"; 'help' lists mapvis's commands by group.",
    );
    run(
        &mut p,
        "catch {cache_stat} m; set m",
        "\r\ninvalid command name \"cache_stat\"\r\n",
    );
    finish(p);
}

/// `set_cache` on one level says that level's change in one line, not the
/// whole model again (worked by hand: 4 KiB in 4 ways of 64-byte lines is
/// 16 sets); with no argument it prints the whole model, with its policy.
#[test]
fn set_cache_says_only_what_changed() {
    let home = tempfile::tempdir().unwrap();
    let mut p = start(home.path());
    for (line, says) in [
        (
            "set_cache L1 4K 4 64",
            "cache: L1 4 KiB, 4-way, 64-byte lines (16 sets)",
        ),
        ("set_cache L2 off", "cache: L2 off; levels now L1"),
    ] {
        p.send_line(line).unwrap();
        p.exp_string(says)
            .unwrap_or_else(|e| panic!("after {line:?}, expected {says:?}: {e}"));
        let rest = p.exp_string(PROMPT).unwrap();
        assert!(!rest.contains("LRU"), "{line}: the model again: {rest:?}");
    }
    run(&mut p, "set_cache", "LRU, write-allocate");
    finish(p);
}

/// `help` fits one screen in the terminal (at most 40 lines), and `help
/// GROUP` lists that group's commands with their usage.
#[test]
fn help_fits_one_screen_and_opens_by_group() {
    let home = tempfile::tempdir().unwrap();
    let mut p = start(home.path());
    p.send_line("help").unwrap();
    p.exp_string("Commands by group").unwrap();
    let listing = p.exp_string(PROMPT).unwrap();
    let lines = listing.lines().count();
    assert!(lines <= 40, "{lines} lines:\n{listing}");
    assert!(listing.contains("set_cache"), "{listing}");
    run(&mut p, "help caches", "set_cache ?LEVEL");
    finish(p);
}

/// Many notes of one kind print as one line with a count, and `notes`
/// lists them all. tests/c/many_notes.c passes six blocks' addresses to a
/// function instead of storing them (worked from the source: one note per
/// allocating line, six of one kind): the analysis prints two of them and
/// "4 more notes like the one above", and `notes` numbers all six, each
/// naming its own line.
#[test]
fn notes_of_one_kind_print_once_with_a_count_and_notes_lists_them() {
    let home = tempfile::tempdir().unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/many_notes.c"),
        home.path().join("n.c"),
    )
    .unwrap();
    let mut p = start(home.path());
    run(&mut p, "compile_exe n.c", "compiled and loaded");
    p.send_line("run_gleipnir").unwrap();
    p.exp_string("accesses in 1 region were recorded").unwrap();
    p.exp_string(PROMPT).unwrap();
    p.send_line("memory_trace_analysis").unwrap();
    let printed = p.exp_string("accesses by 1 thread").unwrap();
    p.exp_string(PROMPT).unwrap();
    let passed = printed.matches("is passed to use, not stored").count();
    assert_eq!(passed, 2, "{printed}");
    assert!(
        printed.contains("note: 4 more notes like the one above ('notes' lists them all)."),
        "{printed}"
    );
    p.send_line("notes").unwrap();
    for k in 1..=6 {
        let line = 11 + k;
        p.exp_string(&format!(
            "the result of malloc on line {line} is passed to use"
        ))
        .unwrap_or_else(|e| panic!("notes lacks line {line}: {e}"));
    }
    p.exp_string(PROMPT).unwrap();
    finish(p);
}

/// At the prompt, tables fit the terminal (a pty is 80 columns): no table
/// line of `compare_runs` is wider (a heading ending in `:` wraps as
/// prose), and no label is cut (`…`); scripts/transpose.c reads Y by
/// columns, and its pattern label, cut in the 136-column table that `-c`
/// keeps for scripts, is shown whole on its own line.
#[test]
fn wide_tables_fit_the_terminal_and_keep_whole_labels() {
    let home = tempfile::tempdir().unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/transpose.c"),
        home.path().join("transpose.c"),
    )
    .unwrap();
    let c = |script: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_mapvis"))
            .current_dir(home.path())
            .env("HOME", home.path())
            .env("MAPVIS_HISTORY", home.path().join("history"))
            .args(["-c", script])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    c(
        "compile_exe transpose.c; set_mem_alloc all; run_gleipnir; memory_trace_analysis; \
       save_run a; save_run b",
    );
    let script = c("compare_runs a b");
    const LABEL: &str = "8 of 64 bytes per line used";
    assert!(
        script.lines().any(|l| l.chars().count() > 80) && script.contains("8 of 64 bytes per lin…"),
        "-c's table is laid out as before, the label cut:\n{script}"
    );
    let mut p = start(home.path());
    p.send_line("compare_runs a b").unwrap();
    p.exp_string("by the largest change in L1 misses:").unwrap();
    let shown = p.exp_string(PROMPT).unwrap();
    for l in shown.lines().map(|l| l.trim_end_matches('\r')) {
        if !l.ends_with(':') {
            assert!(
                l.chars().count() <= 80,
                "{} columns: {l}\n{shown}",
                l.chars().count()
            );
        }
    }
    assert!(!shown.contains('…'), "a label is cut:\n{shown}");
    // A label longer than the terminal wraps between words, its later
    // lines indented by six spaces.
    let joined = shown.replace("\r\n      ", " ");
    assert!(
        joined
            .lines()
            .any(|l| l.trim_start().starts_with("pattern: column-wise") && l.contains(LABEL)),
        "the pattern label is not on a line of its own:\n{shown}"
    );
    finish(p);
}
