//! The one event loop. Every way of running a model goes through `Simulation::step`: a
//! plain run and its early stop ([`super::run_until`]), the shared prefix of a forked pair
//! ([`super::fork`]), stepping to a level for the rare-event estimate
//! ([`Simulation::advance_until`]), the live page's clock ([`Simulation::advance_to`]) and
//! the occupancy measurement ([`super::occupancy()`]). A step pops the next event, moves the
//! clock, counts the event, prefetches what the one after will read, dispatches it, asks
//! the caller's `Watch` whether to stop, and checks the budgets every
//! `CHECK_EVERY` events. The caller only says when to stop and what to observe; its
//! watch is a type parameter, so a plain run's (which observes nothing and never pauses)
//! compiles away.
//!
//! ```text
//!  [pause?] ─▶ pop ─▶ past the end? ─▶ Ended (the event put back for a stepped run)
//!                  └▶ span (watch) ─▶ now, events += 1 ─▶ prefetch ─▶ dispatch
//!                     ─▶ budgets every CHECK_EVERY events ─▶ after (watch): stop? ─▶ Stopped
//!                                                                             └▶ next
//! ```

use super::budget::CHECK_EVERY;
use super::event::Event;
use super::simulation::{SimError, Simulation};
use crate::engine::time::SimTime;

/// What a way of running observes around each event and when it stops. Every method has a
/// default that observes nothing, so a watch names only what it needs.
pub(super) trait Watch {
    /// The loop asks [`Watch::pause`] before each event (a peek at the queue); a watch
    /// that never pauses leaves this false and the loop peeks at nothing.
    const PAUSES: bool = false;

    /// An event past the run's end is put back, pending, for a caller that goes on from
    /// this state (a stepped run, whose clones must be whole); for the others the run ends
    /// there and it is dropped (keeping it would cost a plain run a copy of every event).
    const KEEPS_PAST_END: bool = false;

    /// Whether to stop before the next event, at time `t`, leaving it pending.
    #[inline(always)]
    fn pause(&mut self, _sim: &mut Simulation, _t: SimTime) -> bool {
        false
    }

    /// Simulated time is about to move from `sim.now` to `t` (at most the run's end).
    #[inline(always)]
    fn span(&mut self, _sim: &Simulation, _t: SimTime) {}

    /// An event has been handled and the budgets checked (`window`: it ended a time-series
    /// window): whether the loop stops here.
    #[inline(always)]
    fn after(&mut self, _sim: &mut Simulation, _window: bool) -> bool {
        false
    }
}

/// Why the loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Halt {
    /// No event is left at or before the run's end (one past it stays pending).
    Ended,
    /// The watch paused before the next event, which is pending.
    Paused,
    /// The watch stopped the loop after an event.
    Stopped,
}

/// A run that may end early: `stop`, asked after each time-series window before the end,
/// says the run may end there (its end is then now: [`super::run_until`]). A plain run's
/// `stop` is `|_, _| false`, which compiles away.
pub(super) struct Until<'s, S: FnMut(SimTime, &[Vec<f64>]) -> bool>(pub &'s mut S);

impl<S: FnMut(SimTime, &[Vec<f64>]) -> bool> Watch for Until<'_, S> {
    #[inline(always)]
    fn after(&mut self, sim: &mut Simulation, window: bool) -> bool {
        if window && sim.now < sim.end && (self.0)(sim.now, sim.sampler.rows()) {
            sim.end = sim.now;
            return true;
        }
        false
    }
}

/// [`Until`] that also pauses before the first event at or after `at` (the fork).
pub(super) struct UntilBefore<'s, S: FnMut(SimTime, &[Vec<f64>]) -> bool> {
    pub stop: Until<'s, S>,
    pub at: SimTime,
}

impl<S: FnMut(SimTime, &[Vec<f64>]) -> bool> Watch for UntilBefore<'_, S> {
    const PAUSES: bool = true;

    #[inline(always)]
    fn pause(&mut self, _sim: &mut Simulation, t: SimTime) -> bool {
        t >= self.at
    }

    #[inline(always)]
    fn after(&mut self, sim: &mut Simulation, window: bool) -> bool {
        self.stop.after(sim, window)
    }
}

impl Simulation<'_> {
    /// Handles events until the watch stops or pauses the loop, or no event is left at or
    /// before the run's end; on the plain instance of the request path when the run is
    /// plain ([`super::plain`]).
    #[inline(always)]
    pub(super) fn run_events<W: Watch>(&mut self, watch: &mut W) -> Result<Halt, SimError> {
        if self.plain() {
            self.handle_events::<W, true>(watch)
        } else {
            self.handle_events::<W, false>(watch)
        }
    }

    /// [`Self::run_events`] on one instance of the request path (`P`: the plain one).
    #[inline(never)]
    fn handle_events<W: Watch, const P: bool>(&mut self, watch: &mut W) -> Result<Halt, SimError> {
        loop {
            if W::PAUSES
                && let Some(t) = self.queue.peek_time()
                && watch.pause(self, t)
            {
                return Ok(Halt::Paused);
            }
            if let Some(halt) = self.step::<W, P>(watch)? {
                return Ok(halt);
            }
        }
    }

    /// One event, as the module doc draws it; `Some` when the loop stops.
    #[inline(always)]
    pub(super) fn step<W: Watch, const P: bool>(
        &mut self,
        watch: &mut W,
    ) -> Result<Option<Halt>, SimError> {
        let Some((t, ev)) = self.queue.pop() else {
            return Ok(Some(Halt::Ended));
        };
        if t > self.end {
            if W::KEEPS_PAST_END {
                self.queue.schedule(t, ev);
            }
            return Ok(Some(Halt::Ended));
        }
        watch.span(self, t);
        self.now = t;
        self.events += 1;
        if self.prefetch {
            self.fetch_ahead();
        }
        let window = matches!(ev, Event::WindowEnd);
        self.dispatch::<P>(ev);
        self.check_due()?;
        Ok(watch.after(self, window).then_some(Halt::Stopped))
    }

    /// Checks the run's budgets and hard limits when a check is due (every
    /// [`CHECK_EVERY`] events): the one check every way of running makes.
    #[inline(always)]
    pub(super) fn check_due(&self) -> Result<(), SimError> {
        if self.events.is_multiple_of(CHECK_EVERY) {
            self.check_limits()
        } else {
            Ok(())
        }
    }
}
