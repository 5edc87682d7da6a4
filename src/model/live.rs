//! Live stepping: a run advanced piece by piece to simulated times chosen from outside (a
//! live page's clock), its rows read as they are written, and interventions applied "now"
//! ([`Simulation::apply_intervention`]).
//!
//! A pause point is placed so that an intervention applied there does exactly what an
//! `[[at]]` entry at that time does in a plain run: every event earlier than the time has
//! been handled, and so have the timetable's entries at that very time (their sequence
//! numbers are reserved when a run starts, though each is scheduled only when the one
//! before it runs, so they precede every other event at their time, and triggers precede
//! interventions); everything else at that time comes after.

use super::event::Event;
use super::metrics::RunResult;
use super::simulation::{SimError, Simulation};
use super::step::Watch;
use crate::engine::time::SimTime;

/// The watch of [`Simulation::advance_to`]: it pauses before the first event that is not
/// due by `t`, as the module doc places the pause.
struct ToTime {
    t: SimTime,
    /// `t` is the run's end: every event at it is due.
    last: bool,
}

impl Watch for ToTime {
    const PAUSES: bool = true;

    #[inline(always)]
    fn pause(&mut self, sim: &mut Simulation, next: SimTime) -> bool {
        let due = next < self.t
            || (next == self.t
                && (self.last
                    || matches!(
                        sim.queue.peek(),
                        Some(
                            Event::TriggerStart { .. }
                                | Event::TriggerEnd { .. }
                                | Event::Intervene { .. }
                        )
                    )));
        !due
    }
}

impl Simulation<'_> {
    /// Starts a live run on the scenario's own horizon (its `duration`), with every budget
    /// of a plain run.
    pub fn start_live(&mut self) {
        self.end = self.sc.duration;
        self.schedule_start();
    }

    /// Handles events up to simulated time `t` (at most the run's end) and stops there, as
    /// the module doc describes; at the end of the run, every event at the end time is
    /// handled too, as a plain run does. Returns the time reached.
    pub fn advance_to(&mut self, t: SimTime) -> Result<SimTime, SimError> {
        let t = t.min(self.end).max(self.now);
        let last = t == self.end;
        self.run_events(&mut ToTime { t, last })?;
        self.now = t;
        Ok(t)
    }

    /// Ends the run where it stands (its end is then now, as a plain run's that a `stop`
    /// ended) and builds its result; after [`Simulation::advance_to`] its end, the result
    /// of a plain run (tested).
    pub fn into_result(mut self) -> Result<RunResult, SimError> {
        self.end = self.now;
        self.conclude(std::time::Instant::now())
    }

    /// The time-series rows written so far, one per window that has ended.
    pub fn rows(&self) -> &[Vec<f64>] {
        self.sampler.rows()
    }

    /// Simulated time now, in nanoseconds.
    pub fn now_ns(&self) -> SimTime {
        self.now
    }

    /// The end of the run's horizon, in nanoseconds.
    pub fn end_ns(&self) -> SimTime {
        self.end
    }
}
