//! The timeline picture: the main series over time in stacked panels, with events shaded
//! and interventions marked and numbered, drawn from the exported time series only.

use super::figure::{self, Figure};
use crate::model::metrics::{Marker, MarkerKind, TimeSeries};
use crate::scenario::{Measure, Owner};
use plotters::coord::Shift;
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

/// One line on a panel.
pub struct Line {
    pub label: String,
    pub values: Vec<f64>,
    pub color: RGBColor,
    pub thin: bool,
}

/// One panel of the timeline.
pub struct Panel {
    pub title: String,
    pub lines: Vec<Line>,
    /// Fixed y range top (e.g. 1.0 for ratios), else from the data.
    pub y_max: Option<f64>,
}

/// The panels a time series offers: request rates, latency, and utilisation and ratios.
pub fn default_panels(ts: &TimeSeries) -> Vec<Panel> {
    let of = |m: Measure| {
        (0..ts.columns.len())
            .filter(move |&i| ts.columns[i].measure == m)
            .map(|i| (ts.component(i).to_string(), i))
    };
    // A class's other columns are found by its owner, not by name.
    let classes: Vec<(String, Owner)> = of(Measure::Goodput)
        .map(|(c, i)| (c, ts.columns[i].owner))
        .collect();
    let mut rates = Vec::new();
    let mut latency = Vec::new();
    for (i, (c, owner)) in classes.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let get = |m: Measure| {
            ts.columns
                .iter()
                .position(|col| col.owner == *owner && col.measure == m)
                .map(|k| ts.values(k))
                .unwrap_or_default()
        };
        rates.push(Line {
            label: format!("{c} offered"),
            values: get(Measure::Offered),
            color: color.mix(0.45).to_rgba().flatten(),
            thin: true,
        });
        rates.push(Line {
            label: format!("{c} goodput"),
            values: get(Measure::Goodput),
            color,
            thin: false,
        });
        rates.push(Line {
            label: format!("{c} attempts"),
            values: get(Measure::Attempts),
            color: color.mix(0.7).to_rgba().flatten(),
            thin: true,
        });
        latency.push(Line {
            label: format!("{c} p99"),
            values: get(Measure::LatencyP99),
            color,
            thin: false,
        });
    }
    // Queries sent to each pool (every part and every retry counts): shows amplification.
    // Then the tries of each pool call (queries per dependency) and the work pools shed.
    let mut queries = Vec::new();
    for (i, (pool, col)) in of(Measure::QueriesPerS).enumerate() {
        queries.push(Line {
            label: format!("{pool} queries (parts and retries)"),
            values: ts.values(col),
            color: PALETTE[(4 + i) % PALETTE.len()],
            thin: false,
        });
    }
    let n = queries.len();
    for (i, (call, col)) in of(Measure::CallsPerS).enumerate() {
        queries.push(Line {
            label: format!("call {call} tries"),
            values: ts.values(col),
            color: PALETTE[(4 + n + i) % PALETTE.len()],
            thin: true,
        });
    }
    let n = queries.len();
    for (i, (pool, col)) in of(Measure::ShedPerS).enumerate() {
        queries.push(Line {
            label: format!("{pool} shed"),
            values: ts.values(col),
            color: PALETTE[(4 + n + i) % PALETTE.len()],
            thin: true,
        });
    }
    // Workers held by jobs waiting on their calls: busy but not serving.
    let mut waiting = Vec::new();
    for (i, (pool, col)) in of(Measure::WaitingOnCalls).enumerate() {
        waiting.push(Line {
            label: format!("{pool} workers waiting on calls"),
            values: ts.values(col),
            color: PALETTE[(1 + i) % PALETTE.len()],
            thin: false,
        });
    }
    // Live servers of autoscaled pools.
    let mut servers = Vec::new();
    for (i, (pool, col)) in of(Measure::Servers).enumerate() {
        servers.push(Line {
            label: format!("{pool} live servers"),
            values: ts.values(col),
            color: PALETTE[(2 + i) % PALETTE.len()],
            thin: false,
        });
    }
    let mut ratios = Vec::new();
    for (k, col) in ts
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.measure.is_ratio())
        .map(|(k, _)| k)
        .enumerate()
    {
        let name = ts.component(col);
        let label = match ts.columns[col].measure {
            Measure::PrimaryUtilization => format!("{name} primaries' utilisation"),
            Measure::Utilization => format!("{name} utilisation"),
            Measure::BreakerOpen => format!("call {name} breaker open"),
            _ => format!("{name} hit ratio"),
        };
        ratios.push(Line {
            label,
            values: ts.values(col),
            color: PALETTE[(k + 2) % PALETTE.len()],
            thin: false,
        });
    }
    let mut panels = vec![
        Panel {
            title: "Requests per second".into(),
            lines: rates,
            y_max: None,
        },
        Panel {
            title: "Queries sent to pools per second".into(),
            lines: queries,
            y_max: None,
        },
        Panel {
            title: "Latency p99 of successful requests (s)".into(),
            lines: latency,
            y_max: None,
        },
        Panel {
            title: "Utilisation and hit ratio".into(),
            lines: ratios,
            y_max: Some(1.05),
        },
    ];
    if !servers.is_empty() {
        panels.push(Panel {
            title: "Servers of autoscaled pools (time-average)".into(),
            lines: servers,
            y_max: None,
        });
    }
    if !waiting.is_empty() {
        panels.push(Panel {
            title: "Workers held waiting on calls (mean)".into(),
            lines: waiting,
            y_max: None,
        });
    }
    panels
}

