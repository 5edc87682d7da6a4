//! A request in flight: the record the lifecycle ([`super::lifecycle`]) moves through its
//! attempts and steps. Requests live in a [`Slab`].

use super::slab::Slab;
use crate::engine::time::SimTime;

/// One request's progress. Tokens tie events to the attempt or query attempt that
/// scheduled them; a stale event (an earlier attempt's timeout, a job whose caller gave up)
/// carries an old token and is ignored.
#[derive(Debug, Clone, Copy, Default)]
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
    /// Parts of the current query still outstanding (copies, for a hedged query), and how
    /// many came back ok.
    pub parts_left: u32,
    pub parts_ok: u32,
    /// Keys the current query covers (for a cache step with `miss = "all"`, all the
    /// step's keys, else the keys in the request's key list).
    pub covered: u32,
    /// The request's serial number: with the run's salt it seeds the draw of each step's
    /// keys, so a retry looks up the same keys (the same user's channels), not new ones.
    /// (A run never offers 2^32 requests: each needs an event, and the events are fewer.
    /// Calls wrap around harmlessly.) 32 bits keep the record at 72 bytes, which the
    /// processor indexes in one instruction.
    pub key_seed: u32,
    /// When the request was first offered.
    pub arrived: SimTime,
    /// The client's deadline for the current attempt.
    pub deadline: SimTime,
    /// Last backoff sleeps (decorrelated jitter), request and query level.
    pub prev_sleep: SimTime,
    pub q_prev_sleep: SimTime,
    /// For a pool call: the job that waits on it, and the job's calls token when the call
    /// was made (never 0). A client's request has token 0, and `parent` is then the
    /// population's user who sent it, counted from 1 (0: no user, an open class's or a
    /// burst's request).
    pub parent: u32,
    pub parent_token: u32,
}

/// Requests in flight per class that a population's user sent (and waits on).
pub fn users_waiting(reqs: &Slab<Request>, classes: usize) -> Vec<u64> {
    let mut out = vec![0; classes];
    for r in reqs.iter_live() {
        if r.parent_token == 0 && r.parent != 0 {
            out[r.class as usize] += 1;
        }
    }
    out
}

/// Requests in flight per class.
pub fn live_per_class(reqs: &Slab<Request>, classes: usize) -> Vec<u64> {
    let mut out = vec![0; classes];
    for r in reqs.iter_live() {
        out[r.class as usize] += 1;
    }
    out
}
