//! Metrics sampling: at the end of every time-series window, one row with a value for each
//! column of the schema ([`crate::scenario::columns`]); at the end of the run, the
//! summary, with the accounting check that every request is accounted for.

use super::cache::CacheState;
use super::event::Event;
use super::metrics::*;
use super::pool::Held;
use super::request::{live_per_class, users_waiting};
use super::simulation::{SimError, Simulation};
use super::triggers::markers;
use crate::engine::time::{SimTime, ns_to_secs};
use crate::scenario::Config;
use crate::scenario::columns::{self, Column, Measure, Owner};
use indexmap::IndexMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The time series being written.
#[derive(Clone)]
pub(super) struct Sampler {
    /// The schema: one value per column in every row.
    columns: Vec<Column>,
    rows: Vec<Vec<f64>>,
    window_start: SimTime,
    /// The latency bound of `slow_per_s` (an SLO measure's), if a class has the column.
    slow_above_ns: f64,
    /// Where the simulated time reached is published for a progress bar.
    pub progress: Option<Arc<AtomicU64>>,
    /// Windows starting before this time (ns) are left out of the run's latency
    /// histograms (0: none; a calibration's measuring window, [`Simulation::with_latency_from`]).
    pub latency_from: SimTime,
}

impl Sampler {
    /// Drops the rows written so far (for a stepped run, [`super::stepping`]).
    pub(super) fn forget_rows(&mut self) {
        self.rows.clear();
    }

    pub(super) fn new(cfg: &Config) -> Self {
        Self {
            columns: columns::columns(cfg),
            rows: Vec::new(),
            window_start: 0,
            slow_above_ns: cfg.slow.map_or(f64::INFINITY, |s| s.above_ns as f64),
            progress: None,
            latency_from: 0,
        }
    }
}

impl Sampler {
    /// The rows written so far.
    pub(super) fn rows(&self) -> &[Vec<f64>] {
        &self.rows
    }
}

