#!/usr/bin/env bash
# bench.sh: mapvis's benchmarks. Every figure is a ratio against a baseline
# measured in the same run, reported as the median of several runs (the
# machines are shared and noisy). Copy the printed lines to docs/PERFORMANCE.md.
#
#   scripts/bench.sh [RUNS]          default RUNS=5 (Lackey runs once: ~80 s)
#   scripts/bench.sh heap [OPS] [RUNS]  the whole `heap_profile; alloc_sites`
#                                    command against heaptrack's recording
#                                    (and heaptrack_print), with peak RSS, at
#                                    1, 2, 4 threads (default 3 runs, ~5 min)
#   scripts/bench.sh scale [N...]    the whole pipeline on big traces: matmul
#                                    ijk N (default 128 256 512; 512 is 2 G
#                                    accesses, ~4 minutes and 2.5 GB of disk),
#                                    the analysis timed as a whole process;
#                                    env SCALE_RUNS=R interleaved runs,
#                                    SCALE_FIGURES=0 skips the figures
#   scripts/bench.sh figures [RUNS] [N]  page size and headless Chromium's
#                                    time to draw each figure of an N x N
#                                    transpose (default 5 runs, N=256), as a
#                                    ratio to a blank plotly page
#   scripts/bench.sh sites [RUNS] [N...]  naming N heap blocks allocated by N
#                                    statements of one file, the whole mapvis
#                                    process against the bare tool (default 3
#                                    runs, N = 1000 3000 10000; each run is
#                                    capped at SITES_CAP=600 s)
#   scripts/bench.sh recursion [RUNS] [N...]  the whole pipeline on a
#                                    recursion N frames deep (default 3
#                                    runs, N = 100000: 200 000 locals) against
#                                    the bare tool
#   scripts/bench.sh roots [RUNS] [N]  the tracer's naming evidence (root
#                                    snapshot, pointer stores) on a region
#                                    building an N-node tree and one after
#                                    180 MB of heap, against --tool=none
#                                    (default 3 runs, N = 100000)
#   scripts/bench.sh region [RUNS] [STEPS]  tracing by function against the
#                                    pins and --tool=none, 10 s outside the
#                                    region (default 3 runs, 500 M steps)
#   scripts/bench.sh footprint [RUNS] [N...]  every command as a whole
#                                    process on a naive heap transpose of
#                                    N x N doubles (default 3 runs, N=3000:
#                                    18 M addresses), wall, accesses/s and
#                                    peak RSS against the goals
#   scripts/bench.sh locality [RUNS]  run_gleipnir, memory_trace_analysis
#                                    and cache_stats against cachegrind
#                                    --cache-sim=yes on one binary, a new
#                                    geometry, what_if with 1 and 8 layouts
#                                    (default 3 runs: matmul N=256, a
#                                    2000 x 2000 transpose)
#   scripts/bench.sh lackey [RUNS] [N]  Lackey --trace-mem against a whole
#                                    `run_gleipnir` process on a short run
#                                    (default 5 runs, matmul N=64)
#
# Needs: valgrind, cc, python3, a release build (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = heap ]; then
  exec bash scripts/bench_heap.sh "${@:2}"
fi
if [ "${1:-}" = footprint ]; then
  exec bash scripts/bench_footprint.sh "${@:2}"
fi
if [ "${1:-}" = scale ]; then
  exec bash scripts/bench_scale.sh "${@:2}"
fi
if [ "${1:-}" = figures ]; then
  exec bash scripts/bench_figures.sh "${@:2}"
fi
if [ "${1:-}" = sites ]; then
  exec bash scripts/bench_sites.sh "${@:2}"
fi
if [ "${1:-}" = recursion ]; then
  exec bash scripts/bench_recursion.sh "${@:2}"
fi
if [ "${1:-}" = roots ]; then
  exec bash scripts/bench_roots.sh "${@:2}"
fi
if [ "${1:-}" = region ]; then
  exec bash scripts/bench_region.sh "${@:2}"
fi
if [ "${1:-}" = locality ]; then
  exec bash scripts/bench_locality.sh "${@:2}"
fi
if [ "${1:-}" = lackey ]; then
  exec bash scripts/bench_lackey.sh "${@:2}"
fi
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
  # The tool creates its trace as a new file (O_EXCL): remove the last run's.
  rm -f "$WORK/mm.mvt"
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
"$BENCH" stages "$WORK/mm.mvt" "$WORK/matmul"
"$BENCH" locality "$WORK/mm.mvt" "$WORK/matmul" "$RUNS"

# --- 3. The shell commands end to end, as a user runs them -----------------
# memory_trace_analysis includes saving the analysis to .mapvis/;
# filtering_process writes the allocation info (the order data of more than
# 4 M accesses only with `save`, timed on its own).
mkdir -p "$WORK/shell"
cat > "$WORK/shell/cmds.tcl" <<EOF
load_exe {$WORK/matmul}
load_trace {$WORK/mm.mvt}
set_mem_alloc all
set t0 [clock milliseconds]
memory_trace_analysis
set t1 [clock milliseconds]
filtering_process
set t2 [clock milliseconds]
filtering_process save
set t3 [clock milliseconds]
puts "TIMES [expr {\$t1 - \$t0}] [expr {\$t2 - \$t1}] [expr {\$t3 - \$t2}]"
EOF
mta=(); fp=(); fps=(); rss=()
for _ in $(seq "$RUNS"); do
  rm -rf "$WORK/shell/.mapvis" "$WORK/shell/visinfo"
  out=$(cd "$WORK/shell" && /usr/bin/time -f "RSS %M" "$MAPVIS" cmds.tcl 2>&1)
  read -r _ a f s <<<"$(grep '^TIMES' <<<"$out")"
  mta+=("$a"); fp+=("$f"); fps+=("$s"); rss+=("$(grep '^RSS' <<<"$out" | cut -d' ' -f2)")
done
m_mta=$(median "${mta[@]}"); m_fp=$(median "${fp[@]}"); m_fps=$(median "${fps[@]}"); m_rss=$(median "${rss[@]}")
echo "shell: memory_trace_analysis ${m_mta} ms + filtering_process ${m_fp} ms = $(python3 -c "print('%.1f' % ($accesses / (($m_mta + $m_fp) / 1000) / 1e6))") M accesses/s (goal >= 10)"
echo "shell: filtering_process save (order data CSV + Parquet) ${m_fps} ms; peak RSS of the whole script $(python3 -c "print('%.1f' % ($m_rss * 1024 / $accesses))") bytes/access"

# Peak memory of analysis + filtering alone, for each memory kind (the
# default S selects most of this trace, `all` every access).
for kind in S all; do
  printf 'load_exe {%s}\nload_trace {%s}\nset_mem_alloc %s\nmemory_trace_analysis\nfiltering_process\n' \
    "$WORK/matmul" "$WORK/mm.mvt" "$kind" > "$WORK/shell/peak.tcl"
  rss=()
  for _ in $(seq "$RUNS"); do
    rm -rf "$WORK/shell/.mapvis" "$WORK/shell/visinfo"
    rss+=("$(cd "$WORK/shell" && /usr/bin/time -f "RSS %M" "$MAPVIS" peak.tcl 2>&1 >/dev/null | grep '^RSS' | cut -d' ' -f2)")
  done
  echo "shell: peak RSS of memory_trace_analysis + filtering_process, set_mem_alloc $kind: $(python3 -c "print('%.1f' % ($(median "${rss[@]}") * 1024 / $accesses))") bytes/access (goal <= 32)"
done
