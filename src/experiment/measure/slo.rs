//! The SLO measure, `slo.CLASS`: over SLO windows of `tipping.slo.window`, each window is
//! 1 when the class met its objective over it (the latency quantile of the window's
//! successes, from the rows' counts of slow requests, and the error ratio, both ratios of
//! sums), else 0. The windows are cut from the rows, and the measure settles, as every
//! measure's pieces do ([`super::Gauge`]).

use super::Kind;
use crate::model::histogram::Histogram;
use crate::scenario;
use crate::scenario::sweep::Slo;

/// Where an SLO's counts are in a row (per second, as every rate).
#[derive(Debug, Clone, Copy)]
pub(super) struct SloColumns {
    offered: usize,
    good: usize,
    failed: usize,
    rejected: usize,
    slow: usize,
}

/// The gauge's kind for `slo`, its counts at the columns `col` finds (a class's measure).
pub(super) fn kind(
    slo: &Slo,
    col: impl Fn(&str, scenario::Measure) -> Result<usize, String>,
) -> Result<Kind, String> {
    let c = |m| col(&slo.class, m);
    let cols = SloColumns {
        offered: c(scenario::Measure::Offered)?,
        good: c(scenario::Measure::Goodput)?,
        failed: c(scenario::Measure::Failed)?,
        rejected: c(scenario::Measure::Rejected)?,
        slow: c(scenario::Measure::SlowPerS)?,
    };
    let kind = Kind::Slo {
        cols,
        quantile: slo.quantile,
        errors: slo.errors,
        window: slo.window_ns,
    };
    Ok(kind)
}

/// The value of an SLO window of `cols` (1 when it met the objective, else 0), from `sum`,
/// a column's count over the window.
pub(super) fn value(
    cols: SloColumns,
    quantile: f64,
    errors: f64,
    sum: impl Fn(usize) -> f64,
) -> Option<f64> {
    let count = |i| sum(i).round();
    let (good, failed) = (count(cols.good), count(cols.failed) + count(cols.rejected));
    let met = slo_met(
        (count(cols.offered), good, failed, count(cols.slow)),
        quantile,
        errors,
    );
    Some(if met { 1.0 } else { 0.0 })
}

