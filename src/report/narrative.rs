//! The run told in words: a short list of timed sentences derived from what the run
//! measured (`summary.json`'s `narrative`, shown under each timeline on the report page).
//!
//! A teacher's first question of a timeline is "what happened, and why?". The sentences
//! answer it from the run's own rows, in time order:
//! - how the run starts, by the scenario's health rule (its `[tipping]` measure and
//!   threshold);
//! - when each trigger starts and ends, and when each intervention acts, with the measure
//!   the minute before and the minute after;
//! - when a pool's queue first passes half of its waiting places;
//! - when the measure falls below healthy, with the verdict on the stretch that follows
//!   ([`super::verdict`]: what failed and for what cause) and the sustaining loop's signs
//!   the run shows against the stretch before: retries per request up, a cache's hit ratio
//!   down;
//! - when it recovers, or, at the end, that it did not.
//!
//! A change of health shorter than [`Story::min_stretch_s`] between two stretches of the
//! other state is noise, not a turn of the story: it is told as part of its neighbours.
//! [`narrate`] is a pure function of a [`Story`]; `crate::experiment::run` builds one from
//! a run and its scenario's gauge.

use super::verdict::{Tally, Verdict, classify, shortest_deadline_s};
use crate::engine::number::sig3;
use crate::engine::time::secs_to_ns;
use crate::model::metrics::{Marker, MarkerKind};
use crate::scenario::sweep::Health;
use crate::scenario::{Column, Config, Measure, Owner};
use serde::Serialize;

/// One sentence of a run's narrative.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sentence {
    /// When it happens, seconds from the start of the run.
    pub t_s: f64,
    /// The time for people (`12 min 30 s`).
    pub at: String,
    /// What happened, in words (numbers to 3 significant figures).
    pub text: String,
}

/// A stretch of the run valued by the scenario's measure: a row, or a block of rows (a
/// goodput ratio's block, an SLO window), as the sweep's gauge measures it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stretch {
    pub from_s: f64,
    pub to_s: f64,
    /// The measure over the stretch, if it has one.
    pub value: Option<f64>,
    /// Healthy by the scenario's rule.
    pub healthy: bool,
}

/// What a narrative is told from.
pub struct Story<'a> {
    pub cfg: &'a Config,
    /// The time series' schema and its rows so far.
    pub columns: &'a [Column],
    pub rows: &'a [Vec<f64>],
    /// The triggers and interventions that have started.
    pub markers: &'a [Marker],
    /// The whole run, stretch by stretch, in order.
    pub stretches: &'a [Stretch],
    /// The measure in words (`the goodput ratio of request`).
    pub measure: String,
    pub health: Health,
    /// The class whose requests the verdict tallies (all client classes when none).
    pub class: Option<&'a str>,
    /// Where the rows end, seconds: the run's length once it is over.
    pub end_s: f64,
    /// The run is over (a live run, still going, is told "so far").
    pub finished: bool,
}

impl Story<'_> {
    /// The shortest change of health told as a turn of the story: two rows' worth, and at
    /// least a fiftieth of the run.
    pub fn min_stretch_s(&self) -> f64 {
        let row = match self.rows {
            [a, b, ..] => b[0] - a[0],
            _ => self.end_s,
        };
        (2.0 * row).max(self.end_s / 50.0)
    }
}

/// The most sentences a narrative holds: a short story, not a log. Later sentences past
/// it are summed up in the last one.
pub const MAX_SENTENCES: usize = 16;

