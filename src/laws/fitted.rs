//! A service law fitted to measurements (`law = "percentiles"` or `"histogram"`): an
//! empirical body with a parametric tail beyond the last measured point, so that nothing
//! is silently cut off.
//!
//! The law is one quantile function, precomputed at validation: a draw is one uniform
//! number, a binary search over the body's knots (as [`Simple::Histogram`] does) or one
//! logarithm in the tail table, and a linear interpolation.
//!
//! - **Body**: knots (cumulative share, x) with x linear in the share between them. From
//!   percentiles, the best family's quantile function mapped, piece by piece and linearly in
//!   log space, through the given points (so the law passes through each one and keeps the
//!   family's shape between them; monotone by construction). From a histogram, the buckets
//!   up to the first edge holding at least [`BODY_SHARE`] of the counts, each bucket's mass
//!   spread within it by the best family's shape (uniform where the family gives it none).
//! - **Tail**: the best family (of [`Family`]) conditioned on exceeding the body's last
//!   point, carrying the rest of the mass (for a Prometheus histogram, the `+Inf` bucket's
//!   share with it). Tabulated at survival steps of e^-0.125 relative to the body's
//!   end, down to e^-30, x linear in ln(survival) between entries, and extrapolated beyond.
//!
//! [`Simple::Histogram`]: crate::laws::Simple::Histogram

use super::families::{Family, best_fit};
use crate::engine::number::sig3;
use serde::{Deserialize, Serialize};

/// The share of a histogram's counts its body holds (the first bucket edge reaching it);
/// beyond, the counts are too few to shape the law and the fitted family takes over.
pub const BODY_SHARE: f64 = 0.999;
/// The tail table's step in ln(survival).
const TAIL_STEP: f64 = 0.125;
/// Entries of the tail table: from survival 1 down to e^-30 relative to the body's end.
const TAIL_ENTRIES: usize = 241;
/// Sub-knots per histogram bucket, spreading its mass by the family's shape.
const SUB_KNOTS: usize = 8;
/// Most points a family is fitted to (a fine histogram gives its edges at [`FIT_PROBS`]).
const MAX_FIT_POINTS: usize = 40;
/// The shares at which a fine histogram's edges are fitted.
const FIT_PROBS: [f64; 11] = [
    0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995,
];

/// Slices of [0, 1] in a fitted law's guide table: a power of two, so u x GUIDE is exact
/// and u's slice is found without rounding.
const GUIDE: usize = 256;

/// A fitted law (all x in ns).
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// The body's cumulative shares, from 0, strictly increasing except over empty gaps.
    cum: Vec<f64>,
    /// Where each of [`GUIDE`] equal slices of [0, 1] starts in `cum`: `guide[k]` is the
    /// first share above k / GUIDE, so a draw u in slice k has its segment between
    /// `guide[k]` and `guide[k + 1]` and searches only there.
    guide: Vec<u32>,
    /// The body's x at each share.
    xs: Vec<f64>,
    /// The tail's x at survival e^(-TAIL_STEP j) relative to the body's end; empty when the
    /// body holds all the mass.
    tail: Vec<f64>,
    /// What was fitted, for `brink check` and the provenance.
    pub report: FitReport,
}

/// What brink fitted, in words a user can check against the measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitReport {
    /// The key path of the law, e.g. `pool.db.service`.
    pub at: String,
    /// `percentiles` or `histogram`.
    pub law: String,
    /// The measurements: `file (format, metric, labels), sha256 ...` for a histogram.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The tail family chosen and its parameters.
    pub tail: Family,
    /// The body's end (ms): the tail is the family beyond it.
    pub tail_from_ms: f64,
    /// The share of the mass beyond it.
    pub tail_share: f64,
    /// Buckets (histogram) or points (percentiles) in the body.
    pub body_points: usize,
    /// The fitted law's mean (ms).
    pub mean_ms: f64,
    /// The measured mean (ms), where the measurements give one (Prometheus `_sum`, the
    /// OTLP `sum`, the HdrHistogram's values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_mean_ms: Option<f64>,
    /// Measured and fitted quantiles.
    pub points: Vec<FitPoint>,
}

