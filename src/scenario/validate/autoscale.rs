//! `[pool.NAME.autoscale]`: target tracking on a pool of interchangeable servers. The
//! table's own values; that the pool's queries can follow a changing fleet (one part, no
//! crash naming a server); and that the starting fleet lies in `[min, max]`.

use super::check::{V, bad, int_in, nonzero_dur};
use crate::engine::time::parse_duration;
use crate::scenario::raw::*;
use crate::scenario::spec::*;
use toml::Value;

/// The most servers an autoscaler may run.
const MAX_SERVERS: i64 = 100_000;

/// Validates `[pool.NAME.autoscale]` at `path` (`pool.NAME.autoscale`) for a pool with
/// `replicas` replicas.
pub fn autoscale(path: &str, a: &RawAutoscale, replicas: i64) -> V<AutoscaleCfg> {
    if replicas != 0 {
        return bad(
            path,
            format!(
                "autoscaling adds and removes interchangeable servers: the pool must have `replicas = 0`, not {replicas}"
            ),
        );
    }
    let min = int_in(&format!("{path}.min"), a.min, 1, MAX_SERVERS)? as u32;
    let max = int_in(&format!("{path}.max"), a.max, 1, MAX_SERVERS)? as u32;
    if min > max {
        return bad(
            format!("{path}.min"),
            format!("`min` ({min}) is above `max` ({max})"),
        );
    }
    let target = target(&format!("{path}.target"), a.signal, &a.target)?;
    let every_ns = match a.every {
        Some(e) => nonzero_dur(&format!("{path}.every"), e)?,
        None => 60 * crate::engine::time::NS_PER_S,
    };
    let (warmup_ns, warmup_factor) = match &a.warmup {
        None => (0, 1.0),
        Some(w) => {
            let f = w.factor;
            if !f.is_finite() || f < 1.0 {
                return bad(
                    format!("{path}.warmup.factor"),
                    format!(
                        "must be a finite number >= 1 (a cold server is slower, not faster), not {f}"
                    ),
                );
            }
            (nonzero_dur(&format!("{path}.warmup.for"), w.for_)?, f)
        }
    };
    let tolerance = a.tolerance.unwrap_or(0.1);
    if !(0.0..1.0).contains(&tolerance) {
        return bad(
            format!("{path}.tolerance"),
            format!("must be a fraction from 0 up to (not including) 1, not {tolerance}"),
        );
    }
    Ok(AutoscaleCfg {
        signal: a.signal,
        target,
        every_ns,
        provision_ns: a.provision.map_or(0, |d| d.0),
        warmup_ns,
        warmup_factor,
        cooldown_ns: a
            .cooldown
            .map_or(300 * crate::engine::time::NS_PER_S, |d| d.0),
        min,
        max,
        scale_in: a.scale_in,
        tolerance,
    })
}

/// The smallest utilisation or queue target: the fleet follows signal / target, and a
/// signal of a billion waiting jobs per server over this stays far from overflow.
const MIN_TARGET: f64 = 1e-9;

/// The target of `signal`: a utilisation fraction in (0, 1], waiting jobs per server > 0,
/// or a p99 latency written as a duration (nanoseconds).
fn target(path: &str, signal: ScaleSignal, v: &Value) -> V<f64> {
    let number = match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    };
    match (signal, number, v) {
        (ScaleSignal::P99, _, Value::String(s)) => match parse_duration(s) {
            Ok(0) => bad(path, "must be longer than zero"),
            Ok(ns) => Ok(ns as f64),
            Err(e) => bad(path, e),
        },
        (ScaleSignal::P99, _, _) => bad(
            path,
            format!(
                "with signal = \"p99\" the target is a latency: write a duration such as \"250ms\", not {v}"
            ),
        ),
        (ScaleSignal::Utilization | ScaleSignal::Queue, Some(x), _)
            if x > 0.0 && x < MIN_TARGET =>
        {
            bad(
                path,
                format!(
                    "must be at least {MIN_TARGET:e}, not {x:e}: the fleet is set by the ratio signal / target, which overflows (or loses all precision) for a target this small"
                ),
            )
        }
        (ScaleSignal::Utilization, Some(x), _) if x > 0.0 && x <= 1.0 => Ok(x),
        (ScaleSignal::Utilization, Some(x), _) => bad(
            path,
            format!("a utilisation target must be a fraction above 0 and at most 1, not {x}"),
        ),
        (ScaleSignal::Queue, Some(x), _) if x.is_finite() && x > 0.0 => Ok(x),
        (ScaleSignal::Queue, Some(x), _) => bad(
            path,
            format!(
                "a queue target (waiting jobs per server) must be a finite number > 0, not {x}"
            ),
        ),
        (_, None, _) => bad(
            path,
            format!(
                "must be a number (a utilisation fraction, or waiting jobs per server), not {v}"
            ),
        ),
    }
}

/// An autoscaled pool's servers come and go, so what names one of them is refused: a query
/// of several parts (`fanout = "all"` or `"keys"` spreads over shards), a crash and a
/// fail-fast event.
pub fn routes(cfg: &Config) -> V<()> {
    let scaled = |p: usize| cfg.pools[p].autoscale.is_some();
    for c in cfg.client_classes() {
        for (i, st) in c.steps.iter().enumerate() {
            if scaled(st.query.pool) && st.query.fanout != Fanout::One {
                return bad(
                    format!("class.{}.steps.{i}.fanout", c.name),
                    fanout_msg(&cfg.pools[st.query.pool].name),
                );
            }
        }
    }
    for call in &cfg.calls {
        let st = &cfg.classes[call.class].steps[0];
        if scaled(st.query.pool) && st.query.fanout != Fanout::One {
            let (pool, n) = (&cfg.pools[call.pool].name, own_index(cfg, call));
            return bad(
                format!("pool.{pool}.calls.{n}.fanout"),
                fanout_msg(&cfg.pools[st.query.pool].name),
            );
        }
    }
    for t in &cfg.triggers {
        if let TriggerKind::Crash { pool, .. } | TriggerKind::FailFast { pool, .. } = t.kind
            && scaled(pool)
        {
            return bad(
                format!("event.{}.pool", t.name),
                format!(
                    "pool `{}` autoscales: its servers come and go, so a crash or a fail-fast event cannot name one (scale in with `scale_in = \"fail\"` instead)",
                    cfg.pools[pool].name
                ),
            );
        }
    }
    Ok(())
}

fn fanout_msg(pool: &str) -> String {
    format!(
        "pool `{pool}` autoscales: its servers are interchangeable and come and go, so a query to it goes to one of them (`fanout = \"one\"`)"
    )
}

/// The position of `call` among its pool's calls.
fn own_index(cfg: &Config, call: &CallCfg) -> usize {
    cfg.calls
        .iter()
        .filter(|k| k.pool == call.pool)
        .position(|k| k.name == call.name)
        .unwrap_or(0)
}

/// The starting fleet (`shards`) lies in `[min, max]`. Checked for the configuration at
/// time zero only: an intervention may move `min` or `max` past the fleet of the moment,
/// which the next evaluation then corrects.
pub fn starting_fleet(cfg: &Config) -> V<()> {
    for p in &cfg.pools {
        if let Some(a) = p.autoscale
            && !(a.min..=a.max).contains(&p.shards)
        {
            return bad(
                format!("pool.{}.shards", p.name),
                format!(
                    "is the autoscaler's starting number of servers: it must lie in [min, max] = [{}, {}], not {}",
                    a.min, a.max, p.shards
                ),
            );
        }
    }
    Ok(())
}
