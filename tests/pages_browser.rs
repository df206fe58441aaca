//! Every kind of page mapvis writes, opened in headless Chromium, offline:
//! what the page shows is read back from the browser and checked against
//! numbers worked out by hand from the small C programs below (and against
//! the text the same command prints). For a figure, "what it shows" is
//! plotly's own data of the drawn graph: `_fullData` of every
//! `.js-plotly-plot` div after plotly drew it, so the page's decoding of its
//! compact data (base64 typed arrays, customdata by columns) is checked too.
//! Hidden traces (the 3D page's other planes) are made visible one at a time
//! and replay frames are applied one at a time with plotly's own restyle
//! before they are read. Tables (the index, the annotated source) are
//! read as the browser laid them out. Every page's screenshot must show ink
//! (dark pixels) and, for figures, colour.
//!
//! The pages are made by driving the real program (`mapvis -c`) in a
//! temporary folder. Skipped loudly without Chromium, except under CI
//! (`CI=true`), where a missing Chromium fails (see
//! `common::chromium_or_skip`). The heap page's browser test is
//! `vis_browser::the_heap_page_shows_both_bars_and_callers_above_callees`.

mod common;
mod vis_common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::chromium_or_skip;
use serde_json::Value;
use vis_common::{figures, grid, nums};

/// A 4 x 4 int array written row by row, then read column by column. The
/// loop counters and the sum live in registers, so that between the pins
/// the only memory accesses are `a`'s: 16 stores (line 10, row-major) then
/// 16 loads (line 13, column-major). `a` is one 64-byte line.
const ROWCOL_C: &str = r#"/* 4 x 4 ints: rows written, then columns read. */
#include "gleipnir.h"
int a[4][4] __attribute__((aligned(64)));
int main(void)
{
    register int i, j, s = 0;
    GL_START;
    for (i = 0; i < 4; i++)
        for (j = 0; j < 4; j++)
            a[i][j] = i * 4 + j; /* row store */
    for (j = 0; j < 4; j++)
        for (i = 0; i < 4; i++)
            s += a[i][j]; /* column load */
    GL_STOP;
    return s != 120;
}
"#;

/// The row stores and the column loads of ROWCOL_C as two regions, the
/// pins around each loop nest: 16 stores, then 16 loads.
const TWO_REGIONS_C: &str = r#"/* 4 x 4 ints: rows written, then columns read, each pinned. */
#include "gleipnir.h"
int a[4][4] __attribute__((aligned(64)));
int main(void)
{
    register int i, j, s = 0;
    GL_START;
    for (i = 0; i < 4; i++)
        for (j = 0; j < 4; j++)
            a[i][j] = i * 4 + j;
    GL_STOP;
    GL_START;
    for (j = 0; j < 4; j++)
        for (i = 0; i < 4; i++)
            s += a[i][j];
    GL_STOP;
    return s != 120;
}
"#;

/// A 16 x 16 int array (a row is one 64-byte line, 16 lines in all), set
/// before the pins and read column by column between them: 256 loads, the
/// only accesses of the traced region. With `-DTRANSPOSED` it is declared
/// the other way, so that the same walk reads it sequentially.
const COLWALK_C: &str = r#"/* 16 x 16 ints read column by column. */
#include "gleipnir.h"
int A[16][16] __attribute__((aligned(64)));
#ifdef TRANSPOSED
#define AT(i, j) A[j][i]
#else
#define AT(i, j) A[i][j]
#endif
int main(void)
{
    register int i, j, s = 0;
    for (i = 0; i < 16; i++)
        for (j = 0; j < 16; j++)
            AT(i, j) = i + j;
    GL_START;
    for (j = 0; j < 16; j++)
        for (i = 0; i < 16; i++)
            s += AT(i, j); /* column walk */
    GL_STOP;
    return s != 3840;
}
"#;

/// Two threads each increment their own 8-byte field of one 64-byte
/// aligned struct 100 times: the fields share a line (false sharing).
const SHARE_C: &str = r#"/* Two threads, two fields, one line. */
#include <pthread.h>
#include "gleipnir.h"
struct counters {
    long a;
    long b;
} __attribute__((aligned(64)));
static struct counters hits;
static pthread_barrier_t both;
static void *bump_a(void *unused)
{
    register int i;
    pthread_barrier_wait(&both);
    for (i = 0; i < 100; i++)
        hits.a++;
    return unused;
}
static void *bump_b(void *unused)
{
    register int i;
    pthread_barrier_wait(&both);
    for (i = 0; i < 100; i++)
        hits.b++;
    return unused;
}
int main(void)
{
    pthread_t t1, t2;
    pthread_barrier_init(&both, NULL, 2);
    GL_START;
    pthread_create(&t1, NULL, bump_a, NULL);
    pthread_create(&t2, NULL, bump_b, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    GL_STOP;
    return hits.a != hits.b;
}
"#;

/// The cache model of every test: L1 of 4 lines direct-mapped, L2 of 16
/// lines direct-mapped, 64-byte lines. Figures open in no browser.
const SETUP: &str = "set_open_browser off; set_mem_alloc G; set_cache L1 256 1 64; \
                     set_cache L2 1K 1 64; set_cache L3 off;";

/// The 1-based line of `src` holding `marker`.
fn line_in(src: &str, marker: &str) -> usize {
    src.lines().position(|l| l.contains(marker)).unwrap() + 1
}

/// Writes `source` as `name` into a fresh folder and runs `script` there;
/// returns the folder and what the script printed.
fn traced(name: &str, source: &str, script: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), source).unwrap();
    let out = common::mapvis_script(dir.path(), &format!("{SETUP} {script}"));
    (dir, out)
}

/// `rc.c` traced, with its complete, 2D (4 x 4), 3D (4 x 2 x 2) and cache
/// pages (the last with the annotated source) written.
fn rowcol_pages() -> (tempfile::TempDir, String) {
    traced(
        "rc.c",
        ROWCOL_C,
        "compile_exe rc.c; run_gleipnir; memory_trace_analysis; memory_stats; \
         complete_memory_access_pattern save; 2d_memory_access_pattern a 4 4 save; \
         3d_memory_access_pattern a 2 2 4 save; cache_stats save",
    )
}

