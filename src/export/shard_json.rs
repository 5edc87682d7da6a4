//! `<kind>.shard-K-of-N.json`: the plan of a sweep and the measures of one shard's runs
//! (a grid's runs by index, or the adaptive searches of the variants dealt to the shard),
//! which `brink merge` joins into the files of the whole sweep.

use crate::stats::plan::{CollapseTime, Plan, Run, RunPoint};
use serde::{Deserialize, Serialize};

/// The contents of a shard file.
#[derive(Debug, Serialize, Deserialize)]
pub struct ShardFile {
    /// K: this shard holds the runs whose index is K modulo N.
    pub shard: u64,
    /// N: the number of shards.
    pub of: u64,
    pub plan: Plan,
    /// A grid's runs whose index is K modulo N (none in a searched shard).
    pub runs: Vec<RunPoint>,
    /// SHA-256 of `runs` (their compact JSON, [`runs_digest`]), or in a searched shard of
    /// `searched`: `brink merge` refuses a shard whose runs were edited or mixed up since
    /// it was written. A check against accidents and stale copies, not a signature:
    /// whoever edits the runs can recompute it.
    pub runs_sha256: String,
    /// An adaptive tipping sweep's shard: the whole searches of the variants dealt to it
    /// (variant i to shard i modulo N), none for a shard with no variant. Absent from a
    /// grid's shard, which keeps its format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub searched: Option<Vec<SearchedVariant>>,
}

impl ShardFile {
    /// What `runs_sha256` should be: the digest of `searched` in a searched shard, else of
    /// `runs`.
    pub fn digest(&self) -> String {
        match &self.searched {
            Some(searched) => runs_digest(searched),
            None => runs_digest(&self.runs),
        }
    }
}

/// One variant's adaptive search, as a shard holds it: what the plan of a shard file does
/// not carry (the search's tolerance, the mean time to collapse estimated on the shard)
/// and every run the search made, in the order it returned them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchedVariant {
    /// The variant's place in the plan's `variants`.
    pub variant: usize,
    pub tolerance: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collapse_time: Option<CollapseTime>,
    pub runs: Vec<Run>,
}

/// The digest of a shard's runs (or searches): SHA-256 of their compact JSON, in hex.
pub fn runs_digest<T: Serialize>(runs: &[T]) -> String {
    let bytes = serde_json::to_vec(runs).expect("runs serialize to JSON");
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
