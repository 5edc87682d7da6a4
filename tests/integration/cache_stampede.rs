//! The teaching scenario `cache-stampede.toml`: a flush empties the cache, every miss
//! queries the database at once, the queue passes the clients' timeout, fills stop landing
//! and the hit ratio never comes back, at a load the system carried before. Request
//! coalescing, early refresh and jittered TTLs each recover at the operating point. And
//! each mechanism's own law, in isolation: coalescing sends exactly one query per key while
//! its fill is in flight; early refresh keeps a hot key from ever expiring; jittered TTLs
//! average ttl·(1 − j/2).

use crate::common::*;
use brink::model::RunResult;

const RATE: f64 = 1750.0;
/// Before the flush at 60 s.
const BEFORE: (f64, f64) = (10.0, 60.0);
/// From a minute after the flush to the end of the 300 s run.
const AFTER: (f64, f64) = (120.0, 300.0);

fn story(variant: Option<&str>) -> RunResult {
    run(&bundled("cache-stampede", variant, &[]), 0)
}

fn mean(r: &RunResult, column: &str, (from, to): (f64, f64)) -> f64 {
    mean_between(r, column, from, to)
}

#[test]
fn the_flush_tips_the_base_and_the_cache_never_refills() {
    let r = story(None);
    let good = |w| mean(&r, "request.goodput_per_s", w);
    assert!(good(BEFORE) > 0.95 * RATE, "before {}", good(BEFORE));
    assert!(mean(&r, "objects.hit_ratio", BEFORE) > 0.9);
    assert!(mean(&r, "db.utilization", BEFORE) < 0.3);
    assert!(good(AFTER) < 0.01 * RATE, "after {}", good(AFTER));
    assert!(mean(&r, "objects.hit_ratio", AFTER) < 0.01);
    assert!(mean(&r, "db.utilization", AFTER) > 0.99);
    // Off by default: no coalescing or refresh columns, and no counts in the summary.
    assert!(r.series.column("objects.coalesced_per_s").is_none());
    assert!(r.series.column("objects.refreshes_per_s").is_none());
    let c = &r.summary.caches["objects"];
    assert_eq!((c.coalesced, c.refreshes), (None, None));
}

#[test]
fn each_fix_recovers_after_the_flush() {
    for v in ["coalesce", "early-refresh", "jittered-ttl"] {
        let r = story(Some(v));
        let good = mean(&r, "request.goodput_per_s", AFTER);
        assert!(good > 0.95 * RATE, "{v}: goodput after {good}");
        let hit = mean(&r, "objects.hit_ratio", AFTER);
        assert!(hit > 0.9, "{v}: hit ratio after {hit}");
        let busy = mean(&r, "db.utilization", AFTER);
        assert!(busy < 0.5, "{v}: database utilization after {busy}");
    }
}

#[test]
fn coalescing_sends_one_query_per_missed_key_and_the_rest_wait() {
    let r = story(Some("coalesce"));
    let c = &r.summary.caches["objects"];
    let coalesced = c.coalesced.expect("a coalescing tier counts its waits");
    // Every lookup hits, waits for a fill in flight, or sends one query: with one key a
    // step and no retries, the database's queries are exactly the misses that did not
    // wait (a waiter whose fill was abandoned looks its key up again: a new lookup).
    assert_eq!(
        r.summary.pools["db"].queries,
        c.lookups - c.hits - coalesced
    );
    // At the flush, the misses that waited are the duplicates the base sends: its
    // database gets well under the base's queries (measured: 281 against 529 a second).
    let flush = (60.0, 65.0);
    assert!(mean(&r, "objects.coalesced_per_s", flush) > 0.0);
    let queries = mean(&r, "db.queries_per_s", flush);
    let base = mean(&story(None), "db.queries_per_s", flush);
    assert!(
        queries < 0.6 * base,
        "{queries} queries/s against the base's {base}"
    );
}

/// One key, a database of one worker that is never slower than the clients' timeout (so a
/// fill is never abandoned), and a flush at twice its capacity.
const ONE_KEY: &str = r#"
duration = "1m"
[metrics]
step = "1s"
[class.request]
rate = 400
timeout = "10s"
steps = [{ cache = "c", keys = 1, query = "db" }]
[pool.db]
workers = 1
service = { law = "const", mean = "5ms" }
[cache.c]
nodes = 1
keys = 1
ttl = "100ms"
coalesce = true
"#;

#[test]
fn coalescing_never_has_two_queries_of_a_key_in_flight() {
    // Law: with one key and its fill never abandoned, the database holds at most one query
    // at a time, so nothing ever waits in its queue: `queue_len` is exactly 0 in every
    // row, though every 100 ms the key expires under 2 lookups per service time.
    let r = run(&scenario(ONE_KEY), 0);
    let q = r.series.column("db.queue_len").unwrap();
    assert!(q.iter().all(|&x| x == 0.0), "queue {q:?}");
    let c = &r.summary.caches["c"];
    assert!(
        c.coalesced.unwrap() > 0,
        "nothing waited: the test tests nothing"
    );
    // And without coalescing the same load queues behind the duplicates.
    let r = run(&scenario(&ONE_KEY.replace("coalesce = true", "")), 0);
    let q = mean(&r, "db.queue_len", (0.0, 60.0));
    assert!(q > 0.0, "without coalescing the queue is {q}");
}

