//! Running a sweep's runs: the runs of a grid by index (a seed's baseline and triggered
//! runs as one run, forked at the trigger), the adaptive search's probes, and one run or
//! pair at a value with its gauge, which stops a run once its class is settled. Runs go on
//! a local rayon pool ([`in_pool`]).

use super::Sweep;
use crate::engine::time::secs_to_ns;
use crate::experiment::Error;
use crate::experiment::measure::Gauge;
use crate::experiment::search::Search;
use crate::model::witness::Witness;
use crate::model::{self, RunResult, SimError};
use crate::scenario::{self, Scenario};
use crate::stats::plan::{Branch, Point, Run, RunPoint, Trace};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};

impl Sweep {
    /// Runs the given runs on `jobs` threads (0: all cores), calling `tick` after each.
    /// The results come back in the order of `indices`. A seed's baseline and triggered
    /// runs that follow each other in `indices` run as one forked run
    /// ([`crate::model::fork`]).
    pub fn run(
        &self,
        indices: &[u64],
        jobs: usize,
        tick: &(dyn Fn() + Sync),
    ) -> Result<Vec<RunPoint>, Error> {
        // Each task: a position in `indices` and whether it starts a pair there.
        let mut tasks = Vec::new();
        let mut k = 0;
        while k < indices.len() {
            let i = indices[k];
            let pair = i.is_multiple_of(2) && indices.get(k + 1) == Some(&(i + 1));
            tasks.push((i, pair));
            k += if pair { 2 } else { 1 };
        }
        in_pool(jobs, || {
            // One run (or pair) per task: run times differ by an order of magnitude between
            // healthy and storming points, so coarse chunks would leave one thread idle at
            // the end.
            let done: Vec<Vec<RunPoint>> = tasks
                .par_iter()
                .with_max_len(1)
                .map(|&(i, pair)| {
                    let r = if pair {
                        self.run_pair(i)
                    } else {
                        self.run_one(i).map(|r| vec![r])
                    };
                    r.iter().flatten().for_each(|_| tick());
                    r
                })
                .collect::<Result<_, _>>()?;
            Ok(done.into_iter().flatten().collect())
        })
    }

    /// The adaptive search of every variant, variants side by side on `jobs` threads (0:
    /// all cores); the runs in (variant, value, seed, branch) order.
    pub fn search(&self, jobs: usize, tick: &(dyn Fn() + Sync)) -> Result<Vec<Run>, Error> {
        let all = self.variants_of(None);
        let per_variant = self.search_variants(&all, jobs, tick, &|_| {})?;
        Ok(per_variant.into_iter().flatten().collect())
    }

