//! One simulation run and its files: `summary.json`, `timeseries.csv`, `timeline.png/.svg`
//! (and `timeline-zoom.png/.svg` when the scenario asks for a window).

use super::observe::{Observer, RunWritten};
use super::{Error, create_dir, write_file};
use crate::export;
use crate::model::{self, RunResult, Simulation};
use crate::report::timeline;
use crate::scenario::Scenario;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

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

/// Runs `sc` once (run index 0) and writes its files into [`output_dir`]; `obs` hears the
/// progress and the files written.
pub fn run_and_write(sc: &Scenario, out: &Path, obs: &dyn Observer) -> Result<RunWritten, Error> {
    let simulated_ns = Arc::new(AtomicU64::new(0));
    obs.run_started(sc, &simulated_ns);
    let result = Simulation::checked(sc, 0).and_then(|s| s.with_progress(simulated_ns).run());
    obs.run_stopped();
    let result = result?;
    let dir = output_dir(out, sc);
    write_outputs(&dir, &result)?;
    let written = RunWritten {
        scenario: sc.name.clone(),
        dir,
        events: result.summary.events,
        completed: result
            .summary
            .classes
            .values()
            .map(|c| c.succeeded + c.failed)
            .sum(),
        wall_s: result.wall_s,
    };
    obs.run_written(&written);
    Ok(written)
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
