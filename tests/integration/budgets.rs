//! Issue 12: extreme but valid scenarios end bounded. Under a small memory ceiling
//! (`--max-memory`) or event budget (`--max-events`) each run ends with exit code 1 and a
//! message naming the budget, what used it and the option that raises it; nothing is
//! written. A fully partitioned ring of 10,000 nodes x 1,000 virtual nodes runs to its end
//! (a lookup no longer walks the ring).

use crate::common::{Run, brink};

/// Runs `brink ARGS run FILE --out OUT` on `text`; returns (exit code, stderr, whether
/// anything was written to OUT).
fn brink_run(text: &str, args: &[&str]) -> (Option<i32>, String, bool) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("extreme.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.path().join("out");
    let o = brink(args)
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .run();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    (o.status.code(), err, out.exists())
}

/// The run ends with exit 1 and a message that names `budget`, `what` used it and `flag`;
/// nothing is written.
fn ends_at_budget(text: &str, args: &[&str], budget: &str, what: &str, flag: &str) {
    let (code, err, wrote) = brink_run(text, args);
    assert_eq!(code, Some(1), "{err}");
    // The file's warnings (a deliberately overloaded design warns so) come first.
    let error = err
        .lines()
        .skip_while(|l| l.starts_with("warning: "))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(error.starts_with("error: "), "{err}");
    for part in [budget, what, &format!("raise it with {flag}")] {
        assert!(err.contains(part), "should say `{part}`: {err}");
    }
    assert!(!wrote, "output written despite the error: {err}");
}

/// 200 MB: far above what a healthy run of these scenarios holds, far below a runaway's.
const CEILING: [&str; 2] = ["--max-memory", "200MB"];

/// The run ends at the 200 MB ceiling when its queued jobs outgrow it.
fn outgrows_the_ceiling_in_the_run(text: &str) {
    ends_at_budget(
        text,
        &CEILING,
        "memory ceiling of 190.7 MiB reached at t = ",
        "queued jobs",
        "--max-memory",
    );
}

#[test]
fn a_storm_into_an_unbounded_queue_reaches_the_memory_ceiling() {
    // 100 times the capacity of one worker, no queue limit: the queue grows without end.
    let text = r#"duration = "600s"
        [class.request]
        rate = 10000
        steps = [{ query = "server" }]
        [pool.server]
        workers = 1
        service = { law = "exp", mean = "10ms" }
    "#;
    outgrows_the_ceiling_in_the_run(text);
}

#[test]
fn a_scatter_over_a_thousand_shards_reaches_the_memory_ceiling() {
    let text = r#"duration = "600s"
        [class.request]
        rate = 1000
        steps = [{ query = "db", fanout = "all" }]
        [pool.db]
        shards = 1000
        workers = 1
        service = { law = "exp", mean = "10ms" }
    "#;
    outgrows_the_ceiling_in_the_run(text);
}

/// A scenario with an outage of `for_` every `every` over `duration`.
fn repeating(duration: &str, for_: &str, every: &str) -> String {
    format!(
        r#"duration = "{duration}"
        [metrics]
        step = "1h"
        [class.request]
        rate = 1
        steps = [{{ query = "server" }}]
        [pool.server]
        workers = 4
        service = {{ law = "exp", mean = "10ms" }}
        [event.blip]
        kind = "outage"
        pool = "server"
        at = "0s"
        for = "{for_}"
        every = "{every}"
        "#
    )
}

#[test]
fn an_outage_every_20ms_for_years_is_refused_before_the_run() {
    // 1.8e9 occurrences, each a timeline marker: counted in O(1), never listed.
    ends_at_budget(
        &repeating("10000h", "1ms", "20ms"),
        &CEILING,
        "memory ceiling of 190.7 MiB reached before the run",
        "1.8e9 trigger occurrences",
        "--max-memory",
    );
}

#[test]
fn an_event_every_2ns_for_10s_is_refused_before_the_run() {
    ends_at_budget(
        &repeating("10s", "1ns", "2ns"),
        &CEILING,
        "memory ceiling of 190.7 MiB reached before the run",
        "5.0e9 trigger occurrences",
        "--max-memory",
    );
}

#[test]
fn an_outage_every_20ms_for_a_minute_runs_lazily_with_a_bounded_timeline() {
    // 3,000 occurrences, one pending at a time; the timeline draws one band.
    let (code, err, wrote) = brink_run(&repeating("60s", "1ms", "20ms"), &CEILING);
    assert_eq!(code, Some(0), "{err}");
    assert!(wrote);
}

#[test]
fn a_storm_of_immediate_retries_into_a_bounded_queue_reaches_the_event_budget() {
    // Up to 1000 attempts per request, each rejected at once by the full queue: about a
    // thousand events per arrival, all at the same instant.
    let text = r#"duration = "600s"
        [class.request]
        rate = 10000
        retry = { max_attempts = 1000, backoff = "none" }
        steps = [{ query = "server" }]
        [pool.server]
        workers = 1
        queue_limit = 10
        service = { law = "exp", mean = "10ms" }
    "#;
    ends_at_budget(
        text,
        &["--max-events", "5000000"],
        "event budget of 5000000 events reached at t = ",
        "events handled",
        "--max-events",
    );
}

#[test]
fn a_fully_partitioned_ring_of_ten_million_positions_runs_to_its_end() {
    // 10,000 nodes x 1,000 virtual nodes, all partitioned and out of the ring for most of
    // the run: every lookup routes around the whole ring.
    let text = r#"duration = "20s"
        [class.request]
        rate = 2000
        steps = [{ cache = "c", keys = 1, query = "db" }]
        [pool.db]
        workers = 100
        service = { law = "exp", mean = "1ms" }
        [cache.c]
        nodes = 10000
        vnodes = 1000
        keys = 100000
        control_plane = { detect_after = "1s" }
        [event.split]
        kind = "partition"
        cache = "c"
        fraction = 1.0
        at = "2s"
        for = "15s"
    "#;
    let (code, err, wrote) = brink_run(text, &["--max-memory", "2GB"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(wrote);
}

#[test]
fn a_malformed_size_is_a_usage_error() {
    for bad in ["8parsecs", "0MB", "12"] {
        let (code, err, wrote) = brink_run(&repeating("10s", "1s", "2s"), &["--max-memory", bad]);
        assert_eq!(code, Some(2), "{bad}: {err}");
        assert!(err.contains("--max-memory"), "{err}");
        assert!(!wrote);
    }
}
