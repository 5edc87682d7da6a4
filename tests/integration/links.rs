//! Issue 23 item 4: a symbolic link planted at a name brink writes (output folders are
//! shared on clusters) is never written through. The rule (docs/architecture.md, files):
//! at a file's final name a link is *replaced* (the new file is renamed over the link
//! itself, which rename never follows); at an output folder's own name a link is
//! *refused* (exit 2, naming the folder); `brink new` and `brink import-traces` without
//! `--force` refuse anything at their name, a link included. In every case the link's
//! target, a file outside the output folder, keeps its bytes, and a dangling link's target
//! is never created. Temporary and staged names are random (not plantable in advance);
//! their exclusive creation is unit-tested in `src/report/files.rs`.

use crate::common::{Run, brink};
// A small grid of retry-storm (6 runs), and a plain 20 s scenario.
use crate::provenance::SMALL;
use crate::report::PLAIN;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

const PRECIOUS: &str = "precious bytes outside the output folder\n";

/// A temporary folder with a file outside any output folder, `precious`, and the name of a
/// file that must never come to exist, `nowhere`.
struct Place {
    dir: tempfile::TempDir,
}

impl Place {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("precious"), PRECIOUS).unwrap();
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn precious(&self) -> PathBuf {
        self.path().join("precious")
    }

    fn nowhere(&self) -> PathBuf {
        self.path().join("nowhere")
    }

    /// Plants links at `names` in `folder`, alternately to `precious` and dangling (to
    /// `nowhere`).
    fn plant(&self, folder: &Path, names: &[&str]) {
        std::fs::create_dir_all(folder).unwrap();
        for (i, n) in names.iter().enumerate() {
            let target = if i % 2 == 0 {
                self.precious()
            } else {
                self.nowhere()
            };
            symlink(target, folder.join(n)).unwrap();
        }
    }

    /// Neither link target was written: `precious` as it was, `nowhere` absent.
    fn untouched(&self) {
        assert_eq!(
            std::fs::read_to_string(self.precious()).unwrap(),
            PRECIOUS,
            "written through a link"
        );
        assert!(
            self.nowhere().symlink_metadata().is_err(),
            "a dangling link's target was created"
        );
    }
}

fn ok(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    err
}

fn refused(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.starts_with("error:"), "{err}");
    err
}

/// `names` in `folder` are regular files now (the links were replaced, not followed).
fn replaced(folder: &Path, names: &[&str]) {
    for n in names {
        let meta = folder.join(n).symlink_metadata().unwrap();
        assert!(meta.is_file(), "{n} is not a regular file: {meta:?}");
    }
}

fn tipping(out: &Path, extra: &[&str]) -> Output {
    let mut cmd = brink(["tipping", "retry-storm", "--out"]);
    cmd.arg(out).args(SMALL).args(extra);
    cmd.run()
}

const SWEEP_FILES: [&str; 5] = [
    "tipping.csv",
    "tipping.json",
    "tipping.png",
    "tipping.svg",
    "tipping.provenance.json",
];

/// Shard files (the README's Slurm recipe writes them into one shared folder) and
/// `brink merge`'s outputs: links at their names are replaced, never written through.
#[test]
fn shard_files_and_merged_files_replace_a_planted_link() {
    let place = Place::new();
    let out = place.path().join("out");
    let sc = out.join("retry-storm");
    let shards = ["tipping.shard-0-of-2.json", "tipping.shard-1-of-2.json"];
    place.plant(&sc, &shards);
    for k in 0..2 {
        ok(&tipping(&out, &["--shard", &format!("{k}/2")]));
    }
    place.untouched();
    replaced(&sc, &shards);
    place.plant(&sc, &SWEEP_FILES);
    ok(&brink(["merge".as_ref(), sc.as_os_str()]).run());
    place.untouched();
    replaced(&sc, &SWEEP_FILES);
}

/// A whole sweep's staged set and a run's: links at their final names are replaced.
#[test]
fn a_sweep_and_a_run_replace_links_at_their_final_names() {
    let place = Place::new();
    let out = place.path().join("out");
    let sc = out.join("retry-storm");
    place.plant(&sc, &SWEEP_FILES);
    ok(&tipping(&out, &[]));
    place.untouched();
    replaced(&sc, &SWEEP_FILES);

    let run_files = [
        "summary.json",
        "timeseries.csv",
        "timeline.png",
        "timeline.svg",
        "structure.svg",
        "events.csv",
        "run.provenance.json",
    ];
    place.plant(&sc, &run_files);
    ok(&brink(["run", "retry-storm", "--out"]).arg(&out).run());
    place.untouched();
    replaced(&sc, &run_files);
}

