//! The hysteresis loop of a slow ramp: the measure at each value going up and coming back
//! down, the collapse point (going up) and the recovery point (going down), and the
//! bistable interval between them. Derived from the measures of one run's steps only;
//! `hysteresis.json`, the console line and the picture all read this one report.

use super::sweep_result::sig3;
use crate::scenario::Provenance;
use crate::scenario::sweep::Health;
use serde::Serialize;

/// Which way the ramp goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Up,
    Down,
}

impl Direction {
    /// The name in `hysteresis.csv` and `.json`.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Up => "up",
            Direction::Down => "down",
        }
    }
}

/// One step of the ramp: the value held and what was measured over its settled part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoopPoint {
    pub direction: Direction,
    /// The step's index within its direction (0 first).
    pub step: u32,
    pub value: f64,
    /// `None` when the measure had no value (e.g. no latency because nothing succeeded).
    pub measure: Option<f64>,
    /// Written as `state`: `healthy` or `failed`, as in `hysteresis.csv`.
    #[serde(rename = "state", serialize_with = "state_name")]
    pub healthy: bool,
}

fn state_name<S: serde::Serializer>(healthy: &bool, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(if *healthy { "healthy" } else { "failed" })
}

impl LoopPoint {
    /// `healthy` or `failed`, as `hysteresis.csv` writes it.
    pub fn state(&self) -> &'static str {
        if self.healthy { "healthy" } else { "failed" }
    }
}

/// The hysteresis loop of one scenario (or variant) and what produced it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HysteresisReport {
    pub scenario: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The ramped parameter's key path (`tipping.vary`).
    pub vary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The unit of its values (`s` for durations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    pub measure: String,
    pub healthy_above: Option<f64>,
    pub healthy_below: Option<f64>,
    /// Values per direction.
    pub steps: u32,
    pub dwell_s: f64,
    pub settle_s: f64,
    /// The scenario's own value of the parameter.
    pub operating_point: f64,
    /// The first value going up whose measure is failed.
    pub collapse_point: Option<f64>,
    /// The first value going down, after a collapse, whose measure is healthy again.
    pub recovery_point: Option<f64>,
    /// `[recovery_point, collapse_point]` when recovery needs a lower value than collapse:
    /// the values at which both states persist.
    pub bistable: Option<[f64; 2]>,
    pub brink_version: String,
    pub seed: u64,
    /// The `--set` overrides, as `path=value`.
    pub overrides: Vec<String>,
    /// The up-ramp's steps, then the down-ramp's.
    pub points: Vec<LoopPoint>,
    /// What produced it (`brink_version`, `seed` and `overrides` above say it too).
    pub produced_by: Provenance,
}

/// The first value going up whose measure is failed.
pub fn collapse_point(points: &[LoopPoint]) -> Option<f64> {
    points
        .iter()
        .find(|p| p.direction == Direction::Up && !p.healthy)
        .map(|p| p.value)
}

/// The first value going down whose measure is healthy, if the ramp collapsed going up
/// (with no collapse there is nothing to recover from). A down-ramp that starts healthy
/// recovered at its first value, the top.
pub fn recovery_point(points: &[LoopPoint]) -> Option<f64> {
    collapse_point(points)?;
    points
        .iter()
        .find(|p| p.direction == Direction::Down && p.healthy)
        .map(|p| p.value)
}

/// The bistable interval `[recovery, collapse]`, when recovery comes at a lower value than
/// collapse.
pub fn bistable(collapse: Option<f64>, recovery: Option<f64>) -> Option<[f64; 2]> {
    match (collapse, recovery) {
        (Some(c), Some(r)) if r < c => Some([r, c]),
        _ => None,
    }
}

