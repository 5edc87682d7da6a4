//! What a set of spans says about a system: its services, how often each calls another
//! (per visit, by occurrence), in sequence or in parallel, each visit's self time, and
//! the rate of each root operation.
//!
//! A *visit* is a span whose parent is absent or of another service, with the spans of
//! the same service below it folded in (a service's internal and client spans are its own
//! work, not calls). A visit's self time is its duration minus the union of its child
//! visits' intervals (clipped to its own). A parent link to a span the file lacks makes
//! the span a root (counted as an orphan).

use super::{MAX_DEPTH, Span, TraceError};
use indexmap::IndexMap;
use std::collections::HashMap;

/// The most calls of one service to another per visit that are written (brink's pools
/// make at most 64 calls in all).
pub const MAX_OCCURRENCES: usize = 16;
/// The most calls written for one pool (brink's limit).
pub const MAX_CALLS: usize = 64;
/// How deep calls may nest below a pool (brink's limit).
pub const MAX_CALL_DEPTH: usize = 16;

/// What the spans of a file measure.
#[derive(Debug, Clone)]
pub struct Measured {
    pub spans: usize,
    pub traces: usize,
    /// Spans whose parent the file lacks, taken as roots.
    pub orphans: usize,
    /// From the first span's start to the last span's end.
    pub first_ns: u64,
    pub last_ns: u64,
    /// In order of first appearance.
    pub services: Vec<Service>,
    /// Root visits by (service, operation), in order of first appearance.
    pub roots: Vec<Root>,
}

/// One service.
#[derive(Debug, Clone)]
pub struct Service {
    pub name: String,
    /// Spans of the service (folded ones included).
    pub spans: u64,
    /// Its visits' self times (ns), in file order.
    pub self_ns: Vec<u64>,
    /// The sum of its visits' durations (ns): the busy time of the service.
    pub busy_ns: u128,
    /// Its calls, in the order its visits make them.
    pub calls: Vec<Call>,
    /// Calls beyond [`MAX_OCCURRENCES`] or [`MAX_CALLS`] that were not written.
    pub calls_cut: u64,
}

/// The `occurrence`-th call of a service's visits to `target`.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub target: usize,
    pub occurrence: usize,
    /// Visits of the caller that make it.
    pub visits: u64,
    /// Their share of the caller's visits.
    pub share: f64,
    /// Starts before the call before it has ended, in most visits making both.
    pub parallel: bool,
    /// Visits making both this call and the one before it, and of those, the overlapping.
    pub both: u64,
    pub overlapping: u64,
}

/// A root operation: a class of requests.
#[derive(Debug, Clone)]
pub struct Root {
    pub service: usize,
    pub operation: String,
    pub count: u64,
}

struct Visit {
    service: usize,
    start: u64,
    end: u64,
    children: Vec<usize>,
}

