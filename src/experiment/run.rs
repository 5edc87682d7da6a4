//! One simulation run and its files: `summary.json`, `timeseries.csv`, `events.csv`,
//! `timeline.png/.svg` (and `timeline-zoom.png/.svg` when the scenario asks for a window),
//! `structure.svg` (the system drawn with the run's rates), and `run.provenance.json`.

use super::measure::Gauge;
use super::observe::{Observer, RunWritten};
use super::{Error, Outputs};
use crate::engine::time::{SimTime, ns_to_secs};
use crate::export;
use crate::model::metrics::Marker;
use crate::model::{self, RunResult, Simulation};
use crate::report::narrative::{Sentence, Story, Sustained, measure_words, narrate, sustained};
use crate::report::queueing::Mmc;
use crate::report::structure::{self, Diagram, Measured};
use crate::report::timeline;
use crate::report::verdict::Verdict;
use crate::scenario::sweep::Health;
use crate::scenario::{Column, Provenance, Scenario};
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

/// Runs `sc` once (run index 0) and writes its files into `dir` (its [`output_dir`], or
/// a folder of its own for a run with overrides, [`super::naming`]); `obs` hears the
/// progress and the files written.
pub fn run_and_write(sc: &Scenario, dir: &Path, obs: &dyn Observer) -> Result<RunWritten, Error> {
    run_and_write_traced(sc, dir, obs, None)
}

/// [`run_and_write`], tracing 1 in `trace_sample` client requests when given: their spans
/// go to `traces.json` ([`crate::export::traces_json()`]) beside the run's other files,
/// which are the same bytes as without it.
pub fn run_and_write_traced(
    sc: &Scenario,
    dir: &Path,
    obs: &dyn Observer,
    trace_sample: Option<u64>,
) -> Result<RunWritten, Error> {
    let simulated_ns = Arc::new(AtomicU64::new(0));
    obs.run_started(sc, &simulated_ns);
    let result = Simulation::checked(sc, 0).and_then(|s| {
        let s = s.with_progress(simulated_ns);
        match trace_sample {
            Some(n) => s.with_trace_sample(n).run(),
            None => s.run(),
        }
    });
    obs.run_stopped();
    let result = result?;
    let story = narrative(sc, &result);
    let structure = structure(sc, &result);
    write_outputs(
        dir,
        &sc.provenance,
        &result,
        (&story, &structure),
        Mmc::of(sc).as_ref(),
    )?;
    let written = RunWritten {
        scenario: sc.name.clone(),
        variant: sc.variant.clone(),
        dir: dir.to_path_buf(),
        events: result.summary.events,
        completed: result
            .summary
            .classes
            .values()
            .map(|c| c.succeeded + c.failed)
            .sum(),
        wall_s: result.wall_s,
        verdict: verdict(sc, &result),
        narrative: story,
    };
    obs.run_written(&written);
    Ok(written)
}

/// The verdict on a run's measuring window by its scenario's tipping measure, if it has
/// one: the window a sweep measures (from the end of the trigger plus `settle`) to the
/// end of this run.
pub fn verdict(sc: &Scenario, result: &RunResult) -> Option<Verdict> {
    let t = sc.tipping.as_ref()?;
    let columns = &result.series.columns;
    let gauge = Gauge::new(t, columns, sc.duration).ok()?;
    gauge.verdict(&sc.config, columns, &result.series.rows, sc.duration)
}

/// The run told in words ([`crate::report::narrative`]), by its scenario's tipping measure
/// and health rule over the whole run; without a `[tipping]`, only its triggers,
/// interventions and queues (there is no rule to say when it is healthy).
pub fn narrative(sc: &Scenario, result: &RunResult) -> Vec<Sentence> {
    let s = &result.series;
    narrative_of(
        sc,
        (&s.columns, &s.rows),
        &result.markers,
        sc.duration,
        true,
    )
}

/// The structure of a finished run of `sc`, drawn with what it measured
/// ([`crate::report::structure`]): over the whole run.
pub fn structure(sc: &Scenario, result: &RunResult) -> Diagram {
    let s = &result.series;
    structure_of(
        sc,
        (&s.columns, &s.rows),
        &result.markers,
        sc.duration,
        true,
    )
}

/// The narrative of a run of `sc` whose rows (with their schema) end at `to`, ns: the
/// whole run when `finished`, else the run so far (the live page); `markers` are the
/// triggers and interventions, of which those started by `to` are told.
pub fn narrative_of(
    sc: &Scenario,
    rows: (&[Column], &[Vec<f64>]),
    markers: &[Marker],
    to: SimTime,
    finished: bool,
) -> Vec<Sentence> {
    told(sc, rows, markers, to, finished, narrate)
}

/// What sustains the failure of a run of `sc` ([`crate::report::narrative::sustained`]),
/// told from the same [`Story`] as its [`narrative_of`].
pub fn sustained_of(
    sc: &Scenario,
    rows: (&[Column], &[Vec<f64>]),
    markers: &[Marker],
    to: SimTime,
    finished: bool,
) -> Sustained {
    told(sc, rows, markers, to, finished, sustained)
}

/// `structure.svg`'s diagram of a run of `sc` whose rows end at `to`, ns (the whole run
/// when `finished`, else the run so far): its rates and the loop that sustains its failure.
pub fn structure_of(
    sc: &Scenario,
    (columns, rows): (&[Column], &[Vec<f64>]),
    markers: &[Marker],
    to: SimTime,
    finished: bool,
) -> Diagram {
    let sustained = sustained_of(sc, (columns, rows), markers, to, finished);
    let title = match &sc.variant {
        Some(v) => format!("{} (variant {v})", sc.name),
        None => sc.name.clone(),
    };
    structure::diagram(&Measured {
        cfg: &sc.config,
        title: &title,
        columns,
        rows,
        end_s: ns_to_secs(to),
        finished,
        sustained: &sustained,
    })
}

