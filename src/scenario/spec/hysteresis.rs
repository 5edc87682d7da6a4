//! The validated `[hysteresis]` section: how `brink hysteresis` ramps the `[tipping]`
//! parameter from `tipping.from` up to `tipping.to` and back down, in one run, slowly
//! enough that each value's measure is the state the system has settled into.

use crate::engine::time::{NS_PER_S, SimTime};

/// The most values per direction (the run holds one intervention per value and direction).
pub const MAX_STEPS: u32 = 500;
/// The default number of values per direction.
pub const DEFAULT_STEPS: u32 = 24;
/// The longest ramp (both directions) in simulated time: 30 days.
pub const MAX_RUN_NS: SimTime = 30 * 24 * 3600 * NS_PER_S;

/// The validated `[hysteresis]` section (defaults filled in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hysteresis {
    /// Values per direction, from `tipping.from` to `tipping.to` evenly spaced.
    pub steps: u32,
    /// Simulated time held at each value.
    pub dwell_ns: SimTime,
    /// The first part of each dwell, left out of the measure (the transient after the
    /// change); the rest of the dwell is measured.
    pub settle_ns: SimTime,
}

impl Hysteresis {
    /// The length of the whole ramp, up and down.
    pub fn run_ns(&self) -> SimTime {
        2 * self.steps as SimTime * self.dwell_ns
    }
}
