//! The validated `[tipping]` and `[phase]` sections: which parameter a sweep varies and the
//! values it takes, which events form the disturbance, what is measured and what
//! "healthy" means. `--set tipping.…` and variants change them like any other key.

use crate::engine::time::{NS_PER_S, SimTime, ns_to_secs, secs_to_ns};
use toml::Value;

/// The most runs per variant a sweep may ask for (points x seeds, or cells x seeds).
pub const MAX_RUNS: u64 = 10_000;

/// What the values of an axis are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisUnit {
    /// Plain numbers (floats).
    Number,
    /// An integer key (`workers`, `users`, `max_attempts`): whole numbers only. A float key
    /// written without a fraction (`rate = 70`) is a [`AxisUnit::Number`]: validation asks
    /// the raw shapes which the key is, not how the file spells it.
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
    /// The range as written (`from`, `to`; seconds for durations).
    pub range: (f64, f64),
    /// The scenario's own value of the parameter (after variant and `--set`).
    pub operating_point: f64,
    /// What axes and tables call it (`label`), and the unit of its values (`unit`; for
    /// durations always seconds), if the file gives them.
    pub label: Option<String>,
    pub unit_name: Option<String>,
}

impl Axis {
    /// The value to set for point `x`, typed as the scenario file expects it.
    pub fn toml_value(&self, x: f64) -> Value {
        match self.unit {
            AxisUnit::Number => Value::Float(x),
            AxisUnit::Integer => Value::Integer(x as i64),
            AxisUnit::Seconds => Value::String(format_seconds(x)),
        }
    }
}

/// `n` values evenly spaced from `lo` to `hi` (just `lo` for one); an integer key's are
/// whole numbers and durations whole nanoseconds, so the values are the ones that will be
/// set, without repeats.
pub fn spaced(lo: f64, hi: f64, n: usize, unit: AxisUnit) -> Vec<f64> {
    let mut values: Vec<f64> = (0..n)
        .map(|i| match n {
            1 => lo,
            _ => lo + (hi - lo) * i as f64 / (n - 1) as f64,
        })
        .collect();
    let settable = match unit {
        AxisUnit::Number => return values,
        AxisUnit::Integer => f64::round,
        AxisUnit::Seconds => |x: f64| ns_to_secs(secs_to_ns(x)),
    };
    values.iter_mut().for_each(|x| *x = settable(*x));
    values.dedup();
    values
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
    /// Goodput over offered load of one class (1 when nothing was offered), over blocks
    /// of consecutive rows at least `block_ns` long (the class's timeout, or
    /// [`UNBOUNDED_BLOCK_NS`] for a class without one): a request offered in one row may
    /// be answered in the next, so a row's own ratio scatters around 1 and its cap at 1
    /// biases a mean of short rows down.
    GoodputRatio { class: String, block_ns: SimTime },
    /// The time-weighted mean of one `timeseries.csv` column.
    Column(String),
    /// The share of SLO windows in which a class meets its objective (`slo.CLASS`).
    Slo(Slo),
}

/// The goodput-ratio block of a class without a timeout: nothing bounds when its
/// requests are answered, so no block is long enough by construction; one second is the
/// row length at which a lightly loaded M/M/c with millisecond service reads right
/// (issue 21). A class with a timeout gets blocks of its timeout.
pub const UNBOUNDED_BLOCK_NS: SimTime = NS_PER_S;

/// The SLO window when `tipping.slo.window` is not given.
pub const DEFAULT_SLO_WINDOW_NS: SimTime = 60 * NS_PER_S;

/// `healthy_above` of an SLO measure when the file gives no threshold: more than 90% of
/// the measuring window's SLO windows meet the objective.
pub const DEFAULT_SLO_HEALTHY_ABOVE: f64 = 0.9;

/// A service-level objective on one class, checked over each SLO window: the window's
/// latency quantile (over its successful requests, as one histogram) at most `bound_ns`,
/// and its failed and refused requests at most `errors` of those that ended in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Slo {
    pub class: String,
    /// The quantile, in (0, 1): 0.5, 0.9, 0.99 or 0.999.
    pub quantile: f64,
    /// The latency bound of that quantile.
    pub bound_ns: SimTime,
    /// The error-ratio bound, in [0, 1].
    pub errors: f64,
    /// The SLO window: a whole number of time-series rows.
    pub window_ns: SimTime,
}

impl Slo {
    /// The SLO's latency quantiles as `tipping.slo` keys, with their quantile.
    pub const QUANTILES: [(&'static str, f64); 4] =
        [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)];
}

/// What "healthy" means: the threshold of `[tipping]` (`healthy_above` or
/// `healthy_below`), on one side of which a run's measure is healthy. The one definition
/// of health: sweeps and their reports decide with [`Health::is_healthy`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Health {
    /// `healthy_above`: healthy when the measure is above this.
    Above(f64),
    /// `healthy_below`: healthy when the measure is below this.
    Below(f64),
}

impl Health {
    /// True when `measure` is on the healthy side of the threshold. A missing measure (a
    /// run with no value, or one that ran away) is failed, and so is NaN.
    pub fn is_healthy(self, measure: Option<f64>) -> bool {
        match (self, measure) {
            (Health::Above(t), Some(m)) => m > t,
            (Health::Below(t), Some(m)) => m < t,
            (_, None) => false,
        }
    }

