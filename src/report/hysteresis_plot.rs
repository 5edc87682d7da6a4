//! The picture of a hysteresis loop, drawn from the report only: the measure against the
//! ramped value, going up and coming down as two lines with their own colour and markers
//! (triangles up, circles down; the legend names the direction), the healthy threshold,
//! the bistable region shaded between the recovery and the collapse point, and the
//! operating, collapse and recovery points marked.

use super::figure::{self, Figure};
use super::hysteresis_result::{Direction, HysteresisReport};
use super::narrative::clock;
use super::sweep_plot::layout::measure_words;
use super::sweep_plot::{LEGEND_H, Mark, err, header, legend_strip, region_color, threshold_words};
use super::sweep_result::{Region, sig3};
use super::timeline::PALETTE;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

type Res = Result<(), String>;

struct LoopFigure<'a>(&'a HysteresisReport);

/// Writes `hysteresis.png` and `hysteresis.svg` into `dir`.
pub fn write(dir: &Path, r: &HysteresisReport) -> std::io::Result<()> {
    figure::write(dir, "hysteresis", &LoopFigure(r))
}

impl Figure for LoopFigure<'_> {
    fn size(&self) -> (u32, u32) {
        (1100, 700)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Res {
        let r = self.0;
        let title = match &r.variant {
            Some(v) => format!("{} ({v}): hysteresis loop", r.title),
            None => format!("{}: hysteresis loop", r.title),
        };
        let threshold = threshold_words(r.healthy_above, r.healthy_below);
        let what = format!(
            "{} against {}, ramped up then down in one run: {} steps each way, {} per step (the first {} not measured); {threshold}",
            measure_words(&r.measure),
            r.axis_name(),
            r.steps,
            clock(r.dwell_s),
            clock(r.settle_s),
        );
        let body = header(root, title, what, 15)?;
        draw_loop(&body, r)
    }
}

