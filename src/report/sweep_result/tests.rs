//! Unit tests of the sweep report.

use super::*;
use crate::stats::plan::tests::plan;
use crate::stats::plan::{RunPoint, Trace};

/// Runs of [`plan`]`(3)`: value 1 all healthy; value 2 triggered fails for 2 of 3;
/// value 3 the baseline fails for 2 of 3.
fn three_values() -> Vec<RunPoint> {
    let m = [
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        [1.0, 0.0, 1.0, 0.0, 1.0, 1.0],
        [0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
    ];
    m.iter()
        .flatten()
        .enumerate()
        .map(|(i, x)| RunPoint {
            index: i as u64,
            measure: Some(*x),
            trace: None,
        })
        .collect()
}

#[test]
fn regions_and_points_follow_the_majority_of_seeds() {
    let p = plan(3);
    let runs = three_values();
    let r = report(&p, &p.locate(&runs));
    let v = &r.variants[0];
    let states: Vec<Region> = v.points.iter().map(|c| c.state).collect();
    assert_eq!(
        states,
        [Region::Stable, Region::Metastable, Region::Overloaded]
    );
    // The collapse probability goes 0 -> 2/3 from 1 to 2, the baseline's failed share
    // 0 -> 2/3 from 2 to 3: each point is the fit's crossing, inside its bracket and
    // its confidence interval (the bracket's interpolation would say 1.75 and 2.75).
    let tip = v.tipping_point.unwrap();
    let [a, b] = v.tipping_ci95.unwrap();
    assert!(
        1.0 < tip && tip < 2.0 && a <= tip && tip <= b,
        "{tip} {a} {b}"
    );
    let over = v.overload_point.unwrap();
    assert!(2.0 < over && over < 3.0, "{over}");
    assert_eq!(v.tipping_interval, Some([1.0, 2.0]));
    assert_eq!(v.overload_interval, Some([2.0, 3.0]));
    assert_eq!(v.headroom, Some(tip / 2.0));
    assert_eq!(v.headroom_ci95, Some([a / 2.0, b / 2.0]));
    // A grid has no tolerance to meet.
    assert_eq!(v.tolerance_met, None);
    assert!((v.points[1].collapse_probability - 2.0 / 3.0).abs() < 1e-12);
    // The grid brackets the tipping point between 1 (did not tip) and 2.
    assert_eq!(v.headroom_interval, Some([0.5, 1.0]));
    assert_eq!((v.headroom_above, v.headroom_at_most), (None, None));
    assert_eq!(
        v.headroom_cell(),
        format!(
            "{} (95% CI {}-{})",
            sig3(Some(tip / 2.0)),
            sig3(Some(a / 2.0)),
            sig3(Some(b / 2.0))
        )
    );
    assert_eq!(v.headroom_lower_bound(), Some(a / 2.0));
    // The fitted curve crosses 0.5 inside the bracket.
    let fit = v.collapse_fit.unwrap();
    assert!(fit.midpoint > 1.0 && fit.midpoint < 2.0, "{fit:?}");
    // Three seeds cannot make 2 of 3 sure: no bound on either side.
    assert_eq!(v.tipping_bounds_95, [None, None]);
}

/// A failed baseline run that was healthy for at least `settle` before it got stuck is
/// a spontaneous collapse; one stuck from the start is overload. The rate is collapses
/// per healthy hour (healthy runs count whole, overloaded ones not at all).
#[test]
fn spontaneous_collapse_is_told_from_overload_by_the_trace() {
    let mut p = plan(3);
    p.settle_s = 600.0;
    let run = |value: f64, seed: u32, ok: bool, stuck: Option<f64>| Run {
        variant: 0,
        value: [value, 0.0],
        seed,
        branch: Branch::Baseline,
        measure: Some(if ok { 1.0 } else { 0.0 }),
        trace: Some(Trace {
            ran_s: 3600.0,
            stuck_s: stuck,
            recovered_s: None,
        }),
    };
    let trig = |r: Run| Run {
        branch: Branch::Triggered,
        ..r
    };
    let mut runs = Vec::new();
    // Value 1: two of three collapse after 30 min healthy; value 2: stuck at once.
    for (seed, ok, stuck) in [
        (0, false, Some(1800.0)),
        (1, false, Some(1800.0)),
        (2, true, None),
    ] {
        let r = run(1.0, seed, ok, stuck);
        runs.extend([r, trig(r)]);
    }
    for seed in 0..3 {
        let r = run(2.0, seed, false, Some(0.0));
        runs.extend([r, trig(r)]);
    }
    let r = report(&p, &runs);
    let v = &r.variants[0];
    let (a, b) = (&v.points[0], &v.points[1]);
    assert_eq!(
        (a.state, b.state),
        (Region::Spontaneous, Region::Overloaded)
    );
    assert_eq!((a.spontaneous_collapses, b.spontaneous_collapses), (2, 0));
    // 0.5 + 0.5 + 1 healthy hours at value 1; none at value 2.
    assert!((a.healthy_hours - 2.0).abs() < 1e-12 && b.healthy_hours == 0.0);
    assert!((a.spontaneous_per_hour - 1.0).abs() < 1e-12);
    assert_eq!(v.spontaneous_from, Some(1.0));
}

/// With `recover_within` 60 s, a triggered run failed when it did not recover within
/// it: most recovering later is `slow_recovery`, most never is `metastable`; each cell
/// gives the recovered share and the recovery times' quantiles.
#[test]
fn slow_recovery_is_told_from_metastable_by_the_recovery_time() {
    let mut p = plan(3);
    p.recover_within_s = Some(60.0);
    let run = |value: f64, seed: u32, branch: Branch, rec: Option<f64>| Run {
        variant: 0,
        value: [value, 0.0],
        seed,
        branch,
        measure: Some(1.0),
        trace: Some(Trace {
            ran_s: 600.0,
            stuck_s: None,
            recovered_s: rec,
        }),
    };
    let mut runs = Vec::new();
    // Value 1: recoveries at 10, 20, 30 s; value 2: at 100, 120 s and never; value 3:
    // at 100 s and never twice.
    for (value, recs) in [
        (1.0, [Some(10.0), Some(20.0), Some(30.0)]),
        (2.0, [Some(100.0), Some(120.0), None]),
        (3.0, [Some(100.0), None, None]),
    ] {
        for (seed, rec) in recs.into_iter().enumerate() {
            runs.push(run(value, seed as u32, Branch::Baseline, None));
            runs.push(run(value, seed as u32, Branch::Triggered, rec));
        }
    }
    let r = report(&p, &runs);
    assert_eq!(r.recover_within_s, Some(60.0));
    let v = &r.variants[0];
    let states: Vec<Region> = v.points.iter().map(|c| c.state).collect();
    assert_eq!(
        states,
        [Region::Stable, Region::SlowRecovery, Region::Metastable]
    );
    assert_eq!(v.points[1].collapse_probability, 1.0);
    assert_eq!(v.points[1].recovered_share, Some(2.0 / 3.0));
    assert_eq!(
        v.points[0].recovery_s,
        Some(Quantiles {
            p50: 20.0,
            p90: 28.0
        })
    );
    assert_eq!(v.points[2].recovery_s.map(|q| q.p50), Some(100.0));
    assert_eq!(Region::SlowRecovery.name(), "slow_recovery");
    assert_eq!(
        serde_json::to_value(Region::SlowRecovery).unwrap(),
        "slow_recovery"
    );
    // Without `recover_within` the same runs are judged by their measure: stable, and
    // no recovery fields.
    p.recover_within_s = None;
    let plain = report(&p, &runs);
    assert!(
        plain.variants[0]
            .points
            .iter()
            .all(|c| c.state == Region::Stable
                && c.recovered_share.is_none()
                && c.recovery_s.is_none())
    );
}

/// Nothing in the range tips: the headroom is above the top over the operating point;
/// the lowest value tips: it is at most the bottom over the operating point.
#[test]
fn headroom_bounds_when_the_range_does_not_bracket_the_tipping_point() {
    let p = plan(1);
    let runs = |m: [f64; 6]| -> Vec<RunPoint> {
        m.iter()
            .enumerate()
            .map(|(i, x)| RunPoint {
                index: i as u64,
                measure: Some(*x),
                trace: None,
            })
            .collect()
    };
    let never = report(&p, &p.locate(&runs([1.0; 6])));
    let v = &never.variants[0];
    assert_eq!((v.tipping_point, v.headroom_interval), (None, None));
    assert_eq!(v.headroom_above, Some(1.5));
    assert_eq!(v.headroom_cell(), "> 1.5");
    assert_eq!(v.headroom_lower_bound(), Some(1.5));
    let always = report(&p, &p.locate(&runs([1.0, 0.0, 1.0, 0.0, 1.0, 0.0])));
    let v = &always.variants[0];
    assert_eq!(v.tipping_point, Some(1.0));
    assert_eq!((v.headroom_interval, v.headroom_at_most), (None, Some(0.5)));
    assert_eq!(v.headroom_cell(), "<= 0.5");
    assert_eq!(v.headroom_lower_bound(), Some(0.0));
}

/// With an SLO measure the overload point is the capacity at SLO, with the overload
/// point's interval, in `tipping.json`, the table's header and a line under it; with
/// another measure none of that appears.
#[test]
fn an_slo_measures_overload_point_is_its_capacity_at_slo() {
    let mut p = plan(3);
    let runs = three_values();
    let plain = report(&p, &p.locate(&runs));
    let v = &plain.variants[0];
    assert_eq!((v.capacity_at_slo, v.capacity_at_slo_ci95), (None, None));
    assert!(slo_notes(&plain).is_empty());
    assert_eq!(headroom_rows(&plain)[0][3], "overload");
    p.measure = "slo.request".into();
    let r = report(&p, &p.locate(&runs));
    let v = &r.variants[0];
    let c = v
        .capacity_at_slo
        .expect("the baseline fails inside the range");
    assert_eq!(
        (v.capacity_at_slo, v.capacity_at_slo_ci95),
        (v.overload_point, v.overload_ci95)
    );
    assert_eq!(headroom_rows(&r)[0][3], "capacity at SLO");
    let at = match v.capacity_at_slo_ci95 {
        Some([a, b]) => format!(
            "{} (95% CI {}-{})",
            sig3(Some(c)),
            sig3(Some(a)),
            sig3(Some(b))
        ),
        None => format!("{} (no 95% interval)", sig3(Some(c))),
    };
    assert_eq!(slo_notes(&r), [format!("base: capacity at SLO {at}")]);
    assert!(headroom_table(&r).contains(&slo_notes(&r)[0]));
}
