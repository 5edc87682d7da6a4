//! Servers held out of service, by each mechanism that can: outlier ejection, health
//! checks, a server's sync, standby outside a `peers` fleet, and a fleet's servers failed
//! at their thread limit. The counts now and their time integrals, for the columns and
//! the summary.

use super::{PoolState, PoolStats};
use crate::engine::time::SimTime;

/// What holds a pool's server out of service, as its time integrals count it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// Outlier ejection.
    Ejected,
    /// Failed health checks.
    Unhealthy,
    /// Failed at its thread limit (`peers`).
    Failed,
}

impl PoolState {
    /// Server `s` leaves the fleet for standby (down, out of routing) or comes back into it
    /// (up); the held-out count follows. Call with the integrals up to date.
    pub fn set_standby(&mut self, s: usize, standby: bool) {
        let server = &mut self.servers[s];
        if server.standby == standby {
            return;
        }
        server.standby = standby;
        server.down = standby;
        if server.view_down != standby {
            server.view_down = standby;
            if standby {
                self.viewed_down += 1;
            } else {
                self.viewed_down -= 1;
            }
        }
        server.health = Default::default();
        if standby {
            self.standby += 1;
        } else {
            self.standby -= 1;
        }
    }

    /// Accumulates the integrals of ejected, unhealthy and out-of-service servers and of
    /// syncs in flight up to `now`; call before any of those counts changes and before
    /// reading statistics.
    pub fn integrate_held_out(&mut self, now: SimTime) {
        let dt = (now - self.held_last) as u128;
        self.stats.ejected_area += self.ejected as u128 * dt;
        self.stats.unhealthy_area += self.unhealthy as u128 * dt;
        self.stats.failed_area += self.failed as u128 * dt;
        self.stats.sync_out_area += self.sync_out as u128 * dt;
        self.stats.syncing_area += self.syncing as u128 * dt;
        self.held_last = now;
    }

    /// Servers held out of the balancer's choices now, by any mechanism.
    #[inline]
    pub fn held_out(&self) -> u32 {
        self.ejected + self.unhealthy + self.sync_out + self.standby
    }

    /// Time-average servers in service by their sync (all but those it holds out) and
    /// syncs in flight, between two stat snapshots `ns` apart.
    pub fn mean_sync(&self, from: &PoolStats, ns: SimTime) -> (f64, f64) {
        // A pool with `peers` counts its fleet only (its standby servers are not serving),
        // and a server failed at its thread limit is not in service either.
        if ns == 0 {
            let n = self.servers.len() as u32 - self.standby;
            let out = self.sync_out + self.failed;
            return (n.saturating_sub(out) as f64, self.syncing as f64);
        }
        let n = match self.fleet {
            Some(_) => self.mean_live(from, ns),
            None => self.servers.len() as f64,
        };
        let area = |now: u128, was: u128| (now - was) as f64 / ns as f64;
        let out = area(self.stats.sync_out_area, from.sync_out_area)
            + area(self.stats.failed_area, from.failed_area);
        let syncing = area(self.stats.syncing_area, from.syncing_area);
        ((n - out).max(0.0), syncing)
    }

    /// Time-average servers held out (ejected, unhealthy) or failed between two stat
    /// snapshots `ns` apart.
    pub fn mean_held_out(&self, which: Held, from: &PoolStats, ns: SimTime) -> f64 {
        let (area, from, now) = match which {
            Held::Unhealthy => (
                self.stats.unhealthy_area,
                from.unhealthy_area,
                self.unhealthy,
            ),
            Held::Ejected => (self.stats.ejected_area, from.ejected_area, self.ejected),
            Held::Failed => (self.stats.failed_area, from.failed_area, self.failed),
        };
        if ns == 0 {
            return now as f64;
        }
        (area - from) as f64 / ns as f64
    }
}
