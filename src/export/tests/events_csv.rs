//! `events.csv`: the markers of a run, in time order.

use super::*;

#[test]
fn events_csv_golden() {
    use crate::model::metrics::{Marker, MarkerKind};
    let m = |kind, name: &str, label: &str, start_s, end_s| Marker {
        kind,
        name: name.into(),
        label: label.into(),
        start_s,
        end_s,
    };
    let markers = [
        m(MarkerKind::Event, "spike", "spike, 2x", 300.0, Some(360.5)),
        m(MarkerKind::Event, "spike", "spike, 2x", 100.0, Some(160.5)),
        m(
            MarkerKind::Intervention,
            "at",
            "rate limit \"on\"",
            100.0,
            None,
        ),
    ];
    let bytes = events_csv(&markers);
    golden("events.csv", &bytes);
    // Time order; a tie keeps the run's order (the event before the intervention).
    let text = String::from_utf8(bytes).unwrap();
    let starts: Vec<&str> = text.lines().skip(1).map(|l| &l[..5]).collect();
    assert_eq!(starts, ["event", "inter", "event"]);
}
