# bench_common.sh: what the benchmark scripts share; sourced from the
# repository's root by each bench_*.sh that runs mapvis.
#
# Sets MAPVIS (the release build, built here unless MAPVIS names one, e.g.
# an older build for a before/after table) and WORK (a temporary folder
# removed on exit), and defines the timers:
#   now          a wall-clock stamp from bash itself ($EPOCHREALTIME): a
#                python start-up inside a timed span would add tens of
#                milliseconds to it;
#   since T0     seconds from stamp T0 to now;
#   median X...  the median, with MEDIAN_DIGITS decimals (2 by default);
#   timed_command DIR CMD
#                one `mapvis -c CMD` as a whole process in folder DIR,
#                printing "WALL RSS_KB", or "nan 0" when it failed (its
#                time is no answer's; its last lines go to stderr).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mapvis/target}"
if [ -z "${MAPVIS:-}" ]; then
  cargo build --release --quiet --bins
  MAPVIS="$CARGO_TARGET_DIR/release/mapvis"
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
now() { echo "$EPOCHREALTIME"; }
since() { local t1=$EPOCHREALTIME; python3 -c "print($t1 - $1)"; }
median() {
  python3 -c 'import sys, statistics; print("%.*f" % (int(sys.argv[1]), statistics.median(float(x) for x in sys.argv[2:])))' \
    "${MEDIAN_DIGITS:-2}" "$@"
}
timed_command() {
  local dir=$1 cmd=$2
  if (cd "$dir" && /usr/bin/time -f '%e %M' -o "$WORK/time" "$MAPVIS" -c "$cmd" >"$WORK/out" 2>&1); then
    tail -1 "$WORK/time"
  else
    echo "failed: $cmd" >&2
    tail -5 "$WORK/out" >&2
    echo "nan 0"
  fi
}
