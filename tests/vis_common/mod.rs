//! Shared helpers of the figure tests: synthetic schema tables and a reader
//! for the figure JSON embedded in the written pages.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mapvis::filter::schema::{OP_LOAD, OP_STORE};
use mapvis::filter::{Analysis, Keep, Selection, VarId};
use mapvis::trace::naming::ProgramNamer;
use mapvis::vis::{Array2d, FigureOptions, FigureReport, VisError};
use polars::prelude::*;
use serde_json::Value;

/// One access row: (time, op, addr, size, tid, var, occurrence, line).
pub type Row = (u64, u8, u64, u32, u32, u32, u32, u32);

pub fn acc_df(rows: &[Row]) -> DataFrame {
    df!(
        "time" => rows.iter().map(|r| r.0).collect::<Vec<u64>>(),
        "op" => rows.iter().map(|r| r.1).collect::<Vec<u8>>(),
        "addr" => rows.iter().map(|r| r.2).collect::<Vec<u64>>(),
        "size" => rows.iter().map(|r| r.3).collect::<Vec<u32>>(),
        "tid" => rows.iter().map(|r| r.4).collect::<Vec<u32>>(),
        "var" => rows.iter().map(|r| r.5).collect::<Vec<u32>>(),
        "occurrence" => rows.iter().map(|r| r.6).collect::<Vec<u32>>(),
        "line" => rows.iter().map(|r| r.7).collect::<Vec<u32>>(),
    )
    .unwrap()
}

/// Variables: (name, base, size).
pub fn vars_df(vars: &[(&str, u64, u64)]) -> DataFrame {
    df!(
        "var" => (0..vars.len() as u32).collect::<Vec<u32>>(),
        "name" => vars.iter().map(|v| v.0).collect::<Vec<&str>>(),
        "scope" => vars.iter().map(|_| "H").collect::<Vec<&str>>(),
        "base" => vars.iter().map(|v| v.1).collect::<Vec<u64>>(),
        "size" => vars.iter().map(|v| v.2).collect::<Vec<u64>>(),
        "elem_size" => vars.iter().map(|_| 4u32).collect::<Vec<u32>>(),
        "dims" => vars.iter().map(|_| "").collect::<Vec<&str>>(),
    )
    .unwrap()
}

/// Variables with their scope and element size: (name, scope, base, size,
/// elem_size).
pub fn vars_df_full(vars: &[(&str, &str, u64, u64, u32)]) -> DataFrame {
    df!(
        "var" => (0..vars.len() as u32).collect::<Vec<u32>>(),
        "name" => vars.iter().map(|v| v.0).collect::<Vec<&str>>(),
        "scope" => vars.iter().map(|v| v.1).collect::<Vec<&str>>(),
        "base" => vars.iter().map(|v| v.2).collect::<Vec<u64>>(),
        "size" => vars.iter().map(|v| v.3).collect::<Vec<u64>>(),
        "elem_size" => vars.iter().map(|v| v.4).collect::<Vec<u32>>(),
        "dims" => vars.iter().map(|_| "").collect::<Vec<&str>>(),
    )
    .unwrap()
}

pub fn lines_df() -> DataFrame {
    df!(
        "line" => [0u32, 1, 2],
        "source" => ["?", "prog.c:10", "prog.c:11"],
    )
    .unwrap()
}

/// Stores to consecutive 4-byte elements of var 0 in the given element order.
pub fn fill(base: u64, order: &[u64]) -> Vec<Row> {
    order
        .iter()
        .enumerate()
        .map(|(t, &e)| (t as u64, OP_STORE, base + 4 * e, 4, 1, 0, 1, 1))
        .collect()
}

/// Loads of var 0 at the given addresses, one per time step.
pub fn loads(addrs: &[u64]) -> Vec<Row> {
    addrs
        .iter()
        .enumerate()
        .map(|(t, &a)| (t as u64, OP_LOAD, a, 4, 1, 0, 1, 2))
        .collect()
}

pub fn options(dir: &Path) -> FigureOptions {
    FigureOptions {
        figures_dir: dir.join("figures"),
        visinfo_dir: dir.join("visinfo"),
        save: true,
        point_budget: 200_000,
        matrix_orientation: false,
        provenance: "t.mvt of ./prog".into(),
        analysis_id: String::new(),
        annotations: Default::default(),
        file_name: None,
        gaps: Vec::new(),
    }
}

