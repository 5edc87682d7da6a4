//! `timeseries.csv`: one row per metrics step, one column per entry of the time-series
//! schema ([`crate::scenario::columns`]).

use super::csv::num;
use crate::model::TimeSeries;

/// The bytes of `timeseries.csv`: the schema's column names, then the rows; a missing
/// value (NaN) is an empty cell.
pub fn timeseries_csv(ts: &TimeSeries) -> Vec<u8> {
    let names: Vec<&str> = ts.columns.iter().map(|c| c.name.as_str()).collect();
    let mut out = names.join(",");
    out.push('\n');
    for row in &ts.rows {
        for (i, x) in row.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&num(*x));
        }
        out.push('\n');
    }
    out.into_bytes()
}
