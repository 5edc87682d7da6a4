//! Server pools and cache tiers: the resources steps query and look up.

use super::check::{V, above_up_to, bad, finite_nonneg, int_in, nonzero_dur, positive, up_to};
use crate::scenario::raw::*;
use crate::scenario::spec::*;

/// Validates `[cache.NAME]` at `path`. With `hit_ratio`, the unknown it solves for (the
/// keyspace or the TTL) is left at a placeholder for [`super::super::hit_ratio::derive`].
pub fn cache(path: &str, name: &str, c: &RawCache) -> V<CacheCfg> {
    let target = match c.hit_ratio {
        None => None,
        Some(h) => Some(hit_target(path, c, h)?),
    };
    let warm = c
        .warm
        .unwrap_or_else(|| target.as_ref().map_or(1.0, |t| t.ratio));
    if !(0.0..=1.0).contains(&warm) {
        return bad(
            format!("{path}.warm"),
            format!("must be a fraction from 0 to 1, not {warm}"),
        );
    }
    let zipf = match c.zipf {
        Some(z) => Some(positive(&format!("{path}.zipf"), z)?),
        None => None,
    };
    let keys = match c.keys {
        Some(k) => int_in(&format!("{path}.keys"), k, 1, MAX_KEYS as i64)? as u32,
        // Solved from the hit ratio once the classes are known.
        None if target.is_some() => 1,
        None => {
            return bad(
                format!("{path}.keys"),
                "missing required key `keys` (the size of the keyspace; or give `hit_ratio` with a `ttl` and brink derives it)",
            );
        }
    };
    let refresh_ahead = c
        .refresh_ahead
        .map(|f| ttl_fraction(path, c, "refresh_ahead", f))
        .transpose()?;
    if refresh_ahead.is_some() && c.ttl_refresh == Some(TtlRefresh::OnHit) {
        return bad(
            format!("{path}.refresh_ahead"),
            "cannot be used with `ttl_refresh = \"on_hit\"`: a hit already starts the key's TTL again, so no key is ever near its expiry when it is looked up",
        );
    }
    let ttl_jitter = c
        .ttl_jitter
        .map(|j| ttl_fraction(path, c, "ttl_jitter", j))
        .transpose()?;
    Ok(CacheCfg {
        name: name.into(),
        nodes: int_in(&format!("{path}.nodes"), c.nodes, 1, 10_000)? as u32,
        spares: int_in(&format!("{path}.spares"), c.spares.unwrap_or(0), 0, 10_000)? as u32,
        keys,
        zipf,
        ttl_ns: c
            .ttl
            .map(|t| nonzero_dur(&format!("{path}.ttl"), t))
            .transpose()?,
        ttl_refresh: c.ttl_refresh.unwrap_or_default(),
        warm,
        vnodes: int_in(&format!("{path}.vnodes"), c.vnodes.unwrap_or(64), 1, 1000)? as u32,
        detect_after_ns: c
            .control_plane
            .as_ref()
            .map(|cp| {
                nonzero_dur(
                    &format!("{path}.control_plane.detect_after"),
                    cp.detect_after,
                )
            })
            .transpose()?,
        target,
        coalesce: c.coalesce.unwrap_or(false),
        refresh_ahead,
        ttl_jitter,
    })
}

/// `key = f` of the tier at `path` (`refresh_ahead`, `ttl_jitter`): a fraction strictly
/// between 0 and 1 of a `ttl` the file gives.
fn ttl_fraction(path: &str, c: &RawCache, key: &str, f: f64) -> V<f64> {
    if !(f > 0.0 && f < 1.0) {
        return bad(
            format!("{path}.{key}"),
            format!("must be a fraction above 0 and below 1 (of the tier's `ttl`), not {f}"),
        );
    }
    if c.ttl.is_none() {
        return bad(
            format!("{path}.{key}"),
            "needs the tier's `ttl` (a fraction of it): give `ttl`",
        );
    }
    Ok(f)
}

/// The most keys a tier may have (given or derived).
pub const MAX_KEYS: u32 = 50_000_000;

