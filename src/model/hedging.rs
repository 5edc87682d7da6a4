//! Hedged queries: when a one-part query has not answered after a delay (a fixed one, or
//! the query's own latency percentile as it tracks it), a second copy goes out, routed
//! anew. The first success wins; a failed copy waits for the other, and the query fails
//! only when both have. The losing copy's work is still done unless its pool cancels
//! expired work. Both copies count as queries at the pool, and the hedge in the class's
//! `hedges` count.

use super::event::Event;
use super::histogram::Histogram;
use super::protocol::Next;
use super::query::Part;
use super::simulation::Simulation;
use crate::engine::time::SimTime;
use crate::scenario::{Failure, HedgeCfg};

/// A hedged step's latency percentile, re-estimated from the step's recent answers.
#[derive(Clone)]
pub struct HedgeTracker {
    recent: Histogram,
    /// The percentile (0 to 100) it tracks.
    percentile: f64,
    /// The current hedging delay (`SimTime::MAX` until the first estimate).
    pub delay: SimTime,
}

/// Answers before the first estimate, and between later ones.
const FIRST_ESTIMATE: u64 = 100;
const REESTIMATE: u64 = 1000;

impl HedgeTracker {
    pub fn new(percentile: f64) -> Self {
        Self {
            recent: Histogram::new(),
            percentile,
            delay: SimTime::MAX,
        }
    }

    /// Records one answer's latency (from the first copy's send); every so many answers
    /// the delay becomes the percentile of those answers.
    pub fn record(&mut self, latency: SimTime) {
        self.recent.record(latency);
        let due = if self.delay == SimTime::MAX {
            FIRST_ESTIMATE
        } else {
            REESTIMATE
        };
        if self.recent.count() >= due {
            if let Some(q) = self.recent.quantile(self.percentile / 100.0) {
                self.delay = (q as SimTime).max(1);
            }
            self.recent.clear();
        }
    }
}

impl Simulation<'_> {
    /// The first copy of a hedged query is out: its send time is noted and the second
    /// copy's turn scheduled (not before a percentile has been estimated).
    #[inline(never)]
    pub(super) fn arm_hedge(&mut self, r: u32, c: usize, step: usize, token: u32) {
        let Some(h) = self.cfg.classes[c].steps[step].hedge else {
            return;
        };
        let slot = r as usize;
        if self.hedge_sent.len() <= slot {
            self.hedge_sent.resize(slot + 1, 0);
        }
        self.hedge_sent[slot] = self.now;
        let delay = match h {
            HedgeCfg::After(d) => d,
            HedgeCfg::Percentile(_) => self.classes[c].hedges[step]
                .as_ref()
                .map_or(SimTime::MAX, |t| t.delay),
        };
        if delay != SimTime::MAX {
            let (at, ev) = (
                self.now.saturating_add(delay),
                Event::Hedge { req: r, token },
            );
            // A fixed delay is a timer (usually stale by then: the query answered); a
            // percentile's moves with the latencies.
            self.schedule_delayed(matches!(h, HedgeCfg::After(_)), at, ev);
        }
    }

    /// The hedging delay is up and the query has not answered: send the second copy.
    #[inline(never)]
    pub(super) fn send_hedge(&mut self, r: u32, c: usize) -> Next {
        let req = &self.reqs[r];
        let (step, token, sent, covered) = (
            req.step as usize,
            req.query_token,
            self.hedge_sent[r as usize],
            req.covered,
        );
        let q = self.cfg.classes[c].steps[step].query;
        let deadline = if q.timeout_ns != SimTime::MAX {
            req.deadline.min(sent.saturating_add(q.timeout_ns))
        } else {
            req.deadline
        };
        let part = Part::of(&q);
        let server = self.route_one::<false>(part);
        self.classes[c].counts.hedges += 1;
        self.reqs[r].parts_left += 1;
        let job = self.job::<false>(r, token, deadline, server, part, covered);
        match self.send::<false>(q.pool, job) {
            Ok(()) => Next::Wait,
            Err(why) => Next::Part(Some(why), covered),
        }
    }

    /// A copy of a hedged query came back: a success completes the step (and the step's
    /// tracker learns its latency); a failure waits for the other copy if one is out.
    #[inline(never)]
    pub(super) fn hedged_part_done(
        &mut self,
        r: u32,
        c: usize,
        step: usize,
        failure: Option<Failure>,
    ) -> Next {
        let req = &mut self.reqs[r];
        req.parts_left -= 1;
        match failure {
            None => {
                // (A step hedged by an intervention while its query was out has no send
                // time: that answer teaches the tracker nothing.)
                let sent = self.hedge_sent.get(r as usize).copied().unwrap_or(self.now);
                let latency = self.now - sent;
                if let Some(t) = self.classes[c].hedges[step].as_mut() {
                    t.record(latency);
                }
                Next::StepDone
            }
            Some(_) if req.parts_left > 0 => Next::Wait,
            Some(why) => Next::QueryFailed(why),
        }
    }
}
