//! What the `plotly` crate cannot express compactly: data arrays in
//! plotly.js's typed-array form, column-stored `customdata` and a marker
//! whose colour/size arrays are plain numbers.
//!
//! The crate serializes every data array as decimal text, boxes every
//! value of `Marker::color_array` (`Box<dyn Color>`) and has only a
//! one-dimensional `custom_data`; at 10^5-10^7 points all three matter
//! (a 200 000-point view was 20 MB of text that took a browser tens of
//! seconds to parse and draw). The [`Ext`] wrapper flattens a crate trace
//! built without data and adds the data next to it as [`Typed`] arrays,
//! so traces stay crate types and the data is serialized straight from
//! vectors.

use std::sync::Arc;

use plotly::common::{ColorBar, ColorScale, ColorScaleElement, MarkerSymbol};
use plotly::Trace;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;

pub(crate) use super::typed::Typed;
use crate::vis::input::classes::ramp;

/// Stops of the class colour ramp (green, light green, yellow, orange,
/// red): the colour scale of mixed points takes them all.
const RAMP_STOPS: usize = 5;

/// A crate trace plus its data arrays, `customdata` and a numeric marker.
#[derive(Serialize, Clone)]
pub(crate) struct Ext<T: Serialize + Clone> {
    #[serde(flatten)]
    pub(crate) inner: T,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) x: Option<Typed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) y: Option<Typed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) z: Option<Typed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) customdata: Option<CustomData>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) marker: Option<PointMarker>,
}

impl<T: Serialize + Clone + 'static> Trace for Ext<T> {
    fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl<T: Serialize + Clone + 'static> Ext<T> {
    /// `inner` must carry no `x`, `y`, `z`, `customdata` or `marker` of
    /// its own when these are set here (build it with `default()`).
    pub(crate) fn new(inner: T) -> Self {
        Ext {
            inner,
            x: None,
            y: None,
            z: None,
            customdata: None,
            marker: None,
        }
    }
    /// The trace's `x` and `y`.
    pub(crate) fn xy(mut self, x: Typed, y: Typed) -> Self {
        self.x = Some(x);
        self.y = Some(y);
        self
    }
    /// The trace's `x`, `y` and `z`.
    pub(crate) fn xyz(self, x: Typed, y: Typed, z: Typed) -> Self {
        let mut e = self.xy(x, y);
        e.z = Some(z);
        e
    }
    /// The trace's `z` alone: a heatmap's cells.
    pub(crate) fn cells(mut self, z: Typed) -> Self {
        self.z = Some(z);
        self
    }
    pub(crate) fn custom(mut self, c: CustomData) -> Self {
        self.customdata = Some(c);
        self
    }
    pub(crate) fn marker(mut self, m: PointMarker) -> Self {
        self.marker = Some(m);
        self
    }
    pub(crate) fn boxed(self) -> Box<dyn Trace> {
        Box::new(self)
    }
}

/// One column of customdata.
#[derive(Clone)]
pub(crate) enum CdCol {
    U64(Vec<u64>),
    /// Indices into a shared string table (variable names, source lines).
    Str(Vec<u32>, Arc<Vec<String>>),
    /// Indices into a static string table (operation names).
    Static(Vec<u8>, &'static [&'static str]),
    /// Numbers given as what they add to the numbers of the column at
    /// this position (the last time of a group after its first): mostly
    /// small, so a byte or none ([`SameOr`]) a value where the sum takes
    /// four.
    Plus(usize, Vec<u64>),
}

/// Customdata stored by column: one value per point in each.
#[derive(Clone, Default)]
pub(crate) struct CustomData {
    pub(crate) cols: Vec<CdCol>,
}

