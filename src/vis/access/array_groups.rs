//! The grouped scatter of an array figure, above the 3D point budget: exact
//! groups of (block of elements, occurrence bin), sized by their count,
//! with the groups' hover.

use plotly::Plot;

use super::array_maps::Shape;
use super::array_points::Drawn;
use super::complete::scatter_3d;
use crate::vis::error::VisError;
use crate::vis::input::aggregate::{aggregate, bin_width, Binned, Binning, ClassFn, Group};
use crate::vis::input::tables::Item;
use crate::vis::page::traces::CustomData;
use crate::vis::page::traces::{
    count_sizes, customdata_fields, group_fields, time_marker, CdCol, CdField,
};
use crate::vis::page::traces::{hover_with_mix, mix_column, mix_marker, mix_value};
use crate::vis::page::traces::{symbol_3d, Ext, OneOrMany, Typed};

customdata_fields! {
    /// The customdata of one aggregated group of element accesses, in row
    /// order; thread, source and pattern are those of the group's earliest
    /// access.
    TouchGroupField {
        /// Element accesses in the group.
        Count,
        TimeMin,
        TimeMax,
        /// Smallest element index.
        ElemMin,
        /// Largest element index.
        ElemMax,
        Loads,
        Stores,
        Modifies,
        OccMin,
        OccMax,
        Thread,
        Source,
        Pattern,
    }
}

group_fields!(TouchGroupField, "element accesses");

/// Hover of one aggregated group of element accesses.
fn touch_hover() -> String {
    crate::vis::page::traces::group_hover::<TouchGroupField>(&format!(
        "elements {} to {}",
        TouchGroupField::ElemMin.at(),
        TouchGroupField::ElemMax.at()
    ))
}

/// Exact groups of (block of elements, occurrence bin) above the point
/// budget, in one trace; returns the plot, the number of groups, the
/// element touches (the groups' counts add up to them) and a description.
pub(super) fn group_scatter(d: &Drawn) -> Result<(Plot, usize, u64, String), VisError> {
    let binned = bin_touches(d)?;
    let blocks: Vec<u64> = d
        .shape
        .dims
        .iter()
        .map(|&x| bin_width(x, binned.res))
        .collect();
    let touches = binned.groups.iter().map(|g| g.count).sum();
    let desc = group_description(d, &binned, &blocks, touches);
    let gs: Vec<&Group> = binned.groups.iter().collect();
    let mut p = Plot::new();
    if !gs.is_empty() {
        p.add_trace(group_trace(d, &gs, &blocks));
    }
    Ok((p, binned.groups.len(), touches, desc))
}

/// The element touches grouped within the point budget: by block of
/// elements, and in 2D by occurrence bin (the scatter's y axis); in 3D by
/// space only, so that groups at one position never hide each other. With
/// colour classes, each group counts its touches per class.
pub(super) fn bin_touches(d: &Drawn) -> Result<Binned, VisError> {
    let (shape, is3) = (d.shape, d.is3());
    let key = |_: &Item, e: u64, res: u64| block_key(shape, &shape.dims, e, res);
    let class_of = |it: &Item| d.ann.class(it);
    let classes = (d.ann.classes.as_ref()).map(|c| (&class_of as &ClassFn, c.labels.len()));
    let span = if is3 { (0, 0) } else { d.picked.occ };
    let dim = |it: &Item| if is3 { 0 } else { it.occ };
    let view = Binning {
        key: &key,
        dim: &dim,
        span,
        budget: d.o.budget_3d(),
        space: shape.dims.iter().copied().max().unwrap_or(1),
        distinct: 0,
        classes,
    };
    let mut b = aggregate(d.each, &[view])?;
    Ok(b.pop().expect("aggregate gives one result per view"))
}

/// The page's note on the aggregation: the block size, the occurrence bin
/// width (2D) and what colour means.
pub(super) fn group_description(
    d: &Drawn,
    binned: &Binned,
    blocks: &[u64],
    touches: u64,
) -> String {
    let is3 = d.is3();
    format!(
        "{} element accesses of `{}` exceed the 3D view's point budget of {}: each point is the exact group of accesses to one block of {} elements{}{}; marker size and hover give the count.",
        touches,
        d.shape.name,
        d.o.budget_3d(),
        blocks.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(" x "),
        if is3 { String::new() } else { format!(" with occurrences in one bin {} wide", binned.time_width) },
        if d.ann.classes.is_some() { "; colour is the mix of their classes" } else { "; colour is their mean time" }
    )
}

