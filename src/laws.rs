//! Service-time laws beyond exp, const and lognormal: gamma, Weibull, capped Pareto, a
//! mixture of laws and an empirical law (the user's own measured samples).
//!
//! Parameters are solved once, when the scenario is validated (Weibull's shape from its cv,
//! Pareto's scale from its capped mean), so a draw is one distribution sample: no search and
//! no allocation per job. `ServiceCfg::draw` (in `model/service_time.rs`, above the
//! scenario that validates these laws) is the one draw of any law; exp, const and lognormal
//! keep their own inline arms there, so their draws (and the golden outputs) stay
//! bit for bit the same.

pub mod families;
pub mod fitted;

use crate::engine::Rng;
use fitted::Fitted;
use rand::RngExt;
use rand_distr::{Exp1, Gamma, Pareto, StandardNormal, Weibull};
use std::sync::Arc;

/// Most samples an empirical law may list (bounds memory and validation time).
pub const MAX_SAMPLES: usize = 100_000;
/// Most parts a mixture may have.
pub const MAX_PARTS: usize = 16;
/// How far a mixture's weights may sum from 1 (a typo such as 0.99 + 0.1 is refused).
pub const WEIGHT_SLACK: f64 = 1e-3;
/// Weibull shapes searched for a cv: 0.05 (cv ~ 1.5e5) to 500 (cv ~ 0.0026).
const WEIBULL_K: (f64, f64) = (0.05, 500.0);

/// One law with its parameters solved, in nanoseconds.
#[derive(Debug, Clone, PartialEq)]
pub enum Simple {
    Exp {
        mean: f64,
    },
    Const {
        mean: f64,
    },
    Lognormal {
        mu: f64,
        sigma: f64,
    },
    Gamma {
        d: Gamma<f64>,
        k: f64,
        theta: f64,
    },
    Weibull {
        d: Weibull<f64>,
        k: f64,
        scale: f64,
    },
    /// A Pareto draw cut at `cap`: `min(X, cap)`.
    Pareto {
        d: Pareto<f64>,
        xm: f64,
        a: f64,
        cap: f64,
    },
    /// Draws one of the samples uniformly (a bootstrap of the user's measurements).
    Empirical(Arc<[f64]>),
    /// A measured histogram: a bin by its share of the counts, then uniform within it.
    Histogram(Arc<Bins>),
    /// A law fitted to measured percentiles or a histogram file, with a fitted tail.
    Fitted(Arc<Fitted>),
}

/// A histogram's bins: `edges[i]..edges[i + 1]` holds the share `cum[i] - cum[i - 1]` of
/// the counts (`cum` ends at 1).
#[derive(Debug, Clone, PartialEq)]
pub struct Bins {
    edges: Vec<f64>,
    cum: Vec<f64>,
}

/// A service-time law other than a top-level exp, const or lognormal, its parameters solved
/// at validation. (Named apart from the model's time-series sampler, `model::sampling`.)
#[derive(Debug, Clone, PartialEq)]
pub enum SolvedLaw {
    One(Simple),
    /// Parts with their cumulative weights (the last is 1).
    Mixture(Arc<[(f64, Simple)]>),
}

impl Simple {
    /// Exp of this mean (ns).
    pub fn exp(mean: f64) -> Self {
        Simple::Exp { mean }
    }

    /// Const of this value (ns).
    pub fn constant(mean: f64) -> Self {
        Simple::Const { mean }
    }

    /// Lognormal of this mean (ns) and cv, parameterised as the top-level law is.
    pub fn lognormal(mean: f64, cv: f64) -> Self {
        let s2 = (1.0 + cv * cv).ln();
        Simple::Lognormal {
            mu: mean.ln() - s2 / 2.0,
            sigma: s2.sqrt(),
        }
    }

    /// Gamma of this mean (ns) and cv: shape 1/cv², scale mean·cv².
    pub fn gamma(mean: f64, cv: f64) -> Result<Self, String> {
        let k = 1.0 / (cv * cv);
        let theta = mean * cv * cv;
        let d = Gamma::new(k, theta).map_err(|e| format!("no gamma law for cv {cv}: {e}"))?;
        Ok(Simple::Gamma { d, k, theta })
    }

