//! The headroom gate (`brink tipping --require-headroom H`, `brink all --require-headroom
//! H`): every swept variant's headroom lower bound
//! ([`VariantTipping::headroom_lower_bound`]) must be at least H, so that a design's
//! headroom can be checked in CI. The outputs are written whatever the gate says; the
//! command then exits 1 when a variant falls short.
//!
//! A variant without an operating point (0: the headroom, the tipping point over it, is
//! not defined) has no lower bound and does not pass: a gate that cannot be checked is
//! not passed silently.

use super::sweep_result::{SweepReport, VariantTipping};
use super::timeline::axis::sig3;

/// Why one variant of `scenario` does not pass a gate of `required`, or none when it does.
fn shortfall(scenario: &str, v: &VariantTipping, required: f64) -> Option<String> {
    let name = format!("{scenario}/{}", v.variant);
    match v.headroom_lower_bound() {
        Some(b) if b >= required => None,
        Some(b) => Some(format!(
            "{name}: headroom lower bound {} (headroom {})",
            sig3(b),
            v.headroom_cell()
        )),
        None => Some(format!(
            "{name}: no headroom lower bound (operating point {}: the headroom, tipping point over operating point, is not defined)",
            sig3(v.operating_point)
        )),
    }
}

/// Checks every variant of every report against `required`: `Err` with a message that
/// names each variant short of it and its bound.
pub fn require_headroom<'a>(
    reports: impl IntoIterator<Item = &'a SweepReport>,
    required: f64,
) -> Result<(), String> {
    let short: Vec<String> = reports
        .into_iter()
        .flat_map(|r| {
            r.variants
                .iter()
                .filter_map(|v| shortfall(&r.scenario, v, required))
        })
        .collect();
    if short.is_empty() {
        return Ok(());
    }
    Err(format!(
        "headroom below {required} (--require-headroom) in {} swept variant{} (every output is written):\n  {}",
        short.len(),
        if short.len() == 1 { "" } else { "s" },
        short.join("\n  ")
    ))
}
