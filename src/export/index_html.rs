//! `index.html`: one offline page that tells every scenario's story: a table across the
//! scenarios, then for each its incident and source, its description (Markdown), the
//! timelines of its base design and of every variant (and their zoomed views), its tipping
//! and phase pictures, its headroom table, and links to every data file; a footer names
//! brink's version and the command. Pictures and files are linked by relative paths; the
//! style is inline and nothing is fetched, so the folder reads offline, from a phone's
//! 420 px to a 1,600 px screen.

use crate::report::hysteresis_result::HysteresisReport;
use crate::report::narrative::Sentence;
use crate::report::sweep_plot::layout::measure_words;
use crate::report::sweep_result::{
    SweepReport, VariantTipping, collapse_note, headroom_rows, precision_notes, recovery_notes,
    sig3, slo_notes,
};
use pulldown_cmark::{Event, Options, Parser, html};
use std::fmt::Write;

/// The whole page: its scenarios and what wrote it.
pub struct Page {
    /// brink's version.
    pub brink: String,
    /// The command that wrote the page, as typed (arguments quoted where needed).
    pub command: String,
    pub sections: Vec<Section>,
}

/// What the page shows for one scenario.
pub struct Section {
    /// The scenario's folder name (relative to the page).
    pub name: String,
    pub title: String,
    /// Markdown.
    pub description: String,
    pub case: String,
    /// The base design's run first, then each variant's.
    pub runs: Vec<RunView>,
    pub tipping: Option<SweepReport>,
    pub phase: bool,
    /// The tipping sweep's files, relative to the scenario's folder (`tipping.csv`, ...):
    /// listed under its picture.
    pub tipping_files: Vec<String>,
    /// The phase map's files (`phase.csv`, ...): listed under its picture.
    pub phase_files: Vec<String>,
    /// The hysteresis loop of the base design (`brink all` ramps every scenario whose
    /// `[tipping]` parameter an intervention can change).
    pub hysteresis: Option<HysteresisReport>,
    /// Its files (`hysteresis.csv`, ...): listed under its picture.
    pub hysteresis_files: Vec<String>,
}

/// One run: the base design or a variant.
pub struct RunView {
    /// `None` for the base design.
    pub variant: Option<String>,
    /// The variant's description (empty for the base design).
    pub description: String,
    /// The run's folder, relative to the page (`retry-storm/variants/lifo`).
    pub dir: String,
    /// The files in it, by name.
    pub files: Vec<String>,
    /// The verdict on its measuring window, with its cause, for people
    /// ([`crate::report::verdict`]: `stuck: 62% timed out, queue full of expired work`);
    /// none without a tipping measure.
    pub verdict: Option<String>,
    /// The run told in words (`summary.json`'s `narrative`), shown under its timeline.
    pub narrative: Vec<Sentence>,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Markdown to HTML; raw HTML in the text is shown as text, never passed through.
pub fn markdown(text: &str) -> String {
    let events =
        Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).map(|e| {
            match e {
                Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
                e => e,
            }
        });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

/// Escapes `text` and links the `http(s)://` addresses in it.
fn linkify(text: &str) -> String {
    let mut out = String::new();
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let trimmed = word.trim_end_matches(['.', ',', ';', ')']);
        if trimmed.starts_with("https://") || trimmed.starts_with("http://") {
            let _ = write!(
                out,
                "<a href=\"{0}\">{0}</a>{1}",
                esc(trimmed),
                esc(&word[trimmed.len()..])
            );
        } else {
            out.push_str(&esc(word));
        }
    }
    out
}

/// A case as written in scenario files, `Source (details): what happened`, split into
/// its source and its story; the whole text is the story when it has no such head.
pub fn split_case(case: &str) -> (Option<&str>, &str) {
    match case.find("): ") {
        Some(i) if case[..i].contains(" (") => (Some(&case[..=i]), case[i + 3..].trim()),
        _ => (None, case.trim()),
    }
}

/// The base design's entry of a sweep (the first, as swept).
fn base(r: &SweepReport) -> Option<&VariantTipping> {
    r.variants.first()
}

/// Whether a design holds at its operating point: its tipping point lies above it.
fn holds(v: &VariantTipping) -> Option<bool> {
    match (v.headroom, v.headroom_above, v.headroom_at_most) {
        (Some(h), _, _) => Some(h > 1.0),
        (None, Some(_), _) => Some(true),
        (None, None, Some(_)) => Some(false),
        _ => None,
    }
}

