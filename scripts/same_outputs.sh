#!/usr/bin/env bash
# same_outputs.sh BASE HEAD: runs scripts/outputs.tcl under two builds of
# mapvis and lists every saved table, page, dataset and printed line that
# differs between them, once the fields that carry an analysis id, a time
# or a file's modification time are masked. A refactoring that changes no
# behaviour must print "same" (issue: outputs unchanged across a move).
#
# Both runs use one working folder path, so the compiled programs and the
# paths they print agree. Exit status 0 when the outputs are the same.
set -euo pipefail
base=$(realpath "$1")
head=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/mapvis-same.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Masks what differs between two runs of one build: analysis ids (16 hex
# digits), modification and saving times, run times in seconds, the peak RSS of a profiled run, progress lines, addresses in
# shared libraries (ASLR) and the heap profiler's times in nanoseconds.
# The heap pages plot wall-clock times, so every number in them is masked:
# their counts are compared exactly in alloc_sites.csv and heap_stats.csv.
mask() {
    local numbers='s/^$//'
    case "$1" in *heap_profile.html|*lifetime_histogram.html)
        numbers='s/[0-9][0-9.e+-]*/N/g' ;;
    esac
    sed -E -e 's/\b[0-9a-f]{16}\b/ID/g' \
        -e 's/"(mtime_ns|saved)": [0-9]+/"\1": T/g' \
        -e 's/\b0x7f[0-9a-f]{10}\b/LIBADDR/g' \
        -e 's/at [0-9]+ ns/at T ns/g' -e 's/\b[0-9]+\.[0-9]+ s\b/T s/g' \
        -e 's/peak RSS [0-9]+ bytes: [0-9.]+x/peak RSS R/' \
        -e '/^\[mapvis: /d' -e '/^ *[0-9.]+ [kMG]? ?accesses analysed$/d' \
        -e "$numbers" "$1"
}

run() {
    rm -rf "$work/w"
    mkdir "$work/w"
    (cd "$work/w" && "$1" "$here/outputs.tcl" >stdout.txt 2>&1) ||
        { echo "$1 failed: $(tail -3 "$work/w/stdout.txt")"; exit 2; }
    rm -rf "$work/w/.mapvis/bin" "$work/w/.mapvis/lock" \
        "$work/w/.mapvis/manifest.json" "$work/w/.mapvis/session.json"
    find "$work/w" -name '*.mvt' -delete
    find "$work/w" -name '*.mvh' -delete
    mv "$work/w" "$work/$2"
}

run "$base" base
run "$head" head
status=0
while IFS= read -r f; do
    rel=${f#"$work/base/"}
    if [ ! -e "$work/head/$rel" ]; then
        echo "only in base: $rel"; status=1
    elif ! cmp -s "$f" "$work/head/$rel" &&
        ! cmp -s <(mask "$f") <(mask "$work/head/$rel"); then
        echo "differs: $rel"; status=1
        diff <(mask "$f") <(mask "$work/head/$rel") | head -6 | cut -c1-160
    fi
done < <(find "$work/base" -type f | sort)
while IFS= read -r f; do
    rel=${f#"$work/head/"}
    [ -e "$work/base/$rel" ] || { echo "only in head: $rel"; status=1; }
done < <(find "$work/head" -type f | sort)
[ $status = 0 ] && echo "same: $(find "$work/base" -type f | wc -l) files"
exit $status
