//! Triggers: the time-triggered `[event.NAME]` sections (slowdowns, outages, bursts, cache
//! node restarts, partitions, flushes, crashes, fail-fast servers, crash loops).

use super::check::{self, Problem, V, bad, index_of, int_in, nonzero_dur, positive, short, up_to};
use crate::engine::time::SimTime;
use crate::scenario::raw::*;
use crate::scenario::spec::*;

/// Validates `[event.NAME]` at `path`: only the keys its `kind` takes, names resolved
/// against the validated pools and caches and the class names.
pub fn trigger(
    path: &str,
    name: &str,
    e: &RawEvent,
    pools: &[PoolCfg],
    classes: &[String],
    caches: &[CacheCfg],
) -> V<TriggerCfg> {
    let (kind_name, allowed): (&str, &[&str]) = match e.kind {
        RawEventKind::Slowdown => ("slowdown", &["pool", "factor", "for"]),
        RawEventKind::Outage => ("outage", &["pool", "for"]),
        RawEventKind::Burst => ("burst", &["class", "clients", "spread"]),
        RawEventKind::RollingRestart => (
            "rolling_restart",
            &["cache", "fraction", "interval", "down_for"],
        ),
        RawEventKind::Partition => ("partition", &["cache", "fraction", "for"]),
        RawEventKind::Flush => ("flush", &["cache", "fraction"]),
        RawEventKind::Crash => ("crash", &["pool", "shard", "replica", "for"]),
        RawEventKind::FailFast => (
            "fail_fast",
            &["pool", "shard", "replica", "fraction", "for"],
        ),
        RawEventKind::AddServers => ("add_servers", &["pool", "count", "spread", "for"]),
        RawEventKind::Restart => ("restart", &["pool"]),
        RawEventKind::Resync => ("resync", &["pool", "fraction", "for"]),
        RawEventKind::CrashLoop => ("crash_loop", &["pool", "for"]),
    };
    let given = [
        ("pool", e.pool.is_some()),
        ("factor", e.factor.is_some()),
        ("for", e.for_.is_some()),
        ("class", e.class.is_some()),
        ("clients", e.clients.is_some()),
        ("spread", e.spread.is_some()),
        ("cache", e.cache.is_some()),
        ("fraction", e.fraction.is_some()),
        ("interval", e.interval.is_some()),
        ("down_for", e.down_for.is_some()),
        ("shard", e.shard.is_some()),
        ("replica", e.replica.is_some()),
        ("count", e.count.is_some()),
    ];
    for (key, present) in given {
        if present && !allowed.contains(&key) {
            return bad(
                format!("{path}.{key}"),
                format!(
                    "does not apply to a {kind_name} event (it takes: {})",
                    allowed.join(", ")
                ),
            );
        }
    }
    let need = |key: &str| -> Problem {
        (
            format!("{path}.{key}"),
            format!("a {kind_name} event needs `{key}`"),
        )
    };
    let pool_names: Vec<String> = pools.iter().map(|p| p.name.clone()).collect();
    let cache_names: Vec<String> = caches.iter().map(|c| c.name.clone()).collect();
    // The component a `key` (pool, cache, class) names: it must be given and exist.
    let find = |key: &str, given: &Option<String>, known: &[String]| -> V<usize> {
        let name = given.as_ref().ok_or_else(|| need(key))?;
        index_of(&format!("{path}.{key}"), key, name, known)
    };
    // The one pool an event names (only a crash loop takes a list).
    let find_pool = || match &e.pool {
        Some(RawNames::Many(_)) => bad(
            format!("{path}.pool"),
            format!(
                "{} {kind_name} event takes one pool name, not a list (only a crash_loop takes several)",
                if kind_name == "outage" { "an" } else { "a" }
            ),
        ),
        Some(RawNames::One(name)) => index_of(&format!("{path}.pool"), "pool", name, &pool_names),
        None => Err(need("pool")),
    };
    let find_cache = || find("cache", &e.cache, &cache_names);
    let for_dur = || -> V<SimTime> {
        nonzero_dur(&format!("{path}.for"), e.for_.ok_or_else(|| need("for"))?)
    };
    // The number of cache nodes a fraction covers (at least one).
    let nodes_of = |cache: usize| -> V<u32> {
        let f = e.fraction.ok_or_else(|| need("fraction"))?;
        if !(f > 0.0 && f <= 1.0) {
            return bad(
                format!("{path}.fraction"),
                format!("must be a fraction in (0, 1], not {f}"),
            );
        }
        Ok(((f * caches[cache].nodes as f64).round() as u32).max(1))
    };
    // The server a crash or fail-fast names: `shard` (required) and `replica` (default 0,
    // the primary) of `pool`.
    let server_of = || -> V<(usize, u32)> {
        let pool = find_pool()?;
        let p = &pools[pool];
        let shard = int_in(
            &format!("{path}.shard"),
            e.shard.ok_or_else(|| need("shard"))?,
            0,
            p.shards as i64 - 1,
        )? as u32;
        let replica = int_in(
            &format!("{path}.replica"),
            e.replica.unwrap_or(0),
            0,
            p.replicas as i64,
        )? as u32;
        Ok((pool, shard * (1 + p.replicas) + replica))
    };
    // The pool an `add_servers` or `restart` event names: one with `peers`, and its
    // standby servers.
    let peers_pool = || -> V<(usize, u32)> {
        let pool = find_pool()?;
        match pools[pool].peers {
            Some(pc) => Ok((pool, pc.standby)),
            None => bad(
                format!("{path}.pool"),
                format!(
                    "needs a pool with `[pool.{}.peers]`: the {kind_name} event acts on its fleet",
                    pools[pool].name
                ),
            ),
        }
    };
    let (kind, for_ns) = match e.kind {
        RawEventKind::Slowdown => {
            let fp = format!("{path}.factor");
            let factor = positive(&fp, e.factor.ok_or_else(|| need("factor"))?)
                .and_then(|x| up_to(&fp, x, MAX_SLOWDOWN))?;
            if factor < 1.0 / MAX_SLOWDOWN {
                return bad(
                    fp,
                    format!(
                        "must be at least {:e}, not {}",
                        1.0 / MAX_SLOWDOWN,
                        short(factor)
                    ),
                );
            }
            (
                TriggerKind::Slowdown {
                    pool: find_pool()?,
                    factor,
                },
                for_dur()?,
            )
        }
        RawEventKind::Outage => (TriggerKind::Outage { pool: find_pool()? }, for_dur()?),
        RawEventKind::Burst => {
            let class = find("class", &e.class, classes)?;
            let clients = int_in(
                &format!("{path}.clients"),
                e.clients.ok_or_else(|| need("clients"))?,
                1,
                100_000_000,
            )?;
            let spread = e.spread.ok_or_else(|| need("spread"))?.0;
            (
                TriggerKind::Burst {
                    class,
                    clients: clients as u64,
                },
                spread,
            )
        }
        RawEventKind::RollingRestart => {
            let cache = find_cache()?;
            let nodes = nodes_of(cache)?;
            let interval_ns = nonzero_dur(
                &format!("{path}.interval"),
                e.interval.ok_or_else(|| need("interval"))?,
            )?;
            let down_for_ns = nonzero_dur(
                &format!("{path}.down_for"),
                e.down_for.ok_or_else(|| need("down_for"))?,
            )?;
            let length = interval_ns
                .saturating_mul(nodes as u64 - 1)
                .saturating_add(down_for_ns);
            (
                TriggerKind::RollingRestart {
                    cache,
                    nodes,
                    interval_ns,
                    down_for_ns,
                },
                length,
            )
        }
        RawEventKind::Partition => {
            let cache = find_cache()?;
            (
                TriggerKind::Partition {
                    cache,
                    nodes: nodes_of(cache)?,
                },
                for_dur()?,
            )
        }
        RawEventKind::Flush => {
            let cache = find_cache()?;
            (
                TriggerKind::Flush {
                    cache,
                    nodes: nodes_of(cache)?,
                },
                0,
            )
        }
        RawEventKind::Crash => {
            let (pool, server) = server_of()?;
            (TriggerKind::Crash { pool, server }, for_dur()?)
        }
        RawEventKind::FailFast => {
            let (pool, server) = server_of()?;
            let fraction = e.fraction.unwrap_or(1.0);
            if !(fraction > 0.0 && fraction <= 1.0) {
                return bad(
                    format!("{path}.fraction"),
                    format!("must be a fraction in (0, 1], not {fraction}"),
                );
            }
            (
                TriggerKind::FailFast {
                    pool,
                    server,
                    fraction,
                },
                for_dur()?,
            )
        }
        RawEventKind::AddServers => {
            let (pool, standby) = peers_pool()?;
            let count = e.count.ok_or_else(|| need("count"))?;
            if !(1..=standby as i64).contains(&count) {
                return bad(
                    format!("{path}.count"),
                    format!(
                        "must be from 1 to the pool's `peers.standby` ({standby}), not \
                         {count}: only standby servers can join the fleet"
                    ),
                );
            }
            let count = count as u32;
            let for_ns = for_dur()?;
            let spread_ns = e.spread.map_or(0, |d| d.0);
            if spread_ns >= for_ns {
                return bad(
                    format!("{path}.spread"),
                    "must be shorter than `for`: the servers leave at the event's end, \
                     after the last has joined",
                );
            }
            (
                TriggerKind::AddServers {
                    pool,
                    count,
                    spread_ns,
                },
                for_ns,
            )
        }
        RawEventKind::Restart => (
            TriggerKind::Restart {
                pool: peers_pool()?.0,
            },
            0,
        ),
        RawEventKind::Resync => {
            let pool = find_pool()?;
            if pools[pool].sync.is_none() {
                return bad(
                    format!("{path}.pool"),
                    format!(
                        "pool `{}` has no `[pool.{}.sync]`; a resync event makes a syncing \
                         pool's servers sync at once",
                        pools[pool].name, pools[pool].name
                    ),
                );
            }
            let fraction = e.fraction.unwrap_or(1.0);
            if !(fraction > 0.0 && fraction <= 1.0) {
                return bad(
                    format!("{path}.fraction"),
                    format!("must be a fraction in (0, 1], not {fraction}"),
                );
            }
            let n = pools[pool].shards * (1 + pools[pool].replicas);
            let servers = ((fraction * n as f64).round() as u32).clamp(1, n);
            let spread = match e.for_ {
                Some(d) => nonzero_dur(&format!("{path}.for"), d)?,
                None => 0,
            };
            (TriggerKind::Resync { pool, servers }, spread)
        }
        RawEventKind::CrashLoop => {
            let pools = crash_loop_pools(
                &format!("{path}.pool"),
                e.pool.as_ref().ok_or_else(|| need("pool"))?,
                pools,
            )?;
            (TriggerKind::CrashLoop { pools }, for_dur()?)
        }
    };
    let every_ns = match e.every {
        Some(ev) => {
            let ev = nonzero_dur(&format!("{path}.every"), ev)?;
            if ev <= for_ns {
                return bad(
                    format!("{path}.every"),
                    "must be longer than the event itself",
                );
            }
            Some(ev)
        }
        None => None,
    };
    Ok(TriggerCfg {
        name: name.into(),
        label: match &e.label {
            Some(l) => {
                check::text(&format!("{path}.label"), l, false)?;
                l.clone()
            }
            None => name.to_string(),
        },
        kind,
        at_ns: e.at.0,
        for_ns,
        every_ns,
        enabled: e.enabled,
    })
}

