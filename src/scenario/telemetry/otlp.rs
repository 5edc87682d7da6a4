//! OpenTelemetry OTLP/JSON metrics: one ExponentialHistogram or explicit-bucket Histogram
//! data point of the metric named (`resourceMetrics[].scopeMetrics[].metrics[]`), chosen by
//! its attributes. Counts are 64-bit integers, which OTLP/JSON writes as strings or numbers:
//! both are read. Errors name the JSON path.

use super::{Hist, MAX_BUCKETS, count, select};
use indexmap::IndexMap;
use serde_json::Value;

/// A data point as found: its JSON path, its value, whether exponential, its metric's unit.
type Point<'a> = (String, &'a Value, bool, Option<String>);

/// Reads the data point of `metric` (values in the metric's unit, returned with it).
pub(super) fn parse(
    text: &str,
    metric: &str,
    want: Option<&IndexMap<String, String>>,
) -> Result<Hist, String> {
    let root: Value = serde_json::from_str(text)
        .map_err(|e| format!("line {}, column {}: not JSON ({e})", e.line(), e.column()))?;
    let mut names: Vec<String> = Vec::new();
    let mut points: Vec<(Vec<(String, String)>, Point)> = Vec::new();
    for (i, rm) in array(&root, "resourceMetrics", "")?.iter().enumerate() {
        let p = format!("resourceMetrics[{i}]");
        for (j, sm) in array(rm, "scopeMetrics", &p)?.iter().enumerate() {
            let p = format!("{p}.scopeMetrics[{j}]");
            for (k, m) in array(sm, "metrics", &p)?.iter().enumerate() {
                let p = format!("{p}.metrics[{k}]");
                let name = m.get("name").and_then(Value::as_str).ok_or_else(|| {
                    format!("at `{p}.name`: expected the metric's name (a string)")
                })?;
                if name != metric {
                    if names.len() < 20 && !names.iter().any(|n| n == name) {
                        names.push(name.to_string());
                    }
                    continue;
                }
                let unit = m
                    .get("unit")
                    .and_then(Value::as_str)
                    .filter(|u| !u.is_empty());
                let (kind, exp) = if m.get("exponentialHistogram").is_some() {
                    ("exponentialHistogram", true)
                } else if m.get("histogram").is_some() {
                    ("histogram", false)
                } else {
                    return Err(format!(
                        "at `{p}`: the metric `{metric}` is neither an `exponentialHistogram` nor a `histogram`"
                    ));
                };
                let p = format!("{p}.{kind}");
                for (d, dp) in array(&m[kind], "dataPoints", &p)?.iter().enumerate() {
                    let p = format!("{p}.dataPoints[{d}]");
                    let attrs = attributes(dp, &p)?;
                    points.push((attrs, (p, dp, exp, unit.map(str::to_string))));
                }
            }
        }
    }
    if points.is_empty() {
        return Err(format!(
            "at `resourceMetrics`: no data point of a metric named `{metric}`{}",
            if names.is_empty() {
                String::new()
            } else {
                format!("; the metrics found are {}", names.join(", "))
            }
        ));
    }
    let (p, dp, exp, unit) = select(
        &points,
        want,
        (
            &format!("`{metric}` data point"),
            &format!("`{metric}` data points"),
        ),
    )?;
    let mut hist = if *exp {
        exponential(dp, p)?
    } else {
        explicit(dp, p)?
    };
    hist.unit = unit.clone();
    let total: f64 = hist.bins.iter().map(|b| b.2).sum::<f64>() + hist.overflow;
    if let Some(c) = dp.get("count") {
        let c = count_of(c, &format!("{p}.count"))?;
        if (c - total).abs() > 1e-9 * total.max(1.0) {
            return Err(format!(
                "at `{p}.count`: {c}, but the buckets hold {total} (they are the same count)"
            ));
        }
    }
    if total.is_nan() || total <= 0.0 {
        return Err(format!("at `{p}`: the data point holds no counts"));
    }
    if let Some(s) = dp.get("sum") {
        let s = s
            .as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| format!("at `{p}.sum`: expected a sum at least 0, found {s}"))?;
        hist.mean = Some(s / total);
    }
    Ok(hist)
}

