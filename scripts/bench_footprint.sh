#!/usr/bin/env bash
# bench_footprint.sh: every command on a trace whose program touches
# hundreds of megabytes, each one a whole mapvis process as a user runs it
# (start-up, loading the saved analysis, the command, exit); run through
# `scripts/bench.sh footprint [RUNS] [N...]` (default 3 runs, N = 3000:
# scripts/footprint.c, a naive heap transpose of N x N doubles, 18 M
# distinct addresses; N = 8000 is 128 M addresses, 1 GB of arrays, about
# 10 minutes a run and 12 GB of disk). For each N it traces once, then
# times each command RUNS times (interleaved) with /usr/bin/time, and
# prints per command the median wall time, the trace's accesses per
# second over it (compare_runs and plot_runs: per run) and the median
# peak RSS, against the goals: >= 20 M accesses/s, <= 1 GB at N = 3000
# and <= 2 GB at N = 8000. Env FOOTPRINT_LIMIT (default: none) runs
# set_memory_limit first.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
shift || true
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(3000)
. scripts/bench_common.sh
cc -g -O0 -Ipins -o "$WORK/footprint" scripts/footprint.c


for n in "${SIZES[@]}"; do
  d="$WORK/n$n"
  mkdir -p "$d"
  limit=""
  [ -n "${FOOTPRINT_LIMIT:-}" ] && limit="set_memory_limit $FOOTPRINT_LIMIT; "
  (cd "$d" && "$MAPVIS" -c "${limit}load_exe {$WORK/footprint}; set_arguments $n; set_mem_alloc all; run_gleipnir" >/dev/null)
  (cd "$d" && "$MAPVIS" -c "memory_trace_analysis; save_run a; save_run b" >/dev/null)
  acc=$(python3 -c "import json; print(json.load(open('$d/.mapvis/analysis/summary.json'))['accesses'])")
  echo "# footprint N=$n: $acc accesses, $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD), $(nproc) cores, $RUNS runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
  goal_mb=$([ "$n" -le 3000 ] && echo 1024 || echo 2048)
  cmds=(
    "memory_trace_analysis"
    "filtering_process"
    "memory_stats save"
    "cache_stats quiet"
    "sharing_stats"
    "complete_memory_access_pattern"
    "2d_memory_access_pattern Y $n 8"
    "what_if Y pad 64"
    "compare_runs a b"
    "plot_runs misses_L1 a b"
    "alloc_sites"
    "heap_stats"
    "lifetime_histogram"
  )
  declare -A walls rss
  for _ in $(seq "$RUNS"); do
    for c in "${cmds[@]}"; do
      read -r w m < <(timed_command "$d" "${limit}$c")
      walls[$c]+="$w "
      rss[$c]+="$m "
    done
  done
  printf '%-34s %9s %12s %9s  %s\n' command "wall s" "M acc/s" "peak MB" goals
  for c in "${cmds[@]}"; do
    # shellcheck disable=SC2086
    w=$(median ${walls[$c]})
    # shellcheck disable=SC2086
    m=$(MEDIAN_DIGITS=0 median ${rss[$c]})
    if [ "$w" = nan ]; then
      printf '%-34s %9s %12s %9s  %s\n' "$c" - - - "FAILED (see the errors above)"
      continue
    fi
    runs=1
    case $c in compare_runs*|plot_runs*) runs=2 ;; esac
    rate=$(python3 -c "print('%.1f' % ($acc * $runs / max($w, 0.001) / 1e6))")
    mb=$((m / 1024))
    ok=$(python3 -c "print(('rate ok' if $rate >= 20 else 'rate LOW') + ', ' + ('memory ok' if $mb <= $goal_mb else 'memory HIGH'))")
    printf '%-34s %9s %12s %9s  %s\n' "$c" "$w" "$rate" "$mb" "$ok"
  done
  unset walls rss
done
