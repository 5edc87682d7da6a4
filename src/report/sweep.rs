//! The result of a sweep (tipping curve or phase map), derived from the experiment's
//! [`Plan`] and its [`Run`]s: the regions, the tipping and overload points with their
//! intervals, the headroom, spontaneous collapse; and the console tables. Nothing else
//! goes in, so a merged set of shards gives exactly the bytes of one unsharded run.

pub use super::sweep_table::{
    collapse_note, headroom_rows, headroom_table, phase_table, precision_notes, recovery_notes,
    short, sig3, with_ci,
};
use crate::scenario::Provenance;
use crate::stats::binomial::wilson;
pub use crate::stats::logistic::Logistic;
use crate::stats::logistic::{Interval, pinned, scale_floor};
use crate::stats::plan::{Branch, CollapseTime, Plan, Run, threshold_fields};
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

/// `tipping.json` per variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantTipping {
    pub variant: String,
    pub operating_point: f64,
    /// Where the collapse probability crosses 0.5: interpolated between the highest value
    /// below it that did not tip (majority of seeds) and the lowest that did; the lowest
    /// value of the range when that already tips.
    pub tipping_point: Option<f64>,
    /// The same for the baseline: where most seeds fail without any trigger.
    pub overload_point: Option<f64>,
    /// The bracket of the tipping point: the values either side of the crossing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tipping_interval: Option<[f64; 2]>,
    /// The bracket of the overload point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overload_interval: Option<[f64; 2]>,
    /// The adaptive search's tolerance (absent for a grid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// The logistic curve fitted to every triggered run's collapse (maximum likelihood):
    /// `p(x) = 1 / (1 + exp(-(x - midpoint) / scale))`; absent when no run or every run
    /// collapsed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collapse_fit: Option<Logistic>,
    /// The lowest value at which a baseline run collapsed by itself, if any did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spontaneous_from: Option<f64>,
    /// The mean time to spontaneous collapse at the operating point (scenarios with a
    /// `[collapse]` section), by multilevel splitting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_time_to_collapse: Option<CollapseTime>,
    /// `tipping_point / operating_point`: below 1, the design already runs where a
    /// trigger tips it over.
    pub headroom: Option<f64>,
    /// What the grid knows of the headroom: between the swept value below the tipping
    /// point (which did not tip) and the tipping point, over the operating point.
    pub headroom_interval: Option<[f64; 2]>,
    /// No value in the range tips: the headroom is above this (the top of the range over
    /// the operating point).
    pub headroom_above: Option<f64>,
    /// The lowest value of the range already tips: the headroom is at most this.
    pub headroom_at_most: Option<f64>,
    /// The 95% confidence interval of the tipping point (where the collapse probability
    /// crosses 0.5), from every triggered run of the sweep: the profile likelihood of the
    /// logistic fit. Absent when nothing in the range tips, everything tips, or the
    /// interval reaches past the swept range (`tolerance_note` says which); and for a
    /// phase map. Its coverage is measured by `tests/integration/confidence.rs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tipping_ci95: Option<[f64; 2]>,
    /// The same for the overload point, from every baseline run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overload_ci95: Option<[f64; 2]>,
    /// `tipping_ci95` over the operating point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headroom_ci95: Option<[f64; 2]>,
    /// An adaptive search's verdict on its own precision: true when the tipping point's
    /// interval is at most twice the tolerance wide (the point is known to within the
    /// tolerance either side), false when the seed budget (`seeds` per probe, the focus
    /// probes) ran out first or the range does not pin it down. Absent for a grid, and
    /// when nothing in the range tips.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tolerance_met: Option<bool>,
    /// Why the tolerance was not met, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tolerance_note: Option<String>,
    /// Where the tipping point lies with 95% confidence, from the seeds: above the highest
    /// value below it whose collapse interval lies under 0.5, and at or below the lowest
    /// value whose collapse interval lies over 0.5. `null` ends: no swept value is that
    /// sure (too few seeds, or the range ends first).
    pub tipping_bounds_95: [Option<f64>; 2],
    /// Trigger events the variant switches off itself: it was swept without them (its
    /// triggered branch is a second baseline). Left out when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub swept_without_trigger: Vec<String>,
    pub points: Vec<Cell>,
}