    /// Weibull of this mean (ns) and cv; the shape is found by bisection on the cv, once.
    pub fn weibull(mean: f64, cv: f64) -> Result<Self, String> {
        let (lo_cv, hi_cv) = (weibull_cv(WEIBULL_K.1), weibull_cv(WEIBULL_K.0));
        if !(lo_cv..=hi_cv).contains(&cv) {
            return Err(format!(
                "a Weibull law's cv must be from {lo_cv:.4} to {hi_cv:.0}, not {cv}"
            ));
        }
        // cv falls as the shape grows: bisect on ln k.
        let (mut lo, mut hi) = (WEIBULL_K.0.ln(), WEIBULL_K.1.ln());
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if weibull_cv(mid.exp()) > cv {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let k = (0.5 * (lo + hi)).exp();
        let scale = mean / ln_gamma(1.0 + 1.0 / k).exp();
        let d = Weibull::new(scale, k).map_err(|e| format!("no Weibull law for cv {cv}: {e}"))?;
        Ok(Simple::Weibull { d, k, scale })
    }

    /// Pareto of shape `a`, cut at `cap`, whose capped mean is `mean` (all ns): the scale
    /// is solved by bisection, once. `mean` must be below `cap`.
    pub fn pareto(mean: f64, a: f64, cap: f64) -> Result<Self, String> {
        if mean >= cap {
            return Err(format!(
                "the mean ({} ms) must be below the cap ({} ms)",
                mean / 1e6,
                cap / 1e6
            ));
        }
        // The capped mean grows with the scale, from 0 (scale 0) to `cap` (scale = cap).
        let (mut lo, mut hi) = (0.0_f64, cap);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if pareto_moments(mid, a, cap).0 < mean {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let xm = 0.5 * (lo + hi);
        if xm <= 0.0 {
            return Err(format!(
                "no Pareto law of shape {a} has mean {mean} ns under a cap of {cap} ns"
            ));
        }
        let d = Pareto::new(xm, a).map_err(|e| format!("no Pareto law of shape {a}: {e}"))?;
        Ok(Simple::Pareto { d, xm, a, cap })
    }

    /// The empirical law of these samples (ns).
    pub fn empirical(samples: Vec<f64>) -> Self {
        Simple::Empirical(samples.into())
    }

    /// The law of a measured histogram: `bins` are (upper edge in ns, count), edges
    /// strictly increasing from above 0; the first bin starts at 0. Counts sum to more
    /// than 0 (validation checks both).
    pub fn histogram(bins: &[(f64, u64)]) -> Self {
        let total: f64 = bins.iter().map(|b| b.1 as f64).sum();
        let mut edges = Vec::with_capacity(bins.len() + 1);
        edges.push(0.0);
        let mut cum = Vec::with_capacity(bins.len());
        let mut acc = 0.0;
        for (i, &(edge, count)) in bins.iter().enumerate() {
            edges.push(edge);
            acc += count as f64;
            cum.push(if i + 1 == bins.len() {
                1.0
            } else {
                acc / total
            });
        }
        Simple::Histogram(Arc::new(Bins { edges, cum }))
    }

    /// Mean and second moment E(S²) (ns, ns²), in closed form.
    pub fn moments(&self) -> (f64, f64) {
        match self {
            Simple::Exp { mean } => (*mean, 2.0 * mean * mean),
            Simple::Const { mean } => (*mean, mean * mean),
            Simple::Lognormal { mu, sigma } => {
                let s2 = sigma * sigma;
                ((mu + s2 / 2.0).exp(), (2.0 * mu + 2.0 * s2).exp())
            }
            Simple::Gamma { k, theta, .. } => (k * theta, k * (k + 1.0) * theta * theta),
            Simple::Weibull { k, scale, .. } => (
                scale * ln_gamma(1.0 + 1.0 / k).exp(),
                scale * scale * ln_gamma(1.0 + 2.0 / k).exp(),
            ),
            Simple::Pareto { xm, a, cap, .. } => pareto_moments(*xm, *a, *cap),
            Simple::Empirical(s) => {
                let n = s.len() as f64;
                (
                    s.iter().sum::<f64>() / n,
                    s.iter().map(|x| x * x).sum::<f64>() / n,
                )
            }
            Simple::Histogram(b) => {
                // Uniform on [a, c]: mean (a + c) / 2, E(S²) = (a² + ac + c²) / 3.
                let (mut m1, mut m2, mut prev) = (0.0, 0.0, 0.0);
                for (i, &cum) in b.cum.iter().enumerate() {
                    let (a, c, w) = (b.edges[i], b.edges[i + 1], cum - prev);
                    m1 += w * (a + c) / 2.0;
                    m2 += w * (a * a + a * c + c * c) / 3.0;
                    prev = cum;
                }
                (m1, m2)
            }
            Simple::Fitted(f) => f.moments(),
        }
    }

    /// One draw (ns).
    #[inline]
    pub fn draw(&self, rng: &mut Rng) -> f64 {
        match self {
            Simple::Exp { mean } => {
                let e: f64 = rng.sample(Exp1);
                e * mean
            }
            Simple::Const { mean } => *mean,
            Simple::Lognormal { mu, sigma } => {
                let z: f64 = rng.sample(StandardNormal);
                (mu + sigma * z).exp()
            }
            Simple::Gamma { d, .. } => rng.sample(d),
            Simple::Weibull { d, .. } => rng.sample(d),
            Simple::Pareto { d, cap, .. } => rng.sample(d).min(*cap),
            Simple::Empirical(s) => s[rng.random_range(0..s.len())],
            Simple::Histogram(b) => {
                let u: f64 = rng.random();
                let i = b.cum.partition_point(|&c| c <= u).min(b.cum.len() - 1);
                let (a, c) = (b.edges[i], b.edges[i + 1]);
                a + (c - a) * rng.random::<f64>()
            }
            Simple::Fitted(f) => f.quantile(rng.random()),
        }
    }
}

impl SolvedLaw {
    /// A mixture of `parts` (weight, law); the weights must sum to 1 within
    /// [`WEIGHT_SLACK`] and are then normalised.
    pub fn mixture(parts: Vec<(f64, Simple)>) -> Self {
        let total: f64 = parts.iter().map(|p| p.0).sum();
        let mut acc = 0.0;
        let n = parts.len();
        let cum: Vec<(f64, Simple)> = parts
            .into_iter()
            .enumerate()
            .map(|(i, (w, s))| {
                acc += w / total;
                (if i + 1 == n { 1.0 } else { acc }, s)
            })
            .collect();
        SolvedLaw::Mixture(cum.into())
    }

    /// Mean and second moment E(S²) (ns, ns²), in closed form.
    pub fn moments(&self) -> (f64, f64) {
        match self {
            SolvedLaw::One(s) => s.moments(),
            SolvedLaw::Mixture(parts) => {
                let mut prev = 0.0;
                let (mut m1, mut m2) = (0.0, 0.0);
                for (cum, s) in parts.iter() {
                    let (a, b) = s.moments();
                    m1 += (cum - prev) * a;
                    m2 += (cum - prev) * b;
                    prev = *cum;
                }
                (m1, m2)
            }
        }
    }

    /// One draw (ns).
    #[inline]
    pub fn draw(&self, rng: &mut Rng) -> f64 {
        match self {
            SolvedLaw::One(s) => s.draw(rng),
            SolvedLaw::Mixture(parts) => {
                let u: f64 = rng.random();
                let part = parts
                    .iter()
                    .find(|(cum, _)| u < *cum)
                    .unwrap_or(&parts[parts.len() - 1]);
                part.1.draw(rng)
            }
        }
    }
}

/// The cv of a Weibull law of shape `k`.
fn weibull_cv(k: f64) -> f64 {
    let g1 = ln_gamma(1.0 + 1.0 / k);
    let g2 = ln_gamma(1.0 + 2.0 / k);
    ((g2 - 2.0 * g1).exp() - 1.0).max(0.0).sqrt()
}

/// Mean and E(X²) of `min(X, cap)` for X Pareto of scale `xm` (<= cap) and shape `a`:
/// E(X) = ∫₀^cap P(X > x) dx and E(X²) = 2 ∫₀^cap x P(X > x) dx, written in r = xm/cap.
fn pareto_moments(xm: f64, a: f64, cap: f64) -> (f64, f64) {
    let r = xm / cap;
    let tail = |p: f64| {
        // ∫ over the tail, divided by xm^p: (1 - r^(a-p)) / (a-p), or ln(1/r) at a = p.
        if (a - p).abs() < 1e-9 {
            -r.ln()
        } else {
            (1.0 - r.powf(a - p)) / (a - p)
        }
    };
    (xm * (1.0 + tail(1.0)), xm * xm * (1.0 + 2.0 * tail(2.0)))
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error ~1e-15).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1-x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    const N: usize = 1_000_000;
    const MEAN: f64 = 10e6;

    /// Sample mean and variance of `draws` draws against the closed form, within 1%; returns
    /// the law's mean and variance. The sample variance's standard error is
    /// √((kurtosis - 1) / draws); the check asserts it is below 1/3 %, so 1% is 3+ standard
    /// errors away (with a fixed seed, never flaky). Light laws need 1e6 draws; heavy tails
    /// (capped Pareto, a rare slow part) need more, named at each call.
    fn check(name: &str, s: &SolvedLaw, draws: usize) -> (f64, f64) {
        let mut rng = Rng::seed_from_u64(11);
        let (m1, m2) = s.moments();
        let var = m2 - m1 * m1;
        let (mut sum, mut sum2, mut sum4) = (0.0, 0.0, 0.0);
        for _ in 0..draws {
            let x = s.draw(&mut rng);
            sum += x;
            sum2 += x * x;
            sum4 += ((x - m1) / var.sqrt()).powi(4);
        }
        let n = draws as f64;
        let (m, v) = (sum / n, sum2 / n - (sum / n) * (sum / n));
        // The variance's relative standard error: √((kurtosis - 1) / N).
        let se = ((sum4 / n - 1.0) / n).sqrt();
        eprintln!("{name}: variance standard error {:.3}%", se * 100.0);
        assert!(
            3.0 * se < 0.01,
            "{name}: {draws} draws are too few for a 1% test"
        );
        let (em, ev) = ((m - m1).abs() / m1, (v - var).abs() / var);
        eprintln!(
            "{name}: mean err {:.4}%, var err {:.4}%",
            em * 100.0,
            ev * 100.0
        );
        assert!(em < 0.01, "{name}: sample mean {m} vs {m1}");
        assert!(ev < 0.01, "{name}: sample variance {v} vs {var}");
        (m1, var)
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        for (x, f) in [(1.0, 1.0), (2.0, 1.0), (5.0, 24.0), (11.0, 3_628_800.0_f64)] {
            assert!((ln_gamma(x) - f.ln()).abs() < 1e-10, "ln Γ({x})");
        }
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-10);
    }

