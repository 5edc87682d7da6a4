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
    let (_dir, out, page) = small_and_plain_report();

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
        // The loop of the swept parameter (issue 24 item 8); `plain` has no [tipping].
        "small/hysteresis.png",
        "plain/timeline.png",
        "small/structure.svg",
        "small/variants/more-workers/structure.svg",
        "plain/structure.svg",
    ] {
        assert!(images.contains(&f), "no picture {f}");
    }
    for f in [
        "small/events.csv",
        "small/run.provenance.json",
        "small/variants/more-workers/summary.json",
        "small/tipping.provenance.json",
        "small/phase.csv",
        "small/hysteresis.json",
        "plain/timeseries.csv",
    ] {
        assert!(links.contains(&f), "no link to {f}");
    }
    assert!(
        !page.contains("plain/hysteresis"),
        "a loop without [tipping]"
    );
    // Each run told in words under its timeline (issue 24 item 4): the base design's
    // open, the variant's folded (`plain` has nothing to tell: no trigger, no measure).
    assert_eq!(page.matches("<details class=\"story\" open>").count(), 1);
    assert_eq!(page.matches("<details class=\"story\">").count(), 1);
    let story = &page[page.find("<details class=\"story\" open>").unwrap()..];
    let story = &story[..story.find("</details>").unwrap()];
    assert!(story.contains("Slowdown begins"), "{story}");
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

/// A swept scenario whose every figure is awkward (a load of 7.777 per s, a sweep from
/// 1.2345 to 33.3333, a mean of 123.456 ms): nothing the report computes from it has a
/// short form by luck.
const AWKWARD: &str = r#"title = "Awkward numbers"
description = "A pool, a slowdown and retries."
duration = "40s"

[class.request]
rate = 7.777
timeout = "1s"
retry = { max_attempts = 3 }
steps = [{ query = "server" }]

[pool.server]
workers = 3
service = { law = "exp", mean = "123.456ms" }

[event.slowdown]
kind = "slowdown"
pool = "server"
at = "10s"
for = "5s"
factor = 3

[variant.more-workers]
description = "more workers"
set = { "pool.server.workers" = 5 }

[tipping]
vary = "class.request.rate"
from = 1.2345
to = 33.3333
points = 5
trigger = ["slowdown"]
settle = "10s"
measure = "goodput_ratio.request"
healthy_above = 0.9
"#;

/// The numbers of `text` (`12.5`, `-3`, `1,234`) that carry more than three significant
/// figures, with their context. Trailing zeros of a whole number are not significant
/// (`2500`); numbers joined to a letter (`p99`, `v2`, `IL-9999`) are names, not figures.
fn over_three_figures(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.' || bytes[i] == b',')
        {
            i += 1;
        }
        let token = text[start..i].trim_end_matches(['.', ',']);
        let joined = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_');
        let before = |k: usize| start.checked_sub(k).map(|j| &bytes[j]);
        let hyphened = before(1) == Some(&b'-') && joined(before(2));
        if joined(before(1)) || hyphened || joined(bytes.get(i)) {
            continue;
        }
        let digits: String = token.chars().filter(char::is_ascii_digit).collect();
        let digits = digits.trim_start_matches('0');
        let digits = if token.contains('.') {
            digits
        } else {
            digits.trim_end_matches('0')
        };
        if digits.len() > 3 {
            let from = text[..start]
                .char_indices()
                .rev()
                .nth(40)
                .map_or(0, |(k, _)| k);
            let to = (i + 20).min(text.len());
            let to = (to..=text.len())
                .find(|&k| text.is_char_boundary(k))
                .unwrap_or(text.len());
            found.push(format!("{token} in \"{}\"", &text[from..to]));
        }
    }
    found
}

