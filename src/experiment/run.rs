//! One simulation run and its files: `summary.json`, `timeseries.csv`, `events.csv`,
//! `timeline.png/.svg` (and `timeline-zoom.png/.svg` when the scenario asks for a window),
//! and `run.provenance.json`.

use super::observe::{Observer, RunWritten};
use super::{Error, create_dir, write_file, write_sidecar};
use crate::export;
use crate::model::{self, RunResult, Simulation};
use crate::report::queueing::Mmc;
use crate::report::timeline;
use crate::scenario::{Provenance, Scenario};
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
    let result = Simulation::new(sc, 0).with_progress(simulated_ns).run();
    obs.run_stopped();
    let result = result?;
    let dir = output_dir(out, sc);
    write_outputs(&dir, &sc.provenance, &result, Mmc::of(sc).as_ref())?;
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

/// The files a run writes into its folder, `run.provenance.json` last (the timeline's
/// zoomed view only when the scenario asks for one).
pub fn run_files(zoom: bool) -> Vec<&'static str> {
    let mut files = vec![
        "summary.json",
        "timeseries.csv",
        "events.csv",
        "timeline.png",
        "timeline.svg",
    ];
    if zoom {
        files.extend(["timeline-zoom.png", "timeline-zoom.svg"]);
    }
    files.push("run.provenance.json");
    files
}

/// Writes a run's files into `dir` (created if needed), `run.provenance.json` last.
/// `theory` (a textbook queue) adds reference lines to the timeline.
pub fn write_outputs(
    dir: &Path,
    produced_by: &Provenance,
    result: &RunResult,
    theory: Option<&Mmc>,
) -> Result<(), Error> {
    create_dir(dir)?;
    write_file(
        &dir.join("summary.json"),
        &export::summary_json(&result.summary, produced_by),
    )?;
    write_file(
        &dir.join("timeseries.csv"),
        &export::timeseries_csv(&result.series),
    )?;
    write_file(
        &dir.join("events.csv"),
        &export::events_csv(&result.markers),
    )?;
    let panels = timeline::default_panels(&result.series, theory);
    timeline::write(dir, &result.title, &result.series, &result.markers, &panels)
        .map_err(|e| Error::io(&dir.join("timeline.png"), e))?;
    if let Some((from, to)) = result.zoom {
        timeline::write_window(
            dir,
            "timeline-zoom",
            &result.title,
            &result.series,
            &result.markers,
            (from, to),
            theory,
        )
        .map_err(|e| Error::io(&dir.join("timeline-zoom.png"), e))?;
    }
    let mut files = run_files(result.zoom.is_some());
    files.pop();
    write_sidecar(dir, "run", produced_by, &files)
}
