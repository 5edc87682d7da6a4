//! `summary.json`: a run's totals per class, pool and cache tier.

use crate::model::metrics::Summary;

/// The bytes of `summary.json`.
pub fn summary_json(summary: &Summary) -> Vec<u8> {
    super::pretty_json(summary)
}
