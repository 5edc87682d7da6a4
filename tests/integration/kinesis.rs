//! A per-server resource that grows with the fleet (`[pool.NAME.peers]`), in isolation,
//! and the AWS Kinesis 2020-11-25 scenario's story (issue 25).
//!
//! The law: a server that knows a fleet of N servers holds b + k(N - 1) threads and fails
//! past the limit L, so a fleet is healthy iff b + k(N - 1) <= L; one server added past
//! that fails every server, each within `learn_within` of the addition, at times spread
//! uniformly over it (each server's own delay). Every run has a fixed seed, so a test
//! either always passes or always fails.

use crate::common::*;
use brink::model::RunResult;

/// A fleet of `fleet` servers (plus `standby` outside it) with base `b`, `k` per peer and
/// limit `l`, learning within `learn` minutes; `add` standby servers join at 1 h (none if
/// 0) for 10 h. Rows of `step` minutes over `hours`.
fn fleet(fleet: u32, standby: u32, (b, k, l): (u64, u64, u64), learn: u32, add: u32) -> String {
    let addition = if add == 0 {
        String::new()
    } else {
        format!(
            "[event.addition]\nkind = \"add_servers\"\npool = \"fe\"\ncount = {add}\nat = \"1h\"\nfor = \"10h\"\n"
        )
    };
    format!(
        r#"duration = "3h"
seed = 25
[metrics]
step = "6m"
[class.put]
rate = 20
timeout = "1s"
steps = [{{ query = "fe" }}]
[pool.fe]
shards = {servers}
workers = 4
service = {{ law = "exp", mean = "10ms" }}
[pool.fe.peers]
base = {b}
per_peer = {k}
limit = {l}
learn_within = "{learn}m"
standby = {standby}
{addition}"#,
        servers = fleet + standby
    )
}

/// The `fe.failed_servers` column (time-average failed servers of each row) and row starts.
fn failed(r: &RunResult) -> (Vec<f64>, Vec<f64>) {
    (
        r.series.column("time_s").unwrap(),
        r.series.column("fe.failed_servers").unwrap(),
    )
}

#[test]
fn a_fleet_is_healthy_iff_base_plus_per_peer_times_peers_fits_the_limit() {
    for (b, k, l) in [(10, 3, 70), (100, 1, 160), (0, 7, 300)] {
        // The largest healthy fleet: b + k(N - 1) <= L.
        let n = ((l - b) / k + 1) as u32;
        let at_limit = run(&scenario(&fleet(n, 0, (b, k, l), 0, 0)), 0);
        let (_, f) = failed(&at_limit);
        assert!(
            f.iter().all(|&x| x == 0.0),
            "b={b} k={k} L={l}: a fleet of {n} fits, yet servers failed: {f:?}"
        );
        assert!(at_limit.summary.classes["put"].failed == 0);
        let over = run(&scenario(&fleet(n + 1, 0, (b, k, l), 0, 0)), 0);
        let (_, f) = failed(&over);
        assert!(
            f.iter().all(|&x| x == (n + 1) as f64),
            "b={b} k={k} L={l}: a fleet of {} is past the limit, every server fails from the start: {f:?}",
            n + 1
        );
        assert_eq!(over.summary.classes["put"].succeeded, 0);
    }
}

#[test]
fn one_server_past_the_limit_fails_every_server_uniformly_within_learn_within() {
    // 1000 servers just fit (100 + 1 x 999 = 1099); the 1001st joins at 1 h; learning
    // within 60 min; rows of 6 min, a tenth of it.
    let n = 1000.0;
    let r = run(&scenario(&fleet(1000, 1, (100, 1, 1099), 60, 1)), 0);
    let (t, f) = failed(&r);
    let (add, within) = (3600.0, 3600.0);
    for (t, f) in t.iter().zip(&f) {
        if t + 360.0 <= add {
            assert_eq!(
                *f, 0.0,
                "no server fails before the addition (row at {t} s)"
            );
        } else if *t >= add + within {
            assert_eq!(
                *f,
                n + 1.0,
                "every server has failed by then (row at {t} s)"
            );
        } else {
            // The joining server fails at once (it knows the whole fleet); each of the n
            // others at a uniform time in [add, add + within]: over a row [x0, x1] (as
            // fractions of `within`) the mean count is 1 + n (x0 + x1) / 2. The empirical
            // count deviates by at most sqrt(n x (1 - x)) <= sqrt(n) / 2 = 15.8 (one
            // standard deviation); allow 5 of them.
            let x0 = (t - add) / within;
            let x1 = x0 + 0.1;
            let expected = 1.0 + n * (x0 + x1) / 2.0;
            let tol = 5.0 * n.sqrt() / 2.0;
            assert!(
                (f - expected).abs() < tol,
                "row at {t} s: {f} failed, uniform law {expected} +- {tol}"
            );
        }
    }
    // First failure at the addition (the row that starts then has some), last one before
    // the end of `within` (the row before it is not yet complete).
    let row = |at: f64| f[t.iter().position(|&x| x == at).unwrap()];
    assert!(row(add) > 0.0);
    assert!(row(add + within - 360.0) < n + 1.0);
}
