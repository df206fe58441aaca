//! The named access: the hand-off between naming and everything after it.
//!
//! The analysis names each access of a trace and hands the named accesses,
//! in time order and in batches, to its consumers (on a thread of their
//! own, in the consume module): the lookup table, the pattern states and
//! the on-disk access list; later the locality sinks and the order data
//! read the access list back in the same form. No consumer needs the whole
//! access list in memory.

/// A row of the variable table: a heap block instance, a stack variable
/// in one frame, a global, or a scope's unnamed memory.
///
/// The in-memory type of a variable id everywhere past the access columns
/// (which, on disk and in the Parquet tables, stay `u32`): transparent over
/// its `u32`, so comparing or indexing by it costs what the bare number
/// does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct VarId(pub u32);

/// A row of the line table: one `file.c:LINE` (row 0 may be `?`). Like
/// [`VarId`], the in-memory type; the line columns stay `u32`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct LineId(pub u32);

impl VarId {
    /// The row as an index into per-variable vectors.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for VarId {
    /// The bare row number, as the tables and messages show it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl LineId {
    /// The row as an index into per-line vectors.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One named access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct NamedAccess {
    /// 0-based order of the access in the analysed trace (64 bits: traces
    /// pass 2^32 accesses).
    pub time: u64,
    /// `b'L'`, `b'S'` or `b'M'` (see [`super::schema`]).
    pub op: u8,
    /// Address of the first byte.
    pub addr: u64,
    /// Bytes accessed (at least 1).
    pub size: u32,
    /// Thread number (1 is the main thread).
    pub tid: u32,
    /// Row of the variable table.
    pub var: VarId,
    /// Row of the line table.
    pub line: LineId,
}

impl NamedAccess {
    /// Whether the access writes memory (a store or a modify).
    #[inline]
    pub fn writes(&self) -> bool {
        self.op != super::schema::OP_LOAD
    }
}

/// A consumer of named accesses in time order.
pub trait AccessSink {
    /// Consumes the next accesses, in time order. Called once per batch, so
    /// the per-access loop is monomorphic inside each sink.
    fn accesses(&mut self, batch: &[NamedAccess]);
}

/// A consumer the analysis driver hands each batch to while it streams,
/// on its consumer thread, beside the lookup table and the access list.
/// Unlike an [`AccessSink`] (which knows its variables beforehand), it
/// learns where a variable lies from the driver when the variable first
/// shows. The caller of the driver chooses the sink (the pattern states),
/// so the driver depends on no analysis.
pub trait SpanSink: Send + 'static {
    /// Takes a batch, asking `span` for (base address, element size) of a
    /// variable it meets for the first time.
    fn add(&mut self, batch: &[NamedAccess], span: &dyn Fn(VarId) -> (u64, u64));
}

/// The sink of an analysis that wants none.
impl SpanSink for () {
    fn add(&mut self, _: &[NamedAccess], _: &dyn Fn(VarId) -> (u64, u64)) {}
}
