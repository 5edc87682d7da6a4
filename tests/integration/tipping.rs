//! Issue 5: the tipping sweep finds the bistable region where theory puts it.
//!
//! One pool of capacity C, a client timeout shorter than the latency of the failed state,
//! n attempts per request and no backoff: once a trigger has filled the queue, every
//! attempt times out and is retried, so the pool receives n x rate queries per second. The
//! failed state sustains while n x rate > C; the healthy state holds while rate < C. So
//! the tipping point is C / n and the overload point C.

use crate::common::{Run, brink};
use serde_json::Value;
use std::path::Path;

/// C = 10 workers / 100 ms = 100 queries/s; n = 4; a x20 slowdown for 10 s fills the queue
/// past the 1 s timeout at any load in the sweep (capacity 5/s while it lasts). Short, so
/// that below C/n the backlog it leaves (under ~1,000 queries) drains within `settle` even
/// at 5% below C/n, where it drains at C - n x rate = 5/s: the window then sees where the
/// failed state sustains, not how slowly it drains.
pub const LAW: &str = r#"
title = "One pool, n attempts: the failed state sustains while n x rate > C"
duration = "900s"

[metrics]
step = "5s"

[class.request]
rate = 50
timeout = "1s"
retry = { max_attempts = 4 }
steps = [{ query = "server" }]

[pool.server]
workers = 10
service = { law = "const", mean = "100ms" }
queue_limit = 1000000

[event.slowdown]
kind = "slowdown"
pool = "server"
at = "60s"
for = "10s"
factor = 20

[tipping]
vary = "class.request.rate"
label = "offered load"
unit = "requests/s"
from = 5
to = 125
points = 25
trigger = ["slowdown"]
settle = "500s"
measure = "goodput_ratio.request"
healthy_above = 0.5
seeds = 3
"#;