/// Measures `spans` (read from `file`, named in messages).
pub fn measure(file: &str, spans: &[Span]) -> Result<Measured, TraceError> {
    if spans.is_empty() {
        return Err(TraceError::invalid(
            file,
            ".",
            "no spans: nothing to measure",
        ));
    }
    let mut traces: IndexMap<&str, Vec<usize>> = IndexMap::new();
    for (i, s) in spans.iter().enumerate() {
        traces.entry(&s.trace).or_default().push(i);
    }
    let mut service_of: IndexMap<&str, usize> = IndexMap::new();
    for s in spans {
        let n = service_of.len();
        service_of.entry(&s.service).or_insert(n);
    }
    let mut services: Vec<Service> = service_of
        .keys()
        .map(|name| Service {
            name: name.to_string(),
            spans: 0,
            self_ns: Vec::new(),
            busy_ns: 0,
            calls: Vec::new(),
            calls_cut: 0,
        })
        .collect();
    let mut visits: Vec<Visit> = Vec::new();
    let mut roots: IndexMap<(usize, &str), u64> = IndexMap::new();
    let mut orphans = 0;
    for members in traces.values() {
        let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(members.len());
        for &i in members {
            if let Some(first) = by_id.insert(&spans[i].id, i) {
                return Err(TraceError::invalid(
                    file,
                    &spans[i].at,
                    format!(
                        "span id `{}` appears twice in trace `{}` (first at {})",
                        spans[i].id, spans[i].trace, spans[first].at
                    ),
                ));
            }
        }
        let parent_of = |i: usize| {
            spans[i]
                .parent
                .as_deref()
                .and_then(|p| by_id.get(p).copied())
        };
        // Depths, walking up each chain at most MAX_DEPTH links (a cycle never ends).
        let mut depth: HashMap<usize, usize> = HashMap::with_capacity(members.len());
        for &i in members {
            let mut chain = vec![i];
            let mut at = i;
            let base = loop {
                if let Some(&d) = depth.get(&at) {
                    chain.pop();
                    break d + 1;
                }
                match parent_of(at) {
                    None => break 0,
                    Some(p) => {
                        if chain.len() > MAX_DEPTH {
                            return Err(TraceError::invalid(
                                file,
                                &spans[i].at,
                                format!(
                                    "its parent links run more than {MAX_DEPTH} deep (or form a cycle) in trace `{}`",
                                    spans[i].trace
                                ),
                            ));
                        }
                        chain.push(p);
                        at = p;
                    }
                }
            };
            for (k, &c) in chain.iter().rev().enumerate() {
                depth.insert(c, base + k);
            }
        }
        let mut order: Vec<usize> = members.clone();
        order.sort_by_key(|i| depth[i]);
        let mut visit_of: HashMap<usize, usize> = HashMap::with_capacity(members.len());
        for i in order {
            let s = &spans[i];
            let svc = service_of[s.service.as_str()];
            services[svc].spans += 1;
            let parent = parent_of(i);
            if s.parent.is_some() && parent.is_none() {
                orphans += 1;
            }
            match parent {
                Some(p) if spans[p].service == s.service => {
                    visit_of.insert(i, visit_of[&p]);
                }
                _ => {
                    let v = visits.len();
                    visits.push(Visit {
                        service: svc,
                        start: s.start_ns,
                        end: s.end_ns,
                        children: Vec::new(),
                    });
                    visit_of.insert(i, v);
                    match parent {
                        Some(p) => visits[visit_of[&p]].children.push(v),
                        None => *roots.entry((svc, s.operation.as_str())).or_default() += 1,
                    }
                }
            }
        }
    }
    for v in &visits {
        let svc = &mut services[v.service];
        svc.busy_ns += (v.end - v.start) as u128;
        svc.self_ns.push(self_time(v, &visits));
    }
    measure_calls(&mut services, &visits);
    check_graph(file, &services)?;
    Ok(Measured {
        spans: spans.len(),
        traces: traces.len(),
        orphans,
        first_ns: spans.iter().map(|s| s.start_ns).min().unwrap_or(0),
        last_ns: spans.iter().map(|s| s.end_ns).max().unwrap_or(0),
        services,
        roots: roots
            .into_iter()
            .map(|((service, op), count)| Root {
                service,
                operation: op.to_string(),
                count,
            })
            .collect(),
    })
}

/// A visit's duration minus the union of its children's intervals within it.
fn self_time(v: &Visit, visits: &[Visit]) -> u64 {
    let mut iv: Vec<(u64, u64)> = v
        .children
        .iter()
        .map(|&c| (visits[c].start.max(v.start), visits[c].end.min(v.end)))
        .filter(|(a, b)| a < b)
        .collect();
    iv.sort_unstable();
    let mut covered = 0;
    let mut reach = v.start;
    for (a, b) in iv {
        let a = a.max(reach);
        if b > a {
            covered += b - a;
            reach = b;
        }
    }
    (v.end - v.start) - covered
}

/// A child visit keyed (target service, k-th call of the visit to it), with its start
/// offset within the caller's visit and its end.
type Keyed = ((usize, usize), u64, u64);

