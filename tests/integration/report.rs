//! The report page that `brink all` writes: every picture and link resolves to a file
//! it wrote, the page fits a phone (viewport), and each scenario's story has its parts
//! once (one headroom table per swept scenario, the table across scenarios at the top).

use crate::common::{Run, brink};
use std::path::Path;

/// A small swept scenario with a case, a zoom window, a variant, a tipping sweep and a
/// phase map: every part of the page.
const SWEPT: &str = r#"title = "Small: a slowdown and retries"
case = "Example 2024 (incident library IL-9999, https://example.com/postmortem): it tipped."
description = """
A *small* scenario: `retries` and a slowdown.

- one pool
- <b>raw html</b> is shown as text
"""
duration = "60s"

[metrics]
zoom = ["5s", "25s"]

[class.request]
rate = 5
timeout = "1s"
retry = { max_attempts = 3 }
steps = [{ query = "server" }]

[pool.server]
workers = 2
service = { law = "exp", mean = "100ms" }

[event.slowdown]
kind = "slowdown"
pool = "server"
at = "10s"
for = "5s"
factor = 3

[variant.more-workers]
description = "four workers"
set = { "pool.server.workers" = 4 }

[tipping]
vary = "class.request.rate"
from = 1
to = 30
points = 4
trigger = ["slowdown"]
settle = "10s"
measure = "goodput_ratio.request"
healthy_above = 0.9

[phase]
vary = "event.slowdown.for"
from = "1s"
to = "10s"
points = 3
"#;

/// A scenario with neither sweep nor variant.
pub(crate) const PLAIN: &str = r#"title = "Plain"
duration = "20s"

[class.request]
rate = 2
steps = [{ query = "server" }]

[pool.server]
workers = 1
service = { law = "exp", mean = "100ms" }
"#;

/// Every value of `attr="..."` in `page`.
fn attributes<'a>(page: &'a str, attr: &str) -> Vec<&'a str> {
    let key = format!(" {attr}=\"");
    page.match_indices(&key)
        .map(|(i, _)| {
            let rest = &page[i + key.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect()
}

#[test]
fn every_picture_and_link_of_the_report_resolves() {
    let dir = tempfile::tempdir().unwrap();
    let scen = dir.path().join("scenarios");
    std::fs::create_dir(&scen).unwrap();
    std::fs::write(scen.join("small.toml"), SWEPT).unwrap();
    std::fs::write(scen.join("plain.toml"), PLAIN).unwrap();
    let out = dir.path().join("out");
    let o = brink(["all", "--dir"])
        .arg(&scen)
        .arg("--out")
        .arg(&out)
        .run();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();

    let images = attributes(&page, "src");
    let links = attributes(&page, "href");
    // Offline: nothing is fetched (no scripts, no style sheets, no remote pictures).
    assert!(
        !page.contains("<script") && !page.contains("<link"),
        "{page}"
    );
    for src in &images {
        assert!(!src.contains("://"), "a remote picture: {src}");
    }
    let mut files = 0;
    for target in images.iter().chain(&links) {
        if let Some(anchor) = target.strip_prefix('#') {
            assert!(page.contains(&format!("id=\"{anchor}\"")), "no #{anchor}");
            continue;
        }
        if target.starts_with("https://") {
            continue; // the case's source, outside
        }
        assert!(
            !target.starts_with('/') && !target.contains(".."),
            "not relative: {target}"
        );
        let path = out.join(target);
        assert!(Path::new(&path).is_file(), "{target} does not exist");
        files += 1;
    }
    // Each run's and sweep's files, and their pictures.
    for f in [
        "small/timeline.png",
        "small/timeline-zoom.png",
        "small/variants/more-workers/timeline.png",
        "small/variants/more-workers/timeline-zoom.png",
        "small/tipping.png",
        "small/phase.png",
        "plain/timeline.png",
    ] {
        assert!(images.contains(&f), "no picture {f}");
    }
    for f in [
        "small/events.csv",
        "small/run.provenance.json",
        "small/variants/more-workers/summary.json",
        "small/tipping.provenance.json",
        "small/phase.csv",
        "plain/timeseries.csv",
    ] {
        assert!(links.contains(&f), "no link to {f}");
    }
    assert!(files > 30, "{files} files linked");

    // Readable on a phone; one headroom table per swept scenario (plus the overview);
    // the table across scenarios first; a footer with the version.
    assert!(page.contains("<meta name=\"viewport\" content=\"width=device-width"));
    assert_eq!(page.matches("<th>headroom</th>").count(), 2, "{page}");
    let overview = page.find(
        "<th>operating point</th><th>tipping point</th><th>headroom</th><th class=\"text\">verdict</th>",
    );
    let first_section = page.find("<section").unwrap();
    assert!(overview.is_some_and(|i| i < first_section), "{page}");
    assert!(page.contains(&format!("brink {}", env!("CARGO_PKG_VERSION"))));
    // The description as Markdown, its raw HTML as text; the case with its source.
    assert!(page.contains("<em>small</em>") && page.contains("<code>retries</code>"));
    assert!(page.contains("&lt;b&gt;raw html&lt;/b&gt;"));
    assert!(page.contains("Source: Example 2024"));
    assert!(page.contains("<h4>more-workers</h4>four workers"));
}
