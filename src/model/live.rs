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
use super::simulation::{SimError, Simulation};
use crate::engine::time::SimTime;

impl Simulation<'_> {
    /// Starts a live run on the scenario's own horizon (its `duration`).
    pub fn start_live(&mut self) {
        let end = self.sc.duration;
        self.start(end);
    }

    /// Handles events up to simulated time `t` (at most the run's end) and stops there, as
    /// the module doc describes; at the end of the run, every event at the end time is
    /// handled too, as a plain run does. Returns the time reached.
    pub fn advance_to(&mut self, t: SimTime) -> Result<SimTime, SimError> {
        let t = t.min(self.end).max(self.now);
        let last = t == self.end;
        while let Some(next) = self.queue.peek_time() {
            let due = next < t
                || (next == t
                    && (last
                        || matches!(
                            self.queue.peek(),
                            Some(
                                Event::TriggerStart { .. }
                                    | Event::TriggerEnd { .. }
                                    | Event::Intervene { .. }
                            )
                        )));
            if !due {
                break;
            }
            let Some((time, ev)) = self.queue.pop() else {
                break;
            };
            self.now = time;
            self.events += 1;
            if self.prefetch {
                self.fetch_ahead();
            }
            self.dispatch(ev);
            if self.events.is_multiple_of(super::budget::CHECK_EVERY) {
                self.check_limits()?;
            }
        }
        self.now = t;
        Ok(t)
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
