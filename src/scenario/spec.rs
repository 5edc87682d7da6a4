//! The validated scenario: what the model trusts. Names are resolved to indices, durations
//! to nanoseconds, and every value is in range. The `[tipping]` and `[phase]` sections'
//! validated types are in [`sweep`], the `[hysteresis]` section's in [`hysteresis`].

pub mod collapse;
pub mod hysteresis;
pub mod pool;
pub mod sweep;

use super::provenance::Provenance;
pub use super::raw::{
    Backoff, Balance, Completion, Discipline, Failure, Fanout, Jitter, Law, MissPolicy, OnExpiry,
    OnFailure, OnUnhealthy, ReadPref, ScaleIn, ScaleSignal, SlowdownWith, TtlRefresh,
};
use crate::engine::time::SimTime;
pub use collapse::{Collapse, CollapseLevel};
pub use hysteresis::Hysteresis;
pub use pool::*;
use std::sync::Arc;
pub use sweep::{Axis, AxisUnit, Health, Phase, Tipping};

/// A scenario ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The file stem, used for the output folder.
    pub name: String,
    /// A one-line title.
    pub title: String,
    /// What the scenario shows.
    pub description: String,
    /// The incident it reproduces, if any.
    pub case: String,
    /// The seed of every random stream.
    pub seed: u64,
    /// How long to simulate.
    pub duration: SimTime,
    /// The time-series window (`metrics.step` in the file).
    pub window: SimTime,
    /// A window of the run drawn again in `timeline-zoom.png`, if set.
    pub zoom: Option<(SimTime, SimTime)>,
    /// The parameters in force at time zero.
    pub config: Arc<Config>,
    /// Interventions in time order, each with the whole configuration it puts in force.
    pub interventions: Vec<Intervention>,
    /// The variant applied, if any.
    pub variant: Option<String>,
    /// All variants the file defines: name and description.
    pub variants: Vec<(String, String)>,
    /// The `[tipping]` sweep, if the file has one.
    pub tipping: Option<Tipping>,
    /// The `[phase]` map's second axis, if the file has one.
    pub phase: Option<Phase>,
    /// What counts as collapse for `brink collapse-time`: `[collapse]`, or derived from
    /// the first pool with a queue limit; none if neither.
    pub collapse: Option<Collapse>,
    /// The `[hysteresis]` ramp, if the file (or an override) has the section; `brink
    /// hysteresis` supplies an empty one for the defaults.
    pub hysteresis: Option<Hysteresis>,
    /// What produced it: file digest, seed, variant, overrides (recorded in outputs).
    pub provenance: Provenance,
}

/// The parameters that interventions may change while a run goes on. The structure (which
/// classes, pools and events exist, and their sizes) stays fixed.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Request classes: the clients' classes in file order (the first [`Config::clients`]),
    /// then one per pool call ([`Config::calls`]): a call's requests are sent by a pool's
    /// job instead of by clients, and run through the same lifecycle.
    pub classes: Vec<ClassCfg>,
    /// How many of [`Config::classes`] are the clients' own.
    pub clients: usize,
    /// Every pool's calls, pool by pool in file order.
    pub calls: Vec<CallCfg>,
    /// Server pools, in file order.
    pub pools: Vec<PoolCfg>,
    /// Cache tiers, in file order.
    pub caches: Vec<CacheCfg>,
    /// Triggers: the file's time-triggered `[event.NAME]` sections, in file order. (In
    /// the code "event" is the engine's word; a scenario event is a trigger.)
    pub triggers: Vec<TriggerCfg>,
    /// The count an SLO measure reads (`<class>.slow_per_s`), when the scenario's
    /// `[tipping]` measure is one; `None` otherwise, so the time series keeps its columns.
    pub slow: Option<SlowCount>,
    /// Some call says `deadline` (either value): the run tracks each request's deadline at
    /// the top and counts the jobs started after it (`started_late`).
    pub deadlines: bool,
    /// The run looks, at every pool, for work taken up after its caller gave up, even
    /// where no pool drops it (`cancel_expired`), and for the most busy workers an arrival
    /// found, and records them in its witness ([`crate::model::witness`]); off in every
    /// run but a sweep's that another variant's runs may be read from. It changes no
    /// result (and keeps the run off the plain instance, which does not look).
    pub watch: bool,
}

