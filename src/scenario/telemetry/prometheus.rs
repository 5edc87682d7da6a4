//! The Prometheus text exposition format: a classic histogram's cumulative
//! `NAME_bucket{le="..."}` series with `NAME_sum` and `NAME_count`, one series chosen by
//! its labels. Every line is parsed strictly (names, labels, values, timestamps).

use super::{Hist, MAX_BUCKETS, MAX_LINE, count, select};
use indexmap::IndexMap;

/// One histogram series as read: its buckets (le, cumulative count, line), sum and count.
#[derive(Debug, Default)]
struct Series {
    buckets: Vec<(f64, f64, usize)>,
    sum: Option<(f64, usize)>,
    count: Option<(f64, usize)>,
}

/// Reads the histogram `metric` (values in the file's unit).
pub(super) fn parse(
    text: &str,
    metric: &str,
    want: Option<&IndexMap<String, String>>,
) -> Result<Hist, String> {
    let (bucket, sum, total) = (
        format!("{metric}_bucket"),
        format!("{metric}_sum"),
        format!("{metric}_count"),
    );
    let mut series: Vec<(Vec<(String, String)>, Series)> = Vec::new();
    let mut histograms: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.len() > MAX_LINE {
            return Err(format!("line {n}: longer than {MAX_LINE} bytes"));
        }
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let (name, mut labels, value) = sample(l).map_err(|e| format!("line {n}: {e}"))?;
        if let Some(h) = name.strip_suffix("_bucket")
            && !histograms.iter().any(|x| x == h)
            && histograms.len() < 20
        {
            histograms.push(h.to_string());
        }
        let kind = if name == bucket {
            0
        } else if name == sum {
            1
        } else if name == total {
            2
        } else {
            continue;
        };
        let le = if kind == 0 {
            let at = labels.iter().position(|(k, _)| k == "le").ok_or_else(|| {
                format!("line {n}: `{bucket}` has no `le` label (the bucket's upper bound)")
            })?;
            let le = labels.remove(at).1;
            Some(parse_float(&le).map_err(|_| {
                format!("line {n}: `le=\"{le}\"` is not a number (an upper bound, or +Inf)")
            })?)
        } else {
            None
        };
        labels.sort();
        let at = match series.iter().position(|s| s.0 == labels) {
            Some(at) => at,
            None => {
                series.push((labels, Series::default()));
                series.len() - 1
            }
        };
        let s = &mut series[at].1;
        let v = count(value).map_err(|e| format!("line {n}: {e}"))?;
        match (kind, le) {
            (0, Some(le)) => {
                if s.buckets.len() >= MAX_BUCKETS {
                    return Err(format!(
                        "line {n}: more than {MAX_BUCKETS} buckets in one series"
                    ));
                }
                if let Some(b) = s.buckets.iter().find(|b| b.0 == le) {
                    return Err(format!(
                        "line {n}: a second bucket `le=\"{le}\"` in the series (the first is on line {})",
                        b.2
                    ));
                }
                s.buckets.push((le, v, n));
            }
            (1, _) => s.sum = Some((v, n)),
            _ => s.count = Some((v, n)),
        }
    }
    series.retain(|s| !s.1.buckets.is_empty());
    if series.is_empty() {
        return Err(format!(
            "no `{bucket}` series in the file{}",
            if histograms.is_empty() {
                " (it has no histograms)".to_string()
            } else {
                format!("; the histograms found are {}", histograms.join(", "))
            }
        ));
    }
    let what = format!("`{bucket}` series");
    let s = select(&series, want, (&what, &what))?;
    let mut buckets = s.buckets.clone();
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let Some(&(inf_le, inf, _)) = buckets.last().filter(|b| b.0 == f64::INFINITY) else {
        return Err(format!(
            "the `{bucket}` series has no `le=\"+Inf\"` bucket (it holds every count)"
        ));
    };
    let _ = inf_le;
    let mut hist = Hist::default();
    let (mut prev_le, mut prev_cum) = (0.0, 0.0);
    for &(le, cum, line) in &buckets[..buckets.len() - 1] {
        if cum < prev_cum {
            return Err(format!(
                "line {line}: the cumulative count {cum} at `le=\"{le}\"` is below the {prev_cum} \
                 of a smaller bound (bucket counts are cumulative: they never decrease)"
            ));
        }
        if le <= 0.0 {
            if cum > 0.0 {
                return Err(format!(
                    "line {line}: {cum} counts at or below {le}: a duration is above 0"
                ));
            }
            continue;
        }
        hist.bins.push((prev_le, le, cum - prev_cum));
        (prev_le, prev_cum) = (le, cum);
    }
    if inf < prev_cum {
        return Err(format!(
            "line {}: the `+Inf` bucket's count {inf} is below the {prev_cum} of a smaller bound",
            buckets[buckets.len() - 1].2
        ));
    }
    if hist.bins.is_empty() {
        return Err(format!(
            "the `{bucket}` series has no finite bound above 0: nothing to fit"
        ));
    }
    hist.overflow = inf - prev_cum;
    if let Some((c, line)) = s.count
        && (c - inf).abs() > 1e-9 * inf.max(1.0)
    {
        return Err(format!(
            "line {line}: `{total}` is {c} but the `+Inf` bucket holds {inf} (they are the same count)"
        ));
    }
    if inf <= 0.0 {
        return Err(format!("the `{bucket}` series holds no counts"));
    }
    hist.mean = s.sum.map(|(v, _)| v / inf);
    Ok(hist)
}

