//! Work with its own lease (`[pool.NAME.lease]`): the server, not its client, gives up on
//! work that took too long and does it again. EC2's DropletWorkflow Manager in October
//! 2025 (`scenarios/aws-dwfm-2025-10-20.toml`): lease work that did not finish within its
//! timeout was queued again, so with a large enough backlog every attempt finished after
//! its own lease and nothing was ever done ("congestive collapse"), with no client retry.
//!
//! - A job's lease runs `timeout` from when it entered its server's queue (`Job::enqueued`,
//!   set when it is sent, even to a free worker) or re-entered it.
//! - When its service ends (its calls included) on a server that is up and the lease has
//!   passed, the work is wasted (counted in `lease_expired`): with `on_expiry = "requeue"`
//!   the job goes to the back of its server's queue with a fresh lease and its caller keeps
//!   waiting; with `"drop"` it fails (`timeout`), and a worker about to take a job whose
//!   lease has already passed drops it unserved, failed too (`LeaseLapsed`, an event at
//!   the same instant, so the dequeue loop advances no request).
//! - `requeue_failed`: a job that ends failed (a failed call, the pool's `error_rate`) on a
//!   server that is up, within its lease, goes back to the queue that long after, with a
//!   fresh lease (`Event::Requeue`): the work stays with the server while a dependency is
//!   out. A job whose server is down when the delay is over fails then, as a crash fails
//!   the server's queued work.
//!
//! No zero-time loop: a lease can only pass after `timeout` (> 0) of time since the job
//! (re-)entered the queue, and a failed job waits `requeue_failed` (> 0) before it does.
//! A crash empties the queue (re-queued work included) as it always did.

use super::event::Event;
use super::protocol::PartDone;
use super::simulation::Simulation;
use crate::engine::time::SimTime;
use crate::scenario::{Failure, OnExpiry};

/// What the end of a leased job's service means for it.
pub(super) enum LeaseEnd {
    /// Within its lease, or failed without `requeue_failed`: the job is over.
    Kept,
    /// Back to the queue (now or after `requeue_failed`): its caller keeps waiting.
    Requeued,
    /// Its lease passed and the pool drops expired work: the job fails (`timeout`).
    Expired,
}

/// Whether a lease of `timeout_ns` taken at `since` has passed at `now`.
#[inline]
pub fn lapsed(now: SimTime, since: SimTime, timeout_ns: SimTime) -> bool {
    now - since > timeout_ns
}

impl Simulation<'_> {
    /// Job `j` of pool `p` (which has a lease) ends its service on a server that is up;
    /// `ok`: it succeeded. Re-queues it, or says whether it is over or expired.
    #[inline(never)]
    pub(super) fn lease_end(&mut self, p: usize, j: u32, ok: bool) -> LeaseEnd {
        let Some(lease) = self.cfg.pools[p].lease else {
            return LeaseEnd::Kept;
        };
        if lapsed(self.now, self.jobs[j].enqueued, lease.timeout_ns) {
            self.pools[p].stats.lease_expired += 1;
            return match lease.on_expiry {
                OnExpiry::Requeue => {
                    self.requeue(p, j);
                    LeaseEnd::Requeued
                }
                OnExpiry::Drop => LeaseEnd::Expired,
            };
        }
        match lease.requeue_failed_ns {
            Some(delay) if !ok => {
                let at = self.now.saturating_add(delay);
                self.queue.schedule(at, Event::Requeue { job: j });
                LeaseEnd::Requeued
            }
            _ => LeaseEnd::Kept,
        }
    }

    /// Job `j` goes to the back of its server's queue with a fresh lease. The server has
    /// already admitted it: no queue limit or shedding applies.
    fn requeue(&mut self, p: usize, j: u32) {
        let pool = &mut self.pools[p];
        pool.integrate(self.now);
        let job = &mut self.jobs[j];
        job.enqueued = self.now;
        pool.servers[job.server as usize].queue.push_back(j);
        pool.queued += 1;
    }

    /// `requeue_failed` is over for job `j`: back to its server's queue, or failed (an
    /// `error`) if the server is down now; then its answer, for the dispatch to apply.
    #[inline(never)]
    pub(super) fn requeue_failed(&mut self, j: u32) -> Option<PartDone> {
        let job = self.jobs[j];
        let p = job.pool as usize;
        if self.pools[p].servers[job.server as usize].down {
            self.pools[p].stats.dropped += 1;
            return self.fail_leased(j, Failure::Error);
        }
        self.requeue(p, j);
        self.serve_next::<false>(p, job.server);
        None
    }

    /// A worker of pool `p` is about to take job `j`: with `on_expiry = "drop"`, a job
    /// whose lease has already passed is dropped unserved (its caller hears at
    /// `Event::LeaseLapsed`). Returns whether it was.
    #[inline(never)]
    pub(super) fn drop_lapsed(&mut self, p: usize, j: u32) -> bool {
        let Some(lease) = self.cfg.pools[p].lease else {
            return false;
        };
        let drops = lease.on_expiry == OnExpiry::Drop;
        if !(drops && lapsed(self.now, self.jobs[j].enqueued, lease.timeout_ns)) {
            return false;
        }
        self.pools[p].stats.lease_expired += 1;
        self.queue.schedule(self.now, Event::LeaseLapsed { job: j });
        true
    }

    /// Job `j`, out of its queue, fails with `failure`: the answer its caller hears if it
    /// still waits, which the dispatch applies. `Event::LeaseLapsed` (a `timeout`), and a
    /// failed job whose server crashed.
    #[inline(never)]
    pub(super) fn fail_leased(&mut self, j: u32, failure: Failure) -> Option<PartDone> {
        let job = self.jobs[j];
        self.jobs.remove(j);
        (self.reqs[job.req].query_token == job.token).then_some(PartDone {
            req: job.req,
            failure: Some(failure),
            keys: job.keys,
        })
    }
}