/// Health of each (value, measure) of the up-ramp and the down-ramp, as loop points.
pub fn points(up: &[(f64, Option<f64>)], down: &[(f64, Option<f64>)], h: Health) -> Vec<LoopPoint> {
    let dir = |d: Direction, xs: &[(f64, Option<f64>)]| -> Vec<LoopPoint> {
        xs.iter()
            .enumerate()
            .map(|(i, &(value, measure))| LoopPoint {
                direction: d,
                step: i as u32,
                value,
                measure,
                healthy: h.is_healthy(measure),
            })
            .collect()
    };
    let mut all = dir(Direction::Up, up);
    all.extend(dir(Direction::Down, down));
    all
}

impl HysteresisReport {
    /// Fills in the collapse and recovery points and the bistable interval from `points`.
    pub fn detect(&mut self) {
        self.collapse_point = collapse_point(&self.points);
        self.recovery_point = recovery_point(&self.points);
        self.bistable = bistable(self.collapse_point, self.recovery_point);
    }

    /// Steps the bistable region spans going up (the up-ramp's values inside it, less one):
    /// `None` without one.
    pub fn loop_steps(&self) -> Option<usize> {
        let [lo, hi] = self.bistable?;
        let inside = self
            .points
            .iter()
            .filter(|p| p.direction == Direction::Up && p.value >= lo && p.value <= hi)
            .count();
        Some(inside.saturating_sub(1))
    }

    /// A caution for a loop at most two steps wide: a queue's lag makes one too (M/M/1
    /// ramped past its capacity drains its backlog for a while after the load falls back),
    /// and only a longer dwell tells them apart.
    pub fn narrow_loop_note(&self) -> Option<String> {
        let n = self.loop_steps()?;
        (n <= 2).then(|| {
            format!(
                "The loop is only {n} step{} wide: a queue that is still draining its backlog after the load falls back makes a loop that narrow too; a longer dwell (`hysteresis.dwell`) tells lag from bistability, which stays as wide.",
                if n == 1 { "" } else { "s" }
            )
        })
    }

