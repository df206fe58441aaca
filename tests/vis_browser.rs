//! Opens every kind of figure page in headless Chromium, offline, and checks
//! that plotly rendered all traces and that the screenshot is not blank.
//! Skipped (with a loud message) when Chromium is not installed, except
//! under CI (`CI=true`), where a missing Chromium fails. `MAPVIS_CHROMIUM`
//! names the browser to use (a path that does not exist makes it missing, to
//! check that CI fails rather than skips).

mod common;
mod vis_common;

use std::path::Path;
use std::process::Command;

use common::chromium_or_skip;
use mapvis::filter::schema::{OP_LOAD, OP_MODIFY, OP_STORE};
use mapvis::filter::VarId;
use mapvis::vis::{
    array_2d, array_3d, complete_memory_access_pattern, Array2d, Array3d, FigureReport,
};
use vis_common::*;

const BASE: u64 = 0x4a38000;

/// Runs Chromium with `extra` arguments on `page`, killing it after 90 s.
fn run_chromium(bin: &Path, page: &Path, extra: &[String]) -> String {
    run_chromium_at(bin, page, "", extra)
}

/// [`run_chromium`] on the page's address with `fragment` (`#3d`) appended,
/// under a virtual time budget of 5 s.
fn run_chromium_at(bin: &Path, page: &Path, fragment: &str, extra: &[String]) -> String {
    chromium(bin, page, fragment, extra, 5000)
}

/// Asserts the page rendered `traces` traces and gives a non-blank
/// screenshot; returns the rendered DOM.
fn check_page(bin: &Path, report: &FigureReport, traces: usize) -> String {
    check_page_at(bin, report, "", traces)
}

/// [`check_page`] on the page's address with `fragment` appended: `#3d`
/// draws the complete pattern's 3D view at load under software WebGL.
fn check_page_at(bin: &Path, report: &FigureReport, fragment: &str, traces: usize) -> String {
    let page = report.html.canonicalize().unwrap();
    let dom = run_chromium_at(bin, &page, fragment, &["--dump-dom".to_string()]);
    assert!(
        !dom.contains("data-render-error=\""),
        "plotly failed on {page:?}: {}",
        dom.split("data-render-error=\"")
            .nth(1)
            .unwrap_or("")
            .chars()
            .take(300)
            .collect::<String>()
    );
    assert!(
        dom.contains("js-plotly-plot"),
        "no plotly div in the DOM of {page:?}"
    );
    assert!(
        dom.contains("plot-container"),
        "no plot container in {page:?}"
    );
    let want = format!("data-rendered-traces=\"{traces}\"");
    assert!(dom.contains(&want), "{page:?}: expected {want}");

    let png = page.with_extension("png");
    run_chromium_at(
        bin,
        &page,
        fragment,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1200,900".to_string(),
        ],
    );
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("no screenshot {png:?}: {e}"));
    assert!(bytes.starts_with(b"\x89PNG"), "not a PNG");
    let mut seen = [false; 256];
    for &b in &bytes {
        seen[b as usize] = true;
    }
    let distinct = seen.iter().filter(|s| **s).count();
    // A blank white page compresses to a few hundred bytes of few values.
    assert!(
        bytes.len() > 20_000,
        "screenshot of {page:?} is only {} bytes",
        bytes.len()
    );
    assert!(
        distinct > 200,
        "screenshot of {page:?} has {distinct} byte values"
    );
    dom
}

/// The tick labels the page gave its address axes, one list per axis.
fn address_ticks(dom: &str) -> Vec<Vec<String>> {
    let attr = dom
        .split("data-address-ticks=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page records its address ticks");
    serde_json::from_str(&attr.replace("&quot;", "\"")).expect("ticks are JSON")
}

