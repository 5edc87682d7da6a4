//! CSV cells, shared by the CSV exporters. Numbers use Rust's shortest round-trip form, so
//! equal runs give equal bytes; a missing value (NaN) is an empty cell.

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
