//! The tipping picture's layout decisions, each a small pure function: the measure's
//! label in words, whether the collapse probability shares the measure's y scale (and the
//! right-hand range whose ticks line up when it does not), which regions are named and
//! where, and at which height a point's label stays clear of the curves.

use crate::report::sweep_result::Region;

/// A measure's key in words: `goodput_ratio.request` is "goodput ratio of request".
pub fn measure_words(key: &str) -> String {
    match key.split_once('.') {
        Some((m, of)) => format!("{} of {of}", m.replace('_', " ")),
        None => key.replace('_', " "),
    }
}

/// A region's name in words (`slow recovery`).
pub fn region_words(r: Region) -> String {
    r.name().replace('_', " ")
}

/// Whether a y range `y0..y1` is a share's (about 0 to 1), so that the collapse
/// probability (0 to 1) is drawn on the same scale, with one axis.
pub fn shares_scale(y0: f64, y1: f64) -> bool {
    (-0.25..=0.0).contains(&y0) && (1.0..=1.5).contains(&y1)
}

/// The right-hand axis's range for the collapse probability beside a measure drawn over
/// `y0..y1` (not a share): the primary range divided by the power of ten `T` at or below
/// `y1`, so that probability 1 sits at `T` and, plotters' ticks being chosen alike on
/// ranges a power of ten apart, every right-hand tick falls on a left-hand gridline.
pub fn probability_range(y0: f64, y1: f64) -> (f64, f64) {
    let t = 10f64.powf(y1.max(1e-12).log10().floor());
    (y0 / t, y1 / t)
}

/// The names of a panel's regions and their left pixels. `states` are the cells' regions
/// in order and `spans` their pixel extents; `width` is the width of a region's name.
/// Runs of one region are named once, centred over the run. A single cell between two
/// runs of one region (a noisy probe) does not split that region's name; a run narrower
/// than its name is not named (the legend names its colour); a region that still has
/// several runs is named over its widest only. So names never overlap or repeat.
pub fn region_labels(
    states: &[Region],
    spans: &[(i32, i32)],
    width: impl Fn(Region) -> i32,
) -> Vec<(Region, i32)> {
    let n = states.len().min(spans.len());
    // Runs of equal cells: (region, first, last).
    let mut runs: Vec<(Region, usize, usize)> = Vec::new();
    for (i, &s) in states[..n].iter().enumerate() {
        match runs.last_mut() {
            Some(r) if r.0 == s => r.2 = i,
            _ => runs.push((s, i, i)),
        }
    }
    // A one-cell run between two runs of one region joins them.
    let mut k = 1;
    while k + 1 < runs.len() {
        if runs[k].1 == runs[k].2 && runs[k - 1].0 == runs[k + 1].0 {
            let end = runs[k + 1].2;
            runs[k - 1].2 = end;
            runs.drain(k..=k + 1);
        } else {
            k += 1;
        }
    }
    let px = |r: &(Region, usize, usize)| (spans[r.1].0, spans[r.2].1);
    let mut out: Vec<(Region, i32)> = Vec::new();
    for r in &runs {
        let (a, b) = px(r);
        let w = width(r.0);
        let widest = runs
            .iter()
            .filter(|o| o.0 == r.0)
            .map(|o| px(o).1 - px(o).0)
            .max()
            .unwrap_or(0);
        if b - a >= w + 4 && b - a == widest && !out.iter().any(|o| o.0 == r.0) {
            out.push((r.0, (a + b) / 2 - w / 2));
        }
    }
    out
}

/// The top pixel of a label box `h` pixels high over pixels `left..right` that stays
/// clear of `curves` (polylines in pixels) and of the boxes already placed (`taken`:
/// left, right, top): the first of `candidates` (tops, in order of preference) with at
/// least 3 pixels of room, else the one with the most room, where overlapping another
/// label counts far worse than crossing a curve (a label can sit on a line on its pale
/// box, never on another label: "operating 1750" hid under "tipping 1800" when every
/// height crossed a curve).
pub fn clear_top(
    candidates: &[i32],
    (left, right, h): (i32, i32, i32),
    curves: &[Vec<(i32, i32)>],
    taken: &[(i32, i32, i32)],
) -> i32 {
    let room = |top: i32| {
        let (lo, hi) = (top, top + h);
        let mut best = i32::MAX;
        for c in curves {
            for y in ys_within(c, left, right) {
                let d = if y < lo {
                    lo - y
                } else if y > hi {
                    y - hi
                } else {
                    -1
                };
                best = best.min(d);
            }
        }
        for &(l, r, t) in taken {
            if l < right && left < r && t < hi && lo < t + h {
                best = best.min(-1000);
            }
        }
        best
    };
    candidates
        .iter()
        .copied()
        .find(|&t| room(t) >= 3)
        .or_else(|| candidates.iter().copied().max_by_key(|&t| room(t)))
        .unwrap_or(0)
}

