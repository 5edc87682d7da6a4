//! The adaptive search of a tipping sweep, for one variant.
//!
//! 1. Bracket: every value of the grid (`points` from `from` to `to`) is probed, in
//!    parallel. A probe runs seeds one at a time, each seed's baseline and triggered runs
//!    side by side, and stops adding seeds as soon as its outcome is settled on both
//!    branches: the first two seeds agree, or the majority of `seeds` can no longer
//!    change. A probe far from any edge costs 2 seeds; one near an edge, where seeds
//!    disagree, up to all of them.
//! 2. Refine: the first bracket where the triggered branch's majority turns to collapse
//!    (the tipping point), and the first where the baseline's turns to failed (the overload
//!    point), are bisected until they are narrower than the tolerance (at most
//!    [`MAX_BISECTIONS`] probes each). Both bisections run side by side.
//!
//! The probes placed depend only on the runs' results, so the search is as reproducible as
//! a grid, whatever the number of threads.

use super::Error;
use super::plan::{Branch, Run};
use crate::engine::time::{ns_to_secs, secs_to_ns};
use crate::scenario::sweep::{AxisUnit, MAX_BISECTIONS};
use rayon::prelude::*;

/// Runs one (value, seed, branch) of the variant being searched.
pub type RunAt<'a> = dyn Fn(f64, u32, Branch) -> Result<Run, Error> + Sync + 'a;

/// What the search needs to know of the sweep.
pub struct Search<'a> {
    /// The first bracket's values, increasing.
    pub grid: &'a [f64],
    pub unit: AxisUnit,
    /// The most seeds per probe.
    pub seeds: u32,
    /// Bisection stops when a bracket is at most this wide.
    pub tolerance: f64,
    /// True when a run's measure is healthy.
    pub healthy: &'a (dyn Fn(Option<f64>) -> bool + Sync),
}

/// One probed value and its runs, baseline and triggered, seed by seed.
struct Probe {
    value: f64,
    baseline: Vec<Run>,
    triggered: Vec<Run>,
}

/// Settled majorities: `Some(true)` when more than half of `seeds` failed (or will, whatever
/// the seeds not yet run give), `Some(false)` when at least half are healthy, else `None`.
fn majority(failed: usize, run: usize, seeds: u32) -> Option<bool> {
    let seeds = seeds as usize;
    if 2 * failed > seeds {
        Some(true)
    } else if 2 * (run - failed) >= seeds {
        Some(false)
    } else {
        None
    }
}

