//! What produced a set of outputs: brink's version, the layout of its files, the scenario
//! file's digest, the seed, the variant and the overrides. Every JSON output carries it as
//! `produced_by`; every folder of outputs gets a sidecar `<command>.provenance.json` that
//! adds the command line and the files written (the CSV files and pictures have no room
//! for it).
//!
//! `produced_by` holds only what changes results, so that the same scenario, seed and
//! overrides give the same bytes whatever the output folder or `--jobs`: the command line
//! lives in the sidecar alone.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

/// The version of the output files' layout: raised when a field or column is renamed or
/// removed, or changes meaning (adding one does not raise it).
pub const SCHEMA: u32 = 1;

/// What produced an output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// brink's version (`brink --version`).
    pub brink: String,
    /// [`SCHEMA`] when written.
    pub schema: u32,
    /// The scenario's name (its file stem).
    pub scenario: String,
    /// SHA-256 of the scenario file's bytes, in hex.
    pub scenario_sha256: String,
    /// The seed every random stream derives from (the file's, or `--seed`).
    pub seed: u64,
    /// The variant applied, if any (a sweep lists its variants in its own fields).
    pub variant: Option<String>,
    /// The overrides in the order applied, as `path=value` (`--seed` is `seed=N`).
    pub overrides: Vec<String>,
    /// The service laws fitted to measurements (`law = "percentiles"` or `"histogram"`):
    /// the tail family, its parameters, and measured against fitted percentiles. Left out
    /// when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fitted: Vec<crate::laws::fitted::FitReport>,
}

impl Provenance {
    /// The provenance of a scenario read from `text`; seed, variant and overrides are
    /// filled in as they are applied.
    pub fn of_text(scenario: &str, text: &str) -> Self {
        Provenance {
            brink: env!("CARGO_PKG_VERSION").to_string(),
            schema: SCHEMA,
            scenario: scenario.to_string(),
            scenario_sha256: sha256_hex(text.as_bytes()),
            seed: 0,
            variant: None,
            overrides: Vec::new(),
            fitted: Vec::new(),
        }
    }
}

/// SHA-256 of `bytes` in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

static COMMAND_LINE: OnceLock<Vec<String>> = OnceLock::new();

/// Records the command line for the sidecars (the binary calls it once, first thing).
pub fn record_command_line(args: impl IntoIterator<Item = String>) {
    let _ = COMMAND_LINE.set(args.into_iter().collect());
}

/// The command line recorded, or nothing (a library caller).
pub fn command_line() -> &'static [String] {
    COMMAND_LINE.get().map_or(&[], |v| v.as_slice())
}

/// The sidecar `<command>.provenance.json` of a folder of outputs.
#[derive(Debug, Serialize)]
pub struct Sidecar<'a> {
    #[serde(flatten)]
    pub produced_by: &'a Provenance,
    /// The command line that wrote the files (`[]` when called as a library).
    pub command: &'a [String],
    /// The files it wrote, by name, in the folder of the sidecar.
    pub files: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_sha256() {
        // FIPS 180-2 test vector.
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
