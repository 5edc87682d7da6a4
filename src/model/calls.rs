//! Pool calls: after its own service, a job of a pool with calls makes them while holding
//! its worker, stage by stage (the calls of a stage run in parallel), and only then is over.
//!
//! Each call is a request of the call's own class (`Config::classes[call.class]`), sent by
//! the job instead of by a client, so it runs through the same lifecycle as a client's
//! request: its step, its timeout, its retries and its breaker (one per dependency). When
//! it ends, it reports to the job that made it (`call_done`):
//!
//! ```text
//!  JobDone ─▶ start_calls ─▶ stage 0: spawn each call ─▶ … call_done ─▶ stage 1 … ─▶ calls_over ─▶ finish_job
//!                                   call failed, no fallback ─────────────────────────▶ calls_over(failed)
//!                                   call failed, fallback ─▶ FallbackOver after its cost ─▶ counts as returned
//! ```
//!
//! A job whose call failed fails at once and frees its worker; its other calls still in
//! flight carry on as work nobody waits for (a stale [`JobCalls`] token). A call that ends at
//! once (an open breaker) reports within the job's own event; nesting is bounded by the
//! depth of the call graph, which validation bounds.

use super::admission::Gate;
use super::event::Event;
use super::protocol::Next;
use super::simulation::Simulation;
use crate::scenario::Failure;
use rand::RngExt;

/// The calls of a job that holds its worker for them, by job slot (a side table: plain
/// jobs stay small): a token its calls report back with (0 once the job is over, so
/// calls still in flight report to nobody, even after the slot is reused), the stage
/// running, that stage's calls still out, and the fallbacks the worker is running.
#[derive(Debug, Clone, Copy, Default)]
pub struct JobCalls {
    pub token: u32,
    pub stage: u16,
    pub pending: u16,
    /// Fallbacks under way: while one runs, the worker is working (serving), not waiting on
    /// its calls, so the job is out of the pool's `waiting` count.
    pub fallbacks: u16,
}

/// What a job whose own service is over does about its calls.
pub(super) enum Calls {
    /// They have started; the job ends when they do.
    Started,
    /// Its endpoint makes none: the job is over.
    None,
    /// Its caller has given up and the pool cancels expired work: the job ends, failed.
    Expired,
}

