//! The mean time to spontaneous collapse at a scenario's operating point, estimated by
//! multilevel splitting (`brink collapse-time`), and its file `collapse-time.json`.
//!
//! "Spontaneous": the scenario runs without its triggers and `[[at]]` interventions, at the
//! parameters in force at time zero, from an empty system, until the `[collapse]` level is
//! reached. That can take far longer than any run can show, so the estimator clones the
//! simulation each time a trajectory enters the next level and continues the copies on
//! their own random streams; [`super::splitting`] turns what they do into the mean time.
//!
//! **A spent budget gives a lower bound.** When the estimate runs out of its event budget
//! (`collapse.max_events`) it stops where it is and reports what it reached as a lower
//! bound ([`Estimate::budget_spent`]): the levels not finished are counted as certain (a
//! conditional probability is at most 1), and the level under way as if every trajectory
//! not yet decided would reach the next level. That bounds p from above, so `E[cycle]/p`
//! from below. What it bounds is the estimate a larger budget would give from the same
//! seed, which is itself an estimate of the true mean: the bound carries the sampling
//! error of the levels it did finish (it is a point value, without an interval). Spent in
//! the direct cycles, the bound is the mean cycle so far, the cycle under way counted as
//! ending when the budget did (short of its true length, so low too).

use super::splitting::{LevelOutcome, Tally, mean_first_passage};
use super::{Error, Outputs};
use crate::engine::time::SimTime;
use crate::model::Simulation;
use crate::model::budget::{Limits, Use, bytes_of, copy_known_bytes};
use crate::model::stepping::{Crossing, Level};
use crate::report::human_time::{budget_spent_at, human_duration};
use crate::scenario::{Collapse, CollapseLevel, Provenance, Scenario};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How far a stepped run may go in simulated time: far beyond any estimate's trajectory,
/// short of the clock's end (about 146 years of the 584 a `SimTime` holds).
const HORIZON: SimTime = SimTime::MAX / 4;

/// Settings of one estimate besides the scenario's.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Replaces the scenario's `[collapse]` settings, if set.
    pub collapse: Option<Collapse>,
}

/// One splitting level's result.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LevelResult {
    /// The level the trajectories started from.
    pub from: u64,
    /// The level they had to reach before the healthy set.
    pub to: u64,
    /// Trajectories run.
    pub tried: u64,
    /// Trajectories that reached `to`.
    pub reached: u64,
    /// The estimated conditional probability `reached / tried`.
    pub p: f64,
}

/// Where an estimate spent its event budget (see the module doc).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Spent {
    /// The splitting level under way, from 1 (0: still in the direct cycles).
    pub level: u64,
    /// The splitting levels in all.
    pub levels: u64,
    /// The budget (`collapse.max_events`).
    pub max_events: u64,
}

/// The mean time to collapse and how it was obtained.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Estimate {
    /// The mean time from an empty system to collapse, seconds; with `budget_spent`, a
    /// lower bound on it.
    pub mean_s: f64,
    /// Its 95% confidence interval, seconds (approximate; see [`super::splitting`]); none
    /// for a bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
    /// The mean in words ("3.2 days").
    pub mean_text: String,
    /// `"splitting"` (multilevel splitting with the regenerative formula).
    pub method: &'static str,
    /// What is counted: `"in_flight"` or `"queue of pool NAME"`.
    pub level: String,
    /// The collapse level.
    pub at: u64,
    /// The healthy set: level at most this.
    pub base: u64,
    /// Whether the level was derived from a pool's queue limit (no `[collapse]` section).
    pub derived: bool,
    /// The estimated probability that an excursion from the healthy set collapses (for a
    /// bound, the upper bound on it that the bound divides by).
    pub p_collapse: f64,
    /// The mean time of one cycle (healthy set to the first level, then back to healthy or
    /// on to collapse), seconds.
    pub cycle_s: f64,
    /// The excursions simulated directly.
    pub cycles: u64,
    /// Trajectories per level.
    pub effort: u64,
    /// Each level's crossing probability.
    pub levels: Vec<LevelResult>,
    /// Events simulated in all.
    pub events: u64,
    /// Where the event budget ran out, when it did: `mean_s` is then a lower bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_spent: Option<Spent>,
}

