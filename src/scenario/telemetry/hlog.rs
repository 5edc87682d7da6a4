//! An HdrHistogram interval log (`.hlog`): its V2 compressed, base64 histogram lines,
//! summed over every interval (or those tagged `metric`). Its values carry no unit: the
//! scenario says it.

use super::{Hist, MAX_BUCKETS, MAX_INTERVALS, MAX_LINE};
use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

/// Reads and sums the log's intervals (values in the log's unit).
pub(super) fn parse(text: &str, tag: Option<&str>) -> Result<Hist, String> {
    if let Some((i, _)) = text.lines().enumerate().find(|(_, l)| l.len() > MAX_LINE) {
        return Err(format!("line {}: longer than {MAX_LINE} bytes", i + 1));
    }
    // The log's parser reads whole lines: each ends in a newline.
    let owned;
    let text = if text.ends_with('\n') || text.is_empty() {
        text
    } else {
        owned = format!("{text}\n");
        &owned
    };
    let line_at = |offset: usize| {
        text.as_bytes()[..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    };
    let mut total: Option<Histogram<u64>> = None;
    let mut intervals = 0;
    let mut tags: Vec<String> = Vec::new();
    for entry in IntervalLogIterator::new(text.as_bytes()) {
        let entry = entry.map_err(|e| {
            let hdrhistogram::serialization::interval_log::LogIteratorError::ParseError { offset } =
                e;
            format!(
                "line {}: not an interval log line (expected a `#` comment, the \
                 `\"StartTimestamp\",...` legend, `#[StartTime: ...]`, `#[BaseTime: ...]` or \
                 `start,length,max,HISTOGRAM` with the histogram in base64)",
                line_at(offset)
            )
        })?;
        let LogEntry::Interval(h) = entry else {
            continue;
        };
        let encoded = h.encoded_histogram();
        let line = line_at(encoded.as_ptr() as usize - text.as_ptr() as usize);
        let t = h.tag().map(|t| t.as_str().to_string()).unwrap_or_default();
        if !tags.contains(&t) && tags.len() < 20 {
            tags.push(t.clone());
        }
        if tag.is_some_and(|want| want != t) {
            continue;
        }
        intervals += 1;
        if intervals > MAX_INTERVALS {
            return Err(format!("line {line}: more than {MAX_INTERVALS} intervals"));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .map_err(|e| format!("line {line}: the histogram is not base64 ({e})"))?;
        let hist: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("line {line}: cannot decode the histogram ({e:?})"))?;
        match &mut total {
            None => {
                let mut first = hist;
                first.auto(true);
                total = Some(first);
            }
            Some(sum) => sum.add(&hist).map_err(|e| {
                format!("line {line}: cannot add this interval's histogram ({e:?})")
            })?,
        }
    }
    let Some(total) = total else {
        return Err(match tag {
            Some(t) => format!(
                "no interval is tagged `{t}`; the tags found are {}",
                tags.iter()
                    .map(|t| if t.is_empty() {
                        "(none)".to_string()
                    } else {
                        format!("`{t}`")
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "the log holds no interval histograms".into(),
        });
    };
    if total.is_empty() {
        return Err("the log's histograms hold no counts".into());
    }
    let mut hist = Hist {
        mean: Some(total.mean()),
        ..Hist::default()
    };
    for v in total.iter_recorded() {
        let value = v.value_iterated_to();
        let (lo, hi) = (
            total.lowest_equivalent(value),
            total.highest_equivalent(value).saturating_add(1),
        );
        if hist.bins.len() >= MAX_BUCKETS {
            return Err(format!("more than {MAX_BUCKETS} distinct buckets"));
        }
        hist.bins
            .push((lo as f64, hi as f64, v.count_since_last_iteration() as f64));
    }
    Ok(hist)
}
