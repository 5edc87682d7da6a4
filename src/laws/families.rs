//! The parametric families a measured law's tail is fitted from (lognormal, gamma, Weibull,
//! Pareto): their survival functions and quantiles, and a least-squares fit of each to
//! measured quantiles (on log quantiles), the best of which is chosen.
//!
//! Everything here runs once, when a scenario is validated: quantiles of the gamma law are
//! found by bisection, which no draw ever does (see [`crate::laws::fitted`]).

use super::ln_gamma;
use crate::engine::number::sig3;
use serde::{Deserialize, Serialize};

/// A family with its parameters, in nanoseconds where they are scales.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "lowercase")]
pub enum Family {
    /// ln X normal of mean `mu` (ln ns) and deviation `sigma`.
    Lognormal { mu: f64, sigma: f64 },
    /// Shape `k`, scale `theta` (ns).
    Gamma { k: f64, theta: f64 },
    /// Shape `k`, scale `scale` (ns).
    Weibull { k: f64, scale: f64 },
    /// Pareto (type I): minimum `xm` (ns), tail index `a` (> 1: a finite mean).
    Pareto { xm: f64, a: f64 },
}

/// Gamma shapes searched by a fit (cv 10 down to cv 0.01).
const GAMMA_K: (f64, f64) = (0.01, 1e4);

impl Family {
    /// The family's name as the file and the reports spell it.
    pub fn name(&self) -> &'static str {
        match self {
            Family::Lognormal { .. } => "lognormal",
            Family::Gamma { .. } => "gamma",
            Family::Weibull { .. } => "weibull",
            Family::Pareto { .. } => "pareto",
        }
    }

    /// Its parameters in words, scales in ms: `mu=ln(7.07ms) sigma=0.833`.
    pub fn describe(&self) -> String {
        let ms = |x: f64| format!("{}ms", sig3(x / 1e6));
        match *self {
            Family::Lognormal { mu, sigma } => {
                format!("median={} sigma={}", ms(mu.exp()), sig3(sigma))
            }
            Family::Gamma { k, theta } => format!("shape={} scale={}", sig3(k), ms(theta)),
            Family::Weibull { k, scale } => format!("shape={} scale={}", sig3(k), ms(scale)),
            Family::Pareto { xm, a } => format!("xm={} index={}", ms(xm), sig3(a)),
        }
    }

    /// ln P(X > x).
    pub fn ln_surv(&self, x: f64) -> f64 {
        if x <= 0.0 {
            return 0.0;
        }
        match *self {
            Family::Lognormal { mu, sigma } => {
                ln_erfc((x.ln() - mu) / sigma / std::f64::consts::SQRT_2) - std::f64::consts::LN_2
            }
            Family::Gamma { k, theta } => ln_gamma_q(k, x / theta),
            Family::Weibull { k, scale } => -(x / scale).powf(k),
            Family::Pareto { xm, a } => {
                if x <= xm {
                    0.0
                } else {
                    a * (xm / x).ln()
                }
            }
        }
    }

    /// P(X <= x).
    pub fn cdf(&self, x: f64) -> f64 {
        -self.ln_surv(x).exp_m1()
    }

    /// The x at which ln P(X > x) = `ls` (`ls` <= 0).
    pub fn at_ln_surv(&self, ls: f64) -> f64 {
        match *self {
            Family::Weibull { k, scale } => scale * (-ls).powf(1.0 / k),
            Family::Pareto { xm, a } => xm * (-ls / a).exp(),
            Family::Lognormal { mu, sigma } => {
                // The upper-tail probability itself keeps its precision far out.
                (mu - sigma * inv_normal(ls.exp())).exp()
            }
            Family::Gamma { .. } => self.bisect_ln_surv(ls),
        }
    }

    /// The `u`-quantile.
    pub fn quantile(&self, u: f64) -> f64 {
        self.at_ln_surv((-u).ln_1p())
    }

    /// Bisection on ln x for ln P(X > x) = `ls` (decreasing in x).
    fn bisect_ln_surv(&self, ls: f64) -> f64 {
        let scale = match *self {
            Family::Gamma { k, theta } => k * theta,
            _ => 1.0,
        };
        let (mut lo, mut hi) = (scale.ln() - 1.0, scale.ln() + 1.0);
        while self.ln_surv(lo.exp()) < ls && lo > -700.0 {
            lo -= 2.0;
        }
        while self.ln_surv(hi.exp()) > ls && hi < 700.0 {
            hi += 2.0;
        }
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if self.ln_surv(mid.exp()) > ls {
                lo = mid;
            } else {
                hi = mid;
            }
            if hi - lo < 1e-13 {
                break;
            }
        }
        (0.5 * (lo + hi)).exp()
    }
}

