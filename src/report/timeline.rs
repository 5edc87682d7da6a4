//! The timeline picture: the main series over time in stacked panels, with events shaded
//! and interventions marked and numbered, drawn from the exported time series only.
//! Which panels it draws is chosen in `panels.rs`, how a line looks in `style.rs`, the
//! axes' numbers in `axis.rs`; this file lays out and draws the picture.

pub(crate) mod axis;
pub mod layout;
mod panels;
mod style;

use super::figure::{self, Figure};
use super::queueing::Mmc;
use crate::model::metrics::{Marker, MarkerKind, TimeSeries};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use style::stroke;

pub use super::figure::ensure_font;
pub use axis::{fmt_time, shade, sig3, tick_label, time_unit, y_labels, y_top};
pub use panels::{Panel, default_panels, ratio_title};
pub use style::{Dash, Line, PALETTE};

/// Writes `<stem>.png` and `<stem>.svg` into `dir` for rows and markers within
/// `[from, to)` seconds; the title names the window ([`layout::zoom_title`]).
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
    let title = layout::zoom_title(title, from, to);
    write_named(dir, stem, &title, &window, &marks, &panels)
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
    // Smaller type for a title too wide for the picture (a long one with a variant's name).
    let font = figure::fitting_font(&top, title, 26, w - 40, true);
    top.draw(&Text::new(title.to_string(), (20, 12), font))
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
        let whole = layout::whole_ticks(panel.integer, data_max);
        let y_max = y_top(panel.y_max, data_max, whole);
        let y_min = layout::y_floor(y_max);
        let mut chart = ChartBuilder::on(&plot)
            .caption(&panel.title, ("sans-serif", 20))
            .margin_left(10)
            .margin_right(20)
            .x_label_area_size(if last { 45 } else { 25 })
            .y_label_area_size(80)
            .build_cartesian_2d(t0 / unit..span / unit, y_min..y_max)
            .map_err(e)?;
        let y_fmt = |y: &f64| tick_label(*y);
        let mut mesh = chart.configure_mesh();
        mesh.light_line_style(RGBColor(235, 235, 235))
            .label_style(("sans-serif", 15))
            .x_label_formatter(&x_fmt)
            .y_labels(y_labels(y_max, whole))
            .y_label_formatter(&y_fmt);
        if last {
            mesh.x_desc(if span >= 3600.0 {
                "time (h:mm:ss)"
            } else {
                "time (m:ss)"
            });
        }
        mesh.draw().map_err(e)?;
        let mut numbers = Vec::with_capacity(markers.len());
        for (i, m) in markers.iter().enumerate() {
            let x0 = match (m.kind, m.end_s) {
                (MarkerKind::Event, Some(end)) => {
                    let Some((a, b)) = shade(m.start_s, end, t0, span) else {
                        continue;
                    };
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(a / unit, y_min), (b / unit, y_max)],
                            RGBColor(214, 39, 40).mix(0.13).filled(),
                        )))
                        .map_err(e)?;
                    a / unit
                }
                _ => {
                    let x0 = m.start_s / unit;
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(x0, y_min), (x0, y_max)],
                            BLACK.mix(0.6).stroke_width(1),
                        )))
                        .map_err(e)?;
                    x0
                }
            };
            numbers.push((format!("{}", i + 1), x0));
        }
        // Numbers that would overprint (markers at one time, or a few pixels apart)
        // stack downwards, a line of text apart.
        let number_font: TextStyle = ("sans-serif", 14).into_font().into();
        let spans: Vec<(i32, i32)> = numbers
            .iter()
            .map(|(text, x)| {
                let left = chart.backend_coord(&(*x, 0.0)).0 + 3;
                let width = plot
                    .estimate_text_size(text, &number_font)
                    .map_or(8, |s| s.0);
                (left, left + width as i32)
            })
            .collect();
        // A number starts 3 pixels right of its line, so that the line does not cross it.
        let (plot_w, plot_h) = chart.plotting_area().dim_in_pixel();
        let nudge = 3.0 * (span - t0) / unit / plot_w.max(1) as f64;
        let line_h = (y_max - y_min) * 16.0 / plot_h.max(1) as f64;
        let rows = super::markers::label_rows(&spans);
        for ((text, x0), row) in numbers.into_iter().zip(rows) {
            chart
                .draw_series(std::iter::once(Text::new(
                    text,
                    (x0 + nudge, y_max * 0.97 - row as f64 * line_h),
                    number_font.clone(),
                )))
                .map_err(e)?;
        }
        let plotting = chart.plotting_area();
        let on_top: Vec<bool> = panel.lines.iter().map(|l| l.on_top).collect();
        for line in layout::draw_order(&on_top)
            .into_iter()
            .map(|i| &panel.lines[i])
        {
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