/// Each service's calls: per (target, occurrence) the visits making it, ordered by their
/// mean start within the caller's visit, then parallel where most visits making two
/// consecutive calls overlap them.
fn measure_calls(services: &mut [Service], visits: &[Visit]) {
    // Per visit, its children keyed (target, occurrence) with their intervals.
    let keyed: Vec<Vec<Keyed>> = visits
        .iter()
        .map(|v| {
            let mut kids: Vec<(usize, u64, u64)> = v
                .children
                .iter()
                .map(|&c| (visits[c].service, visits[c].start, visits[c].end))
                .collect();
            kids.sort_by_key(|k| (k.1, k.0));
            let mut seen: HashMap<usize, usize> = HashMap::new();
            kids.into_iter()
                .map(|(t, a, b)| {
                    let n = seen.entry(t).or_insert(0);
                    *n += 1;
                    ((t, *n), a - v.start.min(a), b)
                })
                .collect()
        })
        .collect();
    let mut per_service: Vec<IndexMap<(usize, usize), (u64, u128)>> =
        vec![IndexMap::new(); services.len()];
    let mut visit_count = vec![0u64; services.len()];
    for (v, kids) in visits.iter().zip(&keyed) {
        visit_count[v.service] += 1;
        for &(key, offset, _) in kids {
            let e = per_service[v.service].entry(key).or_default();
            e.0 += 1;
            e.1 += offset as u128;
        }
    }
    for (p, entries) in per_service.into_iter().enumerate() {
        let mut list: Vec<((usize, usize), u64, f64)> = entries
            .into_iter()
            .map(|(k, (n, off))| (k, n, off as f64 / n as f64))
            .collect();
        let cut = |l: &Vec<((usize, usize), u64, f64)>| {
            l.iter()
                .filter(|e| e.0.1 > MAX_OCCURRENCES)
                .map(|e| e.1)
                .sum::<u64>()
        };
        let mut calls_cut = cut(&list);
        list.retain(|e| e.0.1 <= MAX_OCCURRENCES);
        if list.len() > MAX_CALLS {
            list.sort_by_key(|e| std::cmp::Reverse(e.1));
            calls_cut += list[MAX_CALLS..].iter().map(|e| e.1).sum::<u64>();
            list.truncate(MAX_CALLS);
        }
        list.sort_by(|a, b| a.2.total_cmp(&b.2).then(a.0.cmp(&b.0)));
        let n = visit_count[p].max(1);
        let mut calls: Vec<Call> = list
            .iter()
            .map(|&((target, occurrence), visits, _)| Call {
                target,
                occurrence,
                visits,
                share: visits as f64 / n as f64,
                parallel: false,
                both: 0,
                overlapping: 0,
            })
            .collect();
        let index: HashMap<(usize, usize), usize> =
            list.iter().enumerate().map(|(i, e)| (e.0, i)).collect();
        for (v, kids) in visits.iter().zip(&keyed) {
            if v.service != p {
                continue;
            }
            let mut at: Vec<Option<(u64, u64)>> = vec![None; calls.len()];
            for &(key, offset, end) in kids {
                if let Some(&i) = index.get(&key) {
                    at[i] = Some((v.start + offset, end));
                }
            }
            for j in 1..calls.len() {
                if let (Some((_, prev_end)), Some((start, _))) = (at[j - 1], at[j]) {
                    calls[j].both += 1;
                    if start < prev_end {
                        calls[j].overlapping += 1;
                    }
                }
            }
        }
        for c in calls.iter_mut().skip(1) {
            c.parallel = c.overlapping * 2 > c.both;
        }
        services[p].calls = calls;
        services[p].calls_cut = calls_cut;
    }
}

/// Refuses what a scenario cannot express: services calling in a cycle, and calls nested
/// deeper than [`MAX_CALL_DEPTH`].
fn check_graph(file: &str, services: &[Service]) -> Result<(), TraceError> {
    // Longest call chain below each service, by depth-first search with colours.
    fn walk(
        s: usize,
        services: &[Service],
        state: &mut [u8],
        below: &mut [usize],
        path: &mut Vec<usize>,
    ) -> Result<(), Vec<usize>> {
        state[s] = 1;
        path.push(s);
        let mut deepest = 0;
        for c in &services[s].calls {
            match state[c.target] {
                1 => {
                    let from = path.iter().position(|&x| x == c.target).unwrap_or(0);
                    let mut cycle = path[from..].to_vec();
                    cycle.push(c.target);
                    return Err(cycle);
                }
                0 => walk(c.target, services, state, below, path)?,
                _ => {}
            }
            deepest = deepest.max(below[c.target] + 1);
        }
        below[s] = deepest;
        state[s] = 2;
        path.pop();
        Ok(())
    }
    let mut state = vec![0u8; services.len()];
    let mut below = vec![0usize; services.len()];
    for s in 0..services.len() {
        if state[s] == 0 {
            walk(s, services, &mut state, &mut below, &mut Vec::new()).map_err(|cycle| {
                let names: Vec<&str> = cycle.iter().map(|&i| services[i].name.as_str()).collect();
                TraceError::invalid(
                    file,
                    ".",
                    format!(
                        "the services call each other in a cycle ({}), which a scenario's calls cannot express",
                        names.join(" -> ")
                    ),
                )
            })?;
        }
    }
    if let Some(s) = (0..services.len()).find(|&s| below[s] > MAX_CALL_DEPTH) {
        return Err(TraceError::invalid(
            file,
            ".",
            format!(
                "calls nest {} services deep below `{}`; a scenario allows at most {MAX_CALL_DEPTH}",
                below[s], services[s].name
            ),
        ));
    }
    Ok(())
}
