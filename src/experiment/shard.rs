//! Shards of a sweep: `--shard K/N` writes the raw results of every N-th run from K into
//! `DIR/<scenario>/<kind>.shard-K-of-N.json`; [`merge`] joins a complete set into exactly
//! the files one unsharded run writes (the outputs are derived from the plan and the runs
//! alone, so this is byte for byte).

use super::plan::{Kind, Plan, RunPoint};
use super::sweep::{Shard, write_outputs};
use super::{Error, create_dir, write_file};
use crate::export::shard_json::{ShardFile, read_shard_json, shard_json};
use crate::report::sweep::SweepReport;
use std::path::{Path, PathBuf};

/// The name of a shard's file.
pub fn file_name(kind: Kind, shard: Shard) -> String {
    format!(
        "{}.shard-{}-of-{}.json",
        kind.stem(),
        shard.index,
        shard.count
    )
}

/// Writes one shard's runs into `dir`; returns the file's path.
pub fn write(dir: &Path, plan: &Plan, shard: Shard, runs: Vec<RunPoint>) -> Result<PathBuf, Error> {
    create_dir(dir)?;
    let p = dir.join(file_name(plan.kind, shard));
    let file = ShardFile {
        shard: shard.index,
        of: shard.count,
        plan: plan.clone(),
        runs,
    };
    write_file(&p, &shard_json(&file))?;
    Ok(p)
}

/// Joins the shard files in `dir` (a scenario's folder, or an output folder whose
/// scenario folders hold shards) and writes the full outputs next to them. Returns what
/// was merged: folder, kind and report, in folder order.
pub fn merge(dir: &Path) -> Result<Vec<(PathBuf, Kind, SweepReport)>, Error> {
    let mut folders = vec![dir.to_path_buf()];
    if shard_files(dir)?.is_empty() {
        let mut subs: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| unreadable(dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        subs.sort();
        folders = subs;
    }
    // Read and check everything before writing anything.
    let mut jobs = Vec::new();
    for f in &folders {
        let files = shard_files(f)?;
        for kind in [Kind::Tipping, Kind::Phase] {
            let mine: Vec<&PathBuf> = files
                .iter()
                .filter(|p| name_of(p).starts_with(&format!("{}.shard-", kind.stem())))
                .collect();
            if !mine.is_empty() {
                jobs.push((f.clone(), join(f, &mine)?));
            }
        }
    }
    if jobs.is_empty() {
        return Err(Error::Merge {
            dir: dir.display().to_string(),
            msg: "no shard files (*.shard-K-of-N.json) here or in its subfolders".into(),
        });
    }
    let mut out = Vec::new();
    for (folder, (plan, runs)) in jobs {
        let r = write_outputs(&folder, &plan, &plan.locate(&runs))?;
        out.push((folder, plan.kind, r));
    }
    Ok(out)
}

fn unreadable(p: &Path, e: std::io::Error) -> Error {
    Error::Merge {
        dir: p.display().to_string(),
        msg: format!("cannot read it: {e}"),
    }
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn shard_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| unreadable(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = name_of(p);
            n.contains(".shard-") && n.ends_with(".json") && !n.starts_with('.')
        })
        .collect();
    v.sort();
    Ok(v)
}

/// Checks that `files` are the shards 0..N of one sweep and joins their runs in order.
fn join(dir: &Path, files: &[&PathBuf]) -> Result<(Plan, Vec<RunPoint>), Error> {
    let bad = |msg: String| Error::Merge {
        dir: dir.display().to_string(),
        msg,
    };
    let mut shards = Vec::new();
    for p in files {
        let text = std::fs::read_to_string(p).map_err(|e| unreadable(p, e))?;
        let s = read_shard_json(&text)
            .map_err(|e| bad(format!("{} is not a shard file: {e}", name_of(p))))?;
        shards.push((name_of(p), s));
    }
    let (first_name, first) = &shards[0];
    let n = first.of;
    let mut seen = vec![false; n as usize];
    for (name, s) in &shards {
        if s.plan != first.plan || s.of != n {
            return Err(bad(format!(
                "{name} belongs to another sweep than {first_name} (different scenario, settings or shard count); remove stale shard files"
            )));
        }
        if s.shard >= n || std::mem::replace(&mut seen[s.shard as usize], true) {
            return Err(bad(format!(
                "{name}: shard {} of {n} is repeated or out of range",
                s.shard
            )));
        }
    }
    if let Some(k) = seen.iter().position(|x| !x) {
        return Err(bad(format!(
            "shard {k} of {n} is missing ({})",
            file_name(
                first.plan.kind,
                Shard {
                    index: k as u64,
                    count: n
                }
            )
        )));
    }
    let plan = first.plan.clone();
    let total = plan.len();
    let mut runs: Vec<RunPoint> = shards.into_iter().flat_map(|(_, s)| s.runs).collect();
    runs.sort_by_key(|r| r.index);
    if runs.len() as u64 != total || runs.iter().enumerate().any(|(i, r)| r.index != i as u64) {
        return Err(bad(format!(
            "the shards hold {} runs, not the {total} runs 0..{total} of the sweep",
            runs.len()
        )));
    }
    Ok((plan, runs))
}
