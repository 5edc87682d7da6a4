//! `hysteresis.csv`: one row per step of the ramp, the up-ramp's then the down-ramp's.

use super::csv::num;
use crate::report::hysteresis_result::HysteresisReport;
use std::fmt::Write;

/// The bytes of `hysteresis.csv` (`direction,step,value,measure,state`); `state` is the
/// step's health (`healthy` or `failed`), a missing measure an empty cell.
pub fn hysteresis_csv(report: &HysteresisReport) -> Vec<u8> {
    let mut out = String::from("direction,step,value,measure,state\n");
    for p in &report.points {
        let _ = writeln!(
            out,
            "{},{},{},{},{}",
            p.direction.name(),
            p.step,
            num(p.value),
            num(p.measure.unwrap_or(f64::NAN)),
            p.state()
        );
    }
    out.into_bytes()
}