/// An exponential histogram's point: bucket `offset + j` covers (base^i, base^(i+1)],
/// base = 2^(2^-scale); the zero bucket [0, zeroThreshold].
fn exponential(dp: &Value, p: &str) -> Result<Hist, String> {
    let scale = dp
        .get("scale")
        .map(|s| {
            s.as_i64()
                .filter(|s| (-10..=20).contains(s))
                .ok_or_else(|| {
                    format!("at `{p}.scale`: expected an integer from -10 to 20, found {s}")
                })
        })
        .transpose()?
        .unwrap_or(0);
    let zero = dp
        .get("zeroCount")
        .map(|z| count_of(z, &format!("{p}.zeroCount")))
        .transpose()?
        .unwrap_or(0.0);
    let threshold = match dp.get("zeroThreshold") {
        None => 0.0,
        Some(z) => z
            .as_f64()
            .filter(|z| z.is_finite() && *z >= 0.0)
            .ok_or_else(|| {
                format!("at `{p}.zeroThreshold`: expected a number at least 0, found {z}")
            })?,
    };
    if let Some(neg) = dp.get("negative") {
        let (_, counts) = buckets(neg, &format!("{p}.negative"))?;
        if counts.iter().any(|&c| c > 0.0) {
            return Err(format!(
                "at `{p}.negative`: negative values counted; a duration is above 0"
            ));
        }
    }
    let mut hist = Hist::default();
    let Some(pos) = dp.get("positive") else {
        if zero > 0.0 {
            return Err(format!(
                "at `{p}`: only the zero bucket has counts: nothing to fit"
            ));
        }
        return Ok(hist);
    };
    let pp = format!("{p}.positive");
    let (offset, counts) = buckets(pos, &pp)?;
    let width = (-(scale as f64)).exp2();
    let edge = |i: i64| -> Result<f64, String> {
        let x = (i as f64 * width).exp2();
        if x.is_finite() && x > 0.0 {
            Ok(x)
        } else {
            Err(format!(
                "at `{pp}.offset`: bucket {i} at scale {scale} lies beyond the numbers brink reads"
            ))
        }
    };
    let first = edge(offset)?;
    if zero > 0.0 {
        let hi = if threshold > 0.0 {
            threshold.min(first)
        } else {
            first
        };
        hist.bins.push((0.0, hi, zero));
    }
    for (j, &n) in counts.iter().enumerate() {
        let i = offset + j as i64;
        let (lo, hi) = (edge(i)?, edge(i + 1)?);
        let lo = match hist.bins.last() {
            Some(b) if b.1 > lo => b.1,
            _ => lo,
        };
        if hi > lo {
            hist.bins.push((lo, hi, n));
        }
    }
    Ok(hist)
}

/// An explicit-bucket point: `bucketCounts[i]` counts (explicitBounds[i-1],
/// explicitBounds[i]], the last one beyond the last bound.
fn explicit(dp: &Value, p: &str) -> Result<Hist, String> {
    let bounds = match dp.get("explicitBounds") {
        Some(Value::Array(b)) => b,
        _ => {
            return Err(format!(
                "at `{p}.explicitBounds`: expected an array of bucket bounds"
            ));
        }
    };
    let counts = counts(dp, "bucketCounts", p)?;
    if counts.len() != bounds.len() + 1 {
        return Err(format!(
            "at `{p}.bucketCounts`: {} counts for {} bounds (there is one more count than bounds)",
            counts.len(),
            bounds.len()
        ));
    }
    let mut hist = Hist::default();
    let (mut prev, mut last) = (0.0, 0.0);
    for (i, b) in bounds.iter().enumerate() {
        let at = format!("{p}.explicitBounds[{i}]");
        let b = b
            .as_f64()
            .filter(|b| b.is_finite())
            .ok_or_else(|| format!("at `{at}`: expected a number, found {b}"))?;
        if b < 0.0 || (i > 0 && b <= last) {
            return Err(format!(
                "at `{at}`: {b}: the bounds must increase, from 0 up (a duration is not negative)"
            ));
        }
        last = b;
        if b == 0.0 {
            if counts[i] > 0.0 {
                return Err(format!(
                    "at `{p}.bucketCounts[{i}]`: counts at or below 0: a duration is above 0"
                ));
            }
            continue;
        }
        hist.bins.push((prev, b, counts[i]));
        prev = b;
    }
    hist.overflow = counts[bounds.len()];
    Ok(hist)
}

