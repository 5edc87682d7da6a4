//! Long spans of time in words a reader takes in at once ("41 min", "3.2 days",
//! "~10^9 years"): the mean time to collapse in tables and on the console.

const MINUTE: f64 = 60.0;
const HOUR: f64 = 3600.0;
const DAY: f64 = 86_400.0;
/// A Julian year.
const YEAR: f64 = 365.25 * DAY;

/// `s` seconds in the largest unit that keeps the number readable, to two or three
/// significant figures; from a million years on, only the power of ten.
pub fn human_duration(s: f64) -> String {
    if !s.is_finite() {
        return "forever".into();
    }
    let (value, unit) = if s < 1.0 {
        return format!("{:.0} ms", s * 1000.0);
    } else if s < 2.0 * MINUTE {
        (s, "s")
    } else if s < 2.0 * HOUR {
        (s / MINUTE, "min")
    } else if s < 2.0 * DAY {
        (s / HOUR, "hours")
    } else if s < 2.0 * YEAR {
        (s / DAY, "days")
    } else if s < 1e6 * YEAR {
        (s / YEAR, "years")
    } else {
        return format!("~10^{} years", (s / YEAR).log10().floor() as i64);
    };
    if value < 10.0 {
        format!("{value:.1} {unit}")
    } else if value < 1000.0 {
        format!("{value:.0} {unit}")
    } else {
        // Three significant figures: "49700 years", not "49698 years".
        let unit_of_3 = 10f64.powi(value.log10().floor() as i32 - 2);
        format!("{:.0} {unit}", (value / unit_of_3).round() * unit_of_3)
    }
}

/// Where an estimate spent its event budget, in words: "budget spent at level 7 of 10"
/// (`level` 0: in the direct cycles, before the first splitting level).
pub fn budget_spent_at(level: u64, levels: u64) -> String {
    match level {
        0 => format!("budget spent in the direct cycles, before level 1 of {levels}"),
        _ => format!("budget spent at level {level} of {levels}"),
    }
}

#[cfg(test)]
mod tests {
    use super::human_duration;

    #[test]
    fn picks_a_readable_unit() {
        assert_eq!(human_duration(0.25), "250 ms");
        assert_eq!(human_duration(41.0), "41 s");
        assert_eq!(human_duration(41.0 * 60.0), "41 min");
        assert_eq!(human_duration(5.0 * 3600.0), "5.0 hours");
        assert_eq!(human_duration(3.2 * 86_400.0), "3.2 days");
        assert_eq!(human_duration(1200.0 * 365.25 * 86_400.0), "1200 years");
        assert_eq!(human_duration(49_698.0 * 365.25 * 86_400.0), "49700 years");
        assert_eq!(human_duration(3e9 * 365.25 * 86_400.0), "~10^9 years");
    }
}
