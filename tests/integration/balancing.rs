//! Load balancing (`[pool.NAME] balance`) against queueing laws.
//!
//! The farm: a keyless pool of n = 100 shards with one worker each (100 servers, each with
//! its own queue), exponential service of mean 1 s, Poisson arrivals at 0.9 x 100 / s, so
//! each server is at load 0.9. One run per policy of 50 000 s (4.5e6 queries), measured
//! after a 1 000 s warm-up, shared by the tests that read it.
//!
//! - **Supermarket model** (LAWS.md, load balancing): the time-average fraction of servers
//!   holding at least i jobs is 0.9^(2^i - 1) under power-of-two-choices (the n -> infinity
//!   fixed point; n = 100 sits close) and 0.9^i under random (each server is an M/M/1 queue
//!   of a Poisson thinning: exact). Tolerance 0.03 absolute, i = 1..4. Under random the
//!   servers are independent M/M/1 queues: the fraction at level i has a per-server
//!   standard error of about sqrt(2 tau p(1-p) / T) ~ 0.06 (relaxation time tau ~ 1/(1 -
//!   sqrt 0.9)^2 ~ 380 s, T = 49 000 s), 0.006 over 100 servers: 0.03 is 5 standard
//!   errors. Power-of-two relaxes far faster.
//! - **M/M/1** under random: mean sojourn 1 / (1 - 0.9) = 10 s, within 5%.
//! - **Ordering**: the central queue (M/M/100, Erlang C) is a lower bound on any dispatch
//!   to 100 exponential servers; least-outstanding (join the shortest queue) < power of
//!   two < random in mean sojourn.
//! - **Round-robin** over n servers turns Poisson arrivals of total rate Lambda into an
//!   Erlang(n, Lambda) renewal stream at each server, so each is an E_n/M/1 queue: a G/M/1
//!   queue whose mean wait is W = sigma / (mu (1 - sigma)), sigma the root in (0, 1) of
//!   sigma = A*(mu (1 - sigma)), with A*(s) = (Lambda / (Lambda + s))^n the interarrival
//!   Laplace transform. Within 5%.

use crate::common::*;
use brink::model::occupancy;
use brink::scenario::Scenario;
use std::sync::OnceLock;

const SERVERS: u32 = 100;
const RHO: f64 = 0.9;
const DURATION_S: f64 = 50_000.0;
const WARMUP_S: f64 = 1_000.0;

/// The farm under `policy`.
fn farm(policy: &str) -> Scenario {
    let rate = RHO * SERVERS as f64;
    scenario(&format!(
        r#"
        duration = "{DURATION_S}s"
        [metrics]
        step = "100s"
        [class.request]
        rate = {rate}
        steps = [{{ query = "farm" }}]
        [pool.farm]
        shards = {SERVERS}
        workers = 1
        balance = "{policy}"
        service = {{ law = "exp", mean = "1s" }}
        "#
    ))
}

/// What one run of the farm measured.
struct Farm {
    /// Time-average fraction of servers holding at least i jobs, i = 0..=6.
    at_least: Vec<f64>,
    wait_s: f64,
    sojourn_s: f64,
}

fn measure(policy: &str) -> Farm {
    let sc = farm(policy);
    let o = occupancy(&sc, 0, "farm", (WARMUP_S * 1e9) as u64, 6).unwrap();
    let p = &o.result.summary.pools["farm"];
    // Shown with `--nocapture`: the figures the tests compare.
    eprintln!(
        "{policy}: at least i jobs {:.4?}, mean wait {:.4} s, sojourn {:.4} s",
        o.at_least, p.mean_wait_s, p.mean_sojourn_s
    );
    Farm {
        at_least: o.at_least,
        wait_s: p.mean_wait_s,
        sojourn_s: p.mean_sojourn_s,
    }
}

