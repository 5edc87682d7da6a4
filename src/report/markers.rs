//! Timeline markers as drawn: however many occurrences a repeating trigger has, the
//! picture shows a bounded number of bands ([`coalesce`]), in time order; numbers of
//! markers that fall close together are stacked so that each stays readable
//! ([`label_rows`]).

use crate::model::metrics::{Marker, MarkerKind};

/// The most markers a timeline draws: the picture's size (a legend line per two) and its
/// drawing time stay bounded, however many occurrences a repeating trigger has.
pub const MAX_MARKERS: usize = 40;

/// The markers as drawn on a plot of `span_s` seconds, in time order (simultaneous ones
/// in the run's order: events, then interventions): markers of one kind and label closer
/// than a pixel apart merge into one band labelled with their number ("outage (x250)");
/// while more than [`MAX_MARKERS`] remain, the gap that merges doubles. Markers apart by
/// more than a pixel, and few, are drawn as they are.
pub fn coalesce(markers: &[Marker], span_s: f64) -> Vec<Marker> {
    let span = if span_s.is_finite() && span_s > 0.0 {
        span_s
    } else {
        1.0
    };
    // A run lists each trigger's scheduled occurrences before the occurrences `[[at]]`
    // entries fire; merging in that order took a fired occurrence at 2:00 into the band
    // of a scheduled one at 5:00 (a live session's timeline).
    let mut sorted = markers.to_vec();
    sorted.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    let mut gap = span / 1400.0;
    loop {
        let merged = merge_closer_than(&sorted, gap);
        if merged.len() <= MAX_MARKERS || gap > span {
            return merged;
        }
        gap *= 2.0;
    }
}

/// Merges each marker into the band of the last one of its kind and label if it starts
/// less than `gap` seconds after that band ends; keeps the order of the first of each band.
fn merge_closer_than(markers: &[Marker], gap: f64) -> Vec<Marker> {
    let mut out: Vec<(Marker, usize)> = Vec::new();
    let mut open: std::collections::HashMap<(bool, &str), usize> = Default::default();
    for m in markers {
        let key = (m.kind == MarkerKind::Event, m.label.as_str());
        if let Some(&b) = open.get(&key) {
            let (band, n) = &mut out[b];
            let end = band.end_s.unwrap_or(band.start_s);
            if m.start_s - end < gap {
                band.end_s = match (band.end_s, m.end_s) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
                *n += 1;
                continue;
            }
        }
        open.insert(key, out.len());
        out.push((m.clone(), 1));
    }
    out.into_iter()
        .map(|(mut m, n)| {
            if n > 1 {
                m.label = format!("{} (x{n})", m.label);
            }
            m
        })
        .collect()
}

/// The row (0 the top one) of each marker's number on a plot, so that numbers which
/// would overprint are stacked: `spans` are the numbers' horizontal extents in pixels
/// (start, end), in drawing order. Each number takes the top row whose last number ends
/// left of it (with a pixel's space), or a new row below.
pub fn label_rows(spans: &[(i32, i32)]) -> Vec<usize> {
    let mut row_ends: Vec<i32> = Vec::new();
    spans
        .iter()
        .map(|&(start, end)| {
            let row = row_ends
                .iter()
                .position(|&e| e < start)
                .unwrap_or(row_ends.len());
            if row == row_ends.len() {
                row_ends.push(end);
            } else {
                row_ends[row] = end;
            }
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outage(start_s: f64) -> Marker {
        Marker {
            kind: MarkerKind::Event,
            name: "outage".into(),
            label: "outage".into(),
            start_s,
            end_s: Some(start_s + 0.001),
        }
    }

    #[test]
    fn markers_closer_than_a_pixel_merge_into_one_band_per_label() {
        // An outage every 20 ms for an hour: 180,000 markers become one band.
        let many: Vec<Marker> = (0..180_000).map(|i| outage(i as f64 * 0.02)).collect();
        let drawn = coalesce(&many, 3600.0);
        assert_eq!(drawn.len(), 1);
        assert_eq!(drawn[0].label, "outage (x180000)");
        assert_eq!(drawn[0].start_s, 0.0);
        assert!((drawn[0].end_s.unwrap() - 3599.981).abs() < 1e-9);
    }

    #[test]
    fn markers_far_apart_are_drawn_as_they_are_and_many_are_bounded() {
        let few: Vec<Marker> = (0..10).map(|i| outage(i as f64 * 60.0)).collect();
        assert_eq!(coalesce(&few, 3600.0), few);
        // Every 100 s for a day: more than a pixel (62 s) apart, but too many to draw.
        let many: Vec<Marker> = (0..864).map(|i| outage(i as f64 * 100.0)).collect();
        let drawn = coalesce(&many, 86_400.0);
        assert!(drawn.len() <= MAX_MARKERS, "{}", drawn.len());
        assert_eq!(drawn[0].start_s, 0.0);
        assert_eq!(drawn.last().unwrap().end_s, many.last().unwrap().end_s);
    }

    /// A saved live session: the slowdown fired by an `[[at]]` entry at 2:00 and its own
    /// at 5:00, listed as a run lists them (scheduled first). Both are drawn, in time
    /// order, each with its own interval; they used to merge into one band "(x2)" drawn
    /// from 5:00 to 5:20.
    #[test]
    fn a_fired_occurrence_before_a_scheduled_one_keeps_its_own_band() {
        let slowdown = |start_s: f64| Marker {
            end_s: Some(start_s + 20.0),
            ..outage(start_s)
        };
        let fire = Marker {
            kind: MarkerKind::Intervention,
            name: "at".into(),
            label: "live: fire slowdown".into(),
            start_s: 120.0,
            end_s: None,
        };
        let run = [slowdown(300.0), slowdown(120.0), fire.clone()];
        let drawn = coalesce(&run, 600.0);
        assert_eq!(drawn, vec![slowdown(120.0), fire, slowdown(300.0)]);
    }

    /// Numbers at one place stack; a number clear of the last one in the top row goes
    /// back to the top row.
    #[test]
    fn overlapping_marker_numbers_are_stacked() {
        assert_eq!(
            label_rows(&[(100, 110), (100, 110), (103, 113), (111, 121), (300, 310)]),
            vec![0, 1, 2, 0, 0]
        );
        assert_eq!(label_rows(&[]), Vec::<usize>::new());
    }
}
