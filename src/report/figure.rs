//! A picture drawn once for any plotters backend and written as PNG and SVG side by side,
//! each through the atomic writer; text uses the bundled DejaVu font, so no system fonts
//! are needed. PNG text is drawn by [`Glyphs`], each glyph at its true place.

use super::files::write_atomic;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};
use std::path::Path;
use std::sync::Once;

/// Registers the bundled DejaVu font once, so text renders with no system fonts.
pub fn ensure_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        );
        let _ = plotters::style::register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold());
    });
}

/// A picture that can be drawn on any plotters backend.
pub trait Figure {
    /// Width and height in pixels.
    fn size(&self) -> (u32, u32);
    /// Draws the whole picture on `root`; the error says what plotters refused.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// The figure as SVG text.
pub fn svg(fig: &impl Figure) -> std::io::Result<String> {
    ensure_font();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, fig.size()).into_drawing_area();
        fig.draw(&root).map_err(std::io::Error::other)?;
        root.present()
            .map_err(|e| std::io::Error::other(e.to_string()))?;
    }
    Ok(svg)
}

/// The figure as PNG bytes: drawn into an RGB buffer in memory and encoded with the
/// encoder (and settings) plotters uses when it saves to a path, so the bytes are the same.
pub fn png(fig: &impl Figure) -> std::io::Result<Vec<u8>> {
    use image::ImageEncoder;
    ensure_font();
    let (w, h) = fig.size();
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = Glyphs(BitMapBackend::with_buffer(&mut rgb, (w, h))).into_drawing_area();
        fig.draw(&root).map_err(std::io::Error::other)?;
        root.present()
            .map_err(|e| std::io::Error::other(e.to_string()))?;
    }
    let mut bytes = Vec::new();
    image::codecs::png::PngEncoder::new(&mut bytes)
        .write_image(&rgb, w, h, image::ColorType::Rgb8)
        .map_err(std::io::Error::other)?;
    Ok(bytes)
}

/// Writes `DIR/STEM.png` and `DIR/STEM.svg`, each rendered in memory and then written
/// through the atomic writer (a temporary file created exclusively, written through the
/// handle that created it: no file is reopened by name).
pub fn write(dir: &Path, stem: &str, fig: &impl Figure) -> std::io::Result<()> {
    write_atomic(&dir.join(format!("{stem}.png")), &png(fig)?)?;
    write_atomic(&dir.join(format!("{stem}.svg")), svg(fig)?.as_bytes())
}

/// The largest font size up to `size` at which `text` fits in `width` pixels.
pub(super) fn fitting_font<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    size: u32,
    width: u32,
    bold: bool,
) -> TextStyle<'static> {
    let font = |s: u32| {
        let f = ("sans-serif", s as f64).into_font();
        if bold { f.style(FontStyle::Bold) } else { f }
    };
    let mut s = size;
    while s > 9 {
        match area.estimate_text_size(text, &font(s).into()) {
            Ok((w, _)) if w > width => s -= 1,
            _ => break,
        }
    }
    font(s).into()
}

/// A bitmap backend whose text is drawn glyph by glyph at its true place. plotters 0.3.7
/// draws each glyph of its ab_glyph text at the whole pixel of its advance, dropping the
/// glyph's side bearing and the fraction of the pen position, so letters sat unevenly
/// ("m ean queued 2. 39", issue 24); here each glyph is outlined at the pen's exact
/// position, kerned, and its coverage blended in. Layout (the text's box, its anchor and
/// rotation) is plotters' own, so text takes the same place as before; everything else
/// is the bitmap backend's.
pub struct Glyphs<'a>(pub BitMapBackend<'a>);

type Drawn<'a> = Result<(), DrawingErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>>;

