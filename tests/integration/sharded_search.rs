//! Issue 27, item 5: an adaptive sweep spread over machines. `brink tipping FILE
//! --all-variants --shard K/N` runs the whole searches of the variants dealt to shard K
//! (variant i to shard i mod N), and `brink merge` joins the shards into exactly the bytes
//! the unsharded sweep writes; it refuses a missing, repeated or foreign shard (exit 2,
//! nothing written).

use crate::common::{Run, brink};
use serde_json::Value;
use std::path::Path;
use std::process::Output;
use std::sync::OnceLock;

/// load-shedding: base and three variants (four searches), short, with a `[collapse]` level
/// so that each shard also carries its variants' mean times to collapse.
const SWEEP: [&str; 11] = [
    "tipping",
    "scenarios/load-shedding.toml",
    "--all-variants",
    "--seeds",
    "3",
    "--set",
    "tipping.points=4",
    "--set",
    "collapse.pool=\"server\"",
    "--set",
    "collapse.queue=30",
];

const SHARDS: [&str; 3] = [
    "tipping.shard-0-of-3.json",
    "tipping.shard-1-of-3.json",
    "tipping.shard-2-of-3.json",
];

/// The unsharded sweep's files and printout, and the three shards' files: run once, for
/// every test here.
struct Sweeps {
    whole: Vec<(String, Vec<u8>)>,
    stdout: Vec<u8>,
    shards: Vec<Vec<u8>>,
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// `brink tipping` of [`SWEEP`] into `out` with `extra` arguments.
fn tipping(out: &Path, extra: &[&str]) -> Output {
    brink(SWEEP).args(extra).arg("--out").arg(out).run()
}

fn sweeps() -> &'static Sweeps {
    static S: OnceLock<Sweeps> = OnceLock::new();
    S.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let (whole, parts) = (tmp.path().join("whole"), tmp.path().join("parts"));
        let stdout = ok(tipping(&whole, &[])).stdout;
        for k in 0..3 {
            ok(tipping(&parts, &["--shard", &format!("{k}/3")]));
        }
        let dir = whole.join("load-shedding");
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read(&p).unwrap())
            })
            .collect();
        files.sort();
        let parts = parts.join("load-shedding");
        // A shard writes its shard file only.
        assert_eq!(std::fs::read_dir(&parts).unwrap().count(), 3);
        Sweeps {
            whole: files,
            stdout,
            shards: SHARDS
                .iter()
                .map(|s| std::fs::read(parts.join(s)).unwrap())
                .collect(),
        }
    })
}

/// A fresh output folder holding the shards `ks` (as `names`) of the set.
fn folder_with(tmp: &Path, ks: &[(usize, &str)]) -> std::path::PathBuf {
    let dir = tmp.join("load-shedding");
    std::fs::create_dir_all(&dir).unwrap();
    for (k, name) in ks {
        std::fs::write(dir.join(name), &sweeps().shards[*k]).unwrap();
    }
    dir
}

fn without_command(sidecar: &[u8]) -> Value {
    let mut v: Value = serde_json::from_slice(sidecar).unwrap();
    let command = v.as_object_mut().unwrap().remove("command");
    assert!(command.is_some(), "the sidecar names its command");
    v
}

#[test]
fn merged_searches_are_the_unsharded_sweeps_bytes() {
    let s = sweeps();
    // Variant i goes to shard i mod 3: shard 0 searches base and watermarks.
    let held = |k: usize| -> Vec<u64> {
        let v: Value = serde_json::from_slice(&s.shards[k]).unwrap();
        assert_eq!(
            v["runs"],
            Value::Array(vec![]),
            "shard {k} holds runs by index"
        );
        v["searched"]
            .as_array()
            .unwrap()
            .iter()
            .map(|sv| {
                assert!(sv["collapse_time"]["mean_s"].as_f64().unwrap() > 0.0);
                sv["variant"].as_u64().unwrap()
            })
            .collect()
    };
    assert_eq!([held(0), held(1), held(2)], [vec![0, 3], vec![1], vec![2]]);

    let tmp = tempfile::tempdir().unwrap();
    let dir = folder_with(
        tmp.path(),
        &[(0, SHARDS[0]), (1, SHARDS[1]), (2, SHARDS[2])],
    );
    let o = ok(brink(["merge".as_ref(), dir.as_os_str()]).run());
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&s.stdout),
        "merge prints the unsharded sweep's report"
    );
    let names: Vec<&str> = s.whole.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "tipping.csv",
            "tipping.json",
            "tipping.png",
            "tipping.provenance.json",
            "tipping.svg"
        ]
    );
    for (name, bytes) in &s.whole {
        let merged = std::fs::read(dir.join(name)).unwrap();
        if name.ends_with(".provenance.json") {
            // The sidecar names the command that wrote the files (`tipping …`, `merge …`);
            // the rest of it is the same.
            assert_eq!(without_command(&merged), without_command(bytes), "{name}");
        } else {
            assert!(
                merged == *bytes,
                "{name} differs from the unsharded sweep's"
            );
        }
    }
    // The csv is an adaptive search's: more values than the grid's 4.
    let csv = String::from_utf8_lossy(&s.whole[0].1).into_owned();
    let values: std::collections::BTreeSet<&str> = csv
        .lines()
        .skip(1)
        .filter(|l| l.starts_with("base,"))
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert!(values.len() > 4, "{values:?}");
    // The shard files stay.
    for name in SHARDS {
        assert!(dir.join(name).exists(), "{name}");
    }
}

