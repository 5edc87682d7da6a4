//! Retries against probability: with independent failures at probability p and n attempts,
//! attempts per request = (1 - p^n) / (1 - p) and success = 1 - p^n.

use crate::common::*;
use brink::model::RunResult;

fn check(layer: &str, p: f64, n: u32) {
    let (class_retry, step_retry) = match layer {
        "request" => (format!("retry = {{ max_attempts = {n} }}"), String::new()),
        _ => (
            String::new(),
            format!(", timeout = \"1h\", retry = {{ max_attempts = {n} }}"),
        ),
    };
    let sc = scenario(&format!(
        r#"
        duration = "200000s"
        [class.request]
        rate = 1
        {class_retry}
        steps = [{{ query = "server"{step_retry} }}]
        [pool.server]
        workers = 1000
        error_rate = {p}
        service = {{ law = "exp", mean = "10ms" }}
        "#
    ));
    let r = run(&sc, 0);
    let c = &r.summary.classes["request"];
    let done = (c.succeeded + c.failed) as f64;
    let success = c.succeeded as f64 / done;
    // Attempts at the layer that retries: request attempts, or queries sent to the pool.
    let attempts = match layer {
        "request" => c.attempts as f64,
        _ => r.summary.pools["server"].queries as f64,
    } / c.admitted as f64;
    let want_attempts = (1.0 - p.powi(n as i32)) / (1.0 - p);
    let want_success = 1.0 - p.powi(n as i32);
    let e1 = (attempts - want_attempts).abs() / want_attempts;
    let e2 = (success - want_success).abs() / want_success;
    assert!(
        e1 < 0.02,
        "{layer} p={p} n={n}: attempts/request {attempts:.4} vs {want_attempts:.4}"
    );
    assert!(
        e2 < 0.02,
        "{layer} p={p} n={n}: success {success:.4} vs {want_success:.4}"
    );
}

#[test]
fn request_level_retries_follow_the_geometric_law() {
    // 2e5 requests: standard errors are under 0.3%, the tolerance is 2%.
    for (p, n) in [(0.1, 3), (0.5, 3), (0.5, 5), (0.8, 4)] {
        check("request", p, n);
    }
}

#[test]
fn query_level_retries_follow_the_geometric_law() {
    for (p, n) in [(0.3, 2), (0.6, 4)] {
        check("query", p, n);
    }
}

#[test]
fn retry_layers_multiply() {
    // 3 request attempts x 3 query attempts: a request that always fails sends 9 queries.
    let sc = scenario(
        r#"
        duration = "2000s"
        [class.request]
        rate = 1
        retry = { max_attempts = 3 }
        steps = [{ query = "server", timeout = "1h", retry = { max_attempts = 3 } }]
        [pool.server]
        workers = 100
        error_rate = 1.0
        service = { law = "const", mean = "1ms" }
        "#,
    );
    let r = run(&sc, 0);
    let c = &r.summary.classes["request"];
    assert_eq!(c.succeeded, 0);
    assert!(c.failed > 1000);
    let q = r.summary.pools["server"].queries;
    assert!(
        q >= 9 * c.failed && q <= 9 * (c.failed + c.in_flight),
        "queries {q}, failed {}",
        c.failed
    );
    assert!(c.attempts >= 3 * c.failed && c.attempts <= 3 * (c.failed + c.in_flight));
}

/// The client's circuit breaker (tumbling windows): during a 60 s outage at 100 requests/s,
/// each window that sees `min_requests` = 20 failures opens the breaker for 5 s, so the pool
/// sees about 20 queries per ~5.2 s (~230 in the outage) instead of all 6,000; attempts
/// started while it is open fail at once. After the outage the breaker closes and the
/// class recovers. Bound used: fewer than 10% of the breakerless run's queries.
#[test]
fn a_breaker_keeps_attempts_off_a_pool_in_an_outage_and_closes_after() {
    let text = |breaker: &str| {
        format!(
            r#"
            duration = "300s"
            [metrics]
            step = "10s"
            [class.request]
            rate = 100
            retry = {{ max_attempts = 1 {breaker} }}
            steps = [{{ query = "server" }}]
            [pool.server]
            workers = 10
            service = {{ law = "exp", mean = "10ms" }}
            [event.down]
            kind = "outage"
            pool = "server"
            at = "100s"
            for = "60s"
            "#
        )
    };
    let with = run(
        &scenario(&text(
            r#", breaker = { failure_ratio = 0.5, window = "1s", min_requests = 20, open_for = "5s" }"#,
        )),
        0,
    );
    let without = run(&scenario(&text("")), 0);
    let queries = |r: &RunResult| mean_between(r, "server.queries_per_s", 100.0, 160.0) * 60.0;
    let (q_with, q_without) = (queries(&with), queries(&without));
    assert!(
        q_without > 5_000.0 && q_with < 0.1 * q_without,
        "queries in the outage: {q_with:.0} with the breaker, {q_without:.0} without"
    );
    assert!(
        q_with > 50.0,
        "the breaker must let probes through: {q_with:.0}"
    );
    let good = mean_between(&with, "request.goodput_per_s", 200.0, 300.0);
    assert!(good > 95.0, "recovered goodput {good:.1}/s");
}

