//! A calibration's observed file (`OBS.toml`, docs/calibrate.md): the operating point the
//! measurements were taken at (load overrides, an optional window of the run) and the
//! figures measured per class, pool and cache tier. Read strictly: an unknown key, an
//! unknown name or a bad number is an error naming the file, the place and the key.

use crate::engine::time::{SimTime, ns_to_secs, parse_duration};
use crate::scenario::load::{place_at, place_in_text, read_text};
use crate::scenario::overrides::{self, Override};
use crate::scenario::validate::{did_you_mean, listing};
use crate::scenario::{Owner, Scenario, ScenarioError};
use toml::{Table, Value};

/// The largest observed file read, in bytes.
pub const MAX_OBSERVED_BYTES: u64 = 1 << 20;

/// One measured figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Successful requests per second.
    Throughput,
    /// Requests that failed or were refused over those that ended.
    ErrorRatio,
    /// A latency quantile of successful requests (index into
    /// [`crate::model::metrics::QUANTILES`]), seconds.
    Latency(usize),
    /// Busy workers over worker capacity, time-averaged.
    Utilisation,
    /// Time-average queued queries.
    Queue,
    /// Cache hits over lookups.
    HitRatio,
}

impl Metric {
    /// The key of the metric in the observed file.
    pub fn key(self) -> &'static str {
        match self {
            Metric::Throughput => "throughput",
            Metric::ErrorRatio => "error_ratio",
            Metric::Latency(0) => "p50",
            Metric::Latency(1) => "p90",
            Metric::Latency(2) => "p99",
            Metric::Latency(_) => "p999",
            Metric::Utilisation => "utilisation",
            Metric::Queue => "queue",
            Metric::HitRatio => "hit_ratio",
        }
    }

    /// The unit of its values, for `calibration.json`.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Throughput => "1/s",
            Metric::Latency(_) => "s",
            Metric::Queue => "queries",
            Metric::ErrorRatio | Metric::Utilisation | Metric::HitRatio => "ratio",
        }
    }

    /// The metrics of a class, a pool and a cache tier, in the order the file and the
    /// report list them.
    pub const CLASS: [Metric; 6] = [
        Metric::Throughput,
        Metric::ErrorRatio,
        Metric::Latency(0),
        Metric::Latency(1),
        Metric::Latency(2),
        Metric::Latency(3),
    ];
    pub const POOL: [Metric; 2] = [Metric::Utilisation, Metric::Queue];
    pub const CACHE: [Metric; 1] = [Metric::HitRatio];

    /// Whether the metric is a share (in [0, 1]).
    fn is_ratio(self) -> bool {
        matches!(
            self,
            Metric::ErrorRatio | Metric::Utilisation | Metric::HitRatio
        )
    }
}

/// One observed figure: whose, what, and the value measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The class, pool or cache tier (the schema's owners; never `Time` or `Call`).
    pub owner: Owner,
    /// `class.NAME`, `pool.NAME` or `cache.NAME`.
    pub component: String,
    pub metric: Metric,
    /// The measured value (seconds for a latency).
    pub observed: f64,
}

impl Target {
    /// The figure's name: `class.api.p99`.
    pub fn name(&self) -> String {
        format!("{}.{}", self.component, self.metric.key())
    }
}

/// An observed file, read but not yet checked against a scenario.
#[derive(Debug, Clone)]
pub struct Observed {
    /// The path as given, for messages.
    pub file: String,
    text: String,
    table: Table,
    /// `[load]`: overrides that set the operating point (applied after the command's
    /// `--set`s), each placed at its key in the file.
    pub load: Vec<Override>,
    /// `window = [FROM, TO]`: the measured stretch of the run, ns; the run lasts to `TO`.
    pub window: Option<(SimTime, SimTime)>,
}

impl Observed {
    /// Reads and parses an observed file; `[load]` and `window` are checked here, the
    /// figures against the scenario by [`Observed::targets`].
    pub fn open(path: &std::path::Path) -> Result<Self, ScenarioError> {
        let file = path.display().to_string();
        let text =
            read_text(path, MAX_OBSERVED_BYTES, "an observed file").map_err(|e| match e {
                // The loader's wording says "the scenario"; this is the observed file.
                ScenarioError::Io { file, cause } => ScenarioError::Invalid {
                    place: file,
                    path: "--observed".into(),
                    msg: format!("cannot read the observed file: {cause}"),
                },
                e => e,
            })?;
        Self::from_text(&file, text)
    }

