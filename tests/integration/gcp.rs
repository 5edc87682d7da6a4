//! Google Cloud 2025-06-12: the shapes the case sheet says a faithful model must show.
//! A data-triggered crash loop in every region that only the kill switch ends; after it,
//! small regions recover in minutes while the large one's restarts herd onto its policy
//! store and stay stuck until task creation is throttled; jitter, a throttle or a second
//! read path change the large region's recovery and leave the small one's alone.
//!
//! Times (from the scenario, seconds from its start at 10:40 US/Pacific): the bad policy
//! at 5 min (10:45), the red button at 45 min (11:25), the large region's throttle at
//! 2 h 05 min and its multi-regional read path at 2 h 40 min; the run ends at 3 h 15 min. Every run has a fixed seed, so a test
//! either always passes or always fails; thresholds sit well away from the measured values
//! (noted next to each), so a change of the random streams does not flip them while a
//! change of the mechanism does.

use crate::common::*;
use brink::model::RunResult;
use std::sync::OnceLock;

const NAME: &str = "gcp-service-control-2025-06-12";
const M: f64 = 60.0;
/// The bad policy reaches every region (10:45).
const LOOP_AT: f64 = 5.0 * M;
/// The red button is rolled out (10:45 + 40 min).
const SWITCH: f64 = 45.0 * M;
/// The large region's throttle on task creation.
const THROTTLE: f64 = 125.0 * M;
/// The end of the bad record's time in the tables (the event's `for`).
const RECORD_END: f64 = 65.0 * M;
/// Tasks per region.
const SMALL: f64 = 20.0;
const LARGE: f64 = 200.0;

fn replay(variant: Option<&str>) -> RunResult {
    run(&bundled(NAME, variant, &[]), 0)
}

fn baseline() -> &'static RunResult {
    static R: OnceLock<RunResult> = OnceLock::new();
    R.get_or_init(|| replay(None))
}

fn jitter() -> &'static RunResult {
    static R: OnceLock<RunResult> = OnceLock::new();
    R.get_or_init(|| replay(Some("jitter")))
}

/// (start, value) of each row of a column.
fn rows(r: &RunResult, column: &str) -> Vec<(f64, f64)> {
    let t = r.series.column("time_s").unwrap();
    let v = r
        .series
        .column(column)
        .unwrap_or_else(|| panic!("no column {column}"));
    t.into_iter().zip(v).collect()
}

/// When a region's Service Control pool recovered after `from`: the start of the first
/// row from which every row to the end of the run has at least 95% of its `tasks` in
/// service (None: not by the end).
fn recovered(r: &RunResult, pool: &str, tasks: f64, from: f64) -> Option<f64> {
    let rows = rows(r, &format!("{pool}.in_service"));
    let mut since = None;
    for (t, v) in rows.into_iter().filter(|(t, _)| *t >= from) {
        if v >= 0.95 * tasks {
            since.get_or_insert(t);
        } else {
            since = None;
        }
    }
    since
}

/// The most tasks of `pool` in service in any row starting in [from, to).
fn most_in_service(r: &RunResult, pool: &str, from: f64, to: f64) -> f64 {
    rows(r, &format!("{pool}.in_service"))
        .into_iter()
        .filter(|(t, _)| *t >= from && *t < to)
        .map(|(_, v)| v)
        .fold(0.0, f64::max)
}

/// A class's goodput over its offered requests in [from, to).
fn ratio(r: &RunResult, class: &str, from: f64, to: f64) -> f64 {
    mean_between(r, &format!("{class}.goodput_per_s"), from, to)
        / mean_between(r, &format!("{class}.offered_per_s"), from, to)
}

/// Recovery times (seconds after the red button) of the small and the large region.
fn recoveries(r: &RunResult) -> (f64, f64) {
    let after = |pool, tasks| {
        recovered(r, pool, tasks, SWITCH).unwrap_or_else(|| panic!("{pool} never recovered"))
            - SWITCH
    };
    (after("sc-small", SMALL), after("sc-large", LARGE))
}

#[test]
fn no_region_recovers_before_the_kill_switch() {
    // The data is global: from a minute into the loop to the red button no task of either
    // region serves (measured: 0), and API requests fail in both.
    let r = baseline();
    assert!(ratio(r, "api-large", 0.0, LOOP_AT) > 0.99, "healthy before");
    for (pool, class) in [("sc-small", "api-small"), ("sc-large", "api-large")] {
        let most = most_in_service(r, pool, LOOP_AT + M, SWITCH);
        assert!(most < 0.5, "{pool}: {most} tasks in service in the loop");
        let ok = ratio(r, class, LOOP_AT + M, SWITCH);
        assert!(
            ok < 0.01,
            "{class}: {ok} of the requests succeeded in the loop"
        );
    }
}

#[test]
fn after_the_switch_the_small_region_recovers_in_minutes_and_the_large_stays_stuck() {
    let r = baseline();
    let small = recovered(r, "sc-small", SMALL, SWITCH).expect("the small region recovers");
    // Measured: within the red button's 30 s row.
    assert!(
        small - SWITCH <= 5.0 * M,
        "small region back {} s after the switch",
        small - SWITCH
    );
    // The large one: no task in service from the red button to the throttle, 80 minutes
    // later (measured: 0), and API requests fail throughout.
    let most = most_in_service(r, "sc-large", SWITCH, THROTTLE);
    assert!(
        most < 0.05 * LARGE,
        "{most} large-region tasks in service before the throttle"
    );
    assert!(ratio(r, "api-large", SWITCH, THROTTLE) < 0.01);
    assert!(ratio(r, "api-small", SWITCH + 5.0 * M, THROTTLE) > 0.99);
    let large = recovered(r, "sc-large", LARGE, SWITCH).expect("the large region recovers");
    assert!(
        large > THROTTLE,
        "the large region recovered at {large} s, before the throttle"
    );
}

