//! Deadline propagation (`deadline = "propagate"` on a pool's call): a call's timeout is
//! its own or its caller's remaining time, whichever ends first; work below whose deadline
//! has passed is dropped, not served; `started_late` counts the jobs a pool began after the
//! client at the top had given up.

use crate::common::*;

/// One request at 100 ms (client timeout 1 s) through `edge` (const 1 ms) to `api` (const
/// 3 s), the call timing out after `own` with `deadline = mode`.
fn one(own: &str, mode: &str) -> brink::model::RunResult {
    let text = format!(
        "duration = \"10s\"\n[class.c]\nrate = 0\ntimeout = \"1s\"\nsteps = [{{ query = \"edge\" }}]\n\
         [pool.edge]\nservice = {{ law = \"const\", mean = \"1ms\" }}\n\
         [[pool.edge.calls]]\nquery = \"api\"\ntimeout = \"{own}\"\ndeadline = \"{mode}\"\n\
         [pool.api]\nservice = {{ law = \"const\", mean = \"3s\" }}\n\
         [event.b]\nkind = \"burst\"\nclass = \"c\"\nclients = 1\nat = \"100ms\"\nspread = \"1us\"\n"
    );
    run(&scenario(&text), 0)
}

#[test]
fn a_propagated_calls_timeout_is_the_shorter_of_its_own_and_the_callers_remaining() {
    // The edge job holds its worker from the request's arrival: 1 ms of its own service,
    // then the call until it ends. Its sojourn is 1 ms + the call's effective timeout.
    let edge = |own, mode| one(own, mode).summary.pools["edge"].mean_sojourn_s;
    // Own timeout 5 s, caller's remaining 1 s - 1 ms: the caller's (the client's deadline).
    assert!((edge("5s", "propagate") - 1.0).abs() < 1e-9);
    // Own 500 ms, shorter than the remaining: its own.
    assert!((edge("500ms", "propagate") - 0.501).abs() < 1e-9);
    // Not propagated: the call waits out the api's 3 s (shorter than its own 5 s).
    assert!((edge("5s", "own") - 3.001).abs() < 1e-9);
}

#[test]
fn a_propagated_deadline_ends_the_calls_below_the_client() {
    let r = one("5s", "propagate");
    let call = &r.summary.calls["edge.api"];
    assert_eq!((call.succeeded, call.failed), (0, 1));
    // Started in time, the api's job is not late (it is served all the same: work in
    // service is not cancelled).
    assert_eq!(r.summary.pools["api"].started_late, Some(0));
    assert_eq!(r.summary.pools["api"].served, 1);
}

#[test]
fn with_propagation_no_work_starts_after_the_clients_deadline() {
    // The cascade under its trigger: without propagation the db serves thousands of
    // queries for clients that have left; with it, not one (exactly 0, by construction:
    // a job past its deadline is dropped, and every deadline below is at most the
    // client's), and the dropped work is counted as `expired`.
    let base = run(&bundled("timeout-cascade", None, &[]), 0);
    let late = base.summary.pools["db"].started_late.unwrap();
    assert!(
        late > 1000,
        "db jobs started late without propagation: {late}"
    );
    let fixed = run(&bundled("timeout-cascade", Some("propagate"), &[]), 0);
    for p in ["edge", "api", "db"] {
        assert_eq!(fixed.summary.pools[p].started_late, Some(0), "{p}");
    }
    assert!(fixed.summary.pools["db"].expired > 0);
    // A scenario whose calls say nothing of deadlines reports no such count.
    let tpe = run(
        &bundled("thread-pool-exhaustion", None, &["duration=10s"]),
        0,
    );
    assert_eq!(tpe.summary.pools["api"].started_late, None);
}
