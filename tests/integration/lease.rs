//! Work with its own lease (`[pool.NAME.lease]`), in isolation: the law of congestive
//! collapse (issue 25) and what `drop` and `requeue_failed` do.
//!
//! **The law.** One server, FIFO, `c` workers, constant service `s`, lease `L`, and N
//! jobs all queued at time 0 (a burst; no client timeout, no retry, no other arrivals).
//! Job k (from 0) ends at (⌊k/c⌋ + 1)·s after it was queued, so exactly the first
//! `c·L/s` end within their lease. With `requeue`, each later one goes to the back with a
//! fresh lease and waits behind every job still in the system: it ends (n/c)·s after it was
//! re-queued, n the jobs in the system. So when more than c·L/s jobs are left after the
//! first pass (N > 2·c·L/s), no job ever ends within its lease again: goodput is exactly
//! zero for ever, and every service is wasted (c/s expiries per second). With N ≤ c·L/s
//! every job ends within its lease and the queue drains completely. With `drop`, the same
//! backlog drains at once: the first c·L/s succeed, the jobs in service when the lease
//! passes fail at their end, and the rest fail unserved at dequeue.
//! Constant service and a burst make every count exact: the tolerance is zero.

use crate::common::*;
use brink::model::RunResult;

/// c workers, service s = 1 s, lease L = 10 s: c·L/s = 40 for c = 4.
const WORKERS: u64 = 4;
const CAPACITY_TIMES_LEASE: u64 = 40;

fn backlog(jobs: u64, on_expiry: &str, duration: &str) -> RunResult {
    run(
        &scenario(&format!(
            r#"
duration = "{duration}"
[metrics]
step = "10s"
[class.work]
rate = 0                        # no arrivals of its own: the burst only
steps = [{{ query = "server" }}]
[pool.server]
workers = {WORKERS}
service = {{ law = "const", mean = "1s" }}
lease = {{ timeout = "10s", on_expiry = "{on_expiry}" }}
[event.backlog]
kind = "burst"
class = "work"
clients = {jobs}
at = "0s"
spread = "0s"
"#
        )),
        0,
    )
}

fn succeeded(r: &RunResult) -> u64 {
    r.summary.classes["work"].succeeded
}

fn expired(r: &RunResult) -> u64 {
    expired_in(r, "server")
}

fn expired_in(r: &RunResult, pool: &str) -> u64 {
    r.summary.pools[pool].lease_expired.unwrap()
}

#[test]
fn a_backlog_above_capacity_times_lease_never_ends_a_job_within_its_lease_again() {
    for jobs in [2 * CAPACITY_TIMES_LEASE + WORKERS, 200, 1000] {
        let r = backlog(jobs, "requeue", "1h");
        let w = &r.summary.classes["work"];
        // The first pass's c·L/s, then nothing for the rest of the hour.
        assert_eq!(succeeded(&r), CAPACITY_TIMES_LEASE, "backlog {jobs}");
        assert_eq!((w.failed, w.in_flight), (0, jobs - CAPACITY_TIMES_LEASE));
        let good = mean_between(&r, "work.goodput_per_s", 60.0, 3600.0);
        assert_eq!(good, 0.0, "backlog {jobs}: goodput after the first minute");
        // Every service after the first pass is wasted: c/s = 4 expiries a second.
        let wasted = mean_between(&r, "server.lease_expired_per_s", 60.0, 3600.0);
        assert_eq!(wasted, WORKERS as f64, "backlog {jobs}");
        assert_eq!(
            expired(&r),
            r.summary.pools["server"].served - CAPACITY_TIMES_LEASE
        );
    }
}

#[test]
fn a_backlog_within_capacity_times_lease_drains_completely() {
    let r = backlog(CAPACITY_TIMES_LEASE, "requeue", "1m");
    let w = &r.summary.classes["work"];
    assert_eq!((w.succeeded, w.failed, w.in_flight), (40, 0, 0));
    assert_eq!(expired(&r), 0);
    assert_eq!(r.summary.pools["server"].served, 40);
}

