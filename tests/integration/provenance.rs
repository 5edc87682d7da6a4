//! Issue 12: every output says what produced it, and `brink merge` joins only shards of
//! one sweep: it refuses shards tampered with in each way that changes results (runs
//! edited, a run moved, other overrides or seed, another scenario file, another brink),
//! with the reason, exit code 2 and nothing written.

use crate::common::{Run, brink};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A small grid: one variant, 3 values, 1 seed, 2 branches = 6 runs, 12-minute runs.
pub(crate) const SMALL: [&str; 12] = [
    "--seeds",
    "1",
    "--set",
    "tipping.points=3",
    "--set",
    "tipping.duration=12m",
    "--set",
    "tipping.settle=5m",
    "--set",
    "tipping.method=\"grid\"",
    "--jobs",
    "2",
];

fn ok(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    err
}

/// Runs shard K of 2 of retry-storm's small sweep into `out`.
fn shard(file: &str, out: &Path, k: u32, extra: &[&str]) {
    let spec = format!("{k}/2");
    let dir = out.to_str().unwrap();
    let mut args = vec!["tipping", file, "--shard", &spec, "--out", dir];
    args.extend_from_slice(&SMALL);
    args.extend_from_slice(extra);
    ok(&brink(&args).run());
}

fn shard_path(out: &Path, k: u32) -> PathBuf {
    out.join(format!("retry-storm/tipping.shard-{k}-of-2.json"))
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn write(p: &Path, v: &Value) {
    std::fs::write(p, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

/// The digest brink writes over a shard's runs (SHA-256 of their compact JSON).
fn digest(runs: &Value) -> String {
    brink::scenario::provenance::sha256_hex(&serde_json::to_vec(runs).unwrap())
}

/// Merges `out`'s scenario folder and expects a refusal whose message contains `why`.
fn refused(out: &Path, why: &str) {
    let o = brink(["merge", out.join("retry-storm").to_str().unwrap()]).run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(why), "expected `{why}` in: {err}");
    assert!(!out.join("retry-storm/tipping.csv").exists());
    assert!(!out.join("retry-storm/tipping.json").exists());
}

/// Copies the two shard files of `from` into a fresh folder under `tmp`.
fn copy(from: &Path, tmp: &Path, name: &str) -> PathBuf {
    let to = tmp.join(name);
    std::fs::create_dir_all(to.join("retry-storm")).unwrap();
    for k in 0..2 {
        std::fs::copy(shard_path(from, k), shard_path(&to, k)).unwrap();
    }
    to
}

#[test]
fn merge_refuses_tampered_and_mismatched_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good");
    shard("retry-storm", &good, 0, &[]);
    shard("retry-storm", &good, 1, &[]);

    // A shard whose numbers were edited after it was written.
    let d = copy(&good, tmp.path(), "edited");
    let mut s = read(&shard_path(&d, 1));
    let m = &mut s["runs"][0]["measure"];
    *m = Value::from(m.as_f64().unwrap_or(0.0) * 0.5 + 0.25);
    write(&shard_path(&d, 1), &s);
    refused(&d, "do not match their digest");

    // A run moved from shard 0 into shard 1, digests recomputed: only its place tells.
    let d = copy(&good, tmp.path(), "moved");
    let (mut a, mut b) = (read(&shard_path(&d, 0)), read(&shard_path(&d, 1)));
    let run = a["runs"].as_array_mut().unwrap().remove(0);
    b["runs"].as_array_mut().unwrap().push(run);
    for (k, s) in [(0, &mut a), (1, &mut b)] {
        s["runs_sha256"] = Value::from(digest(&s["runs"]));
        write(&shard_path(&d, k), s);
    }
    refused(&d, "does not belong in shard 1 of 2");

    // Shards run with different `--set` values.
    let d = tmp.path().join("overrides");
    shard("retry-storm", &d, 0, &[]);
    shard("retry-storm", &d, 1, &["--set", "pool.server.workers=5"]);
    refused(&d, "different overrides");

    // Shards run with different seeds.
    let d = tmp.path().join("seeds");
    shard("retry-storm", &d, 0, &[]);
    shard("retry-storm", &d, 1, &["--set", "seed=99"]);
    refused(&d, "seed 99");

    // Shards of two different scenario files of the same name.
    let d = tmp.path().join("files");
    let edited = tmp.path().join("edited-file");
    std::fs::create_dir_all(&edited).unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/retry-storm.toml"),
    )
    .unwrap();
    let other = edited.join("retry-storm.toml");
    std::fs::write(&other, format!("{text}\n# edited\n")).unwrap();
    shard("retry-storm", &d, 0, &[]);
    shard(other.to_str().unwrap(), &d, 1, &[]);
    refused(&d, "different scenario files");

    // A shard written by another version of brink.
    let d = copy(&good, tmp.path(), "version");
    let mut s = read(&shard_path(&d, 1));
    s["plan"]["produced_by"]["brink"] = Value::from("0.0.1");
    write(&shard_path(&d, 1), &s);
    refused(&d, "written by brink 0.0.1");

    // A shard count near 2^64 (it used to allocate a flag per shard and abort).
    let d = copy(&good, tmp.path(), "huge");
    for k in 0..2 {
        let mut s = read(&shard_path(&d, k));
        s["of"] = Value::from(u64::MAX);
        s["runs"] = Value::Array(vec![]);
        s["runs_sha256"] = Value::from(digest(&s["runs"]));
        write(&shard_path(&d, k), &s);
    }
    refused(&d, "shard 2 of 18446744073709551615 is missing");

    // A plan with no values on its axis (its run indices would divide by zero).
    let d = copy(&good, tmp.path(), "empty-axis");
    for k in 0..2 {
        let mut s = read(&shard_path(&d, k));
        s["plan"]["axes"][0]["values"] = Value::Array(vec![]);
        write(&shard_path(&d, k), &s);
    }
    refused(&d, "one value per axis");

    // Issue 23 item 6: a label with a control character (it would reach tipping.svg and
    // the terminal), digests intact: the scenario refuses it, so must merge.
    let d = copy(&good, tmp.path(), "nul-label");
    for k in 0..2 {
        let mut s = read(&shard_path(&d, k));
        s["plan"]["axes"][0]["label"] = Value::from("rate\u{0}\u{1b}[2J");
        write(&shard_path(&d, k), &s);
    }
    refused(
        &d,
        "`plan.axes[0].label` holds the control character '\\0' (U+0000)",
    );

    // A shard file that is not a regular file (a FIFO blocked the read for ever; a link to
    // /dev/zero read a gigabyte) or is too large: refused by name, before reading it.
    #[cfg(unix)]
    {
        let d = copy(&good, tmp.path(), "fifo");
        let p = shard_path(&d, 1);
        std::fs::remove_file(&p).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .unwrap();
        assert!(made.success());
        refused(&d, "tipping.shard-1-of-2.json: not a regular file");

        let d = copy(&good, tmp.path(), "dev-zero");
        let p = shard_path(&d, 1);
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
        refused(&d, "tipping.shard-1-of-2.json: not a regular file");
    }
    let d = copy(&good, tmp.path(), "too-large");
    let f = std::fs::OpenOptions::new()
        .append(true)
        .open(shard_path(&d, 1))
        .unwrap();
    f.set_len(brink::experiment::shard::MAX_SHARD_BYTES + 1)
        .unwrap();
    refused(
        &d,
        &format!(
            "tipping.shard-1-of-2.json: it holds more than {} bytes",
            brink::experiment::shard::MAX_SHARD_BYTES
        ),
    );

    // The untouched set merges, and its files record what produced them.
    ok(&brink(["merge", good.join("retry-storm").to_str().unwrap()]).run());
    let t = read(&good.join("retry-storm/tipping.json"));
    let p = &t["produced_by"];
    assert_eq!(p["brink"], env!("CARGO_PKG_VERSION"));
    assert_eq!(p["scenario"], "retry-storm");
    assert_eq!(p["scenario_sha256"].as_str().unwrap().len(), 64);
    let overrides: Vec<&str> = p["overrides"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        overrides,
        [
            "tipping.seeds=1",
            "tipping.points=3",
            "tipping.duration=\"12m\"",
            "tipping.settle=\"5m\"",
            "tipping.method=\"grid\""
        ]
    );
}

