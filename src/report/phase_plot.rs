//! The phase map picture (`phase.png`, `phase.svg`), drawn from the [`PhaseMap`] only: per
//! variant, each cell shaded by its collapse probability on a colour-blind safe scale
//! (viridis: lightness falls as the probability rises, so it reads in grey too), cells
//! failed even without the trigger grey and hatched, a dot on every sampled point, the
//! operating point a cross with its label; a legend with the colour bar above the panels.

use super::figure::{self, Figure, fitting_font};
use super::phase::{PhaseMap, VariantMap, cell_extent};
use super::sweep_plot::{axis_label, bands, err, grid};
use super::sweep_result::{Cell, Region, VariantTipping, sig3};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

type Res = Result<(), String>;

/// Writes `phase.png` and `phase.svg` into `dir`.
pub fn write_phase(dir: &Path, map: &PhaseMap) -> std::io::Result<()> {
    figure::write(dir, "phase", &PhaseFigure(map))
}

/// Viridis at 0, 0.1, ..., 1 (matplotlib's values): perceptually uniform, readable with
/// every common colour-vision deficiency, lightness rising monotonically.
const VIRIDIS: [(u8, u8, u8); 11] = [
    (68, 1, 84),
    (72, 36, 117),
    (65, 68, 135),
    (53, 95, 141),
    (42, 120, 142),
    (33, 145, 140),
    (34, 168, 132),
    (68, 191, 112),
    (122, 209, 81),
    (189, 223, 38),
    (253, 231, 37),
];

/// The fill of a cell whose collapse probability is `p`: light yellow at 0 (no seed
/// tipped), dark violet at 1 (every seed tipped). `p` is clamped to [0, 1].
pub fn collapse_color(p: f64) -> RGBColor {
    let t = (1.0 - p.clamp(0.0, 1.0)) * 10.0;
    let i = (t.floor() as usize).min(9);
    let f = t - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The grey of cells that fail even without the trigger (no hue of the scale is grey).
const OVERLOADED: RGBColor = RGBColor(200, 200, 200);
const HATCH: RGBColor = RGBColor(90, 90, 90);

/// How a cell is filled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CellFill {
    /// Healthy without the trigger: shaded by the collapse probability.
    Collapse(RGBColor),
    /// Failed without the trigger (overloaded, or a spontaneous collapse): there the
    /// collapse probability says nothing of the trigger.
    FailsUntriggered,
}

/// The fill of one cell.
pub fn cell_fill(c: &Cell) -> CellFill {
    if matches!(c.state, Region::Overloaded | Region::Spontaneous) {
        CellFill::FailsUntriggered
    } else {
        CellFill::Collapse(collapse_color(c.collapse_probability))
    }
}

/// The plotted range of an axis: the cells' extent (half a step beyond the outer sampled
/// values, so every cell is as wide as the step), but never across zero when every value
/// lies on one side of it (a slowdown of -0.7 s means nothing).
pub fn axis_range(values: &[f64]) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = cell_extent(values)?;
    if values[0] >= 0.0 {
        lo = lo.max(0.0);
    }
    if values[values.len() - 1] <= 0.0 {
        hi = hi.min(0.0);
    }
    Some((lo, hi))
}

/// Where a marker's label goes so it stays inside the plot: to the left of a marker in
/// the right half, below a marker in the top half.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabelSide {
    pub left: bool,
    pub below: bool,
}

/// The side for a marker at `(x, y)` in the ranges `xr`, `yr`.
pub fn label_side(x: f64, y: f64, xr: (f64, f64), yr: (f64, f64)) -> LabelSide {
    LabelSide {
        left: x > (xr.0 + xr.1) / 2.0,
        below: y > (yr.0 + yr.1) / 2.0,
    }
}

/// A value with its axis' unit, for labels: `20 s`, `70`.
fn with_unit(x: f64, unit: &Option<String>) -> String {
    match unit {
        Some(u) if u == "s" => format!("{} s", sig3(Some(x))),
        _ => sig3(Some(x)),
    }
}

struct PhaseFigure<'a, 'r>(&'a PhaseMap<'r>);

const HEADER: u32 = 140;
const PANEL: u32 = 540;

