//! The result of a sweep (tipping curve or phase map), derived from the experiment's
//! [`Plan`] and its [`Run`]s: the regions, the tipping and overload points with their
//! intervals, the headroom, spontaneous collapse; and the console tables. Nothing else
//! goes in, so a merged set of shards gives exactly the bytes of one unsharded run.

pub use super::sweep_table::{
    collapse_note, headroom_rows, headroom_table, phase_table, precision_notes, recovery_notes,
    sig3, slo_notes, with_ci,
};
use crate::scenario::Provenance;
pub use crate::stats::logistic::Logistic;
use crate::stats::logistic::{Interval, pinned, scale_floor};
use crate::stats::plan::{Branch, CollapseTime, Plan, Run, threshold_fields};
use cell::make_cell;
pub use cell::{Cell, Quantiles, Region, Spread};

mod cell;
use serde::Serialize;

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
    /// With an SLO measure (`slo.CLASS`): the overload point under its breakpoint-test
    /// name, the load up to which the design meets its objective without a trigger (the
    /// baseline runs' crossing), and its 95% interval (`overload_ci95`). Absent for other
    /// measures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity_at_slo: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity_at_slo_ci95: Option<[f64; 2]>,
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

    /// The headroom as a table cell, for people (3 significant figures): `0.43 (95% CI
    /// 0.36-0.45)`; without an interval `0.43 (bracket 0.36-0.45)` (the bracket the search
    /// closed in on, not a confidence interval), `> 3.67` when nothing in the range tips,
    /// `<= 0.2` when it tips at the bottom, `-` without an operating point.
    pub fn headroom_cell(&self) -> String {
        if self.headroom_ci95.is_some() {
            return with_ci(self.headroom, self.headroom_ci95);
        }
        match (self.headroom, self.headroom_interval) {
            (Some(h), Some([lo, hi])) => {
                let [h, lo, hi] = crate::engine::number::interval(h, lo, hi);
                format!("{h} (bracket {lo}-{hi})")
            }
            _ => match (self.headroom_above, self.headroom_at_most) {
                (Some(a), _) => format!("> {}", sig3(Some(a))),
                (_, Some(b)) => format!("<= {}", sig3(Some(b))),
                _ => sig3(self.headroom),
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
            let slo = plan.is_slo();
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
                capacity_at_slo: overload_point.filter(|_| slo),
                capacity_at_slo_ci95: within(over_ci).map(|w| w.1).filter(|_| slo),
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
                sig3(Some(b - a)),
                sig3(Some(2.0 * tolerance)),
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
mod tests;
