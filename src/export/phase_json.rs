//! `phase.json`: the phase map's report (the fields of `tipping.json`, its cells with
//! `value2`) after `"kind": "phase"`, then the sampled values of both parameters and per
//! variant the operating point on both axes, its cell and the phase boundary.

use crate::report::phase::PhaseMap;

/// The bytes of `phase.json`.
pub fn phase_json(map: &PhaseMap) -> Vec<u8> {
    super::pretty_json(map)
}
