//! Helpers shared by the integration tests.

use brink::model::RunResult;
use brink::scenario::{Loader, Override, Scenario};
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Output};

/// Builds a scenario from TOML text.
pub fn scenario(text: &str) -> Scenario {
    Loader::from_text("test.toml", "test", text.to_string())
        .unwrap()
        .load(None, &[])
        .unwrap()
}

/// Loads a bundled scenario with an optional variant and `path=value` overrides.
pub fn bundled(name: &str, variant: Option<&str>, sets: &[&str]) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(format!("{name}.toml"));
    let overrides: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    Loader::open(&path)
        .unwrap()
        .load(variant, &overrides)
        .unwrap()
}

/// Runs a scenario with run index `run`.
pub fn run(sc: &Scenario, run: u64) -> RunResult {
    brink::model::run(sc, run).unwrap()
}

/// The mean of a column over rows whose time lies in [from, to) seconds.
pub fn mean_between(r: &RunResult, column: &str, from: f64, to: f64) -> f64 {
    let t = r.series.column("time_s").unwrap();
    let v = r
        .series
        .column(column)
        .unwrap_or_else(|| panic!("no column {column}"));
    let sel: Vec<f64> = t
        .iter()
        .zip(&v)
        .filter(|(t, v)| **t >= from && **t < to && v.is_finite())
        .map(|(_, v)| *v)
        .collect();
    assert!(!sel.is_empty(), "no rows of {column} in [{from}, {to})");
    sel.iter().sum::<f64>() / sel.len() as f64
}

/// The path of the built `brink` binary.
pub fn brink_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_brink"))
}

/// `brink ARGS`: the built binary with `args` (strings or paths), run in the repository's
/// root (where `scenarios/` is) unless `current_dir` says otherwise. Add arguments with
/// `.arg`/`.args`, then [`Run::run`] it (or `spawn` it, to signal it).
pub fn brink<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> Command {
    let mut cmd = Command::new(brink_bin());
    cmd.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

/// Running a command to its end.
pub trait Run {
    /// Runs the command to its end and returns its exit status and what it printed; a
    /// command that cannot be started fails the test.
    fn run(&mut self) -> Output;
}

impl Run for Command {
    fn run(&mut self) -> Output {
        self.output().expect("the brink binary runs")
    }
}

/// The shape of a metastable failure in a class's goodput: above 95% of 95% of the offered
/// `rate` over `before` (seconds), under 5% of it over `after`, long after the trigger.
pub fn assert_healthy_then_stuck(
    r: &RunResult,
    class: &str,
    rate: f64,
    before: (f64, f64),
    after: (f64, f64),
) {
    let column = format!("{class}.goodput_per_s");
    let good_before = mean_between(r, &column, before.0, before.1);
    let good_after = mean_between(r, &column, after.0, after.1);
    assert!(
        good_before > 0.95 * rate * 0.95,
        "goodput before the trigger {good_before}"
    );
    assert!(
        good_after < 0.05 * rate,
        "goodput from {} s, long after the trigger ended, {good_after}",
        after.0
    );
}
