//! Pool calls: each `[[pool.NAME.calls]]` entry becomes a class of its own (its step, with
//! its timeout, retry policy and breaker at the class level, so one breaker per
//! dependency), and the pool's calls are grouped into stages that run one after another.
//! The call graph must be acyclic and at most [`MAX_CALL_DEPTH`] pools deep.

use super::check::{MAX_FACTOR, Targets, V, bad, finite_nonneg, int_in, nonzero_dur, up_to};
use super::class::{retry, step};
use crate::engine::time::SimTime;
use crate::scenario::raw::*;
use crate::scenario::spec::*;
use indexmap::IndexMap;

/// The most pools a chain of calls may pass through below the pool a client queries.
pub const MAX_CALL_DEPTH: usize = 16;
/// The most calls one pool may declare. (Calls that end at once, such as cache hits, let
/// the next stage start within the same event, so the stages bound how deep that nests.)
pub const MAX_CALLS: usize = 64;

/// Each pool's endpoints as its calls name them: `""` (jobs that name none) first, then
/// each name in file order.
pub fn endpoints(raw: &IndexMap<String, RawPool>) -> V<Vec<Vec<String>>> {
    let mut out = Vec::new();
    for (pname, rp) in raw {
        let mut eps = vec![String::new()];
        for (i, rc) in rp.calls.iter().enumerate() {
            if let Some(e) = &rc.endpoint {
                if e.trim().is_empty() || e.contains('/') {
                    return bad(
                        format!("pool.{pname}.calls.{i}.endpoint"),
                        format!("`{e}` is not an endpoint name (not empty, no `/`)"),
                    );
                }
                if !eps.contains(e) {
                    eps.push(e.clone());
                }
            }
        }
        out.push(eps);
    }
    Ok(out)
}

/// Validates every pool's calls. Fills in each pool's endpoints and plans; returns the
/// calls and their classes, numbered from `first_class` on.
pub fn calls(
    raw: &IndexMap<String, RawPool>,
    pools: &mut [PoolCfg],
    targets: &Targets,
    first_class: usize,
) -> V<(Vec<CallCfg>, Vec<ClassCfg>)> {
    let pool_names = targets.pools;
    let (mut calls, mut classes) = (Vec::new(), Vec::new());
    // The pools some propagating call queries.
    let mut propagated_into: Vec<usize> = Vec::new();
    for (p, (pname, rp)) in raw.iter().enumerate() {
        // (endpoint name, parallel, call index) of each of the pool's calls.
        let mut made: Vec<(Option<&String>, bool, usize)> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        if rp.calls.len() > MAX_CALLS {
            return bad(
                format!("pool.{pname}.calls"),
                format!(
                    "{} calls; a pool may make at most {MAX_CALLS}",
                    rp.calls.len()
                ),
            );
        }
        for (i, rc) in rp.calls.iter().enumerate() {
            let path = format!("pool.{pname}.calls.{i}");
            if rc.query.is_none() {
                return bad(
                    path,
                    "a call needs `query = \"<pool>\"` naming the pool it calls",
                );
            }
            let st = step(&path, rc, targets, true)?;
            let name = match &rc.name {
                Some(n) if n.trim().is_empty() => {
                    return bad(format!("{path}.name"), "must not be empty");
                }
                Some(n) => {
                    super::check::name(&format!("{path}.name"), n)?;
                    n.clone()
                }
                None => rc.query.clone().unwrap_or_default(),
            };
            if names.contains(&name) {
                return bad(
                    format!("{path}.name"),
                    format!(
                        "pool `{pname}` already has a call named `{name}`; give each call to the same target its own `name`"
                    ),
                );
            }
            names.push(name.clone());
            if rc.parallel && i == 0 {
                return bad(
                    format!("{path}.parallel"),
                    "the first call has no call before it to run alongside",
                );
            }
            let timeout_ns = match rc.timeout {
                Some(t) => nonzero_dur(&format!("{path}.timeout"), t)?,
                None => SimTime::MAX,
            };
            let retry = match &rc.retry {
                Some(r) => retry(&format!("{path}.retry"), r)?,
                None => RetryCfg::none(),
            };
            let fallback = match &rc.fallback {
                Some(f) => Some(
                    finite_nonneg(&format!("{path}.fallback.cost"), f.cost)
                        .and_then(|x| up_to(&format!("{path}.fallback.cost"), x, MAX_FACTOR))?,
                ),
                None => None,
            };
            let max_in_flight = match rc.max_in_flight {
                Some(n) => int_in(&format!("{path}.max_in_flight"), n, 1, 100_000_000)? as u32,
                None => u32::MAX,
            };
            let probability = match rc.probability {
                Some(x) if x > 0.0 && x <= 1.0 => x,
                Some(x) => {
                    return bad(
                        format!("{path}.probability"),
                        format!(
                            "must be a share of the jobs above 0 and at most 1, not {}",
                            super::check::short(x)
                        ),
                    );
                }
                None => 1.0,
            };
            let idx = calls.len();
            let propagate = rc.deadline == Some(DeadlineMode::Propagate);
            if propagate {
                propagated_into.push(st.query.pool);
            }
            calls.push(CallCfg {
                propagate,
                name: format!("{pname}.{name}"),
                pool: p,
                class: first_class + idx,
                fallback,
                max_in_flight,
                probability,
            });
            classes.push(ClassCfg {
                name: format!("{pname}.{name}"),
                rate_per_s: 0.0,
                profile: Profile {
                    points: vec![],
                    every: None,
                },
                timeout_ns,
                retry,
                rate_limit: None,
                steps: vec![st],
                call: Some(idx),
                sync: None,
                users: None,
            });
            made.push((rc.endpoint.as_ref(), rc.parallel, idx));
        }
        // Each endpoint's jobs make the calls without an endpoint and their own, in file
        // order; a parallel call joins the stage of the call before it in that order.
        let eps = &targets.endpoints[p];
        let plans: Vec<Vec<Vec<usize>>> = eps
            .iter()
            .map(|e| {
                let mut stages: Vec<Vec<usize>> = Vec::new();
                for &(on, parallel, idx) in &made {
                    if on.is_some_and(|x| x != e) {
                        continue;
                    }
                    match stages.last_mut() {
                        Some(stage) if parallel => stage.push(idx),
                        _ => stages.push(vec![idx]),
                    }
                }
                stages
            })
            .collect();
        pools[p].has_calls = !made.is_empty();
        pools[p].endpoints = eps.clone();
        pools[p].plans = plans;
    }
    for p in propagated_into {
        pools[p].drops_propagated = true;
    }
    acyclic(pool_names, &calls, &classes, first_class)?;
    Ok((calls, classes))
}

