//! One simulation run and its files: `summary.json`, `timeseries.csv`, `timeline.png/.svg`
//! (and `timeline-zoom.png/.svg` when the scenario asks for a window).

use super::{Error, create_dir, write_file};
use crate::export;
use crate::model::{self, RunResult};
use crate::report::timeline;
use crate::scenario::Scenario;
use std::path::{Path, PathBuf};

/// The folder a scenario's outputs go to: `out/<scenario>/`, or
/// `out/<scenario>/variants/<variant>/` for a variant.
pub fn output_dir(out: &Path, sc: &Scenario) -> PathBuf {
    let base = out.join(&sc.name);
    match &sc.variant {
        Some(v) => base.join("variants").join(v),
        None => base,
    }
}

/// Runs `sc` once and returns its result without writing anything.
pub fn simulate(sc: &Scenario) -> Result<RunResult, Error> {
    Ok(model::run(sc, 0)?)
}

/// Writes a run's files into `dir` (created if needed).
pub fn write_outputs(dir: &Path, result: &RunResult) -> Result<(), Error> {
    create_dir(dir)?;
    write_file(
        &dir.join("summary.json"),
        &export::summary_json(&result.summary),
    )?;
    write_file(
        &dir.join("timeseries.csv"),
        &export::timeseries_csv(&result.series),
    )?;
    let panels = timeline::default_panels(&result.series);
    timeline::write(dir, &result.title, &result.series, &result.markers, &panels)
        .map_err(|e| Error::io(&dir.join("timeline.png"), e))?;
    if let Some((from, to)) = result.zoom {
        timeline::write_window(
            dir,
            "timeline-zoom",
            &result.title,
            &result.series,
            &result.markers,
            from,
            to,
        )
        .map_err(|e| Error::io(&dir.join("timeline-zoom.png"), e))?;
    }
    Ok(())
}