/// The script put before a page's `</body>`: once the page has drawn its
/// figures (or failed), it records in the body's `data-probe` attribute,
/// as JSON, every plotly graph (`id`, the `heading` above it, `traces`:
/// picked fields of plotly's `_fullData`, `hidden`: each hidden trace read
/// after making it the visible one, `frames`: each animation frame's traces
/// read after animating to it), every table's cell texts and every link.
const PROBE: &str = r#"<script>
(function () {
  function plain(v, depth) {
    if (v === null || v === undefined) { return null; }
    if (typeof v === 'number') { return isFinite(v) ? v : null; }
    if (typeof v === 'string' || typeof v === 'boolean') { return v; }
    if (typeof v === 'function' || depth > 6) { return null; }
    if (ArrayBuffer.isView(v)) { return Array.from(v, function (x) { return isFinite(x) ? x : null; }); }
    if (Array.isArray(v)) {
      var out = [];
      for (var i = 0; i < v.length; i++) { out.push(plain(v[i], depth + 1)); }
      return out;
    }
    var o = {};
    Object.keys(v).forEach(function (k) { if (k.charAt(0) !== '_') { o[k] = plain(v[k], depth + 1); } });
    return o;
  }
  function pick(t) {
    var o = {};
    ['type', 'name', 'x', 'y', 'z', 'customdata', 'visible', 'zmin', 'zmax', 'xaxis', 'yaxis'].forEach(function (k) {
      if (t[k] !== undefined) { o[k] = plain(t[k], 0); }
    });
    if (t.colorbar && t.colorbar.title) { o.colorbar = String(t.colorbar.title.text || ''); }
    if (t.marker && t.marker.color !== undefined) { o.color = plain(t.marker.color, 0); }
    return o;
  }
  function heading(div) {
    for (var e = div.previousElementSibling; e; e = e.previousElementSibling) {
      if (/^H[1-3]$/.test(e.tagName)) { return e.textContent; }
    }
    return '';
  }
  function graph(div) {
    var g = { id: div.id, heading: heading(div), traces: div._fullData.map(pick), hidden: [], frames: [], axes: {},
              shapes: ((div._fullLayout && div._fullLayout.shapes) || []).map(function (s) {
                return { type: s.type, x0: plain(s.x0, 0), x1: plain(s.x1, 0), dash: s.line ? s.line.dash : null };
              }) };
    ['xaxis', 'xaxis2', 'yaxis', 'yaxis2'].forEach(function (k) {
      var a = div._fullLayout && div._fullLayout[k];
      if (a) { g.axes[k] = { domain: plain(a.domain, 0), matches: a.matches || null, range: plain(a.range, 0) }; }
    });
    var vis = div._fullData.map(function (t) { return t.visible; });
    var chain = Promise.resolve();
    vis.forEach(function (v, k) {
      if (v !== false) { return; }
      chain = chain.then(function () {
        return Plotly.restyle(div, { visible: vis.map(function (w, j) { return j === k; }) });
      }).then(function () { g.hidden.push(pick(div._fullData[k])); });
    });
    if (vis.indexOf(false) >= 0) {
      chain = chain.then(function () { return Plotly.restyle(div, { visible: vis }); });
    }
    var frames = (div._transitionData && div._transitionData._frames) || [];
    frames.forEach(function (f) {
      chain = chain.then(function () {
        // The frame's data, applied as the slider's animate would apply it
        // (plotly's animate promise did not resolve in headless Chromium).
        var update = {};
        f.data.forEach(function (d) {
          Object.keys(d).forEach(function (key) { if (key !== 'type') { update[key] = []; } });
        });
        f.data.forEach(function (d) {
          Object.keys(update).forEach(function (key) { update[key].push(d[key]); });
        });
        return Plotly.restyle(div, update, f.traces || [0]);
      }).then(function () {
        g.frames.push({ name: f.name, traces: (f.traces || [0]).map(function (k) { return pick(div._fullData[k]); }) });
      });
    });
    return chain.then(function () { return g; });
  }
  function cells(root, sel) {
    return Array.prototype.map.call(root.querySelectorAll(sel), function (e) { return e.textContent.trim(); });
  }
  function done(out) { document.body.setAttribute('data-probe', JSON.stringify(out)); }
  function go() {
    var b = document.body;
    if (b.hasAttribute('data-render-error')) { return done({ error: b.getAttribute('data-render-error') }); }
    if (document.querySelector('div.mapvis-fig') && !b.hasAttribute('data-rendered-figures')) {
      return setTimeout(go, 50);
    }
    var out = {
      graphs: [],
      deferred: b.getAttribute('data-deferred-figures'),
      tables: Array.prototype.map.call(document.querySelectorAll('table'), function (t) {
        return Array.prototype.map.call(t.querySelectorAll('tr'), function (r) { return cells(r, 'td, th'); });
      }),
      links: Array.prototype.map.call(document.querySelectorAll('a'), function (a) {
        return [a.textContent.trim(), a.getAttribute('href')];
      })
    };
    Array.prototype.reduce.call(document.querySelectorAll('.js-plotly-plot'), function (p, div) {
      return p.then(function () { return graph(div); }).then(function (g) { out.graphs.push(g); });
    }, Promise.resolve()).then(function () { done(out); }, function (e) { done({ error: String(e) }); });
  }
  go();
})();
</script>
</body>"#;

/// What the page `html` shows in Chromium (opened with `fragment`), as the
/// probe records it; panics when plotly failed or nothing was recorded.
fn read_page(bin: &Path, html: &Path, fragment: &str) -> Value {
    let text = std::fs::read_to_string(html).unwrap_or_else(|e| panic!("{html:?}: {e}"));
    assert!(text.contains("</body>"), "{html:?} has no </body>");
    let name = html.file_name().unwrap().to_string_lossy();
    let copy = html.with_file_name(format!("probe_{name}"));
    std::fs::write(&copy, text.replacen("</body>", PROBE, 1)).unwrap();
    let dom = vis_common::chromium(
        bin,
        &copy.canonicalize().unwrap(),
        fragment,
        &["--dump-dom".to_string()],
        30_000,
    );
    std::fs::remove_file(&copy).ok();
    let json = dom
        .split("data-probe=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("{html:?}: nothing recorded: {}", &dom[..dom.len().min(600)]))
        .replace("&quot;", "\"")
        .replace("&nbsp;", "\u{a0}")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert!(v.get("error").is_none(), "{html:?}: {}", v["error"]);
    v
}

/// The pixels of a PNG as 8-bit RGB, decoded by ImageMagick's `convert`.
fn rgb_pixels(png: &Path) -> Vec<[u8; 3]> {
    let out = Command::new("convert")
        .arg(png)
        .args(["-depth", "8", "rgb:-"])
        .output()
        .expect("ImageMagick's convert is installed (.ci/run installs it)");
    assert!(out.status.success(), "convert failed on {png:?}");
    out.stdout
        .chunks_exact(3)
        .map(|p| [p[0], p[1], p[2]])
        .collect()
}

/// Takes a 1200 x 900 screenshot of `html` and asserts that it is not
/// blank: at least 0.5% of its pixels are ink (dark) and, for a page of
/// figures (`coloured`), at least 0.1% are strongly coloured. A blank page
/// has none of either; the pages here have 1.5-3.5% ink and, with
/// figures, 0.2-1.7% colour.
fn assert_screenshot_not_blank(bin: &Path, html: &Path, fragment: &str, coloured: bool) {
    let page = html.canonicalize().unwrap();
    let png = page.with_extension("shot.png");
    vis_common::chromium(
        bin,
        &page,
        fragment,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1200,900".to_string(),
            "--hide-scrollbars".to_string(),
        ],
        5000,
    );
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("no screenshot {png:?}: {e}"));
    assert!(bytes.starts_with(b"\x89PNG"), "not a PNG");
    let px = rgb_pixels(&png);
    assert_eq!(px.len(), 1200 * 900, "screenshot size");
    let share =
        |f: &dyn Fn(&[u8; 3]) -> bool| px.iter().filter(|p| f(p)).count() as f64 / px.len() as f64;
    let ink = share(&|p| p.iter().min().unwrap() < &160);
    let colour = share(&|p| p.iter().max().unwrap() - p.iter().min().unwrap() > 40);
    assert!(ink > 0.005, "screenshot of {page:?} is blank: {ink:.4} ink");
    if coloured {
        assert!(
            colour > 0.001,
            "screenshot of {page:?} has no colour: {colour:.4}"
        );
    }
}

