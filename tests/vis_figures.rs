//! Figure stage: exact coordinates for known traversals, wide and
//! out-of-block accesses, aggregation, offline HTML and CSV output.

mod vis_common;

use mapvis::filter::schema::{OP_LOAD, OP_MODIFY, OP_STORE};
use mapvis::filter::VarId;
use mapvis::vis::{array_3d, complete_memory_access_pattern, Array3d, VisError, PLOTLY_JS};
use vis_common::*;

const BASE: u64 = 0x4a38000;

/// 4 x 5 ints filled in the given element order: the first-access heatmap.
fn first_access_grid(order: &[u64]) -> Vec<Vec<Option<f64>>> {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    let acc = acc_df(&fill(BASE, order));
    let vars = vars_df(&[("arr", BASE, 80)]);
    let r = draw_2d(&acc, &vars, VarId(0), 5, 4, &o).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(r.points, 20);
    let figs = figures(&r.html);
    assert_eq!(figs.len(), 7, "scatter, 4 heatmaps, 2 replays");
    grid(&figs[2]["data"][0]["z"])
}

#[test]
fn row_wise_fill_gives_first_access_along_rows() {
    let order: Vec<u64> = (0..20).collect();
    let z = first_access_grid(&order);
    assert_eq!(z.len(), 4);
    for (i, row) in z.iter().enumerate() {
        assert_eq!(row.len(), 5);
        for (j, v) in row.iter().enumerate() {
            assert_eq!(*v, Some((i * 5 + j) as f64), "cell [{i}][{j}]");
        }
    }
}

#[test]
fn column_wise_fill_gives_the_transpose() {
    // Visit (i, j) with i innermost: time = j * 4 + i.
    let order: Vec<u64> = (0..5)
        .flat_map(|j| (0..4).map(move |i| i * 5 + j))
        .collect();
    let z = first_access_grid(&order);
    for (i, row) in z.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            assert_eq!(*v, Some((j * 4 + i) as f64), "cell [{i}][{j}]");
        }
    }
}

#[test]
fn scatter_coordinates_of_a_2d_fill() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    let acc = acc_df(&fill(BASE, &(0..20).collect::<Vec<_>>()));
    let vars = vars_df(&[("arr", BASE, 80)]);
    let r = draw_2d(&acc, &vars, VarId(0), 5, 4, &o).unwrap();
    let figs = figures(&r.html);
    let t = &figs[0]["data"][0];
    assert_eq!(t["type"], "scatter3d");
    let x = nums(&t["x"]);
    let z = nums(&t["z"]);
    for e in 0..20 {
        assert_eq!(x[e], (e % 5) as f64, "column of element {e}");
        assert_eq!(z[e], (e / 5) as f64, "row of element {e}");
    }
    assert_eq!(
        nums(&t["marker"]["color"]),
        (0..20).map(|t| t as f64).collect::<Vec<_>>()
    );
    let ticks = t["marker"]["colorbar"]["ticktext"].as_array().unwrap();
    assert_eq!(ticks[0], "sooner");
    assert_eq!(ticks[1], "later");
    // Replay: the last frame holds every access once.
    let frames = figs[5]["frames"].as_array().unwrap();
    assert!(
        frames.len() >= 20 && frames.len() <= 50,
        "{} frames",
        frames.len()
    );
    let last = grid(&frames.last().unwrap()["data"][0]["z"]);
    assert!(last.iter().flatten().all(|v| *v == Some(1.0)));
    let first = grid(&frames[0]["data"][0]["z"]);
    assert_eq!(
        first.iter().flatten().filter(|v| **v == Some(1.0)).count(),
        1
    );
    // CSV: one row per access, rows and columns reconstructed.
    let csv = std::fs::read_to_string(&r.data_csv[0]).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "index,address,variable,occurrence,row,col,operation,thread,time"
    );
    assert_eq!(lines.len(), 21);
    assert_eq!(lines[8], format!("7,0x{:x},arr,1,1,2,store,1,7", BASE + 28));
    assert!(r.data_csv[0].ends_with("visinfo/2d_memory_access_pattern_arr.csv"));
}

#[test]
fn matrix_orientation_puts_row_zero_on_top() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(dir.path());
    let acc = acc_df(&fill(BASE, &(0..20).collect::<Vec<_>>()));
    let vars = vars_df(&[("arr", BASE, 80)]);
    let r = draw_2d(&acc, &vars, VarId(0), 5, 4, &o).unwrap();
    let default = figures(&r.html);
    assert!(default[1]["layout"]["yaxis"].get("range").is_none());
    o.matrix_orientation = true;
    let r = draw_2d(&acc, &vars, VarId(0), 5, 4, &o).unwrap();
    let flipped = figures(&r.html);
    let range = nums(&flipped[1]["layout"]["yaxis"]["range"]);
    assert!(range[0] > range[1], "reversed y range {range:?}");
}

