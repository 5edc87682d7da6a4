//! `tipping.json`: a tipping sweep's report, and the sweep writer's files.

use super::*;

#[test]
fn tipping_json_golden() {
    golden("tipping.json", &tipping_json(&tipping_report()));
}

/// The writer puts the exporters' bytes on disk unchanged.
#[test]
fn sweep_files_are_the_exported_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let plan = tipping_plan();
    let runs = plan.locate(&tipping_runs());
    let r = crate::experiment::sweep::write_outputs(dir.path(), &plan, &runs).unwrap();
    assert_eq!(r, tipping_report());
    let read = |f: &str| std::fs::read(dir.path().join(f)).unwrap();
    assert_eq!(read("tipping.csv"), sweep_csv(&plan, &runs));
    assert_eq!(read("tipping.json"), tipping_json(&r));
}
