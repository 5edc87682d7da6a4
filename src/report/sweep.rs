//! The result of a sweep (tipping curve or phase map), derived from the experiment's
//! [`Plan`] and one [`RunPoint`] per run: the regions, the tipping and overload points and
//! the headroom; and the console tables. Nothing else goes in, so a merged set of shards
//! gives exactly the bytes of one unsharded run.

use crate::experiment::plan::{Plan, RunPoint, threshold_fields};
use serde::Serialize;
use std::fmt::Write;

/// How a value behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Region {
    /// Healthy with and without the trigger.
    Stable,
    /// Healthy without the trigger, still failed after it.
    Metastable,
    /// Failed even without the trigger.
    Overloaded,
}

impl Region {
    pub fn name(self) -> &'static str {
        match self {
            Region::Stable => "stable",
            Region::Metastable => "metastable",
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
    pub state: Region,
}

/// `tipping.json` per variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantTipping {
    pub variant: String,
    pub operating_point: f64,
    /// The lowest value where the triggered branch stays failed (majority of seeds).
    pub tipping_point: Option<f64>,
    /// The lowest value where the baseline fails (majority of seeds).
    pub overload_point: Option<f64>,
    /// `tipping_point / operating_point`: below 1, the design already runs where a
    /// trigger tips it over.
    pub headroom: Option<f64>,
    pub points: Vec<Cell>,
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
    pub measure: String,
    pub healthy_above: Option<f64>,
    pub healthy_below: Option<f64>,
    pub trigger: Vec<String>,
    pub seeds: u32,
    pub variants: Vec<VariantTipping>,
}

/// Derives the report from a plan and all of its runs (`runs[i].index == i`).
pub fn report(plan: &Plan, runs: &[RunPoint]) -> SweepReport {
    let seeds = plan.seeds as usize;
    let (a0, a1) = (&plan.axes[0], plan.axes.get(1));
    let variants = plan
        .variants
        .iter()
        .enumerate()
        .map(|(v, vp)| {
            let points: Vec<Cell> = (0..plan.cells())
                .map(|c| {
                    let start = (v * plan.cells() + c) * seeds * 2;
                    let runs = &runs[start..start + seeds * 2];
                    let base: Vec<Option<f64>> =
                        runs.iter().step_by(2).map(|r| r.measure).collect();
                    let trig: Vec<Option<f64>> =
                        runs.iter().skip(1).step_by(2).map(|r| r.measure).collect();
                    let failed = |xs: &[Option<f64>]| {
                        xs.iter().filter(|m| !plan.healthy(**m)).count() as f64 / seeds as f64
                    };
                    let (bf, tf) = (failed(&base), failed(&trig));
                    let state = if bf > 0.5 {
                        Region::Overloaded
                    } else if tf > 0.5 {
                        Region::Metastable
                    } else {
                        Region::Stable
                    };
                    let p = plan.point(start as u64);
                    Cell {
                        value: a0.values[p.at[0]],
                        value2: a1.map(|a| a.values[p.at[1]]),
                        baseline: Spread::of(&base),
                        triggered: Spread::of(&trig),
                        baseline_failed: bf,
                        collapse_probability: tf,
                        state,
                    }
                })
                .collect();
            let lowest = |f: &dyn Fn(&Cell) -> bool| points.iter().find(|c| f(c)).map(|c| c.value);
            let tipping_point = lowest(&|c| c.collapse_probability > 0.5);
            let op = vp.operating_point[0];
            VariantTipping {
                variant: vp.name.clone(),
                operating_point: op,
                tipping_point,
                overload_point: lowest(&|c| c.baseline_failed > 0.5),
                headroom: tipping_point.filter(|_| op != 0.0).map(|t| t / op),
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
        measure: plan.measure.clone(),
        healthy_above,
        healthy_below,
        trigger: plan.trigger.clone(),
        seeds: plan.seeds,
        variants,
    }
}

/// A number for tables: up to 4 significant decimals, `-` for none.
pub fn short(x: Option<f64>) -> String {
    match x {
        None => "-".into(),
        Some(x) => {
            let s = format!("{x:.4}");
            let s = s.trim_end_matches('0').trim_end_matches('.');
            s.to_string()
        }
    }
}

/// The headroom table as rows of cells: a header, then one row per variant.
pub fn headroom_rows(r: &SweepReport) -> Vec<[String; 5]> {
    let mut rows = vec![[
        "variant".to_string(),
        "operating".into(),
        "tipping".into(),
        "overload".into(),
        "headroom".into(),
    ]];
    for v in &r.variants {
        rows.push([
            v.variant.clone(),
            short(Some(v.operating_point)),
            short(v.tipping_point),
            short(v.overload_point),
            short(v.headroom),
        ]);
    }
    rows
}

/// The headroom table as aligned text, for the console.
pub fn headroom_table(r: &SweepReport) -> String {
    let rows = headroom_rows(r);
    let widths: Vec<usize> = (0..5)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let unit = r
        .unit
        .as_deref()
        .map(|u| format!(" ({u})"))
        .unwrap_or_default();
    let mut out = format!("{}: {}{unit}, measure {}\n", r.scenario, r.vary, r.measure);
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 0 {
                    format!("{c:<w$}", w = widths[i])
                } else {
                    format!("{c:>w$}", w = widths[i])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// The region counts of a phase map, per variant, for the console.
pub fn phase_table(r: &SweepReport) -> String {
    let mut out = format!(
        "{}: phase map of {} x {}\n",
        r.scenario,
        r.vary,
        r.vary2.as_deref().unwrap_or("")
    );
    for v in &r.variants {
        let count = |x: Region| v.points.iter().filter(|c| c.state == x).count();
        let _ = writeln!(
            out,
            "  {}: {} stable, {} metastable, {} overloaded cells",
            v.variant,
            count(Region::Stable),
            count(Region::Metastable),
            count(Region::Overloaded)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::plan::tests::plan;

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
            })
            .collect();
        let r = report(&p, &runs);
        let v = &r.variants[0];
        let states: Vec<Region> = v.points.iter().map(|c| c.state).collect();
        assert_eq!(
            states,
            [Region::Stable, Region::Metastable, Region::Overloaded]
        );
        assert_eq!(v.tipping_point, Some(2.0));
        assert_eq!(v.overload_point, Some(3.0));
        assert_eq!(v.headroom, Some(1.0));
        assert!((v.points[1].collapse_probability - 2.0 / 3.0).abs() < 1e-12);
    }
}
