//! The hysteresis loop: one run that ramps the `[tipping]` parameter slowly from
//! `tipping.from` up to `tipping.to` and back down (quasi-static: each value is held for
//! `hysteresis.dwell`), with the trigger events off since the ramp itself is the
//! disturbance. The ramp is the scenario with generated `[[at]]` interventions, so every
//! value is checked like any intervention; each step's measure is read from the run's time
//! series over the settled part of its dwell. Writes `hysteresis.csv`, `.json`, `.png`,
//! `.svg`.

use super::observe::Observer;
use super::sweep::measure_window;
use super::{Error, Outputs};
use crate::engine::time::SimTime;
use crate::export;
use crate::model::Simulation;
use crate::report::hysteresis_plot;
use crate::report::hysteresis_result::{self, HysteresisReport};
use crate::scenario::sweep::{Axis, AxisUnit, spaced};
use crate::scenario::{Hysteresis, Loader, Override, Scenario, Tipping, validate};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Instant;
use toml::{Table, Value};

/// A ramp ready to run: the scenario of its one run and how to read it.
pub struct Ramp {
    loader: Loader,
    sets: Vec<Override>,
    /// The ramp's run: the scenario with its generated interventions.
    scenario: Scenario,
    tipping: Tipping,
    hysteresis: Hysteresis,
    /// The values of the up-ramp; the down-ramp takes them in reverse.
    values: Vec<f64>,
    operating_point: f64,
}

/// What `brink hysteresis` wrote.
#[derive(Debug, Clone)]
pub struct HysteresisWritten {
    pub dir: PathBuf,
    pub wall_s: f64,
    pub report: HysteresisReport,
}

impl Ramp {
    /// Builds and validates the ramp of the scenario (with a variant and overrides): the
    /// `[tipping]` section, `[hysteresis]` (its defaults when the file has none), a
    /// parameter an intervention can change, and every step's value. Nothing runs yet.
    pub fn prepare(
        loader: Loader,
        variant: Option<&str>,
        sets: Vec<Override>,
    ) -> Result<Self, Error> {
        match Self::build(loader.clone(), variant, sets.clone())? {
            Ok(ramp) => Ok(ramp),
            Err(why) => Err(loader.problem("tipping.vary", &why, &sets).into()),
        }
    }

