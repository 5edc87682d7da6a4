//! The plan of a sweep and the measure of each of its runs: everything a sweep's outputs
//! are derived from. A tipping sweep is a phase map with one axis; runs are indexed
//! variant-major, then first axis, second axis, seed, branch (baseline = even index).

use crate::scenario::Provenance;
use crate::scenario::sweep::{Health, Method};
use serde::{Deserialize, Serialize};

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
    /// `"s"` for durations (values in seconds), else the file's `unit`, if any.
    pub unit: Option<String>,
    pub values: Vec<f64>,
    /// What axes and tables call the parameter (the file's `label`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// One design variant of the sweep; `base` is the scenario as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantPlan {
    pub name: String,
    /// The variant's own value of each axis' parameter.
    pub operating_point: Vec<f64>,
    /// Trigger events the variant itself switches off (`event.NAME.enabled = false`): it
    /// is swept without them, both branches alike (its point is the design without the
    /// disturbance). Left out of shard files when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub untriggered: Vec<String>,
    /// How closely an adaptive search pins its points, in the first axis's values (not in
    /// the plan of a shard file: a searched shard holds it beside each variant's runs).
    #[serde(skip)]
    pub tolerance: f64,
    /// The mean time to spontaneous collapse at the operating point, when the scenario
    /// has a `[collapse]` section (estimated once per sweep; by every shard of a grid, in
    /// its plan; by an adaptive sweep's shard for its own variants, beside their runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collapse_time: Option<CollapseTime>,
}

/// What `tipping.json` and the headroom table say of the mean time to collapse.
///
/// An estimate that spent its event budget (`collapse.max_events`) is a lower bound
/// (`bound` is `"lower"`; how it is bounded: [`crate::experiment::collapse_time`]): the
/// sweep reports it instead of failing. The three fields of a bound are absent otherwise,
/// so files without one keep their bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollapseTime {
    /// Where it was estimated: the operating point.
    pub at: f64,
    /// Seconds, with the estimator's approximate 95% interval; for a bound, the bound
    /// (the mean time is at least this), without an interval.
    pub mean_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
    /// In words ("3.2 days"; for a bound, the bound's).
    pub text: String,
    /// What counts as collapse ("queue of pool server >= 200").
    pub level: String,
    /// `Some(Bound::Lower)` when the budget was spent: `mean_s` bounds the mean below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<Bound>,
    /// For a bound, the splitting level under way when the budget ran out (from 1; 0: in
    /// the direct cycles, before the first level), and the levels in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_spent_at_level: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels: Option<u64>,
}

/// Which side an estimate that stopped early bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    /// The true value is at least the one reported.
    Lower,
}

/// Everything about a sweep except its measurements: enough to write every output.
///
/// It is written into shard files as [`PlanFile`] (the threshold as `healthy_above` or
/// `healthy_below`) and checked when read back, like any other input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "PlanFile", try_from = "PlanFile")]
pub struct Plan {
    pub kind: Kind,
    pub scenario: String,
    pub title: String,
    pub measure: String,
    /// Which side of a threshold the measure is healthy on: the scenario's own type, so
    /// the sweep and the scenario cannot disagree about what healthy means.
    pub health: Health,
    pub trigger: Vec<String>,
    pub seeds: u32,
    pub axes: Vec<AxisPlan>,
    pub variants: Vec<VariantPlan>,
    /// Grid or adaptive (not in the plan of a shard file: a shard that holds searches,
    /// not runs by index, is an adaptive sweep's).
    pub method: Method,
    /// Where a run's measuring window starts and how long a run is (seconds): what tells a
    /// spontaneous collapse (healthy for at least `settle`, then stuck) from overload.
    pub settle_s: f64,
    /// `[tipping] recover_within` in seconds: a triggered run that has not recovered
    /// within it counts as collapsed (by its trace, not its measure).
    pub recover_within_s: Option<f64>,
    /// What produced the sweep (the base scenario's file digest, seed and overrides):
    /// shards that disagree on it are not one sweep.
    pub provenance: Provenance,
}

impl Plan {
    /// True when the measure is an SLO's (`slo.CLASS`): its overload point is the
    /// capacity at SLO.
    pub fn is_slo(&self) -> bool {
        is_slo_measure(&self.measure)
    }
}

/// True for the name of an SLO measure (`slo.CLASS`).
pub fn is_slo_measure(measure: &str) -> bool {
    measure.starts_with("slo.")
}

/// The most runs a plan read back from a file may have (far beyond any sweep brink runs:
/// the bound keeps index arithmetic exact on hand-edited files).
pub const MAX_PLAN_RUNS: u64 = 1 << 40;

