//! Autoscaling (`[pool.NAME.autoscale]`): target tracking on a pool of interchangeable
//! servers. Every `every` the pool's signal over the last period (utilisation, waiting jobs
//! per live server, or p99 sojourn) sets the desired fleet by the rule of AWS target
//! tracking and the Kubernetes HPA ([`desired`]). Servers asked for come up after
//! `provision` and serve slower (`warmup`) for a while; a scale-in waits for `cooldown`
//! since the fleet last changed, and drains the newest servers or fails them.
//!
//! The candidates of routing are the live servers ([`Autoscaler::routable`]); a pool
//! without an autoscaler routes as it always did. The plain path pays one test of
//! `PoolState::scale` when a job starts (warm-up) and one when it ends (a draining server
//! leaving, the p99 signal); the rest is out of line.

use super::event::Event;
use super::histogram::Histogram;
use super::pool::Server;
use super::simulation::Simulation;
use crate::engine::time::SimTime;
use crate::scenario::{AutoscaleCfg, PoolCfg, ScaleIn, ScaleSignal};
use rand::RngExt;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Bytes a server an autoscaler added holds: its record, its slot's state, warm-up time,
/// place among the routable and in the free slots.
pub const SCALED_SERVER_BYTES: usize = std::mem::size_of::<Server>()
    + std::mem::size_of::<Slot>()
    + std::mem::size_of::<SimTime>()
    + 2 * std::mem::size_of::<u32>();

/// Where a server slot of an autoscaled pool stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// No server: free for a later scale-out.
    Free,
    /// Asked for; comes up at its `ServerUp` event.
    Provisioning,
    /// Up and routable.
    Live,
    /// Scaled in: takes no new work and leaves once it has none (draining, or failed and
    /// waiting for its work in service to end).
    Leaving,
}

/// The live state of one pool's autoscaler.
#[derive(Clone)]
pub struct Autoscaler {
    slots: Vec<Slot>,
    /// The free slots, lowest first: a scale-out takes the lowest free slot (as a scan of
    /// `slots` would) in O(log n), and appends one when none is free.
    free: BinaryHeap<Reverse<u32>>,
    /// The servers the pool started with.
    first: u32,
    /// Servers a scale-out asked for that the memory ceiling refused: the run ends with
    /// the ceiling's error at its next check.
    refused: u64,
    /// Until when each server is warming up (its service times multiplied).
    warm_until: Vec<SimTime>,
    /// The live servers in the order they came up: the candidates of routing. A scale-in
    /// takes the newest first.
    pub routable: Vec<u32>,
    /// Servers asked for and not up yet.
    provisioning: u32,
    /// When the fleet last changed (a scale-out asked for, a server up, a scale-in).
    last_change: SimTime,
    /// The pool's integrals at the last evaluation: busy, capacity, queue, live servers.
    mark: [u128; 4],
    mark_time: SimTime,
    /// Sojourns of the jobs finished since the last evaluation (the p99 signal).
    sojourn: Histogram,
    /// Servers asked for and servers scaled in over the run.
    pub added: u64,
    pub removed: u64,
}

impl Autoscaler {
    /// An autoscaler whose first `n` servers are live.
    pub fn new(n: u32) -> Self {
        Self {
            slots: vec![Slot::Live; n as usize],
            free: BinaryHeap::new(),
            first: n,
            refused: 0,
            warm_until: vec![0; n as usize],
            routable: (0..n).collect(),
            provisioning: 0,
            last_change: 0,
            mark: [0; 4],
            mark_time: 0,
            sojourn: Histogram::new(),
            added: 0,
            removed: 0,
        }
    }
}

/// The target-tracking rule (Kubernetes HPA, AWS target tracking). The signal was
/// measured on `measured_on` live servers (their time-average over the period); the ratio
/// r = signal / target. Within the tolerance band (|r - 1| <= `tolerance`) the fleet stays
/// at its `live` servers, else it becomes ceil(measured_on x r); either way clamped to
/// [`min`, `max`]. (Measured on the servers that produced the signal, not on those just
/// up: a signal of the old fleet applied to a fleet already grown would overshoot.)
pub fn desired(
    measured_on: f64,
    live: u32,
    signal: f64,
    target: f64,
    tolerance: f64,
    (min, max): (u32, u32),
) -> u32 {
    let r = signal / target;
    let want = if !r.is_finite() || (r - 1.0).abs() <= tolerance {
        live
    } else {
        (measured_on * r).ceil().min(max as f64) as u32
    };
    want.clamp(min, max)
}