    /// Parses observed-file text; `file` names it in messages.
    pub fn from_text(file: &str, text: String) -> Result<Self, ScenarioError> {
        let table: Table = toml::from_str(&text).map_err(|e| ScenarioError::Syntax {
            place: place_at(file, &text, e.span().map_or(0, |s| s.start)),
            msg: e.message().trim().to_string(),
        })?;
        let mut obs = Observed {
            file: file.into(),
            text,
            table,
            load: Vec::new(),
            window: None,
        };
        for key in obs.table.keys() {
            if !["load", "window", "class", "pool", "cache"].contains(&key.as_str()) {
                return Err(obs.bad(
                    key,
                    format!(
                        "unknown key `{key}` (valid keys here: `load`, `window`, `class`, `pool`, `cache`){}",
                        did_you_mean(key, ["load", "window", "class", "pool", "cache"])
                    ),
                ));
            }
        }
        if let Some(v) = obs.table.get("load") {
            let Value::Table(t) = v else {
                return Err(obs.bad(
                    "load",
                    "expected a table of `--set` paths, e.g. `[load] class.api.rate = 600`",
                ));
            };
            let mut sets = Vec::new();
            overrides::flatten(t, "", &mut sets);
            obs.load = sets
                .into_iter()
                .map(|(path, value)| {
                    let place = obs.place(&format!("load.{path}"));
                    Override::new(&path, value, format!("{place} ([load] {path})"))
                })
                .collect();
        }
        if let Some(v) = obs.table.get("window") {
            obs.window = Some(obs.read_window(v)?);
        }
        Ok(obs)
    }

    fn read_window(&self, v: &Value) -> Result<(SimTime, SimTime), ScenarioError> {
        let two = "expected two durations, the measured stretch of the run, e.g. `window = [\"2m\", \"10m\"]`";
        let Value::Array(a) = v else {
            return Err(self.bad("window", two));
        };
        let [from, to] = a.as_slice() else {
            return Err(self.bad("window", two));
        };
        let dur = |i: usize, v: &Value| match v {
            Value::String(s) => parse_duration(s).map_err(|m| self.bad(&format!("window.{i}"), m)),
            _ => Err(self.bad(&format!("window.{i}"), two)),
        };
        let (from, to) = (dur(0, from)?, dur(1, to)?);
        if from >= to {
            return Err(self.bad(
                "window",
                format!(
                    "the window is empty: its end ({} s) must be after its start ({} s)",
                    ns_to_secs(to),
                    ns_to_secs(from)
                ),
            ));
        }
        Ok((from, to))
    }

