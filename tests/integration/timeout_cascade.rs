//! The teaching scenario `timeout-cascade.toml`: each layer's timeout is longer than its
//! caller's and each retries, so after a db slowdown the layers below keep working (and
//! retrying) for clients that have left, and the db stays saturated with wasted work;
//! propagating the caller's deadline, or timeouts that shrink downward with the work of
//! callers that gave up dropped, recover.

use crate::common::*;
use brink::model::RunResult;

const RATE: f64 = 200.0;
/// The db slowdown: 60 s to 75 s; the run ends at 300 s.
const BEFORE: (f64, f64) = (10.0, 60.0);
/// From 45 s after the trigger to the end.
const AFTER: (f64, f64) = (120.0, 300.0);

fn story(variant: Option<&str>, sets: &[&str]) -> RunResult {
    run(&bundled("timeout-cascade", variant, sets), 0)
}

fn mean(r: &RunResult, column: &str, w: (f64, f64)) -> f64 {
    mean_between(r, column, w.0, w.1)
}

#[test]
fn the_base_stays_down_with_the_db_saturated_by_work_for_clients_that_left() {
    let r = story(None, &[]);
    let good = |w| mean(&r, "request.goodput_per_s", w);
    assert!(good(BEFORE) > 0.95 * RATE, "before {}", good(BEFORE));
    assert!(mean(&r, "db.utilization", BEFORE) < 0.5);
    assert!(good(AFTER) < 0.01 * RATE, "after {}", good(AFTER));
    assert!(mean(&r, "db.utilization", AFTER) > 0.99);
    // The loop: 2 x 2 x 2 tries per request reach the db (~1600/s offered, 500/s served),
    // nearly all of it for clients that have given up.
    let offered = mean(&r, "db.queries_per_s", AFTER);
    assert!(offered > 5.0 * RATE, "db queries/s after {offered}");
    let db = &r.summary.pools["db"];
    let late = db.started_late.unwrap();
    assert!(
        late as f64 > 0.8 * db.served as f64,
        "{late} of {} db jobs started late",
        db.served
    );
}

#[test]
fn propagation_and_shrinking_timeouts_recover() {
    for v in ["propagate", "shrinking-timeouts"] {
        let r = story(Some(v), &[]);
        let good = mean(&r, "request.goodput_per_s", AFTER);
        assert!(good > 0.95 * RATE, "{v}: goodput after {good}");
        assert!(mean(&r, "db.utilization", AFTER) < 0.5, "{v}");
        // What they drop is counted.
        assert!(r.summary.pools["db"].expired > 0, "{v}");
    }
    // Shorter timeouts without dropping abandoned work below: still down.
    let r = story(
        Some("shrinking-timeouts"),
        &["pool.db.cancel_expired=false"],
    );
    let good = mean(&r, "request.goodput_per_s", AFTER);
    assert!(good < 0.01 * RATE, "shrinking timeouts alone: {good}");
}