/// The customdata fields of one kind of figure point, declared once with
/// [`customdata_fields!`]: a field's position in a point's customdata row
/// is its position in the declaration. The rows are built from the
/// declaration ([`CustomData::of`]) and hover templates name the fields
/// ([`CdField::at`]), so a template cannot point at the wrong column.
pub(crate) trait CdField: Copy + 'static {
    /// Every field, in row order.
    const ALL: &'static [Self];
    /// The field's position in a point's customdata row.
    fn index(self) -> usize;
    /// `%{customdata[N]}`: the field's value in a hover template.
    fn at(self) -> String {
        format!("%{{customdata[{}]}}", self.index())
    }
    /// `%{customdata[N]:x}`: the field's value in hexadecimal.
    fn hex(self) -> String {
        format!("%{{customdata[{}]:x}}", self.index())
    }
}

/// The customdata fields every kind of aggregated group has, whatever it
/// groups (accesses of the complete figure, element accesses of an array
/// figure), so that both hovers come from one template ([`group_hover`]).
pub(crate) trait GroupFields: CdField {
    /// What the group counts, after its count: `accesses`.
    const WHAT: &'static str;
    /// The count of the group.
    const COUNT: Self;
    /// Its first time.
    const TIME_MIN: Self;
    /// Its last time.
    const TIME_MAX: Self;
    /// Its loads.
    const LOADS: Self;
    /// Its stores.
    const STORES: Self;
    /// Its modifies.
    const MODIFIES: Self;
    /// Its lowest occurrence.
    const OCC_MIN: Self;
    /// Its highest occurrence.
    const OCC_MAX: Self;
    /// The thread of its earliest access.
    const THREAD: Self;
    /// The source line of its earliest access.
    const SOURCE: Self;
    /// The pattern label of its earliest access.
    const PATTERN: Self;
}

/// Hover of one aggregated group of fields `F`: its count, times, `place`
/// (where the group lies, in the figure's own terms, as hover text with
/// its own placeholders), operations, occurrences, and the thread, source
/// and pattern of its earliest access.
pub(crate) fn group_hover<F: GroupFields>(place: &str) -> String {
    format!(
        "<b>{count} {what}</b><br>order (time) {t0} to {t1}<br>{place}<br>loads {ld}, stores {st}, modifies {md}<br>occurrence {o0} to {o1}<br>first: thread {tid}, source {src}<br>pattern {pat}",
        count = F::COUNT.at(),
        what = F::WHAT,
        t0 = F::TIME_MIN.at(),
        t1 = F::TIME_MAX.at(),
        ld = F::LOADS.at(),
        st = F::STORES.at(),
        md = F::MODIFIES.at(),
        o0 = F::OCC_MIN.at(),
        o1 = F::OCC_MAX.at(),
        tid = F::THREAD.at(),
        src = F::SOURCE.at(),
        pat = F::PATTERN.at(),
    )
}

/// Implements [`GroupFields`] for a [`customdata_fields!`] enum whose
/// common fields carry the usual names (`Count`, `TimeMin`, ...).
macro_rules! group_fields {
    ($name:ident, $what:literal) => {
        impl $crate::vis::page::traces::GroupFields for $name {
            const WHAT: &'static str = $what;
            const COUNT: Self = $name::Count;
            const TIME_MIN: Self = $name::TimeMin;
            const TIME_MAX: Self = $name::TimeMax;
            const LOADS: Self = $name::Loads;
            const STORES: Self = $name::Stores;
            const MODIFIES: Self = $name::Modifies;
            const OCC_MIN: Self = $name::OccMin;
            const OCC_MAX: Self = $name::OccMax;
            const THREAD: Self = $name::Thread;
            const SOURCE: Self = $name::Source;
            const PATTERN: Self = $name::Pattern;
        }
    };
}
pub(crate) use group_fields;

/// Declares an enum of customdata fields in row order and implements
/// [`CdField`] for it; each variant's discriminant is its row position.
macro_rules! customdata_fields {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident,)+ }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum $name {
            $($(#[$fdoc])* $field,)+
        }
        impl $crate::vis::page::traces::CdField for $name {
            const ALL: &'static [Self] = &[$($name::$field,)+];
            fn index(self) -> usize {
                self as usize
            }
        }
    };
}
pub(crate) use customdata_fields;

