//! The second stage of reading a scenario: checks every value and resolves names, turning
//! a [`RawScenario`] into the [`Config`] the model trusts.

use super::raw::*;
use super::spec::*;
use crate::engine::time::SimTime;

/// A validation failure: the dotted key path and what is wrong.
pub type Problem = (String, String);
type V<T> = Result<T, Problem>;

fn bad<T>(path: impl Into<String>, msg: impl Into<String>) -> V<T> {
    Err((path.into(), msg.into()))
}

/// The closest of `candidates` to `name`, if any is close enough to be a likely typo.
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(name, c), c))
        .filter(|(score, _)| *score >= 0.75)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

fn unknown_name(path: &str, what: &str, name: &str, known: &[String]) -> Problem {
    let list = known
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let hint = match nearest(name, known.iter().map(|s| s.as_str())) {
        Some(n) => format!("; did you mean `{n}`?"),
        None => String::new(),
    };
    (
        path.into(),
        format!("no {what} named `{name}` (known: {list}){hint}"),
    )
}

fn finite_nonneg(path: &str, x: f64) -> V<f64> {
    if !x.is_finite() || x < 0.0 {
        return bad(path, format!("must be a finite number >= 0, not {x}"));
    }
    Ok(x)
}

fn positive(path: &str, x: f64) -> V<f64> {
    if !x.is_finite() || x <= 0.0 {
        return bad(path, format!("must be a finite number > 0, not {x}"));
    }
    Ok(x)
}

fn int_in(path: &str, x: i64, lo: i64, hi: i64) -> V<i64> {
    if x < lo || x > hi {
        return bad(
            path,
            format!("must be a whole number from {lo} to {hi}, not {x}"),
        );
    }
    Ok(x)
}

fn nonzero_dur(path: &str, d: Dur) -> V<SimTime> {
    if d.0 == 0 {
        return bad(path, "must be longer than zero");
    }
    Ok(d.0)
}

/// Scenario-level facts besides the configuration.
pub struct Meta {
    pub title: Option<String>,
    pub description: Option<String>,
    pub case: Option<String>,
    pub seed: u64,
    pub duration: SimTime,
    pub step: SimTime,
    pub zoom: Option<(SimTime, SimTime)>,
}

/// Validates the whole file.
pub fn validate(raw: &RawScenario) -> V<(Meta, Config)> {
    let duration = nonzero_dur("duration", raw.duration)?;
    let step = match raw.metrics.step {
        Some(s) => nonzero_dur("metrics.step", s)?,
        None => (duration / 1000).max(1),
    };
    if duration / step > 1_000_000 {
        return bad(
            "metrics.step",
            "gives more than 1,000,000 time-series rows; make it longer",
        );
    }
    let zoom = match raw.metrics.zoom {
        Some((a, b)) if a.0 >= b.0 => {
            return bad("metrics.zoom", "must be [from, to] with from < to");
        }
        // A window past a shortened run (a sweep, --set duration) is clipped or dropped.
        Some((a, _)) if a.0 >= duration => None,
        Some((a, b)) => Some((a.0, b.0.min(duration))),
        None => None,
    };
    let pool_names: Vec<String> = raw.pool.keys().cloned().collect();
    let class_names: Vec<String> = raw.class.keys().cloned().collect();
    let mut pools = Vec::new();
    for (name, p) in &raw.pool {
        pools.push(pool(&format!("pool.{name}"), name, p)?);
    }
    let cache_names: Vec<String> = raw.cache.keys().cloned().collect();
    let mut caches = Vec::new();
    for (name, c) in &raw.cache {
        caches.push(cache(&format!("cache.{name}"), name, c)?);
    }
    let mut classes = Vec::new();
    for (name, c) in &raw.class {
        classes.push(class(
            &format!("class.{name}"),
            name,
            c,
            &pool_names,
            &cache_names,
        )?);
    }
    if classes.is_empty() {
        return bad(
            "class",
            "the scenario has no request class; add one, e.g. [class.request]",
        );
    }
    let mut events = Vec::new();
    for (name, e) in &raw.event {
        events.push(event(
            &format!("event.{name}"),
            name,
            e,
            &pools,
            &class_names,
            &caches,
        )?);
    }
    let meta = Meta {
        title: raw.title.clone(),
        description: raw.description.clone(),
        case: raw.case.clone(),
        seed: raw.seed.unwrap_or(1),
        duration,
        step,
        zoom,
    };
    Ok((
        meta,
        Config {
            classes,
            pools,
            caches,
            triggers: events,
        },
    ))
}

