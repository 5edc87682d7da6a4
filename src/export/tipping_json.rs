//! `tipping.json`: per variant the operating, tipping and overload points, the headroom and
//! every cell's spread over seeds and region.

use crate::report::sweep_result::SweepReport;

/// The bytes of `tipping.json`.
pub fn tipping_json(report: &SweepReport) -> Vec<u8> {
    super::pretty_json(report)
}
