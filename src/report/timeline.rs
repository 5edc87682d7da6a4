//! The timeline picture: the main series over time in stacked panels, with events shaded
//! and interventions marked and numbered, drawn from the exported time series only.

use super::figure::{self, Figure};
use super::queueing::Mmc;
use crate::model::metrics::{Marker, MarkerKind, TimeSeries};
use crate::scenario::{Measure, Owner};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::path::Path;

pub use super::figure::ensure_font;

/// Colours that stay apart for the colour-blind (Okabe–Ito) plus greys.
pub const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(120, 120, 120),
    RGBColor(0, 0, 0),
];

/// How a line is stroked: solid or one of four dash patterns, so that lines stay apart
/// without colour too (in print, for the colour-blind, on a projector).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    Solid,
    /// Long dashes (12 px on, 6 off).
    Long,
    /// Short dashes (5 on, 4 off).
    Short,
    /// Dots (2 on, 4 off).
    Dotted,
    /// Wide dashes with narrow gaps (20 on, 4 off).
    Wide,
}

impl Dash {
    /// The order in which a panel's lines take their patterns.
    pub const CYCLE: [Dash; 5] = [
        Dash::Solid,
        Dash::Long,
        Dash::Short,
        Dash::Dotted,
        Dash::Wide,
    ];

    /// Dash and gap lengths in pixels (none for a solid line).
    fn pattern(self) -> Option<(u32, u32)> {
        match self {
            Dash::Solid => None,
            Dash::Long => Some((12, 6)),
            Dash::Short => Some((5, 4)),
            Dash::Dotted => Some((2, 4)),
            Dash::Wide => Some((20, 4)),
        }
    }
}

/// One line on a panel.
pub struct Line {
    pub label: String,
    pub values: Vec<f64>,
    pub color: RGBColor,
    pub dash: Dash,
    /// Stroke width in pixels.
    pub width: u32,
}

/// One panel of the timeline.
pub struct Panel {
    pub title: String,
    pub lines: Vec<Line>,
    /// Fixed y range top (e.g. 1.05 for ratios), else from the data.
    pub y_max: Option<f64>,
    /// Whole-number series (queue lengths, servers, users): ticks on whole numbers.
    pub integer: bool,
}

/// A line before it is styled: its label, values, whether it is the panel's main line,
/// and its dash pattern if its role fixes one (a class's goodput is solid, its offered
/// load long dashes, ...).
struct Series {
    label: String,
    values: Vec<f64>,
    bold: bool,
    dash: Option<Dash>,
}

fn series(label: String, values: Vec<f64>, bold: bool) -> Series {
    Series {
        label,
        values,
        bold,
        dash: None,
    }
}

/// The colours of data lines: the Okabe-Ito colours and grey; black is kept for the
/// reference lines of theory.
const LINE_COLORS: usize = 7;

/// Styles a panel's lines: line `i` takes colour `i` of the cycle and, unless its role
/// fixes one, dash pattern `i`; so two lines of a panel differ in colour (up to seven
/// lines) and in dash or in the pair of both.
fn styled(all: Vec<Series>) -> Vec<Line> {
    all.into_iter()
        .enumerate()
        .map(|(i, s)| Line {
            label: s.label,
            values: s.values,
            color: PALETTE[i % LINE_COLORS],
            dash: s.dash.unwrap_or(Dash::CYCLE[i % Dash::CYCLE.len()]),
            width: if s.bold { 3 } else { 2 },
        })
        .collect()
}

/// A labelled horizontal reference line (black, long dashes): a value theory predicts.
fn reference(label: String, value: f64, n: usize) -> Line {
    Line {
        label,
        values: vec![value; n],
        color: PALETTE[7],
        dash: Dash::Long,
        width: 2,
    }
}

