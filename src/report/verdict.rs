//! The verdict on a stretch of a run, with its cause: healthy, degraded (load refused by
//! the design's own choice while what it admits is served in time) or stuck (work admitted
//! and lost), each from the run's own accounting (its time-series rows).
//!
//! Whether a stretch is healthy at all is the scenario's rule ([`crate::scenario::Health`],
//! the tipping sweep's measure and threshold): this module does not move that line, it
//! says why a stretch that fails it fails. [`classify`] is a pure function of a [`Tally`]
//! (what the stretch offered, served, failed and refused, and how full its busiest pool
//! was), which [`Tally::of_rows`] sums from rows and their schema. The live page's badge,
//! `brink run`'s console line and `index.html` all word a verdict with it.
//!
//! The rule, in order:
//! - healthy by the scenario's rule: [`Verdict::Healthy`];
//! - some load refused (at the rate limit, by load shedding, or at a full queue: the
//!   largest share names the cause), at most [`SERVED_LOSS`] of the offered requests lost
//!   otherwise (failures beyond what the refusals explain), and the busiest pool not stuck
//!   (its queue full of expired work while less than half of what was admitted succeeds):
//!   [`Verdict::Degraded`], with the refused share;
//! - otherwise [`Verdict::Stuck`], with the failed share and its cause: the queue full of
//!   expired work (the busiest pool's queue holds work longer than the shortest deadline
//!   of its callers, by Little's law: mean wait = queue length / arrival rate; or work
//!   dropped because its caller had gone, or served past its own lease), timed out (saturated, the queue shorter than
//!   that), failed (errors: the pools had room), or slow (nothing failed; the measure is a
//!   latency or the like).

use crate::engine::time::{SimTime, ns_to_secs, secs_to_ns};
use crate::scenario::{Column, Config, Measure, Owner};
use std::fmt;

/// A pool at least this busy (busy workers over capacity) counts as saturated.
pub const SATURATED: f64 = 0.98;
/// The most of the offered requests a degraded stretch may lose beyond what it refused.
pub const SERVED_LOSS: f64 = 0.05;
/// A share below this (of offered requests, or of a pool's queries) is not a cause.
const NOTICEABLE: f64 = 0.005;

/// Load the design refuses by its own choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Refused at admission by the class's rate limit (`rejected_per_s`).
    RateLimit,
    /// Refused or dropped by the pool's load shedding (`shed_per_s`).
    Shed,
    /// Refused because the pool's queue was full.
    QueueFull,
}

/// Why admitted work was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Timed out with the pool's queue full of work whose callers have given up (it waits
    /// longer than their deadline), or dropped for that reason.
    ExpiredWork,
    /// Timed out with the pool saturated.
    TimedOut,
    /// Failed while the pools had room: errors, outages, crashed servers.
    Failed,
    /// Nothing failed, yet the stretch is unhealthy by its measure (a latency, say).
    Slow,
}

/// The verdict on a stretch of a run. Shares are fractions in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    Healthy,
    /// Unhealthy by the measure, but by choice: `share` of the load refused by `cause`,
    /// the rest served in time.
    Degraded {
        cause: Refusal,
        share: f64,
    },
    /// Unhealthy: `share` of the offered requests failed, for `cause`.
    Stuck {
        cause: Fault,
        share: f64,
    },
}

impl Verdict {
    /// `healthy`, `degraded` or `stuck`.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Healthy => "healthy",
            Verdict::Degraded { .. } => "degraded",
            Verdict::Stuck { .. } => "stuck",
        }
    }

    /// The cause's name for data (`rate_limit`, `shed`, `queue_full`, `expired_work`,
    /// `timed_out`, `failed`, `slow`); none when healthy.
    pub fn cause(&self) -> Option<&'static str> {
        Some(match self {
            Verdict::Healthy => return None,
            Verdict::Degraded { cause, .. } => match cause {
                Refusal::RateLimit => "rate_limit",
                Refusal::Shed => "shed",
                Refusal::QueueFull => "queue_full",
            },
            Verdict::Stuck { cause, .. } => match cause {
                Fault::ExpiredWork => "expired_work",
                Fault::TimedOut => "timed_out",
                Fault::Failed => "failed",
                Fault::Slow => "slow",
            },
        })
    }

    /// The share refused (degraded) or failed (stuck); none when healthy.
    pub fn share(&self) -> Option<f64> {
        match self {
            Verdict::Healthy => None,
            Verdict::Degraded { share, .. } | Verdict::Stuck { share, .. } => Some(*share),
        }
    }
}

/// A share as a percentage to at most 3 significant figures: `43%`, `6.25%`, `100%`.
pub fn percent(share: f64) -> String {
    format!("{}%", crate::report::timeline::sig3(100.0 * share))
}

