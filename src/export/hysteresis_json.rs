//! `hysteresis.json`: the loop's points, its collapse and recovery points and bistable
//! interval, and what produced it (version, seed, overrides).

use crate::report::hysteresis_result::HysteresisReport;

/// The bytes of `hysteresis.json`.
pub fn hysteresis_json(report: &HysteresisReport) -> Vec<u8> {
    super::pretty_json(report)
}