    /// The threshold as `healthy_above`, if it is one.
    pub fn healthy_above(self) -> Option<f64> {
        match self {
            Health::Above(t) => Some(t),
            Health::Below(_) => None,
        }
    }

    /// The threshold as `healthy_below`, if it is one.
    pub fn healthy_below(self) -> Option<f64> {
        match self {
            Health::Above(_) => None,
            Health::Below(t) => Some(t),
        }
    }
}

/// How a tipping sweep places its probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Every value of the grid (`points` from `from` to `to`), every seed.
    Grid,
    /// The grid as a first bracket, each probe's seeds added one at a time until its
    /// majority is settled, then bisection of the brackets of the tipping and overload
    /// points down to `tolerance`.
    #[default]
    Adaptive,
}

impl Method {
    /// The names a file may use, in the order docs list them.
    pub const NAMES: [&'static str; 2] = ["adaptive", "grid"];

    /// The name as written in files.
    pub fn name(self) -> &'static str {
        match self {
            Method::Grid => "grid",
            Method::Adaptive => "adaptive",
        }
    }
}

/// The most seeds per probe of an adaptive search when the file does not say
/// (`tipping.seeds`): enough for the sequential test to decide a probe whose collapse
/// probability is 0.3 or 0.7 nine times in ten.
pub const DEFAULT_ADAPTIVE_SEEDS: u32 = 40;

/// The default tolerance of the adaptive search, as a share of the operating point.
pub const DEFAULT_TOLERANCE: f64 = 0.02;

/// The most bisection probes the adaptive search places per bracket: a bound on the
/// work a tiny tolerance can ask for (2^-40 of the range is below any useful precision).
pub const MAX_BISECTIONS: u32 = 40;

/// With `recover_within` = R, a sweep run lasts at least R x this past the end of the last
/// trigger, and a recovery counts only when its healthy stretch lasts R to the end of the
/// run: so a run can recover up to 2 R after the trigger, which tells a slow recovery
/// (after R) from none.
pub const RECOVERY_HORIZONS: u64 = 3;

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
    /// True when the file does not set `seeds` (a phase map, a grid, then runs one).
    pub seeds_default: bool,
    /// The run length of sweep runs, if it differs from the scenario's `duration`.
    pub duration_ns: Option<SimTime>,
    /// Where measuring starts: the end of the last trigger event plus `settle`.
    pub window_start_ns: SimTime,
    /// The end of the last trigger event (what a recovery time counts from).
    pub trigger_end_ns: SimTime,
    /// `recover_within`: a triggered run that has not recovered this long after the last
    /// trigger ends counts as collapsed. The run is then at least
    /// [`RECOVERY_HORIZONS`] times this past the trigger's end.
    pub recover_within_ns: Option<SimTime>,
    /// How much earlier a sweep run holds every event than the file does (`warmup`; 0
    /// without it): the first trigger then starts at least `warmup` into the run, and the
    /// run is that much shorter. A whole number of periods of every clock that runs from
    /// the start of a run, so the trigger meets each at the phase it meets in the file.
    pub shift_ns: SimTime,
    /// The metrics step of a sweep run (the file's, or its default for the sweep's run
    /// length): a shifted run keeps it, whatever its own length would make the default.
    pub step_ns: SimTime,
    pub method: Method,
    /// The adaptive search's tolerance in the axis's values (seconds for durations);
    /// `None`: [`DEFAULT_TOLERANCE`] of each variant's operating point.
    pub tolerance: Option<f64>,
}

impl Tipping {
    /// The tolerance for a variant whose operating point is `op`: the file's, else 2% of
    /// the operating point (2% of the range when the operating point is 0), at least one
    /// step of a whole-number axis.
    pub fn tolerance_at(&self, op: f64) -> f64 {
        let (lo, hi) = (
            self.axis.values[0],
            self.axis.values[self.axis.values.len() - 1],
        );
        let t = self.tolerance.unwrap_or(if op.abs() > 0.0 {
            DEFAULT_TOLERANCE * op.abs()
        } else {
            DEFAULT_TOLERANCE * (hi - lo)
        });
        if self.axis.unit == AxisUnit::Integer {
            t.max(1.0)
        } else {
            t.max((hi - lo) * 1e-9)
        }
    }
}

/// The validated `[phase]` section (the first axis is the `[tipping]` one).
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    pub axis: Axis,
    /// Seeds per cell and branch (`phase.seeds`); without it, `tipping.seeds` if the file
    /// sets it, else 1.
    pub seeds: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::parse_duration;

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
    fn health_is_one_side_of_the_threshold_and_missing_is_failed() {
        let above = Health::Above(0.5);
        assert!(above.is_healthy(Some(0.6)));
        assert!(!above.is_healthy(Some(0.5)));
        assert!(!above.is_healthy(None));
        assert!(!above.is_healthy(Some(f64::NAN)));
        let below = Health::Below(2.0);
        assert!(below.is_healthy(Some(1.0)));
        assert!(!below.is_healthy(Some(2.0)));
        assert!(!below.is_healthy(None));
        assert_eq!(
            (above.healthy_above(), above.healthy_below()),
            (Some(0.5), None)
        );
        assert_eq!(
            (below.healthy_above(), below.healthy_below()),
            (None, Some(2.0))
        );
    }
}