#[test]
fn drop_drains_the_same_backlog_with_the_expired_jobs_failed() {
    let jobs = 200;
    let r = backlog(jobs, "drop", "1m");
    let w = &r.summary.classes["work"];
    // 40 within the lease; the 4 started at 10 s end at 11 s, past it; the rest are
    // dropped unserved at 11 s.
    assert_eq!((w.succeeded, w.failed, w.in_flight), (40, jobs - 40, 0));
    assert_eq!(expired(&r), jobs - 40);
    assert_eq!(r.summary.pools["server"].served, 44);
    assert_eq!(mean_between(&r, "server.queue_len", 20.0, 60.0), 0.0);
}

#[test]
fn a_lease_shorter_than_the_service_costs_service_time_at_every_attempt() {
    // Lease 1 ns, service 1 s: every attempt is wasted, but each costs its second, so an
    // hour holds c × 3600 services, not an endless loop at one instant.
    let r = run(
        &scenario(
            r#"
duration = "1h"
[class.work]
rate = 0                        # no arrivals of its own: the burst only
steps = [{ query = "server" }]
[pool.server]
workers = 4
service = { law = "const", mean = "1s" }
lease = { timeout = "1ns" }
[event.backlog]
kind = "burst"
class = "work"
clients = 10
at = "0s"
spread = "0s"
"#,
        ),
        0,
    );
    assert_eq!(succeeded(&r), 0);
    assert_eq!(expired(&r), 4 * 3600);
}

/// A manager pool (8 workers, 100 ms a job) with `lease`, whose every job calls a
/// database, with the `[event.*]` text `events`; 2 requests a second for 20 minutes.
fn manager_and_db(lease: &str, events: &str) -> RunResult {
    run(
        &scenario(&format!(
            r#"
duration = "20m"
[class.work]
rate = 2
steps = [{{ query = "manager" }}]
[pool.manager]
workers = 8
service = {{ law = "const", mean = "100ms" }}
lease = {lease}
[[pool.manager.calls]]
query = "db"
[pool.db]
workers = 8
service = {{ law = "const", mean = "10ms" }}
{events}
"#
        )),
        0,
    )
}

#[test]
fn a_failed_call_stays_with_the_server_and_succeeds_once_the_dependency_is_back() {
    // Work that calls a database out for 10 minutes goes back to the queue 30 s after
    // each failed call: no request fails, each waits for the outage's end.
    let r = manager_and_db(
        r#"{ timeout = "1m", requeue_failed = "30s" }"#,
        r#"[event.db-out]
kind = "outage"
pool = "db"
at = "1m"
for = "10m""#,
    );
    let w = &r.summary.classes["work"];
    assert_eq!(w.failed, 0);
    assert!(w.succeeded > 2 * 60 * 15, "succeeded {}", w.succeeded);
    let during = mean_between(&r, "work.goodput_per_s", 120.0, 600.0);
    assert_eq!(during, 0.0, "nothing succeeds while the database is out");
    // The work held during the outage ends within 30 s of its end.
    let after = mean_between(&r, "work.goodput_per_s", 660.0, 720.0);
    assert!(
        after > 2.0 * 5.0,
        "the held work ends after the outage: {after}/s"
    );
    assert_eq!(expired_in(&r, "manager"), 0);
}

#[test]
fn held_work_whose_server_is_down_when_its_delay_ends_fails() {
    // The database is out for the first 5 minutes, so every job is held for 1 minute
    // after its failed call; the manager's only server is down from 30 s to 5 min 30 s.
    // The work held when it went down comes back to a dead server and fails (counted as
    // dropped), as its queued work would have; nothing stays in flight.
    let r = manager_and_db(
        r#"{ timeout = "1m", requeue_failed = "1m" }"#,
        r#"[event.db-out]
kind = "outage"
pool = "db"
at = "0s"
for = "5m"
[event.manager-down]
kind = "crash"
pool = "manager"
shard = 0
at = "30s"
for = "5m""#,
    );
    let w = &r.summary.classes["work"];
    let m = &r.summary.pools["manager"];
    // The arrivals of the first 30 s (about 60) were held; they fail at the end of their
    // delay.
    assert!(
        m.dropped >= 30,
        "held work failed on the dead server: {}",
        m.dropped
    );
    assert_eq!(w.in_flight, 0);
    assert_eq!(w.admitted, w.succeeded + w.failed);
    // After both are back, everything succeeds (2 requests a second).
    let good = mean_between(&r, "work.goodput_per_s", 360.0, 1200.0);
    assert!(good > 1.6, "goodput after recovery {good}");
}
