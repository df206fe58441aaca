//! Offline HTML pages: one shared `plotly.min.js` next to the figures and a
//! small page per figure file that loads it by relative path.

pub(crate) use super::escape::escape_html;
use std::fs;
use std::path::{Path, PathBuf};

use plotly::Plot;

use crate::vis::error::VisError;

/// plotly.js v3.0.1 (MIT licence, Copyright 2012-2025 Plotly, Inc.), the copy
/// bundled in the source of the `plotly` crate 0.13.5 (`resource/plotly.min.js`).
/// Shipped so that figures open without network access.
pub const PLOTLY_JS: &[u8] = include_bytes!("../assets/plotly.min.js");

/// File name of the shared plotly.js copy inside the figures directory.
pub const PLOTLY_JS_NAME: &str = "plotly.min.js";

/// Writes `dir/plotly.min.js` unless an identical copy is already there.
///
/// Cost: one read of the existing file (4.6 MB) to compare, one write when it
/// differs or is missing.
pub fn ensure_plotly_js(dir: &Path) -> Result<PathBuf, VisError> {
    crate::workdir::create_dir(dir).map_err(|e| VisError::from_workdir(dir, e))?;
    let path = dir.join(PLOTLY_JS_NAME);
    // Only a regular file is kept: a link (even to an identical copy) is
    // replaced by one, and a named pipe is never read.
    let same = match fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_file() && m.len() == PLOTLY_JS.len() as u64 => {
            crate::workdir::read_regular(&path)
                .map(|b| b == PLOTLY_JS)
                .unwrap_or(false)
        }
        _ => false,
    };
    if !same {
        crate::workdir::write_file(&path, PLOTLY_JS)
            .map_err(|e| VisError::from_workdir(&path, e))?;
    }
    Ok(path)
}

/// One plotly figure of a page, with a heading and an explanatory note.
pub(crate) struct PageFigure {
    pub(crate) heading: String,
    pub(crate) note: String,
    pub(crate) plot: Plot,
    /// CSS height of the figure's div in pixels.
    pub(crate) height: u32,
}

/// Serializes a plot to JSON that is safe inside a `<script>` element: `<`
/// only occurs inside JSON strings, where `\u003c` means the same.
fn plot_json(plot: &Plot, figure: &str) -> Result<Vec<u8>, VisError> {
    let raw = serde_json::to_vec(plot).map_err(|source| VisError::Json {
        figure: figure.to_string(),
        source,
    })?;
    if !raw.contains(&b'<') {
        return Ok(raw);
    }
    let mut out = Vec::with_capacity(raw.len() + 64);
    for &b in &raw {
        if b == b'<' {
            out.extend_from_slice(b"\\u003c");
        } else {
            out.push(b);
        }
    }
    Ok(out)
}

