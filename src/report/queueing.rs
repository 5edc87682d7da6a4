//! Queueing theory for the timeline's reference lines: when a scenario is a textbook
//! M/M/c queue (one open class of Poisson arrivals at a constant rate, one query to one
//! pool of one server with `c` workers, exponential service, no limits, retries, timeouts
//! or enabled triggers), the means Erlang C gives for its rate and service.

use crate::scenario::{Law, Scenario};

/// A stable M/M/c queue: arrival rate, service rate per worker, workers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mmc {
    /// Arrivals per second (lambda).
    pub lambda: f64,
    /// Services per second of one worker (mu).
    pub mu: f64,
    /// Workers (c).
    pub c: u32,
}

impl Mmc {
    /// The queue `sc` is, if it is a textbook M/M/c queue with `lambda < c * mu`.
    pub fn of(sc: &Scenario) -> Option<Mmc> {
        let cfg = &sc.config;
        if !sc.interventions.is_empty()
            || cfg.classes.len() != 1
            || cfg.pools.len() != 1
            || !cfg.caches.is_empty()
            || cfg.triggers.iter().any(|t| t.enabled)
        {
            return None;
        }
        let (class, pool) = (&cfg.classes[0], &cfg.pools[0]);
        let plain_class = class.users.is_none()
            && class.profile.points.is_empty()
            && class.rate_limit.is_none()
            && class.timeout_ns == u64::MAX
            && class.retry.max_attempts <= 1
            && class.steps.len() == 1;
        let step = class.steps.first()?;
        let q = &step.query;
        let plain_step = step.cache.is_none()
            && step.hedge.is_none()
            && !step.keyed
            && q.cost == 1.0
            && q.timeout_ns == u64::MAX
            && q.retry.max_attempts <= 1;
        let plain_pool = pool.shards == 1
            && pool.replicas == 0
            && pool.queue_limit == u32::MAX
            && pool.service.law == Law::Exp
            && pool.contention == 0.0
            && pool.error_rate == 0.0
            && !pool.has_calls
            && pool.shed.is_none()
            && pool.autoscale.is_none();
        let m = Mmc {
            lambda: class.rate_per_s,
            mu: 1e9 / pool.service.mean_ns as f64,
            c: pool.workers,
        };
        (plain_class && plain_step && plain_pool && m.rho() < 1.0 && m.lambda > 0.0).then_some(m)
    }

    /// Utilisation lambda / (c mu).
    pub fn rho(&self) -> f64 {
        self.lambda / (self.c as f64 * self.mu)
    }

    /// Erlang C: the probability that an arrival waits. Computed through the Erlang B
    /// recursion, which stays finite for any number of workers.
    pub fn p_wait(&self) -> f64 {
        let a = self.lambda / self.mu;
        let mut b = 1.0;
        for k in 1..=self.c {
            b = a * b / (k as f64 + a * b);
        }
        let rho = self.rho();
        b / (1.0 - rho * (1.0 - b))
    }

    /// Mean number waiting (not in service), Lq = C rho / (1 - rho).
    pub fn mean_queue(&self) -> f64 {
        let rho = self.rho();
        self.p_wait() * rho / (1.0 - rho)
    }

    /// Mean sojourn (wait and service), W = Lq / lambda + 1 / mu (Little's law).
    pub fn mean_sojourn_s(&self) -> f64 {
        self.mean_queue() / self.lambda + 1.0 / self.mu
    }

    /// The probability that a request's sojourn (wait and service) exceeds `t` seconds:
    /// it waits with probability C (Erlang C), an Exp(c mu - lambda) time, then is served
    /// for an Exp(mu) time, so P(T > t) = (1 - C) e^(-mu t) + C P(W + S > t) with
    /// P(W + S > t) = (a e^(-mu t) - mu e^(-a t)) / (a - mu), a = c mu - lambda
    /// ((1 + mu t) e^(-mu t) when a = mu).
    pub fn sojourn_tail(&self, t: f64) -> f64 {
        let (mu, a) = (self.mu, self.c as f64 * self.mu - self.lambda);
        let served = (-mu * t).exp();
        let waited = if ((a - mu) / mu).abs() < 1e-9 {
            (1.0 + mu * t) * served
        } else {
            (a * served - mu * (-a * t).exp()) / (a - mu)
        };
        let c = self.p_wait();
        (1.0 - c) * served + c * waited
    }

