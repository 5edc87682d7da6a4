//! `phase.json`: a phase map's report, grid and operating points.

use super::*;
use crate::report::phase::PhaseMap;

/// `phase.json`: the report's fields after `kind`, then the grid and per variant the
/// operating point on both axes (20 requests/s, 30 s: nearest cell (20, 0.5 s)), its cell
/// and the boundary (at 0.5 s only the overloaded 30 tips; at 60 s, 10 already does).
#[test]
fn phase_json_golden() {
    let plan = phase_plan();
    let r = report(&plan, &plan.locate(&phase_runs()));
    golden("phase.json", &phase_json(&PhaseMap::new(&plan, &r)));
    // An operating point off the map has no cell.
    let mut off = plan.clone();
    off.variants[0].operating_point = vec![20.0, 90.0];
    let m = PhaseMap::new(&off, &r);
    assert_eq!(m.maps[0].operating_point, [20.0, 90.0]);
    assert_eq!(m.maps[0].operating_cell, None);
}