/// A run's folder says what produced it: `summary.json` carries `produced_by`, the sidecar
/// adds the command line and the files; `events.csv` lists every trigger occurrence and
/// intervention.
#[test]
fn a_run_records_what_produced_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().to_str().unwrap();
    let err = ok(&brink([
        "run",
        "retry-storm",
        "--seed",
        "7",
        "--set",
        "pool.server.workers=9",
        "--out",
        out,
    ])
    .run());
    let summary_at = |dir: &Path| dir.join("summary.json");
    // Wherever the run's folder is, it is the one the command printed.
    let dir = err
        .lines()
        .find_map(|l| l.rsplit_once("-> ").map(|(_, d)| PathBuf::from(d.trim())))
        .expect("the run prints its folder");
    let s = read(&summary_at(&dir));
    let p = &s["produced_by"];
    assert_eq!(p["seed"], 7);
    assert_eq!(p["schema"], 1);
    assert_eq!(p["variant"], Value::Null);
    assert_eq!(p["overrides"][0], "seed=7");
    assert_eq!(p["overrides"][1], "pool.server.workers=9");
    let text = include_str!("../../scenarios/retry-storm.toml");
    assert_eq!(
        p["scenario_sha256"],
        brink::scenario::provenance::sha256_hex(text.as_bytes())
    );
    let side = read(&dir.join("run.provenance.json"));
    assert_eq!(side["seed"], 7);
    let command: Vec<&str> = side["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(&command[1..4], ["run", "retry-storm", "--seed"]);
    for f in side["files"].as_array().unwrap() {
        assert!(
            dir.join(f.as_str().unwrap()).is_file(),
            "{f} listed, absent"
        );
    }
    let events = std::fs::read_to_string(dir.join("events.csv")).unwrap();
    let mut lines = events.lines();
    assert_eq!(lines.next(), Some("kind,name,label,start_s,end_s"));
    let rows: Vec<&str> = lines.collect();
    assert!(!rows.is_empty(), "retry-storm has a trigger: {events}");
    for r in &rows {
        let cells: Vec<&str> = r.split(',').collect();
        assert!(cells[0] == "event" || cells[0] == "intervention", "{r}");
        let start: f64 = cells[cells.len() - 2].parse().unwrap();
        assert!(start >= 0.0, "{r}");
    }
}
