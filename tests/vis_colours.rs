//! Honest colours: above the point budget, a figure coloured by cache level
//! (`set_figure_colour hit`) or reuse distance groups accesses of several
//! classes into one point, and that point must show their mix, never the
//! class drawn last. A naive and a tiled transposed copy of a 256 x 256
//! matrix of doubles, traced for real: under a 32 KiB 8-way L1 the naive
//! copy misses 8192 + 65536 times in X and Y, the tiled one 8192 + 8192
//! (worked out in `tests/c/colour_transpose.c`). The figures' data must
//! give those counts back, and the tiled copy's whole-run view must show
//! less of the miss colour, in its data and on the screen.
mod common;
mod vis_common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::*;
use mapvis::filter::locality::cache::{CacheModel, Level};
use mapvis::filter::locality::colour::{with_classes, ColourMode};
use mapvis::filter::Analysis;
use mapvis::filter::ClassNames;
use mapvis::filter::Selection;
use mapvis::filter::VarId;
use mapvis::trace::naming::ProgramNamer;
use mapvis::vis::{self, FigureOptions, FigureReport};
use polars::prelude::DataFrame;
use serde_json::Value;

const SRC: &str = "tests/c/colour_transpose.c";

/// Accesses of X and Y: 256 x 256 of each.
const ACCESSES: u64 = 2 * 65536;

/// Compiles (with `cc` flags), traces and analyses the transpose.
fn analysed(cc: &[&str]) -> (tempfile::TempDir, Analysis) {
    let (dir, exe, _o, _evs, _end) = trace(SRC, cc, &[]);
    let mut namer = ProgramNamer::new(Some(&exe), &[root().join("tests/c")]);
    let a = mapvis::filter::analyse(&dir.path().join("t.mvt"), &mut namer).expect("analysis");
    (dir, a)
}

/// One 32 KiB 8-way L1 of 64-byte lines, nothing else.
fn l1_32k() -> CacheModel {
    CacheModel {
        levels: vec![Level::new(1, 32768, 8, 64).unwrap()],
        origin: "test".into(),
    }
}

fn var_row(a: &Analysis, name: &str) -> VarId {
    VarId(a.vars.iter().position(|v| v.name == name).expect(name) as u32)
}

/// The accesses of X and Y in time order with their colour classes, and
/// figure options naming the classes, drawing into `dir`.
fn coloured(a: &Analysis, mode: ColourMode, dir: &Path) -> (DataFrame, FigureOptions) {
    let keep = (0..a.vars.len())
        .map(|v| ["X", "Y"].contains(&a.vars[v].name.as_str()))
        .collect();
    let rows = mapvis::filter::rows(a, &Selection::of(a, keep).unwrap()).unwrap();
    assert_eq!(rows.height() as u64, ACCESSES);
    let (rows, classes) = with_classes(a, &rows, mode, &l1_32k()).unwrap();
    let mut o = vis_common::options(dir);
    o.annotations.classes = classes.map(|c| ClassNames {
        title: c.title,
        labels: c.labels,
        sparse: false,
    });
    (rows, o)
}

/// What the points of one figure show: accesses per class, from each
/// point's class counts (the last customdata column, `L1 hit 7, miss to
/// memory 1`); the count-weighted mean of the points' colour values; and
/// their area-weighted mean, which is what the eye sees.
#[derive(Debug)]
struct Shown {
    per_class: BTreeMap<String, u64>,
    by_count: f64,
    by_area: f64,
    colour_bars: usize,
}

