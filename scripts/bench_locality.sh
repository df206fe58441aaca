#!/usr/bin/env bash
# bench_locality.sh: "why is this loop slow?" answered by mapvis against
# cachegrind on the same binary; run through `scripts/bench.sh locality
# [RUNS]` (default 3 runs). Two programs, built -g -O0 as the pins expect:
# the ijk matrix multiply of scripts/matmul.c at N = 256 (doubles, about
# 250 M accesses) and the naive transpose of scripts/transpose.c at
# N = 2000 (-DN=2000: 8 M accesses, 64 MB of arrays). The model is L1 32K/8/64, L2 256K/8/64, no L3,
# given to cachegrind too. Each step is a whole process as a user runs it,
# timed with /usr/bin/time, RUNS times interleaved; the medians are
# printed with the ratios the locality-speed goals name:
#   - `valgrind --tool=cachegrind --cache-sim=yes` (the baseline);
#   - `run_gleipnir`, `memory_trace_analysis` (which feeds the cache model
#     as it streams) and `cache_stats quiet` after it: their sum against
#     cachegrind (goal <= 5x) and `cache_stats` alone (goal < 1 s);
#   - `cache_stats quiet` after `set_cache L1 64K 8 64` (a new geometry:
#     simulated again from the saved accesses; goal >= 60 M accesses/s);
#   - `what_if V pad 64` and `what_if V -layouts {8 layouts}` (goal: the 8
#     cost at most twice the one), V the matrix multiply's Y (built -g3,
#     so that its element type, a -D macro, is known; a malloc'd N * N
#     block, so its transpose layout is given the shape 256 256 8) and the
#     transpose's X.
# Peak RSS is printed for the analysis and the simulations.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
. scripts/bench_common.sh
cc -g3 -O0 -Ipins -DTYPE=double -o "$WORK/matmul" scripts/matmul.c
cc -g -O0 -Ipins -DN=2000 -o "$WORK/transpose" scripts/transpose.c
MODEL="set_cache L1 32K 8 64; set_cache L2 256K 8 64; set_cache L3 off"
CG_MODEL=(--I1=32768,8,64 --D1=32768,8,64 --LL=262144,8,64)


# name exe var shape args... : the program's steps, RUNS times (what_if on
# var; shape, "ROWS COLS ELEMBYTES" or empty, is what its transpose layout
# needs when the shape cannot be inferred, as for a malloc'd N * N block).
bench() {
  local name=$1 exe=$2 var=$3 shape=$4
  shift 4
  local d="$WORK/$name"
  mkdir -p "$d"
  local args=""
  [ $# -gt 0 ] && args="set_arguments $*; "
  (cd "$d" && "$MAPVIS" -c "$MODEL; load_exe {$exe}; ${args}set_mem_alloc all" >/dev/null)
  declare -a cg trace an cs resim one eight
  declare -a an_kb resim_kb
  for _ in $(seq "$RUNS"); do
    local t0
    t0=$(now)
    valgrind --tool=cachegrind --cache-sim=yes "${CG_MODEL[@]}" \
      --cachegrind-out-file=/dev/null "$exe" "$@" >/dev/null 2>&1
    cg+=("$(since "$t0")")
    read -r w _ <<<"$(timed_command "$d" "run_gleipnir")"
    trace+=("$w")
    read -r w kb <<<"$(timed_command "$d" "memory_trace_analysis")"
    an+=("$w")
    an_kb+=("$kb")
    read -r w _ <<<"$(timed_command "$d" "cache_stats quiet")"
    cs+=("$w")
    read -r w kb <<<"$(timed_command "$d" "set_cache L1 64K 8 64; cache_stats quiet; $MODEL")"
    resim+=("$w")
    resim_kb+=("$kb")
    read -r w _ <<<"$(timed_command "$d" "what_if $var pad 64")"
    one+=("$w")
    read -r w _ <<<"$(timed_command "$d" "what_if $var -layouts {{pad 64} {pad 128} {pad 8} {align 4096} {transpose $shape} {pad 16} {pad 32} {align 64}}")"
    eight+=("$w")
  done
  local acc
  acc=$(python3 -c "import json; print(json.load(open('$d/.mapvis/analysis/summary.json'))['accesses'])")
  local mcg mtr man mcs mre m1 m8
  mcg=$(median "${cg[@]}")
  mtr=$(median "${trace[@]}")
  man=$(median "${an[@]}")
  mcs=$(median "${cs[@]}")
  mre=$(median "${resim[@]}")
  m1=$(median "${one[@]}")
  m8=$(median "${eight[@]}")
  python3 - "$name" "$acc" "$mcg" "$mtr" "$man" "$mcs" "$mre" "$m1" "$m8" \
    "$(median "${an_kb[@]}")" "$(median "${resim_kb[@]}")" <<'EOF'
import sys
name, acc, cg, tr, an, cs, re_, one, eight, an_kb, re_kb = sys.argv[1:]
acc = int(acc)
cg, tr, an, cs, re_, one, eight = map(float, (cg, tr, an, cs, re_, one, eight))
total = tr + an + cs
print(f"{name}: {acc} accesses")
print(f"  cachegrind --cache-sim=yes      {cg:7.2f} s")
print(f"  run_gleipnir                    {tr:7.2f} s")
print(f"  memory_trace_analysis           {an:7.2f} s  {acc / an / 1e6:5.1f} M/s  {float(an_kb) / 1024:6.0f} MB")
print(f"  cache_stats (recorded)          {cs:7.2f} s  (goal < 1 s)")
print(f"  trace + analysis + cache_stats  {total:7.2f} s  = {total / cg:4.1f}x cachegrind (goal <= 5x)")
print(f"  cache_stats, new geometry       {re_:7.2f} s  {acc / re_ / 1e6:5.1f} M/s  {float(re_kb) / 1024:6.0f} MB (goal >= 60 M/s)")
if one != one or eight != eight:
    print("  what_if                         refused (see the errors above): no time")
else:
    print(f"  what_if pad 64                  {one:7.2f} s")
    print(f"  what_if -layouts (8 layouts)    {eight:7.2f} s  = {eight / one:4.1f}x one (goal <= 2x)")
EOF
}

echo "# locality against cachegrind, $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD), $(nproc) cores, $RUNS runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
bench matmul256 "$WORK/matmul" Y "256 256 8" ijk 256
bench transpose2000 "$WORK/transpose" X ""
