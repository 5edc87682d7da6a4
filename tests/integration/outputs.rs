//! Where outputs go and how they appear (issue 12): a run's files appear together or not at
//! all, a signal or a full disk leaves no temporary files and no partial set, and a run
//! with overrides writes into a folder of its own, never over the base run.

use crate::common::{Run, brink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Every path under `dir`, recursively.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p.clone());
            }
            all.push(p);
        }
    }
    all
}

fn temporaries(dir: &Path) -> Vec<PathBuf> {
    walk(dir)
        .into_iter()
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".tmp-")
        })
        .collect()
}

fn files(dir: &Path) -> Vec<PathBuf> {
    walk(dir).into_iter().filter(|p| p.is_file()).collect()
}

/// SIGINT and SIGTERM while a run writes its files (a long time series, so the writing
/// lasts): the process ends with 128 + the signal, and neither temporary files nor a
/// partial set of outputs remain.
#[test]
fn a_signal_while_writing_leaves_no_temporaries_and_no_partial_set() {
    for (sig, code) in [("INT", 130), ("TERM", 143)] {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let mut child = brink([
            "run",
            "mm1",
            "--set",
            // 950,000 rows, under the 1,000,000-row limit.
            "duration=1900s",
            "--set",
            "metrics.step=2ms",
        ])
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        // Wait for the stage to appear (the run is over and the files are being written).
        let mut seen = false;
        while child.try_wait().unwrap().is_none() {
            if !temporaries(&out).is_empty() {
                seen = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        if !seen {
            let o = child.wait_with_output().unwrap();
            panic!(
                "SIG{sig}: the run ended ({:?}) before its files were being written: {}",
                o.status.code(),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let kill = Command::new("kill")
            .args([&format!("-{sig}"), &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let o = child.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(code),
            "SIG{sig}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(temporaries(&out), Vec::<PathBuf>::new(), "SIG{sig}");
        assert_eq!(
            files(&out),
            Vec::<PathBuf>::new(),
            "SIG{sig}: a partial set"
        );
    }
}

/// A full disk: one clear error naming the file and the cause once, exit 1, no partial set
/// and no temporary files, and the previous run's files as they were. Needs to mount a
/// 64 KiB tmpfs (root); skipped with a note where that fails.
#[test]
fn a_full_disk_gives_one_clear_error_and_no_partial_set() {
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&mnt)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("note: skipped: cannot mount a tmpfs here (needs root)");
        return;
    }
    let old = mnt.join("retry-storm");
    std::fs::create_dir(&old).unwrap();
    std::fs::write(old.join("summary.json"), "previous run").unwrap();
    let o = brink(["run", "retry-storm", "--out", mnt.to_str().unwrap()]).run();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    let after = (files(&mnt), temporaries(&mnt));
    let previous = std::fs::read_to_string(old.join("summary.json"));
    let _ = Command::new("umount").arg(&mnt).status();
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr
            .to_lowercase()
            .matches("no space left on device")
            .count(),
        1,
        "{stderr}"
    );
    assert!(stderr.starts_with("error: cannot write "), "{stderr}");
    assert!(stderr.contains(&old.display().to_string()), "{stderr}");
    assert_eq!(after, (vec![old.join("summary.json")], vec![]), "{stderr}");
    assert_eq!(previous.unwrap(), "previous run");
}

/// `--seed` (other than the scenario's own) and `--set` write into
/// `<scenario>/runs/<name>/`, named from them or by `--name`; the scenario's own seed is
/// the base run. The base run's files are never replaced by such a run.
#[test]
fn a_run_with_overrides_writes_into_its_own_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = |args: &[&str]| {
        let mut all = vec!["run", "mm1", "--set", "duration=2000s", "--out"];
        all.push(out.to_str().unwrap());
        all.extend_from_slice(args);
        let o = brink(&all).run();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let base = out.join("mm1");
    let named = base.join("runs/duration-2000s");
    let printed = o(&[]);
    assert!(printed.contains(&named.display().to_string()), "{printed}");
    let seeded = base.join("runs/seed-7_duration-2000s");
    o(&["--seed", "7"]);
    o(&["--seed", "8", "--name", "mine"]);
    for d in [&named, &seeded, &base.join("runs/mine")] {
        for f in [
            "summary.json",
            "timeseries.csv",
            "timeline.png",
            "timeline.svg",
            "structure.svg",
        ] {
            assert!(d.join(f).is_file(), "{}", d.join(f).display());
        }
    }
    assert!(!base.join("summary.json").exists(), "over the base run");
    assert_ne!(
        std::fs::read(named.join("timeseries.csv")).unwrap(),
        std::fs::read(seeded.join("timeseries.csv")).unwrap()
    );
    // The scenario's own seed (mm1.toml has `seed = 1`) is no override: the base run.
    let own = brink(["run", "mm1", "--out", out.to_str().unwrap(), "--seed", "1"]).run();
    assert!(own.status.success());
    assert!(base.join("summary.json").is_file());
    // A name that is not a safe path segment is refused before anything runs.
    let bad = brink([
        "run",
        "mm1",
        "--out",
        out.to_str().unwrap(),
        "--name",
        "../x",
    ])
    .run();
    assert_eq!(bad.status.code(), Some(2));
    assert!(!tmp.path().join("x").exists());
}

/// `brink run` does not validate the sweep windows it does not use: a `--set` that moves
/// the trigger near the end of the run runs, and the sweep with the same `--set` is
/// refused, naming it.
#[test]
fn run_ignores_sweep_windows_that_the_sweep_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let set = "event.slowdown.at=19m";
    let args = |cmd| {
        brink([
            cmd,
            "retry-storm",
            "--set",
            set,
            "--out",
            out.to_str().unwrap(),
        ])
        .run()
    };
    let run = args("run");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let tipping = args("tipping");
    let stderr = String::from_utf8_lossy(&tipping.stderr);
    assert_eq!(tipping.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("--set {set}: `tipping.settle`")),
        "{stderr}"
    );
}