#[test]
fn an_abandoned_fill_hands_the_key_to_one_waiter_not_all() {
    // Every query fails (`error_rate = 1`, no retries): each leader's attempt fails as its
    // query comes back, its waiters look the key up again, and one of them leads the next
    // fill. Law: still never two queries of the key in flight (`queue_len` 0 in every
    // row), no request succeeds, and every lookup is a hit, a wait or exactly one query.
    // (The clients wait longer than the run: a leader that timed out with its query still
    // at the database would abandon a query in flight, and the next would queue behind it.)
    let text = ONE_KEY
        .replace(
            "service = { law = \"const\", mean = \"5ms\" }",
            "service = { law = \"const\", mean = \"5ms\" }\nerror_rate = 1.0",
        )
        .replace("timeout = \"10s\"", "timeout = \"10m\"")
        .replace("duration = \"1m\"", "duration = \"10s\"");
    let r = run(&scenario(&text), 0);
    let q = r.series.column("db.queue_len").unwrap();
    assert!(q.iter().all(|&x| x == 0.0), "queue {q:?}");
    let c = &r.summary.caches["c"];
    let coalesced = c.coalesced.unwrap();
    assert!(coalesced > 0, "nothing waited: the test tests nothing");
    assert_eq!(
        r.summary.pools["db"].queries,
        c.lookups - c.hits - coalesced
    );
    // Past the warm start's hits (the key expires within its first 100 ms), nothing
    // succeeds: no fill ever lands to share.
    assert_eq!(mean(&r, "request.goodput_per_s", (1.0, 10.0)), 0.0);
    // A waiter that lost its fill looked its key up again: more lookups than requests.
    let offered = mean(&r, "request.offered_per_s", (0.0, 10.0)) * 10.0;
    assert!(
        c.lookups as f64 > offered,
        "{} lookups, {offered} offered",
        c.lookups
    );
}

#[test]
fn early_refresh_keeps_a_hot_key_from_ever_expiring() {
    // One key looked up 100 times a second, a TTL of 10 s refreshed from 80% of it: each
    // refresh is sent at the first hit past 8 s and lands ~5 ms later, long before the
    // key's expiry, so after the warm start no lookup ever misses. Refreshes: one per
    // cycle of 8 s plus at most a lookup gap (~10 ms), after a first expiry uniform in
    // [0, 10 s): over 300 s, from (300 - 10) / 8.02 + 1 = 37.2 to 300 / 8 + 1 = 38.5.
    let text = ONE_KEY
        .replace("duration = \"1m\"", "duration = \"5m\"")
        .replace("rate = 400", "rate = 100")
        .replace("ttl = \"100ms\"", "ttl = \"10s\"")
        .replace("coalesce = true", "refresh_ahead = 0.8");
    let r = run(&scenario(&text), 0);
    let c = &r.summary.caches["c"];
    assert_eq!(c.hits, c.lookups, "a lookup missed");
    let n = c.refreshes.unwrap();
    assert!((37..=39).contains(&n), "{n} refreshes");
    // Every refresh landed and filled, but perhaps the last, still out at the end.
    assert!(
        (n - 1..=n).contains(&c.fills),
        "{} fills of {n} refreshes",
        c.fills
    );
}

#[test]
fn jittered_ttls_average_the_law_and_cost_their_misses() {
    // Law: one key looked up 1000 times a second (a lookup gap of ~1 ms) is refilled at
    // once at each expiry, so fills come every TTL: fills over 300 s = 300 s / mean TTL,
    // and the mean of U[ttl·(1 − j), ttl] is ttl·(1 − j/2) = 75 ms with ttl = 100 ms and
    // j = 0.5. Tolerance 2%: each cycle adds a lookup gap and a service time (~1 ms +
    // 5 ms of 75) that the fills' count absorbs, and ~3,900 fills give a standard error
    // of 0.24% of the mean TTL.
    let text = ONE_KEY
        .replace("duration = \"1m\"", "duration = \"5m\"")
        .replace("rate = 400", "rate = 1000")
        .replace("coalesce = true", "coalesce = true\nttl_jitter = 0.5");
    let r = run(&scenario(&text), 0);
    let fills = r.summary.caches["c"].fills as f64;
    let cycle_ms = 300_000.0 / fills;
    // A cycle is the TTL, the first lookup after it (~1 ms), and the fill's query (5 ms).
    let ttl_ms = cycle_ms - 1.0 - 5.0;
    assert!(
        (ttl_ms - 75.0).abs() < 0.02 * 75.0,
        "mean TTL {ttl_ms} ms (cycle {cycle_ms} ms)"
    );
}
