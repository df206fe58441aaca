//! The analysis' entry points: an input (a mapvis binary trace or a
//! Gleipnir text trace) through the driver, with the pattern states as the
//! driver's extra consumer and, when asked, the cache model as its
//! follower. This is where the naming inputs, the driver
//! and the pattern sink meet, so that none of them imports another.
use std::path::Path;

use crate::trace::naming::Namer;

use super::analysis::Analysis;
use super::binary::BinarySource;
use super::driver::{drive, finish, Keep};
use super::error::FilterError;
use super::import::GleipnirSource;
use super::locality::pattern::PatternSink;
use super::locality::recorded::{LocalityFeed, LocalityPlan};

/// Reads the trace at `path` (a mapvis binary trace, or a Gleipnir text
/// trace) and names every access with `namer`, keeping the whole access
/// list in memory.
///
/// A truncated trace is analysed up to its cut, with a note saying so; a
/// corrupt one is analysed up to the bad record, with a note that says
/// where. Cost: one pass over the trace.
pub fn analyse(path: &Path, namer: &mut dyn Namer) -> Result<Analysis, FilterError> {
    analyse_into(path, namer, &mut |_| {}, &Keep::MEMORY)
}

/// [`analyse`] with a progress callback, called every `PROGRESS_EVERY` (driver)
/// accesses with the number analysed so far, and the access list kept as
/// `keep` says. When cancelling is requested ([`crate::cancel`], Ctrl-C)
/// the analysis stops at the next of those points and covers the accesses
/// read up to there (a note says so): nothing already computed is lost.
pub fn analyse_into(
    path: &Path,
    namer: &mut dyn Namer,
    progress: &mut dyn FnMut(u64),
    keep: &Keep,
) -> Result<Analysis, FilterError> {
    analyse_recording(path, namer, progress, keep, None)
}

/// [`analyse_into`], also feeding the cache model and reuse distances of
/// `plan` as the accesses stream (on a thread of their own), so that the
/// analysis records their counts ([`Analysis::locality`]) and
/// `cache_stats` for that model only reads them. Memory: at most the
/// plan's budget more; past it the feed stops and nothing is recorded.
pub fn analyse_recording(
    path: &Path,
    namer: &mut dyn Namer,
    progress: &mut dyn FnMut(u64),
    keep: &Keep,
    plan: Option<&LocalityPlan>,
) -> Result<Analysis, FilterError> {
    let feed = plan.and_then(LocalityFeed::new);
    if crate::trace::record::looks_like_gleipnir(path) {
        analyse_text(path, namer, progress, keep, feed)
    } else {
        let mut src = Box::new(BinarySource::open(path, namer)?);
        let driven = drive_named(src.as_mut(), feed, progress, keep)?;
        with_patterns(finish(src, driven)?)
    }
}

/// Analyses a Gleipnir text trace, whatever its first lines look like,
/// keeping the access list in memory.
pub fn analyse_gleipnir(path: &Path, namer: &mut dyn Namer) -> Result<Analysis, FilterError> {
    analyse_text(path, namer, &mut |_| {}, &Keep::MEMORY, None)
}

/// [`analyse_into`] for a Gleipnir text trace.
fn analyse_text(
    path: &Path,
    namer: &mut dyn Namer,
    progress: &mut dyn FnMut(u64),
    keep: &Keep,
    feed: Option<LocalityFeed>,
) -> Result<Analysis, FilterError> {
    let mut src = Box::new(GleipnirSource::open(path, namer)?);
    let driven = drive_named(src.as_mut(), feed, progress, keep)?;
    src.check_nonempty(path)?;
    with_patterns(finish(src, driven)?)
}

/// The driver over `src`, with the pattern states as its extra consumer
/// and `feed` (if any) as its follower.
fn drive_named(
    src: &mut dyn super::input::Source,
    feed: Option<LocalityFeed>,
    progress: &mut dyn FnMut(u64),
    keep: &Keep,
) -> Result<super::driver::Driven<PatternSink, LocalityFeed>, FilterError> {
    drive(src, Some(PatternSink::streaming()), feed, progress, keep)
}

/// The analysis with the pattern states its sink gathered and the counts
/// its locality feed recorded.
fn with_patterns(
    (mut a, sink, feed): (Analysis, Option<PatternSink>, Option<LocalityFeed>),
) -> Result<Analysis, FilterError> {
    a.patterns = sink.map(PatternSink::into_states);
    a.locality = feed.and_then(LocalityFeed::finish);
    Ok(a)
}
