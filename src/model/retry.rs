//! Retry policies: the one retry decision ([`decide`]), used by both layers (a class's
//! request attempts and a step's query attempts); backoff (none, constant, exponential),
//! jitter (the AWS definitions: none, full, equal, decorrelated); the client's circuit
//! breaker.
//!
//! Backoff and jitter are enums from the scenario file rather than trait objects: they are
//! data, and a `match` keeps the hot path monomorphic.

use super::token_bucket::TokenBucket;
use crate::engine::Rng;
use crate::engine::time::SimTime;
use crate::scenario::{Backoff, BreakerCfg, Failure, Jitter, RetryCfg};
use rand::RngExt;

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Try again after this long.
    RetryAfter(SimTime),
    /// No more attempts: the failure stands.
    GiveUp,
}

/// The retry decision, the same at both layers: after attempt number `attempts` (1 for the
/// first) failed with `failure`, retry while the policy retries that kind of failure
/// (`retry_on`, by default every kind: a timeout, an error, a full queue, a rate limit, an
/// open breaker) and allows more attempts, and the retry budget (if any) has a token; after
/// the policy's backoff with jitter. `prev_sleep` carries the last sleep (decorrelated
/// jitter). A failure the policy does not retry takes no budget token.
#[inline]
pub fn decide(
    policy: &RetryCfg,
    attempts: u32,
    failure: Failure,
    budget: Option<&mut TokenBucket>,
    prev_sleep: &mut SimTime,
    rng: &mut Rng,
    now: SimTime,
) -> Decision {
    if attempts >= policy.max_attempts || !policy.retry_on.contains(failure) {
        return Decision::GiveUp;
    }
    if let Some(b) = budget
        && !b.try_take(now)
    {
        return Decision::GiveUp;
    }
    Decision::RetryAfter(backoff_delay(policy, attempts, prev_sleep, rng))
}

/// The wait before retry number `retry` (1 for the first retry). `prev` carries the last
/// sleep for decorrelated jitter and is updated.
pub fn backoff_delay(p: &RetryCfg, retry: u32, prev: &mut SimTime, rng: &mut Rng) -> SimTime {
    let ceiling = match p.backoff {
        Backoff::None => return 0,
        Backoff::Constant => p.base_ns.min(p.cap_ns),
        Backoff::Exponential => {
            let shift = (retry.saturating_sub(1)).min(62);
            p.base_ns.saturating_mul(1u64 << shift).min(p.cap_ns)
        }
    };
    let sleep = match p.jitter {
        Jitter::None => ceiling,
        Jitter::Full => uniform(rng, 0, ceiling),
        Jitter::Equal => ceiling / 2 + uniform(rng, 0, ceiling - ceiling / 2),
        Jitter::Decorrelated => {
            let last = if *prev == 0 { p.base_ns } else { *prev };
            uniform(rng, p.base_ns, last.saturating_mul(3)).min(p.cap_ns)
        }
    };
    *prev = sleep;
    sleep
}

fn uniform(rng: &mut Rng, lo: SimTime, hi: SimTime) -> SimTime {
    if hi <= lo {
        lo
    } else {
        rng.random_range(lo..=hi)
    }
}

/// A circuit breaker over tumbling windows: when a window holds at least `min_requests`
/// finished attempts and the failed share reaches `failure_ratio`, it opens for `open_for`
/// and attempts fail fast without reaching a server.
#[derive(Debug, Clone, Default)]
pub struct Breaker {
    window_start: SimTime,
    ok: u32,
    failed: u32,
    open_until: SimTime,
    /// When it last opened, and its open time before that.
    opened_at: SimTime,
    open_before_ns: SimTime,
}

impl Breaker {
    /// True while open.
    #[inline]
    pub fn is_open(&self, now: SimTime) -> bool {
        now < self.open_until
    }

    /// How long it has been open, in total, up to `now`.
    pub fn open_time(&self, now: SimTime) -> SimTime {
        self.open_before_ns + now.min(self.open_until).saturating_sub(self.opened_at)
    }

