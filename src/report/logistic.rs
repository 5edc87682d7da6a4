//! The logistic curve of a sweep's collapse probability against the swept value, fitted
//! by maximum likelihood to every triggered run's outcome: what the tipping picture draws
//! through the probes, and `tipping.json`'s `collapse_fit`.

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
}
