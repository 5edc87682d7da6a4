//! Issue 22, item 1: service laws from measurements. `tests/data/telemetry.toml` takes its
//! pools' laws from a Prometheus histogram, an OTLP/JSON exponential histogram and an
//! HdrHistogram interval log beside it (`tests/data/`), and from percentiles: `brink check`
//! prints what it fitted, a run records it in `produced_by.fitted`, and the same file gives
//! the same bytes. (The law tests are `scenario::telemetry::tests`; malformed files are in
//! `tests/bad/data/`, refused by `bad_input`.)

use crate::common::{Run, brink};
use serde_json::Value;
use std::path::PathBuf;

const POOLS: [(&str, &str); 4] = [
    ("pool.api.service", "histogram from api.prom (prometheus"),
    ("pool.db.service", "histogram from db.otlp.json (otlp"),
    ("pool.jvm.service", "histogram from tagged.hlog (hdr A"),
    ("pool.cache.service", "percentiles"),
];

fn file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/telemetry.toml")
}

#[test]
fn check_prints_each_fitted_law_and_its_errors() {
    // From another folder: the files are found beside the scenario, not in the current one.
    let dir = tempfile::tempdir().unwrap();
    let o = brink(["check".as_ref(), file().as_os_str()])
        .current_dir(dir.path())
        .run();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (at, law) in POOLS {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{at}:")))
            .unwrap_or_else(|| panic!("no line for {at} in\n{out}"));
        assert!(line.contains(law), "{line}");
        assert!(line.contains(" tail (") && line.contains("mean "), "{line}");
    }
    assert_eq!(out.matches("measured -> fitted: p").count(), 4, "{out}");
}

#[test]
fn a_run_records_the_fits_and_repeats_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let mut summaries = Vec::new();
    for k in 0..2 {
        let out = dir.path().join(format!("out{k}"));
        let o = brink([
            "run".as_ref(),
            file().as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ])
        .run();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        summaries.push(std::fs::read(out.join("telemetry/summary.json")).unwrap());
    }
    assert_eq!(summaries[0], summaries[1], "two runs of one file differ");
    let v: Value = serde_json::from_slice(&summaries[0]).unwrap();
    let fitted = v["produced_by"]["fitted"]
        .as_array()
        .expect("produced_by.fitted");
    let ats: Vec<&str> = fitted.iter().map(|f| f["at"].as_str().unwrap()).collect();
    assert_eq!(ats, POOLS.map(|p| p.0));
    for f in fitted {
        assert!(
            ["lognormal", "gamma", "weibull", "pareto"]
                .contains(&f["tail"]["family"].as_str().unwrap()),
            "{f}"
        );
        assert!(
            f["mean_ms"].as_f64().unwrap() > 0.0 && !f["points"].as_array().unwrap().is_empty(),
            "{f}"
        );
    }
    // The Prometheus sum gives the measured mean; the fitted one is within 5% of it.
    let api = &fitted[0];
    let (m, want) = (
        api["mean_ms"].as_f64().unwrap(),
        api["measured_mean_ms"].as_f64().unwrap(),
    );
    assert!((m / want - 1.0).abs() < 0.05, "{m} vs {want}");
}

#[test]
fn a_scenario_without_fitted_laws_has_no_fitted_field() {
    let dir = tempfile::tempdir().unwrap();
    let o = brink([
        "run",
        "mm1",
        "--set",
        "duration=\"100s\"",
        "--out",
        dir.path().to_str().unwrap(),
    ])
    .run();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(
        dir.path()
            .join("mm1/runs")
            .read_dir()
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
            .join("summary.json"),
    )
    .unwrap();
    assert!(!text.contains("\"fitted\""), "{text}");
}