    /// Records one finished attempt. While open, the breaker counts nothing: the attempts
    /// it turns away fail at once, and counting them would keep it open for as long as
    /// clients keep trying.
    pub fn record(&mut self, cfg: &BreakerCfg, now: SimTime, ok: bool) {
        if self.is_open(now) {
            return;
        }
        if now >= self.window_start.saturating_add(cfg.window_ns) {
            self.window_start = now;
            self.ok = 0;
            self.failed = 0;
        }
        if ok {
            self.ok += 1;
        } else {
            self.failed += 1;
        }
        let total = self.ok + self.failed;
        if total >= cfg.min_requests && self.failed as f64 >= cfg.failure_ratio * total as f64 {
            self.open_before_ns += self.open_until - self.opened_at;
            self.opened_at = now;
            self.open_until = now.saturating_add(cfg.open_for_ns);
            self.window_start = self.open_until;
            self.ok = 0;
            self.failed = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream_rng;

    fn policy(backoff: Backoff, jitter: Jitter) -> RetryCfg {
        RetryCfg {
            max_attempts: 10,
            retry_on: crate::scenario::FailureSet::ALL,
            backoff,
            base_ns: 100,
            cap_ns: 1000,
            jitter,
            budget: None,
            breaker: None,
        }
    }

    #[test]
    fn exponential_doubles_up_to_cap() {
        let p = policy(Backoff::Exponential, Jitter::None);
        let mut rng = stream_rng(1, 0, "t");
        let mut prev = 0;
        let d: Vec<_> = (1..=6)
            .map(|n| backoff_delay(&p, n, &mut prev, &mut rng))
            .collect();
        assert_eq!(d, vec![100, 200, 400, 800, 1000, 1000]);
        assert_eq!(
            backoff_delay(&policy(Backoff::None, Jitter::None), 3, &mut prev, &mut rng),
            0
        );
        assert_eq!(
            backoff_delay(
                &policy(Backoff::Constant, Jitter::None),
                5,
                &mut prev,
                &mut rng
            ),
            100
        );
    }

    #[test]
    fn jitter_means_match_their_definitions() {
        let mut rng = stream_rng(1, 0, "t");
        let n = 200_000;
        let mean = |j: Jitter, rng: &mut Rng| {
            let p = policy(Backoff::Exponential, j);
            let mut prev = 0;
            (0..n)
                .map(|_| backoff_delay(&p, 4, &mut prev, rng) as f64)
                .sum::<f64>()
                / n as f64
        };
        // Attempt 4: ceiling 800. Full: U(0,800) mean 400. Equal: 400 + U(0,400) mean 600.
        assert!((mean(Jitter::Full, &mut rng) - 400.0).abs() < 4.0);
        assert!((mean(Jitter::Equal, &mut rng) - 600.0).abs() < 4.0);
        let d = mean(Jitter::Decorrelated, &mut rng);
        assert!(d > 100.0 && d <= 1000.0);
    }

    #[test]
    fn decide_retries_until_max_attempts_and_respects_the_budget() {
        let p = RetryCfg {
            max_attempts: 3,
            ..policy(Backoff::Constant, Jitter::None)
        };
        let mut rng = stream_rng(1, 0, "t");
        let mut prev = 0;
        let mut decide = |p: &RetryCfg, n: u32, why: Failure, budget: Option<&mut TokenBucket>| {
            decide(p, n, why, budget, &mut prev, &mut rng, 0)
        };
        // A bucket with one token that never refills.
        let one_token = || {
            TokenBucket::new(crate::scenario::TokenBucketCfg {
                rate_per_s: 0.0,
                burst: 1.0,
            })
        };
        let retry = Decision::RetryAfter(100);
        assert_eq!(decide(&p, 1, Failure::Error, None), retry);
        assert_eq!(decide(&p, 2, Failure::Error, None), retry);
        assert_eq!(decide(&p, 3, Failure::Error, None), Decision::GiveUp);
        let mut budget = one_token();
        assert_eq!(decide(&p, 1, Failure::Error, Some(&mut budget)), retry);
        assert_eq!(
            decide(&p, 1, Failure::Error, Some(&mut budget)),
            Decision::GiveUp,
            "an empty budget refuses the retry"
        );
        let only_timeouts = RetryCfg {
            retry_on: crate::scenario::FailureSet::of(&[Failure::Timeout]),
            ..p
        };
        let mut budget = one_token();
        assert_eq!(
            decide(&only_timeouts, 1, Failure::Rejected, Some(&mut budget)),
            Decision::GiveUp,
            "a failure the policy does not retry"
        );
        assert_eq!(
            decide(&only_timeouts, 1, Failure::Timeout, Some(&mut budget)),
            retry,
            "the refused kind took no budget token"
        );
    }

    #[test]
    fn breaker_opens_on_failure_share_and_closes_after() {
        let cfg = BreakerCfg {
            failure_ratio: 0.5,
            window_ns: 1000,
            min_requests: 4,
            open_for_ns: 500,
        };
        let mut b = Breaker::default();
        for (t, ok) in [(1, true), (2, false), (3, true), (4, false)] {
            b.record(&cfg, t, ok);
        }
        assert!(b.is_open(5));
        assert!(!b.is_open(504));
    }

    #[test]
    fn attempts_failed_while_open_do_not_keep_the_breaker_open() {
        let cfg = BreakerCfg {
            failure_ratio: 0.5,
            window_ns: 1000,
            min_requests: 2,
            open_for_ns: 500,
        };
        let mut b = Breaker::default();
        b.record(&cfg, 1, false);
        b.record(&cfg, 2, false);
        assert!(b.is_open(3));
        // The attempts it turns away fail at once; they must not extend the open period.
        for t in 3..500 {
            b.record(&cfg, t, false);
        }
        assert!(!b.is_open(502), "the breaker closes after open_for");
    }
}
