//! The picture of a hysteresis loop, drawn from the report only: the measure against the
//! ramped value, going up and coming down as two lines with their own colour and markers
//! (triangles up, circles down; the legend names the direction), the healthy threshold,
//! the bistable region shaded between the recovery and the collapse point, and the
//! operating, collapse and recovery points marked.

use super::figure::{self, Figure};
use super::hysteresis::{Direction, HysteresisReport};
use super::sweep::{Region, sig3};
use super::sweep_plot::{err, header, region_color, threshold_words};
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
            "{} against {}, ramped up then down in one run: {} steps each way, {} s per step (first {} s not measured); {threshold}",
            r.measure,
            r.axis_name(),
            r.steps,
            sig3(Some(r.dwell_s)),
            sig3(Some(r.settle_s)),
        );
        let body = header(root, title, what, 15)?;
        draw_loop(&body, r)
    }
}

fn draw_loop<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, r: &HysteresisReport) -> Res {
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
    let mut chart = ChartBuilder::on(area)
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
        chart
            .draw_series(std::iter::once(Text::new(
                "bistable".to_string(),
                ((a + b) / 2.0, y1 - (y1 - y0) * 0.03),
                ("sans-serif", 16).into_font().color(&color).pos(
                    plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Center,
                        plotters::style::text_anchor::VPos::Top,
                    ),
                ),
            )))
            .map_err(err)?;
    }
    chart
        .configure_mesh()
        .light_line_style(RGBColor(235, 235, 235))
        .label_style(("sans-serif", 14))
        .x_label_formatter(&|v| crate::engine::number::tick_label(*v))
        .y_label_formatter(&|v| crate::engine::number::tick_label(*v))
        .x_desc(format!("{}{unit}", r.axis_name()))
        .y_desc(r.measure.clone())
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
        let style = color.stroke_width(2);
        chart
            .draw_series(LineSeries::new(line.clone(), style))
            .map_err(err)?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
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
    for (k, (name, x, color)) in markers.into_iter().enumerate() {
        let Some(x) = x else { continue };
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x, y0), (x, y1)],
                color.stroke_width(2),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(Text::new(
                format!("{name} {}", sig3(Some(x))),
                (x, y0 + (y1 - y0) * (0.08 + 0.07 * k as f64)),
                ("sans-serif", 14).into_font().color(&color),
            )))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::MiddleRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    Ok(())
}
