//! `index.html`: the report page, and the words it derives (case source, verdict).

use super::*;
use crate::report::narrative::Sentence;

#[test]
fn index_html_golden() {
    let run = |variant: Option<&str>, description: &str, dir: &str, zoom: bool| RunView {
        verdict: zoom.then(|| match variant {
            None => "stuck: 62% timed out, queue full of expired work".into(),
            Some(_) => "degraded: shedding 43% at the rate limit".into(),
        }),
        variant: variant.map(String::from),
        description: description.into(),
        dir: dir.into(),
        files: crate::experiment::run::run_files(zoom)
            .into_iter()
            .map(String::from)
            .collect(),
        narrative: match variant {
            None => vec![
                Sentence {
                    t_s: 0.0,
                    at: "0 s".into(),
                    text: "The run starts healthy: `request` at 70 requests/s.".into(),
                },
                Sentence {
                    t_s: 750.0,
                    at: "12 min 30 s".into(),
                    text:
                        "The goodput ratio of `request` falls below healthy: <0.8, one odd ` mark"
                            .into(),
                },
            ],
            Some(_) => vec![Sentence {
                t_s: 60.0,
                at: "1 min".into(),
                text: "It recovers.".into(),
            }],
        },
    };
    let page = Page {
        brink: "0.0.0-golden".into(),
        command: "brink all --out 'my output'".into(),
        sections: vec![
            Section {
                name: "golden".into(),
                title: "Golden <sweep> & \"friends\"".into(),
                description: "Line one with `code`.\nLine two: a < b.\n\n- a list\n- <script>alert(1)</script>\n".into(),
                case: "Golden 2024 (incident library IL-0001, https://example.com/postmortem): it tipped.".into(),
                runs: vec![
                    run(None, "", "golden", true),
                    run(Some("lifo"), "newest <first>", "golden/variants/lifo", true),
                ],
                tipping: Some(tipping_report()),
                phase: true,
                tipping_files: vec!["tipping.csv".into()],
                phase_files: vec!["phase.json".into()],
                hysteresis: Some(super::hysteresis::hysteresis_report()),
                hysteresis_files: crate::experiment::hysteresis::files(),
            },
            Section {
                name: "plain".into(),
                title: "No sweeps".into(),
                description: String::new(),
                case: "A case with no source head".into(),
                runs: vec![run(None, "", "plain", false)],
                tipping: None,
                phase: false,
                tipping_files: vec![],
                phase_files: vec![],
                hysteresis: None,
                hysteresis_files: vec![],
            },
        ],
    };
    let html = index_html(&page);
    golden("index.html", &html);
    let text = String::from_utf8(html).unwrap();
    // Raw HTML in a description is shown as text, never run.
    assert!(!text.contains("<script>") && text.contains("&lt;script&gt;"));
    assert_eq!(
        text.matches("<th>headroom</th>").count(),
        2,
        "overview + one table"
    );
    // Each sweep's files under its own heading (finding 23 of the new-user review: the
    // tipping files were listed under "Phase map").
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("no {s}"));
    let (tipping, phase) = (at("<h3>Tipping point</h3>"), at("<h3>Phase map</h3>"));
    assert!(tipping < at("golden/tipping.csv") && at("golden/tipping.csv") < phase);
    assert!(phase < at("golden/phase.json"));
    // The run told in words under each timeline: open for the base design, folded for a
    // variant; names in backquotes as code, the text escaped, an unpaired backquote kept.
    assert_eq!(text.matches("<details class=\"story\" open>").count(), 2);
    assert_eq!(text.matches("<details class=\"story\">").count(), 1);
    assert!(text.contains(
        "<li><b>12 min 30 s</b>: The goodput ratio of <code>request</code> falls below healthy: &lt;0.8, one odd ` mark</li>"
    ));
    // The loop after the tipping sweep's files, with its sentence and its own files.
    let hysteresis = at("<h3>Hysteresis loop</h3>");
    assert!(at("golden/tipping.csv") < hysteresis && hysteresis < phase);
    assert!(hysteresis < at("golden/hysteresis.csv"));
    assert!(
        text.contains("collapses going up at 100 requests/s, recovers going down at 10 requests/s")
    );
    // The measure in words beside its key.
    assert!(
        text.contains("measured: goodput ratio of request (<code>goodput_ratio.request</code>)")
    );
    // The mean time to collapse is explained where it is shown (finding 17), once.
    assert_eq!(text.matches("<p>Mean time to collapse: ").count(), 1);
}

#[test]
fn case_source_and_verdict() {
    use crate::export::index_html::{split_case, verdict};
    assert_eq!(
        split_case("Ably 2020 (published 2020-06-11, IL-0496): a fleet re-registered."),
        (
            Some("Ably 2020 (published 2020-06-11, IL-0496)"),
            "a fleet re-registered."
        )
    );
    assert_eq!(split_case("just a story"), (None, "just a story"));
    let r = tipping_report();
    let v = verdict(&r);
    assert!(
        v.starts_with("holds") || v.starts_with("tips") || v == "-",
        "{v}"
    );
}
