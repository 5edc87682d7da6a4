//! Issue 23, items 3 and 5: what a run keeps beyond one simulation counts against the memory
//! ceiling (`--max-memory`). `collapse-time` keeps a copy of the simulation for each
//! entrance state and each trajectory that reaches a level; autoscalers add servers. A run
//! that would pass the ceiling ends with the named budget error (exit 1), within the
//! ceiling, nothing written: never an abort or an out-of-memory kill.

use crate::common::{Run, brink};
use std::time::{Duration, Instant};

/// 512 MB: the estimates below need gigabytes, so each must stop at it.
const CEILING: [&str; 2] = ["--max-memory", "512MB"];

/// Far longer than a stop at the ceiling takes (under a second alone on a laptop, a few
/// seconds on a loaded machine), far shorter than running on would: a guard against a run
/// that ignores the ceiling, not a timing measurement.
const FAIL_FAST: Duration = Duration::from_secs(60);

/// Runs `brink --max-memory 512MB COMMAND FILE --out OUT` on `text`; asserts that it ends
/// with exit code 1 and the ceiling's message naming `what` (and no abort, nothing
/// written), quickly.
fn ends_at_the_ceiling(command: &str, text: &str, what: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.path().join("out");
    let t0 = Instant::now();
    let o = brink(CEILING)
        .arg(command)
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .run();
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        !err.contains("panicked") && !err.contains("memory allocation"),
        "{err}"
    );
    // A signal (an abort, an out-of-memory kill) leaves no exit code.
    assert_eq!(o.status.code(), Some(1), "{err}");
    for part in [
        "error: memory ceiling of 488.3 MiB reached at t = ",
        what,
        "raise it with --max-memory",
    ] {
        assert!(err.contains(part), "should say `{part}`: {err}");
    }
    assert!(!out.exists(), "output written despite the error: {err}");
    assert!(took < FAIL_FAST, "took {took:?}: {err}");
}

/// An M/M/1 queue at 50% load whose collapse is 20 requests in flight (rare: about one
/// excursion in a million gets there), behind a cache tier of `keys` keys that never hits
/// (a TTL of a microsecond), so each copy of the simulation holds the whole keyspace.
fn mm1_collapse(keys: u64, collapse_extra: &str) -> String {
    format!(
        r#"duration = "10s"
[class.request]
rate = 50
steps = [{{ cache = "c", keys = 1, query = "db" }}]
[cache.c]
nodes = 1
keys = {keys}
ttl = "1us"
[pool.db]
workers = 1
service = {{ law = "exp", mean = "10ms" }}
[collapse]
in_flight = 20
{collapse_extra}
"#
    )
}

#[test]
fn collapse_time_with_a_million_key_cache_ends_at_the_ceiling() {
    // 1000 entrance states of 15 MiB each (the keyspace) would need 15 GiB.
    ends_at_the_ceiling(
        "collapse-time",
        &mm1_collapse(1_000_000, ""),
        "copies of the simulation kept by the estimate",
    );
}

#[test]
fn collapse_time_with_400000_cycles_ends_at_the_ceiling() {
    // 400,000 entrance states of a small simulation (tens of KiB each): gigabytes.
    ends_at_the_ceiling(
        "collapse-time",
        &mm1_collapse(10, "cycles = 400000"),
        "copies of the simulation kept by the estimate",
    );
}

#[test]
fn the_same_estimate_fits_a_ceiling_it_does_not_reach() {
    // The check that must fail above can pass: with 1,000 keys the copies fit in 512 MB.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("small.toml");
    std::fs::write(&file, mm1_collapse(1000, "")).unwrap();
    let o = brink(CEILING)
        .arg("collapse-time")
        .arg(&file)
        .arg("--out")
        .arg(dir.path().join("out"))
        .run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
}

/// Ten pools of one server that ask for 100,000 each at the first evaluation (the signal
/// is 100,000 times the target): 1e6 servers, about 80 MB.
fn ten_pools_scaling_out(max: u32) -> String {
    let mut text = String::from("duration = \"3s\"\n[metrics]\nstep = \"1s\"\n");
    for i in 0..10 {
        text.push_str(&format!(
            r#"[class.c{i}]
rate = 20
steps = [{{ query = "p{i}" }}]
[pool.p{i}]
workers = 1
service = {{ law = "exp", mean = "1s" }}
[pool.p{i}.autoscale]
signal = "utilization"
target = 0.00001
every = "1s"
provision = "100ms"
cooldown = "1h"
min = 1
max = {max}
"#
        ));
    }
    text
}

#[test]
fn autoscaled_servers_past_the_ceiling_end_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("scale.toml");
    std::fs::write(&file, ten_pools_scaling_out(100_000)).unwrap();
    let run = |ceiling: &str, out: &str| {
        brink(["--max-memory", ceiling])
            .arg("run")
            .arg(&file)
            .arg("--out")
            .arg(dir.path().join(out))
            .run()
    };
    let o = run("40MB", "small");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("memory ceiling of 38.1 MiB reached at t = 1.")
            && err.contains("autoscaled servers")
            && err.contains("raise it with --max-memory"),
        "{err}"
    );
    assert!(!dir.path().join("small").exists(), "{err}");
    // With room for them, the same run ends normally.
    let o = run("1GB", "large");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
