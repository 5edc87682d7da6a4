//! Sweeps: the tipping curve and the phase map share one engine. A sweep is a list of
//! runs, each (variant, value on each axis, seed, branch); the baseline branch has every
//! trigger event switched off, the triggered branch switched on. Runs go in parallel on a
//! local rayon pool; results are kept in run order, so the output does not depend on
//! `--jobs`, and `--shard K/N` runs every N-th run from K of a grid, or every N-th variant
//! from K of an adaptive search.

use super::collapse_time;
use super::measure::Gauge;
use super::observe::{Observer, SweepOutcome, SweepWritten};
use super::shard::{self, Shard};
use super::{Error, Outputs};
use crate::engine::time::{SimTime, ns_to_secs};
use crate::export;
use crate::export::shard_json::SearchedVariant;
use crate::model::RunResult;
use crate::model::witness::Knob;
use crate::report::phase::PhaseMap;
use crate::report::sweep_result::{self, SweepReport};
use crate::report::{phase_plot, sweep_plot};
use crate::scenario::sweep::{Axis, AxisUnit, Health, Measure, Method, Tipping};
use crate::scenario::{Loader, Override, Scenario, ScenarioError};
use crate::stats::plan::{AxisPlan, Bound, Branch, CollapseTime, Kind, Plan, Run, VariantPlan};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

mod built;
mod kin;
mod runs;
mod shared;
#[cfg(test)]
mod tests;
mod warm;

use built::Built;
use runs::in_pool;
#[cfg(test)]
use shared::same;
use warm::{seconds, warm_start};

/// The name of the scenario as written, among variants.
pub const BASE: &str = "base";

/// Which variants a sweep covers.
#[derive(Debug, Clone, Default)]
pub struct Variants {
    /// Named variants (`base` is the scenario as written); none means `base` only.
    pub names: Vec<String>,
    /// `base` and every variant the file defines.
    pub all: bool,
}

/// Per branch (baseline, triggered), the earlier variant's branch whose runs a variant's
/// repeat, if any ([`Sweep::sources`]).
type Sources = [Option<(usize, Branch)>; 2];

/// Per branch (baseline, triggered), the earlier variants' branches whose runs a variant's
/// repeat where those runs never reached the knobs they differ in ([`kin`]).
type Kin = [Vec<(usize, Branch, Vec<Knob>)>; 2];

/// A sweep ready to run: the plan and how to build each run's scenario.
pub struct Sweep {
    loader: Loader,
    sets: Vec<Override>,
    /// The trigger events of each variant (a variant may set its own `tipping.trigger`).
    triggers: Vec<Vec<String>>,
    /// Per variant, the run length of its runs when the sweep sets it (`tipping.duration`,
    /// less the warm-up's shift).
    lengths: Vec<Option<SimTime>>,
    /// Per variant, the overrides that move its events earlier for `tipping.warmup` (each
    /// event's start, and the metrics step kept): none without a shift.
    moved: Vec<Vec<Override>>,
    variants: Vec<Option<String>>,
    axes: Vec<Axis>,
    tipping: Tipping,
    plan: Plan,
    /// The scenarios of the runs lately run, shared by their seeds.
    built: Built,
    /// Per variant, per branch (baseline, triggered): an earlier variant's branch whose
    /// runs it repeats ([`Sweep::sources`]).
    sources: Vec<Sources>,
    /// Per variant, per branch: its kin ([`kin`]), for a variant without a source there.
    kin: Vec<Kin>,
    /// Per variant: its runs look for what `cancel_expired` would drop, for kin that
    /// differ from it there ([`crate::scenario::Config::watch`]).
    watch: Vec<bool>,
    /// The runs simulated so far (a forked pair's two): fewer than the runs returned when
    /// some are read from a source's.
    simulated: AtomicU64,
}