/// For people: `healthy`, `degraded: shedding 43% at the rate limit`, `stuck: 62% timed
/// out, queue full of expired work`.
impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Verdict::Healthy => f.write_str("healthy"),
            Verdict::Degraded { cause, share } => {
                let p = percent(share);
                match cause {
                    Refusal::RateLimit => write!(f, "degraded: shedding {p} at the rate limit"),
                    Refusal::Shed => write!(f, "degraded: shedding {p} by load shedding"),
                    Refusal::QueueFull => write!(f, "degraded: rejecting {p} at a full queue"),
                }
            }
            // Stuck with nothing failed yet: the work is still held (re-queued by its
            // server, or waiting past any use), not lost; "0% timed out" would misread it.
            Verdict::Stuck {
                cause: Fault::ExpiredWork,
                share,
            } if share < NOTICEABLE => {
                f.write_str("stuck: none failed yet, queue full of expired work")
            }
            Verdict::Stuck {
                cause: Fault::TimedOut,
                share,
            } if share < NOTICEABLE => f.write_str("stuck: none failed yet, saturated"),
            Verdict::Stuck { cause, share } => {
                let p = percent(share);
                match cause {
                    Fault::ExpiredWork => {
                        write!(f, "stuck: {p} timed out, queue full of expired work")
                    }
                    Fault::TimedOut => write!(f, "stuck: {p} timed out"),
                    Fault::Failed => write!(f, "stuck: {p} failed (errors)"),
                    Fault::Slow => f.write_str("stuck: too slow, none failed"),
                }
            }
        }
    }
}

/// What a stretch of a run did: request counts of its client classes and the state of its
/// busiest pool. Counts may be rates over the same span or totals: only ratios matter.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    /// Requests offered.
    pub offered: f64,
    /// Requests that succeeded.
    pub goodput: f64,
    /// Requests that failed after their last attempt (refused queries included).
    pub failed: f64,
    /// Requests refused at admission by the rate limit.
    pub rate_limited: f64,
    /// Queries sent to the busiest pool.
    pub queries: f64,
    /// Of those, refused or dropped by load shedding.
    pub shed: f64,
    /// Of those, refused at a full queue (0 where the rows do not say).
    pub queue_full: f64,
    /// Of those, dropped from the queue because their caller had gone (0 where the rows do
    /// not say), or served past their own lease (`lease_expired_per_s`).
    pub expired: f64,
    /// The busiest pool's mean utilisation (of its primaries, when that is higher).
    pub utilization: f64,
    /// The busiest pool's time-average queue length.
    pub queue_len: f64,
    /// The shortest deadline (attempt or query timeout) of any caller, seconds; none
    /// without one.
    pub deadline_s: Option<f64>,
    /// The busiest pool, by index into `Config::pools` (none without pools or rows).
    pub busiest: Option<usize>,
}

/// The verdict on a stretch that is `healthy` or not by the scenario's rule, with the
/// cause from its tally (the module doc gives the rule).
pub fn classify(t: &Tally, healthy: bool) -> Verdict {
    if healthy {
        return Verdict::Healthy;
    }
    let of = |x: f64, whole: f64| {
        if whole > 0.0 {
            (x / whole).clamp(0.0, 1.0)
        } else {
            0.0
        }
    };
    let refusals = [
        (Refusal::RateLimit, of(t.rate_limited, t.offered)),
        (Refusal::Shed, of(t.shed, t.queries)),
        (Refusal::QueueFull, of(t.queue_full, t.queries)),
    ];
    let (cause, refused) =
        refusals.into_iter().fold(
            (Refusal::RateLimit, 0.0),
            |a, b| if b.1 > a.1 { b } else { a },
        );
    // A shed or full-queue answer fails its request (after its retries): that much of
    // the failures the refusals explain.
    let unexplained = (t.failed - t.failed.min(t.shed + t.queue_full)).max(0.0);
    let saturated = t.utilization >= SATURATED;
    // By Little's law the queue holds work for queue length / arrival rate: past the
    // callers' deadline, what it serves has been given up on.
    let waits = |d: f64| t.queue_len >= 1.0 && t.queue_len >= d * (t.queries - t.shed);
    let expired = t.deadline_s.is_some_and(waits) || of(t.expired, t.queries) >= NOTICEABLE;
    let wasted = expired && t.goodput < 0.5 * (t.offered - t.rate_limited);
    if refused >= NOTICEABLE && of(unexplained, t.offered) <= SERVED_LOSS && !wasted {
        return Verdict::Degraded {
            cause,
            share: refused,
        };
    }
    let share = of(t.failed, t.offered);
    let cause = if expired {
        Fault::ExpiredWork
    } else if saturated {
        Fault::TimedOut
    } else if share >= NOTICEABLE {
        Fault::Failed
    } else {
        Fault::Slow
    };
    Verdict::Stuck { cause, share }
}

