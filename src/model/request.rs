//! A request in flight: the record the lifecycle ([`super::lifecycle`]) moves through its
//! attempts and steps. Requests live in the model's slab (`slab.rs`).

use super::slab::Slab;
use crate::engine::time::SimTime;

/// One request's progress. Tokens tie events to the attempt or query attempt that
/// scheduled them; a stale event (an earlier attempt's timeout, a job whose caller gave up)
/// carries an old token and is ignored.
///
/// 58 bytes, aligned to a cache line: with many requests in flight a job's end reads its
/// request from far away in memory, and a record that straddled two lines (as a 72-byte one
/// mostly did) cost two misses instead of one. What only a retry reads lives in a side
/// table ([`Sleeps`]).
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
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
    /// Calls wrap around harmlessly.) 32 bits keep the record within its cache line.
    pub key_seed: u32,
    /// When the request was first offered.
    pub arrived: SimTime,
    /// The client's deadline for the current attempt.
    pub deadline: SimTime,
    /// For a pool call: the job that waits on it, and the job's calls token when the call
    /// was made (never 0). A client's request has token 0, and `parent` is then the
    /// population's user who sent it, counted from 1 (0: no user, an open class's or a
    /// burst's request).
    pub parent: u32,
    pub parent_token: u32,
    /// 1 + the step whose draw of keys without a cache the request's key list holds (a
    /// retry reuses it: [`super::keys`]); 0 for none.
    pub drawn: u16,
}

/// The level of a backoff sleep in [`Sleeps`]: a request's attempts.
pub const REQUEST_LEVEL: usize = 0;
/// The level of a backoff sleep in [`Sleeps`]: the current step's query attempts.
pub const QUERY_LEVEL: usize = 1;

/// The last backoff sleep of each request slot, at the request level and the query level:
/// what decorrelated jitter, the one jitter that reads it, grows the next sleep from
/// ([`super::retry::backoff_delay`]). A side table, touched only when an attempt fails,
/// keeps the request record within a cache line.
#[derive(Clone, Default)]
pub struct Sleeps(Vec<[SimTime; 2]>, SimTime);

/// The level of a policy whose jitter never reads the last sleep ([`level_of`]): nothing is
/// kept.
pub const NO_LEVEL: usize = 2;

/// `level` for a policy with decorrelated jitter, the one that reads the last sleep, else
/// [`NO_LEVEL`], so that other policies' retries leave the side table alone.
#[inline]
pub fn level_of(policy: &crate::scenario::RetryCfg, level: usize) -> usize {
    if policy.jitter == crate::scenario::Jitter::Decorrelated {
        level
    } else {
        NO_LEVEL
    }
}

impl Sleeps {
    /// Slot `r`'s last sleep at `level` after attempt number `attempt` (from 1) at that
    /// level failed, for the retry decision to read and update. Each attempt after the
    /// first was started by exactly one earlier sleep at its level, so after the first
    /// there has been none (0), whatever a request that held the slot before left there.
    #[inline]
    pub fn after(&mut self, r: u32, level: usize, attempt: u16) -> &mut SimTime {
        if level == NO_LEVEL {
            // A jitter that never reads the last sleep: it goes to a scratch slot.
            return &mut self.1;
        }
        let i = r as usize;
        if self.0.len() <= i {
            self.0.resize(i + 1, [0; 2]);
        }
        let last = &mut self.0[i][level];
        if attempt <= 1 {
            *last = 0;
        }
        last
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_attempt_has_slept_nothing_and_a_later_one_reads_the_last_sleep() {
        let mut s = Sleeps::default();
        // A request in slot 3 retries at the query level: its first failure has no sleep
        // behind it, its second reads the sleep the first retry took.
        assert_eq!(*s.after(3, QUERY_LEVEL, 1), 0);
        *s.after(3, QUERY_LEVEL, 1) = 700;
        assert_eq!(*s.after(3, QUERY_LEVEL, 2), 700);
        // The request level of the slot is its own.
        assert_eq!(*s.after(3, REQUEST_LEVEL, 2), 0);
        // A new request in the slot (or a new step) starts again from nothing, whatever
        // the last one left.
        assert_eq!(*s.after(3, QUERY_LEVEL, 1), 0);
        assert_eq!(*s.after(0, REQUEST_LEVEL, 1), 0);
        // A policy that never reads it keeps nothing per slot.
        *s.after(9, NO_LEVEL, 2) = 5;
        assert_eq!(s.0.len(), 4);
    }

    #[test]
    fn the_record_fits_one_cache_line() {
        assert_eq!(std::mem::size_of::<Request>(), 64);
        assert_eq!(std::mem::align_of::<Request>(), 64);
    }
}
