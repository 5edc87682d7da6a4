//! `index.html`: one offline page over every scenario's outputs, with the pictures next to
//! it (relative paths) and the headroom tables as HTML.

use crate::report::sweep::{SweepReport, headroom_rows};
use std::fmt::Write;

/// What the page shows for one scenario.
pub struct Section {
    /// The scenario's folder name (relative to the page).
    pub name: String,
    pub title: String,
    pub description: String,
    pub case: String,
    pub tipping: Option<SweepReport>,
    pub phase: bool,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The bytes of `index.html`.
pub fn index_html(sections: &[Section]) -> Vec<u8> {
    let mut out = String::from(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>brink: scenarios</title>\n<style>\nbody{font-family:sans-serif;max-width:1500px;margin:2em auto;padding:0 1em;color:#222}\nimg{max-width:100%;border:1px solid #ddd}\ntable{border-collapse:collapse;margin:1em 0}\ntd,th{border:1px solid #ccc;padding:.3em .8em;text-align:right}\ntd:first-child,th:first-child{text-align:left}\npre{white-space:pre-wrap;background:#f7f7f7;padding:.8em}\nsection{border-top:2px solid #888;margin-top:2em}\n</style>\n</head>\n<body>\n<h1>brink: scenarios</h1>\n<ul>\n",
    );
    for s in sections {
        let _ = writeln!(
            out,
            "<li><a href=\"#{0}\">{0}</a>: {1}</li>",
            esc(&s.name),
            esc(&s.title)
        );
    }
    out.push_str("</ul>\n");
    for s in sections {
        let n = esc(&s.name);
        let _ = writeln!(out, "<section id=\"{n}\">\n<h2>{}</h2>", esc(&s.title));
        if !s.description.is_empty() {
            let _ = writeln!(out, "<pre>{}</pre>", esc(&s.description));
        }
        if !s.case.is_empty() {
            let _ = writeln!(out, "<p><b>Case:</b> {}</p>", esc(&s.case));
        }
        let _ = writeln!(
            out,
            "<h3>Timeline</h3>\n<img src=\"{n}/timeline.png\" alt=\"timeline of {n}\">"
        );
        if let Some(r) = &s.tipping {
            let _ = writeln!(
                out,
                "<h3>Tipping point</h3>\n<img src=\"{n}/tipping.png\" alt=\"tipping sweep of {n}\">"
            );
            let _ = writeln!(
                out,
                "<p>Swept {}; measure <code>{}</code>; headroom = tipping point / operating point (below 1: a trigger already tips the design over at its own load).</p>\n<table>",
                match &r.label {
                    Some(l) => format!("{} (<code>{}</code>)", esc(l), esc(&r.vary)),
                    None => format!("<code>{}</code>", esc(&r.vary)),
                },
                esc(&r.measure)
            );
            for (i, row) in headroom_rows(r).iter().enumerate() {
                let tag = if i == 0 { "th" } else { "td" };
                out.push_str("<tr>");
                for c in row {
                    let _ = write!(out, "<{tag}>{}</{tag}>", esc(c));
                }
                out.push_str("</tr>\n");
            }
            out.push_str("</table>\n");
        }
        if s.phase {
            let _ = writeln!(
                out,
                "<h3>Phase map</h3>\n<img src=\"{n}/phase.png\" alt=\"phase map of {n}\">"
            );
        }
        out.push_str("</section>\n");
    }
    out.push_str("</body>\n</html>\n");
    out.into_bytes()
}
