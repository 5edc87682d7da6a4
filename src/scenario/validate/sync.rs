//! A pool's server sync (`[pool.NAME.sync]`): each pool's table checked, and its sync
//! requests given a class of their own, appended after the calls' classes (as a call's
//! are: `call.rs`), so that they run through the lifecycle and its accounting.

use super::check::{MAX_FACTOR, V, bad, index_of, int_in, nonzero_dur, positive, up_to};
use super::class::{profile, retry};
use crate::engine::time::SimTime;
use crate::scenario::raw::*;
use crate::scenario::spec::*;
use indexmap::IndexMap;

/// Validates every pool's `sync` table; fills in each syncing pool's [`SyncCfg`] and returns
/// the sync classes, numbered from `first_class` on.
pub fn syncs(
    raw: &IndexMap<String, RawPool>,
    pools: &mut [PoolCfg],
    pool_names: &[String],
    first_class: usize,
) -> V<Vec<ClassCfg>> {
    let mut classes = Vec::new();
    for (p, (pname, rp)) in raw.iter().enumerate() {
        let Some(rs) = &rp.sync else { continue };
        let path = format!("pool.{pname}.sync");
        let target = index_of(&format!("{path}.pool"), "pool", &rs.pool, pool_names)?;
        let cost = positive(&format!("{path}.cost"), rs.cost.unwrap_or(1.0))
            .and_then(|x| up_to(&format!("{path}.cost"), x, MAX_FACTOR))?;
        let growth = match &rs.growth {
            Some(g) => {
                if g.every.is_some() {
                    return bad(
                        format!("{path}.growth.every"),
                        "a size drifts through the run once; `growth` does not repeat",
                    );
                }
                let g = profile(&format!("{path}.growth"), g)?;
                if let Some(i) = g.points.iter().position(|&(_, f)| f <= 0.0) {
                    return bad(
                        format!("{path}.growth.points.{i}"),
                        "a cost multiplier must be above 0",
                    );
                }
                g
            }
            None => Profile {
                points: vec![],
                every: None,
            },
        };
        let timeout_ns = nonzero_dur(&format!("{path}.timeout"), rs.timeout)?;
        let every_ns = match rs.every {
            Some(e) => Some(nonzero_dur(&format!("{path}.every"), e)?),
            None => None,
        };
        let retry = sync_retry(&path, rs.retry.as_ref())?;
        let max_concurrent = match rs.max_concurrent {
            Some(n) => int_in(&format!("{path}.max_concurrent"), n, 0, 100_000_000)? as u32,
            None => u32::MAX,
        };
        let class = first_class + classes.len();
        classes.push(ClassCfg {
            name: format!("{pname}.sync"),
            rate_per_s: 0.0,
            profile: Profile {
                points: vec![],
                every: None,
            },
            timeout_ns,
            retry: RetryCfg::none(),
            rate_limit: None,
            steps: vec![StepCfg {
                cache: None,
                keys: KeyCount::Fixed(1),
                miss: MissPolicy::default(),
                keyed: false,
                counts_keys: false,
                hedge: None,
                query: QueryCfg {
                    pool: target,
                    endpoint: 0,
                    cost,
                    cost_per_key: 0.0,
                    completion: Completion::default(),
                    fanout: Fanout::One,
                    read: ReadPref::default(),
                    timeout_ns: SimTime::MAX,
                    retry: RetryCfg::none(),
                    grows: !growth.points.is_empty(),
                },
            }],
            call: None,
            sync: Some(p),
            users: None,
        });
        pools[p].sync = Some(Box::new(SyncCfg {
            pool: target,
            class,
            growth,
            every_ns,
            on_start: rs.on_start,
            on_failure: rs.on_failure,
            retry,
            max_concurrent,
        }));
    }
    Ok(classes)
}

/// The delay before a server's next sync after a failure: the retry policy's `backoff`,
/// `base`, `cap` and `jitter` (default a constant 1 s). Attempts are unbounded, so
/// `max_attempts`, `retry_on`, `budget` and `breaker` do not apply; the delay must be above
/// zero, or a sync that fails at once would be retried at the same instant for ever.
fn sync_retry(path: &str, r: Option<&RawRetry>) -> V<RetryCfg> {
    let path = format!("{path}.retry");
    let Some(r) = r else {
        return Ok(RetryCfg {
            max_attempts: u32::MAX,
            backoff: Backoff::Constant,
            base_ns: 1_000_000_000,
            cap_ns: SimTime::MAX,
            ..RetryCfg::none()
        });
    };
    for (key, given) in [
        ("max_attempts", r.max_attempts.is_some()),
        ("retry_on", r.retry_on.is_some()),
        ("budget", r.budget.is_some()),
        ("breaker", r.breaker.is_some()),
    ] {
        if given {
            return bad(
                format!("{path}.{key}"),
                "a server retries its sync until it succeeds; only `backoff`, `base`, `cap` \
                 and `jitter` apply",
            );
        }
    }
    if r.backoff == Backoff::None {
        return bad(
            format!("{path}.backoff"),
            "a sync's retry needs a delay: `constant` or `exponential`, with `base` > 0",
        );
    }
    Ok(RetryCfg {
        max_attempts: u32::MAX,
        ..retry(&path, r)?
    })
}
