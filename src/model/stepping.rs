//! Running a simulation in steps, for rare-event estimators: start it, advance it until a
//! level (requests in flight, or a pool's queue) crosses a threshold, clone it at that
//! moment and give each copy its own random streams. [`Simulation::run`] does not use
//! this: its loop stays as it is.

use super::budget::CHECK_EVERY;
use super::event::Event;
use super::simulation::{SimError, Simulation};
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

impl<'a> Simulation<'a> {
    /// Starts a stepped run that may go on for `horizon` of simulated time: schedules what
    /// [`Simulation::run`] schedules before its loop.
    pub fn start(&mut self, horizon: SimTime) {
        self.end = horizon;
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
        let stop = self.events.saturating_add(max_events);
        while self.events < stop {
            let Some((t, ev)) = self.queue.pop() else {
                return Ok(Crossing::Budget);
            };
            if t > self.end {
                self.queue.schedule(t, ev);
                return Ok(Crossing::Budget);
            }
            self.now = t;
            self.events += 1;
            if self.prefetch {
                self.fetch_ahead();
            }
            let window = matches!(ev, Event::WindowEnd);
            self.dispatch(ev);
            if window {
                // Nobody reads a stepped run's rows; kept, they would fill memory over
                // simulated years and make every clone dear.
                self.sampler.forget_rows();
            }
            if self.events.is_multiple_of(CHECK_EVERY) {
                self.check_held()?;
            }
            let l = self.level(level);
            if l >= up {
                return Ok(Crossing::Up);
            }
            if base.is_some_and(|b| l <= b) {
                return Ok(Crossing::Base);
            }
        }
        Ok(Crossing::Budget)
    }

    /// Gives every random stream of this simulation a new seed derived from (`seed`,
    /// `split`, stream name), so that a clone continues on a future of its own; the same
    /// (`seed`, `split`) gives the same future. Each class's pending arrival is drawn
    /// again: arrivals are Poisson (thinned for a profile), so the time to the next one
    /// does not depend on the time since the last, and clones of one state that shared it
    /// would all take their first step alike. Events already scheduled otherwise
    /// (services under way, timeouts) stay as drawn: they are part of the state.
    pub fn reseed(&mut self, seed: u64, split: u64) {
        let rng = |name: &str| stream_rng(seed, split, &format!("split.{name}"));
        for (c, cs) in self.cfg.classes.iter().zip(self.classes.iter_mut()) {
            cs.rng = rng(&format!("class.{}", c.name));
            cs.retry_rng = rng(&format!("retry.{}", c.name));
            if let Some(p) = cs.users.as_mut() {
                p.rng = rng(&format!("users.{}", c.name));
            }
        }
        for (p, ps) in self.cfg.pools.iter().zip(self.pools.iter_mut()) {
            ps.rng = rng(&format!("pool.{}", p.name));
            ps.balancer.rng = rng(&format!("balance.{}", p.name));
            if let Some(st) = ps.sync.as_deref_mut() {
                st.rng = rng(&format!("sync.{}", p.name));
            }
        }
        for (c, cs) in self.cfg.caches.iter().zip(self.caches.iter_mut()) {
            cs.rng = rng(&format!("cache.{}", c.name));
        }
        self.keys.salt = rand::Rng::next_u64(&mut rng("keys"));
        self.route_rng = rng("routing");
        self.timetable.burst_rng = rng("bursts");
        for c in 0..self.classes.len() {
            // A new epoch makes the pending arrival stale.
            self.classes[c].epoch = self.classes[c].epoch.wrapping_add(1);
            self.schedule_arrival(c);
            self.redraw_clock(c);
        }
    }
}
