//! Outlier ejection (`outlier_ejection` on a pool): the balancer counts each server's
//! errors in a row and takes a server out of its choices for a while after too many, as
//! Envoy's outlier detection does (`consecutive_5xx`, `base_ejection_time`,
//! `max_ejection_percent`). The sinkhole it guards against: a server that fails fast looks
//! idle to a least-loaded balancer, which then sends it most of the traffic.
//!
//! What counts: every answer a server gives, whether or not its caller still waits for it
//! (an error: the error rate, a crash, a fail-fast event, a failed call below; a success
//! resets the count). A pool-wide outage is not a server's answer and does not count.
//! Ejection changes only the balancer's choices ([`super::pool::Server::routable`]): a
//! query that must go to one server (its key's shard, a primary) still goes there, and an
//! ejected server finishes the work it holds. It comes back after `eject_for` with its
//! count at zero. Nothing here draws a random number.

use super::event::Event;
use super::simulation::Simulation;
use crate::scenario::OutlierCfg;

/// The rule: a server whose errors in a row reach the threshold is ejected, unless the
/// pool already holds out as many servers as it may.
pub fn ejects(cfg: &OutlierCfg, errors_in_row: u32, ejected_now: u32) -> bool {
    errors_in_row >= cfg.consecutive_errors && ejected_now < cfg.max_ejected
}

impl Simulation<'_> {
    /// Server `server` of pool `p` answered a query, `ok` or with an error: with outlier
    /// ejection, its count moves and it may be ejected. Out of line: only pools with
    /// `outlier_ejection` call it.
    #[inline(never)]
    pub(super) fn answered(&mut self, p: usize, server: u32, ok: bool) {
        let Some(cfg) = self.cfg.pools[p].outlier else {
            return;
        };
        let pool = &mut self.pools[p];
        let s = &mut pool.servers[server as usize];
        if s.ejected {
            return;
        }
        if ok {
            s.errors_in_row = 0;
            return;
        }
        s.errors_in_row = s.errors_in_row.saturating_add(1);
        // Past the threshold with no room, it stays a candidate and each further error
        // tries again.
        if !ejects(&cfg, s.errors_in_row, pool.ejected) {
            return;
        }
        s.ejected = true;
        s.errors_in_row = 0;
        pool.integrate_held_out(self.now);
        pool.ejected += 1;
        pool.stats.ejections += 1;
        self.queue.schedule(
            self.now.saturating_add(cfg.eject_for_ns),
            Event::Readmit {
                pool: p as u16,
                server,
            },
        );
    }

    /// An ejected server's time is up: the balancer may choose it again.
    pub(super) fn readmit(&mut self, p: usize, server: u32) {
        let pool = &mut self.pools[p];
        pool.integrate_held_out(self.now);
        let s = &mut pool.servers[server as usize];
        if std::mem::take(&mut s.ejected) {
            s.errors_in_row = 0;
            pool.ejected -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pool::Server;

    const CFG: OutlierCfg = OutlierCfg {
        consecutive_errors: 3,
        eject_for_ns: 1,
        max_ejected: 2,
    };

    #[test]
    fn ejects_at_the_threshold_while_there_is_room() {
        assert!(!ejects(&CFG, 2, 0));
        assert!(ejects(&CFG, 3, 0));
        assert!(ejects(&CFG, 7, 1));
        // The pool holds out its most: no more, whatever the count.
        assert!(!ejects(&CFG, 3, 2));
        assert!(!ejects(&CFG, 100, 5));
    }

    #[test]
    fn a_one_error_threshold_ejects_at_the_first_error() {
        let cfg = OutlierCfg {
            consecutive_errors: 1,
            ..CFG
        };
        assert!(!ejects(&cfg, 0, 0));
        assert!(ejects(&cfg, 1, 1));
    }

    #[test]
    fn an_ejected_server_is_no_candidate_but_keeps_its_load() {
        let mut s = Server {
            busy: 2,
            ..Server::default()
        };
        assert!(s.candidate().up);
        s.ejected = true;
        let c = s.candidate();
        assert!(!c.up);
        assert_eq!(c.outstanding, 2);
        s.ejected = false;
        s.view_down = true;
        assert!(!s.routable());
    }
}
