//! Shared helpers of the figure tests: synthetic schema tables and a reader
//! for the figure JSON embedded in the written pages.
#![allow(dead_code)]

use std::path::Path;

use mapvis::filter::schema::{OP_LOAD, OP_STORE};
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
        annotations: Default::default(),
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
        out.push(serde_json::from_str(&body[start..end]).unwrap());
        rest = &body[end..];
    }
    out
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
    var: u32,
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
