//! M/G/1 with the service-time laws beyond exp (gamma, a mixture) against
//! Pollaczek-Khinchine: mean wait W = λ E[S²] / (2 (1 - ρ)).
//!
//! Each check pools several runs (different random streams) and compares with theory within
//! 3%; the customer counts keep the measured error several times below that (the figures
//! are in the report of the branch that added these laws).

use crate::common::*;

/// Pools `runs` runs of one server with Poisson arrivals at `lambda`/s and this `service`
/// table; returns the mean wait (s).
fn mean_wait(lambda: f64, service: &str, customers: f64, runs: u64) -> f64 {
    let duration = customers / lambda;
    let sc = scenario(&format!(
        r#"
        duration = "{duration}s"
        [class.request]
        rate = {lambda}
        steps = [{{ query = "server" }}]
        [pool.server]
        service = {service}
        "#
    ));
    let (mut wait, mut served) = (0.0, 0.0);
    for i in 0..runs {
        let r = run(&sc, i);
        let p = &r.summary.pools["server"];
        wait += p.mean_wait_s * p.served as f64;
        served += p.served as f64;
    }
    wait / served
}

/// Pollaczek-Khinchine mean wait for arrival rate `lambda` and service moments E[S], E[S²].
fn pk_wait(lambda: f64, m1: f64, m2: f64) -> f64 {
    lambda * m2 / (2.0 * (1.0 - lambda * m1))
}

fn close(got: f64, want: f64, tol: f64, what: &str) {
    let err = (got - want).abs() / want;
    eprintln!(
        "{what}: got {got:.5}, theory {want:.5}, error {:.2}%",
        err * 100.0
    );
    assert!(
        err < tol,
        "{what}: got {got:.5}, theory {want:.5}, error {:.2}% > {:.0}%",
        err * 100.0,
        tol * 100.0
    );
}

#[test]
fn mg1_gamma_wait_matches_pollaczek_khinchine() {
    // Gamma, mean 1 s, cv 0.5: E[S²] = 1 + 0.25.
    for (rho, customers, runs) in [(0.5, 1.0e6, 2), (0.8, 2.0e6, 2)] {
        let service = r#"{ law = "gamma", mean = "1s", cv = 0.5 }"#;
        let w = mean_wait(rho, service, customers, runs);
        close(
            w,
            pk_wait(rho, 1.0, 1.25),
            0.03,
            &format!("M/G/1 gamma cv 0.5 rho {rho} mean wait"),
        );
    }
}

#[test]
fn mg1_mixture_wait_matches_pollaczek_khinchine() {
    // 99% exp mean 0.8 s, 1% const 20.8 s: E[S] = 1, E[S²] = 0.99·2·0.64 + 0.01·20.8².
    let service = r#"{ law = "mixture", parts = [
        { weight = 0.99, law = "exp", mean = "800ms" },
        { weight = 0.01, law = "const", mean = "20800ms" } ] }"#;
    let m2 = 0.99 * 2.0 * 0.64 + 0.01 * 20.8 * 20.8;
    let rho = 0.5;
    let w = mean_wait(rho, service, 2.0e6, 4);
    close(
        w,
        pk_wait(rho, 1.0, m2),
        0.03,
        "M/G/1 mixture 99% exp / 1% const rho 0.5 mean wait",
    );
}
