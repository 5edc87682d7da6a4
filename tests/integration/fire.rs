//! `[[at]] fire = "NAME"` (issue 13): an intervention that starts a scenario event now does
//! what the event's own schedule does at that time, and a live session's "fire" button is
//! saved as such an entry.

use crate::common::*;

/// retry-storm's shape with the slowdown at `at`, and extra text appended.
fn storm(at: &str, extra: &str) -> String {
    format!(
        r#"duration = "10m"
seed = 3
[metrics]
step = "5s"
[class.request]
rate = 70
timeout = "1s"
retry = {{ max_attempts = 4, backoff = "none" }}
steps = [{{ query = "server" }}]
[pool.server]
workers = 10
service = {{ law = "exp", mean = "100ms" }}
queue_limit = 2000
[event.slowdown]
kind = "slowdown"
pool = "server"
at = "{at}"
for = "20s"
factor = 4
{extra}"#
    )
}

#[test]
fn firing_an_event_equals_its_schedule_at_that_time() {
    // The event scheduled at 2m, against the same event scheduled past the run's end and
    // fired at 2m by an intervention: the same streams, the same disturbance at the same
    // time, so the same rows, value for value.
    let scheduled = run(&scenario(&storm("2m", "")), 0);
    let fired = run(
        &scenario(&storm(
            "1h",
            "[[at]]\ntime = \"2m\"\nlabel = \"fire the slowdown\"\nfire = \"slowdown\"\n",
        )),
        0,
    );
    // Compared bit for bit: an empty window's p99 is NaN.
    let bits = |r: &brink::model::RunResult| -> Vec<Vec<u64>> {
        let rows = &r.series.rows;
        rows.iter()
            .map(|row| row.iter().map(|v| v.to_bits()).collect())
            .collect()
    };
    assert_eq!(bits(&scheduled), bits(&fired));
    // Not vacuous: the slowdown tipped the service (goodput far below 70/s at the end).
    let after = mean_between(&fired, "request.goodput_per_s", 420.0, 600.0);
    assert!(
        after < 0.05 * 70.0,
        "goodput after the fired slowdown {after}"
    );
}

#[test]
fn a_fired_event_is_drawn_as_an_event_on_the_timeline() {
    let sc = scenario(&storm("1h", "[[at]]\ntime = \"2m\"\nfire = \"slowdown\"\n"));
    let markers = brink::model::markers(&sc);
    let event = markers
        .iter()
        .find(|m| matches!(m.kind, brink::model::metrics::MarkerKind::Event))
        .expect("an event marker");
    assert_eq!((event.start_s, event.end_s), (120.0, Some(140.0)));
}
