//! `brink calibrate`: a scenario run at the operating point of an observed file
//! ([`observed`]), each observed figure compared with the simulated one over seeds, and
//! with `--fit` a search of up to three keys that minimises the difference ([`fit`]);
//! written as `calibration.json`.
//!
//! Each figure's simulated value is the mean over `seeds` runs (run indices 0, 1, ... of
//! the scenario's seed, in parallel) with its 95% Student t confidence interval over the
//! per-seed values ([`crate::stats::student`]; coverage measured in
//! `tests/integration/calibrate.rs`). Rates and time averages are read from the
//! time-series rows inside the observed window (the one windowing rule,
//! [`crate::report::verdict::window_rows`]); latency quantiles from the run's histograms
//! of the windows that start in it.

pub mod fit;
pub mod observed;

use super::{Error, Observer, Outputs};
use crate::engine::time::{SimTime, ns_to_secs};
use crate::model::{RunResult, Simulation};
pub use crate::report::calibration::CalibrationReport;
use crate::report::calibration::{
    Assessment, Comparison, FitReport, FittedKey, assessment, compare,
};
use crate::report::verdict::window_rows;
use crate::scenario::sweep::{AxisUnit, format_seconds};
use crate::scenario::{Loader, Measure, Override, Owner, Scenario, ScenarioError};
use observed::{Metric, Observed, Target};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// The most keys `--fit` searches at once.
pub const MAX_FIT_KEYS: usize = 3;
/// How far `--fit` may move a key: within this factor of the file's value either way.
pub const FIT_RANGE: f64 = 4.0;
/// A relative error at most this large counts as agreement even outside the interval (a
/// figure the simulation pins far more precisely than any measurement is taken).
pub const DEFAULT_TOLERANCE: f64 = 0.05;

/// What a calibration does besides the scenario and the observed file.
#[derive(Debug, Clone)]
pub struct Options {
    /// Seeds per evaluation (run indices 0 .. seeds of the scenario's seed).
    pub seeds: u32,
    /// Keys to fit (`--set` paths), at most [`MAX_FIT_KEYS`].
    pub fit: Vec<String>,
    /// Evaluations of the fit's search (each runs `seeds` runs).
    pub budget: usize,
    /// Refits on independent seed batches for the fitted values' spread.
    pub refits: u32,
    /// Relative error counted as agreement ([`DEFAULT_TOLERANCE`]).
    pub tolerance: f64,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            seeds: 6,
            fit: Vec::new(),
            budget: 60,
            refits: 2,
            tolerance: DEFAULT_TOLERANCE,
        }
    }
}

/// A calibration prepared: the scenario at the observed operating point, checked with
/// every fitted key, and the observed figures.
pub struct Calibration {
    loader: Loader,
    variant: Option<String>,
    /// The command's `--set`s, then the observed `[load]`, then the run's length.
    sets: Vec<Override>,
    observed: Observed,
    targets: Vec<Target>,
    /// The scenario at the file's values.
    scenario: Scenario,
    window: (SimTime, SimTime),
    /// The fitted keys: path, kind, start value.
    keys: Vec<(String, AxisUnit, f64)>,
    opts: Options,
}