/// `page` with each `open ... close` span replaced by a space.
fn without(page: &str, open: &str, close: &str) -> String {
    let mut out = String::new();
    let mut rest = page;
    while let Some(a) = rest.find(open) {
        out.push_str(&rest[..a]);
        out.push(' ');
        rest = rest[a..]
            .find(close)
            .map_or("", |b| &rest[a + b + close.len()..]);
    }
    out + rest
}

/// What a person reads of an HTML page: its text, without the style sheet, tags, code
/// (keys, commands and paths are names) and the footer (the version and command).
fn visible_text(page: &str) -> String {
    let page = without(page, "<style>", "</style>");
    let page = without(&page, "<footer>", "</footer>");
    let page = without(&page, "<code>", "</code>");
    let text = without(&page, "<", ">");
    text.replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
}

#[test]
fn over_three_figures_finds_what_it_must() {
    assert_eq!(
        over_three_figures("at 2708.1667 clients, 0.3482 (0.3393-0.3571)").len(),
        4
    );
    assert!(
        over_three_figures("2710 clients, 0.348 (95% CI 0.339-0.357), 2500, p99.99, IL-9999, 1e-3")
            .is_empty()
    );
    assert_eq!(
        visible_text("<p>a <code>1.2345</code> 2.5</p><footer>0.1.0</footer>"),
        " a   2.5  "
    );
}

/// Numbers for people (issue 24): no human-facing number in `index.html` or in the console
/// tables `brink all` prints carries more than three significant figures; JSON and CSV keep
/// full precision (the sweep's values as given: 1.2345).
#[test]
fn numbers_for_people_carry_three_significant_figures() {
    let dir = tempfile::tempdir().unwrap();
    let scen = dir.path().join("scenarios");
    std::fs::create_dir(&scen).unwrap();
    std::fs::write(scen.join("awkward.toml"), AWKWARD).unwrap();
    let out = dir.path().join("out");
    let o = brink(["all", "--dir"])
        .arg(&scen)
        .arg("--out")
        .arg(&out)
        .run();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let console = String::from_utf8_lossy(&o.stdout);
    assert!(console.contains("headroom"), "{console}");
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    let text = visible_text(&page);
    assert!(text.contains("headroom"), "{text}");
    let found: Vec<String> = over_three_figures(&console)
        .into_iter()
        .chain(over_three_figures(&text))
        .collect();
    assert!(
        found.is_empty(),
        "more than 3 significant figures: {found:#?}"
    );
    let csv = std::fs::read_to_string(out.join("awkward/tipping.csv")).unwrap();
    assert!(csv.contains("1.2345"), "{csv}");
}

