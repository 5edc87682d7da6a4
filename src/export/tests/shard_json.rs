//! `<kind>.shard-K-of-N.json`: a shard's runs, written and read back.

use super::*;
use crate::export::shard_json::{SearchedVariant, read_shard_json, runs_digest};

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
        searched: None,
    };
    let bytes = shard_json(&file);
    golden("tipping.shard-1-of-2.json", &bytes);
    // `brink merge` reads back exactly what was written (floats round-trip).
    let back = read_shard_json(std::str::from_utf8(&bytes).unwrap()).unwrap();
    assert_eq!((back.shard, back.of), (1, 2));
    assert_eq!(back.plan, plan);
    assert_eq!(back.runs, runs);
}

/// An adaptive sweep's shard (issue 27): its variants' searches, with what the plan of a
/// shard file leaves out (tolerance, mean time to collapse), read back exactly; the grid's
/// shard above has no `searched` key, so its golden bytes hold.
#[test]
fn a_searched_shard_reads_back_its_searches() {
    let plan = tipping_plan();
    let runs = plan.locate(&tipping_runs());
    let searched = vec![SearchedVariant {
        variant: 0,
        tolerance: 0.125,
        collapse_time: None,
        runs: runs.clone(),
    }];
    let file = ShardFile {
        shard: 0,
        of: 3,
        plan: plan.clone(),
        runs: Vec::new(),
        runs_sha256: runs_digest(&searched),
        searched: Some(searched.clone()),
    };
    let bytes = shard_json(&file);
    let text = std::str::from_utf8(&bytes).unwrap();
    assert!(text.contains("\"searched\": ["), "{text}");
    let back = read_shard_json(text).unwrap();
    assert_eq!(back.searched.as_deref(), Some(&searched[..]));
    assert_eq!(back.runs_sha256, runs_digest(&searched));
    assert_eq!(back.searched.unwrap()[0].runs, runs);
}
