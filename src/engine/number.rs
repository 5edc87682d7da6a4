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

/// A point and its interval for people: the point to three significant figures and the
/// bounds with the same decimals as the point (`0.348 (0.339-0.357)`, `14.3 (12.8-15.6)`,
/// `2330 (2330-2340)`), but never more than three significant figures of their own
/// (`98.1 (96.3-100)`). A point of zero or not finite has no place: each number is then
/// given three significant figures of its own.
pub fn interval(point: f64, lo: f64, hi: f64) -> [String; 3] {
    if point == 0.0 || !point.is_finite() {
        return [sig3(point), sig3(lo), sig3(hi)];
    }
    // The power of ten of a number's third significant figure.
    let place = |x: f64| x.abs().log10().floor() as i32 - 2;
    let at_place = |v: f64| -> String {
        if !v.is_finite() {
            return tick_label(v);
        }
        let p = if v == 0.0 {
            place(point)
        } else {
            place(point).max(place(v))
        };
        if p < 0 {
            let s = format!("{v:.*}", (-p) as usize);
            // "-0.00" is zero.
            if s.trim_start_matches('-')
                .chars()
                .all(|c| c == '0' || c == '.')
            {
                s.trim_start_matches('-').to_string()
            } else {
                s
            }
        } else {
            let s = 10f64.powi(p);
            tick_label((v / s).round() * s)
        }
    };
    [at_place(point), at_place(lo), at_place(hi)]
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
    #[test]
    fn an_interval_has_the_decimals_of_its_point() {
        assert_eq!(
            interval(0.3482, 0.3393, 0.3571),
            ["0.348", "0.339", "0.357"]
        );
        assert_eq!(interval(14.31, 12.84, 15.55), ["14.3", "12.8", "15.6"]);
        assert_eq!(interval(2333.0, 2328.0, 2341.0), ["2330", "2330", "2340"]);
        assert_eq!(interval(0.43, 0.36, 0.45), ["0.430", "0.360", "0.450"]);
        assert_eq!(interval(1.0, 0.9996, 1.0), ["1.00", "1.00", "1.00"]);
        assert_eq!(interval(0.5, -0.0001, 1.0), ["0.500", "0.000", "1.00"]);
        assert_eq!(interval(0.0, 0.01234, 0.5), ["0", "0.0123", "0.5"]);
        assert_eq!(interval(98.1, 96.31, 100.04), ["98.1", "96.3", "100"]);
        assert_eq!(interval(99.0, 98.1, 101.6), ["99.0", "98.1", "102"]);
    }
}
