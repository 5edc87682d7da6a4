//! The first stage of reading a scenario: the file's shape as serde sees it. Every field
//! is documented in `docs/scenario.md`; unknown keys are errors.

use crate::engine::time::{SimTime, parse_duration};
use indexmap::IndexMap;
use serde::{Deserialize, Deserializer, de};
use toml::{Table, Value};

mod event;
mod pool;
pub use event::*;
pub use pool::*;

/// A duration written with a unit ("250ms", "10s", "2h").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dur(pub SimTime);

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a duration with a unit, e.g. \"250ms\", \"10s\", \"2h\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Dur, E> {
                parse_duration(s).map(Dur).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dur, E> {
                Err(E::custom(format!(
                    "a duration needs a unit: write \"{v}s\" or \"{v}ms\""
                )))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dur, E> {
                Err(E::custom(format!(
                    "a duration needs a unit: write \"{v}s\" or \"{v}ms\""
                )))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Dur, E> {
                Err(E::custom(format!(
                    "a duration needs a unit: write \"{v}s\" or \"{v}ms\""
                )))
            }
        }
        d.deserialize_any(V)
    }
}

/// A whole scenario file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub title: Option<String>,
    pub description: Option<String>,
    pub case: Option<String>,
    pub duration: Dur,
    pub seed: Option<u64>,
    #[serde(default)]
    pub metrics: RawMetrics,
    #[serde(default)]
    pub class: IndexMap<String, RawClass>,
    #[serde(default)]
    pub pool: IndexMap<String, RawPool>,
    #[serde(default)]
    pub cache: IndexMap<String, RawCache>,
    #[serde(default)]
    pub event: IndexMap<String, RawEvent>,
    #[serde(default)]
    pub at: Vec<RawAt>,
    #[serde(default)]
    pub variant: IndexMap<String, RawVariant>,
    pub tipping: Option<RawTipping>,
    pub phase: Option<RawPhase>,
    pub collapse: Option<RawCollapse>,
    pub hysteresis: Option<RawHysteresis>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMetrics {
    pub step: Option<Dur>,
    pub zoom: Option<(Dur, Dur)>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawClass {
    pub rate: Option<f64>,
    /// A closed-loop population of this many users, instead of a `rate`.
    pub users: Option<i64>,
    /// A user's think time between an answer and its next request (a law table).
    pub think: Option<RawService>,
    /// After `after` failures in a row a user stays away `for`.
    pub give_up: Option<RawGiveUp>,
    pub profile: Option<RawProfile>,
    pub timeout: Option<Dur>,
    #[serde(default)]
    pub retry: RawRetry,
    pub rate_limit: Option<RawTokenBucket>,
    #[serde(default)]
    pub steps: Vec<RawStep>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGiveUp {
    pub after: i64,
    #[serde(rename = "for")]
    pub for_: Dur,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProfile {
    pub points: Vec<(Dur, f64)>,
    pub every: Option<Dur>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Backoff {
    #[default]
    None,
    Constant,
    Exponential,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Jitter {
    #[default]
    None,
    Full,
    Equal,
    Decorrelated,
}

/// Why an attempt failed, as a retry policy's `retry_on` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Failure {
    /// The client's attempt deadline or the query's own timeout passed.
    Timeout,
    /// The server answered with an error, crashed, or could not be reached (an outage).
    Error,
    /// The server refused the work: its queue was full, or it shed load.
    Rejected,
    /// The class's rate limit refused a retry.
    Throttled,
    /// The class's (or the call's) circuit breaker was open.
    Breaker,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRetry {
    pub max_attempts: Option<i64>,
    /// Which failures are retried (default: all).
    pub retry_on: Option<Vec<Failure>>,
    #[serde(default)]
    pub backoff: Backoff,
    pub base: Option<Dur>,
    pub cap: Option<Dur>,
    #[serde(default)]
    pub jitter: Jitter,
    pub budget: Option<RawTokenBucket>,
    pub breaker: Option<RawBreaker>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTokenBucket {
    pub rate: f64,
    pub burst: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBreaker {
    pub failure_ratio: f64,
    pub window: Dur,
    pub min_requests: Option<i64>,
    pub open_for: Dur,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Fanout {
    #[default]
    One,
    All,
    Keys,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ReadPref {
    #[default]
    Primary,
    Replica,
    Any,
    Latency,
}

/// Which keys a cache miss queries: all the step's keys (legacy) or only the missing ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum MissPolicy {
    #[default]
    All,
    Missing,
}

/// When a cached key's TTL starts again (`ttl_refresh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TtlRefresh {
    /// Only when the key is filled: a hit does not extend it (Redis `GET`, memcached `get`).
    #[default]
    Fill,
    /// At every hit too: sliding expiry (a cache that touches keys on read).
    OnHit,
}

/// When a multi-part query succeeds: every part (all-or-nothing) or with what succeeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Completion {
    #[default]
    AllOrNothing,
    Partial,
}

/// The number of keys a step touches: a whole number, or a law.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RawCount {
    Fixed(i64),
    Law(RawCountLaw),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CountLaw {
    Fixed,
    Poisson,
    Geometric,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCountLaw {
    pub law: CountLaw,
    pub mean: f64,
    pub min: Option<i64>,
}

impl<'de> Deserialize<'de> for RawCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = RawCount;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a whole number of keys, or a law such as { law = \"poisson\", mean = 8 }",
                )
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawCount, E> {
                Ok(RawCount::Fixed(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawCount, E> {
                Ok(RawCount::Fixed(v.min(i64::MAX as u64) as i64))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<RawCount, A::Error> {
                RawCountLaw::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawCount::Law)
            }
        }
        d.deserialize_any(V)
    }
}

/// One step of a request. Exactly one of `query` (more kinds come with later issues)
/// names what the step does: `"<pool>"`, or `"<pool>/<endpoint>"` for one of the pool's
/// endpoints (the calls its jobs make).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStep {
    pub query: Option<String>,
    pub cache: Option<String>,
    pub keys: Option<RawCount>,
    pub miss: Option<MissPolicy>,
    pub completion: Option<Completion>,
    pub cost_per_key: Option<f64>,
    pub cost: Option<f64>,
    pub fanout: Option<Fanout>,
    pub read: Option<ReadPref>,
    pub timeout: Option<Dur>,
    pub retry: Option<RawRetry>,
    pub hedge: Option<RawHedge>,
    // The keys below belong to a pool's calls (`[[pool.NAME.calls]]`), which have the
    // shape of a step; there `timeout` and `retry` are the call's own (with an optional
    // breaker per dependency), not its query's.
    /// The call's name in outputs (default: the pool it queries).
    pub name: Option<String>,
    /// Runs alongside the call before it instead of after it.
    #[serde(default)]
    pub parallel: bool,
    /// What a failure does: without it, the job fails; with it, the job falls back.
    pub fallback: Option<RawFallback>,
    /// Made only by the jobs of this endpoint of the pool (`query = "<pool>/<endpoint>"`);
    /// without it, by every job of the pool.
    pub endpoint: Option<String>,
    /// A bulkhead: at most this many of the call in flight from the pool at once; beyond,
    /// the call is refused at once.
    pub max_in_flight: Option<i64>,
    /// The share of the pool's jobs that make the call (default 1: every job).
    pub probability: Option<f64>,
    /// Whose deadline the call keeps: its own timeout, or also its caller's (`propagate`).
    pub deadline: Option<DeadlineMode>,
}

/// A pool call's deadline (`deadline` on `[[pool.NAME.calls]]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum DeadlineMode {
    /// The call's own timeout only: the callee works on after its caller has given up.
    #[default]
    Own,
    /// The caller's deadline as well: the call's timeout is the shorter of its own and the
    /// caller's remaining time, and work below past that deadline is dropped.
    Propagate,
}

/// A second copy of a query, sent when the first has not answered after a delay: a fixed
/// one (`after`), or the query's own latency percentile as it tracks it (`percentile`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHedge {
    pub after: Option<Dur>,
    pub percentile: Option<f64>,
}

/// What a job does when a call fails for good: instead of failing, it spends `cost` times
/// its pool's service time (a default answer, a stale copy) and goes on.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFallback {
    pub cost: f64,
}

/// A cache tier on consistent hashing, with an optional control plane.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCache {
    pub nodes: i64,
    pub spares: Option<i64>,
    /// Required unless `hit_ratio` is given with a `ttl` (then derived).
    pub keys: Option<i64>,
    pub zipf: Option<f64>,
    /// The hit ratio the tier shows at the operating point: the keyspace (with `ttl`) or
    /// the TTL (with `keys`) is derived from it.
    pub hit_ratio: Option<f64>,
    pub ttl: Option<Dur>,
    pub ttl_refresh: Option<TtlRefresh>,
    pub warm: Option<f64>,
    pub vnodes: Option<i64>,
    pub control_plane: Option<RawControlPlane>,
    /// One fill in flight per key: a miss on a key being filled waits for that fill.
    pub coalesce: Option<bool>,
    /// A hit on a key past this fraction of its `ttl` refreshes it in the background.
    pub refresh_ahead: Option<f64>,
    /// Each fill's TTL is drawn uniformly in [ttl·(1 − j), ttl].
    pub ttl_jitter: Option<f64>,
}

/// The control plane over a cache tier (Mcrib): replaces a node that left the catalog with
/// an empty spare after `detect_after`; a node that rejoins after being replaced is flushed.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawControlPlane {
    pub detect_after: Dur,
}

/// An intervention: at `time`, set the given paths to the given values, and/or start the
/// named `[event.NAME]` now (`fire`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAt {
    pub time: Dur,
    pub label: Option<String>,
    #[serde(default)]
    pub set: Table,
    pub fire: Option<String>,
}

