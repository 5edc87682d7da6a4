//! What a run measures: per-class and per-pool totals, the time series, and the markers of
//! events and interventions. One result struct; every exporter reads it.

use indexmap::IndexMap;
use serde::Serialize;

/// Latency of successful requests, end to end (first offer to success), in seconds.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Latency {
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub p99: Option<f64>,
}

/// Totals of one request class. `offered = admitted + rejected` and
/// `admitted = succeeded + failed + in_flight` hold at the end of every run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClassSummary {
    pub offered: u64,
    pub admitted: u64,
    pub rejected: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub in_flight: u64,
    /// Request-level attempts (first tries and retries).
    pub attempts: u64,
    pub goodput_per_s: f64,
    pub latency_s: Latency,
    /// Key-level successes of keyed queries (pipelines), counted per query attempt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys_ok: Option<u64>,
    /// Key-level failures of keyed queries (pipelines), counted per query attempt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys_failed: Option<u64>,
    /// Second copies sent by hedged steps (classes with a hedged step only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hedges: Option<u64>,
    /// A closed-loop population at the end (classes with `users` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub users: Option<UsersSummary>,
}

/// A closed-loop population at the end of a run. Every user is thinking (or away), or
/// waiting on its request: `users = thinking + waiting` (after a change of the number in
/// an `[[at]]` entry, users leaving may still be finishing: `thinking + waiting` counts
/// them too).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct UsersSummary {
    /// Users wanted at the end.
    pub users: u32,
    /// Users between requests: thinking, or away after giving up (`away`, included).
    pub thinking: u64,
    pub away: u64,
    /// Users whose request is in flight.
    pub waiting: u64,
}

/// Totals of one pool call (`<pool>.<call>`): the requests a pool's jobs sent to a
/// dependency. `calls = rejected + succeeded + failed + in_flight` at the end of every run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CallSummary {
    /// Calls made (one per job that reached the call).
    pub calls: u64,
    /// Calls refused at once by the call's bulkhead (`max_in_flight`).
    pub rejected: u64,
    /// Tries of those calls (first tries and retries).
    pub attempts: u64,
    pub succeeded: u64,
    pub failed: u64,
    pub in_flight: u64,
    /// Latency of successful calls, from the call to its success.
    pub latency_s: Latency,
    /// Second copies sent (hedged calls only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hedges: Option<u64>,
    /// Seconds the call's breaker was open (calls with a breaker only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breaker_open_s: Option<f64>,
}

/// Totals of one cache tier.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CacheSummary {
    /// Hits over lookups, key by key.
    pub hit_ratio: Option<f64>,
    pub lookups: u64,
    pub hits: u64,
    /// Keys stored after a successful query.
    pub fills: u64,
    /// Times a node slot lost its contents (empty spare swapped in, flush, flushed rejoin).
    pub slot_losses: u64,
    /// Misses that waited for another request's fill (tiers that `coalesce` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coalesced: Option<u64>,
    /// Background refreshes sent (tiers with `refresh_ahead` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refreshes: Option<u64>,
}

/// Totals of one server pool.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PoolSummary {
    /// Busy worker time over worker capacity.
    pub utilization: f64,
    /// Time-average number of queued (waiting) queries.
    pub mean_queue_len: f64,
    /// Mean wait in queue of served queries.
    pub mean_wait_s: f64,
    /// Mean wait + service of served queries.
    pub mean_sojourn_s: f64,
    /// Queries served to completion (including work whose caller had given up).
    pub served: u64,
    /// Queries refused because the queue was full.
    pub dropped: u64,
    /// Queued queries dropped because their caller had given up (`cancel_expired`).
    pub expired: u64,
    /// Queries sent to the pool (each part of a fan-out counts).
    pub queries: u64,
    /// Queries failed at once (outage, crashed server, fail-fast server).
    pub failed_fast: u64,
    /// Jobs started after the request at the top of their chain had given up (its
    /// client's deadline passed, or its caller no longer waits): present when some call
    /// says `deadline`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_late: Option<u64>,
    /// Busy time of the primaries over their capacity (pools with replicas only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub primary_utilization: Option<f64>,
    /// Time-average workers held by a job waiting on its calls (pools with calls only;
    /// `utilization` counts them as busy).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_waiting_on_calls: Option<f64>,
    /// Failed calls the pool's jobs fell back from (pools with calls only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallbacks: Option<u64>,
    /// Queries refused or dropped by load shedding (pools that shed only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shed: Option<u64>,
    /// Time-average live servers (autoscaled pools only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_servers: Option<f64>,
    /// Servers the autoscaler asked for (autoscaled pools only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub servers_added: Option<u64>,
    /// Servers the autoscaler scaled in (autoscaled pools only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub servers_removed: Option<u64>,
    /// Times outlier ejection took a server out (pools with `outlier_ejection` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ejections: Option<u64>,
    /// Time-average servers held out by outlier ejection (pools with `outlier_ejection`
    /// only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_ejected: Option<f64>,
    /// Time-average servers held out by failed health checks (pools with `health_check`
    /// only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_unhealthy: Option<f64>,
    /// Jobs whose lease expired: wasted service, or dropped at dequeue (pools with a
    /// `lease` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_expired: Option<u64>,
    /// Time-average servers of the fleet failed at their thread limit (pools with `peers`
    /// only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_failed_servers: Option<f64>,
    /// Servers in the fleet at the end of the run (pools with `peers` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub servers_in_fleet: Option<u32>,
    /// The pool's server syncs (pools with `sync` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncSummary>,
}

