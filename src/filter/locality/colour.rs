//! What the figures need from the locality analyses: a colour class for
//! each drawn access (the cache level that served it, or its reuse
//! distance) and the pattern label of each (variable, source line).
//!
//! # Colour classes
//!
//! - [`ColourMode::Hit`]: the level of the cache model (`set_cache`) that
//!   served the access: `L1 hit`, `L2 hit`, `L3 hit` or `miss to memory`.
//!   The simulation is the one of `cache_stats`: cold caches at `GL_START`,
//!   every access of the trace in time order, whatever the figure shows, so
//!   a figure of one variable shows the misses other variables caused.
//! - [`ColourMode::Reuse`]: the exact LRU stack distance of the access in
//!   distinct cache lines (of the model's first level), in power-of-two
//!   bins (`reuse 64–127 lines`), or `first touch` for a line never
//!   referenced before. An access that spans two lines takes the larger of
//!   their distances (first touch when either line is new). Always exact:
//!   the sampling of `set_reuse_sampling` gives no distance to most
//!   accesses, so it does not apply here.
//!
//! - [`ColourMode::Miss`]: why the access missed at one level of the
//!   model (the 3C model of `cache_stats`): `conflict`, `capacity` or
//!   `compulsory` miss, or no miss there (it hit at that level or above).
//!
//! Classes are numbered from the best (`L1 hit`, the shortest reuse) to
//! the worst (`miss to memory`, `first touch`), so that a figure can colour
//! them along one ramp.
//!
//! Cost: one pass over the accesses in time order with the cache simulator
//! or the stack-distance tracker (memory bounded by the distinct lines), one
//! byte per drawn access for the classes, and one small record per (variable,
//! line) pair for the labels.
use polars::prelude::*;
use serde::{Deserialize, Serialize};

use super::cache::{CacheModel, CacheSim};
use super::pattern::label;
use super::report::LocalityError;
use super::reuse::{bin_of, bin_range, StackDistance, BINS};
use super::{drive, AccessSink, NamedAccess, Names};
use crate::filter::analysis::Analysis;
pub use crate::filter::batches::ClassNames;
use crate::filter::batches::{Classify, SelectionBatches};
use crate::filter::model::owned;
use crate::filter::schema::{access as ac, pattern as pt};
use crate::filter::selection::Selection;

/// How the access figures colour their points (`set_figure_colour`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ColourMode {
    /// By time in the 3D views, by variable in the 2D view.
    #[default]
    Default,
    /// By the cache level that served the access.
    Hit,
    /// By reuse distance.
    Reuse,
    /// By the class of the access's miss at the level of this number
    /// (1 for L1).
    Miss(u8),
}

impl ColourMode {
    /// The words `set_figure_colour` takes.
    pub const WORDS: [&'static str; 4] = ["default", "hit", "reuse", "miss"];

    /// The mode a word names; `miss` takes the level from `level` (`L2`),
    /// L1 when absent.
    pub fn parse(word: &str, level: Option<&str>) -> Option<ColourMode> {
        match (word, level) {
            ("default", None) => Some(ColourMode::Default),
            ("hit", None) => Some(ColourMode::Hit),
            ("reuse", None) => Some(ColourMode::Reuse),
            ("miss", None) => Some(ColourMode::Miss(1)),
            ("miss", Some(l)) => super::cache::parse_level(l).ok().map(ColourMode::Miss),
            _ => None,
        }
    }

    /// The words of the mode, as `set_figure_colour` takes them.
    pub fn code(self) -> String {
        match self {
            ColourMode::Default => "default".into(),
            ColourMode::Hit => "hit".into(),
            ColourMode::Reuse => "reuse".into(),
            ColourMode::Miss(l) => format!("miss L{l}"),
        }
    }
}

/// The colour class of each drawn access, with the class names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Classes {
    /// What the classes are, for the legend title.
    pub title: String,
    /// Name of each class, best first (`L1 hit`, ..., `miss to memory`).
    pub labels: Vec<String>,
    /// Class of each drawn access, in the order of the drawn rows.
    pub class: Vec<u8>,
}

/// Class of a reference that touched a line for the first time (reuse
/// mode, before the classes are made dense).
const COLD: u8 = BINS as u8;

