//! The life of a request, as a state machine: arrival and admission, attempts, steps,
//! finish.
//!
//! Every handler does one thing to one request and returns what should happen to it next
//! (`Next`); `Simulation::advance` is the one place that applies it, in a loop. So no
//! handler moves a request on by itself (a query that sends a part which fails at once
//! counts it with `part_done` and returns that verdict; events and a crash enter through
//! `advance`), nothing recurses per step, and a request that is waiting (for a server, a
//! backoff or a timeout) leaves the loop with `Next::Wait` until an event brings it back:
//!
//! ```text
//!  offer ─▶ Attempt ─▶ Step ─▶ Query ─ sends parts ─▶ Wait ··· JobDone ▶ Part ─▶ StepDone ─▶ Step …
//!             ▲          (all keys hit) ─────────────────────────────────────▶ StepDone ─▶ Done(ok)
//!             │                            Query ◀─ retry after backoff ─ QueryFailed ◀─ Part(failed) / QueryTimeout
//!             └──── retry after backoff ──────────── AttemptFailed ◀─ QueryFailed (gave up) / AttemptTimeout
//!                                                     AttemptFailed (gave up) ─▶ Done(failed)
//! ```
//!
//! Retries at both layers are decided by [`retry::decide`].

use super::admission::Gate;
use super::event::Event;
use super::protocol::Next;
use super::request::{QUERY_LEVEL, REQUEST_LEVEL, Request, level_of};
use super::retry::{self, Decision};
use super::simulation::Simulation;
use crate::engine::time::SimTime;
use crate::scenario::{Failure, Jitter, RetryCfg};

