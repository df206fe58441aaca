//! Build script: compiles the mapvis Valgrind tool
//! (`src/trace/record/tool/mv_main.c`) and its malloc-replacement preload
//! against the installed Valgrind, found with `pkg-config valgrind`, and
//! links the system's Tcl 8.6 library.
//!
//! The tool is linked the way Valgrind links its own tools: static, no
//! default libraries, text segment at the `valt_load_address` from the .pc
//! file. Both files land in `$OUT_DIR/valgrind-tool/` and are embedded into
//! the `mapvis` binary, which installs them in a cache folder at run time.
use std::env;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};

/// The tool's C files, compiled alike and linked together.
const TOOL_SOURCES: [&str; 2] = [
    "src/trace/record/tool/mv_main.c",
    "src/trace/record/tool/mv_region.c",
];
const REGION_HEADER: &str = "src/trace/record/tool/mv_region.h";
const HEAP_PRELOAD_SOURCE: &str = "src/trace/heap/preload/mv_heap.c";
const PTHREAD_WRAPPERS_SOURCE: &str = "src/trace/record/tool/mv_pthread.c";
const SYNC_HEADER: &str = "src/trace/record/tool/mv_sync.h";
/// The trace format's numbers, shared by the tool and the reader.
const FORMAT_HEADER: &str = "src/trace/record/tool/mv_format.h";

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}");
    println!("cargo:warning={msg}");
    exit(1);
}

fn pkg_config(args: &[&str]) -> String {
    let out = Command::new("pkg-config")
        .args(args)
        .arg("valgrind")
        .output()
        .unwrap_or_else(|e| {
            fail(&format!(
                "mapvis could not run pkg-config ({e}); install it (Debian: apt-get install pkg-config) \
                 together with Valgrind (apt-get install valgrind)."
            ))
        });
    if !out.status.success() {
        fail(
            "mapvis needs Valgrind's tool-building files, and `pkg-config valgrind` did not find them: \
             install Valgrind with its development files (Debian: apt-get install valgrind).",
        );
    }
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn run(cmd: &mut Command, what: &str) {
    let status = cmd
        .status()
        .unwrap_or_else(|e| fail(&format!("could not run the C compiler to {what}: {e}")));
    if !status.success() {
        fail(&format!(
            "the C compiler failed to {what}; see the messages above."
        ));
    }
}

fn main() {
    for src in TOOL_SOURCES {
        println!("cargo:rerun-if-changed={src}");
    }
    println!("cargo:rerun-if-changed=pins/gleipnir.h");
    println!("cargo:rerun-if-changed={PTHREAD_WRAPPERS_SOURCE}");
    println!("cargo:rerun-if-changed={SYNC_HEADER}");
    println!("cargo:rerun-if-changed={REGION_HEADER}");
    println!("cargo:rerun-if-changed={FORMAT_HEADER}");
    write_format_consts(Path::new(
        &std::env::var("OUT_DIR").expect("OUT_DIR is set"),
    ));
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CC");
    println!("cargo:rustc-link-lib=tcl8.6");
    // The release binary keeps line tables for panic backtraces; compressing
    // the debug sections at link time keeps it small (std's reader of
    // backtraces understands zlib-compressed sections).
    println!("cargo:rustc-link-arg-bins=-Wl,--compress-debug-sections=zlib");
    // Local symbols of the dependencies (polars' monomorphised generics: some
    // 80 000 names, 20 MB of the binary) are discarded at link time. mapvis's
    // own frames still name their function and line from the line tables;
    // a dependency's frame in a panic backtrace shows as `<unknown>`.
    println!("cargo:rustc-link-arg-bins=-Wl,--discard-all");

    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let tool_dir = out_dir.join("valgrind-tool");
    std::fs::create_dir_all(&tool_dir).expect("create the tool output folder");

    let version = pkg_config(&["--modversion"]);
    let includedir = pkg_config(&["--variable=includedir"]);
    let libdir = pkg_config(&["--variable=libdir"]);
    let platform = pkg_config(&["--variable=platform"]);
    let load_address = pkg_config(&["--variable=valt_load_address"]);
    if platform != "amd64-linux" {
        fail(&format!(
            "mapvis's Valgrind tool supports amd64-linux only, and pkg-config reports {platform}."
        ));
    }
    let vglibdir = Path::new(&libdir).join("valgrind");
    let cc = env::var("CC").unwrap_or_else(|_| "cc".to_string());

    // 1. The tool.
    let objs: Vec<PathBuf> = TOOL_SOURCES
        .iter()
        .map(|src| compile_tool_source(&cc, src, &version, &includedir, &out_dir))
        .collect();
    let tool = tool_dir.join("mapvis-amd64-linux");
    run(
        Command::new(&cc)
            .arg("-o")
            .arg(&tool)
            .args(&objs)
            .args([
                "-static",
                "-nodefaultlibs",
                "-nostartfiles",
                "-u",
                "_start",
                "-Wl,--build-id=none",
            ])
            .arg(format!("-Wl,-Ttext-segment={load_address}"))
            .arg(format!("-L{}", vglibdir.display()))
            .args(["-lcoregrind-amd64-linux", "-lvex-amd64-linux", "-lgcc"]),
        "link the Valgrind tool",
    );

    // 2. The preload: the malloc replacement and the pthread wrappers
    // (function wrappers must not be merged by identical-code folding:
    // each is redirected on its own).
    let preload = tool_dir.join("vgpreload_mapvis-amd64-linux.so");
    run(
        Command::new(&cc)
            .args([
                "-shared",
                "-fPIC",
                "-nodefaultlibs",
                "-O2",
                "-fno-builtin",
                "-fno-ipa-icf",
                "-fno-stack-protector",
                "-fno-omit-frame-pointer",
                "-Wall",
            ])
            .arg(format!("-I{includedir}"))
            .arg("-o")
            .arg(&preload)
            .arg(PTHREAD_WRAPPERS_SOURCE)
            .arg("-Wl,--whole-archive")
            .arg(vglibdir.join("libreplacemalloc_toolpreload-amd64-linux.a"))
            .arg("-Wl,--no-whole-archive"),
        "link the malloc-replacement preload",
    );

    build_heap_preload(&tool_dir.join("libmv_heap.so"));

    println!("cargo:rustc-env=MAPVIS_TOOL_DIR={}", tool_dir.display());
    println!("cargo:rustc-env=MAPVIS_VALGRIND_VERSION={version}");
}

/// Step 3: the native heap profiler (`LD_PRELOAD` library), a shared
/// object, so it is linked by the compiler the `cc` crate chose (honouring `CC` and
/// the target), with frame pointers for its own stack walk and
/// `-fexceptions` so a C++ `bad_alloc` can unwind through its wrappers.
fn build_heap_preload(out: &Path) {
    println!("cargo:rerun-if-changed={HEAP_PRELOAD_SOURCE}");
    // The heap profile version the library writes, for the reader: one
    // definition (mv_heap.c's `#define FORMAT_VERSION N`).
    let text = std::fs::read_to_string(HEAP_PRELOAD_SOURCE).expect("mv_heap.c is readable");
    let version = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("#define FORMAT_VERSION "))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .expect("mv_heap.c defines FORMAT_VERSION as a number");
    println!("cargo:rustc-env=MAPVIS_HEAP_FORMAT_VERSION={version}");
    let compiler = cc::Build::new()
        .opt_level(2)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .get_compiler();
    let mut cmd = compiler.to_command();
    cmd.args([
        "-shared",
        "-fPIC",
        "-O2",
        "-g",
        "-fno-omit-frame-pointer",
        "-fexceptions",
        "-fvisibility=hidden",
        "-Wall",
        "-Wno-unused-parameter",
        "-o",
    ])
    .arg(out)
    .arg(HEAP_PRELOAD_SOURCE)
    .args(["-ldl", "-lpthread"]);
    run(&mut cmd, "build the heap profiler library");
}