    /// The `p` quantile of the sojourn in seconds (`p` = 0.99 for the p99 the timeline
    /// plots), by bisection on [`Mmc::sojourn_tail`] (monotone in `t`) to a relative 1e-9.
    pub fn sojourn_quantile_s(&self, p: f64) -> f64 {
        let target = 1.0 - p.clamp(1e-12, 1.0 - 1e-12);
        let mut hi = 1.0 / self.mu;
        // The tail is at most e^(-min(mu, a) t) (1 + mu t): doubling reaches it in < 200 steps.
        for _ in 0..200 {
            if self.sojourn_tail(hi) <= target {
                break;
            }
            hi *= 2.0;
        }
        let mut lo = 0.0;
        for _ in 0..200 {
            let mid = (lo + hi) / 2.0;
            if self.sojourn_tail(mid) > target {
                lo = mid;
            } else {
                hi = mid;
            }
            if hi - lo <= 1e-9 * hi {
                break;
            }
        }
        (lo + hi) / 2.0
    }

    /// `M/M/1` or `M/M/c` with the number: how the reference lines are labelled.
    pub fn name(&self) -> String {
        if self.c == 1 {
            "M/M/1".into()
        } else {
            format!("M/M/{}", self.c)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// M/M/1 at rho 0.9: Lq = rho^2 / (1 - rho) = 8.1, W = 1 / (mu - lambda) = 10 s.
    #[test]
    fn mm1_means() {
        let m = Mmc {
            lambda: 0.9,
            mu: 1.0,
            c: 1,
        };
        assert!((m.p_wait() - 0.9).abs() < 1e-12);
        assert!((m.mean_queue() - 8.1).abs() < 1e-9);
        assert!((m.mean_sojourn_s() - 10.0).abs() < 1e-9);
    }

    /// M/M/4 at rho 0.8 (the bundled mmc): Erlang C 0.5964, Wq 0.7455 s, W 1.7455 s.
    #[test]
    fn mmc_means() {
        let m = Mmc {
            lambda: 3.2,
            mu: 1.0,
            c: 4,
        };
        assert!((m.p_wait() - 0.596_35).abs() < 1e-4, "{}", m.p_wait());
        assert!((m.mean_sojourn_s() - 1.745_4).abs() < 1e-3);
        // A million workers at rho 0.5: almost nobody waits, and nothing overflows.
        let big = Mmc {
            lambda: 5e5,
            mu: 1.0,
            c: 1_000_000,
        };
        assert!(big.p_wait().is_finite() && big.p_wait() < 1e-6);
    }

    /// M/M/1: the sojourn is Exp(mu - lambda), so its p99 is ln(100) / (mu - lambda)
    /// (46.05 s at rho 0.9, mu 1). M/M/4 at rho 0.8: the quantile's tail is 1% (the
    /// definition) and the p50 lies below the mean (a right-skewed law).
    #[test]
    fn sojourn_quantiles() {
        let m = Mmc {
            lambda: 0.9,
            mu: 1.0,
            c: 1,
        };
        let p99 = m.sojourn_quantile_s(0.99);
        assert!((p99 - 100f64.ln() / 0.1).abs() < 1e-6, "{p99}");
        let m4 = Mmc {
            lambda: 3.2,
            mu: 1.0,
            c: 4,
        };
        let q = m4.sojourn_quantile_s(0.99);
        assert!((m4.sojourn_tail(q) - 0.01).abs() < 1e-9, "{q}");
        assert!(q > 3.0 * m4.mean_sojourn_s(), "{q}");
        assert!(m4.sojourn_quantile_s(0.5) < m4.mean_sojourn_s());
        // a = mu exactly (c mu - lambda = mu): the Erlang form, still a 1% tail.
        let eq = Mmc {
            lambda: 1.0,
            mu: 1.0,
            c: 2,
        };
        assert!((eq.sojourn_tail(eq.sojourn_quantile_s(0.99)) - 0.01).abs() < 1e-9);
    }

    #[test]
    fn only_textbook_scenarios_have_a_theory() {
        let load = |name: &str| {
            let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("scenarios")
                .join(format!("{name}.toml"));
            crate::scenario::Loader::open(&path)
                .unwrap()
                .load(None, &[])
                .unwrap()
        };
        assert_eq!(
            Mmc::of(&load("mm1")),
            Some(Mmc {
                lambda: 0.9,
                mu: 1.0,
                c: 1
            })
        );
        assert_eq!(Mmc::of(&load("mmc")).map(|m| m.c), Some(4));
        assert_eq!(Mmc::of(&load("retry-storm")), None);
    }
}
