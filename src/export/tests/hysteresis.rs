//! `hysteresis.csv` and `hysteresis.json`: a ramp up and back down, and the files written.

use super::*;

/// A ramp over 10, 55.5, 100 and back, healthy above 0.8: collapses at 100 going up,
/// recovers at 10 going down; one step with no measure.
pub(super) fn hysteresis_report() -> crate::report::hysteresis_result::HysteresisReport {
    use crate::report::hysteresis_result::{HysteresisReport, points};
    let up = [(10.0, Some(1.0)), (55.5, Some(0.95)), (100.0, Some(0.1))];
    let down = [(100.0, None), (55.5, Some(1.0 / 3.0)), (10.0, Some(0.99))];
    let mut r = HysteresisReport {
        scenario: "golden".into(),
        title: "Golden \"loop\"".into(),
        variant: Some("lifo".into()),
        vary: "class.request.rate".into(),
        label: Some("offered load".into()),
        unit: Some("requests/s".into()),
        measure: "goodput_ratio.request".into(),
        healthy_above: Some(0.8),
        healthy_below: None,
        steps: 3,
        dwell_s: 300.0,
        settle_s: 150.5,
        operating_point: 70.0,
        collapse_point: None,
        recovery_point: None,
        bistable: None,
        brink_version: "0.0.0-golden".into(),
        seed: 11,
        overrides: vec!["hysteresis.steps=3".into(), "pool.server.workers=4".into()],
        points: points(&up, &down, Health::Above(0.8)),
        produced_by: golden_provenance(),
    };
    r.detect();
    r
}

#[test]
fn hysteresis_csv_golden() {
    golden("hysteresis.csv", &hysteresis_csv(&hysteresis_report()));
}

#[test]
fn hysteresis_json_golden() {
    let r = hysteresis_report();
    assert_eq!(
        (r.collapse_point, r.recovery_point, r.bistable),
        (Some(100.0), Some(10.0), Some([10.0, 100.0]))
    );
    golden("hysteresis.json", &hysteresis_json(&r));
}

/// The writer puts the exporters' bytes on disk unchanged, with both pictures.
#[test]
fn hysteresis_files_are_the_exported_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let r = hysteresis_report();
    crate::experiment::hysteresis::write_outputs(dir.path(), &r).unwrap();
    let read = |f: &str| std::fs::read(dir.path().join(f)).unwrap();
    assert_eq!(read("hysteresis.csv"), hysteresis_csv(&r));
    assert_eq!(read("hysteresis.json"), hysteresis_json(&r));
    assert!(read("hysteresis.svg").starts_with(b"<svg"));
    assert!(read("hysteresis.png").starts_with(b"\x89PNG"));
}
