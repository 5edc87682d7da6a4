//! What a sweep measures of one run, and when the run may stop.
//!
//! The measure is the time-weighted mean, over the *pieces* of the measuring window, of
//! each piece's value; a piece is a stretch of consecutive whole time-series rows:
//! - for a column, one row, valued at the column (rows without one, such as a p99 with
//!   no success, are left out);
//! - for `goodput_ratio.CLASS`, a block of rows at least as long as the class's timeout
//!   (one second without one), valued at its goodput over its offered load as a ratio of
//!   sums, capped at 1 (a block that drains a backlog does not make up for one that
//!   failed; 1 when nothing was offered). A request offered in one row may be answered in
//!   the next: the ratio of a short row scatters around 1 and the cap biases a mean of
//!   them down (a lightly loaded M/M/c "collapsed" with 80 ms rows, issue 21). Rows at
//!   least that long are blocks of one row, valued as before;
//! - for `slo.CLASS`, an SLO window of `tipping.slo.window`, 1 when the class met its
//!   objective over the window (the latency quantile of the window's successes, from the
//!   rows' counts of slow requests, and the error ratio, both ratios of sums), else 0
//!   (`measure/slo.rs`).
//!
//! Every piece's value lies in known bounds ([0, 1] for a ratio, an SLO window, a hit
//! ratio or a breaker's open share, [0, inf) for the other columns) and the window's
//! length is known, so a run can be stopped as soon as no rest of the run could move its
//! measure across the health threshold: [`Gauge::settled`] (a piece still open counts as
//! rest). That is exact, not a heuristic: a stopped run has the class it would have had
//! at the end. Collapsed runs, whose storms are the costly ones, settle a fifth of the way
//! into their window.

use crate::engine::time::{NS_PER_S, SimTime, ns_to_secs};
use crate::report::narrative::Stretch;
use crate::report::verdict::{
    Tally, Verdict, classify, row_spans, shortest_deadline_s, window_spans,
};
use crate::scenario::sweep::{Health, Measure, Tipping};
use crate::scenario::{self, Column, Config};
use crate::stats::plan::Trace;

mod slo;

/// Reads a sweep's measure off a run's time-series rows.
#[derive(Debug, Clone)]
pub struct Gauge {
    kind: Kind,
    /// The class a goodput ratio or an SLO measures, whose requests a verdict tallies.
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
    /// Columns of a class's goodput and offered load, over blocks at least `block` long.
    Ratio {
        good: usize,
        offered: usize,
        block: SimTime,
    },
    /// One column and the bounds of its values.
    Column { at: usize, hi: f64 },
    /// A class's SLO over windows of `window`.
    Slo {
        cols: slo::SloColumns,
        quantile: f64,
        errors: f64,
        window: SimTime,
    },
}

/// Consecutive rows measured as one: a row, a goodput-ratio block or an SLO window.
#[derive(Debug, Clone, Copy)]
struct Piece {
    /// The first row's `time_s`.
    from_s: f64,
    from: SimTime,
    /// Where the last row ends.
    to: SimTime,
    value: Option<f64>,
    /// False for a block or SLO window that is still short of its length and can grow.
    complete: bool,
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
        let col = |class: &str, m: scenario::Measure| at(&format!("{class}.{}", m.suffix()));
        let (kind, class) = match measure {
            Measure::GoodputRatio { class, block_ns } => (
                Kind::Ratio {
                    good: col(class, scenario::Measure::Goodput)?,
                    offered: col(class, scenario::Measure::Offered)?,
                    block: *block_ns,
                },
                Some(class.clone()),
            ),
            Measure::Slo(slo) => (slo::kind(slo, col)?, Some(slo.class.clone())),
            Measure::Column(name) => {
                let i = at(name)?;
                let hi = match columns[i].measure {
                    scenario::Measure::HitRatio | scenario::Measure::BreakerOpen => 1.0,
                    _ => f64::INFINITY,
                };
                (Kind::Column { at: i, hi }, None)
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

    /// The shortest a piece may be: a row is always one whole piece.
    fn piece_ns(&self) -> SimTime {
        match self.kind {
            Kind::Ratio { block, .. } => block,
            Kind::Column { .. } => 0,
            Kind::Slo { window, .. } => window,
        }
    }

    /// The rows, in order with their spans, grouped into pieces: each as few consecutive
    /// rows as reach [`Gauge::piece_ns`]; the last may fall short (complete only when it
    /// reaches the end of the run).
    fn pieces<'a>(&self, spans: impl Iterator<Item = (&'a [f64], SimTime, SimTime)>) -> Vec<Piece> {
        let spans: Vec<_> = spans.collect();
        let least = self.piece_ns();
        let mut out = Vec::new();
        let mut first = 0;
        for (k, &(_, _, next)) in spans.iter().enumerate() {
            let from = spans[first].1;
            let last = k + 1 == spans.len();
            let long = next.saturating_sub(from) >= least;
            if long || last {
                let group = &spans[first..=k];
                out.push(Piece {
                    from_s: group[0].0[0],
                    from,
                    to: next,
                    value: self.value(group).filter(|x| x.is_finite()),
                    complete: long || next >= self.end,
                });
                first = k + 1;
            }
        }
        out
    }

