//! A corpus of real public libraries that nobody on the team wrote, each
//! driven by a harness of ours (`tests/corpus/*.c`, `*.cpp`) that puts the
//! pins around real library calls. The libraries are fetched when the test
//! runs (`tests/corpus/fetch.sh`: Debian's header-only `-dev` packages and
//! crates that bundle C sources), into a cache outside the repository; a
//! failed download fails the test.
//!
//! Each case is built as a user would (`-O0`, `-O2`, some `-O3`, `-flto`,
//! `-no-pie`, `-static`) and run twice: under Valgrind's Lackey, which
//! prints every load and store and knows nothing of mapvis, and under
//! mapvis's tool. The harness writes a manifest of the arrays it knows
//! (their address and size in that run, and the name mapvis should give
//! them). For every array, the load and store bytes that mapvis names
//! inside the region must equal Lackey's exactly, and they must all carry
//! the array's name, or its allocation site with a note saying why the
//! name is missing: never another variable's name.
//!
//! Bytes are counted by the access's first byte, as mapvis's tables count
//! them. Arrays are never realloc'ed inside a region (Valgrind's own
//! realloc copies outside the program, glibc's inside it, so the two runs
//! could differ there) and the harnesses free nothing they track inside
//! it (glibc's free writes into the block).
mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use common::root;
use mapvis::filter::Analysis;
use mapvis::trace::naming::ProgramNamer;
use mapvis::trace::naming::Scope;
use mapvis::trace::record::{find_valgrind, run_trace, TraceRequest};

/// The cache folder of the fetched libraries, fetched once per test run.
fn cache() -> &'static Path {
    static CACHE: OnceLock<PathBuf> = OnceLock::new();
    CACHE.get_or_init(|| {
        let out = Command::new("bash")
            .arg(root().join("tests/corpus/fetch.sh"))
            .stderr(Stdio::inherit())
            .output()
            .expect("run tests/corpus/fetch.sh");
        assert!(
            out.status.success(),
            "tests/corpus/fetch.sh could not fetch the corpus (see its message above); \
             the corpus test needs Debian's package lists and crates.io"
        );
        let text = String::from_utf8_lossy(&out.stdout);
        PathBuf::from(
            text.lines()
                .last()
                .expect("fetch.sh prints the cache")
                .trim(),
        )
    })
}

/// `tests/corpus/bump.c` built as a shared object, to preload into the
/// programs run under Lackey (see that file for why), once per test run.
fn bump() -> &'static Path {
    static BUMP: OnceLock<PathBuf> = OnceLock::new();
    BUMP.get_or_init(|| {
        let so = cache().join("bump.so");
        let part = cache().join(format!("bump.so.{}", std::process::id()));
        let out = Command::new("gcc")
            .args(["-O2", "-shared", "-fPIC", "-o"])
            .arg(&part)
            .arg(root().join("tests/corpus/bump.c"))
            .output()
            .expect("run gcc");
        assert!(
            out.status.success(),
            "building tests/corpus/bump.c failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::rename(&part, &so).expect("rename the built bump.so");
        so
    })
}

/// A library of the corpus and how a harness builds against it.
struct Lib {
    /// The harness, under `tests/corpus/`.
    harness: &'static str,
    /// The library's own sources to compile with it, under its first
    /// include folder.
    sources: &'static [&'static str],
    /// Sources of ours to compile with it, under `tests/corpus/`.
    own: &'static [&'static str],
    /// Include folders under the cache.
    includes: &'static [&'static str],
    /// Extra link flags.
    link: &'static [&'static str],
}

const DEB_INC: &str = "root/usr/include";
const LZ4: &str = "crates/lz4-sys-1.11.1+lz4-1.10.0/liblz4/lib";
const ZLIB: &str = "crates/libz-sys-1.1.21/src/zlib";
const BZIP2: &str = "crates/bzip2-sys-0.1.13+1.0.8/bzip2-1.0.8";
const DEFLATE: &str = "crates/libdeflate-sys-1.26.1/libdeflate";