impl Calibration {
    /// Loads the scenario at the observed operating point and checks the observed figures
    /// and the fitted keys against it: bad input is an error here, before anything runs.
    pub fn prepare(
        loader: Loader,
        variant: Option<&str>,
        mut sets: Vec<Override>,
        observed: Observed,
        opts: Options,
    ) -> Result<Self, Error> {
        sets.extend(observed.load.iter().cloned());
        if let Some((_, to)) = observed.window {
            sets.push(Override::new(
                "duration",
                toml::Value::String(format_seconds(ns_to_secs(to))),
                format!("{} (window)", observed.file),
            ));
        }
        let scenario = loader.load_run(variant, &sets)?;
        let targets = observed.targets(&scenario)?;
        let window = observed.window.unwrap_or((0, scenario.duration));
        if opts.fit.len() > MAX_FIT_KEYS {
            return Err(bad_fit(
                &opts.fit[MAX_FIT_KEYS],
                &format!("at most {MAX_FIT_KEYS} keys can be fitted at once"),
            ));
        }
        let mut keys = Vec::new();
        for key in &opts.fit {
            let origin = format!("--fit {key}");
            if keys.iter().any(|(k, _, _)| k == key) {
                return Err(bad_fit(key, "named twice"));
            }
            let (unit, value) = loader.settable_number(variant, &sets, key, &origin)?;
            let x = match (&unit, &value) {
                (AxisUnit::Integer, _) => {
                    return Err(bad_fit(
                        key,
                        "an integer key (a count) cannot be fitted by a continuous search; try values with --set",
                    ));
                }
                (AxisUnit::Seconds, toml::Value::String(s)) => {
                    ns_to_secs(crate::engine::time::parse_duration(s).unwrap_or(0))
                }
                (_, toml::Value::Float(f)) => *f,
                (_, toml::Value::Integer(i)) => *i as f64,
                _ => f64::NAN,
            };
            if !(x.is_finite() && x > 0.0) {
                return Err(bad_fit(
                    key,
                    &format!(
                        "its value ({value}) must be above 0: the search is over a factor of {FIT_RANGE} either way"
                    ),
                ));
            }
            keys.push((key.clone(), unit, x));
        }
        let me = Self {
            loader,
            variant: variant.map(str::to_string),
            sets,
            observed,
            targets,
            scenario,
            window,
            keys,
            opts,
        };
        // Both ends of every key's range must load, so that the search meets no refusal
        // the user could not have seen coming (a share above 1 is refused here).
        for (k, (key, _, x)) in me.keys.iter().enumerate() {
            for end in [x / FIT_RANGE, x * FIT_RANGE] {
                let mut at: Vec<f64> = me.keys.iter().map(|(_, _, x)| *x).collect();
                at[k] = end;
                me.scenario_at(&at).map_err(|e| {
                    bad_fit(
                        key,
                        &format!(
                            "the search range {} to {} is not all valid: {e}",
                            x / FIT_RANGE,
                            x * FIT_RANGE
                        ),
                    )
                })?;
            }
        }
        Ok(me)
    }

    /// The scenario at the observed operating point, at the file's values of the keys.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The scenario with the fitted keys at `values` (in `--fit` order).
    fn scenario_at(&self, values: &[f64]) -> Result<Scenario, ScenarioError> {
        let mut sets = self.sets.clone();
        for ((key, unit, _), x) in self.keys.iter().zip(values) {
            let value = match unit {
                AxisUnit::Seconds => toml::Value::String(format_seconds(*x)),
                _ => toml::Value::Float(*x),
            };
            sets.push(Override::new(
                key,
                value.clone(),
                format!("--fit {key}={value}"),
            ));
        }
        self.loader.load_run(self.variant.as_deref(), &sets)
    }

    /// Each target's value in each of the runs `runs` of `sc`: `[target][seed]`, in run
    /// order (NaN where a run has none).
    pub fn per_seed(
        &self,
        sc: &Scenario,
        runs: std::ops::Range<u64>,
    ) -> Result<Vec<Vec<f64>>, Error> {
        let from = self.window.0;
        let results: Vec<Vec<f64>> = runs
            .into_par_iter()
            .map(|run| {
                let r = Simulation::checked(sc, run)?
                    .with_latency_from(from)
                    .run()?;
                Ok(self.figures_of(sc, &r))
            })
            .collect::<Result<_, Error>>()?;
        Ok((0..self.targets.len())
            .map(|t| results.iter().map(|r| r[t]).collect())
            .collect())
    }

