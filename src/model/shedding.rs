//! Load shedding at a pool's servers: queue watermarks at admission, and CoDel with
//! adaptive LIFO at the head of the queue, as Facebook's "Fail at Scale" (2015) describes
//! them. Shed work fails at once for its caller, as a rejection (a 503): the caller may
//! retry it or not, by its policy's `retry_on`.

use super::protocol::Next;
use super::simulation::Simulation;
use crate::scenario::{CodelCfg, Discipline, Failure};

impl Simulation<'_> {
    /// Whether a server whose queue holds `len` jobs (all its workers busy) takes one more
    /// by its watermarks: refusing from `high` on, until the queue has drained to `low`.
    /// Also notes when the queue starts to fill (CoDel's clock).
    #[inline(never)]
    pub(super) fn admit(&mut self, p: usize, server: u32, len: u32) -> bool {
        let marks = self.cfg.pools[p].shed.and_then(|s| s.watermarks);
        let srv = &mut self.pools[p].servers[server as usize];
        if let Some((high, low)) = marks {
            if srv.shedding && len <= low {
                srv.shedding = false;
            }
            if !srv.shedding && len >= high {
                srv.shedding = true;
            }
            if srv.shedding {
                return false;
            }
        }
        if len == 0 {
            srv.busy_since = self.now;
        }
        true
    }

    /// CoDel at the head of a server's queue, as "Fail at Scale" states it: when the queue
    /// has not been empty for the last `interval`, work may wait at most `target`;
    /// otherwise at most `interval`. Work past its limit is shed from the oldest end.
    /// Returns the discipline to take the next job by: LIFO while overloaded (the queue
    /// has not been empty for `interval`) with `adaptive`.
    #[inline(never)]
    pub(super) fn codel(
        &mut self,
        p: usize,
        server: u32,
        c: CodelCfg,
        adaptive: bool,
        discipline: Discipline,
    ) -> Discipline {
        let now = self.now;
        let pool = &mut self.pools[p];
        let srv = &pool.servers[server as usize];
        let overloaded = !srv.queue.is_empty() && now - srv.busy_since > c.interval_ns;
        let limit = if overloaded {
            c.target_ns
        } else {
            c.interval_ns
        };
        loop {
            let srv = &mut pool.servers[server as usize];
            let Some(&oldest) = srv.queue.front() else {
                break;
            };
            if now - self.jobs[oldest].enqueued <= limit {
                break;
            }
            srv.queue.pop_front();
            pool.queued -= 1;
            pool.stats.shed += 1;
            self.shed_jobs.push(oldest);
        }
        if overloaded && adaptive {
            Discipline::Lifo
        } else {
            discipline
        }
    }

    /// Tells the callers of the work just shed that it was refused, in the order shed.
    #[inline(never)]
    pub(super) fn report_shed(&mut self) {
        if self.shed_jobs.is_empty() {
            return;
        }
        let mut shed = std::mem::take(&mut self.shed_jobs);
        for &j in &shed {
            let job = self.jobs[j];
            self.jobs.remove(j);
            if self.reqs[job.req].query_token == job.token {
                self.advance::<false>(job.req, Next::Part(Some(Failure::Rejected), job.keys));
            }
        }
        shed.clear();
        if self.shed_jobs.is_empty() {
            self.shed_jobs = shed;
        }
    }
}