impl Sweep {
    /// Validates the sweep: the `[tipping]` (and for a phase map `[phase]`) section, the
    /// variants, and the scenario at every value of every axis. Nothing runs yet.
    pub fn prepare(
        loader: Loader,
        kind: Kind,
        variants: &Variants,
        sets: Vec<Override>,
    ) -> Result<Self, Error> {
        let base = loader.load(None, &sets)?;
        let missing = |section: &str, example: &str| {
            let msg = format!("the scenario has no [{section}] section; add one, e.g. {example}");
            loader.problem(section, &msg, &[])
        };
        let Some(tipping) = base.tipping.clone() else {
            return Err(missing(
                "tipping",
                "[tipping] vary = \"class.request.rate\", from = 10, to = 100, trigger = [\"slowdown\"], settle = \"5m\", measure = \"goodput_ratio.request\", healthy_above = 0.8",
            )
            .into());
        };
        let mut axes = vec![tipping.axis.clone()];
        if kind == Kind::Phase {
            let Some(phase) = &base.phase else {
                return Err(missing(
                    "phase",
                    "[phase] vary = \"event.slowdown.for\", from = \"5s\", to = \"60s\", points = 12",
                )
                .into());
            };
            axes.push(phase.axis.clone());
        }
        let mut chosen: Vec<Option<String>> = Vec::new();
        let defined = loader.variant_names();
        if variants.all {
            chosen.push(None);
            chosen.extend(defined.iter().cloned().map(Some));
        }
        for n in &variants.names {
            let v = (n != BASE || defined.contains(n)).then(|| n.clone());
            if !chosen.contains(&v) {
                chosen.push(v);
            }
        }
        if chosen.is_empty() {
            chosen.push(None);
        }
        let mut plans = Vec::new();
        // Each variant's own configuration and measure: what names its components for its
        // kin (a variant may add classes, pools or an autoscaler).
        let mut designs = Vec::new();
        let mut triggers = Vec::new();
        let (mut lengths, mut moved) = (Vec::new(), Vec::new());
        for v in &chosen {
            // Each variant's own value of each swept parameter is its operating point, and
            // a variant may name its own trigger (a partition instead of a rollout).
            let sc = loader.load(v.as_deref(), &sets)?;
            let measure = sc.tipping.as_ref().map(|t| t.measure_name.clone());
            designs.push((
                sc.config.clone(),
                measure.unwrap_or_else(|| tipping.measure_name.clone()),
            ));
            let named = sc
                .tipping
                .as_ref()
                .map_or_else(|| tipping.trigger.clone(), |t| t.trigger.clone());
            // A trigger the variant itself switches off (on in the scenario as written, off
            // in the variant) stays off in both branches: the variant is the design without
            // that disturbance, not the base design with it.
            let enabled = |s: &Scenario, name: &str| {
                s.config
                    .triggers
                    .iter()
                    .any(|t| t.name == name && t.enabled)
            };
            let (on, off): (Vec<String>, Vec<String>) = named
                .into_iter()
                .partition(|n| !enabled(&base, n) || enabled(&sc, n));
            triggers.push(on);
            let (length, sets) = warm_start(&sc, tipping.duration_ns);
            lengths.push(length);
            moved.push(sets);
            let mut op = vec![sc.tipping.as_ref().map_or(0.0, |t| t.axis.operating_point)];
            if kind == Kind::Phase {
                op.push(sc.phase.as_ref().map_or(0.0, |p| p.axis.operating_point));
            }
            let tolerance = sc.tipping.as_ref().map_or(0.0, |t| t.tolerance_at(op[0]));
            plans.push(VariantPlan {
                name: v.clone().unwrap_or_else(|| BASE.into()),
                operating_point: op,
                untriggered: off,
                tolerance,
                collapse_time: None,
            });
        }
        let plan = Plan {
            kind,
            scenario: base.name.clone(),
            title: base.title.clone(),
            measure: tipping.measure_name.clone(),
            health: tipping.health,
            trigger: tipping.trigger.clone(),
            // A phase map's seeds per cell are its own (`phase.seeds`, validated).
            seeds: match (&base.phase, kind) {
                (Some(p), Kind::Phase) => p.seeds,
                _ => tipping.seeds,
            },
            axes: axes
                .iter()
                .map(|a| AxisPlan {
                    path: a.path.clone(),
                    unit: if a.unit == AxisUnit::Seconds {
                        Some("s".to_string())
                    } else {
                        a.unit_name.clone()
                    },
                    values: a.values.clone(),
                    label: a.label.clone(),
                })
                .collect(),
            variants: plans,
            // A phase map is a grid over two axes; only a tipping curve is searched.
            method: match kind {
                Kind::Tipping => tipping.method,
                Kind::Phase => Method::Grid,
            },
            settle_s: ns_to_secs(tipping.settle_ns),
            recover_within_s: tipping.recover_within_ns.map(ns_to_secs),
            provenance: base.provenance.clone(),
        };
        let mut sweep = Self {
            loader,
            sets,
            triggers,
            lengths,
            moved,
            variants: chosen,
            axes,
            tipping,
            plan,
            built: Built::default(),
            sources: Vec::new(),
            kin: Vec::new(),
            watch: Vec::new(),
            simulated: AtomicU64::new(0),
        };
        let tables = sweep.tables()?;
        sweep.sources = sweep.sources(&tables);
        sweep.kin = sweep.kin(&tables, &designs);
        sweep.watch = (0..sweep.variants.len())
            .map(|u| {
                let cancels = |k: &Knob| matches!(k, Knob::CancelExpired(_) | Knob::Workers { .. });
                let kin = sweep.kin.iter().flatten().flatten();
                kin.into_iter()
                    .any(|(w, _, knobs)| *w == u && knobs.iter().any(cancels))
            })
            .collect();
        // Every cell must load (a swept value may be out of range): refuse before running.
        let stride = sweep.plan.seeds as u64 * 2;
        for i in (0..sweep.plan.len()).step_by(stride as usize) {
            sweep.scenario(i)?;
        }
        Ok(sweep)
    }