fn shown(fig: &Value) -> Shown {
    let mut s = Shown {
        per_class: BTreeMap::new(),
        by_count: 0.0,
        by_area: 0.0,
        colour_bars: 0,
    };
    let (mut count, mut area) = (0.0, 0.0);
    for t in fig["data"].as_array().unwrap() {
        // The aggregated 2D view is drawn by the page as a raster: a
        // block of one size a point, its colour value in z.
        let (m, values) = match t["meta"]["raster"].is_object() {
            true => (t, vis_common::nums(&t["z"])),
            false => (&t["marker"], vis_common::nums(&t["marker"]["color"])),
        };
        s.colour_bars += (m["showscale"] == true) as usize;
        // One size for all points (the 2D view) or one per point (3D).
        let sizes = match t["meta"]["raster"]["size"].as_f64().or(m["size"].as_f64()) {
            Some(px) => vec![px; values.len()],
            None => vis_common::nums(&m["size"]),
        };
        let cd = t["customdata"].as_array().unwrap();
        assert_eq!(values.len(), cd.len());
        for ((v, px), row) in values.iter().zip(&sizes).zip(cd) {
            assert!((0.0..=1.0).contains(v), "colour value {v}");
            let row = row.as_array().unwrap();
            let n = row[0].as_u64().unwrap() as f64;
            let mut in_classes = 0;
            for part in row.last().unwrap().as_str().unwrap().split(", ") {
                let (name, k) = part.rsplit_once(' ').unwrap();
                let k: u64 = k.parse().unwrap();
                *s.per_class.entry(name.to_string()).or_default() += k;
                in_classes += k;
            }
            assert_eq!(
                in_classes as f64, n,
                "a point's classes add up to its count"
            );
            s.by_count += v * n;
            count += n;
            s.by_area += v * px * px;
            area += px * px;
        }
    }
    s.by_count /= count;
    s.by_area /= area;
    s
}

