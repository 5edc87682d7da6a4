//! The arithmetic of multilevel splitting for a mean first-passage time: running tallies
//! and the regenerative formula that turns a direct estimate of short cycles and the
//! level-crossing probabilities of splitting into a mean time to collapse with a 95%
//! confidence interval. No simulation here (that is [`super::collapse_time`]).
//!
//! **The formula.** Let the process start in the healthy set B (level at most `base`).
//! A cycle is the time A from B to the first level l1, then the time X from there until
//! the level either falls back to B or reaches the collapse level K. If B is a
//! regeneration point (an empty system with Poisson arrivals is), cycles are independent
//! and alike, each collapses with the same probability p, and the number N of cycles up
//! to and including the one that collapses is geometric with mean 1/p. N is a stopping
//! time of the cycle sequence, so by Wald's identity
//!
//! ```text
//! E[T] = E[N] · E[A + X] = E[A + X] / p
//! ```
//!
//! (The same as E[cycle | fail] (1 - p)/p + E[cycle | success], without having to tell
//! the two apart.) E[A + X] is estimated from cycles simulated directly; p is the product
//! of the conditional probabilities p_i of reaching level l_{i+1} before B from an
//! entrance into l_i, and fixed-effort splitting estimates each p_i as the fraction of its
//! trajectories that succeed (Garvels 2000; Rubino and Tuffin, "Rare Event Simulation
//! using Monte Carlo Methods", 2009, ch. 3).
//!
//! **The interval.** The relative variance of p̂ is taken as Σ (1 - p_i)/(R p_i), the
//! binomial variance of independent levels, and that of the cycle mean from its sample
//! variance; the two add. The 95% interval is log-normal: estimate · exp(±1.96 σ_rel).
//! Trajectories that start from the same entrance state are correlated, which this
//! ignores: the interval is a guide, narrower than the truth when few entrance states
//! carry a level.

/// A running mean and variance (Welford).
#[derive(Debug, Clone, Copy, Default)]
pub struct Tally {
    /// Samples seen.
    pub n: u64,
    mean: f64,
    m2: f64,
}

impl Tally {
    /// Adds one sample.
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    /// The mean (0 with no samples).
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The variance of the mean (0 with fewer than two samples).
    pub fn var_of_mean(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            self.m2 / (self.n - 1) as f64 / self.n as f64
        }
    }
}

/// One splitting level's outcome: trajectories started from entrances into one level and
/// how many reached the next before the healthy set.
#[derive(Debug, Clone, Copy)]
pub struct LevelOutcome {
    /// Trajectories run.
    pub tried: u64,
    /// Trajectories that reached the next level.
    pub reached: u64,
}

/// The mean first-passage time and its 95% interval, seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Passage {
    /// The estimate of the mean first-passage time.
    pub mean_s: f64,
    /// Low and high ends of the 95% interval.
    pub ci95: [f64; 2],
    /// The estimated probability p that a cycle collapses.
    pub p: f64,
}

/// Combines the tally of directly simulated cycles (seconds) with the levels' outcomes by
/// the formula above. Every level must have at least one success.
pub fn mean_first_passage(cycle: &Tally, levels: &[LevelOutcome]) -> Passage {
    let mut p = 1.0;
    let mut relvar = 0.0;
    for l in levels {
        let pi = l.reached as f64 / l.tried as f64;
        p *= pi;
        relvar += (1.0 - pi) / (l.tried as f64 * pi);
    }
    let mean_s = cycle.mean() / p;
    if cycle.mean() > 0.0 {
        relvar += cycle.var_of_mean() / (cycle.mean() * cycle.mean());
    }
    let z = 1.96 * relvar.sqrt();
    Passage {
        mean_s,
        ci95: [mean_s * (-z).exp(), mean_s * z.exp()],
        p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_mean_and_variance() {
        let mut t = Tally::default();
        for x in [1.0, 2.0, 3.0, 4.0] {
            t.add(x);
        }
        assert_eq!(t.mean(), 2.5);
        // Sample variance 5/3, over n = 4.
        assert!((t.var_of_mean() - 5.0 / 12.0).abs() < 1e-12);
    }

    #[test]
    fn certain_levels_give_the_cycle_time() {
        let mut c = Tally::default();
        c.add(2.0);
        c.add(4.0);
        let levels = [LevelOutcome {
            tried: 10,
            reached: 10,
        }];
        let p = mean_first_passage(&c, &levels);
        assert_eq!(p.mean_s, 3.0);
        assert_eq!(p.p, 1.0);
    }

    #[test]
    fn rare_success_divides_the_cycle_time() {
        let mut c = Tally::default();
        c.add(2.0);
        let half = LevelOutcome {
            tried: 100,
            reached: 50,
        };
        // p = 1/8: on average 8 cycles of 2 s.
        let p = mean_first_passage(&c, &[half, half, half]);
        assert!((p.mean_s - 16.0).abs() < 1e-9);
        assert!(p.ci95[0] < 16.0 && p.ci95[1] > 16.0);
    }
}