fn class(path: &str, name: &str, c: &RawClass, pools: &[String], caches: &[String]) -> V<ClassCfg> {
    let rate = finite_nonneg(&format!("{path}.rate"), c.rate)?;
    let profile = match &c.profile {
        None => Profile {
            points: vec![],
            every: None,
        },
        Some(p) => profile(&format!("{path}.profile"), p)?,
    };
    let timeout_ns = match c.timeout {
        Some(t) => nonzero_dur(&format!("{path}.timeout"), t)?,
        None => SimTime::MAX,
    };
    let retry = retry(&format!("{path}.retry"), &c.retry)?;
    let rate_limit = c
        .rate_limit
        .as_ref()
        .map(|b| bucket(&format!("{path}.rate_limit"), b))
        .transpose()?;
    if c.steps.is_empty() {
        return bad(
            format!("{path}.steps"),
            "a class needs at least one step, e.g. steps = [{ query = \"server\" }]",
        );
    }
    let mut steps = Vec::new();
    for (i, s) in c.steps.iter().enumerate() {
        steps.push(step(&format!("{path}.steps.{i}"), s, pools, caches)?);
    }
    Ok(ClassCfg {
        name: name.into(),
        rate_per_s: rate,
        profile,
        timeout_ns,
        retry,
        rate_limit,
        steps,
    })
}

fn profile(path: &str, p: &RawProfile) -> V<Profile> {
    if p.points.is_empty() {
        return bad(
            format!("{path}.points"),
            "needs at least one [time, factor] point",
        );
    }
    for (i, (t, f)) in p.points.iter().enumerate() {
        finite_nonneg(&format!("{path}.points.{i}"), *f)?;
        if i > 0 && t.0 <= p.points[i - 1].0.0 {
            return bad(
                format!("{path}.points.{i}"),
                "times must increase from one point to the next",
            );
        }
    }
    let every = match p.every {
        Some(e) => {
            let e = nonzero_dur(&format!("{path}.every"), e)?;
            if p.points.last().is_some_and(|l| l.0.0 > e) {
                return bad(
                    format!("{path}.every"),
                    "the profile's points must lie within one period",
                );
            }
            Some(e)
        }
        None => None,
    };
    Ok(Profile {
        points: p.points.iter().map(|(t, f)| (t.0, *f)).collect(),
        every,
    })
}

fn bucket(path: &str, b: &RawTokenBucket) -> V<TokenBucketCfg> {
    let rate = finite_nonneg(&format!("{path}.rate"), b.rate)?;
    let burst = match b.burst {
        Some(x) => {
            let x = finite_nonneg(&format!("{path}.burst"), x)?;
            if x < 1.0 {
                return bad(format!("{path}.burst"), "must be at least 1 (one token)");
            }
            x
        }
        None => rate.max(1.0),
    };
    Ok(TokenBucketCfg {
        rate_per_s: rate,
        burst,
    })
}

