//! The diagram's layout: columns by call depth, boxes stacked without overlap, edge
//! labels spread in the gaps between columns, return paths routed under the boxes.

use super::*;
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
pub(super) fn ends(boxes: &[Rect], e: &Edge) -> ((f64, f64), (f64, f64)) {
    let (a, b) = (boxes[e.from], boxes[e.to]);
    ((a.x + a.w, a.y + a.h / 2.0), (b.x, b.y + b.h / 2.0))
}