impl Simulation<'_> {
    /// A new request of class `c` is offered: admission, then its first attempt.
    #[inline(always)]
    pub(super) fn offer<const P: bool>(&mut self, c: usize) {
        if self.admit_request(c, Gate::RateLimit) {
            self.start_request::<P>(c, 0, 0);
        }
    }

    /// An admitted request of class `c` starts: its record, then its first attempt. A pool
    /// call names the job waiting on it (`parent`, with the job's calls token, never 0); a
    /// client's request has token 0.
    #[inline(always)]
    pub(super) fn start_request<const P: bool>(
        &mut self,
        c: usize,
        parent: u32,
        parent_token: u32,
    ) {
        let key_seed = self.keys.next_serial();
        let r = self.reqs.insert(Request {
            key_seed,
            class: c as u16,
            arrived: self.now,
            parent,
            parent_token,
            ..Request::default()
        });
        if !P && self.trace.is_some() {
            self.trace_request(r, parent, parent_token);
        }
        if !P && parent_token != 0 && self.cfg.deadlines {
            self.record_root(r, parent);
        }
        self.advance_hot::<P>(r, Next::Attempt);
        if !P {
            self.take_for_calls();
        }
    }

    /// Moves request `r` through its states until it waits or is done. `P`: the plain
    /// instance of the handlers ([`super::plain`]).
    #[inline]
    pub(super) fn advance<const P: bool>(&mut self, r: u32, next: Next) {
        self.advance_inline::<P>(r, next)
    }

    /// [`Self::advance`] where the loop calls it (a request's first attempt, a part's
    /// answer): inlined on the plain instance, which is small; a call on the general one.
    #[inline(always)]
    pub(super) fn advance_hot<const P: bool>(&mut self, r: u32, next: Next) {
        if P {
            self.advance_inline::<P>(r, next)
        } else {
            self.advance::<P>(r, next)
        }
    }

    /// The body of [`Self::advance`].
    #[inline(always)]
    fn advance_inline<const P: bool>(&mut self, r: u32, mut next: Next) {
        // A request keeps its class for life: every handler gets it.
        let c = self.reqs[r].class as usize;
        loop {
            next = match next {
                Next::Attempt => self.start_attempt::<P>(r, c),
                Next::Step => self.start_step::<P>(r, c),
                Next::Query => self.start_query::<P>(r, c),
                Next::Part(failure, keys) => self.part_done::<P>(r, c, failure, keys),
                Next::StepDone => self.step_done::<P>(r, c),
                Next::QueryFailed(why) => self.query_failed(r, c, why),
                Next::AttemptFailed(why) => self.attempt_failed(r, c, why),
                Next::Done(ok) => {
                    self.request_done::<P>(r, c, ok);
                    return;
                }
                Next::Hedge => self.send_hedge(r, c),
                Next::Wait => return,
            }
        }
    }

    /// Starts an attempt: a retry passes the rate limit again; an open breaker fails it at
    /// once; otherwise the client's deadline is armed and the first step starts.
    #[inline(always)]
    fn start_attempt<const P: bool>(&mut self, r: u32, c: usize) -> Next {
        let token = self.next_token();
        let req = &mut self.reqs[r];
        req.attempt += 1;
        req.attempt_token = token;
        req.step = 0;
        let retry = req.attempt > 1;
        let cs = &mut self.classes[c];
        cs.counts.attempts += 1;
        // A retry is a new request at the front door: the rate limit sees it too (a first
        // attempt was admitted in `offer`). Refused, it fails at once, like an HTTP 429.
        if retry
            && let Some(b) = cs.rate_limit.as_mut()
            && !b.try_take(self.now)
        {
            cs.counts.throttled += 1;
            return Next::AttemptFailed(Failure::Throttled);
        }
        if P {
            // No breaker, no client timeout, no deadline to propagate: the first step
            // starts (in line: the plain instance's usual successor).
            self.reqs[r].deadline = SimTime::MAX;
            return self.start_step::<P>(r, c);
        }
        let class = &self.cfg.classes[c];
        let (timeout, has_breaker) = (class.timeout_ns, class.retry.breaker.is_some());
        let cs = &mut self.classes[c];
        if has_breaker && cs.breaker.is_open(self.now) {
            return Next::AttemptFailed(Failure::Breaker);
        }
        // A call that propagates its caller's deadline ends by it at the latest.
        let cap = if self.cfg.deadlines {
            self.call_cap(r, c)
        } else {
            SimTime::MAX
        };
        if cap <= self.now {
            return Next::AttemptFailed(Failure::Timeout);
        }
        let deadline = self.arm_attempt_timeout(r, token, timeout, cap);
        self.reqs[r].deadline = deadline;
        Next::Step
    }

    /// Starts the current step. A step without keys goes straight to its query; a keyed
    /// step draws its keys and looks them up (`start_keyed_step`).
    #[inline(always)]
    fn start_step<const P: bool>(&mut self, r: u32, c: usize) -> Next {
        let req = &mut self.reqs[r];
        let step = req.step as usize;
        let keyed = !P && self.cfg.classes[c].steps[step].keyed;
        req.q_attempt = 0;
        if !keyed {
            req.covered = 0;
            // The plain instance sends the query in line.
            return if P {
                self.start_query::<P>(r, c)
            } else {
                Next::Query
            };
        }
        self.start_keyed_step(r, c, step)
    }

    /// The current step succeeded. A cache step fills its keys now, and only now: a query
    /// that failed or came back after the client gave up fills nothing (the Slack
    /// sustaining loop).
    #[inline]
    pub(super) fn step_done<const P: bool>(&mut self, r: u32, c: usize) -> Next {
        let step = self.reqs[r].step as usize;
        let steps = &self.cfg.classes[c].steps;
        let (cache, n) = (if P { None } else { steps[step].cache }, steps.len());
        if let Some(ci) = cache {
            // Every key's record asked for first: the fills' cache misses overlap.
            let cache = &mut self.caches[ci];
            for &k in self.keys.of(r) {
                cache.prefetch(k);
            }
            for &k in self.keys.of(r) {
                cache.fill(k, self.now);
            }
            if self.caches[ci].coalesce {
                self.landed(r, ci, true);
            }
        }
        let req = &mut self.reqs[r];
        req.step += 1;
        if (req.step as usize) < n {
            Next::Step
        } else {
            Next::Done(true)
        }
    }

    /// The current query attempt failed: its outstanding parts become stale; retry the
    /// query, or fail the attempt. Out of line: the healthy path stays small.
    #[inline(never)]
    fn query_failed(&mut self, r: u32, c: usize, why: Failure) -> Next {
        self.witness.retried[c] = true;
        let step = self.reqs[r].step as usize;
        let token = self.next_token();
        let policy = self.cfg.classes[c].steps[step].query.retry;
        let req = &mut self.reqs[r];
        req.query_token = token;
        let cs = &mut self.classes[c];
        match retry::decide(
            &policy,
            req.q_attempt as u32,
            why,
            cs.step_budgets[step].as_mut(),
            self.sleeps
                .after(r, level_of(&policy, QUERY_LEVEL), req.q_attempt),
            &mut cs.retry_rng,
            self.now,
        ) {
            Decision::RetryAfter(delay) => {
                let at = self.now.saturating_add(delay);
                self.schedule_backoff(&policy, at, Event::QueryStart { req: r, token });
                Next::Wait
            }
            Decision::GiveUp => Next::AttemptFailed(why),
        }
    }

    /// Schedules a retry at `at`, after its backoff: without jitter a constant delay per
    /// attempt ([`Simulation::schedule_delayed`]).
    #[inline(always)]
    fn schedule_backoff(&mut self, policy: &RetryCfg, at: SimTime, ev: Event) {
        self.schedule_delayed(policy.jitter == Jitter::None, at, ev);
    }

    /// Schedules `ev` at `at`, a delay after now that is the same for every event of its
    /// kind when `fixed` (a backoff without jitter, a hedge's fixed delay): such sleepers go
    /// to a timer's lane in order ([`crate::engine::EventQueue::schedule_timer`]: in a retry
    /// storm they would fill the heap); a varying delay goes to the heap, as it would fill
    /// the lanes out of order. Either way the events pop in the same order.
    #[inline(always)]
    pub(super) fn schedule_delayed(&mut self, fixed: bool, at: SimTime, ev: Event) {
        if fixed {
            self.queue.schedule_timer(at, ev);
        } else {
            self.queue.schedule(at, ev);
        }
    }

    /// The current attempt failed: the breaker counts it; everything the attempt had
    /// outstanding becomes stale; retry the request, or fail it. Out of line: the healthy
    /// path stays small.
    #[inline(never)]
    fn attempt_failed(&mut self, r: u32, c: usize, why: Failure) -> Next {
        self.witness.retried[c] = true;
        // A fill this attempt led will not land: its waiters look their keys up again.
        let step = self.reqs[r].step as usize;
        if let Some(ci) = self.cfg.classes[c].steps.get(step).and_then(|s| s.cache)
            && self.caches[ci].coalesce
        {
            self.landed(r, ci, false);
        }
        let policy = self.cfg.classes[c].retry;
        if let Some(b) = &policy.breaker {
            self.classes[c].breaker.record(b, self.now, false);
        }
        let a_token = self.next_token();
        let q_token = self.next_token();
        let cs = &mut self.classes[c];
        let req = &mut self.reqs[r];
        req.attempt_token = a_token;
        req.query_token = q_token;
        match retry::decide(
            &policy,
            req.attempt as u32,
            why,
            cs.retry_budget.as_mut(),
            self.sleeps
                .after(r, level_of(&policy, REQUEST_LEVEL), req.attempt),
            &mut cs.retry_rng,
            self.now,
        ) {
            Decision::RetryAfter(delay) => {
                let at = self.now.saturating_add(delay);
                let ev = Event::AttemptStart {
                    req: r,
                    token: a_token,
                };
                self.schedule_backoff(&policy, at, ev);
                Next::Wait
            }
            Decision::GiveUp => Next::Done(false),
        }
    }

    /// The request is over: count it, record its latency, free its slot. A pool call then
    /// reports to the job that made it.
    #[inline(always)]
    fn request_done<const P: bool>(&mut self, r: u32, c: usize, ok: bool) {
        let Request {
            arrived,
            parent,
            parent_token,
            ..
        } = self.reqs[r];
        let cs = &mut self.classes[c];
        if ok {
            if !P && let Some(b) = &self.cfg.classes[c].retry.breaker {
                cs.breaker.record(b, self.now, true);
            }
            cs.counts.succeeded += 1;
            let lat = self.now - arrived;
            cs.window_latency.record(lat);
            cs.latency_sum_ns += lat as u128;
        } else {
            cs.counts.failed += 1;
        }
        // One fresh token makes every event still pending for the slot stale.
        let t = self.next_token();
        let req = &mut self.reqs[r];
        req.attempt_token = t;
        req.query_token = t;
        if !P && self.trace.is_some() {
            self.trace_request_done(r, parent_token);
        }
        self.reqs.remove(r);
        if !P && parent_token != 0 {
            match self.cfg.classes[c].sync {
                None => self.call_done(parent, parent_token, c, ok),
                Some(p) => self.sync_done(p, parent, parent_token, ok),
            }
        } else if parent != 0 {
            self.user_done(c, parent - 1, ok);
        }
    }
}