fn retry(path: &str, r: &RawRetry) -> V<RetryCfg> {
    let max_attempts = int_in(
        &format!("{path}.max_attempts"),
        r.max_attempts.unwrap_or(1),
        1,
        1000,
    )? as u32;
    let base_ns = r.base.map(|d| d.0).unwrap_or(0);
    if r.backoff != Backoff::None && base_ns == 0 {
        return bad(
            format!("{path}.base"),
            "a constant or exponential backoff needs `base` > 0, e.g. \"100ms\"",
        );
    }
    let cap_ns = match r.cap {
        Some(c) => {
            if c.0 < base_ns {
                return bad(format!("{path}.cap"), "must be at least `base`");
            }
            c.0
        }
        None => SimTime::MAX,
    };
    if r.backoff == Backoff::None && r.jitter != Jitter::None {
        return bad(
            format!("{path}.jitter"),
            "jitter needs a backoff (constant or exponential)",
        );
    }
    let budget = r
        .budget
        .as_ref()
        .map(|b| bucket(&format!("{path}.budget"), b))
        .transpose()?;
    let breaker = match &r.breaker {
        None => None,
        Some(b) => {
            let p = format!("{path}.breaker");
            let ratio = b.failure_ratio;
            if !(ratio > 0.0 && ratio <= 1.0) {
                return bad(
                    format!("{p}.failure_ratio"),
                    format!("must be in (0, 1], not {ratio}"),
                );
            }
            Some(BreakerCfg {
                failure_ratio: ratio,
                window_ns: nonzero_dur(&format!("{p}.window"), b.window)?,
                min_requests: int_in(
                    &format!("{p}.min_requests"),
                    b.min_requests.unwrap_or(10),
                    1,
                    1 << 30,
                )? as u32,
                open_for_ns: nonzero_dur(&format!("{p}.open_for"), b.open_for)?,
            })
        }
    };
    Ok(RetryCfg {
        max_attempts,
        backoff: r.backoff,
        base_ns,
        cap_ns,
        jitter: r.jitter,
        budget,
        breaker,
    })
}

fn step(path: &str, s: &RawStep, pools: &[String], caches: &[String]) -> V<StepCfg> {
    let Some(pool_name) = &s.query else {
        let hint = if s.cache.is_some() {
            " (for a cache step: the pool a miss queries)"
        } else {
            ""
        };
        return bad(
            path,
            format!("a step needs `query = \"<pool>\"` naming the pool it queries{hint}"),
        );
    };
    let pool = pools
        .iter()
        .position(|p| p == pool_name)
        .ok_or_else(|| unknown_name(&format!("{path}.query"), "pool", pool_name, pools))?;
    let cache = match &s.cache {
        Some(c) => Some(
            caches
                .iter()
                .position(|x| x == c)
                .ok_or_else(|| unknown_name(&format!("{path}.cache"), "cache", c, caches))?,
        ),
        None => None,
    };
    let keys = match s.keys {
        None => KeyCount::Fixed(1),
        Some(RawCount::Fixed(n)) => {
            KeyCount::Fixed(int_in(&format!("{path}.keys"), n, 0, 10_000)? as u32)
        }
        Some(RawCount::Law(l)) => {
            let kp = format!("{path}.keys");
            let mean = positive(&format!("{kp}.mean"), l.mean)?;
            if mean > 10_000.0 {
                return bad(format!("{kp}.mean"), "must be at most 10000 keys");
            }
            let min = int_in(&format!("{kp}.min"), l.min.unwrap_or(0), 0, 10_000)? as u32;
            match l.law {
                CountLaw::Fixed => {
                    if mean.fract() != 0.0 {
                        return bad(format!("{kp}.mean"), "a fixed count must be a whole number");
                    }
                    KeyCount::Fixed(mean as u32)
                }
                CountLaw::Poisson => KeyCount::Poisson { mean, min },
                CountLaw::Geometric => {
                    if mean < 1.0 {
                        return bad(
                            format!("{kp}.mean"),
                            "a geometric count on 1, 2, ... has mean >= 1",
                        );
                    }
                    KeyCount::Geometric { mean, min }
                }
            }
        }
    };
    if cache.is_some() && s.completion == Some(Completion::Partial) {
        return bad(
            format!("{path}.completion"),
            "a cache step fills only from a whole answer; `partial` applies to queries without a cache",
        );
    }
    if cache.is_none() && s.miss.is_some() {
        return bad(
            format!("{path}.miss"),
            "`miss` applies to cache steps only (add `cache = \"<tier>\"`)",
        );
    }
    let cost = positive(&format!("{path}.cost"), s.cost.unwrap_or(1.0))?;
    let cost_per_key = finite_nonneg(
        &format!("{path}.cost_per_key"),
        s.cost_per_key.unwrap_or(0.0),
    )?;
    let timeout_ns = match s.timeout {
        Some(t) => nonzero_dur(&format!("{path}.timeout"), t)?,
        None => SimTime::MAX,
    };
    let retry = match &s.retry {
        Some(r) => retry(&format!("{path}.retry"), r)?,
        None => RetryCfg::none(),
    };
    if retry.breaker.is_some() {
        return bad(
            format!("{path}.retry.breaker"),
            "a circuit breaker belongs to the class's retry policy",
        );
    }
    let fanout = s.fanout.unwrap_or_default();
    Ok(StepCfg {
        cache,
        keys,
        miss: s.miss.unwrap_or_default(),
        keyed: cache.is_some() || fanout == Fanout::Keys || cost_per_key > 0.0,
        counts_keys: cache.is_none() && fanout == Fanout::Keys,
        query: QueryCfg {
            pool,
            cost,
            cost_per_key,
            completion: s.completion.unwrap_or_default(),
            fanout,
            read: s.read.unwrap_or_default(),
            timeout_ns,
            retry,
        },
    })
}