/// A partial scatter (`fanout = "all"`, `completion = "partial"`) to a pool in an outage:
/// every part fails at once, so the query fails when its last part has failed, and with
/// two attempts each request sends 2 x 4 parts and fails; none is left in flight.
#[test]
fn a_partial_scatter_whose_parts_all_fail_at_once_fails_the_request() {
    let sc = scenario(
        r#"
        duration = "100s"
        [class.request]
        rate = 10
        retry = { max_attempts = 2 }
        steps = [{ query = "db", fanout = "all", completion = "partial" }]
        [pool.db]
        shards = 4
        service = { law = "exp", mean = "10ms" }
        [event.down]
        kind = "outage"
        pool = "db"
        at = "0s"
        for = "200s"
        "#,
    );
    let r = run(&sc, 0);
    let c = &r.summary.classes["request"];
    assert!(c.admitted > 800, "admitted {}", c.admitted);
    assert_eq!((c.succeeded, c.in_flight), (0, 0));
    assert_eq!(c.failed, c.admitted);
    assert_eq!(c.attempts, 2 * c.admitted);
    let p = &r.summary.pools["db"];
    assert_eq!((p.queries, p.failed_fast), (8 * c.admitted, 8 * c.admitted));
}

/// `retry_on` chooses which failures are retried: with server errors at p = 0.3 and
/// 4 attempts, a policy that retries only timeouts (none happen here) makes exactly one
/// attempt per request and succeeds with 1 - p (within 2%, ~20,000 requests); one that
/// retries errors follows the geometric law as the default does. At query level alike.
#[test]
fn retry_on_retries_only_the_failures_it_names() {
    let text = |class_retry: &str, step_retry: &str| {
        format!(
            r#"
            duration = "20000s"
            [class.request]
            rate = 1
            retry = {{ max_attempts = 4 {class_retry} }}
            steps = [{{ query = "server", retry = {{ max_attempts = 4 {step_retry} }} }}]
            [pool.server]
            workers = 1000
            error_rate = 0.3
            service = {{ law = "exp", mean = "10ms" }}
            "#
        )
    };
    let p: f64 = 0.3;
    // Neither layer retries errors: one attempt, one query per request.
    let r = run(
        &scenario(&text(
            r#", retry_on = ["timeout"]"#,
            r#", retry_on = ["timeout", "rejected"]"#,
        )),
        0,
    );
    let c = &r.summary.classes["request"];
    assert_eq!(c.attempts, c.admitted);
    assert_eq!(r.summary.pools["server"].queries, c.admitted);
    let success = c.succeeded as f64 / (c.succeeded + c.failed) as f64;
    assert!(
        ((success - (1.0 - p)) / (1.0 - p)).abs() < 0.02,
        "success {success:.4}"
    );
    // The query layer retries errors: 4 tries of p each before the class (which does not
    // retry errors) sees a failure.
    let r = run(
        &scenario(&text(
            r#", retry_on = ["timeout"]"#,
            r#", retry_on = ["error"]"#,
        )),
        0,
    );
    let c = &r.summary.classes["request"];
    assert_eq!(c.attempts, c.admitted);
    let want = (1.0 - p.powi(4)) / (1.0 - p);
    let queries = r.summary.pools["server"].queries as f64 / c.admitted as f64;
    assert!(
        ((queries - want) / want).abs() < 0.02,
        "queries/request {queries:.4} vs {want:.4}"
    );
}
