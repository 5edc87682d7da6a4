//! Traces to a scenario (issue 22 item 3): `brink run --trace-sample` writes OTLP/JSON
//! spans, `brink import-traces` writes a skeleton from them (or from a Jaeger export), and
//! the skeleton's own traced run reproduces the per-service self times and calls per
//! parent; malformed trace files (`tests/bad/traces/`) are refused with exit 2 and nothing
//! written.

use crate::common::{Run, brink};
use brink::traces::measure::{Measured, measure};
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn ok(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "exit {:?}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn measured(traces: &Path) -> Measured {
    let (_, spans) = brink::traces::read_file(traces).unwrap();
    measure(&traces.display().to_string(), &spans).unwrap()
}

/// Mean self time (ns) of each service, by name.
fn self_means(m: &Measured) -> Vec<(String, f64)> {
    m.services
        .iter()
        .map(|s| {
            let mean = s.self_ns.iter().map(|&x| x as f64).sum::<f64>() / s.self_ns.len() as f64;
            (s.name.clone(), mean)
        })
        .collect()
}

/// Calls per visit of the caller, by (caller, callee).
fn calls_per_parent(m: &Measured) -> Vec<((String, String), f64)> {
    let mut out: Vec<((String, String), f64)> = Vec::new();
    for s in &m.services {
        for c in &s.calls {
            let key = (s.name.clone(), m.services[c.target].name.clone());
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => *v += c.share,
                None => out.push((key, c.share)),
            }
        }
    }
    out
}

/// A traced run of the bundled-style shop, imported, checked, run again (traced) from the
/// skeleton: each service's mean self time and each caller's calls per visit are within
/// 5% of the first run's traces.
#[test]
fn a_traced_run_imported_and_run_again_reproduces_self_times_and_calls() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first");
    ok(
        &brink(["run".as_ref(), data("traced-shop.toml").as_os_str()])
            .args(["--trace-sample", "1", "--out"])
            .arg(&first)
            .run(),
    );
    let traces = first.join("traced-shop/traces.json");
    let skeleton = dir.path().join("shop.toml");
    ok(&brink(["import-traces".as_ref(), traces.as_os_str()])
        .arg("--out")
        .arg(&skeleton)
        .run());
    ok(&brink(["check".as_ref(), skeleton.as_os_str()]).run());
    let again = dir.path().join("again");
    ok(&brink(["run".as_ref(), skeleton.as_os_str()])
        .args(["--trace-sample", "1", "--out"])
        .arg(&again)
        .run());
    let (a, b) = (measured(&traces), measured(&again.join("shop/traces.json")));
    let (sa, sb) = (self_means(&a), self_means(&b));
    assert_eq!(sa.len(), 4, "{sa:?}");
    for ((name, x), (name_b, y)) in sa.iter().zip(&sb) {
        assert_eq!(name, name_b);
        assert!(
            (y / x - 1.0).abs() < 0.05,
            "{name}: self time {x} ns, again {y} ns"
        );
    }
    let (ca, cb) = (calls_per_parent(&a), calls_per_parent(&b));
    assert_eq!(ca.len(), 3, "{ca:?}");
    assert_eq!(
        ca.iter().map(|c| &c.0).collect::<Vec<_>>(),
        cb.iter().map(|c| &c.0).collect::<Vec<_>>()
    );
    for ((edge, x), (_, y)) in ca.iter().zip(&cb) {
        assert!(
            (y / x - 1.0).abs() < 0.05,
            "{edge:?}: {x} calls per visit, again {y}"
        );
    }
    // The call made by half of the frontend's jobs is measured as such.
    let reviews = &ca.iter().find(|c| c.0.1 == "reviews").unwrap().1;
    assert!((reviews - 0.5).abs() < 0.02, "{reviews}");
}

