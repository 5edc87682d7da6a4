//! The controls a live page offers for a scenario: the load of each open-loop class, the
//! usual knobs (retry attempts, rate limit, workers, discipline), every parameter the
//! file's variants and `[[at]]` entries change, its events (to fire now) and its variants
//! (to apply now). A control names a key path; the server refuses any other.

use crate::engine::time::parse_duration;
use crate::scenario::{Loader, Scenario, overrides};
use serde::Serialize;
use toml::Value;

/// What values a control takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KnobKind {
    /// A number (float or whole, as the file writes it).
    Number,
    /// A whole number.
    Integer,
    /// `true` or `false`.
    Bool,
    /// One of `options`: a key whose value is one of a fixed set of words (`backoff`,
    /// `jitter`, `discipline`, `balance`, ...), the set read from the scenario schema
    /// ([`crate::scenario::raw::choices`]).
    Choice,
    /// A duration such as `250ms` or `2m`.
    Duration,
    /// Any other word the file takes there (`options` are the ones seen in the file);
    /// the loader checks it.
    Text,
}

/// The longest text a control takes.
pub const MAX_TEXT: usize = 200;

/// One parameter the page can change now: an `[[at]]` entry setting `path`.
#[derive(Debug, Clone, Serialize)]
pub struct Knob {
    /// The key path, as in `--set`.
    pub path: String,
    /// What the page calls it.
    pub label: String,
    pub kind: KnobKind,
    /// The value in the file (none when the file leaves it to its default); the value in
    /// force now is `/api/state`'s `knobs`.
    pub value: Option<serde_json::Value>,
    /// A slider's range (numbers only).
    pub min: f64,
    pub max: f64,
    /// The values of a choice.
    pub options: Vec<String>,
    /// True for the load of a class: the page draws it as the load slider.
    pub load: bool,
}

/// A scenario event the page can fire now.
#[derive(Debug, Clone, Serialize)]
pub struct EventButton {
    pub name: String,
    pub label: String,
    /// How long an occurrence lasts, seconds.
    pub for_s: f64,
}

/// A variant the page can apply now: its assignments, as one `[[at]]` entry.
#[derive(Debug, Clone, Serialize)]
pub struct VariantButton {
    pub name: String,
    pub description: String,
    /// (path, value) in file order.
    #[serde(skip)]
    pub set: Vec<(String, Value)>,
    /// The same, as the page reads them.
    pub values: serde_json::Map<String, serde_json::Value>,
    /// False when it replaces the `[[at]]` list: it can only start a run (a reset with
    /// it), not be applied in the middle of one.
    pub live: bool,
}

/// Everything the page can do to a scenario.
#[derive(Debug, Clone, Serialize)]
pub struct Controls {
    pub knobs: Vec<Knob>,
    pub events: Vec<EventButton>,
    pub variants: Vec<VariantButton>,
}