/// The trace of the groups `gs`: each at the centre of its block of
/// `blocks` elements, sized by its count, coloured by mean time or, with
/// classes, by the mix of its touches' classes.
pub(super) fn group_trace(d: &Drawn, gs: &[&Group], blocks: &[u64]) -> Box<dyn plotly::Trace> {
    let (shape, is3) = (d.shape, d.is3());
    let centre = |g: &Group| -> (f64, f64, f64) {
        let (i, j, k) = shape.ijk(g.coord_min);
        let c = |v: u64, b: u64| (v / b * b) as f64 + (b as f64 - 1.0) / 2.0;
        (
            c(i, blocks[0]),
            c(j, blocks[1]),
            if is3 { c(k, blocks[2]) } else { 0.0 },
        )
    };
    let pos: Vec<(f64, f64, f64)> = gs.iter().map(|g| centre(g)).collect();
    let sizes = count_sizes(&gs.iter().map(|g| g.count).collect::<Vec<_>>());
    let y: Vec<f64> = if is3 {
        pos.iter().map(|p| p.2).collect()
    } else {
        gs.iter().map(|g| g.occ_min as f64).collect()
    };
    let (hover, marker) = match &d.ann.classes {
        Some(ci) => {
            let px: Vec<f64> = sizes.iter().map(|s| s.round()).collect();
            let values: Vec<f64> = gs.iter().map(|g| mix_value(&g.classes)).collect();
            let m = mix_marker(&values, &ci.labels, OneOrMany::many(&px), true);
            let hover = hover_with_mix(&touch_hover(), TouchGroupField::ALL.len());
            (hover, m.symbol(symbol_3d()))
        }
        None => {
            let times: Vec<f64> = gs.iter().map(|g| g.t_mean()).collect();
            let (lo, hi) = (d.picked.t_lo, d.picked.t_hi);
            let m = time_marker(&times, lo, hi, OneOrMany::many(&sizes));
            (super::complete::hover_with_class(&touch_hover(), None), m)
        }
    };
    let t = scatter_3d().hover_template(hover);
    let col =
        |f: fn(&(f64, f64, f64)) -> f64| Typed::floats(&pos.iter().map(f).collect::<Vec<_>>());
    Ext::new(*t.name(shape.name.as_str()))
        .xyz(col(|p| p.1), Typed::floats(&y), col(|p| p.0))
        .custom(touch_group_custom(d, gs))
        .marker(marker)
        .boxed()
}

/// The customdata of aggregated groups `gs`: the fields of
/// [`TouchGroupField`], then with classes each group's class counts.
pub(super) fn touch_group_custom(d: &Drawn, gs: &[&Group]) -> CustomData {
    let u = |f: &dyn Fn(&Group) -> u64| CdCol::U64(gs.iter().map(|&g| f(g)).collect());
    let mut cd = CustomData::of(|f| match f {
        TouchGroupField::Count => u(&|g| g.count),
        TouchGroupField::TimeMin => u(&|g| g.t_min),
        TouchGroupField::TimeMax => u(&|g| g.t_max),
        TouchGroupField::ElemMin => u(&|g| g.coord_min),
        TouchGroupField::ElemMax => u(&|g| g.coord_max),
        TouchGroupField::Loads => u(&|g| g.ops[0]),
        TouchGroupField::Stores => u(&|g| g.ops[1]),
        TouchGroupField::Modifies => u(&|g| g.ops[2]),
        TouchGroupField::OccMin => u(&|g| g.occ_min),
        TouchGroupField::OccMax => u(&|g| g.occ_max),
        TouchGroupField::Thread => u(&|g| g.first.tid as u64),
        TouchGroupField::Source => CdCol::Str(
            gs.iter().map(|g| g.first.line.0).collect(),
            d.sources.clone(),
        ),
        TouchGroupField::Pattern => CdCol::Str(
            gs.iter()
                .map(|g| d.ann.patterns.id(g.first.var, g.first.line))
                .collect(),
            d.ann.patterns.names.clone(),
        ),
    });
    if let Some(ci) = &d.ann.classes {
        cd.cols
            .push(mix_column(gs.iter().map(|g| &g.classes[..]), &ci.labels));
    }
    cd
}

/// Key of the block of elements holding `e` when each dimension is cut into
/// `res` blocks.
///
/// Cost: per call, one element split into indices and shifts (block sizes
/// are powers of two); no allocation, as it runs per touch.
#[inline]
pub(super) fn block_key(shape: &Shape, dims: &[u64], e: u64, res: u64) -> u64 {
    let (i, j, k) = shape.ijk(e);
    let shift = |d: u64| bin_width(d, res).trailing_zeros();
    // Blocks along a dimension of d elements.
    let blocks = |d: u64| (d + (1 << shift(d)) - 1) >> shift(d);
    let mut key = (i >> shift(dims[0])) * blocks(dims[1]) + (j >> shift(dims[1]));
    if dims.len() == 3 {
        key = key * blocks(dims[2]) + (k >> shift(dims[2]));
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vis::page::traces::referenced;

    /// The groups' hover shows every field of their customdata row.
    #[test]
    fn hovers_show_exactly_their_rows() {
        let last = TouchGroupField::ALL.len() - 1;
        assert_eq!(referenced(&touch_hover()), (0..=last).collect());
    }

    /// The hover, written out by hand from the field order, as the pages
    /// have always had it (the template is shared with the complete
    /// figure's groups).
    #[test]
    fn the_hover_reads_as_it_did() {
        let c = |i: usize| format!("%{{customdata[{i}]}}");
        let want = format!(
            "<b>{} element accesses</b><br>order (time) {} to {}<br>elements {} to {}<br>loads {}, stores {}, modifies {}<br>occurrence {} to {}<br>first: thread {}, source {}<br>pattern {}",
            c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), c(8), c(9), c(10), c(11), c(12)
        );
        assert_eq!(touch_hover(), want);
    }
}
