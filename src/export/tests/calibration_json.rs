//! `calibration.json`: a comparison with a figure without a value and a figure observed at
//! 0, with and without a fit (the table pinned beside it).

use super::*;
use crate::report::calibration::{
    CalibrationReport, FitReport, FittedKey, assessment, calibration_table, compare,
};

fn report(fit: bool) -> CalibrationReport {
    let figures = vec![
        compare(
            "class.api.throughput".into(),
            "1/s",
            600.0,
            &[598.0, 603.5, 590.25],
            0.05,
        ),
        compare(
            "class.api.error_ratio".into(),
            "ratio",
            0.0,
            &[0.0, 0.001, 0.0],
            0.05,
        ),
        compare(
            "class.api.p99".into(),
            "s",
            0.03,
            &[0.0412, 0.0398, 0.0405],
            0.05,
        ),
        compare(
            "pool.db.utilisation".into(),
            "ratio",
            0.7,
            &[0.69, 0.71, 0.705],
            0.05,
        ),
        compare(
            "cache.sessions.hit_ratio".into(),
            "ratio",
            0.95,
            &[0.93, f64::NAN, 0.94],
            0.05,
        ),
    ];
    let a = assessment(figures, 0.05);
    CalibrationReport {
        scenario: "golden".into(),
        variant: None,
        observed_file: "observed.toml".into(),
        observed_sha256: crate::scenario::provenance::sha256_hex(b"observed"),
        load: vec!["class.api.rate=600".into()],
        window_s: [120.0, 600.0],
        seeds: 3,
        tolerance: 0.05,
        fit: fit.then(|| FitReport {
            keys: vec![FittedKey {
                key: "pool.db.service.mean".into(),
                unit: "duration",
                start: 0.008,
                fitted: 0.0061234,
                range: [0.002, 0.032],
                at_range_end: false,
                refits: vec![0.0060987, 0.0062001],
                spread: [0.0060987, 0.0062001],
            }],
            evaluations: 37,
            objective_before: 0.25,
            objective_after: 0.0012,
            before: a.clone(),
        }),
        assessment: a,
    }
}

#[test]
fn calibration_json() {
    golden(
        "calibration.json",
        &crate::export::calibration_json(&report(false), &golden_provenance()),
    );
    golden(
        "calibration-fit.json",
        &crate::export::calibration_json(&report(true), &golden_provenance()),
    );
    golden(
        "calibration-fit.txt",
        calibration_table(&report(true)).as_bytes(),
    );
}