/// The sink computing classes for the rows at the `want` times (increasing).
struct ClassSink<'a> {
    want: &'a [u64],
    next: usize,
    how: How,
    out: Vec<u8>,
}

#[derive(Clone)]
enum How {
    Hit(Box<CacheSim>),
    /// The miss class at the level of this index in the model.
    Miss(Box<CacheSim>, usize),
    Reuse {
        stack: Box<StackDistance>,
        bits: u32,
    },
}

impl How {
    /// The classification of `mode` under `model`; `None` for
    /// [`ColourMode::Default`].
    fn of(mode: ColourMode, model: &CacheModel) -> Result<Option<How>, LocalityError> {
        Ok(Some(match mode {
            ColourMode::Default => return Ok(None),
            ColourMode::Hit => How::Hit(Box::new(CacheSim::new(model)?)),
            ColourMode::Miss(l) => {
                How::Miss(Box::new(CacheSim::new(model)?), level_index(model, l)?)
            }
            ColourMode::Reuse => How::Reuse {
                stack: Box::default(),
                bits: model
                    .levels
                    .first()
                    .ok_or(super::cache::CacheError::Empty)?
                    .line
                    .trailing_zeros(),
            },
        }))
    }

    #[inline]
    fn class(&mut self, r: &NamedAccess) -> u8 {
        match self {
            How::Hit(sim) => sim.access(r),
            How::Miss(sim, i) => {
                sim.access(r);
                sim.last_class(*i).map_or(0, |c| c as u8 + 1)
            }
            How::Reuse { stack, bits } => {
                let a = r.addr >> *bits;
                let b = (r.addr + r.size as u64 - 1) >> *bits;
                let mut worst = 0u8;
                for l in a..=b {
                    let c = stack.reference(l).map_or(COLD, |d| bin_of(d) as u8);
                    worst = worst.max(c);
                }
                worst
            }
        }
    }
}

impl AccessSink for ClassSink<'_> {
    fn accesses(&mut self, batch: &[NamedAccess]) {
        for r in batch {
            let c = self.how.class(r);
            if self.want.get(self.next) == Some(&r.time) {
                self.out.push(c);
                self.next += 1;
            }
        }
    }
}

/// The colour class of each access as a streaming reader meets them: fed
/// every access of the trace in time order (whatever it keeps), it gives
/// each one's class as [`classes`] numbers it before the reuse classes are
/// made dense. Clone a fresh one for each pass. Memory: the cache model's
/// state or one entry per distinct line.
#[derive(Clone)]
pub struct Classifier {
    how: How,
}

impl Classifier {
    /// The classifier of `mode` under `model`, with the title and the name
    /// of every class it can give; `None` for [`ColourMode::Default`]. The
    /// reuse classes name every distance bin (most never occur): a figure
    /// drops the classes no drawn access has and numbers the others densely
    /// (as [`classes`] does), so `sparse` is true for them.
    ///
    /// # Errors
    /// A cache model with no level.
    pub fn new(
        mode: ColourMode,
        model: &CacheModel,
    ) -> Result<Option<(Classifier, ClassNames)>, LocalityError> {
        let Some(how) = How::of(mode, model)? else {
            return Ok(None);
        };
        let names = match mode {
            ColourMode::Hit => {
                let (title, labels) = hit_labels(model);
                ClassNames {
                    title,
                    labels,
                    sparse: false,
                }
            }
            ColourMode::Miss(l) => {
                let (title, labels) = miss_labels(model, l);
                ClassNames {
                    title,
                    labels,
                    sparse: false,
                }
            }
            _ => ClassNames {
                title: reuse_title(model.levels[0].line),
                labels: (0..=BINS)
                    .map(|k| {
                        if k == BINS {
                            "first touch".to_string()
                        } else {
                            reuse_label(k)
                        }
                    })
                    .collect(),
                sparse: true,
            },
        };
        Ok(Some((Classifier { how }, names)))
    }

    /// The class of the next access of the trace.
    #[inline]
    pub fn class(&mut self, r: &NamedAccess) -> u8 {
        self.how.class(r)
    }
}