/// Runs `brink tipping FILE ARGS --out OUT` and returns `tipping.json`.
pub fn tipping(file: &Path, out: &Path, args: &[&str]) -> Value {
    let o = brink(["tipping"])
        .arg(file)
        .arg("--out")
        .arg(out)
        .args(args)
        .run();
    assert!(
        o.status.success(),
        "brink tipping failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stem = file.file_stem().unwrap();
    let text = std::fs::read_to_string(out.join(stem).join("tipping.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("`{key}` is not a number in {v}"))
}

/// Issue 10's law test for the adaptive search (the default method): the tipping point
/// lies within 5% of C/n = 25 and its interval is narrower than 10% of C/n; the overload
/// point lies within 5% of C. (The operating point, 50, sets the tolerance: 2% of it, 1.)
#[test]
fn tipping_point_is_capacity_over_attempts_and_overload_point_is_capacity() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("law.toml");
    std::fs::write(&file, LAW).unwrap();
    let r = tipping(&file, &dir.path().join("out"), &["--jobs", "2"]);
    assert_eq!(r["method"], "adaptive");
    let base = &r["variants"][0];
    let (c, n) = (100.0, 4.0);
    let tip = num(base, "tipping_point");
    let over = num(base, "overload_point");
    assert!(
        (tip - c / n).abs() <= 0.05 * c / n,
        "tipping point {tip}, theory C/n = {}",
        c / n
    );
    let iv = base["tipping_interval"].as_array().unwrap();
    let (lo, hi) = (iv[0].as_f64().unwrap(), iv[1].as_f64().unwrap());
    assert!(lo <= tip && tip <= hi, "{tip} outside [{lo}, {hi}]");
    assert!(
        hi - lo < 0.1 * c / n,
        "interval [{lo}, {hi}] not narrower than 10% of C/n"
    );
    assert!(
        (over - c).abs() <= 0.05 * c,
        "overload point {over}, theory C = {c}"
    );
    // The fitted collapse curve crosses 0.5 inside the interval.
    let mid = num(&base["collapse_fit"], "midpoint");
    assert!(
        lo <= mid && mid <= hi,
        "fit midpoint {mid} outside [{lo}, {hi}]"
    );
    // Between them the region is metastable: healthy without the trigger, failed with it.
    for p in base["points"].as_array().unwrap() {
        let v = num(p, "value");
        if v > tip && v < over {
            assert_eq!(p["state"], "metastable", "at rate {v}: {p}");
        }
    }
}

#[test]
fn retry_storm_runs_inside_its_metastable_region() {
    let dir = tempfile::tempdir().unwrap();
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/retry-storm.toml");
    let r = tipping(&file, dir.path(), &[]);
    let base = &r["variants"][0];
    let (op, tip, over) = (
        num(base, "operating_point"),
        num(base, "tipping_point"),
        num(base, "overload_point"),
    );
    assert_eq!(op, 70.0);
    assert!(
        tip < over,
        "no metastable region: tipping {tip}, overload {over}"
    );
    assert!(
        tip < op && op < over,
        "operating point {op} not in [{tip}, {over})"
    );
    assert!(num(base, "headroom") < 1.0);
}

/// A variant that switches the trigger off itself is swept without it: its triggered
/// branch is a second baseline, so its points are stable (or overloaded) but never
/// metastable, its tipping point is its overload point (to the tolerance), and the
/// output says so. A
/// `--set` that switches it off for every variant does not count: the sweep switches it
/// on in the triggered branch, as for a trigger written `enabled = false` in the file.
#[test]
fn a_variant_without_the_trigger_is_swept_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("law.toml");
    let text =
        format!("{LAW}\n[variant.no-trigger]\nset = {{ \"event.slowdown.enabled\" = false }}\n");
    std::fs::write(&file, text).unwrap();
    let args = ["--all-variants", "--jobs", "2", "--set", "tipping.points=7"];
    let r = tipping(&file, &dir.path().join("out"), &args);
    let (base, quiet) = (&r["variants"][0], &r["variants"][1]);
    assert_eq!(quiet["variant"], "no-trigger");
    assert_eq!(
        quiet["swept_without_trigger"],
        serde_json::json!(["slowdown"])
    );
    assert!(base.get("swept_without_trigger").is_none(), "{base}");
    for p in quiet["points"].as_array().unwrap() {
        assert_ne!(p["state"], "metastable", "{p}");
    }
    // Two estimates of one point from the two branches' runs, each branch run until the
    // sequential test decides it: equal to the tolerance (they were equal to the bit while
    // the test's fewest seeds were a probe's 3, which every probe of this sweep ran).
    let (tip, over) = (num(quiet, "tipping_point"), num(quiet, "overload_point"));
    assert!(
        (tip - over).abs() <= num(quiet, "tolerance"),
        "{tip} {over}"
    );
    assert!(num(base, "tipping_point") < num(quiet, "tipping_point"));
    // Switched off for every variant by --set, the variant no longer differs from the
    // base: both are swept with the trigger, switched on in the triggered branch.
    let mut off = args.to_vec();
    off.extend(["--set", "event.slowdown.enabled=false"]);
    let r = tipping(&file, &dir.path().join("out2"), &off);
    for v in r["variants"].as_array().unwrap() {
        assert!(v.get("swept_without_trigger").is_none(), "{v}");
    }
}

/// With 5 seeds a probe where every seed stays healthy, or every seed collapses, is sure
/// at 95% (Wilson: under 0.43, over 0.57): the bounds bracket the law's tipping point C/n
/// = 25, and every probe's interval holds its observed collapse share.
#[test]
fn five_seeds_bound_the_tipping_point_with_95_percent_confidence() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("law.toml");
    std::fs::write(&file, LAW).unwrap();
    let args = [
        "--jobs",
        "2",
        "--seeds",
        "5",
        "--set",
        "tipping.points=13",
        "--set",
        "tipping.method=\"grid\"",
    ];
    let r = tipping(&file, &dir.path().join("out"), &args);
    // The parameter's label and unit name it in the output.
    assert_eq!(
        (r["label"].as_str(), r["unit"].as_str()),
        (Some("offered load"), Some("requests/s"))
    );
    let base = &r["variants"][0];
    let bounds = base["tipping_bounds_95"].as_array().unwrap();
    let (lo, hi) = (bounds[0].as_f64().unwrap(), bounds[1].as_f64().unwrap());
    assert!(lo < 25.0 && 25.0 <= hi, "bounds [{lo}, {hi}], law C/n = 25");
    assert!(hi - lo <= 20.0, "bounds [{lo}, {hi}] wider than two steps");
    for p in base["points"].as_array().unwrap() {
        let share = num(p, "collapse_probability");
        let ci = p["collapse_interval"].as_array().unwrap();
        let (a, b) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
        assert!(a <= share && share <= b, "{p}");
    }
}

