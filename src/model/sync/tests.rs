//! Laws of the server sync in isolation, on small deterministic pools (constant service
//! times, no client load unless a test needs it).

use super::*;
use crate::model::pool::Job;
use crate::scenario::{Loader, Scenario};

const S: SimTime = 1_000_000_000;

/// A pool `storage` of `n` one-worker servers whose sync queries `meta` (enough workers
/// for every sync at once, constant service time `meta_s` seconds); `sync` is the sync
/// table's extra keys, `extra` more of the file.
pub(in crate::model) fn scenario(n: u32, meta_s: f64, sync: &str, extra: &str) -> Scenario {
    let meta = format!("workers = 100000\nservice = {{ law = \"const\", mean = \"{meta_s}s\" }}");
    load(n, &meta, sync, extra)
}

/// The scenario of [`scenario`] with `meta` as the `[pool.meta]` table's keys.
fn load(n: u32, meta: &str, sync: &str, extra: &str) -> Scenario {
    let text = format!(
        "duration = \"1000s\"\n\
         [class.read]\nrate = 0\nsteps = [{{ query = \"storage\" }}]\n\
         [pool.storage]\nshards = {n}\nservice = {{ law = \"const\", mean = \"1ms\" }}\n\
         [pool.storage.sync]\npool = \"meta\"\n{sync}\n\
         [pool.meta]\n{meta}\n\
         {extra}"
    );
    Loader::from_text("t.toml", "t", text)
        .unwrap()
        .load(None, &[])
        .unwrap()
}

/// Servers in service now.
fn in_service(sim: &Simulation) -> u32 {
    sim.pools[0].servers.len() as u32 - sim.pools[0].sync_out
}

/// A run of `sc` whose servers of `storage` all restart at time 0 (with `on_start`,
/// each syncs before it serves).
fn restarted(sc: &Scenario) -> Simulation<'_> {
    let mut sim = Simulation::new(sc, 0);
    sim.start_live();
    for s in 0..sim.pools[0].servers.len() as u32 {
        sim.server_restarted(0, s);
    }
    sim
}

#[test]
fn max_concurrent_brings_servers_into_service_in_waves_of_k() {
    // n servers restart at once; k syncs of s seconds at a time: wave w is in service
    // exactly at w x s, the last at ceil(n / k) x s.
    let (n, k, s) = (10u32, 3u32, 2);
    let sc = scenario(
        n,
        s as f64,
        &format!("timeout = \"10s\"\non_start = true\nmax_concurrent = {k}"),
        "",
    );
    let mut sim = restarted(&sc);
    assert_eq!(in_service(&sim), 0);
    assert_eq!(sim.pools[0].syncing, k);
    let waves = n.div_ceil(k);
    for w in 1..=waves {
        let t = w as SimTime * s * S;
        sim.advance_to(t - 1).unwrap();
        assert_eq!(in_service(&sim), (w - 1) * k, "just before wave {w}");
        sim.advance_to(t + 1).unwrap();
        assert_eq!(in_service(&sim), (w * k).min(n), "just after wave {w}");
    }
    assert_eq!(in_service(&sim), n);
    assert_eq!(sim.pools[0].syncing, 0);
}

#[test]
fn routine_syncs_reach_the_store_at_a_steady_rate_of_n_per_period() {
    // 7 servers every 10 s, phases spread evenly: each period of 10 s holds exactly 7
    // syncs, whichever period, and never two at the same instant.
    let (n, every) = (7u64, 10);
    let sc = scenario(
        n as u32,
        0.5,
        &format!("timeout = \"5s\"\nevery = \"{every}s\""),
        "",
    );
    let mut sim = Simulation::new(&sc, 0);
    sim.start_live();
    let mut last = 0;
    for period in 1..=20u64 {
        // Past each period's last sync (at period x every exactly).
        sim.advance_to(period * every * S + 1).unwrap();
        let sent = sim.pools[1].stats.sent;
        assert_eq!(sent - last, n, "period {period}");
        last = sent;
        // At most one sync of 0.5 s is in flight: their phases are 10/7 s apart.
        assert!(sim.pools[0].syncing <= 1);
    }
    assert_eq!(in_service(&sim), n as u32);
    assert_eq!(sim.pools[0].stats.syncs_failed, 0);
}

