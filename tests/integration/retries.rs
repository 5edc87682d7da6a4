//! Retries against probability: with independent failures at probability p and n attempts,
//! attempts per request = (1 - p^n) / (1 - p) and success = 1 - p^n.

use crate::common::*;

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
