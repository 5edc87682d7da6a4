//! The system drawn (`structure.svg`): a scenario's classes, caches, pools and calls as a
//! diagram, its edges labelled with the rates a run measured and the loop that sustains
//! its failure highlighted.
//!
//! Hand-built SVG text (no plotters chart: boxes and arrows), in the bundled DejaVu font's
//! family. Three pure stages, each tested on its own:
//! - [`graph`]: the nodes (client classes, caches, pools) and edges (a class's steps, a
//!   cache's misses, every pool call once) of a validated [`Config`];
//! - [`Rates`] and [`diagram`]: the labels, from a run's time-series rows (time-weighted
//!   means over the rows given: the whole run, or the rows so far on the live page), and
//!   the highlights, from [`Sustained`] (the narrative's one decision of what sustains a
//!   failure: [`super::narrative::sustained`]);
//! - [`layout`] and [`svg`]: columns by call depth (a node's column is its longest path
//!   from a client), boxes stacked in a column without overlap, edge labels in the gaps
//!   between columns, spread so that none overlaps another; the loop's return paths run
//!   under the boxes, numbered, and told in words under the picture.
//!
//! Text is 14 px and more in a `viewBox` of the picture's own size: shown at that size (the
//! report page scrolls it sideways on a phone rather than shrink it), no text is smaller.

use super::narrative::{Sign, Sustained, clock};
use super::verdict::{Fault, Verdict, percent, row_spans};
use crate::engine::number::sig3;
use crate::engine::time::secs_to_ns;
use crate::scenario::{Column, Config, Measure, Owner};
use std::fmt::Write as _;

/// What a box stands for, with its index into the [`Config`]'s list of its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A client class (`Config::classes`, one of the first `Config::clients`).
    Class(usize),
    /// A cache tier (`Config::caches`).
    Cache(usize),
    /// A server pool (`Config::pools`).
    Pool(usize),
}

/// What an edge carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flow {
    /// A client class's requests into its first step's cache or pool (`first`), or into a
    /// later step's.
    Requests { class: usize, first: bool },
    /// A cache's misses into the pool behind it.
    Misses { cache: usize },
    /// Pool calls (indices into `Config::calls`) from one pool into one cache or pool.
    Calls(Vec<usize>),
}

/// A box of the diagram.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: Kind,
    pub name: String,
    /// Lines under the name (rates, hit ratio, how busy).
    pub lines: Vec<String>,
    /// On the loop that sustains the failure.
    pub hot: bool,
}

/// An arrow from one box to another.
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    pub flow: Flow,
    /// Its label's lines (empty: none).
    pub label: Vec<String>,
    /// On the loop that sustains the failure.
    pub hot: bool,
}

/// A return path of the loop: from box `from` back to box `to` (the same box: a loop of
/// its own), told in words under the picture as `text`.
#[derive(Debug, Clone, PartialEq)]
pub struct Back {
    pub from: usize,
    pub to: usize,
    pub text: String,
}

/// The structure of a scenario, with what a run measured on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagram {
    pub title: String,
    /// How the rates are averaged (`rates: means over the whole run, 0 s to 10 min`).
    pub note: String,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    /// The loop's return paths (none when nothing sustains a failure).
    pub backs: Vec<Back>,
    /// The loop in words (or why none is highlighted), under the picture.
    pub caption: Vec<String>,
}

/// The nodes and edges of `cfg`, unlabelled: every client class, cache and pool (in that
/// order, each in file order), an edge per class and distinct target of its steps, per
/// cache and pool behind it, and per pair of a calling pool and a target (each call on
/// exactly one edge).
pub fn graph(cfg: &Config) -> (Vec<Node>, Vec<Edge>) {
    let node = |kind, name: &str| Node {
        kind,
        name: name.to_string(),
        lines: vec![],
        hot: false,
    };
    let mut nodes: Vec<Node> = cfg
        .client_classes()
        .iter()
        .enumerate()
        .map(|(i, c)| node(Kind::Class(i), &c.name))
        .collect();
    let cache0 = nodes.len();
    nodes.extend(
        cfg.caches
            .iter()
            .enumerate()
            .map(|(i, c)| node(Kind::Cache(i), &c.name)),
    );
    let pool0 = nodes.len();
    nodes.extend(
        cfg.pools
            .iter()
            .enumerate()
            .map(|(i, p)| node(Kind::Pool(i), &p.name)),
    );
    let mut edges: Vec<Edge> = Vec::new();
    // A step's target, and the cache's edge to its pool.
    let step_target = |edges: &mut Vec<Edge>, step: &crate::scenario::StepCfg| {
        let pool = pool0 + step.query.pool;
        match step.cache {
            Some(c) => {
                add_edge(edges, cache0 + c, pool, Flow::Misses { cache: c });
                cache0 + c
            }
            None => pool,
        }
    };
    for (i, class) in cfg.client_classes().iter().enumerate() {
        for (k, step) in class.steps.iter().enumerate() {
            let to = step_target(&mut edges, step);
            add_edge(
                &mut edges,
                i,
                to,
                Flow::Requests {
                    class: i,
                    first: k == 0,
                },
            );
        }
    }
    for (i, call) in cfg.calls.iter().enumerate() {
        for step in &cfg.classes[call.class].steps {
            let to = step_target(&mut edges, step);
            add_edge(&mut edges, pool0 + call.pool, to, Flow::Calls(vec![i]));
        }
    }
    (nodes, edges)
}