/// Every row with its start and end in ns, the last row ending at `to` (a row ends where
/// the next begins).
pub fn row_spans<'a>(
    rows: &'a [Vec<f64>],
    to: SimTime,
) -> impl Iterator<Item = (&'a [f64], SimTime, SimTime)> + 'a {
    rows.iter().enumerate().map(move |(k, row)| {
        let next = rows.get(k + 1).map_or(to, |r| secs_to_ns(r[0]));
        (row.as_slice(), secs_to_ns(row[0]), next)
    })
}

/// The rows inside a window, with their start and end in ns: those that start at or after
/// `start` and end by `end`, the last row ending at `to`. The one windowing rule of a
/// sweep's measure ([`crate::experiment::measure::Gauge`]) and of a tally.
pub fn window_spans<'a>(
    rows: &'a [Vec<f64>],
    start: SimTime,
    end: SimTime,
    to: SimTime,
) -> impl Iterator<Item = (&'a [f64], SimTime, SimTime)> + 'a {
    row_spans(rows, to).filter(move |&(_, from, next)| from >= start && next <= end)
}

/// The rows inside a window ([`window_spans`]), each with its length in ns.
pub fn window_rows<'a>(
    rows: &'a [Vec<f64>],
    start: SimTime,
    end: SimTime,
    to: SimTime,
) -> impl Iterator<Item = (&'a [f64], f64)> + 'a {
    window_spans(rows, start, end, to)
        .map(|(row, from, next)| (row, next.saturating_sub(from) as f64))
}

impl Tally {
    /// The tally of the rows inside a window ([`window_rows`]) of a run with these
    /// columns: the client classes' requests (of `class` only, when named), and the pool
    /// with the highest mean utilisation (the first of equals). Time-weighted, so rates
    /// come out as rates over the window.
    pub fn of_rows(
        columns: &[Column],
        rows: &[Vec<f64>],
        (start, end, to): (SimTime, SimTime, SimTime),
        class: Option<&str>,
    ) -> Tally {
        let mut t = Tally::default();
        // Per pool: (utilisation, queue, queries, shed, primaries' utilisation, leases
        // expired) sums.
        let mut pools: Vec<[f64; 6]> = Vec::new();
        let mut weight = 0.0;
        let prefix = class.map(|n| format!("{n}."));
        let counted = |c: &Column| prefix.as_ref().is_none_or(|p| c.name.starts_with(p));
        for (row, w) in window_rows(rows, start, end, to) {
            weight += w;
            for (c, &x) in columns.iter().zip(row) {
                let x = if x.is_finite() { x * w } else { 0.0 };
                match c.owner {
                    Owner::Class(_) if counted(c) => match c.measure {
                        Measure::Offered => t.offered += x,
                        Measure::Goodput => t.goodput += x,
                        Measure::Failed => t.failed += x,
                        Measure::Rejected => t.rate_limited += x,
                        _ => {}
                    },
                    Owner::Pool(p) => {
                        if pools.len() <= p {
                            pools.resize(p + 1, [0.0; 6]);
                        }
                        let slot = match c.measure {
                            Measure::Utilization => 0,
                            Measure::QueueLen => 1,
                            Measure::QueriesPerS => 2,
                            Measure::ShedPerS => 3,
                            Measure::PrimaryUtilization => 4,
                            Measure::LeaseExpiredPerS => 5,
                            _ => continue,
                        };
                        pools[p][slot] += x;
                    }
                    _ => {}
                }
            }
        }
        if weight <= 0.0 {
            return t;
        }
        let busy = |p: &[f64; 6]| p[0].max(p[4]);
        let busiest =
            pools
                .iter()
                .enumerate()
                .fold(None::<(usize, &[f64; 6])>, |a, (i, p)| match a {
                    Some(a) if busy(a.1) >= busy(p) => Some(a),
                    _ => Some((i, p)),
                });
        t.busiest = busiest.map(|(i, _)| i);
        let busiest = busiest.map(|(_, p)| *p).unwrap_or_default();
        for x in [
            &mut t.offered,
            &mut t.goodput,
            &mut t.failed,
            &mut t.rate_limited,
        ] {
            *x /= weight;
        }
        let [util, queue, queries, shed, primaries, lapsed] = busiest.map(|x| x / weight);
        (t.utilization, t.queue_len, t.queries, t.shed, t.expired) =
            (util.max(primaries), queue, queries, shed, lapsed);
        t
    }
}

/// The shortest deadline of any caller in `cfg` (a class's attempt timeout or a step's
/// query timeout), seconds; none without one.
pub fn shortest_deadline_s(cfg: &Config) -> Option<f64> {
    cfg.classes
        .iter()
        .flat_map(|c| {
            std::iter::once(c.timeout_ns).chain(c.steps.iter().map(|s| s.query.timeout_ns))
        })
        .filter(|&ns| ns != SimTime::MAX)
        .min()
        .map(ns_to_secs)
}

#[cfg(test)]
mod tests;
