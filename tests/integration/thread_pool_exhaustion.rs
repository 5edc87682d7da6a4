//! The teaching scenario `thread-pool-exhaustion.toml`: a payments slowdown makes checkout
//! jobs hold every worker of the shared API pool, so the unrelated browse endpoint goes
//! down too and, through its clients' retries, stays down after payments recovers; which
//! designs keep browse healthy during and after the trigger (the description explains each).

use crate::common::*;
use brink::model::RunResult;

const BROWSE: f64 = 250.0;
const CHECKOUT: f64 = 30.0;
/// The payments slowdown: 120 s to 180 s; the run ends at 480 s.
const TRIGGER: (f64, f64) = (120.0, 180.0);
const BEFORE: (f64, f64) = (30.0, 120.0);
/// From 10 s into the trigger to its end.
const DURING: (f64, f64) = (TRIGGER.0 + 10.0, TRIGGER.1);
/// From 2 minutes after the trigger to the end.
const LONG_AFTER: (f64, f64) = (TRIGGER.1 + 120.0, 480.0);
/// The run index the story tests use (1 was checked as well while writing them).
const RUN: u64 = 0;

fn story(variant: Option<&str>, sets: &[&str]) -> RunResult {
    run(&bundled("thread-pool-exhaustion", variant, sets), RUN)
}

fn mean(r: &RunResult, column: &str, (from, to): (f64, f64)) -> f64 {
    mean_between(r, column, from, to)
}

#[test]
fn healthy_before_browse_down_during_and_long_after_the_payments_slowdown() {
    let r = story(None, &[]);
    let browse = |w| mean(&r, "browse.goodput_per_s", w);
    let checkout = |w| mean(&r, "checkout.goodput_per_s", w);
    assert!(
        browse(BEFORE) > 0.95 * BROWSE,
        "browse before {}",
        browse(BEFORE)
    );
    assert!(
        checkout(BEFORE) > 0.9 * CHECKOUT,
        "checkout before {}",
        checkout(BEFORE)
    );
    assert!(
        mean(&r, "api.utilization", BEFORE) < 0.75,
        "the API is not near saturation before the trigger"
    );
    // During: checkout jobs hold the API's workers waiting on payments, and browse,
    // whose catalog is fine, goes down with it.
    assert!(
        browse(DURING) < 0.05 * BROWSE,
        "browse during {}",
        browse(DURING)
    );
    let held = mean(&r, "api.waiting_on_calls", DURING);
    assert!(
        held > 15.0,
        "workers held on calls during the trigger {held}"
    );
    assert!(mean(&r, "catalog.utilization", DURING) < 0.2);
    assert!(
        mean(&r, "payments.utilization", DURING) < 0.5,
        "payments is not itself the bottleneck"
    );
    // Long after: browse is still down, its clients retrying (3 attempts per request)
    // into a queue full of work nobody waits for; checkout, whose clients are patient,
    // is served again.
    assert!(
        browse(LONG_AFTER) < 0.05 * BROWSE,
        "browse 2+ minutes after the trigger {}",
        browse(LONG_AFTER)
    );
    let attempts = mean(&r, "browse.attempts_per_s", LONG_AFTER);
    assert!(
        attempts > 2.5 * BROWSE,
        "browse attempts in the storm {attempts}"
    );
    assert!(mean(&r, "api.queue_len", LONG_AFTER) > 900.0);
    assert!(
        checkout(LONG_AFTER) > 0.5 * CHECKOUT,
        "checkout after the trigger {}",
        checkout(LONG_AFTER)
    );
}

#[test]
fn bulkhead_and_breaker_keep_browse_healthy_during_and_after() {
    for v in ["bulkhead", "breaker"] {
        let r = story(Some(v), &[]);
        for (when, w) in [("during", DURING), ("long after", LONG_AFTER)] {
            let g = mean(&r, "browse.goodput_per_s", w);
            assert!(g > 0.9 * BROWSE, "{v}: browse {when} the trigger {g}");
        }
        // Checkout itself fails fast while payments is slow, and is back after.
        let during = mean(&r, "checkout.goodput_per_s", DURING);
        let after = mean(&r, "checkout.goodput_per_s", LONG_AFTER);
        assert!(during < 0.2 * CHECKOUT, "{v}: checkout during {during}");
        assert!(after > 0.9 * CHECKOUT, "{v}: checkout after {after}");
    }
    // The breaker is open most of the slow minute, and closed after.
    let r = story(Some("breaker"), &[]);
    let open = mean(&r, "api.payments.breaker_open", DURING);
    assert!(open > 0.5, "breaker open share during the trigger {open}");
    assert_eq!(mean(&r, "api.payments.breaker_open", LONG_AFTER), 0.0);
}

#[test]
fn a_breaker_without_a_short_timeout_never_opens() {
    // Slow calls are not failures until a timeout says so: with the base file's 10 s call
    // timeout the breaker sees no failure and the run is the base's.
    let r = story(Some("breaker"), &["pool.api.calls.1.timeout=10s"]);
    assert_eq!(mean(&r, "api.payments.breaker_open", DURING), 0.0);
    let g = mean(&r, "browse.goodput_per_s", LONG_AFTER);
    assert!(g < 0.05 * BROWSE, "browse after the trigger {g}");
    let base = story(None, &[]);
    assert_eq!(r.summary.classes, base.summary.classes);
}

#[test]
fn a_short_timeout_alone_does_not_keep_browse_up() {
    // 30 checkouts/s x 0.25 s plus browse's 8 workers is the whole pool.
    let r = story(Some("short-timeout"), &[]);
    let during = mean(&r, "browse.goodput_per_s", DURING);
    let after = mean(&r, "browse.goodput_per_s", LONG_AFTER);
    assert!(during < 0.1 * BROWSE, "browse during {during}");
    assert!(after < 0.05 * BROWSE, "browse after {after}");
}

#[test]
fn cancel_expired_ends_the_storm_after_the_trigger_but_not_the_exhaustion() {
    let r = story(Some("cancel-expired"), &[]);
    let during = mean(&r, "browse.goodput_per_s", DURING);
    assert!(during < 0.1 * BROWSE, "browse during {during}");
    // Recovery comes after a random while (up to ~2 minutes): judge the last 2 minutes.
    let after = mean(&r, "browse.goodput_per_s", (360.0, 480.0));
    assert!(after > 0.9 * BROWSE, "browse after {after}");
}
