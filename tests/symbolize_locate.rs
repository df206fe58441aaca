//! Symbolization against ground truth: `tests/c/sym_locate.c` prints the
//! runtime address of a function, the return address of a call made at a
//! marked line and its own `/proc/self/maps`; we map those addresses back to
//! file addresses and check `locate` against the source.

use std::path::{Path, PathBuf};
use std::process::Command;

use mapvis::trace::naming::{
    file_address, find_source, LoadSegment, SourceFinder, SymbolizeError, Symbolizer,
};

fn c_source() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/c/sym_locate.c")
}

/// 1-based line of the marker comment `/* @key */` in sym_locate.c.
fn line_of(key: &str) -> u32 {
    let text = std::fs::read_to_string(c_source()).unwrap();
    let marker = format!("/* @{key} */");
    text.lines().position(|l| l.contains(&marker)).unwrap() as u32 + 1
}

/// Copies the C file into `dir` and compiles it there with a relative
/// source name, so DWARF records a relative name plus `comp_dir`.
fn compile(dir: &Path, exe_name: &str, flags: &[&str]) -> PathBuf {
    std::fs::copy(c_source(), dir.join("sym_locate.c")).unwrap();
    let exe = dir.join(exe_name);
    let output = Command::new("cc")
        .current_dir(dir)
        .args(flags)
        .args(["-O0", "-o", exe_name, "sym_locate.c"])
        .output()
        .expect("run cc");
    assert!(output.status.success(), "cc failed: {output:?}");
    exe
}

struct Mapping {
    start: u64,
    end: u64,
    offset: u64,
    path: String,
}

struct Run {
    func: u64,
    ret: u64,
    maps: Vec<Mapping>,
}

fn run(exe: &Path) -> Run {
    let output = Command::new(exe).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let run = parse_output(&String::from_utf8(output.stdout).unwrap());
    assert!(run.ret != 0, "no return address printed");
    run
}

/// Reads the `func`, `ret` and `map` lines the test programs print.
fn parse_output(stdout: &str) -> Run {
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let (mut func, mut ret, mut maps) = (0, 0, Vec::new());
    for line in stdout.lines() {
        if let Some(v) = line.strip_prefix("func ") {
            func = hex(v);
        } else if let Some(v) = line.strip_prefix("ret ") {
            ret = hex(v);
        } else if let Some(map) = line.strip_prefix("map ") {
            let fields: Vec<&str> = map.split_whitespace().collect();
            let (start, end) = fields[0].split_once('-').unwrap();
            maps.push(Mapping {
                start: hex(start),
                end: hex(end),
                offset: hex(fields[2]),
                path: fields.get(5).map(|s| s.to_string()).unwrap_or_default(),
            });
        }
    }
    assert!(func != 0 && !maps.is_empty(), "{stdout}");
    Run { func, ret, maps }
}

/// Runtime -> file address through the mapping of object `exe` containing it.
fn to_file(sym: &Symbolizer, run: &Run, exe: &Path, runtime: u64) -> u64 {
    let exe = exe.canonicalize().unwrap();
    let map = run
        .maps
        .iter()
        .find(|m| {
            runtime >= m.start
                && runtime < m.end
                && Path::new(&m.path).canonicalize().ok().as_deref() == Some(&*exe)
        })
        .expect("a mapping of the executable contains the address");
    sym.file_address(map.start, map.offset, runtime)
        .expect("address in a PT_LOAD segment")
}

fn same_file(a: &Path, b: &Path) -> bool {
    a.canonicalize().unwrap() == b.canonicalize().unwrap()
}