impl Estimate {
    /// The estimate, or for a bound (the budget spent) the error that names the budget
    /// and says what the bound is: `brink collapse-time` asks for an estimate, so a bound
    /// is not its answer.
    pub fn exact(self) -> Result<Self, Error> {
        match self.budget_spent {
            None => Ok(self),
            Some(s) => Err(Error::Collapse(format!(
                "the estimate used its budget of {} events (collapse.max_events): {}. What it reached bounds the mean time below: > {} ({:.2e} s). Raise the budget with --set collapse.max_events=N, or lower collapse.effort or collapse.cycles",
                s.max_events,
                budget_spent_at(s.level, s.levels),
                self.mean_text,
                self.mean_s
            ))),
        }
    }
}

/// Estimates the mean time to spontaneous collapse of `sc` from an empty system; `seed`
/// replaces the scenario's seed. With the event budget (`collapse.max_events`) spent, the
/// estimate is a lower bound (`budget_spent`; [`Estimate::exact`] refuses it). Errors: no
/// collapse level, or a level no trajectory got past.
pub fn mean_time_to_collapse(sc: &Scenario, seed: u64, opts: &Options) -> Result<Estimate, Error> {
    let (c, quiet, mut budget) = prepare(sc, seed, opts)?;
    let known = crate::model::budget::check_before(&quiet)?;
    // The first level is one above the healthy set, however long the step: the direct
    // phase waits for it without a way down, so it must come soon.
    let l1 = c.base + 1;
    let estimate =
        |cycle: &Tally, outcomes: &[LevelOutcome], levels, events, spent: Option<Spent>| {
            let pass = mean_first_passage(cycle, outcomes);
            Estimate {
                mean_s: pass.mean_s,
                ci95: spent.is_none().then_some(pass.ci95),
                mean_text: human_duration(pass.mean_s),
                method: "splitting",
                level: level_name(sc, c.level),
                at: c.at,
                base: c.base,
                derived: c.derived,
                p_collapse: pass.p,
                cycle_s: cycle.mean(),
                cycles: c.cycles,
                effort: c.effort,
                levels,
                events,
                budget_spent: spent,
            }
        };

    // The direct phase: `cycles` cycles, each from the healthy set to the first level
    // (where the state is kept as an entrance) and on until the level is healthy again or
    // has collapsed; after a collapse a fresh run (an empty system) takes over.
    let mut cycle = Tally::default();
    let mut entrances: Vec<Simulation> = Vec::new();
    let mut restarts = 0u64;
    let mut main = fresh(&quiet, restarts);
    let mut kept = Kept {
        limits: main.limits(),
        per_copy: copy_known_bytes(&quiet.config),
        known,
        count: 0,
        bytes: 0,
    };
    let spent = |level| {
        Some(Spent {
            level,
            levels: (c.at - l1).div_ceil(c.step),
            max_events: c.max_events,
        })
    };
    while (entrances.len() as u64) < c.cycles {
        let t0 = main.now_s();
        let mut crossing = budget.step(&mut main, c.level, l1, None)?;
        if crossing != Crossing::Budget {
            kept.keep(&main)?;
            let mut entrance = main.clone();
            entrance.forget_latencies();
            entrances.push(entrance);
            if l1 < c.at {
                crossing = budget.step(&mut main, c.level, c.at, Some(c.base))?;
            }
        }
        cycle.add(main.now_s() - t0);
        if crossing == Crossing::Budget {
            return Ok(estimate(&cycle, &[], Vec::new(), budget.used(), spent(0)));
        }
        let collapsed = crossing == Crossing::Up;
        if collapsed {
            restarts += 1;
            main = fresh(&quiet, restarts);
        }
    }
    drop(main);

    // The splitting phase: `effort` trajectories from the entrances into each level.
    let mut levels = Vec::new();
    let mut outcomes = Vec::new();
    let mut from = l1;
    let mut split = 0u64;
    let mut entrance_bytes = kept.bytes;
    while from < c.at {
        let to = (from + c.step).min(c.at);
        let mut next = Vec::new();
        let mut next_bytes = 0u64;
        for j in 0..c.effort {
            let mut sim = entrances[(j % entrances.len() as u64) as usize].clone();
            split += 1;
            sim.reseed(seed, split);
            match budget.step(&mut sim, c.level, to, Some(c.base))? {
                Crossing::Up => {
                    sim.forget_latencies();
                    next_bytes = next_bytes.saturating_add(kept.keep(&sim)?);
                    next.push(sim);
                }
                Crossing::Base => {}
                Crossing::Budget => {
                    // Trajectory j and those not started are counted as reaching `to`.
                    outcomes.push(LevelOutcome {
                        tried: c.effort,
                        reached: next.len() as u64 + c.effort - j,
                    });
                    let level = levels.len() as u64 + 1;
                    return Ok(estimate(
                        &cycle,
                        &outcomes,
                        levels,
                        budget.used(),
                        spent(level),
                    ));
                }
            }
        }
        let reached = next.len() as u64;
        levels.push(LevelResult {
            from,
            to,
            tried: c.effort,
            reached,
            p: reached as f64 / c.effort as f64,
        });
        if reached == 0 {
            return Err(Error::Collapse(format!(
                "no trajectory of {} from level {from} reached level {to} before the healthy set: collapse is too rare for this effort. Raise collapse.effort (now {}) or lower collapse.step (now {})",
                c.effort, c.effort, c.step
            )));
        }
        outcomes.push(LevelOutcome {
            tried: c.effort,
            reached,
        });
        kept.forget(entrances.len() as u64, entrance_bytes);
        entrances = next;
        entrance_bytes = next_bytes;
        from = to;
    }
    Ok(estimate(&cycle, &outcomes, levels, budget.used(), None))
}

