//! How a timeline's lines look: the colour-blind-safe palette, dash patterns, the styling
//! of a panel's lines (each its own colour and dash) and the stroke that draws one.

use plotters::element::DashedPathElement;
use plotters::prelude::*;

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

/// A line before it is styled: its label, values, whether it is the panel's main line,
/// and its dash pattern if its role fixes one (a class's goodput is solid, its offered
/// load long dashes, ...).
pub(super) struct Series {
    pub(super) label: String,
    pub(super) values: Vec<f64>,
    pub(super) bold: bool,
    pub(super) dash: Option<Dash>,
}

pub(super) fn series(label: String, values: Vec<f64>, bold: bool) -> Series {
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
pub(super) fn styled(all: Vec<Series>) -> Vec<Line> {
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
pub(super) fn reference(label: String, value: f64, n: usize) -> Line {
    Line {
        label,
        values: vec![value; n],
        color: PALETTE[7],
        dash: Dash::Long,
        width: 2,
    }
}

/// Draws `points` (pixel or chart coordinates) in a line's colour, width and dashes.
pub(super) fn stroke<DB: DrawingBackend, CT: plotters::coord::CoordTranslate>(
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

#[cfg(test)]
mod tests {
    use super::*;

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