/// An output folder that is a link (to a folder elsewhere, or dangling) is refused by
/// `run`, `tipping` (whole or a shard), `merge` and `all`: exit 2, the folder named,
/// nothing written where the link points.
#[test]
fn an_output_folder_that_is_a_link_is_refused() {
    let place = Place::new();
    let elsewhere = place.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let out = place.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let sc = out.join("retry-storm");
    let check = |o: &Output| {
        let err = refused(o);
        assert!(
            err.contains(&sc.display().to_string()) && err.contains("symbolic link"),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "{err}");
        place.untouched();
    };
    for target in [elsewhere.clone(), place.nowhere()] {
        let _ = std::fs::remove_file(&sc);
        symlink(&target, &sc).unwrap();
        check(&brink(["run", "retry-storm", "--out"]).arg(&out).run());
        check(&tipping(&out, &["--shard", "0/2"]));
    }
    // `merge` reads shards through a link the user names, but writes nothing there.
    let _ = std::fs::remove_file(&sc);
    let real = place.path().join("real");
    ok(&tipping(&real, &["--shard", "0/2"]));
    ok(&tipping(&real, &["--shard", "1/2"]));
    std::fs::remove_dir(&elsewhere).unwrap();
    symlink(real.join("retry-storm"), &elsewhere).unwrap();
    let err = refused(&brink(["merge".as_ref(), elsewhere.as_os_str()]).run());
    assert!(err.contains("symbolic link"), "{err}");
    assert!(!real.join("retry-storm/tipping.csv").exists());

    // `brink all`: a scenario's folder planted as a link.
    let scen = place.path().join("scenarios");
    std::fs::create_dir(&scen).unwrap();
    std::fs::write(scen.join("plain.toml"), PLAIN).unwrap();
    let all_out = place.path().join("all");
    std::fs::create_dir(&all_out).unwrap();
    symlink(place.nowhere(), all_out.join("plain")).unwrap();
    let o = brink(["all", "--dir"])
        .arg(&scen)
        .arg("--out")
        .arg(&all_out)
        .run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    place.untouched();
}

/// `brink all`'s files (a scenario's set and `index.html`): links replaced.
#[test]
fn brink_all_replaces_links_at_its_final_names() {
    let place = Place::new();
    let scen = place.path().join("scenarios");
    std::fs::create_dir(&scen).unwrap();
    std::fs::write(scen.join("plain.toml"), PLAIN).unwrap();
    let out = place.path().join("out");
    place.plant(&out, &["index.html"]);
    let files = ["summary.json", "timeseries.csv", "timeline.png"];
    place.plant(&out.join("plain"), &files);
    ok(&brink(["all", "--dir"])
        .arg(&scen)
        .arg("--out")
        .arg(&out)
        .run());
    place.untouched();
    replaced(&out, &["index.html"]);
    replaced(&out.join("plain"), &files);
}

/// `brink new` never replaces anything: a file, a link to a file, a dangling link.
#[test]
fn brink_new_refuses_anything_at_its_name() {
    let place = Place::new();
    let cwd = place.path().join("work");
    place.plant(&cwd, &["linked.toml", "dangling.toml"]);
    std::fs::write(cwd.join("plain.toml"), "mine").unwrap();
    for name in ["linked", "dangling", "plain"] {
        let err = refused(&brink(["new", name]).current_dir(&cwd).run());
        assert!(err.contains("already exists"), "{err}");
    }
    place.untouched();
    assert_eq!(
        std::fs::read_to_string(cwd.join("plain.toml")).unwrap(),
        "mine"
    );
    for name in ["linked.toml", "dangling.toml"] {
        assert!(cwd.join(name).symlink_metadata().unwrap().is_symlink());
    }
    ok(&brink(["new", "fresh"]).current_dir(&cwd).run());
    assert!(cwd.join("fresh.toml").symlink_metadata().unwrap().is_file());
}

fn jaeger() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/jaeger-sample.json")
}

/// `brink import-traces`: without `--force` a link at `--out` is refused; with it the
/// link is replaced, never written through.
#[test]
fn import_traces_force_replaces_a_link_rather_than_write_through_it() {
    let place = Place::new();
    let dir = place.path().join("d");
    place.plant(&dir, &["linked.toml", "dangling.toml"]);
    for name in ["linked.toml", "dangling.toml"] {
        let out = dir.join(name);
        let import = || {
            let mut c = brink(["import-traces".as_ref(), jaeger().as_os_str()]);
            c.arg("--out").arg(&out);
            c
        };
        let err = refused(&import().run());
        assert!(err.contains("already exists"), "{err}");
        place.untouched();
        ok(&import().arg("--force").run());
        place.untouched();
        replaced(&dir, &[name]);
    }
}

/// Runs `cmd` to its end, or kills it after `limit` and fails.
fn within(cmd: &mut std::process::Command, limit: Duration) -> Output {
    use std::process::Stdio;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `brink import-traces` reads through the bounded reader: a FIFO (nobody writing) and
/// `/dev/zero` end at once with a clear error, exit 2, nothing written.
#[test]
fn import_traces_refuses_a_fifo_and_a_device() {
    let place = Place::new();
    let fifo = place.path().join("fifo.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let out = place.path().join("out.toml");
    for input in [fifo.as_path(), Path::new("/dev/zero")] {
        let o = within(
            brink(["import-traces".as_ref(), input.as_os_str()])
                .arg("--out")
                .arg(&out),
            Duration::from_secs(20),
        );
        let err = refused(&o);
        assert!(
            err.contains(&input.display().to_string()) && err.contains("not a regular file"),
            "{err}"
        );
        assert!(!out.exists());
    }
}