impl<'a> DrawingBackend for Glyphs<'a> {
    type ErrorType = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }
    fn ensure_prepared(&mut self) -> Drawn<'a> {
        self.0.ensure_prepared()
    }
    fn present(&mut self) -> Drawn<'a> {
        self.0.present()
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Drawn<'a> {
        self.0.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Drawn<'a> {
        self.0.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Drawn<'a> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Drawn<'a> {
        self.0.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Drawn<'a> {
        self.0.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Drawn<'a> {
        self.0.fill_polygon(vert, style)
    }
    fn blit_bitmap(&mut self, pos: BackendCoord, size: (u32, u32), src: &[u8]) -> Drawn<'a> {
        self.0.blit_bitmap(pos, size, src)
    }
    fn estimate_text_size<T: BackendTextStyle>(
        &self,
        text: &str,
        style: &T,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        self.0.estimate_text_size(text, style)
    }

    fn draw_text<T: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &T,
        pos: BackendCoord,
    ) -> Drawn<'a> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        // The box, anchor and rotation as plotters' default `draw_text` takes them.
        let ((min_x, min_y), (max_x, max_y)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let bold = matches!(style.style(), plotters_backend::FontStyle::Bold);
        let trans = style.transform();
        let (w, h) = self.get_size();
        let mut result = Ok(());
        glyph_coverage(text, style.size() as f32, bold, |x, y, a| {
            let (x, y) = trans.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if result.is_ok() && x >= 0 && x < w as i32 && y >= 0 && y < h as i32 {
                let c = BackendColor {
                    alpha: color.alpha * a as f64,
                    rgb: color.rgb,
                };
                result = self.0.draw_pixel((x, y), c);
            }
        });
        result
    }
}

/// The coverage of each pixel of `text` in the bundled DejaVu at `size` px (bold or not),
/// told to `draw` as (x, y, coverage) relative to the text's origin, with plotters'
/// vertical convention (a glyph's top at `size / 2` above its own bounds' top, so that
/// the box plotters lays out holds it). Each glyph is outlined at the pen's fractional
/// position, the pen advanced by the glyph's advance and the pair's kerning.
pub fn glyph_coverage(text: &str, size: f32, bold: bool, mut draw: impl FnMut(i32, i32, f32)) {
    use ab_glyph::{Font, FontRef, ScaleFont, point};
    let bytes = if bold {
        dejavu::sans::bold()
    } else {
        dejavu::sans::regular()
    };
    let Ok(font) = FontRef::try_from_slice(bytes) else {
        return;
    };
    let font = font.as_scaled(size);
    let mut pen = 0f32;
    let mut prev = None;
    for c in text.chars() {
        let id = font.glyph_id(c);
        if let Some(p) = prev {
            pen += font.kern(p, id);
        }
        prev = Some(id);
        let glyph = id.with_scale_and_position(font.scale(), point(pen, 0.0));
        if let Some(outline) = font.outline_glyph(glyph) {
            let r = outline.px_bounds();
            let (left, top) = (r.min.x as i32, (size / 2.0 + r.min.y) as i32);
            outline.draw(|x, y, a| draw(left + x as i32, top + y as i32, a));
        }
        pen += font.h_advance(id);
    }
}

#[cfg(test)]
mod tests {
    use super::glyph_coverage;
    use ab_glyph::{Font, FontRef, ScaleFont};

    /// The leftmost and rightmost inked columns of `text` at `size` px.
    fn ink(text: &str, size: f32) -> (i32, i32) {
        let (mut lo, mut hi) = (i32::MAX, i32::MIN);
        glyph_coverage(text, size, false, |x, _, a| {
            if a > 0.0 {
                lo = lo.min(x);
                hi = hi.max(x);
            }
        });
        (lo, hi)
    }

    /// A glyph starts at its side bearing, and the next one an advance later (plotters
    /// 0.3.7 drew every glyph from its pen's whole pixel, the bearing dropped, so "m" in
    /// "measured" sat apart from "e": issue 24's "m ean queued").
    #[test]
    fn glyphs_sit_at_their_bearing_and_advance() {
        let font = FontRef::try_from_slice(dejavu::sans::regular()).unwrap();
        let font = font.as_scaled(40.0);
        let m = font.glyph_id('m');
        let (lsb, adv) = (font.h_side_bearing(m), font.h_advance(m));
        assert!(lsb >= 2.0, "DejaVu's m has a bearing of {lsb} px at 40 px");
        let (lo, hi) = ink("m", 40.0);
        assert!(
            (lo as f32 - lsb).abs() <= 1.0,
            "m's ink starts at {lo}, its bearing {lsb}"
        );
        let (lo4, hi4) = ink("mmmm", 40.0);
        assert_eq!(lo4, lo);
        assert!(
            (hi4 as f32 - (hi as f32 + 3.0 * adv)).abs() <= 1.0,
            "four m end at {hi4}, one at {hi} plus three advances of {adv}"
        );
    }
}
