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
    /// Its 95% Wilson score interval over the seeds: with few seeds it is wide (one seed
    /// that collapsed: 0.21 to 1), which is what one seed can say.
    pub collapse_interval: [f64; 2],
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
    /// What the grid knows of the headroom: between the swept value below the tipping
    /// point (which did not tip) and the tipping point, over the operating point.
    pub headroom_interval: Option<[f64; 2]>,
    /// No value in the range tips: the headroom is above this (the top of the range over
    /// the operating point).
    pub headroom_above: Option<f64>,
    /// The lowest value of the range already tips: the headroom is at most this.
    pub headroom_at_most: Option<f64>,
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
    /// The headroom as a table cell: `0.43 (0.36-0.43)`, `> 3.67` when nothing in the
    /// range tips, `<= 0.2` when it tips at the bottom, `-` without an operating point.
    pub fn headroom_cell(&self) -> String {
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
                        collapse_interval: wilson(tf, seeds),
                        state,
                    }
                })
                .collect();
            let lowest = |f: &dyn Fn(&Cell) -> bool| points.iter().find(|c| f(c)).map(|c| c.value);
            let tipping_point = lowest(&|c| c.collapse_probability > 0.5);
            let op = vp.operating_point[0];
            let over = |x: f64| (op != 0.0).then(|| x / op);
            // The grid value just below the tipping point: the last one that did not tip.
            let tip_at = points.iter().position(|c| c.collapse_probability > 0.5);
            let below = tip_at
                .and_then(|i| i.checked_sub(1))
                .map(|i| points[i].value);
            let (first, last) = (
                points.first().map(|c| c.value),
                points.last().map(|c| c.value),
            );
            VariantTipping {
                variant: vp.name.clone(),
                operating_point: op,
                tipping_point,
                overload_point: lowest(&|c| c.baseline_failed > 0.5),
                headroom: tipping_point.and_then(over),
                headroom_interval: match (below.and_then(over), tipping_point.and_then(over)) {
                    (Some(lo), Some(hi)) => Some([lo, hi]),
                    _ => None,
                },
                headroom_above: if tipping_point.is_none() {
                    last.and_then(over)
                } else {
                    None
                },
                headroom_at_most: if tip_at == Some(0) {
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
        variants,
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

/// The 95% Wilson score interval of a proportion `p` observed over `n` trials.
pub fn wilson(p: f64, n: usize) -> [f64; 2] {
    if n == 0 {
        return [0.0, 1.0];
    }
    let (z, n) = (1.959_963_984_540_054_f64, n as f64);
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
    [(centre - half).max(0.0), (centre + half).min(1.0)]
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
        let name = if v.swept_without_trigger.is_empty() {
            v.variant.clone()
        } else {
            format!("{} (no trigger)", v.variant)
        };
        rows.push([
            name,
            short(Some(v.operating_point)),
            short(v.tipping_point),
            short(v.overload_point),
            v.headroom_cell(),
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
    let mut out = format!(
        "{}: {}{unit}, measure {}\n",
        r.scenario,
        r.axis_name(),
        r.measure
    );
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
        r.axis_name(),
        r.axis2_name()
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
        // The grid brackets the tipping point between 1 (did not tip) and 2.
        assert_eq!(v.headroom_interval, Some([0.5, 1.0]));
        assert_eq!((v.headroom_above, v.headroom_at_most), (None, None));
        assert_eq!(v.headroom_cell(), "1 (0.5-1)");
        // Three seeds cannot make 2 of 3 sure: no bound on either side.
        assert_eq!(v.tipping_bounds_95, [None, None]);
    }

    /// Wilson score intervals: one seed that collapsed says little (0.21 to 1); 20 of 20
    /// are sure (above 0.83); the interval always holds the observed share.
    #[test]
    fn wilson_intervals() {
        let [lo, hi] = wilson(1.0, 1);
        assert!((lo - 0.2065).abs() < 1e-3 && hi == 1.0, "{lo} {hi}");
        let [lo, _] = wilson(1.0, 20);
        assert!((lo - 0.8389).abs() < 1e-3, "{lo}");
        let [lo, hi] = wilson(0.5, 10);
        assert!(
            (lo - 0.2366).abs() < 1e-3 && (hi - 0.7634).abs() < 1e-3,
            "{lo} {hi}"
        );
        for n in 1..30 {
            for k in 0..=n {
                let p = k as f64 / n as f64;
                let [lo, hi] = wilson(p, n);
                assert!(lo <= p + 1e-12 && p <= hi + 1e-12, "{k}/{n}: {lo} {hi}");
            }
        }
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
                })
                .collect()
        };
        let never = report(&p, &runs([1.0; 6]));
        let v = &never.variants[0];
        assert_eq!((v.tipping_point, v.headroom_interval), (None, None));
        assert_eq!(v.headroom_above, Some(1.5));
        assert_eq!(v.headroom_cell(), "> 1.5");
        let always = report(&p, &runs([1.0, 0.0, 1.0, 0.0, 1.0, 0.0]));
        let v = &always.variants[0];
        assert_eq!(v.tipping_point, Some(1.0));
        assert_eq!((v.headroom_interval, v.headroom_at_most), (None, Some(0.5)));
        assert_eq!(v.headroom_cell(), "<= 0.5");
    }
}
