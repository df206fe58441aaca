//! The machinery of the corpus tests (`tests/corpus.rs` for C,
//! `tests/corpus_cpp.rs` for C++): real public libraries and programs that
//! nobody on the team wrote, each driven by a harness of ours
//! (`tests/corpus/*.c`, `*.cpp`) that puts the pins around real work. The
//! libraries are fetched when the test runs (`tests/corpus/fetch.sh`:
//! Debian's header-only `-dev` packages and crates that bundle C sources),
//! into a cache outside the repository; a failed download fails the test.
//!
//! Each case is built as a user would (`-O0`, `-O2`, `-O3`, `-flto`,
//! `-no-pie`, `-static`) and measured twice: by Valgrind's Lackey, which
//! prints every load and store and knows nothing of mapvis, and by mapvis's
//! tool. The harness writes a manifest of the arrays a user would name
//! (their address and size in that run, and the names mapvis may give
//! them). For every array, the load and store bytes that mapvis counts
//! inside the region must equal Lackey's exactly, **under one of the
//! array's names**. An array whose bytes carry its allocation site fails,
//! unless the case lists it in [`Lib::site_ok`] with the reason; and bytes
//! under another variable's name always fail. A harness that lists no
//! array fails.
//!
//! **Lackey's counts are kept** beside the harnesses
//! (`tests/corpus/expected/HARNESS.tsv`), keyed by the case's flags and a
//! hash of the executable without its debug information and build id, so
//! that a case whose code has not changed needs no Lackey run. A case with
//! no stored line, or whose code differs (another compiler, another
//! library version), is measured by Lackey afresh. Each run also measures
//! a sample afresh: a third of the libraries each day, one build of each,
//! rotating with the day (every build of every library in turn), and
//! fails if Lackey disagrees with the stored line. To measure every case
//! afresh and rewrite the stored lines:
//!
//! ```text
//! MAPVIS_CORPUS_LACKEY=write cargo test --release --test corpus --test corpus_cpp
//! ```
//!
//! (`MAPVIS_CORPUS_LACKEY=all` measures every case afresh and writes
//! nothing; `MAPVIS_CORPUS_LACKEY=new` stores the counts of the builds
//! that have none, as a new build or an edited harness needs, and
//! measures the others as an ordinary run does.)
//!
//! Bytes are counted by the access's first byte, as mapvis's tables count
//! them. Arrays are never realloc'ed inside a region (Valgrind's own
//! realloc copies outside the program, glibc's inside it, so the two runs
//! could differ there) and the harnesses free nothing they track inside
//! it (glibc's free writes into the block).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::common::root;
use mapvis::filter::Analysis;
use mapvis::trace::naming::ProgramNamer;
use mapvis::trace::naming::Scope;
use mapvis::trace::record::{find_valgrind, run_trace, TraceRequest};

/// The cache folder of the fetched libraries, fetched once per test run.
pub fn cache() -> &'static Path {
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

/// An array that may come out named by its allocation site, in the builds
/// whose flags contain `flags` (all builds when empty), and why.
pub struct SiteOk {
    /// The array's first name in the manifest.
    pub array: &'static str,
    pub flags: &'static str,
    pub why: &'static str,
}

/// A library of the corpus and how a harness builds against it.
pub struct Lib {
    /// The harness, under `tests/corpus/`.
    pub harness: &'static str,
    /// The library's own sources to compile with it, under its first
    /// include folder.
    pub sources: &'static [&'static str],
    /// Sources of ours to compile with it, under `tests/corpus/`.
    pub own: &'static [&'static str],
    /// Include folders under the cache.
    pub includes: &'static [&'static str],
    /// Extra compile flags for the library's sources (macros).
    pub defines: &'static [&'static str],
    /// Extra link flags.
    pub link: &'static [&'static str],
    /// The arrays that may be named by their site, and why. Empty for
    /// most cases: every array must carry a variable's name.
    pub site_ok: &'static [SiteOk],
    /// A region by function for mapvis instead of the pins (which it then
    /// ignores): the function's name and which calls (`all`, `3`). The
    /// harness's markers enclose exactly those calls, for Lackey.
    pub function: Option<(&'static str, &'static str)>,
}

