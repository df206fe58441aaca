#!/usr/bin/env bash
# bench_heap.sh (run as `scripts/bench.sh heap [OPS]`): the native heap
# profiler against heaptrack and Valgrind massif on scripts/alloc_bench.c
# (THREADS threads x OPS malloc/free pairs each, default 5 M), at 1, 2 and 4
# threads, one run each. Every time is the whole command's wall time, given
# as a ratio to the native run of the same thread count.
#
# Needs: cc, python3, heaptrack (Debian: apt-get install heaptrack), valgrind,
# a release build (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."
OPS=${1:-5000000}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mapvis/target}"
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --bins
LIB=$(ls -t "$CARGO_TARGET_DIR"/release/build/mapvis-*/out/valgrind-tool/libmv_heap.so | head -1)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -g -pthread -Ipins -o "$WORK/alloc_bench" scripts/alloc_bench.c

now() { python3 -c 'import time; print(time.monotonic())'; }
ratio() { python3 -c 'import sys; print("%.1f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$1" "$2"; }
timeit() { local t0 t1; t0=$(now); "$@" >/dev/null 2>&1 || true; t1=$(now); python3 -c "print('%.3f' % ($t1 - $t0))"; }

echo "# heap profiler benchmark, $(date -u +%Y-%m-%d), $(nproc) cores, alloc_bench THREADS $OPS (cc -O2)"
have_ht=1; command -v heaptrack >/dev/null || have_ht=0
for t in 1 2 4; do
  native=$(timeit "$WORK/alloc_bench" "$t" "$OPS")
  ours=$(timeit env LD_PRELOAD="$LIB" MAPVIS_HEAP_OUT="$WORK/p.mvh" "$WORK/alloc_bench" "$t" "$OPS")
  size=$(stat -c %s "$WORK/p.mvh")
  line="threads $t: native ${native}s; mapvis heap profiler ${ours}s = $(ratio "$ours" "$native")x ($((size / 1000000)) MB)"
  if [ $have_ht = 1 ]; then
    ht=$(timeit heaptrack -o "$WORK/ht" "$WORK/alloc_bench" "$t" "$OPS")
    line="$line; heaptrack ${ht}s = $(ratio "$ht" "$native")x"
  fi
  ms=$(timeit valgrind --tool=massif --massif-out-file="$WORK/massif.out" "$WORK/alloc_bench" "$t" "$OPS")
  line="$line; massif ${ms}s = $(ratio "$ms" "$native")x"
  echo "$line"
  rm -f "$WORK"/p.mvh "$WORK"/ht* "$WORK/massif.out"
done