#[test]
fn three_d_fill_with_k_innermost() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    // 2 planes x 3 cols x 4 depth ints, visited in memory order.
    let acc = acc_df(&fill(BASE, &(0..24).collect::<Vec<_>>()));
    let vars = vars_df(&[("cube", BASE, 96)]);
    let r = array_3d(
        Array3d {
            acc: &acc,
            vars: &vars,
            lines: &lines_df(),
            var: VarId(0),
            cols: 3,
            depth: 4,
            type_bytes: 4,
        },
        &o,
    )
    .unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert!(r
        .html
        .ends_with("figures/3d_memory_access_pattern_cube.html"));
    let figs = figures(&r.html);
    let t = &figs[0]["data"][0];
    let (x, y, z) = (nums(&t["x"]), nums(&t["y"]), nums(&t["z"]));
    for e in 0..24usize {
        assert_eq!(
            (z[e], x[e], y[e]),
            ((e / 12) as f64, ((e % 12) / 4) as f64, (e % 4) as f64)
        );
    }
    // First-access slices: one heatmap per plane, z[j][k] = plane*12 + j*4 + k.
    let slices = figs[1]["data"].as_array().unwrap();
    assert_eq!(slices.len(), 2);
    for (i, s) in slices.iter().enumerate() {
        let g = grid(&s["z"]);
        assert_eq!(g.len(), 3);
        for (j, row) in g.iter().enumerate() {
            for (k, v) in row.iter().enumerate() {
                assert_eq!(*v, Some((i * 12 + j * 4 + k) as f64), "[{i}][{j}][{k}]");
            }
        }
    }
    assert_eq!(
        figs[1]["layout"]["sliders"][0]["steps"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let csv = std::fs::read_to_string(&r.data_csv[0]).unwrap();
    assert!(
        csv.starts_with("index,address,variable,occurrence,row,col,depth,operation,thread,time\n")
    );
    assert!(csv.contains(&format!("\n13,0x{:x},cube,1,1,0,1,store,1,13\n", BASE + 52)));
}

#[test]
fn three_d_fill_walked_k_outermost() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    // 2 planes x 3 cols x 4 depth ints, walked k, then i, then j:
    // for k { for i { for j { cube[i][j][k] } } }.
    let mut order = Vec::new();
    for k in 0..4u64 {
        for i in 0..2u64 {
            for j in 0..3u64 {
                order.push(i * 12 + j * 4 + k);
            }
        }
    }
    let acc = acc_df(&fill(BASE, &order));
    let vars = vars_df(&[("cube", BASE, 96)]);
    let r = array_3d(
        Array3d {
            acc: &acc,
            vars: &vars,
            lines: &lines_df(),
            var: VarId(0),
            cols: 3,
            depth: 4,
            type_bytes: 4,
        },
        &o,
    )
    .unwrap();
    let figs = figures(&r.html);
    // The scatter, in time order: z = i, x = j, y = k of each visited element.
    let t = &figs[0]["data"][0];
    let (x, y, z) = (nums(&t["x"]), nums(&t["y"]), nums(&t["z"]));
    let mut seen: Vec<(f64, f64, f64)> = (0..24).map(|p| (z[p], x[p], y[p])).collect();
    seen.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mut want: Vec<(f64, f64, f64)> = order
        .iter()
        .map(|e| ((e / 12) as f64, ((e % 12) / 4) as f64, (e % 4) as f64))
        .collect();
    want.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(seen, want);
    // First-access time of cube[i][j][k] is k * 6 + i * 3 + j.
    let slices = figs[1]["data"].as_array().unwrap();
    assert_eq!(slices.len(), 2);
    for (i, s) in slices.iter().enumerate() {
        for (j, row) in grid(&s["z"]).iter().enumerate() {
            for (k, v) in row.iter().enumerate() {
                assert_eq!(*v, Some((k * 6 + i * 3 + j) as f64), "[{i}][{j}][{k}]");
            }
        }
    }
}

