//! The gauge's pieces, measure, verdict and settling, on hand-made rows.

use super::*;
use crate::scenario::sweep::{Axis, AxisUnit, Method};
use crate::scenario::{Measure as M, Owner};

fn gauge(measure: Measure, health: Health, window_s: u64, end_s: u64) -> Gauge {
    let t = Tipping {
        axis: Axis {
            path: "class.r.rate".into(),
            unit: AxisUnit::Number,
            values: vec![1.0, 2.0],
            operating_point: 1.0,
            label: None,
            unit_name: None,
            range: (1.0, 2.0),
        },
        trigger: vec![],
        settle_ns: 0,
        measure,
        measure_name: String::new(),
        health,
        seeds: 1,
        seeds_default: false,
        duration_ns: None,
        window_start_ns: window_s * 1_000_000_000,
        trigger_end_ns: window_s * 1_000_000_000,
        recover_within_ns: None,
        shift_ns: 0,
        step_ns: 1_000_000_000,
        method: Method::Grid,
        tolerance: None,
    };
    let col = |owner, measure, name: &str| Column {
        owner,
        measure,
        name: name.into(),
    };
    let cols = [
        col(Owner::Time, M::Time, "time_s"),
        col(Owner::Class(0), M::Offered, "r.offered_per_s"),
        col(Owner::Class(0), M::Goodput, "r.goodput_per_s"),
        col(Owner::Class(0), M::LatencyP99, "r.latency_p99_s"),
    ];
    Gauge::new(&t, &cols, end_s * 1_000_000_000).unwrap()
}

/// Rows of 10 s: (time, offered, goodput, p99).
fn rows(xs: &[(f64, f64, f64)]) -> Vec<Vec<f64>> {
    xs.iter()
        .enumerate()
        .map(|(k, (o, g, p))| vec![10.0 * k as f64, *o, *g, *p])
        .collect()
}

const S: u64 = 1_000_000_000;

#[test]
fn the_ratio_is_capped_per_row_and_weighted_by_time_inside_the_window() {
    let g = gauge(
        Measure::GoodputRatio {
            class: "r".into(),
            block_ns: S,
        },
        Health::Above(0.8),
        10,
        40,
    );
    // Row 0 is before the window; row 2 drains a backlog (ratio 2, counted as 1).
    let r = rows(&[
        (10.0, 0.0, 0.0),
        (10.0, 5.0, 0.0),
        (10.0, 20.0, 0.0),
        (0.0, 0.0, 0.0),
    ]);
    let m = g.measure(&r, 40 * S).unwrap();
    assert!((m - (0.5 + 1.0 + 1.0) / 3.0).abs() < 1e-12, "{m}");
}

/// A collapsed run is settled once the failed part of its window is more than the
/// threshold allows, whatever the rest holds; a healthy one only once its healthy part
/// outweighs every possible rest.
#[test]
fn a_run_is_settled_exactly_when_no_rest_can_change_its_class() {
    let g = gauge(
        Measure::GoodputRatio {
            class: "r".into(),
            block_ns: S,
        },
        Health::Above(0.8),
        0,
        100,
    );
    let failed = |k: usize| rows(&vec![(10.0, 0.0, 0.0); k]);
    // 10 of 100 s at 0: the rest at 1 gives 0.9 > 0.8, not settled; 20 s: 0.8, settled.
    assert!(!g.settled(&failed(1), 10 * S));
    assert!(g.settled(&failed(2), 20 * S));
    let fine = |k: usize| rows(&vec![(10.0, 10.0, 0.0); k]);
    // Healthy for 80 s: the rest at 0 gives 0.8, not above; 90 s: settled.
    assert!(!g.settled(&fine(8), 80 * S));
    assert!(g.settled(&fine(9), 90 * S));
}

#[test]
fn an_unbounded_column_settles_only_on_the_side_its_values_cannot_undo() {
    let g = gauge(
        Measure::Column("r.latency_p99_s".into()),
        Health::Below(1.0),
        0,
        100,
    );
    // p99 of 5 s for 30 s: at best the rest is 0 and the mean 1.5: failed for sure.
    let slow = rows(&[(1.0, 1.0, 5.0); 3]);
    assert!(g.settled(&slow, 30 * S));
    // Fast so far: a slow rest could still fail it, until the run ends.
    let fast = rows(&[(1.0, 1.0, 0.1); 9]);
    assert!(!g.settled(&fast, 90 * S));
    assert!(g.settled(&rows(&[(1.0, 1.0, 0.1); 10]), 100 * S));
}