pub const DEB_INC: &str = "root/usr/include";

/// A header-only library from Debian's packages.
pub fn deb(harness: &'static str, link: &'static [&'static str]) -> Lib {
    Lib {
        harness,
        sources: &[],
        own: &[],
        includes: &[DEB_INC],
        defines: &[],
        link,
        site_ok: &[],
        function: None,
    }
}

/// A library whose C sources a crate bundles: its folder under the cache
/// (`&[DIR]`) and the files to compile, under that folder.
pub fn bundled(
    harness: &'static str,
    dir: &'static [&'static str],
    sources: &'static [&'static str],
) -> Lib {
    Lib {
        harness,
        sources,
        own: &[],
        includes: dir,
        defines: &[],
        link: &[],
        site_ok: &[],
        function: None,
    }
}

/// An idiom's program of ours, with its other files.
pub fn idiom(harness: &'static str, own: &'static [&'static str]) -> Lib {
    Lib {
        harness,
        sources: &[],
        own,
        includes: &[],
        defines: &[],
        link: &[],
        site_ok: &[],
        function: None,
    }
}

/// One build of a harness: its flags.
struct Case<'a> {
    lib: &'a Lib,
    flags: &'a [&'a str],
}

impl Case<'_> {
    fn label(&self) -> String {
        format!("{} {}", self.lib.harness, self.flags.join(" "))
    }

    /// Why `array` may be named by its site in this build, if it may.
    fn site_ok(&self, array: &str) -> Option<&'static str> {
        let flags = self.flags.join(" ");
        self.lib
            .site_ok
            .iter()
            .find(|s| s.array == array && flags.contains(s.flags))
            .map(|s| s.why)
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
    assert!(
        !m.arrays.is_empty(),
        "{} lists no array: a corpus case must name what it checks",
        path.display()
    );
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
        .args(lib.defines)
        // The stored Lackey counts are keyed by the code's hash: keep the
        // checkout's folder out of __FILE__ (assert messages).
        .arg(format!("-fmacro-prefix-map={}=.", root().display()))
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
    let bytes = sum_log(&log, &m);
    let _ = std::fs::remove_file(&log);
    (m, bytes)
}

/// Sums Lackey's log `log` per array of `m` (see [`lackey`]).
fn sum_log(log: &Path, m: &Manifest) -> Bytes {
    let mut ranges: Vec<(u64, u64, usize)> = m
        .arrays
        .iter()
        .enumerate()
        .map(|(i, a)| (a.addr, a.addr + a.size, i))
        .collect();
    ranges.sort();
    let mut bytes = vec![(0u64, 0u64); m.arrays.len()];
    let mut state = 0; // 0 before the region, 1 inside, 2 after
    let reader = BufReader::new(std::fs::File::open(log).expect("Lackey's log"));
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
    assert_eq!(state, 2, "{}: Lackey saw no region markers", log.display());
    bytes
}

/// What `MAPVIS_CORPUS_LACKEY` asks: measure the sample afresh (unset),
/// every case (`all`), every case and store the counts (`write`), or the
/// sample and store the counts of builds that have none (`new`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fresh {
    Sample,
    All,
    Write,
    New,
}

fn fresh() -> Fresh {
    match std::env::var("MAPVIS_CORPUS_LACKEY").as_deref() {
        Ok("all") => Fresh::All,
        Ok("write") => Fresh::Write,
        Ok("new") => Fresh::New,
        _ => Fresh::Sample,
    }
}

/// The file of stored Lackey counts of `harness`.
fn expected_file(harness: &str) -> PathBuf {
    let stem = Path::new(harness).file_stem().unwrap().to_string_lossy();
    root()
        .join("tests/corpus/expected")
        .join(format!("{stem}.tsv"))
}