/// The graph `id` of a read page.
fn graph<'a>(page: &'a Value, id: &str) -> &'a Value {
    page["graphs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == id)
        .unwrap_or_else(|| panic!("no graph {id}"))
}

/// The names of a graph's traces.
fn names(g: &Value) -> Vec<String> {
    g["traces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The trace called `name` of a graph.
fn trace<'a>(g: &'a Value, name: &str) -> &'a Value {
    g["traces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no trace {name:?} in {}: {:?}", g["id"], names(g)))
}

/// Numbers of a JSON array, as whole numbers.
fn ints(v: &Value) -> Vec<i64> {
    nums(v)
        .into_iter()
        .map(|x| {
            assert!(x.fract() == 0.0, "{x} is not whole");
            x as i64
        })
        .collect()
}

/// A heatmap's `z` as whole numbers (`None` for an empty cell).
fn int_grid(z: &Value) -> Vec<Vec<Option<i64>>> {
    grid(z)
        .into_iter()
        .map(|r| r.into_iter().map(|c| c.map(|x| x as i64)).collect())
        .collect()
}

/// Column `k` of a trace's customdata rows, as text.
fn column(t: &Value, k: usize) -> Vec<String> {
    t["customdata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| match &row[k] {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        })
        .collect()
}

/// Whether two JSON values hold the same data, numbers compared to 1e-6.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-6 * x.abs().max(1.0)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        _ => a == b,
    }
}

/// Asserts that what plotly drew (x, y, z and customdata of each visible
/// trace) is the data embedded in the page, decoded independently in Rust
/// (`vis_common::figures`): the page's own decoding lost or changed nothing.
fn assert_drawn_as_embedded(page: &Value, html: &Path) {
    let embedded = figures(html);
    let graphs = page["graphs"].as_array().unwrap();
    assert_eq!(graphs.len(), embedded.len(), "{html:?}: graphs drawn");
    for (g, fig) in graphs.iter().zip(&embedded) {
        let data = fig["data"].as_array().unwrap();
        let traces = g["traces"].as_array().unwrap();
        assert_eq!(traces.len(), data.len(), "{html:?} {}: traces", g["id"]);
        for (t, d) in traces.iter().zip(data) {
            if t["visible"] == false {
                continue;
            }
            for key in ["x", "y", "z", "customdata"] {
                if let (Some(drawn), Some(made)) = (t.get(key), d.get(key)) {
                    assert!(
                        same(drawn, made),
                        "{html:?} {} {:?}: plotly's {key} differs from the page's data",
                        g["id"],
                        t["name"]
                    );
                }
            }
        }
    }
}

/// The address of element `name` (`a[0][0]`) in memory_stats' printed
/// per-address table.
fn printed_address(out: &str, name: &str) -> u64 {
    let line = out
        .lines()
        .find(|l| l.split_whitespace().last() == Some(name))
        .unwrap_or_else(|| panic!("memory_stats printed no row for {name}"));
    let hex = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("0x"))
        .unwrap();
    u64::from_str_radix(hex, 16).unwrap()
}

/// The element indices (row, col) of `a` in the order `rc.c` touches them:
/// 16 stores row by row, then 16 loads column by column.
fn rowcol_order() -> Vec<(i64, i64)> {
    let rows = (0..4).flat_map(|i| (0..4).map(move |j| (i, j)));
    let cols = (0..4).flat_map(|j| (0..4).map(move |i| (i, j)));
    rows.chain(cols).collect()
}

/// The complete pattern of `rc.c`: the 3D view draws 32 points, the first
/// 16 at occurrence 1 and addresses `a + 4 * (4i + j)` row by row, the next
/// 16 at occurrence 2 column by column, coloured by a strictly rising time;
/// the 2D view draws them as two traces named after the variable and
/// operation, `a store` (16 points, source line 10, row-wise) and `a load`
/// (16, line 13, column-wise), every store before every load, with each
/// point's element name matching its address. The address of `a[0][0]`
/// is the one memory_stats prints; all expectations are worked out from
/// the program's loops.
#[test]
fn complete_page_shows_each_access_of_the_array() {
    let Some(bin) = chromium_or_skip("the complete page was not read back") else {
        return;
    };
    let (dir, out) = rowcol_pages();
    let html = dir
        .path()
        .join("figures/complete_memory_access_pattern.html");
    let page = read_page(&bin, &html, "#3d");
    let base = printed_address(&out, "a[0][0]") as i64;
    assert_eq!(base % 64, 0, "a is 64-byte aligned");
    let order = rowcol_order();
    let addr = |&(i, j): &(i64, i64)| base + 4 * (4 * i + j);

    let g0 = graph(&page, "fig0");
    assert_eq!(names(g0), ["accesses"]);
    let t = trace(g0, "accesses");
    assert_eq!(ints(&t["z"]), order.iter().map(addr).collect::<Vec<_>>());
    let occ: Vec<i64> = (0..32).map(|k| 1 + (k >= 16) as i64).collect();
    assert_eq!(ints(&t["x"]), occ, "occurrence");
    assert_eq!(ints(&t["y"]), vec![0; 32], "one variable");
    let time = ints(&t["color"]);
    assert!(time.windows(2).all(|w| w[0] < w[1]), "time rises: {time:?}");

    let g1 = graph(&page, "fig1");
    let mut n = names(g1);
    n.sort();
    assert_eq!(n, ["a load", "a store"]);
    let src_line = |m: &str| format!("rc.c:{}", line_in(ROWCOL_C, m));
    for (name, range, op, line, pattern) in [
        (
            "a store",
            0..16,
            "store",
            src_line("row store"),
            "row-wise: unit stride",
        ),
        (
            "a load",
            16..32,
            "load",
            src_line("column load"),
            "column-wise: stride 4 elements (16 B)",
        ),
    ] {
        let t = trace(g1, name);
        assert_eq!(ints(&t["x"]), time[range.clone()].to_vec(), "{name}: times");
        let want: Vec<i64> = order[range.clone()].iter().map(addr).collect();
        assert_eq!(ints(&t["y"]), want, "{name}: addresses");
        assert_eq!(column(t, 2), vec![op; 16], "{name}: operation");
        assert_eq!(column(t, 5), vec![line.clone(); 16], "{name}: source");
        let elems: Vec<String> = order[range]
            .iter()
            .map(|(i, j)| format!("a[{i}][{j}]"))
            .collect();
        assert_eq!(column(t, 7), elems, "{name}: elements");
        assert_eq!(column(t, 8), vec![pattern; 16], "{name}: pattern");
    }
    assert_drawn_as_embedded(&page, &html);
    assert_screenshot_not_blank(&bin, &html, "#3d", true);
}

