//! The teaching scenario `retry-storm.toml`: healthy before the trigger, still failed long
//! after it, and which designs recover (the scenario's description explains each).

use crate::common::*;

const TRIGGER_END: f64 = 320.0;

fn goodput(variant: Option<&str>, from: f64, to: f64) -> f64 {
    let r = run(&bundled("retry-storm", variant, &[]), 0);
    mean_between(&r, "request.goodput_per_s", from, to)
}

#[test]
fn healthy_before_the_trigger_and_failed_long_after() {
    let r = run(&bundled("retry-storm", None, &[]), 0);
    assert_healthy_then_stuck(
        &r,
        "request",
        70.0,
        (60.0, 300.0),
        (TRIGGER_END + 600.0, 1800.0),
    );
    let attempts_after = mean_between(&r, "request.attempts_per_s", TRIGGER_END + 600.0, 1800.0);
    // The storm: attempts near 4 per request.
    assert!(
        attempts_after > 3.0 * 70.0,
        "attempts in the storm {attempts_after}"
    );
}

#[test]
fn lifo_retry_budget_and_no_retries_recover() {
    for v in ["lifo", "retry-budget", "no-retries"] {
        let g = goodput(Some(v), TRIGGER_END + 300.0, 1800.0);
        assert!(g > 0.9 * 70.0, "{v}: goodput after the trigger {g}");
    }
}

#[test]
fn cancel_expired_with_fifo_and_backoff_alone_do_not_recover() {
    // Documented in the scenario: FIFO serves work just under its deadline, too late;
    // backoff delays retries but does not reduce their number.
    for v in ["cancel-expired", "backoff-jitter"] {
        let g = goodput(Some(v), TRIGGER_END + 300.0, 1800.0);
        assert!(g < 0.25 * 70.0, "{v}: goodput after the trigger {g}");
    }
}
