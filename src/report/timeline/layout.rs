//! A timeline's layout decisions, each a small pure function: which classes share a
//! requests panel (values of one scale), whether a whole-number axis keeps whole ticks,
//! the latency unit, the room below zero, the order lines are drawn in, and the zoom
//! picture's title.

/// Groups of classes that share a requests panel, from each class's largest rate: a class
/// whose largest rate is under 1/[`SCALE_RATIO`] of its group's largest gets a panel of
/// its own (with the others of its scale), so its lines are not crushed into the bottom
/// of another's axis. Groups are listed largest first; each keeps the classes' order.
pub fn scale_groups(maxes: &[f64]) -> Vec<Vec<usize>> {
    let mut by_size: Vec<usize> = (0..maxes.len()).collect();
    let size = |i: usize| {
        if maxes[i].is_finite() {
            maxes[i].max(0.0)
        } else {
            0.0
        }
    };
    by_size.sort_by(|&a, &b| size(b).total_cmp(&size(a)).then(a.cmp(&b)));
    let mut groups: Vec<(f64, Vec<usize>)> = Vec::new();
    for i in by_size {
        match groups.last_mut() {
            Some((top, members)) if size(i) * SCALE_RATIO >= *top => members.push(i),
            _ => groups.push((size(i), vec![i])),
        }
    }
    groups
        .into_iter()
        .map(|(_, mut m)| {
            m.sort_unstable();
            m
        })
        .collect()
}

/// How much larger a class's rates may be than another's on one axis.
pub const SCALE_RATIO: f64 = 4.0;

/// Whether a whole-number panel (queue lengths, servers) keeps whole-number ticks: only
/// when its data reach [`WHOLE_TICKS_FROM`]; a time-average of 0.1 queued gets fractional
/// ticks (0, 0.02, 0.04, ...) rather than 0 and 1 alone.
pub fn whole_ticks(integer: bool, data_max: f64) -> bool {
    integer && data_max >= WHOLE_TICKS_FROM
}

/// The smallest top of a whole-number panel drawn with whole ticks.
pub const WHOLE_TICKS_FROM: f64 = 4.0;

/// The unit a latency panel reads in: milliseconds (values times 1,000) when every value
/// is below a second, else seconds.
pub fn latency_unit(max_s: f64) -> (f64, &'static str) {
    if max_s.is_finite() && max_s < 1.0 {
        (1000.0, "ms")
    } else {
        (1.0, "s")
    }
}

/// The bottom of a panel's y axis for a top of `top`: a little below zero, so that a line
/// at zero (goodput after a collapse) is drawn apart from the axis.
pub fn y_floor(top: f64) -> f64 {
    -top * 0.04
}

/// The order a panel's lines are drawn in: lines marked `on_top` (failed, rejected) after
/// the others, so that where failed equals offered ("everything fails") the failed line
/// shows; otherwise the panel's order.
pub fn draw_order(on_top: &[bool]) -> Vec<usize> {
    let (mut under, over): (Vec<usize>, Vec<usize>) = (0..on_top.len()).partition(|&i| !on_top[i]);
    under.extend(over);
    under
}

/// The title of a zoomed timeline: the run's title and the window it shows.
pub fn zoom_title(title: &str, from_s: f64, to_s: f64) -> String {
    format!(
        "{title}: zoom {} to {}",
        super::axis::fmt_time(from_s),
        super::axis::fmt_time(to_s)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// thread-pool-exhaustion: checkout at ~100 per s beside browse at ~800 gets its own
    /// panel; two classes of one scale share one; a class at 0 goes with the small ones.
    #[test]
    fn small_classes_get_their_own_panel() {
        assert_eq!(scale_groups(&[800.0, 100.0]), vec![vec![0], vec![1]]);
        assert_eq!(scale_groups(&[20.0, 800.0]), vec![vec![1], vec![0]]);
        assert_eq!(
            scale_groups(&[100.0, 60.0, 5.0, 3.0]),
            vec![vec![0, 1], vec![2, 3]]
        );
        assert_eq!(
            scale_groups(&[100.0, 100.0 / SCALE_RATIO]),
            vec![vec![0, 1]]
        );
        assert_eq!(
            scale_groups(&[100.0, 0.0, f64::NAN]),
            vec![vec![0], vec![1, 2]]
        );
        assert_eq!(scale_groups(&[]), Vec::<Vec<usize>>::new());
    }

    #[test]
    fn fractional_axes_get_fractional_ticks() {
        assert!(!whole_ticks(true, 0.12));
        assert!(!whole_ticks(true, 3.9));
        assert!(whole_ticks(true, 4.0));
        assert!(!whole_ticks(false, 2000.0));
    }

    #[test]
    fn latency_below_a_second_reads_in_ms() {
        assert_eq!(latency_unit(0.0005), (1000.0, "ms"));
        assert_eq!(latency_unit(0.999), (1000.0, "ms"));
        assert_eq!(latency_unit(1.0), (1.0, "s"));
        assert_eq!(latency_unit(f64::NAN), (1.0, "s"));
    }

    #[test]
    fn zero_sits_above_the_axis() {
        assert!(y_floor(800.0) < 0.0 && y_floor(800.0) > -800.0 * 0.1);
        assert_eq!(y_floor(0.0), 0.0);
    }

    #[test]
    fn failed_is_drawn_over_offered() {
        // goodput, offered, attempts, failed, then a second class's goodput.
        assert_eq!(
            draw_order(&[false, false, false, true, false]),
            vec![0, 1, 2, 4, 3]
        );
        assert_eq!(draw_order(&[false, false]), vec![0, 1]);
    }

    #[test]
    fn the_zoom_names_its_window() {
        assert_eq!(
            zoom_title("Slack", 600.0, 1500.0),
            "Slack: zoom 10:00 to 25:00"
        );
    }
}
