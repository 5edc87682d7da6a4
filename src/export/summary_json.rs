//! `summary.json`: a run's totals per class, pool and cache tier, the run told in words
//! (`narrative`), and what produced it.

use crate::model::metrics::Summary;
use crate::report::narrative::Sentence;
use crate::scenario::Provenance;
use serde::Serialize;

/// The bytes of `summary.json`: the summary's fields, `narrative` (timed sentences:
/// `t_s`, `at`, `text`), then `produced_by`.
pub fn summary_json(
    summary: &Summary,
    narrative: &[Sentence],
    produced_by: &Provenance,
) -> Vec<u8> {
    #[derive(Serialize)]
    struct File<'a> {
        #[serde(flatten)]
        summary: &'a Summary,
        narrative: &'a [Sentence],
        produced_by: &'a Provenance,
    }
    super::pretty_json(&File {
        summary,
        narrative,
        produced_by,
    })
}