/// Step 0: `mv_format.h`'s `#define NAME NUMBER` lines as Rust constants in
/// `$OUT_DIR/mv_format.rs`, which `src/trace/record/format.rs` includes: the
/// writer and the reader share one definition of every record kind.
/// Numbers are decimal, `0x` hexadecimal or a character constant (`'L'`);
/// other defines (strings, macros) are left to C.
fn write_format_consts(out: &Path) {
    let text = std::fs::read_to_string(FORMAT_HEADER).expect("mv_format.h is readable");
    let mut rust =
        String::from("// Generated by build.rs from src/trace/record/tool/mv_format.h.\n");
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("#define ") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let (Some(name), Some(value)) = (words.next(), words.next()) else {
            continue;
        };
        let number = if let Some(hex) = value.strip_prefix("0x") {
            u64::from_str_radix(hex, 16).ok()
        } else if value.len() == 3 && value.starts_with('\'') && value.ends_with('\'') {
            Some(value.as_bytes()[1] as u64)
        } else {
            value.parse::<u64>().ok()
        };
        if let Some(n) = number {
            rust.push_str(&format!("pub(crate) const {name}: u64 = {n};\n"));
        }
    }
    std::fs::write(out.join("mv_format.rs"), rust).expect("OUT_DIR is writable");
}

/// Compiles one C file of the tool to an object in `out_dir`, with the
/// flags Valgrind's own tools are built with.
fn compile_tool_source(
    cc: &str,
    src: &str,
    version: &str,
    includedir: &str,
    out_dir: &Path,
) -> PathBuf {
    let obj = out_dir.join(
        Path::new(src)
            .with_extension("o")
            .file_name()
            .expect("a source file name"),
    );
    run(
        Command::new(cc)
            .args([
                "-c",
                "-O2",
                "-g",
                "-m64",
                "-fno-stack-protector",
                "-fno-builtin",
                "-fno-pie",
                "-fno-strict-aliasing",
                "-fno-omit-frame-pointer",
                "-Wall",
                "-Wno-unused-parameter",
                "-DVGA_amd64=1",
                "-DVGO_linux=1",
                "-DVGP_amd64_linux=1",
                "-DVGPV_amd64_linux_vanilla=1",
            ])
            .arg(format!("-DMAPVIS_VG_VERSION=\"{version}\""))
            .arg(format!("-I{includedir}"))
            .arg(src)
            .arg("-o")
            .arg(&obj),
        "compile the Valgrind tool",
    );
    obj
}
