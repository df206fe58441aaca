#!/usr/bin/env bash
# bench_roots.sh: what the naming evidence of trace format 6 costs the
# tracer; run through `scripts/bench.sh roots [RUNS] [N]` (default 3 runs,
# N = 100000). It compiles scripts/roots.c (-g -O0) and times, as whole
# processes interleaved run by run, `valgrind --tool=none` and the bare
# tool (`valgrind --tool=mapvis --trace-file=...`) on:
#   - `roots tree N`: a region that allocates N tree nodes, each node's
#     address stored into its parent (N pointer-store searches);
#   - `roots foot N`: a region after 180 MB of heap (N blocks of 512 bytes
#     held by a table, two 64 MB arrays), which the root snapshot scans.
# Each figure is the median of RUNS runs, with the tool ÷ none ratio and
# the trace's size. The script then analyses one tree trace and checks the
# table a user reads: the N nodes are one row named `root`, so a faster
# wrong answer shows.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
N=${2:-100000}
. scripts/bench_common.sh
cc -g -O0 -Ipins -o "$WORK/roots" scripts/roots.c
LIB=$("$MAPVIS" --install-tool)

echo "# mapvis roots benchmark, $(date -u +%Y-%m-%d), $(nproc) cores, $RUNS runs, N=$N, load $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in tree foot; do
  none=(); tool=()
  for _ in $(seq "$RUNS"); do
    t0=$(now)
    valgrind --tool=none "$WORK/roots" "$mode" "$N" >/dev/null 2>&1
    none+=("$(since "$t0")")
    rm -f "$WORK/$mode.mvt"
    t0=$(now)
    VALGRIND_LIB="$LIB" valgrind --tool=mapvis -q --trace-file="$WORK/$mode.mvt" "$WORK/roots" "$mode" "$N" >/dev/null 2>&1
    tool+=("$(since "$t0")")
  done
  n=$(median "${none[@]}"); t=$(median "${tool[@]}")
  echo "roots $mode $N: valgrind --tool=none $n s, --tool=mapvis $t s, tool ÷ none $(python3 -c "print('%.2f' % ($t / $n))"); trace $(python3 -c "print('%.2f' % ($(stat -c %s "$WORK/$mode.mvt") / 1e6))") MB"
done

# The answer: one analysis of the tree's trace, its nodes one row `root`.
cat > "$WORK/check.tcl" <<TCL
load_exe {$WORK/roots}
load_trace {$WORK/tree.mvt}
set_mem_alloc H
memory_trace_analysis
set blocks 0
foreach row [memory_stats] {
  if {[dict get \$row variable] eq "root"} { set blocks [dict get \$row blocks] }
}
puts "root blocks \$blocks"
TCL
got=$(cd "$WORK" && "$MAPVIS" check.tcl 2>&1 | grep '^root blocks' || true)
if [ "$got" != "root blocks $N" ]; then
  echo "roots tree $N: expected the $N nodes as one row root, got: ${got:-nothing}" >&2
  exit 1
fi
echo "roots tree $N: the $N nodes are one row, root"