impl CustomData {
    /// The customdata of every field of `F`, in row order; `col` makes the
    /// column of one field (one value per point).
    pub(crate) fn of<F: CdField>(col: impl FnMut(F) -> CdCol) -> CustomData {
        CustomData {
            cols: F::ALL.iter().copied().map(col).collect(),
        }
    }

    /// As [`Self::of`] for the fields of `F` up to and including `last`:
    /// for points that lack the fields after it (a 2D element has no depth).
    pub(crate) fn through<F: CdField>(last: F, col: impl FnMut(F) -> CdCol) -> CustomData {
        CustomData {
            cols: F::ALL[..=last.index()].iter().copied().map(col).collect(),
        }
    }
}

/// A string column as codes into the names it uses, each once, in order
/// of first use: `{"codes": <typed>, "names": [...]}`.
struct Coded<'a> {
    codes: Vec<u64>,
    names: Vec<&'a str>,
}

impl<'a> Coded<'a> {
    fn new(codes: impl Iterator<Item = usize>, table: &'a [impl AsRef<str>]) -> Coded<'a> {
        // New code of each table entry, assigned at its first use.
        let mut new_code: Vec<Option<u64>> = vec![None; table.len() + 1];
        let mut names = Vec::new();
        let codes = codes
            .map(|c| {
                let c = c.min(table.len());
                *new_code[c].get_or_insert_with(|| {
                    names.push(table.get(c).map_or("?", |s| s.as_ref()));
                    names.len() as u64 - 1
                })
            })
            .collect();
        Coded { codes, names }
    }
}

impl Serialize for Coded<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("codes", &SameOr(&self.codes))?;
        m.serialize_entry("names", &self.names)?;
        m.end()
    }
}

/// Numbers of one column: `{"same": v, "n": len}` when there are two or
/// more and all are `v` (the variable of a trace of one variable, the
/// thread of a one-thread program), else a typed array.
struct SameOr<'a>(&'a [u64]);

impl Serialize for SameOr<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            [first, rest @ ..] if !rest.is_empty() && rest.iter().all(|v| v == first) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("same", first)?;
                m.serialize_entry("n", &self.0.len())?;
                m.end()
            }
            v => Typed::uints(v).serialize(s),
        }
    }
}

/// One column of the serialized customdata.
struct Column<'a>(&'a CdCol);

impl Serialize for Column<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            CdCol::U64(v) => SameOr(v).serialize(s),
            CdCol::Str(v, t) => Coded::new(v.iter().map(|&c| c as usize), t).serialize(s),
            CdCol::Static(v, t) => Coded::new(v.iter().map(|&c| c as usize), t).serialize(s),
            CdCol::Plus(base, v) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("plus", base)?;
                m.serialize_entry("by", &SameOr(v))?;
                m.end()
            }
        }
    }
}

/// Serialized by columns, `{"columns": [...]}`: numbers as typed arrays
/// (or one number when all are the same, see [`SameOr`]), strings as codes
/// into the names the column uses, [`CdCol::Plus`] columns as
/// `{"plus": position, "by": numbers}`. The page's script
/// (`RENDER_JS` of the html module) expands it into plotly's rows
/// (`[[c0, c1, ...], ...]`, one per point) before drawing. Column by
/// column, a page carries a few bytes per value and each name once,
/// where rows of JSON repeated every variable name and source line at
/// every point.
impl Serialize for CustomData {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Columns<'a>(&'a [CdCol]);
        impl Serialize for Columns<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(Some(self.0.len()))?;
                for c in self.0 {
                    seq.serialize_element(&Column(c))?;
                }
                seq.end()
            }
        }
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry("columns", &Columns(&self.cols))?;
        m.end()
    }
}

/// Marker with per-point numeric colour and size arrays.
#[derive(Serialize, Clone, Default)]
pub(crate) struct PointMarker {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) color: Option<PointColor>,
    #[serde(skip_serializing_if = "Option::is_none", rename = "colorscale")]
    pub(crate) color_scale: Option<ColorScale>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cmin: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cmax: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none", rename = "showscale")]
    pub(crate) show_scale: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none", rename = "colorbar")]
    pub(crate) color_bar: Option<ColorBar>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) symbol: Option<MarkerSymbol>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) size: Option<OneOrMany>,
    #[serde(skip_serializing_if = "Option::is_none", rename = "sizemode")]
    pub(crate) size_mode: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) opacity: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) line: Option<OutlineWidth>,
}