/// A [`Plan`] as shard files hold it (the field names are part of the file format).
#[derive(Serialize, Deserialize)]
pub struct PlanFile {
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
    /// `[tipping] settle` in seconds (older shard files: 0).
    #[serde(default)]
    pub settle_s: f64,
    /// `[tipping] recover_within` in seconds, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recover_within_s: Option<f64>,
    pub produced_by: Provenance,
}

/// `healthy_above` and `healthy_below` as written in shard files and `tipping.json`.
pub fn threshold_fields(h: Health) -> (Option<f64>, Option<f64>) {
    match h {
        Health::Above(x) => (Some(x), None),
        Health::Below(x) => (None, Some(x)),
    }
}

impl From<Plan> for PlanFile {
    fn from(p: Plan) -> Self {
        let (healthy_above, healthy_below) = threshold_fields(p.health);
        PlanFile {
            kind: p.kind,
            scenario: p.scenario,
            title: p.title,
            measure: p.measure,
            healthy_above,
            healthy_below,
            trigger: p.trigger,
            seeds: p.seeds,
            axes: p.axes,
            variants: p.variants,
            settle_s: p.settle_s,
            recover_within_s: p.recover_within_s,
            produced_by: p.provenance,
        }
    }
}

impl TryFrom<PlanFile> for Plan {
    type Error = String;

    fn try_from(f: PlanFile) -> Result<Self, String> {
        let health = match (f.healthy_above, f.healthy_below) {
            (Some(x), None) => Health::Above(x),
            (None, Some(x)) => Health::Below(x),
            _ => {
                return Err("the plan needs exactly one of healthy_above and healthy_below".into());
            }
        };
        // Checked so that deriving the outputs cannot panic on a hand-edited shard file.
        let axes = match f.kind {
            Kind::Tipping => 1,
            Kind::Phase => 2,
        };
        if f.seeds == 0 {
            return Err("the plan needs at least one seed".into());
        }
        if f.axes.len() != axes || f.variants.iter().any(|v| v.operating_point.len() != axes) {
            return Err(format!(
                "a {} plan has {axes} axes and {axes} operating points per variant",
                f.kind.stem()
            ));
        }
        if f.variants.is_empty() || f.axes.iter().any(|a| a.values.is_empty()) {
            return Err("the plan needs at least one variant and one value per axis".into());
        }
        // Run indices are u64: the product must fit, with room for every index.
        let runs = f.axes.iter().try_fold(f.variants.len() as u64, |n, a| {
            n.checked_mul(a.values.len() as u64)
        });
        if runs
            .and_then(|n| n.checked_mul(f.seeds as u64 * 2))
            .is_none_or(|n| n > MAX_PLAN_RUNS)
        {
            return Err(format!(
                "the plan has more than {MAX_PLAN_RUNS} runs (variants x values x seeds x 2)"
            ));
        }
        Ok(Plan {
            kind: f.kind,
            scenario: f.scenario,
            title: f.title,
            measure: f.measure,
            health,
            trigger: f.trigger,
            seeds: f.seeds,
            axes: f.axes,
            variants: f.variants,
            method: Method::Grid,
            settle_s: f.settle_s,
            recover_within_s: f.recover_within_s,
            provenance: f.produced_by,
        })
    }
}

/// Without the trigger, or with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Branch {
    Baseline,
    Triggered,
}

impl Branch {
    /// The name written in `tipping.csv` and `phase.csv`.
    pub fn name(self) -> &'static str {
        match self {
            Branch::Baseline => "baseline",
            Branch::Triggered => "triggered",
        }
    }
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
        let k = (rest % self.seeds as u64) as u32;
        let rest = rest / self.seeds as u64;
        let cell = (rest % self.cells() as u64) as usize;
        let variant = (rest / self.cells() as u64) as usize;
        // A tipping grid's values have seeds of their own (value j runs seeds j x seeds
        // to (j + 1) x seeds - 1), like the search's probes: the confidence interval takes
        // the runs as independent, and with the same seeds at every value they are not (a
        // seed that fails at one value fails at the next: 8 seeds over 16 values covered
        // the crossing in 16 of 24 sweeps). A phase map's cells share seeds 0 to seeds - 1
        // (common random numbers make its boundary, a bracket, cleaner). Variants share
        // them either way.
        let seed = match self.kind {
            Kind::Tipping => (cell as u64 * self.seeds as u64 + k as u64) as u32,
            Kind::Phase => k,
        };
        Point {
            variant,
            at: [cell / self.n2(), cell % self.n2()],
            seed,
            branch,
        }
    }

    /// True when a run's `measure` is healthy; a missing measure (a run that ran away, a
    /// window with no value) is failed. The one place a sweep decides health: it asks the
    /// scenario's [`Health`].
    pub fn healthy(&self, measure: Option<f64>) -> bool {
        self.health.is_healthy(measure)
    }

    /// True when a run counts as failed: with `recover_within`, a triggered run that did
    /// not recover within it (by its trace; a run without one did not); otherwise a run
    /// whose measure is not [`Plan::healthy`].
    pub fn failed(&self, branch: Branch, measure: Option<f64>, trace: Option<Trace>) -> bool {
        match (branch, self.recover_within_s) {
            (Branch::Triggered, Some(w)) => {
                !trace.and_then(|t| t.recovered_s).is_some_and(|s| s <= w)
            }
            _ => !self.healthy(measure),
        }
    }
}

