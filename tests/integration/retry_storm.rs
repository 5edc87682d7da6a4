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

/// `brink run` says the verdict on the sweep's measuring window with its cause: the storm
/// is stuck on expired work, `lifo` recovers, and a design that refuses load at its rate
/// limit is degraded, not stuck (issue 21, item 4).
#[test]
fn a_run_prints_its_verdict_with_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("limited.toml"), crate::serve::RATE_LIMITED).unwrap();
    let said = |args: &[&str]| {
        let o = brink(["run"]).args(args).arg("--out").arg(dir.path()).run();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let err = said(&["retry-storm"]);
    assert!(
        err.contains("retry-storm: after the trigger: stuck: ")
            && err.contains("% timed out, queue full of expired work\n"),
        "{err}"
    );
    let err = said(&["retry-storm", "--variant", "lifo"]);
    assert!(
        err.contains("retry-storm (lifo): after the trigger: healthy\n"),
        "{err}"
    );
    let limited = dir.path().join("limited.toml");
    let err = said(&[limited.to_str().unwrap()]);
    assert!(
        err.contains("after the trigger: degraded: shedding 4")
            && err.contains("% at the rate limit\n"),
        "{err}"
    );
}