/// A fitted family and its sum of squared errors on ln x at the measured quantiles.
#[derive(Debug, Clone, Copy)]
pub struct FamilyFit {
    pub family: Family,
    pub sse: f64,
}

/// Fits every family to `points` (probability in (0, 1), quantile in ns; at least two,
/// strictly increasing in both) by least squares on ln x, and returns the best: the first
/// of lognormal, gamma, Weibull, Pareto whose error is within 1e-6 of the least (two points
/// fit every family exactly; the order then decides). `None` if no family fits.
pub fn best_fit(points: &[(f64, f64)]) -> Option<FamilyFit> {
    let fits = [
        fit_lognormal(points),
        fit_gamma(points),
        fit_weibull(points),
        fit_pareto(points),
    ];
    let least = fits
        .iter()
        .flatten()
        .map(|f| f.sse)
        .fold(f64::INFINITY, f64::min);
    fits.into_iter().flatten().find(|f| f.sse <= least + 1e-6)
}

/// Least squares of y on x: (intercept, slope, sum of squared residuals).
fn line(xs: &[f64], ys: &[f64]) -> Option<(f64, f64, f64)> {
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    if sxx.is_nan() || sxx <= 0.0 {
        return None;
    }
    let b = sxy / sxx;
    let a = my - b * mx;
    let sse = xs
        .iter()
        .zip(ys)
        .map(|(x, y)| (y - a - b * x).powi(2))
        .sum();
    Some((a, b, sse))
}

/// ln x of the points.
fn ln_xs(points: &[(f64, f64)]) -> Vec<f64> {
    points.iter().map(|p| p.1.ln()).collect()
}

/// ln x = mu + sigma z(p).
fn fit_lognormal(points: &[(f64, f64)]) -> Option<FamilyFit> {
    let z: Vec<f64> = points
        .iter()
        .map(|p| inv_normal(1.0 - p.0))
        .map(|z| -z)
        .collect();
    let (mu, sigma, sse) = line(&z, &ln_xs(points))?;
    (sigma > 0.0).then_some(FamilyFit {
        family: Family::Lognormal { mu, sigma },
        sse,
    })
}

/// ln x = ln scale + (1/k) ln(-ln(1 - p)).
fn fit_weibull(points: &[(f64, f64)]) -> Option<FamilyFit> {
    let w: Vec<f64> = points.iter().map(|p| (-(-p.0).ln_1p()).ln()).collect();
    let (a, b, sse) = line(&w, &ln_xs(points))?;
    (b > 0.0).then_some(FamilyFit {
        family: Family::Weibull {
            k: 1.0 / b,
            scale: a.exp(),
        },
        sse,
    })
}

/// ln x = ln xm + (1/a) (-ln(1 - p)); only a finite mean (a > 1) is a candidate.
fn fit_pareto(points: &[(f64, f64)]) -> Option<FamilyFit> {
    let v: Vec<f64> = points.iter().map(|p| -(-p.0).ln_1p()).collect();
    let (c, b, sse) = line(&v, &ln_xs(points))?;
    (b > 0.0 && 1.0 / b > 1.0).then_some(FamilyFit {
        family: Family::Pareto {
            xm: c.exp(),
            a: 1.0 / b,
        },
        sse,
    })
}

/// For a shape k, ln theta is the mean residual of ln x against the unit-scale quantiles;
/// the shape is searched on ln k: a grid, then golden sections around its best.
fn fit_gamma(points: &[(f64, f64)]) -> Option<FamilyFit> {
    let ys = ln_xs(points);
    let at = |lk: f64| -> (f64, f64) {
        let unit = Family::Gamma {
            k: lk.exp(),
            theta: 1.0,
        };
        let r: Vec<f64> = points
            .iter()
            .zip(&ys)
            .map(|(p, y)| y - unit.quantile(p.0).ln())
            .collect();
        let lt = r.iter().sum::<f64>() / r.len() as f64;
        let sse = r.iter().map(|x| (x - lt).powi(2)).sum();
        (lt, sse)
    };
    let (lo, hi) = (GAMMA_K.0.ln(), GAMMA_K.1.ln());
    let steps = 48;
    let grid = |i: usize| lo + (hi - lo) * i as f64 / steps as f64;
    let best = (0..=steps)
        .min_by(|&a, &b| at(grid(a)).1.total_cmp(&at(grid(b)).1))
        .unwrap_or(0);
    let (mut a, mut b) = (grid(best.saturating_sub(1)), grid((best + 1).min(steps)));
    let g = 0.5 * (5f64.sqrt() - 1.0);
    for _ in 0..60 {
        let (c, d) = (b - g * (b - a), a + g * (b - a));
        if at(c).1 < at(d).1 {
            b = d;
        } else {
            a = c;
        }
    }
    let lk = 0.5 * (a + b);
    let (lt, sse) = at(lk);
    sse.is_finite().then_some(FamilyFit {
        family: Family::Gamma {
            k: lk.exp(),
            theta: lt.exp(),
        },
        sse,
    })
}

