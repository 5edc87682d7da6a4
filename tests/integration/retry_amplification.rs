//! The teaching scenario `retry-amplification.toml`: three layers that each retry three
//! times. Healthy before the trigger, still failed long after it with about 27 database
//! queries per client request, and which designs recover (the description explains each).

use crate::common::*;
use brink::model::RunResult;

const RATE: f64 = 65.0;
const TRIGGER_START: f64 = 180.0;
const TRIGGER_END: f64 = 190.0;
const END: f64 = 600.0;
/// "Long after": from 3 minutes after the trigger ended to the end of the run.
const LONG_AFTER: f64 = TRIGGER_END + 180.0;

fn run_variant(variant: Option<&str>) -> RunResult {
    run(&bundled("retry-amplification", variant, &[]), 0)
}

/// Database queries (tries, refused ones included) per client request over a window.
fn db_queries_per_request(r: &RunResult, from: f64, to: f64) -> f64 {
    mean_between(r, "db.queries_per_s", from, to)
        / mean_between(r, "request.offered_per_s", from, to)
}

#[test]
fn healthy_before_the_trigger_and_failed_long_after_with_27_fold_amplification() {
    let r = run_variant(None);
    assert_healthy_then_stuck(
        &r,
        "request",
        RATE,
        (60.0, TRIGGER_START),
        (LONG_AFTER, END),
    );
    // Healthy: one database query per request.
    let healthy = db_queries_per_request(&r, 60.0, TRIGGER_START);
    assert!(healthy < 1.1, "db queries per request before {healthy}");
    // The storm: every layer's retries multiply, up to 3 x 3 x 3 = 27 per request.
    let storm = db_queries_per_request(&r, TRIGGER_END + 60.0, END);
    assert!(
        storm > 20.0 && storm < 27.5,
        "db queries per request in the storm {storm}"
    );
    // The database is saturated with work nobody waits for.
    let util = mean_between(&r, "db.utilization", LONG_AFTER, END);
    assert!(util > 0.98, "db utilization in the storm {util}");
}

#[test]
fn retry_budgets_recover() {
    let r = run_variant(Some("retry-budgets"));
    let g = mean_between(&r, "request.goodput_per_s", TRIGGER_END + 120.0, END);
    assert!(g > 0.9 * RATE, "goodput after the trigger {g}");
    let during = db_queries_per_request(&r, TRIGGER_START, TRIGGER_END + 30.0);
    assert!(
        during < 1.5,
        "db queries per request during the trigger {during}"
    );
}

#[test]
fn edge_only_retries_shrink_the_storm_but_do_not_end_it() {
    let r = run_variant(Some("edge-only-retries"));
    let g = mean_between(&r, "request.goodput_per_s", LONG_AFTER, END);
    assert!(g < 0.05 * RATE, "goodput after the trigger {g}");
    // 3 tries per request instead of 27: still 3 x 65 = 195/s against 100/s.
    let storm = db_queries_per_request(&r, TRIGGER_END + 60.0, END);
    assert!(
        storm > 2.5 && storm < 3.1,
        "db queries per request in the storm {storm}"
    );
}

#[test]
fn backoff_with_jitter_does_not_reduce_the_retries() {
    let base = run_variant(None);
    let r = run_variant(Some("backoff-jitter"));
    let g = mean_between(&r, "request.goodput_per_s", LONG_AFTER, END);
    assert!(g < 0.05 * RATE, "goodput after the trigger {g}");
    // As many database tries per request as without backoff.
    let storm = db_queries_per_request(&r, TRIGGER_END + 60.0, END);
    let storm_base = db_queries_per_request(&base, TRIGGER_END + 60.0, END);
    assert!(
        storm > 0.95 * storm_base,
        "db queries per request: backoff {storm}, base {storm_base}"
    );
    // Workers waiting out their backoff are held longer.
    let held = mean_between(&r, "mid.waiting_on_calls", LONG_AFTER, END);
    let held_base = mean_between(&base, "mid.waiting_on_calls", LONG_AFTER, END);
    assert!(
        held > 1.15 * held_base,
        "mid workers waiting on calls: backoff {held}, base {held_base}"
    );
}
