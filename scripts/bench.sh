#!/usr/bin/env bash
# bench.sh: mapvis's benchmarks. Every figure is a ratio against a baseline
# measured in the same run, reported as the median of several runs (the
# machines are shared and noisy). Copy the printed lines to docs/PERFORMANCE.md.
#
#   scripts/bench.sh [RUNS]          default RUNS=5 (Lackey runs once: ~80 s)
#
# Needs: valgrind, cc, python3, a release build (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mapvis/target}"
cargo build --release --quiet --bins --examples
MAPVIS="$CARGO_TARGET_DIR/release/mapvis"
BENCH="$CARGO_TARGET_DIR/release/examples/bench"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

now() { python3 -c 'import time; print(time.monotonic())'; }
median() { python3 -c 'import sys, statistics; print("%.3f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
ratio() { python3 -c 'import sys; print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$1" "$2"; }
timeit() { local t0 t1; t0=$(now); "$@" >/dev/null 2>&1 || true; t1=$(now); python3 -c "print($t1 - $t0)"; }

echo "# mapvis benchmarks, $(date -u +%Y-%m-%d), $(nproc) cores, valgrind $(valgrind --version)"

# --- 1. Tracer: N=128 double matmul at -O0, pins around the multiply -------
cc -g -O0 -DTYPE=double -Ipins -o "$WORK/matmul" scripts/matmul.c
LIB=$("$MAPVIS" --install-tool)
none=(); ours=()
for _ in $(seq "$RUNS"); do
  none+=("$(timeit valgrind --tool=none "$WORK/matmul" ijk 128)")
  ours+=("$(timeit env VALGRIND_LIB="$LIB" valgrind --tool=mapvis -q --trace-file="$WORK/mm.mvt" "$WORK/matmul" ijk 128)")
done
t_none=$(median "${none[@]}"); t_ours=$(median "${ours[@]}")
bytes=$(stat -c %s "$WORK/mm.mvt")
accesses=$("$BENCH" count "$WORK/mm.mvt")
echo "tracer: none ${t_none}s, mapvis ${t_ours}s: mapvis/none = $(ratio "$t_ours" "$t_none") (goal <= 3)"
echo "trace: $accesses accesses, $bytes bytes: $(ratio "$bytes" "$accesses") bytes/access (goal <= 4)"
if [ "${SKIP_LACKEY:-0}" != 1 ]; then
  t_lackey=$(timeit valgrind --tool=lackey --trace-mem=yes --log-file="$WORK/lackey.log" "$WORK/matmul" ijk 128)
  echo "lackey: ${t_lackey}s ($(stat -c %s "$WORK/lackey.log") bytes): lackey/mapvis = $(ratio "$t_lackey" "$t_ours") (goal >= 20)"
  rm -f "$WORK/lackey.log"
fi

# --- 2. Reader, analysis, import and figures (Rust, one core) ---------------
"$BENCH" all "$WORK/mm.mvt" "$WORK/matmul" "$RUNS"
