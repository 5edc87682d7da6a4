//! The Grab 2019-02-15 scenario: pipelined reads fail all-or-nothing while the client's
//! stale view of the cluster still routes commands to a dead replica; the fixes the
//! write-up proposes; and the model's answer on retries (see the scenario's description).
//!
//! Tolerances come from sample sizes: a success ratio measured over N independent calls
//! has standard deviation sqrt(p (1 - p) / N); the tests allow 4 of them. Every run has
//! a fixed seed, so a test either always passes or always fails.

use crate::common::*;
use brink::model::RunResult;
use std::sync::OnceLock;

const NAME: &str = "grab-2019-02-15";
/// The crash (just after the view refresh at 300 s) and the next refresh.
const CRASH: f64 = 300.5;
const REFRESH: f64 = 360.0;
/// Whole 1 s rows inside the outage.
const OUT_FROM: f64 = 301.0;
const OUT_TO: f64 = 359.0;
/// Chance that one command lands on the dead replica: 1/3 (shard) x 1/2 (replica).
const P_DEAD: f64 = 1.0 / 6.0;
const K: i32 = 17;

/// The baseline run, shared by the tests that read it.
fn baseline() -> &'static RunResult {
    static R: OnceLock<RunResult> = OnceLock::new();
    R.get_or_init(|| run(&bundled(NAME, None, &[]), 0))
}

/// Sum of a column's per-second rates times the row length over [from, to): a count.
fn count_between(r: &RunResult, column: &str, from: f64, to: f64) -> f64 {
    let t = r.series.column("time_s").unwrap();
    let v = r.series.column(column).unwrap();
    let dt = t[1] - t[0];
    t.iter()
        .zip(&v)
        .filter(|(t, _)| **t >= from && **t < to)
        .map(|(_, v)| v * dt)
        .sum()
}

/// Calls offered and calls that succeeded in [from, to).
fn calls(r: &RunResult, class: &str, from: f64, to: f64) -> (f64, f64) {
    (
        count_between(r, &format!("{class}.offered_per_s"), from, to),
        count_between(r, &format!("{class}.goodput_per_s"), from, to),
    )
}

/// Start times of the rows where less than half the offered reads succeeded.
fn failing_rows(r: &RunResult) -> Vec<f64> {
    let t = r.series.column("time_s").unwrap();
    let o = r.series.column("read.offered_per_s").unwrap();
    let g = r.series.column("read.goodput_per_s").unwrap();
    (0..t.len())
        .filter(|&i| o[i] > 0.0 && g[i] / o[i] < 0.5)
        .map(|i| t[i])
        .collect()
}

/// 4 standard deviations of a binomial ratio p over n trials.
fn tol(p: f64, n: f64) -> f64 {
    4.0 * (p * (1.0 - p) / n).sqrt()
}

#[test]
fn about_one_call_in_21_succeeds_during_the_outage() {
    let r = baseline();
    let (offered, ok) = calls(r, "read", OUT_FROM, OUT_TO);
    assert!(offered > 30_000.0, "too few calls to measure: {offered}");
    let ratio = ok / offered;
    let law = (1.0 - P_DEAD).powi(K);
    assert!(
        (ratio - law).abs() < tol(law, offered),
        "success during the outage {ratio:.4} ({ok} of {offered}), law (5/6)^17 = {law:.4} +- {:.4}",
        tol(law, offered)
    );
    // "About 1 call in 21": within 15% of it.
    assert!(
        (1.0 / ratio - 21.0).abs() < 0.15 * 21.0,
        "1 call in {:.1} succeeded",
        1.0 / ratio
    );
    // And before the crash every call succeeds.
    let (o, g) = calls(r, "read", 60.0, 300.0);
    assert!(g / o > 0.999, "success before the crash {}", g / o);
}

#[test]
fn the_outage_lasts_one_refresh_interval() {
    let rows = failing_rows(baseline());
    assert!(!rows.is_empty(), "no outage");
    let (first, last) = (rows[0], *rows.last().unwrap());
    // One contiguous span, starting at the crash, ending at the refresh.
    assert_eq!(
        rows.len() as f64,
        last - first + 1.0,
        "the failing rows are not contiguous: {rows:?}"
    );
    let span = rows.len() as f64;
    assert!(
        (span - 60.0).abs() <= 10.0,
        "outage of {span} s (rows {first}..{last})"
    );
    assert!(
        (first - CRASH).abs() <= 1.0 && (last + 1.0 - REFRESH).abs() <= 1.0,
        "outage from {first} to {}",
        last + 1.0
    );
}

#[test]
fn no_write_fails_or_is_lost() {
    let s = &baseline().summary.classes["write"];
    assert_eq!(s.failed, 0, "failed writes");
    assert_eq!(s.keys_failed, Some(0), "failed write commands");
    assert_eq!(s.rejected, 0);
    assert!(
        s.succeeded + s.in_flight == s.offered && s.in_flight <= 2,
        "writes offered {} succeeded {} in flight {}",
        s.offered,
        s.succeeded,
        s.in_flight
    );
    // Write goodput equals the offered writes in every part of the run, outage included.
    let r = baseline();
    for (a, b) in [(0.0, CRASH), (OUT_FROM, OUT_TO), (REFRESH, 720.0)] {
        let (o, g) = calls(r, "write", a, b);
        assert!(
            (o - g).abs() <= 2.0,
            "writes in [{a}, {b}): offered {o}, succeeded {g}"
        );
    }
}

