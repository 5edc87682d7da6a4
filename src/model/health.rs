//! Health checks (`health_check` on a pool): every `every` the balancer probes each of
//! the pool's servers; a server that fails `unhealthy_after` probes in a row is left out
//! of its choices until it passes `healthy_after` in a row (HAProxy's `inter`, `fall`,
//! `rise`; Envoy's `interval`, `unhealthy_threshold`, `healthy_threshold`).
//!
//! What a probe sees: it fails on a crashed server and on a server that fails fast (every
//! probe, or the event's `fraction` of them, a draw from the pool's stream), as a deep
//! check that exercises what requests do would; it does not queue or take a worker (a
//! health endpoint answers beside the work). Unlike outlier ejection there is no cap on
//! the servers held out, and a server is held out only after whole check periods: the
//! probes find a broken server without traffic, but late. If the checks hold every
//! candidate out, routing falls back as when the clients' view holds them all down.
//!
//! A slow server: with `max_outstanding = N` a probe also fails while the server holds
//! more than N jobs (queued and in service), as a probe that waits behind them would time
//! out. With `max_syncs_held = N` it fails while the server holds more than N sync jobs
//! (requests of any pool's `[pool.NAME.sync]` still awaited by their server, queued and in
//! service): each holds threads and memory of its own, and a server serving many peers'
//! shard-map builds at once misses its health checks (Kinesis 2020: "slow servers are
//! judged unhealthy"). With `on_unhealthy = "restart"` a verdict does not hold the server out but removes
//! it: it crashes into its sync's restart path ([`Simulation::restart_server`]) and must
//! rejoin; the checks then judge only servers in service (one restarting or rebuilding is
//! already out, and its probe count starts again when it is back).

use super::event::Event;
use super::simulation::Simulation;
use crate::scenario::{HealthCheckCfg, OnUnhealthy};

/// What a server holds when it is probed: jobs queued and in service, and how many of them
/// are sync jobs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    pub jobs: usize,
    pub syncs: usize,
}

/// One probe's result: it fails on a crashed server, on one that fails fast, on one
/// holding more than `max_outstanding` jobs and on one holding more than `max_syncs_held`
/// sync jobs.
pub fn probe_passes(cfg: &HealthCheckCfg, down: bool, fails_fast: bool, held: Held) -> bool {
    !down
        && !fails_fast
        && held.jobs <= cfg.max_outstanding as usize
        && held.syncs <= cfg.max_syncs_held as usize
}

/// A server's health-check state: held out or not, and how many probes in a row said the
/// opposite.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Health {
    /// The checks hold it out of the balancer's choices.
    pub unhealthy: bool,
    /// Probes in a row whose result disagrees with `unhealthy` (failed while healthy,
    /// passed while unhealthy).
    pub against: u32,
}

impl Health {
    /// The rule: one probe's result moves the state. Returns true when the server changes
    /// side (healthy to unhealthy or back).
    pub fn probe(&mut self, cfg: &HealthCheckCfg, passed: bool) -> bool {
        if passed != self.unhealthy {
            // The result agrees with the state: the run against it is broken.
            self.against = 0;
            return false;
        }
        self.against += 1;
        let needed = if self.unhealthy {
            cfg.healthy_after
        } else {
            cfg.unhealthy_after
        };
        if self.against < needed {
            return false;
        }
        self.unhealthy = !self.unhealthy;
        self.against = 0;
        true
    }
}

