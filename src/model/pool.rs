//! Server pools: shards x (1 primary + replicas) servers, each with workers and a bounded
//! queue; service-time laws, contention, slowdowns and outages; time-weighted statistics.

use super::balance::{Balancer, Candidate, count_up, uniform_up, uniform_up_of};
use super::keys::UpMemo;
use crate::engine::Rng;
use crate::engine::time::{SimTime, ns_from_f64};
use crate::scenario::{Balance, Discipline, PoolCfg, ReadPref};
use rand::RngExt;
use std::collections::VecDeque;

mod held;
pub use held::Held;

/// A unit of work on one server: one query part. 56 bytes, aligned to a cache line, so
/// that reading it at its end (far away in memory with many jobs pending) costs one miss,
/// not two (see [`super::request::Request`]).
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
pub struct Job {
    pub pool: u16,
    /// The pool's endpoint the job serves (0: none named): which calls it makes.
    pub endpoint: u16,
    pub server: u32,
    pub req: u32,
    pub token: u32,
    pub enqueued: SimTime,
    /// When service began (set when a worker takes it).
    pub started: SimTime,
    /// When the caller stops waiting; `cancel_expired` drops queued work past it.
    pub deadline: SimTime,
    pub cost: f64,
    /// Keys the job covers (for key-level success of partial completion).
    pub keys: u32,
    /// The job serves a call that propagates its caller's deadline: dropped when it
    /// expires, like the work of a pool with `cancel_expired` (`model::deadlines`).
    pub propagated: bool,
}

/// One server: workers and a queue of job ids.
#[derive(Clone, Debug, Default)]
pub struct Server {
    pub busy: u32,
    pub queue: VecDeque<u32>,
    /// Crashed: commands sent to it fail at once.
    pub down: bool,
    /// Down as the clients' view of the topology has it (may be stale).
    pub view_down: bool,
    /// Recent sojourn (exponentially weighted), for latency-based routing.
    pub latency_ewma_ns: f64,
    /// The primary of its shard.
    pub primary: bool,
    /// Watermark shedding: refusing new work until the queue drains to the low mark.
    pub shedding: bool,
    /// When the queue last went from empty to not empty (CoDel's "not empty for").
    pub busy_since: SimTime,
    /// A fail-fast event holds it: the share of the queries sent to it that it answers
    /// with an error at once (0: none).
    pub fail_fast: f64,
    /// Errors in a row it answered (outlier ejection counts them).
    pub errors_in_row: u32,
    /// Outlier ejection has taken it out of the balancer's choices.
    pub ejected: bool,
    /// Its health checks (pools with `health_check`).
    pub health: super::health::Health,
    /// Outside its pool's fleet (`peers`: a standby server), so out of routing.
    pub standby: bool,
    /// Out of service until its sync succeeds (pools with `sync`): held out of routing,
    /// and work sent to it fails at once.
    pub sync_out: bool,
}

impl Server {
    /// What a balancing policy reads of this server.
    #[inline]
    pub fn candidate(&self) -> Candidate {
        Candidate {
            up: self.routable(),
            outstanding: self.busy + self.queue.len() as u32,
        }
    }

    /// The balancer may choose it: the clients' view holds it up, and neither outlier
    /// ejection nor its health checks hold it out.
    #[inline]
    pub fn routable(&self) -> bool {
        !self.view_down && !self.held_out()
    }

    /// Outlier ejection, its health checks or its sync hold it out of the balancer's
    /// choices.
    #[inline]
    pub fn held_out(&self) -> bool {
        self.ejected || self.health.unhealthy || self.sync_out || self.standby
    }
}

/// How the commands of one multi-part query are routed ([`PoolState::key_route`]).
#[derive(Clone, Copy)]
pub enum KeyRoute {
    /// To the shard's first server (one server per shard, or reads of the primary): the
    /// pool's number of servers per shard.
    Base(u32),
    /// To one of the shard's servers `first .. per` uniformly (every server routable, random
    /// balance): one draw from the pool's stream, as `choose_up` makes.
    Uniform { per: u32, first: u32, n: u32 },
    /// Random balance with servers held out or viewed down: uniformly among the shard's
    /// routable servers `first .. per` ([`uniform_up`]'s one draw), its first server if
    /// none is, as `choose_up` does.
    Up { per: u32, first: u32, n: u32 },
    /// By [`PoolState::pick`], key by key.
    Pick,
}

