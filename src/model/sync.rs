//! Server sync (`[pool.NAME.sync]`): a server serves only while its own request to another
//! pool (or to its peers) is answered in time. DynamoDB 2015: a storage server confirms its
//! membership with the metadata service and steps out of service when the answer is late;
//! GCP 2025 and Kinesis 2020: a task that (re)starts must read its state before it serves,
//! and crashes when it cannot.
//!
//! A sync is a request of the sync's own class (`SyncCfg::class`, appended by validation
//! as a call's is), sent by a server instead of a client: it runs through the lifecycle,
//! counts in the accounting, and its pool sees ordinary jobs, which it keeps working on
//! after the server gave up (the metastable loop). When it ends it reports here
//! (`sync_done`), by the server's index and sync token (`Request::parent`,
//! `Request::parent_token`). A server's sync:
//!
//! ```text
//!  routine (every) / trigger / (re)start ─▶ request_sync ─▶ wait its turn (max_concurrent, FIFO) ─▶ launch
//!  sync_done ok (not vetoed) ─▶ in service
//!  sync_done failed ─▶ step_out: out of service, SyncRetry after the retry delay ─▶ request_sync
//!                   └▶ restart:  crash (queued work fails), SyncRetry after the delay ─▶ up, sync first (on_start)
//! ```
//!
//! A server out of service is held out of routing (`Server::held_out`) and work sent to it
//! fails at once (`service::send`). The hooks other mechanisms use: [`Simulation::request_sync`]
//! (start a sync now), [`Simulation::restart_server`] (crash into the restart path) and
//! [`Simulation::sync_vetoed`] (a check on success).

use super::admission::Gate;
use super::event::Event;
use super::protocol::Next;
use super::request::Request;
use super::retry::{self, Decision};
use super::simulation::Simulation;
use crate::engine::Rng;
use crate::engine::time::SimTime;
use crate::scenario::{Failure, OnFailure, SyncCfg};
use std::collections::VecDeque;

/// Where a server's sync stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Phase {
    /// No sync asked for.
    #[default]
    Idle,
    /// Waiting its turn (`max_concurrent`).
    Waiting,
    /// Its sync request is in flight.
    InFlight,
    /// Its sync failed; the next attempt is due after the retry delay.
    Backoff,
    /// It crashed (`on_failure = "restart"`); it restarts after the retry delay.
    Restarting,
}

/// One server's sync.
#[derive(Debug, Clone, Copy, Default)]
pub struct SyncServer {
    pub phase: Phase,
    /// The token of its sync in flight or of its pending retry (never 0): an answer or a
    /// retry event with another is stale.
    pub token: u32,
    /// Failures in a row: the retry policy's attempt count.
    pub failures: u32,
    /// The last retry delay (decorrelated jitter).
    pub prev_sleep: SimTime,
}

/// A syncing pool's state beside its servers (the counts and integrals are in
/// `PoolState`: `sync_out`, `syncing` and `PoolStats`).
#[derive(Clone)]
pub struct SyncState {
    pub servers: Vec<SyncServer>,
    /// Servers waiting their turn, first come first served.
    waiting: VecDeque<u32>,
    /// The retry delays' jitter (`sync.<pool>` stream).
    pub(super) rng: Rng,
    /// `pump` is running: a sync that ends inside it leaves the next start to its loop
    /// (no recursion per server).
    pumping: bool,
}

impl SyncState {
    pub fn new(servers: usize, rng: Rng) -> Self {
        Self {
            servers: vec![SyncServer::default(); servers],
            waiting: VecDeque::new(),
            rng,
            pumping: false,
        }
    }
}