/// The 2D page of `rc.c`'s `a` as 4 x 4: the scatter draws 32 points at
/// (column j, occurrence, row i), stores row by row at occurrence 1, then
/// loads column by column at occurrence 2; the heatmaps give every element
/// 2 accesses and a store share of 0.5, first accesses (the stores) rising
/// row by row, last accesses (the loads) rising column by column and all
/// after every first one, each equal to that element's times in the
/// scatter. Stepped through in plotly, the replay's "accesses in this
/// step" add up to 2 per element, "accesses so far" is their running sum
/// and ends at 2 everywhere. All worked out from the program's loops.
#[test]
fn two_d_page_shows_one_store_and_one_load_per_element() {
    let Some(bin) = chromium_or_skip("the 2D page was not read back") else {
        return;
    };
    let (dir, _) = rowcol_pages();
    let html = dir.path().join("figures/2d_memory_access_pattern_a.html");
    let page = read_page(&bin, &html, "#3d");
    let order = rowcol_order();

    let t = trace(graph(&page, "fig0"), "a");
    assert_eq!(
        ints(&t["x"]),
        order.iter().map(|p| p.1).collect::<Vec<_>>(),
        "column"
    );
    assert_eq!(
        ints(&t["z"]),
        order.iter().map(|p| p.0).collect::<Vec<_>>(),
        "row"
    );
    let occ: Vec<i64> = (0..32).map(|k| 1 + (k >= 16) as i64).collect();
    assert_eq!(ints(&t["y"]), occ, "occurrence");
    let ops = column(t, 1);
    assert_eq!(ops[..16], vec!["store"; 16][..]);
    assert_eq!(ops[16..], vec!["load"; 16][..]);
    let time = ints(&t["color"]);
    assert!(time.windows(2).all(|w| w[0] < w[1]), "time rises: {time:?}");

    let heat = |id: &str, label: &str| {
        let g = graph(&page, id);
        let t = &g["traces"][0];
        assert_eq!(t["colorbar"], label, "{id}");
        assert_eq!(ints(&t["x"]), [0, 1, 2, 3], "{id}");
        assert_eq!(ints(&t["y"]), [0, 1, 2, 3], "{id}");
        t["z"].clone()
    };
    assert_eq!(
        int_grid(&heat("fig1", "accesses")),
        vec![vec![Some(2); 4]; 4]
    );
    assert_eq!(
        grid(&heat("fig4", "store share")),
        vec![vec![Some(0.5); 4]; 4]
    );
    let first = int_grid(&heat("fig2", "first access"));
    let last = int_grid(&heat("fig3", "last access"));
    for (k, &(i, j)) in order.iter().enumerate() {
        let want = if k < 16 { &first } else { &last };
        assert_eq!(
            want[i as usize][j as usize],
            Some(time[k]),
            "a[{i}][{j}] at step {k}"
        );
    }

    // The replays, stepped through in plotly.
    let steps = |id: &str| -> Vec<Vec<Vec<i64>>> {
        let g = graph(&page, id);
        let frames = g["frames"].as_array().unwrap();
        assert!(!frames.is_empty(), "{id} has frames");
        frames
            .iter()
            .map(|f| {
                grid(&f["traces"][0]["z"])
                    .into_iter()
                    .map(|r| r.into_iter().map(|c| c.unwrap_or(0.0) as i64).collect())
                    .collect()
            })
            .collect()
    };
    let so_far = steps("fig5");
    let in_step = steps("fig6");
    assert_eq!(so_far.len(), in_step.len());
    let mut sum = vec![vec![0i64; 4]; 4];
    for (k, (f, s)) in so_far.iter().zip(&in_step).enumerate() {
        for i in 0..4 {
            for j in 0..4 {
                sum[i][j] += s[i][j];
            }
        }
        assert_eq!(f, &sum, "accesses so far at frame {k}");
    }
    assert_eq!(
        sum,
        vec![vec![2; 4]; 4],
        "every element twice over the replay"
    );
    assert_drawn_as_embedded(&page, &html);
    assert_screenshot_not_blank(&bin, &html, "#3d", true);
}

/// The 3D page of `rc.c`'s `a` as 4 x 2 x 2 (element `e = 4i + 2j + k`):
/// the scatter puts each access at (j, k, i), stores in element order then
/// loads in the order `e = 4r + c` (c outer, r inner); each plane i of the
/// count slices (read in plotly after making it the visible plane) gives 2
/// accesses per element, and of the first-access slices the store time of
/// each element, as the scatter colours it. Worked out from the loops.
#[test]
fn three_d_page_shows_each_plane_of_the_array() {
    let Some(bin) = chromium_or_skip("the 3D page was not read back") else {
        return;
    };
    let (dir, _) = rowcol_pages();
    let html = dir.path().join("figures/3d_memory_access_pattern_a.html");
    let page = read_page(&bin, &html, "#3d");
    let elems: Vec<i64> = rowcol_order().iter().map(|(r, c)| 4 * r + c).collect();
    let t = trace(graph(&page, "fig0"), "a");
    assert_eq!(
        ints(&t["x"]),
        elems.iter().map(|e| e / 2 % 2).collect::<Vec<_>>(),
        "j"
    );
    assert_eq!(
        ints(&t["y"]),
        elems.iter().map(|e| e % 2).collect::<Vec<_>>(),
        "k"
    );
    assert_eq!(
        ints(&t["z"]),
        elems.iter().map(|e| e / 4).collect::<Vec<_>>(),
        "i"
    );
    let time = ints(&t["color"]);
    assert!(time.windows(2).all(|w| w[0] < w[1]), "time rises: {time:?}");

    let planes = |id: &str, label: &str| -> Vec<Vec<Vec<Option<i64>>>> {
        let g = graph(&page, id);
        let shown = g["traces"].as_array().unwrap();
        let hidden = g["hidden"].as_array().unwrap();
        assert_eq!(shown.len(), 4, "{id}: a trace per plane");
        assert_eq!(hidden.len(), 3, "{id}: planes 1 to 3 start hidden");
        std::iter::once(&shown[0])
            .chain(hidden)
            .enumerate()
            .map(|(i, t)| {
                assert_eq!(t["name"], format!("plane {i}"), "{id}");
                assert_eq!(t["colorbar"], label, "{id}");
                int_grid(&t["z"])
            })
            .collect()
    };
    let counts = planes("fig2", "accesses");
    assert_eq!(counts, vec![vec![vec![Some(2); 2]; 2]; 4]);
    let first = planes("fig1", "first access");
    for (e, &t) in time[..16].iter().enumerate() {
        let (i, j, k) = (e / 4, e / 2 % 2, e % 2);
        assert_eq!(first[i][j][k], Some(t), "first access of element {e}");
    }
    assert_drawn_as_embedded(&page, &html);
    assert_screenshot_not_blank(&bin, &html, "#3d", true);
}

