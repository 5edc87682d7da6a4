//! The raw shapes of `[pool.NAME]` as written in the file: service laws, load shedding,
//! balancing, autoscaling and the cluster client.

use super::{Dur, RawStep};
use serde::{Deserialize, Deserializer, de};
use toml::Value;

/// Load shedding at a pool's servers.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawShed {
    pub watermarks: Option<RawWatermarks>,
    pub codel: Option<RawCodel>,
    #[serde(default)]
    pub adaptive_lifo: bool,
}

/// Refuse new work once a server's queue reaches `high`, until it has drained to `low`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWatermarks {
    pub high: i64,
    pub low: Option<i64>,
}

/// Controlled delay, as Facebook's "Fail at Scale" (2015) describes it: when a server's
/// queue has not been empty for `interval`, work that waited longer than `target` is shed
/// as it reaches the head; otherwise the limit is `interval`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCodel {
    pub target: Dur,
    pub interval: Dur,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Law {
    #[default]
    Exp,
    Const,
    Lognormal,
    Gamma,
    Weibull,
    /// Pareto, cut at `cap`.
    Pareto,
    /// Weighted `parts`, each a law of its own (not a mixture).
    Mixture,
    /// The user's measured `samples`, drawn uniformly.
    Empirical,
    /// Measured percentiles (`p50`, `p90`...), with a fitted tail.
    Percentiles,
    /// A measured histogram in a telemetry `file`, with a fitted tail.
    Histogram,
}

/// A service-time law; which keys apply depends on `law` (docs/scenario.md). The same
/// table, with `weight`, is one part of a mixture.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawService {
    #[serde(default)]
    pub law: Law,
    pub mean: Option<Dur>,
    pub cv: Option<f64>,
    /// Pareto's tail index.
    pub shape: Option<f64>,
    /// Pareto's cut.
    pub cap: Option<Dur>,
    /// An empirical law's measurements.
    pub samples: Option<Vec<Dur>>,
    /// An empirical law's measured histogram: (upper edge, count) per bin.
    pub histogram: Option<Vec<(Dur, u64)>>,
    /// A mixture part's weight.
    pub weight: Option<f64>,
    /// A mixture's parts.
    pub parts: Option<Vec<RawService>>,
    /// Measured percentiles (`law = "percentiles"`).
    pub p50: Option<Dur>,
    pub p75: Option<Dur>,
    pub p90: Option<Dur>,
    pub p95: Option<Dur>,
    pub p99: Option<Dur>,
    pub p999: Option<Dur>,
    pub p9999: Option<Dur>,
    /// A telemetry file (`law = "histogram"`), relative to the scenario file.
    pub file: Option<String>,
    /// Its format: `prometheus`, `hdr` or `otlp`.
    pub format: Option<String>,
    /// The metric's name (Prometheus, OTLP).
    pub metric: Option<String>,
    /// The labels (attributes) that pick one series among several.
    pub labels: Option<indexmap::IndexMap<String, String>>,
    /// What the recorded values are: `ns`, `us`, `ms` or `s`.
    pub unit: Option<String>,
    /// The file's histogram, read by the loader before validation (never from the file).
    #[serde(skip)]
    pub measured: Option<std::sync::Arc<crate::scenario::telemetry::Measured>>,
}

/// The percentile keys of `law = "percentiles"`, with their probabilities, in order.
pub const PERCENTILES: [(&str, f64); 7] = [
    ("p50", 0.5),
    ("p75", 0.75),
    ("p90", 0.9),
    ("p95", 0.95),
    ("p99", 0.99),
    ("p999", 0.999),
    ("p9999", 0.9999),
];

