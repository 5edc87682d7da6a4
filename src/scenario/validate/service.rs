//! A pool's service-time law (`service = { law, ... }`): which keys each law takes, and
//! the solved laws beyond exp, const and lognormal (see [`crate::laws`]).

use super::check::{MAX_CV, V, bad, nonzero_dur, positive, up_to};
use crate::laws::fitted::Fitted;
use crate::laws::{MAX_PARTS, MAX_SAMPLES, Simple, SolvedLaw, WEIGHT_SLACK};
use crate::scenario::raw::{Law, PERCENTILES, RawService};
use crate::scenario::spec::ServiceCfg;
use std::sync::{Arc, Mutex, PoisonError};

/// The laws fitted lately, by what each was fitted from. A sweep builds its scenario at
/// every probe, `brink all` at every variant too, and a fit is a pure function of its
/// input that takes about a tenth of a second for a measured histogram (web-api's
/// Postgres: 6,316 buckets): most of a load.
static FITTED: Mutex<Vec<(FitKey, Arc<Fitted>)>> = Mutex::new(Vec::new());

/// How many fitted laws are kept (the oldest goes first).
const FITS_KEPT: usize = 16;

/// What a fit is computed from: the key path (its messages name it), the source, and its
/// numbers' bits.
type FitKey = (String, String, Vec<u64>);

/// The law fitted from `key`: kept, or fitted by `fit` and kept (a failed fit is not).
fn fitted(
    key: FitKey,
    fit: impl FnOnce() -> Result<Fitted, String>,
) -> Result<Arc<Fitted>, String> {
    let kept = || FITTED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, f)) = kept().iter().find(|(k, _)| *k == key) {
        return Ok(f.clone());
    }
    let f = Arc::new(fit()?);
    let mut kept = kept();
    if kept.len() >= FITS_KEPT {
        kept.remove(0);
    }
    kept.push((key, f.clone()));
    Ok(f)
}

/// Validates the service table at `path` (e.g. `pool.db.service`).
pub fn service(path: &str, s: &RawService) -> V<ServiceCfg> {
    if s.weight.is_some() {
        return bad(
            format!("{path}.weight"),
            "only a mixture's parts have a weight",
        );
    }
    match s.law {
        Law::Exp | Law::Const | Law::Lognormal => {
            only(path, s, &["mean", "cv"])?;
            let mean_ns = nonzero_dur(&format!("{path}.mean"), need(path, "mean", s.mean)?)?;
            let cv = classic_cv(path, s)?;
            // A lognormal's mu and sigma are solved once here, not at every draw.
            let solved = (s.law == Law::Lognormal)
                .then(|| SolvedLaw::One(Simple::lognormal(mean_ns as f64, cv)));
            Ok(ServiceCfg {
                law: s.law,
                mean_ns,
                cv,
                solved,
            })
        }
        Law::Mixture => {
            only(path, s, &["parts"])?;
            mixture(path, s)
        }
        Law::Gamma
        | Law::Weibull
        | Law::Pareto
        | Law::Empirical
        | Law::Percentiles
        | Law::Histogram => {
            let law = simple(path, s)?;
            Ok(cfg(s.law, SolvedLaw::One(law)))
        }
    }
}

/// The cv of exp (1), const (0) and lognormal (given, default 1).
fn classic_cv(path: &str, s: &RawService) -> V<f64> {
    let cv_path = format!("{path}.cv");
    match (s.law, s.cv) {
        (Law::Const, Some(_)) => bad(cv_path, "a constant law has no spread; remove `cv`"),
        (Law::Exp, Some(_)) => bad(cv_path, "the exponential law has cv 1; remove `cv`"),
        (Law::Lognormal, Some(cv)) => {
            positive(&cv_path, cv).and_then(|x| up_to(&cv_path, x, MAX_CV))
        }
        (Law::Const, None) => Ok(0.0),
        _ => Ok(1.0),
    }
}