/// The mean of `runs` direct first passages from an empty system to the collapse level,
/// with its 95% interval (normal approximation): the check on splitting where collapse is
/// common enough to wait for. Errors like [`mean_time_to_collapse`].
pub fn direct_time_to_collapse(
    sc: &Scenario,
    seed: u64,
    runs: u64,
    opts: &Options,
) -> Result<(f64, [f64; 2]), Error> {
    let (c, quiet, mut budget) = prepare(sc, seed, opts)?;
    crate::model::budget::check_before(&quiet)?;
    let mut t = Tally::default();
    for r in 0..runs {
        let mut sim = fresh(&quiet, r);
        if budget.step(&mut sim, c.level, c.at, None)? == Crossing::Budget {
            return Err(Error::Collapse(format!(
                "the direct runs used their budget of {} events (collapse.max_events) at simulated time {:.0} s; raise it with --set collapse.max_events=N",
                budget.max,
                sim.now_s()
            )));
        }
        t.add(sim.now_s());
    }
    let h = 1.96 * t.var_of_mean().sqrt();
    Ok((t.mean(), [t.mean() - h, t.mean() + h]))
}

/// The collapse settings in force, the scenario to simulate and the event budget.
fn prepare(
    sc: &Scenario,
    seed: u64,
    opts: &Options,
) -> Result<(Collapse, Scenario, Budget), Error> {
    let Some(c) = opts.collapse.clone().or_else(|| sc.collapse.clone()) else {
        return Err(Error::NoCollapseLevel {
            scenario: sc.name.clone(),
        });
    };
    let budget = Budget {
        left: c.max_events,
        max: c.max_events,
    };
    Ok((c, spontaneous(sc, seed), budget))
}

/// `sc` without its triggers and interventions, with `seed`: the operating point left
/// alone.
fn spontaneous(sc: &Scenario, seed: u64) -> Scenario {
    let mut quiet = sc.clone();
    quiet.seed = seed;
    quiet.interventions.clear();
    for t in &mut Arc::make_mut(&mut quiet.config).triggers {
        t.enabled = false;
    }
    quiet
}