impl Simulation<'_> {
    /// Schedules the first check of every pool with health checks.
    pub(super) fn schedule_health_checks(&mut self) {
        for (p, pc) in self.cfg.pools.iter().enumerate() {
            if let Some(h) = pc.health_check {
                self.queue
                    .schedule(h.every_ns, Event::HealthCheck { pool: p as u16 });
            }
        }
    }

    /// Pool `p`'s balancer probes each server, in order; the next check is scheduled.
    pub(super) fn health_check(&mut self, p: usize) {
        let Some(cfg) = self.cfg.pools[p].health_check else {
            return;
        };
        let restart = cfg.on_unhealthy == OnUnhealthy::Restart;
        let mut removed = Vec::new();
        let syncs = if cfg.max_syncs_held == u32::MAX {
            Vec::new()
        } else {
            self.syncs_held(p)
        };
        let pool = &mut self.pools[p];
        pool.integrate_held_out(self.now);
        for s in 0..pool.servers.len() {
            if pool.servers[s].standby {
                continue; // outside the fleet: nobody probes it
            }
            if restart && (pool.servers[s].down || pool.servers[s].sync_out) {
                pool.servers[s].health = Health::default(); // out already: judged when back
                continue;
            }
            let held = Held {
                jobs: pool.servers[s].busy as usize + pool.servers[s].queue.len(),
                syncs: syncs.get(s).copied().unwrap_or(0),
            };
            // A crashed server draws nothing for failing fast (the pool's stream unmoved).
            let fails_fast = !pool.servers[s].down && pool.fails_fast_now(s as u32);
            let passed = probe_passes(&cfg, pool.servers[s].down, fails_fast, held);
            let server = &mut pool.servers[s];
            if server.health.probe(&cfg, passed) {
                if restart {
                    server.health = Health::default();
                    removed.push(s as u32);
                    continue;
                }
                if server.health.unhealthy {
                    pool.unhealthy += 1;
                } else {
                    pool.unhealthy -= 1;
                }
            }
        }
        for s in removed {
            self.restart_server(p, s);
        }
        self.queue.schedule(
            self.now.saturating_add(cfg.every_ns),
            Event::HealthCheck { pool: p as u16 },
        );
    }

    /// Sync jobs held by each server of pool `p`, queued and in service: the jobs of sync
    /// requests still current (a job whose request has ended or moved on is not counted; a
    /// pool that cancels expired work drops it when it reaches a worker). One pass over the
    /// jobs, at each check of a pool with `max_syncs_held` only.
    fn syncs_held(&self, p: usize) -> Vec<usize> {
        let mut held = vec![0; self.pools[p].servers.len()];
        for job in self.jobs.iter_live() {
            if job.pool as usize != p {
                continue;
            }
            let r = &self.reqs[job.req];
            if r.query_token == job.token && self.cfg.classes[r.class as usize].sync.is_some() {
                held[job.server as usize] += 1;
            }
        }
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CFG: HealthCheckCfg = HealthCheckCfg {
        every_ns: 1,
        unhealthy_after: 3,
        healthy_after: 2,
        max_outstanding: u32::MAX,
        max_syncs_held: u32::MAX,
        on_unhealthy: OnUnhealthy::HoldOut,
    };

    /// The state after each of `results`, from healthy.
    fn states(results: &[bool]) -> Vec<bool> {
        let mut h = Health::default();
        results
            .iter()
            .map(|&r| {
                h.probe(&CFG, r);
                h.unhealthy
            })
            .collect()
    }

    #[test]
    fn three_failed_probes_in_a_row_hold_a_server_out() {
        assert_eq!(
            states(&[false, false, false, false]),
            [false, false, true, true]
        );
        // A pass between failures starts the count again.
        assert_eq!(states(&[false, false, true, false, false]), [false; 5]);
    }

    #[test]
    fn two_passed_probes_in_a_row_take_it_back() {
        let out = [false, false, false];
        let back = states(&[&out[..], &[true, false, true, true]].concat());
        assert_eq!(back, [false, false, true, true, true, true, false]);
    }

    #[test]
    fn the_probe_reports_only_a_change_of_side() {
        let mut h = Health::default();
        assert!(!h.probe(&CFG, true));
        assert!(!h.probe(&CFG, false));
        assert!(!h.probe(&CFG, false));
        assert!(h.probe(&CFG, false));
        assert!(h.unhealthy);
        assert!(!h.probe(&CFG, false));
        assert!(!h.probe(&CFG, true));
        assert!(h.probe(&CFG, true));
        assert!(!h.unhealthy);
    }

    #[test]
    fn a_probe_fails_on_a_server_holding_more_than_max_outstanding_jobs_or_max_syncs_held() {
        let cfg = HealthCheckCfg {
            max_outstanding: 4,
            ..CFG
        };
        let syncs = HealthCheckCfg {
            max_syncs_held: 1,
            ..CFG
        };
        for n in 0..=10 {
            let jobs = Held { jobs: n, syncs: 0 };
            assert_eq!(probe_passes(&cfg, false, false, jobs), n <= 4, "{n} jobs");
            // Down or failing fast fails whatever the load.
            assert!(!probe_passes(&cfg, true, false, jobs));
            assert!(!probe_passes(&cfg, false, true, jobs));
            // Only the sync jobs count against max_syncs_held, however many jobs.
            let held = Held {
                jobs: 1000,
                syncs: n,
            };
            assert_eq!(
                probe_passes(&syncs, false, false, held),
                n <= 1,
                "{n} syncs"
            );
        }
        // Without the keys only a crashed or failing server fails.
        let all = Held {
            jobs: u32::MAX as usize,
            syncs: u32::MAX as usize,
        };
        assert!(probe_passes(&CFG, false, false, all));
    }
}