#[test]
fn wide_access_covers_every_element_it_spans() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    // One 16-byte load at element 5 of a 4 x 5 int array: elements 5..=8.
    let acc = acc_df(&[(0, OP_LOAD, BASE + 20, 16, 1, 0, 1, 1)]);
    let vars = vars_df(&[("arr", BASE, 80)]);
    let r = draw_2d(&acc, &vars, VarId(0), 5, 4, &o).unwrap();
    assert_eq!(r.points, 4);
    let figs = figures(&r.html);
    let count = grid(&figs[1]["data"][0]["z"]);
    let touched: Vec<(usize, usize)> = (0..4)
        .flat_map(|i| (0..5).map(move |j| (i, j)))
        .filter(|&(i, j)| count[i][j] == Some(1.0))
        .collect();
    assert_eq!(touched, vec![(1, 0), (1, 1), (1, 2), (1, 3)]);
    let total: f64 = count.iter().flatten().map(|v| v.unwrap_or(0.0)).sum();
    assert_eq!(total, 4.0);
    let csv = std::fs::read_to_string(&r.data_csv[0]).unwrap();
    assert_eq!(csv.lines().count(), 5);
}

#[test]
fn out_of_block_accesses_are_reported_not_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    let mut rows = fill(BASE, &[0, 1, 2]);
    rows.push((3, OP_LOAD, BASE + 80, 4, 1, 0, 1, 1)); // just past the end
    rows.push((4, OP_LOAD, BASE - 8, 4, 1, 0, 1, 1)); // before the start
    rows.push((5, OP_LOAD, BASE + 76, 8, 1, 0, 1, 1)); // straddles the end
    let acc = acc_df(&rows);
    let vars = vars_df(&[("arr", BASE, 80)]);
    let r = draw_2d(&acc, &vars, VarId(0), 5, 4, &o).unwrap();
    assert_eq!(r.points, 4, "3 stores + the clipped straddling load");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("2 accesses of `arr` fall outside")),
        "{:?}",
        r.warnings
    );
    assert!(r
        .warnings
        .iter()
        .any(|w| w.starts_with("1 accesses of `arr` straddle")));
    let page = std::fs::read_to_string(&r.html).unwrap();
    assert!(page.contains("fall outside its block"));
}

#[test]
fn block_not_a_multiple_of_a_row_warns() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    let acc = acc_df(&fill(BASE, &[0, 1]));
    let vars = vars_df(&[("arr", BASE, 84)]); // 21 ints, 5 columns
    let r = draw_2d(&acc, &vars, VarId(0), 5, 4, &o).unwrap();
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("not a multiple of 20")),
        "{:?}",
        r.warnings
    );
    let figs = figures(&r.html);
    assert_eq!(
        grid(&figs[1]["data"][0]["z"]).len(),
        5,
        "ceil(84 / 20) rows"
    );
}

#[test]
fn complete_pattern_exact_points_and_hover() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    let acc = acc_df(&[
        (0, OP_STORE, 0x1000, 4, 1, 1, 1, 1),
        (1, OP_LOAD, 0x2000, 8, 1, 0, 1, 2),
        (2, OP_MODIFY, 0x1000, 4, 2, 1, 2, 1),
    ]);
    // Variable 1 has the lower base, so it is drawn first (y = 0).
    let vars = vars_df(&[("b", 0x2000, 8), ("a", 0x1000, 16)]);
    let r = complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    assert_eq!(r.points, 3);
    assert!(r.aggregated.is_none());
    let figs = figures(&r.html);
    let t = &figs[0]["data"][0];
    assert_eq!(nums(&t["x"]), vec![1.0, 1.0, 2.0]);
    assert_eq!(nums(&t["y"]), vec![0.0, 1.0, 0.0]);
    assert_eq!(nums(&t["z"]), vec![4096.0, 8192.0, 4096.0]);
    assert_eq!(t["customdata"][2][1], "a");
    assert_eq!(t["customdata"][2][2], "modify");
    assert_eq!(t["customdata"][2][3], 2);
    assert_eq!(t["customdata"][1][5], "prog.c:11");
    assert!(t["hovertemplate"]
        .as_str()
        .unwrap()
        .contains("0x%{customdata[6]:x}"));
    assert_eq!(
        figs[0]["layout"]["scene"]["yaxis"]["ticktext"],
        serde_json::json!(["a", "b"])
    );
    // 2D: one WebGL trace per (variable, operation).
    let t2 = figs[1]["data"].as_array().unwrap();
    assert_eq!(t2.len(), 3);
    assert!(t2.iter().all(|t| t["type"] == "scattergl"));
    let csv = std::fs::read_to_string(&r.data_csv[0]).unwrap();
    assert_eq!(
        csv,
        "index,address,variable,occurrence,operation,thread,time\n\
         0,0x1000,a,1,store,1,0\n1,0x2000,b,1,load,1,1\n2,0x1000,a,2,modify,2,2\n"
    );
}

