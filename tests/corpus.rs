//! The C part of the corpus: real public C libraries and programs that
//! nobody on the team wrote, each driven by a harness of ours that puts
//! the pins around real work, every array checked against Valgrind's
//! Lackey under its name. How a case is built, measured and checked, and
//! how Lackey's stored counts are regenerated: `tests/corpus/harness.rs`.
//! The C++ part is `tests/corpus_cpp.rs`.
mod common;
#[path = "corpus/harness.rs"]
mod harness;

use harness::{bundled, corpus, deb, idiom, Lib, SiteOk, FOUR};

const LZ4: &str = "crates/lz4-sys-1.11.1+lz4-1.10.0/liblz4/lib";
const ZLIB: &str = "crates/libz-sys-1.1.21/src/zlib";
const BZIP2: &str = "crates/bzip2-sys-0.1.13+1.0.8/bzip2-1.0.8";
const DEFLATE: &str = "crates/libdeflate-sys-1.26.1/libdeflate";
const LUA: &str = "crates/lua-src-551.1.0/lua-5.4.9";
const SQLITE: &str = "crates/libsqlite3-sys-0.40.0/sqlite3";
const TREE_SITTER: &str = "crates/tree-sitter-0.25.10/src";
const TREE_SITTER_INC: &str = "crates/tree-sitter-0.25.10/include";
const QUICKJS: &str = "crates/rquickjs-sys-0.14.0/quickjs";
const MIMALLOC: &str = "crates/libmimalloc-sys-0.1.49/c_src/mimalloc/v2/src";
const MIMALLOC_INC: &str = "crates/libmimalloc-sys-0.1.49/c_src/mimalloc/v2/include";
const ZSTD: &str = "crates/zstd-sys-2.1.3+zstd.1.5.7/zstd/lib";
const LZMA: &str = "crates/lzma-sys-0.1.20/xz-5.2/src";
const PCRE2: &str = "crates/pcre2-sys-0.2.10/upstream/src";

#[test]
fn uthash() {
    let lib = deb("uthash.c", &[]);
    corpus(&lib, &[FOUR, &[&["-O0", "-no-pie"]]].concat());
}

#[test]
fn xxhash() {
    let lib = Lib {
        site_ok: &[
            SiteOk {
                array: "data",
                flags: "-static",
                why: STATIC_WHY,
            },
            SiteOk {
                array: "state",
                flags: "-static",
                why: STATIC_WHY,
            },
        ],
        ..deb("xxhash.c", &[])
    };
    corpus(&lib, &[FOUR, &[&["-O2", "-static"]]].concat());
}

/// Why a `-static` executable's heap arrays are `<unrecorded memory>`.
const STATIC_WHY: &str = "a -static executable links glibc's malloc into itself, which      Valgrind cannot replace: the tool records no block, and the analysis names the heap      `<unrecorded memory>` with a note saying so";

#[test]
fn jsmn() {
    let lib = deb("jsmn.c", &[]);
    corpus(&lib, &[FOUR, &[&["-O2", "-no-pie"]]].concat());
}

#[test]
fn stb_image() {
    let lib = deb("stb_image.c", &["-lm"]);
    corpus(&lib, FOUR);
}

#[test]
fn stb_perlin() {
    let lib = deb("stb_perlin.c", &["-lm"]);
    corpus(&lib, FOUR);
}

#[test]
fn lz4() {
    let lib = bundled("lz4.c", &[LZ4], &["lz4.c"]);
    corpus(&lib, FOUR);
}

/// Traced by function, as built, the pins ignored: the one call of
/// LZ4_decompress_safe (inlined into main under -flto).
#[test]
fn lz4_by_function() {
    let lib = Lib {
        function: Some(("LZ4_decompress_safe", "all")),
        ..bundled("rg_lz4.c", &[LZ4], &["lz4.c"])
    };
    corpus(&lib, FOUR);
}

/// Traced by function on the third of five calls, the pins ignored.
#[test]
fn zlib_third_call() {
    let lib = Lib {
        function: Some(("adler32", "3")),
        ..bundled("rg_zlib.c", &[ZLIB], &["adler32.c", "zutil.c"])
    };
    corpus(&lib, FOUR);
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
    corpus(&lib, FOUR);
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
    corpus(&lib, FOUR);
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
    corpus(&lib, FOUR);
}