/// `hit_ratio = h` at `path`: 0 < h < 1, with exactly one of `ttl` and `keys`.
fn hit_target(path: &str, c: &RawCache, h: f64) -> V<HitTarget> {
    let key = format!("{path}.hit_ratio");
    if !(h > 0.0 && h < 1.0) {
        return bad(
            key,
            format!("must be a fraction above 0 and below 1, not {h}"),
        );
    }
    let solves = match (c.ttl.is_some(), c.keys.is_some()) {
        (true, false) => Solves::Keys,
        (false, true) => Solves::Ttl,
        (true, true) => {
            return bad(
                key,
                "give `ttl` (brink derives the keyspace) or `keys` (it derives the TTL), not both: with both, the hit ratio follows from them",
            );
        }
        (false, false) => {
            return bad(
                key,
                "needs a `ttl` (brink derives the keyspace) or `keys` (it derives the TTL): without expiry a warm tier hits every lookup",
            );
        }
    };
    Ok(HitTarget {
        ratio: h,
        solves,
        steady_start: c.warm.is_none(),
        lookups_per_s: 0.0,
    })
}

/// Validates `[pool.NAME]` at `path`.
pub fn pool(path: &str, name: &str, p: &RawPool) -> V<PoolCfg> {
    let service = super::service::service(&format!("{path}.service"), &p.service)?;
    let error_rate = p.error_rate;
    if !(0.0..=1.0).contains(&error_rate) {
        return bad(
            format!("{path}.error_rate"),
            format!("must be a fraction from 0 to 1, not {error_rate}"),
        );
    }
    let queue_limit = match p.queue_limit {
        Some(q) => int_in(&format!("{path}.queue_limit"), q, 0, 100_000_000)? as u32,
        None => u32::MAX,
    };
    let shed = match &p.shed {
        Some(s) => Some(shed(&format!("{path}.shed"), s, queue_limit, p.discipline)?),
        None => None,
    };
    let autoscale = match &p.autoscale {
        Some(a) => Some(super::autoscale::autoscale(
            &format!("{path}.autoscale"),
            a,
            p.replicas.unwrap_or(0),
        )?),
        None => None,
    };
    if autoscale.is_some() && p.balance != crate::scenario::raw::Balance::Random {
        return bad(
            format!("{path}.balance"),
            "an autoscaled pool spreads work uniformly over its live servers; only \
             `random` is accepted with `autoscale`",
        );
    }
    for (key, given) in [
        ("outlier_ejection", p.outlier_ejection.is_some()),
        ("health_check", p.health_check.is_some()),
        ("peers", p.peers.is_some()),
        ("sync", p.sync.is_some()),
    ] {
        if autoscale.is_some() && given {
            return bad(
                format!("{path}.{key}"),
                format!(
                    "an autoscaled pool's servers come and go; `{key}` is not supported with \
                     `autoscale`"
                ),
            );
        }
    }
    let mut cfg = PoolCfg {
        name: name.into(),
        endpoints: vec![String::new()],
        plans: vec![Vec::new()],
        has_calls: false,
        shed,
        autoscale,
        shards: int_in(&format!("{path}.shards"), p.shards.unwrap_or(1), 1, 100_000)? as u32,
        replicas: int_in(&format!("{path}.replicas"), p.replicas.unwrap_or(0), 0, 100)? as u32,
        workers: int_in(
            &format!("{path}.workers"),
            p.workers.unwrap_or(1),
            1,
            1_000_000,
        )? as u32,
        queue_limit,
        service,
        contention: finite_nonneg(&format!("{path}.contention"), p.contention.unwrap_or(0.0))
            .and_then(|x| up_to(&format!("{path}.contention"), x, 1000.0))?,
        error_rate,
        cancel_expired: p.cancel_expired,
        discipline: p.discipline,
        client: match &p.client {
            Some(c) => Some(ClusterClientCfg {
                refresh_ns: match c.refresh {
                    Some(r) => nonzero_dur(&format!("{path}.client.refresh"), r)?,
                    None => 60 * crate::engine::time::NS_PER_S,
                },
                refresh_on_error: c.refresh_on_error,
            }),
            None => None,
        },
        balance: p.balance,
        latency_threshold_ns: match p.latency_threshold {
            Some(t) => nonzero_dur(&format!("{path}.latency_threshold"), t)?,
            None => 1_000_000,
        },
        drops_propagated: false,
        load_slowdown: match &p.slowdown {
            Some(s) => Some(load_slowdown(&format!("{path}.slowdown"), s)?),
            None => None,
        },
        outlier: None,
        health_check: match &p.health_check {
            Some(h) => Some(health_check(
                &format!("{path}.health_check"),
                h,
                p.sync.is_some(),
            )?),
            None => None,
        },
        lease: match &p.lease {
            Some(l) => Some(super::lease::lease(path, l, p.autoscale.is_some())?),
            None => None,
        },
        peers: None,
        // Filled in by `sync::syncs` once every pool is known.
        sync: None,
    };
    if let Some(x) = &p.peers {
        cfg.peers = Some(peers(&format!("{path}.peers"), x, &cfg)?);
    }
    if let Some(o) = &p.outlier_ejection {
        let servers = cfg.shards * (1 + cfg.replicas);
        cfg.outlier = Some(outlier(&format!("{path}.outlier_ejection"), o, servers)?);
    }
    Ok(cfg)
}