#[test]
fn aggregation_above_the_budget_keeps_every_access() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(dir.path());
    o.point_budget = 50;
    // 3000 pseudo-random accesses over two variables.
    let mut rows = Vec::new();
    let mut x: u64 = 12345;
    for t in 0..3000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let var = (x >> 60) as u32 & 1;
        let addr = if var == 0 { 0x1000 } else { 0x9000 } + ((x >> 20) % 1024) * 4;
        rows.push((t, OP_LOAD, addr, 4, 1, var, 1, 1));
    }
    let acc = acc_df(&rows);
    let vars = vars_df(&[("u", 0x1000, 4096), ("v", 0x9000, 4096)]);
    let r = complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    assert!(r.points <= 50 && r.points > 0, "{} points", r.points);
    let desc = r.aggregated.clone().expect("aggregated");
    assert!(
        desc.contains("point budget (50 points in 3D, 50 in 2D)"),
        "{desc}"
    );
    let figs = figures(&r.html);
    let counts = |t: &serde_json::Value| -> u64 {
        t["customdata"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c[0].as_u64().unwrap())
            .sum()
    };
    assert_eq!(counts(&figs[0]["data"][0]), 3000);
    let sum2: u64 = figs[1]["data"].as_array().unwrap().iter().map(counts).sum();
    assert_eq!(sum2, 3000);
    let page = std::fs::read_to_string(&r.html).unwrap();
    assert!(page.contains("aggregated into"));
    // Aggregated points are sized by count; plotly would draw such bubbles
    // translucent with a white outline unless told otherwise.
    let m = &figs[0]["data"][0]["marker"];
    assert_eq!(m["opacity"], 1.0, "{m}");
    assert_eq!(m["line"]["width"], 0.0, "{m}");
    // The 2D view's groups are drawn by the page as a raster of opaque
    // blocks: heatmaps of the points, one colour each.
    for t in figs[1]["data"].as_array().unwrap() {
        assert_eq!(t["type"], "heatmap", "{}", t["name"]);
        assert!(t["meta"]["raster"]["size"].as_f64().unwrap() >= 5.0);
        assert_eq!(t["colorscale"][0][1], t["colorscale"][1][1]);
    }

    // The same for an array: 100 x 100 ints, row-major, budget 50.
    let order: Vec<u64> = (0..10_000).collect();
    let acc = acc_df(&fill(BASE, &order));
    let vars = vars_df(&[("big", BASE, 40_000)]);
    let r = draw_2d(&acc, &vars, VarId(0), 100, 4, &o).unwrap();
    assert!(r.points <= 50);
    assert!(r.aggregated.is_some());
    let figs = figures(&r.html);
    assert_eq!(counts(&figs[0]["data"][0]), 10_000);
    // Heatmaps merged into blocks, still exact in total.
    let c = grid(&figs[1]["data"][0]["z"]);
    assert!(c.len() * c[0].len() <= 50);
    assert_eq!(
        c.iter().flatten().map(|v| v.unwrap_or(0.0)).sum::<f64>(),
        10_000.0
    );
}

/// Aggregated 2D groups of one address (a loop counter's accesses in one
/// time bin) keep a raw access's 5 px: their raw points lie on one line
/// that neighbouring bins continue. Groups spread over many addresses grow
/// with their mean count, to cover the area their raw points would.
#[test]
fn one_address_groups_keep_the_raw_size_in_2d() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(dir.path());
    o.point_budget = 50;
    let mut rows = Vec::new();
    let mut x: u64 = 99;
    for t in 0..3000u64 {
        if t % 2 == 0 {
            rows.push((t, OP_LOAD, 0x1000, 4, 1, 0, (t / 2 + 1) as u32, 1));
        } else {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            rows.push((t, OP_LOAD, 0x9000 + ((x >> 20) % 1024) * 4, 4, 1, 1, 1, 1));
        }
    }
    let acc = acc_df(&rows);
    let vars = vars_df(&[("i", 0x1000, 4), ("a", 0x9000, 4096)]);
    let r = complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    assert!(r.aggregated.is_some());
    let figs = figures(&r.html);
    let size_of = |name: &str| {
        let t = figs[1]["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no trace {name}"));
        t["meta"]["raster"]["size"].as_f64().unwrap()
    };
    assert_eq!(size_of("i mostly load"), 5.0);
    assert!(
        size_of("a mostly load") > 5.0,
        "{}",
        size_of("a mostly load")
    );
}