/// Lua 5.4's sources, all but the stand-alone interpreter and compiler.
const LUA_SOURCES: &[&str] = &[
    "lapi.c",
    "lauxlib.c",
    "lbaselib.c",
    "lcode.c",
    "lcorolib.c",
    "lctype.c",
    "ldblib.c",
    "ldebug.c",
    "ldo.c",
    "ldump.c",
    "lfunc.c",
    "lgc.c",
    "linit.c",
    "liolib.c",
    "llex.c",
    "lmathlib.c",
    "lmem.c",
    "loadlib.c",
    "lobject.c",
    "lopcodes.c",
    "loslib.c",
    "lparser.c",
    "lstate.c",
    "lstring.c",
    "lstrlib.c",
    "ltable.c",
    "ltablib.c",
    "ltm.c",
    "lundump.c",
    "lutf8lib.c",
    "lvm.c",
    "lzio.c",
];

/// Lua, with its string hashes' seed and its sort's pivots made constant
/// (they come from the time and addresses): both runs must do the same
/// work.
fn lua_lib() -> Lib {
    Lib {
        defines: &["-Dluai_makeseed(L)=0", "-Dl_randomizePivot()=0"],
        link: &["-lm"],
        ..bundled("lua.c", &[LUA], LUA_SOURCES)
    }
}

#[test]
fn lua() {
    // With -O2 -flto, gcc describes the harness's global `static const
    // char script[]` in the link-time unit by a DW_TAG_variable that has
    // only a DW_AT_location and a DW_AT_abstract_origin into the
    // compile-time unit, where its name is (a DW_FORM_ref_addr into
    // another unit).
    corpus(&lua_lib(), FOUR);
}

// FAILS: a userdata block that Lua allocates and the harness keeps in
// `acc` (lua_newuserdata's result, 32 bytes into the block, after Lua's
// header) is named by Lua's own stack slot that last held it,
// `(L->l.l.stack.p)[i].val.value_.gc` at -O0 and
// `(l->g.l_registry.value_.gc[i]->l.l.stack.p)[i].val.value_.gc` at -O2,
// never `acc`: a holder is looked for only at a block's start (or 8 or 16
// bytes in). Every build fails so; the harness lists `acc` only when
// built with -DCORPUS_LUA_USERDATA.
#[test]
#[ignore = "FAILS: a Lua userdata block held by the harness is named by Lua's stack slot"]
fn lua_userdata() {
    corpus(
        &lua_lib(),
        &[
            &["-O0", "-DCORPUS_LUA_USERDATA"],
            &["-O2", "-DCORPUS_LUA_USERDATA"],
        ],
    );
}

#[test]
fn sqlite() {
    let lib = Lib {
        // No threads, and randomness seeded by zeros (SQLite reads
        // /dev/urandom otherwise): both runs must do the same work.
        defines: &[
            "-DSQLITE_THREADSAFE=0",
            "-DSQLITE_OMIT_RANDOMNESS",
            "-DSQLITE_OMIT_LOAD_EXTENSION",
            // Its own allocator, over the harness's block (see there).
            "-DSQLITE_ENABLE_MEMSYS5",
        ],
        link: &["-lm"],
        ..bundled("sqlite.c", &[SQLITE], &["sqlite3.c"])
    };
    // The amalgamation (9 MB of C in one unit) takes gcc about a minute
    // and a half of processor time at each optimised build.
    corpus(&lib, FOUR);
}

#[test]
fn treesitter() {
    let lib = Lib {
        includes: &[TREE_SITTER, TREE_SITTER_INC],
        ..bundled(
            "treesitter.c",
            &[TREE_SITTER],
            // The runtime in one unit, and the C grammar's parser from its
            // own crate.
            &["lib.c", "../../tree-sitter-c-0.24.2/src/parser.c"],
        )
    };
    corpus(&lib, FOUR);
}

#[test]
fn zstd() {
    let lib = bundled(
        "zstd.c",
        &[ZSTD],
        &[
            "common/debug.c",
            "common/entropy_common.c",
            "common/error_private.c",
            "common/fse_decompress.c",
            "common/pool.c",
            "common/threading.c",
            "common/xxhash.c",
            "common/zstd_common.c",
            "compress/fse_compress.c",
            "compress/hist.c",
            "compress/huf_compress.c",
            "compress/zstd_compress.c",
            "compress/zstd_compress_literals.c",
            "compress/zstd_compress_sequences.c",
            "compress/zstd_compress_superblock.c",
            "compress/zstd_double_fast.c",
            "compress/zstd_fast.c",
            "compress/zstd_lazy.c",
            "compress/zstd_ldm.c",
            "compress/zstd_opt.c",
            "compress/zstd_preSplit.c",
            "decompress/huf_decompress.c",
            "decompress/huf_decompress_amd64.S",
            "decompress/zstd_ddict.c",
            "decompress/zstd_decompress.c",
            "decompress/zstd_decompress_block.c",
        ],
    );
    // With -O2 -flto, the arena block is held by `ar.base`, a struct on
    // main's stack that the link-time unit describes through a
    // DW_AT_abstract_origin into the compile-time unit, where its name
    // and its type (struct arena) are.
    corpus(&lib, FOUR);
}

