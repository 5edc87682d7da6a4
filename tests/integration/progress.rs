//! Issue 23 item 7: when stderr is not a terminal (a log, CI), a long command prints a
//! progress line every 10 s (here every 200 ms, through the hidden variable
//! `BRINK_PROGRESS_EVERY_MS`), and an adaptive sweep's line counts the runs the search has
//! decided to do, not the grid's maximum.

use crate::common::{Run, brink};

/// `(done, planned)` of every progress line `retry-storm tipping: P/L runs, S s`.
fn progress_lines(stderr: &str) -> Vec<(u64, u64)> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("retry-storm tipping: "))
        .filter_map(|l| l.split_once(" runs, "))
        .filter_map(|(counts, _)| counts.split_once('/'))
        .map(|(p, l)| (p.parse().unwrap(), l.parse().unwrap()))
        .collect()
}

#[test]
fn an_adaptive_sweep_without_a_terminal_prints_lines_of_its_planned_runs() {
    let dir = tempfile::tempdir().unwrap();
    let o = brink(["tipping", "retry-storm", "--seeds", "10", "--jobs", "2"])
        .args(["--set", "tipping.points=3", "--set", "tipping.duration=12m"])
        .args(["--set", "tipping.settle=5m", "--out"])
        .arg(dir.path())
        .env("BRINK_PROGRESS_EVERY_MS", "200")
        .run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    // The runs done, from `retry-storm tipping: N runs in S s wall`.
    let done: u64 = err
        .lines()
        .find_map(|l| {
            l.strip_prefix("retry-storm tipping: ")?
                .strip_suffix(" s wall")?
                .split_once(" runs in ")
                .map(|(n, _)| n.parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no summary line: {err}"));
    let lines = progress_lines(&err);
    assert!(!lines.is_empty(), "no progress line: {err}");
    // The grid's maximum (3 values x 10 seeds x 2 branches = 60, what the bar showed
    // before) is no bound: probes stop early and bisection adds some (94 runs here, so
    // the old lines read `66/60 runs`). Each line's length is the runs planned so far.
    for w in lines.windows(2) {
        assert!(w[0].1 <= w[1].1, "the planned runs shrank: {lines:?}");
    }
    for &(p, l) in &lines {
        assert!(p <= l && l <= done, "{p}/{l} with {done} runs done: {err}");
    }
}