/// The config of a sampled law: its mean and cv from the closed-form moments.
fn cfg(law: Law, solved: SolvedLaw) -> ServiceCfg {
    let (m1, m2) = solved.moments();
    ServiceCfg {
        law,
        mean_ns: m1.round() as u64,
        cv: (m2 - m1 * m1).max(0.0).sqrt() / m1,
        solved: Some(solved),
    }
}

/// A mixture's parts: 2 to [`MAX_PARTS`], each with a weight > 0, weights summing to 1.
fn mixture(path: &str, s: &RawService) -> V<ServiceCfg> {
    let parts_path = format!("{path}.parts");
    let raw = need(path, "parts", s.parts.as_ref())?;
    if !(2..=MAX_PARTS).contains(&raw.len()) {
        return bad(
            parts_path,
            format!("a mixture needs 2 to {MAX_PARTS} parts, not {}", raw.len()),
        );
    }
    let mut parts = Vec::with_capacity(raw.len());
    for (i, p) in raw.iter().enumerate() {
        let pp = format!("{parts_path}.{i}");
        let w = need(&pp, "weight", p.weight)?;
        let w = positive(&format!("{pp}.weight"), w)?;
        if p.law == Law::Mixture {
            return bad(
                format!("{pp}.law"),
                "a mixture's part cannot be a mixture; list its parts in the outer one",
            );
        }
        let law = match p.law {
            Law::Exp | Law::Const | Law::Lognormal => {
                only(&pp, p, &["mean", "cv", "weight"])?;
                let mean = nonzero_dur(&format!("{pp}.mean"), need(&pp, "mean", p.mean)?)? as f64;
                match p.law {
                    Law::Exp => Simple::exp(mean),
                    Law::Const => Simple::constant(mean),
                    _ => Simple::lognormal(mean, classic_cv(&pp, p)?),
                }
            }
            _ => simple(&pp, p)?,
        };
        parts.push((w, law));
    }
    let total: f64 = parts.iter().map(|p| p.0).sum();
    if (total - 1.0).abs() > WEIGHT_SLACK {
        return bad(
            parts_path,
            format!("the parts' weights sum to {total}, not 1"),
        );
    }
    Ok(cfg(Law::Mixture, SolvedLaw::mixture(parts)))
}

