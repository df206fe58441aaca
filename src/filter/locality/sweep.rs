//! One metric of each variable across saved runs (`plot_runs`): the
//! numbers of each run's own cache report, picked by the name cache_stats
//! gives them, so a sweep over block sizes or layouts reads as one table.
use super::report::{CacheReport, Row};

/// A per-variable number of `cache_stats`, named by its dict key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// `accesses`.
    Accesses,
    /// `misses_LEVEL`: misses at the level of this index, innermost first.
    Misses(usize),
    /// `compulsory`: the first level's compulsory misses.
    Compulsory,
    /// `compulsory_LEVEL`, `capacity_LEVEL`, `conflict_LEVEL`: the level's
    /// misses of that class (0, 1, 2 in that order).
    Class(usize, usize),
    /// `miss_ratio`: L1 misses per access.
    MissRatio,
    /// `line_bytes_used`: bytes used per line fetched into L1.
    LineBytesUsed,
}

impl Metric {
    /// The metric named `name` under a model whose levels are `levels`
    /// (`L1`, `L2`, …).
    ///
    /// # Errors
    /// An unknown name, in words that list the names there are.
    pub fn parse(name: &str, levels: &[String]) -> Result<Metric, String> {
        let level = name
            .strip_prefix("misses_")
            .and_then(|l| levels.iter().position(|x| x == l));
        let class = ["compulsory_", "capacity_", "conflict_"]
            .iter()
            .enumerate()
            .find_map(|(k, p)| {
                let l = name.strip_prefix(p)?;
                Some(Metric::Class(levels.iter().position(|x| x == l)?, k))
            });
        if let Some(m) = class {
            return Ok(m);
        }
        match (name, level) {
            (_, Some(i)) => Ok(Metric::Misses(i)),
            ("accesses", _) => Ok(Metric::Accesses),
            ("compulsory", _) => Ok(Metric::Compulsory),
            ("miss_ratio", _) => Ok(Metric::MissRatio),
            ("line_bytes_used", _) => Ok(Metric::LineBytesUsed),
            _ => Err(format!(
                "\"{name}\" is not a metric of cache_stats: give one of {}",
                Metric::names(levels).join(", ")
            )),
        }
    }

    /// Every metric's name under `levels`, as cache_stats' dicts key them.
    pub fn names(levels: &[String]) -> Vec<String> {
        let mut v = vec!["accesses".to_string()];
        v.extend(levels.iter().map(|l| format!("misses_{l}")));
        v.extend(["compulsory", "miss_ratio", "line_bytes_used"].map(String::from));
        for l in levels {
            v.extend(["compulsory", "capacity", "conflict"].map(|c| format!("{c}_{l}")));
        }
        v
    }

    /// Whether the metric counts (an integer) rather than divides.
    pub fn is_count(self) -> bool {
        !matches!(self, Metric::MissRatio | Metric::LineBytesUsed)
    }

    /// The metric of one per-variable row.
    pub fn of(self, row: &Row) -> f64 {
        let c = &row.counts;
        match self {
            Metric::Accesses => c.accesses as f64,
            Metric::Misses(i) => c.misses.get(i).copied().unwrap_or(0) as f64,
            Metric::Compulsory => c.compulsory() as f64,
            Metric::Class(i, k) => {
                c.classes
                    .get(i)
                    .map_or(0, |m| [m.compulsory, m.capacity, m.conflict][k]) as f64
            }
            Metric::MissRatio => row.miss_ratio(),
            Metric::LineBytesUsed => row.bytes_per_line(),
        }
    }
}

/// One saved run's cache report, under its label.
pub struct RunReport {
    /// The run's label.
    pub label: String,
    /// Whether its trace and analysis were complete.
    pub complete: bool,
    /// Its cache report under the current model.
    pub report: CacheReport,
}

/// The metric of one variable in one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunValue {
    /// The run's label.
    pub run: String,
    /// Whether that run was complete.
    pub complete: bool,
    /// Variable name, as cache_stats names it.
    pub variable: String,
    /// The metric's value.
    pub value: f64,
}

/// `metric` of each variable of each run, runs in the order given and
/// variables in each report's order; only the variables named in `vars`
/// when it is not empty. Cost: O(variables) per run.
pub fn metric_by_run(runs: &[RunReport], metric: Metric, vars: &[String]) -> RunValues {
    let mut out = Vec::new();
    for r in runs {
        for row in r.report.per_variable() {
            if vars.is_empty() || vars.contains(&row.key) {
                out.push(RunValue {
                    run: r.label.clone(),
                    complete: r.complete,
                    value: metric.of(&row),
                    variable: row.key,
                });
            }
        }
    }
    RunValues(out)
}

/// The values [`metric_by_run`] picks, in its order; a slice of
/// [`RunValue`]s that also makes its table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunValues(pub Vec<RunValue>);

impl std::ops::Deref for RunValues {
    type Target = [RunValue];
    fn deref(&self) -> &[RunValue] {
        &self.0
    }
}

impl RunValues {
    /// See [`metric_table`].
    pub fn table(&self) -> polars::prelude::PolarsResult<polars::prelude::DataFrame> {
        metric_table(self)
    }
}

/// The values as a table: `run`, `complete`, `variable`, `value`.
///
/// # Errors
/// Only if polars refuses the columns (they have equal lengths).
pub fn metric_table(
    values: &[RunValue],
) -> polars::prelude::PolarsResult<polars::prelude::DataFrame> {
    use polars::prelude::{Column, DataFrame};
    DataFrame::new(vec![
        Column::new(
            "run".into(),
            values.iter().map(|v| v.run.clone()).collect::<Vec<_>>(),
        ),
        Column::new(
            "complete".into(),
            values.iter().map(|v| v.complete).collect::<Vec<_>>(),
        ),
        Column::new(
            "variable".into(),
            values
                .iter()
                .map(|v| v.variable.clone())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "value".into(),
            values.iter().map(|v| v.value).collect::<Vec<_>>(),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_parse_by_cache_stats_keys() {
        let levels = vec!["L1".to_string(), "L2".to_string()];
        assert_eq!(Metric::parse("misses_L2", &levels), Ok(Metric::Misses(1)));
        assert_eq!(Metric::parse("accesses", &levels), Ok(Metric::Accesses));
        assert_eq!(Metric::parse("miss_ratio", &levels), Ok(Metric::MissRatio));
        let e = Metric::parse("misses_L3", &levels).unwrap_err();
        assert!(e.contains("misses_L2") && e.contains("misses_L3"), "{e}");
        assert!(Metric::Misses(0).is_count() && !Metric::MissRatio.is_count());
    }
}
