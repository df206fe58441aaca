//! What an array figure's scatter is drawn from: the accesses picked for
//! one variable ([`Picked`]) and everything the exact and the grouped
//! scatters share ([`Drawn`]). A leaf of the array figures: `array.rs`
//! picks and lays out, `array_exact.rs` and `array_groups.rs` draw.
use std::sync::Arc;

use super::array_maps::Shape;
use crate::vis::input::aggregate::Source;
use crate::vis::input::classes::{Annot, ClassesSeen};
use crate::vis::options::FigureOptions;

/// The access rows of one variable that touch its block.
pub(super) struct Picked {
    /// Accesses of the variable that touch its block.
    pub(super) accesses: u64,
    /// Element touches: a wide access touches every element it spans.
    /// `None` when picked from the tables: more than the point budget
    /// (there are more than that many accesses), counted by the scatter's
    /// aggregation.
    pub(super) touches: Option<u64>,
    pub(super) t_lo: u64,
    pub(super) t_hi: u64,
    /// Lowest and highest occurrence of those accesses.
    pub(super) occ: (u64, u64),
    /// The colour classes of the accesses.
    pub(super) classes: ClassesSeen,
}

/// What the scatter and the data file are drawn from.
pub(super) struct Drawn<'a> {
    pub(super) shape: &'a Shape,
    pub(super) picked: &'a Picked,
    pub(super) each: &'a Source<'a>,
    pub(super) sources: Arc<Vec<String>>,
    pub(super) ann: &'a Annot,
    pub(super) o: &'a FigureOptions,
}

impl Drawn<'_> {
    pub(super) fn is3(&self) -> bool {
        self.shape.dims.len() == 3
    }
    /// Axis titles of the scatter: x, y, z.
    pub(super) fn axes(&self) -> (&'static str, &'static str, &'static str) {
        if self.is3() {
            ("column j", "depth k", "plane i")
        } else if !self.shape.fields.is_empty() {
            ("field", "occurrence", "row i")
        } else {
            ("column j", "occurrence", "row i")
        }
    }
}
