//! Two runs side by side: `compare_runs`.
//!
//! Variables are aligned by name, never by address: two builds of a
//! program place their arrays at different addresses, and the same binary
//! traced from another folder may too. mapvis's names are unique within a
//! run (instances are numbered, `arr#2`, and a name that means a heap
//! block and a stack pointer is told apart by scope, `arr@S`), so a name
//! picks one variable in each run, and a name found in one run only is
//! listed apart. Each side's numbers are that run's own `cache_stats`
//! numbers, computed with the same cache model.
use super::cache::Counts;
use super::report::{bin_range, natural_cmp, CacheReport, Row};
use super::reuse::Histogram;

/// What one run says of one variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    /// Accesses, misses per level, compulsory misses, lines fetched and
    /// bytes of them used, as `cache_stats` counts them.
    pub counts: Counts,
    /// L1 misses per access.
    pub miss_ratio: f64,
    /// Bytes used of each line fetched into L1, of the line size.
    pub line_bytes_used: f64,
    /// Median reuse distance in distinct cache lines, as the bounds of
    /// the power-of-two bin it falls in; `None` when no access was a reuse.
    pub reuse_median: Option<(u64, u64)>,
    /// The 90th percentile of the reuse distance, the same way.
    pub reuse_p90: Option<(u64, u64)>,
    /// The pattern label of the variable's busiest source line.
    pub pattern: String,
}

/// One variable of either run.
#[derive(Clone, Debug, PartialEq)]
pub struct VarComparison {
    /// Its name in both runs.
    pub variable: String,
    /// What run A says of it; `None` when A has no variable of that name.
    pub a: Option<Side>,
    /// What run B says of it.
    pub b: Option<Side>,
}

impl VarComparison {
    /// Change in misses at `level` from A to B (a variable missing from a
    /// run counts as 0 there).
    pub fn miss_change(&self, level: usize) -> i64 {
        let m = |s: &Option<Side>| s.as_ref().map_or(0, |s| s.counts.misses[level] as i64);
        m(&self.b) - m(&self.a)
    }

    /// Whether the variable is in both runs.
    pub fn in_both(&self) -> bool {
        self.a.is_some() && self.b.is_some()
    }
}

/// The variables of `a` and `b` (both `cache_stats` reports under the same
/// model), aligned by name: those in both runs first, by the largest change
/// in misses (L1, then the outer levels, then the name), then those found
/// in one run only. Cost: one pass over each report's pairs.
pub fn compare(a: &CacheReport, b: &CacheReport) -> Vec<VarComparison> {
    let sa = sides(a);
    let sb = sides(b);
    let mut names: Vec<&String> = sa.keys().chain(sb.keys()).collect();
    names.sort_by(|x, y| natural_cmp(x, y));
    names.dedup();
    let mut out: Vec<VarComparison> = names
        .into_iter()
        .map(|n| VarComparison {
            variable: n.clone(),
            a: sa.get(n).cloned(),
            b: sb.get(n).cloned(),
        })
        .collect();
    out.sort_by(|x, y| {
        let key = |c: &VarComparison| {
            (
                !c.in_both(),
                std::cmp::Reverse(c.miss_change(0).unsigned_abs()),
                std::cmp::Reverse(c.miss_change(1).unsigned_abs()),
                std::cmp::Reverse(c.miss_change(2).unsigned_abs()),
            )
        };
        key(x)
            .cmp(&key(y))
            .then_with(|| natural_cmp(&x.variable, &y.variable))
    });
    out
}

/// Each listed display row of `r` (a variable, or blocks grouped under one
/// name as `memory_stats` groups them) by name.
fn sides(r: &CacheReport) -> std::collections::BTreeMap<String, Side> {
    let busiest = busiest_patterns(r);
    let hists: std::collections::BTreeMap<String, Histogram> = r
        .row_histograms()
        .into_iter()
        .map(|(row, h)| (r.names.row_name(row).to_string(), h))
        .collect();
    let mut out = std::collections::BTreeMap::new();
    for row in r.per_variable() {
        let side = side(&row, hists.get(&row.key), busiest.get(&row.key).cloned());
        out.insert(row.key.clone(), side);
    }
    out
}

fn side(row: &Row, hist: Option<&Histogram>, pattern: Option<String>) -> Side {
    Side {
        counts: row.counts,
        miss_ratio: row.miss_ratio(),
        line_bytes_used: row.bytes_per_line(),
        reuse_median: hist.and_then(|h| quantile(h, 0.5)),
        reuse_p90: hist.and_then(|h| quantile(h, 0.9)),
        pattern: pattern.unwrap_or_default(),
    }
}

/// The pattern label of each display row's busiest (row, line) pair.
fn busiest_patterns(r: &CacheReport) -> std::collections::BTreeMap<String, String> {
    let mut best: std::collections::BTreeMap<String, (u64, String)> = Default::default();
    for p in r.per_pair() {
        let n = p.counts.accesses;
        match best.get(&p.key) {
            Some((m, _)) if *m >= n => {}
            _ => {
                best.insert(p.key.clone(), (n, p.pattern));
            }
        }
    }
    best.into_iter().map(|(k, (_, p))| (k, p)).collect()
}

/// The bin (as its distance bounds) holding the `q` quantile of the
/// reuses (cold references left out); `None` when there is no reuse.
pub fn quantile(h: &Histogram, q: f64) -> Option<(u64, u64)> {
    let reuses: u64 = h.bins.iter().sum();
    if reuses == 0 {
        return None;
    }
    let rank = ((reuses as f64) * q).ceil().max(1.0) as u64;
    let mut seen = 0u64;
    for (k, n) in h.bins.iter().enumerate() {
        seen += n;
        if seen >= rank {
            return Some(bin_range(k));
        }
    }
    None
}

/// A reuse distance bin as text: `0`, `64-127`.
pub fn distance_text(d: Option<(u64, u64)>) -> String {
    match d {
        None => "-".into(),
        Some((lo, hi)) if lo == hi => lo.to_string(),
        Some((lo, hi)) => format!("{lo}-{hi}"),
    }
}

/// `b - a` with its change in percent of `a` (`+12 (+3.4%)`); `new` when
/// `a` is 0 and `b` is not.
pub fn change_text(a: f64, b: f64) -> String {
    let d = b - a;
    let abs = if d.fract() == 0.0 {
        format!("{d:+.0}")
    } else {
        format!("{d:+.3}")
    };
    if a == 0.0 {
        return if d == 0.0 {
            abs
        } else {
            format!("{abs} (new)")
        };
    }
    format!("{abs} ({:+.1}%)", 100.0 * d / a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_fall_in_the_bin_that_holds_them() {
        let mut h = Histogram::default();
        h.add(Some(0), 5);
        h.add(Some(100), 4);
        h.add(Some(1000), 1);
        h.add(None, 50);
        assert_eq!(quantile(&h, 0.5), Some((0, 0)));
        assert_eq!(quantile(&h, 0.9), Some((64, 127)));
        assert_eq!(quantile(&h, 1.0), Some((512, 1023)));
        assert_eq!(quantile(&Histogram::default(), 0.5), None);
    }

    #[test]
    fn changes_read_as_people_say_them() {
        assert_eq!(change_text(200.0, 100.0), "-100 (-50.0%)");
        assert_eq!(change_text(0.0, 3.0), "+3 (new)");
        assert_eq!(change_text(0.0, 0.0), "+0");
        assert_eq!(change_text(0.5, 0.25), "-0.250 (-50.0%)");
    }
}