/// Asserts that address tick labels are hex numbers at a power-of-two step
/// inside `lo..=hi`, between 3 and 9 of them (3D scenes get fewer, longer
/// labels than 2D axes).
fn assert_round_hex(ticks: &[String], lo: u64, hi: u64) {
    let vals: Vec<u64> = ticks
        .iter()
        .map(|t| u64::from_str_radix(t.strip_prefix("0x").expect("0x prefix"), 16).unwrap())
        .collect();
    assert!((3..=9).contains(&vals.len()), "{ticks:?}");
    let step = vals[1] - vals[0];
    assert!(step.is_power_of_two(), "{ticks:?}");
    for w in vals.windows(2) {
        assert_eq!(w[1] - w[0], step, "{ticks:?}");
    }
    for &v in &vals {
        assert_eq!(v % step, 0, "{ticks:?}");
        assert!(
            v >= lo.saturating_sub(step) && v <= hi + step,
            "{ticks:?} outside {lo:#x}..{hi:#x}"
        );
    }
}

#[test]
fn every_figure_kind_renders_offline_in_chromium() {
    let Some(bin) = chromium_or_skip("figures were not rendered") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    let lines = lines_df();

    // Complete pattern: 2 variables, loads and stores.
    let mut rows = fill(BASE, &(0..20).collect::<Vec<_>>());
    let n = rows.len() as u64;
    for k in 0..10u64 {
        rows.push((n + k, OP_LOAD, 0x9000 + 8 * k, 8, 1, 1, 1, 2));
    }
    let acc = acc_df(&rows);
    let vars = vars_df(&[("arr", BASE, 80), ("v", 0x9000, 80)]);
    let r = complete_memory_access_pattern(&acc, &vars, &lines, &o).unwrap();
    // Under software WebGL the 3D view waits for a click: the 2D view's
    // two traces are drawn, the 3D one is offered.
    let dom = check_page(&bin, &r, 2);
    assert!(
        dom.contains("data-deferred-figures=\"1\"") && dom.contains("Draw this view"),
        "the 3D view is offered, not drawn"
    );
    // With #3d it is drawn at load, as where WebGL has a GPU.
    let dom = check_page_at(&bin, &r, "#3d", 1 + 2);
    assert!(dom.contains("data-deferred-figures=\"0\""));
    // Both the 3D scene's and the 2D figure's address axes get round hex
    // ticks spanning the two variables.
    let ticks = address_ticks(&dom);
    assert_eq!(ticks.len(), 2, "{ticks:?}");
    for t in &ticks {
        assert_round_hex(t, 0x9000, BASE + 80);
    }

    // 2D array: scatter + 4 heatmaps + 2 replays.
    let r = array_2d(
        Array2d {
            acc: &acc,
            vars: &vars,
            lines: &lines,
            var: VarId(0),
            cols: 5,
            type_bytes: 4,
        },
        &o,
    )
    .unwrap();
    // Under software WebGL its scatter (a 3D scene) waits for a click, as
    // the complete pattern's 3D view does; with #3d it is drawn at load.
    let dom = check_page(&bin, &r, 7 - 1);
    assert!(dom.contains("data-deferred-figures=\"1\""));
    check_page_at(&bin, &r, "#3d", 7);

    // 3D array 2 x 2 x 5: scatter + 2 planes x 2 slice figures.
    let r = array_3d(
        Array3d {
            acc: &acc,
            vars: &vars,
            lines: &lines,
            var: VarId(0),
            cols: 2,
            depth: 5,
            type_bytes: 4,
        },
        &o,
    )
    .unwrap();
    check_page(&bin, &r, 1 + 2 * 2);

    // Aggregated complete pattern.
    let mut o2 = o.clone();
    o2.point_budget = 8;
    let r = complete_memory_access_pattern(&acc, &vars, &lines, &o2).unwrap();
    assert!(r.aggregated.is_some());
    let figs = figures(&r.html);
    let traces = 1 + figs[1]["data"].as_array().unwrap().len();
    check_page_at(&bin, &r, "#3d", traces);

    // Coloured by class, exact and aggregated: one trace per class.
    let mut acc_c = acc.clone();
    let class: Vec<u8> = (0..acc.height()).map(|k| (k % 2) as u8).collect();
    acc_c
        .with_column(polars::prelude::Column::new("colour".into(), class))
        .unwrap();
    let mut oc = o.clone();
    oc.annotations.classes = Some(mapvis::filter::ClassNames {
        title: "cache level".into(),
        labels: vec!["L1 hit".into(), "miss to memory".into()],
        sparse: false,
    });
    for budget in [200_000, 8] {
        oc.point_budget = budget;
        let r = complete_memory_access_pattern(&acc_c, &vars, &lines, &oc).unwrap();
        let figs = figures(&r.html);
        let traces: usize = figs
            .iter()
            .map(|f| f["data"].as_array().unwrap().len())
            .sum();
        check_page_at(&bin, &r, "#3d", traces);
    }
    oc.point_budget = 200_000;
    // Scatter (2 classes) + 4 heatmaps + 2 replays.
    let r = array_2d(
        Array2d {
            acc: &acc_c,
            vars: &vars,
            lines: &lines,
            var: VarId(0),
            cols: 5,
            type_bytes: 4,
        },
        &oc,
    )
    .unwrap();
    check_page_at(&bin, &r, "#3d", 8);

    // The sharing page: one line, two threads.
    let line = mapvis::vis::SharedBytes {
        addr: 0x1000,
        line: 64,
        kind: mapvis::filter::SharingKind::False,
        transfers: 9,
        threads: vec![(2, 0xff, 0xff), (3, 0xff00, 0)],
        byte_names: (0..64).map(|b| format!("s+{b}")).collect(),
        variables: vec!["s".into()],
    };
    let page = mapvis::vis::sharing_figure(&dir.path().join("figures"), &[line], &[], "").unwrap();
    let r = FigureReport {
        html: page,
        ..Default::default()
    };
    check_page(&bin, &r, 2);
}

