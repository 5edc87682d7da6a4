//! The calibrated example `web-api.toml`: service laws fitted from the bundled telemetry
//! files (`scenarios/data/`), a calibration against the bundled observed file, and the
//! story its description tells: at the 600/s peak a Redis failover (a full flush) heals;
//! well past the tipping point (~2,320/s) it sticks through the clients' retries, and the
//! designs that cut the loop (no retries, twice the connections, dropping expired work)
//! heal at that load.

use crate::common::*;
use brink::model::RunResult;
use brink::scenario::{Loader, Override};

/// The failover at 60 s; the run ends at 240 s.
const BEFORE: (f64, f64) = (10.0, 60.0);
/// The last minute: two minutes after the failover.
const LAST: (f64, f64) = (180.0, 240.0);
/// A load well past the base's tipping point (2,320/s) and below the overload point.
const HIGH: f64 = 2700.0;

/// A run at `rate` as `brink tipping` probes it: the cache's keyspace stays the one its
/// `hit_ratio` gives at the 600/s operating point (a `--set` of the rate would move the
/// operating point, and derive a keyspace 4.5 times larger).
fn story(variant: Option<&str>, rate: f64) -> RunResult {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/web-api.toml");
    let probe = Override::probe("class.request.rate", toml::Value::Float(rate), "test");
    let sc = Loader::open(&path)
        .unwrap()
        .load(variant, &[probe])
        .unwrap();
    run(&sc, 0)
}

fn goodput_ratio(r: &RunResult, rate: f64, w: (f64, f64)) -> f64 {
    mean_between(r, "request.goodput_per_s", w.0, w.1) / rate
}

/// The fitted mean printed by `brink check` for a pool (`mean 7.43 ms`), in ms.
fn fitted_mean_ms(check: &str, pool: &str) -> f64 {
    let line = check
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("pool.{pool}.service:")))
        .unwrap_or_else(|| panic!("no fit line for {pool} in\n{check}"));
    let after = line.split("; mean ").nth(1).expect("a mean");
    let (value, unit) = after.split_once(' ').expect("value and unit");
    assert!(unit.starts_with("ms"), "{line}");
    value.parse().unwrap()
}

/// The fit against the laws the telemetry was drawn from (`examples/web_api_telemetry.rs`):
/// the handler's lognormal mean 5 ms (a Prometheus histogram of 200,000 requests, buckets
/// 1 ms to 500 ms), Postgres's mixture mean 0.9 × 6 + 0.1 × 20 = 7.4 ms (an `.hlog` of
/// 120,000 queries at 3 significant digits): each fitted mean within 2% (issue 22's law
/// test bound for the fitted mean).
#[test]
fn check_fits_the_telemetry_to_the_laws_it_was_drawn_from() {
    let out = brink(["check", "web-api"]).run();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for (pool, truth) in [("api", 5.0), ("postgres", 7.4)] {
        let m = fitted_mean_ms(&text, pool);
        assert!(
            (m / truth - 1.0).abs() < 0.02,
            "{pool}: fitted mean {m} ms against the true {truth} ms"
        );
    }
    assert!(
        text.contains("data/postgres.hlog (bundled)") || text.contains("data/postgres.hlog (hdr"),
        "{text}"
    );
    assert!(text.contains("hit_ratio 0.95 at 600 lookups/s"), "{text}");
}

/// The bundled observed file was simulated from the true laws; the fitted scenario agrees
/// with every figure of it (`consistent`, exit 0), from the repository's root by name.
#[test]
fn calibrate_against_the_bundled_observation_is_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let out = brink(["calibrate", "web-api", "--observed"])
        .arg("scenarios/data/web-api.observed.toml")
        .arg("--out")
        .arg(dir.path())
        .run();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("consistent: all 10 figures agree"),
        "{stdout}"
    );
    assert!(dir.path().join("web-api/calibration.json").is_file());
}

/// At the peak the failover heals: healthy before, and healthy in the last minute.
#[test]
fn at_the_peak_a_failover_heals() {
    let r = story(None, 600.0);
    assert!(goodput_ratio(&r, 600.0, BEFORE) > 0.97);
    let after = goodput_ratio(&r, 600.0, LAST);
    assert!(after > 0.97, "goodput ratio in the last minute {after}");
}

/// Past the tipping point the failover sticks: healthy before, and the last minute's
/// goodput under half the offered load (healthy is above 90%), two minutes after the cache was flushed; the
/// designs that cut the loop heal at the same load (their tipping points are above 5x).
#[test]
fn past_the_tipping_point_it_sticks_and_the_loop_cutting_designs_heal() {
    let rate = HIGH;
    let r = story(None, rate);
    assert!(goodput_ratio(&r, rate, BEFORE) > 0.97);
    let stuck = goodput_ratio(&r, rate, LAST);
    assert!(
        stuck < 0.5,
        "base: goodput ratio in the last minute {stuck}"
    );
    for v in ["no-retries", "connections-20", "cancel-expired"] {
        let r = story(Some(v), rate);
        let after = goodput_ratio(&r, rate, LAST);
        assert!(after > 0.9, "{v}: goodput ratio in the last minute {after}");
    }
}