fn cache(path: &str, name: &str, c: &RawCache) -> V<CacheCfg> {
    let warm = c.warm.unwrap_or(1.0);
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
    Ok(CacheCfg {
        name: name.into(),
        nodes: int_in(&format!("{path}.nodes"), c.nodes, 1, 10_000)? as u32,
        spares: int_in(&format!("{path}.spares"), c.spares.unwrap_or(0), 0, 10_000)? as u32,
        keys: int_in(&format!("{path}.keys"), c.keys, 1, 50_000_000)? as u32,
        zipf,
        ttl_ns: c
            .ttl
            .map(|t| nonzero_dur(&format!("{path}.ttl"), t))
            .transpose()?,
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
    })
}

fn pool(path: &str, name: &str, p: &RawPool) -> V<PoolCfg> {
    let service = &p.service;
    let mean_ns = nonzero_dur(&format!("{path}.service.mean"), service.mean)?;
    let cv = match (service.law, service.cv) {
        (Law::Const, Some(_)) => {
            return bad(
                format!("{path}.service.cv"),
                "a constant law has no spread; remove `cv`",
            );
        }
        (Law::Exp, Some(_)) => {
            return bad(
                format!("{path}.service.cv"),
                "the exponential law has cv 1; remove `cv`",
            );
        }
        (Law::Lognormal, Some(cv)) => positive(&format!("{path}.service.cv"), cv)?,
        (Law::Lognormal, None) => 1.0,
        (Law::Exp, None) => 1.0,
        (Law::Const, None) => 0.0,
    };
    let error_rate = p.error_rate;
    if !(0.0..=1.0).contains(&error_rate) {
        return bad(
            format!("{path}.error_rate"),
            format!("must be a fraction from 0 to 1, not {error_rate}"),
        );
    }
    Ok(PoolCfg {
        name: name.into(),
        shards: int_in(&format!("{path}.shards"), p.shards.unwrap_or(1), 1, 100_000)? as u32,
        replicas: int_in(&format!("{path}.replicas"), p.replicas.unwrap_or(0), 0, 100)? as u32,
        workers: int_in(
            &format!("{path}.workers"),
            p.workers.unwrap_or(1),
            1,
            1_000_000,
        )? as u32,
        queue_limit: match p.queue_limit {
            Some(q) => int_in(&format!("{path}.queue_limit"), q, 0, 100_000_000)? as u32,
            None => u32::MAX,
        },
        service: ServiceCfg {
            law: service.law,
            mean_ns,
            cv,
        },
        contention: finite_nonneg(&format!("{path}.contention"), p.contention.unwrap_or(0.0))?,
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
        latency_threshold_ns: match p.latency_threshold {
            Some(t) => nonzero_dur(&format!("{path}.latency_threshold"), t)?,
            None => 1_000_000,
        },
    })
}