/// Renders every figure of a page. Data arrays come as plotly.js typed
/// arrays, which plotly decodes itself; `customdata` comes by column
/// ([`super::traces::CustomData`]) and is handed to plotly as an array-like
/// proxy that builds a point's row when plotly reads it (hover, selection),
/// so that no per-point row is built before drawing. A figure marked
/// `data-on-demand` (the complete pattern's 3D view) is drawn at load only
/// where WebGL has a graphics processor or the address ends in `#3d`;
/// elsewhere a button in its place draws it. Address axes (those with tick format
/// `x`) get ticks at power-of-two steps (about 8 on a 2D axis, 3 to 6 on a 3D
/// scene's, where long hex labels would overlap), so that their hex labels are round
/// (`0x4a39000`, `0x4a39400`) rather than plotly's decimal steps printed in
/// hex; they are set from the data's range before drawing (setting them
/// after would draw every trace again) and recomputed whenever the user
/// zooms or pans. Traces marked `meta.raster` (the complete pattern's
/// aggregated 2D view, see `complete::RasterTrace`) are drawn as heatmaps
/// gridded from their points at one cell a pixel, and gridded anew when the
/// axes' ranges change. The body
/// records what was drawn (`data-rendered-traces`, `data-address-ticks`,
/// `data-deferred-figures`) for tests that load the page in a browser.
const RENDER_JS: &str = r#"
(function () {
  function hexTicks(range, target) {
    var lo = Math.max(0, Math.min(range[0], range[1])), hi = Math.max(range[0], range[1]);
    var span = hi - lo;
    if (!(span > 0) || !isFinite(span)) { return null; }
    var step = Math.max(1, Math.pow(2, Math.ceil(Math.log2(span / target))));
    var vals = [], text = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi; v += step) {
      vals.push(v);
      text.push('0x' + v.toString(16));
    }
    return { vals: vals, text: text };
  }
  function hexAxes(div) {
    var update = {}, found = [], L = div.layout, F = div._fullLayout || {};
    function visit(path, ax, full, target) {
      if (ax && ax.tickformat === 'x' && full && full.range) {
        var t = hexTicks(full.range, target);
        if (t) {
          update[path + '.tickmode'] = 'array';
          update[path + '.tickvals'] = t.vals;
          update[path + '.ticktext'] = t.text;
          found.push(t.text);
        }
      }
    }
    Object.keys(L).forEach(function (k) {
      if (/^[xy]axis\d*$/.test(k)) {
        visit(k, L[k], F[k], 8);
      } else if (/^scene\d*$/.test(k)) {
        ['xaxis', 'yaxis', 'zaxis'].forEach(function (a) {
          visit(k + '.' + a, L[k][a], F[k] && F[k][a], 6);
        });
      }
    });
    if (!found.length) { return Promise.resolve(found); }
    return Plotly.relayout(div, update).then(function () { return found; });
  }
  // Round hex ticks on every hex axis of a figure before it is drawn,
  // from its data's range: setting them afterwards (plotly.relayout) would
  // draw every trace twice. Typed data arrays on those axes are decoded
  // here once and handed to plotly decoded.
  function presetHexAxes(fig) {
    var L = fig.layout || {}, found = [];
    function preset(ax, traces, dim, target) {
      var lo = Infinity, hi = -Infinity;
      traces.forEach(function (t) {
        if (t[dim] && t[dim].bdata) { t[dim] = typed(t[dim]); }
        var v = t[dim] || [];
        for (var i = 0; i < v.length; i++) {
          if (v[i] < lo) { lo = v[i]; }
          if (v[i] > hi) { hi = v[i]; }
        }
      });
      if (!(hi >= lo)) { return; }
      var t = hexTicks(hi > lo ? [lo, hi] : [lo - 1, hi + 1], target);
      if (t) {
        ax.tickmode = 'array';
        ax.tickvals = t.vals;
        ax.ticktext = t.text;
        found.push(t.text);
      }
    }
    Object.keys(L).forEach(function (k) {
      var m = /^([xy])axis(\d*)$/.exec(k);
      if (m && L[k] && L[k].tickformat === 'x') {
        var id = m[1] + m[2];
        preset(L[k], fig.data.filter(function (t) { return (t[m[1] + 'axis'] || m[1]) === id; }), m[1], 8);
      } else if (/^scene\d*$/.test(k)) {
        var traces = fig.data.filter(function (t) { return (t.scene || 'scene') === k; });
        ['x', 'y', 'z'].forEach(function (a) {
          var ax = L[k][a + 'axis'];
          if (ax && ax.tickformat === 'x') { preset(ax, traces, a, 6); }
        });
      }
    });
    return found;
  }
  function followZoom(div) {
    var busy = false, again = false;
    function follow() {
      busy = true;
      again = false;
      // Raster traces are gridded anew for the new ranges first.
      var raster = div._mapvisRaster ? div._mapvisRaster(div) : Promise.resolve();
      function done() {
        busy = false;
        if (again) { follow(); }
      }
      raster.then(function () { return hexAxes(div); }).then(done, done);
    }
    div.on('plotly_relayout', function (ev) {
      var keys = Object.keys(ev || {});
      if (!keys.some(function (k) { return /range/.test(k); })) { return; }
      if (busy) {
        again = true;
      } else {
        follow();
      }
    });
  }
  var DTYPES = { u1: Uint8Array, u2: Uint16Array, u4: Uint32Array, i1: Int8Array,
    i2: Int16Array, i4: Int32Array, f4: Float32Array, f8: Float64Array };
  function typed(spec) {
    var bin = atob(spec.bdata), n = bin.length, bytes = new Uint8Array(n);
    for (var i = 0; i < n; i++) { bytes[i] = bin.charCodeAt(i); }
    return new DTYPES[spec.dtype](bytes.buffer);
  }
  // customdata stored by column ({columns: [typed array | {codes, names}]})
  // becomes plotly's rows, one per point, built only when plotly reads a
  // point's row (on hover or selection): an array-like proxy over the
  // columns. Expanding every row before drawing cost seconds on pages of
  // 200 000 points.
  function expandCustom(trace) {
    var cd = trace.customdata;
    if (!cd || !cd.columns) { return; }
    function numbers(c) { return c.same === undefined ? typed(c) : new Float64Array(c.n).fill(c.same); }
    var cols = cd.columns.map(function (c) {
      return c.names ? { codes: numbers(c.codes), names: c.names } :
        c.plus === undefined ? { values: numbers(c) } : { plus: c.plus, values: numbers(c.by) };
    });
    cols.forEach(function (c) {
      if (c.plus === undefined) { return; }
      var base = cols[c.plus].values, sum = new Float64Array(c.values.length);
      for (var i = 0; i < sum.length; i++) { sum[i] = base[i] + c.values[i]; }
      c.values = sum;
    });
    var n = cols.length ? (cols[0].codes || cols[0].values).length : 0, k = cols.length;
    function row(i) {
      var r = new Array(k);
      for (var j = 0; j < k; j++) {
        var c = cols[j];
        r[j] = c.names ? c.names[c.codes[i]] : c.values[i];
      }
      return r;
    }
    trace.customdata = new Proxy(new Array(n), {
      get: function (target, prop, receiver) {
        if (prop === 'mapvisColumns') { return cols; }
        if (typeof prop === 'string' && prop.length && prop.charCodeAt(0) >= 48 &&
            prop.charCodeAt(0) <= 57) {
          var i = Number(prop);
          if (i >= 0 && i < n && i === Math.floor(i)) { return row(i); }
        }
        return Reflect.get(target, prop, receiver);
      }
    });
  }
  // A trace marked meta.raster (the complete pattern's aggregated 2D
  // view) comes as points (x, or meta.raster.x: two customdata columns
  // whose midpoint is x; y; customdata rows; z a colour value per point
  // or none) and is drawn as a plotly heatmap: a grid over the axes'
  // visible range with one cell a pixel, a block of meta.raster.size cells
  // coloured around each point (a later point's block covers an earlier
  // one's, as a later marker would), other cells empty and transparent.
  // Hovering a block gives its point's customdata row followed by the
  // point's x and y. The grid is
  // rebuilt from the points whenever the axes' ranges change, so zooming
  // in shows the points apart as a scatter would. plotly draws heatmaps on
  // a 2D canvas: 200 000 WebGL markers took seconds to draw without a
  // graphics processor. Cost: O(points x size^2 + pixels) a grid.
  function rasterGrid(st, xr, yr, w, h, pad) {
    var nx = Math.max(1, Math.round(w)), ny = Math.max(1, Math.round(h));
    var r = Math.max(1, Math.round(st.size)), lo = -Math.floor((r - 1) / 2), hi = lo + r;
    // Over the data's own range, the outer points' blocks are kept whole.
    var m = pad ? Math.ceil(r / 2) : 0;
    var dx = (xr[1] - xr[0]) / Math.max(1, nx - 1 - 2 * m);
    var dy = (yr[1] - yr[0]) / Math.max(1, ny - 1 - 2 * m);
    if (!(dx > 0)) { dx = 1; }
    if (!(dy > 0)) { dy = 1; }
    var x0 = xr[0] - m * dx, y0 = yr[0] - m * dy;
    var z = new Array(ny), cells = new Int32Array(nx * ny).fill(-1), x = st.x, y = st.y;
    for (var j = 0; j < ny; j++) { z[j] = new Array(nx).fill(null); }
    for (var k = 0; k < x.length; k++) {
      var ci = Math.round((x[k] - x0) / dx), cj = Math.round((y[k] - y0) / dy);
      if (ci + hi <= 0 || ci + lo >= nx || cj + hi <= 0 || cj + lo >= ny) { continue; }
      var v = st.value ? st.value[k] : 1;
      for (var b = Math.max(0, cj + lo); b < Math.min(ny, cj + hi); b++) {
        var zr = z[b];
        for (var i = Math.max(0, ci + lo); i < Math.min(nx, ci + hi); i++) {
          cells[b * nx + i] = k;
          zr[i] = v;
        }
      }
    }
    st.nx = nx;
    st.cells = cells;
    return { z: z, x0: x0, dx: dx, y0: y0, dy: dy };
  }
  function indexGetter(at) {
    return new Proxy([], {
      get: function (target, prop, receiver) {
        if (typeof prop === 'string' && /^\d+$/.test(prop)) { return at(Number(prop)); }
        return Reflect.get(target, prop, receiver);
      }
    });
  }
  // The raster state of trace t, which becomes a heatmap without points,
  // or null when t is not marked meta.raster.
  function rasterTrace(t) {
    var m = t.meta && t.meta.raster;
    if (!m) { return null; }
    ['x', 'y', 'z'].forEach(function (d) { if (t[d] && t[d].bdata) { t[d] = typed(t[d]); } });
    var x = t.x;
    if (!x && m.x && t.customdata && t.customdata.mapvisColumns) {
      // x is the midpoint of two customdata columns (a group's first and
      // last time).
      var a = t.customdata.mapvisColumns[m.x[0]].values, b = t.customdata.mapvisColumns[m.x[1]].values;
      x = new Float64Array(a.length);
      for (var q = 0; q < a.length; q++) { x[q] = (a[q] + b[q]) / 2; }
    }
    var st = { size: m.size, x: x || [], y: t.y || [], value: t.z || null, rows: t.customdata,
      nx: 1, cells: new Int32Array(0), yaxis: t.yaxis || 'y' };
    t.customdata = indexGetter(function (j) {
      return indexGetter(function (i) {
        var g = st.cells[j * st.nx + i];
        if (g === undefined || g < 0) { return undefined; }
        return (st.rows ? Array.prototype.slice.call(st.rows[g]) : []).concat([st.x[g], st.y[g]]);
      });
    });
    delete t.x;
    delete t.y;
    t.type = 'heatmap';
    t.zsmooth = false;
    return st;
  }
  function rangeOf(sts, d) {
    var lo = Infinity, hi = -Infinity;
    sts.forEach(function (st) {
      var v = st[d];
      for (var i = 0; i < v.length; i++) {
        if (v[i] < lo) { lo = v[i]; }
        if (v[i] > hi) { hi = v[i]; }
      }
    });
    if (!(hi >= lo)) { return [0, 1]; }
    return hi > lo ? [lo, hi] : [lo - 1, hi + 1];
  }
  // Turns fig's raster traces into heatmaps gridded over their data's
  // range at the plot size estimated from the div (before plotly has laid
  // it out); returns a function that rebuilds their grids for a drawn
  // div's axes, or null when fig has none.
  function rasterize(fig, div) {
    var sts = fig.data.map(rasterTrace), all = sts.filter(Boolean);
    if (!all.length) { return null; }
    var L = fig.layout || {};
    function axisKey(id) { return id.charAt(0) + 'axis' + id.slice(1); }
    function panel(st) { return all.filter(function (s) { return s.yaxis === st.yaxis; }); }
    // plotly's default margins (80 px a side, 100 above) and a legend.
    var width = Math.max(100, (div.clientWidth || 700) - 280);
    var height = Math.max(100, (L.height || 450) - 180);
    var xr = rangeOf(all, 'x');
    fig.data.forEach(function (t, k) {
      var st = sts[k];
      if (!st) { return; }
      var dom = (L[axisKey(st.yaxis)] || {}).domain || [0, 1];
      Object.assign(t, rasterGrid(st, xr, rangeOf(panel(st), 'y'), width, height * (dom[1] - dom[0]), true));
    });
    return function (gd) {
      var F = gd._fullLayout, idx = [], upd = { z: [], x0: [], dx: [], y0: [], dy: [] };
      sts.forEach(function (st, k) {
        if (!st) { return; }
        var xa = F.xaxis, ya = F[axisKey(st.yaxis)];
        var auto = xa.autorange || ya.autorange;
        var g = rasterGrid(st, xa.autorange ? rangeOf(all, 'x') : xa.range.slice(),
          ya.autorange ? rangeOf(panel(st), 'y') : ya.range.slice(), xa._length, ya._length, auto);
        idx.push(k);
        Object.keys(upd).forEach(function (key) { upd[key].push(g[key]); });
      });
      return Plotly.restyle(gd, upd, idx);
    };
  }
  // Whether this browser draws WebGL without a graphics processor
  // (SwiftShader, llvmpipe) or not at all: a 3D scene of thousands of
  // points then takes seconds and blocks the page while it draws.
  function softwareGL() {
    try {
      var c = document.createElement('canvas');
      var gl = c.getContext('webgl') || c.getContext('experimental-webgl');
      if (!gl) { return true; }
      var info = gl.getExtension('WEBGL_debug_renderer_info');
      var r = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
      var lose = gl.getExtension('WEBGL_lose_context');
      if (lose) { lose.loseContext(); }
      return /swiftshader|llvmpipe|softpipe|software|basic render/i.test(r);
    } catch (e) {
      return true;
    }
  }
  var ticks = [], rendered = 0, soft = null;
  function draw(id) {
    var fig = JSON.parse(document.getElementById(id + '-json').textContent);
    fig.data.forEach(expandCustom);
    (fig.frames || []).forEach(function (f) { (f.data || []).forEach(expandCustom); });
    var found = presetHexAxes(fig);
    var div = document.getElementById(id);
    div._mapvisRaster = rasterize(fig, div);
    return Plotly.newPlot(div, fig.data, fig.layout, fig.config).then(function () {
      if (fig.frames && fig.frames.length) { return Plotly.addFrames(div, fig.frames); }
    }).then(function () {
      ticks = ticks.concat(found);
      followZoom(div);
      rendered += div.data.length;
      return div.data.length;
    });
  }
  function markDrawn() {
    document.body.setAttribute('data-rendered-traces', String(rendered));
    document.body.setAttribute('data-address-ticks', JSON.stringify(ticks));
  }
  function failed(err) {
    document.body.setAttribute('data-render-error', String(err));
  }
  // A figure marked data-on-demand (the complete pattern's 3D view) is
  // drawn at load only where WebGL has a graphics processor, or when the
  // page's address ends in #3d; elsewhere a button draws it.
  function deferred(id) {
    var div = document.getElementById(id);
    if (!div.hasAttribute('data-on-demand') || /(^#|&)3d(&|$)/.test(location.hash)) {
      return false;
    }
    if (soft === null) { soft = softwareGL(); }
    return soft;
  }
  function offer(id) {
    var div = document.getElementById(id);
    var box = document.createElement('div');
    box.className = 'mapvis-deferred';
    var p = document.createElement('p');
    p.className = 'note';
    p.textContent = 'This browser draws WebGL without a graphics processor, so this view ' +
      'would take several seconds to draw and would hold the page meanwhile. It is drawn ' +
      'on request (or at once when the page is opened with #3d at the end of its address).';
    var b = document.createElement('button');
    b.textContent = 'Draw this view';
    b.onclick = function () {
      b.disabled = true;
      b.textContent = 'Drawing\u2026';
      setTimeout(function () {
        div.removeChild(box);
        draw(id).then(markDrawn, failed);
      }, 20);
    };
    box.appendChild(p);
    box.appendChild(b);
    div.appendChild(box);
  }
  var ids = Array.prototype.map.call(document.querySelectorAll('div.mapvis-fig'), function (d) { return d.id; });
  var later = ids.filter(deferred);
  later.forEach(offer);
  Promise.all(ids.filter(function (id) { return later.indexOf(id) < 0; }).map(draw)).then(function (counts) {
    markDrawn();
    document.body.setAttribute('data-rendered-figures', String(counts.length));
    document.body.setAttribute('data-deferred-figures', String(later.length));
  }).catch(failed);
})();
"#;

