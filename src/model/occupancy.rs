//! How full a pool's servers are over a run, for balancing laws (the supermarket model)
//! and studies: the time-average fraction of the pool's servers that hold at least i jobs
//! (in service or queued). The one loop ([`super::step`]) with a watch that scans the
//! pool's servers whenever simulated time moves, which is no cost a plain run pays.

use super::metrics::RunResult;
use super::simulation::{SimError, Simulation};
use super::step::Watch;
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
    Simulation::checked(sc, run)?.measure_occupancy(p, from, max)
}

/// The watch of an occupancy run: each span between events, from `from` on, added to
/// the area of each server's occupancy (capped at the histogram's last bin).
struct Area {
    pool: usize,
    area: Vec<u128>,
    last: SimTime,
}

impl Area {
    /// Adds the span from the last time to `t`.
    fn add(&mut self, sim: &Simulation, t: SimTime) {
        if t > self.last {
            let dt = (t - self.last) as u128;
            let max = self.area.len() - 1;
            for s in &sim.pools[self.pool].servers {
                self.area[(s.busy as usize + s.queue.len()).min(max)] += dt;
            }
            self.last = t;
        }
    }
}

impl Watch for Area {
    #[inline(always)]
    fn span(&mut self, sim: &Simulation, t: SimTime) {
        self.add(sim, t);
    }
}

impl Simulation<'_> {
    /// Runs this simulation to its end, as [`occupancy`] does for pool index `p`: the one
    /// loop with a watch that adds each span between events to a histogram of (time x
    /// servers) per occupancy, capped at `max`.
    pub fn measure_occupancy(
        mut self,
        p: usize,
        from: SimTime,
        max: usize,
    ) -> Result<Occupancy, SimError> {
        let mut watch = Area {
            pool: p,
            area: vec![0u128; max + 1],
            last: from,
        };
        self.schedule_start();
        self.run_events(&mut watch)?;
        // The last span, to the end of the run.
        watch.add(&self, self.end);
        let area = watch.area;
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
