#!/usr/bin/env bash
# bench_lackey.sh: how much faster than Lackey a user gets a trace, on a
# short run; run through `scripts/bench.sh lackey [RUNS] [N]` (default 5
# runs, N = 64: an N x N double matmul, ijk, about 0.5 M accesses at 64).
# Each run times, interleaved, as whole processes from start to exit:
#   - `valgrind --tool=lackey --trace-mem=yes` (its log to a file);
#   - a `mapvis` process running `load_exe`, `set_arguments ijk N`,
#     `run_gleipnir`, as a user traces;
#   - the baselines of that process' parts: the bare tool
#     (`valgrind --tool=mapvis --trace-file=...`), `valgrind --tool=none`,
#     and a `mapvis` process that runs only `load_exe` (start-up, the
#     Tcl interpreter, the executable's debug information).
# It prints the medians and Lackey ÷ run_gleipnir (goal >= 20); what the
# mapvis process adds to the bare tool is its fixed cost.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
N=${2:-64}
MEDIAN_DIGITS=3
. scripts/bench_common.sh
cc -g -O0 -DTYPE=double -Ipins -o "$WORK/matmul" scripts/matmul.c
LIB=$("$MAPVIS" --install-tool)
printf 'load_exe {%s}\nset_arguments ijk %s\nrun_gleipnir\n' "$WORK/matmul" "$N" > "$WORK/run.tcl"
printf 'load_exe {%s}\n' "$WORK/matmul" > "$WORK/load.tcl"

echo "# mapvis against Lackey, $(date -u +%Y-%m-%d), $(nproc) cores, $RUNS runs, matmul ijk $N, load $(cut -d' ' -f1-3 /proc/loadavg)"
lackey=(); ours=(); bare=(); none=(); load=()
for _ in $(seq "$RUNS"); do
  t0=$(now)
  valgrind --tool=lackey --trace-mem=yes --log-file="$WORK/lackey.log" "$WORK/matmul" ijk "$N" >/dev/null 2>&1
  lackey+=("$(since "$t0")")
  rm -f "$WORK/lackey.log"
  rm -rf "$WORK/.mapvis"
  t0=$(now)
  (cd "$WORK" && "$MAPVIS" run.tcl >/dev/null 2>&1)
  ours+=("$(since "$t0")")
  # The tool creates its trace as a new file (O_EXCL): remove the last run's.
  rm -f "$WORK/bare.mvt"
  t0=$(now)
  VALGRIND_LIB="$LIB" valgrind --tool=mapvis -q --trace-file="$WORK/bare.mvt" "$WORK/matmul" ijk "$N" >/dev/null 2>&1
  bare+=("$(since "$t0")")
  t0=$(now)
  valgrind --tool=none "$WORK/matmul" ijk "$N" >/dev/null 2>&1
  none+=("$(since "$t0")")
  t0=$(now)
  (cd "$WORK" && "$MAPVIS" load.tcl >/dev/null 2>&1)
  load+=("$(since "$t0")")
done

l=$(median "${lackey[@]}"); o=$(median "${ours[@]}")
echo "lackey ${l} s ÷ run_gleipnir (whole mapvis process) ${o} s = $(python3 -c "print('%.1f' % ($l / $o))") (goal >= 20)"
echo "baselines: the bare tool $(median "${bare[@]}") s, valgrind --tool=none $(median "${none[@]}") s, a mapvis process running load_exe only $(median "${load[@]}") s"
fmt() { python3 -c 'import sys; print(", ".join("%.2f" % float(x) for x in sys.argv[1:]))' "$@"; }
echo "each run: lackey $(fmt "${lackey[@]}"); run_gleipnir $(fmt "${ours[@]}"); bare tool $(fmt "${bare[@]}")"