impl Classify for Classifier {
    fn class(&mut self, r: &NamedAccess) -> u8 {
        Classifier::class(self, r)
    }

    fn fresh(&self) -> Box<dyn Classify> {
        Box::new(self.clone())
    }
}

/// The accesses of `sel` as batches a figure reads, coloured by `mode`
/// under the cache `model` (no colour for [`ColourMode::Default`]).
///
/// # Errors
/// A cache model with no level.
pub fn selection_batches<'a>(
    a: &'a Analysis,
    sel: Selection,
    mode: ColourMode,
    model: &CacheModel,
) -> Result<SelectionBatches<'a>, LocalityError> {
    let colour =
        Classifier::new(mode, model)?.map(|(c, names)| (Box::new(c) as Box<dyn Classify>, names));
    Ok(SelectionBatches::new(a, sel, colour))
}

/// The colour classes of the accesses at `times` (the `time` column of a
/// selection, increasing) under `mode` and `model`, from one pass over all
/// accesses of `a`. `None` for [`ColourMode::Default`].
///
/// # Errors
/// A cache model with no level, or an access list not in schema form.
pub fn classes(
    a: &Analysis,
    times: &[u64],
    mode: ColourMode,
    model: &CacheModel,
) -> Result<Option<Classes>, LocalityError> {
    let Some(how) = How::of(mode, model)? else {
        return Ok(None);
    };
    let mut sink = ClassSink {
        want: times,
        next: 0,
        how,
        out: Vec::with_capacity(times.len()),
    };
    drive(a, &mut [&mut sink])?;
    let mut class = sink.out;
    let (title, labels) = match mode {
        ColourMode::Hit => hit_labels(model),
        ColourMode::Miss(l) => miss_labels(model, l),
        _ => dense_reuse(&mut class, model.levels[0].line),
    };
    Ok(Some(Classes {
        title,
        labels,
        class,
    }))
}

/// `L1 hit`, `L2 hit`, ..., `miss to memory`, for the levels of `model`.
fn hit_labels(model: &CacheModel) -> (String, Vec<String>) {
    let mut labels: Vec<String> = model
        .levels
        .iter()
        .map(|l| format!("{} hit", l.name()))
        .collect();
    labels.push("miss to memory".into());
    let title = format!(
        "cache level that served the access ({}; cold caches at the region's start, all accesses in time order)",
        model.levels_text()
    );
    (title, labels)
}

/// The index in `model` of level `l` (1 for L1).
///
/// # Errors
/// The model has no such level: the message names those it has.
fn level_index(model: &CacheModel, l: u8) -> Result<usize, LocalityError> {
    model
        .levels
        .iter()
        .position(|x| x.level == l)
        .ok_or_else(|| {
            LocalityError::Cache(super::cache::CacheError::NoLevel {
                level: format!("L{l}"),
                model: model.levels_text(),
            })
        })
}

/// The title and class names of [`ColourMode::Miss`] at level `l`: no
/// miss there, then the classes from the mildest.
fn miss_labels(model: &CacheModel, l: u8) -> (String, Vec<String>) {
    let labels = vec![
        if l == 1 {
            "L1 hit".to_string()
        } else {
            format!("hit in L{l} or above")
        },
        format!("L{l} conflict miss"),
        format!("L{l} capacity miss"),
        format!("L{l} compulsory miss"),
    ];
    let title = format!(
        "why the access missed L{l} ({}; 3C model: compulsory, the line's first use; capacity, a \
         fully associative cache of the same size misses too; conflict, only the set mapping \
         lost it)",
        model.levels_text()
    );
    (title, labels)
}

/// Renumbers reuse classes (bins, and [`COLD`]) densely over the bins that
/// occur, shortest first and `first touch` last; returns the title and the
/// labels.
fn dense_reuse(class: &mut [u8], line: u32) -> (String, Vec<String>) {
    let mut present = [false; BINS + 1];
    for &c in class.iter() {
        present[c as usize] = true;
    }
    let mut id = [0u8; BINS + 1];
    let mut labels = Vec::new();
    for k in 0..=BINS {
        if !present[k] {
            continue;
        }
        id[k] = labels.len() as u8;
        labels.push(if k == BINS {
            "first touch".to_string()
        } else {
            reuse_label(k)
        });
    }
    for c in class.iter_mut() {
        *c = id[*c as usize];
    }
    (reuse_title(line), labels)
}

