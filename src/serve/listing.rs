//! The session's markers as the live page lists them: the file's events and interventions
//! and the live actions, each once (an `[[at]]` entry that fires an event is that event),
//! within the run and at most [`MAX_MARKERS`].

use super::text::Action;
use crate::engine::time::ns_to_secs;
use crate::model::metrics::Marker;
use crate::scenario::Scenario;
use serde::Serialize;
use std::sync::Arc;

/// A marker of the session's timeline as the page lists it.
#[derive(Debug, Clone, Serialize)]
pub struct LiveMarker {
    #[serde(flatten)]
    pub marker: Marker,
    /// True for an action taken in this session, false for the file's own.
    pub live: bool,
    /// For an event started by an `[[at]]` entry (`fire`), that entry's label: the entry
    /// is this marker, not another one.
    pub by: Option<String>,
}

/// The most markers the page is sent (a repeating event may have many).
pub const MAX_MARKERS: usize = 500;

/// The markers of `sc` within its run, the first [`MAX_MARKERS`] in time order (what the
/// narrative reads).
pub(super) fn markers_of(sc: &Scenario) -> Arc<Vec<Marker>> {
    let mut m = crate::model::markers(sc);
    within(sc, &mut m, |m| m);
    Arc::new(m)
}

/// The markers of `sc` as the page lists them: an `[[at]]` entry that fires an event is
/// that event's occurrence (once); an entry that is one of `actions` is live.
pub(super) fn listed_markers(sc: &Scenario, actions: &[Action]) -> Arc<Vec<LiveMarker>> {
    let file = |marker| LiveMarker {
        marker,
        live: false,
        by: None,
    };
    let mut m: Vec<LiveMarker> = crate::model::scheduled_markers(sc)
        .into_iter()
        .map(file)
        .collect();
    for iv in &sc.interventions {
        let live = actions
            .iter()
            .any(|a| a.time_ms.saturating_mul(1_000_000) == iv.time && a.label == iv.label);
        m.push(match crate::model::fired_marker(sc, iv) {
            Some(marker) => LiveMarker {
                marker,
                live,
                by: Some(iv.label.clone()),
            },
            None => LiveMarker {
                live,
                ..file(crate::model::intervention_marker(iv))
            },
        });
    }
    within(sc, &mut m, |m| &m.marker);
    Arc::new(m)
}

/// Keeps the first [`MAX_MARKERS`] of `m` within `sc`'s run, in time order.
fn within<T>(sc: &Scenario, m: &mut Vec<T>, marker: impl Fn(&T) -> &Marker) {
    // What happens after the end does not (the file may say more than a shortened run).
    let end = ns_to_secs(sc.duration);
    m.retain(|m| marker(m).start_s <= end);
    m.sort_by(|a, b| marker(a).start_s.total_cmp(&marker(b).start_s));
    m.truncate(MAX_MARKERS);
}