/// A class's successful requests slower than a bound, counted per time-series row: with
/// the row's successes, the row's latency quantile against the bound, as a ratio of sums
/// over any run of rows (the quantile of their merged histogram is at most the bound
/// exactly when at most `n - ceil(q n)` of their `n` successes are slower).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlowCount {
    /// Index into [`Config::classes`].
    pub class: usize,
    pub above_ns: SimTime,
}

impl Config {
    /// The clients' request classes (without the classes of pool calls).
    pub fn client_classes(&self) -> &[ClassCfg] {
        &self.classes[..self.clients]
    }

    /// Every profile that changes a rate over time, with the key that sets it: each
    /// client class's load (`class.NAME.profile`) and each pool's sync growth
    /// (`pool.NAME.sync.growth`).
    pub fn profiles(&self) -> impl Iterator<Item = (String, &Profile)> {
        let loads = self
            .client_classes()
            .iter()
            .map(|c| (format!("class.{}.profile", c.name), &c.profile));
        let growth = self.pools.iter().filter_map(|p| {
            let s = p.sync.as_ref()?;
            Some((format!("pool.{}.sync.growth", p.name), &s.growth))
        });
        loads.chain(growth)
    }
}

/// A call that the jobs of a pool make while holding their worker. Its timeout, retry
/// policy, breaker (one per dependency) and step are those of its class,
/// `Config::classes[class]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallCfg {
    /// `<pool>.<call>`: how outputs name it.
    pub name: String,
    /// The calling pool.
    pub pool: usize,
    /// Its class in [`Config::classes`].
    pub class: usize,
    /// On failure, the job spends this many times its pool's service time on a fallback
    /// and goes on; `None`: a failure fails the job.
    pub fallback: Option<f64>,
    /// A bulkhead: the most calls in flight from the pool at once (`u32::MAX`: no limit).
    pub max_in_flight: u32,
    /// The share of the pool's jobs that make the call (1: every job, no draw); a job
    /// that does not make it goes on as if it had returned.
    pub probability: f64,
    /// `deadline = "propagate"`: each try's deadline is at most the calling job's, and the
    /// callee drops the call's queued work past it (`crate::model::deadlines`).
    pub propagate: bool,
}

/// A scheduled change of parameters.
#[derive(Debug, Clone)]
pub struct Intervention {
    /// When it applies.
    pub time: SimTime,
    /// What it is called on the timeline.
    pub label: String,
    /// The configuration in force from `time` on.
    pub config: Arc<Config>,
    /// The trigger (index into [`Config::triggers`]) it starts at `time`, if any
    /// (`fire = "NAME"`): one occurrence lasting the event's `for`.
    pub fire: Option<usize>,
}

/// A request class: its workload, client policy and steps.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassCfg {
    pub name: String,
    /// Base arrival rate, per second.
    pub rate_per_s: f64,
    pub profile: Profile,
    /// Client deadline per attempt (`u64::MAX` = none).
    pub timeout_ns: SimTime,
    pub retry: RetryCfg,
    pub rate_limit: Option<TokenBucketCfg>,
    pub steps: Vec<StepCfg>,
    /// For the class of a pool call: its index in [`Config::calls`].
    pub call: Option<usize>,
    /// For the class of a pool's sync requests: the syncing pool (index into
    /// [`Config::pools`]).
    pub sync: Option<usize>,
    /// A closed-loop population instead of open arrivals (`rate_per_s` is then 0).
    pub users: Option<UsersCfg>,
}

/// A closed-loop population: `users` users, each sending a request, waiting for its end
/// (success or final failure), thinking for a time drawn from `think`, and sending the next.
#[derive(Debug, Clone, PartialEq)]
pub struct UsersCfg {
    pub users: u32,
    pub think: ServiceCfg,
    /// After this many failures in a row a user stays away for the given time (instead of
    /// thinking), then starts afresh.
    pub give_up: Option<(u32, SimTime)>,
}