    /// What the axes call the parameter: its label, or its key path.
    pub fn axis_name(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.vary)
    }

    /// The console's one line: where the ramp collapsed and recovered.
    pub fn summary_line(&self) -> String {
        let v = |x: f64| match &self.unit {
            Some(u) => format!("{} {u}", sig3(Some(x))),
            None => sig3(Some(x)),
        };
        let last = |d: Direction| {
            self.points
                .iter()
                .rfind(|p| p.direction == d)
                .map_or(0.0, |p| p.value)
        };
        let name = self.axis_name();
        match (self.collapse_point, self.recovery_point, self.bistable) {
            (None, _, _) => format!(
                "{name}: does not collapse going up to {}: no loop",
                v(last(Direction::Up))
            ),
            (Some(c), None, _) => format!(
                "{name}: collapses going up at {}, does not recover going down to {}",
                v(c),
                v(last(Direction::Down))
            ),
            (Some(c), Some(r), Some(_)) => format!(
                "{name}: collapses going up at {}, recovers going down at {}: bistable between {} and {}",
                v(c),
                v(r),
                sig3(Some(r)),
                v(c)
            ),
            (Some(c), Some(r), None) => format!(
                "{name}: collapses going up at {}, recovers going down at {}: no bistable region",
                v(c),
                v(r)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: Health = Health::Above(0.8);

    /// A ramp over 10, 20, …, 50 and back with the given measures.
    fn ramp(up: [f64; 5], down: [f64; 5]) -> Vec<LoopPoint> {
        let xs = [10.0, 20.0, 30.0, 40.0, 50.0];
        let u: Vec<_> = xs.iter().zip(up).map(|(x, m)| (*x, Some(m))).collect();
        let d: Vec<_> = xs
            .iter()
            .rev()
            .zip(down)
            .map(|(x, m)| (*x, Some(m)))
            .collect();
        points(&u, &d, H)
    }

    #[test]
    fn a_loop_collapses_high_and_recovers_low() {
        let p = ramp([1.0, 0.99, 0.95, 0.2, 0.1], [0.1, 0.05, 0.1, 0.9, 1.0]);
        assert_eq!(collapse_point(&p), Some(40.0));
        assert_eq!(recovery_point(&p), Some(20.0));
        assert_eq!(bistable(Some(40.0), Some(20.0)), Some([20.0, 40.0]));
        // Steps count within their direction; the down-ramp starts at the top.
        assert_eq!(
            (p[5].step, p[5].value, p[5].direction),
            (0, 50.0, Direction::Down)
        );
    }

    #[test]
    fn no_collapse_means_nothing_to_recover() {
        let p = ramp([1.0; 5], [1.0; 5]);
        assert_eq!(collapse_point(&p), None);
        assert_eq!(recovery_point(&p), None);
        assert_eq!(bistable(None, None), None);
    }

    #[test]
    fn a_collapse_that_never_recovers_has_no_recovery_point() {
        let p = ramp([1.0, 1.0, 0.5, 0.1, 0.1], [0.1; 5]);
        assert_eq!(collapse_point(&p), Some(30.0));
        assert_eq!(recovery_point(&p), None);
        assert_eq!(bistable(Some(30.0), None), None);
    }

    #[test]
    fn without_hysteresis_there_is_no_bistable_region() {
        // Collapses at 40 and recovers at 40 on the way down: the same value both ways.
        let p = ramp([1.0, 1.0, 1.0, 0.5, 0.1], [0.1, 0.9, 1.0, 1.0, 1.0]);
        assert_eq!(collapse_point(&p), Some(40.0));
        assert_eq!(recovery_point(&p), Some(40.0));
        assert_eq!(bistable(Some(40.0), Some(40.0)), None);
    }

    fn report(points: Vec<LoopPoint>) -> HysteresisReport {
        let mut r = HysteresisReport {
            scenario: "s".into(),
            title: "t".into(),
            variant: None,
            vary: "class.request.rate".into(),
            label: None,
            unit: None,
            measure: "goodput_ratio.request".into(),
            healthy_above: Some(0.8),
            healthy_below: None,
            steps: 5,
            dwell_s: 60.0,
            settle_s: 30.0,
            operating_point: 30.0,
            collapse_point: None,
            recovery_point: None,
            bistable: None,
            brink_version: "0".into(),
            seed: 1,
            overrides: vec![],
            points,
            produced_by: Provenance::of_text("s", ""),
        };
        r.detect();
        r
    }

    #[test]
    fn a_loop_two_steps_wide_or_less_is_told_it_may_be_lag() {
        // Bistable between 20 and 40: three values up inside, two steps.
        let r = report(ramp(
            [1.0, 0.99, 0.95, 0.2, 0.1],
            [0.1, 0.05, 0.1, 0.9, 1.0],
        ));
        assert_eq!(r.loop_steps(), Some(2));
        assert!(r.narrow_loop_note().unwrap().contains("2 steps wide"));
        // Between 10 and 40: three steps, told as it is.
        let r = report(ramp(
            [1.0, 0.99, 0.95, 0.2, 0.1],
            [0.1, 0.05, 0.1, 0.1, 1.0],
        ));
        assert_eq!(r.loop_steps(), Some(3));
        assert_eq!(r.narrow_loop_note(), None);
        // No loop, no note.
        let r = report(ramp([1.0; 5], [1.0; 5]));
        assert_eq!((r.loop_steps(), r.narrow_loop_note()), (None, None));
    }

    #[test]
    fn a_missing_measure_is_failed() {
        let up = [(1.0, Some(1.0)), (2.0, None)];
        let down = [(2.0, None), (1.0, Some(0.9))];
        let p = points(&up, &down, H);
        assert_eq!(collapse_point(&p), Some(2.0));
        assert_eq!(recovery_point(&p), Some(1.0));
        assert_eq!(p[1].state(), "failed");
    }
}
