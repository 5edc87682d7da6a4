//! The logistic curve of a sweep's collapse probability against the swept value, fitted
//! by maximum likelihood to every triggered run's outcome: what the tipping picture draws
//! through the probes, and `tipping.json`'s `collapse_fit`; and the 95% confidence
//! interval of where it crosses one half (the tipping point), by profile likelihood.
//!
//! The interval is `{m : 2 (l^ - max l(m, .)) <= 3.841}` (Wilks: the deviance of one
//! parameter is chi-squared with one degree of freedom), where `l` is the log-likelihood
//! of every run's outcome under the log-logistic `p(x) = 1 / (1 + exp(-(ln x - ln m) /
//! s))` when every swept value is positive (else the logistic in `x`): the curve of
//! dose-response studies, whose ED50 is this crossing. Collapse curves are lopsided in
//! `x` (a retry storm's rises steeply to one half as the slowdown lengthens, then
//! slowly), and a logistic in `x` then puts its midpoint off the crossing, with an
//! interval that misses it; in `ln x` they are close to symmetric.
//! It assumes the runs are independent: an adaptive sweep gives every probe seeds of its
//! own. Its coverage is measured, not assumed: `tests/integration/confidence.rs` runs
//! sweeps that differ only in their seed against a reference crossing.

use serde::Serialize;

/// A logistic curve of the collapse probability against the swept value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Logistic {
    pub midpoint: f64,
    pub scale: f64,
}

impl Logistic {
    /// The probability at `x`.
    pub fn at(&self, x: f64) -> f64 {
        1.0 / (1.0 + (-(x - self.midpoint) / self.scale).exp())
    }

    /// The maximum-likelihood fit to (value, collapsed) outcomes, its scale at least
    /// `min_scale` (when the data separate perfectly the likelihood has no maximum: the
    /// floor keeps the curve as steep as the data can tell, no steeper). `None` when the
    /// outcomes are all alike.
    pub fn fit(outcomes: &[(f64, bool)], min_scale: f64) -> Option<Self> {
        if outcomes.iter().all(|o| o.1) || outcomes.iter().all(|o| !o.1) {
            return None;
        }
        let (lo, hi) = outcomes
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), o| {
                (a.min(o.0), b.max(o.0))
            });
        let span = (hi - lo).max(min_scale);
        let loglik = |l: &Logistic| -> f64 {
            outcomes
                .iter()
                .map(|&(x, c)| {
                    let z = (x - l.midpoint) / l.scale;
                    // log p = -ln(1 + e^-z), log (1-p) = -ln(1 + e^z), written stably.
                    let softplus = |u: f64| u.max(0.0) + (-u.abs()).exp().ln_1p();
                    if c { -softplus(-z) } else { -softplus(z) }
                })
                .sum()
        };
        let mut best: Option<(f64, Logistic)> = None;
        for k in 0..=40 {
            let scale = min_scale * (span / min_scale).powf(k as f64 / 40.0);
            // For a fixed scale the log-likelihood is concave in the midpoint.
            let (mut a, mut b) = (lo - span, hi + span);
            for _ in 0..100 {
                let (m1, m2) = (a + (b - a) / 3.0, b - (b - a) / 3.0);
                let f = |m| loglik(&Logistic { midpoint: m, scale });
                if f(m1) < f(m2) { a = m1 } else { b = m2 }
            }
            let l = Logistic {
                midpoint: (a + b) / 2.0,
                scale,
            };
            let ll = loglik(&l);
            if best.is_none_or(|(v, _)| ll > v) {
                best = Some((ll, l));
            }
        }
        best.map(|b| b.1)
    }
}

/// The floor of the fitted scale: a quarter of `tolerance` (the adaptive search's, or a
/// grid's step), and at least a millionth of the swept `span`. Perfectly separated
/// outcomes have no finite maximum: the floor keeps the curve as steep as the probes can
/// tell, no steeper.
pub fn scale_floor(tolerance: f64, span: f64) -> f64 {
    (tolerance / 4.0).max(span * 1e-6).max(f64::MIN_POSITIVE)
}

/// The 95% point of the chi-squared law with one degree of freedom.
const CHI2_95: f64 = 3.841_458_820_694_124;

/// Outcomes grouped by value: (value, failed, runs), sorted by value.
fn grouped(outcomes: &[(f64, bool)]) -> Vec<(f64, f64, f64)> {
    let mut xs: Vec<(f64, bool)> = outcomes.to_vec();
    xs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut g: Vec<(f64, f64, f64)> = Vec::new();
    for (x, c) in xs {
        match g.last_mut() {
            Some(last) if last.0 == x => {
                last.1 += c as u8 as f64;
                last.2 += 1.0;
            }
            _ => g.push((x, c as u8 as f64, 1.0)),
        }
    }
    g
}

/// The log-likelihood of grouped outcomes under midpoint `m` and steepness `beta` (one
/// over the scale).
fn loglik_grouped(g: &[(f64, f64, f64)], m: f64, beta: f64) -> f64 {
    // log p = -ln(1 + e^-z), log (1-p) = -ln(1 + e^z), written stably.
    let softplus = |u: f64| u.max(0.0) + (-u.abs()).exp().ln_1p();
    g.iter()
        .map(|&(x, k, n)| {
            let z = beta * (x - m);
            -k * softplus(-z) - (n - k) * softplus(z)
        })
        .sum()
}

