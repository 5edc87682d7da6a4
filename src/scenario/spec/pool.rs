//! A pool's validated configuration: its servers, service and queue, and each mechanism a
//! pool may have (balancing, shedding, autoscaling, outlier ejection, health checks, load
//! slowdown, a cluster client's view, a lease on its work, a sync per server, a resource
//! that grows with the fleet).

use super::{
    Balance, Discipline, OnExpiry, OnFailure, OnUnhealthy, Profile, RetryCfg, ScaleIn, ScaleSignal,
    ServiceCfg, SlowdownWith,
};
use crate::engine::time::SimTime;

/// A server pool: `shards` x (1 primary + `replicas`) servers.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolCfg {
    pub name: String,
    pub shards: u32,
    pub replicas: u32,
    /// Workers per server.
    pub workers: u32,
    /// Waiting places per server (`u32::MAX` = unbounded).
    pub queue_limit: u32,
    pub service: ServiceCfg,
    /// Service time is multiplied by `1 + contention * (queries in service - 1)`.
    pub contention: f64,
    pub error_rate: f64,
    pub cancel_expired: bool,
    pub discipline: Discipline,
    /// Clients route by their own copy of the topology, if set.
    pub client: Option<ClusterClientCfg>,
    /// `read = "latency"` prefers the primary while its recent latency is under this.
    pub latency_threshold_ns: SimTime,
    /// The pool's endpoints: `""` (jobs that name none) first, then each name its calls
    /// give, in file order.
    pub endpoints: Vec<String>,
    /// Per endpoint, the calls each of its jobs makes while holding its worker, after its
    /// own service: stages in order, each a set of indices into [`Config::calls`](super::Config::calls) that run
    /// in parallel.
    pub plans: Vec<Vec<Vec<usize>>>,
    /// Derived: some endpoint makes calls.
    pub has_calls: bool,
    /// Load shedding at each server, if any.
    pub shed: Option<ShedCfg>,
    /// Adds and removes servers on a signal, if set (`shards` is then the starting count).
    pub autoscale: Option<AutoscaleCfg>,
    /// How one-part keyless queries choose a shard, and reads a server among a shard's
    /// candidates ([`crate::model::balance`]).
    pub balance: Balance,
    /// Service slows down with the server's own load, if set ([`LoadSlowdownCfg`]).
    pub load_slowdown: Option<LoadSlowdownCfg>,
    /// Derived: some call into this pool propagates its caller's deadline, so the pool
    /// drops that call's queued work past it (and makes no calls for it).
    pub drops_propagated: bool,
    /// The balancer ejects servers that keep failing, if set ([`OutlierCfg`]).
    pub outlier: Option<OutlierCfg>,
    /// The balancer probes its servers, if set ([`HealthCheckCfg`]).
    pub health_check: Option<HealthCheckCfg>,
    /// Each job has its own lease, if set ([`LeaseCfg`]).
    pub lease: Option<LeaseCfg>,
    /// Each server serves only while its sync succeeds, if set ([`SyncCfg`]).
    pub sync: Option<Box<SyncCfg>>,
    /// A per-server resource that grows with the fleet, if set ([`PeersCfg`]).
    pub peers: Option<PeersCfg>,
}

/// A per-server resource that grows with the fleet against a fixed limit
/// (`[pool.NAME.peers]`, `crate::model::peers`): a server of the fleet holds
/// `base + per_peer x (N - 1)` threads, N the fleet size it has learned, and fails past
/// `limit`; after a change of the fleet each server learns the new size within
/// `learn_within_ns`. The pool's last `standby` servers start outside the fleet; with
/// `cells`, N counts the servers of its own cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeersCfg {
    pub base: u64,
    pub per_peer: u64,
    pub limit: u64,
    pub learn_within_ns: SimTime,
    pub standby: u32,
    /// Cells the fleet is split in (server `s` in cell `s mod cells`): a server's peers
    /// are those of its cell.
    pub cells: u32,
}

/// Work with its own lease (`[pool.NAME.lease]`, `crate::model::lease`): a job's lease
/// runs `timeout_ns` from when it entered its server's queue or re-entered it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseCfg {
    pub timeout_ns: SimTime,
    /// What happens to a job whose lease has passed when its service ends.
    pub on_expiry: OnExpiry,
    /// A job that ends failed on a live server goes back to the queue this long after
    /// (none: it fails).
    pub requeue_failed_ns: Option<SimTime>,
}

