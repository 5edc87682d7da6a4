//! Requests in flight: a slab of fixed-size records reused through a free list, so the
//! hot path allocates nothing.

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
    /// The current query attempt's deadline (the tighter of the query's and the client's).
    pub query_deadline: SimTime,
    /// Last backoff sleeps (decorrelated jitter), request and query level.
    pub prev_sleep: SimTime,
    pub q_prev_sleep: SimTime,
}

/// The slab of requests.
#[derive(Default)]
pub struct Requests {
    slots: Vec<Request>,
    free: Vec<u32>,
    live: usize,
}

impl Requests {
    /// Stores a new request and returns its slot.
    #[inline]
    pub fn insert(&mut self, r: Request) -> u32 {
        self.live += 1;
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = r;
                i
            }
            None => {
                self.slots.push(r);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Frees a slot. The caller has already invalidated its tokens.
    #[inline]
    pub fn remove(&mut self, i: u32) {
        self.live -= 1;
        self.free.push(i);
    }

    /// Requests in flight.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Requests in flight per class.
    pub fn live_per_class(&self, classes: usize) -> Vec<u64> {
        let mut out = vec![0; classes];
        let mut is_free = vec![false; self.slots.len()];
        for &f in &self.free {
            is_free[f as usize] = true;
        }
        for (i, r) in self.slots.iter().enumerate() {
            if !is_free[i] {
                out[r.class as usize] += 1;
            }
        }
        out
    }
}

impl std::ops::Index<u32> for Requests {
    type Output = Request;
    #[inline]
    fn index(&self, i: u32) -> &Request {
        &self.slots[i as usize]
    }
}

impl std::ops::IndexMut<u32> for Requests {
    #[inline]
    fn index_mut(&mut self, i: u32) -> &mut Request {
        &mut self.slots[i as usize]
    }
}