/// A sample: its name, labels and value.
type Sample = (String, Vec<(String, String)>, f64);

/// A sample line: name, labels and value (a timestamp and an exemplar after `#` may
/// follow).
fn sample(l: &str) -> Result<Sample, String> {
    let b = l.as_bytes();
    let name_end = b
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || c == b':'))
        .unwrap_or(b.len());
    if name_end == 0 || b[0].is_ascii_digit() {
        return Err(format!("expected a metric name, found {:?}", head(l)));
    }
    let name = l[..name_end].to_string();
    let mut rest = &l[name_end..];
    let mut labels = Vec::new();
    if let Some(r) = rest.strip_prefix('{') {
        rest = r;
        loop {
            rest = rest.trim_start();
            if let Some(r) = rest.strip_prefix('}') {
                rest = r;
                break;
            }
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            if end == 0 {
                return Err(format!("expected a label name, found {:?}", head(rest)));
            }
            let key = rest[..end].to_string();
            rest = rest[end..].trim_start();
            rest = rest
                .strip_prefix("=\"")
                .ok_or_else(|| format!("expected `=\"` after the label `{key}`"))?;
            let mut value = String::new();
            let mut chars = rest.char_indices();
            let close = loop {
                match chars.next() {
                    None => return Err(format!("the label `{key}`'s value has no closing `\"`")),
                    Some((i, '"')) => break i,
                    Some((_, '\\')) => match chars.next() {
                        Some((_, 'n')) => value.push('\n'),
                        Some((_, c @ ('\\' | '"'))) => value.push(c),
                        _ => {
                            return Err(format!(
                                "the label `{key}`'s value has a bad escape (only \\\\, \\\" and \\n)"
                            ));
                        }
                    },
                    Some((_, c)) => value.push(c),
                }
            };
            rest = &rest[close + 1..];
            if labels.iter().any(|(k, _)| *k == key) {
                return Err(format!("the label `{key}` is given twice"));
            }
            labels.push((key, value));
            rest = rest.trim_start();
            if let Some(r) = rest.strip_prefix(',') {
                rest = r;
            } else if !rest.starts_with('}') {
                return Err(format!(
                    "expected `,` or `}}` after a label, found {:?}",
                    head(rest)
                ));
            }
        }
    }
    if !rest.starts_with([' ', '\t']) {
        return Err(format!(
            "expected a space and the value after `{name}`, found {:?}",
            head(rest)
        ));
    }
    let mut fields = rest.split_whitespace();
    let v = fields
        .next()
        .ok_or_else(|| format!("`{name}` has no value"))?;
    let value = parse_float(v).map_err(|_| format!("the value {v:?} is not a number"))?;
    match fields.next() {
        None => {}
        Some(t) if t.starts_with('#') => {}
        Some(t) => {
            t.parse::<i64>()
                .map_err(|_| format!("the timestamp {t:?} is not an integer (milliseconds)"))?;
            match fields.next() {
                None => {}
                Some(x) if x.starts_with('#') => {}
                Some(x) => return Err(format!("unexpected {:?} after the timestamp", head(x))),
            }
        }
    }
    Ok((name, labels, value))
}

