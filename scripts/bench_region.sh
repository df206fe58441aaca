#!/usr/bin/env bash
# bench_region.sh: what a region by function costs the tracer against the
# pins, on a run with at least 10 s outside the region; run through
# `scripts/bench.sh region [RUNS] [STEPS]` (default 3 runs, 500 M steps:
# about 11 s under --tool=none). Each run times, interleaved, as whole
# processes from start to exit:
#   - `mapvis` running load_exe, set_arguments STEPS, run_gleipnir on the
#     program with its pins around the one call of kernel();
#   - the same built with -DGL_NOPINS, after set_region function kernel;
#   - the same after set_region window 1000 1000: one window of 1000
#     accesses, the rest of the run only counted;
#   - `valgrind --tool=none` on the pinned program.
# It prints the medians, function ÷ pins (goal <= 1.10), function ÷
# --tool=none, and window ÷ --tool=none (goal <= 1.5).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
STEPS=${2:-500000000}
. scripts/bench_common.sh
cc -g -O2 -Ipins -o "$WORK/pinned" scripts/region_bench.c
cc -g -O2 -DGL_NOPINS -Ipins -o "$WORK/nopins" scripts/region_bench.c
printf 'set_region pins\nload_exe {%s}\nset_arguments %s\nrun_gleipnir\n' "$WORK/pinned" "$STEPS" > "$WORK/pins.tcl"
printf 'load_exe {%s}\nset_region function kernel\nset_arguments %s\nrun_gleipnir\n' "$WORK/nopins" "$STEPS" > "$WORK/function.tcl"
printf 'load_exe {%s}\nset_region window 1000 1000\nset_arguments %s\nrun_gleipnir\n' "$WORK/nopins" "$STEPS" > "$WORK/window.tcl"

echo "# tracing by function against the pins, $(date -u +%Y-%m-%d), $(nproc) cores, $RUNS runs, $STEPS steps outside the region, load $(cut -d' ' -f1-3 /proc/loadavg)"
pins=(); func=(); win=(); none=()
for _ in $(seq "$RUNS"); do
  t0=$(now)
  (cd "$WORK" && "$MAPVIS" pins.tcl >/dev/null 2>&1)
  pins+=("$(since "$t0")")
  t0=$(now)
  (cd "$WORK" && "$MAPVIS" function.tcl >/dev/null 2>&1)
  func+=("$(since "$t0")")
  t0=$(now)
  (cd "$WORK" && "$MAPVIS" window.tcl >/dev/null 2>&1)
  win+=("$(since "$t0")")
  t0=$(now)
  valgrind --tool=none "$WORK/pinned" "$STEPS" >/dev/null 2>&1
  none+=("$(since "$t0")")
done
p=$(median "${pins[@]}"); f=$(median "${func[@]}"); w=$(median "${win[@]}"); n=$(median "${none[@]}")
echo "run_gleipnir with pins ${p} s, with set_region function ${f} s, with set_region window ${w} s, valgrind --tool=none ${n} s"
echo "function ÷ pins $(python3 -c "print('%.3f' % ($f / $p))") (goal <= 1.10); function ÷ --tool=none $(python3 -c "print('%.3f' % ($f / $n))"); window ÷ --tool=none $(python3 -c "print('%.3f' % ($w / $n))") (goal <= 1.5)"