    /// The adaptive searches of `variants` (indices into the plan's variants), side by
    /// side on `jobs` threads (0: all cores): each variant's runs in (value, seed, branch)
    /// order, one list per variant in the order given. A variant's search depends on its
    /// own runs only, so it gives the same runs whichever variants search beside it (what
    /// lets a shard search some variants and `brink merge` join them). `planned` hears how
    /// many more runs the search has decided to do before it does them (their sum is the
    /// number of runs returned).
    ///
    /// A variant with a source among `variants` (`Sweep::sources`: an earlier variant's
    /// branch whose scenario is its own at every value) searches after it, and a run it
    /// shares with the source's runs (value, seed) is read from them rather than run again:
    /// the same result, so the same runs whatever else is searched. So does a variant with
    /// kin among them (`Sweep::kin`), for a run of theirs whose witness shows it never
    /// reached a knob they differ in.
    pub fn search_variants(
        &self,
        variants: &[usize],
        jobs: usize,
        tick: &(dyn Fn() + Sync),
        planned: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<Vec<Run>>, Error> {
        // The sources and kin that are searched here; a variant searches once they are
        // done.
        let sources = |v: usize| {
            let kin = self.kin[v].iter().flatten().map(|&(u, c, _)| (u, c));
            self.sources[v]
                .into_iter()
                .flatten()
                .chain(kin)
                .filter(|(u, _)| variants.contains(u))
        };
        let seen = Mutex::new(HashMap::new());
        in_pool(jobs, || {
            let mut done: Vec<Option<Vec<Run>>> = vec![None; variants.len()];
            let mut known: HashMap<RunKey, Outcome> = HashMap::new();
            while done.iter().any(Option::is_none) {
                let searched = |u: usize| {
                    variants
                        .iter()
                        .zip(&done)
                        .any(|(&w, d)| w == u && d.is_some())
                };
                let ready: Vec<usize> = (0..variants.len())
                    .filter(|&i| {
                        done[i].is_none() && sources(variants[i]).all(|(u, _)| searched(u))
                    })
                    .collect();
                let runs: Vec<Vec<Run>> = ready
                    .par_iter()
                    .with_max_len(1)
                    .map(|&i| self.search_one(variants[i], &known, &seen, tick, planned))
                    .collect::<Result<_, _>>()?;
                for (i, runs) in ready.into_iter().zip(runs) {
                    for r in &runs {
                        known.insert(
                            key(r.variant, r.value[0], r.seed, r.branch),
                            Outcome::new(r.measure, r.trace),
                        );
                    }
                    done[i] = Some(runs);
                }
            }
            Ok(done.into_iter().flatten().collect())
        })
    }

    /// The adaptive search of variant `v`: its runs in (value, seed, branch) order. A run
    /// its source branch has in `known` is taken from there, and so is one of its kin's
    /// whose witness (in `seen`, where the runs it simulates leave theirs) shows it never
    /// reached the knobs they differ in.
    fn search_one(
        &self,
        v: usize,
        known: &HashMap<RunKey, Outcome>,
        seen: &Mutex<HashMap<RunKey, Arc<Witness>>>,
        tick: &(dyn Fn() + Sync),
        planned: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<Run>, Error> {
        let axis = &self.axes[0];
        let healthy = |r: &Run| !self.plan.failed(r.branch, r.measure, r.trace);
        let search = Search {
            grid: &axis.values,
            unit: axis.unit,
            seeds: self.plan.seeds,
            tolerance: self.plan.variants[v].tolerance,
            healthy: &healthy,
            planned,
        };
        let found = |x: f64, seed: u32, b: Branch| {
            if let Some((u, c)) = self.sources[v][b as usize] {
                return known.get(&key(u, x, seed, c)).cloned();
            }
            let seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
            self.kin[v][b as usize].iter().find_map(|(u, c, knobs)| {
                let k = key(*u, x, seed, *c);
                let w = seen.get(&k)?;
                knobs
                    .iter()
                    .all(|&n| w.untouched(n))
                    .then(|| known.get(&k).cloned())?
            })
        };
        let keep = |x: f64, seed: u32, b: Branch, o: &Outcome| {
            if let Some(w) = &o.witness {
                let mut seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
                seen.insert(key(v, x, seed, b), w.clone());
            }
        };
        search.run(&|x, seed, only| {
            let value = [x, 0.0];
            let branches = match only {
                Some(b) => vec![b],
                None => vec![Branch::Baseline, Branch::Triggered],
            };
            let mut runs: Vec<(Branch, Outcome)> = branches
                .iter()
                .filter_map(|&b| found(x, seed, b).map(|o| (b, o)))
                .collect();
            let left: Vec<Branch> = branches
                .into_iter()
                .filter(|b| runs.iter().all(|(c, _)| c != b))
                .collect();
            match left[..] {
                [] => {}
                [b] => {
                    let o = self.run_at(v, value, seed, b)?;
                    keep(x, seed, b, &o);
                    runs.push((b, o));
                }
                _ => {
                    let [b, t] = self.run_pair_at(v, value, seed)?;
                    keep(x, seed, Branch::Baseline, &b);
                    keep(x, seed, Branch::Triggered, &t);
                    runs.extend([(Branch::Baseline, b), (Branch::Triggered, t)]);
                }
            }
            runs.sort_by_key(|(b, _)| *b as u8);
            Ok(runs
                .into_iter()
                .map(|(branch, Outcome { measure, trace, .. })| {
                    tick();
                    Run {
                        variant: v,
                        value,
                        seed,
                        branch,
                        measure,
                        trace,
                    }
                })
                .collect())
        })
    }

    fn run_one(&self, i: u64) -> Result<RunPoint, Error> {
        let p = self.plan.point(i);
        let Outcome { measure, trace, .. } =
            self.run_at(p.variant, self.values(&p), p.seed, p.branch)?;
        Ok(RunPoint {
            index: i,
            measure,
            trace,
        })
    }

    /// Runs `i` (a baseline run) and `i + 1` (its seed's triggered run) as a pair.
    fn run_pair(&self, i: u64) -> Result<Vec<RunPoint>, Error> {
        let p = self.plan.point(i);
        let pair = self.run_pair_at(p.variant, self.values(&p), p.seed)?;
        Ok(pair
            .into_iter()
            .zip(i..)
            .map(|(Outcome { measure, trace, .. }, index)| RunPoint {
                index,
                measure,
                trace,
            })
            .collect())
    }

    /// The swept values of a point of the grid.
    fn values(&self, p: &Point) -> [f64; 2] {
        let at = |a: usize| self.axes.get(a).map_or(0.0, |axis| axis.values[p.at[a]]);
        [at(0), at(1)]
    }

    /// Runs one run of a sweep, stopping it as soon as its class is settled; its measure
    /// and trace (none for a run that ran away: it has certainly failed, and the sweep
    /// goes on).
    fn run_at(
        &self,
        variant: usize,
        value: [f64; 2],
        seed: u32,
        branch: Branch,
    ) -> Result<Outcome, Error> {
        let sc = self.kept_scenario_at(variant, value, branch)?;
        let gauge = self.gauge(&sc, branch)?;
        self.simulated.fetch_add(1, Ordering::Relaxed);
        let result = model::run_until(&sc, seed as u64, &mut |now, rows| gauge.settled(rows, now));
        read(&gauge, result)
    }

    /// Runs one seed's baseline and triggered runs at `value`, as [`Sweep::run_at`] would
    /// each, but as one run up to the trigger ([`model::fork`]): the same results, the part
    /// before the trigger simulated once. Returns them in that order.
    fn run_pair_at(
        &self,
        variant: usize,
        value: [f64; 2],
        seed: u32,
    ) -> Result<[Outcome; 2], Error> {
        let sb = self.kept_scenario_at(variant, value, Branch::Baseline)?;
        let st = self.kept_scenario_at(variant, value, Branch::Triggered)?;
        let (gb, gt) = (
            self.gauge(&sb, Branch::Baseline)?,
            self.gauge(&st, Branch::Triggered)?,
        );
        let run = seed as u64;
        let Some(at) = model::fork::common_prefix(&st, &sb) else {
            let (b, t) = rayon::join(
                || self.run_at(variant, value, seed, Branch::Baseline),
                || self.run_at(variant, value, seed, Branch::Triggered),
            );
            return Ok([b?, t?]);
        };
        self.simulated.fetch_add(2, Ordering::Relaxed);
        let wall = std::time::Instant::now();
        let (lt, lb) = model::fork::fork(
            &st,
            &sb,
            run,
            at,
            &mut |now, rows| gt.settled(rows, now),
            &mut |now, rows| gb.settled(rows, now),
        );
        let (rt, rb) = rayon::join(
            || lt.finish(run, wall, |now, rows| gt.settled(rows, now)),
            || lb.finish(run, wall, |now, rows| gb.settled(rows, now)),
        );
        Ok([read(&gb, rb)?, read(&gt, rt)?])
    }

    /// The gauge of a run of `sc` on `branch`; an error names a measure the runs do not
    /// produce.
    fn gauge(&self, sc: &Scenario, branch: Branch) -> Result<Gauge, Error> {
        let t = sc.tipping.as_ref().unwrap_or(&self.tipping);
        let columns = scenario::columns::columns(&sc.config);
        let gauge = Gauge::new(t, &columns, sc.duration)
            .map_err(|msg| self.loader.problem("tipping.measure", &msg, &self.sets))?;
        Ok(match branch {
            Branch::Triggered => gauge.triggered(t),
            Branch::Baseline => gauge,
        })
    }
}

/// A run's measure and trace, and what it never reached (none for a run that ran away,
/// or one read from another variant's).
#[derive(Clone)]
struct Outcome {
    measure: Option<f64>,
    trace: Option<Trace>,
    witness: Option<Arc<Witness>>,
}

impl Outcome {
    fn new(measure: Option<f64>, trace: Option<Trace>) -> Self {
        Self {
            measure,
            trace,
            witness: None,
        }
    }
}

/// A searched run by variant, value (bits), seed and branch.
type RunKey = (usize, u64, u32, u8);

fn key(variant: usize, value: f64, seed: u32, branch: Branch) -> RunKey {
    (variant, value.to_bits(), seed, branch as u8)
}

/// A run's measure and trace read by its gauge: none for a run that ran away (it has
/// certainly failed, and the sweep goes on).
fn read(gauge: &Gauge, result: Result<RunResult, SimError>) -> Result<Outcome, Error> {
    Ok(match result {
        Err(SimError::Runaway { .. }) => Outcome::new(None, None),
        Err(e) => return Err(e.into()),
        Ok(r) => {
            let to = secs_to_ns(r.summary.sim_duration_s);
            Outcome {
                measure: gauge.measure(&r.series.rows, to),
                trace: Some(gauge.trace(&r.series.rows, to)),
                witness: Some(Arc::new(r.witness)),
            }
        }
    })
}

/// Runs `f` on a pool of `jobs` threads (0: all cores); with 0, inside a pool already
/// (`brink all`), on that pool.
pub(super) fn in_pool<T: Send>(
    jobs: usize,
    f: impl FnOnce() -> Result<T, Error> + Send,
) -> Result<T, Error> {
    if jobs == 0 && rayon::current_thread_index().is_some() {
        return f();
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| Error::Io {
            path: "(thread pool)".into(),
            source: std::io::Error::other(e),
        })?
        .install(f)
}
