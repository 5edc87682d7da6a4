//! The `[tipping]` and `[phase]` sections: which parameter a sweep varies, over what range,
//! which events form the disturbance, and what "healthy" means. Read in the same two stages
//! as the rest of the file (a serde `Raw…` shape, then validated types the experiments
//! trust); `--set tipping.…` and variants change them like any other key.

use super::overrides;
use super::raw::{Dur, RawScenario};
use super::spec::Config;
use super::validate::{Problem, nearest};
use crate::engine::time::{NS_PER_S, SimTime, ns_to_secs, parse_duration, secs_to_ns};
use serde::Deserialize;
use toml::{Table, Value};

/// The most runs per variant a sweep may ask for (points x seeds, or cells x seeds).
pub const MAX_RUNS: u64 = 10_000;

/// `[tipping]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTipping {
    pub vary: String,
    pub from: Value,
    pub to: Value,
    pub points: Option<i64>,
    pub trigger: Vec<String>,
    pub settle: Dur,
    pub measure: String,
    pub healthy_above: Option<f64>,
    pub healthy_below: Option<f64>,
    pub seeds: Option<i64>,
    pub duration: Option<Dur>,
}

/// `[phase]` as written: the second axis of a phase map.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPhase {
    pub vary: String,
    pub from: Value,
    pub to: Value,
    pub points: Option<i64>,
}

/// What the values of an axis are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisUnit {
    /// Plain numbers (floats).
    Number,
    /// Written as a whole number in the file. That may be an integer key (`workers`) or a
    /// float key written without a fraction (`rate = 70`); [`Axis::whole_numbers`] settles
    /// it once the caller knows which.
    Integer,
    /// Durations; values are in seconds and are written back as "12.5s".
    Seconds,
}

/// One swept parameter: its path and the values it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The dotted key path, e.g. `class.request.rate`.
    pub path: String,
    pub unit: AxisUnit,
    /// The values, increasing (seconds for durations).
    pub values: Vec<f64>,
    /// The scenario's own value of the parameter (after variant and `--set`).
    pub operating_point: f64,
}

impl Axis {
    /// Makes the axis take whole numbers only (for an integer key): rounds the values and
    /// drops repeats.
    pub fn whole_numbers(&mut self) {
        self.values.iter_mut().for_each(|x| *x = x.round());
        self.values.dedup();
    }

    /// The value to set for point `x`, typed as the scenario file expects it.
    pub fn toml_value(&self, x: f64) -> Value {
        match self.unit {
            AxisUnit::Number => Value::Float(x),
            AxisUnit::Integer => Value::Integer(x as i64),
            AxisUnit::Seconds => Value::String(format_seconds(x)),
        }
    }
}

/// A duration in seconds as an exact duration string ("12.5s", "0.000001s").
pub fn format_seconds(s: f64) -> String {
    let ns = secs_to_ns(s);
    let (whole, frac) = (ns / NS_PER_S, ns % NS_PER_S);
    if frac == 0 {
        format!("{whole}s")
    } else {
        let f = format!("{frac:09}");
        format!("{whole}.{}s", f.trim_end_matches('0'))
    }
}

/// What a sweep measures over the window after the trigger.
#[derive(Debug, Clone, PartialEq)]
pub enum Measure {
    /// Goodput over offered load of one class (1 when nothing was offered).
    GoodputRatio { class: String },
    /// The time-weighted mean of one `timeseries.csv` column.
    Column(String),
}

/// Which side of a threshold is healthy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Health {
    Above(f64),
    Below(f64),
}

impl Health {
    /// True when `measure` is on the healthy side (a missing measure is failed).
    pub fn is_healthy(self, measure: f64) -> bool {
        match self {
            Health::Above(t) => measure > t,
            Health::Below(t) => measure < t,
        }
    }
}