/// The 3D page's first-access slices are drawn on a colour scale that
/// spans their values: the page starts on "one scale for the run", so
/// every plane's `zmin`/`zmax` (plotly's, as drawn) must hold the smallest
/// and largest first-access time of the whole array (the 16 store times,
/// from the scatter's colours). A scale that ends below the data paints
/// most elements the same saturated colour. Here the loop counters live on
/// the stack (no `register`), so that the trace's time also counts their
/// accesses, which `set_mem_alloc G` leaves out: the store times of `a`
/// are then not 0 to 15 (with only `a`'s accesses they are, and a scale
/// made from first-access ranks would pass unnoticed).
#[test]
fn three_d_page_colour_scale_spans_the_first_access_times() {
    let Some(bin) = chromium_or_skip("the 3D page's scale was not read back") else {
        return;
    };
    let (dir, _) = traced(
        "rc.c",
        &ROWCOL_C.replace("register int", "int"),
        "compile_exe rc.c; run_gleipnir; memory_trace_analysis; \
         3d_memory_access_pattern a 2 2 4 save",
    );
    let html = dir.path().join("figures/3d_memory_access_pattern_a.html");
    let page = read_page(&bin, &html, "#3d");
    let time = ints(&trace(graph(&page, "fig0"), "a")["color"]);
    let (lo, hi) = (time[0] as f64, time[15] as f64);
    assert!(
        hi > 15.0,
        "the stores' times count the counters' accesses: {time:?}"
    );
    let g = graph(&page, "fig1");
    for t in g["traces"]
        .as_array()
        .unwrap()
        .iter()
        .take(1)
        .chain(g["hidden"].as_array().unwrap())
    {
        let (zmin, zmax) = (t["zmin"].as_f64().unwrap(), t["zmax"].as_f64().unwrap());
        assert!(
            zmin <= lo && zmax >= hi,
            "{}: colour scale {zmin}..{zmax} but first accesses span {lo}..{hi}",
            t["name"]
        );
    }
}

/// The annotated source of `rc.c` (`cache_stats save`): line 10 (the row
/// stores) has 16 accesses, 1 L1 and 1 L2 miss (the one compulsory miss
/// of `a`, a single aligned line, on its first store) and names `a` as
/// row-wise; line 13 (the column loads) has 16 accesses and no misses and
/// names `a` column-wise; no other line has accesses (the counters are in
/// registers). The same numbers as cache_stats prints per line.
#[test]
fn annotated_source_page_shows_each_lines_accesses_and_misses() {
    let Some(bin) = chromium_or_skip("the annotated source was not read back") else {
        return;
    };
    let (dir, out) = rowcol_pages();
    let html = dir.path().join("figures/source_rc.c.html");
    let page = read_page(&bin, &html, "");
    let rows = page["tables"][0].as_array().unwrap();
    assert_eq!(
        rows[0],
        serde_json::json!([
            "line",
            "accesses",
            "L1 misses",
            "L2 misses",
            "source",
            "variables: pattern"
        ])
    );
    assert_eq!(
        rows.len(),
        1 + ROWCOL_C.lines().count(),
        "a row per source line"
    );
    let store = line_in(ROWCOL_C, "row store");
    let load = line_in(ROWCOL_C, "column load");
    for (n, (row, text)) in rows[1..].iter().zip(ROWCOL_C.lines()).enumerate() {
        let n = n + 1;
        let cell = |k: usize| row[k].as_str().unwrap().to_string();
        assert_eq!(cell(0), n.to_string());
        assert_eq!(cell(4), text.trim(), "line {n}'s source");
        let want: [&str; 4] = if n == store {
            [
                "16",
                "1",
                "1",
                "a: row-wise: unit stride, 64 of 64 bytes per line used",
            ]
        } else if n == load {
            ["16", "0", "0", "a: column-wise: stride 4 elements (16 B)"]
        } else {
            ["", "", "", ""]
        };
        let got = [cell(1), cell(2), cell(3), cell(5)];
        assert_eq!(got, want, "line {n}");
    }
    // cache_stats printed the same per line.
    for (n, acc, l1, l2) in [(store, 16, 1, 1), (load, 16, 0, 0)] {
        let printed = out
            .lines()
            .find(|l| l.starts_with(&format!("rc.c:{n} ")))
            .unwrap_or_else(|| panic!("cache_stats printed no line {n}"));
        let w: Vec<&str> = printed.split_whitespace().collect();
        assert_eq!(
            w[1..4],
            [acc.to_string(), l1.to_string(), l2.to_string()],
            "{printed}"
        );
    }
    assert_screenshot_not_blank(&bin, &html, "", false);
}

/// The index lists the pages `rowcol_pages` wrote, each linked, with the
/// command that draws it and what it shows: the complete pattern of 32
/// accesses of 1 variable, `a` as a 4 x 4 and a 4 x 2 x 2 array of 4-byte
/// elements, and the cache page; every link opens a file of the folder.
#[test]
fn index_page_lists_every_page_with_its_command_and_shape() {
    let Some(bin) = chromium_or_skip("the index was not read back") else {
        return;
    };
    let (dir, _) = rowcol_pages();
    let html = dir.path().join("figures/index.html");
    let page = read_page(&bin, &html, "");
    let rows = page["tables"][0].as_array().unwrap();
    assert_eq!(
        rows[0],
        serde_json::json!(["figure", "command", "shows", "trace"])
    );
    let row = |file: &str| -> Vec<String> {
        let link = page["links"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l[1] == file)
            .unwrap_or_else(|| panic!("the index links no {file}: {}", page["links"]));
        let title = link[0].as_str().unwrap();
        let r = rows
            .iter()
            .find(|r| r[0] == title)
            .unwrap_or_else(|| panic!("no row titled {title}"));
        r.as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().to_string())
            .collect()
    };
    let want = [
        (
            "complete_memory_access_pattern.html",
            "Complete memory access pattern (32 accesses)",
            "complete_memory_access_pattern",
            "32 accesses of 1 variable",
        ),
        (
            "2d_memory_access_pattern_a.html",
            "2D memory access pattern of a (4 x 4)",
            "2d_memory_access_pattern a 4 4",
            "4 x 4 array of 4-byte elements",
        ),
        (
            "3d_memory_access_pattern_a.html",
            "3D memory access pattern of a (4 x 2 x 2)",
            "3d_memory_access_pattern a 2 2 4",
            "4 x 2 x 2 array of 4-byte elements",
        ),
        (
            "cache_stats.html",
            "Cache behaviour by variable",
            "cache_stats save",
            "misses per variable and level, miss-ratio curves",
        ),
    ];
    for (file, title, command, shows) in want {
        let r = row(file);
        assert_eq!(r[..3], [title, command, shows], "{file}");
        assert!(!r[3].contains("STALE"), "{file}: {}", r[3]);
    }
    for l in page["links"].as_array().unwrap() {
        let href = l[1].as_str().unwrap();
        assert!(dir.path().join("figures").join(href).is_file(), "{href}");
    }
    assert_eq!(rows.len(), 1 + 5, "the four pages and the annotated source");
    assert_screenshot_not_blank(&bin, &html, "", false);
}

