# bench_common.sh: what the benchmark scripts share; sourced from the
# repository's root by bench_lackey.sh, bench_recursion.sh, bench_scale.sh
# and bench_sites.sh.
#
# Sets MAPVIS (the release build, built here unless MAPVIS names one, e.g.
# an older build for a before/after table) and WORK (a temporary folder
# removed on exit), and defines the timers:
#   now          a wall-clock stamp from bash itself ($EPOCHREALTIME): a
#                python start-up inside a timed span would add tens of
#                milliseconds to it;
#   since T0     seconds from stamp T0 to now;
#   median X...  the median, with MEDIAN_DIGITS decimals (2 by default).
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