/// The run's narrative, in time order (sentences at the same time in the order the module
/// doc lists them).
pub fn narrate(story: &Story) -> Vec<Sentence> {
    let mut out: Vec<(f64, u8, String)> = Vec::new();
    let runs = health_runs(story.stretches, story.min_stretch_s());
    let threshold = match story.health {
        Health::Above(t) => format!("healthy above {}", sig3(t)),
        Health::Below(t) => format!("healthy below {}", sig3(t)),
    };
    // How it starts.
    if let Some(first) = runs.first() {
        let state = if first.healthy {
            "healthy"
        } else {
            "unhealthy"
        };
        out.push((
            0.0,
            0,
            format!(
                "The run starts {state}: {} is {} ({threshold}).",
                story.measure,
                value_words(mean_value(story.stretches, first.from_s, first.to_s)),
            ),
        ));
    }
    // Triggers and interventions.
    for m in story.markers {
        match m.kind {
            MarkerKind::Event => {
                out.push((m.start_s, 1, format!("{} begins.", capital(&m.label))));
                if let Some(end) = m.end_s.filter(|&e| e < story.end_s) {
                    out.push((end, 1, format!("{} ends.", capital(&m.label))));
                }
            }
            MarkerKind::Intervention => {
                let before = mean_value(story.stretches, (m.start_s - 60.0).max(0.0), m.start_s);
                let after = mean_value(story.stretches, m.start_s, m.start_s + 60.0);
                // A live run tells the minute after once it has passed.
                let after = if story.finished || m.start_s + 60.0 <= story.end_s {
                    format!(", {} the minute after", value_words(after))
                } else {
                    String::new()
                };
                let text = if story.stretches.is_empty() {
                    format!("Intervention: {}.", m.label)
                } else {
                    format!(
                        "Intervention: {}. {} was {} the minute before{after}.",
                        m.label,
                        capital(&story.measure),
                        value_words(before),
                    )
                };
                out.push((m.start_s, 1, text));
            }
        }
    }
    // Queues past half their waiting places.
    for (t, text) in queues_half_full(story) {
        out.push((t, 2, text));
    }
    // Falls and recoveries.
    for (k, run) in runs.iter().enumerate() {
        if k == 0 {
            continue;
        }
        let value = value_words(mean_value(story.stretches, run.from_s, run.to_s));
        if run.healthy {
            let stays = if k + 1 == runs.len() && story.finished {
                ", and stays healthy to the end"
            } else {
                ""
            };
            out.push((
                run.from_s,
                3,
                format!("It recovers: {} is back to {value}{stays}.", story.measure),
            ));
        } else {
            let before = &runs[k - 1];
            let why = why(story, (before.from_s, before.to_s), (run.from_s, run.to_s));
            out.push((
                fell_at(story, run),
                3,
                format!(
                    "{} falls below healthy: {value} over the next {}; {why}.",
                    capital(&story.measure),
                    clock(run.to_s - run.from_s),
                ),
            ));
        }
    }
    // How it ends.
    match runs.last() {
        Some(last) if !last.healthy && runs.len() > 1 => {
            let since = story
                .markers
                .iter()
                .filter(|m| m.kind == MarkerKind::Event)
                .filter_map(|m| m.end_s)
                .filter(|&e| e <= story.end_s)
                .fold(None::<f64>, |a, e| Some(a.map_or(e, |a| a.max(e))))
                .map(|e| format!(", {} after the last trigger ended", clock(story.end_s - e)))
                .unwrap_or_default();
            out.push((
                story.end_s,
                4,
                if story.finished {
                    format!("It has not recovered by the end of the run{since}.")
                } else {
                    format!("It has not recovered so far{since}.")
                },
            ));
        }
        Some(last) if !last.healthy => out.push((
            story.end_s,
            4,
            format!(
                "It is unhealthy from the start{}: {}.",
                if story.finished {
                    " to the end"
                } else {
                    " so far"
                },
                verdict_words(story, (0.0, story.end_s))
            ),
        )),
        Some(_) if runs.len() == 1 => out.push((
            story.end_s,
            4,
            if story.finished {
                format!("It stays healthy throughout ({threshold}).")
            } else {
                format!("Healthy so far ({threshold}).")
            },
        )),
        _ => {}
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    if out.len() > MAX_SENTENCES {
        let rest = out.len() - (MAX_SENTENCES - 1);
        let last = out.last().map(|s| s.0).unwrap_or(0.0);
        out.truncate(MAX_SENTENCES - 1);
        let from = out.last().map(|s| s.0).unwrap_or(0.0);
        out.push((
            last,
            4,
            format!(
                "{rest} more turns between {} and {} (see the timeline).",
                clock(from),
                clock(last)
            ),
        ));
    }
    out.into_iter()
        .map(|(t_s, _, text)| Sentence {
            t_s,
            at: clock(t_s),
            text,
        })
        .collect()
}

/// A run of consecutive stretches of one health.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Run {
    from_s: f64,
    to_s: f64,
    healthy: bool,
}

