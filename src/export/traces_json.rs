//! `traces.json`: the spans of a run's sampled requests (`brink run --trace-sample N`) as
//! OpenTelemetry OTLP/JSON traces, which `brink import-traces` and tracing tools read.
//!
//! One `resourceSpans` entry per pool that has spans (`service.name` = the pool's name),
//! in the pools' order, each with one scope (`brink`) holding its spans in the order
//! their jobs ended. A span is one job: `name` is the pool (or `pool/endpoint`), `kind`
//! 2 (server), `traceId` 32 and `spanId` 16 hex digits counted from 1, `parentSpanId`
//! the job whose call it serves (absent on a root), times in simulated nanoseconds from
//! the unix epoch (0 is the run's start) as strings (OTLP/JSON's 64-bit integers), and
//! `status.code` 2 (error) on a failed job. Compact JSON, one line.

use crate::model::tracing::TraceLog;
use serde::Serialize;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Doc<'a> {
    resource_spans: Vec<ResourceSpans<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResourceSpans<'a> {
    resource: Resource<'a>,
    scope_spans: [ScopeSpans<'a>; 1],
}

#[derive(Serialize)]
struct Resource<'a> {
    attributes: [Attribute<'a>; 1],
}

#[derive(Serialize)]
struct Attribute<'a> {
    key: &'static str,
    value: StringValue<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StringValue<'a> {
    string_value: &'a str,
}

#[derive(Serialize)]
struct ScopeSpans<'a> {
    scope: Scope,
    spans: Vec<OtlpSpan<'a>>,
}

#[derive(Serialize)]
struct Scope {
    name: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OtlpSpan<'a> {
    trace_id: String,
    span_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_span_id: Option<String>,
    name: &'a str,
    kind: u8,
    start_time_unix_nano: String,
    end_time_unix_nano: String,
    status: Status,
}

#[derive(Serialize)]
struct Status {
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<u8>,
}

/// The bytes of `traces.json`.
pub fn traces_json(log: &TraceLog) -> Vec<u8> {
    let mut by_pool: Vec<Vec<OtlpSpan>> = log.services.iter().map(|_| Vec::new()).collect();
    for s in &log.spans {
        let p = s.pool as usize;
        by_pool[p].push(OtlpSpan {
            trace_id: format!("{:032x}", s.trace),
            span_id: format!("{:016x}", s.id),
            parent_span_id: (s.parent != 0).then(|| format!("{:016x}", s.parent)),
            name: &log.operations[p][s.endpoint as usize],
            kind: 2,
            start_time_unix_nano: s.start.to_string(),
            end_time_unix_nano: s.end.to_string(),
            status: Status {
                code: (!s.ok).then_some(2),
            },
        });
    }
    let resource_spans = log
        .services
        .iter()
        .zip(by_pool)
        .filter(|(_, spans)| !spans.is_empty())
        .map(|(name, spans)| ResourceSpans {
            resource: Resource {
                attributes: [Attribute {
                    key: "service.name",
                    value: StringValue { string_value: name },
                }],
            },
            scope_spans: [ScopeSpans {
                scope: Scope { name: "brink" },
                spans,
            }],
        })
        .collect();
    let mut out = serde_json::to_vec(&Doc { resource_spans }).expect("spans serialize to JSON");
    out.push(b'\n');
    out
}
