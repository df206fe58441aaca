//! The allocation side of a run: allocation sites, allocator statistics,
//! live heap over time and block lifetimes.
//!
//! Two sources feed the same model, a [`HeapRun`] (allocator calls in time
//! order, with interned stacks):
//!
//! * a native heap profile ([`HeapRun::open_profile`]), timed in
//!   nanoseconds, with each call's own duration, usable sizes and RSS,
//!   whose calls stay in the file and are streamed on each pass;
//! * a mapvis Valgrind trace ([`HeapRun::from_trace`]), whose time axis is
//!   Steve's *operations* (every recorded access plus every allocator call),
//!   with the tool's 8-frame stacks; times of calls are not measured there.
//!   Its calls also stay in the file: each pass reads the trace again,
//!   counting the accesses without keeping them.
//!
//! [`HeapReport::build_by_pass`], [`live_series`] and [`lifetime_bins`]
//! each make one pass over the calls with a map from live block address to
//! block: cost O(calls), memory one entry per live block plus one row per
//! site, never one per call. A native profile of format 5 also carries the
//! summary the profiler kept while recording (the same counts, taken in
//! the same order: `trace/heap/heapsum.rs`), which [`HeapReport::build`] takes
//! instead of a pass: cost O(sites).
//!
//! From format 7 a native profile is by default recorded without its calls
//! ([`HeapRun::has_calls`]): the summary then holds everything, the live
//! heap over time and the lifetime histogram included, and
//! [`HeapReport::build`], [`live_series`] and [`lifetime_bins`] read it
//! (cost O(sites + buckets)); what needs each call
//! ([`HeapRun::for_each_call`], [`block_lives`]) is an error naming the
//! file, never an empty run.
//!
//! The wing's files, lowest first: `run.rs` (the calls of a run, from
//! either source), then `report.rs` (sites, classes, statistics),
//! `series.rs` (the live heap over time) and `lifetimes.rs` (block
//! lifetimes), which read a run and not each other. This file is their
//! facade.

mod lifetimes;
mod report;
mod run;
mod series;
#[cfg(test)]
pub(crate) mod tests;

pub use crate::trace::heap::{ClassStats, SiteStats};
pub use lifetimes::{block_lives, lifetime_bins, BlockLife, LifetimeBins};
pub use report::{
    duration_note, free_kind_name, size_class, size_class_label, timing_note, write_sites_csv,
    write_stats_csv, HeapReport, Ranking, TimeRow,
};
pub use run::{run_exe, HeapCall, HeapRun, TimeUnit};
pub use series::{live_series, LiveSeries};
