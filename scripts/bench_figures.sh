#!/usr/bin/env bash
# bench_figures.sh: how fast the figure pages open; run through
# `scripts/bench.sh figures [RUNS] [N]` (default 5 runs, N=256).
#
# Traces scripts/transpose.c (an N x N matrix of doubles X copied transposed
# into Y; -O0, so the loop counters are traced too),
# draws the pages a user draws at the default point budget:
#   complete_memory_access_pattern, 2d_memory_access_pattern X N 8 and
#   3d_memory_access_pattern X 16 N/16 8 (N planes of 16 x N/16 elements),
# and times headless Chromium opening each page until plotly has drawn every
# figure (the page sets data-rendered-traces), as a whole process, with the
# flags of tests/vis_browser.rs (software WebGL, no GPU). The baseline is a
# blank page loading the same plotly.min.js and drawing an empty figure,
# timed in the same run, interleaved with the pages. The complete pattern and
# the 2D array page are timed twice: as opened (their 3D view waits for a
# click under software WebGL) and as `complete#3d`, `2d#3d` (the 3D view
# drawn at load, as with a GPU). Prints each page's size
# and the median open time of RUNS runs as a ratio to the blank page's.
#
# Needs: valgrind, cc, python3, chromium. MAPVIS=path/to/mapvis times that
# build (e.g. an older one, for a before/after table) instead of building.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
N=${2:-256}
if [ -z "${MAPVIS:-}" ]; then
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/mapvis/target}"
  cargo build --release --quiet --bins
  MAPVIS="$CARGO_TARGET_DIR/release/mapvis"
fi
CHROMIUM=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cc -g -O0 -DN="$N" -Ipins -o "$WORK/transpose" scripts/transpose.c
cat > "$WORK/figs.tcl" <<TCL
load_exe {$WORK/transpose}
set_mem_alloc all
run_gleipnir
set a [memory_trace_analysis]
filtering_process
set c [complete_memory_access_pattern]
set p [2d_memory_access_pattern X $N 8]
set q [3d_memory_access_pattern X 16 [expr {$N / 16}] 8]
puts "ACCESSES [dict get \$a accesses]"
puts "PAGE complete \$c"
puts "PAGE 2d \$p"
puts "PAGE 3d \$q"
TCL
(cd "$WORK" && "$MAPVIS" figs.tcl > out.txt 2>&1) || { cat "$WORK/out.txt"; exit 1; }
# The baseline: the same plotly.js drawing an empty figure, with the same
# completion mark as the figure pages.
cat > "$WORK/figures/blank.html" <<'HTML'
<!DOCTYPE html>
<html><head><meta charset="utf-8"><script src="plotly.min.js"></script></head>
<body><div id="f"></div><script>
Plotly.newPlot('f', [], {}).then(function () {
  document.body.setAttribute('data-rendered-traces', '0');
});
</script></body></html>
HTML
python3 - "$CHROMIUM" "$RUNS" "$N" "$WORK" <<'PY'
import os, re, statistics, subprocess, sys, tempfile, time
chromium, runs, n, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
text = open(os.path.join(work, "out.txt")).read()
accesses = int(re.search(r"^ACCESSES (\d+)", text, re.M).group(1))
pages = [("blank", os.path.join(work, "figures", "blank.html"))]
pages += [(m.group(1), os.path.join(work, m.group(2))) for m in re.finditer(r"^PAGE (\S+) (.+)$", text, re.M)]
# The complete pattern and the 2D array page draw their 3D view on request
# under software WebGL; with #3d they draw it at load, as they do where
# WebGL has a GPU.
pages += [(name + "#3d", page) for name, page in pages if name in ("complete", "2d")]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--virtual-time-budget=5000",
         "--dump-dom"]

def open_time(page, fragment=""):
    """Wall time of one Chromium process opening `page` until it dumps the
    DOM; fails unless plotly drew every figure."""
    with tempfile.TemporaryDirectory() as profile:
        out_path = os.path.join(profile, "dom.html")
        with open(out_path, "wb") as out:
            t0 = time.monotonic()
            subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", f"file://{page}{fragment}"],
                           stdout=out, stderr=subprocess.DEVNULL, timeout=600, check=True)
            t = time.monotonic() - t0
        dom = open(out_path, encoding="utf-8", errors="replace").read()
    if 'data-render-error="' in dom or "data-rendered-traces=" not in dom:
        sys.exit(f"{page} did not render: no data-rendered-traces in its DOM")
    return t

times = {name: [] for name, _ in pages}
for _ in range(runs):
    for name, page in pages:
        times[name].append(open_time(page, "#3d" if name.endswith("#3d") else ""))
blank = statistics.median(times["blank"])
print(f"figures of a {n} x {n} transpose of doubles ({accesses} accesses), default point budget, "
      f"headless Chromium (software WebGL), median of {runs}: blank plotly page {blank:.2f} s")
for name, page in pages[1:]:
    t = statistics.median(times[name])
    print(f"  {name}: {os.path.basename(page)} {os.path.getsize(page) / 1e6:.1f} MB, "
          f"opens in {t:.2f} s = {t / blank:.2f}x the blank page (goal <= 2, page <= 10 MB)")
PY
