//! The `[tipping]` and `[phase]` sections, checked against the rest of the scenario: the
//! swept path must hold a number or a duration, the trigger events must exist, the
//! measuring window must hold a whole metrics step, the measure must name a class or a
//! column of the time series. An SLO measure's `slo` table is checked in `slo.rs`;
//! `[hysteresis]`, which rides on `[tipping]`, in `hysteresis.rs`.

use super::check::{self, V, bad, did_you_mean, listing, nearest, nonzero_dur, window};
use super::slo;
use super::warmup;
use crate::engine::time::{SimTime, ns_to_secs, parse_duration};
use crate::scenario::columns::{Owner, columns};
use crate::scenario::overrides;
use crate::scenario::raw::{RawScenario, RawTipping};
use crate::scenario::spec::Config;
use crate::scenario::spec::hysteresis::MAX_RUN_NS;
use crate::scenario::spec::sweep::{
    Axis, AxisUnit, DEFAULT_ADAPTIVE_SEEDS, Health, MAX_RUNS, Measure, Method, Phase,
    RECOVERY_HORIZONS, Tipping, UNBOUNDED_BLOCK_NS, spaced,
};
use crate::scenario::strict::Strict;
use serde::Deserialize;
use toml::{Table, Value};

/// Validates `[tipping]` and `[phase]` against the rest of the scenario. `table` is the
/// file after the variant and overrides, `duration` the validated run length.
pub fn tipping(
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
    let mut axis = read_axis("tipping", &t.vary, &t.from, &t.to, points, table)?;
    labels("tipping", &t.label, &t.unit, &mut axis)?;
    // The most seeds per probe of an adaptive search (its sequential test adds them only
    // where a probe is uncertain); one per point of a grid.
    let grid = t.method.as_deref() == Some("grid");
    let seeds = match t.seeds {
        None if grid => 1,
        None => DEFAULT_ADAPTIVE_SEEDS,
        Some(s) => runs_in("tipping.seeds", s)?,
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
    let duration_ns = t
        .duration
        .map(|d| nonzero_dur("tipping.duration", d))
        .transpose()?;
    let mut run_end = duration_ns.unwrap_or(duration);
    let mut duration_ns = duration_ns;
    let recover_within_ns = t
        .recover_within
        .map(|d| nonzero_dur("tipping.recover_within", d))
        .transpose()?;
    let names: Vec<&str> = config.triggers.iter().map(|e| e.name.as_str()).collect();
    let mut window_start = 0;
    for (i, name) in t.trigger.iter().enumerate() {
        let Some(e) = config.triggers.iter().find(|e| &e.name == name) else {
            let hint = did_you_mean(name, names.iter().copied());
            let list = if names.is_empty() {
                "none".to_string()
            } else {
                listing(&names)
            };
            return bad(
                format!("tipping.trigger.{i}"),
                format!("no event named `{name}` (known: {list}){hint}"),
            );
        };
        if recover_within_ns.is_some() && e.every_ns.is_some() {
            return bad(
                "tipping.recover_within",
                format!(
                    "the trigger `{name}` repeats (`every`), so there is no last end to count a recovery from; drop `every` or use `settle`"
                ),
            );
        }
        window_start = window_start.max(last_end(e.at_ns, e.for_ns, e.every_ns, run_end));
    }
    let trigger_end_ns = window_start;
    // A run must be long enough to tell a slow recovery from none: at least
    // RECOVERY_HORIZONS x `recover_within` past the trigger's end (lengthened if shorter).
    if let Some(r) = recover_within_ns {
        let Some(need) = r
            .checked_mul(RECOVERY_HORIZONS)
            .and_then(|x| x.checked_add(trigger_end_ns))
            .filter(|&x| x <= MAX_RUN_NS)
        else {
            return bad(
                "tipping.recover_within",
                format!(
                    "{} s past the trigger's end at {} s makes runs longer than {} s; shorten it",
                    ns_to_secs(r.saturating_mul(RECOVERY_HORIZONS)),
                    ns_to_secs(trigger_end_ns),
                    ns_to_secs(MAX_RUN_NS)
                ),
            );
        };
        if need > run_end {
            run_end = need;
            duration_ns = Some(need);
        }
    }
    let settle_ns = t.settle.0;
    // The metrics step as the run will have it (its default follows the run length).
    let step = window(raw.metrics.step, run_end)?;
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
    let measure = measure(t, config, step, (first_row, run_end))?;
    let shift_ns = match t.warmup {
        None => 0,
        Some(w) => warmup::shift(raw, t, config, nonzero_dur("tipping.warmup", w)?, step)?,
    };
    let slo_default = slo::threshold(t, &measure)?;
    let health = match (slo_default.or(t.healthy_above), t.healthy_below) {
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
    let method = match t.method.as_deref() {
        None => Method::default(),
        Some(m) => match Method::NAMES.iter().position(|n| *n == m) {
            Some(0) => Method::Adaptive,
            Some(_) => Method::Grid,
            None => {
                let hint = did_you_mean(m, Method::NAMES.iter().copied());
                return bad(
                    "tipping.method",
                    format!("`{m}` is not a search method (known: adaptive, grid){hint}"),
                );
            }
        },
    };
    let tolerance = match &t.tolerance {
        None => None,
        Some(v) => {
            let x = axis_value("tipping", "tolerance", &t.vary, axis.unit, v)?;
            let range = axis.values[axis.values.len() - 1] - axis.values[0];
            if !(x > 0.0 && x >= range * 1e-6 && x <= range.max(0.0)) {
                return bad(
                    "tipping.tolerance",
                    format!(
                        "must be above 0, at least a millionth of the range and at most the range ({range}), not {x}"
                    ),
                );
            }
            Some(x)
        }
    };
    let tipping = Tipping {
        seeds_default: t.seeds.is_none(),
        method,
        tolerance,
        axis,
        trigger: t.trigger.clone(),
        settle_ns,
        measure,
        measure_name: t.measure.clone(),
        health,
        seeds,
        duration_ns,
        window_start_ns,
        trigger_end_ns,
        recover_within_ns,
        shift_ns,
        step_ns: step,
    };
    let phase = match &raw.phase {
        None => None,
        Some(p) => {
            let mut axis = read_axis(
                "phase",
                &p.vary,
                &p.from,
                &p.to,
                p.points.unwrap_or(11),
                table,
            )?;
            labels("phase", &p.label, &p.unit, &mut axis)?;
            if axis.path == tipping.axis.path {
                return bad("phase.vary", "must differ from `tipping.vary`");
            }
            let name = |a: &Axis| a.label.clone().unwrap_or_else(|| a.path.clone());
            if name(&axis) == name(&tipping.axis) {
                return bad(
                    if p.label.is_some() {
                        "phase.label"
                    } else {
                        "tipping.label"
                    },
                    format!(
                        "`{}` names both axes of the phase map; give each its own label",
                        name(&axis)
                    ),
                );
            }
            let seeds = match p.seeds {
                // A phase map is a grid: one seed per cell unless the file says.
                None if tipping.seeds_default => 1,
                None => seeds,
                Some(s) => runs_in("phase.seeds", s)?,
            };
            let cells = axis.values.len() as u64 * tipping.axis.values.len() as u64;
            if cells * seeds as u64 > MAX_RUNS {
                return bad(
                    if p.seeds.is_some() {
                        "phase.seeds"
                    } else {
                        "phase.points"
                    },
                    format!(
                        "{cells} cells x {seeds} seeds is more than {MAX_RUNS} runs per variant; use fewer points or seeds"
                    ),
                );
            }
            Some(Phase { axis, seeds })
        }
    };
    Ok((Some(tipping), phase))
}

/// A count of points or seeds: from 1 to [`MAX_RUNS`].
fn runs_in(path: &str, n: i64) -> V<u32> {
    if !(1..=MAX_RUNS as i64).contains(&n) {
        return bad(path, format!("must be from 1 to {MAX_RUNS}, not {n}"));
    }
    Ok(n as u32)
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
    let (unit, base) = settable_number(table, path).map_err(|m| (vary.clone(), m))?;
    let read = |key: &str, v: &Value| axis_value(section, key, path, unit, v);
    let operating_point = read("vary", &base).map_err(|(_, m)| (vary.clone(), m))?;
    let (lo, hi) = (read("from", from)?, read("to", to)?);
    if lo >= hi {
        return bad(
            format!("{section}.to"),
            format!("the range is empty: `to` ({hi}) must be above `from` ({lo})"),
        );
    }
    runs_in(&format!("{section}.points"), points)?;
    Ok(Axis {
        path: path.to_string(),
        unit,
        values: spaced(lo, hi, points as usize, unit),
        range: (lo, hi),
        operating_point,
        label: None,
        unit_name: None,
    })
}

/// What the file sets at `path` when it is a number or a duration (a key that can be
/// swept, or fitted by `brink calibrate --fit`): its kind and its value as written; else
/// why not.
pub fn settable_number(table: &Table, path: &str) -> Result<(AxisUnit, Value), String> {
    let unit_of = |v: &Value| match v {
        Value::Integer(_) => Some(AxisUnit::Integer),
        Value::Float(_) => Some(AxisUnit::Number),
        Value::String(s) if parse_duration(s).is_ok() => Some(AxisUnit::Seconds),
        _ => None,
    };
    let Some(base) = overrides::get(table, path) else {
        return Err(format!(
            "the scenario has no value at `{path}`; sweep a key the file sets (its value is the operating point){}",
            path_hint(table, path)
        ));
    };
    let Some(mut unit) = unit_of(base) else {
        return Err(format!(
            "`{path}` is not a number or a duration (it is {base}); only those can be swept"
        ));
    };
    if unit == AxisUnit::Integer && !integer_key(table, path) {
        // A float key written without a fraction (`rate = 1`): the same number as `1.0`.
        unit = AxisUnit::Number;
    }
    Ok((unit, base.clone()))
}

/// "; did you mean `class.web.rate`?" for a `path` the file does not set: the first segment
/// the file lacks is replaced by the nearest key of the table above it, when the path so
/// corrected names a value of the file.
fn path_hint(table: &Table, path: &str) -> String {
    let segs: Vec<&str> = path.split('.').collect();
    let mut cur = table;
    for (i, seg) in segs.iter().enumerate() {
        match cur.get(*seg) {
            Some(Value::Table(t)) => cur = t,
            Some(_) => return String::new(),
            None => {
                let Some(near) = nearest(seg, cur.keys().map(String::as_str)) else {
                    return String::new();
                };
                let mut fixed: Vec<&str> = segs.clone();
                fixed[i] = near;
                let fixed = fixed.join(".");
                return match overrides::get(table, &fixed) {
                    Some(_) => format!("; did you mean `{fixed}`?"),
                    None => String::new(),
                };
            }
        }
    }
    String::new()
}

/// Whether the whole number at `path` is an integer key (`workers`, `users`,
/// `max_attempts`) rather than a float key written without a fraction (`rate = 1`). Decided
/// by what the key is, not by how the file spells it: the raw shapes (`raw.rs`,
/// `raw/pool.rs`) are asked to read the file with a fractional value at `path`, which only
/// a float key accepts (an integer key is an `i64`, a count a whole number or a law).
fn integer_key(table: &Table, path: &str) -> bool {
    let mut probe = table.clone();
    overrides::apply(&mut probe, path, Value::Float(0.5)).is_ok()
        && RawScenario::deserialize(Strict(Value::Table(probe))).is_err()
}

/// Reads `[section].key` as a value of the axis of `path` (a number, or a duration for a
/// duration axis, in seconds); finite.
fn axis_value(section: &str, key: &str, path: &str, unit: AxisUnit, v: &Value) -> V<f64> {
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
}

/// Checks `[section].label` and `.unit` and puts them on the axis: short single lines (so
/// they fit on a panel), and no unit for a duration (its values are seconds).
fn labels(section: &str, label: &Option<String>, unit: &Option<String>, axis: &mut Axis) -> V<()> {
    let text = |key: &str, s: &str, max: usize| -> V<String> {
        let t = s.trim();
        if t.is_empty() || t.chars().count() > max || t.contains(['\n', '\r']) {
            return bad(
                format!("{section}.{key}"),
                format!("must be one line of 1 to {max} characters, not {s:?}"),
            );
        }
        check::text(&format!("{section}.{key}"), t, false)?;
        Ok(t.to_string())
    };
    if let Some(l) = label {
        axis.label = Some(text("label", l, 48)?);
    }
    if let Some(u) = unit {
        if axis.unit == AxisUnit::Seconds {
            return bad(
                format!("{section}.unit"),
                format!(
                    "`{}` is a duration: its values are shown in seconds; remove `unit`",
                    axis.path
                ),
            );
        }
        axis.unit_name = Some(text("unit", u, 16)?);
    }
    Ok(())
}

/// Checks a measure name: `goodput_ratio.CLASS` (its block the class's timeout),
/// `slo.CLASS` (its objective read by [`slo::slo`] against the metrics `step` and the measuring
/// `window`), or a column of the time-series schema ([`columns`]) but `time_s`: the
/// columns every run produces (caches' and pools' calls' included), so `brink check`
/// refuses every measure that `brink tipping` would (issue 23).
fn measure(
    t: &RawTipping,
    config: &Config,
    step: SimTime,
    window: (SimTime, SimTime),
) -> V<Measure> {
    let (name, path) = (t.measure.as_str(), "tipping.measure");
    let classes: Vec<&str> = config
        .client_classes()
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    for kind in ["goodput_ratio", "slo"] {
        let Some(class) = name.strip_prefix(kind).and_then(|n| n.strip_prefix('.')) else {
            continue;
        };
        let Some(c) = config.client_classes().iter().find(|c| c.name == class) else {
            let hint = nearest(class, classes.iter().copied())
                .map(|n| format!("; did you mean `{kind}.{n}`?"))
                .unwrap_or_default();
            return bad(path, format!("no class named `{class}`{hint}"));
        };
        let class = class.to_string();
        return Ok(match kind {
            // A block lasts at least as long as a request may wait on one attempt, so
            // what it offers is mostly answered inside it (a ratio of sums).
            "goodput_ratio" => Measure::GoodputRatio {
                class,
                block_ns: match c.timeout_ns {
                    SimTime::MAX => UNBOUNDED_BLOCK_NS,
                    t => t,
                },
            },
            _ => Measure::Slo(slo::slo(t, class, step, window)?),
        });
    }
    let mut known: Vec<String> = classes
        .iter()
        .flat_map(|c| [format!("goodput_ratio.{c}"), format!("slo.{c}")])
        .collect();
    known.extend(
        columns(config)
            .into_iter()
            .filter(|c| c.owner != Owner::Time)
            .map(|c| c.name),
    );
    if known.iter().any(|k| k == name) {
        return Ok(Measure::Column(name.to_string()));
    }
    let hint = did_you_mean(name, known.iter().map(|s| s.as_str()));
    bad(
        path,
        format!(
            "unknown measure `{name}`: use `goodput_ratio.CLASS`, `slo.CLASS` or a column of timeseries.csv (e.g. {}){hint}",
            listing(&known[..known.len().min(3)])
        ),
    )
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::NS_PER_S;

    #[test]
    fn last_occurrence_of_a_repeating_event() {
        let s = NS_PER_S;
        assert_eq!(last_end(10 * s, 5 * s, None, 100 * s), 15 * s);
        assert_eq!(last_end(10 * s, 5 * s, Some(20 * s), 100 * s), 95 * s);
        assert_eq!(last_end(10 * s, 5 * s, Some(30 * s), 100 * s), 75 * s);
    }

    /// What a whole number in the file is comes from the key, not its spelling: `workers`
    /// and `max_attempts` are integer keys, `rate` and a law's `mean` float keys.
    #[test]
    fn integer_keys_are_told_from_float_keys_written_as_whole_numbers() {
        let table: Table = toml::from_str(
            r#"
duration = "60s"
[class.request]
rate = 1
retry = { max_attempts = 4 }
steps = [{ query = "server" }]
[pool.server]
workers = 3
service = { law = "lognormal", mean = "100ms", cv = 2 }
"#,
        )
        .unwrap();
        RawScenario::deserialize(Strict(Value::Table(table.clone()))).unwrap();
        for (path, integer) in [
            ("class.request.rate", false),
            ("pool.server.service.cv", false),
            ("class.request.retry.max_attempts", true),
            ("pool.server.workers", true),
        ] {
            assert_eq!(integer_key(&table, path), integer, "{path}");
        }
    }
}
