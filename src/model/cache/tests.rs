//! Unit tests of `cache.rs`.

use super::*;
use crate::engine::stream_rng;

fn tier(nodes: u32, spares: u32) -> CacheState {
    let cfg = CacheCfg {
        name: "c".into(),
        nodes,
        spares,
        keys: 100_000,
        zipf: None,
        ttl_ns: None,
        ttl_refresh: TtlRefresh::Fill,
        warm: 1.0,
        vnodes: 64,
        detect_after_ns: Some(10),
        target: None,
        coalesce: false,
        refresh_ahead: None,
        ttl_jitter: None,
    };
    CacheState::new(&cfg, stream_rng(1, 0, "c"))
}

/// The walk `route` did before the live-position tree: O(ring) per lookup.
fn route_by_walk(c: &CacheState, key: u32) -> u16 {
    let home = c.key[key as usize].home;
    if !c.slots[home as usize].down {
        return home;
    }
    let start = ring_index(&c.ring, mix(key as u64));
    for i in 0..c.ring.len() {
        let s = c.ring[(start + i) % c.ring.len()].1;
        if !c.slots[s as usize].down {
            return s;
        }
    }
    home
}

#[test]
fn routing_around_down_slots_picks_the_slot_the_ring_walk_picks() {
    let mut rng = stream_rng(7, 0, "test");
    let mut c = tier(30, 0);
    // Random slots leave the ring and come back, down to none live and up again.
    for round in 0..200 {
        let s = rng.random_range(0..30usize);
        if c.slots[s].down && round % 3 != 0 {
            c.rejoin(s);
        } else if !c.slots[s].down {
            let t = c.leave(s, false);
            c.detect(s, t);
        }
        if round == 100 {
            for s in 0..30 {
                let t = c.leave(s, false);
                c.detect(s, t);
            }
        }
        for k in (0..100_000).step_by(97) {
            assert_eq!(c.route(k), route_by_walk(&c, k), "round {round}, key {k}");
        }
    }
}

#[test]
fn consistent_hashing_spreads_keys_evenly() {
    let c = tier(20, 0);
    let mut per = vec![0u32; 20];
    for k in 0..100_000 {
        per[c.route(k) as usize] += 1;
    }
    // 64 virtual nodes per slot: every slot within 40% of the mean 5000.
    assert!(per.iter().all(|&n| (3000..7000).contains(&n)), "{per:?}");
}

#[test]
fn a_spare_swap_loses_exactly_one_slots_keys() {
    let mut c = tier(10, 1);
    let owned: Vec<u32> = (0..100_000).filter(|&k| c.route(k) == 3).collect();
    let t = c.leave(3, true);
    assert!(
        (0..100_000).all(|k| c.lookup(k, 0)),
        "a short leave costs nothing"
    );
    c.detect(3, t);
    let lost = (0..100_000).filter(|&k| !c.lookup(k, 0)).count();
    assert_eq!(lost, owned.len());
    c.rejoin(3);
    assert_eq!(c.spares, 1, "the flushed node becomes a spare");
    for &k in &owned {
        c.fill(k, 0);
    }
    assert!((0..100_000).all(|k| c.lookup(k, 0)));
}

#[test]
fn without_spares_keys_remap_and_the_node_returns_flushed() {
    let mut c = tier(10, 0);
    let owned: Vec<u32> = (0..100_000).filter(|&k| c.route(k) == 4).collect();
    let t = c.leave(4, false);
    c.detect(4, t);
    assert!(owned.iter().all(|&k| c.route(k) != 4));
    c.rejoin(4);
    assert!(owned.iter().all(|&k| c.route(k) == 4 && !c.lookup(k, 0)));
}

#[test]
fn a_jittered_ttl_is_uniform_between_its_bounds() {
    // Law: ttl·(1 − j·u) for u uniform in [0, 1) is uniform in (ttl·(1 − j), ttl], mean
    // ttl·(1 − j/2). Over an even grid of 10,000 u the mean is exact to 1 ns a step.
    let (ttl, j) = (30_000_000_000u64, 0.2);
    let n = 10_000;
    let ttls: Vec<u64> = (0..n)
        .map(|i| jittered(ttl, j, i as f64 / n as f64))
        .collect();
    assert_eq!(ttls[0], ttl);
    assert!(ttls.iter().all(|&t| t > 24_000_000_000 && t <= ttl));
    let mean = ttls.iter().sum::<u64>() as f64 / n as f64;
    let law = ttl as f64 * (1.0 - j / 2.0) + ttl as f64 * j / (2.0 * n as f64);
    assert!((mean - law).abs() <= 1.0, "mean {mean}, law {law}");
    // Never 0, whatever the draw.
    assert_eq!(jittered(1, 0.999, 0.999_999), 1);
}

#[test]
fn a_fill_in_flight_has_one_leader_and_hands_its_waiters_over_once() {
    let mut c = tier(2, 0);
    assert!(!c.filling(7));
    c.lead(7, 1);
    c.lead(7, 2); // a second query of the key does not take the lead
    assert!(c.filling(7));
    c.wait(7, 3, 30);
    c.wait(7, 4, 40);
    assert_eq!(c.land(7, 2), None, "only the leader lands the fill");
    assert_eq!(c.land(7, 1), Some(vec![(3, 30), (4, 40)]));
    assert!(!c.filling(7));
    assert_eq!(c.land(7, 1), None);
}