/// A named design variant: a set of overrides.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVariant {
    pub description: Option<String>,
    #[serde(default)]
    pub set: Table,
}

/// `[tipping]` as written: which parameter a sweep varies, over what range, which events
/// form the disturbance, and what "healthy" means.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTipping {
    pub vary: String,
    pub from: Value,
    pub to: Value,
    pub points: Option<i64>,
    pub trigger: Vec<String>,
    pub settle: Dur,
    pub measure: String,
    pub healthy_above: Option<f64>,
    pub healthy_below: Option<f64>,
    pub seeds: Option<i64>,
    pub duration: Option<Dur>,
    /// How long a triggered run may take to recover after the last trigger ends: later
    /// (or never) counts as collapsed.
    pub recover_within: Option<Dur>,
    /// The least time a sweep run simulates before its first trigger: the run's events
    /// move earlier by whole periods of every clock the scenario keeps.
    pub warmup: Option<Dur>,
    /// What axes and tables call the swept parameter instead of its key path.
    pub label: Option<String>,
    /// The unit of its values on axes and tables (not for durations: seconds).
    pub unit: Option<String>,
    /// How the tipping point is searched: `"adaptive"` (bracket, then bisect) or `"grid"`.
    pub method: Option<String>,
    /// How closely the adaptive search pins the tipping and overload points (a number in
    /// the parameter's units, or a duration for a duration axis).
    pub tolerance: Option<Value>,
    /// The service-level objective a `slo.CLASS` measure checks over each SLO window.
    pub slo: Option<RawSlo>,
}

