#!/usr/bin/env bash
# bench_scale.sh: the whole pipeline on traces of hundreds of millions to
# billions of accesses (scripts/matmul.c, double, ijk N), once per N; run
# through `scripts/bench.sh scale [N...]`. For each N it prints:
#   - run_gleipnir's wall time against the bare tool's (same run, same N),
#     and `valgrind --tool=none`'s, the machine state's reference;
#   - memory_trace_analysis + filtering_process + memory_stats as a user
#     runs them, `set_mem_alloc all`, in one mapvis process: accesses per
#     second over that whole process (start to exit: start-up, loading the
#     executable's debug information, the commands, and exit), the same
#     over the three commands alone, each command's time, and the peak RSS
#     of that process;
#   - the size of the access list's Parquet dataset, and of the same
#     accesses by variable (accesses_by_var/);
#   - in a second mapvis process on the saved analysis, the figures of one
#     array (the heap matrix X, N^2 doubles, N^3 + N^2 accesses):
#     complete_memory_access_pattern X and 2d_memory_access_pattern X N 8,
#     each one's time and HTML size, and that process' peak RSS.
# Peak memory must not grow with N: the analysis keeps state per unique
# location, never per access, and the figures keep bins, groups and cells.
# Env: SCALE_RUNS (default 1) runs of each N, interleaved (tool, none,
# run_gleipnir, analysis process), reported as medians with each run;
# SCALE_FIGURES=0 skips the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(128 256 512)
. scripts/bench_common.sh
cc -g -O0 -DTYPE=double -Ipins -o "$WORK/matmul" scripts/matmul.c
LIB=$("$MAPVIS" --install-tool)

RUNS=${SCALE_RUNS:-1}
echo "# mapvis scale benchmark, $(date -u +%Y-%m-%d), $(nproc) cores, $RUNS run(s), load $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "${SIZES[@]}"; do
  dir="$WORK/n$n"
  mkdir -p "$dir"
  printf 'load_exe {%s}\nset_arguments ijk %s\nrun_gleipnir\n' "$WORK/matmul" "$n" > "$dir/run.tcl"
  cat > "$dir/an.tcl" <<TCL
set_mem_alloc all
set t0 [clock milliseconds]
set a [memory_trace_analysis]
set t1 [clock milliseconds]
filtering_process
set t2 [clock milliseconds]
memory_stats
set t3 [clock milliseconds]
puts "TIMES [dict get \$a accesses] [expr {\$t1 - \$t0}] [expr {\$t2 - \$t1}] [expr {\$t3 - \$t2}]"
TCL
  rows=()
  for _ in $(seq "$RUNS"); do
    # The tool creates its trace as a new file (O_EXCL): remove the last run's.
    rm -f "$dir/bare.mvt"
    t0=$(now)
    VALGRIND_LIB="$LIB" valgrind --tool=mapvis -q --trace-file="$dir/bare.mvt" "$WORK/matmul" ijk "$n" >/dev/null
    tbare=$(since "$t0")
    rm -f "$dir/bare.mvt"
    t0=$(now)
    valgrind --tool=none "$WORK/matmul" ijk "$n" >/dev/null 2>&1
    tnone=$(since "$t0")
    rm -rf "$dir/.mapvis" "$dir/visinfo"
    t0=$(now)
    (cd "$dir" && "$MAPVIS" run.tcl >/dev/null 2>&1)
    trun=$(since "$t0")
    t0=$(now)
    out=$(cd "$dir" && /usr/bin/time -f "RSS %M" "$MAPVIS" an.tcl 2>&1)
    twhole=$(since "$t0")
    read -r _ acc ta tf ts <<<"$(grep '^TIMES' <<<"$out")"
    rss=$(grep '^RSS' <<<"$out" | cut -d' ' -f2)
    rows+=("$tbare $tnone $trun $twhole $acc $ta $tf $ts $rss")
  done
  ds=$(du -sb "$dir/.mapvis/analysis/accesses" | cut -f1)
  bv=$(du -sb "$dir/.mapvis/analysis/accesses_by_var" | cut -f1)
  python3 - "$n" "$ds" "$bv" "${rows[@]}" <<'PY'
import statistics, sys
n, ds, bv = (int(x) for x in sys.argv[1:4])
runs = [[float(x) for x in r.split()] for r in sys.argv[4:]]
med = lambda k: statistics.median(r[k] for r in runs)
bare, none, run, whole, acc, ta, tf, ts, rss = (med(k) for k in range(9))
cmds = (ta + tf + ts) / 1000
print(f"N={n}: {acc/1e6:.0f} M accesses; run_gleipnir {run:.1f} s vs the bare tool {bare:.1f} s: "
      f"{run/bare:.2f}x (goal <= 1.2); valgrind --tool=none {none:.1f} s")
print(f"N={n}: analysis process (memory_trace_analysis + filtering_process + memory_stats, set_mem_alloc all) "
      f"{whole:.1f} s whole = {acc/whole/1e6:.1f} M accesses/s (goal >= 20); the commands alone: analysis "
      f"{ta/1000:.1f} s + filtering {tf/1000:.1f} s + memory_stats {ts/1000:.1f} s = {acc/cmds/1e6:.1f} M/s; "
      f"peak RSS {rss/1024:.0f} MB (goal <= 2048); dataset {ds/acc:.2f} bytes/access, by variable {bv/acc:.2f}")
if len(runs) > 1:
    print(f"N={n}: each run (bare tool s, analysis process s): "
          + ", ".join(f"{r[0]:.1f} / {r[3]:.1f}" for r in runs))
PY
  if [ "${SCALE_FIGURES:-1}" = 0 ]; then
    rm -rf "$dir"
    continue
  fi
  cat > "$dir/figs.tcl" <<TCL
set_mem_alloc all
set t0 [clock milliseconds]
set c [complete_memory_access_pattern X]
set t1 [clock milliseconds]
set p [2d_memory_access_pattern X $n 8]
set t2 [clock milliseconds]
puts "FIGS [expr {\$t1 - \$t0}] [file size \$c] [expr {\$t2 - \$t1}] [file size \$p]"
TCL
  out=$(cd "$dir" && /usr/bin/time -f "RSS %M" "$MAPVIS" figs.tcl 2>&1)
  read -r _ tc sc tp sp <<<"$(grep '^FIGS' <<<"$out")"
  rss=$(grep '^RSS' <<<"$out" | cut -d' ' -f2)
  python3 - "$n" "$tc" "$sc" "$tp" "$sp" "$rss" <<'PY'
import sys
n, tc, sc, tp, sp, rss = (int(x) for x in sys.argv[1:7])
print(f"N={n}: figures of X: complete_memory_access_pattern X {tc/1000:.1f} s, {sc/1e6:.2f} MB HTML; "
      f"2d_memory_access_pattern X {n} 8 {tp/1000:.1f} s, {sp/1e6:.2f} MB HTML; peak RSS {rss/1024:.0f} MB")
PY
  rm -rf "$dir"
done
