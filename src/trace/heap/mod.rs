//! The native heap profiler: every allocator call of a program, recorded
//! without Valgrind, and the profile read back.
//!
//! The room holds the `LD_PRELOAD` library that records the calls
//! (`preload/mv_heap.c`, built by `build.rs` and embedded in the binary),
//! running a program with it and reading the profile it writes
//! (`heapprof.rs`, format: `docs/heap-profile-format.md`), the decoder of
//! one thread's compressed blocks of calls (`callblocks.rs`, versions 3 to
//! 6) and the summary the library's collector writes while the program
//! runs (`heapsum.rs`). It is a recorder of its own, beside the Valgrind
//! tool: it shares with `record/` only the load map's type, the varints
//! and the helpers of running a child, which it takes through that room's
//! facade.
//!
//! This facade is the room's face: the other stages name
//! `crate::trace::heap::Name`, never a file of the room.

mod callblocks;
mod heapprof;
mod heapsum;

pub use heapprof::{
    install_preload, read_profile, run_profiled, run_profiled_with, HeapOp, Profile, ProfileError,
    ProfileEvent, ProfileOptions, ProfileReader, RegionMark,
};
pub use heapsum::{
    ClassStats, HeapCounts, HeapSummary, SeriesBucket, SiteSeries, SiteStats, SummaryDurations,
};
