//! Where a loading error is: the place in the file (line and column of the key, or of its
//! nearest ancestor present) or the override or variant that made the bad value, and
//! serde's and the TOML reader's messages put in the file's words.

use super::Loader;
use crate::scenario::error::{ScenarioError, toml_types};
use crate::scenario::overrides::Override;
use crate::scenario::raw::RawTipping;
use crate::scenario::validate::{self, did_you_mean};

impl Loader {
    pub(super) fn invalid(
        &self,
        path: &str,
        msg: &str,
        origins: &[(String, String)],
    ) -> ScenarioError {
        let mut from_override = origins.iter().rev().find(|(p, _)| {
            p == path || path.starts_with(&format!("{p}.")) || p.starts_with(&format!("{path}."))
        });
        if from_override.is_none() && !origins.is_empty() && self.valid_alone() {
            // The file is fine on its own, so an override broke another key (setting a
            // backoff that then needs a base): blame the override nearest in the tree.
            from_override = origins
                .iter()
                .rev()
                .max_by_key(|(p, _)| common_prefix(p, path));
        }
        let place = match from_override {
            Some((_, origin)) => origin.clone(),
            None => self.place_in_file(path),
        };
        ScenarioError::Invalid {
            place,
            path: if path.is_empty() {
                "(top level)".into()
            } else {
                path.into()
            },
            msg: msg.into(),
        }
    }

    /// An error of the `[tipping]` checks. The measuring window (`tipping.settle`) starts
    /// where the trigger events end, so an override that moves them (a phase map's axis
    /// over `event.slowdown.for`), the run's length or the metrics step is to blame before
    /// any other: the last such override, else as [`invalid`](Self::invalid) places it.
    pub(super) fn invalid_window(
        &self,
        path: &str,
        msg: &str,
        origins: &[(String, String)],
        tipping: &Option<RawTipping>,
    ) -> ScenarioError {
        let mut moves = vec!["duration".to_string(), "metrics.step".to_string()];
        for name in tipping.iter().flat_map(|t| &t.trigger) {
            for key in ["at", "for", "every"] {
                moves.push(format!("event.{name}.{key}"));
            }
        }
        let mover = origins.iter().rev().find(|(p, _)| {
            moves
                .iter()
                .any(|m| p == m || m.starts_with(&format!("{p}.")))
        });
        match mover {
            Some((_, origin)) if path == "tipping.settle" => ScenarioError::Invalid {
                place: origin.clone(),
                path: path.into(),
                msg: msg.into(),
            },
            _ => self.invalid(path, msg, origins),
        }
    }

    /// An error about `path` placed like the loader's own: in the file, or at the last of
    /// `sets` that assigned it (for checks made after loading, e.g. by sweeps).
    pub fn problem(&self, path: &str, msg: &str, sets: &[Override]) -> ScenarioError {
        let place = sets
            .iter()
            .rev()
            .find(|o| o.path == path || path.starts_with(&format!("{}.", o.path)))
            .map(|o| o.origin.clone())
            .unwrap_or_else(|| self.place_in_file(path));
        ScenarioError::Invalid {
            place,
            path: path.into(),
            msg: msg.into(),
        }
    }

    /// True when the file, with no variant or override, is valid.
    fn valid_alone(&self) -> bool {
        self.build(&self.table, &[]).is_ok()
    }

    /// `file:line:col` of the key at `path`, or of its nearest ancestor present in the file.
    pub(super) fn place_in_file(&self, path: &str) -> String {
        place_in_text(&self.file, &self.text, path)
    }
}

/// `file:line:col` of the key at `path` in the TOML `text` of `file`, or of its nearest
/// ancestor present (the scenario's own places, and those of other TOML inputs such as a
/// calibration's observed file).
pub fn place_in_text(file: &str, text: &str, path: &str) -> String {
    place_at(file, text, locate(text, path).unwrap_or(0))
}

/// `file:line:col` of a byte offset into `text` (a TOML reader's error span).
pub fn place_at(file: &str, text: &str, offset: usize) -> String {
    let (line, col) = line_col(text, offset);
    format!("{file}:{line}:{col}")
}

