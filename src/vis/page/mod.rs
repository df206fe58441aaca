//! What every page is made of: the offline HTML page and the shared
//! `plotly.min.js` (`html.rs`), `figures/index.html` (`index.rs`), text
//! made safe for HTML (`escape.rs`), what a page was drawn from
//! (`sources.rs`), the traces' typed arrays, customdata and markers
//! (`traces.rs`, `typed.rs`), and what a figure command wrote
//! (`written.rs`).

pub(in crate::vis) mod escape;
pub(in crate::vis) mod html;
pub(in crate::vis) mod index;
pub(in crate::vis) mod sources;
pub(in crate::vis) mod traces;
pub(in crate::vis) mod typed;
pub(in crate::vis) mod written;

pub use html::{ensure_plotly_js, file_word, PLOTLY_JS, PLOTLY_JS_NAME};
pub use index::{write_index, INDEX_FILE};
pub use sources::{analysis_source, file_source};
pub use written::FigureReport;
