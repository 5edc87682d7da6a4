//! The tipping curve picture, drawn from the sweep report only: measure against the swept
//! value, both branches with their seed spread, the three regions shaded and named, the
//! operating, tipping and overload points marked, each design's headroom in its caption
//! (the table is the console's and the report page's). The phase map is drawn
//! in [`super::phase_plot`], which shares the layout helpers here.

use super::figure::{self, Figure};
use super::sweep::{Cell, Region, SweepReport, VariantTipping, sig3};
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
    top.draw(&Text::new(what, (20, 45), ("sans-serif", size).into_font()))
        .map_err(err)?;
    Ok(rest)
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
type SpreadOf = fn(&Cell) -> &super::sweep::Spread;

struct TippingFigure<'a>(&'a SweepReport);

/// Writes `tipping.png` and `tipping.svg` into `dir`.
pub fn write_tipping(dir: &Path, r: &SweepReport) -> std::io::Result<()> {
    figure::write(dir, "tipping", &TippingFigure(r))
}

impl Figure for TippingFigure<'_> {
    fn size(&self) -> (u32, u32) {
        let (cols, rows) = grid(self.0.variants.len());
        let w = if cols == 1 { 1100 } else { 1500 };
        (w, 110 + 420 * rows as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Res {
        let r = self.0;
        let (cols, rows) = grid(r.variants.len());
        let threshold = threshold_words(r.healthy_above, r.healthy_below);
        let what = format!(
            "{} after trigger [{}] against {}; {threshold}; {} seed(s), band = seed range",
            r.measure,
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

fn draw_tipping_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    r: &SweepReport,
    v: &super::sweep::VariantTipping,
) -> Res {
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
    let (y0, y1) = (lo.min(0.0), hi + pad);
    let mut chart = ChartBuilder::on(area)
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
        .right_y_label_area_size(if v.collapse_fit.is_some() { 60 } else { 0 })
        .build_cartesian_2d(xr.0..xr.1, y0..y1)
        .map_err(err)?
        .set_secondary_coord(xr.0..xr.1, 0.0..1.0);
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
        .x_label_formatter(&|v| crate::engine::number::tick_label(*v))
        .y_label_formatter(&|v| crate::engine::number::tick_label(*v))
        .x_desc(axis_label(r.axis_name(), &r.unit))
        .y_desc(r.measure.clone())
        .draw()
        .map_err(err)?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(xr.0, thr), (xr.1, thr)],
            BLACK.mix(0.5).stroke_width(1),
        )))
        .map_err(err)?;
    let branches: [(&str, RGBColor, SpreadOf); 2] = [
        ("baseline", PALETTE[0], |c| &c.baseline),
        ("triggered", PALETTE[3], |c| &c.triggered),
    ];
    for (name, color, get) in branches {
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
        let style = color.stroke_width(2);
        chart
            .draw_series(LineSeries::new(line.clone(), style))
            .map_err(err)?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
        chart
            .draw_series(line.iter().map(|p| Circle::new(*p, 3, color.filled())))
            .map_err(err)?;
    }
    // The fitted collapse probability on the right-hand axis, and each probe's observed
    // share as a ring: where the seeds put the crossing, and how sure each probe is.
    if let Some(fit) = v.collapse_fit {
        chart
            .configure_secondary_axes()
            .y_label_formatter(&|v| crate::engine::number::tick_label(*v))
            .y_desc("collapse probability (fitted curve, probes)")
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(err)?;
        let color = region_color(Region::Metastable);
        let curve: Vec<(f64, f64)> = (0..=200)
            .map(|k| {
                let x = xr.0 + (xr.1 - xr.0) * k as f64 / 200.0;
                (x, fit.at(x))
            })
            .collect();
        let style = color.stroke_width(2);
        chart
            .draw_secondary_series(DashedLineSeries::new(curve, 6, 4, style))
            .map_err(err)?
            .label("collapse probability (fit)")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
        chart
            .draw_secondary_series(
                v.points.iter().map(|c| {
                    Circle::new((c.value, c.collapse_probability), 4, color.stroke_width(1))
                }),
            )
            .map_err(err)?;
    }
    // Text goes over the curves and lines, so that it stays readable. Each run of cells
    // in one region named once, centred over it but kept inside the plot; names that
    // would overprint (narrow regions side by side) stack downwards.
    let (px, py) = chart.plotting_area().get_pixel_range();
    let to_x =
        |p: i32| xr.0 + (p - px.start) as f64 / (px.end - px.start).max(1) as f64 * (xr.1 - xr.0);
    let line_h = (y1 - y0) * 18.0 / (py.end - py.start).max(1) as f64;
    let mut names = Vec::new();
    let mut i = 0;
    while i < v.points.len() {
        let mut j = i;
        while j + 1 < v.points.len() && v.points[j + 1].state == v.points[i].state {
            j += 1;
        }
        let state = v.points[i].state;
        let font: TextStyle = ("sans-serif", 15).into_font().color(&region_color(state));
        let width = area
            .estimate_text_size(state.name(), &font)
            .map_or(80, |s| s.0 as i32);
        let mid = chart
            .backend_coord(&((edges[i].0 + edges[j].1) / 2.0, y1))
            .0;
        let left = centred_within(mid, width, (px.start, px.end));
        names.push((state.name(), font, left, left + width));
        i = j + 1;
    }
    // The points' lines, then the region names, then the points' labels: each beside its
    // line, never on it (right of the line, or left of it when it would run into the
    // right-hand axis), on a pale box over every line (the tipping and overload points
    // can be a few pixels apart).
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
    let mut labels = Vec::new();
    for (k, (name, x, color)) in markers.into_iter().enumerate() {
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
        let y = y0 + (y1 - y0) * (0.08 + 0.07 * k as f64);
        labels.push((text, font, left, width, y));
    }
    let spans: Vec<(i32, i32)> = names.iter().map(|n| (n.2, n.3)).collect();
    for ((name, font, left, _), row) in names.into_iter().zip(super::markers::label_rows(&spans)) {
        chart
            .draw_series(std::iter::once(Text::new(
                name.to_string(),
                (to_x(left), y1 - (y1 - y0) * 0.03 - row as f64 * line_h),
                font,
            )))
            .map_err(err)?;
    }
    for (text, font, left, width, y) in labels {
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(to_x(left - 2), y), (to_x(left + width + 2), y - line_h)],
                WHITE.mix(0.9).filled(),
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(Text::new(text, (to_x(left), y), font)))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Labels stay inside the plot and off their lines (finding 16 of the new-user review:
    /// "spontaneous" clipped at the right edge, "overload 119.79" ran into the right-hand
    /// axis, "tipping 97.08" was printed on its own line).
    #[test]
    fn labels_stay_inside_the_plot_and_beside_their_lines() {
        // A name centred near the right edge moves left to fit; one in the middle stays.
        assert_eq!(centred_within(690, 80, (100, 700)), 618);
        assert_eq!(centred_within(105, 80, (100, 700)), 102);
        assert_eq!(centred_within(400, 80, (100, 700)), 360);
        // A point's label starts right of its line, or ends left of it near the edge.
        assert_eq!(beside(300, 100, 700), 305);
        assert_eq!(beside(650, 100, 700), 545);
    }
}
