//! `brink import-traces TRACES.json --out NAME.toml`: reads a trace file (Jaeger JSON or
//! OTLP/JSON), measures it and writes a scenario skeleton ([`crate::traces`]), atomically;
//! an existing file is replaced only with `force`. A file that cannot be read writes
//! nothing.

use super::Error;
use crate::traces::measure::{Measured, measure};
use crate::traces::skeleton::{Source, skeleton};
use std::path::Path;

/// What was imported.
#[derive(Debug, Clone)]
pub struct Imported {
    pub measured: Measured,
    pub format: crate::traces::Format,
}

/// Reads `traces` (1 in `one_in` requests), writes the skeleton to `out` and returns what
/// it measured.
pub fn import_traces(
    traces: &Path,
    out: &Path,
    one_in: u64,
    force: bool,
) -> Result<Imported, Error> {
    let (format, spans) = crate::traces::read_file(traces)?;
    let file = traces.display().to_string();
    let measured = measure(&file, &spans)?;
    drop(spans);
    let text = skeleton(
        &measured,
        &Source {
            file: &file,
            format,
            one_in,
        },
    );
    let written = if force {
        crate::report::write_atomic(out, text.as_bytes())
    } else {
        crate::report::write_new_atomic(out, text.as_bytes())
    };
    written.map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => Error::ImportExists {
            path: out.display().to_string(),
        },
        _ => Error::io(out, e),
    })?;
    Ok(Imported { measured, format })
}