/// Whether a series is worth a line: some finite value other than zero.
fn nonzero(values: &[f64]) -> bool {
    values.iter().any(|v| v.is_finite() && *v != 0.0)
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The title of the ratios panel from the ratios it holds.
pub fn ratio_title(measures: &[Measure]) -> String {
    let mut parts = Vec::new();
    let has = |m: Measure| measures.contains(&m);
    if has(Measure::Utilization) || has(Measure::PrimaryUtilization) {
        parts.push("Utilisation");
    }
    if has(Measure::HitRatio) {
        parts.push(if parts.is_empty() {
            "Cache hit ratio"
        } else {
            "cache hit ratio"
        });
    }
    if has(Measure::BreakerOpen) {
        parts.push(if parts.is_empty() {
            "Breaker open (share of time)"
        } else {
            "breaker open (share of time)"
        });
    }
    and_list(&parts)
}

/// The panels a time series offers: requests, the queues, queries to pools, latency,
/// utilisation and ratios, and where the scenario has them servers of autoscaled pools,
/// workers waiting on calls and users of closed classes. `theory` (a textbook M/M/c
/// scenario) adds its mean queue length and mean sojourn as reference lines. Panels
/// without a line are left out.
pub fn default_panels(ts: &TimeSeries, theory: Option<&Mmc>) -> Vec<Panel> {
    let of = |m: Measure| {
        (0..ts.columns.len())
            .filter(move |&i| ts.columns[i].measure == m)
            .map(|i| (ts.component(i).to_string(), i))
    };
    let n_rows = ts.rows.len();
    // A class's other columns are found by its owner, not by name.
    let classes: Vec<(String, Owner)> = of(Measure::Goodput)
        .map(|(c, i)| (c, ts.columns[i].owner))
        .collect();
    let mut rates = Vec::new();
    let mut rate_measures: Vec<&str> = Vec::new();
    let mut latency = Vec::new();
    let mut users = Vec::new();
    for (c, owner) in &classes {
        let get = |m: Measure| {
            ts.columns
                .iter()
                .position(|col| col.owner == *owner && col.measure == m)
                .map(|k| ts.values(k))
        };
        // Each measure its own dash (the order of Dash::CYCLE); failed and rejected
        // only when some request failed or was rejected.
        let measures = [
            (Measure::Goodput, "goodput", true),
            (Measure::Offered, "offered", true),
            (Measure::Attempts, "attempts", true),
            (Measure::Failed, "failed", false),
            (Measure::Rejected, "rejected", false),
        ];
        for ((m, word, always), dash) in measures.into_iter().zip(Dash::CYCLE) {
            if let Some(v) = get(m).filter(|v| always || nonzero(v)) {
                rates.push(Series {
                    dash: Some(dash),
                    ..series(format!("{c} {word}"), v, m == Measure::Goodput)
                });
                rate_measures.push(word);
            }
        }
        if let Some(v) = get(Measure::LatencyP99) {
            latency.push(series(format!("{c} p99"), v, true));
        }
        if let Some(v) = get(Measure::UsersWaiting) {
            users.push(series(format!("{c} users waiting"), v, true));
        }
    }
    let order = ["offered", "attempts", "goodput", "failed", "rejected"];
    let present: Vec<&str> = order
        .into_iter()
        .filter(|w| rate_measures.contains(w))
        .collect();
    // The queue of each pool: where a backlog builds.
    let queues: Vec<Series> = of(Measure::QueueLen)
        .map(|(pool, col)| series(format!("{pool} queued"), ts.values(col), true))
        .collect();
    // Queries sent to each pool (every part and every retry counts): shows amplification.
    // Then the tries of each pool call (queries per dependency) and the work pools shed.
    let mut queries: Vec<Series> = of(Measure::QueriesPerS)
        .map(|(pool, col)| {
            series(
                format!("{pool} queries (parts and retries)"),
                ts.values(col),
                true,
            )
        })
        .collect();
    let mut query_words = vec!["Queries sent to pools"];
    let calls: Vec<Series> = of(Measure::CallsPerS)
        .map(|(call, col)| series(format!("call {call} tries"), ts.values(col), false))
        .collect();
    if !calls.is_empty() {
        query_words.push("call tries");
    }
    queries.extend(calls);
    let shed: Vec<Series> = of(Measure::ShedPerS)
        .map(|(pool, col)| series(format!("{pool} shed"), ts.values(col), false))
        .collect();
    if !shed.is_empty() {
        query_words.push("queries shed");
    }
    queries.extend(shed);
    // Workers held by jobs waiting on their calls: busy but not serving.
    let waiting: Vec<Series> = of(Measure::WaitingOnCalls)
        .map(|(pool, col)| {
            series(
                format!("{pool} workers waiting on calls"),
                ts.values(col),
                true,
            )
        })
        .collect();
    // Live servers of autoscaled pools.
    let servers: Vec<Series> = of(Measure::Servers)
        .map(|(pool, col)| series(format!("{pool} live servers"), ts.values(col), true))
        .collect();
    let mut ratios = Vec::new();
    let mut ratio_measures = Vec::new();
    for (col, c) in ts.columns.iter().enumerate() {
        if !c.measure.is_ratio() {
            continue;
        }
        let name = ts.component(col);
        let label = match c.measure {
            Measure::PrimaryUtilization => format!("{name} primaries' utilisation"),
            Measure::Utilization => format!("{name} utilisation"),
            Measure::BreakerOpen => format!("call {name} breaker open"),
            _ => format!("{name} hit ratio"),
        };
        ratio_measures.push(c.measure);
        ratios.push(series(label, ts.values(col), true));
    }
    let mut queue_lines = styled(queues);
    let mut latency_lines = styled(latency);
    if let Some(m) = theory {
        queue_lines.push(reference(
            format!(
                "theory: mean queued {} ({})",
                sig3(m.mean_queue()),
                m.name()
            ),
            m.mean_queue(),
            n_rows,
        ));
        latency_lines.push(reference(
            format!(
                "theory: mean sojourn {} s ({})",
                sig3(m.mean_sojourn_s()),
                m.name()
            ),
            m.mean_sojourn_s(),
            n_rows,
        ));
    }
    let panel = |title: String, lines: Vec<Line>, y_max: Option<f64>, integer: bool| Panel {
        title,
        lines,
        y_max,
        integer,
    };
    let panels = vec![
        panel(
            format!("Requests per second: {}", and_list(&present)),
            styled(rates),
            None,
            false,
        ),
        panel(
            "Queued queries per pool (time-average)".into(),
            queue_lines,
            None,
            true,
        ),
        panel(
            format!("{} per second", and_list(&query_words)),
            styled(queries),
            None,
            false,
        ),
        panel(
            if theory.is_some() {
                "Latency p99 of successful requests (s), and the theoretical mean".into()
            } else {
                "Latency p99 of successful requests (s)".into()
            },
            latency_lines,
            None,
            false,
        ),
        panel(
            ratio_title(&ratio_measures),
            styled(ratios),
            Some(1.05),
            false,
        ),
        panel(
            "Servers of autoscaled pools (time-average)".into(),
            styled(servers),
            None,
            true,
        ),
        panel(
            "Workers held waiting on calls (time-average)".into(),
            styled(waiting),
            None,
            true,
        ),
        panel(
            "Users waiting on a request (closed classes)".into(),
            styled(users),
            None,
            true,
        ),
    ];
    panels.into_iter().filter(|p| !p.lines.is_empty()).collect()
}

/// The top of a panel's y axis: the fixed top if any, else 10% above the data (at least
/// 1), rounded up to a whole number for whole-number panels.
pub fn y_top(panel_max: Option<f64>, data_max: f64, integer: bool) -> f64 {
    let top = panel_max.unwrap_or(if data_max > 0.0 { data_max * 1.1 } else { 1.0 });
    if integer { top.ceil().max(1.0) } else { top }
}

/// How many y labels to ask plotters for: on a whole-number axis from 0 to `top`, at most
/// `top + 1`, so that its steps (1, 2 or 5 times a power of ten) are never below 1 and the
/// ticks fall on whole numbers.
pub fn y_labels(top: f64, integer: bool) -> usize {
    if integer {
        (top as usize + 1).clamp(2, 8)
    } else {
        8
    }
}

/// A tick label: whole numbers without a decimal point (`350`, not `350.0`), others in
/// the fewest digits that show them (to 1e-6).
pub fn tick_label(v: f64) -> String {
    let r = (v * 1e6).round() / 1e6;
    if r == 0.0 { "0".into() } else { format!("{r}") }
}

/// A value to three significant digits: `2.39`, `8.1`, `10`.
fn sig3(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return tick_label(v);
    }
    let scale = 10f64.powi(2 - v.abs().log10().floor() as i32);
    tick_label((v * scale).round() / scale)
}

