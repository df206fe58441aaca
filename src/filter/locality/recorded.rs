//! The cache model and reuse distances fed while the analysis streams, and
//! the counts it saves, so that `cache_stats` for the model that was set
//! when the trace was analysed only reads and prints.
//!
//! The analysis hands every batch of named accesses, after its own
//! consumers, to a [`LocalityFeed`] on a thread of its own (see the consume
//! module): the set-associative simulation with its 3C yardsticks and the
//! exact (or sampled) reuse distances, the sinks `cache_stats` runs. While
//! the distances are exact and of one stream the first level sees whole
//! (one thread, or a shared first level), the first level's misses are
//! classed from them rather than by its own fully associative yardstick,
//! which would only repeat their work (the cache module's `Told`). The
//! pattern labels are the analysis' own pattern states. What they found is
//! saved with the analysis as `locality.json` ([`RecordedLocality`]): the
//! model and sampling it was computed for, the counts per (variable, line)
//! pair and the reuse histogram per variable. `cache_stats`, `what_if`'s
//! and `advise`'s recorded report, and `compare_runs` take it when the
//! model and sampling asked for are the same; any other model simulates
//! again from the saved accesses, as before.
//!
//! Memory: the reuse distances keep state per distinct line (about 60 to
//! 110 bytes, with their vectors' slack), which grows with the memory the
//! program touches; the model's own state is fixed but for a bit per line
//! seen. Past the plan's budget (counted as allocated, after each batch)
//! the feed stops and frees its state, and the
//! analysis saves no counts: `cache_stats` then simulates from the saved
//! accesses, within its own bound. So the analysis' peak grows by at most
//! the budget.
use super::cache::{CacheModel, CacheResult, CacheSim, Counts, Level, MissClasses, TOLD_COLD};
use super::reuse::{Histogram, ReuseResult, ReuseSink, Sampling, BINS};
use super::{AccessSink, LineId, NamedAccess, VarId};
pub use crate::filter::recorded::RecordedLocality;
use crate::filter::recorded::{PairCounts, RecordedReuse};

/// What the analysis feeds: the model and sampling `cache_stats` would use
/// now, and the memory the feed may take.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalityPlan {
    /// The cache model (`set_cache`).
    pub model: CacheModel,
    /// Sampled reuse distances (`set_reuse_sampling RATE`), or exact.
    pub sampling: Option<Sampling>,
    /// `set_reuse_sampling auto N`: exact reuse distances are fed only up
    /// to N accesses; past them the feed leaves them out, and
    /// `cache_stats` samples them (see the report's options).
    pub auto_above: Option<u64>,
    /// Bytes of state the feed may hold before it stops.
    pub budget: u64,
}

/// The cache simulation and reuse distances as one consumer of the
/// analysis' batches.
pub(crate) struct LocalityFeed {
    /// None once the feed stopped for want of memory.
    sim: Option<CacheSim>,
    /// None once left out (past the plan's `auto_above`).
    reuse: Option<ReuseSink>,
    fed: u64,
    plan: LocalityPlan,
    /// Whether the model's first level is classed from the reuse
    /// distances (its own yardstick left idle, see the cache module's
    /// `Told`): while the distances are exact and of one stream the level
    /// sees whole (they are over its lines: `reuse` is made at its line
    /// size). Once not, the yardstick is made again from them and takes
    /// over.
    told: bool,
    /// The distances of the batch being fed.
    dists: Vec<u64>,
}

impl LocalityFeed {
    /// A cold feed of `plan`; None when the model cannot be simulated
    /// (no level).
    pub(crate) fn new(plan: &LocalityPlan) -> Option<LocalityFeed> {
        let sim = CacheSim::new(&plan.model).ok()?;
        let line = plan.model.levels.first()?.line;
        Some(LocalityFeed {
            sim: Some(sim),
            reuse: Some(ReuseSink::new(line, plan.sampling)),
            fed: 0,
            plan: plan.clone(),
            told: plan.sampling.is_none(),
            dists: Vec::new(),
        })
    }

