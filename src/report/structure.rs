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
use crate::scenario::{Column, Config, KeyCount, Measure, Owner};
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

/// The mean keys a step looks up.
fn mean_keys(k: KeyCount) -> f64 {
    match k {
        KeyCount::Fixed(n) => n as f64,
        KeyCount::Poisson { mean, min } | KeyCount::Geometric { mean, min } => mean.max(min as f64),
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
                *lookups[c].get_or_insert(0.0) += att * mean_keys(step.keys);
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

/// The width of `text` at `size` px in DejaVu Sans, estimated: its average advance is
/// about 0.6 of the size (digits 0.64, lowercase 0.55-0.6); a little over, so that text
/// fits the box drawn for it.
pub fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.62
}

/// A rectangle: left, top, width, height.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    /// Shares some area with `o`.
    pub fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
}

/// How an edge runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Route {
    /// A curve from its source's right to its target's left.
    Direct,
    /// Around the boxes between: into the horizontal `lane` across the gap after its
    /// source (`out_gap` wide), along it, out of it across the gap before its target.
    Around {
        lane: f64,
        out_gap: f64,
        in_gap: f64,
    },
}

/// Where everything goes.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub width: f64,
    pub height: f64,
    /// Each node's box.
    pub boxes: Vec<Rect>,
    /// How each edge runs.
    pub routes: Vec<Route>,
    /// Each edge's label: where its first line's baseline starts (left, y).
    pub labels: Vec<Option<(f64, f64)>>,
    /// Each edge's label's box.
    pub label_boxes: Vec<Option<Rect>>,
    /// Each return path's lane (y of its horizontal run).
    pub lanes: Vec<f64>,
    /// Each return path's x where it leaves its source and where it enters its target.
    pub back_x: Vec<(f64, f64)>,
    /// Where the caption's first line starts.
    pub caption_y: f64,
    /// The caption wrapped to the picture's width.
    pub caption: Vec<String>,
}

/// Tops for boxes of `heights` as near their `wish`es as they can be while none overlaps
/// another (each at least `gap` below the end of the one above it, in the wishes' order):
/// the labels of one gap.
pub fn spread(wish: &[f64], heights: &[f64], gap: f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..wish.len()).collect();
    order.sort_by(|&a, &b| wish[a].total_cmp(&wish[b]).then(a.cmp(&b)));
    let mut out = wish.to_vec();
    let mut end = f64::NEG_INFINITY;
    for &k in &order {
        out[k] = wish[k].max(end + gap);
        end = out[k] + heights[k];
    }
    out
}

