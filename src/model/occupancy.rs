//! How full a pool's servers are over a run, for balancing laws (the supermarket model)
//! and studies: the time-average fraction of the pool's servers that hold at least i jobs
//! (in service or queued). A run loop of its own beside [`Simulation::run`], whose loop is
//! unchanged: it scans the pool's servers whenever simulated time moves, which is no cost
//! a plain run pays.

use super::budget::CHECK_EVERY;
use super::metrics::RunResult;
use super::simulation::{SimError, Simulation};
use crate::engine::time::SimTime;
use crate::scenario::Scenario;

/// A run's result with its occupancy profile of one pool.
pub struct Occupancy {
    /// `at_least[i]`: the time-average fraction of the pool's servers holding at least `i`
    /// jobs, from the start of the measurement to the end of the run (`at_least[0]` = 1).
    pub at_least: Vec<f64>,
    /// The run's usual result (every request accounted for, as in any run).
    pub result: RunResult,
}

/// Runs `sc` with run index `run` like [`super::run`] and measures pool `pool`'s occupancy
/// from `from` (ns; a warm-up left out) to the end, for `i = 0 ..= max`.
///
/// # Panics
/// If `sc` has no pool named `pool`, or `from` is not before the run's end.
pub fn occupancy(
    sc: &Scenario,
    run: u64,
    pool: &str,
    from: SimTime,
    max: usize,
) -> Result<Occupancy, SimError> {
    let p = sc
        .config
        .pools
        .iter()
        .position(|c| c.name == pool)
        .unwrap_or_else(|| panic!("no pool named `{pool}`"));
    assert!(from < sc.duration, "the measurement starts after the run");
    Simulation::checked(sc, run)?.run_occupancy(p, from, max)
}

impl Simulation<'_> {
    /// The event loop of [`Simulation::run`], adding each span between events to a
    /// histogram of (time x servers) per occupancy, capped at `max`.
    fn run_occupancy(mut self, p: usize, from: SimTime, max: usize) -> Result<Occupancy, SimError> {
        let mut area = vec![0u128; max + 1];
        let mut last = from;
        self.schedule_start();
        loop {
            let next = self.queue.pop().filter(|&(t, _)| t <= self.end);
            let t = next.map_or(self.end, |(t, _)| t);
            if t > last {
                let dt = (t - last) as u128;
                for s in &self.pools[p].servers {
                    area[(s.busy as usize + s.queue.len()).min(max)] += dt;
                }
                last = t;
            }
            let Some((t, ev)) = next else { break };
            self.now = t;
            self.events += 1;
            self.dispatch(ev);
            if self.events.is_multiple_of(CHECK_EVERY) {
                self.check_limits()?;
            }
        }
        self.now = self.end;
        let total = (self.end - from) as f64 * self.pools[p].servers.len() as f64;
        let mut at_least = vec![0.0; max + 1];
        let mut above = 0u128;
        for i in (0..=max).rev() {
            above += area[i];
            at_least[i] = above as f64 / total;
        }
        Ok(Occupancy {
            at_least,
            result: self.finish()?,
        })
    }
}
