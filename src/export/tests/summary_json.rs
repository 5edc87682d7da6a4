//! `summary.json`: a run's summary, with and without caches and service-graph calls.

use super::*;
use crate::model::metrics::{
    CacheSummary, CallSummary, ClassSummary, Latency, PoolSummary, Summary,
};
use crate::report::narrative::Sentence;
use indexmap::IndexMap;

fn class(offered: u64, keys: Option<(u64, u64)>) -> ClassSummary {
    ClassSummary {
        users: None,
        offered,
        admitted: offered - 3,
        rejected: 3,
        succeeded: offered - 10,
        failed: 6,
        in_flight: 1,
        attempts: offered + 41,
        goodput_per_s: (offered - 10) as f64 / 600.0,
        latency_s: Latency {
            mean: Some(0.1234567890123),
            p50: Some(0.09),
            p99: None,
        },
        keys_ok: keys.map(|k| k.0),
        keys_failed: keys.map(|k| k.1),
        hedges: None,
    }
}

fn pool(primary: Option<f64>) -> PoolSummary {
    PoolSummary {
        started_late: None,
        utilization: 0.7,
        mean_queue_len: 12.5,
        mean_wait_s: 1e-7,
        mean_sojourn_s: 0.3333333333333333,
        served: 41_000,
        dropped: 0,
        expired: 17,
        queries: 41_017,
        failed_fast: 2,
        primary_utilization: primary,
        mean_waiting_on_calls: None,
        fallbacks: None,
        shed: None,
        mean_servers: None,
        servers_added: None,
        servers_removed: None,
        ejections: None,
        mean_ejected: None,
        mean_unhealthy: None,
        lease_expired: None,
        mean_failed_servers: None,
        servers_in_fleet: None,
        sync: None,
    }
}

/// A run with two classes (one with pipelines), two pools (one with replicas) and a cache.
fn summary() -> Summary {
    Summary {
        scenario: "golden".into(),
        variant: Some("lifo".into()),
        seed: 11,
        sim_duration_s: 600.0,
        events: 1_234_567,
        classes: IndexMap::from([
            ("request".to_string(), class(3000, None)),
            ("feed".to_string(), class(120, Some((5000, 12)))),
        ]),
        pools: IndexMap::from([
            ("db".to_string(), pool(None)),
            ("redis".to_string(), pool(Some(0.95))),
        ]),
        caches: IndexMap::from([(
            "memcached".to_string(),
            CacheSummary {
                hit_ratio: Some(0.875),
                lookups: 8,
                hits: 7,
                fills: 1,
                slot_losses: 0,
                coalesced: None,
                refreshes: None,
            },
        )]),
        calls: IndexMap::new(),
    }
}

#[test]
fn summary_json_golden() {
    // The run told in words: two timed sentences.
    let story = [
        Sentence {
            t_s: 0.0,
            at: "0 s".into(),
            text: "The run starts healthy: the goodput ratio of `request` is 0.99.".into(),
        },
        Sentence {
            t_s: 750.0,
            at: "12 min 30 s".into(),
            text: "It has not recovered by the end of the run.".into(),
        },
    ];
    golden(
        "summary.json",
        &summary_json(&summary(), &story, &golden_provenance()),
    );
    // Without caches the key is left out, not written empty.
    let mut s = summary();
    s.caches.clear();
    let text = String::from_utf8(summary_json(&s, &[], &golden_provenance())).unwrap();
    assert!(!text.contains("\"caches\""), "{text}");
    assert!(!text.contains("\"calls\""), "{text}");
}

/// A service graph's summary: a pool with calls that sheds, a hedged class, two calls
/// (one with a breaker and a hedge).
#[test]
fn summary_json_with_calls_golden() {
    let mut s = summary();
    s.caches.clear();
    s.classes["request"].hedges = Some(42);
    let api = &mut s.pools["db"];
    api.mean_waiting_on_calls = Some(3.25);
    api.fallbacks = Some(7);
    api.shed = Some(19);
    let call = |breaker: Option<f64>, hedges: Option<u64>| CallSummary {
        calls: 1000,
        rejected: 10,
        attempts: 1400,
        succeeded: 950,
        failed: 38,
        in_flight: 2,
        latency_s: Latency {
            mean: Some(0.012),
            p50: Some(0.01),
            p99: None,
        },
        hedges,
        breaker_open_s: breaker,
    };
    s.calls = IndexMap::from([
        ("db.redis".to_string(), call(Some(12.5), Some(64))),
        ("db.audit".to_string(), call(None, None)),
    ]);
    golden(
        "summary-calls.json",
        &summary_json(&s, &[], &golden_provenance()),
    );
}