/// `what_if A transpose save` on a traced program: the before and after
/// views (one trace each) and the paired bars (two traces) render.
#[test]
fn what_if_page_renders_in_chromium() {
    let Some(bin) = chromium_or_skip("the what-if page was not rendered") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let src = common::root().join("tests/c/wi_transpose.c");
    std::fs::copy(&src, dir.path().join("t.c")).unwrap();
    common::mapvis_script(
        dir.path(),
        "set_mem_alloc G; set_cache L1 8K 2 64; set_cache L2 32K 4 64; set_cache L3 off; \
         compile_exe t.c; run_gleipnir; memory_trace_analysis; what_if A transpose save",
    );
    let r = FigureReport {
        html: dir.path().join("figures/what_if_A_transpose.html"),
        ..Default::default()
    };
    check_page(&bin, &r, 2 + 2);
}

/// The sweep page of plot_runs: a line per variable across three runs,
/// one of them partial, renders.
#[test]
fn runs_page_renders_in_chromium() {
    use mapvis::vis::{runs_figure, RunLabel, RunSeries};
    let Some(bin) = chromium_or_skip("the runs page was not rendered") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let runs: Vec<RunLabel> = [("b4", true), ("b8", false), ("b16", true)]
        .iter()
        .map(|(l, c)| RunLabel {
            label: l.to_string(),
            complete: *c,
            source: String::new(),
        })
        .collect();
    let series = vec![
        RunSeries {
            variable: "X".into(),
            values: vec![Some(8192.0), Some(8192.0), Some(8192.0)],
        },
        RunSeries {
            variable: "Y".into(),
            values: vec![Some(16384.0), None, Some(11643.0)],
        },
    ];
    let html = runs_figure(
        &dir.path().join("figures"),
        "misses_L1",
        &runs,
        &series,
        &[],
    )
    .unwrap();
    let r = FigureReport {
        html,
        ..Default::default()
    };
    check_page(&bin, &r, 2);
}