trait Rgb {
    fn flatten(&self) -> RGBColor;
}
impl Rgb for RGBAColor {
    fn flatten(&self) -> RGBColor {
        // Blend toward white by the alpha, so light lines stay opaque in both formats.
        let a = self.3;
        let f = |c: u8| (c as f64 * a + 255.0 * (1.0 - a)).round() as u8;
        RGBColor(f(self.0), f(self.1), f(self.2))
    }
}

/// Writes `<stem>.png` and `<stem>.svg` into `dir` for rows and markers within
/// `[from, to)` seconds.
pub fn write_window(
    dir: &Path,
    stem: &str,
    title: &str,
    ts: &TimeSeries,
    markers: &[Marker],
    from: f64,
    to: f64,
) -> std::io::Result<()> {
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
    let panels = default_panels(&window);
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

impl Figure for Timeline<'_> {
    fn size(&self) -> (u32, u32) {
        let h = 150 + 260 * self.panels.len() as u32 + 22 * self.markers.len().div_ceil(2) as u32;
        (1400, h)
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
    let drawn = coalesce(markers, span);
    let fig = Timeline {
        title,
        ts,
        markers: &drawn,
        panels,
    };
    figure::write(dir, stem, &fig)
}

/// The most markers a timeline draws: the picture's size (a legend line per two) and its
/// drawing time stay bounded, however many occurrences a repeating trigger has.
pub const MAX_MARKERS: usize = 40;

/// The markers as drawn on a plot of `span_s` seconds: markers of one kind and label
/// closer than a pixel apart merge into one band labelled with their number ("outage
/// (x250)"); while more than [`MAX_MARKERS`] remain, the gap that merges doubles. Markers
/// apart by more than a pixel, and few, are drawn as they are.
pub fn coalesce(markers: &[Marker], span_s: f64) -> Vec<Marker> {
    let span = if span_s.is_finite() && span_s > 0.0 {
        span_s
    } else {
        1.0
    };
    let mut gap = span / 1400.0;
    loop {
        let merged = merge_closer_than(markers, gap);
        if merged.len() <= MAX_MARKERS || gap > span {
            return merged;
        }
        gap *= 2.0;
    }
}

/// Merges each marker into the band of the last one of its kind and label if it starts
/// less than `gap` seconds after that band ends; keeps the order of the first of each band.
fn merge_closer_than(markers: &[Marker], gap: f64) -> Vec<Marker> {
    let mut out: Vec<(Marker, usize)> = Vec::new();
    let mut open: std::collections::HashMap<(bool, &str), usize> = Default::default();
    for m in markers {
        let key = (m.kind == MarkerKind::Event, m.label.as_str());
        if let Some(&b) = open.get(&key) {
            let (band, n) = &mut out[b];
            let end = band.end_s.unwrap_or(band.start_s);
            if m.start_s - end < gap {
                band.end_s = match (band.end_s, m.end_s) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
                *n += 1;
                continue;
            }
        }
        open.insert(key, out.len());
        out.push((m.clone(), 1));
    }
    out.into_iter()
        .map(|(mut m, n)| {
            if n > 1 {
                m.label = format!("{} (x{n})", m.label);
            }
            m
        })
        .collect()
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
    let (w, h) = root.dim_in_pixel();
    let legend_h = 22 * markers.len().div_ceil(2) as i32 + 10;
    let (top, rest) = root.split_vertically(50);
    top.draw(&Text::new(
        title.to_string(),
        (20, 12),
        ("sans-serif", 26).into_font().style(FontStyle::Bold),
    ))
    .map_err(e)?;
    let (body, legend) = rest.split_vertically(h as i32 - 50 - legend_h);
    let areas = body.split_evenly((panels.len().max(1), 1));
    let mids: Vec<f64> = times.iter().map(|t| (t + step / 2.0) / unit).collect();
    let numbered: Vec<(usize, &Marker)> = markers
        .iter()
        .enumerate()
        .map(|(i, m)| (i + 1, m))
        .collect();
    for (pi, (panel, area)) in panels.iter().zip(areas.iter()).enumerate() {
        let data_max = panel
            .lines
            .iter()
            .flat_map(|l| l.values.iter().copied())
            .filter(|v| v.is_finite())
            .fold(0.0f64, f64::max);
        let y_max = panel
            .y_max
            .unwrap_or(if data_max > 0.0 { data_max * 1.1 } else { 1.0 });
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.title, ("sans-serif", 20))
            .margin_left(10)
            .margin_right(30)
            .x_label_area_size(if pi + 1 == panels.len() { 40 } else { 25 })
            .y_label_area_size(80)
            .build_cartesian_2d(t0 / unit..span / unit, 0.0..y_max)
            .map_err(e)?;
        let mut mesh = chart.configure_mesh();
        mesh.light_line_style(RGBColor(235, 235, 235))
            .label_style(("sans-serif", 15))
            .x_label_formatter(&x_fmt);
        if pi + 1 == panels.len() {
            mesh.x_desc(if span >= 3600.0 {
                "time (h:mm:ss)"
            } else {
                "time (m:ss)"
            });
        }
        mesh.draw().map_err(e)?;
        for (n, m) in &numbered {
            let x0 = m.start_s / unit;
            match (m.kind, m.end_s) {
                (MarkerKind::Event, Some(end)) => {
                    let x1 = (end / unit).max(x0 + span / unit / 400.0);
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(x0, 0.0), (x1, y_max)],
                            RGBColor(214, 39, 40).mix(0.13).filled(),
                        )))
                        .map_err(e)?;
                }
                _ => {
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(x0, 0.0), (x0, y_max)],
                            BLACK.mix(0.6).stroke_width(1),
                        )))
                        .map_err(e)?;
                }
            }
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("{n}"),
                    (x0, y_max * 0.97),
                    ("sans-serif", 14).into_font(),
                )))
                .map_err(e)?;
        }
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
            let style = line.color.stroke_width(if line.thin { 1 } else { 2 });
            for (i, seg) in segments.into_iter().enumerate() {
                let series = chart.draw_series(LineSeries::new(seg, style)).map_err(e)?;
                if i == 0 {
                    series
                        .label(line.label.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
                }
            }
        }
        if !panel.lines.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.3))
                .label_font(("sans-serif", 14))
                .draw()
                .map_err(e)?;
        }
    }
    let half = (w / 2) as i32;
    for (i, (n, m)) in numbered.iter().enumerate() {
        let x = 20 + (i as i32 % 2) * half;
        let y = 5 + (i as i32 / 2) * 22;
        let when = fmt_time(m.start_s);
        let what = match (m.kind, m.end_s) {
            (MarkerKind::Event, Some(end)) => {
                format!("{n}. {} ({} to {}, shaded)", m.label, when, fmt_time(end))
            }
            _ => format!("{n}. {} (at {})", m.label, when),
        };
        legend
            .draw(&Text::new(what, (x, y), ("sans-serif", 16).into_font()))
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

    fn outage(start_s: f64) -> Marker {
        Marker {
            kind: MarkerKind::Event,
            name: "outage".into(),
            label: "outage".into(),
            start_s,
            end_s: Some(start_s + 0.001),
        }
    }

    #[test]
    fn markers_closer_than_a_pixel_merge_into_one_band_per_label() {
        // An outage every 20 ms for an hour: 180,000 markers become one band.
        let many: Vec<Marker> = (0..180_000).map(|i| outage(i as f64 * 0.02)).collect();
        let drawn = coalesce(&many, 3600.0);
        assert_eq!(drawn.len(), 1);
        assert_eq!(drawn[0].label, "outage (x180000)");
        assert_eq!(drawn[0].start_s, 0.0);
        assert!((drawn[0].end_s.unwrap() - 3599.981).abs() < 1e-9);
    }

    #[test]
    fn markers_far_apart_are_drawn_as_they_are_and_many_are_bounded() {
        let few: Vec<Marker> = (0..10).map(|i| outage(i as f64 * 60.0)).collect();
        assert_eq!(coalesce(&few, 3600.0), few);
        // Every 100 s for a day: more than a pixel (62 s) apart, but too many to draw.
        let many: Vec<Marker> = (0..864).map(|i| outage(i as f64 * 100.0)).collect();
        let drawn = coalesce(&many, 86_400.0);
        assert!(drawn.len() <= MAX_MARKERS, "{}", drawn.len());
        assert_eq!(drawn[0].start_s, 0.0);
        assert_eq!(drawn.last().unwrap().end_s, many.last().unwrap().end_s);
    }
}
