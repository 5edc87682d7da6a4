//! Issue 21, item 2: recovery time, not a settle window.
//!
//! One pool of capacity C = 10 workers / 100 ms (constant) = 100 jobs/s, an open class at
//! rate λ, no timeouts and no retries. A x4 slowdown for D = 200 s cuts the capacity to
//! C/4 = 25/s, so a backlog of N = (λ - C/4) x D stale jobs builds up; after it the pool
//! drains the backlog at the net rate μ = C - λ, in N/μ seconds. A job's latency is its wait
//! behind the backlog, so the rows' p99 latency is healthy (below 0.5 s) again once the
//! backlog is down to ~0.5 s of work (C x 0.5 = 50 jobs): the recovery time is N/μ less
//! about 1 s of the ~100 s, well inside the 10% the test allows.
//!
//! With `recover_within` shorter than N/μ every triggered run recovers late: the value is
//! `slow_recovery` (not `metastable`: each recovers before the end of its run). With
//! `recover_within` longer it is `stable`. Either way each point's median recovery time is
//! N/μ within 10%.

use crate::tipping::tipping;
use serde_json::Value;

/// C = 100/s; the class at 48/s or 52/s; a x4 slowdown from 10 s to 210 s.
const DRAIN: &str = r#"
title = "A backlog of stale jobs drains at capacity minus arrivals"
duration = "900s"

[metrics]
step = "1s"

[class.request]
rate = 50
steps = [{ query = "server" }]

[pool.server]
workers = 10
service = { law = "const", mean = "100ms" }
queue_limit = 1000000

[event.slowdown]
kind = "slowdown"
pool = "server"
at = "10s"
for = "200s"
factor = 4

[tipping]
vary = "class.request.rate"
from = 48
to = 52
points = 2
method = "grid"
seeds = 3
trigger = ["slowdown"]
settle = "5s"
measure = "request.latency_p99_s"
healthy_below = 0.5
"#;

const C: f64 = 100.0;
const SLOW_CAPACITY: f64 = C / 4.0;
const D: f64 = 200.0;

/// N / μ at arrival rate `rate`: the backlog the slowdown leaves over the net drain rate.
fn drain_s(rate: f64) -> f64 {
    (rate - SLOW_CAPACITY) * D / (C - rate)
}

fn sweep(recover_within: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("drain.toml");
    std::fs::write(
        &file,
        format!("{DRAIN}recover_within = \"{recover_within}\"\n"),
    )
    .unwrap();
    tipping(&file, &dir.path().join("out"), &["--jobs", "2"])
}

/// Each point's median recovery time is N/μ within 10%, every triggered run recovered by
/// the end, and the point's state is `want`.
fn check(r: &Value, want: &str) {
    let points = r["variants"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{r}");
    for p in points {
        let rate = p["value"].as_f64().unwrap();
        let expect = drain_s(rate);
        let p50 = p["recovery_s"]["p50"]
            .as_f64()
            .unwrap_or_else(|| panic!("no recovery_s.p50 at rate {rate}: {p}"));
        assert!(
            (p50 - expect).abs() <= 0.1 * expect,
            "at rate {rate}: recovery {p50} s, N/μ = {expect} s"
        );
        assert_eq!(p["recovered_share"], 1.0, "at rate {rate}: {p}");
        assert_eq!(p["state"], want, "at rate {rate}: {p}");
    }
}

/// N/μ is 88.5 s at 48/s and 112.5 s at 52/s: 40 s is too short a recovery, 300 s enough.
#[test]
fn a_draining_backlog_recovers_slowly_within_a_short_bound_and_stably_within_a_long_one() {
    let slow = sweep("40s");
    assert_eq!(slow["recover_within_s"], 40.0);
    check(&slow, "slow_recovery");
    assert_eq!(
        slow["variants"][0]["points"][0]["collapse_probability"],
        1.0
    );
    let fine = sweep("300s");
    check(&fine, "stable");
    assert_eq!(
        fine["variants"][0]["points"][0]["collapse_probability"],
        0.0
    );
}

/// A recovery that the run is too short to see is no recovery: with the run lengthened to
/// only 3 x `recover_within` past the trigger (the file's own run ends before), a recovery
/// needs a healthy stretch of `recover_within` to the end, so one at N/μ > 2 x
/// `recover_within` is not seen and the point is `metastable`.
#[test]
fn a_run_too_short_to_see_the_recovery_is_metastable() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("drain.toml");
    let text = DRAIN.replace("duration = \"900s\"", "duration = \"250s\"");
    std::fs::write(&file, format!("{text}recover_within = \"30s\"\n")).unwrap();
    let r = tipping(&file, &dir.path().join("out"), &["--jobs", "2"]);
    for p in r["variants"][0]["points"].as_array().unwrap() {
        assert_eq!(p["state"], "metastable", "{p}");
        assert_eq!(p["recovered_share"], 0.0, "{p}");
        assert!(p.get("recovery_s").is_none(), "{p}");
    }
}

/// Without `recover_within` the outputs carry no recovery fields.
#[test]
fn without_recover_within_there_are_no_recovery_fields() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("drain.toml");
    std::fs::write(&file, DRAIN).unwrap();
    let r = tipping(&file, &dir.path().join("out"), &["--jobs", "2"]);
    assert!(r.get("recover_within_s").is_none(), "{r}");
    let p = &r["variants"][0]["points"][0];
    assert!(
        p.get("recovered_share").is_none() && p.get("recovery_s").is_none(),
        "{p}"
    );
}