/// Validates `outlier_ejection = { consecutive_errors, eject_for, max_ejected }` at `path`
/// for a pool of `servers` servers: at least one error, a nonzero time, a share in (0, 1]
/// (default 0.1, Envoy's), of which at least one server may be out.
fn outlier(path: &str, o: &RawOutlierEjection, servers: u32) -> V<OutlierCfg> {
    let consecutive_errors = int_in(
        &format!("{path}.consecutive_errors"),
        o.consecutive_errors,
        1,
        1_000_000,
    )? as u32;
    let eject_for_ns = nonzero_dur(&format!("{path}.eject_for"), o.eject_for)?;
    let share = above_up_to(
        &format!("{path}.max_ejected"),
        "the share of the pool's servers",
        o.max_ejected.unwrap_or(0.1),
        0.0,
        1.0,
    )?;
    Ok(OutlierCfg {
        consecutive_errors,
        eject_for_ns,
        max_ejected: ((share * servers as f64).floor() as u32).max(1),
    })
}

/// The largest thread counts of `[pool.NAME.peers]` (`base`, `per_peer`, `limit`): far
/// above any OS limit, and small enough that `base + per_peer x servers` cannot overflow.
const MAX_THREADS: i64 = 1_000_000_000;

/// Validates `[pool.NAME.peers]` at `path` for the pool `cfg` (shards, replicas known):
/// one server per shard, `per_peer` at least 1 (a resource that does not grow with the
/// fleet needs no `peers`), a `limit` of at least 1, and at least one server in the fleet
/// besides the `standby` ones.
fn peers(path: &str, x: &RawPeers, cfg: &PoolCfg) -> V<PeersCfg> {
    if cfg.replicas > 0 {
        return bad(
            path,
            "a pool with `peers` has one server per shard: its servers are the fleet's \
             members; remove `replicas`",
        );
    }
    let servers = cfg.shards as i64;
    let standby = match x.standby {
        Some(s) if s >= servers => {
            return bad(
                format!("{path}.standby"),
                format!(
                    "must leave at least one of the pool's {servers} servers (its `shards`) \
                     in the fleet, not {s}"
                ),
            );
        }
        Some(s) => int_in(&format!("{path}.standby"), s, 0, servers - 1)? as u32,
        None => 0,
    };
    Ok(PeersCfg {
        base: int_in(&format!("{path}.base"), x.base.unwrap_or(0), 0, MAX_THREADS)? as u64,
        per_peer: match x.per_peer {
            0 => {
                return bad(
                    format!("{path}.per_peer"),
                    "must be at least 1: a resource that does not grow with the fleet \
                     cannot be crossed by adding servers (leave `peers` out)",
                );
            }
            n => int_in(&format!("{path}.per_peer"), n, 1, MAX_THREADS)? as u64,
        },
        limit: int_in(&format!("{path}.limit"), x.limit, 1, MAX_THREADS)? as u64,
        learn_within_ns: x.learn_within.map_or(0, |d| d.0),
        standby,
        cells: int_in(&format!("{path}.cells"), x.cells.unwrap_or(1), 1, servers)? as u32,
    })
}

/// The shortest time between health checks: each probes every server of the pool.
const MIN_HEALTH_EVERY_NS: u64 = 1_000_000;

