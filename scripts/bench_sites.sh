#!/usr/bin/env bash
# bench_sites.sh: naming heap blocks by the thousand; run through
# `scripts/bench.sh sites [RUNS] [N...]` (default 3 runs, N = 1000 3000
# 10000). For each N it writes a C file of N allocation statements in one
# function (`double *pK = malloc(...)`, every other one sized with
# `sizeof *pK` so the variable's declaration is looked up), each block
# touched once between GL_START and GL_STOP, compiles it with `-g -O0`, and
# times, as whole processes from start to exit:
#   - the baseline, in the same run: `valgrind --tool=none PROG`, and a
#     `mapvis` process that only traces (`load_exe`, `run_gleipnir`);
#   - the whole pipeline in one `mapvis` process: `load_exe`,
#     `run_gleipnir`, `memory_trace_analysis`, `filtering_process`,
#     `memory_stats` (heap only), with each command's share.
# Each figure is the median of RUNS runs. A run longer than CAP seconds
# (env SITES_CAP, default 600) is stopped and reported as "> CAP s"; the
# remaining runs of that N are skipped. The script also checks that every
# block got its own variable name (pK), so a faster wrong answer shows.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
SIZES=("${@:2}")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1000 3000 10000)
CAP=${SITES_CAP:-600}
. scripts/bench_common.sh
PINS=$(pwd)/pins


# gen N FILE: the benchmark program with N allocation sites.
gen() {
  python3 - "$1" > "$2" <<'PY'
import sys
n = int(sys.argv[1])
out = ["/* %d heap blocks, each allocated by its own statement. */" % n,
       "#include <stdlib.h>", '#include "gleipnir.h"', "int main(void)", "{"]
for k in range(n):
    size = "sizeof *p%d" % k if k % 2 else "sizeof(double)"
    out.append("    double *p%d = malloc(%d * %s);" % (k, k % 7 + 1, size))
out.append("    GL_START;")
out += ["    p%d[0] = %d;" % (k, k) for k in range(n)]
out.append("    GL_STOP;")
out += ["    free(p%d);" % k for k in range(n)]
out += ["    return 0;", "}"]
print("\n".join(out))
PY
}

# timed DIR SCRIPT: runs `mapvis SCRIPT` in DIR under the cap; prints the
# wall time, or "cap" when it was stopped.
timed() {
  local t0 t1 rc=0
  t0=$(now)
  (cd "$1" && timeout "$CAP" "$MAPVIS" "$2" >/dev/null 2>"$1/err.txt") || rc=$?
  t1=$(now)
  if [ "$rc" = 124 ]; then echo cap; return; fi
  if [ "$rc" != 0 ]; then
    echo "mapvis $2 failed in $1 (exit $rc):" >&2
    tail -5 "$1/err.txt" >&2
    exit 1
  fi
  python3 -c "print($t1 - $t0)"
}

echo "# mapvis naming benchmark, $(date -u +%Y-%m-%d), $(nproc) cores, $RUNS runs, cap ${CAP} s"
for n in "${SIZES[@]}"; do
  dir="$WORK/n$n"
  mkdir -p "$dir"
  gen "$n" "$dir/sites.c"
  cc -g -O0 -I"$PINS" -o "$dir/sites" "$dir/sites.c"
  printf 'load_exe {%s}\nrun_gleipnir\n' "$dir/sites" > "$dir/trace.tcl"
  cat > "$dir/all.tcl" <<TCL
set t0 [clock milliseconds]
load_exe {$dir/sites}
set_src_path {$dir}
set_mem_alloc H
run_gleipnir
set t1 [clock milliseconds]
memory_trace_analysis
set t2 [clock milliseconds]
filtering_process
set t3 [clock milliseconds]
set rows [memory_stats]
set t4 [clock milliseconds]
set named 0
foreach row \$rows {
  if {[regexp {^p[0-9]+\$} [dict get \$row variable]]} { incr named }
}
set f [open {$dir/times.txt} w]
puts \$f "[expr {\$t1 - \$t0}] [expr {\$t2 - \$t1}] [expr {\$t3 - \$t2}] [expr {\$t4 - \$t3}] \$named [llength \$rows]"
close \$f
TCL
  none=(); bare=(); whole=(); ana=(); named=""
  for _ in $(seq "$RUNS"); do
    t0=$(now)
    valgrind --tool=none "$dir/sites" >/dev/null 2>&1
    t1=$(now)
    none+=("$(python3 -c "print($t1 - $t0)")")
    rm -rf "$dir/.mapvis" "$dir/visinfo"
    bare+=("$(timed "$dir" trace.tcl)")
    rm -rf "$dir/.mapvis" "$dir/visinfo" "$dir/times.txt"
    t=$(timed "$dir" all.tcl)
    whole+=("$t")
    [ "$t" = cap ] && break
    read -r _ ta _ _ named rows < "$dir/times.txt"
    ana+=("$ta")
    if [ "$named" != "$n" ]; then
      echo "N=$n: only $named of $n blocks were named pK ($rows rows): the naming is wrong" >&2
      exit 1
    fi
  done
  if [ "${whole[-1]}" = cap ]; then
    # A capped run ends the runs of this N: its time is unknown, so no
    # median is given.
    w="> ${CAP} s (stopped) in run ${#whole[@]}"; a="-"
  else
    w="$(median "${whole[@]}") s"; a="$(python3 -c "print('%.2f' % ($(median "${ana[@]}") / 1000))") s"
  fi
  runs=$(python3 -c 'import sys; print(", ".join(x if x == "cap" else "%.1f" % float(x) for x in sys.argv[1:]))' "${whole[@]}")
  echo "N=$n: whole process $w (memory_trace_analysis $a); baseline: run_gleipnir alone $(median "${bare[@]}") s, valgrind --tool=none $(median "${none[@]}") s; each run: $runs s"
  rm -rf "$dir"
done