#[test]
fn the_large_region_is_resolved_near_2h40m_after_the_bad_policy() {
    // Published: "up to ~2 h 40 min" to fully resolve us-central1, not said from when; read
    // here from the bad policy (10:45), which ends near 13:25, close to the mini report's
    // 13:49 for the whole incident. Within 10 minutes (6%): the published figure is a
    // rounded "up to", and the throttle's and read path's times are chosen, not published.
    // Measured: 2 h 37.5 min.
    let large = recovered(baseline(), "sc-large", LARGE, SWITCH).unwrap() - LOOP_AT;
    assert!(
        (large - 160.0 * M).abs() <= 10.0 * M,
        "the large region resolved {} min after the bad policy",
        large / M
    );
}

#[test]
fn jitter_recovers_the_large_region_about_as_fast_as_the_small_one() {
    // Jittered exponential backoff thins the restarts during the loop (delays grow to 3
    // min), so the table is not flooded when the red button comes: both regions are back
    // within a backoff cap of it (measured: 1.5 and 2 min), where without jitter the large
    // region took almost two hours (measured: 117 min).
    let (small, large) = recoveries(jitter());
    assert!(
        large <= 10.0 * M,
        "large region back {large} s after the switch"
    );
    assert!(
        (large - small).abs() <= 5.0 * M,
        "small {small} s, large {large} s"
    );
    let (_, large_base) = recoveries(baseline());
    assert!(
        large_base >= 6.0 * large.max(5.0 * M),
        "without jitter: {large_base} s"
    );
}

#[test]
fn jitter_leaves_the_small_regions_recovery_about_the_same() {
    // The small region's table keeps up either way: its recovery moves by at most a
    // backoff cap (3 min; measured: 1 min later with jitter).
    let (with, _) = recoveries(jitter());
    let (without, _) = recoveries(baseline());
    assert!(
        (with - without).abs() <= 3.0 * M,
        "small region: {without} s, with jitter {with} s"
    );
}

#[test]
fn a_throttle_or_a_second_read_path_from_the_start_recovers_the_large_region_at_once() {
    // 30 startups at a time keep the table's queue short; three times the reads keep up with
    // the whole herd (measured: both regions within a minute of the red button).
    for variant in ["throttle", "read-path"] {
        let (small, large) = recoveries(&replay(Some(variant)));
        assert!(
            small <= 5.0 * M && large <= 10.0 * M,
            "{variant}: small {small} s, large {large} s"
        );
    }
}

#[test]
fn with_the_feature_flag_off_or_incremental_propagation_the_large_region_never_goes_down() {
    // Flag off by default: nothing crashes anywhere. Incremental propagation: the policy
    // reaches the small region only, which loops until the red button.
    let flag = replay(Some("feature-flag"));
    let inc = replay(Some("incremental"));
    for (r, what) in [(&flag, "feature-flag"), (&inc, "incremental")] {
        let fewest = rows(r, "sc-large.in_service")
            .into_iter()
            .map(|(_, v)| v)
            .fold(f64::INFINITY, f64::min);
        assert_eq!(fewest, LARGE, "{what}: large region down to {fewest} tasks");
        assert!(ratio(r, "api-large", 0.0, 195.0 * M) > 0.99, "{what}");
    }
    assert!(ratio(&flag, "api-small", 0.0, 195.0 * M) > 0.99);
    assert!(most_in_service(&inc, "sc-small", LOOP_AT + M, SWITCH) < 0.5);
}

#[test]
fn failing_open_keeps_api_requests_succeeding_while_service_control_is_down() {
    // The front end lets a request through unchecked when its check fails: the tasks are
    // down as in the replay, the requests are not.
    let r = replay(Some("fail-open"));
    assert!(most_in_service(&r, "sc-large", LOOP_AT + M, THROTTLE) < 0.05 * LARGE);
    for class in ["api-small", "api-large"] {
        let ok = ratio(&r, class, LOOP_AT, THROTTLE);
        assert!(ok > 0.99, "{class}: {ok} of the requests succeeded");
    }
}

#[test]
fn without_a_response_the_large_region_stays_down_to_the_end() {
    // No red button: the loop lasts while the bad record is in the tables (1 h); then the
    // small region comes back and the large one, held by its own herd, never does.
    let r = replay(Some("no-response"));
    assert!(most_in_service(&r, "sc-small", LOOP_AT + M, RECORD_END) < 0.5);
    let small = recovered(&r, "sc-small", SMALL, SWITCH).expect("small region back");
    assert!(
        (RECORD_END..=RECORD_END + 5.0 * M).contains(&small),
        "small back at {small} s"
    );
    assert!(most_in_service(&r, "sc-large", RECORD_END, 195.0 * M) < 0.05 * LARGE);
    assert!(recovered(&r, "sc-large", LARGE, SWITCH).is_none());
}