    #[test]
    fn gamma_law_moments() {
        let (m, v) = check(
            "gamma cv 0.5",
            &SolvedLaw::One(Simple::gamma(MEAN, 0.5).unwrap()),
            N,
        );
        assert!((m - MEAN).abs() < 1.0 && (v.sqrt() / m - 0.5).abs() < 1e-9);
        check(
            "gamma cv 2",
            &SolvedLaw::One(Simple::gamma(MEAN, 2.0).unwrap()),
            4 * N,
        );
    }

    #[test]
    fn weibull_law_moments() {
        for cv in [0.3, 1.0, 1.5] {
            let (m, v) = check(
                &format!("weibull cv {cv}"),
                &SolvedLaw::One(Simple::weibull(MEAN, cv).unwrap()),
                4 * N,
            );
            assert!((m - MEAN).abs() / MEAN < 1e-9 && (v.sqrt() / m - cv).abs() < 1e-6);
        }
        assert!(Simple::weibull(MEAN, 1e6).is_err());
    }

    #[test]
    fn pareto_law_capped_moments() {
        // Heavy tails make the sample variance noisy (its standard error grows with the
        // kurtosis, which the cap bounds): these caps keep it near 0.3% at 1e6 draws.
        for (a, cap) in [(1.5, 10.0), (2.0, 20.0), (2.5, 20.0), (3.0, 20.0)] {
            let s = Simple::pareto(MEAN, a, cap * MEAN).unwrap();
            let (m, _) = check(
                &format!("pareto shape {a} cap {cap}x"),
                &SolvedLaw::One(s),
                20 * N,
            );
            assert!((m - MEAN).abs() / MEAN < 1e-9);
        }
        assert!(Simple::pareto(MEAN, 2.0, MEAN).is_err());
    }

