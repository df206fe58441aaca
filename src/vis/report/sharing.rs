//! The sharing page, `figures/sharing.html`: for each cache line shared
//! between threads, the bytes each thread read and wrote.
//!
//! One figure per line: byte offset in the line along x (0 to 63), one row
//! per thread, a square per byte the thread touched, coloured by what it did
//! (read, written, read and written). Hover names the byte's variable and
//! field (`hits.b`), so false sharing shows as two threads writing disjoint
//! bytes of one line, and true sharing as overlapping ones.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use plotly::common::{Marker, MarkerSymbol, Mode, Title};
use plotly::layout::{Axis, AxisRange};
use plotly::{Layout, Plot, Scatter};

use crate::vis::error::VisError;
use crate::vis::page::html::{write_page, PageFigure, PageMeta};
use crate::vis::page::traces::{customdata_fields, CdCol, CdField, CustomData, Ext};

/// File name of the page.
pub const FILE: &str = "sharing.html";

/// Most lines drawn; the page says how many more there were.
pub const MAX_LINES: usize = 32;

/// One shared line, as drawn.
#[derive(Clone, Debug)]
pub struct SharedBytes {
    /// Address of the line.
    pub addr: u64,
    /// Line size in bytes (at most 64 are drawn).
    pub line: u32,
    /// True or false sharing, or both, or none.
    pub kind: crate::filter::SharingKind,
    /// Cross-thread transfers.
    pub transfers: u64,
    /// Per thread: (tid, bits of bytes read, bits of bytes written).
    pub threads: Vec<(u32, u64, u64)>,
    /// Name of each byte of the line (variable and field).
    pub byte_names: Vec<String>,
    /// The variables on the line, as `sharing_stats` lists them (also
    /// rows without an extent of their own, such as `<stack>`).
    pub variables: Vec<String>,
}

/// What a thread did to a byte, in drawing order.
const USES: [(&str, &str); 3] = [
    ("read", "#4e79a7"),
    ("written", "#e15759"),
    ("read and written", "#b07aa1"),
];

customdata_fields! {
    /// The customdata of one byte of a line, in row order.
    ByteField {
        /// Offset in the line.
        Byte,
        Thread,
        /// What the byte holds (`s.count`, `s+4`).
        Name,
    }
}

/// Hover of one byte that a thread `what` (read, written or both).
fn hover(what: &str) -> String {
    use ByteField::*;
    format!(
        "byte {byte}<br>thread {tid}<br>{name}<br>{what}<extra></extra>",
        byte = Byte.at(),
        tid = Thread.at(),
        name = Name.at(),
    )
}

/// The figure of one line.
fn line_plot(l: &SharedBytes) -> Plot {
    let names = Arc::new(l.byte_names.clone());
    let mut p = Plot::new();
    for (u, (what, colour)) in USES.iter().enumerate() {
        let mut pts: Vec<(u64, u32)> = Vec::new();
        for &(tid, read, written) in &l.threads {
            for b in 0..l.line.min(64) as u64 {
                let (r, w) = (read >> b & 1 == 1, written >> b & 1 == 1);
                let use_ = match (r, w) {
                    (true, false) => 0,
                    (false, true) => 1,
                    (true, true) => 2,
                    (false, false) => continue,
                };
                if use_ == u {
                    pts.push((b, tid));
                }
            }
        }
        if pts.is_empty() {
            continue;
        }
        let t = Scatter::new(
            pts.iter().map(|p| p.0).collect::<Vec<_>>(),
            pts.iter().map(|p| p.1).collect::<Vec<_>>(),
        )
        .mode(Mode::Markers)
        .name(*what)
        .marker(
            Marker::new()
                .color(*colour)
                .symbol(MarkerSymbol::Square)
                .size(11),
        )
        .hover_template(hover(what));
        let cd = CustomData::of(|f| match f {
            ByteField::Byte => CdCol::U64(pts.iter().map(|p| p.0).collect()),
            ByteField::Thread => CdCol::U64(pts.iter().map(|p| p.1 as u64).collect()),
            ByteField::Name => CdCol::Str(pts.iter().map(|p| p.0 as u32).collect(), names.clone()),
        });
        p.add_trace(Ext::new(*t).custom(cd).boxed());
    }
    let tids: Vec<f64> = l.threads.iter().map(|t| t.0 as f64).collect();
    p.set_layout(
        Layout::new()
            .x_axis(
                Axis::new()
                    .title(Title::with_text("byte offset in the line"))
                    .range(AxisRange::new(-0.5, l.line.min(64) as f64 - 0.5))
                    .dtick(8.0),
            )
            .y_axis(
                Axis::new()
                    .title(Title::with_text("thread"))
                    .tick_values(tids.clone())
                    .tick_text(tids.iter().map(|t| format!("thread {t}")).collect()),
            )
            .hover_mode(plotly::layout::HoverMode::Closest),
    );
    p
}

/// Writes the sharing page into `dir`: the first [`MAX_LINES`] of `lines`
/// (the caller orders them, most transfers first). Cost: at most 64 points
/// per thread and line. `analysis_id` says which analysis the lines come
/// from (see [`crate::vis::options::FigureOptions::analysis_id`]).
///
/// # Errors
/// A file that cannot be written.
pub fn sharing_figure(
    dir: &Path,
    lines: &[SharedBytes],
    intro: &[String],
    analysis_id: &str,
) -> Result<PathBuf, VisError> {
    let mut intro = intro.to_vec();
    if lines.len() > MAX_LINES {
        intro.push(format!(
            "{} lines are shared; the {MAX_LINES} with the most transfers are drawn (sharing_stats save writes them all to visinfo/sharing_stats.csv).",
            lines.len()
        ));
    }
    if lines.is_empty() {
        intro.push("No cache line is written by one thread and touched by another.".into());
    }
    let figures: Vec<PageFigure> = lines
        .iter()
        .take(MAX_LINES)
        .map(|l| {
            PageFigure {
                heading: format!(
                    "line 0x{:x}: {} sharing, {} transfers ({})",
                    l.addr,
                    l.kind,
                    l.transfers,
                    l.variables.join(", ")
                ),
                note: "Each square is a byte a thread touched: read, written, or both. Disjoint bytes written by different threads are false sharing; the same bytes are true sharing. Hover for the variable and field.".into(),
                plot: line_plot(l),
                height: (160 + 40 * l.threads.len()).min(600) as u32,
            }
        })
        .collect();
    let meta = PageMeta {
        command: "sharing_stats save".into(),
        shape: format!("{} shared lines", lines.len()),
        trace: String::new(),
        analysis: analysis_id.to_string(),
    };
    write_page(
        dir,
        FILE,
        "Cache lines shared between threads, byte by byte",
        &intro,
        &figures,
        &meta,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hover shows every field of a byte's customdata row.
    #[test]
    fn hover_shows_exactly_its_row() {
        let all = (0..ByteField::ALL.len()).collect();
        assert_eq!(crate::vis::page::traces::referenced(&hover("read")), all);
    }
}
