//! Numbers for people: three significant figures (`2.39`, `8.1`, `10`, `0.000123`) and
//! tick labels without a needless decimal point. JSON and CSV keep full precision; this is
//! for what people read (tables, warnings, `brink check`, pictures).

/// A tick label: whole numbers without a decimal point (`350`, not `350.0`), others in
/// the fewest digits that show them (to 1e-6).
pub fn tick_label(v: f64) -> String {
    let r = (v * 1e6).round() / 1e6;
    if r == 0.0 { "0".into() } else { format!("{r}") }
}

/// A value to three significant digits: `2.39`, `8.1`, `10`, `123000`, `0.0000123`.
pub fn sig3(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return tick_label(v);
    }
    let digits = 2 - v.abs().log10().floor() as i32;
    // Scale by an exact power of ten on the side that keeps it exact.
    let r = if digits >= 0 {
        let s = 10f64.powi(digits);
        (v * s).round() / s
    } else {
        let s = 10f64.powi(-digits);
        (v / s).round() * s
    };
    if r.abs() >= 1e-4 {
        tick_label(r)
    } else {
        format!("{r}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_significant_figures_at_every_scale() {
        assert_eq!(sig3(2.3871), "2.39");
        assert_eq!(sig3(8.1), "8.1");
        assert_eq!(sig3(10.0), "10");
        assert_eq!(sig3(123_456.0), "123000");
        assert_eq!(sig3(0.0012345), "0.00123");
        assert_eq!(sig3(1.2345e-7), "0.000000123");
        assert_eq!(sig3(-0.5), "-0.5");
        assert_eq!(sig3(0.0), "0");
    }
}