/// Rewrites serde's messages into ones that name the fix: the nearest valid key for a
/// misspelling, and the unknown key itself in the path.
pub(super) fn explain(msg: &str, path: &mut Vec<String>) -> String {
    for what in ["unknown field", "unknown variant"] {
        if let Some(rest) = msg.strip_prefix(what) {
            let name = rest.split('`').nth(1).unwrap_or("");
            let expected: Vec<&str> = rest
                .split("expected")
                .nth(1)
                .unwrap_or("")
                .split('`')
                .skip(1)
                .step_by(2)
                .collect();
            let list = validate::listing(&expected);
            let hint = did_you_mean(name, expected.iter().copied());
            if what == "unknown field" {
                if path.last().map(|s| s.as_str()) != Some(name) {
                    path.push(name.to_string());
                }
                return format!("unknown key `{name}` (valid keys here: {list}){hint}");
            }
            return format!("unknown value `{name}` (valid values: {list}){hint}");
        }
    }
    if let Some(rest) = msg.strip_prefix("missing field") {
        let name = rest.split('`').nth(1).unwrap_or("");
        if !name.is_empty() && path.last().map(|s| s.as_str()) != Some(name) {
            path.push(name.to_string());
        }
        return format!("missing required key `{name}`");
    }
    // Serde names Rust types ("f64", "struct RawService"); say what the file needs instead.
    toml_types(msg)
}

/// `file:line:col` of each key of `paths` in the TOML `text` of `file`, each as
/// [`place_in_text`] gives it, with the text parsed once and its lines counted once: the
/// places of a file's `[[at]]` entries cost O(text + entries), not O(text) each.
pub(super) fn places_in_text(file: &str, text: &str, paths: &[String]) -> Vec<String> {
    let doc = toml::de::DeTable::parse(text).ok();
    let lines = Lines::of(text);
    paths
        .iter()
        .map(|path| {
            let offset = doc
                .as_ref()
                .and_then(|d| locate_in(d.get_ref(), path))
                .unwrap_or(0);
            let (line, col) = lines.line_col(text, offset);
            format!("{file}:{line}:{col}")
        })
        .collect()
}

/// Where each line of a text starts, for [`line_col`] at many offsets in O(log lines)
/// each.
struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    fn of(text: &str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self { starts }
    }

    /// What [`line_col`] says of `offset` in `text`.
    fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = offset.min(text.len());
        let line = self.starts.partition_point(|&s| s <= offset);
        let line_start = self.starts[line - 1];
        (line, text[line_start..offset].chars().count() + 1)
    }
}

/// The byte offset of the key at `path` (or its nearest present ancestor) in `text`.
fn locate(text: &str, path: &str) -> Option<usize> {
    let doc = toml::de::DeTable::parse(text).ok()?;
    locate_in(doc.get_ref(), path)
}

/// The byte offset of the key at `path` (or its nearest present ancestor) in the parsed
/// document `doc`.
fn locate_in(doc: &toml::de::DeTable, path: &str) -> Option<usize> {
    use toml::de::DeValue;
    let mut best = None;
    let mut table = Some(doc);
    let mut array: Option<&toml::de::DeArray> = None;
    for seg in path.split('.').filter(|s| !s.is_empty()) {
        // Stop at the deepest key present: a missing key is reported at its parent.
        let found = if let Some(t) = table {
            t.iter()
                .find(|(k, _)| k.get_ref().as_ref() == seg)
                .map(|(k, v)| (k.span().start, v))
        } else if let Some(a) = array {
            seg.parse::<usize>()
                .ok()
                .and_then(|i| a.get(i))
                .map(|v| (v.span().start, v))
        } else {
            None
        };
        let Some((start, value)) = found else { break };
        best = Some(start);
        table = None;
        array = None;
        match value.get_ref() {
            DeValue::Table(t) => table = Some(t),
            DeValue::Array(a) => array = Some(a),
            _ => {}
        }
    }
    best
}

/// How many leading path segments two dotted paths share.
fn common_prefix(a: &str, b: &str) -> usize {
    a.split('.')
        .zip(b.split('.'))
        .take_while(|(x, y)| x == y)
        .count()
}

pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    // Columns count characters, not bytes (a `µs` earlier on the line is one column).
    let col = before[line_start..].chars().count() + 1;
    (line, col)
}

/// The TOML reader's message, with the one that leaks a Rust type for an integer beyond 64
/// bits put in TOML's words.
pub(super) fn toml_message(msg: &str) -> String {
    let msg = msg.trim();
    match msg.strip_prefix("invalid type: integer ") {
        Some(rest) if rest.contains(" as i128") => {
            let n = rest.split(" as i128").next().unwrap_or("");
            format!(
                "integer {n} is too large: TOML integers are 64-bit (at most 9223372036854775807)"
            )
        }
        _ => msg.to_string(),
    }
}
