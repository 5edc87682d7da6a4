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

use super::event::Event;
use super::simulation::Simulation;
use crate::scenario::HealthCheckCfg;

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
        let pool = &mut self.pools[p];
        pool.integrate_held_out(self.now);
        for s in 0..pool.servers.len() {
            if pool.servers[s].standby {
                continue; // outside the fleet: nobody probes it
            }
            let passed = !pool.servers[s].down && !pool.fails_fast_now(s as u32);
            let server = &mut pool.servers[s];
            if server.health.probe(&cfg, passed) {
                if server.health.unhealthy {
                    pool.unhealthy += 1;
                } else {
                    pool.unhealthy -= 1;
                }
            }
        }
        self.queue.schedule(
            self.now.saturating_add(cfg.every_ns),
            Event::HealthCheck { pool: p as u16 },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CFG: HealthCheckCfg = HealthCheckCfg {
        every_ns: 1,
        unhealthy_after: 3,
        healthy_after: 2,
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
}
