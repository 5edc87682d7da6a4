//! Pool service: a job reaches its server (or fails at once), waits in its queue by the
//! pool's discipline, is served by a worker, and reports back to its query. Expired work is
//! dropped from the queue when the pool cancels it; a crash fails the queued work. A job
//! with its own lease may go back to the queue instead of ending ([`super::lease`]).
//!
//! The pool's state (servers, workers, queues, statistics) is in [`super::pool`]; this file
//! is what happens to a job.

use super::calls::Calls;
use super::event::Event;
use super::lease::LeaseEnd;
use super::pool::Job;
use super::protocol::PartDone;
use super::simulation::Simulation;
use crate::scenario::{Discipline, Failure, ShedCfg};
use rand::RngExt;

impl Simulation<'_> {
    /// Hands a job to its server, or says why it fails at once: an error (outage, crashed
    /// server) or a rejection (full queue).
    #[inline(always)]
    pub(super) fn send<const P: bool>(&mut self, p: usize, job: Job) -> Result<(), Failure> {
        let pool = &mut self.pools[p];
        pool.stats.sent += 1;
        if P {
            // No outage, no server out of service, no fail-fast, no shedding.
            return self.enqueue::<P>(p, job);
        }
        if pool.outages > 0 {
            pool.stats.failed_fast += 1;
            return Err(Failure::Error);
        }
        let server = &pool.servers[job.server as usize];
        if server.down {
            // A connection error at once; a client that refreshes on error learns now.
            pool.stats.failed_fast += 1;
            self.witness.refused[p] = true;
            if self.cfg.pools[p].client.is_some_and(|c| c.refresh_on_error) {
                pool.refresh_view();
            }
            if self.cfg.pools[p].outlier.is_some() {
                self.answered(p, job.server, false);
            }
            return Err(Failure::Error);
        }
        if server.sync_out {
            // Out of service until its sync succeeds: the work fails at once.
            pool.stats.failed_fast += 1;
            return Err(Failure::Error);
        }
        if server.fail_fast > 0.0 && self.fails_fast(p, job.server) {
            return Err(Failure::Error);
        }
        self.enqueue::<P>(p, job)
    }

    /// [`Self::send`] once the job's server is known to take work: a free worker serves
    /// it, else it waits in the server's queue if there is room (and shedding admits it).
    #[inline(always)]
    fn enqueue<const P: bool>(&mut self, p: usize, job: Job) -> Result<(), Failure> {
        let pool = &mut self.pools[p];
        let server = &pool.servers[job.server as usize];
        if !P && self.cfg.watch {
            let seen = &mut self.witness.busy_seen[p];
            *seen = (*seen).max(server.busy);
        }
        if server.busy < pool.workers {
            let j = self.jobs.insert(job);
            self.start_service::<P>(p, j);
            return Ok(());
        }
        let len = server.queue.len() as u32;
        if len < self.cfg.pools[p].queue_limit {
            if !P && pool.sheds && !self.admit(p, job.server, len) {
                self.pools[p].stats.shed += 1;
                return Err(Failure::Rejected);
            }
            let pool = &mut self.pools[p];
            pool.integrate(self.now);
            let j = self.jobs.insert(job);
            pool.servers[job.server as usize].queue.push_back(j);
            pool.queued += 1;
            return Ok(());
        }
        self.pools[p].stats.dropped += 1;
        Err(Failure::Rejected)
    }

    /// A worker takes job `j`: its service time is drawn and its end scheduled.
    #[inline(always)]
    fn start_service<const P: bool>(&mut self, p: usize, j: u32) {
        let pool = &mut self.pools[p];
        pool.integrate(self.now);
        if !P && self.cfg.deadlines {
            self.count_late_start(p, j);
        }
        let pool = &mut self.pools[p];
        let job = &mut self.jobs[j];
        job.started = self.now;
        let (cost, s, req) = (job.cost, job.server as usize, job.req);
        let server = &mut pool.servers[s];
        server.busy += 1;
        let in_service = server.busy;
        let queued = server.queue.len() as u32;
        let primary = server.primary;
        pool.busy += 1;
        if primary {
            pool.busy_primary += 1;
        }
        let pc = &self.cfg.pools[p];
        let mut t = pool.service_ns(pc, cost, in_service, queued);
        if !P && pool.scale.is_some() {
            t = pool.warmed(pc, s as u32, self.now, t);
        }
        // A pool with calls ends the job's own service with a different event, so the
        // plain job's end tests nothing.
        let ev = if !P && pc.has_calls {
            Event::JobServed { job: j, req }
        } else {
            Event::JobDone { job: j, req }
        };
        self.queue.schedule(self.now.saturating_add(t), ev);
    }

    /// A worker finishes job `j`: the job is over.
    #[inline(always)]
    pub(super) fn job_done<const P: bool>(&mut self, j: u32, r: u32) -> Option<PartDone> {
        // Both loads issue before either is used (see `Event::JobDone`).
        let current = self.reqs[r].query_token == self.jobs[j].token;
        self.finish_job::<P>(j, current, None)
    }

    /// A worker finishes job `j`'s own service in a pool with calls: it makes them, holding
    /// the worker (no answer yet), or ends at once, failed, when its caller has given up,
    /// or as a plain job when its endpoint makes no calls. Out of line: the plain path
    /// stays small.
    #[inline(never)]
    pub(super) fn job_served(&mut self, j: u32, r: u32) -> Option<PartDone> {
        let current = self.reqs[r].query_token == self.jobs[j].token;
        match self.start_calls(j, current) {
            Calls::Started => None,
            Calls::Expired => self.finish_job::<false>(j, current, Some(Failure::Timeout)),
            Calls::None => self.finish_job::<false>(j, current, None),
        }
    }

    /// Job `j` is over: its worker takes the next waiting one. It failed if `failure` says
    /// so (one of its calls failed), if its server crashed meanwhile, or by the pool's error
    /// rate. Returns the part's answer if its query still waits for it (`current`: the
    /// caller has not moved on).
    #[inline(always)]
    pub(super) fn finish_job<const P: bool>(
        &mut self,
        j: u32,
        current: bool,
        failure: Option<Failure>,
    ) -> Option<PartDone> {
        let job = self.jobs[j];
        let p = job.pool as usize;
        let pcfg = &self.cfg.pools[p];
        let pool = &mut self.pools[p];
        pool.integrate(self.now);
        let server = &mut pool.servers[job.server as usize];
        server.busy -= 1;
        let primary = server.primary;
        pool.busy -= 1;
        if primary {
            pool.busy_primary -= 1;
        }
        pool.stats.served += 1;
        pool.stats.wait_sum_ns += (job.started - job.enqueued) as u128;
        pool.stats.sojourn_sum_ns += (self.now - job.enqueued) as u128;
        let scaled = !P && pool.scale.is_some();
        let server = &mut pool.servers[job.server as usize];
        // A job on a server that crashed meanwhile is lost: its caller sees an error.
        let mut ok = (P || !server.down) && failure.is_none();
        if pool.per_shard > 1 {
            server.latency_ewma_ns +=
                0.1 * ((self.now - job.enqueued) as f64 - server.latency_ewma_ns);
        }
        if !P && pcfg.error_rate > 0.0 {
            ok &= pool.rng.random::<f64>() >= pcfg.error_rate;
        }
        let ejects = !P && pcfg.outlier.is_some();
        let leased = !P && pcfg.lease.is_some() && !server.down;
        if !P && self.trace.is_some() {
            self.trace_job_end(j, &job, ok);
        }
        if ejects {
            self.answered(p, job.server, ok);
        }
        let mut failed = Failure::Error;
        if leased {
            match self.lease_end(p, j, ok) {
                LeaseEnd::Kept => {}
                LeaseEnd::Requeued => {
                    self.serve_next::<false>(p, job.server);
                    return None;
                }
                LeaseEnd::Expired => (ok, failed) = (false, Failure::Timeout),
            }
        }
        self.jobs.remove(j);
        self.serve_next::<P>(p, job.server);
        if scaled {
            self.scaled_job_done(p, job.server, self.now - job.enqueued);
        }
        if !P && !current && self.refresh_ahead {
            self.refresh_landed(job.keys, job.token, ok);
        }
        current.then_some(PartDone {
            req: job.req,
            failure: (!ok).then_some(failed),
            keys: job.keys,
        })
    }

    /// Starts waiting jobs on a server while it has free workers, dropping expired ones
    /// (`cancel_expired`) and, in a pool that sheds, shedding by CoDel.
    #[inline(always)]
    pub(super) fn serve_next<const P: bool>(&mut self, p: usize, server: u32) {
        if !P && self.pools[p].sheds {
            self.serve_shedding(p, server)
        } else {
            self.serve_waiting::<P, false>(p, server)
        }
    }

    /// [`Self::serve_next`] in a pool that sheds: out of line, so the plain loop stays
    /// small where it is inlined.
    #[inline(never)]
    fn serve_shedding(&mut self, p: usize, server: u32) {
        if self.cfg.pools[p].shed.is_some_and(|s| s.codel.is_some()) {
            self.serve_waiting::<false, true>(p, server)
        } else {
            self.serve_waiting::<false, false>(p, server)
        }
    }

    /// The loop of [`Self::serve_next`]; `CODEL` (known at compile time) adds CoDel.
    #[inline(always)]
    fn serve_waiting<const P: bool, const CODEL: bool>(&mut self, p: usize, server: u32) {
        let pc = &self.cfg.pools[p];
        let (base, cancel_expired, shed) = (pc.discipline, pc.cancel_expired, pc.shed);
        let lapses = pc.lease.is_some();
        let drops = !P && (cancel_expired || pc.drops_propagated || lapses || self.cfg.watch);
        let mut discipline = base;
        loop {
            let pool = &mut self.pools[p];
            if pool.servers[server as usize].busy >= pool.workers {
                break;
            }
            // The plain instance comes here only from `finish_job`, which has integrated
            // up to now, and the clock does not move in this loop.
            if !P {
                pool.integrate(self.now);
            }
            if CODEL
                && let Some(ShedCfg {
                    codel: Some(c),
                    adaptive_lifo,
                    ..
                }) = shed
            {
                discipline = self.codel(p, server, c, adaptive_lifo, base);
            }
            let pool = &mut self.pools[p];
            let Some(nj) = pool.next_waiting(server, discipline) else {
                break;
            };
            // The job that will be served after this one has usually waited long enough to
            // leave the cache (a queue of thousands behind a pool of busy workers): start
            // fetching its record now, a service time before it is read.
            if !P {
                let q = &pool.servers[server as usize].queue;
                let after = match discipline {
                    Discipline::Fifo => q.front(),
                    Discipline::Lifo => q.back(),
                };
                if let Some(&after) = after {
                    super::simulation::prefetch(&self.jobs[after]);
                }
            }
            if drops {
                let job = &self.jobs[nj];
                let stale = job.deadline <= self.now || self.reqs[job.req].query_token != job.token;
                if stale && !job.propagated {
                    self.witness.stale[p] = true;
                }
                if (cancel_expired || job.propagated) && stale {
                    pool.stats.expired += 1;
                    self.jobs.remove(nj);
                    continue;
                }
                if lapses && self.drop_lapsed(p, nj) {
                    continue;
                }
            }
            self.start_service::<P>(p, nj);
        }
        if CODEL {
            self.report_shed();
        }
    }

    /// A query reaches server `server` of pool `p` while a fail-fast event holds it: it
    /// answers with an error at once (the share the event names; a draw from the pool's
    /// stream when that is below 1), without queueing or holding a worker, so it keeps
    /// looking idle to its balancer. The sinkhole of `scenarios/lb-sinkhole.toml`.
    #[inline(never)]
    #[cold]
    fn fails_fast(&mut self, p: usize, server: u32) -> bool {
        let pool = &mut self.pools[p];
        let fails = pool.fails_fast_now(server);
        if fails {
            pool.stats.failed_fast += 1;
            self.answered(p, server, false);
        }
        fails
    }

    /// Server `server` of pool `p` crashes: its queued work fails at once (connection
    /// reset); work in service fails when it would have finished. Each failed job reports
    /// to its query in queue order.
    pub(super) fn crash_server(&mut self, p: usize, server: u32) {
        let pool = &mut self.pools[p];
        pool.integrate(self.now);
        let srv = &mut pool.servers[server as usize];
        srv.down = true;
        let queued: Vec<u32> = srv.queue.drain(..).collect();
        pool.queued -= queued.len() as u64;
        pool.stats.dropped += queued.len() as u64;
        if self.cfg.pools[p].client.is_none() {
            pool.refresh_view();
        }
        for j in queued {
            let job = self.jobs[j];
            self.jobs.remove(j);
            if self.reqs[job.req].query_token == job.token {
                let failed = Some(Failure::Error);
                self.advance::<false>(job.req, super::protocol::Next::Part(failed, job.keys));
            }
        }
    }
}