/// Validates `health_check = { every, unhealthy_after, healthy_after, max_outstanding,
/// max_syncs_held, on_unhealthy }` at `path`: `every` at least 1 ms, the thresholds 1 to
/// 1000 (default 3 and 2, HAProxy's `fall` and `rise`), `max_outstanding` and
/// `max_syncs_held` 0 to 1,000,000 (default: none),
/// `on_unhealthy = "restart"` only on a pool with a `sync` (its restart path).
fn health_check(path: &str, h: &RawHealthCheck, has_sync: bool) -> V<HealthCheckCfg> {
    let every_ns = h.every.0;
    if every_ns < MIN_HEALTH_EVERY_NS {
        return bad(
            format!("{path}.every"),
            "must be at least 1ms (each check probes every server of the pool)",
        );
    }
    let threshold = |key: &str, x: Option<i64>, default: i64| -> V<u32> {
        Ok(int_in(&format!("{path}.{key}"), x.unwrap_or(default), 1, 1000)? as u32)
    };
    Ok(HealthCheckCfg {
        every_ns,
        unhealthy_after: threshold("unhealthy_after", h.unhealthy_after, 3)?,
        healthy_after: threshold("healthy_after", h.healthy_after, 2)?,
        max_outstanding: match h.max_outstanding {
            Some(n) => int_in(&format!("{path}.max_outstanding"), n, 0, 1_000_000)? as u32,
            None => u32::MAX,
        },
        max_syncs_held: match h.max_syncs_held {
            Some(n) => int_in(&format!("{path}.max_syncs_held"), n, 0, 1_000_000)? as u32,
            None => u32::MAX,
        },
        on_unhealthy: match h.on_unhealthy {
            OnUnhealthy::Restart if !has_sync => {
                return bad(
                    format!("{path}.on_unhealthy"),
                    "\"restart\" needs the pool's [pool.NAME.sync]: a removed server rejoins through its sync's restart path",
                );
            }
            x => x,
        },
    })
}

/// The largest `per` and `max` of a load slowdown.
const MAX_SLOWDOWN: f64 = 1000.0;

/// Validates a pool's `slowdown = { with, per, max }` at `path`: `per` above 0, `max` above
/// 1 (default 10), both at most 1000.
fn load_slowdown(path: &str, s: &RawLoadSlowdown) -> V<LoadSlowdownCfg> {
    let per = positive(&format!("{path}.per"), s.per)
        .and_then(|x| up_to(&format!("{path}.per"), x, MAX_SLOWDOWN))?;
    let max = above_up_to(
        &format!("{path}.max"),
        "the multiplier's cap",
        s.max.unwrap_or(10.0),
        1.0,
        MAX_SLOWDOWN,
    )?;
    Ok(LoadSlowdownCfg {
        with: s.with,
        per,
        max,
    })
}

/// Validates `[pool.NAME.shed]` at `path` for a pool of this queue limit and discipline.
fn shed(path: &str, s: &RawShed, queue_limit: u32, discipline: Discipline) -> V<ShedCfg> {
    let watermarks = match &s.watermarks {
        None => None,
        Some(w) => {
            let wp = format!("{path}.watermarks");
            let high = int_in(&format!("{wp}.high"), w.high, 1, 100_000_000)? as u32;
            if high > queue_limit {
                return bad(
                    format!("{wp}.high"),
                    format!(
                        "{high} is above the pool's queue_limit ({queue_limit}): the queue would be full before shedding starts"
                    ),
                );
            }
            let low = match w.low {
                Some(l) => int_in(&format!("{wp}.low"), l, 0, 100_000_000)? as u32,
                None => high / 2,
            };
            if low >= high {
                return bad(
                    format!("{wp}.low"),
                    format!("must be below `high` ({high}), not {low}"),
                );
            }
            Some((high, low))
        }
    };
    let codel = match &s.codel {
        None => None,
        Some(c) => {
            let cp = format!("{path}.codel");
            let target_ns = nonzero_dur(&format!("{cp}.target"), c.target)?;
            let interval_ns = nonzero_dur(&format!("{cp}.interval"), c.interval)?;
            if target_ns > interval_ns {
                return bad(
                    format!("{cp}.target"),
                    "must not exceed `interval` (Facebook's defaults: target 5ms, interval 100ms)",
                );
            }
            Some(CodelCfg {
                target_ns,
                interval_ns,
            })
        }
    };
    if s.adaptive_lifo && codel.is_none() {
        return bad(
            format!("{path}.adaptive_lifo"),
            "switches to LIFO when CoDel sees a standing queue; add `codel = { target = \"5ms\", interval = \"100ms\" }`",
        );
    }
    if s.adaptive_lifo && discipline == Discipline::Lifo {
        return bad(
            format!("{path}.adaptive_lifo"),
            "the pool's discipline is already `lifo`",
        );
    }
    if watermarks.is_none() && codel.is_none() {
        return bad(
            path,
            "sheds nothing: give `watermarks = { high = N, low = M }` or `codel = { target = \"5ms\", interval = \"100ms\" }`",
        );
    }
    Ok(ShedCfg {
        watermarks,
        codel,
        adaptive_lifo: s.adaptive_lifo,
    })
}