/// The legend title of the reuse classes for `line`-byte lines.
fn reuse_title(line: u32) -> String {
    format!(
        "reuse distance (distinct {line}-byte lines referenced since the last reference to the line; exact LRU stack distance from GL_START)"
    )
}

/// `reuse 0 lines`, `reuse 1 line`, `reuse 64–127 lines` for bin `k`.
pub fn reuse_label(k: usize) -> String {
    match bin_range(k) {
        (0, 0) => "reuse 0 lines".into(),
        (1, 1) => "reuse 1 line".into(),
        (lo, hi) => format!("reuse {lo}–{hi} lines"),
    }
}

/// `df` (a selection of accesses, with its `time` column) with the colour
/// classes as a `colour` column, for the figures.
///
/// # Errors
/// As [`classes`], or a selection without a `time` column.
pub fn with_classes(
    a: &Analysis,
    df: &DataFrame,
    mode: ColourMode,
    model: &CacheModel,
) -> Result<(DataFrame, Option<Classes>), LocalityError> {
    let t = df.column(ac::TIME)?.u64()?.rechunk();
    let times = t.cont_slice().map_err(LocalityError::from)?;
    let Some(mut c) = classes(a, times, mode, model)? else {
        return Ok((df.clone(), None));
    };
    let mut out = df.clone();
    out.with_column(owned::<UInt8Type>(ac::COLOUR, std::mem::take(&mut c.class)))?;
    Ok((out, Some(c)))
}

/// The pattern label of every (variable, source line) pair of `a`, as a
/// table with the columns of [`crate::filter::schema::pattern`]. Cost: one
/// row per pair, from the states the analysis gathered as it streamed; one
/// pass over the accesses for an analysis without them.
///
/// # Errors
/// An access list not in schema form.
pub fn pattern_table(a: &Analysis) -> Result<DataFrame, LocalityError> {
    let names = Names::of(a)?;
    let st = super::report::pattern_states(a, &names)?;
    let pairs = &st.pairs;
    let labels: Vec<String> = pairs
        .iter()
        .zip(&st.states)
        .map(|(&(v, _), p)| {
            names
                .vars
                .get(v.index())
                .map_or_else(|| "?".into(), |var| label(p, var).to_string())
        })
        .collect();
    Ok(DataFrame::new(vec![
        owned::<UInt32Type>(pt::VAR, pairs.iter().map(|p| p.0 .0).collect()),
        owned::<UInt32Type>(pt::LINE, pairs.iter().map(|p| p.1 .0).collect()),
        Column::new(pt::LABEL.into(), labels),
    ])?)
}

impl Analysis {
    /// See [`pattern_table`].
    pub fn pattern_table(&self) -> Result<DataFrame, LocalityError> {
        pattern_table(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_reuse_bins_are_named() {
        for w in ["default", "hit", "reuse"] {
            assert_eq!(ColourMode::parse(w, None).unwrap().code(), w);
        }
        assert_eq!(ColourMode::parse("miss", None), Some(ColourMode::Miss(1)));
        assert_eq!(
            ColourMode::parse("miss", Some("L2")).unwrap().code(),
            "miss L2"
        );
        assert_eq!(ColourMode::parse("miss", Some("L4")), None);
        assert_eq!(ColourMode::parse("hit", Some("L2")), None);
        assert_eq!(ColourMode::parse("misses", None), None);
        assert_eq!(reuse_label(0), "reuse 0 lines");
        assert_eq!(reuse_label(1), "reuse 1 line");
        assert_eq!(reuse_label(2), "reuse 2–3 lines");
        assert_eq!(reuse_label(7), "reuse 64–127 lines");
    }

    #[test]
    fn reuse_classes_are_dense_with_first_touch_last() {
        let mut c = vec![COLD, 7, 0, COLD, 7];
        let (_, labels) = dense_reuse(&mut c, 64);
        assert_eq!(
            labels,
            ["reuse 0 lines", "reuse 64–127 lines", "first touch"]
        );
        assert_eq!(c, [2, 1, 0, 2, 1]);
    }
}