/// `tipping.slo` as written: one latency quantile's bound, an error-ratio bound and the
/// window both are taken over (`{ p99 = "200ms", errors = 0.01, window = "1m" }`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSlo {
    pub p50: Option<Dur>,
    pub p90: Option<Dur>,
    pub p99: Option<Dur>,
    pub p999: Option<Dur>,
    pub errors: Option<f64>,
    pub window: Option<Dur>,
}

/// `[phase]` as written: the second axis of a phase map.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPhase {
    pub vary: String,
    pub from: Value,
    pub to: Value,
    pub points: Option<i64>,
    pub label: Option<String>,
    pub unit: Option<String>,
    pub seeds: Option<i64>,
}

/// `[collapse]` as written: the level whose crossing is collapse, and the estimator's effort.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCollapse {
    pub in_flight: Option<i64>,
    pub pool: Option<String>,
    pub queue: Option<i64>,
    pub base: Option<i64>,
    pub step: Option<i64>,
    pub effort: Option<i64>,
    pub cycles: Option<i64>,
    pub max_events: Option<i64>,
}

/// `[hysteresis]` as written: how `brink hysteresis` ramps the `[tipping]` parameter up and
/// back down in one run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHysteresis {
    /// Values per direction.
    pub steps: Option<i64>,
    /// Simulated time held at each value.
    pub dwell: Option<Dur>,
    /// The first part of each dwell, left out of the measure.
    pub settle: Option<Dur>,
}

/// The values a key that takes one of a fixed set of words accepts, in the order the
/// schema declares them, read from the enum that deserializes it (so the list cannot
/// drift from what the loader accepts): `retry.backoff` gives `none`, `constant`,
/// `exponential`. `None` for a key that takes anything else. `path` is a key path as
/// `--set` writes it; only its last key (and, for `with`, the one before) matter.
pub fn choices(path: &str) -> Option<&'static [&'static str]> {
    let mut keys = path.rsplit('.');
    let last = keys.next()?;
    match last {
        "backoff" => Some(variants_of::<Backoff>()),
        "jitter" => Some(variants_of::<Jitter>()),
        "discipline" => Some(variants_of::<Discipline>()),
        "on_expiry" => Some(variants_of::<OnExpiry>()),
        "balance" => Some(&Balance::NAMES),
        "fanout" => Some(variants_of::<Fanout>()),
        "read" => Some(variants_of::<ReadPref>()),
        "miss" => Some(variants_of::<MissPolicy>()),
        "ttl_refresh" => Some(variants_of::<TtlRefresh>()),
        "completion" => Some(variants_of::<Completion>()),
        "deadline" => Some(variants_of::<DeadlineMode>()),
        "signal" => Some(variants_of::<ScaleSignal>()),
        "scale_in" => Some(variants_of::<ScaleIn>()),
        "on_failure" => Some(variants_of::<OnFailure>()),
        "on_unhealthy" => Some(variants_of::<OnUnhealthy>()),
        "with" if keys.next() == Some("slowdown") => Some(variants_of::<SlowdownWith>()),
        _ => None,
    }
}

/// The names serde's derived `Deserialize` of a unit enum accepts: a deserializer that
/// asks for an enum hears them and refuses.
fn variants_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Names(std::cell::Cell<&'static [&'static str]>);
    impl<'de> Deserializer<'de> for &Names {
        type Error = de::value::Error;
        fn deserialize_any<V: de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not an enum"))
        }
        fn deserialize_enum<V: de::Visitor<'de>>(
            self,
            _: &'static str,
            variants: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.set(variants);
            Err(de::Error::custom("names heard"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
            struct identifier ignored_any
        }
    }
    let names = Names(std::cell::Cell::new(&[]));
    let _ = T::deserialize(&names);
    names.0.get()
}

#[cfg(test)]
mod tests;