impl VariantTipping {
    /// The lowest headroom the runs support, which a headroom gate (`--require-headroom`)
    /// compares: the low end of `headroom_ci95`, the 95% confidence interval, where there
    /// is one; else the low end of `headroom_interval` when the range brackets the tipping
    /// point; `headroom_above` when nothing in the range tips (the headroom is above it);
    /// 0 when the bottom of the range already tips (`headroom_at_most`: nothing is known
    /// below it); none without an operating point (0: no headroom is defined).
    pub fn headroom_lower_bound(&self) -> Option<f64> {
        if let Some([lo, _]) = self.headroom_ci95 {
            return Some(lo);
        }
        match (
            self.headroom_interval,
            self.headroom_above,
            self.headroom_at_most,
        ) {
            (Some([lo, _]), _, _) => Some(lo),
            (None, Some(above), _) => Some(above),
            (None, None, Some(_)) => Some(0.0),
            (None, None, None) => None,
        }
    }

    /// The headroom as a table cell: `0.43 (0.36-0.43)`, `> 3.67` when nothing in the
    /// range tips, `<= 0.2` when it tips at the bottom, `-` without an operating point.
    pub fn headroom_cell(&self) -> String {
        if self.headroom_ci95.is_some() {
            return with_ci(self.headroom, self.headroom_ci95);
        }
        match (self.headroom, self.headroom_interval) {
            (Some(h), Some([lo, hi])) => {
                format!(
                    "{} ({}-{})",
                    short(Some(h)),
                    short(Some(lo)),
                    short(Some(hi))
                )
            }
            _ => match (self.headroom_above, self.headroom_at_most) {
                (Some(a), _) => format!("> {}", short(Some(a))),
                (_, Some(b)) => format!("<= {}", short(Some(b))),
                _ => short(self.headroom),
            },
        }
    }
}

/// `tipping.json` (a phase map's cells come in the same shape, with `value2`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepReport {
    pub scenario: String,
    pub title: String,
    pub vary: String,
    /// `"s"` when the swept values are durations in seconds.
    pub unit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vary2: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit2: Option<String>,
    /// What axes and tables call the swept parameters (`tipping.label`, `phase.label`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label2: Option<String>,
    pub measure: String,
    pub healthy_above: Option<f64>,
    pub healthy_below: Option<f64>,
    pub trigger: Vec<String>,
    pub seeds: u32,
    /// `[tipping] recover_within` in seconds, when set: a triggered run counts as
    /// collapsed when it has not recovered within it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recover_within_s: Option<f64>,
    /// `adaptive` or `grid`.
    pub method: &'static str,
    pub variants: Vec<VariantTipping>,
    /// What produced the sweep.
    pub produced_by: Provenance,
}

/// Where a 0.5 crossing lies between `lo` (share `p_lo` <= 0.5) and `hi` (share `p_hi` >
/// 0.5): linear interpolation.
fn crossing(lo: f64, p_lo: f64, hi: f64, p_hi: f64) -> f64 {
    lo + (hi - lo) * ((0.5 - p_lo) / (p_hi - p_lo)).clamp(0.0, 1.0)
}

/// The point where `share` first exceeds 0.5 over `points` (sorted by value): the crossing
/// estimate and its bracket (none when the lowest value already exceeds it).
fn first_crossing(
    points: &[Cell],
    share: impl Fn(&Cell) -> f64,
) -> Option<(f64, Option<[f64; 2]>)> {
    let i = points.iter().position(|c| share(c) > 0.5)?;
    Some(match i.checked_sub(1) {
        None => (points[0].value, None),
        Some(j) => {
            let (a, b) = (&points[j], &points[i]);
            (
                crossing(a.value, share(a), b.value, share(b)),
                Some([a.value, b.value]),
            )
        }
    })
}