impl KeyRoute {
    /// The server of `shard` one key goes to (the rest as for [`PoolState::pick`], which
    /// it gives, drawing the same numbers).
    #[inline(always)]
    pub fn server(
        self,
        pool: &mut PoolState,
        shard: u32,
        read: ReadPref,
        latency_threshold_ns: SimTime,
        balance: Balance,
        memo: &mut UpMemo,
    ) -> u32 {
        match self {
            KeyRoute::Base(per) => shard * per,
            KeyRoute::Uniform { per, first, n } => {
                shard * per + first + pool.rng.random_range(0..n)
            }
            KeyRoute::Up { per, first, n } => {
                let base = shard * per;
                let up = |i: u32| pool.servers[(base + first + i) as usize].routable();
                // Which of a shard's servers the view holds up is the same for all of a
                // query's keys: counted at the shard's first key, not at each.
                let n_up = memo.n_up(shard, || count_up(n, up));
                uniform_up_of(&mut pool.rng, n, n_up, up).map_or(base, |i| base + first + i)
            }
            KeyRoute::Pick => pool.pick(shard, read, latency_threshold_ns, balance),
        }
    }
}

/// Running totals of one pool.
#[derive(Debug, Default, Clone)]
pub struct PoolStats {
    /// Queries sent (parts), including those dropped or failed at once.
    pub sent: u64,
    pub served: u64,
    pub dropped: u64,
    pub expired: u64,
    pub failed_fast: u64,
    /// Work refused or dropped by load shedding (watermarks, CoDel).
    pub shed: u64,
    /// Jobs started after the request at the top of their chain had given up (counted
    /// only when some call says `deadline`).
    pub started_late: u64,
    /// Failed calls a job fell back from.
    pub fallbacks: u64,
    /// Integral over time of workers held while their job waits on its calls.
    pub waiting_area: u128,
    /// Integer sums and integrals (ns, ns x count): exact, and no float conversion on
    /// the hot path.
    pub wait_sum_ns: u128,
    pub sojourn_sum_ns: u128,
    /// Integrals over time: busy workers, queued jobs, worker capacity.
    pub busy_area: u128,
    /// Busy primaries only (replicated pools).
    pub primary_busy_area: u128,
    pub queue_area: u128,
    pub capacity_area: u128,
    /// Integral over time of the live (routable) servers (what an autoscaler changes).
    pub live_area: u128,
    /// Integral over time of the servers outlier ejection holds out.
    pub ejected_area: u128,
    /// Integral over time of the servers their health checks hold out.
    pub unhealthy_area: u128,
    /// Servers ejected by outlier ejection (each time one is taken out).
    pub ejections: u64,
    /// Jobs whose lease expired (pools with a `lease`: `model::lease`).
    pub lease_expired: u64,
    /// Integral over time of the fleet's servers failed at their thread limit (`peers`).
    pub failed_area: u128,
    /// Integrals over time of the servers out of service by their sync, and of the syncs
    /// in flight (pools with `sync`).
    pub sync_out_area: u128,
    pub syncing_area: u128,
    /// Syncs started, and syncs that failed (timed out, failed, or vetoed).
    pub syncs: u64,
    pub syncs_failed: u64,
}

/// A pool's live state.
#[derive(Clone)]
pub struct PoolState {
    pub servers: Vec<Server>,
    pub per_shard: u32,
    pub workers: u32,
    pub busy: u64,
    pub busy_primary: u64,
    pub queued: u64,
    /// Workers held by a job waiting on its calls (part of `busy`).
    pub waiting: u64,
    /// The pool sheds load (`[pool.NAME.shed]`): kept here, next to the state the plain
    /// path reads anyway, so that testing it costs no extra cache line.
    pub sheds: bool,
    /// The autoscaler's state, for a pool with `[pool.NAME.autoscale]` (tested where the
    /// plain path needs it, like `sheds`).
    pub scale: Option<Box<super::autoscale::Autoscaler>>,
    /// Servers that count for capacity: up, taking work or finishing it (every server of
    /// a pool without an autoscaler).
    pub up: u32,
    /// Servers that take new work (every server of a pool without an autoscaler).
    pub live: u32,
    waiting_last: SimTime,
    pub slowdown: f64,
    pub outages: u32,
    pub rng: Rng,
    pub stats: PoolStats,
    /// Statistics at the start of the current time-series window.
    pub window_mark: PoolStats,
    last: SimTime,
    cap_last: SimTime,
    /// The state of the balancing policies other than `random` (their own stream,
    /// `balance.<pool>`, and the round-robin cursors).
    pub balancer: Balancer,
    /// Servers outlier ejection holds out now.
    pub ejected: u32,
    /// Servers the clients' view holds down now (`Server::view_down`): kept by
    /// [`PoolState::refresh_view`] and [`PoolState::set_standby`], the only writers.
    pub viewed_down: u32,
    /// Servers their health checks hold out now.
    pub unhealthy: u32,
    /// Servers out of service by their sync now, and syncs in flight (pools with `sync`).
    pub sync_out: u32,
    pub syncing: u32,
    /// The sync state of a pool with `sync` (`model::sync`).
    pub sync: Option<Box<super::sync::SyncState>>,
    held_last: SimTime,
    /// The fleet of a pool with `peers` (`model::peers`).
    pub fleet: Option<Box<super::peers::Fleet>>,
    /// Standby servers outside the fleet now (held out of routing).
    pub standby: u32,
    /// Servers of the fleet failed at their thread limit now.
    pub failed: u32,
}

