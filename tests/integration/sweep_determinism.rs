//! Issue 5: a sweep's files do not depend on `--jobs`, and shards merged with
//! `brink merge` give exactly the files of one unsharded run.

use crate::common::{Run, brink};
use std::path::Path;

const FILES: [&str; 4] = ["tipping.csv", "tipping.json", "tipping.png", "tipping.svg"];
const PHASE_FILES: [&str; 3] = ["phase.csv", "phase.png", "phase.svg"];

/// A short retry-storm sweep with two variants: enough to exercise ordering.
const SMALL: [&str; 12] = [
    "--variant",
    "base",
    "--variant",
    "lifo",
    "--seeds",
    "2",
    "--set",
    "tipping.points=5",
    "--set",
    "tipping.duration=12m",
    "--set",
    "tipping.settle=5m",
];

fn brink_into(args: &[&str], out: &Path) {
    let o = brink(args).arg("--out").arg(out).run();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn sweep(cmd: &str, out: &Path, extra: &[&str]) {
    let mut args = vec![cmd, "scenarios/retry-storm.toml"];
    args.extend_from_slice(&SMALL);
    if cmd == "phase" {
        args.extend_from_slice(&["--set", "phase.points=3"]);
    }
    args.extend_from_slice(extra);
    brink_into(&args, out);
}

fn same_files(a: &Path, b: &Path, files: &[&str]) {
    for f in files {
        let (x, y) = (
            std::fs::read(a.join("retry-storm").join(f)).unwrap(),
            std::fs::read(b.join("retry-storm").join(f)).unwrap(),
        );
        assert!(!x.is_empty(), "{f} is empty");
        assert!(
            x == y,
            "{f} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

#[test]
fn jobs_do_not_change_the_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
    sweep("tipping", &one, &["--jobs", "1"]);
    sweep("tipping", &two, &["--jobs", "2"]);
    same_files(&one, &two, &FILES);
    let csv = std::fs::read_to_string(one.join("retry-storm/tipping.csv")).unwrap();
    assert!(csv.starts_with("variant,value,branch,seed,measure,state\n"));
    // The adaptive search adds probes between the 5 values.
    assert!(csv.lines().count() > 1 + 20, "{csv}");
    // A grid: 2 variants x 5 values x 2 seeds x 2 branches.
    let (g1, g2) = (tmp.path().join("g1"), tmp.path().join("g2"));
    let grid = ["--set", "tipping.method=\"grid\""];
    sweep("tipping", &g1, &[&["--jobs", "1"][..], &grid].concat());
    sweep("tipping", &g2, &[&["--jobs", "2"][..], &grid].concat());
    same_files(&g1, &g2, &FILES);
    let csv = std::fs::read_to_string(g1.join("retry-storm/tipping.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 40);
}

/// A grid's shards (every N-th run from K) merged: the files equal those of the unsharded
/// grid run with the same overrides (the files record them). An adaptive sweep's shards
/// (whole variants) are `sharded_search.rs`'s.
#[test]
fn merged_shards_equal_the_unsharded_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (whole, parts) = (tmp.path().join("whole"), tmp.path().join("parts"));
    let grid = ["--set", "tipping.method=\"grid\""];
    for cmd in ["tipping", "phase"] {
        sweep(cmd, &whole, &grid);
        sweep(cmd, &parts, &[&["--shard", "1/2"][..], &grid].concat());
        sweep(cmd, &parts, &[&["--shard", "0/2"][..], &grid].concat());
    }
    // Shards write only their shard files.
    assert!(!parts.join("retry-storm/tipping.csv").exists());
    assert!(parts.join("retry-storm/tipping.shard-0-of-2.json").exists());
    let o = brink(["merge"]).arg(parts.join("retry-storm")).run();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    same_files(&whole, &parts, &FILES);
    same_files(&whole, &parts, &PHASE_FILES);
}

#[test]
fn merge_refuses_an_incomplete_set_of_shards() {
    let tmp = tempfile::tempdir().unwrap();
    sweep("tipping", tmp.path(), &["--shard", "0/3"]);
    let o = brink(["merge"]).arg(tmp.path()).run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("shard 1 of 3 is missing"), "{err}");
    assert!(!tmp.path().join("retry-storm/tipping.csv").exists());
}
