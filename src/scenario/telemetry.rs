//! Reading a measured latency histogram from a telemetry file (`law = "histogram"`): the
//! file itself (bounded, regular, UTF-8), its unit, and one parser per format
//! (`prometheus.rs`, `hlog.rs`, `otlp.rs`) into one [`Measured`] histogram in nanoseconds.
//!
//! Uses nothing else of `scenario`: the loader calls [`read`] for each histogram law before
//! validation, and validation fits the law ([`crate::laws::fitted`]) from what it read.

mod hlog;
mod otlp;
mod prometheus;

use super::bounded::read_bounded;
use super::provenance::sha256_hex;
use indexmap::IndexMap;
use std::path::PathBuf;

/// The largest telemetry file read (64 MiB).
pub const MAX_FILE_BYTES: u64 = 64 << 20;
/// The most buckets a histogram may have.
pub const MAX_BUCKETS: usize = 100_000;
/// The longest line of a text format (a long `.hlog` histogram line fits).
pub const MAX_LINE: usize = 1 << 20;
/// The most intervals an `.hlog` may hold.
pub const MAX_INTERVALS: usize = 100_000;
/// The formats, as the file spells them.
pub const FORMATS: [&str; 3] = ["prometheus", "hdr", "otlp"];

/// A measured histogram, in nanoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// (low, high, count) per bucket, ordered, not overlapping, low < high.
    pub bins: Vec<(f64, f64, f64)>,
    /// Counts beyond the last bucket's high edge (a `+Inf` bucket).
    pub overflow: f64,
    /// The measured mean (ns), where the format records the sum or the values.
    pub mean_ns: Option<f64>,
    /// The file, format, metric and labels, and the file's digest: for the provenance.
    pub source: String,
}

/// A histogram in the file's own unit, as a parser reads it.
#[derive(Debug, Default)]
struct Hist {
    bins: Vec<(f64, f64, f64)>,
    overflow: f64,
    mean: Option<f64>,
    /// The unit the file records (OTLP's metric `unit`), if it says.
    unit: Option<String>,
}

/// What the scenario asks for: the keys of a histogram law.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub file: &'a str,
    pub format: &'a str,
    pub metric: Option<&'a str>,
    pub labels: Option<&'a IndexMap<String, String>>,
    pub unit: Option<&'a str>,
}

/// Nanoseconds per unit, for `ns`, `us`, `ms` and `s` (UCUM's spellings too).
pub fn unit_ns(unit: &str) -> Option<f64> {
    match unit {
        "ns" => Some(1.0),
        "us" | "µs" => Some(1e3),
        "ms" => Some(1e6),
        "s" => Some(1e9),
        _ => None,
    }
}

/// Where a scenario's telemetry files are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Folder {
    /// A folder on disk: the scenario file's (or the current folder, the empty path).
    Path(PathBuf),
    /// The files embedded with the bundled scenarios (`scenarios/data/`).
    Bundled,
}

impl Default for Folder {
    fn default() -> Self {
        Folder::Path(PathBuf::new())
    }
}