impl Simulation<'_> {
    /// Closes one window: rates per second over it, p99, pool averages, hit ratios; then
    /// the marks move to now and the next window end is scheduled.
    pub(super) fn window_end(&mut self) {
        let span = self.now - self.sampler.window_start;
        if span == 0 {
            return;
        }
        for pool in &mut self.pools {
            pool.integrate(self.now);
            pool.integrate_capacity(self.now);
            pool.integrate_waiting(self.now);
            pool.integrate_held_out(self.now);
        }
        let row: Vec<f64> = self
            .sampler
            .columns
            .iter()
            .map(|col| self.window_value(col, span))
            .collect();
        let measured = self.sampler.window_start >= self.sampler.latency_from;
        for cs in &mut self.classes {
            cs.window_mark = cs.counts;
            cs.breaker_mark = cs.breaker.open_time(self.now);
            if measured {
                cs.latency.merge(&cs.window_latency);
            }
            cs.window_latency.clear();
        }
        for pool in &mut self.pools {
            pool.window_mark = pool.stats.clone();
        }
        for cache in &mut self.caches {
            cache.window_mark = cache.counts;
        }
        self.sampler.rows.push(row);
        self.sampler.window_start = self.now;
        self.prefetch = self.reqs.live() + self.jobs.live() >= super::simulation::PREFETCH_FROM;
        let pending = self.queue.len();
        self.queue
            .look_ahead(pending >= super::simulation::LOOK_AHEAD_FROM);
        if let Some(p) = &self.sampler.progress {
            p.store(self.now, Ordering::Relaxed);
        }
        if self.now < self.end {
            self.queue.schedule(
                self.now.saturating_add(self.sc.window).min(self.end),
                Event::WindowEnd,
            );
        }
    }

    /// The value of one column over the window of length `span` that ends now.
    fn window_value(&self, col: &Column, span: SimTime) -> f64 {
        let secs = ns_to_secs(span);
        let rate = |now: u64, mark: u64| (now - mark) as f64 / secs;
        match col.owner {
            Owner::Time => ns_to_secs(self.sampler.window_start),
            Owner::Class(c) => {
                let cs = &self.classes[c];
                let (n, m) = (&cs.counts, &cs.window_mark);
                match col.measure {
                    Measure::Offered => rate(n.offered, m.offered),
                    Measure::Attempts => rate(n.attempts, m.attempts),
                    Measure::Goodput => rate(n.succeeded, m.succeeded),
                    Measure::Failed => rate(n.failed, m.failed),
                    Measure::Rejected => rate(n.rejected, m.rejected),
                    Measure::LatencyP99 => cs
                        .window_latency
                        .quantile(0.99)
                        .map(|v| v / 1e9)
                        .unwrap_or(f64::NAN),
                    Measure::SlowPerS => {
                        cs.window_latency.count_above(self.sampler.slow_above_ns) as f64 / secs
                    }
                    Measure::UsersWaiting => {
                        cs.users.as_ref().map_or(f64::NAN, |p| p.waiting() as f64)
                    }
                    _ => f64::NAN,
                }
            }
            Owner::Pool(p) => {
                let pool = &self.pools[p];
                match col.measure {
                    Measure::Utilization => pool.window(&pool.window_mark, span).0,
                    Measure::QueueLen => pool.window(&pool.window_mark, span).1,
                    Measure::QueriesPerS => rate(pool.stats.sent, pool.window_mark.sent),
                    Measure::PrimaryUtilization => pool.primary_utilization(&pool.window_mark),
                    Measure::WaitingOnCalls => pool.mean_waiting(&pool.window_mark, span),
                    Measure::ShedPerS => rate(pool.stats.shed, pool.window_mark.shed),
                    Measure::Servers => pool.mean_live(&pool.window_mark, span),
                    Measure::FailedFastPerS => {
                        rate(pool.stats.failed_fast, pool.window_mark.failed_fast)
                    }
                    Measure::Ejected => pool.mean_held_out(Held::Ejected, &pool.window_mark, span),
                    Measure::Unhealthy => {
                        pool.mean_held_out(Held::Unhealthy, &pool.window_mark, span)
                    }
                    Measure::FailedServers => {
                        pool.mean_held_out(Held::Failed, &pool.window_mark, span)
                    }
                    Measure::LeaseExpiredPerS => {
                        rate(pool.stats.lease_expired, pool.window_mark.lease_expired)
                    }
                    Measure::InService => pool.mean_sync(&pool.window_mark, span).0,
                    Measure::Syncing => pool.mean_sync(&pool.window_mark, span).1,
                    Measure::SyncsPerS => rate(pool.stats.syncs, pool.window_mark.syncs),
                    Measure::SyncFailedPerS => {
                        rate(pool.stats.syncs_failed, pool.window_mark.syncs_failed)
                    }
                    _ => f64::NAN,
                }
            }
            Owner::Call(i) => {
                let cs = &self.classes[self.cfg.calls[i].class];
                let (n, m) = (&cs.counts, &cs.window_mark);
                match col.measure {
                    Measure::CallsPerS => rate(n.attempts, m.attempts),
                    Measure::CallFailed => rate(n.failed + n.rejected, m.failed + m.rejected),
                    Measure::BreakerOpen => {
                        (cs.breaker.open_time(self.now) - cs.breaker_mark) as f64 / span as f64
                    }
                    _ => f64::NAN,
                }
            }
            Owner::Cache(c) => {
                let cache = &self.caches[c];
                let (n, m) = (&cache.counts, &cache.window_mark);
                match col.measure {
                    Measure::Coalesced => rate(n.coalesced, m.coalesced),
                    Measure::Refreshes => rate(n.refreshes, m.refreshes),
                    _ => CacheState::hit_ratio(n, m),
                }
            }
        }
    }

    /// Ends the run: checks that every request is accounted for, and builds the result.
    pub(super) fn finish(mut self) -> Result<RunResult, SimError> {
        let dur_s = ns_to_secs(self.end);
        let live = live_per_class(&self.reqs, self.classes.len());
        let users_waiting = users_waiting(&self.reqs, self.classes.len());
        let mut classes = IndexMap::new();
        let mut calls = IndexMap::new();
        let mut latency_quantiles_s = IndexMap::new();
        for (c, cs) in self.classes.iter().enumerate() {
            let k = cs.counts;
            let cfg = &self.cfg.classes[c];
            let name = cfg.name.clone();
            // Every user of a population is thinking or waiting on its request.
            if let Some(p) = &cs.users
                && (!p.alive_consistent() || p.alive() != p.thinking + users_waiting[c])
            {
                return Err(SimError::Accounting {
                    class: name,
                    detail: format!(
                        "{} users alive, {} thinking, {} waiting on a request",
                        p.alive(),
                        p.thinking,
                        users_waiting[c]
                    ),
                });
            }
            // Every request is accounted for, in every run.
            if k.offered != k.admitted + k.rejected
                || k.admitted != k.succeeded + k.failed + live[c]
            {
                return Err(SimError::Accounting {
                    class: name,
                    detail: format!(
                        "offered {} admitted {} rejected {} succeeded {} failed {} in flight {}",
                        k.offered, k.admitted, k.rejected, k.succeeded, k.failed, live[c]
                    ),
                });
            }
            let q = |x: f64| cs.latency.quantile(x).map(|v| v / 1e9);
            let latency_s = Latency {
                mean: (k.succeeded > 0)
                    .then(|| cs.latency_sum_ns as f64 / k.succeeded as f64 / 1e9),
                p50: q(0.5),
                p99: q(0.99),
            };
            // A pool's syncs are summed up with the pool.
            if cfg.sync.is_some() {
                continue;
            }
            let hedged = cfg.steps.iter().any(|st| st.hedge.is_some());
            if cfg.call.is_some() {
                calls.insert(
                    name,
                    CallSummary {
                        calls: k.offered,
                        rejected: k.rejected,
                        attempts: k.attempts,
                        succeeded: k.succeeded,
                        failed: k.failed,
                        in_flight: live[c],
                        latency_s,
                        hedges: hedged.then_some(k.hedges),
                        breaker_open_s: cfg
                            .retry
                            .breaker
                            .map(|_| ns_to_secs(cs.breaker.open_time(self.end))),
                    },
                );
                continue;
            }
            let uses_keys = cfg.steps.iter().any(|st| st.counts_keys);
            latency_quantiles_s.insert(name.clone(), QUANTILES.map(q));
            classes.insert(
                name,
                ClassSummary {
                    offered: k.offered,
                    admitted: k.admitted,
                    rejected: k.rejected,
                    succeeded: k.succeeded,
                    failed: k.failed,
                    in_flight: live[c],
                    attempts: k.attempts,
                    goodput_per_s: k.succeeded as f64 / dur_s,
                    latency_s,
                    keys_ok: uses_keys.then_some(k.keys_ok),
                    keys_failed: uses_keys.then_some(k.keys_failed),
                    hedges: hedged.then_some(k.hedges),
                    users: cs.users.as_ref().map(|p| UsersSummary {
                        users: p.target(),
                        thinking: p.thinking,
                        away: p.away,
                        waiting: users_waiting[c],
                    }),
                },
            );
        }
        let mut pools = IndexMap::new();
        for (p, pool) in self.pools.iter_mut().enumerate() {
            pool.integrate(self.end);
            pool.integrate_capacity(self.end);
            pool.integrate_waiting(self.end);
            pool.integrate_held_out(self.end);
            let pcfg = &self.cfg.pools[p];
            let calls = pcfg.has_calls;
            let (util, qlen) = pool.window(&Default::default(), self.end);
            let (wait, sojourn) = pool.means();
            let s = &pool.stats;
            pools.insert(
                self.cfg.pools[p].name.clone(),
                PoolSummary {
                    utilization: util,
                    mean_queue_len: qlen,
                    mean_wait_s: wait,
                    mean_sojourn_s: sojourn,
                    served: s.served,
                    dropped: s.dropped,
                    expired: s.expired,
                    queries: s.sent,
                    failed_fast: s.failed_fast,
                    started_late: self.cfg.deadlines.then_some(s.started_late),
                    primary_utilization: pool
                        .replicated()
                        .then(|| pool.primary_utilization(&Default::default())),
                    mean_waiting_on_calls: calls
                        .then(|| pool.mean_waiting(&Default::default(), self.end)),
                    fallbacks: calls.then_some(s.fallbacks),
                    shed: pcfg.shed.map(|_| s.shed),
                    mean_servers: pool
                        .scale
                        .as_ref()
                        .map(|_| pool.mean_live(&Default::default(), self.end)),
                    servers_added: pool.scale.as_ref().map(|sc| sc.added),
                    servers_removed: pool.scale.as_ref().map(|sc| sc.removed),
                    ejections: pcfg.outlier.map(|_| s.ejections),
                    mean_ejected: pcfg
                        .outlier
                        .map(|_| pool.mean_held_out(Held::Ejected, &Default::default(), self.end)),
                    mean_unhealthy: pcfg.health_check.map(|_| {
                        pool.mean_held_out(Held::Unhealthy, &Default::default(), self.end)
                    }),
                    mean_failed_servers: pcfg
                        .peers
                        .map(|_| pool.mean_held_out(Held::Failed, &Default::default(), self.end)),
                    servers_in_fleet: pool.fleet.as_ref().map(|f| f.size),
                    lease_expired: pcfg.lease.map(|_| s.lease_expired),
                    sync: pcfg.sync.as_ref().map(|sc| {
                        let (in_service, syncing) = pool.mean_sync(&Default::default(), self.end);
                        let k = self.classes[sc.class].counts;
                        SyncSummary {
                            syncs: s.syncs,
                            succeeded: k.succeeded,
                            failed: k.failed,
                            in_flight: live[sc.class],
                            mean_in_service: in_service,
                            mean_syncing: syncing,
                        }
                    }),
                },
            );
        }
        let caches = self
            .caches
            .iter()
            .zip(&self.cfg.caches)
            .map(|(cs, cfg)| {
                let k = cs.counts;
                let ratio = CacheState::hit_ratio(&k, &Default::default());
                (
                    cfg.name.clone(),
                    CacheSummary {
                        hit_ratio: ratio.is_finite().then_some(ratio),
                        lookups: k.lookups,
                        hits: k.hits,
                        fills: k.fills,
                        slot_losses: k.losses,
                        coalesced: cfg.coalesce.then_some(k.coalesced),
                        refreshes: cfg.refresh_ahead.map(|_| k.refreshes),
                    },
                )
            })
            .collect();
        Ok(RunResult {
            summary: Summary {
                caches,
                scenario: self.sc.name.clone(),
                variant: self.sc.variant.clone(),
                seed: self.sc.seed,
                sim_duration_s: dur_s,
                events: self.events,
                classes,
                pools,
                calls,
            },
            series: TimeSeries {
                columns: std::mem::take(&mut self.sampler.columns),
                rows: std::mem::take(&mut self.sampler.rows),
            },
            markers: markers(self.sc),
            title: self.sc.title.clone(),
            latency_quantiles_s,
            wall_s: 0.0,
            zoom: self.sc.zoom.map(|(a, b)| (ns_to_secs(a), ns_to_secs(b))),
            traces: self.trace.take().map(|t| t.into_log(&self.cfg)),
            witness: std::mem::take(&mut self.witness),
        })
    }
}
