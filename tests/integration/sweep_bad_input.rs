//! Issue 5: a sweep with bad settings is refused like any bad scenario: exit code 2, the
//! key path and its place in the message, no panic, nothing written.

use crate::common::{Run, brink};
use std::path::Path;

const GOOD: &str = r#"duration = "60s"

[class.request]
rate = 5
timeout = "1s"
steps = [{ query = "server" }]

[pool.server]
workers = 2
service = { law = "exp", mean = "100ms" }

[event.slowdown]
kind = "slowdown"
pool = "server"
at = "10s"
for = "5s"
factor = 3

[tipping]
vary = "class.request.rate"
from = 1
to = 30
points = 4
trigger = ["slowdown"]
settle = "10s"
measure = "goodput_ratio.request"
healthy_above = 0.9

[phase]
vary = "event.slowdown.for"
from = "1s"
to = "10s"
points = 3
"#;

/// Runs `brink CMD good.toml ARGS --out OUT` on `text` and returns (exit code, stderr),
/// checking that nothing was written.
fn sweep_of(cmd: &str, text: &str, args: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("good.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.path().join("out");
    let o = brink([cmd])
        .arg(&file)
        .args(args)
        .arg("--out")
        .arg(&out)
        .current_dir(dir.path())
        .run();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    if o.status.code() != Some(0) {
        assert!(!out.exists(), "output written despite the error: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    (o.status.code(), err)
}

fn refused(cmd: &str, text: &str, args: &[&str], path: &str, also: &str) {
    let (code, err) = sweep_of(cmd, text, args);
    assert_eq!(code, Some(2), "{args:?}: {err}");
    assert!(err.starts_with("error:"), "{err}");
    assert!(
        err.contains(&format!("`{path}`: ")),
        "{args:?} should name `{path}`: {err}"
    );
    assert!(err.contains(also), "{args:?} should say `{also}`: {err}");
}

#[test]
fn the_good_sweep_runs() {
    // The harness itself: without a mistake the same file sweeps fine (exit 0).
    let (code, err) = sweep_of("tipping", GOOD, &["--jobs", "1"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, err) = sweep_of("phase", GOOD, &["--jobs", "1"]);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn an_integer_key_is_swept_in_whole_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("good.toml");
    std::fs::write(&file, GOOD).unwrap();
    let o = brink(["tipping"])
        .arg(&file)
        .args(["--set", "tipping.vary=pool.server.workers"])
        .args([
            "--set",
            "tipping.from=1",
            "--set",
            "tipping.to=4",
            "--set",
            "tipping.points=7",
        ])
        .arg("--out")
        .arg(dir.path())
        .run();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(dir.path().join("good/tipping.csv")).unwrap();
    let mut values: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    values.dedup();
    assert_eq!(values, ["1", "2", "3", "4"]);
}

#[test]
fn bad_sweep_settings_exit_2_naming_the_key() {
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["--set", "tipping.vary=class.nope.rate"],
            "tipping.vary",
            "no value at `class.nope.rate`",
        ),
        (
            &["--set", "tipping.vary=class.request.steps"],
            "tipping.vary",
            "not a number or a duration",
        ),
        (
            &["--set", "tipping.vary=class..rate"],
            "tipping.vary",
            "not a dotted key path",
        ),
        (
            &["--set", "tipping.from=30"],
            "tipping.to",
            "the range is empty",
        ),
        (
            &["--set", "tipping.to=0.5"],
            "tipping.to",
            "the range is empty",
        ),
        (
            &["--set", "tipping.points=0"],
            "tipping.points",
            "must be from 1 to 10000",
        ),
        (
            &["--set", "tipping.points=5000", "--seeds", "3"],
            "tipping.points",
            "more than 10000",
        ),
        (&["--set", "tipping.from=1s"], "tipping.from", "is a number"),
        (
            &["--set", "tipping.trigger=[\"slowdwn\"]"],
            "tipping.trigger.0",
            "did you mean `slowdown`?",
        ),
        (
            &["--set", "tipping.trigger=[]"],
            "tipping.trigger",
            "at least one",
        ),
        (
            &["--set", "tipping.measure=goodput_ratio.nope"],
            "tipping.measure",
            "no class named `nope`",
        ),
        (
            &["--set", "tipping.measure=server.utilisation"],
            "tipping.measure",
            "did you mean `server.utilization`?",
        ),
        (
            &["--set", "tipping.settle=1h"],
            "tipping.settle",
            "measuring window",
        ),
        (
            &["--set", "tipping.healthy_above=nan"],
            "tipping.healthy_above",
            "finite",
        ),
        (
            &["--set", "tipping.healthy_below=2"],
            "tipping.healthy_below",
            "not both",
        ),
        (
            &["--set", "tipping.vari=3"],
            "tipping.vari",
            "did you mean `vary`?",
        ),
        (
            &["--set", "tipping.from=-5"],
            "class.request.rate",
            "[tipping] sweep value",
        ),
        (&["--variant", "nope"], "variant.nope", "no such variant"),
        (
            &["--set", "tipping.method=\"adaptiv\""],
            "tipping.method",
            "did you mean `adaptive`?",
        ),
        (
            &["--set", "tipping.tolerance=0"],
            "tipping.tolerance",
            "must be above 0",
        ),
        (
            &["--set", "tipping.tolerance=1000"],
            "tipping.tolerance",
            "at most the range",
        ),
        (
            &["--set", "tipping.tolerance=\"1s\""],
            "tipping.tolerance",
            "is a number",
        ),
    ];
    for (args, path, also) in cases {
        refused("tipping", GOOD, args, path, also);
    }
    // The place is the override that caused it.
    refused(
        "tipping",
        GOOD,
        &["--set", "tipping.points=0"],
        "tipping.points",
        "--set tipping.points=0",
    );
}

/// Issue 21, item 3: every refusal of an SLO measure's settings names its key, exits 2
/// and writes nothing; the good SLO sweep runs.
#[test]
fn bad_slo_settings_exit_2_naming_the_key() {
    // 1 s rows; the measuring window is 25 s to 60 s, room for three 10 s SLO windows.
    let slo = GOOD
        .replace(
            "duration = \"60s\"",
            "duration = \"60s\"\n\n[metrics]\nstep = \"1s\"",
        )
        .replace(
            "measure = \"goodput_ratio.request\"\nhealthy_above = 0.9",
            "measure = \"slo.request\"\nslo = { p99 = \"500ms\", errors = 0.01, window = \"10s\" }",
        )
        .replace("[phase]", "[phase.off]");
    let slo = &slo[..slo.find("[phase.off]").unwrap()];
    let (code, err) = sweep_of("tipping", slo, &["--jobs", "1"]);
    assert_eq!(code, Some(0), "{err}");
    let set = |v: &'static str| -> [&'static str; 2] { ["--set", v] };
    let cases: &[([&str; 2], &str, &str)] = &[
        (
            set("tipping.slo.window=2500ms"),
            "tipping.slo.window",
            "`metrics.step` is 1 s",
        ),
        (
            set("tipping.slo.window=1m"),
            "tipping.slo.window",
            "holds no whole SLO window",
        ),
        (
            set("tipping.slo.window=0s"),
            "tipping.slo.window",
            "longer than zero",
        ),
        (
            set("tipping.slo.p50=\"1s\""),
            "tipping.slo.p99",
            "one latency quantile; `p50`",
        ),
        (
            set("tipping.slo={ errors = 0.01 }"),
            "tipping.slo",
            "p50, p90, p99 or p999",
        ),
        (
            set("tipping.slo={ p99 = \"1s\" }"),
            "tipping.slo.errors",
            "missing",
        ),
        (
            set("tipping.slo.errors=1.5"),
            "tipping.slo.errors",
            "a share from 0 to 1",
        ),
        (
            set("tipping.slo.p99=\"0s\""),
            "tipping.slo.p99",
            "longer than zero",
        ),
        (set("tipping.slo.p95=\"1s\""), "tipping.slo.p95", "unknown"),
        (
            set("tipping.healthy_above=1"),
            "tipping.healthy_above",
            "below 1",
        ),
        (
            set("tipping.healthy_below=0.5"),
            "tipping.healthy_below",
            "use `healthy_above`",
        ),
        (
            set("tipping.measure=slo.nope"),
            "tipping.measure",
            "no class named `nope`",
        ),
        (
            set("tipping.measure=goodput_ratio.request"),
            "tipping.slo",
            "only by an SLO measure",
        ),
    ];
    for (args, path, also) in cases {
        refused("tipping", slo, args, path, also);
    }
    // An SLO measure without its objective.
    refused(
        "tipping",
        GOOD,
        &["--set", "tipping.measure=slo.request"],
        "tipping.slo",
        "missing",
    );
}

#[test]
fn bad_phase_settings_and_missing_sections_exit_2() {
    refused(
        "phase",
        GOOD,
        &["--set", "phase.to=0s"],
        "phase.to",
        "the range is empty",
    );
    refused(
        "phase",
        GOOD,
        &["--set", "phase.from=1"],
        "phase.from",
        "is a duration",
    );
    refused(
        "phase",
        GOOD,
        &[
            "--set",
            "phase.vary=event.slowdown.factor",
            "--set",
            "phase.from=2",
            "--set",
            "phase.to=1",
        ],
        "phase.to",
        "empty",
    );
    // The longest slowdown would leave no window to measure in.
    refused(
        "phase",
        GOOD,
        &["--set", "phase.to=45s"],
        "tipping.settle",
        "measuring window",
    );
    let no_phase = GOOD.split("[phase]").next().unwrap();
    refused("phase", no_phase, &[], "phase", "no [phase] section");
    let no_tipping = format!(
        "{}\n[phase]\nvary = \"class.request.rate\"\nfrom = 1\nto = 2\n",
        GOOD.split("[tipping]").next().unwrap()
    );
    refused(
        "tipping",
        &no_tipping,
        &[],
        "phase",
        "needs a [tipping] section",
    );
    let none = GOOD.split("[tipping]").next().unwrap();
    refused("tipping", none, &[], "tipping", "no [tipping] section");
    // The file itself, with a line and column.
    let typo = GOOD.replace("settle = \"10s\"", "settle = 10");
    refused("tipping", &typo, &[], "tipping.settle", "good.toml:");
}

#[test]
fn bad_shard_argument_is_a_usage_error() {
    for s in ["2/2", "1", "a/b", "0/0"] {
        let (code, err) = sweep_of("tipping", GOOD, &["--shard", s]);
        assert_eq!(code, Some(2), "--shard {s}: {err}");
    }
}

/// `brink all` over a folder: runs, sweeps and an index page that links every picture.
#[test]
fn all_writes_an_index_page() {
    let dir = tempfile::tempdir().unwrap();
    let scen = dir.path().join("scenarios");
    std::fs::create_dir(&scen).unwrap();
    std::fs::write(scen.join("small.toml"), GOOD).unwrap();
    let out = dir.path().join("out");
    let o = brink(["all", "--dir"])
        .arg(&scen)
        .arg("--out")
        .arg(&out)
        .run();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    for f in ["timeline.png", "tipping.png", "phase.png"] {
        assert!(
            page.contains(&format!("src=\"small/{f}\"")),
            "index.html lacks {f}"
        );
        assert!(
            Path::new(&out.join("small").join(f)).exists(),
            "{f} not written"
        );
    }
    assert!(page.contains("<th>headroom</th>"));
}

/// `brink all` over a folder with no scenario file, or one that does not exist: bad input
/// (exit 2) that names the folder, and nothing written.
#[test]
fn all_refuses_an_empty_or_missing_folder() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for (folder, says) in [
        (empty.clone(), "no scenario files"),
        (
            dir.path().join("missing"),
            "cannot read the scenario folder",
        ),
    ] {
        let out = dir.path().join("out");
        let o = brink(["all", "--dir"])
            .arg(&folder)
            .arg("--out")
            .arg(&out)
            .run();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(says) && err.contains(&*folder.to_string_lossy()),
            "{err}"
        );
        assert!(!out.exists(), "nothing may be written");
    }
}