fn quickjs_lib() -> Lib {
    Lib {
        defines: &["-D_GNU_SOURCE"],
        link: &["-lm"],
        ..bundled(
            "quickjs.c",
            &[QUICKJS],
            &["quickjs.c", "libregexp.c", "libunicode.c", "dtoa.c"],
        )
    }
}

#[test]
fn quickjs() {
    // From -O2 on, main keeps `samples` (the harness's malloc block that
    // the script writes through an ArrayBuffer made over it) in a
    // register; its other holder is the ArrayBuffer's data pointer, in a
    // block QuickJS carved from one of its arenas, reached from `rt`
    // through five arena blocks typed by their allocation statements
    // (`(((rt->arena_state.free_arena_list[i].prev)[j].free_link.next)[k]
    // .u.block_idx->arena_state.free_arena_list[l].prev)[m].link.prev`).
    // A path through more than three other blocks does not overrule the
    // statement, so the block is `samples`, with a note giving the path.
    corpus(&quickjs_lib(), FOUR);
}

// FAILS: a block the harness allocates with QuickJS's own wrapper
// (`notes = js_malloc(ctx, ...)`) is carved by QuickJS-ng from one of its
// arenas (js_arena_malloc), which it allocates with malloc; mapvis sees
// only the arena and names the block's bytes by the arena's holder,
// `rt->arena_state.free_arena_list[i].prev` at -O0 (a longer path at
// -O2), where `notes` is expected. The harness lists `notes` only when
// built with -DCORPUS_QUICKJS_NOTES.
#[test]
#[ignore = "FAILS: a js_malloc block carved from QuickJS's arena is named by the arena's holder"]
fn quickjs_js_malloc() {
    corpus(&quickjs_lib(), &[&["-O0", "-DCORPUS_QUICKJS_NOTES"]]);
}

/// Why mimalloc's blocks come out as `<unrecorded memory>` (with a note).
const MIMALLOC_WHY: &str = "mimalloc maps its segments with mmap and carves its blocks from \
     them without telling Valgrind (no client requests), so the tool sees no block and no \
     holder, only the mapping, which it leaves `<unrecorded memory>` (mimalloc maps it \
     through layers of helpers, one of which hands the address back through an \
     out-parameter)";

#[test]
fn mimalloc() {
    let lib = Lib {
        includes: &[MIMALLOC, MIMALLOC_INC],
        // A release build, as the crate makes by default; mimalloc prints
        // its build's date and time (options.c), which would change the
        // code's hash that keys the stored counts at every build.
        defines: &[
            "-DMI_DEBUG=0",
            "-Wno-builtin-macro-redefined",
            "-D__DATE__=\"corpus\"",
            "-D__TIME__=\"corpus\"",
        ],
        site_ok: &[
            SiteOk {
                array: "vec",
                flags: "",
                why: MIMALLOC_WHY,
            },
            SiteOk {
                array: "mat",
                flags: "",
                why: MIMALLOC_WHY,
            },
            SiteOk {
                array: "counts",
                flags: "",
                why: MIMALLOC_WHY,
            },
            SiteOk {
                array: "words",
                flags: "",
                why: MIMALLOC_WHY,
            },
            SiteOk {
                array: "head",
                flags: "",
                why: MIMALLOC_WHY,
            },
        ],
        ..bundled("mimalloc.c", &[MIMALLOC], &["static.c"])
    };
    corpus(&lib, FOUR);
}