impl PointMarker {
    /// Markers of one colour (a class's or a variable's) of `size`
    /// pixels, in plotly's default style.
    pub(crate) fn plain(colour: String, size: OneOrMany) -> PointMarker {
        PointMarker {
            color: Some(PointColor::One(colour)),
            size: Some(size),
            ..Default::default()
        }
    }

    /// As [`Self::plain`], opaque.
    pub(crate) fn opaque(colour: String, size: OneOrMany) -> PointMarker {
        PointMarker {
            opacity: Some(SOLID_OPACITY),
            ..PointMarker::plain(colour, size)
        }
    }

    /// As [`Self::opaque`], without an outline: aggregated points (see
    /// [`SOLID_OPACITY`]).
    pub(crate) fn solid(colour: String, size: OneOrMany) -> PointMarker {
        PointMarker {
            line: Some(OutlineWidth { width: 0.0 }),
            ..PointMarker::opaque(colour, size)
        }
    }

    /// The same marker drawn as `symbol`.
    pub(crate) fn symbol(mut self, symbol: MarkerSymbol) -> PointMarker {
        self.symbol = Some(symbol);
        self
    }
}

/// A marker colour: one for all points, or a number per point on the
/// colour scale.
#[derive(Serialize, Clone)]
#[serde(untagged)]
pub(crate) enum PointColor {
    One(String),
    Many(Typed),
}

/// A marker outline of the given width (`marker.line.width`).
#[derive(Serialize, Clone, Copy)]
pub(crate) struct OutlineWidth {
    pub(crate) width: f64,
}

/// Markers are drawn opaque and without an outline. plotly.js draws markers
/// with a size array as "bubbles": 0.7 opacity and a white outline, which
/// wash a dense pattern of aggregated points out to a blank plot. Solid
/// points keep an aggregated figure as readable as the raw one.
pub(crate) const SOLID_OPACITY: f64 = 1.0;

/// A number shared by all points, or one per point.
#[derive(Serialize, Clone)]
#[serde(untagged)]
pub(crate) enum OneOrMany {
    One(f64),
    Many(Typed),
}

impl OneOrMany {
    /// One number per point.
    pub(crate) fn many(values: &[f64]) -> OneOrMany {
        OneOrMany::Many(Typed::floats(values))
    }
}

/// The marker symbol of the 3D views: squares. plotly.js draws each 3D
/// marker as a glyph of triangles, and a square has two where a circle has
/// dozens: 50 000 squares draw in 60% of the time of as many circles in
/// Chromium without a GPU, and at 3 to 15 pixels they read as dots.
pub(crate) fn symbol_3d() -> MarkerSymbol {
    MarkerSymbol::Square
}

/// Marker of a 3D view coloured by access time with the "sooner"/"later"
/// colour bar of the original tool.
pub(crate) fn time_marker(color: &[f64], t_lo: u64, t_hi: u64, size: OneOrMany) -> PointMarker {
    let hi = if t_hi > t_lo { t_hi } else { t_lo + 1 };
    PointMarker {
        color: Some(PointColor::Many(Typed::floats(color))),
        color_scale: Some(ColorScale::Palette(
            plotly::common::ColorScalePalette::Viridis,
        )),
        cmin: Some(t_lo as f64),
        cmax: Some(hi as f64),
        show_scale: Some(true),
        color_bar: Some(
            ColorBar::new()
                .title("time (access order)")
                .tick_vals(vec![t_lo as f64, hi as f64])
                .tick_text(vec!["sooner", "later"]),
        ),
        size: Some(size),
        size_mode: None,
        opacity: Some(SOLID_OPACITY),
        line: Some(OutlineWidth { width: 0.0 }),
        symbol: Some(symbol_3d()),
    }
}