/// The validated `[tipping]` section.
#[derive(Debug, Clone, PartialEq)]
pub struct Tipping {
    pub axis: Axis,
    /// Names of the events that form the disturbance, in the order given.
    pub trigger: Vec<String>,
    pub settle_ns: SimTime,
    pub measure: Measure,
    /// The measure as written (`goodput_ratio.request`).
    pub measure_name: String,
    pub health: Health,
    pub seeds: u32,
    /// The run length of sweep runs, if it differs from the scenario's `duration`.
    pub duration_ns: Option<SimTime>,
    /// Where measuring starts: the end of the last trigger event plus `settle`.
    pub window_start_ns: SimTime,
}

/// The validated `[phase]` section (the first axis is the `[tipping]` one).
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    pub axis: Axis,
}

type V<T> = Result<T, Problem>;

fn bad<T>(path: impl Into<String>, msg: impl Into<String>) -> V<T> {
    Err((path.into(), msg.into()))
}

/// Validates `[tipping]` and `[phase]` against the rest of the scenario. `table` is the
/// file after the variant and overrides, `duration` the validated run length.
pub fn validate(
    raw: &RawScenario,
    table: &Table,
    config: &Config,
    duration: SimTime,
) -> V<(Option<Tipping>, Option<Phase>)> {
    let Some(t) = &raw.tipping else {
        if raw.phase.is_some() {
            return bad(
                "phase",
                "a phase map needs a [tipping] section (its first axis, trigger, settle, measure and threshold)",
            );
        }
        return Ok((None, None));
    };
    let points = t.points.unwrap_or(11);
    let axis = read_axis("tipping", &t.vary, &t.from, &t.to, points, table)?;
    let seeds = match t.seeds {
        None => 1,
        Some(s) if (1..=MAX_RUNS as i64).contains(&s) => s as u32,
        Some(s) => {
            return bad(
                "tipping.seeds",
                format!("must be from 1 to {MAX_RUNS}, not {s}"),
            );
        }
    };
    let runs = axis.values.len() as u64 * seeds as u64;
    if runs > MAX_RUNS {
        return bad(
            "tipping.points",
            format!(
                "{} points x {seeds} seeds = {runs} runs per variant, more than {MAX_RUNS}; use fewer points or seeds",
                axis.values.len()
            ),
        );
    }
    if t.trigger.is_empty() {
        return bad(
            "tipping.trigger",
            "name at least one [event.NAME] that forms the disturbance, e.g. trigger = [\"slowdown\"]",
        );
    }
    let duration_ns = t.duration.map(|d| d.0);
    if duration_ns == Some(0) {
        return bad("tipping.duration", "must be longer than zero");
    }
    let run_end = duration_ns.unwrap_or(duration);
    let names: Vec<&str> = config.triggers.iter().map(|e| e.name.as_str()).collect();
    let mut window_start = 0;
    for (i, name) in t.trigger.iter().enumerate() {
        let Some(e) = config.triggers.iter().find(|e| &e.name == name) else {
            let hint = nearest(name, names.iter().copied())
                .map(|n| format!("; did you mean `{n}`?"))
                .unwrap_or_default();
            let list = if names.is_empty() {
                "none".to_string()
            } else {
                names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return bad(
                format!("tipping.trigger.{i}"),
                format!("no event named `{name}` (known: {list}){hint}"),
            );
        };
        window_start = window_start.max(last_end(e.at_ns, e.for_ns, e.every_ns, run_end));
    }
    let settle_ns = t.settle.0;
    // The metrics step as the run will have it (its default follows the run length).
    let step = match raw.metrics.step {
        Some(s) => s.0.max(1),
        None => (run_end / 1000).max(1),
    };
    let window_start_ns = window_start.saturating_add(settle_ns);
    // Measuring uses whole time-series rows that start inside the window.
    let first_row = window_start_ns.div_ceil(step).saturating_mul(step);
    if first_row >= run_end {
        return bad(
            "tipping.settle",
            format!(
                "the measuring window (from the end of the trigger at {} s plus settle {} s, to the end of the run at {} s) holds no whole metrics step of {} s; shorten `settle` or lengthen the run",
                ns_to_secs(window_start),
                ns_to_secs(settle_ns),
                ns_to_secs(run_end),
                ns_to_secs(step)
            ),
        );
    }
    let measure = measure(&t.measure, config, table)?;
    let health = match (t.healthy_above, t.healthy_below) {
        (Some(x), None) if x.is_finite() => Health::Above(x),
        (None, Some(x)) if x.is_finite() => Health::Below(x),
        (Some(x), None) => return bad("tipping.healthy_above", format!("must be finite, not {x}")),
        (None, Some(x)) => return bad("tipping.healthy_below", format!("must be finite, not {x}")),
        (Some(_), Some(_)) => {
            return bad(
                "tipping.healthy_below",
                "give either `healthy_above` or `healthy_below`, not both",
            );
        }
        (None, None) => {
            return bad(
                "tipping.healthy_above",
                "missing required key `healthy_above` (or `healthy_below`): the threshold that separates healthy from failed",
            );
        }
    };
    let tipping = Tipping {
        axis,
        trigger: t.trigger.clone(),
        settle_ns,
        measure,
        measure_name: t.measure.clone(),
        health,
        seeds,
        duration_ns,
        window_start_ns,
    };
    let phase = match &raw.phase {
        None => None,
        Some(p) => {
            let axis = read_axis(
                "phase",
                &p.vary,
                &p.from,
                &p.to,
                p.points.unwrap_or(11),
                table,
            )?;
            if axis.path == tipping.axis.path {
                return bad("phase.vary", "must differ from `tipping.vary`");
            }
            let cells = axis.values.len() as u64 * tipping.axis.values.len() as u64;
            if cells * seeds as u64 > MAX_RUNS {
                return bad(
                    "phase.points",
                    format!(
                        "{cells} cells x {seeds} seeds is more than {MAX_RUNS} runs per variant; use fewer points or seeds"
                    ),
                );
            }
            Some(Phase { axis })
        }
    };
    Ok((Some(tipping), phase))
}

/// The end of the last occurrence of an event that starts before `duration`.
fn last_end(at: SimTime, for_ns: SimTime, every: Option<SimTime>, duration: SimTime) -> SimTime {
    let start = match every {
        Some(p) if p > 0 && at < duration => at + (duration - 1 - at) / p * p,
        _ => at,
    };
    start.saturating_add(for_ns)
}

/// Reads one axis: the path must hold a number or a duration in the scenario; `from` and
/// `to` must be of the same kind, increasing; `points` from 1 to [`MAX_RUNS`].
fn read_axis(
    section: &str,
    path: &str,
    from: &Value,
    to: &Value,
    points: i64,
    table: &Table,
) -> V<Axis> {
    let vary = format!("{section}.vary");
    if path.split('.').any(|s| s.trim().is_empty()) {
        return bad(vary, format!("`{path}` is not a dotted key path"));
    }
    let head = path.split('.').next().unwrap_or("");
    if ["tipping", "phase", "variant"].contains(&head) {
        return bad(
            vary,
            format!("cannot sweep `{path}`: it is not part of the model"),
        );
    }
    let unit_of = |v: &Value| match v {
        Value::Integer(_) => Some(AxisUnit::Integer),
        Value::Float(_) => Some(AxisUnit::Number),
        Value::String(s) if parse_duration(s).is_ok() => Some(AxisUnit::Seconds),
        _ => None,
    };
    let Some(base) = overrides::get(table, path) else {
        return bad(
            vary,
            format!(
                "the scenario has no value at `{path}`; sweep a key the file sets (its value is the operating point)"
            ),
        );
    };
    let Some(unit) = unit_of(base) else {
        return bad(
            vary,
            format!(
                "`{path}` is not a number or a duration (it is {base}); only those can be swept"
            ),
        );
    };
    let read = |key: &str, v: &Value| -> V<f64> {
        let p = format!("{section}.{key}");
        let x = match (unit, v) {
            (AxisUnit::Seconds, Value::String(s)) => parse_duration(s)
                .map(ns_to_secs)
                .map_err(|e| (p.clone(), e))?,
            (AxisUnit::Seconds, _) => {
                return bad(
                    p,
                    format!("`{path}` is a duration, so this must be one too, e.g. \"30s\""),
                );
            }
            (_, Value::Integer(i)) => *i as f64,
            (_, Value::Float(f)) => *f,
            _ => {
                return bad(
                    p,
                    format!("`{path}` is a number, so this must be one too, not {v}"),
                );
            }
        };
        if !x.is_finite() {
            return bad(p, format!("must be finite, not {x}"));
        }
        Ok(x)
    };
    let operating_point = read("vary", base).map_err(|(_, m)| (vary.clone(), m))?;
    let (lo, hi) = (read("from", from)?, read("to", to)?);
    if lo >= hi {
        return bad(
            format!("{section}.to"),
            format!("the range is empty: `to` ({hi}) must be above `from` ({lo})"),
        );
    }
    if !(1..=MAX_RUNS as i64).contains(&points) {
        return bad(
            format!("{section}.points"),
            format!("must be from 1 to {MAX_RUNS}, not {points}"),
        );
    }
    let n = points as usize;
    let mut values: Vec<f64> = (0..n)
        .map(|i| match n {
            1 => lo,
            _ => lo + (hi - lo) * i as f64 / (n - 1) as f64,
        })
        .collect();
    if unit == AxisUnit::Seconds {
        // Durations are whole nanoseconds: keep the value that will be set.
        values
            .iter_mut()
            .for_each(|x| *x = ns_to_secs(secs_to_ns(*x)));
        values.dedup();
    }
    Ok(Axis {
        path: path.to_string(),
        unit,
        values,
        operating_point,
    })
}

/// Checks a measure name against the classes and pools (and other named components, whose
/// columns are checked once a run has produced them).
fn measure(name: &str, config: &Config, table: &Table) -> V<Measure> {
    let path = "tipping.measure";
    let classes: Vec<&str> = config.classes.iter().map(|c| c.name.as_str()).collect();
    if let Some(class) = name.strip_prefix("goodput_ratio.") {
        if classes.contains(&class) {
            return Ok(Measure::GoodputRatio {
                class: class.to_string(),
            });
        }
        let hint = nearest(class, classes.iter().copied())
            .map(|n| format!("; did you mean `goodput_ratio.{n}`?"))
            .unwrap_or_default();
        return bad(path, format!("no class named `{class}`{hint}"));
    }
    let mut known: Vec<String> = classes
        .iter()
        .map(|c| format!("goodput_ratio.{c}"))
        .collect();
    known.extend(super::columns::column_names(config).into_iter().skip(1));
    if known.iter().any(|k| k == name) {
        return Ok(Measure::Column(name.to_string()));
    }
    // A component this code does not know (e.g. a `[cache.NAME]`): its column is checked
    // against the first run's time series.
    let owner = name.split('.').next().unwrap_or("");
    let other_component = name.contains('.')
        && table.iter().any(|(k, v)| {
            !["class", "pool", "event", "variant", "tipping", "phase"].contains(&k.as_str())
                && v.as_table().is_some_and(|t| t.contains_key(owner))
        });
    if other_component {
        return Ok(Measure::Column(name.to_string()));
    }
    let hint = nearest(name, known.iter().map(|s| s.as_str()))
        .map(|n| format!("; did you mean `{n}`?"))
        .unwrap_or_default();
    bad(
        path,
        format!(
            "unknown measure `{name}`: use `goodput_ratio.CLASS` or a column of timeseries.csv (e.g. {}){hint}",
            known
                .iter()
                .take(3)
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_seconds_exactly() {
        assert_eq!(format_seconds(12.5), "12.5s");
        assert_eq!(format_seconds(60.0), "60s");
        assert_eq!(format_seconds(0.001), "0.001s");
        assert_eq!(
            parse_duration(&format_seconds(1.234567891)).unwrap(),
            1_234_567_891
        );
    }

    #[test]
    fn last_occurrence_of_a_repeating_event() {
        let s = NS_PER_S;
        assert_eq!(last_end(10 * s, 5 * s, None, 100 * s), 15 * s);
        assert_eq!(last_end(10 * s, 5 * s, Some(20 * s), 100 * s), 95 * s);
        assert_eq!(last_end(10 * s, 5 * s, Some(30 * s), 100 * s), 75 * s);
    }
}
