//! `events.csv`: every trigger occurrence and intervention of a run, in time order, with
//! its label: what the timeline marks, as data.
//!
//! Columns: `kind` (`event` or `intervention`), `name` (the event's NAME, `at` for an
//! `[[at]]` entry), `label`, `start_s`, `end_s` (empty for an intervention).

use super::csv::{num, text};
use crate::model::metrics::{Marker, MarkerKind};

/// The bytes of `events.csv`.
pub fn events_csv(markers: &[Marker]) -> Vec<u8> {
    let mut sorted: Vec<&Marker> = markers.iter().collect();
    // Stable: simultaneous entries keep the run's order (events, then interventions).
    sorted.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    let mut out = String::from("kind,name,label,start_s,end_s\n");
    for m in sorted {
        let kind = match m.kind {
            MarkerKind::Event => "event",
            MarkerKind::Intervention => "intervention",
        };
        out.push_str(&format!(
            "{kind},{},{},{},{}\n",
            text(&m.name),
            text(&m.label),
            num(m.start_s),
            m.end_s.map(num).unwrap_or_default()
        ));
    }
    out.into_bytes()
}