/// The annotated source page is written by mapvis (`cache_stats save`), so
/// the index must say so and name that command, as it does for every other
/// page mapvis writes, not list it as "(not written by mapvis)".
#[test]
fn index_page_names_the_command_of_the_annotated_source() {
    let Some(bin) = chromium_or_skip("the index was not read back") else {
        return;
    };
    let (dir, _) = rowcol_pages();
    let page = read_page(&bin, &dir.path().join("figures/index.html"), "");
    let rows = page["tables"][0].as_array().unwrap();
    let r = rows
        .iter()
        .find(|r| r[0] == "rc.c: accesses and misses")
        .unwrap_or_else(|| panic!("no row for the annotated source: {rows:?}"));
    assert_eq!(r[1], "cache_stats save", "{r}");
}

/// `colwalk.c` traced and kept as run `naive`, then built with
/// `-DTRANSPOSED`, traced and kept as `transposed`; `extra` runs after.
fn two_runs(extra: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cw.c"), COLWALK_C).unwrap();
    common::mapvis_script(
        dir.path(),
        &format!("{SETUP} compile_exe cw.c; run_gleipnir; memory_trace_analysis; save_run naive"),
    );
    let out = common::mapvis_script(
        dir.path(),
        &format!(
            "{SETUP} compile_exe cw.c -DTRANSPOSED; run_gleipnir; memory_trace_analysis; \
             save_run transposed; {extra}"
        ),
    );
    (dir, out)
}

/// The byte offsets of the column walk over a 16 x 16 int array stored
/// row-major: access t reads `A[t % 16][t / 16]`, at `64 (t % 16) + 4 (t / 16)`.
fn column_walk() -> Vec<i64> {
    (0..256).map(|t| 64 * (t % 16) + 4 * (t / 16)).collect()
}

/// L1 and L2 misses of `A` worked out by hand. Column walk: the 16 rows are
/// 16 lines; between two reads of a line 15 others are read, so in the
/// 4-line direct-mapped L1 every one of the 256 reads misses, while the
/// 16-line direct-mapped L2 holds all 16 (aligned, one per set): 16
/// compulsory misses. Sequential walk: one miss per line, 16 at both levels.
const NAIVE_MISSES: [i64; 2] = [256, 16];
const SEQUENTIAL_MISSES: [i64; 2] = [16, 16];

/// `what_if A transpose 16 16 4 save` on the column walk: the page draws
/// A's offsets before (the column walk, `64 (t % 16) + 4 (t / 16)`) and
/// after (transposed, the same walk is sequential: `4t`) over the 256
/// accesses, and its misses per level before (256, 16) and after (16, 16),
/// worked out by hand and as the command prints them.
#[test]
fn what_if_page_shows_the_walk_and_misses_before_and_after() {
    let Some(bin) = chromium_or_skip("the what-if page was not read back") else {
        return;
    };
    let (dir, out) = traced(
        "cw.c",
        COLWALK_C,
        "compile_exe cw.c; run_gleipnir; memory_trace_analysis; what_if A transpose 16 16 4 save",
    );
    assert!(
        out.lines().any(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() > 9
                && w[..4] == ["A", "256", "->", "256"]
                && w[4..7] == ["256", "->", "16"]
                && w[8..11] == ["16", "->", "16"]
        }),
        "what_if printed other numbers:\n{out}"
    );
    let html = dir.path().join("figures/what_if_A_transpose_16_16_4.html");
    let page = read_page(&bin, &html, "");
    let g0 = graph(&page, "fig0");
    assert_eq!(names(g0), ["before: A", "after (predicted): A"]);
    let before = trace(g0, "before: A");
    let after = trace(g0, "after (predicted): A");
    let t: Vec<i64> = (0..256).collect();
    assert_eq!(ints(&before["x"]), t);
    assert_eq!(ints(&after["x"]), t);
    assert_eq!(ints(&before["y"]), column_walk());
    assert_eq!(
        ints(&after["y"]),
        t.iter().map(|t| 4 * t).collect::<Vec<_>>()
    );
    let g1 = graph(&page, "fig1");
    assert_eq!(names(g1), ["before (recorded)", "after (predicted)"]);
    for (name, want) in [
        ("before (recorded)", NAIVE_MISSES),
        ("after (predicted)", SEQUENTIAL_MISSES),
    ] {
        let bars = trace(g1, name);
        assert_eq!(bars["x"], serde_json::json!(["L1", "L2"]), "{name}");
        assert_eq!(ints(&bars["y"]), want, "{name}");
    }
    assert_drawn_as_embedded(&page, &html);
    assert_screenshot_not_blank(&bin, &html, "", true);
}

