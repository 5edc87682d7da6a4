//! OTLP/JSON traces (an OpenTelemetry collector's file exporter, `brink run
//! --trace-sample`): `{"resourceSpans": [{"resource": {"attributes": [...]}, "scopeSpans":
//! [{"spans": [...]}]}]}`. Times are nanoseconds, which OTLP/JSON writes as strings (its
//! 64-bit integers); numbers are accepted too. A resource without `service.name` is
//! `unknown_service`, as OpenTelemetry names it. Fields brink does not read are allowed.

use super::{Span, TraceError, count_span};
use serde::Deserialize;
use serde::de::{self, Deserializer};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct File {
    resource_spans: Vec<ResourceSpans>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceSpans {
    #[serde(default)]
    resource: Option<Resource>,
    #[serde(default)]
    scope_spans: Vec<ScopeSpans>,
}

#[derive(Deserialize)]
struct Resource {
    #[serde(default)]
    attributes: Vec<KeyValue>,
}

#[derive(Deserialize)]
struct KeyValue {
    key: String,
    value: AnyValue,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AnyValue {
    string_value: Option<String>,
}

#[derive(Deserialize)]
struct ScopeSpans {
    #[serde(default)]
    spans: Vec<OSpan>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OSpan {
    trace_id: String,
    span_id: String,
    #[serde(default)]
    parent_span_id: Option<String>,
    name: String,
    start_time_unix_nano: Nanos,
    end_time_unix_nano: Nanos,
}

/// Nanoseconds: a string of digits (OTLP/JSON) or a whole number.
struct Nanos(u64);

impl<'de> Deserialize<'de> for Nanos {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Nanos;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("nanoseconds since the epoch: a string of digits or a whole number")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Nanos, E> {
                Ok(Nanos(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Nanos, E> {
                if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(E::invalid_value(de::Unexpected::Str(v), &self));
                }
                v.parse()
                    .map(Nanos)
                    .map_err(|_| E::custom(format!("`{v}` is beyond 2^64 ns")))
            }
        }
        d.deserialize_any(V)
    }
}

/// The spans of an OTLP/JSON file, checked: ids present, an end no earlier than the start.
pub(super) fn spans(file: &str, f: File) -> Result<Vec<Span>, TraceError> {
    let mut out = Vec::new();
    let mut n = 0;
    for (r, rs) in f.resource_spans.into_iter().enumerate() {
        let service = rs
            .resource
            .iter()
            .flat_map(|res| &res.attributes)
            .find(|kv| kv.key == "service.name")
            .and_then(|kv| kv.value.string_value.clone())
            .unwrap_or_else(|| "unknown_service".to_string());
        for (s, ss) in rs.scope_spans.into_iter().enumerate() {
            for (i, os) in ss.spans.into_iter().enumerate() {
                let at = format!("resourceSpans[{r}].scopeSpans[{s}].spans[{i}]");
                count_span(file, &mut n, &at)?;
                for (key, id) in [("traceId", &os.trace_id), ("spanId", &os.span_id)] {
                    if id.is_empty() {
                        return Err(TraceError::invalid(file, format!("{at}.{key}"), "empty"));
                    }
                }
                let (start_ns, end_ns) = (os.start_time_unix_nano.0, os.end_time_unix_nano.0);
                if end_ns < start_ns {
                    return Err(TraceError::invalid(
                        file,
                        format!("{at}.endTimeUnixNano"),
                        format!("{end_ns} is before the span's start, {start_ns}"),
                    ));
                }
                out.push(Span {
                    trace: os.trace_id,
                    id: os.span_id,
                    parent: os.parent_span_id.filter(|p| !p.is_empty()),
                    service: service.clone(),
                    operation: os.name,
                    start_ns,
                    end_ns,
                    at,
                });
            }
        }
    }
    Ok(out)
}
