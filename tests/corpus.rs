//! The C part of the corpus: real public C libraries and programs that
//! nobody on the team wrote, each driven by a harness of ours that puts
//! the pins around real work, every array checked against Valgrind's
//! Lackey under its name. How a case is built, measured and checked, and
//! how Lackey's stored counts are regenerated: `tests/corpus/harness.rs`.
//! The C++ part is `tests/corpus_cpp.rs`.
mod common;
#[path = "corpus/harness.rs"]
mod harness;

use harness::{bundled, corpus, deb, idiom, Lib, SiteOk, O0_O2};

const LZ4: &str = "crates/lz4-sys-1.11.1+lz4-1.10.0/liblz4/lib";
const ZLIB: &str = "crates/libz-sys-1.1.21/src/zlib";
const BZIP2: &str = "crates/bzip2-sys-0.1.13+1.0.8/bzip2-1.0.8";
const DEFLATE: &str = "crates/libdeflate-sys-1.26.1/libdeflate";
const LUA: &str = "crates/lua-src-551.1.0/lua-5.4.9";

/// -O0, -O2, -O3 and -O2 -flto: the builds of the larger libraries.
const FOUR: &[&[&str]] = &[&["-O0"], &["-O2"], &["-O3"], &["-O2", "-flto"]];

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
fn lua() {
    let lib = Lib {
        // Lua seeds its string hashes with the time and addresses, and
        // its sort takes pivots from the clock: constants make both runs
        // alike (see the harness).
        defines: &["-Dluai_makeseed(L)=0", "-Dl_randomizePivot()=0"],
        link: &["-lm"],
        ..bundled(
            "lua.c",
            &[LUA],
            &[
                "lapi.c", "lauxlib.c", "lbaselib.c", "lcode.c", "lcorolib.c", "lctype.c",
                "ldblib.c", "ldebug.c", "ldo.c", "ldump.c", "lfunc.c", "lgc.c", "linit.c",
                "liolib.c", "llex.c", "lmathlib.c", "lmem.c", "loadlib.c", "lobject.c",
                "lopcodes.c", "loslib.c", "lparser.c", "lstate.c", "lstring.c", "lstrlib.c",
                "ltable.c", "ltablib.c", "ltm.c", "lundump.c", "lutf8lib.c", "lvm.c", "lzio.c",
            ],
        )
    };
    corpus(&lib, FOUR);
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
