//! Admission: the one place a new request of a class is counted as offered, and as
//! admitted or rejected. A client's or a population's request passes its class's rate
//! limit (`rate_limit`, a token bucket); a pool's call passes its call's `max_in_flight`;
//! a server's sync is always admitted. What follows a refusal (the user thinks again, the
//! calling job hears a failure) is the caller's.

use super::simulation::Simulation;

/// What a new request of a class must pass.
#[derive(Debug, Clone, Copy)]
pub(super) enum Gate {
    /// The class's rate limit, if it has one.
    RateLimit,
    /// At most this many of the class in flight (admitted, not yet ended).
    InFlight(u32),
    /// Nothing: admitted.
    Open,
}

impl Simulation<'_> {
    /// Counts a request of class `c` as offered and lets it through `gate`: true when it
    /// is admitted (counted so), false when it is refused (counted rejected).
    #[inline(always)]
    pub(super) fn admit_request(&mut self, c: usize, gate: Gate) -> bool {
        let cs = &mut self.classes[c];
        cs.counts.offered += 1;
        let refused = match gate {
            Gate::RateLimit => cs
                .rate_limit
                .as_mut()
                .is_some_and(|b| !b.try_take(self.now)),
            Gate::InFlight(limit) => {
                let k = &cs.counts;
                limit != u32::MAX && k.admitted - k.succeeded - k.failed >= limit as u64
            }
            Gate::Open => false,
        };
        if refused {
            cs.counts.rejected += 1;
        } else {
            cs.counts.admitted += 1;
        }
        !refused
    }
}