impl PoolState {
    /// A pool's state; `rng` is its `pool.<name>` stream, `balance_rng` its
    /// `balance.<name>` stream.
    pub fn new(cfg: &PoolCfg, rng: Rng, balance_rng: Rng) -> Self {
        let per_shard = 1 + cfg.replicas;
        let n = (cfg.shards * per_shard) as usize;
        Self {
            servers: (0..n as u32)
                .map(|i| Server {
                    primary: i % per_shard == 0,
                    ..Server::default()
                })
                .collect(),
            per_shard,
            workers: cfg.workers,
            busy: 0,
            busy_primary: 0,
            queued: 0,
            waiting: 0,
            waiting_last: 0,
            sheds: cfg.shed.is_some(),
            scale: cfg
                .autoscale
                .map(|_| Box::new(super::autoscale::Autoscaler::new(n as u32))),
            up: n as u32,
            live: n as u32,
            slowdown: 1.0,
            outages: 0,
            rng,
            stats: PoolStats::default(),
            window_mark: PoolStats::default(),
            last: 0,
            cap_last: 0,
            balancer: Balancer::new(balance_rng),
            ejected: 0,
            viewed_down: 0,
            unhealthy: 0,
            sync_out: 0,
            syncing: 0,
            sync: None,
            held_last: 0,
            fleet: None,
            standby: 0,
            failed: 0,
        }
    }

    /// Accumulates the time integrals up to `now`; call before any change of busy/queued.
    #[inline]
    pub fn integrate(&mut self, now: SimTime) {
        let dt = (now - self.last) as u128;
        if dt > 0 {
            self.stats.busy_area += self.busy as u128 * dt;
            if self.per_shard > 1 {
                self.stats.primary_busy_area += self.busy_primary as u128 * dt;
            }
            self.stats.queue_area += self.queued as u128 * dt;
            self.last = now;
        }
    }

    /// Accumulates the integral of workers waiting on calls up to `now`; call before
    /// `waiting` changes and before reading statistics (only pools with calls change it,
    /// so it stays off the plain hot path).
    pub fn integrate_waiting(&mut self, now: SimTime) {
        let dt = (now - self.waiting_last) as u128;
        self.stats.waiting_area += self.waiting as u128 * dt;
        self.waiting_last = now;
    }

    /// Mean workers waiting on calls between two stat snapshots `ns` apart.
    pub fn mean_waiting(&self, from: &PoolStats, ns: SimTime) -> f64 {
        if ns == 0 {
            return 0.0;
        }
        (self.stats.waiting_area - from.waiting_area) as f64 / ns as f64
    }

    /// Accumulates worker capacity (and live servers) up to `now`; call before the worker
    /// or server count changes and before reading statistics (capacity changes rarely, so
    /// it stays off the hot path).
    pub fn integrate_capacity(&mut self, now: SimTime) {
        let dt = (now - self.cap_last) as u128;
        self.stats.capacity_area += (self.workers as u128 * self.up as u128) * dt;
        self.stats.live_area += self.live as u128 * dt;
        self.cap_last = now;
    }

    /// Time-average live servers between two stat snapshots `ns` apart.
    pub fn mean_live(&self, from: &PoolStats, ns: SimTime) -> f64 {
        if ns == 0 {
            return self.live as f64;
        }
        (self.stats.live_area - from.live_area) as f64 / ns as f64
    }

