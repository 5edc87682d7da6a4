//! The tipping curve picture, drawn from the sweep report only: measure against the swept
//! value, both branches with their seed spread, the three regions shaded and named, the
//! operating, tipping and overload points marked, each design's headroom in its caption
//! (the table is the console's and the report page's). The phase map is drawn
//! in [`super::phase_plot`], which shares the layout helpers here.

pub mod layout;

use super::figure::{self, Figure};
use super::sweep_result::{Cell, Region, SweepReport, VariantTipping, sig3};
use super::timeline::PALETTE;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

type Res = Result<(), String>;

/// The fill of a region.
pub fn region_color(r: Region) -> RGBColor {
    match r {
        Region::Stable => RGBColor(0, 158, 115),
        Region::Metastable => RGBColor(230, 159, 0),
        Region::SlowRecovery => RGBColor(0, 114, 178),
        Region::Spontaneous => RGBColor(204, 121, 167),
        Region::Overloaded => RGBColor(213, 94, 0),
    }
}

/// The recovery times of a variant's points for its caption (`; recovery 89-113 s`,
/// each point's median), empty when no point has one.
pub fn recovery_words(v: &VariantTipping) -> String {
    let p50: Vec<f64> = v
        .points
        .iter()
        .filter_map(|c| c.recovery_s.map(|q| q.p50))
        .collect();
    let lo = p50.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = p50.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    match p50.len() {
        0 => String::new(),
        _ if lo == hi => format!("; recovery {} s", sig3(Some(lo))),
        _ => format!("; recovery {}-{} s", sig3(Some(lo)), sig3(Some(hi))),
    }
}

pub(super) fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// The words for a healthy threshold (`healthy above 0.9`), or none.
pub(super) fn threshold_words(above: Option<f64>, below: Option<f64>) -> String {
    match (above, below) {
        (Some(t), _) => format!("healthy above {}", sig3(Some(t))),
        (_, Some(t)) => format!("healthy below {}", sig3(Some(t))),
        _ => String::new(),
    }
}

/// Fills `root` white and draws a sweep picture's header in its top 80 px: `title` in bold
/// and under it `what` (what is plotted against what) in `size`-point type. Returns the
/// area below the header.
pub(super) fn header<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: String,
    what: String,
    size: u32,
) -> Result<DrawingArea<DB, Shift>, String> {
    root.fill(&WHITE).map_err(err)?;
    let (top, rest) = root.split_vertically(80);
    top.draw(&Text::new(
        title,
        (20, 10),
        ("sans-serif", 24).into_font().style(FontStyle::Bold),
    ))
    .map_err(err)?;
    let font: TextStyle = ("sans-serif", size).into_font().into();
    let room = top.dim_in_pixel().0 as i32 - 40;
    let fits = |t: &str| {
        top.estimate_text_size(t, &font)
            .is_ok_and(|s| s.0 as i32 <= room)
    };
    // A line too long for the picture breaks after the last `; ` or `, ` that leaves a
    // first line that fits (a slide must not cut the threshold off the end).
    let lines = match (fits(&what), wrap_point(&what, &fits)) {
        (false, Some(at)) => vec![
            what[..at].trim_end().to_string(),
            what[at..].trim_start().to_string(),
        ],
        _ => vec![what],
    };
    let step = size as i32 + 3;
    let first = if lines.len() > 1 { 40 } else { 45 };
    for (k, line) in lines.into_iter().enumerate() {
        top.draw(&Text::new(
            line,
            (20, first + step * k as i32),
            font.clone(),
        ))
        .map_err(err)?;
    }
    Ok(rest)
}

/// Where to break a header line: after the last `; ` or `, ` whose first part `fits`.
fn wrap_point(text: &str, fits: &dyn Fn(&str) -> bool) -> Option<usize> {
    text.match_indices("; ")
        .chain(text.match_indices(", "))
        .map(|(i, _)| i + 1)
        .filter(|&i| fits(&text[..i]))
        .max()
}