    /// One run's value of every target.
    fn figures_of(&self, sc: &Scenario, r: &RunResult) -> Vec<f64> {
        let columns = &r.series.columns;
        let col = |owner: Owner, m: Measure| {
            columns
                .iter()
                .position(|c| c.owner == owner && c.measure == m)
        };
        let (from, to) = self.window;
        // The time-weighted sums of columns over the window's rows, and the rows' length.
        let sums = |cols: &[Option<usize>]| -> (Vec<f64>, f64) {
            let mut sums = vec![0.0; cols.len()];
            let mut weight = 0.0;
            for (row, span) in window_rows(&r.series.rows, from, to, sc.duration) {
                for (s, c) in sums.iter_mut().zip(cols) {
                    if let Some(v) = c.map(|c| row[c]).filter(|v| v.is_finite()) {
                        *s += v * span;
                    }
                }
                weight += span;
            }
            (sums, weight)
        };
        let mean = |owner, m| {
            let (s, w) = sums(&[col(owner, m)]);
            if w > 0.0 { s[0] / w } else { f64::NAN }
        };
        self.targets
            .iter()
            .map(|t| match t.metric {
                Metric::Throughput => mean(t.owner, Measure::Goodput),
                Metric::ErrorRatio => {
                    let cols = [Measure::Goodput, Measure::Failed, Measure::Rejected]
                        .map(|m| col(t.owner, m));
                    let (s, _) = sums(&cols);
                    let ended = s[0] + s[1] + s[2];
                    if ended > 0.0 {
                        (s[1] + s[2]) / ended
                    } else {
                        f64::NAN
                    }
                }
                Metric::Latency(q) => {
                    let Owner::Class(c) = t.owner else {
                        return f64::NAN;
                    };
                    r.latency_quantiles_s
                        .get(&sc.config.classes[c].name)
                        .and_then(|qs| qs[q])
                        .unwrap_or(f64::NAN)
                }
                Metric::Utilisation => mean(t.owner, Measure::Utilization),
                Metric::Queue => mean(t.owner, Measure::QueueLen),
                Metric::HitRatio => {
                    // Rows without lookups have no ratio; the rest weigh by their length.
                    let c = col(t.owner, Measure::HitRatio);
                    let (mut s, mut w) = (0.0, 0.0);
                    for (row, span) in window_rows(&r.series.rows, from, to, sc.duration) {
                        if let Some(v) = c.map(|c| row[c]).filter(|v| v.is_finite()) {
                            s += v * span;
                            w += span;
                        }
                    }
                    if w > 0.0 { s / w } else { f64::NAN }
                }
            })
            .collect()
    }

    /// The comparison of the targets with per-seed values `[target][seed]`.
    pub fn assess(&self, per_seed: &[Vec<f64>]) -> Assessment {
        let figures: Vec<Comparison> = self
            .targets
            .iter()
            .zip(per_seed)
            .map(|(t, xs)| {
                compare(
                    t.name(),
                    t.metric.unit(),
                    t.observed,
                    xs,
                    self.opts.tolerance,
                )
            })
            .collect();
        assessment(figures, self.opts.tolerance)
    }

    /// The fit's objective: the mean squared relative error of the targets (an absolute
    /// error where nothing was observed), from the mean over seeds; infinite where a
    /// figure has no simulated value.
    fn objective(&self, per_seed: &[Vec<f64>]) -> f64 {
        let terms: Vec<f64> = self
            .targets
            .iter()
            .zip(per_seed)
            .map(|(t, xs)| {
                let m = xs.iter().sum::<f64>() / xs.len() as f64;
                let scale = if t.observed > 0.0 { t.observed } else { 1.0 };
                ((m - t.observed) / scale).powi(2)
            })
            .collect();
        let f = terms.iter().sum::<f64>() / terms.len() as f64;
        if f.is_finite() { f } else { f64::INFINITY }
    }