/// When a run of unhealthy stretches begins, for people: its first stretch's start, or
/// the latest trigger that starts inside that first stretch (a stretch is a block of rows:
/// the fall is somewhere inside it, and not before the trigger that starts there).
fn fell_at(story: &Story, run: &Run) -> f64 {
    let first_end = story
        .stretches
        .iter()
        .find(|s| s.from_s >= run.from_s)
        .map_or(run.to_s, |s| s.to_s);
    story
        .markers
        .iter()
        .filter(|m| m.kind == MarkerKind::Event)
        .map(|m| m.start_s)
        .filter(|&t| t > run.from_s && t < first_end)
        .fold(run.from_s, f64::max)
}

/// The stretches joined into runs of one health, a run shorter than
/// [`Story::min_stretch_s`] between two of the other health told as part of them.
fn health_runs(stretches: &[Stretch], least: f64) -> Vec<Run> {
    let join = |xs: Vec<Run>| {
        let mut out: Vec<Run> = Vec::new();
        for r in xs {
            match out.last_mut() {
                Some(l) if l.healthy == r.healthy => l.to_s = r.to_s,
                _ => out.push(r),
            }
        }
        out
    };
    let mut runs = join(
        stretches
            .iter()
            .map(|s| Run {
                from_s: s.from_s,
                to_s: s.to_s,
                healthy: s.healthy,
            })
            .collect(),
    );
    // The shortest inner run first, until every inner run is long enough.
    while let Some(k) = (1..runs.len().saturating_sub(1))
        .filter(|&k| runs[k].to_s - runs[k].from_s < least)
        .min_by(|&a, &b| {
            (runs[a].to_s - runs[a].from_s).total_cmp(&(runs[b].to_s - runs[b].from_s))
        })
    {
        runs[k].healthy = !runs[k].healthy;
        runs = join(runs);
    }
    runs
}

/// The time-weighted mean of the stretches' values inside `[from, to)` (parts of
/// stretches count by their overlap).
fn mean_value(stretches: &[Stretch], from: f64, to: f64) -> Option<f64> {
    let (mut s, mut w) = (0.0, 0.0);
    for st in stretches {
        let overlap = st.to_s.min(to) - st.from_s.max(from);
        if let Some(v) = st.value.filter(|_| overlap > 0.0) {
            s += v * overlap;
            w += overlap;
        }
    }
    (w > 0.0).then(|| s / w)
}

fn value_words(v: Option<f64>) -> String {
    v.map_or_else(|| "without a value".into(), sig3)
}

/// Why a stretch is unhealthy: the verdict on it, and the loop's signs against the
/// stretch before (retries per request, cache hit ratios).
fn why(story: &Story, before: (f64, f64), now: (f64, f64)) -> String {
    let mut parts = vec![verdict_words(story, now)];
    for sign in signs(story, before, now) {
        parts.push(match sign {
            Sign::Retries { class, now, before } => format!(
                "requests of `{}` make {} attempts each ({} before): retries add load",
                story.cfg.classes[class].name,
                sig3(now),
                sig3(before)
            ),
            Sign::HitRatio { cache, now, before } => format!(
                "cache `{}` hits {} of lookups ({} before): misses go to what is behind it",
                story.cfg.caches[cache].name,
                super::verdict::percent(now),
                super::verdict::percent(before)
            ),
        });
    }
    parts.join("; ")
}

/// A sign of a sustaining loop that a stretch shows against the stretch before it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sign {
    /// Requests of a class (index into `Config::classes`: a client's, or a pool call's)
    /// make `now` attempts each, `before` in the stretch before: retries add load.
    Retries { class: usize, now: f64, before: f64 },
    /// A cache's hit ratio fell from `before` to `now`: misses go to what is behind it.
    HitRatio { cache: usize, now: f64, before: f64 },
}