/// The small-multiples grid: columns and rows for `n` panels.
pub(super) fn grid(n: usize) -> (usize, usize) {
    let cols = if n <= 1 { 1 } else { 2 };
    (cols, n.div_ceil(cols).max(1))
}

/// The x range of an axis with half a step of margin on each side.
fn x_range(values: &[f64]) -> (f64, f64) {
    let (lo, hi) = (values[0], values[values.len() - 1]);
    let half = if values.len() > 1 {
        (hi - lo) / (values.len() - 1) as f64 / 2.0
    } else {
        lo.abs().max(1.0) / 2.0
    };
    (lo - half, hi + half)
}

/// The edges of the band each value stands for (midpoints between neighbours).
pub(super) fn bands(values: &[f64], range: (f64, f64)) -> Vec<(f64, f64)> {
    (0..values.len())
        .map(|i| {
            let a = if i == 0 {
                range.0
            } else {
                (values[i - 1] + values[i]) / 2.0
            };
            let b = if i + 1 == values.len() {
                range.1
            } else {
                (values[i] + values[i + 1]) / 2.0
            };
            (a, b)
        })
        .collect()
}

pub(super) fn axis_label(path: &str, unit: &Option<String>) -> String {
    match unit {
        Some(u) => format!("{path} ({u})"),
        None => path.to_string(),
    }
}

/// The left pixel of a label `width` pixels wide centred on `mid`, moved to lie inside
/// the plot's pixels `plot` (2 pixels in from each side) when it would stick out.
fn centred_within(mid: i32, width: i32, plot: (i32, i32)) -> i32 {
    (mid - width / 2).min(plot.1 - 2 - width).max(plot.0 + 2)
}

/// The left pixel of the label of a vertical line at pixel `at`: 5 pixels right of the
/// line, or 5 pixels left of it when the label would pass the plot's right edge `right`.
fn beside(at: i32, width: i32, right: i32) -> i32 {
    if at + 5 + width <= right - 2 {
        at + 5
    } else {
        at - 5 - width
    }
}

/// Picks one branch's spread out of a cell.
type SpreadOf = fn(&Cell) -> &super::sweep_result::Spread;

struct TippingFigure<'a>(&'a SweepReport);

/// Writes `tipping.png` and `tipping.svg` into `dir`.
pub fn write_tipping(dir: &Path, r: &SweepReport) -> std::io::Result<()> {
    figure::write(dir, "tipping", &TippingFigure(r))
}