impl Simulation<'_> {
    /// Job `j`'s own service is over and its pool makes calls: hold the worker and start
    /// the first stage. The job makes no calls when its endpoint has none, or when its pool
    /// cancels expired work and its caller has given up (`current` false, or past its
    /// deadline): then it ends at once, failed.
    #[inline(never)]
    pub(super) fn start_calls(&mut self, j: u32, current: bool) -> Calls {
        let (p, e) = (self.jobs[j].pool as usize, self.jobs[j].endpoint as usize);
        if self.cfg.pools[p].plans[e].is_empty() {
            return Calls::None;
        }
        let stale = !current || self.jobs[j].deadline <= self.now;
        if stale && !self.jobs[j].propagated {
            self.witness.stale[p] = true;
        }
        let cancels = self.cfg.pools[p].cancel_expired || self.jobs[j].propagated;
        if cancels && stale {
            self.pools[p].stats.expired += 1;
            return Calls::Expired;
        }
        let token = self.call_token();
        let slot = j as usize;
        if self.job_calls.len() <= slot {
            self.job_calls.resize(slot + 1, JobCalls::default());
        }
        self.job_calls[slot] = JobCalls {
            token,
            stage: 0,
            pending: 0,
            fallbacks: 0,
        };
        let pool = &mut self.pools[p];
        pool.integrate_waiting(self.now);
        pool.waiting += 1;
        if self.trace.is_some() {
            self.trace_calls(j);
        }
        self.start_stage(j);
        Calls::Started
    }

    /// A calls token: never 0, which marks a job that is not waiting on calls.
    fn call_token(&mut self) -> u32 {
        let t = self.next_token();
        if t == 0 { self.next_token() } else { t }
    }

    /// Starts every call of job `j`'s current stage, or ends the calls after the last.
    fn start_stage(&mut self, j: u32) {
        let (p, e) = (self.jobs[j].pool as usize, self.jobs[j].endpoint as usize);
        let JobCalls { token, stage, .. } = self.job_calls[j as usize];
        let s = stage as usize;
        let n = match self.cfg.pools[p].plans[e].get(s) {
            Some(stage) => stage.len(),
            None => return self.calls_over(j, None),
        };
        self.job_calls[j as usize].pending = n as u16;
        for i in 0..n {
            let call = self.cfg.pools[p].plans[e][s][i];
            self.spawn_call(j, token, call);
            // A call that ended at once may have ended the job, or its stage.
            let now = self.job_calls[j as usize];
            if now.token != token || now.stage as usize != s {
                return;
            }
        }
    }

    /// Job `j` makes call `call` (an index into `Config::calls`), unless its bulkhead is
    /// full: then the call is refused at once.
    fn spawn_call(&mut self, j: u32, token: u32, call: usize) {
        let (c, limit, probability) = (
            self.cfg.calls[call].class,
            self.cfg.calls[call].max_in_flight,
            self.cfg.calls[call].probability,
        );
        // A call some jobs make (`probability`): drawn from the calling pool's stream, only
        // when below 1, so the draws of pools whose calls every job makes are unchanged.
        if probability < 1.0 {
            let p = self.jobs[j].pool as usize;
            if self.pools[p].rng.random::<f64>() >= probability {
                return self.call_returned(j, token);
            }
        }
        if self.admit_request(c, Gate::InFlight(limit)) {
            self.start_request::<false>(c, j, token);
        } else {
            self.call_done(j, token, c, false);
        }
    }

    /// A call of class `c` made by job `j` (with calls token `token`) has ended. A job that
    /// has moved on (failed by another call) ignores it. Out of line: a client's request
    /// never comes here.
    #[inline(never)]
    pub(super) fn call_done(&mut self, j: u32, token: u32, c: usize, ok: bool) {
        if self.job_calls[j as usize].token != token {
            return;
        }
        if !ok {
            let call = self.cfg.classes[c]
                .call
                .expect("a call's class names its call");
            match self.cfg.calls[call].fallback {
                None => return self.calls_over(j, Some(Failure::Error)),
                Some(cost) => {
                    // The fallback's work holds the worker for its own time, as work: the
                    // worker serves it rather than waits (docs: `waiting_on_calls`).
                    let p = self.jobs[j].pool as usize;
                    let pool = &mut self.pools[p];
                    let t = pool.service_ns(&self.cfg.pools[p], cost, 1, 0);
                    pool.stats.fallbacks += 1;
                    let calls = &mut self.job_calls[j as usize];
                    if calls.fallbacks == 0 {
                        pool.integrate_waiting(self.now);
                        pool.waiting -= 1;
                    }
                    calls.fallbacks += 1;
                    self.queue.schedule(
                        self.now.saturating_add(t),
                        Event::FallbackOver { job: j, token },
                    );
                    return;
                }
            }
        }
        self.call_returned(j, token);
    }

    /// A fallback of job `j` is over: the worker waits on its calls again (unless another
    /// fallback still runs), and the call counts as returned. A job that has moved on
    /// ignores it.
    #[inline(never)]
    pub(super) fn fallback_over(&mut self, j: u32, token: u32) {
        let calls = &mut self.job_calls[j as usize];
        if calls.token != token {
            return;
        }
        calls.fallbacks -= 1;
        if calls.fallbacks == 0 {
            let pool = &mut self.pools[self.jobs[j].pool as usize];
            pool.integrate_waiting(self.now);
            pool.waiting += 1;
        }
        self.call_returned(j, token);
    }

    /// One call of job `j`'s current stage has returned (or fallen back): the next stage
    /// starts when it was the stage's last.
    #[inline(never)]
    pub(super) fn call_returned(&mut self, j: u32, token: u32) {
        let calls = &mut self.job_calls[j as usize];
        if calls.token != token {
            return;
        }
        calls.pending -= 1;
        if calls.pending == 0 {
            calls.stage += 1;
            self.start_stage(j);
        }
    }

    /// Job `j`'s calls are over (all returned, or one failed): its worker is free and its
    /// answer goes to its caller.
    fn calls_over(&mut self, j: u32, failure: Option<Failure>) {
        let job = self.jobs[j];
        let p = job.pool as usize;
        let pool = &mut self.pools[p];
        // A job failed by one call while another's fallback runs is not counted as waiting.
        if self.job_calls[j as usize].fallbacks == 0 {
            pool.integrate_waiting(self.now);
            pool.waiting -= 1;
        }
        let current = self.reqs[job.req].query_token == job.token;
        self.job_calls[j as usize].token = 0;
        if let Some(part) = self.finish_job::<false>(j, current, failure) {
            self.advance::<false>(part.req, Next::Part(part.failure, part.keys));
        }
    }
}
