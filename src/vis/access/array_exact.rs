//! The exact scatter of an array figure: one point per element touch, when
//! the touches fit the 3D point budget, with the touch's hover.
use std::sync::Arc;

use plotly::Plot;

use super::array_maps::Shape;
use super::array_points::Drawn;
use super::complete::scatter_3d;
use crate::vis::error::VisError;
use crate::vis::input::classes::Annot;
use crate::vis::input::tables::OP_NAMES;
use crate::vis::input::tables::{op_index, Item};
use crate::vis::page::traces::{customdata_fields, time_marker, CdCol, CdField, CustomData};
use crate::vis::page::traces::{symbol_3d, Ext, OneOrMany, PointMarker, Typed};

customdata_fields! {
    /// The customdata of one exact element access, in row order.
    TouchField {
        /// Access order.
        Time,
        /// Load, store or modify.
        Operation,
        Thread,
        /// Occurrence of the address.
        Occurrence,
        /// Source line.
        Source,
        /// The element's address.
        Address,
        /// Pattern label of the (variable, line) pair.
        Pattern,
        /// Row i (plane i in 3D).
        Row,
        /// Column j, or the field's name for an array of structures.
        Col,
        /// Depth k; 3D arrays only.
        Depth,
    }
}

/// Hover of one exact element access of variable `name`.
pub(super) fn exact_hover(name: &str, is3: bool, fields: bool) -> String {
    use TouchField::*;
    let (i, j, k) = (Row.at(), Col.at(), Depth.at());
    let index = if is3 {
        format!("[{i}][{j}][{k}]")
    } else if fields {
        format!("[{i}].{j}")
    } else {
        format!("[{i}][{j}]")
    };
    format!(
        "order (time) {time}<br>address 0x{addr}<br>{name}{index}<br>operation {op}<br>thread {tid}<br>occurrence {occ}<br>source {src}<br>pattern {pat}",
        time = Time.at(),
        addr = Address.hex(),
        name = crate::vis::page::html::escape_html(name),
        op = Operation.at(),
        tid = Thread.at(),
        occ = Occurrence.at(),
        src = Source.at(),
        pat = Pattern.at(),
    )
}

/// The class name of class `c` for hover text, when there are classes.
pub(super) fn class_name(ann: &Annot, c: usize) -> Option<&str> {
    ann.classes.as_ref().map(|ci| ci.labels[c].as_str())
}

/// One point per element access: x = j, y = occurrence (2D) or k (3D),
/// z = i, coloured by time, or one trace per colour class.
pub(super) fn exact_scatter(d: &Drawn) -> Result<Plot, VisError> {
    let is3 = d.is3();
    // (access, element) of every touch, by class: at most the point budget.
    let mut by_class: Vec<Vec<(Item, u64)>> = vec![Vec::new(); d.ann.n_classes()];
    (d.each)(&mut |it, e| {
        by_class[d.ann.class(it) as usize].push((*it, e));
        true
    })?;
    let hover = exact_hover(d.shape.hover_name(), is3, !d.shape.fields.is_empty());
    let mut p = Plot::new();
    for (c, pts) in by_class.iter().enumerate() {
        if pts.is_empty() {
            continue;
        }
        let ijk: Vec<(u64, u64, u64)> = pts.iter().map(|&(_, e)| d.shape.ijk(e)).collect();
        let y: Vec<u64> = pts
            .iter()
            .zip(&ijk)
            .map(|((it, _), p)| if is3 { p.2 } else { it.occ })
            .collect();
        let t = scatter_3d().hover_template(super::complete::hover_with_class(
            &hover,
            class_name(d.ann, c),
        ));
        let (name, marker) = match &d.ann.classes {
            Some(ci) => (
                ci.labels[c].as_str(),
                PointMarker::opaque(ci.colours[c].clone(), OneOrMany::One(4.0)).symbol(symbol_3d()),
            ),
            None => {
                let times: Vec<f64> = pts.iter().map(|(it, _)| it.time as f64).collect();
                let (lo, hi) = (d.picked.t_lo, d.picked.t_hi);
                let m = time_marker(&times, lo, hi, OneOrMany::One(4.0));
                (d.shape.name.as_str(), m)
            }
        };
        let col =
            |f: fn(&(u64, u64, u64)) -> u64| Typed::uints(&ijk.iter().map(f).collect::<Vec<_>>());
        p.add_trace(
            Ext::new(*t.name(name))
                .xyz(col(|p| p.1), Typed::uints(&y), col(|p| p.0))
                .custom(touch_custom(d, pts, &ijk))
                .marker(marker)
                .boxed(),
        );
    }
    Ok(p)
}

/// The customdata of element touches `pts` (access, element), whose
/// indices are `ijk`.
pub(super) fn touch_custom(d: &Drawn, pts: &[(Item, u64)], ijk: &[(u64, u64, u64)]) -> CustomData {
    let u =
        |f: &dyn Fn(&Item, u64) -> u64| CdCol::U64(pts.iter().map(|(it, e)| f(it, *e)).collect());
    let last = if d.is3() {
        TouchField::Depth
    } else {
        TouchField::Col
    };
    CustomData::through(last, |f| match f {
        TouchField::Time => u(&|it, _| it.time),
        TouchField::Operation => CdCol::Static(
            pts.iter().map(|(it, _)| op_index(it.op) as u8).collect(),
            &OP_NAMES,
        ),
        TouchField::Thread => u(&|it, _| it.tid as u64),
        TouchField::Occurrence => u(&|it, _| it.occ),
        TouchField::Source => CdCol::Str(
            pts.iter().map(|(it, _)| it.line.0).collect(),
            d.sources.clone(),
        ),
        TouchField::Address => u(&|_, e| d.shape.addr_of(e)),
        TouchField::Pattern => CdCol::Str(
            pts.iter()
                .map(|(it, _)| d.ann.patterns.id(it.var, it.line))
                .collect(),
            d.ann.patterns.names.clone(),
        ),
        TouchField::Row => CdCol::U64(ijk.iter().map(|p| p.0).collect()),
        TouchField::Col => column_data(d.shape, ijk.iter().map(|p| p.1).collect()),
        TouchField::Depth => CdCol::U64(ijk.iter().map(|p| p.2).collect()),
    })
}

/// The column index of each point as customdata: the field's name for an
/// array of structures, else the index.
pub(super) fn column_data(shape: &Shape, j: Vec<u64>) -> CdCol {
    if shape.fields.is_empty() {
        return CdCol::U64(j);
    }
    let names = shape.fields.iter().map(|f| f.1.clone()).collect();
    CdCol::Str(j.into_iter().map(|j| j as u32).collect(), Arc::new(names))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vis::page::traces::referenced;

    /// Each hover shows every field of its points' customdata row, and no
    /// position beyond it: a 2D element's row ends at its column.
    #[test]
    fn hovers_show_exactly_their_rows() {
        let row = |last: usize| (0..=last).collect();
        let col = TouchField::Col.index();
        assert_eq!(referenced(&exact_hover("a", false, false)), row(col));
        assert_eq!(referenced(&exact_hover("a", false, true)), row(col));
        let depth = TouchField::Depth.index();
        assert_eq!(referenced(&exact_hover("a", true, false)), row(depth));
    }
}
