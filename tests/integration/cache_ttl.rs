//! Issue 22, item 4: a cache whose TTL behaves like the caches it models.
//!
//! Law: with uniform keys looked up as a Poisson stream of λ per key per second, and a
//! miss filling its key at once (a database that answers in 1 µs), a key that expires
//! `ttl` after its fill hits λ·ttl of the 1 + λ·ttl lookups of each fill-to-miss cycle:
//! hit ratio λ·ttl / (1 + λ·ttl) (Redis `GET`, memcached `get`: a hit does not extend the
//! TTL). With sliding expiry (`ttl_refresh = "on_hit"`) a lookup hits when the one before
//! it came within `ttl`: 1 − e^(−λ·ttl). Here λ·ttl = 1: 0.5 against 0.632. Over 4000 s of
//! 100 lookups/s (400 000 lookups, a standard error of about 0.001) each is asked within
//! 1% of its law.

use crate::common::{run, scenario};

fn tier(refresh: &str, warm: f64) -> String {
    format!(
        r#"
title = "one key a lookup, 1000 uniform keys, 10 s TTL"
duration = "4000s"

[metrics]
step = "10s"

[class.read]
rate = 100
steps = [{{ cache = "c", keys = 1, query = "db" }}]

[pool.db]
workers = 1000
service = {{ law = "const", mean = "1us" }}

[cache.c]
nodes = 1
keys = 1000
ttl = "10s"
warm = {warm}
{refresh}
"#
    )
}

fn hit_ratio_and_fills(text: &str) -> (f64, u64, u64) {
    let r = run(&scenario(text), 0);
    let c = &r.summary.caches["c"];
    (c.hit_ratio.unwrap(), c.fills, c.lookups - c.hits)
}

#[test]
fn a_hit_does_not_extend_the_ttl() {
    let (h, fills, misses) = hit_ratio_and_fills(&tier("", 0.0));
    let law = 0.5;
    assert!((h - law).abs() < 0.01 * law, "hit ratio {h}, law {law}");
    // Fills count fills only: one per miss (each miss queries its one key and fills it).
    assert_eq!(fills, misses);
}

#[test]
fn sliding_expiry_renews_the_ttl_at_every_hit() {
    let (h, fills, misses) = hit_ratio_and_fills(&tier("ttl_refresh = \"on_hit\"", 0.0));
    let law = 1.0 - (-1.0f64).exp();
    assert!((h - law).abs() < 0.01 * law, "hit ratio {h}, law {law}");
    assert_eq!(fills, misses);
}

/// A warm tier without a TTL and every key hitting never queries, so it fills nothing
/// (`fills` counted every hit before).
#[test]
fn a_step_whose_keys_all_hit_fills_nothing() {
    let text = tier("", 1.0).replace("ttl = \"10s\"\n", "");
    let (h, fills, _) = hit_ratio_and_fills(&text);
    assert_eq!((h, fills), (1.0, 0));
}
