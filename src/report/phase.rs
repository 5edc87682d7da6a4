//! A phase map as readers see it (`phase.json`, `phase.png/.svg`): the sweep report of a
//! two-axis sweep plus what only a map needs: the grid of sampled values on each axis, and
//! per variant its operating point on both axes, the cell it falls in and the phase
//! boundary (per value of the second parameter, the lowest value of the first that tips).
//!
//! The sweep report keeps one operating value per variant (the tipping axis'); the second
//! comes from the plan, so this is derived from (plan, report), both from (plan, runs).

use super::sweep_result::{Cell, Region, SweepReport};
use crate::stats::plan::Plan;
use serde::Serialize;

/// `phase.json`: `kind` first, then every field of `tipping.json`'s report (its cells carry
/// `value2`), then the grid and one [`VariantMap`] per variant.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseMap<'a> {
    /// Always `"phase"`: which experiment wrote the file (`brink phase`, or `brink all`).
    pub kind: &'static str,
    #[serde(flatten)]
    pub report: &'a SweepReport,
    /// The sampled values of the first parameter (`vary`), ascending.
    pub values: Vec<f64>,
    /// The sampled values of the second parameter (`vary2`), ascending.
    pub values2: Vec<f64>,
    /// In the order of `variants`.
    pub maps: Vec<VariantMap>,
}

/// What the map says about one variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantMap {
    pub variant: String,
    /// The variant's own value of each parameter (`vary`, `vary2`).
    pub operating_point: [f64; 2],
    /// The cell nearest the operating point on each axis; `null` when the operating point
    /// lies outside the swept range on either axis (the map says nothing about it).
    pub operating_cell: Option<OperatingCell>,
    /// Per sampled value of the second parameter, ascending: the lowest value of the first
    /// whose collapse probability is over 1/2 (`null`: none in the range tips).
    pub boundary: Vec<BoundaryPoint>,
}

/// The cell the operating point falls in.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct OperatingCell {
    pub value: f64,
    pub value2: f64,
    pub collapse_probability: f64,
    pub state: Region,
}

/// One point of the phase boundary.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BoundaryPoint {
    pub value2: f64,
    pub tipping_point: Option<f64>,
}

impl<'a> PhaseMap<'a> {
    /// The map of a two-axis plan's report (`report` derived from `plan`).
    pub fn new(plan: &Plan, report: &'a SweepReport) -> Self {
        let axis = |i: usize| plan.axes.get(i).map_or_else(Vec::new, |a| a.values.clone());
        let (values, values2) = (axis(0), axis(1));
        let maps = plan
            .variants
            .iter()
            .zip(&report.variants)
            .map(|(vp, v)| {
                let op = [
                    vp.operating_point.first().copied().unwrap_or(f64::NAN),
                    vp.operating_point.get(1).copied().unwrap_or(f64::NAN),
                ];
                VariantMap {
                    variant: v.variant.clone(),
                    operating_point: op,
                    operating_cell: operating_cell(&v.points, &values, &values2, op),
                    boundary: values2
                        .iter()
                        .map(|&y| BoundaryPoint {
                            value2: y,
                            tipping_point: v
                                .points
                                .iter()
                                .filter(|c| c.value2 == Some(y) && c.collapse_probability > 0.5)
                                .map(|c| c.value)
                                .reduce(f64::min),
                        })
                        .collect(),
                }
            })
            .collect();
        PhaseMap {
            kind: "phase",
            report,
            values,
            values2,
            maps,
        }
    }
}

/// The index of the sampled value nearest `x`, if `x` lies within half a step of the
/// outer values (the extent of the outer cells); `None` outside, or for an empty axis.
pub fn nearest(values: &[f64], x: f64) -> Option<usize> {
    let (lo, hi) = cell_extent(values)?;
    if !(lo..=hi).contains(&x) {
        return None;
    }
    (0..values.len()).min_by(|&a, &b| (values[a] - x).abs().total_cmp(&(values[b] - x).abs()))
}

/// The outer edges of the cells of an axis: half a step beyond the outer values (one
/// value: half its size, at least 1/2). `None` for an empty axis.
pub fn cell_extent(values: &[f64]) -> Option<(f64, f64)> {
    let (lo, hi) = (*values.first()?, *values.last()?);
    let half = if values.len() > 1 {
        (hi - lo) / (values.len() - 1) as f64 / 2.0
    } else {
        lo.abs().max(1.0) / 2.0
    };
    Some((lo - half, hi + half))
}

fn operating_cell(cells: &[Cell], xs: &[f64], ys: &[f64], op: [f64; 2]) -> Option<OperatingCell> {
    let (i, j) = (nearest(xs, op[0])?, nearest(ys, op[1])?);
    let c = cells
        .iter()
        .find(|c| c.value == xs[i] && c.value2 == Some(ys[j]))?;
    Some(OperatingCell {
        value: c.value,
        value2: ys[j],
        collapse_probability: c.collapse_probability,
        state: c.state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_value_within_the_cells_only() {
        let v = [10.0, 20.0, 30.0];
        assert_eq!(nearest(&v, 14.0), Some(0));
        assert_eq!(nearest(&v, 16.0), Some(1));
        assert_eq!(nearest(&v, 35.0), Some(2));
        assert_eq!(nearest(&v, 35.1), None);
        assert_eq!(nearest(&v, 4.0), None);
        assert_eq!(nearest(&[], 1.0), None);
        assert_eq!(cell_extent(&[4.0]), Some((2.0, 6.0)));
    }
}
