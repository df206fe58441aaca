#!/usr/bin/env bash
# Fetches the public libraries that tests/corpus.rs builds its harnesses
# against, into a cache outside the repository (never into it):
#   ${MAPVIS_CORPUS_CACHE:-$HOME/.cache/mapvis/corpus}/
#     root/usr/include/...   Debian's header-only -dev packages, unpacked
#     crates/NAME-VERSION/   crates.io packages that bundle C sources
# Prints the cache folder on its last line. Every download that fails makes
# the script fail: the corpus test does not skip a library it cannot get.
# A second run finds everything in place and downloads nothing.
set -euo pipefail

cache="${MAPVIS_CORPUS_CACHE:-$HOME/.cache/mapvis/corpus}"
mkdir -p "$cache/dl" "$cache/root" "$cache/crates"

# Debian's packages: headers with their implementations (stb, uthash,
# xxhash, jsmn in C; Eigen, GLM, nanoflann, RapidJSON, Boost, xtensor with
# xtl, nlohmann's JSON, toml11, CLI11 in C++).
debs=(libeigen3-dev libstb-dev uthash-dev libglm-dev libxxhash-dev
      libjsmn-dev libnanoflann-dev rapidjson-dev
      libboost1.74-dev
      libxtensor-dev
      xtl-dev
      nlohmann-json3-dev
      libtoml11-dev
      libcli11-dev)
# crates.io packages that bundle a C library's sources, pinned (a crate's
# version never changes its contents), one a line.
crates=(lz4-sys/1.11.1+lz4-1.10.0 libz-sys/1.1.21 bzip2-sys/0.1.13+1.0.8
        libdeflate-sys/1.26.1
        lua-src/551.1.0
        libsqlite3-sys/0.40.0
        tree-sitter/0.25.10
        tree-sitter-c/0.24.2
        zstd-sys/2.1.3+zstd.1.5.7
        libmimalloc-sys/0.1.49
        rquickjs-sys/0.14.0
        lzma-sys/0.1.20
        pcre2-sys/0.2.10
)

for p in "${debs[@]}"; do
  stamp="$cache/root/.$p"
  [ -e "$stamp" ] && continue
  deb=$(ls "$cache/dl/${p}_"*.deb 2>/dev/null | head -1 || true)
  if [ -z "$deb" ]; then
    # apt-get download needs the package lists: read them once if the
    # package is unknown (root only, as in CI).
    if ! apt-cache show "$p" >/dev/null 2>&1; then
      apt-get update -qq
    fi
    (cd "$cache/dl" && apt-get download -qq "$p" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
    deb=$(ls "$cache/dl/${p}_"*.deb 2>/dev/null | head -1 || true)
    [ -n "$deb" ] || { echo "fetch.sh: apt-get download $p failed" >&2; exit 1; }
  fi
  dpkg-deb -x "$deb" "$cache/root"
  touch "$stamp"
done

for c in "${crates[@]}"; do
  name=${c%%/*}
  ver=${c#*/}
  dir="$cache/crates/$name-$ver"
  [ -e "$dir/.done" ] && continue
  file="$cache/dl/$name-$ver.crate"
  if [ ! -s "$file" ]; then
    curl -sSfL --retry 2 -o "$file.part" "https://static.crates.io/crates/$name/$name-$ver.crate" ||
      { echo "fetch.sh: downloading the crate $name $ver failed" >&2; rm -f "$file.part"; exit 1; }
    mv "$file.part" "$file"
  fi
  tar xzf "$file" -C "$cache/crates"
  touch "$dir/.done"
done

echo "$cache"
