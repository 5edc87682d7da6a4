//! What a sweep measures of one run, and when the run may stop.
//!
//! The measure is the time-weighted mean, over the time-series rows that start inside the
//! measuring window, of each row's value: for `goodput_ratio.CLASS` the row's goodput over
//! its offered load, capped at 1 (a window that drains a backlog does not make up for one
//! that failed; 1 when nothing was offered), for a column its value (rows without one,
//! such as a p99 with no success, are left out).
//!
//! Because every row's value lies in known bounds ([0, 1] for a ratio, a hit ratio or a
//! breaker's open share, [0, inf) for the other columns) and the window's length is known,
//! a run can be stopped as soon as no rest of the run could move its measure across the
//! health threshold: [`Gauge::settled`]. That is exact, not a heuristic: a stopped run has
//! the class it would have had at the end. Collapsed runs, whose storms are the costly
//! ones, settle a fifth of the way into their window.

use crate::engine::time::{SimTime, ns_to_secs, secs_to_ns};
use crate::report::verdict::{Tally, Verdict, classify, shortest_deadline_s, window_rows};
use crate::scenario::sweep::{Health, Measure, Tipping};
use crate::scenario::{self, Column, Config};
use crate::stats::plan::Trace;

/// Reads a sweep's measure off a run's time-series rows.
#[derive(Debug, Clone)]
pub struct Gauge {
    kind: Kind,
    /// The class a goodput ratio measures, whose requests a verdict tallies.
    class: Option<String>,
    health: Health,
    window_start: SimTime,
    /// The run length.
    end: SimTime,
    /// A triggered run of a sweep with `recover_within`: the end of the last trigger and
    /// `recover_within`. Its class is then its recovery, not its measure.
    recovery: Option<(SimTime, SimTime)>,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Columns of a class's goodput and offered load.
    Ratio { good: usize, offered: usize },
    /// One column and the bounds of its values.
    Column { at: usize, hi: f64 },
}

impl Gauge {
    /// The gauge of `t` over a run of length `end` with these columns; an error names a
    /// column the run does not produce.
    pub fn new(t: &Tipping, columns: &[Column], end: SimTime) -> Result<Self, String> {
        Self::of(&t.measure, t.health, columns, t.window_start_ns, end)
    }

    /// The gauge of `measure` over the window from `start` to `end` (a run's rows that
    /// start at or after `start` and end by `end`).
    pub fn of(
        measure: &Measure,
        health: Health,
        columns: &[Column],
        start: SimTime,
        end: SimTime,
    ) -> Result<Self, String> {
        let at = |name: &str| {
            columns.iter().position(|c| c.name == name).ok_or_else(|| {
                let names: Vec<&str> = columns[1..].iter().map(|c| c.name.as_str()).collect();
                format!(
                    "the runs produce no column `{name}` (columns: {})",
                    names.join(", ")
                )
            })
        };
        let class = match measure {
            Measure::GoodputRatio { class } => Some(class.clone()),
            Measure::Column(_) => None,
        };
        let kind = match measure {
            Measure::GoodputRatio { class } => {
                let col = |m: scenario::Measure| at(&format!("{class}.{}", m.suffix()));
                Kind::Ratio {
                    good: col(scenario::Measure::Goodput)?,
                    offered: col(scenario::Measure::Offered)?,
                }
            }
            Measure::Column(name) => {
                let i = at(name)?;
                let hi = match columns[i].measure {
                    scenario::Measure::HitRatio | scenario::Measure::BreakerOpen => 1.0,
                    _ => f64::INFINITY,
                };
                Kind::Column { at: i, hi }
            }
        };
        Ok(Self {
            kind,
            class,
            health,
            window_start: start,
            end,
            recovery: None,
        })
    }

    /// The gauge of a triggered run: with `recover_within` in `t`, it traces when the run
    /// recovers and settles the run by that alone ([`Gauge::settled`]).
    pub fn triggered(mut self, t: &Tipping) -> Self {
        self.recovery = t.recover_within_ns.map(|r| (t.trigger_end_ns, r));
        self
    }

