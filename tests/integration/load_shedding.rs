//! The teaching scenario `load-shedding.toml`: a retry storm against one server, with
//! FIFO (the base: healthy before the trigger, still failed long after it) and with the
//! server shedding load by CoDel, CoDel with adaptive LIFO, or queue watermarks (the
//! description explains each).

use crate::common::*;
use brink::model::RunResult;

const RATE: f64 = 280.0;
const TRIGGER_START: f64 = 180.0;
const TRIGGER_END: f64 = 190.0;
const END: f64 = 600.0;
/// "Long after": from 3 minutes after the trigger ended to the end of the run.
const LONG_AFTER: f64 = TRIGGER_END + 180.0;

fn run_variant(variant: Option<&str>) -> RunResult {
    run(&bundled("load-shedding", variant, &[]), 0)
}

#[test]
fn fifo_is_healthy_before_the_trigger_and_failed_long_after() {
    let r = run_variant(None);
    assert_healthy_then_stuck(
        &r,
        "request",
        RATE,
        (60.0, TRIGGER_START),
        (LONG_AFTER, END),
    );
    // The storm: attempts near 4 per request, the queue full of stale work.
    let attempts = mean_between(&r, "request.attempts_per_s", LONG_AFTER, END);
    assert!(attempts > 3.5 * RATE, "attempts in the storm {attempts}");
    let queue = mean_between(&r, "server.queue_len", LONG_AFTER, END);
    assert!(queue > 900.0, "queue in the storm {queue}");
}

#[test]
fn codel_and_codel_with_adaptive_lifo_survive_and_serve_through_the_slowdown() {
    for v in ["codel", "codel-lifo"] {
        let r = run_variant(Some(v));
        let before = mean_between(&r, "request.goodput_per_s", 60.0, TRIGGER_START);
        let during = mean_between(&r, "request.goodput_per_s", TRIGGER_START, TRIGGER_END);
        let after = mean_between(&r, "request.goodput_per_s", TRIGGER_END + 30.0, END);
        assert!(before > 0.95 * RATE * 0.95, "{v}: goodput before {before}");
        // The slowed server's whole capacity (100/s) is served in time.
        assert!(during > 80.0, "{v}: goodput during the slowdown {during}");
        assert!(
            after > 0.95 * RATE,
            "{v}: goodput after the slowdown {after}"
        );
        let shed = mean_between(&r, "server.shed_per_s", TRIGGER_START, TRIGGER_END);
        assert!(shed > 300.0, "{v}: shed during the slowdown {shed}/s");
    }
}

#[test]
fn adaptive_lifo_answers_fresher_work_during_the_slowdown() {
    let p99 = |v| {
        let r = run_variant(Some(v));
        mean_between(&r, "request.latency_p99_s", TRIGGER_START, TRIGGER_END)
    };
    let (codel, lifo) = (p99("codel"), p99("codel-lifo"));
    assert!(
        lifo < 0.9 * codel,
        "request p99 during the slowdown: codel-lifo {lifo}, codel {codel}"
    );
}

#[test]
fn watermarks_recover_after_the_slowdown_but_answer_nothing_in_time_during_it() {
    let r = run_variant(Some("watermarks"));
    let during = mean_between(&r, "request.goodput_per_s", TRIGGER_START, TRIGGER_END);
    let after = mean_between(&r, "request.goodput_per_s", TRIGGER_END + 30.0, END);
    // 40 queued are 400 ms of work at a quarter speed: beyond the 200 ms deadline.
    assert!(during < 25.0, "goodput during the slowdown {during}");
    assert!(after > 0.95 * RATE, "goodput after the slowdown {after}");
}