/// Derives the report from a plan and all of its runs, in (variant, value, seed, branch)
/// order (as [`Plan::locate`] gives a grid's and the adaptive search its own).
pub fn report(plan: &Plan, runs: &[Run]) -> SweepReport {
    let (a0, a1) = (&plan.axes[0], plan.axes.get(1));
    let variants = plan
        .variants
        .iter()
        .enumerate()
        .map(|(v, vp)| {
            let mine: Vec<&Run> = runs.iter().filter(|r| r.variant == v).collect();
            let points: Vec<Cell> = mine
                .chunk_by(|a, b| a.value == b.value)
                .map(|cell| make_cell(plan, cell, a1.is_some()))
                .collect();
            let op = vp.operating_point[0];
            let over = |x: f64| (op != 0.0).then(|| x / op);
            let tipping = first_crossing(&points, |c| c.collapse_probability);
            let overload = first_crossing(&points, |c| c.baseline_failed);
            let tipping_point = tipping.map(|t| t.0);
            let tipping_interval = tipping.and_then(|t| t.1);
            let tips_at_bottom = tipping.is_some_and(|t| t.1.is_none());
            let (first, last) = (
                points.first().map(|c| c.value),
                points.last().map(|c| c.value),
            );
            let outcomes = |b: Branch| -> Vec<(f64, bool)> {
                mine.iter()
                    .filter(|r| r.branch == b)
                    .map(|r| (r.value[0], plan.failed(r.branch, r.measure, r.trace)))
                    .collect()
            };
            let outcomes_t = outcomes(Branch::Triggered);
            let adaptive = plan.method == crate::scenario::sweep::Method::Adaptive;
            let span = last.zip(first).map_or(1.0, |(l, f)| l - f);
            let min_scale = if adaptive {
                scale_floor(vp.tolerance, span)
            } else {
                scale_floor(span / points.len().max(1) as f64, span)
            };
            let ci = |b: Branch| match a1 {
                None => Logistic::midpoint_ci95(&outcomes(b), min_scale),
                Some(_) => Interval::NoCrossing,
            };
            let (tip_ci, over_ci) = (ci(Branch::Triggered), ci(Branch::Baseline));
            let within = |i: Interval| match i {
                Interval::Within { centre, ci } => Some((centre, ci)),
                _ => None,
            };
            // The point estimate is the interval's own (the maximum-likelihood crossing)
            // where there is one; else the bracket's interpolation.
            let tipping_point = within(tip_ci).map(|w| w.0).or(tipping_point);
            let overload_point = within(over_ci).map(|w| w.0).or(overload.map(|o| o.0));
            let tipping_ci95 = within(tip_ci).map(|w| w.1);
            let (tolerance_met, tolerance_note) = precision(
                adaptive,
                vp.tolerance,
                (tip_ci, &outcomes_t),
                tipping.is_some(),
                &points,
                plan,
            );
            VariantTipping {
                variant: vp.name.clone(),
                operating_point: op,
                tipping_point,
                overload_point,
                tipping_interval,
                overload_interval: overload.and_then(|o| o.1),
                tolerance: adaptive.then_some(vp.tolerance),
                collapse_fit: if a1.is_none() {
                    Logistic::fit(&outcomes_t, min_scale)
                } else {
                    None
                },
                mean_time_to_collapse: vp.collapse_time.clone(),
                spontaneous_from: points
                    .iter()
                    .find(|c| c.spontaneous_collapses > 0)
                    .map(|c| c.value),
                headroom: tipping_point.and_then(over),
                tipping_ci95,
                overload_ci95: within(over_ci).map(|w| w.1),
                headroom_ci95: tipping_ci95
                    .and_then(|[a, b]| over(a).zip(over(b)).map(|(a, b)| [a, b])),
                tolerance_met,
                tolerance_note,
                headroom_interval: match tipping_interval {
                    Some([lo, hi]) => over(lo).zip(over(hi)).map(|(a, b)| [a, b]),
                    None => None,
                },
                headroom_above: if tipping.is_none() {
                    last.and_then(over)
                } else {
                    None
                },
                headroom_at_most: if tips_at_bottom {
                    first.and_then(over)
                } else {
                    None
                },
                tipping_bounds_95: {
                    let sure_above = points.iter().find(|c| c.collapse_interval[0] > 0.5);
                    let until = sure_above.map_or(f64::INFINITY, |c| c.value);
                    let sure_below = points
                        .iter()
                        .filter(|c| c.value < until && c.collapse_interval[1] < 0.5)
                        .map(|c| c.value)
                        .next_back();
                    [sure_below, sure_above.map(|c| c.value)]
                },
                swept_without_trigger: vp.untriggered.clone(),
                points,
            }
        })
        .collect();
    let (healthy_above, healthy_below) = threshold_fields(plan.health);
    SweepReport {
        scenario: plan.scenario.clone(),
        title: plan.title.clone(),
        vary: a0.path.clone(),
        unit: a0.unit.clone(),
        vary2: a1.map(|a| a.path.clone()),
        unit2: a1.and_then(|a| a.unit.clone()),
        label: a0.label.clone(),
        label2: a1.and_then(|a| a.label.clone()),
        measure: plan.measure.clone(),
        healthy_above,
        healthy_below,
        trigger: plan.trigger.clone(),
        seeds: plan.seeds,
        recover_within_s: plan.recover_within_s,
        method: plan.method.name(),
        variants,
        produced_by: plan.provenance.clone(),
    }
}