/// Where an event is shaded on a time axis from `t0` to `t1` (seconds): from its start to
/// its end, at least 1/400 of the axis's length wide (so that a short event shows), and
/// clipped to the axis; none if it lies outside.
pub fn shade(start: f64, end: f64, t0: f64, t1: f64) -> Option<(f64, f64)> {
    let min_width = (t1 - t0) / 400.0;
    let (a, b) = (start.max(t0), end.max(start + min_width).min(t1));
    (a < b).then_some((a, b))
}

/// Writes `<stem>.png` and `<stem>.svg` into `dir` for rows and markers within
/// `[from, to)` seconds.
pub fn write_window(
    dir: &Path,
    stem: &str,
    title: &str,
    ts: &TimeSeries,
    markers: &[Marker],
    window: (f64, f64),
    theory: Option<&Mmc>,
) -> std::io::Result<()> {
    let (from, to) = window;
    let t = ts.column("time_s").unwrap_or_default();
    let rows: Vec<Vec<f64>> = ts
        .rows
        .iter()
        .zip(&t)
        .filter(|(_, t)| **t >= from && **t < to)
        .map(|(r, _)| r.clone())
        .collect();
    let window = TimeSeries {
        columns: ts.columns.clone(),
        rows,
    };
    let marks: Vec<Marker> = markers
        .iter()
        .filter(|m| m.start_s < to && m.end_s.unwrap_or(m.start_s) >= from)
        .cloned()
        .collect();
    let panels = default_panels(&window, theory);
    write_named(dir, stem, title, &window, &marks, &panels)
}

