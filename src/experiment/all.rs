//! `brink all`: every scenario of a folder, its run, its tipping sweep over all variants and
//! its phase map, then `index.html` over all of them. Everything is validated before the
//! first run, so bad input writes nothing.

use super::hysteresis::{HysteresisWritten, Ramp};
use super::observe::{Observer, Quiet, RunWritten, SweepWritten};
use super::source::Source;
use super::sweep::{self, Sweep, Variants};
use super::{Error, create_dir, run, write_file};
use crate::export::{self, Page, RunView, Section};
use crate::scenario::{Loader, Scenario};
use crate::stats::plan::Kind;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Validates a scenario file as written and with each of its variants, and its
/// `[tipping]` and `[phase]` sections exactly as `brink tipping --all-variants` and
/// `brink phase --all-variants` would before their first run (every variant at every swept
/// value); returns the number of variants.
pub fn check(loader: &Loader) -> Result<usize, Error> {
    let base = loader.load(None, &[])?;
    let names = loader.variant_names();
    for v in &names {
        loader.load(Some(v), &[])?;
    }
    let every = Variants {
        names: vec![],
        all: true,
    };
    if base.tipping.is_some() {
        Sweep::prepare(loader.clone(), Kind::Tipping, &every, vec![])?;
    }
    if base.phase.is_some() {
        Sweep::prepare(loader.clone(), Kind::Phase, &every, vec![])?;
    }
    Ok(names.len())
}

/// One scenario of the folder, validated and ready to run.
struct Todo {
    scenario: Scenario,
    /// The scenario with each of its variants, run too.
    variants: Vec<Scenario>,
    tipping: Option<Sweep>,
    phase: Option<Sweep>,
    /// The hysteresis ramp of the base design, where its `[tipping]` parameter is one an
    /// intervention can change.
    ramp: Option<Ramp>,
}

/// Which sweeps `brink all` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Coverage {
    /// Every variant of the teaching scenarios; the base design of incident replays
    /// (scenarios with a `case`), whose runs are long: their variants' sweeps cost
    /// minutes each (`brink tipping FILE --all-variants`, or `Full`).
    #[default]
    Default,
    /// Every variant of every scenario.
    Full,
}

