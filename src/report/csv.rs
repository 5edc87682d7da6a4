//! CSV output. Numbers use Rust's shortest round-trip form, so equal runs give equal bytes;
//! a missing value (NaN) is an empty cell.

use crate::model::TimeSeries;
use std::fmt::Write;

/// Formats one number for CSV.
pub fn num(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else if x == x.trunc() && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// Quotes a text cell if it needs it.
pub fn text(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The time series as CSV text.
pub fn timeseries(ts: &TimeSeries) -> String {
    let mut out = ts.names().join(",");
    out.push('\n');
    for row in &ts.rows {
        for (i, x) in row.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{}", num(*x));
        }
        out.push('\n');
    }
    out
}