/// A new stepped run of `sc` from an empty system, with run index `run`.
fn fresh(sc: &Scenario, run: u64) -> Simulation<'_> {
    let mut sim = Simulation::new(sc, run);
    sim.start(HORIZON);
    sim
}

/// What the level counts, in words.
fn level_name(sc: &Scenario, level: CollapseLevel) -> String {
    match level {
        CollapseLevel::InFlight => "in_flight".into(),
        CollapseLevel::Queue(p) => format!("queue of pool {}", sc.config.pools[p].name),
    }
}

/// The copies of the simulation an estimate keeps (the entrances, and a level's
/// trajectories that reached the next), counted against the memory ceiling with what the
/// run holds from the start: an estimate that would pass it ends with the ceiling's error
/// (exit 1) before it makes the copy, never an abort.
struct Kept {
    /// The run's budgets.
    limits: Limits,
    /// What the run holds from the start ([`crate::model::budget::known_uses`]).
    known: Vec<Use>,
    /// What every copy holds ([`copy_known_bytes`]).
    per_copy: u64,
    /// The copies kept and their bytes (each `per_copy` and what it has grown).
    count: u64,
    bytes: u64,
}

impl Kept {
    /// Counts one more copy of `sim` (before it is made); returns its bytes, or the
    /// ceiling's error if it does not fit.
    fn keep(&mut self, sim: &Simulation) -> Result<u64, Error> {
        let bytes = self.per_copy.saturating_add(sim.grown_bytes());
        self.count += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        if bytes_of(&self.known).saturating_add(self.bytes) > self.limits.memory {
            let mut uses = self.known.clone();
            uses.push(Use {
                what: "copies of the simulation kept by the estimate".into(),
                count: self.count,
                bytes: self.bytes,
            });
            return Err(self.limits.exceeded(&uses, Some(sim.now())).into());
        }
        Ok(bytes)
    }

    /// Counts `count` copies of `bytes` in all as gone.
    fn forget(&mut self, count: u64, bytes: u64) {
        self.count -= count.min(self.count);
        self.bytes -= bytes.min(self.bytes);
    }
}

/// The events an estimate may still simulate.
struct Budget {
    left: u64,
    max: u64,
}

impl Budget {
    /// Advances `sim` to `up` or `base` within the budget ([`Crossing::Budget`] once it
    /// has run out).
    fn step(
        &mut self,
        sim: &mut Simulation,
        level: Level,
        up: u64,
        base: Option<u64>,
    ) -> Result<Crossing, Error> {
        let before = sim.events();
        let crossing = sim.advance_until(level, up, base, self.left)?;
        self.left -= (sim.events() - before).min(self.left);
        Ok(crossing)
    }

    /// The events simulated so far.
    fn used(&self) -> u64 {
        self.max - self.left
    }
}

/// Writes `dir/collapse-time.json` (the estimate with what produced it) and its sidecar;
/// returns its path.
pub fn write(dir: &Path, sc: &Scenario, est: &Estimate) -> Result<PathBuf, Error> {
    /// `produced_by` keeps its first field, `version` (brink's, as `brink` says too).
    #[derive(Serialize)]
    struct ProducedBy<'a> {
        version: &'a str,
        #[serde(flatten)]
        provenance: &'a Provenance,
    }
    #[derive(Serialize)]
    struct File<'a> {
        produced_by: ProducedBy<'a>,
        estimate: &'a Estimate,
    }
    let out = Outputs::begin(dir, "collapse-time")?;
    let bytes = crate::export::pretty_json(&File {
        produced_by: ProducedBy {
            version: &sc.provenance.brink,
            provenance: &sc.provenance,
        },
        estimate: est,
    });
    out.write("collapse-time.json", &bytes)?;
    out.sidecar("collapse-time", &sc.provenance)?;
    out.commit()?;
    Ok(dir.join("collapse-time.json"))
}
