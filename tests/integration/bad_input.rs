//! Malformed input is refused the same way everywhere: exit code 2, a message that starts
//! with `error:`, names the dotted key path and the place (`FILE:line:col`, or the
//! `--set`/`--variant`/`[[at]]` origin), never a panic, and nothing written.
//!
//! Every file in `tests/bad/` holds one mistake; its first line says what the message must
//! name:
//!
//! ```text
//! # expect: <key path> @ <place> -- <what is wrong>
//! ```
//!
//! `<key path>` is the dotted path exactly as printed (`(syntax)` for a TOML syntax error,
//! which has none). `<place>` is `LINE` or `LINE:COL` in the file itself, or any other text
//! that must appear in the message (e.g. `[[at]] entry 1`). Lines right after it of the
//! form `# also: <text>` name further text the message must contain, word for word.
//!
//! Which commands must refuse a file: `run`, `hysteresis` and `check`, except for a mistake
//! in a sweep section (`tipping.*`, `phase.*`, `hysteresis.*`), which `brink run` does not
//! validate (issue 12): `check`, `hysteresis` and `tipping`. A line `# commands: ...`
//! (after the `# also:` lines) names them instead.

use crate::common::{Run, brink};
use std::path::{Path, PathBuf};
use std::process::Output;

/// What a message must name.
#[derive(Debug)]
struct Expect {
    /// The dotted key path, or `None` when there is none (syntax errors, `--set novalue`).
    path: Option<String>,
    /// Text that must appear in stderr to name the place.
    place: String,
    /// Further text the message must contain (a hint, say).
    also: Vec<String>,
    /// The commands that must refuse the file.
    commands: Vec<String>,
}

fn bad_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("bad")
}

