//! A token bucket: the admission rate limit of a class and the retry budget share it.

use crate::engine::time::{SimTime, ns_to_secs};
use crate::scenario::TokenBucketCfg;

/// Tokens refill continuously at `rate` per second up to `burst`; starts full.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    cfg: TokenBucketCfg,
    tokens: f64,
    last: SimTime,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(cfg: TokenBucketCfg) -> Self {
        Self {
            cfg,
            tokens: cfg.burst,
            last: 0,
        }
    }

    fn refill(&mut self, now: SimTime) {
        if now > self.last {
            self.tokens = (self.tokens + ns_to_secs(now - self.last) * self.cfg.rate_per_s)
                .min(self.cfg.burst);
            self.last = now;
        }
    }

    /// Takes one token if there is one.
    #[inline]
    pub fn try_take(&mut self, now: SimTime) -> bool {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Changes rate and burst (an intervention), keeping the tokens it holds up to the new burst.
    pub fn reconfigure(&mut self, now: SimTime, cfg: TokenBucketCfg) {
        self.refill(now);
        self.cfg = cfg;
        self.tokens = self.tokens.min(cfg.burst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::NS_PER_S;

    #[test]
    fn admits_rate_times_time_plus_burst() {
        let mut b = TokenBucket::new(TokenBucketCfg {
            rate_per_s: 10.0,
            burst: 5.0,
        });
        let mut admitted = 0;
        // One try every millisecond for 10 s: 5 from the burst + 100 refilled.
        for ms in 0..10_000u64 {
            if b.try_take(ms * NS_PER_S / 1000) {
                admitted += 1;
            }
        }
        assert!((104..=105).contains(&admitted), "{admitted}");
    }
}
