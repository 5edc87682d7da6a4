//! A request in flight: the record the lifecycle ([`super::lifecycle`]) moves through its
//! attempts and steps. Requests live in a [`Slab`].

use super::slab::Slab;
use crate::engine::time::SimTime;

/// One request's progress. Tokens tie events to the attempt or query attempt that
/// scheduled them; a stale event (an earlier attempt's timeout, a job whose caller gave up)
/// carries an old token and is ignored.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    pub class: u16,
    /// Index of the step being run.
    pub step: u16,
    /// Request-level attempts started so far.
    pub attempt: u16,
    /// Query-level attempts of the current step started so far.
    pub q_attempt: u16,
    pub attempt_token: u32,
    pub query_token: u32,
    /// Parts of the current query still outstanding, and how many failed.
    pub parts_left: u32,
    pub parts_failed: u32,
    pub parts_total: u32,
    /// Keys the current query covers (for a cache step with `miss = "all"`, all the
    /// step's keys, else the keys in the request's key list).
    pub covered: u32,
    /// The request's serial number: with the run's salt it seeds the draw of each step's
    /// keys, so a retry looks up the same keys (the same user's channels), not new ones.
    pub key_seed: u64,
    /// When the request was first offered.
    pub arrived: SimTime,
    /// The client's deadline for the current attempt.
    pub deadline: SimTime,
    /// Last backoff sleeps (decorrelated jitter), request and query level.
    pub prev_sleep: SimTime,
    pub q_prev_sleep: SimTime,
    /// When the current query attempt was sent (hedged steps track their latency).
    pub q_sent: SimTime,
    /// For a pool call: the job that waits on it ([`NO_PARENT`] for a client's request),
    /// and the job's calls token when the call was made.
    pub parent: u32,
    pub parent_token: u32,
}

/// The `parent` of a client's request.
pub const NO_PARENT: u32 = u32::MAX;

impl Default for Request {
    fn default() -> Self {
        Self {
            class: 0,
            step: 0,
            attempt: 0,
            q_attempt: 0,
            attempt_token: 0,
            query_token: 0,
            parts_left: 0,
            parts_failed: 0,
            parts_total: 0,
            covered: 0,
            key_seed: 0,
            arrived: 0,
            deadline: 0,
            prev_sleep: 0,
            q_prev_sleep: 0,
            q_sent: 0,
            parent: NO_PARENT,
            parent_token: 0,
        }
    }
}

/// Requests in flight per class.
pub fn live_per_class(reqs: &Slab<Request>, classes: usize) -> Vec<u64> {
    let mut out = vec![0; classes];
    for r in reqs.iter_live() {
        out[r.class as usize] += 1;
    }
    out
}