/// One piece of work of `brink all`.
enum Task<'a> {
    Run(&'a Scenario),
    Sweep(&'a Sweep),
    Ramp(&'a Ramp),
}

/// What a task wrote.
enum Done {
    Run(RunWritten),
    Sweep(SweepWritten),
    Ramp(Box<HysteresisWritten>),
}

/// Runs every scenario of `source` (its run and each variant's run, its tipping sweep and its
/// phase map, each where the file has the section; which variants are swept follows
/// `coverage`; the hysteresis loop of its base design where an intervention can change its
/// `[tipping]` parameter) into `out`, all of it side by side on all cores, then writes
/// `out/index.html`; returns the page's path and the page (its sections hold the tipping
/// reports, for a headroom gate). `obs` hears the progress, then every run and sweep in
/// file order.
pub fn run_all(
    source: &Source,
    out: &Path,
    coverage: Coverage,
    obs: &dyn Observer,
) -> Result<(PathBuf, Page), Error> {
    let mut todo = Vec::new();
    for loader in source.loaders()? {
        let scenario = loader.load(None, &[])?;
        let variants = loader
            .variant_names()
            .iter()
            .map(|v| loader.load(Some(v), &[]))
            .collect::<Result<Vec<_>, _>>()?;
        let every = coverage == Coverage::Full || scenario.case.trim().is_empty();
        let swept = Variants {
            names: vec![],
            all: every,
        };
        let tipping = match scenario.tipping {
            Some(_) => Some(Sweep::prepare(
                loader.clone(),
                Kind::Tipping,
                &swept,
                vec![],
            )?),
            None => None,
        };
        let ramp = Ramp::if_rampable(loader.clone())?;
        let phase = match scenario.phase {
            Some(_) => Some(Sweep::prepare(
                loader,
                Kind::Phase,
                &Variants::default(),
                vec![],
            )?),
            None => None,
        };
        todo.push(Todo {
            scenario,
            variants,
            tipping,
            phase,
            ramp,
        });
    }
    // Sweeps first: they are the long tasks, and starting them first leaves the short
    // runs to fill the cores at the end.
    let mut tasks: Vec<Task> = Vec::new();
    for t in &todo {
        tasks.extend(t.tipping.iter().chain(&t.phase).map(Task::Sweep));
    }
    // Then the ramps: one run each, but a long one (2 x steps x dwell).
    tasks.extend(todo.iter().filter_map(|t| t.ramp.as_ref()).map(Task::Ramp));
    for t in &todo {
        tasks.push(Task::Run(&t.scenario));
        tasks.extend(t.variants.iter().map(Task::Run));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .build()
        .map_err(|e| Error::Io {
            path: "(thread pool)".into(),
            source: std::io::Error::other(e),
        })?;
    obs.batch_started(tasks.len());
    let done: Vec<Result<Done, Error>> = pool.install(|| {
        tasks
            .par_iter()
            .with_max_len(1)
            .map(|t| {
                let d = match t {
                    Task::Run(sc) => {
                        run::run_and_write(sc, &run::output_dir(out, sc), &Quiet).map(Done::Run)
                    }
                    Task::Sweep(s) => s.run_and_write(0, None, out, &Quiet).map(Done::Sweep),
                    Task::Ramp(r) => r
                        .run_and_write(&run::output_dir(out, r.scenario()), &Quiet)
                        .map(|w| Done::Ramp(Box::new(w))),
                };
                obs.batch_progressed();
                d
            })
            .collect()
    });
    obs.batch_stopped();
    let done = done.into_iter().collect::<Result<Vec<_>, _>>()?;
    // Report in file order: each scenario's runs, then its sweeps.
    let mut reports = Vec::new();
    let (mut ran, mut swept, mut ramped) = (Vec::new(), Vec::new(), Vec::new());
    for d in done {
        match d {
            Done::Run(w) => ran.push(w),
            Done::Sweep(w) => swept.push(w),
            Done::Ramp(w) => ramped.push(*w),
        }
    }
    for w in &ran {
        obs.run_written(w);
    }
    for w in &ramped {
        obs.hysteresis_written(w);
    }
    for w in swept {
        obs.sweep_written(&w);
        if w.kind == Kind::Tipping {
            reports.push((w.scenario.clone(), w.outcome.into_report()));
        }
    }
    let mut sections = Vec::new();
    for t in &todo {
        let sc = &t.scenario;
        let tipping = reports
            .iter_mut()
            .find(|(name, _)| *name == sc.name)
            .and_then(|(_, r)| r.take());
        let runs = std::iter::once(sc)
            .chain(&t.variants)
            .map(|sc| run_view(sc, &ran))
            .collect();
        let files = |sweep: &Option<Sweep>, kind: Kind| match sweep {
            Some(_) => sweep::sweep_files(kind),
            None => Vec::new(),
        };
        let hysteresis = ramped
            .iter()
            .find(|w| w.report.scenario == sc.name)
            .map(|w| w.report.clone());
        sections.push(Section {
            name: sc.name.clone(),
            title: sc.title.clone(),
            description: sc.description.clone(),
            case: sc.case.clone(),
            runs,
            tipping,
            phase: t.phase.is_some(),
            tipping_files: files(&t.tipping, Kind::Tipping),
            phase_files: files(&t.phase, Kind::Phase),
            hysteresis_files: match hysteresis {
                Some(_) => super::hysteresis::files(),
                None => Vec::new(),
            },
            hysteresis,
        });
    }
    let page = Page {
        brink: env!("CARGO_PKG_VERSION").to_string(),
        command: shell_words(crate::scenario::provenance::command_line()),
        sections,
    };
    create_dir(out)?;
    let path = out.join("index.html");
    write_file(&path, &export::index_html(&page))?;
    Ok((path, page))
}

/// What the page shows of one run: its folder relative to the page, its files, its
/// verdict (from the runs written, `ran`), and for a variant its name and description.
fn run_view(sc: &Scenario, ran: &[RunWritten]) -> RunView {
    let dir = run::output_dir(Path::new(""), sc);
    let written = ran
        .iter()
        .find(|w| w.scenario == sc.name && w.variant == sc.variant);
    let verdict = written.and_then(|w| w.verdict);
    RunView {
        verdict: verdict.map(|v| v.to_string()),
        variant: sc.variant.clone(),
        description: sc
            .variants
            .iter()
            .find(|(n, _)| Some(n) == sc.variant.as_ref())
            .map(|(_, d)| d.clone())
            .unwrap_or_default(),
        dir: dir
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"),
        narrative: written.map(|w| w.narrative.clone()).unwrap_or_default(),
        files: run::run_files(sc.zoom.is_some())
            .into_iter()
            .map(String::from)
            .collect(),
    }
}

/// A command line as one could type it again: arguments with characters a shell reads
/// are single-quoted. `brink all` when called as a library.
fn shell_words(args: &[String]) -> String {
    if args.is_empty() {
        return "brink all".into();
    }
    args.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