/// Title of the colour bar of aggregated points coloured by their mix of
/// colour classes (see [`mix_marker`]).
pub(crate) const MIX_TITLE: &str = "mean class of the point's accesses";

/// The page's sentence on aggregated points coloured by class: what their
/// colour means.
pub(crate) const MIX_NOTE: &str = "An aggregated point stands for accesses of several classes, so it is coloured by their mix rather than by one class: by the mean class of its accesses along the colour bar, from 0 (all of the first class, green) to 1 (all of the last, red); with one cache level this is the point's miss ratio. Hover gives the count of each class.";

/// The value a group of accesses with `counts` accesses in each of the
/// classes (best first) takes on the colour bar of [`mix_marker`]: the
/// mean of its accesses' class positions, class `k` of `n` at
/// `k / (n - 1)`. With two classes (hit or miss) it is the share of
/// misses; one class alone gives that class's own colour, as an exact
/// point of it has.
pub(crate) fn mix_value(counts: &[u64]) -> f64 {
    let n = counts.len();
    let total: u64 = counts.iter().sum();
    if n < 2 || total == 0 {
        return 0.0;
    }
    let weighted: f64 = counts
        .iter()
        .enumerate()
        .map(|(k, &c)| k as f64 * c as f64)
        .sum();
    weighted / total as f64 / (n - 1) as f64
}

/// Marker of aggregated points coloured by their mix of colour classes:
/// `values` from [`mix_value`] on the green, yellow, red ramp the classes'
/// own colours are taken from (class `k` of `n` has the ramp's colour at
/// `k / (n - 1)`), so that a point of one class has the colour of its
/// exact points, and a mix lies between. The colour bar, shown when
/// `scale`, names each of the `labels` at its position.
pub(crate) fn mix_marker(
    values: &[f64],
    labels: &[String],
    size: OneOrMany,
    scale: bool,
) -> PointMarker {
    let n = labels.len().max(2);
    let at = |k: usize| k as f64 / (n - 1) as f64;
    let stops = (0..RAMP_STOPS)
        .map(|k| ColorScaleElement(k as f64 / (RAMP_STOPS - 1) as f64, ramp(k, RAMP_STOPS)))
        .collect();
    PointMarker {
        color: Some(PointColor::Many(Typed::floats(values))),
        color_scale: Some(ColorScale::Vector(stops)),
        cmin: Some(0.0),
        cmax: Some(1.0),
        show_scale: Some(scale),
        color_bar: scale.then(|| {
            ColorBar::new()
                .title(MIX_TITLE)
                .tick_vals((0..labels.len()).map(at).collect())
                .tick_text(labels.to_vec())
        }),
        size: Some(size),
        size_mode: None,
        opacity: Some(SOLID_OPACITY),
        line: Some(OutlineWidth { width: 0.0 }),
        symbol: None,
    }
}

/// The class counts of each group as a customdata string column, for the
/// hover: `L1 hit 12, miss to memory 3`, classes without accesses left
/// out. Each distinct text is stored once.
pub(crate) fn mix_column<'a>(counts: impl Iterator<Item = &'a [u64]>, labels: &[String]) -> CdCol {
    let mut index: std::collections::HashMap<String, u32> = Default::default();
    let mut texts: Vec<String> = Vec::new();
    let codes = counts
        .map(|cs| {
            let text = cs
                .iter()
                .zip(labels)
                .filter(|(&c, _)| c > 0)
                .map(|(c, l)| format!("{l} {c}"))
                .collect::<Vec<_>>()
                .join(", ");
            *index.entry(text).or_insert_with_key(|t| {
                texts.push(t.clone());
                texts.len() as u32 - 1
            })
        })
        .collect();
    CdCol::Str(codes, Arc::new(texts))
}

/// A group hover `base` followed by the class counts of the customdata
/// column at `column` (see [`mix_column`]).
pub(crate) fn hover_with_mix(base: &str, column: usize) -> String {
    format!("{base}<br><b>%{{customdata[{column}]}}</b><extra></extra>")
}

