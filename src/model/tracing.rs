//! Request traces (`brink run --trace-sample N`): one span per visit of a sampled request
//! to a pool (a job, from the start of its service to its end, its calls included), with
//! the job that made the call as its parent, so that a run can be read back as a tracing
//! system would see it ([`crate::export::traces_json()`], and `brink import-traces`).
//!
//! Off by default and then free: the simulation holds `None`, and each hook is one test
//! of that `Option` calling an out-of-line function, in places a request or a job passes
//! once (its start, its calls, its end). Sampling takes every N-th client request by
//! count (no random draw), so a traced run's other outputs are byte for byte those of a
//! plain run, and the same seed gives the same spans.

use super::pool::Job;
use super::simulation::Simulation;
use crate::engine::time::SimTime;
use crate::scenario::Config;
use std::collections::HashMap;

/// The most spans a run keeps: once reached, no new request is sampled (those under way
/// finish their traces, up to twice this many; beyond, spans are counted as dropped).
pub const MAX_SPANS: usize = 500_000;

/// One span: a job of a sampled request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The trace (the sampled client request), counted from 1.
    pub trace: u64,
    /// The span's own id, counted from 1 across the run.
    pub id: u64,
    /// The span of the job whose call this job serves (0: a root, a client's query).
    pub parent: u64,
    /// The pool (its index in the configuration) and the endpoint served (0: none).
    pub pool: u16,
    pub endpoint: u16,
    /// When service began and when the job ended (after its calls), simulated ns.
    pub start: SimTime,
    pub end: SimTime,
    /// Whether the job succeeded.
    pub ok: bool,
}

/// The spans of a run: those of traces whose client request ended within the run, in
/// the order their jobs ended.
#[derive(Debug, Clone, Default)]
pub struct TraceLog {
    /// The service name of each pool (the pool's name), by index.
    pub services: Vec<String>,
    /// The operation name of each pool's endpoints (`pool`, or `pool/endpoint` as a
    /// step names it), by pool and endpoint index.
    pub operations: Vec<Vec<String>>,
    /// 1 in `every` client requests was sampled.
    pub every: u64,
    /// Traces written (client requests sampled and ended within the run).
    pub traces: u64,
    pub spans: Vec<Span>,
    /// Spans not kept (beyond the bound, or of traces still in flight at the end).
    pub dropped: u64,
}

/// What a traced request carries: its trace, the span of the job that called it, when
/// it arrived (to tell it from an earlier request of the same slot).
#[derive(Debug, Clone, Copy)]
struct ReqTrace {
    trace: u64,
    parent: u64,
    arrived: SimTime,
}

/// The tracer of one run: the sampling counter and the traced requests and jobs in
/// flight, by slot.
#[derive(Debug, Clone)]
pub struct Tracer {
    every: u64,
    /// Client requests started so far.
    seen: u64,
    next_trace: u64,
    next_span: u64,
    reqs: HashMap<u32, ReqTrace>,
    /// Jobs that make calls: their trace and span id, given when their calls start.
    jobs: HashMap<u32, (u64, u64)>,
    spans: Vec<Span>,
    /// Per trace (index trace - 1): its client request has ended.
    ended: Vec<bool>,
    dropped: u64,
}

impl Tracer {
    /// A tracer sampling 1 in `every` client requests (`every` ≥ 1).
    pub fn new(every: u64) -> Self {
        Self {
            every: every.max(1),
            seen: 0,
            next_trace: 0,
            next_span: 0,
            reqs: HashMap::new(),
            jobs: HashMap::new(),
            spans: Vec::new(),
            ended: Vec::new(),
            dropped: 0,
        }
    }

    /// The spans of the traces whose client request ended, in order, with the names of
    /// `cfg`'s pools and endpoints.
    pub fn into_log(self, cfg: &Config) -> TraceLog {
        let ended = &self.ended;
        let done = |s: &Span| ended[(s.trace - 1) as usize];
        let kept: Vec<Span> = self.spans.iter().copied().filter(done).collect();
        TraceLog {
            services: cfg.pools.iter().map(|p| p.name.clone()).collect(),
            operations: cfg
                .pools
                .iter()
                .map(|p| {
                    p.endpoints
                        .iter()
                        .map(|e| match e.as_str() {
                            "" => p.name.clone(),
                            e => format!("{}/{e}", p.name),
                        })
                        .collect()
                })
                .collect(),
            every: self.every,
            traces: ended.iter().filter(|e| **e).count() as u64,
            dropped: self.dropped + (self.spans.len() - kept.len()) as u64,
            spans: kept,
        }
    }

