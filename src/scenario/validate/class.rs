//! A request class: its workload (rate, profile), client policy (timeout, retries, rate
//! limit) and steps.

use super::check::{
    MAX_FACTOR, MAX_RATE, Targets, V, bad, did_you_mean, finite_nonneg, index_of, int_in, listing,
    nonzero_dur, positive, up_to,
};
use crate::engine::time::SimTime;
use crate::scenario::raw::*;
use crate::scenario::spec::*;

/// Validates `[class.NAME]` at `path`; steps name their pool, endpoint and cache among
/// `targets`.
pub fn class(path: &str, name: &str, c: &RawClass, targets: &Targets) -> V<ClassCfg> {
    let users = population(path, c)?;
    let rate = finite_nonneg(&format!("{path}.rate"), c.rate.unwrap_or(0.0))
        .and_then(|x| up_to(&format!("{path}.rate"), x, MAX_RATE))?;
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
    super::check::at_most(
        &format!("{path}.steps"),
        "steps",
        c.steps.len(),
        super::MAX_STEPS,
    )?;
    let mut steps = Vec::new();
    for (i, s) in c.steps.iter().enumerate() {
        steps.push(step(&format!("{path}.steps.{i}"), s, targets, false)?);
    }
    Ok(ClassCfg {
        name: name.into(),
        rate_per_s: rate,
        profile,
        timeout_ns,
        retry,
        rate_limit,
        steps,
        call: None,
        sync: None,
        users,
    })
}

/// Most users a population may have: each is a record and, while thinking, a pending
/// event.
pub const MAX_USERS: i64 = 10_000_000;

/// A closed-loop population (`users`, `think`, `give_up`), or `None` for an open class.
fn population(path: &str, c: &RawClass) -> V<Option<UsersCfg>> {
    let Some(n) = c.users else {
        for (key, given) in [
            ("think", c.think.is_some()),
            ("give_up", c.give_up.is_some()),
        ] {
            if given {
                return bad(
                    format!("{path}.{key}"),
                    format!("`{key}` is for a closed-loop population; add `users = N`"),
                );
            }
        }
        return Ok(None);
    };
    let users = int_in(&format!("{path}.users"), n, 1, MAX_USERS)? as u32;
    for (key, given) in [("rate", c.rate.is_some()), ("profile", c.profile.is_some())] {
        if given {
            return bad(
                format!("{path}.{key}"),
                format!(
                    "a population of `users` sends at its own pace (one request per user, then \
                     `think`); remove `{key}`, or `users` for an open class"
                ),
            );
        }
    }
    let Some(think) = &c.think else {
        return bad(
            format!("{path}.think"),
            "missing required key `think` (a population's think time, e.g. think = { law = \
             \"exp\", mean = \"5s\" })",
        );
    };
    let think = super::service::service(&format!("{path}.think"), think)?;
    let give_up = match &c.give_up {
        None => None,
        Some(g) => {
            let gp = format!("{path}.give_up");
            let after = int_in(&format!("{gp}.after"), g.after, 1, 1_000_000)? as u32;
            Some((after, nonzero_dur(&format!("{gp}.for"), g.for_)?))
        }
    };
    Ok(Some(UsersCfg {
        users,
        think,
        give_up,
    }))
}

