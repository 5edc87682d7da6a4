//! Jaeger's JSON export (the UI's "download JSON", the query API's `/api/traces`):
//! `{"data": [{"traceID", "spans": [...], "processes": {"p1": {"serviceName"}}}]}`, times
//! in microseconds. Fields brink does not read (tags, logs, warnings) are allowed.

use super::{Span, TraceError, checked_end, count_span};
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Deserialize)]
pub(super) struct File {
    data: Vec<Trace>,
}

#[derive(Deserialize)]
struct Trace {
    #[serde(rename = "traceID")]
    trace_id: String,
    spans: Vec<JSpan>,
    processes: HashMap<String, Process>,
}

#[derive(Deserialize)]
struct JSpan {
    #[serde(rename = "traceID")]
    trace_id: String,
    #[serde(rename = "spanID")]
    span_id: String,
    #[serde(rename = "operationName")]
    operation_name: String,
    #[serde(default)]
    references: Vec<Reference>,
    /// Microseconds since the epoch.
    #[serde(rename = "startTime")]
    start_time: u64,
    /// Microseconds.
    duration: u64,
    #[serde(rename = "processID")]
    process_id: String,
}

#[derive(Deserialize)]
struct Reference {
    #[serde(rename = "refType")]
    ref_type: String,
    #[serde(rename = "traceID")]
    trace_id: String,
    #[serde(rename = "spanID")]
    span_id: String,
}

#[derive(Deserialize)]
struct Process {
    #[serde(rename = "serviceName")]
    service_name: String,
}

/// The spans of a Jaeger export, checked: a known process, a parent reference of a known
/// kind in the same trace, times in range.
pub(super) fn spans(file: &str, f: File) -> Result<Vec<Span>, TraceError> {
    let mut out = Vec::new();
    let mut n = 0;
    for (t, trace) in f.data.into_iter().enumerate() {
        for (s, js) in trace.spans.into_iter().enumerate() {
            let at = format!("data[{t}].spans[{s}]");
            count_span(file, &mut n, &at)?;
            if js.trace_id != trace.trace_id {
                return Err(TraceError::invalid(
                    file,
                    format!("{at}.traceID"),
                    format!("`{}` is not its trace's `{}`", js.trace_id, trace.trace_id),
                ));
            }
            let Some(process) = trace.processes.get(&js.process_id) else {
                return Err(TraceError::invalid(
                    file,
                    format!("{at}.processID"),
                    format!(
                        "`{}` is not among the trace's processes (data[{t}].processes)",
                        js.process_id
                    ),
                ));
            };
            for (r, rf) in js.references.iter().enumerate() {
                let here = format!("{at}.references[{r}]");
                match rf.ref_type.as_str() {
                    "CHILD_OF" | "FOLLOWS_FROM" => {}
                    other => {
                        return Err(TraceError::invalid(
                            file,
                            format!("{here}.refType"),
                            format!("`{other}`: expected `CHILD_OF` or `FOLLOWS_FROM`"),
                        ));
                    }
                }
            }
            // The first CHILD_OF in the trace is the parent; a FOLLOWS_FROM only without one.
            let in_trace = |kind: &str| {
                js.references
                    .iter()
                    .find(|r| r.ref_type == kind && r.trace_id == trace.trace_id)
                    .map(|r| r.span_id.clone())
            };
            let parent = in_trace("CHILD_OF").or_else(|| in_trace("FOLLOWS_FROM"));
            let start_ns = js.start_time.checked_mul(1000).ok_or_else(|| {
                TraceError::invalid(file, format!("{at}.startTime"), "beyond 2^64 ns")
            })?;
            let duration_ns = js.duration.checked_mul(1000).ok_or_else(|| {
                TraceError::invalid(file, format!("{at}.duration"), "beyond 2^64 ns")
            })?;
            out.push(Span {
                trace: trace.trace_id.clone(),
                id: js.span_id,
                parent,
                service: process.service_name.clone(),
                operation: js.operation_name,
                end_ns: checked_end(file, &format!("{at}.duration"), start_ns, duration_ns)?,
                start_ns,
                at,
            });
        }
    }
    Ok(out)
}