    /// Picks the server of `shard` that a query with read preference `read` goes to, as
    /// the clients' view of the topology has it: servers the view holds down are avoided
    /// (if the view is stale, a command can still land on a dead server and fail). Among
    /// several candidates, `balance` chooses.
    #[inline(always)]
    pub fn pick(
        &mut self,
        shard: u32,
        read: ReadPref,
        latency_threshold_ns: SimTime,
        balance: Balance,
    ) -> u32 {
        let base = shard * self.per_shard;
        if self.per_shard == 1 {
            return base;
        }
        let replicas = self.per_shard - 1;
        let up = |s: &Self, i: u32| s.servers[(base + i) as usize].routable();
        match read {
            ReadPref::Primary => base,
            ReadPref::Latency
                if up(self, 0)
                    && self.servers[base as usize].latency_ewma_ns
                        < latency_threshold_ns as f64 =>
            {
                base
            }
            // A replica the view holds up (Go-Redis picks one at random per command); the
            // primary if none is.
            ReadPref::Replica | ReadPref::Latency => self.choose_up(shard, 1, replicas, balance),
            ReadPref::Any => self.choose_up(shard, 0, replicas, balance),
        }
    }

    /// How every command of one multi-part query picks its server, decided once for the
    /// query: what [`PoolState::pick`] does for each of its shards, with the checks that
    /// are the same for every key made once. Nothing a pick changes (only the pool's stream
    /// moves) bears on those checks, so every key gets the server, and draws the numbers,
    /// that `pick` would give it.
    #[inline(always)]
    pub fn key_route(&self, read: ReadPref, balance: Balance) -> KeyRoute {
        let per = self.per_shard;
        if per == 1 || read == ReadPref::Primary {
            return KeyRoute::Base(per);
        }
        let first = match read {
            ReadPref::Replica => 1,
            ReadPref::Any => 0,
            _ => return KeyRoute::Pick,
        };
        let n = per - first;
        match balance {
            Balance::Random if self.viewed_down == 0 && self.held_out() == 0 => {
                KeyRoute::Uniform { per, first, n }
            }
            Balance::Random => KeyRoute::Up { per, first, n },
            _ => KeyRoute::Pick,
        }
    }

    /// A server among `first ..= last` of `shard` that the view holds up, chosen by
    /// `balance`, or the shard's primary if none is. `random` draws from the pool's
    /// stream, as it always has. Out of line: the plain path (one server per shard) keeps
    /// its layout where `pick` is inlined. Not marked cold: it is every replica read's
    /// path (17 a call in Grab's pipelines), and a cold function is compiled for size.
    #[inline(never)]
    fn choose_up(&mut self, shard: u32, first: u32, last: u32, balance: Balance) -> u32 {
        let base = shard * self.per_shard;
        let n = last - first + 1;
        if balance == Balance::Random && self.viewed_down == 0 && self.held_out() == 0 {
            // Every server is routable (the usual case): `uniform_up`'s one draw, no
            // server read.
            return base + first + self.rng.random_range(0..n);
        }
        let servers = &self.servers[(base + first) as usize..=(base + last) as usize];
        let chosen = if balance == Balance::Random {
            uniform_up(&mut self.rng, n, |i| servers[i as usize].routable())
        } else {
            let slot = 1 + shard as usize;
            self.balancer
                .choose(balance, slot, n, |i| servers[i as usize].candidate())
        };
        chosen.map_or(base, |i| base + first + i)
    }

    /// The shard a one-part keyless query goes to by `balance` (any policy but `random`,
    /// which draws from the simulation's `routing` stream). A shard's candidate is its
    /// server, or with replicas the sum of its servers' outstanding jobs, held down when
    /// the view holds all of them down; if it holds every shard down, the policy chooses
    /// among all (the send will fail at once, as with `random`).
    #[inline(never)]
    #[cold]
    pub fn choose_shard(&mut self, balance: Balance, shards: u32) -> u32 {
        let (servers, per) = (&self.servers, self.per_shard as usize);
        let shard = |i: u32| {
            let of = &servers[i as usize * per..(i as usize + 1) * per];
            of.iter().skip(1).fold(of[0].candidate(), |a, s| {
                let c = s.candidate();
                Candidate {
                    up: a.up || c.up,
                    outstanding: a.outstanding + c.outstanding,
                }
            })
        };
        let b = &mut self.balancer;
        b.choose(balance, 0, shards, shard)
            .or_else(|| {
                b.choose(balance, 0, shards, |i| Candidate {
                    up: true,
                    ..shard(i)
                })
            })
            .unwrap_or(0)
    }