/// An adaptive search's verdict on the tipping point's precision, and why it fell short:
/// the interval at most twice the tolerance wide, else the budget or the range to blame.
/// `None` for a grid, and when nothing in the range tips.
fn precision(
    adaptive: bool,
    tolerance: f64,
    (ci, outcomes): (Interval, &[(f64, bool)]),
    tips: bool,
    points: &[Cell],
    plan: &Plan,
) -> (Option<bool>, Option<String>) {
    if !adaptive || !tips {
        return (None, None);
    }
    let runs: usize = points.iter().map(|c| c.seeds).sum();
    let unit = plan.axes[0]
        .unit
        .as_deref()
        .map_or(String::new(), |u| format!(" {u}"));
    match ci {
        _ if pinned(outcomes, ci, tolerance) => (Some(true), None),
        Interval::Within { ci: [a, b], .. } => (
            Some(false),
            Some(format!(
                "the seed budget ran out first: the 95% interval is {}{unit} wide, the tolerance asks for at most {}{unit} ({runs} triggered runs at {} values); raise tipping.seeds, or accept the interval",
                short(Some(b - a)),
                short(Some(2.0 * tolerance)),
                points.len()
            )),
        ),
        Interval::Open { below } => (
            Some(false),
            Some(format!(
                "the swept range does not pin the tipping point down: its 95% interval reaches {} the range; widen it (tipping.{})",
                if below { "below the bottom of" } else { "above the top of" },
                if below { "from" } else { "to" }
            )),
        ),
        Interval::NoCrossing => (
            Some(false),
            Some("every triggered run collapsed: the range starts above the tipping point; lower tipping.from".into()),
        ),
    }
}