impl RawService {
    /// The values of the [`PERCENTILES`] keys, in their order.
    pub fn percentiles(&self) -> [Option<Dur>; 7] {
        [
            self.p50, self.p75, self.p90, self.p95, self.p99, self.p999, self.p9999,
        ]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Discipline {
    #[default]
    Fifo,
    Lifo,
}

/// How a pool spreads one-part keyless queries over its shards and a query over a shard's
/// candidate servers (`balance`). The rules are in `model/balance.rs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Balance {
    /// Uniformly at random (brink's original routing, with its original draws).
    #[default]
    Random,
    /// In turn, by a cursor, skipping servers the clients' view holds down.
    RoundRobin,
    /// The fewest jobs in service and queued (join the shortest queue); ties at random.
    LeastOutstanding,
    /// The fewer outstanding of two distinct candidates drawn at random; ties: the first.
    PowerOfTwo,
}

impl Balance {
    /// The values as the file spells them, in the enum's order.
    pub const NAMES: [&'static str; 4] =
        ["random", "round-robin", "least-outstanding", "power-of-two"];
    const ALL: [Balance; 4] = [
        Balance::Random,
        Balance::RoundRobin,
        Balance::LeastOutstanding,
        Balance::PowerOfTwo,
    ];
}

impl<'de> Deserialize<'de> for Balance {
    /// By hand rather than derived: serde's derived enum turns a number into "invalid type:
    /// unit variant" and a table into an unknown value named after its first key.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Balance;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a string naming the policy: `random`, `round-robin`, `least-outstanding` or `power-of-two`",
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Balance, E> {
                match Balance::NAMES.iter().position(|&n| n == s) {
                    Some(i) => Ok(Balance::ALL[i]),
                    None if s.is_empty() => Err(E::invalid_value(de::Unexpected::Str(s), &self)),
                    None => Err(E::unknown_variant(s, &Balance::NAMES)),
                }
            }
            fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<Balance, A::Error> {
                Err(de::Error::invalid_type(
                    de::Unexpected::Other("table"),
                    &self,
                ))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPool {
    pub shards: Option<i64>,
    pub replicas: Option<i64>,
    pub workers: Option<i64>,
    pub queue_limit: Option<i64>,
    pub service: RawService,
    pub contention: Option<f64>,
    #[serde(default)]
    pub error_rate: f64,
    #[serde(default)]
    pub cancel_expired: bool,
    #[serde(default)]
    pub discipline: Discipline,
    pub client: Option<RawClusterClient>,
    pub latency_threshold: Option<Dur>,
    /// The calls each job makes while holding its worker: steps, with call keys.
    #[serde(default)]
    pub calls: Vec<RawStep>,
    pub shed: Option<RawShed>,
    /// Adds or removes servers on a signal (keyless pools without replicas).
    pub autoscale: Option<RawAutoscale>,
    /// How queries are spread over shards and a shard's servers (default `random`).
    #[serde(default)]
    pub balance: Balance,
    /// Service slows down with the server's own load (`slowdown = { with, per, max }`).
    pub slowdown: Option<RawLoadSlowdown>,
    /// The balancer ejects a server that keeps failing (`outlier_ejection = { ... }`).
    pub outlier_ejection: Option<RawOutlierEjection>,
    /// The balancer probes each server and leaves out those failing the probes.
    pub health_check: Option<RawHealthCheck>,
    /// Work with its own lease, re-queued or dropped by the server when it expires.
    pub lease: Option<RawLease>,
    /// Each server serves only while its own request to a pool is answered in time
    /// (`[pool.NAME.sync]`, `model::sync`).
    pub sync: Option<RawSync>,
    /// A per-server resource that grows with the fleet against a fixed limit.
    pub peers: Option<RawPeers>,
}

/// `[pool.NAME.peers]` as written: each server of the fleet holds `base + per_peer x
/// (N - 1)` threads, N the fleet size it has learned (within `learn_within` of a change);
/// past `limit` it fails. `standby` servers (the pool's last) start outside the fleet;
/// with `cells`, N counts the servers of the server's own cell.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPeers {
    pub base: Option<i64>,
    pub per_peer: i64,
    pub limit: i64,
    pub learn_within: Option<Dur>,
    pub standby: Option<i64>,
    pub cells: Option<i64>,
}

/// `[pool.NAME.lease]` as written: each job's lease runs `timeout` from when it entered
/// the queue (or re-entered it); a job whose lease has passed when its service ends is
/// wasted and goes back to the queue (`requeue`) or fails (`drop`). `requeue_failed`: a
/// job that ended failed goes back to the queue after this delay instead of failing.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLease {
    pub timeout: Dur,
    #[serde(default)]
    pub on_expiry: OnExpiry,
    pub requeue_failed: Option<Dur>,
}

/// What a server does with a job whose lease has expired (`crate::model::lease`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum OnExpiry {
    /// Back to the queue with a fresh lease; its caller still waits.
    #[default]
    Requeue,
    /// The job fails (`timeout`); one already expired when a worker would take it fails
    /// without service.
    Drop,
}

/// `[pool.NAME.sync]` as written: each server's sync request (to `pool`, of `cost`, with
/// `growth` over run time and sizes spread by `spread` over the servers), its `timeout`, routine period `every`, whether a (re)started
/// server syncs first (`on_start`), what a failure does (`on_failure`), the delay before
/// the next attempt (`retry`) and the most syncs in flight at once (`max_concurrent`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSync {
    pub pool: String,
    pub cost: Option<f64>,
    pub growth: Option<super::RawProfile>,
    pub spread: Option<f64>,
    #[serde(default)]
    pub segment: bool,
    pub timeout: Dur,
    pub every: Option<Dur>,
    #[serde(default)]
    pub on_start: bool,
    #[serde(default)]
    pub on_failure: OnFailure,
    pub retry: Option<super::RawRetry>,
    pub max_concurrent: Option<i64>,
}

