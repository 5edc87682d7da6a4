//! Slack 2022-02-22: the shapes the case sheet says a faithful model must show.
//!
//! Times (from the scenario): the rollout runs from 55m to about 1h00m30s; interventions
//! at 1h02m (pause), 1h15m (throttle), 1h25m (too-far raise), 1h35m (cut), 1h45m (query
//! fix), then stepped raises to normal at 2h25m; the run ends at 3h.

use crate::common::*;
use brink::model::RunResult;

const M: f64 = 60.0;

fn slack(variant: Option<&str>) -> RunResult {
    run(&bundled("slack-2022-02-22", variant, &[]), 0)
}

fn ratio(r: &RunResult, class: &str, from_min: f64, to_min: f64) -> f64 {
    let good = mean_between(
        r,
        &format!("{class}.goodput_per_s"),
        from_min * M,
        to_min * M,
    );
    let offered = mean_between(
        r,
        &format!("{class}.offered_per_s"),
        from_min * M,
        to_min * M,
    );
    good / offered
}

fn hit(r: &RunResult, from_min: f64, to_min: f64) -> f64 {
    mean_between(r, "memcached.hit_ratio", from_min * M, to_min * M)
}

#[test]
fn healthy_at_peak_without_the_trigger() {
    let r = slack(Some("no-trigger"));
    assert!(ratio(&r, "boot", 45.0, 180.0) >= 0.95);
    assert!(ratio(&r, "booted", 45.0, 180.0) >= 0.95);
    assert!(hit(&r, 45.0, 180.0) >= 0.90);
}

#[test]
fn rollout_collapses_it_and_without_response_it_stays_down() {
    let r = slack(Some("no-response"));
    assert!(
        ratio(&r, "boot", 40.0, 54.0) >= 0.95,
        "healthy before the rollout"
    );
    assert!(
        ratio(&r, "boot", 62.0, 72.0) < 0.5,
        "boots collapse after the rollout"
    );
    assert!(hit(&r, 62.0, 72.0) < 0.9, "hit ratio collapses");
    // The restarts ended at about 61 min; 30+ simulated minutes later it is still down.
    assert!(
        ratio(&r, "boot", 95.0, 180.0) < 0.5,
        "still failed long after the trigger"
    );
    assert!(
        ratio(&r, "booted", 95.0, 180.0) < 0.1,
        "booted users still starved"
    );
    assert!(hit(&r, 95.0, 180.0) < 0.9);
}

#[test]
fn the_response_replays_the_postmortem() {
    let r = slack(None);
    // Pausing the restarts (1h02m) makes no difference.
    assert!(
        ratio(&r, "booted", 64.0, 74.0) < 0.1,
        "still down after the pause"
    );
    // Throttling boots (1h15m) restores booted users.
    assert!(
        ratio(&r, "booted", 77.0, 84.0) > 0.95,
        "throttle restores booted goodput"
    );
    // Raising the limit too far (1h25m) relapses.
    assert!(
        ratio(&r, "booted", 87.0, 94.0) < 0.2,
        "too-fast raise relapses"
    );
    // The query fix and stepped raises recover fully.
    assert!(
        ratio(&r, "boot", 150.0, 180.0) > 0.95,
        "boots fully recovered"
    );
    assert!(ratio(&r, "booted", 150.0, 180.0) > 0.95);
    assert!(hit(&r, 150.0, 180.0) > 0.95);
}

#[test]
fn a_slower_control_plane_or_off_peak_rollout_stays_healthy() {
    for v in ["slow-control-plane", "off-peak"] {
        let r = slack(Some(v));
        assert!(ratio(&r, "boot", 56.0, 180.0) > 0.95, "{v}: boots");
        assert!(ratio(&r, "booted", 56.0, 180.0) > 0.95, "{v}: booted");
    }
}

#[test]
fn design_fixes_survive_the_rollout_and_a_partition_sinks_it() {
    for v in ["fix-query", "replica-reads", "shard-by-channel"] {
        let r = slack(Some(v));
        assert!(ratio(&r, "boot", 56.0, 180.0) > 0.95, "{v}: boots");
        assert!(ratio(&r, "booted", 56.0, 180.0) > 0.95, "{v}: booted");
    }
    let r = slack(Some("partition"));
    assert!(
        ratio(&r, "booted", 70.0, 180.0) < 0.1,
        "the partition tips it too"
    );
}
