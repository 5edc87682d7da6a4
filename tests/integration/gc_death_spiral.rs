//! The teaching scenario `gc-death-spiral.toml`: service slows down with the work the app
//! server holds, so a burst pushes it past the point where its slowed capacity is below the
//! load, and it stays there after the burst at a load it carried before; admission control
//! (a queue limit) and a concurrency limit at the edge bound what it holds and recover.

use crate::common::*;
use brink::model::RunResult;

const RATE: f64 = 250.0;
/// The burst: 600 requests from 60 s to 62 s; the run ends at 300 s.
const BEFORE: (f64, f64) = (10.0, 60.0);
/// From 30 s after the burst to the end.
const AFTER: (f64, f64) = (90.0, 300.0);

fn story(variant: Option<&str>) -> RunResult {
    run(&bundled("gc-death-spiral", variant, &[]), 0)
}

fn mean(r: &RunResult, column: &str, (from, to): (f64, f64)) -> f64 {
    mean_between(r, column, from, to)
}

#[test]
fn the_burst_tips_the_base_into_the_slow_state_and_it_stays() {
    let r = story(None);
    let good = |w| mean(&r, "request.goodput_per_s", w);
    assert!(good(BEFORE) > 0.95 * RATE, "before {}", good(BEFORE));
    assert!(mean(&r, "app.utilization", BEFORE) < 0.75);
    assert!(good(AFTER) < 0.01 * RATE, "after {}", good(AFTER));
    assert!(mean(&r, "app.utilization", AFTER) > 0.99);
    // The loop at its cap: the queue grows at the load less the capacity at 4x service,
    // 250 - 8 / (20 ms x 4) = 150 jobs/s (law: Poisson arrivals and exp service over 150 s,
    // ~1% each; tolerance 5%).
    let q = |t: f64| mean(&r, "app.queue_len", (t, t + 5.0));
    let slope = (q(270.0) - q(120.0)) / 150.0;
    assert!(
        (slope - 150.0).abs() < 0.05 * 150.0,
        "queue growth {slope} jobs/s"
    );
}

#[test]
fn each_bound_on_the_work_held_recovers_after_the_burst() {
    for v in ["queue-limit", "concurrency-limit"] {
        let r = story(Some(v));
        let good = mean(&r, "request.goodput_per_s", AFTER);
        assert!(good > 0.95 * RATE, "{v}: goodput after {good}");
        let q = mean(&r, "app.queue_len", AFTER);
        assert!(q < 5.0, "{v}: queue after {q}");
    }
}