/// Whether one SLO window met its objective, from its counts: `offered`, the successes
/// `good`, the failed and refused requests `failed`, and the successes slower than the
/// latency bound `slow`. The latency quantile of the window's successes is at most the
/// bound exactly when at most `good - rank` are slower ([`Histogram::count_above`]); the
/// failed and refused share of the requests that ended is at most `errors`. A window in
/// which requests were offered and none ended fails (nothing was answered); one with
/// nothing offered or ended meets it.
fn slo_met(
    (offered, good, failed, slow): (f64, f64, f64, f64),
    quantile: f64,
    errors: f64,
) -> bool {
    let ended = good + failed;
    if ended == 0.0 {
        return offered == 0.0;
    }
    let fast_enough = good == 0.0 || slow <= good - Histogram::rank(quantile, good as u64) as f64;
    fast_enough && failed <= errors * ended
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::measure::Gauge;
    use crate::scenario::sweep::{Health, Measure};
    use crate::scenario::{Column, Measure as M, Owner};

    const S: u64 = 1_000_000_000;

    /// An SLO gauge over 1 s rows of (offered, goodput, failed, rejected, slow) per
    /// second, with SLO windows of `window_rows` rows, over a run of `end_s` seconds.
    fn slo_gauge(quantile: f64, bound_s: f64, errors: f64, window_rows: u64, end_s: u64) -> Gauge {
        let col = |measure: M, name: &str| Column {
            owner: if measure == M::Time {
                Owner::Time
            } else {
                Owner::Class(0)
            },
            measure,
            name: name.into(),
        };
        let cols = [
            col(M::Time, "time_s"),
            col(M::Offered, "r.offered_per_s"),
            col(M::Goodput, "r.goodput_per_s"),
            col(M::Failed, "r.failed_per_s"),
            col(M::Rejected, "r.rejected_per_s"),
            col(M::SlowPerS, "r.slow_per_s"),
        ];
        let slo = crate::scenario::sweep::Slo {
            class: "r".into(),
            quantile,
            bound_ns: (bound_s * 1e9) as u64,
            errors,
            window_ns: window_rows * S,
        };
        Gauge::of(&Measure::Slo(slo), Health::Above(0.5), &cols, 0, end_s * S).unwrap()
    }

    /// 1 s rows from histograms of their successes' latencies (ms) and their failures,
    /// as the sampler writes them: goodput and the count above the bound per second.
    fn slo_rows(rows: &[(&[(u64, u64)], f64)], bound_s: f64) -> (Vec<Vec<f64>>, Histogram) {
        let mut merged = Histogram::new();
        let out = rows
            .iter()
            .enumerate()
            .map(|(k, (latencies, failed))| {
                let mut h = Histogram::new();
                for &(ms, n) in *latencies {
                    (0..n).for_each(|_| h.record(ms * 1_000_000));
                }
                merged.merge(&h);
                let good = h.count() as f64;
                let slow = h.count_above(bound_s * 1e9) as f64;
                vec![k as f64, good + failed, good, *failed, 0.0, slow]
            })
            .collect();
        (out, merged)
    }

    /// One SLO window of two rows, a busy one whose p99 is 10 ms and a quiet one whose
    /// p99 is 500 ms: the window's p99 is that of its requests (the merged histogram),
    /// not the mean of the rows' p99s, either way round.
    #[test]
    fn an_slo_window_takes_its_quantile_over_its_requests_not_a_mean_of_rows() {
        let busy: &[(u64, u64)] = &[(5, 9800), (10, 200)];
        for (quiet, bound_s, merged_meets) in [
            // 50 slow of 10,050: the 9,950th is 10 ms; the rows' mean p99 is 255 ms.
            (&[(500u64, 50u64)][..], 0.2, true),
            // A busy row with 2% at 500 ms and a quiet fast row: mean p99 252.5 ms, under
            // 300 ms, but the window's p99 is 500 ms.
            (&[(5, 100)][..], 0.3, false),
        ] {
            let busy = if merged_meets {
                busy
            } else {
                &[(5, 9800), (500, 200)][..]
            };
            let (rows, merged) = slo_rows(&[(busy, 0.0), (quiet, 0.0)], bound_s);
            let g = slo_gauge(0.99, bound_s, 0.01, 2, 2);
            let p99 = merged.quantile(0.99).unwrap() / 1e9;
            assert_eq!(p99 <= bound_s, merged_meets, "{p99}");
            let row_p99 = |l: &[(u64, u64)]| {
                let (_, h) = slo_rows(&[(l, 0.0)], bound_s);
                h.quantile(0.99).unwrap() / 1e9
            };
            let mean = (row_p99(busy) + row_p99(quiet)) / 2.0;
            assert_ne!(mean <= bound_s, merged_meets, "{mean}");
            let want = if merged_meets { 1.0 } else { 0.0 };
            assert_eq!(g.measure(&rows, 2 * S), Some(want));
        }
    }

    /// The error ratio of an SLO window is its failures over the requests that ended in
    /// it (a ratio of sums); the run's measure is the share of windows that met the SLO,
    /// and a window still open settles nothing.
    #[test]
    fn an_slo_measure_is_the_share_of_windows_that_met_it() {
        let fast: &[(u64, u64)] = &[(1, 995)];
        let few: &[(u64, u64)] = &[(1, 9)];
        // 5 of 1,000 and 1 of 10 failed: per row 0.5% and 10%, over the window 6/1,010.
        let (ok, _) = slo_rows(&[(fast, 5.0), (few, 1.0)], 0.2);
        let g = slo_gauge(0.99, 0.2, 0.01, 2, 8);
        assert_eq!(g.measure(&ok, 2 * S), Some(1.0));
        // 20 of 1,015 failed: 2%, over the bound.
        let (bad, _) = slo_rows(&[(fast, 15.0), (few, 5.0)], 0.2);
        assert_eq!(g.measure(&bad, 2 * S), Some(0.0));
        // Nothing offered meets it; offered and nothing ended does not.
        assert!(slo_met((0.0, 0.0, 0.0, 0.0), 0.99, 0.01));
        assert!(!slo_met((5.0, 0.0, 0.0, 0.0), 0.99, 0.01));
        // Four windows of 2 s: met, failed, met, failed = 0.5, time-weighted.
        let mut run = Vec::new();
        for (k, w) in [&ok, &bad, &ok, &bad].iter().enumerate() {
            run.extend(w.iter().cloned().map(|mut r| {
                r[0] += 2.0 * k as f64;
                r
            }));
        }
        assert_eq!(g.measure(&run, 8 * S), Some(0.5));
        // Healthy above 0.5 over 8 s: two failed windows (4 s) settle it; one failed
        // window and the first row of the next (still open) do not.
        assert!(!g.settled(&run[..5], 5 * S));
        assert!(g.settled(&run[..8], 8 * S));
        let mut failed_first = bad.clone();
        failed_first.extend(bad.iter().cloned().map(|mut r| {
            r[0] += 2.0;
            r
        }));
        assert!(!g.settled(&failed_first[..3], 3 * S));
        assert!(g.settled(&failed_first, 4 * S));
    }
}
