//! One value (or cell of a phase map) of a sweep, over its seeds: how it behaves (its
//! [`Region`]), each branch's spread, the collapse probability with its Wilson interval,
//! spontaneous collapse and recovery; derived from the runs there alone.

use crate::stats::binomial::wilson;
use crate::stats::plan::{Branch, Plan, Run};
use serde::Serialize;

/// How a value behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Region {
    /// Healthy with and without the trigger.
    Stable,
    /// Healthy without the trigger, still failed after it (with `recover_within`: most
    /// triggered runs did not recover by the end of the run).
    Metastable,
    /// With `recover_within`: healthy without the trigger; most triggered runs did not
    /// recover within it, but most of those recovered later, before the end of the run.
    #[serde(rename = "slow_recovery")]
    SlowRecovery,
    /// Without any trigger, healthy for a while (at least `settle`), then stuck: a
    /// random fluctuation tipped it (most failed baseline runs went that way).
    Spontaneous,
    /// Failed even without the trigger, from the start: more offered than served.
    Overloaded,
}

impl Region {
    pub fn name(self) -> &'static str {
        match self {
            Region::Stable => "stable",
            Region::Metastable => "metastable",
            Region::SlowRecovery => "slow_recovery",
            Region::Spontaneous => "spontaneous",
            Region::Overloaded => "overloaded",
        }
    }
}

/// The spread of a measure over seeds (none when no seed has one).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub min: Option<f64>,
    pub mean: Option<f64>,
    pub max: Option<f64>,
}

impl Spread {
    fn of(xs: &[Option<f64>]) -> Self {
        let v: Vec<f64> = xs.iter().flatten().copied().collect();
        if v.is_empty() {
            return Spread {
                min: None,
                mean: None,
                max: None,
            };
        }
        Spread {
            min: Some(v.iter().copied().fold(f64::INFINITY, f64::min)),
            mean: Some(v.iter().sum::<f64>() / v.len() as f64),
            max: Some(v.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
        }
    }
}

/// Quantiles of the recovery times of a cell's recovered triggered runs (seconds after the
/// last trigger's end; linear interpolation between order statistics).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Quantiles {
    pub p50: f64,
    pub p90: f64,
}

impl Quantiles {
    /// The quantiles of `xs`, none when it is empty.
    pub fn of(xs: &[f64]) -> Option<Self> {
        let mut v = xs.to_vec();
        v.sort_by(f64::total_cmp);
        let q = |p: f64| {
            let h = (v.len() - 1) as f64 * p;
            let (i, f) = (h.floor() as usize, h.fract());
            v[i] + (v[(i + 1).min(v.len() - 1)] - v[i]) * f
        };
        (!v.is_empty()).then(|| Quantiles {
            p50: q(0.5),
            p90: q(0.9),
        })
    }
}

/// One cell (value, or pair of values) of one variant, over all seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value2: Option<f64>,
    pub baseline: Spread,
    pub triggered: Spread,
    /// Fraction of seeds whose baseline run ended failed.
    pub baseline_failed: f64,
    /// Fraction of seeds whose triggered run ended failed: the collapse probability.
    pub collapse_probability: f64,
    /// Its 95% Wilson score interval over the seeds: with few seeds it is wide (one seed
    /// that collapsed: 0.21 to 1), which is what one seed can say.
    pub collapse_interval: [f64; 2],
    pub state: Region,
    /// Seeds run at this value (an adaptive probe stops once its majorities are settled).
    pub seeds: usize,
    /// Baseline runs that were healthy for at least `settle`, then stuck to their end.
    pub spontaneous_collapses: usize,
    /// Hours the baseline runs spent before they got stuck (whole runs that did not;
    /// runs failed from the start count none).
    pub healthy_hours: f64,
    /// Spontaneous collapses per healthy hour: the rate at which the design tips over by
    /// itself at this value (0 when none was seen; then 3 / `healthy_hours` bounds it at 95%).
    pub spontaneous_per_hour: f64,
    /// With `recover_within` only: the share of triggered runs that recovered by the end of
    /// the run (within `recover_within` or later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovered_share: Option<f64>,
    /// With `recover_within` only: when the recovered triggered runs recovered, seconds
    /// after the last trigger's end (absent when none did).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery_s: Option<Quantiles>,
}

/// One cell from its runs (both branches, every seed run there).
pub(super) fn make_cell(plan: &Plan, runs: &[&Run], two_axes: bool) -> Cell {
    let of = |b: Branch| -> Vec<&Run> { runs.iter().copied().filter(|r| r.branch == b).collect() };
    let (base, trig) = (of(Branch::Baseline), of(Branch::Triggered));
    let measures = |xs: &[&Run]| -> Vec<Option<f64>> { xs.iter().map(|r| r.measure).collect() };
    let share = |xs: &[&Run], f: &dyn Fn(&Run) -> bool| {
        xs.iter().filter(|r| f(r)).count() as f64 / xs.len().max(1) as f64
    };
    let failed = |r: &Run| plan.failed(r.branch, r.measure, r.trace);
    // A failed baseline run collapsed by itself when it was healthy for at least `settle`
    // before it got stuck; otherwise it was overloaded from the start.
    let spontaneous = |r: &Run| {
        failed(r)
            && r.trace
                .is_some_and(|t| t.stuck_s.is_some_and(|s| s > 0.0 && s >= plan.settle_s))
    };
    let recovered = |r: &Run| r.trace.and_then(|t| t.recovered_s);
    let (bf, tf) = (share(&base, &failed), share(&trig, &failed));
    let collapses = base.iter().filter(|r| spontaneous(r)).count();
    let healthy_s: f64 = base
        .iter()
        .filter_map(|r| {
            let t = r.trace?;
            if failed(r) {
                spontaneous(r).then(|| t.stuck_s.unwrap_or(t.ran_s))
            } else {
                Some(t.ran_s)
            }
        })
        .sum();
    let healthy_hours = healthy_s / 3600.0 + 0.0;
    let state = if bf > 0.5 {
        if 2 * collapses > base.iter().filter(|r| failed(r)).count() {
            Region::Spontaneous
        } else {
            Region::Overloaded
        }
    } else if tf > 0.5 {
        // Of the runs that did not recover in time, most recovered later: slow, not stuck.
        let late = trig
            .iter()
            .filter(|r| failed(r) && recovered(r).is_some())
            .count();
        let unrecovered = trig.iter().filter(|r| failed(r)).count();
        if plan.recover_within_s.is_some() && 2 * late > unrecovered {
            Region::SlowRecovery
        } else {
            Region::Metastable
        }
    } else {
        Region::Stable
    };
    Cell {
        value: runs[0].value[0],
        value2: two_axes.then_some(runs[0].value[1]),
        baseline: Spread::of(&measures(&base)),
        triggered: Spread::of(&measures(&trig)),
        baseline_failed: bf,
        collapse_probability: tf,
        collapse_interval: wilson(tf, trig.len()),
        state,
        seeds: trig.len(),
        spontaneous_collapses: collapses,
        healthy_hours,
        spontaneous_per_hour: if healthy_hours > 0.0 {
            collapses as f64 / healthy_hours
        } else {
            0.0
        },
        recovered_share: plan
            .recover_within_s
            .map(|_| share(&trig, &|r| recovered(r).is_some())),
        recovery_s: plan.recover_within_s.and_then(|_| {
            let times: Vec<f64> = trig.iter().filter_map(|r| recovered(r)).collect();
            Quantiles::of(&times)
        }),
    }
}