/// Writes a page with the given figures to `dir/file_name`, ensuring the
/// shared plotly.js copy exists in `dir`.
///
/// Cost: the figure JSON is built in memory once (about 20-40 bytes per drawn
/// point) and written with one buffered write.
pub(crate) fn write_page(
    dir: &Path,
    file_name: &str,
    title: &str,
    intro: &[String],
    figures: &[PageFigure],
    meta: &PageMeta,
) -> Result<PathBuf, VisError> {
    write_page_with_links(dir, file_name, title, intro, &[], figures, meta)
}

/// Lines of links under a page's intro: a caption and (text, address
/// relative to the page) pairs.
pub(crate) type LinkLines = [(String, Vec<(String, String)>)];

/// [`write_page`], with lines of links after the intro (`none` where a
/// line has no link).
pub(crate) fn write_page_with_links(
    dir: &Path,
    file_name: &str,
    title: &str,
    intro: &[String],
    links: &LinkLines,
    figures: &[PageFigure],
    meta: &PageMeta,
) -> Result<PathBuf, VisError> {
    let page = Page {
        title,
        intro,
        links,
        figures,
        meta,
        on_demand: None,
    };
    write_page_of(dir, file_name, &page)
}

/// What a page shows, for [`write_page_of`].
pub(crate) struct Page<'a> {
    /// The page's title and first heading.
    pub(crate) title: &'a str,
    /// Paragraphs under the title.
    pub(crate) intro: &'a [String],
    /// Lines of links after the intro.
    pub(crate) links: &'a LinkLines,
    /// The figures, in page order.
    pub(crate) figures: &'a [PageFigure],
    /// What the index page reads back.
    pub(crate) meta: &'a PageMeta,
    /// The figure drawn on request where WebGL has no graphics processor
    /// (a 3D view that would hold the page for seconds), by position.
    pub(crate) on_demand: Option<usize>,
}