#[test]
fn pie_executable_function_and_return_address() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "pie", &["-g", "-fPIE", "-pie"]);
    let sym = Symbolizer::open(&exe).unwrap();
    assert!(sym.has_debug_info());
    assert!(sym.require_debug_info().is_ok());
    assert!(sym.comp_dirs().iter().any(|d| same_file(d, dir.path())));

    let run = run(&exe);
    let func = to_file(&sym, &run, &exe, run.func);
    // PIE: the load bias is not zero, the file address is small.
    assert_ne!(func, run.func);

    let loc = sym.locate(func).expect("function entry has a line");
    assert!(
        same_file(&loc.file, &dir.path().join("sym_locate.c")),
        "{loc:?}"
    );
    assert_eq!(loc.line, line_of("target_function"));
    assert_eq!(loc.function.as_deref(), Some("target_function"));
    assert_eq!(sym.function_name(func).as_deref(), Some("target_function"));

    let ret = to_file(&sym, &run, &exe, run.ret);
    let call = sym
        .locate_return_address(ret)
        .expect("call site has a line");
    assert!(same_file(&call.file, &dir.path().join("sym_locate.c")));
    assert_eq!(call.line, line_of("call_probe"));
    assert!(call.column > 0);
    assert_eq!(call.function.as_deref(), Some("main"));
    assert_eq!(sym.locate_return_address(0), None);
}

#[test]
fn non_pie_executable_has_identity_translation() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "nopie", &["-g", "-fno-pie", "-no-pie"]);
    let sym = Symbolizer::open(&exe).unwrap();
    let run = run(&exe);
    let func = to_file(&sym, &run, &exe, run.func);
    assert_eq!(func, run.func);
    let ret = to_file(&sym, &run, &exe, run.ret);
    assert_eq!(ret, run.ret);
    assert_eq!(
        sym.locate(func).map(|l| l.line),
        Some(line_of("target_function"))
    );
    assert_eq!(
        sym.locate_return_address(ret).map(|l| l.line),
        Some(line_of("call_probe"))
    );
}

#[test]
fn without_debug_info_the_symbol_table_names_functions() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "nodebug", &[]);
    let sym = Symbolizer::open(&exe).unwrap();
    assert!(!sym.has_debug_info());
    assert!(sym.comp_dirs().is_empty());
    let run = run(&exe);
    let func = to_file(&sym, &run, &exe, run.func);
    assert_eq!(sym.locate(func), None);
    assert_eq!(sym.function_name(func).as_deref(), Some("target_function"));
    // Inside the function, not only at its entry.
    assert_eq!(
        sym.function_name(func + 4).as_deref(),
        Some("target_function")
    );
    let ret = to_file(&sym, &run, &exe, run.ret);
    assert_eq!(sym.function_name(ret - 1).as_deref(), Some("main"));

    let err = sym.require_debug_info().unwrap_err();
    assert!(matches!(err, SymbolizeError::NoDebugInfo { .. }));
    let message = err.to_string();
    assert!(message.contains(&*exe.to_string_lossy()), "{message}");
    assert!(message.contains("compile it with -g"), "{message}");
}

#[test]
fn open_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let err = Symbolizer::open(&missing).unwrap_err();
    assert!(matches!(err, SymbolizeError::Io { .. }));
    assert!(err.to_string().contains(&*missing.to_string_lossy()));

    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not an object file").unwrap();
    let err = Symbolizer::open(&text).unwrap_err();
    assert!(matches!(err, SymbolizeError::NotAnObject { .. }), "{err}");
    assert!(err.to_string().contains("notes.txt"));
}

#[test]
fn file_address_uses_segment_offsets() {
    // A typical PIE layout: read-only headers, text, rodata, data+bss.
    let segments = [
        LoadSegment {
            vaddr: 0,
            mem_size: 0x628,
            file_offset: 0,
            file_size: 0x628,
        },
        LoadSegment {
            vaddr: 0x1000,
            mem_size: 0x1f5,
            file_offset: 0x1000,
            file_size: 0x1f5,
        },
        LoadSegment {
            vaddr: 0x2000,
            mem_size: 0x124,
            file_offset: 0x2000,
            file_size: 0x124,
        },
        LoadSegment {
            vaddr: 0x3de8,
            mem_size: 0x280,
            file_offset: 0x2de8,
            file_size: 0x248,
        },
    ];
    let base = 0x5555_5555_4000;
    // Text mapping: r-xp at offset 0x1000.
    assert_eq!(
        file_address(&segments, base + 0x1000, 0x1000, base + 0x1139),
        Some(0x1139)
    );
    // Data mapping: rw-p at offset 0x2000 mapped at base + 0x3000.
    assert_eq!(
        file_address(&segments, base + 0x3000, 0x2000, base + 0x3df0),
        Some(0x3df0)
    );
    // Bss tail of the data segment (beyond p_filesz, within p_memsz).
    assert_eq!(
        file_address(&segments, base + 0x3000, 0x2000, base + 0x4050),
        Some(0x4050)
    );
    // Below the mapping, or past every segment.
    assert_eq!(file_address(&segments, base + 0x1000, 0x1000, base), None);
    assert_eq!(
        file_address(&segments, base + 0x3000, 0x2000, base + 0x9000),
        None
    );
}

