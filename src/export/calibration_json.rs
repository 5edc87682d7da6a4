//! `calibration.json`: each observed figure beside the simulated one (mean over seeds, its
//! 95% interval, the relative error), the mean absolute percentage error, the bias, the
//! verdict, the fit when there was one, and what produced it.

use crate::report::calibration::CalibrationReport;
use crate::scenario::Provenance;
use serde::Serialize;

/// The bytes of `calibration.json`: the report's fields, then `produced_by`.
pub fn calibration_json(report: &CalibrationReport, produced_by: &Provenance) -> Vec<u8> {
    #[derive(Serialize)]
    struct File<'a> {
        #[serde(flatten)]
        report: &'a CalibrationReport,
        produced_by: &'a Provenance,
    }
    super::pretty_json(&File {
        report,
        produced_by,
    })
}