/// `--trace-sample` adds traces.json and changes no other file; the same seed gives the
/// same spans; only sampled requests are traced (1 in N by count).
#[test]
fn tracing_changes_no_other_output_and_is_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, sample: Option<&str>| {
        let out = dir.path().join(name);
        let mut cmd = brink(["run".as_ref(), data("traced-shop.toml").as_os_str()]);
        cmd.args(["--set", "duration=\"60s\"", "--name", "x", "--out"])
            .arg(&out);
        if let Some(n) = sample {
            cmd.args(["--trace-sample", n]);
        }
        ok(&cmd.run());
        out.join("traced-shop/runs/x")
    };
    let (plain, traced, again) = (
        run("plain", None),
        run("traced", Some("10")),
        run("again", Some("10")),
    );
    for f in ["summary.json", "timeseries.csv", "events.csv"] {
        assert_eq!(
            std::fs::read(plain.join(f)).unwrap(),
            std::fs::read(traced.join(f)).unwrap(),
            "{f}"
        );
    }
    assert!(!plain.join("traces.json").exists());
    let bytes = std::fs::read(traced.join("traces.json")).unwrap();
    assert_eq!(bytes, std::fs::read(again.join("traces.json")).unwrap());
    let m = measured(&traced.join("traces.json"));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(traced.join("summary.json")).unwrap()).unwrap();
    let offered = summary["classes"]["browse"]["offered"].as_u64().unwrap();
    // Every 10th request, less those still in flight at the end.
    let expected = offered.div_ceil(10);
    assert!(
        m.traces as u64 <= expected && m.traces as u64 + 3 >= expected,
        "{} traces of {offered} requests",
        m.traces
    );
}

/// A hand-written Jaeger export: services named with dots become valid pool names, a
/// service's own child span is folded into its visit, the self time subtracts the union
/// of overlapping calls, parallel calls and shares are measured; `brink check` accepts it.
#[test]
fn a_jaeger_export_becomes_a_scenario_that_checks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cart.toml");
    ok(&brink([
        "import-traces".as_ref(),
        data("jaeger-sample.json").as_os_str(),
    ])
    .arg("--out")
    .arg(&out)
    .run());
    let text = std::fs::read_to_string(&out).unwrap();
    for expected in [
        "[pool.web_gateway]",
        "service = { law = \"empirical\", samples = [\"7.5ms\", \"5ms\", \"3ms\"] }",
        "[class.GET__cart]",
        "parallel = true",
        "probability = 0.666667",
        "workers = ",
        "# decide:",
    ] {
        assert!(text.contains(expected), "{expected:?} not in\n{text}");
    }
    ok(&brink(["check".as_ref(), out.as_os_str()]).run());
    // An existing file is not replaced without --force.
    let again = brink([
        "import-traces".as_ref(),
        data("jaeger-sample.json").as_os_str(),
    ])
    .arg("--out")
    .arg(&out)
    .run();
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    ok(&brink([
        "import-traces".as_ref(),
        data("jaeger-sample.json").as_os_str(),
    ])
    .arg("--out")
    .arg(&out)
    .arg("--force")
    .run());
}

/// Every malformed sample of `tests/bad/traces/` is refused: exit 2, a message naming the
/// file, the JSON path and what is wrong (`NAME.expect`), nothing written.
#[test]
fn malformed_trace_files_are_refused_naming_file_and_path() {
    let bad = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad/traces");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&bad)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 12);
    let dir = tempfile::tempdir().unwrap();
    for f in files {
        let expect = std::fs::read_to_string(f.with_extension("expect")).unwrap();
        let (path, text) = expect.trim().split_once(" -- ").unwrap();
        let out = dir.path().join("x.toml");
        let r = brink(["import-traces".as_ref(), f.as_os_str()])
            .arg("--out")
            .arg(&out)
            .run();
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{}: {stderr}", f.display());
        let name = f.display().to_string();
        assert!(
            stderr.contains(&format!("error: {name}: {path}: ")),
            "{name}: expected path {path}: {stderr}"
        );
        assert!(stderr.contains(text), "{name}: expected {text:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!out.exists(), "{name}: wrote {}", out.display());
    }
}

/// A file beyond 256 MiB is refused before it is read (a sparse file: no disk used).
#[test]
fn a_trace_file_beyond_256_mib_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(brink::traces::MAX_BYTES + 1)
        .unwrap();
    let out = dir.path().join("x.toml");
    let r = brink(["import-traces".as_ref(), big.as_os_str()])
        .arg("--out")
        .arg(&out)
        .run();
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("at most 268435456 bytes (256 MiB)"));
    assert!(!out.exists());
}