/// liblzma's sources as the lzma-sys crate compiles them: every file of
/// its folders but the small CRC variants and the table generators, and
/// two helpers of xz's common folder.
const LZMA_SOURCES: &[&str] = &[
    "common/tuklib_cpucores.c",
    "common/tuklib_physmem.c",
    "liblzma/check/check.c",
    "liblzma/check/crc32_fast.c",
    "liblzma/check/crc32_table.c",
    "liblzma/check/crc64_fast.c",
    "liblzma/check/crc64_table.c",
    "liblzma/check/sha256.c",
    "liblzma/common/alone_decoder.c",
    "liblzma/common/alone_encoder.c",
    "liblzma/common/auto_decoder.c",
    "liblzma/common/block_buffer_decoder.c",
    "liblzma/common/block_buffer_encoder.c",
    "liblzma/common/block_decoder.c",
    "liblzma/common/block_encoder.c",
    "liblzma/common/block_header_decoder.c",
    "liblzma/common/block_header_encoder.c",
    "liblzma/common/block_util.c",
    "liblzma/common/common.c",
    "liblzma/common/easy_buffer_encoder.c",
    "liblzma/common/easy_decoder_memusage.c",
    "liblzma/common/easy_encoder.c",
    "liblzma/common/easy_encoder_memusage.c",
    "liblzma/common/easy_preset.c",
    "liblzma/common/filter_buffer_decoder.c",
    "liblzma/common/filter_buffer_encoder.c",
    "liblzma/common/filter_common.c",
    "liblzma/common/filter_decoder.c",
    "liblzma/common/filter_encoder.c",
    "liblzma/common/filter_flags_decoder.c",
    "liblzma/common/filter_flags_encoder.c",
    "liblzma/common/hardware_cputhreads.c",
    "liblzma/common/hardware_physmem.c",
    "liblzma/common/index.c",
    "liblzma/common/index_decoder.c",
    "liblzma/common/index_encoder.c",
    "liblzma/common/index_hash.c",
    "liblzma/common/outqueue.c",
    "liblzma/common/stream_buffer_decoder.c",
    "liblzma/common/stream_buffer_encoder.c",
    "liblzma/common/stream_decoder.c",
    "liblzma/common/stream_encoder.c",
    "liblzma/common/stream_encoder_mt.c",
    "liblzma/common/stream_flags_common.c",
    "liblzma/common/stream_flags_decoder.c",
    "liblzma/common/stream_flags_encoder.c",
    "liblzma/common/vli_decoder.c",
    "liblzma/common/vli_encoder.c",
    "liblzma/common/vli_size.c",
    "liblzma/delta/delta_common.c",
    "liblzma/delta/delta_decoder.c",
    "liblzma/delta/delta_encoder.c",
    "liblzma/lz/lz_decoder.c",
    "liblzma/lz/lz_encoder.c",
    "liblzma/lz/lz_encoder_mf.c",
    "liblzma/lzma/fastpos_table.c",
    "liblzma/lzma/lzma2_decoder.c",
    "liblzma/lzma/lzma2_encoder.c",
    "liblzma/lzma/lzma_decoder.c",
    "liblzma/lzma/lzma_encoder.c",
    "liblzma/lzma/lzma_encoder_optimum_fast.c",
    "liblzma/lzma/lzma_encoder_optimum_normal.c",
    "liblzma/lzma/lzma_encoder_presets.c",
    "liblzma/rangecoder/price_table.c",
    "liblzma/simple/arm.c",
    "liblzma/simple/armthumb.c",
    "liblzma/simple/ia64.c",
    "liblzma/simple/powerpc.c",
    "liblzma/simple/simple_coder.c",
    "liblzma/simple/simple_decoder.c",
    "liblzma/simple/simple_encoder.c",
    "liblzma/simple/sparc.c",
    "liblzma/simple/x86.c",
];

#[test]
fn lzma() {
    let lib = Lib {
        // The crate's folders; its own config.h (at the crate's root)
        // says which coders, checks and match finders are built.
        includes: &[
            LZMA,
            "crates/lzma-sys-0.1.20",
            "crates/lzma-sys-0.1.20/xz-5.2/src/liblzma/api",
            "crates/lzma-sys-0.1.20/xz-5.2/src/liblzma/common",
            "crates/lzma-sys-0.1.20/xz-5.2/src/liblzma/check",
            "crates/lzma-sys-0.1.20/xz-5.2/src/liblzma/delta",
            "crates/lzma-sys-0.1.20/xz-5.2/src/liblzma/lz",
            "crates/lzma-sys-0.1.20/xz-5.2/src/liblzma/lzma",
            "crates/lzma-sys-0.1.20/xz-5.2/src/liblzma/rangecoder",
            "crates/lzma-sys-0.1.20/xz-5.2/src/liblzma/simple",
            "crates/lzma-sys-0.1.20/xz-5.2/src/common",
        ],
        defines: &["-DHAVE_CONFIG_H=1", "-std=c99", "-pthread"],
        ..bundled("lzma.c", &[LZMA], LZMA_SOURCES)
    };
    // With -O2 -flto the pool block is held by `pool.base`, a struct on
    // main's stack read, as zstd's `ar`, through the compile-time unit.
    corpus(&lib, FOUR);
}

