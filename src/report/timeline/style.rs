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
    /// Drawn after the panel's other lines (failed, rejected), so that it shows where it
    /// coincides with them.
    pub on_top: bool,
}

/// A line before it is styled: its label, values, whether it is the panel's main line,
/// and its dash pattern if its role fixes one (a class's goodput is solid, its offered
/// load long dashes, ...).
pub(super) struct Series {
    pub(super) label: String,
    pub(super) values: Vec<f64>,
    pub(super) bold: bool,
    pub(super) dash: Option<Dash>,
    /// The class a request line belongs to (its index among the panel's classes): on a
    /// panel of several classes each class keeps one colour and each measure one dash.
    pub(super) class: Option<usize>,
    /// Failed and rejected: drawn last, wider, in a colour of its own.
    pub(super) on_top: bool,
}

pub(super) fn series(label: String, values: Vec<f64>, bold: bool) -> Series {
    Series {
        label,
        values,
        bold,
        dash: None,
        class: None,
        on_top: false,
    }
}

/// The colours of data lines, as indices into [`PALETTE`]: the Okabe-Ito colours with
/// the sky blue last (after grey), so that no two early lines are both blue; black is
/// kept for the reference lines of theory.
const LINE_COLORS: [usize; 7] = [0, 1, 2, 3, 4, 6, 5];

/// The colour of data line (or class) `i`.
pub(super) fn line_color(i: usize) -> RGBColor {
    PALETTE[LINE_COLORS[i % LINE_COLORS.len()]]
}

/// A class's colour darkened by half: its failed line over its offered one.
fn darker(c: RGBColor) -> RGBColor {
    RGBColor(c.0 / 2, c.1 / 2, c.2 / 2)
}

/// Styles a panel's lines. On a panel of one class (or of none), line `i` takes colour
/// `i` and, unless its role fixes one, dash pattern `i`; so two lines differ in colour (up
/// to seven lines) and in dash or in the pair of both. On a panel of several classes each
/// class takes one colour (no two classes alike) and each measure its dash. Failed and
/// rejected lines are a step wider and darker (black on a one-class panel), so that
/// they stand out over offered.
pub(super) fn styled(all: Vec<Series>) -> Vec<Line> {
    let mut classes: Vec<usize> = all.iter().filter_map(|s| s.class).collect();
    classes.sort_unstable();
    classes.dedup();
    let by_class = classes.len() > 1;
    all.into_iter()
        .enumerate()
        .map(|(i, s)| {
            let color = match (by_class, s.class) {
                (true, Some(c)) => {
                    let own = line_color(classes.binary_search(&c).unwrap_or(c));
                    if s.on_top { darker(own) } else { own }
                }
                _ if s.on_top => PALETTE[7],
                _ => line_color(i),
            };
            Line {
                label: s.label,
                values: s.values,
                color,
                dash: s.dash.unwrap_or(Dash::CYCLE[i % Dash::CYCLE.len()]),
                width: if s.bold || s.on_top { 3 } else { 2 },
                on_top: s.on_top,
            }
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
        on_top: false,
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
        // Seven lines: seven colours, and no two of them blue (the sky blue was sixth).
        let seven = styled(
            (0..7)
                .map(|i| series(format!("{i}"), vec![], false))
                .collect(),
        );
        let blue = |c: RGBColor| c.2 > 150 && c.0 < 100;
        assert_eq!(seven.iter().filter(|l| blue(l.color)).count(), 2);
        assert!(!blue(seven[5].color));
    }

    /// Slack: "boot goodput" and "booted goodput" were both solid blue; each class now
    /// has its colour, and a one-class panel's failed line is black and wider.
    #[test]
    fn classes_of_a_panel_differ_in_colour() {
        let rate = |label: &str, class, dash, on_top| Series {
            dash: Some(dash),
            class: Some(class),
            on_top,
            ..series(label.into(), vec![], false)
        };
        let two = styled(vec![
            rate("boot goodput", 0, Dash::Solid, false),
            rate("boot offered", 0, Dash::Long, false),
            rate("boot failed", 0, Dash::Dotted, true),
            rate("booted goodput", 1, Dash::Solid, false),
            rate("booted offered", 1, Dash::Long, false),
        ]);
        assert_ne!(two[0].color, two[3].color);
        assert_eq!(two[0].color, two[1].color);
        assert_eq!(two[3].color, two[4].color);
        let one = styled(vec![
            rate("request offered", 0, Dash::Long, false),
            rate("request failed", 0, Dash::Dotted, true),
        ]);
        assert_eq!(one[1].color, PALETTE[7]);
        assert!(one[1].width > one[0].width && one[1].on_top);
    }
}