/// Reads and parses the histogram `req` names, the file relative to `base`. An error is
/// (the key it concerns, the message naming the file and the place in it).
pub fn read(req: &Request, base: &Folder) -> Result<Measured, (&'static str, String)> {
    if !FORMATS.contains(&req.format) {
        return Err((
            "format",
            format!(
                "unknown format `{}`; the formats are `prometheus`, `hdr` (an HdrHistogram \
                 interval log) and `otlp` (OTLP/JSON metrics)",
                req.format
            ),
        ));
    }
    let unit = match req.unit {
        Some(u) => Some(unit_ns(u).ok_or_else(|| {
            (
                "unit",
                format!("unknown unit `{u}`; the units are `ns`, `us`, `ms` and `s`"),
            )
        })?),
        None => None,
    };
    if req.format == "hdr" && unit.is_none() {
        return Err((
            "unit",
            "missing required key `unit`: an HdrHistogram log does not record what its values \
             are; say `ns`, `us`, `ms` or `s`"
                .into(),
        ));
    }
    if req.format != "hdr" && req.metric.is_none() {
        return Err((
            "metric",
            format!(
                "missing required key `metric`: the {} file's metric to read",
                req.format
            ),
        ));
    }
    if req.file.is_empty() {
        return Err(("file", "the file's path is empty".into()));
    }
    let (shown, bytes) = match base {
        Folder::Path(dir) => {
            let path = dir.join(req.file);
            let shown = path.display().to_string();
            let bytes = read_bounded(&path, MAX_FILE_BYTES)
                .map_err(|e| ("file", format!("{shown}: {e}")))?;
            (shown, bytes)
        }
        Folder::Bundled => {
            let shown = format!("{} (bundled)", req.file);
            let bytes = super::bundled::data(req.file)
                .ok_or_else(|| ("file", format!("{shown}: no such bundled data file")))?;
            (shown, bytes.to_vec())
        }
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        let line = e.as_bytes()[..e.utf8_error().valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        ("file", format!("{shown}, line {line}: not UTF-8"))
    })?;
    let parsed = match req.format {
        "prometheus" => prometheus::parse(&text, req.metric.unwrap_or(""), req.labels),
        "hdr" => hlog::parse(&text, req.metric),
        _ => otlp::parse(&text, req.metric.unwrap_or(""), req.labels),
    }
    .map_err(|e| ("file", format!("{shown}, {e}")))?;
    let scale = match (unit, &parsed.unit) {
        (Some(u), _) => u,
        (None, Some(u)) => unit_ns(u).ok_or_else(|| {
            (
                "unit",
                format!(
                    "{shown}: the metric's unit is `{u}`, which is not a duration brink knows \
                     (`ns`, `us`, `ms`, `s`); say what the values are with `unit`"
                ),
            )
        })?,
        (None, None) if req.format == "otlp" => {
            return Err((
                "unit",
                format!(
                    "{shown}: the metric gives no unit; say what the values are with `unit` \
                     (`ns`, `us`, `ms` or `s`)"
                ),
            ));
        }
        // Prometheus's convention: base units, seconds.
        (None, None) => 1e9,
    };
    let mut source = format!("{} ({}", req.file, req.format);
    if let Some(m) = req.metric {
        source.push_str(&format!(" {m}"));
    }
    if let Some(l) = req.labels.filter(|l| !l.is_empty()) {
        source.push_str(&format!(" {}", label_set(l.iter())));
    }
    source.push_str(&format!(", sha256 {})", &sha256_hex(text.as_bytes())[..16]));
    Ok(Measured {
        bins: parsed
            .bins
            .iter()
            .map(|&(a, b, n)| (a * scale, b * scale, n))
            .collect(),
        overflow: parsed.overflow,
        mean_ns: parsed.mean.map(|m| m * scale),
        source,
    })
}

/// `{a="1", b="2"}`, for messages.
fn label_set<'a>(labels: impl Iterator<Item = (&'a String, &'a String)>) -> String {
    let inner: Vec<String> = labels.map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{{{}}}", inner.join(", "))
}

/// The one series whose labels include all of `want`, among `found` (label sets, each with
/// its item); an error lists the sets found when none or several match. `what` names one
/// series and several (`data point`, `data points`).
fn select<'a, T>(
    found: &'a [(Vec<(String, String)>, T)],
    want: Option<&IndexMap<String, String>>,
    what: (&str, &str),
) -> Result<&'a T, String> {
    let matches: Vec<&(Vec<(String, String)>, T)> = found
        .iter()
        .filter(|(set, _)| {
            want.is_none_or(|w| {
                w.iter()
                    .all(|(k, v)| set.iter().any(|(a, b)| a == k && b == v))
            })
        })
        .collect();
    let sets = || {
        let all: Vec<String> = found
            .iter()
            .take(20)
            .map(|(s, _)| label_set(s.iter().map(|(a, b)| (a, b))))
            .collect();
        let more = if found.len() > 20 {
            format!(" and {} more", found.len() - 20)
        } else {
            String::new()
        };
        format!("{}{more}", all.join(", "))
    };
    match matches.len() {
        1 => Ok(&matches[0].1),
        0 => Err(format!(
            "no {} has the labels {}; the label sets found are {}",
            what.0,
            label_set(want.into_iter().flatten()),
            sets()
        )),
        n => Err(format!(
            "{n} {} match{}; pick one with `labels = {{ ... }}`: the label sets found are {}",
            what.1,
            want.map(|w| format!(" the labels {}", label_set(w.iter())))
                .unwrap_or_default(),
            sets()
        )),
    }
}

/// A count read from a file: finite and not negative.
fn count(x: f64) -> Result<f64, String> {
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err(format!(
            "a count must be a finite number at least 0, not {x}"
        ))
    }
}

#[cfg(test)]
mod tests;