/// The run of each policy, made once for every test that reads it.
fn farm_run(policy: &'static str) -> &'static Farm {
    static RUNS: [OnceLock<Farm>; 4] = [const { OnceLock::new() }; 4];
    let i = ["random", "round-robin", "least-outstanding", "power-of-two"]
        .iter()
        .position(|&p| p == policy)
        .unwrap();
    RUNS[i].get_or_init(|| measure(policy))
}

/// Checks `at_least[i]` against `law(i)` for i = 1..4 within 0.03 absolute.
fn assert_fractions(what: &str, at_least: &[f64], law: impl Fn(i32) -> f64) {
    for i in 1..=4 {
        let (got, want) = (at_least[i as usize], law(i));
        assert!(
            (got - want).abs() < 0.03,
            "{what}: fraction of servers with at least {i} jobs {got:.4}, law {want:.4} \
             (all: {at_least:.4?})"
        );
    }
}

#[test]
fn power_of_two_matches_the_supermarket_fixed_point() {
    let f = farm_run("power-of-two");
    assert_fractions("power-of-two", &f.at_least, |i| RHO.powi((1 << i) - 1));
}

#[test]
fn random_matches_independent_mm1_queues() {
    let f = farm_run("random");
    assert_fractions("random", &f.at_least, |i| RHO.powi(i));
    let want = 1.0 / (1.0 - RHO);
    assert!(
        (f.sojourn_s - want).abs() / want < 0.05,
        "random: mean sojourn {:.3} s, M/M/1 {want:.3} s",
        f.sojourn_s
    );
}

/// Erlang C: mean wait of M/M/c with c servers of rate 1 at offered load a.
fn erlang_c_wait(c: u32, a: f64) -> f64 {
    let (mut term, mut sum) = (1.0, 1.0);
    for k in 1..c {
        term *= a / k as f64;
        sum += term;
    }
    let last = term * a / c as f64 / (1.0 - a / c as f64);
    last / (sum + last) / (c as f64 - a)
}

#[test]
fn least_outstanding_beats_power_of_two_beats_random() {
    let (jsq, p2, rnd) = (
        farm_run("least-outstanding"),
        farm_run("power-of-two"),
        farm_run("random"),
    );
    let central = 1.0 + erlang_c_wait(SERVERS, RHO * SERVERS as f64);
    let s = [central, jsq.sojourn_s, p2.sojourn_s, rnd.sojourn_s];
    assert!(
        s.windows(2).all(|w| w[0] < w[1]),
        "mean sojourn: M/M/100 {:.4}, least-outstanding {:.4}, power-of-two {:.4}, random \
         {:.4} s: not in that order",
        s[0],
        s[1],
        s[2],
        s[3]
    );
    // Join the shortest queue at 100 servers and load 0.9 hardly ever queues a job behind
    // two others: far nearer the central queue than power-of-two.
    assert!(
        jsq.at_least[3] < 0.01,
        "least-outstanding: servers with 3+ jobs {:.4}",
        jsq.at_least[3]
    );
}

/// The mean wait of an E_n/M/1 queue (service rate 1) fed by Erlang(n, `lambda`)
/// interarrivals: sigma by bisection on sigma = (lambda / (lambda + 1 - sigma))^n.
fn erlang_gm1_wait(n: i32, lambda: f64) -> f64 {
    let f = |s: f64| (lambda / (lambda + 1.0 - s)).powi(n) - s;
    // f > 0 below the root, < 0 between it and 1 (load < 1).
    let (mut lo, mut hi) = (0.0, 1.0 - 1e-12);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if f(mid) > 0.0 { lo = mid } else { hi = mid }
    }
    lo / (1.0 - lo)
}

#[test]
fn round_robin_over_shards_is_erlang_n_into_each_server() {
    let rr = farm_run("round-robin");
    let want = erlang_gm1_wait(SERVERS as i32, RHO * SERVERS as f64);
    assert!(
        (rr.wait_s - want).abs() / want < 0.05,
        "round-robin: mean wait {:.4} s, E_100/M/1 {want:.4} s",
        rr.wait_s
    );
    // Between join-the-shortest-queue and random.
    let (jsq, rnd) = (farm_run("least-outstanding"), farm_run("random"));
    assert!(jsq.wait_s < rr.wait_s && rr.wait_s < rnd.wait_s);
}

/// Reads spread over a shard's replicas: one shard, two replicas, `read = "replica"`,
/// exponential service of 1 s, 1.6 / s in all (load 0.8 per replica). 1.6e6 queries.
fn replicas(policy: &str) -> f64 {
    let sc = scenario(&format!(
        r#"
        duration = "1000000s"
        [metrics]
        step = "1000s"
        [class.request]
        rate = 1.6
        steps = [{{ query = "db", read = "replica" }}]
        [pool.db]
        replicas = 2
        workers = 1
        balance = "{policy}"
        service = {{ law = "exp", mean = "1s" }}
        "#
    ));
    let w = run(&sc, 0).summary.pools["db"].mean_wait_s;
    eprintln!("replicas, {policy}: mean wait {w:.4} s");
    w
}

#[test]
fn round_robin_over_replicas_alternates() {
    // Alternating makes each replica an E_2/M/1 queue: W = 2.84 s where random reads make
    // M/M/1 queues, W = 4 s. Standard error ~1% (relaxation ~90 queries at load 0.8).
    let want = erlang_gm1_wait(2, 1.6);
    let got = replicas("round-robin");
    assert!(
        (got - want).abs() / want < 0.05,
        "round-robin replicas: mean wait {got:.4} s, E_2/M/1 {want:.4} s"
    );
    let random = replicas("random");
    assert!(
        (random - 4.0).abs() / 4.0 < 0.05,
        "random replicas: mean wait {random:.4} s, M/M/1 4 s"
    );
}

/// The summary of a pool `db` of `shape` (TOML lines) with `balance` (a policy, or "" for
/// none), read by 30 / s for 200 s with `read = "any"`, as JSON: equal strings are the
/// same numbers to the last bit.
fn summary(shape: &str, balance: &str) -> String {
    let balance = match balance {
        "" => String::new(),
        b => format!("balance = \"{b}\""),
    };
    let sc = scenario(&format!(
        r#"
        duration = "200s"
        [class.request]
        rate = 30
        steps = [{{ query = "db", read = "any" }}]
        [pool.db]
        {shape}
        {balance}
        service = {{ law = "exp", mean = "100ms" }}
        "#
    ));
    serde_json::to_string(&run(&sc, 0).summary).unwrap()
}

#[test]
fn random_named_is_the_default_draw_for_draw() {
    // `balance = "random"` is brink's routing before the key existed: the same draws from
    // the same streams (sharded and replicated).
    let shape = "shards = 4\nreplicas = 2\nworkers = 2";
    let default = summary(shape, "");
    assert_eq!(summary(shape, "random"), default);
    assert_ne!(
        summary(shape, "power-of-two"),
        default,
        "the policy changes nothing"
    );
}

#[test]
fn balance_on_a_single_server_changes_nothing() {
    // One server, no replicas: nothing to choose, so no policy draws or changes anything.
    let shape = "workers = 4";
    let random = summary(shape, "random");
    for b in ["round-robin", "least-outstanding", "power-of-two"] {
        assert_eq!(summary(shape, b), random, "{b} on one server");
    }
}