/// The profile log-likelihood at midpoint `m`: the best over steepness in `[0, beta_max]`
/// (concave in it, so a ternary search finds it).
fn profile(g: &[(f64, f64, f64)], m: f64, beta_max: f64) -> f64 {
    let (mut a, mut b) = (0.0, beta_max);
    for _ in 0..90 {
        let (b1, b2) = (a + (b - a) / 3.0, b - (b - a) / 3.0);
        if loglik_grouped(g, m, b1) < loglik_grouped(g, m, b2) {
            a = b1
        } else {
            b = b2
        }
    }
    loglik_grouped(g, m, (a + b) / 2.0)
}

/// Where a crossing's 95% confidence interval lies, and why there may be none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Interval {
    /// The interval, inside the swept values, and the maximum-likelihood crossing in it.
    Within { centre: f64, ci: [f64; 2] },
    /// Every run alike: no crossing to estimate.
    NoCrossing,
    /// The interval reaches below the lowest value run (`true`) or above the highest
    /// (`false`): the range does not pin the crossing down.
    Open { below: bool },
}

impl Logistic {
    /// The 95% profile-likelihood interval of the midpoint, the scale at least
    /// `min_scale` (the same floor as [`Logistic::fit`]): every midpoint inside the values
    /// run whose profile deviance is at most 3.841.
    pub fn midpoint_ci95(outcomes: &[(f64, bool)], min_scale: f64) -> Interval {
        // In ln x where every value is positive: the scale floor then is relative, at the
        // top of the range (the steepest the floor allows anywhere).
        let log = outcomes.iter().all(|o| o.0 > 0.0);
        let (outcomes, min_scale) = if log {
            let top = outcomes.iter().map(|o| o.0).fold(0.0, f64::max);
            let xs: Vec<(f64, bool)> = outcomes.iter().map(|&(x, c)| (x.ln(), c)).collect();
            (xs, (min_scale / top).max(f64::MIN_POSITIVE))
        } else {
            (outcomes.to_vec(), min_scale)
        };
        let outcomes = &outcomes[..];
        let back = |x: f64| if log { x.exp() } else { x };
        let Some(fit) = Self::fit(outcomes, min_scale) else {
            return Interval::NoCrossing;
        };
        let g = grouped(outcomes);
        let (lo, hi) = (g[0].0, g[g.len() - 1].0);
        let beta_max = 1.0 / min_scale;
        let dev = |m: f64, best: f64| 2.0 * (best - profile(&g, m, beta_max));
        // The best midpoint: the fit's, or the best of a grid over the values and every
        // value run, refined between its neighbours.
        let mut candidates: Vec<f64> = (0..=64)
            .map(|i| lo + (hi - lo) * i as f64 / 64.0)
            .chain(g.iter().map(|v| v.0))
            .chain([fit.midpoint.clamp(lo, hi)])
            .collect();
        candidates.sort_by(f64::total_cmp);
        candidates.dedup();
        let ls: Vec<f64> = candidates
            .iter()
            .map(|&m| profile(&g, m, beta_max))
            .collect();
        let i = (0..ls.len()).fold(0, |b, i| if ls[i] > ls[b] { i } else { b });
        let (mut a, mut b) = (
            candidates[i.saturating_sub(1)],
            candidates[(i + 1).min(candidates.len() - 1)],
        );
        for _ in 0..80 {
            let (m1, m2) = (a + (b - a) / 3.0, b - (b - a) / 3.0);
            if profile(&g, m1, beta_max) < profile(&g, m2, beta_max) {
                a = m1
            } else {
                b = m2
            }
        }
        let centre = (a + b) / 2.0;
        let best = profile(&g, centre, beta_max).max(ls[i]);
        let centre = if ls[i] > profile(&g, centre, beta_max) {
            candidates[i]
        } else {
            centre
        };
        // Walk out from the centre over the grid to the first midpoint outside, then
        // bisect to the boundary; inside to the range's end is an open side.
        let side = |up: bool| -> Option<f64> {
            let outward: Vec<f64> = if up {
                candidates.iter().copied().filter(|&m| m > centre).collect()
            } else {
                candidates
                    .iter()
                    .rev()
                    .copied()
                    .filter(|&m| m < centre)
                    .collect()
            };
            let mut inside = centre;
            for m in outward {
                if dev(m, best) > CHI2_95 {
                    let mut out = m;
                    for _ in 0..60 {
                        let mid = (inside + out) / 2.0;
                        if dev(mid, best) > CHI2_95 {
                            out = mid
                        } else {
                            inside = mid
                        }
                    }
                    return Some((inside + out) / 2.0);
                }
                inside = m;
            }
            None
        };
        match (side(false), side(true)) {
            (Some(l), Some(h)) => Interval::Within {
                centre: back(centre),
                ci: [back(l), back(h)],
            },
            (None, _) => Interval::Open { below: true },
            (_, None) => Interval::Open { below: false },
        }
    }
}