fn bad_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(bad_dir())
        .expect("tests/bad/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// Reads the `# expect: PATH @ PLACE -- WHAT` comment on the first line of `file`.
fn expectation(file: &Path) -> Result<Expect, String> {
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let first = text.lines().next().unwrap_or("");
    let spec = first
        .strip_prefix("# expect:")
        .ok_or_else(|| format!("line 1 is not `# expect: PATH @ PLACE -- WHAT`: {first:?}"))?;
    let (spec, what) = spec
        .split_once(" -- ")
        .ok_or_else(|| format!("line 1 lacks ` -- <what is wrong>`: {first:?}"))?;
    if what.trim().is_empty() {
        return Err("line 1 does not say what is wrong".into());
    }
    let (path, place) = spec
        .split_once(" @ ")
        .ok_or_else(|| format!("line 1 lacks ` @ <place>`: {first:?}"))?;
    let (path, place) = (path.trim(), place.trim());
    let shown = file.display();
    let is_num = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let place = match place.split_once(':') {
        Some((l, c)) if is_num(l) && is_num(c) => format!("{shown}:{l}:{c}:"),
        None if is_num(place) => format!("{shown}:{place}:"),
        _ => place.to_string(),
    };
    let mut also = Vec::new();
    let path = if path == "(syntax)" {
        also.push("TOML syntax error".to_string());
        None
    } else {
        Some(path.to_string())
    };
    // A typo must come with the nearest valid name.
    for hint in what.split("should suggest ").skip(1).chain(
        what.split("did you mean ")
            .skip(1)
            .map(|s| s.trim_end_matches('"')),
    ) {
        let name = hint.split('`').nth(1).unwrap_or("");
        if !name.is_empty() {
            also.push(format!("did you mean `{name}`?"));
        }
    }
    also.extend(
        text.lines()
            .skip(1)
            .map_while(|l| l.strip_prefix("# also:"))
            .map(|t| t.trim().to_string()),
    );
    let commands = match text
        .lines()
        .skip(1)
        .skip_while(|l| l.starts_with("# also:"))
        .find_map(|l| l.strip_prefix("# commands:"))
    {
        Some(list) => list.split_whitespace().map(str::to_string).collect(),
        None => {
            let sweep = ["tipping", "phase", "hysteresis"].iter().any(|s| {
                path.as_deref()
                    .is_some_and(|p| p == *s || p.starts_with(&format!("{s}.")))
            });
            let list: &[&str] = if sweep {
                &["check", "hysteresis", "tipping"]
            } else {
                &["run", "hysteresis", "check"]
            };
            list.iter().map(|s| s.to_string()).collect()
        }
    };
    Ok(Expect {
        path,
        place,
        also,
        commands,
    })
}

/// `brink run FILE --out OUT EXTRA...` in `cwd`.
fn run_into(file: &Path, out: &Path, extra: &[&str], cwd: &Path) -> Output {
    let mut args = vec![
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    brink(&args).current_dir(cwd).run()
}

/// Asserts exit code 0, showing stderr otherwise.
fn assert_success(o: &Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Everything wrong with how a malformed input was refused; empty when it was refused well.
fn problems(out: &Output, expect: &Expect, out_dir: Option<&Path>) -> Vec<String> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut p = Vec::new();
    if out.status.code() != Some(2) {
        p.push(format!("exit code {:?}, expected 2", out.status.code()));
    }
    if !stderr.starts_with("error:") {
        p.push("stderr does not start with `error:`".into());
    }
    if stderr.contains("panicked") {
        p.push("the program panicked".into());
    }
    if let Some(path) = &expect.path {
        // The loader prints `PLACE: `PATH`: MESSAGE`.
        if !stderr.contains(&format!("`{path}`: ")) {
            p.push(format!("stderr does not name the key path `{path}`"));
        }
    }
    if !stderr.contains(&expect.place) {
        p.push(format!("stderr does not name the place `{}`", expect.place));
    }
    for s in &expect.also {
        if !stderr.contains(s.as_str()) {
            p.push(format!("stderr lacks `{s}`"));
        }
    }
    if let Some(dir) = out_dir
        && dir.exists()
    {
        p.push(format!("the output folder {} was created", dir.display()));
    }
    p
}

/// Asserts that `o` refused its input as `expect` says (`what` prefixes the failure).
fn assert_refused(what: &str, o: &Output, expect: &Expect, out_dir: Option<&Path>) {
    let ps = problems(o, expect, out_dir);
    assert!(
        ps.is_empty(),
        "{what}{ps:?}\nstderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Formats the failures of several cases into one report.
fn report(failures: &[(String, Vec<String>, String)]) -> String {
    failures
        .iter()
        .map(|(case, ps, stderr)| {
            format!(
                "--- {case}\n  {}\n  stderr: {}",
                ps.join("\n  "),
                stderr.trim_end().replace('\n', "\n          ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const GOOD: &str = r#"title = "a small healthy scenario for the command-line tests"
duration = "10s"

[class.request]
rate = 1
steps = [{ query = "server" }]

[pool.server]
workers = 1
service = { law = "exp", mean = "100ms" }

[variant.bigger]
description = "more workers"
set = { "pool.server.workers" = 4 }

[variant.biggest]
description = "many more workers"
set = { "pool.server.workers" = 40 }
"#;

/// A temporary folder holding `good.toml`.
fn good() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("good.toml");
    std::fs::write(&file, GOOD).unwrap();
    (dir, file)
}

/// The harness itself: a good scenario runs (exit 0) and writes its folder, so the
/// "nothing written" checks below test something.
#[test]
fn good_scenario_runs_and_writes_its_folder() {
    let (dir, file) = good();
    let out = dir.path().join("out");
    let o = run_into(&file, &out, &[], dir.path());
    assert_success(&o);
    assert!(out.join("good").is_dir());
    let o = run_into(
        &file,
        &out,
        &[
            "--variant",
            "bigger",
            "--set",
            "class.request.steps.0.cost=2",
        ],
        dir.path(),
    );
    assert_success(&o);
    let o = brink(["check", file.to_str().unwrap()])
        .current_dir(dir.path())
        .run();
    assert_success(&o);
}

#[test]
fn every_bad_file_has_an_expectation() {
    let files = bad_files();
    assert!(
        files.len() >= 24,
        "tests/bad/ holds only {} files",
        files.len()
    );
    let wrong: Vec<String> = files
        .iter()
        .filter_map(|f| {
            expectation(f)
                .err()
                .map(|e| format!("{}: {e}", f.display()))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Runs `brink <command> FILE ...` on every bad file in a fresh folder and collects what
/// was not refused properly: the exit code, the message, and that nothing was written.
fn refuse_every_bad_file(command: &str) {
    let mut failures = Vec::new();
    for file in bad_files() {
        let Ok(expect) = expectation(&file) else {
            continue; // reported by every_bad_file_has_an_expectation
        };
        if !expect.commands.iter().any(|c| c == command) {
            continue;
        }
        let tmp = tempfile::tempdir().unwrap();
        let out_dir = tmp.path().join("out");
        let mut args = vec![command, file.to_str().unwrap()];
        let writes = command != "check";
        if writes {
            args.extend(["--out", out_dir.to_str().unwrap()]);
        }
        let o = brink(&args).current_dir(tmp.path()).run();
        let mut ps = problems(&o, &expect, writes.then_some(out_dir.as_path()));
        if std::fs::read_dir(tmp.path()).unwrap().next().is_some() {
            ps.push(format!("`brink {command}` wrote into its working folder"));
        }
        if !ps.is_empty() {
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            failures.push((
                format!("brink {command} {name}"),
                ps,
                String::from_utf8_lossy(&o.stderr).into_owned(),
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad files were not refused properly by `brink {command}`:\n{}",
        failures.len(),
        bad_files().len(),
        report(&failures)
    );
}

#[test]
fn every_bad_file_is_refused_by_run() {
    refuse_every_bad_file("run");
}

#[test]
fn every_bad_file_is_refused_by_hysteresis() {
    refuse_every_bad_file("hysteresis");
}

#[test]
fn every_bad_file_is_refused_by_check() {
    refuse_every_bad_file("check");
}

#[test]
fn every_bad_sweep_file_is_refused_by_tipping() {
    refuse_every_bad_file("tipping");
}

#[test]
fn every_bad_phase_file_is_refused_by_phase() {
    refuse_every_bad_file("phase");
}

#[test]
fn check_reports_the_bad_file_among_good_ones() {
    let (dir, good) = good();
    let bad = bad_dir().join("05-negative-rate.toml");
    let o = brink(["check", good.to_str().unwrap(), bad.to_str().unwrap()])
        .current_dir(dir.path())
        .run();
    let expect = Expect {
        path: Some("class.request.rate".into()),
        place: format!("{}:5:1:", bad.display()),
        also: vec![],
        commands: vec![],
    };
    assert_refused("", &o, &expect, None);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(&format!("ok  {} (2 variants)", good.display())),
        "stdout: {stdout}"
    );
}

/// Runs `brink run good.toml --out DIR/out ARGS` and checks the refusal.
fn refused_with(args: &[&str], path: Option<&str>, place: &str, also: &[&str]) -> Vec<String> {
    let (dir, file) = good();
    let out_dir = dir.path().join("out");
    let mut all = vec![
        "run",
        file.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let o = brink(&all).current_dir(dir.path()).run();
    let place = place.replace("FILE", &file.display().to_string());
    let expect = Expect {
        path: path.map(str::to_string),
        place,
        also: also.iter().map(|s| s.to_string()).collect(),
        commands: vec![],
    };
    let ps = problems(&o, &expect, Some(&out_dir));
    if ps.is_empty() {
        vec![]
    } else {
        vec![format!(
            "brink run good.toml {}: {}\n  stderr: {}",
            args.join(" "),
            ps.join("; "),
            String::from_utf8_lossy(&o.stderr).trim_end()
        )]
    }
}

/// `--set a.a.a...a.b=1` with 30,001 segments.
static DEEP_SET: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!("{}b=1", "a.".repeat(30_000)));

/// Arguments, the key path the error must name, the place, and words it must contain.
type SetCase<'a> = (&'a [&'a str], Option<&'a str>, &'a str, &'a [&'a str]);

#[test]
fn bad_set_values_are_refused() {
    let cases: &[SetCase] = &[
        // Issue 12: a whole section assigned at once names only entries the file defines.
        (
            &["--set", "pool={servr={workers=2}}"],
            Some("pool"),
            "--set pool={servr={workers=2}}: ",
            &["unknown pool `servr`", "did you mean `server`?"],
        ),
        (
            &["--set", "event={slow={enabled=false}}"],
            Some("event"),
            "--set event={slow={enabled=false}}: ",
            &["unknown event `slow`"],
        ),
        (
            &["--set", "pool.server.workers=0"],
            Some("pool.server.workers"),
            "--set pool.server.workers=0: ",
            &["not 0"],
        ),
        (
            &["--set", "class.request.rat=1"],
            Some("class.request.rat"),
            "--set class.request.rat=1: ",
            &["did you mean `rate`?"],
        ),
        (
            &["--set", "novalue"],
            None,
            "--set novalue: ",
            &["path=value"],
        ),
        (
            &["--set", "class..rate=1"],
            None,
            "--set class..rate=1: ",
            &["empty segment"],
        ),
        (&["--set", "=1"], None, "--set =1: ", &["empty"]),
        (
            &["--set", "class.request.steps.0.cost=0"],
            Some("class.request.steps.0.cost"),
            "--set class.request.steps.0.cost=0: ",
            &[],
        ),
        (
            &["--set", "class.request.steps.4.cost=2"],
            Some("class.request.steps.4.cost"),
            "--set class.request.steps.4.cost=2: ",
            &["no entry 4"],
        ),
        (
            &["--set", "class.request.steps.first.cost=2"],
            Some("class.request.steps.first.cost"),
            "--set class.request.steps.first.cost=2: ",
            &["index it with a number"],
        ),
        (
            &["--set", "class.request.rate.per_s=2"],
            Some("class.request.rate.per_s"),
            "--set class.request.rate.per_s=2: ",
            &["not a table"],
        ),
        (
            &["--set", "class.request.rate=fast"],
            Some("class.request.rate"),
            "--set class.request.rate=fast: ",
            &[],
        ),
        (
            &["--set", "class.request.timeout=10"],
            Some("class.request.timeout"),
            "--set class.request.timeout=10: ",
            &["needs a unit"],
        ),
        (
            &["--set", "duration=10parsecs"],
            Some("duration"),
            "--set duration=10parsecs: ",
            &["unknown unit `parsecs`"],
        ),
        (
            &["--set", "pool.server.service.law=normal"],
            Some("pool.server.service.law"),
            "--set pool.server.service.law=normal: ",
            &[],
        ),
        (
            &["--set", "class.request.steps=[]"],
            Some("class.request.steps"),
            "--set class.request.steps=[]: ",
            &["at least one step"],
        ),
        (
            &["--set", "class.request.steps.0.query=database"],
            Some("class.request.steps.0.query"),
            "--set class.request.steps.0.query=database: ",
            &["no pool named `database`"],
        ),
        // A path deeper than any key (it used to overflow the stack).
        (
            &["--set", &DEEP_SET],
            None,
            "the key path has 30001 segments; no key is deeper than 16",
            &[],
        ),
        // A typo must not create a pool (it used to run with a new, unused one).
        (
            &["--set", "pool.servr.service.mean=5ms"],
            Some("pool.servr.service.mean"),
            "--set pool.servr.service.mean=5ms: ",
            &["unknown pool `servr`", "did you mean `server`?"],
        ),
        (
            &["--set", "event.slow.enabled=false"],
            Some("event.slow.enabled"),
            "--set event.slow.enabled=false: ",
            &["unknown event `slow` (the file defines: none)"],
        ),
        (
            &["--set", "variant.bigger.description=x"],
            Some("variant.bigger.description"),
            "--set variant.bigger.description=x: ",
            &["setting one has no effect"],
        ),
        (
            &["--set", "novel_key=1"],
            Some("novel_key"),
            "--set novel_key=1: ",
            &["unknown key"],
        ),
        // The last assignment to a path is the one in force, and the one blamed.
        (
            &[
                "--set",
                "pool.server.workers=4",
                "--set",
                "pool.server.workers=-4",
            ],
            Some("pool.server.workers"),
            "--set pool.server.workers=-4: ",
            &[],
        ),
        // An override on top of a variant is blamed, not the variant.
        (
            &["--variant", "bigger", "--set", "pool.server.workers=0"],
            Some("pool.server.workers"),
            "--set pool.server.workers=0: ",
            &[],
        ),
        (
            &[
                "--set",
                "class.request.retry.max_attempts=3",
                "--set",
                "class.request.retry.jitter=full",
            ],
            Some("class.request.retry.jitter"),
            "--set class.request.retry.jitter=full: ",
            &[],
        ),
    ];
    let failures: Vec<String> = cases
        .iter()
        .flat_map(|(args, path, place, also)| refused_with(args, *path, place, also))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A `--set` that makes another key invalid (here `base`, needed by the backoff it sets) is
/// still blamed on the `--set`: the file alone is valid, so a place in the file would send
/// the reader looking for a mistake that is not there.
#[test]
fn set_that_invalidates_another_key_is_blamed_on_the_set() {
    let failures = refused_with(
        &["--set", "class.request.retry.backoff=exponential"],
        Some("class.request.retry.base"),
        "--set class.request.retry.backoff=exponential",
        &[],
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn unknown_variant_is_refused() {
    let failures = [
        refused_with(
            &["--variant", "biger"],
            Some("variant.biger"),
            "--variant biger: ",
            &["did you mean `bigger`?"],
        ),
        refused_with(
            &["--variant", "tiny"],
            Some("variant.tiny"),
            "--variant tiny: ",
            &["bigger, biggest"],
        ),
    ]
    .concat();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn unknown_variant_of_a_bundled_scenario_is_refused() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join("retry-storm.toml");
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let o = run_into(&file, &out_dir, &["--variant", "lifoo"], tmp.path());
    let expect = Expect {
        path: Some("variant.lifoo".into()),
        place: "--variant lifoo: ".into(),
        also: vec!["did you mean `lifo`?".into()],
        commands: vec![],
    };
    assert_refused("", &o, &expect, Some(&out_dir));
}

/// A variant whose settings are invalid: `run --variant` names the variant and where it is
/// defined, and `check` (which loads every variant) refuses the file the same way.
#[test]
fn bad_variant_is_refused_by_run_and_check() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken-variant.toml");
    std::fs::write(
        &file,
        format!(
            "{GOOD}\n[variant.broken]\ndescription = \"no workers\"\nset = {{ \"pool.server.workers\" = 0 }}\n"
        ),
    )
    .unwrap();
    let line = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .position(|l| l == "[variant.broken]")
        .unwrap()
        + 1;
    let expect = Expect {
        path: Some("pool.server.workers".into()),
        place: format!("variant `broken` ({}:{line}:", file.display()),
        also: vec![],
        commands: vec![],
    };
    let out_dir = dir.path().join("out");
    let o = run_into(&file, &out_dir, &["--variant", "broken"], dir.path());
    assert_refused("run: ", &o, &expect, Some(&out_dir));
    let o = brink(["check", file.to_str().unwrap()])
        .current_dir(dir.path())
        .run();
    assert_refused("check: ", &o, &expect, None);
    // The file without --variant is fine: variants apply only when chosen.
    let o = run_into(&file, &out_dir, &[], dir.path());
    assert_success(&o);
}

/// A file with a byte that is not UTF-8 is refused at that byte's line and column.
#[test]
fn non_utf8_file_is_refused_at_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("latin1.toml");
    std::fs::write(&file, b"duration = \"10s\"\ntitle = \"caf\xe9\"\n").unwrap();
    let out_dir = tmp.path().join("out");
    let o = run_into(&file, &out_dir, &[], tmp.path());
    let expect = Expect {
        path: None,
        place: format!("{}:2:13:", file.display()),
        also: vec!["not UTF-8 at line 2, column 13".into()],
        commands: vec![],
    };
    assert_refused("", &o, &expect, Some(&out_dir));
}

/// A variant whose `set` nests tables deeper than any key is refused, not a stack overflow.
#[test]
fn deeply_nested_variant_set_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("deep-variant.toml");
    let depth = 40;
    let set = format!("{}1{}", "{ a = ".repeat(depth), " }".repeat(depth));
    std::fs::write(&file, format!("{GOOD}\n[variant.deep]\nset = {set}\n")).unwrap();
    let out_dir = dir.path().join("out");
    let o = run_into(&file, &out_dir, &["--variant", "deep"], dir.path());
    let expect = Expect {
        path: None,
        place: "variant `deep`".into(),
        also: vec!["no key is deeper than 16".into()],
        commands: vec![],
    };
    assert_refused("", &o, &expect, Some(&out_dir));
}

#[test]
fn missing_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("no-such-scenario.toml");
    let out_dir = tmp.path().join("out");
    let o = run_into(&file, &out_dir, &[], tmp.path());
    let expect = Expect {
        path: None,
        place: format!("{}: cannot read the scenario", file.display()),
        also: vec![],
        commands: vec![],
    };
    let mut ps = problems(&o, &expect, Some(&out_dir));
    // The reason is printed once, not once more as a "cause".
    let stderr = String::from_utf8_lossy(&o.stderr).to_lowercase();
    if stderr.matches("no such file").count() != 1 {
        ps.push("the reason is not printed exactly once".into());
    }
    assert!(
        ps.is_empty(),
        "{ps:?}\nstderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `--jobs` is bounded (thousands of threads were accepted): refused with exit 2, naming the
/// flag, before anything runs.
#[test]
fn too_many_jobs_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let o = brink(["tipping", "scenarios/mm1.toml", "--jobs", "100000", "--out"])
        .arg(tmp.path())
        .run();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--jobs"), "{stderr}");
    assert!(
        std::fs::read_dir(tmp.path()).unwrap().next().is_none(),
        "nothing written"
    );
}

/// Issue 23: a scenario "file" that never ends (`/dev/zero`) is refused by name, at once
/// (it was read until memory ran out).
#[cfg(unix)]
#[test]
fn a_scenario_that_is_not_a_regular_file_is_refused() {
    let o = brink(["check", "/dev/zero"]).run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("/dev/zero: cannot read the scenario: not a regular file"),
        "{err}"
    );
}