/// A piecewise-linear multiplier of the base rate, optionally repeating.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// (time, factor) points, strictly increasing in time; empty means constant 1.
    pub points: Vec<(SimTime, f64)>,
    /// The period after which the profile repeats, if any.
    pub every: Option<SimTime>,
}

impl Profile {
    /// The multiplier at time `t`.
    pub fn factor(&self, t: SimTime) -> f64 {
        let p = &self.points;
        if p.is_empty() {
            return 1.0;
        }
        let t = match self.every {
            Some(e) if e > 0 => t % e,
            _ => t,
        };
        if t <= p[0].0 {
            return p[0].1;
        }
        for w in p.windows(2) {
            let ((t0, f0), (t1, f1)) = (w[0], w[1]);
            if t <= t1 {
                let x = (t - t0) as f64 / (t1 - t0) as f64;
                return f0 + (f1 - f0) * x;
            }
        }
        p[p.len() - 1].1
    }

    /// The largest multiplier anywhere.
    pub fn max(&self) -> f64 {
        self.points
            .iter()
            .map(|p| p.1)
            .fold(if self.points.is_empty() { 1.0 } else { 0.0 }, f64::max)
    }

    /// The profile of a run that starts `shift` later in this one's time (`tipping.warmup`):
    /// its factor at `t` is this one's at `t + shift`, exactly. A repeating profile keeps
    /// its points (a warm-up shifts by whole periods of it).
    pub fn shifted(&self, shift: SimTime) -> Profile {
        if self.every.is_some() || self.points.is_empty() || shift == 0 {
            return self.clone();
        }
        let later = self.points.iter().filter(|p| p.0 > shift);
        let points = std::iter::once((0, self.factor(shift)))
            .chain(later.map(|&(t, f)| (t - shift, f)))
            .collect();
        Profile {
            points,
            every: None,
        }
    }

    /// True for the constant profile.
    pub fn is_constant(&self) -> bool {
        self.points.windows(2).all(|w| w[0].1 == w[1].1)
            && self.points.first().is_none_or(|p| p.1 == 1.0)
    }
}

/// A set of failure kinds (a retry policy's `retry_on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailureSet(u8);

impl FailureSet {
    /// Every kind of failure: the default, retry whatever failed.
    pub const ALL: FailureSet = FailureSet(0b1_1111);

    /// The set of the given kinds.
    pub fn of(kinds: &[Failure]) -> Self {
        FailureSet(kinds.iter().fold(0, |m, &k| m | (1 << k as u8)))
    }

    /// True when `kind` is in the set.
    #[inline(always)]
    pub fn contains(self, kind: Failure) -> bool {
        self.0 & (1 << kind as u8) != 0
    }
}

/// A retry policy (request level or query level).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryCfg {
    /// Total attempts, including the first.
    pub max_attempts: u32,
    /// The failures that are retried; others end the attempts at once.
    pub retry_on: FailureSet,
    pub backoff: Backoff,
    pub base_ns: SimTime,
    pub cap_ns: SimTime,
    pub jitter: Jitter,
    pub budget: Option<TokenBucketCfg>,
    pub breaker: Option<BreakerCfg>,
}

impl RetryCfg {
    /// One attempt, no retries.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            retry_on: FailureSet::ALL,
            backoff: Backoff::None,
            base_ns: 0,
            cap_ns: 0,
            jitter: Jitter::None,
            budget: None,
            breaker: None,
        }
    }
}

/// A token bucket: `rate` tokens per second, holding at most `burst`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenBucketCfg {
    pub rate_per_s: f64,
    pub burst: f64,
}

/// A circuit breaker: opens for `open_for` when, within a window, at least `min_requests`
/// attempts ended and the share that failed is at least `failure_ratio`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerCfg {
    pub failure_ratio: f64,
    pub window_ns: SimTime,
    pub min_requests: u32,
    pub open_for_ns: SimTime,
}

