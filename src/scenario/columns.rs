//! The time-series schema: the one typed list of the columns of `timeseries.csv`.
//!
//! The model writes its rows in this order ([`crate::model`]'s sampler asks each column for
//! its value), the timeline picks its lines by [`Measure`], sweeps check their measure
//! against it, and `docs/scenario.md` lists it (a test holds the doc to [`Measure::ALL`]).
//! It lives with the validated configuration because the columns follow from it (one set
//! per class, pool and cache) and because sweep validation, below the model, needs it.

use super::spec::{Config, TriggerKind};

/// What a column measures. Rates are per second over one time-series window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Measure {
    /// The window's start, in seconds (the first column).
    Time,
    /// New requests offered by the clients of a class.
    Offered,
    /// Request-level attempts (first tries and retries).
    Attempts,
    /// Requests that succeeded.
    Goodput,
    /// Requests that failed after their last attempt.
    Failed,
    /// Requests refused at admission (rate limit).
    Rejected,
    /// 99th percentile latency of the window's successful requests, seconds.
    LatencyP99,
    /// Successful requests slower than the latency bound of the sweep's SLO (the class an
    /// `slo.CLASS` measure names only): with the goodput, the quantile of any run of rows
    /// against the bound, taken over their requests.
    SlowPerS,
    /// Users of a population waiting on their request at the window's end (closed-loop
    /// classes only).
    UsersWaiting,
    /// Busy workers over worker capacity.
    Utilization,
    /// Time-average number of waiting queries.
    QueueLen,
    /// Queries sent to the pool (every part and every retry).
    QueriesPerS,
    /// Busy primaries over their capacity (pools with replicas only).
    PrimaryUtilization,
    /// Time-average workers held by jobs waiting on their calls (pools with calls only);
    /// `utilization` counts them as busy.
    WaitingOnCalls,
    /// Queries refused or dropped by load shedding (pools that shed only).
    ShedPerS,
    /// Time-average live (routable) servers (autoscaled pools only).
    Servers,
    /// Queries that failed at once, without being served: an outage, a crashed server, a
    /// fail-fast server (pools that a `fail_fast` event names or that eject outliers only).
    FailedFastPerS,
    /// Time-average servers that outlier ejection holds out (pools that eject outliers
    /// only).
    Ejected,
    /// Time-average servers that failed health checks hold out (pools with health checks
    /// only).
    Unhealthy,
    /// Jobs whose lease expired: service wasted (and, with `on_expiry = "drop"`, jobs
    /// dropped at dequeue with their lease already past) (pools with a `lease` only).
    LeaseExpiredPerS,
    /// Time-average servers of the fleet failed at their thread limit (pools with `peers`
    /// only).
    FailedServers,
    /// Time-average servers in service: all but those their sync holds out (pools with
    /// `sync` only).
    InService,
    /// Time-average syncs in flight (pools with `sync` only).
    Syncing,
    /// Syncs started (pools with `sync` only).
    SyncsPerS,
    /// Syncs that failed: timed out, failed, or vetoed (pools with `sync` only).
    SyncFailedPerS,
    /// Cache hits over lookups, key by key.
    HitRatio,
    /// Misses that waited for another request's fill of their keys (tiers that `coalesce`
    /// only).
    Coalesced,
    /// Background refreshes sent (tiers with `refresh_ahead` only).
    Refreshes,
    /// Tries of a pool call (first tries and retries): queries per dependency.
    CallsPerS,
    /// Pool calls that failed for good, or that the call's bulkhead refused.
    CallFailed,
    /// Share of the window the call's breaker was open (calls with a breaker only).
    BreakerOpen,
}

/// Which component a column belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Owner {
    /// The `time_s` column.
    Time,
    /// A request class, by index into [`Config::classes`].
    Class(usize),
    /// A server pool, by index into [`Config::pools`].
    Pool(usize),
    /// A cache tier, by index into [`Config::caches`].
    Cache(usize),
    /// A pool call, by index into [`Config::calls`].
    Call(usize),
}