/// The aggregated 2D view is handed to the page as raster traces: a
/// scalar `s` loaded at times 0..31 and stored at 32..63, at a budget of
/// 8 points, falls into 8 time bins of 8 accesses (the finest halving of
/// the 64-access span that fits), 4 mostly loads and 4 mostly stores.
/// Each trace gives its groups' points (time span, address), the block
/// size of a raw access (one address), one colour (the variable's, half
/// as bright for stores: 0x4e79a7 -> 0x273d54) and a hover that reads the
/// address from the field after the point's x, which the page appends to
/// the customdata row.
#[test]
fn aggregated_2d_view_is_a_raster_of_its_groups() {
    let dir = tempfile::tempdir().unwrap();
    let r = aggregated_scalar(dir.path());
    let figs = figures(&r.html);
    let traces = figs[1]["data"].as_array().unwrap();
    assert_eq!(traces.len(), 2);
    for (name, colour, t0) in [
        ("s mostly load", "#4e79a7", 0),
        ("s mostly store", "#273d54", 32),
    ] {
        let t = traces.iter().find(|t| t["name"] == name).unwrap();
        assert_eq!(t["type"], "heatmap");
        assert_eq!(t["meta"]["raster"]["size"], 5.0);
        assert_eq!(t["legendgroup"], "s");
        assert_eq!(t["showlegend"], true);
        assert_eq!(t["hoverongaps"], false);
        assert_eq!(t["showscale"], false);
        for stop in t["colorscale"].as_array().unwrap() {
            assert_eq!(stop[1], colour);
        }
        // x is the midpoint of the first and last time (customdata 1 and
        // 2): 3.5, 11.5, ... as the rows below give.
        assert!(t.get("x").is_none());
        assert_eq!(t["meta"]["raster"]["x"], serde_json::json!([1, 2]));
        assert!(t["y"].as_array().unwrap().iter().all(|v| v == 0x1000));
        assert!(t.get("z").is_none(), "uncoloured: no colour values");
        let cd = t["customdata"].as_array().unwrap();
        assert_eq!(cd.len(), 4);
        for (k, row) in cd.iter().enumerate() {
            let first = t0 + 8 * k as u64;
            // count, first and last time, variable, address span.
            assert_eq!(row[0], 8);
            assert_eq!(
                (row[1].as_u64(), row[2].as_u64()),
                (Some(first), Some(first + 7))
            );
            assert_eq!(
                (&row[3], &row[4]),
                (&serde_json::json!("s"), &serde_json::json!(0))
            );
        }
        let hover = t["hovertemplate"].as_str().unwrap();
        assert!(
            hover.contains("lowest address 0x%{customdata[14]:x},"),
            "{hover}"
        );
        assert_eq!(cd[0].as_array().unwrap().len(), 13);
        // In the page, columns of one value are that value once, and the
        // last time is stored as what it adds to the first (7).
        let raw: serde_json::Value = {
            let page = std::fs::read_to_string(&r.html).unwrap();
            let body = page.split("id=\"fig1-json\">").nth(1).unwrap();
            serde_json::from_str(body.split("</script>").next().unwrap()).unwrap()
        };
        let rt = raw["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name)
            .unwrap();
        let cols = &rt["customdata"]["columns"];
        assert_eq!(cols[0], serde_json::json!({"same": 8, "n": 4}));
        assert_eq!(
            cols[2],
            serde_json::json!({"plus": 1, "by": {"same": 7, "n": 4}})
        );
    }
}

#[test]
fn bad_budgets_and_shapes_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let acc = acc_df(&fill(BASE, &[0]));
    let vars = vars_df(&[("arr", BASE, 80)]);
    for budget in [0usize, 50_000_001] {
        let mut o = options(dir.path());
        o.point_budget = budget;
        let e = complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap_err();
        assert!(matches!(e, VisError::BadOption(_)));
        assert!(e.to_string().contains("point budget"), "{e}");
    }
    let o = options(dir.path());
    let e = draw_2d(&acc, &vars, VarId(0), 0, 4, &o).unwrap_err();
    assert!(e.to_string().contains("`arr`"), "{e}");
    let e = draw_2d(&acc, &vars, VarId(7), 5, 4, &o).unwrap_err();
    assert!(matches!(e, VisError::UnknownVariable { var: VarId(7), .. }));
    let bad = acc.drop("tid").unwrap();
    let e = complete_memory_access_pattern(&bad, &vars, &lines_df(), &o).unwrap_err();
    assert!(e.to_string().contains("`tid`"), "{e}");
}