/// Refuses a cycle of calls (naming its path) and a chain deeper than [`MAX_CALL_DEPTH`].
fn acyclic(names: &[String], calls: &[CallCfg], classes: &[ClassCfg], first: usize) -> V<()> {
    // edges[p]: (call index within its pool, target pool) of pool p's calls.
    let mut edges: Vec<Vec<(usize, usize)>> = vec![Vec::new(); names.len()];
    for c in calls {
        let i = edges[c.pool].len();
        edges[c.pool].push((i, classes[c.class - first].steps[0].query.pool));
    }
    // depth[p]: the longest chain of calls below pool p, once known.
    let mut depth: Vec<Option<usize>> = vec![None; names.len()];
    let mut stack: Vec<usize> = Vec::new();
    for p in 0..names.len() {
        walk(p, &edges, names, &mut depth, &mut stack)?;
    }
    Ok(())
}

/// Depth-first walk from pool `p`; `stack` holds the pools on the current path.
fn walk(
    p: usize,
    edges: &[Vec<(usize, usize)>],
    names: &[String],
    depth: &mut [Option<usize>],
    stack: &mut Vec<usize>,
) -> V<usize> {
    if let Some(d) = depth[p] {
        return Ok(d);
    }
    stack.push(p);
    let mut d = 0;
    for &(i, q) in &edges[p] {
        if let Some(at) = stack.iter().position(|&s| s == q) {
            let path: Vec<&str> = stack[at..]
                .iter()
                .chain(std::iter::once(&q))
                .map(|&s| names[s].as_str())
                .collect();
            return bad(
                format!("pool.{}.calls.{i}.query", names[p]),
                format!(
                    "the calls form a cycle: {}; a job would wait on itself",
                    path.join(" -> ")
                ),
            );
        }
        let below = walk(q, edges, names, depth, stack)? + 1;
        if below > MAX_CALL_DEPTH {
            return bad(
                format!("pool.{}.calls.{i}.query", names[p]),
                format!(
                    "calls nest {below} pools deep below `{}`; at most {MAX_CALL_DEPTH} are allowed",
                    names[p]
                ),
            );
        }
        d = d.max(below);
    }
    stack.pop();
    depth[p] = Some(d);
    Ok(d)
}