    /// Runs the calibration (and the fit, with `--fit` keys): the report.
    pub fn run(&self, obs: &dyn Observer) -> Result<CalibrationReport, Error> {
        let n = u64::from(self.opts.seeds);
        let before_runs = self.per_seed(&self.scenario, 0..n)?;
        let before = self.assess(&before_runs);
        let (assessment, fit) = if self.keys.is_empty() {
            (before, None)
        } else {
            let start: Vec<f64> = self.keys.iter().map(|(_, _, x)| *x).collect();
            let total = self.opts.budget * (1 + self.opts.refits as usize);
            obs.fit_started(total);
            let main = self.search(&start, 0..n, self.opts.budget, obs);
            let mut refits = Vec::new();
            for k in 1..=u64::from(self.opts.refits) {
                let f = self.search(&main.x, k * n..(k + 1) * n, self.opts.budget / 2, obs);
                refits.push(f);
            }
            obs.fit_stopped();
            let fitted = self.scenario_at(&main.x)?;
            let after_runs = self.per_seed(&fitted, 0..n)?;
            let keys = self
                .keys
                .iter()
                .enumerate()
                .map(|(i, (key, unit, x0))| {
                    let x = main.x[i];
                    let refit: Vec<f64> = refits.iter().map(|f| f.x[i]).collect();
                    let lo = refit.iter().copied().fold(x, f64::min);
                    let hi = refit.iter().copied().fold(x, f64::max);
                    let range = [x0 / FIT_RANGE, x0 * FIT_RANGE];
                    FittedKey {
                        key: key.clone(),
                        unit: if *unit == AxisUnit::Seconds {
                            "duration"
                        } else {
                            "number"
                        },
                        start: *x0,
                        fitted: x,
                        range,
                        at_range_end: (x / range[0] - 1.0).abs() < 1e-3
                            || (x / range[1] - 1.0).abs() < 1e-3,
                        refits: refit,
                        spread: [lo, hi],
                    }
                })
                .collect();
            let fit = FitReport {
                keys,
                evaluations: main.evaluations,
                objective_before: self.objective(&before_runs),
                objective_after: self.objective(&after_runs),
                before,
            };
            (self.assess(&after_runs), Some(fit))
        };
        Ok(CalibrationReport {
            scenario: self.scenario.name.clone(),
            variant: self.scenario.variant.clone(),
            observed_file: Path::new(&self.observed.file).file_name().map_or_else(
                || self.observed.file.clone(),
                |f| f.to_string_lossy().into_owned(),
            ),
            observed_sha256: crate::scenario::provenance::sha256_hex(
                self.observed.text().as_bytes(),
            ),
            load: self
                .observed
                .load
                .iter()
                .map(|o| format!("{}={}", o.path, o.value))
                .collect(),
            window_s: [ns_to_secs(self.window.0), ns_to_secs(self.window.1)],
            seeds: self.opts.seeds,
            tolerance: self.opts.tolerance,
            assessment,
            fit,
        })
    }

    /// One search of the fitted keys over the seeds `runs`, from `start`, on the keys'
    /// logarithms (relative to their start, so every key moves on the same scale).
    fn search(
        &self,
        start: &[f64],
        runs: std::ops::Range<u64>,
        budget: usize,
        obs: &dyn Observer,
    ) -> fit::Found {
        let base: Vec<f64> = self.keys.iter().map(|(_, _, x)| *x).collect();
        let to_x =
            |u: &[f64]| -> Vec<f64> { u.iter().zip(&base).map(|(u, b)| b * u.exp()).collect() };
        let mut f = |u: &[f64]| -> f64 {
            obs.fit_progressed();
            let Ok(sc) = self.scenario_at(&to_x(u)) else {
                return f64::INFINITY;
            };
            match self.per_seed(&sc, runs.clone()) {
                Ok(xs) => self.objective(&xs),
                Err(_) => f64::INFINITY,
            }
        };
        let u0: Vec<f64> = start.iter().zip(&base).map(|(x, b)| (x / b).ln()).collect();
        let r = FIT_RANGE.ln();
        let lo = vec![-r; base.len()];
        let hi = vec![r; base.len()];
        let found = fit::nelder_mead(&mut f, &u0, 0.25, (&lo, &hi), budget, 1e-3);
        fit::Found {
            x: to_x(&found.x),
            ..found
        }
    }

    /// Writes `calibration.json` (and `calibrate.provenance.json`) into `dir`, as one set.
    pub fn write(&self, dir: &Path, report: &CalibrationReport) -> Result<PathBuf, Error> {
        let out = Outputs::begin(dir, "calibrate")?;
        out.write(
            "calibration.json",
            &crate::export::calibration_json(report, &self.scenario.provenance),
        )?;
        out.sidecar("calibrate", &self.scenario.provenance)?;
        out.commit()?;
        Ok(dir.join("calibration.json"))
    }

