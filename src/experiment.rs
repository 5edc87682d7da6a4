//! Experiments: a single run with its files, sweeps over many runs (tipping curves, phase
//! maps) with their shards, the hysteresis loop of a slow ramp, and `brink all` over a
//! folder of scenarios (or the bundled ones). This layer decides what runs and which files are written; the bytes come from [`crate::export`] and the
//! pictures from [`crate::report`].
//!
//! [`plan`] is a sweep's data (what it covers, each run's measure): the reports and
//! exporters read it, and the orchestration here fills it.

pub mod all;
pub mod collapse_time;
pub mod hysteresis;
pub mod measure;
pub mod new;
pub mod observe;
pub mod plan;
pub mod run;
pub mod search;
pub mod shard;
pub mod source;
pub mod splitting;
pub mod sweep;

pub use observe::{Observer, Quiet, RunWritten, SweepOutcome, SweepWritten};

use crate::model::SimError;
use crate::scenario::ScenarioError;
use std::path::Path;

/// Why an experiment failed. Bad input (exit code 2) is told apart from everything else.
/// An operating system's reason is the error's source, which the error chain (`{:#}`)
/// prints after the message.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The scenario or an override is invalid.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// A run hit a hard limit or an internal check.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// Shard files that do not make up one sweep.
    #[error("{dir}: {msg}")]
    Merge {
        /// The folder holding the shard files.
        dir: String,
        /// What is wrong with them.
        msg: String,
    },
    /// The folder of scenario files could not be read.
    #[error("cannot read the scenario folder {dir}")]
    ScenarioFolder {
        /// The folder.
        dir: String,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The folder holds no scenario files.
    #[error("no scenario files (*.toml) in {dir}")]
    NoScenarios {
        /// The folder.
        dir: String,
    },
    /// `brink new NAME` with a NAME that is not a plain file name.
    #[error("brink new {name}: {msg}")]
    NewName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        msg: String,
    },
    /// `brink new NAME` where `NAME.toml` exists.
    #[error(
        "{path} already exists; `brink new` does not replace a file (choose another name, or remove it first)"
    )]
    NewExists {
        /// The file.
        path: String,
    },
    /// The scenario has no collapse level (`brink collapse-time`).
    #[error(
        "scenario `{scenario}` has no collapse level: add a [collapse] section (e.g. `in_flight = 500`, or `pool = \"db\"` with `queue = 200`), or give a pool a queue_limit"
    )]
    NoCollapseLevel {
        /// The scenario's name.
        scenario: String,
    },
    /// The collapse-time estimate could not be completed within its settings.
    #[error("mean time to collapse: {0}")]
    Collapse(String),
    /// An output file could not be written.
    #[error("cannot write {path}")]
    Io {
        /// The file or folder.
        path: String,
        /// The operating system's reason.
        source: std::io::Error,
    },
}

impl Error {
    /// True for errors in what the user typed or wrote (exit code 2).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Error::Scenario(_)
                | Error::Merge { .. }
                | Error::ScenarioFolder { .. }
                | Error::NoScenarios { .. }
                | Error::NoCollapseLevel { .. }
                | Error::NewName { .. }
                | Error::NewExists { .. }
        )
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// Creates an output folder and its parents.
pub(crate) fn create_dir(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))
}

/// Writes an exporter's bytes to `path` atomically.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    crate::report::write_atomic(path, bytes).map_err(|e| Error::io(path, e))
}

/// Writes `<command>.provenance.json` into `dir`: what produced the `files` a command
/// wrote there, with the command line.
pub(crate) fn write_sidecar(
    dir: &Path,
    command: &str,
    produced_by: &crate::scenario::Provenance,
    files: &[&str],
) -> Result<(), Error> {
    let sidecar = crate::scenario::provenance::Sidecar {
        produced_by,
        command: crate::scenario::provenance::command_line(),
        files: files.iter().map(|f| f.to_string()).collect(),
    };
    write_file(
        &dir.join(format!("{command}.provenance.json")),
        &crate::export::sidecar_json(&sidecar),
    )
}