#[test]
fn pages_are_offline_and_names_do_not_collide() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    let mut rows = fill(BASE, &[0, 1]);
    rows.push((2, OP_LOAD, 0x9000, 4, 1, 1, 1, 1));
    let acc = acc_df(&rows);
    let vars = vars_df(&[("rows[i]#2", BASE, 80), ("rows_i__2", 0x9000, 80)]);
    let a = draw_2d(&acc, &vars, VarId(0), 5, 4, &o).unwrap();
    let b = draw_2d(&acc, &vars, VarId(1), 5, 4, &o).unwrap();
    let c = complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    assert_ne!(a.html, b.html);
    assert!(b.html.ends_with("2d_memory_access_pattern_rows_i__2.html"));
    for page in [&a.html, &b.html, &c.html] {
        let text = std::fs::read_to_string(page).unwrap();
        assert!(text.contains("<script src=\"plotly.min.js\"></script>"));
        assert!(
            !text.contains("src=\"http"),
            "no network script in {page:?}"
        );
        assert!(!text.contains("cdn."), "no CDN in {page:?}");
    }
    let js = std::fs::read(dir.path().join("figures/plotly.min.js")).unwrap();
    assert_eq!(js, PLOTLY_JS);
}

/// 25 M accesses (a 2048 x 2048 int matrix traversed row-major 6 times):
/// both figures must be written in seconds. Ignored by default because it
/// needs about 2 GB of memory: `cargo test --release -- --ignored`.
#[test]
#[ignore]
fn twenty_five_million_accesses_take_seconds() {
    use polars::prelude::*;
    let n: usize = 25_000_000;
    let side: u64 = 2048;
    let elems = side * side;
    let acc = df!(
        "time" => (0..n as u64).collect::<Vec<u64>>(),
        "op" => (0..n).map(|k| if k % 3 == 0 { OP_STORE } else { OP_LOAD }).collect::<Vec<u8>>(),
        "addr" => (0..n as u64).map(|k| BASE + 4 * (k % elems)).collect::<Vec<u64>>(),
        "size" => vec![4u32; n],
        "tid" => vec![1u32; n],
        "var" => vec![0u32; n],
        "occurrence" => (0..n as u64).map(|k| (k / elems) as u32 + 1).collect::<Vec<u32>>(),
        "line" => vec![1u32; n],
    )
    .unwrap();
    let vars = vars_df(&[("m", BASE, elems * 4)]);
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(dir.path());
    o.save = false;
    let t = std::time::Instant::now();
    let r = complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    let t_complete = t.elapsed();
    assert!(r.points <= o.point_budget);
    let t = std::time::Instant::now();
    let r2 = draw_2d(&acc, &vars, VarId(0), side, 4, &o).unwrap();
    let t_array = t.elapsed();
    assert!(r2.points <= o.point_budget);
    o.save = true;
    let t = std::time::Instant::now();
    complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    let t_save = t.elapsed();
    let size = |p: &std::path::Path| std::fs::metadata(p).unwrap().len() / 1_000_000;
    eprintln!(
        "complete {t_complete:?} ({} points, {} MB), array_2d {t_array:?} ({} points, {} MB), complete with CSV {t_save:?}",
        r.points,
        size(&r.html),
        r2.points,
        size(&r2.html)
    );
    assert!(t_complete.as_secs() < 30 && t_array.as_secs() < 30);
}

/// The two replays of a row-wise fill of 4 x 5 ints (20 time steps, one
/// element each): the cumulative one holds elements 0..=t after step t, the
/// recent one exactly element t.
#[test]
fn replays_show_accesses_so_far_and_within_each_step() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    let acc = acc_df(&fill(BASE, &(0..20).collect::<Vec<_>>()));
    let vars = vars_df(&[("arr", BASE, 80)]);
    let r = draw_2d(&acc, &vars, VarId(0), 5, 4, &o).unwrap();
    let figs = figures(&r.html);
    let (cumulative, recent) = (&figs[5]["frames"], &figs[6]["frames"]);
    assert_eq!(cumulative.as_array().unwrap().len(), 20);
    assert_eq!(recent.as_array().unwrap().len(), 20);
    for t in 0..20usize {
        let so_far = grid(&cumulative[t]["data"][0]["z"]);
        let now = grid(&recent[t]["data"][0]["z"]);
        for e in 0..20usize {
            let (i, j) = (e / 5, e % 5);
            assert_eq!(
                so_far[i][j],
                (e <= t).then_some(1.0),
                "cumulative t{t} [{i}][{j}]"
            );
            assert_eq!(now[i][j], (e == t).then_some(1.0), "recent t{t} [{i}][{j}]");
        }
    }
}