impl Figure for TippingFigure<'_> {
    fn size(&self) -> (u32, u32) {
        let (cols, rows) = grid(self.0.variants.len());
        let w = if cols == 1 { 1100 } else { 1500 };
        (w, 110 + (420 + LEGEND_H) * rows as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Res {
        let r = self.0;
        let (cols, rows) = grid(r.variants.len());
        let threshold = threshold_words(r.healthy_above, r.healthy_below);
        let what = format!(
            "{} after trigger [{}] against {}; {threshold}; {} seed(s), band = seed range",
            layout::measure_words(&r.measure),
            r.trigger.join(", "),
            r.axis_name(),
            r.seeds
        );
        let rest = header(root, r.title.clone(), what, 16)?;
        // The headroom of each design is in its panel's caption; the table is printed by
        // `brink tipping` and shown once on the report page.
        let areas = rest.split_evenly((rows, cols));
        for (v, area) in r.variants.iter().zip(areas.iter()) {
            draw_tipping_panel(area, r, v)?;
        }
        Ok(())
    }
}

/// The height of a tipping panel's legend strip, under its plot.
pub(super) const LEGEND_H: u32 = 44;

fn draw_tipping_panel<DB: DrawingBackend>(
    whole: &DrawingArea<DB, Shift>,
    r: &SweepReport,
    v: &super::sweep_result::VariantTipping,
) -> Res {
    let (_, h) = whole.dim_in_pixel();
    let (area, legend_area) = whole.split_vertically(h.saturating_sub(LEGEND_H));
    let values: Vec<f64> = v.points.iter().map(|c| c.value).collect();
    let xr = x_range(&values);
    let thr = r.healthy_above.or(r.healthy_below).unwrap_or(0.0);
    let data = v
        .points
        .iter()
        .flat_map(|c| {
            [
                c.baseline.max,
                c.triggered.max,
                c.baseline.min,
                c.triggered.min,
            ]
        })
        .flatten()
        .chain([thr, 0.0]);
    let (lo, hi) = data.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let pad = ((hi - lo) * 0.12).max(1e-9);
    let y1 = hi + pad;
    // A little room below zero, so that a curve at 0 is drawn apart from the axis.
    let y0 = lo.min(0.0) - (y1 - lo.min(0.0)) * 0.04;
    let fit = v.collapse_fit;
    // One y scale when the measure is a share; else a right-hand axis whose ticks fall
    // on the left-hand gridlines.
    let shared = layout::shares_scale(y0, y1);
    let (s0, s1) = if shared {
        (y0, y1)
    } else {
        layout::probability_range(y0, y1)
    };
    let measure = layout::measure_words(&r.measure);
    let mut chart = ChartBuilder::on(&area)
        .caption(
            format!(
                "{}: headroom {}{}",
                v.variant,
                v.headroom_cell(),
                recovery_words(v)
            ),
            ("sans-serif", 19),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .right_y_label_area_size(if fit.is_some() && !shared { 60 } else { 0 })
        .build_cartesian_2d(xr.0..xr.1, y0..y1)
        .map_err(err)?
        .set_secondary_coord(xr.0..xr.1, s0..s1);
    // Regions first, under everything else.
    let edges = bands(&values, xr);
    for (c, (a, b)) in v.points.iter().zip(&edges) {
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(*a, y0), (*b, y1)],
                region_color(c.state).mix(0.15).filled(),
            )))
            .map_err(err)?;
    }
    chart
        .configure_mesh()
        .light_line_style(RGBColor(235, 235, 235))
        .label_style(("sans-serif", 14))
        .y_labels(Y_LABELS)
        .x_label_formatter(&|v| crate::engine::number::tick_label(*v))
        .y_label_formatter(&|v| crate::engine::number::tick_label(*v))
        .x_desc(axis_label(r.axis_name(), &r.unit))
        .y_desc(if shared && fit.is_some() {
            format!("{measure}; collapse probability")
        } else {
            measure
        })
        .draw()
        .map_err(err)?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(xr.0, thr), (xr.1, thr)],
            BLACK.mix(0.5).stroke_width(1),
        )))
        .map_err(err)?;
    let px_of = |chart: &ChartContext<DB, _>, pts: &[(f64, f64)]| -> Vec<(i32, i32)> {
        pts.iter().map(|p| chart.backend_coord(p)).collect()
    };
    // The curves in pixels, which the points' labels keep clear of.
    let mut curves: Vec<Vec<(i32, i32)>> = vec![px_of(&chart, &[(xr.0, thr), (xr.1, thr)])];
    let branches: [(&str, RGBColor, SpreadOf); 2] = [
        ("baseline", PALETTE[0], |c| &c.baseline),
        ("triggered", PALETTE[3], |c| &c.triggered),
    ];
    for (_, color, get) in branches {
        let band: Vec<(f64, f64, f64)> = v
            .points
            .iter()
            .filter_map(|c| {
                let s = get(c);
                Some((c.value, s.min?, s.max?))
            })
            .collect();
        if band.len() > 1 {
            let mut poly: Vec<(f64, f64)> = band.iter().map(|p| (p.0, p.1)).collect();
            poly.extend(band.iter().rev().map(|p| (p.0, p.2)));
            chart
                .draw_series(std::iter::once(Polygon::new(poly, color.mix(0.2).filled())))
                .map_err(err)?;
        }
        let line: Vec<(f64, f64)> = v
            .points
            .iter()
            .filter_map(|c| Some((c.value, get(c).mean?)))
            .collect();
        curves.push(px_of(&chart, &line));
        chart
            .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))
            .map_err(err)?;
        chart
            .draw_series(line.iter().map(|p| Circle::new(*p, 3, color.filled())))
            .map_err(err)?;
    }
    // The fitted collapse probability (on the measure's scale when it is a share, else on
    // the right-hand axis), and each probe's observed share as a ring: where the seeds
    // put the crossing, and how sure each probe is.
    if let Some(fit) = fit {
        if !shared {
            chart
                .configure_secondary_axes()
                .y_labels(Y_LABELS)
                .y_label_formatter(&|v| crate::engine::number::tick_label(*v))
                .y_desc("collapse probability (fitted curve, probes)")
                .label_style(("sans-serif", 14))
                .draw()
                .map_err(err)?;
        }
        let color = region_color(Region::Metastable);
        let curve: Vec<(f64, f64)> = (0..=200)
            .map(|k| {
                let x = xr.0 + (xr.1 - xr.0) * k as f64 / 200.0;
                (x, fit.at(x))
            })
            .collect();
        curves.push(px_of(chart.borrow_secondary(), &curve));
        let style = color.stroke_width(2);
        chart
            .draw_secondary_series(DashedLineSeries::new(curve, 6, 4, style))
            .map_err(err)?;
        chart
            .draw_secondary_series(
                v.points.iter().map(|c| {
                    Circle::new((c.value, c.collapse_probability), 4, color.stroke_width(1))
                }),
            )
            .map_err(err)?;
    }
    // Text goes over the curves and lines, so that it stays readable. Each region named
    // once, centred over it (layout::region_labels: never over another name).
    let (px, py) = chart.plotting_area().get_pixel_range();
    let to_x =
        |p: i32| xr.0 + (p - px.start) as f64 / (px.end - px.start).max(1) as f64 * (xr.1 - xr.0);
    let to_y = |p: i32| y1 - (p - py.start) as f64 / (py.end - py.start).max(1) as f64 * (y1 - y0);
    let region_font =
        |state: Region| -> TextStyle { ("sans-serif", 15).into_font().color(&region_color(state)) };
    let name_width = |state: Region| {
        area.estimate_text_size(&layout::region_words(state), &region_font(state))
            .map_or(80, |s| s.0 as i32)
    };
    let states: Vec<Region> = v.points.iter().map(|c| c.state).collect();
    let spans: Vec<(i32, i32)> = edges
        .iter()
        .map(|(a, b)| {
            (
                chart.backend_coord(&(*a, y1)).0,
                chart.backend_coord(&(*b, y1)).0,
            )
        })
        .collect();
    for (state, left) in layout::region_labels(&states, &spans, name_width) {
        let left = centred_within(
            left + name_width(state) / 2,
            name_width(state),
            (px.start, px.end),
        );
        chart
            .draw_series(std::iter::once(Text::new(
                layout::region_words(state),
                (to_x(left), to_y(py.start + 4)),
                region_font(state),
            )))
            .map_err(err)?;
    }
    // The points' lines, then their labels: each beside its line (right of it, or left
    // near the right-hand axis), at the first height clear of the curves and of the other
    // labels (layout::clear_top), on a pale box over the other points' lines.
    let markers = [
        ("operating", Some(v.operating_point), BLACK),
        ("tipping", v.tipping_point, region_color(Region::Metastable)),
        (
            // An SLO measure's overload point is the capacity at SLO.
            if v.capacity_at_slo.is_some() {
                "capacity at SLO"
            } else {
                "overload"
            },
            v.overload_point,
            region_color(Region::Overloaded),
        ),
    ];
    let label_h = 18;
    let candidates: Vec<i32> = (0..)
        .map(|k| py.start + 26 + k * (label_h + 2))
        .take_while(|t| *t + label_h < py.end - 2)
        .collect();
    let mut taken: Vec<(i32, i32, i32)> = Vec::new();
    let mut labels = Vec::new();
    for (name, x, color) in markers {
        let Some(x) = x.filter(|x| *x >= xr.0 && *x <= xr.1) else {
            continue;
        };
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
        let at = chart.backend_coord(&(x, y0)).0;
        let left = beside(at, width, px.end);
        let top = layout::clear_top(
            &candidates,
            (left - 2, left + width + 2, label_h),
            &curves,
            &taken,
        );
        taken.push((left - 2, left + width + 2, top));
        labels.push((text, font, left, width, top));
    }
    for (text, font, left, width, top) in labels {
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [
                    (to_x(left - 2), to_y(top)),
                    (to_x(left + width + 2), to_y(top + label_h)),
                ],
                WHITE.mix(0.9).filled(),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(Text::new(
                text,
                (to_x(left), to_y(top + 1)),
                font,
            )))
            .map_err(err)?;
    }
    draw_legend(&legend_area, fit.is_some(), shared, &states)
}

