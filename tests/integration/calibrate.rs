//! Issue 22, item 2: `brink calibrate` compares a scenario with observed figures and fits
//! up to three keys.
//!
//! - Coverage (law): each figure's 95% Student t interval over seeds contains the
//!   figure's true mean in 95% of independent seed batches. M/M/1 at rho = 0.5
//!   (lambda = 50/s, mean service 10 ms): utilisation's true mean is rho = 0.5, the
//!   throughput's lambda = 50/s (less the work still in the system at the end, about
//!   1/40 of a request per second: 0.05 of a batch's standard error). Over 200 batches of
//!   5 seeds each the test asks 181 to 198 covering intervals for each figure: a true 95%
//!   interval falls outside that with binomial probability 0.3% (P(X <= 180) = 0.27%,
//!   P(X >= 199) = 0.04% for X ~ Bin(200, 0.95)). Deterministic runs: it cannot flake.
//! - Recovery: an observed file written by brink itself (`--write-observed`, with known
//!   service means and seeds of its own), then both means perturbed (x1.3 and x0.75):
//!   `--fit` recovers each within 5%.
//! - Bad input: unknown keys and names, bad numbers, bad fit keys exit 2, nothing written.

use crate::common::{Run, brink};
use brink::experiment::Quiet;
use brink::experiment::calibrate::{Calibration, Options, observed::Observed};
use brink::scenario::{Loader, Override};
use serde_json::Value;
use std::path::Path;

const MM1: &str = r#"
title = "M/M/1 at rho 0.5"
duration = "40s"

[class.request]
rate = 50
steps = [{ query = "server" }]

[pool.server]
workers = 1
service = { law = "exp", mean = "10ms" }
"#;

/// The coverage of the per-figure 95% interval (see the module doc).
#[test]
fn figure_intervals_cover_the_true_mean() {
    let loader = Loader::from_text("mm1.toml", "mm1", MM1.into()).unwrap();
    let obs = "[class.request]\nthroughput = 50\n[pool.server]\nutilisation = 0.5\n";
    let batches = 200;
    let mut covered = [0usize; 2];
    for b in 0..batches {
        let seed = Override::new("seed", toml::Value::Integer(1000 + b), "batch");
        let cal = Calibration::prepare(
            loader.clone(),
            None,
            vec![seed],
            Observed::from_text("obs.toml", obs.into()).unwrap(),
            Options {
                seeds: 5,
                ..Options::default()
            },
        )
        .unwrap();
        let r = cal.run(&Quiet).unwrap();
        for (k, f) in r.assessment.figures.iter().enumerate() {
            covered[k] += f.within_ci95 as usize;
        }
    }
    for (k, name) in ["throughput", "utilisation"].iter().enumerate() {
        assert!(
            (181..=198).contains(&covered[k]),
            "{name}: {} of {batches} intervals cover",
            covered[k]
        );
    }
    eprintln!(
        "coverage of {batches}: throughput {}, utilisation {}",
        covered[0], covered[1]
    );
}

/// Two tiers in sequence, each a pool whose service mean the fit must find.
const SHOP: &str = r#"
title = "Two tiers: an app pool and a database pool"
duration = "30s"
seed = 7

[metrics]
step = "1s"

[class.api]
rate = 200
timeout = "2s"
steps = [{ query = "app" }, { query = "db" }]

[pool.app]
workers = 8
service = { law = "exp", mean = "20ms" }

[pool.db]
workers = 4
service = { law = "lognormal", mean = "12ms", cv = 1.0 }
"#;

/// `brink calibrate FILE FLAG OBS [--out OUT]`.
fn calibrate(file: &Path, flag: &str, obs: &Path, out: Option<&Path>) -> std::process::Command {
    let mut cmd = brink([
        "calibrate".as_ref(),
        file.as_os_str(),
        flag.as_ref(),
        obs.as_os_str(),
    ]);
    if let Some(out) = out {
        cmd.arg("--out").arg(out);
    }
    cmd
}

fn write_shop(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("shop.toml");
    std::fs::write(&path, SHOP).unwrap();
    path
}