impl Controls {
    /// The controls of `sc`, read from `loader`'s file.
    pub fn of(loader: &Loader, sc: &Scenario) -> Self {
        let mut knobs: Vec<Knob> = Vec::new();
        let mut add = |path: String, label: String, seen: &[&Value], load: bool| {
            if let Some(k) = knobs.iter_mut().find(|k| k.path == path) {
                for v in seen {
                    if let Value::String(s) = v
                        && !k.options.contains(s)
                    {
                        k.options.push(s.clone());
                    }
                }
                return;
            }
            let file = loader.raw_value(&path);
            // Only what an intervention may change is a knob (a cache tier, say, is not:
            // its variants run with "start over").
            let sample = file.or(seen.first().copied());
            if sample.is_some_and(|v| loader.settable_during_run(&path, v).is_err()) {
                return;
            }
            if let Some(k) = knob(path, label, file, seen, load) {
                knobs.push(k);
            }
        };
        let cfg = &sc.config;
        let sweep_to = sc
            .tipping
            .as_ref()
            .map(|t| (t.axis.path.clone(), t.axis.range.1));
        for c in cfg.client_classes() {
            let path = format!("class.{}.rate", c.name);
            if loader.raw_value(&path).is_some() {
                let mut k = vec![];
                let top = sweep_to
                    .as_ref()
                    .filter(|(p, _)| *p == path)
                    .map(|(_, to)| Value::Float(*to));
                k.extend(top.as_ref());
                add(path, format!("{}: load (requests/s)", c.name), &k, true);
            }
            add(
                format!("class.{}.retry.max_attempts", c.name),
                format!("{}: retry attempts", c.name),
                &[],
                false,
            );
            add(
                format!("class.{}.rate_limit.rate", c.name),
                format!("{}: rate limit (requests/s)", c.name),
                &[],
                false,
            );
        }
        for p in &cfg.pools {
            add(
                format!("pool.{}.workers", p.name),
                format!("{}: workers", p.name),
                &[],
                false,
            );
            // The file may leave the discipline to its default, the schema's first word.
            let path = format!("pool.{}.discipline", p.name);
            let first = crate::scenario::raw::choices(&path)
                .and_then(|c| c.first())
                .map(|w| Value::String(w.to_string()));
            add(
                path,
                format!("{}: discipline", p.name),
                &first.iter().collect::<Vec<_>>(),
                false,
            );
        }
        let variants = loader
            .variant_names()
            .into_iter()
            .map(|name| {
                let v = super::text::Variant::of(loader, &name);
                let live = v.as_ref().is_some_and(|v| !v.replaces_timeline());
                let set = v.map(|v| v.set).unwrap_or_default();
                let description = sc
                    .variants
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, d)| d.clone())
                    .unwrap_or_default();
                let values = set
                    .iter()
                    .filter_map(|(p, v)| Some((p.clone(), serde_json::to_value(v).ok()?)))
                    .collect();
                VariantButton {
                    name,
                    description,
                    set,
                    values,
                    live,
                }
            })
            .collect::<Vec<_>>();
        let mut from_file: Vec<(String, Value)> = Vec::new();
        for v in &variants {
            from_file.extend(v.set.iter().cloned());
        }
        if let Some(Value::Array(entries)) = loader.raw_value("at") {
            for e in entries {
                if let Some(Value::Table(t)) = e.get("set") {
                    overrides::flatten(t, "", &mut from_file);
                }
            }
        }
        for (path, value) in &from_file {
            if path == "at" || path.starts_with("at.") || path.ends_with(".enabled") {
                continue;
            }
            add(path.clone(), label_of(loader, path), &[value], false);
        }
        let events = cfg
            .triggers
            .iter()
            .map(|t| EventButton {
                name: t.name.clone(),
                label: t.label.clone(),
                for_s: crate::engine::time::ns_to_secs(t.for_ns),
            })
            .collect();
        Self {
            knobs,
            events,
            variants,
        }
    }

    /// The control setting `path`, if the page has one.
    pub fn knob(&self, path: &str) -> Option<&Knob> {
        self.knobs.iter().find(|k| k.path == path)
    }
}

/// What the page calls the parameter at `path`: `class.request.retry.budget.rate` is
/// "request: retry budget rate"; a key of a call or a step is named by what it queries,
/// `pool.api.calls.0.max_in_flight` "api → db: max in flight" (and by the call's own
/// name when it has one: "api → db (reads): timeout"). The path itself is the control's
/// tooltip.
fn label_of(loader: &Loader, path: &str) -> String {
    let words = |s: &str| s.replace(['.', '_'], " ");
    let Some((kind, rest)) = path.split_once('.') else {
        return words(path);
    };
    let Some((owner, rest)) = rest.split_once('.') else {
        return words(path);
    };
    if let [list @ ("calls" | "steps"), i, key] = rest.splitn(3, '.').collect::<Vec<_>>()[..]
        && i.parse::<usize>().is_ok()
    {
        let at = format!("{kind}.{owner}.{list}.{i}");
        let text = |k: &str| {
            loader
                .raw_value(&format!("{at}.{k}"))
                .and_then(Value::as_str)
        };
        if let Some(query) = text("query") {
            let pool = query.split('/').next().unwrap_or(query);
            let target = match text("name") {
                Some(name) if name != pool => format!("{query} ({name})"),
                _ => query.to_string(),
            };
            return format!("{owner} → {target}: {}", words(key));
        }
    }
    format!("{owner}: {}", words(rest))
}

/// A knob for `path` from its value in the file and values seen in variants or
/// interventions; none for a value that is not a number, a boolean or a string.
fn knob(
    path: String,
    label: String,
    file: Option<&Value>,
    seen: &[&Value],
    load: bool,
) -> Option<Knob> {
    let sample = file.or(seen.first().copied());
    let integer_path = path.ends_with(".workers") || path.ends_with(".max_attempts");
    let choices = crate::scenario::raw::choices(&path);
    let kind = match sample {
        Some(Value::String(s)) if choices.is_some_and(|c| c.contains(&s.as_str())) => {
            KnobKind::Choice
        }
        Some(Value::Integer(_)) | None if integer_path => KnobKind::Integer,
        Some(Value::Integer(_) | Value::Float(_)) | None => KnobKind::Number,
        Some(Value::Boolean(_)) => KnobKind::Bool,
        Some(Value::String(s)) if parse_duration(s).is_ok() => KnobKind::Duration,
        Some(Value::String(_)) => KnobKind::Text,
        Some(_) => return None,
    };
    let num = |v: &Value| v.as_float().or(v.as_integer().map(|i| i as f64));
    let mut top = file.and_then(num).unwrap_or(0.0);
    for v in seen {
        top = top.max(num(v).unwrap_or(0.0));
    }
    let max = match kind {
        KnobKind::Integer => (top * 4.0).max(10.0).round(),
        _ if load => (top * 1.0)
            .max(file.and_then(num).unwrap_or(0.0) * 2.0)
            .max(1.0),
        _ => (top * 4.0).max(100.0),
    };
    let mut options: Vec<String> = match (kind, choices) {
        (KnobKind::Choice, Some(c)) => c.iter().map(|w| w.to_string()).collect(),
        _ => Vec::new(),
    };
    for v in file.into_iter().chain(seen.iter().copied()) {
        if let Value::String(s) = v
            && !options.contains(s)
        {
            options.push(s.clone());
        }
    }
    Some(Knob {
        path,
        label,
        kind,
        value: file.and_then(|v| serde_json::to_value(v).ok()),
        min: if kind == KnobKind::Integer { 1.0 } else { 0.0 },
        max,
        options,
        load,
    })
}