    /// Where the last failed row after the trigger ends (the trigger's end when none
    /// failed): a recovery starts there at the earliest. Rows end where the next begins,
    /// the last at `to`.
    fn healthy_from(&self, rows: &[Vec<f64>], to: SimTime, trigger_end: SimTime) -> SimTime {
        let healthy = |row: &Vec<f64>| self.health.is_healthy(self.value(row));
        match rows.iter().rposition(|r| !healthy(r)) {
            None => trigger_end,
            Some(k) => rows
                .get(k + 1)
                .map_or(to, |r| secs_to_ns(r[0]))
                .max(trigger_end),
        }
    }

    /// The value of one row, if it has one.
    fn value(&self, row: &[f64]) -> Option<f64> {
        let x = match self.kind {
            Kind::Ratio { good, offered } => {
                if row[offered] > 0.0 {
                    (row[good] / row[offered]).min(1.0)
                } else {
                    1.0
                }
            }
            Kind::Column { at, .. } => row[at],
        };
        x.is_finite().then_some(x)
    }

    /// The bounds of a row's value.
    fn bounds(&self) -> (f64, f64) {
        match self.kind {
            Kind::Ratio { .. } => (0.0, 1.0),
            Kind::Column { hi, .. } => (0.0, hi),
        }
    }

    /// The weighted sum and weight (ns) of the rows inside the window, the last row ending
    /// at `to`.
    fn sums(&self, rows: &[Vec<f64>], to: SimTime) -> (f64, f64) {
        let mut acc = (0.0, 0.0);
        for (row, w) in window_rows(rows, self.window_start, self.end, to) {
            if let Some(x) = self.value(row).filter(|_| w > 0.0) {
                acc = (acc.0 + x * w, acc.1 + w);
            }
        }
        acc
    }

    /// The measure of a run whose rows end at `to`: `None` when the window holds no value.
    pub fn measure(&self, rows: &[Vec<f64>], to: SimTime) -> Option<f64> {
        let (s, n) = self.sums(rows, to);
        (n > 0.0).then(|| s / n)
    }

    /// The verdict on the window, with its cause ([`crate::report::verdict`]): the rows of
    /// a run of `cfg` with these `columns`, ending at `to`; none when the window holds no
    /// value.
    pub fn verdict(
        &self,
        cfg: &Config,
        columns: &[Column],
        rows: &[Vec<f64>],
        to: SimTime,
    ) -> Option<Verdict> {
        let healthy = self.health.is_healthy(Some(self.measure(rows, to)?));
        let window = (self.window_start, self.end, to);
        let tally = Tally {
            deadline_s: shortest_deadline_s(cfg),
            ..Tally::of_rows(columns, rows, window, self.class.as_deref())
        };
        Some(classify(&tally, healthy))
    }

    /// True when the run, its rows ending at `now`, can no longer change class: every way
    /// the rest of the window could go (rows at either bound, or without values) gives the
    /// same health.
    ///
    /// With `recover_within` R (a triggered run, [`Gauge::triggered`]) the class is whether
    /// the run recovered within R, and a recovery must last R to the end of the run. That
    /// is known early only one way: once a failed row ends later than R before the end, no
    /// rest can give a healthy stretch of R, so the run cannot recover (nor recover
    /// slowly) and stops. A run that could still recover runs to its end: a later failed
    /// row could always undo a recovery, so "recovered" is known only there.
    pub fn settled(&self, rows: &[Vec<f64>], now: SimTime) -> bool {
        if let Some((trigger_end, within)) = self.recovery {
            return self.healthy_from(rows, now, trigger_end) > self.end.saturating_sub(within);
        }
        let (s, n) = self.sums(rows, now);
        let rest = self.end.saturating_sub(now.max(self.window_start)) as f64;
        let (lo, hi) = self.bounds();
        // The final mean moves monotonically with the weight and the value of the rest,
        // so its extremes are: no more values, or the whole rest at either bound.
        let mut ends = vec![(n > 0.0).then(|| s / n)];
        if rest > 0.0 {
            for b in [lo, hi] {
                ends.push(Some(if b.is_infinite() {
                    b
                } else {
                    (s + b * rest) / (n + rest)
                }));
            }
        }
        let first = self.health.is_healthy(ends[0]);
        ends.iter().all(|m| self.health.is_healthy(*m) == first)
    }

