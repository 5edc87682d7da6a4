//! Issue 10: `brink phase` writes a phase map people can read: `phase.json` with every
//! cell, both operating values and the phase boundary; `phase.csv` with columns named after
//! the two parameters; the pictures.
//!
//! The scenario is the tipping law's (one pool of capacity C = 100/s, n = 4 attempts; see
//! `tipping.rs`) with the slowdown's length as the second axis. At 5 requests/s even n x
//! rate stays under C (stable); at 65 the failed state sustains (n x rate > C) but the
//! baseline holds (rate < C); at 125 the baseline fails (rate > C). A 60 s x20 slowdown
//! fills the queue past the timeout at any of these loads, so the 60 s row reads stable,
//! metastable, overloaded: far from both thresholds (25 and 100), so one seed decides it.

use super::tipping::LAW;
use crate::common::{Run, brink};
use serde_json::Value;

#[test]
fn phase_writes_json_with_cells_operating_point_and_named_csv_columns() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("law.toml");
    let text = format!(
        "{LAW}\n[phase]\nvary = \"event.slowdown.for\"\nlabel = \"slowdown length\"\n\
         from = \"1s\"\nto = \"60s\"\npoints = 2\n"
    );
    std::fs::write(&file, text).unwrap();
    let out = dir.path().join("out");
    let o = brink(["phase"])
        .arg(&file)
        .args(["--set", "tipping.points=3", "--seeds", "1", "--jobs", "2"])
        .arg("--out")
        .arg(&out)
        .run();
    assert!(
        o.status.success(),
        "brink phase failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let dir = out.join("law");
    for f in ["phase.csv", "phase.json", "phase.png", "phase.svg"] {
        assert!(dir.join(f).is_file(), "{f} not written");
    }
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("phase.json")).unwrap()).unwrap();
    assert_eq!(m["kind"], "phase");
    assert_eq!(m["vary"], "class.request.rate");
    assert_eq!(m["vary2"], "event.slowdown.for");
    assert_eq!(m["unit2"], "s");
    assert_eq!(m["label2"], "slowdown length");
    assert_eq!(m["values"], serde_json::json!([5.0, 65.0, 125.0]));
    assert_eq!(m["values2"], serde_json::json!([1.0, 60.0]));
    let cells = m["variants"][0]["points"].as_array().unwrap();
    assert_eq!(cells.len(), 6);
    let row: Vec<&str> = cells
        .iter()
        .filter(|c| c["value2"] == 60.0)
        .map(|c| c["state"].as_str().unwrap())
        .collect();
    assert_eq!(row, ["stable", "metastable", "overloaded"], "{cells:?}");
    for c in cells {
        let p = c["collapse_probability"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&p), "{c}");
    }
    // The operating point is the scenario's own rate (50) and slowdown (10 s), on both
    // axes; its cell is the nearest sampled one (65, 1 s).
    let map = &m["maps"][0];
    assert_eq!(map["variant"], "base");
    assert_eq!(map["operating_point"], serde_json::json!([50.0, 10.0]));
    assert_eq!(map["operating_cell"]["value"], 65.0);
    assert_eq!(map["operating_cell"]["value2"], 1.0);
    assert_eq!(map["boundary"].as_array().unwrap().len(), 2);
    assert_eq!(map["boundary"][1]["tipping_point"], 65.0);
    let csv = std::fs::read_to_string(dir.join("phase.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "variant,value,value2,branch,seed,measure,state,class.request.rate,event.slowdown.for"
        )
    );
    // 3 x 2 cells, 1 seed, 2 branches; the named columns repeat value and value2.
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 12);
    for r in rows {
        assert_eq!((r[7], r[8]), (r[1], r[2]), "{r:?}");
    }
}

/// `phase.seeds` sets the seeds per cell and branch of the map, apart from the tipping
/// search's `tipping.seeds`; `brink phase --seeds N` overrides it; out of range it is
/// refused, naming the key, with nothing written.
#[test]
fn phase_seeds_are_the_maps_own() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("law.toml");
    let text = format!(
        "{LAW}\n[phase]\nvary = \"event.slowdown.for\"\nfrom = \"1s\"\nto = \"60s\"\n\
         points = 2\nseeds = 2\n"
    );
    std::fs::write(&file, text).unwrap();
    let rows = |extra: &[&str]| {
        let out = dir.path().join(format!("out{}", extra.len()));
        let o = brink(["phase"])
            .arg(&file)
            .args(["--set", "tipping.points=2", "--jobs", "2"])
            .args(extra)
            .arg("--out")
            .arg(&out)
            .run();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let csv = std::fs::read_to_string(out.join("law/phase.csv")).unwrap();
        csv.lines().count() - 1
    };
    // 2 x 2 cells x 2 branches, 2 seeds; then 3 seeds from the command line.
    assert_eq!(rows(&[]), 16);
    assert_eq!(rows(&["--seeds", "3"]), 24);
    let out = dir.path().join("bad");
    let o = brink(["phase"])
        .arg(&file)
        .args(["--set", "phase.seeds=0"])
        .arg("--out")
        .arg(&out)
        .run();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("phase.seeds"), "{err}");
    assert!(!out.exists(), "wrote {out:?}");
}