    #[test]
    fn pareto_moments_closed_form_at_the_cap_limit() {
        // A far cap leaves the uncapped moments: mean a·xm/(a-1), E[X²] a·xm²/(a-2).
        let (m1, m2) = pareto_moments(1.0, 3.0, 1e12);
        assert!((m1 - 1.5).abs() < 1e-9 && (m2 - 3.0).abs() < 1e-9);
    }

    #[test]
    fn pareto_moments_match_a_numerical_integral() {
        // E[X^p] = ∫₀^cap p x^(p-1) P(X > x) dx, by the midpoint rule on a fine log grid.
        for (xm, a, cap) in [(1.0, 1.5, 10.0), (2.0, 2.0, 50.0), (0.5, 0.8, 5.0)] {
            let (m1, m2) = pareto_moments(xm, a, cap);
            let steps = 200_000;
            let (mut i1, mut i2) = (xm, xm * xm);
            let h = (cap / xm).ln() / steps as f64;
            for i in 0..steps {
                let x = xm * ((i as f64 + 0.5) * h).exp();
                let surv = (xm / x).powf(a);
                i1 += surv * x * h;
                i2 += 2.0 * x * surv * x * h;
            }
            assert!((m1 - i1).abs() / i1 < 1e-6, "mean {m1} vs {i1}");
            assert!((m2 - i2).abs() / i2 < 1e-6, "E[X²] {m2} vs {i2}");
        }
    }