fn classes(hits: u64, misses: u64) -> BTreeMap<String, u64> {
    [
        ("L1 hit".to_string(), hits),
        ("miss to memory".to_string(), misses),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .collect()
}

/// Draws the complete pattern of X and Y coloured by cache level; returns
/// the report and what its 3D and 2D views show.
fn complete_hit(a: &Analysis, dir: &Path) -> (FigureReport, [Shown; 2]) {
    complete_in(a, ColourMode::Hit, dir)
}

/// Draws the complete pattern of X and Y coloured by `mode`.
fn complete_in(a: &Analysis, mode: ColourMode, dir: &Path) -> (FigureReport, [Shown; 2]) {
    let (rows, o) = coloured(a, mode, dir);
    let r = vis::complete_memory_access_pattern(&rows, &a.variables, &a.lines, &o).unwrap();
    assert!(r.aggregated.is_some(), "131072 accesses are aggregated");
    let figs = vis_common::figures(&r.html);
    let html = std::fs::read_to_string(&r.html).unwrap();
    assert!(html.contains("coloured by their mix"), "the page says so");
    (r, [shown(&figs[0]), shown(&figs[1])])
}

#[test]
fn aggregated_points_show_the_mix_of_hits_and_misses() {
    let (d1, naive) = analysed(&[]);
    let (d2, tiled) = analysed(&["-DBLOCK=8"]);
    let (naive_page, naive_views) = complete_hit(&naive, d1.path());
    let (tiled_page, tiled_views) = complete_hit(&tiled, d2.path());
    let naive_misses = 8192 + 65536;
    let tiled_misses = 8192 + 8192;
    for (views, misses) in [(&naive_views, naive_misses), (&tiled_views, tiled_misses)] {
        for v in views.iter() {
            // Every access is in one point, with its class.
            assert_eq!(v.per_class, classes(ACCESSES - misses, misses), "{v:?}");
            // With one cache level a point's colour is its miss ratio, so
            // the points weighted by their counts give the run's.
            let ratio = misses as f64 / ACCESSES as f64;
            assert!((v.by_count - ratio).abs() < 1e-9, "{v:?} against {ratio}");
            assert_eq!(v.colour_bars, 1, "one colour bar per view");
        }
    }
    // What the eye sees: the tiled copy (4.5x fewer misses) shows far less
    // of the miss colour in each view.
    for (n, t) in naive_views.iter().zip(&tiled_views) {
        assert!(
            t.by_area < 0.5 * n.by_area,
            "tiled {:.3} against naive {:.3}",
            t.by_area,
            n.by_area
        );
    }
    // The array figure of Y alone: every write of the naive copy misses,
    // one in eight of the tiled one.
    for (a, dir, ratio) in [(&naive, &d1, 1.0), (&tiled, &d2, 0.125)] {
        let (rows, o) = coloured(a, ColourMode::Hit, dir.path());
        let r = vis::array_2d(
            vis::Array2d {
                acc: &rows,
                vars: &a.variables,
                lines: &a.lines,
                var: var_row(a, "Y"),
                cols: 256,
                type_bytes: 8,
            },
            &o,
        )
        .unwrap();
        assert!(r.aggregated.is_some());
        let s = shown(&vis_common::figures(&r.html)[0]);
        assert_eq!(s.per_class.values().sum::<u64>(), 65536, "{s:?}");
        assert!((s.by_count - ratio).abs() < 1e-9, "{s:?} against {ratio}");
    }
    rendered_shares(&naive_page, &tiled_page);
}

/// `set_figure_colour miss`: each access by why it missed L1 (the 3C
/// model), worked by hand. The naive copy: X's 8192 lines and Y's 8192 are
/// first uses (compulsory); Y's other 57 344 writes miss by conflict (its
/// column's 256 lines share 2 sets, but a line comes back after fewer than
/// 320 distinct lines, within L1's 512). The tiled copy misses only on
/// first uses.
#[test]
fn miss_colours_give_each_access_its_class() {
    let want = |hit: u64, conflict: u64, compulsory: u64| -> BTreeMap<String, u64> {
        [
            ("L1 hit", hit),
            ("L1 conflict miss", conflict),
            ("L1 compulsory miss", compulsory),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| (k.to_string(), n))
        .collect()
    };
    for (cc, expect) in [
        (&[][..], want(ACCESSES - 16_384 - 57_344, 57_344, 16_384)),
        (&["-DBLOCK=8"][..], want(ACCESSES - 16_384, 0, 16_384)),
    ] {
        let (d, a) = analysed(cc);
        let (_, views) = complete_in(&a, ColourMode::Miss(1), d.path());
        for v in &views {
            assert_eq!(v.per_class, expect, "{cc:?}: {v:?}");
        }
    }
}

#[test]
fn aggregated_reuse_points_keep_every_class_count() {
    let (d, a) = analysed(&["-DBLOCK=8"]);
    let (rows, o) = coloured(&a, ColourMode::Reuse, d.path());
    // The classes of the accesses, counted from the table itself.
    let labels = o.annotations.classes.clone().unwrap().labels;
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    let col = rows.column("colour").unwrap().u8().unwrap().clone();
    for c in col.into_no_null_iter() {
        *want.entry(labels[c as usize].clone()).or_default() += 1;
    }
    assert!(want.len() > 2, "several reuse classes: {want:?}");
    let r = vis::complete_memory_access_pattern(&rows, &a.variables, &a.lines, &o).unwrap();
    for fig in vis_common::figures(&r.html) {
        assert_eq!(shown(&fig).per_class, want);
    }
}

/// Renders both pages in headless Chromium and compares the share of red
/// among the red and green pixels of their 2D views. Without Chromium the
/// check is skipped with a loud message, except under CI (`CI=true`),
/// where it fails.
fn rendered_shares(naive: &FigureReport, tiled: &FigureReport) {
    let Some(bin) = chromium_or_skip("pixels were not checked") else {
        return;
    };
    let red = |r: &FigureReport| {
        let (reds, greens) = screen_colours(&bin, &r.html);
        assert!(reds + greens > 20_000, "{reds} red, {greens} green pixels");
        reds as f64 / (reds + greens) as f64
    };
    let (n, t) = (red(naive), red(tiled));
    assert!(t < 0.5 * n, "red share: tiled {t:.3}, naive {n:.3}");
}

/// Red and green pixels of the 2D view (the lower part of a 1200 x 2000
/// screenshot) of `page`.
fn screen_colours(bin: &Path, page: &Path) -> (u64, u64) {
    let page = page.canonicalize().unwrap();
    let png = page.with_extension("png");
    let profile = tempfile::tempdir().unwrap();
    let status = Command::new("timeout")
        .arg("120")
        .arg(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .args(["--use-angle=swiftshader", "--enable-unsafe-swiftshader"])
        .args(["--virtual-time-budget=20000", "--window-size=1200,2000"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(status.status.success(), "chromium failed on {page:?}");
    let ppm = Command::new("convert")
        .arg(&png)
        .args(["-crop", "1200x1000+0+1000", "-depth", "8", "ppm:-"])
        .output()
        .expect("ImageMagick's convert");
    assert!(ppm.status.success(), "convert failed on {png:?}");
    // Binary PPM: "P6\n1200 1000\n255\n" then RGB.
    let body = &ppm.stdout[ppm.stdout.len() - 1200 * 1000 * 3..];
    let (mut reds, mut greens) = (0, 0);
    for px in body.chunks(3) {
        let (r, g, b) = (px[0] as i32, px[1] as i32, px[2] as i32);
        reds += (r > 150 && r - g > 60 && r - b > 60) as u64;
        greens += (g > 100 && g - r > 40 && g - b > 20) as u64;
    }
    (reds, greens)
}
