//! The teaching scenario `lb-sinkhole.toml`: one server of ten fails fast (an error at once,
//! holding nothing), so a least-outstanding balancer, to which it always looks the least
//! loaded, sends it most attempts and most requests fail; a random balancer sends it 1/10,
//! power of two choices about 2/10, and outlier ejection and health checks take it out.

use crate::common::*;
use brink::model::RunResult;

const RATE: f64 = 1200.0;
const SERVERS: f64 = 10.0;
/// Before the sick server (it breaks at 60 s), after the first minute's warm-up.
const BEFORE: (f64, f64) = (10.0, 60.0);
/// From 10 s after it breaks to the end of the run (300 s).
const SICK: (f64, f64) = (70.0, 300.0);

fn story(variant: Option<&str>, sets: &[&str]) -> RunResult {
    run(&bundled("lb-sinkhole", variant, sets), 0)
}

fn mean(r: &RunResult, column: &str, (from, to): (f64, f64)) -> f64 {
    mean_between(r, column, from, to)
}

/// The share of the pool's attempts that failed at once: with one server failing fast
/// (every query it gets), the share the sick server took. Rows are equally long, so the
/// ratio of the means is the ratio of the counts.
fn sick_share(r: &RunResult, w: (f64, f64)) -> f64 {
    mean(r, "api.failed_fast_per_s", w) / mean(r, "api.queries_per_s", w)
}

/// The share of requests that failed for good.
fn failed_share(r: &RunResult, w: (f64, f64)) -> f64 {
    mean(r, "request.failed_per_s", w) / mean(r, "request.offered_per_s", w)
}

/// Checks `share` against a binomial law: `p` of `n` attempts, within 6 standard
/// deviations (a flake once in ~10^9 runs; the runs are seeded, so in practice never).
fn assert_binomial(what: &str, share: f64, p: f64, n: f64) {
    let sd = (p * (1.0 - p) / n).sqrt();
    assert!(
        (share - p).abs() < 6.0 * sd,
        "{what}: share {share}, law {p} ± {} (6 sd of {n} attempts)",
        6.0 * sd
    );
}

#[test]
fn least_outstanding_sends_the_sick_server_most_attempts_and_most_requests_fail() {
    let r = story(None, &[]);
    // Before: every request served, nothing failed at once.
    let good = mean(&r, "request.goodput_per_s", BEFORE);
    assert!(good > 0.98 * RATE, "goodput before {good}");
    assert_eq!(mean(&r, "api.failed_fast_per_s", BEFORE), 0.0);
    // After: 1 server in 10 takes far more than 1/10 of the attempts...
    let share = sick_share(&r, SICK);
    assert!(share > 0.8, "the sick server took {share} of the attempts");
    // ...each retry lands there again, and most requests fail.
    let failed = failed_share(&r, SICK);
    assert!(failed > 0.5, "{failed} of requests failed");
    // The healthy nine sit nearly idle (utilization counts the sick server's idle workers).
    let util = mean(&r, "api.utilization", SICK);
    assert!(util < 0.1, "utilization {util}");
}

#[test]
fn random_sends_the_sick_server_one_in_n_and_almost_nothing_fails() {
    let r = story(Some("random"), &[]);
    // Each attempt goes to a server uniformly at random, whatever their load: Binomial(n,
    // 1/10) attempts reach the sick one.
    let n = mean(&r, "api.queries_per_s", SICK) * (SICK.1 - SICK.0);
    assert_binomial("random", sick_share(&r, SICK), 1.0 / SERVERS, n);
    // A request fails only if its 3 tries all land there: 1 in 1,000 (Binomial over ~276k
    // requests, sd ~0.00006: 0.003 is far outside it).
    let failed = failed_share(&r, SICK);
    assert!(failed < 0.003, "{failed} of requests failed");
}

#[test]
fn a_sick_server_failing_half_its_queries_takes_half_as_many_errors_under_random() {
    // `fraction = 0.5`: each query to it fails with probability 1/2 (a draw of the pool's
    // stream), so 1/20 of the attempts fail at once.
    let r = story(Some("random"), &["event.sick.fraction=0.5"]);
    let n = mean(&r, "api.queries_per_s", SICK) * (SICK.1 - SICK.0);
    assert_binomial("half", sick_share(&r, SICK), 0.5 / SERVERS, n);
}

#[test]
fn power_of_two_sends_it_at_most_two_in_n() {
    let r = story(Some("power-of-two"), &[]);
    // It is chosen only when drawn into the pair (2/10) and then almost always wins it (it
    // loses a tie only to an idle partner drawn first): between 0.15 and 2/10 + 6 sd.
    let n = mean(&r, "api.queries_per_s", SICK) * (SICK.1 - SICK.0);
    let share = sick_share(&r, SICK);
    let p = 2.0 / SERVERS;
    let sd = (p * (1.0 - p) / n).sqrt();
    assert!(
        share > 0.15 && share < p + 6.0 * sd,
        "power-of-two: {share}"
    );
    assert!(failed_share(&r, SICK) < 0.02);
}

#[test]
fn outlier_ejection_takes_the_sick_server_out_and_requests_recover() {
    let r = story(Some("outlier-ejection"), &[]);
    let good = mean(&r, "request.goodput_per_s", SICK);
    assert!(good > 0.99 * RATE, "goodput {good}");
    // Out almost all the time: back every 30 s for 5 failed attempts.
    let ejected = mean(&r, "api.ejected", SICK);
    assert!(ejected > 0.95 && ejected <= 1.0, "ejected {ejected}");
    assert_eq!(mean(&r, "api.ejected", BEFORE), 0.0);
    // 5 errors per 30 s at most, and ~8 ejections over 230 s.
    let fast = mean(&r, "api.failed_fast_per_s", SICK);
    assert!(fast < 0.5, "failed fast {fast}/s");
    let ejections = r.summary.pools["api"].ejections.unwrap();
    assert!((7..=9).contains(&ejections), "ejections {ejections}");
}

#[test]
fn health_checks_hold_the_sick_server_out_after_three_failed_probes() {
    let r = story(Some("health-check"), &[]);
    assert_eq!(mean(&r, "api.unhealthy", BEFORE), 0.0);
    // Probes every 5 s: the sick server (broken at 60 s) fails its 3rd probe in a row by
    // 75 s. Until then, the sinkhole...
    assert!(failed_share(&r, (60.0, 70.0)) > 0.5);
    // ...then it is out for good (its probes keep failing) and requests recover.
    let after = (80.0, 300.0);
    assert_eq!(mean(&r, "api.unhealthy", after), 1.0);
    assert_eq!(mean(&r, "api.failed_fast_per_s", after), 0.0);
    let good = mean(&r, "request.goodput_per_s", after);
    assert!(good > 0.99 * RATE, "goodput {good}");
}
