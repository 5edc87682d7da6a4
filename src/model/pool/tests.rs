use super::*;
use crate::engine::stream_rng;
use crate::scenario::Loader;

/// A pool of `shards` x (1 + `replicas`) one-worker servers.
fn pool(shards: u32, replicas: u32) -> PoolState {
    let text = format!(
        "duration = \"1s\"\n[class.c]\nrate = 1\nsteps = [{{ query = \"p\" }}]\n\
         [pool.p]\nshards = {shards}\nreplicas = {replicas}\n\
         service = {{ law = \"exp\", mean = \"1s\" }}\n"
    );
    let sc = Loader::from_text("t.toml", "t", text)
        .unwrap()
        .load(None, &[])
        .unwrap();
    PoolState::new(
        &sc.config.pools[0],
        stream_rng(1, 0, "p"),
        stream_rng(1, 0, "b"),
    )
}

/// Puts `n` jobs on server `s` (one in service, the rest queued).
fn load(p: &mut PoolState, s: usize, n: u32) {
    p.servers[s].busy = n.min(1);
    p.servers[s].queue = (0..n.saturating_sub(1)).collect();
}

fn picks(p: &mut PoolState, read: ReadPref, balance: Balance, k: usize) -> Vec<u32> {
    (0..k).map(|_| p.pick(1, read, 1_000, balance)).collect()
}

#[test]
fn round_robin_alternates_a_shards_replicas() {
    // Shard 1 of a 2 x (1 + 2) pool: servers 3 (primary), 4 and 5.
    let mut p = pool(2, 2);
    let rr = Balance::RoundRobin;
    assert_eq!(picks(&mut p, ReadPref::Replica, rr, 5), [4, 5, 4, 5, 4]);
    // The cursor is the shard's, an index into whichever candidates a read has: after
    // the replica at index 0, `any` (primary first) goes on from index 1.
    assert_eq!(picks(&mut p, ReadPref::Any, rr, 3), [4, 5, 3]);
    // A replica the view holds down is skipped; the primary when both are.
    p.servers[5].view_down = true;
    assert_eq!(picks(&mut p, ReadPref::Replica, rr, 3), [4, 4, 4]);
    p.servers[4].view_down = true;
    assert_eq!(picks(&mut p, ReadPref::Replica, rr, 2), [3, 3]);
    // `latency` with a slow primary falls to the replicas, in turn.
    p.servers[4].view_down = false;
    p.servers[5].view_down = false;
    p.servers[3].latency_ewma_ns = 5_000.0;
    assert_eq!(picks(&mut p, ReadPref::Latency, rr, 2), [5, 4]);
    assert_eq!(picks(&mut p, ReadPref::Primary, rr, 2), [3, 3]);
}

#[test]
fn least_outstanding_avoids_the_loaded_replica() {
    let mut p = pool(2, 2);
    load(&mut p, 4, 3);
    load(&mut p, 5, 1);
    let lo = Balance::LeastOutstanding;
    assert!(
        picks(&mut p, ReadPref::Replica, lo, 100)
            .iter()
            .all(|&s| s == 5)
    );
    // The idle primary is a candidate for `any`.
    assert!(
        picks(&mut p, ReadPref::Any, lo, 100)
            .iter()
            .all(|&s| s == 3)
    );
    let p2 = picks(&mut p, ReadPref::Replica, Balance::PowerOfTwo, 100);
    assert!(p2.iter().all(|&s| s == 5));
    // Random ignores load.
    let random = picks(&mut p, ReadPref::Replica, Balance::Random, 100);
    assert!(random.contains(&4) && random.contains(&5));
}