/// How many y labels the tipping picture asks plotters for, on both axes alike.
const Y_LABELS: usize = 8;

/// The legend under a tipping panel, outside the data: the branches, the fit, the
/// threshold, and the regions the panel shows (so a region too narrow to be named is
/// still told by its colour). Entries wrap to a second line.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    fit: bool,
    shared: bool,
    states: &[Region],
) -> Res {
    let mut entries: Vec<(String, Mark)> = vec![
        ("baseline".into(), Mark::Line(PALETTE[0], false)),
        ("triggered".into(), Mark::Line(PALETTE[3], false)),
    ];
    if fit {
        let words = if shared {
            "collapse probability (fit; rings: probes)"
        } else {
            "collapse probability (fit, right axis; rings: probes)"
        };
        entries.push((
            words.into(),
            Mark::Line(region_color(Region::Metastable), true),
        ));
    }
    entries.push((
        "healthy threshold".into(),
        Mark::Line(RGBColor(128, 128, 128), false),
    ));
    let mut seen: Vec<Region> = Vec::new();
    for s in states {
        if !seen.contains(s) {
            seen.push(*s);
        }
    }
    entries.extend(
        seen.into_iter()
            .map(|s| (layout::region_words(s), Mark::Swatch(region_color(s)))),
    );
    legend_strip(area, entries)
}