/// Merges `dir` and expects a refusal naming `why`, with nothing written.
fn refused(dir: &Path, why: &str) {
    let o = brink(["merge".as_ref(), dir.as_os_str()]).run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(why), "expected `{why}` in: {err}");
    for f in ["tipping.csv", "tipping.json", "tipping.svg", "tipping.png"] {
        assert!(!dir.join(f).exists(), "{f} was written");
    }
}

#[test]
fn merge_refuses_a_missing_search_shard() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = folder_with(tmp.path(), &[(0, SHARDS[0]), (2, SHARDS[2])]);
    refused(&dir, "shard 1 of 3 is missing (tipping.shard-1-of-3.json)");
}

#[test]
fn merge_refuses_a_repeated_search_shard() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = folder_with(
        tmp.path(),
        &[
            (0, SHARDS[0]),
            (1, SHARDS[1]),
            (2, SHARDS[2]),
            (1, "tipping.shard-1-of-3.copy.json"),
        ],
    );
    refused(&dir, "shard 1 of 3 is repeated");
}

#[test]
fn merge_refuses_a_foreign_search_shard() {
    // Another seed: shard 1 of the same sweep with `--set seed=99`.
    let tmp = tempfile::tempdir().unwrap();
    let dir = folder_with(tmp.path(), &[(0, SHARDS[0]), (2, SHARDS[2])]);
    ok(tipping(tmp.path(), &["--set", "seed=99", "--shard", "1/3"]));
    refused(&dir, "run with seed");

    // Another N: shard 5 of 6 (beyond the last variant, so it searches nothing but still
    // writes a valid shard file) beside the shards of 3.
    let tmp = tempfile::tempdir().unwrap();
    let dir = folder_with(
        tmp.path(),
        &[(0, SHARDS[0]), (1, SHARDS[1]), (2, SHARDS[2])],
    );
    ok(tipping(tmp.path(), &["--shard", "5/6"]));
    let empty: Value =
        serde_json::from_slice(&std::fs::read(dir.join("tipping.shard-5-of-6.json")).unwrap())
            .unwrap();
    assert_eq!(empty["searched"], Value::Array(vec![]));
    assert!(empty["plan"]["produced_by"]["scenario_sha256"].is_string());
    refused(
        &dir,
        "tipping.shard-5-of-6.json is one of 6 shards, tipping.shard-0-of-3.json one of 3",
    );

    // A grid's shard of the same scenario is not one of these either (its overrides
    // differ too, and say so first).
    let tmp = tempfile::tempdir().unwrap();
    let dir = folder_with(tmp.path(), &[(0, SHARDS[0]), (2, SHARDS[2])]);
    let mut grid: Value = serde_json::from_slice(&sweeps().shards[1]).unwrap();
    grid.as_object_mut().unwrap().remove("searched");
    let digest = brink::scenario::provenance::sha256_hex(b"[]");
    grid["runs_sha256"] = Value::String(digest);
    std::fs::write(
        dir.join(SHARDS[1]),
        serde_json::to_vec_pretty(&grid).unwrap(),
    )
    .unwrap();
    refused(
        &dir,
        "holds a grid's runs and tipping.shard-0-of-3.json adaptive searches",
    );
}

/// Writes `v` as shard file `name` of `dir`, its digest recomputed (as someone who edits
/// a shard on purpose would): only the searches' places can tell.
fn write_shard(dir: &Path, name: &str, mut v: Value) {
    let digest =
        brink::scenario::provenance::sha256_hex(&serde_json::to_vec(&v["searched"]).unwrap());
    v["runs_sha256"] = Value::String(digest);
    std::fs::write(dir.join(name), serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

#[test]
fn merge_refuses_a_search_moved_or_dropped() {
    let shard = |k: usize| -> Value { serde_json::from_slice(&sweeps().shards[k]).unwrap() };
    // Variant 3's search (watermarks, shard 0's) moved into shard 1.
    let tmp = tempfile::tempdir().unwrap();
    let dir = folder_with(tmp.path(), &[(2, SHARDS[2])]);
    let (mut s0, mut s1) = (shard(0), shard(1));
    let moved = s0["searched"].as_array_mut().unwrap().pop().unwrap();
    assert_eq!(moved["variant"], 3);
    s1["searched"].as_array_mut().unwrap().push(moved);
    write_shard(&dir, SHARDS[0], s0.clone());
    write_shard(&dir, SHARDS[1], s1);
    refused(
        &dir,
        "the search of variant 3 does not belong in shard 1 of 3",
    );
    // Dropped from shard 0 altogether.
    write_shard(&dir, SHARDS[1], shard(1));
    refused(
        &dir,
        "the search of variant 3 (watermarks) is missing: tipping.shard-0-of-3.json holds none",
    );
}
