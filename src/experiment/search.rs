//! The adaptive search of a tipping sweep, for one variant.
//!
//! 1. Bracket: every value of the grid (`points` from `from` to `to`) is probed, in
//!    parallel. A probe runs seeds one at a time, each seed's baseline and triggered runs
//!    as one run forked at the trigger ([`crate::model::fork`]), until the sequential test ([`crate::stats::sequential`]: is the
//!    failed share below or above one half, at 5% error) decides both branches, or
//!    `seeds` (the most per probe) are spent. A probe far from any edge costs 2 seeds
//!    (the test's fewest); one near an edge, where seeds disagree, more.
//! 2. Bisect: the first bracket where the triggered branch's majority turns to collapse
//!    (the tipping point), and the first where the baseline's turns to failed (the
//!    overload point), are bisected until they are narrower than the tolerance (at most
//!    [`MAX_BISECTIONS`] probes each), each probe deciding its own branch.
//! 3. Focus (the tipping point only): while the 95% confidence interval of the crossing
//!    (profile likelihood of the log-logistic fit to every triggered run,
//!    [`crate::stats::logistic`]) is wider than twice the tolerance, another probe of a
//!    fixed [`FOCUS_SEEDS`] seeds goes where the interval's estimate puts the crossing (at
//!    most [`FOCUS_PROBES`]); a sweep that spends them first says so (`tolerance_met`).
//!    The two refinements run side by side; every probe runs both branches.
//!
//! Every probe has seeds of its own (probe `j` runs seeds `j x seeds` to `j x seeds +
//! seeds - 1`; the grid's probes first, then the two refinements' alternately), so the
//! runs of different probes are independent, as the interval assumes; a seed's baseline
//! and triggered runs share their streams (common random numbers). The probes placed
//! depend only on the runs' results, so the search is as reproducible as a grid,
//! whatever the number of threads.

use super::Error;
use crate::engine::time::{ns_to_secs, secs_to_ns};
use crate::scenario::sweep::{AxisUnit, MAX_BISECTIONS};
use crate::stats::logistic::{Interval, Logistic, pinned, scale_floor, separated};
use crate::stats::plan::{Branch, Run};
use crate::stats::sequential::{Decision, decide, seeds_to_decide};
use rayon::prelude::*;

/// The most probes the focus step adds per branch.
pub const FOCUS_PROBES: u32 = 6;

/// The seeds of a focus probe (fewer when `seeds` is smaller).
pub const FOCUS_SEEDS: u32 = 10;

/// Runs one (value, seed) of the variant being searched: the run of one branch, or with
/// `None` its baseline and triggered runs, in that order.
pub type RunAt<'a> = dyn Fn(f64, u32, Option<Branch>) -> Result<Vec<Run>, Error> + Sync + 'a;

/// What the search needs to know of the sweep.
pub struct Search<'a> {
    /// The first bracket's values, increasing.
    pub grid: &'a [f64],
    pub unit: AxisUnit,
    /// The most seeds per probe.
    pub seeds: u32,
    /// Bisection stops when a bracket is at most this wide; focusing when the crossing's
    /// interval is at most twice this wide.
    pub tolerance: f64,
    /// True when a run is healthy (by its measure, or with `recover_within` a triggered
    /// run by its recovery: `Plan::failed`).
    pub healthy: &'a (dyn Fn(&Run) -> bool + Sync),
    /// Hears how many more runs the search has decided to do, before it does them (the
    /// progress bar's length): their sum is the number of runs returned.
    pub planned: &'a (dyn Fn(u64) + Sync),
}

/// One probed value and its runs, baseline and triggered, seed by seed.
struct Probe {
    value: f64,
    baseline: Vec<Run>,
    triggered: Vec<Run>,
}

impl Probe {
    fn keep(&mut self, r: Run) {
        match r.branch {
            Branch::Baseline => self.baseline.push(r),
            Branch::Triggered => self.triggered.push(r),
        }
    }

    fn runs(&self, b: Branch) -> &[Run] {
        match b {
            Branch::Baseline => &self.baseline,
            Branch::Triggered => &self.triggered,
        }
    }
}