/// Issue 10: with a `[collapse]` section, each variant's mean time to spontaneous collapse
/// at its operating point is in `tipping.json` and the headroom table (estimated by
/// multilevel splitting; its interval holds its mean). Without one, neither mentions it.
#[test]
fn the_mean_time_to_collapse_is_reported_where_the_scenario_defines_collapse() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("law.toml");
    let with = format!(
        "{LAW}\n[collapse]\npool = \"server\"\nqueue = 30\neffort = 200\n\n[variant.busier]\nset = {{ \"class.request.rate\" = 80 }}\n"
    );
    std::fs::write(&file, with).unwrap();
    let args = [
        "--all-variants",
        "--set",
        "tipping.method=\"grid\"",
        "--set",
        "tipping.points=3",
    ];
    let o = brink(["tipping"])
        .arg(&file)
        .arg("--out")
        .arg(dir.path().join("out"))
        .args(args)
        .run();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table =
        String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(table.contains("mean time to collapse"), "{table}");
    let text = std::fs::read_to_string(dir.path().join("out/law/tipping.json")).unwrap();
    let r: Value = serde_json::from_str(&text).unwrap();
    let mut means = Vec::new();
    for v in r["variants"].as_array().unwrap() {
        let t = &v["mean_time_to_collapse"];
        let (m, lo, hi) = (
            num(t, "mean_s"),
            t["ci95"][0].as_f64().unwrap(),
            t["ci95"][1].as_f64().unwrap(),
        );
        assert!(m > 0.0 && lo <= m && m <= hi, "{t}");
        assert_eq!(num(t, "at"), num(v, "operating_point"));
        means.push(m);
    }
    // More load, sooner collapse.
    assert!(means[1] < means[0], "{means:?}");
    let plain = tipping(
        &{
            let f = dir.path().join("plain.toml");
            std::fs::write(&f, LAW).unwrap();
            f
        },
        &dir.path().join("out2"),
        &[
            "--set",
            "tipping.method=\"grid\"",
            "--set",
            "tipping.points=3",
        ],
    );
    assert!(plain["variants"][0].get("mean_time_to_collapse").is_none());
}

/// Issue 21, item 6: an integer written for a float key is the same number. A whole-number
/// rate below 50 used to make the axis an integer axis, whose tolerance is at least 1 (2%
/// of 1 is 0.02): the same design then tipped at a different point with a 50 times coarser
/// tolerance. One worker of 250 ms (capacity 4/s), 4 attempts: tips near 4/4 = 1.
#[test]
fn a_float_key_written_as_an_integer_sweeps_as_the_same_number() {
    let law = |rate: &str| {
        format!(
            r#"
title = "A float key written as an integer"
duration = "300s"
[metrics]
step = "5s"
[class.request]
rate = {rate}
timeout = "1s"
retry = {{ max_attempts = 4 }}
steps = [{{ query = "server" }}]
[pool.server]
workers = 1
service = {{ law = "const", mean = "250ms" }}
queue_limit = 100000
[event.slowdown]
kind = "slowdown"
pool = "server"
at = "30s"
for = "20s"
factor = 20
[variant.spelled]
set = {{ "class.request.rate" = 1 }}
[tipping]
vary = "class.request.rate"
from = 0.2
to = 5
points = 6
trigger = ["slowdown"]
settle = "100s"
measure = "goodput_ratio.request"
healthy_above = 0.5
seeds = 3
"#
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for (name, rate) in [("int", "1"), ("float", "1.0")] {
        let folder = dir.path().join(name);
        std::fs::create_dir(&folder).unwrap();
        let file = folder.join("spelling.toml");
        std::fs::write(&file, law(rate)).unwrap();
        let out = folder.join("out");
        let mut r = tipping(&file, &out, &["--all-variants"]);
        // Only the file's digest may differ (the bytes differ): drop the provenance.
        r.as_object_mut().unwrap().remove("produced_by");
        let files: Vec<Vec<u8>> = ["tipping.csv", "tipping.svg", "tipping.png"]
            .iter()
            .map(|f| std::fs::read(out.join("spelling").join(f)).unwrap())
            .collect();
        outputs.push((r, files));
    }
    let (int, float) = (&outputs[0], &outputs[1]);
    for v in int.0["variants"].as_array().unwrap() {
        assert_eq!(
            num(v, "tolerance"),
            0.02,
            "2% of the operating point 1: {v}"
        );
        let t = num(v, "tipping_point");
        assert!((t - 1.0).abs() < 0.1, "tips near C/n = 1, not at {t}");
    }
    assert_eq!(
        int.0, float.0,
        "tipping.json differs but for its provenance"
    );
    assert!(int.1 == float.1, "tipping.csv, .svg or .png differs");
}