fn event(
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
    let find_pool = || -> V<usize> {
        let p = e.pool.as_ref().ok_or_else(|| need("pool"))?;
        pool_names
            .iter()
            .position(|x| x == p)
            .ok_or_else(|| unknown_name(&format!("{path}.pool"), "pool", p, &pool_names))
    };
    let find_cache = || -> V<usize> {
        let c = e.cache.as_ref().ok_or_else(|| need("cache"))?;
        cache_names
            .iter()
            .position(|x| x == c)
            .ok_or_else(|| unknown_name(&format!("{path}.cache"), "cache", c, &cache_names))
    };
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
    let (kind, for_ns) = match e.kind {
        RawEventKind::Slowdown => {
            let factor = positive(
                &format!("{path}.factor"),
                e.factor.ok_or_else(|| need("factor"))?,
            )?;
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
            let cname = e.class.as_ref().ok_or_else(|| need("class"))?;
            let class = classes
                .iter()
                .position(|x| x == cname)
                .ok_or_else(|| unknown_name(&format!("{path}.class"), "class", cname, classes))?;
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
            (
                TriggerKind::Crash {
                    pool,
                    server: shard * (1 + p.replicas) + replica,
                },
                for_dur()?,
            )
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
        label: e.label.clone().unwrap_or_else(|| name.to_string()),
        kind,
        at_ns: e.at.0,
        for_ns,
        every_ns,
        enabled: e.enabled,
    })
}

/// Interventions may change parameters, not structure: the model keeps its state across.
/// Classes, pools and events must stay the same set; an event may only be switched on or
/// off (its `enabled`), since a running event must end the way it started.
pub fn same_structure(a: &Config, b: &Config) -> Result<(), String> {
    let names = |v: Vec<&String>| v.into_iter().cloned().collect::<Vec<_>>().join(", ");
    if a.classes.len() != b.classes.len()
        || a.classes
            .iter()
            .zip(&b.classes)
            .any(|(x, y)| x.name != y.name)
    {
        return Err(format!(
            "the classes change from [{}] to [{}]",
            names(a.classes.iter().map(|c| &c.name).collect()),
            names(b.classes.iter().map(|c| &c.name).collect())
        ));
    }
    if a.pools.len() != b.pools.len() || a.pools.iter().zip(&b.pools).any(|(x, y)| x.name != y.name)
    {
        return Err(format!(
            "the pools change from [{}] to [{}]",
            names(a.pools.iter().map(|c| &c.name).collect()),
            names(b.pools.iter().map(|c| &c.name).collect())
        ));
    }
    if a.triggers.len() != b.triggers.len()
        || a.triggers
            .iter()
            .zip(&b.triggers)
            .any(|(x, y)| x.name != y.name)
    {
        return Err("events cannot be added or removed by an intervention".into());
    }
    for (x, y) in a.classes.iter().zip(&b.classes) {
        if x.steps.len() != y.steps.len() {
            return Err(format!("class `{}` changes its number of steps", x.name));
        }
        if x.steps
            .iter()
            .zip(&y.steps)
            .any(|(a, b)| a.cache != b.cache)
        {
            return Err(format!(
                "class `{}` changes the cache tier a step looks up",
                x.name
            ));
        }
    }
    for (x, y) in a.pools.iter().zip(&b.pools) {
        if (x.shards, x.replicas) != (y.shards, y.replicas) {
            return Err(format!("pool `{}` changes its shards or replicas", x.name));
        }
        if x.client.is_some() != y.client.is_some() {
            return Err(format!(
                "pool `{}` gains or loses its cluster client",
                x.name
            ));
        }
    }
    if a.caches != b.caches {
        return Err("cache tiers cannot be changed by an intervention".into());
    }
    for (x, y) in a.triggers.iter().zip(&b.triggers) {
        let (mut x, y) = (x.clone(), y);
        x.enabled = y.enabled;
        x.label = y.label.clone();
        if &x != y {
            return Err(format!(
                "event `{}` may only be switched on or off (`enabled`)",
                x.name
            ));
        }
    }
    Ok(())
}
