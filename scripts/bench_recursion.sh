#!/usr/bin/env bash
# bench_recursion.sh: naming the instances of a local by the hundred
# thousand; run through `scripts/bench.sh recursion [RUNS] [N...]` (default
# 3 runs, N = 100000). For each depth N it compiles scripts/recursion.c
# (-g -O0; two locals per frame, so 2 N variables and about 14 N accesses)
# and times, as whole processes from start to exit, interleaved run by run:
#   - the baseline: the bare tool tracing the program
#     (`valgrind --tool=mapvis --trace-file=...`), and `valgrind --tool=none`;
#   - the whole pipeline in one `mapvis` process: `load_exe`,
#     `set_arguments N`, `set_mem_alloc all`, `run_gleipnir`,
#     `memory_trace_analysis`, `filtering_process`, `memory_stats` (printed
#     to a file), with each command's share and the peak RSS.
# Each figure is the median of RUNS runs. A run longer than CAP seconds (env
# RECURSION_CAP, default 900) is stopped and reported. The script checks the
# table a user reads: the locals are one row each (x with 3 N accesses), not
# 2 N rows, so a faster wrong answer shows.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
SIZES=("${@:2}")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(100000)
CAP=${RECURSION_CAP:-900}
. scripts/bench_common.sh
cc -g -O0 -Ipins -o "$WORK/recursion" scripts/recursion.c
LIB=$("$MAPVIS" --install-tool)


echo "# mapvis recursion benchmark, $(date -u +%Y-%m-%d), $(nproc) cores, $RUNS runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "${SIZES[@]}"; do
  dir="$WORK/n$n"
  mkdir -p "$dir"
  cat > "$dir/all.tcl" <<TCL
set t0 [clock milliseconds]
load_exe {$WORK/recursion}
set_arguments $n
set_mem_alloc all
run_gleipnir
set t1 [clock milliseconds]
memory_trace_analysis
set t2 [clock milliseconds]
filtering_process
set t3 [clock milliseconds]
set rows [memory_stats]
set t4 [clock milliseconds]
set x 0
foreach row \$rows {
  if {[dict get \$row variable] eq "x"} { set x [dict get \$row accesses] }
}
set f [open {$dir/times.txt} w]
puts \$f "[expr {\$t1 - \$t0}] [expr {\$t2 - \$t1}] [expr {\$t3 - \$t2}] [expr {\$t4 - \$t3}] [llength \$rows] \$x"
close \$f
TCL
  none=(); bare=(); whole=(); tr=(); ana=(); fil=(); sta=(); rss=()
  for _ in $(seq "$RUNS"); do
    t0=$(now)
    valgrind --tool=none "$WORK/recursion" "$n" >/dev/null 2>&1
    none+=("$(since "$t0")")
    # The tool creates its trace as a new file (O_EXCL): remove the last run's.
    rm -f "$dir/bare.mvt"
    t0=$(now)
    VALGRIND_LIB="$LIB" valgrind --tool=mapvis -q --trace-file="$dir/bare.mvt" "$WORK/recursion" "$n" >/dev/null 2>&1
    bare+=("$(since "$t0")")
    rm -rf "$dir/bare.mvt" "$dir/.mapvis" "$dir/visinfo" "$dir/times.txt"
    t0=$(now)
    rc=0
    (cd "$dir" && timeout "$CAP" /usr/bin/time -o "$dir/rss.txt" -f "%M" "$MAPVIS" all.tcl >"$dir/out.txt" 2>"$dir/err.txt") || rc=$?
    t=$(since "$t0")
    if [ "$rc" != 0 ]; then
      echo "N=$n: mapvis failed or was stopped after $CAP s (exit $rc), after ${t} s:" >&2
      tail -5 "$dir/err.txt" >&2
      exit 1
    fi
    whole+=("$t")
    read -r a b c d nrows x < "$dir/times.txt"
    tr+=("$a"); ana+=("$b"); fil+=("$c"); sta+=("$d"); rss+=("$(tail -1 "$dir/rss.txt")")
    if [ "$x" != $((3 * n)) ]; then
      echo "N=$n: the row x has $x accesses, not 3 N = $((3 * n)) ($nrows rows): the grouping is wrong" >&2
      exit 1
    fi
  done
  ms() { python3 -c "print('%.2f' % ($(median "$@") / 1000))"; }
  runs=$(python3 -c 'import sys; print(", ".join("%.1f" % float(x) for x in sys.argv[1:]))' "${whole[@]}")
  echo "N=$n: whole process $(median "${whole[@]}") s (run_gleipnir $(ms "${tr[@]}") s, memory_trace_analysis $(ms "${ana[@]}") s, filtering_process $(ms "${fil[@]}") s, memory_stats $(ms "${sta[@]}") s; $nrows rows; peak RSS $(python3 -c "print('%.0f' % ($(median "${rss[@]}") / 1024))") MB); goal <= 60 s"
  echo "N=$n: baseline: the bare tool tracing $(median "${bare[@]}") s, valgrind --tool=none $(median "${none[@]}") s; each whole run: $runs s"
  rm -rf "$dir"
done