/// `summary.json`: byte-identical for the same scenario, seed and overrides.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Summary {
    pub scenario: String,
    pub variant: Option<String>,
    pub seed: u64,
    pub sim_duration_s: f64,
    pub events: u64,
    pub classes: IndexMap<String, ClassSummary>,
    pub pools: IndexMap<String, PoolSummary>,
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub caches: IndexMap<String, CacheSummary>,
    /// Pool calls, by `<pool>.<call>` (scenarios with calls only).
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub calls: IndexMap<String, CallSummary>,
}

/// `timeseries.csv`: one row per step; `NaN` is written as an empty cell.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeSeries {
    /// The schema ([`crate::scenario::columns`]): one entry per value of a row.
    pub columns: Vec<crate::scenario::Column>,
    pub rows: Vec<Vec<f64>>,
}

impl TimeSeries {
    /// The column names, in order (the CSV header).
    pub fn names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }

    /// The component name of a column (`<component>.<measure>`; empty for `time_s`).
    pub fn component(&self, i: usize) -> &str {
        let c = &self.columns[i];
        c.name
            .strip_suffix(c.measure.suffix())
            .and_then(|s| s.strip_suffix('.'))
            .unwrap_or("")
    }

    /// The values of column `i`.
    pub fn values(&self, i: usize) -> Vec<f64> {
        self.rows.iter().map(|r| r[i]).collect()
    }

    /// The values of one column, if it exists.
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let i = self.columns.iter().position(|c| c.name == name)?;
        Some(self.rows.iter().map(|r| r[i]).collect())
    }
}

/// Something to mark on the timeline: an event (with its end) or an intervention.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Marker {
    pub kind: MarkerKind,
    /// The event's NAME (`[event.NAME]`), or `at` for an `[[at]]` entry.
    pub name: String,
    pub label: String,
    pub start_s: f64,
    pub end_s: Option<f64>,
}

/// What a marker stands for.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum MarkerKind {
    Event,
    Intervention,
}

/// The latency quantiles a run keeps per client class ([`RunResult::latency_quantiles_s`]).
pub const QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

/// Everything one run produces.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub summary: Summary,
    pub series: TimeSeries,
    pub markers: Vec<Marker>,
    pub title: String,
    /// Each client class's latency of successful requests at [`QUANTILES`] (p50, p90,
    /// p99, p999), seconds (not in any output file but `calibration.json`'s figures).
    pub latency_quantiles_s: IndexMap<String, [Option<f64>; 4]>,
    /// Wall-clock seconds of the simulation itself (not in any output file).
    pub wall_s: f64,
    /// The window to draw again, zoomed in (seconds), if the scenario asks for one.
    pub zoom: Option<(f64, f64)>,
    /// The sampled requests' spans, with `--trace-sample` only.
    pub traces: Option<super::tracing::TraceLog>,
    /// What the run never reached ([`super::witness`]): not in any output file.
    pub witness: super::witness::Witness,
}

/// A syncing pool's syncs over the run (`[pool.NAME.sync]`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SyncSummary {
    /// Sync requests sent.
    pub syncs: u64,
    /// Sync requests that came back in time.
    pub succeeded: u64,
    /// Sync requests that failed (timed out, or failed at their pool).
    pub failed: u64,
    /// Sync requests still in flight at the end.
    pub in_flight: u64,
    /// Time-average servers in service (all but those their sync holds out).
    pub mean_in_service: f64,
    /// Time-average syncs in flight.
    pub mean_syncing: f64,
}
