//! A per-server resource that grows with the fleet against a fixed limit
//! (`[pool.NAME.peers]`; the Kinesis front end of November 2020): each server of the fleet
//! holds `base + per_peer x (N - 1)` threads, N the fleet size it has learned, and a
//! server past `limit` fails: its shard map cannot be built, so it answers every query
//! with an error at once (it is down) and stays so until it is restarted, even if the
//! fleet shrinks again ("removing the added servers did not bring service back by itself").
//!
//! The fleet is the pool's first servers; its last `standby` servers start outside it
//! (held out of routing, down). An `add_servers` event moves standby servers in (one at a
//! time over its `spread`) and out again at its end, the last to join leaving first;
//! interventions cannot change structure, so the fleet size is state, not a parameter. Each
//! change is a new version of the membership: a joining server knows it at once; every
//! other server of the fleet learns it after its own delay, uniform in
//! [0, `learn_within`] (one draw per server per change, from the `peers.<pool>` stream, so
//! the pool's own draws stay as they were). A server that learns a version takes it whole
//! (it knows every change up to it; a late message about an older version changes
//! nothing). A `restart` event restarts the whole fleet: every server's work fails, it
//! learns the membership as it is now and holds its threads anew, and fails again at once
//! if they are still past the limit.

use super::event::Event;
use super::simulation::Simulation;
use crate::engine::Rng;
use crate::scenario::{PeersCfg, TriggerKind};
use rand::RngExt;

/// The threads a server holds when it knows `peers` servers of its cell (itself
/// included).
pub fn threads(cfg: &PeersCfg, peers: u32) -> u64 {
    cfg.base
        .saturating_add(cfg.per_peer.saturating_mul(peers.saturating_sub(1) as u64))
}

/// The servers of cell `cell` (of `cells`) in a fleet of `size`: the fleet's servers are
/// dealt to the cells in turn (server `s` to cell `s mod cells`).
pub fn cell_size(size: u32, cells: u32, cell: u32) -> u32 {
    (size + cells - 1 - cell) / cells
}

/// The law: server `s`, which knows a fleet of `known` servers, can build its shard map.
pub fn fits(cfg: &PeersCfg, known: u32, s: u32) -> bool {
    threads(cfg, cell_size(known, cfg.cells, s % cfg.cells)) <= cfg.limit
}

/// The fleet of a pool with `peers`: its size, the versions of its membership, what each
/// server has learned and which servers have failed.
#[derive(Clone, Debug)]
pub struct Fleet {
    /// Servers in the fleet now: the pool's servers `0 .. size`; the rest are standby.
    pub size: u32,
    /// The fleet size of each version of the membership (version 0: the start).
    sizes: Vec<u32>,
    /// The version each server has learned.
    learned: Vec<u32>,
    /// Servers failed at their limit (until restarted).
    failed: Vec<bool>,
    /// Servers each `add_servers` trigger has moved into the fleet and not yet out.
    joined: Vec<u32>,
    /// The `peers.<pool>` stream: each server's delay in learning a change.
    pub(super) rng: Rng,
}

impl Fleet {
    /// The fleet of a pool of `servers` servers, `cfg.standby` of them outside it, in a
    /// scenario of `triggers` triggers.
    pub fn new(cfg: &PeersCfg, servers: u32, triggers: usize, rng: Rng) -> Self {
        let size = servers - cfg.standby;
        Self {
            size,
            sizes: vec![size],
            learned: vec![0; servers as usize],
            failed: vec![false; servers as usize],
            joined: vec![0; triggers],
            rng,
        }
    }

    /// The latest version of the membership.
    fn version(&self) -> u32 {
        self.sizes.len() as u32 - 1
    }

    /// The fleet size server `s` knows.
    pub fn known(&self, s: u32) -> u32 {
        self.sizes[self.learned[s as usize] as usize]
    }

    /// Server `s` has failed at its limit and not been restarted since.
    pub fn failed(&self, s: u32) -> bool {
        self.failed[s as usize]
    }
}