    #[test]
    fn empirical_law_moments_are_the_samples_own() {
        let samples: Vec<f64> = (1..=1000).map(|i| (i as f64).powf(1.5) * 1e3).collect();
        let n = samples.len() as f64;
        let mean = samples.iter().sum::<f64>() / n;
        let (m, _) = check("empirical", &SolvedLaw::One(Simple::empirical(samples)), N);
        assert!((m - mean).abs() / mean < 1e-12);
    }

    #[test]
    fn histogram_law_moments() {
        // A latency histogram as a load balancer exports it: most requests fast, a tail.
        let bins = [(1e6, 120), (2e6, 560), (5e6, 250), (20e6, 60), (100e6, 10)];
        let s = SolvedLaw::One(Simple::histogram(&bins));
        let (m, _) = check("histogram", &s, 20 * N);
        // The mean by hand: each bin's midpoint by its share.
        let mut prev = 0.0;
        let mut mean = 0.0;
        for &(edge, n) in &bins {
            mean += (prev + edge) / 2.0 * n as f64 / 1000.0;
            prev = edge;
        }
        assert!((m - mean).abs() / mean < 1e-12, "{m} vs {mean}");
        // Every draw lies inside the histogram's range, and the first bin gets its share.
        let mut rng = Rng::seed_from_u64(5);
        let first = (0..100_000)
            .map(|_| s.draw(&mut rng))
            .inspect(|&x| assert!((0.0..=100e6).contains(&x)))
            .filter(|&x| x < 1e6)
            .count();
        // Binomial(1e5, 0.12): sd 103, so 1,000 is ten standard deviations.
        assert!((first as i64 - 12_000).abs() < 1_000, "{first}");
    }

    #[test]
    fn mixture_law_moments() {
        // A 1% slow part puts ~10,000 of 1e6 draws there, ±1% by the binomial law, and the
        // variance follows that count: 1e6 draws cannot pin it to 1%. A 10% slow part
        // (±0.3%) can; the 99%/1% case is checked against Pollaczek-Khinchine over a
        // longer run in tests/integration/queueing.rs.
        let s = SolvedLaw::mixture(vec![(0.9, Simple::exp(5e6)), (0.1, Simple::constant(50e6))]);
        let (m, _) = check("mixture 90% exp 5ms, 10% const 50ms", &s, N);
        assert!((m - (0.9 * 5e6 + 0.1 * 50e6)).abs() < 1.0);
        check(
            "mixture gamma+lognormal+pareto",
            &SolvedLaw::mixture(vec![
                (0.5, Simple::gamma(MEAN, 0.5).unwrap()),
                (0.3, Simple::lognormal(MEAN, 0.5)),
                (0.2, Simple::pareto(MEAN, 2.5, 20.0 * MEAN).unwrap()),
            ]),
            20 * N,
        );
    }
}
