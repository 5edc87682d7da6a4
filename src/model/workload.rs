//! Workload: Poisson arrivals at rate(t) = base rate x profile(t) (by thinning against the
//! profile's maximum), and bursts of N clients spread uniformly over a window.

use crate::engine::Rng;
use crate::engine::time::{NS_PER_S, SimTime, ns_from_f64};
use crate::model::hedging::HedgeTracker;
use crate::model::histogram::Histogram;
use crate::model::retry::Breaker;
use crate::model::token_bucket::TokenBucket;
use crate::scenario::{ClassCfg, HedgeCfg, StepCfg};
use rand::RngExt;
use rand_distr::Exp1;

/// Running counts of one class.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClassCounters {
    pub offered: u64,
    pub admitted: u64,
    pub rejected: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub attempts: u64,
    /// Key-level outcomes of keyed queries (pipelines).
    pub keys_ok: u64,
    pub keys_failed: u64,
    /// Retry attempts refused by the rate limit.
    pub throttled: u64,
    /// Second copies sent by hedged queries.
    pub hedges: u64,
}

/// A class's live state: its arrival process, admission, retry budgets and statistics.
#[derive(Clone)]
pub struct ClassState {
    pub rng: Rng,
    pub retry_rng: Rng,
    /// Bumped when the rate changes, so the pending arrival is dropped and redrawn.
    pub epoch: u32,
    /// When the pending arrival comes (`SimTime::MAX`: none); the keys' look-ahead guesses
    /// the next requests' serials from it (`keys::Ahead`).
    pub next_arrival: SimTime,
    rate_max: f64,
    /// Nanoseconds per unit-mean exponential draw: 1e9 / rate_max.
    gap_scale: f64,
    constant: bool,
    pub rate_limit: Option<TokenBucket>,
    pub retry_budget: Option<TokenBucket>,
    pub step_budgets: Vec<Option<TokenBucket>>,
    pub breaker: Breaker,
    /// The breaker's open time at the start of the current time-series window.
    pub breaker_mark: SimTime,
    /// Per step: the latency tracker of a step hedged at a percentile.
    pub hedges: Vec<Option<HedgeTracker>>,
    pub counts: ClassCounters,
    pub window_mark: ClassCounters,
    pub latency: Histogram,
    pub window_latency: Histogram,
    pub latency_sum_ns: u128,
    /// A closed-loop class's users.
    pub users: Option<super::population::Population>,
}

impl ClassState {
    pub fn new(cfg: &ClassCfg, rng: Rng, retry_rng: Rng) -> Self {
        let mut s = Self {
            rng,
            retry_rng,
            epoch: 0,
            next_arrival: SimTime::MAX,
            rate_max: 0.0,
            gap_scale: 0.0,
            constant: true,
            rate_limit: cfg.rate_limit.map(TokenBucket::new),
            retry_budget: cfg.retry.budget.map(TokenBucket::new),
            step_budgets: cfg
                .steps
                .iter()
                .map(|s| s.query.retry.budget.map(TokenBucket::new))
                .collect(),
            breaker: Breaker::default(),
            breaker_mark: 0,
            hedges: cfg.steps.iter().map(tracker).collect(),
            counts: ClassCounters::default(),
            window_mark: ClassCounters::default(),
            latency: Histogram::new(),
            window_latency: Histogram::new(),
            latency_sum_ns: 0,
            users: None,
        };
        s.set_rate(cfg);
        s
    }

    /// Takes a new rate or profile into account.
    pub fn set_rate(&mut self, cfg: &ClassCfg) {
        self.rate_max = cfg.rate_per_s * cfg.profile.max();
        self.gap_scale = if self.rate_max > 0.0 {
            NS_PER_S as f64 / self.rate_max
        } else {
            0.0
        };
        self.constant = cfg.profile.is_constant();
        self.epoch = self.epoch.wrapping_add(1);
    }

    /// Applies an intervention's parameters to admission and budgets.
    pub fn reconfigure(&mut self, now: SimTime, old: &ClassCfg, cfg: &ClassCfg) {
        if old.rate_per_s != cfg.rate_per_s || old.profile != cfg.profile {
            self.set_rate(cfg);
        }
        reconfigure_bucket(&mut self.rate_limit, now, cfg.rate_limit);
        reconfigure_bucket(&mut self.retry_budget, now, cfg.retry.budget);
        for (b, s) in self.step_budgets.iter_mut().zip(&cfg.steps) {
            reconfigure_bucket(b, now, s.query.retry.budget);
        }
        // A step newly hedged at a percentile starts tracking; one no longer so stops.
        for (t, s) in self.hedges.iter_mut().zip(&cfg.steps) {
            match (t.as_ref(), s.hedge) {
                (Some(_), Some(HedgeCfg::Percentile(_))) => {}
                _ => *t = tracker(s),
            }
        }
    }

    /// Time to the next candidate arrival, or `None` when the rate is zero.
    #[inline(always)]
    pub fn next_gap(&mut self) -> Option<SimTime> {
        if self.rate_max <= 0.0 {
            return None;
        }
        let e: f64 = self.rng.sample(Exp1);
        Some(ns_from_f64(e * self.gap_scale))
    }

    /// Whether a candidate arrival at `t` is kept (thinning against the profile maximum).
    #[inline]
    pub fn accept(&mut self, cfg: &ClassCfg, t: SimTime) -> bool {
        if self.constant {
            return true;
        }
        let r = cfg.rate_per_s * cfg.profile.factor(t);
        self.rng.random::<f64>() * self.rate_max < r
    }
}

/// A latency tracker for a step hedged at a percentile.
fn tracker(s: &StepCfg) -> Option<HedgeTracker> {
    match s.hedge {
        Some(HedgeCfg::Percentile(p)) => Some(HedgeTracker::new(p)),
        _ => None,
    }
}

fn reconfigure_bucket(
    b: &mut Option<TokenBucket>,
    now: SimTime,
    cfg: Option<crate::scenario::TokenBucketCfg>,
) {
    match (b.as_mut(), cfg) {
        (Some(bucket), Some(c)) => bucket.reconfigure(now, c),
        (None, Some(c)) => *b = Some(TokenBucket::new(c)),
        (_, None) => *b = None,
    }
}

/// A burst in progress: `remaining` of its clients still to arrive, in time order.
#[derive(Debug, Clone, Copy, Default)]
pub struct BurstState {
    pub remaining: u64,
    /// Position of the last arrival in [0, 1] of the spread.
    pub u: f64,
    pub start: SimTime,
    pub spread: SimTime,
    pub class: u16,
}

impl BurstState {
    /// The time of the next arrival: the next order statistic of `remaining` uniform draws
    /// (exact, O(1) memory: the burst is never materialised).
    pub fn next_time(&mut self, rng: &mut Rng) -> Option<SimTime> {
        if self.remaining == 0 {
            return None;
        }
        let v: f64 = rng.random::<f64>();
        self.u = 1.0 - (1.0 - self.u) * v.powf(1.0 / self.remaining as f64);
        self.remaining -= 1;
        Some(self.start + (self.u * self.spread as f64) as SimTime)
    }
}