/// `compare_runs naive transposed save`: for A, both runs' offsets over
/// time (the column walk and the sequential walk), misses per level
/// (256, 16 against 16, 16) and miss-ratio curves, all worked out by hand:
/// in the column walk a line is reused after 15 other lines, so a fully
/// associative LRU cache of 1 to 8 lines (64 to 512 B) misses every
/// access and one of 16 or more lines (1 KiB, 2 KiB) only the 16
/// compulsory ones (16/256); in the sequential walk a line is reused at
/// once, so even one line gives 16/256. The printed comparison holds the
/// same misses, and each run's annotated source gives line 20 its misses.
#[test]
fn compare_page_shows_both_runs_walks_misses_and_curves() {
    let Some(bin) = chromium_or_skip("the compare page was not read back") else {
        return;
    };
    let (dir, out) = two_runs("compare_runs naive transposed save");
    let printed = |run: &str| -> Vec<String> {
        out.lines()
            .find(|l| l.split_whitespace().any(|w| w == run) && l.contains("1024"))
            .unwrap_or_else(|| panic!("no printed row for {run}:\n{out}"))
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    // variable run accesses bytes L1 L2 ...; the second row has no variable.
    assert_eq!(printed("naive")[2..6], ["256", "1024", "256", "16"]);
    assert_eq!(printed("transposed")[1..5], ["256", "1024", "16", "16"]);

    let html = dir.path().join("figures/compare_naive_transposed.html");
    let page = read_page(&bin, &html, "");
    assert_eq!(
        page["graphs"].as_array().unwrap().len(),
        3,
        "one variable, three figures"
    );
    let g0 = graph(&page, "fig0");
    let naive = trace(g0, "naive (256 points)");
    let transposed = trace(g0, "transposed (256 points)");
    // Side by side: run A left, run B right, on shared axes, as drawn.
    assert_eq!(
        (&naive["xaxis"], &naive["yaxis"]),
        (&"x".into(), &"y".into())
    );
    assert_eq!(
        (&transposed["xaxis"], &transposed["yaxis"]),
        (&"x2".into(), &"y2".into())
    );
    let axes = &g0["axes"];
    assert_eq!(axes["xaxis2"]["matches"], "x", "{axes}");
    assert_eq!(axes["yaxis2"]["matches"], "y", "{axes}");
    assert!(
        nums(&axes["xaxis"]["domain"])[1] < nums(&axes["xaxis2"]["domain"])[0],
        "{axes}"
    );
    assert_eq!(
        axes["xaxis"]["range"], axes["xaxis2"]["range"],
        "one time scale"
    );
    assert_eq!(
        axes["yaxis"]["range"], axes["yaxis2"]["range"],
        "one offset scale"
    );
    let t: Vec<i64> = (0..256).collect();
    assert_eq!(ints(&naive["x"]), t);
    assert_eq!(ints(&transposed["x"]), t);
    assert_eq!(ints(&naive["y"]), column_walk());
    assert_eq!(
        ints(&transposed["y"]),
        t.iter().map(|t| 4 * t).collect::<Vec<_>>()
    );
    let g1 = graph(&page, "fig1");
    for (name, want) in [("naive", NAIVE_MISSES), ("transposed", SEQUENTIAL_MISSES)] {
        let bars = trace(g1, name);
        assert_eq!(bars["x"], serde_json::json!(["L1", "L2"]), "{name}");
        assert_eq!(ints(&bars["y"]), want, "{name}");
    }
    let g2 = graph(&page, "fig2");
    let curve = |name: &str| -> Vec<(i64, f64)> {
        let c = trace(g2, name);
        ints(&c["x"]).into_iter().zip(nums(&c["y"])).collect()
    };
    let naive_curve = curve("naive");
    assert!(!naive_curve.is_empty());
    for (bytes, ratio) in naive_curve {
        let want = if bytes / 64 >= 16 { 16.0 / 256.0 } else { 1.0 };
        assert_eq!(ratio, want, "naive at {bytes} B");
    }
    let seq_curve = curve("transposed");
    assert!(!seq_curve.is_empty());
    for (bytes, ratio) in seq_curve {
        assert_eq!(ratio, 16.0 / 256.0, "transposed at {bytes} B");
    }
    assert_drawn_as_embedded(&page, &html);
    assert_screenshot_not_blank(&bin, &html, "", true);

    // Each run's annotated source, linked from the page.
    let walk = line_in(COLWALK_C, "column walk");
    for (run, [l1, l2]) in [("naive", NAIVE_MISSES), ("transposed", SEQUENTIAL_MISSES)] {
        let file = format!("run_{run}/source_cw.c.html");
        assert!(
            page["links"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l[1] == file.as_str()),
            "no link to {file}: {}",
            page["links"]
        );
        let src = read_page(&bin, &dir.path().join("figures").join(&file), "");
        let row = &src["tables"][0][walk];
        assert_eq!(row[0], walk.to_string(), "{file}");
        assert_eq!(
            row.as_array().unwrap()[1..4],
            [
                serde_json::json!("256"),
                serde_json::json!(l1.to_string()),
                serde_json::json!(l2.to_string())
            ],
            "{file} line {walk}"
        );
    }
}

/// `plot_runs misses_L1 naive transposed`: one line, A, through the two
/// runs in that order at 256 and 16 L1 misses (worked out by hand, see
/// `NAIVE_MISSES`), as the command prints them.
#[test]
fn runs_page_shows_each_runs_metric() {
    let Some(bin) = chromium_or_skip("the runs page was not read back") else {
        return;
    };
    let (dir, out) = two_runs("plot_runs misses_L1 naive transposed");
    assert!(
        out.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["A", "256", "16"]),
        "plot_runs printed:\n{out}"
    );
    let html = dir.path().join("figures/runs_misses_L1.html");
    let page = read_page(&bin, &html, "");
    let g = graph(&page, "fig0");
    assert_eq!(names(g), ["A"]);
    let t = trace(g, "A");
    assert_eq!(t["x"], serde_json::json!(["naive", "transposed"]));
    assert_eq!(ints(&t["y"]), [NAIVE_MISSES[0], SEQUENTIAL_MISSES[0]]);
    assert_drawn_as_embedded(&page, &html);
    assert_screenshot_not_blank(&bin, &html, "", true);
}

/// `advise save` on the column walk: the advice page ranks loop
/// interchange first (its L1 misses 256 -> 16, worked out above; L2 16 ->
/// 16) and transposing A second (the same numbers, a larger change), both
/// as bars of the drawn graph; padding saves nothing (a column's 16 lines
/// never fit the 4-line L1) and is not listed. Each suggestion links its
/// what-if page, which exists, and the walk's line in the annotated
/// source, whose row carries that anchor.
#[test]
fn advice_page_ranks_the_changes_and_links_their_pages() {
    let Some(bin) = chromium_or_skip("the advice page was not read back") else {
        return;
    };
    let (dir, out) = traced(
        "cw.c",
        COLWALK_C,
        "compile_exe cw.c; run_gleipnir; memory_trace_analysis; advise save",
    );
    let line = line_in(COLWALK_C, "column walk");
    let html = dir.path().join("figures/advice.html");
    let page = read_page(&bin, &html, "");
    let g = graph(&page, "fig0");
    let labels = serde_json::json!(["1. A interchange", "2. A transpose"]);
    for (name, want) in [
        ("L1 misses before", [NAIVE_MISSES[0]; 2]),
        ("L1 misses after", [SEQUENTIAL_MISSES[0]; 2]),
        ("L2 misses before", [NAIVE_MISSES[1]; 2]),
        ("L2 misses after", [SEQUENTIAL_MISSES[1]; 2]),
    ] {
        let bars = trace(g, name);
        assert_eq!(bars["x"], labels, "{name}\n{out}");
        assert_eq!(ints(&bars["y"]), want, "{name}");
    }
    let links: Vec<(String, String)> = page["links"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| Some((l[0].as_str()?.into(), l[1].as_str()?.into())))
        .filter(|(_, h): &(String, String)| !h.starts_with("http"))
        .collect();
    let source = (format!("cw.c:{line}"), format!("source_cw.c.html#L{line}"));
    assert_eq!(
        links,
        [
            (
                "what-if figure".to_string(),
                format!("what_if_A_interchange_cw.c_{line}.html")
            ),
            source.clone(),
            (
                "what-if figure".to_string(),
                "what_if_A_transpose.html".to_string()
            ),
            source,
        ],
        "{out}"
    );
    for (_, href) in &links {
        let file = href.split('#').next().unwrap();
        assert!(dir.path().join("figures").join(file).is_file(), "{href}");
    }
    let src = std::fs::read_to_string(dir.path().join("figures/source_cw.c.html")).unwrap();
    assert!(
        src.contains(&format!("<tr id=\"L{line}\"")),
        "the line's anchor"
    );
    assert_drawn_as_embedded(&page, &html);
    assert_screenshot_not_blank(&bin, &html, "", true);
}

/// `share.c` traced with `sharing_stats save`: its page and the CSV.
fn sharing_page() -> (tempfile::TempDir, PathBuf, Vec<Vec<String>>) {
    let (dir, _) = traced(
        "sh.c",
        SHARE_C,
        "compile_exe sh.c -pthread; run_gleipnir; memory_trace_analysis; sharing_stats save",
    );
    let csv = std::fs::read_to_string(dir.path().join("visinfo/sharing_stats.csv")).unwrap();
    let rows = csv.lines().skip(1).map(split_csv).collect();
    let html = dir.path().join("figures/sharing.html");
    (dir, html, rows)
}