/// Heatmaps read as an array: square cells, whole-number ticks and hover
/// values, and the element named as C writes it.
#[test]
fn heatmaps_have_square_cells_integer_ticks_and_element_hover() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    let acc = acc_df(&fill(BASE, &(0..20).collect::<Vec<_>>()));
    let vars = vars_df(&[("arr", BASE, 80)]);
    let r = draw_2d(&acc, &vars, VarId(0), 5, 4, &o).unwrap();
    let figs = figures(&r.html);
    for f in &figs[1..5] {
        assert_eq!(f["layout"]["yaxis"]["scaleanchor"], "x", "{}", f["layout"]);
        let hover = f["data"][0]["hovertemplate"].as_str().unwrap();
        assert!(hover.starts_with("arr[%{y}][%{x}]"), "{hover}");
    }
    let count = &figs[1]["data"][0];
    assert_eq!(count["colorbar"]["tickformat"], "d");
    assert_eq!(
        count["colorbar"]["dtick"], 1.0,
        "counts of at most 10 tick by 1"
    );
    let first = figs[2]["data"][0]["hovertemplate"].as_str().unwrap();
    assert!(first.contains("first access %{z:d}"), "{first}");
    let share = figs[4]["data"][0]["hovertemplate"].as_str().unwrap();
    assert!(share.contains("%{z:.2f}"), "{share}");
}

/// An element size that is not the variable's draws each access as the
/// wrong number of cells: it is warned about. The file is mapvisual's,
/// named by variable alone, and the warning says that it replaced the
/// figure of another shape.
#[test]
fn a_wrong_element_size_is_warned_and_replaces_the_figure_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    // 24 doubles, stored in order.
    let rows: Vec<Row> = (0..24u64)
        .map(|e| (e, OP_STORE, BASE + 8 * e, 8, 1, 0, 1, 1))
        .collect();
    let acc = acc_df(&rows);
    let vars = vars_df_full(&[("p", "H", BASE, 192, 8)]);
    let right = draw_2d(&acc, &vars, VarId(0), 4, 8, &o).unwrap();
    assert!(right.warnings.is_empty(), "{:?}", right.warnings);
    assert!(right
        .html
        .ends_with("figures/2d_memory_access_pattern_p.html"));
    assert_eq!(right.points, 24);
    let wrong = draw_2d(&acc, &vars, VarId(0), 16, 4, &o).unwrap();
    assert_eq!(
        wrong.points, 48,
        "each 8-byte access covers two 4-byte cells"
    );
    assert!(
        wrong.warnings.iter().any(
            |w| w.contains("holds 8-byte elements") && w.contains("each element spans 2 cells")
        ),
        "{:?}",
        wrong.warnings
    );
    assert!(
        wrong.warnings.iter().any(|w| w.contains(
            "2d_memory_access_pattern_p.html showed `6 x 4 array of 8-byte elements` (2d_memory_access_pattern p 4 8)"
        )),
        "{:?}",
        wrong.warnings
    );
    assert_eq!(wrong.html, right.html);
    // Drawn again with the same shape: nothing replaced, nothing said.
    let again = draw_2d(&acc, &vars, VarId(0), 16, 4, &o).unwrap();
    assert!(
        again.warnings.iter().all(|w| !w.contains("showed")),
        "{:?}",
        again.warnings
    );
}

/// Heap and stack variables lie far apart: the 2D view gives each memory
/// kind its own address panel, stacked by address (heap below stack), and
/// a variable's stores get a darker shade of its loads' colour.
#[test]
fn memory_kinds_get_their_own_address_panels() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    const STACK: u64 = 0x1ffefff000;
    let mut rows = loads(&[BASE, BASE + 4]);
    rows.push((2, OP_STORE, STACK, 4, 1, 1, 1, 1));
    rows.push((3, OP_LOAD, STACK, 4, 1, 1, 2, 1));
    let acc = acc_df(&rows);
    let vars = vars_df_full(&[("h", "H", BASE, 8, 4), ("s", "S", STACK, 4, 4)]);
    let r = complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    let figs = figures(&r.html);
    let layout = &figs[1]["layout"];
    assert_eq!(layout["yaxis"]["title"]["text"], "heap address");
    assert_eq!(layout["yaxis2"]["title"]["text"], "stack address");
    let (d1, d2) = (
        nums(&layout["yaxis"]["domain"]),
        nums(&layout["yaxis2"]["domain"]),
    );
    assert!(d1[1] < d2[0], "heap panel {d1:?} below stack panel {d2:?}");
    let mut seen = Vec::new();
    for t in figs[1]["data"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap().to_string();
        let axis = t["yaxis"].as_str().unwrap_or("y").to_string();
        let colour = t["marker"]["color"].as_str().unwrap().to_string();
        seen.push((name, axis, colour));
    }
    let find = |n: &str| seen.iter().find(|s| s.0 == n).cloned().unwrap();
    assert_eq!(find("h load").1, "y");
    assert_eq!(find("s load").1, "y2");
    assert_eq!(find("s store").1, "y2");
    assert_ne!(find("s load").2, find("s store").2);
    let last = seen.iter().position(|s| s.0 == "s store").unwrap();
    assert_eq!(
        last,
        seen.len() - 1,
        "stores are drawn over loads: {seen:?}"
    );
}