/// Adds an edge, or the calls of `flow` to the edge already between `from` and `to`.
fn add_edge(edges: &mut Vec<Edge>, from: usize, to: usize, flow: Flow) {
    if let Some(e) = edges.iter_mut().find(|e| e.from == from && e.to == to) {
        if let (Flow::Calls(have), Flow::Calls(more)) = (&mut e.flow, flow) {
            have.extend(more);
        }
        return;
    }
    edges.push(Edge {
        from,
        to,
        flow,
        label: vec![],
        hot: false,
    });
}

/// Each node's column: its longest path (in edges) from a node without inputs. Edges that
/// would close a cycle are not followed past `nodes` rounds, so a cycle cannot hang it.
pub fn columns(nodes: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut col = vec![0usize; nodes];
    for _ in 0..nodes {
        let mut changed = false;
        for &(a, b) in edges {
            if a != b && col[b] < col[a] + 1 && col[a] + 1 < nodes.max(1) {
                col[b] = col[a] + 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    col
}

/// The time-weighted mean of each column of the rows over a window: a row lasts until the
/// next (the last until `end_s`) and weighs by its overlap with the window; NaN where no
/// row in it has a value.
#[derive(Debug, Clone, PartialEq)]
pub struct Rates {
    means: Vec<f64>,
}

impl Rates {
    pub fn of(
        columns: &[Column],
        rows: &[Vec<f64>],
        (from_s, to_s): (f64, f64),
        end_s: f64,
    ) -> Self {
        let mut sum = vec![0.0; columns.len()];
        let mut weight = vec![0.0; columns.len()];
        let (from, to) = (secs_to_ns(from_s.max(0.0)), secs_to_ns(to_s.max(0.0)));
        for (row, start, next) in row_spans(rows, secs_to_ns(end_s)) {
            let w = next.min(to).saturating_sub(start.max(from)) as f64;
            for (k, &x) in row.iter().enumerate().take(columns.len()) {
                if x.is_finite() && w > 0.0 {
                    sum[k] += x * w;
                    weight[k] += w;
                }
            }
        }
        let means = sum
            .iter()
            .zip(&weight)
            .map(|(s, w)| if *w > 0.0 { s / w } else { f64::NAN })
            .collect();
        Self { means }
    }

    fn get(&self, columns: &[Column], owner: Owner, m: Measure) -> Option<f64> {
        columns
            .iter()
            .position(|c| c.owner == owner && c.measure == m)
            .map(|k| self.means[k])
            .filter(|x| x.is_finite())
    }
}

/// A rate in words: `120 requests/s` (`-` when unmeasured).
fn rate(x: Option<f64>, unit: &str) -> String {
    match x {
        Some(x) => format!("{} {unit}", sig3(x)),
        None => format!("- {unit}"),
    }
}

/// What a diagram is drawn from: the scenario, a run's rows (with their schema) up to
/// `end_s`, and what sustains its failure.
pub struct Measured<'a> {
    pub cfg: &'a Config,
    pub title: &'a str,
    pub columns: &'a [Column],
    pub rows: &'a [Vec<f64>],
    pub end_s: f64,
    /// The whole run (else the rows so far of a live run).
    pub finished: bool,
    pub sustained: &'a Sustained,
}

/// The diagram of a run: [`graph`] labelled with its [`Rates`] and its loop highlighted.
pub fn diagram(m: &Measured) -> Diagram {
    let cfg = m.cfg;
    let (mut nodes, mut edges) = graph(cfg);
    // The loop's own stretch, where there is one: the whole run's means would hide it.
    let window = match m.sustained {
        Sustained::Loop {
            since_s, until_s, ..
        } => (*since_s, until_s.unwrap_or(m.end_s)),
        _ => (0.0, m.end_s),
    };
    let rates = Rates::of(m.columns, m.rows, window, m.end_s);
    let get = |o, ms| rates.get(m.columns, o, ms);
    // Lookups into a cache: the requests (attempts) of the steps that look it up, times
    // their mean keys; each step entered by every attempt of its class (an upper bound for
    // a later step).
    let mut lookups = vec![None::<f64>; cfg.caches.len()];
    for (i, class) in cfg.classes.iter().enumerate() {
        let Some(att) = get(Owner::Class(i), Measure::Attempts).or_else(|| {
            class
                .call
                .and_then(|c| get(Owner::Call(c), Measure::CallsPerS))
        }) else {
            continue;
        };
        for step in &class.steps {
            if let Some(c) = step.cache {
                *lookups[c].get_or_insert(0.0) += att * step.keys.mean();
            }
        }
    }
    for n in &mut nodes {
        n.lines = match n.kind {
            Kind::Class(i) => match &cfg.classes[i].users {
                Some(u) => vec![format!("{} users", sig3(u.users as f64))],
                None => vec!["clients".into()],
            },
            Kind::Cache(c) => vec![
                match get(Owner::Cache(c), Measure::HitRatio) {
                    Some(h) => format!("hit ratio {}", percent(h)),
                    None => "hit ratio -".into(),
                },
                rate(lookups[c], "lookups/s"),
            ],
            Kind::Pool(p) => vec![
                rate(get(Owner::Pool(p), Measure::QueriesPerS), "queries/s in"),
                match (
                    get(Owner::Pool(p), Measure::Utilization),
                    get(Owner::Pool(p), Measure::PrimaryUtilization),
                ) {
                    (Some(u), Some(pu)) => {
                        format!("busy {}, primaries {}", percent(u), percent(pu))
                    }
                    (Some(u), None) => format!("busy {}", percent(u)),
                    _ => "busy -".into(),
                },
            ],
        };
    }
    for e in &mut edges {
        e.label = match &e.flow {
            Flow::Requests { class, first: true } => {
                let offered = get(Owner::Class(*class), Measure::Offered);
                let attempts = get(Owner::Class(*class), Measure::Attempts);
                let mut l = vec![rate(offered, "requests/s")];
                if let (Some(o), Some(a)) = (offered, attempts)
                    && a > 1.005 * o
                {
                    l.push(rate(Some(a), "attempts/s"));
                }
                l
            }
            Flow::Requests { .. } => vec!["next step".into()],
            Flow::Misses { .. } => vec!["misses".into()],
            Flow::Calls(calls) => {
                let sum = calls
                    .iter()
                    .map(|&c| get(Owner::Call(c), Measure::CallsPerS))
                    .sum::<Option<f64>>();
                vec![rate(sum, "calls/s")]
            }
        };
    }
    let mut backs = Vec::new();
    let mut caption = Vec::new();
    match m.sustained {
        Sustained::Unknown => caption.push(if m.rows.is_empty() {
            "No loop highlighted: no rows measured yet.".into()
        } else {
            "No loop highlighted: the scenario has no health rule (no [tipping] measure).".into()
        }),
        Sustained::Healthy => caption.push(format!(
            "No loop highlighted: the run stays healthy{}.",
            if m.finished { "" } else { " so far" }
        )),
        Sustained::Transient => caption.push(format!(
            "No loop highlighted: the run is unhealthy only while a trigger lasts{}; nothing sustains the fall.",
            if m.finished { "" } else { " so far" }
        )),
        Sustained::Loop {
            since_s,
            until_s,
            verdict,
            busiest,
            signs,
        } => {
            let to = match until_s {
                Some(t) => clock(*t),
                None if m.finished => "the end".into(),
                None => "now".into(),
            };
            caption.push(format!(
                "Highlighted: what sustains the failure from {} to {to} ({verdict}).",
                clock(*since_s)
            ));
            // Nodes are the clients, the caches and the pools, in that order ([`graph`]).
            let (clients, caches) = (cfg.clients, cfg.caches.len());
            let mut outlined = None;
            let pool_node = |p: usize| Some(clients + caches + p);
            let cache_node = |c: usize| Some(clients + c);
            // The box a class's first step goes to, and that step's pool.
            let first = |class: usize| {
                cfg.classes[class].steps.first().map(|s| {
                    let pool = pool_node(s.query.pool);
                    (s.cache.and_then(cache_node), pool)
                })
            };
            for sign in signs {
                match *sign {
                    Sign::Retries { class, now, before } => {
                        let text = format!(
                            "timeouts come back as retries: {} attempts per request of `{}` ({} before)",
                            sig3(now),
                            cfg.classes[class].name,
                            sig3(before)
                        );
                        // The class's box (a client) or its calling pool (a call).
                        let caller = match cfg.classes[class].call {
                            Some(c) => pool_node(cfg.calls[c].pool),
                            None => Some(class),
                        };
                        let Some(caller) = caller else { continue };
                        let Some((cache, Some(pool))) = first(class) else {
                            continue;
                        };
                        for e in &mut edges {
                            let out_of = e.from == caller
                                && match (&e.flow, cfg.classes[class].call) {
                                    (Flow::Requests { class: c, .. }, None) => *c == class,
                                    (Flow::Calls(cs), Some(c)) => cs.contains(&c),
                                    _ => false,
                                };
                            let onward = cache.is_some_and(|c| e.from == c && e.to == pool);
                            if out_of || onward {
                                e.hot = true;
                            }
                        }
                        nodes[pool].hot = true;
                        backs.push(Back {
                            from: pool,
                            to: caller,
                            text,
                        });
                    }
                    Sign::HitRatio { cache, now, before } => {
                        let Some(c) = cache_node(cache) else {
                            continue;
                        };
                        let mut behind = None;
                        for e in &mut edges {
                            if e.from == c || e.to == c {
                                e.hot = true;
                            }
                            if e.from == c {
                                behind = Some(e.to);
                            }
                        }
                        nodes[c].hot = true;
                        if let Some(p) = behind {
                            nodes[p].hot = true;
                            backs.push(Back {
                                from: p,
                                to: c,
                                text: format!(
                                    "misses load `{}`, whose timeouts refill nothing: `{}` hits {} ({} before)",
                                    nodes[p].name,
                                    cfg.caches[cache].name,
                                    percent(now),
                                    percent(before)
                                ),
                            });
                        }
                    }
                }
            }
            if let Some(p) = busiest.and_then(|p| pool_node(p).map(|n| (p, n))) {
                let (pool, n) = p;
                let slows = cfg.pools[pool].load_slowdown.is_some()
                    && matches!(verdict, Verdict::Stuck { .. });
                let expired = matches!(
                    verdict,
                    Verdict::Stuck {
                        cause: Fault::ExpiredWork,
                        ..
                    }
                );
                if slows {
                    backs.push(Back {
                        from: n,
                        to: n,
                        text: format!(
                            "`{}` slows with its own load: {} make slower service, which keeps them many",
                            nodes[n].name,
                            match cfg.pools[pool].load_slowdown.map(|l| l.with) {
                                Some(crate::scenario::SlowdownWith::Queue) => "more jobs queued",
                                _ => "more jobs held",
                            }
                        ),
                    });
                }
                if expired {
                    backs.push(Back {
                        from: n,
                        to: n,
                        text: format!(
                            "`{}` serves work nobody waits for any more (its callers timed out), which keeps it saturated",
                            nodes[n].name
                        ),
                    });
                }
                if slows || expired || backs.is_empty() {
                    nodes[n].hot = true;
                    for e in edges.iter_mut().filter(|e| e.to == n) {
                        e.hot = true;
                    }
                }
                if backs.is_empty() {
                    caption.push(format!(
                        "No loop measured: `{}`, the busiest pool, is highlighted.",
                        nodes[n].name
                    ));
                } else if !nodes[n].hot {
                    // Where the loop's load lands, when it is not on the loop's own path
                    // (retry-amplification: the client's retries, the bottom pool full).
                    nodes[n].hot = true;
                    outlined = Some(format!("`{}`, outlined, is the busiest pool.", nodes[n].name));
                }
            }
            for (k, b) in backs.iter().enumerate() {
                caption.push(format!("({}) {}.", k + 1, b.text));
            }
            caption.extend(outlined);
        }
    }
    let note = match (m.sustained, m.finished) {
        (Sustained::Loop { .. }, _) => format!(
            "Rates: means over the highlighted stretch, {} to {}.",
            clock(window.0),
            clock(window.1)
        ),
        (_, true) => format!(
            "Rates: means over the whole run, 0 s to {}.",
            clock(m.end_s)
        ),
        (_, false) => format!(
            "Rates: means over the run so far, 0 s to {}.",
            clock(m.end_s)
        ),
    };
    Diagram {
        title: format!("{}: the system as the run measured it", m.title),
        note,
        nodes,
        edges,
        backs,
        caption,
    }
}

/// Text size, px.
const FONT: f64 = 15.0;
/// The title's size, px.
const TITLE: f64 = 18.0;
/// Line height over text size.
const LEADING: f64 = 1.35;
/// Space around a box's text, px.
const PAD: f64 = 10.0;
const MARGIN: f64 = 20.0;
/// Space between boxes in a column, px.
const VGAP: f64 = 28.0;
/// Space between a return path's lane and the next, px.
const LANE: f64 = 26.0;

mod layout;
mod svg;
pub use layout::{Layout, Rect, Route, layout, spread, text_width, wrap};
pub use svg::svg;
#[cfg(test)]
use svg::{HOT, names_in_italics};

#[cfg(test)]
mod tests;