/// The figure objects embedded in a page, in page order.
pub fn figures(html: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(html).unwrap();
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(p) = rest.find("<script type=\"application/json\"") {
        let body = &rest[p..];
        let start = body.find('>').unwrap() + 1;
        let end = body.find("</script>").unwrap();
        let mut fig: Value = serde_json::from_str(&body[start..end]).unwrap();
        decode_arrays(&mut fig);
        out.push(fig);
        rest = &body[end..];
    }
    out
}

/// Turns the compact encodings of a figure back into the plain JSON
/// plotly's documentation shows, as the page's script does before
/// drawing: typed arrays (`{"dtype", "bdata", "shape"?}`) into arrays of
/// numbers (whole numbers as integers, NaN as null, a shape into rows),
/// and customdata stored by column (`{"columns": [...]}`) into one row per
/// point, with the names of string columns looked up.
pub fn decode_arrays(v: &mut Value) {
    match v {
        Value::Array(a) => a.iter_mut().for_each(decode_arrays),
        Value::Object(m) => {
            if let Some(decoded) = typed_array(m) {
                *v = decoded;
                return;
            }
            m.values_mut().for_each(decode_arrays);
            if let Some(cols) = m.get("customdata").and_then(|c| c.get("columns")) {
                let rows = customdata_rows(cols.as_array().expect("columns"));
                m.insert("customdata".into(), rows);
            }
        }
        _ => {}
    }
}

/// The numbers of a plotly.js typed-array spec, or `None` for any other
/// object.
fn typed_array(m: &serde_json::Map<String, Value>) -> Option<Value> {
    use base64::Engine;
    // A customdata column whose numbers are all the same.
    if let (Some(v), Some(n), 2) = (m.get("same"), m.get("n"), m.len()) {
        return Some(Value::Array(vec![v.clone(); n.as_u64()? as usize]));
    }
    let dtype = m.get("dtype")?.as_str()?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(m.get("bdata")?.as_str()?)
        .expect("bdata is base64");
    let width = match dtype {
        "u1" | "i1" => 1,
        "u2" | "i2" => 2,
        "u4" | "i4" | "f4" => 4,
        "f8" => 8,
        other => panic!("unknown dtype {other}"),
    };
    assert_eq!(
        bytes.len() % width,
        0,
        "{dtype} data of {} bytes",
        bytes.len()
    );
    let nums: Vec<Value> = bytes
        .chunks(width)
        .map(|b| {
            let mut w = [0u8; 8];
            w[..width].copy_from_slice(b);
            let x = match dtype {
                "f8" => f64::from_le_bytes(w),
                "f4" => f32::from_le_bytes(b.try_into().unwrap()) as f64,
                "i1" => b[0] as i8 as f64,
                "i2" => i16::from_le_bytes(b.try_into().unwrap()) as f64,
                "i4" => i32::from_le_bytes(b.try_into().unwrap()) as f64,
                _ => u64::from_le_bytes(w) as f64,
            };
            if x.is_nan() {
                Value::Null
            } else if x.fract() == 0.0 && x.abs() < (1u64 << 53) as f64 {
                Value::from(x as i64)
            } else {
                Value::from(x)
            }
        })
        .collect();
    Some(match m.get("shape").and_then(|s| s.as_str()) {
        Some(shape) => {
            let (r, c) = shape.split_once(',').expect("shape rows,cols");
            let (r, c): (usize, usize) = (r.parse().unwrap(), c.parse().unwrap());
            assert_eq!(nums.len(), r * c, "shape {shape}");
            Value::Array(
                nums.chunks(c.max(1))
                    .map(|row| Value::Array(row.to_vec()))
                    .collect(),
            )
        }
        None => Value::Array(nums),
    })
}

/// One row per point from decoded customdata columns: arrays of numbers,
/// `{"codes", "names"}` for strings, or `{"plus": k, "by": numbers}` for
/// numbers added to those of column `k`.
fn customdata_rows(cols: &[Value]) -> Value {
    let column = |c: &Value| -> Vec<Value> {
        if let (Some(k), Some(by)) = (c.get("plus"), c.get("by")) {
            let base = cols[k.as_u64().unwrap() as usize]
                .as_array()
                .expect("numbers");
            return base
                .iter()
                .zip(by.as_array().expect("numbers"))
                .map(|(a, b)| Value::from(a.as_u64().unwrap() + b.as_u64().unwrap()))
                .collect();
        }
        match c.get("names") {
            Some(names) => c["codes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| names[k.as_u64().unwrap() as usize].clone())
                .collect(),
            None => c.as_array().expect("a numeric column").clone(),
        }
    };
    let cols: Vec<Vec<Value>> = cols.iter().map(column).collect();
    let n = cols.first().map_or(0, Vec::len);
    assert!(
        cols.iter().all(|c| c.len() == n),
        "columns of unequal length"
    );
    Value::Array(
        (0..n)
            .map(|i| Value::Array(cols.iter().map(|c| c[i].clone()).collect()))
            .collect(),
    )
}

/// A numeric array of a JSON value as f64.
pub fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_f64().unwrap_or(f64::NAN))
        .collect()
}

