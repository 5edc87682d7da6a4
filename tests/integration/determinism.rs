//! Same scenario, seed and overrides: the same bytes out; a different seed: different draws.

use crate::common::*;

fn run_cli(out: &std::path::Path, extra: &[&str]) {
    let status = brink(["run", "scenarios/retry-storm.toml", "--out"])
        .arg(out)
        .args(extra)
        // A run with overrides writes into a folder of its own, named here.
        .args(["--name", "run"])
        .status()
        .unwrap();
    assert!(status.success());
}

fn read(dir: &std::path::Path, file: &str) -> Vec<u8> {
    std::fs::read(dir.join("retry-storm/runs/run").join(file)).unwrap()
}

#[test]
fn same_seed_and_overrides_give_identical_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        tmp.path().join("a"),
        tmp.path().join("b"),
        tmp.path().join("c"),
    );
    let sets = [
        "--seed",
        "7",
        "--set",
        "class.request.rate=72",
        "--set",
        "duration=10m",
    ];
    run_cli(&a, &sets);
    run_cli(&b, &sets);
    run_cli(
        &c,
        &[
            "--seed",
            "8",
            "--set",
            "class.request.rate=72",
            "--set",
            "duration=10m",
        ],
    );
    for f in ["summary.json", "timeseries.csv"] {
        assert_eq!(
            read(&a, f),
            read(&b, f),
            "{f} differs between identical runs"
        );
        assert_ne!(read(&a, f), read(&c, f), "{f} does not depend on the seed");
    }
    assert_eq!(
        read(&a, "structure.svg"),
        read(&b, "structure.svg"),
        "structure.svg differs between identical runs"
    );
    for f in ["timeline.png", "timeline.svg", "structure.svg"] {
        assert!(!read(&a, f).is_empty());
    }
    // No temporary files are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(a.join("retry-storm/runs/run"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn accounting_holds_in_every_bundled_scenario() {
    // The run itself refuses to finish if a request is unaccounted for; check the identity
    // from the outside as well, on every bundled scenario and variant.
    for name in ["mm1", "mmc", "retry-storm"] {
        let base = bundled(name, None, &["duration=2000s"]);
        let mut variants = vec![None];
        variants.extend(base.variants.iter().map(|(v, _)| Some(v.clone())));
        for v in variants {
            let sc = bundled(name, v.as_deref(), &["duration=2000s"]);
            let r = run(&sc, 0);
            for (cname, c) in &r.summary.classes {
                assert_eq!(c.offered, c.admitted + c.rejected, "{name} {v:?} {cname}");
                assert_eq!(
                    c.admitted,
                    c.succeeded + c.failed + c.in_flight,
                    "{name} {v:?} {cname}"
                );
            }
        }
    }
}