/// The pools a crash loop's `pool` (at `path`) names: at least one, each once, each a
/// pool whose servers restart by their own sync (`[pool.NAME.sync]` with `on_start` and
/// `on_failure = "restart"`), since the loop is a sync that crashes instead of serving.
fn crash_loop_pools(path: &str, names: &RawNames, pools: &[PoolCfg]) -> V<Vec<usize>> {
    let named: Vec<(String, &String)> = match names {
        RawNames::One(n) => vec![(path.to_string(), n)],
        RawNames::Many(ns) => ns
            .iter()
            .enumerate()
            .map(|(i, n)| (format!("{path}.{i}"), n))
            .collect(),
    };
    if named.is_empty() {
        return bad(path, "a crash_loop needs at least one pool");
    }
    let known: Vec<String> = pools.iter().map(|p| p.name.clone()).collect();
    let mut out = Vec::with_capacity(named.len());
    for (at, name) in named {
        let p = index_of(&at, "pool", name, &known)?;
        if out.contains(&p) {
            return bad(at, format!("names pool `{name}` a second time"));
        }
        let missing = match pools[p].sync.as_deref() {
            None => Some(format!("has no `[pool.{name}.sync]`")),
            Some(s) if !s.on_start => Some(format!(
                "does not sync on start (`pool.{name}.sync.on_start = false`)"
            )),
            Some(s) if s.on_failure != OnFailure::Restart => Some(format!(
                "steps out on a failed sync (`pool.{name}.sync.on_failure = \"step_out\"`)"
            )),
            Some(_) => None,
        };
        if let Some(missing) = missing {
            return bad(
                at,
                format!(
                    "pool `{name}` {missing}; a crash loop needs servers that read their data when they start and crash and restart when that fails (`on_start = true`, `on_failure = \"restart\"`)"
                ),
            );
        }
        out.push(p);
    }
    Ok(out)
}