/// The pixels of a PNG as 8-bit RGB, decoded by ImageMagick's `convert` to
/// binary PPM: (width, height, rgb bytes).
fn decode_png(png_path: &Path) -> (usize, usize, Vec<u8>) {
    let out = Command::new("convert")
        .arg(png_path)
        .args(["-depth", "8", "ppm:-"])
        .output()
        .expect("ImageMagick's convert is installed (.ci/run installs it)");
    assert!(out.status.success(), "convert failed on {png_path:?}");
    // P6 header: magic, width, height, maxval, each followed by whitespace.
    let mut fields = Vec::new();
    let mut pos = 0;
    while fields.len() < 4 {
        while out.stdout[pos].is_ascii_whitespace() {
            pos += 1;
        }
        let start = pos;
        while !out.stdout[pos].is_ascii_whitespace() {
            pos += 1;
        }
        fields.push(String::from_utf8_lossy(&out.stdout[start..pos]).into_owned());
    }
    assert_eq!((fields[0].as_str(), fields[3].as_str()), ("P6", "255"));
    let (w, h) = (fields[1].parse().unwrap(), fields[2].parse().unwrap());
    let data = out.stdout[pos + 1..].to_vec();
    assert_eq!(data.len(), w * h * 3);
    (w, h, data)
}

/// The share of strongly coloured pixels (not white, grey or black) in the
/// rows `rows` of a PNG screenshot.
fn coloured_share(png_path: &Path, rows: std::ops::Range<usize>) -> f64 {
    let (w, h, rgb) = decode_png(png_path);
    let (mut coloured, mut all) = (0u64, 0u64);
    for y in rows.start..rows.end.min(h) {
        for px in rgb[y * w * 3..(y + 1) * w * 3].chunks(3) {
            let (hi, lo) = (px.iter().max().unwrap(), px.iter().min().unwrap());
            coloured += (hi - lo > 40) as u64;
            all += 1;
        }
    }
    coloured as f64 / all.max(1) as f64
}

/// Takes a 1200 x 2000 screenshot of a complete-pattern page and returns
/// the coloured share of its lower half, which holds the whole 2D view
/// (address over time) below the 800-pixel 3D view.
fn view_2d_share(bin: &Path, r: &FigureReport, name: &str) -> f64 {
    let page = r.html.canonicalize().unwrap();
    let png = page.with_file_name(format!("{name}.png"));
    run_chromium(
        bin,
        &page,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1200,2000".to_string(),
            "--hide-scrollbars".to_string(),
        ],
    );
    if let Ok(keep) = std::env::var("MAPVIS_SAMPLE_DIR") {
        std::fs::copy(&png, Path::new(&keep).join(format!("{name}.png"))).ok();
        std::fs::copy(&page, Path::new(&keep).join(format!("{name}.html"))).ok();
    }
    coloured_share(&png, 1000..2000)
}

/// Aggregated points must show the pattern as the raw points do: an ikj
/// style sawtooth (sweeps over one array, again and again) beside a loop
/// counter touched at every step, drawn raw and aggregated far below its
/// size, must colour a comparable share of the 2D view. The counter's
/// groups hold many more accesses than the array's, so the array's points
/// are small; drawn as plotly's default bubbles (translucent, with a white
/// outline) they wash out to a pale haze.
#[test]
fn aggregated_points_stay_as_visible_as_raw_ones() {
    let Some(bin) = chromium_or_skip("pixels were not checked") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(dir.path());
    // 120 sweeps of 64 elements: 15 360 accesses, within the 3D view's
    // budget, so that the raw figure is drawn exact.
    let counter = BASE + 1024;
    let mut rows = Vec::new();
    for e in (0..120).flat_map(|_| 0..64u64) {
        let t = rows.len() as u64;
        rows.push((t, OP_LOAD, BASE + 4 * e, 4, 1, 0, 1, 1));
        rows.push((t + 1, OP_LOAD, counter, 4, 1, 1, 1, 1));
    }
    let acc = acc_df(&rows);
    let vars = vars_df(&[("arr", BASE, 256), ("k", counter, 4)]);
    let raw = complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    assert!(raw.aggregated.is_none());
    let raw_share = view_2d_share(&bin, &raw, "raw");
    o.point_budget = 3000;
    o.figures_dir = dir.path().join("aggregated");
    let agg = complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    assert!(agg.aggregated.is_some() && agg.points <= 3000);
    let agg_share = view_2d_share(&bin, &agg, "aggregated");
    assert!(
        raw_share > 0.05,
        "raw view colours only {raw_share:.3} of its pixels"
    );
    assert!(
        agg_share > 0.6 * raw_share,
        "aggregated view colours {agg_share:.3} of its pixels against {raw_share:.3} raw"
    );
}