    /// What the sweep covers.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// How many runs the sweep has simulated so far (a forked pair counts two).
    pub fn simulated(&self) -> u64 {
        self.simulated.load(Ordering::Relaxed)
    }

    /// The indices of the runs of a shard (all runs without one).
    pub fn indices(&self, shard: Option<Shard>) -> Vec<u64> {
        let all = 0..self.plan.len();
        match shard {
            None => all.collect(),
            Some(s) => all.filter(|i| i % s.count == s.index).collect(),
        }
    }

    /// The scenario of run `i`: the variant, the user's overrides, then the sweep's own
    /// (run length, swept values, trigger events on or off).
    fn scenario(&self, i: u64) -> Result<Scenario, ScenarioError> {
        let p = self.plan.point(i);
        let at = |a: usize| self.axes.get(a).map_or(0.0, |axis| axis.values[p.at[a]]);
        self.scenario_at(p.variant, [at(0), at(1)], p.branch)
    }

    /// The scenario of a run of variant `variant` at `value` on each axis, built once for
    /// all the seeds that run there ([`Built`]).
    fn kept_scenario_at(
        &self,
        variant: usize,
        value: [f64; 2],
        branch: Branch,
    ) -> Result<std::sync::Arc<Scenario>, ScenarioError> {
        self.built.get(variant, value, branch, || {
            self.scenario_at(variant, value, branch)
        })
    }

    /// The scenario of a run of variant `variant` at `value` on each axis.
    fn scenario_at(
        &self,
        variant: usize,
        value: [f64; 2],
        branch: Branch,
    ) -> Result<Scenario, ScenarioError> {
        let sets = self.sets_at(variant, Some(value), branch);
        let mut sc = self.loader.load(self.variants[variant].as_deref(), &sets)?;
        if self.watch.get(variant) == Some(&true) {
            std::sync::Arc::make_mut(&mut sc.config).watch = true;
        }
        Ok(sc)
    }

    /// The overrides of a run of variant `variant` on `branch`, after the variant's own:
    /// the user's, then the sweep's (run length, the swept values when given, trigger
    /// events on or off).
    fn sets_at(&self, variant: usize, value: Option<[f64; 2]>, branch: Branch) -> Vec<Override> {
        // Sweeps measure the design, not a response to an incident: a scenario's [[at]]
        // interventions (a postmortem's remediation timeline) are left out.
        let mut sets = vec![Override::new(
            "at",
            toml::Value::Array(vec![]),
            "[tipping] (sweeps leave out [[at]] interventions)",
        )];
        sets.extend(self.sets.iter().cloned());
        if let Some(d) = self.lengths[variant] {
            sets.push(Override::new("duration", seconds(d), "[tipping] duration"));
        }
        sets.extend(self.moved[variant].iter().cloned());
        let values = value
            .iter()
            .flat_map(|v| self.axes.iter().zip(v).enumerate());
        for (a, (axis, &x)) in values {
            let value = axis.toml_value(x);
            let section = if a == 0 { "tipping" } else { "phase" };
            sets.push(Override::probe(
                &axis.path,
                value.clone(),
                format!("[{section}] sweep value {}={value}", axis.path),
            ));
        }
        let on = branch == Branch::Triggered;
        for name in &self.triggers[variant] {
            sets.push(Override::new(
                &format!("event.{name}.enabled"),
                toml::Value::Boolean(on),
                format!("[tipping] trigger {name}"),
            ));
        }
        sets
    }