    /// The observed figures, checked against `sc`: names of its client classes, pools and
    /// cache tiers, the keys of each, and values (finite, at least 0; shares at most 1;
    /// latencies durations). In file order, each component's figures in [`Metric`] order.
    pub fn targets(&self, sc: &Scenario) -> Result<Vec<Target>, ScenarioError> {
        let cfg = &sc.config;
        let classes: Vec<&str> = cfg
            .client_classes()
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        let pools: Vec<&str> = cfg.pools.iter().map(|p| p.name.as_str()).collect();
        let caches: Vec<&str> = cfg.caches.iter().map(|c| c.name.as_str()).collect();
        let kinds: [(&str, &str, &[&str], &[Metric]); 3] = [
            ("class", "client class", &classes, &Metric::CLASS),
            ("pool", "pool", &pools, &Metric::POOL),
            ("cache", "cache tier", &caches, &Metric::CACHE),
        ];
        let mut out = Vec::new();
        for (section, what, names, metrics) in kinds {
            let Some(v) = self.table.get(section) else {
                continue;
            };
            let Value::Table(entries) = v else {
                return Err(self.bad(section, format!("expected tables `[{section}.NAME]`")));
            };
            for (name, fig) in entries {
                let path = format!("{section}.{name}");
                let Some(index) = names.iter().position(|n| n == name) else {
                    let known = if names.is_empty() {
                        format!("it has no {what}")
                    } else {
                        format!("its {what}s: {}", listing(names))
                    };
                    return Err(self.bad(
                        &path,
                        format!(
                            "scenario `{}` has no {what} `{name}` ({known}){}",
                            sc.name,
                            did_you_mean(name, names.iter().copied())
                        ),
                    ));
                };
                let owner = match section {
                    "class" => Owner::Class(index),
                    "pool" => Owner::Pool(index),
                    _ => Owner::Cache(index),
                };
                let Value::Table(fig) = fig else {
                    return Err(self.bad(
                        &path,
                        format!("expected a table of observed figures (`[{path}]`)"),
                    ));
                };
                let keys: Vec<&str> = metrics.iter().map(|m| m.key()).collect();
                for key in fig.keys() {
                    // `utilization` is the summary's spelling; both are accepted.
                    let known =
                        keys.contains(&key.as_str()) || (key == "utilization" && section == "pool");
                    if !known {
                        return Err(self.bad(
                            &format!("{path}.{key}"),
                            format!(
                                "unknown key `{key}` (valid keys here: {}){}",
                                listing(&keys),
                                did_you_mean(key, keys.iter().copied())
                            ),
                        ));
                    }
                }
                if fig.contains_key("utilisation") && fig.contains_key("utilization") {
                    return Err(self.bad(
                        &format!("{path}.utilization"),
                        "`utilisation` and `utilization` are one figure: give it once",
                    ));
                }
                for &metric in metrics {
                    let spelt = [metric.key(), "utilization"];
                    let found = spelt
                        .iter()
                        .take(if metric == Metric::Utilisation { 2 } else { 1 })
                        .find_map(|k| fig.get(*k).map(|v| (*k, v)));
                    if let Some((key, v)) = found {
                        let observed = self.value(&format!("{path}.{key}"), metric, v)?;
                        out.push(Target {
                            owner,
                            component: path.clone(),
                            metric,
                            observed,
                        });
                    }
                }
            }
        }
        if out.is_empty() {
            return Err(self.bad(
                "",
                "no observed figures: give at least one, e.g. `[class.NAME] throughput = 600` or `[pool.NAME] utilisation = 0.7`",
            ));
        }
        Ok(out)
    }

    /// Reads one figure's value.
    fn value(&self, path: &str, metric: Metric, v: &Value) -> Result<f64, ScenarioError> {
        let x = match (metric, v) {
            (Metric::Latency(_), Value::String(s)) => {
                ns_to_secs(parse_duration(s).map_err(|m| self.bad(path, m))?)
            }
            (Metric::Latency(_), _) => {
                return Err(self.bad(
                    path,
                    format!("a latency is a duration, e.g. \"30ms\", not {v}"),
                ));
            }
            (_, Value::Integer(i)) => *i as f64,
            (_, Value::Float(f)) => *f,
            _ => return Err(self.bad(path, format!("expected a number, not {v}"))),
        };
        if !x.is_finite() || x < 0.0 {
            return Err(self.bad(path, format!("must be a finite number at least 0, not {x}")));
        }
        if metric.is_ratio() && x > 1.0 {
            return Err(self.bad(path, format!("a share is at most 1, not {x}")));
        }
        if matches!(metric, Metric::Latency(_)) && x == 0.0 {
            return Err(self.bad(path, "a latency must be above 0"));
        }
        Ok(x)
    }

    /// `file:line:col` of the key at `path`.
    fn place(&self, path: &str) -> String {
        place_in_text(&self.file, &self.text, path)
    }

    /// An error about the key at `path` of this file.
    fn bad(&self, path: &str, msg: impl Into<String>) -> ScenarioError {
        ScenarioError::Invalid {
            place: self.place(path),
            path: if path.is_empty() {
                "(top level)".into()
            } else {
                path.into()
            },
            msg: msg.into(),
        }
    }

    /// The file's text, as read.
    pub fn text(&self) -> &str {
        &self.text
    }
}