/// The page of `compare_runs A B save` renders: a naive and a blocked
/// transpose (16 x 16 doubles) traced and kept as runs; per variable (X
/// and Y, the globals) it draws both runs' address over time and their
/// misses per level (2 traces each), and their miss-ratio curves with a
/// dashed mark at each of the model's 2 levels (4 traces).
#[test]
fn the_compare_page_renders_in_chromium() {
    let Some(bin) = chromium_or_skip("the compare page was not rendered") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let src = common::root().join("scripts/transpose.c");
    std::fs::copy(&src, dir.path().join("t.c")).unwrap();
    let setup = "set_mem_alloc G; set_cache L1 1K 2 64; set_cache L2 4K 4 64; set_cache L3 off;";
    for (label, flags) in [("naive", "-DN=16"), ("blocked", "-DN=16 -DBLOCK=4")] {
        common::mapvis_script(
            dir.path(),
            &format!(
                "{setup} compile_exe t.c {flags}; run_gleipnir; memory_trace_analysis; save_run {label}"
            ),
        );
    }
    common::mapvis_script(
        dir.path(),
        &format!("{setup} compare_runs naive blocked save"),
    );
    let report = FigureReport {
        html: dir.path().join("figures/compare_naive_blocked.html"),
        ..Default::default()
    };
    let dom = check_page(&bin, &report, 16);
    assert!(
        dom.contains("data-rendered-figures=\"6\""),
        "two variables, three figures each"
    );
}

/// Writes the sample pages into `$MAPVIS_SAMPLE_DIR` for looking at them by
/// hand: `MAPVIS_SAMPLE_DIR=/tmp/s cargo test --release --test vis_browser -- --ignored`.
#[test]
#[ignore]
fn write_sample_pages() {
    let Ok(dir) = std::env::var("MAPVIS_SAMPLE_DIR") else {
        return;
    };
    let o = options(Path::new(&dir));
    let order: Vec<u64> = (0..5)
        .flat_map(|j| (0..4).map(move |i| i * 5 + j))
        .collect();
    let acc = acc_df(&fill(BASE, &order));
    let vars = vars_df(&[("arr", BASE, 80)]);
    let r = draw_2d(&acc, &vars, VarId(0), 5, 4, &o).unwrap();
    println!("{}", r.html.display());
    let r = array_3d(
        Array3d {
            acc: &acc,
            vars: &vars,
            lines: &lines_df(),
            var: VarId(0),
            cols: 2,
            depth: 5,
            type_bytes: 4,
        },
        &o,
    )
    .unwrap();
    println!("{}", r.html.display());
    let r = complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    println!("{}", r.html.display());
    // Aggregated: 100 x 100 ints, column-major, budget 300.
    let mut o = o;
    o.point_budget = 300;
    let order: Vec<u64> = (0..100)
        .flat_map(|j| (0..100).map(move |i| i * 100 + j))
        .collect();
    let acc = acc_df(&fill(BASE, &order));
    let vars = vars_df(&[("big", BASE, 40_000)]);
    let r = draw_2d(&acc, &vars, VarId(0), 100, 4, &o).unwrap();
    println!("{} {:?}", r.html.display(), r.aggregated);
    let r = complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    println!("{} {:?}", r.html.display(), r.aggregated);
}

