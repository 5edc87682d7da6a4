//! The `[hysteresis]` section (the ramp of `brink hysteresis`), checked against the
//! `[tipping]` section it rides on: its steps, dwell and settle must give each step a
//! measurable part.

use super::check::{V, bad, nonzero_dur, window};
use crate::engine::time::ns_to_secs;
use crate::scenario::raw::RawScenario;
use crate::scenario::spec::hysteresis::{DEFAULT_STEPS, Hysteresis, MAX_RUN_NS, MAX_STEPS};
use crate::scenario::spec::sweep::{AxisUnit, Tipping, spaced};

/// Validates `[hysteresis]` (if the file has it) against the `[tipping]` section it ramps.
/// Defaults: 24 steps, `dwell` = `tipping.settle` (the time the scenario's author gives the
/// system to settle after a disturbance), `settle` = half the dwell. The ramp is bounded
/// ([`MAX_STEPS`], [`MAX_RUN_NS`]) and each step's measured part must hold two metrics
/// steps, so that a whole time-series row falls inside it wherever the rows start.
pub fn hysteresis(raw: &RawScenario, tipping: Option<&Tipping>) -> V<Option<Hysteresis>> {
    let Some(h) = &raw.hysteresis else {
        return Ok(None);
    };
    let Some(t) = tipping else {
        return bad(
            "hysteresis",
            "a hysteresis loop ramps the [tipping] parameter: add a [tipping] section (vary, from, to, measure, threshold)",
        );
    };
    let steps = match h.steps {
        None => DEFAULT_STEPS,
        Some(s) if (2..=MAX_STEPS as i64).contains(&s) => s as u32,
        Some(s) => {
            return bad(
                "hysteresis.steps",
                format!("must be a whole number from 2 to {MAX_STEPS}, not {s}"),
            );
        }
    };
    // A range that holds one settable value (`workers` from 4.1 to 4.4 is 4 throughout)
    // gives no ramp at all: said so here, not taken for a parameter that cannot change.
    let (from, to) = t.axis.range;
    if let [only] = spaced(from, to, steps as usize, t.axis.unit)[..] {
        let why = match t.axis.unit {
            AxisUnit::Integer => "takes whole numbers",
            AxisUnit::Seconds => "is a duration in whole nanoseconds",
            AxisUnit::Number => "takes numbers",
        };
        return bad(
            "tipping.to",
            format!(
                "a hysteresis ramp needs two values or more, and `{}` {why}: from {from} to {to} it holds one ({only}); widen the range (`tipping.from`, `tipping.to`)",
                t.axis.path
            ),
        );
    }
    let dwell_ns = match h.dwell {
        Some(d) => nonzero_dur("hysteresis.dwell", d)?,
        None if t.settle_ns > 0 => t.settle_ns,
        None => {
            return bad(
                "hysteresis.dwell",
                "missing: its default is `tipping.settle`, which is zero; give the time to hold each value, e.g. dwell = \"5m\"",
            );
        }
    };
    let settle_ns = match h.settle {
        None => dwell_ns / 2,
        Some(s) if s.0 < dwell_ns => s.0,
        Some(s) => {
            return bad(
                "hysteresis.settle",
                format!(
                    "must be shorter than the dwell ({} s), not {} s: the rest of each dwell is measured",
                    ns_to_secs(dwell_ns),
                    ns_to_secs(s.0)
                ),
            );
        }
    };
    let run_ns = 2 * steps as u128 * dwell_ns as u128;
    if run_ns > MAX_RUN_NS as u128 {
        return bad(
            if h.dwell.is_some() || h.steps.is_none() {
                "hysteresis.dwell"
            } else {
                "hysteresis.steps"
            },
            format!(
                "2 directions x {steps} steps x {} s = {} s of simulated time, more than {} s (30 days); use fewer steps or a shorter dwell",
                ns_to_secs(dwell_ns),
                run_ns as f64 / 1e9,
                ns_to_secs(MAX_RUN_NS)
            ),
        );
    }
    let ramp = Hysteresis {
        steps,
        dwell_ns,
        settle_ns,
    };
    // The ramp's run has its own length, so the default metrics step follows it.
    let step = window(raw.metrics.step, ramp.run_ns())?;
    if dwell_ns - settle_ns < step.saturating_mul(2) {
        return bad(
            if h.settle.is_some() {
                "hysteresis.settle"
            } else {
                "hysteresis.dwell"
            },
            format!(
                "each step's measured part (dwell {} s minus settle {} s) must hold two metrics steps of {} s; lengthen the dwell, shorten the settle or the metrics step",
                ns_to_secs(dwell_ns),
                ns_to_secs(settle_ns),
                ns_to_secs(step)
            ),
        );
    }
    Ok(Some(ramp))
}