/// The largest slowdown factor (and the inverse of the smallest).
pub const MAX_SLOWDOWN: f64 = 1e6;
/// The largest product of a pool's slowdown factors (each above 1, or its inverse below 1):
/// however the slowdowns overlap, the pool's service times are multiplied by at most this
/// or divided by at most this, and each slowdown's end undoes its start.
pub const MAX_SLOWDOWN_PRODUCT: f64 = 1e9;

/// Refuses slowdowns of one pool whose factors, multiplied as they would be if all
/// overlapped, leave the range 1/[`MAX_SLOWDOWN_PRODUCT`] to [`MAX_SLOWDOWN_PRODUCT`].
pub fn slowdown_products(triggers: &[TriggerCfg], pools: &[PoolCfg]) -> V<()> {
    for (p, cfg) in pools.iter().enumerate() {
        let mut product = 1.0f64;
        for t in triggers {
            if let TriggerKind::Slowdown { pool, factor } = t.kind
                && pool == p
            {
                product *= factor.max(1.0 / factor);
                if product > MAX_SLOWDOWN_PRODUCT {
                    return bad(
                        format!("event.{}.factor", t.name),
                        format!(
                            "the slowdowns of pool `{}` multiply to more than {MAX_SLOWDOWN_PRODUCT:e} (each factor, or its inverse below 1, counts) if they overlap; use smaller factors",
                            cfg.name
                        ),
                    );
                }
            }
        }
    }
    Ok(())
}

