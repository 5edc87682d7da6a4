//! `<kind>.shard-K-of-N.json`: a shard's runs, written and read back.

use super::*;
use crate::export::shard_json::{read_shard_json, runs_digest};

#[test]
fn shard_json_golden_and_read_back() {
    let plan = tipping_plan();
    let runs: Vec<RunPoint> = tipping_runs().into_iter().skip(1).step_by(2).collect();
    let file = ShardFile {
        shard: 1,
        of: 2,
        plan: plan.clone(),
        runs_sha256: runs_digest(&runs),
        runs: runs.clone(),
    };
    let bytes = shard_json(&file);
    golden("tipping.shard-1-of-2.json", &bytes);
    // `brink merge` reads back exactly what was written (floats round-trip).
    let back = read_shard_json(std::str::from_utf8(&bytes).unwrap()).unwrap();
    assert_eq!((back.shard, back.of), (1, 2));
    assert_eq!(back.plan, plan);
    assert_eq!(back.runs, runs);
}