    /// The variants of a shard: variant i goes to shard i modulo N (`base`, when swept,
    /// is variant 0); every variant without a shard. A shard beyond the last variant has
    /// none.
    pub fn variants_of(&self, shard: Option<Shard>) -> Vec<usize> {
        let n = self.plan.variants.len();
        match shard {
            None => (0..n).collect(),
            Some(s) => (0..n).filter(|&v| v as u64 % s.count == s.index).collect(),
        }
    }

    /// Runs the whole sweep, or one shard of it, on `jobs` threads (0: all cores) and
    /// writes its files under `out`: the sweep's files, or the shard's file. `obs` hears
    /// the progress and the files written. A grid's shard runs every N-th run from K; an
    /// adaptive search's shard runs the whole searches of its variants
    /// ([`Sweep::variants_of`]): a search places each probe from the results before it,
    /// so one variant's search stays on one shard.
    pub fn run_and_write(
        &self,
        jobs: usize,
        shard: Option<Shard>,
        out: &Path,
        obs: &dyn Observer,
    ) -> Result<SweepWritten, Error> {
        let start = Instant::now();
        let dir = output_dir(out, &self.plan);
        let (runs, outcome) = if self.plan.method == Method::Adaptive {
            let variants = self.variants_of(shard);
            let times = self.collapse_times(&variants, jobs)?;
            // The bar counts the runs the search has decided to do, growing as it decides
            // more (probes stop early, bisection and focus add some): not the grid's size.
            obs.sweep_started(&self.plan, 0);
            let searched =
                self.search_variants(&variants, jobs, &|| obs.sweep_progressed(), &|n| {
                    obs.sweep_grew(n as usize)
                });
            obs.sweep_stopped();
            let searched = searched?;
            let n = searched.iter().map(Vec::len).sum();
            let outcome = match shard {
                Some(s) => {
                    let searched = variants
                        .iter()
                        .zip(times)
                        .zip(searched)
                        .map(|((&v, collapse_time), runs)| SearchedVariant {
                            variant: v,
                            tolerance: self.plan.variants[v].tolerance,
                            collapse_time,
                            runs,
                        })
                        .collect();
                    SweepOutcome::Shard {
                        shard: s,
                        file: shard::write_searched(&dir, &self.plan, s, searched)?,
                    }
                }
                None => {
                    let plan = self.with_times(times);
                    let runs: Vec<Run> = searched.into_iter().flatten().collect();
                    SweepOutcome::Whole(Box::new(write_outputs(&dir, &plan, &runs)?))
                }
            };
            (n, outcome)
        } else {
            let all = self.variants_of(None);
            let plan = self.with_times(self.collapse_times(&all, jobs)?);
            let indices = self.indices(shard);
            obs.sweep_started(&plan, indices.len());
            let runs = self.run(&indices, jobs, &|| obs.sweep_progressed());
            obs.sweep_stopped();
            let runs = runs?;
            let n = runs.len();
            let outcome = match shard {
                Some(s) => SweepOutcome::Shard {
                    shard: s,
                    file: shard::write(&dir, &plan, s, runs)?,
                },
                None => {
                    SweepOutcome::Whole(Box::new(write_outputs(&dir, &plan, &plan.locate(&runs))?))
                }
            };
            (n, outcome)
        };
        let written = SweepWritten {
            scenario: self.plan.scenario.clone(),
            kind: self.plan.kind,
            dir,
            runs,
            wall_s: start.elapsed().as_secs_f64(),
            outcome,
        };
        obs.sweep_written(&written);
        Ok(written)
    }

    /// The plan with each variant's mean time to spontaneous collapse (`times`, one per
    /// variant in order).
    fn with_times(&self, times: Vec<Option<CollapseTime>>) -> Plan {
        let mut plan = self.plan.clone();
        for (vp, t) in plan.variants.iter_mut().zip(times) {
            vp.collapse_time = t;
        }
        plan
    }