    /// An observed file of every figure the scenario has, at its operating point (the
    /// mean over the seeds of the whole run, or of the window): `[load]` with each open
    /// class's rate as the file sets it, then per client class, pool and cache tier its
    /// figures at full precision. The format's example, and a test's observation made with
    /// known parameters.
    pub fn observed_text(&self) -> Result<String, Error> {
        let n = u64::from(self.opts.seeds);
        let per_seed = self.per_seed(&self.scenario, 0..n)?;
        let mean = |xs: &Vec<f64>| xs.iter().sum::<f64>() / xs.len() as f64;
        let mut text = format!(
            "# Observed figures of `{}`, written by brink calibrate --write-observed:\n# the mean over {} seeds of the simulated run (brink {}).\n",
            self.scenario.name,
            self.opts.seeds,
            env!("CARGO_PKG_VERSION")
        );
        if let Some((a, b)) = self.observed.window {
            text += &format!(
                "window = [\"{}\", \"{}\"]\n",
                format_seconds(ns_to_secs(a)),
                format_seconds(ns_to_secs(b))
            );
        }
        let rates: Vec<String> = self
            .scenario
            .config
            .client_classes()
            .iter()
            .filter_map(|c| {
                let path = format!("class.{}.rate", c.name);
                self.loader
                    .settable_number(self.variant.as_deref(), &self.sets, &path, "")
                    .ok()
                    .map(|(_, v)| format!("{path} = {v}\n"))
            })
            .collect();
        if !rates.is_empty() {
            text += "\n[load]\n";
            text += &rates.concat();
        }
        let mut component = String::new();
        for (t, xs) in self.targets.iter().zip(&per_seed) {
            if t.component != component {
                component.clone_from(&t.component);
                text += &format!("\n[{component}]\n");
            }
            let m = mean(xs);
            if !m.is_finite() {
                text += &format!("# {} has no value in this run\n", t.metric.key());
                continue;
            }
            match t.metric {
                Metric::Latency(_) => {
                    text += &format!("{} = \"{}\"\n", t.metric.key(), format_seconds(m))
                }
                _ => text += &format!("{} = {m:?}\n", t.metric.key()),
            }
        }
        Ok(text)
    }
}

impl Observed {
    /// Every figure the scenario has, as an observation of nothing (values 0), with this
    /// file's window: what `--write-observed` fills in.
    pub fn everything(sc: &Scenario, window: Option<(SimTime, SimTime)>) -> Self {
        let mut text = String::new();
        if let Some((a, b)) = window {
            text += &format!(
                "window = [\"{}\", \"{}\"]\n",
                format_seconds(ns_to_secs(a)),
                format_seconds(ns_to_secs(b))
            );
        }
        let cfg = &sc.config;
        let sections = cfg
            .client_classes()
            .iter()
            .map(|c| ("class", &c.name, &Metric::CLASS[..]))
            .chain(
                cfg.pools
                    .iter()
                    .map(|p| ("pool", &p.name, &Metric::POOL[..])),
            )
            .chain(
                cfg.caches
                    .iter()
                    .map(|c| ("cache", &c.name, &Metric::CACHE[..])),
            );
        for (section, name, metrics) in sections {
            text += &format!("[{section}.{name}]\n");
            for m in metrics {
                let v = if matches!(m, Metric::Latency(_)) {
                    "\"1s\""
                } else {
                    "0"
                };
                text += &format!("{} = {v}\n", m.key());
            }
        }
        // The text is built from validated names, so it parses.
        Observed::from_text("(every figure)", text).expect("a generated observed file parses")
    }
}

/// An error in a `--fit` key.
fn bad_fit(key: &str, msg: &str) -> Error {
    Error::Scenario(ScenarioError::Invalid {
        place: format!("--fit {key}"),
        path: key.into(),
        msg: msg.into(),
    })
}