/// How a legend entry is drawn: a line (its colour, dashed or not) or a region's swatch.
pub(super) enum Mark {
    Line(RGBColor, bool),
    Swatch(RGBColor),
}

/// A legend strip under a plot, outside the data: each entry's mark and words, wrapping
/// to a second line when the first is full (the tipping and hysteresis pictures).
pub(super) fn legend_strip<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: Vec<(String, Mark)>,
) -> Res {
    let (w, _) = area.dim_in_pixel();
    let font: TextStyle = ("sans-serif", 14).into_font().into();
    let (mut x, mut y) = (72i32, 10i32);
    for (text, mark) in entries {
        let tw = area
            .estimate_text_size(&text, &font)
            .map_or(80, |s| s.0 as i32);
        if x + 26 + tw > w as i32 - 8 && x > 72 {
            x = 72;
            y += 18;
        }
        match mark {
            Mark::Line(c, dashed) if dashed => area
                .draw(&plotters::element::DashedPathElement::new(
                    vec![(x, y + 7), (x + 20, y + 7)],
                    6,
                    3,
                    c.stroke_width(2),
                ))
                .map_err(err)?,
            Mark::Line(c, _) => area
                .draw(&PathElement::new(
                    vec![(x, y + 7), (x + 20, y + 7)],
                    c.stroke_width(2),
                ))
                .map_err(err)?,
            Mark::Swatch(c) => area
                .draw(&Rectangle::new(
                    [(x, y + 1), (x + 20, y + 13)],
                    c.mix(0.35).filled(),
                ))
                .map_err(err)?,
        }
        area.draw(&Text::new(text, (x + 26, y), font.clone()))
            .map_err(err)?;
        x += 26 + tw + 16;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