/// The loop's signs of stretch `now` against stretch `before`: attempts per request up
/// to at least 1.1 and by a fifth, a hit ratio down by at least 5 points.
fn signs(story: &Story, before: (f64, f64), now: (f64, f64)) -> Vec<Sign> {
    let mut out = Vec::new();
    let mean = |col: usize, (from, to): (f64, f64)| -> Option<f64> {
        let (mut s, mut w) = (0.0, 0.0);
        for (k, row) in story.rows.iter().enumerate() {
            let start = row[0];
            let end = story.rows.get(k + 1).map_or(story.end_s, |r| r[0]);
            let overlap = end.min(to) - start.max(from);
            if overlap > 0.0 && row[col].is_finite() {
                s += row[col] * overlap;
                w += overlap;
            }
        }
        (w > 0.0).then(|| s / w)
    };
    let cols = story.columns;
    let class_col = |class: usize, m: Measure| {
        cols.iter()
            .position(|c| c.owner == Owner::Class(class) && c.measure == m)
    };
    for (i, class) in story.cfg.classes.iter().enumerate() {
        if story.class.is_some_and(|n| n != class.name) {
            continue;
        }
        let (Some(att), Some(off)) = (
            class_col(i, Measure::Attempts),
            class_col(i, Measure::Offered),
        ) else {
            continue;
        };
        let per = |span| match (mean(att, span), mean(off, span)) {
            (Some(a), Some(o)) if o > 0.0 => Some(a / o),
            _ => None,
        };
        if let (Some(b), Some(n)) = (per(before), per(now))
            && n >= 1.1
            && n >= 1.2 * b
        {
            out.push(Sign::Retries {
                class: i,
                now: n,
                before: b,
            });
        }
    }
    for i in 0..story.cfg.caches.len() {
        let Some(col) = cols
            .iter()
            .position(|c| c.owner == Owner::Cache(i) && c.measure == Measure::HitRatio)
        else {
            continue;
        };
        if let (Some(b), Some(n)) = (mean(col, before), mean(col, now))
            && b - n >= 0.05
        {
            out.push(Sign::HitRatio {
                cache: i,
                now: n,
                before: b,
            });
        }
    }
    out
}

/// What sustains a run's failure, as the run measured it: the one decision that the
/// drawn structure ([`super::structure`]) highlights, from the same signs and verdict as
/// the narrative's "why".
#[derive(Debug, Clone, PartialEq)]
pub enum Sustained {
    /// No health rule (no `[tipping]` measure), or no rows yet: nothing to say.
    Unknown,
    /// Healthy throughout (short noise aside): no loop.
    Healthy,
    /// Unhealthy only while a trigger lasted (recovered as it ended, or still inside it):
    /// nothing sustained the fall.
    Transient,
    /// A fall that outlasted its triggers (or had none): from `since_s` to `until_s` (none:
    /// to the end, not recovered), with the verdict on it, the busiest pool (index into
    /// `Config::pools`) and the loop's signs against the healthy stretch before.
    Loop {
        since_s: f64,
        until_s: Option<f64>,
        verdict: Verdict,
        busiest: Option<usize>,
        signs: Vec<Sign>,
    },
}

