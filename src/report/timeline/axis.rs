//! A timeline's axes: the top and ticks of a panel's y axis, tick labels, the time axis's
//! unit and format, and where an event is shaded on it.

/// The top of a panel's y axis: the fixed top if any, else 10% above the data (at least
/// 1), rounded up to a whole number for whole-number panels.
pub fn y_top(panel_max: Option<f64>, data_max: f64, integer: bool) -> f64 {
    let top = panel_max.unwrap_or(if data_max > 0.0 { data_max * 1.1 } else { 1.0 });
    if integer { top.ceil().max(1.0) } else { top }
}

/// How many y labels to ask plotters for: on a whole-number axis from 0 to `top`, at most
/// `top + 1`, so that its steps (1, 2 or 5 times a power of ten) are never below 1 and the
/// ticks fall on whole numbers.
pub fn y_labels(top: f64, integer: bool) -> usize {
    if integer {
        (top as usize + 1).clamp(2, 8)
    } else {
        8
    }
}

pub use crate::engine::number::{sig3, tick_label};

/// Where an event is shaded on a time axis from `t0` to `t1` (seconds): from its start to
/// its end, at least 1/400 of the axis's length wide (so that a short event shows), and
/// clipped to the axis; none if it lies outside.
pub fn shade(start: f64, end: f64, t0: f64, t1: f64) -> Option<(f64, f64)> {
    let min_width = (t1 - t0) / 400.0;
    let (a, b) = (start.max(t0), end.max(start + min_width).min(t1));
    (a < b).then_some((a, b))
}

/// The unit the time axis reads best in for a run of `span_s` seconds.
pub fn time_unit(span_s: f64) -> (f64, &'static str) {
    if span_s >= 3.0 * 3600.0 {
        (3600.0, "h")
    } else if span_s >= 180.0 {
        (60.0, "min")
    } else {
        (1.0, "s")
    }
}

/// Formats a time in seconds as h:mm:ss or m:ss.
pub fn fmt_time(s: f64) -> String {
    let t = s.round() as u64;
    if t >= 3600 {
        format!("{}:{:02}:{:02}", t / 3600, (t / 60) % 60, t % 60)
    } else {
        format!("{}:{:02}", t / 60, t % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::coord::ranged1d::{KeyPointHint, Ranged};
    use plotters::coord::types::RangedCoordf64;

    /// Ably's zoom (21:00 to 22:10) of an event from 21:22:00 to 21:22:20: shaded to
    /// 21:22:20. The minimum width used to come from the axis's end time (79,800 s / 400
    /// = 199.5 s), shading to 21:25:20; it comes from the axis's length (10.5 s).
    #[test]
    fn zoom_shading_ends_with_the_event() {
        let (t0, t1) = (21.0 * 3600.0, 22.0 * 3600.0 + 600.0);
        let (start, end) = (
            21.0 * 3600.0 + 22.0 * 60.0,
            21.0 * 3600.0 + 22.0 * 60.0 + 20.0,
        );
        assert_eq!(shade(start, end, t0, t1), Some((start, end)));
        // An event of no length still shows: 1/400 of the axis.
        let (a, b) = shade(start, start, t0, t1).unwrap();
        assert_eq!(a, start);
        assert!((b - a - 4200.0 / 400.0).abs() < 1e-9);
        // Clipped to the axis, and none outside it.
        assert_eq!(shade(t0 - 50.0, t0 + 10.0, t0, t1), Some((t0, t0 + 10.0)));
        assert_eq!(shade(t1 + 1.0, t1 + 5.0, t0, t1), None);
    }

    /// Whole-number panels: the top is whole and every tick plotters places is a whole
    /// number, for tops from 1 to 2,000 (data from 0.3 up).
    #[test]
    fn integer_axes_tick_whole_numbers() {
        for k in 1..2000 {
            let data_max = k as f64 * 0.3 + 0.01;
            let top = y_top(None, data_max, true);
            assert_eq!(top, top.round());
            assert!(top >= data_max);
            let ticks = RangedCoordf64::from(super::super::layout::y_floor(top)..top)
                .key_points(y_labels(top, true));
            assert!(ticks.len() >= 2, "top {top}: {ticks:?}");
            for t in &ticks {
                assert_eq!(*t, t.round(), "top {top}: tick {t}");
            }
        }
        // Other panels keep their fractional ticks.
        assert_eq!(y_top(None, 0.5, false), 0.5 * 1.1);
        assert_eq!(y_top(Some(1.05), 0.5, false), 1.05);
        assert!(8.max_num_points() >= 8);
    }

    #[test]
    fn tick_labels_drop_a_needless_decimal_point() {
        assert_eq!(tick_label(350.0), "350");
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(tick_label(0.25), "0.25");
        assert_eq!(tick_label(0.1 + 0.2), "0.3");
        assert_eq!(tick_label(1e-3), "0.001");
        assert_eq!(sig3(2.385_73), "2.39");
        assert_eq!(sig3(1.745_541), "1.75");
        assert_eq!(sig3(8.1), "8.1");
        assert_eq!(sig3(10.0), "10");
    }
}