#[test]
fn a_shard_counts_all_its_servers_outstanding() {
    let mut p = pool(3, 1);
    // Shard 0: 2 + 0; shard 1: 0 + 3; shard 2: 1 + 0 (servers 2s, 2s + 1).
    load(&mut p, 0, 2);
    load(&mut p, 3, 3);
    load(&mut p, 4, 1);
    let lo = Balance::LeastOutstanding;
    assert!((0..50).all(|_| p.choose_shard(lo, 3) == 2));
    let rr: Vec<u32> = (0..4)
        .map(|_| p.choose_shard(Balance::RoundRobin, 3))
        .collect();
    assert_eq!(rr, [0, 1, 2, 0]);
    // A shard is held down only when all its servers are; when all are, the policy
    // chooses among all.
    p.servers[4].view_down = true;
    assert!((0..50).all(|_| p.choose_shard(lo, 3) == 2));
    p.servers[5].view_down = true;
    assert!((0..50).all(|_| p.choose_shard(lo, 3) == 0));
    for s in &mut p.servers {
        s.view_down = true;
    }
    assert!((0..50).all(|_| p.choose_shard(lo, 3) == 2));
}

#[test]
fn random_replica_reads_with_every_server_up_draw_as_uniform_up_does() {
    // The shortcut taken while nothing is held out or viewed down must draw exactly what
    // the general path draws from the pool's stream.
    // Shard 1 of a 2 x (1 + 3) pool: servers 4 (primary) and 5, 6, 7.
    let mut p = pool(2, 3);
    let mut rng = stream_rng(1, 0, "p");
    for _ in 0..200 {
        let want = 5 + uniform_up(&mut rng, 3, |_| true).unwrap();
        assert_eq!(p.pick(1, ReadPref::Replica, 1_000, Balance::Random), want);
    }
    // With a replica viewed down (after a crash and a refresh), the general path skips it.
    p.servers[5].down = true;
    p.refresh_view();
    assert_eq!(p.viewed_down, 1);
    assert!((0..200).all(|_| p.pick(1, ReadPref::Replica, 1_000, Balance::Random) != 5));
}

#[test]
fn the_viewed_down_count_follows_refreshes_and_standby() {
    let mut p = pool(3, 1);
    let count = |p: &PoolState| p.servers.iter().filter(|s| s.view_down).count() as u32;
    p.servers[0].down = true;
    p.servers[3].down = true;
    p.refresh_view();
    assert_eq!((p.viewed_down, count(&p)), (2, 2));
    p.set_standby(5, true);
    assert_eq!((p.viewed_down, count(&p)), (3, 3));
    p.set_standby(3, true); // down and viewed down already
    assert_eq!((p.viewed_down, count(&p)), (3, 3));
    p.set_standby(5, false);
    p.set_standby(3, false);
    assert_eq!((p.viewed_down, count(&p)), (1, 1));
}

/// Keyed fan-out decides its routing once a query (`key_route`, then `KeyRoute::server`
/// per key): each key must get the server `pick` gives it, drawing the same numbers, for
/// every read preference and balancing policy, with every server routable, a replica
/// viewed down, all of a shard's replicas viewed down, a server held out, and together;
/// replicated shards and single servers.
#[test]
fn a_key_route_gives_every_key_the_server_pick_gives() {
    use Balance::*;
    use ReadPref::*;
    for (shards, replicas) in [(3, 2), (2, 0)] {
        for state in 0..8 {
            for read in [Primary, Replica, Any, Latency] {
                for balance in [Random, RoundRobin, LeastOutstanding, PowerOfTwo] {
                    let mut a = pool(shards, replicas);
                    let n = a.servers.len();
                    load(&mut a, n - 1, 3);
                    if state & 1 != 0 {
                        a.servers[1].down = true;
                    }
                    if state & 4 != 0 && replicas > 0 {
                        a.servers[2].down = true; // shard 0 has no replica left
                    }
                    a.refresh_view();
                    if state & 2 != 0 {
                        a.servers[n - 2].ejected = true;
                        a.ejected += 1;
                    }
                    let mut b = a.clone();
                    let route = a.key_route(read, balance);
                    // One query of 300 keys: each shard's routable servers counted once.
                    let mut memo = crate::model::keys::UpMemo::default();
                    memo.start(shards);
                    for k in 0..300u32 {
                        let shard = k * 7 % shards;
                        assert_eq!(
                            route.server(&mut a, shard, read, 1_000, balance, &mut memo),
                            b.pick(shard, read, 1_000, balance),
                            "{shards} x (1 + {replicas}), state {state}, {read:?}, \
                             {balance:?}, key {k}"
                        );
                    }
                }
            }
        }
    }
}
