#!/usr/bin/env bash
# bench_heap.sh (run as `scripts/bench.sh heap [OPS] [RUNS]`): the whole
# mapvis command a user runs to profile a program's heap, `heap_profile;
# alloc_sites 5` (recording, then reading and summarising the profile),
# against heaptrack's recording alone (`heaptrack -o FILE PROG`) and against
# heaptrack's recording followed by `heaptrack_print`, on
# scripts/alloc_bench.c (THREADS threads x OPS malloc/free pairs each,
# default 5 M) at 1, 2 and 4 threads. Every figure is the median of RUNS
# runs (default 3) of the whole process, as wall seconds, a ratio to the
# native run of the same thread count, CPU seconds (user + system, which
# depend less on the machine's load) and peak RSS (/usr/bin/time -v,
# "Maximum resident set size"); the profiles' sizes are given too, in MB
# and in bytes per allocator call (2 x THREADS x OPS calls), mapvis's both
# as `heap_profile` writes it (the summary) and with `heap_profile calls`
# (every call written). The load
# average is printed before each thread count.
#
# Needs: cc, python3, heaptrack and heaptrack_print (Debian: apt-get install
# heaptrack), /usr/bin/time, a release build (cargo build --release).
set -euo pipefail
cd "$(dirname "$0")/.."
OPS=${1:-5000000}
RUNS=${2:-3}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mapvis/target}"
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet --bins
MAPVIS="$CARGO_TARGET_DIR/release/mapvis"
command -v heaptrack >/dev/null || { echo "bench_heap.sh: heaptrack is not installed (apt-get install heaptrack)" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -g -pthread -Ipins -o "$WORK/alloc_bench" scripts/alloc_bench.c

# run NAME CMD...: runs CMD once in $WORK/run, appends "seconds kilobytes
# cpu_seconds" to $WORK/NAME.
run() {
  local name=$1
  shift
  rm -rf "$WORK/run" && mkdir "$WORK/run"
  (cd "$WORK/run" && /usr/bin/time -v -o "$WORK/time.txt" "$@" >/dev/null 2>&1) || true
  python3 - "$WORK/time.txt" >>"$WORK/$name" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", t)
h, mi, s = m.group(1), m.group(2), m.group(3)
secs = (int(h) * 3600 if h else 0) + int(mi) * 60 + float(s)
kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
cpu = sum(float(re.search(r"%s time \(seconds\): ([\d.]+)" % w, t).group(1)) for w in ("User", "System"))
print(secs, kb, cpu)
PY
}

# median NAME: "seconds kilobytes cpu_seconds" medians of $WORK/NAME.
median() {
  python3 - "$WORK/$1" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print(statistics.median(float(r[0]) for r in rows), int(statistics.median(int(r[1]) for r in rows)),
      statistics.median(float(r[2]) for r in rows))
PY
}

fmt() { # fmt NAME NATIVE_SECONDS NATIVE_CPU_SECONDS
  read -r s kb cpu < <(median "$1")
  python3 -c 'import sys; s,kb,c,n,nc=float(sys.argv[1]),int(sys.argv[2]),float(sys.argv[3]),float(sys.argv[4]),float(sys.argv[5]); print("%.2f s = %.1fx (CPU %.2f s = %.1fx), %d MB" % (s, s/n, c, c/max(nc,0.01), kb//1024))' "$s" "$kb" "$cpu" "$2" "$3"
}

echo "# heap profiler benchmark, $(date -u +%Y-%m-%d), $(nproc) cores, alloc_bench THREADS $OPS (cc -O2), median of $RUNS"
for t in 1 2 4; do
  rm -f "$WORK"/native "$WORK"/mapvis "$WORK"/ht "$WORK"/htp
  echo "threads $t: load average $(cut -d' ' -f1-3 /proc/loadavg)"
  for _ in $(seq "$RUNS"); do
    run native "$WORK/alloc_bench" "$t" "$OPS"
    run mapvis "$MAPVIS" -c "load_exe $WORK/alloc_bench; set_arguments $t $OPS; heap_profile; alloc_sites 5"
    run ht heaptrack -o "$WORK/ht" "$WORK/alloc_bench" "$t" "$OPS"
    run htp heaptrack_print "$WORK/ht.zst"
  done
  # Sizes of the last run's profiles.
  rm -rf "$WORK/run" && mkdir "$WORK/run"
  (cd "$WORK/run" && "$MAPVIS" -c "load_exe $WORK/alloc_bench; set_arguments $t $OPS; heap_profile" >/dev/null 2>&1) || true
  mv_b=$(stat -c %s "$WORK/run/.mapvis/heap.mvh")
  # ... and with every call written (heap_profile calls).
  rm -rf "$WORK/run" && mkdir "$WORK/run"
  (cd "$WORK/run" && "$MAPVIS" -c "load_exe $WORK/alloc_bench; set_arguments $t $OPS; heap_profile calls" >/dev/null 2>&1) || true
  mvc_b=$(stat -c %s "$WORK/run/.mapvis/heap.mvh")
  ht_b=$(stat -c %s "$WORK/ht.zst")
  per_call() { python3 -c 'import sys; b,t,o=map(int,sys.argv[1:]); print("%s, %.4f bytes/call" % ("%d MB" % (b//1000000) if b >= 10**6 else "%d KB" % (b//1000), b/(2*t*o)))' "$1" "$t" "$OPS"; }
  read -r ns _ nc < <(median native)
  # heaptrack record + print: the sums of the medians.
  read -r hs hkb _ < <(median ht)
  read -r ps pkb _ < <(median htp)
  both=$(python3 -c 'import sys; a,b,n=map(float,sys.argv[1:]); print("%.2f s = %.1fx" % (a+b,(a+b)/n))' "$hs" "$ps" "$ns")
  echo "threads $t: native ${ns} s (CPU ${nc} s); mapvis heap_profile+alloc_sites $(fmt mapvis "$ns" "$nc") (profile $(per_call "$mv_b"); with calls $(per_call "$mvc_b")); heaptrack record $(fmt ht "$ns" "$nc") (profile $(per_call "$ht_b")); heaptrack_print $(fmt htp "$ns" "$nc"); heaptrack record+print ${both}"
  rm -f "$WORK"/ht.zst
done