/// Writes `timeline.png` and `timeline.svg` into `dir`.
pub fn write(
    dir: &Path,
    title: &str,
    ts: &TimeSeries,
    markers: &[Marker],
    panels: &[Panel],
) -> std::io::Result<()> {
    write_named(dir, "timeline", title, ts, markers, panels)
}

/// The timeline of one run, or of a window of it.
struct Timeline<'a> {
    title: &'a str,
    ts: &'a TimeSeries,
    markers: &'a [Marker],
    panels: &'a [Panel],
}

/// The picture's width; the legends take [`LEGEND_W`] of it, right of the data.
const WIDTH: u32 = 1600;
const LEGEND_W: u32 = 360;
const TITLE_H: u32 = 50;
/// The height of one line of a legend.
const ENTRY_H: u32 = 22;

/// A panel's height: room for its plot and for its legend beside it.
fn panel_height(p: &Panel) -> u32 {
    (56 + ENTRY_H * p.lines.len() as u32).max(250)
}

/// The height of the numbered list of markers under the panels (two columns).
fn markers_height(n: usize) -> u32 {
    22 * n.div_ceil(2) as u32 + 10
}

impl Figure for Timeline<'_> {
    fn size(&self) -> (u32, u32) {
        let panels: u32 = self.panels.iter().map(panel_height).sum();
        (
            WIDTH,
            TITLE_H + panels + 20 + markers_height(self.markers.len()),
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        draw(root, self.title, self.ts, self.markers, self.panels)
    }
}