/// The all-or-nothing law: a call of k keys succeeds with probability (1 - 1/6)^k while
/// the client still routes to the dead replica.
#[test]
fn success_follows_the_all_or_nothing_law_in_k() {
    let rate = 1500.0;
    let mut seen = Vec::new();
    for k in [1, 2, 4, 8, 17] {
        let text = format!(
            r#"
duration = "130s"
seed = 7
[metrics]
step = "1s"
[class.read]
rate = {rate}
timeout = "1s"
steps = [{{ query = "redis", keys = {k}, fanout = "keys", read = "replica", cost_per_key = 1 }}]
[pool.redis]
shards = 3
replicas = 2
service = {{ law = "exp", mean = "20us" }}
client = {{ refresh = "60s" }}
[event.crash]
kind = "crash"
pool = "redis"
shard = 1
replica = 2
at = "60.5s"
for = "5m"
"#
        );
        let r = run(&scenario(&text), 0);
        let (offered, ok) = calls(&r, "read", 61.0, 119.0);
        let ratio = ok / offered;
        let law = (1.0 - P_DEAD).powi(k);
        // 4 sigma of the binomial, plus 0.2% for calls straddling row edges.
        let t = tol(law, offered) + 0.002;
        assert!(
            (ratio - law).abs() < t,
            "k = {k}: success {ratio:.4} over {offered} calls, law {law:.4} +- {t:.4}"
        );
        // After the refresh the dead replica is out of the view: all calls succeed.
        let (o, g) = calls(&r, "read", 121.0, 130.0);
        assert!(
            g / o > 0.999,
            "k = {k}: success after the refresh {}",
            g / o
        );
        seen.push(ratio);
    }
    // The law is steep: the measured ratios fall with k.
    assert!(seen.windows(2).all(|w| w[1] < w[0]), "{seen:?}");
}

#[test]
fn refresh_on_error_ends_the_outage_within_seconds() {
    let r = run(&bundled(NAME, Some("refresh-on-error"), &[]), 0);
    let rows = failing_rows(&r);
    assert!(rows.len() <= 3, "failing rows {rows:?}");
    let failed = r.summary.classes["read"].failed;
    assert!(failed < 600 * 3, "failed calls {failed}");
}

#[test]
fn partial_results_keep_five_sixths_of_the_keys() {
    // Reads only while the client routes to the dead replica, so the key counts in the
    // summary are those of the outage.
    let profile = r#"class.read.profile={ points = [["0s", 0.0], ["301s", 0.0], ["301.001s", 1.0], ["359s", 1.0], ["359.001s", 0.0]] }"#;
    let r = run(
        &bundled(NAME, Some("partial-results"), &[profile, "duration=400s"]),
        0,
    );
    let s = &r.summary.classes["read"];
    let (ok, bad) = (s.keys_ok.unwrap() as f64, s.keys_failed.unwrap() as f64);
    let n = ok + bad;
    assert!(n > 500_000.0, "keys {n}");
    let share = ok / n;
    assert!(
        (share - 5.0 / 6.0).abs() < tol(5.0 / 6.0, n),
        "key-level success {share:.4} over {n} keys"
    );
    // Every call returns something.
    assert_eq!(s.failed, 0, "calls failed");
}

#[test]
fn route_by_latency_keeps_calls_succeeding_and_loads_the_primaries() {
    let r = run(&bundled(NAME, Some("route-by-latency"), &[]), 0);
    let (o, g) = calls(&r, "read", OUT_FROM, OUT_TO);
    assert!(g / o > 0.95, "success during the outage {}", g / o);
    let base = baseline().summary.pools["redis"]
        .primary_utilization
        .unwrap();
    let lat = r.summary.pools["redis"].primary_utilization.unwrap();
    assert!(
        lat > 0.15 && lat > 10.0 * base,
        "primary utilisation {lat:.3} with latency routing, {base:.3} in the baseline"
    );
    let before = mean_between(&r, "redis.primary_utilization", 60.0, 300.0);
    let before_base = mean_between(baseline(), "redis.primary_utilization", 60.0, 300.0);
    assert!(before > 10.0 * before_base, "{before} vs {before_base}");
}

/// The answer recorded in the scenario: retries alone (at this capacity) and a tighter
/// capacity alone recover at the refresh; both together tip the surviving replicas into
/// a failure that outlasts the refresh and the replacement.
#[test]
fn retries_with_tight_capacity_make_the_failure_last() {
    let after = |r: &RunResult, a: f64, b: f64| {
        let (o, g) = calls(r, "read", a, b);
        g / o
    };
    for v in ["retries", "tight-capacity"] {
        let r = run(&bundled(NAME, Some(v), &[]), 0);
        let s = after(&r, REFRESH + 5.0, 720.0);
        assert!(s > 0.999, "{v}: success after the refresh {s}");
    }
    let r = run(&bundled(NAME, Some("retries-tight-capacity"), &[]), 0);
    // Still failed after the refresh, and after the replacement joined (660 s).
    let s1 = after(&r, REFRESH + 5.0, 600.0);
    let s2 = after(&r, 670.0, 720.0);
    assert!(s1 < 0.01 && s2 < 0.01, "success {s1} then {s2}");
    // Sustained by retries: about 5 attempts per call.
    let att = mean_between(&r, "read.attempts_per_s", 400.0, 600.0)
        / mean_between(&r, "read.offered_per_s", 400.0, 600.0);
    assert!(att > 4.5, "attempts per call {att}");
}