    /// The shard a one-part keyless query goes to by `random` while outlier ejection or
    /// health checks hold servers out: uniformly among the shards with a server not held
    /// out (all of them if none has one), from `rng` (the simulation's `routing` stream).
    #[inline(never)]
    #[cold]
    pub fn random_shard_held_out(&self, rng: &mut Rng, shards: u32) -> u32 {
        let per = self.per_shard as usize;
        let open = |i: u32| {
            let of = &self.servers[i as usize * per..(i as usize + 1) * per];
            of.iter().any(|s| !s.held_out())
        };
        uniform_up(rng, shards, open).unwrap_or_else(|| rng.random_range(0..shards))
    }

    /// Whether server `server`, which a fail-fast event may hold, fails what reaches it
    /// now: never without the event, always at `fraction = 1`, else by a draw from the
    /// pool's stream.
    #[inline]
    pub fn fails_fast_now(&mut self, server: u32) -> bool {
        let share = self.servers[server as usize].fail_fast;
        share > 0.0 && (share >= 1.0 || self.rng.random::<f64>() < share)
    }

    /// Brings the clients' view up to date with the servers' real state.
    pub fn refresh_view(&mut self) {
        for s in &mut self.servers {
            s.view_down = s.down;
        }
        self.viewed_down = self.servers.iter().filter(|s| s.view_down).count() as u32;
    }

    /// Draws a service time for a job of `cost` when `in_service` queries (this one
    /// included) are in service on its server and `queued` wait in its queue.
    #[inline(always)]
    pub fn service_ns(
        &mut self,
        cfg: &PoolCfg,
        cost: f64,
        in_service: u32,
        queued: u32,
    ) -> SimTime {
        let x = cfg.service.draw(&mut self.rng);
        let mut t = x * cost * self.slowdown;
        if cfg.contention > 0.0 {
            t *= 1.0 + cfg.contention * (in_service.saturating_sub(1)) as f64;
        }
        if let Some(s) = &cfg.load_slowdown {
            t *= super::pressure::multiplier(s, in_service, queued);
        }
        ns_from_f64(t)
    }

    /// Takes the next waiting job of a server by the pool's discipline.
    #[inline]
    pub fn next_waiting(&mut self, server: u32, discipline: Discipline) -> Option<u32> {
        let q = &mut self.servers[server as usize].queue;
        let j = match discipline {
            Discipline::Fifo => q.pop_front(),
            Discipline::Lifo => q.pop_back(),
        };
        if j.is_some() {
            self.queued -= 1;
        }
        j
    }

    /// Utilisation, mean queue length over a span of `ns` between two stat snapshots.
    pub fn window(&self, from: &PoolStats, ns: SimTime) -> (f64, f64) {
        let cap = (self.stats.capacity_area - from.capacity_area) as f64;
        let util = if cap > 0.0 {
            (self.stats.busy_area - from.busy_area) as f64 / cap
        } else {
            0.0
        };
        let qlen = if ns > 0 {
            (self.stats.queue_area - from.queue_area) as f64 / ns as f64
        } else {
            0.0
        };
        (util, qlen)
    }

    /// Utilisation of the primaries alone between two snapshots (replicated pools).
    pub fn primary_utilization(&self, from: &PoolStats) -> f64 {
        let cap = (self.stats.capacity_area - from.capacity_area) as f64 / self.per_shard as f64;
        if cap > 0.0 {
            (self.stats.primary_busy_area - from.primary_busy_area) as f64 / cap
        } else {
            0.0
        }
    }

    /// True for a pool with replicas.
    pub fn replicated(&self) -> bool {
        self.per_shard > 1
    }

    /// Mean wait and sojourn of served queries, in seconds.
    pub fn means(&self) -> (f64, f64) {
        if self.stats.served == 0 {
            return (0.0, 0.0);
        }
        let n = self.stats.served as f64 * 1e9;
        (
            self.stats.wait_sum_ns as f64 / n,
            self.stats.sojourn_sum_ns as f64 / n,
        )
    }
}

#[cfg(test)]
mod tests;
