//! Experiments: a single run with its files, sweeps over many runs (tipping curves, phase
//! maps) with their shards, the hysteresis loop of a slow ramp, and `brink all` over a
//! folder of scenarios (or the bundled ones). This layer decides what runs and which files are written; the bytes come from [`crate::export`] and the
//! pictures from [`crate::report`].
//!
//! [`crate::stats::plan`] is a sweep's data (what it covers, each run's measure): the reports and
//! exporters read it, and the orchestration here fills it.

pub mod all;
pub mod calibrate;
pub mod collapse_time;
pub mod hysteresis;
pub mod import_traces;
pub mod measure;
pub mod naming;
pub mod new;
pub mod observe;
pub mod run;
pub mod search;
pub mod shard;
pub mod source;
pub mod splitting;
pub mod sweep;

pub use observe::{Observer, Quiet, RunWritten, SweepOutcome, SweepWritten};

use crate::model::SimError;
use crate::report::files::FileSet;
use crate::scenario::ScenarioError;
use std::io::Write;
use std::path::Path;

/// Why an experiment failed. Bad input (exit code 2) is told apart from everything else.
/// An operating system's reason is the error's source, which the error chain (`{:#}`)
/// prints after the message.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The scenario or an override is invalid.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// `--deny-warnings` and the scenario has warnings (printed before).
    #[error("{count} warning(s) with --deny-warnings; nothing written")]
    Warnings { count: usize },
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
    /// A trace file that cannot be read (`brink import-traces`).
    #[error(transparent)]
    Traces(#[from] crate::traces::TraceError),
    /// `brink import-traces --out FILE` where FILE exists, without `--force`.
    #[error("{path} already exists; `brink import-traces` replaces a file only with --force")]
    ImportExists {
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
    /// An output folder is a symbolic link (brink does not write through one).
    #[error(
        "{path}: the output folder is a symbolic link; brink writes only into a real folder (give the folder it points to, or remove the link)"
    )]
    LinkedFolder {
        /// The folder as named.
        path: String,
    },
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
                | Error::Warnings { .. }
                | Error::Traces(_)
                | Error::ImportExists { .. }
                | Error::LinkedFolder { .. }
        )
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// Creates an output folder and its parents; a symbolic link at the folder's own name is
/// refused ([`crate::report::files::create_folder`]).
pub(crate) fn create_dir(dir: &Path) -> Result<(), Error> {
    crate::report::files::create_folder(dir).map_err(|e| folder_error(dir, e))
}

/// The error for an output folder that could not be created or used.
fn folder_error(dir: &Path, e: std::io::Error) -> Error {
    if crate::report::files::is_linked_folder(&e) {
        Error::LinkedFolder {
            path: dir.display().to_string(),
        }
    } else {
        Error::io(dir, e)
    }
}

/// Writes an exporter's bytes to `path` atomically.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    crate::report::write_atomic(path, bytes).map_err(|e| Error::io(path, e))
}

/// A set of output files (a run's, a sweep's): written into a staging folder, then swapped
/// into its folder at once by [`commit`](Self::commit), so that the set appears whole or not
/// at all ([`FileSet`]). Errors name the file as it will be, not its staged copy.
pub(crate) struct Outputs {
    set: FileSet,
}

impl Outputs {
    /// Starts the set `name` (`run`, `tipping`, ...) of folder `dir`, creating it.
    pub(crate) fn begin(dir: &Path, name: &str) -> Result<Self, Error> {
        let set = FileSet::begin(dir, name).map_err(|e| folder_error(dir, e))?;
        Ok(Self { set })
    }

    /// Also removes these files of the folder if this set does not write them.
    pub(crate) fn replacing(self, names: &[&str]) -> Self {
        Self {
            set: self.set.replacing(names),
        }
    }

    /// Writes (and syncs) one file of the set, created exclusively: a name already in the
    /// stage (a link planted there) is refused, never written through.
    pub(crate) fn write(&self, name: &str, bytes: &[u8]) -> Result<(), Error> {
        crate::report::files::create_new(&self.set.stage().join(name))
            .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
            .map_err(|e| Error::io(&self.set.dir().join(name), e))
    }

    /// Draws files of the set with `draw`, given the folder to write them in; an error
    /// names `name`, the first of them.
    pub(crate) fn draw(
        &self,
        name: &str,
        draw: impl FnOnce(&Path) -> std::io::Result<()>,
    ) -> Result<(), Error> {
        draw(self.set.stage()).map_err(|e| Error::io(&self.set.dir().join(name), os_cause(e)))
    }

    /// Writes `<command>.provenance.json`, last: what produced the set's files, with the
    /// command line and the names of the files written so far.
    pub(crate) fn sidecar(
        &self,
        command: &str,
        produced_by: &crate::scenario::Provenance,
    ) -> Result<(), Error> {
        let stage = self.set.stage();
        let mut files: Vec<String> = std::fs::read_dir(stage)
            .map_err(|e| Error::io(self.set.dir(), e))?
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        files.sort();
        let sidecar = crate::scenario::provenance::Sidecar {
            produced_by,
            command: crate::scenario::provenance::command_line(),
            files,
        };
        self.write(
            &format!("{command}.provenance.json"),
            &crate::export::sidecar_json(&sidecar),
        )
    }

    /// Swaps the set in.
    pub(crate) fn commit(self) -> Result<(), Error> {
        let dir = self.set.dir().to_path_buf();
        self.set.commit().map_err(|e| Error::io(&dir, e))?;
        Ok(())
    }
}

/// The operating system's error inside a drawing library's error, which carries it only as
/// text (`backend error: ... "No space left on device (os error 28)"`): so that a full disk
/// reads the same whichever file hit it.
fn os_cause(e: std::io::Error) -> std::io::Error {
    if e.raw_os_error().is_some() {
        return e;
    }
    let text = e.to_string();
    let code = text
        .rsplit_once("(os error ")
        .and_then(|(_, rest)| rest.split(')').next().and_then(|n| n.parse::<i32>().ok()));
    match code {
        Some(c) => std::io::Error::from_raw_os_error(c),
        None => e,
    }
}