impl Simulation<'_> {
    /// The servers autoscalers added beyond their pools' starting fleets, and those a
    /// scale-out asked for that the memory ceiling refused (what `--max-memory` counts
    /// as "autoscaled servers").
    pub(super) fn scaled_servers(&self) -> u64 {
        self.pools
            .iter()
            .filter_map(|p| p.scale.as_ref())
            .map(|a| (a.slots.len() as u64 - a.first as u64).saturating_add(a.refused))
            .sum()
    }

    /// Whether a scale-out was refused for the memory ceiling.
    pub(super) fn scale_refused(&self) -> bool {
        self.pools
            .iter()
            .filter_map(|p| p.scale.as_ref())
            .any(|a| a.refused > 0)
    }

    /// Schedules the first evaluation of every autoscaled pool.
    pub(super) fn schedule_autoscalers(&mut self) {
        for (p, pc) in self.cfg.pools.iter().enumerate() {
            if let Some(a) = pc.autoscale {
                self.queue
                    .schedule(a.every_ns, Event::ScaleEval { pool: p as u16 });
            }
        }
    }

    /// The server a one-part query to autoscaled pool `p` goes to: a live one, uniformly
    /// (the same draw as a fixed pool's shard while the fleet has not changed).
    #[cold]
    #[inline(never)]
    pub(super) fn route_scaled(&mut self, p: usize) -> u32 {
        let Some(sc) = &self.pools[p].scale else {
            return 0;
        };
        let n = sc.routable.len() as u32;
        let k = if n > 1 {
            self.route_rng.random_range(0..n)
        } else {
            0
        };
        sc.routable[k as usize]
    }

    /// A job of autoscaled pool `p` has ended on `server` after `sojourn_ns`: recorded for
    /// the p99 signal; a leaving server with no work left is gone.
    #[cold]
    #[inline(never)]
    pub(super) fn scaled_job_done(&mut self, p: usize, server: u32, sojourn_ns: SimTime) {
        let pool = &mut self.pools[p];
        let idle = {
            let s = &pool.servers[server as usize];
            s.busy == 0 && s.queue.is_empty()
        };
        let Some(sc) = pool.scale.as_mut() else {
            return;
        };
        sc.sojourn.record(sojourn_ns);
        if idle && sc.slots[server as usize] == Slot::Leaving {
            self.retire(p, server);
        }
    }

    /// Evaluates pool `p`'s autoscaler: the signal over the period since the last
    /// evaluation, the desired fleet, and the scale-out or scale-in it calls for.
    pub(super) fn scale_eval(&mut self, p: usize) {
        let Some(a) = self.cfg.pools[p].autoscale else {
            return;
        };
        self.queue.schedule(
            self.now.saturating_add(a.every_ns),
            Event::ScaleEval { pool: p as u16 },
        );
        let now = self.now;
        let pool = &mut self.pools[p];
        pool.integrate(now);
        pool.integrate_capacity(now);
        let st = &pool.stats;
        let now_marks = [st.busy_area, st.capacity_area, st.queue_area, st.live_area];
        let live = pool.live;
        let Some(sc) = pool.scale.as_mut() else {
            return;
        };
        let span = now - sc.mark_time;
        let d = |i: usize| (now_marks[i] - sc.mark[i]) as f64;
        // The live servers the signal was measured on (time-average over the period).
        let measured_on = if span > 0 {
            d(3) / span as f64
        } else {
            live as f64
        };
        let signal = match a.signal {
            ScaleSignal::Utilization => (d(1) > 0.0).then(|| d(0) / d(1)),
            ScaleSignal::Queue => {
                (span > 0 && measured_on > 0.0).then(|| d(2) / span as f64 / measured_on)
            }
            ScaleSignal::P99 => sc.sojourn.quantile(0.99),
        };
        sc.mark = now_marks;
        sc.mark_time = now;
        sc.sojourn.clear();
        let Some(signal) = signal else {
            return;
        };
        let want = desired(
            measured_on,
            live,
            signal,
            a.target,
            a.tolerance,
            (a.min, a.max),
        );
        let current = live + sc.provisioning;
        if want > current {
            self.scale_out(p, want - current, a);
        } else if want < current
            && sc.provisioning == 0
            && now.saturating_sub(sc.last_change) >= a.cooldown_ns
        {
            self.scale_in(p, current - want, a);
        }
    }

    /// Asks for `n` more servers of pool `p`, each up after `provision`: each takes the
    /// lowest free slot, or a new one. New slots that would take the run past its memory
    /// ceiling are refused, and the run ends with the ceiling's error at its next check.
    fn scale_out(&mut self, p: usize, n: u32, a: AutoscaleCfg) {
        let now = self.now;
        let free = self.pools[p].scale.as_ref().map_or(0, |sc| sc.free.len());
        let new = (n as u64).saturating_sub(free as u64);
        let need = new.saturating_mul(SCALED_SERVER_BYTES as u64);
        if new > 0 && self.held_bytes().saturating_add(need) > self.limits.memory {
            if let Some(sc) = self.pools[p].scale.as_mut() {
                sc.refused = sc.refused.saturating_add(new);
            }
            return;
        }
        let pool = &mut self.pools[p];
        for _ in 0..n {
            let sc = pool.scale.as_mut().expect("an autoscaled pool");
            let s = match sc.free.pop() {
                Some(Reverse(s)) => s as usize,
                None => {
                    sc.slots.push(Slot::Free);
                    sc.warm_until.push(0);
                    pool.servers.push(Server {
                        primary: true,
                        ..Server::default()
                    });
                    pool.servers.len() - 1
                }
            };
            let sc = pool.scale.as_mut().expect("an autoscaled pool");
            sc.slots[s] = Slot::Provisioning;
            sc.provisioning += 1;
            sc.added += 1;
            sc.last_change = now;
            self.queue.schedule(
                now.saturating_add(a.provision_ns),
                Event::ServerUp {
                    pool: p as u16,
                    server: s as u32,
                },
            );
        }
    }

    /// Server `s` of pool `p` is up: it takes work from now on, warming up first.
    pub(super) fn server_up(&mut self, p: usize, s: u32) {
        let Some(a) = self.cfg.pools[p].autoscale else {
            return;
        };
        let now = self.now;
        let pool = &mut self.pools[p];
        pool.integrate_capacity(now);
        pool.up += 1;
        pool.live += 1;
        let sc = pool.scale.as_mut().expect("an autoscaled pool");
        sc.slots[s as usize] = Slot::Live;
        sc.warm_until[s as usize] = now.saturating_add(a.warmup_ns);
        sc.routable.push(s);
        sc.provisioning -= 1;
        sc.last_change = now;
    }

    /// Removes the `n` newest live servers of pool `p`: each drains (takes no new work,
    /// leaves when it has none) or fails its work (`scale_in = "fail"`).
    fn scale_in(&mut self, p: usize, n: u32, a: AutoscaleCfg) {
        let now = self.now;
        for _ in 0..n {
            let pool = &mut self.pools[p];
            pool.integrate(now);
            pool.integrate_capacity(now);
            let sc = pool.scale.as_mut().expect("an autoscaled pool");
            let Some(s) = sc.routable.pop() else {
                return;
            };
            sc.slots[s as usize] = Slot::Leaving;
            sc.removed += 1;
            sc.last_change = now;
            pool.live -= 1;
            if a.scale_in == ScaleIn::Fail {
                self.crash_server(p, s);
            }
            let srv = &self.pools[p].servers[s as usize];
            if srv.busy == 0 && srv.queue.is_empty() {
                self.retire(p, s);
            }
        }
    }

    /// A leaving server with no work left is gone; its slot is free for a later scale-out.
    fn retire(&mut self, p: usize, s: u32) {
        let pool = &mut self.pools[p];
        pool.integrate_capacity(self.now);
        pool.up -= 1;
        let srv = &mut pool.servers[s as usize];
        *srv = Server {
            primary: true,
            ..Server::default()
        };
        if let Some(sc) = pool.scale.as_mut()
            && sc.slots[s as usize] != Slot::Free
        {
            sc.slots[s as usize] = Slot::Free;
            sc.free.push(Reverse(s));
        }
    }
}