impl Figure for PhaseFigure<'_, '_> {
    fn size(&self) -> (u32, u32) {
        let (cols, rows) = grid(self.0.report.variants.len());
        (
            if cols == 1 { 1100 } else { 1500 },
            HEADER + PANEL * rows as u32,
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Res {
        let m = self.0;
        let r = m.report;
        root.fill(&WHITE).map_err(err)?;
        let width = self.size().0;
        let (cols, rows) = grid(r.variants.len());
        let (top, body) = root.split_vertically(HEADER);
        let title = format!("{}: phase map", r.title);
        let font = fitting_font(&top, &title, 24, width - 40, true);
        top.draw(&Text::new(title, (20, 10), font)).map_err(err)?;
        let sub = format!(
            "{} after trigger [{}]; {} seed(s) per cell; {} x {}",
            r.measure,
            r.trigger.join(", "),
            r.seeds,
            r.axis_name(),
            r.axis2_name()
        );
        let font = fitting_font(&top, &sub, 16, width - 40, false);
        top.draw(&Text::new(sub, (20, 42), font)).map_err(err)?;
        draw_legend(&top, (20, 72), width as i32 - 20)?;
        let areas = body.split_evenly((rows, cols));
        for ((v, vm), area) in r.variants.iter().zip(&m.maps).zip(areas.iter()) {
            draw_phase_panel(area, m, v, vm)?;
        }
        Ok(())
    }
}

/// The colour bar (0 to 1) and the meaning of grey cells, dots and the cross, placed one
/// after another from `(x, y)` and wrapped to a second row rather than past `right`.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    right: i32,
) -> Res {
    let font = ("sans-serif", 15).into_font();
    let (w, h) = (200, 16);
    for k in 0..w {
        area.draw(&Rectangle::new(
            [(x + k, y), (x + k + 1, y + h)],
            collapse_color(k as f64 / (w - 1) as f64).filled(),
        ))
        .map_err(err)?;
    }
    area.draw(&Rectangle::new(
        [(x, y), (x + w, y + h)],
        BLACK.stroke_width(1),
    ))
    .map_err(err)?;
    for (t, s) in [(0.0, "0"), (0.5, "0.5"), (1.0, "1")] {
        let px = x + (t * w as f64) as i32;
        area.draw(&Text::new(
            s,
            (px, y + h + 3),
            font.clone()
                .into_text_style(area)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(err)?;
    }
    // Each item: its symbol's width, then its text.
    let items: [(i32, &str); 4] = [
        (0, "collapse probability"),
        (18, "fails with no trigger"),
        (12, "sampled point"),
        (16, "operating point"),
    ];
    let (mut cx, mut cy) = (x + w + 10, y);
    for (k, (sym, text)) in items.into_iter().enumerate() {
        let (tw, _) = area
            .estimate_text_size(text, &font.clone().into())
            .map_err(err)?;
        let need = sym + if sym > 0 { 8 } else { 0 } + tw as i32;
        if cx + need > right {
            // The colour bar's tick labels sit under its left part: wrap past them.
            (cx, cy) = (x + w + 10, cy + 30);
        }
        match k {
            1 => draw_hatched(area, (cx, cy), (cx + sym, cy + h))?,
            2 => {
                area.draw(&Circle::new((cx + 6, cy + 8), 3, WHITE.filled()))
                    .map_err(err)?;
                area.draw(&Circle::new((cx + 6, cy + 8), 3, BLACK.stroke_width(1)))
                    .map_err(err)?;
            }
            3 => draw_cross(area, (cx + 8, cy + 8))?,
            _ => {}
        }
        let tx = cx + need - tw as i32;
        area.draw(&Text::new(text, (tx, cy), font.clone()))
            .map_err(err)?;
        cx += need + 30;
    }
    Ok(())
}

/// A grey box with diagonal hatching, in pixel coordinates.
fn draw_hatched<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    a: (i32, i32),
    b: (i32, i32),
) -> Res {
    area.draw(&Rectangle::new([a, b], OVERLOADED.filled()))
        .map_err(err)?;
    for (p, q) in hatch_lines((a.0 as f64, a.1 as f64), (b.0 as f64, b.1 as f64), 6.0) {
        area.draw(&PathElement::new(
            vec![
                (p.0.round() as i32, p.1.round() as i32),
                (q.0.round() as i32, q.1.round() as i32),
            ],
            HATCH.stroke_width(1),
        ))
        .map_err(err)?;
    }
    Ok(())
}

/// Diagonal lines (slope 1) `gap` apart on a grid shared by every box, clipped to the
/// box from `a` to `b`.
fn hatch_lines(a: (f64, f64), b: (f64, f64), gap: f64) -> Vec<((f64, f64), (f64, f64))> {
    let (x0, x1) = (a.0.min(b.0), a.0.max(b.0));
    let (y0, y1) = (a.1.min(b.1), a.1.max(b.1));
    let (w, h) = (x1 - x0, y1 - y0);
    let mut out = Vec::new();
    // The lines x - y = k gap for whole k, so the hatching of neighbouring boxes joins up:
    // here x - x0 = (y - y0) + s, for s from -h to w.
    let mut s = ((x0 - y0 - h) / gap).ceil() * gap - (x0 - y0);
    while s < w {
        let (ya, yb) = ((-s).max(0.0), (w - s).min(h));
        out.push(((x0 + ya + s, y0 + ya), (x0 + yb + s, y0 + yb)));
        s += gap;
    }
    out
}

/// The operating point's cross, with a white halo so it shows on every fill.
fn draw_cross<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, at: (i32, i32)) -> Res {
    area.draw(&Cross::new(at, 8, WHITE.stroke_width(5)))
        .map_err(err)?;
    area.draw(&Cross::new(at, 8, BLACK.stroke_width(2)))
        .map_err(err)
}

fn draw_phase_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    m: &PhaseMap,
    v: &VariantTipping,
    vm: &VariantMap,
) -> Res {
    let r = m.report;
    let (xs, ys) = (&m.values, &m.values2);
    let (Some(xr), Some(yr)) = (axis_range(xs), axis_range(ys)) else {
        return Ok(());
    };
    let (xb, yb) = (bands(xs, xr), bands(ys, yr));
    let [ox, oy] = vm.operating_point;
    let op = format!(
        "operating point ({}, {})",
        with_unit(ox, &r.unit),
        with_unit(oy, &r.unit2)
    );
    let caption = match vm.operating_cell {
        Some(c) => format!(
            "{}: {op} {}, collapse {}",
            v.variant,
            c.state.name(),
            sig3(Some(c.collapse_probability))
        ),
        None => format!("{}: {op} outside the map", v.variant),
    };
    let (w, _) = area.dim_in_pixel();
    let font = fitting_font(area, &caption, 18, w.saturating_sub(30), false);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, font)
        .margin(12)
        .margin_right(24)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)
        .map_err(err)?;
    let fmt = |x: &f64| sig3(Some(*x));
    chart
        .configure_mesh()
        .disable_mesh()
        .label_style(("sans-serif", 14))
        .x_label_formatter(&fmt)
        .y_label_formatter(&fmt)
        .x_desc(axis_label(r.axis_name(), &r.unit))
        .y_desc(axis_label(r.axis2_name(), &r.unit2))
        .draw()
        .map_err(err)?;
    // Everything inside the plot is drawn in pixels on the plotting area, which clips it.
    let plot = chart.plotting_area().strip_coord_spec();
    let base = plot.get_base_pixel();
    let px = |p: (f64, f64)| {
        let a = chart.backend_coord(&p);
        (a.0 - base.0, a.1 - base.1)
    };
    for c in &v.points {
        let (Some(i), Some(j)) = (
            xs.iter().position(|x| *x == c.value),
            c.value2.and_then(|y| ys.iter().position(|v| *v == y)),
        ) else {
            continue;
        };
        let (a, b) = (px((xb[i].0, yb[j].1)), px((xb[i].1, yb[j].0)));
        match cell_fill(c) {
            CellFill::Collapse(color) => {
                plot.draw(&Rectangle::new([a, b], color.filled()))
                    .map_err(err)?;
            }
            CellFill::FailsUntriggered => draw_hatched(&plot, a, b)?,
        }
    }
    for c in &v.points {
        let Some(y) = c.value2 else { continue };
        let at = px((c.value, y));
        plot.draw(&Circle::new(at, 3, WHITE.filled()))
            .map_err(err)?;
        plot.draw(&Circle::new(at, 3, BLACK.stroke_width(1)))
            .map_err(err)?;
    }
    if vm.operating_cell.is_some() && (xr.0..=xr.1).contains(&ox) && (yr.0..=yr.1).contains(&oy) {
        let at = px((ox, oy));
        draw_cross(&plot, at)?;
        let side = label_side(ox, oy, xr, yr);
        let label = format!(
            "operating ({}, {})",
            with_unit(ox, &r.unit),
            with_unit(oy, &r.unit2)
        );
        let font = ("sans-serif", 15).into_font();
        let (tw, th) = plot
            .estimate_text_size(&label, &font.clone().into())
            .map_err(err)?;
        let (tw, th) = (tw as i32, th as i32);
        let bx = at.0 + if side.left { -14 - tw } else { 14 };
        let by = at.1 + if side.below { 10 } else { -10 - th };
        plot.draw(&Rectangle::new(
            [(bx - 3, by - 2), (bx + tw + 3, by + th + 2)],
            WHITE.mix(0.85).filled(),
        ))
        .map_err(err)?;
        plot.draw(&Text::new(label, (bx, by), font)).map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn luminance(c: RGBColor) -> f64 {
        0.2126 * c.0 as f64 + 0.7152 * c.1 as f64 + 0.0722 * c.2 as f64
    }

    /// The axes cover every sampled value and reach at most half a step beyond the outer
    /// ones, and not below zero for values that are all positive; the cells tile them.
    #[test]
    fn axes_stay_within_half_a_step_of_the_swept_range() {
        let cases: [&[f64]; 4] = [
            &[10.0, 20.0, 30.0, 40.0],
            &[2.0, 7.428571428, 12.857142857, 18.285714286, 40.0],
            &[5.0],
            &[-3.0, -2.0, -1.0],
        ];
        for values in cases {
            let (lo, hi) = axis_range(values).unwrap();
            let (first, last) = (values[0], values[values.len() - 1]);
            let half = if values.len() > 1 {
                (last - first) / (values.len() - 1) as f64 / 2.0
            } else {
                first.abs() / 2.0
            };
            assert!(lo <= first && hi >= last, "{values:?}: {lo}..{hi}");
            assert!(
                lo >= first - half - 1e-9 && hi <= last + half + 1e-9,
                "{values:?}"
            );
            if first >= 0.0 {
                assert!(lo >= 0.0, "{values:?}: {lo}");
            }
            if last <= 0.0 {
                assert!(hi <= 0.0, "{values:?}: {hi}");
            }
            let b = bands(values, (lo, hi));
            assert_eq!((b[0].0, b[b.len() - 1].1), (lo, hi));
            for (k, (a, z)) in b.iter().enumerate() {
                assert!(a <= &values[k] && &values[k] <= z, "{values:?} cell {k}");
                if k > 0 {
                    assert_eq!(b[k - 1].1, *a);
                }
            }
        }
        // The bundled retry-storm map: 2 s to 40 s in 8 points starts at 0, not -0.7 s.
        let v: Vec<f64> = (0..8).map(|i| 2.0 + 38.0 * i as f64 / 7.0).collect();
        assert_eq!(axis_range(&v).unwrap().0, 0.0);
        assert_eq!(axis_range(&[]), None);
    }

    /// Darker means more seeds tipped: lightness falls strictly with the collapse
    /// probability, the ends are the ends of the scale, and cells failing without the trigger are grey.
    #[test]
    fn shading_follows_the_collapse_probability() {
        let mut last = f64::INFINITY;
        for k in 0..=100 {
            let l = luminance(collapse_color(k as f64 / 100.0));
            assert!(l < last, "p = {}: {l} after {last}", k as f64 / 100.0);
            last = l;
        }
        assert_eq!(collapse_color(0.0), RGBColor(253, 231, 37));
        assert_eq!(collapse_color(1.0), RGBColor(68, 1, 84));
        assert_eq!(collapse_color(2.0), collapse_color(1.0));
        let cell = |p: f64, state: Region| Cell {
            value: 1.0,
            value2: Some(1.0),
            baseline: super::super::sweep_result::Spread {
                min: None,
                mean: None,
                max: None,
            },
            triggered: super::super::sweep_result::Spread {
                min: None,
                mean: None,
                max: None,
            },
            baseline_failed: 0.0,
            collapse_probability: p,
            collapse_interval: [0.0, 1.0],
            state,
            seeds: 1,
            spontaneous_collapses: 0,
            healthy_hours: 0.0,
            spontaneous_per_hour: 0.0,
            recovered_share: None,
            recovery_s: None,
        };
        assert_eq!(
            cell_fill(&cell(0.4, Region::Stable)),
            CellFill::Collapse(collapse_color(0.4))
        );
        assert_eq!(
            cell_fill(&cell(0.8, Region::Metastable)),
            CellFill::Collapse(collapse_color(0.8))
        );
        for state in [Region::Overloaded, Region::Spontaneous] {
            assert_eq!(cell_fill(&cell(1.0, state)), CellFill::FailsUntriggered);
        }
        for k in 0..=10 {
            assert_ne!(collapse_color(k as f64 / 10.0), OVERLOADED);
        }
    }

    #[test]
    fn labels_point_into_the_plot_and_hatching_stays_in_its_box() {
        let (xr, yr) = ((0.0, 100.0), (0.0, 40.0));
        assert_eq!(
            label_side(70.0, 30.0, xr, yr),
            LabelSide {
                left: true,
                below: true
            }
        );
        assert_eq!(
            label_side(10.0, 5.0, xr, yr),
            LabelSide {
                left: false,
                below: false
            }
        );
        let lines = hatch_lines((10.0, 20.0), (28.0, 26.0), 4.0);
        assert!(lines.len() >= 5, "{lines:?}");
        for (p, q) in lines {
            for (x, y) in [p, q] {
                assert!((10.0 - 1e-9..=28.0 + 1e-9).contains(&x), "{x}");
                assert!((20.0 - 1e-9..=26.0 + 1e-9).contains(&y), "{y}");
            }
            assert!(((q.0 - p.0) - (q.1 - p.1)).abs() < 1e-9);
            // On the shared grid x - y = k gap, so neighbouring boxes join up.
            let k = (p.0 - p.1) / 4.0;
            assert!((k - k.round()).abs() < 1e-9, "{p:?}");
        }
    }
}