#[test]
fn pcre2() {
    // pcre2_match.c alone takes gcc a dozen seconds at -O2.
    corpus(&pcre2_lib(), FOUR);
}

// The blocks reached through a member of a PCRE2 structure: the match
// data's frames `mdata->heapframes` and the character tables `ctypes`,
// also `cc->tables`. The harness declares `pcre2_match_data *mdata` (and
// `pcre2_compile_context *cc`), and `pcre2_match_data` is PCRE2's macro
// for the typedef `pcre2_match_data_8`: the type as the statement spells
// it names none the debug information knows, so the block's members are
// read with the structure type its holders point to (`match_data` in
// pcre2_match, whose `pcre2_match_data_8` is complete there; the
// harness's own is opaque). The match data is no whole number of that
// type (its ovector is declared 131072 long), so it is one structure,
// not an array. The harness lists the two only when built with
// -DCORPUS_PCRE2_MEMBERS.
#[test]
fn pcre2_members() {
    corpus(&pcre2_lib(), &[&["-O0", "-DCORPUS_PCRE2_MEMBERS"]]);
}

// FAILS at -O2: `mdata->heapframes` is `match_data->heapframes` (all its
// 603794 load and 617364 store bytes), the statement reader's name from
// pcre2_match's own line: no holder of the match data's start with a
// structure type is seen, so its members are not known, and a word of a
// structure whose type is unknown is no path. main keeps `mdata` in a
// register there, and the library's locals that hold it live in
// registers of frames below the region's opener, which the snapshot does
// not read.
#[test]
#[ignore = "FAILS: a member of a block whose type is spelled through a macro is named by the library's local (-O2)"]
fn pcre2_members_o2() {
    corpus(&pcre2_lib(), &[&["-O2", "-DCORPUS_PCRE2_MEMBERS"]]);
}

/// PCRE2, with its 8-bit code units, as the pcre2-sys crate builds it.
fn pcre2_lib() -> Lib {
    Lib {
        includes: &[
            PCRE2,
            "crates/pcre2-sys-0.2.10/upstream/deps",
            "crates/pcre2-sys-0.2.10/upstream/include",
        ],
        // The crate's macros but SUPPORT_JIT: the harness does not ask
        // for the JIT, and its compiler (sljit, in pcre2_jit_compile.c)
        // would add half again to an optimised build's compile time.
        defines: &[
            "-DPCRE2_CODE_UNIT_WIDTH=8",
            "-DHAVE_STDLIB_H=1",
            "-DHAVE_MEMMOVE=1",
            "-DHAVE_CONFIG_H=1",
            "-DPCRE2_STATIC=1",
            "-DSTDC_HEADERS=1",
            "-DSUPPORT_PCRE2_8=1",
            "-DSUPPORT_UNICODE=1",
        ],
        ..bundled(
            "pcre2.c",
            &[PCRE2],
            // Every file of the folder as the crate compiles it
            // (pcre2_jit_match.c, pcre2_jit_misc.c and
            // pcre2_ucptables.c are included by others).
            &[
                "pcre2_auto_possess.c",
                "pcre2_chartables.c",
                "pcre2_chkdint.c",
                "pcre2_compile.c",
                "pcre2_compile_class.c",
                "pcre2_config.c",
                "pcre2_context.c",
                "pcre2_convert.c",
                "pcre2_dfa_match.c",
                "pcre2_error.c",
                "pcre2_extuni.c",
                "pcre2_find_bracket.c",
                "pcre2_jit_compile.c",
                "pcre2_maketables.c",
                "pcre2_match.c",
                "pcre2_match_data.c",
                "pcre2_newline.c",
                "pcre2_ord2utf.c",
                "pcre2_pattern_info.c",
                "pcre2_script_run.c",
                "pcre2_serialize.c",
                "pcre2_string_utils.c",
                "pcre2_study.c",
                "pcre2_substitute.c",
                "pcre2_substring.c",
                "pcre2_tables.c",
                "pcre2_ucd.c",
                "pcre2_valid_utf.c",
                "pcre2_xclass.c",
            ],
        )
    }
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
    let lib = Lib {
        site_ok: &[SiteOk {
            array: "h",
            flags: "-static",
            why: STATIC_WHY,
        }],
        ..idiom("idioms/nopie.c", &[])
    };
    corpus(
        &lib,
        &[
            &["-O0", "-no-pie"],
            &["-O2", "-no-pie"],
            &["-O0", "-static"],
        ],
    );
}
