//! The layout's rules, for every bundled scenario's structure: no two boxes overlap, no
//! label overlaps a box or another label, every call drawn once, numbers at 3 significant
//! figures at most; and the highlights follow what sustains the failure.

use super::*;
use crate::scenario::{Loader, Scenario, bundled};

/// Every bundled scenario, base design and variants.
fn every_design() -> Vec<Scenario> {
    let mut out = Vec::new();
    for b in bundled::all() {
        let loader = Loader::resolve(std::path::Path::new(b.name)).unwrap();
        out.push(loader.load(None, &[]).unwrap());
        for v in loader.variant_names() {
            out.push(loader.load(Some(&v), &[]).unwrap());
        }
    }
    out
}

/// Rows of 10 s for a minute whose every value has more figures than a label may show.
fn busy_rows(columns: &[Column]) -> Vec<Vec<f64>> {
    (0..6)
        .map(|r| {
            let mut row = vec![10.0 * r as f64];
            row.extend((1..columns.len()).map(|k| 1234.5678 + k as f64 / 7.0));
            row
        })
        .collect()
}

/// The most a diagram highlights: every sign of every class and cache, expired work at
/// (and a slowdown of) the first pool.
fn everything_sustained(cfg: &Config) -> Sustained {
    let mut signs: Vec<Sign> = (0..cfg.classes.len())
        .map(|class| Sign::Retries {
            class,
            now: 2.345678,
            before: 1.0,
        })
        .collect();
    signs.extend((0..cfg.caches.len()).map(|cache| Sign::HitRatio {
        cache,
        now: 0.412345,
        before: 0.991234,
    }));
    Sustained::Loop {
        since_s: 12.3456,
        until_s: None,
        verdict: Verdict::Stuck {
            cause: Fault::ExpiredWork,
            share: 0.623456,
        },
        busiest: Some(0),
        signs,
    }
}

fn drawn(sc: &Scenario, sustained: &Sustained) -> Diagram {
    let columns = crate::scenario::columns::columns(&sc.config);
    let rows = busy_rows(&columns);
    diagram(&Measured {
        cfg: &sc.config,
        title: &sc.name,
        columns: &columns,
        rows: &rows,
        end_s: 60.0,
        finished: true,
        sustained,
    })
}

/// The significant figures of each number in `text` (a run of digits and points; leading
/// zeros do not count, trailing zeros of a whole number do not either).
fn figures(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut num = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || (c == '.' && !num.is_empty()) {
            num.push(c);
            continue;
        }
        let n = num.trim_end_matches('.');
        if !n.is_empty() {
            let digits: String = n.chars().filter(|c| c.is_ascii_digit()).collect();
            let digits = digits.trim_start_matches('0');
            let digits = if n.contains('.') {
                digits
            } else {
                digits.trim_end_matches('0')
            };
            out.push((n.to_string(), digits.len()));
        }
        num.clear();
    }
    out
}

#[test]
fn figures_counts_significant_figures() {
    assert_eq!(
        figures("1230 requests/s, hit ratio 82.5%, 0.0123 s, (1) 4.56"),
        [
            ("1230".into(), 3),
            ("82.5".into(), 3),
            ("0.0123".into(), 3),
            ("1".into(), 1),
            ("4.56".into(), 3)
        ]
    );
    assert_eq!(figures("1234.57")[0].1, 6);
}

#[test]
fn columns_are_call_depth() {
    // A client (0) into a cache (1) in front of a pool (2) that calls another (3); the
    // client also queries the last pool directly.
    assert_eq!(columns(4, &[(0, 1), (1, 2), (2, 3), (0, 3)]), [0, 1, 2, 3]);
    // A cycle ends (bounded), and leaves every column in range.
    let c = columns(3, &[(0, 1), (1, 2), (2, 1)]);
    assert!(c.iter().all(|&x| x < 3), "{c:?}");
}

#[test]
fn labels_of_one_gap_never_overlap() {
    let ys = spread(&[10.0, 12.0, 50.0, 11.0], &[20.0, 40.0, 20.0, 20.0], 4.0);
    // In wish order: 10 (0), 11 (3), 12 (1), 50 (2).
    assert_eq!(ys, [10.0, 58.0, 102.0, 34.0]);
}

#[test]
fn words_wrap_within_the_width() {
    let text = "timeouts come back as retries: 2.35 attempts per request of `request`";
    let lines = wrap(text, 200.0, FONT);
    assert!(lines.len() > 1, "{lines:?}");
    assert!(
        lines
            .iter()
            .all(|l| text_width(l, FONT) <= 200.0 || !l.contains(' '))
    );
    assert_eq!(lines.join(" "), text);
}

