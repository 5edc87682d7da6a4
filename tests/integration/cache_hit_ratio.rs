//! Issue 22, item 4: a cache tier given the hit ratio a user measures (`hit_ratio = h`).
//!
//! Law: brink derives the keyspace (from `ttl`) or the TTL (from `keys`) whose steady-state
//! hit ratio `Σ p_r · g(L · p_r · ttl)` is `h` at the operating point (`g(x) = x/(1+x)`
//! from the fill, `1 − e^(−x)` sliding), and starts the tier in that steady state; a run
//! at the operating point then shows `h` within 0.01. Each run below makes at least 300 000
//! lookups, so the hit ratio's standard error is about 0.0004 (hits are correlated through
//! a key's fill, which at most doubles it): 0.01 is over 10 standard errors away.

use crate::common::{Run, brink, run, scenario};
use brink::scenario::{Loader, Override};

/// A class of `rate` requests/s, each looking `keys` keys up in tier `c` (`tier` holds
/// the tier's own lines), misses answered by a database in 1 µs.
fn design(rate: f64, keys: u32, tier: &str) -> String {
    format!(
        r#"
title = "a tier given its hit ratio"
duration = "300s"

[metrics]
step = "10s"

[class.read]
rate = {rate}
steps = [{{ cache = "c", keys = {keys}, miss = "missing", query = "db" }}]

[pool.db]
workers = 1000
service = {{ law = "const", mean = "1us" }}

[cache.c]
nodes = 4
{tier}
"#
    )
}

fn measured(text: &str) -> (f64, u64) {
    let r = run(&scenario(text), 0);
    let c = &r.summary.caches["c"];
    (c.hit_ratio.unwrap(), c.lookups)
}

#[test]
fn a_tier_given_its_hit_ratio_shows_it_at_the_operating_point() {
    for (what, rate, keys, tier, h) in [
        (
            "uniform, from the fill",
            1000.0,
            1,
            "ttl = \"10s\"\nhit_ratio = 0.95",
            0.95,
        ),
        (
            "uniform, sliding expiry",
            1000.0,
            1,
            "ttl = \"10s\"\nttl_refresh = \"on_hit\"\nhit_ratio = 0.9",
            0.9,
        ),
        (
            "Zipf 0.9",
            1000.0,
            1,
            "ttl = \"30s\"\nzipf = 0.9\nhit_ratio = 0.8",
            0.8,
        ),
        (
            "Zipf 1.1, three keys a step",
            400.0,
            3,
            "ttl = \"60s\"\nzipf = 1.1\nhit_ratio = 0.8",
            0.8,
        ),
        (
            "keys given, the TTL derived",
            1000.0,
            1,
            "keys = 20000\nhit_ratio = 0.95",
            0.95,
        ),
    ] {
        let (got, lookups) = measured(&design(rate, keys, tier));
        assert!(lookups >= 300_000, "{what}: only {lookups} lookups");
        assert!((got - h).abs() < 0.01, "{what}: hit ratio {got}, asked {h}");
    }
}

#[test]
fn the_design_stays_when_a_sweep_moves_the_load() {
    // A sweep's probe at half the load keeps the keyspace derived at the operating point
    // (the hit ratio follows the load); the user's own --set is a new operating point.
    let text = design(1000.0, 1, "ttl = \"10s\"\nhit_ratio = 0.95");
    let loader = Loader::from_text("test.toml", "test", text).unwrap();
    let keys = |sets: &[Override]| loader.load(None, sets).unwrap().config.caches[0].keys;
    let rate = toml::Value::Float(500.0);
    let at_op = keys(&[]);
    let probe = keys(&[Override::probe("class.read.rate", rate.clone(), "sweep")]);
    let user = keys(&[Override::new("class.read.rate", rate.clone(), "--set")]);
    assert_eq!(probe, at_op, "a probe re-derived the keyspace");
    assert!(
        (user as f64 - at_op as f64 / 2.0).abs() <= 1.0,
        "half the load should derive half the keys: {user} against {at_op}"
    );
    // At half the load each key is looked up half as often: λ·ttl = 19 / 2 → 0.905.
    let sc = loader
        .load(None, &[Override::probe("class.read.rate", rate, "sweep")])
        .unwrap();
    let c = &run(&sc, 0).summary.caches["c"];
    let x = 9.5;
    let law = x / (1.0 + x);
    assert!(
        (c.hit_ratio.unwrap() - law).abs() < 0.01,
        "hit ratio {:?} at half the load, law {law}",
        c.hit_ratio
    );
}

#[test]
fn brink_check_prints_what_it_derived() {
    let dir = tempdir("check");
    let file = dir.path().join("hr.toml");
    std::fs::write(&file, design(1000.0, 1, "ttl = \"10s\"\nhit_ratio = 0.95")).unwrap();
    let o = brink(["check".as_ref(), file.as_os_str()]).run();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    // λ·ttl = 19 per key: 1000 lookups/s × 10 s / 19 = 526 keys.
    assert!(
        out.contains("cache.c: hit_ratio 0.95 at 1000 lookups/s gives keys = 526 (ttl 10s)"),
        "{out}"
    );
}

#[test]
fn a_hit_ratio_that_cannot_be_derived_is_refused_by_name() {
    let dir = tempdir("bad");
    for (what, rate, tier, says) in [
        (
            "both ttl and keys",
            1000.0,
            "ttl = \"10s\"\nkeys = 100\nhit_ratio = 0.9",
            "not both",
        ),
        ("neither", 1000.0, "hit_ratio = 0.9", "needs a `ttl`"),
        (
            "a ratio of 1",
            1000.0,
            "ttl = \"10s\"\nhit_ratio = 1.0",
            "below 1",
        ),
        (
            "no lookups at the operating point",
            0.0,
            "ttl = \"10s\"\nhit_ratio = 0.9",
            "no step looks keys up",
        ),
        (
            "a TTL too short for one key",
            1.0,
            "ttl = \"1ms\"\nhit_ratio = 0.9",
            "give a longer `ttl`",
        ),
    ] {
        let file = dir.path().join("bad.toml");
        std::fs::write(&file, design(rate, 1, tier)).unwrap();
        let o = brink(["check".as_ref(), file.as_os_str()]).run();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains("cache.c.hit_ratio"), "{what}: {err}");
        assert!(err.contains(says), "{what}: {err}");
    }
}

/// A folder for the test's files, removed when it is dropped (the tests used to leave
/// theirs in the system's temporary folder).
fn tempdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("brink-hit-ratio-{name}-"))
        .tempdir()
        .unwrap()
}