fn write_named(
    dir: &Path,
    stem: &str,
    title: &str,
    ts: &TimeSeries,
    markers: &[Marker],
    panels: &[Panel],
) -> std::io::Result<()> {
    let times = ts.column("time_s").unwrap_or_default();
    let span = match (times.first(), times.last()) {
        (Some(a), Some(b)) if times.len() > 1 => {
            (b - a) * times.len() as f64 / (times.len() - 1) as f64
        }
        _ => 1.0,
    };
    let drawn = super::markers::coalesce(markers, span);
    let fig = Timeline {
        title,
        ts,
        markers: &drawn,
        panels,
    };
    figure::write(dir, stem, &fig)
}

/// The unit the time axis reads best in for a run of `span_s` seconds.
pub fn time_unit(span_s: f64) -> (f64, &'static str) {
    if span_s >= 3.0 * 3600.0 {
        (3600.0, "h")
    } else if span_s >= 180.0 {
        (60.0, "min")
    } else {
        (1.0, "s")
    }
}

/// Draws `points` (pixel or chart coordinates) in a line's colour, width and dashes.
fn stroke<DB: DrawingBackend, CT: plotters::coord::CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    points: Vec<CT::From>,
    line: &Line,
) -> Result<(), String>
where
    CT::From: Clone,
{
    let style = line.color.stroke_width(line.width);
    let r = match line.dash.pattern() {
        None => area.draw(&PathElement::new(points, style)),
        Some((on, off)) => area.draw(&DashedPathElement::new(points, on, off, style)),
    };
    r.map_err(|e| e.to_string())
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    ts: &TimeSeries,
    markers: &[Marker],
    panels: &[Panel],
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let times = ts.column("time_s").unwrap_or_default();
    let step = if times.len() > 1 {
        times[1] - times[0]
    } else {
        1.0
    };
    let t0 = times.first().copied().unwrap_or(0.0);
    let span = times.last().map(|t| t + step).unwrap_or(1.0);
    let (unit, _) = time_unit(span - t0);
    let x_fmt = |x: &f64| fmt_time(x * unit);
    let (w, _) = root.dim_in_pixel();
    let (top, mut rest) = root.split_vertically(TITLE_H);
    top.draw(&Text::new(
        title.to_string(),
        (20, 12),
        ("sans-serif", 26).into_font().style(FontStyle::Bold),
    ))
    .map_err(e)?;
    let mids: Vec<f64> = times.iter().map(|t| (t + step / 2.0) / unit).collect();
    for (pi, panel) in panels.iter().enumerate() {
        let last = pi + 1 == panels.len();
        let h = panel_height(panel) + if last { 20 } else { 0 };
        let (area, below) = rest.split_vertically(h);
        rest = below;
        let (plot, side) = area.split_horizontally(w - LEGEND_W);
        let data_max = panel
            .lines
            .iter()
            .flat_map(|l| l.values.iter().copied())
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        let y_max = y_top(panel.y_max, data_max, panel.integer);
        let mut chart = ChartBuilder::on(&plot)
            .caption(&panel.title, ("sans-serif", 20))
            .margin_left(10)
            .margin_right(20)
            .x_label_area_size(if last { 45 } else { 25 })
            .y_label_area_size(80)
            .build_cartesian_2d(t0 / unit..span / unit, 0.0..y_max)
            .map_err(e)?;
        let y_fmt = |y: &f64| tick_label(*y);
        let mut mesh = chart.configure_mesh();
        mesh.light_line_style(RGBColor(235, 235, 235))
            .label_style(("sans-serif", 15))
            .x_label_formatter(&x_fmt)
            .y_labels(y_labels(y_max, panel.integer))
            .y_label_formatter(&y_fmt);
        if last {
            mesh.x_desc(if span >= 3600.0 {
                "time (h:mm:ss)"
            } else {
                "time (m:ss)"
            });
        }
        mesh.draw().map_err(e)?;
        for (i, m) in markers.iter().enumerate() {
            let x0 = match (m.kind, m.end_s) {
                (MarkerKind::Event, Some(end)) => {
                    let Some((a, b)) = shade(m.start_s, end, t0, span) else {
                        continue;
                    };
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(a / unit, 0.0), (b / unit, y_max)],
                            RGBColor(214, 39, 40).mix(0.13).filled(),
                        )))
                        .map_err(e)?;
                    a / unit
                }
                _ => {
                    let x0 = m.start_s / unit;
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(x0, 0.0), (x0, y_max)],
                            BLACK.mix(0.6).stroke_width(1),
                        )))
                        .map_err(e)?;
                    x0
                }
            };
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("{}", i + 1),
                    (x0, y_max * 0.97),
                    ("sans-serif", 14).into_font(),
                )))
                .map_err(e)?;
        }
        let plotting = chart.plotting_area();
        for line in &panel.lines {
            // A missing value (no successful request in a step) breaks the line.
            let mut segments: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
            for (t, v) in mids.iter().zip(&line.values) {
                if v.is_finite() {
                    segments.last_mut().unwrap().push((*t, v.min(y_max)));
                } else if !segments.last().unwrap().is_empty() {
                    segments.push(Vec::new());
                }
            }
            for seg in segments.into_iter().filter(|s| !s.is_empty()) {
                stroke(plotting, seg, line)?;
            }
        }
        // The legend, right of the plot: never over the data.
        for (k, line) in panel.lines.iter().enumerate() {
            let y = 40 + ENTRY_H as i32 * k as i32;
            stroke(&side, vec![(8, y), (44, y)], line)?;
            side.draw(&Text::new(
                line.label.clone(),
                (52, y - 8),
                ("sans-serif", 15).into_font(),
            ))
            .map_err(e)?;
        }
    }
    let half = (w / 2) as i32;
    for (i, m) in markers.iter().enumerate() {
        let n = i + 1;
        let x = 20 + (i as i32 % 2) * half;
        let y = 5 + (i as i32 / 2) * 22;
        let when = fmt_time(m.start_s);
        let what = match (m.kind, m.end_s) {
            (MarkerKind::Event, Some(end)) => {
                format!("{n}. {} ({} to {}, shaded)", m.label, when, fmt_time(end))
            }
            _ => format!("{n}. {} (at {})", m.label, when),
        };
        rest.draw(&Text::new(what, (x, y), ("sans-serif", 16).into_font()))
            .map_err(e)?;
    }
    Ok(())
}