impl Measure {
    /// Every measure, in column order within its component.
    pub const ALL: [Measure; 31] = [
        Measure::Time,
        Measure::Offered,
        Measure::Attempts,
        Measure::Goodput,
        Measure::Failed,
        Measure::Rejected,
        Measure::LatencyP99,
        Measure::SlowPerS,
        Measure::UsersWaiting,
        Measure::Utilization,
        Measure::QueueLen,
        Measure::QueriesPerS,
        Measure::PrimaryUtilization,
        Measure::WaitingOnCalls,
        Measure::ShedPerS,
        Measure::Servers,
        Measure::FailedFastPerS,
        Measure::Ejected,
        Measure::Unhealthy,
        Measure::LeaseExpiredPerS,
        Measure::FailedServers,
        Measure::InService,
        Measure::Syncing,
        Measure::SyncsPerS,
        Measure::SyncFailedPerS,
        Measure::HitRatio,
        Measure::Coalesced,
        Measure::Refreshes,
        Measure::CallsPerS,
        Measure::CallFailed,
        Measure::BreakerOpen,
    ];

    /// The measures a component of `kind` ("class", "pool", "cache", "call") has, in column
    /// order.
    pub fn of(kind: &'static str) -> impl Iterator<Item = Measure> {
        Measure::ALL
            .into_iter()
            .filter(move |m| m.owner_kind() == kind)
    }

    /// The column name's suffix (after `<component>.`), or the whole name for `time_s`.
    pub fn suffix(self) -> &'static str {
        match self {
            Measure::Time => "time_s",
            Measure::Offered => "offered_per_s",
            Measure::Attempts => "attempts_per_s",
            Measure::Goodput => "goodput_per_s",
            Measure::Failed => "failed_per_s",
            Measure::Rejected => "rejected_per_s",
            Measure::LatencyP99 => "latency_p99_s",
            Measure::SlowPerS => "slow_per_s",
            Measure::Utilization => "utilization",
            Measure::QueueLen => "queue_len",
            Measure::UsersWaiting => "users_waiting",
            Measure::QueriesPerS => "queries_per_s",
            Measure::PrimaryUtilization => "primary_utilization",
            Measure::WaitingOnCalls => "waiting_on_calls",
            Measure::ShedPerS => "shed_per_s",
            Measure::Servers => "servers",
            Measure::FailedFastPerS => "failed_fast_per_s",
            Measure::Ejected => "ejected",
            Measure::Unhealthy => "unhealthy",
            Measure::LeaseExpiredPerS => "lease_expired_per_s",
            Measure::FailedServers => "failed_servers",
            Measure::InService => "in_service",
            Measure::Syncing => "syncing",
            Measure::SyncsPerS => "syncs_per_s",
            Measure::SyncFailedPerS => "sync_failed_per_s",
            Measure::HitRatio => "hit_ratio",
            Measure::Coalesced => "coalesced_per_s",
            Measure::Refreshes => "refreshes_per_s",
            Measure::CallsPerS => "calls_per_s",
            Measure::CallFailed => "failed_per_s",
            Measure::BreakerOpen => "breaker_open",
        }
    }

    /// The kind of component that has this measure: "class", "pool", "cache", "call" or ""
    /// (time).
    pub fn owner_kind(self) -> &'static str {
        match self {
            Measure::Time => "",
            Measure::Offered
            | Measure::Attempts
            | Measure::Goodput
            | Measure::Failed
            | Measure::Rejected
            | Measure::LatencyP99
            | Measure::SlowPerS
            | Measure::UsersWaiting => "class",
            Measure::Utilization
            | Measure::QueueLen
            | Measure::QueriesPerS
            | Measure::PrimaryUtilization
            | Measure::WaitingOnCalls
            | Measure::ShedPerS
            | Measure::Servers
            | Measure::FailedFastPerS
            | Measure::Ejected
            | Measure::Unhealthy
            | Measure::LeaseExpiredPerS
            | Measure::FailedServers
            | Measure::InService
            | Measure::Syncing
            | Measure::SyncsPerS
            | Measure::SyncFailedPerS => "pool",
            Measure::HitRatio | Measure::Coalesced | Measure::Refreshes => "cache",
            Measure::CallsPerS | Measure::CallFailed | Measure::BreakerOpen => "call",
        }
    }

    /// True for a ratio between 0 and 1 (drawn on a fixed axis).
    pub fn is_ratio(self) -> bool {
        matches!(
            self,
            Measure::Utilization
                | Measure::PrimaryUtilization
                | Measure::HitRatio
                | Measure::BreakerOpen
        )
    }
}

/// One column of `timeseries.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub owner: Owner,
    pub measure: Measure,
    /// `<component>.<suffix>`, or `time_s`.
    pub name: String,
}