/// Marker sizes growing with the square root of the group counts, so that
/// area is roughly proportional to the number of accesses (3 to 15 px).
pub(crate) fn count_sizes(counts: &[u64]) -> Vec<f64> {
    let max = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    counts
        .iter()
        .map(|&c| 3.0 + 12.0 * (c as f64 / max).sqrt())
        .collect()
}

/// Marker size of one raw access in the 2D views, in pixels.
pub(crate) const RAW_SIZE: f64 = 5.0;

/// Marker sizes of one trace's aggregated groups in a 2D view: from the
/// raw points' size ([`RAW_SIZE`]) for the trace's smallest groups up to 15
/// px for its largest, area growing with the count. Sizes are relative to
/// the trace's own groups, so each variable's pattern stays as visible as
/// its raw points would be, whatever the counts of other variables.
pub(crate) fn trace_sizes(counts: &[u64]) -> Vec<f64> {
    let max = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    counts
        .iter()
        .map(|&c| RAW_SIZE + (15.0 - RAW_SIZE) * (c as f64 / max).sqrt())
        .collect()
}

/// Ten distinguishable colours for per-variable traces (Tableau 10).
pub(crate) const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// The colour of variable rank `r`'s accesses of operation `op` (0 load,
/// 1 store, 2 modify, as [`crate::vis::input::tables::op_index`]): loads in the
/// variable's palette colour, stores in a dark shade of it and modifies in
/// between, so one variable's stores stand out from its loads while the
/// hue still says which variable it is.
pub(crate) fn op_colour(r: usize, op: usize) -> String {
    let base = PALETTE[r % PALETTE.len()];
    let keep = match op {
        1 => 0.5,
        2 => 0.72,
        _ => 1.0,
    };
    let channel = |i: usize| {
        let v = u8::from_str_radix(&base[i..i + 2], 16).unwrap_or(0);
        (v as f64 * keep).round() as u8
    };
    format!("#{:02x}{:02x}{:02x}", channel(1), channel(3), channel(5))
}

/// The order in which per-(variable, operation) traces are added, so that
/// stores and modifies are drawn on top of loads (plotly draws later traces
/// over earlier ones): bucket indices `rank * 4 + op` for `nv` variables.
pub(crate) fn draw_order(nv: usize) -> impl Iterator<Item = usize> {
    [0usize, 3, 2, 1]
        .into_iter()
        .flat_map(move |op| (0..nv).map(move |r| r * 4 + op))
}

/// Gaps to mark on one x axis of a view over the access order: the axis,
/// the access-order times at which a traced region begins after a stretch
/// of the run that was not traced, and the span of times drawn there.
pub(crate) type GapMarks<'a> = (&'a str, &'a [u64], (u64, u64));

/// Marks on a view over the access order, for each of `marks`, each of its
/// times that lies within its span: a dashed line across every panel
/// where a traced region begins after a stretch of the run that was not
/// traced (the next window, call or pinned region), and a note above
/// saying so, so that two regions are never read as one continuous run.
/// At most [`MAX_GAP_MARKS`] lines an axis; the note says when there are
/// more.
pub(crate) fn mark_gaps(p2: &mut plotly::Plot, marks: &[GapMarks]) {
    use plotly::common::DashType;
    use plotly::layout::{Annotation, Shape, ShapeLine, ShapeType};
    let (mut shapes, mut shown, mut all) = (Vec::new(), 0, 0);
    for &(axis, gaps, span) in marks {
        let inside: Vec<u64> = gaps
            .iter()
            .copied()
            .filter(|&t| t > span.0 && t <= span.1)
            .collect();
        all = all.max(inside.len());
        shown = shown.max(inside.len().min(MAX_GAP_MARKS));
        shapes.extend(inside.iter().take(MAX_GAP_MARKS).map(|&t| {
            Shape::new()
                .shape_type(ShapeType::Line)
                .x_ref(axis)
                .y_ref("paper")
                .x0(t)
                .x1(t)
                .y0(0)
                .y1(1)
                .line(
                    ShapeLine::new()
                        .dash(DashType::Dash)
                        .width(1.0)
                        .color("gray"),
                )
        }));
    }
    if shapes.is_empty() {
        return;
    }
    let more = match all - shown {
        0 => String::new(),
        n => format!(" (the first {shown} drawn, {n} more)"),
    };
    let note = Annotation::new()
        .text(format!(
            "dashed lines: {all} gap{}{more}, where the run went on untraced before the next region",
            if all == 1 { "" } else { "s" }
        ))
        .x_ref("paper")
        .y_ref("paper")
        .x(0.0)
        .y(1.0)
        .x_anchor(plotly::common::Anchor::Left)
        .y_anchor(plotly::common::Anchor::Bottom)
        .show_arrow(false);
    let layout = p2.layout().clone().shapes(shapes).annotations(vec![note]);
    p2.set_layout(layout);
}

