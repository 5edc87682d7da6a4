//! The `[collapse]` section: the level whose up-crossing is collapse (requests in flight,
//! or a pool's queue), checked against the pools; or, without the section, a level
//! derived from the first pool with a queue limit.

use super::check::{V, bad, index_of, int_in};
use crate::scenario::raw::RawScenario;
use crate::scenario::spec::{Collapse, CollapseLevel, Config, PoolCfg};

/// The largest collapse level: each level up costs one round of trajectories.
pub const MAX_LEVEL: i64 = 1_000_000;
/// The most trajectories per level (and direct excursions).
pub const MAX_EFFORT: i64 = 10_000_000;
/// The largest event budget of one estimate.
pub const MAX_EVENTS: i64 = 1_000_000_000_000;
const EFFORT: u64 = 1000;
const BUDGET: u64 = 2_000_000_000;

/// Validates `[collapse]`, or derives it: with no section, collapse is the queue of the
/// first pool with a queue limit reaching a tenth of that pool's waiting places (a queue
/// that deep is well past any healthy operating point, and short of the limit where
/// arrivals are simply refused); no pool with a limit, no collapse level.
pub fn collapse(raw: &RawScenario, config: &Config) -> V<Option<Collapse>> {
    let Some(c) = &raw.collapse else {
        let Some((p, _)) = config
            .pools
            .iter()
            .enumerate()
            .find(|(_, p)| p.queue_limit != u32::MAX && p.queue_limit > 0)
        else {
            return Ok(None);
        };
        // The places the queue can fill (a watermark refuses work before the limit), so the
        // derived level is one the pool can reach.
        let places = reachable(CollapseLevel::Queue(p), config).unwrap_or(u64::MAX);
        return Ok(Some(Collapse {
            level: CollapseLevel::Queue(p),
            at: (places / 10).clamp(1, MAX_LEVEL as u64),
            base: 0,
            step: 1,
            effort: EFFORT,
            cycles: EFFORT,
            max_events: BUDGET,
            derived: true,
        }));
    };
    let (level, at) = match (c.in_flight, c.queue) {
        (Some(_), Some(_)) => {
            return bad(
                "collapse",
                "give either `in_flight` (requests in flight) or `queue` (a pool's queue), not both",
            );
        }
        (None, None) => {
            return bad(
                "collapse",
                "give the collapse level: `in_flight = N` (requests in flight) or `queue = N` with `pool = \"NAME\"`",
            );
        }
        (Some(n), None) => {
            if c.pool.is_some() {
                return bad(
                    "collapse.pool",
                    "only with `queue`: `in_flight` counts the requests of every class",
                );
            }
            let n = int_in("collapse.in_flight", n, 1, MAX_LEVEL)?;
            (CollapseLevel::InFlight, n as u64)
        }
        (None, Some(n)) => {
            let names: Vec<String> = config.pools.iter().map(|p| p.name.clone()).collect();
            let p = match &c.pool {
                Some(name) => index_of("collapse.pool", "pool", name, &names)?,
                None if names.len() == 1 => 0,
                None => {
                    return bad(
                        "collapse.pool",
                        "name the pool whose queue is counted, e.g. pool = \"db\"",
                    );
                }
            };
            let n = int_in("collapse.queue", n, 1, MAX_LEVEL)?;
            (CollapseLevel::Queue(p), n as u64)
        }
    };
    let key = if level == CollapseLevel::InFlight {
        "in_flight"
    } else {
        "queue"
    };
    if let Some(most) = reachable(level, config)
        && at > most
    {
        return bad(
            format!("collapse.{key}"),
            unreachable(level, config, at, most),
        );
    }
    let base = match c.base {
        None => 0,
        Some(b) if (0..at as i64).contains(&b) => b as u64,
        Some(b) => {
            return bad(
                "collapse.base",
                format!(
                    "must be from 0 to {} (below collapse.{key}), not {b}",
                    at - 1
                ),
            );
        }
    };
    let step = int_in("collapse.step", c.step.unwrap_or(1), 1, (at - base) as i64)? as u64;
    let effort = int_in(
        "collapse.effort",
        c.effort.unwrap_or(EFFORT as i64),
        10,
        MAX_EFFORT,
    )?;
    let cycles = int_in(
        "collapse.cycles",
        c.cycles.unwrap_or(effort),
        10,
        MAX_EFFORT,
    )?;
    let max_events = int_in(
        "collapse.max_events",
        c.max_events.unwrap_or(BUDGET as i64),
        1000,
        MAX_EVENTS,
    )?;
    Ok(Some(Collapse {
        level,
        at,
        base,
        step,
        effort: effort as u64,
        cycles: cycles as u64,
        max_events: max_events as u64,
        derived: false,
    }))
}

/// The highest count `level` can reach by the pool's own arithmetic at the operating point,
/// or `None` when nothing bounds it: a pool's queue holds at most its waiting places
/// (`queue_limit`, or a shedding watermark's `high` if lower) on each of its servers (the
/// autoscaler's `max` for a scaled pool); requests in flight are at most the users of
/// closed populations when every class is one and no pool makes calls (a user has one
/// request at a time; a call's request could outlive its caller's).
fn reachable(level: CollapseLevel, config: &Config) -> Option<u64> {
    match level {
        CollapseLevel::Queue(p) => {
            let pool = &config.pools[p];
            let high = pool.shed.and_then(|s| s.watermarks).map(|(high, _)| high);
            let per_server = high.unwrap_or(u32::MAX).min(pool.queue_limit);
            if per_server == u32::MAX {
                return None;
            }
            Some(per_server as u64 * most_servers(pool))
        }
        CollapseLevel::InFlight => {
            if !config.calls.is_empty() {
                return None;
            }
            config.classes.iter().try_fold(0u64, |sum, c| {
                c.users.as_ref().map(|u| sum + u.users as u64)
            })
        }
    }
}

/// Why a collapse level `at` above the `most` that `level` can reach is refused.
fn unreachable(level: CollapseLevel, config: &Config, at: u64, most: u64) -> String {
    let why = match level {
        CollapseLevel::Queue(p) => {
            let pool = &config.pools[p];
            let servers = most_servers(pool);
            let marks = pool.shed.and_then(|s| s.watermarks);
            let per_server = match marks {
                Some((high, _)) if high < pool.queue_limit => {
                    format!("sheds from {high} waiting (shed.watermarks.high)")
                }
                _ => format!("holds at most {} waiting (queue_limit)", pool.queue_limit),
            };
            format!(
                "pool `{}` can never queue {at}: each of its {servers} server(s) {per_server}, {most} in all",
                pool.name
            )
        }
        CollapseLevel::InFlight => format!(
            "never {at} requests in flight: every class is a closed population, {most} users in all, each with one request at a time"
        ),
    };
    if most == 0 {
        return format!("{why}; collapse would never be reached");
    }
    format!("{why}; collapse would never be reached. Give a level from 1 to {most}")
}

/// The most servers `pool` has: all its shards and replicas, or the autoscaler's `max`.
fn most_servers(pool: &PoolCfg) -> u64 {
    let shards = pool
        .autoscale
        .map_or(pool.shards, |a| a.max.max(pool.shards));
    shards as u64 * (1 + pool.replicas as u64)
}