/// A number as the format writes it: Go's floats, `+Inf`, `-Inf`, `NaN`.
fn parse_float(s: &str) -> Result<f64, ()> {
    match s {
        "+Inf" | "Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ if s
            .bytes()
            .all(|c| c.is_ascii_digit() || b"+-.eE".contains(&c)) =>
        {
            s.parse().map_err(|_| ())
        }
        _ => Err(()),
    }
}

/// The start of `s`, for messages.
fn head(s: &str) -> String {
    s.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# HELP q Query latency.\n# TYPE q histogram\n\
        q_bucket{route=\"/a\",le=\"0.005\"} 2\nq_bucket{route=\"/a\",le=\"0.01\"} 5\n\
        q_bucket{route=\"/a\",le=\"+Inf\"} 6\nq_sum{route=\"/a\"} 0.05\nq_count{route=\"/a\"} 6\n\
        q_bucket{route=\"/b\",le=\"0.01\"} 1\nq_bucket{route=\"/b\",le=\"+Inf\"} 1 1700000000000\n";

    #[test]
    fn a_series_is_chosen_by_its_labels() {
        let want: IndexMap<String, String> = [("route".into(), "/a".into())].into();
        let h = parse(TEXT, "q", Some(&want)).unwrap();
        assert_eq!(h.bins, vec![(0.0, 0.005, 2.0), (0.005, 0.01, 3.0)]);
        assert_eq!(h.overflow, 1.0);
        assert!((h.mean.unwrap() - 0.05 / 6.0).abs() < 1e-15);
        let e = parse(TEXT, "q", None).unwrap_err();
        assert!(
            e.contains("2 `q_bucket` series") && e.contains("route=\"/b\""),
            "{e}"
        );
        let none: IndexMap<String, String> = [("route".into(), "/c".into())].into();
        let e = parse(TEXT, "q", Some(&none)).unwrap_err();
        assert!(e.contains("no `q_bucket` series has the labels"), "{e}");
    }

    #[test]
    fn malformed_lines_are_named() {
        let bad = "q_bucket{le=\"0.1\"} 5\nq_bucket{le=\"0.2\"} 3\nq_bucket{le=\"+Inf\"} 6\n";
        let e = parse(bad, "q", None).unwrap_err();
        assert!(
            e.starts_with("line 2:") && e.contains("never decrease"),
            "{e}"
        );
        for (text, want) in [
            ("q_bucket{le=\"0.1\" 5\n", "line 1: expected `,` or `}`"),
            ("q_bucket{le=\"0.1\"} NaN\n", "line 1: a count must be"),
            (
                "q_bucket{le=\"x\"} 1\n",
                "line 1: `le=\"x\"` is not a number",
            ),
            ("q_bucket{le=\"0.1\"} 1\n", "no `le=\"+Inf\"` bucket"),
            ("1q 2\n", "line 1: expected a metric name"),
        ] {
            let e = parse(text, "q", None).unwrap_err();
            assert!(e.starts_with(want) || e.contains(want), "{text:?}: {e}");
        }
    }
}
