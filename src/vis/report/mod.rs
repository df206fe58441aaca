//! The report pages, each drawn from a report of the analysis stage: the
//! advice (`advice.rs`), the cache summary (`locality.rs`), two runs side by side (`compare.rs`), a
//! metric across runs (`runs.rs`), cache lines shared between threads
//! (`sharing.rs`), a layout's what-if (`whatif.rs`), the annotated source
//! (`source.rs`) and the heap profile (`heap.rs`).

pub(in crate::vis) mod advice;
pub(in crate::vis) mod compare;
pub(in crate::vis) mod heap;
pub(in crate::vis) mod locality;
pub(in crate::vis) mod runs;
pub(in crate::vis) mod sharing;
pub(in crate::vis) mod source;
pub(in crate::vis) mod whatif;

pub use advice::{advice_figure, AdviceEntry, ADVICE_FILE};
pub use compare::{compare_page, ComparePage, RunView};
pub use heap::{heap_figures, lifetime_histogram};
pub use locality::{cache_summary, curves_of, VarMisses};
pub use runs::{runs_figure, RunLabel, Series as RunSeries};
pub use sharing::{sharing_figure, SharedBytes};
pub use source::{write_pages as write_source_pages, write_run_pages as write_run_source_pages};
pub use whatif::{what_if_figure, what_if_file, Panel as WhatIfPanel, WhatIfFigure};
