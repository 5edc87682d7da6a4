//! Reports: what is derived from results to show them (a sweep's regions, tipping points
//! and headroom; the console tables) and the pictures (plotters). The bytes of the data
//! files come from [`crate::export`]; every file is written to a temporary name and
//! renamed ([`files`]), so an interrupted run leaves no half file.

pub mod calibration;
pub mod figure;
pub mod files;
pub mod gate;
pub mod human_time;
pub mod hysteresis_plot;
pub mod hysteresis_result;
pub mod markers;
pub mod narrative;
pub mod phase;
pub mod phase_plot;
pub mod queueing;
pub mod structure;
pub mod sweep_plot;
pub mod sweep_result;
pub mod sweep_table;
pub mod timeline;
pub mod verdict;

pub use files::{write_atomic, write_new_atomic};