    /// What was fed, unless the feed stopped for want of memory.
    pub(crate) fn finish(self) -> Option<RecordedLocality> {
        let sim = self.sim?;
        let reuse = self.reuse.map(|r| record_reuse(&self.plan, r.finish()));
        Some(record(&self.plan, sim.finish(), reuse))
    }
}

impl AccessSink for LocalityFeed {
    fn accesses(&mut self, batch: &[NamedAccess]) {
        let Some(sim) = &mut self.sim else {
            return;
        };
        let fed = self.fed + batch.len() as u64;
        let exact = self.plan.sampling.is_none();
        // Past `auto N` the exact distances are left out, from the batch
        // that crosses N.
        let drop_reuse = exact && self.plan.auto_above.is_some_and(|n| fed > n);
        let tell = self.told && !drop_reuse && sim.may_be_told(batch);
        if self.told && !tell {
            if let Some(r) = &self.reuse {
                let lines = self.plan.model.levels[0].lines() as usize;
                sim.untell(&r.recent(lines), r.lines());
            }
            self.told = false;
        }
        match &mut self.reuse {
            Some(r) if tell => {
                self.dists.clear();
                r.accesses_telling(batch, &mut self.dists, TOLD_COLD);
                sim.accesses_told(batch, &self.dists);
            }
            _ => {
                sim.accesses(batch);
                if drop_reuse {
                    self.reuse = None;
                }
                if let Some(r) = &mut self.reuse {
                    r.accesses(batch);
                }
            }
        }
        self.fed = fed;
        let reuse = self.reuse.as_ref().map_or(0, ReuseSink::state_bytes);
        if sim.state_bytes() + reuse > self.plan.budget {
            (self.sim, self.reuse) = (None, None);
        }
    }
}

/// The counts of `c`, fed `plan`'s model, and the reuse distances `reuse`,
/// as the analysis keeps them.
fn record(plan: &LocalityPlan, c: CacheResult, reuse: Option<RecordedReuse>) -> RecordedLocality {
    RecordedLocality {
        levels: (plan.model.levels.iter())
            .map(|l| (l.level, l.size, l.ways, l.line))
            .collect(),
        accesses: c.accesses,
        threads: c.threads,
        pairs: c.pairs.iter().map(|(v, l)| (v.0, l.0)).collect(),
        counts: c.counts.iter().map(save_counts).collect(),
        reuse,
    }
}

/// The reuse distances `r` as the analysis keeps them.
fn record_reuse(plan: &LocalityPlan, r: ReuseResult) -> RecordedReuse {
    RecordedReuse {
        line: r.line,
        sampling: plan.sampling.map(|s| s.rate),
        per_var: (r.per_var.iter())
            .map(|h| {
                let used = h.last_bin().map_or(0, |k| k + 1);
                (h.bins[..used].to_vec(), h.cold)
            })
            .collect(),
        most_distant: (r.most_distant.iter())
            .map(|&(l, d, a, v)| (l, d, a, v.0))
            .collect(),
        distinct_lines: r.distinct_lines,
    }
}

/// Reading recorded counts back as the locality stage's reports take them.
pub trait Recorded {
    /// Whether these counts are what `cache_stats` would simulate for
    /// `model`: the same levels, wherever they were read from.
    fn answers(&self, model: &CacheModel) -> bool;
    /// The simulation's counts, as [`CacheSim::finish`] gave them, for
    /// `model` (which it [`Recorded::answers`]).
    fn cache_result(&self, model: &CacheModel) -> CacheResult;
    /// The reuse distances, as [`ReuseSink::finish`] gave them, when they
    /// were recorded for a first level of `line`-byte lines and `sampling`
    /// (they do not depend on sizes or ways).
    fn reuse_result(&self, line: u32, sampling: Option<Sampling>) -> Option<ReuseResult>;
}

impl Recorded for RecordedLocality {
    fn answers(&self, model: &CacheModel) -> bool {
        let same = |l: &Level, &(level, size, ways, line): &(u8, u64, u32, u32)| {
            (l.level, l.size, l.ways, l.line) == (level, size, ways, line)
        };
        model.levels.len() == self.levels.len()
            && model
                .levels
                .iter()
                .zip(&self.levels)
                .all(|(a, b)| same(a, b))
    }

