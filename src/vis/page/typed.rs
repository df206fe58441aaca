//! Numeric arrays of the figure JSON in plotly.js's typed-array form.
//!
//! plotly.js (2.28 and later; the pages ship 3.0.1) accepts a data array as
//! `{"dtype": "u4", "bdata": "<base64>"}`: the values' little-endian bytes.
//! A browser decodes that with one `atob` and a typed-array view, where
//! decimal text costs a number parse per value, and the page shrinks: an
//! address is 8 bytes (11 in base64) instead of 8 to 12 digits and a comma,
//! a small count 1 byte instead of 2 to 6. Every value keeps its exact
//! number: integers go into the narrowest unsigned type that holds them
//! all, anything else into `f8`.
//!
//! The string columns of hover data use the same form for their codes
//! (`CustomData` of the traces module); the pages expand them in the browser.

use base64::Engine;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

/// A numeric array serialized as a plotly.js typed-array spec
/// (`{"dtype", "bdata"}`, plus `"shape": "rows,cols"` for a grid).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Typed {
    dtype: &'static str,
    bytes: Vec<u8>,
    shape: Option<(usize, usize)>,
}

/// Largest integer every `f8` holds exactly (2^53).
const F8_EXACT: u64 = 1 << 53;

impl Typed {
    /// Unsigned integers, in the narrowest of `u1`, `u2` and `u4` that
    /// holds the largest; above `u32::MAX`, `f8` (exact up to 2^53, beyond
    /// any address or access count; larger values are rounded).
    pub(crate) fn uints(values: &[u64]) -> Typed {
        let max = values.iter().copied().max().unwrap_or(0);
        let mut t = Typed {
            dtype: int_dtype(max),
            bytes: Vec::new(),
            shape: None,
        };
        let width = t.width();
        t.bytes.reserve(values.len() * width);
        for &v in values {
            if width == 8 {
                t.bytes.extend_from_slice(&(v as f64).to_le_bytes());
            } else {
                t.bytes.extend_from_slice(&v.to_le_bytes()[..width]);
            }
        }
        t
    }

    /// Numbers: as [`Self::uints`] when every one is a whole number in
    /// `0..2^53` (positions and sizes often are), else `f8`.
    pub(crate) fn floats(values: &[f64]) -> Typed {
        let whole = values
            .iter()
            .all(|&v| v >= 0.0 && v.fract() == 0.0 && v < F8_EXACT as f64);
        if whole {
            let ints: Vec<u64> = values.iter().map(|&v| v as u64).collect();
            return Typed::uints(&ints);
        }
        Typed::f8(values.iter().copied())
    }

    /// A `rows x cols` grid, row-major, with a shape (a heatmap's `z`);
    /// `None` is NaN, which plotly.js leaves blank as it does `null`. The
    /// cells are `f4` when every one is exactly a 32-bit float (counts and
    /// times below 2^24, halves), which halves the page's heatmaps, else
    /// `f8`: a value is never rounded.
    pub(crate) fn grid(
        rows: usize,
        cols: usize,
        cells: impl Iterator<Item = Option<f64>>,
    ) -> Typed {
        let values: Vec<f64> = cells.map(|c| c.unwrap_or(f64::NAN)).collect();
        debug_assert_eq!(values.len(), rows * cols);
        let exact_f4 = values
            .iter()
            .all(|&v| v.is_nan() || f64::from(v as f32) == v);
        let mut t = if exact_f4 {
            let mut bytes = Vec::with_capacity(values.len() * 4);
            for &v in &values {
                bytes.extend_from_slice(&(v as f32).to_le_bytes());
            }
            Typed {
                dtype: "f4",
                bytes,
                shape: None,
            }
        } else {
            Typed::f8(values.into_iter())
        };
        t.shape = Some((rows, cols));
        t
    }

    fn f8(values: impl Iterator<Item = f64>) -> Typed {
        let mut bytes = Vec::with_capacity(values.size_hint().0 * 8);
        for v in values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        Typed {
            dtype: "f8",
            bytes,
            shape: None,
        }
    }

    /// Bytes per value.
    fn width(&self) -> usize {
        match self.dtype {
            "u1" => 1,
            "u2" => 2,
            "u4" => 4,
            _ => 8,
        }
    }
}

/// The narrowest unsigned plotly dtype holding `max`, or `f8`.
fn int_dtype(max: u64) -> &'static str {
    if max <= u8::MAX as u64 {
        "u1"
    } else if max <= u16::MAX as u64 {
        "u2"
    } else if max <= u32::MAX as u64 {
        "u4"
    } else {
        "f8"
    }
}

impl Serialize for Typed {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(if self.shape.is_some() { 3 } else { 2 }))?;
        m.serialize_entry("dtype", self.dtype)?;
        m.serialize_entry(
            "bdata",
            &base64::engine::general_purpose::STANDARD.encode(&self.bytes),
        )?;
        if let Some((r, c)) = self.shape {
            m.serialize_entry("shape", &format!("{r},{c}"))?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(t: &Typed) -> serde_json::Value {
        serde_json::to_value(t).unwrap()
    }

    #[test]
    fn integers_take_the_narrowest_type_that_holds_them() {
        let t = Typed::uints(&[1, 2, 255]);
        assert_eq!(
            json(&t),
            serde_json::json!({"dtype": "u1", "bdata": "AQL/"})
        );
        assert_eq!(json(&Typed::uints(&[256]))["dtype"], "u2");
        assert_eq!(json(&Typed::uints(&[70_000]))["dtype"], "u4");
        let addr = 0x1fff000100u64;
        let t = Typed::uints(&[addr]);
        assert_eq!(json(&t)["dtype"], "f8");
        assert_eq!(t.bytes, (addr as f64).to_le_bytes());
    }

    #[test]
    fn floats_stay_exact() {
        assert_eq!(json(&Typed::floats(&[3.0, 15.0]))["dtype"], "u1");
        let t = Typed::floats(&[0.5, 2.0]);
        assert_eq!(json(&t)["dtype"], "f8");
        assert_eq!(&t.bytes[..8], 0.5f64.to_le_bytes());
        assert_eq!(json(&Typed::floats(&[-1.0]))["dtype"], "f8");
    }

    #[test]
    fn grids_have_a_shape_and_nan_for_blank_cells() {
        let t = Typed::grid(
            2,
            3,
            [Some(1.0), None, Some(2.5), None, None, Some(0.0)].into_iter(),
        );
        let v = json(&t);
        assert_eq!(v["shape"], "2,3");
        assert_eq!(v["dtype"], "f4");
        assert!(f32::from_le_bytes(t.bytes[4..8].try_into().unwrap()).is_nan());
        assert_eq!(f32::from_le_bytes(t.bytes[8..12].try_into().unwrap()), 2.5);
    }

    /// A grid is `f4` only when no cell would be rounded.
    #[test]
    fn grids_keep_every_value_exact() {
        let big = (1u64 << 24) + 1;
        for cells in [[Some(1.0 / 3.0), None], [Some(big as f64), Some(1.0)]] {
            let t = Typed::grid(1, 2, cells.into_iter());
            assert_eq!(json(&t)["dtype"], "f8");
            assert_eq!(
                f64::from_le_bytes(t.bytes[..8].try_into().unwrap()),
                cells[0].unwrap()
            );
        }
        let t = Typed::grid(1, 2, [Some((1u64 << 24) as f64), Some(0.25)].into_iter());
        assert_eq!(json(&t)["dtype"], "f4");
    }
}
