//! Experiments: a single run with its outputs, and sweeps over many runs (tipping curves,
//! phase maps) with their shards.

pub mod run;
pub mod shard;
pub mod sweep;

use crate::model::SimError;
use crate::scenario::ScenarioError;

/// Why an experiment failed. Bad input (exit code 2) is told apart from everything else.
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
    /// An output file could not be written.
    #[error("cannot write {path}: {source}")]
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
        matches!(self, Error::Scenario(_) | Error::Merge { .. })
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