/// A one-line verdict on a sweep: does the base design hold, and which variants do.
pub fn verdict(r: &SweepReport) -> String {
    let Some(b) = base(r) else {
        return "-".into();
    };
    let mut out = match holds(b) {
        Some(true) => match b.headroom {
            Some(h) => format!("holds: tips at {h:.2}x its load"),
            None => "holds: does not tip in the swept range".into(),
        },
        Some(false) => "tips at its own load: a trigger is enough".into(),
        None => "-".into(),
    };
    let rest = &r.variants[1..];
    if !rest.is_empty() {
        let good: Vec<&str> = rest
            .iter()
            .filter(|v| holds(v) == Some(true))
            .map(|v| v.variant.as_str())
            .collect();
        let _ = write!(
            out,
            "; {} of {} variants hold{}",
            good.len(),
            rest.len(),
            if good.is_empty() {
                String::new()
            } else {
                format!(" ({})", good.join(", "))
            }
        );
    }
    out
}

/// A value with the sweep's unit: `90 per s`.
fn with_unit(x: Option<f64>, r: &SweepReport) -> String {
    match (x, &r.unit) {
        (Some(_), Some(u)) => format!("{} {u}", sig3(x)),
        _ => sig3(x),
    }
}

const STYLE: &str = "\
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;line-height:1.5;max-width:1500px;margin:0 auto;padding:1em;color:#222;background:#fff}
h1{font-size:1.8em;margin:.3em 0}
h2{font-size:1.45em;margin:.2em 0}
h3{font-size:1.15em;margin:1.4em 0 .4em}
h4{margin:.3em 0}
img{max-width:100%;height:auto;border:1px solid #ddd;display:block}
a{color:#0060a0}
code{background:#f2f2f2;padding:0 .2em;border-radius:3px;overflow-wrap:anywhere}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:.3em .7em;text-align:right;vertical-align:top}
td:first-child,th:first-child{text-align:left}
td.text,th.text{text-align:left;min-width:16em}
th{background:#f4f4f4}
section.scenario{border-top:3px solid #888;margin-top:2.5em;padding-top:.5em}
.case{background:#fff6e6;border-left:4px solid #e69f00;padding:.5em 1em;margin:.8em 0}
.files{font-size:.92em;color:#444}
.files a{margin-right:.6em;white-space:nowrap}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,600px),1fr));gap:1.2em}
figure{margin:0}
figcaption{font-size:.95em;margin-bottom:.3em}
nav ul{padding-left:1.2em}
footer{border-top:1px solid #ccc;margin-top:3em;padding-top:.5em;font-size:.9em;color:#555}
.back{font-size:.92em;margin-top:1.5em}
.fig{overflow-x:auto;max-width:100%}
details.story{margin:.4em 0 .8em}
details.story summary{cursor:pointer;font-weight:bold}
details.story ol{margin:.3em 0;padding-left:1.5em}
.fig img.structure{max-width:none;min-width:0}
figure.structure{margin:.8em 0}
@media (max-width:600px){body{padding:.5em}h1{font-size:1.4em}h2{font-size:1.2em}
table.glance,table.glance tbody,table.glance tr,table.glance td{display:block;width:100%}
table.glance tr.head{display:none}
table.glance tr{border:1px solid #ccc;margin:0 0 .6em}
table.glance td{border:none;border-bottom:1px solid #eee;text-align:left;min-width:0}
table.glance td::before{content:attr(data-label) \": \";font-weight:bold}
.fig img{min-width:1180px;max-width:none}}
";

/// A paragraph of links to `files` in `dir`.
fn file_links(out: &mut String, dir: &str, files: &[String]) {
    if files.is_empty() {
        return;
    }
    out.push_str("<p class=\"files\">Files: ");
    for f in files {
        let _ = write!(out, "<a href=\"{}/{}\">{}</a> ", esc(dir), esc(f), esc(f));
    }
    out.push_str("</p>\n");
}

/// A picture linked to its SVG (which zooms without blur), in a box of its own: on a
/// phone the picture keeps a width at which its text is at least 11 CSS px (its 14-15 px
/// labels at 1,180 of its 1,500-1,600 px) and scrolls sideways inside that box, never the
/// page.
fn picture(out: &mut String, dir: &str, stem: &str, alt: &str) {
    let (d, s) = (esc(dir), esc(stem));
    let _ = writeln!(
        out,
        "<div class=\"fig\"><a href=\"{d}/{s}.svg\"><img src=\"{d}/{s}.png\" alt=\"{}\" loading=\"lazy\"></a></div>",
        esc(alt)
    );
}

/// A run's `structure.svg` (the system drawn with its rates and the loop that sustains
/// its failure, [`crate::report::structure`]) under a short caption, when the run wrote
/// one. Shown at its own size, never shrunk (its text is 14 px and more): a box of its own
/// scrolls sideways where it is wider than the page.
fn structure_figure(out: &mut String, run: &RunView, what: &str) {
    if !run.files.iter().any(|f| f == "structure.svg") {
        return;
    }
    let d = esc(&run.dir);
    let _ = writeln!(
        out,
        "<figure class=\"structure\"><figcaption>The system as this run measured it: rates on \
         its arrows, and in red the loop that sustains its failure (none when it stays \
         healthy, or recovers as its trigger ends).</figcaption>\n<div class=\"fig\"><a \
         href=\"{d}/structure.svg\"><img class=\"structure\" src=\"{d}/structure.svg\" \
         alt=\"structure of {}\" loading=\"lazy\"></a></div></figure>",
        esc(what)
    );
}

/// A run's timelines (and zoomed view) and its files.
fn run_view(out: &mut String, name: &str, run: &RunView) {
    let what = match &run.variant {
        Some(v) => format!("variant {v} of {name}"),
        None => name.to_string(),
    };
    picture(out, &run.dir, "timeline", &format!("timeline of {what}"));
    if let Some(v) = &run.verdict {
        let _ = writeln!(out, "<p>After the trigger: <b>{}</b></p>", esc(v));
    }
    story(out, &run.narrative, run.variant.is_none());
    if run.files.iter().any(|f| f == "timeline-zoom.png") {
        out.push_str("<p>Zoomed in on the window the scenario picks:</p>\n");
        picture(
            out,
            &run.dir,
            "timeline-zoom",
            &format!("zoomed timeline of {what}"),
        );
    }
    structure_figure(out, run, &what);
    file_links(out, &run.dir, &run.files);
}

/// A run's narrative under its timeline: open for the base design, folded for a variant
/// (a grid of variants stays short; a click opens it).
fn story(out: &mut String, sentences: &[Sentence], open: bool) {
    if sentences.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<details class=\"story\"{}><summary>What happened, in words</summary>\n<ol>\n",
        if open { " open" } else { "" }
    );
    for s in sentences {
        let _ = writeln!(
            out,
            "<li><b>{}</b>: {}</li>",
            esc(&s.at),
            code_spans(&s.text)
        );
    }
    out.push_str("</ol></details>\n");
}

/// Escapes `text` and shows its `backquoted` names as code, as the narrative writes them.
fn code_spans(text: &str) -> String {
    let mut out = String::new();
    let quotes = text.matches('`').count();
    for (k, part) in text.split('`').enumerate() {
        match k % 2 {
            1 if quotes > k => {
                let _ = write!(out, "<code>{}</code>", esc(part));
            }
            // A last backquote without its pair stays as written.
            1 => {
                out.push('`');
                out.push_str(&esc(part));
            }
            _ => out.push_str(&esc(part)),
        }
    }
    out
}

/// The hysteresis loop of the base design: the picture, the collapse and recovery points in
/// a sentence, what the loop means, and its files.
fn hysteresis(out: &mut String, name: &str, r: &HysteresisReport, files: &[String]) {
    out.push_str("<h3>Hysteresis loop</h3>\n");
    picture(
        out,
        name,
        "hysteresis",
        &format!("hysteresis loop of {name}"),
    );
    let _ = writeln!(
        out,
        "<p>The parameter of the tipping sweep ramped slowly up and back down in one run, \
         with the trigger off ({} steps each way, {} each): where the way down stays below \
         the way up, the same load holds two states, healthy and stuck. <b>{}</b>.</p>",
        r.steps,
        esc(&crate::report::narrative::clock(r.dwell_s)),
        esc(&r.summary_line())
    );
    if r.collapse_point.is_none() {
        out.push_str(
            "<p>The ramp alone never tipped it: at these loads this design fails only when a \
             disturbance (the trigger of its timeline) pushes it over, which is what the \
             tipping sweep measures.</p>\n",
        );
    }
    if r.collapse_point.is_some() && r.recovery_point.is_none() {
        let _ = writeln!(
            out,
            "<p>Once tipped, it stayed down all the way back to the lowest value: lowering \
             the load is not enough to bring it back, at least not within {} a step.</p>",
            esc(&crate::report::narrative::clock(r.dwell_s))
        );
    }
    if let Some(note) = r.narrow_loop_note() {
        let _ = writeln!(out, "<p>{}</p>", code_spans(&note));
    }
    file_links(out, name, files);
}

fn table(out: &mut String, rows: &[Vec<String>], text_cols: &[usize]) {
    table_of(out, None, rows, text_cols)
}

/// A table; with a `class`, its header row is `tr.head` and every cell carries its
/// column's heading as `data-label`, so that a phone's style can stack the cells of a
/// row, each under its name (the "At a glance" table at 420 px).
fn table_of(out: &mut String, class: Option<&str>, rows: &[Vec<String>], text_cols: &[usize]) {
    match class {
        Some(c) => {
            let _ = writeln!(out, "<div class=\"scroll\"><table class=\"{c}\">");
        }
        None => out.push_str("<div class=\"scroll\"><table>\n"),
    }
    let heads: Vec<String> = rows.first().cloned().unwrap_or_default();
    for (i, row) in rows.iter().enumerate() {
        let tag = if i == 0 { "th" } else { "td" };
        out.push_str(if i == 0 && class.is_some() {
            "<tr class=\"head\">"
        } else {
            "<tr>"
        });
        for (k, c) in row.iter().enumerate() {
            let class_attr = if text_cols.contains(&k) {
                " class=\"text\""
            } else {
                ""
            };
            let label = match (class, i, heads.get(k)) {
                (Some(_), 1.., Some(h)) => format!(" data-label=\"{}\"", esc(h)),
                _ => String::new(),
            };
            let _ = write!(out, "<{tag}{class_attr}{label}>{c}</{tag}>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n");
}

/// The table across scenarios: operating point, tipping point, headroom and verdict of
/// each base design (the sweep's, then its run's with the cause).
fn overview(out: &mut String, sections: &[Section]) {
    let mut rows = vec![
        [
            "scenario",
            "operating point",
            "tipping point",
            "headroom",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for s in sections {
        let link = format!("<a href=\"#{0}\">{0}</a>", esc(&s.name));
        let row = match s.tipping.as_ref().and_then(|r| Some((r, base(r)?))) {
            Some((r, b)) => vec![
                link,
                format!(
                    "{} <small>({})</small>",
                    esc(&with_unit(Some(b.operating_point), r)),
                    esc(r.label.as_deref().unwrap_or(&r.vary))
                ),
                esc(&with_unit(b.tipping_point, r)),
                esc(&b.headroom_cell()),
                esc(&match s.runs.first().and_then(|run| run.verdict.as_ref()) {
                    Some(v) => format!("{}; its run after the trigger: {v}", verdict(r)),
                    None => verdict(r),
                }),
            ],
            None => vec![
                link,
                "-".into(),
                "-".into(),
                "-".into(),
                "no tipping sweep".into(),
            ],
        };
        rows.push(row);
    }
    table_of(out, Some("glance"), &rows, &[4]);
}

/// The bytes of `index.html`.
pub fn index_html(page: &Page) -> Vec<u8> {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>brink: scenarios</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <h1>brink: what the scenarios show</h1>\n\
         <p>Each scenario is a small system, a trigger and the designs (variants) that \
         might survive it. Its timeline shows a run over time; its tipping curve how much \
         load the design takes before a trigger tips it into a failure that lasts. \
         <b>Headroom</b> = tipping point / operating point: below 1, a trigger already \
         tips the design over at its own load. Click a picture for its SVG.</p>\n"
    );
    // The contents first, so that a phone reaches any scenario without the whole
    // scroll; every section links back here.
    out.push_str(
        "<nav id=\"contents\">\n<h2>Contents</h2>\n<ul>\n\
         <li><a href=\"#glance\">At a glance</a>: every scenario's headroom and verdict</li>\n",
    );
    for s in &page.sections {
        let _ = writeln!(
            out,
            "<li><a href=\"#{0}\">{0}</a>: {1}</li>",
            esc(&s.name),
            esc(&s.title)
        );
    }
    out.push_str("</ul></nav>\n<h2 id=\"glance\">At a glance</h2>\n");
    overview(&mut out, &page.sections);
    for s in &page.sections {
        section(&mut out, s);
    }
    let _ = write!(
        out,
        "<footer>Written by brink {} with <code>{}</code>. Every folder holds \
         <code>*.provenance.json</code>: the scenario's digest, seed, variant and overrides \
         of its files.</footer>\n</body>\n</html>\n",
        esc(&page.brink),
        esc(&page.command)
    );
    out.into_bytes()
}

fn section(out: &mut String, s: &Section) {
    let n = esc(&s.name);
    let _ = writeln!(
        out,
        "<section class=\"scenario\" id=\"{n}\">\n<h2>{}</h2>\n<p><code>{n}</code></p>",
        esc(&s.title)
    );
    if !s.case.trim().is_empty() {
        let (source, story) = split_case(&s.case);
        out.push_str("<div class=\"case\"><p><b>The incident.</b> ");
        if let Some(src) = source {
            let _ = write!(out, "<i>Source: {}</i>. ", linkify(src));
        }
        let mut chars = story.chars();
        let story: String = chars
            .next()
            .map(|c| c.to_uppercase().chain(chars).collect())
            .unwrap_or_default();
        let _ = writeln!(out, "{}</p></div>", linkify(&story));
    }
    if !s.description.trim().is_empty() {
        out.push_str(&markdown(&s.description));
    }
    let mut runs = s.runs.iter();
    if let Some(b) = runs.next() {
        out.push_str("<h3>Timeline</h3>\n");
        run_view(out, &s.name, b);
    }
    if runs.len() > 0 {
        out.push_str("<h3>The designs (variants)</h3>\n<div class=\"grid\">\n");
        for r in runs {
            out.push_str("<figure>\n<figcaption>");
            if let Some(v) = &r.variant {
                let _ = write!(out, "<h4>{}</h4>", esc(v));
            }
            let _ = writeln!(out, "{}</figcaption>", esc(&r.description));
            run_view(out, &s.name, r);
            out.push_str("</figure>\n");
        }
        out.push_str("</div>\n");
    }
    if let Some(r) = &s.tipping {
        out.push_str("<h3>Tipping point</h3>\n");
        picture(
            out,
            &s.name,
            "tipping",
            &format!("tipping sweep of {}", s.name),
        );
        let _ = writeln!(
            out,
            "<p>Swept {}; measured: {} (<code>{}</code>). Headroom by design:</p>",
            match &r.label {
                Some(l) => format!("{} (<code>{}</code>)", esc(l), esc(&r.vary)),
                None => format!("<code>{}</code>", esc(&r.vary)),
            },
            esc(&measure_words(&r.measure)),
            esc(&r.measure)
        );
        let rows: Vec<Vec<String>> = headroom_rows(r)
            .iter()
            .map(|row| row.iter().map(|c| esc(c)).collect())
            .collect();
        table(out, &rows, &[]);
        if let Some(note) = collapse_note(r) {
            let _ = writeln!(out, "<p>{}</p>", esc(&note));
        }
        for note in slo_notes(r)
            .into_iter()
            .chain(precision_notes(r))
            .chain(recovery_notes(r))
        {
            let _ = writeln!(out, "<p>{}</p>", esc(&note));
        }
    }
    // Each sweep's files under its own picture (they all used to follow the last one).
    file_links(out, &s.name, &s.tipping_files);
    if let Some(h) = &s.hysteresis {
        hysteresis(out, &s.name, h, &s.hysteresis_files);
    }
    if s.phase {
        out.push_str("<h3>Phase map</h3>\n");
        picture(out, &s.name, "phase", &format!("phase map of {}", s.name));
    }
    file_links(out, &s.name, &s.phase_files);
    out.push_str("<p class=\"back\"><a href=\"#contents\">back to contents</a></p>\n</section>\n");
}
