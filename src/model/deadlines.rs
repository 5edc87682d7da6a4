//! Deadlines across calls (`deadline` on `[[pool.NAME.calls]]`): whose deadline a call
//! keeps, and how much work below starts after the client at the top has given up.
//!
//! - Propagation (`deadline = "propagate"`): each try of the call has the deadline
//!   `min(now + its own timeout, the calling job's deadline)` (`Simulation::call_cap`,
//!   from `start_attempt`), so down a chain every deadline is at most the client's; a try
//!   whose caller's deadline has already passed fails at once (`timeout`). The call's jobs
//!   carry `Job::propagated`: the callee drops them from its queue once their deadline has
//!   passed or their caller has moved on (counted in `expired`, as `cancel_expired` does),
//!   and makes no calls for them. Work already in service runs to its end.
//! - Accounting (any call with a `deadline` key, either value: `Config::deadlines`): each
//!   call's request records the deadline of the request at the top of its chain (a side
//!   table by request slot, `Simulation::roots`); a job that starts when that deadline
//!   has passed, or for a caller that no longer waits, counts in its pool's
//!   `started_late`. With propagation everywhere it is exactly 0.
//!
//! Off (no call says `deadline`) nothing here runs: one test of a `bool` per request start
//! and per job start.

use super::simulation::Simulation;
use crate::engine::time::SimTime;

impl Simulation<'_> {
    /// The latest deadline a try of call request `r` (of class `c`) may have: its calling
    /// job's deadline when the call propagates it (`now` when that job has moved on), else
    /// none (`SimTime::MAX`).
    #[inline(never)]
    pub(super) fn call_cap(&self, r: u32, c: usize) -> SimTime {
        let Some(call) = self.cfg.classes[c].call else {
            return SimTime::MAX;
        };
        if !self.cfg.calls[call].propagate {
            return SimTime::MAX;
        }
        let req = &self.reqs[r];
        let j = req.parent as usize;
        if self
            .job_calls
            .get(j)
            .is_some_and(|k| k.token == req.parent_token)
        {
            self.jobs[req.parent].deadline
        } else {
            self.now
        }
    }

    /// The deadline of the request at the top of request `r`'s chain: a client's current
    /// attempt's, or the one its call recorded when it was made.
    fn root_of(&self, r: u32) -> SimTime {
        let req = &self.reqs[r];
        if req.parent_token == 0 {
            req.deadline
        } else {
            self.roots.get(r as usize).copied().unwrap_or(SimTime::MAX)
        }
    }

    /// Call request `r` has been made by job `parent`: records the deadline at the top of
    /// its chain (`now` if the job's own caller has moved on: nobody waits for it).
    #[inline(never)]
    pub(super) fn record_root(&mut self, r: u32, parent: u32) {
        let job = self.jobs[parent];
        let root = if self.reqs[job.req].query_token == job.token {
            self.root_of(job.req)
        } else {
            self.now
        };
        let slot = r as usize;
        if self.roots.len() <= slot {
            self.roots.resize(slot + 1, SimTime::MAX);
        }
        self.roots[slot] = root;
    }

    /// Job `j` of pool `p` starts: counts it in `started_late` if the request at the top
    /// of its chain has given up (its deadline passed, or its caller no longer waits).
    #[inline(never)]
    pub(super) fn count_late_start(&mut self, p: usize, j: u32) {
        let job = self.jobs[j];
        let gone = self.reqs[job.req].query_token != job.token;
        if gone || self.root_of(job.req) <= self.now {
            self.pools[p].stats.started_late += 1;
        }
    }
}