/// What sustains the failure of the run a [`Story`] tells: its first stretch of
/// unhealthy rows (joined as [`narrate`] joins them) that lasts longer than
/// [`Story::min_stretch_s`] past the end of the triggers acting on it, the verdict on it
/// and the signs against the stretch before.
pub fn sustained(story: &Story) -> Sustained {
    let runs = health_runs(story.stretches, story.min_stretch_s());
    if runs.is_empty() {
        return Sustained::Unknown;
    }
    let least = story.min_stretch_s();
    for (k, run) in runs.iter().enumerate().filter(|(_, r)| !r.healthy) {
        // The end of the last trigger acting on it (a trigger without an end never ends).
        let trigger_end = story
            .markers
            .iter()
            .filter(|m| m.kind == MarkerKind::Event)
            .filter(|m| m.start_s < run.to_s && m.end_s.is_none_or(|e| e > run.from_s - least))
            .map(|m| m.end_s.unwrap_or(f64::INFINITY))
            .fold(None::<f64>, |a, e| Some(a.map_or(e, |a| a.max(e))));
        if trigger_end.is_some_and(|e| run.to_s - e <= least) {
            continue;
        }
        let now = (run.from_s, run.to_s);
        let tally = tally(story, now);
        return Sustained::Loop {
            since_s: if k > 0 { fell_at(story, run) } else { 0.0 },
            until_s: (k + 1 < runs.len()).then_some(run.to_s),
            verdict: classify(&tally, false),
            busiest: tally.busiest,
            signs: match k {
                0 => vec![],
                k => signs(story, (runs[k - 1].from_s, runs[k - 1].to_s), now),
            },
        };
    }
    if runs.iter().all(|r| r.healthy) {
        Sustained::Healthy
    } else {
        Sustained::Transient
    }
}

/// The tally of a stretch ([`super::verdict`]).
fn tally(story: &Story, (from, to): (f64, f64)) -> Tally {
    let end = secs_to_ns(story.end_s);
    let window = (secs_to_ns(from), secs_to_ns(to).min(end), end);
    Tally {
        deadline_s: shortest_deadline_s(story.cfg),
        ..Tally::of_rows(story.columns, story.rows, window, story.class)
    }
}

/// The verdict on a stretch, in words ([`super::verdict`]).
fn verdict_words(story: &Story, span: (f64, f64)) -> String {
    classify(&tally(story, span), false).to_string()
}

/// When each pool's queue first passes half of its waiting places (pools with a
/// `queue_limit`), told once per pool.
fn queues_half_full(story: &Story) -> Vec<(f64, String)> {
    let mut out = Vec::new();
    for (i, pool) in story.cfg.pools.iter().enumerate() {
        if pool.queue_limit == u32::MAX || pool.queue_limit == 0 {
            continue;
        }
        let Some(q) = story
            .columns
            .iter()
            .position(|c| c.owner == Owner::Pool(i) && c.measure == Measure::QueueLen)
        else {
            continue;
        };
        let servers_col = story
            .columns
            .iter()
            .position(|c| c.owner == Owner::Pool(i) && c.measure == Measure::Servers);
        let fixed = pool.shards as f64 * (1.0 + pool.replicas as f64);
        for row in story.rows {
            let servers = servers_col.map_or(fixed, |c| row[c]).max(1.0);
            let places = servers * pool.queue_limit as f64;
            if row[q].is_finite() && row[q] >= 0.5 * places {
                out.push((
                    row[0],
                    format!(
                        "Pool `{}`'s queue passes half its waiting places: {} of {} queued on average.",
                        pool.name,
                        sig3(row[q]),
                        sig3(places)
                    ),
                ));
                break;
            }
        }
    }
    out
}

/// A time of the run for people: `45 s`, `12 min 30 s`, `2 h 5 min`.
pub fn clock(s: f64) -> String {
    if !s.is_finite() {
        return "never".into();
    }
    if s < 120.0 {
        return format!("{} s", sig3(s.max(0.0)));
    }
    let total = s.round() as u64;
    let (h, m, sec) = (total / 3600, total / 60 % 60, total % 60);
    match (h, m, sec) {
        (0, m, 0) => format!("{m} min"),
        (0, m, sec) => format!("{m} min {sec} s"),
        (h, 0, _) => format!("{h} h"),
        (h, m, _) => format!("{h} h {m} min"),
    }
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A sweep measure's key in words: `goodput_ratio.request` is "the goodput ratio of
/// `request`", `slo.api` "the share of SLO windows `api` meets", a column "`db.utilization`".
pub fn measure_words(key: &str) -> String {
    if let Some(class) = key.strip_prefix("goodput_ratio.") {
        format!("the goodput ratio of `{class}`")
    } else if let Some(class) = key.strip_prefix("slo.") {
        format!("the share of SLO windows `{class}` meets")
    } else {
        format!("`{key}`")
    }
}

#[cfg(test)]
mod tests;