/// The measure of one run of a grid, by its index (`None` when it has none, e.g. a run
/// that ran away), and its trace.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunPoint {
    pub index: u64,
    pub measure: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
}

/// How a run went over time, beyond its measure: what tells a spontaneous collapse from
/// overload. `None` for a run that ran away.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// Simulated seconds the run lasted (less than the run length when it stopped as soon
    /// as its class was settled).
    pub ran_s: f64,
    /// When the run got stuck: the start of the failed stretch that lasted to its end
    /// (every time-series row from there on failed the health threshold); `None` when its
    /// last row was healthy.
    pub stuck_s: Option<f64>,
    /// Triggered runs of a sweep with `recover_within` only: seconds after the last
    /// trigger's end at which the healthy stretch began that lasted to the end of the run
    /// (at least `recover_within` long; 0 when the trigger did not break it); `None` when
    /// it did not recover so. Left out of files when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered_s: Option<f64>,
}

/// One run of a sweep, grid or adaptive, by where it sits: what reports and `tipping.csv`
/// are made of (and, for an adaptive search's shard, what its file holds).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub variant: usize,
    /// The value on each axis (the second is 0 for a tipping sweep).
    pub value: [f64; 2],
    pub seed: u32,
    pub branch: Branch,
    pub measure: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
}

impl Plan {
    /// The runs of a whole grid, located (`runs[i].index == i`).
    pub fn locate(&self, runs: &[RunPoint]) -> Vec<Run> {
        runs.iter()
            .map(|r| {
                let p = self.point(r.index);
                Run {
                    variant: p.variant,
                    value: [
                        self.axes[0].values[p.at[0]],
                        self.axes.get(1).map_or(0.0, |a| a.values[p.at[1]]),
                    ],
                    seed: p.seed,
                    branch: p.branch,
                    measure: r.measure,
                    trace: r.trace,
                }
            })
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A one-variant tipping plan over three rates, healthy above 0.5.
    pub(crate) fn plan(seeds: u32) -> Plan {
        Plan {
            kind: Kind::Tipping,
            scenario: "s".into(),
            title: "t".into(),
            measure: "goodput_ratio.r".into(),
            health: Health::Above(0.5),
            trigger: vec!["e".into()],
            seeds,
            axes: vec![AxisPlan {
                path: "class.r.rate".into(),
                unit: None,
                values: vec![1.0, 2.0, 3.0],
                label: None,
            }],
            variants: vec![VariantPlan {
                name: "base".into(),
                operating_point: vec![2.0],
                untriggered: vec![],
                tolerance: 0.0,
                collapse_time: None,
            }],
            method: Method::Grid,
            settle_s: 0.0,
            recover_within_s: None,
            provenance: Provenance::of_text("s", ""),
        }
    }

    #[test]
    fn run_indices_are_value_then_seed_then_branch() {
        let p = plan(2);
        assert_eq!(p.len(), 12);
        let q = p.point(7);
        // Value 1 runs seeds 2 and 3 (its own, as a probe's).
        assert_eq!((q.at[0], q.seed, q.branch), (1, 3, Branch::Triggered));
    }

    #[test]
    fn a_missing_measure_is_failed() {
        let p = plan(1);
        assert!(!p.healthy(None));
        assert!(p.healthy(Some(0.6)));
        assert!(!p.healthy(Some(0.5)));
    }

    #[test]
    fn a_plan_reads_back_what_it_wrote_and_refuses_two_thresholds() {
        let p = plan(2);
        let text = serde_json::to_string(&p).unwrap();
        assert!(text.contains("\"healthy_above\":0.5,\"healthy_below\":null"));
        assert_eq!(serde_json::from_str::<Plan>(&text).unwrap(), p);
        let both = text.replace("\"healthy_below\":null", "\"healthy_below\":0.9");
        let err = serde_json::from_str::<Plan>(&both).unwrap_err().to_string();
        assert!(err.contains("exactly one of healthy_above"), "{err}");
    }
}
