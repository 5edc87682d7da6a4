//! Where each timeout is armed and where it fires. The two a request carries are here:
//!
//! - **The attempt's timeout** (a class's `timeout`, a sync's too; capped by a propagated
//!   deadline): armed by `start_attempt` (`lifecycle.rs`) through `arm_attempt_timeout`;
//!   `Event::AttemptTimeout` fires `attempt_timed_out`, which fails the attempt
//!   (`Next::AttemptFailed(Failure::Timeout)`) if it is still current.
//! - **The query's timeout** (a step's `timeout`, the service's own deadline for one
//!   query attempt): armed by `start_query` (`query.rs`) through `arm_query_timeout`;
//!   `Event::QueryTimeout` fires `query_timed_out`, which fails the query attempt
//!   (`Next::QueryFailed(Failure::Timeout)`) if it is still current.
//!
//! Either failure then goes to `retry::decide` like any other. A stale timeout (its attempt
//! or query attempt already over: the token moved on) is dropped, so nothing is cancelled in
//! the queue. The other deadlines are their mechanisms' own: a call's propagated deadline
//! (`deadlines.rs`: `call_cap`, and work dropped past it in `service.rs`), a job's lease
//! (`lease.rs`), a hedged copy's delay (`hedging.rs`), and `cancel_expired` (`service.rs`:
//! queued work whose deadline has passed is dropped at dequeue).

use super::event::Event;
use super::protocol::Next;
use super::simulation::Simulation;
use crate::engine::time::SimTime;
use crate::scenario::Failure;

impl Simulation<'_> {
    /// Arms the attempt's timeout, `timeout` from now but no later than `cap` (a propagated
    /// caller's deadline), and returns the attempt's deadline (`SimTime::MAX`: none).
    #[inline(always)]
    pub(super) fn arm_attempt_timeout(
        &mut self,
        r: u32,
        token: u32,
        timeout: SimTime,
        cap: SimTime,
    ) -> SimTime {
        if timeout != SimTime::MAX || cap != SimTime::MAX {
            let d = self.now.saturating_add(timeout).min(cap);
            self.queue
                .schedule_timer(d, Event::AttemptTimeout { req: r, token });
            d
        } else {
            SimTime::MAX
        }
    }

    /// Arms the query attempt's own timeout, `timeout_ns` from now, and returns its
    /// deadline; `None` when the query has none.
    #[inline(always)]
    pub(super) fn arm_query_timeout(
        &mut self,
        r: u32,
        token: u32,
        timeout_ns: SimTime,
    ) -> Option<SimTime> {
        if timeout_ns != SimTime::MAX {
            let qd = self.now.saturating_add(timeout_ns);
            self.queue
                .schedule_timer(qd, Event::QueryTimeout { req: r, token });
            Some(qd)
        } else {
            None
        }
    }

    /// `Event::AttemptTimeout`: the attempt failed by its timeout, if still current.
    #[inline(always)]
    pub(super) fn attempt_timed_out(&mut self, r: u32, token: u32) {
        self.resume::<false>(r, token, Next::AttemptFailed(Failure::Timeout))
    }

    /// `Event::QueryTimeout`: the query attempt failed by its timeout, if still current.
    #[inline(always)]
    pub(super) fn query_timed_out(&mut self, r: u32, token: u32) {
        self.resume::<false>(r, token, Next::QueryFailed(Failure::Timeout))
    }
}