/// Resolves an `[[at]]` entry's `fire = "NAME"` at `time`: the index of trigger `NAME`,
/// refused when that occurrence (from `time`, lasting the event's `for`) would overlap
/// another of the same event: one scheduled by its `at`/`every` (switched on or not) or
/// fired by an earlier entry (`earlier`, in time order). A running event is not started
/// twice: its end undoes its start once.
pub fn fired_trigger(
    triggers: &[TriggerCfg],
    name: &str,
    time: SimTime,
    duration: SimTime,
    earlier: &[Intervention],
) -> Result<usize, String> {
    let Some(e) = triggers.iter().position(|t| t.name == name) else {
        let names: Vec<&str> = triggers.iter().map(|t| t.name.as_str()).collect();
        let list = if names.is_empty() {
            "none".to_string()
        } else {
            super::listing(&names)
        };
        return Err(format!(
            "no event `{name}` to fire (the file defines: {list}){}",
            super::did_you_mean(name, names)
        ));
    };
    let t = &triggers[e];
    // Two occurrences of one event overlap when they start less than its length apart (an
    // instant event, such as a flush, only when they start together).
    let span = t.for_ns.max(1);
    let clash = |start: SimTime| start < duration && start.abs_diff(time) < span;
    // The scheduled occurrences nearest to `time`: the last one at or before it and the
    // next one after it.
    let nearest = match t.every_ns {
        None => vec![t.at_ns],
        Some(p) if time >= t.at_ns => {
            let k = (time - t.at_ns) / p;
            let before = t.at_ns.saturating_add(k.saturating_mul(p));
            vec![before, before.saturating_add(p)]
        }
        Some(_) => vec![t.at_ns],
    };
    if let Some(s) = nearest.into_iter().find(|&s| clash(s)) {
        return Err(format!(
            "event `{name}` would still be running from its own schedule (an occurrence starts at {}); fire it when it is not running",
            crate::engine::time::format_duration(s)
        ));
    }
    if let Some(iv) = earlier
        .iter()
        .find(|iv| iv.fire == Some(e) && clash(iv.time))
    {
        return Err(format!(
            "event `{name}` would still be running: an earlier [[at]] entry fires it at {}; fire it when it is not running",
            crate::engine::time::format_duration(iv.time)
        ));
    }
    Ok(e)
}