impl super::pool::PoolState {
    /// A service time `t` drawn on `server` of an autoscaled pool, multiplied by the
    /// warm-up factor while the server is warming up. Out of line: only autoscaled pools
    /// call it.
    #[cold]
    #[inline(never)]
    pub fn warmed(&self, cfg: &PoolCfg, server: u32, now: SimTime, t: SimTime) -> SimTime {
        match (&self.scale, cfg.autoscale) {
            (Some(sc), Some(a)) if now < sc.warm_until[server as usize] => {
                (t as f64 * a.warmup_factor) as SimTime
            }
            _ => t,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::desired;

    /// `desired` for a fleet that did not change over the period.
    fn steady(live: u32, signal: f64, target: f64, tolerance: f64, min: u32, max: u32) -> u32 {
        desired(live as f64, live, signal, target, tolerance, (min, max))
    }

    #[test]
    fn doubles_when_the_signal_is_twice_the_target() {
        // 4 servers at 100% utilisation against a 50% target: 8.
        assert_eq!(steady(4, 1.0, 0.5, 0.1, 1, 100), 8);
        // ceil: 3 servers at 0.7 against 0.5 (r = 1.4): 4.2 -> 5.
        assert_eq!(steady(3, 0.7, 0.5, 0.1, 1, 100), 5);
    }

    #[test]
    fn halves_when_the_signal_is_half_the_target() {
        assert_eq!(steady(8, 0.25, 0.5, 0.1, 1, 100), 4);
        // ceil keeps a server for a remainder: 5 x 0.3 / 0.5 = 3.0 -> 3; 5 x 0.31 / 0.5 = 3.1 -> 4.
        assert_eq!(steady(5, 0.3, 0.5, 0.1, 1, 100), 3);
        assert_eq!(steady(5, 0.31, 0.5, 0.1, 1, 100), 4);
    }

    #[test]
    fn holds_within_the_tolerance_band() {
        // |r - 1| <= 0.1: no change, although ceil(10 x 1.09) would be 11.
        assert_eq!(steady(10, 0.545, 0.5, 0.1, 1, 100), 10);
        assert_eq!(steady(10, 0.455, 0.5, 0.1, 1, 100), 10);
        // Just outside the band: 10 x 1.12 = 11.2 -> 12; 10 x 0.88 = 8.8 -> 9.
        assert_eq!(steady(10, 0.56, 0.5, 0.1, 1, 100), 12);
        assert_eq!(steady(10, 0.44, 0.5, 0.1, 1, 100), 9);
        // Tolerance 0 acts on any difference.
        assert_eq!(steady(10, 0.51, 0.5, 0.0, 1, 100), 11);
    }

    #[test]
    fn clamps_to_min_and_max() {
        assert_eq!(steady(4, 5.0, 0.5, 0.1, 1, 10), 10);
        assert_eq!(steady(4, 0.0, 0.5, 0.1, 2, 10), 2);
        // Within the band but below min (an intervention raised it): min.
        assert_eq!(steady(2, 0.5, 0.5, 0.1, 3, 10), 3);
        // A huge signal does not overflow.
        assert_eq!(steady(4, 1e30, 1e-5, 0.1, 1, 100_000), 100_000);
    }

    #[test]
    fn a_signal_that_is_not_a_number_changes_nothing() {
        assert_eq!(steady(4, f64::NAN, 0.5, 0.1, 1, 10), 4);
    }

    #[test]
    fn scales_the_servers_the_signal_was_measured_on() {
        // Two servers saturated for the period, two more just up: the demand is 2 x 1.0 /
        // 0.55 = 3.6 servers, so 4, not ceil(4 x 1.82) = 8.
        assert_eq!(desired(2.0, 4, 1.0, 0.55, 0.1, (1, 100)), 4);
        // Half the period on 2 servers, half on 4 (3 on average) at 0.9 against 0.5: 5.4 -> 6.
        assert_eq!(desired(3.0, 4, 0.9, 0.5, 0.1, (1, 100)), 6);
    }
}
