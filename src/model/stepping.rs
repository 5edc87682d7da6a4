//! Running a simulation in steps, for rare-event estimators: start it, advance it until a
//! level (requests in flight, or a pool's queue) crosses a threshold, clone it at that
//! moment and give each copy its own random streams. The steps are the one loop's
//! ([`super::step`]) with a watch that reads the level after each event.

use super::simulation::{SimError, Simulation};
use super::step::Watch;
use super::streams::Streams;
use crate::engine::stream_rng;
use crate::engine::time::{SimTime, ns_to_secs};

/// What is counted as the system's level (the `[collapse]` section's choice).
pub use crate::scenario::CollapseLevel as Level;

/// How [`Simulation::advance_until`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crossing {
    /// The level reached the upper threshold.
    Up,
    /// The level fell to the base threshold (or below).
    Base,
    /// The event budget ran out first.
    Budget,
}

/// The watch of [`Simulation::advance_until`]: the level after each event, and the events
/// handled against the step's share of the estimate's budget.
struct ToLevel {
    level: Level,
    up: u64,
    base: Option<u64>,
    /// The event count at which the step stops.
    stop: u64,
    crossed: Crossing,
}

impl Watch for ToLevel {
    const KEEPS_PAST_END: bool = true;

    #[inline(always)]
    fn after(&mut self, sim: &mut Simulation, window: bool) -> bool {
        if window {
            // Nobody reads a stepped run's rows; kept, they would fill memory over
            // simulated years and make every clone dear.
            sim.sampler.forget_rows();
        }
        let l = sim.level(self.level);
        self.crossed = if l >= self.up {
            Crossing::Up
        } else if self.base.is_some_and(|b| l <= b) {
            Crossing::Base
        } else if sim.events >= self.stop {
            Crossing::Budget
        } else {
            return false;
        };
        true
    }
}

impl<'a> Simulation<'a> {
    /// Starts a stepped run that may go on for `horizon` of simulated time: schedules what
    /// [`Simulation::run`] schedules before its loop. Its events are counted by its
    /// estimate's own budget, not the run's (`--max-events`), which is lifted; every other
    /// budget holds as in any run.
    pub fn start(&mut self, horizon: SimTime) {
        self.end = horizon;
        self.limits.events = u64::MAX;
        self.schedule_start();
    }

    /// The current level.
    #[inline(always)]
    pub fn level(&self, level: Level) -> u64 {
        match level {
            Level::InFlight => self.reqs.live() as u64,
            Level::Queue(p) => self.pools[p].queued,
        }
    }

    /// Drops the latency histograms' contents and memory (a split keeps thousands of
    /// copies alive, and nothing a stepped run decides reads them).
    pub fn forget_latencies(&mut self) {
        for cs in &mut self.classes {
            cs.latency.release();
            cs.window_latency.release();
        }
    }

    /// Simulated time now (ns).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Simulated time now, in seconds.
    pub fn now_s(&self) -> f64 {
        ns_to_secs(self.now)
    }

    /// Events handled so far (a clone counts those of its ancestors too).
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Handles events until the level is at least `up` (an up-crossing), at most `base`
    /// (if given), or `max_events` events have been handled, whichever comes first; the
    /// level is checked after each event. A run that reaches its horizon stops as `Budget`.
    pub fn advance_until(
        &mut self,
        level: Level,
        up: u64,
        base: Option<u64>,
        max_events: u64,
    ) -> Result<Crossing, SimError> {
        if max_events == 0 {
            return Ok(Crossing::Budget);
        }
        let mut watch = ToLevel {
            level,
            up,
            base,
            stop: self.events.saturating_add(max_events),
            crossed: Crossing::Budget,
        };
        self.run_events(&mut watch)?;
        Ok(watch.crossed)
    }

    /// Gives every random stream of this simulation a new seed derived from (`seed`,
    /// `split`, stream name), so that a clone continues on a future of its own; the same
    /// (`seed`, `split`) gives the same future. Each class's pending arrival is drawn
    /// again: arrivals are Poisson (thinned for a profile), so the time to the next one
    /// does not depend on the time since the last, and clones of one state that shared it
    /// would all take their first step alike. Events already scheduled otherwise
    /// (services under way, timeouts) stay as drawn: they are part of the state.
    pub fn reseed(&mut self, seed: u64, split: u64) {
        let st = Streams::draw(&self.cfg, |name| {
            stream_rng(seed, split, &format!("split.{name}"))
        });
        let streams = st.class.into_iter().zip(st.retry).zip(st.users);
        for (cs, ((rng, retry), users)) in self.classes.iter_mut().zip(streams) {
            cs.rng = rng;
            cs.retry_rng = retry;
            if let (Some(p), Some(rng)) = (cs.users.as_mut(), users) {
                p.rng = rng;
            }
        }
        let streams = st
            .pool
            .into_iter()
            .zip(st.balance)
            .zip(st.peers)
            .zip(st.sync);
        for (ps, (((rng, balance), peers), sync)) in self.pools.iter_mut().zip(streams) {
            ps.rng = rng;
            ps.balancer.rng = balance;
            if let (Some(f), Some(rng)) = (ps.fleet.as_deref_mut(), peers) {
                f.rng = rng;
            }
            if let (Some(s), Some(rng)) = (ps.sync.as_deref_mut(), sync) {
                s.rng = rng;
            }
        }
        for (cs, rng) in self.caches.iter_mut().zip(st.cache) {
            cs.rng = rng;
        }
        let mut keys = st.keys;
        self.keys.salt = rand::Rng::next_u64(&mut keys);
        self.route_rng = st.routing;
        self.timetable.burst_rng = st.bursts;
        for c in 0..self.classes.len() {
            // A new epoch makes the pending arrival stale.
            self.classes[c].epoch = self.classes[c].epoch.wrapping_add(1);
            self.schedule_arrival(c);
            self.redraw_clock(c);
        }
    }
}