/// What a server whose sync failed does (`on_failure`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum OnFailure {
    /// It stays up but takes no work until a sync succeeds (DynamoDB 2015).
    #[default]
    StepOut,
    /// It crashes (queued work fails) and restarts after the retry delay (GCP 2025).
    Restart,
}

/// `health_check = { every = "5s", unhealthy_after = 3, healthy_after = 2 }` as written:
/// every `every` the balancer probes each server; after `unhealthy_after` failed probes in
/// a row it leaves the server out, after `healthy_after` passed ones it takes it back
/// (HAProxy's `inter`, `fall`, `rise`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHealthCheck {
    pub every: Dur,
    pub unhealthy_after: Option<i64>,
    pub healthy_after: Option<i64>,
    pub max_outstanding: Option<i64>,
    pub max_syncs_held: Option<i64>,
    #[serde(default)]
    pub on_unhealthy: OnUnhealthy,
}

/// What a health check's unhealthy verdict does (`on_unhealthy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum OnUnhealthy {
    /// The balancer holds the server out until it passes again.
    #[default]
    HoldOut,
    /// The server is removed: it crashes into its sync's restart path and rejoins (Kinesis
    /// 2020).
    Restart,
}

/// `outlier_ejection = { consecutive_errors = N, eject_for = "30s", max_ejected = 0.5 }` as
/// written: after N errors in a row from one server, the balancer leaves it out of its
/// choices for `eject_for`, while at most `max_ejected` of the pool's servers are out
/// (Envoy's outlier detection: `consecutive_5xx`, `base_ejection_time`,
/// `max_ejection_percent`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOutlierEjection {
    pub consecutive_errors: i64,
    pub eject_for: Dur,
    pub max_ejected: Option<f64>,
}

/// What a pool's load slowdown grows with: a server's own state when a job starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SlowdownWith {
    /// The jobs waiting in the server's queue.
    Queue,
    /// Every other job the server holds: in service (calls' waits included) and queued.
    InFlight,
}

/// `slowdown = { with = "queue" | "in_flight", per = F, max = M }` as written: service
/// times are multiplied by `min(1 + F x n, M)`, `n` the server's state named by `with`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLoadSlowdown {
    pub with: SlowdownWith,
    pub per: f64,
    pub max: Option<f64>,
}

/// What an autoscaler tracks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleSignal {
    /// Busy workers over the live servers' workers, time-weighted over the period.
    Utilization,
    /// Waiting jobs per live server, time-weighted over the period.
    Queue,
    /// The 99th percentile of the pool's job sojourn (wait + service) over the period.
    P99,
}

/// What scaling in does to a server's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ScaleIn {
    /// The server takes no new work, serves its queue, and leaves when empty.
    #[default]
    Drain,
    /// The server leaves at once: its queued work fails, its work in service fails when it ends.
    Fail,
}

/// `[pool.NAME.autoscale]` as written: target tracking on a signal.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAutoscale {
    pub signal: ScaleSignal,
    /// A number (utilisation fraction, waiting jobs per server) or, for `p99`, a duration.
    pub target: Value,
    pub every: Option<Dur>,
    pub provision: Option<Dur>,
    pub warmup: Option<RawWarmup>,
    pub cooldown: Option<Dur>,
    pub min: i64,
    pub max: i64,
    #[serde(default)]
    pub scale_in: ScaleIn,
    pub tolerance: Option<f64>,
}

/// A new server's warm-up: its service times are multiplied by `factor` for `for`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWarmup {
    #[serde(rename = "for")]
    pub for_: Dur,
    pub factor: f64,
}

/// How clients route to a sharded, replicated pool: their own copy of the topology.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawClusterClient {
    pub refresh: Option<Dur>,
    #[serde(default)]
    pub refresh_on_error: bool,
}
