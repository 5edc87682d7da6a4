//! Reading traces (`brink import-traces`): Jaeger's JSON export and OTLP/JSON traces, read
//! strictly into one span shape ([`Span`]), measured ([`measure`]) and written as a
//! scenario skeleton ([`skeleton`]).
//!
//! Two stages, as for scenarios: a serde shape of each format (`jaeger.rs`, `otlp.rs`,
//! read with `serde_path_to_error` so that a type error names its JSON path), then checks
//! of what the shapes cannot say (times that run backwards, a span id twice in a trace,
//! an unknown process). Sizes are bounded where they are read: the file ([`MAX_BYTES`]),
//! the spans ([`MAX_SPANS`]), JSON nesting (serde_json's recursion limit) and parent
//! chains ([`MAX_DEPTH`], which also stops a cycle of parent links).

mod jaeger;
pub mod measure;
mod otlp;
pub mod skeleton;

use std::path::Path;

/// The largest trace file read.
pub const MAX_BYTES: u64 = 256 << 20;
/// The most spans in one file.
pub const MAX_SPANS: usize = 5_000_000;
/// The longest chain of parent links (a deeper one, or a cycle, is refused).
pub const MAX_DEPTH: usize = 64;

/// One span, whichever format it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Its trace and its own id (as written: hex for OTLP, Jaeger's strings).
    pub trace: String,
    pub id: String,
    /// Its parent's id in the same trace (`None`: a root).
    pub parent: Option<String>,
    /// The service (OTLP `service.name`, Jaeger's process `serviceName`).
    pub service: String,
    /// The operation (OTLP `name`, Jaeger `operationName`).
    pub operation: String,
    /// Start and end, nanoseconds since the epoch.
    pub start_ns: u64,
    pub end_ns: u64,
    /// Where the span is in the file (a JSON path), for messages.
    pub at: String,
}

/// Why a trace file cannot be read: the file, the JSON path (where there is one) and what
/// is wrong.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be read.
    #[error("{file}: cannot read the trace file")]
    Read {
        file: String,
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_BYTES`].
    #[error("{file}: {bytes} bytes; a trace file may hold at most {MAX_BYTES} bytes (256 MiB)")]
    TooLarge { file: String, bytes: u64 },
    /// A FIFO, a device, a socket or a folder rather than a file.
    #[error("{file}: not a regular file (a FIFO, a device or a folder); give a trace file")]
    NotAFile { file: String },
    /// Not JSON of either format, or a value of the wrong type.
    #[error("{file}: {path}: {msg}")]
    Invalid {
        file: String,
        /// The JSON path (`.` for the whole document).
        path: String,
        msg: String,
    },
}

impl TraceError {
    fn invalid(file: &str, path: impl Into<String>, msg: impl Into<String>) -> Self {
        TraceError::Invalid {
            file: file.to_string(),
            path: path.into(),
            msg: msg.into(),
        }
    }
}

/// The two formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Jaeger's JSON export (`{"data": [trace, ...]}`).
    Jaeger,
    /// OTLP/JSON traces (`{"resourceSpans": [...]}`).
    Otlp,
}

/// The top-level keys that tell the formats apart, read without keeping anything.
#[derive(serde::Deserialize)]
struct Sniff {
    data: Option<serde::de::IgnoredAny>,
    #[serde(rename = "resourceSpans")]
    resource_spans: Option<serde::de::IgnoredAny>,
}

/// Reads the spans of `path` (either format, told apart by its top-level key), checked.
pub fn read_file(path: &Path) -> Result<(Format, Vec<Span>), TraceError> {
    use crate::scenario::bounded::{Unreadable, read_bounded};
    let file = path.display().to_string();
    // Bounded and regular files only: a FIFO would block and `/dev/zero` never ends.
    let bytes = read_bounded(path, MAX_BYTES).map_err(|e| match e {
        Unreadable::Io(source) => TraceError::Read {
            file: file.clone(),
            source,
        },
        Unreadable::TooLarge { .. } => TraceError::TooLarge {
            file: file.clone(),
            bytes: std::fs::metadata(path).map_or(MAX_BYTES + 1, |m| m.len().max(MAX_BYTES + 1)),
        },
        Unreadable::NotAFile => TraceError::NotAFile { file: file.clone() },
    })?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        TraceError::invalid(
            &file,
            ".",
            format!("not UTF-8 text (byte {})", e.valid_up_to()),
        )
    })?;
    read_text(&file, text)
}

/// Reads the spans of `text` (named `file` in messages).
pub fn read_text(file: &str, text: &str) -> Result<(Format, Vec<Span>), TraceError> {
    let sniff: Sniff = parse(file, text)?;
    match (sniff.data.is_some(), sniff.resource_spans.is_some()) {
        (true, false) => Ok((Format::Jaeger, jaeger::spans(file, parse(file, text)?)?)),
        (false, true) => Ok((Format::Otlp, otlp::spans(file, parse(file, text)?)?)),
        (true, true) => Err(TraceError::invalid(
            file,
            ".",
            "both `data` (Jaeger) and `resourceSpans` (OTLP): one format per file",
        )),
        (false, false) => Err(TraceError::invalid(
            file,
            ".",
            "neither Jaeger's JSON export (`{\"data\": [...]}`) nor OTLP/JSON traces (`{\"resourceSpans\": [...]}`)",
        )),
    }
}

/// Deserializes `text` as `T`, an error naming its JSON path.
fn parse<'de, T: serde::Deserialize<'de>>(file: &str, text: &'de str) -> Result<T, TraceError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let msg = match inner.classify() {
            serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                format!("JSON syntax error: {inner}")
            }
            _ => inner.to_string(),
        };
        TraceError::invalid(file, path, msg)
    })?;
    de.end()
        .map_err(|e| TraceError::invalid(file, ".", format!("after the document: {e}")))?;
    Ok(value)
}

/// Counts spans as they are read: beyond [`MAX_SPANS`], an error at `at`.
pub(crate) fn count_span(file: &str, n: &mut usize, at: &str) -> Result<(), TraceError> {
    *n += 1;
    if *n > MAX_SPANS {
        return Err(TraceError::invalid(
            file,
            at,
            format!("more than {MAX_SPANS} spans in one file"),
        ));
    }
    Ok(())
}

/// A span's end from its start and `duration` (ns), refusing an overflow.
pub(crate) fn checked_end(
    file: &str,
    at: &str,
    start: u64,
    duration: u64,
) -> Result<u64, TraceError> {
    start
        .checked_add(duration)
        .ok_or_else(|| TraceError::invalid(file, at, "the span ends beyond 2^64 ns"))
}