    /// The mean time to spontaneous collapse at the operating point of each of
    /// `variants`, for a tipping sweep of a scenario with a `[collapse]` section (a derived
    /// level is a guess: it is estimated only when asked for); none otherwise. Variants
    /// side by side.
    fn collapse_times(
        &self,
        variants: &[usize],
        jobs: usize,
    ) -> Result<Vec<Option<CollapseTime>>, Error> {
        let asked = |sc: &Scenario| sc.collapse.as_ref().is_some_and(|c| !c.derived);
        if self.plan.kind != Kind::Tipping {
            return Ok(vec![None; variants.len()]);
        }
        in_pool(jobs, || {
            variants
                .par_iter()
                .with_max_len(1)
                .map(|&v| -> Result<Option<CollapseTime>, Error> {
                    let sc = self.loader.load(self.variants[v].as_deref(), &self.sets)?;
                    if !asked(&sc) {
                        return Ok(None);
                    }
                    let e =
                        collapse_time::mean_time_to_collapse(&sc, sc.seed, &Default::default())?;
                    Ok(Some(CollapseTime {
                        at: sc.tipping.as_ref().map_or(0.0, |t| t.axis.operating_point),
                        mean_s: e.mean_s,
                        ci95: e.ci95,
                        text: e.mean_text,
                        level: format!("{} >= {}", e.level, e.at),
                        bound: e.budget_spent.map(|_| Bound::Lower),
                        budget_spent_at_level: e.budget_spent.map(|s| s.level),
                        levels: e.budget_spent.map(|s| s.levels),
                    }))
                })
                .collect::<Result<Vec<_>, _>>()
        })
    }
}

/// The measure of one run over the window `[start, end)`: the whole time-series rows that
/// start at or after `start` and end by `end`, weighted by their length (the run's last row
/// ends at `end`). A sweep measures from after the trigger to the end of its run; a
/// hysteresis ramp measures each step's settled part. One definition of the measure:
/// [`Gauge`]'s. An error names a column the run did not produce.
pub fn measure_window(
    r: &RunResult,
    m: &Measure,
    start: SimTime,
    end: SimTime,
) -> Result<Option<f64>, String> {
    let gauge = Gauge::of(m, Health::Above(0.0), &r.series.columns, start, end)?;
    Ok(gauge.measure(&r.series.rows, end))
}

/// The folder a sweep's files go to: `out/<scenario>/`.
pub fn output_dir(out: &Path, plan: &Plan) -> PathBuf {
    out.join(&plan.scenario)
}

/// Writes a whole sweep's files into `dir`: `tipping.csv`, `tipping.json`,
/// `tipping.png/.svg`, or `phase.csv`, `phase.json`, `phase.png/.svg`; then
/// `<kind>.provenance.json`. `runs` holds every run, in
/// (variant, value, seed, branch) order.
pub fn write_outputs(dir: &Path, plan: &Plan, runs: &[Run]) -> Result<SweepReport, Error> {
    let stem = plan.kind.stem();
    let out = Outputs::begin(dir, stem)?;
    let r = sweep_result::report(plan, runs);
    out.write(&format!("{stem}.csv"), &export::sweep_csv(plan, runs))?;
    let png = format!("{stem}.png");
    match plan.kind {
        Kind::Tipping => {
            out.write("tipping.json", &export::tipping_json(&r))?;
            out.draw(&png, |stage| sweep_plot::write_tipping(stage, &r))?;
        }
        Kind::Phase => {
            // and `phase.json`: the report with both operating values and the grid.
            let map = PhaseMap::new(plan, &r);
            out.write("phase.json", &export::phase_json(&map))?;
            out.draw(&png, |stage| phase_plot::write_phase(stage, &map))?;
        }
    }
    out.sidecar(stem, &plan.provenance)?;
    out.commit()?;
    Ok(r)
}

/// The files a whole sweep of `kind` writes into its folder, its provenance sidecar last.
pub fn sweep_files(kind: Kind) -> Vec<String> {
    let stem = kind.stem();
    ["csv", "json", "png", "svg", "provenance.json"]
        .map(|ext| format!("{stem}.{ext}"))
        .to_vec()
}