/// The highest healthy value and the lowest failed one.
fn edges(outcomes: &[(f64, bool)]) -> (f64, f64) {
    outcomes
        .iter()
        .fold((f64::NEG_INFINITY, f64::INFINITY), |(h, f), &(x, c)| {
            if c { (h, f.min(x)) } else { (h.max(x), f) }
        })
}

/// True when outcomes separate perfectly: every run below some value healthy, every
/// run from it on failed (no seed disagrees anywhere). Then the crossing lies in the
/// bracket of the two, and more runs cannot narrow the interval below it.
pub fn separated(outcomes: &[(f64, bool)]) -> bool {
    let (healthy, failed) = edges(outcomes);
    healthy < failed
}

/// Whether a crossing is pinned to `tolerance`: its interval at most twice the tolerance
/// wide (known to within the tolerance either side), or, for outcomes that separate
/// perfectly, its bracket at most the tolerance wide. The one rule of the adaptive
/// search's focus step and of `tolerance_met`.
pub fn pinned(outcomes: &[(f64, bool)], ci: Interval, tolerance: f64) -> bool {
    let (healthy, failed) = edges(outcomes);
    match ci {
        Interval::Within { ci: [a, b], .. } => {
            b - a <= 2.0 * tolerance
                || healthy < failed && failed - healthy <= tolerance * (1.0 + 1e-9)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The logistic fit recovers a known curve from many outcomes (law: maximum likelihood
    /// is consistent; 20 outcomes at each of 41 values of p(x) = 1/(1+e^-(x-5)) drawn
    /// deterministically by a low-discrepancy rule, midpoint within 0.15 and scale within
    /// 20%), and keeps its scale at the floor when the outcomes separate perfectly.
    #[test]
    fn the_logistic_fit_finds_the_crossing() {
        let truth = Logistic {
            midpoint: 5.0,
            scale: 1.0,
        };
        let mut outcomes = Vec::new();
        for i in 0..=40 {
            let x = i as f64 * 0.25;
            for k in 0..20 {
                let u = (k as f64 + 0.5) / 20.0;
                outcomes.push((x, u < truth.at(x)));
            }
        }
        let fit = Logistic::fit(&outcomes, 0.01).unwrap();
        assert!((fit.midpoint - 5.0).abs() < 0.15, "{fit:?}");
        assert!((fit.scale - 1.0).abs() < 0.2, "{fit:?}");
        let sharp: Vec<(f64, bool)> = (0..10).map(|i| (i as f64, i >= 6)).collect();
        let fit = Logistic::fit(&sharp, 0.1).unwrap();
        assert!(fit.midpoint > 5.0 && fit.midpoint < 6.0, "{fit:?}");
        assert!((fit.scale - 0.1).abs() < 1e-9, "{fit:?}");
        assert_eq!(Logistic::fit(&[(1.0, true), (2.0, true)], 0.1), None);
    }

    /// Law (coverage): 400 data sets drawn from a known log-logistic curve (crossing 8,
    /// scale 0.3 in ln x; 6 runs at each of 20 values), the 95% profile interval holds
    /// the crossing in 93% to 97% of them (binomial spread of 400 at 95%: +-2.2%; a fixed
    /// seed, so the count is the same on every run). Sharp data give an interval no
    /// wider than their bracket's neighbourhood, and an open side where the range ends.
    #[test]
    fn the_profile_interval_covers_the_crossing() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let p = |x: f64| 1.0 / (1.0 + (-(x.ln() - 8f64.ln()) / 0.3).exp());
        let mut covered = 0;
        for _ in 0..400 {
            let outcomes: Vec<(f64, bool)> = (1..=20)
                .flat_map(|v| (0..6).map(move |_| v as f64))
                .map(|x| (x, rng.random::<f64>() < p(x)))
                .collect();
            if let Interval::Within { centre, ci: [a, b] } =
                Logistic::midpoint_ci95(&outcomes, 0.01)
            {
                assert!(a <= centre && centre <= b);
                covered += (a <= 8.0 && 8.0 <= b) as u32;
            }
        }
        assert!((372..=388).contains(&covered), "{covered} of 400");
        let sharp: Vec<(f64, bool)> = (1..=20)
            .flat_map(|v| (0..5).map(move |_| (v as f64, v >= 12)))
            .collect();
        let Interval::Within { ci: [a, b], .. } = Logistic::midpoint_ci95(&sharp, 0.05) else {
            panic!("no interval")
        };
        assert!(a >= 10.5 && b <= 12.5 && a < 12.0 && b > 11.0, "[{a}, {b}]");
        assert!(pinned(&sharp, Logistic::midpoint_ci95(&sharp, 0.05), 1.0));
        let bottom: Vec<(f64, bool)> = (1..=5).map(|v| (v as f64, v >= 2)).collect();
        assert_eq!(
            Logistic::midpoint_ci95(&bottom, 0.05),
            Interval::Open { below: true }
        );
        assert_eq!(
            Logistic::midpoint_ci95(&[(1.0, true), (2.0, true)], 0.05),
            Interval::NoCrossing
        );
    }
}