/// A pool's server sync (`[pool.NAME.sync]`, `crate::model::sync`): each server's request
/// of class `class` to pool `pool` decides whether it serves.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncCfg {
    /// The pool the sync queries (index into [`Config::pools`](super::Config::pools); may be the pool itself).
    pub pool: usize,
    /// The sync requests' class (index into [`Config::classes`](super::Config::classes), after the calls'): its
    /// one step queries `pool` with `cost`, its timeout is the sync's, it never retries
    /// by itself (the sync's `retry` does, server by server).
    pub class: usize,
    /// The query's cost multiplier at time t is `growth.factor(t)` (1 without `growth`).
    pub growth: Profile,
    /// Servers' sizes spread evenly from `1 - spread` to `1 + spread` times the cost
    /// (`crate::model::sync::size_factor`); 0: all alike.
    pub spread: f64,
    /// Server i's sync goes to shard `i mod shards` of `pool` (each shard serves its part
    /// of the fleet), not to a random one.
    pub segment: bool,
    /// Routine syncs: each server every `every_ns`, at phases spread evenly.
    pub every_ns: Option<SimTime>,
    /// A server that (re)starts syncs before it serves.
    pub on_start: bool,
    pub on_failure: OnFailure,
    /// The delay before the next attempt after a failure (attempts unbounded, no budget).
    pub retry: RetryCfg,
    /// The most of the pool's servers with a sync in flight (`u32::MAX`: unbounded; 0
    /// pauses every sync).
    pub max_concurrent: u32,
}

/// Health checks (`health_check`): every `every_ns` each server is probed; a healthy one
/// is left out after `unhealthy_after` failed probes in a row, an unhealthy one taken back
/// after `healthy_after` passed ones (`crate::model::health`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealthCheckCfg {
    pub every_ns: SimTime,
    pub unhealthy_after: u32,
    pub healthy_after: u32,
    /// A probe also fails while the server holds more jobs than this, queued and in
    /// service (`u32::MAX`: never).
    pub max_outstanding: u32,
    /// A probe also fails while the server holds more sync jobs than this (any pool's
    /// `[pool.NAME.sync]` requests, queued and in service; `u32::MAX`: never).
    pub max_syncs_held: u32,
    /// What an unhealthy verdict does.
    pub on_unhealthy: OnUnhealthy,
}

/// Outlier ejection (`outlier_ejection`): a server whose last `consecutive_errors` answers
/// were all errors is left out of the balancer's choices for `eject_for_ns`, unless
/// `max_ejected` servers are out already (`crate::model::outlier`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutlierCfg {
    pub consecutive_errors: u32,
    pub eject_for_ns: SimTime,
    /// The most servers out at once (at least one, as Envoy's `max_ejection_percent`).
    pub max_ejected: u32,
}

/// A pool's load slowdown (`slowdown = { with, per, max }`): a job's service time is
/// multiplied by `min(1 + per x n, max)` where `n` is its server's state (`with`) when the
/// job starts (`crate::model::pressure`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadSlowdownCfg {
    pub with: SlowdownWith,
    /// The multiplier's growth per job of state.
    pub per: f64,
    /// The cap of the multiplier (at least 1).
    pub max: f64,
}

/// Target tracking (`[pool.NAME.autoscale]`): every `every`, the signal over the last
/// period sets the desired number of servers (`model::autoscale::desired`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AutoscaleCfg {
    pub signal: ScaleSignal,
    /// Utilisation fraction, waiting jobs per server, or (p99) nanoseconds.
    pub target: f64,
    pub every_ns: SimTime,
    /// From a scale-out decision until the new server takes work.
    pub provision_ns: SimTime,
    /// A new server's service times are multiplied by `warmup_factor` for this long.
    pub warmup_ns: SimTime,
    pub warmup_factor: f64,
    /// A scale-in needs this long since the fleet last changed.
    pub cooldown_ns: SimTime,
    pub min: u32,
    pub max: u32,
    pub scale_in: ScaleIn,
    /// No change while the signal is within this fraction of the target.
    pub tolerance: f64,
}

/// How a pool's servers shed load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShedCfg {
    /// Refuse new work at `high` waiting jobs until the queue drains to `low`.
    pub watermarks: Option<(u32, u32)>,
    pub codel: Option<CodelCfg>,
    /// Serve the newest work first while CoDel sees a standing queue.
    pub adaptive_lifo: bool,
}

/// Controlled delay ("Fail at Scale", 2015): while a server's queue has not been empty for
/// `interval`, work that waited longer than `target` is shed at the head of the queue;
/// otherwise the limit is `interval`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CodelCfg {
    pub target_ns: SimTime,
    pub interval_ns: SimTime,
}

/// The client's view of a sharded, replicated pool (Grab's Go-Redis cluster client).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClusterClientCfg {
    /// The view is refreshed every `refresh`.
    pub refresh_ns: SimTime,
    /// Also refresh at once when a command fails on a node that is down.
    pub refresh_on_error: bool,
}