impl FitReport {
    /// The reports of the fitted laws of `solved` (its parts', for a mixture).
    pub fn of(solved: Option<&super::SolvedLaw>) -> Vec<FitReport> {
        use super::{Simple, SolvedLaw};
        let one = |s: &Simple| match s {
            Simple::Fitted(f) => Some(f.report.clone()),
            _ => None,
        };
        match solved {
            None => Vec::new(),
            Some(SolvedLaw::One(s)) => one(s).into_iter().collect(),
            Some(SolvedLaw::Mixture(parts)) => parts.iter().filter_map(|p| one(&p.1)).collect(),
        }
    }
}

impl Eq for FitReport {}

/// One measured quantile against the fitted law's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitPoint {
    /// `p50`, `p99.9`... for people (three significant figures; two of the tail's share
    /// above p99: `p60.9`, `p99.92`).
    pub at: String,
    /// The measured share below `measured_ms`, from 0 to 1, full precision.
    #[serde(default)]
    pub p: f64,
    /// The measured value (ms); a histogram's is a bucket edge (`at` is its share).
    pub measured_ms: f64,
    /// The fitted law's (ms).
    pub fitted_ms: f64,
    /// fitted / measured - 1.
    pub error: f64,
}

/// The name of a percentile for people: `p50`, `p60.9` (three significant figures), and
/// above p99 the tail's share to two (`p99.9`, `p99.92`, `p99.999`), so a name never
/// rounds to `p100` nor carries a bucket edge's seven digits.
pub fn percentile_name(p: f64) -> String {
    let pct = p * 100.0;
    let tail = 100.0 - pct;
    if pct >= 99.0 && tail > 0.0 {
        let decimals = (1 - tail.log10().floor() as i32).max(0) as usize;
        let s = format!("{pct:.decimals$}");
        let s = if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.')
        } else {
            &s
        };
        format!("p{s}")
    } else {
        format!("p{}", crate::engine::number::sig3(pct))
    }
}

impl Fitted {
    /// The law through measured quantiles: `points` are (probability, x in ns), at least
    /// two, strictly increasing in both (validation checks).
    pub fn from_percentiles(at: &str, points: &[(f64, f64)]) -> Result<Self, String> {
        let fam = best_fit(points)
            .ok_or("no family (lognormal, gamma, Weibull, Pareto) fits these percentiles")?
            .family;
        let (p_last, x_last) = points[points.len() - 1];
        // ln x is linear in the family's ln Q between the points; the first point's
        // residual holds below it.
        let ln_q: Vec<f64> = points.iter().map(|p| fam.quantile(p.0).ln()).collect();
        let map = |u: f64| -> f64 {
            let l = fam.quantile(u).ln();
            let i = points.partition_point(|p| p.0 < u);
            let y = if i == 0 {
                l + points[0].1.ln() - ln_q[0]
            } else if i >= points.len() {
                return x_last;
            } else {
                let (y0, y1) = (points[i - 1].1.ln(), points[i].1.ln());
                let (l0, l1) = (ln_q[i - 1], ln_q[i]);
                if l1 > l0 {
                    y0 + (y1 - y0) * ((l - l0) / (l1 - l0)).clamp(0.0, 1.0)
                } else {
                    y0 + (y1 - y0) * (u - points[i - 1].0) / (points[i].0 - points[i - 1].0)
                }
            };
            y.exp()
        };
        // Shares: a fine even grid, a grid even in ln(1 - u) for the upper body, the points.
        let mut us: Vec<f64> = (1..1024).map(|i| i as f64 / 1024.0).collect();
        let decades = -(1.0 - p_last).log10();
        us.extend((1..(decades * 100.0) as usize).map(|i| 1.0 - 10f64.powf(-(i as f64) / 100.0)));
        us.extend(points.iter().map(|p| p.0));
        us.retain(|&u| u > 0.0 && u <= p_last);
        us.sort_by(f64::total_cmp);
        us.dedup_by(|a, b| (*a - *b).abs() < 1e-12);
        let x0 = match fam {
            Family::Pareto { xm, .. } => xm * (points[0].1.ln() - ln_q[0]).exp(),
            _ => 0.0,
        };
        let mut cum = vec![0.0];
        let mut xs = vec![x0];
        for u in us {
            let x = map(u).max(*xs.last().unwrap_or(&0.0));
            cum.push(u);
            xs.push(x);
        }
        let body_points = points.len();
        let measured = points.to_vec();
        Self::finish(
            at,
            "percentiles",
            None,
            fam,
            cum,
            xs,
            body_points,
            None,
            &measured,
        )
    }

