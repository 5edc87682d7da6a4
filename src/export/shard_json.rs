//! `<kind>.shard-K-of-N.json`: the plan of a sweep and the measures of one shard's runs,
//! which `brink merge` joins into the files of the whole sweep.

use crate::stats::plan::{Plan, RunPoint};
use serde::{Deserialize, Serialize};

/// The contents of a shard file.
#[derive(Debug, Serialize, Deserialize)]
pub struct ShardFile {
    /// K: this shard holds the runs whose index is K modulo N.
    pub shard: u64,
    /// N: the number of shards.
    pub of: u64,
    pub plan: Plan,
    pub runs: Vec<RunPoint>,
    /// SHA-256 of `runs` (their compact JSON, [`runs_digest`]): `brink merge` refuses a
    /// shard whose runs were edited or mixed up since it was written. A check against
    /// accidents and stale copies, not a signature: whoever edits the runs can recompute it.
    pub runs_sha256: String,
}

/// The digest of a shard's runs: SHA-256 of their compact JSON, in hex.
pub fn runs_digest(runs: &[RunPoint]) -> String {
    let bytes = serde_json::to_vec(runs).expect("run points serialize to JSON");
    crate::scenario::provenance::sha256_hex(&bytes)
}

/// The bytes of a shard file.
pub fn shard_json(file: &ShardFile) -> Vec<u8> {
    super::pretty_json(file)
}

/// Reads a shard file back (the plan is checked as it is read).
pub fn read_shard_json(text: &str) -> Result<ShardFile, serde_json::Error> {
    serde_json::from_str(text)
}
