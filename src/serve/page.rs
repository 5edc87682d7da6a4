//! The live page, embedded in the binary: its HTML, script and styles, and the chart
//! library, uPlot 1.6.32 (MIT; `assets/vendor/uplot/`, from the npm registry, unchanged).
//! Nothing is fetched at run time: the page works offline.

/// The page, with `BRINK_TOKEN` where the session's token goes.
pub const INDEX: &str = include_str!("assets/index.html");

/// The page as served: the session's token in its `<meta name="brink-token">`, which the
/// script sends back with every control (`super::guard`).
pub fn index(token: &str) -> String {
    INDEX.replacen(
        "<meta name=\"brink-token\" content=\"BRINK_TOKEN\">",
        &format!("<meta name=\"brink-token\" content=\"{token}\">"),
        1,
    )
}

/// The page's script: polling, charts, controls.
pub const APP_JS: &str = include_str!("assets/app.js");
/// The page's styles.
pub const APP_CSS: &str = include_str!("assets/app.css");
/// uPlot's minified build (an IIFE defining `uPlot`).
pub const UPLOT_JS: &str = include_str!("assets/vendor/uplot/uPlot.iife.min.js");
/// uPlot's styles.
pub const UPLOT_CSS: &str = include_str!("assets/vendor/uplot/uPlot.min.css");

#[cfg(test)]
mod tests {
    #[test]
    fn the_token_goes_into_the_page_once() {
        let page = super::index("00ff");
        assert!(page.contains("<meta name=\"brink-token\" content=\"00ff\">"));
        assert!(!page.contains("BRINK_TOKEN"));
    }
}