/// With `recover_within` 20 s over a 100 s run whose trigger ends at 10 s: a run
/// recovers when it is healthy from some time to the end for at least 20 s; it is
/// settled (stopped) only once a failed row ends after 80 s, when no rest can give it
/// 20 healthy seconds to the end.
#[test]
fn a_triggered_run_recovers_when_healthy_to_the_end_and_stops_only_when_it_cannot() {
    let mut g = gauge(
        Measure::GoodputRatio {
            class: "r".into(),
            block_ns: S,
        },
        Health::Above(0.8),
        10,
        100,
    );
    g.recovery = Some((10 * S, 20 * S));
    let (bad, good) = ((10.0, 0.0, 0.0), (10.0, 10.0, 0.0));
    // Failed until 50 s, then healthy: recovered 40 s after the trigger's end.
    let mut r = rows(&[bad; 5]);
    r.extend(rows(&[good; 5]).into_iter().map(|mut x| {
        x[0] += 50.0;
        x
    }));
    assert_eq!(g.trace(&r, 100 * S).recovered_s, Some(40.0));
    // Never settled before its end while it could still recover.
    assert!((1..=8).all(|k| !g.settled(&r[..k], 10 * k as u64 * S)));
    // Failed to 80 s, then healthy: 20 s to the end is enough.
    let mut late = rows(&[bad; 8]);
    late.extend(rows(&[good; 2]).into_iter().map(|mut x| {
        x[0] += 80.0;
        x
    }));
    assert_eq!(g.trace(&late, 100 * S).recovered_s, Some(70.0));
    assert!(!g.settled(&late[..8], 80 * S));
    // A failed row ending at 90 s leaves 10 s: it cannot recover, settled at once.
    let stuck = rows(&[bad; 9]);
    assert!(g.settled(&stuck, 90 * S));
    assert_eq!(g.trace(&stuck, 90 * S).recovered_s, None);
    // Healthy throughout: recovered at the trigger's end.
    assert_eq!(g.trace(&rows(&[good; 10]), 100 * S).recovered_s, Some(0.0));
    // A relapse at the end undoes a recovery.
    let mut relapse = r.clone();
    relapse[9][2] = 0.0;
    assert_eq!(g.trace(&relapse, 100 * S).recovered_s, None);
    // Without `recover_within`, no recovery time.
    g.recovery = None;
    assert_eq!(g.trace(&r, 100 * S).recovered_s, None);
}

/// A class's goodput ratio over rows shorter than its block (3 s of 1 s rows): what
/// one row offers the next answers, so each block's value is its ratio of sums (1
/// here), where a mean of capped per-row ratios reads 2/3 (issue 21).
#[test]
fn a_goodput_ratio_over_short_rows_is_a_ratio_of_sums_over_blocks() {
    let mut g = gauge(
        Measure::GoodputRatio {
            class: "r".into(),
            block_ns: 3 * S,
        },
        Health::Above(0.8),
        0,
        6,
    );
    let secs = |xs: &[(f64, f64)]| -> Vec<Vec<f64>> {
        xs.iter()
            .enumerate()
            .map(|(k, (o, gd))| vec![k as f64, *o, *gd, 0.0])
            .collect()
    };
    let r = secs(&[(10.0, 0.0), (0.0, 10.0), (10.0, 10.0)].repeat(2));
    assert_eq!(g.measure(&r, 6 * S), Some(1.0));
    // The same rows measured row by row (a block of one row): the old reading.
    g.kind = Kind::Ratio {
        good: 2,
        offered: 1,
        block: S,
    };
    let per_row = g.measure(&r, 6 * S).unwrap();
    assert!((per_row - 2.0 / 3.0).abs() < 1e-12, "{per_row}");
    g.kind = Kind::Ratio {
        good: 2,
        offered: 1,
        block: 3 * S,
    };
    // An open block is rest, not a failure: two failed rows of a 6 s window do not
    // settle the run (the third row could answer them); a closed failed block does
    // (at best 0.5 of the window).
    let failed = secs(&[(10.0, 0.0); 3]);
    assert!(!g.settled(&failed[..2], 2 * S));
    assert!(g.settled(&failed, 3 * S));
    // A trace counts in blocks too: stuck from the failed block's start.
    let mut late = secs(&[(10.0, 10.0); 3]);
    late.extend(secs(&[(10.0, 0.0); 3]).into_iter().map(|mut x| {
        x[0] += 3.0;
        x
    }));
    assert_eq!(g.trace(&late, 6 * S).stuck_s, Some(3.0));
}

#[test]
fn the_trace_finds_the_failed_stretch_that_lasts_to_the_end() {
    let g = gauge(
        Measure::GoodputRatio {
            class: "r".into(),
            block_ns: S,
        },
        Health::Above(0.8),
        0,
        50,
    );
    let r = rows(&[
        (10.0, 10.0, 0.0),
        (10.0, 0.0, 0.0),
        (10.0, 10.0, 0.0),
        (10.0, 1.0, 0.0),
        (10.0, 0.0, 0.0),
    ]);
    let t = g.trace(&r, 50 * S);
    assert_eq!((t.ran_s, t.stuck_s), (50.0, Some(30.0)));
    assert_eq!(g.trace(&r[..3], 30 * S).stuck_s, None);
    assert_eq!(g.trace(&r[1..2], 20 * S).stuck_s, Some(10.0));
}