/// The heights of a polyline over pixels `left..right`: at both ends (interpolated) and
/// at every vertex between.
fn ys_within(line: &[(i32, i32)], left: i32, right: i32) -> Vec<i32> {
    let mut ys = Vec::new();
    for w in line.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        let (a, b) = (x0.min(x1), x0.max(x1));
        if b < left || a > right {
            continue;
        }
        let at = |x: i32| {
            if x1 == x0 {
                y0
            } else {
                y0 + ((y1 - y0) as f64 * (x - x0) as f64 / (x1 - x0) as f64).round() as i32
            }
        };
        // A vertical step covers every height between its ends.
        if x0 == x1 {
            ys.extend([y0.min(y1), y0.max(y1)]);
            ys.extend((y0.min(y1)..=y0.max(y1)).step_by(2));
            continue;
        }
        for x in [left.max(a), right.min(b)] {
            ys.push(at(x));
        }
        for &(x, y) in w {
            if x >= left && x <= right {
                ys.push(y);
            }
        }
        // A steep segment: the heights it passes through within the span.
        let (ya, yb) = (at(left.max(a)), at(right.min(b)));
        ys.extend((ya.min(yb)..=ya.max(yb)).step_by(2));
    }
    ys
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::coord::ranged1d::Ranged;
    use plotters::coord::types::RangedCoordf64;

    #[test]
    fn measures_read_in_words() {
        assert_eq!(
            measure_words("goodput_ratio.request"),
            "goodput ratio of request"
        );
        assert_eq!(measure_words("latency_p99"), "latency p99");
        assert_eq!(region_words(Region::SlowRecovery), "slow recovery");
    }

    /// One y scale for shares; otherwise a right-hand axis whose every tick sits on a
    /// left-hand tick (the 0.8 healthy line sat at 0.7 on the right).
    #[test]
    fn probability_ticks_line_up_with_the_measure() {
        assert!(shares_scale(-0.04, 1.12));
        assert!(!shares_scale(0.0, 350.0));
        for top in [1.7, 3.0, 12.0, 37.5, 118.0, 350.0, 999.0, 4200.0] {
            let y0 = -top * 0.04;
            let (s0, s1) = probability_range(y0, top);
            assert!(s0 <= 0.0 && s1 >= 1.0, "{top}");
            let t = top / s1;
            let left = RangedCoordf64::from(y0..top).key_points(8);
            for p in RangedCoordf64::from(s0..s1).key_points(8) {
                assert!(
                    left.iter().any(|y| (y - p * t).abs() <= 1e-9 * top),
                    "top {top}: right tick {p} at {} not in {left:?}",
                    p * t
                );
            }
        }
    }

    /// retry-storm's base: overloaded, one noisy metastable probe, overloaded: named once;
    /// a region narrower than its name unnamed; a repeated region named over its widest run.
    #[test]
    fn region_names_never_overlap_or_repeat() {
        use Region::*;
        let spans: Vec<(i32, i32)> = (0..8).map(|i| (i * 50, i * 50 + 50)).collect();
        let w = |_: Region| 80;
        let states = [
            Stable, Stable, Metastable, Metastable, Overloaded, Overloaded, Metastable, Overloaded,
            Overloaded, Overloaded,
        ];
        let spans10: Vec<(i32, i32)> = (0..10).map(|i| (i * 50, i * 50 + 50)).collect();
        let names = region_labels(&states, &spans10, w);
        assert_eq!(
            names,
            vec![(Stable, 10), (Metastable, 110), (Overloaded, 310)]
        );
        // A one-cell region narrower than its name: not named.
        let names = region_labels(
            &[Stable, Stable, Spontaneous, Overloaded, Overloaded],
            &spans,
            w,
        );
        assert_eq!(names, vec![(Stable, 10), (Overloaded, 160)]);
        // Stable twice (not around one probe): only the widest run is named.
        let s = [
            Stable, Stable, Overloaded, Overloaded, Stable, Stable, Stable, Overloaded,
        ];
        let names = region_labels(&s, &spans, w);
        assert_eq!(names, vec![(Overloaded, 110), (Stable, 235)]);
        let mut lefts: Vec<i32> = names.iter().map(|n| n.1).collect();
        lefts.sort_unstable();
        assert!(lefts.windows(2).all(|p| p[1] - p[0] >= 80));
    }

    /// A point's label leaves its curve alone: the first height whose box the curve does
    /// not cross, and never over a label already placed.
    #[test]
    fn point_labels_stay_off_the_curves() {
        // A flat curve at y = 100 and a steep drop at x = 200 from 100 to 300.
        let curve = vec![(0, 100), (200, 100), (210, 300), (400, 300)];
        // The box 0..100 wide, 16 high: at top 92 it would cover the curve; 120 is clear.
        assert_eq!(
            clear_top(
                &[92, 120, 40],
                (0, 100, 16),
                std::slice::from_ref(&curve),
                &[]
            ),
            120
        );
        // Over the drop every height between 100 and 300 is taken: 40 (above) is chosen.
        assert_eq!(
            clear_top(
                &[150, 250, 40],
                (195, 260, 16),
                std::slice::from_ref(&curve),
                &[]
            ),
            40
        );
        // A label already at 120: the next clear candidate.
        assert_eq!(
            clear_top(
                &[120, 140],
                (0, 100, 16),
                std::slice::from_ref(&curve),
                &[(50, 150, 120)]
            ),
            140
        );
        // Every height crosses a curve (a steep band of lines): the label still avoids
        // the one already placed (cache-stampede's "operating" hid under "tipping").
        let wall = vec![(0, 0), (50, 1000), (100, 0)];
        assert_eq!(
            clear_top(&[200, 300], (0, 100, 16), &[wall], &[(0, 100, 300)]),
            200
        );
    }
}