/// A bucket set's offset and counts.
fn buckets(v: &Value, p: &str) -> Result<(i64, Vec<f64>), String> {
    let offset = match v.get("offset") {
        None => 0,
        Some(o) => o
            .as_i64()
            .filter(|o| o.abs() <= 1 << 40)
            .ok_or_else(|| format!("at `{p}.offset`: expected an integer, found {o}"))?,
    };
    let counts = if v.get("bucketCounts").is_some() {
        counts(v, "bucketCounts", p)?
    } else {
        Vec::new()
    };
    Ok((offset, counts))
}

/// The counts at `key`: at most [`MAX_BUCKETS`].
fn counts(v: &Value, key: &str, p: &str) -> Result<Vec<f64>, String> {
    let a = match v.get(key) {
        Some(Value::Array(a)) => a,
        _ => return Err(format!("at `{p}.{key}`: expected an array of counts")),
    };
    if a.len() > MAX_BUCKETS {
        return Err(format!(
            "at `{p}.{key}`: {} buckets; at most {MAX_BUCKETS}",
            a.len()
        ));
    }
    a.iter()
        .enumerate()
        .map(|(i, c)| count_of(c, &format!("{p}.{key}[{i}]")))
        .collect()
}

/// A count: a non-negative integer, as a string or a number.
fn count_of(v: &Value, p: &str) -> Result<f64, String> {
    let n = match v {
        Value::String(s) => s.parse::<u64>().ok().map(|n| n as f64),
        Value::Number(n) => n.as_u64().map(|n| n as f64),
        _ => None,
    };
    n.ok_or_else(|| {
        format!(
            "at `{p}`: expected a count (an integer at least 0, as a string or a number), found {v}"
        )
    })
    .and_then(|n| count(n).map_err(|e| format!("at `{p}`: {e}")))
}

/// The array at `key` of `v` (path `p`).
fn array<'a>(v: &'a Value, key: &str, p: &str) -> Result<&'a Vec<Value>, String> {
    let at = if p.is_empty() {
        key.to_string()
    } else {
        format!("{p}.{key}")
    };
    match v.get(key) {
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(format!(
            "at `{at}`: expected an array, found {}",
            kind(other)
        )),
        None => Err(format!(
            "at `{at}`: missing (an OTLP/JSON metrics file has it)"
        )),
    }
}

/// A data point's attributes as (key, value) strings.
fn attributes(dp: &Value, p: &str) -> Result<Vec<(String, String)>, String> {
    let Some(a) = dp.get("attributes") else {
        return Ok(Vec::new());
    };
    let Value::Array(a) = a else {
        return Err(format!("at `{p}.attributes`: expected an array"));
    };
    let mut out = Vec::new();
    for (i, kv) in a.iter().enumerate() {
        let at = format!("{p}.attributes[{i}]");
        let key = kv
            .get("key")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("at `{at}.key`: expected a string"))?;
        let value = match kv.get("value") {
            Some(Value::Object(o)) => match o.iter().next() {
                Some((_, Value::String(s))) => s.clone(),
                Some((_, v)) => v.to_string(),
                None => String::new(),
            },
            _ => {
                return Err(format!(
                    "at `{at}.value`: expected an object such as {{\"stringValue\": \"...\"}}"
                ));
            }
        };
        out.push((key.to_string(), value));
    }
    out.sort();
    Ok(out)
}

/// The JSON kind of `v`, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
