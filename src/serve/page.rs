//! The live page, embedded in the binary: its HTML, script and styles, and the chart
//! library, uPlot 1.6.32 (MIT; `assets/vendor/uplot/`, from the npm registry, unchanged).
//! Nothing is fetched at run time: the page works offline.

/// The page.
pub const INDEX: &str = include_str!("assets/index.html");
/// The page's script: polling, charts, controls.
pub const APP_JS: &str = include_str!("assets/app.js");
/// The page's styles.
pub const APP_CSS: &str = include_str!("assets/app.css");
/// uPlot's minified build (an IIFE defining `uPlot`).
pub const UPLOT_JS: &str = include_str!("assets/vendor/uplot/uPlot.iife.min.js");
/// uPlot's styles.
pub const UPLOT_CSS: &str = include_str!("assets/vendor/uplot/uPlot.min.css");
