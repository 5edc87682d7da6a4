//! Simulated time: integer nanoseconds, and durations written with units ("250ms", "2h").

/// A point in simulated time, in nanoseconds since the start of the run.
pub type SimTime = u64;

/// Nanoseconds in one second.
pub const NS_PER_S: u64 = 1_000_000_000;

/// Converts seconds (finite, non-negative) to nanoseconds, saturating at `u64::MAX`.
pub fn secs_to_ns(s: f64) -> SimTime {
    if s <= 0.0 || s.is_nan() {
        0
    } else if s >= (u64::MAX as f64) / NS_PER_S as f64 {
        u64::MAX
    } else {
        (s * NS_PER_S as f64).round() as u64
    }
}

/// `x as SimTime` (truncating toward zero, saturating, NaN to 0), computed through a signed
/// conversion on the range every model time lies in (below 2^63 ns): the processor converts
/// to a signed integer in one instruction, where an unsigned conversion takes a dozen. A
/// service time and an arrival gap are converted at every event.
#[inline(always)]
pub fn ns_from_f64(x: f64) -> SimTime {
    if (0.0..9_223_372_036_854_775_808.0).contains(&x) {
        // SAFETY: `x` is finite, non-negative and below 2^63, so its truncation fits an
        // `i64` (the one condition of `to_int_unchecked`), and is non-negative.
        unsafe { x.to_int_unchecked::<i64>() as SimTime }
    } else {
        saturating_ns(x)
    }
}

/// `x as SimTime` out of line: kept apart so that the compiler does not compute it on every
/// conversion and pick the one it wants (which it did, doubling the cost).
#[cold]
#[inline(never)]
fn saturating_ns(x: f64) -> SimTime {
    x as SimTime
}

/// Converts nanoseconds to seconds.
pub fn ns_to_secs(ns: SimTime) -> f64 {
    ns as f64 / NS_PER_S as f64
}

/// The longest duration a scenario may write: 100 years (36,525 days). The clock holds
/// about 584 years, so a few such durations added together cannot overflow it, and none
/// can reach `SimTime::MAX`, which stands for "never" (no timeout) inside the model.
pub const MAX_DURATION_NS: SimTime = 36_525 * 86_400 * NS_PER_S;

const UNITS: &[(&str, f64)] = &[
    ("ns", 1.0),
    ("us", 1e3),
    ("µs", 1e3),
    ("ms", 1e6),
    ("s", 1e9),
    ("min", 60e9),
    ("m", 60e9),
    ("h", 3600e9),
    ("d", 86400e9),
];

/// Parses a duration such as `"250ms"`, `"10s"`, `"1.5h"` or `"21h22m"` into nanoseconds.
///
/// A duration is one or more `<number><unit>` terms; units are ns, us, ms, s, m or min, h, d.
pub fn parse_duration(text: &str) -> Result<SimTime, String> {
    let s = text.trim();
    if s.is_empty() {
        return Err("empty duration; write a number with a unit, e.g. \"10s\"".into());
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(format!(
                "`{text}` is not a duration; write a number with a unit, e.g. \"10s\""
            ));
        }
        let num: f64 = rest[..num_len].replace('_', "").parse().map_err(|_| {
            format!(
                "`{text}` is not a duration: bad number `{}`",
                &rest[..num_len]
            )
        })?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = rest[..unit_len].trim();
        if unit.is_empty() {
            return Err(format!(
                "`{text}` has no unit; write e.g. \"{num}s\" or \"{num}ms\" (units: ns, us, ms, s, m, h, d)"
            ));
        }
        let Some(&(_, scale)) = UNITS.iter().find(|(u, _)| *u == unit) else {
            return Err(format!(
                "`{text}` has an unknown unit `{unit}` (units: ns, us, ms, s, m, h, d)"
            ));
        };
        total += num * scale;
        rest = &rest[unit_len..];
    }
    if !total.is_finite() || total > MAX_DURATION_NS as f64 {
        return Err(format!(
            "`{text}` is too long a duration; at most 100 years (36525d)"
        ));
    }
    Ok(total.round() as SimTime)
}

/// Formats nanoseconds compactly for labels: "950ms", "12s", "3m20s", "21h22m".
pub fn format_duration(ns: SimTime) -> String {
    let s = ns_to_secs(ns);
    if ns == 0 {
        return "0s".into();
    }
    if s < 1.0 {
        return format!("{}ms", trim(s * 1e3));
    }
    if s < 60.0 {
        return format!("{}s", trim(s));
    }
    let total = s.round() as u64;
    let (d, h, m, sec) = (
        total / 86400,
        (total / 3600) % 24,
        (total / 60) % 60,
        total % 60,
    );
    let mut out = String::new();
    if d > 0 {
        out += &format!("{d}d");
    }
    if h > 0 {
        out += &format!("{h}h");
    }
    if m > 0 {
        out += &format!("{m}m");
    }
    if sec > 0 {
        out += &format!("{sec}s");
    }
    out
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns_from_f64_is_the_plain_conversion() {
        // Every range the fast path and the fallback meet at, and the values that saturate.
        let mut xs = vec![
            0.0,
            -0.0,
            0.4,
            0.99,
            1.0,
            1.5,
            -1.0,
            -1e30,
            1e9,
            123_456_789.9,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN_POSITIVE,
            9_223_372_036_854_775_808.0,
            18_446_744_073_709_551_616.0,
            1.8e19,
            1e25,
        ];
        let two63 = 9_223_372_036_854_775_808.0_f64;
        xs.extend([
            two63.next_down(),
            two63.next_up(),
            (2.0 * two63).next_down(),
        ]);
        let mut rng = crate::engine::stream_rng(1, 0, "ns");
        for _ in 0..100_000 {
            let u: f64 = rand::RngExt::random(&mut rng);
            xs.push(u * 1e20);
            xs.push(u * 1e12);
        }
        for x in xs {
            assert_eq!(ns_from_f64(x), x as SimTime, "x = {x:e}");
        }
    }

    #[test]
    fn parses_units_and_compounds() {
        assert_eq!(parse_duration("250ms").unwrap(), 250_000_000);
        assert_eq!(parse_duration("10s").unwrap(), 10 * NS_PER_S);
        assert_eq!(parse_duration("2h").unwrap(), 7200 * NS_PER_S);
        assert_eq!(
            parse_duration("21h22m").unwrap(),
            (21 * 3600 + 22 * 60) * NS_PER_S
        );
        assert_eq!(parse_duration("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration("3min").unwrap(), 180 * NS_PER_S);
    }

    #[test]
    fn the_longest_duration_is_100_years() {
        assert_eq!(parse_duration("36525d").unwrap(), MAX_DURATION_NS);
        assert!(parse_duration("36526d").is_err());
        assert!(MAX_DURATION_NS.checked_mul(5).is_some());
    }

    #[test]
    fn rejects_bad_durations() {
        for bad in [
            "",
            "10",
            "ten s",
            "5 parsecs",
            "-3s",
            "s",
            "36526d",
            "300000d",
            "1e30s",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad} should fail");
        }
    }

    #[test]
    fn formats_round_trip() {
        for s in ["950ms", "12s", "3m20s", "21h22m", "1d"] {
            assert_eq!(format_duration(parse_duration(s).unwrap()), s);
        }
    }
}