/// What one step of a request does: an optional cache lookup of its keys, then a query
/// (for a cache step, the query runs only on a miss and fills the cache when it succeeds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepCfg {
    /// Index into [`Config::caches`] for a cache lookup step.
    pub cache: Option<usize>,
    /// How many keys the step touches.
    pub keys: KeyCount,
    /// Which keys a miss queries.
    pub miss: MissPolicy,
    pub query: QueryCfg,
    /// Derived: the step draws keys (a cache step, a keyed fan-out, or a per-key cost).
    pub keyed: bool,
    /// Derived: key-level outcomes are counted (a keyed query without a cache: a pipeline).
    pub counts_keys: bool,
    /// A second copy of the query if the first is slow (single-part queries only).
    pub hedge: Option<HedgeCfg>,
}

/// When a query sends its second copy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HedgeCfg {
    /// A fixed delay after the first copy.
    After(SimTime),
    /// The query's own latency percentile (0 to 100), tracked as it runs.
    Percentile(f64),
}

/// The number of keys a step touches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyCount {
    Fixed(u32),
    /// Poisson with this mean, at least `min`.
    Poisson {
        mean: f64,
        min: u32,
        /// The law, built once from the mean ([`KeyCount::poisson`]): building it at every
        /// draw cost an `exp` a draw (Slack's sweep used 1% more CPU).
        law: Option<rand_distr::Poisson<f64>>,
    },
    /// Geometric (on 1, 2, ...) with this mean, at least `min`.
    Geometric {
        mean: f64,
        min: u32,
        /// The law, built once from the mean ([`KeyCount::geometric`]).
        law: Option<rand_distr::Geometric>,
    },
}

impl KeyCount {
    /// Poisson with mean `mean`, at least `min`.
    pub fn poisson(mean: f64, min: u32) -> Self {
        let law = rand_distr::Poisson::new(mean).ok();
        Self::Poisson { mean, min, law }
    }

    /// Geometric on 1, 2, ... with mean `mean`, at least `min`.
    pub fn geometric(mean: f64, min: u32) -> Self {
        let law = rand_distr::Geometric::new(1.0 / mean).ok();
        Self::Geometric { mean, min, law }
    }

    /// The mean number of keys a step draws, as the report and the operating point take
    /// it: the law's mean, or `min` where that is larger.
    pub fn mean(self) -> f64 {
        match self {
            KeyCount::Fixed(n) => n as f64,
            KeyCount::Poisson { mean, min, .. } | KeyCount::Geometric { mean, min, .. } => {
                mean.max(min as f64)
            }
        }
    }
}

/// A query to a server pool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueryCfg {
    /// Index into [`Config::pools`].
    pub pool: usize,
    /// Index into the pool's `endpoints` (0: none named).
    pub endpoint: u16,
    /// Service-time multiplier of one part (a counter update costs about 100 plain writes).
    pub cost: f64,
    /// Added to a part's cost for each key it covers (rows fetched).
    pub cost_per_key: f64,
    pub completion: Completion,
    pub fanout: Fanout,
    pub read: ReadPref,
    /// The service's own deadline for one query attempt (`u64::MAX` = none); past it the
    /// query counts as failed and may be retried while the original keeps running.
    pub timeout_ns: SimTime,
    pub retry: RetryCfg,
    /// A sync's query (`crate::model::sync`), whose cost follows its server's size and its
    /// pool's `growth` and which may go to its server's segment; false for every other query.
    pub sync: bool,
}

/// A service-time law.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceCfg {
    pub law: Law,
    pub mean_ns: SimTime,
    pub cv: f64,
    /// The solved law (its parameters found at validation) of a law other than exp and
    /// const (which draw inline).
    pub solved: Option<crate::laws::SolvedLaw>,
}