/// Issue 24, item 5: for every bundled design, every call drawn once, no box over another,
/// no label over a box or another label, numbers at 3 significant figures at most, text
/// at least 14 px, and a `viewBox`.
#[test]
fn every_bundled_structure_lays_out_cleanly() {
    for sc in every_design() {
        let what = format!("{} {:?}", sc.name, sc.variant);
        let d = drawn(&sc, &everything_sustained(&sc.config));
        for call in 0..sc.config.calls.len() {
            let on: Vec<&Edge> = d
                .edges
                .iter()
                .filter(|e| matches!(&e.flow, Flow::Calls(cs) if cs.contains(&call)))
                .collect();
            let steps = sc.config.classes[sc.config.calls[call].class].steps.len();
            assert_eq!(on.len(), steps, "{what}: call {call} on {} edges", on.len());
        }
        // No edge twice between the same boxes.
        for (i, a) in d.edges.iter().enumerate() {
            for b in &d.edges[i + 1..] {
                assert!((a.from, a.to) != (b.from, b.to), "{what}: {a:?} twice");
            }
        }
        let l = layout(&d);
        let mut rects: Vec<(String, Rect)> = d
            .nodes
            .iter()
            .zip(&l.boxes)
            .map(|(n, r)| (n.name.clone(), *r))
            .collect();
        rects.extend(
            d.edges
                .iter()
                .zip(&l.label_boxes)
                .filter_map(|(e, r)| r.map(|r| (e.label.join(" "), r))),
        );
        for (i, (a, ra)) in rects.iter().enumerate() {
            assert!(
                ra.x >= 0.0 && ra.y >= 0.0 && ra.x + ra.w <= l.width && ra.y + ra.h <= l.height,
                "{what}: `{a}` outside the picture"
            );
            for (b, rb) in &rects[i + 1..] {
                assert!(
                    !ra.overlaps(rb),
                    "{what}: `{a}` {ra:?} overlaps `{b}` {rb:?}"
                );
            }
        }
        let texts = d
            .nodes
            .iter()
            .flat_map(|n| n.lines.iter())
            .chain(d.edges.iter().flat_map(|e| e.label.iter()))
            .chain(d.caption.iter())
            .chain(std::iter::once(&d.note));
        for t in texts {
            for (n, k) in figures(t) {
                assert!(k <= 3, "{what}: `{n}` in `{t}` has {k} significant figures");
            }
        }
        let svg = svg(&d);
        assert!(
            svg.contains(&format!("viewBox=\"0 0 {} {}\"", l.width, l.height)),
            "{what}"
        );
        for size in svg.split("font-size=\"").skip(1) {
            let px: f64 = size.split('"').next().unwrap().parse().unwrap();
            assert!(px >= 14.0, "{what}: text at {px} px");
        }
    }
}

fn retry_storm() -> Scenario {
    Loader::resolve(std::path::Path::new("retry-storm"))
        .unwrap()
        .load(None, &[])
        .unwrap()
}

#[test]
fn a_healthy_run_highlights_nothing_and_says_so() {
    let sc = retry_storm();
    for (s, words) in [
        (Sustained::Healthy, "stays healthy"),
        (Sustained::Transient, "only while a trigger lasts"),
    ] {
        let d = drawn(&sc, &s);
        assert!(d.backs.is_empty() && d.nodes.iter().all(|n| !n.hot));
        assert!(d.edges.iter().all(|e| !e.hot));
        assert!(
            d.caption[0].starts_with("No loop highlighted") && d.caption[0].contains(words),
            "{:?}",
            d.caption
        );
        assert!(!svg(&d).contains(&format!("stroke=\"{HOT}\"")));
    }
}

#[test]
fn retries_loop_back_from_the_pool_to_the_client() {
    let sc = retry_storm();
    let s = Sustained::Loop {
        since_s: 300.0,
        until_s: None,
        verdict: Verdict::Stuck {
            cause: Fault::TimedOut,
            share: 0.99,
        },
        busiest: Some(0),
        signs: vec![Sign::Retries {
            class: 0,
            now: 3.5,
            before: 1.0,
        }],
    };
    let d = drawn(&sc, &s);
    // request (node 0) -> server (node 1), and back.
    assert_eq!(
        d.backs,
        [Back {
            from: 1,
            to: 0,
            text: "timeouts come back as retries: 3.5 attempts per request of `request` (1 before)"
                .into()
        }]
    );
    assert!(d.edges.iter().all(|e| e.hot) && d.nodes[1].hot && !d.nodes[0].hot);
    assert!(
        d.caption[0].contains("from 5 min to the end"),
        "{:?}",
        d.caption
    );
    assert!(
        d.note.contains("highlighted stretch, 5 min to"),
        "{}",
        d.note
    );
}

/// Names the narrative quotes read in italics in a caption, never with their backquotes;
/// an unpaired backquote is left as written.
#[test]
fn caption_names_are_italic_not_backquoted() {
    assert_eq!(
        names_in_italics("`db` serves work nobody waits for: a < b"),
        "<tspan font-style=\"italic\">db</tspan> serves work nobody waits for: a &lt; b"
    );
    assert_eq!(names_in_italics("one ` mark"), "one ` mark");
}
