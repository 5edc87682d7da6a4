//! Issue 21: the tipping point's 95% confidence interval covers, and is sharp where the
//! law is sharp.
//!
//! Law (coverage): a 95% confidence interval computed from independent runs contains the
//! true value in 95% of sweeps; the test asks at least 85% of 24 sweeps that differ only in
//! the scenario's `seed` (slack for a reference that is itself measured, and for a collapse
//! curve that no two-parameter model fits exactly). The sweeps are deterministic, so the
//! test cannot flake: it passes or fails the same way on every machine of this kind.

use crate::common::{Run, brink};
use crate::tipping::{LAW, tipping};
use serde_json::Value;

/// A retry storm against exponential service (C = 100/s, 4 attempts, 30/s offered): a
/// slowdown to a third of capacity tips it with a probability that climbs from 6% at 6 s
/// to 85% at 30 s, lopsidedly (steeply to one half, slowly after).
const BROAD: &str = r#"
title = "Retry storm against exponential service: a broad collapse curve"
duration = "600s"

[metrics]
step = "5s"

[class.request]
rate = 30
timeout = "1s"
retry = { max_attempts = 4 }
steps = [{ query = "server" }]

[pool.server]
workers = 10
service = { law = "exp", mean = "100ms" }
queue_limit = 100000

[event.slowdown]
kind = "slowdown"
pool = "server"
at = "30s"
for = "4s"
factor = 3

[tipping]
vary = "event.slowdown.for"
from = "2s"
to = "60s"
points = 12
trigger = ["slowdown"]
settle = "120s"
measure = "goodput_ratio.request"
healthy_above = 0.5
seeds = 40
"#;

/// The reference: collapsed seeds of 256 at each slowdown length from 6 s to 30 s, a grid
/// of this file's runs recomputed by
///
/// ```sh
/// brink tipping broad.toml --set 'tipping.method="grid"' --set 'tipping.from="6s"' \
///   --set 'tipping.to="30s"' --set tipping.points=25 --seeds 256
/// ```
///
/// (each point's `collapse_probability` x 256 in `tipping.json`; 90 s on 2 cores).
const REFERENCE: [(f64, u32); 25] = [
    (6.0, 15),
    (7.0, 26),
    (8.0, 36),
    (9.0, 57),
    (10.0, 72),
    (11.0, 87),
    (12.0, 104),
    (13.0, 113),
    (14.0, 125),
    (15.0, 134),
    (16.0, 142),
    (17.0, 150),
    (18.0, 161),
    (19.0, 165),
    (20.0, 174),
    (21.0, 181),
    (22.0, 188),
    (23.0, 192),
    (24.0, 199),
    (25.0, 202),
    (26.0, 205),
    (27.0, 209),
    (28.0, 211),
    (29.0, 214),
    (30.0, 217),
];

/// Where the reference's collapse share crosses one half, interpolated (14.34 s).
fn reference_crossing() -> f64 {
    let p = |k: u32| k as f64 / 256.0;
    let i = REFERENCE.iter().position(|r| p(r.1) > 0.5).unwrap();
    let ((x0, k0), (x1, k1)) = (REFERENCE[i - 1], REFERENCE[i]);
    x0 + (x1 - x0) * (0.5 - p(k0)) / (p(k1) - p(k0))
}

fn pair(v: &Value, key: &str) -> [f64; 2] {
    let a = v[key]
        .as_array()
        .unwrap_or_else(|| panic!("no `{key}` in {v}"));
    [a[0].as_f64().unwrap(), a[1].as_f64().unwrap()]
}

#[test]
fn the_95_percent_interval_covers_the_crossing_of_a_broad_curve() {
    let truth = reference_crossing();
    assert!((truth - 14.34).abs() < 0.01, "{truth}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broad.toml");
    std::fs::write(&file, BROAD).unwrap();
    let sweeps = 24;
    let mut covered = 0;
    let mut report = String::new();
    for seed in 1..=sweeps {
        let out = dir.path().join(format!("s{seed}"));
        let r = tipping(
            &file,
            &out,
            &["--jobs", "2", "--set", &format!("seed={seed}")],
        );
        let v = &r["variants"][0];
        let [lo, hi] = pair(v, "tipping_ci95");
        let tip = v["tipping_point"].as_f64().unwrap();
        assert!(
            lo <= tip && tip <= hi,
            "seed {seed}: {tip} outside [{lo}, {hi}]"
        );
        // A curve this broad cannot be pinned to 2% of the operating point with 40 seeds
        // per probe: the sweep says so rather than pretend.
        assert_eq!(v["tolerance_met"], false, "seed {seed}: {v}");
        assert!(
            v["tolerance_note"]
                .as_str()
                .unwrap()
                .contains("seed budget"),
            "{v}"
        );
        let hit = lo <= truth && truth <= hi;
        covered += hit as u32;
        report.push_str(&format!("seed {seed}: [{lo:.2}, {hi:.2}] {hit}\n"));
    }
    assert!(
        covered as f64 >= 0.85 * sweeps as f64,
        "{covered} of {sweeps} intervals contain the reference crossing {truth:.2}:\n{report}"
    );
}

/// Law (sharpness): one pool of capacity C = 100/s and n = 4 attempts tips at C/n = 25
/// (see `tipping.rs`); with outcomes that hardly vary between seeds the interval is
/// narrower than 10% of C/n and lies within 5% of it.
#[test]
fn the_interval_is_sharp_where_the_law_is_sharp() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("law.toml");
    std::fs::write(&file, LAW).unwrap();
    let r = tipping(&file, &dir.path().join("out"), &["--jobs", "2"]);
    let v = &r["variants"][0];
    let [lo, hi] = pair(v, "tipping_ci95");
    let c_n = 25.0;
    assert!(
        hi - lo < 0.1 * c_n,
        "[{lo}, {hi}] not narrower than 10% of C/n"
    );
    assert!(
        lo >= 0.95 * c_n && hi <= 1.05 * c_n,
        "[{lo}, {hi}] not within 5% of C/n = {c_n}"
    );
    assert_eq!(v["tolerance_met"], true, "{v}");
    // The headroom's interval is the tipping point's over the operating point (50).
    let [a, b] = pair(v, "headroom_ci95");
    assert!((a - lo / 50.0).abs() < 1e-12 && (b - hi / 50.0).abs() < 1e-12);
    // The overload point (C = 100) has its own interval.
    let [a, b] = pair(v, "overload_ci95");
    assert!(a <= 100.0 * 1.05 && b >= 100.0 * 0.95, "[{a}, {b}]");
    // The console's headroom table prints the interval.
    let o = brink(["tipping"])
        .arg(&file)
        .args(["--jobs", "2", "--out"])
        .arg(dir.path().join("again"))
        .run();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("(95% CI "), "{text}");
}
