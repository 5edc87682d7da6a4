//! What `cargo install --path .` gives: a `brink` that works from any folder, with the
//! bundled scenarios embedded, `brink new`, shell completions and a man page. Each test
//! runs the built binary in an empty temporary folder (no `scenarios/` next to it).

use crate::common::{Run, brink};
use std::path::Path;
use std::process::Output;

/// The bundled scenarios: the repository's `scenarios/*.toml`, by name.
fn bundled_names() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    names
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[track_caller]
fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A folder with no `scenarios/`: what any folder outside the repository looks like.
fn elsewhere() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    assert!(!dir.path().join("scenarios").exists());
    dir
}

/// `brink list` names every bundled scenario, one a line, in name order.
#[test]
fn list_shows_every_bundled_scenario_from_any_folder() {
    let dir = elsewhere();
    let o = brink(["list"]).current_dir(dir.path()).run();
    assert_ok(&o);
    let listed: Vec<String> = stdout(&o)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(listed, bundled_names());
}

/// `brink run NAME` runs the embedded text and writes its files under the scenario's name;
/// `brink check NAME` and `NAME.toml` work too, naming it as bundled.
#[test]
fn run_and_check_take_a_bundled_name() {
    let dir = elsewhere();
    let out = dir.path().join("out");
    let o = brink([
        "run",
        "retry-storm",
        "--set",
        "duration=6m",
        "--out",
        out.to_str().unwrap(),
    ])
    .current_dir(dir.path())
    .run();
    assert_ok(&o);
    let summary =
        std::fs::read_to_string(out.join("retry-storm/runs/duration-6m/summary.json")).unwrap();
    assert!(summary.contains("\"retry-storm\""), "{summary}");
    for name in ["retry-storm", "retry-storm.toml"] {
        let o = brink(["check", name]).current_dir(dir.path()).run();
        assert_ok(&o);
        assert!(
            stdout(&o).contains("retry-storm.toml (bundled) (5 variants)"),
            "{}",
            stdout(&o)
        );
    }
}

/// A file in the current folder wins over a bundled scenario of the same name, given as
/// `mm1.toml` or as `mm1`.
#[test]
fn a_real_file_wins_over_a_bundled_name() {
    let dir = elsewhere();
    let local = "duration = \"1s\"\n[class.c]\nrate = 0\nsteps = [{ query = \"p\" }]\n\
                 [pool.p]\nservice = { mean = \"1s\" }\n[variant.v]\nset = { seed = 2 }\n";
    std::fs::write(dir.path().join("mm1.toml"), local).unwrap();
    for arg in ["mm1.toml", "mm1"] {
        let o = brink(["check", arg]).current_dir(dir.path()).run();
        assert_ok(&o);
        assert_eq!(stdout(&o), "ok  mm1.toml (1 variants)\n", "{arg}");
    }
    // Bundled scenarios are named so: mmc has no variant either.
    let o = brink(["check", "mmc"]).current_dir(dir.path()).run();
    assert_eq!(stdout(&o), "ok  mmc.toml (bundled) (0 variants)\n");
}

/// A name that is neither a file nor bundled: bad input (exit 2) with the nearest name.
#[test]
fn an_unknown_name_is_refused_with_a_suggestion() {
    let dir = elsewhere();
    let o = brink(["run", "retry-strom"]).current_dir(dir.path()).run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("retry-strom: cannot read the scenario: no such file, and no bundled")
            && err.contains("did you mean `retry-storm`?"),
        "{err}"
    );
}

/// `brink new x` writes a starter that `brink check` accepts; a second `brink new x` is
/// refused (exit 2) and leaves the file as it was; a name with a path is refused.
#[test]
fn new_writes_a_valid_starter_and_never_overwrites() {
    let dir = elsewhere();
    let o = brink(["new", "x"]).current_dir(dir.path()).run();
    assert_ok(&o);
    let file = dir.path().join("x.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    for section in ["[class.", "[pool.", "[event.", "[tipping]"] {
        assert!(text.contains(section), "the starter lacks {section}");
    }
    let o = brink(["check", "x.toml"]).current_dir(dir.path()).run();
    assert_ok(&o);
    assert_eq!(stdout(&o), "ok  x.toml (0 variants)\n");

    std::fs::write(&file, "# edited\n").unwrap();
    for name in ["x", "x.toml"] {
        let o = brink(["new", name]).current_dir(dir.path()).run();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("x.toml already exists"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "# edited\n");
    }
    for bad in ["../y", "a/b", ".y", ""] {
        let o = brink(["new", bad]).current_dir(dir.path()).run();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {err}");
        assert!(err.contains("brink new"), "{err}");
    }
    // Nothing but x.toml was written: no temporary files left behind.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "{left:?}");
}

/// `brink new y --from NAME` copies the bundled scenario byte for byte.
#[test]
fn new_from_copies_a_bundled_scenario_exactly() {
    let dir = elsewhere();
    let o = brink(["new", "y", "--from", "slack-2022-02-22"])
        .current_dir(dir.path())
        .run();
    assert_ok(&o);
    let copy = std::fs::read(dir.path().join("y.toml")).unwrap();
    let original = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/slack-2022-02-22.toml"),
    )
    .unwrap();
    assert_eq!(copy, original);
    let o = brink(["new", "z", "--from", "no-such-one"])
        .current_dir(dir.path())
        .run();
    assert_eq!(o.status.code(), Some(2));
    assert!(!dir.path().join("z.toml").exists());
}

/// Completion scripts for every shell clap_complete knows, naming the subcommands.
#[test]
fn completions_name_the_commands() {
    let dir = elsewhere();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = brink(["completions", shell]).current_dir(dir.path()).run();
        assert_ok(&o);
        let text = stdout(&o);
        for word in ["tipping", "collapse-time", "completions"] {
            assert!(text.contains(word), "{shell} completions lack {word}");
        }
    }
    let o = brink(["completions", "tcsh"]).current_dir(dir.path()).run();
    assert_eq!(o.status.code(), Some(2));
}

/// `brink man` prints a roff page: a `.TH brink 1` header among its first lines, then a
/// section per subcommand.
#[test]
fn man_prints_a_roff_page() {
    let dir = elsewhere();
    let o = brink(["man"]).current_dir(dir.path()).run();
    assert_ok(&o);
    let text = stdout(&o);
    assert!(
        text.starts_with('.'),
        "not roff: {}",
        &text[..80.min(text.len())]
    );
    assert!(
        text.lines().take(5).any(|l| l.starts_with(".TH brink 1")),
        "no .TH header: {}",
        &text[..200.min(text.len())]
    );
    assert!(text.contains("tipping"));
}
