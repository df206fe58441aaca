//! Choosing accesses: a [`Selection`] of the access list by variable (the
//! memory kinds `set_mem_alloc` shows, or one array), and the rows of a
//! selection gathered in time order for small uses (tests, exports).

use polars::prelude::*;

use super::access::VarId;
use super::analysis::Analysis;
use super::error::FilterError;
use super::model::{self, shows, MemKind};
use super::{occurrence, schema};

/// A selection of the access list: the variables whose accesses it keeps,
/// and how many accesses those are. It refers to the access list rather
/// than listing accesses, so it costs nothing per access.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// Per variable row: whether its accesses are selected.
    pub keep: Vec<bool>,
    /// Accesses selected.
    pub count: u64,
    /// Bytes a pass may take to number the accesses by location (their
    /// occurrence): a quarter of the memory limit ([`Selection::within`]).
    pub occurrence_budget: u64,
}

/// The share of the memory limit a pass may take to number accesses by
/// location: a quarter.
const OCCURRENCE_SHARE: u64 = 4;

/// [`Selection::occurrence_budget`] unless [`Selection::within`] says
/// otherwise: the share of the largest default memory limit, 2 GB.
pub const OCCURRENCE_BUDGET: u64 = (2 << 30) / OCCURRENCE_SHARE;

impl Selection {
    /// The selection of the variables `keep` holds.
    pub fn of(a: &Analysis, keep: Vec<bool>) -> PolarsResult<Selection> {
        let per_var = a.accesses_per_var()?;
        let count = per_var
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(n, _)| n)
            .sum();
        Ok(Selection {
            keep,
            count,
            occurrence_budget: OCCURRENCE_BUDGET,
        })
    }

    /// This selection under a memory limit of `limit` bytes: its passes
    /// number the accesses by location in a quarter of it.
    #[must_use]
    pub fn within(mut self, limit: u64) -> Selection {
        self.occurrence_budget = limit / OCCURRENCE_SHARE;
        self
    }

    /// The error for a pass whose occurrence counters ran out of budget.
    pub(crate) fn too_many_locations(&self) -> FilterError {
        FilterError::TooManyLocations {
            budget_mb: self.occurrence_budget >> 20,
        }
    }

    /// Accesses selected.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Whether nothing is selected.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The per-variable filter a reader of the access list needs for this
    /// selection: `None` when every variable that was accessed is kept, so
    /// the reader passes rows through without looking at them.
    pub fn var_filter(&self, a: &Analysis) -> Option<&[bool]> {
        let everything = a
            .vars
            .iter()
            .enumerate()
            .all(|(v, var)| var.accessed.is_none() || self.keep.get(v) == Some(&true));
        (!everything).then_some(self.keep.as_slice())
    }

    /// The part of this selection whose variables `keep` also holds.
    pub fn narrow(&self, a: &Analysis, keep: &[bool]) -> PolarsResult<Selection> {
        let both = self
            .keep
            .iter()
            .enumerate()
            .map(|(v, k)| *k && keep.get(v).copied().unwrap_or(false))
            .collect();
        let mut s = Selection::of(a, both)?;
        s.occurrence_budget = self.occurrence_budget;
        Ok(s)
    }
}

/// The selection of `kind`: the accesses whose variable is shown (see
/// [`shows`]). Cost: one pass over the variables and unique locations.
pub fn select(a: &Analysis, kind: MemKind) -> PolarsResult<Selection> {
    Selection::of(a, a.vars.iter().map(|v| shows(kind, v)).collect())
}

/// The accesses of one variable (an array to draw), with their `time` and
/// `occurrence` columns and every access column.
pub fn accesses_of(a: &Analysis, var: VarId) -> Result<DataFrame, FilterError> {
    let keep: Vec<bool> = (0..a.vars.len()).map(|v| v == var.index()).collect();
    rows(a, &Selection::of(a, keep)?)
}

/// The access columns of a selection, gathered in time order: `time`
/// (UInt64), the stored columns, and `occurrence` (UInt64, 1-based: the
/// n-th access to its location), which is counted here as the rows stream
/// past.
///
/// Cost: one pass over the access list (from disk for windows not in
/// memory); 30 bytes per selected access in the result, plus one counter
/// per unique location selected. For small uses that need the rows
/// together (tests, exports); the figures stream a selection with
/// `SelectionBatches`, other consumers with
/// `AccessList::for_each`.
pub fn rows(a: &Analysis, sel: &Selection) -> Result<DataFrame, FilterError> {
    check_fits(sel.count)?;
    use schema::access as ac;
    let mut parts: Vec<DataFrame> = Vec::new();
    let mut seen = occurrence::Occurrences::new(&a.vars, sel.occurrence_budget);
    a.accesses.for_each(sel.var_filter(a), &mut |mut df| {
        let addr = df.column(ac::ADDR)?.u64()?.clone();
        let var = df.column(ac::VAR)?.u32()?.clone();
        let occ: Vec<u64> = addr
            .into_no_null_iter()
            .zip(var.into_no_null_iter())
            .map(|(addr, var)| seen.next(addr, var))
            .collect();
        if seen.uncounted() > 0 {
            return Err(sel.too_many_locations());
        }
        df.with_column(model::owned::<UInt64Type>(ac::OCCURRENCE, occ))?;
        parts.push(df);
        Ok(true)
    })?;
    let mut out = match parts.len() {
        0 => empty_rows()?,
        _ => {
            let mut it = parts.into_iter();
            let mut first = it.next().expect("one part");
            for p in it {
                first.vstack_mut_owned(p)?;
            }
            first
        }
    };
    out.rechunk_mut();
    Ok(out)
}

/// Bytes [`rows`] takes per access gathered: the columns (35 bytes), and
/// the parts that are joined at the end, which double them for a moment.
const GATHERED_BYTES: u64 = 70;

/// Refuses to gather `n` accesses when they would not fit in the memory
/// the machine has available (`MemAvailable` of `/proc/meminfo`; no limit
/// where that cannot be read), so a figure of a huge trace fails with a
/// message instead of being killed.
fn check_fits(n: u64) -> Result<(), FilterError> {
    let Some(free) = available_memory() else {
        return Ok(());
    };
    let need = n.saturating_mul(GATHERED_BYTES);
    if need <= free {
        return Ok(());
    }
    Err(FilterError::TooManyToGather {
        accesses: n,
        need_mb: need >> 20,
        free_mb: free >> 20,
    })
}

/// `MemAvailable` of `/proc/meminfo`, in bytes.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The columns of [`rows`] with no rows.
pub(crate) fn empty_rows() -> PolarsResult<DataFrame> {
    use schema::access as ac;
    DataFrame::new(vec![
        Column::new_empty(ac::TIME.into(), &DataType::UInt64),
        Column::new_empty(ac::OP.into(), &DataType::UInt8),
        Column::new_empty(ac::ADDR.into(), &DataType::UInt64),
        Column::new_empty(ac::SIZE.into(), &DataType::UInt16),
        Column::new_empty(ac::TID.into(), &DataType::UInt16),
        Column::new_empty(ac::VAR.into(), &DataType::UInt32),
        Column::new_empty(ac::LINE.into(), &DataType::UInt32),
        Column::new_empty(ac::OCCURRENCE.into(), &DataType::UInt64),
    ])
}