impl Search<'_> {
    /// Searches one variant; returns its runs in (value, seed, branch) order.
    pub fn run(&self, run: &RunAt) -> Result<Vec<Run>, Error> {
        let mut probes: Vec<Probe> = self
            .grid
            .par_iter()
            .with_max_len(1)
            .map(|&x| self.probe(x, run))
            .collect::<Result<_, _>>()?;
        let collapsed = |p: &Probe| self.failed(&p.triggered);
        let overloaded = |p: &Probe| self.failed(&p.baseline);
        let (a, b) = rayon::join(
            || self.bisect(&probes, &collapsed, run),
            || self.bisect(&probes, &overloaded, run),
        );
        probes.extend(a?);
        for p in b? {
            if !probes.iter().any(|q| q.value == p.value) {
                probes.push(p);
            }
        }
        probes.sort_by(|a, b| a.value.total_cmp(&b.value));
        Ok(probes
            .into_iter()
            .flat_map(|p| {
                p.baseline
                    .into_iter()
                    .zip(p.triggered)
                    .flat_map(|(b, t)| [b, t])
            })
            .collect())
    }

    /// True when most of a branch's runs failed.
    fn failed(&self, runs: &[Run]) -> bool {
        let f = runs.iter().filter(|r| !(self.healthy)(r.measure)).count();
        2 * f > runs.len()
    }

    /// Probes one value: seed after seed until both branches' majorities are settled.
    fn probe(&self, value: f64, run: &RunAt) -> Result<Probe, Error> {
        let mut p = Probe {
            value,
            baseline: Vec::new(),
            triggered: Vec::new(),
        };
        for seed in 0..self.seeds {
            let (b, t) = rayon::join(
                || run(value, seed, Branch::Baseline),
                || run(value, seed, Branch::Triggered),
            );
            p.baseline.push(b?);
            p.triggered.push(t?);
            let settled = |runs: &[Run]| {
                let f = runs.iter().filter(|r| !(self.healthy)(r.measure)).count();
                let agree = runs.len() == 2 && (f == 0 || f == 2);
                agree || majority(f, runs.len(), self.seeds).is_some()
            };
            if settled(&p.baseline) && settled(&p.triggered) {
                break;
            }
        }
        Ok(p)
    }

    /// Bisects the first bracket where `turned` changes from false to true (probes sorted
    /// by value) down to the tolerance; returns the new probes.
    fn bisect(
        &self,
        probes: &[Probe],
        turned: &(dyn Fn(&Probe) -> bool + Sync),
        run: &RunAt,
    ) -> Result<Vec<Probe>, Error> {
        let mut new = Vec::new();
        let Some(i) = probes.iter().position(turned) else {
            return Ok(new);
        };
        if i == 0 {
            return Ok(new);
        }
        let (mut lo, mut hi) = (probes[i - 1].value, probes[i].value);
        for _ in 0..MAX_BISECTIONS {
            if hi - lo <= self.tolerance {
                break;
            }
            let mid = self.snap((lo + hi) / 2.0);
            if mid <= lo || mid >= hi {
                break;
            }
            let p = self.probe(mid, run)?;
            if turned(&p) {
                hi = mid;
            } else {
                lo = mid;
            }
            new.push(p);
        }
        Ok(new)
    }

    /// A value the axis can take: whole for an integer key, whole nanoseconds for a
    /// duration.
    fn snap(&self, x: f64) -> f64 {
        match self.unit {
            AxisUnit::Integer => x.round(),
            AxisUnit::Seconds => ns_to_secs(secs_to_ns(x)),
            AxisUnit::Number => x,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn at(value: f64, seed: u32, branch: Branch, healthy: bool) -> Run {
        Run {
            variant: 0,
            value: [value, 0.0],
            seed,
            branch,
            measure: Some(if healthy { 1.0 } else { 0.0 }),
            trace: None,
        }
    }

    #[test]
    fn majorities_settle_as_soon_as_the_rest_cannot_change_them() {
        assert_eq!(majority(3, 3, 5), Some(true));
        assert_eq!(majority(0, 3, 5), Some(false));
        assert_eq!(majority(2, 3, 5), None);
        assert_eq!(majority(2, 4, 5), None);
        assert_eq!(majority(2, 5, 5), Some(false));
        // Two seeds: one healthy settles "not a majority" (1 of 2 is not above half).
        assert_eq!(majority(0, 1, 2), Some(false));
        assert_eq!(majority(1, 1, 2), None);
        assert_eq!(majority(1, 1, 1), Some(true));
    }

    /// A deterministic system that collapses from 31.3 and is overloaded from 87.6: the
    /// search brackets both on the grid and bisects each to the tolerance, with two seeds
    /// at probes whose seeds agree.
    #[test]
    fn bisects_both_brackets_to_the_tolerance() {
        let grid: Vec<f64> = (0..=10).map(|i| 10.0 * i as f64).collect();
        let healthy = |m: Option<f64>| m == Some(1.0);
        let s = Search {
            grid: &grid,
            unit: AxisUnit::Number,
            seeds: 5,
            tolerance: 0.5,
            healthy: &healthy,
        };
        let count = Mutex::new(0usize);
        let runs = s
            .run(&|x, seed, b| {
                *count.lock().unwrap() += 1;
                let ok = match b {
                    Branch::Baseline => x < 87.6,
                    Branch::Triggered => x < 31.3,
                };
                Ok(at(x, seed, b, ok))
            })
            .unwrap();
        let first = |b: Branch| {
            runs.iter()
                .filter(|r| r.branch == b && r.measure == Some(0.0))
                .map(|r| r.value[0])
                .fold(f64::INFINITY, f64::min)
        };
        let last_ok = |b: Branch, below: f64| {
            runs.iter()
                .filter(|r| r.branch == b && r.measure == Some(1.0) && r.value[0] < below)
                .map(|r| r.value[0])
                .fold(f64::NEG_INFINITY, f64::max)
        };
        let (t, o) = (first(Branch::Triggered), first(Branch::Baseline));
        assert!(t >= 31.3 && t - last_ok(Branch::Triggered, t) <= 0.5, "{t}");
        assert!(o >= 87.6 && o - last_ok(Branch::Baseline, o) <= 0.5, "{o}");
        // Values sorted, pairs in seed order, 2 seeds per probe (they agree).
        assert!(runs.windows(2).all(|w| w[0].value[0] <= w[1].value[0]));
        assert_eq!(runs.len(), *count.lock().unwrap());
        assert_eq!(runs.len() % 4, 0);
    }

    #[test]
    fn whole_number_axes_stop_at_neighbours() {
        let grid = [1.0, 5.0];
        let healthy = |m: Option<f64>| m == Some(1.0);
        let s = Search {
            grid: &grid,
            unit: AxisUnit::Integer,
            seeds: 1,
            tolerance: 0.01,
            healthy: &healthy,
        };
        let runs = s
            .run(&|x, seed, b| Ok(at(x, seed, b, b == Branch::Baseline || x < 3.0)))
            .unwrap();
        let values: Vec<f64> = runs.iter().step_by(2).map(|r| r.value[0]).collect();
        assert_eq!(values, [1.0, 2.0, 3.0, 5.0]);
    }
}