/// Words wrapped to lines of at most `width` px at `size` (a word longer than a line gets a
/// line of its own).
pub fn wrap(text: &str, width: f64, size: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if !line.is_empty() && text_width(&candidate, size) > width {
            lines.push(std::mem::replace(&mut line, word.to_string()));
        } else {
            line = candidate;
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// A point of the edge from `a` to `b` (a cubic with horizontal tangents) at `t`.
fn bezier((ax, ay): (f64, f64), (bx, by): (f64, f64), t: f64) -> (f64, f64) {
    let mx = (ax + bx) / 2.0;
    let u = 1.0 - t;
    let x = u * u * u * ax + 3.0 * u * u * t * mx + 3.0 * u * t * t * mx + t * t * t * bx;
    let y = u * u * u * ay + 3.0 * u * u * t * ay + 3.0 * u * t * t * by + t * t * t * by;
    (x, y)
}

/// Lays a diagram out: columns by call depth ([`columns`]), each as wide as its widest
/// box; the gap after a column as wide as the widest label placed in it; boxes stacked in
/// a column in the order of their inputs' heights, the columns centred on each other.
pub fn layout(d: &Diagram) -> Layout {
    let n = d.nodes.len();
    let pairs: Vec<(usize, usize)> = d.edges.iter().map(|e| (e.from, e.to)).collect();
    let col = columns(n, &pairs);
    let ncols = col.iter().copied().max().map_or(0, |c| c + 1);
    let line = FONT * LEADING;
    let size = |node: &Node| {
        let w = std::iter::once(text_width(&node.name, FONT) * 1.08)
            .chain(node.lines.iter().map(|l| text_width(l, FONT)))
            .fold(0.0, f64::max);
        (
            (w + 2.0 * PAD).max(120.0),
            (1 + node.lines.len()) as f64 * line + 2.0 * PAD,
        )
    };
    let sizes: Vec<(f64, f64)> = d.nodes.iter().map(size).collect();
    let mut col_w = vec![0.0f64; ncols];
    for (k, &c) in col.iter().enumerate() {
        col_w[c] = col_w[c].max(sizes[k].0);
    }
    // Each label sits in the gap after its edge's source column.
    let label_w = |e: &Edge| {
        e.label
            .iter()
            .map(|l| text_width(l, FONT))
            .fold(0.0, f64::max)
    };
    let mut gap_w = vec![90.0f64; ncols];
    for e in &d.edges {
        gap_w[col[e.from]] = gap_w[col[e.from]].max(label_w(e) + 36.0);
    }
    let mut col_x = vec![MARGIN; ncols];
    for c in 1..ncols {
        col_x[c] = col_x[c - 1] + col_w[c - 1] + gap_w[c - 1];
    }
    let body_w = col_x.last().map_or(0.0, |x| x + col_w[ncols - 1]) - MARGIN;
    let top = MARGIN + TITLE * 1.4 + line + 16.0;
    // Order within a column: by the mean position of the inputs, then file order.
    let mut pos = vec![0.0f64; n];
    let order: Vec<Vec<usize>> = (0..ncols)
        .map(|c| {
            let mut members: Vec<usize> = (0..n).filter(|&k| col[k] == c).collect();
            let key = |k: usize| {
                let ins: Vec<f64> = pairs
                    .iter()
                    .filter(|&&(a, b)| b == k && col[a] < c)
                    .map(|&(a, _)| pos[a])
                    .collect();
                if ins.is_empty() {
                    k as f64
                } else {
                    ins.iter().sum::<f64>() / ins.len() as f64
                }
            };
            let keys: Vec<f64> = (0..n).map(key).collect();
            members.sort_by(|&a, &b| keys[a].total_cmp(&keys[b]).then(a.cmp(&b)));
            for (r, &k) in members.iter().enumerate() {
                pos[k] = r as f64;
            }
            members
        })
        .collect();
    let height_of = |c: usize| {
        order[c].iter().map(|&k| sizes[k].1).sum::<f64>()
            + VGAP * order[c].len().saturating_sub(1) as f64
    };
    let body_h = (0..ncols).map(height_of).fold(0.0, f64::max);
    let mut boxes = vec![
        Rect {
            x: 0.0,
            y: 0.0,
            w: 0.0,
            h: 0.0
        };
        n
    ];
    for c in 0..ncols {
        let mut y = top + (body_h - height_of(c)) / 2.0;
        for &k in &order[c] {
            boxes[k] = Rect {
                x: col_x[c] + (col_w[c] - sizes[k].0) / 2.0,
                y,
                w: sizes[k].0,
                h: sizes[k].1,
            };
            y += sizes[k].1 + VGAP;
        }
    }
    // An edge past a column whose boxes its curve would cross goes around them: along a
    // lane below them (above would meet the title).
    let mut below_all = top + body_h + 14.0;
    let mut routes = Vec::with_capacity(d.edges.len());
    for e in &d.edges {
        let (a, b) = ends(&boxes, e);
        let between: Vec<Rect> = (0..n)
            .filter(|&k| col[k] > col[e.from] && col[k] < col[e.to])
            .map(|k| boxes[k])
            .collect();
        let inside = |(x, y): (f64, f64)| {
            between.iter().any(|r| {
                x > r.x - 4.0 && x < r.x + r.w + 4.0 && y > r.y - 4.0 && y < r.y + r.h + 4.0
            })
        };
        if !(0..=64).any(|t| inside(bezier(a, b, t as f64 / 64.0))) {
            routes.push(Route::Direct);
            continue;
        }
        let down = between.iter().map(|r| r.y + r.h).fold(0.0, f64::max);
        below_all = below_all.max(down + 14.0);
        let lane = below_all;
        below_all += 12.0;
        routes.push(Route::Around {
            lane,
            out_gap: gap_w[col[e.from]],
            in_gap: gap_w[col[e.to].saturating_sub(1)],
        });
    }
    // Labels: at the edge's point in the middle of the gap after its source, spread per gap.
    let mut labels = vec![None; d.edges.len()];
    let mut label_boxes = vec![None; d.edges.len()];
    for c in 0..ncols {
        let in_gap: Vec<usize> = (0..d.edges.len())
            .filter(|&k| col[d.edges[k].from] == c && !d.edges[k].label.is_empty())
            .filter(|&k| d.edges[k].from != d.edges[k].to)
            .collect();
        let gx = col_x[c] + col_w[c] + gap_w[c] / 2.0;
        let heights: Vec<f64> = in_gap
            .iter()
            .map(|&k| d.edges[k].label.len() as f64 * line)
            .collect();
        let wish: Vec<f64> = in_gap
            .iter()
            .zip(&heights)
            .map(|(&k, h)| {
                let (a, b) = ends(&boxes, &d.edges[k]);
                let y = match routes[k] {
                    Route::Around { lane, .. } => (a.1 + lane) / 2.0,
                    Route::Direct => {
                        // The edge's t at the gap's middle, by bisection (x grows with t).
                        let (mut lo, mut hi) = (0.0, 1.0);
                        for _ in 0..40 {
                            let mid = (lo + hi) / 2.0;
                            if bezier(a, b, mid).0 < gx {
                                lo = mid;
                            } else {
                                hi = mid;
                            }
                        }
                        bezier(a, b, lo).1
                    }
                };
                (y - h / 2.0).max(MARGIN + TITLE * 1.4 + line)
            })
            .collect();
        let ys = spread(&wish, &heights, 4.0);
        for (i, &k) in in_gap.iter().enumerate() {
            let w = label_w(&d.edges[k]);
            label_boxes[k] = Some(Rect {
                x: gx - w / 2.0 - 4.0,
                y: ys[i],
                w: w + 8.0,
                h: heights[i],
            });
            labels[k] = Some((gx - w / 2.0, ys[i] + FONT));
        }
    }
    let lowest = boxes
        .iter()
        .map(|b| b.y + b.h)
        .chain(label_boxes.iter().flatten().map(|r| r.y + r.h))
        .chain(routes.iter().filter_map(|r| match r {
            Route::Around { lane, .. } => Some(lane + 4.0),
            Route::Direct => None,
        }))
        .fold(top, f64::max);
    let lanes: Vec<f64> = (0..d.backs.len())
        .map(|k| lowest + 24.0 + LANE * k as f64)
        .collect();
    // Where each return path leaves and enters its boxes' bottoms: ports around the
    // middle, 10 px, then 22 px further out each, alternating sides, so that no two meet.
    let mut used = vec![0usize; n];
    let mut port = |node: usize| {
        let j = used[node];
        used[node] += 1;
        let side = if j.is_multiple_of(2) { 1.0 } else { -1.0 };
        boxes[node].x + boxes[node].w / 2.0 + side * (10.0 + 22.0 * (j / 2) as f64)
    };
    let back_x: Vec<(f64, f64)> = d
        .backs
        .iter()
        .map(|b| {
            let x0 = port(b.from);
            (x0, port(b.to))
        })
        .collect();
    let below = lanes.last().map_or(lowest, |&l| l + 14.0);
    let text_w = body_w
        .max(640.0)
        .max(text_width(&d.title, TITLE) * 1.08)
        .max(text_width(&d.note, FONT));
    let caption: Vec<String> = d
        .caption
        .iter()
        .flat_map(|c| wrap(c, text_w, FONT))
        .collect();
    let caption_y = below + 16.0 + FONT;
    let width = [
        body_w,
        text_w,
        text_width(&d.title, TITLE) * 1.08,
        text_width(&d.note, FONT),
    ]
    .into_iter()
    .fold(0.0, f64::max)
        + 2.0 * MARGIN;
    let height = caption_y + caption.len().saturating_sub(1) as f64 * line + FONT * 0.4 + MARGIN;
    Layout {
        width: width.ceil(),
        height: height.ceil(),
        boxes,
        routes,
        labels,
        label_boxes,
        lanes,
        back_x,
        caption_y,
        caption,
    }
}

/// An edge's ends: the source's right middle and the target's left middle.
fn ends(boxes: &[Rect], e: &Edge) -> ((f64, f64), (f64, f64)) {
    let (a, b) = (boxes[e.from], boxes[e.to]);
    ((a.x + a.w, a.y + a.h / 2.0), (b.x, b.y + b.h / 2.0))
}

/// A caption line with its `backquoted` names (as the narrative writes them) in italics,
/// the backquotes dropped; a line whose backquotes do not pair is escaped as it is.
fn names_in_italics(line: &str) -> String {
    if line.matches('`').count() % 2 == 1 {
        return esc(line);
    }
    line.split('`')
        .enumerate()
        .map(|(k, part)| match k % 2 {
            1 => format!("<tspan font-style=\"italic\">{}</tspan>", esc(part)),
            _ => esc(part),
        })
        .collect()
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const HOT: &str = "#c0392b";
const INK: &str = "#222";
const WIRE: &str = "#666";

/// The diagram as SVG text: a `viewBox` of its own size, text at least 14 px.
pub fn svg(d: &Diagram) -> String {
    let l = layout(d);
    let line = FONT * LEADING;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"DejaVu Sans, Verdana, sans-serif\" font-size=\"{FONT}\">",
        w = l.width,
        h = l.height
    );
    let _ = writeln!(s, "<title>{}</title>", esc(&d.title));
    s.push_str(concat!(
        "<defs>",
        "<marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"#666\"/></marker>",
        "<marker id=\"hot\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"#c0392b\"/></marker>",
        "</defs>\n"
    ));
    let _ = writeln!(
        s,
        "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n<text x=\"{MARGIN}\" y=\"{:.1}\" font-size=\"{TITLE}\" font-weight=\"bold\" fill=\"{INK}\">{}</text>\n<text x=\"{MARGIN}\" y=\"{:.1}\" fill=\"#444\">{}</text>",
        MARGIN + TITLE,
        esc(&d.title),
        MARGIN + TITLE * 1.4 + FONT + 2.0,
        esc(&d.note)
    );
    // The loop's return paths, under everything: down from the source, along its lane,
    // up into the target; numbered where they run along the lane.
    for (k, b) in d.backs.iter().enumerate() {
        let (from, to) = (l.boxes[b.from], l.boxes[b.to]);
        let lane = l.lanes[k];
        let (x0, x1) = l.back_x[k];
        let (y0, y1) = (from.y + from.h, to.y + to.h);
        // Up into the target's bottom, unless a box below it is in the way: then up its
        // left side and in from the left (checkout below browse in thread-pool-exhaustion).
        let blocked = l.boxes.iter().enumerate().any(|(i, r)| {
            i != b.to && i != b.from && x1 > r.x && x1 < r.x + r.w && r.y >= y1 && r.y < lane
        });
        let x1 = if blocked { to.x - 10.0 } else { x1 };
        let r = ((x0 - x1).abs() / 2.0)
            .min(lane - y0.max(y1))
            .clamp(0.0, 14.0);
        let dir = if x1 < x0 { -1.0 } else { 1.0 };
        let into = if blocked {
            let ty = to.y + to.h / 2.0;
            format!(
                "L{x1:.1},{lane:.1} L{x1:.1},{ty:.1} L{:.1},{ty:.1}",
                to.x - 2.0
            )
        } else {
            format!(
                "L{:.1},{lane:.1} Q{x1:.1},{lane:.1} {x1:.1},{:.1} L{x1:.1},{:.1}",
                x1 - dir * r,
                lane - r,
                y1 + 2.0
            )
        };
        let _ = writeln!(
            s,
            "<path d=\"M{x0:.1},{y0:.1} L{x0:.1},{:.1} Q{x0:.1},{lane:.1} {:.1},{lane:.1} {into}\" fill=\"none\" stroke=\"{HOT}\" stroke-width=\"3\" stroke-dasharray=\"8 5\" marker-end=\"url(#hot)\"/>",
            lane - r,
            x0 + dir * r,
        );
        let (cx, cy) = ((x0 + x1) / 2.0, lane);
        let _ = writeln!(
            s,
            "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"11\" fill=\"{HOT}\"/><text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#fff\" font-weight=\"bold\">{}</text>",
            cy + FONT * 0.35,
            k + 1
        );
    }
    // Edges, the hot ones last (on top).
    let mut order: Vec<usize> = (0..d.edges.len()).collect();
    order.sort_by_key(|&k| d.edges[k].hot);
    for &k in &order {
        let e = &d.edges[k];
        let ((ax, ay), (bx, by)) = ends(&l.boxes, e);
        let mx = (ax + bx) / 2.0;
        let path = match l.routes[k] {
            Route::Direct => {
                format!("M{ax:.1},{ay:.1} C{mx:.1},{ay:.1} {mx:.1},{by:.1} {bx:.1},{by:.1}")
            }
            Route::Around {
                lane,
                out_gap,
                in_gap,
            } => {
                let (o, i) = (ax + out_gap, bx - in_gap);
                format!(
                    "M{ax:.1},{ay:.1} C{:.1},{ay:.1} {:.1},{lane:.1} {o:.1},{lane:.1} L{i:.1},{lane:.1} C{:.1},{lane:.1} {:.1},{by:.1} {bx:.1},{by:.1}",
                    ax + out_gap / 2.0,
                    ax + out_gap / 2.0,
                    bx - in_gap / 2.0,
                    bx - in_gap / 2.0,
                )
            }
        };
        let (stroke, width, marker) = if e.hot {
            (HOT, 3.0, "hot")
        } else {
            (WIRE, 1.6, "arrow")
        };
        let _ = writeln!(
            s,
            "<path d=\"{path}\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"{width}\" marker-end=\"url(#{marker})\"/>"
        );
    }
    for (k, e) in d.edges.iter().enumerate() {
        let (Some((x, y)), Some(r)) = (l.labels[k], l.label_boxes[k]) else {
            continue;
        };
        let _ = writeln!(
            s,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#fff\" fill-opacity=\"0.9\"/>",
            r.x, r.y, r.w, r.h
        );
        for (i, t) in e.label.iter().enumerate() {
            let _ = writeln!(
                s,
                "<text x=\"{x:.1}\" y=\"{:.1}\" fill=\"{}\">{}</text>",
                y + i as f64 * line,
                if e.hot { HOT } else { INK },
                esc(t)
            );
        }
    }
    for (k, n) in d.nodes.iter().enumerate() {
        let b = l.boxes[k];
        let fill = match n.kind {
            Kind::Class(_) => "#e8f1fb",
            Kind::Cache(_) => "#fff4d6",
            Kind::Pool(_) => "#eeeeee",
        };
        let (stroke, width) = if n.hot { (HOT, 3.0) } else { ("#555", 1.4) };
        let _ = writeln!(
            s,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"8\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"{width}\"/>",
            b.x, b.y, b.w, b.h
        );
        let cx = b.x + b.w / 2.0;
        let _ = writeln!(
            s,
            "<text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-weight=\"bold\" fill=\"{INK}\">{}</text>",
            b.y + PAD + FONT,
            esc(&n.name)
        );
        for (i, t) in n.lines.iter().enumerate() {
            let _ = writeln!(
                s,
                "<text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#333\">{}</text>",
                b.y + PAD + FONT + (i + 1) as f64 * line,
                esc(t)
            );
        }
    }
    for (i, t) in l.caption.iter().enumerate() {
        let hot = !d.backs.is_empty() || d.nodes.iter().any(|n| n.hot);
        let _ = writeln!(
            s,
            "<text x=\"{MARGIN}\" y=\"{:.1}\" fill=\"{}\">{}</text>",
            l.caption_y + i as f64 * line,
            if hot { HOT } else { INK },
            names_in_italics(t)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests;