/// The page on a phone (issue 24 item 3): a table of contents before everything else whose
/// anchors all resolve, a link back to it from every scenario's section, the "At a glance"
/// cells labelled with their column (`data-label`) and stacked by a media query at phone
/// widths, and every picture in a box of its own that keeps its text readable.
#[test]
fn the_page_reads_on_a_phone() {
    let (_dir, _out, page) = small_and_plain_report();
    let body = &page[page.find("<body>").unwrap()..];
    // The contents come first: before the glance table and every section.
    let toc = body
        .find("<nav id=\"contents\">")
        .expect("a table of contents");
    let toc_end = toc + body[toc..].find("</nav>").unwrap();
    let glance = body
        .find("<table class=\"glance\">")
        .expect("the glance table");
    let first_section = body.find("<section").unwrap();
    assert!(toc < glance && toc < first_section, "{body}");
    // Every entry of the contents resolves to an id on the page, one per scenario and
    // the glance table.
    let entries = attributes(&body[toc..toc_end], "href");
    assert_eq!(entries.len(), 3, "{entries:?}");
    for e in &entries {
        let anchor = e.strip_prefix('#').expect("an anchor");
        assert_eq!(
            page.matches(&format!(" id=\"{anchor}\"")).count(),
            1,
            "#{anchor}"
        );
    }
    // Every section links back to the contents.
    let sections: Vec<&str> = body.split("<section").skip(1).collect();
    assert_eq!(sections.len(), 2);
    for s in &sections {
        let s = &s[..s.find("</section>").unwrap()];
        assert!(
            s.contains("<a href=\"#contents\">back to contents</a>"),
            "{s}"
        );
    }
    // The glance table: every cell names its column, and a phone's media query stacks
    // the cells, hides the heading row and shows each cell's name.
    let table = &body[glance..glance + body[glance..].find("</table>").unwrap()];
    let heads: Vec<&str> = table
        .split("<th")
        .skip(1)
        .map(|c| &c[c.find('>').unwrap() + 1..c.find("</th>").unwrap()])
        .collect();
    assert_eq!(heads[3], "headroom");
    assert_eq!(heads[4], "verdict");
    let rows: Vec<&str> = table.split("<tr>").skip(1).collect();
    assert_eq!(rows.len(), 2, "{table}");
    for row in rows {
        let labels = attributes(row, "data-label");
        assert_eq!(labels, heads, "{row}");
    }
    let style = &page[page.find("<style>").unwrap()..page.find("</style>").unwrap()];
    let phone = &style[style
        .find("@media (max-width:600px)")
        .expect("a phone's media query")..];
    for rule in [
        "table.glance td{display:block",
        "table.glance tr.head{display:none}",
        "content:attr(data-label)",
        ".fig img{min-width:1180px",
    ] {
        let squeezed: String = phone.split_whitespace().collect();
        let rule: String = rule.split_whitespace().collect();
        assert!(squeezed.contains(&rule), "{rule} in {phone}");
    }
    // The system drawn (issue 24 item 5) is never shrunk: its 14 px text stays 14 px.
    assert!(style.contains(".fig img.structure{max-width:none;min-width:0}"));
    assert!(page.contains("<img class=\"structure\" src=\"small/structure.svg\""));
    // Every picture in its box: it scrolls there on a phone, never the page.
    let imgs = page.matches("<img ").count();
    assert!(imgs >= 4);
    assert_eq!(page.matches("<div class=\"fig\"><a href=").count(), imgs);
}

/// The pictures' words (issue 24 item 2): the tipping picture names its measure in words
/// (not the raw key), the zoomed timeline names its window in its title, and the timeline
/// of a run whose latency stays below a second reads it in ms.
#[test]
fn pictures_name_their_measure_window_and_units_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let scen = dir.path().join("scenarios");
    std::fs::create_dir(&scen).unwrap();
    std::fs::write(scen.join("small.toml"), SWEPT).unwrap();
    let out = dir.path().join("out");
    let o = brink(["all", "--dir"])
        .arg(&scen)
        .arg("--out")
        .arg(&out)
        .run();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = |name: &str| std::fs::read_to_string(out.join("small").join(name)).unwrap();
    let tipping = svg("tipping.svg");
    assert!(
        tipping.contains("goodput ratio of request"),
        "measure in words"
    );
    assert!(!tipping.contains("goodput_ratio.request"), "the raw key");
    // The legend names the regions (a region too narrow for its name is told by colour).
    assert!(tipping.contains("healthy threshold"));
    let zoom = svg("timeline-zoom.svg");
    assert!(
        zoom.contains("Small: a slowdown and retries: zoom 0:05 to 0:25"),
        "the zoom's window in its title"
    );
    let timeline = svg("timeline.svg");
    assert!(!timeline.contains("Small: a slowdown and retries: zoom"));
    // Service of 100 ms, two workers at a rate of 5: p99 well below a second.
    assert!(
        timeline.contains("Latency p99 of successful requests (ms)"),
        "latency in ms"
    );
}

/// `brink all` over the small swept scenario and the plain one, in a folder of its own:
/// (the folder, kept alive; the output folder; `index.html`).
fn small_and_plain_report() -> (tempfile::TempDir, std::path::PathBuf, String) {
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
    (dir, out, page)
}