/// One build of a harness: its flags.
struct Case<'a> {
    lib: &'a Lib,
    flags: &'a [&'a str],
}

impl Case<'_> {
    fn label(&self) -> String {
        format!("{} {}", self.lib.harness, self.flags.join(" "))
    }
}

/// One array of a manifest: the names it may have, its start and size.
#[derive(Clone, Debug)]
struct Array {
    names: Vec<String>,
    addr: u64,
    size: u64,
}

/// A harness's manifest: the region marker's address and the arrays.
#[derive(Debug)]
struct Manifest {
    marker: u64,
    arrays: Vec<Array>,
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16)
        .unwrap_or_else(|_| panic!("not a hex address: {s}"))
}

fn read_manifest(path: &Path) -> Manifest {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("the harness wrote no manifest {}: {e}", path.display()));
    let mut m = Manifest {
        marker: 0,
        arrays: vec![],
    };
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["marker", a] => m.marker = hex(a),
            ["array", names, a, n] => m.arrays.push(Array {
                names: names.split('|').map(String::from).collect(),
                addr: hex(a),
                size: n.parse().expect("array size"),
            }),
            _ => {}
        }
    }
    assert!(m.marker != 0, "no marker in {}", path.display());
    m
}

/// Compiles the case into `dir`; returns the executable.
fn build(case: &Case, dir: &Path) -> PathBuf {
    let lib = case.lib;
    let cpp = lib.harness.ends_with(".cpp");
    let exe = dir.join(Path::new(lib.harness).file_stem().unwrap());
    let mut cmd = Command::new(if cpp { "g++" } else { "gcc" });
    cmd.arg("-g")
        .args(case.flags)
        .arg(format!("-I{}", root().join("pins").display()))
        .arg(format!("-I{}", root().join("tests/corpus").display()));
    let harness = root().join("tests/corpus").join(lib.harness);
    cmd.arg(format!("-I{}", harness.parent().unwrap().display()));
    for inc in lib.includes {
        cmd.arg(format!("-I{}", cache().join(inc).display()));
    }
    cmd.arg("-o").arg(&exe);
    cmd.arg(&harness);
    for s in lib.sources {
        cmd.arg(cache().join(lib.includes[0]).join(s));
    }
    for s in lib.own {
        cmd.arg(root().join("tests/corpus").join(s));
    }
    cmd.args(lib.link);
    let out = cmd.output().expect("run the compiler");
    assert!(
        out.status.success(),
        "{}: compiling failed:\n{}",
        case.label(),
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// (load bytes, store bytes) per array, by the access's first byte.
type Bytes = Vec<(u64, u64)>;

/// Runs `exe` under Lackey and sums, per array of its manifest, the load
/// and store bytes of the accesses between the two marker stores.
fn lackey(exe: &Path, dir: &Path) -> (Manifest, Bytes) {
    let log = dir.join("lackey.out");
    let manifest = dir.join("lackey.manifest");
    let out = Command::new(find_valgrind(None).expect("valgrind on PATH"))
        .env("LD_PRELOAD", bump())
        .args(["--tool=lackey", "--trace-mem=yes"])
        .arg(format!("--log-file={}", log.display()))
        .arg(exe)
        .arg(&manifest)
        .stdout(Stdio::null())
        .output()
        .expect("run valgrind --tool=lackey");
    assert!(
        out.status.success(),
        "{} under Lackey: {}",
        exe.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let m = read_manifest(&manifest);
    let mut ranges: Vec<(u64, u64, usize)> = m
        .arrays
        .iter()
        .enumerate()
        .map(|(i, a)| (a.addr, a.addr + a.size, i))
        .collect();
    ranges.sort();
    let mut bytes = vec![(0u64, 0u64); m.arrays.len()];
    let mut state = 0; // 0 before the region, 1 inside, 2 after
    let reader = BufReader::new(std::fs::File::open(&log).expect("Lackey's log"));
    for line in reader.split(b'\n') {
        let line = line.expect("read Lackey's log");
        if line.len() < 4 || line[0] != b' ' {
            continue;
        }
        let op = line[1];
        let Some((a, n)) = std::str::from_utf8(&line[3..])
            .ok()
            .and_then(|s| s.split_once(','))
        else {
            continue;
        };
        let (addr, size) = (hex(a), n.trim().parse::<u64>().unwrap_or(0));
        if addr == m.marker && op == b'S' {
            state += 1;
            continue;
        }
        if state != 1 {
            continue;
        }
        let k = ranges.partition_point(|r| r.0 <= addr);
        for &(lo, hi, i) in ranges[..k].iter().rev() {
            if addr >= lo && addr < hi {
                if matches!(op, b'L' | b'M') {
                    bytes[i].0 += size;
                }
                if matches!(op, b'S' | b'M') {
                    bytes[i].1 += size;
                }
                break;
            }
        }
    }
    assert_eq!(state, 2, "{}: Lackey saw no region markers", exe.display());
    let _ = std::fs::remove_file(&log);
    (m, bytes)
}

/// Traces `exe` under mapvis and analyses it with the library's folders
/// as set_src_path.
fn mapvis(exe: &Path, dir: &Path, src_paths: &[PathBuf]) -> (Manifest, Analysis) {
    let manifest = dir.join("mapvis.manifest");
    let req = TraceRequest {
        valgrind: find_valgrind(None).expect("valgrind on PATH"),
        exe: exe.to_path_buf(),
        args: vec![manifest.display().to_string()],
        trace_file: dir.join("t.mvt"),
        stack_depth: 12,
        heap_only: false,
        from_start: false,
        sync_events: false,
    };
    let outcome = run_trace(&req).expect("run the tracer");
    assert_eq!(outcome.exit_code, Some(0), "{}", outcome.describe());
    let mut namer = ProgramNamer::new(Some(exe), src_paths);
    let a = mapvis::filter::analyse(&req.trace_file, &mut namer).expect("analysis");
    (read_manifest(&manifest), a)
}

/// How one array came out.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// Every byte named by one of the array's names.
    Named,
    /// Named by its allocation site, with a note saying why.
    BySite,
}

/// Per variable row: (load bytes, store bytes) that mapvis put in
/// `[lo, hi)`, leaving out heap blocks freed inside the region (Valgrind
/// hands their memory to later blocks, the array among them).
fn mapvis_bytes(a: &Analysis, lo: u64, hi: u64) -> BTreeMap<u32, (u64, u64)> {
    let df = &a.locations;
    let addr = df.column("addr").unwrap().u64().unwrap();
    let var = df.column("var").unwrap().u32().unwrap();
    let lb = df.column("load_bytes").unwrap().u64().unwrap();
    let sb = df.column("store_bytes").unwrap().u64().unwrap();
    let mut out: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for i in 0..df.height() {
        let ad = addr.get(i).unwrap();
        let v = var.get(i).unwrap();
        let freed = a.vars[v as usize]
            .free_time
            .is_some_and(|t| t < a.summary.accesses);
        if ad >= lo && ad < hi && !freed {
            let e = out.entry(v).or_default();
            e.0 += lb.get(i).unwrap();
            e.1 += sb.get(i).unwrap();
        }
    }
    out
}

/// Whether mapvis's variable `name` is one of `names`: the name itself,
/// an instance of it (`it#3`), or qualified by its function (`main::A`).
fn is_named(name: &str, names: &[String]) -> bool {
    let base = name.split('#').next().unwrap_or(name);
    let bare = base.rsplit("::").next().unwrap_or(base);
    names.iter().any(|n| n == base || n == bare)
}

/// Checks one array; returns its verdict or what is wrong.
fn check_array(a: &Analysis, arr: &Array, want: (u64, u64)) -> Result<Verdict, String> {
    let got = mapvis_bytes(a, arr.addr, arr.addr + arr.size);
    let total = got.values().fold((0, 0), |t, b| (t.0 + b.0, t.1 + b.1));
    let names: Vec<String> = got
        .iter()
        .map(|(v, b)| format!("{} {:?}", a.vars[*v as usize].name, b))
        .collect();
    if total != want {
        return Err(format!(
            "{}: mapvis names {total:?} (load, store) bytes, Lackey counts {want:?}; under {names:?}",
            arr.names[0]
        ));
    }
    let mut verdict = Verdict::Named;
    for v in got.keys() {
        let var = &a.vars[*v as usize];
        if is_named(&var.name, &arr.names) {
            continue;
        }
        // A block named by its site, or memory the tool could not record
        // (a static executable's heap), each with a note saying why.
        let by_site = (var.scope == Scope::Heap
            && var.base_name == var.site
            && a.summary.notes.iter().any(|n| n.contains(&var.site)))
            || (var.name == "<unrecorded memory>"
                && a.summary.notes.iter().any(|n| n.contains(&var.name)));
        if !by_site {
            return Err(format!(
                "{}: bytes named {:?} (site {}); all: {names:?}",
                arr.names[0], var.name, var.site
            ));
        }
        verdict = Verdict::BySite;
    }
    Ok(verdict)
}

/// What one case measured, for the summary.
#[derive(Default, Debug)]
struct Outcome {
    arrays: usize,
    named: usize,
    by_site: usize,
    errors: Vec<String>,
}

/// Builds and runs one case under both tools and checks every array.
fn run_case(case: &Case, src_paths: &[PathBuf]) -> Outcome {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = build(case, dir.path());
    let (lm, want) = lackey(&exe, dir.path());
    let (mm, a) = mapvis(&exe, dir.path(), src_paths);
    assert_eq!(
        lm.arrays.len(),
        mm.arrays.len(),
        "{}: the two runs' manifests differ",
        case.label()
    );
    let mut o = Outcome::default();
    for (arr, w) in mm.arrays.iter().zip(&want) {
        o.arrays += 1;
        match check_array(&a, arr, *w) {
            Ok(Verdict::Named) => o.named += 1,
            Ok(Verdict::BySite) => o.by_site += 1,
            Err(e) => o.errors.push(e),
        }
    }
    eprintln!(
        "corpus {}: {} arrays, {} named, {} by site or unrecorded (with a note), {} wrong",
        case.label(),
        o.arrays,
        o.named,
        o.by_site,
        o.errors.len()
    );
    o
}

/// Runs `lib` with each set of flags; fails listing every wrong array.
fn corpus(lib: &Lib, builds: &[&[&str]]) {
    let src: Vec<PathBuf> = lib
        .includes
        .iter()
        .map(|i| cache().join(i))
        .chain([
            root().join("tests/corpus"),
            root().join("tests/corpus/idioms"),
        ])
        .collect();
    let mut errors = vec![];
    for flags in builds {
        let case = Case { lib, flags };
        let o = run_case(&case, &src);
        errors.extend(o.errors.iter().map(|e| format!("{}: {e}", case.label())));
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

const O0_O2: &[&[&str]] = &[&["-O0"], &["-O2"]];

/// A header-only library from Debian's packages.
fn deb(harness: &'static str, link: &'static [&'static str]) -> Lib {
    Lib {
        harness,
        sources: &[],
        own: &[],
        includes: &[DEB_INC],
        link,
    }
}

/// A library whose C sources a crate bundles: its folder under the cache
/// (`&[DIR]`) and the files to compile, under that folder.
fn bundled(
    harness: &'static str,
    dir: &'static [&'static str],
    sources: &'static [&'static str],
) -> Lib {
    Lib {
        harness,
        sources,
        own: &[],
        includes: dir,
        link: &[],
    }
}

/// An idiom's program of ours, with its other files.
fn idiom(harness: &'static str, own: &'static [&'static str]) -> Lib {
    Lib {
        harness,
        sources: &[],
        own,
        includes: &[],
        link: &[],
    }
}

#[test]
fn uthash() {
    let lib = deb("uthash.c", &[]);
    corpus(&lib, &[&["-O0"], &["-O2"], &["-O0", "-no-pie"]]);
}

#[test]
fn xxhash() {
    let lib = deb("xxhash.c", &[]);
    corpus(&lib, &[&["-O0"], &["-O2"], &["-O3"], &["-O2", "-static"]]);
}

#[test]
fn jsmn() {
    let lib = deb("jsmn.c", &[]);
    corpus(&lib, &[&["-O0"], &["-O2"], &["-O2", "-no-pie"]]);
}

#[test]
fn stb_image() {
    let lib = deb("stb_image.c", &["-lm"]);
    corpus(&lib, O0_O2);
}

#[test]
fn stb_perlin() {
    let lib = deb("stb_perlin.c", &["-lm"]);
    corpus(&lib, O0_O2);
}

#[test]
fn lz4() {
    let lib = bundled("lz4.c", &[LZ4], &["lz4.c"]);
    corpus(&lib, &[&["-O0"], &["-O2"], &["-O3"]]);
}

#[test]
fn zlib() {
    let lib = bundled(
        "zlib.c",
        &[ZLIB],
        &[
            "adler32.c",
            "compress.c",
            "crc32.c",
            "deflate.c",
            "inffast.c",
            "inflate.c",
            "inftrees.c",
            "trees.c",
            "uncompr.c",
            "zutil.c",
        ],
    );
    corpus(&lib, &[&["-O0"], &["-O2"], &["-O2", "-flto"]]);
}

#[test]
fn bzip2() {
    let lib = bundled(
        "bzip2.c",
        &[BZIP2],
        &[
            "blocksort.c",
            "bzlib.c",
            "compress.c",
            "crctable.c",
            "decompress.c",
            "huffman.c",
            "randtable.c",
        ],
    );
    corpus(&lib, O0_O2);
}

#[test]
fn libdeflate() {
    let lib = bundled(
        "libdeflate.c",
        &[DEFLATE],
        &[
            "lib/deflate_compress.c",
            "lib/deflate_decompress.c",
            "lib/utils.c",
            "lib/x86/cpu_features.c",
        ],
    );
    corpus(&lib, O0_O2);
}

#[test]
fn eigen() {
    let lib = Lib {
        harness: "eigen.cpp",
        sources: &[],
        own: &[],
        includes: &[DEB_INC, "root/usr/include/eigen3"],
        link: &[],
    };
    corpus(&lib, &[&["-O0"], &["-O2"], &["-O3"]]);
}

#[test]
fn glm() {
    let lib = deb("glm.cpp", &[]);
    corpus(&lib, O0_O2);
}

#[test]
fn nanoflann() {
    let lib = deb("nanoflann.cpp", &[]);
    corpus(&lib, O0_O2);
}

#[test]
fn rapidjson() {
    let lib = deb("rapidjson.cpp", &[]);
    corpus(&lib, O0_O2);
}

// The idioms of the issue, each a small program of ours checked the same
// way.

#[test]
fn idiom_helpers_in_headers() {
    let lib = idiom("idioms/header_helper.cpp", &[]);
    corpus(&lib, &[&["-O0"], &["-O2"]]);
}

#[test]
fn idiom_vector_members_at_o2() {
    let lib = idiom("idioms/vector_members.cpp", &[]);
    corpus(&lib, &[&["-O0"], &["-O2"], &["-O3"]]);
}

#[test]
fn idiom_cross_file_inlining() {
    let lib = idiom("idioms/lto_main.c", &["idioms/lto_helper.c"]);
    corpus(&lib, &[&["-O0"], &["-O2", "-flto"]]);
}

#[test]
fn idiom_two_containers_on_one_line() {
    let lib = idiom("idioms/two_vectors.cpp", &[]);
    corpus(&lib, &[&["-O0"], &["-O2"]]);
}

#[test]
fn idiom_non_pie_and_static_executables() {
    let lib = idiom("idioms/nopie.c", &[]);
    corpus(
        &lib,
        &[
            &["-O0", "-no-pie"],
            &["-O2", "-no-pie"],
            &["-O0", "-static"],
        ],
    );
}