    fn cache_result(&self, model: &CacheModel) -> CacheResult {
        CacheResult {
            model: model.clone(),
            pairs: (self.pairs.iter())
                .map(|&(v, l)| (VarId(v), LineId(l)))
                .collect(),
            counts: self.counts.iter().map(load_counts).collect(),
            accesses: self.accesses,
            threads: self.threads,
        }
    }

    fn reuse_result(&self, line: u32, sampling: Option<Sampling>) -> Option<ReuseResult> {
        let r = self.reuse.as_ref()?;
        if r.line != line || r.sampling != sampling.map(|s| s.rate) {
            return None;
        }
        Some(ReuseResult {
            line: r.line,
            per_var: (r.per_var.iter())
                .map(|(bins, cold)| {
                    let mut h = Histogram {
                        cold: *cold,
                        ..Histogram::default()
                    };
                    for (b, n) in h.bins.iter_mut().zip(bins.iter().take(BINS)) {
                        *b = *n;
                    }
                    h
                })
                .collect(),
            most_distant: (r.most_distant.iter())
                .map(|&(l, d, a, v)| (l, d, a, VarId(v)))
                .collect(),
            distinct_lines: r.distinct_lines,
            sampling: r.sampling.and_then(Sampling::new),
        })
    }
}

fn save_counts(c: &Counts) -> PairCounts {
    let k = |m: &MissClasses| [m.compulsory, m.capacity, m.conflict];
    let [a, b, c3] = [k(&c.classes[0]), k(&c.classes[1]), k(&c.classes[2])];
    [
        c.accesses,
        c.misses[0],
        c.misses[1],
        c.misses[2],
        a[0],
        a[1],
        a[2],
        b[0],
        b[1],
        b[2],
        c3[0],
        c3[1],
        c3[2],
        c.fetched,
        c.used_bytes,
        c.bytes,
    ]
}