/// Writes `page` to `dir/file_name`, ensuring the shared plotly.js copy
/// exists in `dir`, and updates the folder's index page.
pub(crate) fn write_page_of(dir: &Path, file_name: &str, page: &Page) -> Result<PathBuf, VisError> {
    let Page {
        title,
        intro,
        links,
        figures,
        meta,
        on_demand,
    } = *page;
    ensure_plotly_js(dir)?;
    let path = dir.join(file_name);
    let mut html: Vec<u8> = Vec::new();
    let partial = meta.is_partial();
    let title = if partial {
        // "PARTIAL analysis", "PARTIAL heap profile": what is partial.
        let what = meta.trace.split(" (").next().unwrap_or(PARTIAL_MARK);
        format!("{title} ({what})")
    } else {
        title.to_string()
    };
    let t = escape_html(&title);
    html.extend_from_slice(
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{t}</title>\n{}\
             <script src=\"{PLOTLY_JS_NAME}\"></script>\n<style>\n\
             body {{ font-family: sans-serif; margin: 0 1.5em 2em 1.5em; }}\n\
             .mapvis-fig {{ width: 100%; }}\n p.note {{ color: #444; max-width: 70em; }}\n\
             p.partial {{ color: #b00; font-weight: bold; max-width: 70em; }}\n\
             .mapvis-deferred {{ border: 1px dashed #999; padding: 1em; margin-top: 2em; max-width: 60em; }}\n\
             .mapvis-deferred button {{ font-size: 1.1em; padding: 0.4em 1em; }}\n</style>\n\
             </head>\n<body>\n<h1>{t}</h1>\n",
            meta.tags()
        )
        .as_bytes(),
    );
    if !meta.trace.is_empty() {
        let class = if partial { "partial" } else { "note" };
        html.extend_from_slice(
            format!(
                "<p class=\"{class}\" id=\"mapvis-drawn-from\">Drawn from {}</p>\n",
                escape_html(&meta.trace)
            )
            .as_bytes(),
        );
    }
    for p in intro {
        html.extend_from_slice(format!("<p class=\"note\">{}</p>\n", escape_html(p)).as_bytes());
    }
    for (caption, refs) in links {
        let list = if refs.is_empty() {
            "none".to_string()
        } else {
            refs.iter()
                .map(|(text, href)| {
                    format!(
                        "<a class=\"mapvis-link\" href=\"{}\">{}</a>",
                        escape_html(href),
                        escape_html(text)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        html.extend_from_slice(
            format!("<p class=\"note\">{} {list}</p>\n", escape_html(caption)).as_bytes(),
        );
    }
    for (k, f) in figures.iter().enumerate() {
        let id = format!("fig{k}");
        let demand = if on_demand == Some(k) {
            " data-on-demand=\"1\""
        } else {
            ""
        };
        html.extend_from_slice(
            format!(
                "<h2>{}</h2>\n<p class=\"note\">{}</p>\n<div id=\"{id}\" class=\"mapvis-fig\"{demand} style=\"height:{}px\"></div>\n\
                 <script type=\"application/json\" id=\"{id}-json\">",
                escape_html(&f.heading),
                escape_html(&f.note),
                f.height
            )
            .as_bytes(),
        );
        html.extend_from_slice(&plot_json(&f.plot, &f.heading)?);
        html.extend_from_slice(b"</script>\n");
    }
    html.extend_from_slice(b"<script>");
    html.extend_from_slice(RENDER_JS.as_bytes());
    html.extend_from_slice(b"</script>\n</body>\n</html>\n");
    crate::workdir::write_file(&path, &html).map_err(|e| VisError::from_workdir(&path, e))?;
    super::index::write_index(dir)?;
    Ok(path)
}

/// How the provenance of a partial analysis starts.
pub const PARTIAL_MARK: &str = "PARTIAL";

/// What a page records about itself for the folder's index page: the
/// command that draws it, the shape drawn and the trace it came from.
pub(crate) struct PageMeta {
    /// The shell command that draws the page again, e.g.
    /// `2d_memory_access_pattern arr 16 4`.
    pub(crate) command: String,
    /// What was drawn: `16 x 16 array of 4-byte elements`, `768 accesses`.
    pub(crate) shape: String,
    /// The trace and program, from [`crate::vis::options::FigureOptions::provenance`].
    pub(crate) trace: String,
    /// The analysis drawn, from [`crate::vis::options::FigureOptions::analysis_id`];
    /// empty for a page not drawn from the folder's analysis (a heap
    /// profile, saved runs), which is never marked stale.
    pub(crate) analysis: String,
}

impl PageMeta {
    /// Whether the page shows a partial analysis: the shell starts the
    /// provenance of one with `PARTIAL` ([`crate::vis::options::FigureOptions::provenance`]).
    fn is_partial(&self) -> bool {
        self.trace.starts_with(PARTIAL_MARK)
    }

    /// `<meta name="mapvis-…">` tags, read back by [`super::index`].
    pub(crate) fn tags(&self) -> String {
        [
            ("command", &self.command),
            ("shape", &self.shape),
            ("trace", &self.trace),
            ("analysis", &self.analysis),
        ]
        .iter()
        .map(|(k, v)| {
            format!(
                "<meta name=\"mapvis-{k}\" content=\"{}\">\n",
                escape_html(v)
            )
        })
        .collect()
    }
}

/// The words a user named something by, made usable in a file name and
/// still read as theirs, with no id added (mapvisual named a figure by the
/// variable's name alone): ASCII letters, digits, `-`, `_` and `.` are
/// kept, `->` becomes `.` and `::` `__` (`net->w1[3]` gives `net.w1_3`,
/// `main::C` gives `main__C`), `]` is dropped and any other character
/// becomes `_`; leading dots are dropped (no hidden file). Nothing left
/// gives `unnamed`.
pub fn file_word(words: &str) -> String {
    let spelled = words.replace("->", ".").replace("::", "__");
    let clean: String = spelled
        .chars()
        .filter(|&c| c != ']')
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let clean = clean.trim_start_matches('.');
    if clean.is_empty() {
        "unnamed".into()
    } else {
        clean.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::file_word;

    /// Worked by hand from the rule: `->` to `.`, `::` to `__`, `]`
    /// dropped, any other unsafe character `_`, leading dots dropped.
    #[test]
    fn a_file_word_keeps_the_users_spelling() {
        assert_eq!(file_word("C"), "C");
        assert_eq!(file_word("main::C"), "main__C");
        assert_eq!(file_word("net->w1[3]"), "net.w1_3");
        assert_eq!(file_word("k@S"), "k_S");
        assert_eq!(file_word("../etc/passwd"), "_etc_passwd");
        assert_eq!(file_word("..."), "unnamed");
    }
}