    fn span_id(&mut self) -> u64 {
        self.next_span += 1;
        self.next_span
    }

    /// Request slot `r` starts, arriving now: a client's (`parent_token` 0) is sampled by
    /// count; a call is traced when the job making it (`parent`) is.
    fn request_started(&mut self, r: u32, parent: u32, parent_token: u32, now: SimTime) {
        let traced = if parent_token == 0 {
            self.seen += 1;
            let sample = (self.seen - 1).is_multiple_of(self.every) && self.spans.len() < MAX_SPANS;
            sample.then(|| {
                self.next_trace += 1;
                self.ended.push(false);
                (self.next_trace, 0)
            })
        } else {
            self.jobs.get(&parent).copied()
        };
        match traced {
            Some((trace, parent)) => {
                self.reqs.insert(
                    r,
                    ReqTrace {
                        trace,
                        parent,
                        arrived: now,
                    },
                );
            }
            None => {
                self.reqs.remove(&r);
            }
        }
    }

    /// The trace of job `job` (its request's, if the request in its slot is the one that
    /// sent it: one that arrived no later than the job was sent).
    fn of_job(&self, job: &Job) -> Option<ReqTrace> {
        self.reqs
            .get(&job.req)
            .copied()
            .filter(|t| t.arrived <= job.enqueued)
    }
}

impl Simulation<'_> {
    /// Traces 1 in `every` client requests ([`Tracer`]).
    pub fn with_trace_sample(mut self, every: u64) -> Self {
        self.trace = Some(Box::new(Tracer::new(every)));
        self
    }

    /// Request slot `r` has started (tracing on).
    #[cold]
    #[inline(never)]
    pub(super) fn trace_request(&mut self, r: u32, parent: u32, parent_token: u32) {
        let now = self.now;
        if let Some(t) = self.trace.as_deref_mut() {
            t.request_started(r, parent, parent_token, now);
        }
    }

    /// Request slot `r` has ended (tracing on): a client's ends its trace.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_request_done(&mut self, r: u32, parent_token: u32) {
        if let Some(t) = self.trace.as_deref_mut()
            && let Some(rt) = t.reqs.remove(&r)
            && parent_token == 0
        {
            t.ended[(rt.trace - 1) as usize] = true;
        }
    }

    /// Job `j` starts its calls (tracing on): it gets its span id now, for its calls'
    /// spans to name as their parent.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_calls(&mut self, j: u32) {
        let job = self.jobs[j];
        if let Some(t) = self.trace.as_deref_mut()
            && let Some(rt) = t.of_job(&job)
        {
            let id = t.span_id();
            t.jobs.insert(j, (rt.trace, id));
        }
    }

    /// Job `j` (`job`) ends now, `ok` or not (tracing on): its span, if its request is
    /// traced.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_job_end(&mut self, j: u32, job: &Job, ok: bool) {
        let now = self.now;
        let Some(t) = self.trace.as_deref_mut() else {
            return;
        };
        let own = t.jobs.remove(&j);
        let Some(rt) = t.of_job(job) else {
            return;
        };
        let id = match own {
            Some((_, id)) => id,
            None => t.span_id(),
        };
        if t.spans.len() >= 2 * MAX_SPANS {
            t.dropped += 1;
            return;
        }
        t.spans.push(Span {
            trace: rt.trace,
            id,
            parent: rt.parent,
            pool: job.pool,
            endpoint: job.endpoint,
            start: job.started,
            end: now,
            ok,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_every_nth_client_request() {
        let mut t = Tracer::new(3);
        for r in 0..7 {
            t.request_started(r, 0, 0, 0);
        }
        let traced: Vec<u32> = (0..7).filter(|r| t.reqs.contains_key(r)).collect();
        assert_eq!(traced, [0, 3, 6]);
    }
}