    /// How the run went: how long it ran, and from when it was stuck (every row failed to
    /// its end).
    pub fn trace(&self, rows: &[Vec<f64>], ran_to: SimTime) -> Trace {
        let healthy = |row: &Vec<f64>| self.health.is_healthy(self.value(row));
        let stuck = rows.iter().rposition(healthy).map_or(0, |k| k + 1);
        // Recovered: healthy from some time after the trigger to the end of the run, at
        // least `recover_within` long.
        let recovered_s = self.recovery.and_then(|(trigger_end, within)| {
            let from = self.healthy_from(rows, ran_to, trigger_end);
            (ran_to.saturating_sub(from) >= within).then(|| ns_to_secs(from - trigger_end))
        });
        Trace {
            ran_s: ns_to_secs(ran_to),
            stuck_s: rows.get(stuck).map(|r| r[0]),
            recovered_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::sweep::{Axis, AxisUnit, Method};
    use crate::scenario::{Measure as M, Owner};

    fn gauge(measure: Measure, health: Health, window_s: u64, end_s: u64) -> Gauge {
        let t = Tipping {
            axis: Axis {
                path: "class.r.rate".into(),
                unit: AxisUnit::Number,
                values: vec![1.0, 2.0],
                operating_point: 1.0,
                label: None,
                unit_name: None,
                range: (1.0, 2.0),
            },
            trigger: vec![],
            settle_ns: 0,
            measure,
            measure_name: String::new(),
            health,
            seeds: 1,
            seeds_default: false,
            duration_ns: None,
            window_start_ns: window_s * 1_000_000_000,
            trigger_end_ns: window_s * 1_000_000_000,
            recover_within_ns: None,
            method: Method::Grid,
            tolerance: None,
        };
        let col = |owner, measure, name: &str| Column {
            owner,
            measure,
            name: name.into(),
        };
        let cols = [
            col(Owner::Time, M::Time, "time_s"),
            col(Owner::Class(0), M::Offered, "r.offered_per_s"),
            col(Owner::Class(0), M::Goodput, "r.goodput_per_s"),
            col(Owner::Class(0), M::LatencyP99, "r.latency_p99_s"),
        ];
        Gauge::new(&t, &cols, end_s * 1_000_000_000).unwrap()
    }

    /// Rows of 10 s: (time, offered, goodput, p99).
    fn rows(xs: &[(f64, f64, f64)]) -> Vec<Vec<f64>> {
        xs.iter()
            .enumerate()
            .map(|(k, (o, g, p))| vec![10.0 * k as f64, *o, *g, *p])
            .collect()
    }

    const S: u64 = 1_000_000_000;

    #[test]
    fn the_ratio_is_capped_per_row_and_weighted_by_time_inside_the_window() {
        let g = gauge(
            Measure::GoodputRatio { class: "r".into() },
            Health::Above(0.8),
            10,
            40,
        );
        // Row 0 is before the window; row 2 drains a backlog (ratio 2, counted as 1).
        let r = rows(&[
            (10.0, 0.0, 0.0),
            (10.0, 5.0, 0.0),
            (10.0, 20.0, 0.0),
            (0.0, 0.0, 0.0),
        ]);
        let m = g.measure(&r, 40 * S).unwrap();
        assert!((m - (0.5 + 1.0 + 1.0) / 3.0).abs() < 1e-12, "{m}");
    }

    /// A collapsed run is settled once the failed part of its window is more than the
    /// threshold allows, whatever the rest holds; a healthy one only once its healthy part
    /// outweighs every possible rest.
    #[test]
    fn a_run_is_settled_exactly_when_no_rest_can_change_its_class() {
        let g = gauge(
            Measure::GoodputRatio { class: "r".into() },
            Health::Above(0.8),
            0,
            100,
        );
        let failed = |k: usize| rows(&vec![(10.0, 0.0, 0.0); k]);
        // 10 of 100 s at 0: the rest at 1 gives 0.9 > 0.8, not settled; 20 s: 0.8, settled.
        assert!(!g.settled(&failed(1), 10 * S));
        assert!(g.settled(&failed(2), 20 * S));
        let fine = |k: usize| rows(&vec![(10.0, 10.0, 0.0); k]);
        // Healthy for 80 s: the rest at 0 gives 0.8, not above; 90 s: settled.
        assert!(!g.settled(&fine(8), 80 * S));
        assert!(g.settled(&fine(9), 90 * S));
    }

    #[test]
    fn an_unbounded_column_settles_only_on_the_side_its_values_cannot_undo() {
        let g = gauge(
            Measure::Column("r.latency_p99_s".into()),
            Health::Below(1.0),
            0,
            100,
        );
        // p99 of 5 s for 30 s: at best the rest is 0 and the mean 1.5: failed for sure.
        let slow = rows(&[(1.0, 1.0, 5.0); 3]);
        assert!(g.settled(&slow, 30 * S));
        // Fast so far: a slow rest could still fail it, until the run ends.
        let fast = rows(&[(1.0, 1.0, 0.1); 9]);
        assert!(!g.settled(&fast, 90 * S));
        assert!(g.settled(&rows(&[(1.0, 1.0, 0.1); 10]), 100 * S));
    }

    /// With `recover_within` 20 s over a 100 s run whose trigger ends at 10 s: a run
    /// recovers when it is healthy from some time to the end for at least 20 s; it is
    /// settled (stopped) only once a failed row ends after 80 s, when no rest can give it
    /// 20 healthy seconds to the end.
    #[test]
    fn a_triggered_run_recovers_when_healthy_to_the_end_and_stops_only_when_it_cannot() {
        let mut g = gauge(
            Measure::GoodputRatio { class: "r".into() },
            Health::Above(0.8),
            10,
            100,
        );
        g.recovery = Some((10 * S, 20 * S));
        let (bad, good) = ((10.0, 0.0, 0.0), (10.0, 10.0, 0.0));
        // Failed until 50 s, then healthy: recovered 40 s after the trigger's end.
        let mut r = rows(&[bad; 5]);
        r.extend(rows(&[good; 5]).into_iter().map(|mut x| {
            x[0] += 50.0;
            x
        }));
        assert_eq!(g.trace(&r, 100 * S).recovered_s, Some(40.0));
        // Never settled before its end while it could still recover.
        assert!((1..=8).all(|k| !g.settled(&r[..k], 10 * k as u64 * S)));
        // Failed to 80 s, then healthy: 20 s to the end is enough.
        let mut late = rows(&[bad; 8]);
        late.extend(rows(&[good; 2]).into_iter().map(|mut x| {
            x[0] += 80.0;
            x
        }));
        assert_eq!(g.trace(&late, 100 * S).recovered_s, Some(70.0));
        assert!(!g.settled(&late[..8], 80 * S));
        // A failed row ending at 90 s leaves 10 s: it cannot recover, settled at once.
        let stuck = rows(&[bad; 9]);
        assert!(g.settled(&stuck, 90 * S));
        assert_eq!(g.trace(&stuck, 90 * S).recovered_s, None);
        // Healthy throughout: recovered at the trigger's end.
        assert_eq!(g.trace(&rows(&[good; 10]), 100 * S).recovered_s, Some(0.0));
        // A relapse at the end undoes a recovery.
        let mut relapse = r.clone();
        relapse[9][2] = 0.0;
        assert_eq!(g.trace(&relapse, 100 * S).recovered_s, None);
        // Without `recover_within`, no recovery time.
        g.recovery = None;
        assert_eq!(g.trace(&r, 100 * S).recovered_s, None);
    }

    #[test]
    fn the_trace_finds_the_failed_stretch_that_lasts_to_the_end() {
        let g = gauge(
            Measure::GoodputRatio { class: "r".into() },
            Health::Above(0.8),
            0,
            50,
        );
        let r = rows(&[
            (10.0, 10.0, 0.0),
            (10.0, 0.0, 0.0),
            (10.0, 10.0, 0.0),
            (10.0, 1.0, 0.0),
            (10.0, 0.0, 0.0),
        ]);
        let t = g.trace(&r, 50 * S);
        assert_eq!((t.ran_s, t.stuck_s), (50.0, Some(30.0)));
        assert_eq!(g.trace(&r[..3], 30 * S).stuck_s, None);
        assert_eq!(g.trace(&r[1..2], 20 * S).stuck_s, Some(10.0));
    }
}