/// The hash that keys a build's stored counts: sha256 of the executable
/// without debug information and build id (the code and data Lackey sees).
fn code_hash(exe: &Path, dir: &Path) -> String {
    let bare = dir.join("bare");
    let out = Command::new("objcopy")
        .args(["--strip-debug", "--remove-section=.note.gnu.build-id"])
        .arg(exe)
        .arg(&bare)
        .output()
        .expect("run objcopy");
    assert!(
        out.status.success(),
        "objcopy: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new("sha256sum")
        .arg(&bare)
        .output()
        .expect("run sha256sum");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .expect("sha256sum prints a hash")
        .to_string()
}

/// Lackey's (load bytes, store bytes) per array, with the array's first
/// name.
type Counts = Vec<(String, u64, u64)>;

/// A stored line: `FLAGS \t HASH \t NAME=LOAD/STORE ...`.
fn stored(harness: &str, flags: &str, hash: &str) -> Option<Counts> {
    let text = std::fs::read_to_string(expected_file(harness)).ok()?;
    let line = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find(|l| l.split('\t').take(2).eq([flags, hash]))?;
    let counts = line.split('\t').nth(2)?;
    counts
        .split_whitespace()
        .map(|c| {
            let (name, ls) = c.rsplit_once('=')?;
            let (l, s) = ls.split_once('/')?;
            Some((name.to_string(), l.parse().ok()?, s.parse().ok()?))
        })
        .collect()
}

/// Writes (replaces) the stored line of one build.
fn store(harness: &str, flags: &str, hash: &str, m: &Manifest, bytes: &Bytes) {
    static LOCK: Mutex<()> = Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let path = expected_file(harness);
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    let mut lines: Vec<String> = old
        .lines()
        .filter(|l| !l.starts_with('#') && l.split('\t').next() != Some(flags))
        .map(String::from)
        .collect();
    let counts: Vec<String> = m
        .arrays
        .iter()
        .zip(bytes)
        .map(|(a, (l, s))| format!("{}={l}/{s}", a.names[0]))
        .collect();
    lines.push(format!("{flags}\t{hash}\t{}", counts.join(" ")));
    lines.sort();
    let head = "# Lackey's load/store bytes per array of tests/corpus/ harness, by build \
                flags and code hash;\n# regenerate: MAPVIS_CORPUS_LACKEY=write cargo test \
                --release --test corpus --test corpus_cpp\n";
    std::fs::create_dir_all(path.parent().unwrap()).expect("create tests/corpus/expected");
    std::fs::write(&path, format!("{head}{}\n", lines.join("\n")))
        .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// Lackey's counts for one build: stored, or measured afresh when none is
/// stored for this code, when asked, or when the build is the sample (then
/// they must agree with the stored line).
fn oracle(case: &Case, exe: &Path, dir: &Path, sample: bool) -> (Counts, String) {
    let flags = case.flags.join(" ");
    let hash = code_hash(exe, dir);
    let kept = stored(case.lib.harness, &flags, &hash);
    let mode = fresh();
    if let (Some(k), Fresh::Sample | Fresh::New, false) = (&kept, mode, sample) {
        return (k.clone(), "stored".into());
    }
    let (m, bytes) = lackey(exe, dir);
    let was: Counts = m
        .arrays
        .iter()
        .zip(&bytes)
        .map(|(a, (l, s))| (a.names[0].clone(), *l, *s))
        .collect();
    if let (Some(k), Fresh::Sample | Fresh::New) = (&kept, mode) {
        assert_eq!(
            &was,
            k,
            "{}: a fresh Lackey run disagrees with the stored counts in {}",
            case.label(),
            expected_file(case.lib.harness).display()
        );
    }
    let how = match (mode, &kept) {
        (Fresh::Write, _) | (Fresh::New, None) => {
            store(case.lib.harness, &flags, &hash, &m, &bytes);
            "measured and stored"
        }
        (_, None) => "measured (no stored line for this code)",
        _ => "measured afresh (the sample)",
    };
    (was, how.into())
}

/// Traces `exe` under mapvis and analyses it with the library's folders
/// as set_src_path.
fn mapvis(case: &Case, exe: &Path, dir: &Path, src_paths: &[PathBuf]) -> (Manifest, Analysis) {
    let manifest = dir.join("mapvis.manifest");
    let region = case.lib.function.map(|(name, calls)| {
        let calls = mapvis::trace::record::Calls::parse(calls).expect("the case's calls");
        mapvis::trace::naming::function_region(exe, name, calls)
            .unwrap_or_else(|e| panic!("{}: {e}", case.label()))
    });
    let req = TraceRequest {
        valgrind: find_valgrind(None).expect("valgrind on PATH"),
        exe: exe.to_path_buf(),
        args: vec![manifest.display().to_string()],
        trace_file: dir.join("t.mvt"),
        stack_depth: 12,
        heap_only: false,
        from_start: false,
        sync_events: false,
        region,
        window: None,
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
    let df = &a.locations.in_range(lo, hi).unwrap();
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

/// Builds and measures one case under both tools and checks every array.
fn run_case(case: &Case, src_paths: &[PathBuf], sample: bool) -> Outcome {
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = build(case, dir.path());
    let (want, how) = oracle(case, &exe, dir.path(), sample);
    let (mm, a) = mapvis(case, &exe, dir.path(), src_paths);
    let listed: Vec<&str> = mm.arrays.iter().map(|a| a.names[0].as_str()).collect();
    let counted: Vec<&str> = want.iter().map(|w| w.0.as_str()).collect();
    assert_eq!(
        listed,
        counted,
        "{}: Lackey's counts and mapvis's manifest list different arrays",
        case.label()
    );
    let mut o = Outcome::default();
    for (arr, w) in mm.arrays.iter().zip(&want) {
        o.arrays += 1;
        match check_array(&a, arr, (w.1, w.2)) {
            Ok(Verdict::Named) => o.named += 1,
            Ok(Verdict::BySite) => match case.site_ok(&arr.names[0]) {
                Some(_) => o.by_site += 1,
                None => o.errors.push(format!(
                    "{}: named by its allocation site, where {:?} is expected",
                    arr.names[0], arr.names
                )),
            },
            Err(e) => o.errors.push(e),
        }
    }
    eprintln!(
        "corpus {}: {} arrays, {} named, {} by site (accepted), {} wrong; Lackey's counts {how}",
        case.label(),
        o.arrays,
        o.named,
        o.by_site,
        o.errors.len()
    );
    o
}

/// Days since the epoch: which libraries and builds are the day's sample.
fn day() -> usize {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| (d.as_secs() / 86_400) as usize)
        .unwrap_or(0)
}

/// Runs `lib` with each set of flags; fails listing every wrong array.
pub fn corpus(lib: &Lib, builds: &[&[&str]]) {
    let src: Vec<PathBuf> = lib
        .includes
        .iter()
        .map(|i| cache().join(i))
        .chain([
            root().join("tests/corpus"),
            root().join("tests/corpus/idioms"),
        ])
        .collect();
    // A third of the libraries each day (by their harness's name), and
    // the next build of each every third day.
    let lib_key: usize = lib.harness.bytes().map(usize::from).sum();
    let sample = (day() + lib_key)
        .is_multiple_of(3)
        .then(|| (day() / 3) % builds.len());
    let mut errors = vec![];
    for (k, flags) in builds.iter().enumerate() {
        let case = Case { lib, flags };
        let o = run_case(&case, &src, sample == Some(k));
        errors.extend(o.errors.iter().map(|e| format!("{}: {e}", case.label())));
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// -O0, -O2, -O3 and -O2 -flto: every case's builds, as users build (the
/// issue's "Build at -O0, -O2, -O3 and -flto").
pub const FOUR: &[&[&str]] = &[&["-O0"], &["-O2"], &["-O3"], &["-O2", "-flto"]];