/// One cell from its runs (both branches, every seed run there).
fn make_cell(plan: &Plan, runs: &[&Run], two_axes: bool) -> Cell {
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

impl SweepReport {
    /// What axes and tables call the swept parameter: its label, else its key path.
    pub fn axis_name(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.vary)
    }

    /// The same for the phase map's second parameter.
    pub fn axis2_name(&self) -> &str {
        self.label2
            .as_deref()
            .or(self.vary2.as_deref())
            .unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::plan::tests::plan;
    use crate::stats::plan::{RunPoint, Trace};

    #[test]
    fn regions_and_points_follow_the_majority_of_seeds() {
        let p = plan(3);
        // value 1: all healthy; value 2: triggered fails for 2 of 3; value 3: baseline fails.
        let m = [
            [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
            [1.0, 0.0, 1.0, 0.0, 1.0, 1.0],
            [0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
        ];
        let runs: Vec<RunPoint> = m
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, x)| RunPoint {
                index: i as u64,
                measure: Some(*x),
                trace: None,
            })
            .collect();
        let r = report(&p, &p.locate(&runs));
        let v = &r.variants[0];
        let states: Vec<Region> = v.points.iter().map(|c| c.state).collect();
        assert_eq!(
            states,
            [Region::Stable, Region::Metastable, Region::Overloaded]
        );
        // The collapse probability goes 0 -> 2/3 from 1 to 2, the baseline's failed share
        // 0 -> 2/3 from 2 to 3: each point is the fit's crossing, inside its bracket and
        // its confidence interval (the bracket's interpolation would say 1.75 and 2.75).
        let tip = v.tipping_point.unwrap();
        let [a, b] = v.tipping_ci95.unwrap();
        assert!(
            1.0 < tip && tip < 2.0 && a <= tip && tip <= b,
            "{tip} {a} {b}"
        );
        let over = v.overload_point.unwrap();
        assert!(2.0 < over && over < 3.0, "{over}");
        assert_eq!(v.tipping_interval, Some([1.0, 2.0]));
        assert_eq!(v.overload_interval, Some([2.0, 3.0]));
        assert_eq!(v.headroom, Some(tip / 2.0));
        assert_eq!(v.headroom_ci95, Some([a / 2.0, b / 2.0]));
        // A grid has no tolerance to meet.
        assert_eq!(v.tolerance_met, None);
        assert!((v.points[1].collapse_probability - 2.0 / 3.0).abs() < 1e-12);
        // The grid brackets the tipping point between 1 (did not tip) and 2.
        assert_eq!(v.headroom_interval, Some([0.5, 1.0]));
        assert_eq!((v.headroom_above, v.headroom_at_most), (None, None));
        assert_eq!(
            v.headroom_cell(),
            format!(
                "{} (95% CI {}-{})",
                sig3(Some(tip / 2.0)),
                sig3(Some(a / 2.0)),
                sig3(Some(b / 2.0))
            )
        );
        assert_eq!(v.headroom_lower_bound(), Some(a / 2.0));
        // The fitted curve crosses 0.5 inside the bracket.
        let fit = v.collapse_fit.unwrap();
        assert!(fit.midpoint > 1.0 && fit.midpoint < 2.0, "{fit:?}");
        // Three seeds cannot make 2 of 3 sure: no bound on either side.
        assert_eq!(v.tipping_bounds_95, [None, None]);
    }

    /// A failed baseline run that was healthy for at least `settle` before it got stuck is
    /// a spontaneous collapse; one stuck from the start is overload. The rate is collapses
    /// per healthy hour (healthy runs count whole, overloaded ones not at all).
    #[test]
    fn spontaneous_collapse_is_told_from_overload_by_the_trace() {
        let mut p = plan(3);
        p.settle_s = 600.0;
        let run = |value: f64, seed: u32, ok: bool, stuck: Option<f64>| Run {
            variant: 0,
            value: [value, 0.0],
            seed,
            branch: Branch::Baseline,
            measure: Some(if ok { 1.0 } else { 0.0 }),
            trace: Some(Trace {
                ran_s: 3600.0,
                stuck_s: stuck,
                recovered_s: None,
            }),
        };
        let trig = |r: Run| Run {
            branch: Branch::Triggered,
            ..r
        };
        let mut runs = Vec::new();
        // Value 1: two of three collapse after 30 min healthy; value 2: stuck at once.
        for (seed, ok, stuck) in [
            (0, false, Some(1800.0)),
            (1, false, Some(1800.0)),
            (2, true, None),
        ] {
            let r = run(1.0, seed, ok, stuck);
            runs.extend([r, trig(r)]);
        }
        for seed in 0..3 {
            let r = run(2.0, seed, false, Some(0.0));
            runs.extend([r, trig(r)]);
        }
        let r = report(&p, &runs);
        let v = &r.variants[0];
        let (a, b) = (&v.points[0], &v.points[1]);
        assert_eq!(
            (a.state, b.state),
            (Region::Spontaneous, Region::Overloaded)
        );
        assert_eq!((a.spontaneous_collapses, b.spontaneous_collapses), (2, 0));
        // 0.5 + 0.5 + 1 healthy hours at value 1; none at value 2.
        assert!((a.healthy_hours - 2.0).abs() < 1e-12 && b.healthy_hours == 0.0);
        assert!((a.spontaneous_per_hour - 1.0).abs() < 1e-12);
        assert_eq!(v.spontaneous_from, Some(1.0));
    }

    /// With `recover_within` 60 s, a triggered run failed when it did not recover within
    /// it: most recovering later is `slow_recovery`, most never is `metastable`; each cell
    /// gives the recovered share and the recovery times' quantiles.
    #[test]
    fn slow_recovery_is_told_from_metastable_by_the_recovery_time() {
        let mut p = plan(3);
        p.recover_within_s = Some(60.0);
        let run = |value: f64, seed: u32, branch: Branch, rec: Option<f64>| Run {
            variant: 0,
            value: [value, 0.0],
            seed,
            branch,
            measure: Some(1.0),
            trace: Some(Trace {
                ran_s: 600.0,
                stuck_s: None,
                recovered_s: rec,
            }),
        };
        let mut runs = Vec::new();
        // Value 1: recoveries at 10, 20, 30 s; value 2: at 100, 120 s and never; value 3:
        // at 100 s and never twice.
        for (value, recs) in [
            (1.0, [Some(10.0), Some(20.0), Some(30.0)]),
            (2.0, [Some(100.0), Some(120.0), None]),
            (3.0, [Some(100.0), None, None]),
        ] {
            for (seed, rec) in recs.into_iter().enumerate() {
                runs.push(run(value, seed as u32, Branch::Baseline, None));
                runs.push(run(value, seed as u32, Branch::Triggered, rec));
            }
        }
        let r = report(&p, &runs);
        assert_eq!(r.recover_within_s, Some(60.0));
        let v = &r.variants[0];
        let states: Vec<Region> = v.points.iter().map(|c| c.state).collect();
        assert_eq!(
            states,
            [Region::Stable, Region::SlowRecovery, Region::Metastable]
        );
        assert_eq!(v.points[1].collapse_probability, 1.0);
        assert_eq!(v.points[1].recovered_share, Some(2.0 / 3.0));
        assert_eq!(
            v.points[0].recovery_s,
            Some(Quantiles {
                p50: 20.0,
                p90: 28.0
            })
        );
        assert_eq!(v.points[2].recovery_s.map(|q| q.p50), Some(100.0));
        assert_eq!(Region::SlowRecovery.name(), "slow_recovery");
        assert_eq!(
            serde_json::to_value(Region::SlowRecovery).unwrap(),
            "slow_recovery"
        );
        // Without `recover_within` the same runs are judged by their measure: stable, and
        // no recovery fields.
        p.recover_within_s = None;
        let plain = report(&p, &runs);
        assert!(
            plain.variants[0]
                .points
                .iter()
                .all(|c| c.state == Region::Stable
                    && c.recovered_share.is_none()
                    && c.recovery_s.is_none())
        );
    }

    /// Nothing in the range tips: the headroom is above the top over the operating point;
    /// the lowest value tips: it is at most the bottom over the operating point.
    #[test]
    fn headroom_bounds_when_the_range_does_not_bracket_the_tipping_point() {
        let p = plan(1);
        let runs = |m: [f64; 6]| -> Vec<RunPoint> {
            m.iter()
                .enumerate()
                .map(|(i, x)| RunPoint {
                    index: i as u64,
                    measure: Some(*x),
                    trace: None,
                })
                .collect()
        };
        let never = report(&p, &p.locate(&runs([1.0; 6])));
        let v = &never.variants[0];
        assert_eq!((v.tipping_point, v.headroom_interval), (None, None));
        assert_eq!(v.headroom_above, Some(1.5));
        assert_eq!(v.headroom_cell(), "> 1.5");
        assert_eq!(v.headroom_lower_bound(), Some(1.5));
        let always = report(&p, &p.locate(&runs([1.0, 0.0, 1.0, 0.0, 1.0, 0.0])));
        let v = &always.variants[0];
        assert_eq!(v.tipping_point, Some(1.0));
        assert_eq!((v.headroom_interval, v.headroom_at_most), (None, Some(0.5)));
        assert_eq!(v.headroom_cell(), "<= 0.5");
        assert_eq!(v.headroom_lower_bound(), Some(0.0));
    }
}
