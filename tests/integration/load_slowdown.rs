//! The load slowdown of a pool (`slowdown = { with, per, max }`) through the request flow:
//! a burst of 5 requests reaches an idle one-worker server of const 10 ms service within a
//! microsecond, so the order of service and the state each job starts in are known, and
//! the busy time and the completion times follow exactly.

use crate::common::*;

/// Five requests at 100 ms (within 1 us) to a const-10 ms server whose slowdown is `slow`.
fn burst(slow: &str) -> brink::model::RunResult {
    let text = format!(
        "duration = \"1s\"\n[class.c]\nrate = 0\nsteps = [{{ query = \"p\" }}]\n\
         [pool.p]\nservice = {{ law = \"const\", mean = \"10ms\" }}\n{slow}\n\
         [event.b]\nkind = \"burst\"\nclass = \"c\"\nclients = 5\nat = \"100ms\"\nspread = \"1us\"\n"
    );
    run(&scenario(&text), 0)
}

#[test]
fn in_flight_slowdown_gives_the_exact_busy_time_and_completions() {
    // The first job starts alone (x1, 10 ms); when it ends, 4 wait: the next starts with 3
    // others held (x4, 40 ms), then x3, x2, x1. Busy 10 + 40 + 30 + 20 + 10 = 110 ms of the
    // 1 s run; completions at 10, 50, 80, 100, 110 ms after the burst: mean sojourn 70 ms
    // less the arrivals' spread (under 1 us).
    let r = burst("slowdown = { with = \"in_flight\", per = 1, max = 1000 }");
    let p = &r.summary.pools["p"];
    assert_eq!(p.served, 5);
    assert!((p.utilization - 0.110).abs() < 1e-12, "{}", p.utilization);
    assert!(
        (p.mean_sojourn_s - 0.070).abs() < 1e-6,
        "{}",
        p.mean_sojourn_s
    );
    // Without the key: 5 x 10 ms.
    let plain = burst("");
    assert!((plain.summary.pools["p"].utilization - 0.050).abs() < 1e-12);
}

#[test]
fn queue_slowdown_counts_only_the_waiting_and_is_capped() {
    // `queue`: the second job starts with 3 queued (1 + 0.5 x 3 = 2.5, capped at 2), then
    // 2 (x2), 1 (x1.5), 0 (x1): busy 10 + 20 + 20 + 15 + 10 = 75 ms.
    let r = burst("slowdown = { with = \"queue\", per = 0.5, max = 2 }");
    let u = r.summary.pools["p"].utilization;
    assert!((u - 0.075).abs() < 1e-12, "{u}");
}