/// The TOML value of a control from the page's JSON value, or why it does not fit.
pub fn toml_value(k: &Knob, v: &serde_json::Value) -> Result<Value, String> {
    let bad = |what: &str| Err(format!("`{}` takes {what}; got {v}", k.path));
    match k.kind {
        KnobKind::Integer => match v.as_i64() {
            Some(i) => Ok(Value::Integer(i)),
            None => bad("a whole number"),
        },
        KnobKind::Number => match v.as_f64() {
            Some(x) if x.is_finite() => Ok(match v.as_i64() {
                Some(i) => Value::Integer(i),
                None => Value::Float(x),
            }),
            _ => bad("a number"),
        },
        KnobKind::Bool => match v.as_bool() {
            Some(b) => Ok(Value::Boolean(b)),
            None => bad("true or false"),
        },
        KnobKind::Choice => match v.as_str() {
            Some(s) if k.options.iter().any(|o| o == s) => Ok(Value::String(s.into())),
            _ => bad(&format!("one of {}", k.options.join(", "))),
        },
        KnobKind::Duration => match v.as_str().map(|s| (s, parse_duration(s))) {
            Some((s, Ok(_))) => Ok(Value::String(s.into())),
            Some((_, Err(e))) => bad(&format!("a duration such as \"250ms\" or \"2m\" ({e})")),
            None => bad("a duration such as \"250ms\" or \"2m\""),
        },
        KnobKind::Text => match v.as_str() {
            Some(s) if !s.is_empty() && s.len() <= MAX_TEXT => Ok(Value::String(s.into())),
            _ => bad(&format!("a word of 1 to {MAX_TEXT} bytes")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_as_words() {
        let b = crate::scenario::bundled::find("thread-pool-exhaustion").unwrap();
        let text = format!(
            "{}\n[[pool.api.calls]]\nquery = \"catalog\"\nname = \"reads\"\n",
            b.text
        );
        let loader = Loader::from_text("s.toml", "s", text).unwrap();
        let label = |p| label_of(&loader, p);
        assert_eq!(
            label("class.browse.retry.budget.rate"),
            "browse: retry budget rate"
        );
        assert_eq!(label("pool.api.cancel_expired"), "api: cancel expired");
        assert_eq!(label("duration"), "duration");
        assert_eq!(
            label("pool.api.calls.1.max_in_flight"),
            "api → payments: max in flight"
        );
        assert_eq!(
            label("pool.api.calls.2.retry.max_attempts"),
            "api → catalog (reads): retry max attempts"
        );
        assert_eq!(
            label("class.browse.steps.0.timeout"),
            "browse → api/browse: timeout"
        );
        // A call the file does not have: the path in words.
        assert_eq!(label("pool.api.calls.9.timeout"), "api: calls 9 timeout");
    }

    /// Every enum knob of the bundled scenarios is a choice of the schema's words, with the
    /// file's value among them.
    #[test]
    fn enum_knobs_are_choices_of_the_schemas_words() {
        let mut seen = 0;
        for b in crate::scenario::bundled::all() {
            let loader = Loader::bundled(b).unwrap();
            let sc = loader.load(None, &[]).unwrap();
            for k in Controls::of(&loader, &sc).knobs {
                if let Some(c) = crate::scenario::raw::choices(&k.path) {
                    assert_eq!(k.kind, KnobKind::Choice, "{}: {}", b.name, k.path);
                    assert_eq!(k.options, c, "{}: {}", b.name, k.path);
                    seen += 1;
                }
                assert!(!k.label.contains("calls 0"), "{}: {}", b.name, k.label);
            }
        }
        assert!(seen >= 5, "enum knobs checked: {seen}");
    }
}
