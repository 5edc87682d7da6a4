//! The engine against queueing theory: M/M/1, M/M/c (Erlang C) and M/M/c/K blocking.
//!
//! Each check pools several independent runs (different run indices, so different random
//! streams) and compares with theory within 3%. Sample sizes are chosen so the standard
//! error is under a fifth of the tolerance: these tests do not flake.

use crate::common::*;

/// Erlang C: probability that an arrival waits, for c servers at offered load a = lambda/mu.
fn erlang_c(c: u32, a: f64) -> f64 {
    let rho = a / c as f64;
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..c {
        term *= a / k as f64;
        sum += term;
    }
    let last = term * a / c as f64 / (1.0 - rho);
    last / (sum + last)
}

/// Pools `runs` runs of an M/M/c scenario and returns (mean wait, mean sojourn, blocking).
fn measure(
    c: u32,
    lambda: f64,
    queue_limit: Option<u32>,
    customers: f64,
    runs: u64,
) -> (f64, f64, f64) {
    let duration = customers / lambda;
    let limit = queue_limit
        .map(|k| format!("queue_limit = {k}"))
        .unwrap_or_default();
    let sc = scenario(&format!(
        r#"
        duration = "{duration}s"
        [class.request]
        rate = {lambda}
        steps = [{{ query = "server" }}]
        [pool.server]
        workers = {c}
        {limit}
        service = {{ law = "exp", mean = "1s" }}
        "#
    ));
    let (mut wait, mut sojourn, mut served, mut dropped, mut offered) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for i in 0..runs {
        let r = run(&sc, i);
        let p = &r.summary.pools["server"];
        let n = p.served as f64;
        wait += p.mean_wait_s * n;
        sojourn += p.mean_sojourn_s * n;
        served += n;
        dropped += p.dropped as f64;
        offered += r.summary.classes["request"].offered as f64;
    }
    (wait / served, sojourn / served, dropped / offered)
}

fn close(got: f64, want: f64, tol: f64, what: &str) {
    let err = (got - want).abs() / want;
    assert!(
        err < tol,
        "{what}: got {got:.5}, theory {want:.5}, error {:.2}% > {:.0}%",
        err * 100.0,
        tol * 100.0
    );
}

#[test]
fn mm1_wait_and_sojourn_match_theory() {
    // rho 0.9 needs the most samples: one 1e6-customer run has ~1.5% standard deviation.
    for (rho, customers, runs) in [(0.5, 1.0e6, 2), (0.8, 2.0e6, 2), (0.9, 4.0e6, 4)] {
        let (w, s, _) = measure(1, rho, None, customers, runs);
        close(
            w,
            rho / (1.0 - rho),
            0.03,
            &format!("M/M/1 rho {rho} mean wait"),
        );
        close(
            s,
            1.0 / (1.0 - rho),
            0.03,
            &format!("M/M/1 rho {rho} mean sojourn"),
        );
    }
}

#[test]
fn mmc_wait_and_sojourn_match_erlang_c() {
    let c = 4;
    for (rho, customers, runs) in [(0.5, 2.0e6, 2), (0.8, 2.0e6, 2), (0.9, 4.0e6, 4)] {
        let a = rho * c as f64;
        let wq = erlang_c(c, a) / (c as f64 - a);
        let (w, s, _) = measure(c, a, None, customers, runs);
        close(w, wq, 0.03, &format!("M/M/{c} rho {rho} mean wait"));
        close(
            s,
            wq + 1.0,
            0.03,
            &format!("M/M/{c} rho {rho} mean sojourn"),
        );
    }
}

#[test]
fn mmck_blocking_matches_theory() {
    // M/M/c/K with c = 2 workers and K = 6 places in all (4 waiting).
    let (c, k) = (2u32, 6u32);
    for lambda in [1.0, 1.6, 1.8] {
        let a: f64 = lambda;
        let mut p = Vec::new();
        let mut fact = 1.0;
        for n in 0..=k {
            if n > 0 && n <= c {
                fact *= n as f64;
            }
            let pn = if n <= c {
                a.powi(n as i32) / fact
            } else {
                a.powi(n as i32) / (fact * (c as f64).powi((n - c) as i32))
            };
            p.push(pn);
        }
        let total: f64 = p.iter().sum();
        let blocking = p[k as usize] / total;
        let (_, _, b) = measure(c, lambda, Some(k - c), 2.0e6, 2);
        close(
            b,
            blocking,
            0.03,
            &format!("M/M/{c}/{k} lambda {lambda} blocking"),
        );
    }
}