    /// The ramp of the scenario as written, if its `[tipping]` parameter is one an
    /// intervention can change (`brink all` draws the loop of every such scenario); `None`
    /// without a `[tipping]` section, for a parameter that cannot be ramped (a burst's
    /// size, an event's `for`), or for a scenario without `[hysteresis]` whose defaults
    /// make no ramp (a `tipping.settle` of zero leaves no default dwell): the loop was not
    /// asked for, and the file's own sweep is not at fault. A `[hysteresis]` section the
    /// file does have is checked as `prepare` checks it.
    pub fn if_rampable(loader: Loader) -> Result<Option<Self>, Error> {
        let base = loader.load(None, &[])?;
        if base.tipping.is_none() {
            return Ok(None);
        }
        match Self::build(loader, None, vec![]) {
            Ok(ramp) => Ok(ramp.ok()),
            Err(_) if base.hysteresis.is_none() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// [`prepare`](Self::prepare)'s work: the ramp, or (inside) why its parameter cannot be
    /// ramped, in words for `tipping.vary`.
    fn build(
        loader: Loader,
        variant: Option<&str>,
        sets: Vec<Override>,
    ) -> Result<Result<Self, String>, Error> {
        let base = loader.load(variant, &sets)?;
        let Some(tipping) = base.tipping.clone() else {
            return Err(loader
                .problem(
                    "tipping",
                    "the scenario has no [tipping] section, which names the parameter to ramp, its range, the measure and threshold; add one, e.g. [tipping] vary = \"class.request.rate\", from = 10, to = 100, trigger = [\"slowdown\"], settle = \"5m\", measure = \"goodput_ratio.request\", healthy_above = 0.8",
                    &[],
                )
                .into());
        };
        let mut sets = sets;
        let base = match base.hysteresis {
            Some(_) => base,
            None => {
                // No [hysteresis] from the file, the variant or a --set: an empty one, so the
                // loader fills in and checks the defaults.
                sets.insert(
                    0,
                    Override::new(
                        "hysteresis",
                        Value::Table(Table::new()),
                        "[hysteresis] defaults (the scenario has no [hysteresis] section)",
                    ),
                );
                loader.load(variant, &sets)?
            }
        };
        let h = base.hysteresis.ok_or_else(|| {
            loader.problem("hysteresis", "the [hysteresis] section was not read", &sets)
        })?;
        let mut axis = tipping.axis.clone();
        axis.values = spaced(axis.range.0, axis.range.1, h.steps as usize, axis.unit);
        // Interventions change parameters, not structure: probe both ends of the range.
        let at = |x: f64| {
            let mut s = sets.clone();
            s.push(Override::probe(
                &axis.path,
                axis.toml_value(x),
                format!("[hysteresis] ramp value {}", axis.path),
            ));
            loader.load(variant, &s)
        };
        let (first, last) = (axis.values[0], axis.values[axis.values.len() - 1]);
        let (lo, hi) = (at(first)?, at(last)?);
        if let Err(why) = validate::same_structure(&lo.config, &hi.config) {
            return Ok(Err(format!(
                "`{}` cannot be ramped: hysteresis changes it mid-run by interventions, which change parameters, not structure ({why}); ramp a parameter an intervention can change (a rate, a pool's workers, a timeout)",
                axis.path
            )));
        }
        if lo.config == hi.config {
            // `duration`, `seed`, `metrics.*`: set once for the whole run, not by interventions.
            return Ok(Err(format!(
                "`{}` cannot be ramped: interventions change the model's parameters and it is not one; hysteresis needs a parameter an intervention can change (a rate, a pool's workers, a timeout)",
                axis.path
            )));
        }
        // The [tipping] section keeps the run length it was validated with (its trigger and
        // window play no part in the ramp, which only borrows its parameter and measure).
        let tipping_run = tipping.duration_ns.unwrap_or(base.duration);
        let mut run_sets = sets.clone();
        run_sets.push(Override::new(
            "tipping.duration",
            Value::String(format!("{tipping_run}ns")),
            "[hysteresis] (the [tipping] section keeps its own run length)",
        ));
        let run_sets = ramp_sets(&run_sets, &tipping, &h, &axis);
        let scenario = loader.load(variant, &run_sets)?;
        Ok(Ok(Self {
            loader,
            sets,
            scenario,
            operating_point: tipping.axis.operating_point,
            tipping,
            hysteresis: h,
            values: axis.values,
        }))
    }

    /// The ramp's run: the scenario with its generated interventions.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The value held at step `i` of the whole ramp (up, then down).
    fn value(&self, i: usize) -> f64 {
        let n = self.values.len();
        self.values[if i < n { i } else { 2 * n - 1 - i }]
    }

    /// Runs the ramp (its progress told to `obs`) and measures every step.
    pub fn run(&self, obs: &dyn Observer) -> Result<HysteresisReport, Error> {
        let sc = &self.scenario;
        let simulated_ns = Arc::new(AtomicU64::new(0));
        obs.run_started(sc, &simulated_ns);
        let result = Simulation::checked(sc, 0).and_then(|s| s.with_progress(simulated_ns).run());
        obs.run_stopped();
        let result = result?;
        let n = self.values.len();
        let dwell = self.hysteresis.dwell_ns;
        let mut measured = Vec::with_capacity(2 * n);
        for i in 0..2 * n {
            let start = i as SimTime * dwell;
            let m = measure_window(
                &result,
                &self.tipping.measure,
                start + self.hysteresis.settle_ns,
                start + dwell,
            )
            .map_err(|msg| self.loader.problem("tipping.measure", &msg, &self.sets))?;
            measured.push((self.value(i), m));
        }
        let (up, down) = measured.split_at(n);
        let t = &self.tipping;
        let mut report = HysteresisReport {
            scenario: sc.name.clone(),
            title: sc.title.clone(),
            variant: sc.variant.clone(),
            vary: t.axis.path.clone(),
            label: t.axis.label.clone(),
            unit: if t.axis.unit == AxisUnit::Seconds {
                Some("s".into())
            } else {
                t.axis.unit_name.clone()
            },
            measure: t.measure_name.clone(),
            healthy_above: t.health.healthy_above(),
            healthy_below: t.health.healthy_below(),
            steps: n as u32,
            dwell_s: crate::engine::time::ns_to_secs(dwell),
            settle_s: crate::engine::time::ns_to_secs(self.hysteresis.settle_ns),
            operating_point: self.operating_point,
            collapse_point: None,
            recovery_point: None,
            bistable: None,
            brink_version: env!("CARGO_PKG_VERSION").into(),
            seed: sc.seed,
            overrides: self
                .sets
                .iter()
                .filter(|o| o.path != "hysteresis")
                .map(|o| format!("{}={}", o.path, o.value))
                .collect(),
            points: hysteresis_result::points(up, down, t.health),
            produced_by: sc.provenance.clone(),
        };
        report.produced_by.overrides = report.overrides.clone();
        report.detect();
        Ok(report)
    }

    /// Runs the ramp and writes its files into `dir`: `OUT/<scenario>/` (or
    /// `OUT/<scenario>/variants/<V>/`, [`super::run::output_dir`]), or a folder of its own for a
    /// ramp with overrides ([`super::naming`]).
    pub fn run_and_write(
        &self,
        dir: &Path,
        obs: &dyn Observer,
    ) -> Result<HysteresisWritten, Error> {
        let start = Instant::now();
        let report = self.run(obs)?;
        write_outputs(dir, &report)?;
        Ok(HysteresisWritten {
            dir: dir.to_path_buf(),
            wall_s: start.elapsed().as_secs_f64(),
            report,
        })
    }
}

/// The overrides of the ramp's run: the user's, then the run length, the first value, every
/// trigger off, and one `[[at]]` per later step (replacing the scenario's own
/// interventions, a postmortem's timeline, as sweeps do).
fn ramp_sets(sets: &[Override], tipping: &Tipping, h: &Hysteresis, axis: &Axis) -> Vec<Override> {
    let mut s = sets.to_vec();
    let n = axis.values.len();
    let run_ns = 2 * n as SimTime * h.dwell_ns;
    s.push(Override::new(
        "duration",
        Value::String(format!("{run_ns}ns")),
        "[hysteresis] run length (2 x steps x dwell)",
    ));
    s.push(Override::probe(
        &axis.path,
        axis.toml_value(axis.values[0]),
        format!("[hysteresis] ramp value {}", axis.path),
    ));
    for name in &tipping.trigger {
        s.push(Override::new(
            &format!("event.{name}.enabled"),
            Value::Boolean(false),
            format!("[hysteresis] trigger {name} off (the ramp is the disturbance)"),
        ));
    }
    let at: Vec<Value> = (1..2 * n)
        .map(|i| {
            let x = axis.values[if i < n { i } else { 2 * n - 1 - i }];
            let mut set = Table::new();
            set.insert(axis.path.clone(), axis.toml_value(x));
            let mut entry = Table::new();
            entry.insert(
                "time".into(),
                Value::String(format!("{}ns", i as SimTime * h.dwell_ns)),
            );
            let dir = if i < n { "up" } else { "down" };
            entry.insert("label".into(), Value::String(format!("ramp {dir} {x}")));
            entry.insert("set".into(), Value::Table(set));
            Value::Table(entry)
        })
        .collect();
    s.push(Override::new(
        "at",
        Value::Array(at),
        "[hysteresis] ramp (one [[at]] per step)",
    ));
    s
}

/// The files a loop writes, by name (the page lists them under its picture).
pub fn files() -> Vec<String> {
    ["csv", "json", "png", "svg", "provenance.json"]
        .map(|ext| format!("hysteresis.{ext}"))
        .to_vec()
}

/// Writes a loop's files into `dir`: `hysteresis.csv`, `hysteresis.json`,
/// `hysteresis.png/.svg`.
pub fn write_outputs(dir: &Path, report: &HysteresisReport) -> Result<(), Error> {
    let out = Outputs::begin(dir, "hysteresis")?;
    out.write("hysteresis.csv", &export::hysteresis_csv(report))?;
    out.write("hysteresis.json", &export::hysteresis_json(report))?;
    out.draw("hysteresis.png", |stage| {
        hysteresis_plot::write(stage, report)
    })?;
    out.sidecar("hysteresis", &report.produced_by)?;
    out.commit()
}
