//! `tipping.csv` and `phase.csv`: one row per run of a sweep.

use super::*;

#[test]
fn tipping_csv_golden() {
    golden(
        "tipping.csv",
        &sweep_csv(&tipping_plan(), &tipping_plan().locate(&tipping_runs())),
    );
}

#[test]
fn phase_csv_golden() {
    golden(
        "phase.csv",
        &sweep_csv(&phase_plan(), &phase_plan().locate(&phase_runs())),
    );
    // The public columns stay first; the two named after the parameters come last.
    let csv = String::from_utf8(sweep_csv(
        &phase_plan(),
        &phase_plan().locate(&phase_runs()),
    ))
    .unwrap();
    assert_eq!(
        csv.lines().next(),
        Some(
            "variant,value,value2,branch,seed,measure,state,class.request.rate,event.slowdown.for"
        )
    );
}