    /// The law of a measured histogram: `bins` are (low, high, count) in ns, ordered and
    /// not overlapping, `low < high`; `overflow` counts beyond the last `high` (a `+Inf`
    /// bucket); `mean` is the measured mean (ns) if known.
    pub fn from_bins(
        at: &str,
        source: String,
        bins: &[(f64, f64, f64)],
        overflow: f64,
        mean: Option<f64>,
    ) -> Result<Self, String> {
        let total: f64 = bins.iter().map(|b| b.2).sum::<f64>() + overflow;
        if total.is_nan() || total <= 0.0 {
            return Err("the histogram holds no counts".into());
        }
        // The CDF at each bucket's high edge.
        let mut acc = 0.0;
        let edges: Vec<(f64, f64)> = bins
            .iter()
            .map(|b| {
                acc += b.2;
                (b.1, acc / total)
            })
            .collect();
        let cut = edges
            .iter()
            .position(|e| e.1 >= BODY_SHARE)
            .unwrap_or(edges.len() - 1);
        // The measured quantiles to report and to fit: at edges strictly inside (0, 1).
        let inner: Vec<(f64, f64)> = edges
            .iter()
            .filter(|e| e.1 > 0.0 && e.1 < 1.0)
            .map(|e| (e.1, e.0))
            .collect();
        let mut fit: Vec<(f64, f64)> = inner
            .iter()
            .copied()
            .filter(|p| (0.01..=0.9995).contains(&p.0))
            .collect();
        if fit.len() < 2 {
            fit = inner.clone();
        }
        if fit.len() > MAX_FIT_POINTS {
            let all = std::mem::take(&mut fit);
            for p in FIT_PROBS {
                if let Some(&e) = all.iter().find(|e| e.0 >= p)
                    && fit.last() != Some(&e)
                {
                    fit.push(e);
                }
            }
        }
        if fit.len() < 2 {
            return Err(
                "a tail needs at least two bucket edges with counts on both sides of each; \
                 this histogram has fewer (are its buckets too coarse, or its counts all in one?)"
                    .into(),
            );
        }
        let fam = best_fit(&fit)
            .ok_or("no family (lognormal, gamma, Weibull, Pareto) fits this histogram")?
            .family;
        let mut cum = vec![0.0];
        let mut xs = vec![bins[0].0];
        let mut before = 0.0;
        for (i, &(lo, hi, n)) in bins.iter().enumerate().take(cut + 1) {
            let last = *xs.last().unwrap_or(&0.0);
            if lo > last {
                cum.push(before);
                xs.push(lo);
            }
            let after = edges[i].1;
            let (f_lo, f_hi) = (fam.cdf(lo), fam.cdf(hi));
            let shaped = n > 0.0 && f_hi - f_lo > 1e-12 * f_hi.max(1e-300);
            for k in 1..=SUB_KNOTS {
                let x = lo + (hi - lo) * k as f64 / SUB_KNOTS as f64;
                let g = if k == SUB_KNOTS {
                    1.0
                } else if shaped {
                    ((fam.cdf(x) - f_lo) / (f_hi - f_lo)).clamp(0.0, 1.0)
                } else {
                    k as f64 / SUB_KNOTS as f64
                };
                cum.push(before + (after - before) * g);
                xs.push(x);
            }
            before = after;
        }
        // The measured facts are the edges' shares: report those nearest above the usual
        // percentiles (within a bucket the counts say nothing).
        let mut measured: Vec<(f64, f64)> = Vec::new();
        for p in [0.5, 0.9, 0.99, 0.999] {
            if let Some(&e) = inner.iter().find(|e| e.0 >= p)
                && measured.last() != Some(&e)
            {
                measured.push(e);
            }
        }
        Self::finish(
            at,
            "histogram",
            Some(source),
            fam,
            cum,
            xs,
            cut + 1,
            mean,
            &measured,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        at: &str,
        law: &str,
        source: Option<String>,
        fam: Family,
        cum: Vec<f64>,
        xs: Vec<f64>,
        body_points: usize,
        measured_mean: Option<f64>,
        measured: &[(f64, f64)],
    ) -> Result<Self, String> {
        let end = *cum.last().unwrap_or(&1.0);
        let x_end = *xs.last().unwrap_or(&0.0);
        let tail = if end < 1.0 {
            tail_table(fam, x_end)
        } else {
            Vec::new()
        };
        let guide = (0..=GUIDE)
            .map(|k| cum.partition_point(|&c| c <= k as f64 / GUIDE as f64) as u32)
            .collect();
        let mut f = Fitted {
            guide,
            cum,
            xs,
            tail,
            report: FitReport {
                at: at.to_string(),
                law: law.to_string(),
                source,
                tail: fam,
                tail_from_ms: x_end / 1e6,
                tail_share: 1.0 - end,
                body_points,
                mean_ms: 0.0,
                measured_mean_ms: measured_mean.map(|m| m / 1e6),
                points: Vec::new(),
            },
        };
        let (m1, m2) = f.moments();
        if !(m1.is_finite() && m2.is_finite() && m1 > 0.0) {
            return Err(format!(
                "the fitted law ({} tail, {}) has no finite positive mean",
                fam.name(),
                fam.describe()
            ));
        }
        f.report.mean_ms = m1 / 1e6;
        f.report.points = measured
            .iter()
            .map(|&(p, x)| {
                let q = f.quantile(p);
                FitPoint {
                    at: percentile_name(p),
                    p,
                    measured_ms: x / 1e6,
                    fitted_ms: q / 1e6,
                    error: q / x - 1.0,
                }
            })
            .collect();
        Ok(f)
    }

    /// The `u`-quantile (ns), for u in [0, 1): the law's one draw is `quantile(uniform)`.
    #[inline]
    pub fn quantile(&self, u: f64) -> f64 {
        let n = self.cum.len();
        let end = self.cum[n - 1];
        if u < end || self.tail.is_empty() {
            let i = self.segment_end(u).clamp(1, n - 1);
            let (c0, c1) = (self.cum[i - 1], self.cum[i]);
            let (x0, x1) = (self.xs[i - 1], self.xs[i]);
            return if c1 > c0 {
                x0 + (x1 - x0) * ((u - c0) / (c1 - c0)).clamp(0.0, 1.0)
            } else {
                x1
            };
        }
        // Survival relative to the body's end, in (0, 1].
        let v = (1.0 - u) / (1.0 - end);
        let t = -v.ln() / TAIL_STEP;
        let last = self.tail.len() - 1;
        let j = (t.max(0.0) as usize).min(last - 1);
        let (x0, x1) = (self.tail[j], self.tail[j + 1]);
        x0 + (x1 - x0) * (t - j as f64)
    }

    /// The first index of `cum` whose share is above `u` (`partition_point`), searching
    /// only u's slice of the guide table when u is in [0, 1): k / GUIDE <= u < (k + 1) /
    /// GUIDE exactly, so the index lies between the slice's two guide entries.
    #[inline]
    fn segment_end(&self, u: f64) -> usize {
        let k = (u * GUIDE as f64) as usize;
        if !(0.0..1.0).contains(&u) || k >= GUIDE {
            return self.cum.partition_point(|&c| c <= u);
        }
        let (lo, hi) = (self.guide[k] as usize, self.guide[k + 1] as usize);
        lo + self.cum[lo..hi].partition_point(|&c| c <= u)
    }

    /// Mean and E(S²) (ns, ns²) of what the law draws, in closed form: uniform within each
    /// body segment, and in the tail x linear in t = -ln(v) / TAIL_STEP with t exponential.
    pub fn moments(&self) -> (f64, f64) {
        let (mut m1, mut m2) = (0.0, 0.0);
        for i in 1..self.cum.len() {
            let w = self.cum[i] - self.cum[i - 1];
            let (a, c) = (self.xs[i - 1], self.xs[i]);
            m1 += w * (a + c) / 2.0;
            m2 += w * (a * a + a * c + c * c) / 3.0;
        }
        if self.tail.len() >= 2 {
            let mass = 1.0 - self.cum[self.cum.len() - 1];
            let d = TAIL_STEP;
            let e = (-d).exp();
            // Over one step s in [0, 1) of t, with weight d e^(-d s): ∫1, ∫s, ∫s².
            let i0 = 1.0 - e;
            let i1 = (1.0 - e - d * e) / d;
            let i2 = -e + 2.0 * i1 / d;
            let (mut t1, mut t2) = (0.0, 0.0);
            let last = self.tail.len() - 1;
            for j in 0..last {
                let w = (-d * j as f64).exp();
                let (a, b) = (self.tail[j], self.tail[j + 1] - self.tail[j]);
                t1 += w * (a * i0 + b * i1);
                t2 += w * (a * a * i0 + 2.0 * a * b * i1 + b * b * i2);
            }
            // Beyond the table: the last step's slope, t - last exponential of rate d.
            let w = (-d * last as f64).exp();
            let (a, b) = (self.tail[last], self.tail[last] - self.tail[last - 1]);
            t1 += w * (a + b / d);
            t2 += w * (a * a + 2.0 * a * b / d + 2.0 * b * b / (d * d));
            m1 += mass * t1;
            m2 += mass * t2;
        }
        (m1, m2)
    }

    /// One-line and per-point lines of what was fitted, for `brink check`.
    pub fn describe(r: &FitReport) -> Vec<String> {
        let mut head = format!("{}: {}", r.at, r.law);
        if let Some(s) = &r.source {
            head.push_str(&format!(" from {s}"));
        }
        head.push_str(&format!(
            "; body of {} {} to {} ms, then a {} tail ({}) carrying {}%; mean {} ms",
            r.body_points,
            if r.law == "histogram" {
                "buckets"
            } else {
                "points"
            },
            sig3(r.tail_from_ms),
            r.tail.name(),
            r.tail.describe(),
            sig3(r.tail_share * 100.0),
            sig3(r.mean_ms)
        ));
        if let Some(m) = r.measured_mean_ms {
            head.push_str(&format!(
                " (measured {} ms, {:+.2}%)",
                sig3(m),
                (r.mean_ms / m - 1.0) * 100.0
            ));
        }
        let points = r
            .points
            .iter()
            .map(|p| {
                format!(
                    "{} {} ms -> {} ms ({:+.2}%)",
                    p.at,
                    sig3(p.measured_ms),
                    sig3(p.fitted_ms),
                    p.error * 100.0
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        vec![head, format!("  measured -> fitted: {points}")]
    }
}

/// The family's x beyond `from`, at survival e^(-TAIL_STEP j) relative to P(X > from).
fn tail_table(fam: Family, from: f64) -> Vec<f64> {
    let ls0 = fam.ln_surv(from);
    let mut out = Vec::with_capacity(TAIL_ENTRIES);
    out.push(from);
    for j in 1..TAIL_ENTRIES {
        let x = if ls0.is_finite() {
            fam.at_ln_surv(ls0 - TAIL_STEP * j as f64)
        } else {
            f64::NAN
        };
        let prev = out[j - 1];
        // Far beyond where the family has mass (or at a rounding step), keep the table
        // increasing: the family's relative growth from its own end.
        out.push(if x.is_finite() && x > prev {
            x
        } else {
            prev * (1.0 + TAIL_STEP)
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_names_are_for_people() {
        assert_eq!(percentile_name(0.5), "p50");
        assert_eq!(percentile_name(0.609215), "p60.9");
        assert_eq!(percentile_name(0.99), "p99");
        assert_eq!(percentile_name(0.999), "p99.9");
        assert_eq!(percentile_name(0.9992), "p99.92");
        assert_eq!(percentile_name(0.99999), "p99.999");
        assert_eq!(percentile_name(0.0012345), "p0.123");
    }

    #[test]
    fn the_guide_table_finds_the_segment_a_full_search_finds() {
        // A percentiles fit (hundreds of shares) and a histogram with an empty bin (a
        // repeated share): every share, every slice edge and their neighbours, draws, and
        // what lies outside [0, 1).
        let points = [(0.5, 4e6), (0.9, 9e6), (0.99, 30e6), (0.999, 80e6)];
        let bins = [
            (0.0, 1e6, 5.0),
            (1e6, 2e6, 0.0),
            (2e6, 4e6, 30.0),
            (4e6, 8e6, 65.0),
        ];
        let laws = [
            Fitted::from_percentiles("x", &points).unwrap(),
            Fitted::from_bins("y", "test".into(), &bins, 0.0, None).unwrap(),
        ];
        let mut rng = crate::engine::stream_rng(1, 0, "guide");
        for f in &laws {
            let mut us: Vec<f64> = f.cum.clone();
            us.extend((0..=GUIDE).map(|k| k as f64 / GUIDE as f64));
            us.extend((0..100_000).map(|_| rand::RngExt::random::<f64>(&mut rng)));
            us.extend([-1.0, -0.0, 1.0, 2.0, f64::NAN, f64::INFINITY]);
            let near: Vec<f64> = us
                .iter()
                .flat_map(|u| [u.next_down(), u.next_up()])
                .collect();
            us.extend(near);
            for u in us {
                let full = f.cum.partition_point(|&c| c <= u);
                assert_eq!(f.segment_end(u), full, "u = {u:e}");
            }
        }
    }

    #[test]
    fn percentiles_pass_through_their_points_and_keep_a_tail() {
        let points = [(0.5, 4e6), (0.9, 9e6), (0.99, 30e6), (0.999, 80e6)];
        let f = Fitted::from_percentiles("pool.db.service", &points).unwrap();
        for &(p, x) in &points {
            assert!((f.quantile(p) / x - 1.0).abs() < 1e-9, "{p}");
        }
        assert!(f.quantile(0.9999) > 80e6 && f.quantile(0.999_999) > f.quantile(0.9999));
        assert!((f.report.tail_share - 0.001).abs() < 1e-12);
    }

    #[test]
    fn the_closed_form_moments_are_those_drawn() {
        // A midpoint sum of the quantile function over 1e6 even shares, deep tail included.
        let points = [(0.5, 4e6), (0.9, 9e6), (0.99, 30e6)];
        let f = Fitted::from_percentiles("x", &points).unwrap();
        let n = 1_000_000;
        let mean: f64 = (0..n)
            .map(|i| f.quantile((i as f64 + 0.5) / n as f64))
            .sum::<f64>()
            / n as f64;
        let (m1, _) = f.moments();
        assert!((mean / m1 - 1.0).abs() < 2e-3, "{mean} vs {m1}");
    }
}