/// `--fit` recovers two perturbed service means within 5% from an observation brink made
/// with the true means on seeds of its own.
#[test]
fn fit_recovers_two_perturbed_keys() {
    let dir = tempfile::tempdir().unwrap();
    let shop = write_shop(dir.path());
    let obs = dir.path().join("observed.toml");
    let w = calibrate(&shop, "--write-observed", &obs, None)
        .args(["--seed", "99", "--seeds", "8"])
        .run();
    assert!(w.status.success(), "{}", String::from_utf8_lossy(&w.stderr));
    let text = std::fs::read_to_string(&obs).unwrap();
    assert!(
        text.contains("[pool.db]") && text.contains("p99 = \""),
        "{text}"
    );
    // Writing it again refuses to replace it.
    let again = calibrate(&shop, "--write-observed", &obs, None).run();
    assert!(!again.status.success());
    let out = dir.path().join("out");
    let fit = calibrate(&shop, "--observed", &obs, Some(&out))
        .args([
            "--set",
            "pool.app.service.mean=26ms",
            "--set",
            "pool.db.service.mean=9ms",
        ])
        .args(["--fit", "pool.app.service.mean", "pool.db.service.mean"])
        .args(["--budget", "40", "--refits", "1"])
        .run();
    let stdout = String::from_utf8_lossy(&fit.stdout);
    assert!(
        fit.status.success(),
        "{}",
        String::from_utf8_lossy(&fit.stderr)
    );
    let json = std::fs::read_dir(out.join("shop/runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("calibration.json");
    let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let keys = r["fit"]["keys"].as_array().unwrap();
    for (k, truth) in keys.iter().zip([0.020, 0.012]) {
        let fitted = k["fitted"].as_f64().unwrap();
        let err = (fitted - truth).abs() / truth;
        eprintln!(
            "{}: start {}, fitted {fitted}, true {truth}, error {err:.4}",
            k["key"], k["start"]
        );
        assert!(
            err < 0.05,
            "{}: fitted {fitted}, true {truth}\n{stdout}",
            k["key"]
        );
        let [lo, hi] = [
            k["spread"][0].as_f64().unwrap(),
            k["spread"][1].as_f64().unwrap(),
        ];
        assert!(lo <= fitted && fitted <= hi);
    }
    assert_eq!(r["verdict"], "consistent", "{stdout}");
    assert_eq!(r["fit"]["before"]["verdict"], "inconsistent", "{stdout}");
    assert!(r["mape"].as_f64().unwrap() < r["fit"]["before"]["mape"].as_f64().unwrap());
    assert!(
        stdout.contains("pool.db.utilisation") && stdout.contains("in CI"),
        "{stdout}"
    );
}

/// The same inputs give the same bytes; the table has every figure, `calibration.json`
/// its fields and provenance.
#[test]
fn a_report_is_deterministic_and_complete() {
    let dir = tempfile::tempdir().unwrap();
    let shop = write_shop(dir.path());
    let obs = dir.path().join("obs.toml");
    std::fs::write(
        &obs,
        "window = [\"5s\", \"30s\"]\n[load]\nclass.api.rate = 180\n[class.api]\nthroughput = 180\nerror_ratio = 0.0\np50 = \"28ms\"\np99 = \"120ms\"\n[pool.db]\nutilisation = 0.7\nqueue = 0.4\n",
    )
    .unwrap();
    let run = |out: &Path| {
        let o = calibrate(&shop, "--observed", &obs, Some(out)).run();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            std::fs::read(out.join("shop/calibration.json")).unwrap(),
        )
    };
    let (table, a) = run(&dir.path().join("a"));
    let (_, b) = run(&dir.path().join("b"));
    assert_eq!(a, b);
    let r: Value = serde_json::from_slice(&a).unwrap();
    assert_eq!(r["figures"].as_array().unwrap().len(), 6);
    assert_eq!(r["window_s"], serde_json::json!([5.0, 30.0]));
    assert_eq!(r["load"], serde_json::json!(["class.api.rate=180"]));
    for key in ["mape", "bias", "verdict", "within_ci95", "produced_by"] {
        assert!(r.get(key).is_some(), "{key}");
    }
    // pool.db at 180/s x 12 ms / 4 = 0.54, observed 0.7: simulated under it.
    let db = &r["figures"][4];
    assert_eq!(db["figure"], "pool.db.utilisation");
    assert!(
        (db["simulated"].as_f64().unwrap() - 0.54).abs() < 0.02,
        "{db}"
    );
    assert_eq!(db["within_ci95"], false);
    assert_eq!(r["verdict"], "inconsistent");
    assert!(
        table.contains("pool.db.utilisation") && table.contains("inconsistent"),
        "{table}"
    );
    assert!(
        dir.path()
            .join("a/shop/calibrate.provenance.json")
            .is_file()
    );
}

/// Bad observed files and fit keys: exit 2, a message naming the file, the key and the
/// place, nothing written.
#[test]
fn bad_input_exits_2_with_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let shop = write_shop(dir.path());
    let cases: [(&str, &[&str], &[&str]); 9] = [
        (
            "[pool.db]\nutilisaton = 0.5\n",
            &[],
            &[
                "obs.toml:2:1",
                "pool.db.utilisaton",
                "did you mean `utilisation`",
            ],
        ),
        (
            "[pool.dbb]\nqueue = 1\n",
            &[],
            &["obs.toml:1:7", "pool.dbb", "no pool `dbb`"],
        ),
        (
            "[class.api]\nthroughput = \"fast\"\n",
            &[],
            &["obs.toml:2:1", "class.api.throughput", "expected a number"],
        ),
        (
            "[cache.x]\nhit_ratio = 0.9\n",
            &[],
            &["cache.x", "no cache tier"],
        ),
        (
            "[pool.db]\nutilisation = 1.5\n",
            &[],
            &["pool.db.utilisation", "at most 1"],
        ),
        (
            "[class.api]\np99 = 30\n",
            &[],
            &["class.api.p99", "a duration"],
        ),
        (
            "window = [\"10s\", \"5s\"]\n[pool.db]\nqueue = 1\n",
            &[],
            &["obs.toml:1:1", "window", "empty"],
        ),
        (
            "[load]\nclass.nope.rate = 5\n[pool.db]\nqueue = 1\n",
            &[],
            &["obs.toml:2:1", "class.nope"],
        ),
        (
            "[pool.db]\nqueue = 1\n",
            &["--fit", "pool.db.workers"],
            &["--fit pool.db.workers", "integer key"],
        ),
    ];
    for (text, extra, expect) in cases {
        let obs = dir.path().join("obs.toml");
        std::fs::write(&obs, text).unwrap();
        let out = dir.path().join("out");
        let o = calibrate(&shop, "--observed", &obs, Some(&out))
            .args(extra)
            .current_dir(dir.path())
            .run();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{text}: {err}");
        assert!(err.starts_with("error:"), "{err}");
        for e in expect {
            assert!(err.contains(e), "{text}: {err} lacks {e}");
        }
        assert!(!out.exists(), "{text}: something was written");
    }
}