/// The [`Story`] of a run of `sc` whose rows end at `to`, given to `tell`.
fn told<T>(
    sc: &Scenario,
    (columns, rows): (&[Column], &[Vec<f64>]),
    markers: &[Marker],
    to: SimTime,
    finished: bool,
    tell: impl FnOnce(&Story) -> T,
) -> T {
    let gauge = sc.tipping.as_ref().and_then(|t| {
        Gauge::of(&t.measure, t.health, columns, 0, to)
            .ok()
            .map(|g| (t, g))
    });
    let stretches = gauge
        .as_ref()
        .map(|(_, g)| g.stretches(rows, to))
        .unwrap_or_default();
    let end_s = ns_to_secs(to);
    let started: Vec<Marker> = markers
        .iter()
        .filter(|m| m.start_s <= end_s)
        .cloned()
        .collect();
    let story = Story {
        cfg: &sc.config,
        columns,
        rows,
        markers: &started,
        stretches: &stretches,
        measure: gauge
            .as_ref()
            .map(|(t, _)| measure_words(&t.measure_name))
            .unwrap_or_default(),
        health: gauge.as_ref().map_or(Health::Above(0.0), |(t, _)| t.health),
        class: gauge.as_ref().and_then(|(_, g)| g.class()),
        end_s,
        finished,
    };
    tell(&story)
}

/// The files of a run that has a zoom window; a run without one removes a previous run's.
const ZOOM_FILES: [&str; 2] = ["timeline-zoom.png", "timeline-zoom.svg"];

/// The file of a traced run (`--trace-sample`); a run without tracing removes a previous
/// run's.
const TRACES_FILE: &str = "traces.json";

/// The files a run writes into its folder, `run.provenance.json` last (the timeline's
/// zoomed view only when the scenario asks for one).
pub fn run_files(zoom: bool) -> Vec<&'static str> {
    let mut files = vec![
        "summary.json",
        "timeseries.csv",
        "events.csv",
        "timeline.png",
        "timeline.svg",
        "structure.svg",
    ];
    if zoom {
        files.extend(ZOOM_FILES);
    }
    files.push("run.provenance.json");
    files
}

/// A run's timeline title: the scenario's, and the variant's name for a variant, so
/// that pictures of one scenario's variants tell themselves apart on their own.
fn timeline_title(result: &RunResult) -> String {
    match &result.summary.variant {
        Some(v) => format!("{} (variant {v})", result.title),
        None => result.title.clone(),
    }
}

/// Writes a run's files into `dir` (created if needed), all together or none;
/// `run.provenance.json` last. `story` is the run's [`narrative`] (in `summary.json`),
/// `drawn` its [`structure()`] (`structure.svg`); `theory` (a textbook queue) adds reference
/// lines to the timeline.
pub fn write_outputs(
    dir: &Path,
    produced_by: &Provenance,
    result: &RunResult,
    (story, drawn): (&[Sentence], &Diagram),
    theory: Option<&Mmc>,
) -> Result<(), Error> {
    let out = Outputs::begin(dir, "run")?.replacing(&[ZOOM_FILES[0], ZOOM_FILES[1], TRACES_FILE]);
    out.write(
        "summary.json",
        &export::summary_json(&result.summary, story, produced_by),
    )?;
    out.write("timeseries.csv", &export::timeseries_csv(&result.series))?;
    out.write("events.csv", &export::events_csv(&result.markers))?;
    out.write("structure.svg", &export::structure_svg(drawn))?;
    if let Some(log) = &result.traces {
        out.write(TRACES_FILE, &export::traces_json(log))?;
    }
    let panels = timeline::default_panels(&result.series, theory);
    let title = timeline_title(result);
    out.draw("timeline.png", |stage| {
        timeline::write(stage, &title, &result.series, &result.markers, &panels)
    })?;
    if let Some((from, to)) = result.zoom {
        out.draw(ZOOM_FILES[0], |stage| {
            timeline::write_window(
                stage,
                "timeline-zoom",
                &title,
                &result.series,
                &result.markers,
                (from, to),
                theory,
            )
        })?;
    }
    out.sidecar("run", produced_by)?;
    out.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The timeline of a variant names the variant (finding 15 of the new-user review: a
    /// variant's picture carried the base title, so slides of two designs looked alike);
    /// the base run's title is the scenario's own.
    #[test]
    fn a_variant_timeline_names_its_variant() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/retry-storm.toml");
        let short = crate::scenario::Override::parse("duration=\"60s\"").unwrap();
        let svg_title = |variant: Option<&str>| {
            let sc = crate::scenario::Loader::open(&path)
                .unwrap()
                .load(variant, std::slice::from_ref(&short))
                .unwrap();
            let dir = tempfile::tempdir().unwrap();
            let result = simulate(&sc).unwrap();
            let drawn = structure(&sc, &result);
            write_outputs(dir.path(), &sc.provenance, &result, (&[], &drawn), None).unwrap();
            let svg = std::fs::read_to_string(dir.path().join("timeline.svg")).unwrap();
            (sc.title.clone(), svg)
        };
        let (title, svg) = svg_title(Some("lifo"));
        assert!(svg.contains(&format!("{title} (variant lifo)")), "{title}");
        let (title, svg) = svg_title(None);
        assert!(svg.contains(&title) && !svg.contains("(variant"), "{title}");
    }
}