/// The fields of a CSV line (fields may be quoted, without quotes inside).
fn split_csv(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

/// Byte ranges as sharing_stats writes them (`0-3, 16-19`) as a set.
fn byte_set(ranges: &str) -> std::collections::BTreeSet<i64> {
    ranges
        .split(", ")
        .filter(|r| !r.is_empty())
        .flat_map(|r| {
            let (a, b) = r.split_once('-').unwrap_or((r, r));
            a.parse::<i64>().unwrap()..=b.parse::<i64>().unwrap()
        })
        .collect()
}

/// The (thread, byte) squares of a sharing graph's trace `name`.
fn squares(g: &Value, name: &str) -> std::collections::BTreeSet<(i64, i64)> {
    match g["traces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
    {
        Some(t) => ints(&t["y"]).into_iter().zip(ints(&t["x"])).collect(),
        None => Default::default(),
    }
}

/// The sharing page of `share.c`: the line of `hits` is false sharing; in
/// plotly's data thread 2 (the first created, `bump_a`) read and wrote
/// bytes 0-7, named `hits.a`, and thread 3 bytes 8-15, named `hits.b`, and
/// no byte was only read or only written (each `++` loads and stores its
/// field). Worked out from the program; the transfers in its heading are
/// Valgrind's schedule's, and must be those sharing_stats wrote.
#[test]
fn sharing_page_shows_each_threads_bytes_of_the_false_shared_line() {
    let Some(bin) = chromium_or_skip("the sharing page was not read back") else {
        return;
    };
    let (_dir, html, csv) = sharing_page();
    let page = read_page(&bin, &html, "");
    let g = page["graphs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["heading"].as_str().unwrap().ends_with("(hits)"))
        .unwrap_or_else(|| panic!("no figure of the hits line"));
    let heading = g["heading"].as_str().unwrap();
    let row = csv
        .iter()
        .find(|r| r[5] == "hits")
        .expect("sharing_stats wrote the hits line");
    assert_eq!(
        heading,
        format!(
            "line {}: false sharing, {} transfers (hits)",
            row[0], row[2]
        )
    );
    assert_eq!(row[1], "false");
    assert_eq!(names(g), ["read and written"]);
    let t = trace(g, "read and written");
    // (thread, byte, field), in any order.
    let want: Vec<(i64, i64, String)> = (0..16)
        .map(|b| {
            (
                2 + (b >= 8) as i64,
                b,
                if b < 8 { "hits.a" } else { "hits.b" }.to_string(),
            )
        })
        .collect();
    let mut got: Vec<(i64, i64, String)> = ints(&t["y"])
        .into_iter()
        .zip(ints(&t["x"]))
        .zip(column(t, 2))
        .map(|((tid, b), name)| (tid, b, name))
        .collect();
    got.sort();
    assert_eq!(got, want);
    assert_drawn_as_embedded(&page, &html);
    assert_screenshot_not_blank(&bin, &html, "", true);
}

/// Every line the sharing page draws shows the bytes sharing_stats wrote
/// to its CSV (the numbers the page was made from): per thread, the bytes
/// only read, only written, and read and written, and in the heading the
/// line's kind and transfers. The lines of libc's own data (the barrier,
/// thread stacks) count as well as `hits`.
#[test]
fn sharing_page_draws_every_lines_bytes_as_sharing_stats_wrote_them() {
    let Some(bin) = chromium_or_skip("the sharing page was not read back") else {
        return;
    };
    let (_dir, html, csv) = sharing_page();
    let page = read_page(&bin, &html, "");
    let graphs = page["graphs"].as_array().unwrap();
    assert!(!graphs.is_empty());
    for g in graphs {
        let heading = g["heading"].as_str().unwrap();
        let line = heading
            .strip_prefix("line ")
            .and_then(|h| h.split(':').next())
            .unwrap_or_else(|| panic!("heading {heading:?}"));
        let rows: Vec<&Vec<String>> = csv.iter().filter(|r| r[0] == line).collect();
        assert!(!rows.is_empty(), "{line} is not in the CSV");
        let prefix = format!(
            "line {line}: {} sharing, {} transfers (",
            rows[0][1], rows[0][2]
        );
        assert!(
            heading.starts_with(&prefix),
            "{heading:?} against {prefix:?}"
        );
        let (mut read, mut written, mut both) =
            (Default::default(), Default::default(), Default::default());
        let sets: [&mut std::collections::BTreeSet<(i64, i64)>; 3] =
            [&mut read, &mut written, &mut both];
        for r in &rows {
            let tid: i64 = r[6].parse().unwrap();
            let (rd, wr) = (byte_set(&r[8]), byte_set(&r[9]));
            sets[0].extend(rd.difference(&wr).map(|&b| (tid, b)));
            sets[1].extend(wr.difference(&rd).map(|&b| (tid, b)));
            sets[2].extend(rd.intersection(&wr).map(|&b| (tid, b)));
        }
        assert_eq!(squares(g, "read"), read, "{heading}: read only");
        assert_eq!(squares(g, "written"), written, "{heading}: written only");
        assert_eq!(
            squares(g, "read and written"),
            both,
            "{heading}: read and written"
        );
    }
}

/// Each drawn line's heading names the variables sharing_stats wrote for
/// it (the CSV's `variables`): a line of `<static data>` must not be
/// headed by an empty list `()`.
#[test]
fn sharing_page_headings_name_the_lines_variables() {
    let Some(bin) = chromium_or_skip("the sharing page was not read back") else {
        return;
    };
    let (_dir, html, csv) = sharing_page();
    let page = read_page(&bin, &html, "");
    for g in page["graphs"].as_array().unwrap() {
        let heading = g["heading"].as_str().unwrap();
        let line = heading[5..].split(':').next().unwrap();
        let row = csv.iter().find(|r| r[0] == line).unwrap();
        // The heading lists them with ", ", the CSV with " ".
        let listed = heading.rsplit_once('(').unwrap().1.trim_end_matches(')');
        assert_eq!(
            listed.replace(", ", " "),
            row[5],
            "{heading:?}: the CSV names {:?}",
            row[5]
        );
    }
}

/// Two regions on the complete page's access-order view: one dashed line
/// between the 16 stores of the first and the 16 loads of the second, at
/// the first load's time, so that the two are not read as one run.
#[test]
fn complete_page_marks_the_gap_between_regions() {
    let Some(bin) = chromium_or_skip("the gap between regions was not read back") else {
        return;
    };
    let (dir, _) = traced(
        "two.c",
        TWO_REGIONS_C,
        "compile_exe two.c; run_gleipnir; memory_trace_analysis; \
         complete_memory_access_pattern a",
    );
    let html = dir
        .path()
        .join("figures/complete_memory_access_pattern.html");
    let page = read_page(&bin, &html, "");
    let g = graph(&page, "fig1");
    let stores = ints(&trace(g, "a store")["x"]);
    let loads = ints(&trace(g, "a load")["x"]);
    assert_eq!((stores.len(), loads.len()), (16, 16));
    let shapes = g["shapes"].as_array().unwrap();
    assert_eq!(shapes.len(), 1, "{shapes:?}");
    let at = shapes[0]["x0"].as_f64().unwrap() as i64;
    assert_eq!(shapes[0]["dash"], "dash");
    assert_eq!(
        at,
        *loads.iter().min().unwrap(),
        "the line is at the second region's start"
    );
    assert!(stores.iter().all(|&t| t < at), "every store lies before it");
}