/// Gamma, Weibull, Pareto or empirical at `path`.
fn simple(path: &str, s: &RawService) -> V<Simple> {
    let weight: &[&str] = if s.weight.is_some() { &["weight"] } else { &[] };
    let with = |keys: &[&'static str]| [keys, weight].concat();
    let solved = match s.law {
        Law::Gamma | Law::Weibull => {
            only(path, s, &with(&["mean", "cv"]))?;
            let mean = nonzero_dur(&format!("{path}.mean"), need(path, "mean", s.mean)?)? as f64;
            let cv = positive(&format!("{path}.cv"), need(path, "cv", s.cv)?)
                .and_then(|x| up_to(&format!("{path}.cv"), x, MAX_CV))?;
            if s.law == Law::Gamma {
                Simple::gamma(mean, cv)
            } else {
                Simple::weibull(mean, cv)
            }
            .map_err(|e| (format!("{path}.cv"), e))?
        }
        Law::Pareto => {
            only(path, s, &with(&["mean", "shape", "cap"]))?;
            let mean = nonzero_dur(&format!("{path}.mean"), need(path, "mean", s.mean)?)? as f64;
            let shape = positive(&format!("{path}.shape"), need(path, "shape", s.shape)?)?;
            if shape > 100.0 {
                return bad(
                    format!("{path}.shape"),
                    format!("must be at most 100, not {shape}"),
                );
            }
            let cap = need(path, "cap", s.cap)?.0 as f64;
            Simple::pareto(mean, shape, cap).map_err(|e| (format!("{path}.cap"), e))?
        }
        Law::Empirical if s.histogram.is_some() => {
            only(path, s, &with(&["histogram"]))?;
            histogram(
                &format!("{path}.histogram"),
                s.histogram.as_deref().unwrap_or(&[]),
            )?
        }
        Law::Empirical => {
            only(path, s, &with(&["samples"]))?;
            let samples = s.samples.as_ref().ok_or_else(|| {
                (
                    format!("{path}.samples"),
                    "missing required key `samples` (or `histogram`): the empirical law needs \
                     your measurements"
                        .to_string(),
                )
            })?;
            if samples.is_empty() || samples.len() > MAX_SAMPLES {
                return bad(
                    format!("{path}.samples"),
                    format!(
                        "an empirical law needs 1 to {MAX_SAMPLES} samples, not {}",
                        samples.len()
                    ),
                );
            }
            if samples.iter().all(|d| d.0 == 0) {
                return bad(format!("{path}.samples"), "every sample is zero");
            }
            Simple::empirical(samples.iter().map(|d| d.0 as f64).collect())
        }
        Law::Percentiles => {
            only(path, s, &with(&PERCENTILES.map(|p| p.0)))?;
            percentiles(path, s)?
        }
        Law::Histogram => {
            only(
                path,
                s,
                &with(&["file", "format", "metric", "labels", "unit"]),
            )?;
            let m = s.measured.as_ref().ok_or_else(|| {
                (
                    format!("{path}.file"),
                    "missing required key `file` (this law needs it)".to_string(),
                )
            })?;
            let numbers = m.bins.iter().flat_map(|b| [b.0, b.1, b.2]);
            let mean = [m.mean_ns.is_some() as u8 as f64, m.mean_ns.unwrap_or(0.0)];
            let numbers = numbers.chain([m.overflow]).chain(mean);
            let key = (
                path.into(),
                m.source.clone(),
                numbers.map(f64::to_bits).collect(),
            );
            let f = fitted(key, || {
                Fitted::from_bins(path, m.source.clone(), &m.bins, m.overflow, m.mean_ns)
            })
            .map_err(|e| (format!("{path}.file"), format!("{}: {e}", m.source)))?;
            Simple::Fitted(f)
        }
        Law::Exp | Law::Const | Law::Lognormal | Law::Mixture => {
            return bad(format!("{path}.law"), "not a sampled law");
        }
    };
    Ok(solved)
}

/// Measured percentiles at `path`: at least two, each above 0 and above the one before.
fn percentiles(path: &str, s: &RawService) -> V<Simple> {
    let given: Vec<(&str, f64, u64)> = PERCENTILES
        .iter()
        .zip(s.percentiles())
        .filter_map(|(&(k, p), d)| d.map(|d| (k, p, d.0)))
        .collect();
    if given.len() < 2 {
        return bad(
            path.to_string(),
            format!(
                "the percentiles law needs at least two of {}; {} given",
                PERCENTILES.map(|p| format!("`{}`", p.0)).join(", "),
                given.len()
            ),
        );
    }
    let mut prev: Option<(&str, u64)> = None;
    for &(k, _, v) in &given {
        let key = format!("{path}.{k}");
        nonzero_dur(&key, crate::scenario::raw::Dur(v))?;
        if let Some((pk, pv)) = prev.filter(|&(_, pv)| v <= pv) {
            return bad(
                key,
                format!(
                    "{:?} is not above `{pk}` ({:?}): percentiles increase with the percentile",
                    std::time::Duration::from_nanos(v),
                    std::time::Duration::from_nanos(pv)
                ),
            );
        }
        prev = Some((k, v));
    }
    let points: Vec<(f64, f64)> = given.iter().map(|&(_, p, v)| (p, v as f64)).collect();
    let numbers = points.iter().flat_map(|&(p, x)| [p.to_bits(), x.to_bits()]);
    let key = (path.into(), "percentiles".into(), numbers.collect());
    let f = fitted(key, || Fitted::from_percentiles(path, &points))
        .map_err(|e| (format!("{path}.law"), e))?;
    Ok(Simple::Fitted(f))
}

/// A measured histogram at `path`: 1 to [`MAX_SAMPLES`] bins of (upper edge, count), edges
/// strictly increasing and above 0, some count above 0.
fn histogram(path: &str, bins: &[(crate::scenario::raw::Dur, u64)]) -> V<Simple> {
    if bins.is_empty() || bins.len() > MAX_SAMPLES {
        return bad(
            path.to_string(),
            format!(
                "a histogram needs 1 to {MAX_SAMPLES} bins of [upper edge, count], not {}",
                bins.len()
            ),
        );
    }
    let mut prev = 0;
    for (i, (edge, _)) in bins.iter().enumerate() {
        if edge.0 <= prev {
            return bad(
                format!("{path}.{i}"),
                format!(
                    "bin edges must increase from above 0 (each bin runs from the edge before \
                     it, or 0, to its own); {:?} does not",
                    std::time::Duration::from_nanos(edge.0)
                ),
            );
        }
        prev = edge.0;
    }
    let total: u128 = bins.iter().map(|b| b.1 as u128).sum();
    if total == 0 {
        return bad(path.to_string(), "every bin's count is zero");
    }
    let as_ns: Vec<(f64, u64)> = bins.iter().map(|(e, n)| (e.0 as f64, *n)).collect();
    Ok(Simple::histogram(&as_ns))
}

/// `v`, or a problem naming the missing `key` of the law at `path`.
fn need<T>(path: &str, key: &str, v: Option<T>) -> V<T> {
    v.ok_or_else(|| {
        (
            format!("{path}.{key}"),
            format!("missing required key `{key}` (this law needs it)"),
        )
    })
}

/// Refuses any key of `s` the law does not take (only `keys` are allowed).
fn only(path: &str, s: &RawService, keys: &[&str]) -> V<()> {
    let given = [
        ("mean", s.mean.is_some()),
        ("cv", s.cv.is_some()),
        ("shape", s.shape.is_some()),
        ("cap", s.cap.is_some()),
        ("samples", s.samples.is_some()),
        ("histogram", s.histogram.is_some()),
        ("weight", s.weight.is_some()),
        ("parts", s.parts.is_some()),
        ("p50", s.p50.is_some()),
        ("p75", s.p75.is_some()),
        ("p90", s.p90.is_some()),
        ("p95", s.p95.is_some()),
        ("p99", s.p99.is_some()),
        ("p999", s.p999.is_some()),
        ("p9999", s.p9999.is_some()),
        ("file", s.file.is_some()),
        ("format", s.format.is_some()),
        ("metric", s.metric.is_some()),
        ("labels", s.labels.is_some()),
        ("unit", s.unit.is_some()),
    ];
    for (key, set) in given {
        if set && !keys.contains(&key) {
            return bad(
                format!("{path}.{key}"),
                format!(
                    "the {:?} law takes no `{key}` (it takes {})",
                    s.law,
                    keys.iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
                .to_lowercase(),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A law is fitted once per input: the same key gives the same law without fitting
    /// again; another input (here another path) is fitted; a failed fit is not kept.
    #[test]
    fn fits_each_input_once() {
        let points = [(0.5, 1e6), (0.9, 3e6), (0.99, 9e6)];
        let fits = Cell::new(0);
        let fit = |at: &str| {
            fits.set(fits.get() + 1);
            Fitted::from_percentiles(at, &points)
        };
        let key = |at: &str| (at.to_string(), "test".to_string(), vec![1, 2, 3]);
        let a = fitted(key("test.once.a"), || fit("test.once.a")).unwrap();
        let again = fitted(key("test.once.a"), || fit("test.once.a")).unwrap();
        assert!(Arc::ptr_eq(&a, &again));
        assert_eq!(fits.get(), 1);
        fitted(key("test.once.b"), || fit("test.once.b")).unwrap();
        assert_eq!(fits.get(), 2);
        assert!(fitted(key("test.once.c"), || Err("no".into())).is_err());
        fitted(key("test.once.c"), || fit("test.once.c")).unwrap();
        assert_eq!(fits.get(), 3);
    }
}