/// Hovering a point in Chromium shows that point's own fields: the page
/// hands plotly its hover data as columns that give a point's row only
/// when plotly reads it, so this checks, through plotly's own hover, that
/// each trace's first point reads its own row. The rows are worked out
/// from the three accesses below (time, operation, address, occurrence,
/// thread, variable), one point per 2D trace.
/// Runs the page `html` with the script `probe` put before `</body>`, as
/// `name` beside it, and returns the strings the probe recorded as JSON in
/// the body's `data-hover` attribute.
fn probed(bin: &Path, html: &Path, probe: &str, name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(html).unwrap();
    let page = html.with_file_name(name);
    std::fs::write(&page, text.replacen("</body>", probe, 1)).unwrap();
    let dom = run_chromium(bin, &page.canonicalize().unwrap(), &["--dump-dom".into()]);
    let json = dom
        .split("data-hover=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("no hover recorded: {}", &dom[..dom.len().min(600)]))
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap()
}

#[test]
fn hover_in_the_browser_shows_each_points_own_fields() {
    let Some(bin) = chromium_or_skip("hover text was not checked") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    let acc = acc_df(&[
        (0, OP_STORE, 0x1000, 4, 1, 1, 1, 1),
        (1, OP_LOAD, 0x2000, 8, 1, 0, 1, 2),
        (2, OP_MODIFY, 0x1000, 4, 2, 1, 2, 1),
    ]);
    let vars = vars_df(&[("b", 0x2000, 8), ("a", 0x1000, 16)]);
    let r = complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    // A copy of the page with a probe after the page's own script: once the
    // page has drawn, hover point 0 of each trace of the 2D view (fig1) and
    // record the hover label's text (a WebGL scatter hovers by position,
    // not by point number).
    let probe = r#"<script>
(function () {
  function go() {
    if (!document.body.hasAttribute('data-rendered-traces')) { return setTimeout(go, 50); }
    var div = document.getElementById('fig1'), out = [], k = 0;
    function next() {
      if (k >= div.data.length) {
        document.body.setAttribute('data-hover', JSON.stringify(out));
        return;
      }
      var t = div._fullData[k];
      Plotly.Fx.hover(div, { xval: t.x[0], yval: t.y[0] }, t.xaxis + t.yaxis);
      setTimeout(function () {
        var t = Array.prototype.map.call(div.querySelectorAll('.hoverlayer .hovertext'),
          function (e) { return e.textContent; });
        out.push(div.data[k].name + ': ' + t.join(' '));
        k++;
        next();
      }, 50);
    }
    next();
  }
  go();
})();
</script>
</body>"#;
    let mut got = probed(&bin, &r.html, probe, "hover_probe.html");
    got.sort();
    let want = [
        (
            "a store",
            "order (time) 0",
            "address 0x1000",
            "operation store",
            "thread 1",
            "occurrence 1",
        ),
        (
            "a modify",
            "order (time) 2",
            "address 0x1000",
            "operation modify",
            "thread 2",
            "occurrence 2",
        ),
        (
            "b load",
            "order (time) 1",
            "address 0x2000",
            "operation load",
            "thread 1",
            "occurrence 1",
        ),
    ];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (trace, t, a, op, tid, occ) in want {
        let var = &trace[..1];
        let line = got
            .iter()
            .find(|g| g.contains(op))
            .unwrap_or_else(|| panic!("no hover for {trace}: {got:?}"));
        for part in [t, a, op, tid, occ, &format!("variable {var}")] {
            assert!(line.contains(part), "{trace}: {part:?} not in {line:?}");
        }
    }
}

/// Hovering the aggregated 2D view, which the page draws as a raster
/// (heatmaps gridded from the groups' points), shows the fields of the
/// group drawn under the pointer, at full view and after zooming in
/// (which grids the points anew). A scalar `s` loaded at times 0..31 and
/// stored at 32..63, at a budget of 8 points, makes 8 groups of 8
/// accesses, time bins 0..7, 8..15, ... (see `tests/vis_figures.rs`,
/// `aggregated_2d_view_is_a_raster_of_its_groups`): the group of bin
/// 0..7 is drawn at its mean time 3.5, that of 56..63 at 59.5.
#[test]
fn hover_on_the_aggregated_raster_shows_its_groups_fields() {
    let Some(bin) = chromium_or_skip("raster hover was not checked") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let r = aggregated_scalar(dir.path());
    // Hover at (3.5, 0x1000) and (59.5, 0x1000), zoom the time axis to
    // 30..44, hover at (35.5, 0x1000) and record the labels and how many
    // cells each grid has.
    let probe = r#"<script>
(function () {
  function go() {
    if (!document.body.hasAttribute('data-rendered-traces')) { return setTimeout(go, 50); }
    var div = document.getElementById('fig1'), out = [];
    function at(x) {
      return new Promise(function (done) {
        Plotly.Fx.hover(div, { xval: x, yval: 4096 }, 'xy');
        setTimeout(function () {
          var t = Array.prototype.map.call(div.querySelectorAll('.hoverlayer .hovertext'),
            function (e) { return e.textContent; });
          out.push(x + ': ' + t.join(' | '));
          done();
        }, 50);
      });
    }
    var types = div._fullData.map(function (t) { return t.type; }).join(',');
    at(3.5).then(function () { return at(59.5); }).then(function () {
      return Plotly.relayout(div, { 'xaxis.range': [30, 44] });
    }).then(function () {
      return new Promise(function (done) { setTimeout(done, 200); });
    }).then(function () { return at(35.5); }).then(function () {
      out.push('types ' + types);
      out.push('x0 ' + div.data.map(function (t) { return t.x0 >= 29 ? 'zoomed' : 'full'; }).join(','));
      document.body.setAttribute('data-hover', JSON.stringify(out));
    });
  }
  go();
})();
</script>
</body>"#;
    let got = probed(&bin, &r.html, probe, "raster_probe.html");
    assert_eq!(got.len(), 5, "{got:?}");
    let want: [(&str, &[&str]); 3] = [
        (
            "3.5: ",
            &[
                "8 accesses",
                "order (time) 0 to 7",
                "lowest address 0x1000,",
                "highest 0 bytes above",
                "variable s",
                "loads 8, stores 0, modifies 0",
                "occurrence 1 to 8",
            ],
        ),
        (
            "59.5: ",
            &[
                "8 accesses",
                "order (time) 56 to 63",
                "lowest address 0x1000,",
                "loads 0, stores 8",
                "occurrence 57 to 64",
            ],
        ),
        (
            "35.5: ",
            &[
                "8 accesses",
                "order (time) 32 to 39",
                "loads 0, stores 8",
                "occurrence 33 to 40",
            ],
        ),
    ];
    for ((prefix, parts), line) in want.iter().zip(&got) {
        assert!(line.starts_with(prefix), "{line:?}");
        for p in *parts {
            assert!(line.contains(p), "{p:?} not in {line:?}");
        }
    }
    assert_eq!(got[3], "types heatmap,heatmap");
    // Zooming in gridded both traces anew over the zoomed range.
    assert_eq!(got[4], "x0 zoomed,zoomed");
}

/// The heap page as Chromium draws it, for tests/c/many_small.c (20000
/// allocations of 16 bytes and one of 1 MiB, worked by hand): in the size
/// histogram the allocation-count bar and the bytes bar of one size class
/// stand side by side, neither hiding the other, and their heights are
/// plotly's data of 20000 and 1 allocations, 320000 and 1048576 bytes; in
/// the flame graph the root is drawn above `main`, as its note says
/// ("callers above callees"), and no C start-up frame is drawn; the page
/// says which profile of which program it was drawn from.
#[test]
fn the_heap_page_shows_both_bars_and_callers_above_callees() {
    let Some(bin) = chromium_or_skip("the heap page was not checked") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        common::root().join("tests/c/many_small.c"),
        dir.path().join("m.c"),
    )
    .unwrap();
    common::mapvis_script(dir.path(), "compile_exe m.c; heap_profile; heap_figures");
    let html = dir.path().join("figures/heap_profile.html");
    let text = std::fs::read_to_string(&html).unwrap();
    let drawn = text
        .split("id=\"mapvis-drawn-from\">")
        .nth(1)
        .and_then(|s| s.split('<').next())
        .unwrap();
    assert!(
        drawn.starts_with("Drawn from heap profile ")
            && drawn.contains("/.mapvis/bin/m, recorded "),
        "{drawn}"
    );
    let probe = r#"<script>
(function () {
  function go() {
    if (!document.body.hasAttribute('data-rendered-traces')) { return setTimeout(go, 50); }
    var out = [];
    var bars = document.getElementById('fig2');
    bars._fullData.forEach(function (t) {
      out.push('data ' + t.name + ' ' + JSON.stringify(t.x) + ' ' + JSON.stringify(t.y));
    });
    bars.querySelectorAll('.barlayer .trace').forEach(function (t, k) {
      t.querySelectorAll('.point path').forEach(function (p, i) {
        var r = p.getBoundingClientRect();
        out.push(['bar', k, i, r.left, r.right, r.top, r.bottom].join(' '));
      });
    });
    document.getElementById('fig1').querySelectorAll('g.slice').forEach(function (s) {
      var r = s.querySelector('path').getBoundingClientRect();
      out.push('slice ' + r.top + ' ' + s.textContent);
    });
    document.body.setAttribute('data-hover', JSON.stringify(out));
  }
  go();
})();
</script>
</body>"#;
    // Every trace drawn, and a screenshot that is not blank.
    let traces: usize = figures(&html)
        .iter()
        .map(|f| f["data"].as_array().map_or(0, Vec::len))
        .sum();
    check_page(
        &bin,
        &FigureReport {
            html: html.clone(),
            ..Default::default()
        },
        traces,
    );
    let got = probed(&bin, &html, probe, "heap_probe.html");
    let data: Vec<&String> = got.iter().filter(|l| l.starts_with("data ")).collect();
    assert_eq!(
        data,
        [
            "data allocations [\"0-16\",\"524289-1048576\"] [20000,1]",
            "data bytes [\"0-16\",\"524289-1048576\"] [320000,1048576]"
        ],
        "{got:?}"
    );
    let bar = |k: usize, i: usize| -> [f64; 4] {
        let l = got
            .iter()
            .find(|l| l.starts_with(&format!("bar {k} {i} ")))
            .unwrap_or_else(|| panic!("no bar {k} {i}: {got:?}"));
        let v: Vec<f64> = l.split(' ').skip(3).map(|x| x.parse().unwrap()).collect();
        [v[0], v[1], v[2], v[3]]
    };
    for i in 0..2 {
        let (a, b) = (bar(0, i), bar(1, i));
        assert!(
            a[1] <= b[0] + 0.5 || b[1] <= a[0] + 0.5,
            "size class {i}: the bars overlap, {a:?} and {b:?}"
        );
        assert!(a[3] - a[2] > 0.5 && b[3] - b[2] > 0.5, "{a:?} {b:?}");
    }
    let top_of = |label: &str| -> f64 {
        got.iter()
            .filter_map(|l| l.strip_prefix("slice "))
            .find_map(|l| {
                let (y, text) = l.split_once(' ')?;
                text.starts_with(label).then(|| y.parse().unwrap())
            })
            .unwrap_or_else(|| panic!("no slice {label}: {got:?}"))
    };
    assert!(top_of("all allocations") < top_of("main"), "{got:?}");
    assert!(
        !got.iter()
            .any(|l| l.starts_with("slice ") && (l.contains("libc_start") || l.contains("0x"))),
        "a start-up frame is drawn: {got:?}"
    );
}