fn draw_loop<DB: DrawingBackend>(whole: &DrawingArea<DB, Shift>, r: &HysteresisReport) -> Res {
    let (_, h) = whole.dim_in_pixel();
    let (area, legend_area) = whole.split_vertically(h.saturating_sub(LEGEND_H));
    let xs = r.points.iter().map(|p| p.value).chain([r.operating_point]);
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let margin = ((hi - lo) * 0.03).max(1e-9);
    let (x0, x1) = (lo - margin, hi + margin);
    let thr = r.healthy_above.or(r.healthy_below).unwrap_or(0.0);
    let ys = r.points.iter().filter_map(|p| p.measure).chain([thr, 0.0]);
    let (ylo, yhi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
        (a.min(y), b.max(y))
    });
    let pad = ((yhi - ylo) * 0.15).max(1e-9);
    let (y0, y1) = (ylo.min(0.0), yhi + pad);
    let unit = r
        .unit
        .as_ref()
        .map(|u| format!(" ({u})"))
        .unwrap_or_default();
    let mut chart = ChartBuilder::on(&area)
        .margin(16)
        .x_label_area_size(45)
        .y_label_area_size(65)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(err)?;
    // The bistable region first, under everything else.
    if let Some([a, b]) = r.bistable {
        let color = region_color(Region::Metastable);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(a, y0), (b, y1)],
                color.mix(0.15).filled(),
            )))
            .map_err(err)?;
        // Named only where the name fits inside the region; the legend's swatch tells it
        // everywhere.
        let font = ("sans-serif", 16).into_font().color(&color);
        let name_w = area
            .estimate_text_size("bistable", &font)
            .map_or(70, |s| s.0 as i32);
        let (pa, pb) = (
            chart.backend_coord(&(a, y1)).0,
            chart.backend_coord(&(b, y1)).0,
        );
        if pb - pa > name_w + 8 {
            chart
                .draw_series(std::iter::once(Text::new(
                    "bistable".to_string(),
                    ((a + b) / 2.0, y1 - (y1 - y0) * 0.03),
                    font.pos(plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Center,
                        plotters::style::text_anchor::VPos::Top,
                    )),
                )))
                .map_err(err)?;
        }
    }
    chart
        .configure_mesh()
        .light_line_style(RGBColor(235, 235, 235))
        .label_style(("sans-serif", 14))
        .x_label_formatter(&|v| crate::engine::number::tick_label(*v))
        .y_label_formatter(&|v| crate::engine::number::tick_label(*v))
        .x_desc(format!("{}{unit}", r.axis_name()))
        .y_desc(measure_words(&r.measure))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(x0, thr), (x1, thr)],
            BLACK.mix(0.5).stroke_width(1),
        )))
        .map_err(err)?;
    for (d, color, name) in [
        (Direction::Up, PALETTE[0], "going up (->)"),
        (Direction::Down, PALETTE[3], "coming down (<-)"),
    ] {
        let line: Vec<(f64, f64)> = r
            .points
            .iter()
            .filter(|p| p.direction == d)
            .filter_map(|p| Some((p.value, p.measure?)))
            .collect();
        let _ = name;
        let style = color.stroke_width(2);
        chart
            .draw_series(LineSeries::new(line.clone(), style))
            .map_err(err)?;
        match d {
            Direction::Up => chart
                .draw_series(
                    line.iter()
                        .map(|p| TriangleMarker::new(*p, 5, color.filled())),
                )
                .map_err(err)?,
            Direction::Down => chart
                .draw_series(line.iter().map(|p| Circle::new(*p, 4, color.filled())))
                .map_err(err)?,
        };
    }
    let markers = [
        ("operating", Some(r.operating_point), BLACK),
        (
            "collapse",
            r.collapse_point,
            region_color(Region::Overloaded),
        ),
        ("recovery", r.recovery_point, region_color(Region::Stable)),
    ];
    // Each point's label beside its line, on a pale box, the three at different heights near
    // the bottom of the plot: left of the line, where the loop leaves room (the fall going
    // up and the climb coming down both lie right of their points), or right of it near
    // the left-hand axis.
    let (px, _) = chart.plotting_area().get_pixel_range();
    let to_x = |p: i32| x0 + (p - px.start) as f64 / (px.end - px.start).max(1) as f64 * (x1 - x0);
    for (k, (name, x, color)) in markers.into_iter().enumerate() {
        let Some(x) = x else { continue };
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x, y0), (x, y1)],
                color.stroke_width(2),
            )))
            .map_err(err)?;
        let text = format!("{name} {}", sig3(Some(x)));
        let font: TextStyle = ("sans-serif", 14).into_font().color(&color);
        let width = area
            .estimate_text_size(&text, &font)
            .map_or(100, |s| s.0 as i32);
        let left = left_of(chart.backend_coord(&(x, y0)).0, width, px.start);
        let y = y0 + (y1 - y0) * (0.12 + 0.07 * k as f64);
        let dy = (y1 - y0) * 0.035;
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(to_x(left - 2), y + dy), (to_x(left + width + 2), y - dy)],
                WHITE.mix(0.9).filled(),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(Text::new(
                text,
                (to_x(left), y),
                font.pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Left,
                    plotters::style::text_anchor::VPos::Center,
                )),
            )))
            .map_err(err)?;
    }
    let mut entries = vec![
        (
            "going up (triangles)".to_string(),
            Mark::Line(PALETTE[0], false),
        ),
        (
            "coming down (circles)".to_string(),
            Mark::Line(PALETTE[3], false),
        ),
        (
            "healthy threshold".to_string(),
            Mark::Line(RGBColor(128, 128, 128), false),
        ),
    ];
    if r.bistable.is_some() {
        entries.push((
            "bistable: both states persist".to_string(),
            Mark::Swatch(region_color(Region::Metastable)),
        ));
    }
    legend_strip(&legend_area, entries)
}

/// The left pixel of the label of a vertical line at pixel `at`: 5 pixels left of the line,
/// or 5 pixels right of it when the label would pass the plot's left edge `left`.
fn left_of(at: i32, width: i32, left: i32) -> i32 {
    if at - 5 - width >= left + 2 {
        at - 5 - width
    } else {
        at + 5
    }
}

#[cfg(test)]
mod tests {
    use super::left_of;

    /// A point's label ends left of its line, or starts right of it near the left axis
    /// (the recovery label sat on the coming-down line, issue 24 item 2).
    #[test]
    fn labels_sit_left_of_their_lines_unless_the_axis_is_near() {
        assert_eq!(left_of(400, 100, 80), 295);
        assert_eq!(left_of(150, 100, 80), 155);
    }
}