/// Server `s`'s size: its sync's cost multiplier, `1 + spread x (2u - 1)` with `u` the
/// fractional part of `s x 0.618... + 0.5` (a low-discrepancy sequence): sizes spread evenly
/// from `1 - spread` to `1 + spread`, mean 1, and any first share of the servers (a
/// `resync` event's) has its sizes spread alike.
pub fn size_factor(spread: f64, s: u32) -> f64 {
    if spread == 0.0 {
        return 1.0;
    }
    let u = (s as f64 * 0.618_033_988_749_894_9 + 0.5).fract();
    1.0 + spread * (2.0 * u - 1.0)
}

/// When server `s` of `n` has its first routine sync: phases spread evenly over one period,
/// `every x (s + 1) / n`, so routine syncs never come as a herd.
pub fn first_routine(every: SimTime, s: usize, n: usize) -> SimTime {
    (every as u128 * (s as u128 + 1) / n.max(1) as u128) as SimTime
}

impl Simulation<'_> {
    fn sync_cfg(&self, p: usize) -> &SyncCfg {
        self.cfg.pools[p]
            .sync
            .as_deref()
            .expect("only a pool with sync syncs")
    }

    fn sync_state(&mut self, p: usize) -> &mut SyncState {
        self.pools[p]
            .sync
            .as_deref_mut()
            .expect("only a pool with sync syncs")
    }

    /// Schedules every syncing pool's first routine syncs (phases spread evenly).
    pub(super) fn schedule_syncs(&mut self) {
        for p in 0..self.cfg.pools.len() {
            let Some(every) = self.cfg.pools[p].sync.as_ref().and_then(|s| s.every_ns) else {
                continue;
            };
            let n = self.pools[p].servers.len();
            for s in 0..n {
                self.queue.schedule(
                    first_routine(every, s, n),
                    Event::SyncDue {
                        pool: p as u16,
                        server: s as u32,
                    },
                );
            }
        }
    }

    /// A `resync` event: the first `servers` servers of pool `p` sync, all now (`spread_ns`
    /// 0) or one after another evenly over `spread_ns` (server i at `spread x i / servers`).
    pub(super) fn resync(&mut self, p: usize, servers: u32, spread_ns: SimTime) {
        for s in 0..servers {
            if spread_ns == 0 {
                self.request_sync(p, s);
                continue;
            }
            let at = (spread_ns as u128 * s as u128 / servers as u128) as SimTime;
            self.queue.schedule(
                self.now.saturating_add(at),
                Event::SyncNow {
                    pool: p as u16,
                    server: s,
                },
            );
        }
    }

    /// Server `s` of pool `p`'s routine sync is due: it syncs unless a sync of its own is
    /// already under way; the next is due a period later.
    pub(super) fn sync_due(&mut self, p: usize, s: u32) {
        let Some(every) = self.sync_cfg(p).every_ns else {
            return;
        };
        self.queue.schedule(
            self.now.saturating_add(every),
            Event::SyncDue {
                pool: p as u16,
                server: s,
            },
        );
        if self.sync_state(p).servers[s as usize].phase == Phase::Idle {
            self.request_sync(p, s);
        }
    }

    /// The hook "start a sync for server `s` of pool `p` now" (a routine sync, a trigger
    /// that makes servers re-request at once, a restart): it starts when a slot is free
    /// under `max_concurrent`, else waits its turn. A server already waiting or in flight
    /// keeps its place; one backing off syncs now instead; one restarting syncs when it is
    /// up.
    pub fn request_sync(&mut self, p: usize, s: u32) {
        if self.peers_failed(p, s) {
            return; // `peers`: stuck past its thread limit until restarted
        }
        let server = &mut self.sync_state(p).servers[s as usize];
        match server.phase {
            Phase::Waiting | Phase::InFlight | Phase::Restarting => return,
            Phase::Idle | Phase::Backoff => {}
        }
        server.phase = Phase::Waiting;
        // A pending retry is stale now.
        server.token = 0;
        self.sync_state(p).waiting.push_back(s);
        self.pump(p);
    }

    /// Starts the syncs waiting their turn while slots are free, in order. Called when a
    /// sync is asked for, when one ends, and when an intervention puts a new
    /// `max_concurrent` in force.
    pub(super) fn pump(&mut self, p: usize) {
        if self.sync_state(p).pumping {
            return;
        }
        self.sync_state(p).pumping = true;
        loop {
            let max = self.sync_cfg(p).max_concurrent;
            if self.pools[p].syncing >= max {
                break;
            }
            let Some(s) = self.sync_state(p).waiting.pop_front() else {
                break;
            };
            self.launch(p, s);
        }
        self.sync_state(p).pumping = false;
    }

    /// Server `s` of pool `p` sends its sync request: a request of the sync's class whose
    /// parent is the server, under a fresh token.
    fn launch(&mut self, p: usize, s: u32) {
        if self.alone_in_fleet(p, s) {
            // `peers`: no peer in service to ask; it builds its map alone (`model::peers`).
            self.sync_state(p).servers[s as usize] = SyncServer::default();
            if self.sync_vetoed(p, s) {
                self.sync_failed(p, s);
            } else {
                self.set_in_service(p, s, true);
            }
            return;
        }
        let token = self.sync_token();
        let server = &mut self.sync_state(p).servers[s as usize];
        server.phase = Phase::InFlight;
        server.token = token;
        let pool = &mut self.pools[p];
        pool.integrate_held_out(self.now);
        pool.syncing += 1;
        pool.stats.syncs += 1;
        let c = self.sync_cfg(p).class;
        self.admit_request(c, Gate::Open); // always admitted
        // No key serial: a sync is keyless, and the clients' keys stay as they were.
        let r = self.reqs.insert(Request {
            class: c as u16,
            arrived: self.now,
            parent: s,
            parent_token: token,
            ..Request::default()
        });
        self.advance::<false>(r, Next::Attempt);
    }

    /// A sync token: never 0, which marks a server with nothing pending.
    fn sync_token(&mut self) -> u32 {
        let t = self.next_token();
        if t == 0 { self.next_token() } else { t }
    }

    /// The sync request of server `s` of pool `p` with token `token` has ended, `ok` or
    /// not: its slot is free; a current one decides whether the server serves.
    #[inline(never)]
    pub(super) fn sync_done(&mut self, p: usize, s: u32, token: u32, ok: bool) {
        let pool = &mut self.pools[p];
        pool.integrate_held_out(self.now);
        pool.syncing -= 1;
        let server = self.sync_state(p).servers[s as usize];
        if server.phase == Phase::InFlight && server.token == token {
            if ok && !self.sync_vetoed(p, s) {
                let server = &mut self.sync_state(p).servers[s as usize];
                *server = SyncServer::default();
                self.set_in_service(p, s, true);
            } else {
                self.sync_failed(p, s);
            }
        }
        self.pump(p);
    }

    /// The hook "a veto on success": another mechanism's check that a sync which came back
    /// ok must count as failed (GCP 2025: the read returned the poisoned record, so the
    /// task crashes instead of serving: a crash loop, `Simulation::poisoned`). `peers`: a
    /// server that would hold more threads than its limit for the fleet it now knows.
    pub fn sync_vetoed(&mut self, p: usize, s: u32) -> bool {
        self.poisoned(p) || self.peers_vetoed(p, s)
    }

    /// Server `s` of pool `p`'s sync failed: by `on_failure` it steps out and retries after
    /// the delay, or crashes and restarts after it.
    fn sync_failed(&mut self, p: usize, s: u32) {
        self.pools[p].stats.syncs_failed += 1;
        match self.sync_cfg(p).on_failure {
            OnFailure::StepOut => {
                self.set_in_service(p, s, false);
                self.schedule_retry(p, s, Phase::Backoff);
            }
            OnFailure::Restart => self.restart_server(p, s),
        }
    }

    /// One more failure of server `s` of pool `p`: its new phase, and its retry event
    /// (`SyncRetry`, under a fresh token) after the delay of the one retry decision
    /// (attempts unbounded).
    fn schedule_retry(&mut self, p: usize, s: u32, phase: Phase) {
        let token = self.sync_token();
        let (policy, now) = (self.sync_cfg(p).retry, self.now);
        let st = self.sync_state(p);
        let server = &mut st.servers[s as usize];
        server.failures = server.failures.saturating_add(1);
        server.phase = phase;
        server.token = token;
        let delay = match retry::decide(
            &policy,
            server.failures,
            Failure::Timeout,
            None,
            &mut server.prev_sleep,
            &mut st.rng,
            now,
        ) {
            Decision::RetryAfter(d) => d,
            // Attempts are unbounded and every failure is retried (validation).
            Decision::GiveUp => policy.base_ns,
        };
        self.queue.schedule(
            now.saturating_add(delay),
            Event::SyncRetry {
                pool: p as u16,
                server: s,
                token,
            },
        );
    }

    /// The hook "crash server `s` of pool `p` into the restart path": it goes down as a
    /// `crash` event takes it (queued work fails at once, work in service when it ends),
    /// out of service, and restarts after the retry delay (`sync_retry`). A sync it was
    /// waiting for or had in flight is abandoned.
    pub fn restart_server(&mut self, p: usize, s: u32) {
        if self.sync_state(p).servers[s as usize].phase == Phase::Waiting {
            self.sync_state(p).waiting.retain(|&w| w != s);
        }
        self.set_in_service(p, s, false);
        if !self.pools[p].servers[s as usize].down {
            self.crash_server(p, s);
        }
        self.schedule_retry(p, s, Phase::Restarting);
    }

    /// Server `s` of pool `p`'s retry delay is over: a server that stepped out syncs again;
    /// one that crashed is up again ([`Simulation::server_restarted`]). A stale event (its
    /// server has synced since, or restarted again) is dropped.
    pub(super) fn sync_retry(&mut self, p: usize, s: u32, token: u32) {
        let server = self.sync_state(p).servers[s as usize];
        if server.token != token {
            return;
        }
        match server.phase {
            Phase::Backoff => self.request_sync(p, s),
            Phase::Restarting => {
                self.sync_state(p).servers[s as usize].phase = Phase::Idle;
                let pool = &mut self.pools[p];
                pool.servers[s as usize].down = false;
                if self.cfg.pools[p].client.is_none() {
                    pool.refresh_view();
                }
                self.server_restarted(p, s);
            }
            _ => {}
        }
    }

    /// Server `s` of pool `p` is up after a restart (its own, or a `crash` event's end): with
    /// `on_start` it syncs before it serves, else it serves at once.
    pub(super) fn server_restarted(&mut self, p: usize, s: u32) {
        if self.sync_cfg(p).on_start {
            self.set_in_service(p, s, false);
            self.request_sync(p, s);
        } else {
            self.sync_state(p).servers[s as usize] = SyncServer::default();
            self.set_in_service(p, s, true);
        }
    }

    /// Puts server `s` of pool `p` in service or takes it out.
    fn set_in_service(&mut self, p: usize, s: u32, serving: bool) {
        let pool = &mut self.pools[p];
        if pool.servers[s as usize].sync_out != serving {
            return;
        }
        pool.integrate_held_out(self.now);
        pool.servers[s as usize].sync_out = !serving;
        if serving {
            pool.sync_out -= 1;
        } else {
            pool.sync_out += 1;
        }
    }

    /// The cost multiplier of sync request `r` of class `c` now: its server's size
    /// (`spread`) times its pool's `growth`.
    #[inline(never)]
    pub(super) fn sync_cost_factor(&self, r: u32, c: usize) -> f64 {
        self.cfg.classes[c].sync.map_or(1.0, |p| {
            let cfg = self.sync_cfg(p);
            size_factor(cfg.spread, self.reqs[r].parent) * cfg.growth.factor(self.now)
        })
    }
}

#[cfg(test)]
pub(super) mod tests;