fn load_counts(s: &PairCounts) -> Counts {
    let m = |i: usize| MissClasses {
        compulsory: s[i],
        capacity: s[i + 1],
        conflict: s[i + 2],
    };
    Counts {
        accesses: s[0],
        misses: [s[1], s[2], s[3]],
        classes: [m(4), m(7), m(10)],
        fetched: s[13],
        used_bytes: s[14],
        bytes: s[15],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts and histograms come back from their saved form unchanged.
    #[test]
    fn recorded_counts_survive_saving() {
        let model = CacheModel::fallback();
        let plan = LocalityPlan {
            model: model.clone(),
            sampling: None,
            auto_above: None,
            budget: u64::MAX,
        };
        let mut feed = LocalityFeed::new(&plan).unwrap();
        let batch: Vec<NamedAccess> = (0..20_000u64)
            .map(|i| NamedAccess {
                time: i,
                addr: 0x10_0000 + (i * 72) % 300_000,
                size: 8,
                var: VarId((i % 3) as u32),
                line: LineId((i % 5) as u32),
                tid: 1,
                ..Default::default()
            })
            .collect();
        let mut sim = CacheSim::new(&model).unwrap();
        let mut reuse = ReuseSink::new(64, None);
        feed.accesses(&batch);
        sim.accesses(&batch);
        reuse.accesses(&batch);
        let rec = feed.finish().unwrap();
        let dir = tempfile::tempdir().unwrap();
        rec.write_into(dir.path()).unwrap();
        let back = RecordedLocality::read(dir.path()).unwrap();
        assert_eq!(back, rec);
        let (c, r) = (sim.finish(), reuse.finish());
        assert_eq!(back.cache_result(&model).counts, c.counts);
        assert_eq!(back.cache_result(&model).pairs, c.pairs);
        let reuse = back.reuse_result(64, None).unwrap();
        assert_eq!(reuse.per_var, r.per_var);
        assert_eq!(reuse.most_distant, r.most_distant);
        assert!(back.answers(&model));
        assert!(back.reuse_result(64, Sampling::new(0.5)).is_none());
        assert!(back.reuse_result(128, None).is_none());
    }

    /// One 8-byte access to each of `lines` lines in turn.
    fn sweep(lines: u64) -> Vec<NamedAccess> {
        (0..lines)
            .map(|i| NamedAccess {
                addr: i * 64,
                size: 8,
                tid: 1,
                ..Default::default()
            })
            .collect()
    }

    /// Past its budget the feed stops and records nothing.
    #[test]
    fn a_feed_over_its_budget_records_nothing() {
        let plan = LocalityPlan {
            model: CacheModel::fallback(),
            sampling: None,
            auto_above: None,
            budget: 10_000,
        };
        let mut feed = LocalityFeed::new(&plan).unwrap();
        feed.accesses(&sweep(1000));
        assert!(feed.finish().is_none());
    }

    /// Past `auto_above` accesses the feed leaves the exact reuse
    /// distances out and still records the model's counts.
    #[test]
    fn past_the_auto_threshold_the_reuse_distances_are_left_out() {
        let plan = LocalityPlan {
            model: CacheModel::fallback(),
            sampling: None,
            auto_above: Some(500),
            budget: u64::MAX,
        };
        let mut feed = LocalityFeed::new(&plan).unwrap();
        feed.accesses(&sweep(400));
        feed.accesses(&sweep(400));
        let rec = feed.finish().unwrap();
        assert!(rec.reuse.is_none());
        assert_eq!(rec.accesses, 800);
        assert!(rec.answers(&CacheModel::fallback()));
    }

    /// A small two-level model where every miss class occurs.
    fn small() -> CacheModel {
        CacheModel {
            levels: vec![
                Level::new(1, 1024, 1, 64).unwrap(),
                Level::new(2, 4096, 4, 64).unwrap(),
            ],
            origin: "test".into(),
        }
    }

    /// A stream that reuses lines near and far, with accesses spanning two
    /// lines, on thread 1 until access `switch`, then on thread 2.
    fn mixed(n: u64, switch: u64) -> Vec<NamedAccess> {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let far = x.is_multiple_of(4);
                let addr = if far {
                    (x >> 8) % 40_000
                } else {
                    (i * 24) % 3000
                };
                NamedAccess {
                    time: i,
                    addr: 0x1000 + addr,
                    size: if x.is_multiple_of(7) { 16 } else { 8 },
                    var: VarId((x % 3) as u32),
                    line: LineId((i % 4) as u32),
                    tid: if i < switch { 1 } else { 2 },
                    ..Default::default()
                }
            })
            .collect()
    }

    /// The feed classes its first level's misses from the reuse distances
    /// while it may; the counts are those of a plain simulation, whether
    /// the stream stays on one thread, a second thread starts within it,
    /// or the exact distances are left out part way (the yardstick made
    /// again from the distances each time).
    #[test]
    fn told_classes_are_the_yardsticks() {
        for (switch, auto) in [(u64::MAX, None), (23_456, None), (u64::MAX, Some(30_000))] {
            let plan = LocalityPlan {
                model: small(),
                sampling: None,
                auto_above: auto,
                budget: u64::MAX,
            };
            let stream = mixed(60_000, switch);
            let mut feed = LocalityFeed::new(&plan).unwrap();
            let mut sim = CacheSim::new(&plan.model).unwrap();
            for b in stream.chunks(1000) {
                feed.accesses(b);
                sim.accesses(b);
            }
            let rec = feed.finish().unwrap();
            let c = sim.finish();
            let got = rec.cache_result(&plan.model);
            assert_eq!(got.pairs, c.pairs, "switch {switch} auto {auto:?}");
            assert_eq!(got.counts, c.counts, "switch {switch} auto {auto:?}");
            let total = |k: usize| -> [u64; 3] {
                let m = c.counts.iter().map(|x| x.classes[k]);
                m.fold([0; 3], |a, x| {
                    [a[0] + x.compulsory, a[1] + x.capacity, a[2] + x.conflict]
                })
            };
            assert!(total(0).iter().all(|&n| n > 0), "{:?}", total(0));
        }
    }
}