/// ln erfc(x), without underflow far out (Numerical Recipes' `erfcc`, relative error below
/// 1.2e-7 everywhere).
fn ln_erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let ln_pos = t.ln() + poly;
    if x >= 0.0 {
        ln_pos
    } else {
        (2.0 - ln_pos.exp()).ln()
    }
}

/// ln Q(k, y), the regularized upper incomplete gamma function (series below k + 1, a
/// continued fraction above it: Numerical Recipes' `gser` and `gcf`).
fn ln_gamma_q(k: f64, y: f64) -> f64 {
    if y <= 0.0 {
        return 0.0;
    }
    let ln_front = -y + k * y.ln() - ln_gamma(k);
    if y < k + 1.0 {
        let (mut ap, mut del) = (k, 1.0 / k);
        let mut sum = del;
        for _ in 0..100_000 {
            ap += 1.0;
            del *= y / ap;
            sum += del;
            if del.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        let p = (ln_front + sum.ln()).exp();
        (-p.min(1.0)).ln_1p()
    } else {
        const TINY: f64 = 1e-300;
        let mut b = y + 1.0 - k;
        let mut c = 1.0 / TINY;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..100_000 {
            let an = -(i as f64) * (i as f64 - k);
            b += 2.0;
            d = an * d + b;
            if d.abs() < TINY {
                d = TINY;
            }
            c = b + an / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-16 {
                break;
            }
        }
        ln_front + h.ln()
    }
}

/// The standard normal's quantile (Acklam's rational approximation, relative error
/// 1.15e-9), for 0 < p < 1.
pub fn inv_normal(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        let q = (-2.0 * q.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail(p)
    } else if p > 1.0 - 0.02425 {
        -tail(1.0 - p)
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One law of each family (and a second gamma and Weibull shape), in nanoseconds.
    const EXAMPLES: [Family; 6] = [
        Family::Lognormal {
            mu: 15.0,
            sigma: 0.8,
        },
        Family::Gamma {
            k: 4.0,
            theta: 2.5e6,
        },
        Family::Weibull { k: 0.7, scale: 1e7 },
        Family::Pareto { xm: 1e6, a: 2.5 },
        Family::Gamma { k: 0.5, theta: 1e6 },
        Family::Weibull { k: 1.5, scale: 1e7 },
    ];

    #[test]
    fn quantiles_invert_the_survival_functions() {
        for f in EXAMPLES {
            for u in [0.01, 0.5, 0.9, 0.99, 0.999_999] {
                let x = f.quantile(u);
                assert!((f.cdf(x) - u).abs() < 1e-6 * u.max(1e-3), "{f:?} at {u}");
            }
        }
    }

    #[test]
    fn gamma_tail_is_the_exponential_at_shape_one() {
        let f = Family::Gamma { k: 1.0, theta: 2.0 };
        for x in [0.1, 1.0, 5.0, 40.0, 500.0] {
            assert!((f.ln_surv(x) + x / 2.0).abs() < 1e-9 * (1.0 + x), "{x}");
        }
    }

    #[test]
    fn each_family_is_recovered_from_its_own_quantiles() {
        let ps = [0.5, 0.9, 0.99, 0.999];
        for f in &EXAMPLES[..4] {
            let points: Vec<(f64, f64)> = ps.iter().map(|&p| (p, f.quantile(p))).collect();
            let best = best_fit(&points).unwrap();
            assert_eq!(best.family.name(), f.name(), "{f:?} -> {best:?}");
            for &(p, x) in &points {
                assert!(
                    (best.family.quantile(p) / x - 1.0).abs() < 1e-4,
                    "{f:?} at {p}"
                );
            }
        }
    }
}