#[test]
fn a_sync_slower_than_its_timeout_never_brings_its_server_into_service() {
    // The store takes 3 s; the restarted server waits 2 s, fails, stays out and retries
    // after 1 s (constant), while the store keeps serving what nobody waits for.
    let sc = scenario(
        4,
        3.0,
        "timeout = \"2s\"\non_start = true\nretry = { backoff = \"constant\", base = \"1s\" }",
        "",
    );
    let mut sim = restarted(&sc);
    for t in [1, 10, 100, 500] {
        sim.advance_to(t * S).unwrap();
        assert_eq!(in_service(&sim), 0, "at {t} s");
    }
    // Each server fails at 2 s, then every 3 s (1 s delay + 2 s timeout): at 2, 5, ...,
    // 497 s before 500 s, 166 times.
    let failed = sim.pools[0].stats.syncs_failed;
    assert_eq!(failed, 4 * 166);
    // The store served every sync nobody waited for.
    assert!(sim.pools[1].stats.served >= failed);
}

#[test]
fn a_sync_in_time_puts_a_stepped_out_server_back() {
    // Restarted servers whose sync of 2.5 s answers within its 3 s come into service then.
    let sc = scenario(4, 2.5, "timeout = \"3s\"\non_start = true", "");
    let mut sim = restarted(&sc);
    sim.advance_to(2 * S).unwrap();
    assert_eq!(in_service(&sim), 0);
    sim.advance_to(3 * S).unwrap();
    assert_eq!(in_service(&sim), 4);
    assert_eq!(sim.pools[0].stats.syncs_failed, 0);
}

#[test]
fn a_pause_holds_every_sync_until_an_intervention_lifts_it() {
    // max_concurrent = 0: the servers wait their turn until [[at]] 50 s allows 2 at once.
    let sc = scenario(
        4,
        1.0,
        "timeout = \"5s\"\non_start = true\nmax_concurrent = 0",
        "[[at]]\ntime = \"50s\"\nset = { \"pool.storage.sync.max_concurrent\" = 2 }\n",
    );
    let mut sim = restarted(&sc);
    sim.advance_to(50 * S - 1).unwrap();
    assert_eq!((in_service(&sim), sim.pools[0].syncing), (0, 0));
    sim.advance_to(51 * S + 1).unwrap();
    assert_eq!(in_service(&sim), 2);
    sim.advance_to(52 * S + 1).unwrap();
    assert_eq!(in_service(&sim), 4);
}

#[test]
fn growth_carries_the_cost_past_the_timeout_at_the_drifting_size() {
    // Cost 1 s x growth 1 -> 3 over 100 s against a 2 s timeout: routine syncs succeed
    // until the factor reaches 2 (t = 50 s), then fail and the servers step out.
    let sc = scenario(
        5,
        1.0,
        "timeout = \"2s\"\nevery = \"5s\"\nretry = { backoff = \"constant\", base = \"1s\" }\n\
         growth = { points = [[\"0s\", 1.0], [\"100s\", 3.0]] }",
        "",
    );
    let mut sim = Simulation::new(&sc, 0);
    sim.start_live();
    sim.advance_to(45 * S).unwrap();
    assert_eq!(in_service(&sim), 5);
    assert_eq!(sim.pools[0].stats.syncs_failed, 0);
    sim.advance_to(65 * S).unwrap();
    assert_eq!(in_service(&sim), 0);
}

#[test]
fn a_resync_event_starts_the_first_fraction_of_the_servers_at_once_or_spread() {
    // Half of 10 servers sync at 10 s: 5 syncs in flight at once.
    let event =
        "[event.cut]\nkind = \"resync\"\npool = \"storage\"\nat = \"10s\"\nfraction = 0.5\n";
    let sc = scenario(10, 1.0, "timeout = \"5s\"", event);
    let mut sim = Simulation::new(&sc, 0);
    sim.start_live();
    sim.advance_to(10 * S).unwrap();
    assert_eq!(sim.pools[0].syncing, 5);
    // Spread over 5 s: one a second.
    let sc = scenario(
        10,
        0.5,
        "timeout = \"5s\"",
        &format!("{event}for = \"5s\"\n"),
    );
    let mut sim = Simulation::new(&sc, 0);
    sim.start_live();
    for i in 0..5u64 {
        sim.advance_to((10 + i) * S + 1).unwrap();
        assert_eq!(sim.pools[0].stats.syncs, i + 1);
        assert_eq!(sim.pools[0].syncing, 1);
    }
}