impl Simulation<'_> {
    /// At the start: the standby servers are out of the fleet, and every server of the
    /// fleet whose threads are already past the limit fails.
    pub(super) fn start_fleets(&mut self) {
        for p in 0..self.pools.len() {
            let Some(f) = &self.pools[p].fleet else {
                continue;
            };
            let size = f.size;
            let pool = &mut self.pools[p];
            for s in size as usize..pool.servers.len() {
                pool.set_standby(s, true);
            }
            pool.integrate_capacity(self.now);
            pool.up = size;
            pool.live = size;
            for s in 0..size {
                self.check_threads(p, s);
            }
        }
    }

    /// An intervention changed pool `p`'s `peers` (a limit raised or lowered): every
    /// server of the fleet is checked against it; a failed one stays failed.
    pub(super) fn recheck_fleet(&mut self, p: usize) {
        let size = self.pools[p].fleet.as_ref().map_or(0, |f| f.size);
        for s in 0..size {
            self.check_threads(p, s);
        }
    }

    /// Server `s` of pool `p` fails if the threads of the fleet it knows pass the limit.
    fn check_threads(&mut self, p: usize, s: u32) {
        let cfg = self.cfg.pools[p]
            .peers
            .expect("a pool with a fleet has peers");
        let f = self.pools[p].fleet.as_ref().expect("checked");
        if !f.failed(s) && !fits(&cfg, f.known(s), s) {
            let pool = &mut self.pools[p];
            pool.integrate_held_out(self.now);
            pool.failed += 1;
            pool.fleet.as_mut().expect("checked").failed[s as usize] = true;
            self.crash_server(p, s);
        }
    }

    /// An `add_servers` trigger `e` starts: its first server joins now, the next ones one
    /// every `spread / (count - 1)`, the last at `spread`.
    pub(super) fn add_servers_start(&mut self, e: usize) {
        self.join_next(e, 0);
    }

    /// Server `k` (from 0) of `add_servers` trigger `e` joins its pool's fleet (if a
    /// standby server is left and the trigger is still on); the next is scheduled.
    pub(super) fn join_next(&mut self, e: usize, k: u32) {
        let tr = &self.cfg.triggers[e];
        let TriggerKind::AddServers {
            pool: p,
            count,
            spread_ns,
        } = tr.kind
        else {
            return;
        };
        if !tr.enabled || k >= count {
            return;
        }
        if k + 1 < count {
            self.queue.schedule(
                self.now.saturating_add(spread_ns / (count as u64 - 1)),
                Event::PeerJoin {
                    trigger: e as u16,
                    k: k + 1,
                },
            );
        }
        let f = self.pools[p].fleet.as_mut().expect("validated: peers");
        if f.size as usize == f.learned.len() {
            return;
        }
        f.joined[e] += 1;
        let s = f.size;
        self.resize_fleet(p, s + 1);
        let f = self.pools[p].fleet.as_mut().expect("checked");
        f.learned[s as usize] = f.version();
        f.failed[s as usize] = false;
        self.pools[p].set_standby(s as usize, false);
        self.check_threads(p, s);
        if self.cfg.pools[p].sync.is_some() && !self.pools[p].servers[s as usize].down {
            self.server_restarted(p, s);
        }
    }

    /// An `add_servers` trigger `e` ends: the servers it moved in leave the fleet, the
    /// last to join first (their work fails).
    pub(super) fn add_servers_end(&mut self, e: usize) {
        let TriggerKind::AddServers { pool: p, .. } = self.cfg.triggers[e].kind else {
            return;
        };
        let f = self.pools[p].fleet.as_mut().expect("validated: peers");
        let n = std::mem::take(&mut f.joined[e]);
        for _ in 0..n {
            let f = self.pools[p].fleet.as_mut().expect("checked");
            let s = f.size - 1;
            if std::mem::take(&mut f.failed[s as usize]) {
                self.pools[p].integrate_held_out(self.now);
                self.pools[p].failed -= 1;
            }
            self.crash_server(p, s);
            self.pools[p].set_standby(s as usize, true);
            self.resize_fleet(p, s);
        }
    }

    /// The fleet of pool `p` becomes `size` servers: a new version of the membership,
    /// which every other server of the fleet learns within `learn_within`.
    fn resize_fleet(&mut self, p: usize, size: u32) {
        let within = self.cfg.pools[p].peers.expect("fleet").learn_within_ns;
        let pool = &mut self.pools[p];
        pool.integrate_capacity(self.now);
        pool.up = size;
        pool.live = size;
        let f = pool.fleet.as_mut().expect("a pool with a fleet");
        // Only servers that were in the fleet and stay learn later; a joining server (the
        // last, when the fleet grows) knows the new version at once (its caller's doing).
        let learners = size.min(f.size);
        f.size = size;
        f.sizes.push(size);
        let version = f.version();
        for s in 0..learners {
            let delay = if within == 0 {
                0
            } else {
                f.rng.random_range(0..=within)
            };
            self.queue.schedule(
                self.now.saturating_add(delay),
                Event::PeerLearn {
                    pool: p as u16,
                    server: s,
                    version,
                },
            );
        }
    }

    /// Server `s` of pool `p` learns version `version` of the membership (if it is still
    /// in the fleet and knows an older one); past its limit it fails.
    pub(super) fn peer_learn(&mut self, p: usize, s: u32, version: u32) {
        let f = self.pools[p].fleet.as_mut().expect("scheduled for a fleet");
        if s >= f.size || version <= f.learned[s as usize] {
            return;
        }
        f.learned[s as usize] = version;
        self.check_threads(p, s);
    }

    /// A `restart` trigger restarts every server of pool `p`'s fleet: its work fails, it
    /// learns the membership as it is now and, past its limit, fails again at once. In a
    /// pool with `sync` each goes through the sync's restart path instead (up after the
    /// retry delay, syncing first with `on_start`; the limit is checked when its sync
    /// succeeds, [`Simulation::peers_vetoed`]).
    pub(super) fn restart_fleet(&mut self, p: usize) {
        let size = self.pools[p].fleet.as_ref().expect("validated: peers").size;
        self.pools[p].integrate_held_out(self.now);
        if self.cfg.pools[p].sync.is_some() {
            for s in 0..size {
                let pool = &mut self.pools[p];
                let f = pool.fleet.as_mut().expect("checked");
                if std::mem::take(&mut f.failed[s as usize]) {
                    pool.failed -= 1;
                }
                self.restart_server(p, s);
            }
            return;
        }
        for s in 0..size {
            self.crash_server(p, s);
            let pool = &mut self.pools[p];
            let f = pool.fleet.as_mut().expect("checked");
            f.learned[s as usize] = f.version();
            if std::mem::take(&mut f.failed[s as usize]) {
                pool.failed -= 1;
            }
            pool.servers[s as usize].down = false;
        }
        if self.cfg.pools[p].client.is_none() {
            self.pools[p].refresh_view();
        }
        for s in 0..size {
            self.check_threads(p, s);
        }
    }
}