/// Formats a time in seconds as h:mm:ss or m:ss.
pub fn fmt_time(s: f64) -> String {
    let t = s.round() as u64;
    if t >= 3600 {
        format!("{}:{:02}:{:02}", t / 3600, (t / 60) % 60, t % 60)
    } else {
        format!("{}:{:02}", t / 60, t % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::coord::ranged1d::{KeyPointHint, Ranged};
    use plotters::coord::types::RangedCoordf64;

    /// Ably's zoom (21:00 to 22:10) of an event from 21:22:00 to 21:22:20: shaded to
    /// 21:22:20. The minimum width used to come from the axis's end time (79,800 s / 400
    /// = 199.5 s), shading to 21:25:20; it comes from the axis's length (10.5 s).
    #[test]
    fn zoom_shading_ends_with_the_event() {
        let (t0, t1) = (21.0 * 3600.0, 22.0 * 3600.0 + 600.0);
        let (start, end) = (
            21.0 * 3600.0 + 22.0 * 60.0,
            21.0 * 3600.0 + 22.0 * 60.0 + 20.0,
        );
        assert_eq!(shade(start, end, t0, t1), Some((start, end)));
        // An event of no length still shows: 1/400 of the axis.
        let (a, b) = shade(start, start, t0, t1).unwrap();
        assert_eq!(a, start);
        assert!((b - a - 4200.0 / 400.0).abs() < 1e-9);
        // Clipped to the axis, and none outside it.
        assert_eq!(shade(t0 - 50.0, t0 + 10.0, t0, t1), Some((t0, t0 + 10.0)));
        assert_eq!(shade(t1 + 1.0, t1 + 5.0, t0, t1), None);
    }

    /// Whole-number panels: the top is whole and every tick plotters places is a whole
    /// number, for tops from 1 to 2,000 (data from 0.3 up).
    #[test]
    fn integer_axes_tick_whole_numbers() {
        for k in 1..2000 {
            let data_max = k as f64 * 0.3 + 0.01;
            let top = y_top(None, data_max, true);
            assert_eq!(top, top.round());
            assert!(top >= data_max);
            let ticks = RangedCoordf64::from(0.0..top).key_points(y_labels(top, true));
            assert!(ticks.len() >= 2, "top {top}: {ticks:?}");
            for t in &ticks {
                assert_eq!(*t, t.round(), "top {top}: tick {t}");
            }
        }
        // Other panels keep their fractional ticks.
        assert_eq!(y_top(None, 0.5, false), 0.5 * 1.1);
        assert_eq!(y_top(Some(1.05), 0.5, false), 1.05);
        assert!(8.max_num_points() >= 8);
    }

    #[test]
    fn tick_labels_drop_a_needless_decimal_point() {
        assert_eq!(tick_label(350.0), "350");
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(tick_label(0.25), "0.25");
        assert_eq!(tick_label(0.1 + 0.2), "0.3");
        assert_eq!(tick_label(1e-3), "0.001");
        assert_eq!(sig3(2.385_73), "2.39");
        assert_eq!(sig3(1.745_541), "1.75");
        assert_eq!(sig3(8.1), "8.1");
        assert_eq!(sig3(10.0), "10");
    }

    /// Panel titles name what the panels hold: no "hit ratio" without a cache.
    #[test]
    fn panel_titles_follow_their_contents() {
        assert_eq!(ratio_title(&[Measure::Utilization]), "Utilisation");
        assert_eq!(
            ratio_title(&[Measure::Utilization, Measure::HitRatio]),
            "Utilisation and cache hit ratio"
        );
        assert_eq!(
            ratio_title(&[
                Measure::Utilization,
                Measure::HitRatio,
                Measure::BreakerOpen
            ]),
            "Utilisation, cache hit ratio and breaker open (share of time)"
        );
        let titles = |name: &str, dur: &str| {
            let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("scenarios")
                .join(format!("{name}.toml"));
            let set = crate::scenario::Override::parse(&format!("duration=\"{dur}\"")).unwrap();
            let sc = crate::scenario::Loader::open(&path)
                .unwrap()
                .load(None, &[set])
                .unwrap();
            let r = crate::model::run(&sc, 0).unwrap();
            let theory = Mmc::of(&sc);
            default_panels(&r.series, theory.as_ref())
                .into_iter()
                .map(|p| {
                    let labels: Vec<String> = p.lines.iter().map(|l| l.label.clone()).collect();
                    (p.title, p.integer, labels)
                })
                .collect::<Vec<_>>()
        };
        // retry-storm: no cache, a queue, failures; every line of a panel differs in both
        // colour and dash from the others.
        let rs = titles("retry-storm", "600s");
        let names: Vec<&str> = rs.iter().map(|p| p.0.as_str()).collect();
        assert!(names.iter().all(|t| !t.contains("hit ratio")), "{names:?}");
        assert!(names.contains(&"Utilisation"), "{names:?}");
        assert!(
            rs.iter().any(|p| p.0.starts_with("Queued queries") && p.1),
            "{names:?}"
        );
        // mm1: the theoretical means drawn as reference lines.
        let mm1 = titles("mm1", "2000s");
        let refs: Vec<&String> = mm1
            .iter()
            .flat_map(|p| &p.2)
            .filter(|l| l.starts_with("theory:"))
            .collect();
        assert_eq!(refs.len(), 2, "{mm1:?}");
        assert!(
            refs[0].contains("8.1") && refs[1].contains("10 s"),
            "{refs:?}"
        );
    }

    #[test]
    fn lines_of_a_panel_differ_in_colour_and_dash() {
        let lines = styled(
            (0..5)
                .map(|i| series(format!("{i}"), vec![], i == 0))
                .collect(),
        );
        for (i, a) in lines.iter().enumerate() {
            for b in &lines[i + 1..] {
                assert!(a.color != b.color && a.dash != b.dash);
            }
        }
    }
}
