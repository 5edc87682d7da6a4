//! `tipping.csv` and `phase.csv`: one row per run of a sweep, in (variant, value, seed,
//! branch) order. One exporter
//! for both files: a phase map is a tipping sweep with a second axis, and its file differs
//! by that one column (`value2` after `value`).

use super::csv::{num, text};
use crate::stats::plan::{Plan, Run};
use std::fmt::Write;

/// The bytes of `tipping.csv` (`variant,value,branch,seed,measure,state`) or, for a plan
/// with two axes, `phase.csv` (`variant,value,value2,branch,seed,measure,state`, then the
/// two parameters' key paths). `state` is the run's own health (`healthy` or `failed`),
/// not the cell's region (with `recover_within`, a triggered run's by its recovery:
/// [`Plan::failed`]).
pub fn sweep_csv(plan: &Plan, runs: &[Run]) -> Vec<u8> {
    let two = plan.axes.len() > 1;
    let mut out = String::from(if two {
        "variant,value,value2,branch,seed,measure,state"
    } else {
        "variant,value,branch,seed,measure,state\n"
    });
    if two {
        let _ = writeln!(out, "{}", named_columns(plan));
    }
    for r in runs {
        let _ = write!(
            out,
            "{},{}",
            text(&plan.variants[r.variant].name),
            num(r.value[0])
        );
        if two {
            let _ = write!(out, ",{}", num(r.value[1]));
        }
        let state = if plan.failed(r.branch, r.measure, r.trace) {
            "failed"
        } else {
            "healthy"
        };
        let _ = write!(
            out,
            ",{},{},{},{state}",
            r.branch.name(),
            r.seed,
            num(r.measure.unwrap_or(f64::NAN))
        );
        if two {
            // The named columns repeat `value` and `value2`.
            let _ = write!(out, ",{},{}", num(r.value[0]), num(r.value[1]));
        }
        out.push('\n');
    }
    out.into_bytes()
}

/// `phase.csv`'s last two columns: named after the two parameters' key paths
/// (`class.request.rate`, `event.slowdown.for`), so a reader needs no legend to know what
/// `value` and `value2` are; a duration's column holds seconds, as `value2` does.
fn named_columns(plan: &Plan) -> String {
    plan.axes
        .iter()
        .map(|a| format!(",{}", text(&a.path)))
        .collect()
}
