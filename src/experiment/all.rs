//! `brink all`: every scenario of a folder, its run, its tipping sweep over all variants and
//! its phase map, then `index.html` over all of them. Everything is validated before the
//! first run, so bad input writes nothing.

use super::observe::Observer;
use super::plan::Kind;
use super::sweep::{Sweep, Variants};
use super::{Error, create_dir, run, write_file};
use crate::export::{self, Section};
use crate::scenario::{Loader, Scenario, ScenarioError};
use std::path::{Path, PathBuf};

/// The scenario files (`*.toml`) of a folder, in name order.
pub fn scenario_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::ScenarioFolder {
            dir: dir.display().to_string(),
            source: e,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

/// Validates a scenario file as written and with each of its variants; returns the number
/// of variants.
pub fn check(loader: &Loader) -> Result<usize, ScenarioError> {
    loader.load(None, &[])?;
    let names = loader.variant_names();
    for v in &names {
        loader.load(Some(v), &[])?;
    }
    Ok(names.len())
}

/// One scenario of the folder, validated and ready to run.
struct Todo {
    scenario: Scenario,
    tipping: Option<Sweep>,
    phase: Option<Sweep>,
}

/// Runs every scenario in `dir` (its run, its tipping sweep with all variants and its phase
/// map, each where the file has the section) into `out` on all cores, then writes
/// `out/index.html`; returns the page's path. `obs` hears every run and sweep.
pub fn run_all(dir: &Path, out: &Path, obs: &dyn Observer) -> Result<PathBuf, Error> {
    let files = scenario_files(dir)?;
    if files.is_empty() {
        return Err(Error::NoScenarios {
            dir: dir.display().to_string(),
        });
    }
    let mut todo = Vec::new();
    for f in files {
        let loader = Loader::open(&f)?;
        let scenario = loader.load(None, &[])?;
        let all = Variants {
            names: vec![],
            all: true,
        };
        let tipping = match scenario.tipping {
            Some(_) => Some(Sweep::prepare(loader.clone(), Kind::Tipping, &all, vec![])?),
            None => None,
        };
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
            tipping,
            phase,
        });
    }
    let mut sections = Vec::new();
    for t in &todo {
        let sc = &t.scenario;
        run::run_and_write(sc, out, obs)?;
        let tipping = match &t.tipping {
            Some(s) => s.run_and_write(0, None, out, obs)?.outcome.into_report(),
            None => None,
        };
        if let Some(p) = &t.phase {
            p.run_and_write(0, None, out, obs)?;
        }
        sections.push(Section {
            name: sc.name.clone(),
            title: sc.title.clone(),
            description: sc.description.clone(),
            case: sc.case.clone(),
            tipping,
            phase: t.phase.is_some(),
        });
    }
    create_dir(out)?;
    let page = out.join("index.html");
    write_file(&page, &export::index_html(&sections))?;
    Ok(page)
}
