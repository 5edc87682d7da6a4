//! Issue 24 item 5: the system drawn. `brink run` writes `structure.svg` beside the
//! timeline: the scenario's boxes and arrows labelled with the run's measured rates, and
//! the loop that sustains its failure highlighted from what the run measured.

use crate::common::{Run, brink, bundled, run};
use brink::engine::number::sig3;
use brink::experiment::run::{structure, sustained_of};
use brink::report::narrative::Sustained;

/// The highlight's colour, as a stroke: present only where something is highlighted.
const HOT: &str = "stroke=\"#c0392b\"";

/// The time-weighted mean of a column of `timeseries.csv`'s text over `[from, to)` s (a
/// row lasts until the next, the last until `end`).
fn csv_mean(csv: &str, column: &str, (from, to): (f64, f64), end: f64) -> f64 {
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let k = head.iter().position(|h| *h == column).unwrap();
    let rows: Vec<Vec<f64>> = lines
        .map(|l| {
            l.split(',')
                .map(|x| x.parse().unwrap_or(f64::NAN))
                .collect()
        })
        .collect();
    let (mut s, mut w) = (0.0, 0.0);
    for (i, r) in rows.iter().enumerate() {
        let next = rows.get(i + 1).map_or(end, |n| n[0]);
        let overlap = next.min(to) - r[0].max(from);
        if overlap > 0.0 && r[k].is_finite() {
            s += r[k] * overlap;
            w += overlap;
        }
    }
    s / w
}

/// Retry storm: `brink run` writes `structure.svg` with the retry loop highlighted (from
/// the server back to the client, in words with the attempts per request) and the client
/// edge labelled with the rates of `timeseries.csv` over the highlighted stretch; the
/// `no-retries` design recovers as its trigger ends, and its picture highlights nothing
/// and says so.
#[test]
fn retry_storm_draws_its_retry_loop_and_a_design_that_recovers_draws_none() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path();
    for variant in [None, Some("no-retries")] {
        let mut cmd = brink(["run", "retry-storm", "--out"]);
        cmd.arg(out);
        if let Some(v) = variant {
            cmd.args(["--variant", v]);
        }
        let o = cmd.run();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let base = out.join("retry-storm");
    let svg = std::fs::read_to_string(base.join("structure.svg")).unwrap();
    let csv = std::fs::read_to_string(base.join("timeseries.csv")).unwrap();
    // The same run in the library says where the loop starts.
    let sc = bundled("retry-storm", None, &[]);
    let result = run(&sc, 0);
    let s = &result.series;
    let sustained = sustained_of(
        &sc,
        (&s.columns, &s.rows),
        &result.markers,
        sc.duration,
        true,
    );
    let Sustained::Loop {
        since_s,
        until_s: None,
        ..
    } = sustained
    else {
        panic!("retry-storm's storm lasts to the end: {sustained:?}");
    };
    let end = sc.duration as f64 / 1e9;
    let offered = csv_mean(&csv, "request.offered_per_s", (since_s, end), end);
    let attempts = csv_mean(&csv, "request.attempts_per_s", (since_s, end), end);
    assert!(attempts > 2.0 * offered, "{attempts} {offered}");
    for label in [
        format!(">{} requests/s</text>", sig3(offered)),
        format!(">{} attempts/s</text>", sig3(attempts)),
    ] {
        assert!(svg.contains(&label), "{label} in {svg}");
    }
    assert!(svg.contains("timeouts come back as retries"), "{svg}");
    assert!(
        svg.contains("Rates: means over the highlighted stretch"),
        "{svg}"
    );
    assert!(svg.contains(HOT), "{svg}");
    // The picture the library draws is the file, byte for byte.
    assert_eq!(
        svg.as_bytes(),
        brink::export::structure_svg(&structure(&sc, &result))
    );

    let healthy = base.join("variants/no-retries/structure.svg");
    let svg = std::fs::read_to_string(healthy).unwrap();
    assert!(svg.contains("No loop highlighted"), "{svg}");
    assert!(!svg.contains(HOT), "{svg}");
    assert!(!svg.contains("retries:"), "{svg}");
}

/// The drawn structure of a bundled run, as `brink run` writes it.
fn drawn(name: &str) -> String {
    let sc = bundled(name, None, &[]);
    let result = run(&sc, 0);
    String::from_utf8(brink::export::structure_svg(&structure(&sc, &result))).unwrap()
}

/// Slack: the cache-miss loop (misses load the database, whose timeouts refill nothing),
/// with the hit ratio before and during the fall, beside the boots' retries.
#[test]
fn slack_highlights_the_cache_miss_loop() {
    let svg = drawn("slack-2022-02-22");
    assert!(
        svg.contains("misses load <tspan font-style=\"italic\">vitess</tspan>, whose timeouts refill nothing: <tspan font-style=\"italic\">memcached</tspan> hits"),
        "{svg}"
    );
    assert!(svg.contains("timeouts come back as retries"), "{svg}");
    assert!(svg.contains("hit ratio 8"), "the fall's hit ratio: {svg}");
}

/// Timeout cascade: work nobody waits for at the bottom; GC death spiral: the pool's own
/// slowdown loop.
#[test]
fn wasted_work_and_a_pools_own_slowdown_are_loops_too() {
    let svg = drawn("timeout-cascade");
    assert!(
        svg.contains(
            "<tspan font-style=\"italic\">db</tspan> serves work nobody waits for any more"
        ),
        "{svg}"
    );
    let svg = drawn("gc-death-spiral");
    assert!(
        svg.contains("<tspan font-style=\"italic\">app</tspan> slows with its own load"),
        "{svg}"
    );
}
