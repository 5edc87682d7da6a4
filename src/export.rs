//! Exporters: one per output file format, each a pure function from result structs to the
//! bytes of the file. The experiment layer writes those bytes atomically
//! ([`crate::report::files`]); golden files pin every format (`src/export/tests.rs`).
//!
//! | file | exporter | reads |
//! |---|---|---|
//! | `summary.json` | [`summary_json()`] | [`Summary`](crate::model::metrics::Summary) |
//! | `timeseries.csv` | [`timeseries_csv()`] | [`TimeSeries`](crate::model::TimeSeries) |
//! | `events.csv` | [`events_csv()`] | [`Marker`](crate::model::metrics::Marker)s |
//! | `<command>.provenance.json` | [`sidecar_json()`] | [`Provenance`](crate::scenario::Provenance) |
//! | `tipping.csv`, `phase.csv` | [`sweep_csv()`] | [`Plan`](crate::stats::plan::Plan), [`RunPoint`](crate::stats::plan::RunPoint)s |
//! | `tipping.json` | [`tipping_json()`] | [`SweepReport`](crate::report::sweep_result::SweepReport) |
//! | `hysteresis.csv` | [`hysteresis_csv()`] | [`HysteresisReport`](crate::report::hysteresis_result::HysteresisReport) |
//! | `hysteresis.json` | [`hysteresis_json()`] | [`HysteresisReport`](crate::report::hysteresis_result::HysteresisReport) |
//! | `phase.json` | [`phase_json()`] | [`PhaseMap`](crate::report::phase::PhaseMap) |
//! | `<kind>.shard-K-of-N.json` | [`shard_json()`] | [`ShardFile`] |
//! | `index.html` | [`index_html()`] | [`Section`]s |
//! | `calibration.json` | [`calibration_json()`] | [`CalibrationReport`](crate::report::calibration::CalibrationReport) |
//! | `traces.json` | [`traces_json()`] | [`TraceLog`](crate::model::tracing::TraceLog) |
//! | `structure.svg` | [`structure_svg()`] | [`Diagram`](crate::report::structure::Diagram) |
//!
//! The pictures (PNG, SVG) are drawn in [`crate::report`] from the same structs.

pub mod calibration_json;
pub mod csv;
pub mod events_csv;
pub mod hysteresis_csv;
pub mod hysteresis_json;
pub mod index_html;
pub mod phase_json;
pub mod shard_json;
pub mod structure_svg;
pub mod summary_json;
pub mod sweep_csv;
pub mod timeseries_csv;
pub mod tipping_json;
pub mod traces_json;

#[cfg(test)]
mod tests;

pub use calibration_json::calibration_json;
pub use events_csv::events_csv;
pub use hysteresis_csv::hysteresis_csv;
pub use hysteresis_json::hysteresis_json;
pub use index_html::{Page, RunView, Section, index_html};
pub use phase_json::phase_json;
pub use shard_json::{ShardFile, shard_json};
pub use structure_svg::structure_svg;
pub use summary_json::summary_json;
pub use sweep_csv::sweep_csv;
pub use timeseries_csv::timeseries_csv;
pub use tipping_json::tipping_json;
pub use traces_json::traces_json;

/// The bytes of a `<command>.provenance.json` sidecar.
pub fn sidecar_json(sidecar: &crate::scenario::provenance::Sidecar) -> Vec<u8> {
    pretty_json(sidecar)
}

/// Pretty JSON with a final newline: the form of every JSON file brink writes.
pub(crate) fn pretty_json<T: serde::Serialize>(value: &T) -> Vec<u8> {
    // The result structs have string keys and plain fields (a non-finite float becomes
    // null), so serde_json has nothing to refuse.
    let mut out = serde_json::to_vec_pretty(value).expect("result structs serialize to JSON");
    out.push(b'\n');
    out
}