impl Simulation<'_> {
    /// Server `s` of pool `p` has failed at its thread limit (and is not restarted yet).
    pub(super) fn peers_failed(&self, p: usize, s: u32) -> bool {
        self.pools[p].fleet.as_ref().is_some_and(|f| f.failed(s))
    }

    /// A sync of server `s` of pool `p` came back: with `peers` the server now knows the
    /// membership as it is, and the sync fails (vetoed) if that takes it past its limit.
    pub(super) fn peers_vetoed(&mut self, p: usize, s: u32) -> bool {
        let Some(f) = self.pools[p].fleet.as_mut() else {
            return false;
        };
        f.learned[s as usize] = f.version();
        let known = f.known(s);
        let cfg = self.cfg.pools[p]
            .peers
            .expect("a pool with a fleet has peers");
        !fits(&cfg, known, s)
    }

    /// Server `s` of pool `p`, whose sync queries its own pool (its peers), finds no
    /// other server of the fleet up and in service: it has nobody to ask, and builds its
    /// shard map from the membership alone, at once (the first of a fleet restart).
    pub(super) fn alone_in_fleet(&self, p: usize, s: u32) -> bool {
        let Some(f) = &self.pools[p].fleet else {
            return false;
        };
        if self.cfg.pools[p].sync.as_ref().map(|c| c.pool) != Some(p) {
            return false;
        }
        let servers = &self.pools[p].servers;
        (0..f.size).all(|o| o == s || servers[o as usize].down || servers[o as usize].sync_out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CFG: PeersCfg = PeersCfg {
        base: 100,
        per_peer: 3,
        limit: 400,
        learn_within_ns: 0,
        standby: 0,
        cells: 1,
    };

    #[test]
    fn threads_grow_by_per_peer_with_each_other_server() {
        assert_eq!(threads(&CFG, 1), 100);
        assert_eq!(threads(&CFG, 2), 103);
        assert_eq!(threads(&CFG, 101), 400);
    }

    #[test]
    fn a_fleet_is_healthy_iff_its_threads_are_within_the_limit() {
        // b + k(N - 1) <= L  <=>  N <= (L - b) / k + 1 = 101.
        assert!(fits(&CFG, 101, 0));
        assert!(!fits(&CFG, 102, 0));
        let big = PeersCfg {
            per_peer: u64::MAX,
            ..CFG
        };
        assert!(fits(&big, 1, 0));
        assert!(!fits(&big, u32::MAX, 0), "saturates, never wraps");
    }

    #[test]
    fn cells_deal_the_fleet_in_turn_and_count_peers_per_cell() {
        // 10 servers in 4 cells: 0 4 8 | 1 5 9 | 2 6 | 3 7.
        let sizes: Vec<u32> = (0..4).map(|c| cell_size(10, 4, c)).collect();
        assert_eq!(sizes, [3, 3, 2, 2]);
        assert_eq!(sizes.iter().sum::<u32>(), 10);
        assert_eq!(cell_size(10, 1, 0), 10);
        // 4 cells of 101 fit where one fleet of 404 does not.
        let cells = PeersCfg { cells: 4, ..CFG };
        assert!((0..404).all(|s| fits(&cells, 404, s)));
        assert!(!fits(&cells, 405, 0) && fits(&cells, 405, 1));
    }
}
