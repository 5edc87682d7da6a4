//! `summary.json`: a run's totals per class, pool and cache tier, and what produced it.

use crate::model::metrics::Summary;
use crate::scenario::Provenance;
use serde::Serialize;

/// The bytes of `summary.json`: the summary's fields, then `produced_by`.
pub fn summary_json(summary: &Summary, produced_by: &Provenance) -> Vec<u8> {
    #[derive(Serialize)]
    struct File<'a> {
        #[serde(flatten)]
        summary: &'a Summary,
        produced_by: &'a Provenance,
    }
    super::pretty_json(&File {
        summary,
        produced_by,
    })
}