    /// The value of a piece of these rows (with their spans), if it has one.
    fn value(&self, group: &[(&[f64], SimTime, SimTime)]) -> Option<f64> {
        // Each row's rate times its length: a count (seconds, as rates are per second).
        let sum = |i: usize| -> f64 {
            group
                .iter()
                .map(|(row, from, next)| row[i] * next.saturating_sub(*from) as f64)
                .sum::<f64>()
                / NS_PER_S as f64
        };
        match self.kind {
            Kind::Column { at, .. } => Some(group[0].0[at]),
            // One row: its own ratio, as it always was (the same bytes).
            Kind::Ratio { good, offered, .. } if group.len() == 1 => {
                let row = group[0].0;
                Some(if row[offered] > 0.0 {
                    (row[good] / row[offered]).min(1.0)
                } else {
                    1.0
                })
            }
            Kind::Ratio { good, offered, .. } => {
                let o = sum(offered);
                Some(if o > 0.0 {
                    (sum(good) / o).min(1.0)
                } else {
                    1.0
                })
            }
            Kind::Slo {
                cols,
                quantile,
                errors,
                ..
            } => slo::value(cols, quantile, errors, sum),
        }
    }

    /// Where the last failed piece after the trigger ends (the trigger's end when none
    /// failed): a recovery starts there at the earliest. Pieces still open are left out
    /// with `complete_only` (they could yet fail or not).
    fn healthy_from(
        &self,
        rows: &[Vec<f64>],
        to: SimTime,
        trigger_end: SimTime,
        complete_only: bool,
    ) -> SimTime {
        let pieces = self.pieces(row_spans(rows, to));
        let failed = |p: &Piece| (p.complete || !complete_only) && !self.health.is_healthy(p.value);
        pieces
            .iter()
            .rev()
            .find(|p| failed(p))
            .map_or(trigger_end, |p| p.to.max(trigger_end))
    }

    /// The bounds of a piece's value.
    fn bounds(&self) -> (f64, f64) {
        match self.kind {
            Kind::Ratio { .. } | Kind::Slo { .. } => (0.0, 1.0),
            Kind::Column { hi, .. } => (0.0, hi),
        }
    }

    /// The pieces of the window, the last row ending at `to`.
    fn window(&self, rows: &[Vec<f64>], to: SimTime) -> Vec<Piece> {
        self.pieces(window_spans(rows, self.window_start, self.end, to))
    }

    /// The weighted sum and weight (ns) of these pieces' values.
    fn sums<'a>(pieces: impl Iterator<Item = &'a Piece>) -> (f64, f64) {
        let mut acc = (0.0, 0.0);
        for p in pieces {
            let w = p.to.saturating_sub(p.from) as f64;
            if let Some(x) = p.value.filter(|_| w > 0.0) {
                acc = (acc.0 + x * w, acc.1 + w);
            }
        }
        acc
    }

    /// The whole run (not only the window), piece by piece, each valued and judged by the
    /// measure's health rule: what a run's narrative is told from
    /// ([`crate::report::narrative`]).
    pub fn stretches(&self, rows: &[Vec<f64>], to: SimTime) -> Vec<Stretch> {
        self.pieces(row_spans(rows, to))
            .into_iter()
            .map(|p| Stretch {
                from_s: ns_to_secs(p.from),
                to_s: ns_to_secs(p.to),
                value: p.value,
                healthy: self.health.is_healthy(p.value),
            })
            .collect()
    }

    /// The class whose requests the measure and a verdict count, if it names one.
    pub fn class(&self) -> Option<&str> {
        self.class.as_deref()
    }

    /// The measure of a run whose rows end at `to`: `None` when the window holds no value.
    pub fn measure(&self, rows: &[Vec<f64>], to: SimTime) -> Option<f64> {
        let (s, n) = Self::sums(self.window(rows, to).iter());
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
    /// the rest of the window could go (pieces at either bound, or without values) gives
    /// the same health. A block or SLO window still open is part of the rest.
    ///
    /// With `recover_within` R (a triggered run, [`Gauge::triggered`]) the class is whether
    /// the run recovered within R, and a recovery must last R to the end of the run. That
    /// is known early only one way: once a failed piece ends later than R before the end,
    /// no rest can give a healthy stretch of R, so the run cannot recover (nor recover
    /// slowly) and stops. A run that could still recover runs to its end: a later failed
    /// piece could always undo a recovery, so "recovered" is known only there.
    pub fn settled(&self, rows: &[Vec<f64>], now: SimTime) -> bool {
        if let Some((trigger_end, within)) = self.recovery {
            return self.healthy_from(rows, now, trigger_end, true)
                > self.end.saturating_sub(within);
        }
        let pieces = self.window(rows, now);
        let (s, n) = Self::sums(pieces.iter().filter(|p| p.complete));
        let open = pieces.iter().find(|p| !p.complete).map(|p| p.from);
        let rest = self
            .end
            .saturating_sub(open.unwrap_or(now.max(self.window_start))) as f64;
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

    /// How the run went: how long it ran, and from when it was stuck (every piece failed
    /// to its end).
    pub fn trace(&self, rows: &[Vec<f64>], ran_to: SimTime) -> Trace {
        let pieces = self.pieces(row_spans(rows, ran_to));
        let stuck = pieces
            .iter()
            .rposition(|p| self.health.is_healthy(p.value))
            .map_or(0, |k| k + 1);
        // Recovered: healthy from some time after the trigger to the end of the run, at
        // least `recover_within` long.
        let recovered_s = self.recovery.and_then(|(trigger_end, within)| {
            let from = self.healthy_from(rows, ran_to, trigger_end, false);
            (ran_to.saturating_sub(from) >= within).then(|| ns_to_secs(from - trigger_end))
        });
        Trace {
            ran_s: ns_to_secs(ran_to),
            stuck_s: pieces.get(stuck).map(|p| p.from_s),
            recovered_s,
        }
    }
}

#[cfg(test)]
mod tests;
