//! Shards of a sweep: `--shard K/N` writes the raw results of every N-th run from K of a
//! grid, or the whole adaptive searches of every N-th variant from K, into
//! `DIR/<scenario>/<kind>.shard-K-of-N.json`; [`merge`] joins a complete set into exactly
//! the files one unsharded run writes (the outputs are derived from the plan and the runs
//! alone, and a variant's search from its own runs alone, so this is byte for byte).

use super::sweep::write_outputs;
use super::{Error, create_dir, write_file};
use crate::export::shard_json::{SearchedVariant, ShardFile, read_shard_json, shard_json};
use crate::report::sweep_result::SweepReport;
use crate::scenario::bounded::read_bounded;
use crate::scenario::sweep::Method;
use crate::scenario::validate::control_char;
use crate::stats::plan::{Kind, Plan, Run, RunPoint};
use std::path::{Path, PathBuf};

/// One shard of a sweep: every `count`-th run from `index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// Parses `K/N` (0 <= K < N).
    pub fn parse(s: &str) -> Result<Self, String> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}` is not K/N, e.g. 0/4"))?;
        let (k, n): (u64, u64) = (
            k.trim()
                .parse()
                .map_err(|_| format!("`{k}` is not a whole number"))?,
            n.trim()
                .parse()
                .map_err(|_| format!("`{n}` is not a whole number"))?,
        );
        if n == 0 || k >= n {
            return Err(format!("`{s}`: K counts from 0 and must be below N"));
        }
        Ok(Self { index: k, count: n })
    }
}

/// The name of a shard's file.
pub fn file_name(kind: Kind, shard: Shard) -> String {
    format!(
        "{}.shard-{}-of-{}.json",
        kind.stem(),
        shard.index,
        shard.count
    )
}

/// Writes one shard of a grid, its runs, into `dir`; returns the file's path.
pub fn write(dir: &Path, plan: &Plan, shard: Shard, runs: Vec<RunPoint>) -> Result<PathBuf, Error> {
    write_shard(dir, plan, shard, runs, None)
}

/// Writes one shard of an adaptive sweep, the searches of its variants (none for a shard
/// beyond the last variant), into `dir`; returns the file's path. `plan` is the sweep's
/// without the mean times to collapse, which each search carries for its variant.
pub fn write_searched(
    dir: &Path,
    plan: &Plan,
    shard: Shard,
    searched: Vec<SearchedVariant>,
) -> Result<PathBuf, Error> {
    write_shard(dir, plan, shard, Vec::new(), Some(searched))
}

fn write_shard(
    dir: &Path,
    plan: &Plan,
    shard: Shard,
    runs: Vec<RunPoint>,
    searched: Option<Vec<SearchedVariant>>,
) -> Result<PathBuf, Error> {
    create_dir(dir)?;
    let p = dir.join(file_name(plan.kind, shard));
    let mut file = ShardFile {
        shard: shard.index,
        of: shard.count,
        plan: plan.clone(),
        runs,
        runs_sha256: String::new(),
        searched,
    };
    file.runs_sha256 = file.digest();
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
        let r = write_outputs(&folder, &plan, &runs)?;
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

/// Checks that `files` are the shards 0..N of one sweep and joins their runs in order:
/// each shard's runs match its digest and belong to its place in the plan, and all shards
/// agree on everything that changes results (the plan, and with it the scenario file's
/// digest, seed, overrides and brink's version).
fn join(dir: &Path, files: &[&PathBuf]) -> Result<(Plan, Vec<Run>), Error> {
    let bad = |msg: String| Error::Merge {
        dir: dir.display().to_string(),
        msg,
    };
    let mut shards = Vec::new();
    for p in files {
        let name = name_of(p);
        let bytes = read_bounded(p, MAX_SHARD_BYTES).map_err(|e| bad(format!("{name}: {e}")))?;
        let s = std::str::from_utf8(&bytes)
            .map_err(|e| e.to_string())
            .and_then(|text| read_shard_json(text).map_err(|e| e.to_string()))
            .map_err(|e| bad(format!("{name} is not a shard file: {e}")))?;
        check_shard(&name, &s).map_err(bad)?;
        if let Some(why) = control_text(&s.plan) {
            return Err(bad(format!(
                "{name}: {why}; the shard was edited or damaged"
            )));
        }
        shards.push((name, s));
    }
    let (first_name, first) = &shards[0];
    let n = first.of;
    for (name, s) in &shards {
        if s.of != n {
            return Err(bad(format!(
                "{name} is one of {} shards, {first_name} one of {n}: they are not one sweep; remove stale shard files",
                s.of
            )));
        }
        if let Some(why) = disagreement(&first.plan, &s.plan) {
            return Err(bad(format!(
                "{name} and {first_name} are not one sweep: {why}; remove stale shard files"
            )));
        }
        if s.searched.is_some() != first.searched.is_some() {
            let what = |f: &ShardFile| match f.searched {
                Some(_) => "adaptive searches",
                None => "a grid's runs",
            };
            return Err(bad(format!(
                "{name} holds {} and {first_name} {}: they are not one sweep; remove stale shard files",
                what(s),
                what(first)
            )));
        }
    }
    // Which of 0..N are here: at most as many as there are files, so a hand-edited N near
    // 2^64 costs nothing.
    let mut here: Vec<u64> = shards.iter().map(|(_, s)| s.shard).collect();
    here.sort_unstable();
    if let Some(w) = here.windows(2).find(|w| w[0] == w[1]) {
        return Err(bad(format!("shard {} of {n} is repeated", w[0])));
    }
    if (here.len() as u64) < n {
        let k = (0..)
            .zip(&here)
            .find(|(k, s)| k != *s)
            .map_or(here.len() as u64, |(k, _)| k);
        return Err(bad(format!(
            "shard {k} of {n} is missing ({})",
            file_name(first.plan.kind, Shard { index: k, count: n })
        )));
    }
    if first.searched.is_some() {
        return join_searched(shards).map_err(bad);
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
    let runs = plan.locate(&runs);
    Ok((plan, runs))
}

/// Joins the shards 0..N of an adaptive sweep (each checked on its own, all of one plan):
/// every variant's search from the one shard it was dealt to, the runs in variant order as
/// the unsharded search returns them, the plan with each search's tolerance and mean time
/// to collapse.
fn join_searched(shards: Vec<(String, ShardFile)>) -> Result<(Plan, Vec<Run>), String> {
    let mut plan = shards[0].1.plan.clone();
    plan.method = Method::Adaptive;
    let n = shards[0].1.of;
    let mut found: Vec<Option<SearchedVariant>> = vec![None; plan.variants.len()];
    for (_, s) in shards {
        for sv in s.searched.into_iter().flatten() {
            // check_shard has placed each search in range, in its shard, once.
            let v = sv.variant;
            found[v] = Some(sv);
        }
    }
    let mut runs = Vec::new();
    for (v, sv) in found.into_iter().enumerate() {
        let Some(sv) = sv else {
            return Err(format!(
                "the search of variant {v} ({}) is missing: {} holds none; run that shard again",
                plan.variants[v].name,
                file_name(
                    plan.kind,
                    Shard {
                        index: v as u64 % n,
                        count: n
                    }
                )
            ));
        };
        let vp = &mut plan.variants[v];
        vp.tolerance = sv.tolerance;
        vp.collapse_time = sv.collapse_time;
        runs.extend(sv.runs);
    }
    Ok((plan, runs))
}

/// The largest shard file read (256 MiB, about a million runs at some 200 bytes each):
/// a bound for a file that is not a shard.
pub const MAX_SHARD_BYTES: u64 = 256 << 20;

/// The first string of `plan` that the outputs would show with a control character in
/// it, by its JSON path: the scenario refuses them ([`control_char`]), so a shard that
/// holds one was not written by brink.
fn control_text(plan: &Plan) -> Option<String> {
    let p = &plan.provenance;
    let mut texts: Vec<(String, &str)> = vec![
        ("plan.scenario".into(), &plan.scenario),
        ("plan.title".into(), &plan.title),
        ("plan.measure".into(), &plan.measure),
        ("plan.produced_by.brink".into(), &p.brink),
        ("plan.produced_by.scenario".into(), &p.scenario),
    ];
    if let Some(v) = &p.variant {
        texts.push(("plan.produced_by.variant".into(), v));
    }
    for (i, o) in p.overrides.iter().enumerate() {
        texts.push((format!("plan.produced_by.overrides[{i}]"), o));
    }
    for (i, t) in plan.trigger.iter().enumerate() {
        texts.push((format!("plan.trigger[{i}]"), t));
    }
    for (i, a) in plan.axes.iter().enumerate() {
        texts.push((format!("plan.axes[{i}].path"), &a.path));
        for (key, s) in [("unit", &a.unit), ("label", &a.label)] {
            if let Some(s) = s {
                texts.push((format!("plan.axes[{i}].{key}"), s));
            }
        }
    }
    for (i, v) in plan.variants.iter().enumerate() {
        texts.push((format!("plan.variants[{i}].name"), &v.name));
        for (j, u) in v.untriggered.iter().enumerate() {
            texts.push((format!("plan.variants[{i}].untriggered[{j}]"), u));
        }
    }
    texts.into_iter().find_map(|(path, s)| {
        control_char(s, false).map(|c| {
            format!(
                "`{path}` holds the control character {c:?} (U+{:04X})",
                c as u32
            )
        })
    })
}

/// One shard on its own: its place in range, its runs matching their digest, and each run
/// at its place in the plan (index K modulo N, within the plan).
fn check_shard(name: &str, s: &ShardFile) -> Result<(), String> {
    if s.of == 0 || s.shard >= s.of {
        return Err(format!(
            "{name}: shard {} of {} is out of range",
            s.shard, s.of
        ));
    }
    if s.digest() != s.runs_sha256 {
        return Err(format!(
            "{name}: its runs do not match their digest (runs_sha256): they were edited or damaged after the shard was written; run the shard again"
        ));
    }
    if let Some(searched) = &s.searched {
        return check_searched(name, s, searched);
    }
    let total = s.plan.len();
    if let Some(r) = s
        .runs
        .iter()
        .find(|r| r.index >= total || r.index % s.of != s.shard)
    {
        return Err(format!(
            "{name}: run {} does not belong in shard {} of {} (a shard holds the runs whose index is K modulo N, of {total}); it was moved from another shard",
            r.index, s.shard, s.of
        ));
    }
    Ok(())
}

/// One searched shard on its own: a tipping sweep's, no runs by index, each search of a
/// variant of the plan dealt to this shard (index K modulo N), once, its runs all of that
/// variant and its tolerance a length.
fn check_searched(name: &str, s: &ShardFile, searched: &[SearchedVariant]) -> Result<(), String> {
    if s.plan.kind != Kind::Tipping || !s.runs.is_empty() {
        return Err(format!(
            "{name}: only a tipping sweep's shard holds searches, and then no runs by index; the shard was edited or damaged"
        ));
    }
    let n = s.plan.variants.len();
    let mut seen = vec![false; n];
    for sv in searched {
        let v = sv.variant;
        if v >= n || v as u64 % s.of != s.shard {
            return Err(format!(
                "{name}: the search of variant {v} does not belong in shard {} of {} (a shard holds the searches of the variants whose index is K modulo N, of {n}); it was moved from another shard",
                s.shard, s.of
            ));
        }
        if std::mem::replace(&mut seen[v], true) {
            return Err(format!("{name}: the search of variant {v} is repeated"));
        }
        if !(sv.tolerance.is_finite() && sv.tolerance >= 0.0) {
            return Err(format!(
                "{name}: the search of variant {v} has tolerance {}, not a length; the shard was edited or damaged",
                sv.tolerance
            ));
        }
        if let Some(r) = sv.runs.iter().find(|r| r.variant != v) {
            return Err(format!(
                "{name}: a run of variant {} is among the search of variant {v}; the shard was edited or damaged",
                r.variant
            ));
        }
    }
    Ok(())
}

/// Why two shards' plans are not one sweep's, in words; `None` when they are equal.
fn disagreement(a: &Plan, b: &Plan) -> Option<String> {
    if a == b {
        return None;
    }
    let (p, q) = (&a.provenance, &b.provenance);
    Some(if p.brink != q.brink {
        format!("written by brink {} and brink {}", q.brink, p.brink)
    } else if p.scenario != q.scenario || p.scenario_sha256 != q.scenario_sha256 {
        format!(
            "from different scenario files ({} sha256 {}..., {} sha256 {}...)",
            q.scenario,
            &q.scenario_sha256.get(..12).unwrap_or(""),
            p.scenario,
            &p.scenario_sha256.get(..12).unwrap_or("")
        )
    } else if p.seed != q.seed {
        format!("run with seed {} and seed {}", q.seed, p.seed)
    } else if p.overrides != q.overrides {
        format!(
            "run with different overrides ([{}] and [{}])",
            q.overrides.join(", "),
            p.overrides.join(", ")
        )
    } else {
        "their sweep settings differ (measure, points, seeds, variants or trigger)".into()
    })
}
