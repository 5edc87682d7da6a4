//! The diagram as SVG text: boxes, arrows, labels, the loop's numbered return paths and
//! the caption that tells them.

use super::layout::ends;
use super::*;
/// A caption line with its `backquoted` names (as the narrative writes them) in italics,
/// the backquotes dropped; a line whose backquotes do not pair is escaped as it is.
pub(super) fn names_in_italics(line: &str) -> String {
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

pub(super) const HOT: &str = "#c0392b";
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