/// The columns of `timeseries.csv` for a configuration: `time_s`, then per client class its
/// measures (`slow_per_s` only for the class of an SLO measure), per pool `utilization`, `queue_len`, `queries_per_s` (and
/// `primary_utilization` with replicas, `waiting_on_calls` with calls, `shed_per_s` when it
/// sheds, `servers` when it autoscales, `failed_fast_per_s` when a `fail_fast` event names
/// it or it ejects outliers, checks health or syncs, `ejected` when it ejects outliers,
/// `unhealthy` when it checks health, `lease_expired_per_s` with a lease, `failed_servers`
/// with `peers`, `in_service`, `syncing`, `syncs_per_s` and `sync_failed_per_s` when it
/// syncs), per cache tier `hit_ratio` (and `coalesced_per_s`
/// when it coalesces, `refreshes_per_s` when it refreshes ahead), per pool call
/// `calls_per_s`, `failed_per_s` (and
/// `breaker_open` with a breaker), each in the order of [`Measure::ALL`]. A scenario
/// without calls or shedding has the columns it always had.
pub fn columns(cfg: &Config) -> Vec<Column> {
    let mut out = vec![Column {
        owner: Owner::Time,
        measure: Measure::Time,
        name: Measure::Time.suffix().to_string(),
    }];
    let mut add = |owner: Owner, component: &str, m: Measure| {
        out.push(Column {
            owner,
            measure: m,
            name: format!("{component}.{}", m.suffix()),
        })
    };
    for (i, c) in cfg.client_classes().iter().enumerate() {
        for m in Measure::of("class") {
            let has = match m {
                Measure::UsersWaiting => c.users.is_some(),
                Measure::SlowPerS => cfg.slow.is_some_and(|s| s.class == i),
                _ => true,
            };
            if has {
                add(Owner::Class(i), &c.name, m);
            }
        }
    }
    let fails_fast = |pool: usize| {
        cfg.triggers
            .iter()
            .any(|t| matches!(t.kind, TriggerKind::FailFast { pool: q, .. } if q == pool))
    };
    for (i, p) in cfg.pools.iter().enumerate() {
        for m in Measure::of("pool") {
            // Only pools with replicas have primaries to tell apart, and so on.
            let has = match m {
                Measure::PrimaryUtilization => p.replicas > 0,
                Measure::WaitingOnCalls => p.has_calls,
                Measure::ShedPerS => p.shed.is_some(),
                Measure::Servers => p.autoscale.is_some(),
                Measure::FailedFastPerS => {
                    p.outlier.is_some()
                        || p.health_check.is_some()
                        || p.sync.is_some()
                        || fails_fast(i)
                }
                Measure::Ejected => p.outlier.is_some(),
                Measure::Unhealthy => p.health_check.is_some(),
                Measure::LeaseExpiredPerS => p.lease.is_some(),
                Measure::FailedServers => p.peers.is_some(),
                Measure::InService
                | Measure::Syncing
                | Measure::SyncsPerS
                | Measure::SyncFailedPerS => p.sync.is_some(),
                _ => true,
            };
            if has {
                add(Owner::Pool(i), &p.name, m);
            }
        }
    }
    for (i, c) in cfg.caches.iter().enumerate() {
        for m in Measure::of("cache") {
            let has = match m {
                Measure::Coalesced => c.coalesce,
                Measure::Refreshes => c.refresh_ahead.is_some(),
                _ => true,
            };
            if has {
                add(Owner::Cache(i), &c.name, m);
            }
        }
    }
    for (i, call) in cfg.calls.iter().enumerate() {
        for m in Measure::of("call") {
            if m != Measure::BreakerOpen || cfg.classes[call.class].retry.breaker.is_some() {
                add(Owner::Call(i), &call.name, m);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column list of `timeseries.csv` in `docs/scenario.md`: the first backquoted name
    /// of each list item after the paragraph that introduces it.
    fn documented_columns(doc: &str) -> Vec<&str> {
        let start = doc
            .find("Each row of `timeseries.csv`")
            .expect("docs/scenario.md introduces the columns of timeseries.csv");
        doc[start..]
            .lines()
            .skip_while(|l| !l.starts_with("- "))
            .take_while(|l| l.starts_with("- "))
            .map(|l| {
                l.split('`')
                    .nth(1)
                    .expect("a list item starts with a column")
            })
            .collect()
    }

    #[test]
    fn the_scenario_doc_lists_every_column_once_in_order() {
        let doc = include_str!("../../docs/scenario.md");
        let expected: Vec<String> = Measure::ALL
            .iter()
            .map(|m| match m.owner_kind() {
                "" => m.suffix().to_string(),
                kind => format!("<{kind}>.{}", m.suffix()),
            })
            .collect();
        assert_eq!(documented_columns(doc), expected);
    }
}
