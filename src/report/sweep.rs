//! The result of a sweep (tipping curve or phase map) and its CSV, JSON and console
//! exporters. A sweep is a [`Plan`] plus one [`RunPoint`] per run; everything else
//! (regions, tipping and overload points, headroom) is derived from those two, so a merged
//! set of shards gives exactly the bytes of one unsharded run.

use super::csv::{num, text};
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// Which experiment a sweep is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Tipping,
    Phase,
}

impl Kind {
    /// The stem of its files (`tipping.csv`, `phase.csv`).
    pub fn stem(self) -> &'static str {
        match self {
            Kind::Tipping => "tipping",
            Kind::Phase => "phase",
        }
    }
}

/// One swept parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AxisPlan {
    /// The dotted key path.
    pub path: String,
    /// `"s"` for durations (values in seconds), else none.
    pub unit: Option<String>,
    pub values: Vec<f64>,
}

/// One design variant of the sweep; `base` is the scenario as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantPlan {
    pub name: String,
    /// The variant's own value of each axis' parameter.
    pub operating_point: Vec<f64>,
}

/// Everything about a sweep except its measurements: enough to write every output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub kind: Kind,
    pub scenario: String,
    pub title: String,
    pub measure: String,
    pub healthy_above: Option<f64>,
    pub healthy_below: Option<f64>,
    pub trigger: Vec<String>,
    pub seeds: u32,
    pub axes: Vec<AxisPlan>,
    pub variants: Vec<VariantPlan>,
}

/// Without the trigger, or with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Branch {
    Baseline,
    Triggered,
}

/// Where one run sits in a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    pub variant: usize,
    /// The value index on each axis (the second is 0 for a tipping sweep).
    pub at: [usize; 2],
    pub seed: u32,
    pub branch: Branch,
}

impl Plan {
    /// Values on the second axis (1 for a tipping sweep).
    fn n2(&self) -> usize {
        self.axes.get(1).map_or(1, |a| a.values.len())
    }

    /// The number of cells (value combinations) per variant.
    pub fn cells(&self) -> usize {
        self.axes[0].values.len() * self.n2()
    }

    /// The number of runs in the whole sweep.
    pub fn len(&self) -> u64 {
        self.variants.len() as u64 * self.cells() as u64 * self.seeds as u64 * 2
    }

    /// True when the sweep has no runs.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The run with index `i`: variant-major, then first axis, second axis, seed, branch.
    pub fn point(&self, i: u64) -> Point {
        let branch = if i.is_multiple_of(2) {
            Branch::Baseline
        } else {
            Branch::Triggered
        };
        let rest = i / 2;
        let seed = (rest % self.seeds as u64) as u32;
        let rest = rest / self.seeds as u64;
        let cell = (rest % self.cells() as u64) as usize;
        let variant = (rest / self.cells() as u64) as usize;
        Point {
            variant,
            at: [cell / self.n2(), cell % self.n2()],
            seed,
            branch,
        }
    }

    /// True when `measure` is healthy (a missing measure is failed).
    pub fn healthy(&self, measure: Option<f64>) -> bool {
        match (measure, self.healthy_above, self.healthy_below) {
            (Some(m), Some(t), _) => m > t,
            (Some(m), None, Some(t)) => m < t,
            _ => false,
        }
    }
}

/// The measure of one run (`None` when it has none, e.g. a run that ran away).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunPoint {
    pub index: u64,
    pub measure: Option<f64>,
}

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
    SweepReport {
        scenario: plan.scenario.clone(),
        title: plan.title.clone(),
        vary: a0.path.clone(),
        unit: a0.unit.clone(),
        vary2: a1.map(|a| a.path.clone()),
        unit2: a1.and_then(|a| a.unit.clone()),
        measure: plan.measure.clone(),
        healthy_above: plan.healthy_above,
        healthy_below: plan.healthy_below,
        trigger: plan.trigger.clone(),
        seeds: plan.seeds,
        variants,
    }
}

/// `tipping.csv` (`variant,value,branch,seed,measure,state`) or `phase.csv` (with
/// `value2` after `value`): one row per run.
pub fn csv(plan: &Plan, runs: &[RunPoint]) -> String {
    let two = plan.axes.len() > 1;
    let mut out = String::from(if two {
        "variant,value,value2,branch,seed,measure,state\n"
    } else {
        "variant,value,branch,seed,measure,state\n"
    });
    for r in runs {
        let p = plan.point(r.index);
        let _ = write!(
            out,
            "{},{}",
            text(&plan.variants[p.variant].name),
            num(plan.axes[0].values[p.at[0]])
        );
        if two {
            let _ = write!(out, ",{}", num(plan.axes[1].values[p.at[1]]));
        }
        let branch = match p.branch {
            Branch::Baseline => "baseline",
            Branch::Triggered => "triggered",
        };
        let state = if plan.healthy(r.measure) {
            "healthy"
        } else {
            "failed"
        };
        let _ = writeln!(
            out,
            ",{branch},{},{},{state}",
            p.seed,
            num(r.measure.unwrap_or(f64::NAN))
        );
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(seeds: u32) -> Plan {
        Plan {
            kind: Kind::Tipping,
            scenario: "s".into(),
            title: "t".into(),
            measure: "goodput_ratio.r".into(),
            healthy_above: Some(0.5),
            healthy_below: None,
            trigger: vec!["e".into()],
            seeds,
            axes: vec![AxisPlan {
                path: "class.r.rate".into(),
                unit: None,
                values: vec![1.0, 2.0, 3.0],
            }],
            variants: vec![VariantPlan {
                name: "base".into(),
                operating_point: vec![2.0],
            }],
        }
    }

    #[test]
    fn run_indices_are_value_then_seed_then_branch() {
        let p = plan(2);
        assert_eq!(p.len(), 12);
        let q = p.point(7);
        assert_eq!((q.at[0], q.seed, q.branch), (1, 1, Branch::Triggered));
    }

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
        // A missing measure is failed.
        assert!(!p.healthy(None));
    }
}