/// A heatmap `z` as rows of optional numbers.
pub fn grid(z: &Value) -> Vec<Vec<Option<f64>>> {
    z.as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|x| x.as_f64()).collect())
        .collect()
}

/// `array_2d` of variable row `var` as `cols` columns of `type_bytes`-byte
/// elements, with the line table of [`lines_df`].
pub fn draw_2d(
    acc: &DataFrame,
    vars: &DataFrame,
    var: VarId,
    cols: u64,
    type_bytes: u64,
    o: &FigureOptions,
) -> Result<FigureReport, VisError> {
    let lines = lines_df();
    let a = Array2d {
        acc,
        vars,
        lines: &lines,
        var,
        cols,
        type_bytes,
    };
    mapvis::vis::array_2d(a, o)
}

/// The complete pattern of one 4-byte scalar `s` at 0x1000, loaded at
/// times 0 to 31 and stored at 32 to 63, drawn with a point budget of 8 so
/// that it is aggregated (groups of 8 accesses): the raster view's tests
/// work their expectations out from it.
pub fn aggregated_scalar(dir: &Path) -> FigureReport {
    let mut o = options(dir);
    o.point_budget = 8;
    let rows: Vec<_> = (0..64u64)
        .map(|t| {
            let op = if t < 32 { OP_LOAD } else { OP_STORE };
            (t, op, 0x1000, 4, 1, 0, t as u32 + 1, 1)
        })
        .collect();
    let acc = acc_df(&rows);
    let vars = vars_df(&[("s", 0x1000, 4)]);
    let r = mapvis::vis::complete_memory_access_pattern(&acc, &vars, &lines_df(), &o).unwrap();
    assert!(r.aggregated.is_some());
    r
}

/// Runs Chromium on `page` (with `fragment` appended to its address) and
/// `extra` arguments, under a virtual time budget of `budget_ms`; kills it
/// after 120 s. Returns its standard output.
pub fn chromium(
    bin: &Path,
    page: &Path,
    fragment: &str,
    extra: &[String],
    budget_ms: u32,
) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        // Software WebGL for the 3D and WebGL scatters.
        "--use-angle=swiftshader",
        "--enable-unsafe-swiftshader",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("--virtual-time-budget={budget_ms}"));
    args.push(format!("--user-data-dir={}", profile.path().display()));
    args.extend_from_slice(extra);
    args.push(format!("file://{}{fragment}", page.display()));
    // stdout goes to a file: a pipe nobody reads would block a large DOM dump.
    let out_path = profile.path().join("stdout.html");
    let out_file = std::fs::File::create(&out_path).unwrap();
    let mut child = Command::new(bin)
        .args(&args)
        .stdout(Stdio::from(out_file))
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().ok();
            child.wait().ok();
            panic!("chromium did not finish within 120 s on {page:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    String::from_utf8_lossy(&std::fs::read(&out_path).unwrap()).into_owned()
}

/// The analysis of the trace `dir/t.mvt` of `exe` (a program of
/// `tests/c/`), kept as `keep` says.
pub fn analyse_trace(dir: &Path, exe: &Path, keep: &Keep) -> Analysis {
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    let mut namer = ProgramNamer::new(Some(exe), &[sources]);
    mapvis::filter::analyse_into(&dir.join("t.mvt"), &mut namer, &mut |_| {}, keep)
        .expect("analysis")
}

/// The selection of the variable named `name` alone, and its row.
pub fn only_var(a: &Analysis, name: &str) -> (VarId, Selection) {
    let var = VarId(a.vars.iter().position(|v| v.name == name).expect(name) as u32);
    let keep = (0..a.vars.len()).map(|v| v == var.index()).collect();
    (var, Selection::of(a, keep).unwrap())
}

/// Highest of customdata column `k` over the points of trace `t`.
pub fn cd_max(t: &Value, k: usize) -> u64 {
    let c = t["customdata"].as_array().unwrap();
    c.iter().map(|c| c[k].as_u64().unwrap()).max().unwrap()
}
