//! Issue 21: the tipping point's 95% confidence interval covers, and is sharp where the
//! law is sharp; the overload point's interval and a grid's intervals cover too.
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

/// The reference: collapsed seeds of 1024 at each slowdown length from 11 s to 19 s, a
/// grid of this file's runs (each value with seeds of its own) recomputed by
///
/// ```sh
/// brink tipping broad.toml --set 'tipping.method="grid"' --set 'tipping.from="11s"' \
///   --set 'tipping.to="19s"' --set tipping.points=9 --seeds 1024
/// ```
///
/// (each point's `collapse_probability` x 1024 in `tipping.json`; 44 s on 2 cores). Its
/// crossing is that of a logistic fitted to these points (15.38 s). The reference this
/// replaced, 256 seeds shared by every value, crossed at 14.34 s: with shared seeds the
/// whole curve moves with their luck, so its crossing was off by about a second.
const REFERENCE: [(f64, u32); 9] = [
    (11.0, 317),
    (12.0, 366),
    (13.0, 405),
    (14.0, 470),
    (15.0, 517),
    (16.0, 550),
    (17.0, 577),
    (18.0, 647),
    (19.0, 619),
];

/// Where the reference's collapse share crosses one half.
fn reference_crossing() -> f64 {
    logistic_crossing(&REFERENCE, 1024, 11.0, 19.0)
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
    assert!((truth - 15.38).abs() < 0.05, "{truth}");
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

/// An M/M/10 (C = 100/s, a 1 s timeout, no retries) swept from 80 to 130 requests/s: near
/// capacity a 300 s run fails or not by chance (its queue wanders past the timeout), so the
/// share of baseline runs that fail climbs from 2% at 95/s to 99% at 100.5/s. The trigger
/// is mild (1 s at half speed), so the triggered branch fails almost where the baseline
/// does, and the search's probes land near the overload point too: the stringent case for
/// its interval.
const NEAR_CAPACITY: &str = r#"
title = "M/M/10 near its capacity: a broad overload curve"
duration = "300s"

[metrics]
step = "5s"

[class.request]
rate = 80
timeout = "1s"
steps = [{ query = "server" }]

[pool.server]
workers = 10
service = { law = "exp", mean = "100ms" }
queue_limit = 100000

[event.slowdown]
kind = "slowdown"
pool = "server"
at = "30s"
for = "1s"
factor = 1.5

[tipping]
vary = "class.request.rate"
from = 80
to = 130
points = 11
trigger = ["slowdown"]
settle = "30s"
measure = "goodput_ratio.request"
healthy_above = 0.9
seeds = 40
"#;

/// The reference for [`NEAR_CAPACITY`]: of 256 seeds at each rate, how many baseline and
/// how many triggered runs failed, recomputed by
///
/// ```sh
/// brink tipping near.toml --set 'tipping.method="grid"' --set tipping.from=95 \
///   --set tipping.to=101 --set tipping.points=13 --seeds 256
/// ```
///
/// (each point's `baseline_failed` and `collapse_probability` x 256; 19 s on 2 cores).
const NEAR_REFERENCE: [(f64, u32, u32); 13] = [
    (95.0, 4, 4),
    (95.5, 13, 13),
    (96.0, 21, 23),
    (96.5, 32, 36),
    (97.0, 56, 59),
    (97.5, 99, 107),
    (98.0, 132, 139),
    (98.5, 162, 167),
    (99.0, 207, 211),
    (99.5, 235, 240),
    (100.0, 246, 247),
    (100.5, 254, 254),
    (101.0, 256, 256),
];

/// Where a logistic curve fitted by maximum likelihood to `(x, failed of n)` crosses one
/// half, its centre searched over `[lo, hi]` and its scale from a thousandth to twice that
/// width (a fine grid: the reference's points are too noisy to interpolate between two of
/// them, each share has a standard error of up to 0.5 / sqrt(n)).
fn logistic_crossing(points: &[(f64, u32)], n: u32, lo: f64, hi: f64) -> f64 {
    let log_lik = |m: f64, s: f64| -> f64 {
        points
            .iter()
            .map(|&(x, k)| {
                let q = (1.0 / (1.0 + (-(x - m) / s).exp())).clamp(1e-12, 1.0 - 1e-12);
                k as f64 * q.ln() + (n - k) as f64 * (1.0 - q).ln()
            })
            .sum()
    };
    let w = hi - lo;
    let mut best = (f64::NEG_INFINITY, 0.0);
    for i in 0..=800 {
        let m = lo + w * i as f64 / 800.0;
        for j in 0..=200 {
            let l = log_lik(m, w * 1e-3 * 2000f64.powf(j as f64 / 200.0));
            if l > best.0 {
                best = (l, m);
            }
        }
    }
    best.1
}

/// Law (coverage, as above) for the overload point's interval of the adaptive search, and
/// for both intervals of a grid (16 values x 8 seeds): each contains the reference's
/// crossing in at least 85% of 24 sweeps that differ only in `seed`. With the same seeds
/// at every value of the grid (before issue 21 was closed) the grid's intervals covered in
/// 16 of 24.
#[test]
fn the_overload_and_grid_intervals_cover_the_crossing() {
    let overload = logistic_crossing(&NEAR_REFERENCE.map(|(x, b, _)| (x, b)), 256, 95.0, 101.0);
    let tipping_truth =
        logistic_crossing(&NEAR_REFERENCE.map(|(x, _, t)| (x, t)), 256, 95.0, 101.0);
    assert!((overload - 97.9).abs() < 0.05, "{overload}");
    assert!((tipping_truth - 97.8).abs() < 0.05, "{tipping_truth}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("near.toml");
    std::fs::write(&file, NEAR_CAPACITY).unwrap();
    let sweeps = 24;
    let grid = [
        "--set",
        "tipping.method=\"grid\"",
        "--set",
        "tipping.from=90",
        "--set",
        "tipping.to=105",
        "--set",
        "tipping.points=16",
        "--seeds",
        "8",
    ];
    let mut covered = [0u32; 3];
    let mut report = String::new();
    for seed in 1..=sweeps {
        let seed_set = format!("seed={seed}");
        let adaptive = tipping(
            &file,
            &dir.path().join(format!("a{seed}")),
            &["--jobs", "2", "--set", &seed_set],
        );
        let mut args = vec!["--jobs", "2", "--set", &seed_set];
        args.extend(grid);
        let grid = tipping(&file, &dir.path().join(format!("g{seed}")), &args);
        let checks = [
            (&adaptive, "overload_ci95", overload),
            (&grid, "overload_ci95", overload),
            (&grid, "tipping_ci95", tipping_truth),
        ];
        for (i, (r, key, truth)) in checks.into_iter().enumerate() {
            let [lo, hi] = pair(&r["variants"][0], key);
            let hit = lo <= truth && truth <= hi;
            covered[i] += hit as u32;
            report.push_str(&format!("seed {seed} {key}: [{lo:.2}, {hi:.2}] {hit}\n"));
        }
    }
    for (i, what) in ["adaptive overload", "grid overload", "grid tipping"]
        .iter()
        .enumerate()
    {
        assert!(
            covered[i] as f64 >= 0.85 * sweeps as f64,
            "{what}: {} of {sweeps} intervals contain the reference crossing:\n{report}",
            covered[i]
        );
    }
}

/// Law (sharpness): one pool of capacity C = 100/s and n = 4 attempts tips at C/n = 25
/// (see `tipping.rs`); with outcomes that hardly vary between seeds the interval is
/// narrower than 10% of C/n, holds it and lies within 6% of it (the sweep reads 24.4 to
/// 26.3; within 5%, 24.5 to 26.0, while unanimous probes took three seeds, not two).
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
        lo <= c_n && c_n <= hi && lo >= 0.94 * c_n && hi <= 1.06 * c_n,
        "[{lo}, {hi}] does not hold C/n = {c_n} or is not within 6% of it"
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
