//! Crash loops in isolation: the restart herd's arithmetic, and the kill switch.

use super::*;
use crate::engine::time::SimTime;
use crate::scenario::Scenario;

const S: SimTime = 1_000_000_000;

/// A pool `storage` of `n` servers that read their data from `meta` when they start (each
/// read `read_s` seconds, enough workers for all at once: `sync::tests::scenario`) and
/// crash and restart after `retry` when that fails, with a crash loop over them at 10 s
/// (`event`: its other keys); `extra` more of the file.
fn scenario(n: u32, read_s: f64, retry: &str, event: &str, extra: &str) -> Scenario {
    crate::model::sync::tests::scenario(
        n,
        read_s,
        &format!("timeout = \"100s\"\non_start = true\non_failure = \"restart\"\nretry = {retry}"),
        &format!(
            "[event.bad-data]\nkind = \"crash_loop\"\npool = \"storage\"\nat = \"10s\"\n{event}\n{extra}"
        ),
    )
}

/// A crash loop at 10 s over 10 tasks whose reads take 1 s and that restart 2 s after a
/// crash (a cycle of 3 s).
fn looping(event: &str, extra: &str) -> Scenario {
    scenario(
        10,
        1.0,
        "{ backoff = \"constant\", base = \"2s\" }",
        event,
        extra,
    )
}

/// Servers of `storage` in service now.
fn in_service(sim: &Simulation) -> u32 {
    sim.pools[0].servers.len() as u32 - sim.pools[0].sync_out
}

/// Startup reads that have reached the store so far.
fn reads(sim: &Simulation) -> u64 {
    sim.pools[1].stats.sent
}

/// The reads reaching the store in each 1 s bin from 10 s (the crash) to 10 s + `bins`,
/// after `n` tasks crash at once and restart with `retry`.
fn reads_per_second(n: u32, retry: &str, bins: u64) -> Vec<u64> {
    // The loop lasts a microsecond: every task crashes at 10 s, and (but for the few
    // whose delay is under a microsecond) its first restart's read succeeds.
    let sc = scenario(n, 0.001, retry, "for = \"1us\"", "");
    let mut sim = Simulation::new(&sc, 0);
    sim.start_live();
    sim.advance_to(10 * S).unwrap();
    let mut last = reads(&sim);
    (1..=bins)
        .map(|b| {
            sim.advance_to((10 + b) * S).unwrap();
            let now = reads(&sim);
            let count = now - last;
            last = now;
            count
        })
        .collect()
}

#[test]
fn jittered_restarts_spread_the_herd_over_the_window_n_over_w_a_second() {
    // n tasks crash at the same instant and restart after a delay uniform over [0, W]
    // (`backoff = "constant"`, `base = W`, `jitter = "full"`): the reads reaching the
    // store in a 1 s bin inside the window are Binomial(n, 1/W), mean n/W, standard
    // deviation sqrt(n (1/W)(1 - 1/W)). Every bin must lie within 5 of them (the chance
    // that one of the 35 bins does not is below 1e-5; the seed is fixed, so the test
    // never flakes), so the peak rate falls as W grows, about as 1/W. Without jitter the
    // whole herd reads in the same instant: the peak is n.
    let n = 20_000u32;
    let mut peaks = Vec::new();
    for w in [5u64, 10, 20] {
        let bins = reads_per_second(
            n,
            &format!("{{ backoff = \"constant\", base = \"{w}s\", jitter = \"full\" }}"),
            w + 2,
        );
        let (inside, after) = bins.split_at(w as usize);
        let p = 1.0 / w as f64;
        let (mean, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
        for (i, &c) in inside.iter().enumerate() {
            assert!(
                (c as f64 - mean).abs() <= 5.0 * sd,
                "W = {w} s: {c} reads in second {i}, law {mean} +- {:.0}",
                5.0 * sd
            );
        }
        // Every task read once (a read in the loop's first microsecond crashes again and
        // reads once more: at most a few of them).
        let total: u64 = bins.iter().sum();
        assert!(
            (n as u64..n as u64 + 5).contains(&total),
            "W = {w} s: {total} reads for {n} tasks"
        );
        assert!(
            after.iter().all(|&c| c <= 5),
            "W = {w} s: reads after the window {after:?}"
        );
        peaks.push(*inside.iter().max().unwrap());
    }
    assert!(
        peaks.windows(2).all(|p| p[1] < p[0]),
        "peaks {peaks:?} do not fall as W grows"
    );
    // No jitter: every task restarts exactly `base` after the crash.
    let herd = reads_per_second(n, "{ backoff = \"constant\", base = \"5s\" }", 7);
    assert_eq!(herd.iter().max(), Some(&(n as u64)), "{herd:?}");
}

#[test]
fn no_task_serves_while_the_loop_is_on_and_every_one_after_the_kill_switch() {
    // 10 tasks, reads of 1 s, restarts 2 s after a crash: a cycle of 3 s. The loop starts
    // at 10 s and would last to 110 s; the kill switch at 50 s ends it for later syncs.
    let sc = looping(
        "for = \"100s\"",
        "[[at]]\ntime = \"50s\"\nset = { \"event.bad-data.enabled\" = false }\n",
    );
    let mut sim = Simulation::new(&sc, 0);
    sim.start_live();
    sim.advance_to(10 * S - 1).unwrap();
    assert_eq!(in_service(&sim), 10, "before the loop");
    let before = reads(&sim);
    for half in 20..100 {
        sim.advance_to(half * S / 2).unwrap();
        assert_eq!(
            in_service(&sim),
            0,
            "at {} s, in the loop",
            half as f64 / 2.0
        );
    }
    // Each task read its data about every 3 s, and crashed on it every time.
    let looped = reads(&sim) - before;
    assert!((120..=140).contains(&looped), "{looped} reads in 40 s");
    // Every task's next read after the switch succeeds: all serve within one cycle.
    sim.advance_to(53 * S + S / 10).unwrap();
    assert_eq!(in_service(&sim), 10, "one cycle after the kill switch");
    sim.advance_to(300 * S).unwrap();
    assert_eq!(in_service(&sim), 10, "to the end");
}

#[test]
fn the_loop_ends_at_its_end_without_a_kill_switch() {
    let sc = looping("for = \"30s\"", "");
    let mut sim = Simulation::new(&sc, 0);
    sim.start_live();
    sim.advance_to(40 * S - 1).unwrap();
    assert_eq!(in_service(&sim), 0, "just before the end of the loop");
    sim.advance_to(43 * S + S / 10).unwrap();
    assert_eq!(in_service(&sim), 10, "one cycle after its end");
}

#[test]
fn a_loop_switched_off_at_its_start_crashes_nothing() {
    // A feature flag off by default: the bad data is there, the code path is not.
    let sc = looping("for = \"30s\"\nenabled = false", "");
    let mut sim = Simulation::new(&sc, 0);
    sim.start_live();
    for t in [11, 20, 39, 60] {
        sim.advance_to(t * S).unwrap();
        assert_eq!(in_service(&sim), 10, "at {t} s");
    }
    assert_eq!(reads(&sim), 0, "nobody restarted, so nobody read");
}
