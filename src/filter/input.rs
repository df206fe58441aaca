//! The inputs the driver names accesses from: a [`Source`] hands over
//! named accesses in time order, a batch at a time, and at the end its
//! variables and heap blocks ([`Named`]). mapvis' binary traces and
//! Gleipnir's text traces are the two sources.
use super::access::{NamedAccess, VarId};
use super::error::FilterError;
use super::model::{Span, TraceSummary};
use super::registry::Registry;

/// How a source's [`Source::fill`] ended.
pub(crate) enum Fill {
    /// The batch is full; more follows.
    Full,
    /// A new traced region starts after the accesses in the batch.
    Region(u32),
    /// The input is over (or unreadable past this point, with a note).
    End,
}

/// What a source hands over at the end: everything but the accesses.
pub(crate) struct Named {
    /// The variables and heap blocks.
    pub(crate) registry: Registry,
    /// Source lines (`file.c:LINE`), by line row.
    pub(crate) lines: Vec<String>,
    /// What the input said about itself (accesses and threads are the
    /// driver's).
    pub(crate) summary: TraceSummary,
}

/// An input the driver names accesses from.
pub(crate) trait Source {
    /// Appends named accesses (their `time` unset) to `out` until it holds
    /// `room`, a region starts, or the input ends. Accesses already in
    /// `out` when it is called may be taken back (GL_STOP's own stores).
    fn fill(&mut self, out: &mut Vec<NamedAccess>, room: usize) -> Result<Fill, FilterError>;
    /// Where variable row `var` lies. Fixed once the row exists (and
    /// final when [`Self::spans_final`] says so).
    fn span(&self, var: VarId) -> Span;
    /// The member path of the location `addr` of variable row `var`
    /// (`h.counts`), when the variable is a structure or an array of them.
    /// Asked once per unique location when the tables are built, never
    /// per access.
    fn element(&mut self, addr: u64, var: VarId) -> Option<String>;
    /// Number of variable rows so far.
    fn vars(&self) -> usize;
    /// Whether [`Self::span`] is final when a variable is first accessed
    /// (the base and element size the variable table will have), so that
    /// consumers may index by it while the analysis streams.
    fn spans_final(&self) -> bool;
    /// Ends the input.
    fn finish(self: Box<Self>) -> Named;
}