/// A cache tier: `nodes` slots on a consistent-hash ring over a keyspace.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheCfg {
    pub name: String,
    pub nodes: u32,
    pub spares: u32,
    pub keys: u32,
    /// Zipf exponent of key popularity; `None` is uniform.
    pub zipf: Option<f64>,
    pub ttl_ns: Option<SimTime>,
    /// When a key's `ttl` starts again.
    pub ttl_refresh: TtlRefresh,
    /// Fraction of keys present at the start.
    pub warm: f64,
    pub vnodes: u32,
    /// The hit ratio the file asks for at the operating point, and what was derived from it
    /// (`keys`, or `ttl_ns`; see [`super::hit_ratio`]).
    pub target: Option<HitTarget>,
    /// The control plane's reaction time to a node leaving the catalog; `None` = no
    /// control plane (nothing replaces a node that leaves).
    pub detect_after_ns: Option<SimTime>,
    /// Request coalescing: one fill in flight per key, the other misses on it wait for it.
    pub coalesce: bool,
    /// Early refresh: a hit on a key within the last `1 − f` of its TTL (its age past
    /// `f · ttl`) sends one background query that refills it; `None`: off.
    pub refresh_ahead: Option<f64>,
    /// Jittered TTLs: each fill's TTL is drawn uniformly in `[ttl·(1 − j), ttl]`; `None`:
    /// every fill gets `ttl`.
    pub ttl_jitter: Option<f64>,
}

/// A cache tier's measured hit ratio (`hit_ratio`), the unknown it solves for, and what the
/// operating point's arithmetic gave.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HitTarget {
    /// The hit ratio, in (0, 1).
    pub ratio: f64,
    /// What it solves for: the keyspace (the file gives `ttl`) or the TTL (it gives `keys`).
    pub solves: Solves,
    /// Keys start in their steady state (the file left `warm` out): each present with the
    /// probability its popularity gives at the operating point, its expiry uniform over one
    /// TTL, so the run starts at the hit ratio it asks for.
    pub steady_start: bool,
    /// Key lookups per second at the operating point (0 until derived).
    pub lookups_per_s: f64,
}

/// The unknown a [`HitTarget`] solves for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Solves {
    Keys,
    Ttl,
}

/// A time-triggered event.
#[derive(Debug, Clone, PartialEq)]
pub struct TriggerCfg {
    pub name: String,
    pub label: String,
    pub kind: TriggerKind,
    pub at_ns: SimTime,
    /// How long it lasts (a burst: its spread).
    pub for_ns: SimTime,
    /// Repeats with this period, if set.
    pub every_ns: Option<SimTime>,
    pub enabled: bool,
}

/// What an event does.
#[derive(Debug, Clone, PartialEq)]
pub enum TriggerKind {
    /// Service times of a pool are multiplied by `factor`.
    Slowdown { pool: usize, factor: f64 },
    /// Every query to a pool fails at once.
    Outage { pool: usize },
    /// `clients` requests of a class arrive, uniformly spread over the event's length.
    Burst { class: usize, clients: u64 },
    /// The first `nodes` cache nodes leave the catalog one after another, every
    /// `interval`, each for `down_for` (the cache process keeps serving meanwhile).
    RollingRestart {
        cache: usize,
        nodes: u32,
        interval_ns: SimTime,
        down_for_ns: SimTime,
    },
    /// The first `nodes` cache nodes are unreachable for the event's length, all at once.
    Partition { cache: usize, nodes: u32 },
    /// The first `nodes` cache nodes lose their contents at once.
    Flush { cache: usize, nodes: u32 },
    /// One server of a pool is down for the event's length (replaced after).
    Crash { pool: usize, server: u32 },
    /// One server of a pool answers this share of the queries sent to it with an error at
    /// once, for the event's length, while it looks idle to its balancer.
    FailFast {
        pool: usize,
        server: u32,
        fraction: f64,
    },
    /// `count` standby servers of a pool with `peers` join its fleet, evenly over
    /// `spread_ns` (the first at the start, the last `spread_ns` after it); at the end the
    /// last to join leave first.
    AddServers {
        pool: usize,
        count: u32,
        spread_ns: SimTime,
    },
    /// Every server in the fleet of a pool with `peers` restarts: its work fails, it
    /// learns the fleet as it is now and holds its threads anew.
    Restart { pool: usize },
    /// The first `servers` servers of a syncing pool start a sync (`crate::model::sync`):
    /// all at the event's start, or spread evenly over its length.
    Resync { pool: usize, servers: u32 },
    /// Bad data every server of these pools reads: at the start each of their servers
    /// crashes (and restarts by its `sync`); while the event lasts and is `enabled` (read
    /// at every sync, not only at the start: the kill switch), a server whose sync
    /// succeeds crashes instead of serving.
    CrashLoop { pools: Vec<usize> },
}