pub(super) fn profile(path: &str, p: &RawProfile) -> V<Profile> {
    if p.points.is_empty() {
        return bad(
            format!("{path}.points"),
            "needs at least one [time, factor] point",
        );
    }
    for (i, (t, f)) in p.points.iter().enumerate() {
        finite_nonneg(&format!("{path}.points.{i}"), *f)
            .and_then(|x| up_to(&format!("{path}.points.{i}"), x, MAX_FACTOR))?;
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
    let rate = finite_nonneg(&format!("{path}.rate"), b.rate)
        .and_then(|x| up_to(&format!("{path}.rate"), x, MAX_RATE))?;
    let burst = match b.burst {
        Some(x) => {
            let x = finite_nonneg(&format!("{path}.burst"), x)
                .and_then(|x| up_to(&format!("{path}.burst"), x, MAX_RATE))?;
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

pub(super) fn retry(path: &str, r: &RawRetry) -> V<RetryCfg> {
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
    let retry_on = match &r.retry_on {
        None => FailureSet::ALL,
        Some(kinds) if kinds.is_empty() => {
            return bad(
                format!("{path}.retry_on"),
                "name at least one failure to retry (timeout, error, rejected, throttled, breaker); for no retries set `max_attempts = 1`",
            );
        }
        Some(kinds) => FailureSet::of(kinds),
    };
    Ok(RetryCfg {
        max_attempts,
        retry_on,
        backoff: r.backoff,
        base_ns,
        cap_ns,
        jitter: r.jitter,
        budget,
        breaker,
    })
}

/// Validates a step at `path`: a class's step, or a pool's call (`call`), whose `timeout`
/// and `retry` the caller reads as the call's own and whose call keys only it may have.
pub(super) fn step(path: &str, s: &RawStep, targets: &Targets, call: bool) -> V<StepCfg> {
    if !call {
        let call_keys = [
            ("name", s.name.is_some()),
            ("parallel", s.parallel),
            ("fallback", s.fallback.is_some()),
            ("endpoint", s.endpoint.is_some()),
            ("max_in_flight", s.max_in_flight.is_some()),
            ("probability", s.probability.is_some()),
            ("deadline", s.deadline.is_some()),
        ];
        if let Some((key, _)) = call_keys.iter().find(|k| k.1) {
            return bad(
                format!("{path}.{key}"),
                "belongs to a pool's calls ([[pool.NAME.calls]]), not to a class's steps",
            );
        }
    }
    let Some(query) = &s.query else {
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
    let (pool, endpoint) = query_target(&format!("{path}.query"), query, targets)?;
    let cache = match &s.cache {
        Some(c) => Some(index_of(
            &format!("{path}.cache"),
            "cache",
            c,
            targets.caches,
        )?),
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
                CountLaw::Poisson => KeyCount::poisson(mean, min),
                CountLaw::Geometric => {
                    if mean < 1.0 {
                        return bad(
                            format!("{kp}.mean"),
                            "a geometric count on 1, 2, ... has mean >= 1",
                        );
                    }
                    KeyCount::geometric(mean, min)
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
    let cost = positive(&format!("{path}.cost"), s.cost.unwrap_or(1.0))
        .and_then(|x| up_to(&format!("{path}.cost"), x, MAX_FACTOR))?;
    let cost_per_key = finite_nonneg(
        &format!("{path}.cost_per_key"),
        s.cost_per_key.unwrap_or(0.0),
    )
    .and_then(|x| up_to(&format!("{path}.cost_per_key"), x, MAX_FACTOR))?;
    let timeout_ns = match s.timeout {
        Some(t) if !call => nonzero_dur(&format!("{path}.timeout"), t)?,
        _ => SimTime::MAX,
    };
    let retry = match &s.retry {
        Some(r) if !call => retry(&format!("{path}.retry"), r)?,
        _ => RetryCfg::none(),
    };
    if retry.breaker.is_some() {
        return bad(
            format!("{path}.retry.breaker"),
            "a circuit breaker belongs to the class's retry policy",
        );
    }
    let fanout = s.fanout.unwrap_or_default();
    let hedge = match &s.hedge {
        None => None,
        Some(h) => Some(hedge(&format!("{path}.hedge"), h, fanout)?),
    };
    Ok(StepCfg {
        hedge,
        cache,
        keys,
        miss: s.miss.unwrap_or_default(),
        keyed: cache.is_some() || fanout == Fanout::Keys || cost_per_key > 0.0,
        counts_keys: cache.is_none() && fanout == Fanout::Keys,
        query: QueryCfg {
            pool,
            endpoint,
            cost,
            cost_per_key,
            completion: s.completion.unwrap_or_default(),
            fanout,
            read: s.read.unwrap_or_default(),
            timeout_ns,
            retry,
            sync: false,
        },
    })
}

/// A step's hedging: a fixed delay or a tracked percentile (exactly one), on a query of
/// one part.
fn hedge(path: &str, h: &RawHedge, fanout: Fanout) -> V<HedgeCfg> {
    if fanout != Fanout::One {
        return bad(
            path,
            "hedging sends a second copy of a one-part query; it does not apply to `fanout = \"all\"` or `\"keys\"`",
        );
    }
    match (h.after, h.percentile) {
        (Some(d), None) => Ok(HedgeCfg::After(nonzero_dur(&format!("{path}.after"), d)?)),
        (None, Some(p)) => {
            if !(p.is_finite() && (1.0..100.0).contains(&p)) {
                return bad(
                    format!("{path}.percentile"),
                    format!(
                        "must be a percentile from 1 up to (not including) 100, e.g. 95, not {p}"
                    ),
                );
            }
            Ok(HedgeCfg::Percentile(p))
        }
        (None, None) => bad(
            path,
            "say when the second copy goes: `after = \"20ms\"` (a fixed delay) or `percentile = 95` (the query's own tracked latency)",
        ),
        (Some(_), Some(_)) => bad(path, "give `after` or `percentile`, not both"),
    }
}

/// A step's `query`: `"<pool>"`, or `"<pool>/<endpoint>"` for one of the endpoints the
/// pool's calls name.
fn query_target(path: &str, query: &str, t: &Targets) -> V<(usize, u16)> {
    let (pool_name, endpoint) = match query.split_once('/') {
        Some((p, e)) => (p, Some(e)),
        None => (query, None),
    };
    let pool = index_of(path, "pool", pool_name, t.pools)?;
    let Some(e) = endpoint else {
        return Ok((pool, 0));
    };
    let known = &t.endpoints[pool][1..];
    match known.iter().position(|k| k == e) {
        Some(i) => Ok((pool, i as u16 + 1)),
        None if known.is_empty() => bad(
            path,
            format!(
                "pool `{pool_name}` has no endpoints (a call with `endpoint = \"{e}\"` makes one); query it as \"{pool_name}\""
            ),
        ),
        None => bad(
            path,
            format!(
                "pool `{pool_name}` has no endpoint `{e}` (known: {}){}",
                listing(known),
                did_you_mean(e, known.iter().map(|s| s.as_str()))
            ),
        ),
    }
}
