//! The plain instance of the request path: the hot handlers compiled a second time with
//! every optional feature's check left out, for runs that use none of those features.
//!
//! Each hot handler (`offer` through `finish_job` and `serve_next`) takes a `const P:
//! bool`. With `P = false` it is the general path, right for every run. With `P = true`
//! a check of a feature this file's [`Simulation::plain`] has found unused is compiled
//! out: the check could only have found it off. So a plain run gives the same bytes on
//! either instance (a test holds them equal on every plain bundled design and a set of
//! plain scenarios), and the loop picks the plain one whenever it may ([`super::step`]).
//! Handlers reached from elsewhere (a crash, an intervention, a multi-part query, a
//! burst's arrival, a timeout) take the general instance: mixing the two is right, since
//! they differ only in checks that find nothing.
//!
//! What makes a run plain: no client timeout, breaker, pool call or sync at any class; no
//! cache, keys, hedge, query timeout or sync query at any step; no autoscaling, health
//! check, sync, peers, outlier ejection, lease, shedding, error rate, cancelled or
//! propagated deadlines or calls at any pool; no interventions (they swap the
//! configuration in force), and no trigger that can take a server or a pool out of
//! service (only slowdowns and bursts, or triggers switched off); no tracing, no
//! refresh-ahead; and no pool left out of service now (an outage, a server down, out of
//! sync or failing fast: what a trigger the live page switched off before its end leaves
//! behind). Retries, rate limits, closed populations, balancing, replicas, shards,
//! disciplines, queue limits, load slowdowns and every service law stay on the plain
//! instance.

use super::simulation::Simulation;
use crate::scenario::{ClassCfg, Config, PoolCfg, StepCfg, TriggerCfg, TriggerKind};

impl Simulation<'_> {
    /// Whether the run in its present state may take the plain instance of the request
    /// path. Asked each time the loop starts (a forked run's second leg has another
    /// configuration; the live page may have changed it), never while it runs: nothing a
    /// plain run does can make it unplain.
    pub(super) fn plain(&self) -> bool {
        self.plain_allowed
            && self.trace.is_none()
            && !self.refresh_ahead
            && self.sc.interventions.is_empty()
            && plain_config(&self.cfg)
            && self.plain_state()
    }

    /// No pool is in a state the plain instance does not test: an outage or a server
    /// down, out of sync or failing fast (left by a trigger the live page has switched
    /// off before its end), shedding or autoscaling.
    fn plain_state(&self) -> bool {
        self.pools.iter().all(|p| {
            p.outages == 0
                && !p.sheds
                && p.scale.is_none()
                && p.servers
                    .iter()
                    .all(|s| !s.down && !s.sync_out && s.fail_fast == 0.0)
        })
    }
}

/// Whether a configuration uses none of the features the plain instance leaves out.
pub(super) fn plain_config(cfg: &Config) -> bool {
    !cfg.deadlines
        && !cfg.watch
        && cfg.classes.iter().all(plain_class)
        && cfg.pools.iter().all(plain_pool)
        && cfg.triggers.iter().all(plain_trigger)
}

fn plain_class(c: &ClassCfg) -> bool {
    c.timeout_ns == u64::MAX
        && c.retry.breaker.is_none()
        && c.call.is_none()
        && c.sync.is_none()
        && c.steps.iter().all(plain_step)
}

fn plain_step(s: &StepCfg) -> bool {
    s.cache.is_none()
        && !s.keyed
        && !s.counts_keys
        && s.hedge.is_none()
        && s.query.timeout_ns == u64::MAX
        && !s.query.sync
}

fn plain_pool(p: &PoolCfg) -> bool {
    p.autoscale.is_none()
        && p.health_check.is_none()
        && p.sync.is_none()
        && p.peers.is_none()
        && p.outlier.is_none()
        && p.lease.is_none()
        && p.shed.is_none()
        && p.error_rate == 0.0
        && !p.cancel_expired
        && !p.drops_propagated
        && !p.has_calls
}

/// A trigger that is off (only an intervention could turn it on, and a plain run has
/// none), or one that cannot take a server or a pool out of service.
fn plain_trigger(t: &TriggerCfg) -> bool {
    !t.enabled
        || matches!(
            t.kind,
            TriggerKind::Slowdown { .. } | TriggerKind::Burst { .. }
        )
}

#[cfg(test)]
mod tests;