impl Search<'_> {
    /// Searches one variant; returns its runs in (value, seed, branch) order.
    pub fn run(&self, run: &RunAt) -> Result<Vec<Run>, Error> {
        let grid: Vec<Probe> = self
            .grid
            .par_iter()
            .enumerate()
            .with_max_len(1)
            .map(|(i, &x)| self.probe(x, i as u64, None, run, true))
            .collect::<Result<_, _>>()?;
        let first = grid.len() as u64;
        let (a, b) = rayon::join(
            || self.refine(&grid, Branch::Triggered, first, run),
            || self.refine(&grid, Branch::Baseline, first + 1, run),
        );
        let mut runs: Vec<Run> = grid
            .into_iter()
            .chain(a?)
            .chain(b?)
            .flat_map(|p| p.baseline.into_iter().chain(p.triggered))
            .collect();
        runs.sort_by(|a, b| {
            a.value[0]
                .total_cmp(&b.value[0])
                .then(a.seed.cmp(&b.seed))
                .then((a.branch as u8).cmp(&(b.branch as u8)))
        });
        Ok(runs)
    }

    /// The failed runs and all runs of a branch.
    fn failed(&self, runs: &[Run]) -> (usize, usize) {
        let f = runs.iter().filter(|r| !(self.healthy)(r)).count();
        (f, runs.len())
    }

    /// True when most of a probe's runs of `b` failed.
    fn leans_failed(&self, p: &Probe, b: Branch) -> bool {
        let (f, n) = self.failed(p.runs(b));
        2 * f > n
    }

    /// Probes one value with the seeds of probe number `block`: seed after seed until the
    /// sequential test decides `branch` (both branches for `None`), or the seeds are
    /// spent; with `sequential` false (a focus probe), every seed for `branch`. A branch
    /// runs only until the test decides it (the other branch of a one-branch probe too,
    /// which runs beside it so that the cell has both): a seed runs as a forked pair while
    /// both branches are open, as one run once only one is.
    fn probe(
        &self,
        value: f64,
        block: u64,
        branch: Option<Branch>,
        run: &RunAt,
        sequential: bool,
    ) -> Result<Probe, Error> {
        let mut p = Probe {
            value,
            baseline: Vec::new(),
            triggered: Vec::new(),
        };
        let seed = |k: u32| u32::try_from(block * self.seeds as u64 + k as u64).unwrap_or(u32::MAX);
        let both = [Branch::Baseline, Branch::Triggered];
        // The branches the probe decides, and the one that only keeps it company.
        let (main, other): (Vec<Branch>, Option<Branch>) = match branch {
            None => (both.to_vec(), None),
            Some(b) => (vec![b], both.into_iter().find(|&o| o != b)),
        };
        // Seeds run in batches that never waste a run: a branch that is `d` seeds from its
        // nearest possible decision needs at least `d` more whatever they give, so the
        // next `d` (the fewest over the branches still open) run side by side. The seeds
        // run, and so every output, are those of one seed at a time.
        let mut next = 0;
        while next < self.seeds {
            let to_decide = |b: Branch| {
                let (f, n) = self.failed(p.runs(b));
                (decide(f, n - f) == Decision::Undecided).then(|| seeds_to_decide(f, n - f))
            };
            let open: Vec<(Branch, u32)> = main
                .iter()
                .filter_map(|&b| to_decide(b).map(|d| (b, d)))
                .collect();
            if sequential && open.is_empty() {
                break;
            }
            // The branches this batch runs, and the most seeds before one could be decided.
            let (mut running, mut batch): (Vec<Branch>, u32) = if sequential {
                let d = open.iter().map(|&(_, d)| d).min().unwrap_or(1);
                (open.iter().map(|&(b, _)| b).collect(), d)
            } else {
                // A focus probe's own branch takes every seed.
                (main.clone(), self.seeds)
            };
            if let Some((o, d)) = other.and_then(|o| to_decide(o).map(|d| (o, d))) {
                running.push(o);
                batch = batch.min(d);
            }
            let batch = batch.clamp(1, self.seeds - next);
            let only = match running[..] {
                [b] => Some(b),
                _ => None,
            };
            (self.planned)(batch as u64 * running.len() as u64);
            let runs: Vec<Vec<Run>> = (next..next + batch)
                .into_par_iter()
                .with_max_len(1)
                .map(|k| run(value, seed(k), only))
                .collect::<Result<_, _>>()?;
            runs.into_iter().flatten().for_each(|r| p.keep(r));
            next += batch;
        }
        Ok(p)
    }

    /// Refines the crossing of `branch`: bisects the first bracket where its majority
    /// turns to failed down to the tolerance, then adds probes where the fit puts the
    /// crossing while its interval is wider than twice the tolerance. New probes take
    /// the seed blocks `first`, `first + 2`, ...; returns them.
    fn refine(
        &self,
        grid: &[Probe],
        branch: Branch,
        first: u64,
        run: &RunAt,
    ) -> Result<Vec<Probe>, Error> {
        let mut new: Vec<Probe> = Vec::new();
        let mut block = first;
        let mut next = |value: f64, focus: bool, new: &mut Vec<Probe>| -> Result<bool, Error> {
            // A focus probe runs a fixed batch: one stopped by the test as soon as it is
            // decided would lean, near the crossing, to whichever side it reached first.
            let p = if focus {
                let batch = Search {
                    seeds: self.seeds.min(FOCUS_SEEDS),
                    ..*self
                };
                batch.probe(value, block, Some(branch), run, false)?
            } else {
                self.probe(value, block, Some(branch), run, true)?
            };
            block += 2;
            let turned = self.leans_failed(&p, branch);
            new.push(p);
            Ok(turned)
        };
        let Some(i) = grid.iter().position(|p| self.leans_failed(p, branch)) else {
            return Ok(new);
        };
        if i == 0 {
            return Ok(new);
        }
        let (mut lo, mut hi) = (grid[i - 1].value, grid[i].value);
        for _ in 0..MAX_BISECTIONS {
            if hi - lo <= self.tolerance {
                break;
            }
            let mid = self.snap((lo + hi) / 2.0);
            if mid <= lo || mid >= hi {
                break;
            }
            if next(mid, false, &mut new)? {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        // The focus step is the tipping point's (the headroom's); the overload point keeps
        // its bisected bracket and the interval its runs give.
        if branch == Branch::Baseline {
            return Ok(new);
        }
        let (bottom, top) = (self.grid[0], self.grid[self.grid.len() - 1]);
        let floor = scale_floor(self.tolerance, top - bottom);
        for _ in 0..FOCUS_PROBES {
            let outcomes: Vec<(f64, bool)> = grid
                .iter()
                .chain(&new)
                .flat_map(|p| p.runs(branch))
                .map(|r| (r.value[0], !(self.healthy)(r)))
                .collect();
            let ci = Logistic::midpoint_ci95(&outcomes, floor);
            let centre = match ci {
                Interval::Within { centre, .. } if !pinned(&outcomes, ci, self.tolerance) => centre,
                _ => break,
            };
            // Perfectly separated outcomes are pinned by their bracket: more seeds at the
            // fitted centre add nothing the bisection did not already say.
            if separated(&outcomes) {
                break;
            }
            next(self.snap(centre.clamp(bottom, top)), true, &mut new)?;
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
    use crate::stats::sequential::fewest_seeds;
    use std::sync::Mutex;

    /// The branches a call runs: one, or both.
    fn branches(only: Option<Branch>) -> impl Iterator<Item = Branch> {
        [Branch::Baseline, Branch::Triggered]
            .into_iter()
            .filter(move |&b| only.is_none_or(|o| o == b))
    }

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

    /// Every probe runs seeds of its own (independent runs, as the interval assumes):
    /// no (seed, value, branch) twice, and no seed at two values.
    #[test]
    fn every_probe_has_seeds_of_its_own() {
        let grid: Vec<f64> = (0..=10).map(|i| 10.0 * i as f64).collect();
        let healthy = |r: &Run| r.measure == Some(1.0);
        let s = Search {
            grid: &grid,
            unit: AxisUnit::Number,
            seeds: 6,
            tolerance: 0.5,
            healthy: &healthy,
            planned: &|_| {},
        };
        // Seeds disagree near 45: a broad curve, so the search focuses.
        let runs = s
            .run(&|x, seed, only| {
                Ok(branches(only)
                    .map(|b| {
                        let ok = b == Branch::Baseline
                            || (seed as f64 * 0.618).fract() * 40.0 + 25.0 > x;
                        at(x, seed, b, ok)
                    })
                    .collect())
            })
            .unwrap();
        let mut by_seed = std::collections::HashMap::new();
        for r in runs.iter().filter(|r| r.branch == Branch::Triggered) {
            let v = by_seed.entry(r.seed).or_insert(r.value[0]);
            assert_eq!(*v, r.value[0], "seed {} at two values", r.seed);
        }
        assert!(runs.len() > 4 * grid.len(), "{}", runs.len());
        // The baseline, always healthy, is decided by the test's fewest seeds in every
        // probe (probe j has seeds 6j to 6j + 5), however many the triggered branch takes.
        let mut per_probe = std::collections::BTreeMap::new();
        for r in &runs {
            let n = per_probe.entry(r.seed / 6).or_insert([0, 0]);
            n[r.branch as usize] += 1;
        }
        assert!(
            per_probe
                .values()
                .all(|n| n[Branch::Baseline as usize] == fewest_seeds())
        );
        assert!(
            per_probe
                .values()
                .any(|n| n[Branch::Triggered as usize] > fewest_seeds())
        );
    }

    /// A deterministic system that collapses from 31.3 and is overloaded from 87.6: the
    /// search brackets both on the grid and bisects each to the tolerance, with the
    /// sequential test's fewest seeds at probes whose seeds agree.
    #[test]
    fn bisects_both_brackets_to_the_tolerance() {
        let planned = Mutex::new(0usize);
        let grid: Vec<f64> = (0..=10).map(|i| 10.0 * i as f64).collect();
        let healthy = |r: &Run| r.measure == Some(1.0);
        let s = Search {
            grid: &grid,
            unit: AxisUnit::Number,
            seeds: 5,
            tolerance: 0.5,
            healthy: &healthy,
            planned: &|n| *planned.lock().unwrap() += n as usize,
        };
        let count = Mutex::new(0usize);
        let runs = s
            .run(&|x, seed, only| {
                let runs: Vec<Run> = branches(only)
                    .map(|b| {
                        let ok = match b {
                            Branch::Baseline => x < 87.6,
                            Branch::Triggered => x < 31.3,
                        };
                        at(x, seed, b, ok)
                    })
                    .collect();
                *count.lock().unwrap() += runs.len();
                Ok(runs)
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
        // Values sorted, pairs in seed order, the sequential test's fewest seeds per probe
        // (they agree).
        assert!(runs.windows(2).all(|w| w[0].value[0] <= w[1].value[0]));
        assert_eq!(runs.len(), *count.lock().unwrap());
        assert_eq!(runs.len() % (2 * fewest_seeds()), 0);
        // The runs announced before they ran (the progress bar's length) are the runs done.
        assert_eq!(*planned.lock().unwrap(), runs.len());
    }

    #[test]
    fn whole_number_axes_stop_at_neighbours() {
        let grid = [1.0, 5.0];
        let healthy = |r: &Run| r.measure == Some(1.0);
        let s = Search {
            grid: &grid,
            unit: AxisUnit::Integer,
            seeds: 1,
            tolerance: 0.01,
            healthy: &healthy,
            planned: &|_| {},
        };
        let runs = s
            .run(&|x, seed, only| {
                Ok(branches(only)
                    .map(|b| at(x, seed, b, b == Branch::Baseline || x < 3.0))
                    .collect())
            })
            .unwrap();
        let values: Vec<f64> = runs.iter().step_by(2).map(|r| r.value[0]).collect();
        assert_eq!(values, [1.0, 2.0, 3.0, 5.0]);
    }
}
