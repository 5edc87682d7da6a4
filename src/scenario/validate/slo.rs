//! The SLO measure's keys of `[tipping]`: the `slo = { p99 = "200ms", errors = 0.01,
//! window = "1m" }` table of a `slo.CLASS` measure (one latency quantile's bound, the
//! error share, the SLO window as whole time-series rows inside the measuring window), and
//! the threshold of an SLO measure (a share of windows that met the objective, healthy
//! when high).

use super::check::{V, bad, nonzero_dur};
use crate::engine::time::{SimTime, ns_to_secs};
use crate::scenario::raw::RawTipping;
use crate::scenario::spec::sweep::{
    DEFAULT_SLO_HEALTHY_ABOVE, DEFAULT_SLO_WINDOW_NS, Measure, Slo,
};

/// The threshold an SLO measure has when the file gives none (`healthy_above`
/// [`DEFAULT_SLO_HEALTHY_ABOVE`]); none for another measure or a threshold given. Refuses
/// `slo` without an SLO measure, and for an SLO measure `healthy_below` or a
/// `healthy_above` outside [0, 1).
pub(super) fn threshold(t: &RawTipping, measure: &Measure) -> V<Option<f64>> {
    if t.slo.is_some() && !matches!(measure, Measure::Slo(_)) {
        return bad(
            "tipping.slo",
            format!(
                "an objective is checked only by an SLO measure: set measure = \"slo.CLASS\" (the measure is `{}`), or remove `slo`",
                t.measure
            ),
        );
    }
    let slo_default = match measure {
        Measure::Slo(_) if t.healthy_below.is_some() => {
            return bad(
                "tipping.healthy_below",
                "an SLO measure is the share of SLO windows that meet the objective, healthy when high: use `healthy_above` (a share from 0 to 1; default 0.9)",
            );
        }
        Measure::Slo(_) => match t.healthy_above {
            Some(x) if !(0.0..1.0).contains(&x) => {
                return bad(
                    "tipping.healthy_above",
                    format!(
                        "an SLO measure is a share from 0 to 1: the threshold must be at least 0 and below 1, not {x}"
                    ),
                );
            }
            Some(_) => None,
            None => Some(DEFAULT_SLO_HEALTHY_ABOVE),
        },
        _ => None,
    };
    Ok(slo_default)
}

/// Reads `tipping.slo` for the measure `slo.CLASS`: exactly one latency
/// quantile (`p50`, `p90`, `p99`, `p999`) with its bound, `errors` (a share from 0 to 1)
/// and `window` (default one minute), a whole number of time-series rows of `step`, of
/// which the measuring window `(first_row, end)` holds at least one.
pub(super) fn slo(
    t: &RawTipping,
    class: String,
    step: SimTime,
    (first_row, end): (SimTime, SimTime),
) -> V<Slo> {
    let Some(raw) = &t.slo else {
        return bad(
            "tipping.slo",
            format!(
                "missing: the measure `{}` checks an objective; give it, e.g. slo = {{ p99 = \"200ms\", errors = 0.01, window = \"1m\" }}",
                t.measure
            ),
        );
    };
    let given: Vec<(&str, f64, SimTime)> = Slo::QUANTILES
        .iter()
        .zip([raw.p50, raw.p90, raw.p99, raw.p999])
        .filter_map(|(&(k, q), d)| d.map(|d| (k, q, d.0)))
        .collect();
    let (key, quantile, bound_ns) = match given[..] {
        [one] => one,
        [] => {
            return bad(
                "tipping.slo",
                "give one latency quantile's bound: p50, p90, p99 or p999 (e.g. p99 = \"200ms\")",
            );
        }
        [_, (k, _, _), ..] => {
            return bad(
                format!("tipping.slo.{k}"),
                format!(
                    "an SLO bounds one latency quantile; `{}` is given already",
                    given[0].0
                ),
            );
        }
    };
    if bound_ns == 0 {
        return bad(format!("tipping.slo.{key}"), "must be longer than zero");
    }
    let errors = match raw.errors {
        Some(e) if (0.0..=1.0).contains(&e) => e,
        Some(e) => {
            return bad(
                "tipping.slo.errors",
                format!("must be a share from 0 to 1 (0.01 is 1%), not {e}"),
            );
        }
        None => {
            return bad(
                "tipping.slo.errors",
                "missing: the share of the window's ended requests that may fail or be refused (e.g. errors = 0.01; 1 for no bound)",
            );
        }
    };
    let window_ns = match raw.window {
        Some(w) => nonzero_dur("tipping.slo.window", w)?,
        None => DEFAULT_SLO_WINDOW_NS,
    };
    if window_ns % step != 0 {
        return bad(
            "tipping.slo.window",
            format!(
                "must be a whole number of time-series rows (`metrics.step` is {} s), not {} s: each window's quantile is taken over its rows' requests; set `tipping.slo.window` or `metrics.step` so one divides the other",
                ns_to_secs(step),
                ns_to_secs(window_ns)
            ),
        );
    }
    if first_row.saturating_add(window_ns) > end {
        return bad(
            "tipping.slo.window",
            format!(
                "the measuring window (rows from {} s to the end of the run at {} s) holds no whole SLO window of {} s; shorten the window, `settle`, or lengthen the run",
                ns_to_secs(first_row),
                ns_to_secs(end),
                ns_to_secs(window_ns)
            ),
        );
    }
    Ok(Slo {
        class,
        quantile,
        bound_ns,
        errors,
        window_ns,
    })
}
