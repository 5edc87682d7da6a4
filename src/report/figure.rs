//! A picture drawn once for any plotters backend and written as PNG and SVG side by side,
//! each through the atomic writer; text uses the bundled DejaVu font, so no system fonts
//! are needed.

use super::files::write_atomic;
use plotters::coord::Shift;
use plotters::prelude::*;
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
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
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