#[test]
fn restart_on_failure_crashes_the_server_and_brings_it_back_after_the_delay() {
    // A store slower than the timeout: each failed sync crashes its server (down), which
    // restarts 1 s later and syncs again.
    let sc = scenario(
        1,
        3.0,
        "timeout = \"2s\"\non_start = true\non_failure = \"restart\"\n\
         retry = { backoff = \"constant\", base = \"1s\" }",
        "",
    );
    let mut sim = restarted(&sc);
    sim.advance_to(2 * S + 1).unwrap();
    assert!(sim.pools[0].servers[0].down);
    assert_eq!(in_service(&sim), 0);
    sim.advance_to(3 * S + 1).unwrap();
    assert!(!sim.pools[0].servers[0].down);
    assert_eq!(sim.pools[0].syncing, 1);
    assert_eq!(in_service(&sim), 0);
}

#[test]
fn work_sent_to_a_server_out_of_service_fails_at_once() {
    let sc = scenario(1, 3.0, "timeout = \"2s\"\non_start = true", "");
    let mut sim = restarted(&sc);
    let job = Job {
        pool: 0,
        endpoint: 0,
        server: 0,
        req: 0,
        token: 0,
        enqueued: 0,
        started: 0,
        deadline: SimTime::MAX,
        cost: 1.0,
        keys: 1,
        propagated: false,
    };
    assert_eq!(sim.send::<false>(0, job), Err(Failure::Error));
    assert_eq!(sim.pools[0].stats.failed_fast, 1);
}

#[test]
fn first_routine_phases_are_spread_over_one_period() {
    let at: Vec<SimTime> = (0..4).map(|s| first_routine(100, s, 4)).collect();
    assert_eq!(at, [25, 50, 75, 100]);
}

#[test]
fn sizes_spread_evenly_over_the_servers_and_over_any_first_share() {
    // Every size within 1 -+ spread; the mean of the first k servers within
    // 2 spread x ln(k) / k of 1 for every k from 2 to 1000 (a low-discrepancy sequence: its
    // discrepancy falls as ln(k) / k, where k random draws would give 1 / sqrt(k); measured
    // at most 0.55 of the bound), and the sizes of 1000 servers fill each tenth of the
    // range with 100 +- 2.
    let spread = 0.5;
    let sizes: Vec<f64> = (0..1000).map(|s| size_factor(spread, s)).collect();
    assert!(sizes.iter().all(|&x| (0.5..1.5).contains(&x)));
    for k in 2..=1000 {
        let mean = sizes[..k].iter().sum::<f64>() / k as f64;
        let bound = 2.0 * spread * (k as f64).ln() / k as f64;
        assert!((mean - 1.0).abs() <= bound, "first {k}: mean {mean}");
    }
    for tenth in 0..10 {
        let lo = 0.5 + tenth as f64 * 0.1;
        let n = sizes.iter().filter(|&&x| x >= lo && x < lo + 0.1).count();
        assert!((98..=102).contains(&n), "tenth {tenth}: {n}");
    }
    assert_eq!(size_factor(0.0, 7), 1.0);
}

#[test]
fn segmented_syncs_go_to_the_servers_own_shard() {
    // 8 servers, a store of 4 one-worker shards: with `segment` server i asks shard
    // i mod 4, so each shard holds exactly two syncs (one in service, one queued).
    let meta = "shards = 4\nservice = { law = \"const\", mean = \"1s\" }";
    let sc = load(
        8,
        meta,
        "timeout = \"5s\"\non_start = true\nsegment = true",
        "",
    );
    let sim = restarted(&sc);
    let held: Vec<usize> = sim.pools[1]
        .servers
        .iter()
        .map(|s| s.busy as usize + s.queue.len())
        .collect();
    assert_eq!(held, [2, 2, 2, 2]);
}
