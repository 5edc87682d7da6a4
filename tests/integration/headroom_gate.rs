//! Issue 21, item 5: headroom as a gate. `brink tipping FILE --require-headroom H` and
//! `brink all --require-headroom H` exit 1 when a swept variant's headroom lower bound is
//! below H, naming the variants and their bounds, with every output written; exit 0
//! otherwise; a bad H is refused (exit 2) before anything is written.
//!
//! mm1 (M/M/1 at 0.9/s, capacity 1/s) with 2 seeds and 3 points brackets its tipping
//! point just above capacity: headroom lower bound 1.11 (1/0.9).

use crate::common::{Run, brink};
use serde_json::Value;
use std::path::Path;

/// `brink tipping mm1 --seeds 2 --set tipping.points=3 --out OUT ARGS`.
fn gate(out: &Path, args: &[&str]) -> std::process::Output {
    brink([
        "tipping",
        "mm1",
        "--seeds",
        "2",
        "--set",
        "tipping.points=3",
        "--jobs",
        "2",
    ])
    .arg("--out")
    .arg(out)
    .args(args)
    .run()
}

#[test]
fn a_design_with_the_headroom_passes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = gate(&out, &["--require-headroom", "1.05"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.join("mm1/tipping.json").exists());
}

#[test]
fn a_design_short_of_the_headroom_fails_naming_its_bound_with_every_output_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = gate(&out, &["--require-headroom", "1.5"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let text = std::fs::read_to_string(out.join("mm1/tipping.json")).unwrap();
    let r: Value = serde_json::from_str(&text).unwrap();
    // The bound is the low end of the headroom's 95% confidence interval.
    let low = r["variants"][0]["headroom_ci95"][0].as_f64().unwrap();
    assert!(low < 1.5, "{low}");
    let line = err
        .lines()
        .find(|l| l.contains("mm1/base"))
        .unwrap_or_else(|| panic!("the variant is named: {err}"));
    assert!(
        line.contains(&format!("headroom lower bound {:.2}", low)),
        "its bound, to 3 figures ({low}): {line}"
    );
    assert!(err.contains("--require-headroom"), "{err}");
    for f in ["tipping.csv", "tipping.png", "tipping.svg"] {
        assert!(out.join("mm1").join(f).exists(), "{f} is written");
    }
}

#[test]
fn a_bad_headroom_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    for h in ["0", "-1", "nan", "inf", "lots"] {
        let out = dir.path().join(format!("out-{h}"));
        let o = gate(&out, &[&format!("--require-headroom={h}")]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{h}: {err}");
        assert!(err.contains("--require-headroom"), "{h}: {err}");
        assert!(!out.exists(), "{h}: nothing may be written");
    }
}

/// `brink all` gates every swept variant of every scenario, after writing the page.
#[test]
fn brink_all_gates_every_swept_variant() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("scenarios");
    std::fs::create_dir(&folder).unwrap();
    let mm1 = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/mm1.toml");
    std::fs::copy(mm1, folder.join("mm1.toml")).unwrap();
    let out = dir.path().join("out");
    let o = brink(["all", "--require-headroom", "1.5", "--dir"])
        .arg(&folder)
        .arg("--out")
        .arg(&out)
        .run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("mm1/base: headroom lower bound"), "{err}");
    assert!(out.join("index.html").exists() && out.join("mm1/tipping.json").exists());
}