/// The folder's index links every figure with the command that draws it,
/// its shape and its trace, newest first, and lists a user's own page too.
#[test]
fn the_index_page_links_every_figure() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    std::fs::create_dir_all(&o.figures_dir).unwrap();
    std::fs::write(o.figures_dir.join("my_notes.html"), "<p>mine</p>").unwrap();
    let acc = acc_df(&fill(BASE, &(0..20).collect::<Vec<_>>()));
    let vars = vars_df(&[("arr", BASE, 80)]);
    complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    draw_2d(&acc, &vars, VarId(0), 5, 4, &o).unwrap();
    let index = std::fs::read_to_string(o.figures_dir.join("index.html")).unwrap();
    let pos = |s: &str| index.find(s).unwrap_or_else(|| panic!("{s} in {index}"));
    let a2 = pos("<a href=\"2d_memory_access_pattern_arr.html\">");
    let cp = pos("<a href=\"complete_memory_access_pattern.html\">");
    assert!(a2 < cp, "newest first");
    pos("<code>2d_memory_access_pattern arr 5 4</code>");
    pos("4 x 5 array of 4-byte elements");
    pos("<code>complete_memory_access_pattern</code>");
    pos("20 accesses of 1 variable");
    pos("t.mvt of ./prog");
    pos("<a href=\"my_notes.html\">my_notes.html</a></td><td>(not written by mapvis)");
    assert!(!index.contains("href=\"index.html\""));
}

/// A page mapvis did not write (unpacked with the folder, say) cannot put
/// markup or script into the index: its title, its `mapvis-…` meta tags
/// and its file name are shown as text, and its link names the file in
/// the folder even when the name looks like a `javascript:` address. Text
/// mapvis recorded itself still reads as it was written (not escaped
/// twice).
#[test]
fn the_index_page_escapes_what_it_takes_from_pages() {
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path());
    std::fs::create_dir_all(&o.figures_dir).unwrap();
    std::fs::write(
        o.figures_dir.join("foreign.html"),
        "<html><head><title><script>alert('title')</script></title>\
         <meta name=\"mapvis-command\" content=\"</code><img src=x onerror=alert(1)>\">\
         <meta name=\"mapvis-shape\" content=\"<b>bold</b>\">\
         <meta name=\"mapvis-trace\" content=\"<i>t</i> &amp; more\"></head></html>",
    )
    .unwrap();
    std::fs::write(o.figures_dir.join("javascript:alert(2).html"), "<p>x</p>").unwrap();
    let acc = acc_df(&fill(BASE, &(0..20).collect::<Vec<_>>()));
    let vars = vars_df(&[("arr", BASE, 80)]);
    complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    let index = std::fs::read_to_string(o.figures_dir.join("index.html")).unwrap();
    for raw in ["<script>", "<img", "<b>", "<i>", "href=\"javascript:"] {
        assert!(!index.contains(raw), "{raw} in {index}");
    }
    assert!(
        index.contains("&lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt;"),
        "{index}"
    );
    assert!(
        index.contains("<code>&lt;/code&gt;&lt;img src=x onerror=alert(1)&gt;</code>"),
        "{index}"
    );
    assert!(index.contains("&lt;i&gt;t&lt;/i&gt; &amp; more"), "{index}");
    assert!(!index.contains("&amp;amp;"), "escaped twice: {index}");
    assert!(
        index.contains("<a href=\"javascript%3Aalert(2).html\">javascript:alert(2).html</a>"),
        "{index}"
    );
    assert!(
        index.contains("<code>complete_memory_access_pattern</code>"),
        "{index}"
    );
}