/// Most gap lines one view draws (see [`mark_gaps`]).
const MAX_GAP_MARKS: usize = 1000;

/// The customdata positions a hover template refers to.
#[cfg(test)]
pub(crate) fn referenced(template: &str) -> std::collections::BTreeSet<usize> {
    template
        .split("%{customdata[")
        .skip(1)
        .filter_map(|s| s.split(']').next()?.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    customdata_fields! {
        /// Three fields for the tests.
        Probe {
            A,
            B,
            C,
        }
    }

    /// A string column carries the names it uses, each once, in order of
    /// first use, and codes into them; codes outside the table are `?`.
    #[test]
    fn string_columns_carry_each_name_they_use_once() {
        let table = Arc::new(vec!["a".to_string(), "b".into(), "c".into()]);
        let cd = CustomData {
            cols: vec![CdCol::Str(vec![2, 0, 2, 9, 0], table)],
        };
        let v = serde_json::to_value(cd).unwrap();
        let col = &v["columns"][0];
        assert_eq!(col["names"], serde_json::json!(["c", "a", "?"]));
        assert_eq!(
            col["codes"],
            serde_json::to_value(Typed::uints(&[0, 1, 0, 2, 1])).unwrap()
        );
    }

    /// A group's colour is the mean position of its accesses' classes:
    /// the miss ratio with two classes, a class's own place when alone.
    #[test]
    fn a_mix_is_the_mean_class_position() {
        assert_eq!(mix_value(&[3, 1]), 0.25);
        assert_eq!(mix_value(&[0, 5]), 1.0);
        assert_eq!(mix_value(&[0, 7, 0]), 0.5);
        assert_eq!(mix_value(&[2, 0, 0, 2]), 0.5);
        assert_eq!(mix_value(&[4]), 0.0);
        assert_eq!(mix_value(&[]), 0.0);
        let labels: Vec<String> = vec!["hit".into(), "miss".into()];
        let counts = [[3u64, 1], [0, 2], [3, 1]];
        let CdCol::Str(codes, texts) = mix_column(counts.iter().map(|c| &c[..]), &labels) else {
            panic!("a string column");
        };
        assert_eq!(codes, [0, 1, 0]);
        assert_eq!(*texts, ["hit 3, miss 1", "miss 2"]);
    }

    #[test]
    fn fields_number_the_row_in_declaration_order() {
        assert_eq!(Probe::ALL, &[Probe::A, Probe::B, Probe::C]);
        assert_eq!(Probe::C.at(), "%{customdata[2]}");
        assert_eq!(Probe::B.hex(), "%{customdata[1]:x}");
        let col = |f: Probe| CdCol::U64(vec![10 * f.index() as u64, 1]);
        let all = serde_json::to_value(CustomData::of(col)).unwrap();
        let want: Vec<_> = [[0, 1], [10, 1], [20, 1]]
            .iter()
            .map(|v| serde_json::to_value(Typed::uints(v)).unwrap())
            .collect();
        assert_eq!(all, serde_json::json!({ "columns": want }));
        let two = serde_json::to_value(CustomData::through(Probe::B, col)).unwrap();
        assert_eq!(two, serde_json::json!({ "columns": want[..2] }));
        assert_eq!(
            referenced("x %{customdata[2]} y 0x%{customdata[10]:x}"),
            [2, 10].into()
        );
    }
}