#[test]
fn source_finder_search_order() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    for p in ["a/src/util.c", "b/util.c", "c/.hidden/util.c", "main.c"] {
        std::fs::create_dir_all(r.join(p).parent().unwrap()).unwrap();
        std::fs::write(r.join(p), "int x;\n").unwrap();
    }
    let search = vec![r.to_path_buf()];
    // Absolute path that exists.
    assert_eq!(
        find_source(&r.join("b/util.c"), None, &search),
        Some(r.join("b/util.c"))
    );
    // Relative to the compilation directory.
    assert_eq!(
        find_source(Path::new("src/util.c"), Some(&r.join("a")), &[]),
        Some(r.join("a/src/util.c"))
    );
    // Moved tree: the longest matching suffix wins over a shallower file.
    let finder = SourceFinder::new(search.clone());
    assert_eq!(
        finder.find(Path::new("/build/project/src/util.c"), None),
        Some(r.join("a/src/util.c"))
    );
    assert_eq!(
        finder.find(Path::new("lib/util.c"), Some(Path::new("/nowhere"))),
        Some(r.join("b/util.c"))
    );
    assert_eq!(
        finder.find(Path::new("/old/main.c"), None),
        Some(r.join("main.c"))
    );
    assert_eq!(finder.find(Path::new("/old/absent.c"), None), None);
    // Hidden directories are not searched.
    std::fs::remove_file(r.join("a/src/util.c")).unwrap();
    std::fs::remove_file(r.join("b/util.c")).unwrap();
    assert_eq!(find_source(Path::new("/x/util.c"), None, &search), None);
}

#[test]
fn shared_library_function() {
    let dir = tempfile::tempdir().unwrap();
    let c_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    for name in ["sym_lib.c", "sym_uselib.c"] {
        std::fs::copy(c_dir.join(name), dir.path().join(name)).unwrap();
    }
    let cc = |args: &[&str]| {
        let output = Command::new("cc")
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "cc {args:?}: {output:?}");
    };
    cc(&[
        "-g",
        "-O0",
        "-fPIC",
        "-shared",
        "-o",
        "libsymlib.so",
        "sym_lib.c",
    ]);
    cc(&[
        "-g",
        "-O0",
        "-fPIE",
        "-pie",
        "-o",
        "uselib",
        "sym_uselib.c",
        "-L.",
        "-lsymlib",
        "-Wl,-rpath,$ORIGIN",
    ]);
    let lib = dir.path().join("libsymlib.so");
    let sym = Symbolizer::open(&lib).unwrap();
    assert!(sym.has_debug_info());

    let output = Command::new(dir.path().join("uselib")).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let run = parse_output(&String::from_utf8(output.stdout).unwrap());
    let func = to_file(&sym, &run, &lib, run.func);
    let loc = sym.locate(func).expect("library function has a line");
    assert!(
        same_file(&loc.file, &dir.path().join("sym_lib.c")),
        "{loc:?}"
    );
    let text = std::fs::read_to_string(c_dir.join("sym_lib.c")).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("/* @lib_function */"))
        .unwrap() as u32
        + 1;
    assert_eq!(loc.line, line);
    assert_eq!(loc.function.as_deref(), Some("sym_lib_function"));
}

#[test]
fn symbolizer_can_move_between_threads() {
    fn assert_send<T: Send>() {}
    assert_send::<Symbolizer>();
    assert_send::<mapvis::trace::naming::CSource>();
}
